/* tf_bundle.c - TensorFlow's TensorBundle: PREFIX.index is a LevelDB-format
 * table (table_format.md) mapping tensor names to BundleEntryProto; the
 * bytes sit in PREFIX.data-NNNNN-of-MMMMM.
 *
 * Table: a 48-byte footer at the end (metaindex handle, index handle, each
 * two varint64 offset/size, zero padding to 40 bytes, the 8-byte magic
 * 0xdb4775248b80fb57); the index block maps keys to data block handles.
 * Block: entries {varint32 shared, varint32 unshared, varint32 value length,
 * key suffix, value}, then uint32 restart offsets and their uint32 count;
 * after it a 1-byte compression type (0: none) and a masked CRC32C of the
 * block and that byte.
 * The key "" holds BundleHeaderProto {num_shards = 1, endianness = 2
 * (0 little, 1 big), version = 3}; every other key a BundleEntryProto
 * {dtype = 1, shape = 2, shard_id = 3, offset = 4, size = 5, crc32c = 6
 * (fixed32, masked), slices = 7}. */
#include "core/crc32c.h"
#include "formats/tf/tf.h"

#include <stdlib.h>

#define TABLE_MAGIC 0xdb4775248b80fb57ull
#define MAX_SHARDS 99999 /* shard names have five digits */

typedef struct bentry {
    const char *key;
    size_t klen;
    const uint8_t *val;
    uint64_t val_len, off;
} bentry;

typedef struct bundle {
    mf_model *m;
    mf_status *st;
    const char *file;   /* the .index path */
    const uint8_t *b;
    uint64_t size;
    MF_VEC(bentry) entries;
    char *key;          /* the key being rebuilt */
    size_t key_cap;
} bundle;

typedef struct handle {
    uint64_t off, size;
} handle;

static int read_handle(mf_cursor *c, handle *h, const char *what)
{
    return mf_pb_varint(c, &h->off, what) || mf_pb_varint(c, &h->size, what) ? -1 : 0;
}

/* A block's entries region [*data, *data + *len), its CRC and compression
 * checked. */
static int load_block(bundle *x, const handle *h, const uint8_t **data, uint64_t *len,
                      uint64_t *restarts)
{
    uint64_t end;
    if (mf_add_ovf(h->off, h->size, &end) || mf_add_ovf(end, 5, &end) || end > x->size)
        return mf_fail(x->st, MF_ERR_FORMAT, x->file, (int64_t)h->off,
                       "block [%llu, +%llu) and its trailer run past the end of the table",
                       (unsigned long long)h->off, (unsigned long long)h->size);
    const uint8_t *p = x->b + h->off;
    uint8_t type = p[h->size];
    uint32_t want = mf_crc32c_unmask(mf_rd32le(p + h->size + 1));
    uint32_t got = mf_crc32c_extend(mf_crc32c(p, (size_t)h->size), &type, 1);
    if (got != want)
        return mf_fail(x->st, MF_ERR_FORMAT, x->file, (int64_t)(h->off + h->size + 1),
                       "block checksum mismatch (CRC32C %08x, stored %08x)", got, want);
    if (type != 0)
        return mf_fail(x->st, MF_ERR_UNSUPPORTED, x->file, (int64_t)(h->off + h->size),
                       "block compression type %u (snappy) is not supported", type);
    if (h->size < 4)
        return mf_fail(x->st, MF_ERR_FORMAT, x->file, (int64_t)h->off, "block is too short");
    uint64_t nr = mf_rd32le(p + h->size - 4);
    if (nr > (h->size - 4) / 4)
        return mf_fail(x->st, MF_ERR_FORMAT, x->file, (int64_t)(h->off + h->size - 4),
                       "%llu restart points cannot fit in the block", (unsigned long long)nr);
    *data = p;
    *len = h->size - 4 - 4 * nr;
    *restarts = nr;
    return 0;
}

/* Walks a block's entries; fn gets the full key and the value. */
typedef int (*entry_fn)(bundle *x, const char *key, size_t klen, const uint8_t *v, uint64_t vl,
                        uint64_t off);

static int walk_block(bundle *x, const handle *h, entry_fn fn)
{
    const uint8_t *data = NULL;
    uint64_t len = 0, nr = 0;
    if (load_block(x, h, &data, &len, &nr))
        return -1;
    mf_cursor c;
    mf_cur_init(&c, data, len, x->file, x->st);
    c.origin = h->off;
    size_t klen = 0;
    while (mf_cur_left(&c) > 0) {
        uint64_t at = mf_cur_off(&c), shared, unshared, vl;
        const uint8_t *ks, *v;
        if (mf_pb_varint(&c, &shared, "block entry") || mf_pb_varint(&c, &unshared, "block entry") ||
            mf_pb_varint(&c, &vl, "block entry"))
            return -1;
        if (shared > klen)
            return mf_fail(x->st, MF_ERR_FORMAT, x->file, (int64_t)at,
                           "entry shares %llu key bytes with a %zu-byte previous key",
                           (unsigned long long)shared, klen);
        if (mf_cur_bytes(&c, unshared, &ks, "entry key") || mf_cur_bytes(&c, vl, &v, "entry value"))
            return -1;
        size_t need = (size_t)shared + (size_t)unshared + 1;
        if (need > x->key_cap) {
            char *k = realloc(x->key, need);
            if (!k)
                return mf_oom(x->st, x->file);
            x->key = k;
            x->key_cap = need;
        }
        memcpy(x->key + shared, ks, (size_t)unshared);
        klen = (size_t)(shared + unshared);
        x->key[klen] = 0;
        if (fn(x, x->key, klen, v, vl, at))
            return -1;
    }
    return 0;
}

static int keep_entry(bundle *x, const char *key, size_t klen, const uint8_t *v, uint64_t vl,
                      uint64_t off)
{
    bentry e = {mf_arena_strndup(x->m->arena, key, klen), klen, v, vl, off};
    if (!e.key || MF_VEC_PUSH(x->entries, e))
        return mf_oom(x->st, x->file);
    if (memchr(key, 0, klen))
        mf_model_note(x->m, "%s: byte %llu: a tensor name holds a NUL byte; shown up to it",
                      x->file, (unsigned long long)off);
    return 0;
}

static int data_block(bundle *x, const char *key, size_t klen, const uint8_t *v, uint64_t vl,
                      uint64_t off)
{
    (void)key;
    (void)klen;
    mf_cursor c;
    mf_cur_init(&c, v, vl, x->file, x->st);
    c.origin = off;
    handle h;
    if (read_handle(&c, &h, "index entry block handle"))
        return -1;
    if (h.size > x->size)
        return mf_fail(x->st, MF_ERR_FORMAT, x->file, (int64_t)off, "data block larger than the table");
    return walk_block(x, &h, keep_entry);
}

static int read_table(bundle *x)
{
    if (x->size < 48)
        return mf_fail(x->st, MF_ERR_FORMAT, x->file, 0,
                       "%llu bytes: too short for a table footer (48)", (unsigned long long)x->size);
    uint64_t foot = x->size - 48;
    if (mf_rd64le(x->b + x->size - 8) != TABLE_MAGIC)
        return mf_fail(x->st, MF_ERR_FORMAT, x->file, (int64_t)(x->size - 8),
                       "table magic number missing: not a TensorBundle index");
    mf_cursor c;
    mf_cur_init(&c, x->b + foot, 40, x->file, x->st);
    c.origin = foot;
    handle meta, index;
    if (read_handle(&c, &meta, "metaindex handle") || read_handle(&c, &index, "index handle"))
        return -1;
    return walk_block(x, &index, data_block);
}

/* ------------------------------------------------------------ entries */

typedef struct header {
    uint64_t num_shards, endianness, producer;
    bool found;
} header;

static int read_header(bundle *x, const bentry *e, header *h)
{
    mf_cursor c;
    mf_cur_init(&c, e->val, e->val_len, x->file, x->st);
    c.origin = e->off;
    mf_pb_field f;
    int r;
    h->found = true;
    h->num_shards = 1; /* proto3 default 0 means one shard in practice */
    bool set = false;
    while ((r = mf_pb_next(&c, &f)) == 1) {
        if (f.number == 1 && f.wire == 0)
            h->num_shards = f.varint, set = true;
        else if (f.number == 2 && f.wire == 0)
            h->endianness = f.varint;
        else if (f.number == 3 && f.wire == 2) {
            mf_cursor vc;
            mf_pb_sub(&c, &f, &vc);
            mf_pb_field g;
            while ((r = mf_pb_next(&vc, &g)) == 1)
                if (g.number == 1 && g.wire == 0)
                    h->producer = g.varint;
            if (r < 0)
                return -1;
        }
    }
    if (r < 0)
        return -1;
    if (!set || h->num_shards == 0)
        h->num_shards = 1;
    if (h->num_shards > MAX_SHARDS)
        return mf_fail(x->st, MF_ERR_FORMAT, x->file, (int64_t)e->off,
                       "BundleHeaderProto: %llu shards (at most %d)",
                       (unsigned long long)h->num_shards, MAX_SHARDS);
    if (h->endianness > 1)
        return mf_fail(x->st, MF_ERR_FORMAT, x->file, (int64_t)e->off,
                       "BundleHeaderProto: endianness %llu is neither 0 nor 1",
                       (unsigned long long)h->endianness);
    return 0;
}

typedef struct shards {
    const char *prefix;
    uint64_t n;
    uint32_t *fi; /* file index + 1; 0 = not mapped yet */
} shards;

static int shard_file(bundle *x, shards *s, uint64_t id, int64_t at, uint32_t *fi)
{
    if (id >= s->n)
        return mf_fail(x->st, MF_ERR_FORMAT, x->file, at,
                       "entry names shard %llu of a bundle with %llu", (unsigned long long)id,
                       (unsigned long long)s->n);
    if (s->fi[id]) {
        *fi = s->fi[id] - 1;
        return 0;
    }
    char *path = mf_arena_printf(x->m->arena, "%s.data-%05llu-of-%05llu", s->prefix,
                                 (unsigned long long)id, (unsigned long long)s->n);
    if (!path)
        return mf_oom(x->st, x->file);
    mf_status tmp;
    mf_status_init(&tmp);
    if (mf_model_add_file(x->m, path, fi, &tmp)) {
        mf_fail(x->st, tmp.code, x->file, at, "data shard: %s", tmp.msg);
        mf_status_clear(&tmp);
        return -1;
    }
    s->fi[id] = *fi + 1;
    return 0;
}

typedef struct bundle_entry {
    uint64_t dtype, shard, offset, size;
    uint32_t crc;
    bool has_crc, sliced;
} bundle_entry;

static int parse_entry(bundle *x, const bentry *e, mf_tensor *t, bundle_entry *be)
{
    memset(be, 0, sizeof(*be));
    mf_cursor c;
    mf_cur_init(&c, e->val, e->val_len, x->file, x->st);
    c.origin = e->off;
    mf_pb_field f;
    int r;
    while ((r = mf_pb_next(&c, &f)) == 1) {
        switch (f.number) {
        case 1: if (f.wire == 0) be->dtype = f.varint; break;
        case 2: if (f.wire == 2 && mf_tf_read_shape(&c, &f, t)) return -1; break;
        case 3: if (f.wire == 0) be->shard = f.varint; break;
        case 4: if (f.wire == 0) be->offset = f.varint; break;
        case 5: if (f.wire == 0) be->size = f.varint; break;
        case 6: if (f.wire == 5) be->crc = (uint32_t)f.varint, be->has_crc = true; break;
        case 7: be->sliced = true; break;
        }
    }
    return r < 0 ? -1 : 0;
}

static int add_entry(bundle *x, shards *s, const bentry *e, const header *h, unsigned flags)
{
    mf_tensor tmp;
    memset(&tmp, 0, sizeof(tmp));
    tmp.name = e->key;
    bundle_entry be;
    if (parse_entry(x, e, &tmp, &be))
        return -1;
    if (be.sliced) {
        mf_model_note(x->m, "tensor \"%s\" is saved in slices (a partitioned variable): not listed",
                      e->key);
        return 0;
    }
    tmp.dtype = mf_tf_dtype(be.dtype);
    if (tmp.dtype == MF_DTYPE_INVALID) {
        const char *dn = mf_tf_dtype_name(be.dtype);
        mf_model_note(x->m, "tensor \"%s\": %s%s entries hold no plain data: not listed", e->key,
                      dn ? dn : "unknown dtype ", dn ? "" : "");
        return 0;
    }
    uint32_t fi;
    if (shard_file(x, s, be.shard, (int64_t)e->off, &fi))
        return -1;
    const mf_file *f = &x->m->files[fi];
    uint64_t end;
    if (mf_add_ovf(be.offset, be.size, &end) || end > f->size)
        return mf_fail(x->st, MF_ERR_FORMAT, x->file, (int64_t)e->off,
                       "tensor \"%s\": [offset %llu, +%llu) is past the end of %s (%llu bytes)",
                       e->key, (unsigned long long)be.offset, (unsigned long long)be.size, f->path,
                       (unsigned long long)f->size);
    const uint8_t *p = f->base ? f->base + be.offset : NULL;
    mf_tensor *t = mf_model_add_tensor(x->m, x->st);
    if (!t)
        return -1;
    *t = tmp;
    t->file = fi;
    t->offset = be.offset;
    t->big_endian = h->endianness == 1;
    bool check = (flags & MF_OPEN_STRICT) && be.has_crc;
    if (t->dtype == MF_STRING) {
        uint32_t crc;
        if (mf_tf_bundle_strings(x->m, t, p, be.size, f->path, x->st, &crc))
            return -1;
        if (check && crc != mf_crc32c_unmask(be.crc))
            mf_breach(x->st, x->file, (int64_t)e->off, "tensor \"%s\": data CRC32C mismatch",
                      e->key);
        return 0;
    }
    /* validate reads every byte once to check the entry's CRC32C */
    if (check && mf_crc32c(p, (size_t)be.size) != mf_crc32c_unmask(be.crc))
        mf_breach(x->st, x->file, (int64_t)e->off, "tensor \"%s\": data CRC32C mismatch", e->key);
    if (mf_tensor_set_nbytes(t, x->file, (int64_t)e->off, x->st))
        return -1;
    if (t->nbytes != be.size)
        return mf_fail(x->st, MF_ERR_FORMAT, x->file, (int64_t)e->off,
                       "tensor \"%s\": entry size %llu, but shape x %s needs %llu", e->key,
                       (unsigned long long)be.size, mf_dtype_name(t->dtype),
                       (unsigned long long)t->nbytes);
    t->data = be.size ? p : NULL;
    return 0;
}

static int add_entries(bundle *x, const char *prefix, unsigned flags)
{
    header h = {0};
    for (size_t i = 0; i < x->entries.n; i++)
        if (x->entries.v[i].klen == 0 && read_header(x, &x->entries.v[i], &h))
            return -1;
    if (!h.found)
        return mf_fail(x->st, MF_ERR_FORMAT, x->file, -1,
                       "no BundleHeaderProto (the entry with the empty key)");
    mf_kv *kv;
    if (mf_model_put_meta(x->m, "bundle_num_shards", mf_value_int((int64_t)h.num_shards), x->st) ||
        !(kv = mf_model_add_meta(x->m, "bundle_endianness", x->st)))
        return -1;
    kv->v = mf_value_str(x->m->arena, h.endianness ? "big" : "little", h.endianness ? 3 : 6);
    shards s = {prefix, h.num_shards, calloc(h.num_shards, sizeof(uint32_t))};
    if (!s.fi)
        return mf_oom(x->st, x->file);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < x->entries.n; i++)
        if (x->entries.v[i].klen != 0)
            rc = add_entry(x, &s, &x->entries.v[i], &h, flags);
    free(s.fi);
    return rc;
}

int mf_tf_read_bundle(mf_model *m, const char *prefix, unsigned flags, mf_status *st)
{
    char *index = mf_arena_printf(m->arena, "%s.index", prefix);
    if (!index)
        return mf_oom(st, prefix);
    uint32_t fi;
    if (mf_model_add_file(m, index, &fi, st))
        return -1;
    bundle x = {.m = m, .st = st, .file = m->files[fi].path, .b = m->files[fi].base,
                .size = m->files[fi].size};
    int rc = read_table(&x);
    if (rc == 0)
        rc = add_entries(&x, prefix, flags);
    m->header_bytes += x.size;
    free(x.key);
    MF_VEC_FREE(x.entries);
    return rc;
}
