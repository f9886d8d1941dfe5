/* test_hf.c - Hugging Face directories: the model card's YAML subset, the
 * SentencePiece parser, the hf-dir reader against the corpus manifest
 * (tokenizer, card, config fields), Git LFS pointers, the load report, the
 * gguf-py name heuristics (cases of llama.cpp's gguf-py test_metadata.py)
 * and the converter on directories made here: GQA permutation, tied
 * embeddings, rope scaling (linear, llama3), mistral/qwen3 classes, q8_0
 * fallback, index mismatch, unknown architecture. */
#include "testlib.h"

#include "core/core.h"
#include "formats/hf/hf_int.h"
#include "ops/hfconv/hfconv.h"
#include "ops/quantize.h"

#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *shared;
static char tmp[] = "/tmp/mfmt-test-hf-XXXXXX";

/* ------------------------------------------------------------ helpers */

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    CHECKF(f != NULL, "cannot write %s", path);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void copy_file(const char *src, const char *dst)
{
    char *buf;
    size_t len;
    mf_status st;
    mf_status_init(&st);
    if (mf_read_small_file(src, 1u << 26, &buf, &len, &st) == 0) {
        FILE *f = fopen(dst, "wb");
        if (f) {
            fwrite(buf, 1, len, f);
            fclose(f);
        }
        free(buf);
    }
    CHECKF(st.code == MF_OK, "copy %s: %s", src, st.msg);
    mf_status_clear(&st);
}

static char *path2(const char *a, const char *b)
{
    static char bufs[8][8300];
    static int k;
    char *p = bufs[k++ & 7];
    snprintf(p, 8300, "%s/%s", a, b);
    return p;
}

static void rm_tree(const char *dir)
{
    CHECK(tl_remove_tmpdir(dir));
}

/* Python's json.dumps(list_of_str, ensure_ascii=False) */
static void json_dumps_str(mf_hasher *h, const char *s, size_t n)
{
    mf_hasher_update(h, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        char e[8];
        const char *out = NULL;
        switch (c) {
        case '"': out = "\\\""; break;
        case '\\': out = "\\\\"; break;
        case '\n': out = "\\n"; break;
        case '\r': out = "\\r"; break;
        case '\t': out = "\\t"; break;
        case '\b': out = "\\b"; break;
        case '\f': out = "\\f"; break;
        default:
            if (c < 0x20) {
                snprintf(e, sizeof(e), "\\u%04x", c);
                out = e;
            }
        }
        if (out)
            mf_hasher_update(h, out, strlen(out));
        else
            mf_hasher_update(h, &s[i], 1);
    }
    mf_hasher_update(h, "\"", 1);
}

/* --------------------------------------------------------------- YAML */

static void test_yaml(void)
{
    const char *card =
        "---\n"
        "license: mit\n"
        "tags: [a, \"b c\", 3]\n"
        "base_model:\n"
        "  - org/x\n"
        "  - org/y   # a comment\n"
        "model-index:\n"
        "- name: foo\n"
        "  results:\n"
        "  - task:\n"
        "      type: text-generation\n"
        "    metrics:\n"
        "    - value: 1.5\n"
        "description: |\n"
        "  line one\n"
        "  line two\n"
        "inline: \"esc\\\"aped \\u00e9\"\n"
        "single: 'it''s'\n"
        "num: 42\n"
        "flt: 1.5e+3\n"
        "notfloat: 1e5\n"
        "yes_is: yes\n"
        "nothing:\n"
        "nul: ~\n"
        "flow: {a: 1, b: [x, y]}\n"
        "folded: >\n"
        "  one\n"
        "  two\n"
        "long: this goes\n"
        "  on and on\n"
        "---\n"
        "# Title\n";
    mf_status st;
    mf_status_init(&st);
    json_t *j = mf_hf_front_matter(card, strlen(card), &st);
    CHECKF(j != NULL, "front matter: %s", st.msg);
    if (!j)
        return;
    json_t *tags = json_object_get(j, "tags");
    CHECK(json_array_size(tags) == 3 && !strcmp(json_string_value(json_array_get(tags, 1)), "b c") &&
          json_integer_value(json_array_get(tags, 2)) == 3);
    CHECK(!strcmp(json_string_value(json_object_get(j, "license")), "mit"));
    json_t *bm = json_object_get(j, "base_model");
    CHECK(json_array_size(bm) == 2 && !strcmp(json_string_value(json_array_get(bm, 1)), "org/y"));
    json_t *mi = json_array_get(json_object_get(j, "model-index"), 0);
    CHECK(!strcmp(json_string_value(json_object_get(mi, "name")), "foo"));
    json_t *res = json_array_get(json_object_get(mi, "results"), 0);
    CHECK(!strcmp(json_string_value(json_object_get(json_object_get(res, "task"), "type")), "text-generation"));
    CHECK(json_real_value(json_object_get(json_array_get(json_object_get(res, "metrics"), 0), "value")) == 1.5);
    CHECK(!strcmp(json_string_value(json_object_get(j, "description")), "line one\nline two\n"));
    CHECK(!strcmp(json_string_value(json_object_get(j, "inline")), "esc\"aped \xc3\xa9"));
    CHECK(!strcmp(json_string_value(json_object_get(j, "single")), "it's"));
    CHECK(json_is_integer(json_object_get(j, "num")) && json_integer_value(json_object_get(j, "num")) == 42);
    CHECK(json_is_real(json_object_get(j, "flt")) && json_real_value(json_object_get(j, "flt")) == 1500.0);
    CHECK(json_is_string(json_object_get(j, "notfloat"))); /* PyYAML: a float needs a dot */
    CHECK(json_is_true(json_object_get(j, "yes_is")));
    CHECK(json_is_null(json_object_get(j, "nothing")) && json_is_null(json_object_get(j, "nul")));
    json_t *flow = json_object_get(j, "flow");
    CHECK(json_integer_value(json_object_get(flow, "a")) == 1 &&
          json_array_size(json_object_get(flow, "b")) == 2);
    CHECK(!strcmp(json_string_value(json_object_get(j, "folded")), "one two\n"));
    CHECK(!strcmp(json_string_value(json_object_get(j, "long")), "this goes on and on"));
    json_decref(j);

    /* no front matter: empty; refused constructs: NULL with a message */
    j = mf_hf_front_matter("# hello\n", 8, &st);
    CHECK(j && json_object_size(j) == 0);
    json_decref(j);
    static const char *const bad[] = {"---\na: &x 1\nb: *x\n---\n", "---\na: [1, 2\n---\n",
                                      "---\n- x\nk: v\n---\n", "---\na: \"open\n---\n",
                                      "---\na:\n\tb: 1\n---\n"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        mf_status_clear(&st);
        j = mf_hf_front_matter(bad[i], strlen(bad[i]), &st);
        CHECKF(j == NULL && st.code == MF_ERR_FORMAT && strstr(st.msg, "front matter line "),
               "bad YAML %zu accepted (%s)", i, st.msg);
        json_decref(j);
    }
    /* deep nesting is bounded, not a stack overflow */
    char deep[4096] = "---\na: ";
    for (int i = 0; i < 500; i++)
        strcat(deep, "[");
    strcat(deep, "\n---\n");
    mf_status_clear(&st);
    j = mf_hf_front_matter(deep, strlen(deep), &st);
    CHECK(j == NULL && strstr(st.msg, "deeper"));
    json_decref(j);
    mf_status_clear(&st);
}

/* Every model card under ../shared read as PyYAML's safe_load reads it
 * (tests/yaml_ref.py; skipped without python3-yaml). */
static void test_yaml_vs_pyyaml(void)
{
    if (system("python3 -c 'import yaml' 2>/dev/null") != 0) {
        printf("SKIP YAML against PyYAML: python3-yaml is not installed\n");
        return;
    }
    char cmd[1024];
    snprintf(cmd, sizeof(cmd), "find %s/ -name README.md -path '*/*/*' | sort", shared);
    FILE *list = popen(cmd, "r");
    char path[900];
    size_t compared = 0;
    while (list && fgets(path, sizeof(path), list)) {
        path[strcspn(path, "\n")] = 0;
        snprintf(cmd, sizeof(cmd), "python3 tests/yaml_ref.py '%s'", path);
        FILE *py = popen(cmd, "r");
        char ref[1 << 16];
        size_t rn = py ? fread(ref, 1, sizeof(ref) - 1, py) : 0;
        ref[rn] = 0;
        if (py)
            pclose(py);
        char *text;
        size_t len;
        mf_status st;
        mf_status_init(&st);
        if (mf_read_small_file(path, 64u << 20, &text, &len, &st) != 0) {
            CHECKF(0, "%s: %s", path, st.msg);
            mf_status_clear(&st);
            continue;
        }
        json_t *got = mf_hf_front_matter(text, len, &st);
        free(text);
        json_t *want = strncmp(ref, "ERR", 3) ? json_loads(ref, 0, NULL) : NULL;
        CHECKF(want ? got && json_equal(got, want) : !got, "%s: PyYAML %.200s, mfmt %s", path,
               ref, got ? "differs" : st.msg);
        compared++;
        json_decref(got);
        json_decref(want);
        mf_status_clear(&st);
    }
    if (list)
        pclose(list);
    CHECKF(compared > 0, "no model cards found under %s", shared);
}

/* ------------------------------------------------------ SentencePiece */

static void test_spm(json_t *man)
{
    const char *p = path2(shared, "corpus/hf-dir/llama-tiny/tokenizer.model");
    char *buf;
    size_t len;
    mf_status st;
    mf_status_init(&st);
    CHECK(mf_read_small_file(p, 1 << 20, &buf, &len, &st) == 0);
    mf_spm s;
    CHECKF(mf_spm_parse((const uint8_t *)buf, len, p, &s, &st) == 0, "%s", st.msg);
    json_t *tk = NULL;
    for (size_t i = 0; i < json_array_size(man); i++)
        if (!strcmp(json_string_value(json_object_get(json_array_get(man, i), "path")), "hf-dir/llama-tiny"))
            tk = json_object_get(json_array_get(man, i), "tokenizer");
    CHECK(s.n == 320 && s.model_type == MF_SPM_BPE && s.byte_fallback);
    size_t by[7] = {0};
    for (size_t i = 0; i < s.n; i++)
        by[s.pieces[i].type]++;
    json_t *nb = json_object_get(tk, "n_by_type");
    CHECK(by[MF_SPM_UNKNOWN] == (size_t)json_number_value(json_object_get(nb, "unknown")) &&
          by[MF_SPM_CONTROL] == (size_t)json_number_value(json_object_get(nb, "control")) &&
          by[MF_SPM_BYTE] == (size_t)json_number_value(json_object_get(nb, "byte")) &&
          by[MF_SPM_NORMAL] == (size_t)json_number_value(json_object_get(nb, "normal")));
    /* tokens_sha256: the JSON list of the pieces, as Python dumps it */
    mf_hasher *h = mf_hasher_new(MF_SHA256);
    mf_hasher_update(h, "[", 1);
    for (size_t i = 0; i < s.n; i++) {
        if (i)
            mf_hasher_update(h, ", ", 2);
        json_dumps_str(h, s.pieces[i].text, s.pieces[i].len);
    }
    mf_hasher_update(h, "]", 1);
    char hex[129];
    mf_hasher_final_hex(h, hex);
    mf_hasher_free(h);
    CHECKF(!strcmp(hex, json_string_value(json_object_get(tk, "tokens_sha256"))), "pieces hash %s", hex);
    mf_spm_free(&s);
    /* truncated model: an error naming the file, never a crash */
    for (size_t cut = 1; cut < len; cut += len / 37 + 1) {
        mf_status_clear(&st);
        if (mf_spm_parse((const uint8_t *)buf, cut, p, &s, &st) == 0)
            mf_spm_free(&s);
        else
            CHECK(strstr(st.msg, p) != NULL);
    }
    free(buf);
    mf_status_clear(&st);
}

/* ------------------------------------------------------------- reader */

static const mf_value *meta(const mf_model *m, const char *k)
{
    return mf_meta_get(m, k);
}

static bool meta_str_is(const mf_model *m, const char *k, const char *want)
{
    const mf_value *v = meta(m, k);
    return v && v->type == MF_V_STR && want && !strcmp(v->as.s.ptr, want);
}

static void test_reader_case(json_t *c)
{
    const char *rel = json_string_value(json_object_get(c, "path"));
    char path[4096];
    snprintf(path, sizeof(path), "%s/corpus/%s", shared, rel);
    mf_status st;
    mf_status_init(&st);
    mf_model *m;
    int rc = mf_open(path, NULL, &m, &st); /* non-strict: .bin weights may be unread */
    CHECKF(rc == 0, "%s: %s", rel, st.msg);
    mf_status_clear(&st);
    if (rc)
        return;
    CHECK(m->format == MF_FMT_HF_DIR);
    json_t *md = json_object_get(c, "metadata");
    const char *k;
    json_t *v;
    json_object_foreach(md, k, v) { /* config fields as config.* */
        char key[256];
        snprintf(key, sizeof(key), "config.%s", k);
        const mf_value *x = meta(m, key);
        bool ok = x != NULL;
        if (ok && json_is_string(v))
            ok = x->type == MF_V_STR && !strcmp(x->as.s.ptr, json_string_value(v));
        else if (ok && json_is_number(v))
            ok = (x->type == MF_V_I64 ? (double)x->as.i : x->as.f) == json_number_value(v);
        CHECKF(ok, "%s: %s", rel, key);
    }
    json_t *tk = json_object_get(c, "tokenizer");
    if (tk) {
        CHECKF(meta_str_is(m, "tokenizer.kind", json_string_value(json_object_get(tk, "kind"))),
               "%s: tokenizer.kind", rel);
        const mf_value *files = meta(m, "tokenizer.files");
        json_t *wf = json_object_get(tk, "files");
        bool same = files && files->type == MF_V_ARR && files->as.arr.n == json_array_size(wf);
        for (size_t i = 0; same && i < json_array_size(wf); i++)
            same = !strcmp(files->as.arr.items[i].as.s.ptr, json_string_value(json_array_get(wf, i)));
        CHECKF(same, "%s: tokenizer.files", rel);
        const mf_value *nv = meta(m, "tokenizer.n_vocab");
        CHECKF(nv && nv->as.i == (int64_t)json_number_value(json_object_get(tk, "n_vocab")), "%s: n_vocab", rel);
        json_t *sp = json_object_get(tk, "special");
        json_object_foreach(sp, k, v) {
            char key[64];
            snprintf(key, sizeof(key), "tokenizer.%s_token_id", k);
            const mf_value *id = meta(m, key);
            CHECKF(id && id->as.i == (int64_t)json_number_value(json_array_get(v, 0)), "%s: %s", rel, key);
            snprintf(key, sizeof(key), "tokenizer.%s_token", k);
            CHECKF(meta_str_is(m, key, json_string_value(json_array_get(v, 1))), "%s: %s", rel, key);
        }
        json_t *ab = json_object_get(tk, "add_bos_token");
        if (ab) {
            const mf_value *x = meta(m, "tokenizer.add_bos_token");
            CHECKF(x && x->type == MF_V_BOOL && x->as.b == json_is_true(ab), "%s: add_bos_token", rel);
        }
        json_t *nm = json_object_get(tk, "n_merges");
        if (nm) {
            const mf_value *x = meta(m, "tokenizer.n_merges");
            CHECKF(x && x->as.i == (int64_t)json_number_value(nm), "%s: n_merges", rel);
            CHECKF(meta_str_is(m, "tokenizer.merges_format", json_string_value(json_object_get(tk, "merges_format"))),
                   "%s: merges_format", rel);
        }
        const mf_value *ct = meta(m, "chat_template");
        CHECKF(ct && ct->type == MF_V_STR, "%s: chat_template", rel);
        if (ct) {
            char hex[129];
            mf_hasher *h = mf_hasher_new(MF_SHA256);
            mf_hasher_update(h, ct->as.s.ptr, ct->as.s.len);
            mf_hasher_final_hex(h, hex);
            mf_hasher_free(h);
            CHECKF(!strcmp(hex, json_string_value(json_object_get(tk, "chat_template_sha256"))),
                   "%s: chat template hash", rel);
        }
        const char *re = json_string_value(json_object_get(tk, "pre_tokenizer_regex"));
        if (re)
            CHECKF(meta_str_is(m, "tokenizer.pre_tokenizer_regex", re), "%s: pre-tokenizer regex", rel);
    }
    json_t *card = json_object_get(c, "card");
    json_object_foreach(card, k, v) {
        char key[128];
        snprintf(key, sizeof(key), "card.%s", k);
        const mf_value *x = meta(m, key);
        bool ok = x != NULL;
        if (ok && json_is_string(v))
            ok = x->type == MF_V_STR && !strcmp(x->as.s.ptr, json_string_value(v));
        else if (ok && json_is_array(v)) {
            ok = x->type == MF_V_ARR && x->as.arr.n == json_array_size(v);
            for (size_t i = 0; ok && i < x->as.arr.n; i++)
                ok = !strcmp(x->as.arr.items[i].as.s.ptr, json_string_value(json_array_get(v, i)));
        }
        CHECKF(ok, "%s: %s", rel, key);
    }
    /* the load report agrees with the weights when they were read */
    if (m->n_tensors) {
        mf_load_report *r = NULL;
        CHECK(mf_hf_load_report(m, &r, &st) == 0 && r);
        CHECKF(r && r->arch && !r->n_missing && !r->n_unexpected && !r->n_mismatched,
               "%s: load report", rel);
        CHECK(r && r->tied == json_is_true(json_object_get(md, "tie_word_embeddings")));
        mf_load_report_free(r);
    }
    mf_close(m);
    mf_status_clear(&st);
}

static void test_reader(json_t *man)
{
    int n = 0;
    for (size_t i = 0; i < json_array_size(man); i++) {
        json_t *c = json_array_get(man, i);
        if (strcmp(json_string_value(json_object_get(c, "format")), "hf-dir") ||
            strcmp(json_string_value(json_object_get(c, "expect")), "ok"))
            continue;
        test_reader_case(c);
        n++;
    }
    CHECKF(n >= 7, "%d hf-dir ok cases", n);
}

/* A directory made here from llama-tiny's files, with one change. */
static void make_llama_dir(const char *dir)
{
    char src[4096];
    snprintf(src, sizeof(src), "%s/corpus/hf-dir/llama-tiny", shared);
    mkdir(dir, 0755);
    static const char *const files[] = {"config.json", "tokenizer.model", "tokenizer_config.json",
                                        "special_tokens_map.json", "model.safetensors", NULL};
    for (size_t i = 0; files[i]; i++)
        copy_file(path2(src, files[i]), path2(dir, files[i]));
}

static void test_lfs_and_report(void)
{
    char dir[4200];
    snprintf(dir, sizeof(dir), "%s/lfs", tmp);
    make_llama_dir(dir);
    write_text(path2(dir, "model.safetensors"),
               "version https://git-lfs.github.com/spec/v1\n"
               "oid sha256:4665a5ea423c2713d436b5ee50593a9640e0018c1550b5a0002f74190d6caea8\n"
               "size 13476839424\n");
    mf_status st;
    mf_status_init(&st);
    mf_model *m;
    mf_open_opts strict = {.struct_size = sizeof(mf_open_opts), .flags = MF_OPEN_STRICT};
    CHECK(mf_open(dir, &strict, &m, &st) != 0);
    CHECKF(strstr(st.msg, "Git LFS pointer") && strstr(st.msg, "13476839424") && strstr(st.msg, "not downloaded"),
           "LFS: %s", st.msg);
    mf_status_clear(&st);
    CHECK(mf_open(dir, NULL, &m, &st) == 0 && m->n_tensors == 0);
    bool noted = false;
    for (size_t i = 0; m && i < m->n_notes; i++)
        noted |= strstr(m->notes[i], "LFS") != NULL;
    CHECK(noted);
    mf_close(m);
    mf_status_clear(&st);
    /* an LFS pointer in convert is refused with the same words */
    CHECK(mf_convert_to_gguf(dir, path2(tmp, "x.gguf"), &(mf_convert_gguf_opts){.struct_size = sizeof(mf_convert_gguf_opts), .type = "f16"}, &st) != 0 && strstr(st.msg, "LFS"));
    mf_status_clear(&st);

    /* the load report catches a config that does not match the weights */
    snprintf(dir, sizeof(dir), "%s/mismatch", tmp);
    make_llama_dir(dir);
    char *cfg;
    size_t len;
    CHECK(mf_read_small_file(path2(dir, "config.json"), 1 << 20, &cfg, &len, &st) == 0);
    char *p = strstr(cfg, "\"intermediate_size\": 128");
    CHECK(p != NULL);
    if (p)
        memcpy(p, "\"intermediate_size\": 256", 24);
    p = strstr(cfg, "\"num_hidden_layers\": 2");
    if (p)
        memcpy(p, "\"num_hidden_layers\": 3", 22);
    write_text(path2(dir, "config.json"), cfg);
    free(cfg);
    CHECK(mf_open(dir, NULL, &m, &st) == 0);
    mf_load_report *r = NULL;
    CHECK(m && mf_hf_load_report(m, &r, &st) == 0 && r);
    CHECKF(r && r->n_mismatched == 6 && r->n_missing == 9 && r->n_unexpected == 0,
           "load report: %zu mismatched, %zu missing, %zu unexpected", r ? r->n_mismatched : 0,
           r ? r->n_missing : 0, r ? r->n_unexpected : 0);
    mf_load_report_free(r);
    mf_close(m);
    mf_status_clear(&st);
    /* a missing config.json is an error naming it */
    snprintf(dir, sizeof(dir), "%s/noconfig", tmp);
    make_llama_dir(dir);
    unlink(path2(dir, "config.json"));
    CHECK(mf_open(dir, NULL, &m, &st) != 0 && strstr(st.msg, "config.json"));
    mf_status_clear(&st);
}

/* -------------------------------------------------- name heuristics */

static void check_id(const char *id, int64_t params, const char *full, const char *org, const char *base,
                     const char *ft, const char *ver, const char *size)
{
    mf_hf_id c;
    CHECK(mf_hf_id_components(id, params, &c) == 0);
#define SAME(a, b) ((a) == NULL ? (b) == NULL : (b) != NULL && !strcmp((a), (b)))
    CHECKF(SAME(full, c.full_name) && SAME(org, c.org) && SAME(base, c.basename) && SAME(ft, c.finetune) &&
               SAME(ver, c.version) && SAME(size, c.size_label),
           "%s: (%s, %s, %s, %s, %s, %s)", id, c.full_name, c.org ? c.org : "None",
           c.basename ? c.basename : "None", c.finetune ? c.finetune : "None",
           c.version ? c.version : "None", c.size_label ? c.size_label : "None");
#undef SAME
    mf_hf_id_free(&c);
}

static void test_heuristics(void)
{
    /* expectations from llama.cpp gguf-py/tests/test_metadata.py */
    check_id("Mistral/Mixtral-8x7B-Instruct-v0.1", 0, "Mixtral-8x7B-Instruct-v0.1", "Mistral", "Mixtral", "Instruct", "v0.1", "8x7B");
    check_id("Mixtral-8x7B-Instruct", 0, "Mixtral-8x7B-Instruct", NULL, "Mixtral", "Instruct", NULL, "8x7B");
    check_id("Mixtral-v0.1", 0, "Mixtral-v0.1", NULL, "Mixtral", NULL, "v0.1", NULL);
    check_id("Mixtral", 0, "Mixtral", NULL, NULL, NULL, NULL, NULL);
    check_id("NousResearch/Meta-Llama-3-8B", 0, "Meta-Llama-3-8B", "NousResearch", "Meta-Llama-3", NULL, NULL, "8B");
    check_id("Qwen1.5-MoE-A2.7B-Chat", 0, "Qwen1.5-MoE-A2.7B-Chat", NULL, "Qwen1.5-MoE", "Chat", NULL, "A2.7B");
    check_id("Qwen2-57B-A14B-Instruct", 0, "Qwen2-57B-A14B-Instruct", NULL, "Qwen2", "Instruct", NULL, "57B-A14B");
    check_id("microsoft/Phi-3-mini-4k-instruct", 4000000000LL, "Phi-3-mini-4k-instruct", "microsoft", "Phi-3", "4k-instruct", NULL, "mini");
    check_id("delphi-suite/stories-llama2-50k", 50000, "stories-llama2-50k", "delphi-suite", "stories-llama2", NULL, NULL, "50K");
    check_id("DeepSeek-Coder-V2-Lite-Instruct", 0, "DeepSeek-Coder-V2-Lite-Instruct", NULL, "DeepSeek-Coder-V2-Lite", "Instruct", NULL, NULL);
    check_id("crestf411/daybreak-kunoichi-2dpo-7b", 0, "daybreak-kunoichi-2dpo-7b", "crestf411", "daybreak-kunoichi", "2dpo", NULL, "7B");
    check_id("Qwen2-0.5B-Instruct", 0, "Qwen2-0.5B-Instruct", NULL, "Qwen2", "Instruct", NULL, "0.5B");
    check_id("smallcloudai/Refact-1_6B-fim", 0, "Refact-1_6B-fim", "smallcloudai", "Refact", "fim", NULL, "1.6B");
    check_id("UCLA-AGI/Gemma-2-9B-It-SPPO-Iter3", 0, "Gemma-2-9B-It-SPPO-Iter3", "UCLA-AGI", "Gemma-2", "It-SPPO", "Iter3", "9B");
    check_id("SeaLLMs/SeaLLMs-v3-7B-Chat", 0, "SeaLLMs-v3-7B-Chat", "SeaLLMs", "SeaLLMs-v3", "Chat", NULL, "7B");
    check_id("internlm/internlm2_5-7b-chat-1m", 7000000000LL, "internlm2_5-7b-chat-1m", "internlm", "internlm2_5", "chat-1m", NULL, "7B");
    check_id("pszemraj/jamba-900M-v0.13-KIx2", 0, "jamba-900M-v0.13-KIx2", "pszemraj", "jamba", "KIx2", "v0.13", "900M");
    check_id("abacaj/llama-161M-100B", 161000000, "llama-161M-100B", "abacaj", "llama", "100b", NULL, "161M");
    check_id("SparseLLM/relu-100B", 1340000000, "relu-100B", "SparseLLM", "relu", "100b", NULL, NULL);
    check_id("bigscience/bloom-7b1-petals", 0, "bloom-7b1-petals", "bigscience", "bloom", "petals", NULL, "7.1B");
    check_id("MaziyarPanahi/GreenNode-mini-7B-multilingual-v1olet-Mistral-7B-Instruct-v0.1", 0,
             "GreenNode-mini-7B-multilingual-v1olet-Mistral-7B-Instruct-v0.1", "MaziyarPanahi", "GreenNode-mini",
             "multilingual-v1olet-Mistral-Instruct", "v0.1", "7B");
    check_id("mistralai/Mistral-Nemo-Instruct-2407", 0, "Mistral-Nemo-Instruct-2407", "mistralai", "Mistral-Nemo", "Instruct", "2407", NULL);
    check_id("OpenGVLab/Mini-InternVL-Chat-2B-V1-5", 0, "Mini-InternVL-Chat-2B-V1-5", "OpenGVLab", "Mini-InternVL", "Chat", "V1-5", "2B");
    check_id("microsoft/Florence-2-base", 0, "Florence-2-base", "microsoft", NULL, NULL, NULL, NULL);
    check_id("mistralai/-Mistral--Nemo-Base-2407-", 0, "-Mistral--Nemo-Base-2407-", "mistralai", "Mistral-Nemo-Base", NULL, "2407", NULL);
    check_id("Llama-3-Instruct-abliteration-LoRA-8B", -1234, "Llama-3-Instruct-abliteration-LoRA-8B", NULL, "Llama-3", "Instruct-abliteration", NULL, "8B");
    check_id("./hermes-2-pro-llama-3-8b-DPO", 0, "hermes-2-pro-llama-3-8b-DPO", NULL, "hermes-2-pro-llama-3", "DPO", NULL, "8B");
    static const char *const titles[][2] = {
        {"Mixtral-8x7B-Instruct-v0.1", "Mixtral 8x7B Instruct v0.1"},
        {"Meta-Llama-3-8B", "Meta Llama 3 8B"},
        {"hermes-2-pro-llama-3-8b-DPO", "Hermes 2 Pro Llama 3 8b DPO"},
        {"Llama-2-7b-hf", "Llama 2 7b Hf"},
        {"meta-llama", "Meta Llama"},
    };
    for (size_t i = 0; i < sizeof(titles) / sizeof(titles[0]); i++) {
        char *t = mf_hf_id_to_title(titles[i][0]);
        CHECKF(t && !strcmp(t, titles[i][1]), "title of %s: %s", titles[i][0], t ? t : "(null)");
        free(t);
    }
    static const struct { int64_t n; const char *label; } sizes[] = {
        {115008, "115K"}, {94784, "95K"}, {6738415616LL, "6.7B"}, {7241732096LL, "7.2B"},
        {494032768, "494M"}, {1000, "1.0K"}, {70553706496LL, "71B"}, {1500000000000LL, "1.5T"},
    };
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        char buf[32];
        mf_hf_size_label(sizes[i].n, buf, sizeof(buf));
        CHECKF(!strcmp(buf, sizes[i].label), "size label of %lld: %s", (long long)sizes[i].n, buf);
    }
}

/* ---------------------------------------------------------- converter */

typedef struct synth {
    mf_out_tensor t[32];
    float *data[32];
    size_t n;
} synth;

static void synth_add(synth *s, const char *name, int64_t rows, int64_t cols)
{
    mf_out_tensor *t = &s->t[s->n];
    memset(t, 0, sizeof(*t));
    t->name = name;
    t->dtype = MF_F32;
    t->ndim = cols ? 2 : 1;
    t->shape[0] = rows;
    t->shape[1] = cols;
    int64_t n = rows * (cols ? cols : 1);
    float *d = malloc((size_t)n * sizeof(float));
    for (int64_t i = 0; i < n; i++) /* row r, column c: r * 1000 + c (exact in f32) */
        d[i] = (float)((i / (cols ? cols : 1)) * 1000 + i % (cols ? cols : 1));
    s->data[s->n++] = d;
}

static int synth_fill(void *ctx, size_t i, mf_sink_fn sink, void *sctx, mf_status *st)
{
    synth *s = ctx;
    uint64_t n = (uint64_t)s->t[i].shape[0] * (uint64_t)(s->t[i].ndim == 2 ? s->t[i].shape[1] : 1);
    return sink(sctx, s->data[i], (size_t)n * 4, st);
}

/* A llama-style directory: hidden 32, 4 heads of 8, kv_heads KV heads,
 * `inter` FFN, one layer, vocabulary 320 (llama-tiny's tokenizer). */
static void make_synth_dir(const char *dir, const char *cls, int kv_heads, int inter, bool tied, bool qk_norm,
                           const char *extra_config)
{
    mkdir(dir, 0755);
    char src[4096];
    snprintf(src, sizeof(src), "%s/corpus/hf-dir/llama-tiny", shared);
    copy_file(path2(src, "tokenizer.model"), path2(dir, "tokenizer.model"));
    copy_file(path2(src, "tokenizer_config.json"), path2(dir, "tokenizer_config.json"));
    char cfg[2048];
    snprintf(cfg, sizeof(cfg),
             "{\"architectures\": [\"%s\"], \"hidden_size\": 32, \"intermediate_size\": %d, "
             "\"num_hidden_layers\": 1, \"num_attention_heads\": 4, \"num_key_value_heads\": %d, "
             "\"vocab_size\": 320, \"max_position_embeddings\": 256, \"rms_norm_eps\": 1e-05, "
             "\"rope_theta\": 10000.0, \"tie_word_embeddings\": %s, \"bos_token_id\": 1, "
             "\"eos_token_id\": 2%s%s}",
             cls, inter, kv_heads, tied ? "true" : "false", extra_config ? ", " : "",
             extra_config ? extra_config : "");
    write_text(path2(dir, "config.json"), cfg);
    synth s = {.n = 0};
    int kv = kv_heads * 8;
    synth_add(&s, "model.embed_tokens.weight", 320, 32);
    synth_add(&s, "model.layers.0.input_layernorm.weight", 32, 0);
    synth_add(&s, "model.layers.0.self_attn.q_proj.weight", 32, 32);
    synth_add(&s, "model.layers.0.self_attn.k_proj.weight", kv, 32);
    synth_add(&s, "model.layers.0.self_attn.v_proj.weight", kv, 32);
    synth_add(&s, "model.layers.0.self_attn.o_proj.weight", 32, 32);
    if (extra_config && strstr(extra_config, "attention_bias")) {
        synth_add(&s, "model.layers.0.self_attn.q_proj.bias", 32, 0);
        synth_add(&s, "model.layers.0.self_attn.k_proj.bias", kv, 0);
        synth_add(&s, "model.layers.0.self_attn.v_proj.bias", kv, 0);
        synth_add(&s, "model.layers.0.self_attn.o_proj.bias", 32, 0);
    }
    if (qk_norm) {
        synth_add(&s, "model.layers.0.self_attn.q_norm.weight", 8, 0);
        synth_add(&s, "model.layers.0.self_attn.k_norm.weight", 8, 0);
    }
    synth_add(&s, "model.layers.0.post_attention_layernorm.weight", 32, 0);
    synth_add(&s, "model.layers.0.mlp.gate_proj.weight", inter, 32);
    synth_add(&s, "model.layers.0.mlp.up_proj.weight", inter, 32);
    synth_add(&s, "model.layers.0.mlp.down_proj.weight", 32, inter);
    synth_add(&s, "model.norm.weight", 32, 0);
    if (!tied)
        synth_add(&s, "lm_head.weight", 320, 32);
    mf_status st;
    mf_status_init(&st);
    CHECKF(mf_safetensors_write(path2(dir, "model.safetensors"), s.t, s.n, NULL, 0, synth_fill, &s, &st) == 0,
           "%s", st.msg);
    mf_status_clear(&st);
    for (size_t i = 0; i < s.n; i++)
        free(s.data[i]);
}

static mf_model *convert(const char *dir, const char *type, const char *out)
{
    mf_status st;
    mf_status_init(&st);
    mf_model *m = NULL;
    int rc = mf_convert_to_gguf(dir, out, &(mf_convert_gguf_opts){.struct_size = sizeof(mf_convert_gguf_opts), .type = type}, &st);
    CHECKF(rc == 0, "convert %s: %s", dir, st.msg);
    if (rc == 0)
        CHECKF(mf_open(out, NULL, &m, &st) == 0, "reopen %s: %s", out, st.msg);
    mf_status_clear(&st);
    return m;
}

static float elem(const mf_tensor *t, int64_t r, int64_t c)
{
    float f;
    memcpy(&f, t->data + 4 * (r * t->shape[1] + c), 4);
    return f;
}

static bool key_u32(const mf_model *m, const char *k, uint64_t want)
{
    const mf_value *v = mf_meta_get(m, k);
    return v && v->type == MF_V_U32 && v->as.u == want;
}

static void test_convert_gqa(void)
{
    char dir[4200], out[4200];
    snprintf(dir, sizeof(dir), "%s/gqa", tmp);
    snprintf(out, sizeof(out), "%s/gqa.gguf", tmp);
    make_synth_dir(dir, "LlamaForCausalLM", 1, 64, true, false, NULL);
    mf_model *m = convert(dir, "f32", out);
    if (!m)
        return;
    const mf_tensor *q = mf_tensor_find(m, "blk.0.attn_q.weight"), *k = mf_tensor_find(m, "blk.0.attn_k.weight");
    CHECK(q && k && q->shape[0] == 32 && k->shape[0] == 8);
    /* out row (h, i, j) of a head of 8 rows is source row h*8 + j*4 + i */
    bool ok = q && k;
    for (int64_t r = 0; ok && r < 32; r++) {
        int64_t h = r / 8, i = (r % 8) / 2, j = r % 2;
        ok = elem(q, r, 5) == (float)((h * 8 + j * 4 + i) * 1000 + 5);
    }
    for (int64_t r = 0; ok && r < 8; r++)
        ok = elem(k, r, 7) == (float)(((r % 2) * 4 + r / 2) * 1000 + 7);
    CHECKF(ok, "Q/K rows permuted per head (GQA 4:1)");
    const mf_tensor *v = mf_tensor_find(m, "blk.0.attn_v.weight");
    CHECK(v && elem(v, 3, 2) == 3002.0f); /* V is not permuted */
    CHECK(!mf_tensor_find(m, "output.weight") && mf_tensor_find(m, "token_embd.weight")); /* tied */
    CHECK(key_u32(m, "llama.attention.head_count_kv", 1) && key_u32(m, "llama.rope.dimension_count", 8));
    CHECK(mf_tensor_find(m, "blk.0.attn_norm.weight")->dtype == MF_F32);
    mf_close(m);

    /* llama with attention biases: the q/k biases are permuted like the rows */
    snprintf(dir, sizeof(dir), "%s/bias", tmp);
    make_synth_dir(dir, "LlamaForCausalLM", 2, 64, true, false, "\"attention_bias\": true");
    m = convert(dir, "f32", out);
    const mf_tensor *qb = m ? mf_tensor_find(m, "blk.0.attn_q.bias") : NULL,
                    *kb = m ? mf_tensor_find(m, "blk.0.attn_k.bias") : NULL;
    ok = qb && kb && qb->dtype == MF_F32 && kb->shape[0] == 16;
    for (int64_t r = 0; ok && r < 32; r++) {
        float f;
        memcpy(&f, qb->data + 4 * r, 4);
        ok = f == (float)((r / 8 * 8 + (r % 2) * 4 + (r % 8) / 2) * 1000);
    }
    for (int64_t r = 0; ok && r < 16; r++) { /* 2 KV heads of 8 */
        float f;
        memcpy(&f, kb->data + 4 * r, 4);
        ok = f == (float)((r / 8 * 8 + (r % 2) * 4 + (r % 8) / 2) * 1000);
    }
    CHECKF(ok, "q/k biases permuted per head");
    mf_close(m);
    snprintf(dir, sizeof(dir), "%s/gqa", tmp);

    /* f16 and bf16: exact values stay exact, 2-d weights change type */
    m = convert(dir, "bf16", out);
    CHECK(m && mf_tensor_find(m, "blk.0.ffn_up.weight")->dtype == MF_BF16 &&
          mf_tensor_find(m, "output_norm.weight")->dtype == MF_F32);
    const mf_value *ft = m ? mf_meta_get(m, "general.file_type") : NULL;
    CHECK(ft && ft->as.u == 32);
    mf_close(m);
}

static void test_convert_variants(void)
{
    char dir[4200], out[4200];
    mf_status st;
    mf_status_init(&st);
    /* linear rope scaling: type and factor keys */
    snprintf(dir, sizeof(dir), "%s/linear", tmp);
    snprintf(out, sizeof(out), "%s/linear.gguf", tmp);
    make_synth_dir(dir, "LlamaForCausalLM", 4, 64, false, false,
                   "\"rope_scaling\": {\"type\": \"linear\", \"factor\": 2.0}");
    mf_model *m = convert(dir, "f16", out);
    const mf_value *v = m ? mf_meta_get(m, "llama.rope.scaling.type") : NULL;
    CHECK(v && v->type == MF_V_STR && !strcmp(v->as.s.ptr, "linear"));
    v = m ? mf_meta_get(m, "llama.rope.scaling.factor") : NULL;
    CHECK(v && v->type == MF_V_F32 && v->as.f == 2.0);
    CHECK(m && mf_tensor_find(m, "output.weight")); /* untied */
    mf_close(m);

    /* llama3 rope scaling: a rope_freqs tensor first, the factors computed */
    snprintf(dir, sizeof(dir), "%s/llama3", tmp);
    snprintf(out, sizeof(out), "%s/llama3.gguf", tmp);
    make_synth_dir(dir, "LlamaForCausalLM", 2, 64, false, false,
                   "\"rope_scaling\": {\"rope_type\": \"llama3\", \"factor\": 8.0, \"low_freq_factor\": 1.0, "
                   "\"high_freq_factor\": 4.0, \"original_max_position_embeddings\": 64}, \"head_dim\": 8");
    m = convert(dir, "f16", out);
    if (m) {
        const mf_tensor *rf = &m->tensors[0];
        CHECK(!strcmp(rf->name, "rope_freqs.weight") && rf->ndim == 1 && rf->shape[0] == 4 && rf->dtype == MF_F32);
        for (int i = 0; i < 4 && rf->shape[0] == 4; i++) {
            /* by hand: wavelen = 2 pi theta^(2i/8); the converter reads
             * original_max_position_embeddings at the top of config.json
             * (8192 when absent, as here: rope_scaling's own is not read):
             * < 8192/4: 1; > 8192/1: 8; else smoothed */
            double wl = 2 * M_PI * pow(10000.0, 2.0 * i / 8.0), want;
            if (wl < 2048)
                want = 1;
            else if (wl > 8192)
                want = 8;
            else {
                double sm = (8192 / wl - 1) / 3;
                want = 1 / ((1 - sm) / 8 + sm);
            }
            float got;
            memcpy(&got, rf->data + 4 * i, 4);
            CHECKF(fabs(got - want) <= 1e-5 * want, "rope factor %d: %g, by hand %g", i, got, want);
        }
        CHECK(key_u32(m, "llama.attention.key_length", 8));
    }
    mf_close(m);

    /* MistralForCausalLM is converted as llama */
    snprintf(dir, sizeof(dir), "%s/mistral", tmp);
    snprintf(out, sizeof(out), "%s/mistral.gguf", tmp);
    make_synth_dir(dir, "MistralForCausalLM", 2, 64, false, false, NULL);
    m = convert(dir, "q8_0", out);
    v = m ? mf_meta_get(m, "general.architecture") : NULL;
    CHECK(v && !strcmp(v->as.s.ptr, "llama"));
    CHECK(m && mf_tensor_find(m, "blk.0.ffn_down.weight")->dtype == MF_Q8_0);
    mf_close(m);

    /* Qwen3: q/k norms, no permutation, rows of 48 fall back to F16 in q8_0 */
    snprintf(dir, sizeof(dir), "%s/qwen3", tmp);
    snprintf(out, sizeof(out), "%s/qwen3.gguf", tmp);
    make_synth_dir(dir, "Qwen3ForCausalLM", 2, 48, true, true, "\"head_dim\": 8");
    m = convert(dir, "q8_0", out);
    v = m ? mf_meta_get(m, "general.architecture") : NULL;
    CHECK(v && !strcmp(v->as.s.ptr, "qwen3"));
    if (m) {
        CHECK(mf_tensor_find(m, "blk.0.attn_q_norm.weight") && mf_tensor_find(m, "blk.0.attn_k_norm.weight"));
        CHECK(mf_tensor_find(m, "blk.0.ffn_down.weight")->dtype == MF_F16); /* row 48 */
        CHECK(mf_tensor_find(m, "blk.0.ffn_up.weight")->dtype == MF_Q8_0);  /* row 32 */
        CHECK(!mf_meta_get(m, "qwen3.rope.dimension_count") && key_u32(m, "qwen3.attention.key_length", 8));
    }
    mf_close(m);
    m = convert(dir, "f32", out);
    if (m) { /* qwen: q rows as they are */
        const mf_tensor *q = mf_tensor_find(m, "blk.0.attn_q.weight");
        CHECK(q && elem(q, 1, 0) == 1000.0f && elem(q, 4, 3) == 4003.0f);
    }
    mf_close(m);

    /* an architecture it does not know: refused, naming the ones it knows */
    snprintf(dir, sizeof(dir), "%s/unknown", tmp);
    make_synth_dir(dir, "NoSuchModelForCausalLM", 4, 64, false, false, NULL);
    CHECK(mf_convert_to_gguf(dir, out, &(mf_convert_gguf_opts){.struct_size = sizeof(mf_convert_gguf_opts), .type = "f16"}, &st) != 0 && st.code == MF_ERR_UNSUPPORTED &&
          strstr(st.msg, "NoSuchModelForCausalLM") && strstr(st.msg, "LlamaForCausalLM") &&
          strstr(st.msg, "GPT2LMHeadModel") && strstr(st.msg, "MambaForCausalLM"));
    mf_status_clear(&st);

    /* an index naming a tensor no part holds */
    snprintf(dir, sizeof(dir), "%s/index", tmp);
    make_synth_dir(dir, "LlamaForCausalLM", 4, 64, true, false, NULL);
    write_text(path2(dir, "model.safetensors.index.json"),
               "{\"weight_map\": {\"model.embed_tokens.weight\": \"model.safetensors\", "
               "\"model.extra.weight\": \"model-00002-of-00002.safetensors\"}}");
    CHECK(mf_convert_to_gguf(dir, out, &(mf_convert_gguf_opts){.struct_size = sizeof(mf_convert_gguf_opts), .type = "f16"}, &st) != 0 && strstr(st.msg, "model.extra.weight"));
    mf_status_clear(&st);
    /* a type nobody writes */
    CHECK(mf_convert_to_gguf(dir, out, &(mf_convert_gguf_opts){.struct_size = sizeof(mf_convert_gguf_opts), .type = "q9_k_x"}, &st) != 0 && st.code == MF_ERR_USAGE);
    mf_status_clear(&st);
    /* the failed conversions left no output behind */
    CHECK(access(out, F_OK) != 0 || unlink(out) == 0);
}

/* A mix in the same pass gives the bytes of converting to f16 and then
 * quantizing that file as llama-quantize does. */
static void check_mix(const char *dir, const char *mix)
{
    char a[4200], f[4200], b[4200];
    snprintf(a, sizeof(a), "%s/mix-a.gguf", tmp);
    snprintf(f, sizeof(f), "%s/mix-f16.gguf", tmp);
    snprintf(b, sizeof(b), "%s/mix-b.gguf", tmp);
    mf_status st;
    mf_status_init(&st);
    CHECKF(mf_convert_to_gguf(dir, a, &(mf_convert_gguf_opts){.struct_size = sizeof(mf_convert_gguf_opts), .type = mix}, &st) == 0, "%s %s: %s", dir, mix, st.msg);
    mf_status_clear(&st);
    CHECK(mf_convert_to_gguf(dir, f, &(mf_convert_gguf_opts){.struct_size = sizeof(mf_convert_gguf_opts), .type = "f16"}, &st) == 0);
    mf_quantize_opts o;
    mf_quantize_opts_init(&o, mf_ftype_parse(mix));
    mf_quantize_result res;
    CHECKF(mf_quantize_file(f, b, &o, NULL, NULL, &res, &st) == 0, "%s", st.msg);
    char ha[129] = "a", hb[129] = "b";
    mf_hash_file(a, MF_SHA256, ha, &st);
    mf_hash_file(b, MF_SHA256, hb, &st);
    CHECKF(!strcmp(ha, hb), "%s as %s in one pass differs from f16 + quantize", dir, mix);
    mf_status_clear(&st);
    unlink(a);
    unlink(f);
    unlink(b);
}

static void test_convert_mix(void)
{
    char dir[4200];
    snprintf(dir, sizeof(dir), "%s/corpus/hf-dir/llama-tiny", shared);
    check_mix(dir, "Q4_K_M");
    snprintf(dir, sizeof(dir), "%s/corpus/hf-dir/qwen2-tiny", shared);
    check_mix(dir, "Q5_K_S");
    /* rows of 256 (real k-quant blocks): test_convert_ref's per-architecture
     * mixes over generated directories (the synthetic directory's values
     * overflow F16) */
    mf_status st;
    mf_status_init(&st);
    char out[4200];
    snprintf(dir, sizeof(dir), "%s/mix256", tmp);
    make_synth_dir(dir, "LlamaForCausalLM", 2, 256, false, false, NULL);
    snprintf(out, sizeof(out), "%s/mix.gguf", tmp);
    CHECK(mf_convert_to_gguf(dir, out, &(mf_convert_gguf_opts){.struct_size = sizeof(mf_convert_gguf_opts), .type = "IQ2_XXS"}, &st) != 0 && strstr(st.msg, "importance matrix"));
    mf_status_clear(&st);
}

int main(void)
{
    shared = tl_shared_dir();
    test_yaml();
    test_heuristics();
    if (!shared) {
        TL_SKIP("hf: the corpus directories (no ../shared)");
        return tl_report("hf");
    }
    CHECK(mkdtemp(tmp) != NULL);
    char mp[4096];
    snprintf(mp, sizeof(mp), "%s/corpus/manifest.json", shared);
    json_t *man = json_load_file(mp, JSON_DECODE_INT_AS_REAL, NULL); /* u64 values inside */
    CHECK(man != NULL);
    test_spm(man);
    test_yaml_vs_pyyaml();
    test_reader(man);
    test_lfs_and_report();
    test_convert_gqa();
    test_convert_variants();
    test_convert_mix();
    json_decref(man);
    rm_tree(tmp);
    return tl_report("hf");
}
