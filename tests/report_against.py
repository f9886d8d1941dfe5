"""`mfmt report MODEL --against ORIGINAL` against numbers computed without
mfmt: both models read with numpy here (GGUF parsed by this script, its
blocks dequantized as gguf-py's quants.py does: F32, F16, Q8_0, Q5_0; an HF
directory's model.safetensors read as it lies, names and the q/k permute as
llama.cpp's converter maps them for LLAMA: gguf-py's TensorNameMap and
LlamaModel.permute, restated). Per tensor: RMSE, max |err|, relative error,
SNR in dB, cosine; per layer and for the model: the same sums. mfmt's
`report --json` must give the same numbers (relative 1e-6), and the page's
per-tensor table the same RMSE to its printed digits.

With LLAMA_CPP naming a llama.cpp checkout (gguf-py needs numpy only), each
GGUF tensor dequantized here must also equal gguf-py's GGUFReader +
gguf.quants.dequantize of it, and each HF name map to the GGUF name
gguf-py's TensorNameMap gives; without it that part is a counted SKIP.

    python3 tests/report_against.py MODEL ORIGINAL MFMT PAGE.html
Prints "RESULT report_against PASSED FAILED"; exit 1 on a mismatch."""
import json
import math
import os
import re
import struct
import subprocess
import sys
import types
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

model, original, mfmt, page = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
passed = failed = 0


def check(what, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print(f"FAIL {what} {detail}")


# ------------------------------------------------------------------ GGUF
SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q",
           12: "<d"}


def gguf_read(path):
    """{name: (ggml type, numpy shape, raw bytes)} in file order, as gguf-py's GGUFReader lays them."""
    b = Path(path).read_bytes()
    pos = 0

    def take(fmt):
        nonlocal pos
        v = struct.unpack_from(fmt, b, pos)
        pos += struct.calcsize(fmt)
        return v[0]

    def string():
        nonlocal pos
        n = take("<Q")
        s = b[pos:pos + n].decode()
        pos += n
        return s

    def value(t):
        if t == 8:
            return string()
        if t == 9:
            it, n = take("<I"), take("<Q")
            return [value(it) for _ in range(n)]
        return take(SCALARS[t])

    assert b[:4] == b"GGUF", path
    pos = 4
    take("<I")
    n_tensors, n_kv = take("<Q"), take("<Q")
    kv = {}
    for _ in range(n_kv):
        k = string()
        kv[k] = value(take("<I"))
    infos = []
    for _ in range(n_tensors):
        name = string()
        ne = [take("<Q") for _ in range(take("<I"))]
        infos.append((name, ne, take("<I"), take("<Q")))
    align = kv.get("general.alignment", 32)
    start = (pos + align - 1) // align * align
    out = {}
    for name, ne, t, off in infos:
        n = int(np.prod(ne))
        size = {0: 4 * n, 1: 2 * n, 8: n // 32 * 34, 6: n // 32 * 22}[t]
        out[name] = (t, tuple(reversed(ne)), np.frombuffer(b, np.uint8, size, start + off))
    return out


def dequantize(t, raw):
    """gguf-py's quants.py dequantize_blocks, restated for the types used here."""
    if t == 0:
        return raw.view(np.float32)
    if t == 1:
        return raw.view(np.float16).astype(np.float32)
    blocks = raw.reshape(-1, 34 if t == 8 else 22)
    d = blocks[:, :2].copy().view(np.float16).astype(np.float32)
    if t == 8:  # Q8_0: d * qs
        return (d * blocks[:, 2:].view(np.int8).astype(np.float32)).reshape(-1)
    qh = blocks[:, 2:6].copy().view(np.uint32)  # Q5_0: low nibbles, then high; bit j of qh on top
    qs = blocks[:, 6:]
    ql = np.concatenate([qs & 0x0F, qs >> 4], axis=1)
    hi = ((qh >> np.arange(32, dtype=np.uint32)) & 1).astype(np.uint8)
    q = (ql | (hi << 4)).astype(np.int8) - np.int8(16)
    return (d * q.astype(np.float32)).reshape(-1)


def gguf_tensors(path):
    return {k: dequantize(t, raw).reshape(shape) for k, (t, shape, raw) in gguf_read(path).items()}


# --------------------------------------------------------------- HF side
def safetensors(path):
    b = Path(path).read_bytes()
    (n,) = struct.unpack("<Q", b[:8])
    head = json.loads(b[8:8 + n])
    out = {}
    for k, v in head.items():
        if k == "__metadata__":
            continue
        s, e = v["data_offsets"]
        raw = np.frombuffer(b, np.uint8, e - s, 8 + n + s)
        dt = {"F16": np.float16, "F32": np.float32, "BF16": np.uint16}[v["dtype"]]
        a = raw.view(dt)
        if v["dtype"] == "BF16":
            a = (a.astype(np.uint32) << 16).view(np.float32)
        out[k] = a.astype(np.float32).reshape(v["shape"])
    return out


LLAMA_NAMES = [  # gguf-py tensor_mapping.py, MODEL_ARCH.LLAMA
    (r"model\.embed_tokens\.weight", "token_embd.weight"), (r"model\.norm\.weight", "output_norm.weight"),
    (r"lm_head\.weight", "output.weight"),
    (r"model\.layers\.(\d+)\.input_layernorm\.weight", r"blk.\1.attn_norm.weight"),
    (r"model\.layers\.(\d+)\.self_attn\.q_proj\.weight", r"blk.\1.attn_q.weight"),
    (r"model\.layers\.(\d+)\.self_attn\.k_proj\.weight", r"blk.\1.attn_k.weight"),
    (r"model\.layers\.(\d+)\.self_attn\.v_proj\.weight", r"blk.\1.attn_v.weight"),
    (r"model\.layers\.(\d+)\.self_attn\.o_proj\.weight", r"blk.\1.attn_output.weight"),
    (r"model\.layers\.(\d+)\.post_attention_layernorm\.weight", r"blk.\1.ffn_norm.weight"),
    (r"model\.layers\.(\d+)\.mlp\.gate_proj\.weight", r"blk.\1.ffn_gate.weight"),
    (r"model\.layers\.(\d+)\.mlp\.up_proj\.weight", r"blk.\1.ffn_up.weight"),
    (r"model\.layers\.(\d+)\.mlp\.down_proj\.weight", r"blk.\1.ffn_down.weight"),
]


def gguf_name(hf):
    for pat, rep in LLAMA_NAMES:
        if re.fullmatch(pat, hf):
            return re.sub(pat, rep, hf)
    raise KeyError(hf)


def permute(w, n_head, n_head_kv):  # convert_hf_to_gguf.py LlamaModel.permute
    if n_head_kv is not None and n_head != n_head_kv:
        n_head = n_head_kv
    return (w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:])
            .swapaxes(1, 2).reshape(w.shape))


def pairs():
    """(name as mfmt names it: the original's, original values, model values)."""
    q = gguf_tensors(model)
    if not os.path.isdir(original):
        ref = gguf_tensors(original)
        return [(k, ref[k], q[k]) for k in ref if k in q]
    cfg = json.loads((Path(original) / "config.json").read_text())
    n_head, n_kv = cfg["num_attention_heads"], cfg.get("num_key_value_heads", cfg["num_attention_heads"])
    out = []
    for name, w in safetensors(Path(original) / "model.safetensors").items():
        if name.endswith("q_proj.weight"):
            w = permute(w, n_head, n_head)
        elif name.endswith("k_proj.weight"):
            w = permute(w, n_head, n_kv)
        out.append((name, w, q[gguf_name(name)].reshape(w.shape)))
    return out


def against_gguf_py():
    root = os.environ.get("LLAMA_CPP")
    if not root:
        print("SKIP report_against: gguf-py's dequantization and names (LLAMA_CPP not set); restated here")
        return
    sys.path.insert(0, os.path.join(root, "gguf-py"))
    sys.modules.setdefault("sentencepiece", types.SimpleNamespace(SentencePieceProcessor=None))
    import gguf
    for path in [model] + ([] if os.path.isdir(original) else [original]):
        ours = gguf_read(path)
        for t in gguf.GGUFReader(path).tensors:
            typ, shape, raw = ours[t.name]
            theirs = gguf.quants.dequantize(t.data, t.tensor_type).reshape(-1)
            check(f"gguf-py dequantize {path} {t.name}", np.array_equal(dequantize(typ, raw), theirs))
    if os.path.isdir(original):
        cfg = json.loads((Path(original) / "config.json").read_text())
        tmap = gguf.get_tensor_name_map(gguf.MODEL_ARCH.LLAMA, cfg["num_hidden_layers"])
        for name in safetensors(Path(original) / "model.safetensors"):
            check(f"gguf-py name of {name}", tmap.get_name(name, try_suffixes=(".weight",)) == gguf_name(name))


# ------------------------------------------------------------ the numbers
def layer_of(name):  # cli_layer_of: up to the first all-digit component
    parts = name.split(".")
    for i, p in enumerate(parts):
        if p.isdigit():
            return ".".join(parts[:i + 1])
    return "(outside the layers)"


def sums(rows):
    n = sum(r["n"] for r in rows)
    sq = sum(r["sq"] for r in rows)
    ref = sum(r["ref"] for r in rows)
    return {"rmse": math.sqrt(sq / n), "rel_error": math.sqrt(sq / ref) if ref else 0.0,
            "snr_db": 10 * math.log10(ref / sq) if sq else None,
            "cosine": sum(r["n"] * r["cosine"] for r in rows) / n, "tensors_compared": len(rows)}


want = {}
for name, a, b in pairs():
    a, b = a.astype(np.float64).ravel(), b.astype(np.float64).ravel()
    d = a - b
    sq, ref = float(np.dot(d, d)), float(np.dot(a, a))
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    want[name] = {"n": a.size, "sq": sq, "ref": ref, "rmse": math.sqrt(sq / a.size),
                  "max_abs": float(np.max(np.abs(d))), "rel_error": math.sqrt(sq / ref) if ref else 0.0,
                  "snr_db": 10 * math.log10(ref / sq) if sq else None,
                  "cosine": float(np.dot(a, b) / (na * nb)) if na and nb else 1.0}

against_gguf_py()
got = json.loads(subprocess.run([mfmt, "report", "-q", "--json", "--no-hash", "--no-scan", "--against",
                                 original, model], capture_output=True, text=True, check=True).stdout)
g = got["against"]


def close(what, a, b, tol=1e-6):
    if b is None or a is None:
        check(what, a is None and b is None, f"mfmt {a!r}, numpy {b!r}")
    else:
        check(what, abs(a - b) <= tol * max(abs(b), 1e-12) or (abs(b) < 1e-15 and abs(a) < 1e-15),
              f"mfmt {a!r}, numpy {b!r}")


KEYS = ("rmse", "max_abs", "rel_error", "snr_db", "cosine")
rows = {r["name"]: r for r in g["tensors"]}
check("tensor count", len(rows) == len(want), f"mfmt {len(rows)}, numpy {len(want)}")
for name, w in want.items():
    r = rows.get(name)
    if not r:
        check(f"{name} in mfmt's report", False)
        continue
    for k in KEYS:
        close(f"{name} {k}", r[k], w[k], 1e-9 if k == "cosine" else 1e-6)
layers = {}
for name, w in want.items():
    layers.setdefault(layer_of(name), []).append(w)
glayers = {l["layer"]: l for l in g["layers"]}
check("layer count", len(glayers) == len(layers), f"mfmt {sorted(glayers)}, numpy {sorted(layers)}")
for lname, ws in layers.items():
    s = sums(ws)
    for k, v in s.items():
        close(f"layer {lname} {k}", glayers.get(lname, {}).get(k), v, 1e-9 if k == "cosine" else 1e-6)
for k, v in sums(list(want.values())).items():
    close(f"model {k}", g.get(k), v, 1e-9 if k == "cosine" else 1e-6)

# the page shows the same: its per-tensor table's RMSE, to the 4 digits printed
root = ET.fromstring(Path(page).read_text(encoding="utf-8"))
sec = [s for s in root.iter("section") if s.get("id") == "against"]
check("page has the against section", len(sec) == 1)
if sec:
    shown = {}
    for tr in sec[0].iter("tr"):
        tds = [td.text for td in tr.findall("td")]
        if tds:
            shown[tds[0]] = float(tds[4])
    for name, w in want.items():
        check(f"page rmse of {name}", name in shown and
              abs(shown[name] - w["rmse"]) <= 5e-4 * w["rmse"] + 1e-300, f"{shown.get(name)} vs {w['rmse']}")
    bars = [r for r in sec[0].iter("{http://www.w3.org/2000/svg}rect")]
    check("one SNR bar per layer", len(bars) == len(layers), f"{len(bars)} bars, {len(layers)} layers")
print(f"RESULT report_against {passed} {failed}")
sys.exit(1 if failed else 0)
