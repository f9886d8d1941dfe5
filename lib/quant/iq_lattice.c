/* iq_lattice.c - builds the i-quant search structures (see iq_lattice.h)
 * once per process, on first use, under pthread_once. */
#include "quant/iq_lattice.h"
#include "quant/iq_grids.h"

#include <assert.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>

typedef struct lattice_spec {
    const uint16_t *kgrid;
    int ngrid, bits, nwant;
} lattice_spec;

/* ggml: nwant 2 for IQ2_XXS/IQ2_XS/IQ3_XXS, 1 for IQ2_S, 3 for IQ1 and IQ3_S */
static const lattice_spec specs[MQ_LAT_COUNT] = {
    [MQ_LAT_IQ2_XXS] = {mq_kgrid_2bit_256, 256, 2, 2},  [MQ_LAT_IQ2_XS] = {mq_kgrid_2bit_512, 512, 2, 2},
    [MQ_LAT_IQ2_S] = {mq_kgrid_2bit_1024, 1024, 2, 1},  [MQ_LAT_IQ1] = {mq_kgrid_1bit_2048, 2048, 2, 3},
    [MQ_LAT_IQ3_XXS] = {mq_kgrid_3bit_256, 256, 3, 2},  [MQ_LAT_IQ3_S] = {mq_kgrid_3bit_512, 512, 3, 3},
};

static mq_lattice lattices[MQ_LAT_COUNT];
static bool built[MQ_LAT_COUNT];

/* A growing list of uint16 (the neighbour lists). */
typedef struct u16vec {
    uint16_t *v;
    size_t n, cap;
} u16vec;

static bool u16_push(u16vec *a, uint16_t x)
{
    if (a->n == a->cap) {
        size_t cap = a->cap ? 2 * a->cap : 4096;
        uint16_t *v = realloc(a->v, cap * sizeof(uint16_t));
        if (!v)
            return false;
        a->v = v;
        a->cap = cap;
    }
    a->v[a->n++] = x;
    return true;
}

/* Level l of value i in lattice point u. */
static int level_of(uint32_t u, int i, int bits) { return (int)(u >> (bits * i)) & ((1 << bits) - 1); }

/* Squared distances from the grid points to lattice points, split in two
 * halves of the fields: d2(u, j) = lo[(u & mask) * ngrid + j] +
 * hi[(u >> half) * ngrid + j]. Built once per lattice; a point's distances
 * are then one add per grid point. */
typedef struct dist_tables {
    int half; /* bits in half a lattice point */
    uint16_t *lo, *hi;
} dist_tables;

static bool dist_tables_build(dist_tables *t, const mq_lattice *lat)
{
    t->half = lat->bits * lat->dim / 2;
    const size_t npat = (size_t)1 << t->half, ng = (size_t)lat->ngrid;
    t->lo = malloc(npat * ng * sizeof(uint16_t));
    t->hi = malloc(npat * ng * sizeof(uint16_t));
    if (!t->lo || !t->hi)
        return false;
    for (size_t pat = 0; pat < npat; ++pat) {
        for (size_t j = 0; j < ng; ++j) {
            const int8_t *pg = mq_lat_point(lat, (int)j);
            int dlo = 0, dhi = 0;
            for (int k = 0; k < lat->dim / 2; ++k) {
                int pos = 2 * level_of((uint32_t)pat, k, lat->bits) + 1;
                dlo += (pg[k] - pos) * (pg[k] - pos);
                dhi += (pg[k + lat->dim / 2] - pos) * (pg[k + lat->dim / 2] - pos);
            }
            t->lo[pat * ng + j] = (uint16_t)dlo;
            t->hi[pat * ng + j] = (uint16_t)dhi;
        }
    }
    return true;
}

enum { MAX_D2 = 1024 }; /* > 8*7^2 (2-bit) and 4*14^2 (3-bit) */

/* Appends u's neighbour list (count first): every grid point at one of the
 * nwant smallest distinct squared distances, by distance then index (what
 * ggml's sort of (distance, index) pairs and cut give). */
static bool add_neighbours(const mq_lattice *lat, const dist_tables *t, int nwant, uint32_t u, uint16_t *d2,
                           u16vec *out)
{
    const size_t ng = (size_t)lat->ngrid, mask = ((size_t)1 << t->half) - 1;
    const uint16_t *a = t->lo + (u & mask) * ng, *b = t->hi + (u >> t->half) * ng;
    static_assert(MAX_D2 <= 65536, "distances fit uint16_t");
    int hist[MAX_D2] = {0};
    for (size_t j = 0; j < ng; ++j) {
        d2[j] = (uint16_t)(a[j] + b[j]);
        hist[d2[j]]++;
    }
    size_t start = out->n;
    if (!u16_push(out, 0))
        return false;
    for (int d = 0, have = 0; d < MAX_D2 && have < nwant; ++d) {
        if (!hist[d])
            continue;
        for (size_t j = 0; j < ng; ++j)
            if (d2[j] == d && !u16_push(out, (uint16_t)j))
                return false;
        ++have;
    }
    out->v[start] = (uint16_t)(out->n - start - 1);
    return true;
}

/* The vector search's view (mq_lattice.vmap, npts): every list's count,
 * then its candidates as packed lattice points, padded to a multiple of
 * MQ_LAT_LANES with the first candidate, which can never win over itself
 * (same distance, later position). */
static size_t padded_len(int n) { return 1 + (size_t)(n + MQ_LAT_LANES - 1) / MQ_LAT_LANES * MQ_LAT_LANES; }

static uint16_t packed_point(const mq_lattice *lat, int index)
{
    const int8_t *pg = mq_lat_point(lat, index);
    uint32_t u = 0;
    for (int i = 0; i < lat->dim; ++i)
        u |= (uint32_t)((pg[i] - 1) / 2) << (lat->bits * i);
    return (uint16_t)u; /* dim*bits = 16 or 12 */
}

static bool build_by_value(mq_lattice *lat)
{
    size_t total = 0;
    for (uint32_t u = 0; u < lat->nmap; ++u) {
        const uint16_t *nb = mq_lat_neighbours(lat, u);
        if (nb)
            total += padded_len(nb[0]);
    }
    uint16_t *pts = malloc((total ? total : 1) * sizeof(uint16_t));
    int32_t *vmap = malloc(lat->nmap * sizeof(int32_t));
    if (!pts || !vmap || total >= INT32_MAX) {
        free(pts);
        free(vmap);
        return false;
    }
    size_t pos = 0;
    for (uint32_t u = 0; u < lat->nmap; ++u) {
        const uint16_t *nb = mq_lat_neighbours(lat, u);
        vmap[u] = nb ? -(int32_t)(pos + 1) : lat->map[u];
        if (!nb)
            continue;
        const size_t len = padded_len(nb[0]);
        pts[pos] = nb[0];
        for (size_t j = 0; j + 1 < len; ++j)
            pts[pos + 1 + j] = packed_point(lat, nb[1 + (j < nb[0] ? j : 0)]);
        pos += len;
    }
    lat->npts = pts;
    lat->vmap = vmap;
    return true;
}

/* true if the quantizers can produce u: 2-bit levels never exceed 2. */
static bool reachable(uint32_t u, const mq_lattice *lat)
{
    for (int i = 0; lat->bits == 2 && i < lat->dim; ++i)
        if (level_of(u, i, 2) == 3)
            return false;
    return true;
}

static bool build(mq_lattice *lat, const lattice_spec *s)
{
    lat->ngrid = s->ngrid;
    lat->bits = s->bits;
    lat->dim = s->bits == 2 ? 8 : 4;
    lat->nmap = s->bits == 2 ? 43692 : 4096; /* ggml's kmap_size */
    int8_t *grid = malloc((size_t)s->ngrid * (size_t)lat->dim);
    int32_t *map = malloc(lat->nmap * sizeof(int32_t));
    uint16_t *d2 = malloc((size_t)s->ngrid * sizeof(uint16_t));
    u16vec neigh = {0};
    dist_tables dt = {0, NULL, NULL};
    bool ok = grid && map && d2;
    for (int k = 0; ok && k < s->ngrid; ++k)
        for (int i = 0; i < lat->dim; ++i)
            grid[k * lat->dim + i] = (int8_t)(2 * level_of(s->kgrid[k], i, s->bits) + 1);
    for (uint32_t u = 0; ok && u < lat->nmap; ++u)
        map[u] = MQ_LAT_NONE;
    for (int k = 0; ok && k < s->ngrid; ++k)
        map[s->kgrid[k]] = k;
    lat->grid = grid;
    lat->map = map;
    ok = ok && dist_tables_build(&dt, lat);
    for (uint32_t u = 0; ok && u < lat->nmap; ++u) {
        if (map[u] != MQ_LAT_NONE || !reachable(u, lat))
            continue;
        int32_t start = (int32_t)neigh.n;
        ok = add_neighbours(lat, &dt, s->nwant, u, d2, &neigh);
        map[u] = -(start + 1);
    }
    free(d2);
    free(dt.lo);
    free(dt.hi);
    lat->neigh = neigh.v;
    ok = ok && build_by_value(lat);
    if (!ok) {
        free(grid);
        free(map);
        free(neigh.v);
        free((void *)lat->npts);
        free((void *)lat->vmap);
        memset(lat, 0, sizeof(*lat));
    }
    return ok;
}

#define LATTICE_ONCE(ID)                                                                                               \
    static pthread_once_t once_##ID = PTHREAD_ONCE_INIT;                                                              \
    static void init_##ID(void) { built[ID] = build(&lattices[ID], &specs[ID]); }
LATTICE_ONCE(MQ_LAT_IQ2_XXS)
LATTICE_ONCE(MQ_LAT_IQ2_XS)
LATTICE_ONCE(MQ_LAT_IQ2_S)
LATTICE_ONCE(MQ_LAT_IQ1)
LATTICE_ONCE(MQ_LAT_IQ3_XXS)
LATTICE_ONCE(MQ_LAT_IQ3_S)

const mq_lattice *mq_lattice_get(mq_lattice_id id)
{
    switch (id) {
    case MQ_LAT_IQ2_XXS: pthread_once(&once_MQ_LAT_IQ2_XXS, init_MQ_LAT_IQ2_XXS); break;
    case MQ_LAT_IQ2_XS: pthread_once(&once_MQ_LAT_IQ2_XS, init_MQ_LAT_IQ2_XS); break;
    case MQ_LAT_IQ2_S: pthread_once(&once_MQ_LAT_IQ2_S, init_MQ_LAT_IQ2_S); break;
    case MQ_LAT_IQ1: pthread_once(&once_MQ_LAT_IQ1, init_MQ_LAT_IQ1); break;
    case MQ_LAT_IQ3_XXS: pthread_once(&once_MQ_LAT_IQ3_XXS, init_MQ_LAT_IQ3_XXS); break;
    case MQ_LAT_IQ3_S: pthread_once(&once_MQ_LAT_IQ3_S, init_MQ_LAT_IQ3_S); break;
    default: return NULL;
    }
    return built[id] ? &lattices[id] : NULL;
}
