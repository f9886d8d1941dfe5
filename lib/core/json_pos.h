/* json_pos.h - byte positions inside JSON text jansson accepted. */
#ifndef MF_CORE_JSON_POS_H
#define MF_CORE_JSON_POS_H

#include "core/base.h"

/* ------------------------------------------------------ JSON positions */
/* For messages that name the byte of a JSON value (jansson keeps no
 * positions): scanners over text jansson accepted, within [0, n). */
typedef struct mf_json_step {
    const char *key; /* an object member (the last of that name), or NULL: */
    size_t index;    /* an array element */
} mf_json_step;
/* The offset of the value at `path` below the value at `at`, or -1. */
int64_t mf_json_locate(const char *t, size_t n, size_t at, const mf_json_step *path,
                       size_t depth);
/* The next member of the object whose '{' is at *i (start there; each call
 * moves *i on): offsets of its key's '"' and of its value. */
bool mf_json_next_member(const char *t, size_t n, size_t *i, size_t *key, size_t *value);
/* Does the string whose '"' is at i decode to `s`? */
bool mf_json_string_is(const char *t, size_t n, size_t i, const char *s);
/* The offset just past the value at i. */
size_t mf_json_skip_value(const char *t, size_t n, size_t i);

#endif /* MF_CORE_JSON_POS_H */
