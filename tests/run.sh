#!/bin/sh
# Runs each test program given and prints one closing line:
# "N passed, N failed, N skipped". Exit 1 if any check failed or a program
# crashed. A program's line is "RESULT name passed failed [skipped]"; one
# that counts no check and no skip fails (a suite must not vanish quietly),
# and its SKIP lines are shown. SUMMARY=FILE gets "passed failed skipped".
passed=0; failed=0; skipped=0; status=0
for t in "$@"; do
  out=$("$t" 2>&1); rc=$?
  line=$(printf '%s\n' "$out" | grep '^RESULT ' | tail -n 1)
  if [ -z "$line" ]; then
    printf '%s\n' "$out" | tail -n 30
    echo "CRASH $t (exit $rc, no RESULT line)"; failed=$((failed + 1)); status=1; continue
  fi
  set -- $line
  p=$3; f=$4; s=${5:-0}
  if [ $((p + f + s)) -eq 0 ]; then
    echo "FAIL $2: 0 checks and no counted skip"; f=1
  fi
  printf '%s\n' "$out" | grep -v '^RESULT ' | grep -E 'FAIL|ERROR|runtime error|Sanitizer|^SKIP' | head -n 40
  echo "$2: $p passed, $f failed, $s skipped"
  passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
  [ "$f" -eq 0 ] && [ "$rc" -eq 0 ] || status=1
done
echo "$passed passed, $failed failed, $skipped skipped"
[ -n "${SUMMARY:-}" ] && echo "$passed $failed $skipped" > "$SUMMARY"
exit $status
