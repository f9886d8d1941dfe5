#!/usr/bin/env python3
"""make_models.py - models/llama8-f32: a llama of 8 layers (the mixed
recipes choose per layer index), F32 weights with biases on q/k/v
(attention_bias), written as transformers' save_pretrained lays out a
safetensors file (header padded to 8, data in name order). Deterministic."""
import json
import os
import struct

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def write_safetensors(path, tensors):
    hdr, off, blobs = {"__metadata__": {"format": "pt"}}, 0, []
    for name in sorted(tensors):
        a = np.ascontiguousarray(tensors[name].astype(np.float32))
        b = a.tobytes()
        hdr[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
        off += len(b)
        blobs.append(b)
    text = json.dumps(hdr, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def llama8():
    rng = np.random.default_rng(8)
    h, inter, vocab, layers, heads, kv = 32, 64, 32, 8, 4, 2
    hd = h // heads
    t = {"model.embed_tokens.weight": rng.normal(0, 0.5, (vocab, h)),
         "model.norm.weight": 1 + rng.normal(0, 0.1, h),
         "lm_head.weight": rng.normal(0, 0.5, (vocab, h))}
    for i in range(layers):
        p = "model.layers.%d." % i
        t[p + "self_attn.q_proj.weight"] = rng.normal(0, 0.2, (heads * hd, h))
        t[p + "self_attn.k_proj.weight"] = rng.normal(0, 0.2, (kv * hd, h))
        t[p + "self_attn.v_proj.weight"] = rng.normal(0, 0.2, (kv * hd, h))
        t[p + "self_attn.o_proj.weight"] = rng.normal(0, 0.2, (h, heads * hd))
        t[p + "self_attn.q_proj.bias"] = rng.normal(0, 0.1, heads * hd)
        t[p + "self_attn.k_proj.bias"] = rng.normal(0, 0.1, kv * hd)
        t[p + "self_attn.v_proj.bias"] = rng.normal(0, 0.1, kv * hd)
        t[p + "self_attn.o_proj.bias"] = rng.normal(0, 0.1, h)
        t[p + "mlp.gate_proj.weight"] = rng.normal(0, 0.2, (inter, h))
        t[p + "mlp.up_proj.weight"] = rng.normal(0, 0.2, (inter, h))
        t[p + "mlp.down_proj.weight"] = rng.normal(0, 0.2, (h, inter))
        t[p + "input_layernorm.weight"] = 1 + rng.normal(0, 0.1, h)
        t[p + "post_attention_layernorm.weight"] = 1 + rng.normal(0, 0.1, h)
    cfg = {"architectures": ["LlamaForCausalLM"], "attention_bias": True, "bos_token_id": 1,
           "eos_token_id": 2, "hidden_act": "silu", "hidden_size": h,
           "intermediate_size": inter, "max_position_embeddings": 64, "model_type": "llama",
           "num_attention_heads": heads, "num_hidden_layers": layers,
           "num_key_value_heads": kv, "rms_norm_eps": 1e-05, "rope_theta": 500000.0,
           "tie_word_embeddings": False, "torch_dtype": "float32",
           "transformers_version": "4.46.0", "vocab_size": vocab}
    d = os.path.join(HERE, "models", "llama8-f32")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2, sort_keys=True)
        f.write("\n")
    with open(os.path.join(d, "generation_config.json"), "w") as f:
        json.dump({"bos_token_id": 1, "eos_token_id": [2, 3], "transformers_version": "4.46.0"},
                  f, indent=2)
        f.write("\n")
    write_safetensors(os.path.join(d, "model.safetensors"), t)


if __name__ == "__main__":
    llama8()
