"""The CLI's options the package gained (python/README.md's audit table),
each checked against the `mfmt` command's own output on the same input:
the same bytes written, the same JSON, the same refusals."""

import filecmp
import json
import os
import shutil
import subprocess

import numpy as np
import pytest

import mfmt
from conftest import CORPUS, MFMT_CLI, ROOT, SHARED

DATA = os.path.join(ROOT, "tests", "data")
L8 = os.path.join(DATA, "mlx", "models", "llama8-f32")
LLAMA_TINY = os.path.join(CORPUS, "hf-dir", "llama-tiny")
Q8_GGUF = os.path.join(SHARED, "convert-ref", "llama-tiny-q8_0.gguf")
F16_REF = os.path.join(SHARED, "convert-ref", "llama-tiny-f16.gguf")
MIX_F16 = os.path.join(SHARED, "quant-ref", "mix", "model-F16.gguf")
DS_TINY = os.path.join(DATA, "train", "deepspeed-llama-tiny")
ZERO2 = os.path.join(DATA, "train", "deepspeed", "zero2")

needs_cli = pytest.mark.skipif(not os.access(MFMT_CLI, os.X_OK), reason=f"no {MFMT_CLI}")
needs_tiny = pytest.mark.skipif(not os.path.isdir(LLAMA_TINY), reason=f"{LLAMA_TINY} is not here")


def cli(*args, env=None):
    """(exit code, stdout, stderr) of the mfmt command."""
    e = dict(os.environ, MFMT_NO_PROGRESS="1")
    e.update(env or {})
    r = subprocess.run([MFMT_CLI, *map(str, args)], capture_output=True, text=True, env=e,
                       timeout=600)
    return r.returncode, r.stdout, r.stderr


def cli_ok(*args, **kw):
    rc, out, err = cli(*args, **kw)
    assert rc == 0, f"mfmt {' '.join(map(str, args))}: {rc}: {err}"
    return out


def same_tree(a, b):
    """Every file of directory a equals b's (names and bytes); returns the names."""
    na, nb = sorted(os.listdir(a)), sorted(os.listdir(b))
    assert na == nb
    for n in na:
        assert filecmp.cmp(os.path.join(a, n), os.path.join(b, n), shallow=False), n
    return na


def same_file(a, b):
    assert filecmp.cmp(a, b, shallow=False), f"{a} differs from {b}"


def cli_error_line(err):
    """The library's message as the CLI prints it, less the 'mfmt: ' prefix."""
    lines = [l for l in err.splitlines() if l.startswith("mfmt: ")]
    assert lines, err
    return lines[0][len("mfmt: "):]


# -------------------------------------------------------------------- MLX

@needs_cli
@pytest.mark.parametrize("cli_args,kw", [
    (["--quantize"], dict(quantize=True)),
    (["--q-bits", "3", "--quant-predicate", "mixed_3_6"],
     dict(q_bits=3, quant_predicate="mixed_3_6")),
    (["--q-bits", "8", "--q-group-size", "32", "--mlx-kernel", "metal"],
     dict(q_bits=8, q_group_size=32, mlx_kernel="metal")),
    (["--dtype", "bf16"], dict(dtype="bf16")),
    ([], {}),
], ids=["quantize", "mixed_3_6", "q8-g32-metal", "bf16", "plain"])
def test_convert_mlx_writes_the_clis_bytes(tmp_path, cli_args, kw):
    cli_ok("convert", "-q", L8, tmp_path / "cli", "--mlx", *cli_args)
    got = mfmt.convert(L8, tmp_path / "py", mlx=True, **kw)
    assert got == str(tmp_path / "py")
    names = same_tree(tmp_path / "cli", tmp_path / "py")
    assert "config.json" in names and "model.safetensors" in names
    assert mfmt.detect(tmp_path / "py").format == ("mlx" if kw.get("quantize") or
                                                  kw.get("q_bits") else "hf-dir")


@needs_cli
@needs_tiny
def test_convert_mlx_from_gguf_lossless_and_dequantize_back(tmp_path):
    """--lossless (a GGUF's Q8_0 as MLX's GGUF loader makes it), then that
    MLX directory back to GGUF through the library's own temporary
    directory, and --dequantize: every output the CLI's bytes."""
    if not os.path.exists(Q8_GGUF):
        pytest.skip(f"{Q8_GGUF} is not here")
    cli_ok("convert", "-q", Q8_GGUF, tmp_path / "cli", "--mlx", "--lossless")
    mfmt.convert(Q8_GGUF, tmp_path / "py", to="mlx", lossless=True)
    same_tree(tmp_path / "cli", tmp_path / "py")
    assert mfmt.detect(tmp_path / "py").format == "mlx"
    cli_ok("convert", "-q", tmp_path / "py", tmp_path / "cli-deq", "--mlx", "--dequantize")
    mfmt.convert(tmp_path / "py", tmp_path / "py-deq", mlx=True, dequantize=True)
    same_tree(tmp_path / "cli-deq", tmp_path / "py-deq")
    # MLX -> GGUF: dequantized beside OUT, converted, the directory removed
    cli_ok("convert", "-q", tmp_path / "py", tmp_path / "cli.gguf", "--type", "f32")
    got = mfmt.convert(tmp_path / "py", tmp_path / "py.gguf", type="f32")
    assert got == str(tmp_path / "py.gguf")
    same_file(tmp_path / "cli.gguf", tmp_path / "py.gguf")
    assert not [n for n in os.listdir(tmp_path) if "mfmt-hf" in n or ".mlx." in n]


@needs_cli
def test_convert_mlx_refusals_as_the_cli(tmp_path):
    # MLX options without MLX output: both refuse before writing anything
    rc, _, err = cli("convert", L8, tmp_path / "x.safetensors", "--q-bits", "4")
    assert rc == 2 and "are for MLX output" in err
    with pytest.raises(mfmt.UsageError, match="options of MLX output"):
        mfmt.convert(L8, tmp_path / "x.safetensors", q_bits=4)
    assert not os.path.exists(tmp_path / "x.safetensors")
    with pytest.raises(mfmt.UsageError, match="mlx_kernel"):
        mfmt.convert(L8, tmp_path / "m", mlx=True, mlx_kernel="gpu")
    # a value the library refuses: the same message from both
    rc, _, err = cli("convert", L8, tmp_path / "cli", "--mlx", "--q-bits", "7")
    assert rc != 0
    with pytest.raises(mfmt.Error) as e:
        mfmt.convert(L8, tmp_path / "py", mlx=True, q_bits=7)
    assert str(e.value) == cli_error_line(err)
    assert not os.path.exists(tmp_path / "py") and not os.path.exists(tmp_path / "cli")


# ------------------------------------------------------ GGUF converter flags

@needs_cli
@needs_tiny
@pytest.mark.parametrize("cli_args,kw", [
    (["--layout", "2026-02"], dict(layout="2026-02")),
    (["--model-name", "Tiny Test", "--metadata", os.path.join(DATA, "convert_flags", "override.json")],
     dict(model_name="Tiny Test", metadata=os.path.join(DATA, "convert_flags", "override.json"))),
    (["--vocab-only"], dict(vocab_only=True)),
], ids=["layout", "name-metadata", "vocab-only"])
def test_convert_gguf_flags_write_the_clis_bytes(tmp_path, cli_args, kw):
    cli_ok("convert", "-q", LLAMA_TINY, tmp_path / "cli.gguf", *cli_args)
    got = mfmt.convert(LLAMA_TINY, tmp_path / "py.gguf", **kw)
    assert got == str(tmp_path / "py.gguf")
    same_file(tmp_path / "cli.gguf", tmp_path / "py.gguf")


@needs_cli
@needs_tiny
def test_convert_gguf_default_name_and_split(tmp_path):
    (tmp_path / "cli").mkdir()
    (tmp_path / "py").mkdir()
    cli_ok("convert", "-q", LLAMA_TINY, "--outfile", tmp_path / "cli")
    got = mfmt.convert(LLAMA_TINY, outfile=tmp_path / "py")
    assert os.path.dirname(got) == str(tmp_path / "py")
    same_tree(tmp_path / "cli", tmp_path / "py")
    assert os.listdir(tmp_path / "py") == [os.path.basename(got)]
    # --split-max-tensors: the file written, then split as llama-gguf-split
    cli_ok("convert", "-q", LLAMA_TINY, tmp_path / "cli" / "s.gguf", "--split-max-tensors", "5")
    first = mfmt.convert(LLAMA_TINY, tmp_path / "py" / "s.gguf", split_max_tensors=5)
    names = same_tree(tmp_path / "cli", tmp_path / "py")
    shards = [n for n in names if n.startswith("s-")]
    assert len(shards) > 1 and "s.gguf" not in names
    assert first == str(tmp_path / "py" / f"s-00001-of-{len(shards):05d}.gguf")
    # a limit the file fits in: the file stays as it is
    assert mfmt.convert(LLAMA_TINY, tmp_path / "one.gguf", split_max_size="1G") == \
        str(tmp_path / "one.gguf")
    with pytest.raises(mfmt.UsageError):
        mfmt.convert(LLAMA_TINY, tmp_path / "v.gguf", vocab_only=True, split_max_tensors=2)
    with pytest.raises(mfmt.UsageError, match="options of GGUF output"):
        mfmt.convert(LLAMA_TINY, tmp_path / "x.safetensors", model_name="x")
    with pytest.raises(mfmt.UsageError, match="layout"):
        mfmt.convert(LLAMA_TINY, tmp_path / "x.gguf", layout="2027")


# ----------------------------------------------------- training checkpoints

@needs_cli
@needs_tiny
def test_checkpoint_to_gguf_and_hf_dir_as_the_cli(tmp_path):
    """ZeRO-3 partitions of llama-tiny, with --config: GGUF in one pass (the
    very file llama.cpp's converter wrote from the original directory) and
    a Hugging Face directory, both the CLI's bytes."""
    cfg = os.path.join(LLAMA_TINY, "config.json")
    cli_ok("convert", "-q", "--config", cfg, "--type", "f16", DS_TINY, tmp_path / "cli.gguf")
    got = mfmt.convert(DS_TINY, tmp_path / "py.gguf", config=cfg, type="f16")
    assert got == str(tmp_path / "py.gguf")
    same_file(tmp_path / "cli.gguf", tmp_path / "py.gguf")
    if os.path.exists(F16_REF):
        same_file(F16_REF, tmp_path / "py.gguf")
    assert sorted(os.listdir(tmp_path)) == ["cli.gguf", "py.gguf"]  # nothing left beside
    cli_ok("convert", "-q", "--config", cfg, DS_TINY, f"{tmp_path}/cli/")
    assert mfmt.convert(DS_TINY, f"{tmp_path}/py/", config=cfg) == f"{tmp_path}/py/"
    names = same_tree(tmp_path / "cli", tmp_path / "py")
    assert {"config.json", "tokenizer.model", "model.safetensors"} <= set(names)
    # a non-empty OUT/ is refused by both, and left as it was
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep").write_text("x")
    rc, _, err = cli("convert", "-q", DS_TINY, f"{tmp_path}/full/")
    assert rc == 2 and "not an empty directory" in err
    with pytest.raises(mfmt.UsageError) as e:
        mfmt.convert(DS_TINY, f"{tmp_path}/full/")
    assert str(e.value) == cli_error_line(err)
    assert os.listdir(tmp_path / "full") == ["keep"]


@needs_cli
@pytest.mark.parametrize("cli_args,kw", [
    (["--exclude-frozen-parameters"], dict(exclude_frozen_parameters=True)),
    (["--from-module-states"], dict(from_module_states=True)),
    (["--threads", "3"], dict(threads=3)),
    (["--dtype", "bf16"], dict(dtype="bf16")),
], ids=["exclude-frozen", "module-states", "threads", "bf16"])
def test_checkpoint_to_safetensors_options_as_the_cli(tmp_path, cli_args, kw):
    cli_ok("convert", "-q", *cli_args, ZERO2, tmp_path / "cli.safetensors")
    mfmt.convert(ZERO2, tmp_path / "py.safetensors", **kw)
    same_file(tmp_path / "cli.safetensors", tmp_path / "py.safetensors")


@needs_cli
def test_checkpoint_options_change_the_output():
    """--exclude-frozen-parameters leaves tensors out (zero_to_fp32.py's
    reference without them), so the option reached the reader."""
    with mfmt.open(ZERO2) as m:
        every = set(m)
    ref = mfmt.load_file(os.path.join(DATA, "train", "deepspeed", "zero2.nofrozen.ref.pt"))
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "x.safetensors")
        mfmt.convert(ZERO2, out, exclude_frozen_parameters=True)
        got = mfmt.load_file(out)
        assert set(got) == set(ref) and set(got) < every
        for k in ref:
            assert np.array_equal(np.asarray(got[k]), np.asarray(ref[k])), k


# ---------------------------------------------------------------- estimate

@needs_cli
def test_estimate_weight_note_as_the_cli(tmp_path):
    """A pre-quantized checkpoint: estimate says how it counted (the
    quantizer's kept bytes), the CLI's JSON weight_note word for word."""
    d = tmp_path / "gptq"
    d.mkdir()
    src = os.path.join(DATA, "prequant", "gptq-4bit-g32-sym")
    shutil.copy(os.path.join(src, "model.safetensors"), d)
    cfg = json.load(open(os.path.join(src, "config.json")))
    cfg.update(num_hidden_layers=1, num_attention_heads=1)
    (d / "config.json").write_text(json.dumps(cfg))
    want = json.loads(cli_ok("estimate", "--json", d))
    got = mfmt.estimate(d)
    assert got.weight_note and got.weight_note == want["weight_note"]
    assert got.weight_bytes == want["weight_bytes"] and got.total_bytes == want["total_bytes"]
    if os.path.exists(MIX_F16):  # a plain model: no note, as the CLI prints none
        assert mfmt.estimate(MIX_F16).weight_note is None
        assert "weight_note" not in json.loads(cli_ok("estimate", "--json", MIX_F16))


# ---------------------------------------------------------- quantize, split

needs_mix = pytest.mark.skipif(not os.path.exists(MIX_F16), reason=f"{MIX_F16} is not here")


@needs_cli
@needs_mix
def test_quantize_override_kv_and_imatrix_filters_as_the_cli(tmp_path):
    imat = os.path.join(os.path.dirname(MIX_F16), "imatrix.dat")
    cli_ok("quantize", "-q", "--override-kv", "general.name=str:renamed", "--override-kv",
           "test.n=int:7", "--override-kv", "test.flag=bool:true", "--imatrix", imat,
           "--include-weights", "attn_q", MIX_F16, tmp_path / "cli.gguf", "Q4_K_M", "2")
    r = mfmt.quantize(MIX_F16, tmp_path / "py.gguf", "Q4_K_M", threads=2, imatrix=imat,
                      override_kv={"general.name": "renamed", "test.n": 7, "test.flag": True},
                      include_weights=["attn_q"])
    same_file(tmp_path / "cli.gguf", tmp_path / "py.gguf")
    assert 0 < r.imatrix_used < r.n_converted  # only the attn_q tensors used it
    with mfmt.open(tmp_path / "py.gguf") as m:
        assert m.metadata["general.name"] == "renamed" and m.metadata["test.n"] == 7
    cli_ok("quantize", "-q", "--imatrix", imat, "--exclude-weights", "ffn", MIX_F16,
           tmp_path / "cli2.gguf", "Q4_K_M", "2")
    mfmt.quantize(MIX_F16, tmp_path / "py2.gguf", "Q4_K_M", threads=2, imatrix=imat,
                  exclude_weights="ffn")
    same_file(tmp_path / "cli2.gguf", tmp_path / "py2.gguf")
    with pytest.raises(mfmt.UsageError):
        mfmt.quantize(MIX_F16, tmp_path / "x.gguf", "Q4_K_M", include_weights=["a"],
                      exclude_weights=["b"])
    # an override llama-quantize refuses (a string past 127 bytes): the
    # library's message, as the CLI prints it
    rc, _, err = cli("quantize", "-q", "--override-kv", "k=str:" + "A" * 200, MIX_F16,
                     tmp_path / "e.gguf", "Q8_0")
    assert rc == 2
    with pytest.raises(mfmt.UsageError) as e:
        mfmt.quantize(MIX_F16, tmp_path / "e2.gguf", "Q8_0", override_kv={"k": "A" * 200})
    assert str(e.value) == cli_error_line(err)
    assert not os.path.exists(tmp_path / "e2.gguf")


@needs_cli
@needs_mix
def test_split_plan_and_no_tensor_first_split_as_the_cli(tmp_path):
    (tmp_path / "cli").mkdir()
    (tmp_path / "py").mkdir()
    cli_ok("split", "-q", "--split-max-tensors", "8", "--no-tensor-first-split", MIX_F16,
           tmp_path / "cli" / "m")
    parts = mfmt.split(MIX_F16, tmp_path / "py" / "m", max_tensors=8, no_tensor_first_split=True)
    same_tree(tmp_path / "cli", tmp_path / "py")
    assert parts.files[0].n_tensors == 0 and parts[0] == parts.files[0].path
    # dry run: the plan the CLI prints, nothing written
    out = cli_ok("split", "--dry-run", "--split-max-tensors", "8", MIX_F16, tmp_path / "d")
    plan = mfmt.split(MIX_F16, tmp_path / "d", max_tensors=8, dry_run=True)
    assert not [n for n in os.listdir(tmp_path) if n.startswith("d-")]
    # "split 00001: n_tensors = 8, total_size = 0M", one line per file
    want = [int(line.split("n_tensors = ")[1].split(",")[0]) for line in out.splitlines()
            if line.startswith("split ")]
    assert [f.n_tensors for f in plan.files] == want and len(want) > 1
    n_tensors, n_files = mfmt.merge(parts[0], tmp_path / "x.gguf", dry_run=True)
    out = cli_ok("merge", "--dry-run", parts[0], tmp_path / "x.gguf")
    assert out.startswith(f"would write {tmp_path / 'x.gguf'}: {n_tensors} tensors from "
                          f"{n_files} files")
    assert not os.path.exists(tmp_path / "x.gguf")


# -------------------------------------------------------------- manifests

@needs_cli
@needs_mix
@pytest.mark.parametrize("algo,cli_args", [
    ("sha256", []), ("all", ["--all"]), (["xxh64", "uuid"], ["--algo", "xxh64,uuid"])])
def test_manifest_as_the_cli(tmp_path, algo, cli_args):
    want = cli_ok("hash", "--manifest", "-", *cli_args, MIX_F16)
    assert mfmt.manifest(MIX_F16, algo=algo) == want
    want = cli_ok("hash", "--manifest", "-", "--no-layer", *cli_args, MIX_F16)
    assert mfmt.manifest(MIX_F16, algo=algo, no_layer=True, out=tmp_path / "m.txt") == want
    assert (tmp_path / "m.txt").read_text() == want


@needs_cli
@needs_mix
def test_check_manifest_as_the_cli(tmp_path):
    man = tmp_path / "m.txt"
    mfmt.manifest(MIX_F16, algo="all", out=man)
    rc, out, _ = cli("hash", "--check", man, "--json", MIX_F16)
    got = mfmt.check_manifest(MIX_F16, man)
    want = json.loads(out)
    assert rc == got.code == want["exit"] == 0 and got.ok and got.outcome == want["result"]
    assert got.lines == [mfmt.ManifestLine(**l) for l in want["lines"]]
    rc, out, _ = cli("hash", "--check", man, "--algo", "xxh64,uuid", "--json", MIX_F16)
    got = mfmt.check_manifest(MIX_F16, man, algo=["xxh64", "uuid"])
    assert got.lines == [mfmt.ManifestLine(**l) for l in json.loads(out)["lines"]]
    # one digest changed: Mismatch, exit code 1
    text = man.read_text().splitlines()
    k, h, name = text[3].split()
    text[3] = text[3].replace(h, "0" * len(h))
    man.write_text("\n".join(text) + "\n")
    rc, out, _ = cli("hash", "--check", man, MIX_F16)
    got = mfmt.check_manifest(MIX_F16, man)
    assert rc == got.code == 1 and not got.ok
    bad = [l for l in got.lines if l.result != "Ok"]
    assert [(l.kind, l.name) for l in bad] == [(k, name)]
    assert f"{name}  -  Mismatch" in out
    rc, _, _ = cli("hash", "--check", tmp_path / "none.txt", MIX_F16)
    assert rc == mfmt.check_manifest(MIX_F16, tmp_path / "none.txt").code == 5
    with pytest.raises(mfmt.UsageError):
        mfmt.manifest(MIX_F16, algo="md5")


# ----------------------------------------------------- error against original

def _num(x):
    """report --json's numbers: JSON has no infinity (null)."""
    return None if x is None or x in (float("inf"), float("-inf")) else x


def _same_stats(got, want):
    assert got.tensors_compared == want["tensors_compared"]
    assert got.parameters == want["parameters"]
    for k in ("rmse", "rel_error", "snr_db", "cosine"):
        g, w = _num(getattr(got, k)), want[k]
        assert (g is None) == (w is None) and (g is None or g == pytest.approx(w, rel=1e-12)), k


@needs_cli
@pytest.mark.parametrize("model,original", [
    (os.path.join(DATA, "report_against", "llama-tiny-Q4_K_M.gguf"),
     os.path.join(SHARED, "convert-ref", "llama-tiny-f32.gguf")),
    (Q8_GGUF, LLAMA_TINY),  # an HF directory against a GGUF: the converter's tables
    (F16_REF, F16_REF),     # equal: SNR inf (null in JSON), rmse 0
], ids=["q4_k_m", "hf-dir", "self"])
def test_error_against_equals_report_json(model, original):
    if not (os.path.exists(model) and os.path.exists(original)):
        pytest.skip(f"{model} or {original} is not here")
    want = json.loads(cli_ok("report", "--json", "--no-scan", "--no-hash", model,
                             "--against", original))["against"]
    got = mfmt.error_against(model, original)
    _same_stats(got.total, want)
    assert got.original == want["original"]
    assert got.mapped == (want["mapping"] == "converter tables (GGUF -> HF)")
    for k in ("only_original", "only_model", "shape_mismatch", "incomparable"):
        assert getattr(got, k) == want[k], k
    assert [l.layer for l in got.layers] == [l["layer"] for l in want["layers"]]
    for g, w in zip(got.layers, want["layers"]):
        _same_stats(g, w)
    assert len(got.tensors) == len(want["tensors"]) > 0
    for g, w in zip(got.tensors, want["tensors"]):
        assert (g.name, g.dtype_original, g.n) == (w["name"], w["dtype_original"], w["n"])
        assert got.mapped or g.dtype_model == w["dtype_model"]
        for k in ("rmse", "max_abs", "rel_error", "snr_db", "cosine"):
            gv, wv = _num(getattr(g, k)), w[k]
            assert (gv is None) == (wv is None) and (gv is None or gv == pytest.approx(wv, rel=1e-12))
    assert got.worst == sorted(got.worst, key=lambda w: -w[1]) and len(got.worst) <= 5


@needs_cli
def test_error_against_refusals_as_the_cli(tmp_path):
    """No tensor of the same shape: both refuse with the library's message."""
    other = tmp_path / "other.safetensors"
    mfmt.save_file({"x": np.zeros(3, dtype=np.float32)}, other)
    rc, _, err = cli("report", "--json", "--no-scan", "--no-hash", other, "--against",
                     os.path.join(ROOT, "examples", "tiny.safetensors"))
    assert rc == 1
    with pytest.raises(mfmt.FormatError) as e:
        mfmt.error_against(other, os.path.join(ROOT, "examples", "tiny.safetensors"))
    assert str(e.value) == cli_error_line(err) and e.value.path == str(other)
    with pytest.raises(FileNotFoundError):
        mfmt.error_against(tmp_path / "none.gguf", other)


# ------------------------------------------------------- diff, inspect --graph

ARCH_REF = os.path.join(DATA, "arch_ref")
GROK_DIR = os.path.join(ARCH_REF, "dirs", "grok-tiny")
GROK_GGUF = os.path.join(ARCH_REF, "grok-tiny-f16.gguf")
GROK_ARCH = os.path.join(DATA, "arch", "grok.json")


@needs_cli
def test_diff_mapped_as_the_cli():
    """An HF directory against a GGUF: the GGUF read through an arch file
    (Grok-1 has no built-in table) gives the CLI's rows; without the file
    the converter cannot map it, which the CLI notes and Python warns."""
    want = json.loads(cli_ok("diff", "--json", "--arch-file", GROK_ARCH, GROK_DIR, GROK_GGUF))
    got = mfmt.diff(GROK_DIR, GROK_GGUF, arch_file=GROK_ARCH)
    assert got.mapped and want["summary"]["mapping"] == "arch file (GGUF -> HF)"
    assert sorted(r.name for r in got) == sorted(t["name"] for t in want["tensors"])
    assert len(got) == 45 and all(r.max_abs == 0 for r in got)
    rc, _, err = cli("diff", "--json", GROK_DIR, GROK_GGUF)
    assert "not mapped through the converter" in err
    with pytest.warns(UserWarning, match="not mapped through the converter"):
        plain = mfmt.diff(GROK_DIR, GROK_GGUF)
    assert not plain.mapped and plain.counts().get(mfmt.DIFF_ONLY_A, 0) > 0
    # the converter's own tables, and --no-map
    if os.path.exists(LLAMA_TINY) and os.path.exists(F16_REF):
        m = mfmt.diff(LLAMA_TINY, F16_REF)
        assert m.mapped and len(m) > 0 and all(r.max_abs == 0 for r in m)
        names = json.loads(cli("diff", "--json", "--no-map", LLAMA_TINY, F16_REF)[1])["tensors"]
        raw = mfmt.diff(LLAMA_TINY, F16_REF, map=False)
        assert not raw.mapped and [r.name for r in raw] == [t["name"] for t in names]
    with pytest.raises(mfmt.UsageError):
        mfmt.diff(GROK_GGUF, GROK_GGUF, arch_file=GROK_ARCH)  # not an HF/GGUF pair
    with pytest.raises(mfmt.UsageError):
        mfmt.diff(GROK_DIR, GROK_GGUF, map=False, arch_file=GROK_ARCH)
    if os.path.exists(LLAMA_TINY) and os.path.exists(F16_REF):  # the file of another family
        rc, _, err = cli("diff", "--json", "--arch-file", GROK_ARCH, LLAMA_TINY, F16_REF)
        with pytest.raises(mfmt.Error) as e:
            mfmt.diff(LLAMA_TINY, F16_REF, arch_file=GROK_ARCH)
        assert rc == 2 and str(e.value) == cli_error_line(err) and '"grok"' in str(e.value)


@needs_cli
def test_error_against_arch_file_as_report():
    want = json.loads(cli_ok("report", "--json", "--no-scan", "--no-hash", GROK_GGUF, "--against",
                             GROK_DIR, "--arch-file", GROK_ARCH))["against"]
    got = mfmt.error_against(GROK_GGUF, GROK_DIR, arch_file=GROK_ARCH)
    assert got.mapped and got.total.tensors_compared == want["tensors_compared"] == 45
    _same_stats(got.total, want)
    rc, _, err = cli("report", "--json", "--no-scan", "--no-hash", GROK_GGUF, "--against", GROK_GGUF,
                     "--arch-file", GROK_ARCH)
    with pytest.raises(mfmt.UsageError) as e:
        mfmt.error_against(GROK_GGUF, GROK_GGUF, arch_file=GROK_ARCH)
    assert rc == 2 and str(e.value) == cli_error_line(err)

@needs_cli
@needs_mix
def test_diff_metadata_as_the_cli(tmp_path):
    q2 = os.path.join(os.path.dirname(MIX_F16), "model-Q2_K.gguf")
    mfmt.edit(MIX_F16, tmp_path / "e.gguf", set={"general.name": "other", "x.n": "u32:3"})
    for other in (q2, str(tmp_path / "e.gguf")):
        # (exit 1: they differ)
        want = json.loads(cli("diff", "--metadata-only", "--all", "--json", MIX_F16,
                              other)[1])["metadata"]
        got = mfmt.diff_metadata(MIX_F16, other)
        assert [(r.key, r.kind) for r in got] == [(w["key"], w["result"]) for w in want]
        for r, w in zip(got, want):
            for side in ("a", "b"):
                v = getattr(r, side)
                if side not in w:
                    assert v is None
                elif not isinstance(w[side]["value"], list):
                    assert v == w[side]["value"], (r.key, side)
    assert {r.kind for r in mfmt.diff_metadata(MIX_F16, MIX_F16)} == {"same"}


@needs_cli
def test_model_graph_as_inspect_graph():
    onnx = [os.path.join(CORPUS, "onnx", n) for n in sorted(os.listdir(os.path.join(CORPUS, "onnx")))
            if n.endswith(".onnx")] if os.path.isdir(os.path.join(CORPUS, "onnx")) else []
    if not onnx:
        pytest.skip("no ONNX files in the corpus")
    for p in onnx[:5]:
        rc, out, _ = cli("inspect", "--graph", p)
        if rc != 0:
            continue
        with mfmt.open(p, allow_unsafe=True) as m:
            assert m.graph() == out, p
    with mfmt.open(os.path.join(ROOT, "examples", "tiny.safetensors")) as m:
        rc, _, err = cli("inspect", "--graph", os.path.join(ROOT, "examples", "tiny.safetensors"))
        with pytest.raises(mfmt.UsageError) as e:
            m.graph()
        assert rc == 2 and str(e.value) in err


# ------------------------------------------------------ README's examples

@needs_tiny
def test_readme_examples_run(tmp_path, monkeypatch):
    """python/README.md's block of the CLI's other options, run as written
    in a folder holding files of those names (the Hub block is test_hub's)."""
    import re
    text = open(os.path.join(ROOT, "python", "README.md"), encoding="utf-8").read()
    block = re.search(r"### The CLI's other options.*?```python\n(.*?)```", text, re.S).group(1)
    need = {"hf_dir": LLAMA_TINY, "q8.gguf": Q8_GGUF, "ckpt": DS_TINY,
            "q4.gguf": os.path.join(DATA, "report_against", "llama-tiny-Q4_K_M.gguf"),
            "f32.gguf": os.path.join(SHARED, "convert-ref", "llama-tiny-f32.gguf")}
    for name, src in need.items():
        if not os.path.exists(src):
            pytest.skip(f"{src} is not here")
        os.symlink(src, tmp_path / name)
    (tmp_path / "out").mkdir()
    monkeypatch.chdir(tmp_path)
    results = {}
    for line in block.splitlines():
        code = line.split("#")[0].strip()
        if code:
            exec(code, {"mfmt": mfmt}, results)  # noqa: S102 (our own README)
    assert mfmt.detect("mlx4").format == "mlx" and mfmt.detect("mlx_q8").format == "mlx"
    assert len([n for n in os.listdir("out") if n.endswith(".gguf")]) > 1
    assert os.path.exists("ckpt.gguf") and os.path.exists("ckpt_hf/config.json")
    assert mfmt.check_manifest("f32.gguf", "f32.manifest").code == 0
    assert mfmt.check_record("hf_dir", "rec.json").ok


# ------------------------------------------------------------- mix rules

NEW_REF = os.path.join(SHARED, "convert-ref-new")


@needs_cli
@pytest.mark.skipif(not os.path.isdir(NEW_REF), reason="no ../shared/convert-ref-new")
def test_mix_rules_as_the_cli(tmp_path):
    """Qwen3.5's attn_qkv: the default rules give llama-quantize ecbcb7ea's
    file (its SHA-256 recorded in tests/data/hf_new), b10256's rules put it
    in attn_v's category; the CLI's --mix-rules writes the same bytes, and
    estimate counts the types each writes."""
    import hashlib
    want = json.load(open(os.path.join(DATA, "hf_new", "llama_quantize_ecbcb7ea.json")))["outputs"]
    src = os.path.join(NEW_REF, "qwen35-tiny-f16.gguf")
    sha = lambda p: hashlib.sha256(open(p, "rb").read()).hexdigest()  # noqa: E731
    mfmt.quantize(src, tmp_path / "d.gguf", "Q4_K_M")
    assert sha(tmp_path / "d.gguf") == want["qwen35-tiny"]["sha256"]
    r = mfmt.quantize(src, tmp_path / "b.gguf", "Q4_K_M", mix_rules="b10256")
    cli_ok("quantize", "-q", "--mix-rules", "b10256", src, tmp_path / "c.gguf", "Q4_K_M")
    assert sha(tmp_path / "b.gguf") == sha(tmp_path / "c.gguf") != sha(tmp_path / "d.gguf")
    with mfmt.open(tmp_path / "b.gguf") as m:
        b_bytes = sum(t.nbytes for t in m.tensors.values())
    assert mfmt.estimate(src, type="Q4_K_M", mix_rules="b10256").weight_bytes == b_bytes
    assert r.n_tensors > 0
    with pytest.raises(mfmt.UsageError):
        mfmt.quantize(src, tmp_path / "x.gguf", "Q4_K_M", mix_rules="b9999")
    rc, _, err = cli("quantize", "--mix-rules", "b9999", src, tmp_path / "x.gguf", "Q4_K_M")
    assert rc == 2 and "--mix-rules" in err
MMPROJ_DIR = os.path.join(DATA, "mmproj", "dirs", "qwen2vl-tiny")


@needs_cli
def test_with_mmproj_alone_and_refused(tmp_path):
    """An mmproj GGUF back to its HF vision half: the CLI's bytes; with_mmproj=
    refused for other targets and for a text GGUF given as the mmproj."""
    mm = tmp_path / "mm.gguf"
    cli_ok("convert", MMPROJ_DIR, mm, "--mmproj")
    a, b = tmp_path / "a" / "qwen2vl-tiny", tmp_path / "b" / "qwen2vl-tiny"
    cli_ok("convert", mm, str(b) + "/")
    mfmt.convert(mm, str(a) + "/")
    for f in ("config.json", "preprocessor_config.json", "model.safetensors"):
        assert filecmp.cmp(a / f, b / f, shallow=False), f
    with pytest.raises(mfmt.UsageError):
        mfmt.convert(mm, tmp_path / "x.safetensors", with_mmproj=mm)
    rc, _, err = cli("convert", mm, str(tmp_path / "c") + "/", "--with-mmproj", mm)
    assert rc != 0 and "is an mmproj file" in err
    with pytest.raises(mfmt.Error, match="is an mmproj file"):
        mfmt.convert(mm, str(tmp_path / "d") + "/", with_mmproj=mm)


# ------------------------------------------- mmproj, Mistral's own format

def _sha(p):
    import hashlib
    return hashlib.sha256(open(p, "rb").read()).hexdigest()


def test_convert_mmproj_is_the_converters(tmp_path):
    """convert(mmproj=True) (the CLI's --mmproj): the vision tower as
    llama.cpp's converter (ecbcb7ea) wrote it (tests/data/mmproj)."""
    want = json.load(open(os.path.join(DATA, "mmproj", "expected.json")))["outputs"]
    for key in ("gemma3-vl-tiny-f16", "qwen2vl-tiny-q8_0"):
        w = want[key]
        out = mfmt.convert(os.path.join(DATA, "mmproj", "dirs", w["dir"]), tmp_path / f"{key}.gguf",
                           type=w["outtype"], mmproj=True)
        assert _sha(out) == w["sha256"], key
    with pytest.raises(mfmt.UsageError):
        mfmt.convert(os.path.join(DATA, "mmproj", "dirs", "gemma3-vl-tiny"), tmp_path / "x.safetensors",
                     mmproj=True)


def test_convert_mistral_format_is_the_converters(tmp_path):
    """mistral_format=True (--mistral-format) and by itself: the bytes of
    llama.cpp's converter with --mistral-format (tests/data/hf_mistral);
    mistral_format=False on a directory without HF weights is refused."""
    want = json.load(open(os.path.join(DATA, "hf_mistral", "expected.json")))["outputs"]
    w = want["mistral-tekken-tiny-f16"] if "mistral-tekken-tiny-f16" in want else next(iter(want.values()))
    src = os.path.join(DATA, "hf_mistral", "dirs", w["dir"])
    assert _sha(mfmt.convert(src, tmp_path / "a.gguf", type=w["type"], mistral_format=True)) == w["sha256"]
    assert _sha(mfmt.convert(src, tmp_path / "b.gguf", type=w["type"])) == w["sha256"]
    with pytest.raises(mfmt.Error):
        mfmt.convert(src, tmp_path / "c.gguf", type=w["type"], mistral_format=False)
