/* api.c - the accessors of the opaque handles in mfmt.h (mf_model,
 * mf_tensor) and the small public helpers that need no layer above core. */
#include "core/core.h"

#include <stdlib.h>

const char *mf_version(void)
{
    return MF_VERSION_STRING;
}

void mf_free(void *p)
{
    free(p);
}

void mf_open_opts_init(mf_open_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->struct_size = sizeof(*o);
}

/* ---------------------------------------------------------------- model */

mf_format mf_model_format(const mf_model *m) { return m->format; }
const char *mf_model_version(const mf_model *m) { return m->version; }
const char *mf_model_path(const mf_model *m) { return m->path; }
uint64_t mf_model_header_bytes(const mf_model *m) { return m->header_bytes; }
size_t mf_model_meta_count(const mf_model *m) { return m->n_meta; }
size_t mf_model_note_count(const mf_model *m) { return m->n_notes; }
size_t mf_model_tensor_count(const mf_model *m) { return m->n_tensors; }
mf_verdict mf_model_verdict(const mf_model *m) { return m->verdict; }

const mf_kv *mf_model_meta_at(const mf_model *m, size_t i)
{
    return i < m->n_meta ? &m->meta[i] : NULL;
}

const char *mf_model_note_at(const mf_model *m, size_t i)
{
    return i < m->n_notes ? m->notes[i] : NULL;
}

const mf_tensor *mf_model_tensor_at(const mf_model *m, size_t i)
{
    return i < m->n_tensors ? &m->tensors[i] : NULL;
}

/* --------------------------------------------------------------- tensor */

const char *mf_tensor_name(const mf_tensor *t) { return t->name; }
mf_dtype mf_tensor_dtype(const mf_tensor *t) { return t->dtype; }
int mf_tensor_ndim(const mf_tensor *t) { return t->ndim; }
const int64_t *mf_tensor_shape(const mf_tensor *t) { return t->shape; }
const int64_t *mf_tensor_strides(const mf_tensor *t) { return t->strides; }
uint64_t mf_tensor_nbytes(const mf_tensor *t) { return t->nbytes; }
uint64_t mf_tensor_offset(const mf_tensor *t) { return t->offset; }
bool mf_tensor_big_endian(const mf_tensor *t) { return t->big_endian; }

uint64_t mf_tensor_rows(const mf_tensor *t)
{
    return t->ndim > 0 ? (uint64_t)t->shape[0] : 1;
}

const char *mf_tensor_file_path(const mf_model *m, const mf_tensor *t)
{
    const mf_file *f = mf_tensor_file(m, t);
    return f ? f->path : NULL;
}

/* A remote tensor's bytes are fetched before a pointer to them is given. */
static bool tensor_fetched(const mf_tensor *t)
{
    mf_status s;
    mf_status_init(&s);
    int rc = mf_tensor_need(t, &s);
    mf_status_clear(&s);
    return rc == 0;
}

const void *mf_tensor_data(const mf_model *m, const mf_tensor *t)
{
    (void)m;
    if (!t->data || t->strides || t->big_endian || !tensor_fetched(t))
        return NULL; /* (a remote tensor that cannot be fetched: NULL too) */
    return t->data;
}

/* Element 0 in the mapping, strided views too (readers check that every
 * element a view's strides reach lies inside the mapping). */
const void *mf_tensor_mapped(const mf_model *m, const mf_tensor *t)
{
    (void)m;
    return t->data && !t->big_endian && tensor_fetched(t) ? t->data : NULL;
}
