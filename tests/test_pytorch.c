/* test_pytorch.c - the PyTorch zip, legacy and plain pickle readers on
 * files built here: views, shared storages, deflated and big-endian
 * records, broken archives, legacy streams with a computed magic number,
 * numpy arrays inside pickles, nested names, sharded indexes. */
#include "testlib.h"

#include "core/core.h"
#include "formats/pickle/pytorch.h"
#include "pickle_build.h"

static const float six[6] = {0, 1, 2, 3, 4, 5};

static void sha_of(const void *b, size_t n, char hex[129])
{
    mf_hasher *h = mf_hasher_new(MF_SHA256);
    mf_hasher_update(h, b, n);
    mf_hasher_final_hex(h, hex);
    mf_hasher_free(h);
}

/* The tensor's canonical bytes hash to those of `want`. */
static bool tensor_is(const mf_model *m, const char *name, const void *want, size_t n)
{
    const mf_tensor *t = mf_tensor_find(m, name);
    if (!t)
        return false;
    char a[129], b[129];
    mf_status st;
    mf_status_init(&st);
    int rc = mf_hash_tensor(m, t, MF_SHA256, a, &st);
    mf_status_clear(&st);
    sha_of(want, n, b);
    return rc == 0 && strcmp(a, b) == 0;
}

static mf_model *open_path(const char *path, mf_status *st)
{
    mf_status_init(st);
    mf_model *m = NULL;
    mf_open_opts o = {.struct_size = sizeof(mf_open_opts), .flags = MF_OPEN_STRICT};
    if (mf_open(path, &o, &m, st))
        return NULL;
    return m;
}

/* {'w': 2x3 view, 't': its transpose, 'o': every other element from 2} */
static void views_pickle(pb *p, const char *key, uint32_t numel)
{
    uint32_t s23[2] = {2, 3}, st31[2] = {3, 1}, s32[2] = {3, 2}, st13[2] = {1, 3}, s2[1] = {2},
             st2[1] = {2};
    pb_proto(p, 2);
    pb_global(p, "collections", "OrderedDict");
    pb_op(p, ')');
    pb_op(p, 'R');
    pb_op(p, '(');
    pb_str(p, "w");
    pb_tensor_v2(p, key, numel, 0, s23, st31, 2);
    pb_str(p, "t");
    pb_tensor_v2(p, key, numel, 0, s32, st13, 2);
    pb_str(p, "o");
    pb_tensor_v2(p, key, numel, 2, s2, st2, 1);
    pb_op(p, 'u');
    pb_stop(p);
}

static const char *write_zip(const char *name, const zip_member *m, size_t n)
{
    pb z = {0};
    zip_build(&z, m, n);
    const char *path = pb_tmp(name);
    pb_write(path, z.b, z.n);
    pb_free(&z);
    return path;
}

static void check_views(const mf_model *m)
{
    static const float t[6] = {0, 3, 1, 4, 2, 5}, o[2] = {2, 4};
    CHECK(m->n_tensors == 3);
    CHECK(tensor_is(m, "w", six, sizeof(six)));
    CHECK(tensor_is(m, "t", t, sizeof(t)));
    CHECK(tensor_is(m, "o", o, sizeof(o)));
    const mf_tensor *tt = mf_tensor_find(m, "t");
    CHECK(tt && tt->strides && tt->strides[0] == 1 && tt->strides[1] == 3);
}

static void test_zip(void)
{
    pb p = {0};
    views_pickle(&p, "0", 6);
    zip_member mem[] = {
        {.name = "archive/data.pkl", .data = p.b, .n = p.n},
        {.name = "archive/data/0", .data = six, .n = sizeof(six)},
        {.name = "archive/version", .data = "3\n", .n = 2},
    };
    mf_status st;
    mf_model *m = open_path(write_zip("views.pt", mem, 3), &st);
    CHECKF(m != NULL, "%s", st.msg);
    if (m) {
        CHECK(m->format == MF_FMT_PYTORCH_ZIP && strcmp(m->version, "torch zip v3") == 0);
        check_views(m);
        const mf_tensor *w = mf_tensor_find(m, "w");
        CHECK(w && w->data && w->data == m->files[0].base + w->offset); /* mapped, not copied */
        mf_close(m);
    }
    mf_status_clear(&st);
    /* deflated storage: streamed, contiguous and strided */
    mem[1].deflate = 1;
    mem[0].deflate = 1;
    m = open_path(write_zip("deflated.pt", mem, 3), &st);
    CHECKF(m != NULL, "%s", st.msg);
    if (m) {
        check_views(m);
        CHECK(!mf_tensor_find(m, "w")->data);
        mf_close(m);
    }
    mf_status_clear(&st);
    mem[0].deflate = mem[1].deflate = 0;
    /* big-endian storage records */
    uint8_t be[sizeof(six)];
    for (size_t i = 0; i < 6; i++)
        for (int k = 0; k < 4; k++)
            be[4 * i + (size_t)k] = ((const uint8_t *)&six[i])[3 - k];
    zip_member bem[] = {mem[0], {.name = "archive/data/0", .data = be, .n = sizeof(be)},
                        {.name = "archive/byteorder", .data = "big", .n = 3}};
    m = open_path(write_zip("big.pt", bem, 3), &st);
    CHECKF(m != NULL, "%s", st.msg);
    if (m) {
        check_views(m);
        CHECK(strstr(m->version, "big-endian") != NULL);
        mf_close(m);
    }
    mf_status_clear(&st);
    /* record names as miniz finds them: case-insensitively */
    zip_member ci[] = {{.name = "Archive/DATA.PKL", .data = p.b, .n = p.n},
                       {.name = "Archive/Data/0", .data = six, .n = sizeof(six)}};
    m = open_path(write_zip("case.pt", ci, 2), &st);
    CHECKF(m != NULL, "%s", st.msg);
    mf_close(m);
    mf_status_clear(&st);
    pb_free(&p);
}

static void expect_error(const char *path, const char *needle)
{
    mf_status st;
    mf_model *m = open_path(path, &st);
    CHECKF(!m && strstr(st.msg, needle) && strstr(st.msg, path), "%s: want \"%s\", got: %s", path,
           needle, st.msg);
    mf_close(m);
    mf_status_clear(&st);
}

static void test_zip_errors(void)
{
    pb p = {0};
    views_pickle(&p, "0", 8); /* declares 8 floats: the record holds 6 */
    zip_member small[] = {{.name = "a/data.pkl", .data = p.b, .n = p.n},
                          {.name = "a/data/0", .data = six, .n = sizeof(six)}};
    expect_error(write_zip("small.pt", small, 2), "holds 24 bytes");
    pb_free(&p);
    views_pickle(&p, "1", 6);
    small[0].data = p.b;
    small[0].n = p.n;
    expect_error(write_zip("missing.pt", small, 2), "no record \"a/data/1\"");
    pb_free(&p);
    /* a view that reaches past its storage */
    uint32_t s[1] = {3}, str[1] = {2};
    pb_proto(&p, 2);
    pb_tensor_v2(&p, "0", 6, 2, s, str, 1); /* elements 2, 4, 6: 6 is outside */
    pb_stop(&p);
    small[0].data = p.b;
    small[0].n = p.n;
    expect_error(write_zip("reach.pt", small, 2), "reaches byte 28");
    pb_free(&p);
    /* an empty view may start anywhere: no element is read (torch agrees) */
    uint32_t s0[1] = {0};
    pb_proto(&p, 2);
    pb_tensor_v2(&p, "0", 6, 100, s0, str, 1);
    pb_stop(&p);
    small[0].data = p.b;
    small[0].n = p.n;
    mf_status st;
    mf_model *m = open_path(write_zip("empty.pt", small, 2), &st);
    CHECKF(m && m->n_tensors == 1 && m->tensors[0].nbytes == 0, "%s", st.msg);
    mf_close(m);
    mf_status_clear(&st);
    pb_free(&p);
    zip_member flat[] = {{.name = "data.pkl", .data = "N.", .n = 2}};
    expect_error(write_zip("flat.pt", flat, 1), "not in a folder");
    /* a pickle broken half way */
    zip_member broken[] = {{.name = "a/data.pkl", .data = "\x80\x02]q\x00(", .n = 6}};
    expect_error(write_zip("broken.pt", broken, 1), "a/data.pkl: pickle: ");
}

/* ------------------------------------------------------------- legacy */

/* A legacy stream with the magic number written as protocol 0 text. */
static size_t legacy_stream(pb *p, uint64_t count, size_t data_bytes)
{
    pb_text(p, "L119547037146038801333356L\n.");
    pb_text(p, "I1001\n.");
    pb_text(p, "(dS'little_endian'\nI01\ns.");
    views_pickle(p, "k", 6);
    pb_text(p, "(lS'k'\na.");
    uint8_t n8[8];
    for (int i = 0; i < 8; i++)
        n8[i] = (uint8_t)(count >> (8 * i));
    pb_raw(p, n8, 8);
    pb_raw(p, six, data_bytes);
    return p->n;
}

static void test_legacy(void)
{
    pb p = {0};
    legacy_stream(&p, 6, sizeof(six));
    const char *path = pb_tmp("legacy.pt");
    pb_write(path, p.b, p.n);
    mf_status st;
    mf_model *m = open_path(path, &st);
    CHECKF(m != NULL, "%s", st.msg);
    if (m) {
        CHECK(m->format == MF_FMT_PYTORCH_PICKLE);
        check_views(m);
        mf_close(m);
    }
    mf_status_clear(&st);
    pb_free(&p);
    legacy_stream(&p, 5, sizeof(six));
    path = pb_tmp("count.pt");
    pb_write(path, p.b, p.n);
    expect_error(path, "holds 5 elements but the pickle declares 6");
    pb_free(&p);
    legacy_stream(&p, 6, 10);
    path = pb_tmp("cut.pt");
    pb_write(path, p.b, p.n);
    expect_error(path, "run past the end");
    pb_free(&p);
}

/* ------------------------------------------------------ numpy arrays */

/* numpy.core.multiarray._reconstruct(ndarray, (0,), b'b') + BUILD */
static void np_array(pb *p, const char *descr, char order, bool fortran, const uint32_t *shape,
                     int nd, const void *data, size_t n, bool latin1)
{
    pb_global(p, "numpy.core.multiarray", "_reconstruct");
    pb_op(p, '(');
    pb_global(p, "numpy", "ndarray");
    pb_int(p, 0);
    pb_op(p, 0x85);
    pb_op(p, 'C');
    pb_op(p, 1);
    pb_op(p, 'b');
    pb_op(p, 't');
    pb_op(p, 'R');
    pb_op(p, '(');
    pb_int(p, 1);
    pb_op(p, '(');
    for (int i = 0; i < nd; i++)
        pb_int(p, (int32_t)shape[i]);
    pb_op(p, 't');
    pb_global(p, "numpy", "dtype");
    pb_op(p, '(');
    pb_str(p, descr);
    pb_op(p, 0x89);
    pb_op(p, 0x88);
    pb_op(p, 't');
    pb_op(p, 'R');
    pb_op(p, '(');
    pb_int(p, 3);
    char o[2] = {order, 0};
    pb_str(p, o);
    pb_op(p, 'N');
    pb_op(p, 'N');
    pb_op(p, 'N');
    pb_int(p, -1);
    pb_int(p, -1);
    pb_int(p, 0);
    pb_op(p, 't');
    pb_op(p, 'b');
    pb_op(p, fortran ? 0x88 : 0x89);
    if (latin1) { /* protocol 2: _codecs.encode(text, 'latin1') */
        pb_global(p, "_codecs", "encode");
        pb str = {0};
        for (size_t i = 0; i < n; i++) {
            uint8_t c = ((const uint8_t *)data)[i];
            if (c < 0x80) {
                pb_op(&str, c);
            } else {
                pb_op(&str, (uint8_t)(0xc0 | c >> 6));
                pb_op(&str, (uint8_t)(0x80 | (c & 63)));
            }
        }
        pb_op(p, 'X');
        pb_u32(p, (uint32_t)str.n);
        pb_raw(p, str.b, str.n);
        pb_free(&str);
        pb_str(p, "latin1");
        pb_op(p, 0x86);
        pb_op(p, 'R');
    } else {
        pb_bytes(p, data, n);
    }
    pb_op(p, 't');
    pb_op(p, 'b');
}

static void test_numpy_in_pickle(void)
{
    static const float fort[6] = {0, 3, 1, 4, 2, 5}; /* 2x3 in column-major order */
    uint8_t be[sizeof(six)];
    for (size_t i = 0; i < 6; i++)
        for (int k = 0; k < 4; k++)
            be[4 * i + (size_t)k] = ((const uint8_t *)&six[i])[3 - k];
    uint32_t shape[2] = {2, 3};
    pb p = {0};
    pb_proto(&p, 2);
    pb_op(&p, '}');
    pb_op(&p, '(');
    pb_str(&p, "c");
    np_array(&p, "f4", '<', false, shape, 2, six, sizeof(six), false);
    pb_str(&p, "f");
    np_array(&p, "f4", '<', true, shape, 2, fort, sizeof(fort), false);
    pb_str(&p, "b");
    np_array(&p, "f4", '>', false, shape, 2, be, sizeof(be), false);
    pb_str(&p, "l");
    np_array(&p, "f4", '<', false, shape, 2, six, sizeof(six), true);
    pb_str(&p, "epoch");
    pb_int(&p, 7);
    pb_op(&p, 'u');
    pb_stop(&p);
    const char *path = pb_tmp("arrays.pkl");
    pb_write(path, p.b, p.n);
    mf_status st;
    mf_model *m = open_path(path, &st);
    CHECKF(m != NULL, "%s", st.msg);
    if (m) {
        CHECK(m->format == MF_FMT_PICKLE && m->n_tensors == 4);
        CHECK(tensor_is(m, "c", six, sizeof(six)));
        CHECK(tensor_is(m, "f", six, sizeof(six)));
        CHECK(tensor_is(m, "b", six, sizeof(six)));
        CHECK(tensor_is(m, "l", six, sizeof(six)));
        const mf_tensor *c = mf_tensor_find(m, "c");
        CHECK(c && c->data == m->files[0].base + c->offset);
        const mf_value *e = mf_meta_get(m, "epoch");
        CHECK(e && e->type == MF_V_I64 && e->as.i == 7);
        mf_close(m);
    }
    mf_status_clear(&st);
    pb_free(&p);
}

/* ----------------------------------------------- nested names, shards */

static void test_nested(void)
{
    uint32_t s[1] = {2}, str[1] = {1};
    pb p = {0};
    pb_proto(&p, 2);
    pb_op(&p, '}');
    pb_op(&p, '(');
    pb_str(&p, "state_dict");
    pb_op(&p, '}');
    pb_op(&p, '(');
    pb_str(&p, "fc.weight");
    pb_tensor_v2(&p, "0", 6, 0, s, str, 1);
    pb_op(&p, 'u');
    pb_str(&p, "optimizer_states");
    pb_op(&p, ']');
    pb_op(&p, '}');
    pb_op(&p, '(');
    pb_int(&p, 0);
    pb_tensor_v2(&p, "0", 6, 4, s, str, 1);
    pb_op(&p, 'u');
    pb_op(&p, 'a');
    pb_str(&p, "hyper_parameters");
    pb_op(&p, '}');
    pb_op(&p, '(');
    pb_str(&p, "lr");
    pb_text(&p, "F0.5\n");
    pb_str(&p, "layers");
    pb_op(&p, '(');
    pb_int(&p, 64);
    pb_int(&p, 32);
    pb_op(&p, 't');
    pb_op(&p, 'u');
    pb_op(&p, 'u');
    pb_stop(&p);
    zip_member mem[] = {{.name = "ck/data.pkl", .data = p.b, .n = p.n},
                        {.name = "ck/data/0", .data = six, .n = sizeof(six)}};
    mf_status st;
    mf_model *m = open_path(write_zip("nested.ckpt", mem, 2), &st);
    CHECKF(m != NULL, "%s", st.msg);
    if (m) {
        static const float a[2] = {0, 1}, b[2] = {4, 5};
        CHECK(tensor_is(m, "state_dict.fc.weight", a, sizeof(a)));
        CHECK(tensor_is(m, "optimizer_states.0.0", b, sizeof(b)));
        const mf_value *lr = mf_meta_get(m, "hyper_parameters.lr"),
                       *ly = mf_meta_get(m, "hyper_parameters.layers");
        CHECK(lr && lr->type == MF_V_F64 && lr->as.f == 0.5);
        CHECK(ly && ly->type == MF_V_ARR && ly->as.arr.n == 2 && ly->as.arr.items[1].as.i == 32);
        CHECK(mf_model_is_mapping(m, "state_dict") && !mf_model_is_mapping(m, "fc"));
        mf_close(m);
    }
    mf_status_clear(&st);
    pb_free(&p);
}

static void test_index(void)
{
    uint32_t s[1] = {2}, str[1] = {1};
    const char *names[2] = {"a.weight", "b.weight"};
    for (int k = 0; k < 2; k++) {
        pb p = {0};
        pb_proto(&p, 2);
        pb_op(&p, '}');
        pb_str(&p, names[k]);
        pb_tensor_v2(&p, "0", 6, (uint32_t)(2 * k), s, str, 1);
        pb_op(&p, 's');
        pb_stop(&p);
        zip_member mem[] = {{.name = "archive/data.pkl", .data = p.b, .n = p.n},
                            {.name = "archive/data/0", .data = six, .n = sizeof(six)}};
        write_zip(k ? "pytorch_model-00002-of-00002.bin" : "pytorch_model-00001-of-00002.bin",
                  mem, 2);
        pb_free(&p);
    }
    const char *good = "{\"metadata\": {\"total_size\": 16}, \"weight_map\": {"
                       "\"a.weight\": \"pytorch_model-00001-of-00002.bin\", "
                       "\"b.weight\": \"pytorch_model-00002-of-00002.bin\"}}";
    const char *path = pb_tmp("pytorch_model.bin.index.json");
    pb_write(path, good, strlen(good));
    mf_status st;
    mf_model *m = open_path(path, &st);
    CHECKF(m != NULL, "%s", st.msg);
    if (m) {
        static const float b[2] = {2, 3};
        CHECK(m->format == MF_FMT_PYTORCH_ZIP && m->n_tensors == 2);
        CHECK(tensor_is(m, "b.weight", b, sizeof(b)));
        mf_close(m);
    }
    mf_status_clear(&st);
    const char *bad = "{\"weight_map\": {"
                      "\"a.weight\": \"pytorch_model-00002-of-00002.bin\", "
                      "\"b.weight\": \"pytorch_model-00002-of-00002.bin\", "
                      "\"c.weight\": \"../escape.bin\"}}";
    pb_write(path, bad, strlen(bad));
    m = open_path(path, &st);
    CHECK(!m && st.n_all >= 2);
    bool named_c = false, named_a = false;
    for (size_t i = 0; i < st.n_all; i++) {
        named_c |= strstr(st.all[i], "leaves the directory") != NULL;
        named_a |= strstr(st.all[i], "\"a.weight\"") != NULL;
    }
    CHECK(named_c && named_a);
    mf_close(m);
    mf_status_clear(&st);
}

int main(void)
{
    test_zip();
    test_zip_errors();
    test_legacy();
    test_numpy_in_pickle();
    test_nested();
    test_index();
    pb_cleanup();
    return tl_report("pytorch");
}
