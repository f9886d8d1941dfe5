#!/usr/bin/python3
"""Tiny Hugging Face directories of families the built-in tables lack, for
references made by llama.cpp's unmodified converter (c392e50) through
../shared/tools/convref (see README.md). Deterministic: numpy's seeded
generator, float16 safetensors written by hand (the format: u64 header
length, JSON header, raw data; names sorted as safetensors writes them).

    /usr/bin/python3 make_dirs.py [--all | --large] SHARED_DIR OUT_DIR

SHARED_DIR is ../shared (the SentencePiece model of corpus/hf-dir/llama-tiny
is copied). Nothing here runs model code."""
import json
import os
import shutil
import struct
import sys

import numpy as np


def write_safetensors(path, tensors):
    header, blobs, off = {}, [], 0
    for name in sorted(tensors):
        a = np.ascontiguousarray(tensors[name].astype(np.float16))
        b = a.tobytes()
        header[name] = {"dtype": "F16", "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    header["__metadata__"] = {"format": "pt"}
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def spm_files(shared, out):
    src = os.path.join(shared, "corpus", "hf-dir", "llama-tiny")
    for name in ("tokenizer.model", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copyfile(os.path.join(src, name), os.path.join(out, name))


def grok(shared, out, seed=25):
    """Grok-1 (GrokForCausalLM): experts per block stacked (linear, linear_1,
    linear_v), four RMS norms per block, SentencePiece."""
    rng = np.random.default_rng(seed)
    h, ff, heads, kv, layers, experts, vocab = 32, 48, 4, 2, 2, 4, 320
    hd = h // heads
    cfg = {"architectures": ["GrokForCausalLM"], "model_type": "grok-1", "vocab_size": vocab,
           "hidden_size": h, "intermediate_size": ff, "num_hidden_layers": layers,
           "num_attention_heads": heads, "num_key_value_heads": kv, "max_position_embeddings": 256,
           "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "num_experts_per_tok": 2,
           "num_local_experts": experts, "bos_token_id": 1, "eos_token_id": 2, "torch_dtype": "float16"}
    t = {"transformer.in_out_embed.weight": rng.standard_normal((vocab, h)),
         "transformer.rms_norm.weight": 1 + 0.1 * rng.standard_normal(h),
         "lm_head.weight": rng.standard_normal((vocab, h))}
    for b in range(layers):
        p = f"transformer.decoder_layer.{b}."
        t[p + "multi_head_attention.query.weight"] = rng.standard_normal((heads * hd, h))
        t[p + "multi_head_attention.key.weight"] = rng.standard_normal((kv * hd, h))
        t[p + "multi_head_attention.value.weight"] = rng.standard_normal((kv * hd, h))
        t[p + "multi_head_attention.linear.weight"] = rng.standard_normal((h, heads * hd))
        for n in ("rms_norm", "rms_norm_1", "rms_norm_2", "rms_norm_3"):
            t[p + n + ".weight"] = 1 + 0.1 * rng.standard_normal(h)
        t[p + "router.weight"] = rng.standard_normal((experts, h))
        for x in range(experts):
            t[p + f"moe.{x}.linear.weight"] = rng.standard_normal((ff, h))
            t[p + f"moe.{x}.linear_v.weight"] = rng.standard_normal((ff, h))
            t[p + f"moe.{x}.linear_1.weight"] = rng.standard_normal((h, ff))
    return cfg, t, spm_files


def arctic_files(shared, out):
    """llama-tiny's SentencePiece model; tokenizer_config.json redefines the
    last two pieces as special tokens (snowflake-arctic-instruct redefines
    31998/31999 so) and names one id past the vocabulary (ignored)."""
    spm_files(shared, out)
    path = os.path.join(out, "tokenizer_config.json")
    with open(path) as f:
        tc = json.load(f)
    added = tc["added_tokens_decoder"]
    for tid, content in (("318", "<|im_start|>"), ("319", "<|im_end|>"), ("320", "<|past_end|>")):
        added[tid] = {"content": content, "lstrip": False, "normalized": False, "rstrip": False,
                      "single_word": False, "special": True}
    added["317"] = {"content": "<|user|>", "lstrip": False, "normalized": False, "rstrip": False,
                    "single_word": False, "special": False}
    tc["eos_token"] = "<|im_end|>"
    with open(path, "w") as f:
        json.dump(tc, f, indent=2)
        f.write("\n")


def arctic(shared, out, seed=26):
    """Snowflake Arctic (ArcticForCausalLM): Llama attention (q/k weights
    permuted), a dense residual MLP beside stacked experts, its own
    SentencePiece step."""
    rng = np.random.default_rng(seed)
    h, ff, heads, kv, layers, experts, vocab = 32, 48, 4, 2, 2, 4, 320
    hd = h // heads
    cfg = {"architectures": ["ArcticForCausalLM"], "model_type": "arctic", "vocab_size": vocab,
           "hidden_size": h, "intermediate_size": ff, "num_hidden_layers": layers,
           "num_attention_heads": heads, "num_key_value_heads": kv, "max_position_embeddings": 256,
           "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "num_experts_per_tok": 2,
           "num_local_experts": experts, "moe_layer_frequency": 1, "parallel_attn_mlp_res": True,
           "bos_token_id": 1, "eos_token_id": 319, "torch_dtype": "float16"}
    t = {"model.embed_tokens.weight": rng.standard_normal((vocab, h)),
         "model.norm.weight": 1 + 0.1 * rng.standard_normal(h),
         "lm_head.weight": rng.standard_normal((vocab, h))}
    for b in range(layers):
        p = f"model.layers.{b}."
        t[p + "self_attn.q_proj.weight"] = rng.standard_normal((heads * hd, h))
        t[p + "self_attn.k_proj.weight"] = rng.standard_normal((kv * hd, h))
        t[p + "self_attn.v_proj.weight"] = rng.standard_normal((kv * hd, h))
        t[p + "self_attn.o_proj.weight"] = rng.standard_normal((h, heads * hd))
        for n in ("input_layernorm", "post_attention_layernorm", "residual_layernorm"):
            t[p + n + ".weight"] = 1 + 0.1 * rng.standard_normal(h)
        t[p + "residual_mlp.w1.weight"] = rng.standard_normal((ff, h))
        t[p + "residual_mlp.w3.weight"] = rng.standard_normal((ff, h))
        t[p + "residual_mlp.w2.weight"] = rng.standard_normal((h, ff))
        t[p + "block_sparse_moe.gate.weight"] = rng.standard_normal((experts, h))
        for x in range(experts):
            t[p + f"block_sparse_moe.experts.{x}.w1.weight"] = rng.standard_normal((ff, h))
            t[p + f"block_sparse_moe.experts.{x}.w3.weight"] = rng.standard_normal((ff, h))
            t[p + f"block_sparse_moe.experts.{x}.w2.weight"] = rng.standard_normal((h, ff))
    return cfg, t, arctic_files


def bpe_files(shared, out):
    src = os.path.join(shared, "corpus", "hf-dir", "llama-tiny-bpe")
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copyfile(os.path.join(src, name), os.path.join(out, name))
    with open(os.path.join(out, "convref-tokpre.txt"), "w") as f:
        f.write("chameleon\n")  # the name llama.cpp's table gives Chameleon's tokenizer


def chameleon(shared, out, seed=27):
    """Chameleon (ChameleonForConditionalGeneration): Llama's permutes, per-head
    q/k LayerNorms [heads, head_dim] whose first head is re-ordered and repeated
    (_reverse_hf_permute), the VQ image tokenizer skipped; BPE. KV heads ==
    heads, as in Chameleon-7B/30B (the converter's k-norm step needs it)."""
    rng = np.random.default_rng(seed)
    h, ff, heads, layers, vocab = 32, 48, 4, 2, 320
    hd = h // heads
    cfg = {"architectures": ["ChameleonForConditionalGeneration"], "model_type": "chameleon",
           "vocab_size": vocab, "hidden_size": h, "intermediate_size": ff, "num_hidden_layers": layers,
           "num_attention_heads": heads, "num_key_value_heads": heads, "max_position_embeddings": 256,
           "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "swin_norm": False, "bos_token_id": 0,
           "eos_token_id": 1, "torch_dtype": "float16"}
    t = {"model.embed_tokens.weight": rng.standard_normal((vocab, h)),
         "model.norm.weight": 1 + 0.1 * rng.standard_normal(h),
         "lm_head.weight": rng.standard_normal((vocab, h)),
         "model.vqmodel.encoder.conv_in.weight": rng.standard_normal((8, 3, 3, 3)),
         "model.vqmodel.quantize.embedding.weight": rng.standard_normal((16, 8))}
    for b in range(layers):
        p = f"model.layers.{b}."
        for n in ("q", "k", "v"):
            t[p + f"self_attn.{n}_proj.weight"] = rng.standard_normal((heads * hd, h))
        t[p + "self_attn.o_proj.weight"] = rng.standard_normal((h, heads * hd))
        for n in ("q_norm", "k_norm"):
            t[p + f"self_attn.{n}.weight"] = 1 + 0.1 * rng.standard_normal((heads, hd))
            t[p + f"self_attn.{n}.bias"] = 0.1 * rng.standard_normal((heads, hd))
        for n in ("input_layernorm", "post_attention_layernorm"):
            t[p + n + ".weight"] = 1 + 0.1 * rng.standard_normal(h)
        t[p + "mlp.gate_proj.weight"] = rng.standard_normal((ff, h))
        t[p + "mlp.up_proj.weight"] = rng.standard_normal((ff, h))
        t[p + "mlp.down_proj.weight"] = rng.standard_normal((h, ff))
    return cfg, t, bpe_files


def plamo(shared, out, seed=28):
    """PLaMo (PlamoForCausalLM) at the one shape its converter takes:
    shuffle_attn_q_weight / shuffle_attn_output_weight assert (5120, 5120), so
    one block of PLaMo-13B's attention (40 heads of 128, 5 KV heads) with a
    tiny MLP and vocabulary: about 125 MB, made by --large and not committed."""
    rng = np.random.default_rng(seed)
    h, ff, heads, kv, layers, vocab = 5120, 64, 40, 5, 1, 320
    hd = h // heads
    cfg = {"architectures": ["PlamoForCausalLM"], "model_type": "plamo", "vocab_size": vocab,
           "hidden_size": h, "intermediate_size": ff, "num_hidden_layers": layers,
           "num_attention_heads": heads, "num_key_value_heads": kv, "max_position_embeddings": 4096,
           "rms_norm_eps": 1e-6, "n_shared_head": 8, "bos_token_id": 1, "eos_token_id": 2,
           "torch_dtype": "float16"}
    t = {"model.embed_tokens.weight": rng.standard_normal((vocab, h), dtype=np.float32),
         "model.norm.weight": 1 + 0.1 * rng.standard_normal(h, dtype=np.float32),
         "lm_head.weight": rng.standard_normal((vocab, h), dtype=np.float32)}
    for b in range(layers):
        p = f"model.layers.layers.{b}."
        t[p + "norm.weight"] = 1 + 0.1 * rng.standard_normal(h, dtype=np.float32)
        t[p + "self_attn.q_proj.weight"] = rng.standard_normal((heads * hd, h), dtype=np.float32)
        t[p + "self_attn.k_proj.weight"] = rng.standard_normal((kv * hd, h), dtype=np.float32)
        t[p + "self_attn.v_proj.weight"] = rng.standard_normal((kv * hd, h), dtype=np.float32)
        t[p + "self_attn.o_proj.weight"] = rng.standard_normal((h, heads * hd), dtype=np.float32)
        t[p + "mlp.gate_proj.weight"] = rng.standard_normal((ff, h), dtype=np.float32)
        t[p + "mlp.up_proj.weight"] = rng.standard_normal((ff, h), dtype=np.float32)
        t[p + "mlp.down_proj.weight"] = rng.standard_normal((h, ff), dtype=np.float32)
    return cfg, t, spm_files


FAMILIES = {"grok-tiny": grok, "chameleon-tiny": chameleon}
# Made with --large only (too large to commit): the reference's SHA-256 is in README.md.
LARGE = {"plamo-13b-shape": plamo}
# Made with --all, not committed: llama.cpp's converter of c392e50 stops on
# them here (README.md says where and why).
NOT_CONVERTIBLE = {"arctic-tiny": arctic}


def main():
    every, large = "--all" in sys.argv, "--large" in sys.argv
    args = [a for a in sys.argv[1:] if a not in ("--all", "--large")]
    shared, out_root = args[0], args[1]
    chosen = LARGE if large else {**FAMILIES, **(NOT_CONVERTIBLE if every else {})}
    for name, make in chosen.items():
        out = os.path.join(out_root, name)
        os.makedirs(out, exist_ok=True)
        cfg, tensors, files = make(shared, out)
        with open(os.path.join(out, "config.json"), "w") as f:
            json.dump(cfg, f, indent=2)
            f.write("\n")
        write_safetensors(os.path.join(out, "model.safetensors"), tensors)
        files(shared, out)


if __name__ == "__main__":
    main()
