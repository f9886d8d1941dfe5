/* cmd_hash.c - mfmt hash: whole-file hash, tensor-content hash and canonical
 * per-tensor hashes; --manifest / --check for llama-gguf-hash manifests.
 *
 * The hashing is the library's (mf_hash_model: one read of the file on two
 * threads when the layout allows; mf_hash_kinds and mf_manifest_* for the
 * manifests); this file parses options and prints. */
#include "cli.h"

#include <stdlib.h>
#include <sys/stat.h>

typedef struct hash_opts {
    bool json, tensors;
    unsigned mask;            /* MF_HASH_BIT()s from --algo; 0: default */
    const char *manifest_out; /* --manifest OUT */
    const char *check;        /* --check MANIFEST */
    const char *path;
} hash_opts;

static int parse(int argc, char **argv, hash_opts *o)
{
    memset(o, 0, sizeof(*o));
    for (int i = 1; i < argc; i++) {
        const char *v;
        if (cli_flag(argc, argv, &i, "--json", NULL))
            o->json = true;
        else if (cli_flag(argc, argv, &i, "--tensors", NULL))
            o->tensors = true;
        else if (cli_flag(argc, argv, &i, "--algo", &v)) {
            if (!v || mf_hash_kinds_parse(v, &o->mask))
                return cli_usage_error("hash", "--algo takes sha256, sha1, xxh64, xxh3, "
                                               "(manifests) uuid or all, comma-separated");
        } else if (cli_flag(argc, argv, &i, "--manifest", &v)) {
            if (!v)
                return cli_usage_error("hash", "--manifest needs an output file ('-': stdout)");
            o->manifest_out = v;
        } else if (cli_flag(argc, argv, &i, "--check", &v) || cli_flag(argc, argv, &i, "-c", &v)) {
            if (!v)
                return cli_usage_error("hash", "--check needs a manifest file");
            o->check = v;
        } else if (argv[i][0] == '-' && argv[i][1])
            return cli_usage_error("hash", "unknown option %s", argv[i]);
        else if (o->path)
            return cli_usage_error("hash", "one path at a time");
        else
            o->path = argv[i];
    }
    if (!o->path)
        return cli_usage_error("hash", "no path given");
    if (o->manifest_out && o->check)
        return cli_usage_error("hash", "--manifest and --check exclude each other");
    bool manifest_mode = o->manifest_out || o->check;
    if (manifest_mode && (o->json || o->tensors))
        return cli_usage_error("hash", "--json and --tensors do not apply to manifests");
    if (!manifest_mode && o->mask && (o->mask & (o->mask - 1) || o->mask & MF_HASH_BIT(MF_HASH_KIND_UUID)))
        return cli_usage_error("hash", "one --algo of sha256, sha1, xxh64, xxh3 (lists and "
                                       "uuid are for --manifest / --check)");
    return 0;
}

/* ------------------------------------------------------------ plain hash */

static void print_plain(const hash_opts *o, const mf_model *m, const mf_hash_result *r)
{
    const char *an = mf_hash_algo_name(r->algo);
    if (o->json) {
        json_t *root = json_object();
        json_object_set_new(root, "path", json_string(o->path));
        if (r->has_file)
            json_object_set_new(root, an, json_string(r->file_hex));
        json_object_set_new(root, "tensor_content", json_string(r->content_hex));
        if (o->tensors) {
            json_t *ts = json_object();
            for (size_t i = 0; i < r->n_tensors; i++)
                json_object_set_new(ts, mf_tensor_name(mf_model_tensor_at(m, i)),
                                    json_string(r->tensor_hex[i]));
            json_object_set_new(root, "tensors", ts);
        }
        cli_print_json(root);
        return;
    }
    if (r->has_file)
        printf("%s  %s  %s\n", an, r->file_hex, o->path);
    printf("%s  %s  %s (tensor content)\n", an, r->content_hex, o->path);
    for (size_t i = 0; i < r->n_tensors; i++)
        printf("%s  %s  %s:%s\n", an, r->tensor_hex[i], o->path,
               mf_tensor_name(mf_model_tensor_at(m, i)));
}

/* A file mfmt cannot open still gets its whole-file hash, then the error. */
static int hash_unopened(const hash_opts *o, mf_hash_algo algo, mf_status *open_st)
{
    int rc;
    mf_status st;
    mf_status_init(&st);
    char hex[129];
    struct stat sb;
    bool dir = stat(o->path, &sb) == 0 && S_ISDIR(sb.st_mode);
    if (!dir && mf_hash_file(o->path, algo, hex, &st) != 0) {
        rc = cli_report(&st);
    } else {
        if (!dir && !o->json)
            printf("%s  %s  %s\n", mf_hash_algo_name(algo), hex, o->path);
        rc = cli_report(open_st);
    }
    mf_status_clear(&st);
    return rc;
}

static int run_plain(const hash_opts *o)
{
    mf_hash_opts ho;
    mf_hash_opts_init(&ho);
    for (int k = 0; k < 4; k++)
        if (o->mask & MF_HASH_BIT(k))
            ho.algo = (mf_hash_algo)k;
    ho.per_tensor = o->tensors;
    mf_status st;
    mf_status_init(&st);
    mf_model *m = NULL;
    int rc = EXIT_FINE;
    mf_hash_result *r = NULL;
    if (cli_open(o->path, 0, false, &m, &st))
        rc = hash_unopened(o, ho.algo, &st);
    else if (mf_hash_model(m, &ho, &r, &st))
        rc = cli_report(&st);
    else
        print_plain(o, m, r);
    mf_hash_result_free(r);
    mf_close(m);
    mf_status_clear(&st);
    return rc;
}

static int run_manifest_write(const hash_opts *o)
{
    mf_status st;
    mf_status_init(&st);
    mf_model *m = NULL;
    int rc = EXIT_FINE;
    unsigned mask = o->mask ? o->mask : MF_HASH_BIT(MF_SHA256);
    if (cli_open(o->path, 0, false, &m, &st) ||
        (strcmp(o->manifest_out, "-") == 0
             ? mf_manifest_write(m, o->path, mask, cli_stdout_sink, NULL, &st)
             : mf_manifest_write_file(m, o->path, mask, o->manifest_out, &st)))
        rc = cli_report(&st);
    mf_close(m);
    mf_status_clear(&st);
    return rc;
}

/* --check: prints each line with Ok / Mismatch / Not Found as
 * llama-gguf-hash does; the exit code is the outcome. */
static int print_check_line(void *user, int kind, const char *hex, const char *name,
                            mf_manifest_match match)
{
    (void)user;
    printf("%-8s  %s  %s  -  %s\n", mf_hash_kind_name(kind), hex, name,
           mf_manifest_match_name(match));
    return 0;
}

/* The strongest first, as --check without --algo picks. */
static const int strength_order[MF_HASH_KIND_COUNT] = {MF_SHA256, MF_SHA1, MF_XXH64, MF_XXH3,
                                                       MF_HASH_KIND_UUID};

static int run_manifest_check(const char *model_path, const char *manifest_path, unsigned mask)
{
    mf_status st;
    mf_status_init(&st);
    mf_manifest *mf = NULL;
    mf_model *m = NULL;
    char *label = NULL;
    int rc;
    if (mf_manifest_load(manifest_path, &mf, &st)) {
        fprintf(stderr, "mfmt: cannot read manifest: %s\n", st.msg);
        rc = MF_MANIFEST_FILE_ERROR;
        goto out;
    }
    unsigned kinds = mf_manifest_kinds(mf);
    if (!kinds) {
        fprintf(stderr, "mfmt: %s: no line of a known hash type (sha256, sha1, xxh64, xxh3, uuid)\n",
                manifest_path);
        rc = MF_MANIFEST_UNKNOWN_HASH;
        goto out;
    }
    printf("manifest  %s", manifest_path);
    for (int j = 0; j < MF_HASH_KIND_COUNT; j++)
        if (kinds & MF_HASH_BIT(strength_order[j]))
            printf("  %s", mf_hash_kind_name(strength_order[j]));
    printf("\n");
    if (cli_open(model_path, 0, false, &m, &st)) {
        rc = cli_report(&st);
        goto out;
    }
    label = mf_manifest_label(mf, m, model_path);
    if (!label) {
        rc = cli_report(&st);
        goto out;
    }
    if (strcmp(label, model_path) != 0)
        fprintf(stderr, "mfmt: the manifest names this model \"%s\"\n", label);
    mf_manifest_outcome outcome;
    if (mf_manifest_check(mf, m, label, mask, print_check_line, NULL, &outcome, &st)) {
        rc = cli_report(&st);
    } else {
        rc = (int)outcome;
        printf("\nVerification results for %s - %s\n", manifest_path,
               mf_manifest_outcome_name(outcome));
    }
out:
    mf_free(label);
    mf_close(m);
    mf_manifest_free(mf);
    mf_status_clear(&st);
    return rc;
}

static int run_hash(int argc, char **argv)
{
    hash_opts o;
    if (parse(argc, argv, &o))
        return EXIT_USAGE;
    if (o.check)
        return run_manifest_check(o.path, o.check, o.mask);
    if (o.manifest_out)
        return run_manifest_write(&o);
    return run_plain(&o);
}

const cli_cmd cli_cmd_hash = {
    "hash", run_hash,
    "hash [--json] [--tensors] [--algo A] [--manifest OUT | --check MANIFEST] PATH",
    "file hash, tensor-content hash, canonical per-tensor hashes; llama-gguf-hash "
    "manifests (check exit: 0 ok, 1 mismatch, 3 missing entry, 4 unknown hash, 5 "
    "manifest unreadable)"};
