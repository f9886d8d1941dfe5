/* test_mlx.c - MLX quantized directories built here (no MLX files exist in
 * ../shared): packed codes of 3, 4 and 8 bits with F16, BF16 and F32
 * scales, logical shapes, dequantized values worked out by hand, the
 * dequantized view written to safetensors and read back. */
#include "testmf.h"

#include "core/core.h"
#include "formats/mlx/mlx.h"
#include "ops/convert_st.h"

#include <sys/stat.h>
#include <unistd.h>

static char dir[256];

typedef struct src_tensor {
    mf_out_tensor t;
    uint8_t *data;
    size_t n;
} src_tensor;

static int fill_src(void *ctx, size_t i, mf_sink_fn sink, void *sctx, mf_status *st)
{
    src_tensor *ts = ctx;
    return sink(sctx, ts[i].data, ts[i].n, st);
}

static void write_text(const char *path, const char *s)
{
    FILE *f = fopen(path, "w");
    fputs(s, f);
    fclose(f);
}

static const char *path_in(const char *sub, const char *name)
{
    static char p[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(p[k], sizeof(p[k]), "%s/%s%s%s", dir, sub, *name ? "/" : "", name);
    return p[k];
}

/* --------------------------------------------------- the model, by hand */

/* q_proj: 4-bit, group 32, F16 scales, logical [2, 64]; codes packed into
 * uint32 words as MLX documents (code j at bits 4*(j%8) of word j/8). */
static uint8_t q_w[2 * 8 * 4], q_s[2 * 2 * 2], q_b[2 * 2 * 2];
static uint16_t q_expect[2 * 64];
/* k_proj: 3-bit, group 32, BF16 scales, logical [1, 32]: 8 codes per 3
 * bytes, little-endian. */
static uint8_t k_w[3 * 4], k_s[2], k_b[2];
static uint16_t k_expect[32];
/* embed: 8-bit, group 64, F32 scales, logical [2, 64] */
static uint8_t e_w[2 * 16 * 4], e_s[2 * 4], e_b[2 * 4];
static float e_expect[2 * 64];
/* v_proj: 4-bit, F16: every code 7, scale 0x2E66 (0.0999755859375), bias
 * 1.0: s*q = 0.6998291015625 rounds to 0.69970703125 in f16, + 1 is
 * 1.69970703125, a tie between 1.69921875 and 1.7001953125: even wins,
 * 0x3ECC. A fused s*q+b would give 1.7001953125 (0x3ECD). */
static uint8_t v_w[4 * 4], v_s[2], v_b[2];
static float norm[4] = {1, 2, 3, 4};

static void build_values(void)
{
    static const float qs[2][2] = {{0.5f, 0.25f}, {2.0f, -0.125f}};
    static const float qb[2][2] = {{-1.0f, 3.0f}, {0.5f, -8.0f}};
    for (int r = 0; r < 2; r++) {
        for (int g = 0; g < 2; g++) {
            mf_wr16le(q_s + 2 * (2 * r + g), mf_f32_to_f16(qs[r][g]));
            mf_wr16le(q_b + 2 * (2 * r + g), mf_f32_to_f16(qb[r][g]));
        }
        for (int j = 0; j < 64; j++) {
            uint32_t code = (uint32_t)(j * 5 + r * 3) % 16;
            uint8_t *word = q_w + 4 * (r * 8 + j / 8);
            mf_wr32le(word, mf_rd32le(word) | code << (4 * (j % 8)));
            /* exact in f16: small multiples of powers of two */
            q_expect[r * 64 + j] = mf_f32_to_f16(qs[r][j / 32] * (float)code + qb[r][j / 32]);
        }
    }
    mf_wr16le(k_s, mf_f32_to_bf16(0.5f));
    mf_wr16le(k_b, mf_f32_to_bf16(-2.0f));
    for (int p = 0; p < 4; p++) {
        uint32_t v = 0;
        for (int c = 0; c < 8; c++) {
            uint32_t code = (uint32_t)(7 * (8 * p + c) + 1) % 8;
            v |= code << (3 * c);
            k_expect[8 * p + c] = mf_f32_to_bf16(0.5f * (float)code - 2.0f);
        }
        k_w[3 * p] = (uint8_t)v;
        k_w[3 * p + 1] = (uint8_t)(v >> 8);
        k_w[3 * p + 2] = (uint8_t)(v >> 16);
    }
    for (int r = 0; r < 2; r++) {
        float s = r ? 0.5f : 0.25f, b = r ? -64.0f : 1.0f;
        memcpy(e_s + 4 * r, &s, 4);
        memcpy(e_b + 4 * r, &b, 4);
        for (int j = 0; j < 64; j++) {
            uint32_t code = (uint32_t)(j * 37 + r * 11) % 256;
            e_w[r * 64 + j] = (uint8_t)code; /* 8-bit: one code per byte */
            e_expect[r * 64 + j] = s * (float)code + b; /* exact */
        }
    }
    for (int i = 0; i < 4; i++)
        mf_wr32le(v_w + 4 * i, 0x77777777u);
    mf_wr16le(v_s, 0x2E66);
    mf_wr16le(v_b, 0x3C00);
}

#define T(NAME, DT, ND, ...) {{NAME, DT, ND, {__VA_ARGS__}}, NULL, 0}

static src_tensor tensors[] = {
    T("model.embed_tokens.weight", MF_U32, 2, 2, 16),
    T("model.embed_tokens.scales", MF_F32, 2, 2, 1),
    T("model.embed_tokens.biases", MF_F32, 2, 2, 1),
    T("model.layers.0.q_proj.weight", MF_U32, 2, 2, 8),
    T("model.layers.0.q_proj.scales", MF_F16, 2, 2, 2),
    T("model.layers.0.q_proj.biases", MF_F16, 2, 2, 2),
    T("model.layers.0.k_proj.weight", MF_U32, 2, 1, 3),
    T("model.layers.0.k_proj.scales", MF_BF16, 2, 1, 1),
    T("model.layers.0.k_proj.biases", MF_BF16, 2, 1, 1),
    T("model.layers.0.v_proj.weight", MF_U32, 2, 1, 4),
    T("model.layers.0.v_proj.scales", MF_F16, 2, 1, 1),
    T("model.layers.0.v_proj.biases", MF_F16, 2, 1, 1),
    T("model.norm.weight", MF_F32, 1, 4),
};
#define N_TENSORS (sizeof(tensors) / sizeof(tensors[0]))

static const char config[] =
    "{\"model_type\": \"llama\", \"quantization\": {\"group_size\": 32, \"bits\": 4,"
    " \"model.layers.0.k_proj\": {\"group_size\": 32, \"bits\": 3},"
    " \"model.embed_tokens\": {\"group_size\": 64, \"bits\": 8}}}";

static void attach(void)
{
    uint8_t *d[] = {e_w, e_s, e_b, q_w, q_s, q_b, k_w, k_s, k_b, v_w, v_s, v_b, (uint8_t *)norm};
    size_t n[] = {sizeof(e_w), sizeof(e_s), sizeof(e_b), sizeof(q_w), sizeof(q_s), sizeof(q_b),
                  sizeof(k_w), sizeof(k_s), sizeof(k_b), sizeof(v_w), sizeof(v_s), sizeof(v_b),
                  sizeof(norm)};
    for (size_t i = 0; i < N_TENSORS; i++) {
        tensors[i].data = d[i];
        tensors[i].n = n[i];
    }
}

/* Writes dir/<sub>/ with config.json and the tensors [from, to) in one
 * model.safetensors (or split in two files when split). */
static void make_dir(const char *sub, const char *cfg, size_t skip, bool split)
{
    mkdir(path_in(sub, ""), 0755);
    write_text(path_in(sub, "config.json"), cfg);
    src_tensor ts[N_TENSORS];
    mf_out_tensor outs[N_TENSORS];
    size_t n = 0;
    for (size_t i = 0; i < N_TENSORS; i++)
        if (i != skip)
            ts[n] = tensors[i], outs[n] = tensors[i].t, n++;
    mf_status st;
    mf_status_init(&st);
    size_t first = split ? n - 1 : n;
    CHECKF(mf_safetensors_write(path_in(sub, "model.safetensors"), outs, first, NULL, 0, fill_src,
                                ts, &st) == 0,
           "%s", st.msg);
    if (split)
        CHECKF(mf_safetensors_write(path_in(sub, "norm.safetensors"), outs + first, 1, NULL, 0,
                                    fill_src, ts + first, &st) == 0,
               "%s", st.msg);
    mf_status_clear(&st);
}

/* ------------------------------------------------------------- checks */

static void check_dequant(const mf_model *m, const char *weight, mf_dtype out, const void *want,
                          size_t n)
{
    const mf_tensor *t = mf_tensor_find(m, weight);
    const mf_mlx_quant *q = t ? mf_mlx_quant_of(m, t) : NULL;
    CHECKF(q != NULL, "%s: not a quantized triple", weight);
    if (!q)
        return;
    tl_sinkbuf c = {.n = 0};
    mf_status st;
    mf_status_init(&st);
    int rc = mf_mlx_dequantize(m, q, out, tl_sink, &c, &st);
    CHECKF(rc == 0 && c.n == n && memcmp(c.b, want, n) == 0, "%s: dequantized values differ (%s)",
           weight, st.msg);
    mf_status_clear(&st);
}

static void test_read(const mf_model *m)
{
    CHECK(m->format == MF_FMT_MLX);
    CHECK(m->n_tensors == N_TENSORS);
    const mf_mlx_quant *q;
    CHECK(mf_mlx_quants(m, &q) == 4);
    const mf_value *v = mf_meta_get(m, "mlx.logical.model.layers.0.q_proj.weight");
    CHECK(v && v->type == MF_V_STR && strcmp(v->as.s.ptr, "[2, 64] F16, 4-bit, group 32") == 0);
    v = mf_meta_get(m, "mlx.logical.model.layers.0.k_proj.weight");
    CHECK(v && strcmp(v->as.s.ptr, "[1, 32] BF16, 3-bit, group 32") == 0);
    v = mf_meta_get(m, "mlx.logical.model.embed_tokens.weight");
    CHECK(v && strcmp(v->as.s.ptr, "[2, 64] F32, 8-bit, group 64") == 0);
    v = mf_meta_get(m, "mlx.quantization.bits");
    CHECK(v && v->as.i == 4);
    bool noted = false;
    for (size_t i = 0; i < m->n_notes; i++)
        noted |= strstr(m->notes[i], "4 MLX-quantized weights") != NULL;
    CHECK(noted);
    /* stored tensors hash as the bytes written */
    const mf_tensor *t = mf_tensor_find(m, "model.layers.0.q_proj.weight");
    char want[129], got[129];
    mf_status st;
    mf_status_init(&st);
    tl_sha256_hex(q_w, sizeof(q_w), want);
    CHECK(t && t->dtype == MF_U32 && mf_hash_tensor(m, t, MF_SHA256, got, &st) == 0 &&
          strcmp(want, got) == 0);
    mf_status_clear(&st);
    check_dequant(m, "model.layers.0.q_proj.weight", MF_DTYPE_INVALID, q_expect, sizeof(q_expect));
    check_dequant(m, "model.layers.0.k_proj.weight", MF_DTYPE_INVALID, k_expect, sizeof(k_expect));
    check_dequant(m, "model.embed_tokens.weight", MF_DTYPE_INVALID, e_expect, sizeof(e_expect));
    uint16_t v_expect[32];
    for (int i = 0; i < 32; i++)
        v_expect[i] = 0x3ECC;
    check_dequant(m, "model.layers.0.v_proj.weight", MF_F16, v_expect, sizeof(v_expect));
    /* F32 output: MLX's f16 values, widened exactly */
    float q32[128];
    for (int i = 0; i < 128; i++)
        q32[i] = mf_f16_to_f32(q_expect[i]);
    check_dequant(m, "model.layers.0.q_proj.weight", MF_F32, q32, sizeof(q32));
    float v32[32];
    for (int i = 0; i < 32; i++)
        v32[i] = 1.69921875f;
    check_dequant(m, "model.layers.0.v_proj.weight", MF_F32, v32, sizeof(v32));
}

/* The logical view: scales and biases folded into their weights. */
static void test_view_roundtrip(const mf_model *m)
{
    mf_status st;
    mf_status_init(&st);
    mf_model *v;
    CHECKF(mf_mlx_dequantized_view(m, MF_DTYPE_INVALID, &v, &st) == 0, "%s", st.msg);
    if (!mf_ok(&st))
        return;
    CHECK(v->n_tensors == 5);
    const mf_tensor *t = mf_tensor_find(v, "model.layers.0.q_proj.weight");
    CHECK(t && t->dtype == MF_F16 && t->ndim == 2 && t->shape[0] == 2 && t->shape[1] == 64 &&
          t->nbytes == sizeof(q_expect));
    CHECK(mf_tensor_find(v, "model.layers.0.q_proj.scales") == NULL);
    CHECK(mf_meta_get(v, "mlx.quantization.bits") != NULL);
    char want[129], got[129];
    tl_sha256_hex(q_expect, sizeof(q_expect), want);
    CHECK(t && mf_hash_tensor(v, t, MF_SHA256, got, &st) == 0 && strcmp(want, got) == 0);
    tl_sha256_hex(norm, sizeof(norm), want);
    t = mf_tensor_find(v, "model.norm.weight");
    CHECK(t && mf_hash_tensor(v, t, MF_SHA256, got, &st) == 0 && strcmp(want, got) == 0);
    mf_status_clear(&st);
    mf_close(v);
}

/* The public way: mf_open with MF_OPEN_LOGICAL, then mf_tensor_read of the
 * packed weight as F32, whole and by rows: MLX's values, widened exactly. */
static void test_public_logical(const char *path)
{
    mf_open_opts o;
    mf_open_opts_init(&o);
    o.flags = MF_OPEN_LOGICAL;
    mf_model *v = NULL;
    mf_status st = MF_STATUS_INIT;
    CHECKF(mf_open(path, &o, &v, &st) == 0, "%s", st.msg);
    const mf_tensor *t = v ? mf_tensor_find(v, "model.layers.0.q_proj.weight") : NULL;
    CHECK(t && mf_tensor_dtype(t) == MF_F16 && mf_tensor_rows(t) == 2 &&
          mf_model_tensor_count(v) == 5);
    float f[128], row1[64];
    CHECK(t && mf_tensor_read(v, t, MF_F32, 0, UINT64_MAX, f, sizeof(f), &st) == 0);
    bool same = true;
    for (int i = 0; t && i < 128; i++)
        same &= f[i] == mf_f16_to_f32(q_expect[i]);
    CHECK(same);
    CHECK(t && mf_tensor_read(v, t, MF_F32, 1, 1, row1, sizeof(row1), &st) == 0 &&
          memcmp(row1, f + 64, sizeof(row1)) == 0);
    uint16_t h[128];
    CHECK(t && mf_tensor_read(v, t, MF_DTYPE_INVALID, 0, 2, h, sizeof(h), &st) == 0 &&
          memcmp(h, q_expect, sizeof(h)) == 0);
    mf_status_clear(&st);
    mf_close(v); /* closes the raw model it owns too (ASan: no leak) */
}

static int fill_from_view(void *ctx, size_t i, mf_sink_fn sink, void *sctx, mf_status *st)
{
    const mf_model *v = ctx;
    return mf_tensor_stream(v, &v->tensors[i], sink, sctx, st);
}

/* What `mfmt convert` does over the view: written to safetensors, read
 * back, each tensor's canonical hash as the view's. */
static void test_convert(const mf_model *m, mf_dtype out_dt)
{
    mf_status st;
    mf_status_init(&st);
    mf_model *v = NULL, *back = NULL;
    if (mf_mlx_dequantized_view(m, out_dt, &v, &st)) {
        CHECKF(0, "%s", st.msg);
        return;
    }
    mf_out_tensor outs[8];
    for (size_t i = 0; i < v->n_tensors; i++) {
        outs[i].name = v->tensors[i].name;
        outs[i].dtype = v->tensors[i].dtype;
        outs[i].ndim = v->tensors[i].ndim;
        memcpy(outs[i].shape, v->tensors[i].shape, sizeof(outs[i].shape));
    }
    const char *out = path_in("", "dequantized.safetensors");
    int rc = mf_safetensors_write(out, outs, v->n_tensors, NULL, 0, fill_from_view, v, &st);
    CHECKF(rc == 0, "write: %s", st.msg);
    if (rc == 0 && mf_open(out, NULL, &back, &st) == 0) {
        CHECK(back->n_tensors == v->n_tensors);
        for (size_t i = 0; i < v->n_tensors; i++) {
            const mf_tensor *a = &v->tensors[i], *b = mf_tensor_find(back, a->name);
            char ha[129], hb[129];
            CHECKF(b && b->dtype == a->dtype && mf_hash_tensor(v, a, MF_SHA256, ha, &st) == 0 &&
                       mf_hash_tensor(back, b, MF_SHA256, hb, &st) == 0 && strcmp(ha, hb) == 0,
                   "%s: differs after conversion (%s)", a->name, st.msg);
        }
        if (out_dt == MF_F32) {
            const mf_tensor *k = mf_tensor_find(back, "model.layers.0.k_proj.weight");
            float k32[32];
            for (int i = 0; i < 32; i++)
                k32[i] = mf_bf16_to_f32(k_expect[i]);
            CHECK(k && k->dtype == MF_F32 && k->nbytes == sizeof(k32) &&
                  memcmp(k->data, k32, sizeof(k32)) == 0);
        }
    } else if (rc == 0) {
        CHECKF(0, "reopen: %s", st.msg);
    }
    mf_close(back);
    mf_close(v);
    mf_status_clear(&st);
}

/* mf_convert_to_safetensors (mfmt convert) writes the logical tensors. */
static void test_convert_op(const mf_model *m)
{
    mf_status st;
    mf_status_init(&st);
    mf_convert_st_opts o = {.struct_size = sizeof(mf_convert_st_opts)};
    const char *out = path_in("", "convert_op.safetensors");
    mf_model *back = NULL;
    int rc = mf_convert_to_safetensors(m, out, &o, NULL, &st);
    CHECKF(rc == 0, "convert: %s", st.msg);
    if (rc == 0 && mf_open(out, NULL, &back, &st) == 0) {
        CHECK(back->n_tensors == 5 && !mf_tensor_find(back, "model.layers.0.q_proj.scales"));
        const mf_tensor *t = mf_tensor_find(back, "model.layers.0.q_proj.weight");
        CHECK(t && t->dtype == MF_F16 && t->ndim == 2 && t->shape[1] == 64 &&
              t->nbytes == sizeof(q_expect) && memcmp(t->data, q_expect, sizeof(q_expect)) == 0);
        t = mf_tensor_find(back, "model.layers.0.v_proj.weight");
        CHECK(t && t->nbytes == 64 && mf_rd16le(t->data) == 0x3ECC);
        t = mf_tensor_find(back, "model.norm.weight");
        CHECK(t && t->nbytes == sizeof(norm) && memcmp(t->data, norm, sizeof(norm)) == 0);
    }
    mf_close(back);
    mf_status_clear(&st);
}

static void expect_open_error(const char *sub, const char *needle)
{
    mf_status st;
    mf_status_init(&st);
    mf_model *m = NULL;
    int rc = mf_open(path_in(sub, ""), NULL, &m, &st);
    CHECKF(rc != 0 && strstr(st.msg, needle), "%s: want error with \"%s\", got rc %d: %s", sub,
           needle, rc, st.msg);
    mf_close(m);
    mf_status_clear(&st);
}

static void test_errors(void)
{
    /* config bits that do not fit the shapes */
    make_dir("wrongbits", "{\"quantization\": {\"group_size\": 32, \"bits\": 2, "
                          "\"model.embed_tokens\": {\"group_size\": 64, \"bits\": 8}, "
                          "\"model.layers.0.k_proj\": {\"group_size\": 32, \"bits\": 3}}}",
             (size_t)-1, false);
    expect_open_error("wrongbits", "do not fit 2-bit codes");
    /* biases missing */
    make_dir("nobias", config, 5, false);
    expect_open_error("nobias", "\"model.layers.0.q_proj.biases\"");
    make_dir("badcfg", "{\"quantization\": {\"group_size\": 32, \"bits\": 9}}", (size_t)-1, false);
    expect_open_error("badcfg", "bits 1 to 8");
    /* a module's own entry with a bad value is an error, not the defaults
     * (q_proj is 4-bit, groups of 32 as the defaults: before, "bits": 99
     * there was ignored and the open succeeded) */
    make_dir("badmodule", "{\"quantization\": {\"group_size\": 32, \"bits\": 4, "
                          "\"model.layers.0.k_proj\": {\"group_size\": 32, \"bits\": 3}, "
                          "\"model.embed_tokens\": {\"group_size\": 64, \"bits\": 8}, "
                          "\"model.layers.0.q_proj\": {\"group_size\": 32, \"bits\": 99}}}",
             (size_t)-1, false);
    expect_open_error("badmodule", "\"quantization\".\"model.layers.0.q_proj\": group_size and bits");
    make_dir("badmodule2", "{\"quantization\": {\"group_size\": 32, \"bits\": 4, "
                           "\"model.layers.0.k_proj\": {\"group_size\": 32, \"bits\": 3}, "
                           "\"model.embed_tokens\": {\"group_size\": 64, \"bits\": 8}, "
                           "\"model.layers.0.q_proj\": {\"group_size\": \"32\"}}}",
             (size_t)-1, false);
    expect_open_error("badmodule2", "\"model.layers.0.q_proj\": group_size and bits");
    mkdir(path_in("noweights", ""), 0755);
    write_text(path_in("noweights", "config.json"), config);
    expect_open_error("noweights", "no model.safetensors.index.json");
}

int main(void)
{
    if (!tl_make_tmpdir(dir, sizeof(dir), "mlx")) {
        return 2;
    }
    build_values();
    attach();
    make_dir("mlx", config, (size_t)-1, true);
    mf_detection d;
    mf_status st;
    mf_status_init(&st);
    CHECK(mf_detect(path_in("mlx", ""), &d, &st) == 0 && d.format == MF_FMT_MLX);
    mf_model *m = NULL;
    mf_open_opts o = {.struct_size = sizeof(mf_open_opts), .flags = MF_OPEN_STRICT};
    int rc = mf_open(path_in("mlx", ""), &o, &m, &st);
    CHECKF(rc == 0, "%s", st.msg);
    if (rc == 0) {
        test_read(m);
        test_view_roundtrip(m);
        test_convert(m, MF_DTYPE_INVALID);
        test_convert(m, MF_F32);
        test_convert_op(m);
        test_public_logical(path_in("mlx", ""));
        mf_model *v;
        CHECK(mf_mlx_dequantized_view(m, MF_I8, &v, &st) != 0 && st.code == MF_ERR_USAGE);
        mf_status_clear(&st);
    }
    mf_close(m);
    mf_status_clear(&st);
    test_errors();
    tl_remove_tmpdir(dir);
    return tl_report("mlx");
}
