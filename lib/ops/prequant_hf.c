/* prequant_hf.c - a pre-quantized Hugging Face directory (GPTQ, AWQ,
 * bitsandbytes, FP8, compressed-tensors, MXFP4, NVFP4: config.json's
 * quantization_config, doc/prequant.md) to a plain float one, what
 * `from_pretrained(..., dequantize=True)` + `save_pretrained` users ask
 * for: the logical tensors dequantized (mf_convert_to_safetensors writes a
 * packed model's logical view), quantization_config removed from
 * config.json and every other key kept in its order, the other files
 * (tokenizer, generation config, chat template, README) copied, the
 * quantizer's own files (AutoGPTQ's quantize_config.json, AutoAWQ's
 * quant_config.json) left out. The directory is staged beside OUT and
 * renamed when complete. */
#include "ops/prequant_hf.h"

#include "core/json_build.h"
#include "formats/formats.h"
#include "ops/pyjson.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define HF_DEFAULT_SHARD (5ull * 1000 * 1000 * 1000) /* save_pretrained's "5GB" */

static json_t *load_config(const char *dir, mf_status *st)
{
    char *p = mf_path_join_new(dir, "config.json");
    if (!p)
        return NULL;
    json_error_t err;
    json_t *cfg = mf_json_load_file(p, 0, &err);
    if (!cfg || !json_is_object(cfg)) {
        mf_fail(st, MF_ERR_FORMAT, p, -1, "config.json: %s", cfg ? "not an object" : err.text);
        json_decref(cfg);
        cfg = NULL;
    }
    free(p);
    return cfg;
}

bool mf_hf_is_prequant_dir(const char *dir)
{
    if (!mf_is_dir(dir))
        return false;
    mf_status st;
    mf_status_init(&st);
    json_t *cfg = load_config(dir, &st);
    mf_status_clear(&st);
    bool yes = cfg && json_is_object(json_object_get(cfg, "quantization_config"));
    json_decref(cfg);
    return yes;
}

static bool ends_with(const char *s, const char *suf)
{
    size_t n = strlen(s), k = strlen(suf);
    return n >= k && strcmp(s + n - k, suf) == 0;
}

/* Files of the input that the float directory does not take over: the
 * weights and their index, config.json (rewritten), the quantizers' own
 * configuration files. */
static bool left_out(const char *name)
{
    static const char *const sufs[] = {".safetensors", ".bin", ".pt", ".pth", ".index.json",
                                       ".gguf", NULL};
    static const char *const names[] = {"config.json", "quantize_config.json",
                                        "quant_config.json", "quantization_config.json", NULL};
    for (size_t i = 0; sufs[i]; i++)
        if (ends_with(name, sufs[i]))
            return true;
    for (size_t i = 0; names[i]; i++)
        if (strcmp(name, names[i]) == 0)
            return true;
    return name[0] == '.';
}

static int copy_others(const char *in, const char *out, mf_status *st)
{
    DIR *d = opendir(in);
    if (!d)
        return mf_fail(st, MF_ERR_IO, in, -1, "cannot list the directory");
    int rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d));) {
        if (left_out(e->d_name))
            continue;
        char *from = mf_path_join_new(in, e->d_name), *to = mf_path_join_new(out, e->d_name);
        struct stat sb;
        if (!from || !to)
            rc = mf_oom(st, in);
        else if (stat(from, &sb) == 0 && S_ISREG(sb.st_mode))
            rc = mf_atomic_copy_file(from, to, st);
        free(from);
        free(to);
    }
    closedir(d);
    return rc;
}

static const char *dtype_arg(mf_dtype t)
{
    return t == MF_F32 ? "f32" : t == MF_F16 ? "f16" : t == MF_BF16 ? "bf16" : NULL;
}

static const char *torch_dtype_name(mf_dtype t)
{
    return t == MF_F32 ? "float32" : t == MF_F16 ? "float16" : "bfloat16";
}

/* config.json without quantization_config; with a --dtype, the dtype keys
 * (torch_dtype, and transformers >= 4.56's dtype) name it. */
static int write_config(const char *in, const char *tmp, mf_dtype dt, mf_status *st)
{
    json_t *cfg = load_config(in, st);
    if (!cfg)
        return -1;
    json_object_del(cfg, "quantization_config");
    if (dtype_arg(dt)) {
        static const char *const keys[] = {"torch_dtype", "dtype"};
        for (size_t i = 0; i < 2; i++)
            if (json_object_get(cfg, keys[i]))
                json_object_set_new(cfg, keys[i], json_string(torch_dtype_name(dt)));
    }
    char *p = mf_path_join_new(tmp, "config.json");
    int rc = p ? mf_pyjson_write(p, cfg, 2, st) : mf_oom(st, in);
    free(p);
    json_decref(cfg);
    return rc;
}

static bool absent_or_empty(const char *p)
{
    struct stat sb;
    if (stat(p, &sb) != 0)
        return errno == ENOENT;
    DIR *d = S_ISDIR(sb.st_mode) ? opendir(p) : NULL;
    bool empty = d != NULL;
    for (struct dirent *e; d && (e = readdir(d));)
        empty &= !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
    if (d)
        closedir(d);
    return empty;
}

static void remove_flat(const char *dir)
{
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char *p = mf_path_join_new(dir, e->d_name);
        if (p)
            unlink(p);
        free(p);
    }
    if (d)
        closedir(d);
    rmdir(dir);
}

static int fill(const char *in, const char *tmp, const mf_convert_hf_opts *o, mf_status *st)
{
    mf_model *m = NULL;
    if (mf_open_model(in, 0, &m, st))
        return -1;
    mf_convert_st_opts so;
    mf_convert_st_opts_init(&so);
    so.dtype = dtype_arg(o->dtype);
    so.max_shard_size = o->max_shard_size ? o->max_shard_size : HF_DEFAULT_SHARD;
    so.progress = o->progress;
    so.progress_user = o->progress_user;
    char *weights = mf_path_join_new(tmp, "model.safetensors");
    int rc = weights ? mf_convert_to_safetensors(m, weights, &so, NULL, st) : mf_oom(st, in);
    free(weights);
    mf_close(m);
    if (rc == 0)
        rc = write_config(in, tmp, o->dtype, st);
    if (rc == 0)
        rc = copy_others(in, tmp, st);
    return rc;
}

int mf_prequant_to_hf(const char *in, const char *out, const mf_convert_hf_opts *o, mf_status *st)
{
    size_t n = strlen(out);
    while (n > 1 && out[n - 1] == '/')
        n--;
    char *final = malloc(n + 1), *tmp = malloc(n + 16);
    if (!final || !tmp) {
        free(final);
        free(tmp);
        return mf_oom(st, out);
    }
    snprintf(final, n + 1, "%.*s", (int)n, out);
    snprintf(tmp, n + 16, "%s.tmp.XXXXXX", final);
    int rc = 0;
    if (!absent_or_empty(final))
        rc = mf_fail(st, MF_ERR_USAGE, final, -1,
                     "exists and is not an empty directory: refusing to write into it");
    else if (!mkdtemp(tmp))
        rc = mf_fail(st, MF_ERR_IO, final, -1, "cannot create a directory beside it: %s",
                     strerror(errno));
    if (rc == 0) {
        chmod(tmp, 0755);
        rc = fill(in, tmp, o, st);
        if (rc == 0) {
            rmdir(final); /* an empty one is replaced */
            if (rename(tmp, final) != 0)
                rc = mf_fail(st, MF_ERR_IO, final, -1, "rename failed: %s", strerror(errno));
        }
        if (rc)
            remove_flat(tmp);
    }
    free(final);
    free(tmp);
    return rc;
}
