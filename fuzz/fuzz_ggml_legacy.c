/* fuzz_ggml_legacy.c - libFuzzer harness: arbitrary bytes as a GGML / GGMF
 * / GGJT file (llama.cpp's formats before GGUF). */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_open_bytes(data, size, ".bin");
    return 0;
}
