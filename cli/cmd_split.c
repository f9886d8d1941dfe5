/* cmd_split.c - mfmt split IN.gguf PREFIX [--max-tensors N] [--max-size 2G] */
#include "cli.h"

#include <stdlib.h>

static int split_model(const mf_model *m, const char *prefix, uint64_t max_tensors,
                       uint64_t max_bytes, size_t *nf, mf_status *st)
{
    mf_split_opts o;
    mf_split_opts_init(&o);
    o.max_tensors = max_tensors;
    o.max_bytes = max_bytes;
    return mf_gguf_split(m, prefix, &o, nf, st);
}

static int run_split(int argc, char **argv)
{
    const char *in = NULL, *prefix = NULL, *v;
    uint64_t max_tensors = 0, max_bytes = 0;
    for (int i = 1; i < argc; i++) {
        if (cli_flag(argc, argv, &i, "--max-tensors", &v)) {
            if (!v || !(max_tensors = strtoull(v, NULL, 10)))
                return cli_usage_error("split", "--max-tensors takes a positive count");
        } else if (cli_flag(argc, argv, &i, "--max-size", &v)) {
            if (!v || mf_parse_size(v, &max_bytes) || !max_bytes)
                return cli_usage_error("split", "--max-size takes a size such as 2G or 500M");
        } else if (argv[i][0] == '-' && argv[i][1])
            return cli_usage_error("split", "unknown option %s", argv[i]);
        else if (!in)
            in = argv[i];
        else if (!prefix)
            prefix = argv[i];
        else
            return cli_usage_error("split", "too many arguments");
    }
    if (!in || !prefix)
        return cli_usage_error("split", "need IN.gguf and an output PREFIX");
    if (!max_tensors && !max_bytes)
        max_tensors = 128; /* llama-gguf-split's default */
    mf_model *m;
    int rc = cli_open_model(in, &m);
    if (rc)
        return rc;
    mf_status st;
    mf_status_init(&st);
    size_t nf = 0;
    if (mf_model_format(m) != MF_FMT_GGUF)
        rc = cli_usage_error("split", "%s is %s; split writes GGUF split sets (use convert "
                             "--max-shard-size for safetensors)", in, mf_format_name(mf_model_format(m)));
    else if (split_model(m, prefix, max_tensors, max_bytes, &nf, &st))
        rc = cli_report(&st);
    else
        printf("wrote %s-00001-of-%05zu.gguf ... (%zu files, %zu tensors)\n", prefix, nf, nf,
               mf_model_tensor_count(m));
    mf_status_clear(&st);
    mf_close(m);
    return rc;
}

const cli_cmd cli_cmd_split = {"split", run_split,
                               "split IN.gguf PREFIX [--max-tensors N] [--max-size 2G]",
                               "write a GGUF split set PREFIX-0000i-of-0000n.gguf"};
