/* toy.c - a toy format, to prove that adding a format is one folder, one
 * registry line and the format's public id: "TOY1", u32 count, then per
 * tensor u8 name length, name, u32 element count, that many F32 values. */
#include "formats/formats.h"

static int probe_toy(mf_probe *p)
{
    if (p->size >= 8 && memcmp(p->b, "TOY1", 4) == 0)
        return mf_probe_found(p, MF_FMT_TOY, "toy format, %u tensors", mf_rd32le(p->b + 4));
    return MF_PROBE_NO;
}

static int open_toy(mf_model *m, const char *path, unsigned flags, mf_status *st)
{
    (void)flags;
    uint32_t fi, n;
    if (mf_model_add_file(m, path, &fi, st))
        return -1;
    mf_cursor c;
    mf_cur_init(&c, m->files[fi].base, m->files[fi].size, path, st);
    if (mf_cur_skip(&c, 4, "magic") || mf_cur_u32(&c, &n, "tensor count"))
        return -1;
    snprintf(m->version, sizeof(m->version), "toy 1");
    for (uint32_t i = 0; i < n; i++) {
        uint8_t len;
        uint32_t count;
        const uint8_t *name;
        if (mf_cur_u8(&c, &len, "name length") || mf_cur_bytes(&c, len, &name, "name") ||
            mf_cur_u32(&c, &count, "element count"))
            return -1;
        mf_tensor *t = mf_model_add_tensor(m, st);
        if (!t)
            return -1;
        t->name = mf_arena_strndup(m->arena, (const char *)name, len);
        t->dtype = MF_F32;
        t->ndim = 1;
        t->shape[0] = count;
        t->file = fi;
        t->offset = mf_cur_off(&c);
        if (mf_tensor_set_nbytes(t, path, (int64_t)t->offset, st))
            return -1;
        const uint8_t *data;
        if (mf_cur_bytes(&c, t->nbytes, &data, "tensor data"))
            return -1;
        t->data = data;
    }
    if (mf_cur_left(&c))
        return mf_cur_fail(&c, "%llu bytes after the last tensor",
                           (unsigned long long)mf_cur_left(&c));
    return 0;
}

static const char *const toy_extensions[] = {".toy", NULL};

const mf_reader mf_reader_toy = {
    .format = MF_FMT_TOY,
    .name = "toy",
    .extensions = toy_extensions,
    .probe = probe_toy,
    .open = open_toy,
};
