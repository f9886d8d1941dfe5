/* convert_hf_int.h - what the files of the GGUF -> HF converter share. */
#ifndef MF_CONVERT_HF_INT_H
#define MF_CONVERT_HF_INT_H
#include "ops/convert_arch.h"
#include "ops/convert_hf.h"

#include <jansson.h>

typedef struct hfc_item {
    mf_out_tensor out;
    const mf_tensor *src;
    hf_rev_op op;
    int64_t x; /* R_UNSTACK: which slice */
} hfc_item;

typedef struct hfc {
    const char *path, *out;
    char *tmp_dir, *final_dir;
    mf_model *m;
    mf_status *st;
    mf_arena *a;
    mf_hf_out_opts opts;
    const char *arch, *hf_class, *model_type;
    const hf_rev_arch *rev;
    const conv_arch *fwd;
    mf_dtype quant_dtype;
    MF_VEC(hfc_item) items;
    const mf_tensor *cached;
    float *cache;
} hfc;

const mf_value *hfc_key(const hfc *c, const char *suffix); /* "<arch>.<suffix>" */
bool hfc_int(const mf_value *v, int64_t *out);
int hfc_write_json(hfc *c, const char *name, json_t *j); /* takes j */
int hfc_write_bytes(hfc *c, const char *name, const void *data, size_t n);

int hfc_write_config(hfc *c);    /* config.json, generation_config.json, README.md */
int hfc_write_tokenizer(hfc *c); /* tokenizer files */
#endif
