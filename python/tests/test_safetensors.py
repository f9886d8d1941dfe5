"""mfmt.safe_open on safetensors files gives the same arrays as reading the
format by hand (struct + json + numpy, per the safetensors spec), and the
safetensors API (keys, get_tensor, get_slice, metadata) works for the other
formats too."""

import glob
import json
import os
import struct

import numpy as np
import pytest

import mfmt
from conftest import CORPUS, case_dicts, needs_shared

pytestmark = needs_shared

# safetensors dtype -> the NumPy dtype of its bytes (BF16/F8: bit patterns)
BY_HAND = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "BF16": "<u2", "I64": "<i8",
           "I32": "<i4", "I16": "<i2", "I8": "i1", "U64": "<u8", "U32": "<u4",
           "U16": "<u2", "U8": "u1", "BOOL": "?", "F8_E4M3": "u1", "F8_E5M2": "u1"}


def read_by_hand(path):
    """{name: array}, metadata of a safetensors file, from its bytes."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    meta = header.pop("__metadata__", None)
    data = raw[8 + n:]
    out = {}
    for name, t in header.items():
        a, b = t["data_offsets"]
        arr = np.frombuffer(data[a:b], dtype=np.dtype(BY_HAND[t["dtype"]]))
        out[name] = arr.reshape(t["shape"])
    return out, meta


def safetensors_files():
    return [pytest.param(c, id=f'{c["base"]}/{c["path"]}') for c in case_dicts("ok", {"safetensors"})
            if c["abspath"].endswith(".safetensors")]


@pytest.mark.parametrize("case", safetensors_files())
def test_safe_open_equals_reading_by_hand(case):
    path = case["abspath"]
    want, meta = read_by_hand(path)
    with mfmt.safe_open(path, framework="np") as f:
        assert sorted(f.keys()) == sorted(want)
        assert f.metadata() == meta
        for name, w in want.items():
            got = f.get_tensor(name)
            assert got.dtype == w.dtype.newbyteorder("=") and got.shape == w.shape, name
            assert got.tobytes() == w.tobytes(), name
            sl = f.get_slice(name)
            assert sl.get_shape() == list(w.shape)
            assert sl.get_dtype() == case["tensors"][[t["name"] for t in case["tensors"]].index(name)]["dtype"]
            if w.ndim >= 1 and w.shape[0] >= 2:
                assert sl[1:2].tobytes() == w[1:2].tobytes()
                assert sl[-1].tobytes() == w[-1].tobytes()
            assert f.get_slice(name)[...].tobytes() == w.tobytes()


def test_offset_keys_in_byte_order():
    path = os.path.join(CORPUS, "safetensors", "unsorted_header.safetensors")
    with mfmt.safe_open(path) as f:
        offs = [f.model.info(k).offset for k in f.offset_keys()]
        assert offs == sorted(offs)


def test_other_formats_open_like_safetensors():
    paths = [os.path.join(CORPUS, "gguf", "llama_tiny.gguf"),
             os.path.join(CORPUS, "pytorch", "state_dict.pt")] + \
        sorted(glob.glob(os.path.join(CORPUS, "numpy", "*.npz")))[:1] + \
        sorted(glob.glob(os.path.join(CORPUS, "onnx", "*.onnx")))[:1] + \
        sorted(glob.glob(os.path.join(CORPUS, "hdf5", "*.h5")))
    paths = [p for p in paths if os.path.exists(p)]
    opened = 0
    for p in paths:
        with mfmt.safe_open(p, framework="np") as f:
            keys = f.keys()
            opened += bool(keys)
            for k in keys:
                arr = f.get_tensor(k)
                assert isinstance(arr, np.ndarray)
                assert list(arr.shape) == f.get_slice(k).get_shape() or \
                    f.model.info(k).dtype not in ("F32", "F16", "F64", "I32", "I64")
    assert opened >= 4


def test_hf_directory_opens_like_safetensors():
    d = os.path.join(CORPUS, "hf-dir", "llama-tiny")
    cands = [c for c in glob.glob(os.path.join(CORPUS, "hf-dir", "*")) if os.path.isdir(c)]
    if not os.path.isdir(d):
        d = cands[0]
    with mfmt.safe_open(d) as f:
        assert f.model.format == "hf-dir"
        k = f.keys()[0]
        assert f.get_tensor(k).shape == tuple(f.get_slice(k).get_shape())


def test_bf16_converts_on_request():
    path = os.path.join(CORPUS, "safetensors", "dtype_bf16.safetensors")
    want, _ = read_by_hand(path)
    with mfmt.open(path) as m:
        for name, bits in want.items():
            f32 = m.get_tensor(name, dtype="float32")
            expect = (bits.astype(np.uint32) << 16).view(np.float32)
            assert f32.dtype == np.float32
            assert np.array_equal(f32, expect, equal_nan=True)
            assert m.get_tensor(name).dtype == np.uint16  # the bits, by default
