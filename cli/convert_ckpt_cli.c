/* convert_ckpt_cli.c - mfmt convert of a model that is not a GGUF (a
 * training checkpoint above all: DeepSpeed, torch.distributed.checkpoint,
 * Megatron-LM) to a Hugging Face directory, and of such a model or an MLX
 * directory to GGUF: the work is the library's (lib/ops/convert_model.c,
 * mf_convert_model_to_hf_dir / mf_convert_model_to_gguf); here the options,
 * the progress bar and the lines printed. doc/training.md. */
#include "cli.h"
#include "hf_cli.h"


static void model_opts(const cli_ckpt_opts *c, mf_convert_model_opts *o, cli_progress *p)
{
    mf_convert_model_opts_init(o);
    o->open_flags = c->flags | MF_OPEN_NO_SCAN; /* cmd_convert.c scanned IN already */
    o->config = c->config;
    o->tokenizer = c->tokenizer;
    o->dtype = c->dtype;
    o->max_shard_size = c->max_shard_size;
    o->threads = c->threads;
    o->progress = cli_progress_cb;
    o->progress_user = p;
}

/* IN as the library opens it: a Hub name resolved (cli_input_path); NULL
 * after printing why not. */
static const char *input_path(const char *in)
{
    mf_status st;
    mf_status_init(&st);
    const char *file = cli_input_path(in, &st);
    if (!file)
        cli_report(&st);
    mf_status_clear(&st);
    return file;
}

int cli_convert_model_to_hf_dir(const char *in, const char *out, const cli_ckpt_opts *c)
{
    const char *file = input_path(in);
    if (!file)
        return EXIT_USAGE;
    cli_progress p;
    cli_progress_start(&p, "merging", 0);
    mf_convert_model_opts o;
    model_opts(c, &o, &p);
    mf_convert_model_result res;
    mf_status st;
    mf_status_init(&st);
    int rc = mf_convert_model_to_hf_dir(file, out, &o, &res, &st);
    cli_progress_end(&p);
    if (rc) {
        rc = cli_report(&st);
    } else if (!cli_quiet) {
        size_t n = strlen(out);
        while (n > 1 && out[n - 1] == '/')
            n--;
        fprintf(stderr, "mfmt: wrote %.*s: %zu tensors as safetensors%s, %zu config/tokenizer "
                        "file%s\n", (int)n, out, res.n_tensors, c->dtype ? " (cast)" : "",
                res.n_copied, res.n_copied == 1 ? "" : "s");
        if (!res.n_copied)
            fprintf(stderr, "mfmt convert: note: no config.json beside the checkpoint: give "
                            "--config (and --tokenizer DIR) for a loadable directory\n");
    }
    mf_status_clear(&st);
    return rc;
}

int cli_convert_model_to_gguf(const char *in, const char *out, const char *type,
                              const char *layout, int threads, const cli_ckpt_opts *c)
{
    const char *file = input_path(in);
    if (!file)
        return EXIT_USAGE;
    mf_convert_gguf_opts g;
    cli_progress p;
    char written[4200];
    if (cli_gguf_opts(&g, type, layout, threads, &p, written, sizeof(written)))
        return EXIT_USAGE;
    mf_convert_model_opts o;
    model_opts(c, &o, &p);
    mf_status st;
    mf_status_init(&st);
    int rc = mf_convert_model_to_gguf(file, out, &o, &g, NULL, &st);
    cli_progress_end(&p);
    if (rc)
        rc = cli_report(&st);
    else if (!cli_quiet)
        fprintf(stderr, "mfmt: wrote %s\n", written);
    mf_status_clear(&st);
    return rc;
}
