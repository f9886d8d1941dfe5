#!/bin/sh
# MLX -> GGUF end to end (doc/mlx.md): llama.cpp's own converter run on MLX
# directories. usage: make_ref.sh MFMT SHARED LLAMA_CPP WORK > ref.tsv
#   LLAMA_CPP: llama.cpp at c392e5094deaf2d1a7c18683214f007fad3fe42b (the
#   commit of SHARED/convert-ref), run through SHARED/tools/convref/run_convert.py
#   (the --tokpre of each BPE source is the one of its convert-ref file).
# Per source (SHARED/corpus/hf-dir/{llama-tiny,llama-tiny-bpe,qwen2-tiny}),
# MFMT writes two MLX directories named like the source:
#   plain/SRC  `convert SRC plain/SRC --mlx`       (unquantized)
#   deq/SRC    `convert q/SRC deq/SRC --mlx --dequantize` of
#   q/SRC      `convert SRC q/SRC --mlx --q-bits 4 --q-group-size 32`
# (the directories mlx_lm.convert and mlx_lm.convert -d write: checked
# against mlx_lm by tests/test_mlx_convert.c's references). llama.cpp's
# converter turns plain/SRC and deq/SRC into GGUF for each --outtype; each
# line: kind src outtype sha256 size. The test converts plain/SRC and q/SRC
# (the quantized one) with `mfmt convert DIR OUT.gguf --type T` and wants
# these bytes.
set -eu
M=$1 S=$2 W=$4
export CONVREF_LLAMA_CPP=$3
rm -rf "$W"
mkdir -p "$W/plain" "$W/q" "$W/deq"
for src in llama-tiny llama-tiny-bpe qwen2-tiny; do
  tp=$(/usr/bin/python3 -c 'import json,sys
m=[x["value"] for x in json.load(open(sys.argv[1]))["metadata"] if x["key"]=="tokenizer.ggml.pre"]
print("--tokpre "+m[0] if m and m[0]!="default" else "")' "$S/convert-ref/$src-f16.expected.json")
  "$M" convert -q "$S/corpus/hf-dir/$src" "$W/plain/$src" --mlx
  "$M" convert -q "$S/corpus/hf-dir/$src" "$W/q/$src" --mlx --q-bits 4 --q-group-size 32
  "$M" convert -q "$W/q/$src" "$W/deq/$src" --mlx --dequantize
  for t in f16 bf16 f32 q8_0; do
    for kind in plain deq; do
      # shellcheck disable=SC2086
      /usr/bin/python3 "$S/tools/convref/run_convert.py" $tp "$W/$kind/$src" --outtype $t \
        --outfile "$W/$kind-$src-$t.gguf" >"$W/$kind-$src-$t.log" 2>&1
      printf '%s\t%s\t%s\t%s\t%s\n' $kind $src $t "$(sha256sum <"$W/$kind-$src-$t.gguf" | cut -c1-64)" \
        "$(stat -c %s "$W/$kind-$src-$t.gguf")"
    done
  done
done
