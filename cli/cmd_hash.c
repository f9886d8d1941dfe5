/* cmd_hash.c - mfmt hash: whole-file hash, tensor-content hash and canonical
 * per-tensor hashes; --manifest / --check for llama-gguf-hash manifests.
 *
 * By default a file gets its whole-file digest only, one pass at the speed
 * of sha256sum (the file is not even parsed); --content adds the
 * tensor-content digest, --tensors both plus one per tensor (a directory has
 * no whole-file digest, so it gets the content digest by default). The
 * hashing is the library's (mf_hash_file; mf_hash_model: one read of the
 * file on two threads when the layout allows; mf_hash_kinds and
 * mf_manifest_* for the manifests); this file parses options and prints. */
#include "cli.h"
#include "hash_record.h"

#include <stdlib.h>
#include <sys/stat.h>

typedef struct hash_opts {
    bool json, tensors, content, no_layer;
    bool jsonl;               /* with json: each object on one line */
    bool gguf_hash;           /* a llama-gguf-hash spelling (--xxh64 ...): its manifest on stdout */
    bool sha256sum;           /* --format sha256sum */
    unsigned mask;            /* MF_HASH_BIT()s from --algo; 0: default */
    const char *manifest_out; /* --manifest OUT */
    const char *check;        /* --check MANIFEST */
    const char *record;       /* --record OUT.json */
    const char *check_record; /* --check-record REC.json */
    const char *path;
    const char *const *paths;
    int n_paths;
    json_t *all; /* --json over several paths: the array of their objects */
} hash_opts;

/* llama-gguf-hash's spellings of the kinds, and its --all */
static const struct {
    const char *opt;
    unsigned mask;
} kind_flags[] = {
    {"--xxh64", MF_HASH_BIT(MF_XXH64)}, {"--sha1", MF_HASH_BIT(MF_SHA1)},
    {"--sha256", MF_HASH_BIT(MF_SHA256)}, {"--uuid", MF_HASH_BIT(MF_HASH_KIND_UUID)},
    {"--all", MF_HASH_BIT(MF_XXH64) | MF_HASH_BIT(MF_SHA1) | MF_HASH_BIT(MF_SHA256) | MF_HASH_BIT(MF_XXH3)},
};

static int parse_one(const cli_args *a, int i, hash_opts *o)
{
    const char *v = a->opt[i].val;
    for (size_t k = 0; k < sizeof(kind_flags) / sizeof(kind_flags[0]); k++)
        if (cli_is(a, i, kind_flags[k].opt)) {
            o->mask |= kind_flags[k].mask;
            o->gguf_hash = true;
            return 0;
        }
    if (cli_is(a, i, "--json"))
        o->json = true;
    else if (cli_is(a, i, "--jsonl"))
        o->json = o->jsonl = true;
    else if (cli_is(a, i, "--tensors"))
        o->tensors = true;
    else if (cli_is(a, i, "--content"))
        o->content = true;
    else if (cli_is(a, i, "--no-layer"))
        o->no_layer = true;
    else if (cli_is(a, i, "--algo")) {
        if (mf_hash_kinds_parse(v, &o->mask))
            return cli_usage_error("hash", "--algo takes sha256, sha1, xxh64, xxh3, "
                                           "(manifests) uuid or all, comma-separated");
    } else if (cli_is(a, i, "--manifest"))
        o->manifest_out = v;
    else if (cli_is(a, i, "--check"))
        o->check = v;
    else if (cli_is(a, i, "--record"))
        o->record = v;
    else if (cli_is(a, i, "--check-record"))
        o->check_record = v;
    else if (cli_is(a, i, "--format")) {
        if (strcmp(v, "sha256sum") != 0 && strcmp(v, "mfmt") != 0)
            return cli_usage_error("hash", "--format takes sha256sum or mfmt");
        o->sha256sum = strcmp(v, "sha256sum") == 0;
    }
    return 0;
}

static int parse(const cli_args *a, hash_opts *o)
{
    memset(o, 0, sizeof(*o));
    cli_json_mode mode;
    if (cli_json_mode_of(a, &mode))
        return EXIT_USAGE;
    for (int i = 0; i < a->n_opts; i++)
        if (parse_one(a, i, o))
            return EXIT_USAGE;
    if (a->n_pos == 0)
        return cli_usage_error("hash", "no path given");
    o->paths = a->pos;
    o->n_paths = a->n_pos;
    o->path = a->pos[0];
    if (o->record || o->check_record) {
        if (o->n_paths > 1 || (o->record && o->check_record) || o->manifest_out || o->check ||
            o->gguf_hash || o->sha256sum || o->content || (o->record && o->json))
            return cli_usage_error("hash", "--record / --check-record take one MODEL and no other "
                                           "mode (--tensors with --record, --json with --check-record)");
        return 0;
    }
    if (o->manifest_out && o->check)
        return cli_usage_error("hash", "--manifest and --check exclude each other");
    bool manifest_mode = o->manifest_out || o->check || o->gguf_hash;
    if (manifest_mode && o->n_paths > 1)
        return cli_usage_error("hash", "manifests are of one model: one path");
    if (o->sha256sum && o->json)
        return cli_usage_error("hash", "--format sha256sum is text; --json and --jsonl are not");
    if (manifest_mode && o->sha256sum)
        return cli_usage_error("hash", "--format sha256sum is for file hashes, not manifests");
    if (manifest_mode && ((!o->check && o->json) || o->tensors || o->content))
        return cli_usage_error("hash", "--content and --tensors do not apply to manifests; --json "
                                       "and --jsonl only to --check");
    if (o->no_layer && !(o->manifest_out || o->gguf_hash))
        return cli_usage_error("hash", "--no-layer goes with a manifest (--manifest, --xxh64, ...)");
    if (!manifest_mode && o->mask && (o->mask & (o->mask - 1) || o->mask & MF_HASH_BIT(MF_HASH_KIND_UUID)))
        return cli_usage_error("hash", "one --algo of sha256, sha1, xxh64, xxh3 (lists and "
                                       "uuid are for --manifest / --check)");
    return 0;
}

/* ------------------------------------------------------------ plain hash */

/* One path's JSON object: --json indented, --jsonl on one line */
static void emit(const hash_opts *o, json_t *root)
{
    cli_json_emit(o->jsonl ? CLI_JSONL : CLI_JSON, o->all, root);
}

/* The whole-file digest of PATH, or of standard input for "-", streamed
 * (a digest needs no mapping, so nothing is spooled). */
/* A model operand: "-" stays "-" (cli_open reads standard input into
 * memory and opens it in place); a Hub name resolved. */
static const char *model_input(const char *path, mf_status *st)
{
    return strcmp(path, "-") == 0 ? path : cli_input_path(path, st);
}

static int digest_path(const char *path, mf_hash_algo algo, char hex[129], mf_status *st)
{
    if (strcmp(path, "-") != 0)
        return mf_hash_file(path, algo, hex, st);
    if (cli_stdin_broken()) /* its digest would be of the rest only */
        return mf_status_fail(st, MF_ERR_USAGE, "-: standard input could not be read whole: "
                              "no digest of it");
    mf_hasher *h = mf_hasher_new(algo);
    if (!h)
        return mf_status_fail(st, MF_ERR_NOMEM, "-: out of memory");
    if (cli_stdin_in_memory()) { /* read already (a model was opened from it) */
        const uint8_t *b;
        size_t n;
        (void)cli_stdin_bytes(&b, &n, st);
        mf_hasher_update(h, b, n);
        mf_hasher_final_hex(h, hex);
        mf_hasher_free(h);
        return 0;
    }
    static char buf[1 << 20];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), stdin)) > 0)
        mf_hasher_update(h, buf, n);
    int rc = ferror(stdin) ? mf_status_fail(st, MF_ERR_IO, "-: reading standard input failed") : 0;
    if (rc == 0)
        mf_hasher_final_hex(h, hex);
    mf_hasher_free(h);
    return rc;
}

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
        emit(o, root);
        return;
    }
    if (r->has_file)
        printf("%s  %s  %s (file)\n", an, r->file_hex, o->path);
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
    if (!strcmp(o->path, "-") && cli_stdin_broken())
        return cli_report(open_st); /* why it was not read whole: no digest of a part */
    if (!dir && digest_path(o->path, algo, hex, &st) != 0) {
        rc = cli_report(&st);
    } else {
        if (!dir && !o->json)
            printf("%s  %s  %s (file)\n", mf_hash_algo_name(algo), hex, o->path);
        rc = cli_report(open_st);
    }
    mf_status_clear(&st);
    return rc;
}

/* The default for a file: its whole-file digest and nothing else. */
static int run_file_only(const hash_opts *o, mf_hash_algo algo)
{
    const char *an = mf_hash_algo_name(algo);
    char hex[129];
    mf_status st;
    mf_status_init(&st);
    int rc = EXIT_FINE;
    if (digest_path(o->path, algo, hex, &st)) {
        rc = cli_report(&st);
    } else if (o->json) {
        json_t *root = json_object();
        json_object_set_new(root, "path", json_string(o->path));
        json_object_set_new(root, an, json_string(hex));
        emit(o, root);
    } else {
        printf("%s  %s  %s (file)\n", an, hex, o->path);
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
    struct stat sb;
    bool whole_file = !(stat(o->path, &sb) == 0 && S_ISDIR(sb.st_mode));
    if (whole_file && !o->content && !o->tensors)
        return run_file_only(o, ho.algo);
    ho.per_tensor = o->tensors;
    mf_status st;
    mf_status_init(&st);
    mf_model *m = NULL;
    int rc = EXIT_FINE;
    mf_hash_result *r = NULL;
    const char *path = model_input(o->path, &st);
    if (!path)
        rc = cli_report(&st);
    else if (cli_open(path, 0, false, &m, &st))
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

/* --no-layer: the model's lines only, in the manifest's line form */
typedef struct line_ctx {
    FILE *f;
    const char *label;
} line_ctx;

static int emit_labelled(void *user, int kind, const char *hex, const char *tensor, mf_status *st)
{
    (void)st;
    const line_ctx *c = user;
    if (!tensor)
        fprintf(c->f, "%-8s  %s  %s\n", mf_hash_kind_name(kind), hex, c->label);
    return 0;
}

static int write_model_lines(const mf_model *m, const hash_opts *o, unsigned mask, mf_status *st)
{
    bool to_stdout = !o->manifest_out || strcmp(o->manifest_out, "-") == 0;
    FILE *f = to_stdout ? stdout : fopen(o->manifest_out, "w");
    if (!f)
        return mf_status_fail(st, MF_ERR_IO, "%s: cannot create", o->manifest_out);
    line_ctx c = {f, o->path};
    int rc = mf_hash_kinds(m, mask, false, emit_labelled, &c, st);
    if (!to_stdout && fclose(f) != 0 && rc == 0)
        rc = mf_status_fail(st, MF_ERR_IO, "%s: write failed", o->manifest_out);
    return rc;
}

static int run_manifest_write(const hash_opts *o)
{
    mf_status st;
    mf_status_init(&st);
    mf_model *m = NULL;
    int rc = EXIT_FINE;
    /* llama-gguf-hash without a kind hashes with xxh64; mfmt --manifest with sha256 */
    unsigned mask = o->mask ? o->mask : MF_HASH_BIT(MF_SHA256);
    const char *path = model_input(o->path, &st);
    if (!path || cli_open(path, 0, false, &m, &st) ||
        (o->no_layer ? write_model_lines(m, o, mask, &st) :
         !o->manifest_out || strcmp(o->manifest_out, "-") == 0
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
    if (cli_quiet && match == MF_MATCH_OK) /* as sha256sum --quiet: the failures only */
        return 0;
    if (user) { /* --json: collected */
        json_array_append_new(user, json_pack("{s:s, s:s, s:s, s:s}", "kind", mf_hash_kind_name(kind),
                                              "hash", hex, "name", name, "result",
                                              mf_manifest_match_name(match)));
        return 0;
    }
    printf("%-8s  %s  %s  -  %s\n", mf_hash_kind_name(kind), hex, name,
           mf_manifest_match_name(match));
    return 0;
}

/* The strongest first, as --check without --algo picks. */
static const int strength_order[MF_HASH_KIND_COUNT] = {MF_SHA256, MF_SHA1, MF_XXH64, MF_XXH3,
                                                       MF_HASH_KIND_UUID};

static int run_manifest_check(const char *model_path, const char *manifest_path, unsigned mask,
                              bool json, bool jsonl)
{
    json_t *lines = json ? json_array() : NULL;
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
    if (!json && !cli_quiet) {
        printf("manifest  %s", manifest_path);
        for (int j = 0; j < MF_HASH_KIND_COUNT; j++)
            if (kinds & MF_HASH_BIT(strength_order[j]))
                printf("  %s", mf_hash_kind_name(strength_order[j]));
        printf("\n");
    }
    const char *path = model_input(model_path, &st);
    if (!path || cli_open(path, 0, false, &m, &st)) {
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
    if (mf_manifest_check(mf, m, label, mask, print_check_line, lines, &outcome, &st)) {
        rc = cli_report(&st);
    } else if (json) {
        rc = (int)outcome;
        cli_json_emit(jsonl ? CLI_JSONL : CLI_JSON, NULL,
                      json_pack("{s:s, s:s, s:s, s:i, s:O}", "path", model_path, "manifest",
                                manifest_path, "result", mf_manifest_outcome_name(outcome), "exit",
                                rc, "lines", lines));
    } else if (cli_quiet) {
        rc = (int)outcome;
    } else {
        rc = (int)outcome;
        printf("\nVerification results for %s - %s\n", manifest_path,
               mf_manifest_outcome_name(outcome));
    }
out:
    json_decref(lines);
    mf_free(label);
    mf_close(m);
    mf_manifest_free(mf);
    mf_status_clear(&st);
    return rc;
}

/* --format sha256sum: "HEX  PATH" lines, as sha256sum -c reads them */
static int run_sha256sum(const hash_opts *o)
{
    int worst = EXIT_FINE;
    for (int i = 0; i < o->n_paths; i++) {
        mf_status st;
        mf_status_init(&st);
        char hex[129];
        if (digest_path(o->paths[i], MF_SHA256, hex, &st)) {
            int e = cli_report(&st);
            worst = e > worst ? e : worst;
        } else {
            printf("%s  %s\n", hex, o->paths[i]);
        }
        mf_status_clear(&st);
    }
    return worst;
}

/* Hub names -> the cache's paths, before anything looks at them */
static int resolve_paths(hash_opts *o, const char **buf)
{
    mf_status st;
    mf_status_init(&st);
    for (int i = 0; i < o->n_paths; i++)
        if (!(buf[i] = cli_hub_path(o->paths[i], &st))) {
            int rc = cli_report(&st);
            mf_status_clear(&st);
            return rc;
        }
    o->paths = buf;
    o->path = buf[0];
    return 0;
}

static int run_hash(const cli_args *a)
{
    hash_opts o;
    const char *resolved[CLI_MAX_ARGS];
    if (parse(a, &o))
        return EXIT_USAGE;
    if (o.record) /* the model argument as given: the record keeps its Hub name */
        return cli_hash_record(o.path, o.record, o.tensors);
    if (o.check_record)
        return cli_hash_check_record(o.path, o.check_record, o.json);
    int rc = resolve_paths(&o, resolved);
    if (rc)
        return rc;
    if (o.check)
        return run_manifest_check(o.path, o.check, o.mask, o.json, o.jsonl);
    if (o.manifest_out || o.gguf_hash)
        return run_manifest_write(&o);
    if (o.sha256sum)
        return run_sha256sum(&o);
    int worst = EXIT_FINE;
    o.all = o.json && !o.jsonl && o.n_paths > 1 ? json_array() : NULL;
    for (int i = 0; i < o.n_paths; i++) {
        o.path = o.paths[i];
        int e = run_plain(&o);
        worst = e > worst ? e : worst;
    }
    if (o.all)
        cli_print_json(o.all);
    return worst;
}

static const cli_opt opts[] = {
    {"--json", NULL, NULL, "one JSON object (also for --check); several paths: an array of them"},
    {"--jsonl", NULL, NULL, "the same objects, one a line (also for --check)"},
    {"--content", NULL, NULL, "also the tensor-content hash (all tensors' bytes, metadata excluded)"},
    {"--tensors", NULL, NULL, "also the tensor-content hash and each tensor's canonical hash"},
    {"--algo", NULL, "A", "sha256 (default), sha1, xxh64 or xxh3; manifests: a comma-separated "
                          "list, uuid or all"},
    {"--manifest", NULL, "OUT", "write a llama-gguf-hash manifest to OUT ('-': stdout)"},
    {"--check", "-c", "MANIFEST", "check the model against a llama-gguf-hash manifest"},
    {"--record", NULL, "OUT", "write a delivery record of every file of MODEL to OUT.json "
                              "(repo, commit, path, size, SHA-256, tensor-content SHA-256)"},
    {"--check-record", NULL, "REC", "check MODEL (a copy) against a delivery record: which "
                                    "file differs, and whether its tensors do"},
    {"--xxh64", NULL, NULL, "llama-gguf-hash's spelling: a manifest with xxh64 lines (stdout "
                            "unless --manifest)"},
    {"--sha1", NULL, NULL, "likewise, sha1 lines"},
    {"--sha256", NULL, NULL, "likewise, sha256 lines"},
    {"--uuid", NULL, NULL, "likewise, the model's UUIDv5"},
    {"--all", NULL, NULL, "likewise, xxh64, xxh3, sha1 and sha256"},
    {"--no-layer", NULL, NULL, "manifests: the model's lines only, no per-tensor lines"},
    {"--format", NULL, "F", "sha256sum: \"HEX  PATH\" lines of each file's SHA-256, which "
                            "`sha256sum -c` checks; mfmt: the default"},
    CLI_OPT_QUIET("--check: only the lines that are not Ok, no header or result line (as "
                  "sha256sum --quiet); the digests otherwise"),
    CLI_OPTS_REMOTE,
    CLI_OPTS_BATCH,
    {0},
};

const cli_cmd cli_cmd_hash = {
    "hash", run_hash, "PATH...",
    "whole-file hash (a directory: tensor-content hash); --content adds the tensor-content hash, "
    "--tensors that and canonical per-tensor hashes; llama-gguf-hash manifests",
    opts,
    "--check exits 0 ok, 1 mismatch, 3 missing entry, 4 unknown hash, 5 manifest unreadable;\n"
    "--check-record 0 ok, 1 a file differs, 3 a recorded file is missing, 5 record unreadable.\n"
    "A PATH of - reads standard input: the whole-file digest streams it; --content, --tensors,\n"
    "manifests and --check spool it to a temporary file first (the readers map their input)."};
