/* edit.c - mf_edit: apply set/delete/rename edits to a model's metadata and
 * hand the result to its reader's rewrite hook, which writes a new header
 * and copies the tensor bytes unchanged. Names no format: what a format
 * allows is the hook's to check. */
#include "core/core.h"
#include "formats/formats.h"
#include "core/json_build.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>

typedef struct edit_state {
    const char *path;   /* the input, for messages */
    mf_model *m;
    mf_arena *a;        /* new values, change texts */
    MF_VEC(mf_kv) meta; /* the metadata being edited */
    MF_VEC(const char *) from, to; /* tensor renames */
    MF_VEC(mf_edit_change) changes;
    mf_status *st;
} edit_state;

static long find_key(const edit_state *e, const char *key)
{
    for (size_t i = 0; i < e->meta.n; i++)
        if (strcmp(e->meta.v[i].key, key) == 0)
            return (long)i;
    return -1;
}

static bool is_int_type(mf_vtype t)
{
    return t == MF_V_U8 || t == MF_V_I8 || t == MF_V_U16 || t == MF_V_I16 || t == MF_V_U32 ||
           t == MF_V_I32 || t == MF_V_U64 || t == MF_V_I64;
}

static bool is_signed_type(mf_vtype t)
{
    return t == MF_V_I8 || t == MF_V_I16 || t == MF_V_I32 || t == MF_V_I64;
}

/* The range of each integer type, as two's-complement widths. */
static bool int_fits(mf_vtype t, bool neg, uint64_t mag)
{
    static const struct { mf_vtype t; uint64_t max; } lim[] = {
        {MF_V_U8, 0xff}, {MF_V_I8, 0x7f}, {MF_V_U16, 0xffff}, {MF_V_I16, 0x7fff},
        {MF_V_U32, 0xffffffffu}, {MF_V_I32, 0x7fffffff}, {MF_V_U64, UINT64_MAX},
        {MF_V_I64, INT64_MAX},
    };
    for (size_t i = 0; i < sizeof(lim) / sizeof(lim[0]); i++) {
        if (lim[i].t != t)
            continue;
        if (neg)
            return is_signed_type(t) && mag <= lim[i].max + 1;
        return mag <= lim[i].max;
    }
    return false;
}

static const struct { const char *name; mf_vtype t; } exact_types[] = {
    {"u8", MF_V_U8}, {"i8", MF_V_I8}, {"u16", MF_V_U16}, {"i16", MF_V_I16},
    {"u32", MF_V_U32}, {"i32", MF_V_I32}, {"u64", MF_V_U64}, {"i64", MF_V_I64},
    {"f32", MF_V_F32}, {"f64", MF_V_F64}, {"bool", MF_V_BOOL}, {"str", MF_V_STR},
};

static const char *vtype_name(mf_vtype t)
{
    for (size_t i = 0; i < sizeof(exact_types) / sizeof(exact_types[0]); i++)
        if (exact_types[i].t == t)
            return exact_types[i].name;
    return t == MF_V_ARR ? "array" : "?";
}

static int bad_value(edit_state *e, const char *key, const char *fmt, const char *arg)
{
    char why[512];
    snprintf(why, sizeof(why), fmt, arg);
    return mf_fail(e->st, MF_ERR_USAGE, e->path, -1, "--set %s: %s", key, why);
}

/* Decimal, 0x hex or 0 octal, with an optional sign. */
static bool read_int(const char *s, bool *neg, uint64_t *mag)
{
    *neg = *s == '-';
    const char *digits = *neg || *s == '+' ? s + 1 : s;
    if (!*digits || *digits == '-' || *digits == '+' || *digits == ' ')
        return false;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(digits, &end, 0);
    *mag = x;
    return !*end && !errno;
}

/* t == MF_V_NULL: i32 when the value fits, else i64 (a new key). */
static int parse_int(edit_state *e, const char *key, const char *s, mf_vtype t, mf_value *v)
{
    bool neg;
    uint64_t mag;
    if (!read_int(s, &neg, &mag))
        return bad_value(e, key, "\"%s\" is not an integer", s);
    if (t == MF_V_NULL)
        t = int_fits(MF_V_I32, neg, mag) ? MF_V_I32 : MF_V_I64;
    if (!int_fits(t, neg, mag))
        return bad_value(e, key, "%s does not fit the type", s);
    v->type = t;
    if (is_signed_type(t))
        v->as.i = neg ? (int64_t)(0 - mag) : (int64_t)mag;
    else
        v->as.u = mag;
    return 0;
}

static int parse_float(edit_state *e, const char *key, const char *s, mf_vtype t, mf_value *v)
{
    char *end;
    errno = 0;
    double d = strtod(s, &end);
    if (!*s || *end || errno == ERANGE || !isfinite(d))
        return bad_value(e, key, "\"%s\" is not a finite number", s);
    if (t == MF_V_F32 && fabs(d) > 3.4028234663852886e38)
        return bad_value(e, key, "%s is out of the f32 range", s);
    v->type = t;
    v->as.f = t == MF_V_F32 ? (double)(float)d : d;
    return 0;
}

static int parse_bool(edit_state *e, const char *key, const char *s, mf_value *v)
{
    v->type = MF_V_BOOL;
    if (!strcmp(s, "true") || !strcmp(s, "1"))
        v->as.b = true;
    else if (!strcmp(s, "false") || !strcmp(s, "0"))
        v->as.b = false;
    else
        return bad_value(e, key, "\"%s\" is not true or false", s);
    return 0;
}

static int read_text_file(edit_state *e, const char *key, const char *file, mf_value *v)
{
    FILE *f = fopen(file, "rb");
    if (!f)
        return mf_fail(e->st, MF_ERR_IO, file, -1, "--set %s: cannot open: %s", key,
                       strerror(errno));
    MF_VEC(char) buf = {0};
    char chunk[65536];
    size_t k;
    int rc = 0;
    while (rc == 0 && (k = fread(chunk, 1, sizeof(chunk), f)) > 0) {
        if (mf_vec_grow((void **)&buf.v, &buf.cap, buf.n + k + 1, 1))
            rc = mf_oom(e->st, file);
        else {
            memcpy(buf.v + buf.n, chunk, k);
            buf.n += k;
        }
    }
    if (rc == 0 && ferror(f))
        rc = mf_fail(e->st, MF_ERR_IO, file, -1, "read failed");
    fclose(f);
    if (rc == 0)
        *v = mf_value_str(e->a, buf.v ? buf.v : "", buf.n);
    free(buf.v);
    return rc;
}

/* One JSON array element (or scalar) as a value of type t. */
static int json_to_value(edit_state *e, const char *key, json_t *j, mf_vtype t, mf_value *v)
{
    switch (t) {
    case MF_V_STR:
        if (!json_is_string(j))
            return bad_value(e, key, "%s", "the array mixes strings with other values");
        *v = mf_value_str(e->a, json_string_value(j), json_string_length(j));
        return 0;
    case MF_V_BOOL:
        if (!json_is_boolean(j))
            return bad_value(e, key, "%s", "the array mixes booleans with other values");
        *v = mf_value_bool(json_is_true(j));
        return 0;
    case MF_V_F32: case MF_V_F64:
        if (!json_is_number(j))
            return bad_value(e, key, "%s", "the array mixes numbers with other values");
        v->type = t;
        v->as.f = t == MF_V_F32 ? (double)(float)json_number_value(j) : json_number_value(j);
        return 0;
    default: {
        if (!json_is_integer(j))
            return bad_value(e, key, "%s", "an element is not an integer");
        json_int_t x = json_integer_value(j);
        uint64_t mag = x < 0 ? 0 - (uint64_t)x : (uint64_t)x;
        if (!int_fits(t, x < 0, mag))
            return bad_value(e, key, "%s", "an element does not fit the array's integer type");
        v->type = t;
        v->as.i = x;
        return 0;
    }
    }
}

/* The element type a JSON array asks for; `prefer` (the key's existing
 * element type, or MF_V_NULL) wins where it can hold the values. */
static mf_vtype json_array_type(json_t *arr, mf_vtype prefer)
{
    bool all_int = true, all_num = true, all_str = true, all_bool = true, fits32 = true;
    size_t i;
    json_t *x;
    json_array_foreach(arr, i, x) {
        all_int &= json_is_integer(x);
        all_num &= json_is_number(x);
        all_str &= json_is_string(x);
        all_bool &= json_is_boolean(x);
        if (json_is_integer(x) && (json_integer_value(x) > INT32_MAX ||
                                   json_integer_value(x) < INT32_MIN))
            fits32 = false;
    }
    if (json_array_size(arr) == 0)
        return prefer != MF_V_NULL ? prefer : MF_V_STR;
    if (all_str)
        return MF_V_STR;
    if (all_bool)
        return MF_V_BOOL;
    if (all_int)
        return is_int_type(prefer) ? prefer : fits32 ? MF_V_I32 : MF_V_I64;
    if (all_num)
        return prefer == MF_V_F64 ? MF_V_F64 : MF_V_F32;
    return MF_V_NULL;
}

static int value_from_json(edit_state *e, const char *key, json_t *j, const mf_value *old,
                           mf_value *v)
{
    if (json_is_array(j)) {
        mf_vtype prefer = old && old->type == MF_V_ARR ? old->as.arr.elem : MF_V_NULL;
        mf_vtype t = json_array_type(j, prefer);
        if (t == MF_V_NULL)
            return bad_value(e, key, "%s",
                             "a GGUF array holds one type: strings, integers, numbers or booleans");
        size_t n = json_array_size(j);
        mf_value *items = mf_arena_calloc(e->a, n ? n : 1, sizeof(*items));
        if (!items)
            return mf_oom(e->st, e->path);
        for (size_t i = 0; i < n; i++)
            if (json_to_value(e, key, json_array_get(j, i), t, &items[i]))
                return -1;
        v->type = MF_V_ARR;
        v->as.arr.elem = t;
        v->as.arr.n = n;
        v->as.arr.items = items;
        return 0;
    }
    if (json_is_string(j))
        return json_to_value(e, key, j, MF_V_STR, v);
    if (json_is_boolean(j))
        return json_to_value(e, key, j, MF_V_BOOL, v);
    if (json_is_integer(j))
        return json_to_value(e, key, j, old && is_int_type(old->type) ? old->type : MF_V_I32, v);
    if (json_is_real(j))
        return json_to_value(e, key, j, old && old->type == MF_V_F64 ? MF_V_F64 : MF_V_F32, v);
    return bad_value(e, key, "%s", "JSON null and objects have no GGUF type");
}

static int parse_json_text(edit_state *e, const char *key, const char *text, bool is_file,
                           const mf_value *old, mf_value *v)
{
    json_error_t je;
    json_t *j = is_file ? mf_json_load_file(text, JSON_DECODE_ANY, &je)
                        : mf_json_loadb(text, strlen(text), JSON_DECODE_ANY, &je);
    if (!j)
        return mf_fail(e->st, MF_ERR_USAGE, is_file ? text : e->path,
                       is_file ? je.position : -1, "--set %s: not JSON: %s", key, je.text);
    int rc = value_from_json(e, key, j, old, v);
    json_decref(j);
    return rc;
}

/* VALUE or TYPE:VALUE (mfmt.h, MF_EDIT_SET) against the key's old value. */
static int parse_set_value(edit_state *e, const char *key, const char *text, const mf_value *old,
                           mf_value *v)
{
    const char *colon = strchr(text, ':');
    size_t pl = colon ? (size_t)(colon - text) : 0;
    const char *rest = colon ? colon + 1 : text;
    if (colon) {
        if (pl == 3 && !strncmp(text, "int", 3))
            return parse_int(e, key, rest,
                             old && is_int_type(old->type) ? old->type : MF_V_NULL, v);
        if (pl == 5 && !strncmp(text, "float", 5))
            return parse_float(e, key, rest,
                               old && old->type == MF_V_F64 ? MF_V_F64 : MF_V_F32, v);
        if (pl == 4 && !strncmp(text, "file", 4))
            return read_text_file(e, key, rest, v);
        if (pl == 4 && !strncmp(text, "json", 4))
            return parse_json_text(e, key, rest, true, old, v);
        for (size_t i = 0; i < sizeof(exact_types) / sizeof(exact_types[0]); i++) {
            if (strlen(exact_types[i].name) != pl || strncmp(text, exact_types[i].name, pl))
                continue;
            mf_vtype t = exact_types[i].t;
            if (t == MF_V_STR) {
                *v = mf_value_str(e->a, rest, strlen(rest));
                return 0;
            }
            if (t == MF_V_BOOL)
                return parse_bool(e, key, rest, v);
            if (t == MF_V_F32 || t == MF_V_F64)
                return parse_float(e, key, rest, t, v);
            return parse_int(e, key, rest, t, v);
        }
    }
    /* no known TYPE: the key's existing type decides, for a new key the
     * type the format reads it as, else a string */
    const mf_edit_hooks *h = e->m->reader->edit;
    mf_value hint = {.type = h && h->key_type ? h->key_type(e->m, key) : MF_V_NULL};
    if (!old && hint.type != MF_V_NULL && hint.type != MF_V_ARR)
        old = &hint;
    if (!old || old->type == MF_V_STR) {
        *v = mf_value_str(e->a, text, strlen(text));
        return 0;
    }
    if (old->type == MF_V_BOOL)
        return parse_bool(e, key, text, v);
    if (old->type == MF_V_F32 || old->type == MF_V_F64)
        return parse_float(e, key, text, old->type, v);
    if (old->type == MF_V_ARR)
        return parse_json_text(e, key, text, false, old, v);
    if (is_int_type(old->type))
        return parse_int(e, key, text, old->type, v);
    return bad_value(e, key, "%s", "the key's type cannot be set from text");
}

/* A short, one-line description of a value for the change list. */
static const char *brief(edit_state *e, const mf_value *v)
{
    switch (v->type) {
    case MF_V_STR:
        if (v->as.s.len > 60 || memchr(v->as.s.ptr, '\n', v->as.s.len))
            return mf_arena_printf(e->a, "str (%zu bytes)", v->as.s.len);
        return mf_arena_printf(e->a, "str \"%s\"", v->as.s.ptr);
    case MF_V_BOOL: return v->as.b ? "bool true" : "bool false";
    case MF_V_F32: case MF_V_F64:
        return mf_arena_printf(e->a, "%s %.9g", vtype_name(v->type), v->as.f);
    case MF_V_ARR:
        return mf_arena_printf(e->a, "array of %zu %s", v->as.arr.n, vtype_name(v->as.arr.elem));
    default:
        if (is_signed_type(v->type))
            return mf_arena_printf(e->a, "%s %lld", vtype_name(v->type), (long long)v->as.i);
        return mf_arena_printf(e->a, "%s %llu", vtype_name(v->type), (unsigned long long)v->as.u);
    }
}

static int note_change(edit_state *e, mf_edit_kind k, const char *key, const char *before,
                       const char *after)
{
    if (mf_vec_grow((void **)&e->changes.v, &e->changes.cap, e->changes.n + 1,
                    sizeof(mf_edit_change)))
        return mf_oom(e->st, e->path);
    e->changes.v[e->changes.n++] = (mf_edit_change){k, mf_arena_strdup(e->a, key), before, after};
    return 0;
}

static int set_key(edit_state *e, const char *key, const mf_value *v)
{
    long i = find_key(e, key);
    if (i >= 0) {
        const char *before = brief(e, &e->meta.v[i].v);
        e->meta.v[i].v = *v;
        return note_change(e, MF_EDIT_SET, key, before, brief(e, v));
    }
    if (mf_vec_grow((void **)&e->meta.v, &e->meta.cap, e->meta.n + 1, sizeof(mf_kv)))
        return mf_oom(e->st, e->path);
    e->meta.v[e->meta.n++] = (mf_kv){.key = mf_arena_strdup(e->a, key), .v = *v};
    return note_change(e, MF_EDIT_SET, key, NULL, brief(e, v));
}

static int apply_set(edit_state *e, const mf_edit_op *op)
{
    long i = find_key(e, op->key);
    mf_value v;
    if (parse_set_value(e, op->key, op->text ? op->text : "", i >= 0 ? &e->meta.v[i].v : NULL,
                        &v))
        return -1;
    return set_key(e, op->key, &v);
}

static int apply_delete(edit_state *e, const mf_edit_op *op)
{
    long i = find_key(e, op->key);
    if (i < 0)
        return mf_fail(e->st, MF_ERR_USAGE, e->path, -1, "--delete %s: no such key", op->key);
    const char *before = brief(e, &e->meta.v[i].v);
    memmove(&e->meta.v[i], &e->meta.v[i + 1], (e->meta.n - (size_t)i - 1) * sizeof(mf_kv));
    e->meta.n--;
    return note_change(e, MF_EDIT_DELETE, op->key, before, NULL);
}

/* The name a tensor has after the renames so far. */
static bool tensor_name_taken(const edit_state *e, const char *name)
{
    for (size_t i = 0; i < e->to.n; i++)
        if (!strcmp(e->to.v[i], name))
            return true;
    bool renamed_away = false;
    for (size_t i = 0; i < e->from.n; i++)
        renamed_away |= !strcmp(e->from.v[i], name);
    return !renamed_away && mf_tensor_find(e->m, name);
}

static int apply_rename(edit_state *e, const mf_edit_op *op)
{
    const char *to = op->text ? op->text : "";
    if (!mf_tensor_find(e->m, op->key))
        return mf_fail(e->st, MF_ERR_USAGE, e->path, -1, "--rename-tensor %s: no such tensor",
                       op->key);
    for (size_t i = 0; i < e->from.n; i++)
        if (!strcmp(e->from.v[i], op->key))
            return mf_fail(e->st, MF_ERR_USAGE, e->path, -1,
                           "--rename-tensor %s: renamed twice", op->key);
    if (!*to || tensor_name_taken(e, to))
        return mf_fail(e->st, MF_ERR_USAGE, e->path, -1,
                       "--rename-tensor %s=%s: %s", op->key, to,
                       *to ? "a tensor of that name exists" : "the new name is empty");
    if (mf_vec_grow((void **)&e->from.v, &e->from.cap, e->from.n + 1, sizeof(char *)) ||
        mf_vec_grow((void **)&e->to.v, &e->to.cap, e->to.n + 1, sizeof(char *)))
        return mf_oom(e->st, e->path);
    e->from.v[e->from.n++] = mf_arena_strdup(e->a, op->key);
    e->to.v[e->to.n++] = mf_arena_strdup(e->a, to);
    return note_change(e, MF_EDIT_RENAME_TENSOR, op->key, NULL, e->to.v[e->to.n - 1]);
}

/* gguf-py's add_chat_template: a list of {name, template} gives
 * tokenizer.chat_template (the "default" one), tokenizer.chat_template.NAME
 * for the others (names with characters other than letters and digits
 * replaced by '_') and tokenizer.chat_templates listing those names. */
static int set_template_list(edit_state *e, const char *file, json_t *list)
{
    MF_VEC(mf_value) names = {0};
    json_t *def = NULL, *x;
    size_t i;
    int rc = 0;
    json_array_foreach(list, i, x) {
        json_t *jn = json_object_get(x, "name"), *jt = json_object_get(x, "template");
        if (!json_is_string(jt) || !json_is_string(jn) || !json_string_length(jn))
            continue;
        char *name = mf_arena_strdup(e->a, json_string_value(jn));
        if (!name)
            return mf_oom(e->st, file);
        for (char *c = name; *c; c++)
            if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9')))
                *c = '_';
        if (!strcmp(name, "default")) {
            def = jt;
            continue;
        }
        mf_value v = mf_value_str(e->a, json_string_value(jt), json_string_length(jt));
        char *key = mf_arena_printf(e->a, "tokenizer.chat_template.%s", name);
        if (!key || set_key(e, key, &v) ||
            mf_vec_grow((void **)&names.v, &names.cap, names.n + 1, sizeof(mf_value))) {
            rc = e->st->code != MF_OK ? -1 : mf_oom(e->st, file);
            break;
        }
        names.v[names.n++] = mf_value_str(e->a, name, strlen(name));
    }
    if (rc == 0 && names.n) {
        mf_value *items = mf_arena_calloc(e->a, names.n, sizeof(mf_value));
        if (!items)
            rc = mf_oom(e->st, file);
        else {
            memcpy(items, names.v, names.n * sizeof(mf_value));
            mf_value arr = {.type = MF_V_ARR,
                            .as.arr = {.elem = MF_V_STR, .n = names.n, .items = items}};
            rc = set_key(e, "tokenizer.chat_templates", &arr);
        }
    }
    free(names.v);
    if (rc == 0 && def) {
        mf_value v = mf_value_str(e->a, json_string_value(def), json_string_length(def));
        rc = set_key(e, "tokenizer.chat_template", &v);
    }
    return rc;
}

static int apply_template_from(edit_state *e, const mf_edit_op *op)
{
    const char *file = op->text ? op->text : "";
    json_error_t je;
    json_t *cfg = mf_json_load_file(file, JSON_DECODE_INT_AS_REAL, &je);
    if (!cfg)
        return mf_fail(e->st, errno == ENOENT ? MF_ERR_IO : MF_ERR_FORMAT, file,
                       je.position, "--chat-template-from: %s", je.text);
    json_t *t = json_object_get(cfg, "chat_template");
    int rc;
    if (json_is_string(t)) {
        mf_value v = mf_value_str(e->a, json_string_value(t), json_string_length(t));
        rc = set_key(e, "tokenizer.chat_template", &v);
    } else if (json_is_array(t)) {
        rc = set_template_list(e, file, t);
    } else {
        rc = mf_fail(e->st, MF_ERR_USAGE, file, -1,
                     "--chat-template-from: no \"chat_template\" string or list in this file");
    }
    json_decref(cfg);
    return rc;
}

static int apply_op(edit_state *e, const mf_edit_op *op)
{
    if (!op->key && op->kind != MF_EDIT_CHAT_TEMPLATE_FROM)
        return mf_fail(e->st, MF_ERR_USAGE, e->path, -1, "an edit without a key");
    switch (op->kind) {
    case MF_EDIT_SET: return apply_set(e, op);
    case MF_EDIT_DELETE: return apply_delete(e, op);
    case MF_EDIT_RENAME_TENSOR: return apply_rename(e, op);
    case MF_EDIT_CHAT_TEMPLATE_FROM: return apply_template_from(e, op);
    }
    return mf_fail(e->st, MF_ERR_USAGE, e->path, -1, "unknown edit kind %d", (int)op->kind);
}

static void edit_state_free(edit_state *e)
{
    free(e->meta.v);
    free(e->from.v);
    free(e->to.v);
    free(e->changes.v);
    mf_close(e->m);
}


static void fill_report(edit_state *e, mf_edit_report *r, uint64_t oh, uint64_t nh, uint64_t db)
{
    r->old_header_bytes = oh;
    r->new_header_bytes = nh;
    r->data_bytes = db;
    r->changes = e->changes.v;
    r->n_changes = e->changes.n;
    r->priv = e->a;
    e->changes.v = NULL;
    e->a = NULL;
}

int mf_edit(const char *in, const char *out, const mf_edit_op *ops, size_t n_ops,
            const mf_edit_opts *opts, mf_edit_report *report, mf_status *st)
{
    mf_status local;
    if (!st) {
        mf_status_init(&local);
        st = &local;
    }
    if (report)
        memset(report, 0, sizeof(*report));
    mf_edit_opts o = {.struct_size = sizeof(o)};
    edit_state e = {.path = in, .st = st};
    int rc = -1;
    if (mf_opts_copy(&o, sizeof(o), opts, "mf_edit_opts", st))
        goto done;
    unsigned flags = o.flags;
    if (!in || (n_ops && !ops)) {
        rc = mf_fail(st, MF_ERR_USAGE, in ? in : "(null)", -1, "mf_edit: no input or no edits");
        goto done;
    }
    if (mf_open_model(in, 0, &e.m, st))
        goto done;
    if (!e.m->reader || !e.m->reader->edit || !e.m->reader->edit->rewrite) {
        rc = mf_fail(st, MF_ERR_UNSUPPORTED, in, -1,
                     "%s files cannot be edited in place (GGUF and safetensors can)",
                     mf_format_name(e.m->format));
        goto done;
    }
    e.a = mf_arena_new();
    if (!e.a || mf_vec_grow((void **)&e.meta.v, &e.meta.cap, e.m->n_meta + 1, sizeof(mf_kv))) {
        rc = mf_oom(st, in);
        goto done;
    }
    if (e.m->n_meta) /* a file without metadata has no table to copy */
        memcpy(e.meta.v, e.m->meta, e.m->n_meta * sizeof(mf_kv));
    e.meta.n = e.m->n_meta;
    for (size_t i = 0; i < n_ops; i++)
        if (apply_op(&e, &ops[i]))
            goto done;
    uint64_t oh = 0, nh = 0, db = 0;
    mf_rewrite rw = {.out = out ? out : in, .meta = e.meta.v, .n_meta = e.meta.n,
                     .rename_from = e.from.v, .rename_to = e.to.v, .n_rename = e.from.n,
                     .flags = flags, .old_header_bytes = &oh, .new_header_bytes = &nh,
                     .data_bytes = &db};
    rc = e.m->reader->edit->rewrite(e.m, &rw, st);
    if (rc == 0 && report)
        fill_report(&e, report, oh, nh, db);
done:
    edit_state_free(&e);
    if (e.a)
        mf_arena_free(e.a);
    if (st == &local)
        mf_status_clear(&local);
    return rc;
}

void mf_edit_report_free(mf_edit_report *r)
{
    if (!r)
        return;
    free(r->changes);
    if (r->priv)
        mf_arena_free(r->priv);
    memset(r, 0, sizeof(*r));
}
