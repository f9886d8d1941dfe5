/* convert_st.h - any model's tensors to safetensors, streamed. */
#ifndef MF_CONVERT_ST_H
#define MF_CONVERT_ST_H
#include "core/core.h"

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

#endif
