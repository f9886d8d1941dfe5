/* flatbuf.c - bounds-checked FlatBuffers access (see flatbuf.h). */
#include "core/flatbuf.h"

static int fb_fail(mf_fb *fb, uint64_t at, const char *what, const char *rule)
{
    return mf_fail(fb->st, MF_ERR_FORMAT, fb->file, (int64_t)at, "%s: %s", what, rule);
}

int mf_fb_table_at(mf_fb *fb, uint64_t pos, const char *what, mf_fb_table *out)
{
    if (pos > fb->size || fb->size - pos < 4)
        return fb_fail(fb, pos, what, "table offset is past the end of the flatbuffer");
    int32_t so = (int32_t)mf_rd32le(fb->base + pos);
    int64_t vt = (int64_t)pos - (int64_t)so;
    if (vt < 0 || (uint64_t)vt > fb->size - 4)
        return fb_fail(fb, pos, what, "vtable offset points outside the flatbuffer");
    uint16_t vs = mf_rd16le(fb->base + vt), ts = mf_rd16le(fb->base + vt + 2);
    if (vs < 4 || vs % 2 || (uint64_t)vt + vs > fb->size)
        return fb_fail(fb, (uint64_t)vt, what, "vtable size is invalid or past the end");
    if (ts < 4 || pos + ts > fb->size)
        return fb_fail(fb, (uint64_t)vt, what, "table size is invalid or past the end");
    out->pos = pos;
    out->vt = (uint64_t)vt;
    out->vt_size = vs;
    out->tsize = ts;
    return 0;
}

int mf_fb_root(mf_fb *fb, mf_fb_table *out)
{
    if (fb->size < 8)
        return fb_fail(fb, 0, "flatbuffer", "shorter than its root offset and identifier");
    return mf_fb_table_at(fb, mf_rd32le(fb->base), "root table", out);
}

int64_t mf_fb_field(mf_fb *fb, const mf_fb_table *t, unsigned id, unsigned width,
                    const char *what)
{
    uint64_t slot = 4 + 2 * (uint64_t)id;
    if (slot + 2 > t->vt_size)
        return 0; /* beyond the vtable: absent (a newer field) */
    uint16_t off = mf_rd16le(fb->base + t->vt + slot);
    if (off == 0)
        return 0;
    if (off < 4 || (uint64_t)off + width > t->tsize)
        return fb_fail(fb, t->vt + slot, what, "field lies outside its table");
    return (int64_t)(t->pos + off);
}

int mf_fb_u8(mf_fb *fb, const mf_fb_table *t, unsigned id, uint8_t def, uint8_t *out,
             const char *what)
{
    int64_t p = mf_fb_field(fb, t, id, 1, what);
    if (p < 0)
        return -1;
    *out = p ? fb->base[p] : def;
    return 0;
}

int mf_fb_u32(mf_fb *fb, const mf_fb_table *t, unsigned id, uint32_t def, uint32_t *out,
              const char *what)
{
    int64_t p = mf_fb_field(fb, t, id, 4, what);
    if (p < 0)
        return -1;
    *out = p ? mf_rd32le(fb->base + p) : def;
    return 0;
}

int mf_fb_u64(mf_fb *fb, const mf_fb_table *t, unsigned id, uint64_t def, uint64_t *out,
              const char *what)
{
    int64_t p = mf_fb_field(fb, t, id, 8, what);
    if (p < 0)
        return -1;
    *out = p ? mf_rd64le(fb->base + p) : def;
    return 0;
}

/* Follows the u32 offset stored at `at`; the target must leave `need`
 * bytes in the buffer. */
static int follow(mf_fb *fb, uint64_t at, uint64_t need, const char *what, uint64_t *target)
{
    uint64_t to = at + mf_rd32le(fb->base + at);
    if (to > fb->size || fb->size - to < need)
        return fb_fail(fb, at, what, "offset points past the end of the flatbuffer");
    *target = to;
    return 0;
}

static int vector_at(mf_fb *fb, uint64_t at, uint32_t elem, mf_fb_vec *out, const char *what)
{
    uint64_t v;
    if (follow(fb, at, 4, what, &v))
        return -1;
    uint32_t n = mf_rd32le(fb->base + v);
    if ((uint64_t)n * elem > fb->size - v - 4)
        return fb_fail(fb, v, what, "vector length runs past the end of the flatbuffer");
    out->pos = v + 4;
    out->n = n;
    out->elem = elem;
    return 0;
}

int mf_fb_vector(mf_fb *fb, const mf_fb_table *t, unsigned id, uint32_t elem,
                 mf_fb_vec *out, bool *present, const char *what)
{
    memset(out, 0, sizeof(*out));
    out->elem = elem;
    int64_t p = mf_fb_field(fb, t, id, 4, what);
    if (present)
        *present = p > 0;
    if (p <= 0)
        return (int)p;
    return vector_at(fb, (uint64_t)p, elem, out, what);
}

static int string_at(mf_fb *fb, uint64_t at, const char **s, uint32_t *len, const char *what)
{
    mf_fb_vec v;
    if (vector_at(fb, at, 1, &v, what))
        return -1;
    *s = (const char *)fb->base + v.pos;
    *len = v.n;
    return 0;
}

int mf_fb_string(mf_fb *fb, const mf_fb_table *t, unsigned id, const char **s,
                 uint32_t *len, const char *what)
{
    *s = NULL;
    *len = 0;
    int64_t p = mf_fb_field(fb, t, id, 4, what);
    if (p <= 0)
        return (int)p;
    return string_at(fb, (uint64_t)p, s, len, what);
}

int mf_fb_subtable(mf_fb *fb, const mf_fb_table *t, unsigned id, mf_fb_table *out,
                   bool *present, const char *what)
{
    int64_t p = mf_fb_field(fb, t, id, 4, what);
    *present = p > 0;
    if (p <= 0)
        return (int)p;
    uint64_t to;
    if (follow(fb, (uint64_t)p, 4, what, &to))
        return -1;
    return mf_fb_table_at(fb, to, what, out);
}

int mf_fb_vec_table(mf_fb *fb, const mf_fb_vec *v, uint32_t i, mf_fb_table *out,
                    const char *what)
{
    uint64_t to;
    if (follow(fb, v->pos + (uint64_t)i * 4, 4, what, &to))
        return -1;
    return mf_fb_table_at(fb, to, what, out);
}

int mf_fb_vec_string(mf_fb *fb, const mf_fb_vec *v, uint32_t i, const char **s,
                     uint32_t *len, const char *what)
{
    return string_at(fb, v->pos + (uint64_t)i * 4, s, len, what);
}
