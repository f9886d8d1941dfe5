/* pyjson.h - JSON text as CPython's json.dump(obj, f, indent=N) writes it
 * (ensure_ascii, the default separators with an indent: "," at line ends
 * and ": "), for files that Python programs write (mlx_lm's config.json
 * and model.safetensors.index.json). Objects keep jansson's insertion
 * order; floats are repr()'s shortest round-trip form (1e-05, 10000.0). */
#ifndef MF_PYJSON_H
#define MF_PYJSON_H
#include "core/core.h"

#include <jansson.h>

/* The text of j (malloc'd, NUL-terminated, no trailing newline, as
 * json.dump), or NULL when out of memory. */
char *mf_pyjson_dumps(const json_t *j, int indent);

/* Writes mf_pyjson_dumps(j, indent) to path through mf_atomic. */
int mf_pyjson_write(const char *path, const json_t *j, int indent, mf_status *st);

#endif
