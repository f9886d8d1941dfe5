/* convert_ckpt_cli.c - mfmt convert of a model that is not a GGUF (a
 * training checkpoint above all: DeepSpeed, torch.distributed.checkpoint,
 * Megatron-LM) to a Hugging Face directory: the merged weights as
 * safetensors (sharded past --max-shard-size, 5GB by default as
 * save_pretrained does), then config.json and the tokenizer files, found
 * beside the checkpoint or given (--config FILE, --tokenizer DIR); and to
 * GGUF through such a directory, written beside the output and removed
 * after (the converter reads a directory). doc/training.md. */
#include "cli.h"
#include "hf_cli.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define HF_DEFAULT_SHARD (5ull * 1000 * 1000 * 1000) /* save_pretrained's "5GB" */

static const char *const aux_files[] = {
    "README.md", "generation_config.json", "tokenizer.json", "tokenizer_config.json", "tokenizer.model",
    "special_tokens_map.json", "added_tokens.json", "vocab.json", "merges.txt",
    "chat_template.jinja", NULL};

static bool is_file(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* Copies a small file through mf_atomic (whole or not at all). */
static int copy_file(const char *from, const char *to, mf_status *st)
{
    FILE *f = fopen(from, "rb");
    if (!f)
        return mf_status_fail(st, MF_ERR_IO, "%s: %s", from, strerror(errno));
    mf_atomic *w;
    int rc = mf_atomic_open(to, &w, st);
    char buf[1 << 16];
    size_t n;
    while (rc == 0 && (n = fread(buf, 1, sizeof(buf), f)) > 0)
        rc = mf_atomic_write(w, buf, n, st);
    if (rc == 0 && ferror(f))
        rc = mf_status_fail(st, MF_ERR_IO, "%s: read failed", from);
    fclose(f);
    if (w)
        rc = rc == 0 ? mf_atomic_commit(w, st) : (mf_atomic_abort(w), -1);
    return rc;
}

/* The folder that holds config.json for a checkpoint: the checkpoint
 * itself, or its parent (an HF Trainer checkpoint-N/ around DeepSpeed's
 * global_stepN/). NULL when none. */
static char *config_dir(const char *in)
{
    char p[4096];
    snprintf(p, sizeof(p), "%.4000s/config.json", in);
    if (is_file(p))
        return strdup(in);
    snprintf(p, sizeof(p), "%.4000s/../config.json", in);
    if (is_file(p)) {
        snprintf(p, sizeof(p), "%.4000s/..", in);
        return strdup(p);
    }
    return NULL;
}

static int copy_aux(const cli_ckpt_opts *o, const char *in, const char *out, size_t *copied,
                    mf_status *st)
{
    char *cdir = config_dir(in);
    char from[4400], to[4400];
    int rc = 0;
    snprintf(to, sizeof(to), "%.4000s/config.json", out);
    if (o->config) {
        rc = copy_file(o->config, to, st);
        *copied += rc == 0;
    } else if (cdir) {
        snprintf(from, sizeof(from), "%.4000s/config.json", cdir);
        rc = copy_file(from, to, st);
        *copied += rc == 0;
    }
    const char *tok = o->tokenizer ? o->tokenizer : cdir;
    char cfg_dir[4096] = "";
    if (!tok && o->config) { /* beside the given config.json */
        snprintf(cfg_dir, sizeof(cfg_dir), "%s", o->config);
        char *slash = strrchr(cfg_dir, '/');
        if (slash)
            *slash = 0;
        else
            snprintf(cfg_dir, sizeof(cfg_dir), ".");
        tok = cfg_dir;
    }
    for (size_t i = 0; rc == 0 && tok && aux_files[i]; i++) {
        snprintf(from, sizeof(from), "%.4000s/%s", tok, aux_files[i]);
        snprintf(to, sizeof(to), "%.4000s/%s", out, aux_files[i]);
        if (is_file(from)) {
            rc = copy_file(from, to, st);
            *copied += rc == 0;
        }
    }
    free(cdir);
    return rc;
}

/* Writes the merge, config and tokenizer files into the (new, empty)
 * directory `out`. */
static int write_hf_dir(const char *in, const char *out, const char *shown,
                        const cli_ckpt_opts *o)
{
    mf_status st;
    mf_status_init(&st);
    mf_model *m;
    if (cli_open_cfg(in, o->flags, o->config, false, &m, &st)) {
        int rc = cli_report(&st);
        mf_status_clear(&st);
        return rc;
    }
    mf_convert_st_opts so;
    mf_convert_st_opts_init(&so);
    so.dtype = o->dtype;
    so.threads = o->threads;
    so.max_shard_size = o->max_shard_size ? o->max_shard_size : HF_DEFAULT_SHARD;
    char weights[4400];
    snprintf(weights, sizeof(weights), "%.4000s/model.safetensors", out);
    cli_progress p;
    cli_progress_start(&p, "merging", 0);
    so.progress = cli_progress_cb;
    so.progress_user = &p;
    int rc = mf_convert_to_safetensors(m, weights, &so, NULL, &st);
    cli_progress_end(&p);
    size_t copied = 0;
    if (rc == 0 && copy_aux(o, in, out, &copied, &st))
        rc = -1;
    if (rc)
        rc = cli_report(&st);
    else if (!cli_quiet)
        fprintf(stderr, "mfmt: wrote %s: %zu tensors as safetensors%s, %zu config/tokenizer "
                        "file%s\n", shown, mf_model_tensor_count(m),
                so.dtype ? " (cast)" : "", copied, copied == 1 ? "" : "s");
    if (rc == 0 && !copied && !cli_quiet)
        fprintf(stderr, "mfmt convert: note: no config.json beside the checkpoint: give "
                        "--config (and --tokenizer DIR) for a loadable directory\n");
    mf_close(m);
    mf_status_clear(&st);
    return rc;
}

typedef struct ckpt_fill {
    const char *in;
    const cli_ckpt_opts *o;
} ckpt_fill;

static int fill_ckpt(void *ctx, const char *dir, const char *shown)
{
    const ckpt_fill *f = ctx;
    return write_hf_dir(f->in, dir, shown, f->o);
}

int cli_convert_model_to_hf_dir(const char *in, const char *out, const cli_ckpt_opts *o)
{
    ckpt_fill f = {in, o};
    return cli_write_dir_staged(out, fill_ckpt, &f);
}

/* OUT/ appears whole or not at all: it is written as OUT.tmp.XXXXXX beside
 * it and renamed when every file is in (as the GGUF -> HF direction does);
 * an existing OUT must be an empty directory. */
int cli_write_dir_staged(const char *out, cli_fill_dir_fn fill, void *ctx)
{
    char final[4096], tmp[4200];
    size_t n = strlen(out);
    while (n > 1 && out[n - 1] == '/')
        n--;
    if (n >= sizeof(final))
        return cli_usage_error("convert", "the output path is too long");
    snprintf(final, sizeof(final), "%.*s", (int)n, out);
    /* an empty OUT is replaced (removed now, the rename makes it again); a
     * file or a directory with anything in it is refused before any work */
    if (rmdir(final) != 0 && errno != ENOENT) {
        fprintf(stderr, "mfmt convert: %s: exists and is not an empty directory: refusing to "
                        "write into it\n", final);
        return EXIT_USAGE;
    }
    snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", final);
    if (!mkdtemp(tmp)) {
        fprintf(stderr, "mfmt convert: cannot make a directory beside %s: %s\n", final,
                strerror(errno));
        return EXIT_USAGE;
    }
    chmod(tmp, 0755);
    int rc = fill(ctx, tmp, final);
    if (rc == 0) {
        if (rename(tmp, final) != 0) {
            fprintf(stderr, "mfmt convert: %s: rename failed: %s\n", final, strerror(errno));
            rc = EXIT_USAGE;
        }
    }
    if (rc)
        cli_remove_flat_dir(tmp);
    return rc;
}

void cli_remove_flat_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char p[4400];
    while (d && (e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        snprintf(p, sizeof(p), "%.4000s/%.255s", dir, e->d_name);
        unlink(p);
    }
    if (d)
        closedir(d);
    rmdir(dir);
}

/* The name the directory is converted under (llama.cpp's converter names
 * the model after its folder): the folder of --config, else the
 * checkpoint's own. */
static const char *model_dir_name(const char *in, const cli_ckpt_opts *o, char *buf, size_t cap)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s", o->config ? o->config : in);
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        path[--n] = 0;
    if (o->config) { /* drop "/config.json" */
        char *s = strrchr(path, '/');
        if (s)
            *s = 0;
        else
            snprintf(path, sizeof(path), ".");
    }
    char real[4096];
    const char *p = realpath(path, real) ? real : path;
    const char *base = strrchr(p, '/');
    snprintf(buf, cap, "%s", base && base[1] ? base + 1 : "model");
    return buf;
}

/* --dtype: the merge is cast as a directory of that dtype would hold it,
 * then converted (the cast's rounding is part of what the GGUF holds). */
static int merge_then_convert(const char *in, const char *inner, const char *out,
                              const char *type, int threads, const cli_ckpt_opts *o)
{
    int rc = cli_convert_model_to_hf_dir(in, inner, o);
    return rc ? rc : cli_convert_dir_to_gguf(inner, out, type, NULL, threads, NULL);
}

/* The merge streams straight into the converter: only config.json and the
 * tokenizer files are copied into `inner` (the converter reads them from a
 * directory named as the model); no merged weights are written. */
static int convert_in_one_pass(const char *in, const char *inner, const char *out,
                               const char *type, int threads, const cli_ckpt_opts *o)
{
    if (mkdir(inner, 0777)) {
        fprintf(stderr, "mfmt convert: %s: %s\n", inner, strerror(errno));
        return EXIT_USAGE;
    }
    mf_status st;
    mf_status_init(&st);
    mf_model *m = NULL;
    size_t copied = 0;
    int rc = cli_open_cfg(in, o->flags, o->config, false, &m, &st) ||
             copy_aux(o, in, inner, &copied, &st);
    if (rc) {
        rc = cli_report(&st);
        mf_close(m);
        mf_status_clear(&st);
        return rc;
    }
    mf_status_clear(&st);
    rc = cli_convert_weights_to_gguf(inner, m, out, type, NULL, threads, NULL);
    mf_close(m);
    return rc;
}

int cli_convert_model_to_gguf(const char *in, const char *out, const char *type, int threads,
                              const cli_ckpt_opts *o)
{
    char tmp[4400], inner[4700], name[256];
    const char *slash = strrchr(out, '/');
    if (strlen(out) > 4000)
        return cli_usage_error("convert", "the output path is too long");
    if (slash)
        snprintf(tmp, sizeof(tmp), "%.*s/.%.255s.mfmt-hf-XXXXXX", (int)(slash - out), out,
                 slash + 1);
    else
        snprintf(tmp, sizeof(tmp), ".%.255s.mfmt-hf-XXXXXX", out);
    if (!mkdtemp(tmp)) {
        fprintf(stderr, "mfmt convert: cannot make a directory beside %s: %s\n", out,
                strerror(errno));
        return EXIT_USAGE;
    }
    snprintf(inner, sizeof(inner), "%s/%s", tmp, model_dir_name(in, o, name, sizeof(name)));
    int rc = o->dtype ? merge_then_convert(in, inner, out, type, threads, o)
                      : convert_in_one_pass(in, inner, out, type, threads, o);
    cli_remove_flat_dir(inner);
    rmdir(tmp);
    return rc;
}
