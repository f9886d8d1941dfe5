/* writer_common.c - shared by the safetensors and GGUF writers. */
#include "formats/writer_common.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct counted {
    mf_atomic *w;
    uint64_t n, limit;
    const char *path, *name;
} counted;

static int counted_sink(void *ctx, const void *buf, size_t n, mf_status *st)
{
    counted *c = ctx;
    if (n > c->limit - c->n)
        return mf_fail(st, MF_ERR_USAGE, c->path, -1,
                       "tensor \"%s\": more bytes supplied than its %llu", c->name,
                       (unsigned long long)c->limit);
    c->n += n;
    return mf_atomic_write(c->w, buf, n, st);
}

/* A fill hands bytes that lie in a file as they are (a tensor that needs no
 * change: most of an F16 -> F16 conversion): into a writer's own sink they
 * go by copy_file_range (mf_atomic_copy_from: the kernel copies, or shares
 * extents on btrfs/XFS, no byte passes through this process), into any
 * other sink by reads. */
int mf_sink_copy_file(mf_sink_fn sink, void *sink_ctx, const char *path, uint64_t off,
                      uint64_t len, mf_status *st)
{
    int fd = mf_open_read(path);
    if (fd < 0)
        return mf_fail(st, MF_ERR_IO, path, -1, "cannot open: %s", strerror(errno));
    int rc = 0;
    if (sink == counted_sink) {
        counted *c = sink_ctx;
        if (len > c->limit - c->n)
            rc = mf_fail(st, MF_ERR_USAGE, c->path, -1, "tensor \"%s\": more bytes supplied than its %llu",
                         c->name, (unsigned long long)c->limit);
        if (rc == 0)
            rc = mf_atomic_copy_from(c->w, fd, off, len, st);
        if (rc == 0)
            c->n += len;
        close(fd);
        return rc;
    }
    enum { CHUNK = 1 << 20 };
    uint8_t *buf = malloc(CHUNK);
    if (!buf)
        rc = mf_oom(st, path);
    while (rc == 0 && len) {
        size_t want = len < CHUNK ? (size_t)len : CHUNK;
        ssize_t k = pread(fd, buf, want, (off_t)off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            rc = mf_fail(st, MF_ERR_IO, path, (int64_t)off, "read failed: %s",
                         k < 0 ? strerror(errno) : "the file ended early");
        else
            rc = sink(sink_ctx, buf, (size_t)k, st);
        off += (uint64_t)(k > 0 ? k : 0);
        len -= (uint64_t)(k > 0 ? k : 0);
    }
    free(buf);
    close(fd);
    return rc;
}

/* The file opened again by path is the one the reader mapped, validated
 * and the scan judged (a file swapped in between is not copied). */
static bool same_file(int fd, const mf_file_run *r)
{
    struct stat sb;
    if (!r->dev && !r->ino)
        return true; /* a reader that does not say */
    return fstat(fd, &sb) == 0 && (uint64_t)sb.st_dev == r->dev && (uint64_t)sb.st_ino == r->ino;
}

int mf_sink_copy_runs(mf_sink_fn sink, void *sink_ctx, const mf_file_run *runs, size_t n,
                      int threads, mf_status *st)
{
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += runs[i].len;
    if (sink != counted_sink) {
        for (size_t i = 0; i < n; i++)
            if (mf_sink_copy_file(sink, sink_ctx, runs[i].path, runs[i].off, runs[i].len, st))
                return -1;
        return 0;
    }
    counted *c = sink_ctx;
    if (total > c->limit - c->n)
        return mf_fail(st, MF_ERR_USAGE, c->path, -1,
                       "tensor \"%s\": more bytes supplied than its %llu", c->name,
                       (unsigned long long)c->limit);
    mf_copy_run *cr = calloc(n ? n : 1, sizeof(*cr));
    if (!cr)
        return mf_oom(st, c->path);
    for (size_t i = 0; i < n; i++)
        cr[i] = (mf_copy_run){-1, runs[i].off, runs[i].len};
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) { /* one open per file (runs come file by file) */
        if (i && strcmp(runs[i].path, runs[i - 1].path) == 0) {
            cr[i].fd = cr[i - 1].fd;
            continue;
        }
        cr[i].fd = mf_open_read(runs[i].path);
        if (cr[i].fd < 0)
            rc = mf_fail(st, MF_ERR_IO, runs[i].path, -1, "cannot open: %s", strerror(errno));
        else if (!same_file(cr[i].fd, &runs[i]))
            rc = mf_fail(st, MF_ERR_IO, runs[i].path, -1,
                         "was replaced since it was read: its bytes are not copied");
    }
    if (rc == 0)
        rc = mf_atomic_copy_runs(c->w, cr, n, threads, st);
    if (rc == 0)
        c->n += total;
    for (size_t i = 0; i < n; i++)
        if (cr[i].fd >= 0 && (i == 0 || cr[i].fd != cr[i - 1].fd))
            close(cr[i].fd);
    free(cr);
    return rc;
}

int mf_writer_emit(mf_atomic *w, const char *path, size_t i, const char *name,
                   uint64_t nbytes, uint64_t padded, mf_fill_fn fill, void *ctx,
                   mf_status *st)
{
    counted c = {w, 0, nbytes, path, name};
    if (fill(ctx, i, counted_sink, &c, st))
        return -1;
    if (c.n != nbytes)
        return mf_fail(st, MF_ERR_USAGE, path, -1,
                       "tensor \"%s\": %llu bytes supplied, %llu expected", name,
                       (unsigned long long)c.n, (unsigned long long)nbytes);
    static const uint8_t zeros[64];
    for (uint64_t k = nbytes; k < padded;) {
        size_t n = padded - k > sizeof(zeros) ? sizeof(zeros) : (size_t)(padded - k);
        if (mf_atomic_write(w, zeros, n, st))
            return -1;
        k += n;
    }
    return 0;
}

int mf_out_tensor_nbytes(const mf_out_tensor *t, const char *path, uint64_t *out,
                         mf_status *st)
{
    mf_tensor tmp;
    memset(&tmp, 0, sizeof(tmp));
    tmp.name = t->name;
    tmp.dtype = t->dtype;
    tmp.ndim = t->ndim;
    memcpy(tmp.shape, t->shape, sizeof(tmp.shape));
    if (t->ndim < 0 || t->ndim > MF_MAX_DIMS || !mf_dtype_info_of(t->dtype))
        return mf_fail(st, MF_ERR_USAGE, path, -1, "tensor \"%s\": bad dtype or rank", t->name);
    if (mf_tensor_set_nbytes(&tmp, path, -1, st))
        return -1;
    *out = tmp.nbytes;
    return 0;
}
