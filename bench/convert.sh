#!/bin/sh
# Convert benchmark: a multi-GB pytorch_model.bin (made by torch_bin.c,
# no PyTorch needed) to safetensors with `mfmt convert`; reports the time,
# throughput and peak RSS against the largest tensor, and checks that the
# output's canonical tensor hashes equal the input's.
#   sh bench/convert.sh [TENSORS ROWS COLS]   (default 40 x 8192 x 2560: 3.1 GiB,
#                                               80 MiB per tensor; past 4 GiB: ZIP64)
# Env: BUILD (build), KEEP=1 keeps the files in $BUILD/bench.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/${BUILD:-build}
n=${1:-40}; rows=${2:-8192}; cols=${3:-2560}
dir=$build/bench
mkdir -p "$dir"
cc -std=c11 -O2 -Wall -Wextra -Werror -o "$dir/torch_bin" "$root/bench/torch_bin.c" -lz
bin=$dir/pytorch_model.bin
out=$dir/model.safetensors
echo "convert bench: $n tensors of ${rows}x${cols} F32"
"$dir/torch_bin" "$bin" "$n" "$rows" "$cols"
size=$(stat -c %s "$bin")
largest=$((rows * cols * 4))
sync
rm -f "$out"
# the physical limit: copying the bytes (read + write + fsync)
/usr/bin/time -f '%e' -o "$dir/time.txt" dd if="$bin" of="$dir/copy.bin" bs=1M conv=fsync status=none
read -r copy_secs < "$dir/time.txt"
rm -f "$dir/copy.bin"
# what copy_file_range can reach: cp's own (a reflink where the filesystem
# shares extents), made durable as mfmt makes its output
/usr/bin/time -f '%e' -o "$dir/time.txt" sh -c 'cp --reflink=auto "$1" "$2" && sync' sh "$bin" "$dir/copy.bin"
read -r cp_secs < "$dir/time.txt"
rm -f "$dir/copy.bin"
/usr/bin/time -f '%e %M' -o "$dir/time.txt" "$build/mfmt" convert "$bin" "$out"
read -r secs rss_kb < "$dir/time.txt"
echo "  cp --reflink=auto && sync: $cp_secs s; mfmt convert: $secs s ($(awk -v a="$cp_secs" -v b="$secs" 'BEGIN{printf "%.2f", (b > 0 ? a / b : 0)}') x cp; tensors stored as is go by copy_file_range)"
awk -v s="$secs" -v c="$copy_secs" -v b="$size" -v r="$rss_kb" -v l="$largest" 'BEGIN {
  printf "  input      %.2f GiB, largest tensor %.1f MiB\n", b / 2^30, l / 2^20
  printf "  convert    %.2f s, %.0f MiB/s (dd copy with fsync: %.2f s, %.0f MiB/s)\n", s, (s > 0 ? b / 2^20 / s : 0), c, (c > 0 ? b / 2^20 / c : 0)
  printf "  peak RSS   %.1f MiB (%.2f x the largest tensor)\n", r / 1024, r * 1024 / l }'
"$build/mfmt" hash --tensors "$bin" | awk 'NF==3 && index($3,":") {sub(/^.*:/,"",$3); print $2, $3}' | sort > "$dir/in.txt"
"$build/mfmt" hash --tensors "$out" | awk 'NF==3 && index($3,":") {sub(/^.*:/,"",$3); print $2, $3}' | sort > "$dir/out.txt"
if cmp -s "$dir/in.txt" "$dir/out.txt" && [ -s "$dir/in.txt" ]; then
  echo "  hashes     $(wc -l < "$dir/in.txt") tensors, canonical hashes equal"
else
  echo "  hashes     DIFFER"; status=1
fi
[ "${KEEP:-0}" = 1 ] || rm -f "$bin" "$out" "$dir/in.txt" "$dir/out.txt"
exit "${status:-0}"
