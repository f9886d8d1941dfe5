/* pbw.h - a tiny protocol-buffers writer for building test inputs by hand
 * (protobuf.dev encoding: tag = field << 3 | wire type; varints; length-
 * delimited payloads). Messages are built inside out: write the child into
 * its own pbw, then pbw_msg() it into the parent. */
#ifndef MF_TEST_PBW_H
#define MF_TEST_PBW_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct pbw {
    uint8_t *b;
    size_t n, cap;
} pbw;

static inline void pbw_bytes(pbw *w, const void *p, size_t n)
{
    if (w->n + n > w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 256;
        while (cap < w->n + n)
            cap *= 2;
        w->b = realloc(w->b, cap);
        if (!w->b)
            abort();
        w->cap = cap;
    }
    if (n)
        memcpy(w->b + w->n, p, n);
    w->n += n;
}

static inline void pbw_varint(pbw *w, uint64_t v)
{
    uint8_t b[10];
    size_t n = 0;
    do {
        b[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    pbw_bytes(w, b, n);
}

static inline void pbw_tag(pbw *w, unsigned field, unsigned wire)
{
    pbw_varint(w, (uint64_t)field << 3 | wire);
}

static inline void pbw_int(pbw *w, unsigned field, uint64_t v)
{
    pbw_tag(w, field, 0);
    pbw_varint(w, v);
}

static inline void pbw_len(pbw *w, unsigned field, const void *p, size_t n)
{
    pbw_tag(w, field, 2);
    pbw_varint(w, n);
    pbw_bytes(w, p, n);
}

static inline void pbw_str(pbw *w, unsigned field, const char *s)
{
    pbw_len(w, field, s, strlen(s));
}

/* Appends child as a length-delimited field and frees it. */
static inline void pbw_msg(pbw *w, unsigned field, pbw *child)
{
    pbw_len(w, field, child->b, child->n);
    free(child->b);
    memset(child, 0, sizeof(*child));
}

static inline void pbw_fixed32(pbw *w, unsigned field, uint32_t v)
{
    uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    pbw_tag(w, field, 5);
    pbw_bytes(w, b, 4);
}

static inline void pbw_float(pbw *w, unsigned field, float f)
{
    uint32_t v;
    memcpy(&v, &f, 4);
    pbw_fixed32(w, field, v);
}

/* A packed run of varints. */
static inline void pbw_packed(pbw *w, unsigned field, const int64_t *v, size_t n)
{
    pbw p = {0};
    for (size_t i = 0; i < n; i++)
        pbw_varint(&p, (uint64_t)v[i]);
    pbw_msg(w, field, &p);
}

static inline int pbw_save(const pbw *w, const char *path)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t k = fwrite(w->b, 1, w->n, f);
    return fclose(f) == 0 && k == w->n ? 0 : -1;
}

static inline void pbw_free(pbw *w)
{
    free(w->b);
    memset(w, 0, sizeof(*w));
}
#endif
