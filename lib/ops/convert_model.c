/* convert_model.c - conversions that go through a directory: a model that
 * is not a Hugging Face directory (a training checkpoint above all:
 * DeepSpeed, torch.distributed.checkpoint, Megatron-LM; doc/training.md)
 * to a Hugging Face directory (the merged weights as safetensors, sharded
 * as save_pretrained shards them, plus config.json and the tokenizer files
 * found beside it or given), and such a model or an MLX directory to GGUF
 * through a directory written beside the output and removed after (the
 * converter reads a directory). Also the GGUF converter's --split-max-*:
 * a written file split as llama-gguf-split splits it. Moved here from the
 * CLI (cli/convert_ckpt_cli.c) so that every binding reaches them. */
#include "core/core.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define HF_DEFAULT_SHARD (5ull * 1000 * 1000 * 1000) /* save_pretrained's "5GB" */

/* The files of a Hugging Face directory besides config.json and the
 * weights that a loader or the GGUF converter reads. */
static const char *const aux_files[] = {
    "README.md", "generation_config.json", "tokenizer.json", "tokenizer_config.json", "tokenizer.model",
    "special_tokens_map.json", "added_tokens.json", "vocab.json", "merges.txt",
    "chat_template.jinja", NULL};

void mf_convert_model_opts_init(mf_convert_model_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->struct_size = sizeof(*o);
    o->threads = 1;
}

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
        return mf_fail(st, MF_ERR_IO, from, -1, "%s", strerror(errno));
    mf_atomic *w = NULL;
    int rc = mf_atomic_open(to, &w, st);
    char buf[1 << 16];
    size_t n;
    while (rc == 0 && (n = fread(buf, 1, sizeof(buf), f)) > 0)
        rc = mf_atomic_write(w, buf, n, st);
    if (rc == 0 && ferror(f))
        rc = mf_fail(st, MF_ERR_IO, from, -1, "read failed");
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

/* config.json (o->config, else beside the checkpoint) and the tokenizer
 * files (o->tokenizer, else beside config.json) into `out`. */
static int copy_aux(const mf_convert_model_opts *o, const char *in, const char *out,
                    size_t *copied, mf_status *st)
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

/* Removes a directory of plain files (a staging or temporary directory). */
static void remove_flat_dir(const char *dir)
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

static int open_input(const char *in, const mf_convert_model_opts *o, mf_model **m,
                      mf_status *st)
{
    mf_open_opts oo;
    mf_open_opts_init(&oo);
    oo.flags = o->open_flags;
    oo.config = o->config;
    return mf_open(in, &oo, m, st);
}

/* The merge, config and tokenizer files into the (new, empty) directory dir. */
static int write_hf_dir(const char *in, const char *dir, const mf_convert_model_opts *o,
                        mf_convert_model_result *res, mf_status *st)
{
    mf_model *m = NULL;
    if (open_input(in, o, &m, st))
        return -1;
    mf_convert_st_opts so;
    mf_convert_st_opts_init(&so);
    so.dtype = o->dtype;
    so.threads = o->threads;
    so.max_shard_size = o->max_shard_size ? o->max_shard_size : HF_DEFAULT_SHARD;
    so.progress = o->progress;
    so.progress_user = o->progress_user;
    char weights[4400];
    snprintf(weights, sizeof(weights), "%.4000s/model.safetensors", dir);
    mf_convert_st_result sr;
    int rc = mf_convert_to_safetensors(m, weights, &so, &sr, st);
    size_t copied = 0;
    if (rc == 0)
        rc = copy_aux(o, in, dir, &copied, st);
    if (rc == 0 && res) {
        res->n_tensors = sr.n_tensors;
        res->tensor_bytes = sr.tensor_bytes;
        res->n_files = sr.n_files;
        res->n_copied = copied;
    }
    mf_close(m);
    return rc;
}

/* OUT/ appears whole or not at all: written as OUT.tmp.XXXXXX beside it and
 * renamed when every file is in; an existing OUT must be an empty directory. */
int mf_convert_model_to_hf_dir(const char *in, const char *out, const mf_convert_model_opts *opts,
                               mf_convert_model_result *res, mf_status *st)
{
    MF_ST_GUARD(st);
    mf_convert_model_opts o;
    mf_convert_model_opts_init(&o);
    if (mf_opts_copy(&o, sizeof(o), opts, "mf_convert_model_opts", st))
        return -1;
    if (res)
        memset(res, 0, sizeof(*res));
    char final[4096], tmp[4200];
    size_t n = strlen(out);
    while (n > 1 && out[n - 1] == '/')
        n--;
    if (n >= sizeof(final) - 16)
        return mf_fail(st, MF_ERR_USAGE, out, -1, "the output path is too long");
    snprintf(final, sizeof(final), "%.*s", (int)n, out);
    /* an empty OUT is replaced (removed now, the rename makes it again); a
     * file or a directory with anything in it is refused before any work */
    if (rmdir(final) != 0 && errno != ENOENT)
        return mf_fail(st, MF_ERR_USAGE, final, -1, "exists and is not an empty directory: "
                                                    "refusing to write into it");
    snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", final);
    if (!mkdtemp(tmp))
        return mf_fail(st, MF_ERR_IO, final, -1, "cannot make a directory beside it: %s",
                       strerror(errno));
    chmod(tmp, 0755);
    int rc = write_hf_dir(in, tmp, &o, res, st);
    if (rc == 0 && rename(tmp, final) != 0)
        rc = mf_fail(st, MF_ERR_IO, final, -1, "rename failed: %s", strerror(errno));
    if (rc)
        remove_flat_dir(tmp);
    return rc;
}

/* ------------------------------------------------------------------ GGUF */

/* The name the directory is converted under (llama.cpp's converter names
 * the model after its folder): the folder of o->config, else the input's. */
static void model_dir_name(const char *in, const mf_convert_model_opts *o, char *buf, size_t cap)
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
}

/* The merge streams straight into the converter: only config.json and the
 * tokenizer files are copied into `inner` (the converter reads them from a
 * directory named as the model); no merged weights are written. */
static int convert_in_one_pass(const char *in, const char *inner, const char *out,
                               const mf_convert_model_opts *o, const mf_convert_gguf_opts *g,
                               mf_convert_model_result *res, mf_status *st)
{
    if (mkdir(inner, 0777))
        return mf_fail(st, MF_ERR_IO, inner, -1, "%s", strerror(errno));
    mf_model *m = NULL;
    size_t copied = 0;
    int rc = open_input(in, o, &m, st) || copy_aux(o, in, inner, &copied, st) ? -1 : 0;
    mf_convert_gguf_opts go = *g;
    go.weights = m;
    if (rc == 0)
        rc = mf_convert_to_gguf(inner, out, &go, st);
    if (rc == 0 && res) {
        res->n_tensors = mf_model_tensor_count(m);
        res->n_copied = copied;
    }
    mf_close(m);
    return rc;
}

/* A cast (o->dtype): the merge is written as a directory of that dtype
 * would hold it, then converted (the cast's rounding is part of the GGUF). */
static int merge_then_convert(const char *in, const char *inner, const char *out,
                              const mf_convert_model_opts *o, const mf_convert_gguf_opts *g,
                              mf_convert_model_result *res, mf_status *st)
{
    if (mf_convert_model_to_hf_dir(in, inner, o, res, st))
        return -1;
    return mf_convert_to_gguf(inner, out, g, st);
}

/* An MLX directory: written unquantized (the Hugging Face layout, every
 * weight dequantized) into inner, then that directory converted. */
static int mlx_then_convert(const char *in, const char *inner, const char *out,
                            const mf_convert_model_opts *o, const mf_convert_gguf_opts *g,
                            mf_status *st)
{
    mf_convert_mlx_opts mo;
    mf_convert_mlx_opts_init(&mo);
    mo.dequantize = true;
    mo.progress = o->progress;
    mo.progress_user = o->progress_user;
    if (mf_convert_to_mlx(in, inner, &mo, st))
        return -1;
    return mf_convert_to_gguf(inner, out, g, st);
}

/* The last component of the MLX directory IN ("hf" when it has none): the
 * dequantized directory is named after it, so that without general.name in
 * config.json the GGUF's name comes from the directory's (as llama.cpp's
 * converter names it) and the file is the one llama.cpp writes for
 * `mlx_lm.convert -d`'s output. */
static void mlx_dir_base_name(const char *in, char *base, size_t cap)
{
    char *abs = realpath(in, NULL);
    const char *p = abs ? abs : in, *slash = strrchr(p, '/');
    const char *name = slash ? slash + 1 : p;
    snprintf(base, cap, "%s", *name && strcmp(name, ".") && strcmp(name, "..") ? name : "hf");
    free(abs);
}

static bool is_mlx_dir(const char *path)
{
    mf_detection d;
    return mf_detect(path, &d, NULL) == 0 && d.format == MF_FMT_MLX;
}

int mf_convert_model_to_gguf(const char *in, const char *out, const mf_convert_model_opts *opts,
                             const mf_convert_gguf_opts *gopts, mf_convert_model_result *res,
                             mf_status *st)
{
    MF_ST_GUARD(st);
    mf_convert_model_opts o;
    mf_convert_model_opts_init(&o);
    mf_convert_gguf_opts g;
    mf_convert_gguf_opts_init(&g);
    if (mf_opts_copy(&o, sizeof(o), opts, "mf_convert_model_opts", st) ||
        mf_opts_copy(&g, sizeof(g), gopts, "mf_convert_gguf_opts", st))
        return -1;
    if (res)
        memset(res, 0, sizeof(*res));
    if (!out || !*out)
        return mf_fail(st, MF_ERR_USAGE, in, -1, "converting this model to GGUF needs the output "
                                                 "file's name");
    if (strlen(out) > 4000)
        return mf_fail(st, MF_ERR_USAGE, out, -1, "the output path is too long");
    if (g.arch_file || g.model_name || g.metadata_override || g.vocab_only)
        return mf_fail(st, MF_ERR_USAGE, in, -1, "arch_file, model_name, metadata and vocab_only "
                                                 "are for a Hugging Face directory's GGUF");
    /* the directory beside OUT (same file system, removed after) */
    char tmp[4400], inner[4700], name[256];
    const char *slash = strrchr(out, '/');
    bool mlx = is_mlx_dir(in);
    if (slash)
        snprintf(tmp, sizeof(tmp), "%.*s/.%.255s.mfmt-hf-XXXXXX", (int)(slash - out), out, slash + 1);
    else
        snprintf(tmp, sizeof(tmp), ".%.255s.mfmt-hf-XXXXXX", out);
    if (!mkdtemp(tmp))
        return mf_fail(st, MF_ERR_IO, out, -1, "cannot make a directory beside it: %s",
                       strerror(errno));
    if (mlx)
        mlx_dir_base_name(in, name, sizeof(name));
    else
        model_dir_name(in, &o, name, sizeof(name));
    snprintf(inner, sizeof(inner), "%s/%s", tmp, name);
    int rc = mlx      ? mlx_then_convert(in, inner, out, &o, &g, st)
           : o.dtype ? merge_then_convert(in, inner, out, &o, &g, res, st)
                     : convert_in_one_pass(in, inner, out, &o, &g, res, st);
    remove_flat_dir(inner);
    rmdir(tmp);
    return rc;
}

/* ------------------------------------------------- --split-max-* after */

static void count_shard(void *user, size_t no, size_t n_files, size_t first, size_t n,
                        uint64_t bytes)
{
    (void)no, (void)first, (void)n, (void)bytes;
    *(size_t *)user = n_files;
}

int mf_gguf_split_written(const char *path, uint64_t max_bytes, uint64_t max_tensors,
                          size_t *n_files, mf_status *st)
{
    MF_ST_GUARD(st);
    if (n_files)
        *n_files = 0;
    mf_open_opts oo;
    mf_open_opts_init(&oo);
    oo.flags = MF_OPEN_NO_SCAN;
    mf_model *m = NULL;
    if (mf_open(path, &oo, &m, st))
        return -1;
    mf_split_opts so;
    mf_split_opts_init(&so);
    so.max_bytes = max_bytes;
    so.max_tensors = max_tensors;
    so.dry_run = true;
    size_t nf = 0;
    so.on_shard = count_shard;
    so.on_shard_user = &nf;
    char prefix[4200];
    size_t n = strlen(path);
    bool ext = n > 5 && !strcmp(path + n - 5, ".gguf");
    snprintf(prefix, sizeof(prefix), "%.*s", (int)(ext ? n - 5 : n), path);
    int rc = mf_gguf_split(m, prefix, &so, NULL, st);
    if (rc == 0 && nf > 1) {
        so.dry_run = false;
        so.on_shard = NULL;
        rc = mf_gguf_split(m, prefix, &so, &nf, st);
    }
    mf_close(m);
    if (rc == 0 && nf > 1 && unlink(path))
        return mf_fail(st, MF_ERR_IO, path, -1, "cannot remove after splitting: %s",
                       strerror(errno));
    if (rc == 0 && n_files)
        *n_files = nf ? nf : 1;
    return rc;
}
