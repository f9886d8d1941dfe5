/* fuzz_keras.c - libFuzzer harness for the Keras 3 reader: the input is
 * opened as a `.keras` archive (zip with config.json, metadata.json and
 * model.weights.h5, STORED or DEFLATED), every tensor hashed, and its
 * Lambda layers and module references listed (a config that cannot be
 * read as Python's json would may fail the listing, with a format error:
 * the scanner's `unknown`; nothing else may). */
#include "fuzz_common.h"

#include "core/core.h"
#include "formats/hdf5/keras.h"

static int count_lambda(void *ctx, const mf_keras_lambda *l)
{
    *(size_t *)ctx += strlen(l->layer) + strlen(l->detail);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_open_bytes(data, size, ".keras");
    const char *path = fuzz_write_input(data, size, ".keras");
    mf_status st;
    mf_status_init(&st);
    mf_model *m = NULL;
    mf_open_opts o = {.struct_size = sizeof(mf_open_opts), .flags = MF_OPEN_NO_SCAN};
    if (mf_open(path, &o, &m, &st) == 0) {
        size_t n = 0;
        if (mf_keras_find_lambdas(m, count_lambda, &n, &st) < 0 &&
            (st.code != MF_ERR_FORMAT || !strstr(st.msg, "Python's json")))
            abort();
        mf_close(m);
    }
    mf_status_clear(&st);
    return 0;
}
