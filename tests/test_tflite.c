/* test_tflite.c - the TFLite reader on flatbuffers built here by hand:
 * tensor naming (empty and repeated names), buffers inline and past the
 * flatbuffer, quantization, strings, operator codes; and damaged files
 * (vtables, offsets, vector lengths, indices, sizes) that must be refused
 * with an error, never read out of bounds. */
#include "testmf.h"

#include "core/core.h"
#include "formats/tflite/tflite.h"

#include <stdlib.h>
#include <unistd.h>

/* ------------------------------------------------- a tiny builder
 * Objects are appended in order; a table's vtable sits right before it
 * (soffset > 0) and every field gets an 8-byte slot; references point
 * forward to objects appended later and are patched then. */
typedef struct fbb {
    uint8_t b[8192];
    size_t n;
} fbb;

static size_t put(fbb *f, const void *p, size_t n)
{
    size_t at = f->n;
    if (f->n + n > sizeof(f->b))
        abort();
    memcpy(f->b + f->n, p, n);
    f->n += n;
    return at;
}

static void w32(fbb *f, size_t at, uint32_t v) { mf_wr32le(f->b + at, v); }

/* A table with `nf` slots; mask bit i: field i present. Returns its start. */
static size_t table(fbb *f, unsigned nf, uint32_t mask)
{
    uint8_t vt[4 + 2 * 16] = {0};
    mf_wr16le(vt, (uint16_t)(4 + 2 * nf));
    mf_wr16le(vt + 2, (uint16_t)(4 + 8 * nf));
    for (unsigned i = 0; i < nf; i++)
        if (mask >> i & 1)
            mf_wr16le(vt + 4 + 2 * i, (uint16_t)(4 + 8 * i));
    size_t v = put(f, vt, 4 + 2 * nf);
    uint8_t zero[4 + 8 * 16] = {0};
    size_t t = put(f, zero, 4 + 8 * nf);
    w32(f, t, (uint32_t)(t - v));
    return t;
}

static size_t slot(size_t t, unsigned i) { return t + 4 + 8 * i; }
static void set32(fbb *f, size_t t, unsigned i, uint32_t v) { w32(f, slot(t, i), v); }
static void set64(fbb *f, size_t t, unsigned i, uint64_t v) { mf_wr64le(f->b + slot(t, i), v); }
static void link_at(fbb *f, size_t at, size_t target) { w32(f, at, (uint32_t)(target - at)); }
static void ref(fbb *f, size_t t, unsigned i, size_t target) { link_at(f, slot(t, i), target); }

/* A vector (u32 count, elements); returns where the count is. */
static size_t vec(fbb *f, const void *elems, uint32_t n, size_t elem)
{
    uint8_t c[4];
    mf_wr32le(c, n);
    size_t at = put(f, c, 4);
    put(f, elems, n * elem);
    return at;
}

static size_t str(fbb *f, const char *s)
{
    size_t at = vec(f, s, (uint32_t)strlen(s), 1);
    put(f, "", 1);
    return at;
}

/* A vector of n references, patched later with ref_elem(). */
static size_t refs(fbb *f, uint32_t n)
{
    uint8_t z[4 * 16] = {0};
    return vec(f, z, n, 4);
}
static void ref_elem(fbb *f, size_t v, uint32_t i, size_t target) { link_at(f, v + 4 + 4 * i, target); }

/* ------------------------------------------------------ the model */

typedef struct where {
    size_t root, buf1_data, tensor0, shape0, op_inputs, ext_buffer, vt_model;
} where;

static const float w_f32[4] = {1, 2, 3, 4};
static const int8_t w_i8[4] = {-1, 2, -3, 4};
static const float w_ext[2] = {5, 6};

static void build(fbb *f, where *at)
{
    memset(f, 0, sizeof(*f));
    put(f, "\0\0\0\0TFL3", 8);
    at->vt_model = f->n;
    size_t model = table(f, 7, 0x5f); /* version, codes, subgraphs, description, buffers, metadata */
    at->root = model;
    link_at(f, 0, model);
    set32(f, model, 0, 3);
    /* operator codes: CONV_2D (builtin_code), a custom op (deprecated 32) */
    size_t codes = refs(f, 2);
    ref(f, model, 1, codes);
    size_t c0 = table(f, 4, 1u << 3);
    set32(f, c0, 3, 3);
    ref_elem(f, codes, 0, c0);
    size_t c1 = table(f, 4, 1u << 0 | 1u << 1);
    f->b[slot(c1, 0)] = 32;
    ref_elem(f, codes, 1, c1);
    ref(f, c1, 1, str(f, "MyOp"));
    ref(f, model, 3, str(f, "hand-built"));
    /* buffers: 0 empty, 1 f32, 2 i8, 3 strings, 4 past the flatbuffer, 5 metadata */
    size_t bufs = refs(f, 6);
    ref(f, model, 4, bufs);
    size_t b0 = table(f, 3, 0);
    ref_elem(f, bufs, 0, b0);
    size_t b1 = table(f, 3, 1);
    ref_elem(f, bufs, 1, b1);
    at->buf1_data = vec(f, w_f32, 16, 1);
    ref(f, b1, 0, at->buf1_data);
    size_t b2 = table(f, 3, 1);
    ref_elem(f, bufs, 2, b2);
    ref(f, b2, 0, vec(f, w_i8, 4, 1));
    size_t b3 = table(f, 3, 1);
    ref_elem(f, bufs, 3, b3);
    /* TFLite strings: count 2, offsets 12, 14, 14, bytes "hi" and "" */
    uint8_t sbuf[14] = {2, 0, 0, 0, 16, 0, 0, 0, 18, 0, 0, 0, 18, 0};
    uint8_t sall[18];
    memcpy(sall, sbuf, 14);
    mf_wr32le(sall + 4, 16);
    mf_wr32le(sall + 8, 18);
    mf_wr32le(sall + 12, 18);
    sall[16] = 'h';
    sall[17] = 'i';
    ref(f, b3, 0, vec(f, sall, 18, 1));
    at->ext_buffer = table(f, 3, 1u << 1 | 1u << 2);
    ref_elem(f, bufs, 4, at->ext_buffer);
    size_t b5 = table(f, 3, 1);
    ref_elem(f, bufs, 5, b5);
    ref(f, b5, 0, vec(f, "1.5.0\0\0\0", 8, 1));
    /* metadata: min_runtime_version -> buffer 5 */
    size_t metas = refs(f, 1);
    ref(f, model, 6, metas);
    size_t md = table(f, 2, 3);
    ref_elem(f, metas, 0, md);
    ref(f, md, 0, str(f, "min_runtime_version"));
    set32(f, md, 1, 5);
    /* one subgraph */
    size_t sgs = refs(f, 1);
    ref(f, model, 2, sgs);
    size_t sg = table(f, 5, 1u << 0 | 1u << 3);
    ref_elem(f, sgs, 0, sg);
    size_t ts = refs(f, 6);
    ref(f, sg, 0, ts);
    /* t0 "w" F32 [2,2] buffer 1 (its name repeats in t2) */
    size_t t0 = table(f, 7, 1u << 0 | 1u << 1 | 1u << 2 | 1u << 3);
    at->tensor0 = t0;
    ref_elem(f, ts, 0, t0);
    int32_t s22[2] = {2, 2};
    at->shape0 = vec(f, s22, 2, 4);
    ref(f, t0, 0, at->shape0);
    set32(f, t0, 1, 0);
    set32(f, t0, 2, 1);
    ref(f, t0, 3, str(f, "w"));
    /* t1 "" I8 [4] buffer 2, quantized per tensor */
    size_t t1 = table(f, 7, 1u << 0 | 1u << 1 | 1u << 2 | 1u << 4);
    ref_elem(f, ts, 1, t1);
    int32_t s4[1] = {4};
    ref(f, t1, 0, vec(f, s4, 1, 4));
    f->b[slot(t1, 1)] = 9;
    set32(f, t1, 2, 2);
    size_t q = table(f, 7, 1u << 2 | 1u << 3);
    ref(f, t1, 4, q);
    float scale = 0.5f;
    ref(f, q, 2, vec(f, &scale, 1, 4));
    int64_t zp = -3;
    ref(f, q, 3, vec(f, &zp, 1, 8));
    /* t2 "w" again: an activation (buffer 0) */
    size_t t2 = table(f, 7, 1u << 3);
    ref_elem(f, ts, 2, t2);
    ref(f, t2, 3, str(f, "w"));
    /* t3: no buffer, no name field at all (regression: a NULL name was
     * compared with memcmp) */
    size_t t3 = table(f, 7, 0);
    ref_elem(f, ts, 3, t3);
    /* t4 "names" STRING [2] buffer 3 */
    size_t t4 = table(f, 7, 1u << 0 | 1u << 1 | 1u << 2 | 1u << 3);
    ref_elem(f, ts, 4, t4);
    int32_t s2[1] = {2};
    ref(f, t4, 0, vec(f, s2, 1, 4));
    f->b[slot(t4, 1)] = 5;
    set32(f, t4, 2, 3);
    ref(f, t4, 3, str(f, "names"));
    /* t5 "big" F32 [2] buffer 4 (outside the flatbuffer) */
    size_t t5 = table(f, 7, 1u << 0 | 1u << 2 | 1u << 3);
    ref_elem(f, ts, 5, t5);
    ref(f, t5, 0, vec(f, s2, 1, 4));
    set32(f, t5, 2, 4);
    ref(f, t5, 3, str(f, "big"));
    /* one operator: CONV_2D(t0, -1) -> t3 */
    size_t ops = refs(f, 1);
    ref(f, sg, 3, ops);
    size_t op = table(f, 3, 7);
    ref_elem(f, ops, 0, op);
    set32(f, op, 0, 0);
    int32_t in[2] = {0, -1}, out[1] = {3};
    at->op_inputs = vec(f, in, 2, 4);
    ref(f, op, 1, at->op_inputs);
    ref(f, op, 2, vec(f, out, 1, 4));
    /* the large-model buffer: its bytes after the flatbuffer */
    while (f->n % 16)
        put(f, "", 1);
    size_t ext = put(f, w_ext, sizeof(w_ext));
    set64(f, at->ext_buffer, 1, ext);
    set64(f, at->ext_buffer, 2, sizeof(w_ext));
}

static char path[256];

static int save(const fbb *f)
{
    FILE *fp = fopen(path, "wb");
    if (!fp)
        return -1;
    size_t k = fwrite(f->b, 1, f->n, fp);
    return fclose(fp) == 0 && k == f->n ? 0 : -1;
}

static void expect(mf_model *m, const char *name, mf_dtype dt, const void *bytes, size_t n)
{
    const mf_tensor *t = mf_tensor_find(m, name);
    CHECKF(t && t->dtype == dt, "%s: missing or dtype %s", name, t ? mf_dtype_name(t->dtype) : "-");
    if (!t)
        return;
    tl_sinkbuf s = {.n = 0};
    mf_status st;
    mf_status_init(&st);
    CHECKF(mf_tensor_stream(m, t, tl_sink, &s, &st) == 0 && s.n == n && memcmp(s.b, bytes, n) == 0,
           "%s: bytes differ (%s)", name, st.msg);
    mf_status_clear(&st);
}

static void test_good(void)
{
    fbb f;
    where at;
    build(&f, &at);
    CHECK(save(&f) == 0);
    mf_status st;
    mf_status_init(&st);
    mf_model *m = NULL;
    mf_open_opts o = {.struct_size = sizeof(mf_open_opts), .flags = MF_OPEN_STRICT};
    CHECKF(mf_open(path, &o, &m, &st) == 0, "open: %s", st.msg);
    mf_status_clear(&st);
    if (!m)
        return;
    CHECK(m->format == MF_FMT_TFLITE && strcmp(m->version, "3") == 0);
    CHECKF(m->n_tensors == 4, "%zu tensors", m->n_tensors);
    expect(m, "0/#0", MF_F32, w_f32, 16); /* "w" repeats: named by index */
    expect(m, "0/#1", MF_I8, w_i8, 4);    /* empty name */
    uint8_t strings[8 + 2 + 8] = {2, 0, 0, 0, 0, 0, 0, 0, 'h', 'i'};
    expect(m, "0/names", MF_STRING, strings, sizeof(strings));
    expect(m, "0/big", MF_F32, w_ext, 8);
    const mf_tensor *t = mf_tensor_find(m, "0/#0");
    CHECK(t && t->ndim == 2 && t->shape[0] == 2 && t->shape[1] == 2 && t->data);
    mf_tflite_quant q;
    const mf_tensor *ti8 = mf_tensor_find(m, "0/#1");
    CHECK(ti8 && mf_tflite_quantization(m, ti8, &q) == 1 && q.n_scale == 1 &&
          mf_tflite_quant_scale(&q, 0) == 0.5f && mf_tflite_quant_zero_point(&q, 0) == -3);
    CHECK(t && mf_tflite_quantization(m, t, &q) == 0);
    const mf_value *v = mf_meta_get(m, "operator_codes");
    CHECK(v && v->type == MF_V_ARR && v->as.arr.n == 2 &&
          strcmp(v->as.arr.items[0].as.s.ptr, "CONV_2D") == 0 &&
          strcmp(v->as.arr.items[1].as.s.ptr, "CUSTOM:MyOp") == 0);
    v = mf_meta_get(m, "min_runtime_version");
    CHECK(v && v->type == MF_V_STR && strcmp(v->as.s.ptr, "1.5.0") == 0);
    v = mf_meta_get(m, "description");
    CHECK(v && v->type == MF_V_STR && strcmp(v->as.s.ptr, "hand-built") == 0);
    mf_close(m);
}

/* The damaged copy must be refused with a message naming the file. */
static void refused(const fbb *f, const char *what)
{
    CHECK(save(f) == 0);
    mf_status st;
    mf_status_init(&st);
    mf_model *m = NULL;
    mf_open_opts o = {.struct_size = sizeof(mf_open_opts), .flags = MF_OPEN_STRICT};
    int rc = mf_open(path, &o, &m, &st);
    CHECKF(rc != 0 && strstr(st.msg, path), "%s: rc %d, %s", what, rc, st.msg);
    mf_close(m);
    mf_status_clear(&st);
}

static void test_damaged(void)
{
    fbb f;
    where at;
    build(&f, &at);
    fbb good = f;
    w32(&f, 0, 0xfffffff0u); /* root offset past the end */
    refused(&f, "root offset");
    f = good;
    w32(&f, at.root, 0x7fffffff); /* vtable far before the start */
    refused(&f, "vtable offset");
    f = good;
    mf_wr16le(f.b + at.vt_model, 3); /* odd vtable size */
    refused(&f, "vtable size");
    f = good;
    mf_wr16le(f.b + at.vt_model + 2, 0xfff0); /* table size past the end */
    refused(&f, "table size");
    f = good;
    w32(&f, at.buf1_data, 0x40000000); /* vector length past the end */
    refused(&f, "vector length");
    f = good;
    w32(&f, at.shape0 + 4, (uint32_t)-5); /* negative dimension */
    refused(&f, "negative dim");
    f = good;
    w32(&f, at.shape0 + 4, 3); /* buffer holds 16 bytes, shape needs 24 */
    refused(&f, "buffer size");
    f = good;
    set32(&f, at.tensor0, 2, 99); /* buffer index past the buffers */
    refused(&f, "buffer index");
    f = good;
    w32(&f, at.op_inputs + 4, 17); /* operator input past the tensors */
    refused(&f, "operator input");
    f = good;
    set64(&f, at.ext_buffer, 1, (uint64_t)1 << 40); /* offset past the file */
    refused(&f, "buffer offset");
    f = good;
    set64(&f, at.ext_buffer, 2, UINT64_MAX); /* offset + size overflows */
    refused(&f, "buffer size overflow");
    f = good;
    memcpy(f.b + 4, "TFL2", 4);
    refused(&f, "identifier");
    f = good;
    f.n = 6; /* truncated */
    refused(&f, "truncated");
}

int main(void)
{
    snprintf(path, sizeof(path), "/tmp/mfmt-tflite-%d.tflite", (int)getpid());
    test_good();
    test_damaged();
    fbb f;
    where at;
    build(&f, &at);
    if (getenv("MFMT_KEEP_TEST_FILES") && save(&f) == 0) { /* e.g. to gather fuzz seeds */
        printf("test file kept: %s\n", path);
        return tl_report("tflite");
    }
    unlink(path);
    return tl_report("tflite");
}
