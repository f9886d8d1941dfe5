/* remote.h - a remote file read by HTTP ranges behind the mapped-file layer
 * (remote.c: the sparse mapping; http.c: the transfers, libcurl's only
 * user). Internal to lib/; the public side is in include/mfmt/hub.h. */
#ifndef MF_REMOTE_H
#define MF_REMOTE_H
#include "core/core.h"

/* What the server said about the file (the last response's headers). */
typedef struct mf_http_meta {
    uint64_t total;        /* the file's size (Content-Range's /TOTAL) */
    uint64_t got;          /* body bytes stored by the last transfer */
    char etag[128];
    char commit[64];       /* X-Repo-Commit */
    char linked_etag[128]; /* X-Linked-ETag: an LFS file's SHA-256 */
    uint64_t linked_size;  /* X-Linked-Size */
} mf_http_meta;

/* The process's settings for remote reads (mf_remote_configure). */
typedef struct mf_remote_cfg {
    char token[4096];      /* "" none; never printed */
    uint64_t max_bytes;    /* 0: no budget */
    unsigned timeout_s, retries;
} mf_remote_cfg;
void mf_remote_cfg_get(mf_remote_cfg *out);
/* Adds body bytes received to the process's count (http.c). */
void mf_remote_count_bytes(uint64_t n);

/* Bytes [off, off+len) of url into dst (len bytes; past the end of the file
 * zeros). *handle: a curl handle kept between calls (NULL at first; free
 * with mf_http_close). Retries transient failures; fails with the URL, the
 * offset and the rule that was broken. */
int mf_http_get_range(void **handle, const char *url, uint64_t off, uint64_t len, uint8_t *dst,
                      mf_http_meta *meta, mf_status *st);
void mf_http_close(void *handle);

bool mf_is_url(const char *path);
/* Remote repos read as a local folder (ops/hub_snapshot.c): the folder
 * holds the repo's small files, fetched whole, while each weights file is
 * only an alias, a local path that stands for a URL. mf_map_file of an
 * alias maps the URL (by ranges); mf_path_exists says it exists,
 * mf_is_dir that it is no folder; nothing else sees it (there is no file:
 * open() of it fails, so no reader can take zeros for its bytes). Aliases
 * live until exit; adding one is thread-safe, as is looking one up. */
int mf_remote_alias_add(const char *local, const char *url, mf_status *st);
const char *mf_remote_alias_of(const char *local); /* the URL, or NULL */
/* mf_map_file of an alias: 1 when local is none, else 0 / -1 (a mapping
 * made ahead by mf_remote_alias_prefetch is handed out once). */
int mf_remote_alias_map(const char *local, mf_file *out, mf_status *st);
/* Maps the alias's URL now (its first 64 KiB fetched: the header of most
 * weights files), for mf_map_file to take later; several threads may
 * prefetch different aliases at once. Failures are left for that open. */
void mf_remote_alias_prefetch(const char *local);
/* Forgets the aliases inside folder (kept in memory, never matched again;
 * mappings made ahead and not taken are freed). */
void mf_remote_alias_drop_under(const char *folder);
/* mf_map_file for a URL: a read-only mapping of the remote file's size in
 * which only fetched pages are readable (the rest PROT_NONE, so a read that
 * skipped mf_source_need faults instead of seeing zeros). */
int mf_map_remote(const char *url, mf_file *out, mf_status *st);
/* true when f was a remote mapping (now unmapped). */
bool mf_unmap_remote(mf_file *f);
#endif
