/* report_more.c - mfmt report's memory table (mf_estimate_path at a few
 * context lengths, per KV cache type) and --against ORIGINAL (mf_diff of
 * the original against the model, one tensor pair in memory at a time,
 * summed per tensor and per layer by the library's mf_error_against). */
#include "report.h"

#include <math.h>
#include <stdlib.h>

const char *const report_kv_types[REPORT_N_KV] = {"f16", "q8_0"};

/* Context lengths people ask about (4k, 32k, 128k) and the model's own. */
static const int64_t usual_ctx[] = {4096, 32768, 131072};

static void add_ctx(report_mem *mem, int64_t c)
{
    size_t i = 0;
    while (i < mem->n_rows && mem->rows[i].ctx < c)
        i++;
    if ((i < mem->n_rows && mem->rows[i].ctx == c) || mem->n_rows == REPORT_MAX_CTX)
        return;
    memmove(&mem->rows[i + 1], &mem->rows[i], (mem->n_rows - i) * sizeof(mem->rows[0]));
    mem->rows[i] = (report_mem_row){.ctx = c};
    mem->n_rows++;
}

static int estimate_at(const char *path, int64_t ctx, const char *kv, mf_estimate **e, mf_status *st)
{
    mf_estimate_opts o;
    mf_estimate_opts_init(&o);
    o.ctx = ctx;
    o.kv_type = kv;
    return mf_estimate_path(path, &o, e, st);
}

int report_memory(const char *path, report_mem *mem)
{
    mf_status st;
    mf_status_init(&st);
    mf_estimate *e = NULL;
    int rc = 0;
    if (estimate_at(path, 0, NULL, &e, &st))
        goto why;
    mem->weight_bytes = e->weight_bytes;
    snprintf(mem->weight_type, sizeof(mem->weight_type), "%s", e->weight_type);
    mem->ctx_train = e->ctx_train;
    mf_estimate_free(e);
    for (size_t i = 0; i < sizeof(usual_ctx) / sizeof(usual_ctx[0]); i++)
        add_ctx(mem, usual_ctx[i]);
    if (mem->ctx_train > 0)
        add_ctx(mem, mem->ctx_train);
    for (size_t i = 0; i < mem->n_rows; i++)
        for (size_t k = 0; k < REPORT_N_KV; k++) {
            if (estimate_at(path, mem->rows[i].ctx, report_kv_types[k], &e, &st))
                goto why;
            mem->rows[i].kv[k] = e->kv_bytes;
            mem->rows[i].total[k] = e->total_bytes;
            mf_estimate_free(e);
        }
    mem->done = true;
    goto out;
why: /* not a model the estimate reads: the page says why */
    rc = st.code == MF_ERR_NOMEM ? -1 : 0;
    snprintf(mem->no_estimate, sizeof(mem->no_estimate), "%s", st.msg);
out:
    mf_status_clear(&st);
    return rc;
}

static json_t *json_num(double x)
{
    return isfinite(x) ? json_real(x) : json_null(); /* JSON has no infinity */
}

json_t *report_memory_json(const report_mem *mem)
{
    if (!mem->done)
        return json_pack("{s:s}", "no_estimate", mem->no_estimate);
    json_t *rows = json_array();
    for (size_t i = 0; i < mem->n_rows; i++)
        for (size_t k = 0; k < REPORT_N_KV; k++)
            json_array_append_new(rows, json_pack("{s:I, s:s, s:I, s:I}", "ctx",
                                                  (json_int_t)mem->rows[i].ctx, "kv_type",
                                                  report_kv_types[k], "kv_bytes",
                                                  (json_int_t)mem->rows[i].kv[k], "total_bytes",
                                                  (json_int_t)mem->rows[i].total[k]));
    return json_pack("{s:I, s:s, s:I, s:I, s:o}", "weight_bytes", (json_int_t)mem->weight_bytes,
                     "weight_type", mem->weight_type, "ctx_train", (json_int_t)mem->ctx_train,
                     "batch", (json_int_t)1, "rows", rows);
}

static void bytes_cell(FILE *f, uint64_t b)
{
    char sz[32];
    cli_fmt_bytes(sz, sizeof(sz), b);
    fprintf(f, "<td data-bytes=\"%llu\">%s</td>", (unsigned long long)b, sz);
}

/* One bar per context and KV type: the weights, then the KV cache,
 * scaled to the largest total. */
static void memory_bars(FILE *f, const report_mem *mem)
{
    const double label = 150, bar = 560, h = 14, gap = 4;
    uint64_t maxb = 1;
    for (size_t i = 0; i < mem->n_rows; i++)
        for (size_t k = 0; k < REPORT_N_KV; k++)
            if (mem->rows[i].total[k] > maxb)
                maxb = mem->rows[i].total[k];
    size_t n = mem->n_rows * REPORT_N_KV;
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" role=\"img\" "
               "aria-label=\"memory by context length\" font-size=\"11\" font-family=\"sans-serif\">\n",
            label + bar + 90, (double)n * (h + gap) + gap);
    for (size_t j = 0; j < n; j++) {
        const report_mem_row *r = &mem->rows[j / REPORT_N_KV];
        size_t k = j % REPORT_N_KV;
        double y = gap + (double)j * (h + gap);
        double ww = bar * (double)mem->weight_bytes / (double)maxb;
        double kw = bar * (double)r->kv[k] / (double)maxb;
        char sz[32];
        cli_fmt_bytes(sz, sizeof(sz), r->total[k]);
        fprintf(f, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">ctx %lld, KV %s</text>"
                   "<rect x=\"%.0f\" y=\"%.1f\" width=\"%.2f\" height=\"%.0f\" fill=\"#4e79a7\">"
                   "<title>weights: %llu bytes</title></rect>"
                   "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.0f\" fill=\"#f28e2b\">"
                   "<title>KV cache: %llu bytes</title></rect>"
                   "<text x=\"%.2f\" y=\"%.1f\">%s</text>\n",
                label - 6, y + h - 3, (long long)r->ctx, report_kv_types[k], label, y, ww, h,
                (unsigned long long)mem->weight_bytes, label + ww, y, kw, h,
                (unsigned long long)r->kv[k], label + ww + kw + 6, y + h - 3, sz);
    }
    fputs("</svg>\n", f);
}

void report_memory_html(FILE *f, const report_mem *mem)
{
    fputs("<section id=\"memory\"><h2>Memory to run it: weights + KV cache (batch 1)</h2>\n", f);
    if (!mem->done) {
        fputs("<p>No estimate: ", f);
        report_put_text(f, mem->no_estimate);
        fputs("</p></section>\n", f);
        return;
    }
    char sz[32];
    cli_fmt_bytes(sz, sizeof(sz), mem->weight_bytes);
    fprintf(f, "<p>As <code>mfmt estimate --ctx N --kv-type T</code> computes it. Weights: %s (", sz);
    report_put_text(f, mem->weight_type);
    fprintf(f, "); the model's context length: %lld (longer contexts are marked *).</p>\n"
               "<table><tr><th>context</th>", (long long)mem->ctx_train);
    for (size_t k = 0; k < REPORT_N_KV; k++)
        fprintf(f, "<th>KV cache %s</th><th>total, KV %s</th>", report_kv_types[k], report_kv_types[k]);
    fputs("</tr>\n", f);
    for (size_t i = 0; i < mem->n_rows; i++) {
        const report_mem_row *r = &mem->rows[i];
        fprintf(f, "<tr data-ctx=\"%lld\"><td>%lld%s</td>", (long long)r->ctx, (long long)r->ctx,
                mem->ctx_train > 0 && r->ctx > mem->ctx_train ? " *" : "");
        for (size_t k = 0; k < REPORT_N_KV; k++) {
            bytes_cell(f, r->kv[k]);
            bytes_cell(f, r->total[k]);
        }
        fputs("</tr>\n", f);
    }
    fputs("</table>\n<p class=\"legend\"><span><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"12\" "
          "height=\"12\"><rect width=\"12\" height=\"12\" fill=\"#4e79a7\"/></svg> weights</span> "
          "<span><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"12\" height=\"12\"><rect "
          "width=\"12\" height=\"12\" fill=\"#f28e2b\"/></svg> KV cache</span></p>\n", f);
    memory_bars(f, mem);
    fputs("</section>\n", f);
}

/* ------------------------------------------------------------ --against */

int report_against_run(const char *path, report_against *a)
{
    mf_status st;
    mf_status_init(&st);
    const char *model = cli_input_path(path, &st), *model_copy = NULL, *orig = NULL;
    int rc = EXIT_FINE;
    /* cli_input_path's answer may be overwritten by its next call */
    if (model && !(model_copy = strdup(model)))
        mf_status_fail(&st, MF_ERR_NOMEM, "out of memory");
    if (model_copy)
        orig = cli_input_path(a->path, &st);
    mf_error_opts eo;
    mf_error_opts_init(&eo);
    eo.arch_file = a->arch_file;
    if (!orig || mf_error_against(model_copy, orig, &eo, &a->r, &st))
        rc = cli_report(&st);
    free((void *)model_copy);
    mf_status_clear(&st);
    return rc;
}

void report_against_free(report_against *a)
{
    mf_error_report_free(a->r);
    a->r = NULL;
}

/* The model's dtype; a GGUF read back through the converter is F32 by then
 * (its own types are in the page's type table). */
static const char *model_dtype(const report_against *a, const mf_error_tensor *t)
{
    return a->r->mapped && t->model == MF_F32 ? "dequantized" : mf_dtype_name(t->model);
}

static json_t *acc_json(const mf_error_acc *q)
{
    return json_pack("{s:I, s:I, s:f, s:o, s:o, s:f}", "tensors_compared", (json_int_t)q->tensors,
                     "parameters", (json_int_t)q->n, "rmse", mf_error_rmse(q), "rel_error",
                     json_num(mf_error_rel(q)), "snr_db", json_num(mf_error_snr_db(q)), "cosine",
                     mf_error_cosine(q));
}

json_t *report_against_json(const report_against *a)
{
    const mf_error_report *s = a->r;
    json_t *o = acc_json(&s->all), *layers = json_array(), *tensors = json_array();
    json_object_set_new(o, "original", json_string(a->path));
    json_object_set_new(o, "mapping", json_string(s->mapped ? "converter tables (GGUF -> HF)"
                                                            : "names as they are"));
    json_object_set_new(o, "only_original", json_integer((json_int_t)s->only_original));
    json_object_set_new(o, "only_model", json_integer((json_int_t)s->only_model));
    json_object_set_new(o, "shape_mismatch", json_integer((json_int_t)s->shape_mismatch));
    json_object_set_new(o, "incomparable", json_integer((json_int_t)s->incomparable));
    for (size_t i = 0; i < s->n_layers; i++) {
        json_t *l = acc_json(&s->layers[i].acc);
        json_object_set_new(l, "layer", json_string(s->layers[i].name));
        json_array_append_new(layers, l);
    }
    for (size_t i = 0; i < s->n_tensors; i++) {
        const mf_error_tensor *t = &s->tensors[i];
        mf_error_acc q = {.n = t->n, .sum_sq = t->n * t->rmse * t->rmse,
                      .sum_ref_sq = t->n * t->rms_ref * t->rms_ref};
        json_array_append_new(tensors, json_pack("{s:s, s:s, s:s, s:I, s:f, s:f, s:o, s:o, s:f}",
                                                 "name", t->name, "dtype_original",
                                                 mf_dtype_name(t->original), "dtype_model",
                                                 model_dtype(a, t), "n", (json_int_t)t->n, "rmse", t->rmse,
                                                 "max_abs", t->max_abs, "rel_error",
                                                 json_num(mf_error_rel(&q)), "snr_db",
                                                 json_num(mf_error_snr_db(&q)), "cosine", t->cosine));
    }
    json_object_set_new(o, "layers", layers);
    json_object_set_new(o, "tensors", tensors);
    return o;
}

static void put_snr(FILE *f, double snr)
{
    if (isfinite(snr))
        fprintf(f, "%.2f dB", snr);
    else
        fputs(snr > 0 ? "exact" : "-", f);
}

/* One bar per layer: its SNR in dB (longer is closer to the original),
 * scaled to the largest finite one; an exact layer gets the full bar. */
static void against_bars(FILE *f, const mf_error_report *s)
{
    const double label = 230, bar = 460, h = 16, gap = 4;
    double maxdb = 1;
    for (size_t i = 0; i < s->n_layers; i++) {
        double d = mf_error_snr_db(&s->layers[i].acc);
        if (isfinite(d) && d > maxdb)
            maxdb = d;
    }
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" role=\"img\" "
               "aria-label=\"error per layer\" font-size=\"11\" font-family=\"sans-serif\">\n",
            label + bar + 260, (double)s->n_layers * (h + gap) + gap);
    for (size_t i = 0; i < s->n_layers; i++) {
        const mf_error_layer *l = &s->layers[i];
        double y = gap + (double)i * (h + gap), d = mf_error_snr_db(&l->acc);
        double w = isfinite(d) ? bar * fmax(d, 0) / maxdb : d > 0 ? bar : 0;
        fprintf(f, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">", label - 6, y + h - 4);
        report_put_text(f, l->name);
        fprintf(f, "</text><rect x=\"%.0f\" y=\"%.1f\" width=\"%.2f\" height=\"%.0f\" fill=\"#59a14f\">"
                   "<title>SNR ", label, y, w, h);
        put_snr(f, d);
        fprintf(f, "</title></rect><text x=\"%.2f\" y=\"%.1f\">", label + w + 6, y + h - 4);
        put_snr(f, d);
        fprintf(f, ", rmse %.4g, cosine %.6f</text>\n", mf_error_rmse(&l->acc), mf_error_cosine(&l->acc));
    }
    fputs("</svg>\n", f);
}

static void against_table(FILE *f, const report_against *a)
{
    const mf_error_report *s = a->r;
    fputs("<table class=\"qerr\"><tr><th>tensor</th><th>original</th><th>model</th><th>elements</th>"
          "<th>RMSE</th><th>max |err|</th><th>rel. error</th><th>SNR</th><th>cosine</th></tr>\n", f);
    for (size_t i = 0; i < s->n_tensors; i++) {
        const mf_error_tensor *t = &s->tensors[i];
        mf_error_acc q = {.n = t->n, .sum_sq = t->n * t->rmse * t->rmse,
                      .sum_ref_sq = t->n * t->rms_ref * t->rms_ref};
        fputs("<tr><td>", f);
        report_put_text(f, t->name);
        fprintf(f, "</td><td>%s</td><td>%s</td><td>%.0f</td><td>%.4g</td><td>%.4g</td><td>%.4g</td><td>",
                mf_dtype_name(t->original), model_dtype(a, t), t->n, t->rmse, t->max_abs, mf_error_rel(&q));
        put_snr(f, mf_error_snr_db(&q));
        fprintf(f, "</td><td>%.6f</td></tr>\n", t->cosine);
    }
    fputs("</table>\n", f);
}

void report_against_html(FILE *f, const report_against *a)
{
    const mf_error_report *s = a->r;
    fputs("<section id=\"against\"><h2>Error against the original</h2>\n<p>Original: <code>", f);
    report_put_text(f, a->path);
    fprintf(f, "</code> (%s). %zu tensors compared, %.0f parameters: weighted RMSE %.4g, relative "
               "error %.4g, SNR ",
            s->mapped ? "names through the converter's tables, values dequantized" : "names as they are",
            s->all.tensors, s->all.n, mf_error_rmse(&s->all), mf_error_rel(&s->all));
    put_snr(f, mf_error_snr_db(&s->all));
    fprintf(f, ", mean cosine %.6f.", mf_error_cosine(&s->all));
    if (s->only_original + s->only_model + s->shape_mismatch + s->incomparable)
        fprintf(f, " Not compared: %zu only in the original, %zu only in the model, %zu of another "
                   "shape, %zu not numeric.", s->only_original, s->only_model, s->shape_mismatch,
                s->incomparable);
    fputs("</p>\n<h3>Per layer: signal to noise (longer is closer)</h3>\n", f);
    against_bars(f, s);
    fputs("<h3>Per tensor</h3>\n", f);
    against_table(f, a);
    fputs("</section>\n", f);
}
