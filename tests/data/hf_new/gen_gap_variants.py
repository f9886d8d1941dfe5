#!/usr/bin/python3
"""Held-out variants of ../shared/convert-ref-new directories for what the
2026 converter (llama.cpp ecbcb7ea) does beyond the plain checkpoints:

    gen_gap_variants.py SHARED/convert-ref-new/dirs OUT_DIR

  gemma3-rows-b        Gemma3ForCausalLM whose embed_tokens has 8 rows past
                       config.json's vocab_size (Gemma3Model.modify_tensors cuts
                       them: data_torch[:len(tokens)])
  gemma3-mm-rows-b     Gemma3ForConditionalGeneration, text_config without
                       vocab_size (the count is then tokenizer.model's), the same
                       8 extra rows
  ernie45-paddle-b     ERNIE 4.5 as the Paddle checkpoints store it: ernie.*
                       names, fused self_attn.qkv_proj (q, k, v rows) and
                       mlp.up_gate_proj (gate rows, then up rows)
  ernie45moe-paddle-b  the same fusion in the MoE model (its class maps no
                       qkv_proj: the converter refuses it, "Can not map tensor")
  qwen3-fp8-b          Qwen3 with every *_proj.weight in F8_E4M3 and a BF16
                       weight_scale_inv per [32, 48] block (quantization_config
                       fp8, weight_block_size [32, 48]: a partial last column
                       block)
  deepseek-v3-fp8-b    DeepSeek-V3 the same way with F32 scales (experts, MLA
                       projections; router, norms, embedding and head as stored)

Values are the reference directory's own; new values (extra rows) from a fixed
formula; F8 codes by round-to-nearest over the e4m3fn table (ties to the lower
code), written in safetensors' layout (header padded to 8, data in key order).
Needs numpy."""
import json, os, shutil, sys
import numpy as np

sys.dont_write_bytecode = True  # nothing written into the repository
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_mm_variants import read_st, write_st  # noqa: E402  (safetensors' layout, keys sorted)

ST_NP = {"F32": np.float32, "F16": np.float16, "BF16": np.uint16, "U8": np.uint8, "F8_E4M3": np.uint8}

def to_f32(dt, shape, b):
    a = np.frombuffer(b, dtype=ST_NP[dt]).reshape(shape)
    if dt == "BF16":
        return (a.astype(np.uint32) << 16).view(np.float32)
    return a.astype(np.float32)

def bf16_bytes(a):
    """float32 -> bf16, round to nearest even (values here are finite)"""
    u = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return u.astype(np.uint16).tobytes()

def e4m3fn_table():
    """the 256 e4m3fn codes' values (OCP FP8: bias 7, no infinities, S.1111.111 NaN)"""
    v = np.zeros(256, dtype=np.float64)
    for c in range(256):
        s, e, m = c >> 7, (c >> 3) & 15, c & 7
        x = (m / 8.0) * 2.0 ** -6 if e == 0 else (1 + m / 8.0) * 2.0 ** (e - 7)
        v[c] = -x if s else x
    v[0x7F] = v[0xFF] = np.nan
    return v

E4M3 = e4m3fn_table()
FINITE = np.array([c for c in range(256) if not np.isnan(E4M3[c])])

def to_e4m3(x):
    """codes of the nearest e4m3fn values (|x| <= 448)"""
    d = np.abs(x.reshape(-1, 1).astype(np.float64) - E4M3[FINITE].reshape(1, -1))
    return FINITE[np.argmin(d, axis=1)].astype(np.uint8).reshape(x.shape)

def fp8_blocks(w, br, bc, scale_dt):
    """per [br, bc] block: scale = amax / 448 (stored as weight_scale_inv, the
    factor dequantization multiplies by), codes of w / scale"""
    r, c = w.shape
    nr, nc = -(-r // br), -(-c // bc)
    s = np.zeros((nr, nc), dtype=np.float32)
    q = np.zeros((r, c), dtype=np.uint8)
    for i in range(nr):
        for j in range(nc):
            blk = w[i * br:(i + 1) * br, j * bc:(j + 1) * bc]
            amax = float(np.abs(blk).max()) or 1.0
            sc = np.float32(amax / 448.0)
            if scale_dt == "BF16":  # the stored scale is what the codes are made against
                sc = np.frombuffer(bf16_bytes(np.array([sc])), dtype=np.uint16).astype(np.uint32) << 16
                sc = sc.view(np.float32)[0]
            s[i, j] = sc
            q[i * br:(i + 1) * br, j * bc:(j + 1) * bc] = to_e4m3(np.clip(blk / sc, -448, 448))
    sb = bf16_bytes(s) if scale_dt == "BF16" else s.tobytes()
    return ("F8_E4M3", [r, c], q.tobytes()), (scale_dt, [nr, nc], sb)

def copy_dir(src, out):
    if os.path.exists(out):
        shutil.rmtree(out)
    shutil.copytree(src, out)
    for f in os.listdir(out):
        os.chmod(os.path.join(out, f), 0o644)
    os.chmod(out, 0o755)

def load(out):
    return read_st(os.path.join(out, "model.safetensors"))[1], json.load(open(os.path.join(out, "config.json")))

def save(out, t, cfg):
    write_st(os.path.join(out, "model.safetensors"), t)
    json.dump(cfg, open(os.path.join(out, "config.json"), "w"), indent=2, sort_keys=True)

def extra_rows(t, key, n):
    dt, shape, b = t[key]
    w = to_f32(dt, shape, b)
    add = np.array([((i * 37 + 11) % 101 - 50) / 500.0 for i in range(n * shape[1])], dtype=np.float32)
    w = np.concatenate([w, add.reshape(n, shape[1])])
    t[key] = ("BF16", list(w.shape), bf16_bytes(w))

def gemma3(src, out):
    d = os.path.join(out, "gemma3-rows-b")
    copy_dir(os.path.join(src, "gemma3-tiny"), d)
    t, cfg = load(d)
    extra_rows(t, "model.embed_tokens.weight", 8)
    save(d, t, cfg)
    d = os.path.join(out, "gemma3-mm-rows-b")
    copy_dir(os.path.join(src, "gemma3-tiny"), d)
    t, cfg = load(d)
    extra_rows(t, "model.embed_tokens.weight", 8)
    text = {k: v for k, v in cfg.items() if k not in ("architectures", "vocab_size")}
    cfg = {"architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3", "text_config": text,
           "vision_config": {"hidden_size": 8, "num_hidden_layers": 1, "model_type": "siglip_vision_model"}}
    t = {"language_model." + k: v for k, v in t.items()}
    save(d, t, cfg)

def fuse(t, names, fused):
    parts = [t.pop(n) for n in names]
    assert len({p[0] for p in parts}) == 1 and len({p[1][1] for p in parts}) == 1
    t[fused] = (parts[0][0], [sum(p[1][0] for p in parts), parts[0][1][1]], b"".join(p[2] for p in parts))

def ernie(src, out, name, ref):
    d = os.path.join(out, name)
    copy_dir(os.path.join(src, ref), d)
    t, cfg = load(d)
    for b in range(cfg["num_hidden_layers"]):
        a, m = "model.layers.%d.self_attn." % b, "model.layers.%d.mlp." % b
        fuse(t, [a + "q_proj.weight", a + "k_proj.weight", a + "v_proj.weight"], a + "qkv_proj.weight")
        if m + "gate_proj.weight" in t:
            fuse(t, [m + "gate_proj.weight", m + "up_proj.weight"], m + "up_gate_proj.weight")
    if ref == "ernie45-tiny":  # the Paddle release's own prefix (Ernie4_5Model renames it)
        t = {("ernie." + k[6:] if k.startswith("model.") else k): v for k, v in t.items()}
    save(d, t, cfg)

def fp8(src, out, name, ref, scale_dt):
    d = os.path.join(out, name)
    copy_dir(os.path.join(src, ref), d)
    t, cfg = load(d)
    br, bc = 32, 48
    for k in sorted(t):
        dt, shape, b = t[k]
        if k.endswith("_proj.weight") and len(shape) == 2:
            t[k], t[k + "_scale_inv"] = fp8_blocks(to_f32(dt, shape, b), br, bc, scale_dt)
    cfg["quantization_config"] = {"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8",
                                  "weight_block_size": [br, bc]}
    save(d, t, cfg)

def main():
    src, out = sys.argv[1:3]
    os.makedirs(out, exist_ok=True)
    gemma3(src, out)
    ernie(src, out, "ernie45-paddle-b", "ernie45-tiny")
    ernie(src, out, "ernie45moe-paddle-b", "ernie45moe-tiny")
    fp8(src, out, "qwen3-fp8-b", "qwen3-tiny", "BF16")
    fp8(src, out, "deepseek-v3-fp8-b", "deepseek-v3-tiny", "F32")

if __name__ == "__main__":
    main()
