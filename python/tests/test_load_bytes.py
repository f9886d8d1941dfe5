"""mfmt.load(bytes) / mfmt.numpy.load / mfmt.torch.load / mfmt.open_bytes:
the same tensors as from the file's path, for every single-file fixture of
tests/data/api (as safetensors.numpy.load(data) / safetensors.torch.load(data)),
read in place (arrays view the bytes), and the safety rule kept."""
import os

import numpy as np
import pytest

import mfmt
import mfmt.numpy
import mfmt.torch

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "data", "api")
FILES = sorted(
    os.path.join(d, f)
    for d, _, fs in os.walk(ROOT)
    for f in fs
    if not f.endswith((".md", ".json", ".bin")) and "external_data" not in d
    and "invalid" not in d and "malicious" not in d
)


def test_fixtures_found():
    assert len(FILES) >= 8, FILES


@pytest.mark.parametrize("path", FILES, ids=lambda p: os.path.relpath(p, ROOT))
def test_numpy_load_matches_file(path):
    data = open(path, "rb").read()
    want = mfmt.numpy.load_file(path)
    have = mfmt.numpy.load(data)
    assert list(have) == list(want)
    for k in want:
        assert have[k].dtype == want[k].dtype and have[k].shape == want[k].shape, k
        assert have[k].tobytes() == want[k].tobytes(), k


@pytest.mark.parametrize("path", FILES, ids=lambda p: os.path.relpath(p, ROOT))
def test_torch_load_matches_file(path):
    torch = pytest.importorskip("torch")
    data = open(path, "rb").read()
    try:
        want = mfmt.torch.load_file(path)
    except mfmt.Error as e:  # a dtype torch has no type for: the same from memory
        with pytest.raises(type(e)):
            mfmt.torch.load(data)
        return
    have = mfmt.torch.load(data)
    assert list(have) == list(want)
    for k in want:
        assert have[k].dtype == want[k].dtype and torch.equal(have[k], want[k]), k


def test_metadata_and_view_in_place():
    path = os.path.join(ROOT, "safetensors", "all_dtypes.safetensors")
    data = bytearray(open(path, "rb").read())
    with mfmt.open(path) as a, mfmt.open_bytes(data, "all_dtypes.safetensors") as b:
        assert b.format == a.format and b.metadata == a.metadata and list(b) == list(a)
        arrs = [b.get_tensor(k) for k in b]
    base = np.frombuffer(data, np.uint8)
    # zero-copy views of the caller's bytes (which they keep alive)
    assert sum(np.shares_memory(x, base) for x in arrs) >= len(arrs) // 2


def test_multi_file_and_unsafe_refused():
    onnx = os.path.join(ROOT, "onnx", "external_data", "model.onnx")
    with pytest.raises(mfmt.Error, match="weights.bin"):
        mfmt.load(open(onnx, "rb").read())
    evil = os.path.join(ROOT, "pickle", "malicious", "os_system.pkl")
    with pytest.raises(mfmt.UnsafeFileError):
        mfmt.load(open(evil, "rb").read())
