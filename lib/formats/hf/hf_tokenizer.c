/* hf_tokenizer.c - the tokenizer files of a Hugging Face directory:
 * tokenizer.json (huggingface/tokenizers), tokenizer.model (SentencePiece),
 * vocab.json + merges.txt (GPT-2 style), with tokenizer_config.json,
 * special_tokens_map.json, added_tokens.json and the chat template
 * (chat_template.jinja, chat_template.json or tokenizer_config.json).
 * Summarized as tokenizer.* metadata and checked against config.json: every
 * token id must have an embedding row (id < vocab_size), special tokens must
 * exist. */
#include "formats/hf/hf_int.h"

#include <stdlib.h>

static const char *const tokenizer_files[] = {
    "added_tokens.json", "chat_template.jinja", "chat_template.json", "merges.txt",
    "special_tokens_map.json", "tokenizer.json", "tokenizer.model", "tokenizer_config.json",
    "vocab.json", "vocab.txt", NULL,
}; /* sorted */

typedef struct tok {
    mf_model *m;
    const char *dir;
    bool strict;
    mf_status *st;
    json_t *tj, *tcfg, *stmap, *added, *vocab_json;
    mf_spm spm;
    char *spm_buf;
    int64_t n_vocab; /* largest id + 1 */
} tok;

/* A problem that makes the directory unusable: a breach when validating,
 * a note otherwise (inspect still shows what is there). */
static void problem(tok *t, const char *file, const char *fmt, ...) MF_PRINTF(3, 4);
static void problem(tok *t, const char *file, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (t->strict) {
        char *p = mf_path_join(t->m->arena, t->dir, file);
        mf_breach(t->st, p ? p : file, -1, "%s", msg);
    } else {
        mf_model_note(t->m, "%s: %s", file, msg);
    }
}

static void see_id(tok *t, int64_t id)
{
    if (id >= 0 && id + 1 > t->n_vocab)
        t->n_vocab = id + 1;
}

static bool has_file(tok *t, const char *name)
{
    char *p = mf_path_join(t->m->arena, t->dir, name);
    return p && mf_path_exists(p);
}

/* The regex of the first Split pre-tokenizer (alone or in a Sequence). */
static const char *split_regex(json_t *pt, int depth)
{
    if (!json_is_object(pt) || depth > 8)
        return NULL;
    const char *type = json_string_value(json_object_get(pt, "type"));
    if (type && strcmp(type, "Split") == 0) {
        json_t *pat = json_object_get(pt, "pattern");
        return json_string_value(json_object_get(pat, "Regex"));
    }
    json_t *seq = json_object_get(pt, "pretokenizers");
    for (size_t i = 0; i < json_array_size(seq); i++) {
        const char *r = split_regex(json_array_get(seq, i), depth + 1);
        if (r)
            return r;
    }
    return NULL;
}

static int summarize_tokenizer_json(tok *t)
{
    mf_model *m = t->m;
    json_t *model = json_object_get(t->tj, "model");
    const char *type = json_string_value(json_object_get(model, "type"));
    if (!type) {
        problem(t, "tokenizer.json", "\"model\" has no \"type\"");
        return 0;
    }
    if (mf_hf_meta_str(m, "tokenizer.model", type, t->st))
        return -1;
    json_t *bf = json_object_get(model, "byte_fallback");
    if (json_is_boolean(bf) && mf_hf_meta_bool(m, "tokenizer.byte_fallback", json_is_true(bf), t->st))
        return -1;
    json_t *vocab = json_object_get(model, "vocab");
    if (json_is_object(vocab)) { /* BPE, WordPiece, WordLevel: token -> id */
        const char *k;
        json_t *v;
        int64_t id;
        json_object_foreach(vocab, k, v) {
            if (!mf_hf_json_int(v, &id) || id < 0) {
                problem(t, "tokenizer.json", "vocab entry \"%s\" has no valid id", k);
                break;
            }
            see_id(t, id);
        }
    } else if (json_is_array(vocab)) { /* Unigram: [token, score] in id order */
        see_id(t, (int64_t)json_array_size(vocab) - 1);
    }
    json_t *merges = json_object_get(model, "merges");
    if (json_is_array(merges)) {
        json_t *first = json_array_get(merges, 0);
        if (mf_hf_meta_int(m, "tokenizer.n_merges", (int64_t)json_array_size(merges), t->st) ||
            (first && mf_hf_meta_str(m, "tokenizer.merges_format",
                                     json_is_array(first) ? "pairs" : "strings", t->st)))
            return -1;
    }
    json_t *added = json_object_get(t->tj, "added_tokens");
    size_t n_added = 0;
    for (size_t i = 0; i < json_array_size(added); i++) {
        int64_t id;
        json_t *a = json_array_get(added, i);
        if (!mf_hf_json_int(json_object_get(a, "id"), &id) || id < 0 ||
            !json_is_string(json_object_get(a, "content"))) {
            problem(t, "tokenizer.json", "added_tokens[%zu] needs an \"id\" and a \"content\"", i);
            continue;
        }
        see_id(t, id);
        n_added++;
    }
    if (mf_hf_meta_int(m, "tokenizer.n_added_tokens", (int64_t)n_added, t->st))
        return -1;
    const char *re = split_regex(json_object_get(t->tj, "pre_tokenizer"), 0);
    if (re && mf_hf_meta_str(m, "tokenizer.pre_tokenizer_regex", re, t->st))
        return -1;
    return 0;
}

static int summarize_spm(tok *t)
{
    char *path = mf_path_join(t->m->arena, t->dir, "tokenizer.model");
    if (!path)
        return mf_oom(t->st, t->dir);
    uint64_t promised;
    if (mf_hf_lfs_pointer(path, &promised, NULL)) {
        problem(t, "tokenizer.model", "a Git LFS pointer, not the file: not downloaded (%llu bytes promised)",
                (unsigned long long)promised);
        return 0;
    }
    size_t len;
    mf_status sub;
    mf_status_init(&sub);
    if (mf_read_small_file(path, 1u << 30, &t->spm_buf, &len, &sub) ||
        mf_spm_parse((const uint8_t *)t->spm_buf, len, path, &t->spm, &sub)) {
        if (t->strict)
            mf_status_merge(t->st, &sub);
        else
            mf_model_note(t->m, "%s", sub.msg);
        mf_status_clear(&sub);
        return 0;
    }
    mf_status_clear(&sub);
    see_id(t, (int64_t)t->spm.n - 1);
    if (!t->tj) { /* tokenizer.json, when present, says it for the fast tokenizer */
        if (mf_hf_meta_str(t->m, "tokenizer.model", mf_spm_model_name(t->spm.model_type), t->st) ||
            mf_hf_meta_bool(t->m, "tokenizer.byte_fallback", t->spm.byte_fallback, t->st))
            return -1;
    }
    return mf_hf_meta_int(t->m, "tokenizer.spm_pieces", (int64_t)t->spm.n, t->st);
}

static int summarize_vocab_merges(tok *t)
{
    if (t->vocab_json) {
        const char *k;
        json_t *v;
        int64_t id;
        json_object_foreach(t->vocab_json, k, v) {
            if (mf_hf_json_int(v, &id))
                see_id(t, id);
        }
    }
    if (!t->tj && has_file(t, "merges.txt")) {
        char *path = mf_path_join(t->m->arena, t->dir, "merges.txt");
        char *text;
        size_t len;
        mf_status sub;
        mf_status_init(&sub);
        if (path && mf_read_small_file(path, 1u << 30, &text, &len, &sub) == 0) {
            int64_t n = 0;
            for (char *line = text; line < text + len;) {
                char *nl = memchr(line, '\n', (size_t)(text + len - line));
                size_t ll = nl ? (size_t)(nl - line) : (size_t)(text + len - line);
                n += ll > 0 && line[0] != '#';
                line += ll + 1;
            }
            free(text);
            if (mf_hf_meta_int(t->m, "tokenizer.n_merges", n, t->st))
                return -1;
        }
        mf_status_clear(&sub);
    }
    return 0;
}

/* The id of a token's text, looked up as the tokenizers do. */
static bool id_of(tok *t, const char *content, int64_t *id)
{
    json_t *added = json_object_get(t->tj, "added_tokens");
    for (size_t i = 0; i < json_array_size(added); i++) {
        json_t *a = json_array_get(added, i);
        const char *c = json_string_value(json_object_get(a, "content"));
        if (c && strcmp(c, content) == 0 && mf_hf_json_int(json_object_get(a, "id"), id))
            return true;
    }
    json_t *vocab = json_object_get(json_object_get(t->tj, "model"), "vocab");
    if (json_is_object(vocab) && mf_hf_json_int(json_object_get(vocab, content), id))
        return true;
    size_t cl = strlen(content);
    for (size_t i = 0; i < t->spm.n; i++)
        if (t->spm.pieces[i].len == cl && memcmp(t->spm.pieces[i].text, content, cl) == 0) {
            *id = (int64_t)i;
            return true;
        }
    if (t->vocab_json && mf_hf_json_int(json_object_get(t->vocab_json, content), id))
        return true;
    return t->added && mf_hf_json_int(json_object_get(t->added, content), id);
}

/* A special token entry: "text" or {"content": "text", ...}. */
static const char *token_content(json_t *e)
{
    if (json_is_string(e))
        return json_string_value(e);
    return json_string_value(json_object_get(e, "content"));
}

static int special_tokens(tok *t, const json_t *cfg)
{
    static const char *const roles[] = {"bos", "eos", "unk", "pad", NULL};
    for (size_t r = 0; roles[r]; r++) {
        char key[32];
        snprintf(key, sizeof(key), "%s_token", roles[r]);
        json_t *e = json_object_get(t->tcfg, key);
        if (!e)
            e = json_object_get(t->stmap, key);
        const char *content = token_content(e);
        if (!content)
            continue;
        char *mk = mf_arena_printf(t->m->arena, "tokenizer.%s", key);
        if (!mk || mf_hf_meta_str(t->m, mk, content, t->st))
            return mk ? -1 : mf_oom(t->st, t->dir);
        int64_t id;
        if (!id_of(t, content, &id)) {
            if (t->tj || t->spm.n || t->vocab_json)
                mf_model_note(t->m, "tokenizer: %s \"%s\" is not a token of the vocabulary", key, content);
            continue;
        }
        char *ik = mf_arena_printf(t->m->arena, "tokenizer.%s_id", key);
        if (!ik || mf_hf_meta_int(t->m, ik, id, t->st))
            return ik ? -1 : mf_oom(t->st, t->dir);
        char ck[32];
        snprintf(ck, sizeof(ck), "%s_token_id", roles[r]);
        int64_t cid;
        if (cfg && mf_hf_json_int(json_object_get(cfg, ck), &cid) && cid != id)
            mf_model_note(t->m, "config.json %s is %lld but the tokenizer's %s \"%s\" is id %lld", ck,
                          (long long)cid, key, content, (long long)id);
    }
    return 0;
}

static int chat_template(tok *t)
{
    json_t *ct = NULL;
    char *text = NULL;
    size_t len = 0;
    if (has_file(t, "chat_template.jinja")) {
        mf_status sub;
        mf_status_init(&sub);
        char *p = mf_path_join(t->m->arena, t->dir, "chat_template.jinja");
        if (p && mf_read_small_file(p, 64u << 20, &text, &len, &sub))
            mf_model_note(t->m, "%s", sub.msg);
        mf_status_clear(&sub);
    }
    json_t *ctj = !text ? mf_hfdir_json(t->m, t->dir, "chat_template.json", t->strict, t->st) : NULL;
    if (!text)
        ct = json_object_get(t->tcfg, "chat_template");
    if (!text && !ct)
        ct = json_object_get(ctj, "chat_template");
    int rc = 0;
    if (text) {
        rc = mf_hf_meta_str(t->m, "chat_template", text, t->st);
    } else if (json_is_string(ct)) {
        rc = mf_hf_meta_json(t->m, "chat_template", ct, 0, t->st);
    } else if (json_is_array(ct)) { /* named templates: [{"name", "template"}] */
        for (size_t i = 0; i < json_array_size(ct) && rc == 0; i++) {
            json_t *c = json_array_get(ct, i);
            const char *name = json_string_value(json_object_get(c, "name"));
            json_t *tmpl = json_object_get(c, "template");
            if (!name || !json_is_string(tmpl))
                continue;
            char *k = strcmp(name, "default") == 0 ? mf_arena_strdup(t->m->arena, "chat_template")
                                                    : mf_arena_printf(t->m->arena, "chat_template.%s", name);
            rc = k ? mf_hf_meta_json(t->m, k, tmpl, 0, t->st) : mf_oom(t->st, t->dir);
        }
    }
    free(text);
    json_decref(ctj);
    return rc;
}

static int config_flags(tok *t)
{
    static const char *const keys[] = {"add_bos_token", "add_eos_token", NULL};
    for (size_t i = 0; keys[i]; i++) {
        json_t *v = json_object_get(t->tcfg, keys[i]);
        char *k = mf_arena_printf(t->m->arena, "tokenizer.%s", keys[i]);
        if (!k)
            return mf_oom(t->st, t->dir);
        if (json_is_boolean(v) && mf_hf_meta_bool(t->m, k, json_is_true(v), t->st))
            return -1;
    }
    const char *cls = json_string_value(json_object_get(t->tcfg, "tokenizer_class"));
    if (cls && mf_hf_meta_str(t->m, "tokenizer.class", cls, t->st))
        return -1;
    json_t *atd = json_object_get(t->tcfg, "added_tokens_decoder");
    const char *k;
    json_t *v;
    json_object_foreach(atd, k, v) {
        char *end;
        long long id = strtoll(k, &end, 10);
        if (*k && !*end && id >= 0)
            see_id(t, id);
    }
    return 0;
}

static int files_list(tok *t, size_t *count)
{
    size_t n = 0;
    for (size_t i = 0; tokenizer_files[i]; i++)
        n += has_file(t, tokenizer_files[i]);
    *count = n;
    if (n == 0)
        return 0;
    mf_kv *kv = mf_model_add_meta(t->m, "tokenizer.files", t->st);
    if (!kv)
        return -1;
    kv->v.type = MF_V_ARR;
    kv->v.as.arr.elem = MF_V_STR;
    kv->v.as.arr.items = mf_arena_calloc(t->m->arena, n, sizeof(mf_value));
    if (!kv->v.as.arr.items)
        return mf_oom(t->st, t->dir);
    for (size_t i = 0; tokenizer_files[i]; i++)
        if (has_file(t, tokenizer_files[i]))
            kv->v.as.arr.items[kv->v.as.arr.n++] =
                mf_value_str(t->m->arena, tokenizer_files[i], strlen(tokenizer_files[i]));
    return 0;
}

static const char *kind_of(tok *t)
{
    if (has_file(t, "tokenizer.json"))
        return "tokenizer.json";
    if (has_file(t, "tokenizer.model"))
        return "sentencepiece";
    if (has_file(t, "vocab.json") && has_file(t, "merges.txt"))
        return "vocab.json+merges.txt";
    if (has_file(t, "vocab.txt"))
        return "vocab.txt";
    return NULL;
}

static int check_vocab_size(tok *t, const json_t *cfg)
{
    if (t->n_vocab && mf_hf_meta_int(t->m, "tokenizer.n_vocab", t->n_vocab, t->st))
        return -1;
    int64_t vs;
    if (cfg && mf_hf_json_int(json_object_get(cfg, "vocab_size"), &vs) && t->n_vocab > vs)
        problem(t, "config.json", "vocab_size is %lld but the tokenizer has ids up to %lld: "
                "those tokens have no embedding row", (long long)vs, (long long)t->n_vocab - 1);
    return 0;
}

int mf_hfdir_tokenizer(mf_model *m, const char *dir, const json_t *cfg, bool strict, mf_status *st)
{
    tok t = {.m = m, .dir = dir, .strict = strict, .st = st};
    size_t nfiles;
    if (files_list(&t, &nfiles))
        return -1;
    const char *kind = kind_of(&t);
    if (!kind) {
        mf_model_note(m, "no tokenizer (tokenizer.json, tokenizer.model or vocab.json + merges.txt)");
        if (nfiles == 0)
            return 0;
    } else if (mf_hf_meta_str(m, "tokenizer.kind", kind, st)) {
        return -1;
    }
    t.tj = mf_hfdir_json(m, dir, "tokenizer.json", strict, st);
    t.tcfg = mf_hfdir_json(m, dir, "tokenizer_config.json", strict, st);
    t.stmap = mf_hfdir_json(m, dir, "special_tokens_map.json", strict, st);
    t.added = mf_hfdir_json(m, dir, "added_tokens.json", strict, st);
    t.vocab_json = mf_hfdir_json(m, dir, "vocab.json", strict, st);
    int rc = 0;
    if (t.tj)
        rc = summarize_tokenizer_json(&t);
    if (rc == 0 && has_file(&t, "tokenizer.model"))
        rc = summarize_spm(&t);
    if (rc == 0)
        rc = summarize_vocab_merges(&t);
    if (rc == 0 && t.added) {
        const char *k;
        json_t *v;
        int64_t id;
        json_object_foreach(t.added, k, v) {
            if (mf_hf_json_int(v, &id))
                see_id(&t, id);
        }
    }
    if (rc == 0)
        rc = config_flags(&t);
    if (rc == 0)
        rc = special_tokens(&t, cfg);
    if (rc == 0)
        rc = chat_template(&t);
    if (rc == 0)
        rc = check_vocab_size(&t, cfg);
    json_decref(t.tj);
    json_decref(t.tcfg);
    json_decref(t.stmap);
    json_decref(t.added);
    json_decref(t.vocab_json);
    mf_spm_free(&t.spm);
    free(t.spm_buf);
    return rc;
}
