#!/bin/sh
# Runs tests/npy_diff.py (mfmt against numpy.lib.format on .npy headers)
# when a Python with numpy is there; says so and passes when not.
MFMT=${1:-build/mfmt}
for py in /usr/bin/python3 python3; do
  if command -v "$py" >/dev/null 2>&1 && "$py" -c 'import numpy' 2>/dev/null; then
    exec "$py" "$(dirname "$0")/npy_diff.py" "$MFMT" "$(dirname "$0")/../../shared"
  fi
done
echo "npy_diff: skipped (no python3 with numpy; apt-get install python3-numpy)"
