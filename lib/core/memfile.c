/* memfile.c - a caller's buffer read as a file (mf_open_buffer, mf_open_fd).
 *
 * The bytes get a name for messages and for the readers, "mem:ID/NAME",
 * but a name is never how they are found: there is no registry a path
 * string is looked up in. mf_open_buffer holds the source as a handle and
 * makes it the calling thread's memory scope (mf_mem_scope_enter) while it
 * opens; only inside that scope do mf_map_file and the path helpers resolve
 * the source's own name to its bytes, and treat every other path of its
 * namespace ("mem:ID/weights.bin", a file a format spanning several files
 * would open next) as absent rather than looking it up on disk. Outside a
 * scope "mem:1/x" is an ordinary relative path: a file a user (or an
 * attacker) names so is opened as the file, never confused with a buffer,
 * and a buffer's sibling is never taken from the disk.
 *
 * mf_mem_register_fd reads what a file descriptor holds into a source that
 * owns its bytes: a regular file mapped; anything else (a pipe, a socket)
 * read to its end, at most a bound the caller gives (mf_open_opts.max_read),
 * so `cat huge | ...` fails with a message instead of exhausting memory. */
#include "core/core.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct mf_mem_source {
    char *path;      /* "mem:ID/name" */
    size_t ns_len;   /* the length of its namespace, "mem:ID/" */
    const uint8_t *base;
    uint64_t size;
    /* bytes the source owns (mf_mem_register_fd): a mapping of own_len
     * bytes at own (mapped) or a malloc'd block; NULL: borrowed */
    void *own;
    size_t own_len;
    bool mapped;
};

static atomic_ulong next_id;
static _Thread_local const mf_mem_source *scope; /* the buffer this thread opens */

#define MEM_SCHEME "mem:"

/* A new source named "mem:ID/name"; NULL when out of memory. */
static mf_mem_source *new_source(const char *name)
{
    mf_mem_source *s = calloc(1, sizeof(*s));
    unsigned long id = atomic_fetch_add(&next_id, 1) + 1;
    int n = snprintf(NULL, 0, MEM_SCHEME "%lu/%s", id, name);
    int ns = snprintf(NULL, 0, MEM_SCHEME "%lu/", id);
    if (!s || n < 0 || ns < 0 || !(s->path = malloc((size_t)n + 1))) {
        free(s);
        return NULL;
    }
    snprintf(s->path, (size_t)n + 1, MEM_SCHEME "%lu/%s", id, name);
    s->ns_len = (size_t)ns;
    return s;
}

mf_mem_source *mf_mem_register(const void *buf, size_t len, const char *name)
{
    mf_mem_source *s = new_source(name);
    if (!s)
        return NULL;
    s->base = len ? buf : NULL;
    s->size = len;
    return s;
}

/* A regular file from byte `pos` on, mapped (the mapping starts at the
 * page that holds pos). 0, or -1 with errno. */
static int map_from(mf_mem_source *s, int fd, uint64_t pos, uint64_t size)
{
    if (pos >= size)
        return 0; /* nothing after the position: an empty file */
    long page = sysconf(_SC_PAGESIZE);
    uint64_t start = pos - pos % (uint64_t)(page > 0 ? page : 4096);
    if (size - start > SIZE_MAX) {
        errno = EFBIG;
        return -1;
    }
    void *p = mmap(NULL, (size_t)(size - start), PROT_READ, MAP_PRIVATE, fd, (off_t)start);
    if (p == MAP_FAILED)
        return -1;
    s->own = p;
    s->own_len = (size_t)(size - start);
    s->mapped = true;
    s->base = (const uint8_t *)p + (pos - start);
    s->size = size - pos;
    return 0;
}

/* The next capacity of a block read from a stream: doubled, at most
 * `max` + 1 (one byte past the bound tells that the stream holds more). */
static size_t grown_capacity(size_t cap, uint64_t max)
{
    uint64_t limit = max < SIZE_MAX - 1 ? max + 1 : SIZE_MAX;
    uint64_t want = cap ? (uint64_t)cap * 2 : 64 * 1024;
    if (want < cap || want > limit) /* (a doubling that wrapped) */
        want = limit;
    return (size_t)want;
}

/* Anything else (a pipe, a socket, a terminal): read to its end into a
 * block that doubles, at most `max` bytes. 0; -1 with errno (ENOMEM when
 * out of memory, EFBIG when the stream holds more than max). */
static int read_all(mf_mem_source *s, int fd, uint64_t max)
{
    size_t cap = 0, n = 0;
    uint8_t *buf = NULL;
    int err = 0;
    for (;;) {
        if (n == cap) {
            size_t want = grown_capacity(cap, max);
            if (want <= cap) {
                err = EFBIG; /* max + 1 bytes arrived */
                break;
            }
            uint8_t *nb = realloc(buf, want);
            if (!nb) {
                err = ENOMEM;
                break;
            }
            buf = nb;
            cap = want;
        }
        ssize_t k = read(fd, buf + n, cap - n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            err = errno;
            break;
        }
        if (k == 0)
            break;
        n += (size_t)k;
        if (n > max) {
            err = EFBIG;
            break;
        }
    }
    if (err) {
        free(buf);
        errno = err;
        return -1;
    }
    s->own = buf;
    s->base = n ? buf : NULL;
    s->size = n;
    return 0;
}

mf_mem_source *mf_mem_register_fd(int fd, const char *name, uint64_t max_read, mf_status *st)
{
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        mf_fail(st, MF_ERR_IO, name, -1, "file descriptor %d: %s", fd, strerror(errno));
        return NULL;
    }
    if (S_ISDIR(sb.st_mode)) {
        mf_fail(st, MF_ERR_USAGE, name, -1,
                "file descriptor %d is a directory: open a directory by path", fd);
        return NULL;
    }
    mf_mem_source *s = new_source(name);
    if (!s) {
        mf_oom(st, name);
        return NULL;
    }
    off_t pos = S_ISREG(sb.st_mode) ? lseek(fd, 0, SEEK_CUR) : -1;
    int rc = pos >= 0 ? map_from(s, fd, (uint64_t)pos, (uint64_t)sb.st_size)
                      : read_all(s, fd, max_read);
    if (rc != 0) {
        int e = errno;
        mf_mem_unregister(s);
        if (e == ENOMEM)
            mf_oom(st, name);
        else if (e == EFBIG && pos < 0)
            mf_fail(st, MF_ERR_USAGE, name, -1,
                    "file descriptor %d: the stream holds more than %llu bytes, the most read "
                    "into memory from a pipe or socket (mf_open_opts.max_read; the CLI's "
                    "MFMT_MAX_READ): give the file's path or a seekable file instead",
                    fd, (unsigned long long)max_read);
        else
            mf_fail(st, MF_ERR_IO, name, -1, "file descriptor %d: cannot %s: %s", fd,
                    pos >= 0 ? "map" : "read", strerror(e));
        return NULL;
    }
    return s;
}

const char *mf_mem_path(const mf_mem_source *s)
{
    return s ? s->path : NULL;
}

void mf_mem_unregister(mf_mem_source *s)
{
    if (!s)
        return;
    if (s->own && s->mapped)
        munmap(s->own, s->own_len);
    else
        free(s->own);
    free(s->path);
    free(s);
}

const mf_mem_source *mf_mem_scope_enter(const mf_mem_source *s)
{
    const mf_mem_source *prev = scope;
    scope = s;
    return prev;
}

void mf_mem_scope_leave(const mf_mem_source *prev)
{
    scope = prev;
}

/* Whether path lies in the namespace of the thread's scope: "mem:ID/..."
 * or its folder "mem:ID" itself (what a reader listing the buffer's folder
 * asks for). */
static bool in_scope_namespace(const char *path)
{
    size_t k = scope ? scope->ns_len - 1 : 0; /* without the '/' */
    return scope && strncmp(path, scope->path, k) == 0 && (path[k] == '/' || path[k] == 0);
}

bool mf_mem_shadows(const char *path)
{
    return path && in_scope_namespace(path) && strcmp(path, scope->path) != 0;
}

bool mf_mem_is_source(const char *path)
{
    return path && scope && strcmp(path, scope->path) == 0;
}

int mf_mem_map(const char *path, mf_file *out, mf_status *st)
{
    if (!in_scope_namespace(path))
        return 0; /* a path on disk, whatever it looks like */
    if (strcmp(path, scope->path) != 0)
        return mf_fail(st, MF_ERR_UNSUPPORTED, path, -1,
                       "a file beside an in-memory buffer: a model that spans several files "
                       "must be opened by path");
    memset(out, 0, sizeof(*out));
    out->path = path;
    out->base = scope->base;
    out->size = scope->size;
    out->borrowed = true;
    return 1;
}
