/* fuzz_npy.c - libFuzzer harness: arbitrary bytes as a .npy file
 * (numpy_harness.h). */
#include "numpy_harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_numpy(data, size, ".npy");
    return 0;
}
