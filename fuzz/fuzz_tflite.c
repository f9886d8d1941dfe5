/* fuzz_tflite.c - libFuzzer harness for the TFLite flatbuffer reader. */
#include "fuzz_reader.h"
#include "formats/tflite/tflite.h"

static void quantization(mf_model *m)
{
    for (size_t i = 0; i < m->n_tensors; i++) {
        mf_tflite_quant q;
        if (mf_tflite_quantization(m, &m->tensors[i], &q) == 1)
            for (uint32_t k = 0; k < q.n_scale; k++)
                (void)(mf_tflite_quant_scale(&q, k) + (float)mf_tflite_quant_zero_point(&q, k));
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_open_bytes(data, size, ".tflite"); /* through detection, as mfmt opens it */
    fuzz_read(fuzz_write_input(data, size, ".tflite"), MF_FMT_TFLITE, quantization);
    return 0;
}
