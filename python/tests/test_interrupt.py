"""Ctrl-C interrupts a long operation that runs in C with the GIL released
and no Python callback: the library's progress hook takes the GIL and runs
the signal handler (PyErr_CheckSignals). A child process hashes a 16 GiB
sparse safetensors file (a hole reads as zeros: no disk, but ~10 s of
SHA-256) and gets SIGINT after 0.3 s."""

import subprocess
import sys

from conftest import PKG

CHILD = r"""
import json, os, signal, struct, sys, threading, time
sys.path.insert(0, PKG)
import mfmt
path = sys.argv[1]
n = 16 << 30
h = json.dumps({"big": {"dtype": "U8", "shape": [n], "data_offsets": [0, n]}}).encode()
h += b" " * (-len(h) % 8)
with open(path, "wb") as f:
    f.write(struct.pack("<Q", len(h)) + h)
    f.truncate(8 + len(h) + n)
threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
t0 = time.monotonic()
try:
    mfmt.hash(path)
    print("completed")
except KeyboardInterrupt:
    print("interrupted %.1f" % (time.monotonic() - t0))
"""


def test_ctrl_c_stops_a_long_hash(tmp_path):
    r = subprocess.run([sys.executable, "-c", CHILD.replace("PKG", repr(PKG)),
                        str(tmp_path / "big.safetensors")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("interrupted"), r.stdout
