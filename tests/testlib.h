/* testlib.h - a minimal test harness: CHECK records, the summary line counts.
 * Each tests/test_*.c is its own program; tests/run.sh adds up the
 * "RESULT passed failed" lines they print. */
#ifndef MF_TESTLIB_H
#define MF_TESTLIB_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tl_passed, tl_failed, tl_skipped;

/* A part of a suite that cannot run here (no ../shared, no tool): said on
 * its own line and counted, never silently passed. */
#define TL_SKIP(...)                                                         \
    do {                                                                     \
        tl_skipped++;                                                        \
        printf("SKIP ");                                                     \
        printf(__VA_ARGS__);                                                 \
        putchar('\n');                                                       \
    } while (0)

#define CHECK(cond)                                                          \
    do {                                                                     \
        if (cond) {                                                          \
            tl_passed++;                                                     \
        } else {                                                             \
            tl_failed++;                                                     \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);  \
        }                                                                    \
    } while (0)

#define CHECKF(cond, ...)                                                    \
    do {                                                                     \
        if (cond) {                                                          \
            tl_passed++;                                                     \
        } else {                                                             \
            tl_failed++;                                                     \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);  \
            fprintf(stderr, __VA_ARGS__);                                    \
            fputc('\n', stderr);                                             \
        }                                                                    \
    } while (0)

/* Where ../shared is (MFMT_SHARED overrides); NULL when absent. */
static inline const char *tl_shared_dir(void)
{
    /* MFMT_SHARED=/nonexistent runs the suites as a copy without it would */
    const char *e = getenv("MFMT_SHARED");
    static const char *cands[] = {"../shared", "../../shared"};
    for (size_t i = 0; i < sizeof(cands) / sizeof(cands[0]); i++) {
        const char *dir = e && *e ? e : cands[i];
        FILE *f;
        char p[1024];
        snprintf(p, sizeof(p), "%s/DESIGN.md", dir);
        if ((f = fopen(p, "r"))) {
            fclose(f);
            return dir;
        }
        if (e && *e)
            break;
    }
    return NULL;
}

/* Runs a shell command with stdout+stderr sent to `log`, reads them back
 * into out (NUL-terminated); returns the exit status (-1: killed). */
#include <sys/wait.h>
static inline int tl_run_cmd(const char *cmd, const char *log, char *out, size_t cap)
{
    char full[4096];
    snprintf(full, sizeof(full), "%s > %s 2>&1", cmd, log);
    int rc = system(full);
    FILE *f = fopen(log, "r");
    size_t n = f ? fread(out, 1, cap - 1, f) : 0;
    out[n] = 0;
    if (f)
        fclose(f);
    remove(log);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/* A fresh directory /tmp/mfmt-NAME-XXXXXX written into dir; false (and
 * why, on stderr) when it cannot be made. */
#include <stdbool.h>
static inline bool tl_make_tmpdir(char *dir, size_t cap, const char *name)
{
    snprintf(dir, cap, "/tmp/mfmt-%s-XXXXXX", name);
    if (mkdtemp(dir))
        return true;
    perror("mkdtemp");
    return false;
}

/* Removes a test's directory; kept (and said) when MFMT_KEEP_TEST_FILES is
 * set, e.g. to gather fuzz seeds. False when it cannot be removed. */
static inline bool tl_remove_tmpdir(const char *dir)
{
    if (getenv("MFMT_KEEP_TEST_FILES")) {
        printf("test files kept in %s\n", dir);
        return true;
    }
    char cmd[4200];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) == 0)
        return true;
    fprintf(stderr, "could not remove %s\n", dir);
    return false;
}

/* A test's main ends with: return tl_report("name"); "RESULT name passed
 * failed skipped", which tests/run.sh adds up. A suite that checked
 * nothing and skipped nothing fails: a test must not vanish quietly. */
static inline int tl_report(const char *name)
{
    if (tl_passed + tl_failed + tl_skipped == 0) {
        fprintf(stderr, "FAIL %s: no check ran and none was skipped\n", name);
        tl_failed++;
    }
    printf("RESULT %s %d %d %d\n", name, tl_passed, tl_failed, tl_skipped);
    return tl_failed ? 1 : 0;
}
#endif
