/* test_numpy.c - .npy and .npz readers on files built here byte by byte:
 * header versions and dialects, dtypes in both byte orders, Fortran order,
 * deflated members, object arrays, and malformed headers. */
#include "testmf.h"

#include "core/core.h"
#include "formats/numpy/npy.h"

#include <unistd.h>
#include <zlib.h>

static char dir[256];

static const char *tmp_path(const char *name)
{
    static char p[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(p[k], sizeof(p[k]), "%s/%s", dir, name);
    return p[k];
}

static void write_file(const char *path, const void *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) {
        perror(path);
        exit(2);
    }
    fwrite(b, 1, n, f);
    fclose(f);
}

/* A .npy image: magic, version, header dict padded to 64 with '\n' last. */
static size_t npy_image(uint8_t *out, int major, const char *dict, const void *data, size_t n)
{
    size_t pre = major == 1 ? 10 : 12, dl = strlen(dict);
    size_t total = (pre + dl + 1 + 63) / 64 * 64, hlen = total - pre;
    memcpy(out, "\x93NUMPY", 6);
    out[6] = (uint8_t)major;
    out[7] = 0;
    if (major == 1)
        mf_wr16le(out + 8, (uint16_t)hlen);
    else
        mf_wr32le(out + 8, (uint32_t)hlen);
    memcpy(out + pre, dict, dl);
    memset(out + pre + dl, ' ', hlen - dl - 1);
    out[total - 1] = '\n';
    memcpy(out + total, data, n);
    return total + n;
}

static const char *write_npy(const char *name, int major, const char *dict, const void *data,
                             size_t n)
{
    static uint8_t buf[1 << 16];
    size_t len = npy_image(buf, major, dict, data, n);
    const char *p = tmp_path(name);
    write_file(p, buf, len);
    return p;
}

/* Opens path; checks the single tensor's dtype, ndim and canonical bytes. */
static void check_tensor(const char *path, const char *name, mf_dtype dt, int ndim,
                         const int64_t *shape, const void *canon, size_t n)
{
    mf_status st;
    mf_status_init(&st);
    mf_model *m = NULL;
    mf_open_opts o = {.struct_size = sizeof(mf_open_opts), .flags = MF_OPEN_STRICT};
    int rc = mf_open(path, &o, &m, &st);
    CHECKF(rc == 0, "%s: %s", path, st.msg);
    if (rc == 0) {
        const mf_tensor *t = mf_tensor_find(m, name);
        CHECKF(t != NULL, "%s: no tensor \"%s\"", path, name);
        if (t) {
            CHECKF(t->dtype == dt, "%s: dtype %s", path, mf_dtype_name(t->dtype));
            CHECKF(t->ndim == ndim, "%s: ndim %d", path, t->ndim);
            for (int i = 0; i < ndim && i < t->ndim; i++)
                CHECKF(t->shape[i] == shape[i], "%s: shape[%d] %lld", path, i,
                       (long long)t->shape[i]);
            char want[129], got[129];
            tl_sha256_hex(canon, n, want);
            CHECKF(mf_hash_tensor(m, t, MF_SHA256, got, &st) == 0 && strcmp(want, got) == 0,
                   "%s: canonical bytes differ (%s)", path, st.msg);
        }
    }
    mf_close(m);
    mf_status_clear(&st);
}

/* Every plain dtype, in both byte orders: the canonical bytes are the
 * little-endian ones. */
static void test_dtypes(void)
{
    static const struct { const char *code; mf_dtype dt; size_t es; } types[] = {
        {"b1", MF_BOOL, 1}, {"i1", MF_I8, 1},   {"u1", MF_U8, 1},   {"i2", MF_I16, 2},
        {"u2", MF_U16, 2},  {"i4", MF_I32, 4},  {"u4", MF_U32, 4},  {"i8", MF_I64, 8},
        {"u8", MF_U64, 8},  {"f2", MF_F16, 2},  {"f4", MF_F32, 4},  {"f8", MF_F64, 8},
        {"c8", MF_C64, 8},  {"c16", MF_C128, 16},
    };
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        uint8_t le[3 * 16], be[3 * 16];
        size_t es = types[i].es;
        for (size_t k = 0; k < 3 * es; k++)
            le[k] = (uint8_t)(k * 7 + 1) & (types[i].dt == MF_BOOL ? 1 : 0xff);
        /* big-endian: each element (each half of a complex) reversed */
        size_t w = types[i].dt == MF_C64 ? 4 : types[i].dt == MF_C128 ? 8 : es;
        for (size_t k = 0; k < 3 * es; k += w)
            for (size_t b = 0; b < w; b++)
                be[k + b] = le[k + w - 1 - b];
        int64_t shape[1] = {3};
        char dict[128], name[64];
        const char *orders = es == 1 ? "|<>" : "<>";
        for (const char *o = orders; *o; o++) {
            snprintf(dict, sizeof(dict), "{'descr': '%c%s', 'fortran_order': False, 'shape': (3,), }",
                     *o, types[i].code);
            snprintf(name, sizeof(name), "t_%s_%d.npy", types[i].code, (int)(o - orders));
            const char *p = write_npy(name, 1, dict, *o == '>' ? be : le, 3 * es);
            check_tensor(p, "", types[i].dt, 1, shape, le, 3 * es);
        }
    }
}

/* Fortran order: the first index varies fastest on disk. */
static void test_fortran(void)
{
    /* C-order 2x3: 0 1 2 / 3 4 5; on disk column by column: 0 3 1 4 2 5 */
    float c[6] = {0, 1, 2, 3, 4, 5}, f[6] = {0, 3, 1, 4, 2, 5};
    int64_t shape[2] = {2, 3};
    const char *p = write_npy("fortran.npy", 1,
                              "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", f,
                              sizeof(f));
    check_tensor(p, "", MF_F32, 2, shape, c, sizeof(c));
    /* Fortran and big-endian at once */
    uint16_t fbe[6], cle[6];
    for (int i = 0; i < 6; i++) {
        cle[i] = (uint16_t)(0x0100 * i + 7);
        uint16_t v = (uint16_t)(0x0100 * (int)f[i] + 7);
        fbe[i] = (uint16_t)(v >> 8 | v << 8);
    }
    p = write_npy("fortran_be.npy", 1, "{'descr': '>i2', 'fortran_order': True, 'shape': (2, 3), }",
                  fbe, sizeof(fbe));
    check_tensor(p, "", MF_I16, 2, shape, cle, sizeof(cle));
    /* 3-d: shape (2, 2, 2); element (i,j,k) = 4i+2j+k at Fortran place i+2j+4k */
    uint8_t c3[8], f3[8];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            for (int k = 0; k < 2; k++) {
                c3[4 * i + 2 * j + k] = (uint8_t)(4 * i + 2 * j + k);
                f3[i + 2 * j + 4 * k] = (uint8_t)(4 * i + 2 * j + k);
            }
    int64_t s3[3] = {2, 2, 2};
    p = write_npy("fortran3.npy", 1, "{'descr': '|u1', 'fortran_order': True, 'shape': (2, 2, 2), }",
                  f3, 8);
    check_tensor(p, "", MF_U8, 3, s3, c3, 8);
    /* Fortran order with an empty dimension: nothing to read */
    int64_t se[2] = {0, 4};
    p = write_npy("fortran_empty.npy", 1,
                  "{'descr': '<f8', 'fortran_order': True, 'shape': (0, 4), }", "", 0);
    check_tensor(p, "", MF_F64, 2, se, "", 0);
}

/* Header dialects numpy and other writers produce. */
static void test_dialects(void)
{
    int32_t v[6] = {1, -2, 3, -4, 5, -6};
    int64_t s23[2] = {2, 3};
    static const char *const dicts[] = {
        "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }",
        "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3)}",
        "{\"descr\": \"<i4\", \"fortran_order\": False, \"shape\": (2,3)}",
        "{'descr': 'int32', 'fortran_order': False, 'shape': (2, 3), }",
        "{ 'descr' : '<i4' ,\n 'fortran_order' : False , 'shape' : ( 2 , 3 , ) , }",
        "{'descr': 'i4', 'fortran_order': False, 'shape': (2, 3), }",
        "{'descr': '=i4', 'fortran_order': False, 'shape': (2, 3), }",
        /* what ast.literal_eval also reads: the last of repeated keys wins,
         * any quotes, escapes, implicit concatenation, comments, line
         * continuations, other integer spellings, one-letter type codes */
        "{'descr': '<f8', 'descr': '<i4', 'fortran_order': False, 'shape': (2, 3)}",
        "{'''descr''': \"\"\"<i4\"\"\", 'fortran_order': False, 'shape': (2, 3)}",
        "{'de' \"scr\": '\\x3ci' u'4', 'fortran_order': False, # a comment\n 'shape': (0x2, 0b11)}",
        "{'descr': '<i4', 'fortran_order': False, \\\n'shape': (+2, 3)}",
        "{'descr': r'<i4', 'fortran_order': False, 'shape': (2, 3)}",
        "{'descr': 'i', 'fortran_order': False, 'shape': (2, 3,)}",
    };
    for (int major = 1; major <= 3; major++)
        for (size_t i = 0; i < sizeof(dicts) / sizeof(dicts[0]); i++) {
            char name[64];
            snprintf(name, sizeof(name), "dialect_%d_%zu.npy", major, i);
            check_tensor(write_npy(name, major, dicts[i], v, sizeof(v)), "", MF_I32, 2, s23, v,
                         sizeof(v));
        }
    /* Python 2 longs: numpy's _filter_header drops the 'L' in versions 1.0
     * and 2.0 only; a 3.0 header is read as it is (a syntax error) */
    for (int major = 1; major <= 3; major++) {
        char name[64];
        snprintf(name, sizeof(name), "py2_long_%d.npy", major);
        const char *p2 = write_npy(name, major, "{'shape': (2L, 3 L), 'fortran_order': False, 'descr': '<i4'}",
                                   v, sizeof(v));
        if (major <= 2)
            check_tensor(p2, "", MF_I32, 2, s23, v, sizeof(v));
        else
            tl_expect_open_error(p2, MF_ERR_FORMAT, "not a Python literal");
    }
    /* dtypes that are not one number: text, bytes, datetimes, records */
    {
        uint8_t raw[96];
        for (size_t i = 0; i < sizeof(raw); i++)
            raw[i] = (uint8_t)(i * 7 + 1);
        static const struct { const char *dict; mf_dtype dt; int ndim; int64_t shape[3]; size_t n; } other[] = {
            {"{'descr': '<U3', 'fortran_order': False, 'shape': (2,), }", MF_U32, 2, {2, 3}, 24},
            {"{'descr': '|S5', 'fortran_order': False, 'shape': (3,), }", MF_U8, 2, {3, 5}, 15},
            {"{'descr': '|V4', 'fortran_order': False, 'shape': (2, 2), }", MF_U8, 3, {2, 2, 4}, 16},
            {"{'descr': '<M8[ns]', 'fortran_order': False, 'shape': (3,), }", MF_I64, 1, {3}, 24},
            {"{'descr': [('a', '<f4'), ('b', '<i2')], 'fortran_order': False, 'shape': (4,), }", MF_U8, 2, {4, 6}, 24},
            {"{'descr': [('a', '<f4', (2,)), ('', '|V4'), ('c', [('d', '<u1')])], 'fortran_order': False, 'shape': (2,), }",
             MF_U8, 2, {2, 13}, 26},
            {"{'descr': ('<i2', (3,)), 'fortran_order': False, 'shape': (2,), }", MF_I16, 2, {2, 3}, 12},
        };
        for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
            char name[64];
            snprintf(name, sizeof(name), "other_%zu.npy", i);
            check_tensor(write_npy(name, 1, other[i].dict, raw, other[i].n), "", other[i].dt,
                         other[i].ndim, other[i].shape, raw, other[i].n);
        }
    }
    /* 0-d and empty */
    double x = 2.5;
    check_tensor(write_npy("scalar.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }",
                           &x, 8),
                 "", MF_F64, 0, NULL, &x, 8);
    int64_t s0[1] = {0};
    check_tensor(write_npy("empty.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (0,), }",
                           "", 0),
                 "", MF_F32, 1, s0, "", 0);
    check_tensor(write_npy("bool_q.npy", 1, "{'descr': '?', 'fortran_order': False, 'shape': (1,), }",
                           "\x01", 1),
                 "", MF_BOOL, 1, (int64_t[]){1}, "\x01", 1);
}

static void test_bad_headers(void)
{
    float v[4] = {0};
    static const struct { const char *dict; mf_code code; const char *needle; } bad[] = {
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (4), }", MF_ERR_FORMAT, "must be a tuple"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (-4,), }", MF_ERR_FORMAT, "negative"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (4,), 'x': 1}", MF_ERR_FORMAT, "not one of"},
        {"{'descr': '<f4', 'fortran_order': 0, 'shape': (4,)}", MF_ERR_FORMAT, "True or False"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': [4]}", MF_ERR_FORMAT, "tuple"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (4,)} x", MF_ERR_FORMAT, "not a Python literal"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (4,)", MF_ERR_FORMAT, "not a Python literal"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (4 4)}", MF_ERR_FORMAT, "not a Python literal"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (04,)}", MF_ERR_FORMAT, "leading zero"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (4.0,)}", MF_ERR_FORMAT, "integers"},
        {"{'descr': '<f4\\n', 'fortran_order': False, 'shape': (4,)}", MF_ERR_UNSUPPORTED, "not a tensor dtype"},
        {"{'descr': '<f4, 'fortran_order': False, 'shape': (4,)}", MF_ERR_FORMAT, "not a Python literal"},
        {"{'descr' '<f4', 'fortran_order': False, 'shape': (4,)}", MF_ERR_FORMAT, "not a Python literal"},
        {"{'descr': '<f4' 'fortran_order': False, 'shape': (4,)}", MF_ERR_FORMAT, "not a Python literal"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (4,), 'x\"}", MF_ERR_FORMAT, "not a Python literal"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (4,), 7: 1}", MF_ERR_FORMAT, "not one of"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3_0 // 10,)}", MF_ERR_FORMAT, "not a Python literal"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (True + 1,)}", MF_ERR_FORMAT, "not a Python literal"},
        {"{'descr': f'<f4', 'fortran_order': False, 'shape': (4,)}", MF_ERR_FORMAT, "f-string"},
        {"{'descr': '<f3', 'fortran_order': False, 'shape': (4,)}", MF_ERR_UNSUPPORTED, "not a tensor dtype"},
        {"{'descr': '', 'fortran_order': False, 'shape': (4,)}", MF_ERR_UNSUPPORTED, "not a tensor dtype"},
        {"{'descr': '<i99999999999', 'fortran_order': False, 'shape': (4,)}", MF_ERR_UNSUPPORTED, "not a tensor dtype"},
        {"{'descr': '<f16', 'fortran_order': False, 'shape': (4,)}", MF_ERR_UNSUPPORTED, "long double"},
        {"{'descr': 'Object', 'fortran_order': False, 'shape': (4,)}", MF_ERR_UNSUPPORTED, "may hold Python objects"},
        {"{'descr': [('a', '<f4'), ('b', 'object_', (2,))], 'fortran_order': False, 'shape': (4,)}", MF_ERR_UNSUPPORTED, "pickle"},
        {"{'descr': [('a', '<f4'), ('b', [('c', '|O')])], 'fortran_order': False, 'shape': (4,)}", MF_ERR_UNSUPPORTED, "pickle"},
        {"{'descr': '<U5', 'fortran_order': False, 'shape': (4,)}", MF_ERR_FORMAT, "needs 80 bytes"},
        {"{'descr': '|O', 'fortran_order': False, 'shape': (4,)}", MF_ERR_UNSUPPORTED, "pickle"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296)}", MF_ERR_FORMAT, "overflows"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}", MF_ERR_FORMAT, "overflows"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1)}",
         MF_ERR_UNSUPPORTED, "dimensions"},
        {"{'descr': '<f4', 'fortran_order': False}", MF_ERR_FORMAT, "'shape' is missing"},
        {"[1, 2]", MF_ERR_FORMAT, "dict"},
        {"", MF_ERR_FORMAT, "not a Python literal"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (5,)}", MF_ERR_FORMAT, "needs 20 bytes"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char name[64];
        snprintf(name, sizeof(name), "bad_%zu.npy", i);
        tl_expect_open_error(write_npy(name, 1, bad[i].dict, v, sizeof(v)), bad[i].code, bad[i].needle);
    }
    /* preamble errors */
    uint8_t b[256];
    size_t n = npy_image(b, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", v, 16);
    const char *p = tmp_path("version11.npy");
    b[7] = 1;
    write_file(p, b, n);
    tl_expect_open_error(p, MF_ERR_FORMAT, "version 1.1");
    b[7] = 0;
    mf_wr16le(b + 8, 60000); /* header length past the end */
    p = tmp_path("hlen.npy");
    write_file(p, b, n);
    tl_expect_open_error(p, MF_ERR_FORMAT, "header length 60000");
    p = tmp_path("short.npy");
    write_file(p, b, 9);
    tl_expect_open_error(p, MF_ERR_FORMAT, "header length");
    /* v2 header length over the limit */
    n = npy_image(b, 2, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", v, 16);
    mf_wr32le(b + 8, 0x7fffffff);
    p = tmp_path("hlen2.npy");
    write_file(p, b, n);
    tl_expect_open_error(p, MF_ERR_FORMAT, "limit");
}

/* Trailing bytes are noted, not refused (np.load ignores them). */
static void test_trailing_note(void)
{
    float v[5] = {1, 2, 3, 4, 5};
    const char *p = write_npy("trail.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }",
                              v, sizeof(v));
    mf_status st;
    mf_status_init(&st);
    mf_model *m;
    CHECK(mf_open(p, NULL, &m, &st) == 0);
    if (mf_ok(&st)) {
        CHECK(m->n_notes == 1 && strstr(m->notes[0], "4 bytes after"));
        CHECK(strcmp(m->version, "1.0") == 0);
        const mf_value *d = mf_meta_get(m, "npy.descr");
        CHECK(d && d->type == MF_V_STR && strcmp(d->as.s.ptr, "<f4") == 0);
        mf_close(m);
    }
    mf_status_clear(&st);
}

/* ------------------------------------------------------------------ npz */

typedef struct zmember {
    const char *name;
    const uint8_t *data;
    size_t n;
    bool deflate;
    bool bad_crc;
} zmember;

static size_t deflate_raw(const uint8_t *in, size_t n, uint8_t *out, size_t cap)
{
    z_stream zs;
    memset(&zs, 0, sizeof(zs));
    deflateInit2(&zs, 6, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
    zs.next_in = (Bytef *)in;
    zs.avail_in = (uInt)n;
    zs.next_out = out;
    zs.avail_out = (uInt)cap;
    deflate(&zs, Z_FINISH);
    size_t got = zs.total_out;
    deflateEnd(&zs);
    return got;
}

/* A zip as Python's zipfile writes it (no ZIP64; the reader's ZIP64 is the
 * core's and numpy's own files in ../shared exercise it). */
static size_t build_zip(uint8_t *out, const zmember *ms, size_t k)
{
    size_t pos = 0, offs[16], csz[16];
    uint32_t crcs[16];
    for (size_t i = 0; i < k; i++) {
        const zmember *m = &ms[i];
        uint8_t comp[1 << 15];
        const uint8_t *d = m->data;
        size_t cn = m->n;
        if (m->deflate) {
            cn = deflate_raw(m->data, m->n, comp, sizeof(comp));
            d = comp;
        }
        crcs[i] = (uint32_t)crc32(0, m->data, (uInt)m->n) ^ (m->bad_crc ? 1u : 0u);
        offs[i] = pos;
        csz[i] = cn;
        uint8_t *h = out + pos;
        size_t nl = strlen(m->name);
        memset(h, 0, 30);
        mf_wr32le(h, 0x04034b50u);
        mf_wr16le(h + 4, 20);
        mf_wr16le(h + 8, m->deflate ? 8 : 0);
        mf_wr32le(h + 14, crcs[i]);
        mf_wr32le(h + 18, (uint32_t)cn);
        mf_wr32le(h + 22, (uint32_t)m->n);
        mf_wr16le(h + 26, (uint16_t)nl);
        memcpy(h + 30, m->name, nl);
        memcpy(h + 30 + nl, d, cn);
        pos += 30 + nl + cn;
    }
    size_t cd = pos;
    for (size_t i = 0; i < k; i++) {
        const zmember *m = &ms[i];
        uint8_t *h = out + pos;
        size_t nl = strlen(m->name);
        memset(h, 0, 46);
        mf_wr32le(h, 0x02014b50u);
        mf_wr16le(h + 4, 20);
        mf_wr16le(h + 6, 20);
        mf_wr16le(h + 10, m->deflate ? 8 : 0);
        mf_wr32le(h + 16, crcs[i]);
        mf_wr32le(h + 20, (uint32_t)csz[i]);
        mf_wr32le(h + 24, (uint32_t)m->n);
        mf_wr16le(h + 28, (uint16_t)nl);
        mf_wr32le(h + 42, (uint32_t)offs[i]);
        memcpy(h + 46, m->name, nl);
        pos += 46 + nl;
    }
    uint8_t *e = out + pos;
    memset(e, 0, 22);
    mf_wr32le(e, 0x06054b50u);
    mf_wr16le(e + 8, (uint16_t)k);
    mf_wr16le(e + 10, (uint16_t)k);
    mf_wr32le(e + 12, (uint32_t)(pos - cd));
    mf_wr32le(e + 16, (uint32_t)cd);
    return pos + 22;
}

static const char *write_zip(const char *name, const zmember *ms, size_t k)
{
    static uint8_t buf[1 << 17];
    size_t n = build_zip(buf, ms, k);
    const char *p = tmp_path(name);
    write_file(p, buf, n);
    return p;
}

static void test_npz(void)
{
    /* a: C-order little-endian, b: Fortran big-endian F32 2x3 (deflated),
     * c: 0-d; each member in both compressions */
    static uint8_t a[256], b[256], c[256], big[1 << 14];
    int32_t av[4] = {1, 2, 3, 4};
    size_t an = npy_image(a, 1, "{'descr': '<i4', 'fortran_order': False, 'shape': (4,), }", av, 16);
    float bc[6] = {0, 1, 2, 3, 4, 5}, bf[6] = {0, 3, 1, 4, 2, 5};
    uint8_t bbe[24];
    for (int i = 0; i < 6; i++) {
        uint32_t u;
        memcpy(&u, &bf[i], 4);
        for (int j = 0; j < 4; j++)
            bbe[4 * i + j] = (uint8_t)(u >> (24 - 8 * j));
    }
    size_t bn = npy_image(b, 1, "{'descr': '>f4', 'fortran_order': True, 'shape': (2, 3), }", bbe, 24);
    double cv = -1.5;
    size_t cn = npy_image(c, 3, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", &cv, 8);
    /* a larger member: its data spans several inflate chunks */
    static uint16_t bigv[6000];
    for (int i = 0; i < 6000; i++)
        bigv[i] = (uint16_t)(i * 31);
    size_t gn = npy_image(big, 1, "{'descr': '<u2', 'fortran_order': False, 'shape': (60, 100), }",
                          bigv, sizeof(bigv));
    for (int deflate = 0; deflate < 2; deflate++) {
        zmember ms[] = {
            {"a.npy", a, an, deflate, false},
            {"sub/b.npy", b, bn, deflate, false},
            {"c.npy", c, cn, deflate, false},
            {"big.npy", big, gn, deflate, false},
            {"readme.txt", (const uint8_t *)"hi", 2, deflate, false},
        };
        const char *p = write_zip(deflate ? "deflated.npz" : "stored.npz", ms, 5);
        check_tensor(p, "a", MF_I32, 1, (int64_t[]){4}, av, 16);
        check_tensor(p, "sub/b", MF_F32, 2, (int64_t[]){2, 3}, bc, 24);
        check_tensor(p, "c", MF_F64, 0, NULL, &cv, 8);
        check_tensor(p, "big", MF_U16, 2, (int64_t[]){60, 100}, bigv, sizeof(bigv));
        mf_status st;
        mf_status_init(&st);
        mf_model *m;
        if (mf_open(p, NULL, &m, &st) == 0) {
            CHECK(m->n_tensors == 4 && m->n_notes == 1 && strstr(m->notes[0], "readme.txt"));
            const mf_tensor *t = mf_tensor_find(m, "a");
            CHECK(t && (deflate ? t->data == NULL : t->data != NULL));
            mf_close(m);
        }
        mf_status_clear(&st);
    }
    /* an object member is refused, naming it */
    static uint8_t o[256];
    size_t on = npy_image(o, 1, "{'descr': '|O', 'fortran_order': False, 'shape': (1,), }",
                          "\x80\x03N.", 4);
    zmember om[] = {{"a.npy", a, an, false, false}, {"obj.npy", o, on, true, false}};
    tl_expect_open_error(write_zip("object.npz", om, 2), MF_ERR_UNSUPPORTED, "\"obj.npy\"");
    /* bad CRC: validate (strict) finds it in a stored member; streaming a
     * deflated one always checks */
    zmember bm[] = {{"a.npy", a, an, false, true}};
    const char *p = write_zip("badcrc.npz", bm, 1);
    mf_status st;
    mf_status_init(&st);
    mf_model *m = NULL;
    mf_open_opts strict = {.struct_size = sizeof(mf_open_opts), .flags = MF_OPEN_STRICT};
    CHECK(mf_open(p, &strict, &m, &st) != 0 && strstr(st.msg, "CRC"));
    mf_close(m);
    mf_status_clear(&st);
    zmember dm[] = {{"a.npy", a, an, true, true}};
    p = write_zip("badcrc_deflated.npz", dm, 1);
    if (mf_open(p, NULL, &m, &st) == 0) {
        char hex[129];
        CHECK(mf_hash_tensor(m, &m->tensors[0], MF_SHA256, hex, &st) != 0 && strstr(st.msg, "CRC"));
        mf_close(m);
    } else {
        CHECKF(0, "%s: %s", p, st.msg);
    }
    mf_status_clear(&st);
    CHECK(mf_open(p, &strict, &m, &st) != 0 && strstr(st.msg, "CRC")); /* validate inflates */
    mf_close(m);
    mf_status_clear(&st);
    /* a deflated member whose stream is garbage */
    uint8_t g[1 << 12];
    size_t gn2 = build_zip(g, (zmember[]){{"a.npy", a, an, true, false}}, 1);
    g[30 + 5 + 2] ^= 0xff; /* inside the deflate stream, after the local header */
    g[30 + 5 + 3] ^= 0xff;
    p = tmp_path("garbage.npz");
    write_file(p, g, gn2);
    tl_expect_open_error(p, MF_ERR_FORMAT, "a.npy");
    /* a member whose array is cut short, and two members of one name */
    zmember sm[] = {{"a.npy", a, an - 4, true, false}};
    tl_expect_open_error(write_zip("short.npz", sm, 1), MF_ERR_FORMAT, "needs 16 bytes");
    zmember dup[] = {{"a.npy", a, an, false, false}, {"a.npy", a, an, true, false}};
    tl_expect_open_error(write_zip("dup.npz", dup, 2), MF_ERR_FORMAT, "two members");
    /* a deflated member that claims far more than deflate can give */
    uint8_t z[1 << 12];
    zmember lm[] = {{"a.npy", a, an, true, false}};
    size_t zn = build_zip(z, lm, 1);
    for (size_t i = 0; i + 4 <= zn; i++)
        if (mf_rd32le(z + i) == 0x02014b50u)
            mf_wr32le(z + i + 24, 0x7fffffffu);
    p = tmp_path("liar.npz");
    write_file(p, z, zn);
    tl_expect_open_error(p, MF_ERR_FORMAT, "claims");
}

/* ------------------------------------------------------- pickles (scan) */

typedef struct seen {
    int n;
    char member[64];
    size_t len;
    uint8_t first;
} seen;

static int on_pickle(void *ctx, const char *member, const uint8_t *p, size_t n, uint64_t off,
                     mf_status *st)
{
    seen *s = ctx;
    s->n++;
    snprintf(s->member, sizeof(s->member), "%s", member);
    s->len = n;
    s->first = n ? p[0] : 0;
    return 0;
}

static void test_pickles(void)
{
    static uint8_t o[256], a[256];
    size_t on = npy_image(o, 1, "{'descr': '|O', 'fortran_order': False, 'shape': (1,), }",
                          "\x80\x03N.", 4);
    size_t an = npy_image(a, 1, "{'descr': '<i1', 'fortran_order': False, 'shape': (1,), }", "\x05", 1);
    const char *p = tmp_path("obj.npy");
    write_file(p, o, on);
    mf_status st;
    mf_status_init(&st);
    seen s = {0};
    CHECK(mf_numpy_each_pickle(p, on_pickle, &s, &st) == 1 && s.n == 1 && s.len == 4 &&
          s.first == 0x80 && s.member[0] == 0);
    for (int deflate = 0; deflate < 2; deflate++) {
        zmember zm[] = {{"plain.npy", a, an, deflate, false}, {"obj.npy", o, on, deflate, false}};
        p = write_zip("obj.npz", zm, 2);
        memset(&s, 0, sizeof(s));
        CHECK(mf_numpy_each_pickle(p, on_pickle, &s, &st) == 1 && s.n == 1 && s.len == 4 &&
              s.first == 0x80 && strcmp(s.member, "obj.npy") == 0);
    }
    p = tmp_path("plain.npy");
    write_file(p, a, an);
    memset(&s, 0, sizeof(s));
    CHECK(mf_numpy_each_pickle(p, on_pickle, &s, &st) == 0 && s.n == 0);
    mf_status_clear(&st);
    /* the corpus' object arrays, written by numpy */
    const char *shared = tl_shared_dir();
    if (!shared) {
        TL_SKIP("numpy: the corpus and real numpy files (no ../shared)");
        return;
    }
    static const char *const files[] = {"corpus/numpy/object.npy", "corpus/numpy/object_member.npz",
                                        "real/numpy/numpy_py2-objarr.npz"};
    for (size_t i = 0; i < 3; i++) {
        char path[512];
        snprintf(path, sizeof(path), "%s/%s", shared, files[i]);
        memset(&s, 0, sizeof(s));
        int n = mf_numpy_each_pickle(path, on_pickle, &s, &st);
        CHECKF(n == 1 && s.first == 0x80, "%s: %d pickles (%s)", path, n, st.msg);
        mf_status_clear(&st);
    }
}

/* What `mfmt convert X OUT.safetensors` does: every tensor streamed into
 * the safetensors writer; read back, the canonical hashes must agree. */
static int fill_from(void *ctx, size_t i, mf_sink_fn sink, void *sctx, mf_status *st)
{
    const mf_model *m = ctx;
    return mf_tensor_stream(m, &m->tensors[i], sink, sctx, st);
}

static void test_convert_roundtrip(void)
{
    const char *shared = tl_shared_dir();
    if (!shared) {
        TL_SKIP("numpy: the corpus and real numpy files (no ../shared)");
        return;
    }
    static const char *const files[] = {
        "corpus/numpy/compressed.npz", "corpus/numpy/fortran_order_3d.npy",
        "corpus/numpy/big_endian_f4.npy", "corpus/numpy/scalar_0d.npy",
        "corpus/numpy/empty_2d.npy", "real/numpy/scipy_carex_6_data.npz"};
    for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
        char in[512];
        snprintf(in, sizeof(in), "%s/%s", shared, files[f]);
        mf_status st;
        mf_status_init(&st);
        mf_model *m = NULL, *back = NULL;
        if (mf_open(in, NULL, &m, &st)) {
            CHECKF(0, "%s: %s", in, st.msg);
            mf_status_clear(&st);
            continue;
        }
        mf_out_tensor *outs = calloc(m->n_tensors, sizeof(*outs));
        for (size_t i = 0; i < m->n_tensors; i++) {
            outs[i].name = m->tensors[i].name;
            outs[i].dtype = m->tensors[i].dtype;
            outs[i].ndim = m->tensors[i].ndim;
            memcpy(outs[i].shape, m->tensors[i].shape, sizeof(outs[i].shape));
        }
        const char *out = tmp_path("converted.safetensors");
        int rc = mf_safetensors_write(out, outs, m->n_tensors, NULL, 0, fill_from, m, &st);
        CHECKF(rc == 0, "%s: write: %s", in, st.msg);
        if (rc == 0 && mf_open(out, NULL, &back, &st) == 0) {
            for (size_t i = 0; i < m->n_tensors; i++) {
                const mf_tensor *a = &m->tensors[i], *b = mf_tensor_find(back, a->name);
                char ha[129], hb[129];
                CHECKF(b && mf_hash_tensor(m, a, MF_SHA256, ha, &st) == 0 &&
                           mf_hash_tensor(back, b, MF_SHA256, hb, &st) == 0 && strcmp(ha, hb) == 0,
                       "%s: \"%s\" differs after conversion (%s)", in, a->name, st.msg);
            }
        }
        free(outs);
        mf_close(back);
        mf_close(m);
        mf_status_clear(&st);
    }
}

int main(void)
{
    if (!tl_make_tmpdir(dir, sizeof(dir), "numpy")) {
        return 2;
    }
    test_dtypes();
    test_fortran();
    test_dialects();
    test_bad_headers();
    test_trailing_note();
    test_npz();
    test_pickles();
    test_convert_roundtrip();
    tl_remove_tmpdir(dir);
    return tl_report("numpy");
}
