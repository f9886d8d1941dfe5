#!/bin/sh
# Differential tests against Python itself, when it is there (a message and
# a pass when not): tests/npy_diff.py (.npy headers against
# numpy.lib.format) and tests/pickle_diff.py (names the pickle machine
# reaches against CPython's unpickler).
MFMT=${1:-build/mfmt}
here=$(dirname "$0")
for py in /usr/bin/python3 python3; do
  if command -v "$py" >/dev/null 2>&1; then
    "$py" "$here/pickle_diff.py" "$MFMT" || exit 1
    if "$py" -c 'import numpy' 2>/dev/null; then
      exec "$py" "$here/npy_diff.py" "$MFMT" "$here/../../shared"
    fi
    echo "npy_diff: skipped (no numpy for $py; apt-get install python3-numpy)"
    exit 0
  fi
done
echo "pickle_diff, npy_diff: skipped (no python3)"
