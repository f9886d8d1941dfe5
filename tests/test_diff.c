/* test_diff.c - diff and the float conversion under it. */
#include "testlib.h"

#include "ops/diff.h"
#include "ops/tensor_f32.h"

#include <math.h>

typedef struct counts {
    size_t k[7];
    double worst_cos;
} counts;

static int count_row(void *ctx, const mf_diff_row *r)
{
    counts *c = ctx;
    c->k[r->kind]++;
    if (r->kind == MF_DIFF_VALUES && r->cosine < c->worst_cos)
        c->worst_cos = r->cosine;
    return 0;
}

static mf_model *open_path(const char *p)
{
    mf_status st;
    mf_status_init(&st);
    mf_model *m = NULL;
    mf_open(p, NULL, &m, &st);
    mf_status_clear(&st);
    return m;
}

static void test_f8(void)
{
    /* OCP FP8: e4m3fn 0x7e = 448 (max), 0x7f NaN, 0x01 = 2^-9; e5m2 0x7b = 57344, 0x7c inf */
    uint8_t e4[] = {0x00, 0x38, 0x7e, 0x7f, 0x01, 0xb8};
    float f[6];
    CHECK(mf_convert_to_f32(MF_F8_E4M3, e4, f, 6) == 0);
    CHECK(f[0] == 0 && f[1] == 1.0f && f[2] == 448.0f && isnan(f[3]) && f[4] == 0x1p-9f &&
          f[5] == -1.0f);
    uint8_t e5[] = {0x3c, 0x7b, 0x7c, 0x7d, 0x01};
    CHECK(mf_convert_to_f32(MF_F8_E5M2, e5, f, 5) == 0);
    CHECK(f[0] == 1.0f && f[1] == 57344.0f && isinf(f[2]) && isnan(f[3]) && f[4] == 0x1p-16f);
    uint8_t fnuz[] = {0x80, 0x40};
    CHECK(mf_convert_to_f32(MF_F8_E4M3FNUZ, fnuz, f, 2) == 0);
    CHECK(isnan(f[0]) && f[1] == 1.0f);
}

int main(void)
{
    test_f8();
    mf_status st;
    mf_status_init(&st);
    mf_model *a = open_path("examples/tiny-llama.gguf");
    CHECK(a != NULL);
    if (a) {
        counts c = {.worst_cos = 1};
        CHECK(mf_diff(a, a, count_row, &c, &st) == 0);
        CHECK(c.k[MF_DIFF_SAME_BYTES] == a->n_tensors && c.k[MF_DIFF_VALUES] == 0);
    }
    const char *sh = tl_shared_dir();
    if (!sh)
        TL_SKIP("diff: the reference F16 and Q8_0 mixes (no ../shared)");
    if (sh) {
        char p16[512], p8[512];
        snprintf(p16, sizeof(p16), "%s/quant-ref/mix/model-F16.gguf", sh);
        snprintf(p8, sizeof(p8), "%s/quant-ref/mix/model-Q8_0.gguf", sh);
        mf_model *f16 = open_path(p16), *q8 = open_path(p8);
        if (f16 && q8) {
            counts c = {.worst_cos = 1};
            CHECK(mf_diff(f16, q8, count_row, &c, &st) == 0);
            /* 58 matrices quantized, 17 norms kept as F32 */
            CHECKF(c.k[MF_DIFF_VALUES] == 58 && c.k[MF_DIFF_SAME_BYTES] == 17,
                   "differ %zu same %zu", c.k[MF_DIFF_VALUES], c.k[MF_DIFF_SAME_BYTES]);
            CHECKF(c.worst_cos > 0.9999, "Q8_0 cosine %.6f", c.worst_cos);
        }
        mf_close(f16);
        mf_close(q8);
    }
    mf_close(a);
    mf_status_clear(&st);
    return tl_report("diff");
}
