/* hub_verify.c - mfmt cache verify: every blob of a Hugging Face cache
 * against its name, every snapshot link against the blobs, every ref
 * against the snapshots. A blob's name is what the Hub calls the file:
 * the SHA-256 of an LFS file's content (its "lfs.sha256"), or the git blob
 * id of a small file kept in git (SHA-1 of "blob SIZE\0" + content, as
 * `git hash-object` computes it); huggingface_hub names blobs by the
 * ETag it got, which is one of the two (file_download.py, _normalize_etag). */
#include "ops/hub_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

MF_API const char *mf_cache_problem_name(mf_cache_problem_kind k)
{
    static const char *const names[] = {"corrupt", "missing", "dangling",
                                        "incomplete", "bad-ref", "unchecked"};
    return (unsigned)k < MF_CACHE_PROBLEM_KINDS ? names[k] : "?";
}

MF_API void mf_cache_verify_free(mf_cache_verify_report *r)
{
    if (!r)
        return;
    free(r->problems);
    mf_arena_free(r->arena);
    free(r);
}

typedef struct verify_ctx {
    mf_cache_verify_report *r;
    mf_arena *a;
    const char *repo_id;
    mf_progress_fn progress;
    void *user;
    uint64_t total;
    size_t cap;
    mf_status *st;
} verify_ctx;

static int add_problem(verify_ctx *c, mf_cache_problem_kind k, const char *path,
                       const char *detail)
{
    mf_cache_verify_report *r = c->r;
    if (mf_vec_grow((void **)&r->problems, &c->cap, r->n_problems + 1, sizeof(*r->problems)))
        return mf_oom(c->st, path);
    r->problems[r->n_problems++] = (mf_cache_problem){k, c->repo_id, path, detail};
    r->count[k]++;
    return 0;
}

/* The digest a blob's name promises: SHA-256 of the content, or for a
 * 40-hex name git's blob SHA-1. Reads the file once in 1 MiB pieces. */
static int hash_blob(verify_ctx *c, const char *path, const char *name, uint64_t size, char hex[129])
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return mf_fail(c->st, MF_ERR_IO, path, -1, "cannot open: %s", strerror(errno));
    mf_hasher *h = hub_blob_hasher(name, size);
    enum { PIECE = 1 << 20 };
    uint8_t *buf = malloc(PIECE);
    int rc = 0;
    if (!h || !buf) {
        rc = mf_oom(c->st, path);
        goto out;
    }
    for (;;) {
        ssize_t got = read(fd, buf, PIECE);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            rc = mf_fail(c->st, MF_ERR_IO, path, -1, "read failed: %s", strerror(errno));
            break;
        }
        if (got == 0)
            break;
        mf_hasher_update(h, buf, (size_t)got);
        c->r->bytes_checked += (uint64_t)got;
        if ((rc = mf_progress_report(c->progress, c->user, c->r->bytes_checked, c->total,
                                     path, c->st)))
            break;
    }
    if (!rc)
        mf_hasher_final_hex(h, hex);
out:
    free(buf);
    mf_hasher_free(h);
    close(fd);
    return rc;
}

static int verify_blobs(verify_ctx *c, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0; /* no blobs/: the copy layout moves every file into the snapshot */
    struct dirent *e;
    int rc = 0;
    while (!rc && (e = readdir(d)) != NULL) {
        const char *name = e->d_name;
        const char *path = mf_path_join(c->a, dir, name);
        struct stat sb;
        size_t n = strlen(name);
        if (name[0] == '.' || !path || stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
            continue;
        if (n > 11 && !strcmp(name + n - 11, ".incomplete")) {
            rc = add_problem(c, MF_CACHE_INCOMPLETE, path,
                             mf_arena_printf(c->a, "an interrupted download (%llu bytes so far)",
                                             (unsigned long long)sb.st_size));
            continue;
        }
        int kind = hub_blob_name_kind(name);
        char hex[129];
        if (!kind)
            continue;
        if ((rc = hash_blob(c, path, name, (uint64_t)sb.st_size, hex)))
            break;
        c->r->n_blobs_checked++;
        if (strcmp(hex, name) != 0)
            rc = add_problem(c, MF_CACHE_CORRUPT, path,
                             mf_arena_printf(c->a, "content hashes to %s (%s), not its name",
                                             hex, kind == 64 ? "SHA-256" : "git blob SHA-1"));
    }
    closedir(d);
    return rc;
}

/* A link whose target is absent: "missing" when it names a blob of this
 * repo (the blob was deleted or never landed), else "dangling". */
static int check_broken_link(verify_ctx *c, const char *path, const char *blobs_real)
{
    char target[PATH_MAX];
    ssize_t n = readlink(path, target, sizeof(target) - 1);
    if (n < 0)
        return add_problem(c, MF_CACHE_DANGLING, path, "unreadable link");
    target[n] = 0;
    const char *slash = strrchr(target, '/');
    const char *base = slash ? slash + 1 : target;
    char dirpart[PATH_MAX * 2], real[PATH_MAX];
    if (slash && target[0] == '/')
        snprintf(dirpart, sizeof(dirpart), "%.*s", (int)(slash - target), target);
    else {
        const char *ls = strrchr(path, '/');
        snprintf(dirpart, sizeof(dirpart), "%.*s/%.*s", (int)(ls - path), path,
                 (int)(slash ? slash - target : 0), target);
    }
    bool in_blobs = blobs_real && realpath(dirpart, real) && !strcmp(real, blobs_real);
    if (in_blobs && hub_blob_name_kind(base))
        return add_problem(c, MF_CACHE_MISSING, path,
                           mf_arena_printf(c->a, "links to blob %s, which is not in blobs/", base));
    return add_problem(c, MF_CACHE_DANGLING, path,
                       mf_arena_printf(c->a, "links to %s, which does not exist", target));
}

/* A folder to walk, unless the walk is already `max` deep (a hostile
 * cache may nest folders, or link them in a loop). */
static DIR *open_within(const char *dir, int depth, int max)
{
    return depth > max ? NULL : opendir(dir);
}

static int verify_snapshot_tree(verify_ctx *c, const char *dir, const char *blobs_real, int depth)
{
    DIR *d = open_within(dir, depth, 32);
    if (!d)
        return 0;
    struct dirent *e;
    int rc = 0;
    while (!rc && (e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        const char *path = mf_path_join(c->a, dir, e->d_name);
        struct stat lsb, sb;
        if (!path || lstat(path, &lsb) != 0)
            continue;
        bool target_ok = stat(path, &sb) == 0;
        if (S_ISLNK(lsb.st_mode) && !target_ok)
            rc = check_broken_link(c, path, blobs_real);
        else if (target_ok && S_ISDIR(sb.st_mode))
            rc = verify_snapshot_tree(c, path, blobs_real, depth + 1);
        else if (S_ISREG(lsb.st_mode))
            rc = add_problem(c, MF_CACHE_UNCHECKED, path,
                             "a plain copy (a cache made without symlinks): no blob name to "
                             "check it against");
    }
    closedir(d);
    return rc;
}

static int verify_refs(verify_ctx *c, const char *repo, const char *refs, const char *prefix,
                       int depth)
{
    DIR *d = open_within(refs, depth, 8);
    if (!d)
        return 0;
    struct dirent *e;
    int rc = 0;
    while (!rc && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        const char *p = mf_path_join(c->a, refs, e->d_name);
        const char *ref = *prefix ? mf_arena_printf(c->a, "%s/%s", prefix, e->d_name)
                                  : mf_arena_strdup(c->a, e->d_name);
        char commit[256];
        if (mf_is_dir(p))
            rc = verify_refs(c, repo, p, ref, depth + 1);
        else if (!hub_commit_of(repo, ref, commit) ||
                 !mf_is_dir(mf_arena_printf(c->a, "%s/snapshots/%s", repo, commit)))
            rc = add_problem(c, MF_CACHE_BAD_REF, p,
                             mf_arena_printf(c->a, "ref %s names commit %s, which has no "
                                                   "snapshot", ref, commit));
    }
    closedir(d);
    return rc;
}

static uint64_t blobs_bytes(const char *dir)
{
    DIR *d = opendir(dir);
    uint64_t total = 0;
    struct dirent *e;
    char p[PATH_MAX];
    struct stat sb;
    while (d && (e = readdir(d)) != NULL) {
        snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
        if (hub_blob_name_kind(e->d_name) && stat(p, &sb) == 0 && S_ISREG(sb.st_mode))
            total += (uint64_t)sb.st_size;
    }
    if (d)
        closedir(d);
    return total;
}

static int verify_repo(verify_ctx *c, const char *repo_dir, const char *repo_id)
{
    c->repo_id = mf_arena_strdup(c->a, repo_id);
    c->r->n_repos++;
    const char *blobs = mf_path_join(c->a, repo_dir, "blobs");
    char real[PATH_MAX];
    const char *blobs_real = realpath(blobs, real) ? mf_arena_strdup(c->a, real) : NULL;
    int rc = verify_blobs(c, blobs);
    if (!rc)
        rc = verify_snapshot_tree(c, mf_path_join(c->a, repo_dir, "snapshots"), blobs_real, 0);
    if (!rc)
        rc = verify_refs(c, repo_dir, mf_path_join(c->a, repo_dir, "refs"), "", 0);
    return rc;
}

/* The repos to check: one (by id or Hub name), or every folder of the cache. */
static int verify_all(verify_ctx *c, const char *cache, const char *repo)
{
    if (repo) {
        hub_name n;
        char type[16] = "model", id[256];
        int k = hub_parse_name(repo, &n, c->st);
        if (k < 0)
            return -1;
        snprintf(id, sizeof(id), "%s", k ? n.id : repo);
        if (k)
            snprintf(type, sizeof(type), "%s", n.type);
        char *dir = hub_repo_folder(cache, type, id);
        if (!dir)
            return mf_oom(c->st, repo);
        int rc = mf_is_dir(dir) ? 0 : mf_fail(c->st, MF_ERR_IO, repo, -1,
                                             "not in the Hugging Face cache %s (no %s)", cache, dir);
        if (!rc) {
            c->total = blobs_bytes(mf_path_join(c->a, dir, "blobs"));
            rc = verify_repo(c, dir, id);
        }
        free(dir);
        return rc;
    }
    DIR *d = opendir(cache);
    if (!d)
        return mf_fail(c->st, MF_ERR_IO, cache, -1, "no Hugging Face cache here: %s",
                       strerror(errno));
    MF_VEC(char *) repos = {0};
    struct dirent *e;
    char type[16], id[256];
    while ((e = readdir(d)) != NULL)
        if (hub_folder_repo(e->d_name, type, id))
            MF_VEC_PUSH(repos, mf_arena_strdup(c->a, e->d_name));
    closedir(d);
    for (size_t i = 0; i < repos.n; i++)
        c->total += blobs_bytes(mf_arena_printf(c->a, "%s/%s/blobs", cache, repos.v[i]));
    int rc = 0;
    for (size_t i = 0; i < repos.n && !rc; i++) {
        hub_folder_repo(repos.v[i], type, id);
        rc = verify_repo(c, mf_path_join(c->a, cache, repos.v[i]), id);
    }
    MF_VEC_FREE(repos);
    return rc;
}

MF_API int mf_cache_verify(const char *cache_dir, const char *repo, mf_progress_fn progress,
                           void *progress_user, mf_cache_verify_report **out, mf_status *st)
{
    MF_ST_GUARD(st);
    *out = NULL;
    char *dir = cache_dir ? strdup(cache_dir) : mf_hub_cache_dir();
    mf_cache_verify_report *r = calloc(1, sizeof(*r));
    mf_arena *a = mf_arena_new();
    if (!dir || !r || !a) {
        free(dir);
        free(r);
        mf_arena_free(a);
        return mf_oom(st, "cache verify");
    }
    r->arena = a;
    r->cache_dir = mf_arena_strdup(a, dir);
    free(dir);
    verify_ctx c = {.r = r, .a = a, .progress = progress, .user = progress_user, .st = st};
    if (verify_all(&c, r->cache_dir, repo)) {
        mf_cache_verify_free(r);
        return -1;
    }
    *out = r;
    return 0;
}
