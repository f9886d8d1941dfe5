# check_lib.sh - the preamble the tests/check_*.sh scripts share (sourced
# after setting CHECK_NAME): root (the repository, also the working
# directory), mfmt (MFMT, default build/mfmt, made absolute), the pass/fail
# counters with ok and bad (bad prints "FAIL NAME: why"), skip (prints
# "SKIP NAME: why", counted), a temporary directory tmp removed at exit, and
# check_result for the closing "RESULT NAME PASSED FAILED SKIPPED" line that
# tests/run.sh counts.
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2
mfmt=${MFMT:-build/mfmt}
case "$mfmt" in /*) ;; *) mfmt="$root/$mfmt" ;; esac
passed=0
failed=0
skipped=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL $CHECK_NAME: $*"; }
skip() { skipped=$((skipped + 1)); echo "SKIP $CHECK_NAME: $*"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
check_result() {
  echo "RESULT $CHECK_NAME $passed $failed $skipped"
  [ "$failed" -eq 0 ]
}
