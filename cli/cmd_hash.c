/* cmd_hash.c - mfmt hash: whole-file hash, tensor-content hash and canonical
 * per-tensor hashes; --manifest / --check for llama-gguf-hash manifests.
 *
 * By default a file gets its whole-file digest only, one pass at the speed
 * of sha256sum (the file is not even parsed); --content adds the
 * tensor-content digest, --tensors both plus one per tensor (a directory has
 * no whole-file digest, so it gets the content digest by default). When two
 * digests are asked for, a single file whose tensors lie plainly in table
 * order is read once
 * (hash_onepass.c: whole-file and tensor hashes on two threads); otherwise
 * the whole-file hash runs on a second thread while this one streams the
 * tensors once (content and per-tensor hashers fed from the same bytes). On
 * two cores `hash` then costs about one SHA-256 pass over the file. */
#include "hash_onepass.h"

#include <pthread.h>
#include <stdlib.h>

typedef struct hash_opts {
    bool json, tensors, content;
    unsigned mask;            /* HK_BIT()s from --algo; 0: default */
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
        else if (cli_flag(argc, argv, &i, "--content", NULL))
            o->content = true;
        else if (cli_flag(argc, argv, &i, "--algo", &v)) {
            if (!v || hk_parse_list(v, &o->mask))
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
    if (manifest_mode && (o->json || o->tensors || o->content))
        return cli_usage_error("hash", "--json, --content and --tensors do not apply to manifests");
    if (!manifest_mode && o->mask && (o->mask & (o->mask - 1) || o->mask & HK_BIT(HK_UUID)))
        return cli_usage_error("hash", "one --algo of sha256, sha1, xxh64, xxh3 (lists and "
                                       "uuid are for --manifest / --check)");
    return 0;
}

/* ------------------------------------------------ whole file, on a thread */

typedef struct file_job {
    const char *path;
    mf_hash_algo algo;
    char hex[129];
    mf_status st;
    int rc;
} file_job;

static void *hash_file_thread(void *arg)
{
    file_job *j = arg;
    j->rc = mf_hash_file(j->path, j->algo, j->hex, &j->st);
    return NULL;
}

/* ------------------------------------------------------- tensor hashes */

typedef struct collected {
    const hash_opts *o;
    json_t *tensors;           /* --json --tensors: NAME -> HEX */
    MF_VEC(char *) lines;      /* text --tensors: printed after the content line */
    char content[129];
} collected;

static int collect(void *ctx, int kind, const char *hex, const char *tensor, mf_status *st)
{
    collected *c = ctx;
    if (!tensor) {
        snprintf(c->content, sizeof(c->content), "%s", hex);
        return 0;
    }
    if (c->o->json) {
        json_object_set_new(c->tensors, tensor, json_string(hex));
        return 0;
    }
    char *line = NULL;
    if (asprintf(&line, "%s  %s  %s:%s", hk_name(kind), hex, c->o->path, tensor) < 0 ||
        MF_VEC_PUSH(c->lines, line)) {
        free(line);
        return mf_oom(st, c->o->path);
    }
    return 0;
}

static void collected_free(collected *c)
{
    for (size_t i = 0; i < c->lines.n; i++)
        free(c->lines.v[i]);
    MF_VEC_FREE(c->lines);
    json_decref(c->tensors);
}

/* The default for a file: its whole-file digest and nothing else. */
static int run_file_only(const hash_opts *o, mf_hash_algo algo)
{
    const char *an = mf_hash_algo_name(algo);
    char hex[129];
    mf_status st;
    mf_status_init(&st);
    int rc = EXIT_FINE;
    if (mf_hash_file(o->path, algo, hex, &st)) {
        rc = cli_report(&st);
    } else if (o->json) {
        json_t *root = json_object();
        json_object_set_new(root, "path", json_string(o->path));
        json_object_set_new(root, an, json_string(hex));
        cli_print_json(root);
    } else {
        printf("%s  %s  %s\n", an, hex, o->path);
    }
    mf_status_clear(&st);
    return rc;
}

static int run_plain(const hash_opts *o)
{
    mf_hash_algo algo = MF_SHA256;
    for (int k = 0; k < 4; k++)
        if (o->mask & HK_BIT(k))
            algo = (mf_hash_algo)k;
    bool whole_file = !mf_is_dir(o->path);
    if (whole_file && !o->content && !o->tensors)
        return run_file_only(o, algo);
    const char *an = mf_hash_algo_name(algo);
    file_job job = {.path = o->path, .algo = algo};
    mf_status_init(&job.st);
    mf_status st;
    mf_status_init(&st);
    collected c = {.o = o, .tensors = o->json ? json_object() : NULL};
    mf_model *m = NULL;
    int open_rc = mf_open(o->path, NULL, &m, &st), hash_rc;
    /* one read of the file when the layout allows it, else two passes */
    onepass_result op;
    int one = open_rc == 0 && whole_file ? hash_onepass(m, o->path, algo, o->tensors, &op, &st) : 1;
    if (one == 0) {
        snprintf(job.hex, sizeof(job.hex), "%s", op.file_hex);
        hash_rc = 0;
        for (size_t i = 0; o->tensors && i < m->n_tensors && hash_rc == 0; i++)
            hash_rc = collect(&c, algo, op.tensor_hex[i], m->tensors[i].name, &st);
        if (hash_rc == 0)
            hash_rc = collect(&c, algo, op.content_hex, NULL, &st);
        onepass_result_free(&op);
    } else if (one < 0) {
        hash_rc = -1;
        whole_file = false; /* the error says what happened */
    } else {
        pthread_t th;
        bool threaded = whole_file && pthread_create(&th, NULL, hash_file_thread, &job) == 0;
        if (whole_file && !threaded)
            hash_file_thread(&job);
        hash_rc = open_rc ? -1 : hk_hash_model(m, HK_BIT(algo), o->tensors, collect, &c, &st);
        if (threaded)
            pthread_join(th, NULL);
    }

    int rc = EXIT_FINE;
    json_t *root = o->json ? json_object() : NULL;
    if (root)
        json_object_set_new(root, "path", json_string(o->path));
    if (whole_file && job.rc == 0) {
        if (root)
            json_object_set_new(root, an, json_string(job.hex));
        else
            printf("%s  %s  %s\n", an, job.hex, o->path);
    } else if (job.rc) {
        rc = cli_report(&job.st);
    }
    if (rc == EXIT_FINE && hash_rc == 0) {
        if (root) {
            json_object_set_new(root, "tensor_content", json_string(c.content));
            if (o->tensors)
                json_object_set(root, "tensors", c.tensors);
        } else {
            printf("%s  %s  %s (tensor content)\n", an, c.content, o->path);
            for (size_t i = 0; i < c.lines.n; i++)
                printf("%s\n", c.lines.v[i]);
        }
    } else if (rc == EXIT_FINE) {
        rc = cli_report(&st);
    }
    if (root && rc == EXIT_FINE)
        cli_print_json(root);
    else
        json_decref(root);
    collected_free(&c);
    mf_close(m);
    mf_status_clear(&st);
    mf_status_clear(&job.st);
    return rc;
}

static int run_manifest_write(const hash_opts *o)
{
    mf_status st;
    mf_status_init(&st);
    mf_model *m = NULL;
    int rc = EXIT_FINE;
    if (mf_open(o->path, NULL, &m, &st) ||
        manifest_write(m, o->path, o->mask ? o->mask : HK_BIT(MF_SHA256), o->manifest_out, &st))
        rc = cli_report(&st);
    mf_close(m);
    mf_status_clear(&st);
    return rc;
}

static int run_hash(int argc, char **argv)
{
    hash_opts o;
    if (parse(argc, argv, &o))
        return EXIT_USAGE;
    if (o.check)
        return manifest_check(o.path, o.check, o.mask);
    if (o.manifest_out)
        return run_manifest_write(&o);
    return run_plain(&o);
}

const cli_cmd cli_cmd_hash = {
    "hash", run_hash,
    "hash [--json] [--content | --tensors] [--algo A] [--manifest OUT | --check MANIFEST] PATH",
    "whole-file hash (a directory: tensor-content hash); --content adds the tensor-content "
    "hash, --tensors that and canonical per-tensor hashes; llama-gguf-hash "
    "manifests (check exit: 0 ok, 1 mismatch, 3 missing entry, 4 unknown hash, 5 "
    "manifest unreadable)"};
