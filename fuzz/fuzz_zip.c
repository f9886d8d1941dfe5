/* fuzz_zip.c - libFuzzer harness for the zip reader and what stands on it:
 * the central directory read from memory, every member located, streamed
 * with its CRC checked and extracted under a limit; then the bytes scanned
 * (every member that may hold a pickle, nested archives) and opened as a
 * PyTorch .pt archive with every tensor hashed. */
#include "fuzz_common.h"

#include "core/core.h"
#include "core/zip.h"
#include "ops/scan.h"

static int count_sink(void *ctx, const void *buf, size_t n, mf_status *st)
{
    (void)st;
    volatile const uint8_t *b = buf;
    size_t *total = ctx;
    if (n)
        *total += b[0] + b[n - 1];
    *total += n;
    return 0;
}

static void run_zip(const uint8_t *data, size_t size)
{
    mf_arena *a = mf_arena_new();
    if (!a)
        return;
    mf_status st;
    mf_status_init(&st);
    mf_zip z;
    if (mf_zip_open(&z, data, size, "fuzz.zip", a, &st) == 0) {
        size_t total = 0;
        for (size_t i = 0; i < z.n && i < 256; i++) {
            const mf_zip_entry *e = &z.entries[i];
            mf_status es;
            mf_status_init(&es);
            const uint8_t *p = mf_zip_stored_data(&z, e, &es);
            if (p && e->usize)
                total += p[0] + p[e->usize - 1];
            mf_status_clear(&es);
            mf_zip_stream(&z, e, true, count_sink, &total, &es);
            mf_status_clear(&es);
            uint8_t *buf;
            size_t n;
            if (mf_zip_extract(&z, e, 1 << 20, &buf, &n, &es) == 0) {
                total += n;
                free(buf);
            }
            mf_status_clear(&es);
            total += mf_zip_find(&z, e->name) != NULL;
        }
        total += mf_zip_find_suffix(&z, "/data.pkl") != NULL;
        (void)total;
    }
    mf_status_clear(&st);
    mf_arena_free(a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    run_zip(data, size);
    mf_status st;
    mf_status_init(&st);
    mf_scan_report *r;
    if (mf_scan_bytes("fuzz.pt", data, size, &r, &st) == 0)
        mf_scan_free(r);
    mf_status_clear(&st);
    fuzz_open_bytes(data, size, ".pt");
    return 0;
}
