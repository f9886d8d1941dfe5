/* fuzz_reader.h - shared by the ONNX/TFLite/TF harnesses: write the input
 * to a file, run one reader on it directly (detection bypassed, so every
 * input reaches that reader), then walk and hash what it built. */
#ifndef MF_FUZZ_READER_H
#define MF_FUZZ_READER_H
#include "core/core.h"

#include <stdlib.h>
#include <unistd.h>

static inline int fuzz_write(const char *path, const uint8_t *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t k = size ? fwrite(data, 1, size, f) : 0;
    return fclose(f) == 0 && k == size ? 0 : -1;
}

static inline size_t fuzz_walk_value(const mf_value *v, int depth)
{
    size_t sum = 0;
    if (depth > 64)
        abort();
    if (v->type == MF_V_STR && v->as.s.ptr) {
        for (size_t i = 0; i < v->as.s.len; i++) /* every promised byte is readable */
            sum += (uint8_t)v->as.s.ptr[i];
        if (v->as.s.ptr[v->as.s.len] != 0)
            abort(); /* strings are NUL-terminated at their length */
    } else if (v->type == MF_V_ARR) {
        for (size_t i = 0; i < v->as.arr.n; i++)
            sum += fuzz_walk_value(&v->as.arr.items[i], depth + 1);
    }
    return sum;
}

/* What inspect and hash --tensors do, minus printing; plus the mapping
 * invariant: mapped data lies inside its file, at its offset. */
static inline void fuzz_walk_model(const mf_model *m)
{
    volatile size_t sink = strlen(m->version);
    for (size_t i = 0; i < m->n_meta; i++) {
        sink += strlen(m->meta[i].key);
        sink += fuzz_walk_value(&m->meta[i].v, 0);
    }
    for (size_t i = 0; i < m->n_notes; i++)
        sink += strlen(m->notes[i]);
    for (size_t i = 0; i < m->n_tensors; i++) {
        const mf_tensor *t = &m->tensors[i];
        sink += strlen(t->name);
        if (t->ndim < 0 || t->ndim > MF_MAX_DIMS)
            abort();
        const mf_file *f = mf_tensor_file(m, t);
        if (t->data && (!f || t->offset > f->size || t->nbytes > f->size - t->offset ||
                        t->data != f->base + t->offset))
            abort();
        mf_status ts;
        mf_status_init(&ts);
        char hex[129];
        if (mf_hash_tensor(m, t, MF_SHA256, hex, &ts) == 0)
            sink += strlen(hex);
        else if (!ts.msg[0])
            abort(); /* a failure says why */
        mf_status_clear(&ts);
    }
    (void)sink;
}

/* Opens `path` with the reader of `fmt` (lenient, then strict), walks and
 * hashes what it built; `after` (may be NULL) gets the open model. */
static inline void fuzz_read(const char *path, mf_format fmt, void (*after)(mf_model *))
{
    const mf_reader *r = mf_reader_for(fmt);
    if (!r)
        abort();
    for (unsigned flags = 0; flags <= MF_OPEN_STRICT; flags += MF_OPEN_STRICT) {
        mf_status st;
        mf_status_init(&st);
        mf_model *m = mf_model_new(fmt, path);
        if (!m)
            abort();
        m->reader = r;
        int rc = r->open(m, path, flags, &st);
        if (rc == 0 && st.code == MF_OK) {
            fuzz_walk_model(m);
            if (after)
                after(m);
        } else if (!st.msg[0]) {
            abort(); /* a reader must say why it failed */
        }
        mf_close(m);
        mf_status_clear(&st);
    }
}

static inline const char *fuzz_tmpdir(void)
{
    static char dir[64];
    if (!dir[0]) {
        snprintf(dir, sizeof(dir), "/tmp/mfmt-fuzz-XXXXXX");
        if (!mkdtemp(dir))
            abort();
    }
    return dir;
}
#endif
