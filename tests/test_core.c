/* test_core.c - unit tests for lib/core: cursor bounds, checked math, half
 * floats (exhaustive, against a slow reference), bf16 rounding, UTF-8, the
 * arena, the zip reader on corpus archives, the protobuf reader, the atomic
 * writer, safetensors and GGUF writer round trips, and the dtype table
 * against ggml's block layouts. */
#include "testlib.h"

#include "core/core.h"
#include "core/proto.h"
#include "core/zip.h"
#include "core/crc32.h"

#include <fcntl.h>
#include <zlib.h>

#include <dirent.h>
#include <math.h>
#include <unistd.h>

/* ---------------------------------------------------------------- cursor */

static void test_cursor(void)
{
    static const uint8_t b[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    mf_status st;
    mf_status_init(&st);
    mf_cursor c;
    mf_cur_init(&c, b, sizeof(b), "f.bin", &st);
    uint32_t u32;
    uint64_t u64;
    uint16_t u16;
    uint8_t u8;
    CHECK(mf_cur_u32(&c, &u32, "a") == 0 && u32 == 0x04030201u);
    CHECK(mf_cur_u32(&c, &u32, "b") == 0 && u32 == 0x08070605u);
    CHECK(mf_cur_left(&c) == 2);
    /* a failed read moves nothing and names file, offset and what */
    CHECK(mf_cur_u32(&c, &u32, "the count") == -1);
    CHECK(c.pos == 8);
    CHECKF(strstr(st.msg, "f.bin: byte 8: ") == st.msg, "%s", st.msg);
    CHECK(strstr(st.msg, "the count") != NULL);
    CHECK(st.code == MF_ERR_FORMAT);
    mf_status_clear(&st);
    CHECK(mf_cur_u16(&c, &u16, "x") == 0 && u16 == 0x0a09);
    CHECK(mf_cur_u8(&c, &u8, "x") == -1);
    CHECK(mf_cur_u64(&c, &u64, "x") == -1);
    mf_status_clear(&st);
    /* sizes that would wrap pos + n */
    mf_cur_init(&c, b, sizeof(b), "f.bin", &st);
    c.pos = 3;
    const uint8_t *p = NULL;
    CHECK(mf_cur_need(&c, UINT64_MAX, "huge") == -1);
    CHECK(mf_cur_bytes(&c, UINT64_MAX - 2, &p, "huge") == -1 && p == NULL);
    CHECK(mf_cur_skip(&c, (uint64_t)-3, "huge") == -1 && c.pos == 3);
    CHECK(mf_cur_bytes(&c, 7, &p, "rest") == 0 && p == b + 3 && mf_cur_left(&c) == 0);
    CHECK(mf_cur_bytes(&c, 0, &p, "nothing") == 0);
    CHECK(mf_cur_seek(&c, 10, "end") == 0);
    CHECK(mf_cur_seek(&c, 11, "past") == -1 && c.pos == 10);
    mf_status_clear(&st);
    /* big-endian reads, and origin added to reported offsets */
    mf_cur_init(&c, b, sizeof(b), "g", &st);
    c.big_endian = true;
    c.origin = 1000;
    CHECK(mf_cur_u16(&c, &u16, "x") == 0 && u16 == 0x0102);
    CHECK(mf_cur_u64(&c, &u64, "x") == 0 && u64 == 0x030405060708090aull);
    CHECK(mf_cur_off(&c) == 1010);
    CHECK(mf_cur_u8(&c, &u8, "tail") == -1);
    CHECKF(strstr(st.msg, "g: byte 1010: ") == st.msg, "%s", st.msg);
    mf_status_clear(&st);
    /* an empty buffer */
    mf_cur_init(&c, NULL, 0, "empty", &st);
    CHECK(mf_cur_u8(&c, &u8, "x") == -1);
    CHECK(mf_cur_bytes(&c, 0, &p, "x") == 0);
    mf_status_clear(&st);
}

static void test_status(void)
{
    mf_status st;
    mf_status_init(&st);
    mf_breach(&st, "a", 5, "first %d", 1);
    mf_breach(&st, "a", -1, "second");
    mf_fail(&st, MF_ERR_IO, NULL, 3, "third");
    CHECK(st.code == MF_ERR_FORMAT); /* the first decides */
    CHECK(strcmp(st.msg, "a: byte 5: first 1") == 0);
    CHECK(st.n_all == 3 && strcmp(st.all[1], "a: second") == 0 &&
          strcmp(st.all[2], "third") == 0);
    for (int i = 0; i < 3000; i++) /* bounded: a hostile file cannot flood it */
        mf_breach(&st, "a", i, "x");
    CHECK(st.n_all == 1000);
    mf_status_clear(&st);
    CHECK(st.code == MF_OK && st.n_all == 0 && st.all == NULL);
}

/* ---------------------------------------------------------- checked math */

static void test_checked_math(void)
{
    uint64_t r;
    CHECK(!mf_add_ovf(1, 2, &r) && r == 3);
    CHECK(!mf_add_ovf(UINT64_MAX - 1, 1, &r) && r == UINT64_MAX);
    CHECK(mf_add_ovf(UINT64_MAX, 1, &r));
    CHECK(!mf_mul_ovf(0, UINT64_MAX, &r) && r == 0);
    CHECK(!mf_mul_ovf(1ull << 32, (1ull << 32) - 1, &r) && r == (1ull << 32) * ((1ull << 32) - 1));
    CHECK(mf_mul_ovf(1ull << 32, 1ull << 32, &r));
    CHECK(mf_mul_ovf(3, 0x5555555555555556ull, &r));
    CHECK(mf_align_up(0, 32) == 0 && mf_align_up(1, 32) == 32 && mf_align_up(32, 32) == 32 &&
          mf_align_up(33, 32) == 64);
    /* dtype byte counts: overflow and partial blocks are refused */
    CHECK(mf_dtype_nbytes(MF_F32, 10, &r) == 0 && r == 40);
    CHECK(mf_dtype_nbytes(MF_F32, UINT64_MAX / 4 + 1, &r) == -1);
    CHECK(mf_dtype_nbytes(MF_F64, UINT64_MAX / 8, &r) == 0 && r == UINT64_MAX / 8 * 8);
    CHECK(mf_dtype_nbytes(MF_Q4_K, 256 * 3, &r) == 0 && r == 144 * 3);
    CHECK(mf_dtype_nbytes(MF_Q4_K, 255, &r) == -1);
    CHECK(mf_dtype_nbytes(MF_I4, 3, &r) == 0 && r == 2); /* packed: last byte padded */
    CHECK(mf_dtype_nbytes(MF_F6_E2M3, 4, &r) == 0 && r == 3);
    CHECK(mf_dtype_nbytes(MF_STRING, 1, &r) == -1);
    CHECK(mf_dtype_nbytes((mf_dtype)77, 1, &r) == -1);
    /* tensor sizes: negative dims, overflowing products, partial rows */
    mf_status st;
    mf_status_init(&st);
    mf_tensor t = {.name = "t", .dtype = MF_F16, .ndim = 3, .shape = {1 << 20, 1 << 20, 1 << 21}};
    CHECK(mf_tensor_set_nbytes(&t, "f", 0, &st) == 0 && t.nbytes == 1ull << 62); /* 2^61 * 2 */
    t.shape[2] = 1 << 23; /* 2^63 elements * 2 bytes overflows */
    CHECK(mf_tensor_set_nbytes(&t, "f", 0, &st) == -1);
    mf_status_clear(&st);
    t.shape[0] = INT64_MAX, t.shape[1] = 2, t.ndim = 2;
    CHECK(mf_tensor_set_nbytes(&t, "f", 0, &st) == -1);
    CHECK(mf_tensor_nelems(&t) == UINT64_MAX - 1);
    mf_status_clear(&st);
    t.shape[0] = -1;
    CHECK(mf_tensor_set_nbytes(&t, "f", 0, &st) == -1 && strstr(st.msg, "negative"));
    CHECK(mf_tensor_nelems(&t) == UINT64_MAX);
    mf_status_clear(&st);
    mf_tensor q = {.name = "q", .dtype = MF_Q8_0, .ndim = 2, .shape = {3, 33}};
    CHECK(mf_tensor_set_nbytes(&q, "f", 0, &st) == -1 && strstr(st.msg, "block"));
    mf_status_clear(&st);
    q.shape[1] = 64;
    CHECK(mf_tensor_set_nbytes(&q, "f", 0, &st) == 0 && q.nbytes == 3 * 2 * 34);
    mf_tensor z = {.name = "z", .dtype = MF_F32, .ndim = 0};
    CHECK(mf_tensor_set_nbytes(&z, "f", 0, &st) == 0 && z.nbytes == 4); /* 0-d: 1 element */
}

/* ------------------------------------------------------------ half floats */

static uint32_t bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float float_of(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* The value of a finite binary16 pattern from its definition (IEEE 754
 * 3.4): (-1)^s * 2^(e-15) * 1.m, or 2^-14 * 0.m for e == 0. */
static double f16_value(uint16_t h)
{
    int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    double v = e ? ldexp(1.0 + m / 1024.0, e - 15) : ldexp(m / 1024.0, -14);
    return s ? -v : v;
}

/* Round to nearest, ties to even, by search: positive patterns 0..0x7bff
 * are ordered like their values; 0x7c00 stands for 2^16, the next value
 * past the largest finite one, so that ties and beyond give infinity. */
static uint16_t f32_to_f16_reference(float f)
{
    if (isnan(f))
        return 0x7e00 | (signbit(f) ? 0x8000 : 0);
    double x = fabs((double)f);
    uint16_t sign = signbit(f) ? 0x8000 : 0;
    if (isinf(f) || x >= 65536.0)
        return sign | 0x7c00;
    unsigned lo = 0, hi = 0x7c00; /* val(lo) <= x < val(hi) */
    while (hi - lo > 1) {
        unsigned mid = (lo + hi) / 2;
        double v = mid == 0x7c00 ? 65536.0 : f16_value((uint16_t)mid);
        if (v <= x)
            lo = mid;
        else
            hi = mid;
    }
    double vlo = f16_value((uint16_t)lo), vhi = hi == 0x7c00 ? 65536.0 : f16_value((uint16_t)hi);
    double dlo = x - vlo, dhi = vhi - x;
    unsigned pick = dlo < dhi ? lo : dhi < dlo ? hi : (lo & 1 ? hi : lo);
    return (uint16_t)(sign | pick);
}

static void test_f16(void)
{
    /* f16 -> f32 -> f16 is the identity for every non-NaN pattern; f16 -> f32
     * agrees with the definition; NaNs stay NaNs with their sign. */
    int bad_trip = 0, bad_value = 0, bad_nan = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        float f = mf_f16_to_f32((uint16_t)h);
        bool is_nan = (h & 0x7c00) == 0x7c00 && (h & 0x3ff);
        if (is_nan) {
            uint16_t back = mf_f32_to_f16(f);
            bad_nan += !isnan(f) || (back & 0x7c00) != 0x7c00 || !(back & 0x3ff) ||
                       (back & 0x8000) != (h & 0x8000) ||
                       (((bits_of(f) & 0x7fffff) >> 13) | 0x200) != ((h & 0x3ff) | 0x200);
            /* payload kept; signalling NaNs come back quiet, as ggml's table has them */
            continue;
        }
        if ((h & 0x7c00) == 0x7c00)
            bad_value += !isinf(f) || (signbit(f) != 0) != ((h & 0x8000) != 0);
        else
            bad_value += (double)f != f16_value((uint16_t)h) || (signbit(f) != 0) != (h >> 15);
        bad_trip += mf_f32_to_f16(f) != h;
    }
    CHECKF(bad_trip == 0, "%d round-trip failures", bad_trip);
    CHECKF(bad_value == 0, "%d f16 values differ from the definition", bad_value);
    CHECKF(bad_nan == 0, "%d NaN patterns not kept as NaN", bad_nan);

    /* f32 -> f16 against the reference: every f16 value, the midpoints
     * between neighbours and their f32 neighbours (the ties and the values
     * just off them), and a sweep over all f32 patterns. */
    int bad = 0;
    uint32_t first_bad = 0;
#define CMP(u)                                                                     \
    do {                                                                           \
        float f_ = float_of(u);                                                    \
        if (mf_f32_to_f16(f_) != f32_to_f16_reference(f_) && !bad++)               \
            first_bad = (u);                                                       \
    } while (0)
    for (uint32_t h = 0; h < 0x7c00; h++) {
        double v = f16_value((uint16_t)h);
        double next = h + 1 == 0x7c00 ? 65536.0 : f16_value((uint16_t)(h + 1));
        float mid = (float)((v + next) / 2); /* exact: 12 significant bits */
        uint32_t mb = bits_of(mid), vb = bits_of((float)v);
        for (int neg = 0; neg < 2; neg++) {
            uint32_t s = neg ? 0x80000000u : 0;
            CMP(s | mb);
            CMP(s | (mb + 1));
            CMP(s | (mb - 1));
            CMP(s | vb);
            CMP(s | (vb + 1));
            if (vb)
                CMP(s | (vb - 1));
        }
    }
    for (uint64_t u = 0; u <= 0xffffffffull; u += 4093)
        CMP((uint32_t)u);
    static const uint32_t specials[] = {0x00000000, 0x80000000, 0x00000001, 0x7f7fffff,
                                        0x7f800000, 0xff800000, 0x477fe000, 0x477fefff,
                                        0x477ff000, 0x477ff001, 0x33000000, 0x33000001,
                                        0x32ffffff, 0x387fc000, 0x387fe000, 0x38800000};
    for (size_t i = 0; i < sizeof(specials) / sizeof(specials[0]); i++)
        CMP(specials[i]);
#undef CMP
    CHECKF(bad == 0, "%d f32->f16 results differ from the reference; first: f32 bits %08x",
           bad, first_bad);
    CHECK(mf_f32_to_f16(65519.99f) == 0x7bff && mf_f32_to_f16(65520.0f) == 0x7c00);
    CHECK(mf_f32_to_f16(-0.0f) == 0x8000 && mf_f32_to_f16(0x1p-25f) == 0 &&
          mf_f32_to_f16(0x1.000002p-25f) == 1);
}

/* bf16 by definition: the f32 pattern's top half, rounded to nearest even
 * by comparing the two candidates' distances in double. */
static uint16_t f32_to_bf16_reference(float f)
{
    uint32_t u = bits_of(f);
    if (isnan(f))
        return 0; /* checked separately */
    uint16_t lo = (uint16_t)(u >> 16), hi = (uint16_t)(lo + 1);
    if ((u & 0xffff) == 0)
        return lo;
    double x = fabs((double)f);
    double vlo = fabs((double)float_of((uint32_t)lo << 16));
    double vhi = (lo & 0x7fff) == 0x7f7f && (u & 0x7fffffff) > 0x7f7f0000
                     ? ldexp(1.0, 128) /* next past the largest finite: infinity */
                     : fabs((double)float_of((uint32_t)hi << 16));
    double dlo = x - vlo, dhi = vhi - x;
    return dlo < dhi ? lo : dhi < dlo ? hi : (lo & 1 ? hi : lo);
}

static void test_bf16(void)
{
    CHECK(mf_f32_to_bf16(float_of(0x3f808000)) == 0x3f80); /* tie, even below */
    CHECK(mf_f32_to_bf16(float_of(0x3f818000)) == 0x3f82); /* tie, odd: up */
    CHECK(mf_f32_to_bf16(float_of(0x3f808001)) == 0x3f81);
    CHECK(mf_f32_to_bf16(float_of(0x3f807fff)) == 0x3f80);
    CHECK(mf_f32_to_bf16(float_of(0xbf818000)) == 0xbf82); /* sign symmetric */
    CHECK(mf_f32_to_bf16(float_of(0x7f7fffff)) == 0x7f80); /* rounds to infinity */
    CHECK(mf_f32_to_bf16(INFINITY) == 0x7f80 && mf_f32_to_bf16(-INFINITY) == 0xff80);
    uint16_t qn = mf_f32_to_bf16(float_of(0x7f800001)); /* signalling NaN, payload low */
    CHECK((qn & 0x7f80) == 0x7f80 && (qn & 0x7f) != 0 && (qn & 0x40)); /* quiet NaN */
    CHECK(mf_f32_to_bf16(float_of(0xffc00000)) == 0xffc0);
    int bad_trip = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        float f = mf_bf16_to_f32((uint16_t)h);
        if (bits_of(f) != h << 16)
            bad_trip++;
        if (!isnan(f) && mf_f32_to_bf16(f) != h)
            bad_trip++;
    }
    CHECKF(bad_trip == 0, "%d bf16 round trips failed", bad_trip);
    int bad = 0;
    uint32_t first = 0;
    for (uint64_t u = 0; u <= 0xffffffffull; u += 3571) {
        float f = float_of((uint32_t)u);
        if (isnan(f))
            continue;
        if (mf_f32_to_bf16(f) != f32_to_bf16_reference(f) && !bad++)
            first = (uint32_t)u;
    }
    CHECKF(bad == 0, "%d f32->bf16 differ from the reference; first %08x", bad, first);
}

/* ------------------------------------------------------------------ UTF-8 */

static int64_t utf8(const char *s)
{
    return mf_utf8_check((const uint8_t *)s, strlen(s));
}

static void test_utf8(void)
{
    CHECK(mf_utf8_check((const uint8_t *)"", 0) == -1);
    CHECK(utf8("plain ascii {\"a\": 1}") == -1);
    CHECK(utf8("\xc2\x80 \xdf\xbf") == -1);           /* U+0080, U+07FF */
    CHECK(utf8("\xe0\xa0\x80 \xef\xbf\xbf") == -1);   /* U+0800, U+FFFF */
    CHECK(utf8("\xed\x9f\xbf \xee\x80\x80") == -1);   /* U+D7FF, U+E000 around surrogates */
    CHECK(utf8("\xf0\x90\x80\x80 \xf4\x8f\xbf\xbf") == -1); /* U+10000, U+10FFFF */
    CHECK(utf8("ab\xc0\x80") == 2);                    /* overlong NUL */
    CHECK(utf8("\xc1\xbf") == 0);                      /* overlong */
    CHECK(utf8("x\xe0\x9f\xbf") == 1);                 /* overlong 3-byte */
    CHECK(utf8("\xf0\x8f\xbf\xbf") == 0);              /* overlong 4-byte */
    CHECK(utf8("ok\xed\xa0\x80") == 2);                /* U+D800 surrogate */
    CHECK(utf8("\xed\xbf\xbf") == 0);                  /* U+DFFF surrogate */
    CHECK(utf8("\xf4\x90\x80\x80") == 0);              /* U+110000 */
    CHECK(utf8("\xf5\x80\x80\x80") == 0);
    CHECK(utf8("\xff") == 0 && utf8("a\xfe") == 1);
    CHECK(utf8("\x80") == 0);                          /* lone continuation */
    CHECK(utf8("abc\xe2\x82") == 3);                   /* truncated at the end */
    CHECK(utf8("\xe2\x28\xa1") == 0);                  /* bad continuation */
    CHECK(utf8("\xf0\x90\x80") == 0);
    /* NUL bytes are valid UTF-8; the check must not stop at them */
    CHECK(mf_utf8_check((const uint8_t *)"a\0\xff", 3) == 2);
}

/* ------------------------------------------------------------------ arena */

static void test_arena(void)
{
    mf_arena *a = mf_arena_new();
    CHECK(a != NULL);
    bool aligned = true, zeroed = true;
    char *prev = NULL;
    for (int i = 0; i < 5000; i++) {
        size_t n = (size_t)(i * 37 % 301) + 1;
        unsigned char *p = mf_arena_alloc(a, n);
        if (!p)
            break;
        aligned &= ((uintptr_t)p % 16) == 0;
        for (size_t k = 0; k < n; k++)
            zeroed &= p[k] == 0;
        memset(p, 0xab, n); /* later blocks must not overlap this one */
        prev = (char *)p;
    }
    CHECK(aligned && zeroed && prev);
    char *big = mf_arena_alloc(a, 1 << 20); /* beyond a chunk */
    CHECK(big && big[0] == 0 && big[(1 << 20) - 1] == 0);
    char *after = mf_arena_alloc(a, 8); /* the current chunk stays in use */
    CHECK(after && after[0] == 0);
    CHECK(mf_arena_calloc(a, SIZE_MAX / 2, 4) == NULL);
    CHECK(mf_arena_alloc(a, SIZE_MAX - 3) == NULL);
    CHECK(mf_arena_strndup(a, "x", SIZE_MAX) == NULL);
    char *s = mf_arena_strndup(a, "hello world", 5);
    CHECK(s && strcmp(s, "hello") == 0);
    char *e = mf_arena_strndup(a, "", 0);
    CHECK(e && e[0] == 0);
    char *f = mf_arena_printf(a, "%s-%d", "blk", 7);
    CHECK(f && strcmp(f, "blk-7") == 0);
    char *j = mf_path_join(a, "dir/", "x");
    CHECK(j && strcmp(j, "dir/x") == 0);
    mf_arena_free(a);
    mf_arena_free(NULL);
    /* growable arrays refuse sizes that overflow */
    MF_VEC(int) v = {0};
    for (int i = 0; i < 1000; i++)
        CHECK(MF_VEC_PUSH(v, i) == 0);
    CHECK(v.n == 1000 && v.v[999] == 999);
    MF_VEC_FREE(v);
    void *q = NULL;
    size_t cap = 0;
    CHECK(mf_vec_grow(&q, &cap, SIZE_MAX / 2 + 2, 1) == -1);
    CHECK(mf_vec_grow(&q, &cap, SIZE_MAX / 8, 64) == -1 && q == NULL);
}

/* -------------------------------------------------------------------- zip */

typedef struct membuf {
    uint8_t *p;
    size_t n, cap;
} membuf;

static int to_mem(void *ctx, const void *buf, size_t n, mf_status *st)
{
    membuf *m = ctx;
    if (m->n + n > m->cap) {
        m->cap = (m->n + n) * 2;
        m->p = realloc(m->p, m->cap);
    }
    memcpy(m->p + m->n, buf, n);
    m->n += n;
    return 0;
}

static void test_zip(const char *shared)
{
    if (!shared)
        return;
    char p1[512], p2[512], p3[512];
    snprintf(p1, sizeof(p1), "%s/corpus/numpy/stored.npz", shared);
    snprintf(p2, sizeof(p2), "%s/corpus/numpy/compressed.npz", shared);
    snprintf(p3, sizeof(p3), "%s/corpus/pytorch/state_dict.pt", shared);
    mf_status st;
    mf_status_init(&st);
    mf_file fs, fc, fp;
    CHECK(mf_map_file(p1, &fs, &st) == 0);
    CHECK(mf_map_file(p2, &fc, &st) == 0);
    CHECK(mf_map_file(p3, &fp, &st) == 0);
    if (!mf_ok(&st))
        return;
    mf_arena *a = mf_arena_new();
    mf_zip zs, zc, zp;
    CHECKF(mf_zip_open(&zs, fs.base, fs.size, p1, a, &st) == 0, "%s", st.msg);
    CHECKF(mf_zip_open(&zc, fc.base, fc.size, p2, a, &st) == 0, "%s", st.msg);
    CHECKF(mf_zip_open(&zp, fp.base, fp.size, p3, a, &st) == 0, "%s", st.msg);
    if (!mf_ok(&st))
        goto out;
    /* the same three arrays, stored and deflated (sizes and CRCs from
     * Python's zipfile) */
    static const struct { const char *name; uint64_t size; uint32_t crc; } members[] = {
        {"weight.npy", 176, 0xb503d173}, {"bias.npy", 152, 0xea1240f7},
        {"arr_0.npy", 130, 0x5dbb19ee}};
    CHECK(zs.n == 3 && zc.n == 3);
    for (size_t i = 0; i < 3; i++) {
        const mf_zip_entry *es = mf_zip_find(&zs, members[i].name);
        const mf_zip_entry *ec = mf_zip_find(&zc, members[i].name);
        CHECK(es && ec);
        if (!es || !ec)
            continue;
        CHECK(es->method == 0 && ec->method == 8);
        CHECK(es->usize == members[i].size && ec->usize == members[i].size);
        CHECK(es->crc == members[i].crc && ec->crc == members[i].crc);
        CHECK(es->local_ok && !es->name_mismatch);
        membuf ms = {0}, mc = {0};
        CHECK(mf_zip_stream(&zs, es, true, to_mem, &ms, &st) == 0);
        CHECK(mf_zip_stream(&zc, ec, true, to_mem, &mc, &st) == 0);
        CHECK(ms.n == members[i].size && mc.n == ms.n && memcmp(ms.p, mc.p, ms.n) == 0);
        CHECK(ms.n > 6 && memcmp(ms.p, "\x93NUMPY", 6) == 0);
        const uint8_t *direct = mf_zip_stored_data(&zs, es, &st);
        CHECK(direct && memcmp(direct, ms.p, ms.n) == 0);
        CHECK(mf_zip_stored_data(&zc, ec, &st) == NULL); /* deflated: no pointer */
        mf_status_clear(&st);
        uint8_t *x = NULL;
        size_t xn = 0;
        CHECK(mf_zip_extract(&zc, ec, 1 << 20, &x, &xn, &st) == 0 && xn == ms.n &&
              memcmp(x, ms.p, xn) == 0);
        free(x);
        x = NULL;
        CHECK(mf_zip_extract(&zc, ec, 10, &x, &xn, &st) == -1 && x == NULL); /* over limit */
        mf_status_clear(&st);
        free(ms.p);
        free(mc.p);
    }
    CHECK(mf_zip_find(&zs, "nope.npy") == NULL);
    /* torch.save: ARCHIVE/data.pkl, version "3", 64-byte aligned storages */
    const mf_zip_entry *pkl = mf_zip_find_suffix(&zp, "/data.pkl");
    CHECK(pkl && strcmp(pkl->name, "state_dict/data.pkl") == 0 && pkl->usize == 469);
    const mf_zip_entry *ver = mf_zip_find(&zp, "state_dict/version");
    const uint8_t *vd = ver ? mf_zip_stored_data(&zp, ver, &st) : NULL;
    CHECK(vd && ver->usize == 2 && memcmp(vd, "3\n", 2) == 0);
    const mf_zip_entry *d0 = mf_zip_find(&zp, "state_dict/data/0");
    CHECK(d0 && d0->usize == 128 && d0->data_offset % 64 == 0);
    membuf mp = {0};
    CHECK(pkl && mf_zip_stream(&zp, pkl, true, to_mem, &mp, &st) == 0 && mp.n == 469 &&
          mp.p[0] == 0x80 && mp.p[468] == '.');
    free(mp.p);
    mf_status_clear(&st);

    /* damage: a flipped data byte fails the CRC; a cut archive has no end record */
    uint8_t *copy = malloc(fs.size);
    memcpy(copy, fs.base, fs.size);
    mf_zip zd;
    CHECK(mf_zip_open(&zd, copy, fs.size, "copy.npz", a, &st) == 0);
    const mf_zip_entry *w = mf_zip_find(&zd, "weight.npy");
    if (w) {
        copy[w->data_offset + 100] ^= 1;
        membuf mb = {0};
        CHECK(mf_zip_stream(&zd, w, true, to_mem, &mb, &st) == -1);
        CHECKF(strstr(st.msg, "copy.npz") && strstr(st.msg, "CRC"), "%s", st.msg);
        mf_status_clear(&st);
        mb.n = 0;
        CHECK(mf_zip_stream(&zd, w, false, to_mem, &mb, &st) == 0); /* unchecked */
        free(mb.p);
    }
    CHECK(mf_zip_open(&zd, copy, fs.size - 30, "cut.npz", a, &st) == -1);
    CHECK(strstr(st.msg, "cut.npz") != NULL);
    mf_status_clear(&st);
    CHECK(mf_zip_open(&zd, copy, 10, "tiny.npz", a, &st) == -1);
    mf_status_clear(&st);
    free(copy);
out:
    mf_arena_free(a);
    mf_unmap_file(&fs);
    mf_unmap_file(&fc);
    mf_unmap_file(&fp);
    mf_status_clear(&st);
}

/* ------------------------------------------------------------------ proto */

static void test_proto(void)
{
    /* field 1 varint 150; field 2 "testing"; field 3 fixed64; field 4 fixed32;
     * field 5 a nested message {1: 1} (protobuf.dev encoding examples) */
    static const uint8_t msg[] = {0x08, 0x96, 0x01, 0x12, 0x07, 't', 'e', 's', 't', 'i', 'n',
                                  'g', 0x19, 1, 2, 3, 4, 5, 6, 7, 8, 0x25, 9, 0, 0, 0,
                                  0x2a, 0x02, 0x08, 0x01};
    mf_status st;
    mf_status_init(&st);
    mf_cursor c;
    mf_cur_init(&c, msg, sizeof(msg), "m.pb", &st);
    c.origin = 100;
    mf_pb_field f;
    CHECK(mf_pb_next(&c, &f) == 1 && f.number == 1 && f.wire == 0 && f.varint == 150 &&
          f.offset == 100);
    CHECK(mf_pb_next(&c, &f) == 1 && f.number == 2 && f.wire == 2 && f.len == 7 &&
          memcmp(f.data, "testing", 7) == 0 && f.offset == 103);
    CHECK(mf_pb_next(&c, &f) == 1 && f.number == 3 && f.wire == 1 &&
          f.varint == 0x0807060504030201ull);
    CHECK(mf_pb_next(&c, &f) == 1 && f.number == 4 && f.wire == 5 && f.varint == 9);
    CHECK(mf_pb_next(&c, &f) == 1 && f.number == 5 && f.wire == 2);
    mf_cursor sub;
    mf_pb_sub(&c, &f, &sub);
    mf_pb_field g;
    CHECK(mf_pb_next(&sub, &g) == 1 && g.number == 1 && g.varint == 1 &&
          g.offset == 100 + sizeof(msg) - 2);
    CHECK(mf_pb_next(&sub, &g) == 0);
    CHECK(mf_pb_next(&c, &f) == 0 && mf_ok(&st));

    static const uint8_t too_long[] = {0x08, 0xff, 0xff, 0xff, 0xff, 0xff,
                                       0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    static const uint8_t over64[] = {0x08, 0xff, 0xff, 0xff, 0xff, 0xff,
                                     0xff, 0xff, 0xff, 0xff, 0x02};
    static const uint8_t max64[] = {0x08, 0xff, 0xff, 0xff, 0xff, 0xff,
                                    0xff, 0xff, 0xff, 0xff, 0x01};
    static const uint8_t len_past[] = {0x12, 0x08, 'a', 'b'};
    static const uint8_t group[] = {0x0b};
    static const uint8_t field0[] = {0x00, 0x01};
    static const uint8_t cut_varint[] = {0x08, 0x80};
    static const uint8_t huge_len[] = {0x12, 0xff, 0xff, 0xff, 0xff, 0xff,
                                       0xff, 0xff, 0xff, 0xff, 0x01};
    struct { const uint8_t *b; size_t n; int want; } cases[] = {
        {too_long, sizeof(too_long), -1}, {over64, sizeof(over64), -1},
        {max64, sizeof(max64), 1},        {len_past, sizeof(len_past), -1},
        {group, sizeof(group), -1},       {field0, sizeof(field0), -1},
        {cut_varint, sizeof(cut_varint), -1}, {huge_len, sizeof(huge_len), -1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        mf_status_clear(&st);
        mf_cur_init(&c, cases[i].b, cases[i].n, "bad.pb", &st);
        int r = mf_pb_next(&c, &f);
        CHECKF(r == cases[i].want, "case %zu: %d", i, r);
        if (cases[i].want == -1)
            CHECKF(strstr(st.msg, "bad.pb: byte ") == st.msg, "case %zu: %s", i, st.msg);
        else
            CHECK(f.varint == UINT64_MAX);
    }
    mf_status_clear(&st);
}

/* ---------------------------------------------------------- atomic writer */

static char tmpdir[64];

static int count_temp_files(const char *prefix)
{
    DIR *d = opendir(tmpdir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0 && mf_atomic_is_temp_name(e->d_name);
    if (d)
        closedir(d);
    return n;
}

static char *tmp_path(const char *name)
{
    static char p[4][256];
    static int k;
    char *r = p[k++ % 4];
    snprintf(r, 256, "%s/%s", tmpdir, name);
    return r;
}

static void test_atomic(void)
{
    mf_status st;
    mf_status_init(&st);
    const char *out = tmp_path("a.bin");
    mf_atomic *w;
    CHECK(mf_atomic_open(out, &w, &st) == 0);
    static uint8_t big[3 << 20];
    for (size_t i = 0; i < sizeof(big); i++)
        big[i] = (uint8_t)(i * 7);
    CHECK(mf_atomic_write(w, big, sizeof(big), &st) == 0 && mf_atomic_tell(w) == sizeof(big));
    /* nothing visible yet: with O_TMPFILE not even a temporary name */
    CHECK(count_temp_files("a.bin") == 0 && !mf_path_exists(out));
    mf_atomic_abort(w);
    CHECK(count_temp_files("a.bin") == 0 && !mf_path_exists(out));
    /* without O_TMPFILE: one named temporary, removed on abort */
    mf_atomic_named_only = true;
    CHECK(mf_atomic_open(out, &w, &st) == 0);
    CHECK(mf_atomic_write(w, big, sizeof(big), &st) == 0);
    CHECK(count_temp_files("a.bin") == 1 && !mf_path_exists(out));
    mf_atomic_abort(w);
    mf_atomic_named_only = false;
    CHECK(count_temp_files("a.bin") == 0 && !mf_path_exists(out));

    CHECK(mf_atomic_open(out, &w, &st) == 0);
    CHECK(mf_atomic_write(w, "hello", 5, &st) == 0);
    CHECK(mf_atomic_commit(w, &st) == 0);
    char *got = NULL;
    size_t n = 0;
    CHECK(mf_read_small_file(out, 100, &got, &n, &st) == 0 && n == 5 && memcmp(got, "hello", 5) == 0);
    free(got);
    /* replacing: the old content stays until commit, and on abort */
    CHECK(mf_atomic_open(out, &w, &st) == 0);
    CHECK(mf_atomic_write(w, big, sizeof(big), &st) == 0);
    mf_atomic_abort(w);
    CHECK(mf_read_small_file(out, 100, &got, &n, &st) == 0 && n == 5);
    free(got);
    CHECK(mf_atomic_open(out, &w, &st) == 0);
    CHECK(mf_atomic_write(w, big, sizeof(big), &st) == 0 && mf_atomic_commit(w, &st) == 0);
    CHECK(mf_read_small_file(out, sizeof(big) + 1, &got, &n, &st) == 0 && n == sizeof(big) &&
          memcmp(got, big, n) == 0);
    free(got);
    CHECK(count_temp_files("a.bin") == 0);
    /* a directory that does not exist: an I/O error naming the path */
    CHECK(mf_atomic_open(tmp_path("no/such/dir.bin"), &w, &st) == -1 && st.code == MF_ERR_IO);
    CHECK(strstr(st.msg, "no/such/dir.bin") != NULL);
    mf_status_clear(&st);
}

/* ------------------------------------------------- writer round trips */

typedef struct src {
    const uint8_t *const *data;
    const uint64_t *sizes;
    int fail_at; /* -1: never */
} src;

static int fill_from(void *ctx, size_t i, mf_sink_fn sink, void *sctx, mf_status *st)
{
    src *s = ctx;
    if ((int)i == s->fail_at)
        return mf_fail(st, MF_ERR_IO, "source", -1, "simulated failure at tensor %zu", i);
    /* in two pieces, to exercise chunked writing */
    size_t half = (size_t)s->sizes[i] / 2;
    if (sink(sctx, s->data[i], half, st))
        return -1;
    return sink(sctx, s->data[i] + half, (size_t)s->sizes[i] - half, st);
}

static int fill_short(void *ctx, size_t i, mf_sink_fn sink, void *sctx, mf_status *st)
{
    src *s = ctx;
    return sink(sctx, s->data[i], (size_t)s->sizes[i] - 1, st);
}

static void check_tensor_bytes(const mf_model *m, const char *name, const uint8_t *want,
                               uint64_t n)
{
    const mf_tensor *t = mf_tensor_find(m, name);
    CHECKF(t != NULL, "%s missing", name);
    if (!t)
        return;
    CHECKF(t->nbytes == n, "%s: %llu bytes", name, (unsigned long long)t->nbytes);
    membuf mb = {0};
    mf_status st;
    mf_status_init(&st);
    CHECK(mf_tensor_stream(m, t, to_mem, &mb, &st) == 0);
    CHECK(mb.n == n && (n == 0 || memcmp(mb.p, want, n) == 0));
    free(mb.p);
}

static void test_safetensors_roundtrip(void)
{
    static float w[6] = {1.5f, -2.0f, 3.25f, 0.0f, -0.0f, 1e30f};
    static uint16_t h[4] = {0x3c00, 0xbc00, 0x7c00, 0x0001};
    static uint8_t b[3] = {1, 0, 1};
    static int64_t s0 = -42;
    const uint8_t *data[] = {(const uint8_t *)w, (const uint8_t *)h, b, (const uint8_t *)&s0,
                             (const uint8_t *)""};
    const uint64_t sizes[] = {sizeof(w), sizeof(h), sizeof(b), sizeof(s0), 0};
    mf_out_tensor ts[5] = {
        {.name = "layer.weight", .dtype = MF_F32, .ndim = 2, .shape = {2, 3}},
        {.name = "h", .dtype = MF_BF16, .ndim = 1, .shape = {4}},
        {.name = "mask", .dtype = MF_BOOL, .ndim = 1, .shape = {3}},
        {.name = "step", .dtype = MF_I64, .ndim = 0},
        {.name = "empty", .dtype = MF_F16, .ndim = 2, .shape = {0, 5}},
    };
    mf_arena *a = mf_arena_new();
    mf_kv meta[2] = {{.key = "format"}, {.key = "note"}};
    meta[0].v = mf_value_str(a, "pt", 2);
    meta[1].v = mf_value_str(a, "ünïcode \"quoted\"", strlen("ünïcode \"quoted\""));
    src s = {data, sizes, -1};
    mf_status st;
    mf_status_init(&st);
    const char *out = tmp_path("rt.safetensors");
    CHECKF(mf_safetensors_write(out, ts, 5, meta, 2, fill_from, &s, &st) == 0, "%s", st.msg);
    mf_model *m = NULL;
    mf_open_opts strict = {.struct_size = sizeof(mf_open_opts), .flags = MF_OPEN_STRICT};
    CHECKF(mf_open(out, &strict, &m, &st) == 0, "%s", st.msg);
    if (m) {
        CHECK(m->format == MF_FMT_SAFETENSORS && m->n_tensors == 5);
        uint64_t hlen = mf_rd64le(m->files[0].base);
        CHECK(hlen % 8 == 0); /* padded as the reference writer pads */
        for (size_t i = 0; i < 5; i++) {
            const mf_tensor *t = mf_tensor_find(m, ts[i].name);
            CHECK(t && t->dtype == ts[i].dtype && t->ndim == ts[i].ndim &&
                  memcmp(t->shape, ts[i].shape, sizeof(int64_t) * (size_t)ts[i].ndim) == 0);
            check_tensor_bytes(m, ts[i].name, data[i], sizes[i]);
        }
        const mf_value *v = mf_meta_get(m, "note");
        CHECK(v && v->type == MF_V_STR && strcmp(v->as.s.ptr, meta[1].v.as.s.ptr) == 0);
        v = mf_meta_get(m, "format");
        CHECK(v && v->type == MF_V_STR && strcmp(v->as.s.ptr, "pt") == 0);
        mf_close(m);
    }
    /* a fill that fails, or writes too little: no output, no temp file */
    const char *out2 = tmp_path("fail.safetensors");
    s.fail_at = 2;
    CHECK(mf_safetensors_write(out2, ts, 5, NULL, 0, fill_from, &s, &st) == -1);
    CHECK(strstr(st.msg, "simulated") != NULL);
    mf_status_clear(&st);
    CHECK(mf_safetensors_write(out2, ts, 2, NULL, 0, fill_short, &s, &st) == -1);
    mf_status_clear(&st);
    CHECK(!mf_path_exists(out2) && count_temp_files("fail.safetensors") == 0);
    /* a failed rewrite leaves the existing file as it was */
    s.fail_at = 0;
    CHECK(mf_safetensors_write(out, ts, 5, meta, 2, fill_from, &s, &st) == -1);
    mf_status_clear(&st);
    CHECK(mf_open(out, NULL, &m, &st) == 0 && m->n_tensors == 5);
    mf_close(m);
    /* dtypes that safetensors cannot hold are refused before writing */
    mf_out_tensor q = {.name = "q", .dtype = MF_Q4_0, .ndim = 1, .shape = {32}};
    CHECK(mf_safetensors_write(out2, &q, 1, NULL, 0, fill_from, &s, &st) == -1 &&
          st.code == MF_ERR_USAGE && !mf_path_exists(out2));
    mf_status_clear(&st);
    mf_arena_free(a);
}

static void test_gguf_roundtrip(void)
{
    static float f[64 * 2];
    static uint8_t q8[2 * 2 * 34]; /* Q8_0 [2, 64]: 2 rows of 2 blocks */
    static uint16_t f16[3] = {0x3c00, 0x4000, 0x4200};
    for (size_t i = 0; i < 128; i++)
        f[i] = (float)i * 0.5f - 7.0f;
    for (size_t i = 0; i < sizeof(q8); i++)
        q8[i] = (uint8_t)(i * 13 + 1);
    const uint8_t *data[] = {(const uint8_t *)f, q8, (const uint8_t *)f16};
    const uint64_t sizes[] = {sizeof(f), sizeof(q8), sizeof(f16)};
    mf_out_tensor ts[3] = {
        {.name = "token_embd.weight", .dtype = MF_F32, .ndim = 2, .shape = {2, 64}},
        {.name = "blk.0.attn_q.weight", .dtype = MF_Q8_0, .ndim = 2, .shape = {2, 64}},
        {.name = "output_norm.weight", .dtype = MF_F16, .ndim = 1, .shape = {3}},
    };
    mf_arena *a = mf_arena_new();
    mf_value tokens = {.type = MF_V_ARR};
    tokens.as.arr.elem = MF_V_STR;
    tokens.as.arr.n = 3;
    tokens.as.arr.items = mf_arena_calloc(a, 3, sizeof(mf_value));
    const char *words[] = {"<s>", "</s>", "héllo"};
    for (int i = 0; i < 3; i++)
        tokens.as.arr.items[i] = mf_value_str(a, words[i], strlen(words[i]));
    mf_value scores = {.type = MF_V_ARR};
    scores.as.arr.elem = MF_V_F32;
    scores.as.arr.n = 2;
    scores.as.arr.items = mf_arena_calloc(a, 2, sizeof(mf_value));
    scores.as.arr.items[0] = (mf_value){.type = MF_V_F32, .as.f = -1.5};
    scores.as.arr.items[1] = (mf_value){.type = MF_V_F32, .as.f = 0.25};
    mf_kv meta[] = {
        {.key = "general.architecture", .v = mf_value_str(a, "llama", 5)},
        {.key = "general.alignment", .v = {.type = MF_V_U32, .as.u = 64}},
        {.key = "llama.block_count", .v = {.type = MF_V_U32, .as.u = 1}},
        {.key = "i8", .v = {.type = MF_V_I8, .as.i = -5}},
        {.key = "u16", .v = {.type = MF_V_U16, .as.u = 65535}},
        {.key = "i64", .v = {.type = MF_V_I64, .as.i = INT64_MIN}},
        {.key = "f64", .v = {.type = MF_V_F64, .as.f = 0.1}},
        {.key = "flag", .v = {.type = MF_V_BOOL, .as.b = true}},
        {.key = "tokenizer.ggml.tokens", .v = tokens},
        {.key = "tokenizer.ggml.scores", .v = scores},
    };
    size_t n_meta = sizeof(meta) / sizeof(meta[0]);
    src s = {data, sizes, -1};
    mf_status st;
    mf_status_init(&st);
    const char *out = tmp_path("rt.gguf");
    CHECKF(mf_gguf_write(out, ts, 3, meta, n_meta, fill_from, &s, &st) == 0, "%s", st.msg);
    mf_model *m = NULL;
    mf_open_opts strict = {.struct_size = sizeof(mf_open_opts), .flags = MF_OPEN_STRICT};
    CHECKF(mf_open(out, &strict, &m, &st) == 0, "%s", st.msg);
    if (m) {
        CHECK(m->format == MF_FMT_GGUF && strcmp(m->version, "3") == 0);
        CHECK(m->n_tensors == 3 && m->n_meta == n_meta && m->n_notes == 0);
        for (size_t i = 0; i < 3; i++) {
            CHECK(strcmp(m->tensors[i].name, ts[i].name) == 0); /* order kept */
            CHECK(m->tensors[i].dtype == ts[i].dtype && m->tensors[i].ndim == ts[i].ndim);
            CHECK(memcmp(m->tensors[i].shape, ts[i].shape, 8 * (size_t)ts[i].ndim) == 0);
            CHECK(m->tensors[i].offset % 64 == 0);
            check_tensor_bytes(m, ts[i].name, data[i], sizes[i]);
        }
        for (size_t i = 0; i < n_meta; i++) {
            CHECK(strcmp(m->meta[i].key, meta[i].key) == 0 && m->meta[i].v.type == meta[i].v.type);
            if (meta[i].v.type == MF_V_STR)
                CHECK(strcmp(m->meta[i].v.as.s.ptr, meta[i].v.as.s.ptr) == 0);
            else if (meta[i].v.type == MF_V_BOOL)
                CHECK(m->meta[i].v.as.b == meta[i].v.as.b);
            else if (meta[i].v.type != MF_V_ARR)
                CHECKF(m->meta[i].v.as.u == meta[i].v.as.u, "%s", meta[i].key);
        }
        const mf_value *tk = mf_meta_get(m, "tokenizer.ggml.tokens");
        CHECK(tk && tk->type == MF_V_ARR && tk->as.arr.elem == MF_V_STR && tk->as.arr.n == 3 &&
              strcmp(tk->as.arr.items[2].as.s.ptr, "héllo") == 0);
        const mf_value *sc = mf_meta_get(m, "tokenizer.ggml.scores");
        CHECK(sc && sc->as.arr.n == 2 && sc->as.arr.items[0].as.f == -1.5 &&
              sc->as.arr.items[1].as.f == 0.25);
        mf_close(m);
    }
    /* refused before any byte is written: a partial block, > 4 dimensions,
     * a type without a ggml id */
    const char *bad = tmp_path("bad.gguf");
    mf_out_tensor b1 = {.name = "x", .dtype = MF_Q4_K, .ndim = 1, .shape = {100}};
    mf_out_tensor b2 = {.name = "x", .dtype = MF_F32, .ndim = 5, .shape = {1, 1, 1, 1, 1}};
    mf_out_tensor b3 = {.name = "x", .dtype = MF_BOOL, .ndim = 1, .shape = {1}};
    CHECK(mf_gguf_write(bad, &b1, 1, NULL, 0, fill_from, &s, &st) == -1);
    CHECK(mf_gguf_write(bad, &b2, 1, NULL, 0, fill_from, &s, &st) == -1);
    CHECK(mf_gguf_write(bad, &b3, 1, NULL, 0, fill_from, &s, &st) == -1);
    mf_status_clear(&st);
    s.fail_at = 1;
    CHECK(mf_gguf_write(bad, ts, 3, meta, n_meta, fill_from, &s, &st) == -1);
    mf_status_clear(&st);
    CHECK(!mf_path_exists(bad) && count_temp_files("bad.gguf") == 0);
    mf_arena_free(a);
}

/* ------------------------------------------------------------ dtype table */

/* ggml's block layouts (ggml-common.h): each size is the sum of its
 * struct's fields, written out so the table is checked, not copied. QK_K =
 * 256, K_SCALE_SIZE = 12; ggml_half = 2 bytes. */
enum { QK_K = 256, HALF = 2, KSCALE = 12 };
static const struct {
    const char *name;
    int id;
    uint32_t blk, bytes;
} ggml_types[] = {
    {"F32", 0, 1, 4},
    {"F16", 1, 1, 2},
    {"Q4_0", 2, 32, HALF + 32 / 2},
    {"Q4_1", 3, 32, 2 * HALF + 32 / 2},
    {"Q5_0", 6, 32, HALF + 4 + 32 / 2},
    {"Q5_1", 7, 32, 2 * HALF + 4 + 32 / 2},
    {"Q8_0", 8, 32, HALF + 32},
    {"Q8_1", 9, 32, 2 * HALF + 32},
    {"Q2_K", 10, QK_K, QK_K / 16 + QK_K / 4 + 2 * HALF},
    {"Q3_K", 11, QK_K, QK_K / 8 + QK_K / 4 + 12 + HALF},
    {"Q4_K", 12, QK_K, 2 * HALF + KSCALE + QK_K / 2},
    {"Q5_K", 13, QK_K, 2 * HALF + KSCALE + QK_K / 8 + QK_K / 2},
    {"Q6_K", 14, QK_K, QK_K / 2 + QK_K / 4 + QK_K / 16 + HALF},
    {"Q8_K", 15, QK_K, 4 + QK_K + QK_K / 16 * 2},
    {"IQ2_XXS", 16, QK_K, HALF + QK_K / 8 * 2},
    {"IQ2_XS", 17, QK_K, HALF + QK_K / 8 * 2 + QK_K / 32},
    {"IQ3_XXS", 18, QK_K, HALF + 3 * (QK_K / 8)},
    {"IQ1_S", 19, QK_K, HALF + QK_K / 8 + QK_K / 16},
    {"IQ4_NL", 20, 32, HALF + 32 / 2},
    {"IQ3_S", 21, QK_K, HALF + QK_K / 4 + QK_K / 32 + QK_K / 8 + QK_K / 64},
    {"IQ2_S", 22, QK_K, HALF + QK_K / 4 + QK_K / 16},
    {"IQ4_XS", 23, QK_K, HALF + 2 + QK_K / 64 + QK_K / 2},
    {"I8", 24, 1, 1},
    {"I16", 25, 1, 2},
    {"I32", 26, 1, 4},
    {"I64", 27, 1, 8},
    {"F64", 28, 1, 8},
    {"IQ1_M", 29, QK_K, QK_K / 8 + QK_K / 16 + QK_K / 32},
    {"BF16", 30, 1, 2},
    {"TQ1_0", 34, QK_K, (QK_K - 4 * QK_K / 64) / 5 + QK_K / 64 + HALF},
    {"TQ2_0", 35, QK_K, QK_K / 4 + HALF},
    {"MXFP4", 39, 32, 1 + 32 / 2},
    /* ggml b10256 (ggml-common.h): block_nvfp4 d[4] qs[32], block_q1_0 d qs[16],
     * block_q2_0 d qs[16] */
    {"NVFP4", 40, 64, 4 + 64 / 2},
    {"Q1_0", 41, 128, HALF + 128 / 8},
    {"Q2_0", 42, 64, HALF + 64 / 4},
};

static void test_dtypes(void)
{
    for (size_t i = 0; i < sizeof(ggml_types) / sizeof(ggml_types[0]); i++) {
        mf_dtype dt = mf_dtype_from_ggml((uint32_t)ggml_types[i].id);
        const mf_dtype_info *di = mf_dtype_info_of(dt);
        CHECKF(di != NULL, "ggml type %d", ggml_types[i].id);
        if (!di)
            continue;
        CHECKF(strcmp(di->name, ggml_types[i].name) == 0 && di->ggml_id == ggml_types[i].id &&
                   di->block_elems == ggml_types[i].blk && di->block_bytes == ggml_types[i].bytes,
               "%s: table says %s id %d, %u elements in %u bytes; ggml: %u in %u",
               ggml_types[i].name, di->name, di->ggml_id, di->block_elems, di->block_bytes,
               ggml_types[i].blk, ggml_types[i].bytes);
        CHECK((int)dt == ggml_types[i].id); /* mf_dtype values < 100 are ggml's ids */
        CHECK(mf_dtype_from_name(ggml_types[i].name) == dt);
        CHECK(di->is_quant == (ggml_types[i].blk > 1));
    }
    /* ids ggml removed (Q4_2, Q4_3, Q4_0_4_4 ...) or never had */
    static const int gone[] = {4, 5, 31, 32, 33, 36, 37, 38, 43, 1000};
    for (size_t i = 0; i < sizeof(gone) / sizeof(gone[0]); i++)
        CHECKF(mf_dtype_from_ggml((uint32_t)gone[i]) == MF_DTYPE_INVALID, "id %d", gone[i]);
    /* safetensors' dtypes (safetensors/src/tensor.rs Dtype::bitsize) */
    static const struct { const char *name; uint32_t bits; } st_types[] = {
        {"BOOL", 8}, {"U8", 8}, {"I8", 8}, {"F8_E5M2", 8}, {"F8_E4M3", 8}, {"F8_E8M0", 8},
        {"I16", 16}, {"U16", 16}, {"F16", 16}, {"BF16", 16}, {"I32", 32}, {"U32", 32},
        {"F32", 32}, {"F64", 64}, {"I64", 64}, {"U64", 64}, {"F4", 4}, {"F6_E2M3", 6},
        {"F6_E3M2", 6}, {"C64", 64}};
    for (size_t i = 0; i < sizeof(st_types) / sizeof(st_types[0]); i++) {
        mf_dtype dt = mf_dtype_from_name(st_types[i].name);
        const mf_dtype_info *di = mf_dtype_info_of(dt);
        CHECKF(di && di->bits == st_types[i].bits && di->block_bytes * 8 ==
                                                           di->block_elems * st_types[i].bits,
               "%s", st_types[i].name);
    }
    CHECK(mf_dtype_from_name("q4_k") == MF_Q4_K); /* ggml's lower case */
    CHECK(mf_dtype_from_name("float32") == MF_DTYPE_INVALID);
    CHECK(mf_dtype_from_name("") == MF_DTYPE_INVALID);
    CHECK(strcmp(mf_dtype_name((mf_dtype)12345), "?") == 0);
}

/* mf_crc32 (PCLMULQDQ folding where the processor has it) equals zlib's
 * crc32 at every length and alignment, chained or not. */
static void test_crc32(void)
{
    enum { N = 1 << 20 };
    uint8_t *b = malloc(N + 64);
    CHECK(b != NULL);
    if (!b)
        return;
    uint32_t x = 12345;
    for (size_t i = 0; i < N + 64; i++)
        b[i] = (uint8_t)((x = x * 1103515245u + 12345u) >> 16);
    int bad = 0;
    for (size_t len = 0; len < 600; len++)
        for (size_t off = 0; off < 20; off += 3)
            bad += mf_crc32(len * 31u, b + off, len) != (uint32_t)crc32(len * 31u, b + off, (uInt)len);
    for (size_t len = N - 70; len <= N; len += 7)
        bad += mf_crc32(7, b + 1, len) != (uint32_t)crc32(7, b + 1, (uInt)len);
    uint32_t c = mf_crc32(0, b, 1000);
    c = mf_crc32(c, b + 1000, N - 1000);
    CHECKF(bad == 0 && c == (uint32_t)crc32(0, b, N), "%d mismatches", bad);
    free(b);
}

/* mf_atomic_copy_runs: runs of a file appended behind buffered bytes, on 1
 * to 8 threads, give the same file, equal to the runs laid end to end; a
 * run past the input's end fails and leaves nothing. Large writes behind
 * buffered bytes (the writev path) keep their order. */
static void test_atomic_runs(void)
{
    mf_status st;
    mf_status_init(&st);
    enum { SRC = 12 << 20 };
    uint8_t *src = malloc(SRC), *want = malloc(SRC + 64), *got = NULL;
    CHECK(src && want);
    if (!src || !want)
        return;
    uint32_t x = 99;
    for (size_t i = 0; i < SRC; i++)
        src[i] = (uint8_t)((x = x * 1103515245u + 12345u) >> 16);
    const char *in = tmp_path("runs.in");
    FILE *f = fopen(in, "wb");
    CHECK(f && fwrite(src, 1, SRC, f) == SRC && fclose(f) == 0);
    int fd = open(in, O_RDONLY);
    CHECK(fd >= 0);
    const mf_copy_run runs[] = {{fd, 5, 3 << 20}, {fd, 7 << 20, (4 << 20) + 3}, {fd, 100, 1},
                                {fd, 0, 0}, {fd, 11 << 20, 1 << 20}};
    size_t at = 0;
    memcpy(want, "head", 4), at = 4;
    for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++)
        memcpy(want + at, src + runs[i].off, runs[i].len), at += runs[i].len;
    memcpy(want + at, "tail", 4), at += 4;
    /* the output beside the input (copy_file_range), then on tmpfs when
     * there is one (another filesystem: sendfile alone, pread + pwrite) */
    char shm[64];
    snprintf(shm, sizeof(shm), "/dev/shm/mfmt-runs-%ld.out", (long)getpid());
    const char *outs[2] = {tmp_path("runs.out"), access("/dev/shm", W_OK) == 0 ? shm : NULL};
    if (!outs[1])
        TL_SKIP("copy runs across filesystems: no writable /dev/shm");
    for (int o = 0; o < 2 && outs[o]; o++)
    for (int threads = 1; threads <= 8; threads *= 2) {
        const char *out = outs[o];
        mf_atomic *w;
        size_t n = 0;
        CHECK(mf_atomic_open(out, &w, &st) == 0);
        CHECK(mf_atomic_write(w, "head", 4, &st) == 0);
        CHECK(mf_atomic_copy_runs(w, runs, sizeof(runs) / sizeof(runs[0]), threads, &st) == 0);
        CHECK(mf_atomic_write(w, "tail", 4, &st) == 0 && mf_atomic_tell(w) == at);
        CHECK(mf_atomic_commit(w, &st) == 0);
        CHECKF(mf_read_small_file(out, SRC + 64, (char **)&got, &n, &st) == 0 && n == at &&
               memcmp(got, want, at) == 0, "%d threads: %zu bytes", threads, n);
        free(got);
        got = NULL;
        unlink(out);
    }
    /* past the end of the input: an error, nothing written */
    const char *out = outs[0];
    const mf_copy_run past = {fd, SRC - 10, 20};
    mf_atomic *w;
    CHECK(mf_atomic_open(out, &w, &st) == 0);
    CHECK(mf_atomic_copy_runs(w, &past, 1, 2, &st) != 0 && st.code == MF_ERR_IO);
    mf_atomic_abort(w);
    mf_status_clear(&st);
    mf_status_init(&st);
    CHECK(!mf_path_exists(out));
    /* 10 bytes, then pieces of 1 MiB + 1, 300 KiB, 2 MiB: the writev path */
    size_t sizes[] = {10, (1 << 20) + 1, 300 << 10, 2 << 20}, n = 0, pos = 0;
    CHECK(mf_atomic_open(out, &w, &st) == 0);
    for (size_t i = 0; i < 4; i++) {
        CHECK(mf_atomic_write(w, src + pos, sizes[i], &st) == 0);
        pos += sizes[i];
    }
    CHECK(mf_atomic_commit(w, &st) == 0);
    CHECK(mf_read_small_file(out, SRC, (char **)&got, &n, &st) == 0 && n == pos &&
          memcmp(got, src, pos) == 0);
    free(got);
    close(fd);
    free(src);
    free(want);
    mf_status_clear(&st);
}

int main(void)
{
    if (!tl_make_tmpdir(tmpdir, sizeof(tmpdir), "core")) {
        return 1;
    }
    test_cursor();
    test_status();
    test_checked_math();
    test_f16();
    test_bf16();
    test_utf8();
    test_arena();
    test_zip(tl_shared_dir());
    test_proto();
    test_atomic();
    test_crc32();
    test_atomic_runs();
    test_safetensors_roundtrip();
    test_gguf_roundtrip();
    test_dtypes();
    tl_remove_tmpdir(tmpdir);
    return tl_report("core");
}
