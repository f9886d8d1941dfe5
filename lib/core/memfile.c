/* memfile.c - a caller's buffer read as a file (mf_open_buffer): the buffer
 * is registered under a path no file has, "mem:ID/NAME", which mf_map_file
 * resolves to the buffer itself (borrowed: never copied, never unmapped).
 * Everything that reads a model by path (detection, the readers, the scan
 * at open) then works unchanged. A file beside it ("mem:ID/weights.bin",
 * what a format spanning several files would open next) is refused with
 * that reason rather than looked up on disk. mf_open_fd registers what a
 * file descriptor holds the same way, as bytes the registration owns. */
#include "core/core.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct mem_source {
    char *path;
    const uint8_t *base;
    uint64_t size;
    /* bytes the registration owns (mf_mem_register_fd): a mapping of
     * own_len bytes at own (mapped) or a malloc'd block; NULL: borrowed */
    void *own;
    size_t own_len;
    bool mapped;
    struct mem_source *next;
} mem_source;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static mem_source *sources;
static atomic_ulong next_id;

#define MEM_SCHEME "mem:"

static void release(mem_source *s)
{
    if (s->own && s->mapped)
        munmap(s->own, s->own_len);
    else
        free(s->own);
    free(s->path);
    free(s);
}

/* A new source (not yet listed) named "mem:ID/name"; NULL when out of
 * memory. */
static mem_source *new_source(const char *name)
{
    mem_source *s = calloc(1, sizeof(*s));
    unsigned long id = atomic_fetch_add(&next_id, 1) + 1;
    int n = snprintf(NULL, 0, MEM_SCHEME "%lu/%s", id, name);
    if (!s || n < 0 || !(s->path = malloc((size_t)n + 1))) {
        free(s);
        return NULL;
    }
    snprintf(s->path, (size_t)n + 1, MEM_SCHEME "%lu/%s", id, name);
    return s;
}

static const char *add_source(mem_source *s)
{
    pthread_mutex_lock(&lock);
    s->next = sources;
    sources = s;
    pthread_mutex_unlock(&lock);
    return s->path;
}

const char *mf_mem_register(const void *buf, size_t len, const char *name)
{
    mem_source *s = new_source(name);
    if (!s)
        return NULL;
    s->base = len ? buf : NULL;
    s->size = len;
    return add_source(s);
}

/* A regular file from byte `pos` on, mapped (the mapping starts at the
 * page that holds pos). 0, or -1 with errno. */
static int map_from(mem_source *s, int fd, uint64_t pos, uint64_t size)
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

/* Anything else (a pipe, a socket, a terminal): read to its end into a
 * block that doubles. 0, or -1 with errno (ENOMEM when out of memory). */
static int read_all(mem_source *s, int fd)
{
    size_t cap = 0, n = 0;
    uint8_t *buf = NULL;
    for (;;) {
        if (n == cap) {
            size_t want = cap ? cap * 2 : 64 * 1024;
            uint8_t *nb = want > cap ? realloc(buf, want) : NULL;
            if (!nb) {
                free(buf);
                errno = ENOMEM;
                return -1;
            }
            buf = nb;
            cap = want;
        }
        ssize_t k = read(fd, buf + n, cap - n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            int e = errno;
            free(buf);
            errno = e;
            return -1;
        }
        if (k == 0)
            break;
        n += (size_t)k;
    }
    s->own = buf;
    s->base = n ? buf : NULL;
    s->size = n;
    return 0;
}

const char *mf_mem_register_fd(int fd, const char *name, mf_status *st)
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
    mem_source *s = new_source(name);
    if (!s) {
        mf_oom(st, name);
        return NULL;
    }
    off_t pos = S_ISREG(sb.st_mode) ? lseek(fd, 0, SEEK_CUR) : -1;
    int rc = pos >= 0 ? map_from(s, fd, (uint64_t)pos, (uint64_t)sb.st_size) : read_all(s, fd);
    if (rc != 0) {
        int e = errno;
        release(s);
        if (e == ENOMEM)
            mf_oom(st, name);
        else
            mf_fail(st, MF_ERR_IO, name, -1, "file descriptor %d: cannot %s: %s", fd,
                    pos >= 0 ? "map" : "read", strerror(e));
        return NULL;
    }
    return add_source(s);
}

void mf_mem_unregister(const char *path)
{
    if (!path)
        return;
    pthread_mutex_lock(&lock);
    for (mem_source **p = &sources; *p; p = &(*p)->next)
        if ((*p)->path == path) {
            mem_source *s = *p;
            *p = s->next;
            release(s);
            break;
        }
    pthread_mutex_unlock(&lock);
}

/* "mem:" digits "/": the form mf_mem_register gives. */
static bool mem_form(const char *path)
{
    if (strncmp(path, MEM_SCHEME, strlen(MEM_SCHEME)) != 0)
        return false;
    const char *p = path + strlen(MEM_SCHEME);
    if (*p < '0' || *p > '9')
        return false;
    while (*p >= '0' && *p <= '9')
        p++;
    return *p == '/';
}

int mf_mem_map(const char *path, mf_file *out, mf_status *st)
{
    if (!mem_form(path))
        return 0;
    int found = 0;
    pthread_mutex_lock(&lock);
    for (mem_source *s = sources; s; s = s->next)
        if (strcmp(s->path, path) == 0) {
            memset(out, 0, sizeof(*out));
            out->path = path;
            out->base = s->base;
            out->size = s->size;
            out->borrowed = true;
            found = 1;
            break;
        }
    pthread_mutex_unlock(&lock);
    if (!found)
        return mf_fail(st, MF_ERR_UNSUPPORTED, path, -1,
                       "a file beside an in-memory buffer: a model that spans several files "
                       "must be opened by path");
    return 1;
}
