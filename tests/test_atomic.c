/* test_atomic.c - output that is all or nothing and leaves nothing behind:
 *  - a writer SIGKILLed by another process in the middle of a file, and
 *    self-killed at every window of atomic.c (after data reached the
 *    temporary, between link and rename, a set fully staged, a set half
 *    renamed), with O_TMPFILE and with named temporaries: the old output
 *    stays intact, and no temporary survives the next run's sweep;
 *  - split and sharded convert as sets: killed before the commit point the
 *    old shards are untouched, after it the next run completes the new set;
 *  - the sweep removes dead runs' temporaries only (a living writer's,
 *    locked, stays; names that merely look alike stay);
 *  - every writing command refuses an output that is one of its inputs:
 *    merge onto shard 2 of 3, split over an input shard, convert into a
 *    directory input's config.json, quantize over its imatrix. */
#include "testlib.h"

#include "gguf_fixture.h"
#include "ops/convert_st.h"
#include "ops/dequantize.h"
#include "ops/quantize.h"
#include "ops/split.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char g_dir[64];

static const char *at(const char *name)
{
    static char buf[8][512];
    static int k;
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof(buf[k]), "%s/%s", g_dir, name);
    return buf[k];
}

/* Entries of g_dir that are mfmt temporaries (files or directories). */
static int count_temps(void)
{
    DIR *d = opendir(g_dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL)
        n += mf_atomic_is_temp_name(e->d_name);
    if (d)
        closedir(d);
    return n;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static bool file_is(const char *path, const char *text)
{
    char buf[256] = {0};
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    return n == strlen(text) && memcmp(buf, text, n) == 0;
}

static void remove_all(void)
{
    DIR *d = opendir(g_dir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
            continue;
        char p[600];
        snprintf(p, sizeof(p), "%s/%s", g_dir, e->d_name);
        if (unlink(p) != 0) {
            DIR *s = opendir(p);
            struct dirent *f;
            while (s && (f = readdir(s)) != NULL) {
                char q[900];
                snprintf(q, sizeof(q), "%s/%s", p, f->d_name);
                unlink(q);
            }
            if (s)
                closedir(s);
            rmdir(p);
        }
    }
    if (d)
        closedir(d);
}

/* ------------------------------------------ one file, killed by another */

typedef struct slow_fill {
    int notify;     /* pipe: written once 8 MB reached the writer */
    size_t chunks;  /* 1 MB each */
} slow_fill;

static int slow_fill_cb(void *ctx, size_t index, mf_sink_fn sink, void *sink_ctx, mf_status *st)
{
    (void)index;
    slow_fill *f = ctx;
    static uint8_t mb[1 << 20];
    for (size_t i = 0; i < f->chunks; i++) {
        if (sink(sink_ctx, mb, sizeof(mb), st))
            return -1;
        if (i == 8) {
            char c = 1;
            if (write(f->notify, &c, 1) != 1)
                return -1;
            pause(); /* wait for the kill */
        }
    }
    return 0;
}

/* A child writes a 64 MB safetensors file over OUT and is SIGKILLed by
 * this process once 8 MB went out. */
static void test_killed_writer(bool named)
{
    remove_all();
    const char *out = at("out.safetensors");
    write_text(out, "old output");
    int p[2];
    CHECK(pipe(p) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        mf_atomic_named_only = named;
        slow_fill f = {p[1], 64};
        mf_out_tensor t = {.name = "w", .dtype = MF_U8, .ndim = 1, .shape = {64 << 20}};
        mf_status st;
        mf_status_init(&st);
        _exit(mf_safetensors_write(out, &t, 1, NULL, 0, slow_fill_cb, &f, &st) ? 3 : 0);
    }
    close(p[1]);
    char c = 0;
    CHECK(read(p[0], &c, 1) == 1 && c == 1);
    close(p[0]);
    CHECK(kill(pid, SIGKILL) == 0);
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    CHECKF(file_is(out, "old output"), "killed writer (%s): old output changed", named ? "named" : "O_TMPFILE");
    /* O_TMPFILE: nothing at all; named: one temporary, until the next sweep */
    int left = count_temps();
    CHECKF(named ? left == 1 : left == 0, "killed writer (%s): %d temporaries left",
           named ? "named" : "O_TMPFILE", left);
    mf_atomic_sweep(g_dir);
    CHECK(count_temps() == 0 && file_is(out, "old output"));
}

/* ------------------------------------------------- self-kill windows */

static int fill_bytes(void *ctx, size_t index, mf_sink_fn sink, void *sink_ctx, mf_status *st)
{
    (void)index;
    return sink(sink_ctx, ctx, 3u << 20, st);
}

/* Writes OUT in a child killed at `point`; returns what the next write
 * (a sweep through mf_atomic_open) leaves: the temporaries count. */
static void kill_single_at(const char *point, bool named)
{
    remove_all();
    const char *out = at("model.safetensors");
    write_text(out, "old output");
    static uint8_t data[3u << 20];
    pid_t pid = fork();
    if (pid == 0) {
        mf_atomic_kill_point = point;
        mf_atomic_named_only = named;
        mf_out_tensor t = {.name = "w", .dtype = MF_U8, .ndim = 1, .shape = {3u << 20}};
        mf_status st;
        mf_status_init(&st);
        int rc = mf_safetensors_write(out, &t, 1, NULL, 0, fill_bytes, data, &st);
        _exit(rc ? 3 : 0);
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECKF(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "kill point %s not reached", point);
    CHECKF(file_is(out, "old output"), "killed at %s: old output changed", point);
    int left = count_temps();
    bool expect_one = named || strcmp(point, "link") == 0;
    CHECKF(left == (expect_one ? 1 : 0), "killed at %s (%s): %d temporaries", point,
           named ? "named" : "O_TMPFILE", left);
    /* the next run writing there removes it, and succeeds */
    mf_status st;
    mf_status_init(&st);
    mf_out_tensor t = {.name = "w", .dtype = MF_U8, .ndim = 1, .shape = {3u << 20}};
    CHECK(mf_safetensors_write(at("other.safetensors"), &t, 1, NULL, 0, fill_bytes, data, &st) == 0);
    CHECKF(count_temps() == 0, "after the next write, %d temporaries remain", count_temps());
    mf_status_clear(&st);
}

/* A living writer's temporary (locked) survives a sweep; names that only
 * look like temporaries survive too. */
static void test_sweep_spares_the_living(void)
{
    remove_all();
    const char *live = at("x.gguf.mfmt-tmp-Ab12Cd"), *dead = at("y.gguf.mfmt-tmp-Zz99Yy");
    const char *alike = at("z.mfmt-tmp-toolong7"), *alike2 = at("w.mfmt-tmp-ab_12c");
    write_text(dead, "dead");
    write_text(alike, "keep");
    write_text(alike2, "keep");
    int p[2], q[2];
    CHECK(pipe(p) == 0 && pipe(q) == 0);
    pid_t pid = fork();
    if (pid == 0) { /* holds the lock like a writer */
        int fd = open(live, O_RDWR | O_CREAT, 0644);
        char c = fd >= 0 && flock(fd, LOCK_EX) == 0;
        if (write(p[1], &c, 1) != 1 || read(q[0], &c, 1) != 1)
            _exit(1);
        _exit(0);
    }
    char c = 0;
    CHECK(read(p[0], &c, 1) == 1 && c == 1);
    mf_atomic_sweep(g_dir);
    CHECK(access(live, F_OK) == 0);
    CHECK(access(dead, F_OK) != 0);
    CHECK(access(alike, F_OK) == 0 && access(alike2, F_OK) == 0);
    CHECK(write(q[1], &c, 1) == 1);
    int status;
    waitpid(pid, &status, 0);
    mf_atomic_sweep(g_dir); /* its writer is gone now */
    CHECK(access(live, F_OK) != 0);
    close(p[0]); close(p[1]); close(q[0]); close(q[1]);
    unlink(alike);
    unlink(alike2);
    /* another user's dead temporary (planted in a shared directory) stays */
    const char *foreign = at("v.gguf.mfmt-tmp-Qq11Qq");
    write_text(foreign, "theirs");
    if (chown(foreign, 12345, 12345) == 0) {
        mf_atomic_sweep(g_dir);
        CHECK(file_is(foreign, "theirs"));
    } else {
        printf("skip: foreign-owner sweep check (not root)\n");
    }
    unlink(foreign);
}

/* ------------------------------------------------------------- sets */

static mf_model *open_or_null(const char *path)
{
    mf_status st;
    mf_status_init(&st);
    mf_model *m = NULL;
    if (mf_open(path, NULL, &m, &st))
        fprintf(stderr, "open %s: %s\n", path, st.msg);
    mf_status_clear(&st);
    return m;
}

/* A 3-tensor GGUF of 3 MB per tensor; each tensor's bytes = `seed`. */
static void make_gguf(const char *path, uint8_t seed)
{
    static uint8_t data[3][1 << 20];
    for (int i = 0; i < 3; i++)
        memset(data[i], seed + i, sizeof(data[i]));
    fx_tensor ts[3] = {{"a", MF_F32, 1, {1 << 18}, data[0], 1 << 20},
                       {"b", MF_F32, 1, {1 << 18}, data[1], 1 << 20},
                       {"c", MF_F32, 1, {1 << 18}, data[2], 1 << 20}};
    mf_kv meta[1] = {fx_kv_str("general.architecture", "llama")};
    mf_status st;
    mf_status_init(&st);
    CHECK(fx_write_gguf(path, ts, 3, meta, 1, &st) == 0);
    mf_status_clear(&st);
}

/* The first byte of tensor `name` in the set whose first shard is `first`. */
static int first_byte(const char *first, const char *name)
{
    mf_model *m = open_or_null(first);
    const mf_tensor *t = m ? mf_tensor_find(m, name) : NULL;
    int v = t && t->data ? t->data[0] : -1;
    mf_close(m);
    return v;
}

static void split_in_child(const char *src, const char *point)
{
    pid_t pid = fork();
    if (pid == 0) {
        mf_atomic_kill_point = point;
        mf_model *m = open_or_null(src);
        mf_status st;
        mf_status_init(&st);
        size_t nf;
        _exit(m && mf_gguf_split(m, at("set"), &(mf_split_opts){.struct_size = sizeof(mf_split_opts), .max_tensors = 1, .max_bytes = 0}, &nf, &st) == 0 ? 0 : 3);
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECKF(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "split: kill point %s not reached",
           point);
}

/* An old 3-shard set (bytes 10..12), a new split of other data (20..22)
 * killed at each window: the shards are all old or (after the sweep) all
 * new, never a mix; no temporary remains. */
static void test_split_killed(void)
{
    static const char *const points[] = {"write", "link", "stage", "commit"};
    for (size_t k = 0; k < 4; k++) {
        remove_all();
        make_gguf(at("old.gguf"), 10);
        make_gguf(at("new.gguf"), 20);
        mf_model *old = open_or_null(at("old.gguf"));
        mf_status st;
        mf_status_init(&st);
        size_t nf = 0;
        CHECK(old && mf_gguf_split(old, at("set"), &(mf_split_opts){.struct_size = sizeof(mf_split_opts), .max_tensors = 1, .max_bytes = 0}, &nf, &st) == 0 && nf == 3);
        mf_close(old);
        split_in_child(at("new.gguf"), points[k]);
        mf_atomic_sweep(g_dir); /* what the next run does first */
        const char *s1 = at("set-00001-of-00003.gguf");
        int a = first_byte(s1, "a"), b = first_byte(s1, "b"), c = first_byte(s1, "c");
        bool committed = strcmp(points[k], "commit") == 0;
        int base = committed ? 20 : 10;
        CHECKF(a == base && b == base + 1 && c == base + 2,
               "split killed at %s: shards hold %d %d %d, want all %s", points[k], a, b, c,
               committed ? "new" : "old");
        CHECKF(count_temps() == 0, "split killed at %s: %d temporaries after the sweep", points[k],
               count_temps());
        mf_status_clear(&st);
    }
}

/* A sharded safetensors convert killed after its commit point is
 * completed by the next run: shards and index together. */
static void test_sharded_convert_killed(void)
{
    remove_all();
    make_gguf(at("src.gguf"), 30);
    pid_t pid = fork();
    if (pid == 0) {
        mf_atomic_kill_point = "commit";
        mf_model *m = open_or_null(at("src.gguf"));
        mf_convert_st_opts o = {.struct_size = sizeof(mf_convert_st_opts), .max_shard_size = 1 << 20};
        mf_status st;
        mf_status_init(&st);
        _exit(m && mf_convert_to_safetensors(m, at("model.safetensors"), &o, NULL, &st) == 0 ? 0 : 3);
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid && WIFSIGNALED(status));
    CHECK(access(at("model.safetensors.index.json"), F_OK) != 0 || count_temps() > 0);
    mf_atomic_sweep(g_dir);
    CHECK(count_temps() == 0);
    mf_model *m = open_or_null(at("model.safetensors.index.json"));
    CHECKF(m && m->n_tensors == 3, "the rolled-forward set opens with its 3 tensors");
    mf_close(m);
}

/* ------------------------------------------- outputs that are inputs */

static void test_output_is_input(void)
{
    remove_all();
    make_gguf(at("src.gguf"), 40);
    mf_model *src = open_or_null(at("src.gguf"));
    mf_status st;
    mf_status_init(&st);
    size_t nf = 0;
    CHECK(src && mf_gguf_split(src, at("a"), &(mf_split_opts){.struct_size = sizeof(mf_split_opts), .max_tensors = 1, .max_bytes = 0}, &nf, &st) == 0 && nf == 3);
    char before[129], after[129];
    const char *s2 = at("a-00002-of-00003.gguf");
    CHECK(mf_hash_file(s2, MF_SHA256, before, &st) == 0);
    /* merge a-1 a-2: the set's second shard is an input */
    mf_model *set = open_or_null(at("a-00001-of-00003.gguf"));
    CHECK(set && mf_merge(set, s2, NULL, &st) == -1 && strstr(st.msg, "inputs"));
    mf_status_clear(&st);
    CHECK(mf_hash_file(s2, MF_SHA256, after, &st) == 0 && strcmp(before, after) == 0);
    /* the third shard too, and as safetensors output path */
    CHECK(set && mf_merge(set, at("a-00003-of-00003.gguf"), NULL, &st) == -1);
    mf_status_clear(&st);
    /* split of the set over its own names */
    CHECK(set && mf_gguf_split(set, at("a"), &(mf_split_opts){.struct_size = sizeof(mf_split_opts), .max_tensors = 1, .max_bytes = 0}, &nf, &st) == -1 && strstr(st.msg, "inputs"));
    mf_status_clear(&st);
    CHECK(mf_hash_file(s2, MF_SHA256, after, &st) == 0 && strcmp(before, after) == 0);
    /* convert and dequantize onto a shard of the set */
    mf_convert_st_opts o = {.struct_size = sizeof(mf_convert_st_opts)};
    CHECK(set && mf_convert_to_safetensors(set, s2, &o, NULL, &st) == -1);
    mf_status_clear(&st);
    CHECK(mf_dequantize_file(at("a-00001-of-00003.gguf"), s2, &(mf_dequantize_opts){.struct_size = sizeof(mf_dequantize_opts), .dtype = MF_F32}, NULL, &st) == -1);
    mf_status_clear(&st);
    CHECK(mf_hash_file(s2, MF_SHA256, after, &st) == 0 && strcmp(before, after) == 0);
    /* quantize over its imatrix file */
    write_text(at("imatrix.dat"), "not really");
    mf_quantize_opts q;
    mf_quantize_opts_init(&q, MF_FTYPE_Q8_0);
    q.imatrix_path = at("imatrix.dat");
    CHECK(mf_quantize_file(at("src.gguf"), at("imatrix.dat"), &q, NULL, NULL, NULL, &st) == -1);
    CHECK(file_is(at("imatrix.dat"), "not really"));
    mf_status_clear(&st);
    /* a directory input: its config.json is an input, a new file is not */
    CHECK(mkdir(at("hf"), 0755) == 0);
    write_text(at("hf/config.json"), "{}");
    CHECK(mf_output_check_path(at("hf"), at("hf/config.json"), &st) == -1);
    mf_status_clear(&st);
    CHECK(mf_output_check_path(at("hf"), at("hf/new.gguf"), &st) == 0);
    write_text(at("hf/model.gguf"), "x");
    CHECK(mf_output_check_path(at("hf"), at("hf/model.gguf"), &st) == 0);
    unlink(at("hf/config.json"));
    unlink(at("hf/model.gguf"));
    rmdir(at("hf"));
    mf_close(set);
    mf_close(src);
    mf_status_clear(&st);
}

/* ------------------------------------------------------- the CLI */

static int run_cli(const char *mfmt, const char *a, const char *b, const char *c)
{
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        dup2(null, 2);
        execl(mfmt, mfmt, a, b, c, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Bytes written so far to the file the process `pid` holds open in g_dir
 * (its O_TMPFILE shows as "g_dir/#inode (deleted)"); -1: none yet. */
static long long open_temp_size(pid_t pid)
{
    char fds[64];
    snprintf(fds, sizeof(fds), "/proc/%d/fd", (int)pid);
    DIR *d = opendir(fds);
    long long best = -1;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        char link[600], target[600];
        snprintf(link, sizeof(link), "%s/%s", fds, e->d_name);
        ssize_t n = readlink(link, target, sizeof(target) - 1);
        if (n <= 0)
            continue;
        target[n] = '\0';
        struct stat sb;
        if (strncmp(target, g_dir, strlen(g_dir)) == 0 && !strstr(target, "big.safetensors") &&
            stat(link, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > best)
            best = sb.st_size;
    }
    if (d)
        closedir(d);
    return best;
}

static void test_cli(void)
{
    const char *mfmt = getenv("MFMT");
    if (!mfmt) {
        printf("skip: CLI tests (MFMT not set)\n");
        return;
    }
    remove_all();
    /* merge a-00001 a-00002: refused, shard 2 intact */
    make_gguf(at("src.gguf"), 50);
    mf_model *src = open_or_null(at("src.gguf"));
    mf_status st;
    mf_status_init(&st);
    size_t nf = 0;
    CHECK(src && mf_gguf_split(src, at("a"), &(mf_split_opts){.struct_size = sizeof(mf_split_opts), .max_tensors = 1, .max_bytes = 0}, &nf, &st) == 0 && nf == 3);
    mf_close(src);
    char before[129], after[129];
    const char *s2 = at("a-00002-of-00003.gguf");
    CHECK(mf_hash_file(s2, MF_SHA256, before, &st) == 0);
    CHECK(run_cli(mfmt, "merge", at("a-00001-of-00003.gguf"), s2) != 0);
    CHECK(mf_hash_file(s2, MF_SHA256, after, &st) == 0 && strcmp(before, after) == 0);
    /* kill -9 of `mfmt convert` once 16 MB of 192 MB reached its output */
    static uint8_t data[3u << 20];
    mf_out_tensor t = {.name = "w", .dtype = MF_U8, .ndim = 1, .shape = {3u << 20}};
    mf_out_tensor many[64];
    char names[64][16];
    for (int i = 0; i < 64; i++) {
        snprintf(names[i], sizeof(names[i]), "w%d", i);
        many[i] = t;
        many[i].name = names[i];
    }
    CHECK(mf_safetensors_write(at("big.safetensors"), many, 64, NULL, 0, fill_bytes, data, &st) == 0);
    const char *out = at("out.safetensors");
    write_text(out, "old output");
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        dup2(null, 2);
        execl(mfmt, mfmt, "convert", at("big.safetensors"), out, (char *)NULL);
        _exit(127);
    }
    long long seen = -1;
    for (int i = 0; i < 20000 && seen < (16 << 20); i++) {
        seen = open_temp_size(pid);
        if (waitpid(pid, NULL, WNOHANG) == pid) {
            pid = -1;
            break;
        }
        usleep(200);
    }
    CHECKF(pid > 0 && seen >= (16 << 20), "convert ended before it could be killed (%lld bytes seen)", seen);
    if (pid > 0) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
    }
    CHECK(file_is(out, "old output"));
    CHECKF(count_temps() == 0, "kill -9 of mfmt convert left %d temporaries", count_temps());
    mf_status_clear(&st);
}

int main(void)
{
    snprintf(g_dir, sizeof(g_dir), "/tmp/mfmt-atomic-XXXXXX");
    if (!mkdtemp(g_dir)) {
        CHECK(0);
        return tl_report("atomic");
    }
    test_killed_writer(false);
    test_killed_writer(true);
    kill_single_at("write", false);
    kill_single_at("link", false);
    kill_single_at("write", true);
    kill_single_at("link", true);
    test_sweep_spares_the_living();
    test_split_killed();
    test_sharded_convert_killed();
    test_output_is_input();
    test_cli();
    remove_all();
    rmdir(g_dir);
    return tl_report("atomic");
}
