#!/bin/sh
# check_batch.sh - doc/batch.md's GNU parallel recipe on a 1,000-file tree:
# every file gets exactly one result keyed by its input; a run cut in half
# and resumed with --skip-done ends with the same 1,000 results, the done
# ones not run again. Skipped (and counted) when GNU parallel is absent.
CHECK_NAME=batch
. "$(dirname "$0")/check_lib.sh"

if ! command -v parallel >/dev/null 2>&1 || ! parallel --version 2>/dev/null | grep -q GNU; then
  echo "skip: GNU parallel is not installed (apt-get install parallel)"
  echo "RESULT $CHECK_NAME 0 0"
  exit 0
fi
tree="$tmp/mirror"
mkdir -p "$tree"
i=0
while [ $i -lt 1000 ]; do
  d="$tree/org$((i % 10))/model$i"
  mkdir -p "$d"
  case $((i % 4)) in
    0) cp examples/tiny-llama.gguf "$d/model.gguf" ;;
    *) cp examples/tiny.safetensors "$d/model.safetensors" ;;
  esac
  i=$((i + 1))
done
find "$tree" -type f | sort > "$tmp/files.txt"
[ "$(wc -l < "$tmp/files.txt")" -eq 1000 ] && ok || bad "the tree has not 1000 files"

# the recipe, as doc/batch.md writes it
run_recipe() {
  parallel --pipe -N 250 -j 2 "$mfmt" scan --jsonl -@ --skip-done "$tmp/results.jsonl" \
    < "$1" >> "$tmp/results.jsonl"
}
touch "$tmp/results.jsonl"
run_recipe "$tmp/files.txt" || bad "the parallel run failed"
n=$(wc -l < "$tmp/results.jsonl")
[ "$n" -eq 1000 ] && ok || bad "1000 results expected, got $n"
uniq=$(sed 's/.*"input":"\([^"]*\)".*/\1/' "$tmp/results.jsonl" | sort -u | wc -l)
[ "$uniq" -eq 1000 ] && ok || bad "1000 distinct inputs expected, got $uniq"
sed 's/.*"input":"\([^"]*\)".*/\1/' "$tmp/results.jsonl" | sort | cmp -s - "$tmp/files.txt" \
  && ok || bad "the inputs are not the listed files"
safe=$(grep -c '"verdict":"safe"' "$tmp/results.jsonl")
[ "$safe" -eq 1000 ] && ok || bad "1000 safe verdicts expected, got $safe"

# idempotent: a second run does nothing
run_recipe "$tmp/files.txt"
[ "$(wc -l < "$tmp/results.jsonl")" -eq 1000 ] && ok || bad "a re-run added results"

# resumable: half the results lost (a killed run), then the same command
head -n 437 "$tmp/results.jsonl" > "$tmp/half" && mv "$tmp/half" "$tmp/results.jsonl"
run_recipe "$tmp/files.txt"
n=$(wc -l < "$tmp/results.jsonl")
uniq=$(sed 's/.*"input":"\([^"]*\)".*/\1/' "$tmp/results.jsonl" | sort -u | wc -l)
[ "$n" -eq 1000 ] && [ "$uniq" -eq 1000 ] && ok || bad "resume: $n results, $uniq distinct"

# a failed input is reported on its line and tried again on resume
echo "$tree/missing.safetensors" >> "$tmp/files.txt"
run_recipe "$tmp/files.txt"
grep -q '"error":true.*missing.safetensors' "$tmp/results.jsonl" && ok || bad "no error line"
run_recipe "$tmp/files.txt"
[ "$(grep -c 'missing.safetensors' "$tmp/results.jsonl")" -eq 2 ] && ok \
  || bad "the failed input was not tried again"

# hash lines are keyed by input and content
printf '%s\n' examples/tiny.safetensors | "$mfmt" hash --jsonl --content -@ > "$tmp/h.jsonl"
grep -q '"input":"examples/tiny.safetensors"' "$tmp/h.jsonl" && grep -q '"tensor_content"' "$tmp/h.jsonl" \
  && ok || bad "hash --jsonl -@: $(cat "$tmp/h.jsonl")"
# operands and a list exclude each other
"$mfmt" scan -@ examples/tiny.safetensors < /dev/null 2>/dev/null; [ $? -eq 2 ] && ok || bad "-@ with a PATH"
check_result
