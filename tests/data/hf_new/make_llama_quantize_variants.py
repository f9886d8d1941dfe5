#!/usr/bin/python3
"""Makes llama_quantize_variants.json: llama-quantize of llama.cpp b10256 (as
make_llama_quantize_current.py) run as Q4_K_M, one thread, on the F16 files
llama.cpp's converter at ecbcb7ea wrote for the held-out hybrids of
gen_hybrid_variants.py (hybrid_variants.json lists those files' SHA-256; mfmt's
F16 of the same directories is byte-identical, so the test quantizes against
its own F16). Per output: the file's SHA-256, its header's and each tensor's.

    make_llama_quantize_variants.py QUANTIZE_BIN F16_DIR OUT_DIR > llama_quantize_variants.json
    make_llama_quantize_variants.py QUANTIZE_BIN F16_DIR OUT_DIR NAME... > llama_quantize_gaps.json

F16_DIR holds NAME-f16.gguf for each variant (the hybrids by default, else the
NAMEs given: gen_gap_variants.py's, gap_variants.json). Run outside the repository.
Standard library only."""
import json, os, subprocess, sys

from make_llama_quantize_current import describe

VARIANTS = ["granite4-h-b", "granite4-h-dense-b", "granite4-h-period-b", "granite4-h-indices-b", "falcon-h1-b"]


def main():
    qbin, f16_dir, out = sys.argv[1:4]
    info = open(os.path.join(os.path.dirname(qbin), "BUILD-INFO.txt")).read()
    outputs = {}
    for v in sys.argv[4:] or VARIANTS:
        src = os.path.join(f16_dir, v + "-f16.gguf")
        dst = os.path.join(out, v + "-Q4_K_M.gguf")
        subprocess.run([qbin, src, dst, "Q4_K_M", "1"], check=True, capture_output=True,
                       env=dict(os.environ, LM_GGML_NO_BACKTRACE="1"))
        outputs[v + "-Q4_K_M"] = dict(describe(dst), dir=v, type="Q4_K_M")
    json.dump({"tool": "llama-quantize-current (llama.cpp b10256, 6c8dcaa; shared/tools/llama-current/build.sh)",
               "build": [l for l in info.splitlines() if l.startswith("MARCH")][0],
               "command": "llama-quantize-current NAME-f16.gguf OUT.gguf Q4_K_M 1",
               "outputs": outputs}, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
