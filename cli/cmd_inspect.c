/* cmd_inspect.c - mfmt inspect [--json] [--tensors] [--graph] PATH. */
#include "cli.h"
#include "hf_cli.h"
#include "json_out.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

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
    for (size_t i = 0; i < mf_model_tensor_count(m); i++) {
        const mf_tensor *t = mf_model_tensor_at(m, i);
        uint64_t n = mf_tensor_nelems(t);
        if (n == UINT64_MAX)
            n = 0;
        s->params += n;
        s->tensor_bytes += mf_tensor_nbytes(t);
        size_t k = 0;
        while (k < s->n_mix && s->mix[k].dt != mf_tensor_dtype(t))
            k++;
        if (k == s->n_mix) {
            if (s->n_mix == 64)
                continue;
            s->mix[s->n_mix++].dt = mf_tensor_dtype(t);
        }
        s->mix[k].tensors++;
        s->mix[k].bytes += mf_tensor_nbytes(t);
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
    json_object_set_new(o, "name", cli_json_string(mf_tensor_name(t), strlen(mf_tensor_name(t))));
    json_object_set_new(o, "dtype", json_string(mf_dtype_name(mf_tensor_dtype(t))));
    json_object_set_new(o, "shape", cli_json_shape(mf_tensor_shape(t), mf_tensor_ndim(t), false));
    if (mf_model_format(m) == MF_FMT_GGUF)
        json_object_set_new(o, "ne", cli_json_shape(mf_tensor_shape(t), mf_tensor_ndim(t), true));
    json_object_set_new(o, "offset", json_integer((json_int_t)mf_tensor_offset(t)));
    json_object_set_new(o, "nbytes", json_integer((json_int_t)mf_tensor_nbytes(t)));
    /* which file, when the model spans several */
    const char *f = mf_tensor_file_path(m, t);
    if (f && (mf_model_file_count(m) > 1 || strcmp(f, mf_model_path(m)) != 0))
        json_object_set_new(o, "file", json_string(f));
    if (mf_tensor_strides(t))
        json_object_set_new(o, "strides", cli_json_shape(mf_tensor_strides(t), mf_tensor_ndim(t), false));
    return o;
}

/* Index of the last metadata pair with m->meta[i]'s key, or -1 when an
 * earlier pair has it: a JSON object keeps a key's first place and its last
 * value (as json_object_set_new, which built this output before). */
static ssize_t meta_slot(const mf_model *m, size_t i)
{
    for (size_t k = 0; k < i; k++)
        if (strcmp(mf_model_meta_at(m, k)->key, mf_model_meta_at(m, i)->key) == 0)
            return -1;
    size_t last = i;
    for (size_t k = i + 1; k < mf_model_meta_count(m); k++)
        if (strcmp(mf_model_meta_at(m, k)->key, mf_model_meta_at(m, i)->key) == 0)
            last = k;
    return (ssize_t)last;
}

/* Streamed (json_out.h): the metadata, which holds whole vocabularies, is
 * written from the model's values, never built as a jansson document. */
static int print_json(const mf_model *m, const summary *s, FILE *out)
{
    jout *j = malloc(sizeof(*j));
    if (!j) {
        fprintf(stderr, "mfmt: inspect: out of memory\n");
        return EXIT_BAD_INPUT;
    }
    jo_init(j, out);
    jo_begin_object(j);
    char shown[4200];
    jo_key_json(j, "path", json_string(cli_shown_path(mf_model_path(m), shown, sizeof(shown))));
    jo_key_json(j, "format", json_string(mf_format_name(mf_model_format(m))));
    jo_key_json(j, "version", json_string(mf_model_version(m)));
    jo_key(j, "metadata");
    jo_begin_object(j);
    /* duplicate keys are rare; only look for them when there are few keys */
    const bool dedup = mf_model_meta_count(m) <= 4096;
    for (size_t i = 0; i < mf_model_meta_count(m); i++) {
        ssize_t slot = dedup ? meta_slot(m, i) : (ssize_t)i;
        if (slot >= 0 && jo_key(j, mf_model_meta_at(m, i)->key))
            jo_value(j, &mf_model_meta_at(m, slot)->v);
    }
    jo_end_object(j);
    jo_key(j, "tensors");
    jo_begin_array(j);
    for (size_t i = 0; i < mf_model_tensor_count(m); i++) {
        json_t *t = tensor_json(m, mf_model_tensor_at(m, i));
        jo_json(j, t);
        json_decref(t);
    }
    jo_end_array(j);
    jo_key_json(j, "n_tensors", json_integer((json_int_t)mf_model_tensor_count(m)));
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
    for (size_t i = 0; i < mf_model_note_count(m); i++)
        json_array_append_new(notes, json_string(mf_model_note_at(m, i)));
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

/* --jsonl: the same object on one line (made whole in memory, then
 * printed compact; --json streams). */
static int print_jsonl(const mf_model *m, const summary *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem) {
        fprintf(stderr, "mfmt: inspect: out of memory\n");
        return EXIT_USAGE;
    }
    int rc = print_json(m, s, mem);
    fclose(mem);
    json_error_t e;
    json_t *root = rc == EXIT_FINE ? json_loadb(buf, len, 0, &e) : NULL;
    free(buf);
    if (!root)
        return rc ? rc : EXIT_USAGE;
    cli_print_jsonl(root);
    return EXIT_FINE;
}

static void print_shape(const mf_tensor *t)
{
    putchar('[');
    for (int d = 0; d < mf_tensor_ndim(t); d++)
        printf("%s%lld", d ? ", " : "", (long long)mf_tensor_shape(t)[d]);
    putchar(']');
}

/* GGUF's general.file_type is llama.cpp's LLAMA_FTYPE number: its name
 * follows ("15 (Q4_K_M)"). */
static void print_value_name(const mf_model *m, const mf_kv *kv)
{
    if (mf_model_format(m) != MF_FMT_GGUF || strcmp(kv->key, "general.file_type") != 0)
        return;
    const mf_value *v = &kv->v;
    bool is_int = v->type == MF_V_U8 || v->type == MF_V_U16 || v->type == MF_V_U32 ||
                  v->type == MF_V_U64 || v->type == MF_V_I8 || v->type == MF_V_I16 ||
                  v->type == MF_V_I32 || v->type == MF_V_I64;
    const char *name = is_int ? mf_ftype_name((mf_ftype)v->as.i) : "?";
    if (strcmp(name, "?") != 0)
        printf(" (%s)", name);
}

static void print_text(const mf_model *m, const summary *s, bool tensors, bool verbose)
{
    char a[32], b[32];
    char shown[4200];
    printf("path:        %s\n", cli_shown_path(mf_model_path(m), shown, sizeof(shown)));
    const char *fmt = mf_format_name(mf_model_format(m)), *ver = cli_version_text(m);
    printf("format:      %s%s%s\n", fmt, ver[0] ? ", version " : "", ver);
    cli_fmt_count(a, sizeof(a), s->params);
    printf("tensors:     %zu, %llu parameters (%s)\n", mf_model_tensor_count(m),
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
        printf("%s %-8s %6zu %-7s %12s  %5.1f%% of parameters\n", i ? "            " : "dtype mix:  ",
               mf_dtype_name(s->mix[i].dt), s->mix[i].tensors, s->mix[i].tensors == 1 ? "tensor" : "tensors", a,
               s->params ? 100.0 * (double)s->mix[i].params / (double)s->params : 0.0);
    }
    printf("tokenizer:   %s\n", first_meta(m, tokenizer_keys) ? "yes" : "no");
    printf("chat template: %s\n", first_meta(m, template_keys) ? "yes" : "no");
    bool imatrix = false;
    for (size_t i = 0; i < mf_model_meta_count(m); i++)
        imatrix |= strncmp(mf_model_meta_at(m, i)->key, "quantize.imatrix.", 17) == 0;
    if (imatrix)
        printf("imatrix:     yes (quantize.imatrix.* below)\n");
    if (mf_model_meta_count(m))
        printf("metadata:    %zu keys\n", mf_model_meta_count(m));
    for (size_t i = 0; i < mf_model_meta_count(m); i++) {
        const mf_kv *kv = mf_model_meta_at(m, i);
        printf("  %s = ", kv->key);
        cli_fprint_value(stdout, &kv->v, 120);
        print_value_name(m, kv);
        putchar('\n');
    }
    cli_print_notes(stdout, m, "warning: ", "note: ", verbose);
    mf_status st;
    mf_status_init(&st);
    if (cli_hf_load_report_text(stdout, m, "", &st) < 0)
        printf("load report: not made: %s\n", st.msg);
    mf_status_clear(&st);
    if (!tensors) {
        if (mf_model_tensor_count(m))
            printf("(use --tensors to list the tensors)\n");
        return;
    }
    for (size_t i = 0; i < mf_model_tensor_count(m); i++) {
        const mf_tensor *t = mf_model_tensor_at(m, i);
        printf("  %-48s %-7s ", mf_tensor_name(t), mf_dtype_name(mf_tensor_dtype(t)));
        print_shape(t);
        printf("  @%llu +%llu\n", (unsigned long long)mf_tensor_offset(t), (unsigned long long)mf_tensor_nbytes(t));
    }
}

typedef struct inspect_opts {
    bool json, jsonl, tensors, graph, verbose;
} inspect_opts;

/* A directory of weights without config.json (what `convert x.bin OUT/`
 * writes, save_pretrained's shards alone): from_pretrained cannot load it,
 * so it does not open as a model directory, but its weights file (the
 * index of a sharded set first) can be shown. buf gets that file's path;
 * false when path is not such a directory. */
static bool bare_weights_dir(const char *path, char *buf, size_t cap)
{
    static const char *const names[] = {"model.safetensors.index.json", "model.safetensors",
                                        "pytorch_model.bin.index.json", "pytorch_model.bin", NULL};
    struct stat sb;
    if (stat(path, &sb) || !S_ISDIR(sb.st_mode))
        return false;
    snprintf(buf, cap, "%s/config.json", path);
    if (access(buf, F_OK) == 0)
        return false;
    for (size_t i = 0; names[i]; i++) {
        snprintf(buf, cap, "%s/%s", path, names[i]);
        if (access(buf, F_OK) == 0)
            return true;
    }
    return false;
}

static int inspect_one(const inspect_opts *o, const char *path, bool first, bool many)
{
    mf_status st;
    mf_status_init(&st);
    mf_model *m;
    char weights[4200];
    if (bare_weights_dir(path, weights, sizeof(weights))) {
        if (!cli_quiet)
            fprintf(stderr, "mfmt: note: %s has no config.json (from_pretrained cannot load it "
                            "as a model): showing its weights, %s\n", path, weights);
        path = weights;
    }
    if (cli_open(path, 0, false, &m, &st)) {
        int rc = cli_report(&st);
        mf_status_clear(&st);
        return rc;
    }
    if (o->graph) { /* the ONNX graph as text, one node a line */
        int rc = mf_model_graph_text(m, cli_stdout_sink, NULL, &st) ? cli_report(&st) : EXIT_FINE;
        mf_status_clear(&st);
        mf_close(m);
        return rc;
    }
    summary s;
    summarize(m, &s);
    int rc = EXIT_FINE;
    if (o->json) {
        cli_json_list_item(many);
        rc = print_json(m, &s, stdout);
    } else if (o->jsonl) {
        rc = print_jsonl(m, &s);
    } else if (!cli_quiet) {
        if (many && !first)
            putchar('\n');
        print_text(m, &s, o->tensors, o->verbose);
    }
    mf_close(m);
    return rc;
}

static int run_inspect(const cli_args *a)
{
    cli_json_mode mode;
    if (cli_json_mode_of(a, &mode))
        return EXIT_USAGE;
    inspect_opts o = {mode == CLI_JSON, mode == CLI_JSONL, cli_has(a, "--tensors"),
                      cli_has(a, "--graph"), cli_has(a, "--verbose")};
    if (a->n_pos == 0)
        return cli_usage_error("inspect", "no path given");
    int worst = EXIT_FINE;
    for (int i = 0; i < a->n_pos; i++) {
        int e = inspect_one(&o, a->pos[i], i == 0, a->n_pos > 1);
        worst = e > worst ? e : worst;
    }
    if (o.json)
        cli_json_list_end(a->n_pos > 1);
    return worst;
}

static const cli_opt opts[] = {
    {"--json", NULL, NULL, "one JSON object (the contract in doc/DESIGN.md); several paths: an array of them"},
    {"--jsonl", NULL, NULL, "the same object on one line per path"},
    {"--tensors", NULL, NULL, "list every tensor: name, dtype, shape, offset, bytes"},
    {"--graph", NULL, NULL, "ONNX: the graph, one node a line"},
    {"--verbose", "-v", NULL, "every note (e.g. each misaligned tensor), not a summary"},
    CLI_OPT_QUIET("no text output (JSON still prints when asked); the exit status says whether "
                  "every path opened"),
    CLI_OPTS_REMOTE,
    CLI_OPTS_BATCH,
    {0},
};

const cli_cmd cli_cmd_inspect = {"inspect", run_inspect, "PATH...",
                                 "format, version, metadata, tensors, dtype mix, bits per weight",
                                 opts, "A PATH of - reads standard input (spooled to a temporary file)."};
