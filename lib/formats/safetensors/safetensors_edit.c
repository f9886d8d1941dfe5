/* safetensors_edit.c - the safetensors reader's rewrite hook: a new JSON
 * header (__metadata__ first, then every tensor with its original
 * data_offsets, renamed where asked), padded with spaces to a multiple of 8
 * as the reference writer does, and the data section copied as bytes. */
#include "formats/safetensors/safetensors.h"
#include "core/json_build.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdlib.h>
#include <unistd.h>

static const char *renamed(const mf_rewrite *rw, const char *name)
{
    for (size_t i = 0; i < rw->n_rename; i++)
        if (!strcmp(rw->rename_from[i], name))
            return rw->rename_to[i];
    return name;
}

/* The format's own rules hold whatever --force says: __metadata__ maps
 * strings to strings, and no tensor may be called __metadata__. */
static int check_edit(const mf_model *m, const mf_rewrite *rw, mf_status *st)
{
    for (size_t i = 0; i < rw->n_meta; i++)
        if (rw->meta[i].v.type != MF_V_STR)
            return mf_fail(st, MF_ERR_USAGE, m->path, -1,
                           "%s: safetensors __metadata__ values are strings (use str: or no type)",
                           rw->meta[i].key);
    for (size_t i = 0; i < rw->n_rename; i++)
        if (!strcmp(rw->rename_to[i], "__metadata__"))
            return mf_fail(st, MF_ERR_USAGE, m->path, -1,
                           "a tensor cannot be named __metadata__ (safetensors rule)");
    if (m->n_files != 1)
        return mf_fail(st, MF_ERR_UNSUPPORTED, m->path, -1,
                       "edit one safetensors file at a time (this model has %zu)", m->n_files);
    return 0;
}

static json_t *tensor_entry(const mf_tensor *t, uint64_t data_start)
{
    json_t *e = json_object(), *shape = json_array(), *offs = json_array();
    json_object_set_new(e, "dtype", json_string(mf_dtype_name(t->dtype)));
    for (int d = 0; d < t->ndim; d++)
        json_array_append_new(shape, json_integer(t->shape[d]));
    json_object_set_new(e, "shape", shape);
    uint64_t rel = t->offset - data_start;
    json_array_append_new(offs, json_integer((json_int_t)rel));
    json_array_append_new(offs, json_integer((json_int_t)(rel + t->nbytes)));
    json_object_set_new(e, "data_offsets", offs);
    return e;
}

static char *header_text(const mf_model *m, const mf_rewrite *rw, uint64_t data_start)
{
    json_t *root = json_object();
    if (rw->n_meta) {
        json_t *md = json_object();
        for (size_t i = 0; i < rw->n_meta; i++)
            json_object_set_new(md, rw->meta[i].key,
                                json_stringn(rw->meta[i].v.as.s.ptr, rw->meta[i].v.as.s.len));
        json_object_set_new(root, "__metadata__", md);
    }
    for (size_t i = 0; i < m->n_tensors; i++)
        json_object_set_new(root, renamed(rw, m->tensors[i].name),
                            tensor_entry(&m->tensors[i], data_start));
    char *text = mf_json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(root);
    return text;
}

int mf_safetensors_rewrite(const mf_model *m, const mf_rewrite *rw, mf_status *st)
{
    if (check_edit(m, rw, st))
        return -1;
    const mf_file *f = &m->files[0];
    uint64_t data_start = 8 + mf_rd64le(f->base); /* the reader checked it */
    char *text = header_text(m, rw, data_start);
    if (!text)
        return mf_oom(st, m->path);
    size_t tl = strlen(text), padded = (tl + 7) & ~(size_t)7;
    *rw->old_header_bytes = data_start;
    *rw->new_header_bytes = 8 + padded;
    *rw->data_bytes = f->size - data_start;
    int rc = 0;
    if (!(rw->flags & MF_EDIT_DRY_RUN)) {
        int fd = open(f->path, O_RDONLY | O_CLOEXEC);
        mf_atomic *w = NULL;
        if (fd < 0)
            rc = mf_fail(st, MF_ERR_IO, f->path, -1, "cannot reopen: %s", strerror(errno));
        if (rc == 0)
            rc = mf_atomic_open(rw->out, &w, st);
        uint8_t len8[8];
        mf_wr64le(len8, padded);
        if (rc == 0)
            rc = mf_atomic_write(w, len8, 8, st);
        if (rc == 0)
            rc = mf_atomic_write(w, text, tl, st);
        for (size_t k = tl; rc == 0 && k < padded; k++)
            rc = mf_atomic_write(w, " ", 1, st);
        if (rc == 0)
            rc = mf_atomic_copy_from(w, fd, data_start, f->size - data_start, st);
        if (w)
            rc = rc == 0 ? mf_atomic_commit(w, st) : (mf_atomic_abort(w), rc);
        if (fd >= 0)
            close(fd);
    }
    free(text);
    return rc;
}
