/* json_build.c - JSON building and dumping that fail whole (json_build.h). */
#include "core/json_build.h"
#include "core/model.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void mf_json_put(json_t *obj, const char *key, json_t *v, int *bad)
{
    *bad += json_object_set_new(obj, key, v) != 0;
}

void mf_json_push(json_t *arr, json_t *v, int *bad)
{
    *bad += json_array_append_new(arr, v) != 0;
}

typedef struct dump_buf {
    char *p;
    size_t len, cap;
    bool failed; /* sticky: once a chunk is lost, every later one fails too */
} dump_buf;

static int append_chunk(const char *s, size_t n, void *data)
{
    dump_buf *b = data;
    if (b->failed)
        return -1;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *q = realloc(b->p, cap);
        if (!q) {
            b->failed = true;
            return -1;
        }
        b->p = q, b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
    return 0;
}

char *mf_json_dumps(const json_t *j, size_t flags)
{
    dump_buf b = {0};
    if (json_dump_callback(j, append_chunk, &b, flags) != 0 || b.failed || !b.p) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

static json_t *lost_bytes(json_t *a, json_t *b, json_error_t *err)
{
    json_decref(a);
    json_decref(b);
    if (err) {
        memset(err, 0, sizeof(*err));
        snprintf(err->text, sizeof(err->text), "out of memory");
        err->text[JSON_ERROR_TEXT_LENGTH - 1] = (char)json_error_out_of_memory; /* jansson's slot */
    }
    return NULL;
}

static json_t *confirmed(json_t *first, json_t *second, json_error_t *err)
{
    if (!first || (second && json_equal(first, second))) {
        json_decref(second);
        return first;
    }
    return lost_bytes(first, second, err);
}

json_t *mf_json_loadb(const char *buf, size_t len, size_t flags, json_error_t *err)
{
    json_t *first = json_loadb(buf, len, flags, err);
    return confirmed(first, first ? json_loadb(buf, len, flags, NULL) : NULL, err);
}

json_t *mf_json_load_file(const char *path, size_t flags, json_error_t *err)
{
    /* read through mf_fopen_read (a FIFO is not waited on), twice as
     * json_load_file would be */
    FILE *f = mf_fopen_read(path);
    if (!f)
        return json_load_file(path, flags, err); /* its own "unable to open" error */
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        fclose(f);
        if (err) {
            memset(err, 0, sizeof(*err));
            err->line = err->column = -1;
            snprintf(err->text, sizeof(err->text), "%s is not a regular file", path);
            snprintf(err->source, sizeof(err->source), "%.79s", path);
        }
        return NULL;
    }
    json_t *first = json_loadf(f, flags, err), *second = NULL;
    if (first) {
        rewind(f);
        second = json_loadf(f, flags, NULL);
    }
    fclose(f);
    return confirmed(first, second, err);
}

bool mf_json_error_is_oom(const json_error_t *err)
{
    return json_error_code(err) == json_error_out_of_memory;
}
