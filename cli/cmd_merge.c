/* cmd_merge.c - mfmt merge IN OUT (a GGUF split set or sharded safetensors
 * into one file). */
#include "cli.h"

static int run_merge(int argc, char **argv)
{
    if (argc != 3)
        return cli_usage_error("merge", "need IN (first split, index or directory) and OUT");
    mf_model *m;
    int rc = cli_open_model(argv[1], &m);
    if (rc)
        return rc;
    mf_status st;
    mf_status_init(&st);
    if (mf_merge(m, argv[2], NULL, &st))
        rc = cli_report(&st);
    else
        printf("wrote %s (%zu tensors)\n", argv[2], mf_model_tensor_count(m));
    mf_status_clear(&st);
    mf_close(m);
    return rc;
}

const cli_cmd cli_cmd_merge = {"merge", run_merge, "merge IN OUT",
                               "one file from a GGUF split set or sharded safetensors"};
