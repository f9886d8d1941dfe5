/* gguf2hf.h - GGUF -> Hugging Face model directory (config.json,
 * generation_config.json, tokenizer files, model.safetensors with the names
 * transformers loads), the inverse of hf2gguf.c. */
#ifndef MF_CONVERT_HF_H
#define MF_CONVERT_HF_H
#include "core/core.h"

/* What was done to a tensor on the way to GGUF, undone here. */
typedef enum hf_rev_op {
    R_PLAIN,         /* copied (dtype aside) */
    R_SKIP,          /* not a Hugging Face tensor (made by the converter) */
    R_UNPERMUTE_Q,   /* LlamaModel.permute(w, n_head, n_head) undone */
    R_UNPERMUTE_K,   /* LlamaModel.permute(w, n_head, n_head_kv) undone */
    R_SUB_ONE,       /* Gemma norms: the converter added 1 */
    R_LOG_NEG,       /* Mamba: A = -exp(A_log) written, A_log = log(-A) */
    R_TRANSPOSE,     /* GPT-2 Conv1D: [in, out] stored transposed */
    R_UNSTACK,       /* stacked experts (or per-head norms): one tensor per {x} */
    R_QKV_PER_HEAD,  /* GPT-NeoX: [3][n_head][hd] rows back to [n_head][3][hd] */
    R_QKV_KV_GROUPS, /* Falcon: q, k, v rows back to [kv][q_per_kv + 2][hd] */
    R_FUSE_GROUPED,  /* InternLM2: attn_q (with attn_k, attn_v of its block),
                        unpermuted, fused back into [kv][q_per_kv + 2][hd] rows */
    R_FUSED_PART,    /* attn_k / attn_v of such a block: inside the fused one */
    R_JOIN_UP,       /* Jina-BERT: ffn_gate with its block's ffn_up after it, back into
                        the one gated_layers tensor (ffn_up: R_FUSED_PART) */
    R_UP_GATED,      /* T5's ffn_up: hf "a|b", a (wi_1) when the block has an ffn_gate
                        (gated-gelu), else b (wi); copied */
    R_OUT_LINEAR,    /* DeciLM's attn_output: hf "a|b", a when the block has an attn_q, else b
                        (Nemotron-NAS's linear-attention layer: self_attn.linear_attn); copied */
    R_UNTERNARY,     /* BitNet: values {-s, 0, s} (the latent weights are gone) written as
                        +-s / (the share of non-zeros), in F32, so that ternarising them
                        again gives s back */
    R_PAD_ROWS,      /* RoBERTa: padding_token_id + 1 zero rows put back in front (the
                        converter cut them; their values are not in the GGUF) */
    R_UNVIEW_EXPERTS,   /* DBRX: [E][ff][embd] back to [E * ff, embd], named without ".weight" */
    R_UNVIEW_EXPERTS_T, /* the same from [E][embd][ff], each expert transposed back */
    R_UNSQUEEZE1,    /* LFM2's short convolution: [d, L] back to [d, 1, L] */
    R_FLAT,          /* back to 1-D (Mamba-2's D [n, 1] and ssm_norm [g, n / g]) */
    R_LOG_NEG_FLAT,  /* R_LOG_NEG, then 1-D (Mamba-2's A [n, 1]) */
    R_LEAD11,        /* a squeezed vector [n] back to [1, 1, n] (RWKV6's time_decay, time_maa_*) */
    R_DOUBLE_EVERY,  /* times 2 ** (block // rescale_every_n_layers): RWKV6's division undone */
    R_MXFP4_UNPACK,  /* gpt-oss experts: a ggml MXFP4 .weight back to hf + "_blocks"
                        (uint8 [E, rows, nb, 16]) and hf + "_scales" (uint8 e8m0
                        [E, rows, nb]), its .bias to hf + "_bias" */
    R_INTERLEAVE,    /* with its partner (the next row, R_FUSED_PART): rows (an MXFP4
                        .weight, then unpacked as above) or a .bias's last dimension
                        interleaved back into one (gpt-oss's gate_up_proj) */
    R_QKVZ,          /* Qwen3-Next: attn_qkv with its partner attn_gate (next row) back
                        into in_proj_qkvz's per-key-head [q, k, v, z] rows */
    R_FUSE_ROWS,     /* with its partner (next row): dimension -2 concatenated back
                        (Qwen3.5-MoE's experts gate_up_proj) */
    R_JOIN_KV_B,     /* MLA attn_k_b [kv][r][nope] with its partner attn_v_b [kv][v][r]
                        (next row) back into kv_b_proj [kv * (nope + v)][r]: per head
                        k_b transposed, then v_b (OP_SPLIT_KV_B undone, 2026-02 layout) */
    R_EXPERTS_T,     /* Llama 4: [E, a, b] experts transposed back to [E, b, a] */
    R_GATE_UP_T,     /* Llama 4: ffn_gate_exps and the block's ffn_up_exps [E, ff, h] transposed
                        and joined into gate_up_proj [E, h, 2 ff] (up_exps: R_FUSED_PART) */
    R_TIED,          /* output: dropped when equal to token_embd (the converter
                        wrote the tied head again), else as R_PLAIN */
    R_HEAD_DEINTERLEAVE, /* OP_HEAD0_INTERLEAVE undone on every row (the heads other than
                        the first are gone: each comes back as the first) */
    R_SWAP_ROW_GROUPS, /* OP_SWAP_ROW_GROUPS undone ([B][A][rest] back to [A][B][rest]; A, B
                        from the forward rule of the arch file) */
    R_SWAP_COL_GROUPS, /* OP_SWAP_COL_GROUPS undone */
    R_CONCAT,        /* the first part of a forward OP_SPLIT: its parts (the
                        conv_split of the forward rule; the others R_FUSED_PART),
                        each unpermuted as its op says, joined along the rows */
    R_TRANSPOSE_RKVWG, /* RWKV6-Qwen2's time_mix_w1: R_TRANSPOSE, then the 5 column groups back
                        in r k v w g order (groups 0 and 3 swapped) */
    R_EXPERTS_T_RKVWG, /* its time_mix_w2: R_EXPERTS_T, then the 5 matrices the same way */
    R_STACK_DIM,     /* mmproj: OP_UNSTACK's entries (the item's parts) stacked back at dimension x */
    R_QK_UNROPE,     /* mmproj: OP_QK_SPLIT_ROPE undone on a fused [q; k; v] (Kimi-K2.5's wqkv):
                        each q and k head's rows [2][d/4][2] back to [d/4][2][2]; x the head count */
    R_ROW_AT,        /* mmproj alone: OP_PICK_ROW's vector as row x of zero rows (a stand-in
                        text embedding) */
} hf_rev_op;

/* Linear-attention V heads re-ordered by the forward converter (OP_VHEADS),
 * per architecture and GGUF name: `where` as the forward rule's; the
 * inverse order is applied after the row's own op. */
typedef struct hf_rev_vheads {
    const char *arch, *gguf, *where;
} hf_rev_vheads;
extern const hf_rev_vheads hf_rev_vheads_rows[];
extern const size_t hf_rev_n_vheads;

typedef struct hf_rev_name {
    const char *gguf; /* without .weight/.bias; "{bid}" is the block */
    const char *hf;   /* "{bid}" the block, "{x}" the expert (R_UNSTACK) */
    hf_rev_op op;
} hf_rev_name;

typedef struct hf_rev_arch {
    const char *arch;       /* general.architecture */
    const char *hf_class;   /* config.json architectures[0] */
    const char *model_type; /* config.json model_type */
    const hf_rev_name *names; /* terminated by gguf == NULL */
} hf_rev_arch;

extern const hf_rev_arch hf_rev_archs[];
extern const size_t hf_rev_n_archs;
extern const hf_rev_arch hf_rev_falcon_new; /* Falcon with new_decoder_architecture */

/* Classes that share a GGUF architecture with hf_rev_archs' class (RoBERTa
 * and XLM-RoBERTa write "bert"): taken, before it, when `when` says the
 * GGUF is theirs (first that fits). */
typedef struct hf_rev_variant {
    bool (*when)(const mf_model *m);
    hf_rev_arch rev;
} hf_rev_variant;
extern const hf_rev_variant hf_rev_variants[];
extern const size_t hf_rev_n_variants;

/* The public options (mfmt/convert.h); the internal entry below reads
 * them as given (struct_size unchecked). */
typedef mf_convert_hf_opts mf_hf_out_opts;

/* Writes the GGUF `in` as the Hugging Face directory `out` (absent or
 * empty; made beside it and renamed into place). */
int mf_convert_gguf_to_hf(const char *in, const char *out, const mf_hf_out_opts *o,
                          mf_status *st);
#endif
