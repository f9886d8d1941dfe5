/* hub_download.c - mfmt download: a repo (or files of it) into the Hugging
 * Face cache in huggingface_hub's layout (file_download.py hf_hub_download,
 * _snapshot_download.py snapshot_download), so that transformers and `hf`
 * find it there:
 *   refs/REV                       the commit REV resolved to (no newline)
 *   blobs/NAME                     NAME = the file's ETag: the LFS SHA-256
 *                                  (X-Linked-ETag) or the git blob SHA-1
 *   blobs/NAME.incomplete          a download in progress: resumed by range
 *   snapshots/COMMIT/FILE          -> ../../blobs/NAME (relative symlink)
 *   ../.locks/REPO/NAME.lock       huggingface_hub's per-blob lock (flock)
 * Each blob is hashed as its bytes land (the part already on disk first,
 * when resuming) and renamed into place only when the content hashes to
 * its name: a blob in blobs/ is always whole and right. The transfers are
 * the ranged GETs of core/http.c (redirects, retries, budget, token). */
#include "ops/hub_int.h"
#include "core/remote.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <ftw.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

enum {
    API_MAX = 16 << 20, /* a repo listing larger than this is refused */
    PIECE = 8 << 20,    /* bytes per range request while downloading */
};

MF_API void mf_hub_download_opts_init(mf_hub_download_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->struct_size = sizeof(*o);
}

MF_API void mf_hub_download_report_free(mf_hub_download_report *r)
{
    if (!r)
        return;
    free(r->files);
    mf_arena_free(r->arena);
    free(r);
}

typedef struct dl_ctx {
    mf_hub_download_opts o;
    hub_name name;
    const char *repo_dir;    /* cache/models--ORG--NAME */
    const char *lock_dir;    /* cache/.locks/models--ORG--NAME */
    mf_hub_download_report *r;
    size_t cap;
    void *http;              /* the curl handle kept between ranges */
    uint8_t *buf;            /* PIECE bytes */
    uint64_t missing, done;  /* progress: bytes to fetch, fetched */
    mf_status *st;
} dl_ctx;

/* mkdir -p of the folders of path (not its last part). */
static int make_parents(const char *path, mf_status *st)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof(tmp), "%s", path) >= (int)sizeof(tmp))
        return mf_fail(st, MF_ERR_USAGE, path, -1, "path too long");
    for (char *s = tmp + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = 0;
        if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
            return mf_fail(st, MF_ERR_IO, tmp, -1, "cannot make the folder: %s", strerror(errno));
        *s = '/';
    }
    return 0;
}

/* ------------------------------------------------------ the listing */

/* The API's answer for the revision: its commit and the file names. */
static int fetch_listing(dl_ctx *c, json_t **out)
{
    char *url = hub_url(&c->name, NULL, true);
    if (!url)
        return mf_oom(c->st, c->name.id);
    mf_http_meta meta = {0};
    int rc = mf_http_get_range(&c->http, url, 0, API_MAX, c->buf, &meta, c->st);
    if (!rc && meta.total > meta.got)
        rc = mf_fail(c->st, MF_ERR_UNSUPPORTED, url, -1,
                     "the repo listing is larger than %d MiB", API_MAX >> 20);
    json_error_t jerr;
    if (!rc && !(*out = json_loadb((const char *)c->buf, (size_t)meta.got, 0, &jerr)))
        rc = mf_fail(c->st, MF_ERR_FORMAT, url, jerr.position,
                     "the Hub's answer is not JSON: %s", jerr.text);
    free(url);
    return rc;
}

static bool matches_any(const char *path, const char *const *pats, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        /* huggingface_hub's filter_repo_objects: a pattern ending in "/"
         * means the folder's whole content; fnmatch without FNM_PATHNAME
         * ("*" crosses "/"), as Python's fnmatch */
        size_t k = strlen(pats[i]);
        char p[1100];
        snprintf(p, sizeof(p), "%s%s", pats[i], k && pats[i][k - 1] == '/' ? "*" : "");
        if (fnmatch(p, path, 0) == 0)
            return true;
    }
    return false;
}

static bool wanted(const dl_ctx *c, const char *path)
{
    if (c->name.file[0])
        return !strcmp(path, c->name.file);
    if (c->o.include && !matches_any(path, c->o.include, c->o.n_include))
        return false;
    return !(c->o.exclude && matches_any(path, c->o.exclude, c->o.n_exclude));
}

static int add_file(dl_ctx *c, const char *path)
{
    mf_hub_download_report *r = c->r;
    if (mf_vec_grow((void **)&r->files, &c->cap, r->n_files + 1, sizeof(*r->files)))
        return mf_oom(c->st, path);
    mf_hub_download_file *f = &r->files[r->n_files++];
    memset(f, 0, sizeof(*f));
    f->path = mf_arena_strdup(r->arena, path);
    return f->path ? 0 : mf_oom(c->st, path);
}

/* The commit and the files wanted, each checked to stay in its snapshot. */
static int read_listing(dl_ctx *c, json_t *j, const char *url)
{
    const char *sha = json_string_value(json_object_get(j, "sha"));
    if (!sha || hub_blob_name_kind(sha) != 40)
        return mf_fail(c->st, MF_ERR_FORMAT, url, -1,
                       "the Hub's answer has no commit (\"sha\" of 40 lower-case hex digits)");
    c->r->commit = mf_arena_strdup(c->r->arena, sha);
    json_t *sib = json_object_get(j, "siblings");
    if (!json_is_array(sib))
        return mf_fail(c->st, MF_ERR_FORMAT, url, -1, "the Hub's answer has no \"siblings\" list");
    size_t i;
    json_t *e;
    json_array_foreach(sib, i, e) {
        const char *f = json_string_value(json_object_get(e, "rfilename"));
        if (!f || !hub_safe_rel_path(f) || strlen(f) >= sizeof(c->name.file))
            return mf_fail(c->st, MF_ERR_FORMAT, url, -1,
                           "sibling %zu's rfilename \"%s\" would leave the snapshot folder", i,
                           f ? f : "(none)");
        if (wanted(c, f) && add_file(c, f))
            return -1;
    }
    if (c->name.file[0] && c->r->n_files == 0)
        return mf_fail(c->st, MF_ERR_IO, c->name.file, -1, "%s has no file %s at %s", c->name.id,
                       c->name.file, c->name.revision);
    return c->r->commit ? 0 : mf_oom(c->st, url);
}

/* --------------------------------------------------------- one blob */

/* The blob name the Hub gives a file (huggingface_hub's _normalize_etag:
 * X-Linked-ETag before ETag, "W/" and quotes dropped). */
static int blob_name_of(const mf_remote_file_info *in, const char *url, char name[129],
                        mf_status *st)
{
    const char *e = in->linked_etag[0] ? in->linked_etag : in->etag;
    if (!strncmp(e, "W/", 2))
        e += 2;
    size_t n = strlen(e);
    if (n >= 2 && e[0] == '"' && e[n - 1] == '"') {
        e++;
        n -= 2;
    }
    snprintf(name, 129, "%.*s", (int)(n < 128 ? n : 128), e);
    if (!hub_blob_name_kind(name))
        return mf_fail(st, MF_ERR_FORMAT, url, -1,
                       "the server's ETag \"%s\" is not a SHA-256 or git SHA-1: the download "
                       "could not be checked", name);
    return 0;
}

/* Feeds the bytes already in the partial file to the hasher; returns how
 * many there were (the resume point). */
static int hash_existing(int fd, mf_hasher *h, uint8_t *buf, const char *path, uint64_t *have,
                         mf_status *st)
{
    *have = 0;
    for (;;) {
        ssize_t got = pread(fd, buf, PIECE, (off_t)*have);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return mf_fail(st, MF_ERR_IO, path, (int64_t)*have, "read failed: %s", strerror(errno));
        if (got == 0)
            return 0;
        mf_hasher_update(h, buf, (size_t)got);
        *have += (uint64_t)got;
    }
}

static int write_all(int fd, const uint8_t *p, size_t n, uint64_t off, const char *path,
                     mf_status *st)
{
    while (n) {
        ssize_t w = pwrite(fd, p, n, (off_t)off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return mf_fail(st, MF_ERR_IO, path, (int64_t)off, "write failed: %s",
                           w < 0 ? strerror(errno) : "no progress");
        p += w;
        n -= (size_t)w;
        off += (uint64_t)w;
    }
    return 0;
}

/* Bytes [have, size) of url appended to fd, hashed as they land. */
static int fetch_rest(dl_ctx *c, const char *url, int fd, const char *part, mf_hasher *h,
                      uint64_t have, uint64_t size, mf_hub_download_file *f)
{
    mf_http_meta meta = {0};
    for (uint64_t off = have; off < size;) {
        uint64_t n = size - off < PIECE ? size - off : PIECE;
        if (mf_http_get_range(&c->http, url, off, n, c->buf, &meta, c->st))
            return -1;
        if (meta.total != size)
            return mf_fail(c->st, MF_ERR_IO, url, (int64_t)off,
                           "the file's size changed during the download (%llu, was %llu)",
                           (unsigned long long)meta.total, (unsigned long long)size);
        if (write_all(fd, c->buf, (size_t)n, off, part, c->st))
            return -1;
        mf_hasher_update(h, c->buf, (size_t)n);
        off += n;
        f->fetched += n;
        c->r->bytes_fetched += n;
        c->done += n;
        if (mf_progress_report(c->o.progress, c->o.progress_user, c->done, c->missing, f->path,
                               c->st))
            return -1;
    }
    return 0;
}

/* The whole blob through NAME.incomplete: resumed, hashed, checked,
 * fsynced, renamed. The partial file is removed when its content is
 * wrong (kept, for a resume, after a transfer error). */
static int download_blob(dl_ctx *c, const char *url, const char *blob, const char *part,
                         mf_hub_download_file *f)
{
    int fd = open(part, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return mf_fail(c->st, MF_ERR_IO, part, -1, "cannot open: %s", strerror(errno));
    mf_hasher *h = hub_blob_hasher(blob, f->size);
    int rc = h ? 0 : mf_oom(c->st, part);
    uint64_t have = 0;
    if (!rc)
        rc = hash_existing(fd, h, c->buf, part, &have, c->st);
    if (!rc && have > f->size) { /* not a prefix of this file: start again */
        rc = ftruncate(fd, 0) ? mf_fail(c->st, MF_ERR_IO, part, -1, "cannot truncate: %s",
                                        strerror(errno)) : 0;
        mf_hasher_free(h);
        h = hub_blob_hasher(blob, f->size);
        rc = rc ? rc : h ? 0 : mf_oom(c->st, part);
        have = 0;
    }
    f->state = have ? MF_DL_RESUMED : MF_DL_DOWNLOADED;
    if (!rc)
        rc = fetch_rest(c, url, fd, part, h, have, f->size, f);
    char hex[129] = "";
    if (!rc)
        mf_hasher_final_hex(h, hex);
    mf_hasher_free(h);
    if (!rc && strcmp(hex, blob) != 0) {
        unlink(part);
        rc = mf_fail(c->st, MF_ERR_FORMAT, url, -1,
                     "the content hashes to %s, not to its name %s: the download was corrupted "
                     "(removed; nothing linked)", hex, blob);
    }
    if (!rc && fsync(fd) != 0)
        rc = mf_fail(c->st, MF_ERR_IO, part, -1, "fsync failed: %s", strerror(errno));
    close(fd);
    if (!rc) {
        char final[4200];
        snprintf(final, sizeof(final), "%.*s", (int)(strlen(part) - 11), part);
        if (rename(part, final) != 0)
            rc = mf_fail(c->st, MF_ERR_IO, final, -1, "cannot rename into place: %s",
                         strerror(errno));
    }
    return rc;
}

/* huggingface_hub's lock for a blob (filelock's flock on
 * .locks/REPO/NAME.lock): held while the blob is written, so two
 * downloads (ours or theirs) never write one blob together. */
static int lock_blob(dl_ctx *c, const char *blob, int *fd)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/%s.lock", c->lock_dir, blob);
    if (make_parents(path, c->st))
        return -1;
    *fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (*fd < 0)
        return mf_fail(c->st, MF_ERR_IO, path, -1, "cannot open the lock: %s", strerror(errno));
    if (flock(*fd, LOCK_EX | LOCK_NB) != 0) {
        close(*fd);
        *fd = -1;
        return mf_fail(c->st, MF_ERR_IO, path, -1,
                       "another download of this blob is running (the lock is held)");
    }
    return 0;
}

/* snapshots/COMMIT/FILE -> ../../blobs/NAME ("../" once more for each
 * folder of FILE), replacing whatever was there. */
static int link_snapshot(dl_ctx *c, const char *file, const char *blob)
{
    char link[4200], target[2400], tmp[4300];
    snprintf(link, sizeof(link), "%s/snapshots/%s/%s", c->repo_dir, c->r->commit, file);
    size_t k = 0;
    for (const char *s = file; *s; s++)
        if (*s == '/')
            k += (size_t)snprintf(target + k, sizeof(target) - k, "../");
    snprintf(target + k, sizeof(target) - k, "../../blobs/%s", blob);
    if (make_parents(link, c->st))
        return -1;
    char cur[2400];
    ssize_t n = readlink(link, cur, sizeof(cur) - 1);
    if (n >= 0 && (cur[n] = 0, !strcmp(cur, target)))
        return 0;
    snprintf(tmp, sizeof(tmp), "%s.mfmt-link-%ld", link, (long)getpid());
    unlink(tmp);
    if (symlink(target, tmp) != 0 || rename(tmp, link) != 0) {
        int e = errno;
        unlink(tmp);
        return mf_fail(c->st, MF_ERR_IO, link, -1, "cannot link to the blob: %s", strerror(e));
    }
    return 0;
}

/* The file's URL at the commit (malloc'd). */
static char *file_url(const dl_ctx *c, const mf_hub_download_file *f)
{
    hub_name n = c->name;
    snprintf(n.file, sizeof(n.file), "%s", f->path);
    return hub_url(&n, c->r->commit, false);
}

static void blob_paths(const dl_ctx *c, const char *blob, char final[4200], char part[4300])
{
    snprintf(final, 4200, "%s/blobs/%s", c->repo_dir, blob);
    snprintf(part, 4300, "%s.incomplete", final);
}

/* What the Hub says of the file (one 1-byte range: its ETag and size) and
 * what the cache holds of it: present, partial (counted as missing bytes
 * beyond the part) or absent. */
static int describe_file(dl_ctx *c, mf_hub_download_file *f)
{
    char *url = file_url(c, f);
    if (!url)
        return mf_oom(c->st, f->path);
    mf_remote_file_info info;
    char blob[129], final[4200], part[4300];
    int rc = mf_remote_info(url, &info, c->st);
    rc = rc ? rc : blob_name_of(&info, url, blob, c->st);
    free(url);
    if (rc)
        return -1;
    if (!(f->blob = mf_arena_strdup(c->r->arena, blob)))
        return mf_oom(c->st, f->path);
    f->size = info.linked_size ? info.linked_size : info.size;
    blob_paths(c, blob, final, part);
    struct stat sb;
    if (stat(final, &sb) == 0 && (uint64_t)sb.st_size == f->size) {
        f->state = MF_DL_PRESENT; /* as huggingface_hub: a blob in place is whole */
        return 0;
    }
    f->state = MF_DL_DOWNLOADED;
    uint64_t have = stat(part, &sb) == 0 && (uint64_t)sb.st_size <= f->size ? (uint64_t)sb.st_size : 0;
    c->missing += f->size - have;
    return 0;
}

/* Fetches a blob that is not in place, under its lock. */
static int fetch_file(dl_ctx *c, mf_hub_download_file *f)
{
    char final[4200], part[4300];
    blob_paths(c, f->blob, final, part);
    char *url = file_url(c, f);
    int lock = -1;
    int rc = url ? make_parents(final, c->st) : mf_oom(c->st, f->path);
    rc = rc ? rc : lock_blob(c, f->blob, &lock);
    struct stat sb;
    if (!rc && stat(final, &sb) == 0 && (uint64_t)sb.st_size == f->size)
        f->state = MF_DL_PRESENT; /* another download finished it meanwhile */
    else if (!rc)
        rc = download_blob(c, url, f->blob, part, f);
    if (lock >= 0)
        close(lock); /* releases the flock */
    free(url);
    return rc;
}

/* refs/REV holds the commit (no newline), unless REV is the commit. */
static int write_ref(dl_ctx *c)
{
    const char *rev = c->name.revision;
    if (!strcmp(rev, c->r->commit))
        return 0;
    char path[4200], tmp[4300];
    snprintf(path, sizeof(path), "%s/refs/%s", c->repo_dir, rev);
    snprintf(tmp, sizeof(tmp), "%s.mfmt-tmp-%ld", path, (long)getpid());
    if (make_parents(path, c->st))
        return -1;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int rc = fd < 0 ? -1
                    : write_all(fd, (const uint8_t *)c->r->commit, strlen(c->r->commit), 0, tmp,
                                c->st);
    if (fd >= 0)
        close(fd);
    if (fd < 0 || rc || rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return rc ? rc : mf_fail(c->st, MF_ERR_IO, path, -1, "cannot write the ref: %s", strerror(e));
    }
    return 0;
}

/* CACHEDIR.TAG at the cache's root (https://bford.info/cachedir/), as
 * huggingface_hub writes it, so that backup tools skip the cache; kept if
 * there. Failing to write it is not an error (it is advice). */
static void tag_cache_dir(const dl_ctx *c)
{
    char path[4200];
    const char *slash = strrchr(c->repo_dir, '/');
    snprintf(path, sizeof(path), "%.*s/CACHEDIR.TAG", (int)(slash ? slash - c->repo_dir : 1),
             slash ? c->repo_dir : ".");
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    static const char tag[] = "Signature: 8a477f597d28d172789f06886806bc55\n"
                              "# This file is a cache directory tag created by mfmt download.\n"
                              "# For information about cache directory tags, see:\n"
                              "#\thttps://bford.info/cachedir/\n";
    if (write(fd, tag, sizeof(tag) - 1) != (ssize_t)sizeof(tag) - 1) {
        close(fd);
        unlink(path);
        return;
    }
    close(fd);
}

/* Every file described first (so progress knows the bytes to fetch),
 * then each missing blob fetched and every file linked, then the ref. */
static int download_all(dl_ctx *c)
{
    for (size_t i = 0; i < c->r->n_files; i++)
        if (describe_file(c, &c->r->files[i]))
            return -1;
    for (size_t i = 0; i < c->r->n_files; i++) {
        mf_hub_download_file *f = &c->r->files[i];
        if ((f->state != MF_DL_PRESENT && fetch_file(c, f)) || link_snapshot(c, f->path, f->blob))
            return -1;
    }
    tag_cache_dir(c);
    return write_ref(c);
}

static int setup(dl_ctx *c, const char *repo, mf_status *st)
{
    int k = hub_parse_name(repo, &c->name, st);
    if (k == 0)
        return mf_fail(st, MF_ERR_USAGE, repo, -1,
                       "not a Hub name (ORG/NAME[@REV] or hf://ORG/NAME[@REV][/FILE]), or a "
                       "local path of that name exists");
    if (k < 0)
        return -1;
    char *cache = c->o.cache_dir ? strdup(c->o.cache_dir) : mf_hub_cache_dir();
    mf_hub_download_report *r = c->r;
    if (cache) {
        char *dir = hub_repo_folder(cache, c->name.type, c->name.id);
        char *locks = hub_repo_folder(cache, c->name.type, c->name.id);
        char *folder = locks ? strrchr(locks, '/') : NULL;
        c->repo_dir = dir ? mf_arena_strdup(r->arena, dir) : NULL;
        c->lock_dir = folder ? mf_arena_printf(r->arena, "%s/.locks%s", cache, folder) : NULL;
        free(dir);
        free(locks);
        free(cache);
    }
    r->repo_id = mf_arena_strdup(r->arena, c->name.id);
    r->revision = mf_arena_strdup(r->arena, c->name.revision);
    c->buf = malloc(API_MAX > PIECE ? API_MAX : PIECE);
    if (!c->repo_dir || !c->lock_dir || !r->repo_id || !r->revision || !c->buf)
        return mf_oom(st, repo);
    return 0;
}

MF_API int mf_hub_download(const char *repo, const mf_hub_download_opts *opts,
                           mf_hub_download_report **out, mf_status *st)
{
    MF_ST_GUARD(st);
    *out = NULL;
    dl_ctx c = {.st = st};
    mf_hub_download_opts_init(&c.o);
    if (!repo)
        return mf_status_fail(st, MF_ERR_USAGE, "mf_hub_download: NULL repo");
    if (mf_opts_copy(&c.o, sizeof(c.o), opts, "mf_hub_download", st))
        return -1;
    c.r = calloc(1, sizeof(*c.r));
    if (!c.r || !(c.r->arena = mf_arena_new())) {
        free(c.r);
        return mf_oom(st, repo);
    }
    json_t *listing = NULL;
    int rc = setup(&c, repo, st);
    char *api = rc ? NULL : hub_url(&c.name, NULL, true);
    rc = rc ? rc : api ? fetch_listing(&c, &listing) : mf_oom(st, repo);
    rc = rc ? rc : read_listing(&c, listing, api);
    json_decref(listing);
    free(api);
    if (!rc) {
        c.r->snapshot = mf_arena_printf(c.r->arena, "%s/snapshots/%s", c.repo_dir, c.r->commit);
        rc = c.r->snapshot ? download_all(&c) : mf_oom(st, repo);
    }
    mf_http_close(c.http);
    free(c.buf);
    if (rc) {
        mf_hub_download_report_free(c.r);
        return -1;
    }
    *out = c.r;
    return 0;
}

/* ------------------------------------------- a remote repo, read in place */

static bool ends_with_any(const char *path, const char *const *ext)
{
    size_t n = strlen(path);
    for (const char *const *e = ext; *e; e++) {
        size_t k = strlen(*e);
        if (n > k && !strcmp(path + n - k, *e))
            return true;
    }
    return false;
}

/* Weights files: read by ranges through an alias, never fetched whole. */
static bool is_weights_name(const char *path)
{
    static const char *const ext[] = {".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".gguf",
                                      ".h5", ".hdf5", ".keras", ".onnx", ".msgpack", ".npz",
                                      ".npy", ".tflite", ".pb", ".pkl", ".pickle", ".joblib",
                                      ".pdparams", ".ot", ".mlmodel", NULL};
    return ends_with_any(path, ext);
}

/* The small files a model folder's reader reads: configs, tokenizers,
 * templates, the model card, code (its presence is part of the verdict). */
static bool is_small_name(const char *path)
{
    static const char *const ext[] = {".json", ".txt", ".model", ".jinja", ".md", ".py",
                                      ".tiktoken", ".yaml", ".yml", ".vocab", ".spm", NULL};
    return ends_with_any(path, ext);
}

/* A small file fetched whole into the folder (its size from a 1-byte
 * range first; the process's budget bounds it). */
static int fetch_small(dl_ctx *c, const char *url, const char *dst)
{
    mf_remote_file_info info;
    if (mf_remote_info(url, &info, c->st))
        return -1;
    if (info.size > API_MAX)
        return mf_fail(c->st, MF_ERR_UNSUPPORTED, url, -1,
                       "%llu bytes: larger than the %d MiB a configuration or tokenizer file "
                       "may have here", (unsigned long long)info.size, API_MAX >> 20);
    mf_http_meta meta = {0};
    if (info.size && mf_http_get_range(&c->http, url, 0, info.size, c->buf, &meta, c->st))
        return -1;
    if (make_parents(dst, c->st))
        return -1;
    int fd = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return mf_fail(c->st, MF_ERR_IO, dst, -1, "cannot create: %s", strerror(errno));
    int rc = write_all(fd, c->buf, (size_t)info.size, 0, dst, c->st);
    close(fd);
    return rc;
}

static void n_files_free(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* The weights files' headers fetched in parallel (each alias mapped
 * ahead with its first 64 KiB, by up to PREFETCH_THREADS transfers at
 * once), so that opening a repo of many shards costs about one round trip
 * per PREFETCH_THREADS shards instead of one per shard. */
enum { PREFETCH_THREADS = 8 };
typedef struct prefetch_job {
    char **paths;
    size_t n;
    atomic_size_t next;
} prefetch_job;

static void *prefetch_worker(void *arg)
{
    prefetch_job *j = arg;
    for (size_t i; (i = atomic_fetch_add(&j->next, 1)) < j->n;)
        mf_remote_alias_prefetch(j->paths[i]);
    return NULL;
}

static void prefetch_headers(char **paths, size_t n)
{
    prefetch_job j = {paths, n, 0};
    pthread_t t[PREFETCH_THREADS];
    size_t started = 0;
    for (; started < PREFETCH_THREADS && started < n; started++)
        if (pthread_create(&t[started], NULL, prefetch_worker, &j) != 0)
            break;
    if (started == 0)
        prefetch_worker(&j); /* no thread: in this one */
    for (size_t i = 0; i < started; i++)
        pthread_join(t[i], NULL);
}

static int fill_remote_folder(dl_ctx *c, const char *folder)
{
    char **weights = calloc(c->r->n_files ? c->r->n_files : 1, sizeof(char *));
    size_t n_weights = 0;
    if (!weights)
        return mf_oom(c->st, folder);
    for (size_t i = 0; i < c->r->n_files; i++) {
        mf_hub_download_file *f = &c->r->files[i];
        bool is_weights = is_weights_name(f->path);
        if (!is_weights && !is_small_name(f->path))
            continue; /* images, archives...: not read as part of a model */
        char *url = file_url(c, f);
        char *dst = url ? mf_path_join_new(folder, f->path) : NULL;
        int rc = !dst ? mf_oom(c->st, f->path)
                 : is_weights ? make_parents(dst, c->st) || mf_remote_alias_add(dst, url, c->st)
                              : fetch_small(c, url, dst);
        free(url);
        if (!rc && is_weights)
            weights[n_weights++] = dst;
        else
            free(dst);
        if (rc) {
            n_files_free(weights, n_weights);
            return -1;
        }
    }
    prefetch_headers(weights, n_weights);
    n_files_free(weights, n_weights);
    return 0;
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

MF_API void mf_hub_remote_repo_close(char *folder)
{
    if (!folder)
        return;
    mf_remote_alias_drop_under(folder);
    nftw(folder, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(folder);
}

MF_API int mf_hub_remote_repo(const char *repo, char **folder, mf_status *st)
{
    MF_ST_GUARD(st);
    *folder = NULL;
    if (!repo || strncmp(repo, "hf://", 5) != 0)
        return mf_status_fail(st, MF_ERR_USAGE, "%s: a remote repo is named hf://ORG/NAME[@REV]",
                              repo ? repo : "(null)");
    const char *off = getenv("HF_HUB_OFFLINE");
    if (off && *off && strcmp(off, "0") != 0)
        return mf_fail(st, MF_ERR_IO, repo, -1,
                       "not in the cache, and HF_HUB_OFFLINE is set (no requests to the Hub)");
    dl_ctx c = {.st = st};
    mf_hub_download_opts_init(&c.o);
    c.r = calloc(1, sizeof(*c.r));
    if (!c.r || !(c.r->arena = mf_arena_new())) {
        free(c.r);
        return mf_oom(st, repo);
    }
    json_t *listing = NULL;
    int rc = setup(&c, repo, st);
    if (!rc && c.name.file[0])
        rc = mf_fail(st, MF_ERR_USAGE, repo, -1, "names a file, not a whole repo");
    char *api = rc ? NULL : hub_url(&c.name, NULL, true);
    rc = rc ? rc : api ? fetch_listing(&c, &listing) : mf_oom(st, repo);
    rc = rc ? rc : read_listing(&c, listing, api);
    json_decref(listing);
    free(api);
    char tmpl[4200];
    const char *tmp = getenv("TMPDIR");
    char *slash = strchr(c.name.id, '/');
    if (!rc) {
        snprintf(tmpl, sizeof(tmpl), "%s/mfmt-hf-%.*s--%s-XXXXXX", tmp && *tmp ? tmp : "/tmp",
                 slash ? (int)(slash - c.name.id) : 0, c.name.id, slash ? slash + 1 : c.name.id);
        if (!mkdtemp(tmpl))
            rc = mf_fail(st, MF_ERR_IO, tmpl, -1, "cannot make a folder: %s", strerror(errno));
        else if ((rc = fill_remote_folder(&c, tmpl)))
            mf_hub_remote_repo_close(strdup(tmpl));
    }
    if (!rc && !(*folder = strdup(tmpl))) {
        mf_hub_remote_repo_close(strdup(tmpl));
        rc = mf_oom(st, repo);
    }
    mf_http_close(c.http);
    free(c.buf);
    mf_hub_download_report_free(c.r);
    return rc ? -1 : 0;
}
