/* file.c - read-only mappings and small path helpers. */
#include "core/core.h"
#include "core/remote.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <dirent.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int mf_open_read(const char *path)
{
    if (mf_mem_shadows(path) || mf_mem_is_source(path)) {
        errno = ENOENT; /* beside an in-memory buffer (memfile.c): nothing */
        return -1;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd >= 0) {
        int fl = fcntl(fd, F_GETFL);
        if (fl >= 0)
            fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    }
    return fd;
}

FILE *mf_fopen_read(const char *path)
{
    int fd = mf_open_read(path);
    FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
    if (fd >= 0 && !f)
        close(fd);
    return f;
}

int mf_map_file(const char *path, mf_file *out, mf_status *st)
{
    if (mf_is_url(path)) /* read by HTTP ranges as it is needed */
        return mf_map_remote(path, out, st);
    int alias = mf_remote_alias_map(path, out, st); /* a remote repo's weights file */
    if (alias != 1)
        return alias;
    int mem = mf_mem_map(path, out, st); /* a caller's buffer (mf_open_buffer) */
    if (mem)
        return mem < 0 ? -1 : 0;
    memset(out, 0, sizeof(*out));
    out->path = path;
    /* a FIFO named where a file is expected (a shard, a DCP chunk file)
     * would block open() until a writer came; it is refused below as not
     * a regular file */
    int fd = mf_open_read(path);
    if (fd < 0)
        return mf_fail(st, MF_ERR_IO, path, -1, "cannot open: %s", strerror(errno));
    struct stat sb = {0}; /* st_mode read below even when fstat failed */
    int statted = fstat(fd, &sb) == 0, e = statted ? 0 : errno;
    if (!statted || !S_ISREG(sb.st_mode)) {
        close(fd);
        return mf_fail(st, MF_ERR_IO, path, -1, "not a regular file%s%s%s",
                       S_ISDIR(sb.st_mode) ? " (a directory)"
                       : S_ISFIFO(sb.st_mode) ? " (a FIFO)" : "", e ? ": " : "",
                       e ? strerror(e) : "");
    }
    out->size = (uint64_t)sb.st_size;
    out->dev = (uint64_t)sb.st_dev;
    out->ino = (uint64_t)sb.st_ino;
    if (out->size > 0) {
        void *p = mmap(NULL, (size_t)out->size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            int e = errno;
            close(fd);
            return mf_fail(st, MF_ERR_IO, path, -1, "cannot map: %s", strerror(e));
        }
        out->base = p;
    }
    close(fd);
    return 0;
}

void mf_unmap_file(mf_file *f)
{
    if (f->borrowed) {
        f->base = NULL;
        f->size = 0;
        return;
    }
    if (mf_unmap_remote(f))
        return;
    if (f->base && f->size)
        munmap((void *)f->base, (size_t)f->size);
    f->base = NULL;
    f->size = 0;
}

bool mf_is_dir(const char *path)
{
    if (mf_remote_alias_of(path) || mf_mem_shadows(path) || mf_mem_is_source(path))
        return false;
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

bool mf_path_exists(const char *path)
{
    if (mf_remote_alias_of(path) || mf_mem_is_source(path))
        return true;
    if (mf_mem_shadows(path))
        return false; /* beside an in-memory buffer: never a file on disk */
    struct stat sb;
    return stat(path, &sb) == 0;
}

DIR *mf_opendir(const char *path)
{
    if (mf_mem_shadows(path) || mf_mem_is_source(path)) {
        errno = ENOENT; /* the folder of an in-memory buffer: not the disk's */
        return NULL;
    }
    return opendir(path);
}

char *mf_path_join(mf_arena *a, const char *dir, const char *name)
{
    size_t n = strlen(dir);
    bool slash = n > 0 && dir[n - 1] == '/';
    return mf_arena_printf(a, "%s%s%s", dir, slash ? "" : "/", name);
}

char *mf_path_join_new(const char *dir, const char *name)
{
    size_t n = strlen(dir), k = strlen(name);
    bool slash = n > 0 && dir[n - 1] == '/';
    char *p = malloc(n + k + 2);
    if (p)
        snprintf(p, n + k + 2, "%s%s%s", dir, slash ? "" : "/", name);
    return p;
}

int mf_read_small_file(const char *path, size_t limit, char **out, size_t *len,
                       mf_status *st)
{
    *out = NULL;
    FILE *f = mf_fopen_read(path); /* a FIFO: refused below, not waited on */
    if (!f)
        return mf_fail(st, MF_ERR_IO, path, -1, "cannot open: %s", strerror(errno));
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        fclose(f);
        return mf_fail(st, MF_ERR_IO, path, -1, "not a regular file");
    }
    if ((uint64_t)sb.st_size > limit) {
        fclose(f);
        return mf_fail(st, MF_ERR_FORMAT, path, -1,
                       "file is %lld bytes, more than the %zu this reader accepts",
                       (long long)sb.st_size, limit);
    }
    size_t n = (size_t)sb.st_size;
    char *buf = malloc(n + 1);
    if (!buf) {
        fclose(f);
        return mf_oom(st, path);
    }
    size_t got = n ? fread(buf, 1, n, f) : 0;
    fclose(f);
    if (got != n) {
        free(buf);
        return mf_fail(st, MF_ERR_IO, path, -1, "short read");
    }
    buf[n] = 0;
    *out = buf;
    if (len)
        *len = n;
    return 0;
}
