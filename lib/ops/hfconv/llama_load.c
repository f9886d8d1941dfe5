/* llama_load.c - what llama.cpp's loader (src/llama-model.cpp and
 * llama-arch.cpp at c392e509) requires of a GGUF model, per architecture:
 * the architecture must be one it knows; the keys load_hparams reads
 * without a default (context_length, embedding_length, block_count, the
 * architecture's own) and tokenizer.ggml.model; the tensors load_tensors
 * creates unconditionally (per block for "{bid}" names); every key's type
 * as llama.cpp reads it (the GGUF reader's check_key hook). Conditional keys
 * and tensors (MoE or dense FFN, DeepSeek-V2 Lite's 27 layers, Command-R's
 * q/k norms at 64 layers...) and the loader's count of unused tensors are
 * not checked. The tables were read off those sources for the architectures
 * mfmt converts; the others are only checked to be known. */
#include "ops/hfconv/llama_load.h"

#include <stdio.h>
#include <stdlib.h>

static const char *const llama_archs[] = {
    "llama", "deci", "falcon", "grok", "gpt2", "gptj", "gptneox", "mpt", "baichuan", "starcoder", "refact", "bert", "nomic-bert", "jina-bert-v2", "bloom", "stablelm", "qwen", "qwen2", "qwen2moe", "qwen2vl", "phi2", "phi3", "phimoe", "plamo", "codeshell", "orion", "internlm2", "minicpm", "minicpm3", "gemma", "gemma2", "starcoder2", "mamba", "xverse", "command-r", "cohere2", "dbrx", "olmo", "olmo2", "olmoe", "openelm", "arctic", "deepseek", "deepseek2", "chatglm", "bitnet", "t5", "t5encoder", "jais", "nemotron", "exaone", "rwkv6", "rwkv6qwen2", "granite", "granitemoe", "chameleon", "wavtokenizer-dec",
    /* newer than c392e509: the families of the 2026-02 converter mfmt converts,
     * with their rules from src/llama-model.cpp at ecbcb7ea */
    "gpt-oss", "lfm2", "qwen3next", "qwen35", "qwen35moe", "granitehybrid", "falcon-h1", NULL,
};

/* LLM_ARCH_NAMES of src/llama-arch.cpp at ecbcb7ea (2026-02-27), the
 * runtime of the 2026-02 converter's references (--layout 2026-02) */
static const char *const llama_archs_2026[] = {
    "llama", "llama4", "deci", "falcon", "grok", "gpt2", "gptj", "gptneox", "mpt", "baichuan", "starcoder", "refact", "bert", "modern-bert", "nomic-bert", "nomic-bert-moe", "neo-bert", "jina-bert-v2", "jina-bert-v3", "eurobert", "bloom", "stablelm", "qwen", "qwen2", "qwen2moe", "qwen2vl", "qwen3", "qwen3moe", "qwen3next", "qwen3vl", "qwen3vlmoe", "qwen35", "qwen35moe", "phi2", "phi3", "phimoe", "plamo", "plamo2", "plamo3", "codeshell", "orion", "internlm2", "minicpm", "minicpm3", "gemma", "gemma2", "gemma3", "gemma3n", "gemma-embedding", "starcoder2", "mamba", "mamba2", "jamba", "falcon-h1", "xverse", "command-r", "cohere2", "dbrx", "olmo", "olmo2", "olmoe", "openelm", "arctic", "deepseek", "deepseek2", "chatglm", "glm4", "glm4moe", "glm-dsa", "bitnet", "t5", "t5encoder", "jais", "jais2", "nemotron", "nemotron_h", "nemotron_h_moe", "exaone", "exaone4", "exaone-moe", "rwkv6", "rwkv6qwen2", "rwkv7", "arwkv7", "granite", "granitemoe", "granitehybrid", "chameleon", "wavtokenizer-dec", "plm", "bailingmoe", "bailingmoe2", "dots1", "arcee", "afmoe", "ernie4_5", "ernie4_5-moe", "hunyuan-moe", "hunyuan-dense", "smollm3", "gpt-oss", "lfm2", "lfm2moe", "dream", "smallthinker", "llada", "llada-moe", "seed_oss", "grovemoe", "apertus", "minimax-m2", "cogvlm", "rnd1", "pangu-embedded", "mistral3", "paddleocr", "mimo2", "step35", "llama-embed", "maincoder", "kimi-linear", NULL,
};

static const struct {
    const char *arch;
    const char *const *keys;    /* after "<arch>." */
    const char *const *tensors; /* "{bid}": every block */
} required[] = {
    {"llama",
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_rms_epsilon", NULL},
     (const char *const[]){"token_embd.weight", "output_norm.weight", "blk.{bid}.attn_norm.weight", "blk.{bid}.attn_q.weight", "blk.{bid}.attn_k.weight", "blk.{bid}.attn_v.weight", "blk.{bid}.attn_output.weight", "blk.{bid}.ffn_norm.weight", NULL}},
    {"qwen2",
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_rms_epsilon", NULL},
     (const char *const[]){"token_embd.weight", "output_norm.weight", "blk.{bid}.attn_norm.weight", "blk.{bid}.attn_q.weight", "blk.{bid}.attn_k.weight", "blk.{bid}.attn_v.weight", "blk.{bid}.attn_output.weight", "blk.{bid}.attn_q.bias", "blk.{bid}.attn_k.bias", "blk.{bid}.attn_v.bias", "blk.{bid}.ffn_norm.weight", "blk.{bid}.ffn_gate.weight", "blk.{bid}.ffn_down.weight", "blk.{bid}.ffn_up.weight", NULL}},
    {"gemma",
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_rms_epsilon", NULL},
     (const char *const[]){"token_embd.weight", "output_norm.weight", "blk.{bid}.attn_norm.weight", "blk.{bid}.attn_q.weight", "blk.{bid}.attn_k.weight", "blk.{bid}.attn_v.weight", "blk.{bid}.attn_output.weight", "blk.{bid}.ffn_norm.weight", "blk.{bid}.ffn_gate.weight", "blk.{bid}.ffn_up.weight", "blk.{bid}.ffn_down.weight", NULL}},
    {"gemma2",
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_rms_epsilon", NULL},
     (const char *const[]){"token_embd.weight", "output_norm.weight", "blk.{bid}.attn_norm.weight", "blk.{bid}.attn_q.weight", "blk.{bid}.attn_k.weight", "blk.{bid}.attn_v.weight", "blk.{bid}.attn_output.weight", "blk.{bid}.post_attention_norm.weight", "blk.{bid}.ffn_norm.weight", "blk.{bid}.ffn_gate.weight", "blk.{bid}.ffn_up.weight", "blk.{bid}.ffn_down.weight", "blk.{bid}.post_ffw_norm.weight", NULL}},
    {"phi3",
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_rms_epsilon", NULL},
     (const char *const[]){"token_embd.weight", "output_norm.weight", "output.weight", "blk.{bid}.attn_norm.weight", "blk.{bid}.attn_output.weight", "blk.{bid}.ffn_norm.weight", "blk.{bid}.ffn_down.weight", "blk.{bid}.ffn_up.weight", NULL}},
    {"phi2",
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_epsilon", NULL},
     (const char *const[]){"token_embd.weight", "output_norm.weight", "output_norm.bias", "output.weight", "output.bias", "blk.{bid}.attn_norm.weight", "blk.{bid}.attn_norm.bias", "blk.{bid}.attn_output.weight", "blk.{bid}.attn_output.bias", "blk.{bid}.ffn_down.weight", "blk.{bid}.ffn_down.bias", "blk.{bid}.ffn_up.weight", "blk.{bid}.ffn_up.bias", NULL}},
    {"qwen2moe",
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_rms_epsilon", NULL},
     (const char *const[]){"token_embd.weight", "output_norm.weight", "output.weight", "blk.{bid}.attn_norm.weight", "blk.{bid}.attn_q.weight", "blk.{bid}.attn_k.weight", "blk.{bid}.attn_v.weight", "blk.{bid}.attn_output.weight", "blk.{bid}.attn_q.bias", "blk.{bid}.attn_k.bias", "blk.{bid}.attn_v.bias", "blk.{bid}.ffn_norm.weight", "blk.{bid}.ffn_gate_inp.weight", "blk.{bid}.ffn_gate_exps.weight", "blk.{bid}.ffn_down_exps.weight", "blk.{bid}.ffn_up_exps.weight", "blk.{bid}.ffn_gate_inp_shexp.weight", "blk.{bid}.ffn_gate_shexp.weight", "blk.{bid}.ffn_down_shexp.weight", "blk.{bid}.ffn_up_shexp.weight", NULL}},
    {"deepseek2",
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_rms_epsilon", "leading_dense_block_count", "attention.kv_lora_rank", "expert_feed_forward_length", "expert_shared_count", "expert_weights_scale", "rope.scaling.yarn_log_multiplier", NULL},
     (const char *const[]){"token_embd.weight", "output_norm.weight", "output.weight", "blk.{bid}.attn_norm.weight", "blk.{bid}.attn_kv_a_norm.weight", "blk.{bid}.attn_kv_a_mqa.weight", "blk.{bid}.attn_kv_b.weight", "blk.{bid}.attn_output.weight", "blk.{bid}.ffn_norm.weight", NULL}},
    {"starcoder2",
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_epsilon", NULL},
     (const char *const[]){"token_embd.weight", "output_norm.weight", "output_norm.bias", "blk.{bid}.attn_norm.weight", "blk.{bid}.attn_norm.bias", "blk.{bid}.attn_q.weight", "blk.{bid}.attn_k.weight", "blk.{bid}.attn_v.weight", "blk.{bid}.attn_output.weight", "blk.{bid}.attn_q.bias", "blk.{bid}.attn_k.bias", "blk.{bid}.attn_v.bias", "blk.{bid}.attn_output.bias", "blk.{bid}.ffn_norm.weight", "blk.{bid}.ffn_norm.bias", "blk.{bid}.ffn_down.weight", "blk.{bid}.ffn_up.weight", "blk.{bid}.ffn_down.bias", NULL}},
    {"gpt2",
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_epsilon", NULL},
     (const char *const[]){"token_embd.weight", "position_embd.weight", "output_norm.weight", "output_norm.bias", "output.weight", "blk.{bid}.attn_norm.weight", "blk.{bid}.attn_norm.bias", "blk.{bid}.attn_qkv.weight", "blk.{bid}.attn_qkv.bias", "blk.{bid}.attn_output.weight", "blk.{bid}.attn_output.bias", "blk.{bid}.ffn_norm.weight", "blk.{bid}.ffn_norm.bias", "blk.{bid}.ffn_down.weight", "blk.{bid}.ffn_down.bias", "blk.{bid}.ffn_up.weight", "blk.{bid}.ffn_up.bias", NULL}},
    {"stablelm",
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_epsilon", NULL},
     (const char *const[]){"token_embd.weight", "output_norm.bias", "output_norm.weight", "output.weight", "blk.{bid}.attn_norm.weight", "blk.{bid}.attn_norm.bias", "blk.{bid}.attn_q.weight", "blk.{bid}.attn_k.weight", "blk.{bid}.attn_v.weight", "blk.{bid}.attn_output.weight", "blk.{bid}.ffn_gate.weight", "blk.{bid}.ffn_down.weight", "blk.{bid}.ffn_up.weight", NULL}},
    {"bloom", /* LLM_ARCH_BLOOM: output is required (the converter writes the tied head twice) */
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_epsilon", NULL},
     (const char *const[]){"token_embd.weight", "token_embd_norm.weight", "token_embd_norm.bias", "output_norm.weight", "output_norm.bias", "output.weight", "blk.{bid}.attn_norm.weight", "blk.{bid}.attn_norm.bias", "blk.{bid}.attn_qkv.weight", "blk.{bid}.attn_qkv.bias", "blk.{bid}.attn_output.weight", "blk.{bid}.attn_output.bias", "blk.{bid}.ffn_norm.weight", "blk.{bid}.ffn_norm.bias", "blk.{bid}.ffn_down.weight", "blk.{bid}.ffn_down.bias", "blk.{bid}.ffn_up.weight", "blk.{bid}.ffn_up.bias", NULL}},
    {"mpt", /* LLM_ARCH_MPT: biases, q/k norms, position embeddings and output optional */
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_epsilon", "attention.max_alibi_bias", NULL},
     (const char *const[]){"token_embd.weight", "output_norm.weight", "blk.{bid}.attn_norm.weight", "blk.{bid}.attn_qkv.weight", "blk.{bid}.attn_output.weight", "blk.{bid}.ffn_norm.weight", "blk.{bid}.ffn_down.weight", "blk.{bid}.ffn_up.weight", NULL}},
    {"dbrx", /* LLM_ARCH_DBRX */
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_epsilon", "attention.clamp_kqv", NULL},
     (const char *const[]){"token_embd.weight", "output_norm.weight", "output.weight", "blk.{bid}.attn_norm.weight", "blk.{bid}.attn_qkv.weight", "blk.{bid}.attn_output.weight", "blk.{bid}.attn_output_norm.weight", "blk.{bid}.ffn_gate_inp.weight", "blk.{bid}.ffn_gate_exps.weight", "blk.{bid}.ffn_down_exps.weight", "blk.{bid}.ffn_up_exps.weight", NULL}},
    {"nomic-bert", /* LLM_ARCH_NOMIC_BERT: pooling_type required */
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_epsilon", "attention.causal", "pooling_type", NULL},
     (const char *const[]){"token_embd.weight", "token_types.weight", "token_embd_norm.weight", "token_embd_norm.bias", "blk.{bid}.attn_qkv.weight", "blk.{bid}.attn_output.weight", "blk.{bid}.attn_output_norm.weight", "blk.{bid}.attn_output_norm.bias", "blk.{bid}.ffn_up.weight", "blk.{bid}.ffn_down.weight", "blk.{bid}.ffn_gate.weight", "blk.{bid}.layer_output_norm.weight", "blk.{bid}.layer_output_norm.bias", NULL}},
    {"jina-bert-v2", /* LLM_ARCH_JINA_BERT_V2 */
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_epsilon", "attention.causal", NULL},
     (const char *const[]){"token_embd.weight", "token_types.weight", "token_embd_norm.weight", "token_embd_norm.bias", "blk.{bid}.attn_q.weight", "blk.{bid}.attn_q.bias", "blk.{bid}.attn_k.weight", "blk.{bid}.attn_k.bias", "blk.{bid}.attn_v.weight", "blk.{bid}.attn_v.bias", "blk.{bid}.attn_output.weight", "blk.{bid}.attn_output.bias", "blk.{bid}.attn_output_norm.weight", "blk.{bid}.attn_output_norm.bias", "blk.{bid}.ffn_up.weight", "blk.{bid}.ffn_gate.weight", "blk.{bid}.ffn_down.weight", "blk.{bid}.ffn_down.bias", "blk.{bid}.layer_output_norm.weight", "blk.{bid}.layer_output_norm.bias", NULL}},
    {"t5", /* LLM_ARCH_T5: output, attn_rel_b and ffn_gate optional */
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_rms_epsilon", "attention.relative_buckets_count", NULL},
     (const char *const[]){"token_embd.weight", "enc.output_norm.weight", "dec.output_norm.weight", "enc.blk.{bid}.attn_norm.weight", "enc.blk.{bid}.attn_q.weight", "enc.blk.{bid}.attn_k.weight", "enc.blk.{bid}.attn_v.weight", "enc.blk.{bid}.attn_o.weight", "enc.blk.{bid}.ffn_norm.weight", "enc.blk.{bid}.ffn_down.weight", "enc.blk.{bid}.ffn_up.weight", "dec.blk.{bid}.attn_norm.weight", "dec.blk.{bid}.attn_q.weight", "dec.blk.{bid}.attn_k.weight", "dec.blk.{bid}.attn_v.weight", "dec.blk.{bid}.attn_o.weight", "dec.blk.{bid}.cross_attn_norm.weight", "dec.blk.{bid}.cross_attn_q.weight", "dec.blk.{bid}.cross_attn_k.weight", "dec.blk.{bid}.cross_attn_v.weight", "dec.blk.{bid}.cross_attn_o.weight", "dec.blk.{bid}.ffn_norm.weight", "dec.blk.{bid}.ffn_down.weight", "dec.blk.{bid}.ffn_up.weight", NULL}},
    {"t5encoder", /* LLM_ARCH_T5ENCODER */
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_rms_epsilon", "attention.relative_buckets_count", NULL},
     (const char *const[]){"token_embd.weight", "enc.output_norm.weight", "enc.blk.{bid}.attn_norm.weight", "enc.blk.{bid}.attn_q.weight", "enc.blk.{bid}.attn_k.weight", "enc.blk.{bid}.attn_v.weight", "enc.blk.{bid}.attn_o.weight", "enc.blk.{bid}.ffn_norm.weight", "enc.blk.{bid}.ffn_down.weight", "enc.blk.{bid}.ffn_up.weight", NULL}},
    {"bitnet", /* LLM_ARCH_BITNET: no output tensor; the per-tensor scales optional */
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_rms_epsilon", NULL},
     (const char *const[]){"token_embd.weight", "output_norm.weight", "blk.{bid}.attn_norm.weight", "blk.{bid}.attn_sub_norm.weight", "blk.{bid}.attn_q.weight", "blk.{bid}.attn_k.weight", "blk.{bid}.attn_v.weight", "blk.{bid}.attn_output.weight", "blk.{bid}.ffn_norm.weight", "blk.{bid}.ffn_sub_norm.weight", "blk.{bid}.ffn_gate.weight", "blk.{bid}.ffn_down.weight", "blk.{bid}.ffn_up.weight", NULL}},
    {"olmo", /* llm_load_hparams / llm_load_tensors, LLM_ARCH_OLMO */
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_epsilon", NULL},
     (const char *const[]){"token_embd.weight", "blk.{bid}.attn_q.weight", "blk.{bid}.attn_k.weight", "blk.{bid}.attn_v.weight", "blk.{bid}.attn_output.weight", "blk.{bid}.ffn_gate.weight", "blk.{bid}.ffn_down.weight", "blk.{bid}.ffn_up.weight", NULL}},
    {"orion", /* llm_load_hparams / llm_load_tensors, LLM_ARCH_ORION */
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_epsilon", NULL},
     (const char *const[]){"token_embd.weight", "output_norm.weight", "output_norm.bias", "output.weight", "blk.{bid}.attn_norm.weight", "blk.{bid}.attn_norm.bias", "blk.{bid}.attn_q.weight", "blk.{bid}.attn_k.weight", "blk.{bid}.attn_v.weight", "blk.{bid}.attn_output.weight", "blk.{bid}.ffn_norm.weight", "blk.{bid}.ffn_norm.bias", "blk.{bid}.ffn_gate.weight", "blk.{bid}.ffn_down.weight", "blk.{bid}.ffn_up.weight", NULL}},
    {"nemotron", /* llm_load_hparams / llm_load_tensors, LLM_ARCH_NEMOTRON */
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_epsilon", NULL},
     (const char *const[]){"token_embd.weight", "output_norm.weight", "output_norm.bias", "output.weight", "blk.{bid}.attn_norm.weight", "blk.{bid}.attn_norm.bias", "blk.{bid}.attn_q.weight", "blk.{bid}.attn_k.weight", "blk.{bid}.attn_v.weight", "blk.{bid}.attn_output.weight", "blk.{bid}.ffn_norm.weight", "blk.{bid}.ffn_norm.bias", "blk.{bid}.ffn_down.weight", "blk.{bid}.ffn_up.weight", NULL}},
    {"olmo2",
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_rms_epsilon", NULL},
     (const char *const[]){"token_embd.weight", "output_norm.weight", "output.weight", "blk.{bid}.attn_q.weight", "blk.{bid}.attn_k.weight", "blk.{bid}.attn_v.weight", "blk.{bid}.attn_output.weight", "blk.{bid}.attn_q_norm.weight", "blk.{bid}.attn_k_norm.weight", "blk.{bid}.post_attention_norm.weight", "blk.{bid}.ffn_gate.weight", "blk.{bid}.ffn_up.weight", "blk.{bid}.ffn_down.weight", "blk.{bid}.post_ffw_norm.weight", NULL}},
    {"granite",
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_rms_epsilon", "logit_scale", "residual_scale", "embedding_scale", "attention.scale", NULL},
     (const char *const[]){"token_embd.weight", "output_norm.weight", "blk.{bid}.attn_norm.weight", "blk.{bid}.attn_q.weight", "blk.{bid}.attn_k.weight", "blk.{bid}.attn_v.weight", "blk.{bid}.attn_output.weight", "blk.{bid}.ffn_norm.weight", NULL}},
    {"command-r",
     (const char *const[]){"context_length", "embedding_length", "block_count", "logit_scale", "attention.layer_norm_epsilon", NULL},
     (const char *const[]){"token_embd.weight", "output_norm.weight", "blk.{bid}.attn_norm.weight", "blk.{bid}.attn_q.weight", "blk.{bid}.attn_k.weight", "blk.{bid}.attn_v.weight", "blk.{bid}.attn_output.weight", "blk.{bid}.ffn_gate.weight", "blk.{bid}.ffn_down.weight", "blk.{bid}.ffn_up.weight", NULL}},
    {"gpt-oss", /* ecbcb7ea load_hparams / load_tensors, LLM_ARCH_OPENAI_MOE */
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_rms_epsilon", "expert_feed_forward_length", "attention.sliding_window", NULL},
     (const char *const[]){"token_embd.weight", "output_norm.weight", "output.weight", "blk.{bid}.attn_norm.weight", "blk.{bid}.post_attention_norm.weight", "blk.{bid}.attn_q.weight", "blk.{bid}.attn_k.weight", "blk.{bid}.attn_v.weight", "blk.{bid}.attn_output.weight", "blk.{bid}.attn_sinks.weight", "blk.{bid}.ffn_gate_inp.weight", "blk.{bid}.ffn_gate_exps.weight", "blk.{bid}.ffn_down_exps.weight", "blk.{bid}.ffn_up_exps.weight", "blk.{bid}.attn_q.bias", "blk.{bid}.attn_k.bias", "blk.{bid}.attn_v.bias", "blk.{bid}.attn_output.bias", "blk.{bid}.ffn_gate_inp.bias", "blk.{bid}.ffn_gate_exps.bias", "blk.{bid}.ffn_down_exps.bias", "blk.{bid}.ffn_up_exps.bias", NULL}},
    /* ecbcb7ea, LLM_ARCH_QWEN3NEXT / QWEN35 / QWEN35MOE: the gated delta-net sizes;
     * per-layer tensors depend on full_attention_interval (not checked) */
    {"qwen3next",
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_rms_epsilon", "ssm.conv_kernel", "ssm.inner_size", "ssm.state_size", "ssm.time_step_rank", "ssm.group_count", NULL},
     (const char *const[]){"token_embd.weight", "output_norm.weight", "blk.{bid}.attn_norm.weight", "blk.{bid}.post_attention_norm.weight", NULL}},
    {"qwen35",
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_rms_epsilon", "rope.dimension_sections", "ssm.conv_kernel", "ssm.inner_size", "ssm.state_size", "ssm.time_step_rank", "ssm.group_count", NULL},
     (const char *const[]){"token_embd.weight", "output_norm.weight", "blk.{bid}.attn_norm.weight", "blk.{bid}.post_attention_norm.weight", NULL}},
    {"qwen35moe",
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_rms_epsilon", "rope.dimension_sections", "ssm.conv_kernel", "ssm.inner_size", "ssm.state_size", "ssm.time_step_rank", "ssm.group_count", NULL},
     (const char *const[]){"token_embd.weight", "output_norm.weight", "blk.{bid}.attn_norm.weight", "blk.{bid}.post_attention_norm.weight", NULL}},
    {"rwkv6", /* llm_load_hparams / llm_load_tensors, LLM_ARCH_RWKV6 (c392e509) */
     (const char *const[]){"context_length", "embedding_length", "block_count", "wkv.head_size", "time_mix_extra_dim", "time_decay_extra_dim", NULL},
     (const char *const[]){"token_embd.weight", "token_embd_norm.weight", "token_embd_norm.bias", "output_norm.weight", "output_norm.bias", "output.weight", "blk.{bid}.attn_norm.weight", "blk.{bid}.attn_norm.bias", "blk.{bid}.attn_norm_2.weight", "blk.{bid}.attn_norm_2.bias", "blk.{bid}.time_mix_w1.weight", "blk.{bid}.time_mix_w2.weight", "blk.{bid}.time_mix_lerp_x.weight", "blk.{bid}.time_mix_first.weight", "blk.{bid}.time_mix_decay.weight", "blk.{bid}.time_mix_decay_w1.weight", "blk.{bid}.time_mix_decay_w2.weight", "blk.{bid}.time_mix_key.weight", "blk.{bid}.time_mix_value.weight", "blk.{bid}.time_mix_receptance.weight", "blk.{bid}.time_mix_gate.weight", "blk.{bid}.time_mix_ln.weight", "blk.{bid}.time_mix_ln.bias", "blk.{bid}.time_mix_output.weight", "blk.{bid}.channel_mix_lerp_k.weight", "blk.{bid}.channel_mix_lerp_r.weight", "blk.{bid}.channel_mix_key.weight", "blk.{bid}.channel_mix_value.weight", "blk.{bid}.channel_mix_receptance.weight", NULL}},
    {"rwkv6qwen2", /* llm_load_hparams / llm_load_tensors, LLM_ARCH_RWKV6QWEN2 (c392e509) */
     (const char *const[]){"context_length", "embedding_length", "block_count", "wkv.head_size", "time_mix_extra_dim", "time_decay_extra_dim", NULL},
     (const char *const[]){"token_embd.weight", "output_norm.weight", "output.weight", "blk.{bid}.attn_norm.weight", "blk.{bid}.time_mix_w1.weight", "blk.{bid}.time_mix_w2.weight", "blk.{bid}.time_mix_lerp_x.weight", "blk.{bid}.time_mix_lerp_fused.weight", "blk.{bid}.time_mix_decay.weight", "blk.{bid}.time_mix_decay_w1.weight", "blk.{bid}.time_mix_decay_w2.weight", "blk.{bid}.time_mix_key.weight", "blk.{bid}.time_mix_value.weight", "blk.{bid}.time_mix_receptance.weight", "blk.{bid}.time_mix_gate.weight", "blk.{bid}.time_mix_output.weight", "blk.{bid}.ffn_norm.weight", "blk.{bid}.ffn_gate.weight", "blk.{bid}.ffn_down.weight", "blk.{bid}.ffn_up.weight", NULL}},
    {"granitehybrid", /* ecbcb7ea, LLM_ARCH_GRANITE_HYBRID: per layer Mamba-2 or attention by head_count_kv[il]
                         (not checked); the loader asserts ssm.inner_size == 2 * embedding_length */
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_rms_epsilon", "ssm.conv_kernel", "ssm.inner_size", "ssm.state_size", "ssm.time_step_rank", "ssm.group_count", NULL},
     (const char *const[]){"token_embd.weight", "output_norm.weight", "blk.{bid}.attn_norm.weight", "blk.{bid}.ffn_norm.weight", NULL}},
    {"falcon-h1", /* ecbcb7ea, LLM_ARCH_FALCON_H1: every block has both mixers; ffn_norm has no suffix */
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_rms_epsilon", "ssm.conv_kernel", "ssm.inner_size", "ssm.state_size", "ssm.time_step_rank", "ssm.group_count", NULL},
     (const char *const[]){"token_embd.weight", "output_norm.weight", "blk.{bid}.ssm_in.weight", "blk.{bid}.ssm_conv1d.weight", "blk.{bid}.ssm_dt.bias", "blk.{bid}.ssm_a", "blk.{bid}.ssm_d", "blk.{bid}.ssm_out.weight", "blk.{bid}.attn_q.weight", "blk.{bid}.attn_k.weight", "blk.{bid}.attn_v.weight", "blk.{bid}.attn_output.weight", "blk.{bid}.attn_norm.weight", "blk.{bid}.ffn_norm", "blk.{bid}.ffn_gate.weight", "blk.{bid}.ffn_down.weight", "blk.{bid}.ffn_up.weight", NULL}},
    {"lfm2", /* ecbcb7ea, LLM_ARCH_LFM2: the per-layer tensors depend on head_count_kv[il] (not checked) */
     (const char *const[]){"context_length", "embedding_length", "block_count", "shortconv.l_cache", "attention.layer_norm_rms_epsilon", NULL},
     (const char *const[]){"token_embd.weight", "token_embd_norm.weight", "blk.{bid}.ffn_norm.weight", "blk.{bid}.attn_norm.weight", NULL}},
    {"deci", /* LLM_ARCH_DECI (c392e509): attention tensors by the layer's head counts (none, linear
                attn_output only, or q/k/v/output: not checked); output falls back to token_embd */
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_rms_epsilon", NULL},
     (const char *const[]){"token_embd.weight", "output_norm.weight", "blk.{bid}.ffn_norm.weight", "blk.{bid}.ffn_gate.weight", "blk.{bid}.ffn_down.weight", "blk.{bid}.ffn_up.weight", NULL}},
    {"cohere2", /* llm_load_hparams / llm_load_tensors, LLM_ARCH_COHERE2 */
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.sliding_window", "logit_scale", "attention.layer_norm_epsilon", NULL},
     (const char *const[]){"token_embd.weight", "output_norm.weight", "blk.{bid}.attn_norm.weight", "blk.{bid}.attn_q.weight", "blk.{bid}.attn_k.weight", "blk.{bid}.attn_v.weight", "blk.{bid}.attn_output.weight", "blk.{bid}.ffn_gate.weight", "blk.{bid}.ffn_down.weight", "blk.{bid}.ffn_up.weight", NULL}},
    {"qwen2vl", /* llm_load_hparams / llm_load_tensors, LLM_ARCH_QWEN2VL (QWEN2's, rope sections first) */
     (const char *const[]){"context_length", "embedding_length", "block_count", "rope.dimension_sections", "attention.layer_norm_rms_epsilon", NULL},
     (const char *const[]){"token_embd.weight", "output_norm.weight", "blk.{bid}.attn_norm.weight", "blk.{bid}.attn_q.weight", "blk.{bid}.attn_k.weight", "blk.{bid}.attn_v.weight", "blk.{bid}.attn_output.weight", "blk.{bid}.attn_q.bias", "blk.{bid}.attn_k.bias", "blk.{bid}.attn_v.bias", "blk.{bid}.ffn_norm.weight", "blk.{bid}.ffn_gate.weight", "blk.{bid}.ffn_down.weight", "blk.{bid}.ffn_up.weight", NULL}},
    {"phimoe", /* LLM_ARCH_PHIMOE: q, k, v (or qkv) not checked */
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_rms_epsilon", NULL},
     (const char *const[]){"token_embd.weight", "output_norm.weight", "output_norm.bias", "output.weight", "output.bias", "blk.{bid}.attn_norm.weight", "blk.{bid}.attn_norm.bias", "blk.{bid}.attn_output.weight", "blk.{bid}.attn_output.bias", "blk.{bid}.ffn_norm.weight", "blk.{bid}.ffn_norm.bias", "blk.{bid}.ffn_gate_inp.weight", "blk.{bid}.ffn_gate_exps.weight", "blk.{bid}.ffn_down_exps.weight", "blk.{bid}.ffn_up_exps.weight", NULL}},
    {"olmoe", /* LLM_ARCH_OLMOE */
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_rms_epsilon", NULL},
     (const char *const[]){"token_embd.weight", "output_norm.weight", "output.weight", "blk.{bid}.attn_norm.weight", "blk.{bid}.attn_q.weight", "blk.{bid}.attn_k.weight", "blk.{bid}.attn_v.weight", "blk.{bid}.attn_output.weight", "blk.{bid}.attn_q_norm.weight", "blk.{bid}.attn_k_norm.weight", "blk.{bid}.ffn_norm.weight", "blk.{bid}.ffn_gate_inp.weight", "blk.{bid}.ffn_gate_exps.weight", "blk.{bid}.ffn_down_exps.weight", "blk.{bid}.ffn_up_exps.weight", NULL}},
    {"deepseek", /* LLM_ARCH_DEEPSEEK: dense or MoE FFN per block, not checked */
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_rms_epsilon", "leading_dense_block_count", "expert_feed_forward_length", "expert_shared_count", "expert_weights_scale", NULL},
     (const char *const[]){"token_embd.weight", "output_norm.weight", "output.weight", "blk.{bid}.attn_norm.weight", "blk.{bid}.attn_q.weight", "blk.{bid}.attn_k.weight", "blk.{bid}.attn_v.weight", "blk.{bid}.attn_output.weight", "blk.{bid}.ffn_norm.weight", NULL}},
    {"minicpm", /* LLM_ARCH_MINICPM: LLaMA's tensors */
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_rms_epsilon", "embedding_scale", "residual_scale", "logit_scale", NULL},
     (const char *const[]){"token_embd.weight", "output_norm.weight", "blk.{bid}.attn_norm.weight", "blk.{bid}.attn_q.weight", "blk.{bid}.attn_k.weight", "blk.{bid}.attn_v.weight", "blk.{bid}.attn_output.weight", "blk.{bid}.ffn_norm.weight", NULL}},
    {"exaone", /* LLM_ARCH_EXAONE */
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_rms_epsilon", NULL},
     (const char *const[]){"token_embd.weight", "output_norm.weight", "output.weight", "blk.{bid}.attn_norm.weight", "blk.{bid}.attn_q.weight", "blk.{bid}.attn_k.weight", "blk.{bid}.attn_v.weight", "blk.{bid}.attn_output.weight", "blk.{bid}.ffn_norm.weight", "blk.{bid}.ffn_gate.weight", "blk.{bid}.ffn_down.weight", "blk.{bid}.ffn_up.weight", NULL}},
    {"starcoder", /* LLM_ARCH_STARCODER: output falls back to token_embd */
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_epsilon", NULL},
     (const char *const[]){"token_embd.weight", "position_embd.weight", "output_norm.weight", "output_norm.bias", "blk.{bid}.attn_norm.weight", "blk.{bid}.attn_norm.bias", "blk.{bid}.attn_qkv.weight", "blk.{bid}.attn_qkv.bias", "blk.{bid}.attn_output.weight", "blk.{bid}.attn_output.bias", "blk.{bid}.ffn_norm.weight", "blk.{bid}.ffn_norm.bias", "blk.{bid}.ffn_down.weight", "blk.{bid}.ffn_down.bias", "blk.{bid}.ffn_up.weight", "blk.{bid}.ffn_up.bias", NULL}},
    {"granitemoe", /* LLM_ARCH_GRANITE_MOE: LLaMA's tensors, the Granite scales */
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_rms_epsilon", "logit_scale", "residual_scale", "embedding_scale", "attention.scale", NULL},
     (const char *const[]){"token_embd.weight", "output_norm.weight", "blk.{bid}.attn_norm.weight", "blk.{bid}.attn_q.weight", "blk.{bid}.attn_k.weight", "blk.{bid}.attn_v.weight", "blk.{bid}.attn_output.weight", "blk.{bid}.ffn_norm.weight", NULL}},
    {"baichuan", /* LLM_ARCH_BAICHUAN */
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_rms_epsilon", NULL},
     (const char *const[]){"token_embd.weight", "output_norm.weight", "output.weight", "blk.{bid}.attn_norm.weight", "blk.{bid}.attn_q.weight", "blk.{bid}.attn_k.weight", "blk.{bid}.attn_v.weight", "blk.{bid}.attn_output.weight", "blk.{bid}.ffn_norm.weight", "blk.{bid}.ffn_gate.weight", "blk.{bid}.ffn_down.weight", "blk.{bid}.ffn_up.weight", NULL}},
    {"refact", /* LLM_ARCH_REFACT: LLaMA's tensors */
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_rms_epsilon", NULL},
     (const char *const[]){"token_embd.weight", "output_norm.weight", "blk.{bid}.attn_norm.weight", "blk.{bid}.attn_q.weight", "blk.{bid}.attn_k.weight", "blk.{bid}.attn_v.weight", "blk.{bid}.attn_output.weight", "blk.{bid}.ffn_norm.weight", NULL}},
    {"minicpm3", /* LLM_ARCH_MINICPM3 */
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_rms_epsilon", "attention.q_lora_rank", "attention.kv_lora_rank", NULL},
     (const char *const[]){"token_embd.weight", "output_norm.weight", "blk.{bid}.attn_norm.weight", "blk.{bid}.attn_q_a_norm.weight", "blk.{bid}.attn_kv_a_norm.weight", "blk.{bid}.attn_q_a.weight", "blk.{bid}.attn_q_b.weight", "blk.{bid}.attn_kv_a_mqa.weight", "blk.{bid}.attn_kv_b.weight", "blk.{bid}.attn_output.weight", "blk.{bid}.ffn_norm.weight", "blk.{bid}.ffn_gate.weight", "blk.{bid}.ffn_down.weight", "blk.{bid}.ffn_up.weight", NULL}},
    {"codeshell", /* LLM_ARCH_CODESHELL */
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_epsilon", NULL},
     (const char *const[]){"token_embd.weight", "output_norm.weight", "output_norm.bias", "output.weight", "blk.{bid}.attn_norm.weight", "blk.{bid}.attn_norm.bias", "blk.{bid}.attn_qkv.weight", "blk.{bid}.attn_qkv.bias", "blk.{bid}.attn_output.weight", "blk.{bid}.attn_output.bias", "blk.{bid}.ffn_norm.weight", "blk.{bid}.ffn_norm.bias", "blk.{bid}.ffn_down.weight", "blk.{bid}.ffn_down.bias", "blk.{bid}.ffn_up.weight", "blk.{bid}.ffn_up.bias", NULL}},
    {"xverse", /* LLM_ARCH_XVERSE */
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_rms_epsilon", NULL},
     (const char *const[]){"token_embd.weight", "output_norm.weight", "output.weight", "blk.{bid}.attn_norm.weight", "blk.{bid}.attn_q.weight", "blk.{bid}.attn_k.weight", "blk.{bid}.attn_v.weight", "blk.{bid}.attn_output.weight", "blk.{bid}.ffn_norm.weight", "blk.{bid}.ffn_gate.weight", "blk.{bid}.ffn_down.weight", "blk.{bid}.ffn_up.weight", NULL}},
    {"openelm", /* LLM_ARCH_OPENELM: output is token_embd (duplicated) */
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_rms_epsilon", NULL},
     (const char *const[]){"token_embd.weight", "output_norm.weight", "blk.{bid}.attn_norm.weight", "blk.{bid}.attn_qkv.weight", "blk.{bid}.attn_q_norm.weight", "blk.{bid}.attn_k_norm.weight", "blk.{bid}.attn_output.weight", "blk.{bid}.ffn_norm.weight", "blk.{bid}.ffn_gate.weight", "blk.{bid}.ffn_down.weight", "blk.{bid}.ffn_up.weight", NULL}},
    {"jais", /* LLM_ARCH_JAIS */
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_epsilon", "attention.max_alibi_bias", NULL},
     (const char *const[]){"token_embd.weight", "output_norm.weight", "output_norm.bias", "output.weight", "blk.{bid}.attn_norm.weight", "blk.{bid}.attn_norm.bias", "blk.{bid}.attn_qkv.weight", "blk.{bid}.attn_qkv.bias", "blk.{bid}.attn_output.weight", "blk.{bid}.attn_output.bias", "blk.{bid}.ffn_norm.weight", "blk.{bid}.ffn_norm.bias", "blk.{bid}.ffn_down.weight", "blk.{bid}.ffn_down.bias", "blk.{bid}.ffn_gate.weight", "blk.{bid}.ffn_gate.bias", "blk.{bid}.ffn_up.weight", "blk.{bid}.ffn_up.bias", NULL}},
    {"internlm2",
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_rms_epsilon", NULL},
     (const char *const[]){"token_embd.weight", "output_norm.weight", "output.weight", "blk.{bid}.attn_norm.weight", "blk.{bid}.attn_q.weight", "blk.{bid}.attn_k.weight", "blk.{bid}.attn_v.weight", "blk.{bid}.attn_output.weight", "blk.{bid}.ffn_norm.weight", "blk.{bid}.ffn_gate.weight", "blk.{bid}.ffn_down.weight", "blk.{bid}.ffn_up.weight", NULL}},
    {"bert",
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_epsilon", "attention.causal", NULL},
     (const char *const[]){"token_embd.weight", "token_types.weight", "position_embd.weight", "token_embd_norm.weight", "token_embd_norm.bias", "blk.{bid}.attn_output.weight", "blk.{bid}.attn_output_norm.weight", "blk.{bid}.attn_output_norm.bias", "blk.{bid}.ffn_up.weight", "blk.{bid}.ffn_down.weight", "blk.{bid}.layer_output_norm.weight", "blk.{bid}.layer_output_norm.bias", NULL}},
    {"gptneox",
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_epsilon", "use_parallel_residual", NULL},
     (const char *const[]){"token_embd.weight", "output_norm.weight", "output_norm.bias", "output.weight", "blk.{bid}.attn_norm.weight", "blk.{bid}.attn_norm.bias", "blk.{bid}.attn_qkv.weight", "blk.{bid}.attn_qkv.bias", "blk.{bid}.attn_output.weight", "blk.{bid}.attn_output.bias", "blk.{bid}.ffn_norm.weight", "blk.{bid}.ffn_norm.bias", "blk.{bid}.ffn_down.weight", "blk.{bid}.ffn_down.bias", "blk.{bid}.ffn_up.weight", "blk.{bid}.ffn_up.bias", NULL}},
    {"falcon",
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_epsilon", NULL},
     (const char *const[]){"token_embd.weight", "output_norm.weight", "output_norm.bias", "blk.{bid}.attn_norm.weight", "blk.{bid}.attn_norm.bias", "blk.{bid}.attn_qkv.weight", "blk.{bid}.attn_output.weight", "blk.{bid}.ffn_down.weight", "blk.{bid}.ffn_up.weight", NULL}},
    /* runtime ecbcb7ea (llama-model.cpp load_hparams / load_tensors) */
    {"qwen3moe",
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_rms_epsilon", NULL},
     (const char *const[]){"token_embd.weight", "output_norm.weight", "blk.{bid}.attn_norm.weight", "blk.{bid}.attn_q.weight", "blk.{bid}.attn_k.weight", "blk.{bid}.attn_v.weight", "blk.{bid}.attn_output.weight", "blk.{bid}.attn_k_norm.weight", "blk.{bid}.attn_q_norm.weight", "blk.{bid}.ffn_norm.weight", "blk.{bid}.ffn_gate_inp.weight", "blk.{bid}.ffn_gate_exps.weight", "blk.{bid}.ffn_down_exps.weight", "blk.{bid}.ffn_up_exps.weight", NULL}},
    {"smollm3",
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_rms_epsilon", NULL},
     (const char *const[]){"token_embd.weight", "output_norm.weight", "blk.{bid}.attn_norm.weight", "blk.{bid}.attn_q.weight", "blk.{bid}.attn_k.weight", "blk.{bid}.attn_v.weight", "blk.{bid}.attn_output.weight", "blk.{bid}.ffn_norm.weight", "blk.{bid}.ffn_gate.weight", "blk.{bid}.ffn_down.weight", "blk.{bid}.ffn_up.weight", NULL}},
    {"mistral3",
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_rms_epsilon", NULL},
     (const char *const[]){"token_embd.weight", "output_norm.weight", "blk.{bid}.attn_norm.weight", "blk.{bid}.attn_q.weight", "blk.{bid}.attn_k.weight", "blk.{bid}.attn_v.weight", "blk.{bid}.attn_output.weight", "blk.{bid}.ffn_norm.weight", "blk.{bid}.ffn_gate.weight", "blk.{bid}.ffn_down.weight", "blk.{bid}.ffn_up.weight", NULL}},
    {"gemma3",
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_rms_epsilon", NULL},
     (const char *const[]){"token_embd.weight", "output_norm.weight", "blk.{bid}.attn_norm.weight", "blk.{bid}.attn_q.weight", "blk.{bid}.attn_k.weight", "blk.{bid}.attn_v.weight", "blk.{bid}.attn_output.weight", "blk.{bid}.post_attention_norm.weight", "blk.{bid}.attn_k_norm.weight", "blk.{bid}.attn_q_norm.weight", "blk.{bid}.ffn_norm.weight", "blk.{bid}.ffn_gate.weight", "blk.{bid}.ffn_up.weight", "blk.{bid}.ffn_down.weight", "blk.{bid}.post_ffw_norm.weight", NULL}},
    {"hunyuan-dense",
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_rms_epsilon", NULL},
     (const char *const[]){"token_embd.weight", "output_norm.weight", "blk.{bid}.attn_norm.weight", "blk.{bid}.attn_q.weight", "blk.{bid}.attn_k.weight", "blk.{bid}.attn_v.weight", "blk.{bid}.attn_output.weight", "blk.{bid}.attn_k_norm.weight", "blk.{bid}.attn_q_norm.weight", "blk.{bid}.ffn_norm.weight", "blk.{bid}.ffn_gate.weight", "blk.{bid}.ffn_down.weight", "blk.{bid}.ffn_up.weight", NULL}},
    {"glm4moe",
     (const char *const[]){"context_length", "embedding_length", "block_count", "expert_feed_forward_length", "attention.layer_norm_rms_epsilon", "expert_count", "expert_used_count", "expert_shared_count", "expert_weights_scale", NULL},
     (const char *const[]){"token_embd.weight", "output_norm.weight", "blk.{bid}.attn_norm.weight", "blk.{bid}.attn_q.weight", "blk.{bid}.attn_k.weight", "blk.{bid}.attn_v.weight", "blk.{bid}.attn_output.weight", "blk.{bid}.post_attention_norm.weight", NULL}},
    {"ernie4_5",
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_rms_epsilon", NULL},
     (const char *const[]){"token_embd.weight", "output_norm.weight", "blk.{bid}.attn_norm.weight", "blk.{bid}.attn_q.weight", "blk.{bid}.attn_k.weight", "blk.{bid}.attn_v.weight", "blk.{bid}.attn_output.weight", "blk.{bid}.ffn_norm.weight", NULL}},
    {"ernie4_5-moe",
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_rms_epsilon", "expert_feed_forward_length", "interleave_moe_layer_step", "leading_dense_block_count", NULL},
     (const char *const[]){"token_embd.weight", "output_norm.weight", "blk.{bid}.attn_norm.weight", "blk.{bid}.attn_q.weight", "blk.{bid}.attn_k.weight", "blk.{bid}.attn_v.weight", "blk.{bid}.attn_output.weight", "blk.{bid}.ffn_norm.weight", NULL}},
    {"llama4",
     (const char *const[]){"context_length", "embedding_length", "block_count", "attention.layer_norm_rms_epsilon", "expert_feed_forward_length", "interleave_moe_layer_step", NULL},
     (const char *const[]){"token_embd.weight", "output_norm.weight", "blk.{bid}.attn_norm.weight", "blk.{bid}.attn_q.weight", "blk.{bid}.attn_k.weight", "blk.{bid}.attn_v.weight", "blk.{bid}.attn_output.weight", "blk.{bid}.ffn_norm.weight", NULL}},
    {"mamba",
     (const char *const[]){"context_length", "embedding_length", "block_count", "ssm.conv_kernel", "ssm.inner_size", "ssm.state_size", "ssm.time_step_rank", "attention.layer_norm_rms_epsilon", NULL},
     (const char *const[]){"token_embd.weight", "output_norm.weight", "blk.{bid}.attn_norm.weight", "blk.{bid}.ssm_in.weight", "blk.{bid}.ssm_conv1d.weight", "blk.{bid}.ssm_conv1d.bias", "blk.{bid}.ssm_x.weight", "blk.{bid}.ssm_dt.weight", "blk.{bid}.ssm_dt.bias", "blk.{bid}.ssm_out.weight", NULL}},
};

static const mf_value *meta(const mf_model *m, const char *key)
{
    return mf_meta_get(m, key);
}

static void report(mf_load_problem_fn fn, void *ctx, size_t *n, const char *fmt, ...) MF_PRINTF(4, 5);
static void report(mf_load_problem_fn fn, void *ctx, size_t *n, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    (*n)++;
    if (fn)
        fn(ctx, msg);
}

static bool known_in(const char *const *list, const char *arch)
{
    for (size_t i = 0; list[i]; i++)
        if (!strcmp(list[i], arch))
            return true;
    return false;
}

static bool known_arch(const char *arch)
{
    return known_in(llama_archs, arch);
}

static size_t required_row(const char *arch)
{
    for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++)
        if (!strcmp(required[i].arch, arch))
            return i;
    return (size_t)-1;
}

static size_t hparams_problems(const char *arch, bool current, mf_key_lookup_fn get, void *hctx,
                               mf_load_problem_fn fn, void *ctx)
{
    size_t n = 0;
    if (current && !known_in(llama_archs_2026, arch)) {
        report(fn, ctx, &n, "unknown model architecture '%s' (llama.cpp ecbcb7ea does not know it)", arch);
        return n;
    }
    if (!current && !known_arch(arch)) {
        report(fn, ctx, &n, "unknown model architecture '%s' (llama.cpp c392e509 knows llama, gemma, qwen2, ... "
               "but not this one)", arch);
        return n;
    }
    size_t r = required_row(arch);
    for (const char *const *k = r == (size_t)-1 ? NULL : required[r].keys; k && *k; k++) {
        char key[256];
        snprintf(key, sizeof(key), "%s.%s", arch, *k);
        if (!get(hctx, key))
            report(fn, ctx, &n, "key not found in model: %s", key);
    }
    if (!strcmp(arch, "deepseek2")) { /* only the 27-layer Lite layout goes without q_lora_rank */
        const mf_value *bc = get(hctx, "deepseek2.block_count");
        if (bc && bc->type == MF_V_U32 && bc->as.u != 27 && !get(hctx, "deepseek2.attention.q_lora_rank"))
            report(fn, ctx, &n, "key not found in model: deepseek2.attention.q_lora_rank (required unless "
                   "the model has 27 layers, DeepSeek-V2 Lite)");
    }
    return n;
}

size_t mf_llama_hparams_problems(const char *arch, mf_key_lookup_fn get, void *hctx,
                                 mf_load_problem_fn fn, void *ctx)
{
    return hparams_problems(arch, false, get, hctx, fn, ctx);
}

size_t mf_llama_hparams_problems_2026(const char *arch, mf_key_lookup_fn get, void *hctx,
                                      mf_load_problem_fn fn, void *ctx)
{
    return hparams_problems(arch, true, get, hctx, fn, ctx);
}

static const mf_value *model_get(void *m, const char *key)
{
    return meta(m, key);
}

/* Keys of a type llama.cpp does not read them as (the reader's check_key
 * hook): its loader throws "key ... has wrong type", llama-vocab asserts. */
static size_t key_type_problems(const mf_model *m, mf_load_problem_fn fn, void *ctx)
{
    size_t n = 0;
    const mf_edit_hooks *h = m->reader ? m->reader->edit : NULL;
    for (size_t i = 0; h && h->check_key && i < m->n_meta; i++) {
        mf_status st;
        mf_status_init(&st);
        if (h->check_key(m, &m->meta[i], &st))
            report(fn, ctx, &n, "%s", st.msg);
        mf_status_clear(&st);
    }
    return n;
}

/* An mmproj file (general.architecture "clip") is not a model llama.cpp's
 * loader reads: libmtmd's clip loader does (tools/mtmd/clip.cpp at b10256,
 * clip_model_loader::load_hparams). The keys it reads without a default
 * for a vision encoder and for an audio encoder, and a projector type
 * (clip.projector_type, else the encoder's own). */
static size_t clip_encoder_problems(const mf_model *m, const char *has, const char *own_type,
                                    const char *const *keys, mf_load_problem_fn fn, void *ctx, size_t *n)
{
    const mf_value *h = meta(m, has);
    if (!h || h->type != MF_V_BOOL || !h->as.b)
        return 0;
    const mf_value *pt = meta(m, "clip.projector_type");
    if (!pt)
        pt = meta(m, own_type);
    if (!pt || pt->type != MF_V_STR)
        report(fn, ctx, n, "mtmd's clip loader: no clip.projector_type string (unknown projector type)");
    for (const char *const *k = keys; *k; k++)
        if (!meta(m, *k))
            report(fn, ctx, n, "mtmd's clip loader: key not found in model: %s", *k);
    return 1;
}

static size_t clip_problems(const mf_model *m, mf_load_problem_fn fn, void *ctx)
{
    static const char *const vision_keys[] = {
        "clip.vision.embedding_length", "clip.vision.attention.head_count", "clip.vision.feed_forward_length",
        "clip.vision.block_count", "clip.vision.projection_dim", "clip.vision.attention.layer_norm_epsilon",
        "clip.vision.image_size", "clip.vision.patch_size", NULL};
    static const char *const audio_keys[] = {
        "clip.audio.embedding_length", "clip.audio.attention.head_count", "clip.audio.feed_forward_length",
        "clip.audio.block_count", "clip.audio.projection_dim", "clip.audio.attention.layer_norm_epsilon",
        "clip.audio.num_mel_bins", NULL};
    size_t n = 0;
    size_t encoders = clip_encoder_problems(m, "clip.has_vision_encoder", "clip.vision.projector_type", vision_keys,
                                            fn, ctx, &n) +
                      clip_encoder_problems(m, "clip.has_audio_encoder", "clip.audio.projector_type", audio_keys,
                                            fn, ctx, &n);
    if (!encoders) /* clip_init then makes no context: nothing to encode with */
        report(fn, ctx, &n, "mtmd's clip loader: neither clip.has_vision_encoder nor clip.has_audio_encoder is true");
    return n;
}

size_t mf_llama_load_problems(const mf_model *m, mf_load_problem_fn fn, void *ctx)
{
    size_t n = 0;
    const mf_value *a = meta(m, "general.architecture");
    if (!a || a->type != MF_V_STR) {
        report(fn, ctx, &n, "no general.architecture string: llama.cpp cannot load it");
        return n;
    }
    char arch[128];
    snprintf(arch, sizeof(arch), "%.*s", (int)(a->as.s.len < 120 ? a->as.s.len : 120), a->as.s.ptr);
    if (!strcmp(arch, "clip"))
        return clip_problems(m, fn, ctx);
    n += mf_llama_hparams_problems(arch, model_get, (void *)m, fn, ctx);
    if (!known_arch(arch))
        return n;
    if (!meta(m, "tokenizer.ggml.model"))
        report(fn, ctx, &n, "key not found in model: tokenizer.ggml.model");
    n += key_type_problems(m, fn, ctx);
    size_t r = required_row(arch);
    if (r != (size_t)-1) {
        size_t i = r;
        char key[256];
        snprintf(key, sizeof(key), "%s.block_count", arch);
        const mf_value *bc = meta(m, key);
        uint64_t blocks = bc && (bc->type == MF_V_U32 || bc->type == MF_V_U64 || bc->type == MF_V_I32) ? bc->as.u : 0;
        if (blocks > 4096)
            blocks = 4096;
        for (const char *const *t = required[i].tensors; *t; t++) {
            const char *ph = strstr(*t, "{bid}");
            for (uint64_t b = 0; b < (ph ? blocks : 1); b++) {
                char name[256];
                if (ph)
                    snprintf(name, sizeof(name), "%.*s%llu%s", (int)(ph - *t), *t, (unsigned long long)b, ph + 5);
                else
                    snprintf(name, sizeof(name), "%s", *t);
                if (!mf_tensor_find(m, name))
                    report(fn, ctx, &n, "missing tensor '%s'", name);
            }
        }
    }
    return n;
}
