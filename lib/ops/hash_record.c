/* hash_record.c - delivery records (`mfmt hash --record OUT.json MODEL`,
 * `--check-record REC.json MODEL`; doc/hub.md "Delivery records"): moved
 * here from the CLI so that every binding reaches them.
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
#include "core/core.h"

#include <jansson.h>

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
    mf_open_opts oo;
    mf_open_opts_init(&oo);
    oo.flags = MF_OPEN_NO_SCAN; /* hashes only: nothing a loader would run */
    if (mf_open(path, &oo, &m, &st) == 0 && mf_model_tensor_count(m) > 0 &&
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
        mf_fail(st, MF_ERR_IO, full, -1, "cannot stat");
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

int mf_record_make(const char *model, bool per_tensor, char **json_text, size_t *n_files,
                   mf_status *st)
{
    MF_ST_GUARD(st);
    *json_text = NULL;
    if (n_files)
        *n_files = 0;
    mf_hub_target t;
    file_list l = {0};
    bool is_dir = false;
    json_t *files = NULL, *root = NULL;
    int rc = -1;
    if (mf_hub_resolve(model, NULL, false, &t, st))
        return -1;
    if (model_files(t.path, t.file, &l, &is_dir)) {
        mf_fail(st, MF_ERR_IO, model, -1, "cannot list its files");
        goto done;
    }
    files = json_array();
    for (size_t i = 0; i < l.n; i++) {
        char full[8192];
        full_path(full, sizeof(full), t.path, is_dir, l.rel[i]);
        json_t *e = file_entry(full, l.rel[i], per_tensor, st);
        if (!e)
            goto done;
        json_array_append_new(files, e);
    }
    root = json_pack("{s:i, s:s, s:o, s:o}", "mfmt_record", RECORD_VERSION, "model", model,
                     "origin", origin_json(&t), "files", files);
    files = NULL;
    char *text = root ? json_dumps(root, JSON_INDENT(2) | JSON_ENSURE_ASCII) : NULL;
    size_t n = text ? strlen(text) : 0;
    char *nl = text ? realloc(text, n + 2) : NULL;
    if (!nl) {
        free(text);
        mf_oom(st, model);
        goto done;
    }
    memcpy(nl + n, "\n", 2);
    *json_text = nl;
    if (n_files)
        *n_files = l.n;
    rc = 0;
done:
    json_decref(files);
    json_decref(root);
    list_free(&l);
    mf_hub_target_free(&t);
    return rc;
}

/* ------------------------------------------------------------- checking */

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

/* One recorded file against the copy, into c. */
static int check_one(const json_t *rec, const char *full, mf_record_file_check *c)
{
    struct stat sb;
    mf_status st;
    mf_status_init(&st);
    char hex[129];
    int content = -1; /* 1 same, 0 different, -1 not known */
    c->result = MF_RECORD_OK;
    if (stat(full, &sb) != 0) {
        c->result = MF_RECORD_MISSING;
        c->meaning = "missing";
    } else if (mf_hash_file(full, MF_SHA256, hex, &st)) {
        c->result = MF_RECORD_MISSING;
        c->meaning = "unreadable";
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
        c->result = same ? MF_RECORD_OK : MF_RECORD_DIFFERS;
        c->meaning = verdict_text(same, content);
    }
    mf_status_clear(&st);
    c->tensors_same = content;
    c->result_name = c->result == MF_RECORD_OK        ? "ok"
                   : c->result == MF_RECORD_MISSING   ? "missing"
                   : content == 1                      ? "file-differs-tensors-same"
                                                       : "differs";
    c->path = strdup(json_str(rec, "path"));
    return c->path ? 0 : -1;
}

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

void mf_record_report_free(mf_record_report *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n_files; i++)
        free((void *)c->files[i].path);
    free(c->files);
    free(c->repo);
    free(c->commit);
    free(c);
}

int mf_record_check(const char *model, const char *record, mf_record_report **out, mf_status *st)
{
    MF_ST_GUARD(st);
    *out = NULL;
    mf_record_report *c = calloc(1, sizeof(*c));
    if (!c)
        return mf_oom(st, record);
    json_error_t err;
    json_t *rec = json_load_file(record, 0, &err);
    if (!rec || json_integer_value(json_object_get(rec, "mfmt_record")) != RECORD_VERSION ||
        !json_is_array(json_object_get(rec, "files"))) {
        /* an unreadable record is an outcome (as a manifest's), not a failure */
        snprintf(c->error, sizeof(c->error), "%s: line %d: not an mfmt delivery record%s%s", record,
                 rec ? 0 : err.line, rec ? "" : ": ", rec ? "" : err.text);
        json_decref(rec);
        c->outcome = MF_RECORD_UNREADABLE;
        *out = c;
        return 0;
    }
    mf_hub_target t;
    if (mf_hub_resolve(model, NULL, false, &t, st)) {
        json_decref(rec);
        free(c);
        return -1;
    }
    struct stat sb;
    bool is_dir = stat(t.path, &sb) == 0 && S_ISDIR(sb.st_mode);
    json_t *files = json_object_get(rec, "files");
    size_t n = json_array_size(files);
    int rc = (c->files = calloc(n ? n : 1, sizeof(*c->files))) ? 0 : mf_oom(st, record);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const json_t *f = json_array_get(files, i);
        char full[8192];
        /* a single file is checked against the record's single entry */
        full_path(full, sizeof(full), t.path, is_dir || n != 1, json_str(f, "path"));
        rc = check_one(f, full, &c->files[c->n_files]) ? mf_oom(st, record) : 0;
        c->n_files += rc == 0;
        if (rc == 0 && c->files[i].result > c->outcome)
            c->outcome = c->files[i].result;
    }
    const json_t *o = json_object_get(rec, "origin");
    const char *repo = json_string_value(json_object_get(o, "repo")),
               *commit = json_string_value(json_object_get(o, "commit"));
    if (rc == 0 && ((repo && !(c->repo = dup_or_null(repo))) ||
                    (commit && !(c->commit = dup_or_null(commit)))))
        rc = mf_oom(st, record);
    json_decref(rec);
    mf_hub_target_free(&t);
    if (rc) {
        mf_record_report_free(c);
        return -1;
    }
    *out = c;
    return 0;
}
