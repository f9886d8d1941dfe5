#!/usr/bin/env python3
"""Writes a vocabulary-only GGUF v3 (no tensors) with N_TOKENS tokens, their
types and scores, and N_TOKENS - 2400 merges, like llama.cpp's
models/ggml-vocab-*.gguf but of any size, for the `inspect --json` benchmark:

    gen_vocab.py OUT.gguf [N_TOKENS]   (default 102400, a DeepSeek-sized vocab)

Tokens are distinct pseudo-random strings (fixed seed) with the GPT-2 byte
symbols, quotes, backslashes and tabs that JSON must escape."""
import random
import struct
import sys

U32, I32, F32, STR, ARR = 4, 5, 6, 8, 9


def gstr(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def kv(key, vtype, payload):
    return gstr(key) + struct.pack("<I", vtype) + payload


def arr(elem, items):
    head = struct.pack("<IQ", elem, len(items))
    if elem == STR:
        return head + b"".join(gstr(s) for s in items)
    fmt = {I32: "i", F32: "f"}[elem]
    return head + struct.pack("<%d%s" % (len(items), fmt), *items)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: gen_vocab.py OUT.gguf [N_TOKENS]")
    n = int(sys.argv[2]) if len(sys.argv) == 3 else 102400
    rnd = random.Random(7)
    alpha = 'abcdefghijklmnopqrstuvwxyz\u0120\u010a0123456789"\\\t'
    toks, seen = [], set()
    while len(toks) < n:
        t = "".join(rnd.choice(alpha) for _ in range(rnd.randint(1, 10)))
        if t not in seen:
            seen.add(t)
            toks.append(t)
    kvs = [
        kv("general.architecture", STR, gstr("llama")),
        kv("llama.block_count", U32, struct.pack("<I", 1)),
        kv("tokenizer.ggml.model", STR, gstr("gpt2")),
        kv("tokenizer.ggml.pre", STR, gstr("default")),
        kv("tokenizer.ggml.tokens", ARR, arr(STR, toks)),
        kv("tokenizer.ggml.token_type", ARR, arr(I32, [1] * n)),
        kv("tokenizer.ggml.scores", ARR, arr(F32, [-float(i) / 7 for i in range(n)])),
        kv("tokenizer.ggml.merges", ARR, arr(STR, [toks[i] + " " + toks[i + 1] for i in range(max(0, n - 2400))])),
    ]
    body = b"GGUF" + struct.pack("<IQQ", 3, 0, len(kvs)) + b"".join(kvs)
    body += b"\0" * (-len(body) % 32)
    with open(sys.argv[1], "wb") as f:
        f.write(body)


main()
