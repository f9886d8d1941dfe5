#!/usr/bin/env python3
"""make_gguf_ref.py - the references of `--lossless` (README.md).

usage: make_gguf_ref.py GGUFHARNESS SHARED_DIR
For gguf/q4_0.gguf, gguf/q4_1.gguf (mfmt quantize of ../shared's
convert-ref/llama-tiny-f16.gguf; mfmt's quantizer is byte-identical to
llama-quantize) and ../shared's convert-ref/llama-tiny-q8_0.gguf (llama.cpp's
converter): every Q4_0/Q4_1/Q8_0 tensor's blocks go through GGUFHARNESS
(MLX's own extract_q4_0_data / extract_q4_1_data / extract_q8_0_data, cut
out of mlx/io/gguf_quants.cpp by oracle/build_ggufharness.sh), which gives
the uint32 weights, float16 scales and biases MLX's load_gguf makes. The
GGUF is read by this script's own parser (no gguf-py here). The triple is
named as mlx_lm names the module (llama's GGUF names -> Hugging Face's) and
its rows put back in Hugging Face order for attn_q / attn_k (llama.cpp's
converter permuted them: LlamaModel.permute, undone on whole rows, which
moves each row's weights, scales and biases together). Writes
gguf/NAME.json: each triple's dtype, shape and SHA-256."""
import hashlib
import json
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
TYPES = {2: ("q4_0", 18, 4), 3: ("q4_1", 20, 4), 8: ("q8_0", 34, 8)}
NAMES = {"attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj", "attn_v": "self_attn.v_proj",
         "attn_output": "self_attn.o_proj", "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj",
         "ffn_down": "mlp.down_proj"}


def read_gguf(path):
    b = open(path, "rb").read()
    pos = [0]

    def take(fmt):
        v = struct.unpack_from("<" + fmt, b, pos[0])
        pos[0] += struct.calcsize("<" + fmt)
        return v[0]

    def string():
        n = take("Q")
        s = b[pos[0]:pos[0] + n].decode()
        pos[0] += n
        return s

    scalar = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q",
              12: "d"}

    def value(t):
        if t == 8:
            return string()
        if t == 9:
            et, n = take("I"), take("Q")
            return [value(et) for _ in range(n)]
        return take(scalar[t])

    assert b[:4] == b"GGUF"
    pos[0] = 4
    take("I")
    nt, nkv = take("Q"), take("Q")
    kv = {}
    for _ in range(nkv):
        k = string()
        kv[k] = value(take("I"))
    infos = []
    for _ in range(nt):
        name = string()
        dims = [take("Q") for _ in range(take("I"))]
        infos.append((name, dims, take("I"), take("Q")))
    align = kv.get("general.alignment", 32)
    start = (pos[0] + align - 1) // align * align
    return kv, infos, b, start


def hf_name(name):
    if name == "token_embd.weight":
        return "model.embed_tokens"
    if name == "output.weight":
        return "lm_head"
    _, n, part, _ = name.split(".")
    return "model.layers.%s.%s" % (n, NAMES[part])


def unpermute(a, heads):
    """Rows of llama.cpp's LlamaModel.permute put back."""
    rows = a.shape[0]
    return a.reshape(heads, rows // heads // 2, 2, -1).swapaxes(1, 2).reshape(a.shape)


def main():
    harness, shared = sys.argv[1], sys.argv[2]
    inputs = {"q4_0": os.path.join(HERE, "gguf", "q4_0.gguf"),
              "q4_1": os.path.join(HERE, "gguf", "q4_1.gguf"),
              "q8_0": os.path.join(shared, "convert-ref", "llama-tiny-q8_0.gguf")}
    tmp = tempfile.mkdtemp()
    for case, path in inputs.items():
        kv, infos, b, start = read_gguf(path)
        heads = kv["llama.attention.head_count"]
        kv_heads = kv.get("llama.attention.head_count_kv", heads)
        out = {}
        for name, dims, t, off in infos:
            if t not in TYPES:
                continue
            kind, bsize, bits = TYPES[t]
            n, rows = dims[0], int(np.prod(dims[1:]))
            raw = b[start + off:start + off + rows * n // 32 * bsize]
            src, dst = os.path.join(tmp, "in"), os.path.join(tmp, "out")
            open(src, "wb").write(raw)
            subprocess.run([harness, kind, str(rows * n), src, dst], check=True)
            res = open(dst, "rb").read()
            wb = rows * n * bits // 8
            w = np.frombuffer(res[:wb], np.uint32).reshape(rows, n * bits // 32)
            s = np.frombuffer(res[wb:wb + rows * n // 16], np.uint16).reshape(rows, n // 32)
            bi = np.frombuffer(res[wb + rows * n // 16:], np.uint16).reshape(rows, n // 32)
            part = name.split(".")[-2]
            if part in ("attn_q", "attn_k"):
                h = heads if part == "attn_q" else kv_heads
                w, s, bi = (unpermute(x, h) for x in (w, s, bi))
            mod = hf_name(name)
            for leaf, arr, dt in (("weight", w, "U32"), ("scales", s, "F16"),
                                  ("biases", bi, "F16")):
                out[mod + "." + leaf] = {"dtype": dt, "shape": list(arr.shape), "sha256":
                                         hashlib.sha256(np.ascontiguousarray(arr)).hexdigest()}
        rel = os.path.relpath(path, shared) if path.startswith(shared) else os.path.relpath(path, HERE)
        with open(os.path.join(HERE, "gguf", case + ".json"), "w") as f:
            json.dump({"input": rel, "computed_by": "ggufharness (mlx/io/gguf_quants.cpp)",
                       "tensors": out}, f, indent=1, sort_keys=True)
            f.write("\n")


if __name__ == "__main__":
    main()
