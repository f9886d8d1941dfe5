/* test_quant.c - lib/quant without ../shared: hand-computed blocks, real
 * rows checked against hashes of llama.cpp's own bytes, half-float edge
 * cases, the API's argument checks and the threaded driver. */
#include "testlib.h"

#include "core/core.h"
#include "quant/iq_grids.h"
#include "quant/iq_lattice.h"
#include "quant/qimpl.h"
#include "quant/quant.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "quant_golden.h"

static uint32_t fbits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float bitsf(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static uint64_t fnv1a(const void *p, size_t n)
{
    const uint8_t *b = p;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

/* ------------------------------------------------------------ half floats */

static void test_half(void)
{
    CHECK(mf_f32_to_f16(1.0f) == 0x3c00);
    CHECK(mf_f32_to_f16(-2.0f) == 0xc000);
    CHECK(mf_f32_to_f16(65504.0f) == 0x7bff);
    CHECK(mf_f32_to_f16(65519.996f) == 0x7bff); /* below the rounding point */
    CHECK(mf_f32_to_f16(65520.0f) == 0x7c00);   /* rounds to infinity */
    CHECK(mf_f32_to_f16(INFINITY) == 0x7c00);
    CHECK(mf_f32_to_f16(bitsf(0x7fc00000)) == 0x7e00); /* NaN: canonical quiet */
    CHECK(mf_f32_to_f16(bitsf(0xffc00000)) == 0xfe00); /* x86's default NaN */
    CHECK(mf_f32_to_f16(0x1p-24f) == 0x0001);          /* smallest subnormal */
    CHECK(mf_f32_to_f16(0x1p-25f) == 0x0000);          /* tie, to even */
    CHECK(mf_f32_to_f16(0x1.8p-24f) == 0x0002);        /* 1.5 ulp: tie, to even */
    CHECK(mf_f32_to_f16(1.0f + 0x1p-11f) == 0x3c00);   /* tie below, to even */
    CHECK(mf_f32_to_f16(1.0f + 0x3p-11f) == 0x3c02);   /* tie above, to even */
    CHECK(mf_f32_to_f16(-0.0f) == 0x8000);
    CHECK(fbits(mf_f16_to_f32(0x0001)) == fbits(0x1p-24f));
    CHECK(fbits(mf_f16_to_f32(0x8000)) == 0x80000000u);
    CHECK(fbits(mf_f16_to_f32(0x7c00)) == 0x7f800000u);
    CHECK(fbits(mf_f16_to_f32(0x7c01)) == 0x7fc02000u); /* signalling NaN comes back quiet */
    CHECK(fbits(mf_f16_to_f32(0xfe00)) == 0xffc00000u);
    CHECK(mf_f32_to_bf16(1.0f + 0x1p-8f) == 0x3f80); /* tie, to even */
    CHECK(mf_f32_to_bf16(bitsf(0x7f800001)) == 0x7fc0);
}

/* ------------------------------------------------------------ hand blocks */

static void quant1(mf_dtype dt, const float *x, int64_t n, uint8_t *out)
{
    CHECKF(mf_quantize_rows(dt, x, out, 1, n, NULL) == 0, "%s", mf_dtype_name(dt));
}

/* Dequantizing gives x back exactly (inputs on the quantization grid). */
static void check_roundtrip(mf_dtype dt, const uint8_t *q, const float *x, int64_t n)
{
    float y[256];
    CHECK(mf_dequantize_row(dt, q, y, n) == 0);
    int bad = 0;
    for (int64_t i = 0; i < n; i++)
        bad += fbits(y[i]) != fbits(x[i]);
    CHECKF(bad == 0, "%s: %d values differ after a round trip", mf_dtype_name(dt), bad);
}

/* x = j - 16: amax 16, d = 16/127 -> fp16 0x3008 (0.125 * (1 + 8/1024));
 * q = roundf(x * 127/16). */
static void test_q8_0_block(void)
{
    float x[32];
    uint8_t q[34];
    for (int j = 0; j < 32; j++)
        x[j] = (float)(j - 16);
    quant1(MF_Q8_0, x, 32, q);
    CHECK(mf_rd16le(q) == 0x3008);
    CHECK((int8_t)q[2] == -127);     /* -16 */
    CHECK((int8_t)q[2 + 16] == 0);   /* 0 */
    CHECK((int8_t)q[2 + 31] == 119); /* 15 * 7.9375 = 119.06 */
    CHECK((int8_t)q[2 + 1] == -119); /* -15 */
    /* a rounding tie: 2.5 with d = 1 (amax 127) rounds away from zero */
    x[0] = 127.0f;
    x[1] = 2.5f;
    x[2] = -2.5f;
    quant1(MF_Q8_0, x, 32, q);
    CHECK(mf_rd16le(q) == 0x3c00 && (int8_t)q[3] == 3 && (int8_t)q[4] == -3);
}

/* x = (j % 16) - 8: the first -8 sets d = 1, levels are j % 16. */
static void test_q4_0_block(void)
{
    float x[32];
    uint8_t q[18];
    for (int j = 0; j < 32; j++)
        x[j] = (float)(j % 16 - 8);
    quant1(MF_Q4_0, x, 32, q);
    CHECK(mf_rd16le(q) == 0x3c00);
    int bad = 0;
    for (int j = 0; j < 16; j++)
        bad += q[2 + j] != (uint8_t)(j | j << 4);
    CHECK(bad == 0);
    check_roundtrip(MF_Q4_0, q, x, 32);
}

/* x = 1 + 0.5 * (j % 16): min 1, d = 7.5/15 = 0.5 (0x3800), levels j % 16. */
static void test_q4_1_block(void)
{
    float x[32];
    uint8_t q[20];
    for (int j = 0; j < 32; j++)
        x[j] = 1.0f + 0.5f * (float)(j % 16);
    quant1(MF_Q4_1, x, 32, q);
    CHECK(mf_rd16le(q) == 0x3800 && mf_rd16le(q + 2) == 0x3c00);
    int bad = 0;
    for (int j = 0; j < 16; j++)
        bad += q[4 + j] != (uint8_t)(j | j << 4);
    CHECK(bad == 0);
    check_roundtrip(MF_Q4_1, q, x, 32);
}

/* Q5_0: x = j - 16, d = 1, level j; the fifth bits are set for j >= 16. */
static void test_q5_blocks(void)
{
    float x[32];
    uint8_t q[24];
    for (int j = 0; j < 32; j++)
        x[j] = (float)(j - 16);
    quant1(MF_Q5_0, x, 32, q);
    CHECK(mf_rd16le(q) == 0x3c00 && mf_rd32le(q + 2) == 0xffff0000u);
    int bad = 0;
    for (int j = 0; j < 16; j++)
        bad += q[6 + j] != (uint8_t)(j | j << 4);
    CHECK(bad == 0);
    check_roundtrip(MF_Q5_0, q, x, 32);

    /* Q5_1: x = j / 4: min 0, d = 7.75/31 = 0.25 (0x3400) */
    for (int j = 0; j < 32; j++)
        x[j] = (float)j * 0.25f;
    quant1(MF_Q5_1, x, 32, q);
    CHECK(mf_rd16le(q) == 0x3400 && mf_rd16le(q + 2) == 0 && mf_rd32le(q + 4) == 0xffff0000u);
    bad = 0;
    for (int j = 0; j < 16; j++)
        bad += q[8 + j] != (uint8_t)(j | j << 4);
    CHECK(bad == 0);
    check_roundtrip(MF_Q5_1, q, x, 32);
}

/* IQ4_NL: x = table[j % 16] / 2 is on the grid with d = 0.5. */
static void test_iq4_nl_block(void)
{
    static const int8_t kv[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
    float x[32];
    uint8_t q[18];
    for (int j = 0; j < 32; j++)
        x[j] = kv[j % 16] * 0.5f;
    quant1(MF_IQ4_NL, x, 32, q);
    CHECK(mf_rd16le(q) == 0x3800);
    int bad = 0;
    for (int j = 0; j < 16; j++)
        bad += q[2 + j] != (uint8_t)(j | j << 4);
    CHECK(bad == 0);
    check_roundtrip(MF_IQ4_NL, q, x, 32);
}

/* Ternary: x in {-1.5, 0, 1.5}: d = 1.5 (0x3e00). TQ2_0 byte m of each
 * 32-byte half packs elements m, m+32, m+64, m+96 as (t + 1) in 2 bits. */
static void test_ternary_blocks(void)
{
    float x[256];
    uint8_t q[66];
    for (int j = 0; j < 256; j++)
        x[j] = (float)(j % 3 - 1) * 1.5f;
    quant1(MF_TQ2_0, x, 256, q);
    CHECK(mf_rd16le(q + 64) == 0x3e00);
    /* byte 0: elements 0, 32, 64, 96 -> trits 0, 2, 1, 0 (j%3: 0,2,1,0) */
    CHECK(q[0] == (0 | 2 << 2 | 1 << 4 | 0 << 6));
    check_roundtrip(MF_TQ2_0, q, x, 256);
    quant1(MF_TQ1_0, x, 256, q);
    CHECK(mf_rd16le(q + 52) == 0x3e00);
    /* byte 0: elements 0, 32, 64, 96, 128 -> trits 0 2 1 0 2 = 0*81+2*27+1*9+0*3+2 = 65;
     * ceil(65 * 256 / 243) = 69 */
    CHECK(q[0] == 69);
    check_roundtrip(MF_TQ1_0, q, x, 256);
}

/* Lattice i-quants, hand-decoded: grid entries 0, 1, 255 of each table,
 * ggml's half-step scales and the parity-completed sign bytes. */
static void test_iq_deq_blocks(void)
{
    uint8_t b[110] = {0};
    float y[256];
    /* IQ2_XXS: d 1, scale 3 -> db = 3.5/4; indices 0, 1, 255; signs 1 -> 0x81 */
    mf_wr16le(b, 0x3c00);
    b[2] = 0, b[3] = 1, b[4] = 255;
    mf_wr32le(b + 6, 3u << 28 | 1u);
    CHECK(mf_dequantize_row(MF_IQ2_XXS, b, y, 256) == 0);
    CHECK(y[0] == -7.0f && y[1] == 7.0f && y[7] == -7.0f);      /* 8 * 0.875, bits 0 and 7 negative */
    CHECK(y[8] == 37.625f && y[9] == 7.0f);                     /* entry 1: 0x2b first */
    CHECK(y[16] == 7.0f && y[17] == 21.875f && y[23] == 37.625f); /* entry 255: 08 19 08 08 19 2b 2b 2b */
    /* IQ2_XS: scales 0x21 -> 1.5/4 and 2.5/4; index 1 with sign code 1 */
    memset(b, 0, sizeof(b));
    mf_wr16le(b, 0x3c00);
    mf_wr16le(b + 2, 1u << 9 | 1u);
    b[66] = 0x21;
    CHECK(mf_dequantize_row(MF_IQ2_XS, b, y, 256) == 0);
    CHECK(y[0] == -16.125f && y[1] == 3.0f && y[7] == -3.0f && y[16] == 5.0f);
    /* IQ3_XXS: scale 2 -> db 1.25; entries 0 (4,4,4,4) and 255 (4,28,52,62); signs 3 */
    memset(b, 0, sizeof(b));
    mf_wr16le(b, 0x3c00);
    b[3] = 255;
    mf_wr32le(b + 66, 2u << 28 | 3u);
    CHECK(mf_dequantize_row(MF_IQ3_XXS, b, y, 256) == 0);
    CHECK(y[0] == -5.0f && y[1] == -5.0f && y[2] == 5.0f && y[4] == 5.0f && y[5] == 35.0f && y[7] == 77.5f);
    /* IQ3_S: scales 0x21 -> 3 and 5; entries 0 and 1 (3,1,1,1); sign bit 4 */
    memset(b, 0, sizeof(b));
    mf_wr16le(b, 0x3c00);
    b[3] = 1;
    b[74] = 0x10;
    b[106] = 0x21;
    CHECK(mf_dequantize_row(MF_IQ3_S, b, y, 256) == 0);
    CHECK(y[0] == 3.0f && y[4] == -9.0f && y[5] == 3.0f && y[32] == 5.0f);
}

/* IQ2_S, IQ1_S, IQ1_M, hand-decoded: first and last lattice entries (all
 * lowest / all highest fields), the high index bits, scales and deltas. */
static void test_iq_deq_blocks2(void)
{
    uint8_t b[82] = {0};
    float y[256];
    /* IQ2_S: d 1, scales 0x21 -> 1.5/4, 2.5/4; entry 1 (43 first) with sign
     * bit 0; entry 1023 (all 43) through qh bits 2-3 */
    mf_wr16le(b, 0x3c00);
    b[2] = 1, b[3] = 0xff;
    b[34] = 0x01;
    b[66] = 0x0c;
    b[74] = 0x21;
    CHECK(mf_dequantize_row(MF_IQ2_S, b, y, 256) == 0);
    CHECK(y[0] == -16.125f && y[1] == 3.0f && y[8] == 16.125f && y[15] == 16.125f && y[16] == 5.0f);
    /* IQ1_S: d 1, sub-block scale 3 -> 7, delta negative; entries 0 (all -1),
     * 2047 (all +1, high bits 7) and 1 (+1 first) */
    memset(b, 0, sizeof(b));
    mf_wr16le(b, 0x3c00);
    b[3] = 0xff, b[4] = 1;
    mf_wr16le(b + 34, 0x8000 | 3u << 12 | 7u << 3);
    CHECK(mf_dequantize_row(MF_IQ1_S, b, y, 256) == 0);
    CHECK(y[0] == -7.875f && y[7] == -7.875f && y[8] == 6.125f && y[16] == 6.125f && y[17] == -7.875f);
    CHECK(y[32] == -0.875f); /* next sub-block: scale 1, entry 0 (-1), delta + */
    /* IQ1_M: d 1 = 0x3c00 spread over the top nibbles (0, 0, c, 3); scales
     * 2 and 1 -> 5 and 3; qh 0x78: delta - for point 0, entry 2047 for point 1 */
    memset(b, 0, sizeof(b));
    b[1] = 0xff;
    b[32] = 0x78;
    mf_wr16le(b + 48, 2u | 1u << 3);
    mf_wr16le(b + 52, 0xc000);
    mf_wr16le(b + 54, 0x3000);
    CHECK(mf_dequantize_row(MF_IQ1_M, b, y, 256) == 0);
    CHECK(y[0] == -5.625f && y[8] == 5.625f && y[16] == -2.625f);
}

/* The compact lattices (iq_kgrid.c) are sorted, use only fields 0-2 where
 * fields are 2 bits, and give the same grids as ggml-common.h's tables that
 * iq_grids.c holds (two independent transcriptions). */
static uint64_t grid_from_kgrid(uint16_t k, int bits, const uint8_t *val)
{
    uint64_t v = 0;
    for (int j = 0; j < (bits == 2 ? 8 : 4); j++)
        v |= (uint64_t)val[(k >> (bits * j)) & ((1 << bits) - 1)] << (8 * j);
    return v;
}

static void test_kgrids(void)
{
    const struct { const uint16_t *k; int n, bits; } t[] = {
        {mq_kgrid_2bit_256, 256, 2},   {mq_kgrid_2bit_512, 512, 2}, {mq_kgrid_2bit_1024, 1024, 2},
        {mq_kgrid_1bit_2048, 2048, 2}, {mq_kgrid_3bit_256, 256, 3}, {mq_kgrid_3bit_512, 512, 3},
    };
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        int bad = 0;
        for (int e = 0; e < t[i].n; e++) {
            bad += e > 0 && t[i].k[e] <= t[i].k[e - 1];
            for (int j = 0; t[i].bits == 2 && j < 8; j++)
                bad += mq_kgrid2_field(t[i].k[e], j) == 3;
        }
        CHECKF(bad == 0, "kgrid table %zu: %d entries out of order or with field 3", i, bad);
    }
    const uint8_t v2[] = {8, 25, 43}, v3xxs[] = {4, 12, 20, 28, 36, 44, 52, 62}, v3s[] = {1, 3, 5, 7, 9, 11, 13, 15};
    int bad = 0;
    for (int e = 0; e < 256; e++) {
        bad += grid_from_kgrid(mq_kgrid_2bit_256[e], 2, v2) != mq_iq2xxs_grid[e];
        bad += grid_from_kgrid(mq_kgrid_3bit_256[e], 3, v3xxs) != mq_iq3xxs_grid[e];
    }
    for (int e = 0; e < 512; e++) {
        bad += grid_from_kgrid(mq_kgrid_2bit_512[e], 2, v2) != mq_iq2xs_grid[e];
        bad += grid_from_kgrid(mq_kgrid_3bit_512[e], 3, v3s) != mq_iq3s_grid[e];
    }
    CHECKF(bad == 0, "%d compact lattice entries differ from ggml-common.h's grids", bad);
    CHECK(mq_kgrid_2bit_1024[1023] == 0xaaaa && mq_kgrid_1bit_2048[2047] == 0xaaaa);
}

/* ------------------------------------------------------------ lattices */

/* Several threads quantizing IQ1_M at once, as the first use of its grid
 * in the process (pthread_once builds it), get identical bytes. */
typedef struct iq_job {
    const float *x;
    uint8_t q[4 * 56];
} iq_job;

static void *iq_job_run(void *arg)
{
    iq_job *j = arg;
    mf_quantize_rows(MF_IQ1_M, j->x, j->q, 1, 1024, NULL);
    return NULL;
}

static void test_lattice_first_use(void)
{
    static float x[1024];
    static iq_job jobs[4];
    pthread_t tid[4];
    for (int i = 0; i < 1024; i++)
        x[i] = sinf((float)i * 0.37f) * (1.0f + (float)(i % 13));
    for (int t = 0; t < 4; t++) {
        jobs[t].x = x;
        CHECK(pthread_create(&tid[t], NULL, iq_job_run, &jobs[t]) == 0);
    }
    for (int t = 0; t < 4; t++)
        pthread_join(tid[t], NULL);
    for (int t = 1; t < 4; t++)
        CHECK(!memcmp(jobs[0].q, jobs[t].q, sizeof(jobs[0].q)));
    CHECK(mf_rd16le(jobs[0].q + 48) != 0 || mf_rd16le(jobs[0].q + 54) != 0); /* a scale was written */
}

/* ggml's construction of a neighbour list, done the way ggml does it:
 * qsort (distance, index) pairs, keep the first nwant distinct distances. */
static int pair_cmp(const void *a, const void *b)
{
    const int *l = a, *r = b;
    return l[0] != r[0] ? (l[0] < r[0] ? -1 : 1) : (l[1] < r[1] ? -1 : l[1] > r[1]);
}

static bool neighbours_as_ggml(const mq_lattice *lat, uint32_t u, int nwant)
{
    int n = lat->ngrid, *d = malloc(sizeof(int) * 2 * (size_t)n);
    for (int j = 0; j < n; j++) {
        const int8_t *pg = mq_lat_point(lat, j);
        int d2 = 0;
        for (int k = 0; k < lat->dim; k++) {
            int diff = pg[k] - (2 * (int)((u >> (lat->bits * k)) & ((1u << lat->bits) - 1)) + 1);
            d2 += diff * diff;
        }
        d[2 * j] = d2, d[2 * j + 1] = j;
    }
    qsort(d, (size_t)n, 2 * sizeof(int), pair_cmp);
    const uint16_t *nb = mq_lat_neighbours(lat, u);
    int cnt = 0, nhave = 1, d2 = d[0];
    bool ok = nb != NULL;
    for (int j = 0; ok && j < n; j++) {
        if (d[2 * j] > d2) {
            if (nhave == nwant)
                break;
            d2 = d[2 * j];
            nhave++;
        }
        cnt++;
        ok = cnt <= nb[0] && nb[cnt] == d[2 * j + 1];
    }
    free(d);
    return ok && cnt == nb[0];
}

static void test_lattices(void)
{
    const struct { mq_lattice_id id; const uint16_t *k; int n, nwant; } t[] = {
        {MQ_LAT_IQ2_XXS, mq_kgrid_2bit_256, 256, 2}, {MQ_LAT_IQ2_XS, mq_kgrid_2bit_512, 512, 2},
        {MQ_LAT_IQ2_S, mq_kgrid_2bit_1024, 1024, 1}, {MQ_LAT_IQ1, mq_kgrid_1bit_2048, 2048, 3},
        {MQ_LAT_IQ3_XXS, mq_kgrid_3bit_256, 256, 2}, {MQ_LAT_IQ3_S, mq_kgrid_3bit_512, 512, 3},
    };
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        const mq_lattice *lat = mq_lattice_get(t[i].id);
        CHECK(lat && lat == mq_lattice_get(t[i].id) && lat->ngrid == t[i].n);
        if (!lat)
            continue;
        int bad = 0, checked = 0;
        for (int k = 0; k < t[i].n; k++)
            bad += mq_lat_index(lat, t[i].k[k]) != k;
        for (uint32_t u = 0; u < lat->nmap; u += 7) {
            bool reachable = true;
            for (int k = 0; lat->bits == 2 && k < 8; k++)
                reachable = reachable && ((u >> (2 * k)) & 3) != 3;
            if (!reachable || mq_lat_index(lat, u) >= 0)
                continue;
            bad += !neighbours_as_ggml(lat, u, t[i].nwant);
            checked++;
        }
        CHECKF(bad == 0 && checked > 100, "lattice %d: %d bad of %d neighbour lists", (int)t[i].id, bad, checked);
    }
    CHECK(mq_lattice_get(MQ_LAT_COUNT) == NULL);
}

/* ------------------------------------------------------------ golden rows */

static const uint32_t *golden_row(int r)
{
    return r == 0 ? row0_x : r == 1 ? row1_x : row2_x;
}

static void test_goldens(void)
{
    for (size_t i = 0; i < sizeof(goldens) / sizeof(goldens[0]); i++) {
        const golden *g = &goldens[i];
        mf_dtype dt = mf_dtype_from_name(g->type);
        float x[256], w[256], y[256];
        uint8_t q[292], qw[292];
        memcpy(x, golden_row(g->row), sizeof(x));
        memcpy(w, g->row == 0 ? row0_w : row1_w, sizeof(w));
        const mf_dtype_info *info = mf_dtype_info_of(dt);
        size_t rb = 256 / info->block_elems * info->block_bytes;
        CHECK(mf_quantize_rows(dt, x, qw, 1, 256, w) == 0);
        CHECKF(fnv1a(qw, rb) == g->qw, "%s row %d .qw", g->type, g->row);
        if (g->q) {
            CHECK(mf_quantize_rows(dt, x, q, 1, 256, NULL) == 0);
            CHECKF(fnv1a(q, rb) == g->q, "%s row %d .q", g->type, g->row);
            CHECK(mf_dequantize_row(dt, q, y, 256) == 0);
            CHECKF(fnv1a(y, sizeof(y)) == g->deq, "%s row %d .deq", g->type, g->row);
        } else {
            CHECK(mf_quant_requires_imatrix(dt) && mf_quantize_rows(dt, x, q, 1, 256, NULL) == -1);
        }
        CHECK(mf_dequantize_row(dt, qw, y, 256) == 0);
        CHECKF(fnv1a(y, sizeof(y)) == g->deqw, "%s row %d .deqw", g->type, g->row);
    }
}

/* ------------------------------------------------------------ API */

static void test_api(void)
{
    float x[512] = {0}, y[512];
    uint8_t q[1024];
    CHECK(mf_can_quantize(MF_Q4_K) && mf_can_dequantize(MF_Q4_K));
    CHECK(!mf_can_quantize(MF_Q8_K) && mf_can_dequantize(MF_Q8_K));
    CHECK(mf_can_quantize(MF_MXFP4) && mf_can_dequantize(MF_MXFP4));
    CHECK(!mf_can_quantize(MF_I32) && !mf_can_dequantize(MF_U8));
    CHECK(mf_quant_requires_imatrix(MF_IQ2_XXS) && mf_quant_requires_imatrix(MF_IQ1_S));
    CHECK(!mf_quant_requires_imatrix(MF_IQ1_M) && !mf_quant_requires_imatrix(MF_Q2_K));
    CHECK(mf_quantize_rows(MF_Q4_0, x, q, 1, 48, NULL) == -1);  /* not a block multiple */
    CHECK(mf_quantize_rows(MF_Q4_K, x, q, 1, 128, NULL) == -1); /* super-block is 256 */
    CHECK(mf_quantize_rows(MF_Q4_0, x, q, -1, 32, NULL) == -1);
    CHECK(mf_quantize_rows(MF_Q4_0, x, q, 0, 32, NULL) == 0);
    CHECK(mf_quantize_rows(MF_DTYPE_INVALID, x, q, 1, 32, NULL) == -1);
    CHECK(mf_dequantize_row(MF_Q4_0, q, y, 33) == -1);
    CHECK(mf_dequantize_row(MF_Q8_1, q, y, 32) == -1); /* ggml has no to_float for Q8_1 */

    /* plain float types */
    x[0] = 1.0f;
    x[1] = -0x1p-24f;
    x[2] = 3.14159265f;
    CHECK(mf_quantize_rows(MF_F16, x, q, 1, 3, NULL) == 0);
    CHECK(mf_rd16le(q) == 0x3c00 && mf_rd16le(q + 2) == 0x8001 && mf_rd16le(q + 4) == 0x4248);
    CHECK(mf_dequantize_row(MF_F16, q, y, 3) == 0 && y[0] == 1.0f && y[1] == -0x1p-24f);
    CHECK(mf_quantize_rows(MF_BF16, x, q, 1, 3, NULL) == 0 && mf_rd16le(q + 4) == 0x4049);
    CHECK(mf_dequantize_row(MF_BF16, q, y, 1) == 0 && y[0] == 1.0f);
    CHECK(mf_quantize_rows(MF_F32, x, q, 1, 3, NULL) == 0 && mf_rd32le(q + 8) == fbits(x[2]));

    /* Q8_K: f32 d, int8 values */
    memset(q, 0, 292);
    mf_wr32le(q, fbits(0.5f));
    q[4] = (uint8_t)-3;
    CHECK(mf_dequantize_row(MF_Q8_K, q, y, 256) == 0 && y[0] == -1.5f && y[1] == 0.0f);
    /* MXFP4: e = 128 -> d = 2^0; nibble 7 -> 12, nibble 0xf -> -12 */
    q[0] = 128;
    q[1] = 0xf7;
    CHECK(mf_dequantize_row(MF_MXFP4, q, y, 32) == 0 && y[0] == 12.0f && y[16] == -12.0f);
}

/* Every thread count gives the single-thread bytes. */
static void test_threads(void)
{
    enum { ROWS = 7, N = 512 };
    static float x[ROWS * N], w[N];
    static uint8_t a[ROWS * 576], b[ROWS * 576]; /* 576 >= the largest row (Q8_0: 544) */
    uint32_t s = 12345;
    for (int i = 0; i < ROWS * N; i++) {
        s = s * 1664525u + 1013904223u;
        x[i] = (float)((int32_t)s >> 8) * 0x1p-20f;
    }
    for (int i = 0; i < N; i++)
        w[i] = 0.5f + (float)(i % 7);
    const mf_dtype types[] = {MF_Q4_0, MF_Q5_1, MF_Q8_0, MF_Q3_K, MF_Q4_K, MF_Q6_K, MF_IQ4_XS, MF_IQ2_XS, MF_IQ3_S, MF_IQ1_M};
    for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
        const mf_dtype_info *info = mf_dtype_info_of(types[t]);
        size_t nbytes = ROWS * (N / info->block_elems) * info->block_bytes;
        CHECK(mf_quantize_rows(types[t], x, a, ROWS, N, w) == 0);
        for (int nt = 1; nt <= 9; nt += 2) {
            memset(b, 0xaa, sizeof(b));
            CHECK(mf_quantize_rows_mt(types[t], x, b, ROWS, N, w, nt) == 0);
            CHECKF(!memcmp(a, b, nbytes), "%s with %d threads", mf_dtype_name(types[t]), nt);
        }
    }
}

/* Non-finite and extreme inputs: no crash, no sanitizer report, and the
 * output keeps its size. */
static void test_hostile_values(void)
{
    float x[256], w[256], y[256];
    uint8_t q[292];
    for (int i = 0; i < 256; i++) {
        const float vals[] = {INFINITY, -INFINITY, NAN, 0x1p-149f, -0x1p-149f, 3e38f, -3e38f, 0.0f, -0.0f, 1e-30f};
        x[i] = vals[i % 10];
        w[i] = i % 3 ? 1.0f : 0.0f;
    }
    const mf_dtype types[] = {MF_Q4_0,  MF_Q4_1,  MF_Q5_0,    MF_Q5_1,   MF_Q8_0,  MF_Q2_K,  MF_Q3_K,
                              MF_Q4_K,  MF_Q5_K,  MF_Q6_K,    MF_IQ4_NL, MF_IQ4_XS, MF_TQ1_0, MF_TQ2_0,
                              MF_IQ2_XXS, MF_IQ2_XS, MF_IQ2_S, MF_IQ3_XXS, MF_IQ3_S, MF_IQ1_S, MF_IQ1_M};
    for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
        if (!mf_quant_requires_imatrix(types[t])) {
            CHECK(mf_quantize_rows(types[t], x, q, 1, 256, NULL) == 0);
            CHECK(mf_dequantize_row(types[t], q, y, 256) == 0);
        }
        CHECK(mf_quantize_rows(types[t], x, q, 1, 256, w) == 0);
        CHECK(mf_dequantize_row(types[t], q, y, 256) == 0);
    }
}

/* The lattice i-quants on inputs where ggml aborts or divides by zero (all
 * importance weights zero, huge values whose squares overflow, tiny ones,
 * a lone spike): the output is defined, and dequantizes. */
static void test_iq_degenerate(void)
{
    const mf_dtype types[] = {MF_IQ2_XXS, MF_IQ2_XS, MF_IQ2_S, MF_IQ3_XXS, MF_IQ3_S, MF_IQ1_S, MF_IQ1_M};
    static float x[512], w[512], y[512];
    uint8_t q[2][256];
    for (int kind = 0; kind < 5; kind++) {
        for (int i = 0; i < 512; i++) {
            float r = sinf((float)i * 1.7f);
            x[i] = kind == 1 ? r * 1e30f : kind == 2 ? r * 1e-30f : kind == 3 ? (i == 77 ? 5.0f : 0.0f) : r;
            w[i] = kind == 0 ? 0.0f : kind == 4 ? (i % 2 ? 1e30f : 0.0f) : 1.0f;
        }
        for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
            memset(q, 0, sizeof(q));
            CHECK(mf_quantize_rows(types[t], x, q[0], 2, 256, w) == 0);
            CHECK(mf_quantize_rows(types[t], x, q[1], 2, 256, w) == 0);
            CHECKF(!memcmp(q[0], q[1], sizeof(q[0])), "%s kind %d deterministic", mf_dtype_name(types[t]), kind);
            CHECK(mf_dequantize_row(types[t], q[0], y, 512) == 0);
        }
    }
}

/* The AVX2 Q8_0 path (when the CPU has it) equals the scalar kernel on
 * random blocks, rounding ties, NaN, infinities and subnormal scales. */
static void test_simd_q8_0(void)
{
    enum { NB = 4000 };
    static float x[NB * 32];
    static uint8_t a[NB * 34], b[NB * 34];
    uint32_t s = 777;
    for (int ib = 0; ib < NB; ib++) {
        float *xb = x + ib * 32;
        int kind = ib % 8;
        float scale = ldexpf(1.0f, (int)(s % 40) - 20);
        for (int j = 0; j < 32; j++) {
            s = s * 1664525u + 1013904223u;
            float r = (float)((int32_t)s >> 8) * 0x1p-23f; /* [-1, 1) */
            switch (kind) {
            case 0: xb[j] = r * scale; break;
            case 1: xb[j] = j ? ((float)(s % 254) - 127.0f + 0.5f) * scale : 127 * scale; break; /* ties, d = scale */
            case 2: xb[j] = r * 0x1p-140f; break;                                                  /* 1/d overflows */
            case 3: xb[j] = j == 5 ? NAN : r; break;
            case 4: xb[j] = j == 9 ? -INFINITY : r; break;
            case 5: xb[j] = (j & 1) ? -0.0f : 0.0f; break;
            case 6: xb[j] = r * 3e38f; break;
            default: xb[j] = (float)((int)(s % 255) - 127) * scale; break;
            }
        }
    }
    CHECK(mf_quantize_rows(MF_Q8_0, x, a, 1, NB * 32, NULL) == 0);
    for (int ib = 0; ib < NB; ib++)
        mq_quant_q8_0_scalar_block(x + ib * 32, b + ib * 34);
    int bad = 0;
    for (int ib = 0; ib < NB; ib++)
        bad += memcmp(a + ib * 34, b + ib * 34, 34) != 0;
    CHECKF(bad == 0, "%d of %d Q8_0 blocks differ between the vector and scalar paths", bad, NB);
}

/* Q4_0 and Q5_0 reference blocks (AVX2 path when the CPU has it) against
 * ggml's formula written out here: max by magnitude (first wins, +0 when
 * all zero), d = max/-nmax, (int8_t)(x*id + nmax + 0.5) capped, on blocks
 * with rounding ties, signed zeros, NaN, infinities and huge values. */
static void test_simd_q4_q5_ref(void)
{
    enum { NB = 600 };
    static float x[NB * 32];
    static uint8_t q4[NB * 18], q5[NB * 22];
    uint32_t s = 99;
    for (int ib = 0; ib < NB; ib++) {
        float scale = ldexpf(1.0f, (int)(s % 30) - 15);
        for (int j = 0; j < 32; j++) {
            s = s * 1664525u + 1013904223u;
            float r = (float)((int32_t)s >> 8) * 0x1p-23f;
            switch (ib % 7) {
            case 0: x[ib * 32 + j] = r * scale; break;
            case 1: x[ib * 32 + j] = j == 0 ? -8 * scale : ((float)(s % 16) - 7.5f) * scale; break; /* ties */
            case 2: x[ib * 32 + j] = j % 3 ? -0.0f : 0.0f; break;
            case 3: x[ib * 32 + j] = j == 7 ? NAN : r; break;
            case 4: x[ib * 32 + j] = j == 2 ? -INFINITY : r; break;
            case 5: x[ib * 32 + j] = r * 3e38f; break;
            default: x[ib * 32 + j] = (j % 2 ? 1.0f : -1.0f) * scale; break; /* +-v: first wins */
            }
        }
    }
    CHECK(mf_quantize_rows(MF_Q4_0, x, q4, 1, NB * 32, NULL) == 0);
    CHECK(mf_quantize_rows(MF_Q5_0, x, q5, 1, NB * 32, NULL) == 0);
    int bad = 0;
    for (int ib = 0; ib < NB; ib++) {
        const float *xb = x + ib * 32;
        float amax = 0, max = 0;
        for (int j = 0; j < 32; j++)
            if (amax < fabsf(xb[j]))
                amax = fabsf(xb[j]), max = xb[j];
        for (int nmax = 8; nmax <= 16; nmax += 8) {
            const uint8_t *blk = nmax == 8 ? q4 + ib * 18 : q5 + ib * 22;
            const float d = max / -nmax, id = d ? 1.0f / d : 0.0f;
            bad += mf_rd16le(blk) != mf_f32_to_f16(d);
            for (int j = 0; j < 32; j++) {
                int l = mq_min(2 * nmax - 1, mq_to_i8(xb[j] * id + (nmax + 0.5f))) & (2 * nmax - 1);
                int got = nmax == 8 ? (blk[2 + j % 16] >> (j < 16 ? 0 : 4)) & 15
                                    : ((blk[6 + j % 16] >> (j < 16 ? 0 : 4)) & 15) |
                                          (int)((mf_rd32le(blk + 2) >> j) & 1) << 4;
                bad += got != l;
            }
        }
    }
    CHECKF(bad == 0, "%d Q4_0/Q5_0 reference fields differ from ggml's formula (AVX2: %d)", bad,
           (int)mq_cpu_has_avx2());
}

/* The 32-block types' imatrix path batches 8 blocks; a row of 10 blocks
 * (a batch and 2 left over) must give the bytes of an 8-block row and a
 * 2-block row. Every block holds the same magnitudes (signs and order
 * vary), so the row's mean square, which the weights use, is exactly the
 * same for all three rows. */
static void test_imatrix_batches(void)
{
    static const float mags[8] = {1, 0.5f, 2, 0.25f, 1.5f, 0.75f, 3, 1.25f};
    float x[320], w[320];
    uint8_t whole[320], parts[320];
    uint32_t s = 5;
    for (int i = 0; i < 320; i++) {
        s = s * 1664525u + 1013904223u;
        x[i] = mags[(i + (s >> 29)) % 8] * (s & 0x100 ? -1.0f : 1.0f);
        w[i] = 0.5f + (float)((s >> 12) % 64) / 16.0f;
    }
    for (int i = 0; i < 320; i += 32) { /* fix the multiset per block: one of each magnitude, 4 times */
        for (int j = 0; j < 32; j++)
            x[i + j] = copysignf(mags[(j * 5 + i / 32) % 8], x[i + j]);
    }
    const mf_dtype types[] = {MF_Q4_0, MF_Q4_1, MF_Q5_0, MF_Q5_1};
    for (size_t t = 0; t < 4; t++) {
        const mf_dtype_info *info = mf_dtype_info_of(types[t]);
        const size_t bb = info->block_bytes;
        CHECK(mf_quantize_rows(types[t], x, whole, 1, 320, w) == 0);
        CHECK(mf_quantize_rows(types[t], x, parts, 1, 256, w) == 0);
        CHECK(mf_quantize_rows(types[t], x + 256, parts + 8 * bb, 1, 64, w + 256) == 0);
        CHECKF(!memcmp(whole, parts, 10 * bb), "%s: batched and left-over blocks", mf_dtype_name(types[t]));
    }
}

/* The batched searches (eight groups, AVX2 lanes when the CPU has them)
 * equal eight scalar calls, bit for bit, on random groups and edge cases:
 * constant, all-zero, all-positive, NaN, infinities, huge and tiny values,
 * zero weights. */
static void fill_group(float *x, float *w, int n, int kind, uint32_t *s)
{
    for (int i = 0; i < n; i++) {
        *s = *s * 1664525u + 1013904223u;
        float r = (float)((int32_t)*s >> 8) * 0x1p-23f;
        switch (kind % 10) {
        case 0: x[i] = r; break;
        case 1: x[i] = 0.75f; break;                    /* constant: max == min */
        case 2: x[i] = 0.0f; break;                     /* all zero */
        case 3: x[i] = fabsf(r) + 1.0f; break;          /* all positive: min clamps to 0 */
        case 4: x[i] = i == 3 ? NAN : r; break;
        case 5: x[i] = i == 5 ? INFINITY : r; break;
        case 6: x[i] = r * 3e37f; break;
        case 7: x[i] = r * 1e-38f; break;
        case 8: x[i] = (float)((int)(*s % 7) - 3); break; /* ties */
        default: x[i] = i ? r * 1e-3f : 50.0f; break;     /* a spike */
        }
        w[i] = kind >= 10 ? 0.0f : kind % 3 ? fabsf(r) + 0.1f : 1.0f;
    }
}

static void test_simd_searches(void)
{
    uint32_t s = 4242;
    int bad = 0, runs = 0;
    for (int trial = 0; trial < 300; trial++) {
        const int n = trial % 2 ? 32 : 16;
        float x[256], w[256], sc_a[8], sc_b[8], mn_a[8], mn_b[8];
        uint8_t La[256], Lb[256], Laux[32];
        int8_t Qa[256], Qb[256];
        for (int j = 0; j < 8; j++)
            fill_group(x + j * n, w + j * n, n, (trial * 8 + j) % 11, &s);
        for (int v3 = 0; v3 < 2; v3++) {
            const int nmax = trial % 3 == 0 ? 3 : trial % 3 == 1 ? 15 : 31;
            const bool mad = trial % 4 == 1;
            mq_make_qkx_quants8(v3, n, nmax, x, w, La, sc_a, mn_a, -0.5f, 0.1f, 15, mad);
            for (int j = 0; j < 8; j++)
                sc_b[j] = v3 ? mq_make_qkx3_quants(n, nmax, x + j * n, w + j * n, Lb + j * n, &mn_b[j], Laux, -0.5f,
                                                   0.1f, 15, mad)
                             : mq_make_qkx2_quants(n, nmax, x + j * n, w + j * n, Lb + j * n, &mn_b[j], Laux, -0.5f,
                                                   0.1f, 15, mad);
            bad += memcmp(La, Lb, (size_t)(8 * n)) || memcmp(sc_a, sc_b, sizeof(sc_a)) ||
                   memcmp(mn_a, mn_b, sizeof(mn_a));
            runs++;
        }
        for (int weighted = 0; weighted < 2; weighted++) {
            const int nmax = trial % 2 ? 32 : 4;
            mq_make_qx_quants8(n, nmax, x, Qa, 1, weighted ? w : NULL, sc_a);
            for (int j = 0; j < 8; j++)
                sc_b[j] = mq_make_qx_quants(n, nmax, x + j * n, Qb + j * n, 1, weighted ? w + j * n : NULL);
            bad += memcmp(Qa, Qb, (size_t)(8 * n)) || memcmp(sc_a, sc_b, sizeof(sc_a));
            runs++;
        }
        if (n == 32 && mq_simd_iq4_scales8(x, w, mq_iq4_values(), 7, sc_a)) {
            for (int j = 0; j < 8; j++)
                sc_b[j] = mq_iq4_block_scale_scalar(x + j * n, w + j * n, 7);
            bad += memcmp(sc_a, sc_b, sizeof(sc_a)) != 0;
            runs++;
        }
    }
    /* IQ4 rounding ties: max -127 makes the trial itry = 0 id = 1, and the
     * other values lie half-way between two levels */
    const int8_t *v = mq_iq4_values();
    float x[256], w[256], sa[8], sb[8];
    for (int j = 0; j < 8; j++)
        for (int i = 0; i < 32; i++) {
            x[32 * j + i] = i == 0 ? -127.0f : (v[(i + j) % 15] + v[(i + j) % 15 + 1]) * 0.5f;
            w[32 * j + i] = 1.0f + (float)(i % 3);
        }
    if (mq_simd_iq4_scales8(x, w, v, 7, sa)) {
        for (int j = 0; j < 8; j++)
            sb[j] = mq_iq4_block_scale_scalar(x + 32 * j, w + 32 * j, 7);
        bad += memcmp(sa, sb, sizeof(sa)) != 0;
    }
    CHECKF(bad == 0, "%d of %d batched searches differ from the scalar ones (AVX2: %d)", bad, runs,
           (int)mq_cpu_has_avx2());
    CHECK(runs >= 1200);
}

int main(void)
{
    test_lattice_first_use(); /* first: it must be the first use of the IQ1 grid */
    test_lattices();
    test_half();
    test_q8_0_block();
    test_q4_0_block();
    test_q4_1_block();
    test_q5_blocks();
    test_iq4_nl_block();
    test_ternary_blocks();
    test_iq_deq_blocks();
    test_iq_deq_blocks2();
    test_kgrids();
    test_goldens();
    test_api();
    test_threads();
    test_hostile_values();
    test_iq_degenerate();
    test_simd_q8_0();
    test_simd_searches();
    test_simd_q4_q5_ref();
    test_imatrix_batches();
    return tl_report("quant");
}
