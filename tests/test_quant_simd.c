/* test_quant_simd.c - the vector kernels (chosen at run time) give the
 * scalar kernels' bytes: every quantizable type, with and without an
 * importance matrix, on random rows and on edge values (all-zero blocks,
 * ties that round either way, huge and tiny magnitudes, subnormals, single
 * outliers, NaN/inf blocks), through mf_quant_set_simd; F16C conversion of
 * all 65536 halves; quantizing straight from F16/BF16 rows equals converting
 * first. On a CPU without AVX2 both sides are the scalar code (still run). */
#include "testlib.h"

#include "core/core.h"
#include "quant/qimpl.h"
#include "quant/quant.h"

#include <float.h>
#include <math.h>

#define N 512   /* values per row: two super-blocks */
#define ROWS 52

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static float unif(void) { return (float)(next() >> 40) * 0x1p-24f - 0.5f; }

/* Row r of the input: a different kind of data per row. */
static void fill_row(float *x, int r)
{
    int kind = r % 13;
    for (int i = 0; i < N; i++) {
        float g = (unif() + unif() + unif() + unif()) * 0.035f;
        switch (kind) {
        case 0: x[i] = g; break;                                  /* weights-like */
        case 1: x[i] = (i / 32) % 2 ? g : 0.0f; break;            /* all-zero blocks between */
        case 2: x[i] = (float)((int)(next() % 17) - 8) * 0.5f; break; /* ties: halves */
        case 3: x[i] = (float)((int)(next() % 33) - 16); break;   /* small integers */
        case 4: x[i] = g * 1e30f; break;                          /* huge */
        case 5: x[i] = g * 1e-30f; break;                         /* tiny */
        case 6: x[i] = (float)(next() % 7) * 0x1p-140f; break;    /* subnormal */
        case 7: x[i] = i % 97 == 5 ? 300.0f : g; break;           /* outliers */
        case 8: x[i] = i % 32 == 0 ? -1.0f : i % 32 == 1 ? 1.0f : 0.0f; break; /* equal magnitudes */
        case 9: x[i] = (i / 16) % 3 == 0 ? 65504.0f * (i % 2 ? 1 : -1) : g; break; /* F16 extremes */
        case 10: x[i] = g + 0.5f; break;                          /* all positive */
        case 11: x[i] = (i % 3 == 0) ? -0.0f : (i % 3 == 1) ? 0.0f : (i % 64 < 32 ? g : -fabsf(g)); break; /* signed zeros */
        default: x[i] = i == 40 ? NAN : i == 300 ? INFINITY : g; break; /* non-finite blocks */
        }
    }
}

static void test_types(void)
{
    float *x = malloc(sizeof(float) * N * ROWS), w[N];
    uint8_t *a = malloc(8 * N * ROWS), *b = malloc(8 * N * ROWS);
    for (int r = 0; r < ROWS; r++)
        fill_row(x + r * N, r);
    for (int i = 0; i < N; i++)
        w[i] = i % 5 == 0 ? 0.0f : 0.25f + (float)((i * 7919) % 97) / 16.0f; /* zero weights too */
    int types = 0;
    for (int dt = 0; dt < 64; dt++) {
        if (!mf_can_quantize((mf_dtype)dt))
            continue;
        types++;
        const mf_dtype_info *di = mf_dtype_info_of((mf_dtype)dt);
        size_t qbytes = (size_t)ROWS * (N / di->block_elems) * di->block_bytes;
        for (int im = 0; im < 2; im++) {
            if (!im && mf_quant_requires_imatrix((mf_dtype)dt))
                continue;
            memset(b, 0x55, qbytes);
            mf_quant_set_simd(0);
            int rb = mf_quantize_rows((mf_dtype)dt, x, b, ROWS, N, im ? w : NULL);
            /* every vector tier against the scalar code: all kernels, then
             * without AVX-512 (the AVX2 kernels an AVX-512 CPU skips) */
            static const unsigned tiers[] = {MF_QUANT_ALL, MF_QUANT_AVX2 | MF_QUANT_F16C};
            for (int t = 0; t < 2; t++) {
                memset(a, 0xAA, qbytes);
                mf_quant_set_simd(tiers[t]);
                int ra = mf_quantize_rows((mf_dtype)dt, x, a, ROWS, N, im ? w : NULL);
                int bad_rows = 0;
                size_t rowb = qbytes / ROWS;
                for (int r = 0; r < ROWS; r++)
                    bad_rows += memcmp(a + r * rowb, b + r * rowb, rowb) != 0;
                CHECKF(ra == 0 && rb == 0 && bad_rows == 0, "%s%s, %s: %d of %d rows differ from the scalar code",
                       mf_dtype_name((mf_dtype)dt), im ? " (imatrix)" : "", t ? "AVX2" : "all kernels", bad_rows,
                       ROWS);
            }
            mf_quant_set_simd(MF_QUANT_ALL);
        }
    }
    CHECKF(types >= 24, "only %d quantizable types", types);
    free(x), free(a), free(b);
}

static void test_f16c(void)
{
    uint8_t h[2 * 65536];
    for (int i = 0; i < 65536; i++)
        mf_wr16le(h + 2 * i, (uint16_t)i);
    float *v = malloc(sizeof(float) * 65536), *s = malloc(sizeof(float) * 65536);
    mf_quant_set_simd(MF_QUANT_ALL);
    CHECK(mf_dequantize_row(MF_F16, h, v, 65536) == 0);
    mf_quant_set_simd(0);
    CHECK(mf_dequantize_row(MF_F16, h, s, 65536) == 0);
    mf_quant_set_simd(MF_QUANT_ALL);
    int bad = 0;
    for (int i = 0; i < 65536; i++) {
        float ref = mf_f16_to_f32((uint16_t)i);
        bad += memcmp(&v[i], &ref, 4) != 0 || memcmp(&s[i], &ref, 4) != 0;
    }
    CHECKF(bad == 0, "%d halves convert differently (F16C: %s)", bad,
           mf_quant_simd_level() & MF_QUANT_F16C ? "yes" : "no");
    /* odd lengths and unaligned starts take the scalar tail */
    CHECK(mf_dequantize_row(MF_F16, h + 2 * 77, v, 13) == 0 && memcmp(&v[12], &s[89], 4) == 0);
    free(v), free(s);
}

/* mf_quantize_rows_from(F16/BF16 rows) == converting to F32 first, for any
 * thread count, at an odd address. */
static void test_from_stored(void)
{
    enum { R = 40 };
    uint8_t *h = malloc(2 * N * R + 1), *q1 = malloc(4 * N * R), *q2 = malloc(4 * N * R);
    float *f = malloc(sizeof(float) * N * R);
    const mf_dtype srcs[] = {MF_F16, MF_BF16}, dsts[] = {MF_Q4_0, MF_Q6_K, MF_Q3_K, MF_IQ4_XS, MF_Q8_0, MF_F32, MF_F16, MF_BF16};
    for (int s = 0; s < 2; s++) {
        for (int i = 0; i < N * R; i++) {
            float g = (unif() + unif()) * 0.05f;
            mf_wr16le(h + 1 + 2 * i, srcs[s] == MF_F16 ? mf_f32_to_f16(g) : mf_f32_to_bf16(g));
        }
        CHECK(mf_dequantize_row(srcs[s], h + 1, f, N * R) == 0);
        for (size_t d = 0; d < sizeof(dsts) / sizeof(dsts[0]); d++) {
            const mf_dtype_info *di = mf_dtype_info_of(dsts[d]);
            size_t qb = (size_t)R * (N / di->block_elems) * di->block_bytes;
            CHECK(mf_quantize_rows(dsts[d], f, q1, R, N, NULL) == 0);
            for (int nt = 1; nt <= 3; nt++) {
                memset(q2, 0, qb);
                CHECK(mf_quantize_rows_from(dsts[d], srcs[s], h + 1, q2, R, N, NULL, nt) == 0);
                CHECKF(memcmp(q1, q2, qb) == 0, "%s from %s, %d threads", mf_dtype_name(dsts[d]),
                       mf_dtype_name(srcs[s]), nt);
            }
            mf_quant_task *k = NULL;
            memset(q2, 0, qb);
            CHECK(mf_quant_task_start(&k, dsts[d], srcs[s], h + 1, q2, R, N, NULL, 2) == 0);
            CHECK(mf_quant_task_wait(k) == 0 && memcmp(q1, q2, qb) == 0);
        }
    }
    /* bad arguments are refused */
    mf_quant_task *k = NULL;
    CHECK(mf_quant_task_start(&k, MF_Q4_0, MF_F16, h, q2, R, 33, NULL, 2) == -1 && k == NULL);
    CHECK(mf_quantize_rows_from(MF_Q4_0, MF_Q8_1, h, q2, R, N, NULL, 2) == -1);
    CHECK(mf_quantize_rows_from(MF_Q4_0, MF_F16, h, q2, 0, N, NULL, 2) == 0);
    free(h), free(q1), free(q2), free(f);
}

/* ggml_validate_row_data: a row is refused exactly when one of its blocks
 * has a non-finite scale; the dequantized values say the same. */
static void test_validate(void)
{
    float x[N * 4];
    float *y = malloc(sizeof(float) * N * 4);
    uint8_t *q = malloc(8 * N * 4);
    for (int i = 0; i < N * 4; i++)
        x[i] = (unif() + unif()) * 0.05f;
    x[2 * N + 7] = 1e6f; /* row 2 overflows F16 scales */
    int checked = 0, bad = 0;
    for (int dt = 0; dt < 64; dt++) {
        if (!mf_can_quantize((mf_dtype)dt) || mf_quant_requires_imatrix((mf_dtype)dt))
            continue;
        if (mf_quantize_rows((mf_dtype)dt, x, q, 4, N, NULL) || mf_dequantize_row((mf_dtype)dt, q, y, N * 4))
            continue;
        int64_t want = -1;
        for (int r = 0; r < 4 && want < 0; r++)
            for (int i = 0; i < N; i++)
                if (!isfinite(y[r * N + i])) {
                    want = r;
                    break;
                }
        checked++;
        int64_t got = mf_quant_first_invalid_row((mf_dtype)dt, q, 4, N);
        if (got != want) {
            bad++;
            fprintf(stderr, "  %s: first invalid row %lld, the values say %lld\n", mf_dtype_name((mf_dtype)dt),
                    (long long)got, (long long)want);
        }
    }
    CHECKF(checked >= 20 && bad == 0, "%d of %d types validate differently", bad, checked);
    free(y), free(q);
}

/* F32 -> BF16 of every high half with the low halves that decide the
 * rounding (ties, both neighbours, NaN payloads), vector kernel against
 * mf_f32_to_bf16; and the float rows' validation finds the first row with
 * a non-finite value wherever it lies. */
static void test_bf16_and_float_rows(void)
{
    static const uint32_t lows[] = {0, 1, 0x7fff, 0x8000, 0x8001, 0xffff};
    enum { NV = 65536 * 6 };
    float *x = malloc(sizeof(float) * NV);
    uint8_t *a = malloc(2 * NV), *b = malloc(2 * NV);
    for (uint32_t i = 0; i < NV; i++) {
        uint32_t u = (i / 6) << 16 | lows[i % 6];
        memcpy(&x[i], &u, 4);
    }
    mf_quant_set_simd(MF_QUANT_ALL);
    CHECK(mf_quantize_rows(MF_BF16, x, a, 1, NV, NULL) == 0);
    int bad = 0;
    for (uint32_t i = 0; i < NV; i++)
        bad += mf_rd16le(a + 2 * i) != mf_f32_to_bf16(x[i]);
    mf_quant_set_simd(0);
    CHECK(mf_quantize_rows(MF_BF16, x, b, 1, NV, NULL) == 0);
    mf_quant_set_simd(MF_QUANT_ALL);
    CHECKF(bad == 0 && memcmp(a, b, 2 * NV) == 0, "%d of %d values convert to BF16 differently", bad, NV);
    /* one non-finite value at position p of row 3 (of 5) */
    float row[5 * 96];
    const mf_dtype fl[] = {MF_F32, MF_F16, MF_BF16};
    const float odd[] = {INFINITY, -INFINITY, NAN};
    int wrong = 0;
    for (int t = 0; t < 3; t++)
        for (int o = 0; o < 3; o++)
            for (int p = 0; p < 96; p += 7) {
                for (int i = 0; i < 5 * 96; i++)
                    row[i] = (unif() + unif()) * 0.05f;
                row[3 * 96 + p] = odd[o];
                CHECK(mf_quantize_rows(fl[t], row, a, 5, 96, NULL) == 0);
                wrong += mf_quant_first_invalid_row(fl[t], a, 5, 96) != 3;
                wrong += mf_quant_first_invalid_row(fl[t], a, 3, 96) != -1;
            }
    CHECKF(wrong == 0, "%d float-row validations wrong", wrong);
    free(x), free(a), free(b);
}

/* ggml's iq1_sort_helper on (value, position) pairs, as its qsort sees them */
static int iq1_cmp(const void *l, const void *r)
{
    const float a = *(const float *)l, b = *(const float *)r;
    return a < b ? -1 : a > b ? 1 : 0;
}

/* A value from a small set (ties, both zeros), rarely a NaN. */
static float tie_value(int nan_odds)
{
    static const float set[] = {-1.0f, -0.5f, -0.0f, 0.0f, 0.5f, 1.0f, 0x1p-140f, -0x1p-140f, 65504.0f};
    uint64_t r = next();
    if (nan_odds && r % (uint64_t)nan_odds == 0)
        return NAN;
    return set[(r >> 8) % (sizeof(set) / sizeof(set[0]))];
}

/* IQ1's sub-block sort (a rank count when there is no NaN) against the C
 * library's qsort with ggml's comparator, the reference's own call: ties,
 * +-0, subnormals, NaN. */
static void test_iq1_sort(void)
{
    int bad = 0, runs = 0;
    for (int t = 0; t < 20000; ++t) {
        const int n = t % 2 ? 32 : 16;
        float x[32], pairs[64];
        int idx[32];
        for (int j = 0; j < n; ++j) {
            x[j] = t % 5 == 0 ? unif() : tie_value(t % 3 == 0 ? 40 : 0);
            pairs[2 * j] = x[j];
            memcpy(&pairs[2 * j + 1], &j, sizeof(int));
        }
        qsort(pairs, (size_t)n, 2 * sizeof(float), iq1_cmp);
        mq_iq1_sorted_order(x, n, idx);
        for (int j = 0; j < n; ++j) {
            int want;
            memcpy(&want, &pairs[2 * j + 1], sizeof(int));
            bad += idx[j] != want;
        }
        runs++;
    }
    CHECKF(bad == 0 && runs == 20000, "%d positions differ from qsort", bad);
}

/* IQ1_S and IQ1_M, whose split and neighbour searches have their own
 * vector kernels, on more rows than test_types: every tier against the
 * scalar code, with and without an imatrix (zero weights included). */
static void test_iq1_tiers(void)
{
    enum { R = 96, C = 1024 };
    float *x = malloc(sizeof(float) * R * C), w[C];
    uint8_t *a = malloc(64 * R * C / 256), *b = malloc(64 * R * C / 256);
    for (int r = 0; r < R; r++)
        for (int i = 0; i < C; i++) {
            const float g = (unif() + unif() + unif()) * 0.05f;
            x[r * C + i] = r % 4 == 0 ? tie_value(r % 8 == 0 ? 0 : 3000) : r % 4 == 1 ? g * (1 + (float)(i % 7)) : g;
        }
    for (int i = 0; i < C; i++)
        w[i] = i % 9 == 0 ? 0.0f : (float)(next() % 1000) / 100.0f;
    static const mf_dtype types[] = {MF_IQ1_S, MF_IQ1_M};
    static const unsigned tiers[] = {MF_QUANT_ALL, MF_QUANT_AVX2 | MF_QUANT_F16C};
    for (int t = 0; t < 2; t++) {
        const mf_dtype_info *di = mf_dtype_info_of(types[t]);
        const size_t qbytes = (size_t)R * (C / di->block_elems) * di->block_bytes;
        for (int im = mf_quant_requires_imatrix(types[t]); im < 2; im++) {
            mf_quant_set_simd(0);
            int rb = mf_quantize_rows(types[t], x, b, R, C, im ? w : NULL);
            for (int k = 0; k < 2; k++) {
                mf_quant_set_simd(tiers[k]);
                memset(a, 0xAA, qbytes);
                int ra = mf_quantize_rows(types[t], x, a, R, C, im ? w : NULL);
                CHECKF(ra == 0 && rb == 0 && memcmp(a, b, qbytes) == 0, "%s%s, %s: differs from the scalar code",
                       mf_dtype_name(types[t]), im ? " (imatrix)" : "", k ? "AVX2" : "all kernels");
            }
        }
    }
    mf_quant_set_simd(MF_QUANT_ALL);
    free(x), free(a), free(b);
}

/* FNV-1a of every type's bytes (with and without an imatrix) on the test
 * rows, under whatever tier the environment chose */
static uint64_t all_types_hash(void)
{
    float *x = malloc(sizeof(float) * N * ROWS), w[N];
    uint8_t *q = malloc(8 * N * ROWS);
    for (int r = 0; r < ROWS; r++)
        fill_row(x + r * N, r);
    for (int i = 0; i < N; i++)
        w[i] = 0.25f + (float)((i * 7919) % 97) / 16.0f;
    uint64_t h = 0xcbf29ce484222325ull;
    for (int dt = 0; dt < 64; dt++) {
        if (!mf_can_quantize((mf_dtype)dt))
            continue;
        const mf_dtype_info *di = mf_dtype_info_of((mf_dtype)dt);
        size_t qbytes = (size_t)ROWS * (N / di->block_elems) * di->block_bytes;
        for (int im = mf_quant_requires_imatrix((mf_dtype)dt); im < 2; im++) {
            memset(q, 0, qbytes);
            if (mf_quantize_rows_from((mf_dtype)dt, MF_F32, x, q, ROWS, N, im ? w : NULL, 2))
                h ^= 1; /* a failure changes the hash */
            for (size_t i = 0; i < qbytes; i++)
                h = (h ^ q[i]) * 0x100000001b3ull;
        }
    }
    free(x), free(q);
    return h;
}

/* MFMT_SIMD forces each tier in a fresh process (the choice is made once,
 * at the first kernel call): the level it reports is the forced one (capped
 * by the CPU) and every tier's bytes are the same. */
static void test_forced_tiers(const char *self)
{
    static const char *const tiers[] = {"scalar", "avx2", "avx512"};
    unsigned long long hash[3] = {0};
    unsigned lvl[3] = {0};
    const unsigned here = mf_quant_simd_level();
    for (int t = 0; t < 3; t++) {
        char cmd[4200];
        snprintf(cmd, sizeof(cmd), "MFMT_SIMD=%s '%s' --tier-hash", tiers[t], self);
        FILE *p = popen(cmd, "r");
        int got = p ? fscanf(p, "%u %llx", &lvl[t], &hash[t]) : 0;
        int rc = p ? pclose(p) : -1;
        CHECKF(got == 2 && rc == 0, "MFMT_SIMD=%s: the child printed no hash", tiers[t]);
        printf("  MFMT_SIMD=%-6s kernels %s%s%s: hash %016llx\n", tiers[t], lvl[t] & MF_QUANT_AVX2 ? "AVX2 " : "",
               lvl[t] & MF_QUANT_AVX512 ? "AVX-512 " : "", lvl[t] & MF_QUANT_F16C ? "F16C" : "(scalar)", hash[t]);
    }
    CHECKF(lvl[0] == 0, "MFMT_SIMD=scalar still uses kernels %u", lvl[0]);
    CHECKF(lvl[1] == (here & ~(unsigned)MF_QUANT_AVX512), "MFMT_SIMD=avx2 uses %u", lvl[1]);
    CHECKF(lvl[2] == here, "MFMT_SIMD=avx512 uses %u, the CPU offers %u", lvl[2], here);
    CHECKF(hash[0] == hash[1] && hash[1] == hash[2], "the tiers give different bytes");
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--tier-hash")) {
        unsigned long long h = all_types_hash();
        printf("%u %llx\n", mf_quant_simd_level(), h);
        return 0;
    }
    unsigned lvl = mf_quant_simd_level();
    printf("vector kernels here: %s%s%s%s\n", lvl & MF_QUANT_AVX2 ? "AVX2 " : "", lvl & MF_QUANT_AVX512 ? "AVX-512 " : "",
           lvl & MF_QUANT_F16C ? "F16C" : "", lvl ? "" : "(none)");
    test_types();
    test_f16c();
    test_bf16_and_float_rows();
    test_from_stored();
    test_validate();
    test_iq1_sort();
    test_iq1_tiers();
    if (!getenv("MFMT_SIMD") && !getenv("MFMT_NO_SIMD"))
        test_forced_tiers(argv[0]);
    else
        printf("SKIP forced tiers: MFMT_SIMD or MFMT_NO_SIMD already set\n");
    return tl_report("quant_simd");
}
