/* status.c - error reporting: every message names file, byte and rule. */
#include "core/core.h"

#include <stdlib.h>

void mf_status_init(mf_status *st)
{
    if (st)
        memset(st, 0, sizeof(*st));
}

void mf_status_clear(mf_status *st)
{
    if (!st)
        return;
    for (size_t i = 0; i < st->n_all; i++)
        free(st->all[i]);
    free(st->all);
    mf_status_init(st);
}

static void status_append(mf_status *st, mf_code code, const char *msg)
{
    if (st->code == MF_OK) {
        st->code = code;
        snprintf(st->msg, sizeof(st->msg), "%s", msg);
    }
    /* Bound the list: a hostile file must not make us collect millions. */
    if (st->n_all >= 1000)
        return;
    if (st->n_all == st->cap_all) {
        size_t cap = st->cap_all ? st->cap_all * 2 : 8;
        char **v = realloc(st->all, cap * sizeof(*v));
        if (!v)
            return;
        st->all = v;
        st->cap_all = cap;
    }
    char *copy = strdup(msg);
    if (copy)
        st->all[st->n_all++] = copy;
}

static void format_msg(char *buf, size_t cap, const char *file, int64_t offset,
                       const char *fmt, va_list ap)
{
    int k = 0;
    if (file && offset >= 0)
        k = snprintf(buf, cap, "%s: byte %lld: ", file, (long long)offset);
    else if (file)
        k = snprintf(buf, cap, "%s: ", file);
    if (k < 0 || (size_t)k >= cap)
        k = 0;
    vsnprintf(buf + k, cap - (size_t)k, fmt, ap);
}

int mf_failv(mf_status *st, mf_code code, const char *file, int64_t offset,
             const char *fmt, va_list ap)
{
    char buf[1024];
    format_msg(buf, sizeof(buf), file, offset, fmt, ap);
    if (st)
        status_append(st, code, buf);
    return -1;
}

int mf_fail(mf_status *st, mf_code code, const char *file, int64_t offset,
            const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    mf_failv(st, code, file, offset, fmt, ap);
    va_end(ap);
    return -1;
}

void mf_breach(mf_status *st, const char *file, int64_t offset,
               const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    mf_failv(st, MF_ERR_FORMAT, file, offset, fmt, ap);
    va_end(ap);
}

void mf_status_merge(mf_status *dst, const mf_status *src)
{
    if (!dst || !src)
        return;
    for (size_t i = 0; i < src->n_all; i++)
        status_append(dst, src->code, src->all[i]);
    if (src->n_all == 0 && src->code != MF_OK)
        status_append(dst, src->code, src->msg);
}

int mf_oom(mf_status *st, const char *file)
{
    return mf_fail(st, MF_ERR_NOMEM, file, -1, "out of memory");
}

size_t mf_status_count(const mf_status *st)
{
    if (!st)
        return 0;
    return st->n_all ? st->n_all : st->code != MF_OK;
}

const char *mf_status_message(const mf_status *st, size_t i)
{
    if (!st)
        return NULL;
    if (st->n_all)
        return i < st->n_all ? st->all[i] : NULL;
    return i == 0 && st->code != MF_OK ? st->msg : NULL;
}

const char *mf_code_name(mf_code c)
{
    static const char *const names[] = {"ok",    "format", "unsafe", "unsupported",
                                        "io",    "usage",  "nomem",  "cancelled"};
    return (unsigned)c < sizeof(names) / sizeof(names[0]) ? names[c] : "?";
}

int mf_status_fail(mf_status *st, mf_code code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    mf_failv(st, code, NULL, -1, fmt, ap);
    va_end(ap);
    return -1;
}

int mf_progress_report(mf_progress_fn fn, void *user, uint64_t done, uint64_t total,
                       const char *file, mf_status *st)
{
    if (fn && fn(user, done, total) != 0)
        return mf_fail(st, MF_ERR_CANCELLED, file, -1, "cancelled");
    return 0;
}

int mf_opts_copy(void *dflt, size_t dflt_size, const void *opts, const char *what,
                 mf_status *st)
{
    if (!opts)
        return 0;
    size_t n;
    memcpy(&n, opts, sizeof(n)); /* every option struct begins with struct_size */
    if (n < sizeof(size_t))
        return mf_fail(st, MF_ERR_USAGE, NULL, -1,
                       "%s.struct_size is %zu: initialise the options with their _init "
                       "function", what, n);
    /* fields past the caller's struct keep their defaults; a newer caller's
     * extra fields are not known here and are ignored */
    memcpy(dflt, opts, n < dflt_size ? n : dflt_size);
    memcpy(dflt, &dflt_size, sizeof(dflt_size));
    return 0;
}
