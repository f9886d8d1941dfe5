/* test_tf.c - the TensorFlow readers on hand-built files: a frozen GraphDef
 * (Const nodes with tensor_content and typed values, the fill rule, strings,
 * halves), the dangerous-op findings, and a SavedModel directory whose
 * TensorBundle index is a LevelDB table built here (prefix-compressed keys,
 * CRC32C block trailers, big-endian data, string entries), plus damaged
 * bundles that must be refused. */
#include "testmf.h"
#include "pbw.h"

#include "core/core.h"
#include "core/crc32c.h"
#include "formats/tf/tf.h"

#include <sys/stat.h>
#include <unistd.h>

static char dir[256];

static const char *path_of(const char *name)
{
    static char p[2][512];
    static int k;
    k ^= 1;
    snprintf(p[k], sizeof(p[k]), "%s/%s", dir, name);
    return p[k];
}

static void expect(mf_model *m, const char *name, mf_dtype dt, const void *bytes, size_t n)
{
    const mf_tensor *t = mf_tensor_find(m, name);
    CHECKF(t && t->dtype == dt, "%s: missing or dtype %s", name, t ? mf_dtype_name(t->dtype) : "-");
    if (!t)
        return;
    CHECKF(t->nbytes == n, "%s: nbytes %llu, want %zu", name, (unsigned long long)t->nbytes, n);
    tl_sinkbuf s = {.n = 0};
    mf_status st;
    mf_status_init(&st);
    CHECKF(mf_tensor_stream(m, t, tl_sink, &s, &st) == 0 && s.n == n && memcmp(s.b, bytes, n) == 0,
           "%s: bytes differ (%s)", name, st.msg);
    mf_status_clear(&st);
}

static mf_model *open_path(const char *p, mf_status *st)
{
    mf_model *m = NULL;
    mf_open_opts o = {.struct_size = sizeof(mf_open_opts), .flags = MF_OPEN_STRICT};
    mf_status_init(st);
    if (mf_open(p, &o, &m, st))
        return NULL;
    return m;
}

/* ------------------------------------------------------------ GraphDef */

static void shape(pbw *t, const int64_t *dims, int nd)
{
    pbw s = {0};
    for (int i = 0; i < nd; i++) {
        pbw d = {0};
        pbw_int(&d, 1, (uint64_t)dims[i]);
        pbw_msg(&s, 2, &d);
    }
    pbw_msg(t, 2, &s);
}

/* NodeDef name/op with attr "value" = tensor (consumed); tensor may be NULL. */
static void node(pbw *g, const char *name, const char *op, pbw *tensor)
{
    pbw n = {0};
    pbw_str(&n, 1, name);
    pbw_str(&n, 2, op);
    if (tensor) {
        pbw av = {0}, entry = {0};
        pbw_msg(&av, 8, tensor);
        pbw_str(&entry, 1, "value");
        pbw_msg(&entry, 2, &av);
        pbw_msg(&n, 5, &entry);
    }
    pbw_msg(g, 1, &n);
}

static void versions(pbw *g)
{
    pbw v = {0};
    pbw_int(&v, 1, 27);
    pbw_msg(g, 4, &v);
}

static void graph_body(pbw *g)
{
    static const int64_t d22[] = {2, 2}, d3[] = {3}, d2[] = {2};
    pbw t = {0};
    float c[4] = {1, 2, 3, 4};
    pbw_int(&t, 1, 1); /* DT_FLOAT */
    shape(&t, d22, 2);
    pbw_len(&t, 4, c, sizeof(c));
    node(g, "content", "Const", &t);
    pbw_int(&t, 1, 1);
    shape(&t, d3, 1);
    pbw_float(&t, 5, 7.5f); /* one value fills three */
    node(g, "fill", "Const", &t);
    pbw_int(&t, 1, 3); /* DT_INT32, no values: zeros */
    shape(&t, d2, 1);
    node(g, "zeros", "Const", &t);
    pbw_int(&t, 1, 7); /* DT_STRING */
    shape(&t, d2, 1);
    pbw_str(&t, 8, "ab");
    pbw_str(&t, 8, "c");
    node(g, "strings", "Const", &t);
    pbw_int(&t, 1, 19); /* DT_HALF, scalar */
    pbw_int(&t, 13, 0x3c00);
    node(g, "half", "Const", &t);
    pbw_int(&t, 1, 10); /* DT_BOOL, packed */
    shape(&t, d3, 1);
    int64_t bv[3] = {1, 0, 5}; /* any non-zero varint is true */
    pbw_packed(&t, 11, bv, 3);
    node(g, "bools", "Const", &t);
    node(g, "x", "Placeholder", NULL);
    node(g, "py", "PyFunc", NULL);
    node(g, "save", "SaveV2", NULL);
    /* a function holding ReadFile */
    pbw lib = {0}, fn = {0}, sig = {0}, nd = {0};
    pbw_str(&sig, 1, "reader_fn");
    pbw_msg(&fn, 1, &sig);
    pbw_str(&nd, 1, "rf");
    pbw_str(&nd, 2, "ReadFile");
    pbw_msg(&fn, 3, &nd);
    pbw_msg(&lib, 1, &fn);
    pbw_msg(g, 2, &lib);
    versions(g);
}

static void test_graphdef(void)
{
    pbw g = {0};
    graph_body(&g);
    CHECK(pbw_save(&g, path_of("frozen.pb")) == 0);
    pbw_free(&g);
    mf_detection d;
    mf_status st;
    mf_status_init(&st);
    CHECK(mf_detect(path_of("frozen.pb"), &d, &st) == 0 && d.format == MF_FMT_TF_GRAPHDEF);
    mf_model *m = open_path(path_of("frozen.pb"), &st);
    CHECKF(m != NULL, "open: %s", st.msg);
    mf_status_clear(&st);
    if (!m)
        return;
    CHECKF(m->n_tensors == 6, "%zu tensors", m->n_tensors);
    float c[4] = {1, 2, 3, 4}, fill[3] = {7.5f, 7.5f, 7.5f};
    expect(m, "content", MF_F32, c, 16);
    CHECK(mf_tensor_find(m, "content") && mf_tensor_find(m, "content")->data); /* mapped */
    expect(m, "fill", MF_F32, fill, 12);
    int32_t z[2] = {0, 0};
    expect(m, "zeros", MF_I32, z, 8);
    uint8_t s[8 + 2 + 8 + 1] = {2, 0, 0, 0, 0, 0, 0, 0, 'a', 'b', 1, 0, 0, 0, 0, 0, 0, 0, 'c'};
    expect(m, "strings", MF_STRING, s, sizeof(s));
    uint8_t h[2] = {0x00, 0x3c};
    expect(m, "half", MF_F16, h, 2);
    uint8_t b[3] = {1, 0, 1};
    expect(m, "bools", MF_BOOL, b, 3);
    const mf_value *v = mf_meta_get(m, "dangerous_ops");
    CHECK(v && v->as.i == 2);
    v = mf_meta_get(m, "graph_producer_version");
    CHECK(v && v->as.i == 27);
    mf_tf_finding *fs;
    size_t n;
    CHECK(mf_tf_find_dangerous_ops(m, &fs, &n, &st) == 0 && n == 3);
    int py = 0, rf = 0, sv = 0;
    for (size_t i = 0; i < n; i++) {
        py += strcmp(fs[i].op, "PyFunc") == 0 && fs[i].level == MF_TF_DANGER && !fs[i].function &&
              strcmp(fs[i].node, "py") == 0;
        rf += strcmp(fs[i].op, "ReadFile") == 0 && fs[i].level == MF_TF_DANGER &&
              fs[i].function && strcmp(fs[i].function, "reader_fn") == 0;
        sv += strcmp(fs[i].op, "SaveV2") == 0 && fs[i].level == MF_TF_CAUTION;
    }
    CHECK(py == 1 && rf == 1 && sv == 1);
    free(fs);
    mf_close(m);

    /* the fill rule never lets more values than elements through */
    static const int64_t d1[] = {1};
    pbw t = {0};
    pbw_int(&t, 1, 1);
    shape(&t, d1, 1);
    pbw_float(&t, 5, 1.0f);
    pbw_float(&t, 5, 2.0f);
    node(&g, "toomany", "Const", &t);
    pbw_int(&t, 1, 1);
    shape(&t, d1, 1);
    node(&g, "toomany", "Const", &t);
    versions(&g);
    CHECK(pbw_save(&g, path_of("bad.pb")) == 0);
    pbw_free(&g);
    m = open_path(path_of("bad.pb"), &st);
    CHECKF(!m && strstr(st.msg, "2 values stored"), "%s", st.msg);
    mf_close(m);
    mf_status_clear(&st);
    /* duplicate Const names */
    pbw_int(&t, 1, 1);
    shape(&t, d1, 1);
    node(&g, "same", "Const", &t);
    pbw_int(&t, 1, 1);
    shape(&t, d1, 1);
    node(&g, "same", "Const", &t);
    versions(&g);
    CHECK(pbw_save(&g, path_of("dup.pb")) == 0);
    pbw_free(&g);
    m = open_path(path_of("dup.pb"), &st);
    CHECKF(!m && strstr(st.msg, "appears twice"), "%s", st.msg);
    mf_close(m);
    mf_status_clear(&st);
}

/* ------------------------------------------------- TensorBundle table */

static uint32_t masked_crc(const uint8_t *p, size_t n)
{
    uint32_t c = mf_crc32c(p, n);
    return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

/* A LevelDB block of sorted (key, value) pairs, prefix-compressed, one
 * restart point, with its trailer; appended to `file`. */
typedef struct kv {
    const char *key;
    size_t klen;
    const uint8_t *val;
    size_t vlen;
} kv;

static void block(pbw *file, const kv *e, size_t n, uint64_t *off, uint64_t *size)
{
    pbw b = {0};
    const char *prev = "";
    size_t plen = 0;
    for (size_t i = 0; i < n; i++) {
        size_t shared = 0;
        while (shared < plen && shared < e[i].klen && prev[shared] == e[i].key[shared])
            shared++;
        pbw_varint(&b, shared);
        pbw_varint(&b, e[i].klen - shared);
        pbw_varint(&b, e[i].vlen);
        pbw_bytes(&b, e[i].key + shared, e[i].klen - shared);
        pbw_bytes(&b, e[i].val, e[i].vlen);
        prev = e[i].key;
        plen = e[i].klen;
    }
    uint8_t r[8] = {0, 0, 0, 0, 1, 0, 0, 0}; /* restart at 0; one restart */
    pbw_bytes(&b, r, 8);
    *off = file->n;
    *size = b.n;
    uint8_t type = 0;
    pbw_bytes(&b, &type, 1);
    uint8_t crc[4];
    mf_wr32le(crc, masked_crc(b.b, b.n));
    pbw_bytes(&b, crc, 4);
    pbw_bytes(file, b.b, b.n);
    pbw_free(&b);
}

static void handle(pbw *w, uint64_t off, uint64_t size)
{
    pbw_varint(w, off);
    pbw_varint(w, size);
}

/* index file from sorted entries (the first must be the header ""). */
static void table_file(const char *path, const kv *e, size_t n)
{
    pbw f = {0}, h = {0};
    uint64_t doff, dsize, moff, msize, ioff, isize;
    block(&f, e, n, &doff, &dsize);
    block(&f, NULL, 0, &moff, &msize);
    handle(&h, doff, dsize);
    kv idx = {e[n - 1].key, e[n - 1].klen, h.b, h.n};
    block(&f, &idx, 1, &ioff, &isize);
    pbw_free(&h);
    pbw foot = {0};
    handle(&foot, moff, msize);
    handle(&foot, ioff, isize);
    uint8_t z[40] = {0};
    pbw_bytes(&foot, z, 40 - foot.n);
    uint8_t magic[8];
    mf_wr64le(magic, 0xdb4775248b80fb57ull);
    pbw_bytes(&foot, magic, 8);
    pbw_bytes(&f, foot.b, foot.n);
    pbw_free(&foot);
    CHECK(pbw_save(&f, path) == 0);
    pbw_free(&f);
}

/* BundleEntryProto for `dtype`/dims at shard 0, offset/size, crc of bytes. */
static void entry(pbw *e, int dtype, const int64_t *dims, int nd, uint64_t off, uint64_t size,
                  uint32_t crc)
{
    pbw_int(e, 1, (uint64_t)dtype);
    shape(e, dims, nd);
    if (off)
        pbw_int(e, 4, off);
    pbw_int(e, 5, size);
    pbw_fixed32(e, 6, crc);
}

typedef struct bundle_spec {
    bool big_endian, bad_crc, short_shard, slices, bad_block_crc;
} bundle_spec;

/* saved_model.pb and variables/ in `name`; returns the directory. */
static const char *saved_model(const char *name, bundle_spec sp)
{
    char d[512], vars[600];
    snprintf(d, sizeof(d), "%s", path_of(name));
    mkdir(d, 0755);
    snprintf(vars, sizeof(vars), "%s/variables", d);
    mkdir(vars, 0755);
    /* saved_model.pb: one meta graph with a PyFunc node */
    pbw sm = {0}, mg = {0}, info = {0}, g = {0}, sig = {0};
    pbw_str(&info, 4, "serve");
    pbw_str(&info, 5, "2.99.0");
    pbw_msg(&mg, 1, &info);
    node(&g, "py", "EagerPyFunc", NULL);
    node(&g, "restore", "RestoreV2", NULL);
    pbw_msg(&mg, 2, &g);
    pbw_str(&sig, 1, "serving_default");
    pbw_msg(&mg, 5, &sig);
    pbw_int(&sm, 1, 1);
    pbw_msg(&sm, 2, &mg);
    char p[700];
    snprintf(p, sizeof(p), "%s/saved_model.pb", d);
    CHECK(pbw_save(&sm, p) == 0);
    pbw_free(&sm);
    /* data: a float pair, an int16 pair (byte order per header), strings */
    pbw data = {0};
    float fv[2] = {1.5f, -2.0f};
    uint8_t f32[8];
    for (int i = 0; i < 2; i++) {
        uint32_t u;
        memcpy(&u, &fv[i], 4);
        if (sp.big_endian)
            u = __builtin_bswap32(u);
        memcpy(f32 + 4 * i, &u, 4);
    }
    pbw_bytes(&data, f32, 8);
    uint8_t i16[4] = {0x01, 0x02, 0x03, 0x04};
    pbw_bytes(&data, i16, 4);
    /* strings "xy", "" : lengths 2, 0; checksum of lengths; bytes */
    uint8_t lens[2] = {2, 0}, l32[8] = {2, 0, 0, 0, 0, 0, 0, 0};
    uint32_t lc = mf_crc32c(l32, 8);
    uint8_t ck[4];
    mf_wr32le(ck, ((lc >> 15) | (lc << 17)) + 0xa282ead8u);
    size_t soff = data.n;
    pbw_bytes(&data, lens, 2);
    pbw_bytes(&data, ck, 4);
    pbw_bytes(&data, "xy", 2);
    uint32_t scrc = mf_crc32c_extend(mf_crc32c_extend(lc, ck, 4), (const uint8_t *)"xy", 2);
    snprintf(p, sizeof(p), "%s/variables.data-00000-of-00001", vars);
    pbw written = data;
    if (sp.short_shard)
        written.n -= 3;
    CHECK(pbw_save(&written, p) == 0);
    /* the index */
    pbw hdr = {0}, e1 = {0}, e2 = {0}, e3 = {0}, e4 = {0};
    pbw_int(&hdr, 1, 1);
    if (sp.big_endian)
        pbw_int(&hdr, 2, 1);
    static const int64_t d2[] = {2};
    uint32_t c1 = masked_crc(data.b, 8) ^ (sp.bad_crc ? 1 : 0);
    entry(&e1, 1, d2, 1, 0, 8, c1);
    entry(&e2, 5, d2, 1, 8, 4, masked_crc(data.b + 8, 4));
    entry(&e3, 7, d2, 1, soff, data.n - soff, ((scrc >> 15) | (scrc << 17)) + 0xa282ead8u);
    entry(&e4, 1, d2, 1, 0, 8, c1);
    if (sp.slices) {
        pbw sl = {0};
        pbw_msg(&e4, 7, &sl);
        pbw_len(&e4, 7, "", 0);
    }
    kv es[5] = {
        {"", 0, hdr.b, hdr.n},
        {"layer/kernel", 12, e1.b, e1.n},
        {"layer/kernel16", 14, e2.b, e2.n},
        {"layer/names", 11, e3.b, e3.n},
        {"sliced", 6, e4.b, e4.n},
    };
    snprintf(p, sizeof(p), "%s/variables.index", vars);
    table_file(p, es, sp.slices ? 5 : 4);
    if (sp.bad_block_crc) {
        FILE *f = fopen(p, "r+b");
        CHECK(f && fseek(f, 3, SEEK_SET) == 0 && fputc('Z', f) != EOF);
        if (f)
            fclose(f);
    }
    pbw_free(&hdr);
    pbw_free(&e1);
    pbw_free(&e2);
    pbw_free(&e3);
    pbw_free(&e4);
    pbw_free(&data);
    return path_of(name);
}

static void test_savedmodel(void)
{
    mf_status st;
    for (int be = 0; be < 2; be++) {
        const char *d = saved_model(be ? "sm_be" : "sm", (bundle_spec){.big_endian = be});
        mf_detection det;
        mf_status_init(&st);
        CHECK(mf_detect(d, &det, &st) == 0 && det.format == MF_FMT_TF_SAVEDMODEL);
        mf_model *m = open_path(d, &st);
        CHECKF(m != NULL, "open %s: %s", d, st.msg);
        mf_status_clear(&st);
        if (!m)
            continue;
        CHECKF(m->n_tensors == 3, "%zu tensors", m->n_tensors);
        float fv[2] = {1.5f, -2.0f};
        expect(m, "layer/kernel", MF_F32, fv, 8);
        uint8_t i16le[4] = {0x01, 0x02, 0x03, 0x04}, i16be[4] = {0x02, 0x01, 0x04, 0x03};
        expect(m, "layer/kernel16", MF_I16, be ? i16be : i16le, 4);
        uint8_t s[8 + 2 + 8] = {2, 0, 0, 0, 0, 0, 0, 0, 'x', 'y'};
        expect(m, "layer/names", MF_STRING, s, sizeof(s));
        const mf_value *v = mf_meta_get(m, "bundle_endianness");
        CHECK(v && strcmp(v->as.s.ptr, be ? "big" : "little") == 0);
        v = mf_meta_get(m, "signatures");
        CHECK(v && v->as.arr.n == 1 && strcmp(v->as.arr.items[0].as.s.ptr, "serving_default") == 0);
        v = mf_meta_get(m, "dangerous_ops");
        CHECK(v && v->as.i == 1);
        mf_tf_finding *fs;
        size_t n;
        CHECK(mf_tf_find_dangerous_ops(m, &fs, &n, &st) == 0 && n == 2);
        free(fs);
        mf_close(m);
    }
    /* partitioned variables are noted, not listed */
    mf_model *m = open_path(saved_model("sm_sliced", (bundle_spec){.slices = true}), &st);
    CHECKF(m && m->n_tensors == 3 && !mf_tensor_find(m, "sliced"), "sliced: %s", st.msg);
    mf_close(m);
    mf_status_clear(&st);
    /* a meta graph without nodes or variables (regression: the empty op
     * list reached qsort with NULL) */
    char d[512], pbp[600];
    snprintf(d, sizeof(d), "%s", path_of("sm_empty"));
    mkdir(d, 0755);
    snprintf(pbp, sizeof(pbp), "%s/saved_model.pb", d);
    pbw sm = {0}, mg = {0}, info = {0};
    pbw_str(&info, 4, "serve");
    pbw_msg(&mg, 1, &info);
    pbw_int(&sm, 1, 1);
    pbw_msg(&sm, 2, &mg);
    CHECK(pbw_save(&sm, pbp) == 0);
    pbw_free(&sm);
    m = open_path(d, &st);
    CHECKF(m && m->n_tensors == 0 && m->n_notes == 1, "empty: %s", st.msg);
    mf_close(m);
    mf_status_clear(&st);
    static const struct {
        const char *name;
        bundle_spec sp;
        const char *msg;
    } bad[] = {
        {"sm_crc", {.bad_crc = true}, "CRC32C mismatch"},
        {"sm_short", {.short_shard = true}, "past the end"},
        {"sm_block", {.bad_block_crc = true}, "checksum mismatch"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        m = open_path(saved_model(bad[i].name, bad[i].sp), &st);
        CHECKF(!m && strstr(st.msg, bad[i].msg), "%s: %s", bad[i].name, st.msg);
        mf_close(m);
        mf_status_clear(&st);
    }
}

/* A SentencePiece model (pieces = 1 {piece = 1, score = 2 float}, trainer
 * spec = 2, ...) has GraphDef's field numbers; it must not be taken for one. */
static void test_not_a_graphdef(void)
{
    pbw sp = {0}, piece = {0}, spec = {0};
    for (int i = 0; i < 3; i++) {
        pbw_str(&piece, 1, "<unk>");
        pbw_float(&piece, 2, 0.0f);
        pbw_int(&piece, 3, 2);
        pbw_msg(&sp, 1, &piece);
    }
    pbw_str(&spec, 1, "input.txt");
    pbw_msg(&sp, 2, &spec);
    CHECK(pbw_save(&sp, path_of("tokenizer.model")) == 0);
    pbw_free(&sp);
    mf_detection d;
    mf_status st;
    mf_status_init(&st);
    CHECKF(mf_detect(path_of("tokenizer.model"), &d, &st) == 0 && d.format != MF_FMT_TF_GRAPHDEF,
           "detected as %s", mf_format_name(d.format));
    mf_status_clear(&st);
}

int main(void)
{
    if (!tl_make_tmpdir(dir, sizeof(dir), "tf")) {
        return 1;
    }
    test_graphdef();
    test_savedmodel();
    test_not_a_graphdef();
    tl_remove_tmpdir(dir);
    return tl_report("tf");
}
