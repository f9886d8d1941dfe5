/* test_imatrix.c - the importance-matrix reader (lib/ops/imatrix.c): the
 * reference imatrix.dat, hand-made legacy files (good, truncated, hostile),
 * the GGUF form, and quantizing with a GGUF imatrix equal to the .dat. */
#include "testlib.h"

#include "ops/imatrix.h"
#include "ops/quantize.h"

#include <math.h>
#include <unistd.h>

static char g_tmp[] = "/tmp/mfmt-imatrix-XXXXXX";

static void tmp_path(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", g_tmp, name);
}

static void write_file(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(p, 1, n, f);
        fclose(f);
    }
}

/* ------------------------------------------------ legacy builder */

typedef struct buf {
    uint8_t d[8192];
    size_t n;
} buf;

static void put32(buf *b, int32_t v)
{
    mf_wr32le(b->d + b->n, (uint32_t)v);
    b->n += 4;
}

static void putf(buf *b, float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    put32(b, (int32_t)u);
}

static void put_entry(buf *b, const char *name, int32_t ncall, const float *v, int32_t n)
{
    put32(b, (int32_t)strlen(name));
    memcpy(b->d + b->n, name, strlen(name));
    b->n += strlen(name);
    put32(b, ncall);
    put32(b, n);
    for (int32_t i = 0; i < n; i++)
        putf(b, v[i]);
}

static void put_tail(buf *b, int32_t last_call, const char *dataset)
{
    put32(b, last_call);
    put32(b, (int32_t)strlen(dataset));
    memcpy(b->d + b->n, dataset, strlen(dataset));
    b->n += strlen(dataset);
}

static int load_bytes(const buf *b, mf_imatrix **im, mf_status *st)
{
    char p[256];
    tmp_path(p, sizeof(p), "t.dat");
    write_file(p, b->d, b->n);
    return mf_imatrix_load(p, im, st);
}

static void test_reference_dat(void)
{
    const char *shared = tl_shared_dir();
    if (!shared) {
        TL_SKIP("imatrix: the reference imatrix files (no ../shared)");
        return;
    }
    char path[512];
    snprintf(path, sizeof(path), "%s/quant-ref/mix/imatrix.dat", shared);
    mf_status st;
    mf_status_init(&st);
    mf_imatrix *im;
    if (mf_imatrix_load(path, &im, &st)) {
        CHECKF(0, "%s", st.msg);
        return;
    }
    CHECK(!im->is_gguf && im->n_entries == 57 && im->chunks == 10);
    CHECK(im->dataset && strcmp(im->dataset, "synthetic (quant-ref make_mix.py)") == 0);
    CHECK(mf_imatrix_find(im, "token_embd.weight") == NULL); /* llama-imatrix never records it */
    const mf_imatrix_entry *o = mf_imatrix_find(im, "output.weight");
    CHECK(o && o->n == 256);
    /* the first entry, read by hand: values are stored * ncall and divided
     * in float32 on load */
    mf_file f;
    if (mf_map_file(path, &f, &st) == 0) {
        const uint8_t *p = f.base + 4;
        uint32_t len = mf_rd32le(p);
        char name[128];
        snprintf(name, sizeof(name), "%.*s", (int)len, (const char *)p + 4);
        p += 4 + len;
        int32_t ncall = (int32_t)mf_rd32le(p), nval = (int32_t)mf_rd32le(p + 4);
        const mf_imatrix_entry *e = mf_imatrix_find(im, name);
        CHECK(ncall == 10 && e && e->n == (size_t)nval);
        int same = 0;
        for (int32_t i = 0; e && i < nval; i++) {
            uint32_t u = mf_rd32le(p + 8 + 4 * (size_t)i);
            float raw;
            memcpy(&raw, &u, 4);
            float want = raw / (float)ncall;
            same += memcmp(&want, &e->values[i], 4) == 0;
        }
        CHECKF(same == nval, "%d of %d values equal raw/ncall", same, nval);
        mf_unmap_file(&f);
    }
    /* entries are sorted and unique */
    for (size_t i = 1; i < im->n_entries; i++)
        CHECK(strcmp(im->entries[i - 1].name, im->entries[i].name) < 0);
    mf_imatrix_free(im);
    mf_status_clear(&st);
}

static void test_legacy_cases(void)
{
    mf_status st;
    mf_status_init(&st);
    mf_imatrix *im;
    float a[4] = {1, 2, 3, 4}, b[2] = {10, 20}, c[4] = {5, 6, 7, 8};
    /* duplicates: the later entry wins; ncall 0 means no division */
    buf x = {0};
    put32(&x, 3);
    put_entry(&x, "w.weight", 2, a, 4);
    put_entry(&x, "v.weight", 0, b, 2);
    put_entry(&x, "w.weight", 4, c, 4);
    size_t entries_end = x.n;
    put_tail(&x, 12, "wiki");
    CHECKF(load_bytes(&x, &im, &st) == 0, "%s", st.msg);
    if (mf_ok(&st)) {
        const mf_imatrix_entry *w = mf_imatrix_find(im, "w.weight"), *v = mf_imatrix_find(im, "v.weight");
        CHECK(im->n_entries == 2 && im->chunks == 12 && strcmp(im->dataset, "wiki") == 0);
        CHECK(w && w->n == 4 && w->values[0] == 1.25f && w->values[3] == 2.0f);
        CHECK(v && v->n == 2 && v->values[1] == 20.0f);
        CHECK(mf_imatrix_find(im, "u.weight") == NULL);
        mf_imatrix_free(im);
    }
    /* every truncation fails cleanly, except exactly after the entries
     * (the dataset tail is optional) */
    buf t = x;
    int bad = 0;
    for (size_t n = 0; n < x.n; n++) {
        t.n = n;
        mf_status_clear(&st);
        int rc = load_bytes(&t, &im, &st);
        if (rc == 0) {
            bad += n != entries_end;
            CHECK(im->chunks == 0 && im->dataset == NULL);
            mf_imatrix_free(im);
        } else {
            bad += st.code != MF_ERR_FORMAT;
        }
    }
    CHECKF(bad == 0, "%d truncations misjudged", bad);
    mf_status_clear(&st);
    /* trailing bytes after the dataset name */
    t = x;
    put32(&t, 0);
    CHECK(load_bytes(&t, &im, &st) == -1 && strstr(st.msg, "unexpected bytes"));
    mf_status_clear(&st);
    /* hostile counts and lengths */
    buf h = {0};
    put32(&h, 0x7fffffff);
    put_entry(&h, "w", 1, a, 1);
    CHECK(load_bytes(&h, &im, &st) == -1 && strstr(st.msg, "does not fit"));
    mf_status_clear(&st);
    h.n = 0;
    put32(&h, 0);
    CHECK(load_bytes(&h, &im, &st) == -1);
    mf_status_clear(&st);
    h.n = 0;
    put32(&h, 1);
    put32(&h, -5);
    put32(&h, 0);
    put32(&h, 0);
    put32(&h, 0);
    CHECK(load_bytes(&h, &im, &st) == -1 && strstr(st.msg, "negative name length"));
    mf_status_clear(&st);
    h.n = 0;
    put32(&h, 1);
    put_entry(&h, "w", 1, a, 0);
    put32(&h, 0);
    CHECK(load_bytes(&h, &im, &st) == -1 && strstr(st.msg, "at least 1"));
    mf_status_clear(&st);
    h.n = 0;
    put32(&h, 1);
    put_entry(&h, "w", 1, a, 1);
    h.d[h.n - 8] = 0xff; /* nval 255: more values than the file holds */
    CHECK(load_bytes(&h, &im, &st) == -1 && strstr(st.msg, "unexpected end"));
    mf_status_clear(&st);
    h.d[h.n - 8] = 1;
    h.d[h.n - 5] = 0x80; /* nval negative */
    CHECK(load_bytes(&h, &im, &st) == -1 && strstr(st.msg, "at least 1"));
    mf_status_clear(&st);
    /* non-finite values are refused, as llama-quantize does */
    float nanv[2] = {1, NAN};
    h.n = 0;
    put32(&h, 1);
    put_entry(&h, "w", 1, nanv, 2);
    CHECK(load_bytes(&h, &im, &st) == -1 && strstr(st.msg, "not finite"));
    mf_status_clear(&st);
    /* an empty file */
    h.n = 0;
    CHECK(load_bytes(&h, &im, &st) == -1);
    mf_status_clear(&st);
}

/* ------------------------------------------------ GGUF form */

typedef struct gtensor {
    const char *name;
    int64_t rows, cols;
    const float *v;
} gtensor;

static int gfill(void *ctx, size_t i, mf_sink_fn sink, void *sink_ctx, mf_status *st)
{
    const gtensor *t = &((const gtensor *)ctx)[i];
    uint8_t b[4];
    for (int64_t k = 0; k < t->rows * t->cols; k++) {
        uint32_t u;
        memcpy(&u, &t->v[k], 4);
        mf_wr32le(b, u);
        if (sink(sink_ctx, b, 4, st))
            return -1;
    }
    return 0;
}

/* Writes a GGUF imatrix; n_meta 3 = all keys, fewer = some missing. */
static int write_gguf_imatrix(const char *path, const gtensor *ts, size_t n, size_t n_meta,
                              mf_status *st)
{
    mf_arena *a = mf_arena_new();
    mf_value items[2] = {mf_value_str(a, "first set", 9), mf_value_str(a, "second", 6)};
    mf_kv meta[3];
    meta[0].key = "imatrix.chunk_count";
    meta[0].v = mf_value_uint(7);
    meta[0].v.type = MF_V_U32;
    meta[1].key = "imatrix.chunk_size";
    meta[1].v = mf_value_uint(512);
    meta[1].v.type = MF_V_U32;
    meta[2].key = "imatrix.datasets";
    meta[2].v.type = MF_V_ARR;
    meta[2].v.as.arr.elem = MF_V_STR;
    meta[2].v.as.arr.n = 2;
    meta[2].v.as.arr.items = items;
    mf_out_tensor *outs = calloc(n, sizeof(*outs));
    for (size_t i = 0; outs && i < n; i++)
        outs[i] = (mf_out_tensor){ts[i].name, MF_F32, 2, {ts[i].rows, ts[i].cols}};
    int rc = outs ? mf_gguf_write(path, outs, n, meta, n_meta, gfill, (void *)ts, st) : -1;
    free(outs);
    mf_arena_free(a);
    return rc;
}

static void test_gguf_form(void)
{
    mf_status st;
    mf_status_init(&st);
    char p[256];
    tmp_path(p, sizeof(p), "im.gguf");
    float sums[8] = {1, 2, 3, 4, 5, 6, 7, 8}, counts[2] = {2, 0}, one[4] = {4, 4, 4, 4}, c1[1] = {4};
    gtensor ts[4] = {{"blk.0.ffn_down_exps.weight.in_sum2", 2, 4, sums},
                     {"blk.0.ffn_down_exps.weight.counts", 2, 1, counts},
                     {"output.weight.counts", 1, 1, c1},
                     {"output.weight.in_sum2", 1, 4, one}};
    mf_imatrix *im;
    CHECK(write_gguf_imatrix(p, ts, 4, 3, &st) == 0);
    CHECKF(mf_imatrix_load(p, &im, &st) == 0, "%s", st.msg);
    if (mf_ok(&st)) {
        const mf_imatrix_entry *e = mf_imatrix_find(im, "blk.0.ffn_down_exps.weight");
        const mf_imatrix_entry *o = mf_imatrix_find(im, "output.weight");
        CHECK(im->is_gguf && im->n_entries == 2 && im->chunks == 7);
        CHECK(im->dataset && strcmp(im->dataset, "first set") == 0);
        /* count 2: sums halved; count 0: all ones */
        CHECK(e && e->n == 8 && e->values[0] == 0.5f && e->values[3] == 2.0f && e->values[4] == 1.0f &&
              e->values[7] == 1.0f);
        CHECK(o && o->n == 4 && o->values[2] == 1.0f);
        mf_imatrix_free(im);
    }
    /* missing metadata, unmatched tensors */
    CHECK(write_gguf_imatrix(p, ts, 4, 2, &st) == 0);
    CHECK(mf_imatrix_load(p, &im, &st) == -1 && strstr(st.msg, "missing imatrix metadata"));
    mf_status_clear(&st);
    CHECK(write_gguf_imatrix(p, ts, 1, 3, &st) == 0);
    CHECK(mf_imatrix_load(p, &im, &st) == -1 && strstr(st.msg, "no matching .counts"));
    mf_status_clear(&st);
    CHECK(write_gguf_imatrix(p, ts + 1, 1, 3, &st) == 0);
    CHECK(mf_imatrix_load(p, &im, &st) == -1 && strstr(st.msg, "no matching .in_sum2"));
    mf_status_clear(&st);
    gtensor wrong[2] = {ts[0], {"blk.0.ffn_down_exps.weight.counts", 3, 1, sums}};
    CHECK(write_gguf_imatrix(p, wrong, 2, 3, &st) == 0);
    CHECK(mf_imatrix_load(p, &im, &st) == -1 && strstr(st.msg, "matrices"));
    mf_status_clear(&st);
}

/* The reference imatrix.dat rewritten in the GGUF form (sums = stored
 * values, counts = ncall) quantizes to the same bytes. */
typedef struct conv_ctx {
    gtensor t[128];
    float *vals[128];
    size_t n;
} conv_ctx;

static void test_gguf_equals_dat(void)
{
    const char *shared = tl_shared_dir();
    if (!shared) {
        TL_SKIP("imatrix: quantizing the reference mix with its imatrix (no ../shared)");
        return;
    }
    char dat[512], model[512], ggufp[256], out1[256], out2[256];
    snprintf(dat, sizeof(dat), "%s/quant-ref/mix/imatrix.dat", shared);
    snprintf(model, sizeof(model), "%s/quant-ref/mix/model-F16.gguf", shared);
    tmp_path(ggufp, sizeof(ggufp), "imatrix.gguf");
    tmp_path(out1, sizeof(out1), "a.gguf");
    tmp_path(out2, sizeof(out2), "b.gguf");
    mf_status st;
    mf_status_init(&st);
    mf_file f;
    if (mf_map_file(dat, &f, &st)) {
        CHECK(0);
        return;
    }
    static conv_ctx c;
    static float ncall_v[128];
    static char names[128][2][96];
    const uint8_t *p = f.base;
    int32_t n = (int32_t)mf_rd32le(p);
    p += 4;
    for (int32_t i = 0; i < n && c.n + 2 <= 128; i++) {
        uint32_t len = mf_rd32le(p);
        snprintf(names[i][0], 96, "%.*s.in_sum2", (int)len, (const char *)p + 4);
        snprintf(names[i][1], 96, "%.*s.counts", (int)len, (const char *)p + 4);
        p += 4 + len;
        ncall_v[i] = (float)(int32_t)mf_rd32le(p);
        int32_t nval = (int32_t)mf_rd32le(p + 4);
        float *v = malloc((size_t)nval * 4);
        memcpy(v, p + 8, (size_t)nval * 4);
        p += 8 + 4 * (size_t)nval;
        c.vals[c.n] = v;
        c.t[c.n++] = (gtensor){names[i][0], 1, nval, v};
        c.t[c.n++] = (gtensor){names[i][1], 1, 1, &ncall_v[i]};
    }
    mf_unmap_file(&f);
    CHECKF(write_gguf_imatrix(ggufp, c.t, c.n, 3, &st) == 0, "%s", st.msg);
    mf_quantize_opts o;
    mf_quantize_opts_init(&o, MF_FTYPE_Q4_K_M);
    o.imatrix_path = dat;
    CHECKF(mf_quantize_file(model, out1, &o, NULL, NULL, NULL, &st) == 0, "%s", st.msg);
    o.imatrix_path = ggufp;
    CHECKF(mf_quantize_file(model, out2, &o, NULL, NULL, NULL, &st) == 0, "%s", st.msg);
    mf_model *a, *b;
    if (mf_open(out1, NULL, &a, &st) == 0) {
        if (mf_open(out2, NULL, &b, &st) == 0) {
            int same = 0;
            for (size_t i = 0; i < a->n_tensors; i++) {
                char h1[129], h2[129];
                const mf_tensor *tb = mf_tensor_find(b, a->tensors[i].name);
                mf_hash_tensor(a, &a->tensors[i], MF_SHA256, h1, &st);
                if (tb && mf_hash_tensor(b, tb, MF_SHA256, h2, &st) == 0)
                    same += strcmp(h1, h2) == 0;
            }
            CHECKF(same == 75 && a->n_tensors == 75, "%d of 75 tensors equal", same);
            const mf_value *cc = mf_meta_get(b, "quantize.imatrix.chunks_count");
            const mf_value *ds = mf_meta_get(b, "quantize.imatrix.dataset");
            CHECK(cc && cc->as.i == 7 && ds && strcmp(ds->as.s.ptr, "first set") == 0);
            mf_close(b);
        }
        mf_close(a);
    }
    for (size_t i = 0; i < c.n; i += 2)
        free(c.vals[i]);
    unlink(ggufp);
    unlink(out1);
    unlink(out2);
    mf_status_clear(&st);
}

int main(void)
{
    if (!mkdtemp(g_tmp)) {
        CHECK(0);
        return tl_report("imatrix");
    }
    test_reference_dat();
    test_legacy_cases();
    test_gguf_form();
    test_gguf_equals_dat();
    char p[256];
    tmp_path(p, sizeof(p), "t.dat");
    unlink(p);
    tmp_path(p, sizeof(p), "im.gguf");
    unlink(p);
    rmdir(g_tmp);
    return tl_report("imatrix");
}
