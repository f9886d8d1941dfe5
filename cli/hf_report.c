/* hf_report.c - the load report of a Hugging Face directory, as text and
 * JSON (see lib/ops/hf_check.c). */
#include "hf_cli.h"

enum { SHOW = 20 }; /* names listed per kind before "... and N more" */

static void list(FILE *f, const char *indent, const char *what, char **v, size_t n)
{
    if (!n)
        return;
    fprintf(f, "%s%s (%zu):\n", indent, what, n);
    for (size_t i = 0; i < n && i < SHOW; i++)
        fprintf(f, "%s  %s\n", indent, v[i]);
    if (n > SHOW)
        fprintf(f, "%s  ... and %zu more\n", indent, n - SHOW);
}

int cli_hf_load_report_text(FILE *f, const mf_model *m, const char *indent, mf_status *st)
{
    if (mf_model_format(m) != MF_FMT_HF_DIR)
        return 0;
    mf_load_report *lr;
    if (mf_hf_load_report(m, &lr, st))
        return -1;
    const mf_load_report r = *lr;
    if (r.quant_method[0]) {
        fprintf(f, "%squantized (%s): transformers loads it with %s; needs %s\n", indent,
                r.quant_method, r.quantizer ? r.quantizer : "no quantizer mfmt knows",
                r.requires ? r.requires : "?");
        list(f, indent, "  kept unquantized", r.not_converted, r.n_not_converted);
    }
    if (!r.arch) {
        fprintf(f, "%sload report: not made: %s\n", indent, r.why_not);
        mf_load_report_free(lr);
        return 0;
    }
    fprintf(f, "%sload report (%s%s): %zu of %zu expected tensors present, %zu missing, "
               "%zu unexpected, %zu shape-mismatched\n", indent, r.arch,
            r.tied ? ", tied embeddings" : "", r.n_expected - r.n_missing, r.n_expected,
            r.n_missing, r.n_unexpected, r.n_mismatched);
    list(f, indent, "  missing", r.missing, r.n_missing);
    list(f, indent, "  shape-mismatched", r.mismatched, r.n_mismatched);
    list(f, indent, "  unexpected", r.unexpected, r.n_unexpected);
    int problems = (int)(r.n_missing + r.n_mismatched);
    mf_load_report_free(lr);
    return problems;
}

static json_t *names(char **v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, json_string(v[i]));
    return a;
}

json_t *cli_hf_load_report_json(const mf_model *m, mf_status *st)
{
    if (mf_model_format(m) != MF_FMT_HF_DIR)
        return NULL;
    mf_load_report *lr;
    if (mf_hf_load_report(m, &lr, st))
        return NULL;
    const mf_load_report r = *lr;
    json_t *o = json_object();
    if (r.quant_method[0]) {
        json_t *q = json_object();
        json_object_set_new(q, "method", json_string(r.quant_method));
        json_object_set_new(q, "quantizer", r.quantizer ? json_string(r.quantizer) : json_null());
        json_object_set_new(q, "requires", r.requires ? json_string(r.requires) : json_null());
        json_object_set_new(q, "not_converted", names(r.not_converted, r.n_not_converted));
        json_object_set_new(o, "quantization", q);
    }
    json_object_set_new(o, "checked", json_boolean(r.arch != NULL));
    if (!r.arch) {
        json_object_set_new(o, "why_not", json_string(r.why_not));
    } else {
        json_object_set_new(o, "arch", json_string(r.arch));
        json_object_set_new(o, "tied_embeddings", json_boolean(r.tied));
        json_object_set_new(o, "expected", json_integer((json_int_t)r.n_expected));
        json_object_set_new(o, "missing", names(r.missing, r.n_missing));
        json_object_set_new(o, "unexpected", names(r.unexpected, r.n_unexpected));
        json_object_set_new(o, "mismatched", names(r.mismatched, r.n_mismatched));
        json_object_set_new(o, "ok", json_boolean(!r.n_missing && !r.n_mismatched));
    }
    mf_load_report_free(lr);
    return o;
}
