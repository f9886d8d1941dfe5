#!/usr/bin/python3
"""Re-makes variants.json: runs llama.cpp's own converter (through
../shared/tools/convref/run_convert.py, CONVREF_LLAMA_CPP set as its README
says) on every directory gen_variants.py writes, for each output type, and
records the output's sha256 and size. A test oracle run by hand, never by
the build or CI:

    /usr/bin/python3 make_expected.py SHARED_DIR WORK_DIR [NAME ...]

With names, only those variants are re-made (the others kept).
"""
import hashlib
import json
import os
import subprocess
import sys

import gen_variants

OUTTYPES = {"gemma-b": ["f16", "bf16", "q8_0"], "gpt2-b": ["f16", "f32", "q8_0"],
            "qwen2moe-b": ["f16", "bf16", "q8_0"], "phi3-128k-b": ["f16", "bf16", "q8_0"]}
DEFAULT_OUTTYPES = ["f16", "q8_0"]


def main():
    shared, work = sys.argv[1], sys.argv[2]
    src = os.path.join(shared, "convert-ref-arch", "dirs")
    with open(os.path.join(src, "MANIFEST.json")) as f:
        hints = {os.path.basename(e["dir"]): e.get("tokpre_hint") for e in json.load(f)}
    tool = os.path.join(shared, "tools", "convref", "run_convert.py")
    here = os.path.dirname(os.path.abspath(__file__))
    names = sys.argv[3:] or sorted(gen_variants.VARIANTS)
    path = os.path.join(here, "variants.json")
    out = {}
    if sys.argv[3:] and os.path.exists(path):
        with open(path) as f:
            out = {k: v for k, v in json.load(f)["outputs"].items() if v["dir"] not in names}
    for name in names:
        gen_variants.make(src, work, name)
        ref = gen_variants.VARIANTS[name][0]
        for t in OUTTYPES.get(name, DEFAULT_OUTTYPES):
            o = os.path.join(work, "%s-%s.gguf" % (name, t))
            cmd = ["/usr/bin/python3", tool] + (["--tokpre", hints[ref]] if hints.get(ref) else [])
            cmd += [os.path.join(work, name), "--outtype", t, "--outfile", o]
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            with open(o, "rb") as f:
                data = f.read()
            out["%s-%s" % (name, t)] = {"dir": name, "outtype": t, "bytes": len(data),
                                         "sha256": hashlib.sha256(data).hexdigest()}
            print(name, t, len(data))
    with open(path, "w") as f:
        json.dump({"llama_cpp_commit": "c392e5094deaf2d1a7c18683214f007fad3fe42b", "outputs": out}, f,
                  indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
