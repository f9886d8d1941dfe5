/* hooks.c - what the operations ask a format, through its reader's optional
 * hooks (core.h, struct mf_reader). A directory model (HF, MLX) lists its
 * weights files' tensors with owner = the child model; where the model's
 * own reader has no hook, its children are asked, each once. */
#include "core/core.h"

/* Calls fn on each distinct child model owning tensors of m, until it
 * returns true. (Children are listed in runs, so a "last seen" check
 * visits each once in practice; a repeat only costs a second question.) */
static bool any_child(const mf_model *m, bool (*fn)(const mf_model *, const void *),
                      const void *arg)
{
    const mf_model *last = NULL;
    for (size_t k = 0; k < m->n_tensors; k++) {
        const mf_model *o = m->tensors[k].owner;
        if (o && o != m && o != last) {
            if (fn(o, arg))
                return true;
            last = o;
        }
    }
    return false;
}

static bool is_mapping_fn(const mf_model *m, const void *path)
{
    return mf_model_is_mapping(m, path);
}

bool mf_model_is_mapping(const mf_model *m, const char *path)
{
    if (m->reader && m->reader->is_mapping && m->reader->is_mapping(m, path))
        return true;
    return any_child(m, is_mapping_fn, path);
}

int mf_model_logical_view_as(const mf_model *m, mf_dtype out, mf_model **view, mf_status *st)
{
    *view = NULL;
    if (m->reader && m->reader->logical_view)
        return m->reader->logical_view(m, out, view, st);
    return 0;
}

int mf_model_print_graph(const mf_model *m, FILE *out, mf_status *st)
{
    if (m->reader && m->reader->print_graph)
        return m->reader->print_graph(m, out, st);
    /* the reader's name is what mf_format_name (lib/formats) says; core
     * asks the reader itself rather than the layer above */
    return mf_fail(st, MF_ERR_USAGE, m->path, -1, "--graph: not an ONNX model (%s)",
                   m->reader && m->reader->name ? m->reader->name : "unknown format");
}

int mf_model_file_runs(const mf_model *m, const mf_tensor *t, mf_file_run **runs, size_t *n,
                       mf_status *st)
{
    const mf_model *o = t->owner ? t->owner : m;
    *runs = NULL;
    *n = 0;
    if (o->reader && o->reader->file_runs)
        return o->reader->file_runs(o, t, runs, n, st);
    return 1;
}
