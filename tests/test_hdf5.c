/* test_hdf5.c - the HDF5 and Keras readers: the files of tests/data/hdf5
 * (written by h5py, expected values from h5py/numpy in manifest.json),
 * Keras Lambda finding, metadata, the memory-range entry point, checksum
 * helpers, and hostile input (every corpus HDF5 file truncated and with
 * bytes flipped must be read or refused cleanly, naming the file). */
#include "testlib.h"

#include "core/core.h"
#include "formats/hdf5/hdf5_int.h"
#include "formats/hdf5/keras.h"

#include <jansson.h>
#include <unistd.h>

#define DATA "tests/data/hdf5"

static bool shape_equal(const mf_tensor *t, json_t *shape)
{
    if (!json_is_array(shape) || (size_t)t->ndim != json_array_size(shape))
        return false;
    for (int i = 0; i < t->ndim; i++)
        if (json_integer_value(json_array_get(shape, (size_t)i)) != t->shape[i])
            return false;
    return true;
}

typedef struct lambdas {
    char names[8][64];
    char kinds[8][16];
    int n;
} lambdas;

static int record_lambda(void *ctx, const mf_keras_lambda *l)
{
    lambdas *ls = ctx;
    if (ls->n < 8) {
        snprintf(ls->names[ls->n], 64, "%s", l->layer);
        snprintf(ls->kinds[ls->n], 16, "%s", l->kind);
        ls->n++;
    }
    return 0;
}

static void check_lambdas(const char *rel, mf_model *m, json_t *want)
{
    lambdas ls = {0};
    mf_status st;
    mf_status_init(&st);
    int n = mf_keras_find_lambdas(m, record_lambda, &ls, &st);
    size_t expect = json_array_size(want);
    CHECKF(n == (int)expect, "%s: %d Lambda layers found, want %zu", rel, n, expect);
    for (size_t i = 0; i < expect && (int)i < ls.n; i++) {
        json_t *w = json_array_get(want, i);
        CHECKF(strcmp(ls.names[i], json_string_value(json_array_get(w, 0))) == 0 &&
                   strcmp(ls.kinds[i], json_string_value(json_array_get(w, 1))) == 0,
               "%s: Lambda %zu is %s/%s", rel, i, ls.names[i], ls.kinds[i]);
    }
    mf_status_clear(&st);
}

static void run_case(json_t *c)
{
    const char *rel = json_string_value(json_object_get(c, "path"));
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", DATA, rel);
    mf_status st;
    mf_status_init(&st);
    mf_model *m;
    mf_open_opts o = {.struct_size = sizeof(mf_open_opts), .flags = MF_OPEN_STRICT};
    if (mf_open(path, &o, &m, &st)) {
        CHECKF(0, "%s: %s", rel, st.msg);
        mf_status_clear(&st);
        return;
    }
    CHECKF(strcmp(mf_format_name(m->format), json_string_value(json_object_get(c, "format"))) == 0,
           "%s: format %s", rel, mf_format_name(m->format));
    json_t *ts = json_object_get(c, "tensors");
    CHECKF(m->n_tensors == json_array_size(ts), "%s: %zu tensors, want %zu", rel, m->n_tensors,
           json_array_size(ts));
    for (size_t i = 0; i < json_array_size(ts); i++) {
        json_t *w = json_array_get(ts, i);
        const char *name = json_string_value(json_object_get(w, "name"));
        const mf_tensor *t = mf_tensor_find(m, name);
        if (!t) {
            CHECKF(0, "%s: tensor %s missing", rel, name);
            continue;
        }
        CHECKF(strcmp(mf_dtype_name(t->dtype), json_string_value(json_object_get(w, "dtype"))) == 0,
               "%s: %s dtype %s", rel, name, mf_dtype_name(t->dtype));
        CHECKF(shape_equal(t, json_object_get(w, "shape")), "%s: %s shape", rel, name);
        char hex[129];
        mf_status hs;
        mf_status_init(&hs);
        int rc = mf_hash_tensor(m, t, MF_SHA256, hex, &hs);
        CHECKF(rc == 0 && strcmp(hex, json_string_value(json_object_get(w, "sha256"))) == 0,
               "%s: %s hash %s %s", rel, name, rc ? "error" : hex, hs.msg);
        mf_status_clear(&hs);
    }
    check_lambdas(rel, m, json_object_get(c, "lambdas"));
    mf_close(m);
    mf_status_clear(&st);
}

static void run_manifest(const char *path, size_t min_cases)
{
    json_error_t err;
    json_t *man = json_load_file(path, 0, &err);
    CHECKF(man != NULL, "%s: %s", path, err.text);
    for (size_t i = 0; i < json_array_size(man); i++)
        run_case(json_array_get(man, i));
    CHECKF(json_array_size(man) >= min_cases, "%s: %zu cases", path, json_array_size(man));
    json_decref(man);
}

static void test_manifest(void)
{
    run_manifest(DATA "/manifest.json", 8);
    /* szip (h5py/libaec), scale-offset (h5py), blosc (PyTables): hashes as
     * the real readers decoded them (make_hdf5_filters.py) */
    run_manifest(DATA "/manifest_filters.json", 3);
}

static const mf_value *meta(mf_model *m, const char *key)
{
    const mf_value *v = mf_meta_get(m, key);
    CHECKF(v != NULL, "metadata %s missing", key);
    return v;
}

static void test_metadata(void)
{
    mf_status st;
    mf_status_init(&st);
    mf_model *m;
    CHECK(mf_open(DATA "/dense_links.h5", NULL, &m, &st) == 0);
    const mf_value *v = meta(m, "big");
    CHECK(v && v->type == MF_V_ARR && v->as.arr.n == 3000 && v->as.arr.elem == MF_V_F64 &&
          v->as.arr.items[2999].as.f == 2999.0);
    v = meta(m, "attr29");
    CHECK(v && v->type == MF_V_STR && strcmp(v->as.s.ptr, "value 29") == 0);
    mf_close(m);

    CHECK(mf_open(DATA "/userblock_v2.h5", NULL, &m, &st) == 0);
    v = meta(m, "/x@unit");
    CHECK(v && v->type == MF_V_STR && strcmp(v->as.s.ptr, "m") == 0);
    CHECK(strcmp(m->version, "superblock v2") == 0);
    CHECK(m->n_tensors == 1 && m->tensors[0].data && m->tensors[0].offset >= 1024);
    mf_close(m);

    CHECK(mf_open(DATA "/keras3_deflated.keras", NULL, &m, &st) == 0);
    v = meta(m, "keras_version");
    CHECK(v && v->type == MF_V_STR && strcmp(v->as.s.ptr, "3.3.3") == 0);
    v = meta(m, "class_name");
    CHECK(v && v->type == MF_V_STR && strcmp(v->as.s.ptr, "Functional") == 0);
    CHECK(strcmp(m->version, "keras 3.3.3") == 0);
    mf_close(m);

    CHECK(mf_open(DATA "/cycle.h5", NULL, &m, &st) == 0);
    bool soft = false;
    for (size_t i = 0; i < m->n_notes; i++)
        soft |= strstr(m->notes[i], "soft link /b -> /a/w") != NULL;
    CHECK(soft);
    mf_close(m);
    mf_status_clear(&st);
}

/* The memory-range entry point: the same file at another origin reports
 * offsets shifted by it, data pointers stay inside the range. */
static void test_range(void)
{
    mf_file f;
    mf_status st;
    mf_status_init(&st);
    CHECK(mf_map_file(DATA "/userblock_v2.h5", &f, &st) == 0);
    mf_model *a = mf_model_new(MF_FMT_HDF5, "a"), *b = mf_model_new(MF_FMT_HDF5, "b");
    CHECK(mf_hdf5_parse_range(a, 0, f.base, f.size, 0, "a", 0, &st) == 0);
    CHECK(mf_hdf5_parse_range(b, 0, f.base, f.size, 5000, "b", 0, &st) == 0);
    CHECK(a->n_tensors == 1 && b->n_tensors == 1 &&
          b->tensors[0].offset == a->tensors[0].offset + 5000 &&
          b->tensors[0].data == f.base + a->tensors[0].offset);
    /* an error inside the range names the label and an outer offset */
    mf_model *c = mf_model_new(MF_FMT_HDF5, "c");
    mf_status es;
    mf_status_init(&es);
    CHECK(mf_hdf5_parse_range(c, 0, f.base, 1100, 7000, "outer.keras[w.h5]", 0, &es) != 0);
    CHECKF(strstr(es.msg, "outer.keras[w.h5]: byte ") != NULL, "%s", es.msg);
    mf_status_clear(&es);
    mf_close(a);
    mf_close(b);
    mf_close(c);
    mf_unmap_file(&f);
    mf_status_clear(&st);
}

static void test_checksums(void)
{
    /* lookup3.c's own self-test values */
    CHECK(h5_lookup3((const uint8_t *)"", 0, 0) == 0xdeadbeefu);
    CHECK(h5_lookup3((const uint8_t *)"Four score and seven years ago", 30, 0) == 0x17770551u);
    CHECK(h5_lookup3((const uint8_t *)"Four score and seven years ago", 30, 1) == 0xcd628161u);
    const uint8_t two[] = {1, 2}, three[] = {1, 2, 3};
    CHECK(h5_fletcher32(two, 2) == 0x01020102u);
    CHECK(h5_fletcher32(three, 3) == ((0x0102u + 0x0102u + 0x0300u) << 16 | (0x0102u + 0x0300u)));
    CHECK(h5_bytes_for(0) == 1 && h5_bytes_for(255) == 1 && h5_bytes_for(256) == 2 &&
          h5_bytes_for(65536) == 3 && h5_bytes_for(UINT64_MAX) == 8);
    h5_addrset s = {0};
    int fresh = 0;
    for (uint64_t i = 0; i < 1000; i++)
        fresh += h5_addrset_add(&s, i * 7919);
    CHECK(fresh == 1000 && h5_addrset_add(&s, 7919) == 0 && s.n == 1000);
    h5_addrset_free(&s);
}

static int drain(void *ctx, const void *buf, size_t n, mf_status *st)
{
    (void)buf;
    (void)st;
    *(uint64_t *)ctx += n;
    return 0;
}

/* Opens a damaged copy; every tensor that opens must stream exactly its
 * nbytes or fail with a message; a refusal names the file. */
static void try_damaged(const char *tmp, const uint8_t *b, size_t n, int *opened)
{
    FILE *fp = fopen(tmp, "wb");
    if (!fp)
        return;
    fwrite(b, 1, n, fp);
    fclose(fp);
    mf_status st;
    mf_status_init(&st);
    mf_model *m;
    mf_open_opts o = {.struct_size = sizeof(mf_open_opts), .flags = MF_OPEN_STRICT};
    if (mf_open(tmp, &o, &m, &st) == 0) {
        (*opened)++;
        for (size_t i = 0; i < m->n_tensors; i++) {
            uint64_t got = 0;
            mf_status ts;
            mf_status_init(&ts);
            int rc = mf_tensor_stream(m, &m->tensors[i], drain, &got, &ts);
            if (rc == 0 && got != m->tensors[i].nbytes) {
                CHECKF(0, "%s: tensor %s streamed %llu of %llu bytes", tmp, m->tensors[i].name,
                       (unsigned long long)got, (unsigned long long)m->tensors[i].nbytes);
            }
            if (rc)
                CHECKF(ts.msg[0] != '\0', "stream failed without a message");
            mf_status_clear(&ts);
        }
        mf_close(m);
    } else {
        CHECKF(strstr(st.msg, tmp) != NULL, "refusal does not name the file: %s", st.msg);
    }
    mf_status_clear(&st);
}

static void damage_file(const char *path, int flips)
{
    char *buf;
    size_t len;
    mf_status st;
    mf_status_init(&st);
    if (mf_read_small_file(path, 1u << 20, &buf, &len, &st)) {
        mf_status_clear(&st);
        return;
    }
    char tmp[] = "/tmp/mfmt_h5_damaged_XXXXXX";
    int fd = mkstemp(tmp);
    if (fd < 0) {
        free(buf);
        return;
    }
    close(fd);
    uint8_t *copy = malloc(len);
    int opened = 0;
    uint32_t rng = 12345;
    for (size_t cut = len / 8; cut < len; cut += len / 8 + 1)
        try_damaged(tmp, (const uint8_t *)buf, cut, &opened);
    for (int k = 0; k < flips && copy; k++) {
        memcpy(copy, buf, len);
        for (int j = 0; j < 3; j++) {
            rng = rng * 1103515245u + 12345u;
            size_t at = (rng >> 8) % len;
            rng = rng * 1103515245u + 12345u;
            copy[at] ^= (uint8_t)(1u << ((rng >> 16) % 8));
        }
        try_damaged(tmp, copy, len, &opened);
    }
    CHECK(opened >= 0);
    free(copy);
    free(buf);
    unlink(tmp);
}

static void test_hostile(void)
{
    static const char *const mine[] = {"chunk_indexes.h5", "chunked_old.h5", "dense_links.h5",
                                       "cycle.h5", "userblock_v2.h5", "keras2_lambda.h5",
                                       "keras3_deflated.keras"};
    char path[512];
    for (size_t i = 0; i < sizeof(mine) / sizeof(mine[0]); i++) {
        snprintf(path, sizeof(path), "%s/%s", DATA, mine[i]);
        damage_file(path, 120);
    }
    const char *shared = tl_shared_dir();
    static const char *const theirs[] = {"corpus/hdf5/libver_latest.h5", "corpus/hdf5/gzip.h5",
                                         "corpus/hdf5/shuffle_gzip.h5", "corpus/hdf5/keras2_model.h5",
                                         "corpus/hdf5/compact.h5", "real/hdf5/pytables_slink.h5",
                                         "real/hdf5/h5py_vlen_string_s390x.h5"};
    if (!shared)
        TL_SKIP("hdf5: damaging the corpus and real HDF5 files (no ../shared)");
    for (size_t i = 0; shared && i < sizeof(theirs) / sizeof(theirs[0]); i++) {
        snprintf(path, sizeof(path), "%s/%s", shared, theirs[i]);
        damage_file(path, 120);
    }
}

/* 1.4 KB declaring 4 TiB of never-written chunks: listed, but reading the
 * data is refused at once (nothing streamed), naming the dataset. */
static void test_huge_fill(void)
{
    mf_status st;
    mf_status_init(&st);
    mf_model *m;
    if (mf_open(DATA "/huge_fill.h5", NULL, &m, &st)) {
        CHECKF(0, "huge_fill.h5: %s", st.msg);
        mf_status_clear(&st);
        return;
    }
    CHECK(m->n_tensors == 1 && m->tensors[0].shape[0] == 1 << 20 &&
          m->tensors[0].shape[1] == 1 << 20);
    uint64_t got = 0;
    int rc = m->n_tensors ? mf_tensor_stream(m, &m->tensors[0], drain, &got, &st) : 0;
    CHECKF(rc != 0 && got == 0 && strstr(st.msg, "/x") && strstr(st.msg, "never written"),
           "huge fill: rc %d, %llu bytes streamed, %s", rc, (unsigned long long)got, st.msg);
    mf_close(m);
    mf_status_clear(&st);
}

/* 17 GiB of zeros in 1 MB of blosc chunks: refused before decoding. */
static void test_blosc_bomb(void)
{
    mf_status st;
    mf_status_init(&st);
    mf_model *m;
    if (mf_open(DATA "/blosc_bomb.h5", NULL, &m, &st)) {
        CHECKF(0, "blosc_bomb.h5: %s", st.msg);
        mf_status_clear(&st);
        return;
    }
    uint64_t got = 0;
    int rc = m->n_tensors == 1 ? mf_tensor_stream(m, &m->tensors[0], drain, &got, &st) : 0;
    CHECKF(rc != 0 && got == 0 && strstr(st.msg, "4096:1"), "blosc bomb: rc %d, %llu bytes, %s",
           rc, (unsigned long long)got, st.msg);
    mf_close(m);
    mf_status_clear(&st);
}

/* Chunk records that share stored bytes (a chunk bomb) are refused. */
static void test_shared_chunks(void)
{
    mf_status st;
    mf_status_init(&st);
    mf_model *m;
    if (mf_open(DATA "/shared_chunks.h5", NULL, &m, &st) == 0) {
        uint64_t got = 0;
        int rc = m->n_tensors == 1 ? mf_tensor_stream(m, &m->tensors[0], drain, &got, &st) : 0;
        CHECKF(rc != 0 && strstr(st.msg, "share stored bytes"), "shared chunks: rc %d, %s", rc,
               st.msg);
        mf_close(m);
    } else {
        CHECKF(strstr(st.msg, "share stored bytes") != NULL, "shared chunks: %s", st.msg);
    }
    mf_status_clear(&st);
}

/* A damaged scale-offset, szip or blosc chunk is refused cleanly: every
 * byte of each filtered chunk region flipped in turn would take long, so
 * flip bytes through the data part of the files (damage_file below does
 * it at random too). */
static void test_filter_damage(void)
{
    static const char *const files[] = {"szip.h5", "scaleoffset.h5", "pytables_blosc.h5"};
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        char path[512];
        snprintf(path, sizeof(path), "%s/%s", DATA, files[i]);
        damage_file(path, 200);
    }
}

int main(void)
{
    test_checksums();
    test_manifest();
    test_metadata();
    test_range();
    test_hostile();
    test_huge_fill();
    test_shared_chunks();
    test_blosc_bomb();
    test_filter_damage();
    return tl_report("hdf5");
}
