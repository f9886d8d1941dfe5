#!/bin/sh
# The bounded run of tests/gate_oracle.py (CPython's C unpickler with
# recording stand-ins against `mfmt scan`'s judgement of the gated names,
# doc/scan.md "Gated names"): ORACLE_COUNT inputs, seed 24 (fewer under the
# sanitizers). A skip (no python3) is printed and counted.
CHECK_NAME=gate_oracle
. "$(dirname "$0")/check_lib.sh"
py=
for p in /usr/bin/python3 python3; do
  if command -v "$p" >/dev/null 2>&1; then py=$p; break; fi
done
if [ -z "$py" ]; then
  skip "no python3"
  check_result
  exit 0
fi
count=${ORACLE_COUNT:-3000}
case "$mfmt" in */asan/*) count=${ORACLE_COUNT:-800} ;; esac
exec "$py" tests/gate_oracle.py "$mfmt" "$count" 24
