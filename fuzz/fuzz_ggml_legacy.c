/* fuzz_ggml_legacy.c - libFuzzer harness for the GGML/GGMF/GGJT reader:
 * the input is written to a file, opened strictly, every tensor hashed. */
#include "core/core.h"

#include <stdlib.h>
#include <unistd.h>

static char path[64];

static void write_input(const uint8_t *data, size_t size)
{
    if (!path[0]) {
        snprintf(path, sizeof(path), "/tmp/fuzz_ggml_XXXXXX.bin");
        int fd = mkstemps(path, 4);
        if (fd < 0)
            abort();
        close(fd);
    }
    FILE *f = fopen(path, "wb");
    if (!f)
        abort();
    if (size && fwrite(data, 1, size, f) != size)
        abort();
    fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    write_input(data, size);
    mf_status st;
    mf_status_init(&st);
    mf_model *m = NULL;
    mf_open_opts o = {.flags = MF_OPEN_STRICT};
    if (mf_open(path, &o, &m, &st) == 0) {
        char hex[129];
        for (size_t i = 0; i < m->n_tensors; i++) {
            mf_status_clear(&st);
            mf_hash_tensor(m, &m->tensors[i], MF_SHA256, hex, &st);
        }
        mf_close(m);
    }
    mf_status_clear(&st);
    return 0;
}
