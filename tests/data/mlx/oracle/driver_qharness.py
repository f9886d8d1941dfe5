#!/usr/bin/env python3
"""driver_qharness.py PLAN OUT QHARNESS - run_mlx_lm.py's plan computed
without libmlx: quantize by qharness (MLX's own CPU quantize<T, U>, see
build_qharness.sh), astype and dequantize in numpy with MLX's rules (float
casts round to nearest even, bfloat16 as mlx/types/bf16.h; dequantize as
mlx/ops.cpp affine_dequantize's fallback: codes as T, w * scale then
+ bias, each rounded to T), headers in MLX's form (nlohmann dump: sorted,
compact, unpadded). Used to cross-check driver.cpp."""
import json
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np

NP = {"float16": np.float16, "float32": np.float32, "uint32": np.uint32}
ST = {"F16": "float16", "BF16": "bfloat16", "F32": "float32", "U32": "uint32"}
ST_OUT = {v: k for k, v in ST.items()}


def bf16_from_f32(x):
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + ((u >> 16) & 1) + 0x7FFF) >> 16).astype(np.uint16)
    nan = np.isnan(np.asarray(x, np.float32))
    r[nan] = 0x7FC0
    return r


def to_f32(a, dt):
    if dt == "bfloat16":
        return (a.astype(np.uint32) << 16).view(np.float32)
    return a.astype(np.float32)


def from_f32(x, dt):
    if dt == "bfloat16":
        return bf16_from_f32(x)
    return x.astype(NP[dt])


class Arr:
    def __init__(self, data, dt):
        self.data, self.dt = data, dt  # bfloat16 as uint16 bits


loaded = {}


def load(path, name):
    if path not in loaded:
        with open(path, "rb") as f:
            n = struct.unpack("<Q", f.read(8))[0]
            hdr = json.loads(f.read(n))
            base = 8 + n
            raw = f.read()
        d = {}
        for k, v in hdr.items():
            if k == "__metadata__":
                continue
            dt = ST[v["dtype"]]
            a, b = v["data_offsets"]
            np_dt = np.uint16 if dt == "bfloat16" else NP[dt]
            d[k] = Arr(np.frombuffer(raw[a:b], np_dt).reshape(v["shape"]), dt)
        loaded[path] = d
    return loaded[path][name]


def ev(e, harness, tmp):
    op = e[0]
    if op == "load":
        return load(e[1], e[2])
    if op == "astype":
        a = ev(e[1], harness, tmp)
        return Arr(from_f32(to_f32(a.data, a.dt), e[2]), e[2])
    if op == "quantize":
        a = ev(e[1], harness, tmp)
        gs, bits, part = e[2], e[3], e[4]
        dt = {"float32": "f32", "float16": "f16", "bfloat16": "bf16"}[a.dt]
        src, dst = os.path.join(tmp, "in"), os.path.join(tmp, "out")
        np.ascontiguousarray(a.data).tofile(src)
        subprocess.run([harness, dt, str(bits), str(gs), src, dst], check=True)
        raw = open(dst, "rb").read()
        rows, n = int(np.prod(a.data.shape[:-1])), a.data.shape[-1]
        pk = rows * n * bits // 8
        es = 4 if a.dt == "float32" else 2
        g = rows * n // gs
        lead = list(a.data.shape[:-1])
        sdt = np.uint16 if a.dt == "bfloat16" else NP[a.dt]
        if part == 0:
            return Arr(np.frombuffer(raw[:pk], np.uint32).reshape(lead + [n * bits // 32]),
                       "uint32")
        off = pk + (part - 1) * g * es
        return Arr(np.frombuffer(raw[off:off + g * es], sdt).reshape(lead + [n // gs]), a.dt)
    if op == "dequantize":
        w, s, b = (ev(x, harness, tmp) for x in e[1:4])
        gs, bits = e[4], e[5]
        words = w.data.reshape(-1, w.data.shape[-1]).astype(np.uint64)
        n = w.data.shape[-1] * 32 // bits
        out = np.zeros((words.shape[0], n), np.float32)
        stream = words.view(np.uint64)
        for r in range(words.shape[0]):
            bitsrow = int.from_bytes(words[r].astype("<u4").tobytes(), "little")
            for j in range(n):
                q = (bitsrow >> (j * bits)) & ((1 << bits) - 1)
                out[r, j] = q
        sf = to_f32(s.data, s.dt).reshape(words.shape[0], -1)
        bf = to_f32(b.data, b.dt).reshape(words.shape[0], -1)
        sc = np.repeat(sf, gs, axis=1)
        bi = np.repeat(bf, gs, axis=1)
        t = to_f32(from_f32(out * sc, s.dt), s.dt)
        v = from_f32(t + bi, s.dt)
        return Arr(v.reshape(list(w.data.shape[:-1]) + [n]), s.dt)
    raise ValueError(op)


def main():
    plan, out, harness = sys.argv[1], sys.argv[2], sys.argv[3]
    tmp = tempfile.mkdtemp()
    for f in json.load(open(plan)):
        hdr, blobs, off = {"__metadata__": f["metadata"]}, [], 0
        for a in f["arrays"]:
            v = ev(a["expr"], harness, tmp)
            assert v.dt == a["dtype"] and list(v.data.shape) == a["shape"], a["name"]
            b = np.ascontiguousarray(v.data).tobytes()
            hdr[a["name"]] = {"data_offsets": [off, off + len(b)], "dtype": ST_OUT[v.dt],
                              "shape": a["shape"]}
            off += len(b)
            blobs.append(b)
        text = json.dumps(hdr, sort_keys=True, separators=(",", ":")).encode()
        with open(os.path.join(out, f["file"]), "wb") as fh:
            fh.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


if __name__ == "__main__":
    main()
