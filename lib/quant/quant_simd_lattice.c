/* quant_simd_lattice.c - the trial scales of the lattice i-quants' searches
 * (mq_lat_trials) and their neighbour search (mq_lat_best_neighbour) in
 * vector lanes, giving the scalar code's bits (iq_lattice.h).
 *
 * Two ways of filling lanes, each keeping every scalar operation and its
 * order:
 *  - trials: one trial scale per lane (8 with AVX2). The levels
 *    nearest_int(0.5*(id*x - 1)) are the scalar bit trick on the lane's
 *    float; the lattice point packs them with shifts; the sums w*x*q and
 *    w*q*q run over the values one by one, as mq_iq_sums does, in each lane.
 *    Grid look-ups and neighbour searches are per (trial, group).
 *  - neighbour search: one candidate grid point per lane (8 with AVX2, 16
 *    with AVX-512F), from the lists of packed points (mq_lattice.npts).
 *    Each lane computes sum w*(scale*q - x)^2 as the scalar loop does:
 *    scale*q from a table of scale*(2l+1) (the same IEEE product) indexed
 *    by the candidate's level of each value, then the sub, the muls
 *    grouped ((w*diff)*diff) and the adds over the values in order. The
 *    scalar loop keeps the first candidate with the smallest distance below
 *    FLT_MAX (strict `<`: NaN never wins); each lane keeps its own first
 *    strict minimum, and the lanes are merged by (distance, position): the
 *    same candidate. Padding lanes repeat the list's first candidate: equal
 *    distance, later position, so they never win.
 * No FMA anywhere: the target attributes do not enable it, and the build
 * has -ffp-contract=off. */
#include "quant/iq_lattice.h"

#ifdef MQ_X86_KERNELS
#include <immintrin.h>
#include <limits.h>

#define AVX2 __attribute__((target("avx2")))
#define AVX512 __attribute__((target("avx512f")))
#define INLINE inline __attribute__((always_inline))

/* The list of vmap entry v < 0 (not MQ_LAT_NONE): count, packed points. */
static INLINE const uint16_t *list_points(const mq_lattice *lat, int32_t v, int *count)
{
    const uint16_t *p = lat->npts + (-(int64_t)v - 1);
    *count = p[0];
    return p + 1;
}

/* ------------------------------------------------------------ AVX2 */

AVX2 static INLINE float hmin8(__m256 v)
{
    v = _mm256_min_ps(v, _mm256_permute2f128_ps(v, v, 1));
    v = _mm256_min_ps(v, _mm256_shuffle_ps(v, v, 0x4e));
    v = _mm256_min_ps(v, _mm256_shuffle_ps(v, v, 0xb1));
    return _mm256_cvtss_f32(v);
}

AVX2 static INLINE int hmin8i(__m256i v)
{
    v = _mm256_min_epi32(v, _mm256_permute2x128_si256(v, v, 1));
    v = _mm256_min_epi32(v, _mm256_shuffle_epi32(v, 0x4e));
    v = _mm256_min_epi32(v, _mm256_shuffle_epi32(v, 0xb1));
    return _mm256_cvtsi256_si32(v);
}

/* The searches take the levels' values q (value[l]: 2l+1 for the IQ2/IQ3
 * searches, IQ1's shifted -1/0/+1) as a table indexed by l mod 2^bits,
 * repeated to 16 entries, and multiply it by scale in the vector (the
 * scalar code's scale*q): vpermps reads the low 3 (8 lanes) or 4 (16
 * lanes) bits of each index, so a packed point shifted right by bits*i
 * indexes value i's level without masking off the levels above it. */
static const float odd_levels2[16] = {1, 3, 5, 7, 1, 3, 5, 7, 1, 3, 5, 7, 1, 3, 5, 7};
static const float odd_levels3[16] = {1, 3, 5, 7, 9, 11, 13, 15, 1, 3, 5, 7, 9, 11, 13, 15};

/* Distances of the 8 candidates whose packed points are pts. */
AVX2 static INLINE __m256 dist8(__m256i pts, int dim, int bits, __m256 sq, const float *xval, const float *weight)
{
    __m256 d2 = _mm256_setzero_ps();
#pragma GCC unroll 8
    for (int i = 0; i < dim; ++i) {
        __m256 q = _mm256_permutevar8x32_ps(sq, _mm256_srli_epi32(pts, bits * i));
        __m256 diff = _mm256_sub_ps(q, _mm256_set1_ps(xval[i]));
        d2 = _mm256_add_ps(d2, _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(weight[i]), diff), diff));
    }
    return d2;
}

AVX2 static INLINE __m256i load_points8(const uint16_t *p)
{
    return _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p));
}

/* Position of the best of the n candidates at p; -1: no distance is below
 * FLT_MAX. */
AVX2 static INLINE int search_avx2(const uint16_t *p, int n, int dim, int bits, float scale, const float *value,
                                   const float *xval, const float *weight)
{
    const __m256 sq = _mm256_mul_ps(_mm256_set1_ps(scale), _mm256_loadu_ps(value));
    const __m256 fmax = _mm256_set1_ps(FLT_MAX);
    __m256 d2 = dist8(load_points8(p), dim, bits, sq, xval, weight);
    __m256 lt = _mm256_cmp_ps(d2, fmax, _CMP_LT_OQ);
    __m256 best = _mm256_blendv_ps(fmax, d2, lt);
    if (n <= 8) { /* one pass: a lane's position is its index */
        unsigned at = (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(best, _mm256_set1_ps(hmin8(best)), _CMP_EQ_OQ)) &
                      (unsigned)_mm256_movemask_ps(lt);
        return at ? __builtin_ctz(at) : -1;
    }
    __m256i pos = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    __m256i bpos = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(_mm256_set1_epi32(-1)),
                                                        _mm256_castsi256_ps(pos), lt));
    for (int c = 8; c < n; c += 8) {
        pos = _mm256_add_epi32(pos, _mm256_set1_epi32(8));
        d2 = dist8(load_points8(p + c), dim, bits, sq, xval, weight);
        lt = _mm256_cmp_ps(d2, best, _CMP_LT_OQ);
        best = _mm256_blendv_ps(best, d2, lt);
        bpos = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(bpos), _mm256_castsi256_ps(pos), lt));
    }
    /* lanes at the smallest distance; none below FLT_MAX: all lanes, pos -1 */
    __m256 eq = _mm256_cmp_ps(best, _mm256_set1_ps(hmin8(best)), _CMP_EQ_OQ);
    __m256i cand = _mm256_castps_si256(
        _mm256_blendv_ps(_mm256_castsi256_ps(_mm256_set1_epi32(INT_MAX)), _mm256_castsi256_ps(bpos), eq));
    return hmin8i(cand);
}

/* ------------------------------------------------------------ AVX-512 */

AVX512 static INLINE __m512 dist16(const uint16_t *p, int dim, int bits, __m512 sq, const float *xval,
                                   const float *weight)
{
    const __m512i pts = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)p));
    __m512 d2 = _mm512_setzero_ps();
#pragma GCC unroll 8
    for (int i = 0; i < dim; ++i) {
        __m512 q = _mm512_permutexvar_ps(_mm512_srli_epi32(pts, bits * i), sq);
        __m512 diff = _mm512_sub_ps(q, _mm512_set1_ps(xval[i]));
        d2 = _mm512_add_ps(d2, _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(weight[i]), diff), diff));
    }
    return d2;
}

AVX512 static INLINE int search_avx512(const uint16_t *p, int n, int dim, int bits, float scale, const float *value,
                                       const float *xval, const float *weight)
{
    const __m512 sq = _mm512_mul_ps(_mm512_set1_ps(scale), _mm512_loadu_ps(value));
    const __m512 fmax = _mm512_set1_ps(FLT_MAX);
    __m512 d2 = dist16(p, dim, bits, sq, xval, weight);
    __mmask16 lt = _mm512_cmp_ps_mask(d2, fmax, _CMP_LT_OQ);
    __m512 best = _mm512_mask_blend_ps(lt, fmax, d2);
    if (n <= MQ_LAT_LANES) {
        unsigned at = _mm512_cmp_ps_mask(best, _mm512_set1_ps(_mm512_reduce_min_ps(best)), _CMP_EQ_OQ) & lt;
        return at ? __builtin_ctz(at) : -1;
    }
    __m512i pos = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    __m512i bpos = _mm512_mask_blend_epi32(lt, _mm512_set1_epi32(-1), pos);
    for (int c = MQ_LAT_LANES; c < n; c += MQ_LAT_LANES) {
        pos = _mm512_add_epi32(pos, _mm512_set1_epi32(MQ_LAT_LANES));
        d2 = dist16(p + c, dim, bits, sq, xval, weight);
        lt = _mm512_cmp_ps_mask(d2, best, _CMP_LT_OQ);
        best = _mm512_mask_blend_ps(lt, best, d2);
        bpos = _mm512_mask_blend_epi32(lt, bpos, pos);
    }
    __mmask16 eq = _mm512_cmp_ps_mask(best, _mm512_set1_ps(_mm512_reduce_min_ps(best)), _CMP_EQ_OQ);
    return _mm512_mask_reduce_min_epi32(eq, bpos);
}

/* ------------------------------------------------------------ dispatch */

/* Position in list v of its best candidate (-1: none below FLT_MAX), the
 * list's packed points to *pts: 16 lanes when a list fills more than 8
 * (AVX-512), else 8. */
#define SEARCH_FOR_DIM(DIM, BITS)                                                                                      \
    AVX512 static int search512_##DIM(const uint16_t *p, int n, float scale, const float *value, const float *xval, \
                                      const float *waux)                                                               \
    {                                                                                                                  \
        return search_avx512(p, n, DIM, BITS, scale, value, xval, waux);                                              \
    }                                                                                                                  \
    AVX2 static INLINE int search_pos_##DIM(const mq_lattice *lat, int32_t v, bool wide, float scale,              \
                                            const float *value, const float *xval, const float *waux,                \
                                            const uint16_t **pts)                                                      \
    {                                                                                                                  \
        int n;                                                                                                         \
        const uint16_t *p = *pts = list_points(lat, v, &n);                                                            \
        return wide && n > 8 ? search512_##DIM(p, n, scale, value, xval, waux)                                        \
                             : search_avx2(p, n, DIM, BITS, scale, value, xval, waux);                                \
    }                                                                                                                  \
    /* the packed point of the best; none below FLT_MAX: the first, as the                                          \
     * scalar code */                                                                                                  \
    AVX2 static INLINE uint32_t search_##DIM(const mq_lattice *lat, int32_t v, bool wide, float scale,              \
                                             const float *xval, const float *waux)                                    \
    {                                                                                                                  \
        const uint16_t *p;                                                                                             \
        int at = search_pos_##DIM(lat, v, wide, scale, BITS == 2 ? odd_levels2 : odd_levels3, xval, waux, &p);      \
        return p[at < 0 ? 0 : at];                                                                                     \
    }
SEARCH_FOR_DIM(8, 2)
SEARCH_FOR_DIM(4, 3)

AVX2 static uint32_t best_neighbour_avx2(const mq_lattice *lat, int32_t v, float scale, const float *xval,
                                         const float *waux)
{
    const bool wide = mq_cpu_has_avx512();
    return lat->dim == 8 ? search_8(lat, v, wide, scale, xval, waux) : search_4(lat, v, wide, scale, xval, waux);
}

bool mq_simd_lat_best_neighbour(const mq_lattice *lat, uint32_t u, float scale, const float *xval,
                                const float *weight, int8_t *L)
{
    if (!lat->vmap || u >= lat->nmap || lat->vmap[u] >= 0 || lat->vmap[u] == MQ_LAT_NONE || !mq_cpu_has_avx2())
        return false;
    mq_lat_unpack(lat, best_neighbour_avx2(lat, lat->vmap[u], scale, xval, weight), L);
    return true;
}

AVX2 static int iq1_neighbour_avx2(const mq_lattice *lat, int32_t v, float scale, const float *value,
                                   const float *xval, const float *weight)
{
    const uint16_t *p;
    int at = search_pos_8(lat, v, mq_cpu_has_avx512(), scale, value, xval, weight, &p);
    return at < 0 ? -1 : mq_lat_index(lat, p[at]);
}

int mq_simd_iq1_best_neighbour(const mq_lattice *lat, uint32_t u, float scale, const float *xg, const float *xval,
                               const float *weight)
{
    if (!lat->vmap || lat->dim != 8 || lat->bits != 2 || u >= lat->nmap || lat->vmap[u] >= 0 ||
        lat->vmap[u] == MQ_LAT_NONE || !mq_cpu_has_avx2())
        return -1;
    float value[16]; /* level 3: never on the grid */
    for (int i = 0; i < 16; ++i)
        value[i] = i % 4 == 3 ? 0 : xg[i % 4];
    return iq1_neighbour_avx2(lat, lat->vmap[u], scale, value, xval, weight);
}

/* ------------------------------------------------------------ trials */

/* The lattice points of every group at 8 trials (lanes) from s0 to
 * t->pt[k][s0..s0+7]: the levels mq_iq_level packed as mq_lat_pack. */
AVX2 static INLINE void trial_points8(int n, int dim, int bits, __m256 id, const float *xval, mq_trials *t, int s0)
{
    const int kmax = bits == 2 ? 3 : 8;
    const __m256 one = _mm256_set1_ps(1), half = _mm256_set1_ps(0.5f), magic = _mm256_set1_ps(12582912.f);
    for (int k = 0; k < n / dim; ++k) {
        __m256i pt = _mm256_setzero_si256();
#pragma GCC unroll 8
        for (int i = 0; i < dim; ++i) {
            const int j = k * dim + i;
            __m256 v = _mm256_mul_ps(half, _mm256_sub_ps(_mm256_mul_ps(id, _mm256_set1_ps(xval[j])), one));
            /* mq_nearest_int: the low mantissa bits of v + 1.5*2^23 */
            __m256i l = _mm256_sub_epi32(
                _mm256_and_si256(_mm256_castps_si256(_mm256_add_ps(v, magic)), _mm256_set1_epi32(0x007fffff)),
                _mm256_set1_epi32(0x00400000));
            l = _mm256_max_epi32(_mm256_setzero_si256(), _mm256_min_epi32(_mm256_set1_epi32(kmax - 1), l));
            pt = _mm256_or_si256(pt, _mm256_slli_epi32(l, bits * i));
        }
        _mm256_storeu_si256((__m256i *)&t->pt[k][s0], _mm256_and_si256(pt, _mm256_set1_epi32(0xffff)));
    }
}

/* mq_iq_sums of 8 trials (lanes) from s0, the levels taken from the
 * packed points. */
AVX2 static INLINE void trial_sums8(int n, int dim, int bits, const float *weight, const float *xval, mq_trials *t,
                                    int s0)
{
    const __m256i mask = _mm256_set1_epi32((1 << bits) - 1);
    __m256 sqx = _mm256_setzero_ps(), sq2 = _mm256_setzero_ps();
    for (int k = 0; k < n / dim; ++k) {
        const __m256i pt = _mm256_loadu_si256((const __m256i *)&t->pt[k][s0]);
#pragma GCC unroll 8
        for (int j = 0; j < dim; ++j) {
            const int i = k * dim + j;
            __m256i l = _mm256_and_si256(_mm256_srli_epi32(pt, bits * j), mask);
            __m256 q = _mm256_cvtepi32_ps(_mm256_add_epi32(_mm256_add_epi32(l, l), _mm256_set1_epi32(1)));
            __m256 w = _mm256_set1_ps(weight[i]);
            sqx = _mm256_add_ps(sqx, _mm256_mul_ps(_mm256_mul_ps(w, _mm256_set1_ps(xval[i])), q));
            sq2 = _mm256_add_ps(sq2, _mm256_mul_ps(_mm256_mul_ps(w, q), q));
        }
    }
    _mm256_storeu_ps(&t->sumqx[s0], sqx);
    _mm256_storeu_ps(&t->sumq2[s0], sq2);
}

/* Grid look-ups of every (trial, group), the neighbour search where a point
 * is off the grid (its best neighbour replaces the rounded point), and the
 * flags. */
AVX2 static INLINE void trial_grid(const mq_lattice *lat, int n, int dim, const float *id, int ns, const float *xval,
                                   const float *waux, mq_trials *t)
{
    const bool wide = mq_cpu_has_avx512();
    memset(t->off_grid, 0, sizeof(t->off_grid));
    for (int s = 0; s < ns; ++s) {
        const float this_scale = 1 / id[s];
        for (int k = 0; k < n / dim; ++k) {
            const uint32_t u = t->pt[k][s];
            const int32_t v = u < lat->nmap ? lat->vmap[u] : MQ_LAT_NONE;
            if (v >= 0)
                continue;
            t->off_grid[k] |= 1u << s;
            if (v == MQ_LAT_NONE)
                continue;
            t->pt[k][s] = dim == 8 ? search_8(lat, v, wide, this_scale, xval + dim * k, waux + dim * k)
                                   : search_4(lat, v, wide, this_scale, xval + dim * k, waux + dim * k);
        }
    }
}

AVX2 static INLINE void trials_avx2(const mq_lattice *lat, int n, int dim, int bits, const float *id, int ns,
                                    const float *xval, const float *weight, const float *waux, mq_trials *t)
{
    float idp[MQ_TRIALS_MAX];
    for (int s = 0; s < MQ_TRIALS_MAX; ++s)
        idp[s] = id[s < ns ? s : ns - 1]; /* lanes past ns: computed, never read */
    for (int s0 = 0; s0 < ns; s0 += 8)
        trial_points8(n, dim, bits, _mm256_loadu_ps(idp + s0), xval, t, s0);
    trial_grid(lat, n, dim, id, ns, xval, waux, t);
    for (int s0 = 0; s0 < ns; s0 += 8)
        trial_sums8(n, dim, bits, weight, xval, t, s0);
}

AVX2 static void trials_8(const mq_lattice *lat, int n, const float *id, int ns, const float *xval,
                          const float *weight, const float *waux, mq_trials *t)
{
    trials_avx2(lat, n, 8, 2, id, ns, xval, weight, waux, t);
}

AVX2 static void trials_4(const mq_lattice *lat, int n, const float *id, int ns, const float *xval,
                          const float *weight, const float *waux, mq_trials *t)
{
    trials_avx2(lat, n, 4, 3, id, ns, xval, weight, waux, t);
}

bool mq_simd_lat_trials(const mq_lattice *lat, int n, const float *id, int ns, const float *xval, const float *weight,
                        const float *waux, mq_trials *t)
{
    if (!lat->vmap || ns < 1 || ns > MQ_TRIALS_MAX || n > 32 || !mq_cpu_has_avx2())
        return false;
    if (!lat->npts)
        return false;
    if (lat->dim == 8 && lat->bits == 2)
        trials_8(lat, n, id, ns, xval, weight, waux, t);
    else if (lat->dim == 4 && lat->bits == 3)
        trials_4(lat, n, id, ns, xval, weight, waux, t);
    else
        return false;
    return true;
}

#else

bool mq_simd_lat_best_neighbour(const mq_lattice *lat, uint32_t u, float scale, const float *xval,
                                const float *weight, int8_t *L)
{
    return false;
}

bool mq_simd_lat_trials(const mq_lattice *lat, int n, const float *id, int ns, const float *xval, const float *weight,
                        const float *waux, mq_trials *t)
{
    return false;
}

int mq_simd_iq1_best_neighbour(const mq_lattice *lat, uint32_t u, float scale, const float *xg, const float *xval,
                               const float *weight)
{
    return -1;
}

#endif
