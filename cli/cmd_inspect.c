/* cmd_inspect.c - mfmt inspect [--json] [--tensors] [--graph] PATH. */
#include "cli.h"
#include "hf_cli.h"
#include "json_out.h"
#include "formats/onnx/onnx.h"

#include <stdlib.h>
#include <sys/types.h>

typedef struct mix_row {
    mf_dtype dt;
    size_t tensors;
    uint64_t bytes, params;
} mix_row;

typedef struct summary {
    uint64_t params, tensor_bytes, file_bytes;
    mix_row mix[64];
    size_t n_mix;
} summary;

static void summarize(const mf_model *m, summary *s)
{
    memset(s, 0, sizeof(*s));
    s->file_bytes = mf_model_file_bytes(m);
    for (size_t i = 0; i < m->n_tensors; i++) {
        const mf_tensor *t = &m->tensors[i];
        uint64_t n = mf_tensor_nelems(t);
        if (n == UINT64_MAX)
            n = 0;
        s->params += n;
        s->tensor_bytes += t->nbytes;
        size_t k = 0;
        while (k < s->n_mix && s->mix[k].dt != t->dtype)
            k++;
        if (k == s->n_mix) {
            if (s->n_mix == 64)
                continue;
            s->mix[s->n_mix++].dt = t->dtype;
        }
        s->mix[k].tensors++;
        s->mix[k].bytes += t->nbytes;
        s->mix[k].params += n;
    }
}

static const mf_value *first_meta(const mf_model *m, const char *const *keys)
{
    for (; *keys; keys++) {
        const mf_value *v = mf_meta_get(m, *keys);
        if (v)
            return v;
    }
    return NULL;
}

static const char *const tokenizer_keys[] = {"tokenizer.ggml.tokens", "tokenizer.ggml.model",
                                             "tokenizer.kind", "tokenizer.files", NULL};
static const char *const template_keys[] = {"tokenizer.chat_template", "chat_template", NULL};

static json_t *tensor_json(const mf_model *m, const mf_tensor *t)
{
    json_t *o = json_object();
    json_object_set_new(o, "name", cli_json_string(t->name, strlen(t->name)));
    json_object_set_new(o, "dtype", json_string(mf_dtype_name(t->dtype)));
    json_object_set_new(o, "shape", cli_json_shape(t->shape, t->ndim, false));
    if (m->format == MF_FMT_GGUF)
        json_object_set_new(o, "ne", cli_json_shape(t->shape, t->ndim, true));
    json_object_set_new(o, "offset", json_integer((json_int_t)t->offset));
    json_object_set_new(o, "nbytes", json_integer((json_int_t)t->nbytes));
    const mf_file *f = mf_tensor_file(m, t);
    if ((m->n_files > 1 || t->owner) && f)
        json_object_set_new(o, "file", json_string(f->path));
    if (t->strides)
        json_object_set_new(o, "strides", cli_json_shape(t->strides, t->ndim, false));
    return o;
}

/* Index of the last metadata pair with m->meta[i]'s key, or -1 when an
 * earlier pair has it: a JSON object keeps a key's first place and its last
 * value (as json_object_set_new, which built this output before). */
static ssize_t meta_slot(const mf_model *m, size_t i)
{
    for (size_t k = 0; k < i; k++)
        if (strcmp(m->meta[k].key, m->meta[i].key) == 0)
            return -1;
    size_t last = i;
    for (size_t k = i + 1; k < m->n_meta; k++)
        if (strcmp(m->meta[k].key, m->meta[i].key) == 0)
            last = k;
    return (ssize_t)last;
}

/* Streamed (json_out.h): the metadata, which holds whole vocabularies, is
 * written from the model's values, never built as a jansson document. */
static int print_json(const mf_model *m, const summary *s)
{
    jout *j = malloc(sizeof(*j));
    if (!j) {
        fprintf(stderr, "mfmt: inspect: out of memory\n");
        return EXIT_BAD_INPUT;
    }
    jo_init(j, stdout);
    jo_begin_object(j);
    jo_key_json(j, "path", json_string(m->path));
    jo_key_json(j, "format", json_string(mf_format_name(m->format)));
    jo_key_json(j, "version", json_string(m->version));
    jo_key(j, "metadata");
    jo_begin_object(j);
    /* duplicate keys are rare; only look for them when there are few keys */
    const bool dedup = m->n_meta <= 4096;
    for (size_t i = 0; i < m->n_meta; i++) {
        ssize_t slot = dedup ? meta_slot(m, i) : (ssize_t)i;
        if (slot >= 0 && jo_key(j, m->meta[i].key))
            jo_value(j, &m->meta[slot].v);
    }
    jo_end_object(j);
    jo_key(j, "tensors");
    jo_begin_array(j);
    for (size_t i = 0; i < m->n_tensors; i++) {
        json_t *t = tensor_json(m, &m->tensors[i]);
        jo_json(j, t);
        json_decref(t);
    }
    jo_end_array(j);
    jo_key_json(j, "n_tensors", json_integer((json_int_t)m->n_tensors));
    jo_key_json(j, "n_params", json_integer((json_int_t)s->params));
    jo_key_json(j, "file_bytes", json_integer((json_int_t)s->file_bytes));
    jo_key_json(j, "tensor_bytes", json_integer((json_int_t)s->tensor_bytes));
    json_t *mix = json_object();
    for (size_t i = 0; i < s->n_mix; i++)
        json_object_set_new(mix, mf_dtype_name(s->mix[i].dt),
                            json_pack("{s:I, s:I, s:I}", "tensors", (json_int_t)s->mix[i].tensors,
                                      "bytes", (json_int_t)s->mix[i].bytes, "params",
                                      (json_int_t)s->mix[i].params));
    jo_key_json(j, "dtype_mix", mix);
    if (s->params) {
        jo_key_json(j, "bpw_file", json_real(8.0 * (double)s->file_bytes / (double)s->params));
        jo_key_json(j, "bpw_tensors", json_real(8.0 * (double)s->tensor_bytes / (double)s->params));
    }
    jo_key_json(j, "has_tokenizer", json_boolean(first_meta(m, tokenizer_keys) != NULL));
    jo_key_json(j, "has_chat_template", json_boolean(first_meta(m, template_keys) != NULL));
    json_t *notes = json_array();
    for (size_t i = 0; i < m->n_notes; i++)
        json_array_append_new(notes, json_string(m->notes[i]));
    jo_key_json(j, "notes", notes);
    mf_status st;
    mf_status_init(&st);
    json_t *lr = cli_hf_load_report_json(m, &st);
    if (lr)
        jo_key_json(j, "load_report", lr);
    mf_status_clear(&st);
    jo_end_object(j);
    jo_finish(j);
    free(j);
    return EXIT_FINE;
}

static void print_shape(const mf_tensor *t)
{
    putchar('[');
    for (int d = 0; d < t->ndim; d++)
        printf("%s%lld", d ? ", " : "", (long long)t->shape[d]);
    putchar(']');
}

static void print_text(const mf_model *m, const summary *s, bool tensors)
{
    char a[32], b[32];
    printf("path:        %s\n", m->path);
    printf("format:      %s%s%s\n", mf_format_name(m->format), m->version[0] ? ", version " : "",
           m->version);
    cli_fmt_count(a, sizeof(a), s->params);
    printf("tensors:     %zu, %llu parameters (%s)\n", m->n_tensors,
           (unsigned long long)s->params, a);
    cli_fmt_bytes(a, sizeof(a), s->file_bytes);
    cli_fmt_bytes(b, sizeof(b), s->tensor_bytes);
    size_t nf = mf_model_file_count(m);
    printf("size:        %s in %zu file%s, %s of tensor data\n", a, nf, nf == 1 ? "" : "s", b);
    if (s->params)
        printf("bits/weight: %.3f (file), %.3f (tensor data)\n",
               8.0 * (double)s->file_bytes / (double)s->params,
               8.0 * (double)s->tensor_bytes / (double)s->params);
    for (size_t i = 0; i < s->n_mix; i++) {
        cli_fmt_bytes(a, sizeof(a), s->mix[i].bytes);
        printf("%s %-8s %6zu tensors %12s  %5.1f%% of parameters\n", i ? "            " : "dtype mix:  ",
               mf_dtype_name(s->mix[i].dt), s->mix[i].tensors, a,
               s->params ? 100.0 * (double)s->mix[i].params / (double)s->params : 0.0);
    }
    printf("tokenizer:   %s\n", first_meta(m, tokenizer_keys) ? "yes" : "no");
    printf("chat template: %s\n", first_meta(m, template_keys) ? "yes" : "no");
    bool imatrix = false;
    for (size_t i = 0; i < m->n_meta; i++)
        imatrix |= strncmp(m->meta[i].key, "quantize.imatrix.", 17) == 0;
    if (imatrix)
        printf("imatrix:     yes (quantize.imatrix.* below)\n");
    if (m->n_meta)
        printf("metadata:    %zu keys\n", m->n_meta);
    for (size_t i = 0; i < m->n_meta; i++) {
        printf("  %s = ", m->meta[i].key);
        cli_fprint_value(stdout, &m->meta[i].v, 120);
        putchar('\n');
    }
    for (size_t i = 0; i < m->n_notes; i++)
        printf("note: %s\n", m->notes[i]);
    mf_status st;
    mf_status_init(&st);
    if (cli_hf_load_report_text(stdout, m, "", &st) < 0)
        printf("load report: not made: %s\n", st.msg);
    mf_status_clear(&st);
    if (!tensors) {
        if (m->n_tensors)
            printf("(use --tensors to list the tensors)\n");
        return;
    }
    for (size_t i = 0; i < m->n_tensors; i++) {
        const mf_tensor *t = &m->tensors[i];
        printf("  %-48s %-7s ", t->name, mf_dtype_name(t->dtype));
        print_shape(t);
        printf("  @%llu +%llu\n", (unsigned long long)t->offset, (unsigned long long)t->nbytes);
    }
}

static int run_inspect(int argc, char **argv)
{
    bool json = false, tensors = false, graph = false;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (cli_flag(argc, argv, &i, "--json", NULL))
            json = true;
        else if (cli_flag(argc, argv, &i, "--tensors", NULL))
            tensors = true;
        else if (cli_flag(argc, argv, &i, "--graph", NULL))
            graph = true;
        else if (argv[i][0] == '-' && argv[i][1])
            return cli_usage_error("inspect", "unknown option %s", argv[i]);
        else if (path)
            return cli_usage_error("inspect", "one path at a time");
        else
            path = argv[i];
    }
    if (!path)
        return cli_usage_error("inspect", "no path given");
    mf_status st;
    mf_status_init(&st);
    mf_model *m;
    if (mf_open(path, NULL, &m, &st)) {
        int rc = cli_report(&st);
        mf_status_clear(&st);
        return rc;
    }
    if (graph) { /* the ONNX graph as text, one node a line */
        int rc = mf_onnx_print_graph(m, stdout, &st) ? cli_report(&st) : EXIT_FINE;
        mf_status_clear(&st);
        mf_close(m);
        return rc;
    }
    summary s;
    summarize(m, &s);
    int rc = EXIT_FINE;
    if (json)
        rc = print_json(m, &s);
    else
        print_text(m, &s, tensors);
    mf_close(m);
    return rc;
}

const cli_cmd cli_cmd_inspect = {"inspect", run_inspect, "inspect [--json] [--tensors] [--graph] PATH",
                                 "format, version, metadata, tensors, dtype mix, bits per weight; --graph: ONNX nodes"};
