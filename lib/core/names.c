/* names.c - distinct names, first-seen order. */
#include "core/names.h"

#include <stdlib.h>

int mf_names_add(mf_names *set, mf_arena *a, const char *s, size_t n)
{
    char small[256];
    char *key = n < sizeof(small) ? small : malloc(n + 1);
    if (!key)
        return -1;
    if (n)
        memcpy(key, s, n);
    key[n] = 0; /* a name with a NUL byte is known by its part before it */
    int rc = 0;
    size_t max = set->max ? set->max : 4096;
    if (!mf_strset_has(&set->seen, key) && set->list.n < max) {
        mf_value v = mf_value_str(a, key, strlen(key));
        if (v.type != MF_V_STR || mf_strset_add(&set->seen, v.as.s.ptr) < 0 ||
            MF_VEC_PUSH(set->list, v))
            rc = -1;
    }
    if (key != small)
        free(key);
    return rc;
}

static int cmp_value(const void *a, const void *b)
{
    return strcmp(((const mf_value *)a)->as.s.ptr, ((const mf_value *)b)->as.s.ptr);
}

void mf_names_sort(mf_names *set)
{
    if (set->list.n > 1)
        qsort(set->list.v, set->list.n, sizeof(mf_value), cmp_value);
}

void mf_names_free(mf_names *set)
{
    mf_strset_free(&set->seen);
    MF_VEC_FREE(set->list);
}
