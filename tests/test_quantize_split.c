/* test_quantize_split.c - llama-quantize's COPY type and --keep-split:
 * for each case of tests/data/quantize_split_ref.json (made by
 * tests/data/make_quantize_split_ref.py with the llama.cpp oracle named
 * there) `mfmt quantize` with the same arguments writes files with the
 * oracle's SHA-256, as many and named as llama_split_path names them. Split
 * inputs are made by `mfmt split` and shown to be llama-gguf-split's own
 * (their shards' hashes are recorded too). Also: a later file of a set is
 * refused, a failed --keep-split leaves no file. */
#include "testlib.h"

#include <mfmt.h>

#include <jansson.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmp[64];
static const char *mfmt;

static bool exists(const char *p)
{
    return access(p, F_OK) == 0;
}

static bool sha_is(const char *path, const char *want, const char *what)
{
    char hex[129] = "";
    mf_status st;
    mf_status_init(&st);
    bool ok = mf_hash_file(path, MF_SHA256, hex, &st) == 0;
    CHECKF(ok, "%s: %s not written: %s", what, path, st.msg ? st.msg : "");
    mf_status_clear(&st);
    if (!ok)
        return false;
    CHECKF(strcmp(hex, want) == 0, "%s: %s has sha256 %s, the oracle's is %s", what, path, hex, want);
    return strcmp(hex, want) == 0;
}

static int run(const char *cmd, char *out, size_t cap)
{
    char log[128];
    snprintf(log, sizeof(log), "%s/log", tmp);
    return tl_run_cmd(cmd, log, out, cap);
}

/* The input of a case in dir: as it is, edited, or split by `mfmt split`
 * (whose shards must be llama-gguf-split's). Returns false to skip. */
static bool make_input(const char *shared, const char *dir, json_t *c, char *in, size_t n)
{
    const char *input = json_string_value(json_object_get(c, "input"));
    const char *prep = json_string_value(json_object_get(c, "prep"));
    const char *split = json_string_value(json_object_get(c, "split"));
    static char out[1 << 14];
    char cmd[2048];
    snprintf(in, n, "%s/%s", shared, input);
    if (!exists(in)) {
        printf("skip: %s is missing\n", in);
        return false;
    }
    if (!strcmp(prep, "no-file-type")) {
        snprintf(cmd, sizeof(cmd), "%s edit -q '%s' '%s/in.gguf' --delete general.file_type", mfmt, in,
                 dir);
        CHECKF(run(cmd, out, sizeof(out)) == 0 && out[0] == 0, "%s: %s", cmd, out);
        snprintf(in, n, "%s/in.gguf", dir);
    }
    if (!*split)
        return true;
    snprintf(cmd, sizeof(cmd), "%s split -q --split %s '%s' '%s/in'", mfmt, split, in, dir);
    int rc = run(cmd, out, sizeof(out));
    CHECKF(rc == 0 && out[0] == 0, "%s: exit %d: %s", cmd, rc, out);
    json_t *shards = json_object_get(c, "split_shards");
    size_t k = json_array_size(shards);
    for (size_t i = 0; i < k; i++) {
        char p[600];
        snprintf(p, sizeof(p), "%s/in-%05zu-of-%05zu.gguf", dir, i + 1, k);
        sha_is(p, json_string_value(json_array_get(shards, i)), "llama-gguf-split's input shard");
    }
    snprintf(in, n, "%s/in-00001-of-%05zu.gguf", dir, k);
    return true;
}

static void check_case(const char *shared, size_t idx, json_t *c)
{
    const char *args = json_string_value(json_object_get(c, "args"));
    const char *type = json_string_value(json_object_get(c, "type"));
    json_t *outputs = json_object_get(c, "outputs");
    char dir[128], in[700], cmd[2048], what[256];
    static char out[1 << 14];
    snprintf(dir, sizeof(dir), "%s/case%zu", tmp, idx);
    snprintf(what, sizeof(what), "case %zu (%s %s %s)", idx, json_string_value(json_object_get(c, "split")),
             args, type);
    CHECK(mkdir(dir, 0700) == 0);
    if (!make_input(shared, dir, c, in, sizeof(in)))
        return;
    /* IMATRIX stands for "imatrix.dat", a link in the run's directory (the
     * path given is written into quantize.imatrix.file) */
    char a[512], link[200], target[800];
    const char *im = strstr(args, "IMATRIX");
    if (im) {
        snprintf(a, sizeof(a), "%.*simatrix.dat%s", (int)(im - args), args, im + 7);
        snprintf(link, sizeof(link), "%s/imatrix.dat", dir);
        snprintf(target, sizeof(target), "%s/quant-ref/mix/imatrix.dat", shared);
        char *abs = realpath(target, NULL);
        CHECKF(abs && symlink(abs, link) == 0, "cannot link %s", target);
        free(abs);
    } else {
        snprintf(a, sizeof(a), "%s", args);
    }
    snprintf(cmd, sizeof(cmd), "cd '%s' && %s quantize -q %s '%s' '%s/out.gguf' %s 2", dir, mfmt, a, in,
             dir, type);
    int rc = run(cmd, out, sizeof(out));
    CHECKF(rc == 0 && out[0] == 0, "%s: exit %d: %s", what, rc, out);
    size_t n = json_array_size(outputs);
    bool keep = strstr(args, "--keep-split") != NULL;
    for (size_t i = 0; i < n; i++) {
        char p[600];
        if (keep)
            snprintf(p, sizeof(p), "%s/out-%05zu-of-%05zu.gguf", dir, i + 1, n);
        else
            snprintf(p, sizeof(p), "%s/out.gguf", dir);
        sha_is(p, json_string_value(json_array_get(outputs, i)), what);
    }
    char other[600];
    snprintf(other, sizeof(other), "%s/out.gguf", dir);
    CHECKF(!keep || !exists(other), "%s: --keep-split also wrote %s", what, other);
    snprintf(other, sizeof(other), "%s/out-00001-of-%05zu.gguf", dir, n + 1);
    CHECKF(!exists(other), "%s: more files than llama-quantize", what);
}

/* llama.cpp loads a set from its first file only; a failure leaves nothing */
static void check_refusals(const char *shared)
{
    char cmd[2048], in[600], p[700];
    static char out[1 << 14];
    snprintf(in, sizeof(in), "%s/quant-ref/mix/model-F16.gguf", shared);
    if (!exists(in))
        return;
    snprintf(cmd, sizeof(cmd), "%s split -q --split-max-tensors 30 '%s' '%s/r'", mfmt, in, tmp);
    CHECK(run(cmd, out, sizeof(out)) == 0);
    snprintf(cmd, sizeof(cmd), "%s quantize '%s/r-00002-of-00003.gguf' '%s/q.gguf' Q8_0", mfmt, tmp, tmp);
    CHECKF(run(cmd, out, sizeof(out)) == 2 && strstr(out, "first file"), "%s", out);
    snprintf(p, sizeof(p), "%s/q.gguf", tmp);
    CHECK(!exists(p));
    /* the third output file cannot be made (a directory is in the way):
     * the two written before it are removed */
    snprintf(p, sizeof(p), "%s/k-00003-of-00003.gguf", tmp);
    CHECK(mkdir(p, 0700) == 0);
    snprintf(cmd, sizeof(cmd), "%s quantize --keep-split '%s/r-00001-of-00003.gguf' '%s/k.gguf' Q8_0",
             mfmt, tmp, tmp);
    int rc = run(cmd, out, sizeof(out));
    CHECKF(rc != 0 && strstr(out, "k-00003-of-00003.gguf"), "exit %d: %s", rc, out);
    snprintf(p, sizeof(p), "%s/k-00001-of-00003.gguf", tmp);
    CHECKF(!exists(p), "%s left behind", p);
    snprintf(p, sizeof(p), "%s/k-00002-of-00003.gguf", tmp);
    CHECKF(!exists(p), "%s left behind", p);
    /* COPY with a general.file_type that is not a u32: llama-quantize stops
     * (gguf_get_val_u32 asserts); mfmt refuses it, writing nothing */
    snprintf(cmd, sizeof(cmd), "%s edit -q '%s' '%s/ft.gguf' --set general.file_type=str:7 --force", mfmt,
             in, tmp);
    CHECK(run(cmd, out, sizeof(out)) == 0);
    snprintf(cmd, sizeof(cmd), "%s quantize '%s/ft.gguf' '%s/ft-copy.gguf' COPY", mfmt, tmp, tmp);
    rc = run(cmd, out, sizeof(out));
    CHECKF(rc == 1 && strstr(out, "general.file_type is not a uint32"), "exit %d: %s", rc, out);
    snprintf(p, sizeof(p), "%s/ft-copy.gguf", tmp);
    CHECK(!exists(p));
    /* a dry run names the size of the files a real run writes, together */
    snprintf(cmd, sizeof(cmd), "%s quantize -q --keep-split '%s/r-00001-of-00003.gguf' '%s/ok' Q8_0", mfmt,
             tmp, tmp);
    CHECK(run(cmd, out, sizeof(out)) == 0);
    long long total = 0;
    for (int i = 1; i <= 3; i++) {
        struct stat sb;
        snprintf(p, sizeof(p), "%s/ok-%05d-of-00003.gguf", tmp, i);
        CHECKF(stat(p, &sb) == 0, "%s not written", p);
        total += stat(p, &sb) == 0 ? (long long)sb.st_size : 0;
    }
    snprintf(cmd, sizeof(cmd), "%s quantize --dry-run --json --keep-split '%s/r-00001-of-00003.gguf' Q8_0",
             mfmt, tmp);
    static char big[1 << 20];
    rc = run(cmd, big, sizeof(big));
    json_t *dry = rc == 0 ? json_loads(big, 0, NULL) : NULL;
    CHECKF(dry && json_integer_value(json_object_get(dry, "file_bytes")) == total,
           "dry run: exit %d, file_bytes %lld, the files hold %lld", rc,
           (long long)json_integer_value(json_object_get(dry, "file_bytes")), total);
    json_decref(dry);
    /* COPY is a name only (0 is F32, as llama-quantize reads it) and in any case */
    snprintf(cmd, sizeof(cmd), "%s quantize --dry-run --json '%s' copy", mfmt, in);
    rc = run(cmd, out, sizeof(out));
    CHECKF(rc == 0 && strstr(out, "\"type\": \"COPY\"") && strstr(out, "\"file_type\": null"), "%s", out);
}

int main(void)
{
    const char *shared = tl_shared_dir();
    mfmt = getenv("MFMT");
    if (!shared || !mfmt || !tl_make_tmpdir(tmp, sizeof(tmp), "qsplit")) {
        TL_SKIP("quantize_split: needs ../shared, MFMT and a temp dir");
        return tl_report("quantize_split");
    }
    /* some commands run in a case's directory: absolute paths */
    char *abs_shared = realpath(shared, NULL), *abs_mfmt = realpath(mfmt, NULL);
    if (!abs_shared || !abs_mfmt) {
        CHECKF(0, "cannot resolve %s or %s", shared, mfmt);
        return tl_report("quantize_split");
    }
    shared = abs_shared;
    mfmt = abs_mfmt;
    json_t *doc = json_load_file("tests/data/quantize_split_ref.json", 0, NULL);
    json_t *cases = json_object_get(doc, "cases");
    CHECK(json_array_size(cases) >= 8);
    for (size_t i = 0; i < json_array_size(cases); i++)
        check_case(shared, i, json_array_get(cases, i));
    json_decref(doc);
    check_refusals(shared);
    free(abs_shared);
    free(abs_mfmt);
    tl_remove_tmpdir(tmp);
    return tl_report("quantize_split");
}
