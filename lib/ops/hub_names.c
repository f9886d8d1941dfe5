/* hub_names.c - Hub names (ORG/NAME[@REV], hf://...) resolved through the
 * local cache, the one place where Hub naming is understood (DESIGN.md
 * "Remote and cached sources"). The rules follow huggingface_hub:
 * constants.py (where the cache is), utils/_validators.py validate_repo_id
 * (what a repo id may be), file_download.py try_to_load_from_cache and
 * _cache_commit_hash_for_specific_revision (refs, snapshots, .no_exist). */
#include "ops/hub_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <sys/stat.h>

/* ------------------------------------------------------- the cache dir */

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

/* "~/x" -> "$HOME/x" (os.path.expanduser, which constants.py applies) */
static char *expand_home(const char *p)
{
    const char *home = getenv("HOME");
    if (p[0] != '~' || (p[1] && p[1] != '/') || !home)
        return strdup(p);
    size_t n = strlen(home) + strlen(p) + 1;
    char *out = malloc(n);
    if (out)
        snprintf(out, n, "%s%s", home, p + 1);
    return out;
}

static char *join2(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 2;
    char *out = malloc(n);
    if (out)
        snprintf(out, n, "%s/%s", a, b);
    return out;
}

MF_API char *mf_hub_cache_dir(void)
{
    const char *v = getenv("HF_HUB_CACHE");
    if (!v || !*v)
        v = getenv("HUGGINGFACE_HUB_CACHE"); /* the older spelling */
    if (v && *v)
        return expand_home(v);
    char *home = NULL;
    if ((v = getenv("HF_HOME")) && *v)
        home = expand_home(v);
    else if ((v = getenv("XDG_CACHE_HOME")) && *v) {
        char *x = expand_home(v);
        home = x ? join2(x, "huggingface") : NULL;
        free(x);
    } else
        home = expand_home("~/.cache/huggingface");
    char *out = home ? join2(home, "hub") : NULL;
    free(home);
    return out;
}

/* ------------------------------------------------------------- names */

/* validate_repo_id: each part [A-Za-z0-9_.-]+, not starting or ending with
 * '-' or '.', no "--" or "..", not ending in ".git", 96 characters at most. */
static bool valid_id_part(const char *s, size_t n)
{
    if (n == 0 || s[0] == '-' || s[0] == '.' || s[n - 1] == '-' || s[n - 1] == '.')
        return false;
    for (size_t i = 0; i < n; i++)
        if (!(isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == '-' || s[i] == '.'))
            return false;
    return true;
}

static bool valid_repo_id(const char *id)
{
    size_t n = strlen(id);
    const char *slash = strchr(id, '/');
    if (n == 0 || n > 96 || strstr(id, "--") || strstr(id, "..") ||
        (n >= 4 && strcmp(id + n - 4, ".git") == 0))
        return false;
    if (!slash)
        return valid_id_part(id, n);
    return !strchr(slash + 1, '/') && valid_id_part(id, (size_t)(slash - id)) &&
           valid_id_part(slash + 1, n - (size_t)(slash - id) - 1);
}

/* A revision or file may not leave the repo folder: no "..", no absolute
 * path, no empty part, no backslash or control character. */
bool hub_safe_rel_path(const char *p)
{
    if (!*p || p[0] == '/')
        return false;
    for (const char *s = p; *s; s++)
        if (*s == '\\' || (unsigned char)*s < 0x20)
            return false;
    const char *part = p;
    for (;;) {
        const char *end = strchr(part, '/');
        size_t n = end ? (size_t)(end - part) : strlen(part);
        if (n == 0 || (n == 1 && part[0] == '.') || (n == 2 && part[0] == '.' && part[1] == '.'))
            return false;
        if (!end)
            return true;
        part = end + 1;
    }
}

static int name_fail(mf_status *st, const char *arg, const char *why)
{
    return mf_fail(st, MF_ERR_USAGE, arg, -1, "not a valid Hugging Face name: %s", why);
}

static int copy_part(char *dst, size_t cap, const char *s, size_t n)
{
    if (n >= cap)
        return -1;
    memcpy(dst, s, n);
    dst[n] = 0;
    return 0;
}

/* hf://[datasets/|spaces/|models/]ORG/NAME[@REV][/FILE]. REV ends at the
 * next '/', except "refs/pr/N" and "refs/convert/NAME", which keep their
 * slashes (HfFileSystem's rule for the special refs). */
static int parse_hf_url(const char *arg, hub_name *n, mf_status *st)
{
    const char *p = arg + 5;
    static const struct { const char *prefix, *type; } types[] = {
        {"datasets/", "dataset"}, {"spaces/", "space"}, {"models/", "model"}};
    snprintf(n->type, sizeof(n->type), "model");
    for (size_t i = 0; i < 3; i++)
        if (strncmp(p, types[i].prefix, strlen(types[i].prefix)) == 0) {
            snprintf(n->type, sizeof(n->type), "%s", types[i].type);
            p += strlen(types[i].prefix);
            break;
        }
    const char *s1 = strchr(p, '/');
    if (!s1)
        return name_fail(st, arg, "hf:// takes ORG/NAME[@REV][/FILE]");
    size_t idn = strcspn(s1 + 1, "/@") + (size_t)(s1 + 1 - p);
    if (copy_part(n->id, sizeof(n->id), p, idn))
        return name_fail(st, arg, "the repo id is too long");
    p += idn;
    snprintf(n->revision, sizeof(n->revision), "main");
    if (*p == '@') {
        p++;
        size_t rn = strcspn(p, "/");
        if (strncmp(p, "refs/pr/", 8) == 0 || strncmp(p, "refs/convert/", 13) == 0) {
            const char *third = strchr(strchr(p, '/') + 1, '/');
            rn = (size_t)(third - p) + 1 + strcspn(third + 1, "/");
        }
        if (copy_part(n->revision, sizeof(n->revision), p, rn))
            return name_fail(st, arg, "the revision is too long");
        p += rn;
    }
    if (*p == '/')
        p++;
    if (copy_part(n->file, sizeof(n->file), p, strlen(p)))
        return name_fail(st, arg, "the file name is too long");
    return 1;
}

/* ORG/NAME[@REV]: exactly one '/' before the '@'. */
static int parse_bare(const char *arg, hub_name *n, mf_status *st)
{
    const char *at = strchr(arg, '@');
    size_t idn = at ? (size_t)(at - arg) : strlen(arg);
    if (idn >= sizeof(n->id))
        return 0;
    memcpy(n->id, arg, idn);
    n->id[idn] = 0;
    const char *slash = strchr(n->id, '/');
    if (!slash || strchr(slash + 1, '/') || !valid_repo_id(n->id))
        return 0; /* a path that does not exist: the open reports it */
    snprintf(n->type, sizeof(n->type), "model");
    if (copy_part(n->revision, sizeof(n->revision), at ? at + 1 : "main",
                  strlen(at ? at + 1 : "main")))
        return name_fail(st, arg, "the revision is too long");
    n->file[0] = 0;
    return 1;
}

int hub_parse_name(const char *arg, hub_name *n, mf_status *st)
{
    memset(n, 0, sizeof(*n));
    int rc;
    if (strncmp(arg, "hf://", 5) == 0) {
        if ((rc = parse_hf_url(arg, n, st)) < 0)
            return rc;
        if (!valid_repo_id(n->id))
            return name_fail(st, arg, "the repo id must be ORG/NAME of letters, digits, '_', "
                                      "'-' and '.' (no \"--\" or \"..\")");
    } else {
        struct stat sb;
        if (stat(arg, &sb) == 0) /* a local path wins (from_pretrained's isdir first) */
            return 0;
        if ((rc = parse_bare(arg, n, st)) <= 0)
            return rc;
    }
    if (!hub_safe_rel_path(n->revision))
        return name_fail(st, arg, "the revision may not be empty, absolute or contain \"..\"");
    if (n->file[0] && !hub_safe_rel_path(n->file))
        return name_fail(st, arg, "the file may not be absolute or contain \"..\"");
    return 1;
}

char *hub_repo_folder(const char *cache_dir, const char *type, const char *id)
{
    char folder[300];
    size_t k = (size_t)snprintf(folder, sizeof(folder), "%ss--", type);
    for (const char *s = id; *s && k + 3 < sizeof(folder); s++) {
        if (*s == '/') {
            folder[k++] = '-';
            folder[k++] = '-';
        } else
            folder[k++] = *s;
    }
    folder[k] = 0;
    return join2(cache_dir, folder);
}

bool hub_folder_repo(const char *folder, char type[16], char id[256])
{
    const char *sep = strstr(folder, "--");
    if (!sep || sep == folder || sep[-1] != 's' || (size_t)(sep - folder) > 15 || !sep[2])
        return false;
    memcpy(type, folder, (size_t)(sep - folder) - 1);
    type[sep - folder - 1] = 0;
    if (strcmp(type, "model") && strcmp(type, "dataset") && strcmp(type, "space"))
        return false;
    size_t k = 0;
    for (const char *s = sep + 2; *s && k + 1 < 256; s++) {
        if (s[0] == '-' && s[1] == '-') {
            id[k++] = '/';
            s++;
        } else
            id[k++] = *s;
    }
    id[k] = 0;
    return true;
}

/* The first line of a small file (a ref), trailing space removed. */
static bool read_ref(const char *path, char out[256])
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    size_t n = fread(out, 1, 255, f);
    fclose(f);
    out[n] = 0;
    while (n && isspace((unsigned char)out[n - 1]))
        out[--n] = 0;
    return n > 0 && !strchr(out, '/') && strcmp(out, "..") && strcmp(out, ".");
}

bool hub_commit_of(const char *repo_dir, const char *rev, char commit[256])
{
    char path[2048];
    struct stat sb;
    snprintf(path, sizeof(path), "%s/refs/%s", repo_dir, rev);
    if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode))
        return read_ref(path, commit);
    snprintf(path, sizeof(path), "%s/snapshots/%s", repo_dir, rev);
    if (strchr(rev, '/') || stat(path, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return false;
    snprintf(commit, 256, "%s", rev);
    return true;
}

int hub_blob_name_kind(const char *name)
{
    size_t n = 0;
    for (; name[n]; n++)
        if (!isxdigit((unsigned char)name[n]) || isupper((unsigned char)name[n]))
            return 0;
    return n == 64 || n == 40 ? (int)n : 0;
}

mf_hasher *hub_blob_hasher(const char *blob, uint64_t size)
{
    mf_hasher *h = mf_hasher_new(hub_blob_name_kind(blob) == 64 ? MF_SHA256 : MF_SHA1);
    if (h && hub_blob_name_kind(blob) == 40) {
        char head[48];
        int n = snprintf(head, sizeof(head), "blob %llu", (unsigned long long)size);
        mf_hasher_update(h, head, (size_t)n + 1); /* the NUL is part of git's header */
    }
    return h;
}

/* --------------------------------------------------------- resolution */

MF_API void mf_hub_target_free(mf_hub_target *t)
{
    if (!t)
        return;
    free(t->path);
    free(t->repo_type);
    free(t->repo_id);
    free(t->revision);
    free(t->commit);
    free(t->file);
    free(t->cache_dir);
    memset(t, 0, sizeof(*t));
}

/* $HF_ENDPOINT (default https://huggingface.co) without trailing '/'. */
static const char *hub_endpoint(size_t *len)
{
    const char *ep = getenv("HF_ENDPOINT");
    if (!ep || !*ep)
        ep = "https://huggingface.co";
    size_t el = strlen(ep);
    while (el && ep[el - 1] == '/')
        el--;
    *len = el;
    return ep;
}

/* A revision percent-encoded as huggingface_hub's quote(revision, safe="")
 * ("/" included). */
static void encode_revision(const char *rev, char *enc, size_t cap)
{
    size_t k = 0;
    for (const char *s = rev; *s && k + 4 < cap; s++) {
        if (isalnum((unsigned char)*s) || strchr("-._~", *s))
            enc[k++] = *s;
        else
            k += (size_t)snprintf(enc + k, cap - k, "%%%02X", (unsigned char)*s);
    }
    enc[k] = 0;
}

/* The https URL of a file (huggingface_hub's hf_hub_url:
 * {endpoint}/{prefix}{repo_id}/resolve/{revision}/{filename}, datasets/ and
 * spaces/ prefixed), or of the repo's revision in the API (HfApi.repo_info:
 * {endpoint}/api/{models|datasets|spaces}/{repo_id}/revision/{revision}). */
char *hub_url(const hub_name *n, const char *commit, bool api)
{
    size_t el;
    const char *ep = hub_endpoint(&el);
    char enc[800];
    encode_revision(commit ? commit : n->revision, enc, sizeof(enc));
    const char *prefix = !strcmp(n->type, "dataset") ? "datasets/"
                         : !strcmp(n->type, "space") ? "spaces/" : "";
    size_t len = el + strlen(prefix) + strlen(n->id) + strlen(enc) + strlen(n->file) + 48;
    char *url = malloc(len);
    if (url && api)
        snprintf(url, len, "%.*s/api/%ss/%s/revision/%s", (int)el, ep, n->type, n->id, enc);
    else if (url)
        snprintf(url, len, "%.*s/%s%s/resolve/%s/%s", (int)el, ep, prefix, n->id, enc, n->file);
    return url;
}

static int fill_target(mf_hub_target *t, const hub_name *n, const char *cache_dir,
                       const char *commit)
{
    t->repo_type = strdup(n->type);
    t->repo_id = strdup(n->id);
    t->revision = strdup(n->revision);
    t->commit = dup_or_null(commit);
    t->file = n->file[0] ? strdup(n->file) : NULL;
    t->cache_dir = strdup(cache_dir);
    return t->repo_type && t->repo_id && t->revision && (!commit || t->commit) &&
                   (!n->file[0] || t->file) && t->cache_dir
               ? 0 : -1;
}

/* Not in the cache: a remote URL when allowed, else the reason. */
static int resolve_uncached(const char *arg, const hub_name *n, const char *cache_dir,
                            const char *commit, bool allow_remote, const char *why,
                            mf_hub_target *t, mf_status *st)
{
    if (!allow_remote || !n->file[0])
        return mf_fail(st, MF_ERR_IO, arg, -1, "%s in the Hugging Face cache %s", why, cache_dir);
    t->kind = MF_HUB_REMOTE;
    t->path = hub_url(n, commit, false);
    if (!t->path || fill_target(t, n, cache_dir, commit))
        return mf_oom(st, arg);
    return 0;
}

static int resolve_in_cache(const char *arg, const hub_name *n, const char *cache_dir,
                            bool allow_remote, mf_hub_target *t, mf_status *st)
{
    char *repo = hub_repo_folder(cache_dir, n->type, n->id);
    if (!repo)
        return mf_oom(st, arg);
    char commit[256], why[2400], path[4096];
    int rc = 0;
    struct stat sb;
    if (!mf_is_dir(repo)) {
        /* ORG/NAME may as well be a mistyped path: say both */
        snprintf(why, sizeof(why), "%s%s is not", strncmp(arg, "hf://", 5) ? "no such file or "
                 "directory, and the repo " : "", n->id);
        rc = resolve_uncached(arg, n, cache_dir, NULL, allow_remote, why, t, st);
    } else if (!hub_commit_of(repo, n->revision, commit)) {
        snprintf(why, sizeof(why), "revision %s of %s is not (no refs/%s, no snapshots/%s)",
                 n->revision, n->id, n->revision, n->revision);
        rc = resolve_uncached(arg, n, cache_dir, NULL, allow_remote, why, t, st);
    } else {
        snprintf(path, sizeof(path), "%s/snapshots/%s%s%s", repo, commit, n->file[0] ? "/" : "",
                 n->file);
        if (stat(path, &sb) == 0) { /* stat: a snapshot symlink counts by its blob */
            t->kind = MF_HUB_CACHED;
            if (!(t->path = strdup(path)) || fill_target(t, n, cache_dir, commit))
                rc = mf_oom(st, arg);
        } else {
            char marker[4096];
            snprintf(marker, sizeof(marker), "%s/.no_exist/%s/%s", repo, commit, n->file);
            if (n->file[0] && lstat(marker, &sb) == 0)
                rc = mf_fail(st, MF_ERR_IO, arg, -1,
                             "%s does not exist in %s at commit %s (the cache's .no_exist marker "
                             "records the Hub's answer)", n->file, n->id, commit);
            else {
                snprintf(why, sizeof(why), "%s of %s at commit %s is not%s", n->file[0] ? n->file : "the snapshot",
                         n->id, commit, lstat(path, &sb) == 0 ? " readable (a dangling link)" : "");
                rc = resolve_uncached(arg, n, cache_dir, commit, allow_remote, why, t, st);
            }
        }
    }
    free(repo);
    return rc;
}

MF_API int mf_hub_resolve(const char *arg, const char *cache_dir, bool allow_remote,
                          mf_hub_target *out, mf_status *st)
{
    MF_ST_GUARD(st);
    memset(out, 0, sizeof(*out));
    if (!arg)
        return mf_status_fail(st, MF_ERR_USAGE, "mf_hub_resolve: NULL argument");
    if (strncmp(arg, "https://", 8) == 0 || strncmp(arg, "http://", 7) == 0) {
        out->kind = MF_HUB_REMOTE;
        return (out->path = strdup(arg)) ? 0 : mf_oom(st, arg);
    }
    hub_name n;
    int rc = hub_parse_name(arg, &n, st);
    if (rc <= 0) {
        if (rc == 0 && !(out->path = strdup(arg)))
            return mf_oom(st, arg);
        return rc;
    }
    char *dir = cache_dir ? strdup(cache_dir) : mf_hub_cache_dir();
    if (!dir)
        return mf_oom(st, arg);
    rc = resolve_in_cache(arg, &n, dir, allow_remote, out, st);
    free(dir);
    if (rc)
        mf_hub_target_free(out);
    return rc;
}
