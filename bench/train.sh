#!/bin/sh
# Training-checkpoint merge benchmark: a DeepSpeed ZeRO-2 checkpoint of
# world size 4 whose fp32 master partitions hold about 2.2 GB (made once by
# tests/data/train/gen_deepspeed.py --bench with /usr/bin/python3's torch,
# kept in TRAIN_BENCH_DIR across runs: outside the repository, never
# committed), merged by `mfmt convert CKPT OUT.safetensors`. Reports the
# time and peak RSS against reading the partitions the merge reads once
# (`cat > /dev/null`, same page-cache state: each timed after a warm-up
# read), and checks a few merged tensors against the partitions.
#   sh bench/train.sh
# Env: BUILD (build), TRAIN_BENCH_DIR (default /tmp/mfmt-bench-train),
#      BYTES (default 2200000000), KEEP=1 keeps the output.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/${BUILD:-build}
data=${TRAIN_BENCH_DIR:-/tmp/mfmt-bench-train}
bytes=${BYTES:-2200000000}
py=${PYTHON:-/usr/bin/python3}
ckpt=$data/bench
if [ ! -f "$data/.done-$bytes" ]; then
  if ! "$py" -c 'import torch' 2>/dev/null; then
    echo "train bench: SKIPPED (no torch for $py to generate the checkpoint)"; exit 0
  fi
  echo "train bench: generating a ZeRO-2 checkpoint of ~$bytes bytes in $data (once)"
  rm -rf "$ckpt"; mkdir -p "$data"
  "$py" "$root/tests/data/train/gen_deepspeed.py" "$data" --bench "$bytes"
  touch "$data/.done-$bytes"
fi
out=$build/bench/train-merged.safetensors
mkdir -p "$build/bench"
rm -f "$out"
parts=$(ls "$ckpt"/global_step10/*_optim_states.pt | tr "\n" " ")
size=$(cat $parts | wc -c)
cat $parts > /dev/null   # warm-up: every timed run starts from the same cache
/usr/bin/time -f '%e %M %U %S' -o "$build/bench/time.txt" sh -c "cat $parts > /dev/null"
read -r cat_secs cat_kb cat_u cat_s < "$build/bench/time.txt"
cat_cpu=$(awk -v u="$cat_u" -v s="$cat_s" 'BEGIN { print u + s }')
# the disk's floor for writing as many bytes (write + fsync, as mf_atomic does)
/usr/bin/time -f '%e' -o "$build/bench/time.txt" sh -c "cat $parts | dd of=$build/bench/train-copy bs=1M conv=fsync status=none"
read -r dd_secs < "$build/bench/time.txt"
rm -f "$build/bench/train-copy"
run() { # OUT -> "secs rss_kb cpu_secs"
  rm -f "$1"
  /usr/bin/time -f '%e %M %U %S' -o "$build/bench/time.txt" \
    "$build/mfmt" convert -q "$ckpt" "$1" 2>/dev/null
  awk '{ print $1, $2, $3 + $4 }' "$build/bench/time.txt"
}
read -r secs rss_kb cpu <<EOF2
$(run "$out")
EOF2
# the same merge with the output in memory (tmpfs), when there is room:
# what the merge costs without the disk's write speed
shm=/dev/shm/mfmt-train-bench.safetensors
shm_secs=0; shm_kb=0; shm_cpu=0
if [ -w /dev/shm ] && [ "$(df -k --output=avail /dev/shm | tail -1)" -gt $((size / 1024 * 2)) ]; then
  read -r shm_secs shm_kb shm_cpu <<EOF2
$(run "$shm")
EOF2
  rm -f "$shm"
fi
scan_kb=$(/usr/bin/time -f '%M' "$build/mfmt" scan "$ckpt" 2>&1 >/dev/null | tail -1)
awk -v cc="$cat_cpu" -v s="$secs" -v c="$cat_secs" -v d="$dd_secs" -v b="$size" -v r="$rss_kb" -v m="$shm_secs" -v mk="$shm_kb" -v sk="$scan_kb" -v cu="$cpu" -v mc="$shm_cpu" 'BEGIN {
  printf "train bench: ZeRO-2, world size 4, fp32 partitions %.2f GiB\n", b / 2^30
  printf "  cat > /dev/null            %6.2f s  %5.0f MiB/s  (CPU: %.2f s user + system)\n", c, (c > 0 ? b / 2^20 / c : 0), cc
  printf "  dd write + fsync (floor)   %6.2f s  %5.0f MiB/s\n", d, (d > 0 ? b / 2^20 / d : 0)
  printf "  mfmt convert (to disk)     %6.2f s  %5.0f MiB/s  %.2f x the read, %.2f x dd; peak RSS %.1f MiB\n", s, (s > 0 ? b / 2^20 / s : 0), (c > 0 ? s / c : 0), (d > 0 ? s / d : 0), r / 1024
  printf "    (CPU: %.2f s user + system, %.2f x the read'"'"'s; wall above it is waiting for a core or the disk)\n", cu, (cc > 0 ? cu / cc : 0)
  if (m > 0)
  printf "  mfmt convert (to tmpfs)    %6.2f s  %5.0f MiB/s  %.2f x the read; peak RSS %.1f MiB\n", m, b / 2^20 / m, (c > 0 ? m / c : 0), mk / 1024
  if (m > 0)
  printf "    (CPU: %.2f s user + system, %.2f x the read'"'"'s)\n", mc, (cc > 0 ? mc / cc : 0)
  printf "  (of the RSS: mfmt scan of the folder alone, run by convert first: %.1f MiB)\n", sk / 1024 }'
"$build/mfmt" diff "$out" "$ckpt" | tail -1
[ "${KEEP:-0}" = 1 ] || rm -f "$out"
