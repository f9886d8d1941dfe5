/* test_scan_formats.c - scan recognises the formats whose loaders never
 * unpickle through the readers' own probes (mf_detect_bytes), not a list of
 * magic numbers of its own (issue 23, "one home for each fact").
 *
 * 1. Verdicts unchanged: tests/data/scan/format_verdicts.tsv holds, for
 *    every file of ../shared/corpus, ../shared/real and the scan fixtures
 *    (tests/data/scan*), the verdict and the number of "holds no pickle"
 *    findings that scan gave when it still had its own list (commit
 *    0fa2773; how: tests/data/scan/make_format_verdicts.sh). Each file must get
 *    the same verdict now, and at least as many such findings (the probes
 *    also know ONNX and TensorFlow files, which hold no pickle either).
 * 2. In memory: the smallest bytes each probe accepts (GGUF, GGML, TFLite,
 *    HDF5 at 0 and at 512, safetensors) are named by the reader's name and
 *    detection detail, and a pickle that carries one of those signatures is
 *    still scanned as the pickle it is. */
#include "testlib.h"

#include <mfmt.h>
#include <mfmt/scan.h>

#define TABLE "tests/data/scan/format_verdicts.tsv"

static size_t no_pickle_findings(const mf_scan_report *r)
{
    size_t n = 0;
    for (size_t i = 0; i < r->n_findings; i++)
        n += strstr(r->findings[i].message, "holds no pickle") != NULL ||
             strstr(r->findings[i].message, "signature (") != NULL;
    return n;
}

static const char *finding_with(const mf_scan_report *r, const char *needle)
{
    for (size_t i = 0; i < r->n_findings; i++)
        if (strstr(r->findings[i].message, needle))
            return r->findings[i].message;
    return NULL;
}

/* One line of the table: "verdict<TAB>count<TAB>path". */
static void check_line(char *line, const char *shared, size_t *n_shared_missing)
{
    char *tab1 = strchr(line, '\t'), *tab2 = tab1 ? strchr(tab1 + 1, '\t') : NULL;
    CHECKF(tab2 != NULL, "bad line: %s", line);
    if (!tab2)
        return;
    *tab1 = *tab2 = 0;
    const char *want = line, *path = tab2 + 1;
    unsigned long before = strtoul(tab1 + 1, NULL, 10);
    char full[1024];
    if (strncmp(path, "../shared/", 10) == 0) {
        if (!shared) {
            ++*n_shared_missing;
            return;
        }
        snprintf(full, sizeof(full), "%s/%s", shared, path + 10);
    } else {
        snprintf(full, sizeof(full), "%s", path);
    }
    mf_status st;
    mf_status_init(&st);
    mf_scan_report *r = NULL;
    int rc = mf_scan_file(full, &r, &st);
    CHECKF(rc == 0, "%s: %s", path, st.msg);
    mf_status_clear(&st);
    if (rc)
        return;
    CHECKF(strcmp(mf_verdict_name(r->verdict), want) == 0, "%s: verdict %s, was %s", path,
           mf_verdict_name(r->verdict), want);
    size_t now = no_pickle_findings(r);
    CHECKF(now >= before, "%s: %zu \"holds no pickle\" findings, were %lu", path, now, before);
    mf_scan_free(r);
}

static void test_table(void)
{
    FILE *f = fopen(TABLE, "r");
    CHECKF(f != NULL, "%s missing", TABLE);
    if (!f)
        return;
    const char *shared = tl_shared_dir();
    size_t lines = 0, missing = 0;
    char line[2048];
    while (fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = 0;
        if (!line[0])
            continue;
        lines++;
        check_line(line, shared, &missing);
    }
    fclose(f);
    CHECKF(lines > 800, "%zu lines in %s", lines, TABLE);
    if (missing)
        TL_SKIP("%zu files of ../shared (corpus, real): ../shared is not here", missing);
}

static mf_scan_report *scan_mem(const char *name, const void *b, size_t n)
{
    mf_status st;
    mf_status_init(&st);
    mf_scan_report *r = NULL;
    int rc = mf_scan_bytes(name, b, n, &r, &st);
    CHECKF(rc == 0, "%s: %s", name, st.msg);
    mf_status_clear(&st);
    return rc ? NULL : r;
}

/* Each probe's smallest accepted bytes: the finding names the reader. */
static void test_probes(void)
{
    static uint8_t buf[2048];
    static const struct {
        const char *name, *head;
        size_t at, len, size;
        const char *want;
    } cases[] = {
        {"a.gguf", "GGUF\3\0\0\0", 0, 8, 64, "a gguf file (GGUF v3 little-endian): holds no pickle"},
        {"a.ggml", "tjgg\3\0\0\0", 0, 8, 64, "a ggml-legacy file (GGJT v3 (obsolete))"},
        {"a.tflite", "\x18\0\0\0TFL3", 0, 8, 64, "a tflite file (TFLite flatbuffer (TFL3))"},
        {"a.h5", "\x89HDF\r\n\x1a\n", 0, 8, 64, "a hdf5 file (HDF5, superblock at byte 0)"},
        {"b.h5", "\x89HDF\r\n\x1a\n", 512, 8, 1024, "a hdf5 file (HDF5, superblock at byte 512)"},
        {"a.st", "\x02\0\0\0\0\0\0\0{}", 0, 10, 10, "a safetensors file (safetensors, 2-byte header)"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        memset(buf, 0, sizeof(buf));
        memcpy(buf + cases[i].at, cases[i].head, cases[i].len);
        mf_scan_report *r = scan_mem(cases[i].name, buf, cases[i].size);
        if (!r)
            continue;
        CHECKF(r->verdict == MF_VERDICT_SAFE, "%s: %s", cases[i].name, mf_verdict_name(r->verdict));
        CHECKF(finding_with(r, cases[i].want), "%s: no finding \"%s\"", cases[i].name,
               cases[i].want);
        mf_scan_free(r);
    }
    /* pickle.load reads from byte 0 whatever the signature says: a pickle
     * whose bytes 4..7 are "TFL3" (GLOBAL os.TFL3, called) is scanned as
     * that pickle, and not judged safe */
    static const char pk[] = "cos\nTFL3\n(S'x'\ntR.";
    mf_scan_report *r = scan_mem("p.tflite", pk, sizeof(pk) - 1);
    if (r) {
        CHECKF(finding_with(r, "a tflite signature (TFLite flatbuffer (TFL3)) on a file"),
               "the polyglot is not named as one");
        CHECKF(r->verdict != MF_VERDICT_SAFE, "os.TFL3(): %s", mf_verdict_name(r->verdict));
        mf_scan_free(r);
    }
}

int main(void)
{
    test_probes();
    test_table();
    printf("RESULT scan_formats %d %d %d\n", tl_passed, tl_failed, tl_skipped);
    return tl_failed != 0;
}
