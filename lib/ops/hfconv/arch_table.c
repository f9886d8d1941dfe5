/* arch_table.c - the architecture table of the HF -> GGUF converter: one
 * row per llama.cpp model class (convert_hf_to_gguf.py at c392e509), with
 * its tensor rules (modify_tensors), hyper-parameter keys in the order of
 * its set_gguf_parameters, and its vocabulary kind. See arch.h. */
#include "ops/hfconv/arch.h"

/* conv_rule's last member is an anonymous union (ws | split): the rows set
 * ws positionally, by brace elision (C11 6.7.9p20), which -Wmissing-braces
 * would flag in every row; an OP_SPLIT row names .split explicitly. */
#pragma GCC diagnostic ignored "-Wmissing-braces"
/* conv_split rows name names, ops and first_rows; part_rows and
 * unfused_back (zero: none / fused back) only where a split has them */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#include <stdio.h>

/* arch_names.inc read once for the names, then once per word of the sets
 * (arch.h: ARCH and ALL_ARCHS give word CONV_W). */
#define ROW(hf, gguf, set) {hf, gguf},
const conv_name_row conv_names[] = {
#include "ops/hfconv/arch_names.inc"
};
const size_t conv_n_names = sizeof(conv_names) / sizeof(conv_names[0]);
#undef ROW
#define ROW(hf, gguf, set) set,
#define CONV_W 0
static const uint64_t name_archs_word0[] = {
#include "ops/hfconv/arch_names.inc"
};
#undef CONV_W
#define CONV_W 1
static const uint64_t name_archs_word1[] = {
#include "ops/hfconv/arch_names.inc"
};
#undef CONV_W
#undef ROW
_Static_assert(CONV_ARCH_WORDS == 2, "one name_archs_wordN per word of a set");
_Static_assert(sizeof(name_archs_word1) / sizeof(uint64_t) == sizeof(conv_names) / sizeof(conv_names[0]),
               "a set per name row");
const uint64_t *const conv_name_archs[CONV_ARCH_WORDS] = {name_archs_word0, name_archs_word1};

/* a computed value, a block of keys: conv_calc_NAME, conv_block_NAME (arch.h) */
#define CALC(key, type, name, flags) {key, type, NULL, flags, &conv_calc_##name, NULL}
#define BLOCK(name) {"@@" #name, 0, NULL, 0, NULL, &conv_block_##name}

/* The computed values and key blocks: the forward step (hf2gguf_meta.c)
 * and its inverse (gguf2hf_config.c; NULL: nothing goes back into
 * config.json - file_type, head_dim_embd, pooling_type). */
const conv_calc conv_calc_block_count = {"block_count", h2g_block_count, g2h_block_count};
const conv_calc conv_calc_file_type = {"file_type", h2g_file_type, NULL};
const conv_calc conv_calc_rope_dim_llama = {"rope_dim_llama", h2g_rope_dim_llama, g2h_rope_dim_llama};
const conv_calc conv_calc_head_dim_embd = {"head_dim_embd", h2g_head_dim_embd, NULL};
const conv_calc conv_calc_rope_dim_phi2 = {"rope_dim_phi2", h2g_rope_dim_phi2, g2h_rope_dim_phi2};
const conv_calc conv_calc_rope_dim_partial = {"rope_dim_partial", h2g_rope_dim_partial, g2h_rope_dim_partial};
const conv_calc conv_calc_rope_dim_neox = {"rope_dim_neox", h2g_rope_dim_neox, g2h_rope_dim_neox};
const conv_calc conv_calc_qk_head_dim = {"qk_head_dim", h2g_qk_head_dim, g2h_qk_head_dim};
const conv_calc conv_calc_gating_func = {"gating_func", h2g_gating_func, g2h_gating_func};
const conv_calc conv_calc_mamba_d_inner = {"mamba_d_inner", h2g_mamba_d_inner, g2h_mamba_d_inner};
const conv_calc conv_calc_mamba_dt_rank = {"mamba_dt_rank", h2g_mamba_dt_rank, g2h_mamba_dt_rank};
const conv_calc conv_calc_falcon_mamba = {"falcon_mamba", h2g_falcon_mamba, g2h_falcon_mamba};
const conv_calc conv_calc_ctx_after_pad = {"ctx_after_pad", h2g_ctx_after_pad, g2h_ctx_after_pad};
const conv_calc conv_calc_refact_ff = {"refact_ff", h2g_refact_ff, g2h_refact_ff};
const conv_calc conv_calc_jais_embd_scale = {"jais_embd_scale", h2g_jais_embd_scale, NULL};
const conv_calc conv_calc_jais_width_scale = {"jais_width_scale", h2g_jais_width_scale, NULL};
const conv_calc conv_calc_ffn_or_4x_embd = {"ffn_or_4x_embd", h2g_ffn_or_4x_embd, g2h_ffn_or_4x_embd};
const conv_calc conv_calc_rope_dim_pct_or_one = {"rope_dim_pct_or_one", h2g_rope_dim_pct_or_one, g2h_rope_dim_pct_or_one};
const conv_calc conv_calc_lfm2_ff_dim = {"lfm2_ff_dim", h2g_lfm2_ff_dim, g2h_lfm2_ff_dim};
const conv_calc conv_calc_linear_inner = {"linear_inner", h2g_linear_inner, g2h_linear_inner};
const conv_calc conv_calc_rope_dim_qwen3next = {"rope_dim_qwen3next", h2g_rope_dim_qwen3next, g2h_rope_dim_qwen3next};
const conv_calc conv_calc_granite_hybrid_inner = {"granite_hybrid_inner", h2g_granite_hybrid_inner,
                                                   g2h_granite_hybrid_inner};
const conv_calc conv_calc_falcon_h1_dt_rank = {"falcon_h1_dt_rank", h2g_falcon_h1_dt_rank, g2h_falcon_h1_dt_rank};
const conv_calc conv_calc_rwkv_ff = {"rwkv_ff", h2g_rwkv_ff, g2h_rwkv_ff};
const conv_calc conv_calc_rwkv_mix_extra = {"rwkv_mix_extra", h2g_rwkv_mix_extra, NULL};
const conv_calc conv_calc_rwkv_decay_extra = {"rwkv_decay_extra", h2g_rwkv_decay_extra, NULL};
const conv_calc conv_calc_head_size_of_heads = {"head_size_of_heads", h2g_head_size_of_heads, g2h_head_size_of_heads};
const conv_calc conv_calc_rwkv_mix_extra_ge = {"rwkv_mix_extra_ge", h2g_rwkv_mix_extra_ge, NULL};
const conv_calc conv_calc_rwkv_decay_extra_ge = {"rwkv_decay_extra_ge", h2g_rwkv_decay_extra_ge, NULL};
const conv_calc conv_calc_rope_dim_chatglm = {"rope_dim_chatglm", h2g_rope_dim_chatglm, g2h_rope_dim_chatglm};
const conv_block conv_block_rope_linear = {h2g_rope_linear, g2h_rope_linear};
const conv_block conv_block_rope_yarn = {h2g_rope_yarn, g2h_rope_yarn};
const conv_block conv_block_rope_yarn_deepseek = {h2g_rope_yarn_deepseek, g2h_rope_yarn_deepseek};
const conv_block conv_block_pooling_type = {h2g_pooling_type, NULL};
const conv_block conv_block_rope_nemotron = {h2g_rope_nemotron, NULL};
const conv_block conv_block_mpt_alibi = {h2g_mpt_alibi, g2h_mpt_alibi};
const conv_block conv_block_mrope_sections = {h2g_mrope_sections, g2h_mrope_sections};
const conv_block conv_block_minicpm_scales = {h2g_minicpm_scales, g2h_minicpm_scales};
const conv_block conv_block_openelm_layers = {h2g_openelm_layers, g2h_openelm_layers};
const conv_block conv_block_jais_config = {h2g_jais_config, g2h_jais_config};
const conv_block conv_block_chatglm = {h2g_chatglm, g2h_chatglm};
const conv_block conv_block_deci_layers = {h2g_deci_layers, g2h_deci_layers};
const conv_block conv_block_mistral_yarn = {h2g_mistral_yarn, NULL};
const conv_calc conv_calc_gating_func_2026 = {"gating_func_2026", h2g_gating_func_2026, g2h_gating_func};
const conv_block conv_block_rope_2026 = {h2g_rope_2026, g2h_rope_2026};
const conv_calc conv_calc_mla_key_length = {"mla_key_length", h2g_mla_key_length, NULL};
const conv_calc conv_calc_yarn_log_mul_2026 = {"yarn_log_mul_2026", h2g_yarn_log_mul_2026, NULL};
const conv_calc conv_calc_rope_dim_glm4moe = {"rope_dim_glm4moe", h2g_rope_dim_glm4moe, g2h_rope_dim_glm4moe};
const conv_block conv_block_rope_hunyuan = {h2g_rope_hunyuan, g2h_rope_hunyuan};
const conv_calc conv_calc_ernie_shexp_ffl = {"ernie_shexp_ffl", h2g_ernie_shexp_ffl, NULL};
const conv_calc conv_calc_llama4_no_swa = {"llama4_no_swa", h2g_llama4_no_swa, g2h_llama4_no_swa};
const conv_calc conv_calc_sliding_window_gemma3 = {"sliding_window_gemma3", h2g_sliding_window_gemma3,
                                                  g2h_sliding_window_gemma3};

/* Model.set_gguf_parameters */
const conv_hp conv_base_hparams[] = {
    CALC("block_count", 'u', block_count, 0),
    {"context_length", 'u', "max_position_embeddings|n_ctx", HP_OPT, NULL, NULL},
    {"embedding_length", 'u', "hidden_size|n_embd", HP_OPT, NULL, NULL},
    {"feed_forward_length", 'u', "intermediate_size|n_inner", HP_OPT, NULL, NULL},
    {"attention.head_count", 'u', "num_attention_heads|n_head", HP_OPT, NULL, NULL},
    {"attention.head_count_kv", 'u', "num_key_value_heads", HP_OPT, NULL, NULL},
    {"rope.freq_base", 'f', "rope_theta", HP_OPT, NULL, NULL},
    {"attention.layer_norm_rms_epsilon", 'f', "rms_norm_eps", HP_OPT, NULL, NULL},
    {"attention.layer_norm_epsilon", 'f', "layer_norm_eps|layer_norm_epsilon|norm_epsilon", HP_OPT, NULL, NULL},
    {"expert_count", 'u', "num_local_experts", HP_OPT, NULL, NULL},
    {"expert_used_count", 'u', "num_experts_per_tok", HP_OPT, NULL, NULL},
    {"attention.key_length", 'u', "head_dim", HP_OPT, NULL, NULL},
    {"attention.value_length", 'u', "head_dim", HP_OPT, NULL, NULL},
    CALC("general.file_type", 'u', file_type, 0),
    {NULL, 0, NULL, 0, NULL, NULL},
};

/* TextModel.set_gguf_parameters of the 2026-02 converter (ecbcb7ea) */
const conv_hp conv_base_hparams_2026[] = {
    CALC("block_count", 'u', block_count, 0),
    {"context_length", 'u', "max_position_embeddings|n_ctx|n_positions|max_length|max_sequence_length|model_max_length",
     HP_OPT, NULL, NULL},
    {"embedding_length", 'u', "hidden_size|n_embd|dim", HP_OPT, NULL, NULL},
    {"feed_forward_length", 'u', "intermediate_size|n_inner|hidden_dim", HP_OPT, NULL, NULL},
    {"attention.head_count", 'u', "num_attention_heads|n_head|n_heads", HP_OPT, NULL, NULL},
    {"attention.head_count_kv", 'u', "num_key_value_heads|n_kv_heads", HP_OPT, NULL, NULL},
    BLOCK(rope_2026),
    {"attention.layer_norm_rms_epsilon", 'f', "rms_norm_eps|norm_eps", HP_OPT, NULL, NULL},
    {"attention.layer_norm_epsilon", 'f', "layer_norm_eps|layer_norm_epsilon|norm_epsilon", HP_OPT, NULL, NULL},
    {"expert_count", 'u', "num_local_experts|num_experts", HP_OPT, NULL, NULL},
    {"expert_used_count", 'u', "num_experts_per_tok|num_experts_per_token", HP_OPT, NULL, NULL},
    {"expert_group_count", 'u', "n_group", HP_OPT, NULL, NULL},
    {"expert_group_used_count", 'u', "topk_group", HP_OPT, NULL, NULL},
    CALC("expert_gating_func", 'u', gating_func_2026, HP_OPT),
    {"attention.key_length", 'u', "head_dim", HP_OPT, NULL, NULL},
    {"attention.value_length", 'u', "head_dim", HP_OPT, NULL, NULL},
    CALC("general.file_type", 'u', file_type, 0),
    {NULL, 0, NULL, 0, NULL, NULL},
};

#define BASE {"@base", 0, NULL, 0, NULL, NULL}
#define END {NULL, 0, NULL, 0, NULL, NULL}
#define NORULES {0, 0, NULL, NULL, NULL, NULL, NULL, NULL}

/* ---------------------------------------------------------------- rules */

static const char *const llama_ws[] = {"w1", "w2", "w3", NULL};
static const char *const proj_ws[] = {"down_proj", "gate_proj", "up_proj", NULL};
static const char *const one_w[] = {"", NULL};

#define PERMUTE_QK                                                  \
    {OP_PERMUTE_Q, M_SUFFIX, "q_proj.weight", NULL, NULL, NULL, NULL, NULL}, \
    {OP_PERMUTE_Q, M_SUFFIX, "q_proj.bias", NULL, NULL, NULL, NULL, NULL},   \
    {OP_PERMUTE_K, M_SUFFIX, "k_proj.weight", NULL, NULL, NULL, NULL, NULL}, \
    {OP_PERMUTE_K, M_SUFFIX, "k_proj.bias", NULL, NULL, NULL, NULL, NULL}

static const conv_rule llama_rules[] = {
    PERMUTE_QK,
    {OP_STACK, M_CONTAINS, "block_sparse_moe.experts", NULL, "num_local_experts",
     "model.layers.%b.block_sparse_moe.experts.%x.%w.weight", "layers.%b.feed_forward.experts.%w.weight",
     llama_ws},
    NORULES,
};

static const conv_rule no_rules[] = {NORULES};

/* DeciModel.modify_tensors: q/k weights and biases permuted with their
 * layer's heads (AF_LAYER_HEADS); no experts */
static const conv_rule deci_rules[] = {PERMUTE_QK, NORULES};

/* ------------------------------------------------- splits (OP_SPLIT) */

static const conv_op as_is2[] = {OP_RENAME, OP_RENAME};

/* GraniteMoeModel.modify_tensors: input_linear [E, 2 * ff, h] -> gate, up */
static const conv_split granitemoe_input_linear = {
    (const char *const[]){"blk.%b.ffn_gate_exps", "blk.%b.ffn_up_exps", NULL}, as_is2, h2g_rows_granitemoe_ffn};

/* BaichuanModel.modify_tensors: W_pack in three equal row blocks, q and k
 * permuted (_reverse_hf_permute_part) */
static const conv_split baichuan_w_pack = {
    (const char *const[]){"blk.%b.attn_q", "blk.%b.attn_k", "blk.%b.attn_v", NULL},
    (const conv_op[]){OP_PERMUTE_Q, OP_PERMUTE_K, OP_RENAME}, NULL};

/* RefactModel.modify_tensors: kv = k (n_head_kv 1 * head_dim rows), v */
static const conv_split refact_kv = {
    (const char *const[]){"blk.%b.attn_k", "blk.%b.attn_v", NULL}, as_is2, h2g_rows_refact_kv};

/* RefactModel: gate_up = gate (ff rows), up */
static const conv_split refact_gate_up = {
    (const char *const[]){"blk.%b.ffn_gate", "blk.%b.ffn_up", NULL}, as_is2, h2g_rows_refact_ff};

/* CodeShellModel.modify_tensors: no head among the tensors, token_embd again as output */
static const conv_rule codeshell_rules[] = {
    {OP_ALSO_OUTPUT_UNTIED, M_EXACT, "token_embd.weight", NULL, NULL, NULL, NULL, NULL}, /* a GGUF name */
    NORULES,
};

/* OpenELMModel.modify_tensors: proj_1 = gate (this layer's FFN width), up */
static const conv_split openelm_proj_1 = {
    (const char *const[]){"blk.%b.ffn_gate", "blk.%b.ffn_up", NULL}, as_is2, h2g_rows_openelm_ffn};

static const conv_rule openelm_rules[] = {
    {.op = OP_SPLIT, .m = M_SUFFIX, .pat = ".ffn.proj_1.weight", .split = &openelm_proj_1},
    NORULES,
};

/* JaisModel.modify_tensors: Conv1D weights transposed, the embedding and the
 * head scaled (GGUF keeps no scale: they come back scaled, the scales 1) */
static const conv_rule jais_rules[] = {
    {OP_SKIP, M_SUFFIX, ".attn.bias", NULL, NULL, NULL, NULL, NULL},
    {OP_ALIBI_SLOPES, M_SUFFIX, "relative_pe.slopes", NULL, NULL, NULL, NULL, NULL},
    {OP_TRANSPOSE, M_SUFFIX, ".c_attn.weight", NULL, NULL, NULL, NULL, NULL},
    {OP_TRANSPOSE, M_SUFFIX, ".c_proj.weight", NULL, NULL, NULL, NULL, NULL},
    {OP_TRANSPOSE, M_SUFFIX, ".c_fc.weight", NULL, NULL, NULL, NULL, NULL},
    {OP_TRANSPOSE, M_SUFFIX, ".c_fc2.weight", NULL, NULL, NULL, NULL, NULL},
    {.op = OP_SCALE, .m = M_EXACT, .pat = "transformer.wte.weight", .factor = &conv_calc_jais_embd_scale},
    {.op = OP_SCALE, .m = M_EXACT, .pat = "lm_head.weight", .factor = &conv_calc_jais_width_scale},
    NORULES,
};

static const conv_rule granitemoe_rules[] = {
    PERMUTE_QK,
    {.op = OP_SPLIT, .m = M_SUFFIX, .pat = "block_sparse_moe.input_linear.weight", .split = &granitemoe_input_linear},
    NORULES,
};

static const conv_rule baichuan_rules[] = {
    {.op = OP_SPLIT, .m = M_SUFFIX, .pat = ".self_attn.W_pack.weight", .split = &baichuan_w_pack},
    NORULES,
};

static const conv_rule refact_rules[] = {
    {OP_RENAME, M_SUFFIX, ".attn.q.weight", ".attn.q_proj.weight", NULL, NULL, NULL, NULL},
    {.op = OP_SPLIT, .m = M_SUFFIX, .pat = ".attn.kv.weight", .split = &refact_kv},
    {.op = OP_SPLIT, .m = M_SUFFIX, .pat = ".mlp.gate_up_proj.weight", .split = &refact_gate_up},
    NORULES,
};

/* Qwen2VLModel.get_tensors: the vision tower is not in this GGUF */
static const conv_rule qwen2vl_rules[] = {
    {OP_SKIP, M_PREFIX, "visual.", NULL, NULL, NULL, NULL, NULL},
    NORULES,
};

/* PhiMoeModel.modify_tensors: Mixtral's experts stacked, nothing permuted */
static const conv_rule phimoe_rules[] = {
    {OP_STACK, M_CONTAINS, "block_sparse_moe.experts", NULL, "num_local_experts",
     "model.layers.%b.block_sparse_moe.experts.%x.%w.weight", "model.layers.%b.block_sparse_moe.experts.%w.weight",
     llama_ws},
    NORULES,
};

/* DeepseekModel.modify_tensors: permute (n_head_kv when it differs), experts stacked */
static const conv_rule deepseek_rules[] = {
    PERMUTE_QK,
    {OP_STACK, M_CONTAINS, "mlp.experts", NULL, "n_routed_experts", "model.layers.%b.mlp.experts.%x.%w.weight",
     "model.layers.%b.mlp.experts.%w.weight", proj_ws},
    NORULES,
};

/* NemotronModel.modify_tensors: layernorm1p, +1 folded into the weights */
static const conv_rule nemotron_rules[] = {
    {OP_ADD_ONE, M_SUFFIX, "norm.weight", NULL, NULL, NULL, NULL, NULL},
    NORULES,
};

static const conv_rule olmo_rules[] = {PERMUTE_QK, NORULES}; /* OlmoModel.modify_tensors */

/* MiniCPMModel, XverseModel.modify_tensors: the weights only (no bias rule) */
static const conv_rule permute_weights_rules[] = {
    {OP_PERMUTE_Q, M_SUFFIX, "q_proj.weight", NULL, NULL, NULL, NULL, NULL},
    {OP_PERMUTE_K, M_SUFFIX, "k_proj.weight", NULL, NULL, NULL, NULL, NULL},
    NORULES,
};

static const conv_rule gemma_rules[] = {
    {OP_SKIP, M_EXACT, "lm_head.weight", NULL, NULL, NULL, NULL, NULL},
    {OP_ADD_ONE, M_SUFFIX, "norm.weight", NULL, NULL, NULL, NULL, NULL},
    NORULES,
};

static const conv_rule qwen2moe_rules[] = {
    {OP_STACK, M_CONTAINS, "experts", NULL, "num_experts", "model.layers.%b.mlp.experts.%x.%w.weight",
     "model.layers.%b.mlp.experts.%w.weight", proj_ws},
    NORULES,
};

/* Qwen2MoeModel.modify_tensors (2026): the expert count by find_hparam */
static const conv_rule qwen3moe_rules[] = {
    {OP_STACK, M_CONTAINS, "experts", NULL, "num_local_experts|num_experts", "model.layers.%b.mlp.experts.%x.%w.weight",
     "model.layers.%b.mlp.experts.%w.weight", proj_ws},
    NORULES,
};

static const conv_rule deepseek2_rules[] = {
    {OP_RENAME, M_SUFFIX, "e_score_correction_bias", "e_score_correction.bias", NULL, NULL, NULL, NULL},
    {OP_SKIP, M_LAYER_BEYOND, "model.layers.", NULL, NULL, NULL, NULL, NULL}, /* MTP layers */
    {OP_STACK, M_CONTAINS, "mlp.experts", NULL, "n_routed_experts", "model.layers.%b.mlp.experts.%x.%w.weight",
     "model.layers.%b.mlp.experts.%w.weight", proj_ws},
    NORULES,
};

/* DeepseekV2Model.modify_tensors at 2026-02: kv_b_proj split for MLA */
static const conv_rule deepseek2_rules_2026[] = {
    {OP_RENAME, M_SUFFIX, "e_score_correction_bias", "e_score_correction.bias", NULL, NULL, NULL, NULL},
    {OP_SKIP, M_LAYER_BEYOND, "model.layers.", NULL, NULL, NULL, NULL, NULL}, /* MTP layers */
    {OP_STACK, M_CONTAINS, "mlp.experts", NULL, "n_routed_experts", "model.layers.%b.mlp.experts.%x.%w.weight",
     "model.layers.%b.mlp.experts.%w.weight", proj_ws},
    {OP_SPLIT_KV_B, M_SUFFIX, "kv_b_proj.weight", NULL, NULL, NULL, NULL, NULL},
    NORULES,
};

/* Mistral3Model.modify_tensors: the text model of a
 * Mistral3ForConditionalGeneration (language_model. dropped, the vision
 * tower and projector skipped), then LlamaModel's */
static const conv_rule mistral3_rules[] = {
    {OP_SKIP, M_CONTAINS, "multi_modal_projector", NULL, NULL, NULL, NULL, NULL},
    {OP_SKIP, M_CONTAINS, "vision_tower", NULL, NULL, NULL, NULL, NULL},
    {OP_RENAME, M_CONTAINS, "language_model.", "", NULL, NULL, NULL, NULL},
    PERMUTE_QK,
    NORULES,
};

/* Gemma3Model.modify_tensors: a ForConditionalGeneration's text model
 * (language_model. dropped, the vision tower and projector skipped), the
 * embedding's rows past the token count cut, +1 on every norm (computed in float32: the converter widens BF16 first) */
static const conv_rule gemma3_rules[] = {
    {OP_RENAME, M_CONTAINS, "language_model.", "", NULL, NULL, NULL, NULL},
    {OP_SKIP, M_PREFIX, "multi_modal_projector.", NULL, NULL, NULL, NULL, NULL},
    {OP_SKIP, M_PREFIX, "vision_tower.", NULL, NULL, NULL, NULL, NULL},
    {OP_SKIP, M_PREFIX, "multimodal_projector.", NULL, NULL, NULL, NULL, NULL},
    {OP_SKIP, M_PREFIX, "vision_model.", NULL, NULL, NULL, NULL, NULL},
    {OP_VOCAB_ROWS, M_CONTAINS, "embed_tokens.weight", NULL, NULL, NULL, NULL, NULL},
    {OP_ADD_ONE, M_SUFFIX, "norm.weight", NULL, NULL, NULL, NULL, NULL},
    NORULES,
};

/* HunYuanModel.modify_tensors: a tied lm_head skipped */
static const conv_rule hunyuan_rules[] = {
    {OP_SKIP_IF_TIED, M_EXACT, "lm_head.weight", NULL, NULL, NULL, NULL, NULL},
    NORULES,
};

/* Glm4MoeModel.modify_tensors: the visual part skipped, a multimodal
 * variant's language_model. dropped, experts stacked, the router bias renamed */
static const conv_rule glm4moe_rules[] = {
    {OP_SKIP, M_PREFIX, "model.visual.", NULL, NULL, NULL, NULL, NULL},
    {OP_RENAME, M_PREFIX, "model.language_model.", "model.", NULL, NULL, NULL, NULL},
    {OP_STACK, M_CONTAINS, "mlp.experts", NULL, "n_routed_experts", "model.layers.%b.mlp.experts.%x.%w.weight",
     "model.layers.%b.mlp.experts.%w.weight", proj_ws},
    {OP_RENAME, M_SUFFIX, "e_score_correction_bias", "e_score_correction.bias", NULL, NULL, NULL, NULL},
    NORULES,
};

/* Ernie4_5Model.modify_tensors: the Paddle checkpoints' fused qkv_proj
 * (q, k, v rows) and up_gate_proj (halves: gate, then up) split; GGUF -> HF
 * writes transformers' separate q/k/v and gate/up back */
static const conv_split ernie_qkv = {
    (const char *const[]){"blk.%b.attn_q", "blk.%b.attn_k", "blk.%b.attn_v", NULL},
    (const conv_op[]){OP_RENAME, OP_RENAME, OP_RENAME}, NULL, h2g_rows_ernie_qkv, true};
static const conv_split ernie_up_gate = {
    (const char *const[]){"blk.%b.ffn_gate", "blk.%b.ffn_up", NULL}, as_is2, NULL, NULL, true};

static const conv_rule ernie_rules[] = {
    {OP_SKIP, M_CONTAINS, "mlp_AR", NULL, NULL, NULL, NULL, NULL},
    {OP_SKIP, M_CONTAINS, "vision_model", NULL, NULL, NULL, NULL, NULL},
    {OP_RENAME, M_CONTAINS, "ernie.", "model.", NULL, NULL, NULL, NULL},
    {.op = OP_SPLIT, .m = M_CONTAINS, .pat = ".self_attn.qkv_proj.weight", .split = &ernie_qkv},
    {.op = OP_SPLIT, .m = M_CONTAINS, .pat = ".mlp.up_gate_proj.weight", .split = &ernie_up_gate},
    NORULES,
};

/* Ernie4_5MoeModel.modify_tensors: the router bias renamed, MTP parts
 * skipped, experts stacked gate, up, down; the rest as named (no split) */
static const char *const ernie_ws[] = {"gate_proj", "up_proj", "down_proj", NULL};
static const conv_rule ernie_moe_rules[] = {
    {OP_RENAME, M_SUFFIX, "e_score_correction_bias", "e_score_correction.bias", NULL, NULL, NULL, NULL},
    {OP_SKIP, M_PREFIX, "model.mtp_", NULL, NULL, NULL, NULL, NULL},
    {OP_STACK, M_CONTAINS, "mlp.experts", NULL, "moe_num_experts", "model.layers.%b.mlp.experts.%x.%w.weight",
     "model.layers.%b.mlp.experts.%w.weight", ernie_ws},
    NORULES,
};

/* Llama4Model.modify_tensors (no Q/K permutation): the text model of a
 * ForConditionalGeneration, the fused experts transposed and split */
static const conv_rule llama4_rules[] = {
    {OP_RENAME, M_PREFIX, "language_model.", "", NULL, NULL, NULL, NULL},
    {OP_EXPERTS_T, M_SUFFIX, "experts.gate_up_proj", NULL, NULL, NULL, NULL, NULL},
    {OP_EXPERTS_T, M_SUFFIX, "experts.down_proj", NULL, NULL, NULL, NULL, NULL},
    {OP_SKIP, M_CONTAINS, "multi_modal_projector", NULL, NULL, NULL, NULL, NULL},
    {OP_SKIP, M_CONTAINS, "vision_model", NULL, NULL, NULL, NULL, NULL},
    {OP_SKIP, M_CONTAINS, "vision_tower", NULL, NULL, NULL, NULL, NULL},
    NORULES,
};

static const conv_rule gpt2_rules[] = {
    {OP_SKIP, M_SUFFIX, ".attn.bias", NULL, NULL, NULL, NULL, NULL},
    {OP_SKIP, M_SUFFIX, ".attn.masked_bias", NULL, NULL, NULL, NULL, NULL},
    {OP_TRANSPOSE, M_SUFFIX, ".c_attn.weight", NULL, NULL, NULL, NULL, NULL},
    {OP_TRANSPOSE, M_SUFFIX, ".c_proj.weight", NULL, NULL, NULL, NULL, NULL},
    {OP_TRANSPOSE, M_SUFFIX, ".c_fc.weight", NULL, NULL, NULL, NULL, NULL},
    {OP_ALSO_OUTPUT, M_EXACT, "token_embd.weight", NULL, NULL, NULL, NULL, NULL}, /* a GGUF name */
    NORULES,
};

/* BloomModel.modify_tensors: "transformer." dropped, the per-head fused
 * qkv re-ordered to q | k | v (weight and bias), the embedding written once
 * more as output when the checkpoint has no head of its own */
static const conv_rule bloom_rules[] = {
    {OP_RENAME, M_PREFIX, "transformer.", "", NULL, NULL, NULL, NULL},
    {OP_QKV_PER_HEAD, M_CONTAINS, ".self_attention.query_key_value.", NULL, NULL, NULL, NULL, NULL},
    {OP_ALSO_OUTPUT_UNTIED, M_EXACT, "token_embd.weight", NULL, NULL, NULL, NULL, NULL},
    NORULES,
};

/* DbrxModel.modify_tensors: the expert parameters (no ".weight" in their
 * names) viewed as [experts][ff][embd]; w2's last two dimensions swapped */
static const conv_rule dbrx_rules[] = {
    {OP_RENAME, M_SUFFIX, ".ffn.experts.mlp.w1", ".ffn.experts.mlp.w1.weight", NULL, NULL, NULL, NULL},
    {OP_RENAME, M_SUFFIX, ".ffn.experts.mlp.v1", ".ffn.experts.mlp.v1.weight", NULL, NULL, NULL, NULL},
    {OP_RENAME, M_SUFFIX, ".ffn.experts.mlp.w2", ".ffn.experts.mlp.w2.weight", NULL, NULL, NULL, NULL},
    {OP_VIEW_EXPERTS, M_SUFFIX, ".ffn.experts.mlp.w1.weight", NULL, "ffn_config.moe_num_experts", NULL, NULL, NULL},
    {OP_VIEW_EXPERTS, M_SUFFIX, ".ffn.experts.mlp.v1.weight", NULL, "ffn_config.moe_num_experts", NULL, NULL, NULL},
    {OP_VIEW_EXPERTS_T, M_SUFFIX, ".ffn.experts.mlp.w2.weight", NULL, "ffn_config.moe_num_experts", NULL, NULL, NULL},
    NORULES,
};

static const conv_rule stablelm_rules[] = {
    {OP_STACK, M_CONTAINS, "q_layernorm.norms", NULL, "num_attention_heads",
     "model.layers.%b.self_attn.q_layernorm.norms.%x.weight", "model.layers.%b.self_attn.q_layernorm.weight",
     one_w},
    {OP_STACK, M_CONTAINS, "k_layernorm.norms", NULL, "num_key_value_heads",
     "model.layers.%b.self_attn.k_layernorm.norms.%x.weight", "model.layers.%b.self_attn.k_layernorm.weight",
     one_w},
    NORULES,
};

static const conv_rule internlm2_rules[] = {
    {OP_QKV_GROUPED, M_CONTAINS, ".attention.wqkv", NULL, NULL, NULL, NULL, NULL},
    NORULES,
};

/* BertModel.modify_tensors (its subclasses' rules end with these) */
#define BERT_RULES                                                                            \
    {OP_RENAME, M_PREFIX, "bert.", "", NULL, NULL, NULL, NULL},                                \
    {OP_RENAME, M_SUFFIX, ".gamma", ".weight", NULL, NULL, NULL, NULL},                        \
    {OP_RENAME, M_SUFFIX, ".beta", ".bias", NULL, NULL, NULL, NULL},                           \
    {OP_SKIP, M_EXACT, "embeddings.position_ids", NULL, NULL, NULL, NULL, NULL},               \
    {OP_SKIP, M_EXACT, "pooler.dense.weight", NULL, NULL, NULL, NULL, NULL},                   \
    {OP_SKIP, M_EXACT, "pooler.dense.bias", NULL, NULL, NULL, NULL, NULL},                     \
    {OP_SKIP, M_PREFIX, "cls.predictions", NULL, NULL, NULL, NULL, NULL},                      \
    {OP_SKIP, M_PREFIX, "cls.seq_relationship", NULL, NULL, NULL, NULL, NULL}

static const conv_rule bert_rules[] = {
    BERT_RULES,
    NORULES,
};

/* RobertaModel / XLMRobertaModel.modify_tensors: "roberta." dropped, the
 * position rows before pad_token_id + 1 cut, then BertModel's rules */
static const conv_rule roberta_rules[] = {
    {OP_RENAME, M_PREFIX, "roberta.", "", NULL, NULL, NULL, NULL},
    {OP_DROP_ROWS, M_EXACT, "embeddings.position_embeddings.weight", NULL, "pad_token_id", NULL, NULL, NULL},
    BERT_RULES,
    NORULES,
};

/* JinaBertV2Model.get_tensors: gated_layers [2 * ff, h] cut into its
 * gate (first ff rows) and up halves, then BertModel's rules */
static const char *const jina_gated[] = {"mlp.gated_layers_w", "mlp.gated_layers_v", NULL};
static const conv_rule jina_rules[] = {
    {OP_CUT_ROWS, M_CONTAINS, "mlp.gated_layers", NULL, "intermediate_size", NULL, NULL, jina_gated},
    BERT_RULES,
    NORULES,
};

/* T5Model.modify_tensors: of decoder.embed_tokens, encoder.embed_tokens and
 * shared, the first met is the shared embedding, the others are skipped */
static const conv_rule t5_rules[] = {
    {OP_FIRST_OF, M_EXACT, "decoder.embed_tokens.weight", "shared.weight", "shared", NULL, NULL, NULL},
    {OP_FIRST_OF, M_EXACT, "encoder.embed_tokens.weight", "shared.weight", "shared", NULL, NULL, NULL},
    {OP_FIRST_OF, M_EXACT, "shared.weight", "shared.weight", "shared", NULL, NULL, NULL},
    NORULES,
};

/* BitnetModel.modify_tensors: the latent projection weights ternarised */
#define TERNARY(p) {OP_TERNARY, M_SUFFIX, p, NULL, NULL, NULL, NULL, NULL}
static const conv_rule bitnet_rules[] = {
    TERNARY("self_attn.q_proj.weight"), TERNARY("self_attn.k_proj.weight"), TERNARY("self_attn.v_proj.weight"),
    TERNARY("self_attn.o_proj.weight"), TERNARY("mlp.gate_proj.weight"), TERNARY("mlp.up_proj.weight"),
    TERNARY("mlp.down_proj.weight"),
    NORULES,
};
#undef TERNARY

static const conv_rule gptneox_rules[] = {
    {OP_QKV_PER_HEAD, M_CONTAINS, ".attention.query_key_value.", NULL, NULL, NULL, NULL, NULL},
    NORULES,
};

static const conv_rule falcon_rules[] = {
    {OP_QKV_KV_GROUPS, M_CONTAINS, "query_key_value", NULL, NULL, NULL, NULL, NULL},
    NORULES,
};

static const conv_rule mamba_rules[] = {
    {OP_NEG_EXP, M_SUFFIX, ".A_log", NULL, NULL, NULL, NULL, NULL},
    {OP_DROP_IF_EMBD, M_EXACT, "output.weight", NULL, NULL, NULL, NULL, NULL}, /* a GGUF name */
    NORULES,
};

/* GptOssModel.modify_tensors / generate_extra_tensors: the MXFP4 experts
 * repacked first (gate/up rows interleaved), the packed parts not written
 * again, sinks get ".weight", biases renamed or split like the rows. */
static const char *const gpt_oss_down[] = {"down_proj.weight", NULL};
static const char *const gpt_oss_gate_up[] = {"gate_proj.weight", "up_proj.weight", NULL};
static const char *const gpt_oss_gate_up_bias[] = {"gate_proj.bias", "up_proj.bias", NULL};
static const conv_rule gpt_oss_rules[] = {
    {OP_MXFP4, M_SUFFIX, "down_proj_scales", NULL, NULL, NULL, NULL, gpt_oss_down},
    {OP_MXFP4, M_SUFFIX, "gate_up_proj_scales", NULL, NULL, NULL, NULL, gpt_oss_gate_up},
    {OP_SKIP, M_SUFFIX, "_proj_blocks", NULL, NULL, NULL, NULL, NULL},
    {OP_SKIP, M_SUFFIX, "_proj_scales", NULL, NULL, NULL, NULL, NULL},
    {OP_RENAME, M_SUFFIX, "self_attn.sinks", "self_attn.sinks.weight", NULL, NULL, NULL, NULL},
    {OP_RENAME, M_SUFFIX, "down_proj_bias", "down_proj.bias", NULL, NULL, NULL, NULL},
    {OP_DEINTERLEAVE, M_SUFFIX, "gate_up_proj_bias", NULL, NULL, NULL, NULL, gpt_oss_gate_up_bias},
    NORULES,
};

/* LFM2Model.modify_tensors: the short convolution's [d, 1, L] squeezed */
static const conv_rule lfm2_rules[] = {
    {OP_SQUEEZE1, M_SUFFIX, "conv.conv.weight", NULL, NULL, NULL, NULL, NULL},
    NORULES,
};

/* Qwen3NextModel.modify_tensors (and Qwen2MoeModel's experts): MTP layers
 * dropped, A = -exp(A_log), dt_bias -> dt_proj.bias, conv1d squeezed, every
 * norm + 1 but the gated norm of the linear attention; Qwen3-Next's own
 * in_proj_qkvz re-split and per-expert tensors stacked (Qwen3.5 ships
 * neither: its separate in_proj_* and packed experts) */
#define QWEN3NEXT_RULES                                                                                  \
    {OP_SKIP, M_PREFIX, "mtp", NULL, NULL, NULL, NULL, NULL},                                        \
    {OP_NEG_EXP, M_SUFFIX, ".A_log", NULL, NULL, NULL, NULL, NULL},                                   \
    {OP_RENAME, M_SUFFIX, ".dt_bias", ".dt_proj.bias", NULL, NULL, NULL, NULL},                       \
    {OP_SQUEEZE1, M_CONTAINS, "conv1d", NULL, NULL, NULL, NULL, NULL},                                \
    {OP_STOP, M_SUFFIX, "linear_attn.norm.weight", NULL, NULL, NULL, NULL, NULL},                     \
    {OP_ADD_ONE, M_SUFFIX, "norm.weight", NULL, NULL, NULL, NULL, NULL}
static const conv_rule qwen3next_rules[] = {
    QWEN3NEXT_RULES,
    {OP_QKVZ, M_CONTAINS, "in_proj_qkvz.weight", NULL, NULL, NULL, NULL, NULL},
    {OP_STACK, M_CONTAINS, "mlp.experts.", NULL, "num_local_experts|num_experts",
     "model.layers.%b.mlp.experts.%x.%w.weight", "model.layers.%b.mlp.experts.%w.weight", proj_ws},
    NORULES,
};

/* Qwen3_5(Moe)TextModel: the language model of the multimodal checkpoint
 * (language_model. dropped, the vision tower skipped), V heads re-ordered
 * to tiled order (_LinearAttentionVReorderBase), packed experts split */
static const char *const qwen35_gate_up[] = {"mlp.experts.gate_proj.weight", "mlp.experts.up_proj.weight", NULL};
static const conv_rule qwen35_rules[] = {
    {OP_RENAME, M_CONTAINS, "language_model.", "", NULL, NULL, NULL, NULL},
    {OP_SKIP, M_PREFIX, "model.visual", NULL, NULL, NULL, NULL, NULL},
    {OP_VHEADS, M_CONTAINS, "linear_attn.in_proj_qkv.", "qkv", NULL, NULL, NULL, NULL},
    {OP_VHEADS, M_CONTAINS, "linear_attn.in_proj_z.", "rows", NULL, NULL, NULL, NULL},
    {OP_VHEADS, M_CONTAINS, "linear_attn.in_proj_b.", "heads", NULL, NULL, NULL, NULL},
    {OP_VHEADS, M_CONTAINS, "linear_attn.in_proj_a.", "heads", NULL, NULL, NULL, NULL},
    {OP_VHEADS, M_SUFFIX, "linear_attn.A_log", "heads", NULL, NULL, NULL, NULL},
    {OP_VHEADS, M_SUFFIX, "linear_attn.dt_bias", "heads", NULL, NULL, NULL, NULL},
    {OP_VHEADS, M_CONTAINS, "linear_attn.conv1d", "qkv", NULL, NULL, NULL, NULL},
    {OP_VHEADS, M_CONTAINS, "linear_attn.out_proj.", "cols", NULL, NULL, NULL, NULL},
    {OP_RENAME, M_SUFFIX, "mlp.experts.down_proj", "mlp.experts.down_proj.weight", NULL, NULL, NULL, NULL},
    {OP_STOP, M_SUFFIX, "mlp.experts.down_proj.weight", NULL, NULL, NULL, NULL, NULL}, /* packed: not stacked */
    {OP_SPLIT_ROWS, M_SUFFIX, "mlp.experts.gate_up_proj", NULL, NULL, NULL, NULL, qwen35_gate_up},
    QWEN3NEXT_RULES,
    NORULES,
};

/* Mamba2Model.modify_tensors: dt_bias -> dt_proj.bias, conv1d squeezed,
 * A = -exp(A_log) and D with a trailing dimension of 1, the gated norm as
 * [n_group, d_inner / n_group] (groups: find_hparam with the "mamba" prefix) */
#define MAMBA2_RULES(groups)                                                                     \
    {OP_RENAME, M_SUFFIX, ".mamba.dt_bias", ".mamba.dt_proj.bias", NULL, NULL, NULL, NULL},      \
    {OP_SQUEEZE, M_SUFFIX, ".mamba.conv1d.weight", NULL, NULL, NULL, NULL, NULL},                 \
    {OP_NEG_EXP, M_SUFFIX, ".mamba.A_log", NULL, NULL, NULL, NULL, NULL},                         \
    {OP_UNSQUEEZE_LAST, M_SUFFIX, ".mamba.A_log", NULL, NULL, NULL, NULL, NULL},                  \
    {OP_UNSQUEEZE_LAST, M_SUFFIX, ".mamba.D", NULL, NULL, NULL, NULL, NULL},                      \
    {.op = OP_GROUPS, .m = M_SUFFIX, .pat = ".mamba.norm.weight", .count_key = groups}

/* GraniteMoeModel.modify_tensors: the shared expert's input_linear in two
 * equal halves (2 * shared_intermediate_size rows) */
static const conv_split granite_shared_mlp = {
    (const char *const[]){"blk.%b.ffn_gate_shexp", "blk.%b.ffn_up_shexp", NULL}, as_is2, NULL};

/* GraniteHybridModel.modify_tensors: Mamba-2 layers, Llama's (permuted)
 * attention layers, Granite-MoE's experts and shared expert */
static const conv_rule granite_hybrid_rules[] = {
    MAMBA2_RULES("n_groups|num_groups|mamba_n_groups|mamba_num_groups"),
    PERMUTE_QK,
    {.op = OP_SPLIT, .m = M_SUFFIX, .pat = "block_sparse_moe.input_linear.weight", .split = &granitemoe_input_linear},
    {.op = OP_SPLIT, .m = M_SUFFIX, .pat = "shared_mlp.input_linear.weight", .split = &granite_shared_mlp},
    NORULES,
};

/* GraniteMoeModel.modify_tensors without experts (num_local_experts 0 or
 * absent: Granite 4.0-H's dense form): the shared MLP is the block's FFN,
 * input_linear cut into ffn_gate / ffn_up, output_linear ffn_down */
static const conv_split granite_dense_mlp = {
    (const char *const[]){"blk.%b.ffn_gate", "blk.%b.ffn_up", NULL}, as_is2, NULL};
const conv_rule conv_granite_hybrid_dense_rules[] = {
    MAMBA2_RULES("n_groups|num_groups|mamba_n_groups|mamba_num_groups"),
    PERMUTE_QK,
    {.op = OP_SPLIT, .m = M_SUFFIX, .pat = "shared_mlp.input_linear.weight", .split = &granite_dense_mlp},
    {OP_RENAME, M_SUFFIX, "shared_mlp.output_linear.weight", "mlp.down_proj.weight", NULL, NULL, NULL, NULL},
    NORULES,
};

/* FalconH1Model.modify_tensors: Mamba2Model's steps, then the muP
 * multipliers folded in (in float32, one rounding per product, in its
 * elif order: a name takes the first pattern it contains) */
#define MUL(p, k) {.op = OP_SCALE, .m = M_CONTAINS, .pat = p, .count_key = k}
static const conv_rule falcon_h1_rules[] = {
    MAMBA2_RULES("n_groups|mamba_n_groups"),
    MUL("down_proj", "mlp_multipliers[1]"),
    {OP_STOP, M_CONTAINS, "down_proj", NULL, NULL, NULL, NULL, NULL},
    MUL("gate_proj", "mlp_multipliers[0]"),
    {OP_STOP, M_CONTAINS, "gate_proj", NULL, NULL, NULL, NULL, NULL},
    MUL("k_proj", "key_multiplier"),
    MUL("k_proj", "attention_in_multiplier"),
    {OP_STOP, M_CONTAINS, "k_proj", NULL, NULL, NULL, NULL, NULL},
    MUL("q_proj", "attention_in_multiplier"),
    {OP_STOP, M_CONTAINS, "q_proj", NULL, NULL, NULL, NULL, NULL},
    MUL("v_proj", "attention_in_multiplier"),
    {OP_STOP, M_CONTAINS, "v_proj", NULL, NULL, NULL, NULL, NULL},
    MUL("o_proj", "attention_out_multiplier"),
    {OP_STOP, M_CONTAINS, "o_proj", NULL, NULL, NULL, NULL, NULL},
    MUL("out_proj", "ssm_out_multiplier"),
    {OP_STOP, M_CONTAINS, "out_proj", NULL, NULL, NULL, NULL, NULL},
    MUL("in_proj", "ssm_in_multiplier"),
    {.op = OP_SCALE_ROWS, .m = M_CONTAINS, .pat = "in_proj", .count_key = "ssm_multipliers",
     .row_factors = h2g_falcon_h1_zxbcdt},
    {OP_STOP, M_CONTAINS, "in_proj", NULL, NULL, NULL, NULL, NULL},
    MUL("lm_head", "lm_head_multiplier"),
    {OP_STOP, M_CONTAINS, "lm_head", NULL, NULL, NULL, NULL, NULL},
    MUL("embed_tokens", "embedding_multiplier"),
    NORULES,
};
#undef MUL

/* Rwkv6Model.modify_tensors: the LoRA-style w1 matrices transposed, w2
 * [5, r, n] as [5, n, r], the decay and lerp vectors squeezed, output and
 * channel-mix value divided by 2 ** (bid // rescale_every), the five
 * time_maa_{w,k,v,r,g} stacked into time_mix_lerp_fused */
static const char *const rwkv6_lerp[] = {"w", "k", "v", "r", "g", NULL};
static const conv_rule rwkv6_rules[] = {
    {OP_TRANSPOSE, M_SUFFIX, ".attention.time_maa_w1", NULL, NULL, NULL, NULL, NULL},
    {OP_TRANSPOSE, M_SUFFIX, ".attention.time_decay_w1", NULL, NULL, NULL, NULL, NULL},
    {OP_TRANSPOSE, M_SUFFIX, ".attention.time_decay_w2", NULL, NULL, NULL, NULL, NULL},
    {OP_SWAP_LAST2, M_SUFFIX, ".attention.time_maa_w2", NULL, NULL, NULL, NULL, NULL},
    {OP_SQUEEZE, M_SUFFIX, ".attention.time_decay", NULL, NULL, NULL, NULL, NULL},
    {OP_SQUEEZE, M_SUFFIX, ".attention.time_maa_x", NULL, NULL, NULL, NULL, NULL},
    {OP_SQUEEZE, M_SUFFIX, ".feed_forward.time_maa_k", NULL, NULL, NULL, NULL, NULL},
    {OP_SQUEEZE, M_SUFFIX, ".feed_forward.time_maa_r", NULL, NULL, NULL, NULL, NULL},
    {.op = OP_HALVE_EVERY, .m = M_SUFFIX, .pat = ".attention.output.weight", .count_key = "rescale_every"},
    {.op = OP_HALVE_EVERY, .m = M_SUFFIX, .pat = ".feed_forward.value.weight", .count_key = "rescale_every"},
    {.op = OP_STACK_PARTS, .m = M_CONTAINS, .pat = ".attention.time_maa_", .merged_fmt = "blk.%b.time_mix_lerp_fused.weight",
     .ws = rwkv6_lerp},
    NORULES,
};

/* RWKV6Qwen2Model.modify_tensors: Rwkv6Model's steps on the self_attn names
 * (the rescaled output only with rescale_every), then time_mix_w1 / w2 in
 * w k v r g order */
static const conv_rule rwkv6qwen2_rules[] = {
    {OP_TRANSPOSE, M_SUFFIX, ".self_attn.time_maa_w1", NULL, NULL, NULL, NULL, NULL},
    {OP_RKVWG, M_SUFFIX, ".self_attn.time_maa_w1", NULL, NULL, NULL, NULL, NULL},
    {OP_TRANSPOSE, M_SUFFIX, ".self_attn.time_decay_w1", NULL, NULL, NULL, NULL, NULL},
    {OP_TRANSPOSE, M_SUFFIX, ".self_attn.time_decay_w2", NULL, NULL, NULL, NULL, NULL},
    {OP_SWAP_LAST2, M_SUFFIX, ".self_attn.time_maa_w2", NULL, NULL, NULL, NULL, NULL},
    {OP_RKVWG, M_SUFFIX, ".self_attn.time_maa_w2", NULL, NULL, NULL, NULL, NULL},
    {OP_SQUEEZE, M_SUFFIX, ".self_attn.time_decay", NULL, NULL, NULL, NULL, NULL},
    {OP_SQUEEZE, M_SUFFIX, ".self_attn.time_maa_x", NULL, NULL, NULL, NULL, NULL},
    {.op = OP_HALVE_EVERY, .m = M_SUFFIX, .pat = ".self_attn.o_proj.weight", .count_key = "rescale_every"},
    {.op = OP_STACK_PARTS, .m = M_CONTAINS, .pat = ".self_attn.time_maa_", .merged_fmt = "blk.%b.time_mix_lerp_fused.weight",
     .ws = rwkv6_lerp},
    NORULES,
};

/* GPT2Model at 2026-02: the tied head is no longer written twice */
static const conv_rule gpt2_rules_2026[] = {
    {OP_SKIP, M_SUFFIX, ".attn.bias", NULL, NULL, NULL, NULL, NULL},
    {OP_SKIP, M_SUFFIX, ".attn.masked_bias", NULL, NULL, NULL, NULL, NULL},
    {OP_TRANSPOSE, M_SUFFIX, ".c_attn.weight", NULL, NULL, NULL, NULL, NULL},
    {OP_TRANSPOSE, M_SUFFIX, ".c_proj.weight", NULL, NULL, NULL, NULL, NULL},
    {OP_TRANSPOSE, M_SUFFIX, ".c_fc.weight", NULL, NULL, NULL, NULL, NULL},
    NORULES,
};

/* MambaModel at 2026-02: conv1d [d_inner, 1, d_conv] squeezed to 2-D */
static const conv_rule mamba_rules_2026[] = {
    {OP_NEG_EXP, M_SUFFIX, ".A_log", NULL, NULL, NULL, NULL, NULL},
    {OP_SQUEEZE, M_SUFFIX, ".conv1d.weight", NULL, NULL, NULL, NULL, NULL},
    {OP_DROP_IF_EMBD, M_EXACT, "output.weight", NULL, NULL, NULL, NULL, NULL}, /* a GGUF name */
    NORULES,
};

/* ------------------------------------------------------ hyper-parameters */

static const conv_hp llama_hp[] = {
    BASE,
    {"vocab_size", 'u', "vocab_size", 0, NULL, NULL},
    CALC("rope.dimension_count", 'u', rope_dim_llama, 0),
    BLOCK(rope_linear),
    END,
};

/* DeciModel.set_gguf_parameters, DeciLM-7B: Model's keys, then the per-layer
 * KV heads (an i32 array) when the config lists them, then LlamaModel's */
static const conv_hp deci_hp[] = {
    BASE,
    {"attention.head_count_kv", 'u', "num_key_value_heads_per_layer", HP_OPT, NULL, NULL},
    {"vocab_size", 'u', "vocab_size", 0, NULL, NULL},
    CALC("rope.dimension_count", 'u', rope_dim_llama, 0),
    BLOCK(rope_linear),
    END,
};

/* Llama-3_1-Nemotron-51B (block_configs): its own order, the per-layer head
 * counts and FFN widths as i32 arrays (BLOCK(deci_layers)), key/value
 * lengths hidden_size // num_attention_heads */
static const conv_hp deci_nas_hp[] = {
    {"rope.freq_base", 'f', "rope_theta", HP_OPT, NULL, NULL},
    BLOCK(deci_layers),
    CALC("block_count", 'u', block_count, 0),
    {"context_length", 'u', "max_position_embeddings", 0, NULL, NULL},
    {"embedding_length", 'u', "hidden_size", 0, NULL, NULL},
    {"attention.layer_norm_rms_epsilon", 'f', "rms_norm_eps", 0, NULL, NULL},
    CALC("attention.key_length", 'u', head_dim_embd, 0),
    CALC("attention.value_length", 'u', head_dim_embd, 0),
    CALC("general.file_type", 'u', file_type, 0),
    {"vocab_size", 'u', "vocab_size", 0, NULL, NULL},
    CALC("rope.dimension_count", 'u', rope_dim_llama, 0),
    BLOCK(rope_linear),
    END,
};

static const conv_hp granite_hp[] = {
    BASE,
    {"vocab_size", 'u', "vocab_size", 0, NULL, NULL},
    CALC("rope.dimension_count", 'u', rope_dim_llama, 0),
    BLOCK(rope_linear),
    {"attention.scale", 'f', "attention_multiplier", HP_OPT | HP_TRUTHY, NULL, NULL},
    {"embedding_scale", 'f', "embedding_multiplier", HP_OPT | HP_TRUTHY, NULL, NULL},
    {"residual_scale", 'f', "residual_multiplier", HP_OPT | HP_TRUTHY, NULL, NULL},
    {"logit_scale", 'f', "logits_scaling", HP_OPT | HP_TRUTHY, NULL, NULL},
    END,
};

static const conv_hp qwen2_hp[] = {BASE, BLOCK(rope_yarn), END};

/* OlmoModel: non-parametric LayerNorm, its epsilon fixed at 1e-5 */
static const conv_hp olmo_hp[] = {
    BASE,
    {"attention.layer_norm_epsilon", 'f', "=1e-5", 0, NULL, NULL},
    {"attention.clamp_kqv", 'f', "clip_qkv", HP_OPT, NULL, NULL},
    END,
};

/* OrionModel.set_gguf_parameters: config says rms_norm_eps, the model
 * uses LayerNorm, so it is written as layer_norm_epsilon */
static const conv_hp orion_hp[] = {
    CALC("general.file_type", 'u', file_type, 0),
    {"tensor_data_layout", 's', "=Meta AI original pth", 0, NULL, NULL},
    {"context_length", 'u', "max_sequence_length|max_position_embeddings|model_max_length", 0, NULL, NULL},
    {"embedding_length", 'u', "hidden_size", 0, NULL, NULL},
    {"block_count", 'u', "num_hidden_layers", 0, NULL, NULL},
    {"feed_forward_length", 'u', "intermediate_size", 0, NULL, NULL},
    {"attention.head_count", 'u', "num_attention_heads", 0, NULL, NULL},
    {"attention.head_count_kv", 'u', "num_key_value_heads|num_attention_heads", 0, NULL, NULL},
    {"attention.layer_norm_epsilon", 'f', "rms_norm_eps", 0, NULL, NULL},
    END,
};

/* NemotronModel.set_gguf_parameters: rope dimension int(pct * n_embd) // n_head.
 * Its epsilon is find_hparam(layer_norm_eps, layer_norm_epsilon, norm_epsilon,
 * norm_eps), but the first three are written by the base keys already (a
 * duplicate key, refused by gguf-py and by us): only norm_eps converts, so
 * it is listed first - the name GGUF -> HF writes it back under. */
static const conv_hp nemotron_hp[] = {
    BASE,
    {"vocab_size", 'u', "vocab_size", 0, NULL, NULL},
    {"attention.layer_norm_epsilon", 'f', "norm_eps|layer_norm_eps|layer_norm_epsilon|norm_epsilon", 0, NULL, NULL},
    CALC("rope.dimension_count", 'u', rope_dim_phi2, 0),
    BLOCK(rope_nemotron),
    END,
};

/* BloomModel.set_gguf_parameters: no seq_length in BLOOM's config, so
 * the context length is the embedding width */
static const conv_hp bloom_hp[] = {
    {"context_length", 'u', "seq_length|hidden_size|n_embed", 0, NULL, NULL},
    {"embedding_length", 'u', "hidden_size|n_embed", 0, NULL, NULL},
    {"feed_forward_length", 'u', "4*hidden_size|n_embed", 0, NULL, NULL},
    {"block_count", 'u', "n_layer", 0, NULL, NULL},
    {"attention.head_count", 'u', "n_head|num_attention_heads", 0, NULL, NULL},
    {"attention.head_count_kv", 'u', "n_head|num_attention_heads", 0, NULL, NULL},
    {"attention.layer_norm_epsilon", 'f', "layer_norm_epsilon", 0, NULL, NULL},
    CALC("general.file_type", 'u', file_type, 0),
    END,
};

/* MPTModel.set_gguf_parameters: no general.file_type */
static const conv_hp mpt_hp[] = {
    {"context_length", 'u', "max_seq_len", 0, NULL, NULL},
    {"embedding_length", 'u', "d_model", 0, NULL, NULL},
    {"block_count", 'u', "n_layers", 0, NULL, NULL},
    {"feed_forward_length", 'u', "4*d_model", 0, NULL, NULL},
    {"attention.head_count", 'u', "n_heads", 0, NULL, NULL},
    {"attention.head_count_kv", 'u', "attn_config.kv_n_heads", HP_OPT | HP_TRUTHY, NULL, NULL},
    {"attention.layer_norm_epsilon", 'f', "=1e-5", 0, NULL, NULL},
    {"attention.clamp_kqv", 'f', "attn_config.clip_qkv", HP_OPT, NULL, NULL},
    BLOCK(mpt_alibi),
    END,
};

static const conv_hp dbrx_hp[] = {
    {"block_count", 'u', "n_layers", 0, NULL, NULL},
    {"context_length", 'u', "max_seq_len", 0, NULL, NULL},
    {"embedding_length", 'u', "d_model", 0, NULL, NULL},
    {"feed_forward_length", 'u', "ffn_config.ffn_hidden_size", 0, NULL, NULL},
    {"attention.head_count", 'u', "n_heads", 0, NULL, NULL},
    {"attention.head_count_kv", 'u', "attn_config.kv_n_heads", 0, NULL, NULL},
    {"rope.freq_base", 'f', "attn_config.rope_theta", 0, NULL, NULL},
    {"attention.clamp_kqv", 'f', "attn_config.clip_qkv", 0, NULL, NULL},
    {"expert_count", 'u', "ffn_config.moe_num_experts", 0, NULL, NULL},
    {"expert_used_count", 'u', "ffn_config.moe_top_k", 0, NULL, NULL},
    {"attention.layer_norm_epsilon", 'f', "=1e-5", 0, NULL, NULL},
    CALC("general.file_type", 'u', file_type, 0),
    END,
};

static const conv_hp base_hp[] = {BASE, END};

/* Qwen2VLModel: Model's keys and the M-RoPE sections */
static const conv_hp qwen2vl_hp[] = {BASE, BLOCK(mrope_sections), END};

/* OlmoeModel.set_gguf_parameters: the RMS epsilon fixed at 1e-5 */
static const conv_hp olmoe_hp[] = {
    BASE,
    {"attention.layer_norm_rms_epsilon", 'f', "=1e-5", 0, NULL, NULL},
    {"expert_count", 'u', "num_experts", HP_OPT, NULL, NULL},
    END,
};

/* MiniCPMModel.set_gguf_parameters: Model's keys and the three scales */
static const conv_hp minicpm_hp[] = {BASE, BLOCK(minicpm_scales), END};

/* ExaoneModel.set_gguf_parameters */
static const conv_hp exaone_hp[] = {
    {"embedding_length", 'u', "hidden_size", 0, NULL, NULL},
    {"attention.head_count", 'u', "num_attention_heads", 0, NULL, NULL},
    {"attention.head_count_kv", 'u', "num_key_value_heads|num_attention_heads", 0, NULL, NULL},
    {"context_length", 'u', "max_position_embeddings", 0, NULL, NULL},
    {"attention.layer_norm_rms_epsilon", 'f', "layer_norm_epsilon", 0, NULL, NULL},
    CALC("feed_forward_length", 'u', ffn_or_4x_embd, 0),
    {"block_count", 'u', "num_layers", 0, NULL, NULL},
    CALC("general.file_type", 'u', file_type, 0),
    {"rope.freq_base", 'f', "rope_theta", HP_OPT, NULL, NULL},
    CALC("rope.dimension_count", 'u', rope_dim_pct_or_one, 0),
    BLOCK(rope_linear),
    END,
};

/* MiniCPM3Model.set_gguf_parameters: MLA keys, the file type first */
static const conv_hp minicpm3_hp[] = {
    CALC("general.file_type", 'u', file_type, 0),
    {"context_length", 'u', "max_position_embeddings", 0, NULL, NULL},
    {"embedding_length", 'u', "hidden_size", 0, NULL, NULL},
    CALC("block_count", 'u', block_count, 0),
    {"feed_forward_length", 'u', "intermediate_size", 0, NULL, NULL},
    {"attention.head_count", 'u', "num_attention_heads", 0, NULL, NULL},
    {"attention.head_count_kv", 'u', "num_key_value_heads", 0, NULL, NULL},
    {"attention.layer_norm_rms_epsilon", 'f', "rms_norm_eps", 0, NULL, NULL},
    {"vocab_size", 'u', "vocab_size", 0, NULL, NULL},
    {"attention.q_lora_rank", 'u', "q_lora_rank", HP_OPT, NULL, NULL},
    {"attention.kv_lora_rank", 'u', "kv_lora_rank", 0, NULL, NULL},
    CALC("attention.key_length", 'u', qk_head_dim, 0),
    {"rope.dimension_count", 'u', "qk_rope_head_dim", 0, NULL, NULL},
    END,
};

/* BaichuanModel, XverseModel.set_gguf_parameters (the same code) */
static const conv_hp baichuan_hp[] = {
    {"tensor_data_layout", 's', "=Meta AI original pth", 0, NULL, NULL},
    {"context_length", 'u', "max_sequence_length|max_position_embeddings|model_max_length", 0, NULL, NULL},
    {"embedding_length", 'u', "hidden_size", 0, NULL, NULL},
    {"block_count", 'u', "num_hidden_layers", 0, NULL, NULL},
    {"feed_forward_length", 'u', "intermediate_size", 0, NULL, NULL},
    CALC("rope.dimension_count", 'u', head_dim_embd, 0),
    {"attention.head_count", 'u', "num_attention_heads", 0, NULL, NULL},
    {"attention.head_count_kv", 'u', "num_key_value_heads|num_attention_heads", 0, NULL, NULL},
    {"attention.layer_norm_rms_epsilon", 'f', "rms_norm_eps", 0, NULL, NULL},
    CALC("general.file_type", 'u', file_type, 0),
    BLOCK(rope_linear),
    END,
};

/* RefactModel.set_gguf_parameters (ALiBi: no rope keys) */
static const conv_hp refact_hp[] = {
    {"context_length", 'u', "n_positions", 0, NULL, NULL},
    {"embedding_length", 'u', "n_embd", 0, NULL, NULL},
    CALC("feed_forward_length", 'u', refact_ff, 0),
    {"block_count", 'u', "n_layer", 0, NULL, NULL},
    {"attention.head_count", 'u', "n_head", 0, NULL, NULL},
    {"attention.head_count_kv", 'u', "=1", 0, NULL, NULL},
    {"attention.layer_norm_rms_epsilon", 'f', "layer_norm_epsilon", 0, NULL, NULL},
    CALC("general.file_type", 'u', file_type, 0),
    END,
};

/* CodeShellModel.set_gguf_parameters: rope base 10000, linear scaling 1.0 */
static const conv_hp codeshell_hp[] = {
    {"context_length", 'u', "n_positions", 0, NULL, NULL},
    {"embedding_length", 'u', "n_embd", 0, NULL, NULL},
    {"feed_forward_length", 'u', "4*n_embd", 0, NULL, NULL},
    {"block_count", 'u', "n_layer", 0, NULL, NULL},
    {"attention.head_count", 'u', "n_head", 0, NULL, NULL},
    {"attention.head_count_kv", 'u', "num_query_groups", 0, NULL, NULL},
    {"attention.layer_norm_epsilon", 'f', "layer_norm_epsilon", 0, NULL, NULL},
    CALC("general.file_type", 'u', file_type, 0),
    {"rope.freq_base", 'f', "=10000.0", 0, NULL, NULL},
    {"rope.scaling.type", 's', "=linear", 0, NULL, NULL},
    {"rope.scaling.factor", 'f', "=1.0", 0, NULL, NULL},
    END,
};

/* OpenELMModel.set_gguf_parameters: per-layer arrays, RMS epsilon 1e-6
 * (fixed in its modeling code), rope dimension int(1.0 * head_dim) */
static const conv_hp openelm_hp[] = {
    CALC("block_count", 'u', block_count, 0),
    {"context_length", 'u', "max_context_length", 0, NULL, NULL},
    {"embedding_length", 'u', "model_dim", 0, NULL, NULL},
    BLOCK(openelm_layers),
    {"rope.freq_base", 'f', "rope_freq_constant", 0, NULL, NULL},
    {"attention.layer_norm_rms_epsilon", 'f', "=1e-6", 0, NULL, NULL},
    {"rope.dimension_count", 'u', "head_dim", 0, NULL, NULL},
    {"attention.key_length", 'u', "head_dim", 0, NULL, NULL},
    {"attention.value_length", 'u', "head_dim", 0, NULL, NULL},
    CALC("general.file_type", 'u', file_type, 0),
    END,
};

/* JaisModel.set_gguf_parameters (ALiBi; max_alibi_bias came first) */
static const conv_hp jais_hp[] = {
    {"block_count", 'u', "n_layer", 0, NULL, NULL},
    {"context_length", 'u', "n_positions", 0, NULL, NULL},
    {"embedding_length", 'u', "n_embd", 0, NULL, NULL},
    {"feed_forward_length", 'u', "n_inner", 0, NULL, NULL},
    {"attention.head_count", 'u', "n_head", 0, NULL, NULL},
    {"attention.layer_norm_epsilon", 'f', "layer_norm_epsilon", 0, NULL, NULL},
    CALC("general.file_type", 'u', file_type, 0),
    BLOCK(jais_config),
    END,
};

/* StarCoderModel.set_gguf_parameters: one KV head (multi-query) */
static const conv_hp starcoder_hp[] = {
    {"context_length", 'u', "n_positions", 0, NULL, NULL},
    {"embedding_length", 'u', "n_embd", 0, NULL, NULL},
    {"feed_forward_length", 'u', "4*n_embd", 0, NULL, NULL},
    {"block_count", 'u', "n_layer", 0, NULL, NULL},
    {"attention.head_count", 'u', "n_head", 0, NULL, NULL},
    {"attention.head_count_kv", 'u', "=1", 0, NULL, NULL},
    {"attention.layer_norm_epsilon", 'f', "layer_norm_epsilon", 0, NULL, NULL},
    CALC("general.file_type", 'u', file_type, 0),
    END,
};

/* DeepseekModel.set_gguf_parameters */
static const conv_hp deepseek_hp[] = {
    BASE,
    CALC("rope.dimension_count", 'u', rope_dim_llama, 0),
    {"rope.scaling.type", 's', "=none", 0, NULL, NULL},
    {"leading_dense_block_count", 'u', "first_k_dense_replace", 0, NULL, NULL},
    {"vocab_size", 'u', "vocab_size", 0, NULL, NULL},
    {"expert_feed_forward_length", 'u', "moe_intermediate_size", 0, NULL, NULL},
    {"expert_weights_scale", 'f', "=1.0", 0, NULL, NULL},
    {"expert_count", 'u', "n_routed_experts", 0, NULL, NULL},
    {"expert_shared_count", 'u', "n_shared_experts", 0, NULL, NULL},
    END,
};

static const conv_hp gemma_hp[] = {
    {"context_length", 'u', "max_position_embeddings", 0, NULL, NULL},
    {"embedding_length", 'u', "hidden_size", 0, NULL, NULL},
    {"block_count", 'u', "num_hidden_layers", 0, NULL, NULL},
    {"feed_forward_length", 'u', "intermediate_size", 0, NULL, NULL},
    {"attention.head_count", 'u', "num_attention_heads", 0, NULL, NULL},
    {"attention.head_count_kv", 'u', "num_key_value_heads|num_attention_heads", 0, NULL, NULL},
    {"attention.layer_norm_rms_epsilon", 'f', "rms_norm_eps", 0, NULL, NULL},
    {"attention.key_length", 'u', "head_dim", 0, NULL, NULL},
    {"attention.value_length", 'u', "head_dim", 0, NULL, NULL},
    CALC("general.file_type", 'u', file_type, 0),
    END,
};

static const conv_hp gemma2_hp[] = {
    {"context_length", 'u', "max_position_embeddings", 0, NULL, NULL},
    {"embedding_length", 'u', "hidden_size", 0, NULL, NULL},
    {"block_count", 'u', "num_hidden_layers", 0, NULL, NULL},
    {"feed_forward_length", 'u', "intermediate_size", 0, NULL, NULL},
    {"attention.head_count", 'u', "num_attention_heads", 0, NULL, NULL},
    {"attention.head_count_kv", 'u', "num_key_value_heads|num_attention_heads", 0, NULL, NULL},
    {"attention.layer_norm_rms_epsilon", 'f', "rms_norm_eps", 0, NULL, NULL},
    {"attention.key_length", 'u', "head_dim", 0, NULL, NULL},
    {"attention.value_length", 'u', "head_dim", 0, NULL, NULL},
    CALC("general.file_type", 'u', file_type, 0),
    {"attn_logit_softcapping", 'f', "attn_logit_softcapping", 0, NULL, NULL},
    {"final_logit_softcapping", 'f', "final_logit_softcapping", 0, NULL, NULL},
    {"attention.sliding_window", 'u', "sliding_window", 0, NULL, NULL},
    END,
};

static const conv_hp phi3_hp[] = {
    {"context_length", 'u', "n_positions|max_position_embeddings", 0, NULL, NULL},
    {"rope.scaling.original_context_length", 'u', "original_max_position_embeddings", 0, NULL, NULL},
    {"embedding_length", 'u', "hidden_size|n_embd", 0, NULL, NULL},
    {"feed_forward_length", 'u', "intermediate_size", 0, NULL, NULL},
    {"block_count", 'u', "num_hidden_layers|n_layer", 0, NULL, NULL},
    {"attention.head_count", 'u', "num_attention_heads|n_head", 0, NULL, NULL},
    {"attention.head_count_kv", 'u', "num_key_value_heads|n_head_kv", 0, NULL, NULL},
    {"attention.layer_norm_rms_epsilon", 'f', "rms_norm_eps", 0, NULL, NULL},
    CALC("rope.dimension_count", 'u', head_dim_embd, 0),
    {"rope.freq_base", 'f', "rope_theta", 0, NULL, NULL},
    CALC("general.file_type", 'u', file_type, 0),
    {"attention.sliding_window", 'u', "sliding_window||=0", 0, NULL, NULL},
    END,
};

/* PhiMoeModel: Phi3MiniModel's keys, then the experts' */
static const conv_hp phimoe_hp[] = {
    {"context_length", 'u', "n_positions|max_position_embeddings", 0, NULL, NULL},
    {"rope.scaling.original_context_length", 'u', "original_max_position_embeddings", 0, NULL, NULL},
    {"embedding_length", 'u', "hidden_size|n_embd", 0, NULL, NULL},
    {"feed_forward_length", 'u', "intermediate_size", 0, NULL, NULL},
    {"block_count", 'u', "num_hidden_layers|n_layer", 0, NULL, NULL},
    {"attention.head_count", 'u', "num_attention_heads|n_head", 0, NULL, NULL},
    {"attention.head_count_kv", 'u', "num_key_value_heads|n_head_kv", 0, NULL, NULL},
    {"attention.layer_norm_rms_epsilon", 'f', "rms_norm_eps", 0, NULL, NULL},
    CALC("rope.dimension_count", 'u', head_dim_embd, 0),
    {"rope.freq_base", 'f', "rope_theta", 0, NULL, NULL},
    CALC("general.file_type", 'u', file_type, 0),
    {"attention.sliding_window", 'u', "sliding_window||=0", 0, NULL, NULL},
    {"expert_used_count", 'u', "num_experts_per_tok", 0, NULL, NULL},
    {"expert_count", 'u', "num_local_experts", 0, NULL, NULL},
    END,
};

static const conv_hp phi2_hp[] = {
    {"context_length", 'u', "n_positions|max_position_embeddings", 0, NULL, NULL},
    {"embedding_length", 'u', "hidden_size|n_embd", 0, NULL, NULL},
    {"feed_forward_length", 'u', "4*hidden_size|n_embd", 0, NULL, NULL},
    {"block_count", 'u', "num_hidden_layers|n_layer", 0, NULL, NULL},
    {"attention.head_count", 'u', "num_attention_heads|n_head", 0, NULL, NULL},
    {"attention.head_count_kv", 'u', "num_attention_heads|n_head", 0, NULL, NULL},
    {"attention.layer_norm_epsilon", 'f', "layer_norm_epsilon|layer_norm_eps", 0, NULL, NULL},
    CALC("rope.dimension_count", 'u', rope_dim_phi2, 0),
    CALC("general.file_type", 'u', file_type, 0),
    {"tokenizer.ggml.add_bos_token", 'b', "=0", 0, NULL, NULL},
    END,
};

static const conv_hp qwen2moe_hp[] = {
    BASE,
    {"expert_count", 'u', "num_experts", HP_OPT, NULL, NULL},
    {"expert_feed_forward_length", 'u', "moe_intermediate_size", HP_OPT, NULL, NULL},
    {"expert_shared_feed_forward_length", 'u', "shared_expert_intermediate_size", HP_OPT, NULL, NULL},
    END,
};

static const conv_hp deepseek2_hp[] = {
    BASE,
    {"leading_dense_block_count", 'u', "first_k_dense_replace", 0, NULL, NULL},
    {"vocab_size", 'u', "vocab_size", 0, NULL, NULL},
    {"attention.q_lora_rank", 'u', "q_lora_rank", HP_OPT, NULL, NULL},
    {"attention.kv_lora_rank", 'u', "kv_lora_rank", 0, NULL, NULL},
    CALC("attention.key_length", 'u', qk_head_dim, 0),
    {"attention.value_length", 'u', "v_head_dim", 0, NULL, NULL},
    {"expert_feed_forward_length", 'u', "moe_intermediate_size", 0, NULL, NULL},
    {"expert_count", 'u', "n_routed_experts", 0, NULL, NULL},
    {"expert_shared_count", 'u', "n_shared_experts", 0, NULL, NULL},
    {"expert_weights_scale", 'f', "routed_scaling_factor", 0, NULL, NULL},
    {"expert_weights_norm", 'b', "norm_topk_prob", 0, NULL, NULL},
    CALC("expert_gating_func", 'u', gating_func, 0),
    {"rope.dimension_count", 'u', "qk_rope_head_dim", 0, NULL, NULL},
    BLOCK(rope_yarn_deepseek),
    END,
};

/* DeepseekV2Model.set_gguf_parameters at 2026-02: num_key_value_heads
 * written as 1 (MLA as MQA), key/value lengths of the compressed cache,
 * the _mla ones of the heads, the yarn log multiplier without a type check */
static const conv_hp deepseek2_hp_2026[] = {
    {"@set", 0, "num_key_value_heads=1", 0, NULL, NULL},
    BASE,
    {"leading_dense_block_count", 'u', "first_k_dense_replace", 0, NULL, NULL},
    {"vocab_size", 'u', "vocab_size", 0, NULL, NULL},
    {"attention.q_lora_rank", 'u', "q_lora_rank", HP_OPT, NULL, NULL},
    {"attention.kv_lora_rank", 'u', "kv_lora_rank", 0, NULL, NULL},
    CALC("attention.key_length", 'u', mla_key_length, 0),
    {"attention.value_length", 'u', "kv_lora_rank", 0, NULL, NULL},
    CALC("attention.key_length_mla", 'u', qk_head_dim, 0),
    {"attention.value_length_mla", 'u', "v_head_dim", 0, NULL, NULL},
    {"expert_feed_forward_length", 'u', "moe_intermediate_size|intermediate_size", 0, NULL, NULL},
    {"expert_count", 'u', "n_routed_experts", HP_OPT, NULL, NULL},
    {"expert_shared_count", 'u', "n_shared_experts||=0", 0, NULL, NULL},
    {"expert_weights_scale", 'f', "routed_scaling_factor", HP_OPT, NULL, NULL},
    {"expert_weights_norm", 'b', "norm_topk_prob", HP_OPT | HP_TRUTHY, NULL, NULL},
    {"rope.dimension_count", 'u', "qk_rope_head_dim", 0, NULL, NULL},
    CALC("rope.scaling.yarn_log_multiplier", 'f', yarn_log_mul_2026, HP_OPT),
    END,
};

/* LlamaModel.set_gguf_parameters (2026): the base keys take the rope scaling */
static const conv_hp llama_hp_2026[] = {
    BASE,
    {"vocab_size", 'u', "vocab_size", 0, NULL, NULL},
    CALC("rope.dimension_count", 'u', rope_dim_llama, 0),
    END,
};

/* Mistral3Model (model_type ministral3): yarn's log multiplier is
 * rope_parameters' mscale_all_dim as it is, the temperature scale its
 * llama_4_scaling_beta */
static const conv_hp mistral3_hp[] = {
    BASE,
    {"vocab_size", 'u', "vocab_size", 0, NULL, NULL},
    CALC("rope.dimension_count", 'u', rope_dim_llama, 0),
    {"rope.scaling.yarn_log_multiplier", 'f', "rope:mscale_all_dim", 0, NULL, NULL},
    {"attention.temperature_scale", 'f', "rope:llama_4_scaling_beta", 0, NULL, NULL},
    END,
};

/* MistralModel (--mistral-format): LlamaModel.modify_tensors with
 * undo_permute False (Mistral's wq/wk are already in GGUF's rotary order)
 * and the vision/audio towers of params.json directories skipped */
static const conv_rule mistral_fmt_rules[] = {
    {OP_SKIP, M_PREFIX, "vision_encoder.", NULL, NULL, NULL, NULL, NULL},
    {OP_SKIP, M_PREFIX, "vision_language_adapter.", NULL, NULL, NULL, NULL, NULL},
    {OP_SKIP, M_PREFIX, "patch_merger.", NULL, NULL, NULL, NULL, NULL},
    {OP_SKIP, M_PREFIX, "pre_mm_projector_norm", NULL, NULL, NULL, NULL, NULL},
    {OP_SKIP, M_PREFIX, "audio_encoder.", NULL, NULL, NULL, NULL, NULL},
    NORULES,
};

/* MistralModel.set_gguf_parameters: TextModel's keys (params.json's dim,
 * hidden_dim, n_heads, n_kv_heads, norm_eps are among find_hparam's
 * names), no vocab_size (_set_vocab_mistral writes it after the tokens),
 * LlamaModel's rope dimension (head_dim), then set_mistral_config: the yarn
 * block and llama_4_scaling's beta as the temperature scale */
static const conv_hp mistral_fmt_hp[] = {
    BASE,
    CALC("rope.dimension_count", 'u', rope_dim_llama, 0),
    BLOCK(mistral_yarn),
    {"attention.temperature_scale", 'f', "llama_4_scaling.beta", HP_OPT, NULL, NULL},
    END,
};

const conv_arch conv_mistral_llama = {"llama", (const char *const[]){"params.json", NULL}, AB_LLAMA, mistral_fmt_rules, mistral_fmt_hp,
                                      V_MISTRAL, AF_ONLY_2026};
const conv_arch conv_mistral_mistral3 = {"mistral3", (const char *const[]){"params.json", NULL}, AB_LLAMA, mistral_fmt_rules,
                                         mistral_fmt_hp, V_MISTRAL, AF_ONLY_2026};

/* Qwen2MoeModel.set_gguf_parameters (2026), Qwen3-MoE's */
static const conv_hp qwen3moe_hp[] = {
    BASE,
    {"expert_feed_forward_length", 'u', "moe_intermediate_size", HP_OPT, NULL, NULL},
    {"expert_shared_feed_forward_length", 'u', "shared_expert_intermediate_size", HP_OPT, NULL, NULL},
    END,
};

/* Gemma3Model.set_gguf_parameters: the base keys, then some again with
 * its defaults (written over in place, gguf-py 0.18) */
static const conv_hp gemma3_hp[] = {
    BASE,
    {"context_length", 'u', "max_position_embeddings|=131072", 0, NULL, NULL},
    {"attention.head_count", 'u', "num_attention_heads|=8", 0, NULL, NULL},
    {"attention.layer_norm_rms_epsilon", 'f', "rms_norm_eps|=1e-6", 0, NULL, NULL},
    {"attention.key_length", 'u', "head_dim|=256", 0, NULL, NULL},
    {"attention.value_length", 'u', "head_dim|=256", 0, NULL, NULL},
    {"rope.freq_base", 'f', "ropefull:rope_theta|=1000000.0", 0, NULL, NULL},
    {"final_logit_softcapping", 'f', "final_logit_softcapping", HP_OPT | HP_TRUTHY, NULL, NULL},
    CALC("attention.sliding_window", 'u', sliding_window_gemma3, HP_OPT),
    {"attention.head_count_kv", 'u', "num_key_value_heads|=4", 0, NULL, NULL},
    END,
};

/* HunYuanModel.set_gguf_parameters: dynamic-alpha rope folded into the theta */
static const conv_hp hunyuan_hp[] = {BASE, BLOCK(rope_hunyuan), END};

/* Glm4MoeModel.set_gguf_parameters: partial rotary dimension, routed
 * experts, sigmoid gating always, the NextN layer count */
static const conv_hp glm4moe_hp[] = {
    BASE,
    CALC("rope.dimension_count", 'u', rope_dim_glm4moe, 0),
    {"expert_count", 'u', "n_routed_experts", HP_OPT, NULL, NULL},
    {"expert_feed_forward_length", 'u', "moe_intermediate_size", HP_OPT, NULL, NULL},
    {"expert_shared_count", 'u', "n_shared_experts", HP_OPT, NULL, NULL},
    {"leading_dense_block_count", 'u', "first_k_dense_replace", HP_OPT, NULL, NULL},
    {"expert_gating_func", 'u', "=2", 0, NULL, NULL},
    {"expert_weights_scale", 'f', "routed_scaling_factor", HP_OPT, NULL, NULL},
    {"expert_weights_norm", 'b', "norm_topk_prob", HP_OPT, NULL, NULL},
    {"nextn_predict_layers", 'u', "num_nextn_predict_layers", HP_OPT, NULL, NULL},
    END,
};

/* Ernie4_5MoeModel.set_gguf_parameters: the shared experts' width is
 * intermediate_size // num_key_value_heads */
static const conv_hp ernie_moe_hp[] = {
    BASE,
    {"expert_count", 'u', "moe_num_experts", 0, NULL, NULL},
    {"expert_used_count", 'u', "moe_k", 0, NULL, NULL},
    {"interleave_moe_layer_step", 'u', "moe_layer_interval", 0, NULL, NULL},
    {"leading_dense_block_count", 'u', "moe_layer_start_index", 0, NULL, NULL},
    {"expert_feed_forward_length", 'u', "moe_intermediate_size", HP_OPT, NULL, NULL},
    {"expert_shared_count", 'u', "moe_num_shared_experts", HP_OPT, NULL, NULL},
    CALC("expert_shared_feed_forward_length", 'u', ernie_shexp_ffl, HP_OPT),
    END,
};

/* Llama4Model.set_gguf_parameters (intermediate_size swapped for
 * intermediate_size_mlp first: AF_LLAMA4) */
static const conv_hp llama4_hp[] = {
    BASE,
    {"vocab_size", 'u', "vocab_size", 0, NULL, NULL},
    CALC("rope.dimension_count", 'u', rope_dim_llama, 0),
    {"interleave_moe_layer_step", 'u', "interleave_moe_layer_step", 0, NULL, NULL},
    {"expert_feed_forward_length", 'u', "intermediate_size_moe", 0, NULL, NULL},
    CALC("attention.sliding_window", 'u', llama4_no_swa, HP_OPT),
    END,
};

static const conv_hp gpt2_hp[] = {
    {"block_count", 'u', "n_layer", 0, NULL, NULL},
    {"context_length", 'u', "n_ctx", 0, NULL, NULL},
    {"embedding_length", 'u', "n_embd", 0, NULL, NULL},
    {"feed_forward_length", 'u', "4*n_embd", 0, NULL, NULL},
    {"attention.head_count", 'u', "n_head", 0, NULL, NULL},
    {"attention.layer_norm_epsilon", 'f', "layer_norm_epsilon", 0, NULL, NULL},
    CALC("general.file_type", 'u', file_type, 0),
    END,
};

static const conv_hp stablelm_hp[] = {
    {"context_length", 'u', "max_position_embeddings", 0, NULL, NULL},
    {"embedding_length", 'u', "hidden_size", 0, NULL, NULL},
    {"block_count", 'u', "num_hidden_layers", 0, NULL, NULL},
    {"feed_forward_length", 'u', "intermediate_size", 0, NULL, NULL},
    CALC("rope.dimension_count", 'u', rope_dim_partial, 0),
    {"attention.head_count", 'u', "num_attention_heads", 0, NULL, NULL},
    {"attention.head_count_kv", 'u', "num_key_value_heads", 0, NULL, NULL},
    {"use_parallel_residual", 'b', "use_parallel_residual|=1", 0, NULL, NULL},
    {"attention.layer_norm_epsilon", 'f', "layer_norm_eps|norm_eps", 0, NULL, NULL},
    CALC("general.file_type", 'u', file_type, 0),
    END,
};

static const conv_hp command_r_hp[] = {
    BASE,
    {"logit_scale", 'f', "logit_scale", 0, NULL, NULL},
    {"rope.scaling.type", 's', "=none", 0, NULL, NULL},
    END,
};

/* Cohere2Model.set_gguf_parameters: rope dimension int(rotary_pct * head_dim) */
static const conv_hp cohere2_hp[] = {
    BASE,
    {"logit_scale", 'f', "logit_scale", 0, NULL, NULL},
    {"attention.sliding_window", 'u', "sliding_window", 0, NULL, NULL},
    {"vocab_size", 'u', "vocab_size", 0, NULL, NULL},
    CALC("rope.dimension_count", 'u', rope_dim_neox, 0),
    {"rope.scaling.type", 's', "=none", 0, NULL, NULL},
    END,
};

static const conv_hp internlm2_hp[] = {
    {"context_length", 'u', "max_position_embeddings", 0, NULL, NULL},
    {"block_count", 'u', "num_hidden_layers", 0, NULL, NULL},
    {"embedding_length", 'u', "hidden_size", 0, NULL, NULL},
    {"feed_forward_length", 'u', "intermediate_size", 0, NULL, NULL},
    {"rope.freq_base", 'f', "rope_theta", 0, NULL, NULL},
    {"attention.head_count", 'u', "num_attention_heads", 0, NULL, NULL},
    {"attention.layer_norm_rms_epsilon", 'f', "rms_norm_eps", 0, NULL, NULL},
    {"attention.head_count_kv", 'u', "num_key_value_heads", 0, NULL, NULL},
    CALC("general.file_type", 'u', file_type, 0),
    BLOCK(rope_linear),
    END,
};

static const conv_hp bert_hp[] = {
    BASE,
    {"attention.causal", 'b', "=0", 0, NULL, NULL},
    BLOCK(pooling_type),
    END,
};

/* BertModel's keys, with the context shortened by pad_token_id + 1 */
static const conv_hp roberta_hp[] = {
    CALC("block_count", 'u', block_count, 0),
    CALC("context_length", 'u', ctx_after_pad, HP_OPT),
    {"embedding_length", 'u', "hidden_size|n_embd", HP_OPT, NULL, NULL},
    {"feed_forward_length", 'u', "intermediate_size|n_inner", HP_OPT, NULL, NULL},
    {"attention.head_count", 'u', "num_attention_heads|n_head", HP_OPT, NULL, NULL},
    {"attention.head_count_kv", 'u', "num_key_value_heads", HP_OPT, NULL, NULL},
    {"rope.freq_base", 'f', "rope_theta", HP_OPT, NULL, NULL},
    {"attention.layer_norm_rms_epsilon", 'f', "rms_norm_eps", HP_OPT, NULL, NULL},
    {"attention.layer_norm_epsilon", 'f', "layer_norm_eps|layer_norm_epsilon|norm_epsilon", HP_OPT, NULL, NULL},
    {"expert_count", 'u', "num_local_experts", HP_OPT, NULL, NULL},
    {"expert_used_count", 'u', "num_experts_per_tok", HP_OPT, NULL, NULL},
    {"attention.key_length", 'u', "head_dim", HP_OPT, NULL, NULL},
    {"attention.value_length", 'u', "head_dim", HP_OPT, NULL, NULL},
    CALC("general.file_type", 'u', file_type, 0),
    {"attention.causal", 'b', "=0", 0, NULL, NULL},
    BLOCK(pooling_type),
    END,
};

/* NomicBertModel: BertModel's keys with n_ctx forced to 2048, then the
 * rotary base (a rope_theta too would be a duplicated key: not listed) */
static const conv_hp nomic_bert_hp[] = {
    CALC("block_count", 'u', block_count, 0),
    {"context_length", 'u', "max_position_embeddings|=2048", 0, NULL, NULL},
    {"embedding_length", 'u', "hidden_size|n_embd", HP_OPT, NULL, NULL},
    {"feed_forward_length", 'u', "intermediate_size|n_inner", HP_OPT, NULL, NULL},
    {"attention.head_count", 'u', "num_attention_heads|n_head", HP_OPT, NULL, NULL},
    {"attention.head_count_kv", 'u', "num_key_value_heads", HP_OPT, NULL, NULL},
    {"attention.layer_norm_rms_epsilon", 'f', "rms_norm_eps", HP_OPT, NULL, NULL},
    {"attention.layer_norm_epsilon", 'f', "layer_norm_eps|layer_norm_epsilon|norm_epsilon", HP_OPT, NULL, NULL},
    {"expert_count", 'u', "num_local_experts", HP_OPT, NULL, NULL},
    {"expert_used_count", 'u', "num_experts_per_tok", HP_OPT, NULL, NULL},
    {"attention.key_length", 'u', "head_dim", HP_OPT, NULL, NULL},
    {"attention.value_length", 'u', "head_dim", HP_OPT, NULL, NULL},
    CALC("general.file_type", 'u', file_type, 0),
    {"attention.causal", 'b', "=0", 0, NULL, NULL},
    BLOCK(pooling_type),
    {"rope.freq_base", 'f', "rotary_emb_base", 0, NULL, NULL},
    END,
};

/* T5Model.set_gguf_parameters: the epsilon written twice, as LayerNorm's
 * and as RMSNorm's; the context 512 when n_positions is not given */
static const conv_hp t5_hp[] = {
    {"context_length", 'u', "n_positions||=512", 0, NULL, NULL},
    {"embedding_length", 'u', "d_model", 0, NULL, NULL},
    {"feed_forward_length", 'u', "d_ff", 0, NULL, NULL},
    {"block_count", 'u', "num_layers", 0, NULL, NULL},
    {"attention.head_count", 'u', "num_heads", 0, NULL, NULL},
    {"attention.key_length", 'u', "d_kv", 0, NULL, NULL},
    {"attention.value_length", 'u', "d_kv", 0, NULL, NULL},
    {"attention.layer_norm_epsilon", 'f', "layer_norm_epsilon", 0, NULL, NULL},
    {"attention.relative_buckets_count", 'u', "relative_attention_num_buckets", 0, NULL, NULL},
    {"attention.layer_norm_rms_epsilon", 'f', "layer_norm_epsilon", 0, NULL, NULL},
    {"decoder_start_token_id", 'u', "decoder_start_token_id", 0, NULL, NULL},
    CALC("general.file_type", 'u', file_type, 0),
    END,
};

/* T5EncoderModel: T5's keys without decoder_start_token_id */
static const conv_hp t5encoder_hp[] = {
    {"context_length", 'u', "n_positions||=512", 0, NULL, NULL},
    {"embedding_length", 'u', "d_model", 0, NULL, NULL},
    {"feed_forward_length", 'u', "d_ff", 0, NULL, NULL},
    {"block_count", 'u', "num_layers", 0, NULL, NULL},
    {"attention.head_count", 'u', "num_heads", 0, NULL, NULL},
    {"attention.key_length", 'u', "d_kv", 0, NULL, NULL},
    {"attention.value_length", 'u', "d_kv", 0, NULL, NULL},
    {"attention.layer_norm_epsilon", 'f', "layer_norm_epsilon", 0, NULL, NULL},
    {"attention.relative_buckets_count", 'u', "relative_attention_num_buckets", 0, NULL, NULL},
    {"attention.layer_norm_rms_epsilon", 'f', "layer_norm_epsilon", 0, NULL, NULL},
    CALC("general.file_type", 'u', file_type, 0),
    END,
};

/* BitnetModel.set_gguf_parameters: linear rope scaling of factor 1, always */
static const conv_hp bitnet_hp[] = {
    BASE,
    {"rope.scaling.type", 's', "=linear", 0, NULL, NULL},
    {"rope.scaling.factor", 'f', "=1.0", 0, NULL, NULL},
    END,
};

static const conv_hp gptneox_hp[] = {
    {"context_length", 'u', "max_position_embeddings", 0, NULL, NULL},
    {"embedding_length", 'u', "hidden_size", 0, NULL, NULL},
    {"block_count", 'u', "num_hidden_layers", 0, NULL, NULL},
    {"feed_forward_length", 'u', "intermediate_size", 0, NULL, NULL},
    CALC("rope.dimension_count", 'u', rope_dim_neox, 0),
    {"attention.head_count", 'u', "num_attention_heads", 0, NULL, NULL},
    {"use_parallel_residual", 'b', "use_parallel_residual|=1", 0, NULL, NULL},
    {"attention.layer_norm_epsilon", 'f', "layer_norm_eps", 0, NULL, NULL},
    END,
};

static const conv_hp falcon_hp[] = {
    {"context_length", 'u', "=2048", 0, NULL, NULL}, /* "not in config.json" */
    {"tensor_data_layout", 's', "=jploski", 0, NULL, NULL},
    {"embedding_length", 'u', "hidden_size", 0, NULL, NULL},
    {"feed_forward_length", 'u', "4*hidden_size", 0, NULL, NULL},
    {"block_count", 'u', "num_hidden_layers|n_layer", 0, NULL, NULL},
    {"attention.head_count", 'u', "num_attention_heads|n_head", 0, NULL, NULL},
    {"attention.head_count_kv", 'u', "num_kv_heads|n_head_kv|=1", 0, NULL, NULL},
    {"attention.layer_norm_epsilon", 'f', "layer_norm_epsilon", 0, NULL, NULL},
    CALC("general.file_type", 'u', file_type, 0),
    END,
};

static const conv_hp mamba_hp[] = {
    {"context_length", 'u', "=1048576", 0, NULL, NULL}, /* 2**20: "arbitrary value" */
    {"embedding_length", 'u', "hidden_size|d_model", 0, NULL, NULL},
    {"feed_forward_length", 'u', "=0", 0, NULL, NULL},
    {"attention.head_count", 'u', "=0", 0, NULL, NULL},
    CALC("block_count", 'u', block_count, 0),
    {"ssm.conv_kernel", 'u', "conv_kernel|d_conv||=4", 0, NULL, NULL},
    CALC("ssm.inner_size", 'u', mamba_d_inner, 0),
    {"ssm.state_size", 'u', "state_size|d_state||=16", 0, NULL, NULL},
    CALC("ssm.time_step_rank", 'u', mamba_dt_rank, 0),
    {"attention.layer_norm_rms_epsilon", 'f', "layer_norm_epsilon|rms_norm_eps||=1e-5", 0, NULL, NULL},
    CALC("ssm.dt_b_c_rms", 'b', falcon_mamba, 0),
    CALC("general.file_type", 'u', file_type, 0),
    END,
};

/* GptOssModel.set_gguf_parameters */
static const conv_hp gpt_oss_hp[] = {
    BASE,
    {"attention.sliding_window", 'u', "sliding_window", 0, NULL, NULL},
    {"expert_feed_forward_length", 'u', "intermediate_size", 0, NULL, NULL},
    END,
};

/* LFM2Model.set_gguf_parameters: the base keys with num_key_value_heads
 * per layer (conv_arch.per_layer), then the epsilon and the feed-forward
 * length again (gguf-py 0.18 overwrites them in place) */
static const conv_hp lfm2_hp[] = {
    BASE,
    {"vocab_size", 'u', "vocab_size", 0, NULL, NULL},
    {"shortconv.l_cache", 'u', "conv_L_cache", 0, NULL, NULL},
    {"attention.layer_norm_rms_epsilon", 'f', "norm_eps", 0, NULL, NULL},
    CALC("feed_forward_length", 'u', lfm2_ff_dim, 0),
    END,
};

/* Qwen3NextModel.set_gguf_parameters (over Qwen2MoeModel's) */
static const conv_hp qwen3next_hp[] = {
    BASE,
    {"expert_feed_forward_length", 'u', "moe_intermediate_size", HP_OPT, NULL, NULL},
    {"expert_shared_feed_forward_length", 'u', "shared_expert_intermediate_size", HP_OPT, NULL, NULL},
    {"ssm.conv_kernel", 'u', "linear_conv_kernel_dim", 0, NULL, NULL},
    {"ssm.state_size", 'u', "linear_key_head_dim", 0, NULL, NULL},
    {"ssm.group_count", 'u', "linear_num_key_heads", 0, NULL, NULL},
    {"ssm.time_step_rank", 'u', "linear_num_value_heads", 0, NULL, NULL},
    CALC("ssm.inner_size", 'u', linear_inner, 0),
    {"full_attention_interval", 'u', "full_attention_interval|=4", 0, NULL, NULL},
    CALC("rope.dimension_count", 'u', rope_dim_qwen3next, 0),
    END,
};

/* GraniteHybridModel.set_gguf_parameters: GraniteMoeModel's keys (the
 * 2026 base keys, find_hparam also trying "mamba_"-prefixed names), the
 * Mamba-2 mixer's, head_count_kv per layer (conv_per_layer), no rope for a
 * hybrid: rope.scaling.finetuned false and the context 2**20 (written over
 * the first value in place) */
static const conv_hp granite_hybrid_hp[] = {
    BASE,
    {"vocab_size", 'u', "vocab_size", 0, NULL, NULL},
    CALC("rope.dimension_count", 'u', rope_dim_llama, 0),
    {"attention.scale", 'f', "attention_multiplier", HP_OPT | HP_TRUTHY, NULL, NULL},
    {"embedding_scale", 'f', "embedding_multiplier", HP_OPT | HP_TRUTHY, NULL, NULL},
    {"residual_scale", 'f', "residual_multiplier", HP_OPT | HP_TRUTHY, NULL, NULL},
    {"logit_scale", 'f', "logits_scaling", HP_OPT | HP_TRUTHY, NULL, NULL},
    {"expert_shared_feed_forward_length", 'u', "shared_intermediate_size", HP_OPT | HP_TRUTHY, NULL, NULL},
    {"ssm.conv_kernel", 'u', "conv_kernel|d_conv|mamba_conv_kernel|mamba_d_conv", 0, NULL, NULL},
    {"ssm.state_size", 'u', "state_size|d_state|state_dim|ssm_state_size|mamba_state_size|mamba_d_state|"
     "mamba_state_dim|mamba_ssm_state_size", 0, NULL, NULL},
    {"ssm.group_count", 'u', "n_groups|num_groups|mamba_n_groups|mamba_num_groups", 0, NULL, NULL},
    CALC("ssm.inner_size", 'u', granite_hybrid_inner, 0),
    {"ssm.time_step_rank", 'u', "n_heads|num_heads|mamba_n_heads|mamba_num_heads", 0, NULL, NULL},
    {"rope.scaling.finetuned", 'b', "=0", 0, NULL, NULL},
    {"context_length", 'u', "=1048576", 0, NULL, NULL},
    END,
};

/* FalconH1Model.set_gguf_parameters: Mamba2Model's keys (not the base
 * ones), then the attention's, some written again over the first value */
static const conv_hp falcon_h1_hp[] = {
    {"context_length", 'u', "max_position_embeddings|=0", 0, NULL, NULL},
    {"embedding_length", 'u', "hidden_size|d_model|dim|mamba_hidden_size|mamba_d_model|mamba_dim", 0, NULL, NULL},
    {"feed_forward_length", 'u', "intermediate_size", 0, NULL, NULL},
    {"attention.head_count", 'u', "num_attention_heads", 0, NULL, NULL},
    CALC("block_count", 'u', block_count, 0),
    {"ssm.conv_kernel", 'u', "conv_kernel|d_conv|mamba_conv_kernel|mamba_d_conv||=4", 0, NULL, NULL},
    {"ssm.inner_size", 'u', "mamba_d_ssm|mamba_mamba_d_ssm", 0, NULL, NULL},
    {"ssm.state_size", 'u', "state_size|d_state|mamba_state_size|mamba_d_state||=128", 0, NULL, NULL},
    CALC("ssm.time_step_rank", 'u', falcon_h1_dt_rank, 0),
    {"ssm.group_count", 'u', "n_groups|mamba_n_groups", 0, NULL, NULL},
    {"attention.layer_norm_rms_epsilon", 'f', "layer_norm_epsilon|rms_norm_eps|mamba_layer_norm_epsilon|"
     "mamba_rms_norm_eps||=1e-5", 0, NULL, NULL},
    CALC("general.file_type", 'u', file_type, 0),
    {"vocab_size", 'u', "vocab_size", 0, NULL, NULL},
    {"attention.head_count_kv", 'u', "num_key_value_heads", 0, NULL, NULL},
    {"attention.key_length", 'u', "head_dim", 0, NULL, NULL},
    {"attention.value_length", 'u', "head_dim", 0, NULL, NULL},
    {"rope.freq_base", 'f', "rope_theta", 0, NULL, NULL},
    END,
};

/* Rwkv6Model.set_gguf_parameters */
static const conv_hp rwkv6_hp[] = {
    {"context_length", 'u', "=1048576", 0, NULL, NULL}, /* "RWKV isn't context limited" */
    {"embedding_length", 'u', "hidden_size", 0, NULL, NULL},
    {"block_count", 'u', "num_hidden_layers", 0, NULL, NULL},
    {"attention.layer_norm_epsilon", 'f', "layer_norm_epsilon", 0, NULL, NULL},
    {"rescale_every_n_layers", 'u', "rescale_every", 0, NULL, NULL},
    {"wkv.head_size", 'u', "head_size", 0, NULL, NULL},
    CALC("time_mix_extra_dim", 'u', rwkv_mix_extra, 0),
    CALC("time_decay_extra_dim", 'u', rwkv_decay_extra, 0),
    CALC("feed_forward_length", 'u', rwkv_ff, 0),
    CALC("general.file_type", 'u', file_type, 0),
    {"attention.head_count", 'u', "=0", 0, NULL, NULL}, /* "required by llama.cpp, unused" */
    END,
};

/* RWKV6Qwen2Model.set_gguf_parameters */
static const conv_hp rwkv6qwen2_hp[] = {
    {"context_length", 'u', "=1048576", 0, NULL, NULL},
    {"embedding_length", 'u', "hidden_size", 0, NULL, NULL},
    {"block_count", 'u', "num_hidden_layers", 0, NULL, NULL},
    CALC("wkv.head_size", 'u', head_size_of_heads, 0),
    CALC("time_mix_extra_dim", 'u', rwkv_mix_extra_ge, 0),
    CALC("time_decay_extra_dim", 'u', rwkv_decay_extra_ge, 0),
    {"feed_forward_length", 'u', "intermediate_size", 0, NULL, NULL},
    CALC("general.file_type", 'u', file_type, 0),
    {"attention.layer_norm_rms_epsilon", 'f', "rms_norm_eps", 0, NULL, NULL},
    {"token_shift_count", 'u', "=1", 0, NULL, NULL},
    {"attention.head_count_kv", 'u', "num_key_value_heads", 0, NULL, NULL},
    {"attention.head_count", 'u', "=0", 0, NULL, NULL},
    END,
};

/* --------------------------------------------------------------- table */

#define CLASSES(...) ((const char *const[]){__VA_ARGS__, NULL})

const conv_arch conv_archs[] = {
    {"llama", CLASSES("LLaMAForCausalLM", "LlamaForCausalLM", "MistralForCausalLM", "MixtralForCausalLM"),
     AB_LLAMA, llama_rules, llama_hp, V_LLAMA, AF_LLAMA3_ROPE},
    {"qwen2", CLASSES("Qwen2ForCausalLM"), AB_QWEN2, no_rules, qwen2_hp, V_SPM_OR_BPE, 0},
    {"qwen3", CLASSES("Qwen3ForCausalLM"), AB_QWEN3, no_rules, qwen2_hp, V_SPM_OR_BPE, 0},
    {"gemma", CLASSES("GemmaForCausalLM"), AB_GEMMA, gemma_rules, gemma_hp, V_GEMMA, 0},
    {"gemma2", CLASSES("Gemma2ForCausalLM"), AB_GEMMA2, gemma_rules, gemma2_hp, V_GEMMA2, 0},
    {"phi3", CLASSES("Phi3ForCausalLM"), AB_PHI3, no_rules, phi3_hp, V_PHI3, AF_LONGROPE},
    {"phi2", CLASSES("PhiForCausalLM"), AB_PHI2, no_rules, phi2_hp, V_BPE, 0},
    {"qwen2moe", CLASSES("Qwen2MoeForCausalLM"), AB_QWEN2MOE, qwen2moe_rules, qwen2moe_hp, V_BPE, 0},
    {"deepseek2", CLASSES("DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM"), AB_DEEPSEEK2, deepseek2_rules,
     deepseek2_hp, V_BPE, 0},
    {"starcoder2", CLASSES("Starcoder2ForCausalLM"), AB_STARCODER2, no_rules, base_hp, V_BPE, 0},
    {"gpt2", CLASSES("GPT2LMHeadModel"), AB_GPT2, gpt2_rules, gpt2_hp, V_BPE, 0},
    {"stablelm", CLASSES("StableLmForCausalLM", "StableLMEpochForCausalLM"), AB_STABLELM, stablelm_rules,
     stablelm_hp, V_BPE, 0},
    {"olmo2", CLASSES("Olmo2ForCausalLM"), AB_OLMO2, no_rules, base_hp, V_BPE, 0},
    {"granite", CLASSES("GraniteForCausalLM"), AB_GRANITE, llama_rules, granite_hp, V_LLAMA, AF_NO_HEAD_DIM | AF_LLAMA3_ROPE},
    {"command-r", CLASSES("CohereForCausalLM"), AB_COMMAND_R, no_rules, command_r_hp, V_BPE, AF_CTX_MODEL_MAX},
    {"internlm2", CLASSES("InternLM2ForCausalLM"), AB_INTERNLM2, internlm2_rules, internlm2_hp, V_INTERNLM2, 0},
    {"bert", CLASSES("BertModel", "BertForMaskedLM", "CamembertModel"), AB_BERT, bert_rules, bert_hp, V_BERT, 0},
    {"bert", CLASSES("RobertaModel"), AB_BERT, roberta_rules, roberta_hp, V_ROBERTA, 0},
    {"bert", CLASSES("XLMRobertaModel", "XLMRobertaForSequenceClassification"), AB_BERT, roberta_rules, roberta_hp,
     V_XLMR, 0},
    {"nomic-bert", CLASSES("NomicBertModel"), AB_NOMIC_BERT, bert_rules, nomic_bert_hp, V_BERT, 0},
    {"jina-bert-v2", CLASSES("JinaBertModel", "JinaBertForMaskedLM"), AB_JINA_BERT_V2, jina_rules, bert_hp, V_JINA, 0},
    {"t5", CLASSES("T5WithLMHeadModel", "T5ForConditionalGeneration", "MT5ForConditionalGeneration",
                   "UMT5ForConditionalGeneration"), AB_T5, t5_rules, t5_hp, V_T5, 0},
    {"t5encoder", CLASSES("T5EncoderModel"), AB_T5ENCODER, t5_rules, t5encoder_hp, V_T5, 0},
    {"bitnet", CLASSES("BitnetForCausalLM"), AB_BITNET, bitnet_rules, bitnet_hp, V_SPM, 0},
    {"gptneox", CLASSES("GPTNeoXForCausalLM"), AB_GPTNEOX, gptneox_rules, gptneox_hp, V_BPE, 0},
    {"falcon", CLASSES("FalconForCausalLM", "RWForCausalLM"), AB_FALCON, falcon_rules, falcon_hp, V_BPE, 0},
    {"mamba", CLASSES("MambaForCausalLM", "MambaLMHeadModel", "FalconMambaForCausalLM"), AB_MAMBA, mamba_rules,
     mamba_hp, V_MAMBA, 0},
    {"olmo", CLASSES("OlmoForCausalLM"), AB_OLMO, olmo_rules, olmo_hp, V_BPE, 0},
    {"orion", CLASSES("OrionForCausalLM"), AB_ORION, no_rules, orion_hp, V_SPM, 0},
    /* InternLM3Model: a Llama in GGUF (model_arch LLAMA), Llama's keys
     * without llama3 rope factors, its own vocabulary step */
    {"llama", CLASSES("InternLM3ForCausalLM"), AB_LLAMA, llama_rules, llama_hp, V_INTERNLM3, 0},
    {"cohere2", CLASSES("Cohere2ForCausalLM"), AB_COHERE2, no_rules, cohere2_hp, V_BPE, 0},
    {"bloom", CLASSES("BloomForCausalLM", "BloomModel"), AB_BLOOM, bloom_rules, bloom_hp, V_BPE, 0},
    {"mpt", CLASSES("MPTForCausalLM"), AB_MPT, no_rules, mpt_hp, V_BPE, 0},
    {"dbrx", CLASSES("DbrxForCausalLM"), AB_DBRX, dbrx_rules, dbrx_hp, V_BPE, AF_FORCE_QUANT},
    {"nemotron", CLASSES("NemotronForCausalLM"), AB_NEMOTRON, nemotron_rules, nemotron_hp, V_NEMOTRON, 0},
    {"qwen2vl", CLASSES("Qwen2VLForConditionalGeneration"), AB_QWEN2VL, qwen2vl_rules, qwen2vl_hp, V_SPM_OR_BPE, 0},
    {"olmoe", CLASSES("OlmoeForCausalLM"), AB_OLMOE, qwen2moe_rules, olmoe_hp, V_BPE, 0},
    {"phimoe", CLASSES("PhiMoEForCausalLM"), AB_PHIMOE, phimoe_rules, phimoe_hp, V_PHI3, AF_LONGROPE},
    {"deepseek", CLASSES("DeepseekForCausalLM"), AB_DEEPSEEK, deepseek_rules, deepseek_hp, V_SPM_OR_BPE, 0},
    {"minicpm", CLASSES("MiniCPMForCausalLM"), AB_MINICPM, permute_weights_rules, minicpm_hp, V_SPM, AF_ROPE_FACTORS},
    {"exaone", CLASSES("ExaoneForCausalLM"), AB_EXAONE, no_rules, exaone_hp, V_BPE, AF_LLAMA3_ROPE},
    {"starcoder", CLASSES("GPTBigCodeForCausalLM"), AB_STARCODER, no_rules, starcoder_hp, V_BPE, 0},
    {"granitemoe", CLASSES("GraniteMoeForCausalLM"), AB_GRANITE_MOE, granitemoe_rules, granite_hp, V_LLAMA,
     AF_NO_HEAD_DIM | AF_LLAMA3_ROPE},
    {"baichuan", CLASSES("BaichuanForCausalLM", "BaiChuanForCausalLM"), AB_BAICHUAN, baichuan_rules, baichuan_hp, V_SPM,
     AF_K_PERMUTE_RATIO},
    {"refact", CLASSES("GPTRefactForCausalLM"), AB_REFACT, refact_rules, refact_hp, V_BPE, 0},
    {"xverse", CLASSES("XverseForCausalLM"), AB_XVERSE, permute_weights_rules, baichuan_hp, V_XVERSE, AF_K_PERMUTE_RATIO},
    {"openelm", CLASSES("OpenELMForCausalLM"), AB_OPENELM, openelm_rules, openelm_hp, V_OPENELM, AF_LAYERS_KEY},
    {"jais", CLASSES("JAISLMHeadModel"), AB_JAIS, jais_rules, jais_hp, V_BPE, AF_ALIBI_BIAS},
    {"codeshell", CLASSES("CodeShellForCausalLM"), AB_CODESHELL, codeshell_rules, codeshell_hp, V_BPE, 0},
    {"minicpm3", CLASSES("MiniCPM3ForCausalLM"), AB_MINICPM3, no_rules, minicpm3_hp, V_SPM, AF_ROPE_FACTORS_QK},
    {"rwkv6", CLASSES("Rwkv6ForCausalLM"), AB_RWKV6, rwkv6_rules, rwkv6_hp, V_RWKV, 0},
    {"rwkv6qwen2", CLASSES("RWKV6Qwen2ForCausalLM"), AB_RWKV6QWEN2, rwkv6qwen2_rules, rwkv6qwen2_hp, V_SPM_OR_BPE, 0},
    /* DeciLM: Nemotron-NAS's block_configs first (taken only with them), then DeciLM-7B's */
    {"deci", CLASSES("DeciLMForCausalLM"), AB_DECI, deci_rules, deci_nas_hp, V_DECI,
     AF_LLAMA3_ROPE | AF_LAYER_HEADS | AF_BLOCK_CONFIGS},
    {"deci", CLASSES("DeciLMForCausalLM"), AB_DECI, deci_rules, deci_hp, V_DECI, AF_LLAMA3_ROPE | AF_LAYER_HEADS},
    /* only in the 2026-02 converter (ecbcb7ea): its layout always */
    {"qwen3moe", CLASSES("Qwen3MoeForCausalLM"), AB_QWEN3MOE, qwen3moe_rules, qwen3moe_hp, V_BPE, AF_ONLY_2026},
    {"smollm3", CLASSES("SmolLM3ForCausalLM"), AB_LLAMA, llama_rules, llama_hp_2026, V_LLAMA,
     AF_ONLY_2026 | AF_LLAMA3_ROPE},
    {"mistral3", CLASSES("Ministral3ForCausalLM", "Mistral3ForConditionalGeneration"), AB_LLAMA, mistral3_rules,
     mistral3_hp, V_LLAMA, AF_ONLY_2026 | AF_LLAMA3_ROPE | AF_MINISTRAL3},
    {"gpt-oss", CLASSES("GptOssForCausalLM"), AB_GPT_OSS, gpt_oss_rules, gpt_oss_hp, V_BPE, AF_MXFP4 | AF_ONLY_2026},
    {"lfm2", CLASSES("Lfm2ForCausalLM", "LFM2ForCausalLM"), AB_LFM2, lfm2_rules, lfm2_hp, V_BPE, AF_ONLY_2026},
    {"qwen3next", CLASSES("Qwen3NextForCausalLM"), AB_QWEN3NEXT, qwen3next_rules, qwen3next_hp, V_BPE, AF_ONLY_2026},
    {"qwen35", CLASSES("Qwen3_5ForConditionalGeneration"), AB_QWEN35, qwen35_rules, qwen3next_hp, V_BPE, AF_ONLY_2026},
    {"qwen35moe", CLASSES("Qwen3_5MoeForConditionalGeneration"), AB_QWEN35MOE, qwen35_rules, qwen3next_hp, V_BPE,
     AF_ONLY_2026},
    /* Mistral3Model other than ministral3 (Mistral Small 3.1): arch llama,
     * LlamaModel's keys (hf2gguf.c switches to this row) */
    {"llama", CLASSES("Mistral3ForConditionalGeneration"), AB_LLAMA, mistral3_rules, llama_hp_2026, V_LLAMA,
     AF_ONLY_2026 | AF_LLAMA3_ROPE},
    {"gemma3", CLASSES("Gemma3ForCausalLM", "Gemma3ForConditionalGeneration"), AB_GEMMA3, gemma3_rules, gemma3_hp,
     V_GEMMA3, AF_ONLY_2026 | AF_GEMMA3},
    {"hunyuan-dense", CLASSES("HunYuanDenseV1ForCausalLM"), AB_HUNYUAN_DENSE, hunyuan_rules, hunyuan_hp, V_BPE,
     AF_ONLY_2026},
    {"glm4moe", CLASSES("Glm4MoeForCausalLM", "Glm4vMoeForConditionalGeneration"), AB_GLM4MOE, glm4moe_rules,
     glm4moe_hp, V_GLM, AF_ONLY_2026 | AF_NEXTN},
    {"ernie4_5", CLASSES("Ernie4_5_ForCausalLM", "Ernie4_5ForCausalLM"), AB_LLAMA, ernie_rules, base_hp, V_ERNIE,
     AF_ONLY_2026},
    {"llama4", CLASSES("Llama4ForConditionalGeneration", "Llama4ForCausalLM"), AB_LLAMA4, llama4_rules, llama4_hp,
     V_BPE, AF_ONLY_2026 | AF_LLAMA3_ROPE | AF_LLAMA4},
    {"ernie4_5-moe", CLASSES("Ernie4_5_MoeForCausalLM"), AB_ERNIE45MOE, ernie_moe_rules, ernie_moe_hp, V_ERNIE,
     AF_ONLY_2026},
    {"granitehybrid", CLASSES("GraniteMoeHybridForCausalLM"), AB_GRANITE_HYBRID, granite_hybrid_rules,
     granite_hybrid_hp, V_GRANITE_HYBRID, AF_ONLY_2026 | AF_NO_HEAD_DIM},
    {"falcon-h1", CLASSES("FalconH1ForCausalLM"), AB_FALCON_H1, falcon_h1_rules, falcon_h1_hp, V_BPE, AF_ONLY_2026},
};
const size_t conv_n_archs = sizeof(conv_archs) / sizeof(conv_archs[0]);

/* --------------------------------------- the 2026-02 converter's changes */

const conv_arch_2026 conv_archs_2026[] = {
    {AB_DEEPSEEK2, deepseek2_rules_2026, deepseek2_hp_2026},
    {AB_GPT2, gpt2_rules_2026, NULL},
    {AB_MAMBA, mamba_rules_2026, NULL},
};
const size_t conv_n_archs_2026 = sizeof(conv_archs_2026) / sizeof(conv_archs_2026[0]);

static const struct {
    const char *arch, *spec;
} conv_per_layer[] = {
    {"lfm2", "num_key_value_heads@layer_types:conv:full_attention"},
    {"granitehybrid", "num_key_value_heads@layer_types:mamba:attention"},
};

const char *conv_per_layer_of(const conv_arch *a)
{
    for (size_t i = 0; i < sizeof(conv_per_layer) / sizeof(conv_per_layer[0]); i++)
        if (!strcmp(conv_per_layer[i].arch, a->name))
            return conv_per_layer[i].spec;
    return NULL;
}

/* "KEY@KINDS:ZERO:OTHER" split into its parts (in buf). */
int conv_per_layer_parse(const char *spec, char *buf, size_t cap, const char **key, const char **kinds,
                         const char **zero, const char **other)
{
    snprintf(buf, cap, "%s", spec);
    char *at = strchr(buf, '@'), *c1 = at ? strchr(at, ':') : NULL, *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c2)
        return -1;
    *at = *c1 = *c2 = 0;
    *key = buf;
    *kinds = at + 1;
    *zero = c1 + 1;
    *other = c2 + 1;
    return 0;
}

/* Linear attention V heads, grouped by key head [nk][r][d] in the checkpoint,
 * tiled [r][nk][d] in GGUF (_LinearAttentionVReorderBase): the checkpoint
 * index of GGUF entry i (entries before `prefix` stay). */
int64_t conv_vheads_source(int64_t i, int64_t prefix, int64_t nk, int64_t nv, int64_t d)
{
    if (i < prefix)
        return i;
    int64_t v = i - prefix, r = nv / nk, j = v / (nk * d), g = v / d % nk, e = v % d;
    return prefix + (g * r + j) * d + e;
}
