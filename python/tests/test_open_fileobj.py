"""mfmt.open(file object): read from the object's current position, as
np.load(f) reads it (numpy is the reference here), through mf_open_fd when
the object has a fileno (a regular file is mapped, a pipe read to its end)
and through its bytes when it has none (io.BytesIO)."""
import io
import os
import subprocess
import sys

import numpy as np
import pytest

import mfmt

A = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 7
PREFIX = b"\xa5" * 1001  # odd: the mapping starts at the page holding the position


def npy_bytes(a):
    buf = io.BytesIO()
    np.save(buf, a)
    return buf.getvalue()


def only_tensor(m):
    names = list(m)
    assert len(names) == 1
    return np.asarray(m[names[0]])


@pytest.mark.parametrize("pad", [0, 1001, 4096])
def test_regular_file_from_its_position(tmp_path, pad):
    p = tmp_path / "a.npy"
    p.write_bytes(b"\xa5" * pad + npy_bytes(A) + b"after")
    with open(p, "rb") as f:
        f.seek(pad)
        want = np.load(f)  # numpy's own reading of the object at that position
        f.seek(pad)
        with mfmt.open(f) as m:
            got = only_tensor(m)
            assert m.path == "a.npy"  # the object's file name
        np.testing.assert_array_equal(got, want)
        assert got.dtype == want.dtype and got.shape == want.shape
        # the object's position and buffering are as they were: reading on
        # gives the bytes at the position
        assert f.tell() == pad
        assert f.read(6) == b"\x93NUMPY"


def test_buffered_object_after_reads(tmp_path):
    # f has read (and buffered) past its logical position: the model still
    # starts at f.tell(), not where the descriptor stands
    p = tmp_path / "b.npy"
    p.write_bytes(PREFIX + npy_bytes(A))
    with open(p, "rb") as f:
        assert f.read(1001) == PREFIX
        assert os.lseek(f.fileno(), 0, os.SEEK_CUR) != 1001  # buffered ahead
        with mfmt.open(f) as m:
            np.testing.assert_array_equal(only_tensor(m), A)
        assert f.read(6) == b"\x93NUMPY"


def test_pipe():
    data = npy_bytes(A)
    writer = subprocess.Popen([sys.executable, "-c",
                               "import sys; sys.stdout.buffer.write(sys.stdin.buffer.read())"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    writer.stdin.write(data)
    writer.stdin.close()
    with mfmt.open(writer.stdout) as m:  # a BufferedReader over a pipe, nothing read yet
        np.testing.assert_array_equal(only_tensor(m), A)
    writer.stdout.close()
    assert writer.wait() == 0


def test_pipe_after_a_read():
    r, w = os.pipe()
    os.write(w, b"HEAD" + npy_bytes(A))
    os.close(w)
    with os.fdopen(r, "rb", buffering=0) as f:
        assert f.read(4) == b"HEAD"
        with mfmt.open(f) as m:
            np.testing.assert_array_equal(only_tensor(m), A)


def test_bytesio_from_its_position():
    f = io.BytesIO(b"xyz" + npy_bytes(A))
    f.seek(3)
    with mfmt.open(f) as m:
        np.testing.assert_array_equal(only_tensor(m), A)


def test_unsafe_pickle_from_file_object(tmp_path):
    p = tmp_path / "evil.pkl"
    # GLOBAL os.system, called: judged as from its path
    p.write_bytes(b"cos\nsystem\n(S'true'\ntR.")
    with open(p, "rb") as f:
        with pytest.raises(mfmt.UnsafeFileError):
            mfmt.open(f)


def test_nothing_after_the_position(tmp_path):
    p = tmp_path / "c.npy"
    p.write_bytes(npy_bytes(A))
    with open(p, "rb") as f:
        f.seek(0, os.SEEK_END)
        with pytest.raises(mfmt.Error):
            mfmt.open(f)
