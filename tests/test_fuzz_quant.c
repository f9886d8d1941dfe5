/* test_fuzz_quant.c - runs fuzz/fuzz_quant.c's harness on pseudo-random
 * inputs in the normal test run (the harness aborts on a failure, which
 * fails this test): every type, both modes, random and all-0xff blocks, so
 * the error bounds are known to hold on ordinary inputs and the harness
 * builds without libFuzzer. */
#include "testlib.h"

#include "../fuzz/fuzz_quant.c"

static uint32_t rng = 2024;

static uint8_t rnd8(void)
{
    rng = rng * 1664525u + 1013904223u;
    return (uint8_t)(rng >> 24);
}

int main(void)
{
    static uint8_t in[2 + 1 + 2 * 2 * FQ_N + FQ_N];
    int runs = 0;
    for (int iter = 0; iter < 40; iter++) {
        for (size_t t = 0; t < FQ_NTYPES; t++) {
            for (int mode = 0; mode < 2; mode++) {
                size_t len = 1 + (iter % 5 == 0 ? rnd8() : sizeof(in) - 1);
                for (size_t i = 1; i < len; i++)
                    in[i] = iter % 7 == 3 ? 0xff : rnd8();
                in[0] = (uint8_t)(t | (mode ? 0x80 : 0));
                if (mode)
                    in[2] = (uint8_t)(iter & 3);
                LLVMFuzzerTestOneInput(in, len);
                runs++;
            }
        }
    }
    CHECKF(runs == 40 * (int)FQ_NTYPES * 2, "%d harness runs", runs);
    CHECK(LLVMFuzzerTestOneInput(in, 0) == 0);
    return tl_report("fuzz_quant");
}
