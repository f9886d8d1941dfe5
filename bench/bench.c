/* bench.c - mfmt's benchmarks, one compact table (see bench/README.md).
 *
 *   bench DIR MFMT      DIR: scratch space (build/bench), MFMT: the CLI
 *
 * 1. memcpy bandwidth: the ceiling for anything that touches bytes.
 * 2. open cost is O(header): mf_open on a small file, on a small file with
 *    thousands of tensors, and on multi-GB files (sparse: real headers, holes
 *    for data) with the same tensors, for safetensors and GGUF.
 * 3. hash throughput on a 1 GiB file of pseudo-random bytes, page cache
 *    warm: cat > /dev/null and openssl dgst -sha256 as references,
 *    mf_hash_file and the `mfmt hash` command (whole file by default,
 *    --content, --tensors), and `mfmt hash` against openssl in alternating
 *    pairs (the ratio that counts on a shared machine).
 * Big files are deleted at the end. Best of several runs for throughput,
 * median for open times. */
#include <mfmt.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MIB (1024.0 * 1024.0)
#define GIB (1024.0 * MIB)

static const char *dir, *mfmt_bin;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what)
{
    fprintf(stderr, "bench: %s: %s\n", what, strerror(errno));
    exit(1);
}

static char *path_in_dir(const char *name)
{
    static char buf[8][512];
    static int k;
    char *p = buf[k++ % 8];
    snprintf(p, 512, "%s/%s", dir, name);
    return p;
}

static void fmt_size(char *b, size_t n, double bytes)
{
    if (bytes >= GIB)
        snprintf(b, n, "%.1f GiB", bytes / GIB);
    else if (bytes >= MIB)
        snprintf(b, n, "%.1f MiB", bytes / MIB);
    else
        snprintf(b, n, "%.1f KiB", bytes / 1024.0);
}

/* ------------------------------------------------------------- memcpy */

static double bench_memcpy(void)
{
    size_t n = 256u << 20;
    char *a = malloc(n), *b = malloc(n);
    if (!a || !b)
        die("malloc");
    memset(a, 1, n);
    memset(b, 2, n); /* fault the pages in before timing */
    double best = 1e9;
    for (int r = 0; r < 5; r++) {
        double t = now();
        memcpy(b, a, n);
        t = now() - t;
        if (t < best)
            best = t;
        a[r] = b[n - 1 - (size_t)r]; /* keep the copies observable */
    }
    free(a);
    free(b);
    return (double)n / best;
}

/* How many cores this run really gets: the same CPU-bound work on one
 * thread, then on two at once (2.0: two free cores; 1.0: one). */
static void *spin(void *arg)
{
    volatile uint64_t x = 0;
    for (uint64_t i = 0; i < 200000000ull; i++)
        x += i;
    return arg;
}

static double bench_parallelism(void)
{
    double t = now();
    spin(NULL);
    double one = now() - t;
    pthread_t a, b;
    t = now();
    if (pthread_create(&a, NULL, spin, NULL) != 0)
        return 1.0;
    if (pthread_create(&b, NULL, spin, NULL) != 0) {
        pthread_join(a, NULL);
        return 1.0;
    }
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    return 2 * one / (now() - t);
}

/* ------------------------------------------------- generated model files */

typedef struct spec {
    int n_tensors;
    int rows, cols; /* each tensor F16 [rows, cols] */
} spec;

static uint64_t tensor_bytes(const spec *s)
{
    return (uint64_t)s->rows * (uint64_t)s->cols * 2;
}

static void write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t k = write(fd, c, n);
        if (k <= 0)
            die("write");
        c += k;
        n -= (size_t)k;
    }
}

/* A safetensors file: real header, data left as a hole (ftruncate). */
static void gen_safetensors(const char *path, const spec *s)
{
    size_t cap = (size_t)s->n_tensors * 128 + 256, len = 0;
    char *h = malloc(cap);
    if (!h)
        die("malloc");
    len += (size_t)snprintf(h + len, cap - len, "{\"__metadata__\":{\"format\":\"pt\"}");
    uint64_t off = 0, tb = tensor_bytes(s);
    for (int i = 0; i < s->n_tensors; i++, off += tb)
        len += (size_t)snprintf(h + len, cap - len,
                                ",\"model.layers.%d.weight\":{\"dtype\":\"F16\",\"shape\":[%d,%d],"
                                "\"data_offsets\":[%llu,%llu]}",
                                i, s->rows, s->cols, (unsigned long long)off,
                                (unsigned long long)(off + tb));
    h[len++] = '}';
    while (len % 8) /* padded with spaces, as the reference writer does */
        h[len++] = ' ';
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        die(path);
    uint8_t n8[8];
    for (int i = 0; i < 8; i++)
        n8[i] = (uint8_t)((uint64_t)len >> (8 * i));
    write_all(fd, n8, 8);
    write_all(fd, h, len);
    if (ftruncate(fd, (off_t)(8 + len + off)) != 0)
        die("ftruncate");
    close(fd);
    free(h);
}

static size_t put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
    return 4;
}

static size_t put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
    return 8;
}

static size_t put_str(uint8_t *p, const char *s)
{
    size_t n = strlen(s);
    put_u64(p, n);
    memcpy(p + 8, s, n);
    return 8 + n;
}

/* A GGUF v3 file (ggml/docs/gguf.md): header, one key, tensor infos, data
 * at the 32-byte aligned start, left as a hole. */
static void gen_gguf(const char *path, const spec *s)
{
    size_t cap = (size_t)s->n_tensors * 96 + 256, n = 0;
    uint8_t *b = calloc(1, cap);
    if (!b)
        die("malloc");
    memcpy(b, "GGUF", 4);
    n = 4;
    n += put_u32(b + n, 3);
    n += put_u64(b + n, (uint64_t)s->n_tensors);
    n += put_u64(b + n, 1);
    n += put_str(b + n, "general.architecture");
    n += put_u32(b + n, 8); /* string */
    n += put_str(b + n, "llama");
    uint64_t off = 0, tb = tensor_bytes(s);
    for (int i = 0; i < s->n_tensors; i++, off += tb) {
        char name[64];
        snprintf(name, sizeof(name), "blk.%d.ffn_down.weight", i);
        n += put_str(b + n, name);
        n += put_u32(b + n, 2);
        n += put_u64(b + n, (uint64_t)s->cols); /* ne[0]: fastest */
        n += put_u64(b + n, (uint64_t)s->rows);
        n += put_u32(b + n, 1); /* GGML_TYPE_F16 */
        n += put_u64(b + n, off);
    }
    size_t data_start = (n + 31) & ~(size_t)31;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        die(path);
    write_all(fd, b, data_start);
    if (ftruncate(fd, (off_t)(data_start + off)) != 0)
        die("ftruncate");
    close(fd);
    free(b);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median time of mf_open + mf_close over `runs` runs. */
static double time_open(const char *path, int runs, uint64_t *header_bytes, size_t *n_tensors)
{
    double t[64];
    for (int r = 0; r < runs; r++) {
        mf_status st;
        mf_status_init(&st);
        mf_model *m;
        double t0 = now();
        if (mf_open(path, NULL, &m, &st) != 0) {
            fprintf(stderr, "bench: %s\n", st.msg);
            exit(1);
        }
        *header_bytes = mf_model_header_bytes(m);
        *n_tensors = mf_model_tensor_count(m);
        mf_close(m);
        t[r] = now() - t0;
        mf_status_clear(&st);
    }
    qsort(t, (size_t)runs, sizeof(double), cmp_double);
    return t[runs / 2];
}

static double file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (double)sb.st_size : 0;
}

static void open_row(const char *label, const char *path, double *out)
{
    uint64_t hb;
    size_t nt;
    double t = time_open(path, 21, &hb, &nt);
    char sz[32], hs[32];
    fmt_size(sz, sizeof(sz), file_size(path));
    fmt_size(hs, sizeof(hs), (double)hb);
    printf("  %-26s %10s %8zu %12.3f ms %12s\n", label, sz, nt, t * 1e3, hs);
    if (out)
        *out = t;
}

/* ------------------------------------------------ external commands */

typedef struct run_result {
    double secs;
    long maxrss_kb;
    int status;
} run_result;

/* Runs argv with stdout to /dev/null; wall time and peak RSS of the child. */
static run_result run_cmd(char *const argv[], const char *stdin_path)
{
    run_result r = {0};
    double t0 = now();
    pid_t pid = fork();
    if (pid < 0)
        die("fork");
    if (pid == 0) {
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, 1);
        if (stdin_path) {
            int in = open(stdin_path, O_RDONLY);
            if (in < 0)
                _exit(127);
            dup2(in, 0);
        }
        execvp(argv[0], argv);
        _exit(127);
    }
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0)
        die("wait4");
    r.secs = now() - t0;
    r.maxrss_kb = ru.ru_maxrss;
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
    return r;
}

static run_result best_of(int n, char *const argv[], const char *stdin_path)
{
    run_result best = {.secs = 1e9};
    for (int i = 0; i < n; i++) {
        run_result r = run_cmd(argv, stdin_path);
        if (r.status != 0) {
            fprintf(stderr, "bench: %s exited %d\n", argv[0], r.status);
            return r;
        }
        if (r.secs < best.secs)
            best = r;
    }
    return best;
}

/* Runs a and b alternately n times (n <= 15): the median of the per-pair
 * ratios t(a) / t(b), so both see the same load; *ta / *tb get the medians. */
static double paired_ratio(int n, char *const a[], char *const b[], run_result *ta, run_result *tb)
{
    double ra[15], rb[15], q[15];
    long rss_a = 0, rss_b = 0;
    for (int i = 0; i < n; i++) {
        run_result x = run_cmd(a, NULL), y = run_cmd(b, NULL);
        if (x.status || y.status) {
            fprintf(stderr, "bench: %s / %s failed\n", a[0], b[0]);
            exit(1);
        }
        ra[i] = x.secs, rb[i] = y.secs, q[i] = x.secs / y.secs;
        rss_a = x.maxrss_kb > rss_a ? x.maxrss_kb : rss_a;
        rss_b = y.maxrss_kb > rss_b ? y.maxrss_kb : rss_b;
    }
    qsort(ra, (size_t)n, sizeof(double), cmp_double);
    qsort(rb, (size_t)n, sizeof(double), cmp_double);
    qsort(q, (size_t)n, sizeof(double), cmp_double);
    *ta = (run_result){ra[n / 2], rss_a, 0};
    *tb = (run_result){rb[n / 2], rss_b, 0};
    return q[n / 2];
}

static bool have(const char *prog)
{
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", prog);
    return system(cmd) == 0;
}

/* ----------------------------------------------------------- hashing */

/* 1 GiB of xorshift bytes as one U8 safetensors file (64 tensors). */
static void gen_random_safetensors(const char *path, uint64_t total)
{
    const int nt = 64;
    uint64_t per = total / nt;
    char h[8192];
    size_t len = 0;
    h[len++] = '{';
    for (int i = 0; i < nt; i++)
        len += (size_t)snprintf(h + len, sizeof(h) - len,
                                "%s\"w%02d\":{\"dtype\":\"U8\",\"shape\":[%llu],\"data_offsets\":[%llu,%llu]}",
                                i ? "," : "", i, (unsigned long long)per,
                                (unsigned long long)(per * (uint64_t)i),
                                (unsigned long long)(per * (uint64_t)(i + 1)));
    h[len++] = '}';
    while (len % 8)
        h[len++] = ' ';
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        die(path);
    uint8_t n8[8];
    for (int i = 0; i < 8; i++)
        n8[i] = (uint8_t)((uint64_t)len >> (8 * i));
    write_all(fd, n8, 8);
    write_all(fd, h, len);
    size_t chunk = 4u << 20;
    uint64_t *buf = malloc(chunk);
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (uint64_t done = 0; done < per * nt; done += chunk) {
        for (size_t i = 0; i < chunk / 8; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            buf[i] = x;
        }
        size_t k = per * nt - done < chunk ? (size_t)(per * nt - done) : chunk;
        write_all(fd, buf, k);
    }
    free(buf);
    close(fd);
}

static double time_hash_file(const char *path, mf_hash_algo a, int runs)
{
    double best = 1e9;
    for (int r = 0; r < runs; r++) {
        char hex[129];
        mf_status st;
        mf_status_init(&st);
        double t = now();
        if (mf_hash_file(path, a, hex, &st) != 0) {
            fprintf(stderr, "bench: %s\n", st.msg);
            exit(1);
        }
        t = now() - t;
        if (t < best)
            best = t;
        mf_status_clear(&st);
    }
    return best;
}

static void hash_row(const char *label, double secs, double bytes, double ref, long rss_kb)
{
    printf("  %-38s %7.3f s %7.2f GB/s", label, secs, bytes / secs / 1e9);
    if (ref > 0)
        printf("  %5.2f x openssl", ref / secs);
    if (rss_kb > 0)
        printf("  rss %ld MB", rss_kb / 1024);
    printf("\n");
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: bench DIR MFMT\n");
        return 2;
    }
    dir = argv[1];
    mfmt_bin = argv[2];
    mkdir(dir, 0755);
    double t_start = now();
    printf("mfmt bench: %ld CPUs online; timings are wall clock on a shared machine\n\n",
           sysconf(_SC_NPROCESSORS_ONLN));

    printf("memory bandwidth\n");
    double bw = bench_memcpy();
    printf("  %-38s %7.2f GB/s\n", "memcpy 256 MiB (best of 5)", bw / 1e9);
    printf("  %-38s %7.2f x (2.0: two free cores)\n\n", "two threads vs one (CPU-bound)",
           bench_parallelism());

    /* ----- open is O(header) */
    const spec small = {1, 16, 64}, many_small = {4096, 1, 16}, big = {4096, 512, 1024};
    gen_safetensors(path_in_dir("small.safetensors"), &small);
    gen_safetensors(path_in_dir("many-small.safetensors"), &many_small);
    gen_safetensors(path_in_dir("big.safetensors"), &big);
    gen_gguf(path_in_dir("small.gguf"), &small);
    gen_gguf(path_in_dir("many-small.gguf"), &many_small);
    gen_gguf(path_in_dir("big.gguf"), &big);
    printf("open cost is O(header): mf_open + mf_close, median of 21\n");
    printf("  %-26s %10s %8s %15s %12s\n", "file", "size", "tensors", "time", "header read");
    double st_small, st_many, st_big, gg_small, gg_many, gg_big;
    open_row("small.safetensors", path_in_dir("small.safetensors"), &st_small);
    open_row("many-small.safetensors", path_in_dir("many-small.safetensors"), &st_many);
    open_row("big.safetensors", path_in_dir("big.safetensors"), &st_big);
    open_row("small.gguf", path_in_dir("small.gguf"), &gg_small);
    open_row("many-small.gguf", path_in_dir("many-small.gguf"), &gg_many);
    open_row("big.gguf", path_in_dir("big.gguf"), &gg_big);
    printf("  big / many-small (same header, %.0fx the bytes): safetensors %.2f, gguf %.2f\n",
           file_size(path_in_dir("big.gguf")) / file_size(path_in_dir("many-small.gguf")),
           st_big / st_many, gg_big / gg_many);
    char *insp_big[] = {(char *)mfmt_bin, "inspect", path_in_dir("big.gguf"), NULL};
    char *insp_small[] = {(char *)mfmt_bin, "inspect", path_in_dir("small.gguf"), NULL};
    run_result ib = best_of(5, insp_big, NULL), is = best_of(5, insp_small, NULL);
    printf("  %-38s %7.1f ms  rss %ld MB\n", "mfmt inspect big.gguf (process)", ib.secs * 1e3,
           ib.maxrss_kb / 1024);
    printf("  %-38s %7.1f ms  rss %ld MB\n\n", "mfmt inspect small.gguf (process)",
           is.secs * 1e3, is.maxrss_kb / 1024);
    unlink(path_in_dir("big.safetensors"));
    unlink(path_in_dir("big.gguf"));

    /* ----- hash throughput */
    const char *hf = path_in_dir("hash-1g.safetensors");
    gen_random_safetensors(hf, 1ull << 30);
    double bytes = file_size(hf);
    char szs[32];
    fmt_size(szs, sizeof(szs), bytes);
    printf("hash throughput: %s of pseudo-random bytes, page cache warm, best of 3\n", szs);
    char *cat[] = {"cat", NULL};
    run_result rc = best_of(3, cat, hf);
    hash_row("cat > /dev/null (read)", rc.secs, bytes, 0, 0);
    double ossl = 0;
    char *os[] = {"openssl", "dgst", "-sha256", (char *)hf, NULL};
    const bool have_ossl = have("openssl");
    if (have_ossl) {
        run_result ro = best_of(3, os, NULL);
        ossl = ro.secs;
        hash_row("openssl dgst -sha256", ro.secs, bytes, ossl, ro.maxrss_kb);
    } else {
        printf("  openssl not found: no reference row\n");
    }
    double hs = time_hash_file(hf, MF_SHA256, 3);
    hash_row("mf_hash_file sha256", hs, bytes, ossl, 0);
    char *mh[] = {(char *)mfmt_bin, "hash", (char *)hf, NULL};
    run_result rm = best_of(3, mh, NULL);
    hash_row("mfmt hash (whole file: the default)", rm.secs, bytes, ossl, rm.maxrss_kb);
    char *mhc[] = {(char *)mfmt_bin, "hash", "--content", (char *)hf, NULL};
    run_result rmc = best_of(3, mhc, NULL);
    hash_row("mfmt hash --content (+ tensor content)", rmc.secs, bytes, ossl, rmc.maxrss_kb);
    char *mht[] = {(char *)mfmt_bin, "hash", "--tensors", (char *)hf, NULL};
    run_result rmt = best_of(3, mht, NULL);
    hash_row("mfmt hash --tensors", rmt.secs, bytes, ossl, rmt.maxrss_kb);
    hash_row("mf_hash_file xxh64", time_hash_file(hf, MF_XXH64, 3), bytes, 0, 0);
    hash_row("mf_hash_file xxh3", time_hash_file(hf, MF_XXH3, 3), bytes, 0, 0);
    if (have_ossl) {
        printf("  mf_hash_file / openssl: %.2f (goal >= 0.90: %s)\n", ossl / hs,
               ossl / hs >= 0.90 ? "met" : "NOT MET");
        run_result pm, po;
        double q = paired_ratio(5, os, mh, &po, &pm);
        printf("  mfmt hash vs openssl, 5 alternating pairs: median speed ratio %.2f "
               "(goal >= 0.90: %s; medians %.3f s vs %.3f s)\n",
               q, q >= 0.90 ? "met" : "NOT MET", pm.secs, po.secs);
    }
    if (!getenv("MFMT_BENCH_KEEP")) unlink(hf);

    /* ----- hostile inputs (issue 10): bounded work, never a hang */
    printf("\nhostile inputs: one run each, wall time and peak RSS\n");
    spec many = {200000, 1, 2};
    const char *mf = path_in_dir("200k-tensors.safetensors");
    gen_safetensors(mf, &many);
    char *dm[] = {(char *)mfmt_bin, "diff", (char *)mf, (char *)mf, NULL};
    run_result rd = run_cmd(dm, NULL);
    printf("  %-38s %7.2f s  rss %ld MB  exit %d\n", "mfmt diff 200k tensors, itself", rd.secs,
           rd.maxrss_kb / 1024, rd.status);
    char *im[] = {(char *)mfmt_bin, "inspect", (char *)mf, NULL};
    run_result ri = run_cmd(im, NULL);
    printf("  %-38s %7.2f s  rss %ld MB  (the open alone)\n", "mfmt inspect 200k tensors",
           ri.secs, ri.maxrss_kb / 1024);
    unlink(mf);
    const char *huge = "../tests/data/hdf5/huge_fill.h5"; /* make -C bench: cwd bench/ */
    if (access(huge, R_OK) == 0) {
        char *hh[] = {(char *)mfmt_bin, "hash", (char *)huge, NULL};
        run_result rh = run_cmd(hh, NULL);
        printf("  %-38s %7.2f s  rss %ld MB  exit %d (refused)\n",
               "mfmt hash huge_fill.h5 (4 TiB of fill)", rh.secs, rh.maxrss_kb / 1024, rh.status);
    }
    printf("\nbench took %.0f s\n", now() - t_start);
    return 0;
}
