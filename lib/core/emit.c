/* emit.c - chunked canonical-byte emitter. */
#include "core/emit.h"

#include <stdlib.h>

mf_emit *mf_emit_new(mf_sink_fn sink, void *ctx, mf_status *st)
{
    mf_emit *e = malloc(sizeof(*e));
    if (!e) {
        mf_oom(st, NULL);
        return NULL;
    }
    e->sink = sink;
    e->ctx = ctx;
    e->st = st;
    e->total = 0;
    e->n = 0;
    return e;
}

static int flush(mf_emit *e)
{
    if (e->n == 0)
        return 0;
    size_t n = e->n;
    e->n = 0;
    return e->sink(e->ctx, e->buf, n, e->st);
}

int mf_emit_put(mf_emit *e, const void *p, size_t n)
{
    const uint8_t *s = p;
    e->total += n;
    while (n > 0) {
        if (e->n == MF_EMIT_CHUNK && flush(e))
            return -1;
        size_t k = MF_EMIT_CHUNK - e->n < n ? MF_EMIT_CHUNK - e->n : n;
        memcpy(e->buf + e->n, s, k);
        e->n += k;
        s += k;
        n -= k;
    }
    return 0;
}

int mf_emit_u64le(mf_emit *e, uint64_t v, unsigned width)
{
    uint8_t b[8];
    mf_wr64le(b, v);
    return mf_emit_put(e, b, width > 8 ? 8 : width);
}

int mf_emit_zeros(mf_emit *e, uint64_t n)
{
    static const uint8_t z[256];
    while (n > 0) {
        size_t k = n < sizeof(z) ? (size_t)n : sizeof(z);
        if (mf_emit_put(e, z, k))
            return -1;
        n -= k;
    }
    return 0;
}

int mf_emit_finish(mf_emit *e, int rc)
{
    if (rc == 0)
        rc = flush(e);
    free(e);
    return rc;
}

int mf_emit_string(mf_emit *e, const uint8_t *s, uint64_t n)
{
    if (mf_emit_u64le(e, n, 8))
        return -1;
    return n ? mf_emit_put(e, s, (size_t)n) : 0;
}
