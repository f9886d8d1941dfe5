/* tour.c - libmfmt from the outside: a program built only from the
 * installed headers (pkg-config mfmt; jansson for the manifest).
 *
 *   cc $(pkg-config --cflags mfmt jansson) -o tour tour.c \
 *      $(pkg-config --libs mfmt jansson)
 *   ./tour CORPUS_DIR OUT_DIR
 *
 * CORPUS_DIR is mfmt's conformance corpus (../shared/corpus), whose
 * manifest.json says what each file holds. The tour
 *  1. opens every valid case of every format and lists the tensors of the
 *     first case of each format;
 *  2. reads one tensor of each dtype family as F32 (F32, F16, BF16, F64,
 *     integers, bool, F8, ggml blocks, a strided PyTorch view) and checks
 *     it: the stored bytes against the manifest's canonical SHA-256, and
 *     the F32 values against an independent conversion;
 *  3. reads one tensor by rows and checks the rows against the whole;
 *  4. scans: the verdict on an open handle, a refused open, the findings;
 *  5. converts a PyTorch checkpoint to safetensors (the tensor content is
 *     the same), and shows that a cancelled conversion leaves no file.
 * Exit status 0 when every check holds; it prints what it checked. */
#include <mfmt.h>

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int failures;

#define CHECK(cond, ...)                                                    \
    do {                                                                    \
        if (!(cond)) {                                                      \
            failures++;                                                     \
            fprintf(stderr, "tour: FAILED %s: ", #cond);                    \
            fprintf(stderr, __VA_ARGS__);                                   \
            fputc('\n', stderr);                                            \
        }                                                                   \
    } while (0)

static const char *corpus_dir, *out_dir;

static const char *in_corpus(const char *rel)
{
    static char buf[4][2048];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof(buf[k]), "%s/%s", corpus_dir, rel);
    return buf[k];
}

static void sha256_hex(const void *p, size_t n, char hex[129])
{
    mf_hasher *h = mf_hasher_new(MF_SHA256);
    mf_hasher_update(h, p, n);
    mf_hasher_final_hex(h, hex);
    mf_hasher_free(h);
}

/* ------------------------------------------------- 1. every format, listed */

static void list_tensors(const mf_model *m)
{
    printf("  %s (%s%s%s): %zu tensors\n", mf_model_path(m), mf_format_name(mf_model_format(m)),
           mf_model_version(m)[0] ? " " : "", mf_model_version(m), mf_model_tensor_count(m));
    for (size_t i = 0; i < mf_model_tensor_count(m) && i < 4; i++) {
        const mf_tensor *t = mf_model_tensor_at(m, i);
        printf("    %-40s %-6s [", mf_tensor_name(t), mf_dtype_name(mf_tensor_dtype(t)));
        for (int d = 0; d < mf_tensor_ndim(t); d++)
            printf("%s%lld", d ? ", " : "", (long long)mf_tensor_shape(t)[d]);
        printf("]%s\n", mf_tensor_strides(t) ? " (strided view)" : "");
    }
    if (mf_model_tensor_count(m) > 4)
        printf("    ... %zu more\n", mf_model_tensor_count(m) - 4);
}

static void open_every_format(const json_t *manifest)
{
    char seen[MF_FMT_COUNT] = {0}, listed[MF_FMT_COUNT] = {0};
    size_t opened = 0, i;
    json_t *c;
    printf("1. every valid case, opened; the first of each format with tensors listed\n");
    json_array_foreach(manifest, i, c) {
        if (strcmp(json_string_value(json_object_get(c, "expect")), "ok") != 0)
            continue;
        const char *path = in_corpus(json_string_value(json_object_get(c, "path")));
        mf_status st;
        mf_status_init(&st);
        mf_model *m;
        int rc = mf_open(path, NULL, &m, &st);
        CHECK(rc == 0, "%s: %s", path, st.msg);
        mf_status_clear(&st);
        if (rc != 0)
            continue;
        opened++;
        CHECK(mf_model_tensor_count(m) == json_array_size(json_object_get(c, "tensors")),
              "%s: %zu tensors, the manifest lists %zu", path, mf_model_tensor_count(m),
              json_array_size(json_object_get(c, "tensors")));
        mf_format f = mf_model_format(m);
        seen[f] = 1;
        if (!listed[f] && mf_model_tensor_count(m) > 0) {
            listed[f] = 1;
            list_tensors(m);
        }
        mf_close(m);
    }
    size_t formats = 0;
    for (int f = 0; f < MF_FMT_COUNT; f++)
        formats += seen[f];
    printf("   %zu cases opened, %zu formats\n", opened, formats);
    CHECK(formats >= 10, "only %zu formats", formats);
}

/* ------------------------------------------- 2. one tensor of each family */

/* Independent references for the checks (not what a user needs: the point
 * of mf_tensor_read is that nobody writes these again). */
static float f8_value(uint8_t v, bool e4m3)
{
    int eb = e4m3 ? 4 : 5, mb = e4m3 ? 3 : 2, bias = e4m3 ? 7 : 15;
    int s = v >> 7, e = (v >> mb) & ((1 << eb) - 1), m = v & ((1 << mb) - 1);
    float r;
    if (e4m3 && e == 15 && m == 7)
        r = NAN;
    else if (!e4m3 && e == 31)
        r = m ? NAN : INFINITY;
    else if (e == 0)
        r = ldexpf((float)m, 1 - bias - mb);
    else
        r = ldexpf((float)((1 << mb) + m), e - bias - mb);
    return s ? -r : r;
}

/* The F32 value element i of the stored bytes must have; false when this
 * tour has no reference for the dtype. */
static bool reference(mf_dtype dt, const uint8_t *p, uint64_t i, float *out)
{
    switch (dt) {
    case MF_F32: memcpy(out, p + 4 * i, 4); return true;
    case MF_F64: { double d; memcpy(&d, p + 8 * i, 8); *out = (float)d; return true; }
    case MF_BF16: {
        uint32_t b = (uint32_t)(p[2 * i] | p[2 * i + 1] << 8) << 16;
        memcpy(out, &b, 4);
        return true;
    }
#ifdef __FLT16_MAX__
    case MF_F16: { _Float16 h; memcpy(&h, p + 2 * i, 2); *out = (float)h; return true; }
#endif
    case MF_I8: *out = (int8_t)p[i]; return true;
    case MF_U8: *out = p[i]; return true;
    case MF_BOOL: *out = p[i] != 0; return true;
    case MF_I16: { int16_t v; memcpy(&v, p + 2 * i, 2); *out = v; return true; }
    case MF_U16: { uint16_t v; memcpy(&v, p + 2 * i, 2); *out = v; return true; }
    case MF_I32: { int32_t v; memcpy(&v, p + 4 * i, 4); *out = (float)v; return true; }
    case MF_U32: { uint32_t v; memcpy(&v, p + 4 * i, 4); *out = (float)v; return true; }
    case MF_I64: { int64_t v; memcpy(&v, p + 8 * i, 8); *out = (float)v; return true; }
    case MF_U64: { uint64_t v; memcpy(&v, p + 8 * i, 8); *out = (float)v; return true; }
    case MF_F8_E4M3: *out = f8_value(p[i], true); return true;
    case MF_F8_E5M2: *out = f8_value(p[i], false); return true;
    default: return false;
    }
}

static bool same(float a, float b)
{
    return memcmp(&a, &b, 4) == 0 || (isnan(a) && isnan(b));
}

/* Reads t natively (checked against the manifest's hash) and as F32
 * (checked against the reference); returns the F32 values (mf_free). */
static float *read_checked(const mf_model *m, const mf_tensor *t, const char *want_sha)
{
    mf_status st;
    mf_status_init(&st);
    void *raw = NULL;
    float *f = NULL;
    uint64_t nb = 0, fb = 0, n = mf_tensor_nelems(t);
    const char *name = mf_tensor_name(t);
    char hex[129];
    if (mf_tensor_read_alloc(m, t, MF_DTYPE_INVALID, &raw, &nb, &st) != 0 ||
        mf_tensor_read_alloc(m, t, MF_F32, (void **)&f, &fb, &st) != 0) {
        CHECK(0, "%s: %s", name, st.msg);
        mf_status_clear(&st);
        mf_free(raw);
        return NULL;
    }
    sha256_hex(raw, nb, hex);
    CHECK(strcmp(hex, want_sha) == 0, "%s: stored bytes hash %s, manifest %s", name, hex, want_sha);
    CHECK(fb == 4 * n, "%s: %llu F32 bytes for %llu elements", name, (unsigned long long)fb,
          (unsigned long long)n);
    size_t wrong = 0;
    float r;
    for (uint64_t i = 0; i < n; i++)
        if (reference(mf_tensor_dtype(t), raw, i, &r) && !same(r, f[i]))
            wrong++;
    CHECK(wrong == 0, "%s: %zu F32 values differ from the reference", name, wrong);
    mf_free(raw);
    return f;
}

typedef struct family {
    const char *case_path, *tensor;
} family;

/* One tensor per family, from the corpus; blocks are checked against the
 * F32 tensor holding the same numbers (gguf/dtypes.gguf: f32 is the start
 * of row 0 that q8_0 and q4_0 quantize). */
static const family families[] = {
    {"safetensors/dtype_f32.safetensors", "x"},   {"safetensors/dtype_f16.safetensors", "x"},
    {"safetensors/dtype_bf16.safetensors", "x"},  {"safetensors/dtype_f64.safetensors", "x"},
    {"safetensors/dtype_i8.safetensors", "x"},    {"safetensors/dtype_u16.safetensors", "x"},
    {"safetensors/dtype_i64.safetensors", "x"},   {"safetensors/dtype_bool.safetensors", "x"},
    {"safetensors/dtype_f8_e4m3.safetensors", "x"}, {"safetensors/dtype_f8_e5m2.safetensors", "x"},
    {"pytorch/views.pt", "transposed"},           {"numpy/big_endian_f4.npy", ""},
    {"gguf/dtypes.gguf", "q8_0"},                 {"gguf/dtypes.gguf", "q4_0"},
};

static const char *manifest_sha(const json_t *manifest, const char *path, const char *tensor)
{
    size_t i, k;
    json_t *c, *t;
    json_array_foreach(manifest, i, c) {
        if (strcmp(json_string_value(json_object_get(c, "path")), path) != 0)
            continue;
        json_array_foreach(json_object_get(c, "tensors"), k, t)
            if (strcmp(json_string_value(json_object_get(t, "name")), tensor) == 0)
                return json_string_value(json_object_get(t, "sha256"));
    }
    return NULL;
}

/* Blocks: each value within the block's quantization step of the F32
 * numbers it was made from (Q8_0: amax/127; Q4_0: amax/8 per step). */
static void check_blocks(const mf_model *m, const float *q, mf_dtype dt)
{
    const mf_tensor *ref = mf_tensor_find(m, "f32");
    float *x = NULL;
    uint64_t n = 0;
    if (!ref || mf_tensor_read_alloc(m, ref, MF_F32, (void **)&x, &n, NULL) != 0) {
        CHECK(0, "no f32 tensor to compare %s with", mf_dtype_name(dt));
        return;
    }
    float amax = 0;
    for (int i = 0; i < 32; i++)
        amax = fabsf(q[i]) > amax ? fabsf(q[i]) : amax;
    float step = amax / (dt == MF_Q8_0 ? 127.0f : 8.0f);
    for (uint64_t i = 0; i < n / 4; i++)
        CHECK(fabsf(q[i] - x[i]) <= step, "%s value %llu: %g, the F32 source %g (step %g)",
              mf_dtype_name(dt), (unsigned long long)i, q[i], x[i], step);
    mf_free(x);
}

static void read_each_family(const json_t *manifest)
{
    printf("2. one tensor of each dtype family as F32\n");
    for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++) {
        const family *fa = &families[i];
        const char *want = manifest_sha(manifest, fa->case_path, fa->tensor);
        mf_model *m;
        if (!want || mf_open(in_corpus(fa->case_path), NULL, &m, NULL) != 0) {
            CHECK(0, "%s: %s missing from the corpus", fa->case_path, fa->tensor);
            continue;
        }
        const mf_tensor *t = mf_tensor_find(m, fa->tensor);
        float *f = t ? read_checked(m, t, want) : NULL;
        CHECK(f != NULL, "%s: %s not read", fa->case_path, fa->tensor);
        if (f && mf_dtype_info_of(mf_tensor_dtype(t))->is_quant)
            check_blocks(m, f, mf_tensor_dtype(t));
        if (f)
            printf("   %-7s %-40s %-12s first value %g\n", mf_dtype_name(mf_tensor_dtype(t)),
                   fa->case_path, fa->tensor[0] ? fa->tensor : "(array)", f[0]);
        mf_free(f);
        mf_close(m);
    }
}

/* ------------------------------------------------------------- 3. rows */

static void read_by_rows(void)
{
    printf("3. rows of the outermost dimension\n");
    mf_model *m;
    if (mf_open(in_corpus("gguf/dtypes.gguf"), NULL, &m, NULL) != 0) {
        CHECK(0, "gguf/dtypes.gguf does not open");
        return;
    }
    const mf_tensor *t = mf_tensor_find(m, "q4_0"); /* 2 rows of 2 blocks */
    float whole[128], row1[64];
    mf_status st;
    mf_status_init(&st);
    CHECK(t && mf_tensor_rows(t) == 2, "q4_0: rows");
    CHECK(t && mf_tensor_read(m, t, MF_F32, 0, UINT64_MAX, whole, sizeof(whole), &st) == 0 &&
              mf_tensor_read(m, t, MF_F32, 1, 1, row1, sizeof(row1), &st) == 0 &&
              memcmp(row1, whole + 64, sizeof(row1)) == 0,
          "row 1 of q4_0 is not the second half of the whole: %s", st.msg);
    /* a row past the end is the caller's error, reported, not a crash */
    CHECK(t && mf_tensor_read(m, t, MF_F32, 2, 1, row1, sizeof(row1), &st) != 0 &&
              st.code == MF_ERR_USAGE,
          "reading row 2 of 2 was not refused");
    printf("   q4_0 row 1 == second half of the whole read; row 2: \"%s\"\n", st.msg);
    mf_status_clear(&st);
    mf_close(m);
}

/* ------------------------------------------------------------- 4. scan */

static void scan(const json_t *manifest)
{
    printf("4. scan\n");
    const char *evil = in_corpus("pickle/malicious/os_system.pkl");
    mf_model *m;
    mf_status st;
    mf_status_init(&st);
    if (mf_open(evil, NULL, &m, &st) == 0) { /* opening runs nothing */
        CHECK(mf_model_verdict(m) == MF_VERDICT_DANGEROUS, "%s: verdict %s", evil,
              mf_verdict_name(mf_model_verdict(m)));
        printf("   %s opens; its verdict on the handle: %s\n", evil,
               mf_verdict_name(mf_model_verdict(m)));
        mf_close(m);
    }
    mf_status_clear(&st);
    mf_open_opts o;
    mf_open_opts_init(&o);
    o.flags = MF_OPEN_REFUSE_UNSAFE;
    CHECK(mf_open(evil, &o, &m, &st) != 0 && st.code == MF_ERR_UNSAFE, "%s: not refused", evil);
    printf("   with MF_OPEN_REFUSE_UNSAFE: %s\n", st.msg);
    mf_status_clear(&st);
    mf_scan_report *r;
    CHECK(mf_scan_file(evil, &r, &st) == 0, "%s: %s", evil, st.msg);
    if (r) {
        for (size_t i = 0; i < r->n_findings; i++)
            if (r->findings[i].severity == MF_VERDICT_DANGEROUS)
                printf("   finding: byte %lld: %s %s: %s\n", (long long)r->findings[i].offset,
                       r->findings[i].opcode ? r->findings[i].opcode : "",
                       r->findings[i].global ? r->findings[i].global : "",
                       r->findings[i].message);
        mf_scan_free(r);
    }
    /* every case the manifest calls unsafe is at least not `safe` */
    size_t i, unsafe = 0;
    json_t *c;
    json_array_foreach(manifest, i, c) {
        if (strcmp(json_string_value(json_object_get(c, "expect")), "unsafe") != 0)
            continue;
        const char *path = in_corpus(json_string_value(json_object_get(c, "path")));
        mf_verdict worst = MF_VERDICT_SAFE;
        if (mf_open(path, NULL, &m, NULL) == 0) {
            worst = mf_model_verdict(m);
            mf_close(m);
        } else if (mf_scan_file(path, &r, NULL) == 0) {
            worst = r->verdict;
            mf_scan_free(r);
        }
        CHECK(worst != MF_VERDICT_SAFE, "%s: judged safe", path);
        unsafe++;
    }
    printf("   %zu unsafe cases, none judged safe\n", unsafe);
    mf_status_clear(&st);
}

/* ---------------------------------------------------------- 5. convert */

static int cancel(void *user, uint64_t done, uint64_t total)
{
    (void)user;
    return done * 2 >= total; /* give up half way */
}

static void convert(void)
{
    printf("5. convert\n");
    const char *in = in_corpus("pytorch/state_dict.pt");
    char out[2048];
    snprintf(out, sizeof(out), "%s/state_dict.safetensors", out_dir);
    mf_status st;
    mf_status_init(&st);
    mf_model *m, *back;
    if (mf_open(in, NULL, &m, &st) != 0) {
        CHECK(0, "%s: %s", in, st.msg);
        mf_status_clear(&st);
        return;
    }
    CHECK(mf_model_verdict(m) == MF_VERDICT_SAFE, "%s: verdict %s", in,
          mf_verdict_name(mf_model_verdict(m)));
    mf_convert_st_opts o;
    mf_convert_st_opts_init(&o);
    o.progress = cancel;
    struct stat sb;
    CHECK(mf_convert_to_safetensors(m, out, &o, NULL, &st) != 0 && st.code == MF_ERR_CANCELLED &&
              stat(out, &sb) != 0,
          "a cancelled conversion left %s", out);
    mf_status_clear(&st);
    o.progress = NULL;
    char a[129], b[129];
    CHECK(mf_convert_to_safetensors(m, out, &o, NULL, &st) == 0, "%s: %s", out, st.msg);
    CHECK(mf_open(out, NULL, &back, &st) == 0, "%s: %s", out, st.msg);
    CHECK(mf_hash_tensor_content(m, MF_SHA256, a, &st) == 0 &&
              mf_hash_tensor_content(back, MF_SHA256, b, &st) == 0 && strcmp(a, b) == 0,
          "tensor content %s -> %s", a, b);
    printf("   %s -> %s: %zu tensors, tensor content sha256 %.16s... on both sides\n", in, out,
           mf_model_tensor_count(back), b);
    mf_close(back);
    mf_close(m);
    remove(out);
    mf_status_clear(&st);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s CORPUS_DIR OUT_DIR\n", argv[0]);
        return 2;
    }
    corpus_dir = argv[1];
    out_dir = argv[2];
    printf("libmfmt %s (built against %s)\n", mf_version(), MF_VERSION_STRING);
    json_error_t je;
    json_t *manifest = json_load_file(in_corpus("manifest.json"), JSON_DECODE_INT_AS_REAL, &je);
    if (!manifest) {
        fprintf(stderr, "tour: %s/manifest.json: %s\n", corpus_dir, je.text);
        return 2;
    }
    open_every_format(manifest);
    read_each_family(manifest);
    read_by_rows();
    scan(manifest);
    convert();
    json_decref(manifest);
    printf(failures ? "tour: %d checks FAILED\n" : "tour: every check holds\n", failures);
    return failures ? 1 : 0;
}
