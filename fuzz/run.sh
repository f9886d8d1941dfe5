#!/bin/sh
# Runs each libFuzzer harness built by `make fuzz` for SECONDS seconds.
#   sh fuzz/run.sh SECONDS [NAME...]      (NAME: gguf, safetensors, ...; default all)
# Harness build/fuzz/bin/fuzz_NAME starts from the seeds in fuzz/seeds/NAME/
# (and fuzz/NAME.dict when there is one), copied into a scratch corpus
# build/fuzz/corpus/NAME/ that keeps growing across runs. Crashes, leaks and
# timeouts land in build/fuzz/artifacts/NAME/ and fail the run (exit 1).
# Env: FUZZ_MAX_LEN (32768), FUZZ_TIMEOUT (10 s per input).
set -u
secs=${1:-20}
[ $# -gt 0 ] && shift
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$root/build/fuzz/bin
max_len=${FUZZ_MAX_LEN:-32768}
timeout=${FUZZ_TIMEOUT:-10}
if [ $# -gt 0 ]; then names="$*"; else
  names=$(for b in "$bin"/fuzz_*; do [ -x "$b" ] && basename "$b" | sed 's/^fuzz_//'; done)
fi
[ -n "$names" ] || { echo "fuzz: no harness in $bin (run make fuzz)"; exit 1; }

stat() { # stat FILE KEY -> value of libFuzzer's final "stat::KEY: N"
  sed -n "s/^stat::$2: *//p" "$1" | tail -n 1
}

# UBSan findings stop the run like ASan ones do.
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
status=0
summary=""
for n in $names; do
  exe=$bin/fuzz_$n
  [ -x "$exe" ] || { echo "fuzz: $exe missing"; status=1; continue; }
  corpus=$root/build/fuzz/corpus/$n
  art=$root/build/fuzz/artifacts/$n
  log=$root/build/fuzz/logs/$n.log
  mkdir -p "$corpus" "$art" "$(dirname "$log")"
  [ -d "$root/fuzz/seeds/$n" ] && cp -n "$root/fuzz/seeds/$n"/* "$corpus"/ 2>/dev/null
  dict=""
  [ -f "$root/fuzz/$n.dict" ] && dict="-dict=$root/fuzz/$n.dict"
  echo "fuzz: $n for ${secs}s (log: build/fuzz/logs/$n.log)"
  "$exe" -max_total_time="$secs" -max_len="$max_len" -timeout="$timeout" \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$art/" $dict \
    "$corpus" >"$log" 2>&1
  rc=$?
  runs=$(stat "$log" number_of_executed_units)
  eps=$(stat "$log" average_exec_per_sec)
  rss=$(stat "$log" peak_rss_mb)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 | sed 's/cov: //')
  files=$(ls "$corpus" | wc -l)
  if [ $rc -eq 0 ]; then result=ok; else
    result="FINDING (exit $rc)"; status=1
    grep -E 'ERROR|SUMMARY|runtime error|Test unit written' "$log" | head -n 8
  fi
  summary="$summary$(printf '%-14s %10s runs %8s/s  cov %6s  corpus %5s  rss %5s MB  %s' \
    "$n" "${runs:-?}" "${eps:-?}" "${cov:-?}" "$files" "${rss:-?}" "$result")
"
done
echo "fuzz summary (${secs}s each):"
printf '%s' "$summary"
[ $status -eq 0 ] && echo "fuzz: no findings" || echo "fuzz: FINDINGS: see build/fuzz/artifacts/"
exit $status
