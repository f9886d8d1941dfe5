"""Every tensor of every file and directory under ../shared/corpus and
../shared/real: the array Python gives (mfmt.open(p)[name], a zero-copy view
or the decoded stream) hashes to what `mfmt hash --tensors` prints for it.
A view is only right where the stored bytes are the canonical ones (issue
23: a sparse TFLite tensor's view showed 512 bytes of other data); the C
side of the same check (mf_tensor_read, mf_tensor_data) is
tests/test_every_tensor.c."""

import hashlib
import json
import os
import subprocess

import numpy as np
import pytest

import mfmt
from conftest import CORPUS, MFMT_CLI, REAL, needs_shared

pytestmark = needs_shared

SKIP_SUFFIXES = (".json", ".md", ".py")


def every_path():
    """Each file and directory below the corpus and the real files."""
    out = []
    for root in (CORPUS, REAL):
        for d, dirs, files in os.walk(root):
            out += [os.path.join(d, x) for x in dirs]
            out += [os.path.join(d, x) for x in files if not x.endswith(SKIP_SUFFIXES)]
    return sorted(out)


PATHS = every_path()


_CLI = {}


def cli_tensor_hashes(path):
    """{name: sha256} from `mfmt hash --tensors --jsonl`, None when it
    fails; run once over all the paths, up to 200 per process."""
    if not _CLI:
        for i in range(0, len(PATHS), 200):
            r = subprocess.run([MFMT_CLI, "hash", "--tensors", "--jsonl", *PATHS[i:i + 200]],
                               capture_output=True, text=True, check=False)
            for line in r.stdout.splitlines():
                o = json.loads(line)
                _CLI[o["path"]] = o["tensors"]
        assert _CLI, "mfmt hash printed nothing"
    return _CLI.get(path)


def array_sha256(arr):
    a = np.ascontiguousarray(arr)
    if a.dtype.byteorder == ">":
        a = a.astype(a.dtype.newbyteorder("<"))
    return hashlib.sha256(a.tobytes()).hexdigest()


def test_the_walk_finds_the_files():
    assert len(PATHS) > 300


@pytest.mark.parametrize("path", PATHS, ids=lambda p: os.path.relpath(p, os.path.dirname(CORPUS)))
def test_python_array_hashes_to_the_cli(path):
    want = cli_tensor_hashes(path)
    if want is None:  # the CLI refuses it: Python must refuse it too
        with pytest.raises(mfmt.Error):
            with mfmt.open(path, allow_unsafe=True) as m:
                for name in m:
                    m.get_tensor(name)
        return
    with mfmt.open(path, allow_unsafe=True) as m:
        assert sorted(m.keys()) == sorted(want)
        for name, sha in want.items():
            info = m.info(name)
            if info.dtype == "STRING":  # no fixed-size array: refused, said so
                with pytest.raises(mfmt.UnsupportedError):
                    m.get_tensor(name)
                continue
            arr = m.get_tensor(name)
            assert array_sha256(arr) == sha, f"{name} ({info.dtype}, mapped={info.mapped})"
            if not arr.flags.writeable:  # a view: only where the tensor is plain
                assert info.mapped, name
