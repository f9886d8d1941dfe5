"""Every operation as a Python function: results as objects that agree with
the mfmt command's JSON, outputs that read back right, progress callbacks
that are called and cancel (no partial output), Ctrl-C."""

import glob
import json
import os
import signal
import subprocess

import numpy as np
import pytest

import mfmt
from conftest import CORPUS, EXAMPLES, MFMT_CLI, ROOT, SHARED, case_dicts, needs_shared, torch_or_none

TINY = os.path.join(EXAMPLES, "tiny-llama.gguf")
TINY_ST = os.path.join(EXAMPLES, "tiny.safetensors")


def cli_json(*args):
    out = subprocess.run([MFMT_CLI, *args], capture_output=True, text=True)
    return json.loads(out.stdout)


def tensor_hashes(path, **kw):
    with mfmt.open(path, **kw) as m:
        return {n: m.hash_tensor(n) for n in m}


def leftovers(d):
    """Files in d (a failed write must leave none, not even a temporary)."""
    return sorted(os.listdir(d))


# ----------------------------------------------------------------- detect

@needs_shared
def test_detect_gives_the_manifest_format():
    for c in case_dicts("ok"):
        if c["format"] in ("hf-dir",):
            continue
        d = mfmt.detect(c["abspath"])
        assert d.format == c["format"] or (c["format"], d.format) == ("hdf5", "keras"), c["path"]
        assert d.detail


def test_detect_reads_bytes_not_names(tmp_path):
    p = tmp_path / "model.safetensors"
    p.write_bytes(open(TINY, "rb").read())
    assert mfmt.detect(p).format == "gguf"


# --------------------------------------------------------------- validate

@needs_shared
def test_validate():
    assert mfmt.validate(TINY).ok
    bad = sorted(glob.glob(os.path.join(CORPUS, "safetensors", "invalid", "*.safetensors")))
    assert bad
    for p in bad:
        v = mfmt.validate(p)
        assert not v.ok and v.problems, p
        assert all(pr.path for pr in v.problems)
        assert any(pr.offset is not None for pr in v.problems), p
        with pytest.raises(mfmt.FormatError):
            v.raise_if_invalid()


# ------------------------------------------------------------------- hash

HASHED = [TINY, TINY_ST] + [p for p in (
    os.path.join(CORPUS, "pytorch", "views.pt"),
    os.path.join(CORPUS, "numpy", "compressed.npz"),
    os.path.join(CORPUS, "hf-dir", "llama-tiny-sharded-bin")) if os.path.exists(p)]


@pytest.mark.parametrize("path", HASHED)
def test_hash_equals_the_cli(path):
    want = cli_json("hash", "--json", "--tensors", path)
    h = mfmt.hash(path, tensors=True)
    assert h.file == want.get("sha256")
    assert h.tensor_content == want["tensor_content"]
    assert h.tensors == want["tensors"]
    x = mfmt.hash(path, algo="xxh64")
    assert x.algo == "xxh64" and len(x.tensor_content) == 16 != len(h.tensor_content)


def test_hash_progress_is_called_and_cancels():
    calls = []
    mfmt.hash(TINY, tensors=True, progress=lambda d, t: calls.append((d, t)))
    assert calls and calls[-1][0] == calls[-1][1] > 0
    with pytest.raises(mfmt.CancelledError):
        mfmt.hash(TINY, progress=lambda d, t: False)

    class Boom(Exception):
        pass

    def boom(d, t):
        raise Boom()
    with pytest.raises(Boom):
        mfmt.hash(TINY, progress=boom)


# ------------------------------------------------------------------- scan

@needs_shared
def test_scan_agrees_with_the_cli():
    files = sorted(glob.glob(os.path.join(CORPUS, "pickle", "*", "*.pkl")))[:12]
    assert files
    for p in files:
        want = cli_json("scan", "--json", p)
        r = mfmt.scan(p)
        assert r.verdict == want["verdict"], p
        wf = want["files"][0]
        assert [g[0] for g in r.globals] == [g["name"] for g in wf["globals"]]
        assert [f.global_ for f in r.findings] == [f.get("global") for f in wf["findings"]]


@needs_shared
def test_unsafe_file_error_carries_findings_and_allow_unsafe_executes_nothing(tmp_path):
    p = os.path.join(CORPUS, "pickle", "malicious", "os_system.pkl")
    marker = tmp_path / "ran"
    with pytest.raises(mfmt.UnsafeFileError) as ei:
        mfmt.open(p)
    assert ei.value.verdict == "dangerous"
    assert any(f.global_ == "os.system" for f in ei.value.findings)
    with mfmt.open(p, allow_unsafe=True) as m:
        assert m.verdict == "dangerous"
    assert not marker.exists()


# ---------------------------------------------------------------- convert

@needs_shared
def test_convert_bin_to_safetensors_keeps_every_tensor(tmp_path):
    src = os.path.join(CORPUS, "pytorch", "state_dict.pt")
    out = tmp_path / "model.safetensors"
    calls = []
    mfmt.convert(src, out, progress=lambda d, t: calls.append(d))
    assert calls
    assert tensor_hashes(out) == tensor_hashes(src)
    assert mfmt.detect(out).format == "safetensors"


@needs_shared
def test_convert_refuses_a_dangerous_input_and_writes_nothing(tmp_path):
    src = sorted(glob.glob(os.path.join(CORPUS, "pickle", "malicious", "*.pt")) +
                 glob.glob(os.path.join(CORPUS, "pytorch", "module_*.pt")))[0]
    with pytest.raises(mfmt.UnsafeFileError):
        mfmt.convert(src, tmp_path / "x.safetensors")
    assert leftovers(tmp_path) == []


@needs_shared
def test_convert_cancelled_leaves_no_output(tmp_path):
    src = os.path.join(CORPUS, "pytorch", "state_dict.pt")
    with pytest.raises(mfmt.CancelledError):
        mfmt.convert(src, tmp_path / "x.safetensors", progress=lambda d, t: False)
    assert leftovers(tmp_path) == []


@needs_shared
def test_ctrl_c_interrupts_cleanly(tmp_path):
    src = os.path.join(CORPUS, "pytorch", "state_dict.pt")

    def interrupt(d, t):
        os.kill(os.getpid(), signal.SIGINT)  # as if the user pressed Ctrl-C
    with pytest.raises(KeyboardInterrupt):
        mfmt.convert(src, tmp_path / "x.safetensors", progress=interrupt)
    assert leftovers(tmp_path) == []


@needs_shared
def test_convert_shards(tmp_path):
    src = os.path.join(CORPUS, "hf-dir", "llama-tiny", "model.safetensors")
    if not os.path.exists(src):
        pytest.skip("no llama-tiny safetensors")
    out = tmp_path / "model.safetensors"
    mfmt.convert(src, out, max_shard_size="100KB")
    index = tmp_path / "model.safetensors.index.json"
    assert index.exists()
    assert len(glob.glob(str(tmp_path / "model-*-of-*.safetensors"))) >= 2
    assert tensor_hashes(index) == tensor_hashes(src)


@needs_shared
def test_convert_hf_dir_to_gguf(tmp_path):
    d = os.path.join(CORPUS, "hf-dir", "llama-tiny")
    out = tmp_path / "llama.gguf"
    mfmt.convert(d, out, type="f32")
    with mfmt.open(out) as m:
        assert m.format == "gguf"
        assert m.metadata["general.architecture"] == "llama"
        assert len(m) > 0


@needs_shared
def test_convert_unknown_bpe_hash_warns(tmp_path):
    """A tokenizer whose check-text hash llama.cpp's table does not know:
    named from its family, with a UserWarning saying so."""
    d = os.path.join(SHARED, "convert-ref-arch", "dirs", "starcoder2-tiny")
    if not os.path.isdir(d):
        pytest.skip(f"{d} is not here")
    with pytest.warns(UserWarning, match=r'tokenizer.ggml.pre = "starcoder", from the tokenizer'):
        mfmt.convert(d, tmp_path / "sc2.gguf")
    with mfmt.open(tmp_path / "sc2.gguf") as m:
        assert m.metadata["tokenizer.ggml.pre"] == "starcoder"


def test_convert_with_arch_file(tmp_path):
    """An architecture from a JSON file (doc/arch-file.md), both ways: Grok-1,
    which no built-in table has, gives llama.cpp's converter's bytes."""
    arch = os.path.join(ROOT, "tests", "data", "arch", "grok.json")
    ref = os.path.join(ROOT, "tests", "data", "arch_ref")
    out = tmp_path / "grok.gguf"
    mfmt.convert(os.path.join(ref, "dirs", "grok-tiny"), out, arch_file=arch)
    with open(out, "rb") as a, open(os.path.join(ref, "grok-tiny-f16.gguf"), "rb") as b:
        assert a.read() == b.read()
    back = tmp_path / "back"
    mfmt.convert(out, str(back) + "/", arch_file=arch)
    assert json.load(open(back / "config.json"))["architectures"] == ["GrokForCausalLM"]
    with pytest.raises(mfmt.Error, match=r"\$\.tokenizer"):
        bad = tmp_path / "bad.json"
        bad.write_text('{"mfmt_arch_file": 1, "architecture": "grok", "classes": ["GrokForCausalLM"], '
                       '"tokenizer": "nope", "tensors": [], "hparams": []}')
        mfmt.convert(os.path.join(ref, "dirs", "grok-tiny"), tmp_path / "x.gguf", arch_file=bad)
    with pytest.raises(mfmt.UsageError):
        mfmt.convert(os.path.join(ref, "dirs", "grok-tiny"), tmp_path / "x.safetensors", arch_file=arch)


# --------------------------------------------------------------- quantize

@pytest.fixture(scope="module")
def f16_gguf(tmp_path_factory):
    """A GGUF whose rows are whole Q8_0 blocks (hidden 64): the corpus's
    llama-tiny HF directory converted by mfmt.convert."""
    d = os.path.join(CORPUS, "hf-dir", "llama-tiny")
    if not os.path.isdir(d):
        pytest.skip(f"{d} is not here")
    out = tmp_path_factory.mktemp("gguf") / "llama-f16.gguf"
    mfmt.convert(d, out, type="f16")
    return str(out)


def test_quantize_and_dry_run(tmp_path, f16_gguf):
    out = tmp_path / "q8.gguf"
    r = mfmt.quantize(f16_gguf, out, "Q8_0")
    assert r.type == "Q8_0" and r.n_tensors == len(r.tensors) > 0
    assert r.out_file_bytes == os.path.getsize(out)
    with mfmt.open(out) as m:
        assert {m.info(t.name).dtype for t in r.tensors} == {t.dst for t in r.tensors}
    dry = mfmt.quantize(f16_gguf, None, "Q4_0", dry_run=True)
    conv = [t for t in dry.tensors if t.converted]
    assert conv and all(np.isfinite(t.rmse) and 0 < t.cosine <= 1.0000001 for t in conv)
    assert leftovers(tmp_path) == ["q8.gguf"]
    with pytest.raises(mfmt.Error):
        mfmt.quantize(f16_gguf, tmp_path / "x.gguf", "NOT_A_TYPE")
    assert leftovers(tmp_path) == ["q8.gguf"]


def _oracle_case(split, args, qtype):
    """A case of tests/data/quantize_split_ref.json (llama-quantize's hashes)."""
    with open(os.path.join(ROOT, "tests", "data", "quantize_split_ref.json")) as f:
        for c in json.load(f)["cases"]:
            if (c["split"], c["args"], c["type"], c["prep"]) == (split, args, qtype, ""):
                return c
    raise AssertionError("no such case")


def _sha256(path):
    import hashlib
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


@needs_shared
def test_quantize_copy_and_keep_split_as_llama_quantize(tmp_path):
    c = _oracle_case("--split-max-tensors 20", "--keep-split", "COPY")
    src = os.path.join(SHARED, c["input"])
    shards = mfmt.split(src, tmp_path / "in", max_tensors=20)
    assert [_sha256(p) for p in shards] == c["split_shards"]
    r = mfmt.quantize(shards[0], tmp_path / "out.gguf", "copy", keep_split=True)
    assert r.type == "COPY" and r.n_converted == 0
    outs = [str(tmp_path / f"out-{i:05d}-of-{len(shards):05d}.gguf") for i in range(1, len(shards) + 1)]
    assert [_sha256(p) for p in outs] == c["outputs"]
    assert r.out_file_bytes == sum(os.path.getsize(p) for p in outs)
    merged = _oracle_case("--split-max-tensors 20", "", "Q4_K_M")
    mfmt.quantize(shards[0], tmp_path / "one.gguf", "Q4_K_M")
    assert _sha256(tmp_path / "one.gguf") == merged["outputs"][0]


def test_dequantize_equals_float_reads(tmp_path, f16_gguf):
    q = tmp_path / "q8.gguf"
    mfmt.quantize(f16_gguf, q, "Q8_0")
    out = tmp_path / "f32.safetensors"
    r = mfmt.dequantize(q, out)
    assert r.n_tensors > 0
    with mfmt.open(q) as a, mfmt.open(out) as b:
        for n in a:
            assert np.array_equal(a.get_tensor(n, dtype="float32"), b[n]), n


# ------------------------------------------------------------ split/merge

def test_split_and_merge_round_trip(tmp_path):
    files = mfmt.split(TINY, tmp_path / "part", max_tensors=4)
    assert len(files) >= 3 and all(os.path.exists(f) for f in files)
    merged = tmp_path / "merged.gguf"
    mfmt.merge(files[0], merged)
    assert tensor_hashes(merged) == tensor_hashes(TINY)


# ------------------------------------------------------------------- diff

def test_diff(tmp_path, f16_gguf):
    same = mfmt.diff(f16_gguf, f16_gguf)
    assert same.same and len(same) > 0 and same.counts() == {mfmt.DIFF_SAME: len(same)}
    q = tmp_path / "q8.gguf"
    mfmt.quantize(f16_gguf, q, "Q8_0")
    d = mfmt.diff(f16_gguf, q)
    kinds = d.counts()
    assert kinds.get(mfmt.DIFF_VALUES, 0) > 0 and not d.same
    row = next(r for r in d if r.kind == mfmt.DIFF_VALUES)
    assert row.a[0] == "F16" and row.b[0] == "Q8_0" and row.max_abs > 0


# ------------------------------------------------------ estimate / plan

@needs_shared
def test_estimate_and_plan():
    d = os.path.join(CORPUS, "hf-dir", "qwen2-tiny")
    e = mfmt.estimate(d, ctx=4096)
    assert e.ctx == 4096 and e.kv_bytes > 0 and e.weight_bytes > 0
    assert e.total_bytes == e.weight_bytes + e.kv_bytes
    assert mfmt.estimate(d, ctx=8192).kv_bytes == 2 * e.kv_bytes
    p = mfmt.plan(d, ["cuda:0:60KB", "cpu:1GB"])
    assert set(p.device_map.values()) <= {"cuda:0", "cpu", "disk"}
    assert p.total > 0 and p.devices[0][0] == "cuda:0"


# -------------------------------------------------------------- save_file

def test_save_file_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    tensors = {"a": rng.standard_normal((3, 4)).astype(np.float32),
               "b": np.arange(10, dtype=np.int64)[::2],  # not contiguous
               "c": np.array(3.5, dtype=np.float16),
               "bits": np.array([0x3f80, 0x4000], dtype=np.uint16)}
    out = tmp_path / "x.safetensors"
    mfmt.save_file(tensors, out, {"format": "np"}, dtypes={"bits": "BF16"})
    with mfmt.safe_open(out) as f:
        assert f.metadata() == {"format": "np"}
        for k, v in tensors.items():
            assert np.array_equal(f.get_tensor(k), v), k
        assert f.model.info("bits").dtype == "BF16"
        assert f.get_slice("bits").get_dtype() == "BF16"
        assert np.array_equal(f.model.get_tensor("bits", dtype="float32"), [1.0, 2.0])
    with pytest.raises(OSError):
        mfmt.save_file(tensors, tmp_path / "no" / "such" / "dir.safetensors")
    assert leftovers(tmp_path) == ["x.safetensors"]


def test_save_file_takes_torch_tensors(tmp_path):
    torch = torch_or_none()
    if torch is None:
        pytest.skip("torch is not installed")
    sd = {"w": torch.randn(4, 3).to(torch.bfloat16), "b": torch.arange(3)}
    out = tmp_path / "t.safetensors"
    mfmt.save_file(sd, out)
    with mfmt.safe_open(out, framework="pt") as f:
        for k, v in sd.items():
            assert f.get_tensor(k).dtype == v.dtype and torch.equal(f.get_tensor(k), v)


# ------------------------------------------------------------------- edit

def test_edit_metadata_and_names(tmp_path):
    src = tmp_path / "in.gguf"
    src.write_bytes(open(TINY, "rb").read())
    before = tensor_hashes(src)
    first = list(before)[0]
    out = tmp_path / "out.gguf"
    r = mfmt.edit(src, out, set={"general.name": "edited", "mfmt.test": 7},
                  rename_tensor={first: first + ".renamed"})
    assert [c.key for c in r.changes][:2] == ["general.name", "mfmt.test"]
    assert r.data_bytes > 0
    with mfmt.open(out) as m:
        assert m.metadata["general.name"] == "edited" and m.metadata["mfmt.test"] == 7
        assert first + ".renamed" in m and first not in m
    after = tensor_hashes(out)
    assert after.pop(first + ".renamed") == before.pop(first) and after == before
    mfmt.edit(out, delete=["mfmt.test"])  # in place
    with mfmt.open(out) as m:
        assert "mfmt.test" not in m.metadata and m.metadata["general.name"] == "edited"
    dry = mfmt.edit(src, None, set={"general.name": "x"}, dry_run=True)
    assert dry.changes and mfmt.open(src).metadata["general.name"] != "x"
    with pytest.raises(mfmt.Error):
        mfmt.edit(src, None, delete=["no.such.key"])
    assert sorted(os.listdir(tmp_path)) == ["in.gguf", "out.gguf"]


@needs_shared
def test_convert_gguf_to_hf_dir_round_trips(tmp_path):
    """GGUF -> Hugging Face directory: the weights come back under
    transformers' names and convert to the same GGUF again."""
    src = os.path.join(SHARED, "convert-ref", "llama-tiny-f16.gguf")
    out = tmp_path / "llama-tiny"
    mfmt.convert(src, str(out) + "/")
    names = sorted(os.listdir(out))
    assert {"config.json", "tokenizer.model", "tokenizer_config.json",
            "model.safetensors"} <= set(names)
    with mfmt.safe_open(str(out / "model.safetensors"), framework="np") as f:
        assert "model.layers.0.self_attn.q_proj.weight" in f.keys()
    again = tmp_path / "again.gguf"
    mfmt.convert(out, again, type="f16")
    with open(src, "rb") as a, open(again, "rb") as b:
        assert a.read() == b.read()


@needs_shared
def test_convert_gguf_to_hf_dtype_and_refusal(tmp_path):
    src = os.path.join(SHARED, "convert-ref", "llama-tiny-q8_0.gguf")
    mfmt.convert(src, tmp_path / "q", to="hf", dtype="F32")
    m = mfmt.open(tmp_path / "q")
    assert {t.dtype for t in m.tensors.values()} == {"F32"}
    full = tmp_path / "full"
    full.mkdir()
    (full / "keep").write_text("x")
    with pytest.raises(mfmt.Error):
        mfmt.convert(src, str(full) + "/")
    assert (full / "keep").exists()


@needs_shared
def test_convert_writes_tied_weights_once(tmp_path):
    src = os.path.join(CORPUS, "pytorch", "tied_weights", "pytorch_model.bin")
    mfmt.convert(src, tmp_path / "a.safetensors")
    assert "lm_head.weight" not in mfmt.open(tmp_path / "a.safetensors").tensors
    mfmt.convert(src, tmp_path / "b.safetensors", keep_tied=True)
    assert "lm_head.weight" in mfmt.open(tmp_path / "b.safetensors").tensors
