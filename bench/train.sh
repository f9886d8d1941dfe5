#!/bin/sh
# Training-checkpoint merge benchmark: a DeepSpeed ZeRO-2 checkpoint of
# world size 4 whose fp32 master partitions hold about 2.2 GB (made once by
# tests/data/train/gen_deepspeed.py --bench with /usr/bin/python3's torch,
# kept in TRAIN_BENCH_DIR across runs: outside the repository, never
# committed), merged by `mfmt convert CKPT OUT.safetensors`. Reports wall
# and CPU time (medians of REPS runs) and peak RSS against reading the
# partitions once (`cat > /dev/null`) and against writing as many bytes
# (`cat > file` + fsync: coreutils copies with copy_file_range, as the
# merge does), warm and cold cache; then --threads 2 and tmpfs; and checks
# every merged tensor against the checkpoint (mfmt diff).
#   sh bench/train.sh
# Env: BUILD (build), TRAIN_BENCH_DIR (default /tmp/mfmt-bench-train),
#      BYTES (default 2200000000), REPS (default 3), KEEP=1 keeps the output.
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
reps=${REPS:-3}
parts=$(ls "$ckpt"/global_step10/*_optim_states.pt | tr "\n" " ")
size=$(cat $parts | wc -c)
# timed N times: "wall cpu rss_kb" medians (a noisy shared machine: one run says little)
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
timed() { # CMD... -> "wall cpu rss_kb" (medians of $reps runs)
  : > "$build/bench/runs.txt"
  i=0
  while [ $i -lt "$reps" ]; do
    [ -n "${BEFORE:-}" ] && sh -c "$BEFORE"
    /usr/bin/time -f '%e %U %S %M' -o "$build/bench/time.txt" "$@" > /dev/null 2>&1
    awk '{ print $1, $2 + $3, $4 }' "$build/bench/time.txt" >> "$build/bench/runs.txt"
    i=$((i + 1))
  done
  w=$(cut -d' ' -f1 "$build/bench/runs.txt" | median)
  c=$(cut -d' ' -f2 "$build/bench/runs.txt" | median)
  k=$(cut -d' ' -f3 "$build/bench/runs.txt" | median)
  echo "$w $c $k"
}
# cold cache: the checkpoint's pages dropped from the page cache, file by
# file (dd's nocache: POSIX_FADV_DONTNEED), before each run
evict="for f in $ckpt/global_step10/*; do dd if=\$f iflag=nocache count=0 status=none; done"
cat $parts > /dev/null   # warm-up: every warm run starts from the same cache
read -r cat_w cat_c cat_k <<EOF2
$(timed sh -c "cat $parts > /dev/null")
EOF2
# the floor of writing as many bytes: coreutils' cat to a file copies with
# copy_file_range as the merge does, then fsync (mf_atomic's)
copy=$build/bench/train-copy
read -r cp_w cp_c cp_k <<EOF2
$(timed sh -c "cat $parts > $copy && sync $copy")
EOF2
rm -f "$copy"
read -r m_w m_c m_k <<EOF2
$(timed "$build/mfmt" convert -q "$ckpt" "$out")
EOF2
read -r t2_w t2_c t2_k <<EOF2
$(timed "$build/mfmt" convert -q --threads 2 "$ckpt" "$out")
EOF2
# the same merge with the output in memory (tmpfs), when there is room
shm=/dev/shm/mfmt-train-bench.safetensors
s_w=0; s_c=0; s_k=0
if [ -w /dev/shm ] && [ "$(df -k --output=avail /dev/shm | tail -1)" -gt $((size / 1024 * 2)) ]; then
  read -r s_w s_c s_k <<EOF2
$(timed "$build/mfmt" convert -q "$ckpt" "$shm")
EOF2
  rm -f "$shm"
fi
read -r cc_w cc_c cc_k <<EOF2
$(BEFORE="$evict" timed sh -c "cat $parts > /dev/null")
EOF2
read -r mc_w mc_c mc_k <<EOF2
$(BEFORE="$evict" timed "$build/mfmt" convert -q "$ckpt" "$out")
EOF2
scan_kb=$(/usr/bin/time -f '%M' "$build/mfmt" scan "$ckpt" 2>&1 >/dev/null | tail -1)
awk -v b="$size" -v reps="$reps" -v sk="$scan_kb" \
    -v cw="$cat_w" -v cc="$cat_c" -v pw="$cp_w" -v pc="$cp_c" \
    -v mw="$m_w" -v mc="$m_c" -v mk="$m_k" -v tw="$t2_w" -v tc="$t2_c" \
    -v sw="$s_w" -v sc="$s_c" -v ccw="$cc_w" -v ccc="$cc_c" -v mcw="$mc_w" -v mcc="$mc_c" 'BEGIN {
  printf "train bench: ZeRO-2, world size 4, fp32 partitions %.2f GiB; medians of %d runs (wall, CPU = user + system)\n", b / 2^30, reps
  printf "  warm cache\n"
  printf "  cat > /dev/null (read once)       %6.2f s  CPU %5.2f s\n", cw, cc
  printf "  cat > file + fsync (write floor)  %6.2f s  CPU %5.2f s  (%.2f x the read: CPU)\n", pw, pc, (cc > 0 ? pc / cc : 0)
  printf "  mfmt convert (to disk)            %6.2f s  CPU %5.2f s  %.2f x the read (CPU; wall %.2f x), %.2f x the write floor (CPU; wall %.2f x); peak RSS %.1f MiB\n", mw, mc, (cc > 0 ? mc / cc : 0), (cw > 0 ? mw / cw : 0), (pc > 0 ? mc / pc : 0), (pw > 0 ? mw / pw : 0), mk / 1024
  printf "  mfmt convert --threads 2 (disk)   %6.2f s  CPU %5.2f s  %.2f x one thread (wall)\n", tw, tc, (mw > 0 ? tw / mw : 0)
  if (sw > 0)
  printf "  mfmt convert (to tmpfs)           %6.2f s  CPU %5.2f s  %.2f x the read (CPU)\n", sw, sc, (cc > 0 ? sc / cc : 0)
  printf "  cold cache (the checkpoint evicted before each run)\n"
  printf "  cat > /dev/null                   %6.2f s  CPU %5.2f s\n", ccw, ccc
  printf "  mfmt convert (to disk)            %6.2f s  CPU %5.2f s  %.2f x the read (wall; CPU %.2f x)\n", mcw, mcc, (ccw > 0 ? mcw / ccw : 0), (ccc > 0 ? mcc / ccc : 0)
  printf "  (of the RSS: mfmt scan of the folder alone, run by convert first: %.1f MiB)\n", sk / 1024 }'
"$build/mfmt" diff "$out" "$ckpt" | tail -1
[ "${KEEP:-0}" = 1 ] || rm -f "$out"
