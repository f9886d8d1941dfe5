/* cmd_diff.c - mfmt diff [--json] [--all] A B: tensor by tensor, across
 * formats. Exit 0 when every tensor holds the same values, 1 otherwise. */
#include "cli.h"

typedef struct diff_out {
    bool json, all;
    json_t *rows;
    size_t count[7];
} diff_out;

static void print_shape(const mf_tensor *t)
{
    putchar('[');
    for (int d = 0; t && d < mf_tensor_ndim(t); d++)
        printf("%s%lld", d ? ", " : "", (long long)mf_tensor_shape(t)[d]);
    putchar(']');
}

static int on_row(void *ctx, const mf_diff_row *r)
{
    diff_out *o = ctx;
    o->count[r->kind]++;
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
    printf("%-12s %s", mf_diff_kind_name(r->kind), r->name);
    if (r->kind == MF_DIFF_SHAPE) {
        printf("  ");
        print_shape(r->a);
        printf(" vs ");
        print_shape(r->b);
    } else if (r->a && r->b) {
        printf("  %s vs %s", mf_dtype_name(mf_tensor_dtype(r->a)), mf_dtype_name(mf_tensor_dtype(r->b)));
    }
    if (r->kind == MF_DIFF_VALUES)
        printf("  %llu differ, max |a-b| %.6g, rmse %.6g, cosine %.9f",
               (unsigned long long)r->n_diff, r->max_abs, r->rmse, r->cosine);
    putchar('\n');
    return 0;
}

static int run_diff(const cli_args *args)
{
    diff_out o = {0};
    o.json = cli_has(args, "--json");
    o.all = cli_has(args, "--all");
    if (args->n_pos != 2)
        return cli_usage_error("diff", "two paths, A and B");
    const char *p[2] = {args->pos[0], args->pos[1]};
    mf_status st;
    mf_status_init(&st);
    mf_model *a = NULL, *b = NULL;
    int rc = EXIT_FINE;
    if (cli_open(p[0], 0, false, &a, &st) || cli_open(p[1], 0, false, &b, &st)) {
        rc = cli_report(&st);
        goto out;
    }
    o.rows = o.json ? json_array() : NULL;
    if (mf_diff(a, b, on_row, &o, &st)) {
        rc = cli_report(&st);
        json_decref(o.rows);
        goto out;
    }
    size_t changed = o.count[MF_DIFF_VALUES] + o.count[MF_DIFF_SHAPE] + o.count[MF_DIFF_ONLY_A] +
                     o.count[MF_DIFF_ONLY_B] + o.count[MF_DIFF_INCOMPARABLE];
    if (o.json) {
        json_t *root = json_pack("{s:s, s:s, s:o, s:b}", "a", p[0], "b", p[1], "tensors", o.rows,
                                 "equal", changed == 0);
        cli_print_json(root);
    } else if (!cli_quiet) {
        printf("%zu same bytes, %zu same values in another dtype, %zu differ, %zu shape "
               "mismatches, %zu only in A, %zu only in B\n",
               o.count[MF_DIFF_SAME_BYTES], o.count[MF_DIFF_SAME_VALUES], o.count[MF_DIFF_VALUES],
               o.count[MF_DIFF_SHAPE], o.count[MF_DIFF_ONLY_A], o.count[MF_DIFF_ONLY_B]);
    }
    rc = changed ? EXIT_BAD_INPUT : EXIT_FINE;
out:
    mf_close(a);
    mf_close(b);
    mf_status_clear(&st);
    return rc;
}

static const cli_opt opts[] = {
    {"--json", NULL, NULL, "one JSON object: a, b, tensors, equal"},
    {"--all", NULL, NULL, "list equal tensors too, not only the differences"},
    CLI_OPT_QUIET("print nothing (unless --json); the exit status says whether they differ"),
    {0},
};

const cli_cmd cli_cmd_diff = {"diff", run_diff, "A B",
                              "compare tensor by tensor, across formats (exit 1 if they differ)",
                              opts, NULL};
