/* fuzz_safetensors.c - libFuzzer harness: arbitrary bytes as a .safetensors
 * file (a single file, or an index JSON when it starts with '{'). */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_open_bytes(data, size, ".safetensors");
    return 0;
}
