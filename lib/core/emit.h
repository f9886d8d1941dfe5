/* emit.h - gathers small pieces of canonical tensor bytes into chunks for a
 * sink (readers whose tensors are decoded element by element: ONNX typed
 * fields, TensorFlow typed values, STRING tensors). */
#ifndef MF_EMIT_H
#define MF_EMIT_H
#include "core/core.h"

enum { MF_EMIT_CHUNK = 1 << 16 };

typedef struct mf_emit {
    mf_sink_fn sink;
    void *ctx;
    mf_status *st;
    uint64_t total; /* bytes put so far */
    size_t n;
    uint8_t buf[MF_EMIT_CHUNK];
} mf_emit;

/* Heap-allocated (the buffer is too big for small stacks); NULL on OOM. */
mf_emit *mf_emit_new(mf_sink_fn sink, void *ctx, mf_status *st);
int mf_emit_put(mf_emit *e, const void *p, size_t n);
int mf_emit_u64le(mf_emit *e, uint64_t v, unsigned width); /* low `width` bytes */
int mf_emit_zeros(mf_emit *e, uint64_t n);
/* Flushes what is left and frees e (also on error: returns -1 then). */
int mf_emit_finish(mf_emit *e, int rc);

/* The canonical bytes of one STRING element: its length as 8 little-endian
 * bytes, then the bytes (mfmt's convention: strings have no fixed width). */
int mf_emit_string(mf_emit *e, const uint8_t *s, uint64_t n);
#endif
