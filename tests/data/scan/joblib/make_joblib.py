#!/usr/bin/python3
"""make_joblib.py - the joblib fixtures of tests/test_scan_joblib.c, written
by the real joblib (Debian's python3-joblib) and numpy: joblib.dump with
raw arrays between the pickle's opcodes (NumpyArrayWrapper), object arrays
(a pickle inside the pickle), compressed files (zlib, gzip, bz2), and
dangerous twins (a callable of os in an object array). Each file is then
loaded back with joblib.load (the benign ones) to show the real loader
reads it. Run: /usr/bin/python3 make_joblib.py DIR; writes expected.txt
(file verdict) beside the files."""
import collections
import os
import sys

import joblib
import numpy as np

out = sys.argv[1]
expected = []


def dump(name, obj, verdict, **kw):
    path = os.path.join(out, name)
    joblib.dump(obj, path, **kw)
    if verdict == "safe":
        joblib.load(path)  # the real loader reads it back
    expected.append("%s %s" % (name, verdict))


dump("plain.joblib", {"w": np.arange(6, dtype=np.float32).reshape(2, 3),
                      "b": np.ones(3, dtype=np.int64), "name": "m"}, "safe")
dump("fortran.joblib", np.asfortranarray(np.arange(12, dtype=np.float64).reshape(3, 4)), "safe")
dump("many.joblib", [np.zeros((0,), dtype=np.int8), np.array(3.5), np.arange(40, dtype=np.uint8),
                     np.array(["ab", "c"]), np.array([True, False])], "safe")
dump("objarr.joblib", [np.array(["a", 1, None], dtype=object), np.zeros(2)], "safe")
dump("counter.joblib", {"c": collections.Counter("abca"), "d": collections.OrderedDict(a=np.ones(2))},
     "safe")
dump("zlib.joblib", {"w": np.arange(4.0)}, "safe", compress=3)
dump("gzip.joblib", {"w": np.arange(4.0)}, "safe", compress=("gzip", 3))
dump("bz2.joblib", {"w": np.arange(4.0)}, "unknown", compress=("bz2", 3))
dump("evil-objarr.joblib", [np.arange(3), np.array([os.system, "x"], dtype=object)], "dangerous")
dump("evil-zlib.joblib", {"w": np.arange(3), "f": os.system}, "dangerous", compress=3)
dump("evil-after.joblib", [np.arange(3.0), os.system], "dangerous")
with open(os.path.join(out, "expected.txt"), "w") as f:
    f.write("\n".join(expected) + "\n")
