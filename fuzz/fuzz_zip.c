/* fuzz_zip.c - libFuzzer harness for the zip reader and what stands on it:
 * the central directory read from memory, every member located, streamed
 * with its CRC checked and extracted under a limit; then the bytes scanned
 * (every member that may hold a pickle, nested archives) and opened as a
 * PyTorch .pt archive with every tensor hashed. Both zip readings
 * (Python's zipfile, torch's miniz) and tarfile's reading of tars. */
#include "fuzz_common.h"

#include "core/core.h"
#include "core/tar.h"
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

static void run_zip(const uint8_t *data, size_t size, mf_zip_dialect d)
{
    mf_arena *a = mf_arena_new();
    if (!a)
        return;
    mf_status st;
    mf_status_init(&st);
    mf_zip z;
    if (mf_zip_open_as(&z, d, data, size, "fuzz.zip", a, &st) == 0) {
        mf_zip_ambiguity amb;
        (void)mf_zip_ambiguities(&z, &amb);
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
            const mf_zip_entry *all[4];
            total += mf_zip_find_all(&z, e->name, all, 4);
            if (mf_zip_extract_prefix(&z, e, 4096, &buf, &n, &es) == 0) {
                total += n;
                free(buf);
            }
            mf_status_clear(&es);
        }
        total += mf_zip_find_suffix(&z, "/data.pkl") != NULL;
        (void)total;
    }
    mf_status_clear(&st);
    mf_arena_free(a);
}

/* tarfile's reading: every member, its link resolved, its data span. */
static void run_tar(const uint8_t *data, size_t size)
{
    mf_arena *a = mf_arena_new();
    if (!a)
        return;
    mf_status st;
    mf_status_init(&st);
    mf_tar t;
    if (mf_tar_probe(data, size) && mf_tar_open(&t, data, size, "fuzz.tar", a, &st) == 0) {
        size_t total = 0;
        for (size_t i = 0; i < t.n; i++) {
            const mf_tar_member *m = mf_tar_resolve(&t, &t.m[i]);
            const uint8_t *p;
            uint64_t n;
            if (m && mf_tar_data(&t, m, &p, &n, &st) == 0 && n)
                total += p[0] + p[n - 1];
            mf_status_clear(&st);
            total += mf_tar_find(&t, t.m[i].name) != NULL;
        }
        (void)total;
    }
    mf_status_clear(&st);
    mf_arena_free(a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    run_zip(data, size, MF_ZIP_PYTHON);
    run_zip(data, size, MF_ZIP_MINIZ);
    run_tar(data, size);
    mf_status st;
    mf_status_init(&st);
    mf_scan_report *r;
    if (mf_scan_bytes("fuzz.pt", data, size, &r, &st) == 0)
        mf_scan_free(r);
    mf_status_clear(&st);
    fuzz_open_bytes(data, size, ".pt");
    return 0;
}
