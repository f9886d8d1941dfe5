/* mfmt/hub.h - Hugging Face Hub names and the local Hub cache.
 *
 * A model argument may name a Hub repository instead of a path:
 *   ORG/NAME[@REV]              a whole repository (a cache snapshot)
 *   hf://ORG/NAME[@REV][/FILE]  the same, or one file in it
 * (hf://datasets/ORG/NAME/... and hf://spaces/... name the other repo
 * types.) They are resolved the way huggingface_hub resolves them offline
 * (file_download.py try_to_load_from_cache): the cache directory is
 * $HF_HUB_CACHE, else $HUGGINGFACE_HUB_CACHE, else $HF_HOME/hub, else
 * $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub; the repo
 * is its folder "models--ORG--NAME"; REV (default "main") is read from
 * refs/REV when that file exists, else taken as a commit hash; the file is
 * snapshots/COMMIT/FILE (a symlink to ../../blobs/HASH, or a plain copy
 * where the cache was made without symlinks); .no_exist/COMMIT/FILE marks
 * a file the Hub said does not exist. doc/hub.md has the details.
 * Part of the public API; include <mfmt.h>, not this file. */
#ifndef MFMT_HUB_H
#define MFMT_HUB_H
#ifndef MFMT_H
#error "include <mfmt.h>"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The cache directory huggingface_hub would use (malloc'd; free() it).
 * Never NULL except when out of memory. */
MF_API char *mf_hub_cache_dir(void);

typedef enum mf_hub_kind {
    MF_HUB_NONE = 0,   /* not a Hub name: a local path (or "-"), use it as is */
    MF_HUB_CACHED = 1, /* resolved in the cache: `path` is a local file or snapshot dir */
    MF_HUB_REMOTE = 2, /* not in the cache: `path` is the https URL of the file */
} mf_hub_kind;

/* What a model argument names. Strings are malloc'd; mf_hub_target_free. */
typedef struct mf_hub_target {
    mf_hub_kind kind;
    char *path;      /* what to open: the argument itself for MF_HUB_NONE */
    char *repo_type; /* "model", "dataset", "space"; NULL for MF_HUB_NONE */
    char *repo_id;   /* "ORG/NAME" */
    char *revision;  /* as asked ("main" when not given) */
    char *commit;    /* the commit it resolved to; NULL when unknown */
    char *file;      /* the file in the repo; NULL: the whole repository */
    char *cache_dir; /* the cache consulted */
} mf_hub_target;

/* Resolves a model argument. A path that exists locally is always itself
 * (MF_HUB_NONE): a folder named like ORG/NAME wins over the Hub, as in
 * transformers' from_pretrained. Fails (-1, st: the repo, the revision or
 * file, the cache directory and what was missing) when a Hub name is
 * malformed, a revision or file is not in the cache and `allow_remote` is
 * false, or the cache marks the file as absent on the Hub (.no_exist).
 * `cache_dir` NULL: mf_hub_cache_dir(). Thread-safe. */
MF_API int mf_hub_resolve(const char *arg, const char *cache_dir, bool allow_remote,
                          mf_hub_target *out, mf_status *st);
MF_API void mf_hub_target_free(mf_hub_target *t);

/* ------------------------------------------------ cache scan and verify */

typedef struct mf_cache_revision {
    const char *commit;       /* the snapshot's folder name */
    const char **refs;        /* the refs (branches, tags) pointing at it */
    size_t n_refs;
    uint64_t n_files;         /* files in the snapshot */
    uint64_t size_on_disk;    /* its files' targets, each blob counted once */
} mf_cache_revision;

typedef struct mf_cache_repo {
    const char *repo_type;    /* "model", "dataset", "space" */
    const char *repo_id;      /* "ORG/NAME" */
    const char *path;         /* its folder in the cache */
    uint64_t size_on_disk;    /* every blob (or copied file) once */
    uint64_t n_blobs;
    int64_t last_modified;    /* newest mtime of a blob, seconds since 1970 */
    mf_cache_revision *revisions;
    size_t n_revisions;
} mf_cache_repo;

/* The cache as `hf cache scan` lists it. Owned by the report
 * (mf_cache_report_free). `warnings`: folders that are not a repo. */
typedef struct mf_cache_report {
    const char *cache_dir;
    mf_cache_repo *repos;     /* sorted by repo type, then id */
    size_t n_repos;
    uint64_t size_on_disk;
    const char **warnings;
    size_t n_warnings;
    struct mf_arena *arena;   /* private */
} mf_cache_report;

/* Scans a cache directory (NULL: mf_hub_cache_dir()). Sizes are of the
 * files links point at (stat, never lstat). -1 only when the directory
 * cannot be read. Thread-safe. */
MF_API int mf_cache_scan(const char *cache_dir, mf_cache_report **out, mf_status *st);
MF_API void mf_cache_report_free(mf_cache_report *r);

typedef enum mf_cache_problem_kind {
    MF_CACHE_CORRUPT = 0,     /* a blob whose content does not hash to its name */
    MF_CACHE_MISSING = 1,     /* a snapshot link to a blob that is not there */
    MF_CACHE_DANGLING = 2,    /* a snapshot link that leads nowhere (not to a blob) */
    MF_CACHE_INCOMPLETE = 3,  /* an interrupted download (blobs/X.incomplete) */
    MF_CACHE_BAD_REF = 4,     /* refs/NAME naming a commit without a snapshot */
    MF_CACHE_UNCHECKED = 5,   /* a plain copy in a snapshot (no symlinks): its
                                 hash is not recorded anywhere, so not checked */
    MF_CACHE_PROBLEM_KINDS
} mf_cache_problem_kind;

/* "corrupt", "missing", "dangling", "incomplete", "bad-ref", "unchecked". */
MF_API const char *mf_cache_problem_name(mf_cache_problem_kind k);

typedef struct mf_cache_problem {
    mf_cache_problem_kind kind;
    const char *repo_id;      /* "ORG/NAME" */
    const char *path;         /* the file in the cache */
    const char *detail;       /* what was found */
} mf_cache_problem;

typedef struct mf_cache_verify_report {
    const char *cache_dir;
    size_t n_repos;
    uint64_t n_blobs_checked, bytes_checked;
    mf_cache_problem *problems;
    size_t n_problems;
    size_t count[MF_CACHE_PROBLEM_KINDS]; /* problems per kind */
    struct mf_arena *arena;   /* private */
} mf_cache_verify_report;

/* Checks every blob of the cache's repos (or of `repo`, "ORG/NAME" or a
 * Hub name of one, when not NULL) against its name: the SHA-256 of the
 * content for a 64-hex name (LFS files), git's blob SHA-1 ("blob SIZE\0"
 * + content) for a 40-hex one; then every snapshot entry and ref. Returns
 * 0 when it could look (problems are in the report), -1 when the cache or
 * the repo is not there. `progress`: bytes hashed of the total. */
MF_API int mf_cache_verify(const char *cache_dir, const char *repo, mf_progress_fn progress,
                           void *progress_user, mf_cache_verify_report **out, mf_status *st);
MF_API void mf_cache_verify_free(mf_cache_verify_report *r);

/* ------------------------------------------------------------ download */
/* Fills the cache with a repo (or some of its files) the way
 * huggingface_hub's snapshot_download does, so that from_pretrained and
 * `hf` use it: the file list and commit from the Hub's API
 * (/api/models/ORG/NAME/revision/REV), each file's blob name from its
 * ETag (X-Linked-ETag, the SHA-256, for LFS files; the git blob SHA-1 for
 * the others), blobs/NAME written through blobs/NAME.incomplete (resumed
 * where an interrupted download stopped, under huggingface_hub's lock file
 * .locks/REPO/NAME.lock), hashed as the bytes land and renamed into place
 * only when the content hashes to its name; snapshots/COMMIT/FILE a
 * relative symlink to the blob; refs/REV the commit. */
typedef struct mf_hub_download_opts {
    size_t struct_size;            /* sizeof(mf_hub_download_opts) */
    const char *cache_dir;         /* NULL: mf_hub_cache_dir() */
    const char *const *include;    /* glob patterns a file must match one of
                                      (fnmatch, as allow_patterns); NULL: all */
    size_t n_include;
    const char *const *exclude;    /* glob patterns that drop a file (ignore_patterns) */
    size_t n_exclude;
    mf_progress_fn progress;       /* bytes received of the bytes still missing */
    void *progress_user;
} mf_hub_download_opts;
MF_API void mf_hub_download_opts_init(mf_hub_download_opts *o);

typedef enum mf_hub_download_state {
    MF_DL_PRESENT = 0,     /* the blob was already in the cache */
    MF_DL_DOWNLOADED = 1,  /* fetched whole */
    MF_DL_RESUMED = 2,     /* an interrupted download finished */
} mf_hub_download_state;

typedef struct mf_hub_download_file {
    const char *path;      /* in the repo */
    const char *blob;      /* its blob name (SHA-256 or git SHA-1, hex) */
    uint64_t size;
    uint64_t fetched;      /* bytes received for it by this call */
    mf_hub_download_state state;
} mf_hub_download_file;

typedef struct mf_hub_download_report {
    const char *repo_id, *revision, *commit;
    const char *snapshot;  /* the snapshot folder in the cache */
    mf_hub_download_file *files;  /* in the API's order, filtered */
    size_t n_files;
    uint64_t bytes_fetched;       /* body bytes received for the files */
    struct mf_arena *arena;       /* private */
} mf_hub_download_report;

/* repo: ORG/NAME[@REV] or hf://ORG/NAME[@REV][/FILE] (one file). Fails (-1)
 * with the file, its byte offset and the reason on any HTTP error, a blob
 * that does not hash to its name (the partial file is removed, nothing is
 * linked), a file name that would leave the snapshot, or a lock held by
 * another download; files finished before the failure stay in the cache
 * (a new call resumes). Remote settings: mf_remote_configure (its byte
 * budget applies). Thread-safe for different repos. */
MF_API int mf_hub_download(const char *repo, const mf_hub_download_opts *opts,
                           mf_hub_download_report **out, mf_status *st);
MF_API void mf_hub_download_report_free(mf_hub_download_report *r);

/* A repo that is not in the cache, read in place: hf://ORG/NAME[@REV] ->
 * a private temporary folder holding the repo's small files (configs,
 * tokenizer files, templates, model card, code: fetched whole) in which
 * each weights file (.safetensors, .bin, .gguf, ...) is an alias of its URL
 * that mf_open reads by HTTP ranges: open the folder with mf_open to read
 * the whole model's headers without downloading its weights. Only
 * mf_open's readers see the aliases: a walk of the folder (scan, hashing
 * files) does not find the weights, so scan and hash take remote files one
 * by one instead. HF_HUB_OFFLINE set: refused. Close with
 * mf_hub_remote_repo_close (removes the folder; frees the string). */
MF_API int mf_hub_remote_repo(const char *repo, char **folder, mf_status *st);
MF_API void mf_hub_remote_repo_close(char *folder);

/* ------------------------------------------------------- remote reads */
/* An http(s) URL (or a Hub file not in the cache) given to mf_open,
 * mf_detect, mf_scan_file... is read by HTTP range requests: the headers
 * are fetched, tensor data only when a tensor is read. Settings are for
 * the whole process. */
typedef struct mf_remote_opts {
    size_t struct_size;   /* sizeof(mf_remote_opts) */
    const char *token;    /* bearer token; NULL: $HF_TOKEN, else the token file
                             ($HF_TOKEN_PATH, $HF_HOME/token); never printed */
    uint64_t max_bytes;   /* stop before receiving more than this in all (0: no limit) */
    unsigned timeout_s;   /* connect timeout, and the longest stall (default 30) */
    unsigned retries;     /* further tries of a failed range (default 3, at most 10) */
} mf_remote_opts;
MF_API void mf_remote_opts_init(mf_remote_opts *o);
/* Sets the process's remote settings (copied; the token too). Not to be
 * called while another thread reads remotely. */
MF_API int mf_remote_configure(const mf_remote_opts *o, mf_status *st);
/* Body bytes received over HTTP by this process so far. Thread-safe. */
MF_API uint64_t mf_remote_bytes_read(void);

/* What the server says about a remote file (one 1-byte range request). */
typedef struct mf_remote_file_info {
    uint64_t size;
    uint64_t linked_size;  /* X-Linked-Size (the Hub, for LFS files), 0 if none */
    char etag[128];
    char commit[64];       /* X-Repo-Commit, "" if none */
    char linked_etag[128]; /* X-Linked-ETag: the LFS file's SHA-256, quoted */
} mf_remote_file_info;
MF_API int mf_remote_info(const char *url, mf_remote_file_info *out, mf_status *st);
/* Whether addr lies in a remote file's mapping. Async-signal-safe: a
 * program's SIGSEGV handler can tell a read of bytes that were never
 * fetched (their pages have no access, so they can never read as zeros)
 * from any other fault, and say so. */
MF_API bool mf_remote_owns(const void *addr);

#ifdef __cplusplus
}
#endif
#endif
