#!/usr/bin/python3
"""Regenerates tests/data/quantize_split_ref.json: llama-quantize's outputs
for its COPY type and --keep-split, as sha256 of every file it wrote.

Runs only where the llama.cpp oracle is built (LLAMA_BIN, default
../llama.cpp/build/bin beside the repository: llama-quantize and
llama-gguf-split); elsewhere
it says so and leaves the committed JSON alone. The oracle is never part of
the build or of CI: tests/test_quantize_split.c checks mfmt against the
hashes recorded here.

Inputs come from ../shared: split sets are made by llama-gguf-split (their
shards' hashes are recorded too, so that the test can show `mfmt split`
made the same inputs); "prep": "no-file-type" is the input with
general.file_type deleted by `mfmt edit` (llama-quantize's COPY then writes
the type it guesses), so that case needs build/mfmt as well.

usage: /usr/bin/python3 tests/data/make_quantize_split_ref.py [SHARED]
"""
import hashlib
import json
import os
import shlex
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_JSON = os.path.join(HERE, "quantize_split_ref.json")
LLAMA_COMMIT = "c392e5094deaf2d1a7c18683214f007fad3fe42b"

F16 = "quant-ref/mix/model-F16.gguf"
Q4 = "quant-ref/mix/model-Q4_K_M.gguf"
MIXTRAL = "convert-ref-arch/mixtral-tiny-f16.gguf"

# input, prep, llama-gguf-split args ("" = not split), quantize args, type
CASES = [
    (F16, "", "", "", "COPY"),
    (Q4, "", "", "", "COPY"),
    (Q4, "no-file-type", "", "", "COPY"),
    (F16, "", "--split-max-tensors 20", "--keep-split", "Q4_K_M"),
    (F16, "", "--split-max-tensors 20", "", "Q4_K_M"),
    (F16, "", "--split-max-tensors 20", "--keep-split", "COPY"),
    (F16, "", "--split-max-tensors 30 --no-tensor-first-split", "--keep-split", "Q8_0"),
    (MIXTRAL, "", "--split-max-tensors 10", "--keep-split", "Q4_K_M"),
    (F16, "", "", "--keep-split", "Q4_K_M"),
    (F16, "", "--split-max-tensors 20",
     "--keep-split --imatrix IMATRIX --override-kv general.name=str:x", "Q4_K_M"),
]
IMATRIX = "quant-ref/mix/imatrix.dat"


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for b in iter(lambda: f.read(1 << 20), b""):
            h.update(b)
    return h.hexdigest()


def run(cmd, cwd):
    r = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if r.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (r.returncode, " ".join(cmd), r.stdout.decode(errors="replace")[-2000:]))


def shards_of(prefix):
    """PREFIX-00001-of-0000N.gguf, ... in order (llama_split_path's names)."""
    d, base = os.path.split(prefix)
    names = sorted(n for n in os.listdir(d) if n.startswith(base + "-") and n.endswith(".gguf"))
    return [os.path.join(d, n) for n in names]


def one_case(shared, mfmt, bindir, tmp, idx, case):
    inp, prep, split, args, qtype = case
    src = os.path.join(shared, inp)
    work = os.path.join(tmp, "case%d" % idx)
    os.mkdir(work)
    entry = {"input": inp, "prep": prep, "split": split, "args": args, "type": qtype}
    if prep == "no-file-type":
        edited = os.path.join(work, "in.gguf")
        run([mfmt, "edit", "-q", src, edited, "--delete", "general.file_type"], work)
        src = edited
    if split:
        prefix = os.path.join(work, "in")
        run([os.path.join(bindir, "llama-gguf-split"), "--split"] + shlex.split(split) + [src, prefix], work)
        shards = shards_of(prefix)
        entry["split_shards"] = [sha256(p) for p in shards]
        src = shards[0]
    out = os.path.join(work, "out.gguf")
    if "IMATRIX" in args:
        # the path given is written into quantize.imatrix.file: a link in the run's directory
        os.symlink(os.path.abspath(os.path.join(shared, IMATRIX)), os.path.join(work, "imatrix.dat"))
    qargs = [a.replace("IMATRIX", "imatrix.dat") for a in shlex.split(args)]
    run([os.path.join(bindir, "llama-quantize")] + qargs + [src, out, qtype, "2"], work)
    if "--keep-split" in args:
        entry["outputs"] = [sha256(p) for p in shards_of(os.path.join(work, "out"))]
    else:
        entry["outputs"] = [sha256(out)]
    return entry


def main():
    shared = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "..", "shared")
    bindir = os.environ.get("LLAMA_BIN", os.path.join(HERE, "..", "..", "..", "llama.cpp", "build", "bin"))
    mfmt = os.path.abspath(os.environ.get("MFMT", os.path.join(HERE, "..", "..", "build", "mfmt")))
    need = [os.path.join(bindir, t) for t in ("llama-quantize", "llama-gguf-split")] + [mfmt]
    missing = [p for p in need if not os.access(p, os.X_OK)]
    if missing:
        print("not regenerated (missing: %s); %s is kept as committed" % (", ".join(missing), OUT_JSON))
        return 0
    with tempfile.TemporaryDirectory(prefix="mfmt-qsplit-ref-") as tmp:
        cases = [one_case(shared, mfmt, bindir, tmp, i, c) for i, c in enumerate(CASES)]
    doc = {
        "made_by": "tests/data/make_quantize_split_ref.py: llama-quantize ARGS INPUT OUT.gguf TYPE 2 "
                   "(INPUT split by llama-gguf-split --split SPLIT first when SPLIT is given: "
                   "split_shards are its files' sha256; prep no-file-type: general.file_type "
                   "deleted by mfmt edit; IMATRIX: imatrix.dat, a link in the run's directory to "
                   "../shared/%s), llama.cpp %s built as a test oracle; outputs: sha256 of "
                   "OUT.gguf, or with --keep-split of OUT-00001-of-0000N.gguf ... in order" % (IMATRIX, LLAMA_COMMIT),
        "cases": cases,
    }
    with open(OUT_JSON, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print("wrote %s (%d cases)" % (OUT_JSON, len(cases)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
