#!/usr/bin/python3
"""Writes data/torch_expected.json: what Debian's torch.load(weights_only=True)
returns for every PyTorch file of ../shared/corpus and ../shared/real whose
manifest case is `ok` — per tensor (named as mfmt names them: dict keys and
list indices joined with "."): dtype, shape, stride, storage_offset and the
SHA-256 of its values in C order. test_torch.py compares mfmt's arrays with
it when torch is not installed, and with torch.load live when it is.

    apt-get install -y python3-torch && /usr/bin/python3 python/tests/make_torch_expected.py
"""

import hashlib
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from conftest import ALL_CASES, case_id  # noqa: E402

FORMATS = ("pytorch-zip", "pytorch-pickle")
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "torch_expected.json")

DTYPES = {torch.float64: "F64", torch.float32: "F32", torch.float16: "F16",
          torch.bfloat16: "BF16", torch.int64: "I64", torch.int32: "I32",
          torch.int16: "I16", torch.int8: "I8", torch.uint8: "U8", torch.bool: "BOOL",
          torch.complex64: "C64", torch.complex128: "C128"}


def flatten(obj, prefix, out):
    """{name: tensor} with mfmt's naming: keys and indices joined by '.'."""
    if isinstance(obj, torch.Tensor):
        out[prefix] = obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            flatten(v, f"{prefix}.{k}" if prefix else str(k), out)
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            flatten(v, f"{prefix}.{i}" if prefix else str(i), out)
    return out


def value_bytes(t):
    """The values in C order, little-endian, as bytes (BF16: the bit patterns)."""
    t = t.detach().contiguous()
    if t.dtype == torch.bfloat16:
        t = t.view(torch.int16)
    return t.numpy().tobytes()


def describe(t):
    return {"dtype": DTYPES[t.dtype], "shape": list(t.shape), "stride": list(t.stride()),
            "storage_offset": t.storage_offset(),
            "sha256": hashlib.sha256(value_bytes(t)).hexdigest()}


def torch_cases():
    return [c for c in ALL_CASES if c["expect"] == "ok" and c["format"] in FORMATS]


# What torch's weights-only unpickler allows (torch/_weights_only_unpickler.py).
ALLOWED = {"collections.OrderedDict", "torch._utils._rebuild_tensor_v2",
           "torch._utils._rebuild_parameter", "torch._utils._rebuild_parameter_with_state",
           "torch.Size", "torch._tensor._rebuild_from_type_v2", "builtins.set",
           "torch.serialization._get_layout", "torch.device"}


def pickle_globals(data):
    """Every global the pickles in `data` import, by static disassembly
    (nothing is loaded): GLOBAL/INST args and STACK_GLOBAL's two strings."""
    import io
    import pickletools
    found, f = set(), io.BytesIO(data)
    while f.tell() < len(data):
        strings = []
        try:
            for op, arg, _ in pickletools.genops(f):
                if op.name in ("GLOBAL", "INST"):
                    found.add(arg.replace(" ", "."))
                elif op.name == "STACK_GLOBAL" and len(strings) >= 2:
                    found.add(f"{strings[-2]}.{strings[-1]}")
                elif isinstance(arg, str):
                    strings.append(arg)
        except Exception:  # noqa: BLE001 (the raw storage bytes of a legacy file)
            break
    return found


def checked_full_load(path):
    """torch 1.13's weights-only unpickler lacks some opcodes (protocols 1, 4,
    5, Lightning files): those files are loaded with the full unpickler only
    after every global they import was checked against the allowlist."""
    import zipfile
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as z:
            data = b"".join(z.read(n) for n in z.namelist() if n.endswith(".pkl"))
    else:
        with open(path, "rb") as f:
            data = f.read()
    glob = pickle_globals(data)
    bad = {g for g in glob if g not in ALLOWED and not g.endswith("Storage")}
    if bad:
        raise RuntimeError(f"globals off the allowlist: {sorted(bad)}")
    return torch.load(path, map_location="cpu", weights_only=False)


def load(path):
    """(object, how): torch.load(weights_only=True), or the checked full load."""
    try:
        return torch.load(path, map_location="cpu", weights_only=True), "weights_only"
    except Exception:  # noqa: BLE001
        return checked_full_load(path), "full unpickler, globals checked"


def main():
    out = {}
    for c in torch_cases():
        try:
            obj, how = load(c["abspath"])
        except Exception as e:  # noqa: BLE001
            out[case_id(c)] = {"refused": f"{type(e).__name__}: {str(e)[:200]}"}
            continue
        out[case_id(c)] = {"loaded_by": how,
                           "tensors": {n: describe(t) for n, t in flatten(obj, "", {}).items()}}
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump({"torch": torch.__version__, "cases": out}, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"{OUT}: {len(out)} files, torch {torch.__version__}")


if __name__ == "__main__":
    main()
