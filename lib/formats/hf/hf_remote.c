/* hf_remote.c - the code a Hugging Face directory asks transformers to
 * run: "auto_map" in config.json (and tokenizer, processor and feature
 * extractor configs) maps an Auto class to "module.Class", which
 * from_pretrained(..., trust_remote_code=True) imports from module.py in
 * the directory, or "repo--module.Class" from another repository
 * (transformers' dynamic_module_utils.get_class_from_dynamic_module).
 * Tokenizer entries may be a [slow, fast] list with nulls. */
#include "formats/hf/hf_int.h"
#include "formats/hf/shard_index.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const CONFIGS[] = {"config.json", "tokenizer_config.json",
                                      "processor_config.json", "preprocessor_config.json",
                                      "feature_extractor_config.json", "image_processor_config.json"};

static void one_ref(const char *dir, const char *json_name, const char *cls, const char *ref,
                    mf_hf_code_fn fn, void *ctx, int *count)
{
    mf_hf_code c = {.json_file = json_name, .auto_class = cls, .ref = ref};
    const char *sep = strstr(ref, "--");
    const char *mod = sep ? sep + 2 : ref;
    c.other_repo = sep != NULL;
    const char *dot = strrchr(mod, '.');
    size_t ml = dot ? (size_t)(dot - mod) : strlen(mod);
    char rel[512];
    if (ml >= sizeof(rel) - 4)
        ml = sizeof(rel) - 4;
    memcpy(rel, mod, ml);
    rel[ml] = 0;
    for (char *p = rel; *p; p++)
        if (*p == '.')
            *p = '/';
    strcat(rel, ".py");
    snprintf(c.py_file, sizeof(c.py_file), "%s", rel);
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, rel);
    c.present = !c.other_repo && mf_path_exists(path);
    (*count)++;
    if (fn)
        fn(ctx, &c);
}

int mf_hf_remote_code(const char *dir, const char *only, mf_hf_code_fn fn, void *ctx)
{
    int count = 0;
    for (size_t i = 0; i < sizeof(CONFIGS) / sizeof(CONFIGS[0]); i++) {
        if (only && strcmp(only, CONFIGS[i]) != 0)
            continue;
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", dir, CONFIGS[i]);
        if (!mf_path_exists(path))
            continue;
        mf_status st;
        mf_status_init(&st);
        json_t *j = mf_hf_load_json(path, &st);
        mf_status_clear(&st);
        json_t *am = j ? json_object_get(j, "auto_map") : NULL;
        const char *cls;
        json_t *v;
        if (json_is_object(am)) {
            json_object_foreach(am, cls, v) {
                if (json_is_string(v)) {
                    one_ref(dir, CONFIGS[i], cls, json_string_value(v), fn, ctx, &count);
                } else if (json_is_array(v)) {
                    size_t k;
                    json_t *x;
                    json_array_foreach(v, k, x)
                        if (json_is_string(x))
                            one_ref(dir, CONFIGS[i], cls, json_string_value(x), fn, ctx, &count);
                }
            }
        }
        json_decref(j);
    }
    return count;
}

/* ------------------------------------------------------------ scanning */

typedef struct code_ctx {
    mf_code_fn fn;
    void *ctx;
    const char *base;  /* the file scanned */
    bool is_config;
    int refs_to_me;
} code_ctx;

static void code_finding(code_ctx *cc, int severity, const char *fmt, ...) MF_PRINTF(3, 4);
static void code_finding(code_ctx *cc, int severity, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    mf_code_finding f = {severity, NULL, msg};
    cc->fn(cc->ctx, &f);
}

static void on_remote_code(void *ctx, const mf_hf_code *c)
{
    code_ctx *cc = ctx;
    if (cc->is_config && strcmp(c->json_file, cc->base) == 0 && !c->present && !c->other_repo)
        code_finding(cc, MF_CODE_NOTE,
                     "auto_map: %s is %s, but %s is not in this directory: loading it with "
                     "trust_remote_code=True fails here, nothing runs", c->auto_class, c->ref,
                     c->py_file);
    else if (cc->is_config && strcmp(c->json_file, cc->base) == 0)
        code_finding(cc, MF_CODE_UNKNOWN,
                     "auto_map: %s is %s, Python code that from_pretrained(..., "
                     "trust_remote_code=True) imports and runs (%s%s)", c->auto_class, c->ref,
                     c->other_repo ? "from another repository" : c->py_file,
                     c->other_repo ? "" : ", in this directory");
    else if (!cc->is_config && strcmp(c->py_file, cc->base) == 0)
        cc->refs_to_me++;
}

/* The code_around hook: a config's auto_map names Python files that
 * loading with trust_remote_code=True runs. The config and every .py file
 * of such a directory are reported, never safe. */
void mf_hf_code_around(const char *path, mf_code_fn fn, void *ctx)
{
    mf_shard_index_around(path, fn, ctx); /* shards outside the directory */
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    char dir[4096];
    snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    size_t bl = strlen(base);
    bool is_py = bl > 3 && strcmp(base + bl - 3, ".py") == 0;
    bool is_config = bl > 5 && strcmp(base + bl - 5, ".json") == 0;
    if (!is_py && !is_config)
        return;
    code_ctx cc = {fn, ctx, base, is_config, 0};
    int n = mf_hf_remote_code(dir, is_config ? base : NULL, on_remote_code, &cc);
    if (is_py && n > 0)
        code_finding(&cc, MF_CODE_UNKNOWN,
                     "Python code in a model directory whose config names remote code "
                     "(auto_map%s): from_pretrained(..., trust_remote_code=True) imports it",
                     cc.refs_to_me ? " names this file" : "");
}
