/* cmd_convert.c - mfmt convert IN OUT [--to FORMAT] [options]: the target
 * format comes from --to or OUT's extension, and each target is one
 * function below (GGUF hands over to convert_gguf_cli.c). Every input is scanned first: a dangerous one is refused
 * unless --allow-unsafe (which still runs nothing from it). */
#include "cli.h"

#define MAX_EXTRA 32

typedef struct convert_args {
    const char *in, *out, *to, *key, *shard_size;
    bool allow_unsafe, include_optimizer;
    /* options the common parser does not know, for the target to judge */
    char *extra[MAX_EXTRA];
    int n_extra;
} convert_args;

typedef int (*convert_target)(const convert_args *a);

static int no_extra(const convert_args *a, const char *target)
{
    if (a->n_extra)
        return cli_usage_error("convert", "%s is not an option for %s output", a->extra[0], target);
    return 0;
}

/* --------------------------------------------------------- safetensors */

static int to_safetensors(const convert_args *a)
{
    if (no_extra(a, "safetensors"))
        return EXIT_USAGE;
    mf_convert_st_opts o;
    mf_convert_st_opts_init(&o);
    o.key = a->key;
    o.include_optimizer = a->include_optimizer;
    if (a->shard_size && mf_parse_size(a->shard_size, &o.max_shard_size))
        return cli_usage_error("convert", "--max-shard-size takes a size like 5GB, 500MB or 2GiB");
    mf_status st;
    mf_status_init(&st);
    mf_model *m;
    if (cli_open(a->in, 0, false, &m, &st)) {
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
    if (strings)
        fprintf(stderr, "mfmt convert: note: %zu STRING tensor%s left out (safetensors holds no strings)\n",
                strings, strings == 1 ? "" : "s");
    cli_progress p;
    cli_progress_start(&p, "converting", total);
    o.progress = cli_progress_cb; /* the bytes written (dequantized MLX weights outgrow the input's) */
    o.progress_user = &p;
    int rc = mf_convert_to_safetensors(m, a->out, &o, &st);
    cli_progress_end(&p);
    rc = rc ? cli_report(&st) : EXIT_FINE;
    mf_close(m);
    mf_status_clear(&st);
    return rc;
}

/* ---------------------------------------------------------------- GGUF */

int cli_convert_to_gguf(int argc, char **argv); /* convert_gguf_cli.c */

/* A Hugging Face directory to GGUF (convert_gguf_cli.c has its options). */
static int to_gguf(const convert_args *a)
{
    if (a->key || a->shard_size || a->include_optimizer)
        return cli_usage_error("convert", "--key, --max-shard-size and --include-optimizer are "
                                          "for safetensors output");
    char *argv[MAX_EXTRA + 4];
    int argc = 0;
    argv[argc++] = "convert";
    argv[argc++] = (char *)a->in;
    argv[argc++] = (char *)a->out;
    for (int i = 0; i < a->n_extra; i++)
        argv[argc++] = a->extra[i];
    argv[argc] = NULL;
    return cli_convert_to_gguf(argc, argv);
}

static const struct {
    const char *name, *ext;
    convert_target run;
} targets[] = {
    {"safetensors", ".safetensors", to_safetensors},
    {"gguf", ".gguf", to_gguf},
};

#define N_TARGETS (sizeof(targets) / sizeof(targets[0]))

static convert_target pick_target(const convert_args *a)
{
    size_t ol = strlen(a->out);
    for (size_t i = 0; i < N_TARGETS; i++) {
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
    if (s.worst == MF_VERDICT_DANGEROUS && !a->allow_unsafe) {
        fprintf(stderr, "mfmt convert: %s is dangerous to load (%s); see `mfmt scan %s`.\n"
                        "  --allow-unsafe converts it anyway (mfmt never runs what it holds)\n",
                a->in, s.first, a->in);
        return EXIT_BAD_INPUT;
    }
    if (s.worst == MF_VERDICT_DANGEROUS)
        fprintf(stderr, "mfmt convert: warning: %s is dangerous to load (%s); converting "
                        "without running it\n", a->in, s.first);
    else if (s.worst == MF_VERDICT_UNKNOWN)
        fprintf(stderr, "mfmt convert: warning: %s reaches names off the allowlist (%s); "
                        "converting without running them\n", a->in, s.first);
    return 0;
}

/* ------------------------------------------------------------- parsing */

/* Options of other targets that take a value (GGUF: convert_gguf_cli.c). */
static bool takes_value(const char *opt)
{
    static const char *const with_value[] = {"--type", "--outtype", "--dtype", "--threads"};
    for (size_t i = 0; i < sizeof(with_value) / sizeof(with_value[0]); i++)
        if (strcmp(opt, with_value[i]) == 0)
            return true;
    return false;
}

static int parse(int argc, char **argv, convert_args *a)
{
    memset(a, 0, sizeof(*a));
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        if (cli_flag(argc, argv, &i, "--to", &v)) {
            if (!v)
                return cli_usage_error("convert", "--to takes safetensors or gguf");
            a->to = v;
        } else if (cli_flag(argc, argv, &i, "--key", &v)) {
            if (!v)
                return cli_usage_error("convert", "--key takes a path such as state_dict");
            a->key = v;
        } else if (cli_flag(argc, argv, &i, "--max-shard-size", &v)) {
            if (!v)
                return cli_usage_error("convert", "--max-shard-size takes a size such as 5GB");
            a->shard_size = v;
        } else if (cli_flag(argc, argv, &i, "--allow-unsafe", NULL)) {
            a->allow_unsafe = true;
        } else if (cli_flag(argc, argv, &i, "--include-optimizer", NULL)) {
            a->include_optimizer = true;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            /* another target's option, passed on (with its value) */
            if (a->n_extra + 2 > MAX_EXTRA)
                return cli_usage_error("convert", "too many options");
            a->extra[a->n_extra++] = argv[i];
            if (takes_value(argv[i]) && !strchr(argv[i], '=') && i + 1 < argc)
                a->extra[a->n_extra++] = argv[++i];
        } else if (!a->in) {
            a->in = argv[i];
        } else if (!a->out) {
            a->out = argv[i];
        } else {
            return cli_usage_error("convert", "unexpected argument %s", argv[i]);
        }
    }
    if (!a->in || !a->out)
        return cli_usage_error("convert", "give an input and an output");
    return 0;
}

static int run_convert(int argc, char **argv)
{
    convert_args a;
    if (parse(argc, argv, &a))
        return EXIT_USAGE;
    convert_target run = pick_target(&a);
    if (!run)
        return cli_usage_error("convert", a.to ? "--to %s: not a format mfmt writes"
                                               : "cannot tell the output format of %s: "
                                                 "name it .safetensors or .gguf, or give --to",
                               a.to ? a.to : a.out);
    int rc = check_safety(&a);
    return rc ? rc : run(&a);
}

const cli_cmd cli_cmd_convert = {
    "convert", run_convert,
    "convert IN OUT [--to safetensors|gguf] [--key PATH] [--max-shard-size 5GB] "
    "[--include-optimizer] [--allow-unsafe] [--type f16|...]",
    "to safetensors (any model) or GGUF (an HF directory), running nothing it holds"};
