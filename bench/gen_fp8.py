#!/usr/bin/python3
"""An FP8 checkpoint of about SIZE_MB MiB for the dequantize bench, as
DeepSeek-V3 / Qwen3-FP8 ship it: N Linear layers of [OUT, IN] F8_E4M3 with
an F32 weight_scale_inv per 128 x 128 block (quant_method "fp8",
weight_block_size [128, 128], torch_dtype bfloat16). The codes are random
but never E4M3's NaN (0x7f, 0xff), as a quantizer never writes it.
usage: gen_fp8.py DIR [SIZE_MB]"""
import json
import os
import struct
import sys

import numpy as np

out_dir = sys.argv[1]
size_mb = int(sys.argv[2]) if len(sys.argv) > 2 else 1024
OUT, IN, BLOCK = 4096, 4096, 128
per_layer = OUT * IN + (OUT // BLOCK) * (IN // BLOCK) * 4
n = max(1, size_mb * 2**20 // per_layer)
os.makedirs(out_dir, exist_ok=True)
rng = np.random.default_rng(2)
header, off, names = {}, 0, []
parts = [("weight", "F8_E4M3", [OUT, IN], 1), ("weight_scale_inv", "F32", [OUT // BLOCK, IN // BLOCK], 4)]
for i in range(n):
    for p, dt, shape, es in parts:
        nb = int(np.prod(shape)) * es
        name = f"model.layers.{i}.mlp.down_proj.{p}"
        header[name] = {"dtype": dt, "shape": shape, "data_offsets": [off, off + nb]}
        names.append((p, shape))
        off += nb
h = json.dumps(header, separators=(",", ":")).encode()
h += b" " * ((8 - len(h) % 8) % 8)
with open(os.path.join(out_dir, "model.safetensors"), "wb") as f:
    f.write(struct.pack("<Q", len(h)))
    f.write(h)
    for p, shape in names:
        if p == "weight":
            a = rng.integers(0, 0x7f, shape, dtype=np.uint8) | (rng.integers(0, 2, shape, dtype=np.uint8) << 7)
        else:
            a = (rng.random(shape, dtype=np.float32) * 1e-3 + 1e-4).astype(np.float32)
        f.write(a.tobytes())
cfg = {"model_type": "llama", "torch_dtype": "bfloat16",
       "quantization_config": {"quant_method": "fp8", "activation_scheme": "dynamic",
                               "fmt": "e4m3", "weight_block_size": [BLOCK, BLOCK]}}
with open(os.path.join(out_dir, "config.json"), "w") as f:
    json.dump(cfg, f)
print(f"{n} layers of [{OUT}, {IN}], {off / 2**20:.0f} MiB")
