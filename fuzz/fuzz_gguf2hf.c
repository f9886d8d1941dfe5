/* fuzz_gguf2hf.c - libFuzzer harness: a GGUF read back as a Hugging Face
 * directory (lib/ops/hfconv/gguf2hf*.c): the view of it (mf_open_gguf_as_hf,
 * gguf2hf_view.c) with every tensor streamed and hashed through the
 * converter's reverse operations, then the whole conversion
 * (mf_convert_to_hf: config.json, tokenizer files, weights) into a scratch
 * folder that is removed again. A refusal must say why; a success must
 * leave no error in the status. */
#include "fuzz_common.h"

#include <mfmt.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *in = fuzz_write_input(data, size, ".gguf");
    mf_convert_hf_opts o;
    mf_convert_hf_opts_init(&o);
    o.dtype = size % 2 ? MF_F32 : MF_DTYPE_INVALID;
    mf_model *v = NULL;
    mf_status st;
    mf_status_init(&st);
    int rc = mf_open_gguf_as_hf(in, &o, &v, &st);
    fuzz_walk_status(&st);
    if (rc != 0 && !st.msg[0])
        abort(); /* a refusal always says why */
    if (rc == 0) {
        if (st.code != MF_OK)
            abort();
        fuzz_walk_model(v);
        mf_close(v);
    }
    mf_status_clear(&st);
    if (rc != 0)
        return 0; /* what the view refuses, the conversion refuses too */
    char out[320];
    snprintf(out, sizeof(out), "%s/hf-out", fuzz_scratch_dir());
    rc = mf_convert_to_hf(in, out, &o, &st);
    fuzz_walk_status(&st);
    if (rc != 0 && !st.msg[0])
        abort();
    if (rc == 0 && st.code != MF_OK)
        abort();
    mf_status_clear(&st);
    fuzz_remove_dir(out);
    return 0;
}
