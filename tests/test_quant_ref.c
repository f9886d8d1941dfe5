/* test_quant_ref.c - byte-exactness of lib/quant against llama.cpp.
 *
 * Reads ../shared/quant-ref/input.safetensors and ref-<TYPE>.safetensors
 * (made by llama.cpp b4747 itself, see the README there) and checks, for
 * every input tensor NAME and every type mfmt supports:
 *   NAME.q    == mf_quantize_rows(type, NAME, imatrix NULL)
 *   NAME.qw   == mf_quantize_rows(type, NAME, NAME.imatrix)
 *   NAME.deq  == mf_dequantize_row of NAME.q (float bit patterns)
 *   NAME.deqw == mf_dequantize_row of NAME.qw
 * honouring NAME.qmask / .qwmask / .deqmask / .deqwmask where present
 * (IQ1_S, IQ1_M: bytes that depend on uninitialized memory in ggml).
 * Prints a per-type summary. Skips (with a note) when ../shared is absent.
 *
 * The safetensors files are parsed here with jansson (8-byte LE header
 * length, JSON header, data section), independently of lib/formats. */
#include "testlib.h"

#include "core/core.h"
#include "quant/quant.h"

#include <jansson.h>
#include <stdint.h>

/* ------------------------------------------------------------ safetensors */

typedef struct st_tensor {
    const char *name;
    char dtype[8];
    int64_t shape[4];
    int ndim;
    const uint8_t *data;
    size_t nbytes;
} st_tensor;

typedef struct st_file {
    uint8_t *buf;
    size_t size;
    json_t *header;
    st_tensor *t;
    size_t n;
} st_file;

static uint8_t *read_all(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    uint8_t *buf = NULL;
    long len = -1;
    if (fseek(f, 0, SEEK_END) == 0)
        len = ftell(f);
    if (len >= 0 && fseek(f, 0, SEEK_SET) == 0) {
        buf = malloc((size_t)len + 1);
        if (buf && fread(buf, 1, (size_t)len, f) != (size_t)len) {
            free(buf);
            buf = NULL;
        }
    }
    fclose(f);
    *size = (size_t)len;
    return buf;
}

static void st_close(st_file *f)
{
    free(f->t);
    json_decref(f->header);
    free(f->buf);
    memset(f, 0, sizeof(*f));
}

static int st_add_tensor(st_file *f, const char *name, json_t *v, size_t data_off)
{
    st_tensor *t = &f->t[f->n];
    json_t *dt = json_object_get(v, "dtype"), *shape = json_object_get(v, "shape");
    json_t *offs = json_object_get(v, "data_offsets");
    if (!json_is_string(dt) || !json_is_array(shape) || json_array_size(offs) != 2 || json_array_size(shape) > 4)
        return -1;
    t->name = name;
    snprintf(t->dtype, sizeof(t->dtype), "%s", json_string_value(dt));
    t->ndim = (int)json_array_size(shape);
    for (int i = 0; i < t->ndim; i++)
        t->shape[i] = json_integer_value(json_array_get(shape, (size_t)i));
    json_int_t b = json_integer_value(json_array_get(offs, 0)), e = json_integer_value(json_array_get(offs, 1));
    if (b < 0 || e < b || data_off + (size_t)e > f->size)
        return -1;
    t->data = f->buf + data_off + b;
    t->nbytes = (size_t)(e - b);
    f->n++;
    return 0;
}

static int st_open(st_file *f, const char *path)
{
    memset(f, 0, sizeof(*f));
    f->buf = read_all(path, &f->size);
    if (!f->buf || f->size < 8)
        return -1;
    uint64_t hlen = mf_rd64le(f->buf);
    if (hlen > f->size - 8)
        return -1;
    json_error_t err;
    f->header = json_loadb((const char *)f->buf + 8, hlen, 0, &err);
    if (!json_is_object(f->header))
        return -1;
    f->t = calloc(json_object_size(f->header) + 1, sizeof(st_tensor));
    if (!f->t)
        return -1;
    const char *key;
    json_t *v;
    json_object_foreach(f->header, key, v)
    {
        if (strcmp(key, "__metadata__") && st_add_tensor(f, key, v, 8 + hlen) < 0)
            return -1;
    }
    return 0;
}

static const st_tensor *st_find(const st_file *f, const char *name)
{
    for (size_t i = 0; i < f->n; i++)
        if (!strcmp(f->t[i].name, name))
            return &f->t[i];
    return NULL;
}

static const st_tensor *st_findf(const st_file *f, const char *name, const char *suffix)
{
    char buf[256];
    snprintf(buf, sizeof(buf), "%s%s", name, suffix);
    return st_find(f, buf);
}

/* F32 data copied out (the mapping need not be 4-aligned). */
static float *st_floats(const st_tensor *t)
{
    float *p = malloc(t->nbytes ? t->nbytes : 1);
    if (p)
        memcpy(p, t->data, t->nbytes);
    return p;
}

/* ------------------------------------------------------------ comparisons */

typedef struct tally {
    int q, q_ok, qw, qw_ok, deq, deq_ok, deqw, deqw_ok;
} tally;

/* Byte equality under an optional mask (1 bits = defined). Prints the first
 * difference. */
static bool bytes_match(const char *what, const uint8_t *got, const uint8_t *want, const uint8_t *mask, size_t n,
                        size_t row_bytes)
{
    for (size_t i = 0; i < n; i++) {
        uint8_t m = mask ? mask[i] : 0xff;
        if ((got[i] & m) != (want[i] & m)) {
            fprintf(stderr, "  %s: first byte difference at row %zu byte %zu: got %02x want %02x\n", what,
                    i / row_bytes, i % row_bytes, got[i], want[i]);
            return false;
        }
    }
    return true;
}

/* Float bit equality; mask: one byte per value, 0 = undefined. */
static bool floats_match(const char *what, const float *got, const uint8_t *want, const uint8_t *mask, size_t n,
                         size_t ncols)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t a, b;
        memcpy(&a, &got[i], 4);
        memcpy(&b, want + 4 * i, 4);
        if ((!mask || mask[i]) && a != b) {
            fprintf(stderr, "  %s: first value difference at row %zu col %zu: got %08x want %08x\n", what, i / ncols,
                    i % ncols, a, b);
            return false;
        }
    }
    return true;
}

typedef struct input {
    const char *name;
    const float *x, *imatrix;
    int64_t nrows, ncols;
} input;

static const uint8_t *mask_of(const st_file *ref, const char *name, const char *suffix, size_t nbytes)
{
    const st_tensor *m = st_findf(ref, name, suffix);
    return m && m->nbytes == nbytes ? m->data : NULL;
}

/* One quantization check (.q or .qw) and its dequantization (.deq/.deqw). */
static void check_one(mf_dtype dt, const st_file *ref, const input *in, bool weighted, tally *ty)
{
    const char *qs = weighted ? ".qw" : ".q", *ds = weighted ? ".deqw" : ".deq";
    const char *qm = weighted ? ".qwmask" : ".qmask", *dm = weighted ? ".deqwmask" : ".deqmask";
    const st_tensor *q = st_findf(ref, in->name, qs), *deq = st_findf(ref, in->name, ds);
    char what[160];
    if (q && mf_can_quantize(dt)) {
        uint8_t *got = calloc(q->nbytes + 1, 1);
        int rc = mf_quantize_rows(dt, in->x, got, in->nrows, in->ncols, weighted ? in->imatrix : NULL);
        snprintf(what, sizeof(what), "%s %s%s", mf_dtype_name(dt), in->name, qs);
        bool ok = rc == 0 && bytes_match(what, got, q->data, mask_of(ref, in->name, qm, q->nbytes), q->nbytes,
                                         q->nbytes / (size_t)in->nrows);
        CHECKF(ok, "%s", what);
        *(weighted ? &ty->qw : &ty->q) += 1;
        *(weighted ? &ty->qw_ok : &ty->q_ok) += ok;
        free(got);
    }
    if (q && deq && mf_can_dequantize(dt)) {
        size_t n = (size_t)(in->nrows * in->ncols);
        float *got = calloc(n, sizeof(float));
        int rc = mf_dequantize_row(dt, q->data, got, (int64_t)n);
        snprintf(what, sizeof(what), "%s %s%s", mf_dtype_name(dt), in->name, ds);
        bool ok = rc == 0 && deq->nbytes == 4 * n &&
                  floats_match(what, got, deq->data, mask_of(ref, in->name, dm, n), n, (size_t)in->ncols);
        CHECKF(ok, "%s", what);
        *(weighted ? &ty->deqw : &ty->deq) += 1;
        *(weighted ? &ty->deqw_ok : &ty->deq_ok) += ok;
        free(got);
    }
}

/* Multi-threaded quantization gives the reference bytes too. */
static void check_threads(mf_dtype dt, const st_file *ref, const input *in)
{
    const st_tensor *q = st_findf(ref, in->name, ".qw");
    if (!q || !mf_can_quantize(dt) || st_findf(ref, in->name, ".qwmask"))
        return;
    for (int nt = 2; nt <= 5; nt += 3) {
        uint8_t *got = calloc(q->nbytes + 1, 1);
        int rc = mf_quantize_rows_mt(dt, in->x, got, in->nrows, in->ncols, in->imatrix, nt);
        CHECKF(rc == 0 && !memcmp(got, q->data, q->nbytes), "%s %s.qw with %d threads", mf_dtype_name(dt), in->name,
               nt);
        free(got);
    }
}

static const char *const type_names[] = {"Q4_0",    "Q4_1",   "Q5_0",    "Q5_1",  "Q8_0",   "Q2_K",   "Q3_K",
                                         "Q4_K",    "Q5_K",   "Q6_K",    "IQ2_XXS", "IQ2_XS", "IQ3_XXS", "IQ1_S",
                                         "IQ4_NL",  "IQ3_S",  "IQ2_S",   "IQ4_XS", "IQ1_M",  "TQ1_0",  "TQ2_0"};

static void check_type(const char *dir, const char *tname, const input *ins, int nin)
{
    mf_dtype dt = mf_dtype_from_name(tname);
    if (!mf_can_quantize(dt) && !mf_can_dequantize(dt)) {
        printf("%-8s not supported yet\n", tname);
        return;
    }
    char path[512];
    snprintf(path, sizeof(path), "%s/quant-ref/ref-%s.safetensors", dir, tname);
    st_file ref;
    if (st_open(&ref, path) < 0) {
        printf("%-8s reference missing (%s)\n", tname, path);
        st_close(&ref);
        return;
    }
    tally ty = {0};
    for (int i = 0; i < nin; i++) {
        check_one(dt, &ref, &ins[i], false, &ty);
        check_one(dt, &ref, &ins[i], true, &ty);
        if (i % 7 == 0)
            check_threads(dt, &ref, &ins[i]);
    }
    printf("%-8s %d/%d q, %d/%d qw, deq %d/%d, deqw %d/%d\n", tname, ty.q_ok, ty.q, ty.qw_ok, ty.qw, ty.deq_ok, ty.deq,
           ty.deqw_ok, ty.deqw);
    st_close(&ref);
}

/* The inputs: every F32 [nrows, ncols] tensor with a NAME.imatrix. */
static int load_inputs(const st_file *inf, input *ins, int max)
{
    int n = 0;
    for (size_t i = 0; i < inf->n && n < max; i++) {
        const st_tensor *t = &inf->t[i], *w = st_findf(inf, t->name, ".imatrix");
        if (t->ndim != 2 || strcmp(t->dtype, "F32") || !w || w->nbytes != (size_t)t->shape[1] * 4)
            continue;
        ins[n] = (input){t->name, st_floats(t), st_floats(w), t->shape[0], t->shape[1]};
        n++;
    }
    return n;
}

int main(void)
{
    const char *dir = tl_shared_dir();
    char path[512];
    st_file inf;
    if (!dir) {
        TL_SKIP("quant_ref: the quant-ref conformance (no ../shared)");
        return tl_report("quant_ref");
    }
    snprintf(path, sizeof(path), "%s/quant-ref/input.safetensors", dir);
    if (st_open(&inf, path) < 0) {
        printf("note: %s unreadable; quant-ref conformance skipped\n", path);
        st_close(&inf);
        return tl_report("quant_ref");
    }
    input ins[64];
    int nin = load_inputs(&inf, ins, 64);
    CHECKF(nin == 30, "expected 30 input tensors, found %d", nin);
    const char *only = getenv("MFMT_QUANT_TYPE"); /* debugging: one type */
    for (size_t i = 0; i < sizeof(type_names) / sizeof(type_names[0]); i++)
        if (!only || !strcmp(only, type_names[i]))
            check_type(dir, type_names[i], ins, nin);
    for (int i = 0; i < nin; i++) {
        free((void *)ins[i].x);
        free((void *)ins[i].imatrix);
    }
    st_close(&inf);
    return tl_report("quant_ref");
}
