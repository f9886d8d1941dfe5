"""The Model: arrays outlive it, zero-copy views, metadata values, float
decoding (every ggml block type), slices that read only their rows, errors
that carry path and offset."""

import gc
import json
import os
import subprocess
import threading

import numpy as np
import pytest

import mfmt
from conftest import CORPUS, EXAMPLES, MFMT_CLI, REAL_GGUF, case_dicts, cases, needs_shared

TINY = os.path.join(EXAMPLES, "tiny-llama.gguf")
TINY_ST = os.path.join(EXAMPLES, "tiny.safetensors")


def test_arrays_outlive_their_model():
    m = mfmt.open(TINY)
    names = list(m)
    arrays = {n: m[n] for n in names}
    sums = {n: float(np.asarray(a, dtype=np.float64).sum()) for n, a in arrays.items()}
    assert all(not a.flags.writeable for a in arrays.values())
    del m
    gc.collect()
    for n, a in arrays.items():  # the mapping is still there
        assert float(np.asarray(a, dtype=np.float64).sum()) == sums[n]


def test_close_keeps_arrays_valid_and_refuses_new_reads():
    m = mfmt.open(TINY_ST)
    name = m.keys()[0]
    a = m[name]
    before = a.tobytes()
    m.close()
    assert m.closed
    gc.collect()
    assert a.tobytes() == before
    with pytest.raises(ValueError):
        m.get_tensor(name)
    with mfmt.open(TINY_ST) as m2:
        assert not m2.closed
    assert m2.closed


def test_views_are_zero_copy_and_read_only():
    with mfmt.open(TINY_ST) as m:
        for n in m:
            a = m[n]
            assert not a.flags.owndata and not a.flags.writeable
            with pytest.raises(ValueError):
                a[...] = 0
            b = m[n]
            assert np.shares_memory(a, b)  # the same bytes of the mapping


def test_model_api():
    with mfmt.open(TINY) as m:
        assert m.format == "gguf" and m.version == "3"
        assert len(m) == len(m.keys()) == len(list(m)) == len(m.tensors)
        n = m.keys()[0]
        assert n in m and "no such tensor" not in m
        info = m.tensors[n]
        assert info.name == n and info.nbytes > 0 and info.file.endswith("tiny-llama.gguf")
        assert info.numpy_dtype == m[n].dtype
        assert m.verdict == "safe"
        with pytest.raises(KeyError):
            m["no such tensor"]
        assert "gguf" in repr(m)


def test_metadata_values_match_the_cli():
    out = subprocess.run([MFMT_CLI, "inspect", "--json", TINY], check=True,
                         capture_output=True, text=True).stdout
    want = json.loads(out)["metadata"]
    with mfmt.open(TINY) as m:
        md = m.metadata
        assert md["general.architecture"] == "llama"
        for k, v in md.items():
            if isinstance(v, np.ndarray):
                v = v.tolist()
            if k in want and not isinstance(want[k], dict):
                w = want[k]
                if isinstance(v, float):
                    assert v == pytest.approx(w), k
                elif isinstance(v, list) and isinstance(w, list):
                    assert len(v) == len(w), k
                else:
                    assert v == w, k
        toks = md["tokenizer.ggml.tokens"]
        assert isinstance(toks, list) and all(isinstance(t, str) for t in toks)


@needs_shared
@pytest.mark.parametrize("case", cases("ok", {"gguf"}))
def test_gguf_metadata_equals_manifest(case):
    with mfmt.open(case["abspath"]) as m:
        md = m.metadata
        for k, w in case.get("metadata", {}).items():
            v = md[k]
            v = v.tolist() if isinstance(v, np.ndarray) else v
            if isinstance(w, dict) and "array_len" in w:  # long arrays: their length
                assert len(v) == w["array_len"], k
                continue
            if isinstance(w, float) or (isinstance(w, list) and w and isinstance(w[0], float)):
                assert np.allclose(v, w), k
            else:
                assert v == w, k


@needs_shared
def test_every_ggml_block_type_decodes_to_the_reference_floats():
    """real/gguf: gguf-py's dequantized values (dequant_f32_sha256) for
    Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, BF16; rows read alone equal the whole."""
    import hashlib
    checked = 0
    for c in case_dicts("ok", {"gguf"}):
        for t in c.get("tensors", []):
            if "dequant_f32_sha256" not in t:
                continue
            with mfmt.open(c["abspath"]) as m:
                f = m.get_tensor(t["name"], dtype="float32")
                assert f.dtype == np.float32 and list(f.shape) == t["shape"]
                assert hashlib.sha256(f.tobytes()).hexdigest() == t["dequant_f32_sha256"], t["name"]
                sl = m.get_slice(t["name"], dtype="float32")
                rows = f.shape[0]
                assert np.array_equal(sl[1:rows - 1], f[1:rows - 1])
                assert np.array_equal(sl[rows - 1], f[rows - 1])
                assert np.array_equal(sl[2:rows:3], f[2:rows:3])
                checked += 1
    assert checked >= 10


@needs_shared
def test_get_slice_reads_rows_of_a_mapped_tensor_without_copy():
    with mfmt.open(os.path.join(CORPUS, "gguf", "llama_tiny.gguf")) as m:
        name = max(m, key=lambda n: m.info(n).nelems)
        whole = m[name]
        part = m.get_slice(name)[3:5]
        assert np.shares_memory(whole, part) and np.array_equal(part, whole[3:5])


@needs_shared
def test_quantized_raw_blocks_by_default():
    for c in case_dicts("ok", {"gguf"}):
        with mfmt.open(c["abspath"]) as m:
            for n in m:
                info = m.info(n)
                if info.dtype.startswith("Q"):
                    a = m[n]
                    assert a.dtype == np.uint8 and a.nbytes == info.nbytes
                    return
    pytest.skip("no quantized tensor in the corpus")


@needs_shared
@pytest.mark.parametrize("case", [c for c in cases("error", {"safetensors", "gguf"})][:40])
def test_errors_carry_path_and_offset(case):
    with pytest.raises((mfmt.FormatError, mfmt.UnsupportedError)) as ei:
        mfmt.open(case["abspath"], strict=True)
    e = ei.value
    assert e.path and os.path.basename(e.path) == os.path.basename(case["abspath"])
    assert isinstance(e.offset, int) and e.offset >= 0, e.message
    assert e.rule and e.rule in e.message


def test_missing_file_is_an_oserror():
    with pytest.raises(OSError) as ei:
        mfmt.open("/nonexistent/model.safetensors")
    assert isinstance(ei.value, mfmt.Error)
    assert "/nonexistent/model.safetensors" in str(ei.value)


def test_usage_errors():
    with pytest.raises(mfmt.UsageError):
        mfmt.safe_open(TINY_ST, framework="jax")
    with mfmt.open(TINY_ST) as m:
        with pytest.raises(mfmt.UsageError):
            m.get_tensor(m.keys()[0], dtype="int32")


def test_threads_read_one_model_at_once():
    with mfmt.open(TINY) as m:
        want = {n: m.get_tensor(n, dtype="float32").tobytes() for n in m}
        errors = []

        def work():
            try:
                for _ in range(20):
                    for n in m:
                        assert m.get_tensor(n, dtype="float32").tobytes() == want[n]
            except Exception as e:  # noqa: BLE001
                errors.append(e)

        ts = [threading.Thread(target=work) for _ in range(4)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        assert not errors


@needs_shared
def test_largest_vocab_tokens_read_into_python():
    files = sorted(os.listdir(REAL_GGUF)) if os.path.isdir(REAL_GGUF) else []
    if not files:
        pytest.skip("no ../shared/real-gguf")
    for f in files:
        with mfmt.open(os.path.join(REAL_GGUF, f)) as m:
            toks = m.metadata.get("tokenizer.ggml.tokens")
            assert isinstance(toks, list) and len(toks) > 1000
            n = m.metadata.get("tokenizer.ggml.scores")
            if n is not None:
                assert len(n) == len(toks)


@needs_shared
def test_packed_int4_decodes_as_onnx_defines():
    """ONNX's own test data: DequantizeLinear of int4 x with scale and zero
    point gives output_0; y = (x - zero_point) * scale."""
    d = os.path.join(os.path.dirname(CORPUS), "real", "onnx", "onnx-git-testdata",
                     "test_dequantizelinear_int4", "test_data_set_0")
    if not os.path.isdir(d):
        pytest.skip("no ONNX int4 test data")

    def one(name, dtype=None):
        with mfmt.open(os.path.join(d, name)) as m:
            return m.get_tensor(m.keys()[0], dtype=dtype)
    x = one("input_0.pb", "float32")
    scale = one("input_1.pb", "float32")
    zp = one("input_2.pb", "float32")
    y = one("output_0.pb")
    assert x.shape == y.shape
    assert np.array_equal((x - zp) * scale, y)


@needs_shared
@pytest.mark.parametrize("case", ["test_cast_FLOAT_to_INT4", "test_cast_FLOAT_to_FLOAT4E2M1"])
def test_packed_cast_outputs_decode_near_their_inputs(case):
    d = os.path.join(os.path.dirname(CORPUS), "real", "onnx", "onnx-git-testdata", case,
                     "test_data_set_0")
    if not os.path.isdir(d):
        pytest.skip(f"no {case}")
    with mfmt.open(os.path.join(d, "input_0.pb")) as a, mfmt.open(os.path.join(d, "output_0.pb")) as b:
        x = a.get_tensor(a.keys()[0], dtype="float32")
        y = b.get_tensor(b.keys()[0], dtype="float32")
    assert x.shape == y.shape
    if "INT4" in case:  # round half to even, then the low 4 bits (ONNX's data wraps)
        assert np.array_equal(y, (np.rint(x) + 8) % 16 - 8)
    else:  # the nearest E2M1 value, saturating at +-6
        grid = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6], dtype=np.float32)
        fin = np.isfinite(x)
        mag = np.minimum(np.abs(x[fin]), 6)
        best = np.min(np.abs(grid[None, :] - mag[:, None]), axis=1)
        assert np.all(np.isin(np.abs(y[fin]), grid))
        assert np.allclose(np.abs(np.abs(y[fin]) - mag), best)
