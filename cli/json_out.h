/* json_out.h - writes JSON as it goes, in exactly the bytes that building
 * the document with jansson and printing it with cli_print_json
 * (JSON_INDENT(2), no ASCII escaping) would give, without building it: a
 * 100k-token vocabulary is streamed from the model's values instead of
 * becoming 100k jansson strings. tests/test_inspect_json.c checks the bytes
 * against jansson's own dump. */
#ifndef MF_JSON_OUT_H
#define MF_JSON_OUT_H
#include "cli.h"

#include <stdio.h>

#define JO_MAX_DEPTH 64

typedef struct jout {
    FILE *f;
    size_t n;
    int depth;
    bool after_key;
    unsigned count[JO_MAX_DEPTH]; /* values so far at each open level */
    char buf[1 << 16];
} jout;

void jo_init(jout *j, FILE *f);
void jo_finish(jout *j); /* the final newline, flushed */
void jo_begin_object(jout *j);
void jo_end_object(jout *j);
void jo_begin_array(jout *j);
void jo_end_array(jout *j);
/* false (nothing written) for a key that is not valid UTF-8, which
 * json_object_set_new would refuse; the caller then skips the value */
bool jo_key(jout *j, const char *key);
/* strings as cli_json_string gives them (invalid UTF-8 bytes: U+FFFD) */
void jo_string(jout *j, const char *s, size_t n);
void jo_int(jout *j, long long v);
void jo_real(jout *j, double v);
/* the bytes jansson prints for json_real(v) (v finite); returns the length */
int jo_format_real(double v, char b[64]);
void jo_bool(jout *j, bool v);
void jo_null(jout *j);
/* cli_json_value(v), written */
void jo_value(jout *j, const mf_value *v);
/* a jansson value, written (objects in their order) */
void jo_json(jout *j, const json_t *v);
/* key and value as json_object_set_new(obj, key, v) would add them
 * (nothing when v is NULL or the key invalid); v is released */
bool jo_key_json(jout *j, const char *key, json_t *v);

#endif
