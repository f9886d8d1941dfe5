#!/bin/sh
# Dequantize bench: a ~1 GiB GPTQ checkpoint (bench/gen_gptq.py: 4-bit,
# group 128, [4096, 4096] layers, fp16) and a ~1 GiB FP8 one
# (bench/gen_fp8.py: E4M3 with 128 x 128 F32 block scales, bf16), each
#   - read: `cat > /dev/null` of the file (in the page cache: the read ceiling),
#   - copied: `cp` of the same bytes (read + write of as many bytes),
#   - dequantized: `mfmt dequantize --dtype f16 DIR OUT.safetensors` (the
#     whole command: open, every weight through mf_pq_rows, the F16 file
#     written through mf_atomic; 4x the stored bytes for 4-bit GPTQ, 2x for FP8),
#   - written: dd of as many bytes as the F16 output from /dev/zero (what
#     writing the output costs alone, on this machine's page cache and disk),
#   - streamed: prequant_bench (the logical view, every weight as its native
#     float type into a sink that only counts: the dequantizers alone).
# Best of RUNS (3) each, wall seconds and CPU seconds (user + sys; on a
# loaded machine the CPU figure is the steadier one).
#   sh bench/prequant.sh [SIZE_MB]      Env: BUILD (build), RUNS, KEEP=1
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/${BUILD:-build}
size=${1:-1024}
runs=${RUNS:-3}
py=${PYTHON:-/usr/bin/python3}
mkdir -p "$build/bench"
cc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -I"$root/include" -o "$build/bench/prequant_bench" \
  "$root/bench/prequant_bench.c" "$build/libmfmt.a" $(make -s -C "$root" print-ldlibs)

# best of $runs of a command: "wall cpu" seconds
best() {
  i=0
  while [ $i -lt "$runs" ]; do
    /usr/bin/time -f '%e %U %S' sh -c "$1" 2>&1 >/dev/null | tail -1
    i=$((i + 1))
  done | awk '{ print $1, $2 + $3 }' | sort -n | head -1
}

row() { # label wall-cpu stored-bytes baseline-wall
  echo "$2" | awk -v l="$1" -v b="$3" -v c="$4" '{
    printf "  %-34s %7.2f s  %6.2f s cpu  %6.0f MiB/s stored  %5.1fx cp\n", l, $1, $2,
      ($1 > 0 ? b / 2^20 / $1 : 0), (c > 0 ? $1 / c : 0) }'
}

bench_one() { # name generator
  dir=$build/bench/pq-$1
  rm -rf "$dir" && mkdir -p "$dir"
  "$py" "$root/bench/$2" "$dir/in" "$size" >/dev/null
  f=$dir/in/model.safetensors
  bytes=$(stat -c %s "$f")
  cat "$f" > /dev/null
  cat_t=$(best "cat '$f' > /dev/null")
  cp_t=$(best "rm -f '$dir/copy'; cp '$f' '$dir/copy'")
  cp_s=${cp_t% *}
  deq_t=$(best "rm -f '$dir/out.safetensors'; '$build/mfmt' dequantize -q --dtype f16 '$dir/in' '$dir/out.safetensors'")
  out=$(stat -c %s "$dir/out.safetensors")
  rm -f "$dir/out.safetensors"
  dd_t=$(best "rm -f '$dir/zero'; dd if=/dev/zero of='$dir/zero' bs=4M count=$((out / 4194304 + 1)) status=none")
  rm -f "$dir/zero"
  sink_t=$(best "'$build/bench/prequant_bench' '$dir/in'")
  printf "dequantize bench: %s, %.2f GiB stored -> %.2f GiB F16\n" "$3" "$(echo "$bytes" | awk '{print $1 / 2^30}')" \
    "$(echo "$out" | awk '{print $1 / 2^30}')"
  row "cat > /dev/null" "$cat_t" "$bytes" "$cp_s"
  row "cp" "$cp_t" "$bytes" "$cp_s"
  row "dd of the output's size" "$dd_t" "$bytes" "$cp_s"
  row "mfmt dequantize --dtype f16" "$deq_t" "$bytes" "$cp_s"
  row "dequantizers only (sink)" "$sink_t" "$bytes" "$cp_s"
  [ "${KEEP:-0}" = 1 ] || rm -rf "$dir"
}

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)  CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
bench_one gptq gen_gptq.py "GPTQ 4-bit g128 (fp16)"
bench_one fp8 gen_fp8.py "FP8 E4M3, 128x128 block scales (bf16)"
