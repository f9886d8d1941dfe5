/* hub_cache.c - mfmt cache scan: the repos of a Hugging Face cache, their
 * revisions and sizes, as huggingface_hub's scan_cache_dir (utils/
 * _cache_manager.py) reports them: a repo's size is that of the distinct
 * files its snapshots lead to (blobs counted once, by their resolved
 * path, stat()ed through the link), a revision's that of its own files. */
#include "ops/hub_int.h"

#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

MF_API void mf_cache_report_free(mf_cache_report *r)
{
    if (!r)
        return;
    mf_arena_free(r->arena);
    free(r);
}

typedef MF_VEC(const char *) strvec;

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Entry names of a directory, sorted (arena-owned); n = 0 when unreadable. */
static char **list_dir(mf_arena *a, const char *dir, size_t *n)
{
    *n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return NULL;
    MF_VEC(char *) v = {0};
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char *s = mf_arena_strdup(a, e->d_name);
        if (!s || MF_VEC_PUSH(v, s))
            break;
    }
    closedir(d);
    if (!v.n) {
        MF_VEC_FREE(v);
        return NULL;
    }
    char **out = mf_arena_calloc(a, v.n, sizeof(char *));
    if (out) {
        memcpy(out, v.v, v.n * sizeof(char *));
        *n = v.n;
        qsort(out, v.n, sizeof(char *), cmp_str);
    }
    MF_VEC_FREE(v);
    return out;
}

typedef struct scan_ctx {
    mf_arena *a;
    mf_strset repo_blobs;    /* resolved paths counted for the repo */
    mf_cache_repo *repo;
} scan_ctx;

/* One snapshot entry (recursing into folders): counts its file and, once
 * per repo and once per revision, the size of what it resolves to. */
static void scan_snapshot_entry(scan_ctx *c, const char *path, mf_strset *rev_blobs,
                                mf_cache_revision *rev, int depth)
{
    struct stat sb;
    if (depth > 32 || stat(path, &sb) != 0)
        return; /* dangling: verify reports it; scan_cache_dir skips it too */
    if (S_ISDIR(sb.st_mode)) {
        size_t n;
        char **names = list_dir(c->a, path, &n);
        for (size_t i = 0; i < n; i++)
            scan_snapshot_entry(c, mf_path_join(c->a, path, names[i]), rev_blobs, rev, depth + 1);
        return;
    }
    rev->n_files++;
    char real[PATH_MAX];
    const char *key = realpath(path, real) ? mf_arena_strdup(c->a, real) : NULL;
    if (!key)
        return;
    if (mf_strset_add(rev_blobs, key) == 1)
        rev->size_on_disk += (uint64_t)sb.st_size;
    if (mf_strset_add(&c->repo_blobs, key) == 1) {
        c->repo->size_on_disk += (uint64_t)sb.st_size;
        c->repo->n_blobs++;
        if ((int64_t)sb.st_mtime > c->repo->last_modified)
            c->repo->last_modified = (int64_t)sb.st_mtime;
    }
}

/* refs/ (nested: refs/refs/pr/1) -> the refs naming `commit` */
static void collect_refs(scan_ctx *c, const char *refs_dir, const char *prefix,
                         const char *commit, strvec *out, int depth)
{
    size_t n;
    char **names = list_dir(c->a, refs_dir, &n);
    for (size_t i = 0; i < n && depth < 8; i++) {
        const char *p = mf_path_join(c->a, refs_dir, names[i]);
        const char *ref = *prefix ? mf_arena_printf(c->a, "%s/%s", prefix, names[i]) : names[i];
        char got[256];
        if (mf_is_dir(p))
            collect_refs(c, p, ref, commit, out, depth + 1);
        else if (p && hub_commit_of(c->repo->path, ref, got) && !strcmp(got, commit))
            MF_VEC_PUSH(*out, ref);
    }
}

static int scan_repo(scan_ctx *c, const char *dir)
{
    mf_cache_repo *r = c->repo;
    const char *snaps = mf_path_join(c->a, dir, "snapshots");
    size_t n;
    char **commits = list_dir(c->a, snaps, &n);
    r->revisions = n ? mf_arena_calloc(c->a, n, sizeof(*r->revisions)) : NULL;
    memset(&c->repo_blobs, 0, sizeof(c->repo_blobs));
    for (size_t i = 0; i < n; i++) {
        mf_cache_revision *rev = &r->revisions[r->n_revisions];
        const char *sd = mf_path_join(c->a, snaps, commits[i]);
        if (!mf_is_dir(sd))
            continue;
        rev->commit = commits[i];
        mf_strset rev_blobs = {0};
        scan_snapshot_entry(c, sd, &rev_blobs, rev, 0);
        mf_strset_free(&rev_blobs);
        strvec refs = {0};
        collect_refs(c, mf_path_join(c->a, dir, "refs"), "", rev->commit, &refs, 0);
        if (refs.n && (rev->refs = mf_arena_calloc(c->a, refs.n, sizeof(char *)))) {
            memcpy(rev->refs, refs.v, refs.n * sizeof(char *));
            rev->n_refs = refs.n;
        }
        MF_VEC_FREE(refs);
        r->n_revisions++;
    }
    mf_strset_free(&c->repo_blobs);
    return 0;
}

static int cmp_repo(const void *a, const void *b)
{
    const mf_cache_repo *x = a, *y = b;
    int t = strcmp(x->repo_type, y->repo_type);
    return t ? t : strcmp(x->repo_id, y->repo_id);
}

MF_API int mf_cache_scan(const char *cache_dir, mf_cache_report **out, mf_status *st)
{
    MF_ST_GUARD(st);
    *out = NULL;
    char *dir = cache_dir ? strdup(cache_dir) : mf_hub_cache_dir();
    mf_cache_report *r = calloc(1, sizeof(*r));
    mf_arena *a = mf_arena_new();
    if (!dir || !r || !a) {
        free(dir);
        free(r);
        mf_arena_free(a);
        return mf_oom(st, "cache scan");
    }
    r->arena = a;
    r->cache_dir = mf_arena_strdup(a, dir);
    free(dir);
    if (!mf_is_dir(r->cache_dir)) {
        int rc = mf_fail(st, MF_ERR_IO, r->cache_dir, -1,
                         "no Hugging Face cache here (set HF_HUB_CACHE or HF_HOME)");
        mf_cache_report_free(r);
        return rc;
    }
    size_t n;
    char **names = list_dir(a, r->cache_dir, &n);
    r->repos = n ? mf_arena_calloc(a, n, sizeof(*r->repos)) : NULL;
    strvec warn = {0};
    for (size_t i = 0; i < n; i++) {
        const char *p = mf_path_join(a, r->cache_dir, names[i]);
        char type[16], id[256];
        if (names[i][0] == '.' || !strcmp(names[i], "version.txt") ||
            !strcmp(names[i], "CACHEDIR.TAG"))
            continue; /* .locks, huggingface_hub's own files */
        if (!mf_is_dir(p) || !hub_folder_repo(names[i], type, id) ||
            !mf_is_dir(mf_path_join(a, p, "snapshots"))) {
            MF_VEC_PUSH(warn, mf_arena_printf(a, "%s: not a repo folder of the cache (expected "
                                                 "TYPEs--ORG--NAME/snapshots)", p));
            continue;
        }
        mf_cache_repo *repo = &r->repos[r->n_repos++];
        repo->repo_type = mf_arena_strdup(a, type);
        repo->repo_id = mf_arena_strdup(a, id);
        repo->path = p;
        scan_ctx c = {.a = a, .repo = repo};
        scan_repo(&c, p);
        r->size_on_disk += repo->size_on_disk;
    }
    if (r->n_repos)
        qsort(r->repos, r->n_repos, sizeof(*r->repos), cmp_repo);
    if (warn.n && (r->warnings = mf_arena_calloc(a, warn.n, sizeof(char *)))) {
        memcpy(r->warnings, warn.v, warn.n * sizeof(char *));
        r->n_warnings = warn.n;
    }
    MF_VEC_FREE(warn);
    *out = r;
    return 0;
}
