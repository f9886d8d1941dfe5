/* split.h - GGUF split sets (llama-gguf-split's layout) and merging shard
 * sets back into one file. */
#ifndef MF_SPLIT_H
#define MF_SPLIT_H
#include "core/core.h"

/* Fill callback that streams tensor i of an open model (ctx: the model,
 * tensor indices remapped through `map` when not NULL). */
typedef struct mf_model_fill {
    const mf_model *m;
    const size_t *map; /* output index -> m->tensors index */
} mf_model_fill;
int mf_model_fill_fn(void *ctx, size_t index, mf_sink_fn sink, void *sink_ctx, mf_status *st);
/* Output descriptor of a model tensor. */
void mf_out_from_tensor(const mf_tensor *t, mf_out_tensor *o);

/* Writes `m` (any format with ggml-storable dtypes) as a GGUF split set
 * PREFIX-0000i-of-0000n.gguf: at most max_tensors tensors (0: no limit) and
 * about max_bytes of tensor data (0: no limit) per file. The first file has
 * every key plus split.no/split.count/split.tensors.count; the others only
 * the split.* keys (as llama-gguf-split writes them). */
int mf_gguf_split(const mf_model *m, const char *prefix, uint64_t max_tensors,
                  uint64_t max_bytes, size_t *n_files, mf_status *st);

/* Writes all tensors of an opened set (GGUF split set, sharded safetensors)
 * into one file of the same kind: `out` ending in .gguf or .safetensors. */
int mf_merge_to(const mf_model *m, const char *out, mf_status *st);
#endif
