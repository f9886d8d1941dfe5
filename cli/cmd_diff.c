/* cmd_diff.c - mfmt diff [--json] [--all] [--metadata-only|--tensors-only] A B:
 * metadata key by key (when A and B are of one format), then tensor by
 * tensor, across formats. Exit 0 when every key and every tensor holds the
 * same values, 1 otherwise. */
#include "cli.h"

#include <stdlib.h>

typedef struct diff_out {
    bool json, all;
    json_t *rows, *keys;
    size_t count[7];
    size_t meta_count[5];
    FILE *out;          /* the rows' text: stdout, or a buffer printed after the summary */
    bool mapped;        /* one side went through the converter (GGUF -> HF names) */
    mf_error_report *sum; /* the mapped summary (mf_error_report_add) */
    bool arch_file;     /* ... with the rows of --arch-file */
} diff_out;

static void print_typed_value(const mf_value *v)
{
    printf("%s ", v->type == MF_V_ARR ? "array" : cli_vtype_name(v->type));
    cli_fprint_value(stdout, v, 60);
}

static json_t *json_typed_value(const mf_value *v)
{
    return json_pack("{s:s, s:o}", "type", cli_vtype_name(v->type), "value", cli_json_value(v));
}

static int on_key(void *ctx, const mf_meta_diff_row *r)
{
    diff_out *o = ctx;
    o->meta_count[r->kind]++;
    if (o->json) {
        if (r->kind == MF_META_SAME && !o->all)
            return 0;
        json_t *j = json_pack("{s:s, s:s}", "key", r->key, "result", mf_meta_diff_kind_name(r->kind));
        if (r->a)
            json_object_set_new(j, "a", json_typed_value(r->a));
        if (r->b)
            json_object_set_new(j, "b", json_typed_value(r->b));
        json_array_append_new(o->keys, j);
        return 0;
    }
    if ((r->kind == MF_META_SAME && !o->all) || cli_quiet)
        return 0;
    printf("%-12s %s  ", r->kind == MF_META_SAME ? "key-same" :
                         r->kind == MF_META_CHANGED ? "key-changed" :
                         r->kind == MF_META_TYPE ? "key-type" :
                         r->kind == MF_META_ONLY_A ? "key-only-a" : "key-only-b", r->key);
    if (r->a)
        print_typed_value(r->a);
    if (r->a && r->b)
        printf(" -> ");
    if (r->b && r->kind != MF_META_SAME)
        print_typed_value(r->b);
    putchar('\n');
    return 0;
}

static void print_shape(FILE *f, const mf_tensor *t)
{
    fputc('[', f);
    for (int d = 0; t && d < mf_tensor_ndim(t); d++)
        fprintf(f, "%s%lld", d ? ", " : "", (long long)mf_tensor_shape(t)[d]);
    fputc(']', f);
}

static int on_row(void *ctx, const mf_diff_row *r)
{
    diff_out *o = ctx;
    o->count[r->kind]++;
    if (o->mapped && mf_error_report_add(o->sum, r, 0))
        return -1; /* out of memory: mf_diff stops */
    if (o->json) {
        json_t *j = json_pack("{s:s, s:s}", "name", r->name, "result", mf_diff_kind_name(r->kind));
        if (r->a)
            json_object_set_new(j, "dtype_a", json_string(mf_dtype_name(mf_tensor_dtype(r->a))));
        if (r->b)
            json_object_set_new(j, "dtype_b", json_string(mf_dtype_name(mf_tensor_dtype(r->b))));
        if (r->kind == MF_DIFF_VALUES) {
            json_object_set_new(j, "max_abs", json_real(r->max_abs));
            json_object_set_new(j, "rmse", json_real(r->rmse));
            json_object_set_new(j, "cosine", json_real(r->cosine));
            json_object_set_new(j, "n_diff", json_integer((json_int_t)r->n_diff));
        }
        json_array_append_new(o->rows, j);
        return 0;
    }
    if ((r->kind == MF_DIFF_SAME_BYTES && !o->all) || cli_quiet)
        return 0;
    FILE *f = o->out;
    fprintf(f, "%-12s %s", mf_diff_kind_name(r->kind), r->name);
    if (r->kind == MF_DIFF_SHAPE) {
        fprintf(f, "  ");
        print_shape(f, r->a);
        fprintf(f, " vs ");
        print_shape(f, r->b);
    } else if (r->a && r->b) {
        fprintf(f, "  %s vs %s", mf_dtype_name(mf_tensor_dtype(r->a)), mf_dtype_name(mf_tensor_dtype(r->b)));
    }
    if (r->kind == MF_DIFF_VALUES)
        fprintf(f, "  %llu differ, max |a-b| %.6g, rmse %.6g, cosine %.9f",
                (unsigned long long)r->n_diff, r->max_abs, r->rmse, r->cosine);
    fputc('\n', f);
    return 0;
}

/* Metadata is compared between models of one format: a GGUF's keys and a
 * safetensors file's __metadata__ have nothing in common. */
static int diff_metadata(const mf_model *a, const mf_model *b, diff_out *o, bool *compared,
                         mf_status *st)
{
    *compared = mf_model_format(a) == mf_model_format(b);
    if (!*compared)
        return 0;
    o->keys = o->json ? json_array() : NULL;
    return mf_diff_metadata(a, b, on_key, o, st);
}

static void print_summary(const diff_out *o, const char *hf, const char *gguf)
{
    const mf_error_report *s = o->sum;
    printf("model: %s vs %s through %s: %zu tensors compared, %.0f "
           "parameters; weighted RMSE %.6g, mean cosine %.9f",
           hf, gguf, o->arch_file ? "the arch file's rows" : "the converter's tables", s->all.tensors, s->all.n, mf_error_rmse(&s->all), mf_error_cosine(&s->all));
    if (s->n_worst && s->worst[0].rmse > 0)
        printf("; worst %s (rmse %.6g)", s->worst[0].name, s->worst[0].rmse);
    putchar('\n');
    for (size_t i = 0; i < s->n_layers; i++) {
        const mf_error_layer *l = &s->layers[i];
        printf("  layer %-28s cosine %.9f  rmse %.6g  (%zu tensors)\n", l->name,
               mf_error_cosine(&l->acc), mf_error_rmse(&l->acc), l->acc.tensors);
    }
    for (size_t i = 0; i < s->n_worst && s->worst[i].rmse > 0; i++)
        printf("  worst %zu: %s  rmse %.6g  cosine %.9f\n", i + 1, s->worst[i].name, s->worst[i].rmse,
               s->worst[i].cosine);
}

static json_t *summary_json(const diff_out *o)
{
    const mf_error_report *s = o->sum;
    json_t *layers = json_array(), *worst = json_array();
    for (size_t i = 0; i < s->n_layers; i++) {
        const mf_error_layer *l = &s->layers[i];
        json_array_append_new(layers, json_pack("{s:s, s:f, s:f, s:i}", "layer", l->name, "cosine",
                                                mf_error_cosine(&l->acc), "rmse", mf_error_rmse(&l->acc),
                                                "tensors", (json_int_t)l->acc.tensors));
    }
    for (size_t i = 0; i < s->n_worst; i++)
        json_array_append_new(worst, json_pack("{s:s, s:f, s:f}", "name", s->worst[i].name, "rmse",
                                               s->worst[i].rmse, "cosine", s->worst[i].cosine));
    return json_pack("{s:s, s:i, s:f, s:f, s:f, s:o, s:o}", "mapping",
                     o->arch_file ? "arch file (GGUF -> HF)" : "converter tables (GGUF -> HF)",
                     "tensors", (json_int_t)s->all.tensors, "parameters", s->all.n, "rmse",
                     mf_error_rmse(&s->all), "cosine", mf_error_cosine(&s->all), "layers", layers, "worst",
                     worst);
}

static int run_diff(const cli_args *args)
{
    diff_out o = {0};
    o.json = cli_has(args, "--json");
    o.all = cli_has(args, "--all");
    bool meta_only = cli_has(args, "--metadata-only"), tensors_only = cli_has(args, "--tensors-only");
    if (meta_only && tensors_only)
        return cli_usage_error("diff", "--metadata-only and --tensors-only exclude each other");
    if (args->n_pos != 2)
        return cli_usage_error("diff", "two paths, A and B");
    const char *p[2] = {args->pos[0], args->pos[1]};
    mf_status st;
    mf_status_init(&st);
    mf_model *a = NULL, *b = NULL;
    int rc = EXIT_FINE;
    o.out = stdout;
    char *rows_text = NULL;
    size_t rows_len = 0;
    if (cli_open(p[0], 0, false, &a, &st) || cli_open(p[1], 0, false, &b, &st)) {
        rc = cli_report(&st);
        goto out;
    }
    /* an HF directory against a GGUF: names and layouts through the
     * converter, values dequantized, a model-level summary first */
    mf_format fa = mf_model_format(a), fb = mf_model_format(b);
    int g = fa == MF_FMT_HF_DIR && fb == MF_FMT_GGUF ? 1 : fa == MF_FMT_GGUF && fb == MF_FMT_HF_DIR ? 0 : -1;
    const char *arch_file = cli_get(args, "--arch-file");
    if (arch_file && (g < 0 || meta_only || cli_has(args, "--no-map") || !strcmp(p[g], "-"))) {
        rc = cli_usage_error("diff", "--arch-file maps the names of a GGUF file against an HF directory "
                                     "(not with --no-map or --metadata-only)");
        goto out;
    }
    if (g >= 0 && !meta_only && !cli_has(args, "--no-map") && strcmp(p[g], "-")) {
        mf_status ms;
        mf_status_init(&ms);
        mf_model *mapped = NULL;
        if (!(o.sum = mf_error_report_new(false))) {
            mf_status_fail(&st, MF_ERR_NOMEM, "out of memory");
            rc = cli_report(&st);
            goto out;
        }
        mf_convert_hf_opts ho; /* read through the converter as it streams, F32 */
        mf_convert_hf_opts_init(&ho);
        ho.dtype = MF_F32;
        ho.arch_file = arch_file;
        if (mf_open_gguf_as_hf(p[g], &ho, &mapped, &ms) == 0) {
            mf_close(g ? b : a);
            *(g ? &b : &a) = mapped;
            o.mapped = true;
            o.arch_file = arch_file != NULL;
            tensors_only = true; /* config.json and GGUF keys have nothing in common */
            if (!o.json && !cli_quiet && !(o.out = open_memstream(&rows_text, &rows_len)))
                o.out = stdout;
        } else if (arch_file) { /* with --arch-file a failure is the answer, not plain names */
            rc = cli_report(&ms);
            mf_status_clear(&ms);
            goto out;
        } else {
            fprintf(stderr, "mfmt diff: note: %s not mapped through the converter (%s); names "
                            "compared as they are\n", p[g], ms.msg);
        }
        mf_status_clear(&ms);
    }
    bool meta_compared = false;
    if (!tensors_only && diff_metadata(a, b, &o, &meta_compared, &st)) {
        rc = cli_report(&st);
        json_decref(o.keys);
        goto out;
    }
    o.rows = o.json && !meta_only ? json_array() : NULL;
    if (!meta_only && mf_diff(a, b, on_row, &o, &st)) {
        rc = cli_report(&st);
        json_decref(o.rows);
        json_decref(o.keys);
        goto out;
    }
    size_t changed = o.count[MF_DIFF_VALUES] + o.count[MF_DIFF_SHAPE] + o.count[MF_DIFF_ONLY_A] +
                     o.count[MF_DIFF_ONLY_B] + o.count[MF_DIFF_INCOMPARABLE];
    size_t keys_changed = o.meta_count[MF_META_CHANGED] + o.meta_count[MF_META_TYPE] +
                          o.meta_count[MF_META_ONLY_A] + o.meta_count[MF_META_ONLY_B];
    if (o.json) {
        json_t *root = json_pack("{s:s, s:s, s:b}", "a", p[0], "b", p[1], "equal",
                                 changed + keys_changed == 0);
        json_object_set_new(root, "metadata_compared", json_boolean(meta_compared));
        if (o.mapped)
            json_object_set_new(root, "summary", summary_json(&o));
        if (o.keys)
            json_object_set_new(root, "metadata", o.keys);
        if (o.rows)
            json_object_set_new(root, "tensors", o.rows);
        cli_print_json(root);
    } else if (!cli_quiet) {
        if (o.mapped) {
            print_summary(&o, p[g ? 0 : 1], p[g]);
            if (o.out != stdout) {
                fclose(o.out);
                o.out = stdout;
                fwrite(rows_text, 1, rows_len, stdout);
            }
        }
        if (!tensors_only && !meta_compared)
            printf("metadata not compared: %s vs %s\n", mf_format_name(mf_model_format(a)),
                   mf_format_name(mf_model_format(b)));
        else if (!tensors_only)
            printf("metadata: %zu same, %zu changed, %zu of another type, %zu only in A, "
                   "%zu only in B\n",
                   o.meta_count[MF_META_SAME], o.meta_count[MF_META_CHANGED],
                   o.meta_count[MF_META_TYPE], o.meta_count[MF_META_ONLY_A],
                   o.meta_count[MF_META_ONLY_B]);
        if (!meta_only)
            printf("%zu same bytes, %zu same values in another dtype, %zu differ, %zu shape "
                   "mismatches, %zu only in A, %zu only in B\n",
                   o.count[MF_DIFF_SAME_BYTES], o.count[MF_DIFF_SAME_VALUES],
                   o.count[MF_DIFF_VALUES], o.count[MF_DIFF_SHAPE], o.count[MF_DIFF_ONLY_A],
                   o.count[MF_DIFF_ONLY_B]);
    }
    rc = changed + keys_changed ? EXIT_BAD_INPUT : EXIT_FINE;
out:
    if (o.out && o.out != stdout)
        fclose(o.out);
    free(rows_text);
    mf_error_report_free(o.sum);
    mf_close(a);
    mf_close(b);
    mf_status_clear(&st);
    return rc;
}

static const cli_opt opts[] = {
    {"--json", NULL, NULL, "one JSON object: a, b, metadata, tensors, equal"},
    {"--all", NULL, NULL, "list equal keys and tensors too, not only the differences"},
    {"--metadata-only", NULL, NULL, "compare the metadata only (keys, types, values)"},
    {"--tensors-only", NULL, NULL, "compare the tensors only"},
    {"--no-map", NULL, NULL, "an HF directory and a GGUF: compare names as they are, not through "
                             "the converter's tables"},
    {"--arch-file", NULL, "FILE", "an HF directory and a GGUF: map names through the architecture described by "
                                  "FILE (doc/arch-file.md, as convert --arch-file) instead of the built-in tables"},
    CLI_OPT_QUIET("print nothing (unless --json); the exit status says whether they differ"),
    {0},
};

const cli_cmd cli_cmd_diff = {
    "diff", run_diff, "A B",
    "compare metadata key by key and tensors one by one, across formats (exit 1 if they differ)",
    opts,
    "An HF directory and a GGUF (either order): the GGUF is read back through the converter's "
    "tables (mfmt convert's GGUF -> HF: names, permutes undone, values dequantized to F32, in a "
    "temporary directory), and a model-level summary comes first: weighted RMSE, mean cosine, "
    "per layer, the worst tensors."};
