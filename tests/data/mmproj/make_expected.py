#!/usr/bin/python3
"""expected.json: what llama.cpp's converter (ecbcb7ea, unmodified, through
../shared/tools/convref-new/run_convert.py) writes with --mmproj for each
directory of dirs/ and each output type:

    make_expected.py DIRS OUT_DIR > expected.json

runs `run_convert.py DIRS/NAME --mmproj --outtype T --outfile OUT_DIR/mmproj-NAME-T.gguf`
(CONVREF_LLAMA_CPP names the converter's tree, assembled as the tool's
assemble.md says) and records each file's sha256 and size, and for f16 and
q8_0, from gguf-py's reader (the converter's own), its keys in order and its
tensors (name, type, shape in ggml order)."""
import hashlib, json, os, subprocess, sys

TOOL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../../shared/tools/convref-new/run_convert.py")
TREE = os.environ.get("CONVREF_LLAMA_CPP", "/tmp/convref-new/tree")
sys.path.insert(0, os.path.join(TREE, "gguf-py"))
import gguf  # noqa: E402


def describe(path, full):
    data = open(path, "rb").read()
    if not full:  # bf16, f32: the bytes only (keys as f16's, tensor types the type or F32)
        return {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
    r = gguf.GGUFReader(path)
    keys = [f.name for f in r.fields.values() if not f.name.startswith("GGUF.")]
    tensors = [[t.name, t.tensor_type.name, [int(x) for x in t.shape]] for t in r.tensors]
    return {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data), "keys": keys, "tensors": tensors}


def main():
    dirs, out = sys.argv[1:3]
    tool = os.environ.get("CONVREF_TOOL", TOOL)
    res = {"how": "tests/data/mmproj/make_expected.py dirs OUT: llama.cpp's convert_hf_to_gguf.py at ecbcb7ea "
                  "(unmodified) through ../shared/tools/convref-new/run_convert.py DIR --mmproj --outtype T "
                  "--outfile OUT/mmproj-NAME-T.gguf", "outputs": {}}
    for name in sorted(os.listdir(dirs)):
        for t in ("f16", "q8_0", "bf16", "f32"):
            f = os.path.join(out, "mmproj-%s-%s.gguf" % (name, t))
            subprocess.run([sys.executable, tool, os.path.join(dirs, name), "--mmproj", "--outtype", t,
                            "--outfile", f], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            res["outputs"]["%s-%s" % (name, t)] = dict(dir=name, outtype=t, **describe(f, t in ("f16", "q8_0")))
    json.dump(res, sys.stdout, indent=1, sort_keys=True)
    print()


main()
