#!/bin/sh
# Whole-file quantization, one row per type: `mfmt quantize` against
# `llama-quantize` (when LLAMA_QUANTIZE names one) on the same input in the
# same run, interleaved, median of RUNS, and whether the outputs are
# byte-identical (cmp). The input is the issue-14 file: a llama-architecture
# GGUF of 8 F16 tensors of 4096x4096 (gen_llama 1 4096 4096 4096 square,
# 256 MiB). `cp` of the input is the floor every row is also divided by.
#   LLAMA_QUANTIZE=/path/llama-quantize sh bench/quant_types.sh [--imatrix] [TYPE...]
# --imatrix: both tools get the same generated importance matrix
# (gen_imatrix.py). Env: RUNS (3), THREADS (2), BUILD (build), SIZE ("1 4096
# 4096 4096": N_LAYER HIDDEN FFN VOCAB of the input).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/${BUILD:-build}
dir=$build/bench
mkdir -p "$dir"
export MFMT_NO_PROGRESS=1
runs=${RUNS:-3}; thr=${THREADS:-2}; lq=${LLAMA_QUANTIZE:-}
imatrix=
if [ "${1:-}" = "--imatrix" ]; then imatrix=1; shift; fi
# every type mfmt quantize takes (MXFP4_MOE aside: llama-quantize c392e50
# predates it); those that need an importance matrix get the generated one
# (both tools) even without --imatrix
types=${*:-Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q2_K Q3_K_S Q3_K_M Q3_K_L Q4_K_S Q4_K_M Q5_K_S Q5_K_M Q6_K IQ4_NL IQ4_XS TQ1_0 TQ2_0 F16 BF16 F32 COPY IQ2_XXS IQ2_XS IQ2_S IQ2_M IQ1_S IQ1_M Q2_K_S IQ3_XXS IQ3_XS IQ3_S IQ3_M}
needs_imatrix() { case $1 in IQ2_XXS|IQ2_XS|IQ2_S|IQ1_S|IQ1_M|Q2_K_S) return 0;; esac; return 1; }
set -- ${SIZE:-1 4096 4096 4096}
cc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -I"$root/include" -I"$root/lib" \
  -o "$dir/gen_llama" "$root/bench/gen_llama.c" "$build/libmfmt.a" \
  -ljansson -lyaml -lcrypto -lxxhash -lz -lblosc -lsz -lpcre2-8 -lcurl -lpthread -lm
in=$dir/square-f16.gguf
"$dir/gen_llama" "$in" "$1" "$2" "$3" "$4" square
imx=$dir/square.imatrix.dat
python3 "$root/bench/gen_imatrix.py" "$imx" "$1" "$2" "$3"
median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
# one timed run of "$@" appended to file $1 as "seconds max-rss-KiB cpu-seconds"
once() {
  f=$1; shift
  /usr/bin/time -f '%e %M %U %S' -o "$dir/qt.one" "$@" > /dev/null 2>&1 || { echo "FAILED: $*" >&2; exit 1; }
  awk '{printf "%s %s %.2f\n", $1, $2, $3 + $4}' "$dir/qt.one" >> "$f"
}
# "median-seconds max-rss-KiB median-cpu-seconds" of a times file
summary() {
  echo "$(cut -d' ' -f1 "$1" | median) $(cut -d' ' -f2 "$1" | sort -n | tail -1) $(cut -d' ' -f3 "$1" | median)"
}
: > "$dir/qt.cp"
for _ in $(seq "$runs"); do once "$dir/qt.cp" cp "$in" "$dir/qt-cp.gguf"; done
cp_s=$(summary "$dir/qt.cp" | cut -d' ' -f1); rm -f "$dir/qt-cp.gguf"
if [ -x "$dir/quant_speed" ]; then "$dir/quant_speed" --kernels
else echo "CPU: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1) (family $(sed -n 's/^cpu family[[:space:]]*: //p' /proc/cpuinfo | head -n 1)); kernels: build bench/quant_speed to see them"
fi
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "quantize, $(awk -v b="$(stat -c %s "$in")" 'BEGIN{printf "%.0f MiB", b/1048576}') F16 input, $thr threads, median of $runs${imatrix:+, with imatrix}; cp of the input: $cp_s s"
printf '%-8s %8s %8s %8s %8s %8s %8s %8s %7s %9s\n' type "mfmt s" "llama s" "x llama" "mfmt cpu" "llama cpu" "x cpu" "rss MiB" "x cp" identical
q8_s=
for t in $types; do
  mo=$dir/qt-mfmt.gguf; lo=$dir/qt-llama.gguf
  mopt=; lopt=
  if [ -n "$imatrix" ] || needs_imatrix "$t"; then mopt="--imatrix $imx"; lopt="--imatrix $imx"; fi
  : > "$dir/qt.m"; : > "$dir/qt.l"
  # the two tools alternate run by run, so load on the machine hits both alike
  for _ in $(seq "$runs"); do
    once "$dir/qt.m" "$build/mfmt" quantize $mopt "$in" "$mo" "$t" --threads "$thr"
    if [ -n "$lq" ]; then once "$dir/qt.l" "$lq" $lopt "$in" "$lo" "$t" "$thr"; fi
  done
  m=$(summary "$dir/qt.m")
  if [ "$t" = Q8_0 ]; then q8_s=$(echo "$m" | cut -d' ' -f1); fi
  if [ -n "$lq" ]; then
    l=$(summary "$dir/qt.l")
    same=$(cmp -s "$mo" "$lo" && echo yes || echo NO)
  else
    l="- - -"; same=-
  fi
  # fields: type, mfmt s rss cpu, llama s rss cpu, cp s, identical
  echo "$t $m $l $cp_s $same" | awk '{
    r = ($5 == "-") ? "-" : sprintf("%.2f", $5 / $2); rc = ($5 == "-") ? "-" : sprintf("%.2f", $7 / $4)
    rss = ($6 == "-") ? sprintf("%.0f", $3 / 1024) : sprintf("%.0f/%.0f", $3 / 1024, $6 / 1024)
    printf "%-8s %8.3f %8s %8s %8.2f %8s %8s %8s %7.2f %9s\n", $1, $2, $5, r, $4, $7, rc, rss, $8 / $2, $9 }'
  rm -f "$mo" "$lo"
done
echo "x llama: llama-quantize's wall time / mfmt's (above 1: mfmt faster); x cpu: the same for user+sys CPU time"
echo "(steadier on a loaded machine); rss: peak MiB, mfmt/llama-quantize; x cp: cp's time / mfmt's"
echo "(imatrix: for every type with --imatrix, else for IQ2_XXS IQ2_XS IQ2_S IQ1_S IQ1_M Q2_K_S only)"
if [ -n "$q8_s" ]; then
  # Q8_0 is nearly a copy (34 bytes out per 64 in): cp of the input is its floor
  echo "Q8_0 against cp of the input: mfmt $q8_s s, cp $cp_s s: $(awk -v a="$q8_s" -v b="$cp_s" 'BEGIN{printf "%.2f", a/b}') x cp's time"
fi
rm -f "$in" "$imx"
