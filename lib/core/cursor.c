/* cursor.c - every read of file bytes goes through a bounds check. */
#include "core/core.h"

void mf_cur_init(mf_cursor *c, const uint8_t *base, uint64_t size,
                 const char *file, mf_status *st)
{
    memset(c, 0, sizeof(*c));
    c->base = base;
    c->size = size;
    c->file = file;
    c->st = st;
}

int mf_cur_fail(mf_cursor *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    mf_failv(c->st, MF_ERR_FORMAT, c->file, (int64_t)mf_cur_off(c), fmt, ap);
    va_end(ap);
    return -1;
}

int mf_cur_need(mf_cursor *c, uint64_t n, const char *what)
{
    if (n <= mf_cur_left(c)) /* in bounds; a remote file fetches them now */
        return mf_source_need(c->base + c->pos, n, c->st);
    return mf_cur_fail(c, "unexpected end of data reading %s (need %llu bytes, %llu left)",
                       what, (unsigned long long)n,
                       (unsigned long long)mf_cur_left(c));
}

int mf_cur_u8(mf_cursor *c, uint8_t *v, const char *what)
{
    if (mf_cur_need(c, 1, what))
        return -1;
    *v = c->base[c->pos++];
    return 0;
}

int mf_cur_u16(mf_cursor *c, uint16_t *v, const char *what)
{
    if (mf_cur_need(c, 2, what))
        return -1;
    const uint8_t *p = c->base + c->pos;
    *v = c->big_endian ? mf_rd16be(p) : mf_rd16le(p);
    c->pos += 2;
    return 0;
}

int mf_cur_u32(mf_cursor *c, uint32_t *v, const char *what)
{
    if (mf_cur_need(c, 4, what))
        return -1;
    const uint8_t *p = c->base + c->pos;
    *v = c->big_endian ? mf_rd32be(p) : mf_rd32le(p);
    c->pos += 4;
    return 0;
}

int mf_cur_u64(mf_cursor *c, uint64_t *v, const char *what)
{
    if (mf_cur_need(c, 8, what))
        return -1;
    const uint8_t *p = c->base + c->pos;
    *v = c->big_endian ? mf_rd64be(p) : mf_rd64le(p);
    c->pos += 8;
    return 0;
}

int mf_cur_bytes(mf_cursor *c, uint64_t n, const uint8_t **p, const char *what)
{
    if (mf_cur_need(c, n, what))
        return -1;
    *p = c->base + c->pos;
    c->pos += n;
    return 0;
}

int mf_cur_skip(mf_cursor *c, uint64_t n, const char *what)
{
    if (mf_cur_need(c, n, what))
        return -1;
    c->pos += n;
    return 0;
}

int mf_cur_seek(mf_cursor *c, uint64_t pos, const char *what)
{
    if (pos > c->size)
        return mf_cur_fail(c, "%s: position %llu is past the end (%llu bytes)",
                           what, (unsigned long long)pos, (unsigned long long)c->size);
    c->pos = pos;
    return 0;
}
