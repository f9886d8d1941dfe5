/* pickle_call.c - what REDUCE / NEWOBJ / INST / OBJ / BUILD produce.
 * Allowlisted names build the value the real function would return, from
 * the arguments alone (torch/_utils.py, numpy/core/multiarray, ...); any
 * other callable yields an opaque object recording the call. Nothing here
 * runs code from the file. */
#include "core/pickle_int.h"

#include <stdlib.h>

pk_obj *pk_global_ref(pk_machine *pm, const char *module, size_t ml, const char *name,
                      size_t nl, const char *opcode, mf_status *st)
{
    pm->named = true;
    pk_obj *g = pk_make(pm, PK_GLOBAL, st);
    if (!g)
        return NULL;
    g->u.g.module = mf_arena_strndup(pm->a, module, ml);
    g->u.g.name = mf_arena_strndup(pm->a, name, nl);
    if (!g->u.g.module || !g->u.g.name) {
        pk_oom(pm, st);
        return NULL;
    }
    pk_classify(&g->u.g);
    if (memchr(module, 0, ml) || memchr(name, 0, nl))
        g->u.g.gate = NULL;
    if ((memchr(module, 0, ml) || memchr(name, 0, nl)) && g->u.g.cls == PK_SAFE) {
        g->u.g.cls = PK_UNKNOWN; /* what follows the NUL is not what we checked */
        g->u.g.id = PKN_OTHER;
        g->u.g.reason = "a name with a NUL byte";
    }
    if (g->u.g.gate) /* judged by its uses, when the pickle ends */
        return pk_gate_hold(pm, g, opcode, st) ? NULL : g;
    if (pm->o.on_global)
        pm->o.on_global(pm->o.ctx, &g->u.g, opcode, pm->o.origin + pm->op_off);
    return g;
}

void pk_report_mutation(pk_machine *pm, const pk_obj *g, const char *opcode)
{
    if (!pm->o.on_global)
        return;
    pk_global m = g->u.g;
    m.cls = PK_DANGEROUS;
    m.reason = "changes a module, class or function the pickle imported";
    pm->o.on_global(pm->o.ctx, &m, opcode, pm->o.origin + pm->op_off);
}

/* ------------------------------------------------------------- helpers */

static size_t nargs(const pk_obj *args)
{
    return args && (args->kind == PK_TUPLE || args->kind == PK_LIST) ? args->u.c.n : 0;
}

static pk_obj *arg(const pk_obj *args, size_t i)
{
    return i < nargs(args) ? args->u.c.v[i] : NULL;
}

static bool is_seq(const pk_obj *o)
{
    return o && (o->kind == PK_TUPLE || o->kind == PK_LIST);
}

static bool ints_seq(const pk_obj *o)
{
    if (!is_seq(o) || o->u.c.n > MF_MAX_DIMS)
        return false;
    for (size_t i = 0; i < o->u.c.n; i++)
        if (o->u.c.v[i]->kind != PK_INT)
            return false;
    return true;
}

static pk_obj *str_obj(pk_machine *pm, const char *s, size_t n, mf_status *st)
{
    pk_obj *o = pk_make(pm, PK_STR, st);
    if (o) {
        o->u.s.p = mf_arena_strndup(pm->a, s, n);
        o->u.s.n = n;
        if (!o->u.s.p) {
            pk_oom(pm, st);
            return NULL;
        }
    }
    return o;
}

/* ------------------------------------------------------------- builders */

/* Each returns 1 with *out built, 0 when the arguments do not have the
 * expected shape (the call is then kept opaque), -1 on error. */

static int build_ordered_dict(pk_machine *pm, const pk_obj *args, pk_obj **out, mf_status *st)
{
    pk_obj *src = arg(args, 0);
    if (nargs(args) > 1 || (src && !is_seq(src) && src->kind != PK_DICT))
        return 0;
    pk_obj *d = pk_make(pm, PK_DICT, st);
    if (!d)
        return -1;
    if (src && src->kind == PK_DICT) {
        for (size_t k = 0; k < src->u.c.n; k++)
            if (pk_dict_set(pm, d, src->u.c.v[2 * k], src->u.c.v[2 * k + 1], st))
                return -1;
    } else if (src) {
        for (size_t i = 0; i < src->u.c.n; i++) {
            pk_obj *p = src->u.c.v[i];
            if (!is_seq(p) || p->u.c.n != 2)
                return 0;
            if (pk_dict_set(pm, d, p->u.c.v[0], p->u.c.v[1], st))
                return -1;
        }
    }
    *out = d;
    return 1;
}

/* _rebuild_tensor(storage, storage_offset, size, stride) and v2 (+
 * requires_grad, backward_hooks[, metadata]) and v3 (+ dtype). */
static int build_tensor(pk_machine *pm, pk_name_id id, const pk_obj *args, pk_obj **out,
                        mf_status *st)
{
    pk_obj *storage = arg(args, 0), *off = arg(args, 1), *size = arg(args, 2),
           *stride = arg(args, 3);
    if (!storage || !off || off->kind != PK_INT || !ints_seq(size) || !ints_seq(stride))
        return 0;
    pk_obj *t = pk_make(pm, PK_TENSOR, st);
    if (!t)
        return -1;
    t->u.t.storage = storage;
    t->u.t.offset = off->u.i;
    t->u.t.size = size;
    t->u.t.stride = stride;
    t->u.t.dtype = storage->kind == PK_STORAGE ? storage->u.st.dtype : MF_DTYPE_INVALID;
    if (id == PKN_REBUILD_TENSOR_V3) {
        pk_obj *dt = arg(args, 6);
        if (!dt || dt->kind != PK_GLOBAL || dt->u.g.id != PKN_TORCH_DTYPE)
            return 0;
        t->u.t.dtype = dt->u.g.dtype;
    }
    *out = t;
    return 1;
}

static int build_set(pk_machine *pm, pk_kind k, const pk_obj *args, pk_obj **out, mf_status *st)
{
    pk_obj *src = arg(args, 0);
    if (nargs(args) > 1 || (src && !is_seq(src) && src->kind != PK_SET && src->kind != PK_FROZENSET))
        return 0;
    pk_obj *s = pk_make(pm, k, st);
    if (!s)
        return -1;
    for (size_t i = 0; src && i < src->u.c.n; i++)
        if (pk_set_add(pm, s, src->u.c.v[i], st))
            return -1;
    *out = s;
    return 1;
}

/* str -> bytes for the encodings pickles use (protocol 2 writes bytes as
 * _codecs.encode(text, 'latin1')). */
static int encode_str(pk_machine *pm, const pk_obj *s, const pk_obj *enc, pk_obj **out,
                      mf_status *st)
{
    if (!s || s->kind != PK_STR || !enc || enc->kind != PK_STR)
        return 0;
    bool latin1 = pk_is_str(enc, "latin1") || pk_is_str(enc, "latin-1") ||
                  pk_is_str(enc, "iso-8859-1") || pk_is_str(enc, "ascii");
    bool utf8 = pk_is_str(enc, "utf-8") || pk_is_str(enc, "utf8");
    if (!latin1 && !utf8)
        return 0;
    if (pk_charge(pm, s->u.s.n, st))
        return -1;
    pk_obj *b = pk_make(pm, PK_BYTES, st);
    if (!b)
        return -1;
    if (utf8) {
        b->u.s = s->u.s;
        *out = b;
        return 1;
    }
    uint8_t *p = mf_arena_alloc(pm->a, s->u.s.n + 1);
    if (!p)
        return pk_oom(pm, st);
    const uint8_t *q = (const uint8_t *)s->u.s.p;
    size_t k = 0;
    for (size_t i = 0; i < s->u.s.n;) {
        if (q[i] < 0x80) {
            p[k++] = q[i++];
        } else if ((q[i] & 0xe0) == 0xc0 && i + 1 < s->u.s.n && q[i] <= 0xc3) {
            p[k++] = (uint8_t)((q[i] & 0x1f) << 6 | (q[i + 1] & 0x3f));
            i += 2;
        } else {
            return 0; /* a code point above U+00FF cannot be Latin-1 */
        }
    }
    b->u.s.p = (const char *)p;
    b->u.s.n = k;
    *out = b;
    return 1;
}

static int build_bytearray(pk_machine *pm, const pk_obj *args, pk_obj **out, mf_status *st)
{
    pk_obj *a0 = arg(args, 0);
    if (!a0) {
        *out = pk_make(pm, PK_BYTES, st);
        return *out ? 1 : -1;
    }
    if (a0->kind == PK_BYTES && nargs(args) == 1) {
        *out = a0;
        return 1;
    }
    return encode_str(pm, a0, arg(args, 1), out, st);
}

static int build_device(pk_machine *pm, const pk_obj *args, pk_obj **out, mf_status *st)
{
    pk_obj *type = arg(args, 0), *idx = arg(args, 1);
    if (!type || type->kind != PK_STR || type->u.s.n > 64)
        return 0;
    char buf[96];
    int n = idx && idx->kind == PK_INT
                ? snprintf(buf, sizeof(buf), "%.*s:%lld", (int)type->u.s.n, type->u.s.p,
                           (long long)idx->u.i)
                : snprintf(buf, sizeof(buf), "%.*s", (int)type->u.s.n, type->u.s.p);
    *out = str_obj(pm, buf, (size_t)n, st);
    return *out ? 1 : -1;
}

static int build_np_scalar(pk_machine *pm, const pk_obj *args, pk_obj **out, mf_status *st)
{
    pk_obj *dt = arg(args, 0), *raw = arg(args, 1);
    if (!dt || dt->kind != PK_NPDTYPE || !raw || raw->kind != PK_BYTES)
        return 0;
    mf_dtype t = pk_numpy_dtype(dt->u.nt.descr);
    const mf_dtype_info *di = mf_dtype_info_of(t);
    if (!di || raw->u.s.n != di->block_bytes || raw->u.s.n > 8 || t == MF_C64)
        return 0;
    uint8_t b[8];
    memcpy(b, raw->u.s.p, raw->u.s.n);
    if (dt->u.nt.order == '>') /* swap to little-endian */
        for (size_t i = 0; i < raw->u.s.n / 2; i++) {
            uint8_t x = b[i];
            b[i] = b[raw->u.s.n - 1 - i];
            b[raw->u.s.n - 1 - i] = x;
        }
    uint64_t u = 0;
    for (size_t i = 0; i < raw->u.s.n; i++)
        u |= (uint64_t)b[i] << (8 * i);
    pk_obj *o;
    if (t == MF_BOOL) {
        *out = u ? &pk_true : &pk_false;
        return 1;
    }
    if (di->is_float) {
        o = pk_make(pm, PK_FLOAT, st);
        if (!o)
            return -1;
        if (t == MF_F64)
            memcpy(&o->u.f, &u, 8);
        else if (t == MF_F32) {
            float f;
            uint32_t w = (uint32_t)u;
            memcpy(&f, &w, 4);
            o->u.f = f;
        } else {
            o->u.f = mf_f16_to_f32((uint16_t)u);
        }
    } else {
        o = pk_make(pm, PK_INT, st);
        if (!o)
            return -1;
        unsigned bits = (unsigned)raw->u.s.n * 8;
        if (di->is_signed && bits < 64 && (u >> (bits - 1) & 1))
            u |= ~0ull << bits; /* sign-extend */
        if (!di->is_signed && u > INT64_MAX)
            return 0;
        o->u.i = (int64_t)u;
    }
    *out = o;
    return 1;
}

static int build_allowed(pk_machine *pm, pk_obj *fn, pk_obj *args, pk_obj **out, mf_status *st)
{
    switch (fn->u.g.id) {
    case PKN_ORDERED_DICT: return build_ordered_dict(pm, args, out, st);
    case PKN_REBUILD_TENSOR:
    case PKN_REBUILD_TENSOR_V2:
    case PKN_REBUILD_TENSOR_V3: return build_tensor(pm, fn->u.g.id, args, out, st);
    case PKN_REBUILD_PARAMETER:
    case PKN_REBUILD_PARAMETER_STATE:
    case PKN_PARAMETER:
    case PKN_REBUILD_DEVICE_FROM_CPU:
        *out = arg(args, 0); /* the tensor itself */
        return *out ? 1 : 0;
    case PKN_REBUILD_FROM_TYPE_V2: {
        pk_obj *func = arg(args, 0), *inner = arg(args, 2);
        if (!func || !inner)
            return 0;
        *out = pk_call(pm, func, inner, NULL, st);
        return *out ? 1 : -1;
    }
    case PKN_TORCH_SIZE: {
        pk_obj *src = arg(args, 0);
        if (!src) {
            *out = pk_seq(pm, PK_TUPLE, NULL, 0, st);
            return *out ? 1 : -1;
        }
        if (!is_seq(src))
            return 0;
        *out = src->kind == PK_TUPLE ? src : pk_seq(pm, PK_TUPLE, src->u.c.v, src->u.c.n, st);
        return *out ? 1 : -1;
    }
    case PKN_TORCH_DEVICE: return build_device(pm, args, out, st);
    case PKN_SET: return build_set(pm, PK_SET, args, out, st);
    case PKN_FROZENSET: return build_set(pm, PK_FROZENSET, args, out, st);
    case PKN_BYTEARRAY: return build_bytearray(pm, args, out, st);
    case PKN_CODECS_ENCODE: return encode_str(pm, arg(args, 0), arg(args, 1), out, st);
    case PKN_NP_RECONSTRUCT: {
        pk_obj *a = pk_make(pm, PK_NDARRAY, st);
        if (!a)
            return -1;
        a->u.nd.shape = arg(args, 1);
        *out = a;
        return 1;
    }
    case PKN_NP_DTYPE: {
        pk_obj *d = arg(args, 0);
        if (!d || d->kind != PK_STR || d->u.s.n > 64)
            return 0;
        pk_obj *o = pk_make(pm, PK_NPDTYPE, st);
        if (!o)
            return -1;
        o->u.nt.descr = pk_cstr(pm->a, d);
        o->u.nt.order = '=';
        if (d->u.s.n && strchr("<>|=", d->u.s.p[0]))
            o->u.nt.order = d->u.s.p[0];
        *out = o;
        return o->u.nt.descr ? 1 : pk_oom(pm, st);
    }
    case PKN_NP_SCALAR: return build_np_scalar(pm, args, out, st);
    default: return 0;
    }
}

pk_obj *pk_call(pk_machine *pm, pk_obj *fn, pk_obj *args, pk_obj *kwargs, mf_status *st)
{
    pk_gate_call(pm, fn, args, kwargs);
    if (fn->kind == PK_GLOBAL && pm->o.on_call)
        pm->o.on_call(pm->o.ctx, &fn->u.g, args, pm->o.origin + pm->op_off);
    if (fn->kind == PK_GLOBAL && fn->u.g.cls == PK_SAFE && fn->u.g.id != PKN_OTHER &&
        pm->call_depth < 8) {
        pk_obj *out = NULL;
        pm->call_depth++;
        int r = build_allowed(pm, fn, args, &out, st);
        pm->call_depth--;
        if (r < 0)
            return NULL;
        if (r > 0)
            return out;
    }
    pk_obj *o = pk_make(pm, PK_OBJECT, st);
    if (!o)
        return NULL;
    o->u.o.callable = fn;
    o->u.o.args = args;
    o->u.o.kwargs = kwargs;
    return o;
}

/* numpy's ndarray.__setstate__((version, shape, dtype, is_fortran, data))
 * (version omitted by old numpy). */
static void build_ndarray(pk_obj *a, pk_obj *state)
{
    if (!is_seq(state) || (state->u.c.n != 4 && state->u.c.n != 5))
        return;
    size_t b = state->u.c.n == 5;
    pk_obj *shape = state->u.c.v[b], *dt = state->u.c.v[b + 1], *fortran = state->u.c.v[b + 2];
    a->u.nd.shape = shape;
    a->u.nd.dtype = dt->kind == PK_NPDTYPE ? dt : NULL;
    a->u.nd.fortran = fortran->kind == PK_BOOL ? fortran->u.b
                      : fortran->kind == PK_INT ? fortran->u.i != 0 : false;
    a->u.nd.data = state->u.c.v[b + 3];
    a->u.nd.built = true;
}

int pk_build(pk_machine *pm, pk_obj *inst, pk_obj *state, mf_status *st)
{
    pk_gate_build(pm, inst, state);
    switch (inst->kind) {
    case PK_NDARRAY: build_ndarray(inst, state); return 0;
    case PK_NPDTYPE: {
        /* numpy.dtype.__setstate__: (version, byteorder, ...) */
        pk_obj *order = is_seq(state) && state->u.c.n >= 2 ? state->u.c.v[1] : NULL;
        if (order && order->kind == PK_STR && order->u.s.n == 1 &&
            strchr("<>|=", order->u.s.p[0]))
            inst->u.nt.order = order->u.s.p[0];
        return 0;
    }
    case PK_DICT: inst->u.c.state = state; return 0; /* OrderedDict attributes */
    case PK_OBJECT: inst->u.o.state = state; return 0;
    default:
        /* load_build: __setstate__ if the value has one, else its __dict__
         * and slots; a None state is a no-op on anything. Not modelled
         * for other values: taken as done (the stream goes on), and
         * irregular: no writer builds such a value so. */
        (void)st;
        if (state->kind != PK_NONE && inst->kind != PK_GLOBAL)
            pk_note_irregular(pm, pm->op_off,
                              "BUILD at byte %llu on a value whose __setstate__ mfmt does not "
                              "model: taken as done, not vouched for",
                              (unsigned long long)(pm->base + pm->o.origin + pm->op_off));
        return 0;
    }
}
