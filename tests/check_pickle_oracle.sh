#!/bin/sh
# The bounded run of tests/pickle_oracle.py (CPython's C unpickler in every
# loader's reading mode against `mfmt scan`, doc/scan.md "The oracle"): the
# corpus, ../shared/real, tests/data/scan and tests/data/scan_benign, then
# ORACLE_COUNT generated and mutated inputs (seed 18; fewer under the
# sanitizers, whose mfmt is slower). A skip (no python3) is printed and
# counted as a pass of nothing.
CHECK_NAME=pickle_oracle
. "$(dirname "$0")/check_lib.sh"
py=
for p in /usr/bin/python3 python3; do
  if command -v "$p" >/dev/null 2>&1; then py=$p; break; fi
done
if [ -z "$py" ]; then
  echo "pickle_oracle: skipped (no python3)"
  check_result
  exit 0
fi
count=${ORACLE_COUNT:-6000}
case "$mfmt" in */asan/*) count=${ORACLE_COUNT:-1500} ;; esac
exec "$py" tests/pickle_oracle.py "$mfmt" --count "$count" --seed 18 --seconds 100 \
  --files ../shared/corpus ../shared/real tests/data/scan tests/data/scan_benign \
  tests/data/scan_gate tests/data/train/deepspeed tests/data/train/dcp113 2>/dev/null
