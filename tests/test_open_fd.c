/* test_open_fd.c - mf_open_fd gives what mf_open gives for the same bytes:
 * every single-file fixture of tests/data/api and tests/data/scan_benign
 * (format, tensor content hash, metadata, notes, verdict) opened from
 *  - a regular file at position 0, and after a prefix of other bytes with
 *    the fd at the model's first byte (an odd offset and a page-aligned
 *    one: np.load and torch.load read a file object from where it stands),
 *    the position left where it was;
 *  - a pipe (a thread writes the bytes; the reader reads to the end), and a
 *    pipe whose first bytes the caller has read already.
 * Also: the fd may be closed once open returns (the tensors still read);
 * a model spanning several files fails as from memory; a directory, a bad
 * fd and an empty pipe fail with a message. */
#include "testlib.h"
#include "model_desc.h"
#include <mfmt.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[] = "/tmp/mfmt_open_fd_XXXXXX";
static int compared;

/* A file of `pad` bytes of 0xA5 followed by b; an fd on it at byte pad. */
static int file_at(const uint8_t *b, size_t n, size_t pad)
{
    char p[256];
    snprintf(p, sizeof(p), "%s/f", tmpdir);
    int fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        return -1;
    uint8_t junk[8192];
    memset(junk, 0xA5, sizeof(junk));
    bool ok = pad <= sizeof(junk) && write(fd, junk, pad) == (ssize_t)pad &&
              (n == 0 || write(fd, b, n) == (ssize_t)n) && lseek(fd, (off_t)pad, SEEK_SET) == (off_t)pad;
    unlink(p); /* the fd keeps it */
    if (!ok) {
        close(fd);
        return -1;
    }
    return fd;
}

typedef struct feed {
    int fd;
    const uint8_t *b;
    size_t n;
} feed;

static void *feed_pipe(void *arg)
{
    feed *f = arg;
    for (size_t off = 0; off < f->n;) {
        ssize_t k = write(f->fd, f->b + off, f->n - off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break; /* the reader gave up: it says so */
        off += (size_t)k;
    }
    close(f->fd);
    return NULL;
}

/* Opens b (n bytes, with `skip` bytes before it that the caller reads off
 * the pipe first) from a pipe fed by a thread. */
static int open_pipe_opts(const uint8_t *b, size_t n, size_t skip, const char *name,
                          const mf_open_opts *o, mf_model **m, mf_status *st);

static int open_pipe(const uint8_t *b, size_t n, size_t skip, const char *name, mf_model **m,
                     mf_status *st)
{
    return open_pipe_opts(b, n, skip, name, NULL, m, st);
}

static int open_pipe_opts(const uint8_t *b, size_t n, size_t skip, const char *name,
                          const mf_open_opts *o, mf_model **m, mf_status *st)
{
    int p[2];
    if (pipe(p) != 0)
        return -2;
    uint8_t *all = malloc(n + skip + 1);
    memset(all, 0x5A, skip);
    if (n)
        memcpy(all + skip, b, n);
    feed f = {p[1], all, n + skip};
    pthread_t t;
    pthread_create(&t, NULL, feed_pipe, &f);
    size_t got = 0;
    uint8_t sink[64];
    while (got < skip) {
        ssize_t k = read(p[0], sink, skip - got < sizeof(sink) ? skip - got : sizeof(sink));
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    int rc = mf_open_fd(p[0], name, o, m, st);
    close(p[0]); /* the writer, if it is still writing, fails and stops */
    pthread_join(t, NULL);
    free(all);
    return rc;
}

/* Compares one way of opening with the path's description. */
static void same(const char *how, const char *path, int ra, const char *da, const mf_status *sa,
                 int rb, mf_model *b, const mf_status *sb)
{
    CHECKF(ra == rb, "%s (%s): mf_open %d (%s), mf_open_fd %d (%s)", path, how, ra, sa->msg, rb,
           sb->msg);
    if (ra == 0 && rb == 0) {
        static char db[1 << 16];
        md_describe(b, db, sizeof(db));
        CHECKF(strcmp(da, db) == 0, "%s (%s): by path %s\n  by fd %s", path, how, da, db);
        compared++;
    } else if (ra != 0 && rb != 0) {
        CHECKF(sa->code == sb->code, "%s (%s): codes %s / %s", path, how, mf_code_name(sa->code),
               mf_code_name(sb->code));
    }
}

static void same_as_path(const char *path)
{
    uint8_t *buf;
    size_t len;
    if (!md_read_all(path, &buf, &len)) {
        CHECKF(false, "cannot read %s", path);
        return;
    }
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    mf_model *a = NULL;
    mf_status sa;
    mf_status_init(&sa);
    int ra = mf_open(path, NULL, &a, &sa);
    static char da[1 << 16];
    if (ra == 0)
        md_describe(a, da, sizeof(da));
    static const size_t pads[] = {0, 1001, 8192};
    for (size_t i = 0; i < sizeof(pads) / sizeof(pads[0]); i++) {
        int fd = file_at(buf, len, pads[i]);
        CHECKF(fd >= 0, "%s: cannot write the temporary file", path);
        if (fd < 0)
            continue;
        mf_model *b = NULL;
        mf_status sb;
        mf_status_init(&sb);
        int rb = mf_open_fd(fd, base, NULL, &b, &sb);
        char how[64];
        snprintf(how, sizeof(how), "regular file at byte %zu", pads[i]);
        CHECKF(lseek(fd, 0, SEEK_CUR) == (off_t)pads[i], "%s (%s): position moved", path, how);
        close(fd); /* the model keeps its mapping */
        same(how, path, ra, da, &sa, rb, b, &sb);
        if (rb == 0)
            CHECKF(strncmp(mf_model_path(b), "mem:", 4) == 0 && strstr(mf_model_path(b), base),
                   "%s: named %s", path, mf_model_path(b));
        mf_close(b);
        mf_status_clear(&sb);
    }
    static const size_t skips[] = {0, 77};
    for (size_t i = 0; i < sizeof(skips) / sizeof(skips[0]); i++) {
        mf_model *b = NULL;
        mf_status sb;
        mf_status_init(&sb);
        int rb = open_pipe(buf, len, skips[i], base, &b, &sb);
        char how[64];
        snprintf(how, sizeof(how), "pipe, %zu bytes read before", skips[i]);
        same(how, path, ra, da, &sa, rb, b, &sb);
        mf_close(b);
        mf_status_clear(&sb);
    }
    mf_close(a);
    mf_status_clear(&sa);
    free(buf);
}

static void each_file(const char *dir)
{
    DIR *d = opendir(dir);
    CHECKF(d != NULL, "cannot list %s", dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char p[1024];
        snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
        struct stat sb;
        if (stat(p, &sb) != 0)
            continue;
        if (S_ISDIR(sb.st_mode)) {
            if (strcmp(e->d_name, "external_data") != 0) /* several files: below */
                each_file(p);
        } else if (S_ISREG(sb.st_mode) && !strstr(e->d_name, ".md") && !strstr(e->d_name, ".py") &&
                   !strstr(e->d_name, ".json")) {
            same_as_path(p);
        }
    }
    if (d)
        closedir(d);
}

/* After close(fd), the tensors still read: a GGUF at byte 1001 of its file. */
static void reads_after_close(void)
{
    uint8_t *buf;
    size_t len;
    CHECK(md_read_all("tests/data/api/gguf/dtypes.gguf", &buf, &len));
    mf_model *a = NULL, *b = NULL;
    CHECK(mf_open("tests/data/api/gguf/dtypes.gguf", NULL, &a, NULL) == 0);
    int fd = file_at(buf, len, 1001);
    CHECK(fd >= 0 && mf_open_fd(fd, "dtypes.gguf", NULL, &b, NULL) == 0);
    if (fd >= 0)
        close(fd);
    size_t n = 0;
    for (size_t i = 0; a && b && i < mf_model_tensor_count(a); i++) {
        const mf_tensor *ta = mf_model_tensor_at(a, i), *tb = mf_model_tensor_at(b, i);
        uint64_t bytes = 0;
        if (mf_tensor_read_size(ta, MF_DTYPE_INVALID, UINT64_MAX, &bytes, NULL) != 0)
            continue;
        uint8_t *x = malloc(bytes + 1), *y = malloc(bytes + 1);
        int ra = mf_tensor_read(a, ta, MF_DTYPE_INVALID, 0, UINT64_MAX, x, bytes, NULL);
        int rb = mf_tensor_read(b, tb, MF_DTYPE_INVALID, 0, UINT64_MAX, y, bytes, NULL);
        CHECKF(ra == 0 && rb == 0 && memcmp(x, y, bytes) == 0, "tensor %zu differs after close(fd)", i);
        n++;
        free(x);
        free(y);
    }
    CHECKF(n > 3, "only %zu tensors read", n);
    mf_close(a);
    mf_close(b);
    free(buf);
}

static void failures(void)
{
    mf_model *m = NULL;
    mf_status st;
    mf_status_init(&st);
    /* ONNX with external data: the weights file is looked for beside the
     * bytes ("mem:ID/weights.bin"), where there is none */
    uint8_t *buf;
    size_t len;
    CHECK(md_read_all("tests/data/api/onnx/external_data/model.onnx", &buf, &len));
    int fd = file_at(buf, len, 0);
    CHECK(mf_open_fd(fd, "model.onnx", NULL, &m, &st) == -1 && m == NULL);
    CHECKF(strstr(st.msg, "weights.bin") && strstr(st.msg, "mem:"), "external data: %s", st.msg);
    mf_status_clear(&st);
    close(fd);
    free(buf);
    /* a directory */
    fd = open(tmpdir, O_RDONLY | O_DIRECTORY);
    CHECK(mf_open_fd(fd, NULL, NULL, &m, &st) == -1 && st.code == MF_ERR_USAGE);
    CHECKF(strstr(st.msg, "directory") != NULL, "%s", st.msg);
    mf_status_clear(&st);
    close(fd);
    /* a closed fd, a negative one, no out, bad options */
    CHECK(mf_open_fd(fd, "gone", NULL, &m, &st) == -1 && st.code == MF_ERR_IO);
    CHECKF(strstr(st.msg, "gone") && strstr(st.msg, "Bad file descriptor"), "%s", st.msg);
    mf_status_clear(&st);
    CHECK(mf_open_fd(-1, NULL, NULL, &m, &st) == -1 && st.code == MF_ERR_USAGE);
    mf_status_clear(&st);
    CHECK(mf_open_fd(0, NULL, NULL, NULL, NULL) == -1);
    mf_open_opts bad = {0};
    fd = file_at((const uint8_t *)"GGUF", 4, 0);
    CHECK(mf_open_fd(fd, NULL, &bad, &m, &st) == -1 && st.code == MF_ERR_USAGE);
    mf_status_clear(&st);
    /* nothing after the position: an empty model file, refused by name */
    CHECK(lseek(fd, 0, SEEK_END) == 4);
    CHECK(mf_open_fd(fd, "at-end", NULL, &m, &st) == -1 && m == NULL);
    CHECKF(strstr(st.msg, "at-end") != NULL, "%s", st.msg);
    mf_status_clear(&st);
    close(fd);
    /* an empty pipe */
    CHECK(open_pipe(NULL, 0, 0, "empty", &m, &st) == -1 && m == NULL);
    CHECKF(strstr(st.msg, "empty") != NULL, "%s", st.msg);
    mf_status_clear(&st);
}

/* An endless stream (`cat /dev/zero | ...`): written until the reader
 * closes its end. */
static void *feed_forever(void *arg)
{
    int fd = *(int *)arg;
    static uint8_t zeros[1 << 16];
    uint64_t sent = 0;
    for (;;) {
        ssize_t k = write(fd, zeros, sizeof(zeros));
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0 || (sent += (uint64_t)k) > ((uint64_t)64 << 30))
            break; /* EPIPE once the reader gives up (or 64 GiB: it never did) */
    }
    close(fd);
    return NULL;
}

/* A pipe is read into memory at most opts.max_read bytes: a stream of
 * exactly that many opens, one byte more fails saying so, and an endless
 * stream fails once the bound is passed instead of exhausting memory. */
static void bounded_pipe(void)
{
    uint8_t *buf;
    size_t len;
    CHECK(md_read_all("tests/data/api/gguf/dtypes.gguf", &buf, &len));
    mf_open_opts o;
    mf_open_opts_init(&o);
    CHECK(o.max_read == 0); /* 0: the default bound */
    o.max_read = len;
    mf_model *m = NULL;
    mf_status st;
    mf_status_init(&st);
    CHECKF(open_pipe_opts(buf, len, 0, "exact.gguf", &o, &m, &st) == 0, "%s", st.msg);
    CHECK(m && mf_model_tensor_count(m) > 3);
    mf_close(m);
    m = NULL;
    o.max_read = len - 1;
    CHECK(open_pipe_opts(buf, len, 0, "over.gguf", &o, &m, &st) == -1 && m == NULL);
    CHECKF(st.code == MF_ERR_USAGE && strstr(st.msg, "over.gguf") &&
               strstr(st.msg, "more than") && strstr(st.msg, "max_read"),
           "one byte over the bound: %s", st.msg);
    mf_status_clear(&st);
    free(buf);

    int p[2];
    CHECK(pipe(p) == 0);
    pthread_t t;
    pthread_create(&t, NULL, feed_forever, &p[1]);
    o.max_read = 1 << 20;
    CHECK(mf_open_fd(p[0], "endless", &o, &m, &st) == -1 && m == NULL);
    CHECKF(st.code == MF_ERR_USAGE && strstr(st.msg, "1048576"), "endless stream: %s", st.msg);
    mf_status_clear(&st);
    close(p[0]);
    pthread_join(t, NULL);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN); /* the feeders see EPIPE when a reader stops */
    if (!mkdtemp(tmpdir)) {
        CHECKF(false, "mkdtemp: %s", strerror(errno));
        return tl_report("open_fd");
    }
    each_file("tests/data/api");
    each_file("tests/data/scan_benign");
    printf("open_fd: %d (file, way) pairs opened alike by path and by fd\n", compared);
    CHECK(compared > 250);
    reads_after_close();
    failures();
    bounded_pipe();
    rmdir(tmpdir);
    return tl_report("open_fd");
}
