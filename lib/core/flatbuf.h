/* flatbuf.h - FlatBuffers binary format, read with bounds checks.
 * (flatbuffers.dev, "FlatBuffers internals"): the buffer starts with a
 * uoffset_t (u32) to the root table; a table starts with a soffset_t (i32):
 * its vtable is at table - soffset; a vtable is u16 vtable bytes, u16 table
 * bytes, then one u16 per field id: the field's offset inside the table
 * (0 = absent, default value). References (tables, vectors, strings) are
 * u32 offsets from where they are stored; a vector/string is a u32 count
 * then its elements (a string ends with a NUL that is not counted). */
#ifndef MF_FLATBUF_H
#define MF_FLATBUF_H
#include "core/core.h"

typedef struct mf_fb {
    const uint8_t *base;
    uint64_t size;
    const char *file;
    mf_status *st;
} mf_fb;

typedef struct mf_fb_table {
    uint64_t pos;      /* where the table starts */
    uint64_t vt;       /* where its vtable starts */
    uint16_t vt_size, tsize;
} mf_fb_table;

typedef struct mf_fb_vec {
    uint64_t pos;      /* first element */
    uint32_t n;
    uint32_t elem;     /* bytes per element */
} mf_fb_vec;

/* The root table (its offset at byte 0). */
int mf_fb_root(mf_fb *fb, mf_fb_table *out);
/* The table at `pos`, its vtable checked ("what" names it in errors). */
int mf_fb_table_at(mf_fb *fb, uint64_t pos, const char *what, mf_fb_table *out);
/* Offset of field `id` in the buffer, 0 when absent; `width` bytes of it
 * must lie inside the table. -1 on a breach. */
int64_t mf_fb_field(mf_fb *fb, const mf_fb_table *t, unsigned id, unsigned width,
                    const char *what);
/* Scalars: `def` when absent. */
int mf_fb_u8(mf_fb *fb, const mf_fb_table *t, unsigned id, uint8_t def, uint8_t *out,
             const char *what);
int mf_fb_u32(mf_fb *fb, const mf_fb_table *t, unsigned id, uint32_t def, uint32_t *out,
              const char *what);
int mf_fb_u64(mf_fb *fb, const mf_fb_table *t, unsigned id, uint64_t def, uint64_t *out,
              const char *what);
/* References: *present false when absent. */
int mf_fb_vector(mf_fb *fb, const mf_fb_table *t, unsigned id, uint32_t elem,
                 mf_fb_vec *out, bool *present, const char *what);
int mf_fb_string(mf_fb *fb, const mf_fb_table *t, unsigned id, const char **s,
                 uint32_t *len, const char *what);
int mf_fb_subtable(mf_fb *fb, const mf_fb_table *t, unsigned id, mf_fb_table *out,
                   bool *present, const char *what);
/* Element i of a vector of tables / of strings. */
int mf_fb_vec_table(mf_fb *fb, const mf_fb_vec *v, uint32_t i, mf_fb_table *out,
                    const char *what);
int mf_fb_vec_string(mf_fb *fb, const mf_fb_vec *v, uint32_t i, const char **s,
                     uint32_t *len, const char *what);
static inline const uint8_t *mf_fb_elem(const mf_fb *fb, const mf_fb_vec *v, uint32_t i)
{
    return fb->base + v->pos + (uint64_t)i * v->elem;
}
#endif
