/* iq_lattice.h - the search structures of ggml's i-quant quantizers
 * (iq_lattice.c): each grid's points as quantization levels, a map from
 * every lattice point to its grid index, and for the points that are not on
 * the grid a list of the nearest grid points, built on first use.
 *
 * Equivalent to what ggml's iq2xs_init_impl / iq3xs_init_impl build: a
 * lattice point u packs one level l per value (2 bits for the IQ2/IQ1
 * grids, 3 bits for IQ3), value i in bits [b*i, b*i+b); the grid stores the
 * level as 2l+1. The neighbours of an off-grid point are every grid point
 * whose squared distance (in 2l+1 units) is among the nwant smallest
 * distinct distances, ordered by (distance, grid index). Only points whose
 * levels the quantizers can produce get a list (2-bit levels 0..2). */
#ifndef MF_IQ_LATTICE_H
#define MF_IQ_LATTICE_H
#include "quant/qimpl.h"

#include <float.h>

typedef enum mq_lattice_id {
    MQ_LAT_IQ2_XXS, /* 256 points, 2 nearest distances */
    MQ_LAT_IQ2_XS,  /* 512, 2 */
    MQ_LAT_IQ2_S,   /* 1024, 1 */
    MQ_LAT_IQ1,     /* 2048 (IQ1_S and IQ1_M), 3 */
    MQ_LAT_IQ3_XXS, /* 256, 4 values of 3 bits, 2 */
    MQ_LAT_IQ3_S,   /* 512, 3 */
    MQ_LAT_COUNT
} mq_lattice_id;

typedef struct mq_lattice {
    int ngrid;             /* grid points */
    int dim;               /* values per point: 8 (2-bit levels) or 4 (3-bit) */
    int bits;              /* bits per level in a lattice point */
    uint32_t nmap;         /* lattice points covered by map */
    const int8_t *grid;    /* ngrid x dim levels 2l+1 */
    const int32_t *map;    /* >= 0 grid index; MQ_LAT_NONE; else -(1 + start of its list in neigh) */
    const uint16_t *neigh; /* per list: count, then grid indices */
    /* The vector search's view (quant_simd_lattice.c): vmap[u] is map[u] for
     * points on the grid and for MQ_LAT_NONE; a point with a neighbour list
     * has -(1 + offset) of its list in npts: the count, then each
     * candidate as its packed lattice point (the levels, `bits` each), the
     * count rounded up to MQ_LAT_LANES by repeating the first candidate. */
    const int32_t *vmap;
    const uint16_t *npts;
} mq_lattice;

#define MQ_LAT_LANES 16

#define MQ_LAT_NONE INT32_MIN

/* The lattice, built on first use (thread-safe); NULL when memory ran out
 * (then it stays NULL). */
const mq_lattice *mq_lattice_get(mq_lattice_id id);

/* Grid index of lattice point u, or -1 when u is not on the grid. */
static inline int mq_lat_index(const mq_lattice *lat, uint32_t u)
{
    return u < lat->nmap && lat->map[u] >= 0 ? lat->map[u] : -1;
}

/* Neighbour list (count, indices) of an off-grid point u, or NULL. */
static inline const uint16_t *mq_lat_neighbours(const mq_lattice *lat, uint32_t u)
{
    if (u >= lat->nmap || lat->map[u] >= 0 || lat->map[u] == MQ_LAT_NONE)
        return NULL;
    return lat->neigh + (-(int64_t)lat->map[u] - 1);
}

static inline const int8_t *mq_lat_point(const mq_lattice *lat, int index) { return lat->grid + index * lat->dim; }

/* ggml's iq2_find_best_neighbour / iq3_find_best_neighbour: of the listed
 * grid points, the one minimising sum w*(scale*q - x)^2 (first wins); its
 * levels go to L. When no distance is below FLT_MAX (NaN or infinite
 * input) ggml aborts; this takes the first neighbour. */
static inline int mq_lat_best_neighbour(const mq_lattice *lat, const uint16_t *nb, const float *xval,
                                        const float *weight, float scale, int8_t *L)
{
    float best_d2 = FLT_MAX;
    int grid_index = -1;
    for (int j = 1; j <= nb[0]; ++j) {
        const int8_t *pg = mq_lat_point(lat, nb[j]);
        float d2 = 0;
        for (int i = 0; i < lat->dim; ++i) {
            float q = pg[i];
            float diff = scale * q - xval[i];
            d2 += weight[i] * diff * diff;
        }
        if (d2 < best_d2) {
            best_d2 = d2;
            grid_index = nb[j];
        }
    }
    if (grid_index < 0)
        grid_index = nb[1];
    const int8_t *pg = mq_lat_point(lat, grid_index);
    for (int i = 0; i < lat->dim; ++i)
        L[i] = (int8_t)((pg[i] - 1) / 2);
    return grid_index;
}

/* The vector version of mq_lat_best_neighbour for the list of lattice point
 * u (quant_simd_lattice.c): the same levels, or false when the CPU (or
 * mf_quant_set_simd) leaves only the scalar code. */
bool mq_simd_lat_best_neighbour(const mq_lattice *lat, uint32_t u, float scale, const float *xval,
                                const float *weight, int8_t *L);

/* quant_iq1.c's neighbour search (iq1_best_neighbour) for the list of
 * lattice point u, distances with q = xg[level]: the best listed grid
 * index, or -1 when the CPU leaves only the scalar code or no distance is
 * below FLT_MAX (the scalar code then scans the whole grid). */
int mq_simd_iq1_best_neighbour(const mq_lattice *lat, uint32_t u, float scale, const float *xg, const float *xval,
                               const float *weight);

/* Levels L (dim of them) as a lattice point. */
static inline uint32_t mq_lat_pack(const mq_lattice *lat, const int8_t *L)
{
    uint32_t u = 0;
    for (int i = 0; i < lat->dim; ++i)
        u |= (uint32_t)(uint8_t)L[i] << (lat->bits * i);
    return u & 0xffff; /* ggml packs into a uint16_t */
}

/* The level ggml's searches give x at inverse scale id:
 * nearest_int(0.5*(id*x - 1)) clamped to [0, kmax-1]. */
static inline int8_t mq_iq_level(float id, float x, int kmax)
{
    return (int8_t)mq_clamp(mq_nearest_int(0.5f * (id * x - 1)), 0, kmax - 1);
}

/* kmax of the levels ggml's searches use on a grid: levels 0..2 of the
 * 2-bit grids (IQ2), 0..7 of the 3-bit ones (IQ3). */
static inline int mq_lat_kmax(const mq_lattice *lat) { return lat->bits == 2 ? 3 : 8; }

/* One group (dim values) rounded at inverse scale id as ggml's IQ2/IQ3
 * searches round it: levels mq_iq_level, and when that point is off the
 * grid, the best listed neighbour at `scale` (iq2_find_best_neighbour /
 * iq3_find_best_neighbour) replaces them, found by the vector search when
 * `vec` allows. Returns whether the point was on the grid. */
static inline bool mq_lat_round_as(const mq_lattice *lat, float id, float scale, const float *xval,
                                   const float *waux, int8_t *L, bool vec)
{
    const int kmax = mq_lat_kmax(lat);
    for (int i = 0; i < lat->dim; ++i)
        L[i] = mq_iq_level(id, xval[i], kmax);
    uint32_t u = mq_lat_pack(lat, L);
    if (mq_lat_index(lat, u) >= 0)
        return true;
    const uint16_t *nb = mq_lat_neighbours(lat, u);
    if (nb && !(vec && mq_simd_lat_best_neighbour(lat, u, scale, xval, waux, L)))
        mq_lat_best_neighbour(lat, nb, xval, waux, scale, L);
    return false;
}

static inline bool mq_lat_round(const mq_lattice *lat, float id, float scale, const float *xval, const float *waux,
                                int8_t *L)
{
    return mq_lat_round_as(lat, id, scale, xval, waux, L, true);
}

/* The trial scales of one sub-block (n values, n/dim groups), as the IQ2 and
 * IQ3 searches run them: for trial s, every group rounded at inverse scale
 * id[s] with mq_lat_round(lat, id[s], 1/id[s], ...) and the sums of
 * mq_iq_sums over the levels. The caller then picks the best trial in order,
 * as ggml does. */
#define MQ_TRIALS_MAX 32
typedef struct mq_trials {
    uint32_t pt[8][MQ_TRIALS_MAX]; /* levels of group k at trial s, packed as mq_lat_pack */
    uint32_t off_grid[8];          /* bit s: group k was off the grid at trial s */
    float sumqx[MQ_TRIALS_MAX], sumq2[MQ_TRIALS_MAX];
} mq_trials;

/* n <= 32, ns <= MQ_TRIALS_MAX (quant_iq_trials.c) */
void mq_lat_trials(const mq_lattice *lat, int n, const float *id, int ns, const float *xval, const float *weight,
                   const float *waux, mq_trials *t);
/* the scalar code of mq_lat_trials, and the vector one (false: no AVX2) */
void mq_lat_trials_scalar(const mq_lattice *lat, int n, const float *id, int ns, const float *xval,
                          const float *weight, const float *waux, mq_trials *t);
bool mq_simd_lat_trials(const mq_lattice *lat, int n, const float *id, int ns, const float *xval, const float *weight,
                        const float *waux, mq_trials *t);

/* The best of ns trials in ggml's order: each that beats the best so far
 * (sumqx^2 / sumq2) sets *scale to its fit sumqx / sumq2. -1: none did
 * (*scale unchanged). */
static inline int mq_trials_best(const mq_trials *t, int ns, float *scale)
{
    float best = 0;
    int best_s = -1;
    for (int s = 0; s < ns; ++s) {
        const float sumqx = t->sumqx[s], sumq2 = t->sumq2[s];
        if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
            *scale = sumqx / sumq2;
            best = *scale * sumqx;
            best_s = s;
        }
    }
    return best_s;
}

/* Levels of lattice point u to L (dim of them). */
static inline void mq_lat_unpack(const mq_lattice *lat, uint32_t u, int8_t *L)
{
    for (int i = 0; i < lat->dim; ++i)
        L[i] = (int8_t)((u >> (lat->bits * i)) & ((1u << lat->bits) - 1));
}

/* Levels of the n values at trial s to L. */
static inline void mq_trials_levels(const mq_lattice *lat, const mq_trials *t, int n, int s, int8_t *L)
{
    for (int k = 0; k < n / lat->dim; ++k)
        mq_lat_unpack(lat, t->pt[k][s], L + lat->dim * k);
}

/* For 8 values: xval = |x|, and the 7 stored sign bits (bit i: x_i < 0).
 * When the count of negative values is odd, the value with the smallest
 * w*x*x has its sign flipped (in xval too), as the 8th sign is implied by
 * even parity (IQ2_XXS, IQ2_XS, IQ3_XXS). */
static inline uint8_t mq_iq_even_signs(const float *xb, const float *weight, float *xval)
{
    int nflip = 0;
    uint8_t s = 0;
    for (int i = 0; i < 8; ++i) {
        if (xb[i] >= 0) {
            xval[i] = xb[i];
        } else {
            xval[i] = -xb[i];
            ++nflip;
            s |= (uint8_t)(1 << i);
        }
    }
    if (nflip % 2) {
        int imin = 0;
        float min = weight[0] * xb[0] * xb[0];
        for (int i = 1; i < 8; ++i) {
            float ax = weight[i] * xb[i] * xb[i];
            if (ax < min) {
                min = ax;
                imin = i;
            }
        }
        xval[imin] = -xval[imin];
        s ^= (uint8_t)(1 << imin);
    }
    return s & 127;
}

/* sum w*x*q and sum w*q*q over levels L (q = 2L+1), in ggml's order. */
static inline void mq_iq_sums(int n, const float *weight, const float *xval, const int8_t *L, float *sumqx,
                              float *sumq2)
{
    float sqx = 0, sq2 = 0;
    for (int i = 0; i < n; ++i) {
        float w = weight[i];
        float q = 2 * L[i] + 1;
        sqx += w * xval[i] * q;
        sq2 += w * q * q;
    }
    *sumqx = sqx;
    *sumq2 = sq2;
}

/* sum of x^2, in order (ggml's sumx2 of a super-block) */
static inline float mq_sum_squares(const float *x, int n)
{
    float sumx2 = 0;
    for (int i = 0; i < n; ++i)
        sumx2 += x[i] * x[i];
    return sumx2;
}

/* The stored code l of a sub-block scale, scale ~ d*(2l+1):
 * nearest_int(0.5*(id*scale - 1)) clamped to [0, lmax]. */
static inline int mq_iq_scale_code(float id, float scale, int lmax)
{
    return mq_clamp(mq_nearest_int(0.5f * (id * scale - 1)), 0, lmax);
}

/* ggml's MAX(a, b): a > b ? a : b (b wins ties and NaN comparisons). */
static inline float mq_fmax_ggml(float a, float b) { return a > b ? a : b; }
/* The largest of x[0..n) by MAX, from the first (n >= 1). */
static inline float mq_max_ggml(const float *x, int n)
{
    float max = x[0];
    for (int i = 1; i < n; ++i)
        max = mq_fmax_ggml(max, x[i]);
    return max;
}

#endif /* MF_IQ_LATTICE_H */
