/* fuzz_onnx.c - libFuzzer harness for the ONNX readers: the input as an
 * ONNX model (graph printed too) and as a lone TensorProto. */
#include "fuzz_reader.h"
#include "formats/onnx.h"

static void print_graph(mf_model *m)
{
    FILE *out = fopen("/dev/null", "w");
    if (!out)
        return;
    mf_status st;
    mf_status_init(&st);
    mf_onnx_print_graph(m, out, &st);
    mf_status_clear(&st);
    fclose(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/model.onnx", fuzz_tmpdir());
    if (fuzz_write(path, data, size) == 0) {
        fuzz_read(path, MF_FMT_ONNX, print_graph);
        fuzz_read(path, MF_FMT_ONNX_TENSOR, NULL);
    }
    unlink(path);
    return 0;
}
