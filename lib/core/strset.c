/* strset.c - a set of borrowed C strings (FNV-1a, linear probing). */
#include "core/core.h"

#include <stdlib.h>

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
    return h;
}

static int grow(mf_strset *s)
{
    size_t cap = s->cap ? s->cap * 2 : 64;
    const char **slots = calloc(cap, sizeof(*slots));
    if (!slots)
        return -1;
    for (size_t i = 0; i < s->cap; i++) {
        if (!s->slots[i])
            continue;
        size_t k = fnv1a(s->slots[i]) & (cap - 1);
        while (slots[k])
            k = (k + 1) & (cap - 1);
        slots[k] = s->slots[i];
    }
    free(s->slots);
    s->slots = slots;
    s->cap = cap;
    return 0;
}

bool mf_strset_has(const mf_strset *s, const char *str)
{
    if (!s->cap)
        return false;
    for (size_t k = fnv1a(str) & (s->cap - 1); s->slots[k]; k = (k + 1) & (s->cap - 1))
        if (strcmp(s->slots[k], str) == 0)
            return true;
    return false;
}

int mf_strset_add(mf_strset *s, const char *str)
{
    if (mf_strset_has(s, str))
        return 0;
    if ((s->n + 1) * 2 > s->cap && grow(s))
        return -1;
    size_t k = fnv1a(str) & (s->cap - 1);
    while (s->slots[k])
        k = (k + 1) & (s->cap - 1);
    s->slots[k] = str;
    s->n++;
    return 1;
}

void mf_strset_free(mf_strset *s)
{
    free(s->slots);
    memset(s, 0, sizeof(*s));
}
