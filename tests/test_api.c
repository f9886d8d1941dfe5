/* test_api.c - the public API of mfmt.h as a program outside the library
 * uses it: a NULL status everywhere, option structs and their struct_size,
 * cancellation leaving no output, the scan verdict on the handle, the
 * reading helpers (every corpus tensor, native and F32, whole and by rows)
 * against the manifest's canonical hashes and against independent
 * conversions, mf_hash_model against the single hashes, manifests. */
#include "testlib.h"

#include "core/core.h"
#include "ops/tensor_f32.h"

#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *shared;
static char tmp[256];

/* A corpus file: ../shared/corpus's, or without ../shared the copy of the
 * few the API contract needs in tests/data/api (see its README), so the
 * contract is tested on every checkout. */
static const char *corpus(const char *rel)
{
    static char p[4][1024];
    static int k;
    k = (k + 1) % 4;
    if (shared)
        snprintf(p[k], sizeof(p[k]), "%s/corpus/%s", shared, rel);
    else
        snprintf(p[k], sizeof(p[k]), "tests/data/api/%s", rel);
    return p[k];
}

static bool exists(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0;
}

static void sha256_hex(const void *b, size_t n, char hex[129])
{
    mf_hasher *h = mf_hasher_new(MF_SHA256);
    mf_hasher_update(h, b, n);
    mf_hasher_final_hex(h, hex);
    mf_hasher_free(h);
}

/* ------------------------------------------------------ NULL status, opts */

static void test_null_status(void)
{
    mf_model *m = NULL;
    CHECK(mf_open(corpus("gguf/dtypes.gguf"), NULL, &m, NULL) == 0 && m);
    mf_close(m);
    CHECK(mf_open("/nonexistent/x.gguf", NULL, &m, NULL) == -1 && m == NULL);
    CHECK(mf_open(corpus("gguf/invalid/bad_magic.gguf"), NULL, &m, NULL) == -1);
    CHECK(mf_validate(corpus("gguf/invalid/duplicate_key.gguf"), NULL) == -1);
    CHECK(mf_validate(corpus("gguf/dtypes.gguf"), NULL) == 0);
    mf_detection d;
    CHECK(mf_detect("/nonexistent", &d, NULL) == -1);
    CHECK(mf_open(NULL, NULL, &m, NULL) == -1);
    CHECK(mf_open(corpus("gguf/dtypes.gguf"), NULL, NULL, NULL) == -1);
    CHECK(mf_scan_path("/nonexistent", NULL, NULL, NULL) == -1);
    char hex[129];
    CHECK(mf_hash_file("/nonexistent", MF_SHA256, hex, NULL) == -1);
    mf_estimate *e = NULL;
    CHECK(mf_estimate_path("/nonexistent", NULL, &e, NULL) == -1 && !e);
    CHECK(mf_open(corpus("gguf/dtypes.gguf"), NULL, &m, NULL) == 0);
    const mf_tensor *t = mf_tensor_find(m, "f32");
    float f[6];
    CHECK(t && mf_tensor_read(m, t, MF_F32, 5, 1, f, sizeof(f), NULL) == -1); /* 2 rows */
    CHECK(t && mf_tensor_read(m, t, MF_F32, 0, 2, f, 4, NULL) == -1);          /* too small */
    CHECK(t && mf_tensor_read(m, t, MF_Q8_0, 0, 1, f, sizeof(f), NULL) == -1); /* not F32 */
    mf_hash_result *hr = NULL;
    CHECK(mf_hash_model(m, NULL, &hr, NULL) == 0 && hr && hr->has_file);
    mf_hash_result_free(hr);
    mf_close(m);
    mf_close(NULL);
    mf_status_clear(NULL);
    CHECK(mf_status_count(NULL) == 0 && mf_status_message(NULL, 0) == NULL);
}

static void test_opts_and_status(void)
{
    mf_status st = MF_STATUS_INIT;
    mf_open_opts o = {0}; /* not initialised: refused, not misread */
    mf_model *m = NULL;
    CHECK(mf_open(corpus("gguf/dtypes.gguf"), &o, &m, &st) == -1 && st.code == MF_ERR_USAGE &&
          strstr(st.msg, "struct_size"));
    CHECK(mf_status_count(&st) == 1 && mf_status_message(&st, 0) &&
          !strcmp(mf_status_message(&st, 0), st.msg) && !mf_status_message(&st, 1));
    mf_status_clear(&st);
    /* a caller built against a shorter struct: the fields it lacks keep
     * their defaults (here: flags, beyond its struct_size, stay 0) */
    struct { size_t struct_size; } old = {sizeof(size_t)};
    CHECK(mf_open(corpus("gguf/dtypes.gguf"), (const mf_open_opts *)&old, &m, &st) == 0);
    mf_close(m);
    mf_open_opts_init(&o);
    CHECK(o.struct_size == sizeof(o) && o.flags == 0);
    mf_open_opts lit = MF_OPEN_OPTS_INIT;
    CHECK(lit.struct_size == sizeof(lit));
    /* strict: every breach */
    CHECK(mf_validate(corpus("safetensors/invalid/duplicate_key.safetensors"), &st) == -1 &&
          st.code == MF_ERR_FORMAT && mf_status_count(&st) >= 1);
    mf_status_clear(&st);
    CHECK(!strcmp(mf_version(), MF_VERSION_STRING));
    CHECK(!strcmp(mf_code_name(MF_ERR_CANCELLED), "cancelled") && !strcmp(mf_code_name(99), "?"));
    CHECK(mf_status_fail(&st, MF_ERR_IO, "x %d", 7) == -1 && st.code == MF_ERR_IO &&
          !strcmp(st.msg, "x 7"));
    mf_status_clear(&st);
}

/* ------------------------------------------------------------- reading */

/* An independent F32 of n canonical elements for the dtypes where C has
 * the conversion (F16 through _Float16, BF16 by its bits); false: none. */
static bool oracle_f32(mf_dtype dt, const uint8_t *p, uint64_t n, float *out)
{
    for (uint64_t i = 0; i < n; i++) {
        switch (dt) {
        case MF_F32: memcpy(&out[i], p + 4 * i, 4); break;
        case MF_F64: { double d; memcpy(&d, p + 8 * i, 8); out[i] = (float)d; break; }
        case MF_F16: { _Float16 h; memcpy(&h, p + 2 * i, 2); out[i] = (float)h; break; }
        case MF_BF16: {
            uint32_t b = (uint32_t)(p[2 * i] | p[2 * i + 1] << 8) << 16;
            memcpy(&out[i], &b, 4);
            break;
        }
        case MF_I8: out[i] = (int8_t)p[i]; break;
        case MF_U8: out[i] = p[i]; break;
        case MF_BOOL: out[i] = p[i] != 0; break;
        case MF_I16: { int16_t v; memcpy(&v, p + 2 * i, 2); out[i] = v; break; }
        case MF_U16: { uint16_t v; memcpy(&v, p + 2 * i, 2); out[i] = v; break; }
        case MF_I32: { int32_t v; memcpy(&v, p + 4 * i, 4); out[i] = (float)v; break; }
        case MF_U32: { uint32_t v; memcpy(&v, p + 4 * i, 4); out[i] = (float)v; break; }
        case MF_I64: { int64_t v; memcpy(&v, p + 8 * i, 8); out[i] = (float)v; break; }
        case MF_U64: { uint64_t v; memcpy(&v, p + 8 * i, 8); out[i] = (float)v; break; }
        default: return false;
        }
    }
    return true;
}

static bool same_floats(const float *a, const float *b, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        if (memcmp(&a[i], &b[i], 4) != 0 && !(isnan(a[i]) && isnan(b[i])))
            return false;
    return true;
}

typedef struct read_stats {
    size_t native, f32, oracle, rows, families;
    bool seen[256];
} read_stats;

/* Rows [1, rows) and row 0 alone, against the whole read. */
static void check_rows(const char *what, const mf_model *m, const mf_tensor *t, mf_dtype as,
                       const uint8_t *whole, uint64_t whole_bytes, read_stats *rs)
{
    uint64_t rows = mf_tensor_rows(t), b0 = 0, b1 = 0;
    if (rows < 2 || mf_tensor_read_size(t, as, 1, &b0, NULL) ||
        mf_tensor_read_size(t, as, rows - 1, &b1, NULL))
        return; /* one row, or rows that do not end on a block (1-D blocks) */
    CHECKF(b0 + b1 == whole_bytes, "%s: row sizes %llu + %llu != %llu", what,
           (unsigned long long)b0, (unsigned long long)b1, (unsigned long long)whole_bytes);
    uint8_t *b = malloc(b1 ? b1 : 1);
    mf_status st = MF_STATUS_INIT;
    CHECKF(b && mf_tensor_read(m, t, as, 1, UINT64_MAX, b, b1, &st) == 0 &&
               memcmp(b, whole + b0, b1) == 0,
           "%s: rows 1.. differ (%s)", what, st.msg);
    CHECKF(b && mf_tensor_read(m, t, as, 0, 1, b, b0, &st) == 0 && memcmp(b, whole, b0) == 0,
           "%s: row 0 differs (%s)", what, st.msg);
    mf_status_clear(&st);
    free(b);
    rs->rows++;
}

static void check_tensor(const char *path, const mf_model *m, const mf_tensor *t,
                         const char *want_sha, read_stats *rs)
{
    char what[1200], hex[129];
    snprintf(what, sizeof(what), "%s: %s (%s)", path, mf_tensor_name(t),
             mf_dtype_name(mf_tensor_dtype(t)));
    mf_status st = MF_STATUS_INIT;
    void *nat = NULL;
    uint64_t nb = 0;
    int rc = mf_tensor_read_alloc(m, t, MF_DTYPE_INVALID, &nat, &nb, &st);
    CHECKF(rc == 0, "%s: native read: %s", what, st.msg);
    mf_status_clear(&st);
    if (rc)
        return;
    rs->native++;
    sha256_hex(nat, nb, hex);
    CHECKF(nb == mf_tensor_nbytes(t) && !strcmp(hex, want_sha), "%s: native bytes %s, manifest %s",
           what, hex, want_sha);
    check_rows(what, m, t, MF_DTYPE_INVALID, nat, nb, rs);
    mf_dtype dt = mf_tensor_dtype(t);
    if (!mf_dtype_to_f32_supported(dt)) {
        mf_free(nat);
        return;
    }
    float *f = NULL;
    uint64_t fb = 0;
    rc = mf_tensor_read_alloc(m, t, MF_F32, (void **)&f, &fb, &st);
    uint64_t n = mf_tensor_nelems(t);
    CHECKF(rc == 0 && fb == 4 * n, "%s: F32 read: %s", what, st.msg);
    mf_status_clear(&st);
    if (rc == 0) {
        rs->f32++;
        float *o = malloc(n ? 4 * n : 4);
        if (o && oracle_f32(dt, nat, n, o)) {
            CHECKF(same_floats(f, o, n), "%s: F32 values differ from C's conversion", what);
            rs->oracle++;
        } else if (o) { /* F8 and ggml blocks: the library's own converter,
                           reached another way (all bytes at once) */
            CHECKF(mf_convert_to_f32(dt, nat, o, n) == 0 && same_floats(f, o, n),
                   "%s: F32 read differs from the buffer conversion", what);
        }
        free(o);
        check_rows(what, m, t, MF_F32, (const uint8_t *)f, fb, rs);
        if (!rs->seen[(dt + 256) % 256]) {
            rs->seen[(dt + 256) % 256] = true;
            rs->families++;
        }
    }
    mf_free(f);
    mf_free(nat);
}

/* Every tensor of every valid corpus case, native and as F32. */
static void test_read_corpus(void)
{
    if (!shared) {
        TL_SKIP("api: every corpus tensor read natively and as F32 (needs ../shared)");
        return;
    }
    char mpath[1024];
    snprintf(mpath, sizeof(mpath), "%s/corpus/manifest.json", shared);
    json_error_t je;
    json_t *man = json_load_file(mpath, JSON_DECODE_INT_AS_REAL, &je);
    CHECKF(man && json_is_array(man), "%s: %s", mpath, je.text);
    read_stats rs = {0};
    size_t i;
    json_t *c;
    json_array_foreach(man, i, c) {
        if (strcmp(json_string_value(json_object_get(c, "expect")), "ok"))
            continue;
        const char *path = corpus(json_string_value(json_object_get(c, "path")));
        mf_model *m;
        mf_status st = MF_STATUS_INIT;
        int rc = mf_open(path, NULL, &m, &st);
        CHECKF(rc == 0, "%s: %s", path, st.msg);
        mf_status_clear(&st);
        if (rc)
            continue;
        size_t k;
        json_t *jt;
        json_array_foreach(json_object_get(c, "tensors"), k, jt) {
            const char *name = json_string_value(json_object_get(jt, "name"));
            const mf_tensor *t = mf_tensor_find(m, name);
            CHECKF(t != NULL, "%s: no tensor %s", path, name);
            if (t)
                check_tensor(path, m, t, json_string_value(json_object_get(jt, "sha256")), &rs);
        }
        mf_close(m);
    }
    json_decref(man);
    printf("read: %zu tensors native, %zu as F32 (%zu against C's conversion), %zu by rows, "
           "%zu dtypes\n", rs.native, rs.f32, rs.oracle, rs.rows, rs.families);
    CHECK(rs.native > 300 && rs.f32 > 250 && rs.oracle > 200 && rs.rows > 100 && rs.families >= 14);
}

/* A 1-D Q8_0 tensor: rows are elements; F32 reads cut blocks anywhere,
 * native reads only on block boundaries. Built with the GGUF writer. */
static int fill_q8(void *ctx, size_t i, mf_sink_fn sink, void *sc, mf_status *st)
{
    (void)i;
    return sink(sc, ctx, 2 * 34, st);
}

static void test_read_block_ranges(void)
{
    uint8_t blocks[2 * 34];
    for (size_t b = 0; b < 2; b++) {
        blocks[34 * b] = 0x00;
        blocks[34 * b + 1] = 0x3c; /* scale 1.0 (F16) */
        for (int j = 0; j < 32; j++)
            blocks[34 * b + 2 + j] = (uint8_t)(int8_t)(j - 16 + (int)b);
    }
    char path[512];
    snprintf(path, sizeof(path), "%s/q8.gguf", tmp);
    mf_out_tensor ot = {.name = "q", .dtype = MF_Q8_0, .ndim = 1, .shape = {64}};
    mf_status st = MF_STATUS_INIT;
    CHECKF(mf_gguf_write(path, &ot, 1, NULL, 0, fill_q8, blocks, &st) == 0, "%s", st.msg);
    mf_model *m;
    CHECK(mf_open(path, NULL, &m, &st) == 0);
    const mf_tensor *t = m ? mf_tensor_find(m, "q") : NULL;
    float f[64];
    CHECK(t && mf_tensor_read(m, t, MF_F32, 30, 5, f, sizeof(f), &st) == 0);
    for (int j = 0; t && j < 5; j++) { /* elements 30, 31 | 32, 33, 34 */
        int e = 30 + j, b = e / 32;
        CHECKF(f[j] == (float)(e % 32 - 16 + b), "element %d: %g", e, f[j]);
    }
    uint8_t raw[68];
    CHECK(t && mf_tensor_read(m, t, MF_DTYPE_INVALID, 32, 32, raw, sizeof(raw), &st) == 0 &&
          memcmp(raw, blocks + 34, 34) == 0);
    CHECK(t && mf_tensor_read(m, t, MF_DTYPE_INVALID, 30, 5, raw, sizeof(raw), &st) == -1 &&
          st.code == MF_ERR_USAGE);
    mf_status_clear(&st);
    mf_close(m);
    unlink(path);
}

/* -------------------------------------------------------- cancellation */

static int cancel_at_once(void *user, uint64_t done, uint64_t total)
{
    (void)done;
    (void)total;
    ++*(int *)user;
    return 1;
}

static int count_calls(void *user, uint64_t done, uint64_t total)
{
    (void)done;
    (void)total;
    ++*(int *)user;
    return 0;
}

static void test_cancel(void)
{
    mf_status st = MF_STATUS_INIT;
    mf_model *m;
    CHECK(mf_open(corpus("safetensors/all_dtypes.safetensors"), NULL, &m, &st) == 0 ||
          mf_open(corpus("gguf/dtypes.gguf"), NULL, &m, &st) == 0);
    char out[512];
    snprintf(out, sizeof(out), "%s/c.safetensors", tmp);
    int calls = 0;
    mf_convert_st_opts o;
    mf_convert_st_opts_init(&o);
    o.progress = cancel_at_once;
    o.progress_user = &calls;
    CHECK(mf_convert_to_safetensors(m, out, &o, NULL, &st) == -1 && st.code == MF_ERR_CANCELLED &&
          calls == 1 && !exists(out));
    mf_status_clear(&st);
    calls = 0;
    o.progress = count_calls;
    CHECKF(mf_convert_to_safetensors(m, out, &o, NULL, &st) == 0 && calls > 0 && exists(out), "%s",
           st.msg);
    /* the output holds the same tensor content */
    mf_model *back;
    char a[129], b[129];
    CHECK(mf_open(out, NULL, &back, &st) == 0);
    CHECK(mf_hash_tensor_content(m, MF_SHA256, a, &st) == 0 &&
          mf_hash_tensor_content(back, MF_SHA256, b, &st) == 0 && !strcmp(a, b));
    mf_close(back);
    unlink(out);
    mf_close(m);

    /* split: nothing of the set is left */
    CHECK(mf_open(corpus("gguf/dtypes.gguf"), NULL, &m, &st) == 0);
    snprintf(out, sizeof(out), "%s/sp", tmp);
    mf_split_opts so;
    mf_split_opts_init(&so);
    so.max_tensors = 3;
    so.progress = cancel_at_once;
    so.progress_user = &calls;
    size_t nf = 99;
    CHECK(mf_gguf_split(m, out, &so, &nf, &st) == -1 && st.code == MF_ERR_CANCELLED && nf == 0);
    char first[600];
    snprintf(first, sizeof(first), "%s-00001-of-00004.gguf", out);
    CHECK(!exists(first));
    mf_status_clear(&st);
    /* hashing */
    mf_hash_opts ho;
    mf_hash_opts_init(&ho);
    ho.progress = cancel_at_once;
    ho.progress_user = &calls;
    mf_hash_result *hr = NULL;
    CHECK(mf_hash_model(m, &ho, &hr, &st) == -1 && st.code == MF_ERR_CANCELLED && !hr);
    mf_status_clear(&st);
    mf_close(m);

    /* quantize */
    char q[512];
    snprintf(q, sizeof(q), "%s/q.gguf", tmp);
    mf_quantize_opts qo;
    mf_quantize_opts_init(&qo, MF_FTYPE_Q8_0);
    qo.progress = cancel_at_once;
    qo.progress_user = &calls;
    CHECK(mf_quantize_file(corpus("gguf/dtypes.gguf"), q, &qo, NULL, NULL, NULL, &st) == -1 &&
          st.code == MF_ERR_CANCELLED && !exists(q));
    mf_status_clear(&st);
}

/* ------------------------------------------------------- scan on open */

static void test_verdict(void)
{
    if (!shared) {
        TL_SKIP("api: the verdict over every unsafe corpus case (needs ../shared)");
        return;
    }
    char mpath[1024];
    snprintf(mpath, sizeof(mpath), "%s/corpus/manifest.json", shared);
    json_t *man = json_load_file(mpath, JSON_DECODE_INT_AS_REAL, NULL);
    size_t i, unsafe = 0, opened = 0, refused = 0;
    json_t *c;
    json_array_foreach(man, i, c) {
        const char *expect = json_string_value(json_object_get(c, "expect"));
        const char *path = corpus(json_string_value(json_object_get(c, "path")));
        mf_model *m = NULL;
        if (!strcmp(expect, "unsafe")) {
            unsafe++;
            if (mf_open(path, NULL, &m, NULL) == 0) {
                opened++; /* opening runs nothing; the verdict says it would */
                CHECKF(mf_model_verdict(m) != MF_VERDICT_SAFE, "%s: verdict safe", path);
                mf_close(m);
            }
            mf_open_opts o;
            mf_open_opts_init(&o);
            o.flags = MF_OPEN_REFUSE_UNSAFE;
            mf_status st = MF_STATUS_INIT;
            if (mf_open(path, &o, &m, &st) == 0) {
                CHECKF(mf_model_verdict(m) == MF_VERDICT_UNKNOWN, "%s: opened despite the flag",
                       path);
                mf_close(m);
            } else if (st.code == MF_ERR_UNSAFE) {
                refused++;
            }
            mf_status_clear(&st);
        } else if (!strcmp(expect, "ok") && mf_open(path, NULL, &m, NULL) == 0) {
            mf_format f = mf_model_format(m);
            if (f == MF_FMT_SAFETENSORS || f == MF_FMT_GGUF || f == MF_FMT_ONNX)
                CHECKF(mf_model_verdict(m) == MF_VERDICT_SAFE, "%s: not safe", path);
            mf_close(m);
        }
    }
    json_decref(man);
    printf("verdict: %zu unsafe cases, %zu open, %zu refused with MF_OPEN_REFUSE_UNSAFE\n", unsafe,
           opened, refused);
    CHECK(unsafe >= 10 && opened >= 5 && refused >= 5);
    /* the example: a pickle that carries os.system */
    const char *evil = corpus("pickle/malicious/os_system.pkl");
    mf_model *m = NULL;
    if (exists(evil)) {
        CHECK(mf_open(evil, NULL, &m, NULL) != 0 || mf_model_verdict(m) == MF_VERDICT_DANGEROUS);
        mf_close(m);
    }
    mf_open_opts o;
    mf_open_opts_init(&o);
    o.flags = MF_OPEN_NO_SCAN;
    CHECK(mf_open(corpus("pytorch/state_dict.pt"), &o, &m, NULL) != 0 ||
          mf_model_verdict(m) == MF_VERDICT_UNKNOWN);
    mf_close(m);
}

/* ------------------------------------------------------------- hashing */

static int collect_line(void *ctx, const void *buf, size_t n, mf_status *st)
{
    (void)st;
    FILE *f = ctx;
    return fwrite(buf, 1, n, f) == n ? 0 : -1;
}

static int count_lines(void *user, int kind, const char *hex, const char *name,
                       mf_manifest_match match)
{
    (void)kind;
    (void)hex;
    (void)name;
    int *c = user;
    c[match]++;
    return 0;
}

static void test_hash(void)
{
    const char *path = corpus("gguf/dtypes.gguf");
    mf_status st = MF_STATUS_INIT;
    mf_model *m;
    CHECK(mf_open(path, NULL, &m, &st) == 0);
    mf_hash_opts o;
    mf_hash_opts_init(&o);
    o.per_tensor = true;
    o.algo = MF_XXH64;
    mf_hash_result *r;
    char hex[129];
    CHECK(mf_hash_model(m, &o, &r, &st) == 0 && r->has_file && r->n_tensors == mf_model_tensor_count(m));
    CHECK(mf_hash_file(path, MF_XXH64, hex, &st) == 0 && !strcmp(hex, r->file_hex));
    CHECK(mf_hash_tensor_content(m, MF_XXH64, hex, &st) == 0 && !strcmp(hex, r->content_hex));
    for (size_t i = 0; i < r->n_tensors; i++)
        CHECK(mf_hash_tensor(m, mf_model_tensor_at(m, i), MF_XXH64, hex, &st) == 0 &&
              !strcmp(hex, r->tensor_hex[i]));
    mf_hash_result_free(r);

    /* a manifest written through a sink, read back, checked; then broken */
    char mp[512];
    snprintf(mp, sizeof(mp), "%s/m.txt", tmp);
    FILE *f = fopen(mp, "w");
    unsigned mask;
    CHECK(mf_hash_kinds_parse("sha1,xxh3,uuid", &mask) == 0 && mf_hash_kinds_parse("md5", &mask) == -1);
    CHECK(mf_hash_kinds_parse("sha1,xxh3,uuid", &mask) == 0);
    CHECK(f && mf_manifest_write(m, "dtypes.gguf", mask, collect_line, f, &st) == 0);
    if (f)
        fclose(f);
    mf_manifest *mf;
    CHECK(mf_manifest_load(mp, &mf, &st) == 0 && mf_manifest_kinds(mf) == mask &&
          mf_manifest_default_mask(mf) == MF_HASH_BIT(MF_SHA1));
    char *label = mf_manifest_label(mf, m, path); /* the manifest says dtypes.gguf */
    CHECK(label && !strcmp(label, "dtypes.gguf"));
    int counts[3] = {0};
    mf_manifest_outcome out;
    CHECK(mf_manifest_check(mf, m, label, 0, count_lines, counts, &out, &st) == 0 &&
          out == MF_MANIFEST_OK && counts[MF_MATCH_OK] == (int)mf_model_tensor_count(m) + 1 &&
          counts[MF_MATCH_MISMATCH] == 0);
    CHECK(mf_manifest_check(mf, m, "other.gguf", 0, NULL, NULL, &out, &st) == 0 &&
          out == MF_MANIFEST_MISSING_ENTRY);
    mf_free(label);
    mf_manifest_free(mf);
    f = fopen(mp, "w");
    if (f) {
        fputs("sha1      0000000000000000000000000000000000000000  dtypes.gguf\n", f);
        fclose(f);
    }
    CHECK(mf_manifest_load(mp, &mf, &st) == 0);
    CHECK(mf_manifest_check(mf, m, "dtypes.gguf", 0, NULL, NULL, &out, &st) == 0 &&
          out == MF_MANIFEST_MISMATCH);
    mf_manifest_free(mf);
    unlink(mp);
    mf_status_clear(&st);
    mf_close(m);
}

/* ---------------------------------------------- views, graph, accessors */

static int to_buf(void *ctx, const void *buf, size_t n, mf_status *st)
{
    (void)st;
    size_t *len = ctx;
    *len += n;
    return buf ? 0 : -1;
}

static void test_views_and_graph(void)
{
    mf_status st = MF_STATUS_INIT;
    mf_model *m, *v;
    CHECK(mf_open(corpus("gguf/dtypes.gguf"), NULL, &m, &st) == 0);
    CHECK(mf_model_logical_view(m, &v, &st) == 0 &&
          mf_model_tensor_count(v) == mf_model_tensor_count(m));
    char a[129], b[129];
    CHECK(mf_hash_tensor_content(m, MF_SHA256, a, &st) == 0 &&
          mf_hash_tensor_content(v, MF_SHA256, b, &st) == 0 && !strcmp(a, b));
    mf_close(v);
    size_t len = 0;
    CHECK(mf_model_graph_text(m, to_buf, &len, &st) == -1 && st.code == MF_ERR_USAGE);
    mf_status_clear(&st);
    CHECK(mf_model_meta_count(m) > 0 && mf_model_meta_at(m, 0) && !mf_model_meta_at(m, 9999));
    CHECK(!mf_model_tensor_at(m, mf_model_tensor_count(m)));
    const mf_tensor *t = mf_tensor_find(m, "q8_0");
    CHECK(t && mf_tensor_ndim(t) == 2 && mf_tensor_shape(t)[0] == 2 && mf_tensor_rows(t) == 2 &&
          mf_tensor_dtype(t) == MF_Q8_0 && mf_tensor_data(m, t) && !mf_tensor_strides(t) &&
          !strcmp(mf_tensor_file_path(m, t), mf_model_path(m)));
    mf_close(m);
    /* a logical open: the same view from mf_open */
    mf_open_opts o;
    mf_open_opts_init(&o);
    o.flags = MF_OPEN_LOGICAL;
    CHECK(mf_open(corpus("gguf/dtypes.gguf"), &o, &m, &st) == 0 &&
          mf_hash_tensor_content(m, MF_SHA256, b, &st) == 0 && !strcmp(a, b));
    mf_close(m);
    const char *onnx = corpus("onnx/mlp_raw_data.onnx");
    if (exists(onnx)) {
        CHECK(mf_open(onnx, NULL, &m, &st) == 0);
        len = 0;
        CHECK(mf_model_graph_text(m, to_buf, &len, &st) == 0 && len > 20);
        mf_close(m);
    }
    mf_status_clear(&st);
}

/* ------------------------------------------------------------- threads */

typedef struct hash_job {
    const mf_model *m;
    char hex[129];
    int rc;
} hash_job;

static void *hash_all(void *arg)
{
    hash_job *j = arg;
    j->rc = 0;
    for (int k = 0; k < 20 && j->rc == 0; k++) /* read every tensor, again and again */
        j->rc = mf_hash_tensor_content(j->m, MF_SHA256, j->hex, NULL);
    return NULL;
}

/* mfmt.h: functions on a const mf_model * may run on several threads at
 * once. Compressed, chunked and strided layouts, four threads each. */
static void test_threads(void)
{
    static const char *const cases[] = {"numpy/compressed.npz", "hdf5/shuffle_gzip.h5", "hdf5/chunked.h5",
                                        "pytorch/views.pt", "hf-dir/llama-tiny",
                                        "onnx/external_data/model.onnx"};
    size_t tried = 0;
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        mf_model *m;
        if (mf_open(corpus(cases[c]), NULL, &m, NULL) != 0)
            continue;
        tried++;
        char want[129];
        CHECK(mf_hash_tensor_content(m, MF_SHA256, want, NULL) == 0);
        hash_job jobs[4];
        pthread_t th[4];
        for (int i = 0; i < 4; i++) {
            jobs[i].m = m;
            CHECK(pthread_create(&th[i], NULL, hash_all, &jobs[i]) == 0);
        }
        for (int i = 0; i < 4; i++) {
            pthread_join(th[i], NULL);
            CHECKF(jobs[i].rc == 0 && !strcmp(jobs[i].hex, want), "%s: thread %d", cases[c], i);
        }
        mf_close(m);
    }
    CHECK(tried >= 3);
}

int main(void)
{
    shared = tl_shared_dir();
    snprintf(tmp, sizeof(tmp), "/tmp/mfmt-test-api-XXXXXX");
    if (!mkdtemp(tmp)) {
        CHECK(!"mkdtemp");
        return tl_report("api");
    }
    test_null_status();
    test_opts_and_status();
    test_read_corpus();
    test_read_block_ranges();
    test_cancel();
    test_verdict();
    test_hash();
    test_views_and_graph();
    test_threads();
    rmdir(tmp);
    return tl_report("api");
}
