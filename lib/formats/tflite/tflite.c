/* tflite.c - reader for TensorFlow Lite flatbuffers (schema.fbs, "TFL3").
 *
 * Model: version = 0, operator_codes = 1, subgraphs = 2, description = 3,
 * buffers = 4, metadata_buffer = 5, metadata = 6, signature_defs = 7.
 * SubGraph: tensors = 0, inputs = 1, outputs = 2, operators = 3, name = 4.
 * Tensor: shape = 0, type = 1, buffer = 2, name = 3, quantization = 4,
 * is_variable = 5, sparsity = 6. Buffer: data = 0, offset = 1, size = 2
 * (offset > 1: the bytes sit at that file offset, past the flatbuffer, in
 * models over 2 GB). OperatorCode: deprecated_builtin_code = 0,
 * custom_code = 1, version = 2, builtin_code = 3. Operator: opcode_index = 0,
 * inputs = 1, outputs = 2. Metadata: name = 0, buffer = 1.
 * SignatureDef: signature_key = 2. QuantizationParameters: scale = 2,
 * zero_point = 3, quantized_dimension = 6.
 *
 * Tensors with a non-empty buffer are listed, named
 * "<subgraph index>/<tensor name>", or "<subgraph index>/#<tensor index>"
 * when the name is empty or repeated in its subgraph. A sparse tensor
 * (sparsity set) keeps its dense shape; its bytes are the stored compressed
 * buffer. STRING tensors (count, offsets, bytes in the buffer) stream as
 * mfmt's canonical strings (8-byte length, bytes). */
#include "formats/formats.h"
#include "formats/tflite/tflite.h"
#include "core/emit.h"
#include "core/flatbuf.h"
#include "formats/tflite/tflite_ops.h"

#include <stdlib.h>

#define TFL_PRIV_MAGIC 0x51464c54u /* "TFLQ" */

typedef struct tfl_priv {
    uint32_t magic;
    bool quantized, sparse;
    mf_tflite_quant q;
    const uint8_t *strings; /* STRING tensors: the buffer */
    uint64_t strings_len;
} tfl_priv;

typedef struct tfl {
    mf_model *m;
    mf_fb fb;
    mf_status *st;
    const char *file;
    mf_fb_vec buffers;
    uint64_t budget;  /* entries the file can hold; aliasing offsets could repeat work */
    uint64_t n_tensors, n_operators, n_quantized, n_sparse;
} tfl;

static int spend(tfl *x, uint64_t n, uint64_t at)
{
    if (n > x->budget)
        return mf_fail(x->st, MF_ERR_FORMAT, x->file, (int64_t)at,
                       "flatbuffer offsets alias: more entries than the file can hold");
    x->budget -= n;
    return 0;
}

static mf_dtype tfl_dtype(int8_t type)
{
    switch (type) {
    case 0: return MF_F32;
    case 1: return MF_F16;
    case 2: return MF_I32;
    case 3: return MF_U8;
    case 4: return MF_I64;
    case 5: return MF_STRING;
    case 6: return MF_BOOL;
    case 7: return MF_I16;
    case 8: return MF_C64;
    case 9: return MF_I8;
    case 10: return MF_F64;
    case 11: return MF_C128;
    case 12: return MF_U64;
    case 15: return MF_U32;
    case 16: return MF_U16;
    case 17: return MF_I4; /* two a byte, first in the low nibble */
    case 18: return MF_BF16;
    default: return MF_DTYPE_INVALID; /* RESOURCE, VARIANT, unknown */
    }
}

/* ------------------------------------------------------------ metadata */

static int meta_str(tfl *x, const char *key, const char *s, size_t n)
{
    mf_kv *kv = mf_model_add_meta(x->m, key, x->st);
    if (!kv)
        return -1;
    kv->v = mf_value_str(x->m->arena, s, n);
    return 0;
}

static int meta_int(tfl *x, const char *key, int64_t v)
{
    mf_kv *kv = mf_model_add_meta(x->m, key, x->st);
    if (!kv)
        return -1;
    kv->v = mf_value_int(v);
    return 0;
}

static int meta_str_array(tfl *x, const char *key, mf_value *items, size_t n)
{
    mf_kv *kv = mf_model_add_meta(x->m, key, x->st);
    if (!kv)
        return -1;
    kv->v.type = MF_V_ARR;
    kv->v.as.arr.elem = MF_V_STR;
    kv->v.as.arr.n = n;
    kv->v.as.arr.items = items;
    return 0;
}

/* The bytes of buffer `bi`: inline data, or [offset, offset + size) of the
 * file when offset > 1. */
static int buffer_bytes(tfl *x, uint32_t bi, const uint8_t **p, uint64_t *len, uint64_t *off)
{
    *p = NULL;
    *len = *off = 0;
    if (bi >= x->buffers.n)
        return mf_fail(x->st, MF_ERR_FORMAT, x->file, -1,
                       "buffer index %u is past the %u buffers", bi, x->buffers.n);
    mf_fb_table b;
    mf_fb_vec data;
    bool has;
    uint64_t boff, bsize;
    if (mf_fb_vec_table(&x->fb, &x->buffers, bi, &b, "Buffer") ||
        mf_fb_vector(&x->fb, &b, 0, 1, &data, &has, "Buffer.data") ||
        mf_fb_u64(&x->fb, &b, 1, 0, &boff, "Buffer.offset") ||
        mf_fb_u64(&x->fb, &b, 2, 0, &bsize, "Buffer.size"))
        return -1;
    if (boff > 1) {
        uint64_t end;
        if (mf_add_ovf(boff, bsize, &end) || end > x->fb.size)
            return mf_fail(x->st, MF_ERR_FORMAT, x->file, (int64_t)b.pos,
                           "buffer %u: [offset %llu, +%llu) is past the end of the file (%llu bytes)",
                           bi, (unsigned long long)boff, (unsigned long long)bsize,
                           (unsigned long long)x->fb.size);
        *p = x->fb.base + boff;
        *len = bsize;
        *off = boff;
        return 0;
    }
    *p = x->fb.base + data.pos;
    *len = data.n;
    *off = data.pos;
    return 0;
}

/* Metadata entries (name -> buffer): text when the buffer is text (NUL
 * padding dropped), else "NAME.nbytes". */
static int read_metadata(tfl *x, const mf_fb_table *root)
{
    mf_fb_vec v;
    bool has;
    if (mf_fb_vector(&x->fb, root, 6, 4, &v, &has, "Model.metadata") || spend(x, v.n, v.pos))
        return -1;
    for (uint32_t i = 0; i < v.n; i++) {
        mf_fb_table t;
        const char *name;
        uint32_t nl, bi;
        if (mf_fb_vec_table(&x->fb, &v, i, &t, "Metadata") ||
            mf_fb_string(&x->fb, &t, 0, &name, &nl, "Metadata.name") ||
            mf_fb_u32(&x->fb, &t, 1, 0, &bi, "Metadata.buffer"))
            return -1;
        const uint8_t *p;
        uint64_t len, off;
        if (buffer_bytes(x, bi, &p, &len, &off))
            return -1;
        char *key = mf_arena_strndup(x->m->arena, name ? name : "", nl);
        if (!key)
            return mf_oom(x->st, x->file);
        uint64_t tl = len;
        while (tl > 0 && p[tl - 1] == 0)
            tl--;
        bool text = tl < 4096 && !memchr(p, 0, tl) && mf_utf8_check(p, tl) < 0;
        for (uint64_t k = 0; text && k < tl; k++)
            text = p[k] >= 0x20 || p[k] == '\n' || p[k] == '\t' || p[k] == '\r';
        if (text ? meta_str(x, key, (const char *)p, tl)
                 : meta_int(x, mf_arena_printf(x->m->arena, "%s.nbytes", key), (int64_t)len))
            return -1;
    }
    return 0;
}

/* The name of each operator code: builtin (the larger of the deprecated
 * byte and builtin_code) or the custom code's string. */
static int read_operator_codes(tfl *x, const mf_fb_table *root, uint32_t *n_codes)
{
    mf_fb_vec v;
    bool has;
    if (mf_fb_vector(&x->fb, root, 1, 4, &v, &has, "Model.operator_codes") ||
        spend(x, v.n, v.pos))
        return -1;
    *n_codes = v.n;
    mf_value *items = v.n ? mf_arena_calloc(x->m->arena, v.n, sizeof(mf_value)) : NULL;
    if (v.n && !items)
        return mf_oom(x->st, x->file);
    for (uint32_t i = 0; i < v.n; i++) {
        mf_fb_table t;
        uint8_t dep;
        uint32_t code;
        const char *custom;
        uint32_t cl;
        if (mf_fb_vec_table(&x->fb, &v, i, &t, "OperatorCode") ||
            mf_fb_u8(&x->fb, &t, 0, 0, &dep, "OperatorCode.deprecated_builtin_code") ||
            mf_fb_string(&x->fb, &t, 1, &custom, &cl, "OperatorCode.custom_code") ||
            mf_fb_u32(&x->fb, &t, 3, 0, &code, "OperatorCode.builtin_code"))
            return -1;
        int32_t eff = (int32_t)code > (int8_t)dep ? (int32_t)code : (int8_t)dep;
        const char *name = mf_tflite_op_name(eff);
        if (eff == 32 && custom) { /* "CUSTOM:<custom_code>" */
            char *s = mf_arena_printf(x->m->arena, "CUSTOM:%.*s", (int)cl, custom);
            items[i] = mf_value_str(x->m->arena, s ? s : "CUSTOM", s ? strlen(s) : 6);
        }
        else if (name)
            items[i] = mf_value_str(x->m->arena, name, strlen(name));
        else {
            char *s = mf_arena_printf(x->m->arena, "BUILTIN_%d", eff);
            items[i] = mf_value_str(x->m->arena, s ? s : "?", s ? strlen(s) : 1);
        }
    }
    return meta_str_array(x, "operator_codes", items, v.n);
}

static int read_signatures(tfl *x, const mf_fb_table *root)
{
    mf_fb_vec v;
    bool has;
    if (mf_fb_vector(&x->fb, root, 7, 4, &v, &has, "Model.signature_defs") ||
        spend(x, v.n, v.pos))
        return -1;
    if (!has)
        return 0;
    mf_value *items = v.n ? mf_arena_calloc(x->m->arena, v.n, sizeof(mf_value)) : NULL;
    if (v.n && !items)
        return mf_oom(x->st, x->file);
    for (uint32_t i = 0; i < v.n; i++) {
        mf_fb_table t;
        const char *key;
        uint32_t kl;
        if (mf_fb_vec_table(&x->fb, &v, i, &t, "SignatureDef") ||
            mf_fb_string(&x->fb, &t, 2, &key, &kl, "SignatureDef.signature_key"))
            return -1;
        items[i] = mf_value_str(x->m->arena, key ? key : "", kl);
    }
    return meta_str_array(x, "signatures", items, v.n);
}

/* ------------------------------------------------------------ tensors */

typedef struct name_ref {
    const char *s;
    uint32_t len, index;
} name_ref;

/* Orders by length, then bytes (empty names may have a NULL pointer). */
static int cmp_name_text(const name_ref *x, const name_ref *y)
{
    if (x->len != y->len)
        return x->len < y->len ? -1 : 1;
    return x->len ? memcmp(x->s, y->s, x->len) : 0;
}

static int cmp_name(const void *a, const void *b)
{
    const name_ref *x = a, *y = b;
    int c = cmp_name_text(x, y);
    return c ? c : (x->index < y->index ? -1 : x->index > y->index);
}

/* unique[i]: tensor i's name is non-empty and no other tensor has it. */
static int unique_names(tfl *x, const mf_fb_vec *tensors, bool *unique)
{
    name_ref *refs = calloc(tensors->n ? tensors->n : 1, sizeof(*refs));
    if (!refs)
        return mf_oom(x->st, x->file);
    for (uint32_t i = 0; i < tensors->n; i++) {
        mf_fb_table t;
        if (mf_fb_vec_table(&x->fb, tensors, i, &t, "Tensor") ||
            mf_fb_string(&x->fb, &t, 3, &refs[i].s, &refs[i].len, "Tensor.name")) {
            free(refs);
            return -1;
        }
        refs[i].index = i;
    }
    qsort(refs, tensors->n, sizeof(*refs), cmp_name);
    for (uint32_t i = 0; i < tensors->n; i++) {
        bool same_prev = i > 0 && cmp_name_text(&refs[i - 1], &refs[i]) == 0;
        bool same_next = i + 1 < tensors->n && cmp_name_text(&refs[i + 1], &refs[i]) == 0;
        unique[refs[i].index] = refs[i].len > 0 && !same_prev && !same_next;
    }
    free(refs);
    return 0;
}

static int read_quantization(tfl *x, const mf_fb_table *tt, tfl_priv *pv)
{
    mf_fb_table q;
    bool has;
    if (mf_fb_subtable(&x->fb, tt, 4, &q, &has, "Tensor.quantization"))
        return -1;
    if (!has)
        return 0;
    mf_fb_vec scale, zp;
    uint32_t dim;
    if (mf_fb_vector(&x->fb, &q, 2, 4, &scale, &has, "QuantizationParameters.scale") ||
        mf_fb_vector(&x->fb, &q, 3, 8, &zp, &has, "QuantizationParameters.zero_point") ||
        mf_fb_u32(&x->fb, &q, 6, 0, &dim, "QuantizationParameters.quantized_dimension"))
        return -1;
    if (scale.n == 0)
        return 0;
    pv->quantized = true;
    pv->q.n_scale = scale.n;
    pv->q.scale = x->fb.base + scale.pos;
    pv->q.n_zero_point = zp.n;
    pv->q.zero_point = zp.n ? x->fb.base + zp.pos : NULL;
    pv->q.quantized_dimension = (int32_t)dim;
    x->n_quantized++;
    return 0;
}

/* TFLite strings: int32 count N, N + 1 int32 offsets from the buffer's
 * start, then the bytes; element i is [offset i, offset i+1). */
static int check_strings(tfl *x, mf_tensor *t, const uint8_t *p, uint64_t len, uint64_t at)
{
    uint64_t want = mf_tensor_nelems(t);
    if (len < 4 || mf_rd32le(p) != want)
        return mf_fail(x->st, MF_ERR_FORMAT, x->file, (int64_t)at,
                       "tensor \"%s\": STRING buffer does not hold %llu strings", t->name,
                       (unsigned long long)want);
    uint64_t n = want, prev = 4 * (n + 2);
    if ((n + 2) * 4 > len)
        return mf_fail(x->st, MF_ERR_FORMAT, x->file, (int64_t)at,
                       "tensor \"%s\": STRING offsets run past the buffer", t->name);
    for (uint64_t i = 0; i <= n; i++) {
        uint64_t o = mf_rd32le(p + 4 + 4 * i);
        if (o < prev || o > len || (i == 0 && o != 4 * (n + 2)))
            return mf_fail(x->st, MF_ERR_FORMAT, x->file, (int64_t)(at + 4 + 4 * i),
                           "tensor \"%s\": STRING offset %llu of element %llu is out of order or past the buffer",
                           t->name, (unsigned long long)o, (unsigned long long)i);
        prev = o;
    }
    t->nbytes = 8 * n + (prev - 4 * (n + 2));
    return 0;
}

static int read_tensor(tfl *x, uint32_t sg, const mf_fb_table *tt, uint32_t ti, bool unique)
{
    uint32_t bi;
    uint8_t type;
    if (mf_fb_u32(&x->fb, tt, 2, 0, &bi, "Tensor.buffer") ||
        mf_fb_u8(&x->fb, tt, 1, 0, &type, "Tensor.type"))
        return -1;
    const uint8_t *p;
    uint64_t len, off;
    if (bi == 0 || buffer_bytes(x, bi, &p, &len, &off))
        return bi == 0 ? 0 : -1;
    if (len == 0)
        return 0; /* no constant data: an activation or a variable */
    const char *name;
    uint32_t nl;
    mf_fb_vec shape;
    bool has_shape;
    mf_fb_table sp;
    bool sparse;
    if (mf_fb_string(&x->fb, tt, 3, &name, &nl, "Tensor.name") ||
        mf_fb_vector(&x->fb, tt, 0, 4, &shape, &has_shape, "Tensor.shape") ||
        mf_fb_subtable(&x->fb, tt, 6, &sp, &sparse, "Tensor.sparsity"))
        return -1;
    mf_tensor *t = mf_model_add_tensor(x->m, x->st);
    tfl_priv *pv = mf_arena_alloc(x->m->arena, sizeof(*pv));
    if (!t || !pv)
        return t ? mf_oom(x->st, x->file) : -1;
    t->name = unique ? mf_arena_printf(x->m->arena, "%u/%.*s", sg, (int)nl, name)
                     : mf_arena_printf(x->m->arena, "%u/#%u", sg, ti);
    if (!t->name)
        return mf_oom(x->st, x->file);
    if (unique && memchr(name, 0, nl))
        mf_model_note(x->m, "tensor %u/#%u: name contains a NUL byte; shown up to it", sg, ti);
    pv->magic = TFL_PRIV_MAGIC;
    pv->sparse = sparse;
    t->priv = pv;
    t->dtype = tfl_dtype((int8_t)type);
    if (t->dtype == MF_DTYPE_INVALID)
        return mf_fail(x->st, MF_ERR_UNSUPPORTED, x->file, (int64_t)tt->pos,
                       "tensor \"%s\": TensorType %d holds no plain data mfmt can read",
                       t->name, (int8_t)type);
    if (shape.n > MF_MAX_DIMS)
        return mf_fail(x->st, MF_ERR_FORMAT, x->file, (int64_t)shape.pos,
                       "tensor \"%s\": %u dimensions (mfmt reads at most %d)", t->name, shape.n,
                       MF_MAX_DIMS);
    t->ndim = (int)shape.n;
    for (uint32_t d = 0; d < shape.n; d++)
        t->shape[d] = (int32_t)mf_rd32le(mf_fb_elem(&x->fb, &shape, d));
    t->file = 0;
    t->offset = off;
    if (read_quantization(x, tt, pv))
        return -1;
    if (sparse) { /* the stored compressed bytes; shape is the dense one */
        x->n_sparse++;
        t->nbytes = len;
        t->data = p;
        return 0;
    }
    if (t->dtype == MF_STRING) {
        pv->strings = p;
        pv->strings_len = len;
        return check_strings(x, t, p, len, off);
    }
    if (mf_tensor_set_nbytes(t, x->file, (int64_t)tt->pos, x->st))
        return -1;
    if (t->nbytes != len)
        return mf_fail(x->st, MF_ERR_FORMAT, x->file, (int64_t)off,
                       "tensor \"%s\": buffer %u holds %llu bytes, but shape x %s needs %llu",
                       t->name, bi, (unsigned long long)len, mf_dtype_name(t->dtype),
                       (unsigned long long)t->nbytes);
    t->data = p;
    return 0;
}

/* Operators index operator codes and tensors (-1: an omitted input). */
static int check_operators(tfl *x, uint32_t sg, const mf_fb_table *sgt, uint32_t n_tensors,
                           uint32_t n_codes)
{
    mf_fb_vec ops;
    bool has;
    if (mf_fb_vector(&x->fb, sgt, 3, 4, &ops, &has, "SubGraph.operators") ||
        spend(x, ops.n, ops.pos))
        return -1;
    x->n_operators += ops.n;
    for (uint32_t i = 0; i < ops.n; i++) {
        mf_fb_table op;
        uint32_t code;
        if (mf_fb_vec_table(&x->fb, &ops, i, &op, "Operator") ||
            mf_fb_u32(&x->fb, &op, 0, 0, &code, "Operator.opcode_index"))
            return -1;
        if (code >= n_codes)
            mf_breach(x->st, x->file, (int64_t)op.pos,
                      "subgraph %u operator %u: opcode_index %u is past the %u operator codes",
                      sg, i, code, n_codes);
        for (unsigned id = 1; id <= 2; id++) {
            mf_fb_vec io;
            if (mf_fb_vector(&x->fb, &op, id, 4, &io, &has, "Operator inputs/outputs") ||
                spend(x, io.n, io.pos))
                return -1;
            for (uint32_t k = 0; k < io.n; k++) {
                int32_t ti = (int32_t)mf_rd32le(mf_fb_elem(&x->fb, &io, k));
                if (ti < -1 || (ti >= 0 && (uint32_t)ti >= n_tensors)) {
                    mf_breach(x->st, x->file, (int64_t)(io.pos + 4 * (uint64_t)k),
                              "subgraph %u operator %u: %s %u is tensor %d, not one of its %u",
                              sg, i, id == 1 ? "input" : "output", k, ti, n_tensors);
                    return -1;
                }
            }
        }
    }
    return 0;
}

static int read_subgraph(tfl *x, uint32_t sg, const mf_fb_table *sgt, uint32_t n_codes)
{
    mf_fb_vec tensors;
    bool has;
    if (mf_fb_vector(&x->fb, sgt, 0, 4, &tensors, &has, "SubGraph.tensors") ||
        spend(x, tensors.n, tensors.pos))
        return -1;
    x->n_tensors += tensors.n;
    bool *unique = calloc(tensors.n ? tensors.n : 1, sizeof(bool));
    if (!unique)
        return mf_oom(x->st, x->file);
    int rc = unique_names(x, &tensors, unique);
    for (uint32_t i = 0; rc == 0 && i < tensors.n; i++) {
        mf_fb_table tt;
        rc = mf_fb_vec_table(&x->fb, &tensors, i, &tt, "Tensor");
        if (rc == 0)
            rc = read_tensor(x, sg, &tt, i, unique[i]);
    }
    free(unique);
    if (rc == 0)
        rc = check_operators(x, sg, sgt, tensors.n, n_codes);
    return rc;
}

static int open_tflite(mf_model *m, const char *path, unsigned flags, mf_status *st)
{
    uint32_t fi;
    if (mf_model_add_file(m, path, &fi, st))
        return -1;
    tfl x = {.m = m, .st = st, .file = m->files[fi].path};
    x.fb = (mf_fb){m->files[fi].base, m->files[fi].size, x.file, st};
    x.budget = x.fb.size;
    if (x.fb.size < 8 || memcmp(x.fb.base + 4, "TFL3", 4) != 0)
        return mf_fail(st, MF_ERR_FORMAT, x.file, 4,
                       "file identifier is not \"TFL3\": not a TFLite flatbuffer");
    mf_fb_table root;
    uint32_t version, n_codes = 0;
    const char *desc;
    uint32_t dl;
    mf_fb_vec subgraphs;
    bool has;
    if (mf_fb_root(&x.fb, &root) || mf_fb_u32(&x.fb, &root, 0, 0, &version, "Model.version") ||
        mf_fb_string(&x.fb, &root, 3, &desc, &dl, "Model.description") ||
        mf_fb_vector(&x.fb, &root, 4, 4, &x.buffers, &has, "Model.buffers") ||
        mf_fb_vector(&x.fb, &root, 2, 4, &subgraphs, &has, "Model.subgraphs") ||
        spend(&x, subgraphs.n, subgraphs.pos))
        return -1;
    snprintf(m->version, sizeof(m->version), "%u", version);
    if (meta_int(&x, "version", version) || (desc && meta_str(&x, "description", desc, dl)) ||
        read_metadata(&x, &root) || read_operator_codes(&x, &root, &n_codes) ||
        read_signatures(&x, &root))
        return -1;
    for (uint32_t i = 0; i < subgraphs.n; i++) {
        mf_fb_table sgt;
        if (mf_fb_vec_table(&x.fb, &subgraphs, i, &sgt, "SubGraph") ||
            read_subgraph(&x, i, &sgt, n_codes))
            return -1;
    }
    if (meta_int(&x, "subgraphs", subgraphs.n) || meta_int(&x, "buffers", x.buffers.n) ||
        meta_int(&x, "tensors", (int64_t)x.n_tensors) ||
        meta_int(&x, "operators", (int64_t)x.n_operators) ||
        meta_int(&x, "quantized_tensors", (int64_t)x.n_quantized))
        return -1;
    if (x.n_sparse)
        mf_model_note(m, "%llu sparse tensor%s: listed with the dense shape; their bytes are the stored (compressed) buffer",
                      (unsigned long long)x.n_sparse, x.n_sparse == 1 ? "" : "s");
    m->header_bytes = x.fb.size;
    return st->code == MF_OK ? 0 : -1;
}

/* Everything is mapped except STRING tensors, decoded here. */
static int stream_tflite(const mf_model *m, const mf_tensor *t, mf_sink_fn sink, void *ctx,
                         mf_status *st)
{
    const tfl_priv *pv = t->priv;
    if (!pv || !pv->strings || pv->sparse)
        return mf_stream_mapped(m, t, sink, ctx, st);
    mf_emit *e = mf_emit_new(sink, ctx, st);
    if (!e)
        return -1;
    const uint8_t *p = pv->strings;
    uint64_t n = mf_rd32le(p);
    int rc = 0;
    for (uint64_t i = 0; i < n && rc == 0; i++) {
        uint64_t a = mf_rd32le(p + 4 + 4 * i), b = mf_rd32le(p + 8 + 4 * i);
        rc = mf_emit_string(e, p + a, b - a); /* checked at open */
    }
    return mf_emit_finish(e, rc);
}

/* ------------------------------------------------------------- detection */

static int probe_tflite(mf_probe *p)
{
    if (p->size >= 8 && memcmp(p->b + 4, "TFL3", 4) == 0)
        return mf_probe_found(p, MF_FMT_TFLITE, "TFLite flatbuffer (TFL3)");
    return MF_PROBE_NO;
}

static const char *const tflite_extensions[] = {".tflite", NULL};

const mf_reader mf_reader_tflite = {
    .format = MF_FMT_TFLITE,
    .data_only = true, /* numbers and names: loading runs nothing */
    .name = "tflite",
    .extensions = tflite_extensions,
    .probe = probe_tflite,
    .open = open_tflite,
    .stream = stream_tflite,
};

int mf_tflite_quantization(const mf_model *m, const mf_tensor *t, mf_tflite_quant *out)
{
    const mf_model *o = t->owner ? t->owner : m;
    const tfl_priv *pv = t->priv;
    if (!o || o->format != MF_FMT_TFLITE || !pv || pv->magic != TFL_PRIV_MAGIC || !pv->quantized)
        return 0;
    *out = pv->q;
    return 1;
}

float mf_tflite_quant_scale(const mf_tflite_quant *q, uint32_t i)
{
    if (i >= q->n_scale)
        return 0.0f;
    uint32_t bits = mf_rd32le(q->scale + 4 * (uint64_t)i);
    float f;
    memcpy(&f, &bits, sizeof(f));
    return f;
}

int64_t mf_tflite_quant_zero_point(const mf_tflite_quant *q, uint32_t i)
{
    return i < q->n_zero_point ? (int64_t)mf_rd64le(q->zero_point + 8 * (uint64_t)i) : 0;
}
