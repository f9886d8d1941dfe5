"""Every PyTorch file of the corpus and the real set: mfmt's arrays equal
what Debian's torch.load(weights_only=True) returns — names, dtypes,
shapes, strides of views and values. Against data/torch_expected.json
(written by make_torch_expected.py with torch), and live against torch.load
when torch is importable."""

import hashlib
import json
import os

import numpy as np
import pytest

import mfmt
from conftest import HERE, SHARED, needs_shared, torch_or_none

pytestmark = needs_shared

with open(os.path.join(HERE, "data", "torch_expected.json"), encoding="utf-8") as f:
    EXPECTED = json.load(f)["cases"]


def c_strides(shape):
    out, acc = [], 1
    for d in reversed(shape):
        out.append(acc)
        acc *= d
    return list(reversed(out))


def values_sha256(arr):
    return hashlib.sha256(np.ascontiguousarray(arr).tobytes()).hexdigest()


def check_against(path, want):
    with mfmt.open(path) as m:
        assert sorted(m.keys()) == sorted(want), path
        for name, w in want.items():
            info = m.info(name)
            arr = m.get_tensor(name)
            assert info.dtype == w["dtype"], name
            assert list(info.shape) == w["shape"] == list(arr.shape), name
            assert values_sha256(arr) == w["sha256"], name
            contiguous = w["stride"] == c_strides(w["shape"]) or 0 in w["shape"]
            if not contiguous and info.mapped:
                # a view keeps torch's strides: same elements, no copy
                elem = [s // arr.itemsize for s in arr.strides]
                assert elem == w["stride"], name
                assert list(info.strides) == w["stride"], name


@pytest.mark.parametrize("key", sorted(EXPECTED))
def test_tensors_equal_torch_load_recorded(key):
    case = EXPECTED[key]
    if "refused" in case:
        pytest.skip(f"torch.load refused it: {case['refused']}")
    check_against(os.path.join(SHARED, key), case["tensors"])


@pytest.mark.parametrize("key", sorted(EXPECTED))
def test_tensors_equal_torch_load_live(key):
    torch = torch_or_none()
    if torch is None:
        pytest.skip("torch is not installed (python3-torch); the recorded test covers it")
    import make_torch_expected as gen
    path = os.path.join(SHARED, key)
    obj, _ = gen.load(path)
    tensors = gen.flatten(obj, "", {})
    check_against(path, {n: gen.describe(t) for n, t in tensors.items()})
    # values, element by element, as torch holds them
    with mfmt.open(path) as m:
        for name, t in tensors.items():
            t = t.detach()
            got = m.get_tensor(name)
            if t.dtype == torch.bfloat16:
                assert np.array_equal(got, t.view(torch.int16).numpy().view(np.uint16))
                f32 = m.get_tensor(name, dtype="float32")
                assert np.array_equal(f32, t.float().numpy(), equal_nan=True)
            else:
                assert np.array_equal(got, t.numpy(), equal_nan=got.dtype.kind in "fc")


def test_tied_weights_share_one_mapping():
    path = os.path.join(SHARED, "corpus", "pytorch", "tied_weights", "pytorch_model.bin")
    case = EXPECTED.get("corpus/pytorch/tied_weights/pytorch_model.bin")
    if not case or not os.path.exists(path):
        pytest.skip("no tied-weights file")
    with mfmt.open(path) as m:
        arrays = [m.get_tensor(n) for n in m]
        mapped = [a for a, n in zip(arrays, m) if m.info(n).mapped]
        assert len(mapped) >= 2
        # the tied pair views the same bytes of the file: no copy was made
        assert any(np.shares_memory(a, b) for i, a in enumerate(mapped)
                   for b in mapped[i + 1:])


def test_safe_open_pt_gives_torch_tensors_equal_to_torch_load():
    torch = torch_or_none()
    if torch is None:
        pytest.skip("torch is not installed")
    path = os.path.join(SHARED, "corpus", "pytorch", "dtypes.pt")
    want = torch.load(path, weights_only=True)
    with mfmt.safe_open(path, framework="pt") as f:
        assert sorted(f.keys()) == sorted(want)
        for k in f.keys():
            t = f.get_tensor(k)
            assert isinstance(t, torch.Tensor)
            assert t.dtype == want[k].dtype, k
            assert torch.equal(t, want[k]) or (t.dtype.is_floating_point and
                                               torch.allclose(t, want[k], equal_nan=True)), k
