#!/usr/bin/env python3
"""Writes an importance matrix in llama.cpp's legacy .dat layout (what
llama-imatrix writes and llama-quantize --imatrix reads) for the tensors of a
gen_llama model, so the imatrix paths can be timed against llama-quantize:

    gen_imatrix.py OUT.dat N_LAYER HIDDEN FFN

Layout (little-endian): int32 n_entries; per entry int32 name length, the
name, int32 ncall, int32 nval, nval float32; then int32 chunks and int32
length + the dataset name. Values are positive, pseudo-random and fixed.
token_embd gets no entry (llama-imatrix never sees it)."""
import struct
import sys


def entries(n_layer, hidden, ffn):
    for layer in range(n_layer):
        for t in ("attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up"):
            yield "blk.%d.%s.weight" % (layer, t), hidden
        yield "blk.%d.ffn_down.weight" % layer, ffn
    yield "output.weight", hidden


def main():
    if len(sys.argv) != 5:
        sys.exit("usage: gen_imatrix.py OUT.dat N_LAYER HIDDEN FFN")
    out, n_layer, hidden, ffn = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    ents = list(entries(n_layer, hidden, ffn))
    with open(out, "wb") as f:
        f.write(struct.pack("<i", len(ents)))
        for k, (name, n) in enumerate(ents):
            b = name.encode()
            f.write(struct.pack("<i", len(b)) + b + struct.pack("<ii", 1, n))
            f.write(struct.pack("<%df" % n, *(0.25 + ((i * 7919 + k * 31) % 97) / 16.0 for i in range(n))))
        ds = b"bench"
        f.write(struct.pack("<ii", 10, len(ds)) + ds)


main()
