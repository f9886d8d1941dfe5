/* cmd_convert.c - mfmt convert IN OUT [--to FORMAT] [options]: the target
 * format comes from --to or OUT's extension, and each target is one
 * function below (GGUF hands over to convert_gguf_cli.c). Every input is scanned first: a dangerous one is refused
 * unless --allow-unsafe (which still runs nothing from it). */
#include "cli.h"
#include "hf_cli.h"

#include <dirent.h>
#include <jansson.h>
#include <stdlib.h>
#include <strings.h>
#include <unistd.h>

typedef struct convert_args {
    const char *in, *in_shown, *out, *to, *key, *shard_size; /* in_shown: "-" for stdin */
    bool allow_unsafe, include_optimizer, keep_tied;
    const char *type, *threads, *layout; /* GGUF output */
    const char *config, *tokenizer; /* training checkpoints (doc/training.md) */
    unsigned train_flags;           /* MF_OPEN_TRAIN_* */
    bool mlx, quantize, dequantize, lossless; /* MLX output */
    const char *q_bits, *q_group_size, *quant_predicate, *mlx_kernel;
    /* convert_hf_to_gguf.py's flags (GGUF output of an HF directory) */
    const char *model_name, *metadata, *split_max_size, *split_max_tensors;
    bool vocab_only, mmproj, mistral_format;
    const char *arch_file; /* GGUF <-> HF directory: the architecture from a file */
} convert_args;

/* --dtype as a float type of safetensors / HF output (MF_DTYPE_INVALID
 * when not given); -1 when not one of them. */
static int float_dtype(const char *v, mf_dtype *out)
{
    *out = MF_DTYPE_INVALID;
    if (!v)
        return 0;
    *out = !strcasecmp(v, "f32") ? MF_F32 : !strcasecmp(v, "f16") ? MF_F16
         : !strcasecmp(v, "bf16") ? MF_BF16 : MF_DTYPE_INVALID;
    return *out == MF_DTYPE_INVALID ? -1 : 0;
}

/* What IN holds, from its bytes; MF_FMT_UNKNOWN when it cannot be read. */
static mf_format detected_format(const char *in)
{
    mf_detection d;
    mf_status st;
    mf_status_init(&st);
    int rc = mf_detect(in, &d, &st);
    mf_status_clear(&st);
    return rc == 0 ? d.format : MF_FMT_UNKNOWN;
}

/* A training checkpoint (or anything but a GGUF file and an HF directory)? */
static bool is_checkpoint(const char *in)
{
    mf_format f = detected_format(in);
    return f == MF_FMT_DEEPSPEED || f == MF_FMT_DCP || f == MF_FMT_MEGATRON;
}

static int ckpt_opts(const convert_args *a, cli_ckpt_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->flags = a->train_flags;
    o->config = a->config;
    o->tokenizer = a->tokenizer;
    if (a->shard_size && mf_parse_size(a->shard_size, &o->max_shard_size))
        return cli_usage_error("convert", "--max-shard-size takes a size like 5GB, 500MB or 2GiB");
    return 0;
}

typedef int (*convert_target)(const convert_args *a);

/* --threads N (1..64); default: the processors online (as mfmt quantize)
 * when `online`, else 1 (a merge's copies: on 2 shared cores, 2 threads
 * measured no faster to disk and 1.2x slower to tmpfs, bench/README.md). */
static int convert_threads(const convert_args *a, bool online_default, int *threads)
{
    long online = online_default ? sysconf(_SC_NPROCESSORS_ONLN) : 1;
    *threads = online < 1 ? 1 : online > 64 ? 64 : (int)online;
    if (a->threads) {
        char *end;
        long n = strtol(a->threads, &end, 10);
        if (*end || n < 1 || n > 64)
            return cli_usage_error("convert", "--threads takes a number from 1 to 64");
        *threads = (int)n;
    }
    return 0;
}

/* --------------------------------------------------------- safetensors */

static int to_safetensors(const convert_args *a)
{
    mf_convert_st_opts o;
    mf_convert_st_opts_init(&o);
    mf_dtype cast;
    if (float_dtype(a->type, &cast))
        return cli_usage_error("convert", "--dtype for safetensors takes f32, f16 or bf16");
    int trc = convert_threads(a, false, &o.threads);
    if (trc)
        return trc;
    o.dtype = a->type;
    o.key = a->key;
    o.include_optimizer = a->include_optimizer;
    o.keep_tied = a->keep_tied;
    if (a->shard_size && mf_parse_size(a->shard_size, &o.max_shard_size))
        return cli_usage_error("convert", "--max-shard-size takes a size like 5GB, 500MB or 2GiB");
    mf_status st;
    mf_status_init(&st);
    mf_model *m;
    if (cli_open_cfg(a->in, a->train_flags, a->config, false, &m, &st)) {
        int rc = cli_report(&st);
        mf_status_clear(&st);
        return rc;
    }
    uint64_t total = 0;
    size_t strings = 0;
    for (size_t i = 0; i < mf_model_tensor_count(m); i++) {
        total += mf_tensor_nbytes(mf_model_tensor_at(m, i));
        strings += mf_tensor_dtype(mf_model_tensor_at(m, i)) == MF_STRING;
    }
    if (strings && !cli_quiet)
        fprintf(stderr, "mfmt convert: note: %zu STRING tensor%s left out (safetensors holds no strings)\n",
                strings, strings == 1 ? "" : "s");
    cli_progress p;
    cli_progress_start(&p, "converting", total);
    o.progress = cli_progress_cb; /* the bytes written (dequantized MLX weights outgrow the input's) */
    o.progress_user = &p;
    mf_convert_st_result res;
    int rc = mf_convert_to_safetensors(m, a->out, &o, &res, &st);
    cli_progress_end(&p);
    if (rc) {
        rc = cli_report(&st);
    } else if (!cli_quiet) {
        size_t n = res.n_tensors; /* what was written: unwrapped, tied names once */
        char sz[32];
        cli_fmt_bytes(sz, sizeof(sz), res.tensor_bytes);
        fprintf(stderr, "mfmt: wrote %s%s: %zu tensor%s, %s of tensor data\n", a->out,
                o.max_shard_size ? " (shards and index)" : "", n, n == 1 ? "" : "s", sz);
    }
    mf_close(m);
    mf_status_clear(&st);
    return rc;
}

/* ---------------------------------------------------------------- GGUF */

static bool is_mlx_dir(const char *path)
{
    mf_detection d;
    return mf_detect(path, &d, NULL) == 0 && d.format == MF_FMT_MLX;
}

/* convert_hf_to_gguf.py's split_str_to_n_bytes: N, NK, NM, NG in decimal
 * units (1M = 1000*1000 bytes); other spellings ("2GiB") through
 * mf_parse_size. */
static int parse_split_size(const char *v, uint64_t *out)
{
    size_t n = strlen(v), digits = strspn(v, "0123456789");
    if (digits > 0 && digits == n) {
        *out = strtoull(v, NULL, 10);
        return 0;
    }
    if (digits > 0 && digits == n - 1 && strchr("KMG", v[n - 1])) {
        uint64_t x = strtoull(v, NULL, 10),
                 unit = v[n - 1] == 'K' ? 1000ull : v[n - 1] == 'M' ? 1000000ull : 1000000000ull;
        if (x > UINT64_MAX / unit)
            return -1;
        *out = x * unit;
        return 0;
    }
    return mf_parse_size(v, out);
}

static int gguf_flags(const convert_args *a, cli_gguf_out *g)
{
    memset(g, 0, sizeof(*g));
    g->model_name = a->model_name;
    g->metadata = a->metadata;
    g->vocab_only = a->vocab_only;
    g->mmproj = a->mmproj;
    g->mistral_format = a->mistral_format;
    g->arch_file = a->arch_file;
    if (a->split_max_size && parse_split_size(a->split_max_size, &g->split_max_size))
        return cli_usage_error("convert", "--split-max-size takes N, NK, NM or NG (decimal units, "
                                          "as convert_hf_to_gguf.py)");
    if (a->split_max_tensors) {
        char *end;
        unsigned long long x = strtoull(a->split_max_tensors, &end, 10);
        if (*end || a->split_max_tensors[0] == '-' || !a->split_max_tensors[0])
            return cli_usage_error("convert", "--split-max-tensors takes a count");
        g->split_max_tensors = x;
    }
    if (g->vocab_only && (g->split_max_size || g->split_max_tensors))
        return cli_usage_error("convert", "--vocab-only writes no tensors: nothing to split");
    return 0;
}

static bool has_gguf_flags(const convert_args *a)
{
    return a->model_name || a->metadata || a->vocab_only || a->mmproj || a->mistral_format || a->split_max_size ||
           a->split_max_tensors;
}

/* A Hugging Face directory to GGUF (convert_gguf_cli.c). */
static int to_gguf(const convert_args *a)
{
    if (a->key || a->shard_size || a->include_optimizer)
        return cli_usage_error("convert", "--key, --max-shard-size and --include-optimizer are "
                                          "for safetensors output");
    int threads, trc = convert_threads(a, true, &threads);
    if (trc)
        return trc;
    bool hf_dir = !is_checkpoint(a->in) && !is_mlx_dir(a->in);
    if (!hf_dir && a->arch_file)
        return cli_usage_error("convert", "--arch-file is for a Hugging Face directory's GGUF and back");
    if (!hf_dir && (has_gguf_flags(a) || !a->out))
        return cli_usage_error("convert", "--model-name, --metadata, --vocab-only, --mmproj, --split-max-* "
                                          "and the default output name are for a Hugging Face "
                                          "directory's GGUF; give OUT.gguf");
    if (is_checkpoint(a->in)) {
        cli_ckpt_opts o;
        if (ckpt_opts(a, &o))
            return EXIT_USAGE;
        return cli_convert_model_to_gguf(a->in, a->out, a->type, a->layout, threads, &o);
    }
    if (is_mlx_dir(a->in)) { /* dequantized to a directory beside OUT, then converted */
        cli_ckpt_opts o = {0};
        return cli_convert_model_to_gguf(a->in, a->out, a->type, a->layout, threads, &o);
    }
    cli_gguf_out g;
    if (gguf_flags(a, &g))
        return EXIT_USAGE;
    return cli_convert_dir_to_gguf(a->in, a->out, a->type, a->layout, threads, &g);
}

static int on_hf_progress(void *ctx, uint64_t done, uint64_t total)
{
    cli_progress *p = ctx;
    if (!p->total)
        cli_progress_start(p, "writing", total);
    cli_progress_add(p, done - p->done);
    return 0;
}

/* A GGUF to a Hugging Face directory: OUT ends with '/' or --to hf; a
 * training checkpoint's merge to one (convert_ckpt_cli.c). */
/* Whether IN holds a GGUF (the GGUF -> HF conversion); anything else is
 * written as a weights directory (sharded safetensors + index). */
static bool is_gguf_file(const char *in)
{
    return detected_format(in) == MF_FMT_GGUF;
}

/* A Hugging Face directory whose config.json has a quantization_config
 * (GPTQ, AWQ, FP8...): mf_convert_to_hf writes its float twin, with the
 * config's quantization_config removed (doc/prequant.md). */
static bool is_prequant_dir(const char *in)
{
    if (detected_format(in) != MF_FMT_HF_DIR)
        return false;
    char p[4200];
    snprintf(p, sizeof(p), "%.4000s/config.json", in);
    json_t *cfg = json_load_file(p, 0, NULL);
    bool yes = json_is_object(json_object_get(cfg, "quantization_config"));
    json_decref(cfg);
    return yes;
}

static int to_hf_dir(const convert_args *a)
{
    /* a training checkpoint, or any other model (x.bin, x.pt, ...): its
     * tensors as save_pretrained shards them (5GB, model.safetensors.index.json) */
    if (is_checkpoint(a->in) || (!is_gguf_file(a->in) && !is_prequant_dir(a->in))) {
        if (a->arch_file)
            return cli_usage_error("convert", "--arch-file is for a Hugging Face directory's GGUF and back");
        cli_ckpt_opts co;
        if (a->key || a->include_optimizer || ckpt_opts(a, &co))
            return cli_usage_error("convert", "--key and --include-optimizer are not "
                                              "options of a checkpoint's merge");
        int trc = convert_threads(a, false, &co.threads);
        if (trc)
            return trc;
        mf_dtype cast;
        if (float_dtype(a->type, &cast))
            return cli_usage_error("convert", "--dtype takes f32, f16 or bf16");
        co.dtype = a->type;
        return cli_convert_model_to_hf_dir(a->in, a->out, &co);
    }
    mf_convert_hf_opts o;
    mf_convert_hf_opts_init(&o);
    o.progress = on_hf_progress;
    o.arch_file = a->arch_file;
    if (a->threads || a->key || a->include_optimizer)
        return cli_usage_error("convert", "--threads, --key and --include-optimizer are not "
                                          "options of GGUF -> Hugging Face");
    if (a->type) {
        const char *v = a->type;
        o.dtype = !strcasecmp(v, "f32") ? MF_F32 : !strcasecmp(v, "f16") ? MF_F16
                : !strcasecmp(v, "bf16") ? MF_BF16 : MF_DTYPE_INVALID;
        if (o.dtype == MF_DTYPE_INVALID)
            return cli_usage_error("convert", "--dtype takes f32, f16 or bf16");
    }
    if (a->shard_size && mf_parse_size(a->shard_size, &o.max_shard_size))
        return cli_usage_error("convert", "--max-shard-size: cannot read \"%s\"", a->shard_size);
    cli_progress prog = {0};
    o.progress_user = &prog;
    mf_status st;
    mf_status_init(&st);
    int rc = mf_convert_to_hf(a->in, a->out, &o, &st);
    if (prog.on || prog.total)
        cli_progress_end(&prog);
    if (rc) {
        rc = cli_report(&st);
    } else if (!cli_quiet) {
        if (is_gguf_file(a->in))
            fprintf(stderr, "wrote %s: config.json, generation_config.json, tokenizer files, "
                            "model card, %s\n",
                    a->out, o.max_shard_size ? "weights (sharded past --max-shard-size)"
                                             : "model.safetensors");
        else
            fprintf(stderr, "wrote %s: the weights dequantized to floats, config.json without "
                            "quantization_config, the other files copied\n", a->out);
    }
    mf_status_clear(&st);
    return rc;
}

/* ----------------------------------------------------------------- MLX */

static int mlx_int_arg(const char *v, const char *opt, int *out)
{
    char *end;
    long n = v ? strtol(v, &end, 10) : 0;
    if (v && (*end || n < 1 || n > 1024))
        return cli_usage_error("convert", "%s takes a number", opt);
    *out = (int)n;
    return 0;
}

static int mlx_opts(const convert_args *a, mf_convert_mlx_opts *o)
{
    mf_convert_mlx_opts_init(o);
    if (a->threads || a->key || a->include_optimizer)
        return cli_usage_error("convert", "--threads, --key and --include-optimizer are not "
                                          "options of MLX output");
    if (mlx_int_arg(a->q_bits, "--q-bits", &o->bits) ||
        mlx_int_arg(a->q_group_size, "--q-group-size", &o->group_size))
        return EXIT_USAGE;
    /* --q-bits, --q-group-size and a recipe mean quantization (-q stays --quiet) */
    o->quantize = a->quantize || a->q_bits || a->q_group_size || a->quant_predicate;
    o->quant_predicate = a->quant_predicate;
    o->dequantize = a->dequantize;
    o->lossless = a->lossless;
    if (a->type) {
        const char *v = a->type;
        o->dtype = !strcasecmp(v, "f32") || !strcasecmp(v, "float32") ? MF_F32
                 : !strcasecmp(v, "f16") || !strcasecmp(v, "float16") ? MF_F16
                 : !strcasecmp(v, "bf16") || !strcasecmp(v, "bfloat16") ? MF_BF16
                 : MF_DTYPE_INVALID;
        if (o->dtype == MF_DTYPE_INVALID)
            return cli_usage_error("convert", "--dtype takes f16, bf16 or f32 for MLX output");
    }
    if (a->mlx_kernel && strcmp(a->mlx_kernel, "cpu") && strcmp(a->mlx_kernel, "metal"))
        return cli_usage_error("convert", "--mlx-kernel takes cpu or metal");
    o->kernel = a->mlx_kernel && !strcmp(a->mlx_kernel, "metal") ? MF_MLX_KERNEL_METAL
                                                                 : MF_MLX_KERNEL_CPU;
    if (a->shard_size && mf_parse_size(a->shard_size, &o->max_shard_size))
        return cli_usage_error("convert", "--max-shard-size: cannot read \"%s\"", a->shard_size);
    return 0;
}

static int on_mlx_progress(void *ctx, uint64_t done, uint64_t total)
{
    cli_progress *p = ctx;
    if (!p->total)
        cli_progress_start(p, "writing", total);
    cli_progress_add(p, done - p->done);
    return 0;
}

static int run_mlx(const char *in, const char *out, mf_convert_mlx_opts *o)
{
    cli_progress prog = {0};
    o->progress = on_mlx_progress;
    o->progress_user = &prog;
    mf_status st;
    mf_status_init(&st);
    int rc = mf_convert_to_mlx(in, out, o, &st);
    if (prog.on || prog.total)
        cli_progress_end(&prog);
    rc = rc ? cli_report(&st) : 0;
    mf_status_clear(&st);
    return rc;
}

/* An HF directory, a GGUF or an MLX directory to an MLX directory. */
static int to_mlx(const convert_args *a)
{
    mf_convert_mlx_opts o;
    if (mlx_opts(a, &o))
        return EXIT_USAGE;
    int rc = run_mlx(a->in, a->out, &o);
    if (rc == 0 && !cli_quiet)
        fprintf(stderr, "wrote %s: %s MLX model (config.json, model.safetensors.index.json, "
                        "weights, tokenizer files, README.md)\n",
                a->out, o.quantize || o.lossless ? "a quantized" : o.dequantize ? "a dequantized"
                                                                              : "an");
    return rc;
}

static const struct {
    const char *name, *ext;
    convert_target run;
} targets[] = {
    {"safetensors", ".safetensors", to_safetensors},
    {"gguf", ".gguf", to_gguf},
    {"hf", "/", to_hf_dir},
    {"mlx", NULL, to_mlx},
};

#define N_TARGETS (sizeof(targets) / sizeof(targets[0]))

static convert_target pick_target(const convert_args *a, bool outfile)
{
    /* no OUT, or --outfile (convert_hf_to_gguf.py's): GGUF unless --to says */
    if (!a->to && (!a->out || outfile))
        return to_gguf;
    if (!a->out)
        return NULL;
    size_t ol = strlen(a->out);
    if (a->mlx && (!a->to || !strcmp(a->to, "mlx")))
        return to_mlx;
    for (size_t i = 0; i < N_TARGETS; i++) {
        if (!targets[i].ext) {
            if (a->to && !strcmp(a->to, targets[i].name))
                return targets[i].run;
            continue;
        }
        size_t el = strlen(targets[i].ext);
        if (a->to ? strcmp(a->to, targets[i].name) == 0
                  : ol > el && strcmp(a->out + ol - el, targets[i].ext) == 0)
            return targets[i].run;
    }
    return NULL;
}

/* ------------------------------------------------------------- safety */

typedef struct safety {
    mf_verdict worst;
    char first[600];
} safety;

static int on_scanned(void *ctx, const mf_scan_report *r)
{
    safety *s = ctx;
    if (r->verdict <= s->worst)
        return 0;
    s->worst = r->verdict;
    for (size_t i = 0; i < r->n_findings; i++)
        if (r->findings[i].severity == r->verdict) {
            const mf_finding *f = &r->findings[i];
            snprintf(s->first, sizeof(s->first), "%s: %s%s%s", r->path,
                     f->global ? f->global : "", f->global ? ": " : "", f->message);
            break;
        }
    return 0;
}

/* 0 to go on; an exit code to stop. */
static int check_safety(const convert_args *a)
{
    safety s = {MF_VERDICT_SAFE, ""};
    mf_status st;
    mf_status_init(&st);
    int rc = mf_scan_path(a->in, on_scanned, &s, &st);
    int code = rc ? cli_report(&st) : 0;
    mf_status_clear(&st);
    if (code)
        return code;
    char buf[sizeof(s.first) + 64];
    const char *first = cli_unspooled(s.first, buf, sizeof(buf)); /* "-" for stdin */
    if (s.worst == MF_VERDICT_DANGEROUS && !a->allow_unsafe) {
        fprintf(stderr, "mfmt convert: %s is dangerous to load (%s); see `mfmt scan %s`.\n"
                        "  --allow-unsafe converts it anyway (mfmt never runs what it holds)\n",
                a->in_shown, first, a->in_shown);
        return EXIT_BAD_INPUT;
    }
    if (s.worst == MF_VERDICT_DANGEROUS)
        fprintf(stderr, "mfmt convert: warning: %s is dangerous to load (%s); converting "
                        "without running it\n", a->in_shown, first);
    else if (s.worst == MF_VERDICT_UNKNOWN)
        fprintf(stderr, "mfmt convert: warning: %s reaches names off the allowlist (%s); "
                        "converting without running them\n", a->in_shown, first);
    return 0;
}

/* ------------------------------------------------------------- parsing */

static int parse(const cli_args *args, convert_args *a)
{
    memset(a, 0, sizeof(*a));
    a->to = cli_get(args, "--to");
    a->key = cli_get(args, "--key");
    a->shard_size = cli_get(args, "--max-shard-size");
    a->allow_unsafe = cli_has(args, "--allow-unsafe");
    a->include_optimizer = cli_has(args, "--include-optimizer");
    a->keep_tied = cli_has(args, "--keep-tied");
    a->type = cli_get(args, "--type");
    a->threads = cli_get(args, "--threads");
    a->layout = cli_get(args, "--layout");
    a->config = cli_get(args, "--config");
    a->tokenizer = cli_get(args, "--tokenizer");
    a->train_flags = (cli_has(args, "--from-module-states") ? MF_OPEN_TRAIN_MODULE_STATES : 0) |
                     (cli_has(args, "--exclude-frozen-parameters") ? MF_OPEN_TRAIN_EXCLUDE_FROZEN
                                                                   : 0);
    a->mlx = cli_has(args, "--mlx");
    a->quantize = cli_has(args, "--quantize");
    a->dequantize = cli_has(args, "--dequantize");
    a->lossless = cli_has(args, "--lossless");
    a->q_bits = cli_get(args, "--q-bits");
    a->q_group_size = cli_get(args, "--q-group-size");
    a->quant_predicate = cli_get(args, "--quant-predicate");
    a->mlx_kernel = cli_get(args, "--mlx-kernel");
    bool mlx_only = a->quantize || a->dequantize || a->q_bits || a->q_group_size ||
                    a->quant_predicate || a->mlx_kernel || a->lossless;
    if (mlx_only && !a->mlx && !(a->to && !strcmp(a->to, "mlx")))
        return cli_usage_error("convert", "--quantize, --dequantize, --q-bits, --q-group-size, "
                                          "--quant-predicate, --mlx-kernel and --lossless are for "
                                          "MLX output (--mlx)");
    a->model_name = cli_get(args, "--model-name");
    a->metadata = cli_get(args, "--metadata");
    a->vocab_only = cli_has(args, "--vocab-only");
    a->mmproj = cli_has(args, "--mmproj");
    a->mistral_format = cli_has(args, "--mistral-format");
    a->split_max_size = cli_get(args, "--split-max-size");
    a->split_max_tensors = cli_get(args, "--split-max-tensors");
    a->arch_file = cli_get(args, "--arch-file");
    const char *outfile = cli_get(args, "--outfile");
    if (args->n_pos < 1 || args->n_pos > 2 || (outfile && args->n_pos != 1))
        return cli_usage_error("convert", "give an input and an output (OUT or --outfile; a Hugging "
                                          "Face directory to GGUF may leave it out)");
    a->in = a->in_shown = args->pos[0];
    a->out = outfile ? outfile : args->n_pos == 2 ? args->pos[1] : NULL;
    if (!a->out && !strcmp(a->in, "-"))
        return cli_usage_error("convert", "standard input needs an output");
    return cli_spool_input(&a->in);
}

static int run_convert(const cli_args *args)
{
    convert_args a;
    if (parse(args, &a))
        return EXIT_USAGE;
    convert_target run = pick_target(&a, cli_has(args, "--outfile"));
    if (!run)
        return cli_usage_error("convert", a.to ? "--to %s: not a format mfmt writes"
                                               : "cannot tell the output format of %s: "
                                                 "name it .safetensors, .gguf or DIR/, or give --to",
                               a.to ? a.to : a.out);
    if (a.arch_file && run != to_gguf && run != to_hf_dir)
        return cli_usage_error("convert", "--arch-file is for GGUF output of a Hugging Face directory, "
                                          "or a GGUF to a Hugging Face directory");
    if (run != to_gguf && has_gguf_flags(&a))
        return cli_usage_error("convert", "--model-name, --metadata, --vocab-only, --mmproj and --split-max-* "
                                          "are for GGUF output");
    int rc = check_safety(&a);
    return rc ? rc : run(&a);
}

static const cli_opt opts[] = {
    {"--to", NULL, "FORMAT", "safetensors, gguf, hf or mlx (default: from OUT: .safetensors, "
                             ".gguf, a trailing /; --mlx)"},
    {"--key", NULL, "PATH", "safetensors: the tensors under this key of a checkpoint (state_dict)"},
    {"--max-shard-size", NULL, "SIZE", "safetensors and HF directory: shards of at most SIZE "
                                       "(5GB, 2GiB) and an index, as Hugging Face writes them"},
    {"--include-optimizer", NULL, NULL, "safetensors: keep a checkpoint's optimizer state"},
    {"--keep-tied", NULL, NULL,
     "safetensors: also write names that share another tensor's storage (tied embeddings)"},
    {"--allow-unsafe", NULL, NULL, "convert a file the scan calls dangerous (nothing in it is run)"},
    {"--type", "--outtype --dtype", "T", "GGUF: f32, f16 (default), bf16, q8_0, auto or a "
                                         "llama-quantize type (Q4_K_M, ...); HF directory and "
                                         "MLX: f32, f16 or bf16"},
    {"--threads", NULL, "N", "GGUF: quantizing threads (default: the processors online); "
                             "safetensors / OUT/: threads copying a training checkpoint's "
                             "partitions (default 1)"},
    {"--outfile", NULL, "OUT", "the output, as convert_hf_to_gguf.py's: a directory gets the "
                               "converter's default name; {ftype} in a name is the type"},
    {"--model-name", NULL, "NAME", "GGUF: general.name (over the model card and the override file)"},
    {"--metadata", NULL, "FILE", "GGUF: a JSON object of general.* keys that replace what the "
                                 "model card and names gave (the converter's override file)"},
    {"--vocab-only", NULL, NULL, "GGUF: the metadata and vocabulary only, no tensors"},
    {"--mmproj", NULL, NULL, "GGUF from a multimodal HF directory: its vision tower and projector (or audio "
                             "encoder) as llama.cpp's mmproj file (clip.*; default name mmproj-NAME-TYPE.gguf)"},
    {"--mistral-format", NULL, NULL, "GGUF from a directory in Mistral's own format (params.json, "
                                     "consolidated*.safetensors, tekken.json or tokenizer.model.v*), as "
                                     "convert_hf_to_gguf.py --mistral-format; chosen by itself when the HF "
                                     "weight files are absent"},
    {"--split-max-size", NULL, "N", "GGUF: split as llama-gguf-split into files of about N bytes "
                                    "(N, NK, NM, NG: decimal)"},
    {"--split-max-tensors", NULL, "N", "GGUF: split into files of at most N tensors"},
    {"--layout", NULL, "L", "GGUF from an HF directory: c392e50 (default: llama.cpp's converter of "
                            "Feb 2025) or 2026-02 (of ecbcb7ea); families only the newer one has are "
                            "written in its layout"},
    {"--arch-file", NULL, "FILE", "GGUF from an HF directory, and back: the architecture described by a JSON "
                                  "file (names, tensor ops, keys, tokenizer kind; doc/arch-file.md) instead "
                                  "of the built-in tables"},
    {"--config", NULL, "FILE", "training checkpoint: the Hugging Face config.json it lacks "
                               "(Megatron names and vocabulary; copied into OUT/)"},
    {"--tokenizer", NULL, "DIR", "training checkpoint: where the tokenizer files to copy are"},
    {"--from-module-states", NULL, NULL,
     "DeepSpeed, Megatron torch_dist: the bf16/fp16 module states, not the fp32 master weights"},
    {"--exclude-frozen-parameters", NULL, NULL, "DeepSpeed: leave frozen parameters out"},
    {"--mlx", NULL, NULL, "write an MLX directory as mlx_lm.convert does (from an HF directory, "
                          "a GGUF or an MLX directory)"},
    {"--quantize", NULL, NULL, "MLX: quantize (mlx_lm.convert -q; -q is --quiet here)"},
    {"--q-bits", NULL, "N", "MLX: bits per weight, 2, 3, 4 (default), 5, 6 or 8"},
    {"--q-group-size", NULL, "N", "MLX: group size, 32, 64 (default) or 128"},
    {"--quant-predicate", NULL, "RECIPE",
     "MLX: mixed_2_6, mixed_3_4, mixed_3_6 or mixed_4_6 (mlx_lm's recipes)"},
    {"--mlx-kernel", NULL, "K", "MLX: cpu (default: MLX's CPU quantizer, mlx_lm on Linux) or "
                                "metal (a Mac GPU's rounding)"},
    {"--dequantize", NULL, NULL, "MLX: write an MLX model unquantized (mlx_lm.convert -d)"},
    {"--lossless", NULL, NULL, "MLX from a GGUF: its Q4_0/Q4_1/Q8_0 tensors as the affine triples "
                               "MLX's GGUF loader makes of them (group 32, no requantization)"},
    CLI_OPT_QUIET("no progress bar, no summary lines; warnings and errors still on stderr"),
    {0},
};

const cli_cmd cli_cmd_convert = {
    "convert", run_convert, "IN [OUT]",
    "to safetensors (any model), GGUF (an HF or MLX directory or a training checkpoint), an HF "
    "directory (a GGUF or a training checkpoint, OUT/) or MLX (--mlx), running nothing it holds",
    opts, NULL};
