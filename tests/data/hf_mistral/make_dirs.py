#!/usr/bin/python3
"""Tiny seeded Mistral-format directories (params.json + consolidated.safetensors
+ tekken.json or tokenizer.model.v3) for mfmt's Mistral-format conversion tests.

    /usr/bin/python3 make_dirs.py OUTDIR

torch 1.13 (Debian) for the seeded weights; safetensors written by hand
(8-byte header length, JSON header, data), names in the order a real
consolidated.safetensors lists them (sorted, as safetensors' writer does)."""
import base64, json, os, shutil, struct, sys
from collections import Counter
import torch

TEXT = ("The quick brown fox jumps over the lazy dog. Mistral and Ministral models "
        "ship params.json with consolidated safetensors; the tokenizer is tekken. "
        "Hello world, hello there, the model speaks French: bonjour le monde, "
        "merci beaucoup. 12345 67890 ") * 3

def train_bytes_bpe(text, n_merges):
    """byte-level BPE on one string: each new token is two existing ones joined"""
    seq = [bytes([b]) for b in text.encode()]
    vocab = [bytes([i]) for i in range(256)]
    have = set(vocab)
    while len(vocab) < 256 + n_merges:
        pairs = Counter(zip(seq, seq[1:]))
        best = None
        for (a, b), n in pairs.most_common():
            if a + b not in have:
                best = (a, b); break
        if best is None:
            break
        a, b = best
        vocab.append(a + b); have.add(a + b)
        out, i = [], 0
        while i < len(seq):
            if i + 1 < len(seq) and seq[i] == a and seq[i + 1] == b:
                out.append(a + b); i += 2
            else:
                out.append(seq[i]); i += 1
        seq = out
    return vocab

SPECIALS = ["<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]",
            "[/AVAILABLE_TOOLS]", "[TOOL_RESULTS]", "[/TOOL_RESULTS]", "[TOOL_CALLS]",
            "[IMG]", "<pad>", "[IMG_BREAK]", "[IMG_END]", "[PREFIX]", "[MIDDLE]",
            "[SUFFIX]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]", "[TOOL_CONTENT]"]

def tekken_json(n_merges, n_special, cut, version, with_specials):
    vocab = train_bytes_bpe(TEXT, n_merges)
    entries = []
    for i, b in enumerate(vocab):
        try:
            s = b.decode("utf-8")
        except UnicodeDecodeError:
            s = None
        entries.append({"rank": i, "token_bytes": base64.b64encode(b).decode(), "token_str": s})
    inner = len(vocab) - cut
    d = {"config": {"pattern": r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+",
                    "num_vocab_tokens": len(vocab), "default_vocab_size": inner + n_special,
                    "default_num_special_tokens": n_special, "version": version},
         "vocab": entries}
    if with_specials:
        d["special_tokens"] = [{"rank": i, "token_str": s, "is_control": True} for i, s in enumerate(SPECIALS)]
    return d, inner + n_special

def write_safetensors(path, tensors):
    header, blobs, off = {}, [], 0
    names = sorted(tensors)
    for n in names:
        t = tensors[n].contiguous()
        dt = {torch.bfloat16: "BF16", torch.float16: "F16", torch.float32: "F32"}[t.dtype]
        raw = t.view(torch.int16).numpy().tobytes() if t.dtype == torch.bfloat16 else t.numpy().tobytes()
        header[n] = {"dtype": dt, "shape": list(t.shape), "data_offsets": [off, off + len(raw)]}
        blobs.append(raw); off += len(raw)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h))); f.write(h)
        for b in blobs: f.write(b)

def weights(p, n_vocab, dtype, seed, tied, vision):
    g = torch.Generator().manual_seed(seed)
    r = lambda *s: (torch.randn(*s, generator=g) * 0.02).to(dtype)
    one = lambda n: (1.0 + 0.1 * torch.randn(n, generator=g)).to(dtype)
    dim, hd, nh, nkv, ff = p["dim"], p["head_dim"], p["n_heads"], p["n_kv_heads"], p["hidden_dim"]
    t = {"tok_embeddings.weight": r(n_vocab, dim), "norm.weight": one(dim)}
    if not tied:
        t["output.weight"] = r(n_vocab, dim)
    for l in range(p["n_layers"]):
        b = "layers.%d." % l
        t[b + "attention.wq.weight"] = r(nh * hd, dim)
        t[b + "attention.wk.weight"] = r(nkv * hd, dim)
        t[b + "attention.wv.weight"] = r(nkv * hd, dim)
        t[b + "attention.wo.weight"] = r(dim, nh * hd)
        t[b + "attention_norm.weight"] = one(dim)
        t[b + "feed_forward.w1.weight"] = r(ff, dim)
        t[b + "feed_forward.w2.weight"] = r(dim, ff)
        t[b + "feed_forward.w3.weight"] = r(ff, dim)
        t[b + "ffn_norm.weight"] = one(dim)
    if vision:  # skipped by the text conversion (MistralModel drops vision_encoder./vision_language_adapter.)
        t["vision_encoder.patch_conv.weight"] = r(16, 3, 4, 4)
        t["vision_encoder.ln_pre.weight"] = one(16)
        t["vision_language_adapter.w_in.weight"] = r(dim, 16)
    return t

def make(out, name, params, tok, seed, tied=False, vision=False, dtype=torch.bfloat16, config_json=True):
    d = os.path.join(out, name)
    shutil.rmtree(d, ignore_errors=True); os.makedirs(d)
    if tok[0] == "tekken":
        tj, nv = tekken_json(*tok[1:])
        with open(os.path.join(d, "tekken.json"), "w") as f: json.dump(tj, f)
    else:
        shutil.copy(tok[1], os.path.join(d, "tokenizer.model.v3"))
        import sentencepiece as spm
        nv = spm.SentencePieceProcessor(model_file=tok[1]).vocab_size()
    params = dict(params, vocab_size=nv)
    with open(os.path.join(d, "params.json"), "w") as f: json.dump(params, f, indent=2)
    if config_json:
        # llama.cpp ecbcb7ea's LlamaModel.__init__ reads config.json even with
        # --mistral-format (origin_hf_arch); real Mistral repos ship one beside params.json.
        with open(os.path.join(d, "config.json"), "w") as f:
            json.dump({"architectures": ["MistralForCausalLM"]}, f)
    write_safetensors(os.path.join(d, "consolidated.safetensors"), weights(params, nv, dtype, seed, tied, vision))
    return d

if __name__ == "__main__":
    out = sys.argv[1]
    base = {"dim": 64, "n_layers": 2, "head_dim": 16, "hidden_dim": 96, "n_heads": 4,
            "n_kv_heads": 2, "norm_eps": 1e-05, "rope_theta": 1000000.0}
    # Mistral-Nemo style: tekken v3 (old special list), no llama_4_scaling -> arch llama
    make(out, "mistral-tekken-tiny", dict(base, hidden_dim=256, max_position_embeddings=2048),
         ("tekken", 120, 32, 10, "v3", False), 1)
    # Ministral 3 style: tekken v7 with special_tokens, yarn + llama_4_scaling -> arch mistral3,
    # tied embeddings, a few vision tensors the text conversion skips
    m3 = dict(base, max_position_embeddings=4096, tied_embeddings=True,
              yarn={"original_max_position_embeddings": 1024, "factor": 4.0, "apply_scale": False,
                    "beta": 32.0, "alpha": 1.0},
              llama_4_scaling={"original_max_position_embeddings": 1024, "beta": 0.1},
              vision_encoder={"hidden_size": 16, "num_channels": 3, "image_size": 16, "patch_size": 4})
    make(out, "ministral3-tekken-tiny", dict(m3, hidden_dim=256), ("tekken", 150, 40, 7, "v7", True), 2, tied=True, vision=True)
    # Mistral 7B v0.3 style: SentencePiece tokenizer.model.v3, F16 weights, arch llama
    make(out, "mistral-spm-tiny", dict(base, n_kv_heads=4), ("spm", sys.argv[2]), 3, dtype=torch.float16)
