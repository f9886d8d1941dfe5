/* cmd_hash.c - mfmt hash [--json] [--tensors] [--algo A] PATH:
 * whole-file hash, tensor-content hash, and canonical per-tensor hashes. */
#include "cli.h"

typedef struct hash_opts {
    bool json, tensors;
    mf_hash_algo algo;
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
            if (!v || mf_hash_algo_from_name(v, &o->algo))
                return cli_usage_error("hash", "--algo takes sha256, sha1, xxh64 or xxh3");
        } else if (argv[i][0] == '-' && argv[i][1])
            return cli_usage_error("hash", "unknown option %s", argv[i]);
        else if (o->path)
            return cli_usage_error("hash", "one path at a time");
        else
            o->path = argv[i];
    }
    return o->path ? 0 : cli_usage_error("hash", "no path given");
}

static int hash_model(const hash_opts *o, const mf_model *m, json_t *root, mf_status *st)
{
    const char *an = mf_hash_algo_name(o->algo);
    char hex[129];
    if (mf_hash_tensor_content(m, o->algo, hex, st))
        return -1;
    if (o->json)
        json_object_set_new(root, "tensor_content", json_string(hex));
    else
        printf("%s  %s  %s (tensor content)\n", an, hex, o->path);
    if (!o->tensors)
        return 0;
    json_t *ts = json_object();
    for (size_t i = 0; i < m->n_tensors; i++) {
        const mf_tensor *t = &m->tensors[i];
        if (mf_hash_tensor(m, t, o->algo, hex, st)) {
            json_decref(ts);
            return -1;
        }
        if (o->json)
            json_object_set_new(ts, t->name, json_string(hex));
        else
            printf("%s  %s  %s:%s\n", an, hex, o->path, t->name);
    }
    if (o->json)
        json_object_set_new(root, "tensors", ts);
    else
        json_decref(ts);
    return 0;
}

static int run_hash(int argc, char **argv)
{
    hash_opts o;
    if (parse(argc, argv, &o))
        return EXIT_USAGE;
    mf_status st;
    mf_status_init(&st);
    json_t *root = o.json ? json_object() : NULL;
    char hex[129];
    int rc = EXIT_FINE;
    if (o.json)
        json_object_set_new(root, "path", json_string(o.path));
    if (!mf_is_dir(o.path)) {
        if (mf_hash_file(o.path, o.algo, hex, &st)) {
            rc = cli_report(&st);
            goto out;
        }
        if (o.json)
            json_object_set_new(root, mf_hash_algo_name(o.algo), json_string(hex));
        else
            printf("%s  %s  %s\n", mf_hash_algo_name(o.algo), hex, o.path);
    }
    mf_model *m;
    if (mf_open(o.path, NULL, &m, &st)) {
        rc = cli_report(&st);
        goto out;
    }
    if (hash_model(&o, m, root, &st))
        rc = cli_report(&st);
    mf_close(m);
out:
    if (o.json && rc == EXIT_FINE)
        cli_print_json(root);
    else
        json_decref(root);
    mf_status_clear(&st);
    return rc;
}

const cli_cmd cli_cmd_hash = {"hash", run_hash,
                              "hash [--json] [--tensors] [--algo sha256|sha1|xxh64|xxh3] PATH",
                              "file hash, tensor-content hash, canonical per-tensor hashes"};
