/* keras_lambda.c - finds Keras Lambda layers in a model's architecture JSON
 * (Keras 2: the "model_config" root attribute; Keras 3: config.json). A
 * Lambda layer carries Python that Keras runs when it loads the model:
 * marshalled bytecode (Keras 2 function_type "lambda", Keras 3 a
 * "__lambda__" object with base64 "code") or a reference to a function. */
#include "formats/hdf5/keras.h"
#include "core/pickle.h"

#include <stdlib.h>

enum { MAX_JSON_DEPTH = 200 };

typedef struct finder {
    const char *source;
    mf_keras_lambda_fn fn;
    void *ctx;
    int found;
    int failed;
    char bad_json[320]; /* a config that cannot be read as Python's json does */
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

static void report(finder *f, const mf_keras_lambda *l)
{
    f->found++;
    if (f->fn && f->fn(f->ctx, l))
        f->failed = 1;
}

/* Is module.name something pickle's rules call dangerous (os.system,
 * builtins.eval, subprocess.*, ...), or a module of Python's builtins,
 * which Keras never serializes? */
static bool dangerous_name(const char *module, const char *name, const char **why)
{
    if (!name || !*name)
        name = "_";
    const char *gt = strrchr(name, '>'); /* registered names: "package>Name" */
    if (gt && gt[1])
        name = gt + 1;
    pk_global g = {.module = module, .name = name};
    pk_classify(&g);
    /* Keras's own markers ("__tensor__", "__numpy__"...) are dunder names
     * in Keras's modules: not attribute walks */
    size_t nl = strlen(name);
    bool marker = nl > 4 && name[0] == '_' && name[1] == '_' && name[nl - 1] == '_' &&
                  name[nl - 2] == '_' && !strchr(name, '.') &&
                  (strcmp(module, "keras") == 0 || strncmp(module, "keras.", 6) == 0);
    if (g.cls == PK_DANGEROUS && !marker) {
        *why = g.reason;
        return true;
    }
    if (strcmp(module, "builtins") == 0 || strcmp(module, "__builtin__") == 0 ||
        strncmp(module, "builtins.", 9) == 0) {
        *why = "a Python builtin, called by Keras as if it were a layer or function";
        return true;
    }
    return false;
}

/* CVE-2025-1550: Keras imports an object's "module" and takes its
 * class_name / registered_name (or, for functions, the name in "config")
 * from it, even in safe mode. */
static void check_module(finder *f, json_t *v)
{
    const char *module = str_or(json_object_get(v, "module"), NULL);
    if (!module)
        return;
    const char *cls = str_or(json_object_get(v, "class_name"), NULL);
    /* the function's own name first ("class_name": "function") */
    const char *names[] = {str_or(json_object_get(v, "config"), NULL),
                           str_or(json_object_get(v, "registered_name"), NULL), cls};
    for (size_t i = 0; i < 3; i++) {
        const char *why;
        if ((names[i] || i == 2) && dangerous_name(module, names[i], &why)) {
            char detail[160];
            snprintf(detail, sizeof(detail), "%.70s.%.70s (%s)", module, names[i] ? names[i] : "",
                     why);
            mf_keras_lambda l = {.layer = cls ? cls : "?", .source = f->source, .kind = "module",
                                 .detail = detail};
            report(f, &l);
            return;
        }
    }
}

/* Layers that call a function their config names or carries: Lambda;
 * tf.keras's TFOpLambda and SlicingOpLambda (a TensorFlow API symbol by
 * name, looked up when the model is loaded: tf.io.write_file,
 * tf.py_function... as readily as tf.math.add). */
static bool is_lambda_layer(const char *cls)
{
    return strcmp(cls, "Lambda") == 0 || strcmp(cls, "TFOpLambda") == 0 ||
           strcmp(cls, "SlicingOpLambda") == 0;
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
    check_module(f, v);
    if (strcmp(cls, "__lambda__") == 0 && f->source) {
        /* marshalled code anywhere (an activation, not only a Lambda layer) */
        json_t *cfg = json_object_get(v, "config");
        const char *code = str_or(json_object_get(cfg, "code"), "");
        char detail[160];
        snprintf(detail, sizeof(detail), "%.48s%s", code, strlen(code) > 48 ? "..." : "");
        mf_keras_lambda l = {.layer = "__lambda__", .source = f->source, .kind = "bytecode",
                             .detail = detail};
        report(f, &l);
    }
    /* marshalled code in any object's config (Keras 2's func_dump:
     * "function_type": "lambda"; a Lambda's "output_shape_type") */
    json_t *ocfg = json_object_get(v, "config");
    const char *ft = str_or(json_object_get(ocfg, "function_type"), "");
    const char *ot = str_or(json_object_get(ocfg, "output_shape_type"), "");
    if (f->source && (strcmp(ot, "lambda") == 0 || (strcmp(ft, "lambda") == 0 && !is_lambda_layer(cls)))) {
        mf_keras_lambda l = {.layer = str_or(json_object_get(ocfg, "name"), cls[0] ? cls : "?"),
                             .source = f->source, .kind = "bytecode",
                             .detail = strcmp(ot, "lambda") == 0 ? "output_shape" : "function"};
        report(f, &l);
    }
    if (is_lambda_layer(cls)) {
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
        report(f, &l);
        /* its function, reported once: the __lambda__ inside is part of it */
        const char *k;
        json_t *x;
        json_object_foreach(v, k, x)
            if (strcmp(k, "config") != 0)
                walk(f, x, depth + 1);
        json_t *c2 = json_object_get(v, "config");
        json_object_foreach(c2, k, x)
            if (strcmp(k, "function") != 0)
                walk(f, x, depth + 1);
        return;
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
    json_error_t err;
    json_t *j = mf_keras_json_load(v->as.s.ptr, v->as.s.len, &err);
    if (!j) {
        /* what Python's json might still read: never taken as harmless */
        snprintf(f->bad_json, sizeof(f->bad_json), "%s is not JSON mfmt can read as Python's "
                 "json would: %s", f->source, err.text);
        return 0;
    }
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
    if (f.bad_json[0]) {
        if (st)
            mf_fail(st, MF_ERR_FORMAT, m->path, -1, "%s", f.bad_json);
        return -1;
    }
    return f.found;
}

static int note_one(void *ctx, const mf_keras_lambda *l)
{
    mf_model *m = ctx;
    if (strcmp(l->kind, "module") == 0) {
        mf_model_note(m, "Keras object \"%s\" (%s) names %s: loading the model imports and "
                      "calls it", l->layer, l->source, l->detail);
        return 0;
    }
    mf_model_note(m, "Keras Lambda layer \"%s\" (%s) holds %s: loading the model runs it (%s)",
                  l->layer, l->source,
                  strcmp(l->kind, "bytecode") == 0 ? "marshalled Python bytecode"
                                                   : "a reference to a Python function",
                  l->detail);
    return 0;
}

int mf_keras_note_lambdas(mf_model *m)
{
    mf_status st;
    mf_status_init(&st);
    int rc = mf_keras_find_lambdas(m, note_one, m, &st);
    if (rc < 0 && st.code == MF_ERR_FORMAT) { /* an unreadable config: a note, not a failure */
        mf_model_note(m, "%s", st.msg);
        rc = 0;
    }
    mf_status_clear(&st);
    return rc < 0 ? -1 : 0;
}

/* ------------------------------------------------------------ scan hook */

typedef struct code_ctx {
    mf_code_fn fn;
    void *ctx;
} code_ctx;

static int lambda_to_code(void *ctx, const mf_keras_lambda *l)
{
    code_ctx *c = ctx;
    char msg[1024];
    if (strcmp(l->kind, "module") == 0) {
        snprintf(msg, sizeof(msg),
                 "Keras object \"%s\" (in %s) names %s: Keras imports the module and calls "
                 "the name when it loads the model, even in safe mode (CVE-2025-1550)",
                 l->layer, l->source, l->detail);
        mf_code_finding f = {MF_CODE_DANGEROUS, NULL, msg};
        c->fn(c->ctx, &f);
        return 0;
    }
    bool code = strcmp(l->kind, "bytecode") == 0 || strcmp(l->kind, "raw") == 0;
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

/* The may_hold_code hooks: a Keras archive always; an HDF5 file when it
 * has a Keras model_config attribute (its name appears in the bytes). */
bool mf_keras_may_hold_code(const uint8_t *b, uint64_t n)
{
    (void)b;
    (void)n;
    return true;
}

bool mf_hdf5_may_hold_keras_code(const uint8_t *b, uint64_t n)
{
    return memmem(b, (size_t)n, "model_config", 12) != NULL;
}
