/* remote.c - a remote file as a lazily filled mapping (doc/hub.md "Remote
 * reads"). mf_map_file of an http(s) URL reserves an anonymous mapping of
 * the file's size with no access (PROT_NONE); mf_source_need(p, n) fetches
 * the pages of [p, p+n) that are not in yet by one range request per run
 * of missing pages (at least READAHEAD bytes, so a cursor walking a GGUF
 * header byte by byte costs a request per 64 KiB, not per field) and makes
 * them readable. The cursor calls it before every read, the readers before
 * the headers they read by pointer, the tensor streams before tensor data,
 * so readers never know where bytes come from; a read that skipped it
 * faults rather than seeing zeros. Fetches are bounded by the process's
 * byte budget (--max-bytes). */
#include "core/remote.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

enum { READAHEAD = 64 << 10, FIRST_READ = 64 << 10 };

typedef struct remote_map {
    uint8_t *base;
    uint64_t size, mapped; /* file size; mapping length (whole pages) */
    uint64_t page;
    uint8_t *filled;       /* one byte per page */
    uint64_t last_end;     /* page after the last fetch: a miss there reads ahead */
    char *url;
    void *curl;
    mf_http_meta meta;
    pthread_mutex_t mu;
} remote_map;

static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static remote_map **maps;
static size_t n_maps, cap_maps;
static atomic_size_t active; /* n_maps, read without the lock on the fast path */
static _Atomic uint64_t bytes_received;

static pthread_mutex_t cfg_mu = PTHREAD_MUTEX_INITIALIZER;
static mf_remote_cfg cfg = {.timeout_s = 30, .retries = 3};
static bool cfg_token_set; /* a token was given (not looked up) */

bool mf_is_url(const char *path)
{
    return strncmp(path, "https://", 8) == 0 || strncmp(path, "http://", 7) == 0;
}

/* The aliases: a list only ever prepended to (under alias_mu), read
 * without a lock through its atomic head; nodes live until exit. */
typedef struct alias_node {
    struct alias_node *next;
    char *local, *url;
    atomic_bool dropped;
    /* a mapping made ahead (mf_remote_alias_prefetch): PRE_NONE, then
     * PRE_READY once `pre` holds it, PRE_TAKEN once handed out or freed */
    atomic_int pre_state;
    mf_file pre;
} alias_node;
enum { PRE_NONE, PRE_READY, PRE_TAKEN };
static _Atomic(alias_node *) aliases;
static alias_node *alias_node_of(const char *local);
static pthread_mutex_t alias_mu = PTHREAD_MUTEX_INITIALIZER;

int mf_remote_alias_add(const char *local, const char *url, mf_status *st)
{
    alias_node *a = malloc(sizeof(*a));
    char *l = strdup(local), *u = strdup(url);
    if (!a || !l || !u) {
        free(a);
        free(l);
        free(u);
        return mf_oom(st, local);
    }
    a->local = l;
    a->url = u;
    atomic_init(&a->dropped, false);
    atomic_init(&a->pre_state, PRE_NONE);
    pthread_mutex_lock(&alias_mu);
    a->next = atomic_load(&aliases);
    atomic_store(&aliases, a);
    pthread_mutex_unlock(&alias_mu);
    return 0;
}

const char *mf_remote_alias_of(const char *local)
{
    alias_node *a = alias_node_of(local);
    return a ? a->url : NULL;
}

static alias_node *alias_node_of(const char *local)
{
    for (alias_node *a = atomic_load(&aliases); a; a = a->next)
        if (!atomic_load(&a->dropped) && !strcmp(a->local, local))
            return a;
    return NULL;
}

/* Hands out the mapping made ahead, once; false when there is none. */
static bool alias_take_premapped(alias_node *a, mf_file *out)
{
    int ready = PRE_READY;
    if (!atomic_compare_exchange_strong(&a->pre_state, &ready, PRE_TAKEN))
        return false;
    *out = a->pre;
    return true;
}

int mf_remote_alias_map(const char *local, mf_file *out, mf_status *st)
{
    alias_node *a = alias_node_of(local);
    if (!a)
        return 1;
    if (alias_take_premapped(a, out))
        return 0;
    return mf_map_remote(a->url, out, st) ? -1 : 0;
}

void mf_remote_alias_prefetch(const char *local)
{
    alias_node *a = alias_node_of(local);
    if (!a || atomic_load(&a->pre_state) != PRE_NONE)
        return;
    mf_status st;
    mf_status_init(&st);
    /* a failure is left for the real open to report */
    if (mf_map_remote(a->url, &a->pre, &st) == 0)
        atomic_store(&a->pre_state, PRE_READY);
    mf_status_clear(&st);
}

void mf_remote_alias_drop_under(const char *folder)
{
    size_t n = strlen(folder);
    for (alias_node *a = atomic_load(&aliases); a; a = a->next) {
        if (strncmp(a->local, folder, n) != 0 || a->local[n] != '/')
            continue;
        atomic_store(&a->dropped, true);
        mf_file f;
        if (alias_take_premapped(a, &f)) /* made ahead, never used */
            mf_unmap_file(&f);
    }
}

void mf_remote_count_bytes(uint64_t n)
{
    atomic_fetch_add(&bytes_received, n);
}

MF_API uint64_t mf_remote_bytes_read(void)
{
    return atomic_load(&bytes_received);
}

/* The token huggingface_hub would send: HF_TOKEN (or the older
 * HUGGING_FACE_HUB_TOKEN), else the token file ($HF_TOKEN_PATH, else
 * $HF_HOME/token, else ~/.cache/huggingface/token). */
static void lookup_token(char *out, size_t cap)
{
    const char *v = getenv("HF_TOKEN");
    if (!v || !*v)
        v = getenv("HUGGING_FACE_HUB_TOKEN");
    if (v && *v) {
        snprintf(out, cap, "%s", v);
        return;
    }
    char path[4096];
    const char *p = getenv("HF_TOKEN_PATH"), *home = getenv("HF_HOME"), *h = getenv("HOME");
    if (p && *p)
        snprintf(path, sizeof(path), "%s", p);
    else if (home && *home)
        snprintf(path, sizeof(path), "%s/token", home);
    else if (h)
        snprintf(path, sizeof(path), "%s/.cache/huggingface/token", h);
    else
        return;
    FILE *f = fopen(path, "rb");
    if (!f)
        return;
    size_t n = fread(out, 1, cap - 1, f);
    fclose(f);
    out[n] = 0;
    while (n && (out[n - 1] == '\n' || out[n - 1] == '\r' || out[n - 1] == ' '))
        out[--n] = 0;
}

void mf_remote_cfg_get(mf_remote_cfg *out)
{
    pthread_mutex_lock(&cfg_mu);
    *out = cfg;
    pthread_mutex_unlock(&cfg_mu);
    if (!cfg_token_set)
        lookup_token(out->token, sizeof(out->token));
}

MF_API void mf_remote_opts_init(mf_remote_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->struct_size = sizeof(*o);
    o->timeout_s = 30;
    o->retries = 3;
}

MF_API int mf_remote_configure(const mf_remote_opts *opts, mf_status *st)
{
    MF_ST_GUARD(st);
    mf_remote_opts o;
    mf_remote_opts_init(&o);
    if (mf_opts_copy(&o, sizeof(o), opts, "mf_remote_configure", st))
        return -1;
    if (o.token && strlen(o.token) >= sizeof(cfg.token))
        return mf_status_fail(st, MF_ERR_USAGE, "mf_remote_configure: the token is too long");
    pthread_mutex_lock(&cfg_mu);
    cfg.max_bytes = o.max_bytes;
    cfg.timeout_s = o.timeout_s ? o.timeout_s : 30;
    cfg.retries = o.retries > 10 ? 10 : o.retries;
    cfg_token_set = o.token != NULL;
    snprintf(cfg.token, sizeof(cfg.token), "%s", o.token ? o.token : "");
    pthread_mutex_unlock(&cfg_mu);
    return 0;
}

/* ------------------------------------------------------------ registry */

/* The mappings' address ranges for mf_remote_owns, readable from a signal
 * handler: plain atomics, no lock (slots beyond MAX_RANGES are not listed,
 * which only makes the CLI's message less precise). */
enum { MAX_RANGES = 256 };
static _Atomic uintptr_t range_lo[MAX_RANGES], range_hi[MAX_RANGES];

static void list_range(const remote_map *r, bool add)
{
    uintptr_t lo = (uintptr_t)r->base;
    for (size_t i = 0; i < MAX_RANGES; i++)
        if (add ? atomic_load(&range_lo[i]) == 0 : atomic_load(&range_lo[i]) == lo) {
            atomic_store(&range_hi[i], add ? lo + (uintptr_t)r->mapped : 0);
            atomic_store(&range_lo[i], add ? lo : 0);
            return;
        }
}

MF_API bool mf_remote_owns(const void *addr)
{
    uintptr_t a = (uintptr_t)addr;
    for (size_t i = 0; i < MAX_RANGES; i++) {
        uintptr_t lo = atomic_load(&range_lo[i]);
        if (lo && a >= lo && a < atomic_load(&range_hi[i]))
            return true;
    }
    return false;
}

static int register_map(remote_map *r)
{
    pthread_mutex_lock(&reg_mu);
    list_range(r, true);
    int rc = mf_vec_grow((void **)&maps, &cap_maps, n_maps + 1, sizeof(*maps));
    if (rc == 0) {
        maps[n_maps++] = r;
        atomic_store(&active, n_maps);
    }
    pthread_mutex_unlock(&reg_mu);
    return rc;
}

static remote_map *find_map(const uint8_t *p, bool remove)
{
    remote_map *r = NULL;
    pthread_mutex_lock(&reg_mu);
    for (size_t i = 0; i < n_maps; i++)
        if (p >= maps[i]->base && p < maps[i]->base + maps[i]->mapped) {
            r = maps[i];
            if (remove) {
                list_range(r, false);
                maps[i] = maps[--n_maps];
                atomic_store(&active, n_maps);
                if (!n_maps) {
                    free(maps);
                    maps = NULL;
                    cap_maps = 0;
                }
            }
            break;
        }
    pthread_mutex_unlock(&reg_mu);
    return r;
}

/* ------------------------------------------------------------- filling */

static int over_budget(const remote_map *r, uint64_t off, uint64_t len, mf_status *st)
{
    mf_remote_cfg c;
    pthread_mutex_lock(&cfg_mu);
    c = cfg;
    pthread_mutex_unlock(&cfg_mu);
    uint64_t used = atomic_load(&bytes_received);
    if (!c.max_bytes || used + len <= c.max_bytes)
        return 0;
    return mf_fail(st, MF_ERR_IO, r->url, (int64_t)off,
                   "reading %llu more bytes would pass the byte budget of %llu (--max-bytes; "
                   "%llu read so far): a remote read fetches headers, not tensor data",
                   (unsigned long long)len, (unsigned long long)c.max_bytes,
                   (unsigned long long)used);
}

/* Fetches pages [i, j) into the mapping. */
static int fetch_pages(remote_map *r, uint64_t i, uint64_t j, mf_status *st)
{
    uint64_t off = i * r->page, end = j * r->page;
    if (end > r->size)
        end = r->size;
    uint8_t *at = r->base + off;
    size_t span = (size_t)((j - i) * r->page);
    if (over_budget(r, off, end - off, st))
        return -1;
    if (mprotect(at, span, PROT_READ | PROT_WRITE) != 0)
        return mf_fail(st, MF_ERR_IO, r->url, (int64_t)off, "mprotect failed");
    int rc = mf_http_get_range(&r->curl, r->url, off, end - off, at, &r->meta, st);
    if (rc == 0 && r->meta.total != r->size)
        rc = mf_fail(st, MF_ERR_IO, r->url, (int64_t)off,
                     "the file changed size on the server (%llu bytes, was %llu)",
                     (unsigned long long)r->meta.total, (unsigned long long)r->size);
    /* failed: the pages go back to no access, so no half-written bytes show */
    mprotect(at, span, rc == 0 ? PROT_READ : PROT_NONE);
    if (rc == 0) {
        memset(r->filled + i, 1, (size_t)(j - i));
        r->last_end = j;
    }
    return rc;
}

static int fill_range(remote_map *r, uint64_t off, uint64_t n, mf_status *st)
{
    uint64_t npages = r->mapped / r->page;
    uint64_t p0 = off / r->page, p1 = (off + n + r->page - 1) / r->page;
    for (uint64_t i = p0; i < p1 && i < npages; i++) {
        if (r->filled[i])
            continue;
        /* a sequential walk (a GGUF header) reads ahead; a jump (a zip's
         * local headers, a probe's signature) takes only its pages */
        uint64_t ra = i == r->last_end ? READAHEAD / r->page : 0;
        uint64_t j = i + 1;
        while (j < npages && !r->filled[j] && (j < p1 || j - i < ra))
            j++;
        if (fetch_pages(r, i, j, st))
            return -1;
        i = j - 1;
    }
    return 0;
}

int mf_source_need(const uint8_t *p, uint64_t n, mf_status *st)
{
    if (!atomic_load(&active) || !p || !n)
        return 0;
    remote_map *r = find_map(p, false);
    if (!r)
        return 0; /* a local mapping or memory: always there */
    uint64_t off = (uint64_t)(p - r->base);
    if (off >= r->size)
        return 0; /* the caller's bounds check reports it */
    if (n > r->size - off)
        n = r->size - off;
    pthread_mutex_lock(&r->mu);
    int rc = fill_range(r, off, n, st);
    pthread_mutex_unlock(&r->mu);
    return rc;
}

bool mf_source_is_remote(const uint8_t *p)
{
    return p && atomic_load(&active) && find_map(p, false) != NULL;
}

int mf_tensor_need(const mf_tensor *t, mf_status *st)
{
    if (!t->data || !t->nbytes || !atomic_load(&active))
        return 0;
    uint64_t reach = t->nbytes;
    const mf_dtype_info *di = mf_dtype_info_of(t->dtype);
    if (t->strides && di && di->block_elems == 1) {
        uint64_t last = 0;
        for (int d = 0; d < t->ndim; d++)
            last += (uint64_t)(t->shape[d] - 1) * (uint64_t)t->strides[d];
        reach = (last + 1) * di->block_bytes;
    }
    return mf_source_need(t->data, reach, st);
}

/* ------------------------------------------------------ map and unmap */

static void free_map(remote_map *r)
{
    if (r->base)
        munmap(r->base, (size_t)r->mapped);
    mf_http_close(r->curl);
    free(r->filled);
    free(r->url);
    pthread_mutex_destroy(&r->mu);
    free(r);
}

int mf_map_remote(const char *url, mf_file *out, mf_status *st)
{
    memset(out, 0, sizeof(*out));
    out->path = url;
    remote_map *r = calloc(1, sizeof(*r));
    uint8_t *first = malloc(FIRST_READ);
    if (!r || !first || !(r->url = strdup(url))) {
        free(first);
        free(r);
        return mf_oom(st, url);
    }
    pthread_mutex_init(&r->mu, NULL);
    r->page = (uint64_t)sysconf(_SC_PAGESIZE);
    /* the first bytes tell the size (Content-Range's total) */
    if (mf_http_get_range(&r->curl, url, 0, FIRST_READ, first, &r->meta, st)) {
        free(first);
        free_map(r);
        return -1;
    }
    r->size = r->meta.total;
    if (r->size == 0) {
        free(first);
        free_map(r);
        return 0;
    }
    r->mapped = mf_align_up(r->size, r->page);
    void *m = mmap(NULL, (size_t)r->mapped, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    r->filled = calloc((size_t)(r->mapped / r->page), 1);
    if (m == MAP_FAILED || !r->filled) {
        free(first);
        r->base = m == MAP_FAILED ? NULL : m;
        free_map(r);
        return mf_fail(st, MF_ERR_IO, url, -1, "cannot reserve %llu bytes of address space",
                       (unsigned long long)r->size);
    }
    r->base = m;
    uint64_t have = r->size < FIRST_READ ? r->size : FIRST_READ;
    uint64_t pages = have == r->size ? r->mapped / r->page : have / r->page;
    if (pages) {
        mprotect(r->base, (size_t)(pages * r->page), PROT_READ | PROT_WRITE);
        memcpy(r->base, first, (size_t)(pages * r->page < have ? pages * r->page : have));
        mprotect(r->base, (size_t)(pages * r->page), PROT_READ);
        memset(r->filled, 1, (size_t)pages);
        r->last_end = pages;
    }
    free(first);
    if (register_map(r)) {
        free_map(r);
        return mf_oom(st, url);
    }
    out->base = r->base;
    out->size = r->size;
    return 0;
}

bool mf_unmap_remote(mf_file *f)
{
    if (!f->base || !atomic_load(&active))
        return false;
    remote_map *r = find_map(f->base, true);
    if (!r)
        return false;
    free_map(r);
    f->base = NULL;
    f->size = 0;
    return true;
}

MF_API int mf_remote_info(const char *url, mf_remote_file_info *out, mf_status *st)
{
    MF_ST_GUARD(st);
    memset(out, 0, sizeof(*out));
    mf_http_meta meta = {0};
    void *h = NULL;
    uint8_t one;
    int rc = mf_http_get_range(&h, url, 0, 1, &one, &meta, st);
    mf_http_close(h);
    if (rc)
        return -1;
    out->size = meta.total;
    out->linked_size = meta.linked_size;
    snprintf(out->etag, sizeof(out->etag), "%s", meta.etag);
    snprintf(out->commit, sizeof(out->commit), "%s", meta.commit);
    snprintf(out->linked_etag, sizeof(out->linked_etag), "%s", meta.linked_etag);
    return 0;
}
