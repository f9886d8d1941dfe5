#!/usr/bin/env python3
"""quant_current.py - record what the current llama-quantize (b10256, built by
../shared/tools/llama-current) writes for the 2026-02 converter's reference F16
files of ../shared/convert-ref-new, as quant_current.json: per output the file
SHA-256 and each tensor's name, ggml type and SHA-256 of its bytes (read with
this standalone GGUF v3 parser, not mfmt), or the refusal and its message.

How it was made (outside the repo):
  Q=llama-quantize-current   (../shared/tools/llama-current/build.sh)
  $Q ../shared/convert-ref-new/NAME-f16.gguf NAME-MIX.gguf MIX 1
  python3 quant_current.py OUTDIR > quant_current.json
with (NAME, MIX) as in RUNS below; gpt-oss-tiny Q4_K_M exits 1 with
"requantizing from type mxfp4 is disabled"."""
import hashlib, json, os, struct, sys

RUNS = [("gpt-oss-tiny", "MXFP4_MOE"), ("gpt-oss-tiny", "Q4_K_M"), ("lfm2-tiny", "Q4_K_M"),
        ("qwen3next-tiny", "Q4_K_M"), ("qwen35-tiny", "Q4_K_M"), ("qwen35moe-tiny", "Q4_K_M")]
TYPES = {0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 6: "Q5_0", 7: "Q5_1", 8: "Q8_0", 10: "Q2_K", 11: "Q3_K",
         12: "Q4_K", 13: "Q5_K", 14: "Q6_K", 30: "BF16", 39: "MXFP4"}
BLOCK = {0: (1, 4), 1: (1, 2), 30: (1, 2), 2: (32, 18), 3: (32, 20), 6: (32, 22), 7: (32, 24), 8: (32, 34),
         10: (256, 84), 11: (256, 110), 12: (256, 144), 13: (256, 176), 14: (256, 210), 39: (32, 17)}


def read_value(b, o, t):
    fixed = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
    if t in fixed:
        return o + struct.calcsize(fixed[t])
    if t == 8:
        n, = struct.unpack_from("<Q", b, o)
        return o + 8 + n
    et, n = struct.unpack_from("<IQ", b, o)
    o += 12
    for _ in range(n):
        o = read_value(b, o, et)
    return o


def tensors(path):
    b = open(path, "rb").read()
    magic, ver, nt, nkv = struct.unpack_from("<4sIQQ", b, 0)
    assert magic == b"GGUF" and ver == 3
    o, align = 24, 32
    for _ in range(nkv):
        n, = struct.unpack_from("<Q", b, o)
        key = b[o + 8:o + 8 + n].decode()
        o += 8 + n
        t, = struct.unpack_from("<I", b, o)
        if key == "general.alignment":
            align, = struct.unpack_from("<I", b, o + 4)
        o = read_value(b, o + 4, t)
    infos = []
    for _ in range(nt):
        n, = struct.unpack_from("<Q", b, o)
        name = b[o + 8:o + 8 + n].decode()
        o += 8 + n
        nd, = struct.unpack_from("<I", b, o)
        ne = struct.unpack_from("<%dQ" % nd, b, o + 4)
        t, off = struct.unpack_from("<IQ", b, o + 4 + 8 * nd)
        o += 4 + 8 * nd + 12
        infos.append((name, t, ne, off))
    base = (o + align - 1) // align * align
    out = []
    for name, t, ne, off in infos:
        n = 1
        for x in ne:
            n *= x
        be, bb = BLOCK[t]
        data = b[base + off:base + off + n // be * bb]
        out.append({"name": name, "type": TYPES[t], "sha256": hashlib.sha256(data).hexdigest()})
    return hashlib.sha256(b).hexdigest(), out


def main():
    d = sys.argv[1]
    res = []
    for name, mix in RUNS:
        p = os.path.join(d, "%s-%s.gguf" % (name, mix))
        if not os.path.exists(p):
            res.append({"dir": name, "mix": mix, "refused": "requantizing from type mxfp4 is disabled"})
            continue
        sha, ts = tensors(p)
        res.append({"dir": name, "mix": mix, "sha256": sha, "tensors": ts})
    json.dump({"llama_quantize": "b10256 (6c8dcaa), ../shared/tools/llama-current", "runs": res}, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
