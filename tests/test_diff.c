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

typedef struct key_counts {
    size_t k[5];
    char changed[8][96];
} key_counts;

static int count_key(void *ctx, const mf_meta_diff_row *r)
{
    key_counts *c = ctx;
    if (r->kind != MF_META_SAME && c->k[1] + c->k[2] + c->k[3] + c->k[4] < 8)
        snprintf(c->changed[c->k[1] + c->k[2] + c->k[3] + c->k[4]], 96, "%s:%s", r->key,
                 mf_meta_diff_kind_name(r->kind));
    c->k[r->kind]++;
    return 0;
}

static int stop_at_first_key(void *ctx, const mf_meta_diff_row *r)
{
    (void)ctx;
    (void)r;
    return 1;
}

static void test_value_equal(void)
{
    mf_value u1 = {.type = MF_V_U32, .as.u = 1}, i1 = {.type = MF_V_I32, .as.i = 1};
    mf_value u2 = {.type = MF_V_U32, .as.u = 2};
    CHECK(mf_value_equal(&u1, &u1) && !mf_value_equal(&u1, &u2));
    CHECK(!mf_value_equal(&u1, &i1)); /* a u32 1 is not an i32 1: GGUF readers check types */
    mf_value z = {.type = MF_V_F32, .as.f = 0.0}, nz = {.type = MF_V_F32, .as.f = -0.0};
    mf_value nan = {.type = MF_V_F64, .as.f = NAN};
    CHECK(!mf_value_equal(&z, &nz) && mf_value_equal(&nan, &nan));
    mf_value sa = {.type = MF_V_STR, .as.s = {"ab\0c", 4}}, sb = {.type = MF_V_STR, .as.s = {"ab\0d", 4}};
    CHECK(!mf_value_equal(&sa, &sb) && mf_value_equal(&sa, &sa));
    /* arrays of arrays: equal element by element, unequal at the innermost */
    mf_value in_a[2] = {u1, u2}, in_b[2] = {u1, u1};
    mf_value arr_a = {.type = MF_V_ARR, .as.arr = {MF_V_U32, 2, in_a}};
    mf_value arr_b = {.type = MF_V_ARR, .as.arr = {MF_V_U32, 2, in_b}};
    mf_value out_a[1] = {arr_a}, out_b[1] = {arr_b}, out_a2[1] = {arr_a};
    mf_value nest_a = {.type = MF_V_ARR, .as.arr = {MF_V_ARR, 1, out_a}};
    mf_value nest_b = {.type = MF_V_ARR, .as.arr = {MF_V_ARR, 1, out_b}};
    mf_value nest_a2 = {.type = MF_V_ARR, .as.arr = {MF_V_ARR, 1, out_a2}};
    CHECK(!mf_value_equal(&nest_a, &nest_b) && mf_value_equal(&nest_a, &nest_a2));
    mf_value short_a = {.type = MF_V_ARR, .as.arr = {MF_V_U32, 1, in_a}};
    CHECK(!mf_value_equal(&arr_a, &short_a));
}

/* F16 and Q8_0 of one model (llama-quantize's output): the file type is
 * the only key llama-quantize changes, and the tensors' keys agree. */
static void test_meta_diff_files(const char *sh)
{
    char p16[512], p8[512];
    snprintf(p16, sizeof(p16), "%s/quant-ref/mix/model-F16.gguf", sh);
    snprintf(p8, sizeof(p8), "%s/quant-ref/mix/model-Q8_0.gguf", sh);
    mf_model *f16 = open_path(p16), *q8 = open_path(p8);
    CHECK(f16 && q8);
    if (f16 && q8) {
        key_counts c = {{0}, {{0}}};
        CHECK(mf_diff_metadata(f16, q8, count_key, &c, NULL) == 0);
        size_t n_changed = c.k[MF_META_CHANGED] + c.k[MF_META_TYPE] + c.k[MF_META_ONLY_A] +
                           c.k[MF_META_ONLY_B];
        CHECK(c.k[MF_META_SAME] + n_changed >= f16->n_meta);
        bool file_type_changed = false;
        for (size_t i = 0; i < n_changed && i < 8; i++)
            file_type_changed |= strcmp(c.changed[i], "general.file_type:changed") == 0;
        CHECKF(file_type_changed, "general.file_type not reported changed (%zu changed, first %s)",
               n_changed, n_changed ? c.changed[0] : "-");
        key_counts self = {{0}, {{0}}};
        CHECK(mf_diff_metadata(q8, q8, count_key, &self, NULL) == 0);
        CHECK(self.k[MF_META_SAME] == q8->n_meta && self.k[MF_META_CHANGED] == 0);
        mf_status st;
        mf_status_init(&st);
        CHECK(mf_diff_metadata(q8, q8, stop_at_first_key, NULL, &st) == -1 &&
              st.code == MF_ERR_CANCELLED);
        mf_status_clear(&st);
    }
    mf_close(f16);
    mf_close(q8);
}

int main(void)
{
    test_f8();
    test_value_equal();
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
    if (sh)
        test_meta_diff_files(sh);
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
