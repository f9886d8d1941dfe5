/* fuzz_npz.c - libFuzzer harness for the .npz reader: the input is written
 * to a file named *.npz (an unreadable zip still reaches the reader), opened
 * strictly (CRCs), every tensor hashed (inflating deflated members), and the
 * object-array pickle enumeration run over it. */
#include "core/core.h"
#include "formats/npy.h"

#include <stdlib.h>
#include <unistd.h>

static char path[64];

static int on_pickle(void *ctx, const char *member, const uint8_t *p, size_t n, uint64_t off,
                     mf_status *st)
{
    volatile uint8_t x = 0;
    for (size_t i = 0; i < n; i += 4096)
        x ^= p[i]; /* touch the bytes the scanner would read */
    (void)x;
    return 0;
}

static void write_input(const uint8_t *data, size_t size)
{
    if (!path[0]) {
        snprintf(path, sizeof(path), "/tmp/fuzz_npz_XXXXXX.npz");
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
    mf_numpy_each_pickle(path, on_pickle, NULL, &st);
    mf_status_clear(&st);
    return 0;
}
