/* npy_literal.h - Python literals as ast.literal_eval reads them, for the
 * .npy header (npy_literal.c). Values live in an arena. */
#ifndef MF_NPY_LITERAL_H
#define MF_NPY_LITERAL_H
#include "core/core.h"

typedef enum lit_kind {
    LIT_STR, LIT_BYTES, LIT_INT, LIT_FLOAT, LIT_COMPLEX, LIT_BOOL, LIT_NONE, LIT_ELLIPSIS,
    LIT_TUPLE, LIT_LIST, LIT_DICT, LIT_SET,
} lit_kind;

typedef struct lit lit;
struct lit {
    lit_kind kind;
    const char *s; /* STR (UTF-8), BYTES: the value; INT FLOAT COMPLEX: the text */
    size_t n;
    uint64_t u;    /* INT: magnitude (when !big); BOOL: 0 or 1 */
    bool neg, big; /* INT: negative; beyond 64 bits */
    lit **v;       /* TUPLE LIST SET: nv items; DICT: nv pairs, v[2k] key, v[2k+1] value */
    size_t nv;
};

enum { LIT_REFUSED = 1, LIT_UNSURE = 2, LIT_NOMEM = 3 };

typedef struct lit_error {
    int kind;        /* LIT_REFUSED: Python refuses the text too; LIT_UNSURE: mfmt cannot tell;
                        LIT_NOMEM: out of memory */
    const char *why; /* static */
    size_t pos;      /* where, in the text */
} lit_error;

/* Parses s[0..n) as one literal (filter_l: drop an 'L' after a number, as
 * numpy's _filter_header does for versions 1.0 and 2.0). 0, or -1 with err. */
int lit_parse(const uint8_t *s, size_t n, bool filter_l, mf_arena *a, lit **out, lit_error *err);

bool lit_is_str(const lit *v, const char *s);
/* Does any string or bytes value inside v hold one of `chars`? */
bool lit_any_str_has(const lit *v, const char *chars, int depth);
#endif
