/* base.h - what every file of lib/ uses: errors (mf_status, mf_fail,
 * mf_breach), option structs, checked arithmetic, the arena, growable
 * arrays, string sets (not public; lib/core/core.h includes it).
 *
 * Errors: mf_fail() records a fatal error and returns -1; mf_breach() records
 * a breach and lets the reader go on (so validate can list them all). Every
 * message has the form "FILE: byte OFFSET: RULE" (offset < 0: no byte). */
#ifndef MF_CORE_BASE_H
#define MF_CORE_BASE_H

#include "mfmt.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#if defined(__GNUC__)
#define MF_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define MF_UNUSED __attribute__((unused))
#else
#define MF_PRINTF(a, b)
#define MF_UNUSED
#endif

/* Copies a caller's option struct (first field struct_size) over `dflt`
 * (already holding the defaults, dflt_size bytes): fields beyond the
 * caller's struct_size keep their defaults. NULL opts: defaults. -1 with
 * MF_ERR_USAGE when struct_size is 0 (the struct was not initialised). */
int mf_opts_copy(void *dflt, size_t dflt_size, const void *opts, const char *what,
                 mf_status *st);

/* Calls a caller's progress callback (NULL: nothing); non-zero from it
 * fails with MF_ERR_CANCELLED ("FILE: cancelled"). Returns 0 or -1. */
int mf_progress_report(mf_progress_fn fn, void *user, uint64_t done, uint64_t total,
                       const char *file, mf_status *st);

/* First line of every public function taking an mf_status: a NULL status
 * is allowed everywhere (mfmt.h), so it is replaced by a local one that is
 * cleared when the function returns. */
static inline void mf_status_local_end(mf_status *s) { mf_status_clear(s); }
#define MF_ST_GUARD(st)                                                       \
    mf_status mf_st_local_ __attribute__((cleanup(mf_status_local_end))) =    \
        MF_STATUS_INIT;                                                       \
    if (!(st))                                                                \
    (st) = &mf_st_local_

/* ------------------------------------------------------------- status */
int mf_fail(mf_status *st, mf_code code, const char *file, int64_t offset,
            const char *fmt, ...) MF_PRINTF(5, 6);
void mf_breach(mf_status *st, const char *file, int64_t offset,
               const char *fmt, ...) MF_PRINTF(4, 5);
int mf_failv(mf_status *st, mf_code code, const char *file, int64_t offset,
             const char *fmt, va_list ap);
/* Appends a message of another status (e.g. from a nested reader). */
void mf_status_merge(mf_status *dst, const mf_status *src);
static inline bool mf_ok(const mf_status *st) { return st->code == MF_OK; }
int mf_oom(mf_status *st, const char *file);

/* ---------------------------------------------------- checked arithmetic */
static inline bool mf_add_ovf(uint64_t a, uint64_t b, uint64_t *out)
{
    return __builtin_add_overflow(a, b, out);
}
static inline bool mf_mul_ovf(uint64_t a, uint64_t b, uint64_t *out)
{
    return __builtin_mul_overflow(a, b, out);
}
static inline uint64_t mf_align_up(uint64_t v, uint64_t a) /* a: power of 2 */
{
    return (v + a - 1) & ~(a - 1);
}

/* ---------------------------------------------------------------- arena */
/* Bump allocator that owns every string/array of a model; freed at once. */
typedef struct mf_arena mf_arena;
mf_arena *mf_arena_new(void);
void mf_arena_free(mf_arena *a);
void *mf_arena_alloc(mf_arena *a, size_t n);        /* zeroed, 16-aligned */
void *mf_arena_calloc(mf_arena *a, size_t n, size_t size); /* NULL on ovf */
char *mf_arena_strndup(mf_arena *a, const char *s, size_t n);
char *mf_arena_strdup(mf_arena *a, const char *s);
char *mf_arena_printf(mf_arena *a, const char *fmt, ...) MF_PRINTF(2, 3);

/* -------------------------------------------------------- growable array */
/* MF_VEC(T) v = {0}; MF_VEC_PUSH(v, x) -> 0 or -1 (out of memory). */
#define MF_VEC(T) struct { T *v; size_t n, cap; }
int mf_vec_grow(void **v, size_t *cap, size_t need, size_t elem);
#define MF_VEC_PUSH(vec, x)                                                  \
    (((vec).n < (vec).cap ||                                                 \
      mf_vec_grow((void **)&(vec).v, &(vec).cap, (vec).n + 1,                \
                  sizeof(*(vec).v)) == 0)                                    \
         ? ((vec).v[(vec).n++] = (x), 0)                                     \
         : -1)
#define MF_VEC_FREE(vec) (free((vec).v), (vec).v = NULL, (vec).n = (vec).cap = 0)

/* ------------------------------------------------------- string set */
/* Open-addressing set of borrowed strings, for duplicate-name checks in
 * O(n) (a hostile file may hold millions of names). */
typedef struct mf_strset {
    const char **slots;
    size_t cap, n;
} mf_strset;
/* 1: added; 0: already present; -1: out of memory. */
int mf_strset_add(mf_strset *s, const char *str);
bool mf_strset_has(const mf_strset *s, const char *str);
void mf_strset_free(mf_strset *s);
/* FNV-1a of a C string (the sets' hash). */
uint64_t mf_str_hash(const char *s);

/* A size such as "5GB", "500MiB", "2G", "1024" in bytes (see size.c). */
int mf_parse_size(const char *s, uint64_t *out);

#endif /* MF_CORE_BASE_H */
