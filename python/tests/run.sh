#!/bin/sh
# Runs the Python package's tests (pytest) and prints one closing line in
# tests/run.sh's form, "python: N passed, N failed (N skipped)"; with
# SUMMARY=FILE also writes "PASSED FAILED" there for make test's total.
# Exit 1 when a test failed or pytest could not run.
py=${PYTHON:-python3}
dir=$(cd "$(dirname "$0")" && pwd)
if ! "$py" -c 'import numpy, pytest' 2>/dev/null; then
  echo "python: cannot run: $py lacks numpy or pytest (apt-get install python3-numpy python3-pytest)"
  echo "python: 0 passed, 1 failed"
  [ -n "${SUMMARY:-}" ] && echo "0 1" > "$SUMMARY"
  exit 1
fi
out=$(cd "$dir/.." && "$py" -m pytest -q -p no:cacheprovider -rfE tests 2>&1); rc=$?
printf '%s\n' "$out" | grep -E '^(FAILED|ERROR) ' | head -n 40
last=$(printf '%s\n' "$out" | grep -E '(passed|failed|error|skipped|no tests ran)' | tail -n 1)
num() { printf '%s\n' "$last" | grep -oE "[0-9]+ $1" | grep -oE '^[0-9]+' || echo 0; }
passed=$(num passed); failed=$(num failed); errors=$(num error); skipped=$(num skipped)
failed=$((failed + errors))
if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
  printf '%s\n' "$out" | tail -n 30
  failed=1 # pytest itself failed (collection, import)
fi
echo "python: $passed passed, $failed failed ($skipped skipped)"
[ -n "${SUMMARY:-}" ] && echo "$passed $failed $skipped" > "$SUMMARY"
[ "$failed" -eq 0 ]
