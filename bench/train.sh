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
parts=$(ls "$ckpt"/global_step10/*_optim_states.pt)
size=$(cat $parts | wc -c)
cat $parts > /dev/null   # warm-up: both timed runs start from the same cache
/usr/bin/time -f '%e %M' -o "$build/bench/time.txt" sh -c "cat $parts > /dev/null"
read -r cat_secs cat_kb < "$build/bench/time.txt"
/usr/bin/time -f '%e %M' -o "$build/bench/time.txt" \
  "$build/mfmt" convert -q --allow-unsafe "$ckpt" "$out" 2>/dev/null
read -r secs rss_kb < "$build/bench/time.txt"
largest=$("$build/mfmt" inspect --json "$ckpt" 2>/dev/null | "$py" -c '
import json,sys; d=json.load(sys.stdin); print(max(t["nbytes"] for t in d["tensors"]))' 2>/dev/null || echo 0)
awk -v s="$secs" -v c="$cat_secs" -v b="$size" -v r="$rss_kb" -v l="$largest" 'BEGIN {
  printf "train bench: ZeRO-2, world size 4, fp32 partitions %.2f GiB (largest tensor %.1f MiB)\n", b / 2^30, l / 2^20
  printf "  cat > /dev/null  %.2f s, %.0f MiB/s\n", c, (c > 0 ? b / 2^20 / c : 0)
  printf "  mfmt convert     %.2f s, %.0f MiB/s: %.2f x the read (goal <= 1.5; it also writes %.2f GiB)\n", s, (s > 0 ? b / 2^20 / s : 0), (c > 0 ? s / c : 0), b / 2^30
  printf "  peak RSS         %.1f MiB (goal < 300)\n", r / 1024 }'
"$build/mfmt" diff "$out" "$ckpt" | tail -1
[ "${KEEP:-0}" = 1 ] || rm -f "$out"
