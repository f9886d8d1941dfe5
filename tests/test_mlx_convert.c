/* test_mlx_convert.c - writing MLX: the affine quantizer against MLX's own
 * CPU quantizer and the Metal kernel's rules (tests/data/mlx/quant, made by
 * make_quant_ref.py), whole conversions against the directories MLX wrote
 * (tests/data/mlx/ref, README.md there), the round trips MLX -> HF -> MLX
 * and the Python JSON writer. */
#include "testmf.h"

#include "core/core.h"
#include "ops/pyjson.h"
#include "quant/mlx_affine.h"

#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <sys/stat.h>

static char tmp[256];
static int skipped;

/* ../shared, or NULL after a counted SKIP line naming what needed it. */
static const char *shared_or_skip(const char *what)
{
    const char *shared = tl_shared_dir();
    if (!shared) {
        printf("SKIP %s: ../shared is not here\n", what);
        skipped++;
    }
    return shared;
}

static float in_value(const uint8_t *p, const char *dt)
{
    if (!strcmp(dt, "f16"))
        return mf_f16_to_f32(mf_rd16le(p));
    if (!strcmp(dt, "bf16"))
        return mf_bf16_to_f32(mf_rd16le(p));
    float f;
    memcpy(&f, p, 4);
    return f;
}

static void store_as(uint8_t *p, float v, const char *dt)
{
    if (!strcmp(dt, "f16"))
        mf_wr16le(p, mf_f32_to_f16(v));
    else if (!strcmp(dt, "bf16"))
        mf_wr16le(p, mf_f32_to_bf16(v));
    else
        memcpy(p, &v, 4);
}

/* One case: the whole input as one row (MLX quantizes the flat array in
 * groups), our bytes against the reference file. */
static void quant_case(const char *stem, const char *dt, int bits, int gs, int kernel)
{
    char path[256];
    snprintf(path, sizeof(path), "tests/data/mlx/quant/%s.in", stem);
    size_t n_in, n_ref;
    uint8_t *in = tl_read_file(path, &n_in);
    snprintf(path, sizeof(path), "tests/data/mlx/quant/%s_b%d_g%d.%s", stem, bits, gs,
             kernel == MF_MLX_METAL ? "metal" : "cpu");
    uint8_t *ref = tl_read_file(path, &n_ref);
    CHECKF(in && ref, "%s missing", path);
    if (!in || !ref) {
        free(in);
        free(ref);
        return;
    }
    size_t es = strcmp(dt, "f32") ? 2 : 4, n = n_in / es, groups = n / (size_t)gs;
    float *w = malloc(n * sizeof(float)), *sc = malloc(groups * sizeof(float)),
          *bi = malloc(groups * sizeof(float));
    size_t packed = (size_t)mf_mlx_packed_bytes(n, bits), total = packed + 2 * groups * es;
    uint8_t *out = calloc(total, 1);
    for (size_t i = 0; i < n; i++)
        w[i] = in_value(in + i * es, dt);
    mf_mlx_quantize_row(w, n, bits, gs, kernel, out, sc, bi);
    for (size_t g = 0; g < groups; g++) {
        store_as(out + packed + g * es, sc[g], dt);
        store_as(out + packed + (groups + g) * es, bi[g], dt);
    }
    CHECKF(n_ref == total, "%s: %zu bytes, expected %zu", path, n_ref, total);
    size_t first = 0;
    while (first < total && first < n_ref && out[first] == ref[first])
        first++;
    CHECKF(first == total, "%s: first different byte %zu (%s)", path, first,
           first < packed ? "codes" : first < packed + groups * es ? "scales" : "biases");
    /* the codes read back as the bit stream the reader decodes */
    unsigned q0 = mf_mlx_code_at(out, 0, bits, packed), qn = mf_mlx_code_at(out, n - 1, bits, packed);
    CHECK(q0 < (1u << bits) && qn < (1u << bits));
    free(in);
    free(ref);
    free(w);
    free(sc);
    free(bi);
    free(out);
}

static void test_quantizer(void)
{
    static const char *const dts[] = {"f32", "f16", "bf16"};
    static const int bits[] = {2, 3, 4, 5, 6, 8}, gss[] = {32, 64, 128};
    for (size_t d = 0; d < 3; d++)
        for (size_t b = 0; b < 6; b++)
            for (size_t g = 0; g < 3; g++) {
                quant_case(dts[d], dts[d], bits[b], gss[g], MF_MLX_CPU);
                quant_case(dts[d], dts[d], bits[b], gss[g], MF_MLX_METAL);
            }
    /* NaN weights: MLX's CPU kernel (qharness, x86-64) gives them code 0 */
    for (size_t b = 0; b < 6; b++)
        for (size_t g = 0; g < 3; g++)
            quant_case("f32nan", "f32", bits[b], gss[g], MF_MLX_CPU);
    CHECK(mf_mlx_affine_params_ok(4, 64) && !mf_mlx_affine_params_ok(7, 64) &&
          !mf_mlx_affine_params_ok(4, 16) && !mf_mlx_affine_params_ok(1, 32));
}

/* The two kernels on the cases their rules tell apart. */
static void test_kernel_rules(void)
{
    float neg[32], tie[32];
    for (int i = 0; i < 32; i++) {
        neg[i] = -1.5f;         /* all equal, negative: Metal's max is 0 */
        tie[i] = (float)(i % 4); /* 0..3 with 2 bits: exact codes either way */
    }
    uint8_t pc[8], pm[8];
    float sc, bc, sm, bm;
    mf_mlx_quantize_row(neg, 32, 2, 32, MF_MLX_CPU, pc, &sc, &bc);
    mf_mlx_quantize_row(neg, 32, 2, 32, MF_MLX_METAL, pm, &sm, &bm);
    CHECKF(bc == -1.5f && bm == -1.5f, "bias cpu %g metal %g", bc, bm);
    CHECKF(sm == 0.5f && fabsf(sc) < 1e-6f, "scale cpu %g metal %g", sc, sm);
    mf_mlx_quantize_row(tie, 32, 2, 32, MF_MLX_CPU, pc, &sc, &bc);
    CHECK(sc == -1.0f && bc == 3.0f && pc[0] == 0x1b); /* codes 3,2,1,0 */
    /* halves: scale -1, bias 3, code = round(3 - w); 2.5 and 0.5 round to
     * even on the CPU (2, 0) and away from zero in Metal (3, 1). A NaN:
     * code 0 on the CPU (x86-64's cast), 2^bits - 1 in Metal (fmin). */
    float half[32];
    for (int i = 0; i < 32; i++)
        half[i] = 1.0f;
    half[0] = 0.0f;
    half[1] = 3.0f;
    half[2] = 0.5f;
    half[3] = 1.5f;
    half[4] = 2.5f;
    half[5] = NAN;
    static const unsigned want_cpu[6] = {3, 0, 2, 2, 0, 0}, want_metal[6] = {3, 0, 3, 2, 1, 3};
    mf_mlx_quantize_row(half, 32, 2, 32, MF_MLX_CPU, pc, &sc, &bc);
    mf_mlx_quantize_row(half, 32, 2, 32, MF_MLX_METAL, pm, &sm, &bm);
    CHECKF(sc == -1.0f && bc == 3.0f && sm == -1.0f && bm == 3.0f, "cpu %g %g metal %g %g", sc,
           bc, sm, bm);
    for (int j = 0; j < 6; j++) {
        unsigned c = mf_mlx_code_at(pc, (uint64_t)j, 2, 8), m = mf_mlx_code_at(pm, (uint64_t)j, 2, 8);
        CHECKF(c == want_cpu[j] && m == want_metal[j], "value %d (%g): cpu %u metal %u", j,
               (double)half[j], c, m);
    }
}

/* ------------------------------------------------------------- pyjson */

static void check_dump(const char *json_text, const char *expect)
{
    json_t *j = json_loads(json_text, JSON_DECODE_ANY, NULL);
    char *s = j ? mf_pyjson_dumps(j, 4) : NULL;
    CHECKF(s && !strcmp(s, expect), "%s -> %s, expected %s", json_text, s ? s : "(null)", expect);
    free(s);
    json_decref(j);
}

static void test_pyjson(void)
{
    /* what CPython 3.11's json.dumps(x, indent=4) prints */
    check_dump("1e-05", "1e-05");
    check_dump("1e-06", "1e-06");
    check_dump("0.0001", "0.0001");
    check_dump("10000.0", "10000.0");
    check_dump("1e16", "1e+16");
    check_dump("1e15", "1000000000000000.0");
    check_dump("0.02", "0.02");
    check_dump("-2.5e-07", "-2.5e-07");
    check_dump("123456.789", "123456.789");
    check_dump("0.1", "0.1");
    check_dump("{}", "{}");
    check_dump("[]", "[]");
    check_dump("{\"a\": [1, 2], \"b\": {\"c\": null}}",
               "{\n    \"a\": [\n        1,\n        2\n    ],\n    \"b\": {\n        \"c\": null\n    }\n}");
    check_dump("\"\\u00e9\\ud83d\\ude00\\u007f\\t\\\"\"", "\"\\u00e9\\ud83d\\ude00\\u007f\\t\\\"\"");
    check_dump("[true, false, -3]", "[\n    true,\n    false,\n    -3\n]");
}

/* ------------------------------------------ conversions against MLX's */

/* A safetensors file's header text. */
static char *header_text(const char *path)
{
    size_t n;
    uint8_t *b = tl_read_file(path, &n);
    if (!b || n < 8) {
        free(b);
        return NULL;
    }
    uint64_t len = mf_rd64le(b);
    char *t = len <= n - 8 ? malloc(len + 1) : NULL;
    if (t) {
        memcpy(t, b + 8, len);
        t[len] = 0;
    }
    free(b);
    return t;
}

/* The header without data_offsets (which follow the data order: MLX's is
 * its hash map's, ours the parameters'), keys sorted, compact. */
static char *stripped(const char *text)
{
    json_t *j = json_loads(text, 0, NULL);
    const char *k;
    json_t *v;
    json_object_foreach(j, k, v)
        json_object_del(v, "data_offsets");
    char *s = j ? json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(j);
    return s;
}

/* MLX's header form: nlohmann's dump() (compact, sorted) and no padding. */
static bool mlx_form(const char *text)
{
    json_t *j = json_loads(text, 0, NULL);
    char *s = j ? json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    bool same = s && !strcmp(s, text);
    free(s);
    json_decref(j);
    return same;
}

static bool same_file(const char *a, const char *b)
{
    size_t na, nb;
    uint8_t *x = tl_read_file(a, &na), *y = tl_read_file(b, &nb);
    bool same = x && y && na == nb && !memcmp(x, y, na);
    free(x);
    free(y);
    return same;
}

/* Each tensor of our file: dtype, shape and SHA-256 as MLX's. */
static void compare_tensors(const char *kase, const char *path, json_t *want)
{
    mf_model *m = NULL;
    mf_status st;
    mf_status_init(&st);
    CHECKF(mf_open(path, NULL, &m, &st) == 0, "%s: %s", path, st.msg);
    mf_status_clear(&st);
    if (!m)
        return;
    CHECKF(mf_model_tensor_count(m) == json_object_size(want), "%s: %zu tensors, MLX %zu", kase,
           mf_model_tensor_count(m), json_object_size(want));
    for (size_t i = 0; i < mf_model_tensor_count(m); i++) {
        const mf_tensor *t = mf_model_tensor_at(m, i);
        json_t *w = json_object_get(want, mf_tensor_name(t));
        char hex[129] = "";
        mf_hash_tensor(m, t, MF_SHA256, hex, NULL);
        const char *wh = json_string_value(json_object_get(w, "sha256"));
        CHECKF(w && wh && !strcmp(hex, wh), "%s: tensor %s differs from MLX's", kase,
               mf_tensor_name(t));
    }
    mf_close(m);
}

static void compare_files(const char *kase, const char *ours, json_t *files)
{
    const char *file;
    json_t *f;
    json_object_foreach(files, file, f) {
        char path[1024];
        snprintf(path, sizeof(path), "%s/%s", ours, file);
        char *h = header_text(path);
        const char *theirs = json_string_value(json_object_get(f, "header"));
        char *a = h ? stripped(h) : NULL, *b = theirs ? stripped(theirs) : NULL;
        CHECKF(a && b && !strcmp(a, b), "%s/%s: header (without offsets) differs from MLX's", kase,
               file);
        CHECKF(h && mlx_form(h) && theirs && mlx_form(theirs), "%s/%s: not MLX's header form",
               kase, file);
        compare_tensors(kase, path, json_object_get(f, "tensors"));
        free(h);
        free(a);
        free(b);
    }
}

/* convert() arguments of the case as options. */
static void opts_of(json_t *args, mf_convert_mlx_opts *o)
{
    mf_convert_mlx_opts_init(o);
    size_t i;
    json_t *a;
    json_array_foreach(args, i, a) {
        const char *s = json_string_value(a), *v = strchr(s, '=') + 1;
        if (!strncmp(s, "quantize=", 9))
            o->quantize = true;
        else if (!strncmp(s, "dequantize=", 11))
            o->dequantize = true;
        else if (!strncmp(s, "q_bits=", 7))
            o->bits = atoi(v);
        else if (!strncmp(s, "q_group_size=", 13))
            o->group_size = atoi(v);
        else if (!strncmp(s, "quant_predicate=", 16))
            o->quant_predicate = v;
        else if (!strncmp(s, "max_shard_bytes=", 16))
            o->max_shard_size = (uint64_t)atoll(v);
        else if (!strncmp(s, "dtype=", 6))
            o->dtype = !strcmp(v, "float16") ? MF_F16 : !strcmp(v, "bfloat16") ? MF_BF16 : MF_F32;
    }
}

static void run_case(const char *kase)
{
    char path[512], in[700], out[700];
    snprintf(path, sizeof(path), "tests/data/mlx/ref/%s/tensors.json", kase);
    json_t *ref = json_load_file(path, 0, NULL);
    CHECKF(ref, "%s unreadable", path);
    if (!ref)
        return;
    const char *src = json_string_value(json_object_get(ref, "input"));
    const char *shared = tl_shared_dir();
    bool in_shared = !strncmp(src, "hf:", 3) || !strncmp(src, "arch:", 5) ||
                     !strncmp(src, "new:", 4);
    if (in_shared && !shared) {
        printf("SKIP %s: ../shared is not here\n", kase);
        skipped++;
        json_decref(ref);
        return;
    }
    if (!strncmp(src, "hf:", 3))
        snprintf(in, sizeof(in), "%s/corpus/hf-dir/%s", shared, src + 3);
    else if (!strncmp(src, "arch:", 5))
        snprintf(in, sizeof(in), "%s/convert-ref-arch/dirs/%s", shared, src + 5);
    else if (!strncmp(src, "new:", 4))
        snprintf(in, sizeof(in), "%s/convert-ref-new/dirs/%s", shared, src + 4);
    else if (!strncmp(src, "models:", 7))
        snprintf(in, sizeof(in), "tests/data/mlx/models/%s", src + 7);
    else /* ref:CASE: our MLX directory of that case (checked against MLX's) */
        snprintf(in, sizeof(in), "%s/%s", tmp, src + 4);
    snprintf(out, sizeof(out), "%s/%s", tmp, kase);
    mf_convert_mlx_opts o;
    opts_of(json_object_get(ref, "convert"), &o);
    mf_status st;
    mf_status_init(&st);
    int rc = mf_convert_to_mlx(in, out, &o, &st);
    CHECKF(rc == 0, "%s: %s", kase, st.msg);
    mf_status_clear(&st);
    if (rc == 0) {
        char a[900], b[900];
        static const char *const texts[] = {"config.json", "model.safetensors.index.json"};
        for (int i = 0; i < 2; i++) {
            snprintf(a, sizeof(a), "%s/%s", out, texts[i]);
            snprintf(b, sizeof(b), "tests/data/mlx/ref/%s/%s", kase, texts[i]);
            CHECKF(same_file(a, b), "%s: %s differs from mlx_lm's", kase, texts[i]);
        }
        compare_files(kase, out, json_object_get(ref, "files"));
    }
    json_decref(ref);
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every case in tests/data/mlx/ref, those made from MLX directories
 * ("ref:") after the ones they start from. */
static void test_references(void)
{
    DIR *d = opendir("tests/data/mlx/ref");
    CHECK(d != NULL);
    char *names[128];
    size_t n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        if (e->d_name[0] != '.' && n < 128)
            names[n++] = strdup(e->d_name);
    if (d)
        closedir(d);
    qsort(names, n, sizeof(char *), cmp_names);
    CHECKF(n >= 34, "%zu reference cases", n);
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < n; i++)
            if ((strstr(names[i], "dequant") != NULL) == (pass == 1))
                run_case(names[i]);
    for (size_t i = 0; i < n; i++)
        free(names[i]);
}

/* ------------------------------------------------ errors, round trips */

static int convert_expect(const char *in, const char *out, const mf_convert_mlx_opts *o,
                          mf_code code, const char *needle)
{
    mf_status st;
    mf_status_init(&st);
    int rc = mf_convert_to_mlx(in, out, o, &st);
    if (code == MF_OK)
        CHECKF(rc == 0, "%s -> %s: %s", in, out, st.msg);
    else
        CHECKF(rc != 0 && st.code == code && strstr(st.msg, needle),
               "%s -> %s: want code %d with \"%s\", got rc %d code %d: %s", in, out, code, needle,
               rc, st.code, st.msg);
    mf_status_clear(&st);
    return rc;
}

static bool exists(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void test_errors(void)
{
    const char *model = "tests/data/mlx/models/llama8-f32";
    char out[512], bad[512], p[2400];
    mf_convert_mlx_opts o;
    mf_convert_mlx_opts_init(&o);
    o.quantize = true;
    o.bits = 7;
    snprintf(out, sizeof(out), "%s/err-out", tmp);
    convert_expect(model, out, &o, MF_ERR_USAGE, "2, 3, 4, 5, 6 or 8 bits");
    CHECK(!exists(out));
    o.bits = 4;
    o.group_size = 16;
    convert_expect(model, out, &o, MF_ERR_USAGE, "groups of 32, 64 or 128");
    o.group_size = 0;
    o.quant_predicate = "mixed_9_9";
    convert_expect(model, out, &o, MF_ERR_USAGE, "mixed_2_6");
    o.quant_predicate = NULL;
    o.dequantize = true;
    convert_expect(model, out, &o, MF_ERR_USAGE, "not both");
    o.dequantize = false;
    /* an existing non-empty output is refused and left alone */
    mkdir(out, 0755);
    snprintf(p, sizeof(p), "%s/keep.txt", out);
    write_file(p, "mine");
    convert_expect(model, out, &o, MF_ERR_USAGE, "not an empty directory");
    CHECK(exists(p));
    /* a model type whose mlx_lm class is not modelled */
    snprintf(bad, sizeof(bad), "%s/gpt2", tmp);
    mkdir(bad, 0755);
    snprintf(p, sizeof(p), "cp %s/model.safetensors %s/ && sed 's/\"llama\"/\"gpt2\"/' "
             "%s/config.json > %s/config.json", model, bad, model, bad);
    CHECK(system(p) == 0);
    snprintf(out, sizeof(out), "%s/err-out2", tmp);
    convert_expect(bad, out, &o, MF_ERR_UNSUPPORTED, "model_type \"gpt2\"");
    CHECK(!exists(out));
    /* a tensor that is no parameter of the model */
    snprintf(bad, sizeof(bad), "%s/extra", tmp);
    snprintf(p, sizeof(p), "cp -r %s %s", model, bad);
    CHECK(system(p) == 0);
    snprintf(p, sizeof(p), "%s/model.safetensors", bad);
    /* rename one tensor in place: same length, so offsets stay valid */
    size_t n;
    uint8_t *b = tl_read_file(p, &n);
    char *hit = b ? memmem(b, n, "model.norm.weight", 17) : NULL;
    if (hit)
        memcpy(hit, "model.nrm0.weight", 17);
    FILE *f = fopen(p, "wb");
    if (f && b) {
        fwrite(b, 1, n, f);
        fclose(f);
    }
    free(b);
    convert_expect(bad, out, &o, MF_ERR_UNSUPPORTED, "\"model.nrm0.weight\" is not a parameter");
    /* an MLX model is not quantized again */
    snprintf(out, sizeof(out), "%s/q-once", tmp);
    if (convert_expect(model, out, &o, MF_OK, "") == 0) {
        char out2[600];
        snprintf(out2, sizeof(out2), "%s/q-twice", tmp);
        convert_expect(out, out2, &o, MF_ERR_USAGE, "--dequantize first");
    }
}

/* A copy of a ../shared directory with config.json edited by `sed`. */
static bool edited_copy(const char *from, const char *to, const char *sed)
{
    char p[2400];
    snprintf(p, sizeof(p), "mkdir -p %s && cp %s/model.safetensors %s/ && sed '%s' "
             "%s/config.json > %s/config.json", to, from, to, sed, from, to);
    return system(p) == 0;
}

/* The model classes' strict loading: phi3 has no sanitize, so a tied
 * model's lm_head.weight is no parameter; the experts sanitize stacks are
 * exactly config's count (a missing one is KeyError, one more is left
 * over and refused by load_weights). */
static void test_class_errors(void)
{
    const char *shared = shared_or_skip("class errors");
    if (!shared)
        return;
    char in[700], bad[700], out[700];
    mf_convert_mlx_opts o;
    mf_convert_mlx_opts_init(&o);
    o.quantize = true;
    snprintf(in, sizeof(in), "%s/convert-ref-arch/dirs/phi3-tiny", shared);
    snprintf(bad, sizeof(bad), "%s/phi3-tied", tmp);
    snprintf(out, sizeof(out), "%s/err-phi3", tmp);
    CHECK(edited_copy(in, bad, "s/\"tie_word_embeddings\": false/\"tie_word_embeddings\": true/"));
    convert_expect(bad, out, &o, MF_ERR_UNSUPPORTED, "\"lm_head.weight\" is not a parameter");
    CHECK(!exists(out));
    snprintf(in, sizeof(in), "%s/convert-ref-new/dirs/qwen3moe-tiny", shared);
    snprintf(bad, sizeof(bad), "%s/moe9", tmp);
    CHECK(edited_copy(in, bad, "s/\"num_experts\": 8/\"num_experts\": 9/"));
    convert_expect(bad, out, &o, MF_ERR_FORMAT, "experts.8.up_proj.weight");
    snprintf(bad, sizeof(bad), "%s/moe7", tmp);
    CHECK(edited_copy(in, bad, "s/\"num_experts\": 8/\"num_experts\": 7/"));
    convert_expect(bad, out, &o, MF_ERR_UNSUPPORTED, "experts.7.");
    CHECK(!exists(out));
}

/* Whether the files `names` of directories a and b are byte for byte the
 * same. */
static bool same_files(const char *a, const char *b, const char *const *names, size_t n)
{
    bool same = true;
    for (size_t i = 0; i < n; i++) {
        char x[900], y[900];
        snprintf(x, sizeof(x), "%s/%s", a, names[i]);
        snprintf(y, sizeof(y), "%s/%s", b, names[i]);
        same &= same_file(x, y);
    }
    return same;
}

/* A pre-quantized checkpoint (tests/data/prequant, each checked bit for
 * bit against its producer in test_prequant) converts to the same MLX
 * files as its float twin, the directory mf_convert_to_hf writes from it
 * (dequantized first, then quantized: the rule). */
static void test_prequant_inputs(void)
{
    static const char *const cases[] = {
        "gptq-llama-tiny", "gptq-2bit-g32",  "gptq-3bit-g64-actorder", "gptq-4bit-g32-sym",
        "gptq-8bit-gall-v2", "awq-gemm-g32", "awq-gemv-g64", "bnb-nf4", "bnb-nf4-nested",
        "bnb-fp4", "bnb-int8", "ct-int8-channel-asym", "ct-pack-w4-g32", "fp8-block",
        "fbgemm-fp8-channel", "nvfp4-modelopt",
    };
    static const char *const files[] = {"config.json", "model.safetensors.index.json",
                                        "model.safetensors"};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char in[512], twin[700], a[700], b[700];
        snprintf(in, sizeof(in), "tests/data/prequant/%s", cases[i]);
        snprintf(twin, sizeof(twin), "%s/pq-%s-hf", tmp, cases[i]);
        snprintf(a, sizeof(a), "%s/pq-%s-mlx", tmp, cases[i]);
        snprintf(b, sizeof(b), "%s/pq-%s-hf-mlx", tmp, cases[i]);
        mf_status st;
        mf_status_init(&st);
        int rc = mf_convert_to_hf(in, twin, NULL, &st);
        CHECKF(rc == 0, "%s: float twin: %s", cases[i], st.msg);
        mf_status_clear(&st);
        mf_convert_mlx_opts o;
        mf_convert_mlx_opts_init(&o);
        o.quantize = true;
        o.group_size = 32;
        o.bits = i % 2 ? 4 : 3;
        if (rc || convert_expect(in, a, &o, MF_OK, "") || convert_expect(twin, b, &o, MF_OK, ""))
            continue;
        CHECKF(same_files(a, b, files, 3), "%s: MLX of the checkpoint differs from MLX of its "
               "float twin", cases[i]);
    }
}

static const mf_tensor *tensor_named(const mf_model *m, const char *name)
{
    for (size_t i = 0; i < mf_model_tensor_count(m); i++)
        if (!strcmp(mf_tensor_name(mf_model_tensor_at(m, i)), name))
            return mf_model_tensor_at(m, i);
    return NULL;
}

/* --lossless: a GGUF's Q4_0/Q4_1/Q8_0 weights as MLX's own GGUF loader
 * makes them (tests/data/mlx/gguf/CASE.json, from MLX's extract functions cut out
 * of mlx/io/gguf_quants.cpp), under mlx_lm's names, attn_q/attn_k rows in
 * Hugging Face order; every other tensor as the dequantized route gives. */
static void test_lossless(void)
{
    const char *shared = tl_shared_dir();
    static const char *const cases[] = {"q4_0", "q4_1", "q8_0"};
    for (size_t i = 0; i < 3; i++) {
        char path[512], in[700], out[700], st_path[800];
        snprintf(path, sizeof(path), "tests/data/mlx/gguf/%s.json", cases[i]);
        json_t *ref = json_load_file(path, 0, NULL);
        CHECKF(ref, "%s unreadable", path);
        if (!ref)
            continue;
        const char *input = json_string_value(json_object_get(ref, "input"));
        bool in_shared = !strncmp(input, "convert-ref/", 12);
        if (in_shared && !shared) {
            printf("SKIP lossless %s: ../shared is not here\n", cases[i]);
            skipped++;
            json_decref(ref);
            continue;
        }
        if (in_shared)
            snprintf(in, sizeof(in), "%s/%s", shared, input);
        else
            snprintf(in, sizeof(in), "tests/data/mlx/%s", input);
        snprintf(out, sizeof(out), "%s/lossless-%s", tmp, cases[i]);
        mf_convert_mlx_opts o;
        mf_convert_mlx_opts_init(&o);
        o.lossless = true;
        mf_model *m = NULL;
        snprintf(st_path, sizeof(st_path), "%s/model.safetensors", out);
        if (convert_expect(in, out, &o, MF_OK, "") || mf_open(st_path, NULL, &m, NULL)) {
            CHECKF(0, "%s: no output to compare", cases[i]);
            json_decref(ref);
            continue;
        }
        json_t *want = json_object_get(ref, "tensors");
        const char *name;
        json_t *w;
        size_t seen = 0, u32 = 0;
        json_object_foreach(want, name, w) {
            const mf_tensor *t = tensor_named(m, name);
            char hex[129] = "";
            if (t)
                mf_hash_tensor(m, t, MF_SHA256, hex, NULL);
            const char *wh = json_string_value(json_object_get(w, "sha256"));
            CHECKF(t && wh && !strcmp(hex, wh), "%s: %s is not what MLX's GGUF loader makes",
                   cases[i], name);
            seen += t != NULL;
        }
        for (size_t k = 0; k < mf_model_tensor_count(m); k++)
            u32 += mf_tensor_dtype(mf_model_tensor_at(m, k)) == MF_U32;
        CHECKF(seen == json_object_size(want) && u32 * 3 == seen,
               "%s: %zu of %zu triples, %zu packed weights", cases[i], seen,
               json_object_size(want), u32);
        mf_close(m);
        json_decref(ref);
    }
    /* --lossless takes a GGUF and no requantization */
    char out[700];
    snprintf(out, sizeof(out), "%s/lossless-err", tmp);
    mf_convert_mlx_opts o;
    mf_convert_mlx_opts_init(&o);
    o.lossless = true;
    convert_expect("tests/data/mlx/models/llama8-f32", out, &o, MF_ERR_USAGE, "must be a GGUF");
    o.quantize = true;
    convert_expect("tests/data/mlx/gguf/q4_0.gguf", out, &o, MF_ERR_USAGE, "not with --quantize");
    CHECK(!exists(out));
}

/* The Metal kernel's bytes differ from the CPU kernel's on F16 weights
 * (halfway quotients are common there), with the same config, and read
 * back through the MLX reader. */
static void test_metal_conversion(void)
{
    const char *shared = shared_or_skip("metal conversion");
    if (!shared)
        return;
    char in[512], cpu[512], metal[512];
    snprintf(in, sizeof(in), "%s/corpus/hf-dir/llama-tiny", shared);
    snprintf(cpu, sizeof(cpu), "%s/llama-cpu", tmp);
    snprintf(metal, sizeof(metal), "%s/llama-metal", tmp);
    mf_convert_mlx_opts o;
    mf_convert_mlx_opts_init(&o);
    o.quantize = true;
    if (convert_expect(in, cpu, &o, MF_OK, ""))
        return;
    o.kernel = MF_MLX_KERNEL_METAL;
    if (convert_expect(in, metal, &o, MF_OK, ""))
        return;
    char a[700], b[700];
    snprintf(a, sizeof(a), "%s/model.safetensors", cpu);
    snprintf(b, sizeof(b), "%s/model.safetensors", metal);
    CHECK(!same_file(a, b));
    snprintf(a, sizeof(a), "%s/config.json", cpu);
    snprintf(b, sizeof(b), "%s/config.json", metal);
    CHECK(same_file(a, b));
    mf_model *m = NULL;
    CHECK(mf_open(metal, NULL, &m, NULL) == 0 && mf_model_format(m) == MF_FMT_MLX);
    mf_close(m);
}

/* MLX (quantized) -> dequantized directory -> GGUF -> Hugging Face
 * directory -> MLX (unquantized): the tensors of the dequantized directory
 * come back byte for byte (the GGUF leg stores them as they are, F16). */
/* Code k of a little-endian bit stream of `bits`-bit codes. */
static unsigned code_at(const uint8_t *p, uint64_t k, int bits)
{
    unsigned v = 0;
    for (int b = 0; b < bits; b++) {
        uint64_t bit = k * (uint64_t)bits + (uint64_t)b;
        v |= (unsigned)((p[bit / 8] >> (bit % 8)) & 1) << b;
    }
    return v;
}

typedef struct trip_count {
    size_t span, span_same, narrow, narrow_same;
} trip_count;

/* Group by group, MLX model a (quantized) against c (a, dequantized and
 * quantized again with the same bits, group size and dtype): a group is
 * "span" when its codes reach both 0 and 2^bits - 1. */
static void count_groups(const char *a, const char *c, int bits, int gs, trip_count *n)
{
    char pa[800], pc[800];
    snprintf(pa, sizeof(pa), "%s/model.safetensors", a);
    snprintf(pc, sizeof(pc), "%s/model.safetensors", c);
    mf_model *x = NULL, *y = NULL;
    CHECK(mf_open(pa, NULL, &x, NULL) == 0 && mf_open(pc, NULL, &y, NULL) == 0);
    for (size_t i = 0; x && y && i < mf_model_tensor_count(x); i++) {
        const char *name = mf_tensor_name(mf_model_tensor_at(x, i));
        size_t l = strlen(name);
        if (l < 7 || strcmp(name + l - 7, ".scales"))
            continue;
        char mod[256], wn[300], bn[300];
        snprintf(mod, sizeof(mod), "%.*s", (int)(l - 7), name);
        snprintf(wn, sizeof(wn), "%s.weight", mod);
        snprintf(bn, sizeof(bn), "%s.biases", mod);
        const mf_tensor *t[3][2] = {{tensor_named(x, wn), tensor_named(y, wn)},
                                    {tensor_named(x, name), tensor_named(y, name)},
                                    {tensor_named(x, bn), tensor_named(y, bn)}};
        bool ok = true;
        for (int k = 0; k < 3; k++)
            ok &= t[k][0] && t[k][1] && mf_tensor_nbytes(t[k][0]) == mf_tensor_nbytes(t[k][1]);
        CHECKF(ok, "%s: the triples differ in shape", mod);
        if (!ok)
            continue;
        uint64_t es = mf_tensor_dtype(t[1][0]) == MF_F32 ? 4 : 2;
        uint64_t groups = mf_tensor_nbytes(t[1][0]) / es, wb = (uint64_t)gs * (uint64_t)bits / 8;
        const uint8_t *w = mf_tensor_data(x, t[0][0]);
        for (uint64_t g = 0; g < groups; g++) {
            unsigned lo = ~0u, hi = 0;
            for (int k = 0; k < gs; k++) {
                unsigned v = code_at(w + g * wb, (uint64_t)k, bits);
                lo = v < lo ? v : lo;
                hi = v > hi ? v : hi;
            }
            bool same = !memcmp(w + g * wb, (const uint8_t *)mf_tensor_data(y, t[0][1]) + g * wb, wb);
            for (int k = 1; k < 3; k++)
                same &= !memcmp((const uint8_t *)mf_tensor_data(x, t[k][0]) + g * es,
                                (const uint8_t *)mf_tensor_data(y, t[k][1]) + g * es, es);
            bool span = lo == 0 && hi == (1u << bits) - 1;
            n->span += span;
            n->span_same += span && same;
            n->narrow += !span;
            n->narrow_same += !span && same;
        }
    }
    mf_close(x);
    mf_close(y);
}

static bool same_model_file(const char *a, const char *b)
{
    static const char *const f[] = {"model.safetensors"};
    return same_files(a, b, f, 1);
}

/* MLX -> HF -> MLX (doc/mlx.md "Round trips"): with the same bits, group
 * size and dtype, every group whose codes span 0..2^bits-1 comes back
 * bit for bit (scale = bias / q0 depends only on the bias, a weight value
 * kept exactly, and the integer q0); a narrower group is re-fitted to its
 * dequantized range and changes. One more trip is then a fixed point. */
static void test_group_round_trip(void)
{
    static const struct { mf_dtype dt; int bits, gs; } cases[] = {
        {MF_F32, 4, 64}, {MF_BF16, 3, 32}, {MF_F16, 8, 32}, {MF_F32, 2, 32}, {MF_BF16, 5, 64},
        {MF_F16, 6, 32},
    };
    trip_count all = {0};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char d[5][700];
        for (int k = 0; k < 5; k++)
            snprintf(d[k], sizeof(d[k]), "%s/trip%zu-%c", tmp, i, 'A' + k);
        mf_convert_mlx_opts q, dq;
        mf_convert_mlx_opts_init(&q);
        q.quantize = true;
        q.dtype = cases[i].dt; /* given each time: config's torch_dtype is not changed */
        q.bits = cases[i].bits;
        q.group_size = cases[i].gs;
        mf_convert_mlx_opts_init(&dq);
        dq.dequantize = true;
        if (convert_expect("tests/data/mlx/models/llama8-f32", d[0], &q, MF_OK, "") ||
            convert_expect(d[0], d[1], &dq, MF_OK, "") || convert_expect(d[1], d[2], &q, MF_OK, "") ||
            convert_expect(d[2], d[3], &dq, MF_OK, "") || convert_expect(d[3], d[4], &q, MF_OK, ""))
            continue;
        trip_count n = {0};
        count_groups(d[0], d[2], cases[i].bits, cases[i].gs, &n);
        printf("  round trip %s %d-bit g%d: %zu of %zu spanning groups same, %zu of %zu "
               "narrower\n", mf_dtype_name(cases[i].dt), cases[i].bits, cases[i].gs, n.span_same,
               n.span, n.narrow_same, n.narrow);
        CHECKF(n.span && n.span_same == n.span, "case %zu: a spanning group changed", i);
        CHECKF(same_model_file(d[2], d[4]), "case %zu: the second round trip is no fixed point", i);
        all.narrow += n.narrow;
        all.narrow_same += n.narrow_same;
    }
    CHECKF(all.narrow > all.narrow_same, "no narrower group changed (%zu of %zu)",
           all.narrow_same, all.narrow);
}

static void test_round_trip(void)
{
    char q[512], d[512], g[512], h[512], back[512];
    snprintf(q, sizeof(q), "%s/llama-f16-q4g64", tmp); /* test_references made it */
    snprintf(d, sizeof(d), "%s/rt-deq", tmp);
    snprintf(g, sizeof(g), "%s/rt.gguf", tmp);
    snprintf(h, sizeof(h), "%s/rt-hf", tmp);
    snprintf(back, sizeof(back), "%s/rt-back", tmp);
    if (!exists(q)) {
        printf("SKIP round trip: %s was not made\n", q);
        skipped++;
        return;
    }
    mf_convert_mlx_opts o;
    mf_convert_mlx_opts_init(&o);
    o.dequantize = true;
    if (convert_expect(q, d, &o, MF_OK, ""))
        return;
    mf_status st;
    mf_status_init(&st);
    int rc = mf_convert_to_gguf(d, g, NULL, &st);
    CHECKF(rc == 0, "%s: %s", g, st.msg);
    if (rc == 0) {
        rc = mf_convert_to_hf(g, h, NULL, &st);
        CHECKF(rc == 0, "%s: %s", h, st.msg);
    }
    mf_status_clear(&st);
    mf_convert_mlx_opts_init(&o);
    if (rc || convert_expect(h, back, &o, MF_OK, ""))
        return;
    char a[700], b[700];
    snprintf(a, sizeof(a), "%s/model.safetensors", d);
    snprintf(b, sizeof(b), "%s/model.safetensors", back);
    mf_model *x = NULL, *y = NULL;
    CHECK(mf_open(a, NULL, &x, NULL) == 0 && mf_open(b, NULL, &y, NULL) == 0);
    if (x && y) {
        CHECK(mf_model_tensor_count(x) == mf_model_tensor_count(y));
        size_t same = 0;
        for (size_t i = 0; i < mf_model_tensor_count(x); i++) {
            const mf_tensor *t = mf_model_tensor_at(x, i);
            for (size_t j = 0; j < mf_model_tensor_count(y); j++) {
                const mf_tensor *u = mf_model_tensor_at(y, j);
                if (strcmp(mf_tensor_name(t), mf_tensor_name(u)))
                    continue;
                char hx[129], hy[129];
                mf_hash_tensor(x, t, MF_SHA256, hx, NULL);
                mf_hash_tensor(y, u, MF_SHA256, hy, NULL);
                same += !strcmp(hx, hy);
            }
        }
        CHECKF(same == mf_model_tensor_count(x), "%zu of %zu tensors came back", same,
               mf_model_tensor_count(x));
    }
    mf_close(x);
    mf_close(y);
}

/* ------------------------------------------------------- MLX -> GGUF */

static bool file_sha256(const char *path, char hex[129], size_t *size)
{
    size_t n;
    uint8_t *b = tl_read_file(path, &n);
    if (!b)
        return false;
    tl_sha256_hex(b, n, hex);
    *size = n;
    free(b);
    return true;
}

/* One line of gguf_e2e/ref.tsv: the GGUF llama.cpp's converter wrote from
 * the MLX directory KIND/SRC, and ours from the MLX directory the test made
 * the same way (plain: unquantized; deq: the 4-bit g32 one, which mfmt
 * dequantizes in a directory named like it, as the CLI's MLX -> GGUF does). */
static void gguf_e2e_line(const char *kind, const char *src, const char *type, const char *sha,
                          size_t size)
{
    char in[600], out[600];
    snprintf(in, sizeof(in), "%s/e2e-%s/%s", tmp, kind, src);
    snprintf(out, sizeof(out), "%s/e2e-%s-%s-%s.gguf", tmp, kind, src, type);
    mf_convert_gguf_opts g;
    mf_convert_gguf_opts_init(&g);
    g.type = type;
    mf_status st;
    mf_status_init(&st);
    int rc = mf_convert_to_gguf(in, out, &g, &st);
    CHECKF(rc == 0, "%s: %s", out, st.msg);
    mf_status_clear(&st);
    char hex[129];
    size_t n = 0;
    CHECKF(rc == 0 && file_sha256(out, hex, &n) && n == size && !strcmp(hex, sha),
           "MLX -> GGUF %s %s %s: %zu bytes, not llama.cpp's %zu", kind, src, type, n, size);
}

/* The MLX directories of one source, named like it: e2e-plain/SRC
 * (unquantized), e2e-q/SRC (4 bits, groups of 32) and e2e-deq/SRC, that
 * one dequantized (what the CLI's MLX -> GGUF converts). */
static bool gguf_e2e_dirs(const char *shared, const char *src)
{
    static const char *const kinds[] = {"plain", "q", "deq"};
    char in[512], dir[600];
    snprintf(in, sizeof(in), "%s/corpus/hf-dir/%s", shared, src);
    for (size_t k = 0; k < 3; k++) {
        snprintf(dir, sizeof(dir), "%s/e2e-%s", tmp, kinds[k]);
        mkdir(dir, 0755);
        snprintf(dir, sizeof(dir), "%s/e2e-%s/%s", tmp, kinds[k], src);
        mf_convert_mlx_opts o;
        mf_convert_mlx_opts_init(&o);
        o.quantize = k == 1;
        o.bits = k == 1 ? 4 : 0;
        o.group_size = k == 1 ? 32 : 0;
        o.dequantize = k == 2;
        char from[600];
        snprintf(from, sizeof(from), "%s/e2e-q/%s", tmp, src);
        if (convert_expect(k == 2 ? from : in, dir, &o, MF_OK, ""))
            return false;
    }
    return true;
}

/* MLX -> GGUF against llama.cpp's own converter run on the MLX directories
 * (tests/data/mlx/gguf_e2e/make_ref.sh): 3 sources x f16/bf16/f32/q8_0,
 * unquantized and quantized MLX, byte for byte. */
static void test_gguf_end_to_end(void)
{
    const char *shared = shared_or_skip("MLX -> GGUF end to end");
    if (!shared)
        return;
    FILE *f = fopen("tests/data/mlx/gguf_e2e/ref.tsv", "r");
    CHECK(f != NULL);
    if (!f)
        return;
    char kind[16], src[64], type[16], sha[80], prev[64] = "";
    size_t size, lines = 0;
    while (fscanf(f, "%15s %63s %15s %79s %zu", kind, src, type, sha, &size) == 5) {
        if (strcmp(src, prev)) {
            if (!gguf_e2e_dirs(shared, src))
                break;
            snprintf(prev, sizeof(prev), "%s", src);
        }
        gguf_e2e_line(kind, src, type, sha, size);
        lines++;
    }
    fclose(f);
    CHECKF(lines == 24, "%zu lines in gguf_e2e/ref.tsv", lines);
}

/* README.md is the model card mlx_lm's create_model_card writes for a local
 * source (tests/data/mlx/card/README.md, made by oracle/run_model_card.py). */
static void test_model_card(void)
{
    char path[600];
    snprintf(path, sizeof(path), "%s/llama-f16-q4g64/README.md", tmp);
    if (!exists(path)) {
        printf("SKIP model card: %s was not made\n", path);
        skipped++;
        return;
    }
    CHECK(same_file(path, "tests/data/mlx/card/README.md"));
}

int main(void)
{
    test_quantizer();
    test_kernel_rules();
    test_pyjson();
    if (!tl_make_tmpdir(tmp, sizeof(tmp), "mlxconv"))
        return 1;
    test_references();
    test_errors();
    test_class_errors();
    test_prequant_inputs();
    test_metal_conversion();
    test_round_trip();
    test_group_round_trip();
    test_lossless();
    test_gguf_end_to_end();
    test_model_card();
    tl_remove_tmpdir(tmp);
    if (skipped)
        printf("%d reference cases skipped\n", skipped);
    return tl_report("mlx_convert");
}
