"""What the tests/*.py oracles share: a pass/fail tally that prints
"RESULT NAME PASSED FAILED", a Hugging Face safetensors file read with
numpy alone, and llama.cpp's q/k permute (convert_hf_to_gguf.py
LlamaModel.permute, restated). Importing it needs no numpy."""
import json
import struct
import sys
from pathlib import Path


class Tally:
    def __init__(self, name):
        self.name, self.passed, self.failed = name, 0, 0

    def check(self, what, ok, detail=""):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            print(f"FAIL {what} {detail}")

    def finish(self):
        print(f"RESULT {self.name} {self.passed} {self.failed}")
        sys.exit(1 if self.failed else 0)


def safetensors(path):
    """{name: float32 array} of a safetensors file (F32, F16, BF16)."""
    import numpy as np  # here: the Chromium check imports this module without numpy
    b = Path(path).read_bytes()
    (n,) = struct.unpack("<Q", b[:8])
    head = json.loads(b[8:8 + n])
    out = {}
    for k, v in head.items():
        if k == "__metadata__":
            continue
        s, e = v["data_offsets"]
        raw = np.frombuffer(b, np.uint8, e - s, 8 + n + s)
        if v["dtype"] == "BF16":
            a = (raw.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
        else:
            a = raw.view({"F16": np.float16, "F32": np.float32}[v["dtype"]]).astype(np.float32)
        out[k] = a.reshape(v["shape"])
    return out


def permute(w, n_head, n_head_kv):
    if n_head_kv is not None and n_head != n_head_kv:
        n_head = n_head_kv
    return (w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:])
            .swapaxes(1, 2).reshape(w.shape))
