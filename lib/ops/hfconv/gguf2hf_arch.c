/* gguf2hf_arch.c - the GGUF -> Hugging Face direction of the converter
 * tables: per GGUF architecture, the transformers class and model_type, and
 * for each GGUF tensor the Hugging Face name the modeling code loads (the
 * names of transformers' state dicts, as ../shared/convert-ref-arch's
 * directories hold them) with the inverse of what convert_hf_to_gguf.py did
 * to it. Hyper-parameters come back through the forward table's keys
 * (arch_table.c), so only names and inverse operations live here. */
#include "ops/hfconv/gguf2hf.h"

#define L "model.layers.{bid}."
#define ATTN(q, k, v, o) \
    {"blk.{bid}.attn_q", L q, R_UNPERMUTE_Q}, {"blk.{bid}.attn_k", L k, R_UNPERMUTE_K}, \
    {"blk.{bid}.attn_v", L v, R_PLAIN}, {"blk.{bid}.attn_output", L o, R_PLAIN}
#define ATTN_PLAIN(q, k, v, o) \
    {"blk.{bid}.attn_q", L q, R_PLAIN}, {"blk.{bid}.attn_k", L k, R_PLAIN}, \
    {"blk.{bid}.attn_v", L v, R_PLAIN}, {"blk.{bid}.attn_output", L o, R_PLAIN}
#define LLAMA_TOP \
    {"token_embd", "model.embed_tokens", R_PLAIN}, {"output_norm", "model.norm", R_PLAIN}, \
    {"output", "lm_head", R_PLAIN}
#define GATED_MLP \
    {"blk.{bid}.ffn_gate", L "mlp.gate_proj", R_PLAIN}, {"blk.{bid}.ffn_up", L "mlp.up_proj", R_PLAIN}, \
    {"blk.{bid}.ffn_down", L "mlp.down_proj", R_PLAIN}
#define END {NULL, NULL, R_PLAIN}

static const hf_rev_name llama_names[] = {
    LLAMA_TOP,
    {"blk.{bid}.attn_norm", L "input_layernorm", R_PLAIN},
    {"blk.{bid}.ffn_norm", L "post_attention_layernorm", R_PLAIN},
    ATTN("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj"),
    GATED_MLP,
    {"blk.{bid}.ffn_gate_inp", L "block_sparse_moe.gate", R_PLAIN},
    {"blk.{bid}.ffn_gate_exps", L "block_sparse_moe.experts.{x}.w1", R_UNSTACK},
    {"blk.{bid}.ffn_down_exps", L "block_sparse_moe.experts.{x}.w2", R_UNSTACK},
    {"blk.{bid}.ffn_up_exps", L "block_sparse_moe.experts.{x}.w3", R_UNSTACK},
    {"rope_freqs", NULL, R_SKIP}, /* made from rope_scaling (llama3): config carries it */
    END,
};

/* DeciLM: Llama's names; attn_output is a linear-attention layer's
 * linear_attn where the block has no attn_q (Nemotron-NAS) */
static const hf_rev_name deci_names[] = {
    LLAMA_TOP,
    {"blk.{bid}.attn_norm", L "input_layernorm", R_PLAIN},
    {"blk.{bid}.ffn_norm", L "post_attention_layernorm", R_PLAIN},
    {"blk.{bid}.attn_q", L "self_attn.q_proj", R_UNPERMUTE_Q},
    {"blk.{bid}.attn_k", L "self_attn.k_proj", R_UNPERMUTE_K},
    {"blk.{bid}.attn_v", L "self_attn.v_proj", R_PLAIN},
    {"blk.{bid}.attn_output", L "self_attn.o_proj|" L "self_attn.linear_attn", R_OUT_LINEAR},
    GATED_MLP,
    {"rope_freqs", NULL, R_SKIP}, /* made from rope_scaling (llama3): config carries it */
    END,
};

/* Qwen3's attention block: Llama's names unpermuted, per-head q/k norms */
#define QWEN3_ATTN \
    {"blk.{bid}.attn_norm", L "input_layernorm", R_PLAIN}, \
    {"blk.{bid}.ffn_norm", L "post_attention_layernorm", R_PLAIN}, \
    ATTN_PLAIN("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj"), \
    {"blk.{bid}.attn_q_norm", L "self_attn.q_norm", R_PLAIN}, \
    {"blk.{bid}.attn_k_norm", L "self_attn.k_norm", R_PLAIN}
/* Qwen2-MoE's routed experts, stacked by the converter */
#define QWEN_EXPERTS \
    {"blk.{bid}.ffn_gate_inp", L "mlp.gate", R_PLAIN}, \
    {"blk.{bid}.ffn_gate_exps", L "mlp.experts.{x}.gate_proj", R_UNSTACK}, \
    {"blk.{bid}.ffn_up_exps", L "mlp.experts.{x}.up_proj", R_UNSTACK}, \
    {"blk.{bid}.ffn_down_exps", L "mlp.experts.{x}.down_proj", R_UNSTACK}

/* Qwen2/Qwen3, OLMo-2, Command-R, StarCoder2: Llama's names, no permutation. */
static const hf_rev_name qwen_names[] = {
    LLAMA_TOP,
    QWEN3_ATTN,
    GATED_MLP,
    END,
};

/* Qwen3-MoE: Qwen3's attention, Qwen2-MoE's experts without a shared one */
static const hf_rev_name qwen3moe_names[] = {LLAMA_TOP, QWEN3_ATTN, QWEN_EXPERTS, END};

static const hf_rev_name olmo_names[] = {
    LLAMA_TOP,
    ATTN("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj"),
    GATED_MLP,
    END,
};

/* BitNet b1.58: Llama's names without permutation, sub-norms, ternary projections */
static const hf_rev_name bitnet_names[] = {
    LLAMA_TOP,
    {"blk.{bid}.attn_norm", L "input_layernorm", R_PLAIN},
    {"blk.{bid}.ffn_norm", L "post_attention_layernorm", R_PLAIN},
    {"blk.{bid}.attn_sub_norm", L "self_attn.inner_attn_ln", R_PLAIN},
    {"blk.{bid}.ffn_sub_norm", L "mlp.ffn_layernorm", R_PLAIN},
    {"blk.{bid}.attn_q", L "self_attn.q_proj", R_UNTERNARY},
    {"blk.{bid}.attn_k", L "self_attn.k_proj", R_UNTERNARY},
    {"blk.{bid}.attn_v", L "self_attn.v_proj", R_UNTERNARY},
    {"blk.{bid}.attn_output", L "self_attn.o_proj", R_UNTERNARY},
    {"blk.{bid}.ffn_gate", L "mlp.gate_proj", R_UNTERNARY},
    {"blk.{bid}.ffn_up", L "mlp.up_proj", R_UNTERNARY},
    {"blk.{bid}.ffn_down", L "mlp.down_proj", R_UNTERNARY},
    END,
};

/* Orion: Llama's names, LayerNorm with biases, no permutation */
static const hf_rev_name orion_names[] = {
    LLAMA_TOP,
    {"blk.{bid}.attn_norm", L "input_layernorm", R_PLAIN},
    {"blk.{bid}.ffn_norm", L "post_attention_layernorm", R_PLAIN},
    ATTN_PLAIN("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj"),
    GATED_MLP,
    END,
};

/* Nemotron: Llama's names, no gate; norm weights were stored +1 */
static const hf_rev_name nemotron_names[] = {
    {"token_embd", "model.embed_tokens", R_PLAIN}, {"output", "lm_head", R_PLAIN},
    {"output_norm", "model.norm", R_SUB_ONE},
    {"blk.{bid}.attn_norm", L "input_layernorm", R_SUB_ONE},
    {"blk.{bid}.ffn_norm", L "post_attention_layernorm", R_SUB_ONE},
    ATTN_PLAIN("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj"),
    {"blk.{bid}.ffn_up", L "mlp.up_proj", R_PLAIN}, {"blk.{bid}.ffn_down", L "mlp.down_proj", R_PLAIN},
    END,
};

static const hf_rev_name olmo2_names[] = {
    LLAMA_TOP,
    {"blk.{bid}.post_attention_norm", L "post_attention_layernorm", R_PLAIN},
    {"blk.{bid}.post_ffw_norm", L "post_feedforward_layernorm", R_PLAIN},
    ATTN_PLAIN("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj"),
    {"blk.{bid}.attn_q_norm", L "self_attn.q_norm", R_PLAIN},
    {"blk.{bid}.attn_k_norm", L "self_attn.k_norm", R_PLAIN},
    GATED_MLP,
    END,
};

static const hf_rev_name command_r_names[] = {
    LLAMA_TOP,
    {"blk.{bid}.attn_norm", L "input_layernorm", R_PLAIN},
    ATTN_PLAIN("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj"),
    {"blk.{bid}.attn_q_norm", L "self_attn.q_norm", R_PLAIN},
    {"blk.{bid}.attn_k_norm", L "self_attn.k_norm", R_PLAIN},
    GATED_MLP,
    END,
};

/* Command R7B: Command-R's names without the q/k norms; the head is tied */
static const hf_rev_name cohere2_names[] = {
    LLAMA_TOP,
    {"blk.{bid}.attn_norm", L "input_layernorm", R_PLAIN},
    ATTN_PLAIN("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj"),
    GATED_MLP,
    END,
};

static const hf_rev_name starcoder2_names[] = {
    LLAMA_TOP,
    {"blk.{bid}.attn_norm", L "input_layernorm", R_PLAIN},
    {"blk.{bid}.ffn_norm", L "post_attention_layernorm", R_PLAIN},
    ATTN_PLAIN("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj"),
    {"blk.{bid}.ffn_up", L "mlp.c_fc", R_PLAIN},
    {"blk.{bid}.ffn_down", L "mlp.c_proj", R_PLAIN},
    END,
};

/* Gemma stores norm weights as w - 1 (the converter added 1). */
static const hf_rev_name gemma_names[] = {
    {"token_embd", "model.embed_tokens", R_PLAIN},
    {"output_norm", "model.norm", R_SUB_ONE},
    {"blk.{bid}.attn_norm", L "input_layernorm", R_SUB_ONE},
    {"blk.{bid}.ffn_norm", L "post_attention_layernorm", R_SUB_ONE},
    ATTN_PLAIN("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj"),
    GATED_MLP,
    END,
};

/* Gemma 2's embedding and sandwich norms (stored as w - 1) */
#define GEMMA2_NORMS \
    {"token_embd", "model.embed_tokens", R_PLAIN}, {"output_norm", "model.norm", R_SUB_ONE}, \
    {"blk.{bid}.attn_norm", L "input_layernorm", R_SUB_ONE}, \
    {"blk.{bid}.post_attention_norm", L "post_attention_layernorm", R_SUB_ONE}, \
    {"blk.{bid}.ffn_norm", L "pre_feedforward_layernorm", R_SUB_ONE}, \
    {"blk.{bid}.post_ffw_norm", L "post_feedforward_layernorm", R_SUB_ONE}

static const hf_rev_name gemma2_names[] = {
    GEMMA2_NORMS,
    ATTN_PLAIN("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj"),
    GATED_MLP,
    END,
};

/* Gemma 3: Gemma 2's names, per-head q/k norms, every norm stored as w - 1 */
static const hf_rev_name gemma3_names[] = {
    GEMMA2_NORMS,
    {"blk.{bid}.attn_q_norm", L "self_attn.q_norm", R_SUB_ONE},
    {"blk.{bid}.attn_k_norm", L "self_attn.k_norm", R_SUB_ONE},
    ATTN_PLAIN("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj"),
    GATED_MLP,
    {"output", "lm_head", R_PLAIN},
    END,
};

/* Hunyuan dense: Llama's names unpermuted, query/key_layernorm */
static const hf_rev_name hunyuan_names[] = {
    LLAMA_TOP,
    {"blk.{bid}.attn_norm", L "input_layernorm", R_PLAIN},
    {"blk.{bid}.ffn_norm", L "post_attention_layernorm", R_PLAIN},
    ATTN_PLAIN("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj"),
    {"blk.{bid}.attn_q_norm", L "self_attn.query_layernorm", R_PLAIN},
    {"blk.{bid}.attn_k_norm", L "self_attn.key_layernorm", R_PLAIN},
    GATED_MLP,
    END,
};

/* GLM-4.5: biased q/k/v, post_attention_layernorm as post_attention_norm,
 * a dense lead, routed + shared experts, the NextN layer's own tensors */
static const hf_rev_name glm4moe_names[] = {
    LLAMA_TOP,
    {"blk.{bid}.attn_norm", L "input_layernorm", R_PLAIN},
    {"blk.{bid}.post_attention_norm", L "post_attention_layernorm", R_PLAIN},
    ATTN_PLAIN("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj"),
    {"blk.{bid}.attn_q_norm", L "self_attn.q_norm", R_PLAIN},
    {"blk.{bid}.attn_k_norm", L "self_attn.k_norm", R_PLAIN},
    GATED_MLP,
    QWEN_EXPERTS,
    {"blk.{bid}.exp_probs_b", L "mlp.gate.e_score_correction_bias$", R_PLAIN},
    {"blk.{bid}.ffn_gate_shexp", L "mlp.shared_experts.gate_proj", R_PLAIN},
    {"blk.{bid}.ffn_up_shexp", L "mlp.shared_experts.up_proj", R_PLAIN},
    {"blk.{bid}.ffn_down_shexp", L "mlp.shared_experts.down_proj", R_PLAIN},
    {"blk.{bid}.nextn.eh_proj", L "eh_proj", R_PLAIN},
    {"blk.{bid}.nextn.embed_tokens", L "embed_tokens", R_PLAIN},
    {"blk.{bid}.nextn.enorm", L "enorm", R_PLAIN},
    {"blk.{bid}.nextn.hnorm", L "hnorm", R_PLAIN},
    {"blk.{bid}.nextn.shared_head_head", L "shared_head.head", R_PLAIN},
    {"blk.{bid}.nextn.shared_head_norm", L "shared_head.norm", R_PLAIN},
    END,
};

/* ERNIE 4.5 MoE: Llama's attention unpermuted, a dense lead, experts
 * stacked gate/up/down, two shared experts, the router bias in moe_statics */
static const hf_rev_name ernie_moe_names[] = {
    LLAMA_TOP,
    {"blk.{bid}.attn_norm", L "input_layernorm", R_PLAIN},
    {"blk.{bid}.ffn_norm", L "post_attention_layernorm", R_PLAIN},
    ATTN_PLAIN("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj"),
    GATED_MLP,
    QWEN_EXPERTS,
    {"blk.{bid}.exp_probs_b", L "mlp.moe_statics.e_score_correction_bias$", R_PLAIN},
    {"blk.{bid}.ffn_gate_shexp", L "mlp.shared_experts.gate_proj", R_PLAIN},
    {"blk.{bid}.ffn_up_shexp", L "mlp.shared_experts.up_proj", R_PLAIN},
    {"blk.{bid}.ffn_down_shexp", L "mlp.shared_experts.down_proj", R_PLAIN},
    END,
};

/* Llama 4: Llama's names unpermuted, feed_forward.*: the fused experts
 * transposed back, the router, the shared expert, dense layers' MLP */
static const hf_rev_name llama4_names[] = {
    LLAMA_TOP,
    {"blk.{bid}.attn_norm", L "input_layernorm", R_PLAIN},
    {"blk.{bid}.ffn_norm", L "post_attention_layernorm", R_PLAIN},
    ATTN_PLAIN("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj"),
    {"blk.{bid}.ffn_gate", L "feed_forward.gate_proj", R_PLAIN},
    {"blk.{bid}.ffn_up", L "feed_forward.up_proj", R_PLAIN},
    {"blk.{bid}.ffn_down", L "feed_forward.down_proj", R_PLAIN},
    {"blk.{bid}.ffn_gate_inp", L "feed_forward.router", R_PLAIN},
    {"blk.{bid}.ffn_gate_exps", L "feed_forward.experts.gate_up_proj$", R_GATE_UP_T},
    {"blk.{bid}.ffn_up_exps", NULL, R_FUSED_PART},
    {"blk.{bid}.ffn_down_exps", L "feed_forward.experts.down_proj$", R_EXPERTS_T},
    {"blk.{bid}.ffn_gate_shexp", L "feed_forward.shared_expert.gate_proj", R_PLAIN},
    {"blk.{bid}.ffn_up_shexp", L "feed_forward.shared_expert.up_proj", R_PLAIN},
    {"blk.{bid}.ffn_down_shexp", L "feed_forward.shared_expert.down_proj", R_PLAIN},
    {"rope_freqs", NULL, R_SKIP}, /* made from rope_scaling (llama3) */
    END,
};

static const hf_rev_name phi3_names[] = {
    LLAMA_TOP,
    {"blk.{bid}.attn_norm", L "input_layernorm", R_PLAIN},
    {"blk.{bid}.ffn_norm", L "post_attention_layernorm", R_PLAIN},
    {"blk.{bid}.attn_qkv", L "self_attn.qkv_proj", R_PLAIN},
    {"blk.{bid}.attn_output", L "self_attn.o_proj", R_PLAIN},
    {"blk.{bid}.ffn_up", L "mlp.gate_up_proj", R_PLAIN},
    {"blk.{bid}.ffn_down", L "mlp.down_proj", R_PLAIN},
    {"rope_factors_long", NULL, R_SKIP}, /* rope_scaling.long_factor */
    {"rope_factors_short", NULL, R_SKIP},
    END,
};

static const hf_rev_name phi2_names[] = {
    {"token_embd", "model.embed_tokens", R_PLAIN},
    {"output_norm", "model.final_layernorm", R_PLAIN},
    {"output", "lm_head", R_PLAIN},
    {"blk.{bid}.attn_norm", L "input_layernorm", R_PLAIN},
    ATTN_PLAIN("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.dense"),
    {"blk.{bid}.ffn_up", L "mlp.fc1", R_PLAIN},
    {"blk.{bid}.ffn_down", L "mlp.fc2", R_PLAIN},
    END,
};

static const hf_rev_name qwen2moe_names[] = {
    LLAMA_TOP,
    {"blk.{bid}.attn_norm", L "input_layernorm", R_PLAIN},
    {"blk.{bid}.ffn_norm", L "post_attention_layernorm", R_PLAIN},
    ATTN_PLAIN("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj"),
    QWEN_EXPERTS,
    {"blk.{bid}.ffn_gate_shexp", L "mlp.shared_expert.gate_proj", R_PLAIN},
    {"blk.{bid}.ffn_up_shexp", L "mlp.shared_expert.up_proj", R_PLAIN},
    {"blk.{bid}.ffn_down_shexp", L "mlp.shared_expert.down_proj", R_PLAIN},
    {"blk.{bid}.ffn_gate_inp_shexp", L "mlp.shared_expert_gate", R_PLAIN},
    END,
};

static const hf_rev_name deepseek2_names[] = {
    LLAMA_TOP,
    {"blk.{bid}.attn_norm", L "input_layernorm", R_PLAIN},
    {"blk.{bid}.ffn_norm", L "post_attention_layernorm", R_PLAIN},
    {"blk.{bid}.attn_q", L "self_attn.q_proj", R_PLAIN},
    {"blk.{bid}.attn_q_a", L "self_attn.q_a_proj", R_PLAIN},
    {"blk.{bid}.attn_q_a_norm", L "self_attn.q_a_layernorm", R_PLAIN},
    {"blk.{bid}.attn_q_b", L "self_attn.q_b_proj", R_PLAIN},
    {"blk.{bid}.attn_kv_a_mqa", L "self_attn.kv_a_proj_with_mqa", R_PLAIN},
    {"blk.{bid}.attn_kv_a_norm", L "self_attn.kv_a_layernorm", R_PLAIN},
    {"blk.{bid}.attn_kv_b", L "self_attn.kv_b_proj", R_PLAIN},
    {"blk.{bid}.attn_k_b", L "self_attn.kv_b_proj", R_JOIN_KV_B}, /* --layout 2026-02 */
    {"blk.{bid}.attn_v_b", NULL, R_FUSED_PART},
    {"blk.{bid}.attn_output", L "self_attn.o_proj", R_PLAIN},
    GATED_MLP,
    {"blk.{bid}.ffn_gate_inp", L "mlp.gate", R_PLAIN},
    {"blk.{bid}.exp_probs_b", L "mlp.gate.e_score_correction_bias$", R_PLAIN},
    {"blk.{bid}.ffn_gate_exps", L "mlp.experts.{x}.gate_proj", R_UNSTACK},
    {"blk.{bid}.ffn_up_exps", L "mlp.experts.{x}.up_proj", R_UNSTACK},
    {"blk.{bid}.ffn_down_exps", L "mlp.experts.{x}.down_proj", R_UNSTACK},
    {"blk.{bid}.ffn_gate_shexp", L "mlp.shared_experts.gate_proj", R_PLAIN},
    {"blk.{bid}.ffn_up_shexp", L "mlp.shared_experts.up_proj", R_PLAIN},
    {"blk.{bid}.ffn_down_shexp", L "mlp.shared_experts.down_proj", R_PLAIN},
    END,
};

/* MiniCPM: Llama's names, q/k permuted; LongRoPE factors come from config */
static const hf_rev_name minicpm_names[] = {
    LLAMA_TOP,
    {"blk.{bid}.attn_norm", L "input_layernorm", R_PLAIN},
    {"blk.{bid}.ffn_norm", L "post_attention_layernorm", R_PLAIN},
    ATTN("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj"),
    GATED_MLP,
    {"rope_factors_long", NULL, R_SKIP}, /* rope_scaling.long_factor */
    {"rope_factors_short", NULL, R_SKIP},
    END,
};

/* Granite-MoE: Llama's attention (permuted); gate and up experts were cut
 * from input_linear, joined back */
static const hf_rev_name granitemoe_names[] = {
    LLAMA_TOP,
    {"blk.{bid}.attn_norm", L "input_layernorm", R_PLAIN},
    {"blk.{bid}.ffn_norm", L "post_attention_layernorm", R_PLAIN},
    ATTN("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj"),
    {"blk.{bid}.ffn_gate_inp", L "block_sparse_moe.router.layer", R_PLAIN},
    {"blk.{bid}.ffn_gate_exps", L "block_sparse_moe.input_linear", R_CONCAT},
    {"blk.{bid}.ffn_up_exps", NULL, R_FUSED_PART},
    {"blk.{bid}.ffn_down_exps", L "block_sparse_moe.output_linear", R_PLAIN},
    {"rope_freqs", NULL, R_SKIP}, /* made from rope_scaling (llama3): config carries it */
    END,
};

/* Baichuan: q, k, v were cut from W_pack (q, k permuted), joined back */
static const hf_rev_name baichuan_names[] = {
    LLAMA_TOP,
    {"blk.{bid}.attn_norm", L "input_layernorm", R_PLAIN},
    {"blk.{bid}.ffn_norm", L "post_attention_layernorm", R_PLAIN},
    {"blk.{bid}.attn_q", L "self_attn.W_pack", R_CONCAT},
    {"blk.{bid}.attn_k", NULL, R_FUSED_PART},
    {"blk.{bid}.attn_v", NULL, R_FUSED_PART},
    {"blk.{bid}.attn_output", L "self_attn.o_proj", R_PLAIN},
    GATED_MLP,
    END,
};

/* MiniCPM3: DeepSeek-V2's MLA names, a dense MLP, nothing permuted */
static const hf_rev_name minicpm3_names[] = {
    LLAMA_TOP,
    {"blk.{bid}.attn_norm", L "input_layernorm", R_PLAIN},
    {"blk.{bid}.ffn_norm", L "post_attention_layernorm", R_PLAIN},
    {"blk.{bid}.attn_q_a", L "self_attn.q_a_proj", R_PLAIN},
    {"blk.{bid}.attn_q_a_norm", L "self_attn.q_a_layernorm", R_PLAIN},
    {"blk.{bid}.attn_q_b", L "self_attn.q_b_proj", R_PLAIN},
    {"blk.{bid}.attn_kv_a_mqa", L "self_attn.kv_a_proj_with_mqa", R_PLAIN},
    {"blk.{bid}.attn_kv_a_norm", L "self_attn.kv_a_layernorm", R_PLAIN},
    {"blk.{bid}.attn_kv_b", L "self_attn.kv_b_proj", R_PLAIN},
    {"blk.{bid}.attn_output", L "self_attn.o_proj", R_PLAIN},
    GATED_MLP,
    {"rope_factors_long", NULL, R_SKIP}, /* rope_scaling.long_factor */
    {"rope_factors_short", NULL, R_SKIP},
    END,
};

/* OLMoE: Llama's names with q/k norms, Qwen2-MoE's experts, permuted q/k */
static const hf_rev_name olmoe_names[] = {
    LLAMA_TOP,
    {"blk.{bid}.attn_norm", L "input_layernorm", R_PLAIN},
    {"blk.{bid}.ffn_norm", L "post_attention_layernorm", R_PLAIN},
    ATTN_PLAIN("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj"),
    {"blk.{bid}.attn_q_norm", L "self_attn.q_norm", R_PLAIN},
    {"blk.{bid}.attn_k_norm", L "self_attn.k_norm", R_PLAIN},
    {"blk.{bid}.ffn_gate_inp", L "mlp.gate", R_PLAIN},
    {"blk.{bid}.ffn_gate_exps", L "mlp.experts.{x}.gate_proj", R_UNSTACK},
    {"blk.{bid}.ffn_up_exps", L "mlp.experts.{x}.up_proj", R_UNSTACK},
    {"blk.{bid}.ffn_down_exps", L "mlp.experts.{x}.down_proj", R_UNSTACK},
    END,
};

/* PhiMoE: Mixtral's expert names, LayerNorms with biases, nothing permuted */
static const hf_rev_name phimoe_names[] = {
    LLAMA_TOP,
    {"blk.{bid}.attn_norm", L "input_layernorm", R_PLAIN},
    {"blk.{bid}.ffn_norm", L "post_attention_layernorm", R_PLAIN},
    ATTN_PLAIN("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj"),
    {"blk.{bid}.ffn_gate_inp", L "block_sparse_moe.gate", R_PLAIN},
    {"blk.{bid}.ffn_gate_exps", L "block_sparse_moe.experts.{x}.w1", R_UNSTACK},
    {"blk.{bid}.ffn_down_exps", L "block_sparse_moe.experts.{x}.w2", R_UNSTACK},
    {"blk.{bid}.ffn_up_exps", L "block_sparse_moe.experts.{x}.w3", R_UNSTACK},
    {"rope_factors_long", NULL, R_SKIP}, /* rope_scaling.long_factor */
    {"rope_factors_short", NULL, R_SKIP},
    END,
};

/* DeepSeek (MoE, v1): Llama's attention permuted, DeepSeek-V2's experts */
static const hf_rev_name deepseek_names[] = {
    LLAMA_TOP,
    {"blk.{bid}.attn_norm", L "input_layernorm", R_PLAIN},
    {"blk.{bid}.ffn_norm", L "post_attention_layernorm", R_PLAIN},
    ATTN("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj"),
    GATED_MLP,
    {"blk.{bid}.ffn_gate_inp", L "mlp.gate", R_PLAIN},
    {"blk.{bid}.ffn_gate_exps", L "mlp.experts.{x}.gate_proj", R_UNSTACK},
    {"blk.{bid}.ffn_up_exps", L "mlp.experts.{x}.up_proj", R_UNSTACK},
    {"blk.{bid}.ffn_down_exps", L "mlp.experts.{x}.down_proj", R_UNSTACK},
    {"blk.{bid}.ffn_gate_shexp", L "mlp.shared_experts.gate_proj", R_PLAIN},
    {"blk.{bid}.ffn_up_shexp", L "mlp.shared_experts.up_proj", R_PLAIN},
    {"blk.{bid}.ffn_down_shexp", L "mlp.shared_experts.down_proj", R_PLAIN},
    END,
};

static const hf_rev_name stablelm_names[] = {
    LLAMA_TOP,
    {"blk.{bid}.attn_norm", L "input_layernorm", R_PLAIN},
    {"blk.{bid}.ffn_norm", L "post_attention_layernorm", R_PLAIN},
    ATTN_PLAIN("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj"),
    {"blk.{bid}.attn_q_norm", L "self_attn.q_layernorm.norms.{x}", R_UNSTACK},
    {"blk.{bid}.attn_k_norm", L "self_attn.k_layernorm.norms.{x}", R_UNSTACK},
    GATED_MLP,
    END,
};

#undef L
#define H "transformer.h.{bid}."
/* GPT-2's Conv1D weights are [in, out]: the converter transposed them. The
 * head is tied: output.weight (token_embd written twice) is dropped. */
static const hf_rev_name gpt2_names[] = {
    {"token_embd", "transformer.wte", R_PLAIN},
    {"position_embd", "transformer.wpe", R_PLAIN},
    {"output_norm", "transformer.ln_f", R_PLAIN},
    {"output", NULL, R_SKIP},
    {"blk.{bid}.attn_norm", H "ln_1", R_PLAIN},
    {"blk.{bid}.attn_qkv", H "attn.c_attn", R_TRANSPOSE},
    {"blk.{bid}.attn_output", H "attn.c_proj", R_TRANSPOSE},
    {"blk.{bid}.ffn_norm", H "ln_2", R_PLAIN},
    {"blk.{bid}.ffn_up", H "mlp.c_fc", R_TRANSPOSE},
    {"blk.{bid}.ffn_down", H "mlp.c_proj", R_TRANSPOSE},
    END,
};

/* StarCoder 1 (GPTBigCode): nn.Linear weights (not transposed), learned
 * positions; the head is tied (not saved) or lm_head */
static const hf_rev_name starcoder_names[] = {
    {"token_embd", "transformer.wte", R_PLAIN},
    {"position_embd", "transformer.wpe", R_PLAIN},
    {"output_norm", "transformer.ln_f", R_PLAIN},
    {"output", "lm_head", R_PLAIN},
    {"blk.{bid}.attn_norm", H "ln_1", R_PLAIN},
    {"blk.{bid}.attn_qkv", H "attn.c_attn", R_PLAIN},
    {"blk.{bid}.attn_output", H "attn.c_proj", R_PLAIN},
    {"blk.{bid}.ffn_norm", H "ln_2", R_PLAIN},
    {"blk.{bid}.ffn_up", H "mlp.c_fc", R_PLAIN},
    {"blk.{bid}.ffn_down", H "mlp.c_proj", R_PLAIN},
    END,
};

/* Refact: q as is; kv and gate_up were split (R_CONCAT joins them back) */
static const hf_rev_name refact_names[] = {
    {"token_embd", "transformer.wte", R_PLAIN},
    {"output_norm", "transformer.ln_f", R_PLAIN},
    {"output", "lm_head", R_PLAIN},
    {"blk.{bid}.attn_norm", H "ln_1", R_PLAIN},
    {"blk.{bid}.attn_q", H "attn.q", R_PLAIN},
    {"blk.{bid}.attn_k", H "attn.kv", R_CONCAT},
    {"blk.{bid}.attn_v", NULL, R_FUSED_PART},
    {"blk.{bid}.attn_output", H "attn.c_proj", R_PLAIN},
    {"blk.{bid}.ffn_norm", H "ln_2", R_PLAIN},
    {"blk.{bid}.ffn_gate", H "mlp.gate_up_proj", R_CONCAT},
    {"blk.{bid}.ffn_up", NULL, R_FUSED_PART},
    {"blk.{bid}.ffn_down", H "mlp.c_proj", R_PLAIN},
    END,
};

/* CodeShell: GPT-2's module names as nn.Linear (not transposed); a head
 * equal to the embedding was written by the converter (tied) */
static const hf_rev_name codeshell_names[] = {
    {"token_embd", "transformer.wte", R_PLAIN},
    {"output_norm", "transformer.ln_f", R_PLAIN},
    {"output", "lm_head", R_TIED},
    {"blk.{bid}.attn_norm", H "ln_1", R_PLAIN},
    {"blk.{bid}.attn_qkv", H "attn.c_attn", R_PLAIN},
    {"blk.{bid}.attn_output", H "attn.c_proj", R_PLAIN},
    {"blk.{bid}.ffn_norm", H "ln_2", R_PLAIN},
    {"blk.{bid}.ffn_up", H "mlp.c_fc", R_PLAIN},
    {"blk.{bid}.ffn_down", H "mlp.c_proj", R_PLAIN},
    END,
};

#define T "transformer.layers.{bid}."
/* OpenELM: per-layer head counts; proj_1 was split into gate and up */
static const hf_rev_name openelm_names[] = {
    {"token_embd", "transformer.token_embeddings", R_PLAIN},
    {"output_norm", "transformer.norm", R_PLAIN},
    {"output", "lm_head", R_PLAIN},
    {"blk.{bid}.attn_norm", T "attn_norm", R_PLAIN},
    {"blk.{bid}.attn_qkv", T "attn.qkv_proj", R_PLAIN},
    {"blk.{bid}.attn_q_norm", T "attn.q_norm", R_PLAIN},
    {"blk.{bid}.attn_k_norm", T "attn.k_norm", R_PLAIN},
    {"blk.{bid}.attn_output", T "attn.out_proj", R_PLAIN},
    {"blk.{bid}.ffn_norm", T "ffn_norm", R_PLAIN},
    {"blk.{bid}.ffn_gate", T "ffn.proj_1", R_CONCAT},
    {"blk.{bid}.ffn_up", NULL, R_FUSED_PART},
    {"blk.{bid}.ffn_down", T "ffn.proj_2", R_PLAIN},
    END,
};
#undef T

/* JAIS: GPT-2's Conv1D weights (transposed back), SwiGLU c_fc / c_fc2 */
static const hf_rev_name jais_names[] = {
    {"token_embd", "transformer.wte", R_PLAIN},
    {"output_norm", "transformer.ln_f", R_PLAIN},
    {"output", "lm_head", R_PLAIN},
    {"blk.{bid}.attn_norm", H "ln_1", R_PLAIN},
    {"blk.{bid}.attn_qkv", H "attn.c_attn", R_TRANSPOSE},
    {"blk.{bid}.attn_output", H "attn.c_proj", R_TRANSPOSE},
    {"blk.{bid}.ffn_norm", H "ln_2", R_PLAIN},
    {"blk.{bid}.ffn_up", H "mlp.c_fc", R_TRANSPOSE},
    {"blk.{bid}.ffn_gate", H "mlp.c_fc2", R_TRANSPOSE},
    {"blk.{bid}.ffn_down", H "mlp.c_proj", R_TRANSPOSE},
    END,
};

/* EXAONE: GPT-2-style module names around a Llama block, nothing permuted */
static const hf_rev_name exaone_names[] = {
    {"token_embd", "transformer.wte", R_PLAIN},
    {"output_norm", "transformer.ln_f", R_PLAIN},
    {"output", "lm_head", R_PLAIN},
    {"blk.{bid}.attn_norm", H "ln_1", R_PLAIN},
    {"blk.{bid}.attn_q", H "attn.attention.q_proj", R_PLAIN},
    {"blk.{bid}.attn_k", H "attn.attention.k_proj", R_PLAIN},
    {"blk.{bid}.attn_v", H "attn.attention.v_proj", R_PLAIN},
    {"blk.{bid}.attn_output", H "attn.attention.out_proj", R_PLAIN},
    {"blk.{bid}.ffn_norm", H "ln_2", R_PLAIN},
    {"blk.{bid}.ffn_gate", H "mlp.c_fc_0", R_PLAIN},
    {"blk.{bid}.ffn_up", H "mlp.c_fc_1", R_PLAIN},
    {"blk.{bid}.ffn_down", H "mlp.c_proj", R_PLAIN},
    {"rope_freqs", NULL, R_SKIP}, /* made from rope_scaling (llama3): config carries it */
    END,
};

#define FALCON_NAMES(attn_norm)                                                       \
    {"token_embd", "transformer.word_embeddings", R_PLAIN},                           \
    {"output_norm", "transformer.ln_f", R_PLAIN}, {"output", "lm_head", R_PLAIN},     \
    {"blk.{bid}.attn_norm", H attn_norm, R_PLAIN},                                    \
    {"blk.{bid}.attn_qkv", H "self_attention.query_key_value", R_QKV_KV_GROUPS},      \
    {"blk.{bid}.attn_output", H "self_attention.dense", R_PLAIN},                     \
    {"blk.{bid}.ffn_up", H "mlp.dense_h_to_4h", R_PLAIN},                             \
    {"blk.{bid}.ffn_down", H "mlp.dense_4h_to_h", R_PLAIN}
static const hf_rev_name falcon_names[] = {FALCON_NAMES("input_layernorm"), END};

/* Falcon-40B's layout (new_decoder_architecture): gguf-py's tensor map
 * (c392e50) writes ln_mlp as attn_norm and ln_attn as attn_norm_2 */
static const hf_rev_name falcon_new_names[] = {
    FALCON_NAMES("ln_mlp"),
    {"blk.{bid}.attn_norm_2", H "ln_attn", R_PLAIN},
    END,
};
#undef FALCON_NAMES
const hf_rev_arch hf_rev_falcon_new = {"falcon", "FalconForCausalLM", "falcon", falcon_new_names};

/* BLOOM: the tied head came as a copy of the embedding */
static const hf_rev_name bloom_names[] = {
    {"token_embd", "transformer.word_embeddings", R_PLAIN},
    {"token_embd_norm", "transformer.word_embeddings_layernorm", R_PLAIN},
    {"output_norm", "transformer.ln_f", R_PLAIN},
    {"output", "lm_head", R_TIED},
    {"blk.{bid}.attn_norm", H "input_layernorm", R_PLAIN},
    {"blk.{bid}.attn_qkv", H "self_attention.query_key_value", R_QKV_PER_HEAD},
    {"blk.{bid}.attn_output", H "self_attention.dense", R_PLAIN},
    {"blk.{bid}.ffn_norm", H "post_attention_layernorm", R_PLAIN},
    {"blk.{bid}.ffn_up", H "mlp.dense_h_to_4h", R_PLAIN},
    {"blk.{bid}.ffn_down", H "mlp.dense_4h_to_h", R_PLAIN},
    END,
};
#undef H

#define T "transformer.blocks.{bid}."
static const hf_rev_name mpt_names[] = {
    {"token_embd", "transformer.wte", R_PLAIN},
    {"position_embd", "transformer.wpe", R_PLAIN},
    {"output_norm", "transformer.norm_f", R_PLAIN},
    {"output", "lm_head", R_PLAIN},
    {"blk.{bid}.attn_norm", T "norm_1", R_PLAIN},
    {"blk.{bid}.attn_qkv", T "attn.Wqkv", R_PLAIN},
    {"blk.{bid}.attn_q_norm", T "attn.q_ln", R_PLAIN},
    {"blk.{bid}.attn_k_norm", T "attn.k_ln", R_PLAIN},
    {"blk.{bid}.attn_output", T "attn.out_proj", R_PLAIN},
    {"blk.{bid}.ffn_norm", T "norm_2", R_PLAIN},
    {"blk.{bid}.ffn_up", T "ffn.up_proj", R_PLAIN},
    {"blk.{bid}.ffn_down", T "ffn.down_proj", R_PLAIN},
    END,
};

/* DBRX: the experts go back to [E * ff, embd] without ".weight" (w2's
 * matrices transposed back) */
static const hf_rev_name dbrx_names[] = {
    {"token_embd", "transformer.wte", R_PLAIN},
    {"output_norm", "transformer.norm_f", R_PLAIN},
    {"output", "lm_head", R_PLAIN},
    {"blk.{bid}.attn_norm", T "norm_attn_norm.norm_1", R_PLAIN},
    {"blk.{bid}.attn_qkv", T "norm_attn_norm.attn.Wqkv", R_PLAIN},
    {"blk.{bid}.attn_output", T "norm_attn_norm.attn.out_proj", R_PLAIN},
    {"blk.{bid}.attn_output_norm", T "norm_attn_norm.norm_2", R_PLAIN},
    {"blk.{bid}.ffn_gate_inp", T "ffn.router.layer", R_PLAIN},
    {"blk.{bid}.ffn_gate_exps", T "ffn.experts.mlp.w1", R_UNVIEW_EXPERTS},
    {"blk.{bid}.ffn_up_exps", T "ffn.experts.mlp.v1", R_UNVIEW_EXPERTS},
    {"blk.{bid}.ffn_down_exps", T "ffn.experts.mlp.w2", R_UNVIEW_EXPERTS_T},
    END,
};
#undef T

#define X "gpt_neox.layers.{bid}."
static const hf_rev_name gptneox_names[] = {
    {"token_embd", "gpt_neox.embed_in", R_PLAIN},
    {"output_norm", "gpt_neox.final_layer_norm", R_PLAIN},
    {"output", "embed_out", R_PLAIN},
    {"blk.{bid}.attn_norm", X "input_layernorm", R_PLAIN},
    {"blk.{bid}.ffn_norm", X "post_attention_layernorm", R_PLAIN},
    {"blk.{bid}.attn_qkv", X "attention.query_key_value", R_QKV_PER_HEAD},
    {"blk.{bid}.attn_output", X "attention.dense", R_PLAIN},
    {"blk.{bid}.ffn_up", X "mlp.dense_h_to_4h", R_PLAIN},
    {"blk.{bid}.ffn_down", X "mlp.dense_4h_to_h", R_PLAIN},
    END,
};
#undef X

#define B "backbone.layers.{bid}."
/* Mamba: A = -exp(A_log) was written; A_log = log(-A) comes back. */
static const hf_rev_name mamba_names[] = {
    {"token_embd", "backbone.embeddings", R_PLAIN},
    {"output_norm", "backbone.norm_f", R_PLAIN},
    {"output", "lm_head", R_PLAIN},
    {"blk.{bid}.attn_norm", B "norm", R_PLAIN},
    {"blk.{bid}.ssm_in", B "mixer.in_proj", R_PLAIN},
    {"blk.{bid}.ssm_conv1d", B "mixer.conv1d", R_PLAIN},
    {"blk.{bid}.ssm_x", B "mixer.x_proj", R_PLAIN},
    {"blk.{bid}.ssm_dt", B "mixer.dt_proj", R_PLAIN},
    {"blk.{bid}.ssm_a", B "mixer.A_log", R_LOG_NEG},
    {"blk.{bid}.ssm_d", B "mixer.D", R_PLAIN},
    {"blk.{bid}.ssm_out", B "mixer.out_proj", R_PLAIN},
    END,
};
#undef B

#define E "encoder.layer.{bid}."
/* BertModel's names, shared by its subclasses */
#define BERT_EMBEDDINGS \
    {"token_types", "embeddings.token_type_embeddings", R_PLAIN}, {"token_embd_norm", "embeddings.LayerNorm", R_PLAIN}
#define BERT_ATTENTION \
    {"blk.{bid}.attn_q", E "attention.self.query", R_PLAIN}, {"blk.{bid}.attn_k", E "attention.self.key", R_PLAIN}, \
    {"blk.{bid}.attn_v", E "attention.self.value", R_PLAIN}, \
    {"blk.{bid}.attn_output", E "attention.output.dense", R_PLAIN}, \
    {"blk.{bid}.attn_output_norm", E "attention.output.LayerNorm", R_PLAIN}
#define BERT_FFN \
    {"blk.{bid}.ffn_up", E "intermediate.dense", R_PLAIN}, {"blk.{bid}.ffn_down", E "output.dense", R_PLAIN}, \
    {"blk.{bid}.layer_output_norm", E "output.LayerNorm", R_PLAIN}
static const hf_rev_name bert_names[] = {
    {"token_embd", "embeddings.word_embeddings", R_PLAIN},
    {"position_embd", "embeddings.position_embeddings", R_PLAIN},
    BERT_EMBEDDINGS, BERT_ATTENTION,
    BERT_FFN,
    END,
};

/* Jina-BERT v2: BERT's attention, the gate and up halves joined back */
static const hf_rev_name jina_bert_names[] = {
    {"token_embd", "embeddings.word_embeddings", R_PLAIN},
    BERT_EMBEDDINGS, BERT_ATTENTION,
    {"blk.{bid}.ffn_gate", E "mlp.gated_layers", R_JOIN_UP},
    {"blk.{bid}.ffn_up", NULL, R_FUSED_PART},
    {"blk.{bid}.ffn_down", E "mlp.wo", R_PLAIN},
    {"blk.{bid}.layer_output_norm", E "mlp.layernorm", R_PLAIN},
    END,
};

/* RoBERTa and XLM-RoBERTa: BERT's names under the same GGUF architecture,
 * the position rows the converter cut put back as zeros */
static const hf_rev_name roberta_names[] = {
    {"token_embd", "embeddings.word_embeddings", R_PLAIN},
    {"position_embd", "embeddings.position_embeddings", R_PAD_ROWS},
    BERT_EMBEDDINGS, BERT_ATTENTION,
    BERT_FFN,
    END,
};

static bool tokenizer_is(const mf_model *m, const char *model)
{
    const mf_value *v = mf_meta_get(m, "tokenizer.ggml.model");
    return v && v->type == MF_V_STR && !strcmp(v->as.s.ptr, model);
}

/* RobertaModel writes a byte-level BPE vocabulary, XLMRobertaModel a "t5" one */
static bool roberta_vocab(const mf_model *m)
{
    return tokenizer_is(m, "gpt2");
}

static bool xlmr_vocab(const mf_model *m)
{
    return tokenizer_is(m, "t5");
}

/* ERNIE 4.5 from a Paddle-layout checkpoint: the converter split its fused
 * self_attn.qkv_proj and mlp.up_gate_proj where they sorted (o_proj,
 * qkv_proj: attn_output, attn_q, attn_k, attn_v), so block 0's attn_q comes
 * before its attn_k; transformers' separate names sort k_proj before
 * q_proj. Written back fused, the directory converts to the same order. */
static const hf_rev_name ernie_paddle_names[] = {
    LLAMA_TOP,
    {"blk.{bid}.attn_norm", "model.layers.{bid}.input_layernorm", R_PLAIN},
    {"blk.{bid}.ffn_norm", "model.layers.{bid}.post_attention_layernorm", R_PLAIN},
    {"blk.{bid}.attn_q", "model.layers.{bid}.self_attn.qkv_proj", R_CONCAT},
    {"blk.{bid}.attn_k", NULL, R_FUSED_PART},
    {"blk.{bid}.attn_v", NULL, R_FUSED_PART},
    {"blk.{bid}.attn_output", "model.layers.{bid}.self_attn.o_proj", R_PLAIN},
    {"blk.{bid}.ffn_gate", "model.layers.{bid}.mlp.up_gate_proj", R_CONCAT},
    {"blk.{bid}.ffn_up", NULL, R_FUSED_PART},
    {"blk.{bid}.ffn_down", "model.layers.{bid}.mlp.down_proj", R_PLAIN},
    END,
};

static bool ernie_fused_order(const mf_model *m)
{
    size_t q = SIZE_MAX, k = SIZE_MAX;
    for (size_t i = 0; i < m->n_tensors; i++) {
        if (!strcmp(m->tensors[i].name, "blk.0.attn_q.weight"))
            q = i;
        else if (!strcmp(m->tensors[i].name, "blk.0.attn_k.weight"))
            k = i;
    }
    return k != SIZE_MAX && q < k;
}

/* DeepSeek-V3's router (sigmoid scores with a correction bias,
 * exp_probs_b): DeepseekV2Config's classes route by softmax, so the
 * directory is DeepseekV3ForCausalLM's, which the converter also takes */
/* DeciLM: Llama's names; attn_output is a linear-attention layer's
 * linear_attn where the block has no attn_q (Nemotron-NAS) */
/* Nemotron-NAS: its head counts are per layer (DeciModel with block_configs) */
static bool deci_block_configs(const mf_model *m)
{
    const mf_value *v = mf_meta_get(m, "deci.attention.head_count");
    return v && v->type == MF_V_ARR;
}

static bool deepseek_v3_router(const mf_model *m)
{
    const mf_value *g = mf_meta_get(m, "deepseek2.expert_gating_func");
    return g && g->type != MF_V_STR && g->type != MF_V_ARR && g->type != MF_V_BOOL && g->as.u == 2;
}
#undef E

#define N "encoder.layers.{bid}."
static const hf_rev_name nomic_bert_names[] = {
    {"token_embd", "embeddings.word_embeddings", R_PLAIN},
    {"token_types", "embeddings.token_type_embeddings", R_PLAIN},
    {"token_embd_norm", "emb_ln", R_PLAIN},
    {"blk.{bid}.attn_qkv", N "attn.Wqkv", R_PLAIN},
    {"blk.{bid}.attn_output", N "attn.out_proj", R_PLAIN},
    {"blk.{bid}.attn_output_norm", N "norm1", R_PLAIN},
    {"blk.{bid}.ffn_up", N "mlp.fc11", R_PLAIN},
    {"blk.{bid}.ffn_gate", N "mlp.fc12", R_PLAIN},
    {"blk.{bid}.ffn_down", N "mlp.fc2", R_PLAIN},
    {"blk.{bid}.layer_output_norm", N "norm2", R_PLAIN},
    END,
};
#undef N

/* T5: one shared embedding (transformers ties the stacks' embed_tokens to it) */
#define T5_ENCODER \
    {"enc.blk.{bid}.attn_norm", "encoder.block.{bid}.layer.0.layer_norm", R_PLAIN}, \
    {"enc.blk.{bid}.attn_q", "encoder.block.{bid}.layer.0.SelfAttention.q", R_PLAIN}, \
    {"enc.blk.{bid}.attn_k", "encoder.block.{bid}.layer.0.SelfAttention.k", R_PLAIN}, \
    {"enc.blk.{bid}.attn_v", "encoder.block.{bid}.layer.0.SelfAttention.v", R_PLAIN}, \
    {"enc.blk.{bid}.attn_o", "encoder.block.{bid}.layer.0.SelfAttention.o", R_PLAIN}, \
    {"enc.blk.{bid}.attn_rel_b", "encoder.block.{bid}.layer.0.SelfAttention.relative_attention_bias", R_PLAIN}, \
    {"enc.blk.{bid}.ffn_norm", "encoder.block.{bid}.layer.1.layer_norm", R_PLAIN}, \
    {"enc.blk.{bid}.ffn_gate", "encoder.block.{bid}.layer.1.DenseReluDense.wi_0", R_PLAIN}, \
    {"enc.blk.{bid}.ffn_up", "encoder.block.{bid}.layer.1.DenseReluDense.wi_1|encoder.block.{bid}.layer.1.DenseReluDense.wi", R_UP_GATED}, \
    {"enc.blk.{bid}.ffn_down", "encoder.block.{bid}.layer.1.DenseReluDense.wo", R_PLAIN}, \
    {"enc.output_norm", "encoder.final_layer_norm", R_PLAIN}
static const hf_rev_name t5_names[] = {
    {"token_embd", "shared", R_PLAIN},
    {"output", "lm_head", R_PLAIN},
    T5_ENCODER,
    {"dec.blk.{bid}.attn_norm", "decoder.block.{bid}.layer.0.layer_norm", R_PLAIN},
    {"dec.blk.{bid}.attn_q", "decoder.block.{bid}.layer.0.SelfAttention.q", R_PLAIN},
    {"dec.blk.{bid}.attn_k", "decoder.block.{bid}.layer.0.SelfAttention.k", R_PLAIN},
    {"dec.blk.{bid}.attn_v", "decoder.block.{bid}.layer.0.SelfAttention.v", R_PLAIN},
    {"dec.blk.{bid}.attn_o", "decoder.block.{bid}.layer.0.SelfAttention.o", R_PLAIN},
    {"dec.blk.{bid}.attn_rel_b", "decoder.block.{bid}.layer.0.SelfAttention.relative_attention_bias", R_PLAIN},
    {"dec.blk.{bid}.cross_attn_norm", "decoder.block.{bid}.layer.1.layer_norm", R_PLAIN},
    {"dec.blk.{bid}.cross_attn_q", "decoder.block.{bid}.layer.1.EncDecAttention.q", R_PLAIN},
    {"dec.blk.{bid}.cross_attn_k", "decoder.block.{bid}.layer.1.EncDecAttention.k", R_PLAIN},
    {"dec.blk.{bid}.cross_attn_v", "decoder.block.{bid}.layer.1.EncDecAttention.v", R_PLAIN},
    {"dec.blk.{bid}.cross_attn_o", "decoder.block.{bid}.layer.1.EncDecAttention.o", R_PLAIN},
    {"dec.blk.{bid}.cross_attn_rel_b", "decoder.block.{bid}.layer.1.EncDecAttention.relative_attention_bias", R_PLAIN},
    {"dec.blk.{bid}.ffn_norm", "decoder.block.{bid}.layer.2.layer_norm", R_PLAIN},
    {"dec.blk.{bid}.ffn_gate", "decoder.block.{bid}.layer.2.DenseReluDense.wi_0", R_PLAIN},
    {"dec.blk.{bid}.ffn_up", "decoder.block.{bid}.layer.2.DenseReluDense.wi_1|decoder.block.{bid}.layer.2.DenseReluDense.wi", R_UP_GATED},
    {"dec.blk.{bid}.ffn_down", "decoder.block.{bid}.layer.2.DenseReluDense.wo", R_PLAIN},
    {"dec.output_norm", "decoder.final_layer_norm", R_PLAIN},
    END,
};
static const hf_rev_name t5encoder_names[] = {
    {"token_embd", "shared", R_PLAIN},
    T5_ENCODER,
    END,
};
#undef T5_ENCODER

#define L "model.layers.{bid}."
static const hf_rev_name internlm2_names[] = {
    {"token_embd", "model.tok_embeddings", R_PLAIN},
    {"output_norm", "model.norm", R_PLAIN},
    {"output", "output", R_PLAIN},
    {"blk.{bid}.attn_norm", L "attention_norm", R_PLAIN},
    {"blk.{bid}.ffn_norm", L "ffn_norm", R_PLAIN},
    {"blk.{bid}.attn_q", L "attention.wqkv", R_FUSE_GROUPED},
    {"blk.{bid}.attn_k", NULL, R_FUSED_PART},
    {"blk.{bid}.attn_v", NULL, R_FUSED_PART},
    {"blk.{bid}.attn_output", L "attention.wo", R_PLAIN},
    {"blk.{bid}.ffn_gate", L "feed_forward.w1", R_PLAIN},
    {"blk.{bid}.ffn_up", L "feed_forward.w3", R_PLAIN},
    {"blk.{bid}.ffn_down", L "feed_forward.w2", R_PLAIN},
    END,
};
#undef L

/* gpt-oss: the MXFP4 experts as the release stores them (quantization_config
 * mxfp4), gate and up interleaved into gate_up_proj; sinks without .weight */
#define L "model.layers.{bid}."
static const hf_rev_name gpt_oss_names[] = {
    LLAMA_TOP,
    {"blk.{bid}.attn_norm", L "input_layernorm", R_PLAIN},
    {"blk.{bid}.post_attention_norm", L "post_attention_layernorm", R_PLAIN},
    ATTN_PLAIN("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj"),
    {"blk.{bid}.attn_sinks", L "self_attn.sinks$", R_PLAIN},
    {"blk.{bid}.ffn_gate_inp", L "mlp.router", R_PLAIN},
    {"blk.{bid}.ffn_down_exps", L "mlp.experts.down_proj", R_MXFP4_UNPACK},
    {"blk.{bid}.ffn_gate_exps", L "mlp.experts.gate_up_proj", R_INTERLEAVE},
    {"blk.{bid}.ffn_up_exps", NULL, R_FUSED_PART},
    END,
};

/* LFM2: short-convolution and attention layers (layer_types from the
 * per-layer head_count_kv), the embedding norm as the final norm */
static const hf_rev_name lfm2_names[] = {
    {"token_embd", "model.embed_tokens", R_PLAIN},
    {"token_embd_norm", "model.embedding_norm", R_PLAIN},
    {"output", "lm_head", R_PLAIN},
    {"blk.{bid}.attn_norm", L "operator_norm", R_PLAIN},
    {"blk.{bid}.ffn_norm", L "ffn_norm", R_PLAIN},
    ATTN_PLAIN("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.out_proj"),
    {"blk.{bid}.attn_q_norm", L "self_attn.q_layernorm", R_PLAIN},
    {"blk.{bid}.attn_k_norm", L "self_attn.k_layernorm", R_PLAIN},
    {"blk.{bid}.ffn_gate", L "feed_forward.w1", R_PLAIN},
    {"blk.{bid}.ffn_down", L "feed_forward.w2", R_PLAIN},
    {"blk.{bid}.ffn_up", L "feed_forward.w3", R_PLAIN},
    {"blk.{bid}.shortconv.conv", L "conv.conv", R_UNSQUEEZE1},
    {"blk.{bid}.shortconv.in_proj", L "conv.in_proj", R_PLAIN},
    {"blk.{bid}.shortconv.out_proj", L "conv.out_proj", R_PLAIN},
    END,
};
#undef L

/* Qwen3-Next: gated DeltaNet layers (ssm_*, attn_qkv + attn_gate fused
 * back into in_proj_qkvz) and full-attention ones; norms -1 but the gated
 * norm; experts unstacked, the shared expert and its gate */
#define L "model.layers.{bid}."
#define QWEN3NEXT_COMMON                                                                       \
    {"blk.{bid}.attn_norm", L "input_layernorm", R_SUB_ONE},                                  \
    {"blk.{bid}.post_attention_norm", L "post_attention_layernorm", R_SUB_ONE},              \
    ATTN_PLAIN("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj"), \
    {"blk.{bid}.attn_q_norm", L "self_attn.q_norm", R_SUB_ONE},                               \
    {"blk.{bid}.attn_k_norm", L "self_attn.k_norm", R_SUB_ONE},                               \
    {"blk.{bid}.ssm_a", L "linear_attn.A_log$", R_LOG_NEG},                                   \
    {"blk.{bid}.ssm_conv1d", L "linear_attn.conv1d", R_UNSQUEEZE1},                           \
    {"blk.{bid}.ssm_dt", L "linear_attn.dt_bias$", R_PLAIN},                                  \
    {"blk.{bid}.ssm_norm", L "linear_attn.norm", R_PLAIN},                                    \
    {"blk.{bid}.ssm_out", L "linear_attn.out_proj", R_PLAIN},                                 \
    {"blk.{bid}.ffn_gate_inp", L "mlp.gate", R_PLAIN},                                        \
    {"blk.{bid}.ffn_gate_inp_shexp", L "mlp.shared_expert_gate", R_PLAIN},                    \
    {"blk.{bid}.ffn_gate_shexp", L "mlp.shared_expert.gate_proj", R_PLAIN},                   \
    {"blk.{bid}.ffn_up_shexp", L "mlp.shared_expert.up_proj", R_PLAIN},                       \
    {"blk.{bid}.ffn_down_shexp", L "mlp.shared_expert.down_proj", R_PLAIN}
static const hf_rev_name qwen3next_names[] = {
    {"token_embd", "model.embed_tokens", R_PLAIN}, {"output_norm", "model.norm", R_SUB_ONE},
    {"output", "lm_head", R_PLAIN},
    QWEN3NEXT_COMMON,
    {"blk.{bid}.attn_qkv", L "linear_attn.in_proj_qkvz", R_QKVZ},
    {"blk.{bid}.attn_gate", NULL, R_FUSED_PART},
    {"blk.{bid}.ssm_ba", L "linear_attn.in_proj_ba", R_PLAIN},
    {"blk.{bid}.ffn_gate_exps", L "mlp.experts.{x}.gate_proj", R_UNSTACK},
    {"blk.{bid}.ffn_up_exps", L "mlp.experts.{x}.up_proj", R_UNSTACK},
    {"blk.{bid}.ffn_down_exps", L "mlp.experts.{x}.down_proj", R_UNSTACK},
    END,
};
#undef L

/* Qwen3.5 (dense and MoE): the language model's names of the multimodal
 * checkpoint, the separate in_proj_qkv / z / b / a, packed experts */
#define L "model.language_model.layers.{bid}."
static const hf_rev_name qwen35_names[] = {
    {"token_embd", "model.language_model.embed_tokens", R_PLAIN},
    {"output_norm", "model.language_model.norm", R_SUB_ONE},
    {"output", "lm_head", R_PLAIN},
    QWEN3NEXT_COMMON,
    {"blk.{bid}.attn_qkv", L "linear_attn.in_proj_qkv", R_PLAIN},
    {"blk.{bid}.attn_gate", L "linear_attn.in_proj_z", R_PLAIN},
    {"blk.{bid}.ssm_beta", L "linear_attn.in_proj_b", R_PLAIN},
    {"blk.{bid}.ssm_alpha", L "linear_attn.in_proj_a", R_PLAIN},
    GATED_MLP,
    {"blk.{bid}.ffn_gate_exps", L "mlp.experts.gate_up_proj$", R_FUSE_ROWS},
    {"blk.{bid}.ffn_up_exps", NULL, R_FUSED_PART},
    {"blk.{bid}.ffn_down_exps", L "mlp.experts.down_proj$", R_PLAIN},
    END,
};
#undef L

/* The Mamba-2 mixer of the hybrids: A = -exp(A_log) and D came with a
 * trailing 1, the gated norm in groups, conv1d squeezed */
#define L "model.layers.{bid}."
#define MAMBA2_MIXER                                                          \
    {"blk.{bid}.ssm_in", L "mamba.in_proj", R_PLAIN},                         \
    {"blk.{bid}.ssm_conv1d", L "mamba.conv1d", R_UNSQUEEZE1},                 \
    {"blk.{bid}.ssm_dt", L "mamba.dt_bias$", R_PLAIN},                        \
    {"blk.{bid}.ssm_a", L "mamba.A_log$", R_LOG_NEG_FLAT},                    \
    {"blk.{bid}.ssm_d", L "mamba.D$", R_FLAT},                                \
    {"blk.{bid}.ssm_norm", L "mamba.norm", R_FLAT},                           \
    {"blk.{bid}.ssm_out", L "mamba.out_proj", R_PLAIN}

/* Granite 4.0-H: Mamba-2 or (permuted) attention layers, Granite-MoE's
 * experts and the shared expert's halves joined back */
static const hf_rev_name granite_hybrid_names[] = {
    LLAMA_TOP,
    {"blk.{bid}.attn_norm", L "input_layernorm", R_PLAIN},
    {"blk.{bid}.ffn_norm", L "post_attention_layernorm", R_PLAIN},
    ATTN("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj"),
    MAMBA2_MIXER,
    {"blk.{bid}.ffn_gate_inp", L "block_sparse_moe.router.layer", R_PLAIN},
    {"blk.{bid}.ffn_gate_exps", L "block_sparse_moe.input_linear", R_CONCAT},
    {"blk.{bid}.ffn_up_exps", NULL, R_FUSED_PART},
    {"blk.{bid}.ffn_down_exps", L "block_sparse_moe.output_linear", R_PLAIN},
    {"blk.{bid}.ffn_gate_shexp", L "shared_mlp.input_linear", R_CONCAT},
    {"blk.{bid}.ffn_up_shexp", NULL, R_FUSED_PART},
    {"blk.{bid}.ffn_down_shexp", L "shared_mlp.output_linear", R_PLAIN},
    /* without experts (conv_granite_hybrid_dense_rules): the shared MLP as the FFN */
    {"blk.{bid}.ffn_gate", L "shared_mlp.input_linear", R_CONCAT},
    {"blk.{bid}.ffn_up", NULL, R_FUSED_PART},
    {"blk.{bid}.ffn_down", L "shared_mlp.output_linear", R_PLAIN},
    END,
};

/* Falcon-H1: both mixers in every block; the muP multipliers stay folded
 * into the weights (config.json gets them as 1: gguf2hf_config.c) */
static const hf_rev_name falcon_h1_names[] = {
    {"token_embd", "model.embed_tokens", R_PLAIN},
    {"output_norm", "model.final_layernorm", R_PLAIN},
    {"output", "lm_head", R_PLAIN},
    {"blk.{bid}.attn_norm", L "input_layernorm", R_PLAIN},
    {"blk.{bid}.ffn_norm", L "pre_ff_layernorm.weight$", R_PLAIN},
    ATTN_PLAIN("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj"),
    MAMBA2_MIXER,
    {"blk.{bid}.ffn_gate", L "feed_forward.gate_proj", R_PLAIN},
    {"blk.{bid}.ffn_up", L "feed_forward.up_proj", R_PLAIN},
    {"blk.{bid}.ffn_down", L "feed_forward.down_proj", R_PLAIN},
    END,
};
#undef L

/* RWKV6: the transposes undone, the squeezed vectors back to [1, 1, n],
 * time_mix_lerp_fused unstacked into time_maa_{w,k,v,r,g}, the rescaled
 * output and channel-mix value times 2 ** (block // rescale_every) */
#define R6 "rwkv.blocks.{bid}."
static const hf_rev_name rwkv6_names[] = {
    {"token_embd", "rwkv.embeddings", R_PLAIN},
    {"token_embd_norm", "rwkv.blocks.0.pre_ln", R_PLAIN},
    {"output_norm", "rwkv.ln_out", R_PLAIN},
    {"output", "head", R_PLAIN},
    {"blk.{bid}.attn_norm", R6 "ln1", R_PLAIN},
    {"blk.{bid}.attn_norm_2", R6 "ln2", R_PLAIN},
    {"blk.{bid}.time_mix_gate", R6 "attention.gate", R_PLAIN},
    {"blk.{bid}.time_mix_key", R6 "attention.key", R_PLAIN},
    {"blk.{bid}.time_mix_value", R6 "attention.value", R_PLAIN},
    {"blk.{bid}.time_mix_receptance", R6 "attention.receptance", R_PLAIN},
    {"blk.{bid}.time_mix_ln", R6 "attention.ln_x", R_PLAIN},
    {"blk.{bid}.time_mix_output", R6 "attention.output", R_DOUBLE_EVERY},
    {"blk.{bid}.time_mix_decay", R6 "attention.time_decay$", R_LEAD11},
    {"blk.{bid}.time_mix_decay_w1", R6 "attention.time_decay_w1$", R_TRANSPOSE},
    {"blk.{bid}.time_mix_decay_w2", R6 "attention.time_decay_w2$", R_TRANSPOSE},
    {"blk.{bid}.time_mix_first", R6 "attention.time_faaaa$", R_PLAIN},
    {"blk.{bid}.time_mix_w1", R6 "attention.time_maa_w1$", R_TRANSPOSE},
    {"blk.{bid}.time_mix_w2", R6 "attention.time_maa_w2$", R_EXPERTS_T},
    {"blk.{bid}.time_mix_lerp_x", R6 "attention.time_maa_x$", R_LEAD11},
    {"blk.{bid}.time_mix_lerp_fused", R6 "attention.time_maa_{x:w,k,v,r,g}$", R_UNSTACK},
    {"blk.{bid}.channel_mix_key", R6 "feed_forward.key", R_PLAIN},
    {"blk.{bid}.channel_mix_receptance", R6 "feed_forward.receptance", R_PLAIN},
    {"blk.{bid}.channel_mix_value", R6 "feed_forward.value", R_DOUBLE_EVERY},
    {"blk.{bid}.channel_mix_lerp_k", R6 "feed_forward.time_maa_k$", R_LEAD11},
    {"blk.{bid}.channel_mix_lerp_r", R6 "feed_forward.time_maa_r$", R_LEAD11},
    END,
};
#undef R6

/* RWKV6-Qwen2: the same steps on Qwen2's names (no rescaling without
 * rescale_every_n_layers), the time_mix_w1/w2 groups back in r k v w g order */
#define RQ "model.layers.{bid}."
static const hf_rev_name rwkv6qwen2_names[] = {
    {"token_embd", "model.embed_tokens", R_PLAIN},
    {"output_norm", "model.norm", R_PLAIN},
    {"output", "lm_head", R_PLAIN},
    {"blk.{bid}.attn_norm", RQ "input_layernorm", R_PLAIN},
    {"blk.{bid}.ffn_norm", RQ "post_attention_layernorm", R_PLAIN},
    {"blk.{bid}.ffn_gate", RQ "mlp.gate_proj", R_PLAIN},
    {"blk.{bid}.ffn_up", RQ "mlp.up_proj", R_PLAIN},
    {"blk.{bid}.ffn_down", RQ "mlp.down_proj", R_PLAIN},
    {"blk.{bid}.time_mix_gate", RQ "self_attn.gate", R_PLAIN},
    {"blk.{bid}.time_mix_key", RQ "self_attn.k_proj", R_PLAIN},
    {"blk.{bid}.time_mix_value", RQ "self_attn.v_proj", R_PLAIN},
    {"blk.{bid}.time_mix_receptance", RQ "self_attn.q_proj", R_PLAIN},
    {"blk.{bid}.time_mix_output", RQ "self_attn.o_proj", R_DOUBLE_EVERY},
    {"blk.{bid}.time_mix_decay", RQ "self_attn.time_decay$", R_LEAD11},
    {"blk.{bid}.time_mix_decay_w1", RQ "self_attn.time_decay_w1$", R_TRANSPOSE},
    {"blk.{bid}.time_mix_decay_w2", RQ "self_attn.time_decay_w2$", R_TRANSPOSE},
    {"blk.{bid}.time_mix_w1", RQ "self_attn.time_maa_w1$", R_TRANSPOSE_RKVWG},
    {"blk.{bid}.time_mix_w2", RQ "self_attn.time_maa_w2$", R_EXPERTS_T_RKVWG},
    {"blk.{bid}.time_mix_lerp_x", RQ "self_attn.time_maa_x$", R_LEAD11},
    {"blk.{bid}.time_mix_lerp_fused", RQ "self_attn.time_maa_{x:w,k,v,r,g}$", R_UNSTACK},
    END,
};
#undef RQ

/* OP_VHEADS of the Qwen3.5 rules, undone */
const hf_rev_vheads hf_rev_vheads_rows[] = {
    {"qwen35", "blk.{bid}.attn_qkv", "qkv"}, {"qwen35", "blk.{bid}.attn_gate", "rows"},
    {"qwen35", "blk.{bid}.ssm_beta", "heads"}, {"qwen35", "blk.{bid}.ssm_alpha", "heads"},
    {"qwen35", "blk.{bid}.ssm_a", "heads"}, {"qwen35", "blk.{bid}.ssm_dt", "heads"},
    {"qwen35", "blk.{bid}.ssm_conv1d", "qkv"}, {"qwen35", "blk.{bid}.ssm_out", "cols"},
    {"qwen35moe", "blk.{bid}.attn_qkv", "qkv"}, {"qwen35moe", "blk.{bid}.attn_gate", "rows"},
    {"qwen35moe", "blk.{bid}.ssm_beta", "heads"}, {"qwen35moe", "blk.{bid}.ssm_alpha", "heads"},
    {"qwen35moe", "blk.{bid}.ssm_a", "heads"}, {"qwen35moe", "blk.{bid}.ssm_dt", "heads"},
    {"qwen35moe", "blk.{bid}.ssm_conv1d", "qkv"}, {"qwen35moe", "blk.{bid}.ssm_out", "cols"},
};
const size_t hf_rev_n_vheads = sizeof(hf_rev_vheads_rows) / sizeof(hf_rev_vheads_rows[0]);

#define CLASS(name, model_type) name, model_type
const hf_rev_arch hf_rev_archs[] = {
    {"llama", CLASS("LlamaForCausalLM", "llama"), llama_names},
    {"qwen2", CLASS("Qwen2ForCausalLM", "qwen2"), qwen_names},
    {"qwen3", CLASS("Qwen3ForCausalLM", "qwen3"), qwen_names},
    {"qwen3moe", CLASS("Qwen3MoeForCausalLM", "qwen3_moe"), qwen3moe_names},
    {"smollm3", CLASS("SmolLM3ForCausalLM", "smollm3"), llama_names},
    {"mistral3", CLASS("Ministral3ForCausalLM", "ministral3"), llama_names},
    {"gemma", CLASS("GemmaForCausalLM", "gemma"), gemma_names},
    {"gemma2", CLASS("Gemma2ForCausalLM", "gemma2"), gemma2_names},
    {"gemma3", CLASS("Gemma3ForCausalLM", "gemma3_text"), gemma3_names},
    {"hunyuan-dense", CLASS("HunYuanDenseV1ForCausalLM", "hunyuan_v1_dense"), hunyuan_names},
    {"glm4moe", CLASS("Glm4MoeForCausalLM", "glm4_moe"), glm4moe_names},
    {"ernie4_5", CLASS("Ernie4_5ForCausalLM", "ernie4_5"), qwen_names},
    {"llama4", CLASS("Llama4ForCausalLM", "llama4_text"), llama4_names},
    {"ernie4_5-moe", CLASS("Ernie4_5_MoeForCausalLM", "ernie4_5_moe"), ernie_moe_names},
    {"phi3", CLASS("Phi3ForCausalLM", "phi3"), phi3_names},
    {"phi2", CLASS("PhiForCausalLM", "phi"), phi2_names},
    {"qwen2moe", CLASS("Qwen2MoeForCausalLM", "qwen2_moe"), qwen2moe_names},
    {"deepseek2", CLASS("DeepseekV2ForCausalLM", "deepseek_v2"), deepseek2_names},
    {"starcoder2", CLASS("Starcoder2ForCausalLM", "starcoder2"), starcoder2_names},
    {"gpt2", CLASS("GPT2LMHeadModel", "gpt2"), gpt2_names},
    {"stablelm", CLASS("StableLmForCausalLM", "stablelm"), stablelm_names},
    {"olmo2", CLASS("Olmo2ForCausalLM", "olmo2"), olmo2_names},
    {"granite", CLASS("GraniteForCausalLM", "granite"), llama_names},
    {"command-r", CLASS("CohereForCausalLM", "cohere"), command_r_names},
    {"cohere2", CLASS("Cohere2ForCausalLM", "cohere2"), cohere2_names},
    {"internlm2", CLASS("InternLM2ForCausalLM", "internlm2"), internlm2_names},
    {"bert", CLASS("BertModel", "bert"), bert_names},
    {"nomic-bert", CLASS("NomicBertModel", "nomic_bert"), nomic_bert_names},
    {"bitnet", CLASS("BitnetForCausalLM", "llama"), bitnet_names},
    {"t5", CLASS("T5ForConditionalGeneration", "t5"), t5_names},
    {"t5encoder", CLASS("T5EncoderModel", "t5"), t5encoder_names},
    {"jina-bert-v2", CLASS("JinaBertModel", "bert"), jina_bert_names},
    {"gptneox", CLASS("GPTNeoXForCausalLM", "gpt_neox"), gptneox_names},
    {"falcon", CLASS("FalconForCausalLM", "falcon"), falcon_names},
    {"mamba", CLASS("MambaForCausalLM", "mamba"), mamba_names},
    {"olmo", CLASS("OlmoForCausalLM", "olmo"), olmo_names},
    {"orion", CLASS("OrionForCausalLM", "orion"), orion_names},
    {"nemotron", CLASS("NemotronForCausalLM", "nemotron"), nemotron_names},
    {"bloom", CLASS("BloomForCausalLM", "bloom"), bloom_names},
    {"mpt", CLASS("MPTForCausalLM", "mpt"), mpt_names},
    {"dbrx", CLASS("DbrxForCausalLM", "dbrx"), dbrx_names},
    {"gpt-oss", CLASS("GptOssForCausalLM", "gpt_oss"), gpt_oss_names},
    {"lfm2", CLASS("Lfm2ForCausalLM", "lfm2"), lfm2_names},
    {"qwen3next", CLASS("Qwen3NextForCausalLM", "qwen3_next"), qwen3next_names},
    {"qwen35", CLASS("Qwen3_5ForConditionalGeneration", "qwen3_5"), qwen35_names},
    {"qwen35moe", CLASS("Qwen3_5MoeForConditionalGeneration", "qwen3_5_moe"), qwen35_names},
    {"qwen2vl", CLASS("Qwen2VLForConditionalGeneration", "qwen2_vl"), qwen_names},
    {"olmoe", CLASS("OlmoeForCausalLM", "olmoe"), olmoe_names},
    {"phimoe", CLASS("PhiMoEForCausalLM", "phimoe"), phimoe_names},
    {"deepseek", CLASS("DeepseekForCausalLM", "deepseek"), deepseek_names},
    {"minicpm", CLASS("MiniCPMForCausalLM", "minicpm"), minicpm_names},
    {"exaone", CLASS("ExaoneForCausalLM", "exaone"), exaone_names},
    {"starcoder", CLASS("GPTBigCodeForCausalLM", "gpt_bigcode"), starcoder_names},
    {"granitemoe", CLASS("GraniteMoeForCausalLM", "granitemoe"), granitemoe_names},
    {"baichuan", CLASS("BaichuanForCausalLM", "baichuan"), baichuan_names},
    {"refact", CLASS("GPTRefactForCausalLM", "gpt_refact"), refact_names},
    {"minicpm3", CLASS("MiniCPM3ForCausalLM", "minicpm3"), minicpm3_names},
    {"codeshell", CLASS("CodeShellForCausalLM", "codeshell"), codeshell_names},
    {"xverse", CLASS("XverseForCausalLM", "xverse"), llama_names},
    {"openelm", CLASS("OpenELMForCausalLM", "openelm"), openelm_names},
    {"jais", CLASS("JAISLMHeadModel", "jais"), jais_names},
    {"rwkv6", CLASS("Rwkv6ForCausalLM", "rwkv6"), rwkv6_names},
    {"rwkv6qwen2", CLASS("RWKV6Qwen2ForCausalLM", "rwkv6qwen2"), rwkv6qwen2_names},
    {"deci", CLASS("DeciLMForCausalLM", "deci"), deci_names},
    {"granitehybrid", CLASS("GraniteMoeHybridForCausalLM", "granitemoehybrid"), granite_hybrid_names},
    {"falcon-h1", CLASS("FalconH1ForCausalLM", "falcon_h1"), falcon_h1_names},
};
const size_t hf_rev_n_archs = sizeof(hf_rev_archs) / sizeof(hf_rev_archs[0]);

const hf_rev_variant hf_rev_variants[] = {
    {roberta_vocab, {"bert", CLASS("RobertaModel", "roberta"), roberta_names}},
    {xlmr_vocab, {"bert", CLASS("XLMRobertaModel", "xlm-roberta"), roberta_names}},
    {deepseek_v3_router, {"deepseek2", CLASS("DeepseekV3ForCausalLM", "deepseek_v3"), deepseek2_names}},
    {deci_block_configs, {"deci", CLASS("DeciLMForCausalLM", "nemotron-nas"), deci_names}},
    {ernie_fused_order, {"ernie4_5", CLASS("Ernie4_5ForCausalLM", "ernie4_5"), ernie_paddle_names}},
};
const size_t hf_rev_n_variants = sizeof(hf_rev_variants) / sizeof(hf_rev_variants[0]);
