"""Hub names, the Hub cache, downloads and remote reads from Python, each
against the `mfmt` command on the same cache: a loopback Hub
(tests/hub_server.py, 127.0.0.1 only, bounded lifetime) serves acme/dl
with the files tests/test_remote.c uses; the CLI fills one cache, the
package another, and the two must be the same (the layout huggingface_hub's
snapshot_download writes, tests/data/hub)."""

import json
import re
import os
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest

import mfmt
from conftest import EXAMPLES, MFMT_CLI, ROOT

needs_cli = pytest.mark.skipif(not os.access(MFMT_CLI, os.X_OK), reason=f"no {MFMT_CLI}")


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    """(hub port, served tree): the loopback Hub, stopped after the module."""
    root = tmp_path_factory.mktemp("hub")
    tree = root / "tree"
    (tree / "acme" / "dl" / "sub").mkdir(parents=True)
    shutil.copy(os.path.join(EXAMPLES, "tiny.safetensors"), tree / "acme" / "dl")
    shutil.copy(os.path.join(EXAMPLES, "tiny-llama.gguf"), tree / "acme" / "dl")
    (tree / "acme" / "dl" / "config.json").write_text('{"model_type": "llama"}\n')
    (tree / "acme" / "dl" / "sub" / "tokenizer.json").write_text('{"version": "1.0"}\n')
    (tree / "acme" / "big").mkdir(parents=True)  # 4 MiB of tensor data
    mfmt.save_file({"w": np.arange(1 << 20, dtype=np.float32)},
                   tree / "acme" / "big" / "big.safetensors")
    ports = root / "ports"
    with open(ports, "w") as out:
        proc = subprocess.Popen([sys.executable, os.path.join(ROOT, "tests", "hub_server.py"),
                                 "--root", str(tree), "--log", str(root / "log"), "--token", "tok",
                                 "--lifetime", "300"], stdout=out)
    try:
        for _ in range(300):
            text = ports.read_text().split()
            if len(text) == 2:
                break
            assert proc.poll() is None, "hub_server.py exited"
            time.sleep(0.1)
        else:
            pytest.fail("hub_server.py did not start")
        yield int(text[0]), tree
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def env_for(cache, port):
    return {"HF_TOKEN": "", "HF_HUB_CACHE": str(cache), "HF_HOME": str(cache.parent),
            "HF_ENDPOINT": f"http://127.0.0.1:{port}", "MFMT_NO_PROGRESS": "1"}


def cli(env, *args):
    r = subprocess.run([MFMT_CLI, *map(str, args)], capture_output=True, text=True,
                       env=dict(os.environ, **env), timeout=300)
    return r.returncode, r.stdout, r.stderr


def layout(cache):
    return subprocess.run(["sh", os.path.join(ROOT, "tests", "hub_layout.sh"), str(cache)],
                          capture_output=True, text=True, check=True).stdout


@needs_cli
def test_download_cache_scan_verify_as_the_cli(hub, tmp_path, monkeypatch):
    port, tree = hub
    a, b = tmp_path / "a" / "hub", tmp_path / "b" / "hub"
    a.mkdir(parents=True)
    b.mkdir(parents=True)
    rc, out, err = cli(env_for(a, port), "download", "--json", "acme/dl")
    assert rc == 0, err
    want = json.loads(out)
    for k, v in env_for(b, port).items():
        monkeypatch.setenv(k, v)
    got = mfmt.download("acme/dl")
    # the same cache, line for line, and huggingface_hub's own layout
    assert layout(a) == layout(b)
    with open(os.path.join(ROOT, "tests", "data", "hub", "snapshot_download.layout")) as f:
        assert layout(b) == f.read()
    assert got.snapshot == str(b / "models--acme--dl" / "snapshots" / got.commit)
    files = json.dumps(want)
    for f in got.files:
        assert f.state == "downloaded" and f.path in files and f.blob in files
    again = mfmt.download("acme/dl")
    assert [f.state for f in again.files] == ["present"] * len(got.files)
    # cache scan / verify: the CLI's JSON numbers
    rc, out, _ = cli(env_for(b, port), "cache", "scan", "--json")
    scan = json.loads(out)
    rep = mfmt.cache_scan()
    assert rc == 0 and rep.cache_dir == str(b) and len(rep.repos) == 1
    r = rep.repos[0]
    assert r.repo_id == "acme/dl" and r.revisions[0].refs == ["main"]
    assert r.size_on_disk == rep.size_on_disk
    assert str(rep.size_on_disk) in json.dumps(scan) and r.revisions[0].commit in json.dumps(scan)
    rc, out, _ = cli(env_for(b, port), "cache", "verify", "--json")
    ver = mfmt.cache_verify()
    assert rc == 0 and ver.ok and ver.problems == [] and ver.n_blobs_checked == 4
    assert str(ver.bytes_checked) in out
    # a blob changed on disk: both call it corrupt
    blob = os.path.join(got.snapshot, "config.json")
    real = os.path.realpath(blob)
    os.chmod(real, 0o644)
    with open(real, "a") as f:
        f.write(" ")
    rc, out, _ = cli(env_for(b, port), "cache", "verify", "--json", "acme/dl")
    ver = mfmt.cache_verify("acme/dl")
    assert rc == 1 and not ver.ok
    assert [p.kind for p in ver.problems] == ["corrupt"] and ver.problems[0].path in out
    with pytest.raises(mfmt.Error) as e:
        mfmt.cache_verify("acme/none")
    rc, _, err = cli(env_for(b, port), "cache", "verify", "acme/none")
    assert rc == 2 and str(e.value) in err


@needs_cli
def test_hub_names_open_from_the_cache(hub, tmp_path, monkeypatch):
    port, tree = hub
    cache = tmp_path / "hub"
    cache.mkdir()
    for k, v in env_for(cache, port).items():
        monkeypatch.setenv(k, v)
    mfmt.download("acme/dl", include=["*.safetensors"])
    t = mfmt.hub_resolve("hf://acme/dl/tiny.safetensors")
    assert t.kind == "cached" and t.repo_id == "acme/dl" and t.file == "tiny.safetensors"
    assert os.path.realpath(t.path) == os.path.realpath(
        os.path.join(cache, "models--acme--dl", "snapshots", t.commit, "tiny.safetensors"))
    rc, out, _ = cli(env_for(cache, port), "hash", "--json", "--tensors",
                     "hf://acme/dl/tiny.safetensors")
    want = json.loads(out)
    got = mfmt.hash("hf://acme/dl/tiny.safetensors", tensors=True)
    assert rc == 0 and got.tensors == want["tensors"] and got.file == want["sha256"]
    with mfmt.open("hf://acme/dl/tiny.safetensors") as m:
        assert list(m) == list(want["tensors"])
    # a file the cache lacks: no network until configure_remote()
    with pytest.raises(mfmt.Error):
        mfmt.open("hf://acme/dl/tiny-llama.gguf")
    assert mfmt.hub_resolve("hf://acme/dl/tiny-llama.gguf", allow_remote=True).kind == "remote"
    # a bare ORG/NAME that is neither a path nor cached stays a missing path
    with pytest.raises(FileNotFoundError):
        mfmt.open("nosuch/model")


@needs_cli
def test_remote_reads_with_a_byte_budget_as_the_cli(hub, tmp_path, monkeypatch):
    """configure_remote: a Hub file not in the cache read by HTTP ranges
    (the header only), and a budget too small refused with the CLI's words."""
    port, tree = hub
    cache = tmp_path / "hub"
    cache.mkdir()
    env = env_for(cache, port)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    name = "hf://acme/dl/tiny-llama.gguf"
    rc, out, err = cli(env, "inspect", "--json", name)
    assert rc == 0, err
    try:
        before = mfmt.remote_bytes_read()
        mfmt.configure_remote(max_bytes=mfmt._hub.CLI_MAX_BYTES)
        with mfmt.open(name) as m:
            assert m.format == "gguf" and list(m) == [t["name"] for t in json.loads(out)["tensors"]]
        assert mfmt.remote_bytes_read() > before
        big = "hf://acme/big/big.safetensors"
        mfmt.configure_remote(max_bytes=1000000)
        rc, _, err = cli(env, "hash", "--content", "--max-bytes", "1000000", big)
        assert rc == 2 and "byte budget of 1000000" in err
        with pytest.raises(mfmt.Error) as e:
            mfmt.hash(big, file=False)
        # the same file, byte offset and rule (the process's running total aside)
        def rule(t):
            return re.sub(r"\d+ read so far", "N read so far", t)
        assert isinstance(e.value, mfmt.FileError) and e.value.offset == 65536
        assert rule(str(e.value)) in rule(err)
        with pytest.raises(mfmt.UsageError):
            mfmt.configure_remote(timeout=0)
    finally:
        mfmt.configure_remote(max_bytes=0)
        mfmt._hub._remote["on"] = False


@needs_cli
def test_delivery_records_as_the_cli(hub, tmp_path, monkeypatch):
    """--record of a cache snapshot (repo and commit recorded) and
    --check-record of a copy: the CLI's record byte for byte, its verdicts."""
    port, tree = hub
    cache = tmp_path / "hub"
    cache.mkdir()
    env = env_for(cache, port)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    mfmt.download("acme/dl")
    rc, _, err = cli(env, "hash", "--record", tmp_path / "cli.json", "--tensors", "acme/dl")
    assert rc == 0, err
    rec = mfmt.record("acme/dl", tmp_path / "py.json", tensors=True)
    assert (tmp_path / "py.json").read_bytes() == (tmp_path / "cli.json").read_bytes()
    assert rec["origin"]["repo"] == "acme/dl" and len(rec["files"]) == 4
    # a copy with one file re-saved (metadata changed, tensors the same) and one missing
    copy = tmp_path / "copy"
    shutil.copytree(mfmt.download("acme/dl").snapshot, copy, symlinks=False)
    os.chmod(copy / "tiny-llama.gguf", 0o644)
    mfmt.edit(copy / "tiny-llama.gguf", set={"general.name": "changed"})
    os.unlink(copy / "config.json")
    rc, out, _ = cli(env, "hash", "--check-record", tmp_path / "cli.json", "--json", copy)
    want = json.loads(out)
    got = mfmt.check_record(copy, tmp_path / "py.json")
    assert rc == got.code == 3 and not got.ok and got.repo == want["repo"] == "acme/dl"
    assert [(f.path, f.result, f.meaning) for f in got.files] == \
        [(f["path"], f["result"], f["meaning"]) for f in want["files"]]
    assert {f.path: f.result for f in got.files}["tiny-llama.gguf"] == "file-differs-tensors-same"
    # an unreadable record: an outcome (5), with the CLI's words
    (tmp_path / "bad.json").write_text("{")
    rc, _, err = cli(env, "hash", "--check-record", tmp_path / "bad.json", copy)
    got = mfmt.check_record(copy, tmp_path / "bad.json")
    assert rc == got.code == 5 and got.error and got.error in err
