/* fuzz_onnx.c - libFuzzer harness for the ONNX readers: the input opened as
 * mfmt opens a file, then as an ONNX model (graph printed too) and as a
 * lone TensorProto. */
#include "fuzz_reader.h"
#include "formats/onnx/onnx.h"

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
    fuzz_open_bytes(data, size, ".onnx"); /* through detection, as mfmt opens it */
    const char *path = fuzz_write_input(data, size, ".onnx");
    fuzz_read(path, MF_FMT_ONNX, print_graph);
    fuzz_read(path, MF_FMT_ONNX_TENSOR, NULL);
    return 0;
}
