/* cmd_quantize.c - mfmt quantize IN.gguf OUT.gguf TYPE [options]:
 * llama-quantize's mixes and per-tensor rules with ggml's quantizers, byte
 * for byte; --dry-run previews the error of each tensor instead. */
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

enum { MAX_REPEATED = 256 };

typedef struct q_args {
    const char *in, *in_shown, *out, *type; /* in_shown: "-" for stdin */
    char out_buf[4200];                     /* OUT made from IN's folder and TYPE */
    mf_quantize_opts o;
    bool json;
    /* repeated options, handed to o by pointer */
    const char *include[MAX_REPEATED], *exclude[MAX_REPEATED], *overrides[MAX_REPEATED];
} q_args;

static int add_repeated(const char *opt, const char *v, const char **list, size_t *n)
{
    if (*n >= MAX_REPEATED)
        return cli_usage_error("quantize", "%s given more than %d times", opt, MAX_REPEATED);
    list[(*n)++] = v;
    return 0;
}

static int parse_dtype(const char *opt, const char *v, mf_dtype *out)
{
    mf_dtype dt = v ? mf_dtype_from_name(v) : MF_DTYPE_INVALID;
    const mf_dtype_info *di = mf_dtype_info_of(dt);
    if (!di || di->ggml_id < 0)
        return cli_usage_error("quantize", "%s takes a ggml type (q8_0, q6_K, f16, ...)", opt);
    *out = dt;
    return 0;
}

static int default_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 64 ? 64 : (int)n;
}

static int parse_threads(const char *v, int *out)
{
    char *end;
    long n = strtol(v, &end, 10);
    if (*end || end == v || n < 1 || n > 64)
        return cli_usage_error("quantize", "the thread count is a number from 1 to 64");
    *out = (int)n;
    return 0;
}

static int parse_option(const cli_args *args, int i, q_args *a)
{
    const char *v = args->opt[i].val;
    mf_quantize_opts *o = &a->o;
    if (cli_is(args, i, "--threads"))
        return parse_threads(v, &o->nthreads);
    if (cli_is(args, i, "--imatrix"))
        o->imatrix_path = v;
    else if (cli_is(args, i, "--output-tensor-type"))
        return parse_dtype("--output-tensor-type", v, &o->output_type);
    else if (cli_is(args, i, "--token-embedding-type"))
        return parse_dtype("--token-embedding-type", v, &o->token_embd_type);
    else if (cli_is(args, i, "--include-weights"))
        return add_repeated("--include-weights", v, a->include, &o->n_include_weights);
    else if (cli_is(args, i, "--exclude-weights"))
        return add_repeated("--exclude-weights", v, a->exclude, &o->n_exclude_weights);
    else if (cli_is(args, i, "--override-kv"))
        return add_repeated("--override-kv", v, a->overrides, &o->n_kv_overrides);
    else if (cli_is(args, i, "--allow-requantize"))
        o->allow_requantize = true;
    else if (cli_is(args, i, "--pure"))
        o->pure = true;
    else if (cli_is(args, i, "--mix-rules")) {
        int r = mf_mix_rules_parse(v);
        if (r < 0)
            return cli_usage_error("quantize", "--mix-rules takes c392e50 (= ecbcb7ea, the default) or b10256");
        o->mix_rules = (mf_mix_rules)r;
    }
    else if (cli_is(args, i, "--leave-output-tensor"))
        o->leave_output = true;
    else if (cli_is(args, i, "--dry-run"))
        o->dry_run = true;
    else if (cli_is(args, i, "--keep-split"))
        o->keep_split = true;
    else if (cli_is(args, i, "--json"))
        a->json = true;
    return 0;
}

static void list_type(void *ctx, const char *name, mf_ftype f)
{
    (void)f;
    fprintf(ctx, " %s", name);
}

static int bad_type(const char *t)
{
    fprintf(stderr, "mfmt quantize: unknown type '%s'; one of:", t);
    mf_ftype_each(list_type, stderr);
    fprintf(stderr, " COPY\n");
    return EXIT_USAGE;
}

/* A TYPE as llama-quantize's try_parse_ftype reads it: a mix name or number,
 * or COPY (by name only: 0 is F32) for only_copy. */
static int parse_type(q_args *a)
{
    if (strcasecmp(a->type, "COPY") == 0) {
        a->o.only_copy = true;
        a->o.ftype = MF_FTYPE_ALL_F32;
        return 0;
    }
    a->o.ftype = mf_ftype_parse(a->type);
    return a->o.ftype == MF_FTYPE_INVALID ? bad_type(a->type) : 0;
}

static const char *type_name(const q_args *a)
{
    return a->o.only_copy ? "COPY" : mf_ftype_name(a->o.ftype);
}

/* A TYPE argument as try_parse_ftype reads it (a mix name or number, COPY). */
static bool is_type(const char *s)
{
    return strcasecmp(s, "COPY") == 0 || mf_ftype_parse(s) != MF_FTYPE_INVALID;
}

/* llama-quantize without OUT: [IN's folder]/ggml-model-[TYPE].gguf, no
 * ".gguf" for --keep-split (the shards add their own). */
static void default_out(q_args *a)
{
    const char *slash = strrchr(a->in, '/');
    int dir = slash ? (int)(slash - a->in + 1) : 0;
    const char *name = strcasecmp(a->type, "COPY") == 0 ? "COPY" : mf_ftype_name(mf_ftype_parse(a->type));
    snprintf(a->out_buf, sizeof(a->out_buf), "%.*sggml-model-%s%s", dir, a->in, name,
             a->o.keep_split ? "" : ".gguf");
    a->out = a->out_buf;
}

/* llama-quantize's positionals: IN [OUT] TYPE [NTHREADS] (TYPE second: OUT is
 * ggml-model-TYPE.gguf beside IN, as llama-quantize names it; a dry run
 * writes nothing). */
static int parse(const cli_args *args, q_args *a)
{
    memset(a, 0, sizeof(*a));
    mf_quantize_opts_init(&a->o, MF_FTYPE_INVALID);
    a->o.include_weights = a->include;
    a->o.exclude_weights = a->exclude;
    a->o.kv_overrides = a->overrides;
    a->o.nthreads = default_threads();
    for (int i = 0; i < args->n_opts; i++)
        if (parse_option(args, i, a))
            return EXIT_USAGE;
    int n = args->n_pos;
    const char *const *pos = args->pos;
    if ((n == 2 || n == 3) && is_type(pos[1])) {
        a->in = pos[0];
        a->type = pos[1];
        if (!a->o.dry_run)
            default_out(a);
    } else if (n == 3 || n == 4) {
        a->in = pos[0];
        a->out = pos[1];
        a->type = pos[2];
    } else {
        return cli_usage_error("quantize", "needs IN.gguf [OUT.gguf] TYPE [NTHREADS]");
    }
    int used = a->type == pos[1] ? 2 : 3;
    if (n > used && parse_threads(pos[used], &a->o.nthreads))
        return EXIT_USAGE;
    if (parse_type(a))
        return EXIT_USAGE;
    if (a->json && !a->o.dry_run)
        return cli_usage_error("quantize", "--json goes with --dry-run");
    a->in_shown = a->in;
    return cli_spool_input(&a->in);
}

/* ------------------------------------------------------------ output */

static void shape_text(char *buf, size_t n, const int64_t ne[4], int nd)
{
    size_t k = 0;
    for (int i = 0; i < nd && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s%lld", i ? "x" : "", (long long)ne[i]);
}

/* JSON has no NaN or infinity: those become strings */
static json_t *json_number(double v)
{
    if (isnan(v))
        return json_string("nan");
    if (isinf(v))
        return json_string(v > 0 ? "inf" : "-inf");
    return json_real(v);
}

typedef struct dry_ctx {
    bool json;
    json_t *tensors;
} dry_ctx;

static int dry_row(void *ctx, const mf_quant_tensor_report *r)
{
    dry_ctx *d = ctx;
    if (d->json) {
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(r->name));
        json_object_set_new(o, "ne", cli_json_shape(r->ne, r->n_dims, false));
        json_object_set_new(o, "from", json_string(mf_dtype_name(r->src)));
        json_object_set_new(o, "to", json_string(mf_dtype_name(r->dst)));
        json_object_set_new(o, "bytes", json_integer((json_int_t)r->dst_bytes));
        json_object_set_new(o, "fallback", json_boolean(r->fallback));
        json_object_set_new(o, "imatrix", json_boolean(r->imatrix));
        if (r->converted) {
            json_object_set_new(o, "rmse", json_number(r->rmse));
            json_object_set_new(o, "max_abs_error", json_number(r->max_abs));
            json_object_set_new(o, "cosine", json_number(r->cosine));
            json_object_set_new(o, "nonfinite", json_boolean(r->nonfinite));
        }
        json_array_append_new(d->tensors, o);
        return 0;
    }
    char shape[64], typ[48];
    shape_text(shape, sizeof(shape), r->ne, r->n_dims);
    snprintf(typ, sizeof(typ), "%s%s", mf_dtype_name(r->dst), r->fallback ? " (fallback)" : "");
    if (r->converted)
        printf("%-36s %-14s %-8s -> %-18s %11.4g %11.4g %10.6f%s%s\n", r->name, shape,
               mf_dtype_name(r->src), typ, r->rmse, r->max_abs, r->cosine, r->imatrix ? "  imatrix" : "",
               r->nonfinite ? "  NaN/inf: would be refused" : "");
    else
        printf("%-36s %-14s %-8s -> %-18s %11s %11s %10s\n", r->name, shape, mf_dtype_name(r->src),
               typ, "copied", "-", "-");
    return 0;
}

static void print_totals(const q_args *a, const mf_quantize_result *r, bool dry)
{
    char in_sz[32], out_sz[32], file_sz[32], params[32];
    cli_fmt_bytes(in_sz, sizeof(in_sz), r->in_tensor_bytes);
    cli_fmt_bytes(out_sz, sizeof(out_sz), r->out_tensor_bytes);
    cli_fmt_bytes(file_sz, sizeof(file_sz), r->out_file_bytes);
    cli_fmt_count(params, sizeof(params), r->n_params);
    FILE *f = dry ? stdout : stderr;
    fprintf(f, "%s %s as %s: %zu tensors (%zu converted, %zu copied), %s parameters\n",
            dry ? "would quantize" : "quantized", a->in_shown, type_name(a), r->n_tensors,
            r->n_converted, r->n_tensors - r->n_converted, params);
    fprintf(f, "tensor data %s -> %s, %.4f bits per weight; output file%s %s (%llu bytes)\n", in_sz,
            out_sz, r->bpw, a->o.keep_split ? "s together" : "", file_sz,
            (unsigned long long)r->out_file_bytes);
    if (r->imatrix_entries)
        fprintf(f, "importance matrix: %zu entries, used for %zu tensors\n", r->imatrix_entries,
                r->imatrix_used);
    if (r->n_fallback)
        fprintf(f, "warning: %zu of %zu tensors needed a fallback type (rows not a multiple of "
                   "the block size)\n", r->n_fallback, r->n_k_quantized + r->n_fallback);
}

static json_t *totals_json(const q_args *a, const mf_quantize_result *r)
{
    json_t *o = json_object();
    json_object_set_new(o, "path", json_string(a->in_shown));
    json_object_set_new(o, "type", json_string(type_name(a)));
    /* COPY keeps the input's, which the library reads */
    json_object_set_new(o, "file_type", a->o.only_copy ? json_null() : json_integer(a->o.ftype));
    json_object_set_new(o, "n_params", json_integer((json_int_t)r->n_params));
    json_object_set_new(o, "tensor_bytes", json_integer((json_int_t)r->out_tensor_bytes));
    json_object_set_new(o, "file_bytes", json_integer((json_int_t)r->out_file_bytes));
    json_object_set_new(o, "bits_per_weight", json_real(r->bpw));
    json_object_set_new(o, "fallbacks", json_integer((json_int_t)r->n_fallback));
    return o;
}

/* ------------------------------------------------------------ run */

/* "wrote OUT", or for --keep-split the files' names (one per input file) */
static void print_written(const q_args *a)
{
    if (!a->o.keep_split) {
        fprintf(stderr, "wrote %s\n", a->out);
        return;
    }
    unsigned long long n = 1;
    mf_model *m = NULL;
    mf_status st;
    mf_status_init(&st);
    if (cli_open(a->in, 0, false, &m, &st) == 0) {
        const mf_value *v = mf_meta_get(m, "split.count");
        if (v && v->type == MF_V_U16 && v->as.u > 1)
            n = v->as.u;
    }
    mf_close(m);
    mf_status_clear(&st);
    size_t len = strlen(a->out);
    if (len >= 5 && strcmp(a->out + len - 5, ".gguf") == 0)
        len -= 5;
    fprintf(stderr, "wrote %llu file%s: %.*s-%05llu-of-%05llu.gguf%s\n", n, n == 1 ? "" : "s",
            (int)len, a->out, 1ull, n, n > 1 ? " ..." : "");
}

static double now_sec(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int run_quantize(const cli_args *args)
{
    q_args a;
    if (parse(args, &a))
        return EXIT_USAGE;
    double t0 = now_sec();
    mf_status st;
    mf_status_init(&st);
    cli_progress prog = {0};
    if (!cli_quiet) {
        cli_progress_start(&prog, a.o.dry_run ? "measuring" : "quantizing", 0);
        a.o.progress = cli_progress_cb; /* the library gives the total */
        a.o.progress_user = &prog;
    }
    dry_ctx d = {a.json, a.json ? json_array() : NULL};
    if (a.o.dry_run && !a.json)
        printf("%-36s %-14s %-8s    %-18s %11s %11s %10s\n", "tensor", "ne", "from", "to", "rmse",
               "max |err|", "cosine");
    mf_quantize_result r;
    int rc = mf_quantize_file(a.in, a.out, &a.o, a.o.dry_run ? dry_row : NULL, &d, &r, &st);
    cli_progress_end(&prog);
    if (rc) {
        json_decref(d.tensors);
        rc = cli_report(&st);
        mf_status_clear(&st);
        return rc;
    }
    if (a.json) {
        json_t *o = totals_json(&a, &r);
        json_object_set_new(o, "tensors", d.tensors);
        cli_print_json(o);
    } else if (!cli_quiet || a.o.dry_run) {
        print_totals(&a, &r, a.o.dry_run);
        if (!a.o.dry_run)
            print_written(&a);
        /* llama-quantize's closing line: "main: total time = N ms" */
        fprintf(a.o.dry_run ? stdout : stderr, "total time: %.2f ms (%d thread%s)\n",
                (now_sec() - t0) * 1000.0, a.o.nthreads, a.o.nthreads == 1 ? "" : "s");
    }
    mf_status_clear(&st);
    return EXIT_FINE;
}

static const cli_opt opts[] = {
    {"--threads", NULL, "N", "threads (default: the processors online, at most 64); also the "
                             "optional 4th argument, as llama-quantize takes it"},
    {"--imatrix", NULL, "FILE", "importance matrix (.dat or GGUF imatrix)"},
    {"--allow-requantize", NULL, NULL, "dequantize already-quantized tensors first"},
    {"--pure", NULL, NULL, "every tensor in TYPE, no mix"},
    {"--mix-rules", NULL, "R", "whose choice of tensor types: c392e50 (default; also llama.cpp ecbcb7ea's) "
                               "or b10256 (attn_qkv and attn_kv_b ruled as attn_v)"},
    {"--output-tensor-type", NULL, "T", "output.weight in ggml type T (q8_0, q6_K, f16, ...)"},
    {"--token-embedding-type", NULL, "T", "token_embd.weight in ggml type T"},
    {"--include-weights", NULL, "NAME", "use the imatrix only for tensors whose name contains "
                                        "NAME (repeatable)"},
    {"--exclude-weights", NULL, "NAME", "do not use the imatrix for tensors whose name contains "
                                        "NAME (repeatable)"},
    {"--override-kv", NULL, "KEY=TYPE:VALUE", "set a key in the output, TYPE int, float, bool "
                                               "or str (repeatable), as llama-quantize"},
    {"--leave-output-tensor", NULL, NULL, "output.weight as it is"},
    {"--keep-split", NULL, NULL, "a split input (NAME-00001-of-0000N.gguf) gives one output file "
                                 "per input file, OUT-00001-of-0000N.gguf, ... (OUT less .gguf)"},
    {"--dry-run", NULL, NULL, "the error of each tensor (rmse, max |err|, cosine); nothing "
                              "written, OUT optional"},
    {"--json", NULL, NULL, "with --dry-run: one JSON object"},
    CLI_OPT_QUIET("no progress bar, no summary lines (a --dry-run table still prints); errors "
                  "still on stderr"),
    {0},
};

static void print_type_row(void *user, const char *name, mf_ftype f)
{
    FILE *out = user;
    const char *canon = mf_ftype_name(f);
    fprintf(out, "  %4d  or  %-8s : ", (int)f, name);
    if (strcmp(canon, name) != 0)
        fprintf(out, "alias of %s", canon);
    else
        fprintf(out, "mostly %s", mf_dtype_name(mf_ftype_base_type(f)));
    fprintf(out, "%s\n", mf_ftype_needs_imatrix(f) ? ", needs an importance matrix" : "");
}

/* The types as llama-quantize's usage lists them: number, then name. */
void cli_quantize_print_types(FILE *f)
{
    fprintf(f, "Allowed quantization types:\n");
    mf_ftype_each(print_type_row, f);
    fprintf(f, "  %4s  or  %-8s : every tensor copied as it is\n", "", "COPY");
}

const cli_cmd cli_cmd_quantize = {
    "quantize", run_quantize, "IN.gguf [OUT.gguf] TYPE [NTHREADS]",
    "llama-quantize's mixes (Q4_K_M, Q8_0, IQ4_XS, ...) byte for byte", opts,
    "TYPE is a name (Q4_K_M) or llama-quantize's LLAMA_FTYPE number (15 = Q4_K_M, 7 = Q8_0),\n"
    "or COPY: every tensor copied as it is, general.file_type the input's (as llama-quantize).\n"
    "A split input (NAME-00001-of-0000N.gguf) gives one merged OUT, or with --keep-split one\n"
    "file per input file."};
