/* open.c - the open path: detect the format from the bytes, pick its reader
 * from the registry, let it fill a model. It sits above lib/core (which only
 * builds and frees models) because it must know the readers. */
#include "core/core.h"
#include "formats/formats.h"

#include <string.h>

/* The name never decides the format, but when the bytes match nothing, the
 * reader its extension suggests (its `extensions`) says best what is wrong
 * with the file. */
static const mf_reader *reader_hinted_by_name(const char *path)
{
    size_t n = strlen(path);
    const mf_reader *r;
    for (size_t i = 0; (r = mf_reader_at(i)) != NULL; i++)
        for (const char *const *e = r->extensions; e && *e; e++) {
            size_t k = strlen(*e);
            if (n > k && strcmp(path + n - k, *e) == 0)
                return r;
        }
    return NULL;
}

int mf_open_model(const char *path, unsigned flags, mf_model **out, mf_status *st)
{
    return mf_open_model_cfg(path, flags, NULL, out, st);
}

int mf_open_model_cfg(const char *path, unsigned flags, const char *config, mf_model **out,
                      mf_status *st)
{
    *out = NULL;
    mf_detection d;
    if (mf_detect(path, &d, st))
        return -1;
    const mf_reader *r = mf_reader_for(d.format);
    /* a zip whose directory is unreadable: the reader its name suggests
     * (.npz, .pt, .keras) explains the breakage best */
    if (!r && (d.format == MF_FMT_UNKNOWN || d.format == MF_FMT_ZIP) && !mf_is_dir(path)) {
        r = reader_hinted_by_name(path);
        if (r)
            d.format = r->format;
    }
    if (!r) {
        if (d.format == MF_FMT_UNKNOWN)
            return mf_fail(st, MF_ERR_FORMAT, path, -1,
                           "not a model file mfmt knows (%s)", d.detail);
        return mf_fail(st, MF_ERR_UNSUPPORTED, path, -1,
                       "%s files (%s) cannot be read by this version of mfmt",
                       mf_format_name(d.format), d.detail);
    }
    mf_model *m = mf_model_new(d.format, path);
    if (!m)
        return mf_oom(st, path);
    m->reader = r;
    m->config = config;
    int rc = r->open(m, path, flags, st);
    m->config = NULL; /* the caller's string: not kept */
    if (rc == 0 && m->lost_note) /* a warning the reader meant to give was lost */
        rc = mf_oom(st, path);
    if (rc != 0 || st->code != MF_OK) {
        if (st->code == MF_OK) /* a reader must say why; never fail silently */
            mf_fail(st, MF_ERR_FORMAT, path, -1, "could not be read");
        mf_close(m);
        return -1;
    }
    *out = m;
    return 0;
}

mf_model *mf_model_open_child(mf_model *m, const char *path, unsigned flags,
                              mf_status *st)
{
    mf_model *child;
    if (mf_open_model(path, flags, &child, st))
        return NULL;
    if (mf_model_adopt_child(m, child, path, st))
        return NULL;
    return child;
}
