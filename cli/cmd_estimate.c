/* cmd_estimate.c - mfmt estimate PATH [--ctx N] [--batch B] [--kv-type T]
 * [--type T] [--json]: weights + KV cache memory. */
#include "cli.h"

#include <stdlib.h>

static int parse_count(const char *opt, const char *v, int64_t *out)
{
    char *end;
    long long x = v ? strtoll(v, &end, 10) : 0;
    if (!v || *end || x <= 0)
        return cli_usage_error("estimate", "%s needs a positive integer", opt);
    *out = x;
    return 0;
}

static void print_text(const char *path, const mf_estimate *e)
{
    if (cli_quiet) { /* the answer alone, for scripts */
        printf("%llu\n", (unsigned long long)e->total_bytes);
        return;
    }
    char a[32], b[32], c[32];
    cli_fmt_count(a, sizeof(a), e->n_params);
    printf("model:       %s (%s, %lld layers, %lld heads, %lld KV heads, head dim %lld)\n", path,
           e->arch, (long long)e->n_layers, (long long)e->n_heads, (long long)e->n_kv_heads,
           (long long)e->head_dim_k);
    printf("parameters:  %llu (%s, %s)\n", (unsigned long long)e->n_params, a,
           e->params_from_config ? "computed from config.json" : "counted in the weights");
    cli_fmt_bytes(b, sizeof(b), e->weight_bytes);
    printf("weights:     %s (%llu bytes, %s, %.2f bits/weight)\n", b,
           (unsigned long long)e->weight_bytes, e->weight_type, e->weight_bpw);
    if (e->weight_note[0])
        printf("             (%s)\n", e->weight_note);
    cli_fmt_bytes(b, sizeof(b), e->kv_bytes);
    printf("KV cache:    %s (%llu bytes) = %lld layers x %lld KV heads x (%lld + %lld) dims x %lld ctx x %lld batch x %g bytes (%s)\n",
           b, (unsigned long long)e->kv_bytes, (long long)e->n_layers, (long long)e->n_kv_heads,
           (long long)e->head_dim_k, (long long)e->head_dim_v, (long long)e->ctx, (long long)e->batch,
           e->kv_bytes_per_elem, e->kv_type);
    cli_fmt_bytes(c, sizeof(c), e->total_bytes);
    printf("total:       %s (%llu bytes)\n", c, (unsigned long long)e->total_bytes);
}

static void print_json(const char *path, const mf_estimate *e)
{
    json_t *o = json_object();
    json_object_set_new(o, "path", json_string(path));
    json_object_set_new(o, "source", json_string(e->source));
    json_object_set_new(o, "arch", json_string(e->arch));
    json_object_set_new(o, "n_layers", json_integer(e->n_layers));
    json_object_set_new(o, "n_heads", json_integer(e->n_heads));
    json_object_set_new(o, "n_kv_heads", json_integer(e->n_kv_heads));
    json_object_set_new(o, "head_dim_k", json_integer(e->head_dim_k));
    json_object_set_new(o, "head_dim_v", json_integer(e->head_dim_v));
    json_object_set_new(o, "ctx", json_integer(e->ctx));
    json_object_set_new(o, "ctx_train", json_integer(e->ctx_train));
    json_object_set_new(o, "batch", json_integer(e->batch));
    json_object_set_new(o, "n_params", json_integer((json_int_t)e->n_params));
    json_object_set_new(o, "params_from_config", json_boolean(e->params_from_config));
    json_object_set_new(o, "weight_type", json_string(e->weight_type));
    json_object_set_new(o, "weight_bytes", json_integer((json_int_t)e->weight_bytes));
    json_object_set_new(o, "weight_bpw", json_real(e->weight_bpw));
    if (e->weight_note[0])
        json_object_set_new(o, "weight_note", json_string(e->weight_note));
    json_object_set_new(o, "kv_type", json_string(e->kv_type));
    json_object_set_new(o, "kv_bytes_per_elem", json_real(e->kv_bytes_per_elem));
    json_object_set_new(o, "kv_bytes", json_integer((json_int_t)e->kv_bytes));
    json_object_set_new(o, "total_bytes", json_integer((json_int_t)e->total_bytes));
    cli_print_json(o);
}

static int run_estimate(const cli_args *a)
{
    mf_estimate_opts o;
    mf_estimate_opts_init(&o);
    bool json = false;
    for (int i = 0; i < a->n_opts; i++) {
        const char *v = a->opt[i].val;
        if (cli_is(a, i, "--json"))
            json = true;
        else if (cli_is(a, i, "--ctx")) {
            if (parse_count("--ctx", v, &o.ctx))
                return EXIT_USAGE;
        } else if (cli_is(a, i, "--batch")) {
            if (parse_count("--batch", v, &o.batch))
                return EXIT_USAGE;
        } else if (cli_is(a, i, "--kv-type")) {
            o.kv_type = v;
        } else if (cli_is(a, i, "--type")) {
            o.weight_type = v;
        } else if (cli_is(a, i, "--mix-rules")) {
            if ((o.mix_rules = mf_mix_rules_parse(v)) < 0)
                return cli_usage_error("estimate", "--mix-rules takes c392e50 (= ecbcb7ea, the default) or b10256");
        }
    }
    if (a->n_pos != 1)
        return cli_usage_error("estimate", a->n_pos ? "one path at a time" : "no path given");
    const char *path = a->pos[0];
    int spool = cli_spool_input(&path); /* a Hub name: the cache's copy */
    if (spool)
        return spool;
    mf_status st;
    mf_status_init(&st);
    mf_estimate *e;
    if (mf_estimate_path(path, &o, &e, &st)) {
        int rc = cli_report(&st);
        mf_status_clear(&st);
        return rc;
    }
    mf_status_clear(&st);
    if (json)
        print_json(path, e);
    else
        print_text(path, e);
    mf_estimate_free(e);
    return EXIT_FINE;
}

static const cli_opt opts[] = {
    {"--ctx", NULL, "N", "context length (default: the model's training context)"},
    {"--batch", NULL, "B", "sequences in parallel (default 1)"},
    {"--kv-type", NULL, "T", "KV cache type: f16 (default), q8_0, ..."},
    {"--type", NULL, "T", "weights as if quantized to T (Q4_K_M, MXFP4_MOE, Q8_0, F16, ...; a GGUF: per tensor)"},
    {"--mix-rules", NULL, "R", "a mix of a GGUF: whose choice of tensor types, c392e50 (default; also llama.cpp "
                               "ecbcb7ea's) or b10256"},
    {"--json", NULL, NULL, "one JSON object"},
    CLI_OPT_QUIET("only the total in bytes, one number"),
    CLI_OPTS_REMOTE,
    {0},
};

const cli_cmd cli_cmd_estimate = {
    "estimate", run_estimate, "PATH",
    "memory for the weights and the KV cache (from config.json alone if need be, or GGUF metadata)",
    opts, NULL};
