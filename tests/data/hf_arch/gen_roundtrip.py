#!/usr/bin/env python3
"""Held-out-style Hugging Face directories for the GGUF -> HF -> GGUF round
trip (tests/test_gguf_to_hf.c): what a GGUF encodes only indirectly.

    python3 gen_roundtrip.py SHARED_DIR OUT_DIR [NAME ...]

Built with gen_variants.make (fresh random weights, fixed seeds) from the
reference directories of SHARED_DIR (convert-ref-arch/dirs or corpus/hf-dir):
RoPE scaling of every kind (llama3 as Llama 3.1 / 3.2 ship it, one whose
factors leave two smoothed frequencies, one with an original context other
than llama.cpp's default, linear, yarn), Falcon with
new_decoder_architecture (ln_attn + ln_mlp, grouped KV heads), and a tied
Llama head. No expected hashes: the test converts each to GGUF, back to HF
and to GGUF again and compares the two GGUFs. Needs numpy only.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_variants  # noqa: E402

LLAMA = "corpus/hf-dir/llama-tiny"
QWEN2 = "corpus/hf-dir/qwen2-tiny"
FALCON = "convert-ref-arch/dirs/falcon-tiny"


def llama3(factor, low, high, orig):
    return {"rope_type": "llama3", "factor": factor, "low_freq_factor": low, "high_freq_factor": high,
            "original_max_position_embeddings": orig}


# name: (reference dir under SHARED_DIR, gen_variants changes)
VARIANTS = {
    "llama31-rt": (LLAMA, {"dtype": "F16", "config": {
        "rope_theta": 500000.0, "max_position_embeddings": 131072, "rope_scaling": llama3(8.0, 1.0, 4.0, 8192)}}),
    "llama32-rt": (LLAMA, {"dtype": "BF16", "config": {
        "rope_theta": 500000.0, "max_position_embeddings": 131072, "rope_scaling": llama3(32.0, 1.0, 4.0, 8192)}}),
    # theta 10000 over 8 frequencies: two of them fall between the wavelengths
    "llama3-smooth-rt": (LLAMA, {"dtype": "F32", "config": {"rope_scaling": llama3(8.0, 2.0, 16.0, 8192)}}),
    # llama.cpp reads original_max_position_embeddings from the top level
    "llama3-ctx4096-rt": (LLAMA, {"dtype": "F16", "config": {
        "original_max_position_embeddings": 4096, "rope_scaling": llama3(4.0, 1.0, 4.0, 4096)}}),
    "llama-linear-rt": (LLAMA, {"dtype": "F16", "config": {"rope_scaling": {"type": "linear", "factor": 2.0}}}),
    "llama-tied-rt": (LLAMA, {"dtype": "F16", "config": {"tie_word_embeddings": True}, "drop": [r"^lm_head\."]}),
    "qwen2-yarn-rt": (QWEN2, {"dtype": "BF16", "config": {
        "rope_scaling": {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}}}),
    # Falcon-40B's layout: two layer norms per block, KV heads in groups
    "falcon-newarch-rt": (FALCON, {"dtype": "F16", "config": {
        "new_decoder_architecture": True, "num_kv_heads": 2, "multi_query": False},
        "drop": [r"input_layernorm\."],
        "per_layer": [("transformer.h.{L}.ln_attn.weight", [64], 1), ("transformer.h.{L}.ln_attn.bias", [64], 1),
                      ("transformer.h.{L}.ln_mlp.weight", [64], 1), ("transformer.h.{L}.ln_mlp.bias", [64], 1)],
        "resize": [(r"query_key_value\.weight", [128, 64])]}),
}


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    shared, out = sys.argv[1], sys.argv[2]
    for name in sys.argv[3:] or sorted(VARIANTS):
        ref, changes = VARIANTS[name]
        gen_variants.VARIANTS[name] = (os.path.basename(ref), changes)
        gen_variants.make(os.path.join(shared, os.path.dirname(ref)), out, name)
        print(name)


if __name__ == "__main__":
    main()
