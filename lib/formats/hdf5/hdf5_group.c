/* hdf5_group.c - the links of a group: old-style symbol tables (v1 B-tree
 * of symbol table nodes + local heap), link messages in the object header,
 * and dense storage (fractal heap + v2 B-tree name index). Spec: "Level 1A1
 * - Version 1 B-trees", "Level 1B - Group Symbol Table Nodes", "The Link
 * Message", "The Link Info Message". */
#include "formats/hdf5/hdf5_int.h"

#include <stdlib.h>

typedef struct walk {
    h5_file *f;
    mf_arena *a;
    h5_links *out;
    const uint8_t *heap;     /* local heap data (symbol tables) */
    uint64_t heap_size, heap_pos;
    h5_addrset seen;         /* B-tree nodes visited */
} walk;

static int add_link(walk *w, h5_link l, uint64_t pos)
{
    if (l.name[0] == '\0' || strchr(l.name, '/'))
        return h5_fail_at(w->f, pos, "link name \"%s\" is empty or contains '/'", l.name);
    if (MF_VEC_PUSH(*w->out, l))
        return mf_oom(w->f->st, w->f->label);
    return 0;
}

/* A NUL-terminated string inside the local heap. */
static const char *heap_string(walk *w, uint64_t off, uint64_t at)
{
    if (off >= w->heap_size) {
        h5_fail_at(w->f, at, "name offset %llu is past the local heap (%llu bytes)",
                   (unsigned long long)off, (unsigned long long)w->heap_size);
        return NULL;
    }
    const uint8_t *s = w->heap + off;
    const uint8_t *end = memchr(s, 0, (size_t)(w->heap_size - off));
    if (!end) {
        h5_fail_at(w->f, w->heap_pos + off, "name in the local heap is not NUL-terminated");
        return NULL;
    }
    char *copy = mf_arena_strndup(w->a, (const char *)s, (size_t)(end - s));
    if (!copy)
        mf_oom(w->f->st, w->f->label);
    return copy;
}

/* Symbol table node: "SNOD", version 1, reserved, count, entries. */
static int read_snod(walk *w, uint64_t addr)
{
    h5_file *f = w->f;
    mf_cursor c;
    uint64_t pos;
    uint8_t ver;
    uint16_t count;
    if (h5_locate(f, addr, 8, "symbol table node", &pos) || h5_work(f, pos) ||
        h5_check_sig(f, pos, "SNOD", "symbol table node") ||
        h5_cursor_at(f, addr, 0, "symbol table node", &c) || mf_cur_skip(&c, 4, "signature") ||
        mf_cur_u8(&c, &ver, "version") || mf_cur_skip(&c, 1, "reserved") ||
        mf_cur_u16(&c, &count, "symbol count"))
        return -1;
    if (ver != 1)
        return h5_fail_at(f, pos + 4, "symbol table node version %u is not 1", ver);
    for (unsigned i = 0; i < count; i++) {
        uint64_t at = pos + c.pos, name_off, ohdr;
        uint32_t cache;
        const uint8_t *scratch;
        if (h5_rd_len(f, &c, &name_off, "link name offset") ||
            h5_rd_addr(f, &c, &ohdr, "object header address") || mf_cur_u32(&c, &cache, "cache type") ||
            mf_cur_skip(&c, 4, "reserved") || mf_cur_bytes(&c, 16, &scratch, "scratch pad"))
            return -1;
        h5_link l = {.addr = ohdr};
        if (!(l.name = heap_string(w, name_off, at)))
            return -1;
        if (cache == 2) { /* old-style soft link: its value in the local heap */
            l.type = 1;
            if (!(l.target = heap_string(w, mf_rd32le(scratch), at)))
                return -1;
        }
        if (add_link(w, l, at))
            return -1;
    }
    return 0;
}

/* v1 B-tree of group nodes (type 0): keys are heap offsets, children are
 * symbol table nodes at level 0. */
static int read_group_btree(walk *w, uint64_t addr, int want_level)
{
    h5_file *f = w->f;
    mf_cursor c;
    uint64_t pos, left, right;
    uint8_t type, level;
    uint16_t used;
    if (h5_locate(f, addr, 8, "group B-tree node", &pos) || h5_work(f, pos) ||
        h5_check_sig(f, pos, "TREE", "group B-tree node") ||
        h5_cursor_at(f, addr, 0, "group B-tree node", &c) || mf_cur_skip(&c, 4, "signature") ||
        mf_cur_u8(&c, &type, "node type") || mf_cur_u8(&c, &level, "node level") ||
        mf_cur_u16(&c, &used, "entries used") || h5_rd_addr(f, &c, &left, "left sibling") ||
        h5_rd_addr(f, &c, &right, "right sibling"))
        return -1;
    int added = h5_addrset_add(&w->seen, addr);
    if (added <= 0)
        return added < 0 ? mf_oom(f->st, f->label)
                         : h5_fail_at(f, pos, "group B-tree node reached twice (a loop)");
    if (type != 0)
        return h5_fail_at(f, pos + 4, "group B-tree node has type %u, not 0", type);
    if (want_level >= 0 && level != want_level)
        return h5_fail_at(f, pos + 5, "B-tree node level %u where %d is expected", level, want_level);
    for (unsigned i = 0; i < used; i++) {
        uint64_t key, child;
        if (h5_rd_len(f, &c, &key, "B-tree key") || h5_rd_addr(f, &c, &child, "B-tree child"))
            return -1;
        int rc = level == 0 ? read_snod(w, child) : read_group_btree(w, child, level - 1);
        if (rc)
            return -1;
    }
    return 0;
}

static int read_symbol_table(walk *w, const h5_msg *m)
{
    mf_cursor c;
    mf_cur_init(&c, m->data, m->size, w->f->label, w->f->st);
    c.origin = w->f->origin + m->pos;
    uint64_t btree, heap;
    if (h5_rd_addr(w->f, &c, &btree, "group B-tree address") ||
        h5_rd_addr(w->f, &c, &heap, "local heap address") ||
        h5_local_heap(w->f, heap, &w->heap, &w->heap_size, &w->heap_pos))
        return -1;
    return read_group_btree(w, btree, -1);
}

/* The Link Message (type 0x06), from an object header or a heap. */
static int parse_link(walk *w, const uint8_t *p, uint64_t n, uint64_t pos)
{
    h5_file *f = w->f;
    mf_cursor c;
    mf_cur_init(&c, p, n, f->label, f->st);
    c.origin = f->origin + pos;
    uint8_t ver, flags, type = 0;
    uint64_t name_len;
    const uint8_t *name;
    if (mf_cur_u8(&c, &ver, "link version") || mf_cur_u8(&c, &flags, "link flags"))
        return -1;
    if (ver != 1)
        return mf_cur_fail(&c, "link message version %u is not 1", ver);
    if ((flags & 0x08) && mf_cur_u8(&c, &type, "link type"))
        return -1;
    if ((flags & 0x04) && mf_cur_skip(&c, 8, "creation order"))
        return -1;
    if ((flags & 0x10) && mf_cur_skip(&c, 1, "name character set"))
        return -1;
    if (h5_rd_uint(&c, 1u << (flags & 3), &name_len, "link name length") ||
        mf_cur_bytes(&c, name_len, &name, "link name"))
        return -1;
    h5_link l = {.type = type, .addr = H5_UNDEF};
    if (!(l.name = mf_arena_strndup(w->a, (const char *)name, (size_t)name_len)))
        return mf_oom(f->st, f->label);
    if (strlen(l.name) != name_len)
        return h5_fail_at(f, pos, "link name contains a NUL byte");
    if (type == 0) {
        if (h5_rd_addr(f, &c, &l.addr, "hard link address"))
            return -1;
    } else {
        uint16_t vlen;
        const uint8_t *v;
        if (mf_cur_u16(&c, &vlen, "link value length") || mf_cur_bytes(&c, vlen, &v, "link value"))
            return -1;
        if (type == 64 && vlen > 1) { /* external: flags byte, file, NUL, object path */
            const char *rest = (const char *)v + 1;
            size_t left = vlen - 1u, flen = strnlen(rest, left);
            const char *obj = flen < left ? rest + flen + 1 : rest + left;
            size_t olen = flen < left ? strnlen(obj, left - flen - 1) : 0;
            l.target = mf_arena_printf(w->a, "%.*s:%.*s", (int)flen, rest, (int)olen, obj);
        } else {
            l.target = mf_arena_strndup(w->a, (const char *)v, strnlen((const char *)v, vlen));
        }
        if (!l.target)
            return mf_oom(f->st, f->label);
    }
    return add_link(w, l, pos);
}

typedef struct dense {
    walk *w;
    h5_fheap heap;
} dense;

/* Name index record (type 5): name hash (4 bytes), heap ID. */
static int dense_record(void *ctx, const uint8_t *rec, uint32_t size, uint64_t pos)
{
    dense *d = ctx;
    const uint8_t *p;
    uint64_t n, at;
    if (size < 5)
        return h5_fail_at(d->w->f, pos, "link name record of %u bytes is too short", size);
    if (h5_fheap_get(d->w->f, &d->heap, rec + 4, size - 4, &p, &n, &at))
        return -1;
    return parse_link(d->w, p, n, at);
}

static int read_dense(walk *w, const h5_msg *m)
{
    mf_cursor c;
    mf_cur_init(&c, m->data, m->size, w->f->label, w->f->st);
    c.origin = w->f->origin + m->pos;
    uint8_t ver, flags;
    uint64_t heap, names;
    if (mf_cur_u8(&c, &ver, "link info version") || mf_cur_u8(&c, &flags, "link info flags"))
        return -1;
    if (ver != 0)
        return mf_cur_fail(&c, "link info message version %u is not 0", ver);
    if ((flags & 1) && mf_cur_skip(&c, 8, "maximum creation index"))
        return -1;
    if (h5_rd_addr(w->f, &c, &heap, "fractal heap address") ||
        h5_rd_addr(w->f, &c, &names, "name index address"))
        return -1;
    if (heap == H5_UNDEF)
        return 0; /* compact: the links are link messages */
    dense d = {.w = w};
    if (h5_fheap_open(w->f, heap, &d.heap))
        return -1;
    return h5_bt2_iterate(w->f, names, 5, dense_record, &d);
}

bool h5_is_group(const h5_ohdr *oh)
{
    return !h5_ohdr_find(oh, H5M_LAYOUT) &&
           (h5_ohdr_find(oh, H5M_SYMBOL_TABLE) || h5_ohdr_find(oh, H5M_LINK_INFO) ||
            h5_ohdr_find(oh, H5M_LINK));
}

static int cmp_link(const void *a, const void *b)
{
    return strcmp(((const h5_link *)a)->name, ((const h5_link *)b)->name);
}

int h5_group_links(h5_file *f, const h5_ohdr *oh, mf_arena *a, h5_links *out)
{
    walk w = {.f = f, .a = a, .out = out};
    int rc = 0;
    const h5_msg *stab = h5_ohdr_find(oh, H5M_SYMBOL_TABLE);
    if (stab)
        rc = read_symbol_table(&w, stab);
    for (size_t i = 0; rc == 0 && i < oh->n; i++) {
        const h5_msg *m = &oh->msgs[i];
        if (m->type == H5M_LINK)
            rc = parse_link(&w, m->data, m->size, m->pos);
        else if (m->type == H5M_LINK_INFO)
            rc = read_dense(&w, m);
    }
    h5_addrset_free(&w.seen);
    if (rc)
        return -1;
    if (out->n > 1)
        qsort(out->v, out->n, sizeof(h5_link), cmp_link);
    for (size_t i = 1; i < out->n; i++)
        if (strcmp(out->v[i - 1].name, out->v[i].name) == 0)
            return h5_fail_at(f, f->base_addr + oh->addr, "group has two links named \"%s\"",
                              out->v[i].name);
    return 0;
}
