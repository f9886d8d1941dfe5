/* qerr.c - a model's error against its original, summed per tensor, per
 * layer and for the model (qerr.h). */
#include "qerr.h"
#include "hf_cli.h"

#include <math.h>
#include <stdlib.h>
#include <unistd.h>

static double safe_div(double a, double b)
{
    return b > 0 ? a / b : 0;
}

double qerr_rmse(const qerr_acc *a)
{
    return sqrt(safe_div(a->sum_sq, a->n));
}

double qerr_cosine(const qerr_acc *a)
{
    return safe_div(a->sum_cos, a->n);
}

double qerr_rel(const qerr_acc *a)
{
    return a->sum_ref_sq > 0 ? sqrt(a->sum_sq / a->sum_ref_sq) : 0;
}

double qerr_snr_db(const qerr_acc *a)
{
    if (!(a->sum_sq > 0))
        return INFINITY;
    return a->sum_ref_sq > 0 ? 10 * log10(a->sum_ref_sq / a->sum_sq) : -INFINITY;
}

static void acc_add(qerr_acc *a, double n, double rmse, double rms_ref, double cosine)
{
    a->n += n;
    a->sum_sq += n * rmse * rmse;
    a->sum_ref_sq += n * rms_ref * rms_ref;
    a->sum_cos += n * cosine;
    a->tensors++;
}

static qerr_layer *layer_slot(qerr_sum *s, const char *name)
{
    for (size_t i = 0; i < s->n_layers; i++)
        if (!strcmp(s->layers[i].name, name))
            return &s->layers[i];
    if (s->n_layers == s->cap_layers) {
        size_t cap = s->cap_layers ? 2 * s->cap_layers : 64;
        qerr_layer *v = realloc(s->layers, cap * sizeof(*v));
        if (!v)
            return NULL;
        s->layers = v;
        s->cap_layers = cap;
    }
    qerr_layer *l = &s->layers[s->n_layers++];
    memset(l, 0, sizeof(*l));
    snprintf(l->name, sizeof(l->name), "%s", name);
    return l;
}

/* Insertion into the worst list, kept sorted by rmse (largest first). */
static void note_worst(qerr_sum *s, const char *name, double rmse, double cosine)
{
    size_t k = s->n_worst < QERR_WORST ? s->n_worst++ : QERR_WORST - 1;
    if (k == QERR_WORST - 1 && s->n_worst == QERR_WORST && rmse <= s->worst[k].rmse)
        return;
    while (k > 0 && s->worst[k - 1].rmse < rmse) {
        s->worst[k] = s->worst[k - 1];
        k--;
    }
    snprintf(s->worst[k].name, sizeof(s->worst[k].name), "%s", name);
    s->worst[k].rmse = rmse;
    s->worst[k].cosine = cosine;
}

static int keep_tensor(qerr_sum *s, const mf_diff_row *r, double n, double rmse, double cosine,
                       double rms_ref)
{
    if (s->n_tensors == s->cap_tensors) {
        size_t cap = s->cap_tensors ? 2 * s->cap_tensors : 256;
        qerr_tensor *v = realloc(s->tensors, cap * sizeof(*v));
        if (!v)
            return -1;
        s->tensors = v;
        s->cap_tensors = cap;
    }
    char *name = strdup(r->name);
    if (!name)
        return -1;
    s->tensors[s->n_tensors++] = (qerr_tensor){
        .name = name, .ref = mf_tensor_dtype(r->a), .model = mf_tensor_dtype(r->b), .n = n,
        .rmse = rmse, .max_abs = r->kind == MF_DIFF_VALUES ? r->max_abs : 0, .cosine = cosine,
        .rms_ref = rms_ref};
    return 0;
}

int qerr_add(qerr_sum *s, const mf_diff_row *r, double rms_same)
{
    if (!r->a || !r->b || (r->kind != MF_DIFF_SAME_BYTES && r->kind != MF_DIFF_SAME_VALUES &&
                           r->kind != MF_DIFF_VALUES))
        return 0;
    double n = (double)mf_tensor_nelems(r->a);
    bool differ = r->kind == MF_DIFF_VALUES;
    double rmse = differ ? r->rmse : 0, cosine = differ ? r->cosine : 1;
    double rms_ref = r->kind == MF_DIFF_SAME_BYTES ? rms_same : r->rms_a;
    acc_add(&s->all, n, rmse, rms_ref, cosine);
    char layer[128];
    cli_layer_of(r->name, layer, sizeof(layer));
    qerr_layer *l = layer_slot(s, layer[0] ? layer : "(outside the layers)");
    if (!l)
        return -1;
    acc_add(&l->acc, n, rmse, rms_ref, cosine);
    note_worst(s, r->name, rmse, cosine);
    return s->keep_tensors ? keep_tensor(s, r, n, rmse, cosine, rms_ref) : 0;
}

void qerr_free(qerr_sum *s)
{
    for (size_t i = 0; i < s->n_tensors; i++)
        free(s->tensors[i].name);
    free(s->tensors);
    free(s->layers);
    memset(s, 0, sizeof(*s));
}

int qerr_tensor_rms(const mf_model *m, const mf_tensor *t, double *rms, mf_status *st)
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

int qerr_gguf_side(const mf_model *a, const mf_model *b)
{
    mf_format fa = mf_model_format(a), fb = mf_model_format(b);
    return fa == MF_FMT_HF_DIR && fb == MF_FMT_GGUF ? 1 : fa == MF_FMT_GGUF && fb == MF_FMT_HF_DIR ? 0 : -1;
}

int qerr_map_gguf_side(const char *path, const char *arch_file, mf_model **side, mf_status *st)
{
    mf_convert_hf_opts o;
    mf_convert_hf_opts_init(&o);
    o.dtype = MF_F32;
    o.arch_file = arch_file;
    mf_model *m = NULL;
    if (mf_open_gguf_as_hf(path, &o, &m, st))
        return -1;
    mf_close(*side);
    *side = m;
    return 0;
}
