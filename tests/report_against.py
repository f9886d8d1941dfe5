"""`mfmt report MODEL --against ORIGINAL` against numbers computed without
mfmt: both models read with numpy here (GGUF parsed by this script, its
blocks dequantized as gguf-py's quants.py does: F32, F16, Q8_0, Q5_0, Q4_K,
Q6_K; an HF
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

from oracle_util import Tally, permute, safetensors

model, original, mfmt, page = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
tally = Tally("report_against")
check = tally.check


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
        size = {0: 4 * n, 1: 2 * n, 8: n // 32 * 34, 6: n // 32 * 22, 12: n // 256 * 144,
                14: n // 256 * 210}[t]
        out[name] = (t, tuple(reversed(ne)), np.frombuffer(b, np.uint8, size, start + off))
    return out


def dequantize(t, raw):
    """gguf-py's quants.py dequantize_blocks, restated for the types used here."""
    if t == 0:
        return raw.view(np.float32)
    if t == 1:
        return raw.view(np.float16).astype(np.float32)
    if t in (12, 14):
        return dequantize_k(t, raw)
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


def dequantize_k(t, raw):
    """Q4_K (144-byte blocks of 256: d, dmin, 12 bytes of 6-bit scales and mins, 4-bit codes; eight
    sub-blocks of 32: d*sc*q - dmin*m) and Q6_K (210 bytes: low 4 bits, high 2 bits, 16 int8 scales,
    d; sixteen sub-blocks of 16: d*sc*(q - 32)), in float32 as gguf-py computes them."""
    if t == 12:
        b = raw.reshape(-1, 144)
        d = b[:, 0:2].copy().view(np.float16).astype(np.float32)
        dmin = b[:, 2:4].copy().view(np.float16).astype(np.float32)
        s = b[:, 4:16].reshape(-1, 3, 4)  # rows: low 6 bits of scales 0-3, of mins 0-3, then nibbles
        sc = np.concatenate([s[:, 0] & 63, (s[:, 2] & 15) | ((s[:, 0] >> 6) << 4)], axis=1)
        mn = np.concatenate([s[:, 1] & 63, (s[:, 2] >> 4) | ((s[:, 1] >> 6) << 4)], axis=1)
        qs = b[:, 16:].reshape(-1, 4, 32)  # each 32 bytes: sub-block 2j in low nibbles, 2j+1 high
        q = np.stack([qs & 15, qs >> 4], axis=2).reshape(-1, 8, 32).astype(np.float32)
        scale = (d * sc.astype(np.float32))[:, :, None]
        offset = (dmin * mn.astype(np.float32))[:, :, None]
        return (scale * q - offset).reshape(-1)
    b = raw.reshape(-1, 210)
    ql, qh = b[:, :128].reshape(-1, 2, 64), b[:, 128:192].reshape(-1, 2, 32)
    sc = b[:, 192:208].view(np.int8).astype(np.float32)
    d = b[:, 208:210].copy().view(np.float16).astype(np.float32)
    lo = np.stack([ql & 15, ql >> 4], axis=2).reshape(-1, 2, 4, 32)  # per half: 4 runs of 32
    hi = np.stack([(qh >> k) & 3 for k in (0, 2, 4, 6)], axis=2)
    q = ((lo | (hi << 4)).astype(np.int8) - np.int8(32)).reshape(-1, 16, 16).astype(np.float32)
    return ((d * sc)[:, :, None] * q).reshape(-1)


def gguf_tensors(path):
    return {k: dequantize(t, raw).reshape(shape) for k, (t, shape, raw) in gguf_read(path).items()}


# --------------------------------------------------------------- HF side
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
tally.finish()
