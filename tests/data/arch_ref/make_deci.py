#!/usr/bin/python3
"""Tiny DeciLM directories (DeciLMForCausalLM, llama.cpp's DeciModel at
c392e50) and a Llama directory shipped with a Llama-2-style tokenizer.json but
no tokenizer.model (the converter's LlamaHfVocab path), for references made by
llama.cpp's unmodified converter (see README.md). Deterministic: numpy's
seeded generator, safetensors written by hand (make_dirs.py's writer).

    /usr/bin/python3 make_deci.py [--large] SHARED_DIR OUT_DIR
    /usr/bin/python3 make_deci.py --hashes REF_DIR deci.json DIRS...

The Llama-2-style tokenizer.json is built from corpus/hf-dir/llama-tiny's
SentencePiece model the way transformers' LlamaConverter lays one out (BPE
over the pieces with byte_fallback, merges of pieces whose concatenation is a
piece, Prepend/Replace normalizer, Replace/ByteFallback/Fuse/Strip decoder).
--large makes deci51b-bpe (Llama-3_1-Nemotron-51B's vocab_size 128256: the
BPE path, 33 MB; not committed). Nothing here runs model code."""
import json
import os
import shutil
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_dirs import write_safetensors  # noqa: E402

H, HEADS = 32, 4
HD = H // HEADS


def spm_pieces(shared):
    import sentencepiece as spm
    p = spm.SentencePieceProcessor(model_file=os.path.join(shared, "corpus", "hf-dir", "llama-tiny",
                                                           "tokenizer.model"))
    return [(p.id_to_piece(i), p.get_score(i)) for i in range(p.get_piece_size())]


def added(i, content, special=True):
    return {"id": i, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
            "normalized": False, "special": special}


def llama_hf_files(shared, out, extra=()):
    """tokenizer.json (+ tokenizer_config.json, special_tokens_map.json);
    extra: (id, content, special) added tokens past the pieces."""
    pieces = spm_pieces(shared)
    vocab = {p: i for i, (p, _) in enumerate(pieces)}
    merges = []
    for p, _ in pieces:
        if p.startswith("<") or len(p) < 2:
            continue
        for k in range(1, len(p)):
            a, b = p[:k], p[k:]
            if a in vocab and b in vocab:
                merges.append((vocab[p], vocab[a], vocab[b], a + " " + b))
    merges.sort()
    tj = {"version": "1.0", "truncation": None, "padding": None,
          "added_tokens": [added(0, "<unk>"), added(1, "<s>"), added(2, "</s>")] +
                          [added(i, c, s) for i, c, s in extra],
          "normalizer": {"type": "Sequence", "normalizers": [
              {"type": "Prepend", "prepend": "\u2581"},
              {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]},
          "pre_tokenizer": None,
          "post_processor": {"type": "TemplateProcessing",
                             "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                                        {"Sequence": {"id": "A", "type_id": 0}}],
                             "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                                      {"Sequence": {"id": "A", "type_id": 0}},
                                      {"SpecialToken": {"id": "<s>", "type_id": 1}},
                                      {"Sequence": {"id": "B", "type_id": 1}}],
                             "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},
          "decoder": {"type": "Sequence", "decoders": [
              {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
              {"type": "ByteFallback"}, {"type": "Fuse"},
              {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
          "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": None,
                    "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": True,
                    "vocab": vocab, "merges": [m[3] for m in merges]}}
    with open(os.path.join(out, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tj, f, indent=2, ensure_ascii=False)
        f.write("\n")
    src = os.path.join(shared, "corpus", "hf-dir", "llama-tiny")
    with open(os.path.join(src, "tokenizer_config.json")) as f:
        tc = json.load(f)
    tc["tokenizer_class"] = "LlamaTokenizerFast"
    specials = []
    for i, c, s in extra:
        tc["added_tokens_decoder"][str(i)] = {k: v for k, v in added(i, c, s).items() if k != "id"}
        if s:
            specials.append(c)
    if specials:
        tc["additional_special_tokens"] = specials
    with open(os.path.join(out, "tokenizer_config.json"), "w") as f:
        json.dump(tc, f, indent=2)
        f.write("\n")
    shutil.copyfile(os.path.join(src, "special_tokens_map.json"), os.path.join(out, "special_tokens_map.json"))
    return len(pieces) + len(extra)


def attn(rng, t, p, heads, kv, bias=False):
    for n, rows in (("q", heads * HD), ("k", kv * HD), ("v", kv * HD)):
        t[p + f"self_attn.{n}_proj.weight"] = rng.standard_normal((rows, H))
        if bias:
            t[p + f"self_attn.{n}_proj.bias"] = 0.1 * rng.standard_normal(rows)
    t[p + "self_attn.o_proj.weight"] = rng.standard_normal((H, heads * HD))


def mlp(rng, t, p, ff):
    t[p + "mlp.gate_proj.weight"] = rng.standard_normal((ff, H))
    t[p + "mlp.up_proj.weight"] = rng.standard_normal((ff, H))
    t[p + "mlp.down_proj.weight"] = rng.standard_normal((H, ff))


def norm(rng, t, name):
    t[name] = 1 + 0.1 * rng.standard_normal(H)


def ends(rng, t, vocab, head=True):
    t["model.embed_tokens.weight"] = rng.standard_normal((vocab, H))
    norm(rng, t, "model.norm.weight")
    if head:
        t["lm_head.weight"] = rng.standard_normal((vocab, H))


def deci7b(shared, out, seed, kv_per_layer, rope_scaling, extra=(), bias=False):
    """DeciLM-7B: num_key_value_heads_per_layer (no num_key_value_heads),
    vocabulary through LlamaHfVocab (vocab_size != 128256)."""
    vocab = llama_hf_files(shared, out, extra)
    rng = np.random.default_rng(seed)
    ff = 128
    cfg = {"architectures": ["DeciLMForCausalLM"], "model_type": "deci", "vocab_size": vocab,
           "hidden_size": H, "intermediate_size": ff, "num_hidden_layers": len(kv_per_layer),
           "num_attention_heads": HEADS, "num_key_value_heads_per_layer": kv_per_layer,
           "max_position_embeddings": 256, "rms_norm_eps": 1e-6, "rope_theta": 10000.0,
           "rope_scaling": rope_scaling, "hidden_act": "silu", "bos_token_id": 1, "eos_token_id": 2,
           "tie_word_embeddings": False, "torch_dtype": "float16"}
    t = {}
    ends(rng, t, vocab)
    for b, kv in enumerate(kv_per_layer):
        p = f"model.layers.{b}."
        norm(rng, t, p + "input_layernorm.weight")
        norm(rng, t, p + "post_attention_layernorm.weight")
        attn(rng, t, p, HEADS, kv, bias)
        mlp(rng, t, p, ff)
    return cfg, t


def ffn_dim(mult):
    n = int(2 * mult * H / 3)
    return n if n % 256 == 0 else n + 256 - n % 256


def deci51b(shared, out, seed, blocks, vocab_size=None, rope_scaling=None, rope_theta=10000.0, head=True):
    """Llama-3_1-Nemotron-51B: block_configs, each (kind, n_heads_in_group,
    ffn_mult), kind "attn" / "linear" (replace_with_linear) / "noop"."""
    if vocab_size is None:
        vocab = llama_hf_files(shared, out)
    else:
        src = os.path.join(shared, "corpus", "hf-dir", "llama-tiny-bpe")
        for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
            shutil.copyfile(os.path.join(src, name), os.path.join(out, name))
        with open(os.path.join(out, "convref-tokpre.txt"), "w") as f:
            f.write("llama-bpe\n")  # Llama-3.1's tokenizer, which Nemotron-51B ships
        vocab = vocab_size
    rng = np.random.default_rng(seed)
    cfgs = []
    for kind, group, mult in blocks:
        cfgs.append({"attention": {"n_heads_in_group": group, "no_op": kind == "noop",
                                   "replace_with_linear": kind == "linear", "sparsify": None},
                     "ffn": {"ffn_mult": mult, "no_op": False, "replace_with_linear": False, "sparsify": None}})
    cfg = {"architectures": ["DeciLMForCausalLM"], "model_type": "nemotron-nas", "vocab_size": vocab,
           "hidden_size": H, "num_hidden_layers": len(blocks), "num_attention_heads": HEADS,
           "block_configs": cfgs, "max_position_embeddings": 256, "rms_norm_eps": 1e-5,
           "rope_scaling": rope_scaling, "hidden_act": "silu", "bos_token_id": 1, "eos_token_id": 2,
           "tie_word_embeddings": not head, "torch_dtype": "float16"}
    if rope_theta is not None:
        cfg["rope_theta"] = rope_theta
    t = {}
    ends(rng, t, vocab, head)
    for b, (kind, group, mult) in enumerate(blocks):
        p = f"model.layers.{b}."
        if kind == "attn":
            norm(rng, t, p + "input_layernorm.weight")
            attn(rng, t, p, HEADS, HEADS // group)
        elif kind == "linear":
            norm(rng, t, p + "input_layernorm.weight")
            t[p + "self_attn.linear_attn.weight"] = rng.standard_normal((H, H))
        norm(rng, t, p + "post_attention_layernorm.weight")
        mlp(rng, t, p, ffn_dim(mult))
    return cfg, t


def llama_hf(shared, out, seed, extra=()):
    """LlamaForCausalLM with tokenizer.json only: LlamaModel.set_vocab's
    _set_vocab_llama_hf (no tokenizer.model)."""
    vocab = llama_hf_files(shared, out, extra)
    rng = np.random.default_rng(seed)
    ff, kv, layers = 128, 2, 2
    cfg = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": vocab,
           "hidden_size": H, "intermediate_size": ff, "num_hidden_layers": layers,
           "num_attention_heads": HEADS, "num_key_value_heads": kv, "max_position_embeddings": 256,
           "rms_norm_eps": 1e-6, "rope_theta": 10000.0, "bos_token_id": 1, "eos_token_id": 2,
           "tie_word_embeddings": False, "torch_dtype": "float16"}
    t = {}
    ends(rng, t, vocab)
    for b in range(layers):
        p = f"model.layers.{b}."
        norm(rng, t, p + "input_layernorm.weight")
        norm(rng, t, p + "post_attention_layernorm.weight")
        attn(rng, t, p, HEADS, kv)
        mlp(rng, t, p, ff)
    return cfg, t


LLAMA3 = {"factor": 8.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
          "original_max_position_embeddings": 8192, "rope_type": "llama3"}
EXTRA = ((320, "<|im_start|>", True), (321, "<|im_end|>", True), (322, "<tool>", False))

FAMILIES = {
    # references (README.md)
    "deci7b-tiny": lambda s, o: deci7b(s, o, 41, [2, 1, 4], {"type": "dynamic", "factor": 2.0}),
    "deci51b-tiny": lambda s, o: deci51b(s, o, 42, [("attn", 2, 1.3), ("linear", None, 13.0),
                                                    ("noop", None, 2.0), ("attn", 4, 16.5)],
                                         rope_scaling=LLAMA3, rope_theta=500000.0),
    "llama-hf-tiny": lambda s, o: llama_hf(s, o, 43),
    # held out: other layer patterns, biases, added tokens, linear scaling, no head
    # (block 0 has attention: llama.cpp c392e50 takes the head size from layer 0's
    # head count, so a model whose first block is a no-op does not load)
    "deci7b-b": lambda s, o: deci7b(s, o, 44, [4, 2], {"type": "linear", "factor": 4.0}, EXTRA, bias=True),
    "deci51b-b": lambda s, o: deci51b(s, o, 45, [("attn", 1, 12.5), ("noop", None, 1.0), ("linear", None, 1.5)],
                                      rope_theta=None, head=False),
    "llama-hf-b": lambda s, o: llama_hf(s, o, 46, EXTRA),
}
LARGE = {
    "deci51b-bpe": lambda s, o: deci51b(s, o, 47, [("attn", 2, 1.3), ("linear", None, 13.0)], vocab_size=128256,
                                        rope_scaling=LLAMA3, rope_theta=500000.0),
}


def hashes(ref_dir, dirs, out):
    """deci.json: the SHA-256 and size of every reference GGUF in ref_dir
    (NAME-TYPE.gguf) and of each directory's model.safetensors (dirs: the
    parents of the directories)."""
    import glob
    import hashlib
    res = {"llama_cpp_commit": "c392e5094deaf2d1a7c18683214f007fad3fe42b", "outputs": {}, "sources": {}}
    for f in sorted(glob.glob(os.path.join(ref_dir, "*.gguf"))):
        name = os.path.basename(f)[:-5]
        d, t = name.rsplit("-", 1)
        with open(f, "rb") as fh:
            b = fh.read()
        res["outputs"][name] = {"dir": d, "outtype": t, "bytes": len(b), "sha256": hashlib.sha256(b).hexdigest()}
    for root in dirs:
        for f in sorted(glob.glob(os.path.join(root, "*", "model.safetensors"))):
            with open(f, "rb") as fh:
                res["sources"][os.path.basename(os.path.dirname(f))] = hashlib.sha256(fh.read()).hexdigest()
    with open(out, "w") as fh:
        json.dump(res, fh, indent=1, sort_keys=True)


def main():
    if sys.argv[1:2] == ["--hashes"]:  # --hashes REF_DIR OUT.json DIRS...
        return hashes(sys.argv[2], sys.argv[4:], sys.argv[3])
    large = "--large" in sys.argv
    args = [a for a in sys.argv[1:] if a != "--large"]
    shared, out_root = args[0], args[1]
    for name, make in (LARGE if large else FAMILIES).items():
        out = os.path.join(out_root, name)
        os.makedirs(out, exist_ok=True)
        cfg, tensors = make(shared, out)
        with open(os.path.join(out, "config.json"), "w") as f:
            json.dump(cfg, f, indent=2)
            f.write("\n")
        write_safetensors(os.path.join(out, "model.safetensors"), tensors)


if __name__ == "__main__":
    main()
