/* model.c - building, opening and closing the uniform model view. */
#include "core/core.h"

#include <stdlib.h>

typedef struct model_vecs {
    size_t cap_meta, cap_tensors, cap_files, cap_notes;
    mf_model **children;
    size_t n_children, cap_children;
} model_vecs;

/* The vectors' capacities live beside the model, private to this file. */
typedef struct model_box {
    mf_model m;
    model_vecs caps;
} model_box;

mf_model *mf_model_new(mf_format fmt, const char *path)
{
    model_box *b = calloc(1, sizeof(*b));
    if (!b)
        return NULL;
    b->m.format = fmt;
    b->m.verdict = MF_VERDICT_UNKNOWN; /* set by mf_open's scan */
    b->m.arena = mf_arena_new();
    if (!b->m.arena) {
        free(b);
        return NULL;
    }
    b->m.path = mf_arena_strdup(b->m.arena, path);
    if (!b->m.path) { /* every user of a model reads its path (messages, the scan) */
        mf_arena_free(b->m.arena);
        free(b);
        return NULL;
    }
    return &b->m;
}

static model_vecs *caps_of(mf_model *m)
{
    return &((model_box *)m)->caps;
}

int mf_model_add_file(mf_model *m, const char *path, uint32_t *index,
                      mf_status *st)
{
    model_vecs *c = caps_of(m);
    if (m->n_files == c->cap_files &&
        mf_vec_grow((void **)&m->files, &c->cap_files, m->n_files + 1, sizeof(mf_file)))
        return mf_oom(st, path);
    const char *owned = mf_arena_strdup(m->arena, path);
    if (!owned)
        return mf_oom(st, path);
    mf_file f;
    if (mf_map_file(owned, &f, st))
        return -1;
    m->files[m->n_files] = f;
    if (index)
        *index = (uint32_t)m->n_files;
    m->n_files++;
    return 0;
}

mf_tensor *mf_model_add_tensor(mf_model *m, mf_status *st)
{
    model_vecs *c = caps_of(m);
    if (m->n_tensors == c->cap_tensors &&
        mf_vec_grow((void **)&m->tensors, &c->cap_tensors, m->n_tensors + 1,
                    sizeof(mf_tensor))) {
        mf_oom(st, m->path);
        return NULL;
    }
    mf_tensor *t = &m->tensors[m->n_tensors++];
    memset(t, 0, sizeof(*t));
    return t;
}

mf_kv *mf_model_add_meta(mf_model *m, const char *key, mf_status *st)
{
    model_vecs *c = caps_of(m);
    if (m->n_meta == c->cap_meta &&
        mf_vec_grow((void **)&m->meta, &c->cap_meta, m->n_meta + 1, sizeof(mf_kv))) {
        mf_oom(st, m->path);
        return NULL;
    }
    mf_kv *kv = &m->meta[m->n_meta];
    memset(kv, 0, sizeof(*kv));
    kv->key = mf_arena_strdup(m->arena, key);
    if (!kv->key) {
        mf_oom(st, m->path);
        return NULL;
    }
    kv->v.type = MF_V_NULL;
    m->n_meta++;
    return kv;
}

/* A note's level is the byte before its text (NOTE_WARNING or NOTE_INFO),
 * so notes stay plain strings for every reader of m->notes. */
enum { NOTE_WARNING = 'w', NOTE_INFO = 'i' };

static int add_note(mf_model *m, char level, const char *fmt, va_list ap)
{
    model_vecs *c = caps_of(m);
    if (m->n_notes >= 1000)
        return 0;
    if (m->n_notes == c->cap_notes &&
        mf_vec_grow((void **)&m->notes, &c->cap_notes, m->n_notes + 1, sizeof(char *))) {
        m->lost_note = true;
        return -1;
    }
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    char *d = n >= 0 ? mf_arena_alloc(m->arena, (size_t)n + 2) : NULL;
    if (d) {
        d[0] = level;
        vsnprintf(d + 1, (size_t)n + 1, fmt, ap2);
        m->notes[m->n_notes++] = d + 1;
    }
    va_end(ap2);
    if (!d)
        m->lost_note = true;
    return d ? 0 : -1;
}

int mf_model_note(mf_model *m, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = add_note(m, NOTE_WARNING, fmt, ap);
    va_end(ap);
    return rc;
}

int mf_model_info(mf_model *m, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = add_note(m, NOTE_INFO, fmt, ap);
    va_end(ap);
    return rc;
}

bool mf_model_note_is_info(const mf_model *m, size_t i)
{
    return i < m->n_notes && m->notes[i][-1] == NOTE_INFO;
}

const mf_file *mf_tensor_file(const mf_model *m, const mf_tensor *t)
{
    const mf_model *o = t->owner ? t->owner : m;
    return t->file < o->n_files ? &o->files[t->file] : NULL;
}

uint64_t mf_model_file_bytes(const mf_model *m)
{
    uint64_t n = 0;
    for (size_t i = 0; i < m->n_files; i++)
        n += m->files[i].size;
    const model_vecs *c = &((const model_box *)m)->caps;
    for (size_t i = 0; i < c->n_children; i++)
        n += mf_model_file_bytes(c->children[i]);
    return n;
}

size_t mf_model_file_count(const mf_model *m)
{
    size_t n = m->n_files;
    const model_vecs *c = &((const model_box *)m)->caps;
    for (size_t i = 0; i < c->n_children; i++)
        n += mf_model_file_count(c->children[i]);
    return n;
}

int mf_model_adopt_child(mf_model *m, mf_model *child, const char *path,
                         mf_status *st)
{
    model_vecs *c = caps_of(m);
    if (c->n_children == c->cap_children &&
        mf_vec_grow((void **)&c->children, &c->cap_children, c->n_children + 1,
                    sizeof(mf_model *))) {
        mf_close(child);
        return mf_oom(st, path);
    }
    c->children[c->n_children++] = child;
    for (size_t i = 0; i < child->n_tensors; i++) {
        mf_tensor *t = mf_model_add_tensor(m, st);
        if (!t)
            return -1;
        *t = child->tensors[i];
        if (!t->owner)
            t->owner = child;
    }
    for (size_t i = 0; i < child->n_notes; i++) {
        if (mf_model_note_is_info(child, i))
            mf_model_info(m, "%s: %s", path, child->notes[i]);
        else
            mf_model_note(m, "%s: %s", path, child->notes[i]);
    }
    m->header_bytes += child->header_bytes;
    return 0;
}

uint64_t mf_tensor_nelems(const mf_tensor *t)
{
    uint64_t n = 1;
    for (int i = 0; i < t->ndim; i++) {
        if (t->shape[i] < 0 || mf_mul_ovf(n, (uint64_t)t->shape[i], &n))
            return UINT64_MAX;
    }
    return n;
}

int mf_tensor_set_nbytes(mf_tensor *t, const char *file, int64_t off,
                         mf_status *st)
{
    uint64_t n = 1;
    for (int i = 0; i < t->ndim; i++) {
        if (t->shape[i] < 0)
            return mf_fail(st, MF_ERR_FORMAT, file, off,
                           "tensor \"%s\": dimension %d is negative (%lld)",
                           t->name, i, (long long)t->shape[i]);
        if (mf_mul_ovf(n, (uint64_t)t->shape[i], &n))
            return mf_fail(st, MF_ERR_FORMAT, file, off,
                           "tensor \"%s\": element count overflows 64 bits", t->name);
    }
    const mf_dtype_info *di = mf_dtype_info_of(t->dtype);
    if (di && di->ggml_id >= 0 && di->block_elems > 1 && t->ndim > 0 &&
        t->shape[t->ndim - 1] % di->block_elems != 0)
        return mf_fail(st, MF_ERR_FORMAT, file, off,
                       "tensor \"%s\": row length %lld is not a multiple of the %s block (%u)",
                       t->name, (long long)t->shape[t->ndim - 1], di->name,
                       di->block_elems);
    if (mf_dtype_nbytes(t->dtype, n, &t->nbytes))
        return mf_fail(st, MF_ERR_FORMAT, file, off,
                       "tensor \"%s\": byte size of %llu %s elements overflows",
                       t->name, (unsigned long long)n, mf_dtype_name(t->dtype));
    return 0;
}

const mf_value *mf_meta_get(const mf_model *m, const char *key)
{
    for (size_t i = 0; i < m->n_meta; i++)
        if (strcmp(m->meta[i].key, key) == 0)
            return &m->meta[i].v;
    return NULL;
}

/* ------------------------------------------------ metadata values equal */

static bool value_is_float(mf_vtype t)
{
    return t == MF_V_F32 || t == MF_V_F64;
}

static bool scalar_equal(const mf_value *a, const mf_value *b)
{
    switch (a->type) {
    case MF_V_U8: case MF_V_U16: case MF_V_U32: case MF_V_U64:
        return a->as.u == b->as.u;
    case MF_V_I8: case MF_V_I16: case MF_V_I32: case MF_V_I64:
        return a->as.i == b->as.i;
    case MF_V_BOOL:
        return a->as.b == b->as.b;
    case MF_V_STR:
        return a->as.s.len == b->as.s.len && memcmp(a->as.s.ptr, b->as.s.ptr, a->as.s.len) == 0;
    case MF_V_NULL:
        return true;
    default: /* floats: bit for bit, so NaN == the same NaN and 0.0 != -0.0 */
        return value_is_float(a->type) && memcmp(&a->as.f, &b->as.f, sizeof(double)) == 0;
    }
}

/* Arrays nest (GGUF arrays of arrays): an explicit stack of positions keeps
 * the depth a hostile file chooses off the C stack. */
typedef struct value_pair_frame {
    const mf_value *a, *b;
    size_t i;
} value_pair_frame;

static bool arrays_equal(const mf_value *a, const mf_value *b)
{
    value_pair_frame stack[64];
    size_t depth = 0;
    stack[depth++] = (value_pair_frame){a, b, 0};
    while (depth) {
        value_pair_frame *f = &stack[depth - 1];
        if (f->i == 0 && (f->a->as.arr.elem != f->b->as.arr.elem || f->a->as.arr.n != f->b->as.arr.n))
            return false;
        if (f->i == f->a->as.arr.n) {
            depth--;
            continue;
        }
        const mf_value *x = &f->a->as.arr.items[f->i], *y = &f->b->as.arr.items[f->i];
        f->i++;
        if (x->type != y->type)
            return false;
        if (x->type != MF_V_ARR) {
            if (!scalar_equal(x, y))
                return false;
        } else if (depth == sizeof(stack) / sizeof(stack[0])) {
            return false; /* deeper than any reader accepts: not provably equal */
        } else {
            stack[depth++] = (value_pair_frame){x, y, 0};
        }
    }
    return true;
}

bool mf_value_equal(const mf_value *a, const mf_value *b)
{
    if (!a || !b || a->type != b->type)
        return false;
    return a->type == MF_V_ARR ? arrays_equal(a, b) : scalar_equal(a, b);
}

const mf_tensor *mf_tensor_find(const mf_model *m, const char *name)
{
    for (size_t i = 0; i < m->n_tensors; i++)
        if (strcmp(m->tensors[i].name, name) == 0)
            return &m->tensors[i];
    return NULL;
}

mf_value mf_value_str(mf_arena *a, const char *s, size_t n)
{
    mf_value v = {.type = MF_V_STR};
    v.as.s.ptr = mf_arena_strndup(a, s, n);
    v.as.s.len = v.as.s.ptr ? n : 0;
    if (!v.as.s.ptr)
        v.type = MF_V_NULL;
    return v;
}

int mf_model_put_meta(mf_model *m, const char *key, mf_value v, mf_status *st)
{
    if (v.type == MF_V_NULL)
        return mf_oom(st, m->path);
    mf_kv *kv = mf_model_add_meta(m, key, st);
    if (!kv)
        return -1;
    kv->v = v;
    return 0;
}

mf_value mf_value_int(int64_t x)
{
    mf_value v = {.type = MF_V_I64};
    v.as.i = x;
    return v;
}

mf_value mf_value_uint(uint64_t x)
{
    mf_value v = {.type = MF_V_U64};
    v.as.u = x;
    return v;
}

mf_value mf_value_f64(double x)
{
    mf_value v = {.type = MF_V_F64};
    v.as.f = x;
    return v;
}

mf_value mf_value_bool(bool x)
{
    mf_value v = {.type = MF_V_BOOL};
    v.as.b = x;
    return v;
}

void mf_close(mf_model *m)
{
    if (!m)
        return;
    model_vecs *c = caps_of(m);
    for (size_t i = 0; i < c->n_children; i++)
        mf_close(c->children[i]);
    free(c->children);
    if (m->reader && m->reader->close)
        m->reader->close(m);
    for (size_t i = 0; i < m->n_files; i++)
        mf_unmap_file(&m->files[i]);
    free(m->files);
    free(m->tensors);
    free(m->meta);
    free(m->notes);
    mf_model *src = m->view_src_owned; /* MF_OPEN_LOGICAL: the view goes first */
    mf_mem_source *mem = m->mem;
    mf_arena_free(m->arena);
    free((model_box *)m);
    mf_close(src);
    mf_mem_unregister(mem); /* last: the bytes may be the source's own */
}
