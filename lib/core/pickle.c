/* pickle.c - the opcode loop of the restricted pickle interpreter.
 * Opcodes and their arguments as documented in CPython's Lib/pickletools.py
 * and carried out as Lib/pickle.py's _Unpickler and Modules/_pickle.c do,
 * except that nothing is imported or called (see pickle_call.c). */
#include "core/pickle_int.h"

#include <errno.h>
#include <stdlib.h>

/* Absolute caps, whatever the input size: beyond them a pickle is refused
 * as an expansion bomb (model files need a tiny fraction of this). */
#define CAP_OBJECTS (2u << 20)
#define CAP_ITEMS (8u << 20)
#define CAP_STACK (4u << 20)
#define CAP_MEMO (4u << 20)

static int pk_vfail(pk_machine *pm, uint64_t off, mf_status *st, const char *fmt, va_list ap)
{
    char msg[600];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    const char *mem = pm->o.member;
    return mf_fail(st, MF_ERR_FORMAT, pm->o.file, (int64_t)(pm->o.origin + off), "%s%spickle: %s",
                   mem ? mem : "", mem ? ": " : "", msg);
}

int pk_fail(pk_machine *pm, uint64_t off, mf_status *st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = pk_vfail(pm, off, st, fmt, ap);
    va_end(ap);
    return rc;
}

int pk_fail_unsure(pk_machine *pm, uint64_t off, mf_status *st, const char *fmt, ...)
{
    pm->unsure = true;
    va_list ap;
    va_start(ap, fmt);
    int rc = pk_vfail(pm, off, st, fmt, ap);
    va_end(ap);
    return rc;
}

int pk_fail_unproven(pk_machine *pm, uint64_t off, mf_status *st, const char *fmt, ...)
{
    pm->unproven = true;
    va_list ap;
    va_start(ap, fmt);
    int rc = pk_vfail(pm, off, st, fmt, ap);
    va_end(ap);
    return rc;
}

bool pk_stopped_by_limit(const pk_machine *pm)
{
    return pm->unsure;
}

void pk_note_irregular(pk_machine *pm, uint64_t off, const char *fmt, ...)
{
    if (pm->irregular)
        return; /* the first step outside the form is the one reported */
    pm->irregular = true;
    if (!pm->o.on_irregular)
        return;
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    pm->o.on_irregular(pm->o.ctx, pm->o.origin + off, msg);
}

bool pk_irregular(const pk_machine *pm)
{
    return pm->irregular;
}

bool pk_failure_proven(const pk_machine *pm)
{
    return !pm->unsure && !pm->unproven && !pm->irregular && !pm->named;
}

int pk_oom(pk_machine *pm, mf_status *st)
{
    pm->unsure = true;
    return mf_oom(st, pm->o.file);
}

pk_machine *pk_new(const pk_opts *o)
{
    pk_machine *pm = calloc(1, sizeof(*pm));
    if (!pm)
        return NULL;
    pm->o = *o;
    pm->pload = o->persistent_load;
    pm->pctx = o->ctx;
    pm->a = mf_arena_new();
    if (!pm->a) {
        free(pm);
        return NULL;
    }
    return pm;
}

void pk_free(pk_machine *pm)
{
    if (!pm)
        return;
    free(pm->stk);
    free(pm->marks);
    free(pm->memo);
    free(pm->gated);
    mf_arena_free(pm->a);
    free(pm);
}

mf_arena *pk_arena(pk_machine *pm)
{
    return pm->a;
}

void pk_set_persistent(pk_machine *pm, pk_persistent_fn fn, void *ctx)
{
    pm->pload = fn ? fn : pm->o.persistent_load;
    pm->pctx = fn ? ctx : pm->o.ctx;
}

uint64_t pk_objects(const pk_machine *pm)
{
    return pm->objects;
}

void pk_set_base(pk_machine *pm, uint64_t base)
{
    pm->base = base;
}

void pk_set_member(pk_machine *pm, const char *member, uint64_t origin)
{
    pm->o.member = member;
    pm->o.origin = origin;
}

/* ---------------------------------------------------------------- input */

static int need(pk_machine *pm, uint64_t k, const char *op, mf_status *st)
{
    if (k > pm->n - pm->pos)
        return pk_fail(pm, pm->op_off, st, "%s needs %llu bytes but only %llu are left", op,
                       (unsigned long long)k, (unsigned long long)(pm->n - pm->pos));
    return 0;
}

static int rd(pk_machine *pm, size_t k, const uint8_t **p, const char *op, mf_status *st)
{
    if (need(pm, k, op, st))
        return -1;
    *p = pm->d + pm->pos;
    pm->pos += k;
    return 0;
}

static int rd_uint(pk_machine *pm, size_t k, uint64_t *v, const char *op, mf_status *st)
{
    const uint8_t *p;
    if (rd(pm, k, &p, op, st))
        return -1;
    *v = 0;
    for (size_t i = 0; i < k; i++)
        *v |= (uint64_t)p[i] << (8 * i);
    return 0;
}

/* A text argument up to '\n' (excluded). */
static int rd_line(pk_machine *pm, const char **s, size_t *len, const char *op, mf_status *st)
{
    /* Python's readline has no length limit: neither has this */
    const uint8_t *start = pm->d + pm->pos;
    size_t left = pm->n - pm->pos;
    const uint8_t *nl = memchr(start, '\n', left);
    if (!nl)
        return pk_fail(pm, pm->op_off, st, "%s: no newline ending its argument", op);
    *s = (const char *)start;
    *len = (size_t)(nl - start);
    pm->pos += *len + 1;
    return 0;
}

/* ---------------------------------------------------------------- stack */

static int push(pk_machine *pm, pk_obj *o, mf_status *st)
{
    if (!o)
        return -1;
    if (pm->sn == pm->scap) {
        if (pm->sn >= CAP_STACK)
            return pk_fail_unsure(pm, pm->op_off, st, "stack deeper than %u: refused", CAP_STACK);
        if (mf_vec_grow((void **)&pm->stk, &pm->scap, pm->sn + 1, sizeof(*pm->stk)))
            return pk_oom(pm, st);
    }
    pm->stk[pm->sn++] = o;
    return 0;
}

static size_t fence(const pk_machine *pm)
{
    return pm->mn ? pm->marks[pm->mn - 1] : 0;
}

static pk_obj *pop(pk_machine *pm, const char *op, mf_status *st)
{
    if (pm->sn <= fence(pm)) {
        pk_fail(pm, pm->op_off, st, "%s: stack underflow%s", op, pm->mn ? " (above the mark)" : "");
        return NULL;
    }
    return pm->stk[--pm->sn];
}

static pk_obj *top(pk_machine *pm, const char *op, mf_status *st)
{
    if (pm->sn <= fence(pm)) {
        pk_fail(pm, pm->op_off, st, "%s: stack underflow%s", op, pm->mn ? " (above the mark)" : "");
        return NULL;
    }
    return pm->stk[pm->sn - 1];
}

/* The items above the last mark; removes them and the mark. */
static int pop_mark(pk_machine *pm, pk_obj ***items, size_t *n, const char *op, mf_status *st)
{
    if (pm->mn == 0)
        return pk_fail(pm, pm->op_off, st, "%s: no MARK on the stack", op);
    size_t m = pm->marks[--pm->mn];
    *items = pm->stk ? pm->stk + m : NULL; /* no stack yet: an empty mark */
    *n = pm->sn - m;
    pm->sn = m; /* the items stay readable until the next push */
    return pk_charge(pm, *n, st);
}

/* ----------------------------------------------------------------- memo */

static pk_memo_slot *memo_slot(pk_machine *pm, int64_t key)
{
    if (!pm->memo_cap)
        return NULL;
    size_t h = (size_t)((uint64_t)key * 0x9e3779b97f4a7c15ull >> 20) & (pm->memo_cap - 1);
    while (pm->memo[h].v && pm->memo[h].key != key)
        h = (h + 1) & (pm->memo_cap - 1);
    return &pm->memo[h];
}

static int memo_put(pk_machine *pm, int64_t key, pk_obj *v, mf_status *st)
{
    if (pm->memo_n * 2 >= pm->memo_cap) {
        if (pm->memo_n >= CAP_MEMO)
            return pk_fail_unsure(pm, pm->op_off, st, "more than %u memo entries: refused", CAP_MEMO);
        size_t cap = pm->memo_cap ? pm->memo_cap * 2 : 64;
        pk_memo_slot *old = pm->memo;
        size_t ocap = pm->memo_cap;
        pm->memo = calloc(cap, sizeof(*pm->memo));
        if (!pm->memo) {
            pm->memo = old;
            return pk_oom(pm, st);
        }
        pm->memo_cap = cap;
        for (size_t i = 0; i < ocap; i++)
            if (old[i].v)
                *memo_slot(pm, old[i].key) = old[i];
        free(old);
        if (pk_charge(pm, ocap, st))
            return -1;
    }
    pk_memo_slot *s = memo_slot(pm, key);
    if (!s->v)
        pm->memo_n++;
    s->key = key;
    s->v = v;
    return 0;
}

static int memo_get(pk_machine *pm, int64_t key, const char *op, mf_status *st)
{
    pk_memo_slot *s = memo_slot(pm, key);
    if (!s || !s->v)
        return pk_fail(pm, pm->op_off, st, "%s %lld: no memo entry with this index", op,
                       (long long)key);
    return push(pm, s->v, st);
}

static int memo_put_top(pk_machine *pm, int64_t key, const char *op, mf_status *st)
{
    pk_obj *t = top(pm, op, st);
    return t ? memo_put(pm, key, t, st) : -1;
}

/* ------------------------------------------------------- text arguments */

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* The canonical syntax of text arguments: what Python's pickle.py and
 * _pickle.c (protocols 0 and 1) and Python 2's pickle write, nothing
 * else. C's strtol / PyLong_FromString / PyOS_string_to_double stop at a
 * NUL and take spaces, signs, underscores, prefixes and leading zeros that
 * no writer produces: outside this syntax the value may not be the one
 * mfmt reads, so the step is irregular (doc/scan.md). */
static bool all_digits(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    return n > 0;
}

/* 0 | [1-9][0-9]*, after an optional '-' when sign */
static bool canon_decimal(const char *s, size_t n, bool sign)
{
    if (sign && n && s[0] == '-') {
        s++;
        n--;
    }
    return all_digits(s, n) && (n == 1 || s[0] != '0');
}

/* repr(float): -?(inf|nan|D+(.D+)?(e[+-]D+)?) */
static bool canon_float(const char *s, size_t n)
{
    size_t i = n && s[0] == '-';
    if ((n - i == 3 && memcmp(s + i, "inf", 3) == 0) || (n - i == 3 && memcmp(s + i, "nan", 3) == 0))
        return true;
    size_t d = i;
    while (i < n && s[i] >= '0' && s[i] <= '9')
        i++;
    if (i == d)
        return false;
    if (i < n && s[i] == '.') {
        size_t f = ++i;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
        if (i == f)
            return false;
    }
    if (i < n && s[i] == 'e') {
        i++;
        if (i >= n || (s[i] != '+' && s[i] != '-'))
            return false;
        return all_digits(s + i + 1, n - i - 1);
    }
    return i == n;
}

/* Python 2's repr of a str: printable ASCII, escapes \\ \' \" \t \n \r \xhh */
static bool canon_string(const char *s, size_t n)
{
    if (n < 2 || s[0] != s[n - 1] || (s[0] != '\'' && s[0] != '"'))
        return false;
    for (size_t i = 1; i + 1 < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c > 0x7e)
            return false;
        if (c != '\\')
            continue;
        char e = i + 2 < n ? s[i + 1] : 0;
        if (e == 'x') {
            if (i + 4 >= n || hexval(s[i + 2]) < 0 || hexval(s[i + 3]) < 0)
                return false;
            i += 3;
        } else if (e && strchr("\\'\"tnr", e)) {
            i++;
        } else {
            return false;
        }
    }
    return true;
}

/* raw-unicode-escape as pickle writes it: every backslash starts \uXXXX or
 * \UXXXXXXXX (the writer escapes backslashes themselves), so runs of
 * backslashes, which the codec counts, never occur */
static bool canon_unicode(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '\\')
            continue;
        size_t k = i + 1 < n && s[i + 1] == 'u' ? 4 : i + 1 < n && s[i + 1] == 'U' ? 8 : 0;
        if (!k || i + 2 + k > n)
            return false;
        for (size_t d = 0; d < k; d++)
            if (hexval(s[i + 2 + d]) < 0)
                return false;
        i += 1 + k;
    }
    return true;
}

/* A module or name line of GLOBAL / INST, or a text persistent id: no
 * spaces, control bytes or NUL (names are dotted identifiers) */
static bool canon_name(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] <= 0x20 || s[i] == 0x7f)
            return false;
    return n > 0;
}

/* Checks a text argument of op against its canonical syntax; a NUL is
 * named (CPython's C parsers stop at it). */
static void check_text(pk_machine *pm, const char *op, const char *s, size_t n, bool ok)
{
    /* UNICODE is decoded by length (raw-unicode-escape): a NUL there is a
     * character, which older picklers wrote as it is */
    const char *nul = strcmp(op, "UNICODE") ? memchr(s, 0, n) : NULL;
    if (nul)
        pk_note_irregular(pm, pm->op_off,
                          "%s at byte %llu: a NUL byte in its text argument (C's parsers stop "
                          "there): not as pickle.dump writes it", op,
                          (unsigned long long)(pm->base + pm->o.origin + pm->op_off));
    else if (!ok)
        pk_note_irregular(pm, pm->op_off,
                          "%s at byte %llu: \"%.*s\" is not in the syntax Python writes "
                          "(spaces, signs, underscores, leading zeros, prefixes...)", op,
                          (unsigned long long)(pm->base + pm->o.origin + pm->op_off), (int)(n > 40 ? 40 : n),
                          s);
}

/* The text C's parser reads: up to the first NUL. */
static size_t c_text_len(const char *s, size_t n)
{
    const char *nul = memchr(s, 0, n);
    return nul ? (size_t)(nul - s) : n;
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

/* Python's int(text, 0) (and int(text) when base10): sign, 0x/0o/0b
 * prefixes, underscores between digits, surrounding spaces. Values that
 * do not fit 64 bits become BIGINT text. */
static pk_obj *int_from_text(pk_machine *pm, const char *s, size_t n, bool base0, const char *op,
                             mf_status *st)
{
    while (n && is_space(*s)) { s++; n--; }
    while (n && is_space(s[n - 1])) n--;
    bool neg = false;
    size_t i = 0;
    if (i < n && (s[i] == '+' || s[i] == '-'))
        neg = s[i++] == '-';
    unsigned base = 10;
    bool prefixed = false;
    if (base0 && i + 1 < n && s[i] == '0' && strchr("xXoObB", s[i + 1])) {
        base = strchr("xX", s[i + 1]) ? 16 : strchr("oO", s[i + 1]) ? 8 : 2;
        i += 2;
        prefixed = true;
    }
    uint64_t v = 0;
    bool overflow = false, any = false, prev_us = !prefixed; /* 0x_1f is 31 */
    char *digits = mf_arena_alloc(pm->a, n + 2);
    if (!digits) {
        pk_oom(pm, st);
        return NULL;
    }
    size_t nd = 0;
    for (; i < n; i++) {
        char c = s[i];
        if (c == '_' && !prev_us) {
            prev_us = true;
            continue;
        }
        unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0')
                     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                     : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10) : 99;
        if (d >= base) {
            pk_fail(pm, pm->op_off, st, "%s: \"%.*s\" is not an integer", op, (int)(n > 60 ? 60 : n), s);
            return NULL;
        }
        prev_us = false;
        any = true;
        if (nd || d || base != 10)
            digits[nd++] = c;
        if (mf_mul_ovf(v, base, &v) || mf_add_ovf(v, d, &v))
            overflow = true;
    }
    if (!any || prev_us) {
        pk_fail(pm, pm->op_off, st, "%s: \"%.*s\" is not an integer", op, (int)(n > 60 ? 60 : n), s);
        return NULL;
    }
    if (!overflow && v <= (uint64_t)INT64_MAX + neg) {
        pk_obj *o = pk_make(pm, PK_INT, st);
        if (o)
            o->u.i = neg ? (int64_t)(0 - v) : (int64_t)v;
        return o;
    }
    pk_obj *o = pk_make(pm, PK_BIGINT, st);
    if (!o)
        return NULL;
    /* decimal keeps its digits; other bases keep their prefix */
    char *t = mf_arena_alloc(pm->a, nd + 4);
    if (!t) {
        pk_oom(pm, st);
        return NULL;
    }
    size_t k = 0;
    if (neg)
        t[k++] = '-';
    if (base != 10) {
        t[k++] = '0';
        t[k++] = base == 16 ? 'x' : base == 8 ? 'o' : 'b';
    }
    memcpy(t + k, digits, nd);
    k += nd;
    t[k] = 0;
    o->u.s.p = t;
    o->u.s.n = k;
    return o;
}

static pk_obj *float_from_text(pk_machine *pm, const char *s, size_t n, mf_status *st)
{
    char buf[512];
    if (n >= sizeof(buf)) {
        pk_fail_unsure(pm, pm->op_off, st, "FLOAT: argument of %zu bytes is too long", n);
        return NULL;
    }
    memcpy(buf, s, n);
    buf[n] = 0;
    char *end;
    errno = 0;
    double f = strtod(buf, &end);
    while (*end && (is_space(*end)))
        end++;
    if (end == buf || *end) {
        pk_fail(pm, pm->op_off, st, "FLOAT: \"%s\" is not a number", buf);
        return NULL;
    }
    pk_obj *o = pk_make(pm, PK_FLOAT, st);
    if (o)
        o->u.f = f;
    return o;
}

/* STRING: a quoted Python 2 repr, decoded as codecs.escape_decode does. */
static pk_obj *string_from_repr(pk_machine *pm, const char *s, size_t n, mf_status *st)
{
    if (n < 2 || s[0] != s[n - 1] || (s[0] != '\'' && s[0] != '"')) {
        pk_fail(pm, pm->op_off, st, "STRING: the argument must be quoted");
        return NULL;
    }
    s++;
    n -= 2;
    char *out = mf_arena_alloc(pm->a, n + 1);
    if (!out) {
        pk_oom(pm, st);
        return NULL;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '\\' || i + 1 == n) {
            out[k++] = s[i];
            continue;
        }
        char c = s[++i];
        switch (c) {
        case '\n': break;
        case '\\': case '\'': case '"': out[k++] = c; break;
        case 'a': out[k++] = '\a'; break;
        case 'b': out[k++] = '\b'; break;
        case 'f': out[k++] = '\f'; break;
        case 'n': out[k++] = '\n'; break;
        case 'r': out[k++] = '\r'; break;
        case 't': out[k++] = '\t'; break;
        case 'v': out[k++] = '\v'; break;
        case 'x': {
            int h1 = i + 1 < n ? hexval(s[i + 1]) : -1, h2 = i + 2 < n ? hexval(s[i + 2]) : -1;
            if (h1 < 0 || h2 < 0) {
                pk_fail(pm, pm->op_off, st, "STRING: invalid \\x escape");
                return NULL;
            }
            out[k++] = (char)(h1 * 16 + h2);
            i += 2;
            break;
        }
        default:
            if (c >= '0' && c <= '7') {
                int v = c - '0';
                for (int d = 0; d < 2 && i + 1 < n && s[i + 1] >= '0' && s[i + 1] <= '7'; d++)
                    v = v * 8 + (s[++i] - '0');
                out[k++] = (char)(v & 0xff);
            } else {
                out[k++] = '\\';
                out[k++] = c;
            }
        }
    }
    out[k] = 0;
    pk_obj *o = pk_make(pm, PK_STR, st);
    if (o) {
        o->u.s.p = out;
        o->u.s.n = k;
    }
    return o;
}

/* UNICODE: raw-unicode-escape (\uXXXX, \UXXXXXXXX; other bytes Latin-1). */
static pk_obj *unicode_from_raw(pk_machine *pm, const char *s, size_t n, mf_status *st)
{
    char *out = mf_arena_alloc(pm->a, n * 4 + 1);
    if (!out) {
        pk_oom(pm, st);
        return NULL;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int digits = 0;
        if (s[i] == '\\' && i + 1 < n && (s[i + 1] == 'u' || s[i + 1] == 'U'))
            digits = s[i + 1] == 'u' ? 4 : 8;
        if (!digits) {
            k += mf_utf8_put((uint8_t *)out + k, (uint8_t)s[i]);
            continue;
        }
        uint32_t cp = 0;
        if (i + 2 + (size_t)digits > n) {
            pk_fail_unproven(pm, pm->op_off, st, "UNICODE: truncated \\%c escape", s[i + 1]);
            return NULL;
        }
        for (int d = 0; d < digits; d++) {
            int h = hexval(s[i + 2 + (size_t)d]);
            if (h < 0) {
                pk_fail_unproven(pm, pm->op_off, st, "UNICODE: invalid \\%c escape", s[i + 1]);
                return NULL;
            }
            cp = cp * 16 + (uint32_t)h;
        }
        if (cp > 0x10ffff) {
            pk_fail_unproven(pm, pm->op_off, st, "UNICODE: \\U%08x is not a code point", cp);
            return NULL;
        }
        k += mf_utf8_put((uint8_t *)out + k, cp);
        i += 1 + (size_t)digits;
    }
    out[k] = 0;
    pk_obj *o = pk_make(pm, PK_STR, st);
    if (o) {
        o->u.s.p = out;
        o->u.s.n = k;
    }
    return o;
}

/* -------------------------------------------------------------- opcodes */

static pk_obj *raw_obj(pk_machine *pm, pk_kind k, const uint8_t *p, size_t n, mf_status *st)
{
    pk_obj *o = pk_make(pm, k, st);
    if (o) {
        o->u.s.p = (const char *)p;
        o->u.s.n = n;
    }
    return o;
}

/* Python's UTF-8 decoding with "surrogatepass", as load_binunicode reads
 * its argument: -1 when valid, else the offset of the first bad byte. */
static int64_t utf8_surrogatepass_check(const uint8_t *p, size_t n)
{
    size_t i = 0;
    for (;;) {
        int64_t bad = mf_utf8_check(p + i, n - i);
        if (bad < 0)
            return -1;
        size_t b = i + (size_t)bad;
        if (n - b >= 3 && p[b] == 0xed && (p[b + 1] & 0xe0) == 0xa0 && (p[b + 2] & 0xc0) == 0x80) {
            i = b + 3; /* an encoded surrogate: pickle writes them so */
            continue;
        }
        return (int64_t)b;
    }
}

static int op_counted_bytes(pk_machine *pm, pk_kind k, size_t lenbytes, bool is_signed,
                            const char *op, mf_status *st)
{
    uint64_t len;
    if (rd_uint(pm, lenbytes, &len, op, st))
        return -1;
    if (is_signed && (len & 0x80000000u))
        return pk_fail(pm, pm->op_off, st, "%s: negative byte count", op);
    if (need(pm, len, op, st))
        return -1;
    const uint8_t *p = pm->d + pm->pos;
    if (k == PK_STR && strstr(op, "UNICODE")) {
        int64_t bad = utf8_surrogatepass_check(p, (size_t)len);
        if (bad >= 0) /* CPython's decoder refuses it: the load fails there */
            return pk_fail(pm, pm->op_off, st, "%s: invalid UTF-8 at byte %lld of its text", op,
                           (long long)bad);
    }
    pm->pos += (size_t)len;
    return push(pm, raw_obj(pm, k, p, (size_t)len, st), st);
}

static int op_int_binary(pk_machine *pm, size_t k, bool is_signed, const char *op, mf_status *st)
{
    uint64_t v;
    if (rd_uint(pm, k, &v, op, st))
        return -1;
    pk_obj *o = pk_make(pm, PK_INT, st);
    if (!o)
        return -1;
    o->u.i = is_signed ? (int64_t)(int32_t)(uint32_t)v : (int64_t)v;
    return push(pm, o, st);
}

static int op_long_binary(pk_machine *pm, size_t k, const char *op, mf_status *st)
{
    uint64_t len;
    if (rd_uint(pm, k, &len, op, st))
        return -1;
    if (k == 4 && (len & 0x80000000u))
        return pk_fail(pm, pm->op_off, st, "%s: negative byte count", op);
    const uint8_t *p;
    if (rd(pm, (size_t)len, &p, op, st))
        return -1;
    return push(pm, pk_long_from_bytes(pm, p, (size_t)len, st), st);
}

static int op_text_number(pk_machine *pm, uint8_t op, const char *name, mf_status *st)
{
    const char *s;
    size_t n;
    if (rd_line(pm, &s, &n, name, st))
        return -1;
    bool is_bool = op == 'I' && n == 2 && s[0] == '0' && (s[1] == '0' || s[1] == '1');
    bool long_l = op == 'L' && n && s[n - 1] == 'L';
    bool canon = op == 'F' ? canon_float(s, n)
                 : op == 'L' ? long_l && canon_decimal(s, n - 1, true)
                             : is_bool || canon_decimal(s, n, true);
    pk_obj *v;
    if (is_bool) {
        v = s[1] == '1' ? &pk_true : &pk_false; /* protocol 0 bools */
    } else if (op == 'I' && n && s[0] == 0) {
        /* strtol converts nothing and leaves its end at the NUL, which
         * load_int takes for the end of the text: 0 */
        v = pk_make(pm, PK_INT, st);
        if (!v)
            return -1;
        v->u.i = 0;
    } else {
        /* load_long drops the 'L' before the text is parsed; C's parsers
         * read up to a NUL. A text they refuse there is refused here too
         * (mfmt's parsers take a superset of theirs), so the failure is
         * CPython's */
        size_t k = c_text_len(s, long_l ? n - 1 : n);
        v = op == 'F' ? float_from_text(pm, s, k, st) : int_from_text(pm, s, k, true, name, st);
        if (!v)
            return -1;
    }
    check_text(pm, name, s, n, canon);
    return push(pm, v, st);
}

static int op_global_text(pk_machine *pm, uint8_t op, mf_status *st)
{
    const char *name_op = op == 'c' ? "GLOBAL" : "INST";
    const char *mod, *name;
    size_t ml, nl;
    if (rd_line(pm, &mod, &ml, name_op, st) || rd_line(pm, &name, &nl, name_op, st))
        return -1;
    check_text(pm, name_op, mod, ml, canon_name(mod, ml));
    check_text(pm, name_op, name, nl, canon_name(name, nl));
    pk_obj *g = pk_global_ref(pm, mod, ml, name, nl, name_op, st);
    if (!g)
        return -1;
    if (op == 'c')
        return push(pm, g, st);
    pk_obj **items;
    size_t n;
    if (pop_mark(pm, &items, &n, name_op, st))
        return -1;
    pk_obj *args = pk_seq(pm, PK_TUPLE, items, n, st);
    return args ? push(pm, pk_call(pm, g, args, NULL, st), st) : -1;
}

static int op_stack_global(pk_machine *pm, mf_status *st)
{
    pk_obj *name = pop(pm, "STACK_GLOBAL", st);
    pk_obj *mod = name ? pop(pm, "STACK_GLOBAL", st) : NULL;
    if (!mod)
        return -1;
    if (mod->kind != PK_STR || name->kind != PK_STR)
        return pk_fail(pm, pm->op_off, st, "STACK_GLOBAL requires two strings");
    pk_obj *g = pk_global_ref(pm, mod->u.s.p, mod->u.s.n, name->u.s.p, name->u.s.n,
                              "STACK_GLOBAL", st);
    return push(pm, g, st);
}

/* EXT1/2/4: a name from copyreg's extension registry, which the file
 * cannot show; reported as such. */
static int op_ext(pk_machine *pm, size_t k, const char *op, mf_status *st)
{
    uint64_t code;
    if (rd_uint(pm, k, &code, op, st))
        return -1;
    if (code == 0)
        return pk_fail(pm, pm->op_off, st, "%s specifies code 0", op);
    char name[32];
    int nl = snprintf(name, sizeof(name), "%llu", (unsigned long long)code);
    pk_obj *g = pk_global_ref(pm, "copyreg._extension_registry", 27, name, (size_t)nl, op, st);
    return push(pm, g, st);
}

static int op_persistent(pk_machine *pm, pk_obj *pid, mf_status *st)
{
    if (!pid)
        return -1;
    pm->named = true; /* the loader's persistent_load is called */
    if (pm->pload)
        return push(pm, pm->pload(pm->pctx, pm, pid, pm->op_off, st), st);
    pk_obj *o = pk_make(pm, PK_OBJECT, st);
    if (!o)
        return -1;
    o->u.o.args = pid;
    o->u.o.persistent = true;
    return push(pm, o, st);
}

static int op_persid_text(pk_machine *pm, mf_status *st)
{
    const char *s;
    size_t n;
    if (rd_line(pm, &s, &n, "PERSID", st))
        return -1;
    check_text(pm, "PERSID", s, n, canon_name(s, n));
    return op_persistent(pm, raw_obj(pm, PK_STR, (const uint8_t *)s, n, st), st);
}

static int op_mark_collection(pk_machine *pm, pk_kind k, const char *op, mf_status *st)
{
    pk_obj **items;
    size_t n;
    if (pop_mark(pm, &items, &n, op, st))
        return -1;
    if (k == PK_DICT) {
        if (n % 2)
            return pk_fail(pm, pm->op_off, st, "DICT: odd number of items");
        pk_obj *d = pk_make(pm, PK_DICT, st);
        if (!d)
            return -1;
        for (size_t i = 0; i < n; i += 2)
            if (pk_dict_set(pm, d, items[i], items[i + 1], st))
                return -1;
        return push(pm, d, st);
    }
    if (k == PK_FROZENSET) {
        pk_obj *s = pk_make(pm, PK_FROZENSET, st);
        if (!s)
            return -1;
        for (size_t i = 0; i < n; i++)
            if (pk_set_add(pm, s, items[i], st))
                return -1;
        return push(pm, s, st);
    }
    return push(pm, pk_seq(pm, k, items, n, st), st);
}

static int op_tuple_n(pk_machine *pm, size_t n, const char *op, mf_status *st)
{
    if (pm->sn - fence(pm) < n)
        return pk_fail(pm, pm->op_off, st, "%s: stack underflow", op);
    pm->sn -= n;
    return push(pm, pk_seq(pm, PK_TUPLE, pm->stk + pm->sn, n, st), st);
}

/* The object a mutating opcode works on; a global there is a finding. */
static pk_obj *target(pk_machine *pm, const char *op, mf_status *st)
{
    pk_obj *t = top(pm, op, st);
    if (t && t->kind == PK_GLOBAL)
        pk_report_mutation(pm, t, op);
    return t;
}

static pk_obj *object_part(pk_machine *pm, pk_obj *o, bool dict, mf_status *st)
{
    pk_obj **slot = dict ? &o->u.o.dict : &o->u.o.list;
    if (!*slot)
        *slot = pk_make(pm, dict ? PK_DICT : PK_LIST, st);
    return *slot;
}

/* Values of Python's own types whose methods are known: a mutating opcode
 * on them fails in CPython exactly when it fails here. Everything else
 * (instances, arrays, tensors, bytearrays...) may define __setitem__,
 * append, extend, add or __setstate__: the opcode is then taken as done,
 * so the rest of the stream is still read (CPython's load_append,
 * load_setitems, load_additems and load_build call those methods). */
static bool is_plain_builtin(const pk_obj *t)
{
    switch (t->kind) {
    case PK_NONE: case PK_BOOL: case PK_INT: case PK_BIGINT: case PK_FLOAT: case PK_STR:
    case PK_TUPLE: case PK_LIST: case PK_DICT: case PK_SET: case PK_FROZENSET:
        return true;
    default:
        return false;
    }
}

static const char *kind_name(const pk_obj *t)
{
    switch (t->kind) {
    case PK_NONE: return "None";
    case PK_BOOL: return "a bool";
    case PK_INT: case PK_BIGINT: return "an int";
    case PK_FLOAT: return "a float";
    case PK_STR: return "a str";
    case PK_TUPLE: return "a tuple";
    case PK_LIST: return "a list";
    case PK_DICT: return "a dict";
    case PK_SET: return "a set";
    case PK_FROZENSET: return "a frozenset";
    case PK_BYTES: return "bytes or a bytearray";
    case PK_TENSOR: return "a tensor";
    case PK_STORAGE: return "a storage";
    case PK_NDARRAY: return "a numpy array";
    case PK_NPDTYPE: return "a numpy dtype";
    default: return "a value";
    }
}

/* A mutating opcode on a value whose method mfmt does not model: taken as
 * done (the stream goes on, so later names are seen), and irregular. */
static int not_modelled(pk_machine *pm, const char *op, const pk_obj *t)
{
    if (t->kind != PK_GLOBAL) /* a global mutated is already dangerous */
        pk_note_irregular(pm, pm->op_off,
                          "%s at byte %llu on %s, whose method mfmt does not model: taken as "
                          "done, not vouched for", op,
                          (unsigned long long)(pm->base + pm->o.origin + pm->op_off), kind_name(t));
    return 0;
}

static int append_items(pk_machine *pm, pk_obj *t, pk_obj **items, size_t n, const char *op,
                        mf_status *st)
{
    if (t->kind == PK_OBJECT) {
        t = object_part(pm, t, false, st);
        if (!t)
            return -1;
    } else if (t->kind != PK_LIST) {
        if (!is_plain_builtin(t))
            return not_modelled(pm, op, t); /* extend/append of an array, tensor, global */
        return pk_fail(pm, pm->op_off, st, "%s to %s, which has no append or extend", op,
                       kind_name(t));
    }
    for (size_t i = 0; i < n; i++)
        if (pk_append(pm, t, items[i], st))
            return -1;
    return 0;
}

/* list[i] = v, as PyObject_SetItem on a list: an int index in range. */
static int set_list_item(pk_machine *pm, pk_obj *t, const pk_obj *key, pk_obj *v, const char *op,
                         mf_status *st)
{
    int64_t i;
    if (!pk_as_int(key, &i) && !is_plain_builtin(key)) {
        /* an int subclass, a slice or an __index__ built by a call:
         * CPython may assign; mfmt cannot tell what */
        pk_note_irregular(pm, pm->op_off,
                          "%s at byte %llu on a list with a key built by a call (an index or a "
                          "slice mfmt cannot evaluate): taken as done, not vouched for", op,
                          (unsigned long long)(pm->base + pm->o.origin + pm->op_off));
        return 0;
    }
    if (!pk_as_int(key, &i))
        return pk_fail(pm, pm->op_off, st, "%s on a list with a key that is not an int", op);
    int64_t n = (int64_t)t->u.c.n;
    if (i < 0)
        i += n;
    if (i < 0 || i >= n)
        return pk_fail(pm, pm->op_off, st, "%s: list index out of range", op);
    t->u.c.v[i] = v;
    return 0;
}

static int set_items(pk_machine *pm, pk_obj *t, pk_obj **items, size_t n, const char *op,
                     mf_status *st)
{
    if (n % 2)
        return pk_fail(pm, pm->op_off, st, "%s: odd number of items", op);
    if (t->kind == PK_LIST) {
        for (size_t i = 0; i < n; i += 2)
            if (set_list_item(pm, t, items[i], items[i + 1], op, st))
                return -1;
        return 0;
    }
    if (t->kind == PK_OBJECT) {
        t = object_part(pm, t, true, st);
        if (!t)
            return -1;
    } else if (t->kind != PK_DICT) {
        if (!is_plain_builtin(t))
            return not_modelled(pm, op, t); /* __setitem__ of an array, tensor, global */
        return pk_fail(pm, pm->op_off, st, "%s on %s, which does not support item assignment",
                       op, kind_name(t));
    }
    for (size_t i = 0; i < n; i += 2)
        if (pk_dict_set(pm, t, items[i], items[i + 1], st))
            return -1;
    return 0;
}

static int op_append(pk_machine *pm, mf_status *st)
{
    pk_obj *v = pop(pm, "APPEND", st);
    pk_obj *t = v ? target(pm, "APPEND", st) : NULL;
    return t ? append_items(pm, t, &v, 1, "APPEND", st) : -1;
}

static int op_appends(pk_machine *pm, mf_status *st)
{
    pk_obj **items;
    size_t n;
    if (pop_mark(pm, &items, &n, "APPENDS", st))
        return -1;
    pk_obj *t = target(pm, "APPENDS", st);
    return t ? append_items(pm, t, items, n, "APPENDS", st) : -1;
}

static int op_setitem(pk_machine *pm, mf_status *st)
{
    pk_obj *kv[2];
    kv[1] = pop(pm, "SETITEM", st);
    kv[0] = kv[1] ? pop(pm, "SETITEM", st) : NULL;
    pk_obj *t = kv[0] ? target(pm, "SETITEM", st) : NULL;
    return t ? set_items(pm, t, kv, 2, "SETITEM", st) : -1;
}

static int op_setitems(pk_machine *pm, mf_status *st)
{
    pk_obj **items;
    size_t n;
    if (pop_mark(pm, &items, &n, "SETITEMS", st))
        return -1;
    pk_obj *t = target(pm, "SETITEMS", st);
    return t ? set_items(pm, t, items, n, "SETITEMS", st) : -1;
}

static int op_additems(pk_machine *pm, mf_status *st)
{
    pk_obj **items;
    size_t n;
    if (pop_mark(pm, &items, &n, "ADDITEMS", st))
        return -1;
    pk_obj *t = target(pm, "ADDITEMS", st);
    if (!t)
        return -1;
    if (t->kind == PK_OBJECT)
        return append_items(pm, t, items, n, "ADDITEMS", st);
    if (t->kind != PK_SET) {
        if (!is_plain_builtin(t))
            return not_modelled(pm, "ADDITEMS", t); /* add() of an array or global */
        return pk_fail(pm, pm->op_off, st, "ADDITEMS to %s, which has no add", kind_name(t));
    }
    for (size_t i = 0; i < n; i++)
        if (pk_set_add(pm, t, items[i], st))
            return -1;
    return 0;
}

/* CPython calls with an argument tuple (PyObject_Call: "argument list
 * must be a tuple"; load_newobj: "expected an arg tuple"; NEWOBJ_EX's
 * kwargs a dict) and a callable: a value of Python's own types of another
 * kind fails there as in CPython; a value built by a call may be a tuple
 * subclass, or not: irregular. */
static int check_call_args(pk_machine *pm, const pk_obj *fn, const pk_obj *args,
                           const pk_obj *kwargs, const char *op, mf_status *st)
{
    /* a value of Python's own types is not callable (nor a class) */
    if (is_plain_builtin(fn))
        return pk_fail(pm, pm->op_off, st, "%s: %s is not callable", op, kind_name(fn));
    if (!args)
        return 0;
    const pk_obj *bad = args->kind != PK_TUPLE ? args
                        : kwargs && kwargs->kind != PK_DICT ? kwargs : NULL;
    if (!bad)
        return 0;
    if (is_plain_builtin(bad))
        return pk_fail(pm, pm->op_off, st, "%s: the %s is %s", op,
                       bad == args ? "argument list must be a tuple and" : "keyword arguments",
                       kind_name(bad));
    pk_note_irregular(pm, pm->op_off,
                      "%s at byte %llu: its %s is a value built by a call, not as pickle.dump "
                      "writes it", op, (unsigned long long)(pm->base + pm->o.origin + pm->op_off),
                      bad == args ? "argument tuple" : "keyword dict");
    return 0;
}

static int op_reduce(pk_machine *pm, mf_status *st)
{
    pk_obj *args = pop(pm, "REDUCE", st);
    pk_obj *fn = args ? pop(pm, "REDUCE", st) : NULL;
    if (!fn || check_call_args(pm, fn, args, NULL, "REDUCE", st))
        return -1;
    return push(pm, pk_call(pm, fn, args, NULL, st), st);
}

static int op_newobj(pk_machine *pm, bool ex, mf_status *st)
{
    const char *op = ex ? "NEWOBJ_EX" : "NEWOBJ";
    pk_obj *kwargs = ex ? pop(pm, op, st) : NULL;
    if (ex && !kwargs)
        return -1;
    pk_obj *args = pop(pm, op, st);
    pk_obj *cls = args ? pop(pm, op, st) : NULL;
    if (!cls || check_call_args(pm, cls, args, kwargs, op, st))
        return -1;
    pm->call_newobj = !ex; /* cls.__new__(cls, *args): a gated record's shape */
    return push(pm, pk_call(pm, cls, args, kwargs, st), st);
}

static int op_obj(pk_machine *pm, mf_status *st)
{
    pk_obj **items;
    size_t n;
    if (pop_mark(pm, &items, &n, "OBJ", st))
        return -1;
    if (n == 0)
        return pk_fail(pm, pm->op_off, st, "OBJ: no class after the mark");
    if (check_call_args(pm, items[0], NULL, NULL, "OBJ", st))
        return -1;
    pk_obj *args = pk_seq(pm, PK_TUPLE, items + 1, n - 1, st);
    return args ? push(pm, pk_call(pm, items[0], args, NULL, st), st) : -1;
}

static int op_build(pk_machine *pm, mf_status *st)
{
    pk_obj *state = pop(pm, "BUILD", st);
    pk_obj *inst = state ? target(pm, "BUILD", st) : NULL;
    if (!inst || pk_build(pm, inst, state, st))
        return -1;
    uint64_t skip = 0;
    if (pm->o.on_build && pm->o.on_build(pm->o.ctx, pm, inst, pm->d, pm->pos, pm->n, &skip, st))
        return -1;
    if (skip > pm->n - pm->pos)
        return pk_fail(pm, pm->op_off, st, "BUILD: the loader reads %llu bytes after it, %llu are left",
                       (unsigned long long)skip, (unsigned long long)(pm->n - pm->pos));
    if (skip && pm->frame_end) {
        /* The loader reads those bytes from its file, whose position a
         * framed unpickler has already moved to the frame's end: joblib's
         * writer ends the frame right at this BUILD (commit_frame before
         * write_array), so the bytes are the same only then. */
        if (pm->pos != pm->frame_end)
            pk_note_irregular(pm, pm->op_off,
                              "BUILD at byte %llu is followed by bytes its loader reads from the "
                              "file, inside the FRAME at byte %llu (ends at byte %llu): not as "
                              "joblib writes it",
                              (unsigned long long)(pm->base + pm->o.origin + pm->op_off),
                              (unsigned long long)(pm->base + pm->o.origin + pm->frame_at),
                              (unsigned long long)(pm->base + pm->o.origin + pm->frame_end));
        pm->frame_end = 0; /* the frame is done where the loader's reads begin */
    }
    pm->pos += (size_t)skip;
    return 0;
}

static int op_pop(pk_machine *pm, mf_status *st)
{
    /* an empty stack above the last mark pops the mark (load_pop) */
    if (pm->sn == fence(pm) && pm->mn) {
        pm->mn--;
        return 0;
    }
    return pop(pm, "POP", st) ? 0 : -1;
}

static int op_mark(pk_machine *pm, mf_status *st)
{
    if (pm->mn == pm->mcap) {
        if (pm->mn >= CAP_STACK)
            return pk_fail_unsure(pm, pm->op_off, st, "more than %u marks: refused", CAP_STACK);
        if (mf_vec_grow((void **)&pm->marks, &pm->mcap, pm->mn + 1, sizeof(*pm->marks)))
            return pk_oom(pm, st);
    }
    pm->marks[pm->mn++] = pm->sn;
    return 0;
}

static int op_memo_text(pk_machine *pm, bool put, mf_status *st)
{
    const char *name = put ? "PUT" : "GET";
    const char *s;
    size_t n;
    if (rd_line(pm, &s, &n, name, st))
        return -1;
    pk_obj *k = int_from_text(pm, s, c_text_len(s, n), false, name, st);
    if (!k)
        return -1;
    check_text(pm, name, s, n, canon_decimal(s, n, false));
    if (k->kind != PK_INT)
        return pk_fail(pm, pm->op_off, st, "%s: index out of range", name);
    if (put && k->u.i < 0)
        return pk_fail(pm, pm->op_off, st, "PUT: negative index");
    return put ? memo_put_top(pm, k->u.i, name, st) : memo_get(pm, k->u.i, name, st);
}

static int op_memo_bin(pk_machine *pm, size_t k, bool put, const char *name, mf_status *st)
{
    uint64_t idx;
    if (rd_uint(pm, k, &idx, name, st))
        return -1;
    return put ? memo_put_top(pm, (int64_t)idx, name, st) : memo_get(pm, (int64_t)idx, name, st);
}

/* FRAME: CPython's C unpickler reading a file object loads the frame into
 * its buffer (peek or read(n), by size and file object); an argument that
 * runs past the frame's end is then read from after the frame, and a STOP
 * inside it leaves the file after the frame. Only frames as pickle.dump
 * writes them read the same in every mode: whole opcodes, not nested, a
 * STOP ending its frame, protocol 4 and up (checked here, in step's STOP
 * and after each opcode in pk_load). */
static int op_frame(pk_machine *pm, mf_status *st)
{
    uint64_t len;
    if (rd_uint(pm, 8, &len, "FRAME", st))
        return -1;
    if (len > pm->n - pm->pos)
        return pk_fail(pm, pm->op_off, st, "FRAME of %llu bytes runs past the data (%llu left)",
                       (unsigned long long)len, (unsigned long long)(pm->n - pm->pos));
    if (pm->frame_end && pm->op_off < pm->frame_end)
        pk_note_irregular(pm, pm->op_off,
                          "FRAME at byte %llu inside the FRAME at byte %llu (nested frames): not "
                          "as pickle.dump writes it",
                          (unsigned long long)(pm->base + pm->o.origin + pm->op_off),
                          (unsigned long long)(pm->base + pm->o.origin + pm->frame_at));
    else if (pm->proto < 4)
        pk_note_irregular(pm, pm->op_off,
                          "FRAME at byte %llu in a protocol %d pickle (frames are protocol 4): "
                          "not as pickle.dump writes it",
                          (unsigned long long)(pm->base + pm->o.origin + pm->op_off), pm->proto);
    pm->frame_at = pm->op_off;
    pm->frame_end = pm->pos + len;
    return 0;
}

/* After each opcode: one that started inside the open frame must end in it. */
static void check_frame_end(pk_machine *pm)
{
    if (!pm->frame_end)
        return;
    if (pm->op_off < pm->frame_end && pm->pos > pm->frame_end) {
        pk_note_irregular(pm, pm->op_off,
                          "FRAME at byte %llu ends at byte %llu, inside the argument of the "
                          "opcode at byte %llu: not as pickle.dump writes it",
                          (unsigned long long)(pm->base + pm->o.origin + pm->frame_at),
                          (unsigned long long)(pm->base + pm->o.origin + pm->frame_end),
                          (unsigned long long)(pm->base + pm->o.origin + pm->op_off));
        pm->frame_end = 0;
    } else if (pm->pos >= pm->frame_end) {
        pm->frame_end = 0; /* the frame is done */
    }
}

static int op_stop(pk_machine *pm, pk_obj **out, mf_status *st)
{
    if (pm->frame_end && pm->pos != pm->frame_end)
        pk_note_irregular(pm, pm->op_off,
                          "STOP at byte %llu inside the FRAME at byte %llu, which ends at byte "
                          "%llu (a loader reading a file goes on after the frame): not as "
                          "pickle.dump writes it",
                          (unsigned long long)(pm->base + pm->o.origin + pm->op_off),
                          (unsigned long long)(pm->base + pm->o.origin + pm->frame_at),
                          (unsigned long long)(pm->base + pm->o.origin + pm->frame_end));
    *out = pop(pm, "STOP", st);
    return *out ? 1 : -1;
}

static int op_proto(pk_machine *pm, mf_status *st)
{
    const uint8_t *p;
    if (rd(pm, 1, &p, "PROTO", st))
        return -1;
    if (*p > 5)
        return pk_fail(pm, pm->op_off, st, "unsupported pickle protocol %u", *p);
    pm->proto = *p;
    return 0;
}

static int op_float_bin(pk_machine *pm, mf_status *st)
{
    const uint8_t *p;
    if (rd(pm, 8, &p, "BINFLOAT", st))
        return -1;
    uint64_t b = mf_rd64be(p);
    pk_obj *o = pk_make(pm, PK_FLOAT, st);
    if (!o)
        return -1;
    memcpy(&o->u.f, &b, 8);
    return push(pm, o, st);
}

static int op_text_string(pk_machine *pm, uint8_t op, mf_status *st)
{
    const char *name = op == 'S' ? "STRING" : "UNICODE";
    const char *s;
    size_t n;
    if (rd_line(pm, &s, &n, name, st) || pk_charge(pm, n, st))
        return -1;
    check_text(pm, name, s, n, op == 'S' ? canon_string(s, n) : canon_unicode(s, n));
    return push(pm, op == 'S' ? string_from_repr(pm, s, n, st) : unicode_from_raw(pm, s, n, st),
                st);
}

/* One opcode at pm->pos. Returns 1 after STOP (value in *out), 0 to go on,
 * -1 on error. */
static int step(pk_machine *pm, pk_obj **out, mf_status *st)
{
    pm->op_off = pm->pos;
    uint8_t op = pm->d[pm->pos++];
    switch (op) {
    case '(': return op_mark(pm, st);
    case '.': return op_stop(pm, out, st);
    case '0': return op_pop(pm, st);
    case '1': {
        pk_obj **items;
        size_t n;
        return pop_mark(pm, &items, &n, "POP_MARK", st);
    }
    case '2': {
        pk_obj *t = top(pm, "DUP", st);
        return t ? push(pm, t, st) : -1;
    }
    case 'F': case 'I': case 'L': return op_text_number(pm, op, op == 'F' ? "FLOAT" : op == 'I' ? "INT" : "LONG", st);
    case 'J': return op_int_binary(pm, 4, true, "BININT", st);
    case 'K': return op_int_binary(pm, 1, false, "BININT1", st);
    case 'M': return op_int_binary(pm, 2, false, "BININT2", st);
    case 'N': return push(pm, &pk_none, st);
    case 'P': return op_persid_text(pm, st);
    case 'Q': return op_persistent(pm, pop(pm, "BINPERSID", st), st);
    case 'R': return op_reduce(pm, st);
    case 'S': case 'V': return op_text_string(pm, op, st);
    case 'T': return op_counted_bytes(pm, PK_STR, 4, true, "BINSTRING", st);
    case 'U': return op_counted_bytes(pm, PK_STR, 1, false, "SHORT_BINSTRING", st);
    case 'X': return op_counted_bytes(pm, PK_STR, 4, false, "BINUNICODE", st);
    case 0x8c: return op_counted_bytes(pm, PK_STR, 1, false, "SHORT_BINUNICODE", st);
    case 0x8d: return op_counted_bytes(pm, PK_STR, 8, false, "BINUNICODE8", st);
    case 'B': return op_counted_bytes(pm, PK_BYTES, 4, false, "BINBYTES", st);
    case 'C': return op_counted_bytes(pm, PK_BYTES, 1, false, "SHORT_BINBYTES", st);
    case 0x8e: return op_counted_bytes(pm, PK_BYTES, 8, false, "BINBYTES8", st);
    case 0x96: return op_counted_bytes(pm, PK_BYTES, 8, false, "BYTEARRAY8", st);
    case 'a': return op_append(pm, st);
    case 'b': return op_build(pm, st);
    case 'c': case 'i': return op_global_text(pm, op, st);
    case 'd': return op_mark_collection(pm, PK_DICT, "DICT", st);
    case '}': return push(pm, pk_make(pm, PK_DICT, st), st);
    case 'e': return op_appends(pm, st);
    case 'g': return op_memo_text(pm, false, st);
    case 'h': return op_memo_bin(pm, 1, false, "BINGET", st);
    case 'j': return op_memo_bin(pm, 4, false, "LONG_BINGET", st);
    case 'l': return op_mark_collection(pm, PK_LIST, "LIST", st);
    case ']': return push(pm, pk_make(pm, PK_LIST, st), st);
    case 'o': return op_obj(pm, st);
    case 'p': return op_memo_text(pm, true, st);
    case 'q': return op_memo_bin(pm, 1, true, "BINPUT", st);
    case 'r': return op_memo_bin(pm, 4, true, "LONG_BINPUT", st);
    case 's': return op_setitem(pm, st);
    case 't': return op_mark_collection(pm, PK_TUPLE, "TUPLE", st);
    case ')': return push(pm, pk_seq(pm, PK_TUPLE, NULL, 0, st), st);
    case 'u': return op_setitems(pm, st);
    case 'G': return op_float_bin(pm, st);
    case 0x80: return op_proto(pm, st);
    case 0x81: return op_newobj(pm, false, st);
    case 0x82: return op_ext(pm, 1, "EXT1", st);
    case 0x83: return op_ext(pm, 2, "EXT2", st);
    case 0x84: return op_ext(pm, 4, "EXT4", st);
    case 0x85: return op_tuple_n(pm, 1, "TUPLE1", st);
    case 0x86: return op_tuple_n(pm, 2, "TUPLE2", st);
    case 0x87: return op_tuple_n(pm, 3, "TUPLE3", st);
    case 0x88: return push(pm, &pk_true, st);
    case 0x89: return push(pm, &pk_false, st);
    case 0x8a: return op_long_binary(pm, 1, "LONG1", st);
    case 0x8b: return op_long_binary(pm, 4, "LONG4", st);
    case 0x8f: return push(pm, pk_make(pm, PK_SET, st), st);
    case 0x90: return op_additems(pm, st);
    case 0x91: return op_mark_collection(pm, PK_FROZENSET, "FROZENSET", st);
    case 0x92: return op_newobj(pm, true, st);
    case 0x93: return op_stack_global(pm, st);
    case 0x94: return memo_put_top(pm, (int64_t)pm->memo_n, "MEMOIZE", st);
    case 0x95: return op_frame(pm, st);
    case 0x97:
        return pk_fail(pm, pm->op_off, st,
                       "NEXT_BUFFER: out-of-band data, which no model loader provides");
    case 0x98:
        if (!top(pm, "READONLY_BUFFER", st))
            return -1;
        pk_note_irregular(pm, pm->op_off,
                          "READONLY_BUFFER at byte %llu: written only with out-of-band buffers",
                          (unsigned long long)(pm->base + pm->o.origin + pm->op_off));
        return 0;
    default:
        return pk_fail(pm, pm->op_off, st, "invalid opcode 0x%02x", op);
    }
}

static void reset(pk_machine *pm)
{
    pm->sn = pm->mn = 0;
    /* a big memo is dropped rather than cleared: many small pickles after
     * one large one must not each pay for its size */
    if (pm->memo_cap > 64) {
        free(pm->memo);
        pm->memo = NULL;
        pm->memo_cap = 0;
    } else if (pm->memo_n) {
        memset(pm->memo, 0, pm->memo_cap * sizeof(*pm->memo));
    }
    pm->memo_n = 0;
    pm->proto = 0;
    pm->unsure = false;
    pm->frame_at = pm->frame_end = 0;
    pm->irregular = pm->named = pm->unproven = false;
    pm->gated_n = 0;
    pm->call_newobj = false;
}

/* Budgets grow with the input, counted once: pickles that follow each other
 * in one buffer (data after STOP) do not count the rest of it again. */
static void count_input(pk_machine *pm, const uint8_t *data, size_t size)
{
    const uint8_t *end = data + size;
    if (pm->cnt_lo && data >= pm->cnt_lo && data <= pm->cnt_hi) {
        if (end > pm->cnt_hi) {
            pm->input_bytes += (uint64_t)(end - pm->cnt_hi);
            pm->cnt_hi = end;
        }
        return;
    }
    pm->input_bytes += size;
    pm->cnt_lo = data;
    pm->cnt_hi = end;
}

int pk_load(pk_machine *pm, const uint8_t *data, size_t size, pk_obj **out, size_t *used,
            uint64_t *ops_done, mf_status *st)
{
    reset(pm);
    pm->d = data;
    pm->n = size;
    pm->pos = 0;
    count_input(pm, data, size);
    /* every opcode is at least one byte: work and objects in proportion */
    pm->max_work = 64 * pm->input_bytes + (16u << 20);
    uint64_t lim = 2 * pm->input_bytes + 1024;
    pm->max_objects = lim < CAP_OBJECTS ? lim : CAP_OBJECTS;
    lim = 4 * pm->input_bytes + 4096; /* a slot needs a pushed value: >= 1 byte */
    pm->max_items = lim < CAP_ITEMS ? lim : CAP_ITEMS;
    uint64_t ops = 0;
    *out = NULL;
    int r = 0;
    while (r == 0) {
        if (pm->pos >= pm->n) {
            pm->op_off = pm->pos;
            r = pk_fail(pm, pm->pos, st, "the data ends before STOP");
            break;
        }
        if (pk_charge(pm, 1, st)) {
            r = -1;
            break;
        }
        r = step(pm, out, st);
        if (r >= 0) {
            ops++;
            check_frame_end(pm);
        }
    }
    pk_gate_flush(pm);
    if (ops_done)
        *ops_done = ops;
    if (used)
        *used = r == 1 ? pm->pos : (size_t)pm->op_off;
    return r == 1 ? 0 : -1;
}

bool pk_starts_torch_legacy(const uint8_t *b, size_t n)
{
    pk_opts o = {.file = ""};
    pk_machine *pm = pk_new(&o);
    if (!pm)
        return false;
    mf_status st;
    mf_status_init(&st);
    pk_obj *v = NULL;
    size_t used;
    bool yes = pk_load(pm, b, n < 512 ? n : 512, &v, &used, NULL, &st) == 0 && v &&
               v->kind == PK_BIGINT && v->u.s.n == strlen(PK_TORCH_LEGACY_MAGIC) &&
               memcmp(v->u.s.p, PK_TORCH_LEGACY_MAGIC, v->u.s.n) == 0;
    mf_status_clear(&st);
    pk_free(pm);
    return yes;
}
