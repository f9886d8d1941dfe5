/* fuzz_reader.h - for the harnesses of one reader (ONNX, TFLite, TF): the
 * reader of a given format runs on the file directly (detection bypassed,
 * so every input reaches it), leniently then strictly; what it built is
 * walked and hashed by fuzz_common.h's fuzz_walk_model. */
#ifndef MF_FUZZ_READER_H
#define MF_FUZZ_READER_H
#include "fuzz_common.h"

#include "core/core.h"
#include "formats/formats.h"

/* Writes a file of the scratch directory under its own name. */
static inline int fuzz_write_named(const char *path, const uint8_t *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t k = size ? fwrite(data, 1, size, f) : 0;
    return fclose(f) == 0 && k == size ? 0 : -1;
}

/* `after` (may be NULL) gets each model that opened. */
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
        fuzz_walk_status(&st);
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
#endif
