/* test_scan_joblib.c - joblib files as joblib.load reads them: arrays
 * written raw between the pickle's opcodes (after each NumpyArrayWrapper's
 * BUILD), object arrays as pickles inside the pickle, zlib/gzip files
 * inflated and scanned, other compressors unknown. The fixtures are
 * written by the real joblib (tests/data/scan/joblib/make_joblib.py, which
 * also loads the benign ones back); expected.txt holds each file's
 * verdict. */
#include "testlib.h"

#include "ops/scan.h"

#define JDIR "tests/data/scan/joblib"

int main(void)
{
    FILE *f = fopen(JDIR "/expected.txt", "r");
    CHECKF(f != NULL, "%s/expected.txt", JDIR);
    char name[256], want[32];
    int n = 0;
    while (f && fscanf(f, "%255s %31s", name, want) == 2) {
        char path[512];
        snprintf(path, sizeof(path), JDIR "/%s", name);
        mf_scan_report *r = NULL;
        mf_status st;
        mf_status_init(&st);
        int rc = mf_scan_file(path, &r, &st);
        CHECKF(rc == 0, "%s: %s", path, st.msg);
        if (r) {
            CHECKF(strcmp(mf_verdict_name(r->verdict), want) == 0, "%s: %s, want %s", path,
                   mf_verdict_name(r->verdict), want);
            /* every file read as a pickle names joblib's wrapper as safe */
            for (size_t i = 0; i < r->n_globals; i++)
                if (strstr(r->globals[i].name, "NumpyArrayWrapper"))
                    CHECK(r->globals[i].cls == MF_VERDICT_SAFE);
        }
        mf_scan_free(r);
        mf_status_clear(&st);
        n++;
    }
    if (f)
        fclose(f);
    CHECKF(n >= 10, "joblib fixtures: %d", n);
    printf("joblib: %d files\n", n);
    printf("RESULT scan_joblib %d %d\n", tl_passed, tl_failed);
    return tl_failed != 0;
}
