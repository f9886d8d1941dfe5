#!/bin/sh
# MLX convert benchmark: a Hugging Face llama directory of about 1 GB of F16
# weights (8 layers of hidden 2048, FFN 5632, vocabulary 32000; made by
# gen_hf_f16.py, numpy only) quantized to MLX 4-bit (group 64) with
# `mfmt convert DIR OUT --mlx --quantize`, against `cp` of the same bytes;
# reports times, the ratio and peak RSS against the largest tensor.
#   sh bench/mlx_convert.sh [LAYERS]   (default 8)
# Env: BUILD (build), KEEP=1 keeps the files in $BUILD/bench/mlx.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/${BUILD:-build}
layers=${1:-8}
dir=$build/bench/mlx
py=$(test -x /usr/bin/python3 && echo /usr/bin/python3 || echo python3)
rm -rf "$dir"
mkdir -p "$dir"
"$py" "$root/bench/gen_hf_f16.py" "$dir/hf" "$layers"
size=$(stat -c %s "$dir/hf/model.safetensors")
largest=$((32000 * 2048 * 2))
sync
/usr/bin/time -f '%e' -o "$dir/time.txt" cp "$dir/hf/model.safetensors" "$dir/copy.safetensors"
read -r copy_secs < "$dir/time.txt"
rm -f "$dir/copy.safetensors"
# mfmt fsyncs what it writes (mf_atomic): cp followed by sync of the copy too
/usr/bin/time -f '%e' -o "$dir/time.txt" sh -c 'cp "$1" "$2" && sync "$2"' sh \
  "$dir/hf/model.safetensors" "$dir/copy.safetensors"
read -r copy_sync_secs < "$dir/time.txt"
rm -f "$dir/copy.safetensors"
/usr/bin/time -f '%e %M %U %S' -o "$dir/time.txt" "$build/mfmt" convert -q "$dir/hf" "$dir/out" --mlx --quantize
read -r secs rss_kb user_s sys_s < "$dir/time.txt"
out=$(stat -c %s "$dir/out/model.safetensors")
echo "mlx convert bench: HF F16 -> MLX 4-bit, group 64 (CPU kernel's bytes)"
awk -v s="$secs" -v c="$copy_secs" -v cs="$copy_sync_secs" -v u="$user_s" -v y="$sys_s" -v b="$size" -v o="$out" -v r="$rss_kb" -v l="$largest" 'BEGIN {
  printf "  input      %.2f GiB F16, output %.2f GiB, largest tensor %.0f MiB\n", b / 2^30, o / 2^30, l / 2^20
  printf "  mfmt       %.2f s (%.2f s user, %.2f s sys), %.0f MiB/s of input\n", s, u, y, (s > 0 ? b / 2^20 / s : 0)
  printf "  cp         %.2f s, %.0f MiB/s (mfmt / cp: %.2f x the time)\n", c, (c > 0 ? b / 2^20 / c : 0), (c > 0 ? s / c : 0)
  printf "  cp + sync  %.2f s, %.0f MiB/s (mfmt / (cp + sync): %.2f x the time)\n", cs, (cs > 0 ? b / 2^20 / cs : 0), (cs > 0 ? s / cs : 0)
  printf "  peak RSS   %.1f MiB (%.2f x the largest tensor)\n", r / 1024, r * 1024 / l }'
[ "${KEEP:-0}" = 1 ] || rm -rf "$dir"
