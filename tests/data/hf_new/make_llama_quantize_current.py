#!/usr/bin/python3
"""Makes llama_quantize_current.json: llama-quantize of llama.cpp b10256 (commit
6c8dcaa, built by ../shared/tools/llama-current/build.sh, default MARCH=native)
run on the F16 files of ../shared/convert-ref-new (llama.cpp's converter at
ecbcb7ea) as Q4_K_M, one thread; per output the SHA-256 of the file, of its
header (everything before the tensor data: keys, tensor names, types, shapes,
offsets) and of each tensor's bytes ("NAME TYPE SHA256").

    make_llama_quantize_current.py QUANTIZE_BIN SHARED_DIR OUT_DIR > llama_quantize_current.json

Run outside the repository (binary and outputs stay in OUT_DIR). Standard library only."""
import hashlib, json, os, struct, subprocess, sys

FAMILIES = ["deepseek-v3", "ernie45", "ernie45moe", "gemma3", "glm45-air", "hunyuan-dense", "llama4",
            "ministral3", "qwen3", "qwen3moe", "smollm3", "falcon-h1", "granite4-h"]
# ggml type id -> (name, elements per block, bytes per block)
TYPES = {0: ("F32", 1, 4), 1: ("F16", 1, 2), 2: ("Q4_0", 32, 18), 3: ("Q4_1", 32, 20), 6: ("Q5_0", 32, 22),
         7: ("Q5_1", 32, 24), 8: ("Q8_0", 32, 34), 10: ("Q2_K", 256, 84), 11: ("Q3_K", 256, 110),
         12: ("Q4_K", 256, 144), 13: ("Q5_K", 256, 176), 14: ("Q6_K", 256, 210), 30: ("BF16", 1, 2)}

def skip_value(b, o, t):
    sizes = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
    if t == 8:
        return o + 8 + struct.unpack_from("<Q", b, o)[0]
    if t == 9:
        et, n = struct.unpack_from("<IQ", b, o)
        o += 12
        for _ in range(n):
            o = skip_value(b, o, et)
        return o
    return o + sizes[t]

def describe(path):
    b = open(path, "rb").read()
    _, _, nt, nkv = struct.unpack_from("<IIQQ", b, 0)
    o, align = 24, 32
    for _ in range(nkv):
        kl = struct.unpack_from("<Q", b, o)[0]
        key = b[o + 8:o + 8 + kl].decode()
        t = struct.unpack_from("<I", b, o + 8 + kl)[0]
        if key == "general.alignment":
            align = struct.unpack_from("<I", b, o + 12 + kl)[0]
        o = skip_value(b, o + 12 + kl, t)
    infos = []
    for _ in range(nt):
        nl = struct.unpack_from("<Q", b, o)[0]
        name = b[o + 8:o + 8 + nl].decode()
        o += 8 + nl
        nd = struct.unpack_from("<I", b, o)[0]
        ne = struct.unpack_from("<%dQ" % nd, b, o + 4)
        t, off = struct.unpack_from("<IQ", b, o + 4 + 8 * nd)
        o += 4 + 8 * nd + 12
        infos.append((name, t, ne, off))
    data = (o + align - 1) // align * align
    tensors = []
    for name, t, ne, off in infos:
        tn, be, bb = TYPES[t]
        n = 1
        for x in ne:
            n *= x
        size = n // be * bb
        tensors.append("%s %s %s" % (name, tn, hashlib.sha256(b[data + off:data + off + size]).hexdigest()))
    return {"sha256": hashlib.sha256(b).hexdigest(), "header_sha256": hashlib.sha256(b[:data]).hexdigest(),
            "tensors": tensors}

def main():
    qbin, shared, out = sys.argv[1:4]
    info = open(os.path.join(os.path.dirname(qbin), "BUILD-INFO.txt")).read()
    outputs = {}
    for f in FAMILIES:
        src = os.path.join(shared, "convert-ref-new", f + "-tiny-f16.gguf")
        dst = os.path.join(out, f + "-tiny-Q4_K_M.gguf")
        subprocess.run([qbin, src, dst, "Q4_K_M", "1"], check=True, capture_output=True,
                       env=dict(os.environ, LM_GGML_NO_BACKTRACE="1"))
        outputs[f + "-tiny-Q4_K_M"] = dict(describe(dst), dir=f + "-tiny", f16=f + "-tiny-f16.gguf", type="Q4_K_M")
    json.dump({"tool": "llama-quantize-current (llama.cpp b10256, 6c8dcaa; shared/tools/llama-current/build.sh)",
               "build": [l for l in info.splitlines() if l.startswith("MARCH")][0],
               "command": "llama-quantize-current NAME-tiny-f16.gguf OUT.gguf Q4_K_M 1",
               "outputs": outputs}, sys.stdout, indent=1, sort_keys=True)
    print()

if __name__ == "__main__":
    main()
