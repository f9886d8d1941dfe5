/* test_edit.c - mf_edit over GGUFs written by llama.cpp's converter and
 * llama.cpp's vocab files (../shared), and safetensors from the corpus:
 * only the asked keys change, every tensor stays byte-identical, the result
 * passes strict validation, refusals and failures leave everything as it was. */
#include "core/core.h"
#include <jansson.h>
#include "testlib.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[64];

static char *tpath(const char *name)
{
    static char buf[4][512];
    static int k;
    char *p = buf[k++ % 4];
    snprintf(p, 512, "%s/%s", tmpdir, name);
    return p;
}

static int copy_file(const char *from, const char *to)
{
    FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
    int rc = a && b ? 0 : -1;
    char buf[1 << 16];
    size_t n;
    while (rc == 0 && (n = fread(buf, 1, sizeof(buf), a)) > 0)
        rc = fwrite(buf, 1, n, b) == n ? 0 : -1;
    if (a)
        fclose(a);
    if (b)
        fclose(b);
    return rc;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void file_hash(const char *path, char hex[129])
{
    mf_status st;
    mf_status_init(&st);
    if (mf_hash_file(path, MF_SHA256, hex, &st))
        hex[0] = 0;
    mf_status_clear(&st);
}

static mf_model *open_strict(const char *path)
{
    mf_status st;
    mf_status_init(&st);
    mf_open_opts o = {.struct_size = sizeof(mf_open_opts), .flags = MF_OPEN_STRICT};
    mf_model *m = NULL;
    int rc = mf_open(path, &o, &m, &st);
    CHECKF(rc == 0 && st.n_all == 0, "%s: %s", path, st.msg);
    mf_status_clear(&st);
    return rc == 0 ? m : NULL;
}

static bool values_equal(const mf_value *a, const mf_value *b)
{
    if (a->type != b->type)
        return false;
    switch (a->type) {
    case MF_V_STR: return a->as.s.len == b->as.s.len && !memcmp(a->as.s.ptr, b->as.s.ptr, a->as.s.len);
    case MF_V_F32: case MF_V_F64: return a->as.f == b->as.f;
    case MF_V_BOOL: return a->as.b == b->as.b;
    case MF_V_ARR:
        if (a->as.arr.elem != b->as.arr.elem || a->as.arr.n != b->as.arr.n)
            return false;
        for (size_t i = 0; i < a->as.arr.n; i++)
            if (!values_equal(&a->as.arr.items[i], &b->as.arr.items[i]))
                return false;
        return true;
    default: return a->as.u == b->as.u;
    }
}

/* Every key of `a` but `skip` is in `b` with the same value, in order. */
static bool same_meta_except(const mf_model *a, const mf_model *b, const char *const *skip,
                             size_t n_skip)
{
    size_t j = 0;
    for (size_t i = 0; i < a->n_meta; i++) {
        bool skipped = false;
        for (size_t k = 0; k < n_skip; k++)
            skipped |= !strcmp(a->meta[i].key, skip[k]);
        if (skipped)
            continue;
        while (j < b->n_meta && strcmp(b->meta[j].key, a->meta[i].key))
            j++;
        if (j == b->n_meta || !values_equal(&a->meta[i].v, &b->meta[j].v)) {
            fprintf(stderr, "  key %s differs or moved\n", a->meta[i].key);
            return false;
        }
    }
    return true;
}

/* Same tensors (renamed where asked), byte for byte. */
static bool same_tensors(const mf_model *a, const mf_model *b, const char *from, const char *to)
{
    if (a->n_tensors != b->n_tensors)
        return false;
    for (size_t i = 0; i < a->n_tensors; i++) {
        const char *name = from && !strcmp(a->tensors[i].name, from) ? to : a->tensors[i].name;
        const mf_tensor *t = mf_tensor_find(b, name);
        char h1[129], h2[129];
        mf_status st;
        mf_status_init(&st);
        bool ok = t && t->dtype == a->tensors[i].dtype && t->ndim == a->tensors[i].ndim &&
                  !memcmp(t->shape, a->tensors[i].shape, sizeof(int64_t) * (size_t)t->ndim) &&
                  !mf_hash_tensor(a, &a->tensors[i], MF_SHA256, h1, &st) &&
                  !mf_hash_tensor(b, t, MF_SHA256, h2, &st) && !strcmp(h1, h2);
        mf_status_clear(&st);
        if (!ok) {
            fprintf(stderr, "  tensor %s differs\n", name);
            return false;
        }
    }
    return true;
}

static int edit(const char *in, const char *out, const mf_edit_op *ops, size_t n, unsigned flags,
                mf_edit_report *r, mf_status *st)
{
    mf_edit_opts o = {.struct_size = sizeof(o), .flags = flags};
    return mf_edit(in, out, ops, n, &o, r, st);
}

static size_t count_dir_entries(const char *dir)
{
    DIR *d = opendir(dir);
    size_t n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

static void test_gguf_set_delete(const char *src)
{
    char *tpl = tpath("tpl.jinja");
    write_text(tpl, "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{% endfor %}");
    char tpl_op[600];
    snprintf(tpl_op, sizeof(tpl_op), "file:%s", tpl);
    mf_edit_op ops[] = {
        {MF_EDIT_SET, "general.name", "Edited by mfmt"},
        {MF_EDIT_SET, "tokenizer.chat_template", tpl_op},
        {MF_EDIT_SET, "mfmt.test.count", "int:5"},
        {MF_EDIT_SET, "mfmt.test.eps", "float:1e-5"},
        {MF_EDIT_SET, "mfmt.test.flag", "bool:true"},
        {MF_EDIT_SET, "mfmt.test.big", "u64:18446744073709551615"},
        {MF_EDIT_DELETE, "general.file_type", NULL},
    };
    char *out = tpath("out.gguf");
    unlink(out);
    mf_status st;
    mf_status_init(&st);
    mf_edit_report r;
    int rc = edit(src, out, ops, sizeof(ops) / sizeof(ops[0]), 0, &r, &st);
    CHECKF(rc == 0, "%s: %s", src, st.msg);
    mf_status_clear(&st);
    if (rc)
        return;
    CHECK(r.n_changes == sizeof(ops) / sizeof(ops[0]));
    struct stat so;
    CHECK(stat(out, &so) == 0 && (uint64_t)so.st_size == r.new_header_bytes + r.data_bytes);
    mf_edit_report_free(&r);
    mf_model *a = open_strict(src), *b = open_strict(out);
    if (a && b) {
        static const char *const changed[] = {"general.name", "tokenizer.chat_template",
                                              "general.file_type"};
        CHECK(same_meta_except(a, b, changed, 3));
        CHECK(same_tensors(a, b, NULL, NULL));
        CHECK(mf_meta_get(b, "general.file_type") == NULL);
        const mf_value *v = mf_meta_get(b, "general.name");
        CHECK(v && v->type == MF_V_STR && !strcmp(v->as.s.ptr, "Edited by mfmt"));
        v = mf_meta_get(b, "tokenizer.chat_template");
        CHECK(v && v->type == MF_V_STR && strstr(v->as.s.ptr, "<|{{ m.role }}|>"));
        v = mf_meta_get(b, "mfmt.test.count");
        CHECK(v && v->type == MF_V_I32 && v->as.i == 5);
        v = mf_meta_get(b, "mfmt.test.eps");
        CHECK(v && v->type == MF_V_F32 && v->as.f == (double)1e-5f);
        v = mf_meta_get(b, "mfmt.test.flag");
        CHECK(v && v->type == MF_V_BOOL && v->as.b);
        v = mf_meta_get(b, "mfmt.test.big");
        CHECK(v && v->type == MF_V_U64 && v->as.u == UINT64_MAX);
    }
    mf_close(a);
    mf_close(b);
}

/* An edit llama.cpp would refuse, or a malformed one, writes nothing. */
static void expect_refused(const char *src, mf_edit_op op, unsigned flags, const char *why_part)
{
    char before[129], after[129];
    file_hash(src, before);
    char *out = tpath("refused.gguf");
    unlink(out);
    mf_status st;
    mf_status_init(&st);
    int rc = edit(src, out, &op, 1, flags, NULL, &st);
    CHECKF(rc != 0 && strstr(st.msg, why_part), "%s %s: rc %d, \"%s\"", op.key ? op.key : "",
           op.text ? op.text : "", rc, st.msg);
    const char *named = op.text && !strncmp(op.text, "file:", 5) ? op.text + 5 : src;
    CHECKF(!strncmp(st.msg, named, strlen(named)), "message names the file: %s", st.msg);
    mf_status_clear(&st);
    CHECK(access(out, F_OK) != 0);
    file_hash(src, after);
    CHECK(!strcmp(before, after));
}

static void test_refusals(const char *src)
{
    expect_refused(src, (mf_edit_op){MF_EDIT_DELETE, "general.architecture", NULL}, 0,
                   "cannot be deleted");
    expect_refused(src, (mf_edit_op){MF_EDIT_SET, "llama.context_length", "str:long"}, 0,
                   "must be a u32");
    expect_refused(src, (mf_edit_op){MF_EDIT_SET, "llama.context_length", "-1"}, 0,
                   "does not fit");
    expect_refused(src, (mf_edit_op){MF_EDIT_SET, "general.alignment", "64"}, 0,
                   "general.alignment");
    expect_refused(src, (mf_edit_op){MF_EDIT_SET, "general.alignment", "48"}, MF_EDIT_FORCE,
                   "power of two");
    expect_refused(src, (mf_edit_op){MF_EDIT_SET, "mfmt.x", "u8:300"}, 0, "does not fit");
    expect_refused(src, (mf_edit_op){MF_EDIT_SET, "mfmt.x", "bool:maybe"}, 0, "true or false");
    expect_refused(src, (mf_edit_op){MF_EDIT_DELETE, "no.such.key", NULL}, 0, "no such key");
    expect_refused(src, (mf_edit_op){MF_EDIT_RENAME_TENSOR, "no.such.tensor", "x"}, 0,
                   "no such tensor");
    expect_refused(src, (mf_edit_op){MF_EDIT_RENAME_TENSOR, "token_embd.weight",
                                     "output_norm.weight"}, 0, "exists");
    expect_refused(src, (mf_edit_op){MF_EDIT_RENAME_TENSOR, "token_embd.weight",
                                     "a.name.that.is.longer.than.sixty.three.bytes.which.ggml."
                                     "cannot.hold"}, 0, "limit");
    expect_refused(src, (mf_edit_op){MF_EDIT_SET, "tokenizer.ggml.scores", "[1.0, 2.0]"}, 0,
                   "entries");
    expect_refused(src, (mf_edit_op){MF_EDIT_SET, "mfmt.x", "file:/nonexistent/template"}, 0,
                   "cannot open");
    /* a failure while writing (no such directory) leaves nothing either */
    mf_status st;
    mf_status_init(&st);
    mf_edit_op op = {MF_EDIT_SET, "general.name", "x"};
    CHECK(edit(src, "/nonexistent-dir/out.gguf", &op, 1, 0, NULL, &st) != 0 &&
          st.code == MF_ERR_IO);
    mf_status_clear(&st);
}

/* With --force a new alignment moves every tensor; the bytes stay. */
static void test_force_alignment(const char *src)
{
    mf_edit_op op = {MF_EDIT_SET, "general.alignment", "u32:64"};
    char *out = tpath("aligned.gguf");
    mf_status st;
    mf_status_init(&st);
    CHECKF(edit(src, out, &op, 1, MF_EDIT_FORCE, NULL, &st) == 0, "%s", st.msg);
    mf_status_clear(&st);
    mf_model *a = open_strict(src), *b = open_strict(out);
    if (a && b) {
        CHECK(same_tensors(a, b, NULL, NULL));
        for (size_t i = 0; i < b->n_tensors; i++)
            CHECK(b->tensors[i].offset % 64 == 0);
    }
    mf_close(a);
    mf_close(b);
}

static void test_in_place_and_rename(const char *src)
{
    char *work = tpath("inplace.gguf");
    CHECK(copy_file(src, work) == 0);
    size_t entries = count_dir_entries(tmpdir);
    mf_edit_op ops[] = {{MF_EDIT_RENAME_TENSOR, "output_norm.weight", "output_norm.renamed"},
                        {MF_EDIT_SET, "general.name", "in place"}};
    mf_status st;
    mf_status_init(&st);
    CHECKF(edit(work, NULL, ops, 2, 0, NULL, &st) == 0, "%s", st.msg);
    mf_status_clear(&st);
    CHECK(count_dir_entries(tmpdir) == entries); /* no temporary file left */
    mf_model *a = open_strict(src), *b = open_strict(work);
    if (a && b) {
        CHECK(same_tensors(a, b, "output_norm.weight", "output_norm.renamed"));
        CHECK(mf_tensor_find(b, "output_norm.weight") == NULL);
    }
    mf_close(a);
    mf_close(b);
}

static void test_dry_run(const char *src)
{
    char *out = tpath("dry.gguf");
    unlink(out);
    mf_edit_op op = {MF_EDIT_SET, "general.name", "a somewhat longer name than before"};
    mf_edit_report dry, real;
    mf_status st;
    mf_status_init(&st);
    CHECK(edit(src, out, &op, 1, MF_EDIT_DRY_RUN, &dry, &st) == 0);
    CHECK(access(out, F_OK) != 0);
    CHECK(edit(src, out, &op, 1, 0, &real, &st) == 0);
    mf_status_clear(&st);
    CHECK(dry.new_header_bytes == real.new_header_bytes && dry.n_changes == 1);
    CHECK(dry.changes && dry.changes[0].before && strstr(dry.changes[0].after, "longer"));
    mf_edit_report_free(&dry);
    mf_edit_report_free(&real);
}

/* tokenizer_config.json: a string template, and gguf-py's list form. */
static void test_chat_template_from(const char *src, const char *shared)
{
    char cfg[512];
    snprintf(cfg, sizeof(cfg), "%s/convert-ref-arch/dirs/gemma-tiny/tokenizer_config.json",
             shared);
    mf_edit_op op = {MF_EDIT_CHAT_TEMPLATE_FROM, NULL, cfg};
    char *out = tpath("tpl.gguf");
    mf_status st;
    mf_status_init(&st);
    CHECKF(edit(src, out, &op, 1, 0, NULL, &st) == 0, "%s", st.msg);
    mf_model *b = open_strict(out);
    const mf_value *v = b ? mf_meta_get(b, "tokenizer.chat_template") : NULL;
    CHECK(v && v->type == MF_V_STR && strstr(v->as.s.ptr, "start_of_turn"));
    mf_close(b);
    char *list = tpath("list_config.json");
    write_text(list, "{\"chat_template\": [{\"name\": \"default\", \"template\": \"D\"},"
                     " {\"name\": \"tool use\", \"template\": \"T\"},"
                     " {\"name\": \"rag\", \"template\": \"R\"}]}");
    op.text = list;
    CHECKF(edit(src, out, &op, 1, 0, NULL, &st) == 0, "%s", st.msg);
    mf_status_clear(&st);
    b = open_strict(out);
    if (b) {
        v = mf_meta_get(b, "tokenizer.chat_template");
        CHECK(v && !strcmp(v->as.s.ptr, "D"));
        v = mf_meta_get(b, "tokenizer.chat_template.tool_use");
        CHECK(v && !strcmp(v->as.s.ptr, "T"));
        v = mf_meta_get(b, "tokenizer.chat_templates");
        CHECK(v && v->type == MF_V_ARR && v->as.arr.n == 2 &&
              !strcmp(v->as.arr.items[0].as.s.ptr, "tool_use") &&
              !strcmp(v->as.arr.items[1].as.s.ptr, "rag"));
    }
    mf_close(b);
}

/* Arrays from JSON: element type from the key's old array or the values. */
static void test_json_arrays(const char *src)
{
    char *j = tpath("arr.json"), *k = tpath("tags.json");
    write_text(j, "[1, 2, 3000000000]");
    write_text(k, "[\"x\", \"y\"]");
    char t1[600], t2[600];
    snprintf(t1, sizeof(t1), "json:%s", j);
    snprintf(t2, sizeof(t2), "json:%s", k);
    mf_edit_op ops[] = {{MF_EDIT_SET, "mfmt.ints", t1}, {MF_EDIT_SET, "general.tags", t2},
                        {MF_EDIT_SET, "mfmt.inline", "str:[not json]"}};
    char *out = tpath("arr.gguf");
    mf_status st;
    mf_status_init(&st);
    CHECKF(edit(src, out, ops, 3, 0, NULL, &st) == 0, "%s", st.msg);
    mf_status_clear(&st);
    mf_model *b = open_strict(out);
    const mf_value *v = b ? mf_meta_get(b, "mfmt.ints") : NULL;
    CHECK(v && v->type == MF_V_ARR && v->as.arr.elem == MF_V_I64 && v->as.arr.n == 3 &&
          v->as.arr.items[2].as.i == 3000000000LL);
    v = b ? mf_meta_get(b, "general.tags") : NULL;
    CHECK(v && v->type == MF_V_ARR && v->as.arr.elem == MF_V_STR && v->as.arr.n == 2);
    mf_close(b);
}

static void test_safetensors(const char *shared)
{
    char src[512];
    snprintf(src, sizeof(src), "%s/corpus/safetensors/all_dtypes.safetensors", shared);
    mf_edit_op ops[] = {{MF_EDIT_SET, "format", "pt"}, {MF_EDIT_SET, "note", "edited"}};
    char *out = tpath("out.safetensors");
    mf_status st;
    mf_status_init(&st);
    CHECKF(edit(src, out, ops, 2, 0, NULL, &st) == 0, "%s", st.msg);
    mf_model *a = open_strict(src), *b = open_strict(out);
    if (a && b) {
        CHECK(same_tensors(a, b, NULL, NULL));
        const mf_value *v = mf_meta_get(b, "note");
        CHECK(v && v->type == MF_V_STR && !strcmp(v->as.s.ptr, "edited"));
    }
    mf_close(a);
    mf_close(b);
    mf_status_clear(&st);
    mf_edit_op bad = {MF_EDIT_SET, "n", "int:3"};
    CHECK(edit(src, out, &bad, 1, MF_EDIT_FORCE, NULL, &st) != 0 && strstr(st.msg, "strings"));
    mf_status_clear(&st);
}

static int run_cmd(const char *cmd, char *out, size_t cap)
{
    return tl_run_cmd(cmd, tpath("cmd.log"), out, cap);
}

static void test_cli(const char *src)
{
    const char *mfmt = getenv("MFMT");
    if (!mfmt || access(mfmt, X_OK) != 0) {
        printf("skip: CLI tests (MFMT not set)\n");
        return;
    }
    static char out[65536];
    char cmd[2048];
    char *o = tpath("cli.gguf");
    snprintf(cmd, sizeof(cmd), "%s edit %s %s --set general.name=CLI --delete general.type --json",
             mfmt, src, o);
    CHECK(run_cmd(cmd, out, sizeof(out)) == 0);
    json_t *j = json_loads(out, 0, NULL);
    json_t *ch = json_object_get(j, "changes");
    CHECK(json_array_size(ch) == 2 &&
          !strcmp(json_string_value(json_object_get(json_array_get(ch, 1), "op")), "delete"));
    json_decref(j);
    snprintf(cmd, sizeof(cmd), "%s edit %s --dry-run --set llama.context_length=4096", mfmt, src);
    CHECK(run_cmd(cmd, out, sizeof(out)) == 0 && strstr(out, "u32 4096 (was u32 128)") &&
          strstr(out, "dry run"));
    snprintf(cmd, sizeof(cmd), "%s edit %s %s --delete general.architecture", mfmt, src, o);
    CHECK(run_cmd(cmd, out, sizeof(out)) == 2 && strstr(out, "--force"));
    snprintf(cmd, sizeof(cmd), "%s edit %s %s --bogus", mfmt, src, o);
    CHECK(run_cmd(cmd, out, sizeof(out)) == 2 && strstr(out, "unknown option"));
    snprintf(cmd, sizeof(cmd), "%s edit %s", mfmt, src);
    CHECK(run_cmd(cmd, out, sizeof(out)) == 2 && strstr(out, "nothing to do"));
}

int main(void)
{
    const char *shared = tl_shared_dir();
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/mfmt-edit-XXXXXX");
    if (!mkdtemp(tmpdir))
        return 1;
    if (!shared) {
        TL_SKIP("edit: the edits of the converter references (no ../shared)");
        return tl_report("edit");
    }
    static const char *const files[] = {"convert-ref/llama-tiny-f16.gguf",
                                        "convert-ref/qwen2-tiny-bf16.gguf",
                                        "real-gguf/ggml-vocab-llama-spm.gguf",
                                        "real-gguf/ggml-vocab-gpt-2.gguf"};
    char src[512];
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        snprintf(src, sizeof(src), "%s/%s", shared, files[i]);
        test_gguf_set_delete(src);
    }
    snprintf(src, sizeof(src), "%s/convert-ref/llama-tiny-f16.gguf", shared);
    test_refusals(src);
    test_force_alignment(src);
    test_in_place_and_rename(src);
    test_dry_run(src);
    test_chat_template_from(src, shared);
    test_json_arrays(src);
    test_safetensors(shared);
    test_cli(src);
    tl_remove_tmpdir(tmpdir);
    return tl_report("edit");
}
