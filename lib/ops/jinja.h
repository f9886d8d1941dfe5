/* jinja.h - judges a Jinja2 chat template without rendering it: a lexer
 * and parser for Jinja2's statement and expression grammar (jinja2's
 * lexer.py and parser.py, 3.x) and an abstract interpretation of the tree
 * that finds every path to a Python attribute the template could reach.
 * The rule (doc/scan.md, "Chat templates"): a dunder or private attribute
 * reached by any spelling, a Jinja global's internals, or a template
 * loaded by name is dangerous; what cannot be resolved to a constant or is
 * not Jinja2 as mfmt reads it is unknown. */
#ifndef MF_JINJA_H
#define MF_JINJA_H
#include "core/core.h"

typedef struct mf_jinja_finding {
    int severity;        /* MF_CODE_NOTE, MF_CODE_UNKNOWN or MF_CODE_DANGEROUS */
    uint64_t offset;     /* byte in the template */
    const char *message; /* valid during the call */
} mf_jinja_finding;
typedef void (*mf_jinja_fn)(void *ctx, const mf_jinja_finding *f);

/* Judges the template src[0..n) (UTF-8 text), handing each finding to fn.
 * Returns the worst severity found (MF_CODE_NOTE when it is safe). Never
 * runs anything; bounded in time and memory by n. Thread-safe. */
int mf_jinja_judge(const char *src, size_t n, mf_jinja_fn fn, void *ctx);

#endif
