#!/usr/bin/env python3
"""make_quant_ref.py - the quantizer references in quant/ (see README.md).

usage: make_quant_ref.py QHARNESS
  QHARNESS: qharness built from MLX's own mlx/backend/cpu/quantized.cpp
  (README.md says how). Writes quant/{f32,f16,bf16}.in (the inputs, raw
  little-endian), quant/DT_bBITS_gGROUP.cpu (MLX's CPU quantizer: packed
  codes, scales, biases) and quant/DT_bBITS_gGROUP.metal (this script's
  reimplementation of the Metal kernel's rules, read from
  mlx/backend/metal/kernels/quantized.h affine_quantize; no Mac here).
  Also quant/f32nan.in (512 normal values, 12 of them NaN) and
  quant/f32nan_bBITS_gGROUP.cpu: what MLX's CPU kernel makes of NaN
  weights (an undefined cast in C++: x86-64's is what is recorded).
"""
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "quant")
COLS = 384  # divisible by 32, 64 and 128


def bf16_bits(x32):
    """float32 -> bfloat16 bits, round to nearest even (MLX's _MLX_BFloat16)."""
    u = x32.astype(np.float32).view(np.uint32).astype(np.uint64)
    u = (u + ((u >> 16) & 1) + 0x7FFF) >> 16
    return u.astype(np.uint16)


def rows_f32():
    rng = np.random.default_rng(20)
    r = []
    r.append(rng.normal(0, 1, COLS))
    r.append(rng.normal(0, 0.02, COLS))
    r.append(rng.uniform(0, 1, COLS))                     # all positive
    r.append(-rng.uniform(0.1, 2, COLS))                  # all negative: Metal's max starts at 0
    c = np.concatenate([np.full(128, 0.75), np.full(128, -1.5), np.zeros(128)])
    r.append(c)                                           # constant groups
    r.append(rng.integers(-8, 9, COLS) / 2.0)             # halves: exact .5 quotients
    r.append(rng.normal(0, 1e-8, COLS))                   # under eps
    big = rng.normal(0, 1, COLS)
    big[::17] *= 1000.0
    r.append(big)                                         # a wide range
    r.append(rng.integers(0, 16, COLS) * 0.125 - 0.9375)  # grid values: many ties
    return np.stack(r).astype(np.float32)


def inputs():
    x = rows_f32()
    f16 = x.astype(np.float16)
    bf = bf16_bits(x)
    return {
        "f32": (x.tobytes(), x),
        "f16": (f16.tobytes(), f16.astype(np.float32)),
        "bf16": (bf.tobytes(), (bf.astype(np.uint32) << 16).view(np.float32)),
    }


def round_away(x):
    """Metal's round: half away from zero (in float32, exactly)."""
    t = np.float32(np.trunc(x))
    if abs(np.float32(x - t)) >= np.float32(0.5):
        t = np.float32(t + np.copysign(np.float32(1), x))
    return t


def to_dtype_bytes(vals, dt):
    v = np.array(vals, dtype=np.float32)
    if dt == "f32":
        return v.tobytes()
    if dt == "f16":
        return v.astype(np.float16).tobytes()
    return bf16_bits(v).tobytes()


def metal_quantize(w, bits, gs, dt):
    """affine_quantize of quantized.h, one group at a time, float32 steps."""
    f = np.float32
    n_bins = f((1 << bits) - 1)
    eps = f(1e-7)
    codes, scales, biases = [], [], []
    for g in range(0, w.size, gs):
        grp = w[g:g + gs].astype(np.float32)
        w_min, w_max = f(np.inf), f(0)            # Limits<T>::max is +inf; max starts at 0
        for v in grp:
            w_min = f(np.fmin(w_min, v))
            w_max = f(np.fmax(w_max, v))
        scale = f(np.fmax(f(f(w_max - w_min) / n_bins), eps))
        side = abs(w_min) > abs(w_max)
        scale = scale if side else f(-scale)
        edge = w_min if side else w_max
        q0 = round_away(f(edge / scale))
        at_zero = q0 == f(0)
        scale = scale if at_zero else f(edge / q0)
        bias = f(0) if at_zero else edge
        scales.append(scale)
        biases.append(bias)
        for v in grp:
            q = f(np.fmin(round_away(f(f(v - bias) / scale)), n_bins))
            codes.append(int(max(q, 0)))              # never below -0.5: see mlx_affine.h
    acc, have, out = 0, 0, bytearray()
    for q in codes:
        acc |= q << have
        have += bits
        while have >= 8:
            out.append(acc & 0xFF)
            acc >>= 8
            have -= 8
    return bytes(out) + to_dtype_bytes(scales, dt) + to_dtype_bytes(biases, dt)


NAN_AT = (0, 1, 5, 37, 64, 100, 129, 200, 255, 300, 333, 511)


def nan_cases(harness):
    w = np.random.default_rng(5).standard_normal(4 * 128).astype(np.float32)
    w[list(NAN_AT)] = np.nan
    src = os.path.join(OUT, "f32nan.in")
    w.astype("<f4").tofile(src)
    for bits in (2, 3, 4, 5, 6, 8):
        for gs in (32, 64, 128):
            name = os.path.join(OUT, "f32nan_b%d_g%d.cpu" % (bits, gs))
            subprocess.run([harness, "f32", str(bits), str(gs), src, name], check=True)


def main():
    harness = sys.argv[1]
    os.makedirs(OUT, exist_ok=True)
    for dt, (raw, vals) in inputs().items():
        src = os.path.join(OUT, dt + ".in")
        with open(src, "wb") as f:
            f.write(raw)
        flat = vals.reshape(-1)
        for bits in (2, 3, 4, 5, 6, 8):
            for gs in (32, 64, 128):
                name = os.path.join(OUT, "%s_b%d_g%d" % (dt, bits, gs))
                subprocess.run([harness, dt, str(bits), str(gs), src, name + ".cpu"], check=True)
                with open(name + ".metal", "wb") as f:
                    f.write(metal_quantize(flat, bits, gs, dt))
    nan_cases(harness)


if __name__ == "__main__":
    main()
