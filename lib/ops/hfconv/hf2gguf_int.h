/* hf2gguf_int.h - what the files of the HF -> GGUF converter share: the
 * output tensors (a list of source rows, a row map, an element-wise op), the
 * conversion's state, and the helpers more than one step uses.
 *   hf2gguf.c         the driver: config, output type, the quantize mix,
 *                     mf_convert_to_gguf;
 *   hf2gguf_parts.c   the weight files (parts) and the index;
 *   hf2gguf_plan.c    the tensor plan: names, rules, types, row maps;
 *   hf2gguf_meta.c    the hyper-parameter keys (and config.json values);
 *   hf2gguf_stream.c  the tensors' bytes, streamed into the GGUF writer;
 *   hf2gguf_vocab.c, hf2gguf_general.c  the tokenizer and general.* keys. */
#ifndef MF_HF2GGUF_INT_H
#define MF_HF2GGUF_INT_H
#include "formats/formats.h"
#include "ops/hfconv/arch.h"
#include "ops/tensor_f32.h"

/* ------------------------------------------------------------ tensors */

typedef struct seg {
    const mf_model *part;
    const mf_tensor *t;
} seg;

typedef struct out_tensor {
    char *name;
    mf_dtype dtype;              /* written */
    mf_dtype plan;               /* the type of the plain conversion (before a mix) */
    int ndim;
    int64_t shape[MF_MAX_DIMS];  /* C order */
    seg *segs;                   /* sources, read as one sequence of rows */
    size_t n_segs;
    int64_t row_len;             /* elements per row */
    int64_t *row_map;            /* output row -> source row; NULL: the same */
    bool transpose;              /* a 2-d source read column by column */
    /* transposed, per block of row_len source rows (row_map lists them, else
     * consecutive): t_cols columns from t_col0 (0: all), one output row each */
    int64_t t_cols, t_col0;
    conv_op ew;                  /* OP_ADD_ONE, OP_NEG_EXP, OP_TERNARY, OP_SCALE, or OP_SKIP for none */
    float scale;                 /* OP_SCALE's factor (a Python float as torch casts it) */
    float *row_scale;            /* per output row, a second factor applied after (a second
                                    OP_SCALE, OP_SCALE_ROWS); NULL: none */
    float *generated;            /* values of a generated tensor */
    bool mxfp4;                  /* OP_MXFP4: segs[0] blocks, segs[1] scales, rows of
                                    row_len values picked by row_map */
    int64_t *col_map;            /* output column -> source column within a row; NULL: same */
    bool vocab_rows;             /* OP_VOCAB_ROWS: rows past the token count cut (h2g_cut_vocab_rows) */
    int64_t *out_perm;           /* output row -> the row the plain plan would put there (OP_RKVWG);
                                    NULL: the same */
} out_tensor;

/* Parts of a stacked tensor collected per block (OP_STACK). */
typedef struct pending {
    const conv_rule *rule;
    int64_t bid;
    char **names;
    seg *segs;
    size_t n, cap;
} pending;

typedef struct conv {
    const char *dir;
    json_t *cfg;                 /* hparams as the class reads them */
    const conv_arch *arch;
    struct conv_arch_file *arch_file; /* opts.arch_file loaded; c->arch is its row */
    const conv_name_row *names;  /* the name rows: conv_names, or the arch file's */
    size_t n_names;
    int name_arch;               /* the architecture's bit of conv_names (conv_name_in_arch);
                                    -1: every row (an arch file's or the mmproj rows) */
    int ftype;                   /* general.file_type */
    mf_dtype qtype;              /* the output type of quantizable tensors */
    bool auto_type;
    mf_ftype mix;                /* a llama-quantize mix (Q4_K_M...), or MF_FTYPE_INVALID */
    int64_t block_count;
    mf_model **parts;
    size_t n_parts;
    mf_model *stored;            /* a pre-quantized directory; parts[0] is its logical view */
    bool borrowed;               /* parts[0] is the caller's opts.weights (not closed) */
    bool safetensors;
    bool mistral;                /* Mistral's format: params.json, consolidated*.safetensors */
    out_tensor *out;
    size_t n_out, cap_out;
    pending *pend;
    size_t n_pend, cap_pend;
    const char *first_of_seen[8]; /* OP_FIRST_OF groups already met */
    struct bn_fold *bn;          /* OP_BN_FOLD: the BatchNorm tensors collected per block */
    size_t n_bn;
    size_t n_first_of_seen;
    double max_alibi_bias;       /* AF_ALIBI_BIAS: 8.0, or from the slopes tensor */
    mf_kvlist *kv;
    mf_convert_gguf_opts opts;   /* the caller's, over the defaults */
    bool l2026;                  /* the 2026-02 converter's layout (opts.layout or AF_ONLY_2026) */
    const conv_rule *rules;      /* the architecture's, for the layout */
    const conv_hp *hparams;
    json_t *rope;                /* l2026: TextModel.rope_parameters, mirrored (hf2gguf_meta.c) */
    const conv_mmproj *mm;       /* --mmproj: the class's row; cfg is then its vision config */
    json_t *global;              /* mm: the whole config.json (MmprojModel.global_config) */
    json_t *pre;                 /* mm: preprocessor_config.json + processor_config.json */
    json_t *audio;               /* mm: the audio encoder's config ("aud:k"; NULL: none) */
    int64_t pick_id;             /* mm: OP_PICK_ROW's row (a token id; <= 0: none) */
    uint64_t done, total_bytes;
    mf_status *st;
} conv;

/* hf2gguf_parts.c */
int h2g_open_parts(conv *c);
/* How many files of dir start with prefix and end with suffix. */
int h2g_count_parts(const char *dir, const char *prefix, const char *suffix, size_t *n, mf_status *st);
const mf_tensor **h2g_part_order(const conv *c, const mf_model *m, mf_status *st);
int h2g_check_index(conv *c);
bool h2g_match_pattern(const char *pat, const char *name, size_t name_len, int64_t n_blocks, int64_t *bid);

/* hf2gguf_plan.c */
void h2g_free_out(out_tensor *o);
int64_t h2g_numel(const int64_t *shape, int ndim);
int h2g_need_hp_int(const conv *c, const char *key, int64_t *out);
int h2g_plan_tensors(conv *c);

/* hf2gguf_meta.c */
json_t *h2g_hparam(const conv *c, const char *key);
json_t *h2g_json_path(json_t *root, const char *key);
void h2g_free_bn(conv *c); /* OP_BN_FOLD's collected tensors */
/* a key list's value ("a|b", "4*a", "a||=V", "^k", "pre:k"): a new reference or NULL */
json_t *h2g_lookup(conv *c, const char *src);
json_t *h2g_find_hparam(const conv *c, const char *const *keys);
int h2g_need_int(const conv *c, json_t *v, const char *what, int64_t *out);
int h2g_head_counts(const conv *c, int64_t *n_head, int64_t *n_kv);
/* the heads q/k of block bid are permuted with (AF_LAYER_HEADS: DeciLM's
 * per-layer counts; bid -1: the model's) */
int h2g_layer_heads(const conv *c, int64_t bid, int64_t *n_head, int64_t *n_kv);
int h2g_build_metadata(conv *c, mf_hf_meta_in *in);
int h2g_cut_vocab_rows(conv *c); /* OP_VOCAB_ROWS, before the parameter count */
int h2g_per_layer_config(conv *c);
json_t *h2g_rope_params(conv *c); /* 2026: TextModel.rope_parameters (borrowed) */

/* hf2gguf_mmproj.c */
int h2g_mmproj_setup(conv *c);
mf_dtype h2g_mmproj_type(const conv *c, const out_tensor *o);
int h2g_token_id(conv *c, const char *token, int64_t *id);

/* hf2gguf_stream.c */
/* mf_gguf_write's tensor source: output tensor `index` into the sink */
int h2g_fill_tensor(void *ctx, size_t index, mf_sink_fn sink, void *sink_ctx, mf_status *st);
/* does source tensor t hold the values of output tensor a? (a tied head) */
bool h2g_same_values(const conv *c, const out_tensor *a, const mf_model *part, const mf_tensor *t);
#endif
