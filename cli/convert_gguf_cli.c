/* convert_gguf_cli.c - "mfmt convert DIR OUT.gguf [--type T] [--threads N]":
 * a Hugging Face directory to GGUF as llama.cpp's converter writes it.
 * cmd_convert.c dispatches here for a .gguf output from a directory. */
#include "hf_cli.h"

#include <unistd.h>

static void print_note(void *user, const char *msg)
{
    (void)user;
    if (!cli_quiet)
        fprintf(stderr, "mfmt: note: %s\n", msg);
}

static void count_shard(void *user, size_t no, size_t n_files, size_t first, size_t n, uint64_t bytes)
{
    (void)no, (void)first, (void)n, (void)bytes;
    *(size_t *)user = n_files;
}

/* --split-max-size / --split-max-tensors: the file written, split as
 * llama-gguf-split splits (mf_gguf_split) into PATH-0000i-of-0000n.gguf, then
 * removed. A plan of one file leaves the file as it is (GGUFWriter writes
 * one shard under the plain name). */
static int split_written(const char *path, const cli_gguf_out *g, mf_status *st)
{
    mf_model *m = NULL;
    if (mf_open(path, NULL, &m, st))
        return -1;
    mf_split_opts so;
    mf_split_opts_init(&so);
    so.max_bytes = g->split_max_size;
    so.max_tensors = g->split_max_tensors;
    so.dry_run = true;
    size_t n_files = 0;
    so.on_shard = count_shard;
    so.on_shard_user = &n_files;
    char prefix[4200];
    size_t n = strlen(path);
    snprintf(prefix, sizeof(prefix), "%.*s", (int)(n > 5 && !strcmp(path + n - 5, ".gguf") ? n - 5 : n), path);
    int rc = mf_gguf_split(m, prefix, &so, NULL, st);
    if (rc == 0 && n_files > 1) {
        so.dry_run = false;
        so.on_shard = NULL;
        rc = mf_gguf_split(m, prefix, &so, &n_files, st);
    }
    mf_close(m);
    if (rc == 0 && n_files > 1) {
        if (unlink(path))
            return mf_status_fail(st, MF_ERR_IO, "%s: cannot remove after splitting", path);
        if (!cli_quiet)
            fprintf(stderr, "mfmt: split into %zu files %s-00001-of-%05zu.gguf ...\n", n_files, prefix,
                    n_files);
    }
    return rc;
}

int cli_convert_dir_to_gguf(const char *in, const char *out, const char *type, const char *layout,
                            int threads, const cli_gguf_out *g)
{
    return cli_convert_weights_to_gguf(in, NULL, out, type, layout, threads, g);
}

int cli_convert_weights_to_gguf(const char *in, const mf_model *weights, const char *out,
                                const char *type, const char *layout, int threads,
                                const cli_gguf_out *g)
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
    o.weights = weights;
    char written[4200] = "";
    o.out_path = written;
    o.out_path_cap = sizeof(written);
    if (g) {
        o.model_name = g->model_name;
        o.metadata_override = g->metadata;
        o.vocab_only = g->vocab_only;
        o.mmproj = g->mmproj;
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
