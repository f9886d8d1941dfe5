/* pickle_reader.c - a plain pickle file: the numpy arrays it holds as
 * tensors (their bytes are inside the pickle), torch tensors when their
 * storages are reachable (they are not, in a lone data.pkl), every scalar
 * value as metadata. A pickle whose first value is torch's legacy magic
 * number is a legacy torch.save stream, however the number is spelled. */
#include "formats/formats.h"
#include "formats/pickle/pytorch.h"

int pt_legacy_read(mf_model *m, unsigned flags, mf_status *st);

static int open_pickle(mf_model *m, const char *path, unsigned flags, mf_status *st)
{
    uint32_t fi;
    if (mf_model_add_file(m, path, &fi, st))
        return -1;
    const mf_file *f = &m->files[fi];
    pt_model_info *info = pt_info(m);
    pt_flagged *nm = info ? mf_arena_alloc(m->arena, sizeof(*nm)) : NULL;
    if (!nm)
        return mf_oom(st, path);
    pk_opts po = {.file = f->path, .on_global = pt_on_global, .ctx = nm};
    info->pm = pk_new(&po);
    if (!info->pm)
        return mf_oom(st, path);
    pk_obj *root;
    size_t used;
    if (pk_load(info->pm, f->base, (size_t)f->size, &root, &used, NULL, st))
        return -1;
    if (pt_is_legacy_magic(root))
        return pt_legacy_read(m, flags, st);
    snprintf(m->version, sizeof(m->version), "pickle");
    m->header_bytes += used;
    if (used < f->size)
        mf_model_note(m, "%llu bytes follow the pickle's STOP (pickle.load reads only the "
                         "first pickle; `mfmt scan` looks at them)",
                      (unsigned long long)(f->size - used));
    pt_tree_opts to = {.file = f->path, .file_index = fi, .pickle_base = f->base,
                       .pickle_size = f->size, .objects = pk_objects(info->pm), .info = info};
    if (pt_tree_collect(m, root, &to, st))
        return -1;
    pt_note_flagged(m, nm, "the pickle");
    return mf_ok(st) ? 0 : -1;
}

/* ------------------------------------------------------------- detection */

static int probe_pickle(mf_probe *p)
{
    if (p->size < 2)
        return MF_PROBE_NO;
    if (p->b[0] == 0x80 && p->b[1] >= 2 && p->b[1] <= 5)
        return mf_probe_found(p, MF_FMT_PICKLE, "pickle protocol %u", p->b[1]);
    /* protocol 0/1: a plausible first opcode and a STOP ('.') at the end */
    static const char first_ops[] = "(}]).cKJMNFGIVXU\x80q";
    if (strchr(first_ops, p->b[0]) && p->b[0] && p->b[p->size - 1] == '.')
        return mf_probe_found(p, MF_FMT_PICKLE, "pickle protocol 0/1");
    return MF_PROBE_NO;
}

const mf_reader mf_reader_pickle = {
    .format = MF_FMT_PICKLE,
    .name = "pickle",
    .probe = probe_pickle,
    .open = open_pickle,
    .stream = pt_stream,
    .close = pt_close,
    .is_mapping = mf_pytorch_is_mapping,
};
