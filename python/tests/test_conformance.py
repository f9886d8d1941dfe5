"""Over ../shared/corpus and ../shared/real: every `ok` case's tensors read
through mfmt.open hash (NumPy bytes, C order) to the manifest's canonical
hashes, with its names, dtypes and shapes; every `error` case raises an
mfmt.Error naming the file; every `unsafe` case raises UnsafeFileError."""

import hashlib
import os

import numpy as np
import pytest

import mfmt
from conftest import cases, needs_shared

pytestmark = needs_shared


def array_sha256(arr):
    """SHA-256 of an array's elements in C order (little-endian)."""
    a = np.ascontiguousarray(arr)
    if a.dtype.byteorder == ">":
        a = a.astype(a.dtype.newbyteorder("<"))
    return hashlib.sha256(a.tobytes()).hexdigest()


@pytest.mark.parametrize("case", cases("ok"))
def test_ok_case_tensors_hash_to_manifest(case):
    try:
        m = mfmt.open(case["abspath"])
    except mfmt.UnsupportedError as e:
        if case["format"] == "hf-dir":
            pytest.skip(f"needs a reader mfmt lacks: {e}")
        raise
    with m:
        assert m.format == case["format"] or case["format"] == "hdf5" and m.format == "keras"
        want = case.get("tensors", [])
        assert sorted(m.keys()) == sorted(t["name"] for t in want)
        for t in want:
            info = m.info(t["name"])
            assert info.dtype == t["dtype"], t["name"]
            assert list(info.shape) == t["shape"], t["name"]
            if "sha256" not in t:  # STRING tensors have no canonical hash
                continue
            arr = m.get_tensor(t["name"])
            assert isinstance(arr, np.ndarray)
            assert array_sha256(arr) == t["sha256"], t["name"]
            if info.mapped:
                assert not arr.flags.writeable, "a view of the mapping must be read-only"


@pytest.mark.parametrize("case", cases("error"))
def test_error_case_raises_naming_the_file(case):
    with pytest.raises(mfmt.Error) as ei:
        with mfmt.open(case["abspath"], strict=True, allow_unsafe=True) as m:
            for name in m:  # a breach may only show when the data is read
                m.get_tensor(name)
    e = ei.value
    assert case["abspath"] in e.message or os.path.basename(case["abspath"]) in e.message
    assert e.path is not None, e.message
    assert isinstance(e, (mfmt.FormatError, mfmt.UnsupportedError, mfmt.FileError,
                          mfmt.UnsafeFileError))


@pytest.mark.parametrize("case", cases("unsafe"))
def test_unsafe_case_raises_unsafe_file_error(case):
    with pytest.raises(mfmt.UnsafeFileError) as ei:
        mfmt.open(case["abspath"])
    e = ei.value
    assert e.verdict in ("unknown", "dangerous")
    if "malicious/" in case["path"]:
        assert e.verdict == "dangerous"
        assert any(f.severity == "dangerous" for f in e.findings)
    assert e.findings, "the findings travel with the exception"
