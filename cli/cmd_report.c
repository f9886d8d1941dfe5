/* cmd_report.c - mfmt report MODEL -o report.html: one self-contained HTML
 * page of what people otherwise read from long listings: the summary
 * (format, architecture, parameters, size, bits per weight, tokenizer,
 * template), the tensor types, per-layer bars of bytes by type and of bits
 * per weight (inline SVG), the scan verdict with its findings, and the
 * hashes. No script, no style sheet or font from elsewhere, no network: the
 * page is the file. Written atomically (mf_atomic). Well-formed as XML too
 * (tests/check_cli.sh parses it). */
#include "report.h"

#include <stdlib.h>
#include <sys/stat.h>

enum { MAX_TYPES = REPORT_MAX_TYPES };

typedef struct layer_row {
    char name[128];
    uint64_t bytes[MAX_TYPES];
    double params;
} layer_row;

typedef struct report {
    FILE *f;
    const char *path;
    mf_model *m;
    mf_dtype types[MAX_TYPES];
    uint64_t type_bytes[MAX_TYPES];
    double type_params[MAX_TYPES];
    size_t n_types;
    layer_row *layers;
    size_t n_layers;
    double params;
    uint64_t tensor_bytes;
    mf_verdict verdict;
    json_t *findings; /* [{file, severity, text}] */
    bool scanned;
    report_mem mem;
    report_against against; /* .path NULL: no --against */
} report;

/* Text as HTML (and XML) character data or attribute value. */
void report_put_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default:
            if ((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t')
                fputc('?', f); /* control characters are not XML */
            else
                fputc(*s, f);
        }
    }
}

/* A fixed colour per type slot (a palette that stays apart for the mixes
 * people meet: F32 norms, F16/BF16, Q4_K/Q6_K/Q8_0 ...). */
static const char *colour(size_t i)
{
    static const char *const pal[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                      "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
    return pal[i % (sizeof(pal) / sizeof(pal[0]))];
}

static size_t type_slot(report *r, mf_dtype d)
{
    for (size_t i = 0; i < r->n_types; i++)
        if (r->types[i] == d)
            return i;
    if (r->n_types == MAX_TYPES)
        return MAX_TYPES - 1;
    r->types[r->n_types] = d;
    return r->n_types++;
}

static layer_row *layer_slot(report *r, const char *name)
{
    for (size_t i = 0; i < r->n_layers; i++)
        if (!strcmp(r->layers[i].name, name))
            return &r->layers[i];
    layer_row *v = realloc(r->layers, (r->n_layers + 1) * sizeof(*v));
    if (!v)
        return NULL;
    r->layers = v;
    layer_row *l = &v[r->n_layers++];
    memset(l, 0, sizeof(*l));
    snprintf(l->name, sizeof(l->name), "%s", name);
    return l;
}

static int tally(report *r)
{
    for (size_t i = 0; i < mf_model_tensor_count(r->m); i++) {
        const mf_tensor *t = mf_model_tensor_at(r->m, i);
        double n = 1;
        for (int d = 0; d < mf_tensor_ndim(t); d++)
            n *= (double)mf_tensor_shape(t)[d];
        uint64_t b = mf_tensor_nbytes(t);
        size_t k = type_slot(r, mf_tensor_dtype(t));
        r->type_bytes[k] += b;
        r->type_params[k] += n;
        r->params += n;
        r->tensor_bytes += b;
        char layer[128];
        mf_layer_of(mf_tensor_name(t), layer, sizeof(layer));
        layer_row *l = layer_slot(r, layer[0] ? layer : "(outside the layers)");
        if (!l)
            return -1;
        l->bytes[k] += b;
        l->params += n;
    }
    return 0;
}

static int on_scan(void *ctx, const mf_scan_report *s)
{
    report *r = ctx;
    if (s->verdict > r->verdict)
        r->verdict = s->verdict;
    for (size_t i = 0; i < s->n_findings && json_array_size(r->findings) < 200; i++) {
        const mf_finding *f = &s->findings[i];
        if (f->severity == MF_VERDICT_SAFE)
            continue;
        char text[1600];
        snprintf(text, sizeof(text), "%s%s%s%s%s", f->member, f->member[0] ? ": " : "",
                 f->global ? f->global : "", f->global ? ": " : "", f->message);
        json_array_append_new(r->findings, json_pack("{s:s, s:s, s:s}", "file", s->path, "severity",
                                                     mf_verdict_name(f->severity), "text", text));
    }
    return 0;
}

static const char *meta_str(const mf_model *m, const char *const *keys)
{
    for (; *keys; keys++) {
        const mf_value *v = mf_meta_get(m, *keys);
        if (v && v->type == MF_V_STR)
            return v->as.s.ptr;
    }
    return NULL;
}

static bool meta_has(const mf_model *m, const char *const *keys)
{
    for (; *keys; keys++)
        if (mf_meta_get(m, *keys))
            return true;
    return false;
}

static void row(FILE *f, const char *k, const char *v)
{
    fputs("<tr><th>", f);
    report_put_text(f, k);
    fputs("</th><td>", f);
    report_put_text(f, v);
    fputs("</td></tr>\n", f);
}

static void summary(report *r, const char *file_hash, const char *content_hash)
{
    static const char *const arch_keys[] = {"general.architecture", "config.model_type", NULL};
    static const char *const tok_keys[] = {"tokenizer.ggml.tokens", "tokenizer.ggml.model",
                                           "tokenizer.kind", "tokenizer.files", NULL};
    static const char *const tpl_keys[] = {"tokenizer.chat_template", "chat_template", NULL};
    FILE *f = r->f;
    char buf[256], sz[32];
    fputs("<section id=\"summary\"><h2>Summary</h2><table>\n", f);
    row(f, "path", r->path);
    snprintf(buf, sizeof(buf), "%s%s%s", mf_format_name(mf_model_format(r->m)),
             cli_version_text(r->m)[0] ? ", " : "", cli_version_text(r->m));
    row(f, "format", buf);
    const char *arch = meta_str(r->m, arch_keys);
    row(f, "architecture", arch ? arch : "(not recorded)");
    snprintf(buf, sizeof(buf), "%zu", mf_model_tensor_count(r->m));
    row(f, "tensors", buf);
    snprintf(buf, sizeof(buf), "%.0f", r->params);
    row(f, "parameters", buf);
    cli_fmt_bytes(sz, sizeof(sz), mf_model_file_bytes(r->m));
    snprintf(buf, sizeof(buf), "%s in %zu file%s", sz, mf_model_file_count(r->m),
             mf_model_file_count(r->m) == 1 ? "" : "s");
    row(f, "size", buf);
    snprintf(buf, sizeof(buf), "%.3f (file), %.3f (tensor data)",
             r->params > 0 ? 8.0 * (double)mf_model_file_bytes(r->m) / r->params : 0,
             r->params > 0 ? 8.0 * (double)r->tensor_bytes / r->params : 0);
    row(f, "bits per weight", buf);
    row(f, "tokenizer", meta_has(r->m, tok_keys) ? "yes" : "no");
    row(f, "chat template", meta_has(r->m, tpl_keys) ? "yes" : "no");
    row(f, "scan verdict", r->scanned ? mf_verdict_name(r->verdict) : "not scanned (--no-scan)");
    if (file_hash)
        row(f, "sha256 (file)", file_hash);
    if (content_hash)
        row(f, "sha256 (tensor content)", content_hash);
    fputs("</table></section>\n", f);
}

static void legend(report *r)
{
    FILE *f = r->f;
    fputs("<p class=\"legend\">", f);
    for (size_t i = 0; i < r->n_types; i++) {
        fprintf(f, "<span><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"12\" height=\"12\">"
                   "<rect width=\"12\" height=\"12\" fill=\"%s\"/></svg> ", colour(i));
        report_put_text(f, mf_dtype_name(r->types[i]));
        fputs("</span> ", f);
    }
    fputs("</p>\n", f);
}

/* The whole model's bytes by type: one stacked bar and a table. */
static void types_section(report *r)
{
    FILE *f = r->f;
    const double w = 800;
    fputs("<section id=\"types\"><h2>Tensor types</h2>\n", f);
    legend(r);
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"28\" role=\"img\" "
               "aria-label=\"bytes by tensor type\">", w);
    double x = 0;
    for (size_t i = 0; i < r->n_types; i++) {
        double bw = r->tensor_bytes ? w * (double)r->type_bytes[i] / (double)r->tensor_bytes : 0;
        fprintf(f, "<rect x=\"%.2f\" y=\"0\" width=\"%.2f\" height=\"28\" fill=\"%s\"><title>", x, bw,
                colour(i));
        report_put_text(f, mf_dtype_name(r->types[i]));
        fputs("</title></rect>", f);
        x += bw;
    }
    fputs("</svg>\n<table><tr><th>type</th><th>bytes</th><th>share of bytes</th>"
          "<th>share of parameters</th></tr>\n", f);
    for (size_t i = 0; i < r->n_types; i++) {
        char sz[32];
        cli_fmt_bytes(sz, sizeof(sz), r->type_bytes[i]);
        fprintf(f, "<tr><td>%s</td><td>%s</td><td>%.1f%%</td><td>%.1f%%</td></tr>\n",
                mf_dtype_name(r->types[i]), sz,
                r->tensor_bytes ? 100.0 * (double)r->type_bytes[i] / (double)r->tensor_bytes : 0,
                r->params ? 100.0 * r->type_params[i] / r->params : 0);
    }
    fputs("</table></section>\n", f);
}

/* One row per layer: its bytes by type (bars scaled to the largest
 * layer) and its bits per weight. */
static void layers_section(report *r)
{
    FILE *f = r->f;
    const double label = 230, bar = 520, h = 16, gap = 4;
    uint64_t maxb = 1;
    for (size_t i = 0; i < r->n_layers; i++) {
        uint64_t b = 0;
        for (size_t k = 0; k < r->n_types; k++)
            b += r->layers[i].bytes[k];
        if (b > maxb)
            maxb = b;
    }
    double height = (double)r->n_layers * (h + gap) + gap;
    fputs("<section id=\"layers\"><h2>Per layer: bytes by type, bits per weight</h2>\n", f);
    legend(r);
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
               "role=\"img\" aria-label=\"bytes by type per layer\" font-size=\"11\" "
               "font-family=\"sans-serif\">\n", label + bar + 110, height);
    for (size_t i = 0; i < r->n_layers; i++) {
        const layer_row *l = &r->layers[i];
        double y = gap + (double)i * (h + gap), x = label;
        uint64_t total = 0;
        fprintf(f, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">", label - 6, y + h - 4);
        report_put_text(f, l->name);
        fputs("</text>", f);
        for (size_t k = 0; k < r->n_types; k++) {
            if (!l->bytes[k])
                continue;
            double bw = bar * (double)l->bytes[k] / (double)maxb;
            fprintf(f, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.0f\" fill=\"%s\"><title>",
                    x, y, bw, h, colour(k));
            report_put_text(f, mf_dtype_name(r->types[k]));
            fprintf(f, ": %llu bytes</title></rect>", (unsigned long long)l->bytes[k]);
            x += bw;
            total += l->bytes[k];
        }
        fprintf(f, "<text x=\"%.0f\" y=\"%.1f\">%.2f bpw</text>\n", label + bar + 8, y + h - 4,
                l->params > 0 ? 8.0 * (double)total / l->params : 0);
    }
    fputs("</svg></section>\n", f);
}

static void scan_section(report *r)
{
    FILE *f = r->f;
    fputs("<section id=\"scan\"><h2>Safety scan</h2>\n", f);
    if (!r->scanned) {
        fputs("<p>Not scanned (--no-scan).</p></section>\n", f);
        return;
    }
    fprintf(f, "<p class=\"verdict %s\">Verdict: <strong>%s</strong> (mfmt scan: nothing in the "
               "file was run)</p>\n", mf_verdict_name(r->verdict), mf_verdict_name(r->verdict));
    if (json_array_size(r->findings)) {
        fputs("<ul>\n", f);
        size_t i;
        json_t *x;
        json_array_foreach(r->findings, i, x) {
            fputs("<li>", f);
            report_put_text(f, json_string_value(json_object_get(x, "severity")));
            fputs(": ", f);
            report_put_text(f, json_string_value(json_object_get(x, "text")));
            fputs("</li>\n", f);
        }
        fputs("</ul>\n", f);
    }
    fputs("</section>\n", f);
}

static void page(report *r, const char *file_hash, const char *content_hash)
{
    FILE *f = r->f;
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"/>"
          "<meta name=\"generator\" content=\"mfmt report\"/><title>mfmt report: ", f);
    report_put_text(f, r->path);
    fputs("</title><style>\nbody{font-family:sans-serif;margin:2em;max-width:1000px;color:#222}"
          "table{border-collapse:collapse;margin:.5em 0}th,td{border:1px solid #ccc;padding:2px 8px;"
          "text-align:left}.legend span{margin-right:1em}.verdict.safe strong{color:#2a7}"
          ".verdict.unknown strong{color:#b80}.verdict.dangerous strong{color:#c22}"
          ".qerr td{white-space:nowrap}\n"
          "</style></head><body>\n<h1>", f);
    report_put_text(f, r->path);
    fputs("</h1>\n", f);
    summary(r, file_hash, content_hash);
    types_section(r);
    layers_section(r);
    report_memory_html(f, &r->mem);
    if (r->against.path)
        report_against_html(f, &r->against);
    scan_section(r);
    fprintf(f, "<footer><p>mfmt %s</p></footer>\n</body></html>\n", mf_version());
}

/* The page into OUT through mf_atomic: whole or not at all. */
static int write_page(const char *out, const char *text, size_t n)
{
    mf_status st;
    mf_status_init(&st);
    mf_atomic *w = NULL;
    int rc = mf_atomic_open(out, &w, &st) || mf_atomic_write(w, text, n, &st);
    if (rc)
        mf_atomic_abort(w);
    else
        rc = mf_atomic_commit(w, &st) != 0;
    int e = rc ? cli_report(&st) : EXIT_FINE;
    mf_status_clear(&st);
    return e;
}

static int hashes(report *r, bool file, char fh[129], char ch[129])
{
    mf_status st;
    mf_status_init(&st);
    int rc = 0;
    struct stat sb; /* a directory or a split set has no one file to hash */
    if (file && stat(r->path, &sb) == 0 && S_ISREG(sb.st_mode) && mf_hash_file(r->path, MF_SHA256, fh, &st))
        rc = -1;
    if (rc == 0 && mf_hash_tensor_content(r->m, MF_SHA256, ch, &st))
        rc = -1;
    int e = rc ? cli_report(&st) : EXIT_FINE;
    mf_status_clear(&st);
    return e;
}

/* --json: the page's numbers as one object. */
static json_t *report_json(const report *r, const char *file_hash, const char *content_hash)
{
    json_t *types = json_array(), *layers = json_array();
    for (size_t i = 0; i < r->n_types; i++)
        json_array_append_new(types, json_pack("{s:s, s:I, s:f}", "type", mf_dtype_name(r->types[i]),
                                               "bytes", (json_int_t)r->type_bytes[i], "parameters",
                                               r->type_params[i]));
    for (size_t i = 0; i < r->n_layers; i++) {
        const layer_row *l = &r->layers[i];
        uint64_t total = 0;
        for (size_t k = 0; k < r->n_types; k++)
            total += l->bytes[k];
        json_array_append_new(layers, json_pack("{s:s, s:I, s:f, s:f}", "layer", l->name, "bytes",
                                                (json_int_t)total, "parameters", l->params, "bpw",
                                                l->params > 0 ? 8.0 * (double)total / l->params : 0));
    }
    json_t *o = json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:o, s:o, s:o}", "path", r->path, "format",
                          mf_format_name(mf_model_format(r->m)), "tensors",
                          (json_int_t)mf_model_tensor_count(r->m), "parameters", (json_int_t)r->params,
                          "tensor_bytes", (json_int_t)r->tensor_bytes, "file_bytes",
                          (json_int_t)mf_model_file_bytes(r->m), "types", types, "layers", layers,
                          "memory", report_memory_json(&r->mem));
    if (r->scanned) {
        json_object_set_new(o, "verdict", json_string(mf_verdict_name(r->verdict)));
        json_object_set_new(o, "findings", json_incref(r->findings));
    }
    if (file_hash)
        json_object_set_new(o, "sha256", json_string(file_hash));
    if (content_hash)
        json_object_set_new(o, "content_sha256", json_string(content_hash));
    if (r->against.path)
        json_object_set_new(o, "against", report_against_json(&r->against));
    return o;
}

/* The HTML page into OUT. */
static int write_html(report *r, const char *out, const char *fh, const char *ch)
{
    char *text = NULL;
    size_t n = 0;
    if (!(r->f = open_memstream(&text, &n))) {
        fprintf(stderr, "mfmt: out of memory\n");
        return EXIT_USAGE;
    }
    page(r, fh, ch);
    fclose(r->f);
    int rc = write_page(out, text, n);
    free(text);
    if (rc == EXIT_FINE && !cli_quiet)
        fprintf(stderr, "mfmt: wrote %s (scan: %s)\n", out,
                r->scanned ? mf_verdict_name(r->verdict) : "not run");
    return rc;
}

static int run_report(const cli_args *a)
{
    const char *out = cli_get(a, "--output");
    bool json = cli_has(a, "--json");
    if (a->n_pos != 1 || (!out && !json))
        return cli_usage_error("report", "one MODEL and -o OUT.html (or --json)");
    report r = {.path = a->pos[0], .findings = json_array()};
    r.against.path = cli_get(a, "--against");
    r.against.arch_file = cli_get(a, "--arch-file");
    if (r.against.arch_file && !r.against.path)
        return cli_usage_error("report", "--arch-file goes with --against (an HF directory against a GGUF)");
    mf_status st;
    mf_status_init(&st);
    int rc = EXIT_FINE;
    if (cli_open(r.path, 0, false, &r.m, &st)) {
        rc = cli_report(&st);
        goto done;
    }
    if (tally(&r) || report_memory(r.path, &r.mem)) {
        fprintf(stderr, "mfmt: out of memory\n");
        rc = EXIT_USAGE;
        goto done;
    }
    if (r.against.path && (rc = report_against_run(r.path, &r.against)) != EXIT_FINE)
        goto done;
    if (!cli_has(a, "--no-scan")) {
        r.scanned = true;
        if (mf_scan_path(r.path, on_scan, &r, &st)) {
            rc = cli_report(&st);
            goto done;
        }
    }
    char fh[129] = "", ch[129] = "";
    if (!cli_has(a, "--no-hash") && (rc = hashes(&r, true, fh, ch)) != EXIT_FINE)
        goto done;
    if (out && (rc = write_html(&r, out, fh[0] ? fh : NULL, ch[0] ? ch : NULL)) != EXIT_FINE)
        goto done;
    if (json)
        cli_print_json(report_json(&r, fh[0] ? fh : NULL, ch[0] ? ch : NULL));
done:
    json_decref(r.findings);
    free(r.layers);
    report_against_free(&r.against);
    mf_close(r.m);
    mf_status_clear(&st);
    return rc;
}

static const cli_opt opts[] = {
    {"--output", "-o", "OUT", "the HTML file to write (required unless --json)"},
    {"--against", NULL, "ORIGINAL", "the error of each tensor and layer against ORIGINAL (the F16/F32 "
                                    "GGUF or the HF directory MODEL came from): RMSE, max |err|, "
                                    "relative error, SNR, cosine"},
    {"--arch-file", NULL, "FILE", "with --against, an HF directory and a GGUF: the GGUF's names mapped "
                                  "through the architecture described by FILE (doc/arch-file.md)"},
    {"--json", NULL, NULL, "the page's numbers as one JSON object on standard output"},
    {"--no-scan", NULL, NULL, "leave the safety scan out"},
    {"--no-hash", NULL, NULL, "leave the hashes out (they read every byte)"},
    CLI_OPT_QUIET("no closing line on standard error"),
    {0},
};

const cli_cmd cli_cmd_report = {
    "report", run_report, "MODEL -o OUT.html",
    "one self-contained HTML page: summary, tensor types, per-layer bytes and bits per weight "
    "(inline SVG), memory at a few context lengths, scan verdict, hashes; error against the original",
    opts,
    "The page loads nothing from elsewhere (no script, no style sheet or font from the network) "
    "and is well-formed XML too. The memory table is mfmt estimate's at 4096, 32768 and 131072 "
    "tokens and the model's context length, with an f16 and a q8_0 KV cache. --against reads one "
    "tensor pair at a time (mfmt diff's comparison); an HF directory against a GGUF goes through "
    "the converter's tables as mfmt diff HF_DIR model.gguf does (an F32 copy of the GGUF's tensors "
    "in $TMPDIR while it runs)."};
