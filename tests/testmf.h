/* testmf.h - helpers for tests of the library (testlib.h is the harness):
 * a digest in hex, an expected open error, a sink into a fixed buffer. */
#ifndef MF_TESTMF_H
#define MF_TESTMF_H
#include "core/core.h"
#include "testlib.h"

#include <mfmt.h>
#include <stdbool.h>

/* SHA-256 of b[0..n) as lower-case hex. */
static inline void tl_sha256_hex(const void *b, size_t n, char hex[129])
{
    mf_hasher *h = mf_hasher_new(MF_SHA256);
    mf_hasher_update(h, b, n);
    mf_hasher_final_hex(h, hex);
    mf_hasher_free(h);
}

/* A whole file, malloc'd (NULL when it cannot be read); *n its size. */
static inline uint8_t *tl_read_file(const char *path, size_t *n)
{
    *n = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc(len > 0 ? (size_t)len : 1);
    *n = b && len > 0 ? fread(b, 1, (size_t)len, f) : 0;
    fclose(f);
    return b;
}

/* Every tensor of model a has the same values in model b (by name; as
 * float32: a 1-d F16 tensor comes back as the F32 a GGUF holds), and b has
 * no other. */
static inline bool tl_same_tensors(const char *a, const char *b)
{
    mf_model *ma = NULL, *mb = NULL;
    bool same = mf_open(a, NULL, &ma, NULL) == 0 && mf_open(b, NULL, &mb, NULL) == 0;
    for (size_t i = 0; same && i < mf_model_tensor_count(ma); i++) {
        const mf_tensor *t = mf_model_tensor_at(ma, i), *u = mf_tensor_find(mb, mf_tensor_name(t));
        void *x = NULL, *y = NULL;
        uint64_t nx = 0, ny = 0;
        same = u && mf_tensor_read_alloc(ma, t, MF_F32, &x, &nx, NULL) == 0 &&
               mf_tensor_read_alloc(mb, u, MF_F32, &y, &ny, NULL) == 0 && nx == ny && !memcmp(x, y, nx);
        if (!same)
            fprintf(stderr, "  tensor %s differs\n", mf_tensor_name(t));
        mf_free(x);
        mf_free(y);
    }
    same = same && mf_model_tensor_count(ma) == mf_model_tensor_count(mb);
    mf_close(ma);
    mf_close(mb);
    return same;
}

/* mf_open(path) must fail with `code`, naming the file and saying `needle`. */
static inline void tl_expect_open_error(const char *path, mf_code code, const char *needle)
{
    mf_status st;
    mf_status_init(&st);
    mf_model *m = NULL;
    int rc = mf_open(path, NULL, &m, &st);
    CHECKF(rc != 0 && st.code == code && strstr(st.msg, path) && strstr(st.msg, needle),
           "%s: want error %d with \"%s\", got rc %d code %d: %s", path, code, needle, rc,
           st.code, st.msg);
    mf_close(m);
    mf_status_clear(&st);
}

/* An mf_sink_fn target of fixed size: more than fits fails ("full"). */
typedef struct tl_sinkbuf {
    uint8_t b[1 << 12];
    size_t n;
} tl_sinkbuf;

static inline int tl_sink(void *ctx, const void *p, size_t n, mf_status *st)
{
    tl_sinkbuf *s = ctx;
    if (n > sizeof(s->b) - s->n)
        return mf_fail(st, MF_ERR_USAGE, NULL, -1, "full");
    memcpy(s->b + s->n, p, n);
    s->n += n;
    return 0;
}
#endif
