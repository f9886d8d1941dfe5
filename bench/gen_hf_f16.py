#!/usr/bin/env python3
"""gen_hf_f16.py DIR [LAYERS] - a llama Hugging Face directory of F16
weights for bench/mlx_convert.sh: config.json and model.safetensors
(hidden 2048, FFN 5632, vocabulary 32000, untied), values N(0, 0.02)."""
import json
import os
import struct
import sys

import numpy as np


def main():
    d, layers = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 8
    h, ffn, vocab = 2048, 5632, 32000
    shapes = {"model.embed_tokens.weight": (vocab, h), "model.norm.weight": (h,),
              "lm_head.weight": (vocab, h)}
    for i in range(layers):
        p = "model.layers.%d." % i
        for m in ("q_proj", "k_proj", "v_proj", "o_proj"):
            shapes[p + "self_attn." + m + ".weight"] = (h, h)
        shapes[p + "mlp.gate_proj.weight"] = (ffn, h)
        shapes[p + "mlp.up_proj.weight"] = (ffn, h)
        shapes[p + "mlp.down_proj.weight"] = (h, ffn)
        shapes[p + "input_layernorm.weight"] = (h,)
        shapes[p + "post_attention_layernorm.weight"] = (h,)
    os.makedirs(d, exist_ok=True)
    cfg = {"architectures": ["LlamaForCausalLM"], "hidden_size": h, "intermediate_size": ffn,
           "model_type": "llama", "num_attention_heads": 16, "num_hidden_layers": layers,
           "num_key_value_heads": 16, "rms_norm_eps": 1e-05, "tie_word_embeddings": False,
           "torch_dtype": "float16", "vocab_size": vocab}
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    hdr, off = {"__metadata__": {"format": "pt"}}, 0
    names = sorted(shapes)
    for n in names:
        nb = int(np.prod(shapes[n])) * 2
        hdr[n] = {"dtype": "F16", "shape": list(shapes[n]), "data_offsets": [off, off + nb]}
        off += nb
    text = json.dumps(hdr, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    rng = np.random.default_rng(0)
    with open(os.path.join(d, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for n in names:
            if len(shapes[n]) == 1:
                f.write(np.ones(shapes[n], np.float16).tobytes())
                continue
            rows = shapes[n][0]
            for r in range(0, rows, 4096):
                k = min(4096, rows - r)
                x = rng.standard_normal((k, shapes[n][1]), dtype=np.float32) * np.float32(0.02)
                f.write(x.astype(np.float16).tobytes())


if __name__ == "__main__":
    main()
