/* gguf2hf_int.h - what the files of the GGUF -> HF converter share. */
#ifndef MF_CONVERT_HF_INT_H
#define MF_CONVERT_HF_INT_H
#include "ops/hfconv/arch.h"
#include "ops/hfconv/gguf2hf.h"

#include <jansson.h>

typedef struct hfc_item {
    mf_out_tensor out;
    const mf_tensor *src;
    hf_rev_op op;
    int64_t x; /* R_UNSTACK: which slice; R_DOUBLE_EVERY: the power of two */
    const mf_tensor *k, *v; /* R_FUSE_GROUPED: the block's attn_k, attn_v; k: a partner */
    const conv_split *split;        /* R_CONCAT: the forward split, its parts' tensors */
    const mf_tensor *parts[8];
    size_t n_parts;
    const char *vheads;     /* OP_VHEADS undone after the op ("qkv", "rows", "heads", "cols"); NULL: none */
    const mf_model *from;   /* an mmproj tensor's file (gguf2hf_mmproj.c); NULL: the GGUF's */
} hfc_item;

/* The mmproj file of a GGUF -> HF conversion (gguf2hf_mmproj.c). */
typedef struct hfc_mm {
    mf_model *m;
    const char *path;
    bool alone;                 /* converted alone (m is the hfc's own model) */
    const conv_mmproj *row;
    const char *hf_class;
    json_t *vcfg, *global, *pre; /* vision_config, config.json's own keys, preprocessor_config.json */
    json_t *acfg;               /* the audio encoder's config ("aud:" keys; the row's audio_cfg) */
    const char *pick_token;     /* alone: OP_PICK_ROW's token, named in tokenizer_config.json */
    int64_t pick_id;
} hfc_mm;

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
    const conv_rule *rules; /* fwd's rules, or the form of them this GGUF was made by (Granite 4.0-H dense) */
    const conv_hp *hparams; /* fwd's keys, or the 2026-02 layout's (conv_archs_2026) for a GGUF of it */
    bool l2026;             /* the 2026-02 converter's keys: "@base" is conv_base_hparams_2026 */
    struct conv_arch_file *arch_file; /* opts.arch_file loaded: rev and fwd are its */
    mf_dtype quant_dtype;
    MF_VEC(hfc_item) items;
    bool special_in_config[8]; /* per hfc_special type: its id in config.json */
    bool special_in_tokcfg[8]; /* its content in tokenizer_config.json */
    const mf_tensor *cached;
    float *cache;
    hfc_mm *mm;             /* an mmproj file: alone, or the text model's (opts.mmproj) */
} hfc;

/* gguf2hf_mmproj.c: GGUF -> HF of an mmproj file */
bool g2h_mm_reversible(conv_op op);             /* has the forward op an inverse there? */
/* every rule, computed key and key block of the row reversible? else why not */
bool g2h_mm_row_reversible(const conv_mmproj *row, char *why, size_t cap);
const conv_mm_layout *g2h_mm_layout(const char *hf_class);
int hfc_mm_start(hfc *c, const char *path, bool alone); /* row, class, vision config */
int hfc_mm_plan(hfc *c);                        /* its items (after the text model's) */
int hfc_mm_write_config(hfc *c);                /* config.json (over the text's), preprocessor */
int hfc_mm_item_f32(hfc *c, const hfc_item *it, float **out, uint64_t *n_out);
void hfc_mm_free(hfc *c);

/* The special token types of gguf-py's SpecialVocab, in its order. */
typedef struct hfc_special_type {
    const char *gguf, *name, *id_key; /* "tokenizer.ggml.bos_token_id", "bos_token", "bos_token_id" */
} hfc_special_type;
enum { HFC_N_SPECIAL = 7 };
extern const hfc_special_type hfc_special[HFC_N_SPECIAL];

/* The architecture's rows found (c->m open) and the output tensors
 * planned (c->items), nothing written: what mf_convert_gguf_to_hf does
 * before it writes; the view (gguf2hf_view.c) stops there. */
int hfc_prepare(hfc *c);
/* Streams planned item i (c->items.v[i].out's bytes) to sink. */
int hfc_fill(hfc *c, size_t i, mf_sink_fn sink, void *sink_ctx, mf_status *st);

/* Is output.weight a byte copy of token_embd.weight (a tied head written twice)? */
bool hfc_output_is_copy(const hfc *c);

/* Does the forward table write this key as a constant ("=V")? */
bool hfc_fwd_constant(const hfc *c, const char *key);

const mf_value *hfc_key(const hfc *c, const char *suffix); /* "<arch>.<suffix>" */
bool hfc_int(const mf_value *v, int64_t *out);
json_t *hfc_f32_json(double v); /* the shortest decimal that reads back as the same float32 */
/* LlamaModel.permute undone over rows of cols: the GGUF's P[h][j][k] = W[h][k][j] */
void hfc_unpermute(const float *p, float *w, int64_t rows, int64_t cols, int64_t heads);
int hfc_write_json(hfc *c, const char *name, json_t *j); /* takes j */
int hfc_write_bytes(hfc *c, const char *name, const void *data, size_t n);

int hfc_write_config(hfc *c);    /* config.json, generation_config.json, README.md */
int hfc_write_tokenizer(hfc *c); /* tokenizer files */
void hfc_plan_specials(hfc *c);   /* before either: where special ids go */

/* The tokenizer.json `mfmt convert X.gguf DIR/` writes for a gpt2 or bert
 * vocabulary, for any architecture (tests use it on llama.cpp's vocab
 * GGUFs); path names the GGUF in errors. NULL with st set otherwise. */
json_t *mf_hf_tokenizer_json_of(mf_model *m, const char *path, mf_status *st);
#endif
