/* fuzz_hdf5.c - libFuzzer harness for the HDF5 reader (and the Keras
 * pieces on top): the input is opened as a `.h5` file (plainly and
 * strictly; every tensor hashed, so chunk indexes, filters and the
 * streamer run), parsed again through the memory-range entry point at a
 * non-zero origin (as a Keras archive's STORED member is), and searched
 * for Keras Lambda layers. */
#include "fuzz_common.h"

#include "core/core.h"
#include "formats/hdf5/hdf5_int.h"
#include "formats/hdf5/keras.h"

static int count_lambda(void *ctx, const mf_keras_lambda *l)
{
    *(size_t *)ctx += strlen(l->layer) + strlen(l->kind) + strlen(l->detail) + strlen(l->source);
    return 0;
}

static void parse_in_memory(const uint8_t *data, size_t size)
{
    mf_model *m = mf_model_new(MF_FMT_HDF5, "range");
    if (!m)
        return;
    mf_status st;
    mf_status_init(&st);
    if (mf_hdf5_parse_range(m, 0, data, size, 4096, "outer[inner.h5]", MF_OPEN_STRICT, &st) == 0) {
        volatile size_t sink = 0;
        for (size_t i = 0; i < m->n_tensors; i++) {
            const mf_tensor *t = &m->tensors[i];
            /* mapped bytes must lie inside the range */
            if (t->data && (t->data < data || t->nbytes > size ||
                            (size_t)(t->data - data) > size - t->nbytes))
                abort();
            sink += t->nbytes;
        }
        size_t n = 0;
        mf_status ls;
        mf_status_init(&ls);
        /* the callback never fails; the one refusal by design is a config
         * Python's json reads and mfmt cannot (scan then says unknown) */
        if (mf_keras_find_lambdas(m, count_lambda, &n, &ls) < 0 &&
            (ls.code != MF_ERR_FORMAT || !strstr(ls.msg, "Python's json")))
            abort();
        mf_status_clear(&ls);
        sink += n;
        (void)sink;
    } else if (!st.msg[0]) {
        abort();
    }
    mf_status_clear(&st);
    mf_close(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_open_bytes(data, size, ".h5");
    parse_in_memory(data, size);
    return 0;
}
