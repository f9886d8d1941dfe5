/* error_against.c - how far a model is from its original (`mfmt report
 * --against`, the summary of `mfmt diff HF_DIR model.gguf`): mf_diff's rows
 * summed per tensor, per layer and for the whole model, each tensor
 * weighted by its element count; an HF directory and a GGUF compared
 * through the converter's tables (the GGUF written back as the directory it
 * came from, every tensor F32, as it streams: mf_open_gguf_as_hf). Moved here from
 * the CLI (cli/qerr.c, cli/report_more.c) so that every binding reaches it. */
#include "core/core.h"

#include <math.h>
#include <stdlib.h>
#include <unistd.h>

static double safe_div(double a, double b)
{
    return b > 0 ? a / b : 0;
}

double mf_error_rmse(const mf_error_acc *a)
{
    return sqrt(safe_div(a->sum_sq, a->n));
}

double mf_error_cosine(const mf_error_acc *a)
{
    return safe_div(a->sum_cos, a->n);
}

double mf_error_rel(const mf_error_acc *a)
{
    return a->sum_ref_sq > 0 ? sqrt(a->sum_sq / a->sum_ref_sq) : 0;
}

double mf_error_snr_db(const mf_error_acc *a)
{
    if (!(a->sum_sq > 0))
        return INFINITY;
    return a->sum_ref_sq > 0 ? 10 * log10(a->sum_ref_sq / a->sum_sq) : -INFINITY;
}

void mf_layer_of(const char *name, char *out, size_t cap)
{
    if (!cap)
        return;
    out[0] = 0;
    for (const char *p = name; *p; p++) {
        if (p != name && p[-1] != '.')
            continue;
        const char *e = p;
        while (*e >= '0' && *e <= '9')
            e++;
        if (e > p && (*e == '.' || !*e)) {
            snprintf(out, cap, "%.*s", (int)(e - name), name);
            return;
        }
    }
}

/* ------------------------------------------------------------ the sums */

static void acc_add(mf_error_acc *a, double n, double rmse, double rms_ref, double cosine)
{
    a->n += n;
    a->sum_sq += n * rmse * rmse;
    a->sum_ref_sq += n * rms_ref * rms_ref;
    a->sum_cos += n * cosine;
    a->tensors++;
}

static mf_error_layer *layer_slot(mf_error_report *r, const char *name)
{
    for (size_t i = 0; i < r->n_layers; i++)
        if (!strcmp(r->layers[i].name, name))
            return &r->layers[i];
    if (r->n_layers == r->cap_layers) {
        size_t cap = r->cap_layers ? 2 * r->cap_layers : 64;
        mf_error_layer *v = realloc(r->layers, cap * sizeof(*v));
        if (!v)
            return NULL;
        r->layers = v;
        r->cap_layers = cap;
    }
    mf_error_layer *l = &r->layers[r->n_layers++];
    memset(l, 0, sizeof(*l));
    snprintf(l->name, sizeof(l->name), "%s", name);
    return l;
}

/* Insertion into the worst list, kept sorted by rmse (largest first). */
static void note_worst(mf_error_report *r, const char *name, double rmse, double cosine)
{
    size_t k = r->n_worst < MF_ERROR_WORST ? r->n_worst++ : MF_ERROR_WORST - 1;
    if (k == MF_ERROR_WORST - 1 && r->n_worst == MF_ERROR_WORST && rmse <= r->worst[k].rmse)
        return;
    while (k > 0 && r->worst[k - 1].rmse < rmse) {
        r->worst[k] = r->worst[k - 1];
        k--;
    }
    snprintf(r->worst[k].name, sizeof(r->worst[k].name), "%s", name);
    r->worst[k].rmse = rmse;
    r->worst[k].cosine = cosine;
}

static int keep_tensor(mf_error_report *r, const mf_diff_row *row, double n, double rmse,
                       double cosine, double rms_ref)
{
    if (r->n_tensors == r->cap_tensors) {
        size_t cap = r->cap_tensors ? 2 * r->cap_tensors : 256;
        mf_error_tensor *v = realloc(r->tensors, cap * sizeof(*v));
        if (!v)
            return -1;
        r->tensors = v;
        r->cap_tensors = cap;
    }
    char *name = strdup(row->name);
    if (!name)
        return -1;
    r->tensors[r->n_tensors++] = (mf_error_tensor){
        .name = name, .original = mf_tensor_dtype(row->a), .model = mf_tensor_dtype(row->b),
        .n = n, .rmse = rmse, .max_abs = row->kind == MF_DIFF_VALUES ? row->max_abs : 0,
        .cosine = cosine, .rms_ref = rms_ref};
    return 0;
}

mf_error_report *mf_error_report_new(bool keep_tensors)
{
    mf_error_report *r = calloc(1, sizeof(*r));
    if (r)
        r->keep_tensors = keep_tensors;
    return r;
}

int mf_error_report_add(mf_error_report *r, const mf_diff_row *row, double rms_same)
{
    switch (row->kind) {
    case MF_DIFF_ONLY_A: r->only_original++; return 0;
    case MF_DIFF_ONLY_B: r->only_model++; return 0;
    case MF_DIFF_SHAPE: r->shape_mismatch++; return 0;
    case MF_DIFF_INCOMPARABLE: r->incomparable++; return 0;
    default: break;
    }
    if (!row->a || !row->b)
        return 0;
    double n = (double)mf_tensor_nelems(row->a);
    bool differ = row->kind == MF_DIFF_VALUES;
    double rmse = differ ? row->rmse : 0, cosine = differ ? row->cosine : 1;
    double rms_ref = row->kind == MF_DIFF_SAME_BYTES ? rms_same : row->rms_a;
    acc_add(&r->all, n, rmse, rms_ref, cosine);
    char layer[128];
    mf_layer_of(row->name, layer, sizeof(layer));
    mf_error_layer *l = layer_slot(r, layer[0] ? layer : "(outside the layers)");
    if (!l)
        return -1;
    acc_add(&l->acc, n, rmse, rms_ref, cosine);
    note_worst(r, row->name, rmse, cosine);
    return r->keep_tensors ? keep_tensor(r, row, n, rmse, cosine, rms_ref) : 0;
}

void mf_error_report_free(mf_error_report *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n_tensors; i++)
        free(r->tensors[i].name);
    free(r->tensors);
    free(r->layers);
    free(r->original);
    free(r);
}

/* -------------------------------------------------- the whole comparison */

void mf_error_opts_init(mf_error_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->struct_size = sizeof(*o);
}

/* The root mean square of a tensor's values (read whole as F32); 0 for a
 * dtype without floats. */
static int tensor_rms(const mf_model *m, const mf_tensor *t, double *rms, mf_status *st)
{
    *rms = 0;
    if (!mf_dtype_to_f32_supported(mf_tensor_dtype(t)))
        return 0;
    void *buf = NULL;
    uint64_t bytes = 0;
    if (mf_tensor_read_alloc(m, t, MF_F32, &buf, &bytes, st))
        return -1;
    const float *x = buf;
    uint64_t n = bytes / sizeof(float);
    double sum = 0;
    for (uint64_t i = 0; i < n; i++)
        sum += (double)x[i] * x[i];
    *rms = n ? sqrt(sum / (double)n) : 0;
    mf_free(buf);
    return 0;
}

typedef struct against_ctx {
    mf_error_report *r;
    const mf_model *original;
    mf_status *st;
} against_ctx;

static int against_row(void *user, const mf_diff_row *row)
{
    against_ctx *c = user;
    double rms = 0; /* equal bytes: mf_diff read no values, the SNR needs A's energy */
    if (row->kind == MF_DIFF_SAME_BYTES && row->a && tensor_rms(c->original, row->a, &rms, c->st))
        return -1;
    if (mf_error_report_add(c->r, row, rms))
        return mf_fail(c->st, MF_ERR_NOMEM, NULL, -1, "out of memory");
    return 0;
}

/* Which side is the GGUF to read back: 1 (the model) when the original is
 * an HF directory and the model a GGUF, 0 for the other way round, -1 otherwise. */
static int gguf_side(const mf_model *original, const mf_model *model)
{
    mf_format fa = mf_model_format(original), fb = mf_model_format(model);
    return fa == MF_FMT_HF_DIR && fb == MF_FMT_GGUF ? 1
         : fa == MF_FMT_GGUF && fb == MF_FMT_HF_DIR ? 0 : -1;
}

int mf_error_against(const char *model, const char *original, const mf_error_opts *opts,
                     mf_error_report **out, mf_status *st)
{
    MF_ST_GUARD(st);
    mf_error_opts o;
    mf_error_opts_init(&o);
    if (mf_opts_copy(&o, sizeof(o), opts, "mf_error_opts", st))
        return -1;
    *out = NULL;
    mf_open_opts oo;
    mf_open_opts_init(&oo);
    oo.flags = o.open_flags | MF_OPEN_NO_SCAN; /* values only: nothing a loader would run */
    mf_model *m = NULL, *ref = NULL;
    mf_error_report *r = mf_error_report_new(true);
    int rc = r ? 0 : mf_oom(st, model);
    if (rc == 0)
        rc = mf_open(model, &oo, &m, st) || mf_open(original, &oo, &ref, st) ? -1 : 0;
    int g = rc == 0 ? gguf_side(ref, m) : -1;
    if (rc == 0 && g < 0 && o.arch_file)
        rc = mf_fail(st, MF_ERR_USAGE, o.arch_file, -1, "an architecture file maps an HF directory against "
                     "a GGUF; %s and %s are not such a pair", model, original);
    if (g >= 0) { /* the GGUF side read through the converter's tables as it streams, F32 */
        mf_model **side = g == 1 ? &m : &ref, *mapped = NULL;
        mf_convert_hf_opts ho;
        mf_convert_hf_opts_init(&ho);
        ho.dtype = MF_F32;
        ho.arch_file = o.arch_file;
        rc = mf_open_gguf_as_hf(g == 1 ? model : original, &ho, &mapped, st);
        if (rc == 0) {
            mf_close(*side);
            *side = mapped;
        }
        r->mapped = true;
    }
    against_ctx c = {r, ref, st};
    if (rc == 0)
        rc = mf_diff(ref, m, against_row, &c, st);
    if (rc == 0 && r->all.tensors == 0)
        rc = mf_fail(st, MF_ERR_FORMAT, model, -1, "no tensor has a counterpart of its shape in %s",
                     original);
    if (rc == 0 && !(r->original = strdup(original)))
        rc = mf_oom(st, model);
    mf_close(m);
    mf_close(ref);
    if (rc) {
        mf_error_report_free(r);
        return -1;
    }
    *out = r;
    return 0;
}
