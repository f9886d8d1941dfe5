/* convert_gguf_cli.c - "mfmt convert DIR OUT.gguf [--type T] [--threads N]":
 * a Hugging Face directory to GGUF as llama.cpp's converter writes it.
 * cmd_convert.c dispatches here for a .gguf output from a directory. */
#include "hf_cli.h"

#include <stdlib.h>

int cli_convert_to_gguf(int argc, char **argv)
{
    const char *in = NULL, *out = NULL, *type = NULL, *threads = NULL;
    for (int i = 1; i < argc; i++) {
        const char *v;
        if (cli_flag(argc, argv, &i, "--type", &v) || cli_flag(argc, argv, &i, "--outtype", &v) ||
            cli_flag(argc, argv, &i, "--dtype", &v)) {
            if (!v)
                return cli_usage_error("convert", "--type needs a value (f32, f16, bf16, q8_0, auto, Q4_K_M, ...)");
            type = v;
        } else if (cli_flag(argc, argv, &i, "--threads", &v)) {
            if (!v)
                return cli_usage_error("convert", "--threads needs a number");
            threads = v;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return cli_usage_error("convert", "unknown option %s", argv[i]);
        } else if (!in) {
            in = argv[i];
        } else if (!out) {
            out = argv[i];
        } else {
            return cli_usage_error("convert", "one input directory and one output file");
        }
    }
    if (!in || !out)
        return cli_usage_error("convert", "usage: convert DIR OUT.gguf [--type f32|f16|bf16|q8_0|auto|Q4_K_M|...]");
    return cli_convert_dir_to_gguf(in, out, type, threads ? atoi(threads) : 1);
}

int cli_convert_dir_to_gguf(const char *in, const char *out, const char *type, int threads)
{
    cli_progress prog;
    cli_progress_start(&prog, "converting", 0);
    mf_convert_gguf_opts o;
    mf_convert_gguf_opts_init(&o);
    o.type = type;
    o.threads = threads;
    o.progress = cli_progress_cb;
    o.progress_user = &prog;
    mf_status st;
    mf_status_init(&st);
    int rc = mf_convert_to_gguf(in, out, &o, &st);
    cli_progress_end(&prog);
    if (rc) {
        int e = cli_report(&st);
        mf_status_clear(&st);
        return e;
    }
    mf_status_clear(&st);
    fprintf(stderr, "mfmt: wrote %s\n", out);
    return EXIT_FINE;
}
