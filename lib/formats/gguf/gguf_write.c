/* gguf_write.c - GGUF v3 little-endian writer (ggml/docs/gguf.md), laid out
 * as gguf-py's GGUFWriter does: KV pairs, tensor infos, padding to the
 * alignment, each tensor's data padded to the alignment except the last. */
#include "formats/gguf/gguf_int.h"
#include "formats/writer_common.h"

#include <stdlib.h>

typedef mf_gguf_buf wbuf;

static void put(wbuf *b, const void *d, size_t n)
{
    if (b->oom)
        return;
    if (n > b->cap - b->n) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap - b->n < n)
            cap *= 2;
        uint8_t *q = realloc(b->p, cap);
        if (!q) {
            b->oom = true;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->n, d, n);
    b->n += n;
}

static void put_u32(wbuf *b, uint32_t v) { uint8_t x[4]; mf_wr32le(x, v); put(b, x, 4); }
static void put_u64(wbuf *b, uint64_t v) { uint8_t x[8]; mf_wr64le(x, v); put(b, x, 8); }
static void put_str(wbuf *b, const char *s, size_t n) { put_u64(b, n); put(b, s, n); }

static int put_value(wbuf *b, const mf_value *v, const char *path, mf_status *st)
{
    uint8_t x[8];
    float f;
    uint32_t u;
    switch (v->type) {
    case MF_V_U8: case MF_V_I8: case MF_V_BOOL:
        x[0] = (uint8_t)(v->type == MF_V_BOOL ? v->as.b : v->as.u);
        put(b, x, 1);
        return 0;
    case MF_V_U16: case MF_V_I16: mf_wr16le(x, (uint16_t)v->as.u); put(b, x, 2); return 0;
    case MF_V_U32: case MF_V_I32: put_u32(b, (uint32_t)v->as.u); return 0;
    case MF_V_U64: case MF_V_I64: put_u64(b, v->as.u); return 0;
    case MF_V_F32:
        f = (float)v->as.f;
        memcpy(&u, &f, 4);
        put_u32(b, u);
        return 0;
    case MF_V_F64: memcpy(x, &v->as.f, 8); put(b, x, 8); return 0;
    case MF_V_STR: put_str(b, v->as.s.ptr, v->as.s.len); return 0;
    case MF_V_ARR:
        put_u32(b, (uint32_t)v->as.arr.elem);
        put_u64(b, v->as.arr.n);
        for (size_t i = 0; i < v->as.arr.n; i++) {
            if (v->as.arr.items[i].type != v->as.arr.elem)
                return mf_fail(st, MF_ERR_USAGE, path, -1, "GGUF array items must share one type");
            if (put_value(b, &v->as.arr.items[i], path, st))
                return -1;
        }
        return 0;
    default:
        return mf_fail(st, MF_ERR_USAGE, path, -1, "value type %d has no GGUF encoding", v->type);
    }
}

static uint64_t alignment_from(const mf_kv *meta, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(meta[i].key, "general.alignment") == 0 && meta[i].v.type == MF_V_U32 &&
            meta[i].v.as.u && !(meta[i].v.as.u & (meta[i].v.as.u - 1)))
            return meta[i].v.as.u;
    return 32;
}

int mf_gguf_header_build(wbuf *b, uint32_t version, const mf_kv *meta, size_t n_meta,
                         const mf_gguf_tinfo *ts, size_t n, uint64_t align, size_t *unpadded,
                         const char *path, mf_status *st)
{
    put(b, "GGUF", 4);
    put_u32(b, version);
    put_u64(b, n);
    put_u64(b, n_meta);
    for (size_t i = 0; i < n_meta; i++) {
        put_str(b, meta[i].key, strlen(meta[i].key));
        put_u32(b, (uint32_t)meta[i].v.type);
        if (put_value(b, &meta[i].v, path, st))
            return -1;
    }
    for (size_t i = 0; i < n; i++) {
        put_str(b, ts[i].name, strlen(ts[i].name));
        put_u32(b, (uint32_t)ts[i].ndim);
        for (int d = ts[i].ndim - 1; d >= 0; d--) /* ne: fastest first */
            put_u64(b, (uint64_t)ts[i].shape[d]);
        put_u32(b, (uint32_t)ts[i].ggml_type);
        put_u64(b, ts[i].rel_offset);
    }
    if (unpadded)
        *unpadded = b->n;
    static const uint8_t zeros[64] = {0};
    while (b->n % align)
        put(b, zeros, align - b->n % align > 64 ? 64 : align - b->n % align);
    return b->oom ? mf_oom(st, path) : 0;
}

/* gguf-py's layout: tensors in order, each padded to the alignment. */
static int build_header(wbuf *b, const mf_out_tensor *ts, size_t n, const uint64_t *sizes,
                        const mf_kv *meta, size_t n_meta, uint64_t align, const char *path,
                        mf_status *st)
{
    mf_gguf_tinfo *ti = calloc(n ? n : 1, sizeof(*ti));
    if (!ti)
        return mf_oom(st, path);
    uint64_t off = 0;
    for (size_t i = 0; i < n; i++) {
        ti[i] = (mf_gguf_tinfo){.name = ts[i].name, .ndim = ts[i].ndim, .shape = ts[i].shape,
                                .ggml_type = mf_dtype_info_of(ts[i].dtype)->ggml_id,
                                .rel_offset = off};
        off = mf_align_up(off + sizes[i], align);
    }
    int rc = mf_gguf_header_build(b, 3, meta, n_meta, ti, n, align, NULL, path, st);
    free(ti);
    return rc;
}

static int gguf_write(const char *path, const mf_out_tensor *ts, size_t n, const mf_kv *meta,
                      size_t n_meta, mf_fill_fn fill, void *ctx, bool pad_last, mf_status *st)
{
    MF_ST_GUARD(st);
    uint64_t *sizes = calloc(n ? n : 1, sizeof(uint64_t));
    if (!sizes)
        return mf_oom(st, path);
    for (size_t i = 0; i < n; i++) {
        const mf_dtype_info *di = mf_dtype_info_of(ts[i].dtype);
        if (!di || di->ggml_id < 0 || ts[i].ndim > 4) {
            free(sizes);
            return mf_fail(st, MF_ERR_USAGE, path, -1,
                           "tensor \"%s\": %s cannot be stored in GGUF", ts[i].name,
                           ts[i].ndim > 4 ? "more than 4 dimensions" : "this dtype");
        }
        if (mf_out_tensor_nbytes(&ts[i], path, &sizes[i], st)) {
            free(sizes);
            return -1;
        }
    }
    uint64_t align = alignment_from(meta, n_meta);
    wbuf b = {0};
    mf_atomic *w = NULL;
    int rc = build_header(&b, ts, n, sizes, meta, n_meta, align, path, st);
    if (rc == 0)
        rc = mf_atomic_open(path, &w, st);
    if (rc == 0)
        rc = mf_atomic_write(w, b.p, b.n, st);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        uint64_t padded = i + 1 < n || pad_last ? mf_align_up(sizes[i], align) : sizes[i];
        rc = mf_writer_emit(w, path, i, ts[i].name, sizes[i], padded, fill, ctx, st);
    }
    if (w) {
        if (rc == 0)
            rc = mf_atomic_commit(w, st);
        else
            mf_atomic_abort(w);
    }
    free(b.p);
    free(sizes);
    return rc;
}

/* gguf-py's layout (llama.cpp's converter): the last tensor unpadded. */
int mf_gguf_write(const char *path, const mf_out_tensor *ts, size_t n, const mf_kv *meta,
                  size_t n_meta, mf_fill_fn fill, void *ctx, mf_status *st)
{
    return gguf_write(path, ts, n, meta, n_meta, fill, ctx, false, st);
}

/* ggml's gguf writer (llama-quantize): every tensor padded, the last too. */
int mf_gguf_write_all_padded(const char *path, const mf_out_tensor *ts, size_t n, const mf_kv *meta,
                             size_t n_meta, mf_fill_fn fill, void *ctx, mf_status *st)
{
    return gguf_write(path, ts, n, meta, n_meta, fill, ctx, true, st);
}
