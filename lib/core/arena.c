/* arena.c - bump allocator owning a model's strings, arrays and tables. */
#include "core/core.h"

#include <stdlib.h>

typedef struct chunk {
    struct chunk *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
} chunk;

struct mf_arena {
    chunk *head;
};

mf_arena *mf_arena_new(void)
{
    return calloc(1, sizeof(mf_arena));
}

void mf_arena_free(mf_arena *a)
{
    if (!a)
        return;
    for (chunk *c = a->head, *n; c; c = n) {
        n = c->next;
        free(c);
    }
    free(a);
}

void *mf_arena_alloc(mf_arena *a, size_t n)
{
    size_t need = (n + 15) & ~(size_t)15;
    if (need < n)
        return NULL;
    chunk *c = a->head;
    if (!c || c->cap - c->used < need) {
        size_t cap = need > 65536 ? need : 65536;
        if (cap > SIZE_MAX - sizeof(chunk))
            return NULL;
        chunk *nc = malloc(sizeof(chunk) + cap);
        if (!nc)
            return NULL;
        nc->used = 0;
        nc->cap = cap;
        /* Big blocks go behind the current chunk so its space stays usable. */
        if (c && need > 65536) {
            nc->next = c->next;
            c->next = nc;
        } else {
            nc->next = c;
            a->head = nc;
        }
        c = nc;
    }
    void *p = c->data + c->used;
    c->used += need;
    memset(p, 0, n);
    return p;
}

void *mf_arena_calloc(mf_arena *a, size_t n, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(n, size, &total))
        return NULL;
    return mf_arena_alloc(a, total ? total : 1);
}

char *mf_arena_strndup(mf_arena *a, const char *s, size_t n)
{
    if (n == SIZE_MAX)
        return NULL;
    char *d = mf_arena_alloc(a, n + 1);
    if (d && n)
        memcpy(d, s, n);
    return d;
}

char *mf_arena_strdup(mf_arena *a, const char *s)
{
    return mf_arena_strndup(a, s, strlen(s));
}

char *mf_arena_printf(mf_arena *a, const char *fmt, ...)
{
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *d = n >= 0 ? mf_arena_alloc(a, (size_t)n + 1) : NULL;
    if (d)
        vsnprintf(d, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    return d;
}

int mf_vec_grow(void **v, size_t *cap, size_t need, size_t elem)
{
    /* room already: no realloc (a same-size realloc is a copy under
     * AddressSanitizer, which made byte-by-byte appends quadratic) */
    if (*v && need <= *cap)
        return 0;
    size_t nc = *cap ? *cap : 8;
    while (nc < need) {
        if (nc > SIZE_MAX / 2)
            return -1;
        nc *= 2;
    }
    size_t bytes;
    if (__builtin_mul_overflow(nc, elem, &bytes))
        return -1;
    void *p = realloc(*v, bytes);
    if (!p)
        return -1;
    *v = p;
    *cap = nc;
    return 0;
}
