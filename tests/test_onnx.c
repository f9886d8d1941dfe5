/* test_onnx.c - the ONNX readers on hand-built protobufs: every way a
 * TensorProto stores its data (raw, typed fields packed and not, sub-byte
 * types in int32_data, strings, complex), external data and the paths it
 * must refuse, malformed tensors, subgraph nesting, the graph printer. */
#include "testlib.h"
#include "pbw.h"

#include "core/core.h"
#include "formats/onnx/onnx.h"

#include <stdlib.h>
#include <unistd.h>

static char dir[256];

typedef struct buf {
    uint8_t b[4096];
    size_t n;
} buf;

static int buf_sink(void *ctx, const void *p, size_t n, mf_status *st)
{
    buf *b = ctx;
    if (b->n + n > sizeof(b->b))
        return mf_fail(st, MF_ERR_USAGE, NULL, -1, "test buffer full");
    memcpy(b->b + b->n, p, n);
    b->n += n;
    return 0;
}

static const char *path_of(const char *name)
{
    static char p[512];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    return p;
}

/* TensorProto header: dims, data_type, name. */
static void tensor_head(pbw *t, const char *name, int type, const int64_t *dims, int nd)
{
    if (nd)
        pbw_packed(t, 1, dims, (size_t)nd);
    pbw_int(t, 2, (uint64_t)type);
    pbw_str(t, 8, name);
}

/* A model whose graph holds the given initializers (each consumed). */
static void save_model(const char *name, pbw *inits, int n)
{
    pbw g = {0}, m = {0}, op = {0};
    pbw_str(&g, 2, "g");
    for (int i = 0; i < n; i++)
        pbw_msg(&g, 5, &inits[i]);
    pbw_int(&m, 1, 8);
    pbw_str(&m, 2, "pbw-test");
    pbw_str(&op, 1, "");
    pbw_int(&op, 2, 13);
    pbw_msg(&m, 8, &op);
    pbw_msg(&m, 7, &g);
    CHECK(pbw_save(&m, path_of(name)) == 0);
    pbw_free(&m);
}

static mf_model *open_ok(const char *name)
{
    mf_status st;
    mf_status_init(&st);
    mf_model *m = NULL;
    mf_open_opts o = {.struct_size = sizeof(mf_open_opts), .flags = MF_OPEN_STRICT};
    int rc = mf_open(path_of(name), &o, &m, &st);
    CHECKF(rc == 0, "%s: %s", name, st.msg);
    mf_status_clear(&st);
    return rc == 0 ? m : NULL;
}

/* Opening fails with `code` and a message containing `part`. */
static void open_fails(const char *name, mf_code code, const char *part)
{
    mf_status st;
    mf_status_init(&st);
    mf_model *m = NULL;
    int rc = mf_open(path_of(name), NULL, &m, &st);
    CHECKF(rc != 0 && st.code == code && strstr(st.msg, part) && strstr(st.msg, path_of(name)),
           "%s: rc %d code %d msg %s (want \"%s\")", name, rc, st.code, st.msg, part);
    mf_close(m);
    mf_status_clear(&st);
}

static void expect_bytes(mf_model *m, const char *tname, mf_dtype dt, const void *want, size_t n)
{
    const mf_tensor *t = mf_tensor_find(m, tname);
    CHECKF(t != NULL, "tensor %s missing", tname);
    if (!t)
        return;
    CHECKF(t->dtype == dt, "%s: dtype %s", tname, mf_dtype_name(t->dtype));
    CHECKF(t->nbytes == n, "%s: nbytes %llu, want %zu", tname, (unsigned long long)t->nbytes, n);
    buf b = {.n = 0};
    mf_status st;
    mf_status_init(&st);
    int rc = mf_tensor_stream(m, t, buf_sink, &b, &st);
    CHECKF(rc == 0, "%s: stream: %s", tname, st.msg);
    CHECKF(rc == 0 && b.n == n && memcmp(b.b, want, n) == 0, "%s: canonical bytes differ", tname);
    mf_status_clear(&st);
}

/* Rows [row0, row0 + nrows) of tensor tname read as F32 equal want. */
static void expect_f32(mf_model *m, const char *tname, uint64_t row0, uint64_t nrows,
                       const float *want, size_t n)
{
    const mf_tensor *t = mf_tensor_find(m, tname);
    float got[16] = {0};
    mf_status st;
    mf_status_init(&st);
    int rc = t ? mf_tensor_read(m, t, MF_F32, row0, nrows, got, sizeof(got), &st) : -1;
    CHECKF(rc == 0 && memcmp(got, want, n * sizeof(float)) == 0,
           "%s rows %llu+%llu as F32: rc %d (%s): %g %g %g %g %g", tname,
           (unsigned long long)row0, (unsigned long long)nrows, rc, st.msg, got[0], got[1],
           got[2], got[3], got[4]);
    mf_status_clear(&st);
}

static void test_typed_fields(void)
{
    static const int64_t d2[] = {2}, d5[] = {5}, d3[] = {3}, d1[] = {1}, d23[] = {2, 3};
    pbw t[13] = {{0}};
    /* float_data unpacked (one fixed32 field per value) */
    tensor_head(&t[0], "f_unpacked", 1, d2, 1);
    pbw_float(&t[0], 4, 1.5f);
    pbw_float(&t[0], 4, -2.0f);
    /* float_data packed */
    tensor_head(&t[1], "f_packed", 1, d2, 1);
    float fv[2] = {3.0f, 0.25f};
    pbw_len(&t[1], 4, fv, sizeof(fv));
    /* FLOAT16 bits in int32_data */
    tensor_head(&t[2], "h", 10, d2, 1);
    int64_t hv[2] = {0x3c00, 0xc000};
    pbw_packed(&t[2], 5, hv, 2);
    /* INT4: five elements, two a value, last nibble padding */
    tensor_head(&t[3], "i4", 22, d5, 1);
    int64_t i4[3] = {0x21, 0xf3, 0x07};
    pbw_packed(&t[3], 5, i4, 3);
    /* INT8 negative values as sign-extended varints, unpacked */
    tensor_head(&t[4], "i8", 3, d3, 1);
    pbw_int(&t[4], 5, (uint64_t)(int64_t)-1);
    pbw_int(&t[4], 5, 5);
    pbw_int(&t[4], 5, (uint64_t)(int64_t)-128);
    /* UINT32 in uint64_data */
    tensor_head(&t[5], "u32", 12, d2, 1);
    int64_t u32[2] = {7, 0xffffffff};
    pbw_packed(&t[5], 11, u32, 2);
    /* COMPLEX64: pairs in float_data */
    tensor_head(&t[6], "c64", 14, d1, 1);
    float cv[2] = {1.0f, -1.0f};
    pbw_len(&t[6], 4, cv, sizeof(cv));
    /* STRING */
    tensor_head(&t[7], "s", 8, d2, 1);
    pbw_str(&t[7], 6, "ab");
    pbw_str(&t[7], 6, "");
    /* INT64 scalar in int64_data */
    tensor_head(&t[8], "scalar", 7, NULL, 0);
    pbw_int(&t[8], 7, 42);
    /* UINT2: 5 elements -> 2 values */
    tensor_head(&t[9], "u2", 25, d5, 1);
    int64_t u2[2] = {0xe4, 0x03};
    pbw_packed(&t[9], 5, u2, 2);
    /* FLOAT4E2M1: 5 elements (0.5, 1, -0.5, -6, 6), INT2: 5 (0, 1, -2, -1, -1),
     * INT4 2x3 (rows 1 2 3 / -1 7 -8: the second row starts mid-byte) */
    tensor_head(&t[10], "f4", 23, d5, 1);
    int64_t f4[3] = {0x21, 0xf9, 0x07};
    pbw_packed(&t[10], 5, f4, 3);
    tensor_head(&t[11], "i2", 26, d5, 1);
    int64_t i2[2] = {0xe4, 0x03};
    pbw_packed(&t[11], 5, i2, 2);
    tensor_head(&t[12], "i4x2", 22, d23, 2);
    int64_t i4x2[3] = {0x21, 0xf3, 0x87};
    pbw_packed(&t[12], 5, i4x2, 3);
    save_model("typed.onnx", t, 13);
    /* BOOL in int32_data: any non-zero value is true */
    pbw tb = {0};
    tensor_head(&tb, "b", 9, d2, 1);
    int64_t bv[2] = {2, 0};
    pbw_packed(&tb, 5, bv, 2);
    save_model("bool.onnx", &tb, 1);
    mf_model *mb = open_ok("bool.onnx");
    if (mb) {
        uint8_t want[2] = {1, 0};
        expect_bytes(mb, "b", MF_BOOL, want, 2);
        mf_close(mb);
    }
    mf_model *m = open_ok("typed.onnx");
    if (!m)
        return;
    CHECK(m->n_tensors == 13);
    float f1[2] = {1.5f, -2.0f};
    expect_bytes(m, "f_unpacked", MF_F32, f1, 8);
    expect_bytes(m, "f_packed", MF_F32, fv, 8);
    uint8_t h[4] = {0x00, 0x3c, 0x00, 0xc0};
    expect_bytes(m, "h", MF_F16, h, 4);
    uint8_t i4b[3] = {0x21, 0xf3, 0x07};
    expect_bytes(m, "i4", MF_I4, i4b, 3);
    uint8_t i8b[3] = {0xff, 0x05, 0x80};
    expect_bytes(m, "i8", MF_I8, i8b, 3);
    uint8_t u32b[8] = {7, 0, 0, 0, 0xff, 0xff, 0xff, 0xff};
    expect_bytes(m, "u32", MF_U32, u32b, 8);
    expect_bytes(m, "c64", MF_C64, cv, 8);
    uint8_t sb[18] = {2, 0, 0, 0, 0, 0, 0, 0, 'a', 'b', 0, 0, 0, 0, 0, 0, 0, 0};
    expect_bytes(m, "s", MF_STRING, sb, 18);
    uint8_t i64b[8] = {42};
    expect_bytes(m, "scalar", MF_I64, i64b, 8);
    uint8_t u2b[2] = {0xe4, 0x03};
    expect_bytes(m, "u2", MF_U2, u2b, 2);
    /* the packed types as F32 (mf_tensor_read), whole and by rows */
    static const float i4f[5] = {1, 2, 3, -1, 7}, u2f[5] = {0, 1, 2, 3, 3},
                       f4f[5] = {0.5f, 1, -0.5f, -6, 6}, i2f[5] = {0, 1, -2, -1, -1},
                       i4x2f[6] = {1, 2, 3, -1, 7, -8};
    expect_f32(m, "i4", 0, UINT64_MAX, i4f, 5);
    expect_f32(m, "u2", 0, UINT64_MAX, u2f, 5);
    expect_f32(m, "f4", 0, UINT64_MAX, f4f, 5);
    expect_f32(m, "i2", 0, UINT64_MAX, i2f, 5);
    expect_f32(m, "i4x2", 0, UINT64_MAX, i4x2f, 6);
    expect_f32(m, "i4x2", 1, 1, i4x2f + 3, 3);
    const mf_value *v = mf_meta_get(m, "opset.ai.onnx");
    CHECK(v && v->type == MF_V_I64 && v->as.i == 13);
    v = mf_meta_get(m, "producer_name");
    CHECK(v && v->type == MF_V_STR && strcmp(v->as.s.ptr, "pbw-test") == 0);
    mf_close(m);
}

static void test_duplicate_names(void)
{
    static const int64_t d1[] = {1};
    pbw t[2] = {{0}};
    for (int i = 0; i < 2; i++) {
        tensor_head(&t[i], "same", 1, d1, 1);
        pbw_float(&t[i], 4, 1.0f);
    }
    save_model("dup.onnx", t, 2);
    mf_status st;
    mf_status_init(&st);
    mf_model *m = NULL;
    mf_open_opts o = {.struct_size = sizeof(mf_open_opts), .flags = MF_OPEN_STRICT};
    CHECKF(mf_open(path_of("dup.onnx"), &o, &m, &st) != 0 && strstr(st.msg, "appears twice"),
           "strict: %s", st.msg);
    mf_status_clear(&st);
    m = NULL;
    CHECK(mf_open(path_of("dup.onnx"), NULL, &m, &st) == 0 && m && m->n_notes == 1 &&
          strstr(m->notes[0], "appears twice"));
    mf_close(m);
    mf_status_clear(&st);
}

static void test_malformed_tensors(void)
{
    static const int64_t d4[] = {4}, d2[] = {2}, neg[] = {-3};
    pbw t = {0};
    /* three values for four elements */
    tensor_head(&t, "short", 1, d4, 1);
    float fv[3] = {1, 2, 3};
    pbw_len(&t, 4, fv, sizeof(fv));
    save_model("short.onnx", &t, 1);
    open_fails("short.onnx", MF_ERR_FORMAT, "float_data holds 3 values");
    /* int64 values in float_data */
    tensor_head(&t, "wrong_field", 7, d2, 1);
    pbw_len(&t, 4, fv, 8);
    save_model("wrong_field.onnx", &t, 1);
    open_fails("wrong_field.onnx", MF_ERR_FORMAT, "belongs in int64_data");
    /* packed floats that are not whole values */
    tensor_head(&t, "ragged", 1, d2, 1);
    pbw_len(&t, 4, fv, 7);
    save_model("ragged.onnx", &t, 1);
    open_fails("ragged.onnx", MF_ERR_FORMAT, "whole number");
    /* negative dimension */
    tensor_head(&t, "neg", 1, neg, 1);
    save_model("neg.onnx", &t, 1);
    open_fails("neg.onnx", MF_ERR_FORMAT, "negative");
    /* unknown data type */
    tensor_head(&t, "t99", 99, d2, 1);
    save_model("t99.onnx", &t, 1);
    open_fails("t99.onnx", MF_ERR_UNSUPPORTED, "data_type 99");
    /* data split in segments */
    tensor_head(&t, "seg", 1, d2, 1);
    pbw seg = {0};
    pbw_int(&seg, 1, 0);
    pbw_msg(&t, 3, &seg);
    save_model("seg.onnx", &t, 1);
    open_fails("seg.onnx", MF_ERR_UNSUPPORTED, "segment");
    /* elements but no data anywhere */
    tensor_head(&t, "nodata", 1, d2, 1);
    save_model("nodata.onnx", &t, 1);
    open_fails("nodata.onnx", MF_ERR_FORMAT, "has no data");
    /* a STRING tensor in raw_data */
    tensor_head(&t, "sraw", 8, d2, 1);
    pbw_len(&t, 9, "ab", 2);
    save_model("sraw.onnx", &t, 1);
    open_fails("sraw.onnx", MF_ERR_FORMAT, "string_data");
    /* more than 32 dims */
    int64_t many[40];
    for (int i = 0; i < 40; i++)
        many[i] = 1;
    tensor_head(&t, "deep", 1, many, 40);
    save_model("dims.onnx", &t, 1);
    open_fails("dims.onnx", MF_ERR_FORMAT, "dims");
    /* dims whose product overflows 64 bits */
    int64_t huge[3] = {INT64_MAX, INT64_MAX, 4};
    tensor_head(&t, "huge", 1, huge, 3);
    save_model("huge.onnx", &t, 1);
    open_fails("huge.onnx", MF_ERR_FORMAT, "overflows");
}

/* An initializer in `location` at offset/length (NULL: left out). */
static void save_external(const char *model, const char *location, const char *offset,
                          const char *length)
{
    static const int64_t d2[] = {2};
    pbw t = {0}, e = {0};
    tensor_head(&t, "w", 1, d2, 1);
    pbw_str(&e, 1, "location");
    pbw_str(&e, 2, location);
    pbw_msg(&t, 13, &e);
    if (offset) {
        pbw_str(&e, 1, "offset");
        pbw_str(&e, 2, offset);
        pbw_msg(&t, 13, &e);
    }
    if (length) {
        pbw_str(&e, 1, "length");
        pbw_str(&e, 2, length);
        pbw_msg(&t, 13, &e);
    }
    pbw_int(&t, 14, 1);
    save_model(model, &t, 1);
}

static void test_external_data(void)
{
    float w[4] = {0, 0, 7.0f, 8.0f};
    FILE *f = fopen(path_of("w.bin"), "wb");
    CHECK(f && fwrite(w, 1, sizeof(w), f) == sizeof(w));
    if (f)
        fclose(f);
    save_external("ext.onnx", "w.bin", "8", "8");
    mf_model *m = open_ok("ext.onnx");
    if (m) {
        expect_bytes(m, "w", MF_F32, w + 2, 8);
        CHECK(m->n_files == 2 && m->tensors[0].file == 1 && m->tensors[0].offset == 8);
        mf_close(m);
    }
    save_external("ext_nolen.onnx", "w.bin", NULL, NULL);
    m = open_ok("ext_nolen.onnx");
    if (m) {
        expect_bytes(m, "w", MF_F32, w, 8);
        mf_close(m);
    }
    save_external("ext_len.onnx", "w.bin", "0", "12");
    open_fails("ext_len.onnx", MF_ERR_FORMAT, "length 12");
    save_external("ext_past.onnx", "w.bin", "12", "8");
    open_fails("ext_past.onnx", MF_ERR_FORMAT, "past the end");
    save_external("ext_off.onnx", "w.bin", "1x", "8");
    open_fails("ext_off.onnx", MF_ERR_FORMAT, "not a decimal");
    save_external("ext_up.onnx", "../w.bin", NULL, NULL);
    open_fails("ext_up.onnx", MF_ERR_UNSAFE, "..");
    save_external("ext_up2.onnx", "sub/../../w.bin", NULL, NULL);
    open_fails("ext_up2.onnx", MF_ERR_UNSAFE, "..");
    save_external("ext_abs.onnx", "/etc/passwd", NULL, NULL);
    open_fails("ext_abs.onnx", MF_ERR_UNSAFE, "absolute");
    save_external("ext_missing.onnx", "nothere.bin", NULL, NULL);
    open_fails("ext_missing.onnx", MF_ERR_FORMAT, "does not exist");
    /* a symbolic link inside the directory that leads out of it */
    CHECK(symlink("/etc/hostname", path_of("link.bin")) == 0);
    save_external("ext_link.onnx", "link.bin", NULL, NULL);
    open_fails("ext_link.onnx", MF_ERR_UNSAFE, "outside");
}

/* Nodes X*W -> XW, XW+B -> Y, an If whose branch holds an initializer,
 * then graphs nested `depth` deep. */
static void save_graph_model(const char *name, int depth)
{
    pbw inner = {0};
    pbw_str(&inner, 2, "leaf");
    for (int d = 0; d < depth; d++) {
        pbw node = {0}, attr = {0}, g = {0};
        pbw_str(&attr, 1, "then_branch");
        pbw_int(&attr, 20, 5);
        pbw_msg(&attr, 6, &inner);
        pbw_str(&node, 1, "c");
        pbw_str(&node, 2, "o");
        pbw_str(&node, 4, "If");
        pbw_msg(&node, 5, &attr);
        pbw_str(&g, 2, "level");
        pbw_msg(&g, 1, &node);
        inner = g;
    }
    pbw g = {0}, m = {0}, n1 = {0}, n2 = {0}, n3 = {0}, a = {0}, sub = {0}, t = {0};
    static const int64_t d1[] = {1};
    tensor_head(&t, "sub_w", 1, d1, 1);
    pbw_float(&t, 4, 2.0f);
    pbw_str(&sub, 2, "branch");
    pbw_msg(&sub, 5, &t);
    pbw_str(&n1, 1, "X");
    pbw_str(&n1, 1, "W");
    pbw_str(&n1, 2, "XW");
    pbw_str(&n1, 4, "MatMul");
    pbw_str(&n2, 1, "XW");
    pbw_str(&n2, 1, "B");
    pbw_str(&n2, 2, "Y");
    pbw_str(&n2, 4, "Add");
    pbw_str(&a, 1, "else_branch");
    pbw_int(&a, 20, 5);
    pbw_msg(&a, 6, &sub);
    pbw_str(&n3, 1, "cond");
    pbw_str(&n3, 2, "Z");
    pbw_str(&n3, 4, "If");
    pbw_msg(&n3, 5, &a);
    pbw_str(&g, 2, "main");
    pbw_msg(&g, 1, &n1);
    pbw_msg(&g, 1, &n2);
    pbw_msg(&g, 1, &n3);
    if (depth) {
        pbw node = {0}, attr = {0};
        pbw_str(&attr, 1, "then_branch");
        pbw_msg(&attr, 6, &inner);
        pbw_str(&node, 4, "If");
        pbw_msg(&node, 5, &attr);
        pbw_msg(&g, 1, &node);
    } else {
        pbw_free(&inner);
    }
    pbw_int(&m, 1, 9);
    pbw_msg(&m, 7, &g);
    CHECK(pbw_save(&m, path_of(name)) == 0);
    pbw_free(&m);
}

static void test_graph(void)
{
    save_graph_model("graph.onnx", 2);
    mf_model *m = open_ok("graph.onnx");
    if (!m)
        return;
    CHECK(m->n_tensors == 0); /* subgraph initializers are not listed */
    const mf_value *v = mf_meta_get(m, "graph.subgraph_initializers");
    CHECK(v && v->as.i == 1);
    v = mf_meta_get(m, "graph.nodes");
    CHECK(v && v->as.i == 4);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    mf_status st;
    mf_status_init(&st);
    CHECK(out && mf_onnx_print_graph(m, out, &st) == 0);
    if (out)
        fclose(out);
    CHECKF(text && strstr(text, "\n%XW = MatMul(%X, %W)\n%Y = Add(%XW, %B)\n"), "graph:\n%s",
           text ? text : "(none)");
    CHECK(text && strstr(text, "%Z = If(%cond) {else_branch=<graph>}\n  else_branch:\n"));
    CHECK(text && strstr(text, "    initializer %sub_w: F32[1]\n"));
    free(text);
    mf_status_clear(&st);
    mf_close(m);
    /* nesting deeper than MF_ONNX_MAX_DEPTH is refused, not recursed */
    save_graph_model("deep.onnx", MF_ONNX_MAX_DEPTH + 5);
    open_fails("deep.onnx", MF_ERR_FORMAT, "nested more than");
}

static void test_tensor_file(void)
{
    static const int64_t d3[] = {3};
    pbw t = {0};
    tensor_head(&t, "input", 6, d3, 1);
    int64_t iv[3] = {1, (int64_t)-2, 3};
    pbw_packed(&t, 5, iv, 3);
    CHECK(pbw_save(&t, path_of("input_0.pb")) == 0);
    pbw_free(&t);
    mf_detection d;
    mf_status st;
    mf_status_init(&st);
    CHECK(mf_detect(path_of("input_0.pb"), &d, &st) == 0 && d.format == MF_FMT_ONNX_TENSOR);
    mf_model *m = open_ok("input_0.pb");
    if (m) {
        int32_t want[3] = {1, -2, 3};
        expect_bytes(m, "input", MF_I32, want, 12);
        mf_close(m);
    }
    /* truncated in the middle of a field */
    tensor_head(&t, "input", 6, d3, 1);
    pbw_packed(&t, 5, iv, 3);
    t.n -= 2;
    CHECK(pbw_save(&t, path_of("cut_0.pb")) == 0);
    pbw_free(&t);
    mf_model *bad = NULL;
    CHECK(mf_open(path_of("cut_0.pb"), NULL, &bad, &st) != 0);
    mf_status_clear(&st);
}

int main(void)
{
    if (!tl_make_tmpdir(dir, sizeof(dir), "onnx")) {
        return 1;
    }
    test_typed_fields();
    test_duplicate_names();
    test_malformed_tensors();
    test_external_data();
    test_graph();
    test_tensor_file();
    tl_remove_tmpdir(dir);
    return tl_report("onnx");
}
