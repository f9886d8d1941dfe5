"""convert_hf_to_gguf.py's flags on mfmt convert: the output name the
converter gives the file (prepare_metadata: gguf.naming_convention in the
model directory) and the general.* keys (Metadata.load with --metadata and
--model-name, set_gguf_meta_model), for each case of
tests/data/convert_flags/cases.txt.

mfmt's side: `mfmt convert DIR --outtype T [flags]` with no output, the one
.gguf that appears in DIR, its general.* keys from `mfmt inspect --json`.
The anchor: gguf-py's Metadata.load, size_label and naming_convention run
over the parameter count of the tensors written (GGUFWriter.
get_total_parameter_count; 0 for --vocab-only, which prepares no tensors).
With LLAMA_CPP naming a llama.cpp checkout (c392e50; gguf-py needs numpy and
PyYAML only), both are computed and compared, and --write stores the
anchor's lines in tests/data/convert_flags/expected.txt; without it, mfmt's
lines are compared with that file (the anchor part is a counted SKIP).

    python3 tests/converter_names.py CORPUS_HF_DIR TMPDIR MFMT [--write]
Prints "RESULT converter_names PASSED FAILED" last; exit 1 on a mismatch."""
import json
import os
import shutil
import subprocess
import sys
import types
from pathlib import Path

corpus, tmp, mfmt = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
here = Path(__file__).parent / "data" / "convert_flags"
TYPES = {"f32": "F32", "f16": "F16", "bf16": "BF16", "q8_0": "Q8_0"}
KEYS = ["general.name", "general.basename", "general.finetune", "general.version",
        "general.author", "general.size_label", "general.description", "general.tags"]


def cases():
    for line in open(here / "cases.txt"):
        line = line.split("#")[0].strip()
        if line:
            case, src, outtype, name, override, vocab = line.split()
            yield (case, src, outtype, None if name == "-" else name.replace("_", " "),
                   None if override == "-" else here / override, vocab == "vocab")


def run_mfmt(case, src, outtype, name, override, vocab):
    d = tmp / case / src
    shutil.rmtree(tmp / case, ignore_errors=True)
    shutil.copytree(corpus / src, d)
    args = [mfmt, "convert", "-q", str(d), "--outtype", outtype]
    args += ["--model-name", name] if name else []
    args += ["--metadata", str(override)] if override else []
    args += ["--vocab-only"] if vocab else []
    subprocess.run(args, check=True)
    written = [p for p in d.iterdir() if p.suffix == ".gguf"]
    assert len(written) == 1, written
    info = json.loads(subprocess.run([mfmt, "inspect", "--json", str(written[0])], check=True,
                                     capture_output=True, text=True).stdout)
    lines = [f"{case} file {written[0].name}", f"{case} tensors {info['n_tensors']}"]
    for k in KEYS:
        if k in info["metadata"]:
            lines.append(f"{case} {k} {json.dumps(info['metadata'][k])}")
    return lines, d, (0 if vocab else int(info["n_params"]))


def anchor(gguf, case, src, outtype, name, override, vocab, d, total):
    meta = gguf.Metadata.load(override, d, name, total)
    if meta.name is None:
        meta.name = d.name
    if meta.size_label is None and total > 0:
        meta.size_label = gguf.size_label(total, total, 0, 0)  # no experts in these models
    if vocab:
        fname = gguf.naming_convention(meta.name, meta.basename, meta.finetune, meta.version,
                                       size_label=None, output_type=None, model_type="vocab")
    else:
        fname = gguf.naming_convention(meta.name, meta.basename, meta.finetune, meta.version,
                                       meta.size_label, TYPES[outtype])
    lines = [f"{case} file {fname}.gguf", f"{case} tensors {0 if vocab else 'N'}"]
    vals = {"general.name": meta.name, "general.basename": meta.basename,
            "general.finetune": meta.finetune, "general.version": meta.version,
            "general.author": meta.author, "general.size_label": meta.size_label,
            "general.description": meta.description, "general.tags": meta.tags}
    for k in KEYS:
        if vals[k]:  # GGUFWriter.add_string / add_array skip empty values
            lines.append(f"{case} {k} {json.dumps(vals[k])}")
    return lines


def load_gguf():
    if not os.environ.get("LLAMA_CPP"):
        return None
    sys.path.insert(0, os.path.join(os.environ["LLAMA_CPP"], "gguf-py"))
    # gguf/vocab.py imports sentencepiece at the top; nothing here uses it
    sys.modules.setdefault("sentencepiece", types.SimpleNamespace(SentencePieceProcessor=None))
    try:
        import gguf
    except ImportError as e:
        print(f"SKIP gguf-py: {e}")
        return None
    return gguf


def same(a, b):  # "tensors N": any count but 0 (the anchor does not write the file)
    return a == b or (a.rsplit(" ", 1)[0] == b.rsplit(" ", 1)[0] and "tensors N" in b and
                      not a.endswith(" 0"))


gguf = load_gguf()
passed = failed = 0
ours_all, want_all = [], []
for c in cases():
    ours, d, total = run_mfmt(*c)
    ours_all += ours
    if gguf:
        want_all += anchor(gguf, *c, d, total)
if not gguf:
    print("SKIP the converter's own names (gguf-py): LLAMA_CPP not set; comparing with expected.txt")
    want_all = open(here / "expected.txt").read().splitlines()
elif "--write" in sys.argv:
    open(here / "expected.txt", "w").write("\n".join(want_all) + "\n")
for i in range(max(len(ours_all), len(want_all))):
    a = ours_all[i] if i < len(ours_all) else "(none)"
    b = want_all[i] if i < len(want_all) else "(none)"
    if same(a, b):
        passed += 1
    else:
        failed += 1
        print(f"FAIL mfmt: {a}\n     converter: {b}")
print(f"RESULT converter_names {passed} {failed}")
sys.exit(1 if failed else 0)
