/* convert_gguf_cli.c - "mfmt convert DIR OUT.gguf [--type T] [--threads N]":
 * a Hugging Face directory to GGUF as llama.cpp's converter writes it.
 * cmd_convert.c dispatches here for a .gguf output from a directory. */
#include "hf_cli.h"

static void print_note(void *user, const char *msg)
{
    (void)user;
    if (!cli_quiet)
        fprintf(stderr, "mfmt: note: %s\n", msg);
}

int cli_convert_dir_to_gguf(const char *in, const char *out, const char *type, const char *layout, int threads)
{
    int lay = MF_CONVERT_LAYOUT_C392E50;
    if (layout && !strcmp(layout, "2026-02"))
        lay = MF_CONVERT_LAYOUT_2026_02;
    else if (layout && strcmp(layout, "c392e50"))
        return cli_usage_error("convert", "--layout %s: c392e50 or 2026-02", layout);
    cli_progress prog;
    cli_progress_start(&prog, "converting", 0);
    mf_convert_gguf_opts o;
    mf_convert_gguf_opts_init(&o);
    o.type = type;
    o.threads = threads;
    o.layout = lay;
    o.progress = cli_progress_cb;
    o.progress_user = &prog;
    o.note = print_note;
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
    if (!cli_quiet)
        fprintf(stderr, "mfmt: wrote %s\n", out);
    return EXIT_FINE;
}
