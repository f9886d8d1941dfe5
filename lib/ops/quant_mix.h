/* quant_mix.h - which ggml type each tensor of a model gets in a
 * llama-quantize mix (Q4_K_M, Q3_K_S, IQ4_XS, ...).
 *
 * The rules are those of llama.cpp's llama_tensor_get_type and
 * llama_model_quantize_impl (src/llama-quant.cpp) at commit c392e509
 * (b4747), rewritten from their description:
 *  - a tensor is quantized when its name ends in "weight", it has at least
 *    two dimensions (ggml_n_dims: trailing 1s do not count), it is not a
 *    norm, a MoE router, a position/token-type embedding, or one of the few
 *    small RNN/relative-bias tensors; everything else is copied as it is;
 *  - the mix picks a higher type for some tensors: output.weight,
 *    token_embd.weight, attn_v, attn_k, attn_q, attn_output, attn_qkv,
 *    ffn_down, ffn_gate, ffn_up, by layer index and layer count;
 *  - rows whose length is not a multiple of the chosen block size fall back
 *    to a type with 32-element blocks (or F16).
 * Some rules depend on a running count of the tensors seen so far (attn_v's
 * index, ffn_down's index), so tensors must be visited in llama-quantize's
 * order: mf_qmix_name_cmp. */
#ifndef MF_QUANT_MIX_H
#define MF_QUANT_MIX_H
#include "core/core.h"

/* What the rules need to know of the model (from its GGUF metadata). */
typedef struct mf_qmix_hparams {
    const char *arch;   /* general.architecture ("llama", "falcon", ...) */
    int n_layer;        /* <arch>.block_count */
    int n_head;         /* <arch>.attention.head_count (layer 0) */
    int n_head_kv;      /* <arch>.attention.head_count_kv (layer 0) */
    int n_expert;       /* <arch>.expert_count (0: none) */
} mf_qmix_hparams;

/* Reads mf_qmix_hparams from a model's metadata (missing keys give 0;
 * head_count_kv defaults to head_count, as llama.cpp does). */
void mf_qmix_hparams_from_model(const mf_model *m, mf_qmix_hparams *h);

typedef struct mf_qmix_params {
    mf_ftype ftype;
    bool pure;            /* --pure: every quantized tensor gets the base type */
    bool leave_output;    /* --leave-output-tensor */
    bool has_imatrix;     /* --imatrix given */
    mf_dtype output_type; /* --output-tensor-type, MF_DTYPE_INVALID: unset */
    mf_dtype token_embd_type; /* --token-embedding-type, likewise */
    mf_mix_rules rules;   /* whose type choices (mfmt/quantize.h) */
} mf_qmix_params;

void mf_qmix_params_init(mf_qmix_params *p, mf_ftype ftype);

/* The running state of one pass over a model's tensors. */
typedef struct mf_qmix {
    mf_qmix_params p;
    mf_qmix_hparams h;
    bool has_output;      /* the model has output.weight */
    int n_attention_wv;   /* attn_v / attn_qkv / attn_kv_b tensors */
    int i_attention_wv, i_ffn_down, i_ffn_gate, i_ffn_up;
    int n_k_quantized, n_fallback;
} mf_qmix;

void mf_qmix_init(mf_qmix *q, const mf_qmix_params *p, const mf_qmix_hparams *h);
/* First pass: every tensor name of the model, in any order. */
void mf_qmix_count(mf_qmix *q, const char *name);

/* llama-quantize's tensor order: tensors outside blk.N first, then by layer
 * number, then by name (strcmp). A qsort-style comparison. */
int mf_qmix_name_cmp(const char *a, const char *b);

/* The layer number in "blk.N....", or -1. */
int mf_qmix_layer_of(const char *name);

/* ggml_n_dims of a shape given in ggml order (ne[0] fastest): the index of
 * the last dimension that is not 1, plus one. */
int mf_qmix_n_dims(const int64_t ne[4]);

/* Second pass, in mf_qmix_name_cmp order: the type tensor `name` (ggml shape
 * ne, stored as src) is written in. Equal to src when it is copied as is.
 * *fallback is set when the rows did not fit the chosen type's blocks.
 * Returns MF_DTYPE_INVALID with st filled when llama-quantize would stop
 * (a MoE tensor without a valid layer number, a row length with no
 * fallback type). */
mf_dtype mf_qmix_choose(mf_qmix *q, const char *name, const int64_t ne[4], mf_dtype src,
                        bool *fallback, mf_status *st);

#endif /* MF_QUANT_MIX_H */
