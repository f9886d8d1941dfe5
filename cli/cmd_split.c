/* cmd_split.c - mfmt split [options] IN.gguf PREFIX, with llama-gguf-split's
 * spellings (--split, --merge, --split-max-size, --split-max-tensors,
 * --dry-run, --no-tensor-first-split); --max-size / --max-tensors stay as
 * aliases. */
#include "cli.h"

#include <ctype.h>
#include <stdlib.h>

/* llama-gguf-split's split_str_to_n_bytes: an integer and M or G, in
 * decimal units (1M = 1000*1000 bytes). Other spellings ("2GiB", "500MB")
 * go through mf_parse_size. */
static int parse_split_size(const char *v, uint64_t *out)
{
    size_t n = strlen(v), digits = 0;
    while (digits < n && isdigit((unsigned char)v[digits]))
        digits++;
    if (digits > 0 && digits == n - 1 && (v[n - 1] == 'M' || v[n - 1] == 'G')) {
        uint64_t x = strtoull(v, NULL, 10), unit = v[n - 1] == 'M' ? 1000000ull : 1000000000ull;
        if (x > UINT64_MAX / unit)
            return -1;
        *out = x * unit;
        return 0;
    }
    return mf_parse_size(v, out);
}

static int parse_count(const char *opt, const char *v, uint64_t *out)
{
    char *end;
    unsigned long long x = strtoull(v, &end, 10);
    if (*end || x == 0 || v[0] == '-')
        return cli_usage_error("split", "%s takes a positive count", opt);
    *out = x;
    return 0;
}

typedef struct plan_print {
    bool dry_run;
} plan_print;

/* llama-gguf-split's plan line: "split 00001: n_tensors = 100, total_size = 12M" */
static void print_shard(void *user, size_t no, size_t nf, size_t first, size_t n, uint64_t bytes)
{
    (void)nf;
    (void)first;
    const plan_print *p = user;
    if (p->dry_run)
        printf("split %05zu: n_tensors = %zu, total_size = %lluM\n", no + 1, n,
               (unsigned long long)(bytes / (1000 * 1000)));
}

int cli_merge_run(const char *in, const char *out, bool dry_run); /* cmd_merge.c */

static int run_split(const cli_args *a)
{
    mf_split_opts o;
    mf_split_opts_init(&o);
    bool merge = false;
    for (int i = 0; i < a->n_opts; i++) {
        const char *v = a->opt[i].val;
        if (cli_is(a, i, "--split-max-tensors")) {
            if (parse_count("--split-max-tensors", v, &o.max_tensors))
                return EXIT_USAGE;
        } else if (cli_is(a, i, "--split-max-size")) {
            if (parse_split_size(v, &o.max_bytes) || !o.max_bytes)
                return cli_usage_error("split", "--split-max-size takes a size: N M (N*1000*1000 "
                                                "bytes) or N G (N*10^9 bytes), as llama-gguf-split");
        } else if (cli_is(a, i, "--merge")) {
            merge = true;
        } else if (cli_is(a, i, "--split")) {
            merge = false;
        } else if (cli_is(a, i, "--dry-run")) {
            o.dry_run = true;
        } else if (cli_is(a, i, "--no-tensor-first-split")) {
            o.no_tensor_first_split = true;
        }
    }
    if (a->n_pos != 2)
        return cli_usage_error("split", merge ? "--merge needs the first split IN and OUT"
                                              : "need IN.gguf and an output PREFIX");
    const char *in = a->pos[0], *prefix = a->pos[1];
    if (merge)
        return cli_merge_run(in, prefix, o.dry_run);
    if (!o.max_tensors && !o.max_bytes)
        o.max_tensors = 128; /* llama-gguf-split's default */
    mf_model *m;
    int rc = cli_open_model(in, &m);
    if (rc)
        return rc;
    mf_status st;
    mf_status_init(&st);
    size_t nf = 0;
    plan_print pp = {o.dry_run};
    o.on_shard = print_shard;
    o.on_shard_user = &pp;
    size_t nt = mf_model_tensor_count(m);
    if (mf_model_format(m) != MF_FMT_GGUF)
        rc = cli_usage_error("split", "%s is %s; split writes GGUF split sets (use convert "
                             "--max-shard-size for safetensors)", in, mf_format_name(mf_model_format(m)));
    else if (mf_gguf_split(m, prefix, &o, &nf, &st))
        rc = cli_report(&st);
    else if (o.dry_run)
        printf("dry run: %zu file%s, %zu tensor%s; nothing written\n", nf, nf == 1 ? "" : "s", nt,
               nt == 1 ? "" : "s");
    else if (!cli_quiet)
        printf("wrote %s-00001-of-%05zu.gguf ... (%zu file%s, %zu tensor%s)\n", prefix, nf, nf,
               nf == 1 ? "" : "s", nt, nt == 1 ? "" : "s");
    mf_status_clear(&st);
    mf_close(m);
    return rc;
}

static const cli_opt opts[] = {
    {"--split", NULL, NULL, "split IN into PREFIX-0000i-of-0000n.gguf (the default)"},
    {"--merge", NULL, NULL, "merge instead: IN is the first file of a set, PREFIX the output file"},
    {"--split-max-tensors", "--max-tensors", "N", "at most N tensors per file (default 128)"},
    {"--split-max-size", "--max-size", "N(M|G)",
     "at most this much tensor data per file; M = 1000*1000 bytes, G = 10^9 (llama.cpp's units)"},
    {"--no-tensor-first-split", NULL, NULL, "the first file holds the metadata only"},
    {"--dry-run", NULL, NULL, "print the plan (tensors and size per file); write nothing"},
    CLI_OPT_QUIET("no summary line (a --dry-run plan still prints); errors still on stderr"),
    {0},
};

const cli_cmd cli_cmd_split = {"split", run_split, "IN.gguf PREFIX",
                               "write a GGUF split set PREFIX-0000i-of-0000n.gguf as llama-gguf-split does",
                               opts, NULL};
