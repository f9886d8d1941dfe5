/* strset.c - a set of borrowed C strings (FNV-1a, linear probing). */
#include "core/core.h"

#include <stdlib.h>

uint64_t mf_str_hash(const char *s)
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
        size_t k = mf_str_hash(s->slots[i]) & (cap - 1);
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
    for (size_t k = mf_str_hash(str) & (s->cap - 1); s->slots[k]; k = (k + 1) & (s->cap - 1))
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
    size_t k = mf_str_hash(str) & (s->cap - 1);
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

/* ------------------------------------------------------- tensor index */
int mf_tensor_index_build(const mf_model *m, mf_tensor_index *ix)
{
    memset(ix, 0, sizeof(*ix));
    ix->m = m;
    size_t cap = 64;
    while (cap < 2 * m->n_tensors + 2)
        cap *= 2;
    if (!(ix->slot = calloc(cap, sizeof(*ix->slot))))
        return -1;
    ix->cap = cap;
    for (size_t i = 0; i < m->n_tensors; i++) {
        size_t k = mf_str_hash(m->tensors[i].name) & (cap - 1);
        bool dup = false;
        for (; ix->slot[k] && !dup; k = (k + 1) & (cap - 1))
            dup = strcmp(m->tensors[ix->slot[k] - 1].name, m->tensors[i].name) == 0;
        if (!dup) /* the first of equal names wins, as in mf_tensor_find */
            ix->slot[k] = i + 1;
    }
    return 0;
}

const mf_tensor *mf_tensor_index_find(const mf_tensor_index *ix, const char *name)
{
    if (!ix->cap)
        return NULL;
    for (size_t k = mf_str_hash(name) & (ix->cap - 1); ix->slot[k]; k = (k + 1) & (ix->cap - 1))
        if (strcmp(ix->m->tensors[ix->slot[k] - 1].name, name) == 0)
            return &ix->m->tensors[ix->slot[k] - 1];
    return NULL;
}

void mf_tensor_index_free(mf_tensor_index *ix)
{
    free(ix->slot);
    memset(ix, 0, sizeof(*ix));
}
