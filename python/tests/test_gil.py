"""The GIL is released while libmfmt works: a thread blocked inside C (here
reading a named pipe) lets the main thread run — which is what writes the
pipe, so with the GIL held this would deadlock. Run in a child process with
a timeout, so a regression fails instead of hanging the suite."""

import os
import subprocess
import sys

from conftest import PKG

CHILD = r"""
import hashlib, os, sys, threading
sys.path.insert(0, PKG)
import mfmt
fifo = sys.argv[1]
data = os.urandom(1 << 20)
got = {}
t = threading.Thread(target=lambda: got.setdefault("h", mfmt.hash_file(fifo)))
t.start()
with open(fifo, "wb") as f:   # only runs if the worker released the GIL
    f.write(data)
t.join(20)
assert not t.is_alive()
assert got["h"] == hashlib.sha256(data).hexdigest()
print("ok")
""".replace("PKG", repr(PKG))


def test_a_thread_in_c_lets_python_run(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    r = subprocess.run([sys.executable, "-c", CHILD, str(fifo)], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr
