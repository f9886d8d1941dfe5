/* test_regressions.c - every input in tests/regress/ once crashed or broke
 * an invariant (most were found by the fuzzers, see fuzz/). Each is opened
 * the way the fuzz harnesses open it (plainly and strictly; every tensor
 * hashed, every metadata value walked; see fuzz/fuzz_common.h), detected,
 * and must be refused with a message naming the file, unless its name
 * starts with "ok-". Under `make test` this runs with ASan + UBSan too. */
#include "testlib.h"

#include "../fuzz/fuzz_common.h"

#include <dirent.h>

static const char *regress_dir(void)
{
    static const char *cands[] = {"tests/regress", "../tests/regress", "regress"};
    for (size_t i = 0; i < sizeof(cands) / sizeof(cands[0]); i++) {
        DIR *d = opendir(cands[i]);
        if (d) {
            closedir(d);
            return cands[i];
        }
    }
    return NULL;
}

static uint8_t *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc(len > 0 ? (size_t)len : 1);
    *n = b && len > 0 ? fread(b, 1, (size_t)len, f) : 0;
    fclose(f);
    return b;
}

static void check_one(const char *dir, const char *name)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    size_t n = 0;
    uint8_t *b = slurp(path, &n);
    CHECKF(b != NULL, "cannot read %s", path);
    if (!b)
        return;
    const char *dot = strrchr(name, '.');
    int opened = fuzz_open_bytes(b, n, dot ? dot : "");
    bool want_ok = strncmp(name, "ok-", 3) == 0;
    CHECKF((opened == 0) == want_ok, "%s: %s", name, want_ok ? "did not open" : "opened");
    /* the message of a refusal names the file it is about */
    mf_status st;
    mf_status_init(&st);
    mf_model *m = NULL;
    if (mf_open(path, NULL, &m, &st) != 0)
        CHECKF(strstr(st.msg, name) != NULL, "%s: message \"%s\"", name, st.msg);
    mf_close(m);
    mf_status_clear(&st);
    mf_detection d;
    CHECK(mf_detect(path, &d, &st) == 0 && memchr(d.detail, 0, sizeof(d.detail)));
    mf_status_clear(&st);
    free(b);
}

int main(void)
{
    const char *dir = regress_dir();
    CHECKF(dir != NULL, "tests/regress not found (run from the source tree)");
    DIR *d = dir ? opendir(dir) : NULL;
    struct dirent *e;
    int files = 0;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.' || strcmp(e->d_name, "README.md") == 0)
            continue;
        check_one(dir, e->d_name);
        files++;
    }
    if (d)
        closedir(d);
    CHECKF(files > 0, "no regression inputs in %s", dir ? dir : "?");
    printf("%d regression inputs\n", files);
    return tl_report("regressions");
}
