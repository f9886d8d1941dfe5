"""safetensors' and torch's habits (issue 22): each checked against the
anchor's own behaviour (torch.save/torch.load, safetensors' documented API)."""

import os
import struct

import numpy as np
import pytest

import mfmt
from conftest import CORPUS, EXAMPLES, needs_shared

torch = pytest.importorskip("torch")


def test_bf16_survives_load_file_then_save_file(tmp_path):
    """README's recipe on a torch.save checkpoint with a bf16 tensor: the
    safetensors file says BF16 and holds torch's bits."""
    src = {"w": torch.tensor([[1.5, -2.25], [3.0e-3, 65504.0]], dtype=torch.bfloat16),
           "f": torch.arange(4, dtype=torch.float32)}
    pt = tmp_path / "ckpt.pt"
    torch.save(src, pt)
    sd = mfmt.load_file(pt)
    assert mfmt.stored_dtype(sd["w"]) == "BF16" and sd["w"].dtype == np.uint16
    assert mfmt.stored_dtype(sd["f"]) is None
    out = tmp_path / "model.safetensors"
    mfmt.save_file(sd, out)
    with mfmt.open(out) as m:
        assert m.info("w").dtype == "BF16" and m.info("f").dtype == "F32"
        bits = src["w"].view(torch.int16).numpy().view(np.uint16)
        assert np.array_equal(np.asarray(m["w"]), bits)
    # the tag survives a slice and a copy; arithmetic drops it (then U16)
    assert mfmt.stored_dtype(sd["w"][1:].copy()) == "BF16"
    back = mfmt.torch.load_file(out)
    assert back["w"].dtype == torch.bfloat16 and torch.equal(back["w"], src["w"])


def test_torch_load_file_equals_torch_load(tmp_path):
    src = {"a": torch.randn(3, 5), "b": torch.arange(6, dtype=torch.int64).reshape(2, 3),
           "h": torch.randn(4).to(torch.float16)}
    pt = tmp_path / "m.pt"
    torch.save(src, pt)
    want = torch.load(pt)
    got = mfmt.torch.load_file(pt, device="cpu")
    assert sorted(got) == sorted(want)
    for k in want:
        assert got[k].dtype == want[k].dtype and torch.equal(got[k], want[k])
    assert isinstance(mfmt.load_file(pt, device="cpu")["a"], np.ndarray)
    assert isinstance(mfmt.load_file(pt, framework="pt")["a"], torch.Tensor)
    np_sd = mfmt.numpy.load_file(pt)
    assert np.array_equal(np_sd["a"], want["a"].numpy())


def test_missing_file_is_file_not_found_error(tmp_path):
    p = tmp_path / "nope.safetensors"
    for call in (lambda: mfmt.open(p), lambda: mfmt.safe_open(p), lambda: mfmt.load_file(p)):
        with pytest.raises(FileNotFoundError) as e:
            call()
        assert isinstance(e.value, mfmt.Error) and isinstance(e.value, OSError)
        assert e.value.errno == 2


def test_save_file_metadata_must_be_strings(tmp_path):
    """safetensors refuses non-string metadata rather than convert it."""
    with pytest.raises(TypeError):
        mfmt.save_file({"x": np.zeros(2, np.float32)}, tmp_path / "a.safetensors", {"n": 3})
    assert not (tmp_path / "a.safetensors").exists()
    mfmt.save_file({"x": np.zeros(2, np.float32)}, tmp_path / "b.safetensors", {"n": "3"})
    with mfmt.safe_open(tmp_path / "b.safetensors") as f:
        assert f.metadata() == {"n": "3"}


def test_metadata_none_and_keys_sorted(tmp_path):
    p = tmp_path / "c.safetensors"
    mfmt.save_file({"zeta": np.zeros(1, np.float32), "alpha": np.ones(1, np.float32),
                    "mid": np.ones(2, np.int8)}, p)
    with mfmt.safe_open(p) as f:
        assert f.metadata() is None
        assert f.keys() == ["alpha", "mid", "zeta"]
        assert f.offset_keys() == ["zeta", "alpha", "mid"]


def test_one_version_number():
    assert mfmt.__version__ == mfmt.lib_version()
    assert mfmt.__version__.count(".") == 2


@needs_shared
def test_slice_of_a_quantized_gguf_tensor_follows_its_shape():
    """get_shape() says [rows, cols]: [:, a:b] yields those numbers
    (decoded), never raw block bytes or an empty array."""
    checked = 0
    for root, _, files in os.walk(os.path.join(CORPUS, "gguf")):
        for fn in files:
            if not fn.endswith(".gguf"):
                continue
            try:
                m = mfmt.open(os.path.join(root, fn))
            except mfmt.Error:
                continue
            with m:
                for n in m:
                    info = m.info(n)
                    if not info.dtype.startswith(("Q", "IQ", "TQ")) or len(info.shape) != 2:
                        continue
                    whole = m.get_tensor(n, dtype="float32")
                    rows, cols = info.shape
                    with mfmt.safe_open(os.path.join(root, fn)) as f:
                        sl = f.get_slice(n)
                        assert sl.get_shape() == [rows, cols]
                        part = sl[:, cols // 2:cols]
                        assert part.dtype == np.float32 and part.shape == (rows, cols - cols // 2)
                        assert np.array_equal(part, whole[:, cols // 2:cols])
                        t = f.get_tensor(n)
                        assert t.shape == (rows, cols) and np.array_equal(t, whole)
                    checked += 1
    assert checked > 0, "no 2-D quantized tensor in the corpus"


def test_bf16_tag_through_example():
    """A GGUF or safetensors BF16 tensor read by get_tensor carries its tag."""
    p = os.path.join(EXAMPLES, "tiny.safetensors")
    with mfmt.open(p) as m:
        for n in m:
            a = m[n]
            want = m.info(n).dtype if m.info(n).dtype in ("BF16", "F8_E4M3", "F8_E5M2") else None
            assert mfmt.stored_dtype(a) == want
