#!/bin/sh
# Edit benchmark: `mfmt edit` of a multi-GB GGUF (a new chat template and
# name: the header grows, the data section is copied with copy_file_range)
# against `cp` of the same file followed by `sync -f` (mfmt fsyncs the new
# file before renaming it into place, so a durable copy is the fair baseline), both to a new file on the same filesystem,
# page cache warm; then the same edit in place. Peak RSS shows that no
# tensor passes through the process.
#   sh bench/edit.sh [N_LAYER HIDDEN FFN VOCAB]  (default 16 2048 5632 32000: ~1.7 GB)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/${BUILD:-build}
dir=$build/bench
mkdir -p "$dir"
nl=${1:-16}; hid=${2:-2048}; ffn=${3:-5632}; voc=${4:-32000}
cc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -I"$root/include" -I"$root/lib" \
  -o "$dir/gen_llama" "$root/bench/gen_llama.c" "$build/libmfmt.a" \
  -ljansson -lcrypto -lxxhash -lz -lblosc -lsz -lpthread -lm
in=$dir/edit-f16.gguf
"$dir/gen_llama" "$in" "$nl" "$hid" "$ffn" "$voc"
size=$(stat -c %s "$in")
printf '{%% for m in messages %%}<|%s|>{{ m.content }}{%% endfor %%}' role > "$dir/tpl.jinja"
cat "$in" > /dev/null
med() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for i in 1 2 3; do
  rm -f "$dir/cp.gguf"; sync
  /usr/bin/time -f '%e %M' -o "$dir/t_cp.$i" sh -c 'cp "$1" "$2" && sync -f "$2"' - "$in" "$dir/cp.gguf"
  rm -f "$dir/ed.gguf"; sync
  /usr/bin/time -f '%e %M' -o "$dir/t_ed.$i" "$build/mfmt" edit "$in" "$dir/ed.gguf" \
    --chat-template "$dir/tpl.jinja" --set general.name=edited > /dev/null
done
cp_s=$(cat "$dir"/t_cp.* | awk '{print $1}' | med)
ed_s=$(cat "$dir"/t_ed.* | awk '{print $1}' | med)
ed_rss=$(cat "$dir"/t_ed.* | awk '{print $2}' | sort -n | tail -1)
/usr/bin/time -f '%e %M' -o "$dir/t_inplace" "$build/mfmt" edit "$dir/ed.gguf" \
  --set general.name=again > /dev/null
read -r ip_s ip_rss < "$dir/t_inplace"
"$build/mfmt" validate "$dir/ed.gguf" > /dev/null
awk -v b="$size" -v c="$cp_s" -v e="$ed_s" -v r="$ed_rss" -v i="$ip_s" -v ir="$ip_rss" 'BEGIN {
  printf "edit bench: %.2f GB GGUF (median of 3, warm cache)\n", b / 1e9
  printf "  cp IN OUT && sync -f OUT:  %6.2f s  (mfmt fsyncs before its rename: a durable copy is the baseline)\n", c
  printf "  mfmt edit IN OUT:          %6.2f s  = %.2fx cp   peak RSS %.1f MiB\n", e, e / c, r / 1024
  printf "  mfmt edit IN (in place):   %6.2f s  = %.2fx cp   peak RSS %.1f MiB\n", i, i / c, ir / 1024 }'
rm -f "$in" "$dir/cp.gguf" "$dir/ed.gguf" "$dir"/t_cp.* "$dir"/t_ed.* "$dir/t_inplace" "$dir/tpl.jinja"
