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
