/* test_faults.c - fault injection as SQLite does it: every allocation and
 * every I/O call of the library, one at a time, fails (the Nth of a run;
 * N = 1, 2, ... until a run finishes without reaching N), through open +
 * inspect + hash, validate, convert, quantize and edit. Each injected
 * failure must give an error (rc -1, a status with a message), never a
 * crash; under ASan+UBSan also no leak; and leave nothing in the output
 * directory (no output, no temporary).
 *
 * The library is routed through one wrapper per call at link time (the
 * Makefile links this test with -Wl,--wrap=malloc,...; libmfmt.a's objects
 * then call __wrap_malloc etc. here), so lib/ keeps calling malloc, read,
 * ... as it is written; jansson's allocations are routed too
 * (json_set_alloc_funcs). Allocations inside other libraries (zlib,
 * OpenSSL) are not counted. Runs on fixtures in tests/data, so it needs no
 * ../shared.
 *
 * mf_open_fd is run the same way, on a descriptor of the file and of a pipe.
 *
 * A failure the library absorbs must give the same result as the run
 * without one (the output file's hash; for open + inspect, the tensors,
 * metadata, notes and verdict); anything else fails the test.
 * MF_FAULTS_TRACE=1 prints the call stack of each such failure
 * (backtrace_symbols_fd: resolve the +0x offsets with addr2line -f -i -e). */
#include "testlib.h"
#include "gguf_fixture.h"

#include <dirent.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------ the wrappers */

enum { KIND_ALLOC, KIND_IO };
static _Atomic long countdown = -1; /* the call that fails: 1 = the next one; -1: none */
static int armed_kind = -1;
static _Atomic long calls;          /* calls of armed_kind in this run */
static const char *failed_call;     /* the wrapped function that failed */
static bool trace;                  /* MF_FAULTS_TRACE set: keep the failing call's stack */
static void *failed_stack[16];
static int failed_depth;

/* true when this call is the one to fail */
static bool fail_call(int kind, const char *name)
{
    if (armed_kind != kind)
        return false;
    atomic_fetch_add(&calls, 1);
    if (atomic_fetch_sub(&countdown, 1) != 1)
        return false;
    failed_call = name;
    if (trace) /* backtrace allocates once (libgcc); disarmed meanwhile */
        armed_kind = -1, failed_depth = backtrace(failed_stack, 16), armed_kind = kind;
    return true;
}
#define fail_now(kind) fail_call(kind, __func__ + 7) /* __wrap_NAME */

void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
void *__wrap_malloc(size_t n) { return fail_now(KIND_ALLOC) ? (errno = ENOMEM, NULL) : __real_malloc(n); }
void *__wrap_calloc(size_t k, size_t n) { return fail_now(KIND_ALLOC) ? (errno = ENOMEM, NULL) : __real_calloc(k, n); }
void *__wrap_realloc(void *p, size_t n) { return fail_now(KIND_ALLOC) ? (errno = ENOMEM, NULL) : __real_realloc(p, n); }
char *__wrap_strdup(const char *s) { return fail_now(KIND_ALLOC) ? (errno = ENOMEM, NULL) : __real_strdup(s); }
char *__wrap_strndup(const char *s, size_t n) { return fail_now(KIND_ALLOC) ? (errno = ENOMEM, NULL) : __real_strndup(s, n); }
static void *json_malloc(size_t n) { return __wrap_malloc(n); }

int __real_open(const char *p, int fl, ...);
int __real_openat(int d, const char *p, int fl, ...);
ssize_t __real_read(int fd, void *b, size_t n);
ssize_t __real_pread(int fd, void *b, size_t n, off_t o);
ssize_t __real_write(int fd, const void *b, size_t n);
int __real_fsync(int fd);
int __real_rename(const char *a, const char *b);
int __real_renameat(int da, const char *a, int db, const char *b);
int __real_linkat(int da, const char *a, int db, const char *b, int fl);
void *__real_mmap(void *a, size_t n, int pr, int fl, int fd, off_t o);
ssize_t __real_copy_file_range(int a, loff_t *ao, int b, loff_t *bo, size_t n, unsigned fl);
FILE *__real_fopen(const char *p, const char *m);

static mode_t mode_arg(int fl, va_list ap)
{
    return (fl & O_CREAT) || (fl & O_TMPFILE) == O_TMPFILE ? (mode_t)va_arg(ap, int) : 0;
}
int __wrap_open(const char *p, int fl, ...)
{
    va_list ap;
    va_start(ap, fl);
    mode_t md = mode_arg(fl, ap);
    va_end(ap);
    return fail_now(KIND_IO) ? (errno = EIO, -1) : __real_open(p, fl, md);
}
int __wrap_openat(int d, const char *p, int fl, ...)
{
    va_list ap;
    va_start(ap, fl);
    mode_t md = mode_arg(fl, ap);
    va_end(ap);
    return fail_now(KIND_IO) ? (errno = EIO, -1) : __real_openat(d, p, fl, md);
}
ssize_t __wrap_read(int fd, void *b, size_t n) { return fail_now(KIND_IO) ? (errno = EIO, -1) : __real_read(fd, b, n); }
ssize_t __wrap_pread(int fd, void *b, size_t n, off_t o) { return fail_now(KIND_IO) ? (errno = EIO, -1) : __real_pread(fd, b, n, o); }
ssize_t __wrap_write(int fd, const void *b, size_t n) { return fail_now(KIND_IO) ? (errno = ENOSPC, -1) : __real_write(fd, b, n); }
int __wrap_fsync(int fd) { return fail_now(KIND_IO) ? (errno = EIO, -1) : __real_fsync(fd); }
int __wrap_rename(const char *a, const char *b) { return fail_now(KIND_IO) ? (errno = EIO, -1) : __real_rename(a, b); }
int __wrap_renameat(int da, const char *a, int db, const char *b) { return fail_now(KIND_IO) ? (errno = EIO, -1) : __real_renameat(da, a, db, b); }
int __wrap_linkat(int da, const char *a, int db, const char *b, int fl) { return fail_now(KIND_IO) ? (errno = EIO, -1) : __real_linkat(da, a, db, b, fl); }
void *__wrap_mmap(void *a, size_t n, int pr, int fl, int fd, off_t o) { return fail_now(KIND_IO) ? (errno = ENOMEM, MAP_FAILED) : __real_mmap(a, n, pr, fl, fd, o); }
ssize_t __wrap_copy_file_range(int a, loff_t *ao, int b, loff_t *bo, size_t n, unsigned fl) { return fail_now(KIND_IO) ? (errno = EIO, -1) : __real_copy_file_range(a, ao, b, bo, n, fl); }
FILE *__wrap_fopen(const char *p, const char *m) { return fail_now(KIND_IO) ? (errno = EIO, NULL) : __real_fopen(p, m); }

/* ------------------------------------------------------------ the operations */

static char outdir[256], out[512], gguf[512];
static char inspected[129]; /* open+inspect's result: the tensor-content hash */

/* Every operation: 0 or -1 with st, output (if any) at `out`. */
typedef int (*op_fn)(const char *in, mf_status *st);

static void digest_value(mf_hasher *h, const mf_value *v)
{
    mf_hasher_update(h, &v->type, sizeof(v->type));
    if (v->type == MF_V_STR) {
        mf_hasher_update(h, v->as.s.ptr, v->as.s.len);
    } else if (v->type == MF_V_ARR) {
        mf_hasher_update(h, &v->as.arr.n, sizeof(v->as.arr.n));
        for (size_t i = 0; i < v->as.arr.n; i++)
            digest_value(h, &v->as.arr.items[i]);
    } else if (v->type == MF_V_BOOL) {
        uint8_t b = v->as.b;
        mf_hasher_update(h, &b, 1);
    } else { /* the integer types fill u/i, the float types f: 8 bytes each */
        mf_hasher_update(h, &v->as, sizeof(v->as.u));
    }
}

/* What open + inspect shows: the tensor-content hash (names, dtypes, shapes,
 * bytes) and every metadata pair, note and the verdict, digested together
 * (hashed with the injection off: the test's own allocations do not count) */
static void digest_model(const mf_model *m, const char content[129], char hex[129])
{
    int kind = armed_kind;
    armed_kind = -1;
    mf_hasher *h = mf_hasher_new(MF_SHA256);
    mf_hasher_update(h, content, strlen(content));
    for (size_t i = 0; i < mf_model_meta_count(m); i++) {
        const mf_kv *kv = mf_model_meta_at(m, i);
        mf_hasher_update(h, kv->key, strlen(kv->key) + 1);
        digest_value(h, &kv->v);
    }
    for (size_t i = 0; i < mf_model_note_count(m); i++) {
        const char *note = mf_model_note_at(m, i);
        mf_hasher_update(h, note, strlen(note) + 1);
    }
    mf_verdict v = mf_model_verdict(m);
    mf_hasher_update(h, &v, sizeof(v));
    mf_hasher_final_hex(h, hex);
    mf_hasher_free(h);
    armed_kind = kind;
}

/* inspect: the digest of an open model into `inspected`; closes it. */
static int inspect_and_close(mf_model *m, mf_status *st)
{
    char hex[129];
    int rc = 0;
    if (mf_hash_tensor_content(m, MF_SHA256, hex, st) != 0)
        rc = -1;
    else
        digest_model(m, hex, inspected);
    mf_close(m);
    return rc;
}

static int op_open_inspect(const char *in, mf_status *st)
{
    mf_model *m = NULL;
    if (mf_open(in, NULL, &m, st) != 0)
        return -1;
    return inspect_and_close(m, st);
}

/* mf_open_fd + inspect, from a descriptor on the file (mapped) or on a pipe
 * that holds its bytes (read to the end; the fixtures fit a pipe's buffer).
 * The test's own I/O is done with the injection off. */
static int open_fd_inspect(const char *in, bool from_pipe, mf_status *st)
{
    int kind = armed_kind;
    armed_kind = -1;
    int fd = open(in, O_RDONLY | O_CLOEXEC);
    if (from_pipe && fd >= 0) {
        static uint8_t buf[60000];
        ssize_t n = read(fd, buf, sizeof(buf));
        close(fd);
        fd = -1;
        int p[2];
        if (n >= 0 && (size_t)n < sizeof(buf) && pipe(p) == 0) {
            if (write(p[1], buf, (size_t)n) == n)
                fd = p[0];
            else
                close(p[0]);
            close(p[1]);
        }
    }
    armed_kind = kind;
    if (fd < 0)
        return mf_status_fail(st, MF_ERR_IO, "%s: cannot set up the descriptor", in);
    mf_model *m = NULL;
    int rc = mf_open_fd(fd, strrchr(in, '/') + 1, NULL, &m, st);
    close(fd);
    return rc ? -1 : inspect_and_close(m, st);
}

static int op_open_fd_file(const char *in, mf_status *st)
{
    return open_fd_inspect(in, false, st);
}

static int op_open_fd_pipe(const char *in, mf_status *st)
{
    return open_fd_inspect(in, true, st);
}

static int op_validate(const char *in, mf_status *st)
{
    return mf_validate(in, st);
}

static int op_convert(const char *in, mf_status *st)
{
    mf_model *m = NULL;
    if (mf_open(in, NULL, &m, st) != 0)
        return -1;
    int rc = mf_convert_to_safetensors(m, out, NULL, NULL, st);
    mf_close(m);
    return rc;
}

static int op_quantize(const char *in, mf_status *st)
{
    mf_quantize_opts o;
    mf_quantize_opts_init(&o, MF_FTYPE_Q8_0);
    o.nthreads = 2;
    return mf_quantize_file(in, out, &o, NULL, NULL, NULL, st);
}

static int op_edit(const char *in, mf_status *st)
{
    mf_edit_op ops[2] = {{MF_EDIT_SET, "general.name", "faults"},
                         {MF_EDIT_RENAME_TENSOR, "blk.0.attn_q.weight", "blk.0.attn_k.weight"}};
    return mf_edit(in, out, ops, 2, NULL, NULL, st);
}

/* Names left in the output directory (each reported). */
static const char *last_msg = "";
static int leftovers(const char *what, long n)
{
    DIR *d = opendir(outdir);
    int k = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (k++ < 3)
            fprintf(stderr, "FAIL %s, failure %ld (%s): %s left behind (%s)\n", what, n, failed_call,
                    e->d_name, last_msg);
        char p[800];
        snprintf(p, sizeof(p), "%s/%s", outdir, e->d_name);
        unlink(p);
    }
    if (d)
        closedir(d);
    return k;
}

typedef struct totals {
    long injected, errors, clean, absorbed_same, absorbed_diff;
} totals;
static totals tot[2];

/* What a successful run produced: the output file's hash, or (no output)
 * the inspected hash. */
static void result_of(char hex[129])
{
    mf_status st;
    mf_status_init(&st);
    if (mf_hash_file(out, MF_SHA256, hex, &st) != 0)
        memcpy(hex, inspected, 129);
    mf_status_clear(&st);
    unlink(out);
}

/* Fails the 1st, 2nd, ... call of `kind` in `fn(in)` until a run ends
 * before reaching it (at most `cap` runs). A failure the library absorbs
 * (a fallback) must give the same result as the run without one. */
static void inject(const char *name, op_fn fn, const char *in, int kind, long cap)
{
    char want[129], got[129];
    mf_status st0;
    mf_status_init(&st0);
    inspected[0] = 0;
    int rc0 = fn(in, &st0);
    CHECKF(rc0 == 0, "%s %s: fails without a fault: %s", name, in, st0.msg);
    mf_status_clear(&st0);
    result_of(want);
    char what[256];
    long diff_here = 0;
    snprintf(what, sizeof(what), "%s %s (%s)", name, in, kind == KIND_ALLOC ? "allocation" : "I/O");
    long n;
    for (n = 1; n <= cap; n++) {
        mf_status st;
        mf_status_init(&st);
        atomic_store(&calls, 0);
        atomic_store(&countdown, n);
        inspected[0] = 0;
        armed_kind = kind;
        int rc = fn(in, &st);
        armed_kind = -1;
        long seen = atomic_load(&calls);
        bool hit = seen >= n;
        if (!hit) { /* the run needed fewer calls: every one has failed once */
            CHECKF(rc == 0, "%s: the run without a failure fails: %s", what, st.msg);
            unlink(out);
            CHECKF(leftovers(what, n) == 0, "%s: the run without a failure left files", what);
            mf_status_clear(&st);
            break;
        }
        tot[kind].injected++;
        /* a failure the library absorbs (a fallback: copy_file_range ->
         * write) may still succeed; else it must say so */
        if (rc != 0) {
            tot[kind].errors++;
            CHECKF(st.code != MF_OK && st.msg[0], "%s, failure %ld: rc -1 without a message (code %d)", what, n, (int)st.code);
        }
        last_msg = st.msg;
        if (rc != 0) {
            CHECKF(leftovers(what, n) == 0, "%s, failure %ld: files left", what, n);
        } else {
            result_of(got);
            if (!strcmp(got, want)) {
                tot[kind].absorbed_same++;
            } else { /* an out-of-memory path that dropped data instead of failing */
                tot[kind].absorbed_diff++;
                diff_here++;
                if (trace) {
                    fprintf(stderr, "TRACE %s, failure %ld (%s):\n", what, n, failed_call);
                    backtrace_symbols_fd(failed_stack, failed_depth, 2);
                }
            }
        }
        tot[kind].clean++;
        mf_status_clear(&st);
    }
    CHECKF(n <= cap, "%s: still failing after %ld injections (cap)", what, cap);
    CHECKF(diff_here == 0, "%s: %ld failures returned success with a different result (a path that "
           "drops data instead of failing; MF_FAULTS_TRACE=1 prints each call stack)", what, diff_here);
}

static int write_llama_gguf(void)
{
    static float w[2][64 * 64];
    uint64_t s = 7;
    for (int t = 0; t < 2; t++)
        for (int i = 0; i < 64 * 64; i++)
            w[t][i] = fx_rand(&s, 0.02f);
    fx_tensor ts[2] = {{"token_embd.weight", MF_F32, 2, {64, 64}, w[0], sizeof(w[0])},
                       {"blk.0.attn_q.weight", MF_F32, 2, {64, 64}, w[1], sizeof(w[1])}};
    mf_kv meta[2] = {fx_kv_str("general.architecture", "llama"), fx_kv_u32("llama.block_count", 1)};
    mf_status st;
    mf_status_init(&st);
    int rc = fx_write_gguf(gguf, ts, 2, meta, 2, &st);
    CHECKF(rc == 0, "write %s: %s", gguf, st.msg);
    mf_status_clear(&st);
    return rc;
}

int main(void)
{
    json_set_alloc_funcs(json_malloc, free);
    trace = getenv("MF_FAULTS_TRACE") != NULL;
    if (!tl_make_tmpdir(outdir, sizeof(outdir), "faults"))
        return 1;
    char indir[300];
    snprintf(indir, sizeof(indir), "%s.in", outdir);
    CHECK(mkdir(indir, 0700) == 0);
    snprintf(out, sizeof(out), "%s/out", outdir);
    snprintf(gguf, sizeof(gguf), "%s/llama.gguf", indir);
    if (write_llama_gguf() != 0)
        return tl_report("faults");
    static const char *const inputs[] = {
        "tests/data/api/gguf/dtypes.gguf",          "tests/data/api/safetensors/all_dtypes.safetensors",
        "tests/data/api/pytorch/state_dict.pt",     "tests/data/api/numpy/compressed.npz",
        "tests/data/api/hdf5/chunked.h5",           "tests/data/api/onnx/mlp_raw_data.onnx",
        "tests/data/api/pytorch/views.pt",          "tests/data/api/hdf5/shuffle_gzip.h5",
        "tests/data/api/onnx/external_data/model.onnx", /* two files */
        "tests/data/scan_benign/torch_state_dict_legacy_p2.pt", /* torch's legacy pickles */
        "tests/data/prequant/fp8-block",            /* an HF directory (FP8 blocks, logical) */
    };
    const long cap = 20000;
    for (int kind = 0; kind < 2; kind++) {
        for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
            inject("open+inspect", op_open_inspect, inputs[i], kind, cap);
            inject("validate", op_validate, inputs[i], kind, cap);
            if (i < 8) { /* one file each: mf_open_fd */
                inject("open_fd(file)+inspect", op_open_fd_file, inputs[i], kind, cap);
                inject("open_fd(pipe)+inspect", op_open_fd_pipe, inputs[i], kind, cap);
            }
            if (i > 0) /* dtypes.gguf holds ggml block types safetensors cannot */
                inject("convert", op_convert, inputs[i], kind, cap);
        }
        inject("quantize", op_quantize, gguf, kind, cap);
        inject("edit", op_edit, gguf, kind, cap);
        inject("convert", op_convert, gguf, kind, cap);
    }
    for (int k = 0; k < 2; k++)
        printf("faults: %ld %s failures injected: %ld gave an error (nothing left behind), %ld were "
               "absorbed with the same result, %ld absorbed with a different one\n",
               tot[k].injected, k == KIND_ALLOC ? "allocation" : "I/O", tot[k].errors, tot[k].absorbed_same,
               tot[k].absorbed_diff);
    CHECK(tot[KIND_ALLOC].injected > 500 && tot[KIND_IO].injected > 50);
    unlink(gguf);
    rmdir(indir);
    CHECK(tl_remove_tmpdir(outdir));
    return tl_report("faults");
}
