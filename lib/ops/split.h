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
    /* optional: a caller's progress, fed cumulative bytes after each tensor */
    mf_progress_fn progress;
    void *progress_user;
    uint64_t *done, total;
} mf_model_fill;
int mf_model_fill_fn(void *ctx, size_t index, mf_sink_fn sink, void *sink_ctx, mf_status *st);
/* Output descriptor of a model tensor. */
void mf_out_from_tensor(const mf_tensor *t, mf_out_tensor *o);

#endif
