/* test_quantize.c - the quantize driver (lib/ops/quantize.c): requantize
 * refusal, the dry run's numbers, row chunks and threads, experts with an
 * importance matrix, errors. Every converted tensor is checked against a
 * direct quantization of the whole tensor. */
#include "testlib.h"

#include "gguf_fixture.h"
#include "ops/quantize.h"
#include "quant/quant.h"

#include <math.h>
#include <unistd.h>

static char g_tmp[] = "/tmp/mfmt-quantize-XXXXXX";
static char g_mix[512]; /* ../shared/quant-ref/mix, or "" */

static void tmp_path(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", g_tmp, name);
}

static void mix_path(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", g_mix, name);
}

/* Expected bytes of a converted tensor: the source rows as F32, each
 * (ne[2]) matrix quantized at once with its part of the imatrix. */
static bool direct_matches(const mf_tensor *src, const mf_tensor *out, const float *imatrix)
{
    int64_t ne0 = src->shape[src->ndim - 1];
    uint64_t n = mf_tensor_nelems(src), qbytes;
    int64_t ne2 = src->ndim >= 3 ? src->shape[src->ndim - 3] : 1;
    int64_t rows_per_mat = (int64_t)n / ne0 / ne2;
    if (mf_dtype_nbytes(out->dtype, n, &qbytes) || qbytes != out->nbytes)
        return false;
    float *f = malloc(n * sizeof(float));
    uint8_t *q = malloc(qbytes);
    bool ok = f && q && mf_dequantize_row(src->dtype, src->data, f, (int64_t)n) == 0;
    uint64_t mat_bytes = qbytes / (uint64_t)ne2;
    for (int64_t e = 0; ok && e < ne2; e++)
        ok = mf_quantize_rows(out->dtype, f + e * rows_per_mat * ne0, q + (uint64_t)e * mat_bytes,
                              rows_per_mat, ne0, imatrix ? imatrix + e * ne0 : NULL) == 0;
    ok = ok && memcmp(q, out->data, qbytes) == 0;
    free(f);
    free(q);
    return ok;
}

/* ------------------------------------------------ reference model runs */

static void test_requantize(void)
{
    if (!*g_mix)
        return;
    char in[600], out[300];
    mix_path(in, sizeof(in), "model-Q4_K_M.gguf");
    tmp_path(out, sizeof(out), "rq.gguf");
    mf_status st;
    mf_status_init(&st);
    mf_quantize_opts o;
    mf_quantize_opts_init(&o, MF_FTYPE_Q8_0);
    CHECK(mf_quantize_file(in, out, &o, NULL, NULL, NULL, &st) == -1);
    CHECKF(st.code == MF_ERR_UNSUPPORTED && strstr(st.msg, "already quantized") &&
               strstr(st.msg, "not a superset") && strstr(st.msg, "--allow-requantize"),
           "%s", st.msg);
    CHECK(access(out, F_OK) != 0); /* nothing written */
    mf_status_clear(&st);
    o.allow_requantize = true;
    mf_quantize_result r;
    CHECKF(mf_quantize_file(in, out, &o, NULL, NULL, &r, &st) == 0, "%s", st.msg);
    mf_model *a = NULL, *b = NULL;
    if (mf_open(in, NULL, &a, &st) == 0 && mf_open(out, NULL, &b, &st) == 0) {
        int good = 0, n = 0;
        for (size_t i = 0; i < b->n_tensors; i++) {
            const mf_tensor *tb = &b->tensors[i], *ta = mf_tensor_find(a, tb->name);
            if (!ta || ta->dtype == MF_F32)
                continue;
            n++;
            good += tb->dtype == MF_Q8_0 && direct_matches(ta, tb, NULL);
        }
        CHECKF(n == 58 && good == 58, "%d of %d requantized tensors as expected", good, n);
    }
    mf_close(a);
    mf_close(b);
    /* the same mix again: every tensor already has its type, all copied */
    mf_quantize_opts_init(&o, MF_FTYPE_Q4_K_M);
    o.allow_requantize = true;
    CHECKF(mf_quantize_file(in, out, &o, NULL, NULL, &r, &st) == 0, "%s", st.msg);
    CHECK(r.n_converted == 0 && r.n_tensors == 75);
    char h1[129], h2[129];
    if (mf_open(in, NULL, &a, &st) == 0 && mf_open(out, NULL, &b, &st) == 0) {
        mf_hash_tensor_content(a, MF_SHA256, h1, &st);
        mf_hash_tensor_content(b, MF_SHA256, h2, &st);
        CHECK(strcmp(h1, h2) == 0);
    }
    mf_close(a);
    mf_close(b);
    unlink(out);
    mf_status_clear(&st);
}

typedef struct dry_log {
    int n, converted, bad;
    double min_cos_q6, min_cos_q4;
    mf_quant_tensor_report q;  /* blk.0.attn_q.weight */
} dry_log;

static int on_dry(void *ctx, const mf_quant_tensor_report *r)
{
    dry_log *d = ctx;
    d->n++;
    if (!r->converted) {
        d->bad += r->rmse != 0 || r->dst != r->src;
        return 0;
    }
    d->converted++;
    d->bad += !(r->rmse > 0 && r->max_abs >= r->rmse && r->cosine <= 1.0000001);
    double *m = r->dst == MF_Q6_K ? &d->min_cos_q6 : r->dst == MF_Q4_K ? &d->min_cos_q4 : NULL;
    if (m && r->cosine < *m)
        *m = r->cosine;
    if (strcmp(r->name, "blk.0.attn_q.weight") == 0)
        d->q = *r;
    return 0;
}

static void test_dry_run(void)
{
    if (!*g_mix)
        return;
    char in[600], out[300];
    mix_path(in, sizeof(in), "model-F16.gguf");
    tmp_path(out, sizeof(out), "dry.gguf");
    mf_status st;
    mf_status_init(&st);
    mf_quantize_opts o;
    mf_quantize_opts_init(&o, MF_FTYPE_Q4_K_M);
    o.dry_run = true;
    dry_log d = {0, 0, 0, 2, 2, {0}};
    mf_quantize_result r;
    CHECKF(mf_quantize_file(in, out, &o, on_dry, &d, &r, &st) == 0, "%s", st.msg);
    CHECK(access(out, F_OK) != 0);
    /* the exact size of llama-quantize's file (quant-ref/mix/files.tsv) */
    CHECKF(r.out_file_bytes == 1983840, "%llu", (unsigned long long)r.out_file_bytes);
    CHECK(d.n == 75 && d.converted == 58 && d.bad == 0 && r.n_converted == 58);
    CHECK(fabs(r.bpw - 8.0 * (double)r.out_tensor_bytes / 3281152.0) < 1e-12);
    CHECKF(d.min_cos_q6 > 0.999 && d.min_cos_q4 > 0.99, "%g %g", d.min_cos_q6, d.min_cos_q4);
    /* the statistics of one tensor, recomputed here */
    mf_model *m;
    if (mf_open(in, NULL, &m, &st) == 0) {
        const mf_tensor *t = mf_tensor_find(m, "blk.0.attn_q.weight");
        size_t n = (size_t)mf_tensor_nelems(t);
        float *x = malloc(n * 4), *y = malloc(n * 4);
        uint8_t *q = malloc(n);
        mf_dequantize_row(MF_F16, t->data, x, (int64_t)n);
        mf_quantize_rows(MF_Q4_K, x, q, (int64_t)n / 256, 256, NULL);
        mf_dequantize_row(MF_Q4_K, q, y, (int64_t)n);
        double se = 0, mx = 0, xy = 0, xx = 0, yy = 0;
        for (size_t i = 0; i < n; i++) {
            double e = (double)x[i] - y[i];
            se += e * e;
            mx = fabs(e) > mx ? fabs(e) : mx;
            xy += (double)x[i] * y[i];
            xx += (double)x[i] * x[i];
            yy += (double)y[i] * y[i];
        }
        CHECK(d.q.dst == MF_Q4_K && fabs(d.q.rmse - sqrt(se / (double)n)) < 1e-12 &&
              d.q.max_abs == mx && fabs(d.q.cosine - xy / sqrt(xx * yy)) < 1e-12);
        free(x);
        free(y);
        free(q);
        mf_close(m);
    }
    /* with the imatrix the file grows by the provenance keys; run where
     * llama-quantize ran, so that quantize.imatrix.file is "imatrix.dat" */
    char cwd[4096];
    if (getcwd(cwd, sizeof(cwd)) && chdir(g_mix) == 0) {
        o.imatrix_path = "imatrix.dat";
        CHECKF(mf_quantize_file("model-F16.gguf", NULL, &o, NULL, NULL, &r, &st) == 0, "%s", st.msg);
        CHECKF(r.out_file_bytes == 1984064 && r.imatrix_entries == 57 && r.imatrix_used == 57,
               "%llu %zu %zu", (unsigned long long)r.out_file_bytes, r.imatrix_entries, r.imatrix_used);
        CHECK(chdir(cwd) == 0);
    }
    mf_status_clear(&st);
}

/* ------------------------------------------------ self-contained model */

enum { BIG_ROWS = 17000, NE0 = 256, EXPERTS = 4, EXP_ROWS = 64 };

typedef struct fixture {
    uint16_t *big;     /* F16 [BIG_ROWS, NE0]: more rows than one chunk */
    uint16_t *experts; /* BF16 [EXPERTS, EXP_ROWS, NE0] */
    float norm[NE0], out[32 * NE0], imat_exp[EXPERTS * NE0], imat_up[NE0];
} fixture;

static void write_dat(const char *path, const fixture *fx, int32_t n_exp_values)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return;
    int32_t n = 2, ncall = 1;
    fwrite(&n, 4, 1, f);
    const struct { const char *name; const float *v; int32_t n; } e[2] = {
        {"blk.0.ffn_down_exps.weight", fx->imat_exp, n_exp_values},
        {"blk.0.ffn_up.weight", fx->imat_up, NE0}};
    for (int i = 0; i < 2; i++) {
        int32_t len = (int32_t)strlen(e[i].name);
        fwrite(&len, 4, 1, f);
        fwrite(e[i].name, 1, (size_t)len, f);
        fwrite(&ncall, 4, 1, f);
        fwrite(&e[i].n, 4, 1, f);
        fwrite(e[i].v, 4, (size_t)e[i].n, f);
    }
    fclose(f);
}

static int make_fixture(fixture *fx, const char *path, const char *dat, mf_status *st)
{
    uint64_t s = 0x9e3779b97f4a7c15ull;
    fx->big = malloc((size_t)BIG_ROWS * NE0 * 2);
    fx->experts = malloc((size_t)EXPERTS * EXP_ROWS * NE0 * 2);
    if (!fx->big || !fx->experts)
        return -1;
    for (size_t i = 0; i < (size_t)BIG_ROWS * NE0; i++)
        fx->big[i] = mf_f32_to_f16(fx_rand(&s, 0.02f));
    for (size_t i = 0; i < (size_t)EXPERTS * EXP_ROWS * NE0; i++)
        fx->experts[i] = mf_f32_to_bf16(fx_rand(&s, 0.05f));
    for (int i = 0; i < NE0; i++)
        fx->norm[i] = 1 + fx_rand(&s, 0.1f);
    for (int i = 0; i < 32 * NE0; i++)
        fx->out[i] = fx_rand(&s, 0.02f);
    for (int i = 0; i < EXPERTS * NE0; i++)
        fx->imat_exp[i] = expf(fx_rand(&s, 1.5f));
    for (int i = 0; i < NE0; i++)
        fx->imat_up[i] = expf(fx_rand(&s, 1.0f));
    /* little-endian hosts: the arrays are the canonical bytes */
    fx_tensor ts[4] = {
        {"blk.0.ffn_up.weight", MF_F16, 2, {BIG_ROWS, NE0}, fx->big, (size_t)BIG_ROWS * NE0 * 2},
        {"blk.0.ffn_down_exps.weight", MF_BF16, 3, {EXPERTS, EXP_ROWS, NE0}, fx->experts,
         (size_t)EXPERTS * EXP_ROWS * NE0 * 2},
        {"blk.0.attn_norm.weight", MF_F32, 1, {NE0}, fx->norm, sizeof(fx->norm)},
        {"output.weight", MF_F32, 2, {32, NE0}, fx->out, sizeof(fx->out)}};
    mf_kv meta[5] = {fx_kv_str("general.architecture", "llama"), fx_kv_u32("llama.block_count", 1),
                     fx_kv_u32("llama.attention.head_count", 4),
                     fx_kv_u32("llama.attention.head_count_kv", 4),
                     fx_kv_u32("llama.expert_count", EXPERTS)};
    write_dat(dat, fx, EXPERTS * NE0);
    return fx_write_gguf(path, ts, 4, meta, 5, st);
}

/* Quantizes `in` to `out` and checks every converted tensor directly. */
static void run_and_verify(const char *in, const char *out, const mf_quantize_opts *o,
                           const char *what, const float *imat_exp, const float *imat_up)
{
    mf_status st;
    mf_status_init(&st);
    CHECKF(mf_quantize_file(in, out, o, NULL, NULL, NULL, &st) == 0, "%s: %s", what, st.msg);
    mf_model *a = NULL, *b = NULL;
    if (mf_open(in, NULL, &a, &st) == 0 && mf_open(out, NULL, &b, &st) == 0) {
        int conv = 0, good = 0;
        for (size_t i = 0; i < b->n_tensors; i++) {
            const mf_tensor *tb = &b->tensors[i], *ta = mf_tensor_find(a, tb->name);
            if (!ta || ta->dtype == tb->dtype)
                continue;
            conv++;
            const float *im = !o->imatrix_path ? NULL
                              : strcmp(tb->name, "blk.0.ffn_up.weight") == 0 ? imat_up
                              : strstr(tb->name, "exps") ? imat_exp : NULL;
            bool ok = direct_matches(ta, tb, im);
            good += ok;
            CHECKF(ok, "%s: %s (%s) differs from a direct quantization", what, tb->name,
                   mf_dtype_name(tb->dtype));
        }
        CHECKF(conv == 3, "%s: %d converted", what, conv);
        /* llama-quantize's order: output first, then layer 0 by name */
        CHECK(strcmp(b->tensors[0].name, "output.weight") == 0 &&
              strcmp(b->tensors[1].name, "blk.0.attn_norm.weight") == 0);
    }
    mf_close(a);
    mf_close(b);
    mf_status_clear(&st);
}

static void test_chunks_threads_experts(void)
{
    static fixture fx;
    char in[300], dat[300], o1[300], o2[300];
    tmp_path(in, sizeof(in), "fx.gguf");
    tmp_path(dat, sizeof(dat), "fx.dat");
    tmp_path(o1, sizeof(o1), "fx1.gguf");
    tmp_path(o2, sizeof(o2), "fx2.gguf");
    mf_status st;
    mf_status_init(&st);
    CHECKF(make_fixture(&fx, in, dat, &st) == 0, "%s", st.msg);
    mf_quantize_opts o;
    mf_quantize_opts_init(&o, MF_FTYPE_Q8_0);
    o.nthreads = 1;
    run_and_verify(in, o1, &o, "Q8_0 1 thread", NULL, NULL);
    o.nthreads = 2;
    run_and_verify(in, o2, &o, "Q8_0 2 threads", NULL, NULL);
    char h1[129] = "1", h2[129] = "2";
    mf_hash_file(o1, MF_SHA256, h1, &st);
    mf_hash_file(o2, MF_SHA256, h2, &st);
    CHECK(strcmp(h1, h2) == 0); /* the output does not depend on threads */
    /* experts, each with its slice of the importance vector */
    mf_quantize_opts_init(&o, MF_FTYPE_Q4_K_S);
    o.nthreads = 2;
    o.imatrix_path = dat;
    run_and_verify(in, o1, &o, "Q4_K_S imatrix", fx.imat_exp, fx.imat_up);
    /* an imatrix entry of the wrong size stops the run */
    write_dat(dat, &fx, NE0); /* one matrix's worth for four experts */
    CHECK(mf_quantize_file(in, o1, &o, NULL, NULL, NULL, &st) == -1 &&
          strstr(st.msg, "has 256 values, the tensor needs 1024"));
    mf_status_clear(&st);
    free(fx.big);
    free(fx.experts);
    unlink(in);
    unlink(dat);
    unlink(o1);
    unlink(o2);
}

static int on_nonfinite(void *ctx, const mf_quant_tensor_report *r)
{
    *(bool *)ctx |= r->nonfinite;
    return 0;
}

/* The low-bit mixes end to end on a small model: each tensor's bytes are
 * its type's quantizer with its importance vector. */
enum { LB_LAYERS = 2, LB_ROWS = 16, LB_TENSORS = 2 + 7 * LB_LAYERS };

static void test_low_bit_mixes(void)
{
    static const char *const kinds[7] = {"attn_q", "attn_k", "attn_v", "attn_output",
                                         "ffn_gate", "ffn_up", "ffn_down"};
    static char names[LB_TENSORS][64];
    static uint16_t data[LB_TENSORS][LB_ROWS * NE0];
    static float imat[LB_TENSORS][NE0];
    fx_tensor ts[LB_TENSORS];
    uint64_t s = 77;
    for (int i = 0; i < LB_TENSORS; i++) {
        if (i == 0)
            snprintf(names[i], 64, "token_embd.weight");
        else if (i == 1)
            snprintf(names[i], 64, "output.weight");
        else
            snprintf(names[i], 64, "blk.%d.%s.weight", (i - 2) / 7, kinds[(i - 2) % 7]);
        for (int k = 0; k < LB_ROWS * NE0; k++)
            data[i][k] = mf_f32_to_f16(fx_rand(&s, 0.02f));
        for (int k = 0; k < NE0; k++)
            imat[i][k] = expf(fx_rand(&s, 1.0f));
        ts[i] = (fx_tensor){names[i], MF_F16, 2, {LB_ROWS, NE0}, data[i], sizeof(data[i])};
    }
    char in[300], dat[300], out[300];
    tmp_path(in, sizeof(in), "lb.gguf");
    tmp_path(dat, sizeof(dat), "lb.dat");
    tmp_path(out, sizeof(out), "lb-q.gguf");
    mf_kv meta[4] = {fx_kv_str("general.architecture", "llama"),
                     fx_kv_u32("llama.block_count", LB_LAYERS),
                     fx_kv_u32("llama.attention.head_count", 4),
                     fx_kv_u32("llama.attention.head_count_kv", 4)};
    mf_status st;
    mf_status_init(&st);
    CHECK(fx_write_gguf(in, ts, LB_TENSORS, meta, 4, &st) == 0);
    FILE *f = fopen(dat, "wb");
    int32_t n = LB_TENSORS - 1, one = 1, nv = NE0;
    fwrite(&n, 4, 1, f);
    for (int i = 1; i < LB_TENSORS; i++) { /* llama-imatrix never records token_embd */
        int32_t len = (int32_t)strlen(names[i]);
        fwrite(&len, 4, 1, f);
        fwrite(names[i], 1, (size_t)len, f);
        fwrite(&one, 4, 1, f);
        fwrite(&nv, 4, 1, f);
        fwrite(imat[i], 4, NE0, f);
    }
    fclose(f);
    static const mf_ftype mixes[] = {MF_FTYPE_IQ2_XXS, MF_FTYPE_IQ2_M, MF_FTYPE_IQ3_XS,
                                     MF_FTYPE_IQ1_M, MF_FTYPE_TQ2_0};
    for (size_t k = 0; k < sizeof(mixes) / sizeof(mixes[0]); k++) {
        mf_quantize_opts o;
        mf_quantize_opts_init(&o, mixes[k]);
        o.imatrix_path = dat;
        o.nthreads = 2;
        if (mf_quantize_file(in, out, &o, NULL, NULL, NULL, &st) != 0) {
            /* only acceptable while the kernels lack a type */
            CHECKF(strstr(st.msg, "cannot quantize to"), "%s: %s", mf_ftype_name(mixes[k]), st.msg);
            printf("skip %s: %s\n", mf_ftype_name(mixes[k]), st.msg);
            mf_status_clear(&st);
            continue;
        }
        mf_model *a = NULL, *b = NULL;
        int good = 0;
        if (mf_open(in, NULL, &a, &st) == 0 && mf_open(out, NULL, &b, &st) == 0)
            for (int i = 0; i < LB_TENSORS; i++) {
                const mf_tensor *tb = mf_tensor_find(b, names[i]);
                bool ok = tb && direct_matches(mf_tensor_find(a, names[i]), tb, i ? imat[i] : NULL);
                good += ok;
                CHECKF(ok, "%s: %s (%s)", mf_ftype_name(mixes[k]), names[i],
                       tb ? mf_dtype_name(tb->dtype) : "missing");
            }
        CHECK(good == LB_TENSORS);
        mf_close(a);
        mf_close(b);
    }
    unlink(in);
    unlink(dat);
    unlink(out);
    mf_status_clear(&st);
}

static void test_errors(void)
{
    mf_status st;
    mf_status_init(&st);
    char in[300], st_path[300];
    tmp_path(in, sizeof(in), "small.gguf");
    tmp_path(st_path, sizeof(st_path), "small.safetensors");
    float w[4 * 256];
    for (int i = 0; i < 4 * 256; i++)
        w[i] = (float)(i % 17) * 0.01f;
    fx_tensor t = {"blk.0.attn_q.weight", MF_F32, 2, {4, 256}, w, sizeof(w)};
    mf_kv meta[2] = {fx_kv_str("general.architecture", "llama"), fx_kv_u32("llama.block_count", 1)};
    CHECK(fx_write_gguf(in, &t, 1, meta, 2, &st) == 0);
    mf_quantize_opts o;
    mf_quantize_opts_init(&o, MF_FTYPE_Q4_K_M);
    /* the output is the input */
    CHECK(mf_quantize_file(in, in, &o, NULL, NULL, NULL, &st) == -1 && strstr(st.msg, "input"));
    mf_status_clear(&st);
    /* not a GGUF */
    mf_out_tensor ot = {"w", MF_F32, 2, {4, 256}};
    CHECK(mf_safetensors_write(st_path, &ot, 1, NULL, 0, fx_fill, &t, &st) == 0);
    CHECK(mf_quantize_file(st_path, NULL, &(mf_quantize_opts){.struct_size = sizeof(mf_quantize_opts), .ftype = MF_FTYPE_Q8_0, .dry_run = true,
                                                              .output_type = MF_DTYPE_INVALID,
                                                              .token_embd_type = MF_DTYPE_INVALID},
                           NULL, NULL, NULL, &st) == -1 &&
          strstr(st.msg, "GGUF"));
    mf_status_clear(&st);
    /* missing input */
    CHECK(mf_quantize_file("/nonexistent/x.gguf", NULL, &o, NULL, NULL, NULL, &st) == -1);
    mf_status_clear(&st);
    /* the lowest-bit mixes need an importance matrix */
    mf_quantize_opts_init(&o, MF_FTYPE_IQ2_XXS);
    o.dry_run = true;
    CHECK(mf_quantize_file(in, NULL, &o, NULL, NULL, NULL, &st) == -1 &&
          strstr(st.msg, "importance matrix"));
    mf_status_clear(&st);
    /* a type the kernels cannot produce (yet) is named before anything is written */
    if (!mf_can_quantize(MF_IQ3_S)) {
        mf_quantize_opts_init(&o, MF_FTYPE_IQ3_S);
        o.dry_run = true;
        CHECK(mf_quantize_file(in, NULL, &o, NULL, NULL, NULL, &st) == -1 &&
              strstr(st.msg, "cannot quantize to IQ3_S"));
        mf_status_clear(&st);
    }
    /* F16 "mix" of an F32 tensor: a plain conversion */
    mf_quantize_opts_init(&o, MF_FTYPE_F16);
    o.dry_run = true;
    mf_quantize_result r;
    CHECK(mf_quantize_file(in, NULL, &o, NULL, NULL, &r, &st) == 0 && r.n_converted == 1 &&
          r.out_tensor_bytes == 4 * 256 * 2);
    /* output holding NaN/inf is refused (ggml_validate_row_data), named by
     * tensor and row; a dry run reports it instead */
    w[2 * 256 + 7] = 1e6f; /* row 2: beyond F16's range */
    CHECK(fx_write_gguf(in, &t, 1, meta, 2, &st) == 0);
    char out[300];
    tmp_path(out, sizeof(out), "nan.gguf");
    mf_quantize_opts_init(&o, MF_FTYPE_F16);
    CHECK(mf_quantize_file(in, out, &o, NULL, NULL, NULL, &st) == -1 && strstr(st.msg, "row 2") &&
          strstr(st.msg, "validation failed") && access(out, F_OK) != 0);
    mf_status_clear(&st);
    w[2 * 256 + 7] = INFINITY;
    CHECK(fx_write_gguf(in, &t, 1, meta, 2, &st) == 0);
    mf_quantize_opts_init(&o, MF_FTYPE_Q8_0);
    CHECK(mf_quantize_file(in, out, &o, NULL, NULL, NULL, &st) == -1 && strstr(st.msg, "row 2"));
    mf_status_clear(&st);
    o.dry_run = true;
    bool nonfinite = false;
    CHECK(mf_quantize_file(in, NULL, &o, on_nonfinite, &nonfinite, NULL, &st) == 0 && nonfinite);
    unlink(in);
    unlink(st_path);
    mf_status_clear(&st);
}

int main(void)
{
    if (!mkdtemp(g_tmp)) {
        CHECK(0);
        return tl_report("quantize");
    }
    const char *shared = tl_shared_dir();
    if (shared)
        snprintf(g_mix, sizeof(g_mix), "%s/quant-ref/mix", shared);
    test_requantize();
    test_dry_run();
    test_chunks_threads_experts();
    test_low_bit_mixes();
    test_errors();
    rmdir(g_tmp);
    return tl_report("quantize");
}
