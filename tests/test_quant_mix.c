/* test_quant_mix.c - llama-quantize's per-tensor rules (lib/ops/quant_mix.c)
 * on synthetic models of many layer counts, and the whole quantize driver
 * against ../shared/quant-ref/mix: every tensor's type and sha256 as in
 * expected.tsv, whole files as in files.tsv. */
#include "testlib.h"

#include "ops/quant_mix.h"
#include "ops/quantize.h"

#include <limits.h>
#include <unistd.h>

/* ------------------------------------------------ synthetic models */

typedef struct syn {
    char name[64];
    int64_t ne[4];
    mf_dtype src, got;
    bool fallback;
} syn;

typedef struct model {
    syn t[1024];
    size_t n;
    mf_qmix_hparams h;
} model;

static void add(model *m, const char *name, int64_t ne0, int64_t ne1, int64_t ne2, mf_dtype src)
{
    syn *s = &m->t[m->n++];
    snprintf(s->name, sizeof(s->name), "%s", name);
    s->ne[0] = ne0;
    s->ne[1] = ne1;
    s->ne[2] = ne2;
    s->ne[3] = 1;
    s->src = src;
}

/* A llama-style model, tensors listed in the order convert scripts write
 * them (token_embd, layers, output_norm, output), which is NOT the order the
 * rules must see them in. */
static void make_llama(model *m, int n_layer, int64_t n_embd, int64_t n_ff, int n_head,
                       int n_head_kv, bool with_output)
{
    memset(m, 0, sizeof(*m));
    m->h = (mf_qmix_hparams){"llama", n_layer, n_head, n_head_kv, 0};
    int64_t kv = n_embd / n_head * n_head_kv;
    add(m, "token_embd.weight", n_embd, 1000, 1, MF_F16);
    /* layers in reverse, so that only the planner's sort puts them right */
    for (int l = n_layer - 1; l >= 0; l--) {
        char b[64];
#define T(suffix, a, c, dt) (snprintf(b, sizeof(b), "blk.%d." suffix, l), add(m, b, a, c, 1, dt))
        T("attn_norm.weight", n_embd, 1, MF_F32);
        T("attn_q.weight", n_embd, n_embd, MF_F16);
        T("attn_k.weight", n_embd, kv, MF_F16);
        T("attn_v.weight", n_embd, kv, MF_F16);
        T("attn_output.weight", n_embd, n_embd, MF_F16);
        T("ffn_norm.weight", n_embd, 1, MF_F32);
        T("ffn_gate.weight", n_embd, n_ff, MF_F16);
        T("ffn_up.weight", n_embd, n_ff, MF_F16);
        T("ffn_down.weight", n_ff, n_embd, MF_F16);
#undef T
    }
    add(m, "output_norm.weight", n_embd, 1, 1, MF_F32);
    if (with_output)
        add(m, "output.weight", n_embd, 1000, 1, MF_F16);
}

static int cmp_syn(const void *a, const void *b)
{
    return mf_qmix_name_cmp(((const syn *)a)->name, ((const syn *)b)->name);
}

/* Runs the rules as the quantize driver does; returns 0 or -1 (st set). */
static int plan(model *m, const mf_qmix_params *p, mf_status *st, int *n_fallback)
{
    mf_qmix q;
    mf_qmix_init(&q, p, &m->h);
    for (size_t i = 0; i < m->n; i++)
        mf_qmix_count(&q, m->t[i].name);
    qsort(m->t, m->n, sizeof(syn), cmp_syn);
    for (size_t i = 0; i < m->n; i++) {
        m->t[i].got = mf_qmix_choose(&q, m->t[i].name, m->t[i].ne, m->t[i].src, &m->t[i].fallback, st);
        if (m->t[i].got == MF_DTYPE_INVALID)
            return -1;
    }
    if (n_fallback)
        *n_fallback = q.n_fallback;
    return 0;
}

static mf_dtype type_of(const model *m, const char *fmt, int layer)
{
    char name[64];
    snprintf(name, sizeof(name), fmt, layer);
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->t[i].name, name) == 0)
            return m->t[i].got;
    return MF_DTYPE_INVALID;
}

/* "0-3,6,9" -> membership of layer i */
static bool in_list(const char *list, int i)
{
    const char *p = list;
    while (*p) {
        char *end;
        long a = strtol(p, &end, 10), b = a;
        if (*end == '-')
            b = strtol(end + 1, &end, 10);
        if (i >= a && i <= b)
            return true;
        p = *end == ',' ? end + 1 : end;
    }
    return false;
}

static void plan_ok(model *m, mf_ftype f, bool imatrix)
{
    mf_qmix_params p;
    mf_qmix_params_init(&p, f);
    p.has_imatrix = imatrix;
    mf_status st;
    mf_status_init(&st);
    CHECKF(plan(m, &p, &st, NULL) == 0, "%s", st.msg);
    mf_status_clear(&st);
}

/* For every layer: tensor `fmt` has type `hi` in the listed layers, else `lo`. */
static void expect_layers(const model *m, const char *what, const char *fmt, const char *list,
                          mf_dtype hi, mf_dtype lo)
{
    for (int l = 0; l < m->h.n_layer; l++) {
        mf_dtype want = in_list(list, l) ? hi : lo, got = type_of(m, fmt, l);
        CHECKF(got == want, "%s, n_layer %d, layer %d, %s: got %s, want %s", what, m->h.n_layer, l,
               fmt, mf_dtype_name(got), mf_dtype_name(want));
    }
}

static void expect_all(const model *m, const char *what, const char *fmt, mf_dtype want)
{
    expect_layers(m, what, fmt, "", want, want);
}

/* The "use more bits" layers, worked out by hand from
 * i < n/8 || i >= 7n/8 || (i - n/8) % 3 == 2 (integer division). */
static const struct { int n_layer; const char *more; } more_bits[] = {
    {1, "0"},
    {2, "1"},                 /* 7*2/8 = 1 */
    {4, "2-3"},               /* 7*4/8 = 3; (2-0)%3 == 2 */
    {8, "0,3,6-7"},           /* the reference model: layers 0, 3, 6, 7 */
    {12, "0,3,6,9-11"},
    {16, "0-1,4,7,10,13-15"}, /* 16/8 = 2, 7*16/8 = 14 */
    {32, "0-3,6,9,12,15,18,21,24,27-31"},
    {40, "0-4,7,10,13,16,19,22,25,28,31,34-39"},
    {80, "0-9,12,15,18,21,24,27,30,33,36,39,42,45,48,51,54,57,60,63,66,69-79"},
};

static void test_k_m_mixes(void)
{
    static model m;
    /* no grouped-query attention here: with it, 80 llama layers would be
     * llama.cpp's "70B", which has a rule of its own (test_gqa_and_70b) */
    for (size_t k = 0; k < sizeof(more_bits) / sizeof(more_bits[0]); k++) {
        int L = more_bits[k].n_layer;
        const char *more = more_bits[k].more;
        make_llama(&m, L, 256, 512, 4, 4, true);
        plan_ok(&m, MF_FTYPE_Q4_K_M, false);
        expect_layers(&m, "Q4_K_M", "blk.%d.attn_v.weight", more, MF_Q6_K, MF_Q4_K);
        expect_layers(&m, "Q4_K_M", "blk.%d.ffn_down.weight", more, MF_Q6_K, MF_Q4_K);
        expect_all(&m, "Q4_K_M", "blk.%d.attn_q.weight", MF_Q4_K);
        expect_all(&m, "Q4_K_M", "blk.%d.ffn_up.weight", MF_Q4_K);
        expect_all(&m, "Q4_K_M", "blk.%d.attn_norm.weight", MF_F32);
        CHECK(type_of(&m, "output.weight", 0) == MF_Q6_K);
        CHECK(type_of(&m, "token_embd.weight", 0) == MF_Q4_K);
        CHECK(type_of(&m, "output_norm.weight", 0) == MF_F32);

        make_llama(&m, L, 256, 512, 4, 4, true);
        plan_ok(&m, MF_FTYPE_Q5_K_M, false);
        expect_layers(&m, "Q5_K_M", "blk.%d.attn_v.weight", more, MF_Q6_K, MF_Q5_K);
        expect_layers(&m, "Q5_K_M", "blk.%d.ffn_down.weight", more, MF_Q6_K, MF_Q5_K);
        expect_all(&m, "Q5_K_M", "blk.%d.attn_k.weight", MF_Q5_K);

        /* Q3_K_M: attn_v Q5_K for the first two, ffn_down Q5_K below n/16 */
        make_llama(&m, L, 256, 512, 4, 4, true);
        plan_ok(&m, MF_FTYPE_Q3_K_M, false);
        expect_layers(&m, "Q3_K_M", "blk.%d.attn_v.weight", "0-1", MF_Q5_K, MF_Q4_K);
        char sixteenth[16];
        snprintf(sixteenth, sizeof(sixteenth), L / 16 ? "0-%d" : "", L / 16 - 1);
        expect_layers(&m, "Q3_K_M", "blk.%d.ffn_down.weight", sixteenth, MF_Q5_K, MF_Q4_K);
        expect_all(&m, "Q3_K_M", "blk.%d.attn_output.weight", MF_Q4_K);
        expect_all(&m, "Q3_K_M", "blk.%d.ffn_gate.weight", MF_Q3_K);

        /* Q4_K_S: attn_v Q5_K for the first four, ffn_down Q5_K below n/8 */
        make_llama(&m, L, 256, 512, 4, 4, true);
        plan_ok(&m, MF_FTYPE_Q4_K_S, false);
        expect_layers(&m, "Q4_K_S", "blk.%d.attn_v.weight", "0-3", MF_Q5_K, MF_Q4_K);
        char eighth[16];
        snprintf(eighth, sizeof(eighth), L / 8 ? "0-%d" : "", L / 8 - 1);
        expect_layers(&m, "Q4_K_S", "blk.%d.ffn_down.weight", eighth, MF_Q5_K, MF_Q4_K);

        /* IQ4_NL / IQ4_XS: ffn_down Q5_K below n/8 without an imatrix only */
        make_llama(&m, L, 256, 512, 4, 4, true);
        plan_ok(&m, MF_FTYPE_IQ4_XS, false);
        expect_layers(&m, "IQ4_XS", "blk.%d.ffn_down.weight", eighth, MF_Q5_K, MF_IQ4_XS);
        expect_all(&m, "IQ4_XS", "blk.%d.attn_v.weight", MF_IQ4_XS); /* gqa 2 < 4 */
        make_llama(&m, L, 256, 512, 4, 4, true);
        plan_ok(&m, MF_FTYPE_IQ4_XS, true);
        expect_all(&m, "IQ4_XS+imatrix", "blk.%d.ffn_down.weight", MF_IQ4_XS);

        /* Q4_0 with an imatrix guards the first eighth of ffn_down with Q4_1 */
        make_llama(&m, L, 256, 512, 4, 4, true);
        plan_ok(&m, MF_FTYPE_Q4_0, true);
        expect_layers(&m, "Q4_0+imatrix", "blk.%d.ffn_down.weight", eighth, MF_Q4_1, MF_Q4_0);
        make_llama(&m, L, 256, 512, 4, 4, true);
        plan_ok(&m, MF_FTYPE_Q5_0, false);
        expect_all(&m, "Q5_0", "blk.%d.ffn_down.weight", MF_Q5_0);
        CHECK(type_of(&m, "output.weight", 0) == MF_Q6_K);
    }
}

static void test_gqa_and_70b(void)
{
    static model m;
    /* Q2_K: attn_v Q3_K, or Q4_K with grouped-query attention >= 4 */
    make_llama(&m, 8, 256, 512, 4, 2, true);
    plan_ok(&m, MF_FTYPE_Q2_K, false);
    expect_all(&m, "Q2_K gqa2", "blk.%d.attn_v.weight", MF_Q3_K);
    expect_all(&m, "Q2_K", "blk.%d.ffn_down.weight", MF_Q3_K);
    expect_all(&m, "Q2_K", "blk.%d.attn_output.weight", MF_Q3_K);
    expect_all(&m, "Q2_K", "blk.%d.ffn_up.weight", MF_Q2_K);
    make_llama(&m, 8, 256, 512, 8, 2, true);
    plan_ok(&m, MF_FTYPE_Q2_K, false);
    expect_all(&m, "Q2_K gqa4", "blk.%d.attn_v.weight", MF_Q4_K);
    make_llama(&m, 8, 256, 512, 8, 2, true);
    plan_ok(&m, MF_FTYPE_IQ4_NL, false);
    expect_all(&m, "IQ4_NL gqa4", "blk.%d.attn_v.weight", MF_Q5_K);

    /* 80 layers with GQA is llama.cpp's "70B": attn_v Q3_K/Q4_K become Q5_K */
    make_llama(&m, 80, 256, 256, 8, 1, true);
    plan_ok(&m, MF_FTYPE_Q4_K_M, false);
    expect_layers(&m, "Q4_K_M 70B", "blk.%d.attn_v.weight", more_bits[8].more, MF_Q6_K, MF_Q5_K);
    expect_layers(&m, "Q4_K_M 70B", "blk.%d.ffn_down.weight", more_bits[8].more, MF_Q6_K, MF_Q4_K);
    make_llama(&m, 80, 256, 256, 8, 1, true);
    plan_ok(&m, MF_FTYPE_Q3_K_S, false);
    expect_all(&m, "Q3_K_S 70B", "blk.%d.attn_v.weight", MF_Q5_K);
    /* without GQA it is the "65B", no bump */
    make_llama(&m, 80, 256, 256, 8, 8, true);
    plan_ok(&m, MF_FTYPE_Q3_K_S, false);
    expect_all(&m, "Q3_K_S 65B", "blk.%d.attn_v.weight", MF_Q3_K);
    /* falcon: Q4_K_M ffn_down Q6_K below n/16, Q5_K where more bits, else Q4_K */
    make_llama(&m, 32, 256, 512, 4, 2, true);
    m.h.arch = "falcon";
    plan_ok(&m, MF_FTYPE_Q4_K_M, false);
    for (int l = 0; l < 32; l++)
        CHECKF(type_of(&m, "blk.%d.ffn_down.weight", l) ==
                   (l < 2 ? MF_Q6_K : in_list(more_bits[6].more, l) ? MF_Q5_K : MF_Q4_K),
               "falcon layer %d", l);
    CHECK(type_of(&m, "output.weight", 0) == MF_Q8_0); /* falcon's output is Q8_0 */
}

static void test_low_bit_mixes(void)
{
    static model m;
    make_llama(&m, 16, 256, 512, 4, 2, true);
    plan_ok(&m, MF_FTYPE_IQ2_XXS, true);
    CHECK(type_of(&m, "token_embd.weight", 0) == MF_Q2_K);
    CHECK(type_of(&m, "output.weight", 0) == MF_Q5_K);
    expect_all(&m, "IQ2_XXS", "blk.%d.attn_v.weight", MF_Q2_K);
    expect_layers(&m, "IQ2_XXS", "blk.%d.ffn_down.weight", "0-1", MF_Q2_K, MF_IQ2_XXS);
    expect_all(&m, "IQ2_XXS", "blk.%d.attn_output.weight", MF_IQ2_XXS);
    make_llama(&m, 16, 256, 512, 4, 2, true);
    plan_ok(&m, MF_FTYPE_IQ2_M, true);
    CHECK(type_of(&m, "token_embd.weight", 0) == MF_IQ3_S);
    expect_all(&m, "IQ2_M", "blk.%d.attn_v.weight", MF_IQ3_S);
    expect_all(&m, "IQ2_M", "blk.%d.attn_output.weight", MF_IQ3_S);
    expect_all(&m, "IQ2_M", "blk.%d.attn_q.weight", MF_IQ2_S);
    make_llama(&m, 16, 256, 512, 4, 2, true);
    plan_ok(&m, MF_FTYPE_IQ1_S, true);
    expect_all(&m, "IQ1_S", "blk.%d.attn_output.weight", MF_IQ2_XXS);
    /* IQ3_XS: ffn_gate/up IQ3_XXS in the middle layers, attn_q/k IQ3_XXS */
    make_llama(&m, 16, 256, 512, 4, 2, true);
    plan_ok(&m, MF_FTYPE_IQ3_XS, true);
    expect_layers(&m, "IQ3_XS", "blk.%d.ffn_gate.weight", "2-13", MF_IQ3_XXS, MF_IQ3_S);
    expect_layers(&m, "IQ3_XS", "blk.%d.ffn_up.weight", "2-13", MF_IQ3_XXS, MF_IQ3_S);
    expect_all(&m, "IQ3_XS", "blk.%d.attn_k.weight", MF_IQ3_XXS);
    /* IQ3_XXS: attn_v IQ3_S without imatrix, IQ3_XXS with */
    make_llama(&m, 16, 256, 512, 4, 2, true);
    plan_ok(&m, MF_FTYPE_IQ3_XXS, false);
    expect_all(&m, "IQ3_XXS", "blk.%d.attn_v.weight", MF_IQ3_S);
    expect_layers(&m, "IQ3_XXS", "blk.%d.ffn_down.weight", "0-1", MF_Q4_K, MF_Q3_K);
    make_llama(&m, 16, 256, 512, 4, 2, true);
    plan_ok(&m, MF_FTYPE_IQ3_XXS, true);
    expect_all(&m, "IQ3_XXS+imatrix", "blk.%d.attn_v.weight", MF_IQ3_XXS);
    expect_all(&m, "IQ3_XXS+imatrix", "blk.%d.ffn_down.weight", MF_IQ3_XXS);
    /* TQ mixes keep token_embd at Q4_K */
    make_llama(&m, 4, 256, 512, 4, 2, true);
    plan_ok(&m, MF_FTYPE_TQ1_0, false);
    CHECK(type_of(&m, "token_embd.weight", 0) == MF_Q4_K);
    expect_all(&m, "TQ1_0", "blk.%d.ffn_down.weight", MF_TQ1_0);
}

/* Mixtral-style experts: the layer comes from the name, not a count. */
static void test_moe(void)
{
    static model m;
    memset(&m, 0, sizeof(m));
    m.h = (mf_qmix_hparams){"llama", 8, 8, 2, 8};
    add(&m, "token_embd.weight", 256, 1000, 1, MF_F16);
    add(&m, "output.weight", 256, 1000, 1, MF_F16);
    for (int l = 0; l < 8; l++) {
        char b[64];
        snprintf(b, sizeof(b), "blk.%d.ffn_down_exps.weight", l);
        add(&m, b, 512, 256, 8, MF_F16);
        snprintf(b, sizeof(b), "blk.%d.ffn_gate_exps.weight", l);
        add(&m, b, 256, 512, 8, MF_F16);
        snprintf(b, sizeof(b), "blk.%d.ffn_gate_inp.weight", l);
        add(&m, b, 256, 8, 1, MF_F32);
        snprintf(b, sizeof(b), "blk.%d.attn_v.weight", l);
        add(&m, b, 256, 64, 1, MF_F16);
        snprintf(b, sizeof(b), "blk.%d.attn_k.weight", l);
        add(&m, b, 256, 64, 1, MF_F16);
        snprintf(b, sizeof(b), "blk.%d.attn_output.weight", l);
        add(&m, b, 256, 256, 1, MF_F16);
    }
    plan_ok(&m, MF_FTYPE_Q4_K_M, false);
    expect_all(&m, "MoE", "blk.%d.attn_v.weight", MF_Q8_0);
    expect_all(&m, "MoE", "blk.%d.attn_k.weight", MF_Q8_0);
    expect_all(&m, "MoE", "blk.%d.attn_output.weight", MF_Q5_K);
    expect_all(&m, "MoE", "blk.%d.ffn_gate_inp.weight", MF_F32);
    expect_layers(&m, "MoE", "blk.%d.ffn_down_exps.weight", more_bits[3].more, MF_Q6_K, MF_Q4_K);

    /* an expert tensor outside blk.N, or past n_layer, stops the run */
    mf_qmix_params p;
    mf_qmix_params_init(&p, MF_FTYPE_Q4_K_M);
    mf_status st;
    mf_status_init(&st);
    add(&m, "blk.8.ffn_down_exps.weight", 512, 256, 8, MF_F16);
    CHECK(plan(&m, &p, &st, NULL) == -1 && strstr(st.msg, "bad layer 8"));
    mf_status_clear(&st);
    m.n--;
    add(&m, "extra.ffn_down.weight", 512, 256, 1, MF_F16);
    CHECK(plan(&m, &p, &st, NULL) == -1 && strstr(st.msg, "failed to determine the layer"));
    mf_status_clear(&st);
}

static void test_fallbacks(void)
{
    static model m;
    mf_qmix_params p;
    mf_status st;
    mf_status_init(&st);
    int nf = 0;
    /* rows of 96: K types fall back to 32-blocks; output takes Q8_0 */
    make_llama(&m, 8, 96, 256, 4, 2, true);
    mf_qmix_params_init(&p, MF_FTYPE_Q4_K_M);
    CHECK(plan(&m, &p, &st, &nf) == 0);
    expect_all(&m, "rows 96", "blk.%d.attn_q.weight", MF_Q5_0);
    expect_layers(&m, "rows 96", "blk.%d.attn_v.weight", more_bits[3].more, MF_Q8_0, MF_Q5_0);
    expect_layers(&m, "rows 256", "blk.%d.ffn_down.weight", more_bits[3].more, MF_Q6_K, MF_Q4_K);
    CHECK(type_of(&m, "output.weight", 0) == MF_Q8_0);
    CHECK(type_of(&m, "token_embd.weight", 0) == MF_Q5_0);
    /* per layer: q, k, v, output, gate, up fall back; token_embd too */
    CHECKF(nf == 8 * 6 + 1, "fallbacks %d", nf);
    make_llama(&m, 8, 96, 256, 4, 2, true);
    mf_qmix_params_init(&p, MF_FTYPE_Q3_K_S);
    CHECK(plan(&m, &p, &st, NULL) == 0);
    expect_all(&m, "Q3_K rows 96", "blk.%d.attn_q.weight", MF_IQ4_NL);
    make_llama(&m, 8, 96, 256, 4, 2, true);
    mf_qmix_params_init(&p, MF_FTYPE_Q5_K_S);
    CHECK(plan(&m, &p, &st, NULL) == 0);
    expect_all(&m, "Q5_K rows 96", "blk.%d.attn_q.weight", MF_Q5_1);
    /* rows of 100 fit no block: F16 ... */
    make_llama(&m, 8, 100, 256, 4, 2, true);
    mf_qmix_params_init(&p, MF_FTYPE_Q4_K_M);
    p.leave_output = true;
    CHECK(plan(&m, &p, &st, NULL) == 0);
    expect_all(&m, "rows 100", "blk.%d.attn_q.weight", MF_F16);
    CHECK(type_of(&m, "token_embd.weight", 0) == MF_F16);
    /* ... except for the output, whose rule picks Q8_0, which has no
     * fallback: llama-quantize stops there too */
    make_llama(&m, 8, 100, 256, 4, 2, true);
    mf_qmix_params_init(&p, MF_FTYPE_Q4_K_M);
    CHECK(plan(&m, &p, &st, NULL) == -1 && strstr(st.msg, "output.weight"));
    mf_status_clear(&st);
    /* plain 32-block mixes have no fallback, as in llama-quantize */
    make_llama(&m, 8, 100, 256, 4, 2, true);
    mf_qmix_params_init(&p, MF_FTYPE_Q4_0);
    CHECK(plan(&m, &p, &st, NULL) == -1 && strstr(st.msg, "no fallback"));
    mf_status_clear(&st);
    /* --pure with rows 96: mfmt falls back instead of failing */
    make_llama(&m, 8, 96, 256, 4, 2, true);
    mf_qmix_params_init(&p, MF_FTYPE_Q4_K_M);
    p.pure = true;
    CHECK(plan(&m, &p, &st, NULL) == 0);
    expect_all(&m, "pure rows 96", "blk.%d.attn_v.weight", MF_Q5_0);
    expect_all(&m, "pure rows 96", "blk.%d.ffn_down.weight", MF_Q4_K);
    mf_status_clear(&st);
}

static void test_options(void)
{
    static model m;
    mf_qmix_params p;
    mf_status st;
    mf_status_init(&st);
    /* --pure: one type for every quantized tensor, output included */
    make_llama(&m, 8, 256, 256, 4, 2, true);
    mf_qmix_params_init(&p, MF_FTYPE_Q4_K_M);
    p.pure = true;
    CHECK(plan(&m, &p, &st, NULL) == 0);
    expect_all(&m, "pure", "blk.%d.attn_v.weight", MF_Q4_K);
    expect_all(&m, "pure", "blk.%d.ffn_norm.weight", MF_F32);
    CHECK(type_of(&m, "output.weight", 0) == MF_Q4_K);
    CHECK(type_of(&m, "token_embd.weight", 0) == MF_Q4_K);
    /* overrides; an override equal to the source means a plain copy */
    make_llama(&m, 8, 256, 256, 4, 2, true);
    mf_qmix_params_init(&p, MF_FTYPE_Q4_K_M);
    p.output_type = MF_F16;
    p.token_embd_type = MF_Q8_0;
    CHECK(plan(&m, &p, &st, NULL) == 0);
    CHECK(type_of(&m, "output.weight", 0) == MF_F16);
    CHECK(type_of(&m, "token_embd.weight", 0) == MF_Q8_0);
    /* --leave-output-tensor */
    make_llama(&m, 8, 256, 256, 4, 2, true);
    mf_qmix_params_init(&p, MF_FTYPE_Q4_K_M);
    p.leave_output = true;
    CHECK(plan(&m, &p, &st, NULL) == 0);
    CHECK(type_of(&m, "output.weight", 0) == MF_F16);
    /* tied embeddings (no output.weight): token_embd takes output's rule */
    make_llama(&m, 8, 256, 256, 4, 2, false);
    mf_qmix_params_init(&p, MF_FTYPE_Q4_K_M);
    CHECK(plan(&m, &p, &st, NULL) == 0);
    CHECK(type_of(&m, "token_embd.weight", 0) == MF_Q6_K);
    make_llama(&m, 8, 256, 256, 4, 2, false);
    mf_qmix_params_init(&p, MF_FTYPE_Q4_K_M);
    p.output_type = MF_Q8_0;
    CHECK(plan(&m, &p, &st, NULL) == 0);
    CHECK(type_of(&m, "token_embd.weight", 0) == MF_Q8_0);
    /* F16 / F32 "mixes": no per-tensor rules */
    make_llama(&m, 8, 256, 256, 4, 2, true);
    mf_qmix_params_init(&p, MF_FTYPE_ALL_F32);
    CHECK(plan(&m, &p, &st, NULL) == 0);
    CHECK(type_of(&m, "output.weight", 0) == MF_F32);
    expect_all(&m, "F32", "blk.%d.attn_v.weight", MF_F32);
    mf_status_clear(&st);
}

static void test_filters_and_names(void)
{
    mf_qmix q;
    mf_qmix_params p;
    mf_qmix_params_init(&p, MF_FTYPE_Q8_0);
    mf_qmix_hparams h = {"llama", 4, 4, 4, 0};
    mf_qmix_init(&q, &p, &h);
    mf_status st;
    mf_status_init(&st);
    bool fb;
    int64_t col[4] = {256, 1, 1, 1}, mat[4] = {256, 256, 1, 1}, row1[4] = {1, 256, 1, 1};
    CHECK(mf_qmix_n_dims(col) == 1 && mf_qmix_n_dims(mat) == 2 && mf_qmix_n_dims(row1) == 2);
    int64_t trailing[4] = {256, 256, 1, 1};
    CHECK(mf_qmix_n_dims(trailing) == 2);
    CHECK(mf_qmix_choose(&q, "blk.0.x.weight", col, MF_F16, &fb, &st) == MF_F16);
    CHECK(mf_qmix_choose(&q, "blk.0.x.weight", mat, MF_F16, &fb, &st) == MF_Q8_0);
    CHECK(mf_qmix_choose(&q, "blk.0.x.bias", mat, MF_F16, &fb, &st) == MF_F16);
    CHECK(mf_qmix_choose(&q, "blk.0.attn_norm.weight", mat, MF_F32, &fb, &st) == MF_F32);
    CHECK(mf_qmix_choose(&q, "blk.0.ffn_gate_inp.weight", mat, MF_F32, &fb, &st) == MF_F32);
    CHECK(mf_qmix_choose(&q, "blk.0.ssm_conv1d.weight", mat, MF_F32, &fb, &st) == MF_F32);
    CHECK(mf_qmix_choose(&q, "position_embd.weight", mat, MF_F16, &fb, &st) == MF_F16);
    /* a [1, 256] matrix: Q8_0 has no fallback for rows of 1 value */
    CHECK(mf_qmix_choose(&q, "blk.0.x.weight", row1, MF_F16, &fb, &st) == MF_DTYPE_INVALID && fb);
    mf_status_clear(&st);
    mf_qmix_params_init(&p, MF_FTYPE_Q4_K_M);
    mf_qmix_init(&q, &p, &h);
    CHECK(mf_qmix_choose(&q, "blk.0.x.weight", row1, MF_F16, &fb, &st) == MF_F16 && fb);
    /* the order llama-quantize writes */
    CHECK(mf_qmix_name_cmp("output.weight", "token_embd.weight") < 0);
    CHECK(mf_qmix_name_cmp("token_embd.weight", "blk.0.attn_k.weight") < 0);
    CHECK(mf_qmix_name_cmp("blk.2.ffn_up.weight", "blk.10.attn_k.weight") < 0);
    CHECK(mf_qmix_name_cmp("blk.3.attn_v.weight", "blk.3.attn_k.weight") > 0);
    CHECK(mf_qmix_layer_of("blk.12.attn_q.weight") == 12);
    CHECK(mf_qmix_layer_of("blk.x.weight") == -1);
    CHECK(mf_qmix_layer_of("blk.-3.weight") == -3);
    CHECK(mf_qmix_layer_of("blk.99999999999999999999.w") == INT_MAX);
    CHECK(mf_qmix_layer_of("output.weight") == -1);
    /* mix names */
    CHECK(mf_ftype_parse("q4_k_m") == MF_FTYPE_Q4_K_M);
    CHECK(mf_ftype_parse("Q4_K") == MF_FTYPE_Q4_K_M); /* llama-quantize's alias */
    CHECK(mf_ftype_parse("Q3_K") == MF_FTYPE_Q3_K_M);
    CHECK(mf_ftype_parse("15") == MF_FTYPE_Q4_K_M);
    CHECK(mf_ftype_parse("30") == MF_FTYPE_IQ4_XS);
    CHECK(mf_ftype_parse("4") == MF_FTYPE_INVALID);
    CHECK(mf_ftype_parse("Q4_K_X") == MF_FTYPE_INVALID);
    CHECK(mf_ftype_parse("") == MF_FTYPE_INVALID);
    CHECK(strcmp(mf_ftype_name(MF_FTYPE_Q4_K_M), "Q4_K_M") == 0);
    CHECK(mf_ftype_base_type(MF_FTYPE_IQ2_S) == MF_IQ2_XS);
    CHECK(mf_ftype_needs_imatrix(MF_FTYPE_IQ1_S) && !mf_ftype_needs_imatrix(MF_FTYPE_Q2_K));
    /* llama-quantize's list (tools/quantize/quantize.cpp), exactly */
    {
        int n = 0;
        for (int f = 0; f < 64; f++)
            n += mf_ftype_needs_imatrix((mf_ftype)f);
        CHECK(n == 6 && mf_ftype_needs_imatrix(MF_FTYPE_IQ2_XS) && mf_ftype_needs_imatrix(MF_FTYPE_IQ2_XXS) &&
              mf_ftype_needs_imatrix(MF_FTYPE_IQ2_S) && mf_ftype_needs_imatrix(MF_FTYPE_Q2_K_S) &&
              mf_ftype_needs_imatrix(MF_FTYPE_IQ1_M) && !mf_ftype_needs_imatrix(MF_FTYPE_IQ3_XXS));
    }
    mf_status_clear(&st);
}

/* ------------------------------------------- the reference mixes */

typedef struct exp_row {
    char file[64], tensor[64], type[16], sha[65];
} exp_row;

static exp_row *load_expected(const char *dir, size_t *n)
{
    char path[600], line[1024];
    snprintf(path, sizeof(path), "%s/expected.tsv", dir);
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    exp_row *rows = calloc(2048, sizeof(*rows));
    *n = 0;
    while (rows && fgets(line, sizeof(line), f) && *n < 2048) {
        exp_row *r = &rows[*n];
        char ne[64];
        unsigned long long nbytes;
        if (sscanf(line, "%63[^\t]\t%63[^\t]\t%15[^\t]\t%63[^\t]\t%llu\t%64s", r->file, r->tensor,
                   r->type, ne, &nbytes, r->sha) == 6)
            (*n)++;
    }
    fclose(f);
    return rows;
}

static bool whole_file_matches(const char *dir, const char *name, const char *path)
{
    char p[600], line[1024], want[65] = "", got[129];
    snprintf(p, sizeof(p), "%s/files.tsv", dir);
    FILE *f = fopen(p, "r");
    if (!f)
        return false;
    while (fgets(line, sizeof(line), f)) {
        char fn[128], sha[65];
        unsigned long long sz;
        if (sscanf(line, "%127[^\t]\t%llu\t%64s", fn, &sz, sha) == 3 && strcmp(fn, name) == 0)
            snprintf(want, sizeof(want), "%s", sha);
    }
    fclose(f);
    mf_status st;
    mf_status_init(&st);
    bool ok = mf_hash_file(path, MF_SHA256, got, &st) == 0 && strcmp(got, want) == 0;
    mf_status_clear(&st);
    return ok;
}

static int g_mix_total, g_mix_ok;

/* Quantizes model-F16.gguf as `mix` and compares each tensor with the
 * reference file's rows of expected.tsv. */
static void check_mix(const char *dir, const char *tmp, const exp_row *rows, size_t n_rows,
                      const char *mix, bool imatrix, int threads)
{
    char ref[128], in[600], out[600], imat[600];
    snprintf(ref, sizeof(ref), "model-%s%s.gguf", mix, imatrix ? "-imatrix" : "");
    snprintf(in, sizeof(in), "%s/model-F16.gguf", dir);
    snprintf(out, sizeof(out), "%s/%s", tmp, ref);
    snprintf(imat, sizeof(imat), "%s/imatrix.dat", dir);
    mf_quantize_opts o;
    mf_quantize_opts_init(&o, mf_ftype_parse(mix));
    o.nthreads = threads;
    if (imatrix)
        o.imatrix_path = imat;
    mf_status st;
    mf_status_init(&st);
    mf_quantize_result res;
    int rc = mf_quantize_file(in, out, &o, NULL, NULL, &res, &st);
    CHECKF(rc == 0, "%s: %s", ref, st.msg);
    mf_model *m = NULL;
    if (rc == 0 && mf_open(out, NULL, &m, &st) != 0)
        m = NULL;
    int total = 0, ok = 0;
    for (size_t i = 0; m && i < n_rows; i++) {
        if (strcmp(rows[i].file, ref) != 0)
            continue;
        total++;
        const mf_tensor *t = mf_tensor_find(m, rows[i].tensor);
        char hex[129] = "";
        if (t)
            mf_hash_tensor(m, t, MF_SHA256, hex, &st);
        bool good = t && strcmp(mf_dtype_name(t->dtype), rows[i].type) == 0 &&
                    strcmp(hex, rows[i].sha) == 0;
        ok += good;
        CHECKF(good, "%s: %s: got %s %.12s, want %s %.12s", ref, rows[i].tensor,
               t ? mf_dtype_name(t->dtype) : "(missing)", hex, rows[i].type, rows[i].sha);
    }
    CHECKF(m && (size_t)total == m->n_tensors && total == 75, "%s: %d rows", ref, total);
    /* metadata: file type, quantization version, imatrix provenance */
    if (m) {
        const mf_value *ft = mf_meta_get(m, "general.file_type");
        const mf_value *qv = mf_meta_get(m, "general.quantization_version");
        CHECK(ft && ft->type == MF_V_U32 && ft->as.u == (uint64_t)mf_ftype_parse(mix));
        CHECK(qv && qv->type == MF_V_U32 && qv->as.u == 2);
        const mf_value *ie = mf_meta_get(m, "quantize.imatrix.entries_count");
        CHECK(imatrix ? ie && ie->type == MF_V_I32 && ie->as.i == 57 : !ie);
    }
    /* the metadata is laid out as llama-quantize writes it, so the files are
     * identical when the imatrix path string is the same */
    if (m && !imatrix)
        CHECKF(whole_file_matches(dir, ref, out), "%s: whole file differs", ref);
    printf("mix %-16s %2d/%2d tensors match (type and sha256)\n", ref, ok, total);
    g_mix_total++;
    g_mix_ok += ok == total && total == 75;
    mf_close(m);
    mf_status_clear(&st);
    unlink(out);
}

static void test_reference_mixes(void)
{
    const char *shared = tl_shared_dir();
    if (!shared) {
        TL_SKIP("quant_mix: the reference mixes (no ../shared)");
        return;
    }
    char dir[512];
    snprintf(dir, sizeof(dir), "%s/quant-ref/mix", shared);
    size_t n_rows = 0;
    exp_row *rows = load_expected(dir, &n_rows);
    if (!rows) {
        printf("skip: %s/expected.tsv not found\n", dir);
        return;
    }
    CHECK(n_rows == 1425);
    char tmp[] = "/tmp/mfmt-qmix-XXXXXX";
    CHECK(mkdtemp(tmp) != NULL);
    static const char *const mixes[] = {"Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q2_K",
                                        "Q3_K_S", "Q3_K_M", "Q3_K_L", "Q4_K_S", "Q4_K_M",
                                        "Q5_K_S", "Q5_K_M", "Q6_K", "IQ4_NL", "IQ4_XS"};
    for (size_t i = 0; i < sizeof(mixes) / sizeof(mixes[0]); i++)
        check_mix(dir, tmp, rows, n_rows, mixes[i], false, 1 + (int)(i % 2));
    check_mix(dir, tmp, rows, n_rows, "Q4_K_M", true, 2);
    check_mix(dir, tmp, rows, n_rows, "IQ4_XS", true, 1);
    printf("reference mixes: %d of %d match completely\n", g_mix_ok, g_mix_total);
    CHECK(g_mix_ok == 18 && g_mix_total == 18);
    rmdir(tmp);
    free(rows);
}

int main(void)
{
    test_k_m_mixes();
    test_gqa_and_70b();
    test_low_bit_mixes();
    test_moe();
    test_fallbacks();
    test_options();
    test_filters_and_names();
    test_reference_mixes();
    return tl_report("quant_mix");
}
