#!/usr/bin/python3
"""Small pre-quantized checkpoints, packed as the producing tools pack them,
with reference floats from an independent numpy dequantizer (tests/test_prequant.c
compares mfmt's logical tensors with them bit for bit).

Run:  /usr/bin/python3 tests/data/prequant/make_prequant.py tests/data/prequant
(deterministic: fixed seeds; numpy only). Each case is a directory CASE/ with
config.json + model.safetensors, and CASE.ref.safetensors with the expected
logical tensors (F32). bad-*/ are corrupt variants; bad.txt lists the message
each must give.

Upstream code the packers and dequantizers restate (read with the search
tools, nothing copied):
  GPTQ   AutoGPTQ/AutoGPTQ auto_gptq/nn_modules/qlinear/qlinear_cuda_old.py
         @179776bd1d97a2e7f84b72318630f43719647a11 (pack: little-endian bit
         streams down the input dimension, 3-bit values straddling words;
         qzeros store zero - 1; forward: (q & mask), zeros & mask then + 1,
         scales * (q - zeros) in fp16)
  AWQ    casper-hansen/AutoAWQ awq/utils/packing_utils.py
         @7ee28736ab85f95724eeab2598bf49b13b86439f (AWQ_ORDER, dequantize_gemm);
         gemv: awq/modules/linear/gemv.py @88e4c76b20755db275574e6a03c83c84ba3bece5
         (WQLinear_GEMV.from_linear, calculate_zeros_width)
  MXFP4  huggingface/transformers src/transformers/integrations/mxfp4.py
         @93a1c400417fd8e89db9f42f8b2265e97265d75a (convert_moe_packed_tensors)
  CT     vllm-project/compressed-tensors (pack_to_int32, dequantize:
         q.to(scale.dtype) - zp, then * scale)
  FP8    DeepSeek-V3 weight_scale_inv 128x128 blocks, F32 product
  NVFP4  ModelOpt export: uint8 [out, in/2] low nibble first, float8_e4m3fn
         per 16, F32 weight_scale_2
"""
import json
import os
import struct
import sys

import numpy as np

ST_DT = {np.dtype(np.float32): "F32", np.dtype(np.float16): "F16", np.dtype(np.int32): "I32",
         np.dtype(np.int8): "I8", np.dtype(np.uint8): "U8", np.dtype(np.int64): "I64"}


def bf16_round(x):
    """float32 -> nearest bf16 (ties to even), kept as float32."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16 << 16
    return u.astype(np.uint32).view(np.float32)


def write_st(path, tensors, raw_dtypes=None):
    """safetensors by hand: header JSON, then the data in order."""
    raw_dtypes = raw_dtypes or {}
    header, blobs, off = {}, [], 0
    for name, arr in tensors.items():
        if name in raw_dtypes:
            dt, shape, b = raw_dtypes[name], list(arr.shape), arr.tobytes()
        else:
            dt, shape, b = ST_DT[arr.dtype], list(arr.shape), np.ascontiguousarray(arr).tobytes()
        header[name] = {"dtype": dt, "shape": shape, "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def case_dir(root, name, config, tensors, ref, raw=None):
    d = os.path.join(root, name)
    os.makedirs(d, exist_ok=True)
    cfg = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "torch_dtype": "float16"}
    cfg.update(config)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f, indent=1)
    write_st(os.path.join(d, "model.safetensors"), tensors, raw)
    if ref is not None:
        write_st(os.path.join(root, name + ".ref.safetensors"),
                 {k: v.astype(np.float32) for k, v in ref.items()})


# ------------------------------------------------------------------ GPTQ

def pack_stream_rows(vals, bits):
    """AutoGPTQ's pack: vals [n, cols] uint -> [n*bits/32, cols] int32; value j
    of a column at bit j*bits of the column's word stream."""
    n, cols = vals.shape
    words = np.zeros((n * bits // 32, cols), np.uint64)
    for j in range(n):
        bit = j * bits
        w, sh = bit // 32, bit % 32
        v = vals[j].astype(np.uint64)
        words[w] |= (v << np.uint64(sh)) & np.uint64(0xFFFFFFFF)
        if sh + bits > 32:
            words[w + 1] |= v >> np.uint64(32 - sh)
    return words.astype(np.uint32).view(np.int32)


def unpack_stream_rows(words, bits, n):
    """The inverse, written as AutoGPTQ's forward reads it (shift, mask)."""
    w = words.view(np.uint32).astype(np.uint64)
    out = np.zeros((n, w.shape[1]), np.int64)
    for j in range(n):
        bit = j * bits
        k, sh = bit // 32, bit % 32
        v = w[k] >> np.uint64(sh)
        if sh + bits > 32:
            v |= w[k + 1] << np.uint64(32 - sh)
        out[j] = (v & np.uint64((1 << bits) - 1)).astype(np.int64)
    return out


def gptq_case(root, name, rng, bits, group, sym, desc_act, fmt, out_f=64, in_f=128):
    W = rng.standard_normal((out_f, in_f)).astype(np.float32) * 0.05
    parts, deq = gptq_pack(W, rng, bits, group, sym, desc_act, fmt)
    pre = "model.layers.0.mlp.down_proj."
    t = {pre + k: v for k, v in parts.items()}
    t["model.norm.weight"] = np.ones(out_f, np.float16)
    ref = {pre + "weight": deq, "model.norm.weight": np.ones(out_f, np.float16)}
    qc = {"quant_method": "gptq", "bits": bits, "group_size": group, "sym": sym,
          "desc_act": desc_act, "checkpoint_format": fmt}
    case_dir(root, name, {"quantization_config": qc}, t, ref)
    return t, qc


def gptq_pack(W, rng, bits, group, sym, desc_act, fmt):
    """W [out, in] -> the GPTQ parts (qweight, qzeros, scales, g_idx) and the
    reference dequantized weight [out, in] (F32 holding fp16 values)."""
    out_f, in_f = W.shape
    ng = 1 if group == -1 else in_f // group
    gsz = in_f if group == -1 else group
    maxq = 2 ** bits - 1
    g_idx = np.arange(in_f) // gsz
    if desc_act:
        g_idx = rng.permutation(g_idx)  # act-order: groups follow a permutation of the inputs
    scales = np.zeros((ng, out_f), np.float16)
    zeros = np.zeros((ng, out_f), np.int64)
    for g in range(ng):
        cols = W[:, g_idx == g]
        lo, hi = np.minimum(cols.min(1), 0), np.maximum(cols.max(1), 0)
        if sym:
            amax = np.maximum(-lo, hi)
            s = (2 * amax / maxq).astype(np.float16)
            z = np.full(out_f, (maxq + 1) // 2)
        else:
            s = ((hi - lo) / maxq).astype(np.float16)
            z = np.clip(np.round(-lo / s.astype(np.float32)), 0, maxq).astype(np.int64)
        s[s == 0] = np.float16(1e-3)
        scales[g], zeros[g] = s, z
    q = np.clip(np.round(W.T / scales[g_idx].astype(np.float32) + zeros[g_idx]), 0, maxq).astype(np.int64)
    qweight = pack_stream_rows(q, bits)                      # [in*bits/32, out]
    stored_z = zeros - 1 if fmt == "gptq" else zeros        # v1 stores zero - 1
    qzeros = pack_stream_rows((stored_z & maxq).T, bits).T.copy()  # [ng, out*bits/32]
    # reference: unpack as AutoGPTQ's forward does, then scales * (q - zeros) in fp16
    uq = unpack_stream_rows(qweight, bits, in_f)
    uz = unpack_stream_rows(qzeros.T.copy(), bits, out_f).T
    if fmt == "gptq":
        uz = uz + 1
    wt = (scales[g_idx] * (uq - uz[g_idx]).astype(np.float16)).astype(np.float16)  # [in, out]
    return ({"qweight": qweight, "qzeros": qzeros, "scales": scales,
             "g_idx": g_idx.astype(np.int32)}, wt.T.astype(np.float32))


def gptq_llama_case(root, rng):
    """A whole tiny llama (2 layers) as GPTQ 4-bit g32 writes it: every
    decoder Linear packed, embeddings / norms / lm_head fp16 (the load
    report and estimate look at this one)."""
    H, I, L, NH, NKV, V = 64, 128, 2, 4, 2, 320  # ../shared/corpus/hf-dir/llama-tiny's shape
    hd = H // NH
    t, ref = {}, {}

    def plain(name, shape):
        a = (rng.standard_normal(shape) * 0.02).astype(np.float16)
        t[name] = a
        ref[name] = a.astype(np.float32)

    plain("model.embed_tokens.weight", (V, H))
    for i in range(L):
        p = f"model.layers.{i}."
        for name, (o, n) in {"self_attn.q_proj": (NH * hd, H), "self_attn.k_proj": (NKV * hd, H),
                             "self_attn.v_proj": (NKV * hd, H), "self_attn.o_proj": (H, NH * hd),
                             "mlp.gate_proj": (I, H), "mlp.up_proj": (I, H),
                             "mlp.down_proj": (H, I)}.items():
            W = (rng.standard_normal((o, n)) * 0.05).astype(np.float32)
            parts, deq = gptq_pack(W, rng, 4, 32, True, False, "gptq")
            for k, v in parts.items():
                t[p + name + "." + k] = v
            ref[p + name + ".weight"] = deq
        for nm in ("input_layernorm.weight", "post_attention_layernorm.weight"):
            t[p + nm] = np.ones(H, np.float16)
            ref[p + nm] = np.ones(H, np.float16)
    t["model.norm.weight"] = np.ones(H, np.float16)
    ref["model.norm.weight"] = np.ones(H, np.float16)
    plain("lm_head.weight", (V, H))
    cfg = {"hidden_size": H, "intermediate_size": I, "num_hidden_layers": L,
           "num_attention_heads": NH, "num_key_value_heads": NKV, "vocab_size": V,
           "max_position_embeddings": 128, "rms_norm_eps": 1e-6, "tie_word_embeddings": False,
           "rope_theta": 10000.0, "bos_token_id": 1, "eos_token_id": 2, "hidden_act": "silu",
           "quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": 32,
                                   "sym": True, "desc_act": False, "checkpoint_format": "gptq"}}
    case_dir(root, "gptq-llama-tiny", cfg, t, ref)


# ------------------------------------------------------------------- AWQ

AWQ_ORDER = [0, 2, 4, 6, 1, 3, 5, 7]
AWQ_REVERSE_ORDER = [0, 4, 1, 5, 2, 6, 3, 7]


def awq_pack(iw):
    """AutoAWQ WQLinear_GEMM.from_linear: [rows, out] -> [rows, out/8], nibble i
    of word c holds column c*8 + AWQ_ORDER[i]."""
    r, c = iw.shape
    out = np.zeros((r, c // 8), np.uint32)
    for col in range(c // 8):
        for i in range(8):
            out[:, col] |= (iw[:, col * 8 + AWQ_ORDER[i]].astype(np.uint32) & 0xF) << np.uint32(4 * i)
    return out.view(np.int32)


def awq_unpack(q):
    """unpack_awq + reverse_awq_order."""
    u = q.view(np.uint32)
    r, c = u.shape
    iw = np.zeros((r, c * 8), np.int64)
    for k in range(8):
        iw[:, k::8] = (u >> np.uint32(4 * k)) & 0xF
    rev = np.arange(c * 8).reshape(-1, 8)[:, AWQ_REVERSE_ORDER].reshape(-1)
    return iw[:, rev]


def awq_case(root, rng, out_f=64, in_f=128, group=32):
    W = rng.standard_normal((out_f, in_f)).astype(np.float32) * 0.05
    ng = in_f // group
    Wg = W.reshape(out_f, ng, group)
    lo, hi = Wg.min(2), Wg.max(2)
    s = ((hi - lo) / 15).astype(np.float16)
    s[s == 0] = np.float16(1e-3)
    z = np.clip(np.round(-lo / s.astype(np.float32)), 0, 15).astype(np.int64)
    q = np.clip(np.round(Wg / s[:, :, None].astype(np.float32)) + z[:, :, None], 0, 15)
    q = q.reshape(out_f, in_f).astype(np.int64)
    qweight = awq_pack(q.T)            # [in, out/8]
    qzeros = awq_pack(z.T)             # [ng, out/8]
    scales = s.T.copy()                # [ng, out]
    iw, iz = awq_unpack(qweight), awq_unpack(qzeros)
    sc = np.repeat(scales, group, 0)
    izr = np.repeat(iz, group, 0)
    wt = ((iw - izr).astype(np.float16) * sc).astype(np.float16)  # [in, out]
    t = {"model.layers.0.self_attn.q_proj.qweight": qweight,
         "model.layers.0.self_attn.q_proj.qzeros": qzeros,
         "model.layers.0.self_attn.q_proj.scales": scales}
    ref = {"model.layers.0.self_attn.q_proj.weight": wt.T.astype(np.float32)}
    qc = {"quant_method": "awq", "bits": 4, "group_size": group, "version": "gemm", "zero_point": True}
    case_dir(root, "awq-gemm-g32", {"quantization_config": qc}, t, ref)


def awq_zeros_width(in_f, group):
    """gemv.py calculate_zeros_width."""
    mult = 1 if group >= 128 else {64: 2, 32: 4}[group]
    base = (in_f // group + 7) // 8
    return (base + mult - 1) // mult * mult


def gemv_pack(vals, width):
    """WQLinear_GEMV.from_linear: vals [out, n] -> [out, width] int32, nibble i
    of word c holds column c*8 + i (order_map 0..7); words past n/8 stay 0."""
    r, n = vals.shape
    out = np.zeros((r, width), np.uint32)
    for col in range((n + 7) // 8):
        for i in range(8):
            if col * 8 + i >= n:
                continue
            out[:, col] |= (vals[:, col * 8 + i].astype(np.uint32) & 0xF) << np.uint32(4 * i)
    return out.view(np.int32)


def awq_gemv_case(root, rng, out_f=64, in_f=256, group=64):
    W = rng.standard_normal((out_f, in_f)).astype(np.float32) * 0.05
    ng = in_f // group
    Wg = W.reshape(out_f, ng, group)
    lo, hi = Wg.min(2), Wg.max(2)
    s = ((hi - lo) / 15).astype(np.float16)
    s[s == 0] = np.float16(1e-3)
    z = np.clip(np.round(-lo / s.astype(np.float32)), 0, 15).astype(np.int64)
    q = np.clip(np.round(Wg / s[:, :, None].astype(np.float32)) + z[:, :, None], 0, 15)
    q = q.reshape(out_f, in_f).astype(np.int64)
    zw = awq_zeros_width(in_f, group)
    qweight = gemv_pack(q, in_f // 8)          # [out, in/8]
    qzeros = gemv_pack(z, zw)                  # [out, zw]
    scales = np.zeros((out_f, zw * 8), np.float16)
    scales[:, :ng] = s                         # [out, zw*8], padded
    # independent dequantization: unpack in natural order, (q - z) * s in fp16
    u = qweight.view(np.uint32)
    iw = np.stack([(u >> np.uint32(4 * k)) & 0xF for k in range(8)], 2).reshape(out_f, in_f)
    uz = qzeros.view(np.uint32)
    iz = np.stack([(uz >> np.uint32(4 * k)) & 0xF for k in range(8)], 2).reshape(out_f, zw * 8)
    izr = np.repeat(iz[:, :ng].astype(np.int64), group, 1)
    sc = np.repeat(scales[:, :ng], group, 1)
    wt = ((iw.astype(np.int64) - izr).astype(np.float16) * sc).astype(np.float16)
    t = {"model.layers.0.mlp.up_proj.qweight": qweight,
         "model.layers.0.mlp.up_proj.qzeros": qzeros,
         "model.layers.0.mlp.up_proj.scales": scales}
    ref = {"model.layers.0.mlp.up_proj.weight": wt.astype(np.float32)}
    qc = {"quant_method": "awq", "bits": 4, "group_size": group, "version": "gemv", "zero_point": True}
    case_dir(root, "awq-gemv-g64", {"quantization_config": qc}, t, ref)


# ------------------------------------------------------------------- FP8

def e4m3_table():
    v = np.zeros(256, np.float32)
    for b in range(256):
        s, e, m = b >> 7, (b >> 3) & 15, b & 7
        if e == 15 and m == 7:
            x = np.nan
        elif e == 0:
            x = m * 2.0 ** -9
        else:
            x = (1 + m / 8) * 2.0 ** (e - 7)
        v[b] = -x if s else x
    return v


E4M3 = e4m3_table()


def to_e4m3(x):
    """nearest E4M3FN code (ties to even code), saturating at 448."""
    finite = np.where(np.isnan(E4M3), np.inf, E4M3)
    x = np.clip(x, -448, 448)
    d = np.abs(finite[None, :] - x.reshape(-1, 1))
    return d.argmin(1).astype(np.uint8).reshape(x.shape)


def fp8_block_case(root, rng, out_f=200, in_f=160):
    W = rng.standard_normal((out_f, in_f)).astype(np.float32)
    br = bc = 128
    nr, nc = -(-out_f // br), -(-in_f // bc)
    sinv = np.zeros((nr, nc), np.float32)
    q = np.zeros((out_f, in_f), np.uint8)
    for i in range(nr):
        for j in range(nc):
            blk = W[i * br:(i + 1) * br, j * bc:(j + 1) * bc]
            s = np.float32(np.abs(blk).max() / 448.0)
            sinv[i, j] = s
            q[i * br:(i + 1) * br, j * bc:(j + 1) * bc] = to_e4m3(blk / s)
    full = np.repeat(np.repeat(sinv, br, 0), bc, 1)[:out_f, :in_f]
    deq = (E4M3[q] * full).astype(np.float32)           # F32 product
    ref = {"model.layers.0.mlp.up_proj.weight": bf16_round(deq)}  # then the model's bf16
    t = {"model.layers.0.mlp.up_proj.weight": q,
         "model.layers.0.mlp.up_proj.weight_scale_inv": sinv}
    qc = {"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic",
          "weight_block_size": [128, 128]}
    case_dir(root, "fp8-block", {"quantization_config": qc, "torch_dtype": "bfloat16"}, t, ref,
             {"model.layers.0.mlp.up_proj.weight": "F8_E4M3"})


def fp8_channel_case(root, rng, out_f=48, in_f=64):
    W = rng.standard_normal((out_f, in_f)).astype(np.float32)
    s = (np.abs(W).max(1, keepdims=True) / 448.0).astype(np.float32)
    q = to_e4m3(W / s)
    deq = (E4M3[q] * s).astype(np.float32)
    t = {"model.layers.0.mlp.gate_proj.weight": q, "model.layers.0.mlp.gate_proj.weight_scale": s}
    ref = {"model.layers.0.mlp.gate_proj.weight": bf16_round(deq)}
    qc = {"quant_method": "fbgemm_fp8", "activation_scale_ub": 1200.0,
          "modules_to_not_convert": ["lm_head"]}
    case_dir(root, "fbgemm-fp8-channel", {"quantization_config": qc, "torch_dtype": "bfloat16"}, t,
             ref, {"model.layers.0.mlp.gate_proj.weight": "F8_E4M3"})


# ----------------------------------------------------- compressed-tensors

def ct_pack_case(root, rng, out_f=32, in_f=128, group=32):
    W = rng.standard_normal((out_f, in_f)).astype(np.float32)
    ng = in_f // group
    Wg = W.reshape(out_f, ng, group)
    s = (np.abs(Wg).max(2) / 7.5).astype(np.float16)
    q = np.clip(np.round(Wg / s[:, :, None].astype(np.float32)), -8, 7).astype(np.int64).reshape(out_f, in_f)
    u = (q + 8).astype(np.uint32)  # stored offset to unsigned
    packed = np.zeros((out_f, in_f // 8), np.uint32)
    for i in range(8):
        packed |= u[:, i::8] << np.uint32(4 * i)
    # dequantize: q.to(fp16) * scale (fp16)
    deq = (q.astype(np.float16) * np.repeat(s, group, 1)).astype(np.float16)
    t = {"model.layers.0.self_attn.o_proj.weight_packed": packed.view(np.int32),
         "model.layers.0.self_attn.o_proj.weight_scale": s,
         "model.layers.0.self_attn.o_proj.weight_shape": np.array([out_f, in_f], np.int64)}
    ref = {"model.layers.0.self_attn.o_proj.weight": deq.astype(np.float32)}
    qc = {"quant_method": "compressed-tensors", "format": "pack-quantized",
          "config_groups": {"group_0": {"targets": ["Linear"], "weights": {
              "num_bits": 4, "type": "int", "symmetric": True, "strategy": "group",
              "group_size": group}}}, "ignore": ["lm_head"]}
    case_dir(root, "ct-pack-w4-g32", {"quantization_config": qc}, t, ref)


def ct_int8_case(root, rng, out_f=32, in_f=64):
    W = rng.standard_normal((out_f, in_f)).astype(np.float32)
    s = (np.abs(W).max(1, keepdims=True) / 127).astype(np.float16)
    zp = rng.integers(-3, 4, (out_f, 1)).astype(np.int8)
    q = np.clip(np.round(W / s.astype(np.float32)) + zp, -128, 127).astype(np.int8)
    deq = ((q.astype(np.float16) - zp.astype(np.float16)) * s).astype(np.float16)
    t = {"model.layers.0.mlp.up_proj.weight": q, "model.layers.0.mlp.up_proj.weight_scale": s,
         "model.layers.0.mlp.up_proj.weight_zero_point": zp}
    ref = {"model.layers.0.mlp.up_proj.weight": deq.astype(np.float32)}
    qc = {"quant_method": "compressed-tensors", "format": "int-quantized",
          "config_groups": {"group_0": {"targets": ["Linear"], "weights": {
              "num_bits": 8, "type": "int", "symmetric": False, "strategy": "channel"}}},
          "ignore": ["lm_head"]}
    case_dir(root, "ct-int8-channel-asym", {"quantization_config": qc}, t, ref)


# ------------------------------------------------------------------ MXFP4

FP4 = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0],
               np.float32)


def mxfp4_case(root, rng, E=2, out_f=64, in_f=96):
    G = in_f // 32
    blocks = rng.integers(0, 256, (E, out_f, G, 16)).astype(np.uint8)
    scales = rng.integers(118, 134, (E, out_f, G)).astype(np.uint8)
    lo, hi = blocks & 0x0F, blocks >> 4
    vals = np.zeros((E, out_f, G, 32), np.float32)
    vals[..., 0::2] = FP4[lo]
    vals[..., 1::2] = FP4[hi]
    vals = bf16_round(np.ldexp(vals, scales.astype(np.int32)[..., None] - 127))
    ref = vals.reshape(E, out_f, in_f).transpose(0, 2, 1)  # [E, in, out]
    t = {"model.layers.0.mlp.experts.down_proj_blocks": blocks,
         "model.layers.0.mlp.experts.down_proj_scales": scales,
         "model.layers.0.mlp.router.weight": np.zeros((E, in_f), np.float16)}
    qc = {"quant_method": "mxfp4", "modules_to_not_convert": ["model.layers.*.self_attn",
                                                              "model.layers.*.mlp.router", "lm_head"]}
    case_dir(root, "mxfp4-gptoss", {"quantization_config": qc, "model_type": "gpt_oss",
                                    "architectures": ["GptOssForCausalLM"], "torch_dtype": "bfloat16"},
             t, {"model.layers.0.mlp.experts.down_proj": ref,
                 "model.layers.0.mlp.router.weight": np.zeros((E, in_f), np.float32)})


# ------------------------------------------------------------------ NVFP4

def nvfp4_case(root, rng, out_f=32, in_f=64):
    codes = rng.integers(0, 16, (out_f, in_f)).astype(np.uint8)
    packed = (codes[:, 0::2] | (codes[:, 1::2] << 4)).astype(np.uint8)
    sc = rng.integers(0x30, 0x58, (out_f, in_f // 16)).astype(np.uint8)  # positive E4M3 codes
    s2 = np.array(0.0123, np.float32)
    deq = (FP4[codes] * np.repeat(E4M3[sc], 16, 1)).astype(np.float32) * s2
    t = {"model.layers.0.mlp.down_proj.weight": packed,
         "model.layers.0.mlp.down_proj.weight_scale": sc,
         "model.layers.0.mlp.down_proj.weight_scale_2": s2,
         "model.layers.0.mlp.down_proj.input_scale": np.array(1.0, np.float32)}
    qc = {"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16,
          "ignore": ["lm_head"]}
    case_dir(root, "nvfp4-modelopt", {"quantization_config": qc, "torch_dtype": "bfloat16"}, t,
             {"model.layers.0.mlp.down_proj.weight": bf16_round(deq.astype(np.float32))},
             {"model.layers.0.mlp.down_proj.weight_scale": "F8_E4M3"})


# ----------------------------------------------------------- bitsandbytes

NF4 = np.array([-1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453,
                -0.28444138169288635, -0.18477343022823334, -0.09105003625154495, 0.0,
                0.07958029955625534, 0.16093020141124725, 0.24611230194568634,
                0.33791524171829224, 0.44070982933044434, 0.5626170039176941,
                0.7229568362236023, 1.0], np.float32)
FP4_BNB = np.array([0, 0.0625, 8.0, 12.0, 4.0, 6.0, 2.0, 3.0,
                    -0.0, -0.0625, -8.0, -12.0, -4.0, -6.0, -2.0, -3.0], np.float32) / np.float32(12)


def bnb4_case(root, rng, name, quant_type, nested, out_f=48, in_f=64, bs=64):
    """bitsandbytes quantize_4bit (CPU reference): blocks of bs over the
    flattened weight, absmax per block, nearest code of x / absmax; packed
    two a byte, the first element in the HIGH nibble; QuantState.as_dict(
    packed=True) for the serialized names."""
    code = NF4 if quant_type == "nf4" else FP4_BNB
    W = rng.standard_normal((out_f, in_f)).astype(np.float32).reshape(-1)
    blocks = W.reshape(-1, bs)
    absmax = np.abs(blocks).max(1).astype(np.float32)
    q = np.abs((blocks / absmax[:, None])[:, :, None] - code[None, None, :]).argmin(2).reshape(-1)
    packed = ((q[0::2] << 4) | q[1::2]).astype(np.uint8).reshape(-1, 1)
    pre = "model.layers.0.mlp.up_proj.weight"
    t = {pre: packed, pre + ".absmax": absmax, pre + ".quant_map": code}
    qs = {"quant_type": quant_type, "blocksize": bs, "dtype": "float16", "shape": [out_f, in_f]}
    am = absmax
    if nested:
        nbs = 256
        offset = np.float32(absmax.mean())
        centered = absmax - offset
        ncode = np.linspace(-1, 1, 256).astype(np.float32)
        nb = -(-len(centered) // nbs)
        pad = np.zeros(nb * nbs, np.float32)
        pad[:len(centered)] = centered
        nabs = np.abs(pad.reshape(nb, nbs)).max(1).astype(np.float32)
        nq = np.abs((pad.reshape(nb, nbs) / nabs[:, None])[:, :, None] - ncode[None, None, :]).argmin(2)
        nq = nq.reshape(-1)[:len(centered)].astype(np.uint8)
        t[pre + ".absmax"] = nq
        t[pre + ".nested_absmax"] = nabs
        t[pre + ".nested_quant_map"] = ncode
        qs.update({"nested_blocksize": nbs, "nested_offset": float(offset), "nested_dtype": "float32"})
        # dequantize_blockwise, then + offset (F32)
        am = (ncode[nq] * np.repeat(nabs, nbs)[:len(nq)]).astype(np.float32) + offset
    t[pre + ".quant_state.bitsandbytes__" + quant_type] = np.frombuffer(
        json.dumps(qs).encode(), np.uint8).copy()
    deq = (code[q] * np.repeat(am, bs)).astype(np.float32).astype(np.float16)
    qc = {"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": quant_type,
          "bnb_4bit_use_double_quant": nested, "bnb_4bit_compute_dtype": "float16",
          "llm_int8_skip_modules": None}
    case_dir(root, name, {"quantization_config": qc}, t, {pre: deq.reshape(out_f, in_f)})


def bnb8_case(root, rng, out_f=32, in_f=64):
    """LLM.int8: int8_vectorwise_quant rows (SCB = row absmax), dequant
    A * SCB.view(-1, 1) * 7.874015718698502e-3 in F32, then the dtype."""
    W = rng.standard_normal((out_f, in_f)).astype(np.float32)
    scb = np.abs(W).max(1).astype(np.float32)
    cb = np.round(W * (127 / scb[:, None])).astype(np.int8)
    deq = ((cb.astype(np.float32) * scb[:, None]).astype(np.float32) * np.float32(7.874015718698502e-3))
    pre = "model.layers.0.self_attn.v_proj."
    t = {pre + "weight": cb, pre + "SCB": scb}
    qc = {"quant_method": "bitsandbytes", "load_in_8bit": True, "llm_int8_threshold": 6.0}
    case_dir(root, "bnb-int8", {"quantization_config": qc}, t,
             {pre + "weight": deq.astype(np.float16)})


# ---------------------------------------------------------------- corrupt

def bad_cases(root, rng):
    lines = []
    base, qc = gptq_case(root, "bad-tmp", rng, 4, 32, True, False, "gptq")
    base = dict(base)
    os.remove(os.path.join(root, "bad-tmp.ref.safetensors"))
    import shutil
    shutil.rmtree(os.path.join(root, "bad-tmp"))
    pre = "model.layers.0.mlp.down_proj."

    def variant(name, change, qcfg, expect):
        t = dict(base)
        change(t)
        case_dir(root, name, {"quantization_config": qcfg}, t, None)
        lines.append(f"{name}\t{expect}")

    variant("bad-short-qweight", lambda t: t.__setitem__(pre + "qweight", t[pre + "qweight"][:-4].copy()),
            qc, '"model.layers.0.mlp.down_proj.qweight": holds 12 packed rows (96 inputs), but 4 groups of 32 in the scales need 128 inputs')
    variant("bad-scales-shape", lambda t: t.__setitem__(pre + "scales", t[pre + "scales"][:, :-1].copy()),
            qc, '"model.layers.0.mlp.down_proj.scales": shape [4, 63], but one scale per group and output needs [4, 64]')
    variant("bad-group", lambda t: None, dict(qc, group_size=48),
            '"model.layers.0.mlp.down_proj.qweight": group size 48 does not divide the input dimension 128')
    gi = base[pre + "g_idx"].copy()
    gi[5] = 9

    variant("bad-gidx", lambda t: t.__setitem__(pre + "g_idx", gi), qc,
            '"model.layers.0.mlp.down_proj.g_idx": g_idx[5] = 9 is out of range: there are 4 groups')
    with open(os.path.join(root, "bad.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    rng = np.random.default_rng(19)
    gptq_case(root, "gptq-4bit-g32-sym", rng, 4, 32, True, False, "gptq")
    gptq_case(root, "gptq-3bit-g64-actorder", rng, 3, 64, False, True, "gptq")
    gptq_case(root, "gptq-8bit-gall-v2", rng, 8, -1, False, False, "gptq_v2")
    gptq_case(root, "gptq-2bit-g32", rng, 2, 32, False, False, "gptq")
    awq_case(root, rng)
    fp8_block_case(root, rng)
    fp8_channel_case(root, rng)
    ct_pack_case(root, rng)
    ct_int8_case(root, rng)
    mxfp4_case(root, rng)
    nvfp4_case(root, rng)
    gptq_llama_case(root, rng)
    bnb4_case(root, rng, "bnb-nf4", "nf4", False)
    bnb4_case(root, rng, "bnb-nf4-nested", "nf4", True)
    bnb4_case(root, rng, "bnb-fp4", "fp4", False)
    bnb8_case(root, rng)
    bad_cases(root, rng)
    awq_gemv_case(root, np.random.default_rng(1919))  # its own stream: the others unchanged


if __name__ == "__main__":
    main()
