"""Runs mlx_lm's own convert() (mlx_lm/convert.py, utils.py, models/*.py
from the mlx-lm checkout beside this file) on top of mlx/core.py, the
recording stand-in for MLX's extension, and writes what it decided: the
config.json and model.safetensors.index.json it wrote (real files, by
mlx_lm's own code), and plan.json: each safetensors file it saved with
each array's expression, for driver.cpp to compute with MLX's C++ core.

usage: run_mlx_lm.py HF_DIR OUT_DIR [convert() keyword=value ...]"""
import importlib.util
import json
import os
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


class _Anything:
    def __call__(self, *a, **k):
        return _Anything()

    def __getattr__(self, n):
        return _Anything()


def stub(name):
    m = types.ModuleType(name)
    m.__getattr__ = lambda n: _Anything()
    sys.modules[name] = m
    return m


# what mlx_lm imports besides MLX: the tokenizer (transformers) and the hub
stub("transformers")
hub = stub("huggingface_hub")
hub.snapshot_download = lambda *a, **k: (_ for _ in ()).throw(RuntimeError("no hub"))

# the package without its __init__ (which imports generate and the server)
spec = importlib.util.spec_from_file_location(
    "mlx_lm", os.path.join(HERE, "mlx_lm", "__init__.py"),
    submodule_search_locations=[os.path.join(HERE, "mlx_lm")])
pkg = importlib.util.module_from_spec(spec)
sys.modules["mlx_lm"] = pkg
tu = stub("mlx_lm.tokenizer_utils")
tu.TokenizerWrapper = object


class _Tok:
    def save_pretrained(self, path):
        pass  # the tokenizer files are compared apart (README.md)


tu.load = lambda *a, **k: _Tok()

import mlx.core as mx  # noqa: E402
import mlx_lm.utils as U  # noqa: E402
import mlx_lm.convert as C  # noqa: E402

U.create_model_card = lambda *a, **k: None  # huggingface_hub's ModelCard: not run


def expr_json(e):
    return [expr_json(x) if isinstance(x, tuple) else x for x in e]


def main():
    hf, out = sys.argv[1], sys.argv[2]
    kw = {}
    for a in sys.argv[3:]:
        k, v = a.split("=", 1)
        if k == "max_shard_bytes":  # make_shards' limit is max_file_size_gb << 30
            class _Bytes:
                def __lshift__(self, n, v=int(v)):
                    return v
            U.make_shards.__defaults__ = (_Bytes(),)
            continue
        kw[k] = {"True": True, "False": False, "None": None}.get(v, int(v) if v.isdigit() else v)
    C.convert(hf, out, **kw)
    plan = []
    for path, arrays, meta in mx.SAVED:
        plan.append({"file": os.path.basename(path), "metadata": meta,
                     "arrays": [{"name": k, "dtype": v.dtype.name, "shape": list(v.shape),
                                 "expr": expr_json(v.expr)} for k, v in arrays.items()]})
    with open(os.path.join(out, "plan.json"), "w") as f:
        json.dump(plan, f, indent=1)


if __name__ == "__main__":
    main()
