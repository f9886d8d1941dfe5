/* npy_literal.c - the .npy header as numpy reads it: a Python literal
 * evaluated by ast.literal_eval (numpy/lib/format.py _read_array_header,
 * after _filter_header drops the 'L' of Python 2 longs in versions 1.0 and
 * 2.0). Python's literal grammar, as far as literal_eval accepts it:
 * strings and bytes with any prefix but f, any quotes (single, double,
 * triple), escapes and implicit concatenation; ints in every base with
 * underscores, floats, imaginary numbers, one unary sign, a real +/- an
 * imaginary; True False None ...; tuples, lists, dicts (repeated keys:
 * the last wins), sets and set(); comments, blank lines, line continuations.
 *
 * Each failure says whether Python certainly refuses the text too
 * (LIT_REFUSED) or mfmt cannot tell (LIT_UNSURE: \N{...} escapes, a first
 * line that is indented after blank lines, ...). */
#include "formats/numpy/npy_literal.h"

#include <math.h>
#include <stdlib.h>

typedef struct parser {
    const uint8_t *s;
    size_t n, pos;
    int depth;     /* brackets open: newlines are blanks inside */
    bool filter_l; /* versions 1.0 and 2.0: 'L' after a number is dropped */
    mf_arena *a;
    lit_error *err;
    uint64_t nodes, max_nodes;
} parser;

static int fail(parser *P, int kind, const char *why)
{
    if (!P->err->why) {
        P->err->kind = kind;
        P->err->why = why;
        P->err->pos = P->pos;
    }
    return -1;
}

static lit *node(parser *P, lit_kind k)
{
    if (++P->nodes > P->max_nodes) {
        fail(P, LIT_UNSURE, "more values than mfmt reads in a header");
        return NULL;
    }
    lit *v = mf_arena_calloc(P->a, 1, sizeof(*v));
    if (!v)
        fail(P, LIT_NOMEM, "out of memory");
    else
        v->kind = k;
    return v;
}

static bool is_id_start(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}

static bool is_id_char(int c)
{
    return is_id_start(c) || (c >= '0' && c <= '9');
}

/* Skips blanks, comments, continuations and (inside brackets) newlines.
 * Returns 1 when a newline outside brackets was crossed. */
static int skip_blank(parser *P)
{
    int crossed = 0;
    while (P->pos < P->n) {
        uint8_t c = P->s[P->pos];
        if (c == ' ' || c == '\t' || c == '\f') {
            P->pos++;
        } else if (c == '#') {
            while (P->pos < P->n && P->s[P->pos] != '\n' && P->s[P->pos] != '\r')
                P->pos++;
        } else if (c == '\\' && P->pos + 1 < P->n &&
                   (P->s[P->pos + 1] == '\n' || P->s[P->pos + 1] == '\r')) {
            P->pos += 2;
            if (P->s[P->pos - 1] == '\r' && P->pos < P->n && P->s[P->pos] == '\n')
                P->pos++;
        } else if (c == '\n' || c == '\r') {
            P->pos++;
            if (P->depth == 0)
                crossed = 1;
        } else {
            break;
        }
    }
    return crossed;
}

static int peek(parser *P)
{
    if (skip_blank(P) && P->pos < P->n) {
        fail(P, LIT_REFUSED, "a newline between the parts of the expression");
        return -2;
    }
    return P->pos < P->n ? P->s[P->pos] : -1;
}

/* ------------------------------------------------------------- strings */

typedef struct sbuf {
    char *p;
    size_t n, cap;
} sbuf;

static int sb_put(parser *P, sbuf *b, const char *x, size_t k)
{
    if (b->n + k + 1 > b->cap) {
        size_t cap = (b->cap ? b->cap * 2 : 64) + k;
        char *np = mf_arena_alloc(P->a, cap);
        if (!np)
            return fail(P, LIT_NOMEM, "out of memory");
        if (b->n)
            memcpy(np, b->p, b->n);
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->n, x, k);
    b->n += k;
    b->p[b->n] = 0;
    return 0;
}

static int hex_digit(int c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* One escape after a backslash at P->pos (which points past it). */
static int escape(parser *P, sbuf *b, bool bytes)
{
    if (P->pos >= P->n)
        return fail(P, LIT_REFUSED, "a string ends in a backslash");
    uint8_t c = P->s[P->pos++];
    char ch;
    switch (c) {
    case '\n': return 0;
    case '\r':
        if (P->pos < P->n && P->s[P->pos] == '\n')
            P->pos++;
        return 0;
    case '\\': case '\'': case '"': ch = (char)c; return sb_put(P, b, &ch, 1);
    case 'a': return sb_put(P, b, "\a", 1);
    case 'b': return sb_put(P, b, "\b", 1);
    case 'f': return sb_put(P, b, "\f", 1);
    case 'n': return sb_put(P, b, "\n", 1);
    case 'r': return sb_put(P, b, "\r", 1);
    case 't': return sb_put(P, b, "\t", 1);
    case 'v': return sb_put(P, b, "\v", 1);
    case 'N':
        if (!bytes)
            return fail(P, LIT_UNSURE, "a \\N{...} escape (Unicode names are not known to mfmt)");
        break;
    case 'x': case 'u': case 'U': {
        int digits = c == 'x' ? 2 : c == 'u' ? 4 : 8;
        if (c != 'x' && bytes)
            break;
        uint32_t cp = 0;
        for (int i = 0; i < digits; i++) {
            int h = P->pos < P->n ? hex_digit(P->s[P->pos]) : -1;
            if (h < 0)
                return fail(P, LIT_REFUSED, "a truncated \\x, \\u or \\U escape");
            cp = cp * 16 + (uint32_t)h;
            P->pos++;
        }
        if (cp > 0x10ffff)
            return fail(P, LIT_REFUSED, "an escape beyond U+10FFFF");
        char o[4];
        if (bytes) {
            o[0] = (char)cp;
            return sb_put(P, b, o, 1);
        }
        return sb_put(P, b, o, mf_utf8_put((uint8_t *)o, cp));
    }
    default:
        if (c >= '0' && c <= '7') {
            uint32_t v = c - '0';
            for (int i = 0; i < 2 && P->pos < P->n && P->s[P->pos] >= '0' && P->s[P->pos] <= '7'; i++)
                v = v * 8 + (P->s[P->pos++] - '0');
            char o[4];
            if (bytes) {
                o[0] = (char)(v & 0xff);
                return sb_put(P, b, o, 1);
            }
            return sb_put(P, b, o, mf_utf8_put((uint8_t *)o, v));
        }
        break;
    }
    /* an unknown escape keeps its backslash (a DeprecationWarning only) */
    char o[2] = {'\\', (char)c};
    return sb_put(P, b, o, 2);
}

/* The body of one string literal; P->pos at the opening quote. */
static int string_body(parser *P, sbuf *b, bool raw, bool bytes)
{
    uint8_t q = P->s[P->pos];
    bool triple = P->pos + 2 < P->n && P->s[P->pos + 1] == q && P->s[P->pos + 2] == q;
    P->pos += triple ? 3 : 1;
    for (;;) {
        if (P->pos >= P->n)
            return fail(P, LIT_REFUSED, "an unterminated string");
        uint8_t c = P->s[P->pos];
        if (c == q && (!triple || (P->pos + 2 < P->n && P->s[P->pos + 1] == q &&
                                   P->s[P->pos + 2] == q))) {
            P->pos += triple ? 3 : 1;
            return 0;
        }
        if (!triple && (c == '\n' || c == '\r'))
            return fail(P, LIT_REFUSED, "a newline in a single-quoted string");
        if (bytes && c >= 0x80)
            return fail(P, LIT_REFUSED, "a non-ASCII character in a bytes literal");
        if (c == '\\') {
            P->pos++;
            if (raw) {
                /* a raw string keeps the backslash; the next character
                 * cannot end the string */
                if (P->pos >= P->n)
                    return fail(P, LIT_REFUSED, "an unterminated string");
                if (sb_put(P, b, (const char *)P->s + P->pos - 1, 2))
                    return -1;
                P->pos++;
                continue;
            }
            if (escape(P, b, bytes))
                return -1;
            continue;
        }
        if (c == '\r' && triple) { /* the tokenizer reads \r\n and \r as \n */
            P->pos++;
            if (P->pos < P->n && P->s[P->pos] == '\n')
                P->pos++;
            if (sb_put(P, b, "\n", 1))
                return -1;
            continue;
        }
        if (sb_put(P, b, (const char *)&c, 1))
            return -1;
        P->pos++;
    }
}

/* A prefix (r, u, b, br, rb, f... in any case) directly before a quote;
 * returns its length, 0 if none, -1 when it is not a string. */
static int string_prefix(parser *P, bool *raw, bool *bytes, bool *fstr)
{
    *raw = *bytes = *fstr = false;
    size_t i = P->pos;
    while (i < P->n && i - P->pos < 3 && strchr("rRuUbBfF", P->s[i]) && P->s[i]) {
        char c = (char)(P->s[i] | 0x20);
        *raw |= c == 'r';
        *bytes |= c == 'b';
        *fstr |= c == 'f';
        i++;
    }
    if (i >= P->n || (P->s[i] != '\'' && P->s[i] != '"'))
        return -1;
    return (int)(i - P->pos);
}

/* Adjacent string literals are one (str with str, bytes with bytes). */
static lit *strings(parser *P)
{
    sbuf b = {0};
    int kind = -1;
    for (;;) {
        int c = peek(P);
        if (c == -2)
            return NULL;
        bool raw, bytes, fstr;
        int pl = c < 0 ? -1 : c == '\'' || c == '"' ? 0 : string_prefix(P, &raw, &bytes, &fstr);
        if (pl < 0)
            break;
        if (pl == 0)
            raw = bytes = fstr = false;
        size_t start = P->pos;
        /* the valid prefixes: r u b f br rb fr rf, any case */
        bool ok = pl <= 2 && !(bytes && fstr) && !(pl == 2 && !raw) &&
                  !(strchr("uU", P->s[start]) && pl > 1);
        if (!ok)
            return fail(P, LIT_REFUSED, "not a string prefix Python has"), NULL;
        if (fstr)
            return fail(P, LIT_REFUSED, "an f-string (not a literal)"), NULL;
        if (kind >= 0 && kind != (int)bytes)
            return fail(P, LIT_REFUSED, "bytes and str literals side by side"), NULL;
        kind = bytes;
        P->pos += (size_t)pl;
        if (string_body(P, &b, raw, bytes))
            return NULL;
        if (P->pos < P->n && is_id_char(P->s[P->pos]) && string_prefix(P, &raw, &bytes, &fstr) < 0)
            return fail(P, LIT_REFUSED, "a name right after a string"), NULL;
    }
    lit *v = node(P, kind ? LIT_BYTES : LIT_STR);
    if (!v)
        return NULL;
    v->s = b.p ? b.p : "";
    v->n = b.n;
    return v;
}

/* ------------------------------------------------------------- numbers */

/* Digits of `base` with single underscores between them; returns count. */
static size_t digits(parser *P, int base, uint64_t *val, bool *big, bool *bad)
{
    size_t cnt = 0;
    bool us = false;
    while (P->pos < P->n) {
        int c = P->s[P->pos];
        if (c == '_') {
            if (us || cnt == 0) {
                *bad = true;
                return cnt;
            }
            us = true;
            P->pos++;
            continue;
        }
        int d = hex_digit(c);
        if (d < 0 || d >= base)
            break;
        us = false;
        cnt++;
        if (mf_mul_ovf(*val, (uint64_t)base, val) || mf_add_ovf(*val, (uint64_t)d, val))
            *big = true;
        P->pos++;
    }
    if (us)
        *bad = true;
    return cnt;
}

static lit *number(parser *P)
{
    size_t start = P->pos;
    uint64_t v = 0;
    bool big = false, bad = false, is_float = false;
    int c = P->s[P->pos];
    if (c == '0' && P->pos + 1 < P->n && strchr("xXoObB", P->s[P->pos + 1]) && P->s[P->pos + 1]) {
        int base = strchr("xX", P->s[P->pos + 1]) ? 16 : strchr("oO", P->s[P->pos + 1]) ? 8 : 2;
        P->pos += 2;
        if (P->pos < P->n && P->s[P->pos] == '_')
            P->pos++; /* 0x_1f is valid */
        if (!digits(P, base, &v, &big, &bad) || bad)
            return fail(P, LIT_REFUSED, "an invalid integer literal"), NULL;
    } else {
        size_t nd = c == '.' ? 0 : digits(P, 10, &v, &big, &bad);
        bool all_zero = true;
        for (size_t i = start; i < P->pos; i++)
            all_zero &= P->s[i] == '0' || P->s[i] == '_';
        if (P->pos < P->n && P->s[P->pos] == '.') {
            is_float = true;
            P->pos++;
            uint64_t f = 0;
            bool fb = false;
            size_t fd = P->pos < P->n && P->s[P->pos] != '_' ? digits(P, 10, &f, &fb, &bad) : 0;
            if (nd == 0 && fd == 0)
                return fail(P, LIT_REFUSED, "a lone '.'"), NULL;
        }
        if (P->pos < P->n && (P->s[P->pos] == 'e' || P->s[P->pos] == 'E')) {
            size_t save = P->pos++;
            if (P->pos < P->n && (P->s[P->pos] == '+' || P->s[P->pos] == '-'))
                P->pos++;
            uint64_t e = 0;
            bool eb = false;
            if (!digits(P, 10, &e, &eb, &bad)) {
                P->pos = save;
                return fail(P, LIT_REFUSED, "an invalid exponent"), NULL;
            }
            is_float = true;
        }
        if (bad)
            return fail(P, LIT_REFUSED, "misplaced underscores in a number"), NULL;
        if (!is_float && nd > 1 && P->s[start] == '0' && !all_zero &&
            !(P->pos < P->n && (P->s[P->pos] == 'j' || P->s[P->pos] == 'J')))
            return fail(P, LIT_REFUSED, "leading zeros in a decimal integer"), NULL;
    }
    bool imag = false;
    if (P->pos < P->n && (P->s[P->pos] == 'j' || P->s[P->pos] == 'J')) {
        imag = true;
        P->pos++;
    }
    if (P->pos < P->n && is_id_char(P->s[P->pos])) {
        /* _filter_header: a NAME token "L" after a NUMBER is dropped */
        bool just_l = P->filter_l && !imag && P->s[P->pos] == 'L' &&
                      (P->pos + 1 >= P->n || !is_id_char(P->s[P->pos + 1]));
        if (!just_l)
            return fail(P, LIT_REFUSED, "a name right after a number"), NULL;
        P->pos++;
    }
    lit *o = node(P, imag ? LIT_COMPLEX : is_float ? LIT_FLOAT : LIT_INT);
    if (!o)
        return NULL;
    o->s = (const char *)P->s + start;
    o->n = P->pos - start;
    if (o->kind == LIT_INT) {
        o->big = big;
        o->u = v;
    }
    return o;
}

/* Whitespace between a number and an 'L' is also filtered (they are two
 * tokens): "3 L" reads as 3 in versions 1.0 and 2.0. */
static void filtered_l(parser *P)
{
    if (!P->filter_l)
        return;
    size_t k = P->pos;
    while (k < P->n && (P->s[k] == ' ' || P->s[k] == '\t' || P->s[k] == '\f'))
        k++;
    if (k < P->n && P->s[k] == 'L' && (k + 1 >= P->n || !is_id_char(P->s[k + 1])))
        P->pos = k + 1;
}

/* --------------------------------------------------------------- values */

static lit *expr(parser *P);

/* Python's tokenizer refuses more than 200 open brackets (MAXLEVEL) */
#define MAX_NESTING 200

static lit *sequence(parser *P, int close, lit_kind k, bool *single)
{
    MF_VEC(lit *) items = {0};
    bool trailing_comma = false;
    if (P->depth >= MAX_NESTING)
        return fail(P, LIT_REFUSED, "more than 200 nested brackets"), NULL;
    P->depth++;
    for (;;) {
        int c = peek(P);
        if (c == close) {
            P->pos++;
            break;
        }
        if (c < 0) {
            MF_VEC_FREE(items);
            return fail(P, LIT_REFUSED, "an unclosed bracket"), NULL;
        }
        lit *x = expr(P);
        if (!x || MF_VEC_PUSH(items, x)) {
            MF_VEC_FREE(items);
            return x ? fail(P, LIT_NOMEM, "out of memory"), NULL : NULL;
        }
        c = peek(P);
        trailing_comma = c == ',';
        if (c == ',') {
            P->pos++;
            continue;
        }
        if (c != close) {
            MF_VEC_FREE(items);
            return fail(P, LIT_REFUSED, "a missing comma or closing bracket"), NULL;
        }
    }
    P->depth--;
    if (single)
        *single = items.n == 1 && !trailing_comma;
    lit *v = node(P, k);
    if (v && items.n) {
        v->v = mf_arena_alloc(P->a, items.n * sizeof(lit *));
        if (!v->v) {
            fail(P, LIT_NOMEM, "out of memory");
            v = NULL;
        } else
            memcpy(v->v, items.v, items.n * sizeof(lit *));
    }
    if (v)
        v->nv = items.n;
    MF_VEC_FREE(items);
    return v;
}

/* { } is a dict; {a, b} a set; {k: v, ...} a dict. */
static lit *braces(parser *P)
{
    if (P->depth >= MAX_NESTING)
        return fail(P, LIT_REFUSED, "more than 200 nested brackets"), NULL;
    P->pos++;
    P->depth++;
    MF_VEC(lit *) items = {0};
    int is_dict = -1;
    lit *v = NULL;
    for (;;) {
        int c = peek(P);
        if (c == '}') {
            P->pos++;
            break;
        }
        if (c < 0 || (c == '*' && P->pos + 1 < P->n && P->s[P->pos + 1] == '*')) {
            fail(P, LIT_REFUSED, c < 0 ? "an unclosed brace" : "** in a dict (not a literal)");
            goto out;
        }
        lit *k = expr(P);
        if (!k)
            goto out;
        c = peek(P);
        int d = c == ':';
        if (is_dict >= 0 && d != is_dict) {
            fail(P, LIT_REFUSED, "a dict and a set mixed");
            goto out;
        }
        is_dict = d;
        if (MF_VEC_PUSH(items, k)) {
            fail(P, LIT_NOMEM, "out of memory");
            goto out;
        }
        if (d) {
            P->pos++;
            lit *x = expr(P);
            if (!x)
                goto out;
            if (MF_VEC_PUSH(items, x)) {
                fail(P, LIT_NOMEM, "out of memory");
                goto out;
            }
            c = peek(P);
        }
        if (c == ',') {
            P->pos++;
            continue;
        }
        if (c != '}') {
            fail(P, LIT_REFUSED, "a missing comma or closing brace");
            goto out;
        }
    }
    P->depth--;
    v = node(P, is_dict == 0 ? LIT_SET : LIT_DICT);
    if (v && items.n) {
        v->v = mf_arena_alloc(P->a, items.n * sizeof(lit *));
        if (!v->v) {
            fail(P, LIT_NOMEM, "out of memory");
            v = NULL;
            goto out;
        }
        memcpy(v->v, items.v, items.n * sizeof(lit *));
    }
    if (v)
        v->nv = is_dict == 0 ? items.n : items.n / 2;
out:
    MF_VEC_FREE(items);
    return v;
}

static bool word(parser *P, const char *w)
{
    size_t k = strlen(w);
    if (P->n - P->pos < k || memcmp(P->s + P->pos, w, k) != 0 ||
        (P->pos + k < P->n && is_id_char(P->s[P->pos + k])))
        return false;
    P->pos += k;
    return true;
}

static lit *atom(parser *P)
{
    int c = peek(P);
    if (c == -2)
        return NULL;
    if (c < 0)
        return fail(P, LIT_REFUSED, "the header ends where a value should be"), NULL;
    if (c == '(') {
        P->pos++;
        bool single;
        lit *t = sequence(P, ')', LIT_TUPLE, &single);
        return t && single ? t->v[0] : t; /* (x) is x */
    }
    if (c == '[') {
        P->pos++;
        return sequence(P, ']', LIT_LIST, NULL);
    }
    if (c == '{')
        return braces(P);
    if (c == '\'' || c == '"')
        return strings(P);
    if ((c >= '0' && c <= '9') ||
        (c == '.' && P->pos + 1 < P->n && P->s[P->pos + 1] >= '0' && P->s[P->pos + 1] <= '9')) {
        lit *v = number(P);
        if (v)
            filtered_l(P);
        return v;
    }
    if (c == '.' && P->n - P->pos >= 3 && memcmp(P->s + P->pos, "...", 3) == 0) {
        P->pos += 3;
        return node(P, LIT_ELLIPSIS);
    }
    if (is_id_start(c)) {
        bool raw, bytes, fstr;
        if (string_prefix(P, &raw, &bytes, &fstr) >= 0)
            return strings(P);
        int b = word(P, "True") ? 1 : word(P, "False") ? 0 : -1;
        if (b >= 0) {
            lit *v = node(P, LIT_BOOL);
            if (v)
                v->u = (uint64_t)b;
            return v;
        }
        if (word(P, "None"))
            return node(P, LIT_NONE);
        size_t save = P->pos;
        if (word(P, "set")) {
            if (peek(P) == '(') {
                P->pos++;
                if (peek(P) == ')') {
                    P->pos++;
                    return node(P, LIT_SET);
                }
            }
            P->pos = save;
        }
        return fail(P, LIT_REFUSED, "a name (not a literal)"), NULL;
    }
    return fail(P, LIT_REFUSED, "a character that starts no literal"), NULL;
}

static bool is_num(const lit *v)
{
    return v && (v->kind == LIT_INT || v->kind == LIT_FLOAT || v->kind == LIT_COMPLEX);
}

/* literal_eval: one sign on a number; a (signed) real +/- an imaginary. */
static lit *expr(parser *P)
{
    int c = peek(P);
    if (c == -2)
        return NULL;
    int sign = 0;
    if (c == '-' || c == '+') {
        sign = c == '-' ? -1 : 1;
        P->pos++;
    }
    lit *v = atom(P);
    if (!v)
        return NULL;
    if (sign && !is_num(v))
        return fail(P, LIT_REFUSED, "a sign on what is not a number"), NULL;
    if (sign < 0 && v->kind == LIT_INT) {
        lit *w = node(P, LIT_INT);
        if (!w)
            return NULL;
        *w = *v;
        w->neg = !v->neg;
        v = w;
    }
    c = peek(P);
    if (c == '+' || c == '-') {
        if (!is_num(v) || v->kind == LIT_COMPLEX)
            return fail(P, LIT_REFUSED, "an operator (only real +/- imaginary is a literal)"), NULL;
        P->pos++;
        lit *r = atom(P);
        if (!r)
            return NULL;
        if (r->kind != LIT_COMPLEX)
            return fail(P, LIT_REFUSED, "real +/- something that is not imaginary"), NULL;
        lit *w = node(P, LIT_COMPLEX);
        return w;
    }
    if (c >= 0 && strchr("*/%@&|^<>=!~.[(", c))
        return fail(P, LIT_REFUSED, "an operator, call or subscript (not a literal)"), NULL;
    if (c >= 0 && is_id_start(c))
        return fail(P, LIT_REFUSED, "a name after a value (not a literal)"), NULL;
    return v;
}

int lit_parse(const uint8_t *s, size_t n, bool filter_l, mf_arena *a, lit **out, lit_error *err)
{
    memset(err, 0, sizeof(*err));
    parser P = {.s = s, .n = n, .filter_l = filter_l, .a = a, .err = err,
                .max_nodes = n / 2 + 16};
    *out = NULL;
    if (memchr(s, 0, n))
        return fail(&P, LIT_REFUSED, "a NUL byte (Python refuses such source)");
    /* literal_eval strips spaces and tabs before the text */
    while (P.pos < n && (s[P.pos] == ' ' || s[P.pos] == '\t'))
        P.pos++;
    /* blank lines before the value are no tokens; an indented first value
     * line after them is an IndentationError in eval mode, we think: unsure */
    size_t line = P.pos;
    if (skip_blank(&P) && P.pos < n) {
        size_t k = P.pos;
        while (k > line && s[k - 1] != '\n' && s[k - 1] != '\r')
            k--;
        if (k != P.pos)
            return fail(&P, LIT_UNSURE, "an indented value after blank lines");
    }
    lit *v = expr(&P);
    if (!v)
        return -1;
    int c = peek(&P);
    if (c == ',') {
        /* a tuple without parentheses: never a dict */
        return fail(&P, LIT_REFUSED, "a tuple, not a dict");
    }
    if (c == -2)
        return -1;
    if (c >= 0)
        return fail(&P, LIT_REFUSED, "text after the value");
    *out = v;
    return 0;
}

bool lit_is_str(const lit *v, const char *s)
{
    size_t k = strlen(s);
    return v && v->kind == LIT_STR && v->n == k && memcmp(v->s, s, k) == 0;
}

/* Any string in v, at any depth, holding one of the characters? */
bool lit_any_str_has(const lit *v, const char *chars, int depth)
{
    if (!v || depth > 64)
        return true;
    if (v->kind == LIT_STR || v->kind == LIT_BYTES) {
        for (size_t i = 0; i < v->n; i++)
            if (strchr(chars, v->s[i]) && v->s[i])
                return true;
        return false;
    }
    for (size_t i = 0; i < v->nv * (v->kind == LIT_DICT ? 2 : 1); i++)
        if (lit_any_str_has(v->v[i], chars, depth + 1))
            return true;
    return false;
}
