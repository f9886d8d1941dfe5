/* pickle_obj.c - the values of the pickle interpreter: allocation under a
 * budget, containers, Python-like dict keys (1 == 1.0 == True, tuples by
 * value), big integers as decimal text. */
#include "core/pickle_int.h"

#include <math.h>
#include <stdlib.h>

pk_obj pk_none = {.kind = PK_NONE};
pk_obj pk_true = {.kind = PK_BOOL, .u.b = true};
pk_obj pk_false = {.kind = PK_BOOL, .u.b = false};

int pk_charge(pk_machine *pm, uint64_t units, mf_status *st)
{
    pm->work += units;
    if (pm->work > pm->max_work)
        return pk_fail_unsure(pm, pm->op_off, st,
                       "more than %llu steps of work for %llu bytes of input: refused "
                       "(an expansion bomb?)",
                       (unsigned long long)pm->max_work, (unsigned long long)pm->input_bytes);
    return 0;
}

pk_obj *pk_new_obj(pk_machine *pm, pk_kind k, uint64_t off)
{
    if (pm->objects >= pm->max_objects)
        return NULL;
    pk_obj *o = mf_arena_alloc(pm->a, sizeof(*o));
    if (!o)
        return NULL;
    pm->objects++;
    o->kind = k;
    o->off = off;
    return o;
}

pk_obj *pk_make(pk_machine *pm, pk_kind k, mf_status *st)
{
    pk_obj *o = pk_new_obj(pm, k, pm->op_off);
    if (!o) {
        if (pm->objects >= pm->max_objects)
            pk_fail_unsure(pm, pm->op_off, st, "more than %llu objects: refused (an expansion bomb?)",
                    (unsigned long long)pm->max_objects);
        else
            pk_oom(pm, st);
    }
    return o;
}

/* Every slot a container or key index allocates counts against the item
 * budget (outgrown arrays stay in the arena, so they count too). */
static int count_slots(pk_machine *pm, uint64_t n, mf_status *st)
{
    pm->items += n;
    if (pm->items > pm->max_items)
        return pk_fail_unsure(pm, pm->op_off, st,
                       "more than %llu container slots: refused (an expansion bomb?)",
                       (unsigned long long)pm->max_items);
    return 0;
}

/* Grows a container to hold `need` slots. */
int pk_reserve(pk_machine *pm, pk_obj *c, size_t need, mf_status *st)
{
    if (need <= c->u.c.cap)
        return 0;
    size_t cap = c->u.c.cap ? c->u.c.cap : 4;
    while (cap < need)
        cap *= 2;
    if (count_slots(pm, cap, st))
        return -1;
    pk_obj **v = mf_arena_calloc(pm->a, cap, sizeof(*v));
    if (!v)
        return pk_oom(pm, st);
    size_t used = (c->kind == PK_DICT ? 2 : 1) * c->u.c.n; /* slots in use */
    if (used)
        memcpy(v, c->u.c.v, used * sizeof(*v));
    c->u.c.v = v;
    c->u.c.cap = cap;
    return 0;
}

int pk_append(pk_machine *pm, pk_obj *c, pk_obj *x, mf_status *st)
{
    if (pk_reserve(pm, c, c->u.c.n + 1, st))
        return -1;
    c->u.c.v[c->u.c.n++] = x;
    return 0;
}

pk_obj *pk_seq(pk_machine *pm, pk_kind k, pk_obj **items, size_t n, mf_status *st)
{
    pk_obj *o = pk_make(pm, k, st);
    if (!o || pk_charge(pm, n, st) || pk_reserve(pm, o, n, st))
        return NULL;
    if (n)
        memcpy(o->u.c.v, items, n * sizeof(*items));
    o->u.c.n = n;
    return o;
}

/* ------------------------------------------------------------ dict keys */

static bool is_numeric(const pk_obj *o)
{
    return o->kind == PK_INT || o->kind == PK_BOOL || o->kind == PK_FLOAT;
}

/* Keys nested deeper than this compare and hash by identity (bounded
 * recursion). A kcost counts the elements visited, charged by the caller;
 * past its limit (the work left) every walk stops at once, so a key made of
 * shared tuples cannot cost more than the budget. */
#define KEY_DEPTH 32

typedef struct kcost {
    uint64_t n, limit;
} kcost;

static kcost cost_for(const pk_machine *pm)
{
    kcost c = {0, pm->max_work > pm->work ? pm->max_work - pm->work : 0};
    return c;
}

static bool over(kcost *c)
{
    return ++c->n > c->limit;
}

static bool hashable(const pk_obj *o, int depth, kcost *cost)
{
    switch (o->kind) {
    case PK_LIST: case PK_DICT: case PK_SET: return false;
    case PK_TUPLE:
    case PK_FROZENSET:
        if (depth > KEY_DEPTH)
            return true;
        for (size_t i = 0; i < o->u.c.n; i++) {
            if (over(cost))
                return true;
            if (!hashable(o->u.c.v[i], depth + 1, cost))
                return false;
        }
        return true;
    default: return true;
    }
}

static double num_value(const pk_obj *o)
{
    return o->kind == PK_FLOAT ? o->u.f : o->kind == PK_BOOL ? (double)o->u.b : (double)o->u.i;
}

static uint64_t mix(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 33);
}

static uint64_t hash_bytes(const char *p, size_t n, uint64_t seed)
{
    uint64_t h = 1469598103934665603ull ^ seed;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)p[i]) * 1099511628211ull;
    return mix(h);
}

static uint64_t key_hash(const pk_obj *o, int depth, kcost *cost)
{
    if (over(cost))
        return 0;
    switch (o->kind) {
    case PK_NONE: return 0x9e3779b97f4a7c15ull;
    case PK_BOOL: return mix((uint64_t)o->u.b);
    case PK_INT: return mix((uint64_t)o->u.i);
    case PK_FLOAT: {
        double f = o->u.f;
        if (f == floor(f) && fabs(f) < 9.2e18)
            return mix((uint64_t)(int64_t)f);
        uint64_t b;
        memcpy(&b, &f, 8);
        return mix(b);
    }
    case PK_STR: cost->n += o->u.s.n / 64; return hash_bytes(o->u.s.p, o->u.s.n, 1);
    case PK_BYTES: cost->n += o->u.s.n / 64; return hash_bytes(o->u.s.p, o->u.s.n, 2);
    case PK_BIGINT: cost->n += o->u.s.n / 64; return hash_bytes(o->u.s.p, o->u.s.n, 3);
    case PK_TUPLE:
    case PK_FROZENSET: {
        if (depth > KEY_DEPTH)
            return mix((uint64_t)(uintptr_t)o);
        uint64_t h = o->kind == PK_TUPLE ? 7 : 11;
        for (size_t i = 0; i < o->u.c.n; i++) {
            uint64_t e = key_hash(o->u.c.v[i], depth + 1, cost);
            h = o->kind == PK_TUPLE ? mix(h * 31 + e) : h + e; /* sets: order-free */
        }
        return mix(h);
    }
    default: return mix((uint64_t)(uintptr_t)o);
    }
}

static bool key_eq(const pk_obj *a, const pk_obj *b, int depth, kcost *cost)
{
    if (over(cost))
        return false;
    if (a == b)
        return true;
    if (is_numeric(a) && is_numeric(b)) {
        if (a->kind != PK_FLOAT && b->kind != PK_FLOAT) {
            int64_t x = a->kind == PK_BOOL ? a->u.b : a->u.i, y = b->kind == PK_BOOL ? b->u.b : b->u.i;
            return x == y;
        }
        return num_value(a) == num_value(b);
    }
    if (a->kind != b->kind)
        return false;
    switch (a->kind) {
    case PK_NONE: return true;
    case PK_STR: case PK_BYTES: case PK_BIGINT:
        cost->n += a->u.s.n / 64;
        return a->u.s.n == b->u.s.n && memcmp(a->u.s.p, b->u.s.p, a->u.s.n) == 0;
    case PK_TUPLE:
        if (a->u.c.n != b->u.c.n || depth > KEY_DEPTH)
            return false;
        for (size_t i = 0; i < a->u.c.n; i++)
            if (!key_eq(a->u.c.v[i], b->u.c.v[i], depth + 1, cost))
                return false;
        return true;
    default: return false; /* identity, checked above */
    }
}

struct pk_index {
    size_t cap;   /* power of two */
    size_t *slot; /* pair index + 1; 0 = empty */
};

static int index_build(pk_machine *pm, pk_obj *d, size_t want, mf_status *st)
{
    size_t cap = 16;
    while (cap < want * 2)
        cap *= 2;
    if (count_slots(pm, cap, st))
        return -1;
    pk_index *ix = mf_arena_alloc(pm->a, sizeof(*ix));
    size_t *slot = mf_arena_calloc(pm->a, cap, sizeof(size_t));
    if (!ix || !slot)
        return pk_oom(pm, st);
    if (pk_charge(pm, d->u.c.n + cap / 8, st))
        return -1;
    ix->cap = cap;
    ix->slot = slot;
    kcost cost = cost_for(pm);
    for (size_t k = 0; k < d->u.c.n; k++) {
        size_t h = (size_t)key_hash(d->u.c.v[2 * k], 0, &cost) & (cap - 1);
        while (slot[h]) {
            h = (h + 1) & (cap - 1);
            cost.n++;
        }
        slot[h] = k + 1;
    }
    d->u.c.ix = ix;
    return pk_charge(pm, cost.n, st);
}

/* Pair index of `key` in d, or -1; -2 on error (st filled). */
static int64_t dict_find(pk_machine *pm, pk_obj *d, const pk_obj *key, mf_status *st)
{
    kcost cost = cost_for(pm);
    int64_t found = -1;
    if (!d->u.c.ix) {
        for (size_t k = 0; k < d->u.c.n && found < 0; k++)
            if (key_eq(d->u.c.v[2 * k], key, 0, &cost))
                found = (int64_t)k;
    } else {
        pk_index *ix = d->u.c.ix;
        size_t h = (size_t)key_hash(key, 0, &cost) & (ix->cap - 1);
        while (ix->slot[h] && found < 0) {
            size_t k = ix->slot[h] - 1;
            if (key_eq(d->u.c.v[2 * k], key, 0, &cost))
                found = (int64_t)k;
            h = (h + 1) & (ix->cap - 1);
        }
    }
    return pk_charge(pm, cost.n, st) ? -2 : found;
}

/* d[key] = value, keeping the first insertion's position (Python dicts). */
int pk_dict_set(pk_machine *pm, pk_obj *d, pk_obj *key, pk_obj *value, mf_status *st)
{
    kcost cost = cost_for(pm);
    bool ok = hashable(key, 0, &cost);
    if (pk_charge(pm, cost.n, st))
        return -1;
    if (!ok)
        return pk_fail(pm, pm->op_off, st, "unhashable dict key (a list, dict or set)");
    int64_t k = dict_find(pm, d, key, st);
    if (k == -2)
        return -1;
    if (k >= 0) {
        d->u.c.v[2 * k + 1] = value;
        return 0;
    }
    /* pairs take two slots each */
    if (pk_reserve(pm, d, 2 * (d->u.c.n + 1), st))
        return -1;
    size_t n = d->u.c.n++;
    d->u.c.v[2 * n] = key;
    d->u.c.v[2 * n + 1] = value;
    if (d->u.c.ix && d->u.c.n * 2 > d->u.c.ix->cap)
        return index_build(pm, d, d->u.c.n, st);
    if (!d->u.c.ix && d->u.c.n >= 8)
        return index_build(pm, d, d->u.c.n, st);
    if (d->u.c.ix) {
        pk_index *ix = d->u.c.ix;
        cost = cost_for(pm);
        size_t h = (size_t)key_hash(key, 0, &cost) & (ix->cap - 1);
        while (ix->slot[h]) {
            h = (h + 1) & (ix->cap - 1);
            cost.n++;
        }
        ix->slot[h] = n + 1;
    }
    return pk_charge(pm, cost.n, st);
}

pk_obj *pk_dict_get(const pk_obj *d, const char *key)
{
    if (!d || d->kind != PK_DICT)
        return NULL;
    size_t kl = strlen(key);
    for (size_t k = 0; k < d->u.c.n; k++) {
        const pk_obj *x = d->u.c.v[2 * k];
        if (x->kind == PK_STR && x->u.s.n == kl && memcmp(x->u.s.p, key, kl) == 0)
            return d->u.c.v[2 * k + 1];
    }
    return NULL;
}

int pk_set_add(pk_machine *pm, pk_obj *s, pk_obj *x, mf_status *st)
{
    kcost cost = cost_for(pm);
    bool ok = hashable(x, 0, &cost);
    /* sets are rare in checkpoints; linear membership under the budget */
    bool dup = false;
    for (size_t i = 0; ok && i < s->u.c.n && !dup; i++)
        dup = key_eq(s->u.c.v[i], x, 0, &cost);
    if (pk_charge(pm, cost.n, st))
        return -1;
    if (!ok)
        return pk_fail(pm, pm->op_off, st, "unhashable set item (a list, dict or set)");
    return dup ? 0 : pk_append(pm, s, x, st);
}

/* --------------------------------------------------------------- access */

bool pk_is_str(const pk_obj *o, const char *s)
{
    size_t n = strlen(s);
    return o && o->kind == PK_STR && o->u.s.n == n && memcmp(o->u.s.p, s, n) == 0;
}

bool pk_as_int(const pk_obj *o, int64_t *v)
{
    if (o && o->kind == PK_INT) {
        *v = o->u.i;
        return true;
    }
    if (o && o->kind == PK_BOOL) {
        *v = o->u.b;
        return true;
    }
    return false;
}

char *pk_cstr(mf_arena *a, const pk_obj *s)
{
    return mf_arena_strndup(a, s->u.s.p, s->u.s.n);
}

char *pk_key_text(mf_arena *a, const pk_obj *k)
{
    switch (k->kind) {
    case PK_STR: case PK_BIGINT: return mf_arena_strndup(a, k->u.s.p, k->u.s.n);
    case PK_BYTES: return mf_arena_strndup(a, k->u.s.p, k->u.s.n);
    case PK_INT: return mf_arena_printf(a, "%lld", (long long)k->u.i);
    case PK_BOOL: return mf_arena_strdup(a, k->u.b ? "True" : "False");
    case PK_NONE: return mf_arena_strdup(a, "None");
    case PK_FLOAT: return mf_arena_printf(a, "%.17g", k->u.f);
    default: return NULL;
    }
}

/* -------------------------------------------------------------- bigints */

/* Little-endian two's complement (LONG1/LONG4) to a value: INT when it
 * fits 64 bits, else BIGINT as decimal text (hex beyond 256 bytes, where
 * decimal conversion would cost too much). */
pk_obj *pk_long_from_bytes(pk_machine *pm, const uint8_t *b, size_t n, mf_status *st)
{
    bool neg = n > 0 && (b[n - 1] & 0x80);
    /* drop sign-extension bytes */
    size_t len = n;
    while (len > 1 && b[len - 1] == (neg ? 0xff : 0x00) && ((b[len - 2] & 0x80) != 0) == neg)
        len--;
    if (len <= 8) {
        uint64_t u = neg ? ~0ull : 0;
        for (size_t i = 0; i < len; i++) {
            u &= ~(0xffull << (8 * i));
            u |= (uint64_t)b[i] << (8 * i);
        }
        pk_obj *o = pk_make(pm, PK_INT, st);
        if (o)
            o->u.i = (int64_t)u;
        return o;
    }
    if (pk_charge(pm, len * (len <= 256 ? len / 4 + 1 : 2), st))
        return NULL;
    /* magnitude, little-endian bytes */
    uint8_t *mag = malloc(len);
    if (!mag) {
        pk_oom(pm, st);
        return NULL;
    }
    unsigned carry = 1;
    for (size_t i = 0; i < len; i++) {
        unsigned v = neg ? (unsigned)(uint8_t)~b[i] + carry : b[i];
        carry = neg ? v >> 8 : 0;
        mag[i] = (uint8_t)v;
    }
    size_t cap = len * 3 + 8;
    char *txt = mf_arena_alloc(pm->a, cap);
    if (!txt) {
        free(mag);
        pk_oom(pm, st);
        return NULL;
    }
    size_t k = 0;
    if (len > 256) {
        static const char hx[] = "0123456789abcdef";
        if (neg)
            txt[k++] = '-';
        txt[k++] = '0';
        txt[k++] = 'x';
        for (size_t i = len; i-- > 0;) {
            txt[k++] = hx[mag[i] >> 4];
            txt[k++] = hx[mag[i] & 15];
        }
    } else {
        /* repeated division by 10^9 on base-256 digits */
        char digits[256 * 3 + 16];
        size_t nd = 0, top = len;
        while (top > 0) {
            uint64_t rem = 0;
            for (size_t i = top; i-- > 0;) {
                uint64_t cur = rem << 8 | mag[i];
                mag[i] = (uint8_t)(cur / 1000000000u);
                rem = cur % 1000000000u;
            }
            while (top > 0 && mag[top - 1] == 0)
                top--;
            for (int d = 0; d < 9 && (top > 0 || rem); d++) {
                digits[nd++] = (char)('0' + rem % 10);
                rem /= 10;
            }
        }
        if (nd == 0)
            digits[nd++] = '0';
        if (neg)
            txt[k++] = '-';
        while (nd > 0)
            txt[k++] = digits[--nd];
    }
    txt[k] = 0;
    free(mag);
    pk_obj *o = pk_make(pm, PK_BIGINT, st);
    if (o) {
        o->u.s.p = txt;
        o->u.s.n = k;
    }
    return o;
}
