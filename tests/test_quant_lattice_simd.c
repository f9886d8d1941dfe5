/* test_quant_lattice_simd.c - the vector search of the lattice i-quants
 * (lib/quant/quant_simd_lattice.c) against the scalar code it replaces, on
 * every grid: the neighbour search for every lattice point that has a
 * neighbour list, and the trial-scale search of whole sub-blocks, on random
 * data and on edge cases (all-zero values, tiny and subnormal values,
 * imatrix zeros that make every distance equal, NaN and inf), with all
 * kernels and with AVX2 only. Results must be the same bits: levels,
 * on/off-grid flags, and the float sums compared as bytes. On a CPU
 * without AVX2 the vector side declines and that is checked instead. */
#include "testlib.h"

#include "quant/iq_lattice.h"

#include <math.h>

static uint64_t rng = 0x2545f4914f6cdd1dull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}
static float unif(void) { return (float)(next() >> 40) * 0x1p-24f; } /* [0, 1) */

static const char *const names[MQ_LAT_COUNT] = {"IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ1", "IQ3_XXS", "IQ3_S"};
static const unsigned tiers[] = {MF_QUANT_ALL, MF_QUANT_AVX2 | MF_QUANT_F16C};
static const char *const tier_names[] = {"all kernels", "AVX2 only"};

enum { KINDS = 8 };

/* n magnitudes and weights of kind `kind` (what the quantizers pass: |x|
 * and sqrt of the weights, or the weights themselves). */
static void fill(int kind, int n, float *x, float *w)
{
    for (int i = 0; i < n; ++i) {
        float g = (unif() + unif() + unif()) * 0.02f;
        float wi = 0.1f + 3 * unif();
        switch (kind) {
        case 0: x[i] = g; w[i] = wi; break;                                 /* weights-like */
        case 1: x[i] = g; w[i] = i % 3 ? wi : 0; break;                     /* imatrix zeros */
        case 2: x[i] = g; w[i] = 0; break;                                  /* all weights zero: every distance 0 */
        case 3: x[i] = 0; w[i] = wi; break;                                 /* all zeros */
        case 4: x[i] = g * 1e-30f; w[i] = wi; break;                        /* tiny: distances underflow */
        case 5: x[i] = (float)(next() % 5) * 0x1p-140f; w[i] = wi; break;   /* subnormal */
        case 6: x[i] = i == 1 ? NAN : g; w[i] = wi; break;                  /* NaN: no distance below FLT_MAX */
        default: x[i] = i == 2 ? INFINITY : (float)(next() % 8); w[i] = i % 2 ? wi : 1; break; /* inf, ties */
        }
    }
}

/* Every list of every grid: mq_simd_lat_best_neighbour == the scalar
 * mq_lat_best_neighbour, at a few scales per kind. */
static void test_neighbours(void)
{
    const bool vec = mf_quant_simd_level() & MF_QUANT_AVX2;
    for (int id = 0; id < MQ_LAT_COUNT; ++id) {
        const mq_lattice *lat = mq_lattice_get((mq_lattice_id)id);
        CHECKF(lat != NULL, "%s: no lattice", names[id]);
        if (!lat)
            continue;
        long lists = 0, long_lists = 0, bad = 0, declined = 0;
        for (uint32_t u = 0; u < lat->nmap; ++u) {
            const uint16_t *nb = mq_lat_neighbours(lat, u);
            if (!nb)
                continue;
            lists++;
            long_lists += nb[0] > MQ_LAT_LANES;
            for (int kind = 0; kind < KINDS; ++kind) {
                float x[8], w[8];
                fill(kind, lat->dim, x, w);
                const float scales[] = {0.004f + 0.01f * unif(), 1.0f, 0x1p-130f};
                for (int sc = 0; sc < 3; ++sc) {
                    int8_t ref[8], got[8];
                    mq_lat_best_neighbour(lat, nb, x, w, scales[sc], ref);
                    for (int t = 0; t < 2; ++t) {
                        mf_quant_set_simd(tiers[t]);
                        memset(got, 0x7f, sizeof(got));
                        if (!mq_simd_lat_best_neighbour(lat, u, scales[sc], x, w, got))
                            declined++;
                        else
                            bad += memcmp(got, ref, (size_t)lat->dim) != 0;
                    }
                }
            }
        }
        mf_quant_set_simd(MF_QUANT_ALL);
        CHECKF(bad == 0, "%s: %ld of %ld neighbour searches differ from the scalar code", names[id], bad, lists * 48);
        CHECKF(vec ? declined == 0 : declined == lists * 48, "%s: the vector search declined %ld times (AVX2: %d)",
               names[id], declined, vec);
        CHECKF(lists > 1000, "%s: only %ld lists", names[id], lists);
        printf("%-8s %5ld lists (%ld longer than %d lanes): neighbour search %s\n", names[id], lists, long_lists,
               MQ_LAT_LANES, vec ? "vector == scalar" : "scalar only here");
    }
}

/* The sub-block searches' trials as the quantizers run them. */
typedef struct trial_spec {
    mq_lattice_id id;
    int n, nstep;
    float base, step; /* id[s] = (base + is*step) / max */
} trial_spec;

static const trial_spec specs[] = {
    {MQ_LAT_IQ2_XXS, 32, 6, 5, 0.1f}, {MQ_LAT_IQ2_XS, 16, 9, 5, 0.1f},   {MQ_LAT_IQ2_S, 16, 9, 5, 0.1f},
    {MQ_LAT_IQ3_XXS, 32, 15, 15, 0.2f}, {MQ_LAT_IQ3_S, 32, 9, 15, 0.2f}, {MQ_LAT_IQ1, 32, 15, 5, 0.1f},
};

/* true when the two trial sets agree in every field the callers read */
static bool same_trials(const mq_trials *a, const mq_trials *b, int ns, int groups)
{
    const uint32_t mask = ns == 32 ? ~0u : (1u << ns) - 1;
    for (int k = 0; k < groups; ++k)
        if ((a->off_grid[k] ^ b->off_grid[k]) & mask || memcmp(a->pt[k], b->pt[k], sizeof(uint32_t) * (size_t)ns))
            return false;
    return !memcmp(a->sumqx, b->sumqx, sizeof(float) * (size_t)ns) &&
           !memcmp(a->sumq2, b->sumq2, sizeof(float) * (size_t)ns);
}

static void test_trials(void)
{
    enum { BLOCKS = 400 };
    const bool vec = mf_quant_simd_level() & MF_QUANT_AVX2;
    for (size_t sp = 0; sp < sizeof(specs) / sizeof(specs[0]); ++sp) {
        const trial_spec *s = &specs[sp];
        const mq_lattice *lat = mq_lattice_get(s->id);
        if (!lat)
            continue;
        const int ns = 2 * s->nstep + 1, groups = s->n / lat->dim;
        long bad = 0, declined = 0, off = 0;
        for (int b = 0; b < BLOCKS; ++b) {
            float x[32], waux[32], weight[32], ids[MQ_TRIALS_MAX];
            fill(b % KINDS, s->n, x, waux);
            float max = 0;
            for (int i = 0; i < s->n; ++i) {
                weight[i] = waux[i] * waux[i];
                max = x[i] > max ? x[i] : max;
            }
            if (b % KINDS == 3)
                max = 0; /* ids all inf: what a caller that did not skip would pass */
            for (int is = -s->nstep; is <= s->nstep; ++is)
                ids[is + s->nstep] = (s->base + is * s->step) / max;
            mq_trials ref, got;
            mq_lat_trials_scalar(lat, s->n, ids, ns, x, weight, waux, &ref);
            for (int k = 0; k < groups; ++k)
                off += __builtin_popcount(ref.off_grid[k]);
            for (int t = 0; t < 2; ++t) {
                mf_quant_set_simd(tiers[t]);
                memset(&got, 0x5a, sizeof(got));
                if (!mq_simd_lat_trials(lat, s->n, ids, ns, x, weight, waux, &got))
                    declined++;
                else if (!same_trials(&ref, &got, ns, groups)) {
                    if (!bad)
                        fprintf(stderr, "%s: block %d (kind %d) differs with %s\n", names[s->id], b, b % KINDS,
                                tier_names[t]);
                    bad++;
                }
            }
        }
        mf_quant_set_simd(MF_QUANT_ALL);
        CHECKF(bad == 0, "%s: %ld of %d trial searches differ from the scalar code", names[s->id], bad, 2 * BLOCKS);
        CHECKF(vec ? declined == 0 : declined == 2 * BLOCKS, "%s: the vector trials declined %ld times",
               names[s->id], declined);
        /* the data must reach the neighbour search, not only grid points */
        CHECKF(off > BLOCKS, "%s: only %ld groups off the grid", names[s->id], off);
    }
    /* the scalar code itself: a group of zeros rounds to level 0 everywhere */
    const mq_lattice *lat = mq_lattice_get(MQ_LAT_IQ2_S);
    if (lat) {
        float z[16] = {0}, w[16], id = 1.0f;
        for (int i = 0; i < 16; ++i)
            w[i] = 1;
        mq_trials t;
        mq_lat_trials_scalar(lat, 16, &id, 1, z, w, w, &t);
        int8_t L[16];
        mq_trials_levels(lat, &t, 16, 0, L);
        bool zero = t.pt[0][0] == 0 && t.pt[1][0] == 0;
        for (int i = 0; i < 16; ++i)
            zero = zero && L[i] == 0;
        /* q = 1 for every value: sum w*q*q = 16, sum w*x*q = 0 */
        CHECK(zero && t.sumq2[0] == 16.0f && t.sumqx[0] == 0.0f);
    }
}

int main(void)
{
    test_neighbours();
    test_trials();
    printf("RESULT quant_lattice_simd %d %d\n", tl_passed, tl_failed);
    return tl_failed != 0;
}
