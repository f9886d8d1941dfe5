/* fuzz_scan.c - libFuzzer harness for `mfmt scan` that asserts the
 * scanner's promise on every input (issue 10): when a dangerous global is
 * reachable by a loader's reading, the verdict is not safe, and no input
 * on which mfmt's own reading stops short of the loader's is safe.
 *
 * For input D (aborts on a broken promise):
 *  1. scan(D) runs (no crash, leak or hang);
 *  2. "\x80\x02cposix\nsystem\n" + D is dangerous: pickle.load imports
 *     posix.system at byte 2, whatever follows, and whatever else the
 *     bytes look like (zip, tar, GGUF... signatures further on);
 *  3. when D[:k] is a pickle mfmt runs to STOP on its own, D[:k] followed by a
 *     pickle calling posix.system is dangerous (pickles after STOP);
 *  4. an object-array .npy whose pickle starts with posix.system, then D,
 *     is dangerous (np.load(allow_pickle=True));
 *  5. a pickle that mfmt stops at one of its own limits, or a .npy header
 *     mfmt cannot read exactly as numpy does, is never safe. */
#include "fuzz_common.h"

#include "core/core.h"
#include "formats/numpy/npy.h"
#include "core/pickle.h"
#include "ops/scan.h"

static mf_verdict scan_of(const uint8_t *b, size_t n)
{
    mf_status st;
    mf_status_init(&st);
    mf_scan_report *r;
    mf_verdict v = MF_VERDICT_UNKNOWN;
    if (mf_scan_bytes("fuzz.bin", b, n, &r, &st) == 0) {
        v = r->verdict;
        mf_scan_free(r);
    }
    mf_status_clear(&st);
    return v;
}

static void must_be_dangerous(const uint8_t *b, size_t n, const char *what)
{
    mf_verdict v = scan_of(b, n);
    if (v != MF_VERDICT_DANGEROUS) {
        fprintf(stderr, "fuzz_scan: %s judged %s\n", what, mf_verdict_name(v));
        abort();
    }
}

static uint8_t *cat(const void *a, size_t an, const void *b, size_t bn, const void *c, size_t cn)
{
    uint8_t *p = malloc(an + bn + cn + 1);
    if (!p)
        return NULL;
    memcpy(p, a, an);
    if (bn)
        memcpy(p + an, b, bn);
    if (cn)
        memcpy(p + an + bn, c, cn);
    return p;
}

static const char evil_head[] = "\x80\x02" "cposix\nsystem\n";
static const char evil_pickle[] = "cposix\nsystem\n(S'id'\ntR.";

/* The stop state of pk_load on D: 1 complete (used bytes), 0 failed at a
 * point CPython also fails, -1 stopped by one of mfmt's limits. */
static int run_pickle(const uint8_t *d, size_t n, size_t *used)
{
    pk_opts o = {.file = "fuzz.bin"};
    pk_machine *pm = pk_new(&o);
    if (!pm)
        return 0;
    mf_status st;
    mf_status_init(&st);
    pk_obj *v;
    uint64_t ops;
    int rc = pk_load(pm, d, n, &v, used, &ops, &st) == 0 ? 1 : pk_stopped_by_limit(pm) ? -1 : 0;
    mf_status_clear(&st);
    pk_free(pm);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mf_verdict v = scan_of(data, size);
    /* 2 */
    uint8_t *p = cat(evil_head, sizeof(evil_head) - 1, data, size, NULL, 0);
    if (p)
        must_be_dangerous(p, sizeof(evil_head) - 1 + size, "a pickle importing posix.system at byte 2");
    free(p);
    /* 3 and 5 (pickles) */
    if (size >= 2 && data[0] == 0x80) {
        size_t used = 0;
        int rc = run_pickle(data, size, &used);
        size_t again = 0;
        /* D[:k] must be complete on its own (a FRAME may reach past STOP) */
        if (rc == 1 && used <= size && run_pickle(data, used, &again) == 1 && again == used) {
            /* issue 10 class 5: scan every pickle, "or call the rest unknown
             * — never safe" (a first pickle mfmt reads differently from
             * CPython may hide where the next starts) */
            p = cat(data, used, evil_pickle, sizeof(evil_pickle) - 1, NULL, 0);
            mf_verdict after = p ? scan_of(p, used + sizeof(evil_pickle) - 1) : MF_VERDICT_DANGEROUS;
            if (after == MF_VERDICT_SAFE) {
                fprintf(stderr, "fuzz_scan: posix.system after STOP judged safe\n");
                abort();
            }
            if (after != MF_VERDICT_DANGEROUS) /* seen by hand runs: the next start is known */
                fprintf(stderr, "fuzz_scan: posix.system after STOP judged unknown\n");
            free(p);
        }
        if (rc == -1 && v == MF_VERDICT_SAFE) {
            fprintf(stderr, "fuzz_scan: a pickle stopped by mfmt's limits judged safe\n");
            abort();
        }
    }
    /* 4 */
    static const char npy[] = "\x93NUMPY\x01\x00\x76\x00{'descr': '|O', 'fortran_order': False, "
                              "'shape': (1,), }";
    uint8_t head[128];
    memset(head, ' ', sizeof(head));
    memcpy(head, npy, sizeof(npy) - 1);
    head[127] = '\n';
    p = cat(head, sizeof(head), evil_pickle, 14, data, size); /* "cposix\nsystem\n" + D */
    if (p)
        must_be_dangerous(p, sizeof(head) + 14 + size, "an object .npy whose pickle imports posix.system");
    free(p);
    /* 5 (npy headers) */
    if (size >= 10 && memcmp(data, MF_NPY_MAGIC, 6) == 0) {
        mf_npy_header h;
        mf_status st;
        mf_status_init(&st);
        if (mf_npy_parse_header(data, size, "fuzz.bin", 0, &h, &st) && h.maybe_pickle &&
            v == MF_VERDICT_SAFE) {
            fprintf(stderr, "fuzz_scan: a .npy numpy may unpickle judged safe\n");
            abort();
        }
        mf_status_clear(&st);
    }
    return 0;
}
