#!/usr/bin/env python3
"""make_convert_ref.py - the conversion references in ref/ (README.md).

usage: make_convert_ref.py ORACLE_DIR SHARED_DIR [QHARNESS] [--only CASE...]
  ORACLE_DIR holds run_mlx_lm.py (mlx_lm's own convert() over a recording
  stand-in for mlx.core), the mlx-lm checkout it imports, and driver (MLX's
  C++ core computing what mlx_lm asked for). SHARED_DIR: ../shared. With
  QHARNESS, oracle/driver_qharness.py computes the arrays instead of
  driver (MLX's quantize<T, U> alone; numpy for the rest).
Writes ref/CASE/config.json and model.safetensors.index.json (as mlx_lm
wrote them) and ref/CASE/tensors.json: per safetensors file MLX wrote, its
header (as MLX wrote it) and each tensor's dtype, shape and SHA-256."""
import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

# name, input (hf: SHARED_DIR/corpus/hf-dir, arch: SHARED_DIR/convert-ref-arch/dirs,
# new: SHARED_DIR/convert-ref-new/dirs, models: models/ here, or ref:CASE for
# the MLX directory another case made), convert() arguments
CASES = [
    ("llama-f16-q4g64", "hf:llama-tiny", ["quantize=True"]),
    ("llama-f16-q2g32", "hf:llama-tiny", ["quantize=True", "q_bits=2", "q_group_size=32"]),
    ("llama-f16-q3g128", "hf:llama-tiny", ["quantize=True", "q_bits=3", "q_group_size=128"]),
    ("llama-f16-q5g64-bf16", "hf:llama-tiny",
     ["quantize=True", "q_bits=5", "q_group_size=64", "dtype=bfloat16"]),
    ("llama-f16-q6g32-f32", "hf:llama-tiny",
     ["quantize=True", "q_bits=6", "q_group_size=32", "dtype=float32"]),
    ("llama-f16-q8g128", "hf:llama-tiny", ["quantize=True", "q_bits=8", "q_group_size=128"]),
    ("llama-f16-plain", "hf:llama-tiny", []),
    ("qwen2-bf16-q4g64", "hf:qwen2-tiny", ["quantize=True"]),
    ("qwen2-bf16-q3g32-f16", "hf:qwen2-tiny",
     ["quantize=True", "q_bits=3", "q_group_size=32", "dtype=float16"]),
    ("llama8-f32-q4g32", "models:llama8-f32", ["quantize=True", "q_group_size=32"]),
    ("llama8-f32-q8g64-f16", "models:llama8-f32",
     ["quantize=True", "q_bits=8", "q_group_size=64", "dtype=float16"]),
    ("llama8-f32-mixed_2_6", "models:llama8-f32", ["quantize=True", "quant_predicate=mixed_2_6"]),
    ("llama8-f32-mixed_3_4", "models:llama8-f32",
     ["quantize=True", "quant_predicate=mixed_3_4", "q_group_size=32"]),
    ("llama8-f32-mixed_3_6", "models:llama8-f32",
     ["quantize=True", "quant_predicate=mixed_3_6", "q_group_size=64"]),
    ("llama8-f32-mixed_4_6", "models:llama8-f32",
     ["quantize=True", "quant_predicate=mixed_4_6", "dtype=bfloat16"]),
    ("llama8-f32-plain-bf16", "models:llama8-f32", ["dtype=bfloat16"]),
    ("llama-f16-q8g32-shards", "hf:llama-tiny",
     ["quantize=True", "q_bits=8", "q_group_size=32", "max_shard_bytes=20000"]),
    ("llama-f16-q4g64-dequant", "ref:llama-f16-q4g64", ["dequantize=True"]),
    ("llama8-mixed_3_6-dequant", "ref:llama8-f32-mixed_3_6", ["dequantize=True"]),
    # MLX -> HF -> MLX: mlx_lm quantizing its own dequantized output again
    ("llama-f16-q4g64-dequant-q4g64", "ref:llama-f16-q4g64-dequant", ["quantize=True"]),
    ("llama8-mixed_3_6-dequant-mixed_3_6", "ref:llama8-mixed_3_6-dequant",
     ["quantize=True", "quant_predicate=mixed_3_6", "q_group_size=64"]),
    # -d with a --dtype other than the scales' (BF16 scales, float16 out)
    ("llama-f16-q5g64-bf16-dequant-f16", "ref:llama-f16-q5g64-bf16",
     ["dequantize=True", "dtype=float16"]),
    # -d of the other bit widths; q6g32-f32's F32 scales are cast to its
    # config's torch_dtype (float16) first
    ("llama-f16-q2g32-dequant", "ref:llama-f16-q2g32", ["dequantize=True"]),
    ("llama-f16-q3g128-dequant", "ref:llama-f16-q3g128", ["dequantize=True"]),
    ("llama-f16-q6g32-f32-dequant", "ref:llama-f16-q6g32-f32", ["dequantize=True"]),
    ("llama-f16-q8g128-dequant", "ref:llama-f16-q8g128", ["dequantize=True"]),
    # more model classes (inputs: ../shared's tiny checkpoints of each family)
    ("gemma-bf16-q4g64", "arch:gemma-tiny", ["quantize=True"]),
    ("gemma2-bf16-q4g64", "arch:gemma2-tiny", ["quantize=True"]),
    ("gemma2-bf16-mixed_2_6", "arch:gemma2-tiny",
     ["quantize=True", "quant_predicate=mixed_2_6", "q_group_size=32"]),
    ("gemma3-bf16-q4g64-f16", "new:gemma3-tiny", ["quantize=True", "dtype=float16"]),
    ("gemma3-bf16-q5g32", "new:gemma3-tiny", ["quantize=True", "q_bits=5", "q_group_size=32"]),
    ("phi3-bf16-q4g64", "arch:phi3-tiny", ["quantize=True"]),
    ("phi3-bf16-q8g32-f32", "arch:phi3-tiny",
     ["quantize=True", "q_bits=8", "q_group_size=32", "dtype=float32"]),
    ("qwen3moe-bf16-q4g64", "new:qwen3moe-tiny", ["quantize=True"]),
    ("qwen3moe-bf16-q3g32-shards", "new:qwen3moe-tiny",
     ["quantize=True", "q_bits=3", "q_group_size=32", "max_shard_bytes=6000"]),
    ("qwen3moe-bf16-mixed_3_6", "new:qwen3moe-tiny",
     ["quantize=True", "quant_predicate=mixed_3_6", "q_group_size=32"]),
    ("qwen3moe-bf16-plain-f16", "new:qwen3moe-tiny", ["dtype=float16"]),
    ("mixtral-bf16-q4g32", "arch:mixtral-tiny", ["quantize=True", "q_group_size=32"]),
    ("mixtral-bf16-q6g64-shards", "arch:mixtral-tiny",
     ["quantize=True", "q_bits=6", "max_shard_bytes=9000"]),
    ("qwen2moe-bf16-q4g32", "arch:qwen2moe-tiny", ["quantize=True", "q_group_size=32"]),
    ("qwen3moe-q4g64-dequant", "ref:qwen3moe-bf16-q4g64", ["dequantize=True"]),
]


def header_of(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        text = f.read(n).decode()
        data_start = 8 + n
    hdr = json.loads(text)
    tensors = {}
    with open(path, "rb") as f:
        for k, v in hdr.items():
            if k == "__metadata__":
                continue
            a, b = v["data_offsets"]
            f.seek(data_start + a)
            tensors[k] = {"dtype": v["dtype"], "shape": v["shape"],
                          "sha256": hashlib.sha256(f.read(b - a)).hexdigest()}
    return text, tensors


def main():
    argv = sys.argv[1:]
    only = set(argv[argv.index("--only") + 1:]) if "--only" in argv else None
    if only is not None:
        argv = argv[:argv.index("--only")]
    oracle, shared = argv[0], argv[1]
    qharness = argv[2] if len(argv) > 2 else None
    work = tempfile.mkdtemp(prefix="mlx-ref-")
    outs = {}
    for name, src, args in CASES:
        kind, rest = src.split(":", 1)
        if only is not None and name not in only and not any(
                s == "ref:" + name for n, s, _ in CASES if n in only):
            continue
        inp = {"hf": os.path.join(shared, "corpus", "hf-dir", rest),
               "arch": os.path.join(shared, "convert-ref-arch", "dirs", rest),
               "new": os.path.join(shared, "convert-ref-new", "dirs", rest),
               "models": os.path.join(HERE, "models", rest), "ref": outs.get(rest)}[kind]
        out = os.path.join(work, name)
        subprocess.run([sys.executable, os.path.join(oracle, "run_mlx_lm.py"), inp, out] + args,
                       check=True, stdout=subprocess.DEVNULL)
        if qharness:
            subprocess.run([sys.executable, os.path.join(HERE, "oracle", "driver_qharness.py"),
                            os.path.join(out, "plan.json"), out, qharness], check=True)
        else:
            subprocess.run([os.path.join(oracle, "driver"), os.path.join(out, "plan.json"), out],
                           check=True)
        outs[name] = out
        dst = os.path.join(HERE, "ref", name)
        os.makedirs(dst, exist_ok=True)
        for f in ("config.json", "model.safetensors.index.json"):
            shutil.copy(os.path.join(out, f), dst)
        with open(os.path.join(out, "plan.json")) as f:
            plan = json.load(f)
        files = {}
        for entry in plan:
            text, tensors = header_of(os.path.join(out, entry["file"]))
            files[entry["file"]] = {"header": text, "tensors": tensors}
        with open(os.path.join(dst, "tensors.json"), "w") as f:
            json.dump({"case": name, "input": src, "convert": args, "files": files,
                       "computed_by": "driver_qharness.py" if qharness else "driver.cpp (libmlx)"},
                      f,
                      indent=1, sort_keys=True)
            f.write("\n")
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
