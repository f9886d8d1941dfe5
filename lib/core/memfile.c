/* memfile.c - a caller's buffer read as a file (mf_open_buffer): the buffer
 * is registered under a path no file has, "mem:ID/NAME", which mf_map_file
 * resolves to the buffer itself (borrowed: never copied, never unmapped).
 * Everything that reads a model by path (detection, the readers, the scan
 * at open) then works unchanged. A file beside it ("mem:ID/weights.bin",
 * what a format spanning several files would open next) is refused with
 * that reason rather than looked up on disk. */
#include "core/core.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct mem_source {
    char *path;
    const uint8_t *base;
    uint64_t size;
    struct mem_source *next;
} mem_source;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static mem_source *sources;
static atomic_ulong next_id;

#define MEM_SCHEME "mem:"

const char *mf_mem_register(const void *buf, size_t len, const char *name)
{
    mem_source *s = calloc(1, sizeof(*s));
    unsigned long id = atomic_fetch_add(&next_id, 1) + 1;
    int n = snprintf(NULL, 0, MEM_SCHEME "%lu/%s", id, name);
    if (!s || n < 0 || !(s->path = malloc((size_t)n + 1))) {
        free(s);
        return NULL;
    }
    snprintf(s->path, (size_t)n + 1, MEM_SCHEME "%lu/%s", id, name);
    s->base = len ? buf : NULL;
    s->size = len;
    pthread_mutex_lock(&lock);
    s->next = sources;
    sources = s;
    pthread_mutex_unlock(&lock);
    return s->path;
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
            free(s->path);
            free(s);
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
