/* hash_record.c - delivery records: mfmt hash --record OUT.json MODEL and
 * mfmt hash --check-record REC.json MODEL (doc/hub.md "Delivery records").
 *
 * A record names, for every file of a model (a cache snapshot, a local
 * directory, one file): the repository and commit when the model came
 * through the Hub cache, the file's path, size and SHA-256 (for an LFS
 * file, the cache's blob name and the Hub's "lfs.sha256"), and the
 * tensor-content SHA-256 (mf_hash_tensor_content: all tensors' canonical
 * bytes, metadata excluded) of the files mfmt can open as models; with
 * --tensors, each tensor's canonical SHA-256 as well. A check tells which
 * of the two hashes differs, since they mean different things: the file
 * hash changes with any byte (metadata, order, alignment), the content
 * hash only when a weight does. */
#include "cli.h"
#include "hash_record.h"

#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>

enum { RECORD_VERSION = 1, MAX_FILES = 100000, MAX_DEPTH = 16 };

typedef struct file_list {
    char **rel;
    size_t n, cap;
} file_list;

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void list_free(file_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->rel[i]);
    free(l->rel);
}

static int list_add(file_list *l, const char *rel)
{
    if (l->n >= MAX_FILES)
        return -1;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        char **g = realloc(l->rel, cap * sizeof(char *));
        if (!g)
            return -1;
        l->rel = g;
        l->cap = cap;
    }
    return (l->rel[l->n] = strdup(rel)) ? (l->n++, 0) : -1;
}

/* Every regular file under dir (links followed: a snapshot is links),
 * relative, sorted; hidden entries (.git, .cache) left out. */
static int walk(const char *dir, const char *rel, file_list *l, int depth)
{
    DIR *d = depth > MAX_DEPTH ? NULL : opendir(dir);
    if (!d)
        return depth > MAX_DEPTH ? 0 : -1;
    struct dirent *e;
    int rc = 0;
    while (!rc && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[4096], sub[4096];
        struct stat sb;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        snprintf(sub, sizeof(sub), "%s%s%s", rel, *rel ? "/" : "", e->d_name);
        if (stat(path, &sb) != 0)
            continue; /* a dangling link: not a file of the model */
        if (S_ISDIR(sb.st_mode))
            rc = walk(path, sub, l, depth + 1);
        else if (S_ISREG(sb.st_mode))
            rc = list_add(l, sub);
    }
    closedir(d);
    return rc;
}

static void tensor_hashes(json_t *entry, const char *path, bool per_tensor)
{
    mf_status st;
    mf_status_init(&st);
    mf_model *m = NULL;
    mf_hash_result *r = NULL;
    mf_hash_opts ho;
    mf_hash_opts_init(&ho);
    ho.whole_file = false;
    ho.per_tensor = per_tensor;
    if (cli_open(path, 0, false, &m, &st) == 0 && mf_model_tensor_count(m) > 0 &&
        mf_hash_model(m, &ho, &r, &st) == 0) {
        json_object_set_new(entry, "format", json_string(mf_format_name(mf_model_format(m))));
        json_object_set_new(entry, "tensor_content_sha256", json_string(r->content_hex));
        if (per_tensor) {
            json_t *ts = json_object();
            for (size_t i = 0; i < r->n_tensors; i++)
                json_object_set_new(ts, mf_tensor_name(mf_model_tensor_at(m, i)),
                                    json_string(r->tensor_hex[i]));
            json_object_set_new(entry, "tensors", ts);
        }
    } else {
        json_object_set_new(entry, "tensor_content_sha256", json_null());
    }
    mf_hash_result_free(r);
    mf_close(m);
    mf_status_clear(&st);
}

/* One file's entry: path, size, sha256, tensor hashes. NULL on a read error. */
static json_t *file_entry(const char *full, const char *rel, bool per_tensor, mf_status *st)
{
    struct stat sb;
    char hex[129];
    if (stat(full, &sb) != 0) { /* stat, not lstat: the blob, never the link */
        mf_status_fail(st, MF_ERR_IO, "%s: cannot stat", full);
        return NULL;
    }
    if (mf_hash_file(full, MF_SHA256, hex, st))
        return NULL;
    json_t *e = json_pack("{s:s, s:I, s:s}", "path", rel, "size", (json_int_t)sb.st_size,
                          "sha256", hex);
    tensor_hashes(e, full, per_tensor);
    return e;
}

/* The model's files: a directory's (relative paths), or the one file (its
 * name in the repo, or its base name). */
static int model_files(const char *path, const char *single_name, file_list *l, bool *is_dir)
{
    struct stat sb;
    if (stat(path, &sb) != 0)
        return -1;
    *is_dir = S_ISDIR(sb.st_mode);
    if (*is_dir) {
        if (walk(path, "", l, 0))
            return -1;
        if (l->n)
            qsort(l->rel, l->n, sizeof(char *), cmp_str);
        return 0;
    }
    const char *base = strrchr(path, '/');
    return list_add(l, single_name ? single_name : base ? base + 1 : path);
}

static void full_path(char *buf, size_t n, const char *model, bool is_dir, const char *rel)
{
    if (is_dir)
        snprintf(buf, n, "%s/%s", model, rel);
    else
        snprintf(buf, n, "%s", model);
}

static json_t *origin_json(const mf_hub_target *t)
{
    if (t->kind == MF_HUB_NONE)
        return json_pack("{s:n, s:n, s:n, s:n}", "repo_type", "repo", "revision", "commit");
    return json_pack("{s:s, s:s, s:s, s:s?}", "repo_type", t->repo_type, "repo", t->repo_id,
                     "revision", t->revision, "commit", t->commit);
}

static int write_text_atomic(const char *out, const char *text, mf_status *st)
{
    if (!strcmp(out, "-"))
        return fputs(text, stdout) < 0 ? mf_status_fail(st, MF_ERR_IO, "stdout: write failed") : 0;
    mf_atomic *w;
    if (mf_atomic_open(out, &w, st))
        return -1;
    if (mf_atomic_write(w, text, strlen(text), st)) {
        mf_atomic_abort(w);
        return -1;
    }
    return mf_atomic_commit(w, st);
}

int cli_hash_record(const char *arg, const char *out, bool per_tensor)
{
    mf_status st;
    mf_status_init(&st);
    mf_hub_target t;
    file_list l = {0};
    bool is_dir = false;
    json_t *files = NULL, *root = NULL;
    int rc = EXIT_FINE;
    if (mf_hub_resolve(arg, NULL, false, &t, &st))
        goto fail;
    if (model_files(t.path, t.file, &l, &is_dir)) {
        mf_status_fail(&st, MF_ERR_IO, "%s: cannot list its files", arg);
        goto fail;
    }
    files = json_array();
    for (size_t i = 0; i < l.n; i++) {
        char full[8192];
        full_path(full, sizeof(full), t.path, is_dir, l.rel[i]);
        json_t *e = file_entry(full, l.rel[i], per_tensor, &st);
        if (!e)
            goto fail;
        json_array_append_new(files, e);
    }
    root = json_pack("{s:i, s:s, s:o, s:o}", "mfmt_record", RECORD_VERSION, "model", arg,
                     "origin", origin_json(&t), "files", files);
    files = NULL;
    char *text = json_dumps(root, JSON_INDENT(2) | JSON_ENSURE_ASCII);
    size_t n = text ? strlen(text) : 0;
    char *nl = text ? realloc(text, n + 2) : NULL;
    if (!nl) {
        free(text);
        mf_status_fail(&st, MF_ERR_NOMEM, "%s: out of memory", out);
        goto fail;
    }
    memcpy(nl + n, "\n", 2);
    int wrc = write_text_atomic(out, nl, &st);
    free(nl);
    if (wrc)
        goto fail;
    if (!cli_quiet && strcmp(out, "-"))
        fprintf(stderr, "mfmt: recorded %zu file%s of %s in %s\n", l.n, l.n == 1 ? "" : "s", arg,
                out);
    goto done;
fail:
    rc = cli_report(&st);
done:
    json_decref(files);
    json_decref(root);
    list_free(&l);
    mf_hub_target_free(&t);
    mf_status_clear(&st);
    return rc;
}

/* ------------------------------------------------------------- checking */

enum { CHECK_OK = 0, CHECK_MISMATCH = 1, CHECK_MISSING = 3, CHECK_UNREADABLE = 5 };

/* What a difference means, for the user who sees it. */
static const char *verdict_text(bool file_same, int content)
{
    if (file_same)
        return "ok";
    if (content == 1)
        return "file differs, tensors identical: only metadata, tensor order or layout changed "
               "(re-saved or edited); the weights are the same";
    if (content == 0)
        return "file differs and tensors differ: the weights are not the recorded ones";
    return "file differs (no tensor-content hash to tell whether the weights changed)";
}

static const char *json_str(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

/* One recorded file against the copy: 0 same, CHECK_MISMATCH, CHECK_MISSING */
static int check_one(const json_t *rec, const char *full, bool json, json_t *out_list)
{
    const char *rel = json_str(rec, "path");
    struct stat sb;
    mf_status st;
    mf_status_init(&st);
    char hex[129];
    int rc = CHECK_OK;
    const char *what;
    int content = -1; /* 1 same, 0 different, -1 not known */
    if (stat(full, &sb) != 0) {
        rc = CHECK_MISSING;
        what = "missing";
    } else if (mf_hash_file(full, MF_SHA256, hex, &st)) {
        rc = CHECK_MISSING;
        what = "unreadable";
    } else {
        bool same = !strcmp(hex, json_str(rec, "sha256")) &&
                    (json_int_t)sb.st_size == json_integer_value(json_object_get(rec, "size"));
        const char *want_c = json_string_value(json_object_get(rec, "tensor_content_sha256"));
        if (!same && want_c) {
            json_t *now = json_object();
            tensor_hashes(now, full, false);
            const char *got_c = json_string_value(json_object_get(now, "tensor_content_sha256"));
            content = got_c ? !strcmp(got_c, want_c) : 0;
            json_decref(now);
        }
        rc = same ? CHECK_OK : CHECK_MISMATCH;
        what = verdict_text(same, content);
    }
    mf_status_clear(&st);
    if (json)
        json_array_append_new(out_list, json_pack("{s:s, s:s, s:s}", "path", rel, "result",
                                                  rc == CHECK_OK ? "ok"
                                                  : rc == CHECK_MISSING ? "missing"
                                                  : content == 1 ? "file-differs-tensors-same"
                                                                 : "differs",
                                                  "meaning", what));
    else if (rc != CHECK_OK || !cli_quiet)
        printf("%s: %s\n", rel, what);
    return rc;
}

static int load_record(const char *path, json_t **out)
{
    json_error_t err;
    *out = json_load_file(path, 0, &err);
    if (!*out || json_integer_value(json_object_get(*out, "mfmt_record")) != RECORD_VERSION ||
        !json_is_array(json_object_get(*out, "files"))) {
        fprintf(stderr, "mfmt: %s: line %d: not an mfmt delivery record%s%s\n", path,
                *out ? 0 : err.line, *out ? "" : ": ", *out ? "" : err.text);
        json_decref(*out);
        *out = NULL;
        return -1;
    }
    return 0;
}

int cli_hash_check_record(const char *arg, const char *record, bool json)
{
    json_t *rec;
    if (load_record(record, &rec))
        return CHECK_UNREADABLE;
    mf_status st;
    mf_status_init(&st);
    mf_hub_target t;
    if (mf_hub_resolve(arg, NULL, false, &t, &st)) {
        json_decref(rec);
        int rc = cli_report(&st);
        mf_status_clear(&st);
        return rc;
    }
    struct stat sb;
    bool is_dir = stat(t.path, &sb) == 0 && S_ISDIR(sb.st_mode);
    json_t *files = json_object_get(rec, "files"), *list = json_array();
    int worst = CHECK_OK;
    size_t n = json_array_size(files), bad = 0;
    for (size_t i = 0; i < n; i++) {
        const json_t *f = json_array_get(files, i);
        char full[8192];
        /* a single file is checked against the record's single entry */
        full_path(full, sizeof(full), t.path, is_dir || n != 1, json_str(f, "path"));
        int rc = check_one(f, full, json, list);
        bad += rc != CHECK_OK;
        worst = rc > worst ? rc : worst;
    }
    const json_t *o = json_object_get(rec, "origin");
    if (json)
        cli_print_json(json_pack("{s:s, s:s, s:O?, s:O?, s:b, s:o}", "model", arg, "record",
                                 record, "repo", json_object_get(o, "repo"), "commit",
                                 json_object_get(o, "commit"), "ok", worst == CHECK_OK,
                                 "files", list));
    else {
        json_decref(list);
        if (!cli_quiet)
            printf("%zu of %zu recorded files match%s%s\n", n - bad, n,
                   json_string_value(json_object_get(o, "repo")) ? " " : "",
                   json_string_value(json_object_get(o, "repo")) ? json_str(o, "repo") : "");
    }
    json_decref(rec);
    mf_hub_target_free(&t);
    mf_status_clear(&st);
    return worst;
}
