/* convert_st.h - any model's tensors to safetensors, streamed. */
#ifndef MF_CONVERT_ST_H
#define MF_CONVERT_ST_H
#include "core/core.h"

typedef void (*mf_progress_fn)(void *ctx, uint64_t done, uint64_t total);

typedef struct mf_convert_st_opts {
    const char *key;          /* write the tensors under this path ("state_dict") */
    uint64_t max_shard_size;  /* bytes per shard; 0: one file */
    bool include_optimizer;   /* keep optimizer state of a checkpoint */
    mf_progress_fn progress;
    void *progress_ctx;
} mf_convert_st_opts;

/* One tensor to write: its source and its name in the output. */
typedef struct mf_convert_item {
    const mf_tensor *t;
    const char *name;
} mf_convert_item;

/* The tensors convert writes, in order, with their output names: a
 * checkpoint's state_dict / model / module mapping unwrapped as loaders do
 * (sd.get("state_dict", sd)), or the --key sub-object; optimizer state left
 * out unless asked for. Names live in `a`. */
int mf_convert_select(const mf_model *m, const mf_convert_st_opts *o, mf_arena *a,
                      mf_convert_item **items, size_t *n, mf_status *st);

/* Writes them to `out` (atomically), or with max_shard_size to
 * PREFIX-0000i-of-0000N.safetensors + OUT.index.json as Hugging Face does
 * (PREFIX: out without ".safetensors"). Every tensor contiguous, C order,
 * bit-identical to its canonical bytes; __metadata__ {"format": "pt"}.
 * Refuses to write over any file the model reads. */
int mf_convert_to_safetensors(const mf_model *m, const char *out, const mf_convert_st_opts *o,
                              mf_status *st);

#endif
