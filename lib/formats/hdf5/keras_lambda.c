/* keras_lambda.c - finds Keras Lambda layers in a model's architecture JSON
 * (Keras 2: the "model_config" root attribute; Keras 3: config.json). A
 * Lambda layer carries Python that Keras runs when it loads the model:
 * marshalled bytecode (Keras 2 function_type "lambda", Keras 3 a
 * "__lambda__" object with base64 "code") or a reference to a function. */
#include "formats/hdf5/keras.h"

#include <jansson.h>
#include <stdlib.h>

enum { MAX_JSON_DEPTH = 200 };

typedef struct finder {
    const char *source;
    mf_keras_lambda_fn fn;
    void *ctx;
    int found;
    int failed;
} finder;

static const char *str_or(json_t *v, const char *dflt)
{
    return json_is_string(v) ? json_string_value(v) : dflt;
}

/* The kind and detail of a Lambda's "function" field. */
static void describe(json_t *cfg, char *detail, size_t cap, const char **kind)
{
    json_t *fn = json_object_get(cfg, "function");
    const char *ftype = str_or(json_object_get(cfg, "function_type"), NULL);
    *kind = "function";
    detail[0] = '\0';
    if (json_is_array(fn)) { /* Keras 2: [code, defaults, closure] */
        const char *code = str_or(json_array_get(fn, 0), "");
        *kind = ftype && strcmp(ftype, "lambda") == 0 ? "bytecode" : ftype ? ftype : "bytecode";
        snprintf(detail, cap, "%.48s%s", code, strlen(code) > 48 ? "..." : "");
    } else if (json_is_object(fn)) { /* Keras 3: a serialized object */
        const char *cls = str_or(json_object_get(fn, "class_name"), "");
        json_t *fcfg = json_object_get(fn, "config");
        if (strcmp(cls, "__lambda__") == 0) {
            const char *code = str_or(json_object_get(fcfg, "code"), "");
            *kind = "bytecode";
            snprintf(detail, cap, "%.48s%s", code, strlen(code) > 48 ? "..." : "");
        } else {
            snprintf(detail, cap, "%s.%s", str_or(json_object_get(fn, "module"), "?"),
                     json_is_string(fcfg) ? json_string_value(fcfg) : cls);
        }
    } else if (json_is_string(fn)) {
        *kind = ftype && strcmp(ftype, "lambda") == 0 ? "bytecode" : ftype ? ftype : "function";
        snprintf(detail, cap, "%.64s", json_string_value(fn));
    }
}

static void walk(finder *f, json_t *v, int depth)
{
    if (f->failed || depth > MAX_JSON_DEPTH)
        return;
    if (json_is_array(v)) {
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x)
            walk(f, x, depth + 1);
        return;
    }
    if (!json_is_object(v))
        return;
    const char *cls = str_or(json_object_get(v, "class_name"), "");
    if (strcmp(cls, "Lambda") == 0) {
        json_t *cfg = json_object_get(v, "config");
        char detail[160];
        const char *kind;
        describe(cfg, detail, sizeof(detail), &kind);
        mf_keras_lambda l = {
            .layer = str_or(json_object_get(cfg, "name"), "?"),
            .source = f->source,
            .kind = kind,
            .detail = detail,
        };
        f->found++;
        if (f->fn && f->fn(f->ctx, &l))
            f->failed = 1;
    }
    const char *k;
    json_t *x;
    json_object_foreach(v, k, x)
        walk(f, x, depth + 1);
}

static int scan_text(finder *f, const mf_value *v)
{
    if (!v || v->type != MF_V_STR)
        return 0;
    json_t *j = json_loadb(v->as.s.ptr, v->as.s.len, 0, NULL);
    if (!j)
        return 0; /* not JSON: no architecture to look at */
    walk(f, j, 0);
    json_decref(j);
    return 0;
}

int mf_keras_find_lambdas(const mf_model *m, mf_keras_lambda_fn fn, void *ctx, mf_status *st)
{
    static const char *const keys[] = {"model_config", "config.json"};
    finder f = {.fn = fn, .ctx = ctx};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        f.source = keys[i];
        scan_text(&f, mf_meta_get(m, keys[i]));
        if (f.failed) {
            if (st && st->code == MF_OK)
                mf_fail(st, MF_ERR_USAGE, m->path, -1, "Lambda layer callback failed");
            return -1;
        }
    }
    return f.found;
}

static int note_one(void *ctx, const mf_keras_lambda *l)
{
    mf_model *m = ctx;
    mf_model_note(m, "Keras Lambda layer \"%s\" (%s) holds %s: loading the model runs it (%s)",
                  l->layer, l->source,
                  strcmp(l->kind, "bytecode") == 0 ? "marshalled Python bytecode"
                                                   : "a reference to a Python function",
                  l->detail);
    return 0;
}

int mf_keras_note_lambdas(mf_model *m)
{
    return mf_keras_find_lambdas(m, note_one, m, NULL) < 0 ? -1 : 0;
}

/* ------------------------------------------------------------ scan hook */

typedef struct code_ctx {
    mf_code_fn fn;
    void *ctx;
} code_ctx;

static int lambda_to_code(void *ctx, const mf_keras_lambda *l)
{
    code_ctx *c = ctx;
    bool code = strcmp(l->kind, "bytecode") == 0 || strcmp(l->kind, "raw") == 0;
    char msg[1024];
    snprintf(msg, sizeof(msg), "Keras Lambda layer \"%s\" (%s, in %s): %s", l->layer, l->kind,
             l->source, code ? "loading the model runs the Python code it carries"
                             : "loading the model calls a function by name");
    mf_code_finding f = {code ? MF_CODE_DANGEROUS : MF_CODE_UNKNOWN, NULL, msg};
    c->fn(c->ctx, &f);
    return 0;
}

int mf_keras_find_code(const mf_model *m, mf_code_fn fn, void *ctx, mf_status *st)
{
    code_ctx c = {fn, ctx};
    mf_status sub;
    mf_status_init(&sub);
    if (mf_keras_find_lambdas(m, lambda_to_code, &c, &sub) < 0) {
        mf_fail(st, sub.code, NULL, -1, "the Keras architecture cannot be read: %s", sub.msg);
        mf_status_clear(&sub);
        return -1;
    }
    return 0;
}
