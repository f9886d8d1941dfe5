/* scan_template.c - where chat templates are found, for scan and
 * mf_open's verdict; jinja.c judges each.
 *
 * Consumers that render them: llama-cpp-python renders a GGUF's
 * tokenizer.chat_template (and the named tokenizer.chat_template.NAME
 * ones) with Jinja2 (CVE-2024-34359: a plain Environment before 0.2.72);
 * transformers renders tokenizer_config.json's chat_template (a string, or
 * a list of {"name", "template"}), chat_template.json's and
 * chat_template.jinja (tokenization_utils_base.py, processing_utils.py)
 * in its sandbox, whose escapes are the same constructs. */
#include "ops/scan_template.h"

#include "formats/formats.h"
#include "ops/jinja.h"

#include <jansson.h>

#define TEMPLATE_KEY "tokenizer.chat_template"

typedef struct tctx {
    mf_template_fn fn;
    void *ctx;
    const char *where;
    int64_t file_base; /* file offset of the template's byte 0; -1 */
    int worst;
} tctx;

static void on_jinja(void *ctx, const mf_jinja_finding *f)
{
    tctx *t = ctx;
    if (f->severity > t->worst)
        t->worst = f->severity;
    if (!t->fn)
        return;
    mf_template_finding x = {
        .severity = f->severity,
        .where = t->where,
        .offset = (int64_t)f->offset,
        .file_offset = t->file_base >= 0 ? t->file_base + (int64_t)f->offset : -1,
        .message = f->message,
    };
    t->fn(t->ctx, &x);
}

static int judge(const char *text, size_t n, const char *where, int64_t file_base,
                 mf_template_fn fn, void *ctx)
{
    tctx t = {fn, ctx, where, file_base, MF_CODE_NOTE};
    mf_jinja_judge(text, n, on_jinja, &t);
    if (fn && t.worst == MF_CODE_NOTE) {
        mf_template_finding x = {MF_CODE_NOTE, where, -1, -1,
                                 "a chat template: parsed as Jinja2, reaches no Python internals"};
        fn(ctx, &x);
    }
    return t.worst;
}

static bool is_template_key(const char *key)
{
    size_t n = strlen(TEMPLATE_KEY);
    return strncmp(key, TEMPLATE_KEY, n) == 0 && (key[n] == 0 || key[n] == '.');
}

static int judge_meta(const mf_model *m, mf_template_fn fn, void *ctx)
{
    int worst = MF_CODE_NOTE;
    for (size_t i = 0; i < m->n_meta; i++) {
        const mf_kv *kv = &m->meta[i];
        if (!is_template_key(kv->key))
            continue;
        if (kv->v.type != MF_V_STR) {
            if (fn) {
                mf_template_finding x = {MF_CODE_NOTE, kv->key, -1, -1,
                                         "not a string: no consumer renders it"};
                fn(ctx, &x);
            }
            continue;
        }
        int w = judge(kv->v.as.s.ptr, kv->v.as.s.len, kv->key, -1, fn, ctx);
        if (w > worst)
            worst = w;
    }
    return worst;
}

int mf_model_templates_verdict(const mf_model *m)
{
    const mf_reader *r = mf_reader_for(m->format);
    if (!r || !r->meta_templates)
        return MF_CODE_NOTE;
    return judge_meta(m, NULL, NULL);
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* "chat_template" of a JSON file: a string, or a list of {name, template}. */
static void judge_json(const char *path, mf_template_fn fn, void *ctx)
{
    mf_status st;
    mf_status_init(&st);
    json_t *j = mf_hf_load_json(path, &st);
    json_t *ct = j ? json_object_get(j, "chat_template") : NULL;
    if (!j) {
        mf_status_clear(&st);
        return; /* not JSON: no consumer reads a template out of it */
    }
    if (json_is_string(ct)) {
        judge(json_string_value(ct), json_string_length(ct), "chat_template", -1, fn, ctx);
    } else if (json_is_array(ct)) {
        size_t i;
        json_t *e;
        json_array_foreach(ct, i, e) {
            json_t *name = json_object_get(e, "name"), *t = json_object_get(e, "template");
            char where[300];
            snprintf(where, sizeof(where), "chat_template[%s]",
                     json_is_string(name) ? json_string_value(name) : "?");
            if (json_is_string(t)) {
                judge(json_string_value(t), json_string_length(t), where, -1, fn, ctx);
            } else {
                mf_template_finding x = {MF_CODE_UNKNOWN, where, -1, -1,
                                         "a chat_template entry without a template string"};
                fn(ctx, &x);
            }
        }
    } else if (ct && !json_is_null(ct)) {
        mf_template_finding x = {MF_CODE_UNKNOWN, "chat_template", -1, -1,
                                 "chat_template is neither a string nor a list of templates"};
        fn(ctx, &x);
    }
    json_decref(j);
    mf_status_clear(&st);
}

void mf_scan_templates(const char *path, const uint8_t *b, uint64_t n, mf_template_fn fn, void *ctx)
{
    const char *base = base_name(path);
    size_t bl = strlen(base);
    if (!strcmp(base, "tokenizer_config.json") || !strcmp(base, "chat_template.json")) {
        judge_json(path, fn, ctx);
        return;
    }
    if (bl > 6 && !strcmp(base + bl - 6, ".jinja")) {
        judge((const char *)b, (size_t)n, "", 0, fn, ctx);
        return;
    }
    mf_detection d;
    mf_status st;
    mf_status_init(&st);
    const mf_reader *r = mf_detect(path, &d, &st) == 0 ? mf_reader_for(d.format) : NULL;
    mf_model *m;
    if (r && r->meta_templates && mf_open_model(path, 0, &m, &st) == 0) {
        judge_meta(m, fn, ctx);
        mf_close(m);
    }
    mf_status_clear(&st);
}
