/* mmproj_table.c - the vision towers + projectors (and audio encoders)
 * llama.cpp's converter (ecbcb7ea, 2026-02-27) writes as a separate
 * "mmproj" GGUF with --mmproj,
 * as data: one conv_mmproj row per MmprojModel subclass mfmt converts (its
 * classes, the prefixes it takes tensors from, its renames and splits, its
 * tensor_force_quant, its clip.* keys in set_gguf_parameters' order), and
 * gguf-py's MMPROJ tensor name map. The converter's driver (hf2gguf.c)
 * reads these rows as it reads conv_archs[]; hf2gguf_mmproj.c sets up the
 * vision config the keys are read from. See arch.h. */
#include "ops/hfconv/arch.h"

/* positional initializers set conv_rule's union's first member (ws) */
#pragma GCC diagnostic ignored "-Wmissing-braces"
/* the vision rows leave the audio fields (and a force rule its `also`) zero */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
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
    /* the audio encoders' (A_*) rows of the same map: tests/data/mmaudio/README.md */
    {"audio_tower.embed_positions", "a.position_embd"},
    {"audio_embedding.embedding", "a.position_embd"},
    {"audio_embedding.embedding_norm", "a.position_embd_norm"},
    {"audio_embedding.to_logits", "a.embd_to_logits"},
    {"audio_tower.conv{bid}", "a.conv1d.{bid}"},
    {"conformer.pre_encode.conv.{bid}", "a.conv1d.{bid}"},
    {"model.audio_tower.subsample_conv_projection.conv_{bid}.conv", "a.conv1d.{bid}"},
    {"model.audio_tower.subsample_conv_projection.conv_{bid}.norm", "a.conv1d.{bid}.norm"},
    {"audio_tower.layer_norm", "a.post_ln"},
    {"audio_tower.ln_post", "a.post_ln"},
    {"audio_tower.layers.{bid}.self_attn.q_proj", "a.blk.{bid}.attn_q"},
    {"conformer.layers.{bid}.self_attn.linear_q", "a.blk.{bid}.attn_q"},
    {"conformer.layers.{bid}.attention.attn.q_proj", "a.blk.{bid}.attn_q"},
    {"audio_tower.layers.{bid}.self_attn.k_proj", "a.blk.{bid}.attn_k"},
    {"conformer.layers.{bid}.self_attn.linear_k", "a.blk.{bid}.attn_k"},
    {"conformer.layers.{bid}.attention.attn.k_proj", "a.blk.{bid}.attn_k"},
    {"audio_tower.layers.{bid}.self_attn.v_proj", "a.blk.{bid}.attn_v"},
    {"conformer.layers.{bid}.self_attn.linear_v", "a.blk.{bid}.attn_v"},
    {"conformer.layers.{bid}.attention.attn.v_proj", "a.blk.{bid}.attn_v"},
    {"conformer.layers.{bid}.attention.attn.per_dim_scale", "a.blk.{bid}.per_dim_scale"},
    {"conformer.layers.{bid}.norm", "a.blk.{bid}.layer_pre_norm"},
    {"audio_tower.layers.{bid}.self_attn_layer_norm", "a.blk.{bid}.ln1"},
    {"conformer.layers.{bid}.norm_self_att", "a.blk.{bid}.ln1"},
    {"conformer.layers.{bid}.attention.pre_attn_norm", "a.blk.{bid}.ln1"},
    {"audio_tower.layers.{bid}.self_attn.out_proj", "a.blk.{bid}.attn_out"},
    {"conformer.layers.{bid}.self_attn.linear_out", "a.blk.{bid}.attn_out"},
    {"conformer.layers.{bid}.attention.post", "a.blk.{bid}.attn_out"},
    {"audio_tower.layers.{bid}.final_layer_norm", "a.blk.{bid}.ln2"},
    {"conformer.layers.{bid}.norm_out", "a.blk.{bid}.ln2"},
    {"conformer.layers.{bid}.attention.post_norm", "a.blk.{bid}.ln2"},
    {"conformer.layers.{bid}.norm_feed_forward1", "a.blk.{bid}.ffn_norm"},
    {"conformer.layers.{bid}.ffw_layer_start.pre_layer_norm", "a.blk.{bid}.ffn_norm"},
    {"conformer.layers.{bid}.ffw_layer_start.post_layer_norm", "a.blk.{bid}.ffn_post_norm"},
    {"conformer.layers.{bid}.ffw_layer_start.post_layer_scale", "a.blk.{bid}.ffn_scale"},
    {"audio_tower.layers.{bid}.fc1", "a.blk.{bid}.ffn_up"},
    {"conformer.layers.{bid}.feed_forward1.linear1", "a.blk.{bid}.ffn_up"},
    {"conformer.layers.{bid}.ffw_layer_start.ffw_layer_1", "a.blk.{bid}.ffn_up"},
    {"audio_tower.layers.{bid}.fc2", "a.blk.{bid}.ffn_down"},
    {"conformer.layers.{bid}.feed_forward1.linear2", "a.blk.{bid}.ffn_down"},
    {"conformer.layers.{bid}.ffw_layer_start.ffw_layer_2", "a.blk.{bid}.ffn_down"},
    {"conformer.layers.{bid}.feed_forward2.linear1", "a.blk.{bid}.ffn_up_1"},
    {"conformer.layers.{bid}.ffw_layer_end.ffw_layer_1", "a.blk.{bid}.ffn_up_1"},
    {"conformer.layers.{bid}.feed_forward2.linear2", "a.blk.{bid}.ffn_down_1"},
    {"conformer.layers.{bid}.ffw_layer_end.ffw_layer_2", "a.blk.{bid}.ffn_down_1"},
    {"conformer.layers.{bid}.norm_feed_forward2", "a.blk.{bid}.ffn_norm_1"},
    {"conformer.layers.{bid}.ffw_layer_end.pre_layer_norm", "a.blk.{bid}.ffn_norm_1"},
    {"conformer.layers.{bid}.ffw_layer_end.post_layer_norm", "a.blk.{bid}.ffn_post_norm_1"},
    {"conformer.layers.{bid}.ffw_layer_end.post_layer_scale", "a.blk.{bid}.ffn_scale_1"},
    {"conformer.layers.{bid}.self_attn.linear_pos", "a.blk.{bid}.linear_pos"},
    {"conformer.layers.{bid}.attention.attn.relative_position_embedding.pos_proj", "a.blk.{bid}.linear_pos"},
    {"conformer.layers.{bid}.self_attn.pos_bias_u", "a.blk.{bid}.pos_bias_u"},
    {"conformer.layers.{bid}.self_attn.pos_bias_v", "a.blk.{bid}.pos_bias_v"},
    {"conformer.pre_encode.out", "a.pre_encode.out"},
    {"model.audio_tower.subsample_conv_projection.input_proj_linear", "a.pre_encode.out"},
    {"audio.multi_modal_projector.linear_{bid}", "mm.a.mlp.{bid}"},
    {"audio_adapter.model.{bid}", "mm.a.mlp.{bid}"},
    {"audio.multi_modal_projector.linear", "mm.a.fc"},
    {"audio_tower.proj", "mm.a.fc"},
    {"audio.multi_modal_projector.ln_pre", "mm.a.norm_pre"},
    {"audio.multi_modal_projector.ln_mid", "mm.a.norm_mid"},
    {"conformer.layers.{bid}.conv.depthwise_conv", "a.blk.{bid}.conv_dw"},
    {"conformer.layers.{bid}.lconv1d.depthwise_conv1d", "a.blk.{bid}.conv_dw"},
    {"conformer.layers.{bid}.conv.batch_norm", "a.blk.{bid}.conv_norm"},
    {"conformer.layers.{bid}.lconv1d.pre_layer_norm", "a.blk.{bid}.conv_norm"},
    {"conformer.layers.{bid}.conv.pointwise_conv1", "a.blk.{bid}.conv_pw1"},
    {"conformer.layers.{bid}.lconv1d.linear_start", "a.blk.{bid}.conv_pw1"},
    {"conformer.layers.{bid}.conv.pointwise_conv2", "a.blk.{bid}.conv_pw2"},
    {"conformer.layers.{bid}.lconv1d.linear_end", "a.blk.{bid}.conv_pw2"},
    {"conformer.layers.{bid}.norm_conv", "a.blk.{bid}.norm_conv"},
    {"conformer.layers.{bid}.lconv1d.conv_norm", "a.blk.{bid}.norm_conv"},
    {"model.embed_audio.embedding", "mm.a.embedding"},
    {"model.embed_audio.hard_embedding_norm", "mm.a.hard_emb_norm"},
    {"model.embed_audio.embedding_projection", "mm.a.input_projection"},
    {"model.embed_audio.soft_embedding_norm", "mm.a.soft_emb_norm"},
};
const size_t conv_n_clip_names = sizeof(conv_clip_names) / sizeof(conv_clip_names[0]);

/* ------------------------------------------------ values and key blocks */

/* computed values (hf2gguf_mmproj.c) and their inverses (gguf2hf_mmproj.c);
 * tests/test_mmproj_rev.c requires an inverse for each but the file type */
static const conv_calc conv_calc_mm_gemma3_scale = {"mm_gemma3_scale", h2g_mm_gemma3_scale, g2h_mm_gemma3_scale};
static const conv_calc conv_calc_mm_inverse_ratio = {"mm_inverse_ratio", h2g_mm_inverse_ratio, g2h_mm_inverse_ratio};
static const conv_calc conv_calc_mm_wa_pattern = {"mm_wa_pattern", h2g_mm_wa_pattern, g2h_mm_wa_pattern};
static const conv_calc conv_calc_file_type_mm = {"file_type", h2g_file_type, NULL};
static const conv_calc conv_calc_mm_deepstack_layers = {"mm_deepstack_layers", h2g_mm_deepstack_layers,
                                                        g2h_mm_deepstack_layers};
static const conv_block conv_block_mm_act = {h2g_mm_act, g2h_mm_act};
static const conv_calc conv_calc_mm_inverse_downsample = {"mm_inverse_downsample", h2g_mm_inverse_downsample,
                                                          g2h_mm_inverse_downsample};
static const conv_calc conv_calc_mm_lfm2_blocks = {"mm_lfm2_blocks", h2g_mm_lfm2_blocks, NULL};
static const conv_block conv_block_mm_act_if_known = {h2g_mm_act_if_known, g2h_mm_act};
static const conv_block conv_block_mm_act_youtuvl = {h2g_mm_act_youtuvl, g2h_mm_act_youtuvl};
static const conv_block conv_block_mm_kimik25 = {h2g_mm_kimik25_keys, g2h_mm_kimik25_keys};
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
    (const conv_op[]){OP_RENAME, OP_RENAME, OP_RENAME}, NULL, NULL, false,
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
#define PIXTRAL_MM_HP                                                                                          \
    MMPROJ_BASE,                                                                                               \
    {"projector_type", 's', "=pixtral", 0, NULL, NULL},                                                        \
    {"vision.attention.layer_norm_epsilon", 'f', "layer_norm_eps", 0, NULL, NULL},                             \
    BLOCK(mm_act), /* use_silu or use_gelu by hidden_act */                                                    \
    {"vision.spatial_merge_size", 'u', "^spatial_merge_size", HP_OPT, NULL, NULL}
static const conv_hp pixtral_mm_hp[] = {
    PIXTRAL_MM_HP,
    END,
};
/* LightOnOCRVisionModel (a LlavaVisionModel): its model.vision_encoder.* and
 * model.vision_projection.* as the Pixtral names; no [IMG_BREAK] row */
static const conv_rule lightonocr_mm_rules[] = {
    {OP_RENAME, M_PREFIX, "model.vision_encoder.", "vision_tower.", NULL, NULL, NULL, NULL},
    {OP_RENAME, M_PREFIX, "model.vision_projection.", "multi_modal_projector.", NULL, NULL, NULL, NULL},
    {OP_SKIP_UNLESS, M_PREFIX, "", NULL, NULL, NULL, NULL,
     LIST("multi_modal_projector.", "vision_tower.", "vision_encoder.", "vision_language_adapter.",
          "patch_merger.", "pre_mm_projector_norm")},
    {OP_PERMUTE_Q, M_SUFFIX, "q_proj.weight", NULL, NULL, NULL, NULL, NULL},
    {OP_PERMUTE_Q, M_SUFFIX, "q_proj.bias", NULL, NULL, NULL, NULL, NULL},
    {OP_PERMUTE_K, M_SUFFIX, "k_proj.weight", NULL, NULL, NULL, NULL, NULL},
    {OP_PERMUTE_K, M_SUFFIX, "k_proj.bias", NULL, NULL, NULL, NULL, NULL},
    NORULES,
};
static const conv_hp lightonocr_mm_hp[] = {
    PIXTRAL_MM_HP,
    {"projector_type", 's', "=lightonocr", 0, NULL, NULL}, /* over pixtral's, in its place */
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

/* ------------------------------------------------------------- InternVL */

/* InternVisionModel.modify_tensors: Intern-S1's / transformers' projector
 * names as mlp1.*; the tower and projector only; vision_model.* as
 * vision_tower.vision_model.*; the layer scales and the unsuffixed position
 * embedding get ".weight" (the class embedding does not); the fused qkv
 * (weight and bias) cut in three */
static const conv_rule internvl_mm_rules[] = {
    {OP_RENAME, M_PREFIX, "model.multi_modal_projector.layer_norm.", "mlp1.0.", NULL, NULL, NULL, NULL},
    {OP_RENAME, M_PREFIX, "model.multi_modal_projector.linear_1.", "mlp1.1.", NULL, NULL, NULL, NULL},
    {OP_RENAME, M_PREFIX, "model.multi_modal_projector.linear_2.", "mlp1.3.", NULL, NULL, NULL, NULL},
    {OP_SKIP_UNLESS, M_PREFIX, "", NULL, NULL, NULL, NULL,
     LIST("vision_model", "mlp", "model.vision_tower", "model.multi_modal_projector")},
    {OP_RENAME, M_PREFIX, "vision_model", "vision_tower.vision_model", NULL, NULL, NULL, NULL},
    {OP_RENAME, M_SUFFIX, ".ls1", ".ls1.weight", NULL, NULL, NULL, NULL},
    {OP_RENAME, M_SUFFIX, ".ls2", ".ls2.weight", NULL, NULL, NULL, NULL},
    {OP_RENAME, M_SUFFIX, ".lambda_1", ".lambda_1.weight", NULL, NULL, NULL, NULL},
    {OP_RENAME, M_SUFFIX, ".lambda_2", ".lambda_2.weight", NULL, NULL, NULL, NULL},
    {OP_RENAME, M_SUFFIX, "position_embedding", "position_embedding.weight", NULL, NULL, NULL, NULL},
    {OP_RENAME, M_SUFFIX, "position_embeddings", "position_embeddings.weight", NULL, NULL, NULL, NULL},
    {.op = OP_SPLIT, .m = M_CONTAINS, .pat = ".attn.qkv.", .split = &qwen_vl_qkv},
    NORULES,
};
static const conv_hp internvl_mm_hp[] = {
    MMPROJ_BASE,
    {"projector_type", 's', "=internvl", 0, NULL, NULL},
    {"vision.attention.layer_norm_epsilon", 'f', "layer_norm_eps", 0, NULL, NULL},
    BLOCK(mm_act), /* use_silu or use_gelu by hidden_act */
    CALC("vision.projector.scale_factor", 'u', mm_inverse_downsample, 0), /* int(1.0 / downsample_ratio) */
    END,
};

/* ------------------------------------------------------------- Kimi-VL */

/* KimiVLModel.modify_tensors: tower and projector only; the 2-D learned
 * positions [h, w, n] as [h * w, n]; the fused wqkv cut in three */
static const conv_rule kimivl_mm_rules[] = {
    {OP_SKIP_UNLESS, M_CONTAINS, "", NULL, NULL, NULL, NULL, LIST("vision_tower", "multi_modal_projector")},
    {OP_VIEW, M_CONTAINS, "pos_emb.weight", "-1,d2", NULL, NULL, NULL, NULL},
    {.op = OP_SPLIT, .m = M_CONTAINS, .pat = ".wqkv.", .split = &qwen_vl_qkv},
    NORULES,
};
/* KimiVLModel.__init__: image_size 64 * 14 "for compatibility" */
static const char *const kimivl_mm_fixes[] = {"image_size==896", NULL};
static const conv_hp kimivl_mm_hp[] = {
    MMPROJ_BASE,
    {"projector_type", 's', "=kimivl", 0, NULL, NULL},
    {"use_gelu", 'b', "=1", 0, NULL, NULL},
    {"vision.projector.scale_factor", 'u', "=2", 0, NULL, NULL},
    {"vision.attention.layer_norm_epsilon", 'f', "layer_norm_eps|=1e-5", 0, NULL, NULL},
    END,
};

/* --------------------------------------------- GLM-4.1V, GLM-4.5V, GLM-OCR */

/* Glm4VVisionModel (a Qwen3VLVisionModel): the text model skipped,
 * model.visual.* as visual.*; the merger through the name map; the Conv3D
 * patch embedding as two Conv2D ones and its bias; fused qkv kept */
static const conv_rule glm4v_mm_rules[] = {
    {OP_SKIP, M_PREFIX, "model.language_model.", NULL, NULL, NULL, NULL, NULL},
    {OP_SKIP, M_PREFIX, "lm_head.", NULL, NULL, NULL, NULL, NULL},
    {OP_SKIP, M_PREFIX, "mtp.", NULL, NULL, NULL, NULL, NULL},
    {OP_RENAME, M_PREFIX, "model.visual.", "visual.", NULL, NULL, NULL, NULL},
    {OP_UNSTACK, M_EXACT, "visual.patch_embed.proj.weight", "2", NULL, NULL, NULL,
     LIST("v.patch_embd.weight", "v.patch_embd.weight.1")},
    {OP_GGUF_NAME, M_EXACT, "visual.patch_embed.proj.bias", "v.patch_embd.bias", NULL, NULL, NULL, NULL},
    NORULES,
};
static const conv_hp glm4v_mm_hp[] = {
    MMPROJ_BASE,
    {"projector_type", 's', "=glm4v", 0, NULL, NULL},
    BLOCK(mm_act_if_known), /* use_gelu / use_silu, nothing for another hidden_act */
    {"vision.attention.layer_norm_epsilon", 'f', "rms_norm_eps|=1e-5", 0, NULL, NULL},
    END,
};

/* --------------------------------------------------------------- LFM2-VL */

/* LFM2VLModel.modify_tensors: tower and projector only, their "model."
 * dropped; the SigLIP2 patch embedding, a Linear over 16 x 16 x 3 (h, w,
 * c), as the Conv2D weight [n, 3, 16, 16]: each row's columns [256][3]
 * re-ordered to [3][256] (permute(0, 3, 1, 2)), then viewed */
static const conv_rule lfm2vl_mm_rules[] = {
    {OP_SKIP_UNLESS, M_CONTAINS, "", NULL, NULL, NULL, NULL, LIST("vision_tower", "multi_modal_projector")},
    {OP_RENAME, M_PREFIX, "model.vision_tower.", "vision_tower.", NULL, NULL, NULL, NULL},
    {OP_RENAME, M_PREFIX, "model.multi_modal_projector.", "multi_modal_projector.", NULL, NULL, NULL, NULL},
    {OP_SWAP_COL_GROUPS, M_CONTAINS, "patch_embedding.weight", "256,3", NULL, NULL, NULL, NULL},
    {OP_VIEW, M_CONTAINS, "patch_embedding.weight", "d0,3,16,16", NULL, NULL, NULL, NULL},
    NORULES,
};
/* LFM2VLModel.__init__: image_size 256 (dynamic resolution) */
static const char *const lfm2vl_mm_fixes[] = {"image_size==256", NULL};
static const conv_hp lfm2vl_mm_hp[] = {
    MMPROJ_BASE,
    {"projector_type", 's', "=lfm2", 0, NULL, NULL},
    {"vision.attention.layer_norm_epsilon", 'f', "layer_norm_eps", 0, NULL, NULL},
    {"vision.projector.scale_factor", 'u', "^downsample_factor|=2", 0, NULL, NULL},
    {"use_gelu", 'b', "=1", 0, NULL, NULL},
    /* written again in its first place: less the layers past vision_feature_layer */
    CALC("vision.block_count", 'u', mm_lfm2_blocks, 0),
    END,
};

/* ------------------------------------------------------------- CogVLM */

/* CogVLMVisionModel: model.vision.* through the name map (fused
 * query_key_value kept; cls_embedding, boi, eoi without a suffix: F32) */
static const conv_rule cogvlm_mm_rules[] = {
    {OP_SKIP_UNLESS, M_PREFIX, "", NULL, NULL, NULL, NULL, LIST("model.vision.")},
    NORULES,
};
static const conv_hp cogvlm_mm_hp[] = {
    MMPROJ_BASE,
    {"vision.attention.layer_norm_epsilon", 'f', "layer_norm_eps|=1e-6", 0, NULL, NULL},
    {"projector_type", 's', "=cogvlm", 0, NULL, NULL},
    END,
};

/* ----------------------------------------------------------- Janus-Pro */

/* JanusProVisionModel.modify_tensors: the language model, VQ model and
 * generation heads skipped; the aligner's fc1 as mm.0, hidden_layers.N as
 * mm.{N + 1} (rows for N < 2: Janus-Pro's depth 2 has N = 0; a later one
 * is refused as unmappable, as the converter's name map refuses it) */
static const conv_rule janus_mm_rules[] = {
    {OP_SKIP_UNLESS, M_PREFIX, "", NULL, NULL, NULL, NULL,
     LIST("model.aligner.", "aligner.", "model.vision_model.", "vision_model.")},
    {OP_RENAME, M_PREFIX, "aligner.", "model.aligner.", NULL, NULL, NULL, NULL},
    {OP_GGUF_NAME, M_PREFIX, "model.aligner.fc1.", "mm.0.", NULL, NULL, NULL, NULL},
    {OP_GGUF_NAME, M_PREFIX, "model.aligner.hidden_layers.0.", "mm.1.", NULL, NULL, NULL, NULL},
    {OP_GGUF_NAME, M_PREFIX, "model.aligner.hidden_layers.1.", "mm.2.", NULL, NULL, NULL, NULL},
    NORULES,
};
static const conv_hp janus_mm_hp[] = {
    MMPROJ_BASE,
    {"projector_type", 's', "=janus_pro", 0, NULL, NULL},
    {"vision.attention.layer_norm_epsilon", 'f', "layer_norm_eps|=1e-6", 0, NULL, NULL},
    BLOCK(mm_act_if_known), /* use_gelu / use_silu, nothing for another hidden_act */
    END,
};

/* ------------------------------------------------------------- Youtu-VL */

/* YoutuVLVisionModel: the text model skipped, the rest through the name map
 * (siglip2.vision_model.*, merger.ln_q, merger.mlp.{0,2}). The converter
 * skips a tensor the map lacks with a warning; mfmt refuses it. */
static const conv_rule youtuvl_mm_rules[] = {
    {OP_SKIP, M_PREFIX, "lm_head.", NULL, NULL, NULL, NULL, NULL},
    {OP_SKIP, M_PREFIX, "model.layers.", NULL, NULL, NULL, NULL, NULL},
    {OP_SKIP, M_PREFIX, "model.embed_tokens.", NULL, NULL, NULL, NULL, NULL},
    {OP_SKIP, M_PREFIX, "model.norm.", NULL, NULL, NULL, NULL, NULL},
    NORULES,
};
static const char *const youtuvl_mm_fixes[] = {"image_size=image_size|=560", NULL};
static const conv_hp youtuvl_mm_hp[] = {
    MMPROJ_BASE,
    {"projector_type", 's', "=youtuvl", 0, NULL, NULL},
    {"vision.attention.layer_norm_epsilon", 'f', "layer_norm_eps|=1e-6", 0, NULL, NULL},
    BLOCK(mm_act_youtuvl), /* use_gelu for the GELUs, use_silu, else refused */
    {"vision.spatial_merge_size", 'u', "spatial_merge_size|=2", 0, NULL, NULL},
    {"vision.window_size", 'u', "window_size", HP_OPT, NULL, NULL},
    {"vision.wa_layer_indexes", 'i', "fullatt_block_indexes", 0, NULL, NULL}, /* an INT32 array, required */
    END,
};

/* ---------------------------------------------------------- PaddleOCR-VL */

/* PaddleOCRVisionModel: visual.* as model.*; the tower (vision_model) and
 * projector (mlp_AR) only, without packing_position_embedding and the head */
static const conv_rule paddleocr_mm_rules[] = {
    {OP_RENAME, M_PREFIX, "visual.", "model.", NULL, NULL, NULL, NULL},
    {OP_SKIP_UNLESS, M_CONTAINS, "", NULL, NULL, NULL, NULL, LIST("vision_model", "mlp_AR")},
    {OP_SKIP, M_CONTAINS, "packing_position_embedding", NULL, NULL, NULL, NULL, NULL},
    {OP_SKIP, M_CONTAINS, "vision_model.head", NULL, NULL, NULL, NULL, NULL},
    NORULES,
};
static const conv_hp paddleocr_mm_hp[] = {
    MMPROJ_BASE,
    {"projector_type", 's', "=paddleocr", 0, NULL, NULL},
    {"vision.image_max_pixels", 'u', "pre:max_pixels", 0, NULL, NULL},
    {"vision.image_min_pixels", 'u', "pre:min_pixels", 0, NULL, NULL},
    {"use_gelu", 'b', "=1", 0, NULL, NULL},
    {"vision.attention.layer_norm_epsilon", 'f', "rms_norm_eps|=1e-6", 0, NULL, NULL},
    END,
};

/* ----------------------------------------------------------- Kimi-K2.5 */

/* KimiK25Model.modify_tensors: tower and projector only; the fused wqkv
 * kept, its q and k rows permuted per head (the converter's head count:
 * num_attention_heads, else 16); the projector's proj.0 / proj.2 as
 * proj.linear_1 / linear_2 (mm.1, mm.2) */
static const conv_rule kimik25_mm_rules[] = {
    {OP_SKIP_UNLESS, M_CONTAINS, "", NULL, NULL, NULL, NULL, LIST("vision_tower", "mm_projector")},
    {OP_QK_SPLIT_ROPE, M_CONTAINS, "wqkv", NULL, "num_attention_heads|=16", NULL, NULL, NULL},
    {OP_RENAME, M_CONTAINS, "mm_projector.proj.0.", "mm_projector.proj.linear_1.", NULL, NULL, NULL, NULL},
    {OP_RENAME, M_CONTAINS, "mm_projector.proj.2.", "mm_projector.proj.linear_2.", NULL, NULL, NULL, NULL},
    NORULES,
};
static const conv_hp kimik25_mm_hp[] = {
    MMPROJ_BASE,
    {"projector_type", 's', "=kimik25", 0, NULL, NULL},
    BLOCK(mm_kimik25), /* pos_emb grid, use_gelu, epsilon, scale factor, pixel limits */
    END,
};

/* ------------------------------------------------ audio encoders */

/* MmprojModel.set_gguf_parameters' audio part, read from the audio config
 * ("aud:"; hparams_audio after the class's renames) */
#define MMPROJ_AUDIO                                                                                          \
    {"has_audio_encoder", 'b', "=1", 0, NULL, NULL},                                                          \
    {"audio.projection_dim", 'u', "^text_config.hidden_size|^hidden_size|^text_config.n_embd|^n_embd", 0,     \
     NULL, NULL},                                                                                             \
    {"audio.embedding_length", 'u', "aud:hidden_size", 0, NULL, NULL},                                       \
    {"audio.feed_forward_length", 'u', "aud:intermediate_size", 0, NULL, NULL},                              \
    {"audio.block_count", 'u', "aud:n_layers|aud:num_hidden_layers|aud:n_layer|aud:num_layers|aud:depth|"     \
     "aud:encoder_layers|aud:vt_num_hidden_layers", 0, NULL, NULL},                                           \
    {"audio.attention.head_count", 'u', "aud:num_attention_heads", 0, NULL, NULL}
#define AUDIO_MEL_EPS                                                                                         \
    {"audio.num_mel_bins", 'u', "aud:num_mel_bins", 0, NULL, NULL},                                           \
    {"audio.attention.layer_norm_epsilon", 'f', "aud:layer_norm_eps|=1e-5", 0, NULL, NULL}

/* WhisperEncoderModel.__init__: Whisper's names when the config has neither
 * hidden_size nor intermediate_size (Voxtral's encoder config has both) */
static const char *const whisper_afixes[] = {
    "?!hidden_size:?!intermediate_size:hidden_size=d_model,intermediate_size=encoder_ffn_dim,"
    "num_attention_heads=encoder_attention_heads",
    NULL,
};
/* WhisperEncoderModel.modify_tensors: the text model skipped, the projector
 * as audio.multi_modal_projector.* (apart from a vision one's names), the
 * conv biases [c] as [c, 1] */
static const conv_rule whisper_mm_rules[] = {
    {OP_SKIP, M_PREFIX, "language_model.", NULL, NULL, NULL, NULL, NULL},
    {OP_RENAME, M_PREFIX, "multi_modal_projector", "audio.multi_modal_projector", NULL, NULL, NULL, NULL},
    {OP_UNSQUEEZE_LAST, M_CONTAINS, "conv1.bias", NULL, NULL, NULL, NULL, NULL},
    {OP_UNSQUEEZE_LAST, M_CONTAINS, "conv2.bias", NULL, NULL, NULL, NULL, NULL},
    NORULES,
};
/* qwen2a: its projector type; Ultravox and Voxtral write theirs over it
 * (the key keeps its place) and a stack factor */
#define WHISPER_HP(...)                                                                                      \
    CALC("general.file_type", 'u', file_type_mm, 0), MMPROJ_AUDIO,                                            \
    {"projector_type", 's', "=qwen2a", 0, NULL, NULL}, AUDIO_MEL_EPS, __VA_ARGS__ END
static const conv_hp qwen2a_mm_hp[] = {WHISPER_HP()};
static const conv_hp ultravox_mm_hp[] = {WHISPER_HP(
    {"projector_type", 's', "=ultravox", 0, NULL, NULL},
    {"audio.projector.stack_factor", 'u', "^stack_factor", 0, NULL, NULL},)};
static const conv_hp voxtral_mm_hp[] = {WHISPER_HP(
    {"projector_type", 's', "=voxtral", 0, NULL, NULL},
    {"audio.projector.stack_factor", 'u', "=4", 0, NULL, NULL},)}; /* "== intermediate_size // hidden_size" */
static const conv_hp flamingo_mm_hp[] = {WHISPER_HP(
    {"projector_type", 's', "=musicflamingo", 0, NULL, NULL},)};
/* the conv weights F16 in every type (AudioFlamingo3: F32, "trained in BF16") */
static const conv_force_type whisper_mm_types[] = {
    {'s', ".conv", 'h', ".weight"},
    {0, NULL, 0, NULL},
};
static const conv_force_type flamingo_mm_types[] = {
    {'s', ".conv", 'f', ".weight"},
    {0, NULL, 0, NULL},
};

/* GlmASRWhisperEncoderModel.modify_tensors: the text model skipped,
 * audio_encoder.whisper.* as audio_tower.*, the adapter's layer_norm / 0 / 2
 * as the projector's ln_pre / linear_1 / linear_2, its proj dropped, the
 * begin/end-of-audio embeddings [2, n] as v.boi and v.eoi */
static const conv_rule glmasr_mm_rules[] = {
    {OP_SKIP, M_PREFIX, "model.", NULL, NULL, NULL, NULL, NULL},
    {OP_SKIP, M_PREFIX, "lm_head.", NULL, NULL, NULL, NULL, NULL},
    {OP_SKIP, M_PREFIX, "audio_encoder.proj.", NULL, NULL, NULL, NULL, NULL},
    {OP_SKIP, M_PREFIX, "audio_encoder.adapting.proj.", NULL, NULL, NULL, NULL, NULL},
    {OP_RENAME, M_PREFIX, "audio_encoder.whisper.", "audio_tower.", NULL, NULL, NULL, NULL},
    {OP_RENAME, M_PREFIX, "audio_encoder.layer_norm.", "audio.multi_modal_projector.ln_pre.", NULL, NULL, NULL, NULL},
    {OP_RENAME, M_PREFIX, "audio_encoder.adapting.layer_norm.", "audio.multi_modal_projector.ln_pre.", NULL, NULL,
     NULL, NULL},
    {OP_RENAME, M_PREFIX, "audio_encoder.adapting.0.", "audio.multi_modal_projector.linear_1.", NULL, NULL, NULL,
     NULL},
    {OP_RENAME, M_PREFIX, "audio_encoder.adapting.2.", "audio.multi_modal_projector.linear_2.", NULL, NULL, NULL,
     NULL},
    {OP_UNSTACK, M_EXACT, "audio_encoder.audio_bos_eos_token.weight", "0", NULL, NULL, NULL, LIST("v.boi", "v.eoi")},
    {OP_UNSQUEEZE_LAST, M_CONTAINS, "conv1.bias", NULL, NULL, NULL, NULL, NULL},
    {OP_UNSQUEEZE_LAST, M_CONTAINS, "conv2.bias", NULL, NULL, NULL, NULL, NULL},
    NORULES,
};
static const conv_hp glmasr_mm_hp[] = {
    CALC("general.file_type", 'u', file_type_mm, 0),
    MMPROJ_AUDIO,
    {"projector_type", 's', "=glma", 0, NULL, NULL},
    AUDIO_MEL_EPS,
    {"audio.projector.stack_factor", 'u', "^merge_factor", 0, NULL, NULL},
    END,
};

/* Qwen25OmniModel (a Qwen2VLVisionModel): thinker.* without the prefix, the
 * vision tower as Qwen2.5-VL's. Its audio tensors (and the sinusoidal
 * positions it generates) reach Qwen2VLVisionModel.modify_tensors, which
 * writes only visual.* names: at ecbcb7ea the file has the audio keys but
 * no audio tensor. Written the same (tests/data/mmaudio/README.md). */
static const conv_rule qwen25omni_mm_rules[] = {
    {OP_SKIP_UNLESS, M_PREFIX, "", NULL, NULL, NULL, NULL, LIST("thinker.visual.")},
    {OP_RENAME, M_PREFIX, "thinker.", "", NULL, NULL, NULL, NULL},
    {.op = OP_SPLIT, .m = M_CONTAINS, .pat = ".qkv.", .split = &qwen_vl_qkv},
    {OP_UNSTACK, M_CONTAINS, "patch_embed.proj.weight", "2", NULL, NULL, NULL,
     LIST("v.patch_embd.weight", "v.patch_embd.weight.1")},
    NORULES,
};
static const char *const qwen25omni_afixes[] = {
    "hidden_size=d_model,intermediate_size=encoder_ffn_dim,num_attention_heads=encoder_attention_heads", NULL,
};
static const conv_hp qwen25omni_mm_hp[] = {
    MMPROJ_BASE,
    MMPROJ_AUDIO,
    {"projector_type", 's', "=qwen2.5o", 0, NULL, NULL},
    {"use_silu", 'b', "=1", 0, NULL, NULL},
    CALC("vision.n_wa_pattern", 'u', mm_wa_pattern, 0),
    {"vision.attention.layer_norm_epsilon", 'f', "^rms_norm_eps|=1e-6", 0, NULL, NULL},
    AUDIO_MEL_EPS,
    END,
};
static const conv_force_type qwen25omni_mm_types[] = {
    {'s', ".conv", 'h', ".weight"},
    {'g', ".position_embd.", 'f', NULL},
    {0, NULL, 0, NULL},
};

/* LFM2AudioModel (a ConformerAudioModel): the text model, the audio output
 * side (depthformer, depth embeddings and linear, codebook offsets) and the
 * training-only loss weight skipped; ConformerAudioModel.modify_tensors: the
 * BatchNorm of each conv module folded into weight and bias, the
 * subsampling convs' biases [c] as [c, 1, 1], the depthwise conv [c, 1, k]
 * as [c, k], the pointwise ones [o, i, 1] as [o, i] */
static const conv_rule lfm2a_mm_rules[] = {
    {OP_SKIP, M_PREFIX, "lfm.", NULL, NULL, NULL, NULL, NULL},
    {OP_SKIP, M_CONTAINS, "audio_loss_weight", NULL, NULL, NULL, NULL, NULL},
    {OP_SKIP, M_CONTAINS, "codebook_offsets", NULL, NULL, NULL, NULL, NULL},
    {OP_SKIP, M_CONTAINS, "depth_embeddings", NULL, NULL, NULL, NULL, NULL},
    {OP_SKIP, M_CONTAINS, "depth_linear", NULL, NULL, NULL, NULL, NULL},
    {OP_SKIP, M_CONTAINS, "depthformer", NULL, NULL, NULL, NULL, NULL},
    {OP_BN_FOLD, M_CONTAINS, "batch_norm", NULL, NULL, NULL, NULL, NULL},
    {OP_UNSQUEEZE_LAST, M_PATTERN, "conformer.pre_encode.conv.{x}.bias", NULL, NULL, NULL, NULL, NULL},
    {OP_UNSQUEEZE_LAST, M_PATTERN, "conformer.pre_encode.conv.{x}.bias", NULL, NULL, NULL, NULL, NULL},
    {OP_SQUEEZE1, M_SUFFIX, "conv.depthwise_conv.weight", NULL, NULL, NULL, NULL, NULL},
    {OP_SQUEEZE, M_SUFFIX, "conv.pointwise_conv1.weight", NULL, NULL, NULL, NULL, NULL},
    {OP_SQUEEZE, M_SUFFIX, "conv.pointwise_conv2.weight", NULL, NULL, NULL, NULL, NULL},
    NORULES,
};
/* LFM2AudioModel.set_gguf_parameters: the encoder config's NeMo names */
static const char *const lfm2a_afixes[] = {"hidden_size=d_model,intermediate_size=d_model,num_attention_heads=n_heads",
                                           NULL};
static const conv_hp lfm2a_mm_hp[] = {
    CALC("general.file_type", 'u', file_type_mm, 0),
    MMPROJ_AUDIO,
    {"projector_type", 's', "=lfm2a", 0, NULL, NULL},
    {"audio.num_mel_bins", 'u', "aud:feat_in", 0, NULL, NULL},
    {"audio.attention.layer_norm_epsilon", 'f', "=1e-5", 0, NULL, NULL},
    END,
};
/* ConformerAudioModel.tensor_force_quant: an audio tensor ("audio",
 * "conformer", ... in its name) with ".conv" F32 (its other case, "_conv"
 * with ".weight", names only norm_conv and the convs' own tensors: 1-d, or
 * ".conv" too) */
static const conv_force_type lfm2a_mm_types[] = {
    {'s', ".conv", 'f', "conformer"},
    {'s', ".conv", 'f', "audio"},
    {'s', ".conv", 'f', "codebook"},
    {0, NULL, 0, NULL},
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
    /* InternVisionModel: chosen by vision_config's architectures (InternVLChatModel, Intern-S1,
       transformers' InternVLForConditionalGeneration when its vision_config names it) */
    {MM(CLASSES("InternVisionModel"), internvl_mm_rules, internvl_mm_hp), NULL, NULL, NULL, qwen2vl_mm_types,
     h2g_mm_internvl_prepare},
    {MM(CLASSES("KimiVLForConditionalGeneration"), kimivl_mm_rules, kimivl_mm_hp), NULL, NULL, kimivl_mm_fixes,
     NULL, NULL},
    {MM(CLASSES("Glm4vForConditionalGeneration", "Glm4vMoeForConditionalGeneration",
                "GlmOcrForConditionalGeneration"), glm4v_mm_rules, glm4v_mm_hp), NULL, NULL, qwen3vl_mm_fixes,
     NULL, h2g_mm_qwen3vl_prepare},
    {MM(CLASSES("Lfm2VlForConditionalGeneration"), lfm2vl_mm_rules, lfm2vl_mm_hp), NULL, NULL, lfm2vl_mm_fixes,
     NULL, NULL},
    {MM(CLASSES("CogVLMForCausalLM"), cogvlm_mm_rules, cogvlm_mm_hp), NULL, NULL, NULL, NULL, NULL},
    {MM(CLASSES("KimiK25ForConditionalGeneration"), kimik25_mm_rules, kimik25_mm_hp), NULL, NULL, NULL, NULL,
     h2g_mm_kimik25_prepare},
    {MM(CLASSES("LightOnOCRForConditionalGeneration"), lightonocr_mm_rules, lightonocr_mm_hp), NULL, "pixtral",
     pixtral_mm_fixes, NULL, NULL},
    {MM(CLASSES("YoutuVLForConditionalGeneration"), youtuvl_mm_rules, youtuvl_mm_hp), NULL, NULL, youtuvl_mm_fixes,
     NULL, NULL},
    /* PaddleOCRVisionModel: chosen by vision_config's architectures */
    {MM(CLASSES("PaddleOCRVisionModel"), paddleocr_mm_rules, paddleocr_mm_hp), NULL, NULL, NULL, NULL,
     h2g_mm_paddleocr_prepare},
    {MM(CLASSES("JanusForConditionalGeneration"), janus_mm_rules, janus_mm_hp), NULL, NULL, NULL, NULL,
     h2g_mm_janus_prepare},
    /* the audio encoders: WhisperEncoderModel and its subclasses (audio config
       whisper_config, else audio_config), GlmASRWhisperEncoderModel, Qwen25OmniModel */
#define WHISPER(cls, hp, types) \
    {MM(CLASSES(cls), whisper_mm_rules, hp), NULL, NULL, NULL, types, NULL, "whisper_config|audio_config", true, \
     whisper_afixes, NULL}
    WHISPER("Qwen2AudioForConditionalGeneration", qwen2a_mm_hp, whisper_mm_types),
    WHISPER("UltravoxModel", ultravox_mm_hp, whisper_mm_types),
    WHISPER("VoxtralForConditionalGeneration", voxtral_mm_hp, whisper_mm_types),
    WHISPER("AudioFlamingo3ForConditionalGeneration", flamingo_mm_hp, flamingo_mm_types),
    {MM(CLASSES("GlmasrModel"), glmasr_mm_rules, glmasr_mm_hp), NULL, NULL, NULL, whisper_mm_types, NULL,
     "whisper_config|audio_config", true, whisper_afixes, NULL},
    {MM(CLASSES("Qwen2_5OmniModel"), qwen25omni_mm_rules, qwen25omni_mm_hp), "qwen2_5_omni", NULL,
     qwen2vl_mm_fixes, qwen25omni_mm_types, NULL, "thinker_config.audio_config", false, qwen25omni_afixes,
     "thinker_config.vision_config"},
    {MM(CLASSES("Lfm2AudioForConditionalGeneration"), lfm2a_mm_rules, lfm2a_mm_hp), NULL, NULL, NULL,
     lfm2a_mm_types, NULL, "encoder", true, lfm2a_afixes, NULL},
};
const size_t conv_n_mmprojs = sizeof(conv_mmprojs) / sizeof(conv_mmprojs[0]);

/* GGUF -> HF: the multimodal checkpoints' layouts (transformers < 4.52's
 * names, as the converter's classes read them), see arch.h */
#define LIST_OF(...) ((const char *const[]){__VA_ARGS__, NULL})
#define LM_PREFIXED LIST_OF("model.=language_model.model.", "lm_head.=language_model.lm_head.")
#define GLM4V_PREFER                                                                                          \
    LIST_OF(".mlp.down_proj", ".mlp.up_proj", "^model.visual.embeddings.", "^model.visual.post_layernorm",       \
            ".merger.post_projection_norm", "^model.visual.")
#define QWEN3VL_PREFER LIST_OF(".linear_fc", "^model.visual.")
const conv_mm_layout conv_mm_layouts[] = {
    /* the Whisper-style audio classes: transformers' configs (GlmasrModel's is whisper_config) */
    {.hf_class = "Qwen2AudioForConditionalGeneration", .alone_only = true, .model_type = "qwen2_audio",
     .audio_cfg = "audio_config", .audio_type = "qwen2_audio_encoder"},
    {.hf_class = "UltravoxModel", .alone_only = true, .model_type = "ultravox", .audio_cfg = "audio_config",
     .audio_type = "whisper"},
    {.hf_class = "VoxtralForConditionalGeneration", .alone_only = true, .model_type = "voxtral",
     .audio_cfg = "audio_config", .audio_type = "voxtral_encoder",
     .rev_guards = LIST_OF("hidden_size", "intermediate_size")},
    {.hf_class = "AudioFlamingo3ForConditionalGeneration", .alone_only = true, .model_type = "audioflamingo3",
     .audio_cfg = "audio_config", .audio_type = "audioflamingo3_encoder"},
    {.hf_class = "GlmasrModel", .alone_only = true, .model_type = "glmasr", .audio_cfg = "whisper_config",
     .audio_type = "whisper"},
    /* JanusForConditionalGeneration (transformers' layout): model.aligner.*, the attention's
       projection_layer */
    {.hf_class = "JanusForConditionalGeneration", .alone_only = true,
     .rev_prefer = LIST_OF(".projection_layer", "^model.aligner.", "^model.vision_model.")},
    {.hf_class = "InternVisionModel",
     .not_reversible = "its fused attn.qkv has no Hugging Face name the split rule \".attn.qkv.\" takes "
                       "(vision_model.encoder.layers.N.attn.qkv is not in gguf-py's map), and the HF-format "
                       "checkpoint has q, k, v apart: which layout to write back is not decided"},
    /* Glm4VVisionModel: the checkpoint's model.visual.* names over gguf-py's others */
    {.hf_class = "Glm4vForConditionalGeneration", .alone_only = true, .rev_prefer = GLM4V_PREFER},
    {.hf_class = "Glm4vMoeForConditionalGeneration", .alone_only = true, .rev_prefer = GLM4V_PREFER},
    {.hf_class = "GlmOcrForConditionalGeneration", .alone_only = true, .rev_prefer = GLM4V_PREFER},
    /* YoutuVLVisionModel: siglip2.* and merger.* */
    {.hf_class = "YoutuVLForConditionalGeneration", .alone_only = true, .rev_prefer = LIST_OF("^siglip2.", "^merger.")},
    /* KimiK25Model: its own tower names over gguf-py's others; the projector's proj.0 / proj.2 (renamed
       by a substring) given outright */
    {.hf_class = "KimiK25ForConditionalGeneration", .alone_only = true, .model_type = "kimi_k25",
     .rev_prefer = LIST_OF("^vision_tower.encoder.", "^vision_tower.patch_embed.", "^mm_projector."),
     .rev_names = LIST_OF("mm.1.weight=mm_projector.proj.0.weight", "mm.1.bias=mm_projector.proj.0.bias",
                          "mm.2.weight=mm_projector.proj.2.weight", "mm.2.bias=mm_projector.proj.2.bias")},
    {.hf_class = "Qwen2_5OmniModel",
     .not_reversible = "its checkpoint has the vision attention's q, k, v apart (the reverse writes the fused qkv "
                       "the split rule takes), so the directory written back lists its tensors in another order "
                       "and the forward does not give the same file; the file holds no audio tensor either"},
    {.hf_class = "LightOnOCRForConditionalGeneration",
     .not_reversible = "the directory written back lists its tensors in another order than the checkpoint's, "
                       "so the forward does not give the same file"},
    {.hf_class = "Gemma3ForConditionalGeneration", .model_type = "gemma3", .vision_type = "siglip_vision_model",
     .nest_text = true, .text_names = LM_PREFIXED,
     .rev_prefer = LIST_OF("^vision_tower.vision_model.", "^multi_modal_projector."),
     .rev_names = LIST_OF("mm.input_projection.weight=multi_modal_projector.mm_input_projection_weight")},
    {.hf_class = "Llama4ForConditionalGeneration", .model_type = "llama4", .vision_type = "llama4_vision_model",
     .nest_text = true, .text_names = LM_PREFIXED, .vision_fixed = LIST_OF("hidden_act=\"gelu\""),
     .rev_prefer = LIST_OF("^vision_model.", "^multi_modal_projector.")},
    {.hf_class = "Mistral3ForConditionalGeneration", .model_type = "mistral3", .vision_type = "pixtral",
     .nest_text = true, .text_names = LM_PREFIXED,
     .rev_prefer = LIST_OF("^vision_tower.transformer.", "^vision_tower.patch_conv", "^vision_tower.ln_pre",
                           "^multi_modal_projector.")},
    {.hf_class = "Qwen2VLForConditionalGeneration", .model_type = "qwen2_vl",
     .rev_prefer = LIST_OF(".mlp.fc", "^visual."), .rev_guards = LIST_OF("embed_dim")},
    {.hf_class = "Qwen2_5_VLForConditionalGeneration", .model_type = "qwen2_5_vl",
     .rev_prefer = LIST_OF(".mlp.gate_proj", ".mlp.up_proj", ".mlp.down_proj", "^visual.")},
    {.hf_class = "Qwen3_5ForConditionalGeneration", .model_type = "qwen3_5", .nest_text = true,
     .rev_prefer = QWEN3VL_PREFER},
    {.hf_class = "Qwen3_5MoeForConditionalGeneration", .model_type = "qwen3_5_moe", .nest_text = true,
     .rev_prefer = QWEN3VL_PREFER},
    {.hf_class = "Qwen3VLForConditionalGeneration", .model_type = "qwen3_vl", .nest_text = true,
     .rev_prefer = QWEN3VL_PREFER},
    {.hf_class = "SmolVLMForConditionalGeneration", .model_type = "smolvlm", .vision_type = "smolvlm_vision",
     .text_names = LIST_OF("model.=model.text_model."),
     .rev_prefer = LIST_OF("^model.vision_model.", "^model.connector.")},
};
const size_t conv_n_mm_layouts = sizeof(conv_mm_layouts) / sizeof(conv_mm_layouts[0]);
