/* mmproj_table.c - the vision towers + projectors llama.cpp's converter
 * (ecbcb7ea, 2026-02-27) writes as a separate "mmproj" GGUF with --mmproj,
 * as data: one conv_mmproj row per MmprojModel subclass mfmt converts (its
 * classes, the prefixes it takes tensors from, its renames and splits, its
 * tensor_force_quant, its clip.* keys in set_gguf_parameters' order), and
 * gguf-py's MMPROJ tensor name map. The converter's driver (hf2gguf.c)
 * reads these rows as it reads conv_archs[]; hf2gguf_mmproj.c sets up the
 * vision config the keys are read from. See arch.h. */
#include "ops/hfconv/arch.h"

/* positional initializers set conv_rule's union's first member (ws) */
#pragma GCC diagnostic ignored "-Wmissing-braces"
#include <stdio.h>

/* gguf-py 0.18.0's TensorNameMap for MODEL_ARCH.MMPROJ, its vision (V_*)
 * tensors: every (HF name, GGUF name) of tensor_mapping.py's mappings_cfg
 * and block_mappings_cfg, an HF name listed twice under the later tensor
 * (its dict keeps the last). Made from gguf-py at ecbcb7ea by
 * tests/data/mmproj/README.md's recipe; "{bid}" below the vision block count. */
const conv_name_row conv_clip_names[] = {
    {"model.embed_vision.embedding", "mm.embedding"},
    {"model.embed_vision.hard_embedding_norm", "mm.hard_emb_norm"},
    {"model.embed_vision.embedding_projection", "mm.input_projection"},
    {"model.embed_vision.soft_embedding_norm", "mm.soft_emb_norm"},
    {"model.vision_tower.timm_model.conv_stem.conv", "v.conv_stem.conv"},
    {"model.vision_tower.timm_model.conv_stem.bn", "v.conv_stem.bn"},
    {"model.vision_tower.timm_model.msfa.ffn.pw_exp.conv", "v.msfa.ffn.pw_exp.conv"},
    {"model.vision_tower.timm_model.msfa.ffn.pw_exp.bn", "v.msfa.ffn.pw_exp.bn"},
    {"model.vision_tower.timm_model.msfa.ffn.pw_proj.conv", "v.msfa.ffn.pw_proj.conv"},
    {"model.vision_tower.timm_model.msfa.ffn.pw_proj.bn", "v.msfa.ffn.pw_proj.bn"},
    {"model.vision_tower.timm_model.msfa.norm", "v.msfa.norm"},
    {"multi_modal_projector.linear_{bid}", "mm.{bid}"},
    {"mm_projector.proj.linear_{bid}", "mm.{bid}"},
    {"visual.merger.mlp.{bid}", "mm.{bid}"},
    {"mlp_AR.linear_{bid}", "mm.{bid}"},
    {"merger.mlp.{bid}", "mm.{bid}"},
    {"model.connector.modality_projection.proj", "mm.model.fc"},
    {"model.vision.linear_proj.linear_proj", "mm.model.fc"},
    {"visual.merger.proj", "mm.model.fc"},
    {"model.mm_projector.mlp.mlp.{bid}", "mm.model.mlp.{bid}"},
    {"vision_model.vision_adapter.mlp.fc{bid}", "mm.model.mlp.{bid}"},
    {"mlp1.{bid}", "mm.model.mlp.{bid}"},
    {"model.aligner.fc1.hidden_layers.{bid}", "mm.model.mlp.{bid}"},
    {"model.mm_projector.peg.peg.{bid}", "mm.model.peg.{bid}"},
    {"vision_tower.vision_model.embeddings.class_embedding", "v.class_embd"},
    {"model.vision_tower.embeddings.cls_token", "v.class_embd"},
    {"vision_model.class_embedding", "v.class_embd"},
    {"model.vision.patch_embedding.cls_embedding", "v.class_embd"},
    {"vision_model.radio_model.model.patch_generator.cls_token.token", "v.class_embd"},
    {"vision_tower.vision_model.embeddings.patch_embedding", "v.patch_embd"},
    {"model.vision_tower.embeddings.patch_embeddings.projection", "v.patch_embd"},
    {"vpm.embeddings.patch_embedding", "v.patch_embd"},
    {"model.vision_model.embeddings.patch_embedding", "v.patch_embd"},
    {"vision_tower.patch_conv", "v.patch_embd"},
    {"vision_encoder.patch_conv", "v.patch_embd"},
    {"vision_model.patch_embedding.linear", "v.patch_embd"},
    {"visual.patch_embed.proj", "v.patch_embd"},
    {"vision_tower.patch_embed.proj", "v.patch_embd"},
    {"model.vision.patch_embedding.proj", "v.patch_embd"},
    {"siglip2.vision_model.embeddings.patch_embedding", "v.patch_embd"},
    {"vision_model.radio_model.model.patch_generator.embedder", "v.patch_embd"},
    {"visual.post_conv_layernorm", "v.norm_embd"},
    {"vision_tower.vision_model.embeddings.position_embedding", "v.position_embd"},
    {"model.vision_tower.embeddings.position_embeddings", "v.position_embd"},
    {"vpm.embeddings.position_embedding", "v.position_embd"},
    {"model.vision_model.embeddings.position_embedding", "v.position_embd"},
    {"vision_model.positional_embedding_vlm", "v.position_embd"},
    {"vision_tower.patch_embed.pos_emb", "v.position_embd"},
    {"visual.pos_embed", "v.position_embd"},
    {"model.vision.patch_embedding.position_embedding", "v.position_embd"},
    {"visual.embeddings.position_embedding", "v.position_embd"},
    {"vision_model.radio_model.model.patch_generator.pos_embed", "v.position_embd"},
    {"visual.blocks.{bid}.attn.qkv", "v.blk.{bid}.attn_qkv"},
    {"model.vision.transformer.layers.{bid}.attention.query_key_value", "v.blk.{bid}.attn_qkv"},
    {"vision_tower.encoder.blocks.{bid}.wqkv", "v.blk.{bid}.attn_qkv"},
    {"vision_model.radio_model.model.blocks.{bid}.attn.qkv", "v.blk.{bid}.attn_qkv"},
    {"vision_tower.vision_model.encoder.layers.{bid}.self_attn.q_proj", "v.blk.{bid}.attn_q"},
    {"model.vision_tower.encoder.layer.{bid}.attention.q_proj", "v.blk.{bid}.attn_q"},
    {"vpm.encoder.layers.{bid}.self_attn.q_proj", "v.blk.{bid}.attn_q"},
    {"model.vision_model.encoder.layers.{bid}.self_attn.q_proj", "v.blk.{bid}.attn_q"},
    {"vision_model.model.layers.{bid}.self_attn.q_proj", "v.blk.{bid}.attn_q"},
    {"vision_tower.transformer.layers.{bid}.attention.q_proj", "v.blk.{bid}.attn_q"},
    {"vision_encoder.transformer.layers.{bid}.attention.wq", "v.blk.{bid}.attn_q"},
    {"visual.blocks.{bid}.attn.q", "v.blk.{bid}.attn_q"},
    {"vision_tower.encoder.blocks.{bid}.wq", "v.blk.{bid}.attn_q"},
    {"siglip2.vision_model.encoder.layers.{bid}.self_attn.q_proj", "v.blk.{bid}.attn_q"},
    {"vision_tower.vision_model.encoder.layers.{bid}.attn.q_norm", "v.blk.{bid}.attn_q_norm"},
    {"model.vision_tower.encoder.layer.{bid}.attention.q_norm", "v.blk.{bid}.attn_q_norm"},
    {"visual.blocks.{bid}.attn.q_norm", "v.blk.{bid}.attn_q_norm"},
    {"vision_tower.vision_model.encoder.layers.{bid}.self_attn.k_proj", "v.blk.{bid}.attn_k"},
    {"model.vision_tower.encoder.layer.{bid}.attention.k_proj", "v.blk.{bid}.attn_k"},
    {"vpm.encoder.layers.{bid}.self_attn.k_proj", "v.blk.{bid}.attn_k"},
    {"model.vision_model.encoder.layers.{bid}.self_attn.k_proj", "v.blk.{bid}.attn_k"},
    {"vision_model.model.layers.{bid}.self_attn.k_proj", "v.blk.{bid}.attn_k"},
    {"vision_tower.transformer.layers.{bid}.attention.k_proj", "v.blk.{bid}.attn_k"},
    {"vision_encoder.transformer.layers.{bid}.attention.wk", "v.blk.{bid}.attn_k"},
    {"visual.blocks.{bid}.attn.k", "v.blk.{bid}.attn_k"},
    {"vision_tower.encoder.blocks.{bid}.wk", "v.blk.{bid}.attn_k"},
    {"siglip2.vision_model.encoder.layers.{bid}.self_attn.k_proj", "v.blk.{bid}.attn_k"},
    {"vision_tower.vision_model.encoder.layers.{bid}.attn.k_norm", "v.blk.{bid}.attn_k_norm"},
    {"model.vision_tower.encoder.layer.{bid}.attention.k_norm", "v.blk.{bid}.attn_k_norm"},
    {"visual.blocks.{bid}.attn.k_norm", "v.blk.{bid}.attn_k_norm"},
    {"vision_tower.vision_model.encoder.layers.{bid}.self_attn.v_proj", "v.blk.{bid}.attn_v"},
    {"model.vision_tower.encoder.layer.{bid}.attention.v_proj", "v.blk.{bid}.attn_v"},
    {"vpm.encoder.layers.{bid}.self_attn.v_proj", "v.blk.{bid}.attn_v"},
    {"model.vision_model.encoder.layers.{bid}.self_attn.v_proj", "v.blk.{bid}.attn_v"},
    {"vision_model.model.layers.{bid}.self_attn.v_proj", "v.blk.{bid}.attn_v"},
    {"vision_tower.transformer.layers.{bid}.attention.v_proj", "v.blk.{bid}.attn_v"},
    {"vision_encoder.transformer.layers.{bid}.attention.wv", "v.blk.{bid}.attn_v"},
    {"visual.blocks.{bid}.attn.v", "v.blk.{bid}.attn_v"},
    {"vision_tower.encoder.blocks.{bid}.wv", "v.blk.{bid}.attn_v"},
    {"siglip2.vision_model.encoder.layers.{bid}.self_attn.v_proj", "v.blk.{bid}.attn_v"},
    {"vision_tower.vision_model.encoder.layers.{bid}.layer_norm1", "v.blk.{bid}.ln1"},
    {"vision_tower.vision_model.encoder.layers.{bid}.norm1", "v.blk.{bid}.ln1"},
    {"model.vision_tower.encoder.layer.{bid}.layernorm_before", "v.blk.{bid}.ln1"},
    {"vpm.encoder.layers.{bid}.layer_norm1", "v.blk.{bid}.ln1"},
    {"model.vision_model.encoder.layers.{bid}.layer_norm1", "v.blk.{bid}.ln1"},
    {"vision_tower.transformer.layers.{bid}.attention_norm", "v.blk.{bid}.ln1"},
    {"vision_encoder.transformer.layers.{bid}.attention_norm", "v.blk.{bid}.ln1"},
    {"vision_model.model.layers.{bid}.input_layernorm", "v.blk.{bid}.ln1"},
    {"visual.blocks.{bid}.norm1", "v.blk.{bid}.ln1"},
    {"vision_tower.encoder.blocks.{bid}.norm0", "v.blk.{bid}.ln1"},
    {"model.vision.transformer.layers.{bid}.input_layernorm", "v.blk.{bid}.ln1"},
    {"siglip2.vision_model.encoder.layers.{bid}.layer_norm1", "v.blk.{bid}.ln1"},
    {"vision_model.radio_model.model.blocks.{bid}.norm1", "v.blk.{bid}.ln1"},
    {"vision_tower.vision_model.encoder.layers.{bid}.self_attn.out_proj", "v.blk.{bid}.attn_out"},
    {"vision_tower.vision_model.encoder.layers.{bid}.attn.proj", "v.blk.{bid}.attn_out"},
    {"model.vision_tower.encoder.layer.{bid}.attention.projection_layer", "v.blk.{bid}.attn_out"},
    {"vpm.encoder.layers.{bid}.self_attn.out_proj", "v.blk.{bid}.attn_out"},
    {"model.vision_model.encoder.layers.{bid}.self_attn.out_proj", "v.blk.{bid}.attn_out"},
    {"model.vision_model.encoder.layers.{bid}.self_attn.projection_layer", "v.blk.{bid}.attn_out"},
    {"vision_model.model.layers.{bid}.self_attn.o_proj", "v.blk.{bid}.attn_out"},
    {"vision_tower.transformer.layers.{bid}.attention.o_proj", "v.blk.{bid}.attn_out"},
    {"vision_encoder.transformer.layers.{bid}.attention.wo", "v.blk.{bid}.attn_out"},
    {"visual.blocks.{bid}.attn.proj", "v.blk.{bid}.attn_out"},
    {"vision_tower.encoder.blocks.{bid}.wo", "v.blk.{bid}.attn_out"},
    {"model.vision.transformer.layers.{bid}.attention.dense", "v.blk.{bid}.attn_out"},
    {"siglip2.vision_model.encoder.layers.{bid}.self_attn.out_proj", "v.blk.{bid}.attn_out"},
    {"vision_model.radio_model.model.blocks.{bid}.attn.proj", "v.blk.{bid}.attn_out"},
    {"vision_tower.vision_model.encoder.layers.{bid}.layer_norm2", "v.blk.{bid}.ln2"},
    {"vision_tower.vision_model.encoder.layers.{bid}.norm2", "v.blk.{bid}.ln2"},
    {"model.vision_tower.encoder.layer.{bid}.layernorm_after", "v.blk.{bid}.ln2"},
    {"vpm.encoder.layers.{bid}.layer_norm2", "v.blk.{bid}.ln2"},
    {"model.vision_model.encoder.layers.{bid}.layer_norm2", "v.blk.{bid}.ln2"},
    {"vision_model.model.layers.{bid}.post_attention_layernorm", "v.blk.{bid}.ln2"},
    {"vision_tower.transformer.layers.{bid}.ffn_norm", "v.blk.{bid}.ln2"},
    {"vision_encoder.transformer.layers.{bid}.ffn_norm", "v.blk.{bid}.ln2"},
    {"visual.blocks.{bid}.norm2", "v.blk.{bid}.ln2"},
    {"vision_tower.encoder.blocks.{bid}.norm1", "v.blk.{bid}.ln2"},
    {"model.vision.transformer.layers.{bid}.post_attention_layernorm", "v.blk.{bid}.ln2"},
    {"siglip2.vision_model.encoder.layers.{bid}.layer_norm2", "v.blk.{bid}.ln2"},
    {"vision_model.radio_model.model.blocks.{bid}.norm2", "v.blk.{bid}.ln2"},
    {"vision_tower.vision_model.encoder.layers.{bid}.mlp.fc1", "v.blk.{bid}.ffn_up"},
    {"model.vision_tower.encoder.layer.{bid}.mlp.fc1", "v.blk.{bid}.ffn_up"},
    {"vpm.encoder.layers.{bid}.mlp.fc1", "v.blk.{bid}.ffn_up"},
    {"model.vision_model.encoder.layers.{bid}.mlp.fc1", "v.blk.{bid}.ffn_up"},
    {"vision_tower.transformer.layers.{bid}.feed_forward.up_proj", "v.blk.{bid}.ffn_up"},
    {"vision_encoder.transformer.layers.{bid}.feed_forward.w3", "v.blk.{bid}.ffn_up"},
    {"vision_model.model.layers.{bid}.mlp.fc1", "v.blk.{bid}.ffn_up"},
    {"visual.blocks.{bid}.mlp.fc1", "v.blk.{bid}.ffn_up"},
    {"visual.blocks.{bid}.mlp.up_proj", "v.blk.{bid}.ffn_up"},
    {"visual.blocks.{bid}.mlp.linear_fc1", "v.blk.{bid}.ffn_up"},
    {"vision_tower.encoder.blocks.{bid}.mlp.fc0", "v.blk.{bid}.ffn_up"},
    {"model.vision.transformer.layers.{bid}.mlp.fc1", "v.blk.{bid}.ffn_up"},
    {"siglip2.vision_model.encoder.layers.{bid}.mlp.fc1", "v.blk.{bid}.ffn_up"},
    {"vision_model.radio_model.model.blocks.{bid}.mlp.fc1", "v.blk.{bid}.ffn_up"},
    {"vision_tower.transformer.layers.{bid}.feed_forward.gate_proj", "v.blk.{bid}.ffn_gate"},
    {"vision_encoder.transformer.layers.{bid}.feed_forward.w1", "v.blk.{bid}.ffn_gate"},
    {"visual.blocks.{bid}.mlp.gate_proj", "v.blk.{bid}.ffn_gate"},
    {"vision_tower.vision_model.encoder.layers.{bid}.mlp.fc2", "v.blk.{bid}.ffn_down"},
    {"model.vision_tower.encoder.layer.{bid}.mlp.fc2", "v.blk.{bid}.ffn_down"},
    {"vpm.encoder.layers.{bid}.mlp.fc2", "v.blk.{bid}.ffn_down"},
    {"model.vision_model.encoder.layers.{bid}.mlp.fc2", "v.blk.{bid}.ffn_down"},
    {"vision_tower.transformer.layers.{bid}.feed_forward.down_proj", "v.blk.{bid}.ffn_down"},
    {"vision_encoder.transformer.layers.{bid}.feed_forward.w2", "v.blk.{bid}.ffn_down"},
    {"vision_model.model.layers.{bid}.mlp.fc2", "v.blk.{bid}.ffn_down"},
    {"visual.blocks.{bid}.mlp.fc2", "v.blk.{bid}.ffn_down"},
    {"visual.blocks.{bid}.mlp.down_proj", "v.blk.{bid}.ffn_down"},
    {"visual.blocks.{bid}.mlp.linear_fc2", "v.blk.{bid}.ffn_down"},
    {"vision_tower.encoder.blocks.{bid}.mlp.fc1", "v.blk.{bid}.ffn_down"},
    {"model.vision.transformer.layers.{bid}.mlp.fc2", "v.blk.{bid}.ffn_down"},
    {"siglip2.vision_model.encoder.layers.{bid}.mlp.fc2", "v.blk.{bid}.ffn_down"},
    {"vision_model.radio_model.model.blocks.{bid}.mlp.fc2", "v.blk.{bid}.ffn_down"},
    {"vision_tower.vision_model.encoder.layers.{bid}.ls1", "v.blk.{bid}.ls1"},
    {"model.vision_tower.encoder.layer.{bid}.lambda_1", "v.blk.{bid}.ls1"},
    {"vision_tower.vision_model.encoder.layers.{bid}.ls2", "v.blk.{bid}.ls2"},
    {"model.vision_tower.encoder.layer.{bid}.lambda_2", "v.blk.{bid}.ls2"},
    {"vision_tower.vision_model.pre_layrnorm", "v.pre_ln"},
    {"vision_tower.ln_pre", "v.pre_ln"},
    {"vision_encoder.ln_pre", "v.pre_ln"},
    {"vision_model.layernorm_pre", "v.pre_ln"},
    {"vision_tower.vision_model.post_layernorm", "v.post_ln"},
    {"model.vision_model.post_layernorm", "v.post_ln"},
    {"vision_model.layernorm_post", "v.post_ln"},
    {"visual.merger.ln_q", "v.post_ln"},
    {"vision_tower.encoder.final_layernorm", "v.post_ln"},
    {"visual.post_layernorm", "v.post_ln"},
    {"siglip2.vision_model.post_layernorm", "v.post_ln"},
    {"visual.merger.post_projection_norm", "mm.post_norm"},
    {"multi_modal_projector.mm_input_projection", "mm.input_projection"},
    {"multi_modal_projector.norm", "mm.input_norm"},
    {"multi_modal_projector.layer_norm", "mm.input_norm"},
    {"multi_modal_projector.pre_norm", "mm.input_norm"},
    {"mm_projector.pre_norm", "mm.input_norm"},
    {"pre_mm_projector_norm", "mm.input_norm"},
    {"mlp_AR.pre_norm", "mm.input_norm"},
    {"merger.ln_q", "mm.input_norm"},
    {"multi_modal_projector.mm_soft_emb_norm", "mm.soft_emb_norm"},
    {"resampler.pos_embed_k", "resampler.pos_embd_k"},
    {"resampler.attn.in_proj_q", "resampler.attn.q"},
    {"resampler.attn.in_proj_k", "resampler.attn.k"},
    {"resampler.attn.in_proj_v", "resampler.attn.v"},
    {"resampler.attn.out_proj", "resampler.attn.out"},
    {"model.vision_model.head.attention.out_proj", "resampler.attn.out"},
    {"resampler.kv_proj", "resampler.kv"},
    {"resampler.ln_post", "resampler.ln_post"},
    {"resampler.ln_kv", "resampler.ln_kv"},
    {"resampler.ln_q", "resampler.ln_q"},
    {"resampler.proj", "resampler.proj"},
    {"resampler.query", "resampler.query"},
    {"v.token_embd.img_break", "v.token_embd.img_break"},
    {"multi_modal_projector.patch_merger.merging_layer", "mm.patch_merger"},
    {"patch_merger.merging_layer", "mm.patch_merger"},
    {"visual.downsample", "mm.patch_merger"},
    {"model.visual.deepstack_merger_list.{bid}.norm", "v.deepstack.{bid}.norm"},
    {"model.visual.deepstack_merger_list.{bid}.linear_fc1", "v.deepstack.{bid}.fc1"},
    {"model.visual.deepstack_merger_list.{bid}.linear_fc2", "v.deepstack.{bid}.fc2"},
    {"model.vision.linear_proj.norm1", "mm.post_fc_norm"},
    {"model.vision.linear_proj.dense_h_to_4h", "mm.up"},
    {"visual.merger.up_proj", "mm.up"},
    {"model.vision.linear_proj.dense_4h_to_h", "mm.down"},
    {"visual.merger.down_proj", "mm.down"},
    {"model.vision.linear_proj.gate_proj", "mm.gate"},
    {"visual.merger.gate_proj", "mm.gate"},
    {"model.vision.boi", "v.boi"},
    {"model.vision.eoi", "v.eoi"},
};
const size_t conv_n_clip_names = sizeof(conv_clip_names) / sizeof(conv_clip_names[0]);

/* ------------------------------------------------ values and key blocks */

/* computed values (hf2gguf_mmproj.c); GGUF -> HF has no mmproj direction */
static const conv_calc conv_calc_mm_gemma3_scale = {"mm_gemma3_scale", h2g_mm_gemma3_scale, NULL};
static const conv_calc conv_calc_mm_inverse_ratio = {"mm_inverse_ratio", h2g_mm_inverse_ratio, NULL};
static const conv_calc conv_calc_mm_wa_pattern = {"mm_wa_pattern", h2g_mm_wa_pattern, NULL};
static const conv_calc conv_calc_file_type_mm = {"file_type", h2g_file_type, NULL};
static const conv_calc conv_calc_mm_deepstack_layers = {"mm_deepstack_layers", h2g_mm_deepstack_layers, NULL};
static const conv_block conv_block_mm_act = {h2g_mm_act, NULL};
#define CALC(key, type, name, flags) {key, type, NULL, flags, &conv_calc_##name, NULL}
#define BLOCK(name) {"@@" #name, 0, NULL, 0, NULL, &conv_block_##name}
#define END {NULL, 0, NULL, 0, NULL, NULL}
#define NORULES {0, 0, NULL, NULL, NULL, NULL, NULL, NULL}
#define CLASSES(...) ((const char *const[]){__VA_ARGS__, NULL})
#define LIST(...) ((const char *const[]){__VA_ARGS__, NULL})

/* MmprojModel.set_gguf_parameters: the vision encoder's keys ("^": the
 * whole config.json; n_embd_text is {**config, **text_config}'s
 * hidden_size, else n_embd), image mean/std from the preprocessor config */
#define MMPROJ_BASE                                                                                           \
    CALC("general.file_type", 'u', file_type_mm, 0),                                                          \
    {"has_vision_encoder", 'b', "=1", 0, NULL, NULL},                                                         \
    {"vision.projection_dim", 'u', "^text_config.hidden_size|^hidden_size|^text_config.n_embd|^n_embd", 0,    \
     NULL, NULL},                                                                                             \
    {"vision.image_size", 'u', "image_size", 0, NULL, NULL},                                                  \
    {"vision.patch_size", 'u', "patch_size", 0, NULL, NULL},                                                  \
    {"vision.embedding_length", 'u', "hidden_size|vt_hidden_size", 0, NULL, NULL},                           \
    {"vision.feed_forward_length", 'u', "intermediate_size|vt_intermediate_size", 0, NULL, NULL},            \
    {"vision.block_count", 'u', "n_layers|num_hidden_layers|n_layer|num_layers|depth|encoder_layers|"         \
     "vt_num_hidden_layers", 0, NULL, NULL},                                                                  \
    {"vision.attention.head_count", 'u', "num_attention_heads|num_heads|vt_num_attention_heads", 0, NULL,    \
     NULL},                                                                                                   \
    {"vision.image_mean", 'F', "pre:image_mean", 0, NULL, NULL},                                              \
    {"vision.image_std", 'F', "pre:image_std", 0, NULL, NULL}

/* MmprojModel.tensor_force_quant, after a class's own */
const conv_force_type conv_mmproj_base_types[] = {
    {'g', ".patch_embd.weight", 'p'},
    {'g', ".patch_merger.weight", 'p'},
    {0, NULL, 0},
};

/* ------------------------------------------------------------- Gemma 3 */

/* Gemma3VisionModel.modify_tensors: tinygemma3's vision_model.head skipped;
 * projector and tower tensors only; "_weight" -> ".weight"; the Gemma
 * RMSNorm soft_emb_norm stores w - 1 */
static const conv_rule gemma3_mm_rules[] = {
    {OP_SKIP, M_CONTAINS, "vision_model.head.", NULL, NULL, NULL, NULL, NULL},
    {OP_SKIP_UNLESS, M_PREFIX, "", NULL, NULL, NULL, NULL,
     LIST("multi_modal_projector.", "vision_tower.", "multimodal_projector.", "vision_model.")},
    {OP_RENAME, M_CONTAINS, "_weight", ".weight", NULL, NULL, NULL, NULL},
    {OP_ADD_ONE, M_CONTAINS, "soft_emb_norm.weight", NULL, NULL, NULL, NULL, NULL},
    NORULES,
};
static const conv_hp gemma3_mm_hp[] = {
    MMPROJ_BASE,
    {"projector_type", 's', "=gemma3", 0, NULL, NULL},
    {"vision.attention.layer_norm_epsilon", 'f', "layer_norm_eps|=1e-6", 0, NULL, NULL},
    {"use_gelu", 'b', "=1", 0, NULL, NULL},
    /* (image_size // patch_size) // int(image_seq_length ** 0.5), when > 0 and not 4 */
    CALC("vision.projector.scale_factor", 'u', mm_gemma3_scale, HP_OPT),
    END,
};
/* "issue 13025": the input projection F16 in every output type */
static const conv_force_type gemma3_mm_types[] = {
    {'s', "input_projection", 'h'},
    {'s', ".embeddings.", 'f'},
    {0, NULL, 0},
};

/* ------------------------------------------------------------- Llama 4 */

/* Llama4VisionModel.modify_tensors: the unsuffixed positional embedding
 * gets ".weight"; linear_1 is the single fully connected layer mm.model.fc */
static const conv_rule llama4_mm_rules[] = {
    {OP_SKIP_UNLESS, M_CONTAINS, "", NULL, NULL, NULL, NULL, LIST("multi_modal_projector", "vision_model")},
    {OP_RENAME, M_SUFFIX, "positional_embedding_vlm", "positional_embedding_vlm.weight", NULL, NULL, NULL, NULL},
    {OP_GGUF_NAME, M_EXACT, "multi_modal_projector.linear_1.weight", "mm.model.fc.weight", NULL, NULL, NULL, NULL},
    NORULES,
};
static const conv_hp llama4_mm_hp[] = {
    MMPROJ_BASE,
    {"projector_type", 's', "=llama4", 0, NULL, NULL},
    {"vision.attention.layer_norm_epsilon", 'f', "norm_eps", 0, NULL, NULL},
    CALC("vision.projector.scale_factor", 'u', mm_inverse_ratio, 0), /* int(1.0 / pixel_shuffle_ratio) */
    {"use_gelu", 'b', "=1", 0, NULL, NULL},
    END,
};

/* --------------------------------------------------- Qwen2-VL, Qwen2.5-VL */

static const conv_split qwen_vl_qkv = {
    (const char *const[]){"v.blk.%b.attn_q", "v.blk.%b.attn_k", "v.blk.%b.attn_v", NULL},
    (const conv_op[]){OP_RENAME, OP_RENAME, OP_RENAME}, NULL,
};
/* Qwen2VLVisionModel.modify_tensors: visual.* only; the fused qkv (weight
 * and bias) cut in three; the Conv3D patch embedding [c, 3, 2, kh, kw] as
 * two Conv2D ones (the temporal slices) */
static const conv_rule qwen2vl_mm_rules[] = {
    {OP_SKIP_UNLESS, M_PREFIX, "", NULL, NULL, NULL, NULL, LIST("visual.")},
    {.op = OP_SPLIT, .m = M_CONTAINS, .pat = ".qkv.", .split = &qwen_vl_qkv},
    {OP_UNSTACK, M_CONTAINS, "patch_embed.proj.weight", "2", NULL, NULL, NULL,
     LIST("v.patch_embd.weight", "v.patch_embd.weight.1")},
    NORULES,
};
/* Qwen2VLVisionModel.__init__'s renames of the vision config */
static const char *const qwen2vl_mm_fixes[] = {
    "image_size=image_size|=560", "num_attention_heads=num_heads", "num_hidden_layers=depth",
    "?embed_dim:intermediate_size=hidden_size", "?embed_dim:hidden_size=embed_dim", NULL,
};
static const conv_hp qwen2vl_mm_hp[] = {
    MMPROJ_BASE,
    {"projector_type", 's', "=qwen2vl_merger", 0, NULL, NULL},
    {"vision.attention.layer_norm_epsilon", 'f', "^rms_norm_eps|=1e-6", 0, NULL, NULL},
    END,
};
static const conv_hp qwen25vl_mm_hp[] = {
    MMPROJ_BASE,
    {"projector_type", 's', "=qwen2.5vl_merger", 0, NULL, NULL},
    {"use_silu", 'b', "=1", 0, NULL, NULL},
    CALC("vision.n_wa_pattern", 'u', mm_wa_pattern, 0), /* fullatt_block_indexes[0] + 1, evenly spaced */
    {"vision.attention.layer_norm_epsilon", 'f', "^rms_norm_eps|=1e-6", 0, NULL, NULL},
    END,
};
static const conv_force_type qwen2vl_mm_types[] = {
    {'g', ".position_embd.", 'f'},
    {0, NULL, 0},
};

/* ---------------------------------------------- Mistral 3 (Pixtral), LLaVA */

/* LlavaVisionModel.modify_tensors: q/k permuted as LlamaModel.permute with
 * the vision heads; the [IMG_BREAK] row of the text embedding */
static const conv_rule pixtral_mm_rules[] = {
    {OP_PICK_ROW, M_CONTAINS, "embed_tokens.weight", "v.token_embd.img_break", "[IMG_BREAK]", NULL, NULL, NULL},
    {OP_SKIP_UNLESS, M_PREFIX, "", NULL, NULL, NULL, NULL,
     LIST("multi_modal_projector.", "vision_tower.", "vision_encoder.", "vision_language_adapter.",
          "patch_merger.", "pre_mm_projector_norm")},
    {OP_PERMUTE_Q, M_SUFFIX, "q_proj.weight", NULL, NULL, NULL, NULL, NULL},
    {OP_PERMUTE_Q, M_SUFFIX, "q_proj.bias", NULL, NULL, NULL, NULL, NULL},
    {OP_PERMUTE_K, M_SUFFIX, "k_proj.weight", NULL, NULL, NULL, NULL, NULL},
    {OP_PERMUTE_K, M_SUFFIX, "k_proj.bias", NULL, NULL, NULL, NULL, NULL},
    NORULES,
};
static const char *const pixtral_mm_fixes[] = {"layer_norm_eps=layer_norm_eps|=1e-5", NULL};
static const conv_hp pixtral_mm_hp[] = {
    MMPROJ_BASE,
    {"projector_type", 's', "=pixtral", 0, NULL, NULL},
    {"vision.attention.layer_norm_epsilon", 'f', "layer_norm_eps", 0, NULL, NULL},
    BLOCK(mm_act), /* use_silu or use_gelu by hidden_act */
    {"vision.spatial_merge_size", 'u', "^spatial_merge_size", HP_OPT, NULL, NULL},
    END,
};

/* ------------------------------------------------ Qwen3-VL, Qwen3.5 */

/* Qwen3VLVisionModel.modify_tensors: the text model and MTP skipped,
 * model.visual.* as visual.*; a deepstack merger i as v.deepstack.{the
 * layer deepstack_visual_indexes[i]}; the merger's fc1/fc2/norm as mm.0,
 * mm.2, v.post_ln; the Conv3D patch embedding as two Conv2D ones and its
 * bias; fused qkv kept */
static const conv_rule qwen3vl_mm_rules[] = {
    {OP_SKIP, M_PREFIX, "model.language_model.", NULL, NULL, NULL, NULL, NULL},
    {OP_SKIP, M_PREFIX, "lm_head.", NULL, NULL, NULL, NULL, NULL},
    {OP_SKIP, M_PREFIX, "mtp.", NULL, NULL, NULL, NULL, NULL},
    {OP_RENAME, M_PREFIX, "model.visual.", "visual.", NULL, NULL, NULL, NULL},
    {OP_RENUMBER, M_PREFIX, "visual.deepstack_merger_list.", NULL, "deepstack_visual_indexes", NULL, NULL, NULL},
    {OP_RENAME, M_PREFIX, "visual.deepstack_merger_list.", "model.visual.deepstack_merger_list.", NULL, NULL, NULL,
     NULL},
    {OP_GGUF_NAME, M_PREFIX, "visual.merger.linear_fc1.", "mm.0.", NULL, NULL, NULL, NULL},
    {OP_GGUF_NAME, M_PREFIX, "visual.merger.linear_fc2.", "mm.2.", NULL, NULL, NULL, NULL},
    {OP_GGUF_NAME, M_PREFIX, "visual.merger.norm.", "v.post_ln.", NULL, NULL, NULL, NULL},
    {OP_UNSTACK, M_EXACT, "visual.patch_embed.proj.weight", "2", NULL, NULL, NULL,
     LIST("v.patch_embd.weight", "v.patch_embd.weight.1")},
    {OP_GGUF_NAME, M_EXACT, "visual.patch_embed.proj.bias", "v.patch_embd.bias", NULL, NULL, NULL, NULL},
    NORULES,
};
static const char *const qwen3vl_mm_fixes[] = {"num_attention_heads=num_heads", "num_hidden_layers=depth", NULL};
static const conv_hp qwen3vl_mm_hp[] = {
    MMPROJ_BASE,
    {"projector_type", 's', "=qwen3vl_merger", 0, NULL, NULL},
    {"use_gelu", 'b', "=1", 0, NULL, NULL},
    {"vision.spatial_merge_size", 'u', "spatial_merge_size", HP_OPT, NULL, NULL},
    {"vision.attention.layer_norm_epsilon", 'f', "^text_config.rms_norm_eps|=1e-6", 0, NULL, NULL},
    /* [layer in deepstack_visual_indexes for each layer], written when there are layers */
    CALC("vision.is_deepstack_layers", 'B', mm_deepstack_layers, HP_OPT),
    END,
};

/* --------------------------------------------------- SmolVLM, Idefics3 */

static const conv_rule smolvlm_mm_rules[] = {
    {OP_SKIP_UNLESS, M_CONTAINS, "", NULL, NULL, NULL, NULL, LIST("vision_tower", "vision_model", "model.connector")},
    NORULES,
};
/* SmolVLM2's config.json omits these (transformers' defaults) */
static const char *const smolvlm_mm_fixes[] = {
    "?model_type=smolvlm_vision:hidden_size=hidden_size|=1152",
    "?model_type=smolvlm_vision:num_attention_heads=num_attention_heads|=16",
    "?model_type=smolvlm_vision:intermediate_size=intermediate_size|=3072", NULL,
};
static const conv_hp smolvlm_mm_hp[] = {
    MMPROJ_BASE,
    {"projector_type", 's', "=idefics3", 0, NULL, NULL},
    {"vision.attention.layer_norm_epsilon", 'f', "layer_norm_eps|=1e-5", 0, NULL, NULL},
    {"vision.projector.scale_factor", 'u', "^scale_factor|=2", 0, NULL, NULL},
    {"use_gelu", 'b', "=1", 0, NULL, NULL},
    {"vision.preproc_image_size", 'u', "pre:size.longest_edge|image_size", 0, NULL, NULL},
    END,
};
static const conv_force_type smolvlm_mm_types[] = {
    {'s', ".embeddings.", 'f'},
    {0, NULL, 0},
};

/* ---------------------------------------------------------------- rows */

#define MM(cls, rules, hp) {"clip", cls, -1, rules, hp, V_LLAMA, AF_ONLY_2026}
const conv_mmproj conv_mmprojs[] = {
    {MM(CLASSES("Gemma3ForConditionalGeneration"), gemma3_mm_rules, gemma3_mm_hp), NULL, NULL, NULL,
     gemma3_mm_types, NULL},
    {MM(CLASSES("Llama4ForConditionalGeneration"), llama4_mm_rules, llama4_mm_hp), NULL, NULL, NULL, NULL, NULL},
    /* Qwen2VLVisionModel: one class, the projector by config.json's model_type */
#define QWEN_VL CLASSES("Qwen2VLForConditionalGeneration", "Qwen2_5_VLForConditionalGeneration", "Qwen2VLModel")
    {MM(QWEN_VL, qwen2vl_mm_rules, qwen2vl_mm_hp), "qwen2_vl", NULL, qwen2vl_mm_fixes, qwen2vl_mm_types,
     NULL},
    {MM(QWEN_VL, qwen2vl_mm_rules, qwen25vl_mm_hp), "qwen2_5_vl", NULL, qwen2vl_mm_fixes,
     qwen2vl_mm_types, NULL},
    /* LlavaVisionModel: a Pixtral tower (HF layout; not the Mistral-format consolidated files) */
    {MM(CLASSES("Mistral3ForConditionalGeneration", "LlavaForConditionalGeneration"), pixtral_mm_rules,
        pixtral_mm_hp), NULL, "pixtral", pixtral_mm_fixes, NULL, NULL},
    {MM(CLASSES("SmolVLMForConditionalGeneration", "Idefics3ForConditionalGeneration"), smolvlm_mm_rules,
        smolvlm_mm_hp), NULL, NULL, smolvlm_mm_fixes, smolvlm_mm_types, NULL},
    /* Qwen3VLVisionModel: image_size from num_position_embeddings when absent */
    {MM(CLASSES("Qwen3VLForConditionalGeneration", "Qwen3VLMoeForConditionalGeneration",
                "Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration"), qwen3vl_mm_rules,
        qwen3vl_mm_hp), NULL, NULL, qwen3vl_mm_fixes, NULL, h2g_mm_qwen3vl_prepare},
};
const size_t conv_n_mmprojs = sizeof(conv_mmprojs) / sizeof(conv_mmprojs[0]);
