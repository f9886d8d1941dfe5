/* arch.h - what llama.cpp's convert_hf_to_gguf.py (c392e509) does
 * per architecture, as data read by the one converter in hf2gguf.c:
 *  - the HF classes it takes and the GGUF architecture it writes;
 *  - tensor rules (the architecture's modify_tensors): renames, skips,
 *    Q/K permutation, +1 on norms, -exp(A_log), transposes, fused qkv
 *    re-orders and splits, row splits (OP_SPLIT: a conv_split), scales,
 *    stacking of experts or per-head norms;
 *  - hyper-parameter keys in the order set_gguf_parameters writes them;
 *  - the tokenizer kind (set_vocab) and the BPE pre-tokenizer names.
 * Adding an architecture: a row in conv_archs[] (arch_table.c), its name
 * in conv_arch_bit and in the named tensor sets of arch_names.inc (rows
 * only for HF names of its own), a computed value as a conv_calc (both
 * directions) if it needs one, its GGUF -> HF names (gguf2hf_arch.c), its
 * llama.cpp load rule (llama_load.c), and a test directory;
 * tests/test_hfconv_tables.c checks that the directions agree. */
#ifndef MF_CONVERT_ARCH_H
#define MF_CONVERT_ARCH_H
#include "ops/hfconv/hfconv.h"

/* The architectures of arch_names.inc, by name. */
enum conv_arch_bit {
    AB_LLAMA, AB_QWEN2, AB_QWEN3, AB_GEMMA, AB_GEMMA2, AB_PHI3, AB_PHI2, AB_QWEN2MOE,
    AB_DEEPSEEK2, AB_STARCODER2, AB_GPT2, AB_STABLELM, AB_OLMO2, AB_GRANITE, AB_COMMAND_R,
    AB_INTERNLM2, AB_BERT, AB_GPTNEOX, AB_FALCON, AB_MAMBA, AB_OLMO, AB_ORION, AB_NEMOTRON, AB_COHERE2,
    AB_BLOOM, AB_MPT, AB_DBRX, AB_NOMIC_BERT, AB_JINA_BERT_V2, AB_T5, AB_T5ENCODER, AB_BITNET,
    /* families only the 2026-02 converter has (SmolLM3, Ministral 3: AB_LLAMA's names) */
    AB_QWEN3MOE, AB_GEMMA3, AB_HUNYUAN_DENSE, AB_GLM4MOE, AB_ERNIE45MOE, AB_LLAMA4,
    AB_QWEN2VL, AB_OLMOE, AB_PHIMOE, AB_DEEPSEEK, AB_MINICPM, AB_EXAONE, AB_XVERSE, AB_STARCODER,
    AB_GRANITE_MOE, AB_BAICHUAN, AB_REFACT, AB_CODESHELL, AB_MINICPM3, AB_JAIS, AB_OPENELM,
    AB_GPT_OSS, AB_LFM2, AB_QWEN3NEXT, AB_QWEN35, AB_QWEN35MOE,
    AB_GRANITE_HYBRID, AB_FALCON_H1, AB_RWKV6, AB_RWKV6QWEN2, AB_DECI,
    AB_COUNT
};
/* A set of architectures is CONV_ARCH_WORDS words of 64 bits. The sets of
 * arch_names.inc are written once, with ARCH(X) and ALL_ARCHS, and read
 * once per word: ARCH and ALL_ARCHS give word CONV_W (arch_table.c). */
#define CONV_ARCH_WORDS 2
_Static_assert(AB_COUNT <= 64 * CONV_ARCH_WORDS, "conv_name_archs holds one bit per architecture");
#define ARCH(x) ((AB_##x) / 64 == CONV_W ? 1ull << ((AB_##x) % 64) : 0ull)
#define ALL_ARCHS                                                                              \
    (CONV_W < AB_COUNT / 64 ? ~0ull : CONV_W == AB_COUNT / 64 ? (1ull << (AB_COUNT % 64)) - 1 : 0ull)

typedef struct conv_name_row {
    const char *hf, *gguf;
} conv_name_row;
extern const conv_name_row conv_names[];
extern const size_t conv_n_names;
/* word w of row i's set: conv_name_archs[w][i] */
extern const uint64_t *const conv_name_archs[CONV_ARCH_WORDS];
/* row i of conv_names is in architecture `bit`'s map */
static inline bool conv_name_in_arch(size_t i, int bit)
{
    return (conv_name_archs[bit / 64][i] >> (bit % 64)) & 1;
}

/* M_LAYER_BEYOND: pat followed by a block number >= the block count;
 * M_PATTERN: an arch file's name, "{bid}"/"{x}" for numbers, with or
 * without .weight/.bias (conv_pattern_match, arch_file.h). */
typedef enum conv_match { M_SUFFIX, M_EXACT, M_CONTAINS, M_PREFIX, M_LAYER_BEYOND, M_PATTERN } conv_match;

typedef enum conv_op {
    OP_RENAME,        /* the matched part replaced by `with` (M_PREFIX, M_SUFFIX, M_CONTAINS) */
    OP_SKIP,          /* not written */
    OP_PERMUTE_Q,     /* LlamaModel.permute(w, n_head, n_head) */
    OP_PERMUTE_K,     /* LlamaModel.permute(w, n_head, n_head_kv) */
    OP_ADD_ONE,       /* w + 1 (Gemma norms: checkpoints hold w - 1) */
    OP_NEG_EXP,       /* -exp(w) (Mamba A_log -> A) */
    OP_TERNARY,       /* BitnetModel.weight_quant: s = mean|w| (min 1e-5) over the tensor,
                         round(w / s) clamped to -1..1, times s, in the source's dtype */
    OP_TRANSPOSE,     /* w.T (GPT-2 Conv1D) */
    OP_ALSO_OUTPUT,   /* written once more as output.weight (GPT-2's tied head) */
    OP_ALSO_OUTPUT_UNTIED, /* the same, when no lm_head.weight / output.weight exists (CodeShell, BLOOM) */
    OP_DROP_IF_EMBD,  /* output.weight equal to token_embd.weight: omitted (Mamba) */
    OP_STACK,         /* per block, parts stacked along a new first dimension */
    OP_QKV_GROUPED,   /* [groups][q_per_kv + 2][hd] rows split to q, k, v; q, k permuted (InternLM2) */
    OP_QKV_PER_HEAD,  /* [n_head][3][hd] rows re-ordered to [3][n_head][hd] (GPT-NeoX) */
    OP_QKV_KV_GROUPS, /* [kv][q_per_kv + 2][hd] rows re-ordered to q, k, v (Falcon "jploski") */
    OP_DROP_ROWS,     /* the first count_key + 1 rows dropped (RoBERTa's positions start
                         after pad_token_id; none when count_key is absent or null) */
    OP_FIRST_OF,      /* the first tensor matching a rule of group count_key is named `with`,
                         later ones of the group skipped (T5's shared embeddings) */
    OP_VOCAB_ROWS,    /* rows past the vocabulary's token count cut (Gemma3Model:
                         data_torch[:len(tokens)]; nothing comes back in GGUF -> HF) */
    OP_CUT_ROWS,      /* rows cut into parts of count_key rows (the last takes the rest),
                         part i named with pat replaced by ws[i] (Jina-BERT's gated_layers) */
    OP_VIEW_EXPERTS,  /* [E * rows, cols] viewed as [E][rows][cols], E from count_key (DBRX) */
    OP_VIEW_EXPERTS_T,/* the same, each expert's matrix transposed: [E][cols][rows] */
    OP_DEINTERLEAVE,  /* last dimension split into len(ws) tensors, part k taking
                         elements k::len(ws); pat replaced by ws[k] (gpt-oss's
                         gate_up_proj_bias) */
    OP_SQUEEZE1,      /* dimension 1, of size 1, dropped (torch's squeeze(1); LFM2's conv) */
    OP_STOP,          /* no later rule applies to this tensor (Qwen3-Next's linear_attn.norm
                         is not +1 as the other norms) */
    OP_QKVZ,          /* Qwen3-Next in_proj_qkvz: rows [nk][q hk, k hk, v r*hv, z r*hv]
                         re-ordered to blk.N.attn_qkv (all q, all k, all v) and
                         blk.N.attn_gate (all z); r = linear_num_value_heads / _key_heads */
    OP_VHEADS,        /* linear attention V heads from grouped-by-key-head to tiled order
                         ([nk][r][d] -> [r][nk][d]) when nv != nk; `with` says where:
                         "qkv" rows after 2*nk*hk (d = hv), "rows" (d = hv), "heads" (d = 1),
                         "cols" the columns (d = hv) (Qwen3.5's _LinearAttentionVReorderBase) */
    OP_SPLIT_ROWS,    /* dimension -2 split into len(ws) equal contiguous parts, pat replaced
                         by ws[k] (Qwen3.5-MoE's packed experts.gate_up_proj) */
    OP_MXFP4,         /* pat "X_scales" with "X_blocks": OCP MXFP4 blocks [E, rows, nb, 16]
                         and e8m0 scales [E, rows, nb] repacked to ggml MXFP4 bytes
                         (no requantization), rows de-interleaved into len(ws) tensors
                         named by pat replaced by ws[k]; written before every other
                         tensor (GptOssModel.generate_extra_tensors) */
    OP_SKIP_IF_TIED,  /* not written when config.json's tie_word_embeddings is true */
    OP_SQUEEZE,       /* dimensions of size 1 dropped (Mamba's conv1d at 2026-02) */
    OP_EXPERTS_T,     /* fused experts [E, h, 2ff] gate_up / [E, ff, h] down transposed, gate_up split (Llama 4) */
    OP_SPLIT,         /* cut along the rows (dimension -2) into the parts of a conv_split */
    OP_SCALE,         /* w * factor (a conv_calc: JAIS's embeddings and width scales) */
    OP_ALIBI_SLOPES,  /* not written: its first value gives max_alibi_bias (JAIS) */
    OP_HEAD0_INTERLEAVE, /* [heads, hd]: every row is row 0 with its halves interleaved,
                         out[i*2 + k] = in[0][k*hd/2 + i] (ChameleonModel._reverse_hf_permute of
                         its q/k norms: data[0].view(2, hd//2).t(), repeated per head) */
    OP_SWAP_ROW_GROUPS, /* rows viewed as [A][B][rest] re-ordered to [B][A][rest]; `with` is "A,B"
                         (PlamoModel.shuffle_attn_q_weight: reshape(8, 5, 128, n).permute(1, 0, 2, 3)) */
    OP_SWAP_COL_GROUPS, /* the same over the columns of each row (shuffle_attn_output_weight:
                         reshape(n, 8, 5, 128).permute(0, 2, 1, 3)) */
    OP_UNSQUEEZE_LAST,/* a trailing dimension of size 1 added (Mamba2Model's A and D:
                         reshape((*shape, 1))) */
    OP_GROUPS,        /* [.., n] viewed as [g, n / g], g from count_key (Mamba2Model's
                         ssm_norm: reshape((n_group, d_inner // n_group))) */
    OP_SCALE_ROWS,    /* each row times the factor of its row range, after any OP_SCALE
                         (a conv_row_scales hook: Falcon-H1's in_proj ssm_multipliers) */
    OP_HALVE_EVERY,   /* w / 2 ** (bid // count_key) when count_key > 0 (RWKV6's rescale_every:
                         an exact power of two, undone by GGUF -> HF) */
    OP_SWAP_LAST2,    /* a 3-d [a, b, c] as [a, c, b] (torch's permute(0, 2, 1): RWKV6's time_maa_w2) */
    OP_STACK_PARTS,   /* per block, the tensors named pat + each of ws stacked in ws order as
                         [len(ws), 1, 1, n] (each squeezed to n values), under the GGUF name
                         merged_fmt (%b: the block), written when the last arrives (RWKV6's
                         time_mix_lerp_fused); pat + anything else: the rule does not apply */
    OP_RKVWG,         /* after a transpose: the output's 5 equal groups of rows in r k v w g order
                         re-ordered to w k v r g (groups 0 and 3 swapped: RWKV6Qwen2Model's
                         time_mix_w1 / w2, torch.stack([d[3], d[1], d[2], d[0], d[4]])) */
    OP_SPLIT_KV_B,    /* MLA kv_b_proj [kv][nope + v][r] to k_b [kv][r][nope] (transposed) and
                         v_b [kv][v][r] (DeepseekV2Model, 2026-02) */
    /* the vision projectors' (mmproj) rules (mmproj_table.c) */
    OP_SKIP_UNLESS,   /* not written unless the name starts with (M_PREFIX) or holds (M_CONTAINS)
                         one of ws: the class's "process vision tensors" test; pat "" */
    OP_PICK_ROW,      /* row `id` of the matched tensor as the 1-d GGUF tensor `with`, id the
                         added token count_key of tokenizer_config.json (Pixtral's [IMG_BREAK]
                         embedding; an error when the token is absent) */
    OP_UNSTACK,       /* dimension `with` (a digit) split into its len(ws) entries, entry k
                         written under the GGUF name ws[k] (Qwen2-VL's Conv3D patch embedding
                         as two Conv2D ones) */
    OP_GGUF_NAME,     /* the matched part replaced by `with` (as OP_RENAME) and the result
                         is the GGUF name: not looked up in the name map */
    OP_RENUMBER,      /* the name's first number n replaced by element n of the config list
                         count_key (Qwen3-VL's deepstack mergers: their absolute layer) */
    OP_VIEW,          /* the same values in the shape `with` (torch order, comma-separated: a
                         size, "dN" the size of dimension N as the tensor arrives, or one "-1"
                         for the rest): Kimi-VL's [h, w, n] pos_emb as [h * w, n], LFM2-VL's
                         Linear patch embedding (after OP_SWAP_COL_GROUPS) as a Conv2D weight.
                         GGUF -> HF: the view back to the checkpoint's shape (a pure reshape) */
    OP_QK_SPLIT_ROPE, /* a fused [q; k; v] (3 equal row parts, weight or bias): in q and k each
                         head's rows [d/4][2][2] re-ordered to [2][d/4][2] (KimiK25Model.permute:
                         interleaved to split 2-D RoPE); count_key the head count (a key list).
                         GGUF -> HF: the inverse order, [2][d/4][2] back to [d/4][2][2] */
    OP_BN_FOLD,       /* a BatchNorm's weight, bias, running_mean, running_var (and
                         num_batches_tracked) of a block collected; at the fifth, w / sqrt(var + 1e-5)
                         and bias - mean * that, as torch computes them in the source's float type,
                         written as the name up to pat + ".weight" / ".bias" (ConformerAudioModel:
                         LFM2-Audio's conv module). GGUF -> HF: the pair as weight and bias with
                         running_mean 0 and running_var 1 - 1e-5 (the same function) */
} conv_op;

/* OP_SPLIT: a fused tensor cut along its rows (the second-to-last
 * dimension: per expert for a 3-d one) into parts written under GGUF names
 * of their own (Baichuan's W_pack, Refact's kv and gate_up, OpenELM's
 * proj_1, Granite-MoE's input_linear). GGUF -> HF concatenates them back
 * (R_CONCAT reads this same description). */
struct conv;
typedef struct conv_split {
    const char *const *names;  /* GGUF names of the parts ("blk.%b.attn_q"; .weight/.bias as the source) */
    const conv_op *ops;        /* per part: OP_PERMUTE_Q, OP_PERMUTE_K or OP_RENAME (as is) */
    /* rows of the first part of block bid (the rest are the second part);
     * NULL: equal parts */
    int (*first_rows)(struct conv *c, int64_t bid, int64_t rows, int64_t *first);
    /* or the rows of every part (each[n_parts]); used before first_rows */
    int (*part_rows)(struct conv *c, int64_t rows, int64_t *each);
    /* GGUF -> HF writes the parts as separate tensors (R_PLAIN rows: the
     * names transformers' class reads), not fused back (R_CONCAT), unless
     * a class variant of the reverse table (hf_rev_variants) fuses them */
    bool unfused_back;
} conv_split;
/* Ernie4_5Model.modify_tensors: qkv_proj = q (n_head * head_dim rows), k, v
 * (n_head_kv * head_dim each) (hf2gguf_meta.c) */
int h2g_rows_ernie_qkv(struct conv *c, int64_t rows, int64_t *each);
/* The first_rows functions (hf2gguf_meta.c), by name: h2g_rows_NAME. */
#define CONV_SPLIT_ROWS(X) X(granitemoe_ffn) X(refact_kv) X(refact_ff) X(openelm_ffn)
#define CONV_DECLARE_ROWS(n) int h2g_rows_##n(struct conv *c, int64_t bid, int64_t rows, int64_t *first);
CONV_SPLIT_ROWS(CONV_DECLARE_ROWS)
/* OP_SCALE_ROWS hooks (hf2gguf_meta.c) */
int h2g_falcon_h1_zxbcdt(struct conv *c, int64_t rows, float *factors);

typedef struct conv_rule {
    conv_op op;
    conv_match m;
    const char *pat;
    const char *with;            /* OP_RENAME */
    /* OP_STACK: parts per block from count_key (an hparam); the block is
     * complete when count * (number of ws) matching tensors arrived; each w
     * of ws then gives one tensor stacked from part_fmt over x = 0..count-1,
     * named by mapping merged_fmt. In the formats %b is the block, %x the
     * part, %w the w. */
    const char *count_key;
    const char *part_fmt, *merged_fmt;
    union {
        const char *const *ws;   /* OP_STACK, OP_DEINTERLEAVE, OP_MXFP4, OP_SPLIT_ROWS (positional
                                    initializers set this one) */
        const conv_split *split; /* OP_SPLIT (a designated initializer) */
        const struct conv_calc *factor; /* OP_SCALE: the factor, computed from config.json
                                           (NULL: config.json's count_key, "KEY" or "KEY[i]") */
        /* OP_SCALE_ROWS: the factor of each of rows output rows (count_key: the
           config list it reads, set to ones by GGUF -> HF) */
        int (*row_factors)(struct conv *c, int64_t rows, float *factors);
    };
} conv_rule;

/* Values the converter computes and key blocks it writes, as code: each
 * has its forward step (hf2gguf_meta.c) and its inverse (gguf2hf_config.c)
 * side by side, and a table names it by its C identifier, so a typo is a
 * compile error (CALC() and BLOCK() in arch_table.c). */
struct hfc;
typedef struct conv_calc {
    const char *name;                                     /* for messages: "@name" */
    json_t *(*fwd)(struct conv *c);                       /* a new reference; NULL: none
                                                             (an error when c->st is set) */
    void (*back)(struct hfc *c, json_t *cfg, int64_t x);  /* x back into config.json; NULL: nothing */
} conv_calc;
typedef struct conv_block {
    int (*fwd)(struct conv *c);                           /* writes its keys (none when absent) */
    void (*back)(struct hfc *c, json_t *cfg);             /* NULL: nothing to restore */
} conv_block;
#define CONV_CALCS(X)                                                                      \
    X(block_count) X(file_type) X(rope_dim_llama) X(head_dim_embd) X(rope_dim_phi2)         \
    X(rope_dim_partial) X(rope_dim_neox) X(qk_head_dim) X(gating_func) X(mamba_d_inner)     \
    X(mamba_dt_rank) X(falcon_mamba) X(gating_func_2026)    \
    X(mla_key_length) X(yarn_log_mul_2026) X(sliding_window_gemma3) \
    X(rope_dim_glm4moe) X(ernie_shexp_ffl) X(llama4_no_swa) X(ffn_or_4x_embd) X(rope_dim_pct_or_one) \
    X(refact_ff) X(jais_embd_scale) X(jais_width_scale) X(ctx_after_pad) \
    X(lfm2_ff_dim) X(linear_inner) X(rope_dim_qwen3next) X(granite_hybrid_inner) X(falcon_h1_dt_rank) \
    X(rwkv_ff) X(rwkv_mix_extra) X(rwkv_decay_extra) X(rope_dim_chatglm) X(rwkv_mix_extra_ge) \
    X(rwkv_decay_extra_ge) X(head_size_of_heads)
#define CONV_BLOCKS(X) X(rope_linear) X(rope_yarn) X(rope_yarn_deepseek) X(pooling_type) X(rope_nemotron) \
    X(rope_2026) X(rope_hunyuan) X(mrope_sections) X(minicpm_scales) X(openelm_layers) X(jais_config) X(mpt_alibi) \
    X(chatglm) X(deci_layers) X(mistral_yarn)
/* Declared for every name; file_type, head_dim_embd, pooling_type,
 * gating_func_2026 (g2h_gating_func's), mla_key_length, yarn_log_mul_2026,
 * ernie_shexp_ffl, jais_embd_scale and jais_width_scale have no inverse of
 * their own (their back is NULL in arch_table.c) and define no g2h_
 * function. */
#define CONV_DECLARE_CALC(n) \
    extern const conv_calc conv_calc_##n; json_t *h2g_##n(struct conv *c); void g2h_##n(struct hfc *c, json_t *cfg, int64_t x);
#define CONV_DECLARE_BLOCK(n) \
    extern const conv_block conv_block_##n; int h2g_##n(struct conv *c); void g2h_##n(struct hfc *c, json_t *cfg);
CONV_CALCS(CONV_DECLARE_CALC)
CONV_BLOCKS(CONV_DECLARE_BLOCK)

/* A hyper-parameter key. src:
 *   "a|b|c"   the first of these config.json keys present (find_hparam);
 *   "4*a|b"   that value times 4;
 *   "=V"      the constant V;
 *   NULL      calc: a value computed by the converter, or block: keys the
 *             converter writes (rope scaling blocks...);
 * key "@base" stands for Model.set_gguf_parameters' keys. */
typedef struct conv_hp {
    const char *key;   /* without the "<arch>." prefix; "general.file_type" as it is */
    char type;         /* 'u' u32, 'i' i32, 'f' f32, 'b' bool, 's' string */
    const char *src;
    unsigned flags;
    const conv_calc *calc;
    const conv_block *block;
} conv_hp;
enum {
    HP_OPT = 1,    /* absent or null: not written (else an error) */
    HP_TRUTHY = 2, /* 0 or false: not written either (Python's `if x := ...`) */
};
/* In a key list, an element "=V" is a constant taken when no key before it
 * is present; "a|b||=V" is Python's `find_hparam(a, b) or V`. */

typedef enum conv_vocab {
    V_LLAMA,      /* SentencePiece, else LlamaHf, else BPE; CodeLlama ids, add_prefix_space */
    V_SPM_OR_BPE, /* SentencePiece when tokenizer.model exists, else BPE (Qwen2) */
    V_BPE,        /* _set_vocab_gpt2 */
    V_SPM,        /* _set_vocab_sentencepiece */
    V_GEMMA,      /* SentencePiece + CodeGemma ids + add_space_prefix false */
    V_GEMMA2,     /* SentencePiece + add_space_prefix false */
    V_PHI3,       /* Phi3MiniModel.set_vocab */
    V_INTERNLM2,  /* InternLM2Model.set_vocab */
    V_BERT,       /* WordPiece, phantom spaces */
    V_INTERNLM3,  /* InternLM3Model.set_vocab: SentencePiece, add_prefix_space, eos = <|im_end|> */
    V_NEMOTRON,   /* NemotronModel.set_vocab: SentencePiece, then pad id 0 and unk id 1 */
    V_MAMBA,      /* vocab_size rounded up to pad_vocab_size_multiple, then BPE */
    V_ROBERTA,    /* RobertaModel.set_vocab: tokenizer.json BPE + add_bos/add_eos, else V_BERT */
    V_XLMR,       /* XLMRobertaModel.set_vocab: "t5" Unigram, fairseq ids realigned */
    V_T5,         /* T5Model.set_vocab: "t5" Unigram (spiece.model), add_eos only */
    V_JINA,       /* JinaBertV2Model.set_vocab: by tokenizer_class, WordPiece or BPE, + add_bos/add_eos */
    V_GEMMA3,     /* Gemma3Model.set_vocab: SentencePiece + add_space_prefix false, else BPE */
    V_GLM,        /* _set_vocab_glm: BPE, then GLM's bos/eot/unk/eom added tokens */
    V_ERNIE,      /* Ernie4_5Model.set_vocab: SentencePiece, add_space_prefix from add_prefix_space */
    V_XVERSE,     /* XverseModel.set_vocab: tokenizer.json's pieces by id, model "llama" */
    V_OPENELM,    /* SentencePiece; without tokenizer.model llama.cpp's built-in llama-spm (refused) */
    V_GRANITE_HYBRID, /* GraniteHybridModel.set_vocab: vocab_size rounded up to a multiple of 8,
                         then Mamba2Model's: SentencePiece, else tokenizer.json BPE */
    V_RWKV,       /* Rwkv6Model.set_vocab: rwkv_vocab_v20230424.txt, model "rwkv" */
    V_QWEN,       /* QwenModel._set_vocab_qwen: qwen.tiktoken's ranks as byte-level BPE, the
                     merges re-derived from them, QWenTokenizer's specials at 151643.. */
    V_DECI,       /* DeciModel.set_vocab: vocab_size (default 128256) 128256: BPE (get_vocab_base),
                     else LlamaHfVocab */
    V_MISTRAL,    /* _set_vocab_mistral (--mistral-format): tekken.json or tokenizer.model.v*
                     through mistral_common (mistral_vocab.c) */
    V_CHATGLM,    /* ChatGLMModel.set_vocab: ChatGLM3's SentencePiece (set_vocab_chatglm3,
                     _name_or_path THUDM/chatglm3-6b), else GLM-4's tokenizer.json BPE */
} conv_vocab;

enum {
    AF_NO_HEAD_DIM = 1,       /* config's head_dim ignored (Granite pops it) */
    AF_CTX_MODEL_MAX = 2,     /* max_position_embeddings from model_max_length (Command-R) */
    AF_LLAMA3_ROPE = 4,       /* generated rope_freqs for llama3 rope scaling */
    AF_LONGROPE = 8,          /* Phi-3 rope_factors_long/short + attn_factor */
    AF_ONLY_2026 = 16,        /* a class only the 2026-02 converter has: its layout always */
    AF_MINISTRAL3 = 32,       /* Mistral3Model: model_type ministral3 only (else arch llama: refused) */
    AF_ROPE_FACTORS = 64,     /* MiniCPM: rope_factors_long/short of hidden/heads / 2 values */
    AF_ROPE_FACTORS_QK = 128, /* MiniCPM3: of qk_rope_head_dim / 2 values */
    AF_K_PERMUTE_RATIO = 256, /* XVERSE, Baichuan: k permuted with n_head // n_head_kv heads
                                 (their _reverse_hf_permute), not n_head_kv */
    AF_LAYERS_KEY = 512,      /* OpenELM: the block count is num_transformer_layers */
    AF_ALIBI_BIAS = 1024,     /* JAIS: max_alibi_bias written after the tensors (8.0 unless slopes say) */
    AF_MXFP4 = 16384,         /* quantization_config mxfp4: the packed weights read as
                                 stored (OP_MXFP4), not dequantized (GptOssModel) */
    AF_GEMMA3 = 2048,         /* Gemma3Model: asserts attn_logit_softcapping is None */
    AF_NEXTN = 4096,          /* block count + num_nextn_predict_layers (GLM-4.5's MTP layers) */
    AF_LLAMA4 = 8192,         /* Llama4Model: intermediate_size is the experts', intermediate_size_mlp the dense one */
    AF_FORCE_QUANT = 32768,   /* tensor_force_quant: every tensor of 2+ dimensions (not a
                                 norm) takes the output type, ffn_gate_inp too (DBRX) */
    AF_BLOCK_CONFIGS = 65536, /* the row of a class for a config.json with block_configs
                                 (Nemotron-NAS); without it the class's next row */
    AF_LAYER_HEADS = 131072,  /* q/k permuted with the heads of their own layer
                                 (DeciModel.modify_tensors: h2g_layer_heads) */
};

typedef struct conv_arch {
    const char *name;            /* general.architecture */
    const char *const *classes;  /* config.json architectures[0] values */
    int bit;                     /* enum conv_arch_bit */
    const conv_rule *rules;      /* terminated by pat == NULL */
    const conv_hp *hparams;      /* terminated by key == NULL */
    conv_vocab vocab;
    unsigned flags;
} conv_arch;

/* A config key the class turns into one value per layer before reading it,
 * "KEY@KINDS:ZERO:OTHER": config.json's KEY becomes [KEY, or 0 where the
 * list KINDS says ZERO, for each layer] (LFM2's num_key_value_heads, 0 for
 * "conv" layers); GGUF -> HF gives back KEY and KINDS (OTHER for the
 * non-zero layers). Kept beside the table (conv_per_layer in arch_table.c)
 * by architecture name; NULL: none. */
const char *conv_per_layer_of(const conv_arch *a);
/* Its parts, split in buf; -1 when malformed. */
int conv_per_layer_parse(const char *spec, char *buf, size_t cap, const char **key, const char **kinds,
                         const char **zero, const char **other);
/* Computations both directions share (hf2gguf_plan.c, hf2gguf_stream.c). */
void conv_llama3_rope_factors(double base, int64_t dim, double factor, double low, double high, double old_ctx,
                              double *vals);
float conv_torch_expf(float d); /* torch.exp on a float32 CPU tensor, bit for bit */

/* The 2026-02 converter's (ecbcb7ea) rules and keys for an architecture
 * of both converters where they differ from c392e50's (--layout 2026-02);
 * NULL: the same. "@base" in a key list is conv_base_hparams or
 * conv_base_hparams_2026 by the layout. */
typedef struct conv_arch_2026 {
    int bit;                     /* enum conv_arch_bit */
    const conv_rule *rules;
    const conv_hp *hparams;
} conv_arch_2026;

extern const conv_arch_2026 conv_archs_2026[];
extern const size_t conv_n_archs_2026;

extern const conv_arch conv_archs[];
extern const size_t conv_n_archs;

/* MistralModel (--mistral-format, params.json): not found by class (the
 * format has no architectures list); llama without llama_4_scaling,
 * mistral3 with it. */
extern const conv_arch conv_mistral_llama, conv_mistral_mistral3;

/* An mmproj class's tensor_force_quant, one rule: a tensor whose source
 * name (on 's') or GGUF name (on 'g') holds pat (and `also`, when set)
 * takes type 'h' F16, 'f' F32, or 'p' F16 when the output type is F16
 * else F32. */
typedef struct conv_force_type {
    char on;
    const char *pat;
    char type;
    const char *also; /* NULL: pat alone (the Whisper encoders' ".conv" and ".weight") */
} conv_force_type;

/* The vision tower + projector of a multimodal class as llama.cpp's
 * converter writes it with --mmproj (an MmprojModel subclass): the GGUF
 * architecture "clip", gguf-py's MMPROJ name map (conv_clip_names), the
 * hyper-parameters read from vision_config ("^k": the whole config.json's
 * k, "pre:k": preprocessor_config.json's). mmproj_table.c. */
typedef struct conv_mmproj {
    conv_arch a;                  /* name "clip", classes, rules, keys (vocab unused) */
    const char *model_type;       /* config.json's model_type the class takes (NULL: any) */
    const char *vision_type;      /* vision_config's model_type it takes (NULL: any) */
    /* the class's changes to the vision config before it is read, in order:
     * "k=SRC" sets k to SRC's value (a key list as conv_hp's) when it has
     * one; "?g:k=SRC" only when key g is present, "?g=v:k=SRC" only when g
     * is the string v */
    const char *const *fixes;
    const conv_force_type *types; /* its tensor_force_quant before the base class's */
    int (*prepare)(struct conv *c); /* what else its __init__ computes (NULL: nothing) */
    /* an audio encoder (has_audio_encoder; mmproj_table.c's audio rows): */
    const char *audio_cfg;        /* its config's path in config.json, "a|b": the first present
                                     (get_audio_config); NULL: no audio encoder */
    bool no_vision;               /* has_vision_encoder False: the audio config is the hparams */
    const char *const *afixes;    /* the class's changes to the audio config, as fixes */
    const char *vision_cfg;       /* the vision config's path (NULL: "vision_config") */
} conv_mmproj;

/* The multimodal checkpoint of a class, for GGUF -> HF of an mmproj file
 * (gguf2hf_mmproj.c; designated initializers): config.json's model_type,
 * the vision config's (NULL: none written), whether the text model's keys
 * go under text_config (else they stay at the top), and its tensor name
 * prefixes "FROM=TO" (the text converter's names -> the checkpoint's; an
 * empty FROM: every name). A class without a row converts its mmproj alone
 * (its names the first of gguf-py's its rules take). */
typedef struct conv_mm_layout {
    const char *hf_class, *model_type, *vision_type;
    bool nest_text;
    const char *const *text_names;
    /* vision_config keys the class asserts that no GGUF key holds, "k=JSON"
     * (Llama4VisionModel: hidden_act "gelu"); NULL: none */
    const char *const *vision_fixed;
    /* where the forward rows cannot tell which of several HF names a GGUF
     * name came from (gguf-py's map has one per vision family): candidates
     * holding an earlier entry of rev_prefer first ("^x": starting with x;
     * others: holding x; then the name map's order); rev_names: "GGUF=HF"
     * taken as they are (a parameter the forward renames by a substring,
     * Gemma 3's mm_input_projection_weight). NULL: none. */
    const char *const *rev_prefer;
    const char *const *rev_names;
    /* the keys a "?g:" fix of the row tests that the class's vision config
     * has (Qwen2-VL's embed_dim; Qwen2.5-VL has none): those fixes undone;
     * a "?!g:" fix (an audio row's afixes too) is undone unless g is listed
     * (Voxtral's encoder config has hidden_size itself) */
    const char *const *rev_guards;
    /* why GGUF -> HF of the class is not done though its rows reverse (a
     * round trip test_mmproj_rev found wrong); NULL: it is */
    const char *not_reversible;
    /* an audio class: its audio config's path in config.json and model_type
       (NULL: the first path of the row's audio_cfg; none) */
    const char *audio_cfg, *audio_type;
    /* the layout names the vision / audio side only: GGUF -> HF with the text
       model (--with-mmproj) is refused, as for a class without a layout */
    bool alone_only;
} conv_mm_layout;
extern const conv_mm_layout conv_mm_layouts[];
extern const size_t conv_n_mm_layouts;
/* their computed values and key blocks (hf2gguf_mmproj.c) */
json_t *h2g_mm_gemma3_scale(struct conv *c);
json_t *h2g_mm_inverse_ratio(struct conv *c);
json_t *h2g_mm_wa_pattern(struct conv *c);
int h2g_mm_act(struct conv *c);
json_t *h2g_mm_deepstack_layers(struct conv *c);
int h2g_mm_qwen3vl_prepare(struct conv *c);
json_t *h2g_mm_inverse_downsample(struct conv *c);
int h2g_mm_internvl_prepare(struct conv *c);
json_t *h2g_mm_lfm2_blocks(struct conv *c);
int h2g_mm_act_if_known(struct conv *c);
int h2g_mm_janus_prepare(struct conv *c);
int h2g_mm_act_youtuvl(struct conv *c);
int h2g_mm_paddleocr_prepare(struct conv *c);
int h2g_mm_kimik25_prepare(struct conv *c);
int h2g_mm_kimik25_keys(struct conv *c);
/* their inverses (gguf2hf_mmproj.c): x the GGUF value, MF_MM_ABSENT when
 * the key was not written */
#define MF_MM_ABSENT INT64_MIN
void g2h_mm_gemma3_scale(struct hfc *c, json_t *vcfg, int64_t x);
void g2h_mm_inverse_ratio(struct hfc *c, json_t *vcfg, int64_t x);
void g2h_mm_inverse_downsample(struct hfc *c, json_t *vcfg, int64_t x);
void g2h_mm_wa_pattern(struct hfc *c, json_t *vcfg, int64_t x);
void g2h_mm_deepstack_layers(struct hfc *c, json_t *vcfg, int64_t x);
void g2h_mm_act(struct hfc *c, json_t *vcfg);
void g2h_mm_kimik25_keys(struct hfc *c, json_t *vcfg);
void g2h_mm_act_youtuvl(struct hfc *c, json_t *vcfg);
extern const conv_mmproj conv_mmprojs[];
extern const size_t conv_n_mmprojs;
extern const conv_name_row conv_clip_names[];
extern const size_t conv_n_clip_names;
extern const conv_force_type conv_mmproj_base_types[];
extern const conv_hp conv_base_hparams[];
extern const conv_hp conv_base_hparams_2026[];
/* Granite 4.0-H without experts: its shared MLP as the dense FFN (hf2gguf.c
 * takes these rules for such a config) */
extern const conv_rule conv_granite_hybrid_dense_rules[];

/* OP_VHEADS' order: the checkpoint index of GGUF entry i (entries before
 * prefix unchanged; nv heads of d entries, nv a multiple of nk). */
int64_t conv_vheads_source(int64_t i, int64_t prefix, int64_t nk, int64_t nv, int64_t d);

/* OP_SWAP_*_GROUPS' order: the source index of entry i of [b][a][rest]
 * taken from [a][b][rest] (hf2gguf_plan.c; GGUF -> HF inverts it). */
int64_t conv_swap_groups_source(int64_t i, int64_t a, int64_t b, int64_t rest);

#endif
