/* cmd_dequantize.c - mfmt dequantize IN OUT.safetensors [--dtype f32|f16|bf16]:
 * every tensor as plain floats, metadata as safetensors' string map. */
#include "cli.h"

#include <strings.h>

static int parse(const cli_args *a, const char **in, const char **out, mf_dtype *dt)
{
    *in = *out = NULL;
    *dt = MF_F32;
    for (int i = 0; i < a->n_opts; i++) {
        const char *v = a->opt[i].val;
        if (cli_is(a, i, "--dtype")) {
            if (v && !strcasecmp(v, "f32"))
                *dt = MF_F32;
            else if (v && !strcasecmp(v, "f16"))
                *dt = MF_F16;
            else if (v && !strcasecmp(v, "bf16"))
                *dt = MF_BF16;
            else
                return cli_usage_error("dequantize", "--dtype takes f32, f16 or bf16");
        }
    }
    if (a->n_pos != 2)
        return cli_usage_error("dequantize", "needs IN.gguf OUT.safetensors");
    *in = a->pos[0];
    *out = a->pos[1];
    return cli_spool_input(in); /* "-" or a Hub name */
}

static int run_dequantize(const cli_args *a)
{
    const char *in, *out;
    mf_dtype dt;
    if (parse(a, &in, &out, &dt))
        return EXIT_USAGE;
    mf_status st;
    mf_status_init(&st);
    cli_progress prog;
    cli_progress_start(&prog, "dequantizing", 0); /* the library gives the total */
    mf_dequantize_opts o;
    mf_dequantize_opts_init(&o);
    o.dtype = dt;
    o.progress = cli_progress_cb;
    o.progress_user = &prog;
    mf_dequantize_result r;
    int rc = mf_dequantize_file(in, out, &o, &r, &st);
    cli_progress_end(&prog);
    if (rc) {
        rc = cli_report(&st);
        mf_status_clear(&st);
        return rc;
    }
    char sz[32];
    cli_fmt_bytes(sz, sizeof(sz), r.out_bytes);
    if (cli_quiet) {
        mf_status_clear(&st);
        return EXIT_FINE;
    }
    fprintf(stderr, "wrote %s: %zu tensors as %s (%zu copied as they were), %s; %zu metadata keys "
                    "kept as strings",
            out, r.n_converted, mf_dtype_name(dt), r.n_copied, sz, r.meta_kept);
    if (r.meta_skipped)
        fprintf(stderr, ", %zu left out (long or nested arrays, non-UTF-8 text)", r.meta_skipped);
    fprintf(stderr, ".\nnote: the values are the quantized ones, stored wider; the precision "
                    "lost when quantizing is not recovered.\n");
    mf_status_clear(&st);
    return EXIT_FINE;
}

static const cli_opt opts[] = {
    {"--dtype", NULL, "T", "f32 (default), f16 or bf16"},
    CLI_OPT_QUIET("no progress bar, no summary lines; errors still on stderr"),
    {0},
};

const cli_cmd cli_cmd_dequantize = {
    "dequantize", run_dequantize, "IN.gguf OUT.safetensors",
    "every tensor as plain floats (the quantization loss stays)", opts, NULL};
