/* convert_gguf_cli.c - "mfmt convert DIR OUT.gguf [--type T] [--threads N]":
 * a Hugging Face directory to GGUF as llama.cpp's converter writes it.
 * cmd_convert.c dispatches here for a .gguf output from a directory. */
#include "hf_cli.h"

#include <unistd.h>

void cli_convert_note(void *user, const char *msg)
{
    (void)user;
    if (!cli_quiet)
        fprintf(stderr, "mfmt: note: %s\n", msg);
}

int cli_convert_layout(const char *layout, int *out)
{
    *out = MF_CONVERT_LAYOUT_C392E50;
    if (layout && !strcmp(layout, "2026-02"))
        *out = MF_CONVERT_LAYOUT_2026_02;
    else if (layout && strcmp(layout, "c392e50"))
        return cli_usage_error("convert", "--layout %s: c392e50 or 2026-02", layout), -1;
    return 0;
}

/* --split-max-size / --split-max-tensors: the file written, split as
 * llama-gguf-split splits (mf_gguf_split_written). */
static int split_written(const char *path, const cli_gguf_out *g, mf_status *st)
{
    size_t n_files = 0;
    if (mf_gguf_split_written(path, g->split_max_size, g->split_max_tensors, &n_files, st))
        return -1;
    if (n_files > 1 && !cli_quiet) {
        size_t n = strlen(path);
        int keep = (int)(n > 5 && !strcmp(path + n - 5, ".gguf") ? n - 5 : n);
        fprintf(stderr, "mfmt: split into %zu files %.*s-00001-of-%05zu.gguf ...\n", n_files, keep,
                path, n_files);
    }
    return 0;
}

int cli_gguf_opts(mf_convert_gguf_opts *o, const char *type, const char *layout, int threads,
                  cli_progress *prog, char *written, size_t cap)
{
    mf_convert_gguf_opts_init(o);
    if (cli_convert_layout(layout, &o->layout))
        return -1;
    cli_progress_start(prog, "converting", 0);
    o->type = type;
    o->threads = threads;
    o->progress = cli_progress_cb;
    o->progress_user = prog;
    o->note = cli_convert_note;
    written[0] = 0;
    o->out_path = written;
    o->out_path_cap = cap;
    return 0;
}

int cli_convert_dir_to_gguf(const char *in, const char *out, const char *type, const char *layout,
                            int threads, const cli_gguf_out *g)
{
    mf_convert_gguf_opts o;
    cli_progress prog;
    char written[4200];
    if (cli_gguf_opts(&o, type, layout, threads, &prog, written, sizeof(written)))
        return EXIT_USAGE;
    if (g) {
        o.model_name = g->model_name;
        o.metadata_override = g->metadata;
        o.vocab_only = g->vocab_only;
        o.mmproj = g->mmproj;
        o.mistral_format = g->mistral_format ? MF_MISTRAL_ON : MF_MISTRAL_AUTO;
        o.arch_file = g->arch_file;
    }
    mf_status st;
    mf_status_init(&st);
    int rc = mf_convert_to_gguf(in, out, &o, &st);
    cli_progress_end(&prog);
    if (rc == 0 && !cli_quiet)
        fprintf(stderr, "mfmt: wrote %s\n", written);
    if (rc == 0 && g && (g->split_max_size || g->split_max_tensors) && split_written(written, g, &st)) {
        unlink(written); /* nothing half-done is left: neither the set (mf_gguf_split) nor this */
        rc = -1;
    }
    if (rc) {
        int e = cli_report(&st);
        mf_status_clear(&st);
        return e;
    }
    mf_status_clear(&st);
    return EXIT_FINE;
}
