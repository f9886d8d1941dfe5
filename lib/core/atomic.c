/* atomic.c - all-or-nothing output, and nothing left behind by a kill.
 *
 * One file (mf_atomic): the data goes to an unnamed file in the
 * destination's directory (O_TMPFILE), so a run killed while writing leaves
 * nothing at all. At commit it is flushed, fsynced, linked to a temporary
 * name (linkat through /proc/self/fd, or AT_EMPTY_PATH) and renamed over
 * the destination; the directory is fsynced. Where the filesystem has no
 * O_TMPFILE the data goes to a named temporary from the start.
 *
 * Temporary names are NAME.mfmt-tmp-XXXXXX (six letters or digits), beside
 * NAME. The writer holds an exclusive flock on every temporary it makes,
 * for as long as it lives; the lock dies with the process, however it
 * dies. Before writing into a directory, mfmt sweeps it: a temporary whose
 * lock it can take belongs to a dead run and is removed. A killed run thus
 * leaves at most one temporary (killed between link and rename, or at any
 * time without O_TMPFILE), and the next mfmt run writing there removes it.
 * The sweep touches only regular files and directories owned by the user
 * running it (a root run in /tmp never acts on another user's entries).
 *
 * A set of files (mf_atomic_set: the shards of a split) is written into a
 * staging directory PREFIX.mfmt-tmp-XXXXXX beside them, locked the same way.
 * Commit: every file written and fsynced, the staging directory fsynced and
 * renamed to PREFIX.mfmt-commit-XXXXXX (the commit point, made durable by
 * an fsync of the parent), then each file renamed into place, the parent
 * fsynced and the empty directory removed. Killed before the commit point:
 * the old files are untouched and the sweep removes the staging directory.
 * Killed after it: the sweep finds the unlocked commit directory and
 * finishes the renames (roll forward), so the new set is complete. */
#include "core/core.h"

#include <dirent.h>
#include <signal.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#define TMP_TAG ".mfmt-tmp-"
#define COMMIT_TAG ".mfmt-commit-"

struct mf_atomic {
    int fd;
    bool unnamed;      /* O_TMPFILE: no name until commit */
    char *path, *dir, *tmp; /* tmp: NULL while unnamed */
    uint8_t *buf;
    size_t fill;
    uint64_t written;
    uint64_t on_fd, synced; /* bytes written to fd; of those, handed to writeback */
};

/* WBUF: the write buffer; WRITEBACK: every this many bytes the kernel is
 * asked to start writing them to disk (sync_file_range, asynchronous), so
 * the fsync at commit waits for the tail only instead of the whole file. */
enum { WBUF = 1 << 20, WRITEBACK = 8 << 20, NAME_TRIES = 64 };

/* WRITE_MAX: the most one write(2) is handed. Large pieces go out
 * uncopied, but in calls of at most this size: on the 2-vCPU guest of
 * bench/README.md (Linux 6.18, ext4) one 16 MiB write(2) cost 0.8-1.1 s of
 * system time per 512 MiB, nearly all in the page-cache copy
 * (copy_folio_from_iter_atomic), against 0.12-0.16 s for the same bytes in
 * 1 MiB calls (and 0.08 s from a buffer that stays in cache). */
enum { WRITE_MAX = 1 << 20 };

/* Tests only: the process SIGKILLs itself at this point ("write", "link",
 * "stage", "commit"), as a kill -9 would land there. */
const char *mf_atomic_kill_point;
/* Tests only: use named temporaries, as on a filesystem without O_TMPFILE. */
bool mf_atomic_named_only;

static void kill_point(const char *where)
{
    if (mf_atomic_kill_point && strcmp(mf_atomic_kill_point, where) == 0)
        raise(SIGKILL);
}

/* ------------------------------------------------------------ naming */

/* The directory part of a path ("." for a bare name), malloc'd. */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

/* Whether `name` ends in TAG followed by exactly six letters or digits. */
static bool has_tag(const char *name, const char *tag)
{
    size_t n = strlen(name), k = strlen(tag);
    if (n < k + 6 + 1 || memcmp(name + n - 6 - k, tag, k) != 0)
        return false;
    for (size_t i = n - 6; i < n; i++)
        if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= 'A' && name[i] <= 'Z') ||
              (name[i] >= '0' && name[i] <= '9')))
            return false;
    return true;
}

bool mf_atomic_is_temp_name(const char *name)
{
    const char *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    return has_tag(base, TMP_TAG) || has_tag(base, COMMIT_TAG);
}

static void random_suffix(char out[7])
{
    static const char abc[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    uint64_t r = 0;
    FILE *u = fopen("/dev/urandom", "rb");
    if (!u || fread(&r, sizeof(r), 1, u) != 1)
        r = (uint64_t)getpid() * 0x9e3779b97f4a7c15ull ^ (uint64_t)(uintptr_t)out;
    if (u)
        fclose(u);
    for (int i = 0; i < 6; i++, r /= 62)
        out[i] = abc[r % 62];
    out[6] = '\0';
}

/* ------------------------------------------------------------- sweep */

/* Open and lock a temporary; true when the lock was free (its writer is
 * gone). The fd stays open (and locked) in *fd for the caller. */
static bool take_dead(int dfd, const char *name, bool dir, int *fd)
{
    *fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | (dir ? O_DIRECTORY : 0));
    if (*fd < 0)
        return false;
    if (flock(*fd, LOCK_EX | LOCK_NB) == 0)
        return true;
    close(*fd);
    *fd = -1;
    return false;
}

/* Empties a dead directory: a commit directory's files go into the parent
 * (finishing the set), everything else is removed. */
static void drain_dir(int pfd, int dfd, bool roll_forward)
{
    int dup_fd = dup(dfd);
    DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
    if (!d) {
        if (dup_fd >= 0)
            close(dup_fd);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        struct stat sb;
        /* only our own regular files: another user's planted entry in a
         * shared directory (/tmp) is never renamed or removed */
        if (fstatat(dfd, e->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0 || sb.st_uid != geteuid() ||
            !S_ISREG(sb.st_mode))
            continue;
        if (roll_forward && !mf_atomic_is_temp_name(e->d_name))
            renameat(dfd, e->d_name, pfd, e->d_name);
        else
            unlinkat(dfd, e->d_name, 0);
    }
    closedir(d);
    if (roll_forward)
        fsync(pfd);
}

/* Removes the temporaries of dead runs in `dir` and completes their
 * committed sets. Best effort: a sweep that cannot read never fails the
 * write that asked for it. */
void mf_atomic_sweep(const char *dir)
{
    int pfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (pfd < 0)
        return;
    int dup_fd = dup(pfd);
    DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
    if (!d) {
        if (dup_fd >= 0)
            close(dup_fd);
        close(pfd);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        bool tmp = has_tag(e->d_name, TMP_TAG), commit = has_tag(e->d_name, COMMIT_TAG);
        if (!tmp && !commit)
            continue;
        struct stat sb;
        if (fstatat(pfd, e->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        bool is_dir = S_ISDIR(sb.st_mode);
        if ((!is_dir && !S_ISREG(sb.st_mode)) || sb.st_uid != geteuid())
            continue; /* another user's: not ours to judge */
        int fd;
        if (!take_dead(pfd, e->d_name, is_dir, &fd))
            continue;
        if (is_dir) {
            drain_dir(pfd, fd, commit);
            unlinkat(pfd, e->d_name, AT_REMOVEDIR);
        } else if (tmp) {
            unlinkat(pfd, e->d_name, 0);
        }
        close(fd);
    }
    closedir(d);
    close(pfd);
}

/* --------------------------------------------------------- one file */

static void atomic_free(mf_atomic *w)
{
    free(w->path);
    free(w->dir);
    free(w->tmp);
    free(w->buf);
    free(w);
}

/* linkat needs /proc/self/fd (or CAP_DAC_READ_SEARCH for AT_EMPTY_PATH). */
static bool can_link_unnamed(void)
{
    return access("/proc/self/fd", X_OK) == 0 || geteuid() == 0;
}

/* A named, locked temporary NAME.mfmt-tmp-XXXXXX; its name in *tmp. */
static int open_named(const char *path, char **tmp)
{
    size_t n = strlen(path) + sizeof(TMP_TAG) + 8;
    char *name = malloc(n);
    if (!name)
        return -1;
    for (int i = 0; i < NAME_TRIES; i++) {
        char sfx[7];
        random_suffix(sfx);
        snprintf(name, n, "%s" TMP_TAG "%s", path, sfx);
        int fd = open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0 && errno == EEXIST)
            continue;
        if (fd < 0)
            break;
        struct stat a, b;
        /* a sweep may remove it between open and flock: then try again */
        if (flock(fd, LOCK_EX) == 0 && fstat(fd, &a) == 0 && stat(name, &b) == 0 &&
            a.st_ino == b.st_ino && a.st_dev == b.st_dev) {
            *tmp = name;
            return fd;
        }
        close(fd);
    }
    int e = errno;
    free(name);
    errno = e;
    return -1;
}

int mf_atomic_open(const char *path, mf_atomic **out, mf_status *st)
{
    MF_ST_GUARD(st);
    *out = NULL;
    mf_atomic *w = calloc(1, sizeof(*w));
    if (!w)
        return mf_oom(st, path);
    w->fd = -1;
    w->path = strdup(path);
    w->dir = dir_of(path);
    w->buf = malloc(WBUF);
    if (!w->path || !w->dir || !w->buf) {
        atomic_free(w);
        return mf_oom(st, path);
    }
    mf_atomic_sweep(w->dir);
#ifdef O_TMPFILE
    if (can_link_unnamed() && !mf_atomic_named_only) {
        w->fd = open(w->dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0644);
        if (w->fd >= 0 && flock(w->fd, LOCK_EX) == 0)
            w->unnamed = true;
        else if (w->fd >= 0) {
            close(w->fd);
            w->fd = -1;
        }
    }
#endif
    if (w->fd < 0)
        w->fd = open_named(path, &w->tmp);
    if (w->fd < 0) {
        int e = errno;
        atomic_free(w);
        return mf_fail(st, MF_ERR_IO, path, -1, "cannot create a temporary file beside it: %s",
                       strerror(e));
    }
    fchmod(w->fd, 0644);
    *out = w;
    return 0;
}

/* After n more bytes reached the fd: writeback started every WRITEBACK bytes. */
static void wrote(mf_atomic *w, uint64_t n)
{
    w->on_fd += n;
#ifdef SYNC_FILE_RANGE_WRITE
    if (w->on_fd - w->synced >= WRITEBACK) { /* a hint: failure changes nothing */
        sync_file_range(w->fd, (off_t)w->synced, (off_t)(w->on_fd - w->synced), SYNC_FILE_RANGE_WRITE);
        w->synced = w->on_fd;
    }
#endif
    kill_point("write");
}

static int write_fd(mf_atomic *w, const uint8_t *p, size_t n, mf_status *st)
{
    size_t off = 0;
    while (off < n) {
        ssize_t k = write(w->fd, p + off, n - off < WRITE_MAX ? n - off : WRITE_MAX);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return mf_fail(st, MF_ERR_IO, w->path, -1, "write failed: %s", strerror(errno));
        off += (size_t)k;
    }
    wrote(w, n);
    return 0;
}

static int flush_buf(mf_atomic *w, mf_status *st)
{
    int rc = write_fd(w, w->buf, w->fill, st);
    w->fill = 0;
    return rc;
}

/* The buffered bytes, then p[0..n) uncopied (write_fd's pieces). */
static int flush_buf_with(mf_atomic *w, const uint8_t *p, size_t n, mf_status *st)
{
    if (flush_buf(w, st))
        return -1;
    return write_fd(w, p, n, st);
}

int mf_atomic_write(mf_atomic *w, const void *buf, size_t n, mf_status *st)
{
    MF_ST_GUARD(st);
    const uint8_t *p = buf;
    w->written += n;
    if (w->fill == 0 && n >= WBUF) /* large pieces go out as they are, uncopied */
        return write_fd(w, p, n, st);
    /* a large piece behind buffered bytes (a header first puts every later
     * piece off the buffer's boundary): the buffer, then the piece uncopied */
    if (n >= WBUF / 4 && w->fill + n > WBUF)
        return flush_buf_with(w, p, n, st);
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

/* Gives the unnamed file a temporary name (still locked: same inode). */
static int link_unnamed(mf_atomic *w, mf_status *st)
{
    size_t n = strlen(w->path) + sizeof(TMP_TAG) + 8;
    char proc[64], *name = malloc(n);
    if (!name)
        return mf_oom(st, w->path);
    snprintf(proc, sizeof(proc), "/proc/self/fd/%d", w->fd);
    int e = 0;
    for (int i = 0; i < NAME_TRIES; i++) {
        char sfx[7];
        random_suffix(sfx);
        snprintf(name, n, "%s" TMP_TAG "%s", w->path, sfx);
        int rc = linkat(AT_FDCWD, proc, AT_FDCWD, name, AT_SYMLINK_FOLLOW);
#ifdef AT_EMPTY_PATH
        if (rc != 0 && errno != EEXIST)
            rc = linkat(w->fd, "", AT_FDCWD, name, AT_EMPTY_PATH);
#endif
        if (rc == 0) {
            w->tmp = name;
            return 0;
        }
        e = errno;
        if (e != EEXIST)
            break;
    }
    free(name);
    return mf_fail(st, MF_ERR_IO, w->path, -1, "cannot link the finished temporary file: %s",
                   strerror(e));
}

static void fsync_dir(const char *dir)
{
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
}

int mf_atomic_commit(mf_atomic *w, mf_status *st)
{
    MF_ST_GUARD(st);
    int rc = flush_buf(w, st);
    if (rc == 0 && fsync(w->fd) != 0)
        rc = mf_fail(st, MF_ERR_IO, w->path, -1, "fsync failed: %s", strerror(errno));
    if (rc == 0 && w->unnamed)
        rc = link_unnamed(w, st);
    if (rc == 0)
        kill_point("link");
    if (rc == 0 && rename(w->tmp, w->path) != 0)
        rc = mf_fail(st, MF_ERR_IO, w->path, -1, "rename failed: %s", strerror(errno));
    if (rc != 0 && w->tmp)
        unlink(w->tmp);
    if (close(w->fd) != 0 && rc == 0)
        rc = mf_fail(st, MF_ERR_IO, w->path, -1, "close failed: %s", strerror(errno));
    if (rc == 0)
        fsync_dir(w->dir); /* make the rename itself durable */
    atomic_free(w);
    return rc;
}

void mf_atomic_abort(mf_atomic *w)
{
    if (!w)
        return;
    if (w->tmp)
        unlink(w->tmp);
    close(w->fd);
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

/* ------------------------------------------- runs copied in parallel */

uint64_t mf_atomic_share_min = 4 << 20;

/* One thread's part of mf_atomic_copy_runs: bytes [from, to) of the runs
 * laid end to end, written at out_base + from of the output. */
typedef struct copy_share {
    const mf_copy_run *runs;
    size_t n;
    int out_fd;
    uint64_t out_base, from, to;
    bool alone;     /* the only share: the output's position is its own */
    int err;        /* errno of a failed read or write; 0 */
    bool early;     /* an input ended before its run did */
    size_t at_run;  /* the run being copied when it failed */
} copy_share;

static bool kernel_copy_unsupported(int e)
{
    return e == EXDEV || e == ENOSYS || e == EOPNOTSUPP || e == EINVAL;
}

/* len bytes of in_fd at src to out_fd at dst (explicit offsets: the file
 * positions are not used, so shares run side by side): copy_file_range;
 * across filesystems (EXDEV: a checkpoint on disk, the output on tmpfs)
 * sendfile for the only share (the kernel still copies once, at the
 * output's position, which is dst), pread + pwrite through *buf (WBUF
 * bytes, allocated on first use) for one of several. */
static int copy_range(copy_share *s, int in_fd, loff_t src, loff_t dst, uint64_t len,
                      uint8_t **buf)
{
    bool kernel = true;
    while (len) {
        size_t want = len > (1u << 30) ? (1u << 30) : (size_t)len;
        ssize_t k;
        if (kernel) {
            k = copy_file_range(in_fd, &src, s->out_fd, &dst, want, 0);
            if (k < 0 && kernel_copy_unsupported(errno)) {
                kernel = false;
                continue;
            }
        } else if (s->alone) {
            off_t from = (off_t)src;
            /* sendfile writes at the position, which copy_file_range of an
             * earlier run (explicit offsets) left behind */
            k = lseek(s->out_fd, (off_t)dst, SEEK_SET) < 0 ? -1
              : sendfile(s->out_fd, in_fd, &from, want);
            if (k < 0 && kernel_copy_unsupported(errno)) {
                s->alone = false; /* pread + pwrite from here */
                continue;
            }
            if (k > 0)
                src += k, dst += k;
        } else {
            if (!*buf && !(*buf = malloc(WBUF)))
                return s->err = ENOMEM, -1;
            k = pread(in_fd, *buf, want < WBUF ? want : WBUF, src);
            for (ssize_t put = 0; k > 0 && put < k;) {
                ssize_t q = pwrite(s->out_fd, *buf + put, (size_t)(k - put), dst + put);
                if (q < 0 && errno != EINTR)
                    return s->err = errno, -1;
                put += q > 0 ? q : 0;
            }
            if (k > 0)
                src += k, dst += k;
        }
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return s->err = errno, -1;
        if (k == 0)
            return s->early = true, -1;
        len -= (uint64_t)k;
    }
    return 0;
}

static void *copy_share_run(void *arg)
{
    copy_share *s = arg;
    uint8_t *buf = NULL;
    uint64_t at = 0; /* where runs[i] starts in the concatenation */
    for (size_t i = 0; i < s->n && at < s->to; at += s->runs[i++].len) {
        const mf_copy_run *r = &s->runs[i];
        uint64_t a = s->from > at ? s->from - at : 0, b = s->to - at < r->len ? s->to - at : r->len;
        if (a >= b)
            continue;
        s->at_run = i;
        if (copy_range(s, r->fd, (loff_t)(r->off + a), (loff_t)(s->out_base + at + a), b - a, &buf))
            break;
    }
    free(buf);
    return NULL;
}

int mf_atomic_copy_runs(mf_atomic *w, const mf_copy_run *runs, size_t n, int threads,
                        mf_status *st)
{
    if (flush_buf(w, st))
        return -1;
    off_t base = lseek(w->fd, 0, SEEK_CUR);
    if (base < 0)
        return mf_fail(st, MF_ERR_IO, w->path, -1, "cannot tell the write position: %s",
                       strerror(errno));
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += runs[i].len;
    /* a thread per mf_atomic_share_min bytes at most: below it, starting
     * one costs more than it saves */
    enum { MAX_SHARES = 64 };
    uint64_t min = mf_atomic_share_min ? mf_atomic_share_min : 1;
    uint64_t most = total / min ? total / min : 1;
    size_t k = threads < 1 ? 1 : threads > MAX_SHARES ? MAX_SHARES : (size_t)threads;
    k = k > most ? (size_t)most : k;
    copy_share sh[MAX_SHARES];
    pthread_t tid[MAX_SHARES];
    bool started[MAX_SHARES] = {false};
    for (size_t i = 0; i < k; i++) {
        sh[i] = (copy_share){runs, n, w->fd, (uint64_t)base, total / k * i,
                             i + 1 == k ? total : total / k * (i + 1), k == 1, 0, false, 0};
        started[i] = i > 0 && pthread_create(&tid[i], NULL, copy_share_run, &sh[i]) == 0;
    }
    for (size_t i = 0; i < k; i++)
        if (!started[i])
            copy_share_run(&sh[i]); /* the first share, and any whose thread did not start */
    for (size_t i = 0; i < k; i++)
        if (started[i])
            pthread_join(tid[i], NULL);
    for (size_t i = 0; i < k; i++)
        if (sh[i].err || sh[i].early)
            return sh[i].early
                ? mf_fail(st, MF_ERR_IO, w->path, -1, "input %zu of the copy ended before its "
                          "%llu bytes were read", sh[i].at_run, (unsigned long long)runs[sh[i].at_run].len)
                : mf_fail(st, MF_ERR_IO, w->path, -1, "copying data failed: %s", strerror(sh[i].err));
    if (lseek(w->fd, base + (off_t)total, SEEK_SET) < 0)
        return mf_fail(st, MF_ERR_IO, w->path, -1, "seek failed: %s", strerror(errno));
    w->written += total;
    wrote(w, total);
    return 0;
}

/* ---------------------------------------------------------- a set */

typedef struct set_file {
    const char *final, *base; /* base: the name inside the staging dir */
} set_file;

struct mf_atomic_set {
    mf_arena *a;                         /* every string below */
    const char *parent, *stage, *commit; /* directories */
    int lock_fd;                         /* the staging directory, locked */
    MF_VEC(set_file) files;
};

static void set_free(mf_atomic_set *s)
{
    if (s->lock_fd >= 0)
        close(s->lock_fd); /* releases the lock */
    MF_VEC_FREE(s->files);
    mf_arena_free(s->a);
    free(s);
}

/* mkdtemp + lock, again if a sweep removed it between the two. */
static int make_stage(mf_atomic_set *s, const char *prefix)
{
    char *t = mf_arena_printf(s->a, "%s" TMP_TAG "XXXXXX", prefix);
    size_t n = t ? strlen(t) + 1 : 0;
    for (int i = 0; t && i < NAME_TRIES; i++) {
        snprintf(t, n, "%s" TMP_TAG "XXXXXX", prefix);
        if (!mkdtemp(t))
            return -1;
        int fd = open(t, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        struct stat a, b;
        if (fd >= 0 && flock(fd, LOCK_EX) == 0 && fstat(fd, &a) == 0 && stat(t, &b) == 0 &&
            a.st_ino == b.st_ino && a.st_dev == b.st_dev) {
            s->lock_fd = fd;
            s->stage = t;
            s->commit = mf_arena_printf(s->a, "%s" COMMIT_TAG "%s", prefix, t + n - 7);
            return s->commit ? 0 : -1;
        }
        if (fd >= 0)
            close(fd);
    }
    return -1;
}

int mf_atomic_set_begin(const char *prefix, mf_atomic_set **out, mf_status *st)
{
    *out = NULL;
    mf_atomic_set *s = calloc(1, sizeof(*s));
    if (!s || !(s->a = mf_arena_new())) {
        free(s);
        return mf_oom(st, prefix);
    }
    s->lock_fd = -1;
    char *parent = dir_of(prefix);
    s->parent = parent ? mf_arena_strdup(s->a, parent) : NULL;
    free(parent);
    if (!s->parent) {
        set_free(s);
        return mf_oom(st, prefix);
    }
    mf_atomic_sweep(s->parent);
    if (make_stage(s, prefix)) {
        int e = errno;
        set_free(s);
        return mf_fail(st, MF_ERR_IO, prefix, -1, "cannot create a staging directory beside it: %s",
                       strerror(e));
    }
    *out = s;
    return 0;
}

const char *mf_atomic_set_add(mf_atomic_set *s, const char *final_path, mf_status *st)
{
    const char *base = strrchr(final_path, '/');
    base = base ? base + 1 : final_path;
    char *dir = dir_of(final_path);
    bool same = dir && strcmp(dir, s->parent) == 0;
    free(dir);
    if (!same) {
        mf_fail(st, MF_ERR_USAGE, final_path, -1, "a file of the set lies outside %s", s->parent);
        return NULL;
    }
    set_file f = {mf_arena_strdup(s->a, final_path), mf_arena_strdup(s->a, base)};
    char *staged = mf_path_join(s->a, s->stage, base);
    if (!f.final || !f.base || !staged || MF_VEC_PUSH(s->files, f)) {
        mf_oom(st, final_path);
        return NULL;
    }
    return staged;
}

int mf_atomic_set_commit(mf_atomic_set *s, mf_status *st)
{
    int rc = 0;
    if (fsync(s->lock_fd) != 0)
        rc = mf_fail(st, MF_ERR_IO, s->stage, -1, "fsync failed: %s", strerror(errno));
    if (rc == 0)
        kill_point("stage");
    /* the commit point: from here on a kill is finished by the next sweep */
    if (rc == 0 && rename(s->stage, s->commit) != 0)
        rc = mf_fail(st, MF_ERR_IO, s->stage, -1, "rename failed: %s", strerror(errno));
    if (rc != 0) {
        mf_atomic_set_abort(s);
        return -1;
    }
    fsync_dir(s->parent);
    for (size_t i = 0; i < s->files.n && rc == 0; i++) {
        const char *from = mf_path_join(s->a, s->commit, s->files.v[i].base);
        if (!from)
            rc = mf_oom(st, s->files.v[i].final);
        else if (rename(from, s->files.v[i].final) != 0)
            rc = mf_fail(st, MF_ERR_IO, s->files.v[i].final, -1,
                         "rename failed: %s (the new set stays in %s; the next mfmt run writing "
                         "there finishes it)", strerror(errno), s->commit);
        if (rc == 0)
            kill_point("commit");
    }
    fsync_dir(s->parent);
    if (rc == 0)
        rmdir(s->commit);
    set_free(s);
    return rc;
}

void mf_atomic_set_abort(mf_atomic_set *s)
{
    if (!s)
        return;
    int pfd = open(s->parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (pfd >= 0 && s->lock_fd >= 0)
        drain_dir(pfd, s->lock_fd, false);
    if (pfd >= 0)
        close(pfd);
    rmdir(s->stage);
    set_free(s);
}

/* ------------------------------------------- an output is never an input */

static bool same_inode(const struct stat *o, const char *path)
{
    struct stat b;
    return path && stat(path, &b) == 0 && b.st_dev == o->st_dev && b.st_ino == o->st_ino;
}

/* Files a model directory's reader reads besides the weights it maps
 * (config, generation config, tokenizer files, shard indexes). */
static bool dir_reads(const char *base)
{
    static const char *const ext[] = {".json", ".model", ".txt", ".jinja", NULL};
    size_t n = strlen(base);
    for (int i = 0; ext[i]; i++) {
        size_t k = strlen(ext[i]);
        if (n > k && strcmp(base + n - k, ext[i]) == 0)
            return true;
    }
    return false;
}

/* `out` (existing) lies directly inside the input directory and is a file
 * its reader reads. */
static bool in_input_dir(const char *dirpath, const struct stat *so, const char *out)
{
    struct stat ds;
    if (!dirpath || stat(dirpath, &ds) != 0 || !S_ISDIR(ds.st_mode) || !S_ISREG(so->st_mode))
        return false;
    char *dir = dir_of(out);
    bool inside = dir && same_inode(&ds, dir);
    free(dir);
    const char *base = strrchr(out, '/');
    return inside && dir_reads(base ? base + 1 : out);
}

/* Whether `out` (stat'ed in *so) is an input of m; `self` (may be NULL) is
 * a file the command may replace in place. */
static bool is_input(const mf_model *m, const struct stat *so, const char *out, const char *self)
{
    struct stat ss;
    if (self && stat(self, &ss) == 0 && ss.st_dev == so->st_dev && ss.st_ino == so->st_ino)
        return false;
    if (same_inode(so, m->path) || in_input_dir(m->path, so, out))
        return true;
    for (size_t i = 0; i < m->n_files; i++)
        if (same_inode(so, m->files[i].path))
            return true;
    const mf_file *last = NULL; /* tensors of one file come together: stat each file once */
    for (size_t i = 0; i < m->n_tensors; i++) {
        const mf_file *f = mf_tensor_file(m, &m->tensors[i]);
        if (f && f != last && same_inode(so, f->path))
            return true;
        last = f;
    }
    return false;
}

static int output_check(const mf_model *m, const char *out, const char *self, mf_status *st)
{
    struct stat so;
    if (!out || stat(out, &so) != 0)
        return 0; /* a new file is nobody's input */
    if (is_input(m, &so, out, self))
        return mf_fail(st, MF_ERR_USAGE, out, -1,
                       "is one of the command's inputs (%s): refusing to overwrite it", m->path);
    return 0;
}

int mf_output_check(const mf_model *m, const char *out, mf_status *st)
{
    return output_check(m, out, NULL, st);
}

int mf_output_check_replacing(const mf_model *m, const char *self, const char *out, mf_status *st)
{
    return output_check(m, out, self, st);
}

int mf_output_check_path(const char *input, const char *out, mf_status *st)
{
    struct stat so;
    if (input && out && stat(out, &so) == 0 &&
        (same_inode(&so, input) || in_input_dir(input, &so, out)))
        return mf_fail(st, MF_ERR_USAGE, out, -1,
                       "is one of the command's inputs (%s): refusing to overwrite it", input);
    return 0;
}

int mf_atomic_copy_file(const char *from, const char *to, mf_status *st)
{
    int fd = open(from, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return mf_fail(st, MF_ERR_IO, from, -1, "cannot read: %s", strerror(e));
    }
    mf_atomic *w;
    int rc = mf_atomic_open(to, &w, st);
    if (rc == 0) {
        rc = mf_atomic_copy_from(w, fd, 0, (uint64_t)sb.st_size, st);
        rc = rc == 0 ? mf_atomic_commit(w, st) : (mf_atomic_abort(w), -1);
    }
    close(fd);
    return rc;
}
