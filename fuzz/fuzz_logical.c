/* fuzz_logical.c - libFuzzer harness: arbitrary bytes as a lone
 * .safetensors file opened with MF_OPEN_LOGICAL, so the pre-quantized
 * layouts inferred from a file alone (GPTQ, AWQ, compressed-tensors, FP8,
 * MXFP4, NVFP4, bitsandbytes: lib/formats/hf/hf_prequant*.c) and MLX's
 * packed triples are dequantized: every logical tensor is hashed, which
 * streams it through the dequantizers (lib/quant/prequant.c). */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    for (int strict = 0; strict <= 1; strict++) {
        mf_open_opts o = {.struct_size = sizeof(mf_open_opts),
                          .flags = MF_OPEN_LOGICAL | MF_OPEN_NO_SCAN |
                                   (strict ? MF_OPEN_STRICT : 0)};
        mf_status st;
        mf_status_init(&st);
        mf_model *m = NULL;
        int rc = mf_open_buffer(data, size, "input.safetensors", &o, &m, &st);
        fuzz_walk_status(&st);
        if (rc == 0) {
            if (!m || st.code != MF_OK)
                abort();
            fuzz_walk_model(m);
            mf_close(m);
        } else if (m != NULL || st.code == MF_OK || !st.msg[0]) {
            abort();
        }
        mf_status_clear(&st);
    }
    return 0;
}
