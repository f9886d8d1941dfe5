/* numpy_harness.h - the body shared by fuzz_npy.c and fuzz_npz.c: arbitrary
 * bytes under a .npy/.npz name (the name sends input whose bytes are not
 * recognised to that reader), opened and walked as fuzz_common.h does, then
 * searched for object-array pickles as the scanner does. */
#ifndef MF_FUZZ_NUMPY_HARNESS_H
#define MF_FUZZ_NUMPY_HARNESS_H
#include "fuzz_common.h"

#include "core/core.h"
#include "formats/numpy/npy.h"

static int on_pickle(void *ctx, const char *member, const uint8_t *p, size_t n, uint64_t off,
                     mf_status *st)
{
    volatile uint8_t sum = (uint8_t)strlen(member);
    for (size_t i = 0; i < n; i++) /* every byte handed to the scanner must be readable */
        sum += p[i];
    (void)sum;
    return 0;
}

static void fuzz_numpy(const uint8_t *data, size_t size, const char *suffix)
{
    fuzz_open_bytes(data, size, suffix);
    mf_status st;
    mf_status_init(&st);
    int n = mf_numpy_each_pickle(fuzz_write_input(data, size, suffix), on_pickle, NULL, &st);
    if (n < 0 && (st.code == MF_OK || !st.msg[0]))
        abort(); /* a failure must say why */
    mf_status_clear(&st);
}
#endif
