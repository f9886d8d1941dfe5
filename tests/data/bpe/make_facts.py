#!/usr/bin/env python3
"""Writes tests/data/bpe/facts.json, the facts tests/test_bpe_encode.c checks
mfmt's BPE encoder and chkhsh table against. Run by hand where llama.cpp's
sources are (never in CI):

    /usr/bin/python3 tests/data/bpe/make_facts.py LLAMA_CPP_SOURCES ../shared/real-gguf

From llama.cpp (commit c392e5094deaf2d1a7c18683214f007fad3fe42b):
  - convert_hf_to_gguf.py, Model.get_vocab_base_pre: the check text (its
    UTF-8 length and sha256) and the chkhsh -> name rows, in order;
  - models/ggml-vocab-NAME.gguf.inp / .out: texts and the ids Hugging Face's
    tokenizer.encode(text, add_special_tokens=False) gave (written by
    convert_hf_to_gguf_update.py), for every NAME whose vocab GGUF is in
    ../shared/real-gguf with tokenizer.ggml.model "gpt2".
"""
import ast
import hashlib
import json
import os
import re
import sys
import unicodedata

SEP = "\n__ggml_vocab_test__\n"
BPE_VOCABS = ["gpt-2", "falcon", "mpt"]  # the gpt2-model GGUFs of ../shared/real-gguf


def main():
    llama, real = sys.argv[1], sys.argv[2]
    src = open(os.path.join(llama, "convert_hf_to_gguf.py"), encoding="utf-8").read()
    chk = ast.literal_eval(re.search(r"\n        chktxt = ('.*')\n", src).group(1)).encode("utf-8")
    rows = []
    for cond, name in re.findall(r'if (chkhsh == "[0-9a-f]{64}"(?: or chkhsh == "[0-9a-f]{64}")*):\n'
                                 r'\s*# ref: \S+\n\s*res = "([^"]+)"', src):
        rows += [[h, name] for h in re.findall(r"[0-9a-f]{64}", cond)]
    texts = None
    vocabs = {}
    for name in BPE_VOCABS:
        if not os.path.exists(os.path.join(real, f"ggml-vocab-{name}.gguf")):
            continue
        base = os.path.join(llama, "models", f"ggml-vocab-{name}.gguf")
        t = open(base + ".inp", encoding="utf-8", newline="").read().split(SEP)[:-1]
        out = open(base + ".out", encoding="utf-8").read().split("\n")[:-1]
        assert len(t) == len(out), name
        assert texts is None or texts == t, "the vocab tests share one text list"
        texts = t
        vocabs[name] = [[int(x) for x in line.split()] for line in out]
    facts = {
        "source": "llama.cpp c392e5094deaf2d1a7c18683214f007fad3fe42b: convert_hf_to_gguf.py "
                  "get_vocab_base_pre; models/ggml-vocab-*.gguf.inp/.out (HF tokenizers' ids)",
        "chktxt_bytes": len(chk),
        "chktxt_sha256": hashlib.sha256(chk).hexdigest(),
        # mfmt takes the NFC normalizer as the identity: exact on these
        "chktxt_is_nfc": unicodedata.normalize("NFC", chk.decode()) == chk.decode(),
        "texts_are_nfc": all(unicodedata.normalize("NFC", t) == t for t in texts or []),
        "chkhsh_rows": rows,
        "texts": texts,
        "ids": vocabs,
    }
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "facts.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(facts, f, ensure_ascii=True, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
