#!/bin/sh
# HF -> GGUF benchmark: a generated Llama directory (bench/gen_llama.c --hf:
# F16 model.safetensors + config.json, the tokenizer of
# ../shared/corpus/hf-dir/llama-tiny) converted by `mfmt convert` to F16 and,
# in one pass, to Q4_K_M; time against cp of the weights (page cache warm,
# both), peak RSS against the largest tensor.
#   sh bench/hf_convert.sh [N_LAYER HIDDEN FFN VOCAB]  (default 6 2048 5632 32000: 0.80 GB)
# Env: BUILD (build), KEEP=1 keeps the files in $BUILD/bench.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/${BUILD:-build}
dir=$build/bench
tok=$root/../shared/corpus/hf-dir/llama-tiny
mkdir -p "$dir"
if [ ! -f "$tok/tokenizer.model" ]; then
  echo "hf convert bench: skipped ($tok not present)"; exit 0
fi
nl=${1:-6}; hid=${2:-2048}; ffn=${3:-5632}; voc=${4:-32000}
cc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -I"$root/include" -I"$root/lib" \
  -o "$dir/gen_llama" "$root/bench/gen_llama.c" "$build/libmfmt.a" \
  -ljansson -lcrypto -lxxhash -lz -lpthread -lm
hf=$dir/hf-llama
rm -rf "$hf"; mkdir -p "$hf"
cp "$tok/tokenizer.model" "$tok/tokenizer_config.json" "$tok/special_tokens_map.json" "$hf/"
"$dir/gen_llama" --hf "$hf" "$nl" "$hid" "$ffn" "$voc"
w=$hf/model.safetensors
size=$(stat -c %s "$w")
largest=$(( voc * hid * 2 ))
cat "$w" > /dev/null
echo "hf convert bench: $(awk -v b="$size" 'BEGIN{printf "%.2f GB", b/1e9}') F16 llama directory, $nl layers, hidden $hid, largest tensor $(awk -v l="$largest" 'BEGIN{printf "%.0f MiB", l/2^20}')"
best() { # best of 3 runs of "$@": prints "secs rss_kb"
  b=""
  for i in 1 2 3; do
    /usr/bin/time -f '%e %M' -o "$dir/time.txt" "$@" > /dev/null 2>&1
    read -r s r < "$dir/time.txt"
    if [ -z "$b" ] || awk -v s="$s" -v b="$b" 'BEGIN{exit !(s < b)}'; then b=$s; br=$r; fi
  done
  echo "$b $br"
}
set -- $(best cp "$w" "$dir/copy.safetensors"); cp_secs=$1
rm -f "$dir/copy.safetensors"
for t in f16 Q4_K_M; do
  out=$dir/hf-llama-$t.gguf
  set -- $(best env MFMT_NO_PROGRESS=1 "$build/mfmt" convert "$hf" "$out" --type "$t")
  awk -v t="$t" -v s="$1" -v r="$2" -v c="$cp_secs" -v l="$largest" 'BEGIN {
    printf "  %-7s %.2f s (%.2f x cp of the weights, %.2f s), peak RSS %.0f MiB (largest tensor %.0f MiB + %.0f MiB)\n",
      t, s, (c > 0 ? s / c : 0), c, r / 1024, l / 2^20, r / 1024 - l / 2^20 }'
  [ "$t" = f16 ] || rm -f "$out"
done
# the two-step way for comparison: F16 conversion (kept above), then mfmt quantize
set -- $(best env MFMT_NO_PROGRESS=1 "$build/mfmt" quantize "$dir/hf-llama-f16.gguf" "$dir/q.gguf" Q4_K_M)
awk -v s="$1" -v r="$2" 'BEGIN { printf "  (mfmt quantize of the F16 output to Q4_K_M: %.2f s, peak RSS %.0f MiB)\n", s, r / 1024 }'
rm -f "$dir/q.gguf" "$dir/hf-llama-f16.gguf"
[ "${KEEP:-0}" = 1 ] || rm -rf "$hf" "$dir/time.txt"
