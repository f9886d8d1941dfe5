/* names.h - the distinct op names of a graph, in the order first seen
 * (a hash set over copies in the model's arena; a hostile graph may hold
 * millions of nodes). */
#ifndef MF_NAMES_H
#define MF_NAMES_H
#include "core/core.h"

typedef struct mf_names {
    mf_strset seen;
    MF_VEC(mf_value) list; /* MF_V_STR, first-seen order */
    size_t max;            /* at most this many kept (0: 4096) */
} mf_names;

/* Adds s[0..n) unless present or the list is full; 0, or -1 out of memory. */
int mf_names_add(mf_names *set, mf_arena *a, const char *s, size_t n);
void mf_names_sort(mf_names *set);
void mf_names_free(mf_names *set);
#endif
