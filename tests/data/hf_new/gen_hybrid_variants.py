#!/usr/bin/python3
"""Held-out variants of the Mamba-2 hybrids of ../shared/convert-ref-new:

    gen_hybrid_variants.py SHARED/convert-ref-new/dirs OUT_DIR

  granite4-h-b   GraniteMoeHybridForCausalLM: 5 layers M/A/M/M/A, 2 SSM groups
                 (in_proj 2*d_inner + 2*2*d_state + heads rows, conv1d
                 d_inner + 2*2*d_state channels, the gated norm in 2 groups),
                 1 KV head, an untied lm_head, F32
  falcon-h1-b    FalconH1ForCausalLM: 3 layers, mamba_rms_norm (mamba.norm in
                 2 groups), 2 SSM groups, tied (no lm_head), F32
  granite4-h-dense-b    GraniteMoeHybrid without experts (num_local_experts
                 0: shared_mlp is the dense FFN), 4 layers M/A/M/A by layer_types
  granite4-h-period-b   experts, no layer_types: attention every 3rd layer
                 from layer 1 (attn_layer_period 3, attn_layer_offset 1), 6 layers
  granite4-h-indices-b  dense, no layer_types: attention at attn_layer_indices
                 [0, 3] of 4 layers

The reference directory gives config.json (then changed as above) and the
tokenizer files; the weights are new, every value from a fixed formula,
written in safetensors' layout (header padded to 8, data in key order).
Standard library only. The expected outputs (hybrid_variants.json) are
llama.cpp's converter at ecbcb7ea, unmodified, on these directories."""
import json, os, shutil, struct, sys


def values(name, n):
    """n float32 values from the tensor's name (deterministic, no RNG)."""
    seed = sum((i + 1) * ord(ch) for i, ch in enumerate(name)) & 0xFFFFFFFF
    out, x = [], seed or 1
    for _ in range(n):
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF
        out.append(((x >> 8) % 20001 - 10000) / 10000.0 * 0.08)
    if name.endswith("A_log"):  # A = -exp(A_log) within a sane range
        out = [0.5 + abs(v) * 10 for v in out]
    if name.endswith("norm.weight") or name.endswith("layernorm.weight"):
        out = [1.0 + v for v in out]
    return out


def write_st(path, tensors):
    hdr, off, blobs = {"__metadata__": {"format": "pt"}}, 0, []
    for k in sorted(tensors):
        shape = tensors[k]
        n = 1
        for d in shape:
            n *= d
        b = struct.pack("<%df" % n, *values(k, n))
        hdr[k] = {"dtype": "F32", "shape": shape, "data_offsets": [off, off + len(b)]}
        off += len(b)
        blobs.append(b)
    h = json.dumps(hdr, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def mamba2(t, L, h, d_inner, groups, d_state, heads, norm):
    p = "model.layers.%d.mamba." % L
    conv = d_inner + 2 * groups * d_state
    t[p + "A_log"] = [heads]
    t[p + "D"] = [heads]
    t[p + "dt_bias"] = [heads]
    t[p + "conv1d.weight"] = [conv, 1, 4]
    t[p + "conv1d.bias"] = [conv]
    t[p + "in_proj.weight"] = [2 * d_inner + 2 * groups * d_state + heads, h]
    t[p + "out_proj.weight"] = [h, d_inner]
    if norm:
        t[p + "norm.weight"] = [d_inner]


def attention(t, L, h, heads, kv, hd):
    p = "model.layers.%d.self_attn." % L
    t[p + "q_proj.weight"] = [heads * hd, h]
    t[p + "k_proj.weight"] = [kv * hd, h]
    t[p + "v_proj.weight"] = [kv * hd, h]
    t[p + "o_proj.weight"] = [h, heads * hd]


def granite(cfg, kinds=("mamba", "attention", "mamba", "mamba", "attention"), experts=True, pattern=None):
    """pattern: None (layer_types), or the keys that replace it"""
    cfg.update({"num_hidden_layers": len(kinds), "layer_types": list(kinds), "mamba_n_groups": 2,
                "num_key_value_heads": 1, "tie_word_embeddings": False, "torch_dtype": "float32"})
    if pattern:
        del cfg["layer_types"]
        cfg.update(pattern)
    if not experts:
        cfg.update({"num_local_experts": 0, "num_experts_per_tok": 0})
    h, v, E, ff, sff = cfg["hidden_size"], cfg["vocab_size"], cfg["num_local_experts"], cfg["intermediate_size"], \
        cfg["shared_intermediate_size"]
    t = {"model.embed_tokens.weight": [v, h], "model.norm.weight": [h], "lm_head.weight": [v, h]}
    for L, k in enumerate(kinds):
        p = "model.layers.%d." % L
        t[p + "input_layernorm.weight"] = [h]
        t[p + "post_attention_layernorm.weight"] = [h]
        if experts:
            t[p + "block_sparse_moe.input_linear.weight"] = [E, 2 * ff, h]
            t[p + "block_sparse_moe.output_linear.weight"] = [E, h, ff]
            t[p + "block_sparse_moe.router.layer.weight"] = [E, h]
        t[p + "shared_mlp.input_linear.weight"] = [2 * sff, h]
        t[p + "shared_mlp.output_linear.weight"] = [h, sff]
        if k == "mamba":
            mamba2(t, L, h, cfg["mamba_expand"] * h, 2, cfg["mamba_d_state"], cfg["mamba_n_heads"], True)
        else:
            attention(t, L, h, cfg["num_attention_heads"], 1, h // cfg["num_attention_heads"])
    return t


def falcon_h1(cfg):
    cfg.update({"num_hidden_layers": 3, "mamba_n_groups": 2, "mamba_rms_norm": True, "tie_word_embeddings": True,
                "torch_dtype": "float32"})
    h, v, ff = cfg["hidden_size"], cfg["vocab_size"], cfg["intermediate_size"]
    t = {"model.embed_tokens.weight": [v, h], "model.final_layernorm.weight": [h]}
    for L in range(3):
        p = "model.layers.%d." % L
        t[p + "input_layernorm.weight"] = [h]
        t[p + "pre_ff_layernorm.weight"] = [h]
        t[p + "feed_forward.gate_proj.weight"] = [ff, h]
        t[p + "feed_forward.up_proj.weight"] = [ff, h]
        t[p + "feed_forward.down_proj.weight"] = [h, ff]
        mamba2(t, L, h, cfg["mamba_d_ssm"], 2, cfg["mamba_d_state"], cfg["mamba_n_heads"], True)
        attention(t, L, h, cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"])
    return t


M, A = "mamba", "attention"
VARIANTS = {
    "granite4-h-b": ("granite4-h-tiny", granite),
    "falcon-h1-b": ("falcon-h1-tiny", falcon_h1),
    "granite4-h-dense-b": ("granite4-h-tiny", lambda cfg: granite(cfg, (M, A, M, A), experts=False)),
    "granite4-h-period-b": ("granite4-h-tiny", lambda cfg: granite(
        cfg, (M, A, M, M, A, M), pattern={"attn_layer_period": 3, "attn_layer_offset": 1})),
    "granite4-h-indices-b": ("granite4-h-tiny", lambda cfg: granite(
        cfg, (A, M, M, A), experts=False, pattern={"attn_layer_indices": [0, 3]})),
}


def main():
    src_root, out_root = sys.argv[1], sys.argv[2]
    for name, (ref, make) in sorted(VARIANTS.items()):
        src, dst = os.path.join(src_root, ref), os.path.join(out_root, name)
        shutil.rmtree(dst, ignore_errors=True)
        os.makedirs(dst)
        for f in sorted(os.listdir(src)):
            if f != "model.safetensors" and f != "config.json":
                shutil.copyfile(os.path.join(src, f), os.path.join(dst, f))
        with open(os.path.join(src, "config.json")) as f:
            cfg = json.load(f)
        tensors = make(cfg)
        with open(os.path.join(dst, "config.json"), "w") as f:
            json.dump(cfg, f, indent=2, sort_keys=True)
            f.write("\n")
        write_st(os.path.join(dst, "model.safetensors"), tensors)
        print(name)


if __name__ == "__main__":
    main()
