/* gguf2hf_view.c - a GGUF read as the Hugging Face directory's tensors
 * mf_convert_to_hf would write, without writing it: the same plan
 * (names, dtypes, shapes transformers loads), each tensor's bytes made by
 * the converter's reverse ops when it is streamed (about one tensor in
 * memory). `diff` and `report --against` compare an HF directory with a
 * GGUF through it; before, they wrote an F32 copy of the whole model in
 * $TMPDIR (four times a Q4 file's size on disk). */
#include "formats/formats.h"
#include "ops/hfconv/arch_file.h"
#include "ops/hfconv/gguf2hf_int.h"

#include <stdlib.h>

static void view_close(mf_model *v)
{
    hfc *c = v->priv;
    if (!c)
        return;
    free(c->items.v);
    free(c->cache);
    conv_arch_file_free(c->arch_file);
    hfc_mm_free(c);
    mf_close(c->m);
    if (c->a)
        mf_arena_free(c->a);
    free(c);
    v->priv = NULL;
}

/* A view's tensor: its item index in t->priv (offset by one: 0 is none). */
static int view_stream(const mf_model *v, const mf_tensor *t, mf_sink_fn sink, void *ctx, mf_status *st)
{
    hfc *c = v->priv;
    size_t i = (size_t)((uintptr_t)t->priv - 1);
    if (!c || i >= c->items.n)
        return mf_fail(st, MF_ERR_USAGE, v->path, -1, "tensor %s is not one of this view's", t->name);
    c->st = st; /* the converter's helpers report through c->st */
    return hfc_fill(c, i, sink, ctx, st);
}

static const mf_reader gguf_hf_view_reader = {
    .format = MF_FMT_HF_DIR,
    .name = "hf-dir",
    .data_only = true,
    .stream = view_stream,
    .close = view_close,
};

static int view_add_items(mf_model *v, const hfc *c, mf_status *st)
{
    for (size_t i = 0; i < c->items.n; i++) {
        const mf_out_tensor *o = &c->items.v[i].out;
        mf_tensor *t = mf_model_add_tensor(v, st);
        if (!t)
            return -1;
        t->name = mf_arena_strdup(v->arena, o->name);
        if (!t->name)
            return mf_oom(st, v->path);
        t->dtype = o->dtype;
        t->ndim = o->ndim;
        for (int d = 0; d < o->ndim; d++)
            t->shape[d] = o->shape[d];
        t->priv = (void *)(uintptr_t)(i + 1);
        if (mf_tensor_set_nbytes(t, v->path, -1, st))
            return -1;
    }
    return 0;
}

int mf_open_gguf_as_hf(const char *in, const mf_convert_hf_opts *opts, mf_model **out, mf_status *st)
{
    MF_ST_GUARD(st);
    *out = NULL;
    mf_convert_hf_opts o;
    mf_convert_hf_opts_init(&o);
    if (mf_opts_copy(&o, sizeof(o), opts, "mf_convert_hf_opts", st))
        return -1;
    if (o.dtype != MF_DTYPE_INVALID && o.dtype != MF_F32 && o.dtype != MF_F16 && o.dtype != MF_BF16)
        return mf_fail(st, MF_ERR_USAGE, in, -1, "the view's dtype is f32, f16 or bf16");
    hfc *c = calloc(1, sizeof(*c));
    mf_model *v = c ? mf_model_new(MF_FMT_HF_DIR, in) : NULL;
    if (!v) {
        free(c);
        return mf_oom(st, in);
    }
    v->reader = &gguf_hf_view_reader;
    v->priv = c;
    c->path = in;
    c->st = st;
    c->opts = o;
    c->opts.progress = NULL;
    int rc = (c->a = mf_arena_new()) ? 0 : mf_oom(st, in);
    if (rc == 0)
        rc = mf_open_model(in, 0, &c->m, st);
    if (rc == 0 && c->m->format != MF_FMT_GGUF)
        rc = mf_fail(st, MF_ERR_USAGE, in, -1, "is %s: only a GGUF is read as a Hugging Face directory",
                     mf_format_name(c->m->format));
    if (rc == 0)
        rc = hfc_prepare(c);
    if (rc == 0)
        rc = view_add_items(v, c, st);
    if (rc == 0)
        snprintf(v->version, sizeof(v->version), "%s", "GGUF read through the converter");
    if (rc) {
        mf_close(v);
        return -1;
    }
    *out = v;
    return 0;
}
