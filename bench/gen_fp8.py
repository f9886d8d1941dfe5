#!/usr/bin/python3
"""An FP8 checkpoint of about SIZE_MB MiB for the dequantize bench, as
DeepSeek-V3 / Qwen3-FP8 ship it: N Linear layers of [OUT, IN] F8_E4M3 with
an F32 weight_scale_inv per 128 x 128 block (quant_method "fp8",
weight_block_size [128, 128], torch_dtype bfloat16). The codes are random
but never E4M3's NaN (0x7f, 0xff), as a quantizer never writes it.
usage: gen_fp8.py DIR [SIZE_MB]"""
import json
import os
import sys

import numpy as np

from gen_st import write

out_dir = sys.argv[1]
size_mb = int(sys.argv[2]) if len(sys.argv) > 2 else 1024
OUT, IN, BLOCK = 4096, 4096, 128
per_layer = OUT * IN + (OUT // BLOCK) * (IN // BLOCK) * 4
n = max(1, size_mb * 2**20 // per_layer)
os.makedirs(out_dir, exist_ok=True)
rng = np.random.default_rng(2)


def fp8_codes(shape):
    return rng.integers(0, 0x7f, shape, dtype=np.uint8) | (rng.integers(0, 2, shape, dtype=np.uint8) << 7)


def block_scales(shape):
    return (rng.random(shape, dtype=np.float32) * 1e-3 + 1e-4).astype(np.float32)


tensors = []
for i in range(n):
    base = f"model.layers.{i}.mlp.down_proj"
    tensors.append((f"{base}.weight", "F8_E4M3", [OUT, IN], lambda: fp8_codes((OUT, IN))))
    tensors.append((f"{base}.weight_scale_inv", "F32", [OUT // BLOCK, IN // BLOCK],
                    lambda: block_scales((OUT // BLOCK, IN // BLOCK))))
size = write(os.path.join(out_dir, "model.safetensors"), tensors)
cfg = {"model_type": "llama", "torch_dtype": "bfloat16",
       "quantization_config": {"quant_method": "fp8", "activation_scheme": "dynamic",
                               "fmt": "e4m3", "weight_block_size": [BLOCK, BLOCK]}}
with open(os.path.join(out_dir, "config.json"), "w") as f:
    json.dump(cfg, f)
print(f"{n} layers of [{OUT}, {IN}], {size / 2**20:.0f} MiB")
