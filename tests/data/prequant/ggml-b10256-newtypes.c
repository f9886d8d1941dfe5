/* How tests/data/prequant/ggml-b10256-newtypes.bin was made (not built by
 * the Makefile): gcc -O2 -I$LLAMA_RN/cpp ggml-b10256-newtypes.c
 * $BUILD/libggml-current.a -lstdc++ -lm -lgomp -lpthread, where libggml-current.a
 * is ../shared/tools/llama-current/build.sh's ggml (b10256, -march=native);
 * then ./a.out ggml-b10256-newtypes.bin. Layout: 8x512 F32 inputs, then per
 * type: u32 ggml type id, 8 quantized rows, 8x512 F32 dequantized. */
/* Reference bytes of ggml b10256's quantizers for the types added after
 * b4747: lm_ggml_quantize_chunk on deterministic rows, then to_float. */
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include "ggml.h"
static uint32_t s = 12345;
static float rnd(void) { s = s * 1664525u + 1013904223u; return ((s >> 8) / 16777216.0f) * 2 - 1; }
int main(int argc, char **argv) {
    int nrows = 8, n = 512;
    float *x = malloc(sizeof(float) * nrows * n);
    for (int i = 0; i < nrows * n; i++) {
        float v = rnd();
        int k = i % 97;
        if (k == 0) v = 0; else if (k == 1) v *= 1e-6f; else if (k == 2) v *= 300.0f; else if (k < 10) v *= 1e-3f;
        if (i / n == 3) v = 0;           /* an all-zero row */
        if (i / n == 5) v *= 1e-30f;     /* tiny values */
        x[i] = v;
    }
    FILE *f = fopen(argv[1], "wb");
    fwrite(x, sizeof(float), nrows * n, f);
    enum lm_ggml_type types[] = {LM_GGML_TYPE_MXFP4, LM_GGML_TYPE_NVFP4, LM_GGML_TYPE_Q1_0, LM_GGML_TYPE_Q2_0};
    for (int t = 0; t < 4; t++) {
        size_t rs = lm_ggml_row_size(types[t], n);
        uint8_t *q = calloc(nrows, rs);
        lm_ggml_quantize_chunk(types[t], x, q, 0, nrows, n, NULL);
        float *y = malloc(sizeof(float) * nrows * n);
        lm_ggml_get_type_traits(types[t])->to_float(q, y, (int64_t)nrows * n);
        uint32_t id = types[t];
        fwrite(&id, 4, 1, f);
        fwrite(q, rs, nrows, f);
        fwrite(y, sizeof(float), nrows * n, f);
        fprintf(stderr, "type %u: %zu bytes/row\n", id, rs);
    }
    fclose(f);
    return 0;
}
