/* formats.h - what the formats layer offers the layers above it and its own
 * directory readers: the reader registry and the open path. (lib/core never
 * includes this: arrows point down.) */
#ifndef MF_FORMATS_H
#define MF_FORMATS_H
#include "core/core.h"

/* The reader registered for f (registry.c); NULL: none. */
const mf_reader *mf_reader_for(mf_format f);

/* Opens `path` as a model of its own and lists its tensors in `m` too (with
 * owner = the child, which m keeps open until mf_close(m)); its notes are
 * copied. A directory reader uses it for the weights files it chooses.
 * Returns the child (NULL on failure, st filled). */
mf_model *mf_model_open_child(mf_model *m, const char *path, unsigned flags,
                              mf_status *st);
/* mf_gguf_write with ggml's layout (llama-quantize's output): the last
 * tensor padded to the alignment as well. */
int mf_gguf_write_all_padded(const char *path, const mf_out_tensor *ts, size_t n, const mf_kv *meta,
                             size_t n_meta, mf_fill_fn fill, void *ctx, mf_status *st);

#endif
