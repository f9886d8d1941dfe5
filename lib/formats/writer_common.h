/* writer_common.h - the fill/verify loop shared by the format writers. */
#ifndef MF_WRITER_COMMON_H
#define MF_WRITER_COMMON_H
#include "core/core.h"

/* Asks `fill` for tensor i and checks it wrote exactly `nbytes`, then pads
 * with zeros up to `padded`. */
int mf_writer_emit(mf_atomic *w, const char *path, size_t i, const char *name,
                   uint64_t nbytes, uint64_t padded, mf_fill_fn fill, void *ctx,
                   mf_status *st);
/* Bytes of an output tensor; -1 with st on overflow/partial block. */
int mf_out_tensor_nbytes(const mf_out_tensor *t, const char *path, uint64_t *out,
                         mf_status *st);
#endif
