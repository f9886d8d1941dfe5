/* hf_common.c - JSON files, Git LFS pointers and the weights choice of
 * Hugging Face model directories (declared in formats/formats.h, section
 * "Hugging Face directory files", and hf_int.h). */
#include "formats/hf/hf_int.h"
#include "core/json_build.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

#define JSON_LIMIT (1ull << 30)

json_t *mf_hf_load_json(const char *path, mf_status *st)
{
    char *buf;
    size_t len;
    if (mf_read_small_file(path, JSON_LIMIT, &buf, &len, st))
        return NULL;
    size_t skip = len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0 ? 3 : 0; /* BOM */
    json_error_t e;
    json_t *j = mf_json_loadb(buf + skip, len - skip, JSON_ALLOW_NUL, &e);
    if (!j && strstr(e.text, "too big"))
        /* Python ints have no size limit; keep the file, lose the precision */
        j = mf_json_loadb(buf + skip, len - skip, JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL, &e);
    free(buf);
    if (!j && mf_json_error_is_oom(&e))
        mf_oom(st, path);
    else if (!j)
        mf_fail(st, MF_ERR_FORMAT, path, (int64_t)(e.position + skip),
                "not valid JSON (line %d, column %d): %s", e.line, e.column, e.text);
    return j;
}

json_t *mf_hf_load_config(const char *dir, bool required, mf_status *st)
{
    char *path = mf_path_join_new(dir, "config.json");
    if (!path) {
        mf_oom(st, dir);
        return NULL;
    }
    json_t *j = NULL;
    if (mf_path_exists(path))
        j = mf_hf_load_json(path, st);
    else if (required)
        mf_fail(st, MF_ERR_FORMAT, path, -1, "config.json is missing");
    free(path);
    return j;
}

bool mf_hf_json_int(const json_t *v, int64_t *out)
{
    if (json_is_integer(v)) {
        *out = json_integer_value(v);
        return true;
    }
    if (json_is_boolean(v)) {
        *out = json_is_true(v);
        return true;
    }
    return false;
}

/* git-lfs docs/spec.md: a pointer is UTF-8 text of "key value\n" lines,
 * "version https://git-lfs.github.com/spec/v1" first, then sorted keys
 * ("oid sha256:...", "size N"); pointers are small (under 1024 bytes). */
bool mf_hf_lfs_pointer(const char *path, uint64_t *size, char oid[65])
{
    static const char head[] = "version https://git-lfs.github.com/spec/v1";
    FILE *f = mf_fopen_read(path); /* a FIFO: not waited on */
    if (!f)
        return false;
    char buf[1025];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    bool small = fgetc(f) == EOF;
    fclose(f);
    buf[n] = 0;
    if (!small || n < sizeof(head) - 1 || memcmp(buf, head, sizeof(head) - 1) != 0)
        return false;
    if (size)
        *size = 0;
    if (oid)
        oid[0] = 0;
    for (char *line = buf; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = 0;
        if (size && strncmp(line, "size ", 5) == 0) {
            errno = 0;
            char *end;
            unsigned long long v = strtoull(line + 5, &end, 10);
            if (!errno && end != line + 5)
                *size = v;
        } else if (oid && strncmp(line, "oid sha256:", 11) == 0) {
            size_t k = 0;
            while (k < 64 && isxdigit((unsigned char)line[11 + k]))
                k++;
            memcpy(oid, line + 11, k);
            oid[k] = 0;
        }
        line = nl ? nl + 1 : NULL;
    }
    return true;
}

mf_hf_weights mf_hf_pick_weights(const char *dir, const char **name)
{
    /* transformers modeling_utils (use_safetensors not False): SAFE_WEIGHTS_NAME,
     * SAFE_WEIGHTS_INDEX_NAME, WEIGHTS_NAME, WEIGHTS_INDEX_NAME, in that order */
    static const struct { const char *file; mf_hf_weights kind; } order[] = {
        {"model.safetensors", MF_HF_W_SAFETENSORS},
        {"model.safetensors.index.json", MF_HF_W_SAFETENSORS_INDEX},
        {"pytorch_model.bin", MF_HF_W_BIN},
        {"pytorch_model.bin.index.json", MF_HF_W_BIN_INDEX},
    };
    char path[4096];
    for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, order[i].file);
        if (mf_path_exists(path) && !mf_is_dir(path)) {
            if (name)
                *name = order[i].file;
            return order[i].kind;
        }
    }
    if (name)
        *name = NULL;
    return MF_HF_W_NONE;
}

/* ------------------------------------------------- JSON as model metadata */

static int json_to_value(mf_arena *a, json_t *v, mf_value *out, int depth);

static mf_vtype scalar_vtype(json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_STRING: return MF_V_STR;
    case JSON_INTEGER: return MF_V_I64;
    case JSON_REAL: return MF_V_F64;
    case JSON_TRUE: case JSON_FALSE: return MF_V_BOOL;
    default: return MF_V_NULL;
    }
}

/* Nested objects and mixed arrays become their compact JSON text. */
static int json_as_text(mf_arena *a, json_t *v, mf_value *out)
{
    char *s = mf_json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    if (!s)
        return -1;
    *out = mf_value_str(a, s, strlen(s));
    free(s);
    return out->type == MF_V_STR ? 0 : -1;
}

static int json_to_value(mf_arena *a, json_t *v, mf_value *out, int depth)
{
    memset(out, 0, sizeof(*out));
    switch (json_typeof(v)) {
    case JSON_STRING:
        *out = mf_value_str(a, json_string_value(v), json_string_length(v));
        return out->type == MF_V_STR ? 0 : -1;
    case JSON_INTEGER: *out = mf_value_int(json_integer_value(v)); return 0;
    case JSON_REAL: *out = mf_value_f64(json_real_value(v)); return 0;
    case JSON_TRUE: case JSON_FALSE: *out = mf_value_bool(json_is_true(v)); return 0;
    case JSON_NULL: out->type = MF_V_NULL; return 0;
    case JSON_OBJECT: return json_as_text(a, v, out);
    case JSON_ARRAY: break;
    }
    size_t n = json_array_size(v);
    mf_vtype et = n ? scalar_vtype(json_array_get(v, 0)) : MF_V_STR;
    for (size_t i = 0; i < n; i++)
        if (scalar_vtype(json_array_get(v, i)) != et || et == MF_V_NULL || depth > 0)
            return json_as_text(a, v, out);
    out->type = MF_V_ARR;
    out->as.arr.elem = et;
    out->as.arr.n = n;
    out->as.arr.items = mf_arena_calloc(a, n ? n : 1, sizeof(mf_value));
    if (!out->as.arr.items)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (json_to_value(a, json_array_get(v, i), &out->as.arr.items[i], depth + 1))
            return -1;
    return 0;
}

int mf_hf_meta_json(mf_model *m, const char *key, json_t *v, int flatten, mf_status *st)
{
    if (json_is_object(v) && flatten > 0) {
        const char *k;
        json_t *x;
        json_object_foreach(v, k, x) {
            char *sub = mf_arena_printf(m->arena, "%s.%s", key, k);
            if (!sub || mf_hf_meta_json(m, sub, x, flatten - 1, st))
                return sub ? -1 : mf_oom(st, m->path);
        }
        return 0;
    }
    mf_kv *kv = mf_model_add_meta(m, key, st);
    if (!kv)
        return -1;
    if (json_to_value(m->arena, v, &kv->v, 0))
        return mf_oom(st, m->path);
    return 0;
}

int mf_hf_meta_str(mf_model *m, const char *key, const char *s, mf_status *st)
{
    return mf_model_put_meta(m, key, mf_value_str(m->arena, s, strlen(s)), st);
}

int mf_hf_meta_int(mf_model *m, const char *key, int64_t v, mf_status *st)
{
    return mf_model_put_meta(m, key, mf_value_int(v), st);
}

int mf_hf_meta_bool(mf_model *m, const char *key, bool v, mf_status *st)
{
    return mf_model_put_meta(m, key, mf_value_bool(v), st);
}
