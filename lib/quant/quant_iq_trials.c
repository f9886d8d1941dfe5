/* quant_iq_trials.c - the trial scales of the IQ2/IQ3 sub-block searches
 * (mq_lat_trials, iq_lattice.h): the vector version when the CPU has it
 * (quant_simd_lattice.c), else the scalar loop below, which is ggml's. */
#include "quant/iq_lattice.h"

void mq_lat_trials_scalar(const mq_lattice *lat, int n, const float *id, int ns, const float *xval,
                          const float *weight, const float *waux, mq_trials *t)
{
    const int dim = lat->dim;
    memset(t->off_grid, 0, sizeof(t->off_grid));
    for (int s = 0; s < ns; ++s) {
        const float this_scale = 1 / id[s];
        int8_t L[32];
        for (int k = 0; k < n / dim; ++k)
            if (!mq_lat_round_as(lat, id[s], this_scale, xval + dim * k, waux + dim * k, L + dim * k, false))
                t->off_grid[k] |= 1u << s;
        mq_iq_sums(n, weight, xval, L, &t->sumqx[s], &t->sumq2[s]);
        for (int k = 0; k < n / dim; ++k)
            t->pt[k][s] = mq_lat_pack(lat, L + dim * k);
    }
}

void mq_lat_trials(const mq_lattice *lat, int n, const float *id, int ns, const float *xval, const float *weight,
                   const float *waux, mq_trials *t)
{
    if (!mq_simd_lat_trials(lat, n, id, ns, xval, weight, waux, t))
        mq_lat_trials_scalar(lat, n, id, ns, xval, weight, waux, t);
}
