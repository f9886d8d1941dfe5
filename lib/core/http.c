/* http.c - ranged HTTP GETs with libcurl: the only file that includes
 * curl (DESIGN.md "Remote and cached sources"). remote.c asks it for byte
 * ranges of a URL; it follows redirects (the Hub answers /resolve/ with a
 * 302 to its CDN), sends the token as a bearer header to the first host only
 * (curl drops custom Authorization headers on a redirect to another host),
 * checks that a 206 answer's Content-Range is the range asked for, stops a
 * server that ignores Range after the bytes it was asked for, retries
 * transient failures a bounded number of times, and counts every body byte
 * received against the process's budget. The token never appears in a
 * message. */
#include "core/core.h"
#include "core/remote.h"

#include <curl/curl.h>
#include <ctype.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_init_once(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* One transfer: the range asked for and what came back. */
typedef struct transfer {
    const char *url;
    uint64_t off, len;   /* asked for [off, off+len) */
    uint8_t *dst;        /* len bytes */
    uint64_t got;        /* body bytes stored */
    long status;         /* of the last response (after redirects) */
    bool range_checked;  /* the first body byte's checks were made */
    bool whole_body;     /* a 200: the server ignored Range */
    bool stopped_early;  /* we cut a 200 off after the bytes we wanted */
    bool bad_range;
    char content_range[128];
    uint64_t content_length;
    mf_http_meta *meta;
    mf_status *st;
} transfer;

static bool header_is(const char *line, size_t n, const char *name, const char **val, size_t *vn)
{
    size_t k = strlen(name);
    if (n <= k || strncasecmp(line, name, k) != 0 || line[k] != ':')
        return false;
    const char *v = line + k + 1;
    const char *end = line + n;
    while (v < end && (*v == ' ' || *v == '\t'))
        v++;
    while (end > v && isspace((unsigned char)end[-1]))
        end--;
    *val = v;
    *vn = (size_t)(end - v);
    return true;
}

static void copy_val(char *dst, size_t cap, const char *v, size_t n)
{
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, v, n);
    dst[n] = 0;
}

static size_t on_header(char *line, size_t size, size_t nitems, void *user)
{
    transfer *t = user;
    size_t n = size * nitems;
    const char *v;
    size_t vn;
    char num[32];
    if (n >= 5 && strncmp(line, "HTTP/", 5) == 0) { /* a new response (redirects) */
        t->content_range[0] = 0;
        t->content_length = 0;
    } else if (header_is(line, n, "content-range", &v, &vn))
        copy_val(t->content_range, sizeof(t->content_range), v, vn);
    else if (header_is(line, n, "content-length", &v, &vn)) {
        copy_val(num, sizeof(num), v, vn);
        t->content_length = strtoull(num, NULL, 10);
    } else if (header_is(line, n, "etag", &v, &vn))
        copy_val(t->meta->etag, sizeof(t->meta->etag), v, vn);
    else if (header_is(line, n, "x-repo-commit", &v, &vn))
        copy_val(t->meta->commit, sizeof(t->meta->commit), v, vn);
    else if (header_is(line, n, "x-linked-etag", &v, &vn))
        copy_val(t->meta->linked_etag, sizeof(t->meta->linked_etag), v, vn);
    else if (header_is(line, n, "x-linked-size", &v, &vn)) {
        copy_val(num, sizeof(num), v, vn);
        t->meta->linked_size = strtoull(num, NULL, 10);
    }
    return n;
}

/* "bytes A-B/TOTAL": the range must start where asked and end where asked
 * (or at the end of a shorter file). */
static bool check_content_range(transfer *t)
{
    unsigned long long a, b, total;
    if (sscanf(t->content_range, "bytes %llu-%llu/%llu", &a, &b, &total) != 3 || a > b ||
        b >= total) {
        t->bad_range = true;
        mf_fail(t->st, MF_ERR_IO, t->url, (int64_t)t->off,
                "206 answer with a Content-Range of \"%s\", not bytes %llu-%llu/SIZE",
                t->content_range, (unsigned long long)t->off,
                (unsigned long long)(t->off + t->len - 1));
        return false;
    }
    uint64_t want_end = t->off + t->len - 1;
    if (a != t->off || (b != want_end && !(b < want_end && b == total - 1))) {
        t->bad_range = true;
        mf_fail(t->st, MF_ERR_IO, t->url, (int64_t)t->off,
                "the server sent bytes %llu-%llu when %llu-%llu were asked for (Content-Range)",
                a, b, (unsigned long long)t->off, (unsigned long long)want_end);
        return false;
    }
    t->meta->total = total;
    t->len = b - a + 1;
    return true;
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *user)
{
    transfer *t = user;
    size_t n = size * nmemb;
    mf_remote_count_bytes(n);
    if (!t->range_checked) {
        t->range_checked = true;
        if (t->status == 206) {
            if (!check_content_range(t))
                return 0;
        } else if (t->status == 200) {
            /* the server ignores Range: only the start of the file is of
             * use, and only when the start was asked for */
            t->whole_body = true;
            if (t->off != 0) {
                mf_fail(t->st, MF_ERR_IO, t->url, (int64_t)t->off,
                        "the server ignores Range requests (200 with the whole body); mfmt "
                        "reads remote files by ranges and does not download them whole");
                return 0;
            }
            if (t->content_length)
                t->meta->total = t->content_length;
            else {
                mf_fail(t->st, MF_ERR_IO, t->url, -1,
                        "the server ignores Range requests and gives no Content-Length");
                return 0;
            }
            if (t->len > t->meta->total)
                t->len = t->meta->total;
        } else
            return n; /* an error page: drained for the status, not stored */
    }
    uint64_t room = t->len - t->got;
    size_t take = n < room ? n : (size_t)room;
    memcpy(t->dst + t->got, data, take);
    t->got += take;
    if (t->got == t->len && t->whole_body) {
        t->stopped_early = true; /* cut off: nothing more is read */
        return 0;
    }
    return take == n ? n : 0;
}

/* The status of the response being received is needed before its first
 * body byte: curl's header callback sees the status line, so it is parsed
 * there. */
static size_t on_header_status(char *line, size_t size, size_t nitems, void *user)
{
    transfer *t = user;
    size_t n = size * nitems;
    if (n > 12 && strncmp(line, "HTTP/", 5) == 0) {
        const char *sp = memchr(line, ' ', n);
        if (sp)
            t->status = strtol(sp + 1, NULL, 10);
    }
    return on_header(line, size, nitems, user);
}

static void set_options(CURL *h, transfer *t, struct curl_slist *hdrs, char *range,
                        const mf_remote_cfg *cfg)
{
    curl_easy_setopt(h, CURLOPT_URL, t->url);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(h, CURLOPT_MAXREDIRS, 5L);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_RANGE, range);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "mfmt/" MF_VERSION_STRING);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, (long)cfg->timeout_s);
    /* a stalled transfer: under 1 byte/s for timeout_s seconds */
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, (long)cfg->timeout_s);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header_status);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, t);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, t);
}

static bool transient_status(long s)
{
    return s == 408 || s == 429 || s >= 500;
}

/* One attempt. 0: the bytes are in; 1: failed, worth another try; -1:
 * failed for good (st filled). */
static int attempt(CURL *h, transfer *t, const mf_remote_cfg *cfg, mf_status *tmp)
{
    char range[64], auth[4200];
    snprintf(range, sizeof(range), "%llu-%llu", (unsigned long long)t->off,
             (unsigned long long)(t->off + t->len - 1));
    struct curl_slist *hdrs = curl_slist_append(NULL, "Accept-Encoding: identity");
    if (cfg->token[0]) {
        snprintf(auth, sizeof(auth), "Authorization: Bearer %s", cfg->token);
        hdrs = curl_slist_append(hdrs, auth);
        memset(auth, 0, sizeof(auth));
    }
    curl_easy_reset(h);
    set_options(h, t, hdrs, range, cfg);
    t->st = tmp;
    CURLcode rc = curl_easy_perform(h);
    curl_slist_free_all(hdrs);
    if (t->stopped_early || (rc == CURLE_OK && t->status == 206 && t->got == t->len) ||
        (rc == CURLE_OK && t->whole_body && t->got == t->len))
        return 0;
    if (!mf_ok(tmp))
        return -1; /* our own refusal: wrong range, Range ignored */
    unsigned long long total;
    if (t->status == 416 && t->off == 0 && sscanf(t->content_range, "bytes */%llu", &total) == 1 &&
        total == 0) {
        t->meta->total = 0; /* an empty file has no byte 0 to give */
        return 0;
    }
    if (t->status == 401 || t->status == 403) {
        mf_fail(tmp, MF_ERR_IO, t->url, -1,
                "HTTP %ld: this file needs a token (a gated or private repo)%s", t->status,
                cfg->token[0] ? "; the token given was refused"
                              : ": set HF_TOKEN, pass --token, or log in (the cache's token file)");
        return -1;
    }
    if (t->status == 404 || t->status == 416 || (t->status >= 300 && !transient_status(t->status) &&
                                                 t->status != 200 && t->status != 206)) {
        mf_fail(tmp, MF_ERR_IO, t->url, -1, "HTTP %ld%s", t->status,
                t->status == 404 ? ": not found" : "");
        return -1;
    }
    if (rc == CURLE_OK && t->status == 206 && t->got < t->len)
        mf_fail(tmp, MF_ERR_IO, t->url, (int64_t)(t->off + t->got),
                "truncated answer: %llu of %llu bytes", (unsigned long long)t->got,
                (unsigned long long)t->len);
    else if (rc != CURLE_OK)
        mf_fail(tmp, MF_ERR_IO, t->url, (int64_t)t->off, "%s%s", curl_easy_strerror(rc),
                rc == CURLE_OPERATION_TIMEDOUT ? " (stalled or too slow)" : "");
    else
        mf_fail(tmp, MF_ERR_IO, t->url, -1, "HTTP %ld", t->status);
    return 1;
}

/* A message "URL: byte N: reason" without its prefix. */
static const char *reason_of(const char *msg, const char *url)
{
    size_t n = strlen(url);
    if (strncmp(msg, url, n) == 0 && msg[n] == ':')
        msg += n + 2;
    if (strncmp(msg, "byte ", 5) == 0 && strchr(msg, ':'))
        msg = strchr(msg, ':') + 2;
    return msg;
}

int mf_http_get_range(void **handle, const char *url, uint64_t off, uint64_t len, uint8_t *dst,
                      mf_http_meta *meta, mf_status *st)
{
    pthread_once(&curl_once, curl_init_once);
    mf_remote_cfg cfg;
    mf_remote_cfg_get(&cfg);
    if (!*handle && !(*handle = curl_easy_init()))
        return mf_fail(st, MF_ERR_NOMEM, url, -1, "cannot start an HTTP transfer");
    for (unsigned i = 0;; i++) {
        transfer t = {.url = url, .off = off, .len = len, .dst = dst, .meta = meta};
        mf_status tmp;
        mf_status_init(&tmp);
        int r = attempt(*handle, &t, &cfg, &tmp);
        if (r == 0) {
            mf_status_clear(&tmp);
            if (t.got < len) /* the file ends first */
                memset(dst + t.got, 0, (size_t)(len - t.got));
            meta->got = t.got;
            return 0;
        }
        if (r < 0 || i >= cfg.retries) {
            if (r > 0)
                mf_fail(st, MF_ERR_IO, url, (int64_t)off, "%s (gave up after %u tries)",
                        reason_of(tmp.msg, url), i + 1);
            else
                mf_status_merge(st, &tmp);
            mf_status_clear(&tmp);
            return -1;
        }
        mf_status_clear(&tmp);
        struct timespec ts = {0, (long)(100000000L << (i < 4 ? i : 4))}; /* 0.1 s doubling */
        nanosleep(&ts, NULL);
    }
}

void mf_http_close(void *handle)
{
    if (handle)
        curl_easy_cleanup(handle);
}
