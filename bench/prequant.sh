#!/bin/sh
# Dequantize bench: a ~1 GiB GPTQ checkpoint (bench/gen_gptq.py: 4-bit,
# group 128, [4096, 4096] layers) read through the logical view
# (prequant_bench: mf_open with MF_OPEN_LOGICAL, every weight streamed as
# F16 to a counting sink), against `cat > /dev/null` of the same file
# (in the page cache: the read ceiling). Best of 3 each.
#   sh bench/prequant.sh [SIZE_MB]      Env: BUILD (build), KEEP=1
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/${BUILD:-build}
size=${1:-1024}
dir=$build/bench/gptq
mkdir -p "$dir"
cc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -I"$root/include" -o "$build/bench/prequant_bench" \
  "$root/bench/prequant_bench.c" "$build/libmfmt.a" -ljansson -lyaml -lcrypto -lxxhash -lz -lblosc -lsz -lpthread -lm
${PYTHON:-/usr/bin/python3} "$root/bench/gen_gptq.py" "$dir" "$size"
f=$dir/model.safetensors
bytes=$(stat -c %s "$f")
cat "$f" > /dev/null
best() { sort -n | head -1; }
cat_s=$(for i in 1 2 3; do /usr/bin/time -f '%e' sh -c "cat '$f' > /dev/null" 2>&1; done | best)
deq=$(for i in 1 2 3; do "$build/bench/prequant_bench" "$dir" | awk '{print $1, $3}'; done | sort -n | head -1)
deq_s=${deq% *}; out=${deq#* }
awk -v b="$bytes" -v c="$cat_s" -v d="$deq_s" -v o="$out" 'BEGIN {
  printf "dequantize bench: GPTQ 4-bit g128, %.2f GiB stored -> %.2f GiB F16\n", b / 2^30, o / 2^30
  printf "  cat > /dev/null        %7.2f s  %7.0f MiB/s\n", c, (c > 0 ? b / 2^20 / c : 0)
  printf "  dequantize (logical)   %7.2f s  %7.0f MiB/s stored  (%.1fx the time of cat)\n", d, (d > 0 ? b / 2^20 / d : 0), (c > 0 ? d / c : 0) }'
[ "${KEEP:-0}" = 1 ] || rm -rf "$dir"
