/* gguf_fixture.h - small GGUF files for the quantize/dequantize tests,
 * written with the project's own GGUF writer. */
#ifndef MF_GGUF_FIXTURE_H
#define MF_GGUF_FIXTURE_H
#include "core/core.h"

#include <stdlib.h>

typedef struct fx_tensor {
    const char *name;
    mf_dtype dt;
    int ndim;
    int64_t shape[4]; /* C order */
    const void *data; /* canonical bytes */
    size_t nbytes;
} fx_tensor;

static int fx_fill(void *ctx, size_t i, mf_sink_fn sink, void *sink_ctx, mf_status *st)
{
    const fx_tensor *t = &((const fx_tensor *)ctx)[i];
    return sink(sink_ctx, t->data, t->nbytes, st);
}

static inline int fx_write_gguf(const char *path, const fx_tensor *ts, size_t n, const mf_kv *meta,
                                size_t n_meta, mf_status *st)
{
    mf_out_tensor *outs = calloc(n ? n : 1, sizeof(*outs));
    if (!outs)
        return -1;
    for (size_t i = 0; i < n; i++) {
        outs[i].name = ts[i].name;
        outs[i].dtype = ts[i].dt;
        outs[i].ndim = ts[i].ndim;
        memcpy(outs[i].shape, ts[i].shape, sizeof(ts[i].shape));
    }
    int rc = mf_gguf_write(path, outs, n, meta, n_meta, fx_fill, (void *)ts, st);
    free(outs);
    return rc;
}

static inline mf_kv fx_kv_u32(const char *key, uint32_t v)
{
    mf_kv kv = {key, mf_value_uint(v), 0};
    kv.v.type = MF_V_U32;
    return kv;
}

static inline mf_kv fx_kv_str(const char *key, const char *s)
{
    mf_kv kv = {key, {MF_V_STR, {0}}, 0};
    kv.v.as.s.ptr = s;
    kv.v.as.s.len = strlen(s);
    return kv;
}

/* Deterministic values: a small xorshift stream, roughly N(0, scale). */
static inline float fx_rand(uint64_t *s, float scale)
{
    float acc = 0;
    for (int k = 0; k < 4; k++) {
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        acc += (float)((*s >> 40) & 0xffffff) / 16777216.0f - 0.5f;
    }
    return acc * 1.7320508f * scale;
}
#endif
