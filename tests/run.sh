#!/bin/sh
# Runs each test program given and prints one closing line:
# "N passed, N failed". Exit 1 if any check failed or a program crashed.
passed=0; failed=0; status=0
for t in "$@"; do
  out=$("$t" 2>&1); rc=$?
  line=$(printf '%s\n' "$out" | grep '^RESULT ' | tail -n 1)
  if [ -z "$line" ]; then
    printf '%s\n' "$out" | tail -n 30
    echo "CRASH $t (exit $rc, no RESULT line)"; failed=$((failed + 1)); status=1; continue
  fi
  set -- $line
  printf '%s\n' "$out" | grep -v '^RESULT ' | grep -E 'FAIL|ERROR|runtime error|Sanitizer' | head -n 40
  echo "$2: $3 passed, $4 failed"
  passed=$((passed + $3)); failed=$((failed + $4))
  [ "$4" -eq 0 ] && [ "$rc" -eq 0 ] || status=1
done
echo "$passed passed, $failed failed"
[ -n "${SUMMARY:-}" ] && echo "$passed $failed" > "$SUMMARY"
exit $status
