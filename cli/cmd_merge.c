/* cmd_merge.c - mfmt merge IN OUT (a GGUF split set or sharded safetensors
 * into one file); also `mfmt split --merge`, as llama-gguf-split spells it. */
#include "cli.h"

int cli_merge_run(const char *in, const char *out, bool dry_run)
{
    mf_model *m;
    int rc = cli_open_model(in, &m);
    if (rc)
        return rc;
    mf_status st;
    mf_status_init(&st);
    size_t nt = mf_model_tensor_count(m), nf = mf_model_file_count(m);
    if (dry_run)
        printf("would write %s: %zu tensor%s from %zu file%s; nothing written\n", out, nt,
               nt == 1 ? "" : "s", nf, nf == 1 ? "" : "s");
    else if (mf_merge(m, out, NULL, &st))
        rc = cli_report(&st);
    else if (!cli_quiet)
        printf("wrote %s (%zu tensor%s from %zu file%s)\n", out, nt, nt == 1 ? "" : "s", nf,
               nf == 1 ? "" : "s");
    mf_status_clear(&st);
    mf_close(m);
    return rc;
}

static int run_merge(const cli_args *a)
{
    if (a->n_pos != 2)
        return cli_usage_error("merge", "need IN (first split, index or directory) and OUT");
    return cli_merge_run(a->pos[0], a->pos[1], cli_has(a, "--dry-run"));
}

static const cli_opt opts[] = {
    {"--merge", NULL, NULL, "accepted for llama-gguf-split's spelling (merging is what this does)"},
    {"--dry-run", NULL, NULL, "say what would be written; write nothing"},
    CLI_OPT_QUIET("no summary line; errors still on stderr"),
    {0},
};

const cli_cmd cli_cmd_merge = {"merge", run_merge, "IN OUT",
                               "one file from a GGUF split set or sharded safetensors", opts, NULL};
