"""Shared fixtures: where the repository and ../shared (the corpus, the real
files) are. Tests over ../shared skip, with the reason, when it is absent."""

import json
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PKG = os.path.dirname(HERE)                # python/
ROOT = os.path.dirname(PKG)                # the repository
SHARED = os.environ.get("MFMT_SHARED", os.path.join(os.path.dirname(ROOT), "shared"))
CORPUS = os.path.join(SHARED, "corpus")
REAL = os.path.join(SHARED, "real")
REAL_GGUF = os.path.join(SHARED, "real-gguf")
EXAMPLES = os.path.join(ROOT, "examples")
MFMT_CLI = os.environ.get("MFMT", os.path.join(ROOT, "build", "mfmt"))

# The package as built in place (python3 setup.py build_ext --inplace), unless
# an installed one is asked for.
if os.environ.get("MFMT_TEST_INSTALLED") != "1":
    sys.path.insert(0, PKG)


def manifest(base):
    """The cases of a manifest.json, each with "abspath"; [] when absent."""
    p = os.path.join(base, "manifest.json")
    if not os.path.exists(p):
        return []
    with open(p, encoding="utf-8") as f:
        cases = json.load(f)
    for c in cases:
        c["abspath"] = os.path.join(base, c["path"])
        c["base"] = os.path.basename(base)
    return cases


ALL_CASES = manifest(CORPUS) + manifest(REAL)


def case_id(c):
    return f'{c["base"]}/{c["path"]}'


def cases(expect, formats=None):
    """pytest params of the manifest cases with this `expect`."""
    out = [c for c in ALL_CASES if c["expect"] == expect and
           (formats is None or c["format"] in formats)]
    return [pytest.param(c, id=case_id(c)) for c in out]


needs_shared = pytest.mark.skipif(not os.path.isdir(CORPUS),
                                  reason=f"{CORPUS} is not here (conformance data)")


def torch_or_none():
    try:
        import torch
        return torch
    except Exception:  # noqa: BLE001 (a broken torch install is "no torch")
        return None


def case_dicts(expect, formats=None):
    """The manifest cases themselves (for loops inside one test)."""
    return [c for c in ALL_CASES if c["expect"] == expect and
            (formats is None or c["format"] in formats)]
