"""`mfmt diff HF_DIR model.gguf` against numbers computed without mfmt: the
HF tensors (safetensors read with numpy), laid out as llama.cpp's converter
lays them out (names from gguf-py's own TensorNameMap, the q/k permute of
LlamaModel.permute, restated here), against the GGUF's tensors dequantized by
gguf-py (GGUFReader + gguf.quants.dequantize). Per tensor: RMSE and cosine;
then mfmt's JSON summary must give the same numbers (relative 1e-6).

    LLAMA_CPP=path/to/llama.cpp python3 tests/diff_oracle.py HF_DIR GGUF MFMT [--write OUT]

Without LLAMA_CPP the numbers come from tests/data/diff_oracle/*.json,
which --write made with it. Prints "RESULT diff_oracle PASSED FAILED"."""
import json
import os
import subprocess
import sys
import types
from pathlib import Path

import numpy as np

from oracle_util import permute, safetensors

hf, gg, mfmt = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
here = Path(__file__).parent / "data" / "diff_oracle"


def oracle():
    sys.path.insert(0, os.path.join(os.environ["LLAMA_CPP"], "gguf-py"))
    sys.modules.setdefault("sentencepiece", types.SimpleNamespace(SentencePieceProcessor=None))
    import gguf
    cfg = json.loads((hf / "config.json").read_text())
    n_head, n_kv = cfg["num_attention_heads"], cfg.get("num_key_value_heads", cfg["num_attention_heads"])
    tmap = gguf.get_tensor_name_map(gguf.MODEL_ARCH.LLAMA, cfg["num_hidden_layers"])
    r = gguf.GGUFReader(gg)
    ours = {t.name: gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float64) for t in r.tensors}
    rows = {}
    for name, w in safetensors(hf / "model.safetensors").items():
        w = w.astype(np.float64)
        if name.endswith("q_proj.weight"):
            w = permute(w, n_head, n_head)
        elif name.endswith("k_proj.weight"):
            w = permute(w, n_head, n_kv)
        g = tmap.get_name(name, try_suffixes=(".weight", ".bias"))
        d = ours[g].reshape(w.shape)
        rmse = float(np.sqrt(np.mean((w - d) ** 2)))
        cos = float(np.dot(w.ravel(), d.ravel()) / (np.linalg.norm(w) * np.linalg.norm(d)))
        rows[name] = {"rmse": rmse, "cosine": cos, "n": int(w.size)}
    return rows


if os.environ.get("LLAMA_CPP"):
    want = oracle()
    if "--write" in sys.argv:
        out = Path(sys.argv[sys.argv.index("--write") + 1])
        out.write_text(json.dumps(want, indent=1, sort_keys=True) + "\n")
else:
    print("SKIP gguf-py's dequantization: LLAMA_CPP not set; numbers from tests/data/diff_oracle")
    want = json.loads((here / (Path(gg).stem + ".json")).read_text())

got = json.loads(subprocess.run([mfmt, "diff", "--json", "--all", str(hf), gg],
                                capture_output=True, text=True).stdout)
passed = failed = 0


def check(what, a, b, tol=1e-6):
    global passed, failed
    if abs(a - b) <= tol * max(abs(b), 1e-12) or (a == 0 and b < 1e-12):
        passed += 1
    else:
        failed += 1
        print(f"FAIL {what}: mfmt {a!r}, anchor {b!r}")


rows = {r["name"]: r for r in got["tensors"]}
for name, w in want.items():
    r = rows.get(name)
    if not r:
        failed += 1
        print(f"FAIL {name}: not in mfmt's diff")
        continue
    check(f"{name} rmse", r.get("rmse", 0.0), w["rmse"])
    check(f"{name} cosine", r.get("cosine", 1.0), w["cosine"], 1e-9)
n = sum(w["n"] for w in want.values())
s = got["summary"]
check("weighted rmse", s["rmse"], float(np.sqrt(sum(w["n"] * w["rmse"] ** 2 for w in want.values()) / n)))
check("mean cosine", s["cosine"], sum(w["n"] * w["cosine"] for w in want.values()) / n, 1e-9)
worst = max(want, key=lambda k: want[k]["rmse"])
if s["worst"][0]["name"] == worst:
    passed += 1
else:
    failed += 1
    print(f"FAIL worst tensor: mfmt {s['worst'][0]['name']}, anchor {worst}")
print(f"RESULT diff_oracle {passed} {failed}")
sys.exit(1 if failed else 0)
