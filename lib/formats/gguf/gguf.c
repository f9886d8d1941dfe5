/* gguf.c - GGUF reader (ggml/docs/gguf.md), versions 2 and 3, either byte
 * order, split sets (NAME-0000i-of-0000n.gguf). */
#include "formats/formats.h"
#include "formats/gguf/gguf_int.h"

#include <stdlib.h>

#define GGUF_DEFAULT_ALIGNMENT 32
#define GGML_MAX_DIMS 4
#define GGML_MAX_NAME 64
#define MAX_NESTING 8

enum { T_U8, T_I8, T_U16, T_I16, T_U32, T_I32, T_F32, T_BOOL, T_STR, T_ARR, T_U64, T_I64, T_F64 };

static const char *const type_names[] = {"u8", "i8", "u16", "i16", "u32", "i32", "f32",
                                         "bool", "string", "array", "u64", "i64", "f64"};

/* Smallest encoding of one value of a type: bounds counts before allocating. */
static uint64_t min_size(uint32_t type)
{
    static const uint8_t sz[] = {1, 1, 2, 2, 4, 4, 4, 1, 8, 12, 8, 8, 8};
    return type < 13 ? sz[type] : 1;
}

typedef struct gg {
    mf_model *m;
    mf_cursor c;
    uint32_t file;
    unsigned flags;
    mf_status *st;
    bool nested_noted;
    mf_strset keys;
} gg;

static int read_string(gg *g, const char **s, size_t *len, const char *what)
{
    uint64_t n;
    if (mf_cur_u64(&g->c, &n, what))
        return -1;
    if (n > mf_cur_left(&g->c))
        return mf_cur_fail(&g->c, "%s: string length %llu exceeds the %llu bytes left in the file",
                           what, (unsigned long long)n, (unsigned long long)mf_cur_left(&g->c));
    const uint8_t *p;
    mf_cur_bytes(&g->c, n, &p, what);
    *s = mf_arena_strndup(g->m->arena, (const char *)p, (size_t)n);
    if (!*s)
        return mf_oom(g->st, g->c.file);
    *len = (size_t)n;
    return 0;
}

static int read_value(gg *g, uint32_t type, mf_value *v, int depth);

static int read_array(gg *g, mf_value *v, int depth)
{
    uint32_t et;
    uint64_t n;
    if (mf_cur_u32(&g->c, &et, "array element type") || mf_cur_u64(&g->c, &n, "array length"))
        return -1;
    if (et > T_F64)
        return mf_cur_fail(&g->c, "array element type %u does not exist", et);
    if (depth >= MAX_NESTING)
        return mf_cur_fail(&g->c, "arrays nested more than %d deep", MAX_NESTING);
    if (et == T_ARR && !g->nested_noted) {
        g->nested_noted = true;
        mf_model_note(g->m, "byte %llu: nested array: valid GGUF, but llama.cpp's loader refuses it",
                      (unsigned long long)mf_cur_off(&g->c));
    }
    uint64_t need;
    if (mf_mul_ovf(n, min_size(et), &need) || need > mf_cur_left(&g->c))
        return mf_cur_fail(&g->c, "array of %llu %s values cannot fit in the %llu bytes left",
                           (unsigned long long)n, type_names[et],
                           (unsigned long long)mf_cur_left(&g->c));
    v->type = MF_V_ARR;
    v->as.arr.elem = (mf_vtype)et;
    v->as.arr.n = (size_t)n;
    v->as.arr.items = mf_arena_calloc(g->m->arena, n ? (size_t)n : 1, sizeof(mf_value));
    if (!v->as.arr.items)
        return mf_oom(g->st, g->c.file);
    for (uint64_t i = 0; i < n; i++)
        if (read_value(g, et, &v->as.arr.items[i], depth + 1))
            return -1;
    return 0;
}

static int read_value(gg *g, uint32_t type, mf_value *v, int depth)
{
    mf_cursor *c = &g->c;
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64;
    float f;
    v->type = (mf_vtype)type;
    switch (type) {
    case T_U8: if (mf_cur_u8(c, &u8, "u8 value")) return -1; v->as.u = u8; return 0;
    case T_I8: if (mf_cur_u8(c, &u8, "i8 value")) return -1; v->as.i = (int8_t)u8; return 0;
    case T_U16: if (mf_cur_u16(c, &u16, "u16 value")) return -1; v->as.u = u16; return 0;
    case T_I16: if (mf_cur_u16(c, &u16, "i16 value")) return -1; v->as.i = (int16_t)u16; return 0;
    case T_U32: if (mf_cur_u32(c, &u32, "u32 value")) return -1; v->as.u = u32; return 0;
    case T_I32: if (mf_cur_u32(c, &u32, "i32 value")) return -1; v->as.i = (int32_t)u32; return 0;
    case T_F32:
        if (mf_cur_u32(c, &u32, "f32 value")) return -1;
        memcpy(&f, &u32, 4);
        v->as.f = f;
        return 0;
    case T_BOOL:
        if (mf_cur_u8(c, &u8, "bool value")) return -1;
        if (u8 > 1)
            mf_breach(g->st, c->file, (int64_t)mf_cur_off(c) - 1, "bool value %u is not 0 or 1", u8);
        v->as.b = u8 != 0;
        return 0;
    case T_STR: return read_string(g, &v->as.s.ptr, &v->as.s.len, "string value");
    case T_ARR: return read_array(g, v, depth);
    case T_U64: if (mf_cur_u64(c, &u64, "u64 value")) return -1; v->as.u = u64; return 0;
    case T_I64: if (mf_cur_u64(c, &u64, "i64 value")) return -1; v->as.i = (int64_t)u64; return 0;
    case T_F64:
        if (mf_cur_u64(c, &u64, "f64 value")) return -1;
        memcpy(&v->as.f, &u64, 8);
        return 0;
    }
    return mf_cur_fail(c, "value type %u does not exist", type);
}

static int read_kvs(gg *g, uint64_t n_kv, bool keep)
{
    for (uint64_t i = 0; i < n_kv; i++) {
        uint64_t at = mf_cur_off(&g->c);
        const char *key;
        size_t klen;
        uint32_t type;
        if (read_string(g, &key, &klen, "key") || mf_cur_u32(&g->c, &type, "value type"))
            return -1;
        if (type > T_F64)
            return mf_cur_fail(&g->c, "key \"%s\": value type %u does not exist", key, type);
        mf_value v;
        if (read_value(g, type, &v, 0))
            return -1;
        if (!keep)
            continue;
        int added = mf_strset_add(&g->keys, key);
        if (added < 0)
            return mf_oom(g->st, g->c.file);
        if (added == 0)
            mf_breach(g->st, g->c.file, (int64_t)at, "key \"%s\" appears twice", key);
        mf_kv *kv = mf_model_add_meta(g->m, key, g->st);
        if (!kv)
            return -1;
        kv->v = v;
        kv->offset = at;
    }
    return 0;
}

static int alignment_of(gg *g, uint64_t *align)
{
    *align = GGUF_DEFAULT_ALIGNMENT;
    for (size_t i = 0; i < g->m->n_meta; i++) {
        const mf_kv *kv = &g->m->meta[i];
        if (strcmp(kv->key, "general.alignment") != 0)
            continue;
        if (kv->v.type != MF_V_U32)
            return mf_fail(g->st, MF_ERR_FORMAT, g->c.file, (int64_t)kv->offset,
                           "general.alignment must be a u32");
        uint64_t a = kv->v.as.u;
        if (a == 0 || (a & (a - 1)))
            return mf_fail(g->st, MF_ERR_FORMAT, g->c.file, (int64_t)kv->offset,
                           "general.alignment is %llu, not a power of two",
                           (unsigned long long)a);
        *align = a;
    }
    return 0;
}

typedef struct tinfo {
    size_t ti;
    uint64_t rel, at;
} tinfo;

static int read_tensor_info(gg *g, tinfo *out)
{
    mf_cursor *c = &g->c;
    uint64_t at = mf_cur_off(c);
    const char *name;
    size_t nlen;
    uint32_t ndim, type;
    if (read_string(g, &name, &nlen, "tensor name") || mf_cur_u32(c, &ndim, "n_dims"))
        return -1;
    if (ndim > GGML_MAX_DIMS)
        return mf_cur_fail(c, "tensor \"%s\": %u dimensions; ggml allows at most %d", name,
                           ndim, GGML_MAX_DIMS);
    if (nlen >= GGML_MAX_NAME)
        mf_model_note(g->m, "tensor \"%s\": name is %zu bytes; llama.cpp refuses names of %d bytes or more",
                      name, nlen, GGML_MAX_NAME);
    mf_tensor *t = mf_model_add_tensor(g->m, g->st);
    if (!t)
        return -1;
    out->ti = (size_t)(t - g->m->tensors);
    out->at = at;
    t->name = name;
    t->file = g->file;
    t->big_endian = g->c.big_endian;
    t->ndim = (int)ndim;
    for (uint32_t d = 0; d < ndim; d++) {
        uint64_t ne;
        if (mf_cur_u64(c, &ne, "dimension"))
            return -1;
        if (ne > INT64_MAX)
            return mf_cur_fail(c, "tensor \"%s\": dimension %u is %lld (negative)", name, d,
                               (long long)ne);
        t->shape[ndim - 1 - d] = (int64_t)ne; /* ggml's ne is fastest first */
    }
    if (mf_cur_u32(c, &type, "tensor type") || mf_cur_u64(c, &out->rel, "tensor offset"))
        return -1;
    t->dtype = mf_dtype_from_ggml(type);
    if (t->dtype == MF_DTYPE_INVALID)
        return mf_fail(g->st, MF_ERR_FORMAT, c->file, (int64_t)at,
                       "tensor \"%s\" has ggml type %u, which does not exist", name, type);
    return mf_tensor_set_nbytes(t, c->file, (int64_t)at, g->st);
}

/* Offsets must be aligned and exactly sequential in info order (llama.cpp's
 * gguf_init checks `offset == running padded size`); data inside the file. */
static void check_tensor_layout(gg *g, tinfo *ti, uint64_t n, uint64_t align,
                                uint64_t data_start)
{
    mf_model *m = g->m;
    const mf_file *f = &m->files[g->file];
    uint64_t data_len = f->size > data_start ? f->size - data_start : 0;
    uint64_t expect = 0;
    mf_strset names = {0};
    for (uint64_t i = 0; i < n; i++) {
        mf_tensor *t = &m->tensors[ti[i].ti];
        uint64_t rel = ti[i].rel, end;
        int added = mf_strset_add(&names, t->name);
        if (added < 0) {
            mf_oom(g->st, f->path);
            break;
        }
        if (added == 0)
            mf_breach(g->st, f->path, (int64_t)ti[i].at, "tensor name \"%s\" appears twice",
                      t->name);
        if (rel % align)
            mf_breach(g->st, f->path, (int64_t)ti[i].at,
                      "tensor \"%s\": offset %llu is not a multiple of the alignment (%llu)",
                      t->name, (unsigned long long)rel, (unsigned long long)align);
        else if (rel != expect)
            mf_breach(g->st, f->path, (int64_t)ti[i].at,
                      "tensor \"%s\": offset %llu; after the previous tensors it must be %llu",
                      t->name, (unsigned long long)rel, (unsigned long long)expect);
        /* the next expected offset is the running padded size, whatever
         * this tensor's own offset (gguf.cpp: ctx->size += GGML_PAD(nbytes)) */
        uint64_t padded = mf_align_up(t->nbytes, align);
        if (padded < t->nbytes || mf_add_ovf(expect, padded, &expect))
            expect = UINT64_MAX;
        if (mf_add_ovf(rel, t->nbytes, &end) || end > data_len) {
            mf_breach(g->st, f->path, (int64_t)ti[i].at,
                      "tensor \"%s\": data [%llu, +%llu) runs past the end of the file (data section is %llu bytes)",
                      t->name, (unsigned long long)rel, (unsigned long long)t->nbytes,
                      (unsigned long long)data_len);
            continue;
        }
        t->offset = data_start + rel;
        t->data = f->base + t->offset;
    }
    mf_strset_free(&names);
}

static void record_layout(mf_model *m, uint32_t version, bool big_endian, uint64_t align,
                          uint64_t data_start)
{
    mf_gguf_layout *l = mf_arena_alloc(m->arena, sizeof(*l));
    if (!l)
        return; /* only editing needs it; it then says the layout is unknown */
    *l = (mf_gguf_layout){.version = version, .big_endian = big_endian, .alignment = align,
                          .data_start = data_start};
    m->priv = l;
}

static int parse_gguf(mf_model *m, uint32_t fi, bool keep_meta, unsigned flags, mf_status *st)
{
    const mf_file *f = &m->files[fi];
    gg g = {.m = m, .file = fi, .flags = flags, .st = st};
    mf_cur_init(&g.c, f->base, f->size, f->path, st);
    const uint8_t *magic;
    uint32_t version;
    if (mf_cur_bytes(&g.c, 4, &magic, "magic"))
        return -1;
    if (memcmp(magic, "GGUF", 4) != 0)
        return mf_fail(st, MF_ERR_FORMAT, f->path, 0, "magic is \"%.4s\", not GGUF", magic);
    if (mf_cur_u32(&g.c, &version, "version"))
        return -1;
    if (version == 0 || version > 0xffff) {
        g.c.big_endian = true;
        version = __builtin_bswap32(version);
    }
    if (version == 1)
        return mf_fail(st, MF_ERR_UNSUPPORTED, f->path, 4,
                       "GGUF version 1 (32-bit counts) is obsolete; re-convert the model with a current llama.cpp");
    if (version != 2 && version != 3)
        return mf_fail(st, MF_ERR_FORMAT, f->path, 4, "unknown GGUF version %u", version);
    uint64_t n_tensors, n_kv;
    if (mf_cur_u64(&g.c, &n_tensors, "tensor count") || mf_cur_u64(&g.c, &n_kv, "key/value count"))
        return -1;
    /* every pair needs >= 13 bytes, every tensor info >= 24: bound before use */
    if (n_kv > mf_cur_left(&g.c) / 13)
        return mf_fail(st, MF_ERR_FORMAT, f->path, 16,
                       "key/value count %llu cannot fit in the %llu bytes left",
                       (unsigned long long)n_kv, (unsigned long long)mf_cur_left(&g.c));
    if (n_tensors > mf_cur_left(&g.c) / 24)
        return mf_fail(st, MF_ERR_FORMAT, f->path, 8,
                       "tensor count %llu cannot fit in the %llu bytes left",
                       (unsigned long long)n_tensors, (unsigned long long)mf_cur_left(&g.c));
    snprintf(m->version, sizeof(m->version), "%u%s", version, g.c.big_endian ? " big-endian" : "");
    size_t meta_before = m->n_meta;
    int krc = read_kvs(&g, n_kv, true);
    mf_strset_free(&g.keys);
    if (krc)
        return -1;
    uint64_t align;
    int arc = alignment_of(&g, &align);
    if (!keep_meta) /* later split files: their keys are checked, not kept */
        m->n_meta = meta_before;
    if (arc)
        return -1;
    tinfo *ti = calloc(n_tensors ? (size_t)n_tensors : 1, sizeof(*ti));
    if (!ti)
        return mf_oom(st, f->path);
    int rc = 0;
    for (uint64_t i = 0; i < n_tensors && rc == 0; i++)
        rc = read_tensor_info(&g, &ti[i]);
    uint64_t data_start = mf_align_up(mf_cur_off(&g.c), align);
    if (rc == 0) {
        m->header_bytes += mf_cur_off(&g.c);
        if (n_tensors && data_start > f->size)
            mf_breach(st, f->path, (int64_t)mf_cur_off(&g.c),
                      "the data section would start at %llu, past the end of the file",
                      (unsigned long long)data_start);
        check_tensor_layout(&g, ti, n_tensors, align, data_start);
        if (fi == 0) /* what an editor needs to rewrite the header alone */
            record_layout(m, version, g.c.big_endian, align, data_start);
    }
    free(ti);
    return rc == 0 && st->code == MF_OK ? 0 : -1;
}

static uint64_t meta_uint(const mf_model *m, const char *key, uint64_t dflt)
{
    const mf_value *v = mf_meta_get(m, key);
    if (!v || v->type > MF_V_I64 || v->type == MF_V_F32 || v->type == MF_V_BOOL ||
        v->type == MF_V_STR || v->type == MF_V_ARR)
        return dflt;
    return v->as.u;
}

/* NAME-00001-of-00003.gguf: open the others and append their tensors. */
static int open_split_rest(mf_model *m, const char *path, unsigned flags, mf_status *st)
{
    uint64_t count = meta_uint(m, "split.count", 1);
    if (count <= 1)
        return 0;
    size_t len = strlen(path);
    const char *tail = "-00001-of-00000.gguf";
    size_t tl = strlen(tail);
    unsigned no, of;
    bool named = len >= tl && sscanf(path + len - tl, "-%5u-of-%5u.gguf", &no, &of) == 2;
    uint64_t split_no = meta_uint(m, "split.no", 0);
    if (split_no >= count)
        return mf_fail(st, MF_ERR_FORMAT, path, -1, "split.no is %llu, not below split.count %llu",
                       (unsigned long long)split_no, (unsigned long long)count);
    if (split_no > 0) {
        /* a later file of a set, opened alone: its own tensors (llama.cpp
         * loads a set from its first file; the others are valid GGUFs) */
        if (named && (no != split_no + 1 || of != count))
            return mf_fail(st, MF_ERR_FORMAT, path, -1,
                           "split.no %llu of split.count %llu but the name says %05u-of-%05u",
                           (unsigned long long)split_no, (unsigned long long)count, no, of);
        mf_model_note(m, "file %llu of a split set of %llu: its own tensors only; the first file "
                         "opens the whole set", (unsigned long long)split_no + 1,
                      (unsigned long long)count);
        return 0;
    }
    if (!named || no != 1 || of != count)
        return mf_fail(st, MF_ERR_FORMAT, path, -1,
                       "split.count is %llu but the name is not NAME-00001-of-%05llu.gguf",
                       (unsigned long long)count, (unsigned long long)count);
    for (uint64_t i = 2; i <= count; i++) {
        char *p = mf_arena_printf(m->arena, "%.*s-%05llu-of-%05llu.gguf", (int)(len - tl), path,
                                  (unsigned long long)i, (unsigned long long)count);
        uint32_t fi;
        if (!p || mf_model_add_file(m, p, &fi, st))
            return -1;
        if (parse_gguf(m, fi, false, flags, st))
            return -1;
    }
    uint64_t want = meta_uint(m, "split.tensors.count", m->n_tensors);
    if (want != m->n_tensors)
        mf_breach(st, path, -1, "split.tensors.count is %llu but the %llu files hold %zu tensors",
                  (unsigned long long)want, (unsigned long long)count, m->n_tensors);
    return 0;
}

static int open_gguf(mf_model *m, const char *path, unsigned flags, mf_status *st)
{
    uint32_t fi;
    if (mf_model_add_file(m, path, &fi, st))
        return -1;
    if (parse_gguf(m, fi, true, flags, st))
        return -1;
    return open_split_rest(m, path, flags, st);
}

/* ------------------------------------------------------------- detection */

static int probe_gguf(mf_probe *p)
{
    if (p->size < 8 || memcmp(p->b, "GGUF", 4) != 0)
        return MF_PROBE_NO;
    uint32_t le = mf_rd32le(p->b + 4), be = mf_rd32be(p->b + 4);
    if (le != 0 && le < 65536)
        return mf_probe_found(p, MF_FMT_GGUF, "GGUF v%u little-endian", le);
    if (be != 0 && be < 65536)
        return mf_probe_found(p, MF_FMT_GGUF, "GGUF v%u big-endian", be);
    return mf_probe_found(p, MF_FMT_GGUF, "GGUF, unknown version field %08x", le);
}

static const char *const gguf_extensions[] = {".gguf", NULL};

const mf_reader mf_reader_gguf = {
    .format = MF_FMT_GGUF,
    .data_only = true, /* numbers and names: loading runs nothing */
    .meta_templates = true, /* tokenizer.chat_template* (Jinja2 for Python consumers) */
    .name = "gguf",
    .extensions = gguf_extensions,
    .probe = probe_gguf,
    .open = open_gguf,
    .edit = &(const mf_edit_hooks){
        .rewrite = mf_gguf_rewrite,
        .key_type = mf_gguf_key_type,
        .check_key = mf_gguf_check_key,
    },
};
