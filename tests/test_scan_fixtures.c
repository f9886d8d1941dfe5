/* test_scan_fixtures.c - `mfmt scan` verdicts on the files of
 * tests/data/scan, made with Python's pickle and numpy by
 * tests/data/scan/make_scan_tests.py (issue 10: dangerous files must never
 * be judged safe; benign data classes must be), of tests/data/scan_benign
 * (issue 18: files real writers produce, all safe) and tests/data/
 * scan_canon (issue 18 classes A and B: frame games and excused failures,
 * never safe, with their benign twins). Each manifest.json gives each
 * file's verdict and a text one finding of that verdict must mention. */
#include "testlib.h"

#include "ops/scan.h"

#include <jansson.h>

#define DATA "tests/data/scan"

static bool mentions(const mf_scan_report *r, mf_verdict sev, const char *needle)
{
    for (size_t i = 0; i < r->n_findings; i++) {
        const mf_finding *f = &r->findings[i];
        if (f->severity == sev &&
            (strstr(f->message, needle) || (f->global && strstr(f->global, needle))))
            return true;
    }
    return false;
}

static mf_verdict verdict_of(const char *s)
{
    return strcmp(s, "dangerous") == 0 ? MF_VERDICT_DANGEROUS
           : strcmp(s, "unknown") == 0 ? MF_VERDICT_UNKNOWN : MF_VERDICT_SAFE;
}

static void run_case(const char *dir, json_t *c, size_t *counts)
{
    const char *path = json_string_value(json_object_get(c, "path"));
    const char *want = json_string_value(json_object_get(c, "verdict"));
    const char *needle = json_string_value(json_object_get(c, "needle"));
    CHECK(path && want);
    if (!path || !want)
        return;
    char full[512];
    snprintf(full, sizeof(full), "%s/%s", dir, path);
    mf_status st;
    mf_status_init(&st);
    mf_scan_report *r = NULL;
    int rc = mf_scan_file(full, &r, &st);
    CHECKF(rc == 0, "%s: scan failed: %s", path, st.msg);
    mf_status_clear(&st);
    if (rc)
        return;
    mf_verdict v = verdict_of(want);
    counts[v]++;
    CHECKF(r->verdict == v, "%s: verdict %s, want %s (%s)", path, mf_verdict_name(r->verdict),
           want, json_string_value(json_object_get(c, "note")));
    if (needle)
        CHECKF(mentions(r, v, needle), "%s: no %s finding mentions \"%s\"", path, want, needle);
    mf_scan_free(r);
}

/* np.load(allow_pickle=True) reads a header of any size (max_header_size
 * is lifted): one beyond mfmt's limit is scanned as an object array. */
static void test_huge_header(void)
{
    const char *dict = "{'descr': '|O', 'fortran_order': False, 'shape': (1,), }";
    const char *evil = "cos\nsystem\n(S'id'\ntR.";
    size_t hlen = (2u << 20) + 64 - 12, n = 12 + hlen + strlen(evil);
    uint8_t *b = malloc(n);
    CHECK(b != NULL);
    if (!b)
        return;
    memcpy(b, "\x93NUMPY\x02\x00", 8);
    mf_wr32le(b + 8, (uint32_t)hlen);
    memset(b + 12, ' ', hlen);
    memcpy(b + 12, dict, strlen(dict));
    b[12 + hlen - 1] = '\n';
    memcpy(b + 12 + hlen, evil, strlen(evil));
    mf_status st;
    mf_status_init(&st);
    mf_scan_report *r = NULL;
    CHECK(mf_scan_bytes("huge.npy", b, n, &r, &st) == 0 && r &&
          r->verdict == MF_VERDICT_DANGEROUS && mentions(r, MF_VERDICT_DANGEROUS, "os.system"));
    mf_scan_free(r);
    mf_status_clear(&st);
    free(b);
}

/* One manifest's cases; returns how many. */
static size_t run_manifest(const char *dir, size_t *counts)
{
    char mpath[256];
    snprintf(mpath, sizeof(mpath), "%s/manifest.json", dir);
    json_error_t err;
    json_t *m = json_load_file(mpath, 0, &err);
    CHECKF(m && json_is_array(m), "%s: %s", mpath, err.text);
    size_t i;
    json_t *c;
    json_array_foreach(m, i, c)
        run_case(dir, c, counts);
    size_t n = m ? json_array_size(m) : 0;
    json_decref(m);
    return n;
}

int main(void)
{
    test_huge_header();
    size_t counts[3] = {0, 0, 0};
    run_manifest(DATA, counts);
    /* every class is represented */
    CHECK(counts[MF_VERDICT_SAFE] >= 10 && counts[MF_VERDICT_DANGEROUS] >= 10 &&
          counts[MF_VERDICT_UNKNOWN] >= 1);
    /* issue 18: what real writers produce is safe (make_benign.py) */
    size_t safe0 = counts[MF_VERDICT_SAFE];
    size_t n = run_manifest("tests/data/scan_benign", counts);
    CHECKF(n >= 100 && counts[MF_VERDICT_SAFE] - safe0 == n, "scan_benign: %zu of %zu safe",
           counts[MF_VERDICT_SAFE] - safe0, n);
    /* issue 18 classes A and B, each confirmed with the real loaders
     * (make_canon_tests.py), and their benign twins */
    size_t d0 = counts[MF_VERDICT_DANGEROUS] + counts[MF_VERDICT_UNKNOWN];
    n = run_manifest("tests/data/scan_canon", counts);
    CHECK(n >= 20 && counts[MF_VERDICT_DANGEROUS] + counts[MF_VERDICT_UNKNOWN] - d0 >= 10);
    /* gated names (doc/scan.md): the shapes training checkpoints use are
     * safe, the same names used otherwise keep their verdict */
    size_t s0 = counts[MF_VERDICT_SAFE];
    d0 = counts[MF_VERDICT_DANGEROUS];
    n = run_manifest("tests/data/scan_gate", counts);
    CHECK(n >= 20 && counts[MF_VERDICT_SAFE] - s0 >= 6 && counts[MF_VERDICT_DANGEROUS] - d0 >= 12);
    return tl_report("scan_fixtures");
}
