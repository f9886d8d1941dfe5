#!/usr/bin/env python3
"""Variant-B Hugging Face directories for the HF -> GGUF converter tests.

    python3 gen_variants.py SHARED_ARCH_DIRS OUT_DIR [NAME ...]

Each variant starts from one reference directory of
../shared/convert-ref-arch/dirs (variant A: its config, tokenizer files and
tensor list) and changes what the converter's rules must handle rather than
one case: the layer count (new blocks copy the last block's tensor set), the
KV-head count (k/v projections and k norms resized), the source dtype
(F16/BF16/F32), tying (an lm_head added, or one equal to the embedding),
2-shard safetensors with an index, and values on float16 rounding edges.
Weights are fresh random values (fixed seeds) written as safetensors by hand
(header first, padded with spaces to 8 bytes), so the output is the same on
every run. Needs numpy only.

The expected outputs (variants.json) were made by running llama.cpp's own
convert_hf_to_gguf.py (c392e509, ../shared/tools/convref/run_convert.py) on
these directories; mfmt's conversion must give the same sha256.
"""
import json
import os
import re
import shutil
import struct
import sys

import numpy as np

# name: (reference dir, changes)
VARIANTS = {
    "gemma-b": ("gemma-tiny", {"layers": 3, "dtype": "F16", "shards": 2, "lm_head": "add", "edge": True}),
    "gemma2-b": ("gemma2-tiny", {"layers": 27, "kv_heads": 4, "dtype": "F32", "edge": True}),
    "phi3-b": ("phi3-tiny", {"layers": 3, "dtype": "F16", "shards": 2}),
    "phi3-128k-b": ("phi3-tiny-128k", {"layers": 1, "dtype": "F32", "edge": True}),
    "mixtral-b": ("mixtral-tiny", {"layers": 3, "kv_heads": 1, "dtype": "F16", "shards": 2}),
    "qwen2moe-b": ("qwen2moe-tiny", {"layers": 3, "dtype": "F32", "shards": 2, "edge": True}),
    "deepseek-v2-b": ("deepseek-v2-tiny", {"layers": 4, "dtype": "F16", "shards": 2}),
    "phi2-b": ("phi2-tiny", {"layers": 3, "dtype": "BF16", "shards": 2}),
    "starcoder2-b": ("starcoder2-tiny", {"layers": 3, "kv_heads": 1, "dtype": "BF16", "lm_head": "add"}),
    "gpt2-b": ("gpt2-tiny", {"layers": 3, "dtype": "F16", "shards": 2}),
    "stablelm2-b": ("stablelm2-tiny", {"layers": 3, "kv_heads": 2, "dtype": "F16", "shards": 2}),
    "olmo2-b": ("olmo2-tiny", {"layers": 3, "kv_heads": 2, "dtype": "F32", "edge": True}),
    "granite-b": ("granite-tiny", {"layers": 3, "kv_heads": 1, "dtype": "F16", "shards": 2, "lm_head": "add"}),
    "command-r-b": ("command-r-tiny", {"layers": 3, "kv_heads": 2, "dtype": "BF16"}),
    "internlm2-b": ("internlm2-tiny", {"layers": 3, "dtype": "F16", "shards": 2}),
    "bge-b": ("bge-tiny", {"layers": 3, "dtype": "F16", "shards": 2}),
    "pythia-b": ("pythia-tiny", {"layers": 3, "dtype": "BF16", "shards": 2}),
    "falcon-b": ("falcon-tiny", {"layers": 3, "dtype": "F32", "shards": 2, "edge": True}),
    "mamba-b": ("mamba-tiny", {"layers": 3, "dtype": "BF16", "shards": 2, "lm_head": "copy"}),
    # DeepSeek-V2 Lite: 27 layers (llama.cpp's test for it), q_proj without q_lora_rank, experts
    # of 16 (Q8_0 falls back to F16)
    "deepseek-v2-lite-b": ("deepseek-v2-tiny", {
        "layers": 27, "dtype": "BF16",
        "config": {"q_lora_rank": None, "moe_intermediate_size": 16},
        "drop": [r"self_attn\.q_(a_proj|a_layernorm|b_proj)\."],
        "per_layer": [("model.layers.{L}.self_attn.q_proj.weight", [96, 64], 1)],
        "resize": [(r"mlp\.experts\.\d+\.(gate|up)_proj", [16, 64]), (r"mlp\.experts\.\d+\.down_proj", [64, 16])]}),
    # Mamba with dt_rank 6: x_proj [dt_rank + 2 * d_state, d_inner], dt_proj [d_inner, dt_rank]
    "mamba-dt6-b": ("mamba-tiny", {
        "dtype": "F32", "config": {"time_step_rank": 6},
        "resize": [(r"mixer\.x_proj\.weight", [38, 128]), (r"mixer\.dt_proj\.weight", [128, 6])]}),
    # issue 25's second-round families (BLOOM, MPT, DBRX, BitNet, the BERT-likes, the T5 encoder)
    "bloom-b": ("bloom-tiny", {"layers": 3, "dtype": "F16", "shards": 2, "edge": True}),
    "mpt-b": ("mpt-tiny", {"layers": 3, "dtype": "F32"}),
    "dbrx-b": ("dbrx-tiny", {"layers": 3, "dtype": "F16", "shards": 2}),
    "bitnet-b": ("bitnet-b158-tiny", {"layers": 3, "dtype": "BF16", "shards": 2}),
    "roberta-b": ("roberta-embed-tiny", {"layers": 3, "dtype": "F16", "shards": 2}),
    "xlmr-b": ("xlmr-embed-tiny", {"layers": 3, "dtype": "BF16"}),
    "nomic-bert-b": ("nomic-embed-tiny", {"layers": 3, "dtype": "F16", "shards": 2}),
    "jina-bert-b": ("jina-embed-v2-tiny", {"layers": 3, "dtype": "BF16"}),
    "t5-encoder-b": ("t5-encoder-tiny", {"layers": 3, "dtype": "F16", "shards": 2}),
    # RWKV6 with rescale_every 1: blocks 1 and 2 have their time-mix output and
    # channel-mix value divided by 2 and 4 (the tiny reference's 2 blocks never are)
    "rwkv6-b": ("rwkv6-finch-tiny", {"layers": 3, "dtype": "F16", "shards": 2, "config": {"rescale_every": 1}}),
    # StableLM 2 with per-head q/k LayerNorms (stacked by the converter)
    "stablelm2-qknorm-b": ("stablelm2-tiny", {
        "dtype": "F16", "config": {"qk_layernorm": True},
        "per_layer": [("model.layers.{L}.self_attn.q_layernorm.norms.{H}.weight", [16], 4),
                      ("model.layers.{L}.self_attn.k_layernorm.norms.{H}.weight", [16], 4)]}),
}

EMBEDDINGS = ("model.embed_tokens.weight", "transformer.wte.weight", "wte.weight", "backbone.embeddings.weight",
              "backbone.embedding.weight", "gpt_neox.embed_in.weight", "transformer.word_embeddings.weight",
              "model.tok_embeddings.weight", "transformer.embd.wte.weight", "embeddings.word_embeddings.weight")
LAYER_KEYS = ("num_hidden_layers", "n_layer", "num_layers", "n_layers")
SIZES = {"F32": 4, "F16": 2, "BF16": 2}

# float32 values on float16 rounding edges: ties (to even), just past them,
# subnormal ties, the largest finite value and the last that rounds to it
EDGE = np.array([1 + 2 ** -11, 1 + 3 * 2 ** -11, 1 + 2 ** -11 + 2 ** -23, -(1 + 2 ** -11),
                 2 ** -25, 3 * 2 ** -25, 2 ** -24, 65504.0, 65519.0, -65519.0, 0.5 + 2 ** -12,
                 2 ** -14 + 2 ** -25, 1e-8, -0.0], dtype=np.float32)


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
    header.pop("__metadata__", None)
    return [(k, v["dtype"], v["shape"]) for k, v in header.items()]


def layer_of(name):
    m = re.match(r"^(.*?\.)(\d+)(\..*)$", name)
    return (m.group(1), int(m.group(2)), m.group(3)) if m else None


def to_bf16_bits(x):
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    r = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return r.astype(np.uint16)


def encode(values, dtype):
    if dtype == "F32":
        return values.astype("<f4").tobytes()
    if dtype == "F16":
        return values.astype("<f2").tobytes()
    return to_bf16_bits(values).astype("<u2").tobytes()


def values_for(rng, name, shape, edge):
    n = int(np.prod(shape)) if shape else 1
    if name.endswith(("norm.weight", "layernorm.weight", "ln_1.weight", "ln_2.weight", "ln_f.weight",
                      "LayerNorm.weight")) or re.search(r"norms\.\d+\.weight$", name):
        v = 1.0 + rng.standard_normal(n).astype(np.float32) * 0.1
    elif name.endswith(".A_log"):
        v = np.log(rng.uniform(0.5, 16, n)).astype(np.float32)
    else:
        v = rng.standard_normal(n).astype(np.float32) * 0.02
    if edge and n >= len(EDGE) and len(shape) >= 2:
        v[: len(EDGE)] = EDGE
    return v.reshape(shape)


def write_safetensors(path, tensors):
    """tensors: list of (name, dtype, shape, bytes); written in name order."""
    header = {"__metadata__": {"format": "pt"}}
    off = 0
    for name, dt, shape, data in sorted(tensors, key=lambda t: t[0]):
        header[name] = {"dtype": dt, "shape": list(shape), "data_offsets": [off, off + len(data)]}
        off += len(data)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for _, _, _, data in sorted(tensors, key=lambda t: t[0]):
            f.write(data)


def make(src_root, out_root, name):
    ref, ch = VARIANTS[name]
    src, dst = os.path.join(src_root, ref), os.path.join(out_root, name)
    if os.path.isdir(dst):
        shutil.rmtree(dst)
    os.makedirs(dst)
    for f in sorted(os.listdir(src)):
        p = os.path.join(src, f)
        if f.startswith("model") and (f.endswith(".safetensors") or f.endswith(".index.json")):
            continue
        if os.path.isdir(p):
            shutil.copytree(p, os.path.join(dst, f))
        else:
            shutil.copyfile(p, os.path.join(dst, f))
    with open(os.path.join(src, "config.json")) as f:
        cfg = json.load(f)
    specs = []
    for f in sorted(os.listdir(src)):
        if f.startswith("model") and f.endswith(".safetensors"):
            specs += read_safetensors(os.path.join(src, f))
    # layer count: new blocks copy the last block's tensor set
    lkey = next(k for k in LAYER_KEYS if k in cfg)
    old_layers, new_layers = cfg[lkey], ch.get("layers", cfg[lkey])
    per_layer = {}
    for t in specs:
        lo = layer_of(t[0])
        if lo:
            per_layer.setdefault(lo[1], []).append(t)
    out = [t for t in specs if not layer_of(t[0]) or layer_of(t[0])[1] < new_layers]
    last = per_layer.get(old_layers - 1, [])
    for b in range(old_layers, new_layers):
        for (n, dt, shape) in last:
            pre, _, post = layer_of(n)
            out.append((pre + str(b) + post, dt, shape))
    cfg[lkey] = new_layers
    # tensors dropped, resized, added per layer (per head with {H})
    out = [t for t in out if not any(re.search(r, t[0]) for r in ch.get("drop", []))]
    out = [(n, dt, next((shape2 for r, shape2 in ch.get("resize", []) if re.search(r, n)), shape)) for (n, dt, shape) in out]
    for fmt, shape, count in ch.get("per_layer", []):
        for b in range(new_layers):
            for h in range(count):
                out.append((fmt.format(L=b, H=h), out[0][1], shape))
    cfg.update(ch.get("config", {}))
    # KV heads
    if "kv_heads" in ch:
        old_kv, new_kv = cfg["num_key_value_heads"], ch["kv_heads"]
        resized = []
        for (n, dt, shape) in out:
            if re.search(r"(k_proj|v_proj|k_norm)", n) and shape and shape[0] % old_kv == 0:
                hd = shape[0] // old_kv
                shape = [hd * new_kv] + list(shape[1:])
            resized.append((n, dt, shape))
        out = resized
        cfg["num_key_value_heads"] = new_kv
    # lm_head: added (untied) or a copy of the embedding (Mamba omits it)
    emb = next((t for t in out if t[0] in EMBEDDINGS), None)
    if ch.get("lm_head") and emb and not any(t[0] == "lm_head.weight" for t in out):
        out.append(("lm_head.weight", emb[1], emb[2]))
        if ch["lm_head"] == "add" and "tie_word_embeddings" in cfg:
            cfg["tie_word_embeddings"] = False
    dtype = ch.get("dtype")
    if dtype:
        cfg["torch_dtype"] = {"F32": "float32", "F16": "float16", "BF16": "bfloat16"}[dtype]
    rng = np.random.default_rng(sum(map(ord, name)))
    tensors, embd_values = [], None
    for (n, dt, shape) in sorted(out, key=lambda t: t[0]):
        dt = dtype or dt
        if dt not in SIZES:
            raise SystemExit("%s: %s has dtype %s" % (name, n, dt))
        if n == "lm_head.weight" and ch.get("lm_head") == "copy":
            v = np.zeros(shape, np.float32)  # replaced by the embedding's values below
        else:
            v = values_for(rng, n, shape, ch.get("edge", False))
        if emb and n == emb[0]:
            embd_values = v
        tensors.append((n, dt, shape, encode(v, dt)))
    if ch.get("lm_head") == "copy":  # the copy must follow the embedding's values
        tensors = [(n, dt, s, encode(embd_values, dt)) if n == "lm_head.weight" else (n, dt, s, d)
                   for (n, dt, s, d) in tensors]
    with open(os.path.join(dst, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2, sort_keys=True)
        f.write("\n")
    if ch.get("shards", 1) == 1:
        write_safetensors(os.path.join(dst, "model.safetensors"), tensors)
        return
    total = sum(len(t[3]) for t in tensors)
    first, acc = [], 0
    for t in tensors:
        if acc < total // 2:
            first.append(t)
            acc += len(t[3])
    second = tensors[len(first):]
    files = ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]
    wm = {}
    for part, fname in zip((first, second), files):
        write_safetensors(os.path.join(dst, fname), part)
        for t in part:
            wm[t[0]] = fname
    with open(os.path.join(dst, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": dict(sorted(wm.items()))}, f, indent=2)
        f.write("\n")


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    names = sys.argv[3:] or sorted(VARIANTS)
    for n in names:
        make(sys.argv[1], sys.argv[2], n)
        print(n)


if __name__ == "__main__":
    main()
