#!/bin/sh
# How llama_quantize_ecbcb7ea.json was made (outside the repository): llama.cpp
# ecbcb7ea (`fetch` 708-145/llama.cpp; after cloning, `git restore --source=HEAD :/`
# brings back the work tree), built with
#   cmake -S . -B build -DGGML_NATIVE=ON -DLLAMA_CURL=OFF -DCMAKE_BUILD_TYPE=Release
#   cmake --build build -j2 --target llama-quantize
# then its llama-quantize run on every F16 reference of ../shared/convert-ref-new,
# Q4_K_M, one thread, and each output's SHA-256 recorded (gpt-oss-tiny is
# refused: "requantizing from type mxfp4 is disabled").
# usage: LLAMA_QUANTIZE=.../build/bin/llama-quantize sh make_llama_quantize_ecbcb7ea.sh SHARED OUTDIR
set -e
Q=${LLAMA_QUANTIZE:?set LLAMA_QUANTIZE}
SHARED=$1; OUT=$2
mkdir -p "$OUT"
for f in "$SHARED"/convert-ref-new/*-f16.gguf; do
  n=$(basename "$f" -f16.gguf)
  if "$Q" "$f" "$OUT/$n-Q4_K_M.gguf" Q4_K_M 1 > "$OUT/$n.log" 2>&1; then
    echo "$n $(sha256sum < "$OUT/$n-Q4_K_M.gguf" | cut -d' ' -f1)"
  else
    echo "$n refused: $(grep 'failed to quantize:' "$OUT/$n.log" | sed 's/.*failed to quantize: //')"
  fi
done
