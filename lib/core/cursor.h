/* cursor.h - bytes: the bounds-checked cursor, little/big-endian loads and
 * stores, half floats, UTF-8. */
#ifndef MF_CORE_CURSOR_H
#define MF_CORE_CURSOR_H

#include "core/base.h"

/* --------------------------------------------------------------- cursor */
/* Bounds-checked reader over [base, base+size). `origin` is added to every
 * offset reported (a cursor over a member of a zip reports file offsets).
 * On a short read it records "unexpected end of data reading WHAT". */
typedef struct mf_cursor {
    const uint8_t *base;
    uint64_t size, pos, origin;
    const char *file;
    mf_status *st;
    bool big_endian;
} mf_cursor;

void mf_cur_init(mf_cursor *c, const uint8_t *base, uint64_t size,
                 const char *file, mf_status *st);
static inline uint64_t mf_cur_left(const mf_cursor *c) { return c->size - c->pos; }
static inline uint64_t mf_cur_off(const mf_cursor *c) { return c->origin + c->pos; }
int mf_cur_need(mf_cursor *c, uint64_t n, const char *what);
int mf_cur_u8(mf_cursor *c, uint8_t *v, const char *what);
int mf_cur_u16(mf_cursor *c, uint16_t *v, const char *what); /* c->big_endian */
int mf_cur_u32(mf_cursor *c, uint32_t *v, const char *what);
int mf_cur_u64(mf_cursor *c, uint64_t *v, const char *what);
int mf_cur_bytes(mf_cursor *c, uint64_t n, const uint8_t **p, const char *what);
int mf_cur_skip(mf_cursor *c, uint64_t n, const char *what);
int mf_cur_seek(mf_cursor *c, uint64_t pos, const char *what);
/* Fails at the cursor's offset: "FILE: byte OFF: <fmt>". */
int mf_cur_fail(mf_cursor *c, const char *fmt, ...) MF_PRINTF(2, 3);

static inline uint16_t mf_rd16le(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
/* A float's IEEE bits and back (memcpy: no aliasing, no UB). */
static inline uint32_t mf_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
static inline float mf_bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static inline uint32_t mf_rd32le(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t mf_rd64le(const uint8_t *p)
{
    return (uint64_t)mf_rd32le(p) | (uint64_t)mf_rd32le(p + 4) << 32;
}
static inline uint16_t mf_rd16be(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static inline uint32_t mf_rd32be(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}
static inline uint64_t mf_rd64be(const uint8_t *p)
{
    return (uint64_t)mf_rd32be(p) << 32 | (uint64_t)mf_rd32be(p + 4);
}
static inline void mf_wr16le(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static inline void mf_wr32le(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static inline void mf_wr64le(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* ------------------------------------------------------------ half floats */
float mf_f16_to_f32(uint16_t h);
uint16_t mf_f32_to_f16(float f);   /* round to nearest even (numpy, ggml) */
float mf_bf16_to_f32(uint16_t h);
uint16_t mf_f32_to_bf16(float f);  /* round to nearest even, NaN kept quiet */
/* numpy's npy_half conversions (what gguf-py and convert_hf_to_gguf.py
 * compute with): the same but for NaNs, whose payload is kept as is
 * (f16 -> f32: not quieted; f32 -> f16: the top 10 payload bits, never 0). */
float mf_f16_to_f32_numpy(uint16_t h);
uint16_t mf_f32_to_f16_numpy(float f);

/* ------------------------------------------------------------------ UTF-8 */
/* Returns the offset of the first invalid byte, or -1 if all valid. */
int64_t mf_utf8_check(const uint8_t *s, size_t n);
/* Writes code point cp (< 0x110000) as UTF-8 at o (room for 4); returns
 * the bytes written. Surrogates are written as they are (Python's
 * surrogatepass), for the readers that must keep them. */
size_t mf_utf8_put(uint8_t *o, uint32_t cp);

#endif /* MF_CORE_CURSOR_H */
