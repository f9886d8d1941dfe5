#!/bin/sh
# `mfmt inspect --json` of a 102,400-token vocabulary GGUF (gen_vocab.py:
# tokens, types, scores, merges; 4.4 MiB) against reading it: `cat`, plain
# `mfmt inspect`, and llama.cpp's `llama-gguf FILE r n` when LLAMA_GGUF names
# one (it reads every key and prints them). Median of RUNS (5), interleaved.
#   LLAMA_GGUF=/path/llama-gguf sh bench/inspect_json.sh
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/${BUILD:-build}
dir=$build/bench
mkdir -p "$dir"
runs=${RUNS:-5}; lg=${LLAMA_GGUF:-}
f=$dir/vocab-102400.gguf
python3 "$root/bench/gen_vocab.py" "$f" 102400
median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
once() {
  out=$1; shift
  /usr/bin/time -f '%e %M' -o "$dir/ij.one" "$@" > /dev/null 2>&1 || { echo "FAILED: $*" >&2; exit 1; }
  cat "$dir/ij.one" >> "$out"
}
: > "$dir/ij.cat"; : > "$dir/ij.plain"; : > "$dir/ij.json"; : > "$dir/ij.llama"
for _ in $(seq "$runs"); do
  once "$dir/ij.cat" cat "$f"
  once "$dir/ij.plain" "$build/mfmt" inspect "$f"
  once "$dir/ij.json" "$build/mfmt" inspect --json "$f"
  if [ -n "$lg" ]; then once "$dir/ij.llama" "$lg" "$f" r n; fi
done
row() { # label file reference-seconds
  s=$(cut -d' ' -f1 "$2" | median); k=$(cut -d' ' -f2 "$2" | sort -n | tail -1)
  awk -v l="$1" -v s="$s" -v k="$k" -v r="${3:-}" 'BEGIN {
    printf "  %-34s %6.3f s  rss %4.0f MiB", l, s, k / 1024
    if (r != "" && r > 0) printf "  %5.2f x the --json time", s / r
    printf "\n" }'
}
json_s=$(cut -d' ' -f1 "$dir/ij.json" | median)
echo "inspect --json of a 102,400-token vocabulary GGUF ($(stat -c %s "$f") bytes), median of $runs"
row "cat > /dev/null" "$dir/ij.cat" "$json_s"
row "mfmt inspect (text)" "$dir/ij.plain" "$json_s"
row "mfmt inspect --json" "$dir/ij.json" "$json_s"
if [ -n "$lg" ]; then
  row "llama-gguf FILE r n" "$dir/ij.llama" "$json_s"
  l_s=$(cut -d' ' -f1 "$dir/ij.llama" | median)
  awk -v j="$json_s" -v l="$l_s" 'BEGIN { met = (l / j >= 1) ? "met" : "NOT MET"
    printf "  llama-gguf time / mfmt inspect --json time: %.2f (goal >= 1.00: %s)\n", l / j, met }'
else
  echo "  (set LLAMA_GGUF=/path/to/llama-gguf for the llama.cpp row)"
fi
rm -f "$f" "$dir"/ij.*
