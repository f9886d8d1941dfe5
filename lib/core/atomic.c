/* atomic.c - write beside the destination, fsync, rename: all or nothing. */
#include "core/core.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

struct mf_atomic {
    int fd;
    char *path, *tmp;
    uint8_t *buf;
    size_t fill;
    uint64_t written;
};

enum { WBUF = 1 << 20 };

int mf_atomic_open(const char *path, mf_atomic **out, mf_status *st)
{
    MF_ST_GUARD(st);
    *out = NULL;
    mf_atomic *w = calloc(1, sizeof(*w));
    if (!w)
        return mf_oom(st, path);
    w->path = strdup(path);
    size_t n = strlen(path) + 32;
    w->tmp = malloc(n);
    w->buf = malloc(WBUF);
    if (!w->path || !w->tmp || !w->buf) {
        free(w->path); free(w->tmp); free(w->buf); free(w);
        return mf_oom(st, path);
    }
    snprintf(w->tmp, n, "%s.tmp.XXXXXX", path);
    w->fd = mkstemp(w->tmp);
    if (w->fd < 0) {
        int e = errno;
        free(w->path); free(w->tmp); free(w->buf); free(w);
        return mf_fail(st, MF_ERR_IO, path, -1, "cannot create a temporary file beside it: %s",
                       strerror(e));
    }
    fchmod(w->fd, 0644);
    *out = w;
    return 0;
}

static int flush_buf(mf_atomic *w, mf_status *st)
{
    size_t off = 0;
    while (off < w->fill) {
        ssize_t k = write(w->fd, w->buf + off, w->fill - off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return mf_fail(st, MF_ERR_IO, w->path, -1, "write failed: %s", strerror(errno));
        off += (size_t)k;
    }
    w->fill = 0;
    return 0;
}

int mf_atomic_write(mf_atomic *w, const void *buf, size_t n, mf_status *st)
{
    MF_ST_GUARD(st);
    const uint8_t *p = buf;
    w->written += n;
    while (n) {
        size_t k = WBUF - w->fill < n ? WBUF - w->fill : n;
        memcpy(w->buf + w->fill, p, k);
        w->fill += k;
        p += k;
        n -= k;
        if (w->fill == WBUF && flush_buf(w, st))
            return -1;
    }
    return 0;
}

int mf_atomic_sink(void *w, const void *buf, size_t n, mf_status *st)
{
    MF_ST_GUARD(st);
    return mf_atomic_write(w, buf, n, st);
}

uint64_t mf_atomic_tell(const mf_atomic *w)
{
    return w->written;
}

static void atomic_free(mf_atomic *w)
{
    free(w->path);
    free(w->tmp);
    free(w->buf);
    free(w);
}

int mf_atomic_commit(mf_atomic *w, mf_status *st)
{
    MF_ST_GUARD(st);
    int rc = flush_buf(w, st);
    if (rc == 0 && fsync(w->fd) != 0)
        rc = mf_fail(st, MF_ERR_IO, w->path, -1, "fsync failed: %s", strerror(errno));
    if (close(w->fd) != 0 && rc == 0)
        rc = mf_fail(st, MF_ERR_IO, w->path, -1, "close failed: %s", strerror(errno));
    if (rc == 0 && rename(w->tmp, w->path) != 0)
        rc = mf_fail(st, MF_ERR_IO, w->path, -1, "rename failed: %s", strerror(errno));
    if (rc != 0)
        unlink(w->tmp);
    else {
        /* make the rename itself durable */
        char *d = strdup(w->path);
        if (d) {
            int dfd = open(dirname(d), O_RDONLY | O_DIRECTORY);
            if (dfd >= 0) {
                fsync(dfd);
                close(dfd);
            }
            free(d);
        }
    }
    atomic_free(w);
    return rc;
}

void mf_atomic_abort(mf_atomic *w)
{
    if (!w)
        return;
    close(w->fd);
    unlink(w->tmp);
    atomic_free(w);
}

/* Appends `len` bytes of in_fd from `off`: copy_file_range first (the kernel
 * copies, or shares extents where the filesystem can: no bytes pass through
 * this process), plain pread/write where it is not supported across these
 * files. */
int mf_atomic_copy_from(mf_atomic *w, int in_fd, uint64_t off, uint64_t len, mf_status *st)
{
    if (flush_buf(w, st))
        return -1;
    w->written += len;
    loff_t src = (loff_t)off;
    bool kernel = true;
    while (len) {
        size_t want = len > (1u << 30) ? (1u << 30) : (size_t)len;
        ssize_t k = -1;
        if (kernel) {
            k = copy_file_range(in_fd, &src, w->fd, NULL, want, 0);
            if (k < 0 && (errno == EXDEV || errno == ENOSYS || errno == EOPNOTSUPP ||
                          errno == EINVAL)) {
                kernel = false;
                continue;
            }
        } else {
            size_t chunk = want < WBUF ? want : WBUF;
            k = pread(in_fd, w->buf, chunk, src);
            if (k > 0) {
                w->fill = (size_t)k;
                if (flush_buf(w, st))
                    return -1;
                src += k;
            }
        }
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return mf_fail(st, MF_ERR_IO, w->path, -1, "copying data failed: %s", strerror(errno));
        if (k == 0)
            return mf_fail(st, MF_ERR_IO, w->path, -1,
                           "the input ended %llu bytes early while copying its data",
                           (unsigned long long)len);
        len -= (uint64_t)k;
    }
    return 0;
}
