/* test_mistral_format.c - Mistral-format directories (params.json,
 * consolidated.safetensors, tekken.json or tokenizer.model.v3) to GGUF
 * against llama.cpp's converter (ecbcb7ea, --mistral-format): each
 * directory of tests/data/hf_mistral/dirs as f16 and q8_0 must be the file
 * the converter wrote, byte for byte (expected.json: its sha256); Q4_K_M in
 * one pass must be llama-quantize's file (c392e50, no FMA: the whole file)
 * or, for Ministral 3 (arch mistral3, b10256 only), have its header and
 * every tensor its FMA build does not round differently; then detection,
 * the errors, and (MFMT_LLAMA_SIMPLE set) llama.cpp b10256 running each
 * output. How the data was made: tests/data/hf_mistral/README.md. */
#include "testlib.h"

#include "core/core.h"
#include "formats/formats.h"
#include "ops/hfconv/hfconv.h"

#include <jansson.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define DATA "tests/data/hf_mistral"

static int convert(const char *dir, const char *out, const char *type, int mistral, mf_status *st)
{
    mf_convert_gguf_opts o;
    mf_convert_gguf_opts_init(&o);
    o.type = type;
    o.mistral_format = mistral;
    return mf_convert_to_gguf(dir, out, &o, st);
}

static bool sha_is(const char *path, const char *want)
{
    char h[129] = "";
    mf_status st;
    mf_status_init(&st);
    mf_hash_file(path, MF_SHA256, h, &st);
    mf_status_clear(&st);
    return want && !strcmp(h, want);
}

static void references(const char *tmp, json_t *e)
{
    const char *key;
    json_t *v;
    int same = 0, total = 0;
    json_object_foreach(json_object_get(e, "outputs"), key, v) {
        const char *d = json_string_value(json_object_get(v, "dir")), *t = json_string_value(json_object_get(v, "type"));
        char src[512], out[512];
        snprintf(src, sizeof(src), DATA "/dirs/%s", d ? d : "?");
        snprintf(out, sizeof(out), "%s/%s.gguf", tmp, key);
        mf_status st;
        mf_status_init(&st);
        int rc = convert(src, out, t, MF_MISTRAL_AUTO, &st);
        CHECKF(rc == 0, "%s: %s", key, st.msg);
        mf_status_clear(&st);
        bool ok = rc == 0 && sha_is(out, json_string_value(json_object_get(v, "sha256")));
        total++;
        same += ok;
        printf("mistral format %-28s %s\n", key, ok ? "byte-identical to llama.cpp's converter (--mistral-format)"
                                                    : "DIFFERS");
        CHECKF(ok, "%s differs from the converter's file", key);
        unlink(out);
    }
    printf("mistral format: %d of %d byte-identical\n", same, total);
    CHECK(total == 6);
}

/* The header (everything before the tensor data) and each tensor of path
 * against a llama-quantize record; tensors of the types its FMA build
 * rounds differently (Q5_0, Q4_K) against c392e50's quantization of the
 * same F16 relabelled as llama instead (counted in *fma). Returns the
 * mismatches. */
static int against_record(const char *path, json_t *rec, int *fma)
{
    mf_status st;
    mf_status_init(&st);
    mf_model *m = NULL;
    if (mf_open(path, NULL, &m, &st)) {
        fprintf(stderr, "  %s: %s\n", path, st.msg);
        mf_status_clear(&st);
        return 1;
    }
    json_t *want = json_object_get(rec, "tensors"), *nofma = json_object_get(rec, "tensors_c392e50_relabelled");
    int bad = json_array_size(want) != m->n_tensors;
    uint64_t start = UINT64_MAX;
    for (size_t i = 0; i < m->n_tensors; i++)
        start = m->tensors[i].offset < start ? m->tensors[i].offset : start;
    char hh[129] = "";
    uint8_t *hdr = start < (1u << 24) ? malloc(start) : NULL;
    FILE *f = fopen(path, "rb");
    if (f && hdr && fread(hdr, 1, start, f) == start) {
        mf_hasher *h = mf_hasher_new(MF_SHA256);
        mf_hasher_update(h, hdr, start);
        mf_hasher_final_hex(h, hh);
        mf_hasher_free(h);
    }
    if (f)
        fclose(f);
    free(hdr);
    bad += strcmp(hh, json_string_value(json_object_get(rec, "header_sha256"))) != 0;
    for (size_t i = 0; i < json_array_size(want) && i < m->n_tensors; i++) {
        char name[256], type[16], sha[80], mine[129] = "";
        const mf_tensor *t = &m->tensors[i];
        if (sscanf(json_string_value(json_array_get(want, i)), "%255s %15s %79s", name, type, sha) != 3)
            return bad + 1;
        bool ok = !strcmp(name, t->name) && !strcmp(type, mf_dtype_name(t->dtype)) &&
                  mf_hash_tensor(m, t, MF_SHA256, mine, &st) == 0;
        mf_status_clear(&st);
        if (!strcmp(type, "Q5_0") || !strcmp(type, "Q4_K")) { /* that build's fused multiply-adds */
            char n2[256], t2[16];
            ok = ok && sscanf(json_string_value(json_array_get(nofma, i)) ? json_string_value(json_array_get(nofma, i))
                              : "", "%255s %15s %79s", n2, t2, sha) == 3 && !strcmp(n2, name) && !strcmp(t2, type);
            (*fma)++;
        }
        ok = ok && !strcmp(mine, sha);
        if (!ok)
            fprintf(stderr, "  %s: tensor %s differs from llama-quantize's\n", path, name);
        bad += !ok;
    }
    mf_close(m);
    return bad;
}

static void quantized(const char *tmp, json_t *e)
{
    const char *key;
    json_t *v;
    json_object_foreach(json_object_get(e, "quantized"), key, v) {
        const char *d = json_string_value(json_object_get(v, "dir")), *tool = json_string_value(json_object_get(v, "tool"));
        char src[512], out[512];
        snprintf(src, sizeof(src), DATA "/dirs/%s", d ? d : "?");
        snprintf(out, sizeof(out), "%s/%s.gguf", tmp, key);
        mf_status st;
        mf_status_init(&st);
        int rc = convert(src, out, "Q4_K_M", MF_MISTRAL_AUTO, &st);
        CHECKF(rc == 0, "%s: %s", key, st.msg);
        mf_status_clear(&st);
        int fma = 0;
        bool whole = json_object_get(v, "sha256") && !json_object_get(v, "tensors");
        bool ok = rc == 0 && (whole ? sha_is(out, json_string_value(json_object_get(v, "sha256")))
                                    : against_record(out, v, &fma) == 0);
        printf("mistral format %-28s one pass vs %s: %s\n", key, tool ? tool : "?",
               !ok ? "DIFFERS" : whole ? "byte-identical" : "same header, types and tensors");
        if (!whole)
            printf("mistral format %-28s %d Q5_0/Q4_K tensors against c392e50's (b10256's FMA build rounds them "
                   "differently)\n", key, fma);
        CHECKF(ok, "%s: differs from %s", key, tool ? tool : "llama-quantize");
        unlink(out);
    }
    /* no context_length (Mistral 7B's params.json has none): llama.cpp cannot
     * load the F16, so llama-quantize refuses it and so does the one pass */
    mf_status st;
    mf_status_init(&st);
    char out[512];
    snprintf(out, sizeof(out), "%s/spm-q4.gguf", tmp);
    int rc = convert(DATA "/dirs/mistral-spm-tiny", out, "Q4_K_M", MF_MISTRAL_AUTO, &st);
    CHECKF(rc != 0 && strstr(st.msg, "context_length"), "%s", st.msg);
    CHECK(access(out, F_OK) != 0);
    mf_status_clear(&st);
}

static void detection(void)
{
    mf_status st;
    mf_status_init(&st);
    mf_model *m = NULL;
    int rc = mf_open(DATA "/dirs/ministral3-tekken-tiny", NULL, &m, &st);
    CHECKF(rc == 0, "%s", st.msg);
    if (rc == 0) {
        CHECK(m->format == MF_FMT_HF_DIR);
        CHECKF(strstr(m->version, "Mistral format") && strstr(m->version, "mistral3"), "%s", m->version);
        CHECK(m->n_tensors == 23);
        const mf_kv *k = NULL;
        for (size_t i = 0; i < m->n_meta; i++)
            if (!strcmp(m->meta[i].key, "tokenizer.kind"))
                k = &m->meta[i];
        CHECK(k && k->v.type == MF_V_STR && !strcmp(k->v.as.s.ptr, "tekken"));
        mf_close(m);
    }
    mf_status_clear(&st);
    rc = mf_open(DATA "/dirs/mistral-spm-tiny", NULL, &m, &st);
    CHECKF(rc == 0 && strstr(m->version, "GGUF arch llama"), "%s", rc ? st.msg : m->version);
    if (rc == 0)
        mf_close(m);
    mf_status_clear(&st);
    mf_detection det = {0};
    rc = mf_detect(DATA "/dirs/mistral-tekken-tiny", &det, &st);
    CHECKF(rc == 0 && det.format == MF_FMT_HF_DIR && strstr(det.detail, "Mistral-format"), "%s", det.detail);
    mf_status_clear(&st);
}

/* A copy of a directory with one file replaced by the JSON j (j stolen). */
static void variant(const char *tmp, const char *src, const char *file, json_t *j, char *out, size_t cap)
{
    char cmd[2048], p[1024];
    snprintf(out, cap, "%s/variant", tmp);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s' && cp -r '" DATA "/dirs/%s' '%s'", out, src, out);
    CHECK(system(cmd) == 0);
    snprintf(p, sizeof(p), "%s/%s", out, file);
    CHECK(json_dump_file(j, p, 0) == 0);
    json_decref(j);
}

static json_t *load(const char *src, const char *file)
{
    char p[512];
    snprintf(p, sizeof(p), DATA "/dirs/%s/%s", src, file);
    json_t *j = json_load_file(p, JSON_ALLOW_NUL, NULL);
    CHECKF(j != NULL, "%s unreadable", p);
    return j ? j : json_object();
}

static void refused(const char *dir, int mistral, const char *want, const char *what)
{
    mf_status st;
    mf_status_init(&st);
    char out[1100];
    snprintf(out, sizeof(out), "%s/../refused.gguf", dir);
    int rc = convert(dir, out, "f16", mistral, &st);
    CHECKF(rc != 0 && strstr(st.msg, want), "%s: %s (want \"%s\")", what, rc ? st.msg : "converted", want);
    CHECKF(access(out, F_OK) != 0, "%s: a file was written", what);
    mf_status_clear(&st);
}

static void errors(const char *tmp)
{
    char d[600];
    json_t *j = load("mistral-tekken-tiny", "tekken.json");
    json_object_set_new(json_array_get(json_object_get(j, "vocab"), 300), "rank", json_integer(7));
    variant(tmp, "mistral-tekken-tiny", "tekken.json", j, d, sizeof(d));
    refused(d, MF_MISTRAL_AUTO, "vocab[300]", "a rank out of place");

    j = load("mistral-tekken-tiny", "tekken.json");
    json_object_set_new(json_object_get(j, "config"), "version", json_string("v99"));
    variant(tmp, "mistral-tekken-tiny", "tekken.json", j, d, sizeof(d));
    refused(d, MF_MISTRAL_AUTO, "Unknown version", "an unknown tokenizer version");

    j = load("ministral3-tekken-tiny", "tekken.json"); /* its special tokens without <pad> */
    json_array_remove(json_object_get(j, "special_tokens"), 11);
    variant(tmp, "ministral3-tekken-tiny", "tekken.json", j, d, sizeof(d));
    refused(d, MF_MISTRAL_AUTO, "<pad>", "no <pad> special token");

    j = load("mistral-tekken-tiny", "tekken.json"); /* after v7 the special tokens must be listed */
    json_object_set_new(json_object_get(j, "config"), "version", json_string("v11"));
    variant(tmp, "mistral-tekken-tiny", "tekken.json", j, d, sizeof(d));
    refused(d, MF_MISTRAL_AUTO, "Special tokens not found", "v11 without special_tokens");

    /* v11: the converter's bundled template, unless the directory has its own */
    j = load("ministral3-tekken-tiny", "tekken.json");
    json_object_set_new(json_object_get(j, "config"), "version", json_string("v11"));
    variant(tmp, "ministral3-tekken-tiny", "tekken.json", j, d, sizeof(d));
    refused(d, MF_MISTRAL_AUTO, "chat_template.jinja", "v11 without chat_template.jinja");
    char p[700], out[700];
    snprintf(p, sizeof(p), "%s/chat_template.jinja", d);
    FILE *f = fopen(p, "w");
    CHECK(f && fputs("{{ bos_token }}{% for m in messages %}[INST]{{ m.content }}[/INST]{% endfor %}", f) >= 0);
    if (f)
        fclose(f);
    snprintf(out, sizeof(out), "%s/with-template.gguf", tmp);
    mf_status st;
    mf_status_init(&st);
    mf_model *m = NULL;
    int rc = convert(d, out, "f16", MF_MISTRAL_AUTO, &st) || mf_open(out, NULL, &m, &st);
    CHECKF(rc == 0, "%s", st.msg);
    const mf_kv *k = NULL;
    for (size_t i = 0; rc == 0 && i < m->n_meta; i++)
        if (!strcmp(m->meta[i].key, "tokenizer.chat_template"))
            k = &m->meta[i];
    CHECK(k && k->v.type == MF_V_STR && strstr(k->v.as.s.ptr, "[INST]{{ m.content }}"));
    if (m)
        mf_close(m);
    unlink(out);
    mf_status_clear(&st);

    j = load("mistral-tekken-tiny", "params.json");
    json_object_set_new(j, "moe", json_pack("{s:i,s:i}", "num_experts", 4, "num_experts_per_tok", 2));
    variant(tmp, "mistral-tekken-tiny", "params.json", j, d, sizeof(d));
    refused(d, MF_MISTRAL_AUTO, "MistralMoeModel", "a mixture of experts");

    j = load("mistral-tekken-tiny", "params.json");
    json_object_set_new(j, "quantization", json_pack("{s:s}", "qformat_weight", "fp8_e4m3"));
    variant(tmp, "mistral-tekken-tiny", "params.json", j, d, sizeof(d));
    refused(d, MF_MISTRAL_AUTO, "FP8", "an FP8 checkpoint");

    /* several tokenizer files: tekken.json, else the last name in sorted
     * order (MistralVocab): tokenizer.model.v3 over a broken .v1 */
    char sh[2400], two[600];
    snprintf(two, sizeof(two), "%s/two/mistral-spm-tiny", tmp); /* the same name: the same general.name */
    snprintf(sh, sizeof(sh), "mkdir -p '%s' && cp -r '" DATA "/dirs/mistral-spm-tiny/.' '%s' && echo broken > "
             "'%s/tokenizer.model.v1'", two, two, two);
    CHECK(system(sh) == 0);
    json_t *e = json_load_file(DATA "/expected.json", 0, NULL);
    snprintf(out, sizeof(out), "%s/two-tokenizers.gguf", tmp);
    rc = convert(two, out, "f16", MF_MISTRAL_AUTO, &st);
    CHECKF(rc == 0, "%s", st.msg);
    mf_status_clear(&st);
    snprintf(sh, sizeof(sh), "rm -rf '%s/two'", tmp);
    CHECK(system(sh) == 0);
    CHECK(rc == 0 && sha_is(out, json_string_value(json_object_get(json_object_get(json_object_get(e, "outputs"),
                                                                                     "mistral-spm-tiny-f16"), "sha256"))));
    json_decref(e);
    unlink(out);

    /* forced off: read as a Hugging Face directory (its config.json holds architectures only) */
    refused(DATA "/dirs/mistral-tekken-tiny", MF_MISTRAL_OFF, "num_hidden_layers", "--mistral-format off");
    mf_convert_gguf_opts o;
    mf_convert_gguf_opts_init(&o);
    o.mmproj = true;
    o.mistral_format = MF_MISTRAL_ON;
    snprintf(out, sizeof(out), "%s/mm.gguf", tmp);
    rc = mf_convert_to_gguf(DATA "/dirs/ministral3-tekken-tiny", out, &o, &st);
    CHECKF(rc != 0 && strstr(st.msg, "PixtralModel"), "%s", st.msg);
    mf_status_clear(&st);
    snprintf(p, sizeof(p), "rm -rf '%s'", d);
    CHECK(system(p) == 0);
}

/* The value of key k in m, or NULL */
static const mf_value *meta(const mf_model *m, const char *k)
{
    for (size_t i = 0; i < m->n_meta; i++)
        if (!strcmp(m->meta[i].key, k))
            return &m->meta[i].v;
    return NULL;
}

/* GGUF -> HF -> GGUF: a Mistral-format GGUF goes back to a Hugging Face
 * directory (LlamaForCausalLM / Ministral3ForCausalLM, Q/K in HF's order,
 * the tekken vocabulary as tokenizer.json), which converts to the same
 * tensors and the same keys but tokenizer.ggml.scores (the tekken path
 * writes zeros, the BPE path none) */
static void round_trip(const char *tmp)
{
    static const char *const dirs[] = {"mistral-tekken-tiny", "ministral3-tekken-tiny"};
    for (size_t i = 0; i < 2; i++) {
        char src[512], a[512], hf[512], b[512];
        snprintf(src, sizeof(src), DATA "/dirs/%s", dirs[i]);
        snprintf(a, sizeof(a), "%s/rt-a.gguf", tmp);
        snprintf(hf, sizeof(hf), "%s/rt-hf", tmp);
        snprintf(b, sizeof(b), "%s/rt-b.gguf", tmp);
        mf_status st;
        mf_status_init(&st);
        mf_convert_gguf_opts g;
        mf_convert_gguf_opts_init(&g);
        g.type = "f16";
        g.layout = i ? MF_CONVERT_LAYOUT_2026_02 : MF_CONVERT_LAYOUT_C392E50;
        mf_model *ma = NULL, *mb = NULL;
        int rc = convert(src, a, "f16", MF_MISTRAL_AUTO, &st) || mf_convert_to_hf(a, hf, NULL, &st) ||
                 mf_convert_to_gguf(hf, b, &g, &st) || mf_open(a, NULL, &ma, &st) || mf_open(b, NULL, &mb, &st);
        CHECKF(rc == 0, "%s: %s", dirs[i], st.msg);
        mf_status_clear(&st);
        int same_t = 0, same_k = 0, bad = 0;
        for (size_t t = 0; rc == 0 && t < ma->n_tensors; t++) {
            const mf_tensor *x = &ma->tensors[t], *y = mf_tensor_find(mb, x->name);
            char hx[129] = "", hy[129] = "";
            bool ok = y && mf_hash_tensor(ma, x, MF_SHA256, hx, &st) == 0 && mf_hash_tensor(mb, y, MF_SHA256, hy, &st) == 0 &&
                      !strcmp(hx, hy);
            mf_status_clear(&st);
            same_t += ok;
            bad += !ok;
        }
        for (size_t k = 0; rc == 0 && k < ma->n_meta; k++) {
            const mf_kv *x = &ma->meta[k];
            if (!strcmp(x->key, "tokenizer.ggml.scores") || !strncmp(x->key, "GGUF.", 5))
                continue;
            const mf_value *y = meta(mb, x->key);
            bool ok = y && y->type == x->v.type &&
                      (x->v.type != MF_V_ARR || (y->as.arr.n == x->v.as.arr.n && y->as.arr.elem == x->v.as.arr.elem));
            for (size_t e = 0; ok && x->v.type == MF_V_ARR && x->v.as.arr.elem == MF_V_STR && e < x->v.as.arr.n; e++)
                ok = !strcmp(x->v.as.arr.items[e].as.s.ptr, y->as.arr.items[e].as.s.ptr);
            if (ok && x->v.type == MF_V_STR)
                ok = !strcmp(x->v.as.s.ptr, y->as.s.ptr);
            if (!ok)
                fprintf(stderr, "  %s: key %s differs after GGUF -> HF -> GGUF\n", dirs[i], x->key);
            same_k += ok;
            bad += !ok;
        }
        printf("mistral format %-28s GGUF -> HF -> GGUF: %d tensors and %d keys the same, %d differ\n", dirs[i],
               same_t, same_k, bad);
        CHECK(rc == 0 && bad == 0 && same_t == (int)ma->n_tensors && mb->n_tensors == ma->n_tensors);
        CHECK(rc != 0 || meta(mb, "tokenizer.ggml.scores") == NULL);
        if (ma)
            mf_close(ma);
        if (mb)
            mf_close(mb);
        char cmd[1700];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s' '%s'", a, hf, b);
        CHECK(system(cmd) == 0);
    }
}

/* MFMT_LLAMA_SIMPLE (llama-simple of llama.cpp b10256): each tekken
 * directory's f16 and Q4_K_M run */
static void runtime(const char *tmp)
{
    const char *simple = getenv("MFMT_LLAMA_SIMPLE");
    if (!simple || !*simple) {
        TL_SKIP("mistral format in the current runtime: MFMT_LLAMA_SIMPLE (llama-simple b10256) not set");
        return;
    }
    static const char *const dirs[] = {"mistral-tekken-tiny", "ministral3-tekken-tiny"};
    static const char *const types[] = {"f16", "Q4_K_M"};
    for (size_t i = 0; i < 2; i++)
        for (size_t k = 0; k < 2; k++) {
            char src[512], out[512], cmd[2048];
            snprintf(src, sizeof(src), DATA "/dirs/%s", dirs[i]);
            snprintf(out, sizeof(out), "%s/%s-%s.gguf", tmp, dirs[i], types[k]);
            mf_status st;
            mf_status_init(&st);
            int rc = convert(src, out, types[k], MF_MISTRAL_AUTO, &st);
            CHECKF(rc == 0, "%s", st.msg);
            mf_status_clear(&st);
            snprintf(cmd, sizeof(cmd), "LM_GGML_NO_BACKTRACE=1 '%s' -m '%s' -n 4 Hello >/dev/null 2>&1", simple, out);
            int x = rc == 0 ? system(cmd) : -1;
            printf("llama-simple b10256 %-24s %-6s exit %d\n", dirs[i], types[k], x == -1 ? -1 : WEXITSTATUS(x));
            CHECKF(x == 0, "%s as %s: llama-simple fails", dirs[i], types[k]);
            unlink(out);
        }
}

int main(void)
{
    char tmp[] = "/tmp/mfmt-mistral-XXXXXX";
    CHECK(mkdtemp(tmp) != NULL);
    json_t *e = json_load_file(DATA "/expected.json", 0, NULL);
    CHECKF(e != NULL, DATA "/expected.json unreadable");
    if (e) {
        references(tmp, e);
        quantized(tmp, e);
    }
    json_decref(e);
    detection();
    errors(tmp);
    round_trip(tmp);
    runtime(tmp);
    tl_remove_tmpdir(tmp);
    return tl_report("mistral_format");
}
