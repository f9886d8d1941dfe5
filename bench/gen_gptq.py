#!/usr/bin/python3
"""A GPTQ checkpoint of about SIZE_MB MiB for the dequantize bench: N Linear
layers of [OUT, IN], 4-bit, group 128, random codes (every code is valid),
fp16 scales, checkpoint_format gptq. Layout as AutoGPTQ writes it (see
tests/data/prequant/make_prequant.py). usage: gen_gptq.py DIR [SIZE_MB]"""
import json
import os
import sys

import numpy as np

from gen_st import write

out_dir = sys.argv[1]
size_mb = int(sys.argv[2]) if len(sys.argv) > 2 else 1024
OUT, IN, BITS, GROUP = 4096, 4096, 4, 128
per_layer = IN * BITS // 32 * OUT * 4 + (IN // GROUP) * OUT * (2 + BITS // 8) + IN * 4
n = max(1, size_mb * 2**20 // per_layer)
os.makedirs(out_dir, exist_ok=True)
rng = np.random.default_rng(1)
makers = {
    "qweight": lambda s: rng.integers(-2**31, 2**31, s, dtype=np.int64).astype(np.int32),
    "qzeros": lambda s: rng.integers(-2**31, 2**31, s, dtype=np.int64).astype(np.int32),
    "scales": lambda s: (rng.random(s, dtype=np.float32) * 0.01 + 1e-3).astype(np.float16),
    "g_idx": lambda s: (np.arange(IN) // GROUP).astype(np.int32),
}
parts = [("qweight", "I32", [IN * BITS // 32, OUT]), ("qzeros", "I32", [IN // GROUP, OUT * BITS // 32]),
         ("scales", "F16", [IN // GROUP, OUT]), ("g_idx", "I32", [IN])]
tensors = [(f"model.layers.{i}.mlp.down_proj.{p}", dt, shape, lambda p=p, shape=shape: makers[p](shape))
           for i in range(n) for p, dt, shape in parts]
size = write(os.path.join(out_dir, "model.safetensors"), tensors)
cfg = {"model_type": "llama", "torch_dtype": "float16",
       "quantization_config": {"quant_method": "gptq", "bits": BITS, "group_size": GROUP,
                               "sym": False, "desc_act": False, "checkpoint_format": "gptq"}}
with open(os.path.join(out_dir, "config.json"), "w") as f:
    json.dump(cfg, f)
print(f"{n} layers of [{OUT}, {IN}], {size / 2**20:.0f} MiB")
