/* test_remote.c - remote reads by HTTP ranges against a Hub-shaped server
 * on 127.0.0.1 that this test starts (tests/hub_server.py: a "hub" port
 * answering /resolve/ with a 302 to a "CDN" port that honours Range; gated
 * files; servers that ignore Range, stall, truncate or lie in
 * Content-Range) and stops. Checks: inspect of a remote file reports what
 * inspect of the local copy does; a 1 GiB safetensors costs under 1 MB;
 * tensor bytes come exactly or not at all (the budget's error); the token
 * is sent and never printed. Skipped (and said) without python3. */
#include "testlib.h"
#include "testmf.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char root[256], tree[400], logf[400], cache[400];
static int hub_port, cdn_port;
static pid_t server;
static const char *TOKEN = "hf_test_secret_42";

static bool mf_is_dir_for_test(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static void mkdirs(const char *p)
{
    char cmd[1200];
    snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", p);
    CHECK(system(cmd) == 0);
}

static void copy_in(const char *src, const char *repo, const char *name)
{
    char cmd[2000];
    snprintf(cmd, sizeof(cmd), "mkdir -p '%s/%s' && cp '%s' '%s/%s/%s'", tree, repo, src, tree,
             repo, name);
    CHECKF(system(cmd) == 0, "%s", cmd);
}

/* A 1 GiB safetensors (one F32 tensor), sparse: the disk holds its header. */
static void make_big(const char *repo)
{
    char dir[600], path[700];
    snprintf(dir, sizeof(dir), "%s/%s", tree, repo);
    mkdirs(dir);
    snprintf(path, sizeof(path), "%s/big.safetensors", dir);
    const char *hdr = "{\"w\":{\"dtype\":\"F32\",\"shape\":[262144,1024],"
                      "\"data_offsets\":[0,1073741824]}}";
    char buf[256];
    size_t n = strlen(hdr), pad = (8 - n % 8) % 8;
    uint64_t hl = n + pad;
    memcpy(buf, &hl, 8); /* little-endian machine (x86-64) */
    memcpy(buf + 8, hdr, n);
    memset(buf + 8 + n, ' ', pad);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0 && write(fd, buf, 8 + hl) == (ssize_t)(8 + hl) &&
          ftruncate(fd, (off_t)(8 + hl + (1ull << 30))) == 0);
    if (fd >= 0)
        close(fd);
}

static bool start_server(void)
{
    const char *py = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
    char ports[500];
    snprintf(ports, sizeof(ports), "%s/ports", root);
    server = fork();
    if (server == 0) {
        int fd = open(ports, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fd, 1);
        execlp(py, py, "tests/hub_server.py", "--root", tree, "--log", logf, "--token", TOKEN,
               "--lifetime", "300", "--stall", "4", (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 300; i++) { /* at most 30 s */
        FILE *f = fopen(ports, "r");
        int ok = f && fscanf(f, "%d %d", &hub_port, &cdn_port) == 2;
        if (f)
            fclose(f);
        if (ok)
            return true;
        int status;
        if (waitpid(server, &status, WNOHANG) == server)
            return false;
        struct timespec ts = {0, 100000000};
        nanosleep(&ts, NULL);
    }
    return false;
}

static void stop_server(void)
{
    if (server > 0) {
        kill(server, SIGTERM);
        waitpid(server, NULL, 0);
    }
}

/* Bytes the server sent since the log was last cleared. */
static uint64_t served_bytes(void)
{
    FILE *f = fopen(logf, "r");
    char path[1024];
    unsigned long long n, total = 0;
    while (f && fscanf(f, "%1023s %llu", path, &n) == 2)
        total += n;
    if (f)
        fclose(f);
    if (truncate(logf, 0)) { /* a log not made yet */
    }
    return total;
}

static int run(const char *env, const char *args, char *out, size_t cap)
{
    char cmd[3000];
    snprintf(cmd, sizeof(cmd), "HF_TOKEN= HF_HOME='%s' HF_HUB_CACHE='%s' HF_ENDPOINT=http://127.0.0.1:%d %s %s %s",
             root, cache, hub_port, env, getenv("MFMT"), args);
    return tl_run_cmd(cmd, "/tmp/mfmt-remote-cli.log", out, cap);
}

/* "mfmt: N bytes fetched over HTTP" */
static uint64_t fetched(const char *out)
{
    const char *p = strstr(out, " bytes fetched over HTTP");
    if (!p)
        return 0;
    while (p > out && p[-1] >= '0' && p[-1] <= '9')
        p--;
    return strtoull(p, NULL, 10);
}

/* removes the line holding `key` */
static void drop_line(char *s, const char *key)
{
    char *p = strstr(s, key);
    if (!p)
        return;
    while (p > s && p[-1] != '\n')
        p--;
    char *e = strchr(p, '\n');
    e = e ? e + 1 : p + strlen(p);
    memmove(p, e, strlen(e) + 1);
}

static void strip_path_line(char *s)
{
    drop_line(s, "\"path\":");
    drop_line(s, "bytes fetched over HTTP");
}

/* inspect --json of the remote Hub file equals that of the local copy */
static void same_inspect(const char *repo, const char *file)
{
    static char a[1 << 17], b[1 << 17];
    char args[1200];
    snprintf(args, sizeof(args), "inspect --json hf://%s/%s", repo, file);
    CHECKF(run("", args, a, sizeof(a)) == 0, "%s: %s", args, a);
    uint64_t got = fetched(a);
    snprintf(args, sizeof(args), "inspect --json %s/%s/%s", tree, repo, file);
    CHECK(run("", args, b, sizeof(b)) == 0);
    strip_path_line(a);
    strip_path_line(b);
    CHECKF(strlen(a) > 50 && !strcmp(a, b), "%s/%s:\n%s\n---\n%s", repo, file, a, b);
    CHECK(got > 0);
}

static void test_inspect(void)
{
    static char out[1 << 16];
    served_bytes();
    same_inspect("acme/tiny", "big.safetensors");
    uint64_t served = served_bytes();
    printf("remote inspect of a 1 GiB safetensors: %llu bytes served\n", (unsigned long long)served);
    CHECKF(served > 0 && served < 1000000, "%llu", (unsigned long long)served);
    same_inspect("acme/tiny", "tiny-llama.gguf");
    same_inspect("acme/tiny", "tiny.safetensors");
    char bin[600];
    snprintf(bin, sizeof(bin), "%s/acme/tiny/pytorch_model.bin", tree);
    if (access(bin, R_OK) == 0) {
        same_inspect("acme/tiny", "pytorch_model.bin");
        CHECK(run("", "scan hf://acme/tiny/pytorch_model.bin", out, sizeof(out)) == 0 &&
              strstr(out, ": safe"));
    } else
        printf("skip: remote .bin (../shared/corpus not here)\n");
    /* a URL works as a path too; detect and validate read headers only */
    char args[600];
    snprintf(args, sizeof(args), "detect http://127.0.0.1:%d/blob/acme/tiny/big.safetensors", cdn_port);
    CHECK(run("", args, out, sizeof(out)) == 0 && strstr(out, "safetensors"));
    snprintf(args, sizeof(args), "validate hf://acme/tiny/tiny-llama.gguf");
    CHECK(run("", args, out, sizeof(out)) == 0 && strstr(out, "OK"));
    /* tensor data is never read as zeros: over the budget, a clear error */
    CHECK(run("", "hash --content --max-bytes 1000000 hf://acme/tiny/big.safetensors", out,
              sizeof(out)) == 2);
    CHECKF(strstr(out, "byte budget of 1000000"), "%s", out);
    /* ... within it, the exact bytes: the remote content hash is the local one */
    static char b[1 << 16];
    CHECK(run("", "hash --content hf://acme/tiny/tiny.safetensors | grep 'tensor content'", out,
              sizeof(out)) == 0);
    snprintf(args, sizeof(args), "hash --content %s/acme/tiny/tiny.safetensors | grep 'tensor content'", tree);
    CHECK(run("", args, b, sizeof(b)) == 0);
    CHECKF(strlen(out) > 64 && !strncmp(out + 7, b + 7, 64), "%s\n%s", out, b);
    CHECK(run("", "inspect hf://acme/tiny/absent.gguf", out, sizeof(out)) == 2 &&
          strstr(out, "not found"));
    /* an empty file: a 416 to the first range, read as 0 bytes */
    CHECK(run("", "inspect hf://acme/tiny/empty.gguf", out, sizeof(out)) == 1);
    CHECKF(strstr(out, "unexpected end of data reading magic"), "%s", out);
    served_bytes();
}

static void test_misbehaving(void)
{
    static char out[1 << 16];
    /* ignores Range: the first bytes are used and the transfer cut off */
    CHECK(run("", "inspect hf://norange/x/big.safetensors", out, sizeof(out)) == 0);
    uint64_t got = fetched(out), served = served_bytes();
    printf("Range ignored on a 1 GiB file: %llu bytes received, %llu written by the server\n",
           (unsigned long long)got, (unsigned long long)served);
    CHECKF(got > 0 && got < 2000000, "%llu", (unsigned long long)got);
    /* the server writes into socket buffers until it sees the closed
     * connection: how much depends on the machine's load (13-67 MB seen),
     * never the whole file */
    CHECKF(served < (1ull << 30), "%llu", (unsigned long long)served);
    CHECK(run("", "hash --content --max-bytes 0 hf://norange/x/big.safetensors", out, sizeof(out)) == 2 &&
          strstr(out, "ignores Range"));
    served_bytes();
    CHECK(run("", "inspect hf://truncated/x/tiny.safetensors", out, sizeof(out)) == 2);
    CHECKF(strstr(out, "gave up after 4 tries") && (strstr(out, "truncated") || strstr(out, "Transferred a partial")), "%s", out);
    CHECK(run("", "inspect hf://badrange/x/tiny.safetensors", out, sizeof(out)) == 2);
    CHECKF(strstr(out, "Content-Range"), "%s", out);
    time_t t0 = time(NULL);
    CHECK(run("", "inspect --timeout 1 hf://slow/x/tiny.safetensors", out, sizeof(out)) == 2);
    /* a stall ends in the timeout (or the server's close), tried a bounded number of times */
    CHECKF((strstr(out, "stalled") || strstr(out, "partial")) && strstr(out, "gave up after") &&
           time(NULL) - t0 < 40, "%s", out);
}

static void test_gated(void)
{
    static char out[1 << 16];
    CHECK(run("", "inspect hf://gated/m/tiny.safetensors", out, sizeof(out)) == 2);
    CHECKF(strstr(out, "needs a token") && strstr(out, "HF_TOKEN"), "%s", out);
    char env[200], args[400];
    snprintf(env, sizeof(env), "HF_TOKEN=%s", TOKEN);
    CHECK(run(env, "inspect hf://gated/m/tiny.safetensors", out, sizeof(out)) == 0);
    CHECK(!strstr(out, TOKEN));
    snprintf(args, sizeof(args), "inspect --token %s hf://gated/m/tiny.safetensors", TOKEN);
    CHECK(run("", args, out, sizeof(out)) == 0 && !strstr(out, TOKEN));
    CHECK(run("", "inspect --token wrong-token hf://gated/m/tiny.safetensors", out, sizeof(out)) == 2);
    CHECKF(strstr(out, "refused") && !strstr(out, "wrong-token"), "%s", out);
    /* the cache's token file (HF_HOME/token), as huggingface_hub's login writes it */
    char tok[500];
    snprintf(tok, sizeof(tok), "%s/token", root);
    FILE *f = fopen(tok, "w");
    if (f) {
        fprintf(f, "%s\n", TOKEN);
        fclose(f);
    }
    CHECK(run("", "inspect hf://gated/m/tiny.safetensors", out, sizeof(out)) == 0);
    CHECK(!strstr(out, TOKEN));
    remove(tok);
    served_bytes();
}

/* In process: the library's count, a model opened from a URL, the budget. */
static void test_library(void)
{
    char url[300];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/acme/tiny/resolve/main/big.safetensors", hub_port);
    mf_remote_opts o;
    mf_remote_opts_init(&o);
    o.max_bytes = mf_remote_bytes_read() + 1000000;
    CHECK(mf_remote_configure(&o, NULL) == 0);
    uint64_t before = mf_remote_bytes_read();
    mf_status st;
    mf_status_init(&st);
    mf_model *m = NULL;
    CHECKF(mf_open(url, NULL, &m, &st) == 0, "%s", st.msg);
    uint64_t used = mf_remote_bytes_read() - before;
    CHECKF(used < 1000000, "%llu", (unsigned long long)used);
    if (m) {
        const mf_tensor *t = mf_model_tensor_at(m, 0);
        CHECK(mf_model_tensor_count(m) == 1 && mf_tensor_nbytes(t) == (1ull << 30));
        CHECK(mf_tensor_data(m, t) == NULL); /* over the budget: no pointer, no zeros */
        char hex[129];
        CHECK(mf_hash_tensor(m, t, MF_SHA256, hex, &st) == -1 && strstr(st.msg, "budget"));
        mf_close(m);
    }
    mf_status_clear(&st);
    mf_remote_file_info info;
    CHECK(mf_remote_info(url, &info, &st) == 0);
    CHECKF(info.size > (1ull << 30) && info.linked_size == info.size, "%llu %llu",
           (unsigned long long)info.size, (unsigned long long)info.linked_size);
    CHECK(!strncmp(info.commit, "c0ffee", 6) && strlen(info.linked_etag) == 66);
    mf_status_clear(&st);
    mf_remote_opts_init(&o);
    mf_remote_configure(&o, NULL);
}


/* ---------------------------------------------------------- download */

#define DL_COMMIT "c0ffee0000000000000000000000000000000000"

static void read_small(const char *path, char *buf, size_t cap)
{
    buf[0] = 0;
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(buf, 1, cap - 1, f) : 0;
    buf[n] = 0;
    if (f)
        fclose(f);
}

static bool same_bytes(const char *a, const char *b)
{
    char cmd[1200];
    snprintf(cmd, sizeof(cmd), "cmp -s '%s' '%s'", a, b);
    return system(cmd) == 0;
}

/* The cache's entry for FILE of acme/dl: a relative symlink to a blob with
 * the source's bytes. */
static void check_linked(const char *file, const char *want_target_prefix)
{
    char link[1200], src[1200], target[600];
    snprintf(link, sizeof(link), "%s/models--acme--dl/snapshots/" DL_COMMIT "/%s", cache, file);
    snprintf(src, sizeof(src), "%s/acme/dl/%s", tree, file);
    ssize_t n = readlink(link, target, sizeof(target) - 1);
    if (n >= 0)
        target[n] = 0;
    CHECKF(n > 0 && !strncmp(target, want_target_prefix, strlen(want_target_prefix)),
           "%s: link to \"%s\", wanted %s...", file, n > 0 ? target : "(none)", want_target_prefix);
    CHECKF(same_bytes(link, src), "%s: the cached file differs from the served one", file);
}

/* The blob name of FILE in acme/dl, read from its snapshot link. */
static void blob_of(const char *file, char *blob, size_t cap)
{
    char link[1200], target[600];
    snprintf(link, sizeof(link), "%s/models--acme--dl/snapshots/" DL_COMMIT "/%s", cache, file);
    ssize_t n = readlink(link, target, sizeof(target) - 1);
    target[n > 0 ? n : 0] = 0;
    const char *b = strrchr(target, '/');
    snprintf(blob, cap, "%s", b ? b + 1 : "");
}

/* Body bytes the CDN/resolve served for paths containing `part` since the
 * last served_bytes() (the log is not cleared). */
static uint64_t served_for(const char *part)
{
    FILE *f = fopen(logf, "r");
    char path[1024];
    unsigned long long n, total = 0;
    while (f && fscanf(f, "%1023s %llu", path, &n) == 2)
        if (strstr(path, part) && !strstr(path, "/api/"))
            total += n;
    if (f)
        fclose(f);
    return total;
}

static void test_download_fresh(void)
{
    char out[8192];
    served_bytes();
    int rc = run("", "download acme/dl", out, sizeof(out));
    CHECKF(rc == 0, "download acme/dl: rc %d: %s", rc, out);
    CHECKF(strstr(out, "4 files") && strstr(out, "every blob verified"), "summary: %s", out);
    char ref[1200], got[200];
    snprintf(ref, sizeof(ref), "%s/models--acme--dl/refs/main", cache);
    read_small(ref, got, sizeof(got));
    CHECKF(!strcmp(got, DL_COMMIT), "refs/main holds \"%s\"", got);
    /* LFS files by SHA-256, git files by the blob SHA-1; one "../" more per folder */
    /* the cache huggingface_hub's snapshot_download fills (tests/data/hub) */
    char cmd[1400];
    snprintf(cmd, sizeof(cmd), "sh tests/hub_layout.sh '%s' | diff tests/data/hub/snapshot_download.layout - >&2",
             cache);
    CHECKF(system(cmd) == 0, "the cache differs from huggingface_hub's layout (diff above)");
    check_linked("tiny.safetensors", "../../blobs/");
    check_linked("tiny-llama.gguf", "../../blobs/");
    check_linked("config.json", "../../blobs/");
    check_linked("sub/tokenizer.json", "../../../blobs/");
    char blob[200];
    blob_of("config.json", blob, sizeof(blob));
    CHECKF(strlen(blob) == 40, "config.json's blob \"%s\" is not the git SHA-1", blob);
    blob_of("tiny.safetensors", blob, sizeof(blob));
    CHECKF(strlen(blob) == 64, "tiny.safetensors's blob \"%s\" is not the SHA-256", blob);
    /* what the cache commands say of it */
    CHECK(run("", "cache verify acme/dl", out, sizeof(out)) == 0 && strstr(out, "0 corrupt, 0 missing"));
    served_bytes();
    CHECKF(run("", "inspect hf://acme/dl/tiny.safetensors", out, sizeof(out)) == 0, "%s", out);
    CHECKF(served_bytes() == 0, "a downloaded file is read from the cache, not the server");
    /* a second run fetches nothing but the listing and the ETags */
    rc = run("", "download --json acme/dl", out, sizeof(out));
    CHECKF(rc == 0 && strstr(out, "\"state\": \"present\"") && !strstr(out, "\"downloaded\""),
           "second run: %s", out);
    /* one byte per file: the 1-byte range that asks for its ETag and size */
    uint64_t again = served_for("/acme/dl/");
    CHECKF(again == 4, "the second run was served %llu bytes, wanted 4 (no blob bytes)",
           (unsigned long long)again);
    served_bytes();
}

static void test_download_resume(void)
{
    char out[8192], blob[200], final[900], part[1000], src[900];
    blob_of("tiny-llama.gguf", blob, sizeof(blob));
    snprintf(final, sizeof(final), "%s/models--acme--dl/blobs/%s", cache, blob);
    snprintf(part, sizeof(part), "%s.incomplete", final);
    snprintf(src, sizeof(src), "%s/acme/dl/tiny-llama.gguf", tree);
    struct stat sb;
    CHECK(stat(src, &sb) == 0);
    uint64_t size = (uint64_t)sb.st_size, half = size / 2;
    /* an interrupted download: the first half of the blob */
    char cmd[3000];
    snprintf(cmd, sizeof(cmd), "head -c %llu '%s' > '%s' && rm -f '%s'", (unsigned long long)half,
             src, part, final);
    CHECK(system(cmd) == 0);
    served_bytes();
    int rc = run("", "download --jsonl acme/dl", out, sizeof(out));
    CHECKF(rc == 0 && strstr(out, "\"resumed\""), "resume: rc %d: %s", rc, out);
    uint64_t got = served_for("tiny-llama.gguf");
    /* the rest of the file, and the one byte of the ETag request */
    CHECKF(got == size - half + 1, "resume fetched %llu bytes of tiny-llama.gguf, wanted %llu",
           (unsigned long long)got, (unsigned long long)(size - half + 1));
    CHECK(same_bytes(final, src) && access(part, F_OK) != 0);
    /* a partial file that is not a prefix of the blob: refused, removed, no link */
    snprintf(cmd, sizeof(cmd), "head -c %llu /dev/zero > '%s' && rm -f '%s'",
             (unsigned long long)half, part, final);
    CHECK(system(cmd) == 0);
    rc = run("", "download acme/dl", out, sizeof(out));
    CHECKF(rc == 1 && strstr(out, "not to its name") && strstr(out, "tiny-llama.gguf"),
           "a wrong partial file: rc %d: %s", rc, out);
    CHECK(access(part, F_OK) != 0 && access(final, F_OK) != 0);
    rc = run("", "download -q acme/dl", out, sizeof(out));
    CHECKF(rc == 0 && same_bytes(final, src), "the run after: rc %d: %s", rc, out);
    CHECKF(strstr(out, "/snapshots/" DL_COMMIT), "-q prints the snapshot path: %s", out);
    served_bytes();
}

static void test_download_refusals(void)
{
    char out[8192];
    /* a CDN that corrupts the bytes: nothing lands in blobs/ */
    int rc = run("", "download corrupt/x", out, sizeof(out));
    CHECKF(rc == 1 && strstr(out, "the download was corrupted"), "corrupt: rc %d: %s", rc, out);
    char cmd[1200];
    snprintf(cmd, sizeof(cmd), "test -z \"$(ls '%s/models--corrupt--x/blobs' 2>/dev/null)\"", cache);
    CHECKF(system(cmd) == 0, "a corrupt download left a blob or a partial file");
    /* gated: a token is needed, sent, never printed */
    rc = run("", "download gated/m", out, sizeof(out));
    CHECKF(rc == 2 && strstr(out, "token"), "gated without a token: rc %d: %s", rc, out);
    char env[200];
    snprintf(env, sizeof(env), "HF_TOKEN=%s", TOKEN);
    rc = run(env, "download gated/m", out, sizeof(out));
    CHECKF(rc == 0 && !strstr(out, TOKEN), "gated with a token: rc %d: %s", rc, out);
    /* patterns, one file */
    char other[600];
    /* a cache folder that cannot be made (under a file) */
    snprintf(other, sizeof(other), "download --cache-dir '%s/acme/dl/config.json/c' acme/dl", tree);
    rc = run("", other, out, sizeof(out));
    CHECKF(rc == 2 && strstr(out, "cannot make the folder"), "an unwritable cache dir: rc %d: %s", rc, out);
    snprintf(other, sizeof(other), "%s/other-cache", root);
    snprintf(cmd, sizeof(cmd), "download --cache-dir '%s' --include '*.json' --jsonl acme/dl", other);
    rc = run("", cmd, out, sizeof(out));
    CHECKF(rc == 0 && strstr(out, "config.json") && strstr(out, "sub/tokenizer.json") &&
               !strstr(out, "safetensors") && !strstr(out, ".gguf"),
           "--include '*.json': rc %d: %s", rc, out);
    snprintf(cmd, sizeof(cmd), "download --cache-dir '%s' --exclude 'sub/' --jsonl acme/dl", other);
    rc = run("", cmd, out, sizeof(out));
    CHECKF(rc == 0 && !strstr(out, "sub/tokenizer.json") && strstr(out, "tiny.safetensors"),
           "--exclude 'sub/': rc %d: %s", rc, out);
    snprintf(cmd, sizeof(cmd), "download --cache-dir '%s' --jsonl hf://acme/dl/tiny-llama.gguf", other);
    rc = run("", cmd, out, sizeof(out));
    CHECKF(rc == 0 && strstr(out, "tiny-llama.gguf") && !strstr(out, "config.json"),
           "one file: rc %d: %s", rc, out);
    rc = run("", "download hf://acme/dl/nope.bin", out, sizeof(out));
    CHECKF(rc == 2 && strstr(out, "no file nope.bin"), "a missing file: rc %d: %s", rc, out);
    /* a lock held by another downloader (huggingface_hub's lock file) */
    char blob[200], lock[1200], final[1200];
    blob_of("tiny.safetensors", blob, sizeof(blob));
    snprintf(lock, sizeof(lock), "%s/.locks/models--acme--dl/%s.lock", cache, blob);
    snprintf(final, sizeof(final), "%s/models--acme--dl/blobs/%s", cache, blob);
    CHECK(unlink(final) == 0);
    int fd = open(lock, O_RDWR | O_CREAT, 0644);
    CHECK(fd >= 0 && flock(fd, LOCK_EX) == 0);
    rc = run("", "download acme/dl", out, sizeof(out));
    CHECKF(rc == 2 && strstr(out, "lock is held"), "a held lock: rc %d: %s", rc, out);
    if (fd >= 0)
        close(fd);
    rc = run("", "download acme/dl", out, sizeof(out));
    CHECKF(rc == 0 && access(final, F_OK) == 0, "after the lock: rc %d: %s", rc, out);
    served_bytes();
}

/* Every occurrence of `from` in s (cap bytes) replaced by `to` (shorter). */
static void replace_all(char *s, const char *from, const char *to)
{
    size_t fl = strlen(from), tl = strlen(to);
    for (char *p = strstr(s, from); p; p = strstr(p + tl, from))
        memmove(p + tl, p + fl, strlen(p + fl) + 1), memcpy(p, to, tl);
}

/* Paths made comparable: the local copy's folder, the remote files' URLs
 * and the temporary folder of a remote repo all become "@". */
static void same_paths(char *s, const char *repo)
{
    char pre[1200];
    snprintf(pre, sizeof(pre), "http://127.0.0.1:%d/%s/resolve/" "c0ffee0000000000000000000000000000000000", hub_port, repo);
    replace_all(s, pre, "@");
    snprintf(pre, sizeof(pre), "%s/%s", tree, repo);
    replace_all(s, pre, "@");
    for (char *p = strstr(s, "/mfmt-hf-"); p; p = strstr(p, "/mfmt-hf-")) {
        char *start = p;
        while (start > s && start[-1] != ' ' && start[-1] != '"')
            start--;
        char *end = p + 1;
        while (*end && *end != '/' && *end != '"' && *end != '\n')
            end++;
        memmove(start + 1, end, strlen(end) + 1);
        *start = '@';
        p = start + 1;
    }
}

/* hf://ORG/NAME not in the cache: the whole repo read in place. inspect
 * reports what it reports for the local copy (paths aside), reading a
 * small part of a 1 GiB repo; scan refuses (it walks files). */
static void test_remote_repo(void)
{
    char a[16384], b[16384], args[1200];
    served_bytes();
    int rc = run("", "inspect hf://acme/bigdir", a, sizeof(a));
    uint64_t served = served_bytes();
    snprintf(args, sizeof(args), "inspect %s/acme/bigdir", tree);
    int rl = run("", args, b, sizeof(b));
    CHECKF(rc == rl, "remote repo: rc %d, local copy rc %d: %s", rc, rl, a);
    same_paths(a, "acme/bigdir");
    same_paths(b, "acme/bigdir");
    drop_line(a, "bytes fetched over HTTP");
    const char *pa = a, *pb = b;
    CHECKF(!strcmp(pa, pb), "remote repo report differs from the local copy's:\n%s\n---\n%s",
           a, b);
    printf("remote inspect of a 1 GiB repo (config + weights): %llu bytes served\n",
           (unsigned long long)served);
    CHECKF(served < (10u << 20) && served > 0, "served %llu bytes (wanted under 1%% of 1 GiB)",
           (unsigned long long)served);
    /* a model with tokenizer files, as the local copy */
    rc = run("", "inspect --json hf://acme/m2", a, sizeof(a));
    snprintf(args, sizeof(args), "inspect --json %s/acme/m2", tree);
    rl = run("", args, b, sizeof(b));
    same_paths(a, "acme/m2");
    same_paths(b, "acme/m2");
    drop_line(a, "bytes fetched over HTTP");
    CHECKF(rc == 0 && rl == 0 && !strcmp(a, b), "remote repo --json differs:\n%s\n---\n%s", a, b);
    /* no folder is left behind */
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "ls -d %s/mfmt-hf-* 2>/dev/null | grep -q .", root);
    CHECKF(system(cmd) != 0, "a remote repo's folder was left in TMPDIR");
    /* scan walks files: a remote repo is refused, never called safe */
    rc = run("", "scan hf://acme/m2", a, sizeof(a));
    CHECKF(rc != 0 && !strstr(a, "safe\n"), "scan of a remote repo: rc %d: %s", rc, a);
    /* offline: nothing is asked */
    served_bytes();
    rc = run("HF_HUB_OFFLINE=1", "inspect hf://acme/m2", a, sizeof(a));
    CHECKF(rc != 0 && strstr(a, "HF_HUB_OFFLINE") && served_bytes() == 0, "offline: rc %d: %s", rc, a);
    /* a bare ORG/NAME never goes to the network (it may be a mistyped path) */
    rc = run("", "inspect acme/m2", a, sizeof(a));
    CHECKF(rc != 0 && served_bytes() == 0, "bare name: rc %d: %s", rc, a);
}

int main(void)
{
    if (!tl_make_tmpdir(root, sizeof(root), "remote"))
        return 1;
    snprintf(tree, sizeof(tree), "%s/tree", root);
    snprintf(logf, sizeof(logf), "%s/served.log", root);
    snprintf(cache, sizeof(cache), "%s/hub", root);
    make_big("acme/tiny");
    make_big("norange/x");
    copy_in("examples/tiny-llama.gguf", "acme/tiny", "tiny-llama.gguf");
    copy_in("/dev/null", "acme/tiny", "empty.gguf");
    const char *reps[] = {"acme/tiny", "gated/m", "slow/x", "truncated/x", "badrange/x"};
    for (size_t i = 0; i < 5; i++)
        copy_in("examples/tiny.safetensors", reps[i], "tiny.safetensors");
    copy_in("examples/tiny.safetensors", "acme/dl", "tiny.safetensors");
    copy_in("examples/tiny-llama.gguf", "acme/dl", "tiny-llama.gguf");
    copy_in("examples/tiny.safetensors", "corrupt/x", "tiny.safetensors");
    char cfg[2000];
    snprintf(cfg, sizeof(cfg), "%s/acme/dl/config.json", tree);
    FILE *cf = fopen(cfg, "w");
    CHECK(cf && fputs("{\"model_type\": \"llama\"}\n", cf) >= 0);
    if (cf)
        fclose(cf);
    snprintf(cfg, sizeof(cfg), "%s/acme/dl/sub", tree);
    mkdirs(cfg);
    snprintf(cfg, sizeof(cfg), "%s/acme/dl/sub/tokenizer.json", tree);
    cf = fopen(cfg, "w");
    CHECK(cf && fputs("{\"version\": \"1.0\"}\n", cf) >= 0);
    if (cf)
        fclose(cf);
    make_big("acme/bigdir");
    snprintf(cfg, sizeof(cfg), "mv '%s/acme/bigdir/big.safetensors' '%s/acme/bigdir/model.safetensors'", tree, tree);
    CHECK(system(cfg) == 0);
    snprintf(cfg, sizeof(cfg), "%s/acme/bigdir/config.json", tree);
    cf = fopen(cfg, "w");
    CHECK(cf && fputs("{\"architectures\": [\"LlamaForCausalLM\"], \"model_type\": \"llama\"}\n", cf) >= 0);
    if (cf)
        fclose(cf);
    const char *shared = tl_shared_dir();
    char bin[600];
    snprintf(bin, sizeof(bin), "%s/corpus/hf-dir/llama-tiny-bin/pytorch_model.bin", shared ? shared : ".");
    if (shared && access(bin, R_OK) == 0)
        copy_in(bin, "acme/tiny", "pytorch_model.bin");
    /* a model folder with tokenizer files (without ../shared: a GPTQ
     * folder of tests/data, config and weights) */
    char m2[600];
    snprintf(m2, sizeof(m2), "%s/corpus/hf-dir/llama-tiny", shared ? shared : ".");
    if (!shared || !mf_is_dir_for_test(m2))
        snprintf(m2, sizeof(m2), "tests/data/prequant/gptq-llama-tiny");
    snprintf(cfg, sizeof(cfg), "mkdir -p '%s/acme/m2' && cp '%s'/* '%s/acme/m2/'", tree, m2, tree);
    CHECK(system(cfg) == 0);
    if (!getenv("MFMT") || !start_server()) {
        TL_SKIP("remote tests (%s)", getenv("MFMT") ? "python3 server did not start" : "MFMT not set");
        stop_server();
        tl_remove_tmpdir(root);
        return tl_report("remote");
    }
    test_inspect();
    test_misbehaving();
    test_gated();
    test_library();
    test_remote_repo();
    test_download_fresh();
    test_download_resume();
    test_download_refusals();
    stop_server();
    tl_remove_tmpdir(root);
    return tl_report("remote");
}
