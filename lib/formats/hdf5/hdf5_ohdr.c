/* hdf5_ohdr.c - data object headers, versions 1 and 2, with their
 * continuation blocks; shared messages. Spec: "Level 2A - Data Object
 * Headers", "Object Header Continuation Message", "Shared Message". */
#include "formats/hdf5/hdf5_int.h"

#include <stdlib.h>

enum { MAX_BLOCKS = 4096, MAX_MSGS = 1u << 20 };

static int push_msg(h5_file *f, h5_ohdr *oh, h5_msg m)
{
    if (oh->n >= MAX_MSGS)
        return h5_fail_at(f, m.pos, "object header at address %llu has more than %u messages",
                          (unsigned long long)oh->addr, MAX_MSGS);
    if (oh->n == oh->cap && mf_vec_grow((void **)&oh->msgs, &oh->cap, oh->n + 1, sizeof(h5_msg)))
        return mf_oom(f->st, f->label);
    oh->msgs[oh->n++] = m;
    return 0;
}

typedef struct block {
    uint64_t addr, len;
} block;
typedef MF_VEC(block) blocks;

/* Messages of one block: [pos, pos+len) of the range. */
static int read_messages(h5_file *f, h5_ohdr *oh, uint64_t pos, uint64_t len,
                         bool track_order, blocks *more)
{
    mf_cursor c;
    mf_cur_init(&c, f->base + pos, len, f->label, f->st);
    c.origin = f->origin + pos;
    unsigned hdr = oh->version == 1 ? 8 : (track_order ? 6 : 4);
    while (mf_cur_left(&c) >= hdr) {
        h5_msg m = {0};
        uint16_t size;
        if (oh->version == 1) {
            if (mf_cur_u16(&c, &m.type, "message type") || mf_cur_u16(&c, &size, "message size") ||
                mf_cur_u8(&c, &m.flags, "message flags") || mf_cur_skip(&c, 3, "reserved"))
                return -1;
        } else {
            uint8_t t;
            if (mf_cur_u8(&c, &t, "message type") || mf_cur_u16(&c, &size, "message size") ||
                mf_cur_u8(&c, &m.flags, "message flags") ||
                (track_order && mf_cur_skip(&c, 2, "creation order")))
                return -1;
            m.type = t;
        }
        m.size = size;
        m.pos = pos + c.pos;
        if (mf_cur_bytes(&c, size, &m.data, "message body"))
            return -1;
        if (m.type == H5M_CONTINUATION) {
            mf_cursor mc;
            mf_cur_init(&mc, m.data, m.size, f->label, f->st);
            mc.origin = f->origin + m.pos;
            block b;
            if (h5_rd_addr(f, &mc, &b.addr, "continuation address") ||
                h5_rd_len(f, &mc, &b.len, "continuation length"))
                return -1;
            if (MF_VEC_PUSH(*more, b))
                return mf_oom(f->st, f->label);
            continue;
        }
        if (m.type != H5M_NIL && push_msg(f, oh, m))
            return -1;
    }
    return 0;
}

/* Version 1: 16-byte prefix (version, reserved, count, refcount, size,
 * padding), then messages aligned to 8 bytes. */
static int read_v1(h5_file *f, h5_ohdr *oh, uint64_t pos, blocks *todo)
{
    mf_cursor c;
    if (h5_cursor_at(f, oh->addr, 16, "object header", &c))
        return -1;
    uint16_t nmsg;
    uint32_t refs, size;
    if (mf_cur_skip(&c, 2, "version") || mf_cur_u16(&c, &nmsg, "message count") ||
        mf_cur_u32(&c, &refs, "reference count") || mf_cur_u32(&c, &size, "header size"))
        return -1;
    (void)pos;
    block b = {oh->addr + 16, size};
    return MF_VEC_PUSH(*todo, b) ? mf_oom(f->st, f->label) : 0;
}

/* Version 2: "OHDR", flags, optional times and attribute limits, chunk 0
 * size of 1/2/4/8 bytes, messages, checksum. */
static int read_v2(h5_file *f, h5_ohdr *oh, uint64_t pos, bool *track, uint64_t *chunk0,
                   uint64_t *len0)
{
    mf_cursor c;
    if (h5_cursor_at(f, oh->addr, 0, "object header", &c))
        return -1;
    uint8_t ver, flags;
    if (mf_cur_skip(&c, 4, "signature") || mf_cur_u8(&c, &ver, "version") ||
        mf_cur_u8(&c, &flags, "flags"))
        return -1;
    if (ver != 2)
        return h5_fail_at(f, pos + 4, "object header version %u is not 2", ver);
    if ((flags & 0x20) && mf_cur_skip(&c, 16, "object times"))
        return -1;
    if ((flags & 0x10) && mf_cur_skip(&c, 4, "attribute storage limits"))
        return -1;
    uint64_t size;
    if (h5_rd_uint(&c, 1u << (flags & 3), &size, "chunk 0 size"))
        return -1;
    *track = flags & 0x04;
    *chunk0 = pos + c.pos;
    if (mf_cur_need(&c, size, "object header chunk 0") || mf_cur_need(&c, size + 4, "checksum"))
        return -1;
    *len0 = size;
    return h5_check_sum(f, pos, c.pos + size + 4, "object header");
}

int h5_ohdr_read(h5_file *f, uint64_t addr, h5_ohdr *oh)
{
    memset(oh, 0, sizeof(*oh));
    oh->addr = addr;
    uint64_t pos;
    if (h5_locate(f, addr, 4, "object header", &pos) || h5_work(f, pos))
        return -1;
    blocks todo = {0};
    h5_addrset seen = {0};
    bool track = false;
    int rc = -1;
    if (memcmp(f->base + pos, "OHDR", 4) == 0) {
        oh->version = 2;
        uint64_t c0 = 0, l0 = 0;
        if (read_v2(f, oh, pos, &track, &c0, &l0) ||
            read_messages(f, oh, c0, l0, track, &todo))
            goto out;
    } else if (f->base[pos] == 1) {
        oh->version = 1;
        if (read_v1(f, oh, pos, &todo))
            goto out;
    } else {
        h5_fail_at(f, pos, "no object header here (version byte %u, no \"OHDR\")", f->base[pos]);
        goto out;
    }
    /* continuation blocks (for v1 the first "block" is the header's own) */
    for (size_t i = 0; i < todo.n; i++) {
        if (i >= MAX_BLOCKS) {
            h5_fail_at(f, pos, "object header at address %llu has more than %d continuation blocks",
                       (unsigned long long)addr, MAX_BLOCKS);
            goto out;
        }
        block b = todo.v[i];
        uint64_t bpos;
        int added = h5_addrset_add(&seen, b.addr);
        if (added < 0) {
            mf_oom(f->st, f->label);
            goto out;
        }
        if (added == 0) {
            h5_fail_at(f, pos, "object header at address %llu: continuation block at %llu is "
                       "listed twice (a loop)", (unsigned long long)addr, (unsigned long long)b.addr);
            goto out;
        }
        if (h5_locate(f, b.addr, b.len, "object header continuation block", &bpos) ||
            h5_work(f, bpos))
            goto out;
        if (oh->version == 1) {
            if (read_messages(f, oh, bpos, b.len, false, &todo))
                goto out;
            continue;
        }
        if (b.len < 8 || h5_check_sig(f, bpos, "OCHK", "continuation block") ||
            h5_check_sum(f, bpos, b.len, "continuation block") ||
            read_messages(f, oh, bpos + 4, b.len - 8, track, &todo))
            goto out;
    }
    rc = 0;
out:
    MF_VEC_FREE(todo);
    h5_addrset_free(&seen);
    if (rc)
        h5_ohdr_free(oh);
    return rc;
}

void h5_ohdr_free(h5_ohdr *oh)
{
    free(oh->msgs);
    oh->msgs = NULL;
    oh->n = oh->cap = 0;
}

const h5_msg *h5_ohdr_find(const h5_ohdr *oh, uint16_t type)
{
    for (size_t i = 0; i < oh->n; i++)
        if (oh->msgs[i].type == type)
            return &oh->msgs[i];
    return NULL;
}

/* A shared message body: versions 1 and 2 give the address of the object
 * header holding the real message; version 3 type 2 too (type 1 points into
 * the shared-message heap, which mfmt does not read). */
static int shared_target(h5_file *f, const h5_msg *m, uint64_t *addr)
{
    mf_cursor c;
    mf_cur_init(&c, m->data, m->size, f->label, f->st);
    c.origin = f->origin + m->pos;
    uint8_t ver, type;
    if (mf_cur_u8(&c, &ver, "shared message version") || mf_cur_u8(&c, &type, "shared message type"))
        return -1;
    if (ver == 1 && mf_cur_skip(&c, 6, "reserved"))
        return -1;
    if (ver < 1 || ver > 3)
        return mf_cur_fail(&c, "shared message version %u is not 1 to 3", ver);
    if (ver == 3 && type != 2) {
        mf_fail(f->st, MF_ERR_UNSUPPORTED, f->label, (int64_t)(f->origin + m->pos),
                "message shared through the shared-message table (type %u) is not supported", type);
        return -1;
    }
    return h5_rd_addr(f, &c, addr, "shared message address");
}

int h5_msg_resolve(h5_file *f, const h5_msg *m, h5_msg *body, h5_ohdr *keep)
{
    memset(keep, 0, sizeof(*keep));
    *body = *m;
    for (int depth = 0; body->flags & H5_MSG_SHARED; depth++) {
        uint64_t addr;
        if (depth >= H5_MAX_DEPTH)
            return h5_fail_at(f, m->pos, "shared message chain longer than %d", H5_MAX_DEPTH);
        if (shared_target(f, body, &addr))
            return -1;
        h5_ohdr next;
        if (h5_ohdr_read(f, addr, &next))
            return -1;
        const h5_msg *found = h5_ohdr_find(&next, m->type);
        if (!found) {
            h5_ohdr_free(&next);
            return h5_fail_at(f, m->pos, "shared message points to the object header at %llu, "
                              "which has no message of type %u", (unsigned long long)addr, m->type);
        }
        *body = *found;
        h5_ohdr_free(keep);
        *keep = next;
    }
    return 0;
}
