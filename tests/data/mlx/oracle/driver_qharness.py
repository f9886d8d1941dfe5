#!/usr/bin/env python3
"""driver_qharness.py PLAN OUT QHARNESS - run_mlx_lm.py's plan computed
without libmlx, by qharness (build_qharness.sh): quantize by MLX's own CPU
quantize<T, U>; astype through MLX's own float16_t / bfloat16_t types
(mlx/types); dequantize as mlx/ops.cpp affine_dequantize's fallback does
it (codes as T, times the scale, plus the bias) in MLX's T arithmetic.
numpy only reads the inputs and writes the files, headers in MLX's form
(nlohmann dump: sorted, compact, unpadded)."""
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
SHORT = {"float32": "f32", "float16": "f16", "bfloat16": "bf16"}


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
    if op == "stack":  # mx.stack along a new axis 0: the arrays' bytes in order
        parts = [ev(x, harness, tmp) for x in e[1:]]
        assert all(p.dt == parts[0].dt for p in parts)
        return Arr(np.stack([p.data for p in parts]), parts[0].dt)
    if op == "astype":
        a = ev(e[1], harness, tmp)
        src, dst = os.path.join(tmp, "in"), os.path.join(tmp, "out")
        np.ascontiguousarray(a.data).tofile(src)
        subprocess.run([harness, "cast", SHORT[a.dt], SHORT[e[2]], src, dst], check=True)
        np_dt = np.uint16 if e[2] == "bfloat16" else NP[e[2]]
        return Arr(np.fromfile(dst, np_dt).reshape(a.data.shape), e[2])
    if op == "quantize":
        a = ev(e[1], harness, tmp)
        gs, bits, part = e[2], e[3], e[4]
        dt = SHORT[a.dt]
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
        w, sc, bi = (ev(x, harness, tmp) for x in e[1:4])
        gs, bits = e[4], e[5]
        paths = [os.path.join(tmp, x) for x in ("w", "s", "b", "out")]
        for arr, pth in zip((w, sc, bi), paths):
            np.ascontiguousarray(arr.data).tofile(pth)
        subprocess.run([harness, "dequant", SHORT[sc.dt], str(bits), str(gs)] + paths,
                       check=True)
        np_dt = np.uint16 if sc.dt == "bfloat16" else NP[sc.dt]
        n = w.data.shape[-1] * 32 // bits
        return Arr(np.fromfile(paths[3], np_dt).reshape(list(w.data.shape[:-1]) + [n]), sc.dt)
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
