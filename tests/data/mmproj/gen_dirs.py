#!/usr/bin/python3
"""Tiny multimodal Hugging Face directories whose vision tower + projector
llama.cpp's converter (ecbcb7ea, `--mmproj`) writes as an mmproj GGUF:

    gen_dirs.py OUT_DIR

  gemma3-vl-tiny     Gemma3ForConditionalGeneration: SigLIP tower
                     (vision_tower.vision_model.*), mm_input_projection_weight,
                     mm_soft_emb_norm (stored w - 1: the converter adds 1)
  qwen2vl-tiny       Qwen2VLForConditionalGeneration: visual.* (Conv3D patch
                     embedding, fused qkv, LayerNorm blocks, merger)
  qwen25vl-tiny      Qwen2_5_VLForConditionalGeneration: RMSNorm blocks, gated
                     MLP, fullatt_block_indexes
  mistral3-vl-tiny   Mistral3ForConditionalGeneration with a Pixtral tower
                     (vision_tower.transformer.*, q/k permuted by the converter),
                     patch merger, [IMG_BREAK] row of the text embedding; BF16
  llama4-vl-tiny     Llama4ForConditionalGeneration: vision_model.* (class and
                     positional embeddings, pixel-shuffle adapter), linear_1
  smolvlm-tiny       SmolVLMForConditionalGeneration: model.vision_model.*,
                     model.connector.modality_projection.proj
  qwen3vl-tiny       Qwen3VLForConditionalGeneration: model.visual.* (fused qkv,
                     Conv3D patch embedding with a bias, learned positions,
                     a deepstack merger at layer 1); BF16
  qwen35-vl-tiny     Qwen3_5ForConditionalGeneration: the same tower without
                     deepstack, image_size given (Qwen3-VL's is computed from
                     num_position_embeddings), an mtp.* tensor to skip; BF16
  internvl-tiny, internvl-hf-tiny, kimivl-tiny, glm4v-tiny, glm45v-tiny, lfm2vl-tiny,
  cogvlm-tiny, janus-pro-tiny, youtuvl-tiny, paddleocr-tiny, lightonocr-tiny,
  kimik25-tiny       (branch mmvis) InternVL in both layouts, Kimi-VL, GLM-4.1V / 4.5V,
                     LFM2-VL, CogVLM, Janus-Pro, Youtu-VL, PaddleOCR-VL, LightOnOCR,
                     Kimi-K2.5: see each function's docstring

Names are transformers' (the layouts the converter reads: before 4.52's
model.* prefixes), sizes tiny (vision width 32, 3 layers (gguf-py maps {bid} below the block count: merger.mlp.2 needs 3), 2 heads, text width
64), F32 (Gemma 3), F16 (SmolVLM) or BF16 weights, values torch.randn with a fixed seed per tensor. Each directory also
holds a small text embedding the mmproj converter must skip (Pixtral takes
its [IMG_BREAK] row). Weights are written in safetensors' layout (header
padded to 8, names sorted) by this script: no safetensors package needed."""
import json, os, struct, sys, zlib

import numpy as np
import torch

V, FF, HEADS, LAYERS, TEXT = 32, 64, 2, 3, 64
CLIP_MEAN, CLIP_STD = [0.48145466, 0.4578275, 0.40821073], [0.26862954, 0.26130258, 0.27577711]


def tensor(name, shape, kind="w"):
    g = torch.Generator().manual_seed(zlib.crc32(name.encode()))
    x = torch.randn(*shape, generator=g)
    if kind == "norm":   # a LayerNorm/RMSNorm gain near 1
        return 1.0 + 0.1 * x
    if kind == "gemma":  # Gemma's RMSNorm stores w - 1
        return 0.1 * x
    return 0.05 * x


def write_st(path, tensors, dtype):
    hdr, off, blobs = {"__metadata__": {"format": "pt"}}, 0, []
    for k in sorted(tensors):
        t = tensors[k].contiguous()
        if dtype == "BF16":
            b = (t.to(torch.bfloat16).view(torch.int16).numpy().astype("<i2")).tobytes()
        elif dtype == "F16":
            b = t.to(torch.float16).numpy().astype("<f2").tobytes()
        else:
            b = t.to(torch.float32).numpy().astype("<f4").tobytes()
        hdr[k] = {"dtype": dtype, "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        off += len(b)
        blobs.append(b)
    h = json.dumps(hdr, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def write_dir(out, name, config, tensors, preproc, dtype="F32", extra=None):
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    t = {k: tensor(k, s, kind) for k, (s, kind) in tensors.items()}
    write_st(os.path.join(d, "model.safetensors"), t, dtype)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(config, f, indent=2, sort_keys=True)
    with open(os.path.join(d, "preprocessor_config.json"), "w") as f:
        json.dump(preproc, f, indent=2, sort_keys=True)
    for fname, obj in (extra or {}).items():
        with open(os.path.join(d, fname), "w") as f:
            json.dump(obj, f, indent=2, sort_keys=True)


def lin(t, name, out_f, in_f, bias=True):
    t[name + ".weight"] = ([out_f, in_f], "w")
    if bias:
        t[name + ".bias"] = ([out_f], "w")


def norm(t, name, n, bias=True, kind="norm"):
    t[name + ".weight"] = ([n], kind)
    if bias:
        t[name + ".bias"] = ([n], "w")


def siglip_layers(t, pre, n=LAYERS):
    for i in range(n):
        p = pre + "encoder.layers.%d." % i
        norm(t, p + "layer_norm1", V)
        for x in ("q", "k", "v", "out"):
            lin(t, p + "self_attn.%s_proj" % x, V, V)
        norm(t, p + "layer_norm2", V)
        lin(t, p + "mlp.fc1", FF, V)
        lin(t, p + "mlp.fc2", V, FF)


def siglip(t, pre, image, patch):
    t[pre + "embeddings.patch_embedding.weight"] = ([V, 3, patch, patch], "w")
    t[pre + "embeddings.patch_embedding.bias"] = ([V], "w")
    t[pre + "embeddings.position_embedding.weight"] = ([(image // patch) ** 2, V], "w")
    siglip_layers(t, pre)
    norm(t, pre + "post_layernorm", V)


def siglip_config(image, patch, mtype):
    return {"hidden_size": V, "image_size": image, "intermediate_size": FF, "layer_norm_eps": 1e-6,
            "model_type": mtype, "num_attention_heads": HEADS, "num_hidden_layers": LAYERS,
            "patch_size": patch, "hidden_act": "gelu_pytorch_tanh"}


def gemma3(out):
    t = {"language_model.model.embed_tokens.weight": ([16, TEXT], "w")}
    siglip(t, "vision_tower.vision_model.", 32, 4)
    t["multi_modal_projector.mm_input_projection_weight"] = ([V, TEXT], "w")
    t["multi_modal_projector.mm_soft_emb_norm.weight"] = ([V], "gemma")
    cfg = {"architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3", "mm_tokens_per_image": 4,
           "text_config": {"hidden_size": TEXT, "model_type": "gemma3_text", "num_hidden_layers": 1,
                           "num_attention_heads": 2, "vocab_size": 16},
           "vision_config": siglip_config(32, 4, "siglip_vision_model")}
    pre = {"image_processor_type": "Gemma3ImageProcessor", "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5],
           "image_seq_length": 4, "size": {"height": 32, "width": 32}}
    write_dir(out, "gemma3-vl-tiny", cfg, t, pre)


def qwen_visual(t, v25):
    t["visual.patch_embed.proj.weight"] = ([V, 3, 2, 4, 4], "w")
    for i in range(LAYERS):
        p = "visual.blocks.%d." % i
        norm(t, p + "norm1", V, bias=not v25)
        norm(t, p + "norm2", V, bias=not v25)
        lin(t, p + "attn.qkv", 3 * V, V)
        lin(t, p + "attn.proj", V, V)
        if v25:
            lin(t, p + "mlp.gate_proj", FF, V)
            lin(t, p + "mlp.up_proj", FF, V)
            lin(t, p + "mlp.down_proj", V, FF)
        else:
            lin(t, p + "mlp.fc1", FF, V)
            lin(t, p + "mlp.fc2", V, FF)
    norm(t, "visual.merger.ln_q", V, bias=not v25)
    lin(t, "visual.merger.mlp.0", 4 * V, 4 * V)
    lin(t, "visual.merger.mlp.2", TEXT, 4 * V)


def qwen2vl(out):
    t = {"model.embed_tokens.weight": ([16, TEXT], "w")}
    qwen_visual(t, False)
    cfg = {"architectures": ["Qwen2VLForConditionalGeneration"], "model_type": "qwen2_vl", "hidden_size": TEXT,
           "num_hidden_layers": 1, "num_attention_heads": 2, "rms_norm_eps": 1e-6, "vocab_size": 16,
           "vision_config": {"depth": LAYERS, "embed_dim": V, "hidden_size": TEXT, "mlp_ratio": FF / V,
                             "num_heads": HEADS, "in_chans": 3, "patch_size": 4, "spatial_merge_size": 2,
                             "temporal_patch_size": 2, "hidden_act": "quick_gelu"}}
    pre = {"image_processor_type": "Qwen2VLImageProcessor", "image_mean": CLIP_MEAN, "image_std": CLIP_STD,
           "patch_size": 4, "merge_size": 2, "temporal_patch_size": 2, "min_pixels": 256, "max_pixels": 4096}
    write_dir(out, "qwen2vl-tiny", cfg, t, pre, dtype="BF16")


def qwen25vl(out):
    t = {"model.embed_tokens.weight": ([16, TEXT], "w")}
    qwen_visual(t, True)
    cfg = {"architectures": ["Qwen2_5_VLForConditionalGeneration"], "model_type": "qwen2_5_vl", "hidden_size": TEXT,
           "num_hidden_layers": 1, "num_attention_heads": 2, "rms_norm_eps": 1e-6, "vocab_size": 16,
           "vision_config": {"depth": LAYERS, "hidden_size": V, "intermediate_size": FF, "num_heads": HEADS,
                             "in_chans": 3, "out_hidden_size": TEXT, "patch_size": 4, "spatial_merge_size": 2,
                             "temporal_patch_size": 2, "window_size": 16, "fullatt_block_indexes": [1],
                             "hidden_act": "silu", "model_type": "qwen2_5_vl"}}
    pre = {"image_processor_type": "Qwen2VLImageProcessor", "image_mean": CLIP_MEAN, "image_std": CLIP_STD,
           "patch_size": 4, "merge_size": 2, "temporal_patch_size": 2, "min_pixels": 256, "max_pixels": 4096}
    write_dir(out, "qwen25vl-tiny", cfg, t, pre, dtype="BF16")


def mistral3(out):
    t = {"language_model.model.embed_tokens.weight": ([16, TEXT], "w")}
    t["vision_tower.patch_conv.weight"] = ([V, 3, 4, 4], "w")
    norm(t, "vision_tower.ln_pre", V, bias=False)
    for i in range(LAYERS):
        p = "vision_tower.transformer.layers.%d." % i
        norm(t, p + "attention_norm", V, bias=False)
        for x in ("q", "k", "v", "o"):
            lin(t, p + "attention.%s_proj" % x, V, V, bias=False)
        norm(t, p + "ffn_norm", V, bias=False)
        lin(t, p + "feed_forward.gate_proj", FF, V, bias=False)
        lin(t, p + "feed_forward.up_proj", FF, V, bias=False)
        lin(t, p + "feed_forward.down_proj", V, FF, bias=False)
    norm(t, "multi_modal_projector.norm", V, bias=False)
    lin(t, "multi_modal_projector.patch_merger.merging_layer", V, 4 * V, bias=False)
    lin(t, "multi_modal_projector.linear_1", TEXT, V, bias=False)
    lin(t, "multi_modal_projector.linear_2", TEXT, TEXT, bias=False)
    cfg = {"architectures": ["Mistral3ForConditionalGeneration"], "model_type": "mistral3", "image_token_index": 10,
           "multimodal_projector_bias": False, "projector_hidden_act": "gelu", "spatial_merge_size": 2,
           "vision_feature_layer": -1,
           "text_config": {"hidden_size": TEXT, "model_type": "mistral", "num_hidden_layers": 1,
                           "num_attention_heads": 2, "vocab_size": 16},
           "vision_config": {"model_type": "pixtral", "hidden_size": V, "intermediate_size": FF,
                             "num_hidden_layers": LAYERS, "num_attention_heads": HEADS, "head_dim": V // HEADS,
                             "image_size": 32, "patch_size": 4, "num_channels": 3, "hidden_act": "silu",
                             "rope_theta": 10000.0}}
    pre = {"image_processor_type": "PixtralImageProcessor", "image_mean": CLIP_MEAN, "image_std": CLIP_STD,
           "patch_size": {"height": 4, "width": 4}, "size": {"longest_edge": 32}}
    tok = {"added_tokens_decoder": {str(i): {"content": c, "special": True} for i, c in
                                    enumerate(["<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]",
                                               "[/AVAILABLE_TOOLS]", "[TOOL_RESULTS]", "[/TOOL_RESULTS]",
                                               "[TOOL_CALLS]", "[IMG]", "<pad>", "[IMG_BREAK]", "[IMG_END]"])}}
    write_dir(out, "mistral3-vl-tiny", cfg, t, pre, dtype="BF16", extra={"tokenizer_config.json": tok})


def llama4(out):
    t = {"language_model.model.embed_tokens.weight": ([16, TEXT], "w")}
    t["vision_model.patch_embedding.linear.weight"] = ([V, 3 * 4 * 4], "w")
    t["vision_model.class_embedding"] = ([V], "w")
    t["vision_model.positional_embedding_vlm"] = ([8 * 8 + 1, V], "w")
    norm(t, "vision_model.layernorm_pre", V)
    norm(t, "vision_model.layernorm_post", V)
    for i in range(LAYERS):
        p = "vision_model.model.layers.%d." % i
        norm(t, p + "input_layernorm", V)
        for x in ("q", "k", "v", "o"):
            lin(t, p + "self_attn.%s_proj" % x, V, V)
        norm(t, p + "post_attention_layernorm", V)
        lin(t, p + "mlp.fc1", 4 * V, V)
        lin(t, p + "mlp.fc2", V, 4 * V)
    lin(t, "vision_model.vision_adapter.mlp.fc1", TEXT, 4 * V, bias=False)
    lin(t, "vision_model.vision_adapter.mlp.fc2", TEXT, TEXT, bias=False)
    lin(t, "multi_modal_projector.linear_1", TEXT, TEXT, bias=False)
    cfg = {"architectures": ["Llama4ForConditionalGeneration"], "model_type": "llama4",
           "text_config": {"hidden_size": TEXT, "model_type": "llama4_text", "num_hidden_layers": 1,
                           "num_attention_heads": 2, "vocab_size": 16},
           "vision_config": {"model_type": "llama4_vision_model", "hidden_size": V, "intermediate_size": 4 * V,
                             "num_hidden_layers": LAYERS, "num_attention_heads": HEADS, "image_size": 32,
                             "patch_size": 4, "norm_eps": 1e-5, "pixel_shuffle_ratio": 0.5, "hidden_act": "gelu",
                             "projector_input_dim": TEXT, "projector_output_dim": TEXT, "vision_output_dim": TEXT,
                             "num_channels": 3, "rope_theta": 10000}}
    pre = {"image_processor_type": "Llama4ImageProcessorFast", "image_mean": [0.5, 0.5, 0.5],
           "image_std": [0.5, 0.5, 0.5], "size": {"height": 32, "width": 32}}
    write_dir(out, "llama4-vl-tiny", cfg, t, pre, dtype="BF16")


def smolvlm(out):
    t = {"model.text_model.embed_tokens.weight": ([16, TEXT], "w")}
    siglip(t, "model.vision_model.", 32, 4)
    lin(t, "model.connector.modality_projection.proj", TEXT, 4 * V, bias=False)
    cfg = {"architectures": ["SmolVLMForConditionalGeneration"], "model_type": "smolvlm", "scale_factor": 2,
           "text_config": {"hidden_size": TEXT, "model_type": "llama", "num_hidden_layers": 1,
                           "num_attention_heads": 2, "vocab_size": 16},
           "vision_config": siglip_config(32, 4, "smolvlm_vision")}
    pre = {"image_processor_type": "SmolVLMImageProcessor", "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5],
           "size": {"longest_edge": 64}, "max_image_size": {"longest_edge": 32}}
    write_dir(out, "smolvlm-tiny", cfg, t, pre, dtype="F16")


def qwen3vl_visual(t):
    p = "model.visual."
    t[p + "patch_embed.proj.weight"] = ([V, 3, 2, 4, 4], "w")
    t[p + "patch_embed.proj.bias"] = ([V], "w")
    t[p + "pos_embed.weight"] = ([64, V], "w")
    for i in range(LAYERS):
        b = p + "blocks.%d." % i
        norm(t, b + "norm1", V)
        norm(t, b + "norm2", V)
        lin(t, b + "attn.qkv", 3 * V, V)
        lin(t, b + "attn.proj", V, V)
        lin(t, b + "mlp.linear_fc1", FF, V)
        lin(t, b + "mlp.linear_fc2", V, FF)
    norm(t, p + "merger.norm", V)
    lin(t, p + "merger.linear_fc1", 4 * V, 4 * V)
    lin(t, p + "merger.linear_fc2", TEXT, 4 * V)
    for i in range(1):  # deepstack_visual_indexes [1]: a post-shuffle norm
        d = p + "deepstack_merger_list.%d." % i
        norm(t, d + "norm", 4 * V)
        lin(t, d + "linear_fc1", 4 * V, 4 * V)
        lin(t, d + "linear_fc2", TEXT, 4 * V)


def qwen3vl_config(cls, mtype, text_type):
    return {"architectures": [cls], "model_type": mtype,
            "text_config": {"hidden_size": TEXT, "model_type": text_type, "num_hidden_layers": 1,
                            "num_attention_heads": 2, "rms_norm_eps": 1e-5, "vocab_size": 16},
            "vision_config": {"depth": LAYERS, "hidden_size": V, "intermediate_size": FF, "num_heads": HEADS,
                              "num_position_embeddings": 64, "patch_size": 4, "spatial_merge_size": 2,
                              "temporal_patch_size": 2, "out_hidden_size": TEXT, "in_channels": 3,
                              "deepstack_visual_indexes": [1], "hidden_act": "gelu_pytorch_tanh",
                              "model_type": mtype}}


def qwen3vl(out):
    t = {"model.language_model.embed_tokens.weight": ([16, TEXT], "w"), "lm_head.weight": ([16, TEXT], "w")}
    qwen3vl_visual(t)
    pre = {"image_processor_type": "Qwen2VLImageProcessorFast", "image_mean": [0.5, 0.5, 0.5],
           "image_std": [0.5, 0.5, 0.5], "patch_size": 4, "merge_size": 2, "temporal_patch_size": 2}
    write_dir(out, "qwen3vl-tiny", qwen3vl_config("Qwen3VLForConditionalGeneration", "qwen3_vl", "qwen3_vl_text"),
              t, pre, dtype="BF16")


def qwen35(out):
    """Qwen3.5 (a Qwen3-VL tower without deepstack mergers, an MTP head to skip)"""
    t = {"model.language_model.embed_tokens.weight": ([16, TEXT], "w"), "mtp.fc.weight": ([TEXT, 2 * TEXT], "w")}
    qwen3vl_visual(t)
    t = {k: v for k, v in t.items() if "deepstack" not in k}
    cfg = qwen3vl_config("Qwen3_5ForConditionalGeneration", "qwen3_5", "qwen3_5_text")
    cfg["vision_config"]["deepstack_visual_indexes"] = []
    cfg["vision_config"]["image_size"] = 32  # given: not computed from num_position_embeddings
    pre = {"image_processor_type": "Qwen2VLImageProcessorFast", "image_mean": [0.5, 0.5, 0.5],
           "image_std": [0.5, 0.5, 0.5], "patch_size": 4, "merge_size": 2, "temporal_patch_size": 2}
    write_dir(out, "qwen35-vl-tiny", cfg, t, pre, dtype="BF16")


# ---- InternVL, Kimi-VL, GLM-4V, LFM2-VL (branch mmvis)

def intern_vit(t, pre, hf, layers):
    """InternViT-style tower: the original layout (vision_model.*: fused qkv,
    ls1/ls2, class_embedding [1, 1, V], position_embedding [1, n + 1, V]) or
    transformers' (model.vision_tower.*: q/k/v, lambda_1/2, cls_token)"""
    if hf:
        t[pre + "embeddings.cls_token"] = ([1, 1, V], "w")
        t[pre + "embeddings.patch_embeddings.projection.weight"] = ([V, 3, 4, 4], "w")
        t[pre + "embeddings.patch_embeddings.projection.bias"] = ([V], "w")
        t[pre + "embeddings.position_embeddings"] = ([1, 65, V], "w")
    else:
        t[pre + "embeddings.class_embedding"] = ([1, 1, V], "w")
        t[pre + "embeddings.patch_embedding.weight"] = ([V, 3, 4, 4], "w")
        t[pre + "embeddings.patch_embedding.bias"] = ([V], "w")
        t[pre + "embeddings.position_embedding"] = ([1, 65, V], "w")
    for i in range(layers):
        if hf:
            p = pre + "encoder.layer.%d." % i
            for x in ("q", "k", "v"):
                lin(t, p + "attention.%s_proj" % x, V, V)
            lin(t, p + "attention.projection_layer", V, V)
            norm(t, p + "layernorm_before", V)
            norm(t, p + "layernorm_after", V)
            t[p + "lambda_1"] = ([V], "norm")
            t[p + "lambda_2"] = ([V], "norm")
        else:
            p = pre + "encoder.layers.%d." % i
            lin(t, p + "attn.qkv", 3 * V, V)
            lin(t, p + "attn.proj", V, V)
            norm(t, p + "norm1", V)
            norm(t, p + "norm2", V)
            t[p + "ls1"] = ([V], "norm")
            t[p + "ls2"] = ([V], "norm")
        lin(t, p + "mlp.fc1", FF, V)
        lin(t, p + "mlp.fc2", V, FF)


INTERN_LAYERS = 4  # gguf-py maps mlp1.{bid} below the block count: mlp1.3 needs 4


def internvl(out):
    """InternVLChatModel (InternVL 2.5 / 3): InternViT + mlp1 (LayerNorm, Linear, GELU, Linear)"""
    t = {"language_model.model.embed_tokens.weight": ([16, TEXT], "w")}
    intern_vit(t, "vision_model.", False, INTERN_LAYERS)
    norm(t, "mlp1.0", 4 * V)
    lin(t, "mlp1.1", TEXT, 4 * V)
    lin(t, "mlp1.3", TEXT, TEXT)
    cfg = {"architectures": ["InternVLChatModel"], "model_type": "internvl_chat", "downsample_ratio": 0.5,
           "template": "internvl2_5", "select_layer": -1, "ps_version": "v2", "force_image_size": 32,
           "llm_config": {"architectures": ["Qwen2ForCausalLM"], "hidden_size": TEXT, "model_type": "qwen2",
                          "num_hidden_layers": 1, "num_attention_heads": 2, "vocab_size": 16},
           "vision_config": {"architectures": ["InternVisionModel"], "model_type": "intern_vit_6b",
                             "hidden_size": V, "image_size": 32, "intermediate_size": FF, "layer_norm_eps": 1e-6,
                             "norm_type": "layer_norm", "num_attention_heads": HEADS,
                             "num_hidden_layers": INTERN_LAYERS, "patch_size": 4, "qkv_bias": True,
                             "qk_normalization": False, "hidden_act": "gelu", "drop_path_rate": 0.0}}
    pre = {"image_mean": [0.485, 0.456, 0.406], "image_std": [0.229, 0.224, 0.225], "size": 32}
    write_dir(out, "internvl-tiny", cfg, t, pre, dtype="BF16")


def internvl_hf(out):
    """InternVLForConditionalGeneration (transformers' layout, e.g. InternVL3-*-hf, Intern-S1): the
    converter takes it when vision_config names InternVisionModel (its mmproj class is found by
    vision_config.architectures); image_size / patch_size as lists"""
    t = {"model.language_model.embed_tokens.weight": ([16, TEXT], "w"), "lm_head.weight": ([16, TEXT], "w")}
    intern_vit(t, "model.vision_tower.", True, INTERN_LAYERS)
    norm(t, "model.multi_modal_projector.layer_norm", 4 * V)
    lin(t, "model.multi_modal_projector.linear_1", TEXT, 4 * V)
    lin(t, "model.multi_modal_projector.linear_2", TEXT, TEXT)
    cfg = {"architectures": ["InternVLForConditionalGeneration"], "model_type": "internvl", "downsample_ratio": 0.5,
           "projector_hidden_act": "gelu", "vision_feature_layer": -1, "image_token_id": 10,
           "text_config": {"architectures": ["Qwen2ForCausalLM"], "hidden_size": TEXT, "model_type": "qwen2",
                           "num_hidden_layers": 1, "num_attention_heads": 2, "vocab_size": 16},
           "vision_config": {"architectures": ["InternVisionModel"], "model_type": "internvl_vision",
                             "hidden_size": V, "image_size": [32, 32], "intermediate_size": FF,
                             "layer_norm_eps": 1e-6, "norm_type": "layer_norm", "num_attention_heads": HEADS,
                             "num_hidden_layers": INTERN_LAYERS, "patch_size": [4, 4], "attention_bias": True,
                             "use_qk_norm": False, "hidden_act": "gelu", "use_mean_pooling": False}}
    pre = {"image_processor_type": "GotOcr2ImageProcessorFast", "image_mean": [0.485, 0.456, 0.406],
           "image_std": [0.229, 0.224, 0.225], "size": {"height": 32, "width": 32}}
    write_dir(out, "internvl-hf-tiny", cfg, t, pre, dtype="BF16")


def moonvit(w, ff):
    """MoonViT (Kimi-VL, Kimi-K2.5): vision_tower.* with an [8, 8, w] learned pos_emb, fused wqkv,
    and a text embedding the converter skips"""
    t = {"language_model.model.embed_tokens.weight": ([16, TEXT], "w")}
    t["vision_tower.patch_embed.proj.weight"] = ([w, 3, 4, 4], "w")
    t["vision_tower.patch_embed.proj.bias"] = ([w], "w")
    t["vision_tower.patch_embed.pos_emb.weight"] = ([8, 8, w], "w")
    for i in range(LAYERS):
        p = "vision_tower.encoder.blocks.%d." % i
        norm(t, p + "norm0", w)
        norm(t, p + "norm1", w)
        lin(t, p + "wqkv", 3 * w, w)
        lin(t, p + "wo", w, w)
        lin(t, p + "mlp.fc0", ff, w)
        lin(t, p + "mlp.fc1", w, ff)
    norm(t, "vision_tower.encoder.final_layernorm", w)
    return t


def kimivl(out):
    """KimiVLForConditionalGeneration: MoonViT (vision_tower.*: fused wqkv, a 2-D learned
    pos_emb [h, w, V] the converter flattens), pre_norm + linear_1/linear_2 projector"""
    t = moonvit(V, FF)
    norm(t, "multi_modal_projector.pre_norm", V)
    lin(t, "multi_modal_projector.linear_1", 4 * V, 4 * V)
    lin(t, "multi_modal_projector.linear_2", TEXT, 4 * V)
    cfg = {"architectures": ["KimiVLForConditionalGeneration"], "model_type": "kimi_vl", "media_placeholder_token_id": 10,
           "text_config": {"architectures": ["DeepseekV3ForCausalLM"], "hidden_size": TEXT, "model_type": "deepseek_v3",
                           "num_hidden_layers": 1, "num_attention_heads": 2, "vocab_size": 16},
           "vision_config": {"model_type": "moonvit", "hidden_size": V, "intermediate_size": FF,
                             "num_hidden_layers": LAYERS, "num_attention_heads": HEADS, "patch_size": 4,
                             "init_pos_emb_height": 8, "init_pos_emb_width": 8, "merge_kernel_size": [2, 2]}}
    pre = {"image_processor_type": "KimiVLImageProcessor", "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5],
           "patch_size": 4, "merge_kernel_size": [2, 2], "in_token_limit": 64}
    write_dir(out, "kimivl-tiny", cfg, t, pre, dtype="BF16")


def glm4v(out, name="glm4v-tiny", cls="Glm4vForConditionalGeneration", mtype="glm4v"):
    """Glm4vForConditionalGeneration (GLM-4.1V / GLM-4.5V: Glm4vMoeForConditionalGeneration):
    model.visual.* (Conv3D patch embedding, post-conv RMSNorm, learned positions, fused qkv,
    gated MLP blocks, a Conv2D downsample, the merger proj + LayerNorm + gated MLP)"""
    p = "model.visual."
    t = {"model.language_model.embed_tokens.weight": ([16, TEXT], "w"), "lm_head.weight": ([16, TEXT], "w")}
    t[p + "patch_embed.proj.weight"] = ([V, 3, 2, 4, 4], "w")
    t[p + "patch_embed.proj.bias"] = ([V], "w")
    norm(t, p + "post_conv_layernorm", V, bias=False)
    t[p + "embeddings.position_embedding.weight"] = ([64, V], "w")
    for i in range(LAYERS):
        b = p + "blocks.%d." % i
        norm(t, b + "norm1", V, bias=False)
        norm(t, b + "norm2", V, bias=False)
        lin(t, b + "attn.qkv", 3 * V, V, bias=False)
        lin(t, b + "attn.proj", V, V, bias=False)
        lin(t, b + "mlp.gate_proj", TEXT, V, bias=False)
        lin(t, b + "mlp.up_proj", TEXT, V, bias=False)
        lin(t, b + "mlp.down_proj", V, TEXT, bias=False)
    norm(t, p + "post_layernorm", V, bias=False)
    t[p + "downsample.weight"] = ([TEXT, V, 2, 2], "w")
    t[p + "downsample.bias"] = ([TEXT], "w")
    lin(t, p + "merger.proj", TEXT, TEXT, bias=False)
    norm(t, p + "merger.post_projection_norm", TEXT)
    lin(t, p + "merger.gate_proj", FF, TEXT, bias=False)
    lin(t, p + "merger.up_proj", FF, TEXT, bias=False)
    lin(t, p + "merger.down_proj", TEXT, FF, bias=False)
    cfg = {"architectures": [cls], "model_type": mtype,
           "text_config": {"hidden_size": TEXT, "model_type": mtype + "_text", "num_hidden_layers": 1,
                           "num_attention_heads": 2, "rms_norm_eps": 1e-5, "vocab_size": 16},
           "vision_config": {"model_type": mtype, "depth": LAYERS, "hidden_size": V, "intermediate_size": FF,
                             "num_heads": HEADS, "image_size": 32, "patch_size": 4, "out_hidden_size": TEXT,
                             "spatial_merge_size": 2, "temporal_patch_size": 2, "rms_norm_eps": 1e-5,
                             "hidden_act": "silu", "attention_bias": False, "in_channels": 3}}
    pre = {"image_processor_type": "Glm4vImageProcessor", "image_mean": CLIP_MEAN, "image_std": CLIP_STD,
           "patch_size": 4, "merge_size": 2, "temporal_patch_size": 2}
    write_dir(out, name, cfg, t, pre, dtype="BF16")


def glm4v_moe(out):
    glm4v(out, "glm45v-tiny", "Glm4vMoeForConditionalGeneration", "glm4v_moe")


def lfm2vl(out):
    """Lfm2VlForConditionalGeneration: a SigLIP2 NaFlex tower (model.vision_tower.vision_model.*,
    the patch embedding a Linear over 16 x 16 x 3 the converter makes a Conv2D weight), the
    projector model.multi_modal_projector.{layer_norm, linear_1, linear_2}"""
    t = {"model.language_model.embed_tokens.weight": ([16, TEXT], "w")}
    pre_ = "model.vision_tower.vision_model."
    t[pre_ + "embeddings.patch_embedding.weight"] = ([V, 16 * 16 * 3], "w")
    t[pre_ + "embeddings.patch_embedding.bias"] = ([V], "w")
    t[pre_ + "embeddings.position_embedding.weight"] = ([16, V], "w")
    siglip_layers(t, pre_)
    norm(t, pre_ + "post_layernorm", V)
    norm(t, "model.multi_modal_projector.layer_norm", 4 * V)
    lin(t, "model.multi_modal_projector.linear_1", FF, 4 * V)
    lin(t, "model.multi_modal_projector.linear_2", TEXT, FF)
    cfg = {"architectures": ["Lfm2VlForConditionalGeneration"], "model_type": "lfm2-vl", "downsample_factor": 2,
           "projector_hidden_act": "gelu", "projector_hidden_size": FF, "vision_feature_layer": -1,
           "image_token_index": 10,
           "text_config": {"hidden_size": TEXT, "model_type": "lfm2", "num_hidden_layers": 1,
                           "num_attention_heads": 2, "vocab_size": 16},
           "vision_config": {"model_type": "siglip2_vision_model", "hidden_size": V, "intermediate_size": FF,
                             "num_hidden_layers": LAYERS, "num_attention_heads": HEADS, "num_patches": 16,
                             "patch_size": 16, "layer_norm_eps": 1e-6, "hidden_act": "gelu_pytorch_tanh",
                             "num_channels": 3, "vision_use_head": False}}
    pre = {"image_processor_type": "Lfm2VlImageProcessorFast", "image_mean": [0.5, 0.5, 0.5],
           "image_std": [0.5, 0.5, 0.5], "downsample_factor": 2, "encoder_patch_size": 16,
           "max_image_tokens": 256, "min_image_tokens": 64}
    write_dir(out, "lfm2vl-tiny", cfg, t, pre, dtype="BF16")


def cogvlm(out):
    """CogVLMForCausalLM (CogVLM 1): model.vision.* (EVA-CLIP tower: fused query_key_value,
    post-norm blocks, class + learned positions), the GLU projector linear_proj.*, boi / eoi"""
    p = "model.vision."
    t = {"model.embed_tokens.weight": ([16, TEXT], "w")}
    t[p + "patch_embedding.proj.weight"] = ([V, 3, 4, 4], "w")
    t[p + "patch_embedding.proj.bias"] = ([V], "w")
    t[p + "patch_embedding.cls_embedding"] = ([1, V], "w")
    t[p + "patch_embedding.position_embedding.weight"] = ([65, V], "w")
    for i in range(LAYERS):
        b = p + "transformer.layers.%d." % i
        norm(t, b + "input_layernorm", V)
        lin(t, b + "attention.query_key_value", 3 * V, V)
        lin(t, b + "attention.dense", V, V)
        lin(t, b + "mlp.fc1", FF, V)
        lin(t, b + "mlp.fc2", V, FF)
        norm(t, b + "post_attention_layernorm", V)
    lin(t, p + "linear_proj.linear_proj", TEXT, V, bias=False)
    norm(t, p + "linear_proj.norm1", TEXT)
    lin(t, p + "linear_proj.dense_h_to_4h", 2 * TEXT, TEXT, bias=False)
    lin(t, p + "linear_proj.gate_proj", 2 * TEXT, TEXT, bias=False)
    lin(t, p + "linear_proj.dense_4h_to_h", TEXT, 2 * TEXT, bias=False)
    t[p + "boi"] = ([1, 1, TEXT], "w")
    t[p + "eoi"] = ([1, 1, TEXT], "w")
    cfg = {"architectures": ["CogVLMForCausalLM"], "model_type": "cogvlm", "hidden_size": TEXT,
           "intermediate_size": 2 * TEXT, "num_attention_heads": 2, "num_hidden_layers": 1, "vocab_size": 16,
           "rms_norm_eps": 1e-5, "template_version": "chat",
           "vision_config": {"dropout_prob": 0.0, "hidden_act": "gelu", "in_channels": 3, "num_hidden_layers": LAYERS,
                             "hidden_size": V, "patch_size": 4, "num_heads": HEADS, "intermediate_size": FF,
                             "layer_norm_eps": 1e-6, "num_positions": 65, "image_size": 32}}
    pre = {"image_mean": [0.48145466, 0.4578275, 0.40821073], "image_std": [0.26862954, 0.26130258, 0.27577711]}
    write_dir(out, "cogvlm-tiny", cfg, t, pre, dtype="BF16")


def janus_pro(out):
    """JanusForConditionalGeneration (transformers' Janus-Pro): model.vision_model.* (SigLIP,
    projection_layer), the aligner fc1 + hidden_layers.0 as mm.0 / mm.1; the VQ model and
    generation heads skipped"""
    p = "model.vision_model."
    t = {"model.language_model.embed_tokens.weight": ([16, TEXT], "w"), "lm_head.weight": ([16, TEXT], "w"),
         "model.vqmodel.quantize.embedding.weight": ([8, 4], "w"),
         "model.generation_head.proj_out.weight": ([8, TEXT], "w")}
    t[p + "embeddings.patch_embedding.weight"] = ([V, 3, 4, 4], "w")
    t[p + "embeddings.patch_embedding.bias"] = ([V], "w")
    t[p + "embeddings.position_embedding.weight"] = ([64, V], "w")
    for i in range(LAYERS):
        b = p + "encoder.layers.%d." % i
        norm(t, b + "layer_norm1", V)
        for x in ("q", "k", "v"):
            lin(t, b + "self_attn.%s_proj" % x, V, V)
        lin(t, b + "self_attn.projection_layer", V, V)
        norm(t, b + "layer_norm2", V)
        lin(t, b + "mlp.fc1", FF, V)
        lin(t, b + "mlp.fc2", V, FF)
    norm(t, p + "post_layernorm", V)
    lin(t, "model.aligner.fc1", TEXT, V)
    lin(t, "model.aligner.hidden_layers.0", TEXT, TEXT)
    cfg = {"architectures": ["JanusForConditionalGeneration"], "model_type": "janus", "image_token_id": 10,
           "text_config": {"hidden_size": TEXT, "model_type": "llama", "num_hidden_layers": 1,
                           "num_attention_heads": 2, "vocab_size": 16},
           "vision_config": {"model_type": "janus_vision_model", "hidden_size": V, "mlp_ratio": 2.0,
                             "num_hidden_layers": LAYERS, "num_attention_heads": HEADS, "image_size": 32,
                             "patch_size": 4, "layer_norm_eps": 1e-6, "hidden_act": "gelu", "depth": 2,
                             "projection_dim": TEXT, "use_qk_norm": False, "num_channels": 3},
           "vq_config": {"model_type": "janus_vqgan"}}
    pre = {"image_processor_type": "JanusImageProcessor", "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5],
           "size": {"height": 32, "width": 32}}
    write_dir(out, "janus-pro-tiny", cfg, t, pre, dtype="BF16")


def youtuvl(out):
    """YoutuVLForConditionalGeneration: siglip2.vision_model.* (a Linear patch embedding, no
    positions), merger.ln_q (RMSNorm) + merger.mlp.{0,2}; window attention (fullatt_block_indexes)"""
    p = "siglip2.vision_model."
    t = {"model.embed_tokens.weight": ([16, TEXT], "w"), "model.norm.weight": ([TEXT], "norm"),
         "lm_head.weight": ([16, TEXT], "w")}
    lin(t, p + "embeddings.patch_embedding", V, 3 * 4 * 4)
    siglip_layers(t, p)
    norm(t, p + "post_layernorm", V)
    norm(t, "merger.ln_q", V, bias=False)
    lin(t, "merger.mlp.0", 4 * V, 4 * V)
    lin(t, "merger.mlp.2", TEXT, 4 * V)
    cfg = {"architectures": ["YoutuVLForConditionalGeneration"], "model_type": "youtu_vl", "hidden_size": TEXT,
           "num_hidden_layers": 1, "num_attention_heads": 2, "vocab_size": 16,
           "vision_config": {"model_type": "siglip2_vision_model", "hidden_size": V, "intermediate_size": FF,
                             "num_hidden_layers": LAYERS, "num_attention_heads": HEADS, "patch_size": 4,
                             "spatial_merge_size": 2, "window_size": 16, "fullatt_block_indexes": [2],
                             "hidden_act": "gelu_pytorch_tanh", "layer_norm_eps": 1e-6, "num_channels": 3}}
    pre = {"image_processor_type": "YoutuVLImageProcessor", "image_mean": [0.5, 0.5, 0.5],
           "image_std": [0.5, 0.5, 0.5], "patch_size": 4, "merge_size": 2}
    write_dir(out, "youtuvl-tiny", cfg, t, pre, dtype="BF16")


def paddleocr(out):
    """PaddleOCR-VL: visual.vision_model.* (SigLIP; its packing_position_embedding and head
    skipped), mlp_AR.{pre_norm, linear_1, linear_2}; the mmproj class PaddleOCRVisionModel
    is named by vision_config's architectures; image_size = sqrt(max_pixels)"""
    p = "visual.vision_model."
    t = {"model.embed_tokens.weight": ([16, TEXT], "w")}
    t[p + "embeddings.patch_embedding.weight"] = ([V, 3, 4, 4], "w")
    t[p + "embeddings.patch_embedding.bias"] = ([V], "w")
    t[p + "embeddings.position_embedding.weight"] = ([64, V], "w")
    t[p + "embeddings.packing_position_embedding.weight"] = ([32768 // 1024, V], "w")
    siglip_layers(t, p)
    norm(t, p + "post_layernorm", V)
    t[p + "head.probe"] = ([1, 1, V], "w")
    norm(t, "mlp_AR.pre_norm", V)
    lin(t, "mlp_AR.linear_1", 4 * V, 4 * V)
    lin(t, "mlp_AR.linear_2", TEXT, 4 * V)
    cfg = {"architectures": ["PaddleOCRVLForConditionalGeneration"], "model_type": "paddleocr_vl", "hidden_size": TEXT,
           "num_hidden_layers": 1, "num_attention_heads": 2, "vocab_size": 16, "rms_norm_eps": 1e-5,
           "vision_config": {"architectures": ["PaddleOCRVisionModel"], "model_type": "paddleocr_vl",
                             "hidden_size": V, "intermediate_size": FF, "num_hidden_layers": LAYERS,
                             "num_attention_heads": HEADS, "patch_size": 4, "spatial_merge_size": 2,
                             "hidden_act": "gelu_pytorch_tanh", "layer_norm_eps": 1e-6, "num_channels": 3,
                             "image_size": 384}}
    pre = {"image_processor_type": "SiglipImageProcessor", "image_mean": [0.5, 0.5, 0.5],
           "image_std": [0.5, 0.5, 0.5], "min_pixels": 256, "max_pixels": 1024, "patch_size": 4, "merge_size": 2}
    write_dir(out, "paddleocr-tiny", cfg, t, pre, dtype="BF16")


def lightonocr(out):
    """LightOnOCRForConditionalGeneration: a Pixtral tower under model.vision_encoder.*, the
    projector under model.vision_projection.* (the converter renames both; no [IMG_BREAK])"""
    t = {"model.language_model.embed_tokens.weight": ([16, TEXT], "w"), "lm_head.weight": ([16, TEXT], "w")}
    p = "model.vision_encoder."
    t[p + "patch_conv.weight"] = ([V, 3, 4, 4], "w")
    norm(t, p + "ln_pre", V, bias=False)
    for i in range(LAYERS):
        b = p + "transformer.layers.%d." % i
        norm(t, b + "attention_norm", V, bias=False)
        for x in ("q", "k", "v", "o"):
            lin(t, b + "attention.%s_proj" % x, V, V, bias=False)
        norm(t, b + "ffn_norm", V, bias=False)
        lin(t, b + "feed_forward.gate_proj", FF, V, bias=False)
        lin(t, b + "feed_forward.up_proj", FF, V, bias=False)
        lin(t, b + "feed_forward.down_proj", V, FF, bias=False)
    q = "model.vision_projection."
    norm(t, q + "norm", V, bias=False)
    lin(t, q + "patch_merger.merging_layer", V, 4 * V, bias=False)
    lin(t, q + "linear_1", TEXT, V, bias=False)
    lin(t, q + "linear_2", TEXT, TEXT, bias=False)
    cfg = {"architectures": ["LightOnOCRForConditionalGeneration"], "model_type": "lightonocr", "spatial_merge_size": 2,
           "image_token_id": 10, "projector_hidden_act": "gelu", "multimodal_projector_bias": False,
           "text_config": {"hidden_size": TEXT, "model_type": "qwen3", "num_hidden_layers": 1,
                           "num_attention_heads": 2, "vocab_size": 16},
           "vision_config": {"model_type": "pixtral", "hidden_size": V, "intermediate_size": FF,
                             "num_hidden_layers": LAYERS, "num_attention_heads": HEADS, "head_dim": V // HEADS,
                             "image_size": 32, "patch_size": 4, "num_channels": 3, "hidden_act": "silu",
                             "rope_theta": 10000.0}}
    pre = {"image_processor_type": "PixtralImageProcessor", "image_mean": CLIP_MEAN, "image_std": CLIP_STD,
           "patch_size": {"height": 4, "width": 4}, "size": {"longest_edge": 32}}
    write_dir(out, "lightonocr-tiny", cfg, t, pre, dtype="BF16")


def kimik25(out):
    """KimiK25ForConditionalGeneration: MoonViT3d (vision_tower.*: a 3-D pos_emb [h, w, n], fused
    wqkv whose q and k rows the converter permutes per head), mm_projector.{pre_norm, proj.0,
    proj.2}; vt_* keys. The converter permutes with num_attention_heads, else 16 (the real
    checkpoints' vt_num_attention_heads): width 64, num_attention_heads 8 (head size 8, so
    the permutation is not the identity)"""
    w, ff = 64, 128
    t = moonvit(w, ff)
    norm(t, "mm_projector.pre_norm", w)
    lin(t, "mm_projector.proj.0", TEXT, 4 * w)
    lin(t, "mm_projector.proj.2", TEXT, TEXT)
    cfg = {"architectures": ["KimiK25ForConditionalGeneration"], "model_type": "kimi_k25",
           "text_config": {"architectures": ["DeepseekV3ForCausalLM"], "hidden_size": TEXT,
                           "model_type": "kimi_k2", "num_hidden_layers": 1, "num_attention_heads": 2,
                           "vocab_size": 16},
           "vision_config": {"patch_size": 4, "init_pos_emb_height": 8, "init_pos_emb_width": 8,
                             "init_pos_emb_time": 4, "pos_emb_type": "divided_fixed", "vt_hidden_size": w,
                             "vt_intermediate_size": ff, "vt_num_hidden_layers": LAYERS,
                             "vt_num_attention_heads": 8, "num_attention_heads": 8, "merge_kernel_size": [2, 2],
                             "mm_projector_type": "patchmerger", "mm_hidden_size": w,
                             "projector_hidden_act": "gelu", "projector_ln_eps": 1e-5, "text_hidden_size": TEXT}}
    pre = {"image_processor_type": "KimiK25ImageProcessor", "image_mean": [0.5, 0.5, 0.5],
           "image_std": [0.5, 0.5, 0.5], "in_patch_limit": 256, "patch_size": 4}
    write_dir(out, "kimik25-tiny", cfg, t, pre, dtype="BF16")


VISION_2 = (internvl, internvl_hf, kimivl, glm4v, glm4v_moe, lfm2vl, cogvlm, janus_pro, youtuvl, paddleocr,
            lightonocr, kimik25)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for f in (gemma3, qwen2vl, qwen25vl, mistral3, llama4, smolvlm, qwen3vl, qwen35) + VISION_2:
        f(out)


main()
