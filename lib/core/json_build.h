/* json_build.h - building and dumping JSON with jansson so that running out
 * of memory is an error, never a silently shorter document. */
#ifndef MF_CORE_JSON_BUILD_H
#define MF_CORE_JSON_BUILD_H

#include <jansson.h>
#include <stdbool.h>

/* jansson's setters fail (-1, the value released) when out of memory or
 * given NULL, which is what a constructor gives when out of memory: these
 * count each failure in *bad, so a tree can be built call after call and
 * judged once. */
void mf_json_put(json_t *obj, const char *key, json_t *v, int *bad);
void mf_json_push(json_t *arr, json_t *v, int *bad);

/* json_dumps(j, flags), or NULL when any part of it failed. jansson 2.14's
 * dump ignores a failure to append an object's key (dump.c: dump_string's
 * result is not checked) and goes on, so json_dumps can return a document
 * without that key; here the first failure sticks and fails the whole. */
char *mf_json_dumps(const json_t *j, size_t flags);

/* json_loadb / json_load_file, or NULL with json_error_code(err) ==
 * json_error_out_of_memory when parsing may have lost a byte: jansson
 * 2.14's lexer ignores a failure to grow its token buffer (load.c: lex_save
 * drops the byte), so an allocation failure can turn "LlamaForCausalLM"
 * into "LlamaForCausalM" and still succeed. The text is parsed twice and
 * the trees compared (json_equal): a dropped byte shows as a difference. */
json_t *mf_json_loadb(const char *buf, size_t len, size_t flags, json_error_t *err);
json_t *mf_json_load_file(const char *path, size_t flags, json_error_t *err);
/* Is this jansson error an allocation failure? */
bool mf_json_error_is_oom(const json_error_t *err);

#endif /* MF_CORE_JSON_BUILD_H */
