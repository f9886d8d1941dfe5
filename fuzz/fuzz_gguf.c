/* fuzz_gguf.c - libFuzzer harness: arbitrary bytes as a .gguf file. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_open_bytes(data, size, ".gguf");
    return 0;
}
