#!/usr/bin/python3
"""Makes expected.json for test_mistral_format: the SHA-256 of what llama.cpp's
converter (ecbcb7ea, --mistral-format) wrote for each directory of dirs/ as f16
and q8_0, and of what llama-quantize made of its F16 as Q4_K_M (one thread):
c392e50's build (no FMA) for the llama-arch directory (the whole file),
b10256's (-march=native, FMA contraction) for Ministral 3 (arch mistral3, which
c392e50 does not know): its header and per-tensor records ("NAME TYPE SHA256"),
and c392e50's tensors of the same F16 relabelled as arch llama (relabel.py).

    make_expected.py REF_DIR QUANT_DIR > expected.json

REF_DIR holds DIR-f16.gguf / DIR-q8_0.gguf, QUANT_DIR DIR-c392-Q4_K_M.gguf and
DIR-Q4_K_M.gguf and ministral3-as-llama-c392-Q4_K_M.gguf (README.md: how
they were made). Standard library only."""
import hashlib, json, os, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "hf_new"))
from make_llama_quantize_current import describe  # noqa: E402

DIRS = ["mistral-tekken-tiny", "ministral3-tekken-tiny", "mistral-spm-tiny"]


def sha(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def main():
    ref, quant = sys.argv[1:3]
    outputs = {}
    for d in DIRS:
        for t in ("f16", "q8_0"):
            outputs["%s-%s" % (d, t)] = {"dir": d, "type": t, "sha256": sha(os.path.join(ref, "%s-%s.gguf" % (d, t)))}
    quantized = {
        "mistral-tekken-tiny-Q4_K_M": {"dir": "mistral-tekken-tiny", "type": "Q4_K_M",
                                       "tool": "llama-quantize c392e50 (GGML_FMA OFF)",
                                       "sha256": sha(os.path.join(quant, "mistral-tekken-tiny-c392-Q4_K_M.gguf"))},
        "ministral3-tekken-tiny-Q4_K_M": dict(describe(os.path.join(quant, "ministral3-tekken-tiny-Q4_K_M.gguf")),
                                              dir="ministral3-tekken-tiny", type="Q4_K_M",
                                              tool="llama-quantize b10256 (6c8dcaa, MARCH=native: FMA contraction)",
                                              # relabel.py: the same F16 as arch llama, through c392e50's
                                              tensors_c392e50_relabelled=describe(os.path.join(
                                                  quant, "ministral3-as-llama-c392-Q4_K_M.gguf"))["tensors"]),
    }
    json.dump({"converter": "llama.cpp ecbcb7ea convert_hf_to_gguf.py --mistral-format (unmodified; "
                            "shared/tools/convref-new/run_convert.py; mistral_common stand-in: README.md)",
               "outputs": outputs, "quantized": quantized}, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
