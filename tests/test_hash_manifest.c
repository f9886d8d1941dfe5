/* test_hash_manifest.c - `mfmt hash --manifest / --check` end to end: a
 * manifest we write checks OK (by exact path and from another directory),
 * a changed tensor byte fails with exit 1, a manifest of another model gives
 * 3, one without known hash lines 4, a missing one 5 (llama-gguf-hash's
 * codes); lines have its "%-8s  HEX  NAME" layout and UUIDv5. */
#include "testlib.h"

#include "core/core.h"

#include <jansson.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[64], mfmt[512];

static int run(const char *fmt, ...) MF_PRINTF(1, 2);
static int run(const char *fmt, ...)
{
    char args[2048], cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof(args), fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof(cmd), "cd %s && %s %s >out.txt 2>err.txt", dir, mfmt, args);
    int rc = system(cmd);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static char *slurp(const char *name)
{
    char p[256];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    char *s = NULL;
    size_t n;
    mf_status st;
    mf_status_init(&st);
    mf_read_small_file(p, 1 << 24, &s, &n, &st);
    mf_status_clear(&st);
    return s ? s : strdup("");
}

static void copy_file(const char *from, const char *to_name)
{
    char *data = NULL;
    size_t n = 0;
    mf_status st;
    mf_status_init(&st);
    mf_read_small_file(from, 1 << 26, &data, &n, &st);
    char p[256];
    snprintf(p, sizeof(p), "%s/%s", dir, to_name);
    FILE *f = fopen(p, "wb");
    if (f && data) {
        fwrite(data, 1, n, f);
        fclose(f);
    }
    free(data);
    mf_status_clear(&st);
}

/* Flips one byte of the first tensor's data in DIR/name. */
static void corrupt_first_tensor(const char *name)
{
    char p[256];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    mf_model *m;
    mf_status st;
    mf_status_init(&st);
    uint64_t off = 0;
    if (mf_open(p, NULL, &m, &st) == 0) {
        off = m->tensors[0].offset;
        mf_close(m);
    }
    mf_status_clear(&st);
    FILE *f = fopen(p, "r+b");
    if (!f || !off)
        return;
    fseek(f, (long)off, SEEK_SET);
    int c = fgetc(f);
    fseek(f, (long)off, SEEK_SET);
    fputc(c ^ 0x40, f);
    fclose(f);
}

static void test_gguf(const char *shared)
{
    char src[1024];
    snprintf(src, sizeof(src), "%s/corpus/gguf/llama_tiny.gguf", shared);
    copy_file(src, "model.gguf");
    CHECK(run("hash --manifest m.txt --algo all,uuid model.gguf") == 0);
    char *man = slurp("m.txt");
    /* llama-gguf-hash's layout: kind padded to 8, two spaces, hex, two spaces */
    CHECKF(strstr(man, "xxh64     ") == man, "%.80s", man);
    CHECK(strstr(man, "  model.gguf:token_embd.weight\n") != NULL);
    CHECK(strstr(man, "\nsha256    ") != NULL);
    CHECK(strstr(man, "\nuuid      ") != NULL && strstr(man, "-5") != NULL);
    free(man);

    CHECK(run("hash --check m.txt model.gguf") == 0);
    char *out = slurp("out.txt");
    CHECK(strstr(out, "Verification results for m.txt - Success") != NULL);
    CHECK(strstr(out, "Mismatch") == NULL && strstr(out, "  -  Ok") != NULL);
    free(out);
    CHECK(run("hash --check m.txt --algo xxh64,uuid model.gguf") == 0);
    /* same file under another path: matched by file name */
    CHECK(run("hash --check m.txt ./model.gguf") == 0);
    CHECK(run("hash --check m.txt %s/model.gguf", dir) == 0);

    copy_file(src, "other.gguf");
    CHECK(run("hash --check m.txt other.gguf") == 3); /* no entry names it */
    CHECK(run("hash --check nonexistent.txt model.gguf") == 5);
    char p[256];
    snprintf(p, sizeof(p), "%s/junk.txt", dir);
    FILE *f = fopen(p, "w");
    if (f) {
        fputs("md5 0123 model.gguf\nhello\n", f);
        fclose(f);
    }
    CHECK(run("hash --check junk.txt model.gguf") == 4);

    corrupt_first_tensor("model.gguf");
    CHECK(run("hash --check m.txt model.gguf") == 1);
    out = slurp("out.txt");
    CHECK(strstr(out, "model.gguf:token_embd.weight  -  Mismatch") != NULL);
    CHECK(strstr(out, "- Failure") != NULL);
    free(out);
    /* only the tensor lines of another tensor: still fine */
    CHECK(run("hash --manifest m2.txt --algo sha1 model.gguf") == 0);
    CHECK(run("hash --check m2.txt model.gguf") == 0);
}

static void test_safetensors(const char *shared)
{
    char src[1024];
    snprintf(src, sizeof(src), "%s/corpus/safetensors/multi_dim.safetensors", shared);
    copy_file(src, "w.safetensors");
    CHECK(run("hash --manifest - w.safetensors") == 0);
    char *out = slurp("out.txt");
    CHECK(strncmp(out, "sha256    ", 10) == 0);
    free(out);
    CHECK(run("hash --manifest w.txt --algo xxh3 w.safetensors") == 0);
    CHECK(run("hash --check w.txt w.safetensors") == 0);
    corrupt_first_tensor("w.safetensors");
    CHECK(run("hash --check w.txt w.safetensors") == 1);
    /* usage errors stay mfmt's 2 */
    CHECK(run("hash --manifest x.txt --check w.txt w.safetensors") == 2);
    CHECK(run("hash --algo md5 w.safetensors") == 2);
    CHECK(run("hash --algo uuid w.safetensors") == 2);
}

/* `mfmt hash --json --tensors` (one-pass or two-pass inside) must equal the
 * library's mf_hash_file / mf_hash_tensor_content / mf_hash_tensor. */
static void check_cli_equals_library(const char *path, const char *algo_name)
{
    mf_hash_algo algo;
    CHECK(mf_hash_algo_from_name(algo_name, &algo) == 0);
    CHECK(run("hash --json --tensors --algo %s %s", algo_name, path) == 0);
    char p[256];
    snprintf(p, sizeof(p), "%s/out.txt", dir);
    json_error_t je;
    json_t *j = json_load_file(p, 0, &je);
    CHECKF(j != NULL, "%s: %s", path, je.text);
    mf_status st;
    mf_status_init(&st);
    mf_model *m = NULL;
    char hex[129];
    if (!j || mf_open(path, NULL, &m, &st) != 0) {
        json_decref(j);
        mf_status_clear(&st);
        return;
    }
    CHECK(mf_hash_file(path, algo, hex, &st) == 0);
    CHECKF(strcmp(json_string_value(json_object_get(j, algo_name)), hex) == 0, "%s file", path);
    CHECK(mf_hash_tensor_content(m, algo, hex, &st) == 0);
    CHECKF(strcmp(json_string_value(json_object_get(j, "tensor_content")), hex) == 0,
           "%s content", path);
    json_t *ts = json_object_get(j, "tensors");
    CHECK(json_object_size(ts) == m->n_tensors);
    int bad = 0;
    for (size_t i = 0; i < m->n_tensors; i++) {
        if (mf_hash_tensor(m, &m->tensors[i], algo, hex, &st) != 0)
            bad++;
        const char *got = json_string_value(json_object_get(ts, m->tensors[i].name));
        bad += !got || strcmp(got, hex) != 0;
    }
    CHECKF(bad == 0, "%s: %d tensor hashes differ", path, bad);
    mf_close(m);
    json_decref(j);
    mf_status_clear(&st);
}

/* The default is the whole-file digest alone (sha256sum's digest, even for
 * a file that is no model, labelled "(file)"; --format sha256sum prints
 * sha256sum's own line); --content adds the tensor-content line. */
static void test_default_output(const char *shared)
{
    char f[1024], hex[129], want[2600];
    snprintf(f, sizeof(f), "%s/corpus/gguf/llama_tiny.gguf", shared);
    mf_status st;
    mf_status_init(&st);
    CHECK(mf_hash_file(f, MF_SHA256, hex, &st) == 0);
    CHECK(run("hash %s", f) == 0);
    char *out = slurp("out.txt");
    snprintf(want, sizeof(want), "sha256  %s  %s (file)\n", hex, f);
    CHECKF(strcmp(out, want) == 0, "default output: %s", out);
    free(out);
    CHECK(run("hash --json %s", f) == 0);
    json_error_t je;
    char p[256];
    snprintf(p, sizeof(p), "%s/out.txt", dir);
    json_t *j = json_load_file(p, 0, &je);
    CHECK(j && json_object_size(j) == 2 && !strcmp(json_string_value(json_object_get(j, "sha256")), hex));
    json_decref(j);
    char content[129];
    mf_model *m = NULL;
    CHECK(mf_open(f, NULL, &m, &st) == 0 && mf_hash_tensor_content(m, MF_SHA256, content, &st) == 0);
    mf_close(m);
    CHECK(run("hash --content %s", f) == 0);
    out = slurp("out.txt");
    snprintf(want, sizeof(want), "sha256  %s  %s (file)\nsha256  %s  %s (tensor content)\n", hex, f, content, f);
    CHECKF(strcmp(out, want) == 0, "--content output: %s", out);
    free(out);
    /* not a model: still hashed, as sha256sum would */
    snprintf(f, sizeof(f), "%s/notes.txt", dir);
    FILE *fp = fopen(f, "w");
    CHECK(fp && fputs("not a model\n", fp) >= 0 && fclose(fp) == 0);
    CHECK(mf_hash_file(f, MF_XXH64, hex, &st) == 0);
    CHECK(run("hash --algo xxh64 %s", f) == 0);
    out = slurp("out.txt");
    snprintf(want, sizeof(want), "xxh64  %s  %s (file)\n", hex, f);
    CHECKF(strcmp(out, want) == 0, "plain file: %s", out);
    free(out);
    CHECK(run("hash --content %s", f) != 0);
    CHECK(run("hash --content --manifest x.txt %s", f) == 2);
    mf_status_clear(&st);
}

static int fill_pattern(void *ctx, size_t i, mf_sink_fn sink, void *sctx, mf_status *st)
{
    const mf_out_tensor *t = (const mf_out_tensor *)ctx + i;
    uint8_t buf[4096];
    uint64_t n = (uint64_t)t->shape[0];
    for (uint64_t off = 0; off < n; off += sizeof(buf)) {
        size_t k = n - off < sizeof(buf) ? (size_t)(n - off) : sizeof(buf);
        for (size_t b = 0; b < k; b++)
            buf[b] = (uint8_t)((off + b) * 31 + i * 7 + ((off + b) >> 11));
        if (sink(sctx, buf, k, st))
            return -1;
    }
    return 0;
}

static void test_plain_hash(const char *shared)
{
    /* tensors across the 4 MiB read blocks, an empty one between and at the end */
    mf_out_tensor ts[5] = {
        {.name = "a", .dtype = MF_U8, .ndim = 1, .shape = {3 * 1048576 + 1}},
        {.name = "empty", .dtype = MF_U8, .ndim = 1, .shape = {0}},
        {.name = "b", .dtype = MF_U8, .ndim = 1, .shape = {6 * 1048576 + 3}},
        {.name = "c", .dtype = MF_U8, .ndim = 1, .shape = {7}},
        {.name = "z", .dtype = MF_U8, .ndim = 1, .shape = {0}},
    };
    char p[256];
    snprintf(p, sizeof(p), "%s/big.safetensors", dir);
    mf_status st;
    mf_status_init(&st);
    CHECK(mf_safetensors_write(p, ts, 5, NULL, 0, fill_pattern, ts, &st) == 0);
    mf_status_clear(&st);
    check_cli_equals_library(p, "sha256");
    check_cli_equals_library(p, "xxh64");
    static const char *files[] = {"corpus/gguf/dtypes.gguf", "corpus/gguf/llama_tiny.gguf",
                                  "corpus/safetensors/all_dtypes.safetensors",
                                  "corpus/safetensors/unsorted_header.safetensors",
                                  "corpus/safetensors/empty_tensors.safetensors",
                                  "corpus/safetensors/no_tensors.safetensors"};
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        char f[1024];
        snprintf(f, sizeof(f), "%s/%s", shared, files[i]);
        check_cli_equals_library(f, i % 2 ? "sha1" : "sha256");
    }
}

int main(void)
{
    const char *shared = tl_shared_dir();
    const char *e = getenv("MFMT");
    char cwd[200];
    if (!getcwd(cwd, sizeof(cwd)))
        return 1;
    if (!e || !*e)
        e = "build/mfmt";
    snprintf(mfmt, sizeof(mfmt), "%s%s%s", e[0] == '/' ? "" : cwd, e[0] == '/' ? "" : "/", e);
    snprintf(dir, sizeof(dir), "/tmp/mfmt-manifest-XXXXXX");
    if (!shared || !mkdtemp(dir)) {
        CHECKF(!shared, "mkdtemp %s", dir);
        TL_SKIP("hash_manifest: the manifests of the corpus (no ../shared)");
        return tl_report("hash_manifest");
    }
    char shared_abs[300];
    snprintf(shared_abs, sizeof(shared_abs), "%s%s%s", shared[0] == '/' ? "" : cwd,
             shared[0] == '/' ? "" : "/", shared);
    test_gguf(shared_abs);
    test_safetensors(shared_abs);
    test_plain_hash(shared_abs);
    test_default_output(shared_abs);
    CHECK(tl_remove_tmpdir(dir));
    return tl_report("hash_manifest");
}
