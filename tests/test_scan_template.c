/* test_scan_template.c - chat templates judged as Jinja2 (lib/ops/jinja*.c,
 * lib/ops/scan_template.c).
 *
 *  - tests/data/scan/templates/attack/ (each .jinja): each reaches os in jinja2's
 *    plain Environment (check_jinja2.py runs the real jinja2 on them, with
 *    a harmless payload, when python3 and jinja2 are there): dangerous,
 *    with a finding at a byte inside the template;
 *  - tests/data/scan/templates/benign/ (each .jinja): render in jinja2: safe;
 *  - constructs mfmt cannot resolve (computed names, unknown filters,
 *    tests and tags, syntax jinja2 refuses): unknown, never safe;
 *  - where templates are found: GGUF tokenizer.chat_template and
 *    tokenizer.chat_template.NAME (scan, and mf_open's verdict of a GGUF,
 *    a data-only format), tokenizer_config.json (string or list),
 *    chat_template.json, chat_template.jinja, and an HF directory;
 *  - every template ../shared carries (real models' GGUFs and HF files):
 *    safe. */
#include "testlib.h"
#include "gguf_fixture.h"

#include "ops/jinja.h"
#include "ops/scan.h"

#include <dirent.h>
#include <sys/stat.h>

#define TDIR "tests/data/scan/templates"

static int n_attack, n_benign, n_unknown, n_shared;

/* The size of a file (0 when it cannot be read). */
static size_t file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (size_t)sb.st_size : 0;
}

static void write_file(const char *path, const void *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    CHECKF(f != NULL, "%s", path);
    if (f) {
        fwrite(b, 1, n, f);
        fclose(f);
    }
}

static mf_scan_report *scan(const char *path)
{
    mf_scan_report *r = NULL;
    mf_status st;
    mf_status_init(&st);
    if (mf_scan_file(path, &r, &st))
        fprintf(stderr, "%s: %s\n", path, st.msg);
    mf_status_clear(&st);
    return r;
}

/* The worst template finding, and (for dangerous) whether one names a
 * byte inside the template and the member where. */
static mf_verdict template_verdict(const mf_scan_report *r, const char *where, size_t tlen,
                                   bool *offset_ok)
{
    mf_verdict w = MF_VERDICT_SAFE;
    *offset_ok = false;
    for (size_t i = 0; i < r->n_findings; i++) {
        const mf_finding *f = &r->findings[i];
        if (!f->opcode || strcmp(f->opcode, "jinja") != 0)
            continue;
        if (where && strcmp(f->member, where) != 0)
            continue;
        if (f->severity > w)
            w = f->severity;
        if (f->severity == MF_VERDICT_DANGEROUS && f->offset >= 0 && (size_t)f->offset < tlen)
            *offset_ok = true;
    }
    return w;
}

static void test_fixture_dir(const char *kind, mf_verdict want)
{
    char dir[256];
    snprintf(dir, sizeof(dir), TDIR "/%s", kind);
    struct dirent **ents;
    int n = scandir(dir, &ents, NULL, alphasort);
    CHECKF(n > 2, "%s has fixtures", dir);
    for (int i = 0; i < n; i++) {
        const char *name = ents[i]->d_name;
        size_t nl = strlen(name);
        if (nl > 6 && !strcmp(name + nl - 6, ".jinja")) {
            char path[512];
            snprintf(path, sizeof(path), "%s/%s", dir, name);
            size_t len = file_size(path);
            mf_scan_report *r = scan(path);
            CHECKF(r && len, "%s scanned", path);
            if (r && len) {
                bool off_ok;
                mf_verdict v = template_verdict(r, "", len, &off_ok);
                CHECKF(v == want && r->verdict == want, "%s: %s (file %s), want %s", path,
                       mf_verdict_name(v), mf_verdict_name(r->verdict), mf_verdict_name(want));
                if (want == MF_VERDICT_DANGEROUS)
                    CHECKF(off_ok, "%s: a dangerous finding at a byte of the template", path);
                if (want == MF_VERDICT_DANGEROUS)
                    n_attack++;
                else
                    n_benign++;
            }
            mf_scan_free(r);
        }
        free(ents[i]);
    }
    free(ents);
}

static void count_sev(void *ctx, const mf_jinja_finding *f)
{
    int *worst = ctx;
    if (f->severity > *worst)
        *worst = f->severity;
}

static int judge(const char *src)
{
    int worst = MF_CODE_NOTE;
    int w = mf_jinja_judge(src, strlen(src), count_sev, &worst);
    CHECKF(w == worst, "the returned verdict is the worst finding's (%d, %d)", w, worst);
    return w;
}

/* What mfmt cannot resolve is unknown: never safe, never called
 * dangerous without a dunder. */
static void test_unknown(void)
{
    static const char *const cases[] = {
        "{{ lipsum|attr(messages[0].content ~ 'x') }}",           /* computed from data + template */
        "{% set n = messages|map(attribute='role')|join ~ '_' %}{{ x[n] }}",
        "{{ x|myfilter }}",                                       /* unknown filter */
        "{{ x is mytest }}",                                      /* unknown test */
        "{% trans %}hello{% endtrans %}",                         /* unknown tag */
        "{{ lipsum|attr('\\N{BOX DRAWINGS LIGHT HORIZONTAL}x') }}", /* unresolved \\N name */
        "{{ x|map(n) }}",                                         /* filter name from data */
        "{{ x|select(n) }}",                                      /* test name from data */
        "{{ x.__class__ ",                                        /* unterminated: jinja2 refuses */
        "{{ 'a\\x5' }}",                                          /* truncated escape */
        "{% for %}",                                              /* syntax */
        "{{ (lipsum|attr((y ~ '{0}').format(1))) }}",             /* str.format of a built string */
        "{{ caller.x }}{{ 1 }",                                   /* broken end */
        "{% set s = '' %}{% for c in 'abc' %}{% set s = s ~ c %}{% endfor %}{{ x[s] }}",
        "{{ x|attr('\\u00e9') }}",                                /* non-ASCII name */
        "{{ ('{' ~ y ~ '}').format(x) }}",                        /* format string from data */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int w = judge(cases[i]);
        CHECKF(w == MF_CODE_UNKNOWN, "unknown: %s -> %d", cases[i], w);
        n_unknown++;
    }
    /* a dunder still wins over what cannot be resolved */
    CHECK(judge("{{ x|myfilter }}{{ x.__class__ }}") == MF_CODE_DANGEROUS);
    /* objects and numbers as keys cannot reach attributes */
    CHECK(judge("{{ x[loop] }}{{ x[range(3)|length] }}{{ x[1 + 2] }}") == MF_CODE_NOTE);
    /* Jinja's objects beyond their documented use */
    CHECK(judge("{{ cycler('a').items }}") == MF_CODE_DANGEROUS);
    CHECK(judge("{% for x in y %}{{ loop._iterator }}{% endfor %}") == MF_CODE_DANGEROUS);
    CHECK(judge("{{ lipsum.x }}") == MF_CODE_DANGEROUS);
    CHECK(judge("{% macro m() %}{% endmacro %}{{ m.name }}{{ m.arguments }}") == MF_CODE_NOTE);
    CHECK(judge("{% macro m() %}{% endmacro %}{{ m.catch_x }}") == MF_CODE_DANGEROUS);
    CHECK(judge("{{ self.nope() }}") == MF_CODE_DANGEROUS);
    /* fuzz_jinja: a 2000-long attribute chain and a 2000-long ~ chain
     * overflowed the analysis's stack; now not analysed (unknown) */
    for (int kind = 0; kind < 2; kind++) {
        size_t n = 6 + 2000 * 2 + 3;
        char *t = malloc(n + 1);
        if (t) {
            strcpy(t, "{{ a");
            for (int i = 0; i < 2000; i++)
                strcat(t, kind ? "~b" : ".b");
            strcat(t, " }}");
            CHECK(judge(t) == MF_CODE_UNKNOWN);
            free(t);
        }
    }
    /* an empty template, a template of text only */
    CHECK(judge("") == MF_CODE_NOTE);
    CHECK(judge("just text { not a tag } %}") == MF_CODE_NOTE);
}

/* GGUF: tokenizer.chat_template and the named ones, in scan and in
 * mf_open's verdict (GGUF is data only: no full scan at open). */
static void test_gguf(const char *tmp)
{
    static const float w[4] = {1, 2, 3, 4};
    fx_tensor t = {"w", MF_F32, 1, {4}, w, sizeof(w)};
    const char *benign = "{% for m in messages %}{{ m.content }}{% endfor %}";
    const char *attack = "{{ (lipsum|attr('__glo' ~ 'bals__')).os }}";
    struct {
        const char *file, *tool_use;
        mf_verdict want;
    } cases[] = {
        {"benign.gguf", benign, MF_VERDICT_SAFE},
        {"named.gguf", attack, MF_VERDICT_DANGEROUS},
    };
    for (size_t i = 0; i < 2; i++) {
        char path[512];
        snprintf(path, sizeof(path), "%s/%s", tmp, cases[i].file);
        mf_kv meta[3] = {fx_kv_str("general.architecture", "llama"),
                         fx_kv_str("tokenizer.chat_template", benign),
                         fx_kv_str("tokenizer.chat_template.tool_use", cases[i].tool_use)};
        mf_status st;
        mf_status_init(&st);
        CHECKF(fx_write_gguf(path, &t, 1, meta, 3, &st) == 0, "%s", st.msg);
        mf_status_clear(&st);
        mf_scan_report *r = scan(path);
        CHECK(r != NULL);
        if (r) {
            bool off_ok;
            CHECKF(r->verdict == cases[i].want, "%s: %s", path, mf_verdict_name(r->verdict));
            CHECK(template_verdict(r, "tokenizer.chat_template", 1000, &off_ok) == MF_VERDICT_SAFE);
            CHECK(template_verdict(r, "tokenizer.chat_template.tool_use", strlen(attack), &off_ok) ==
                  cases[i].want);
            if (cases[i].want == MF_VERDICT_DANGEROUS)
                CHECK(off_ok);
        }
        mf_scan_free(r);
        mf_model *m = NULL;
        CHECK(mf_open(path, NULL, &m, NULL) == 0);
        if (m)
            CHECKF(mf_model_verdict(m) == cases[i].want, "mf_open's verdict of %s", path);
        mf_close(m);
        mf_open_opts o;
        mf_open_opts_init(&o);
        o.flags = MF_OPEN_REFUSE_UNSAFE;
        mf_status_init(&st);
        int rc = mf_open(path, &o, &m, &st);
        CHECK((rc == 0) == (cases[i].want != MF_VERDICT_DANGEROUS));
        CHECK(rc == 0 || st.code == MF_ERR_UNSAFE);
        if (rc == 0)
            mf_close(m);
        mf_status_clear(&st);
    }
}

/* A tiny safetensors file: one F32 tensor of 4. */
static void write_safetensors(const char *path)
{
    const char hdr[] = "{\"w\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}";
    uint8_t b[8 + sizeof(hdr) - 1 + 16];
    uint64_t hl = sizeof(hdr) - 1;
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)(hl >> (8 * i));
    memcpy(b + 8, hdr, hl);
    memset(b + 8 + hl, 0, 16);
    write_file(path, b, sizeof(b));
}

/* Hugging Face files: tokenizer_config.json (string and list),
 * chat_template.json, chat_template.jinja; an HF directory's verdict. */
static void test_hf(const char *tmp)
{
    char dir[512], path[600];
    snprintf(dir, sizeof(dir), "%s/hf", tmp);
    mkdir(dir, 0755);
    snprintf(path, sizeof(path), "%s/config.json", dir);
    const char *cfg = "{\"architectures\": [\"LlamaForCausalLM\"], \"model_type\": \"llama\"}";
    write_file(path, cfg, strlen(cfg));
    snprintf(path, sizeof(path), "%s/model.safetensors", dir);
    write_safetensors(path);

    /* a list with one named attack: the member names it */
    const char *tc = "{\"chat_template\": [{\"name\": \"default\", \"template\": \"{{ messages|length }}\"},"
                     " {\"name\": \"tool_use\", \"template\": \"{{ self._TemplateReference__context }}\"}]}";
    snprintf(path, sizeof(path), "%s/tokenizer_config.json", dir);
    write_file(path, tc, strlen(tc));
    mf_scan_report *r = scan(path);
    bool off_ok;
    CHECK(r && r->verdict == MF_VERDICT_DANGEROUS);
    CHECK(r && template_verdict(r, "chat_template[tool_use]", 100, &off_ok) == MF_VERDICT_DANGEROUS && off_ok);
    CHECK(r && template_verdict(r, "chat_template[default]", 100, &off_ok) == MF_VERDICT_SAFE);
    mf_scan_free(r);

    mf_model *m = NULL;
    CHECK(mf_open(dir, NULL, &m, NULL) == 0);
    if (m)
        CHECKF(mf_model_verdict(m) == MF_VERDICT_DANGEROUS, "an HF directory's verdict: %d",
               mf_model_verdict(m));
    mf_close(m);

    /* a string; chat_template.json; chat_template.jinja */
    const char *ts = "{\"chat_template\": \"{% for m in messages %}{{ m['content'] }}{% endfor %}\"}";
    write_file(path, ts, strlen(ts));
    r = scan(path);
    CHECK(r && r->verdict == MF_VERDICT_SAFE && template_verdict(r, "chat_template", 100, &off_ok) == MF_VERDICT_SAFE);
    mf_scan_free(r);
    snprintf(path, sizeof(path), "%s/chat_template.json", dir);
    const char *cj = "{\"chat_template\": \"{{ lipsum['\\\\x5f\\\\x5fglobals\\\\x5f\\\\x5f'] }}\"}";
    write_file(path, cj, strlen(cj));
    r = scan(path);
    CHECK(r && r->verdict == MF_VERDICT_DANGEROUS);
    mf_scan_free(r);
    snprintf(path, sizeof(path), "%s/chat_template.jinja", dir);
    const char *jj = "{{ messages|map(attribute='__class__')|list }}";
    write_file(path, jj, strlen(jj));
    r = scan(path);
    CHECK(r && r->verdict == MF_VERDICT_DANGEROUS && template_verdict(r, "", strlen(jj), &off_ok) ==
                                                         MF_VERDICT_DANGEROUS && off_ok);
    if (r) /* a .jinja file is stored as is: the file byte is the template's */
        for (size_t i = 0; i < r->n_findings; i++)
            if (r->findings[i].severity == MF_VERDICT_DANGEROUS)
                CHECK(r->findings[i].file_offset == r->findings[i].offset);
    mf_scan_free(r);
}

/* Every template the real models in ../shared carry. */
static void scan_shared_tree(const char *dir, int depth)
{
    struct dirent **ents;
    int n = scandir(dir, &ents, NULL, alphasort);
    for (int i = 0; i < n; i++) {
        const char *name = ents[i]->d_name;
        char path[1024];
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        size_t nl = strlen(name);
        struct stat sb;
        if (name[0] != '.' && stat(path, &sb) == 0) {
            if (S_ISDIR(sb.st_mode) && depth < 4) {
                scan_shared_tree(path, depth + 1);
            } else if (S_ISREG(sb.st_mode) &&
                       ((nl > 5 && !strcmp(name + nl - 5, ".gguf") && !strstr(path, "invalid")) ||
                        !strcmp(name, "tokenizer_config.json") || !strcmp(name, "chat_template.json") ||
                        (nl > 6 && !strcmp(name + nl - 6, ".jinja")))) {
                mf_scan_report *r = scan(path);
                if (r) {
                    for (size_t k = 0; k < r->n_findings; k++) {
                        const mf_finding *f = &r->findings[k];
                        if (!f->opcode || strcmp(f->opcode, "jinja"))
                            continue;
                        if (f->severity == MF_VERDICT_SAFE && f->offset < 0)
                            n_shared++; /* one note per template */
                        CHECKF(f->severity == MF_VERDICT_SAFE, "%s %s: byte %lld: %s", path,
                               f->member, (long long)f->offset, f->message);
                    }
                }
                mf_scan_free(r);
            }
        }
        free(ents[i]);
    }
    if (n > 0)
        free(ents);
}

static void test_shared(void)
{
    const char *sh = tl_shared_dir();
    if (!sh) {
        printf("SKIP shared templates: ../shared is not there\n");
        return;
    }
    static const char *const sub[] = {"real-gguf", "convert-ref", "convert-ref-arch",
                                       "convert-ref-new", "corpus", "real"};
    for (size_t i = 0; i < sizeof(sub) / sizeof(sub[0]); i++) {
        char p[512];
        snprintf(p, sizeof(p), "%s/%s", sh, sub[i]);
        scan_shared_tree(p, 0);
    }
    CHECKF(n_shared >= 20, "templates of real models found in ../shared: %d", n_shared);
}

/* The real jinja2 on the fixtures (check_jinja2.py), when it is there. */
static void test_real_jinja2(void)
{
    if (system("/usr/bin/python3 -c 'import jinja2' >/dev/null 2>&1") != 0) {
        printf("SKIP jinja2 cross-check: /usr/bin/python3 with jinja2 is not there\n");
        return;
    }
    char out[65536];
    int rc = tl_run_cmd("/usr/bin/python3 " TDIR "/check_jinja2.py " TDIR, "/tmp/mfmt-jinja2-check.log",
                        out, sizeof(out));
    int passed = 0, failed = -1;
    const char *line = strstr(out, " passed, ");
    if (line) {
        while (line > out && line[-1] != '\n')
            line--;
        sscanf(line, "%d passed, %d failed", &passed, &failed);
    }
    CHECKF(rc == 0 && failed == 0 && passed == n_attack + n_benign,
           "jinja2 confirms every fixture (%d passed, %d failed of %d):\n%s", passed, failed,
           n_attack + n_benign, out);
}

int main(void)
{
    char tmp[256];
    if (!tl_make_tmpdir(tmp, sizeof(tmp), "tmpl"))
        return 1;
    test_fixture_dir("attack", MF_VERDICT_DANGEROUS);
    test_fixture_dir("benign", MF_VERDICT_SAFE);
    test_unknown();
    test_gguf(tmp);
    test_hf(tmp);
    test_shared();
    test_real_jinja2();
    printf("templates: %d attack (dangerous), %d benign (safe), %d unknown, %d of real models in "
           "../shared (safe)\n",
           n_attack, n_benign, n_unknown, n_shared);
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmp);
    printf("RESULT scan_template %d %d\n", tl_passed, tl_failed);
    return tl_failed != 0;
}
