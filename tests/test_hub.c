/* test_hub.c - Hub names and the Hugging Face cache: resolution through
 * refs, snapshots, symlinks and plain copies, .no_exist markers; cache scan
 * sizes (through the links, blobs once); cache verify against a corrupted
 * blob, a missing blob, a dangling link, an .incomplete download and a bad
 * ref; the CLI's exit codes. The blob names come from the real tools:
 * `git hash-object` (the git blob SHA-1 of a small file) and sha256sum. */
#include "testlib.h"
#include "testmf.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[256];
static char cache[400];

/* `printf '{"a":1}\n' | git hash-object --stdin` (git 2.39) */
static const char CONFIG_TEXT[] = "{\"a\":1}\n";
static const char CONFIG_SHA1[] = "0187f3b09d66cef7911083ad49f890f5a6589589";
/* `printf 'hello\n' | git hash-object --stdin` and `| sha256sum` */
static const char HELLO_SHA1[] = "ce013625030ba8dba906f756967f9e9ca394464a";
static const char HELLO_SHA256[] = "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03";
static const char C1[] = "1111111111111111111111111111111111111111";
static const char C2[] = "2222222222222222222222222222222222222222";

static const char *at(const char *fmt, const char *a, const char *b)
{
    static char buf[8][1024];
    static int k;
    char rel[600];
    snprintf(rel, sizeof(rel), fmt, a ? a : "", b ? b : "");
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof(buf[k]), "%s/%s", cache, rel);
    return buf[k];
}

static void mkdirs(const char *path)
{
    char cmd[1200];
    snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", path);
    CHECK(system(cmd) == 0);
}

static void write_bytes(const char *path, const void *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    CHECKF(f && fwrite(b, 1, n, f) == n, "%s", path);
    if (f)
        fclose(f);
}

static void link_to(const char *target, const char *path)
{
    CHECKF(symlink(target, path) == 0, "%s -> %s: %s", path, target, strerror(errno));
}

/* sha256sum of a file (coreutils), the LFS blob name */
static void sha256sum_of(const char *path, char hex[65])
{
    char cmd[1200], out[256];
    snprintf(cmd, sizeof(cmd), "sha256sum '%s'", path);
    hex[0] = 0;
    if (tl_run_cmd(cmd, "/tmp/mfmt-hub-sha.log", out, sizeof(out)) == 0 && strlen(out) >= 64)
        snprintf(hex, 65, "%.64s", out);
    CHECK(strlen(hex) == 64);
}

static char model_blob[65];
static long model_size;

/* models--acme--tiny: main -> C1 (model + config), refs/pr/1 -> C2 (config
 * only, the same blob); .no_exist for tokenizer.json at C1.
 * models--acme--copies: the layout without symlinks (a plain file).
 * Noise the scan must pass over: .locks/, version.txt, a stray file. */
static void build_cache(void)
{
    const char *src = "examples/tiny.safetensors";
    sha256sum_of(src, model_blob);
    FILE *f = fopen(src, "rb");
    static char buf[1 << 20];
    size_t n = f ? fread(buf, 1, sizeof(buf), f) : 0;
    if (f)
        fclose(f);
    model_size = (long)n;
    CHECK(n > 0);
    mkdirs(at("models--acme--tiny/blobs", 0, 0));
    mkdirs(at("models--acme--tiny/refs/refs/pr", 0, 0));
    mkdirs(at("models--acme--tiny/snapshots/%s", C1, 0));
    mkdirs(at("models--acme--tiny/snapshots/%s", C2, 0));
    mkdirs(at("models--acme--tiny/.no_exist/%s", C1, 0));
    mkdirs(at(".locks/models--acme--tiny", 0, 0));
    write_bytes(at("version.txt", 0, 0), "1", 1);
    write_bytes(at("stray.txt", 0, 0), "x", 1);
    write_bytes(at("models--acme--tiny/blobs/%s", model_blob, 0), buf, n);
    write_bytes(at("models--acme--tiny/blobs/%s", CONFIG_SHA1, 0), CONFIG_TEXT,
                strlen(CONFIG_TEXT));
    write_bytes(at("models--acme--tiny/refs/main", 0, 0), C1, 40);
    write_bytes(at("models--acme--tiny/refs/refs/pr/1", 0, 0), C2, 40);
    char target[200];
    snprintf(target, sizeof(target), "../../blobs/%s", model_blob);
    link_to(target, at("models--acme--tiny/snapshots/%s/model.safetensors", C1, 0));
    snprintf(target, sizeof(target), "../../blobs/%s", CONFIG_SHA1);
    link_to(target, at("models--acme--tiny/snapshots/%s/config.json", C1, 0));
    link_to(target, at("models--acme--tiny/snapshots/%s/config.json", C2, 0));
    write_bytes(at("models--acme--tiny/.no_exist/%s/tokenizer.json", C1, 0), "", 0);
    mkdirs(at("models--acme--copies/snapshots/%s", C1, 0));
    mkdirs(at("models--acme--copies/refs", 0, 0));
    write_bytes(at("models--acme--copies/refs/main", 0, 0), C1, 40);
    write_bytes(at("models--acme--copies/snapshots/%s/model.safetensors", C1, 0), buf, n);
}

static void test_cache_dir_env(void)
{
    const char *keep[] = {"HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME"};
    for (size_t i = 0; i < 4; i++)
        unsetenv(keep[i]);
    setenv("HOME", "/home/u", 1);
    char *d = mf_hub_cache_dir();
    CHECKF(d && !strcmp(d, "/home/u/.cache/huggingface/hub"), "%s", d);
    free(d);
    setenv("XDG_CACHE_HOME", "/xdg", 1);
    d = mf_hub_cache_dir();
    CHECKF(d && !strcmp(d, "/xdg/huggingface/hub"), "%s", d);
    free(d);
    setenv("HF_HOME", "~/hf", 1);
    d = mf_hub_cache_dir();
    CHECKF(d && !strcmp(d, "/home/u/hf/hub"), "%s", d);
    free(d);
    setenv("HUGGINGFACE_HUB_CACHE", "/old", 1);
    d = mf_hub_cache_dir();
    CHECKF(d && !strcmp(d, "/old"), "%s", d);
    free(d);
    setenv("HF_HUB_CACHE", "/new", 1);
    d = mf_hub_cache_dir();
    CHECKF(d && !strcmp(d, "/new"), "%s", d);
    free(d);
    setenv("HF_HUB_CACHE", cache, 1);
}

/* resolves arg; returns its kind (-1 on failure), path in out */
static int resolve(const char *arg, bool remote, char *out, size_t cap, char *err, size_t ecap)
{
    mf_hub_target t;
    mf_status st;
    mf_status_init(&st);
    int rc = mf_hub_resolve(arg, NULL, remote, &t, &st);
    if (err)
        snprintf(err, ecap, "%s", st.msg);
    mf_status_clear(&st);
    if (rc)
        return -1;
    snprintf(out, cap, "%s", t.path);
    int k = (int)t.kind;
    if (k == MF_HUB_CACHED && t.commit && strlen(t.commit) != 40)
        k = -2;
    mf_hub_target_free(&t);
    return k;
}

static void test_resolve(void)
{
    char p[1200], err[1024];
    CHECK(resolve("acme/tiny", false, p, sizeof(p), 0, 0) == MF_HUB_CACHED);
    CHECKF(!strcmp(p, at("models--acme--tiny/snapshots/%s", C1, 0)), "%s", p);
    CHECK(resolve("acme/tiny@refs/pr/1", false, p, sizeof(p), 0, 0) == MF_HUB_CACHED);
    CHECKF(!strcmp(p, at("models--acme--tiny/snapshots/%s", C2, 0)), "%s", p);
    CHECK(resolve("hf://acme/tiny/model.safetensors", false, p, sizeof(p), 0, 0) == MF_HUB_CACHED);
    CHECKF(!strcmp(p, at("models--acme--tiny/snapshots/%s/model.safetensors", C1, 0)), "%s", p);
    CHECK(resolve("hf://acme/tiny@refs/pr/1/config.json", false, p, sizeof(p), 0, 0) == MF_HUB_CACHED);
    CHECKF(!strcmp(p, at("models--acme--tiny/snapshots/%s/config.json", C2, 0)), "%s", p);
    char arg[200];
    snprintf(arg, sizeof(arg), "hf://models/acme/tiny@%s/config.json", C1);
    CHECK(resolve(arg, false, p, sizeof(p), 0, 0) == MF_HUB_CACHED);
    /* a file the Hub said is absent: .no_exist, never a remote try */
    CHECK(resolve("hf://acme/tiny/tokenizer.json", true, p, sizeof(p), err, sizeof(err)) == -1);
    CHECKF(strstr(err, ".no_exist") && strstr(err, "tokenizer.json"), "%s", err);
    CHECK(resolve("acme/tiny@v9", false, p, sizeof(p), err, sizeof(err)) == -1);
    CHECKF(strstr(err, "revision v9") && strstr(err, cache), "%s", err);
    CHECK(resolve("acme/absent", false, p, sizeof(p), err, sizeof(err)) == -1);
    CHECKF(strstr(err, "no such file or directory, and the repo acme/absent is not in the Hugging Face cache"), "%s", err);
    CHECK(resolve("hf://acme/tiny/missing.bin", false, p, sizeof(p), err, sizeof(err)) == -1);
    /* no way out of the repo folder */
    CHECK(resolve("hf://acme/tiny@../../x/y", false, p, sizeof(p), err, sizeof(err)) == -1);
    CHECK(resolve("hf://acme/tiny/../../etc/passwd", false, p, sizeof(p), err, sizeof(err)) == -1);
    CHECK(resolve("hf://acme--x/tiny/a", false, p, sizeof(p), err, sizeof(err)) == -1);
    /* a local path is itself, even when shaped like ORG/NAME */
    CHECK(resolve("examples/tiny.safetensors", false, p, sizeof(p), 0, 0) == MF_HUB_NONE);
    CHECK(resolve("tests/data", false, p, sizeof(p), 0, 0) == MF_HUB_NONE);
    CHECK(!strcmp(p, "tests/data"));
    CHECK(resolve("no/such/path.gguf", false, p, sizeof(p), 0, 0) == MF_HUB_NONE);
    /* remote: a file not in the cache, under HF_ENDPOINT (hf_hub_url's form) */
    setenv("HF_ENDPOINT", "http://127.0.0.1:9/", 1);
    CHECK(resolve("hf://acme/absent@refs/pr/3/sub/w.gguf", true, p, sizeof(p), 0, 0) == MF_HUB_REMOTE);
    CHECKF(!strcmp(p, "http://127.0.0.1:9/acme/absent/resolve/refs%2Fpr%2F3/sub/w.gguf"), "%s", p);
    CHECK(resolve("hf://datasets/acme/d/x.parquet", true, p, sizeof(p), 0, 0) == MF_HUB_REMOTE);
    CHECKF(!strcmp(p, "http://127.0.0.1:9/datasets/acme/d/resolve/main/x.parquet"), "%s", p);
    unsetenv("HF_ENDPOINT");
}

static void test_scan(void)
{
    mf_cache_report *r = NULL;
    mf_status st;
    mf_status_init(&st);
    CHECK(mf_cache_scan(NULL, &r, &st) == 0 && r);
    mf_status_clear(&st);
    if (!r)
        return;
    CHECK(r->n_repos == 2);
    CHECK(r->n_warnings == 1 && strstr(r->warnings[0], "stray.txt"));
    const mf_cache_repo *copies = &r->repos[0], *tiny = &r->repos[1];
    CHECK(!strcmp(copies->repo_id, "acme/copies") && !strcmp(tiny->repo_id, "acme/tiny"));
    CHECK(!strcmp(tiny->repo_type, "model"));
    /* the targets' sizes, each blob once: the config is linked twice */
    CHECKF(tiny->size_on_disk == (uint64_t)model_size + strlen(CONFIG_TEXT), "%llu",
           (unsigned long long)tiny->size_on_disk);
    CHECK(tiny->n_blobs == 2 && tiny->n_revisions == 2);
    CHECK(copies->size_on_disk == (uint64_t)model_size && copies->n_blobs == 1);
    CHECK(r->size_on_disk == tiny->size_on_disk + copies->size_on_disk);
    for (size_t i = 0; i < tiny->n_revisions; i++) {
        const mf_cache_revision *v = &tiny->revisions[i];
        bool main_rev = !strcmp(v->commit, C1);
        CHECK(v->n_refs == 1 && !strcmp(v->refs[0], main_rev ? "main" : "refs/pr/1"));
        CHECK(v->n_files == (main_rev ? 2u : 1u));
        CHECK(v->size_on_disk == (main_rev ? (uint64_t)model_size : 0) + strlen(CONFIG_TEXT));
    }
    mf_cache_report_free(r);
}

static mf_cache_verify_report *verify(const char *repo)
{
    mf_cache_verify_report *r = NULL;
    mf_status st;
    mf_status_init(&st);
    int rc = mf_cache_verify(NULL, repo, NULL, NULL, &r, &st);
    CHECKF(rc == 0, "%s", st.msg);
    mf_status_clear(&st);
    return r;
}

static size_t problems(const mf_cache_verify_report *r, mf_cache_problem_kind k, const char *part)
{
    size_t n = 0;
    for (size_t i = 0; i < r->n_problems; i++)
        n += r->problems[i].kind == k && strstr(r->problems[i].path, part);
    return n;
}

static void test_verify(void)
{
    mf_cache_verify_report *r = verify(NULL);
    if (r) { /* clean: nothing but the copy that cannot be checked */
        CHECK(r->n_repos == 2 && r->n_blobs_checked == 2);
        CHECK(r->n_problems == 1 && problems(r, MF_CACHE_UNCHECKED, "acme--copies"));
        CHECK(r->bytes_checked == (uint64_t)model_size + strlen(CONFIG_TEXT));
    }
    mf_cache_verify_free(r);
    /* a small file named by its git blob SHA-1: right, then a wrong one */
    write_bytes(at("models--acme--tiny/blobs/%s", HELLO_SHA1, 0), "hello\n", 6);
    write_bytes(at("models--acme--tiny/blobs/%s", HELLO_SHA256, 0), "hello\n", 6);
    r = verify("acme/tiny");
    CHECK(r && r->n_problems == 0 && r->n_blobs_checked == 4 && r->n_repos == 1);
    mf_cache_verify_free(r);
    write_bytes(at("models--acme--tiny/blobs/%s", HELLO_SHA1, 0), "hellO\n", 6);
    /* a flipped byte in the LFS blob */
    const char *mb = at("models--acme--tiny/blobs/%s", model_blob, 0);
    int fd = open(mb, O_WRONLY);
    CHECK(fd >= 0 && pwrite(fd, "\x7f", 1, model_size - 1) == 1);
    if (fd >= 0)
        close(fd);
    /* the config's blob gone: both snapshot links now lead nowhere */
    CHECK(unlink(at("models--acme--tiny/blobs/%s", CONFIG_SHA1, 0)) == 0);
    link_to("../../nowhere/file.bin", at("models--acme--tiny/snapshots/%s/extra.bin", C1, 0));
    write_bytes(at("models--acme--tiny/blobs/%s.incomplete", HELLO_SHA256, 0), "hel", 3);
    write_bytes(at("models--acme--tiny/refs/stale", 0, 0), "3333333333333333333333333333333333333333", 40);
    r = verify("hf://acme/tiny");
    if (r) {
        CHECK(r->count[MF_CACHE_CORRUPT] == 2);
        CHECK(problems(r, MF_CACHE_CORRUPT, model_blob) == 1);
        CHECK(problems(r, MF_CACHE_CORRUPT, HELLO_SHA1) == 1);
        CHECK(r->count[MF_CACHE_MISSING] == 2 && problems(r, MF_CACHE_MISSING, "config.json") == 2);
        CHECK(r->count[MF_CACHE_DANGLING] == 1 && problems(r, MF_CACHE_DANGLING, "extra.bin") == 1);
        CHECK(r->count[MF_CACHE_INCOMPLETE] == 1);
        CHECK(r->count[MF_CACHE_BAD_REF] == 1 && problems(r, MF_CACHE_BAD_REF, "refs/stale") == 1);
        CHECK(r->count[MF_CACHE_UNCHECKED] == 0 && r->n_problems == 7);
    }
    mf_cache_verify_free(r);
    mf_status st;
    mf_status_init(&st);
    CHECK(mf_cache_verify(NULL, "acme/none", NULL, NULL, &r, &st) == -1 && strstr(st.msg, "acme/none"));
    mf_status_clear(&st);
}

static int run_cli(const char *mfmt, const char *args, char *out, size_t cap)
{
    char cmd[2048];
    snprintf(cmd, sizeof(cmd), "HF_HUB_CACHE='%s' %s %s", cache, mfmt, args);
    return tl_run_cmd(cmd, "/tmp/mfmt-hub-cli.log", out, cap);
}

/* before the corruptions: inspect through the cache equals inspect of the
 * file; verify's exit codes */
static void test_cli_clean(const char *mfmt)
{
    static char a[65536], b[65536];
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "inspect --json hf://acme/tiny/model.safetensors | grep -v '\"path\"'");
    CHECK(run_cli(mfmt, cmd, a, sizeof(a)) == 0);
    CHECK(run_cli(mfmt, "inspect --json examples/tiny.safetensors | grep -v '\"path\"'", b,
                  sizeof(b)) == 0);
    CHECKF(strlen(a) > 100 && !strcmp(a, b), "%s\n---\n%s", a, b);
    /* a snapshot of symlinks is measured by its targets (never 76-byte links) */
    CHECK(run_cli(mfmt, "inspect --json acme/tiny | grep '\"file_bytes\"'", a, sizeof(a)) == 0);
    char want[64];
    snprintf(want, sizeof(want), "\"file_bytes\": %ld", model_size);
    CHECKF(strstr(a, want), "%s", a);
    CHECK(run_cli(mfmt, "hash acme/tiny", a, sizeof(a)) == 0);
    CHECK(run_cli(mfmt, "cache verify", a, sizeof(a)) == 0);
    CHECKF(strstr(a, "0 corrupt") && strstr(a, "1 unchecked"), "%s", a);
    CHECK(run_cli(mfmt, "cache verify acme/absent", a, sizeof(a)) == 2);
    CHECK(run_cli(mfmt, "cache scan --json", a, sizeof(a)) == 0);
    CHECK(strstr(a, "\"acme/tiny\"") && strstr(a, "\"refs/pr/1\""));
    CHECK(run_cli(mfmt, "cache frobnicate", a, sizeof(a)) == 2);
}

/* a delivery record of the cached repo, checked on a copy elsewhere: the
 * file hash of the LFS file is its blob name; a metadata edit changes the
 * file hash only, a changed weight both; a deleted file is missing */
static void test_records(const char *mfmt)
{
    static char a[65536];
    char cmd[2048], rec[400], copy[400];
    snprintf(rec, sizeof(rec), "%s/rec.json", root);
    snprintf(copy, sizeof(copy), "%s/copy", root);
    snprintf(cmd, sizeof(cmd), "hash --record %s acme/tiny && cat %s", rec, rec);
    CHECK(run_cli(mfmt, cmd, a, sizeof(a)) == 0);
    char want[200];
    snprintf(want, sizeof(want), "\"sha256\": \"%s\"", model_blob);
    CHECKF(strstr(a, want) && strstr(a, "\"repo\": \"acme/tiny\"") && strstr(a, C1) &&
           strstr(a, "\"tensor_content_sha256\": \"") && strstr(a, "\"path\": \"config.json\""),
           "%s", a);
    snprintf(cmd, sizeof(cmd), "cp -rL %s/models--acme--tiny/snapshots/%s %s", cache, C1, copy);
    CHECK(system(cmd) == 0);
    snprintf(cmd, sizeof(cmd), "hash --check-record %s %s", rec, copy);
    CHECKF(run_cli(mfmt, cmd, a, sizeof(a)) == 0 && strstr(a, "2 of 2 recorded files match"), "%s", a);
    snprintf(cmd, sizeof(cmd), "edit --set who=me %s/model.safetensors >/dev/null && "
                               "%s hash --check-record %s %s", copy, mfmt, rec, copy);
    CHECKF(run_cli(mfmt, cmd, a, sizeof(a)) == 1 && strstr(a, "tensors identical"), "%s", a);
    char path[500];
    snprintf(path, sizeof(path), "%s/model.safetensors", copy);
    int fd = open(path, O_WRONLY);
    struct stat sb;
    CHECK(fd >= 0 && fstat(fd, &sb) == 0 && pwrite(fd, "\x55", 1, sb.st_size - 1) == 1);
    if (fd >= 0)
        close(fd);
    snprintf(cmd, sizeof(cmd), "hash --check-record %s --json %s", rec, copy);
    CHECKF(run_cli(mfmt, cmd, a, sizeof(a)) == 1 && strstr(a, "weights are not the recorded"), "%s", a);
    snprintf(cmd, sizeof(cmd), "hash --check-record %s %s/model.safetensors", rec, copy);
    CHECK(run_cli(mfmt, cmd, a, sizeof(a)) == 3); /* a two-file record against one file */
    snprintf(path, sizeof(path), "%s/config.json", copy);
    CHECK(unlink(path) == 0);
    snprintf(cmd, sizeof(cmd), "hash --check-record %s %s", rec, copy);
    CHECKF(run_cli(mfmt, cmd, a, sizeof(a)) == 3 && strstr(a, "config.json: missing"), "%s", a);
    snprintf(cmd, sizeof(cmd), "hash --check-record %s/version.txt %s", cache, copy);
    CHECK(run_cli(mfmt, cmd, a, sizeof(a)) == 5);
}

static void test_cli_broken(const char *mfmt)
{
    static char a[65536];
    CHECK(run_cli(mfmt, "cache verify acme/tiny", a, sizeof(a)) == 1);
    CHECKF(strstr(a, "2 corrupt, 2 missing, 1 dangling, 1 incomplete, 1 bad refs"), "%s", a);
    CHECK(run_cli(mfmt, "cache verify --jsonl acme/tiny | grep -c '\"problem\"'", a, sizeof(a)) == 0);
    CHECK(atoi(a) == 7);
    CHECK(run_cli(mfmt, "cache verify acme/copies", a, sizeof(a)) == 0);
}

int main(void)
{
    if (!tl_make_tmpdir(root, sizeof(root), "hub"))
        return 1;
    snprintf(cache, sizeof(cache), "%s/hub", root);
    build_cache();
    test_cache_dir_env();
    test_resolve();
    test_scan();
    const char *mfmt = getenv("MFMT");
    if (mfmt) {
        test_cli_clean(mfmt);
        test_records(mfmt);
    }
    else
        printf("skip: CLI tests (MFMT not set)\n");
    test_verify();
    if (mfmt)
        test_cli_broken(mfmt);
    tl_remove_tmpdir(root);
    return tl_report("hub");
}
