#!/bin/sh
# Quantize benchmark: a whole Q4_K_M run (llama-quantize's mix) on a
# generated llama-architecture F16 model of >= 1 GB, with 1 and 2 threads;
# reported against reading the file and against memcpy of the F32 bytes the
# quantizer consumes (bench/quant_speed prints memcpy). Peak RSS against the
# largest tensor shows the streaming.
#   sh bench/quantize.sh [N_LAYER HIDDEN FFN VOCAB]  (default 12 2048 5632 32000)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/${BUILD:-build}
dir=$build/bench
mkdir -p "$dir"
nl=${1:-12}; hid=${2:-2048}; ffn=${3:-5632}; voc=${4:-32000}
cc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -I"$root/include" -I"$root/lib" \
  -o "$dir/gen_llama" "$root/bench/gen_llama.c" "$build/libmfmt.a" \
  -ljansson -lcrypto -lxxhash -lz -lblosc -lsz -lpthread -lm
in=$dir/llama-f16.gguf
out=$dir/llama-q4km.gguf
"$dir/gen_llama" "$in" "$nl" "$hid" "$ffn" "$voc"
size=$(stat -c %s "$in")
params=$(( (size - 4096) / 2 ))
largest=$(( voc * hid * 4 ))
/usr/bin/time -f '%e' -o "$dir/time.txt" cat "$in" > /dev/null
read -r read_secs < "$dir/time.txt"
echo "quantize bench: $(awk -v b="$size" 'BEGIN{printf "%.2f GB", b/1e9}') F16 llama model, $nl layers, hidden $hid"
for t in 1 2; do
  rm -f "$out"
  MFMT_NO_PROGRESS=1 /usr/bin/time -f '%e %M' -o "$dir/time.txt" \
    "$build/mfmt" quantize "$in" "$out" Q4_K_M --threads "$t" > /dev/null 2>&1
  read -r secs rss_kb < "$dir/time.txt"
  awk -v s="$secs" -v r="$read_secs" -v b="$size" -v k="$rss_kb" -v l="$largest" -v t="$t" 'BEGIN {
    printf "  Q4_K_M, %d thread%s: %6.1f s  %7.1f MB/s of F32 input (%5.1f MB/s of F16 file)  read-the-file %.1f s  peak RSS %.0f MiB (%.1fx the largest tensor as F32)\n",
      t, (t > 1 ? "s" : " "), s, 2 * b / s / 1e6, b / s / 1e6, r, k / 1024, k * 1024 / l }'
done
"$build/mfmt" inspect "$out" | grep -E "bits/weight|dtype mix|Q4_K|Q6_K" | head -4
rm -f "$in" "$out"
