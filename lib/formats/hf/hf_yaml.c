/* hf_yaml.c - the YAML front matter of a model card, read into JSON values.
 *
 * Hugging Face model cards start with YAML between two "---" lines
 * (huggingface/hub-docs modelcard.md); tools read it with PyYAML's safe_load.
 * This reads the subset model cards use: block mappings and sequences by
 * indentation, flow collections [..] {..}, plain, 'single' and "double"
 * quoted scalars, | and > block scalars, comments; plain scalars resolved as
 * YAML 1.1 (PyYAML): null ~, booleans yes/no/on/off/true/false, ints,
 * floats (which need a dot). Anchors, aliases, tags and multi-line quoted
 * scalars are refused with a message. Depth is bounded. */
#include "formats/hf/hf.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>

enum { MAX_DEPTH = 64, MAX_LINES = 1 << 20 };

typedef struct yline {
    const char *raw; /* the whole line */
    size_t raw_len;
    const char *s;   /* content after the indentation, comment stripped */
    size_t len;
    int indent;
    bool blank;      /* empty or only a comment */
} yline;

typedef struct yparser {
    yline *l;
    size_t n, i;
    char *err;
    size_t errlen;
    int depth;
} yparser;

static json_t *yfail(yparser *p, const char *fmt, ...) MF_PRINTF(2, 3);
static json_t *yfail(yparser *p, const char *fmt, ...)
{
    if (p->err[0])
        return NULL;
    size_t line = p->i < p->n ? p->i + 2 : p->n + 1; /* +1: 1-based, +1: the "---" line */
    int k = snprintf(p->err, p->errlen, "front matter line %zu: ", line);
    va_list ap;
    va_start(ap, fmt);
    if (k > 0 && (size_t)k < p->errlen)
        vsnprintf(p->err + k, p->errlen - (size_t)k, fmt, ap);
    va_end(ap);
    return NULL;
}

/* -------------------------------------------------------------- lines */

/* Where a comment starts: '#' at the start or after a blank, outside quotes.
 * A quote opens only where a scalar may start. */
static size_t strip_comment(const char *s, size_t n)
{
    char q = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (q) {
            if (q == '"' && c == '\\')
                i++;
            else if (c == q) {
                if (q == '\'' && i + 1 < n && s[i + 1] == '\'')
                    i++;
                else
                    q = 0;
            }
            continue;
        }
        if (c == '#' && (i == 0 || s[i - 1] == ' ' || s[i - 1] == '\t'))
            return i;
        if ((c == '"' || c == '\'')) {
            size_t j = i;
            while (j > 0 && s[j - 1] == ' ')
                j--;
            if (j == 0 || strchr(":-[{,", s[j - 1]))
                q = c;
        }
    }
    return n;
}

static int split_lines(yparser *p, const char *text, size_t n)
{
    size_t cap = 0;
    for (size_t pos = 0; pos < n;) {
        size_t e = pos;
        while (e < n && text[e] != '\n' && text[e] != '\r')
            e++;
        if (p->n == cap) {
            if (cap >= MAX_LINES) {
                yfail(p, "more than %d lines", MAX_LINES);
                return -1;
            }
            if (mf_vec_grow((void **)&p->l, &cap, p->n + 1, sizeof(yline))) {
                yfail(p, "out of memory");
                return -1;
            }
        }
        yline *l = &p->l[p->n++];
        l->raw = text + pos;
        l->raw_len = e - pos;
        size_t k = 0;
        while (k < l->raw_len && l->raw[k] == ' ')
            k++;
        l->indent = (int)k;
        l->s = l->raw + k;
        l->len = strip_comment(l->s, l->raw_len - k);
        while (l->len && (l->s[l->len - 1] == ' ' || l->s[l->len - 1] == '\t'))
            l->len--;
        l->blank = l->len == 0;
        pos = e + (e + 1 < n && text[e] == '\r' && text[e + 1] == '\n' ? 2 : e < n ? 1 : 0);
    }
    return 0;
}

static void skip_blank(yparser *p)
{
    while (p->i < p->n && p->l[p->i].blank)
        p->i++;
}

/* ------------------------------------------------------------ scalars */

static bool all_in(const char *s, size_t n, const char *set)
{
    for (size_t i = 0; i < n; i++)
        if (!strchr(set, s[i]))
            return false;
    return n > 0;
}

static bool word_is(const char *s, size_t n, const char *const *words)
{
    for (; *words; words++)
        if (strlen(*words) == n && memcmp(*words, s, n) == 0)
            return true;
    return false;
}

/* YAML 1.1 int (PyYAML's resolver): [-+]?0b[01_]+ | [-+]?0[0-7_]+ |
 * [-+]?(0|[1-9][0-9_]*) | [-+]?0x[0-9a-fA-F_]+ (sexagesimal not taken). */
static json_t *resolve_int(const char *s, size_t n)
{
    char buf[80];
    size_t k = 0;
    size_t i = 0;
    bool neg = false;
    if (i < n && (s[i] == '-' || s[i] == '+'))
        neg = s[i++] == '-';
    int base = 10;
    if (n - i > 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'b')) {
        base = s[i + 1] == 'x' ? 16 : 2;
        i += 2;
    } else if (n - i > 1 && s[i] == '0') {
        base = 8;
        i++;
    }
    const char *digits = base == 16 ? "0123456789abcdefABCDEF_" : base == 2 ? "01_" :
                         base == 8 ? "01234567_" : "0123456789_";
    if (i >= n || !all_in(s + i, n - i, digits) || (base == 10 && s[i] == '_'))
        return NULL;
    for (; i < n && k + 1 < sizeof(buf); i++)
        if (s[i] != '_')
            buf[k++] = s[i];
    if (k == 0 || i < n)
        return NULL;
    buf[k] = 0;
    errno = 0;
    unsigned long long v = strtoull(buf, NULL, base);
    if (errno == ERANGE || v > (unsigned long long)INT64_MAX) /* beyond 64 bits */
        return json_real(neg ? -strtod(buf, NULL) : strtod(buf, NULL));
    return json_integer(neg ? -(json_int_t)v : (json_int_t)v);
}

/* YAML 1.1 float: [-+]?([0-9][0-9_]*)?\.[0-9_]*([eE][-+][0-9]+)? | .inf | .nan */
static json_t *resolve_float(const char *s, size_t n)
{
    static const char *const inf[] = {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", NULL};
    static const char *const ninf[] = {"-.inf", "-.Inf", "-.INF", NULL};
    static const char *const nan_[] = {".nan", ".NaN", ".NAN", NULL};
    if (word_is(s, n, inf))
        return json_real(INFINITY); /* jansson refuses non-finite reals: NULL */
    if (word_is(s, n, ninf) || word_is(s, n, nan_))
        return NULL;
    size_t i = 0, digits = 0;
    char buf[128];
    size_t k = 0;
    if (n >= sizeof(buf))
        return NULL;
    if (s[i] == '-' || s[i] == '+')
        buf[k++] = s[i++];
    while (i < n && (isdigit((unsigned char)s[i]) || (s[i] == '_' && digits))) {
        if (s[i] != '_') {
            buf[k++] = s[i];
            digits++;
        }
        i++;
    }
    if (i >= n || s[i] != '.')
        return NULL;
    buf[k++] = s[i++];
    while (i < n && (isdigit((unsigned char)s[i]) || s[i] == '_')) {
        if (s[i] != '_') {
            buf[k++] = s[i];
            digits++;
        }
        i++;
    }
    if (!digits)
        return NULL;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        buf[k++] = s[i++];
        if (i >= n || (s[i] != '-' && s[i] != '+'))
            return NULL;
        buf[k++] = s[i++];
        size_t e0 = i;
        while (i < n && isdigit((unsigned char)s[i]))
            buf[k++] = s[i++];
        if (i == e0)
            return NULL;
    }
    if (i != n)
        return NULL;
    buf[k] = 0;
    double v = strtod(buf, NULL);
    return isfinite(v) ? json_real(v) : NULL;
}

static json_t *resolve_plain(const char *s, size_t n)
{
    static const char *const nulls[] = {"~", "null", "Null", "NULL", NULL};
    static const char *const yes[] = {"yes", "Yes", "YES", "true", "True", "TRUE",
                                      "on", "On", "ON", NULL};
    static const char *const no[] = {"no", "No", "NO", "false", "False", "FALSE",
                                     "off", "Off", "OFF", NULL};
    if (n == 0 || word_is(s, n, nulls))
        return json_null();
    /* PyYAML's bool resolver: yes/no/true/false/on/off (not y/n) */
    if (word_is(s, n, yes))
        return json_true();
    if (word_is(s, n, no))
        return json_false();
    json_t *v = resolve_int(s, n);
    if (!v)
        v = resolve_float(s, n);
    return v ? v : json_stringn(s, n);
}

static int hexval(char c)
{
    return isdigit((unsigned char)c) ? c - '0' : isxdigit((unsigned char)c) ? (tolower(c) - 'a' + 10) : -1;
}

static size_t put_utf8(char *d, uint32_t cp)
{
    if (cp < 0x80) { d[0] = (char)cp; return 1; }
    if (cp < 0x800) { d[0] = (char)(0xc0 | cp >> 6); d[1] = (char)(0x80 | (cp & 63)); return 2; }
    if (cp < 0x10000) {
        d[0] = (char)(0xe0 | cp >> 12); d[1] = (char)(0x80 | (cp >> 6 & 63));
        d[2] = (char)(0x80 | (cp & 63));
        return 3;
    }
    d[0] = (char)(0xf0 | cp >> 18); d[1] = (char)(0x80 | (cp >> 12 & 63));
    d[2] = (char)(0x80 | (cp >> 6 & 63)); d[3] = (char)(0x80 | (cp & 63));
    return 4;
}

/* A quoted scalar starting at *pp; *pp is left after the closing quote. */
static json_t *parse_quoted(yparser *p, const char **pp, const char *end)
{
    const char *s = *pp;
    char q = *s++;
    char *buf = malloc((size_t)(end - s) * 2 + 1);
    if (!buf)
        return yfail(p, "out of memory");
    size_t k = 0;
    bool closed = false;
    while (s < end) {
        char c = *s++;
        if (c == q) {
            if (q == '\'' && s < end && *s == '\'') {
                buf[k++] = '\'';
                s++;
                continue;
            }
            closed = true;
            break;
        }
        if (q == '"' && c == '\\' && s < end) {
            char e = *s++;
            int nhex = e == 'x' ? 2 : e == 'u' ? 4 : e == 'U' ? 8 : 0;
            if (nhex) {
                uint32_t cp = 0;
                for (int j = 0; j < nhex; j++) {
                    int h = s < end ? hexval(*s) : -1;
                    if (h < 0) {
                        free(buf);
                        return yfail(p, "bad \\%c escape in a double-quoted scalar", e);
                    }
                    cp = cp << 4 | (uint32_t)h;
                    s++;
                }
                if (cp > 0x10ffff || (cp >= 0xd800 && cp < 0xe000)) {
                    free(buf);
                    return yfail(p, "escape \\%c gives an invalid code point", e);
                }
                k += put_utf8(buf + k, cp);
                continue;
            }
            static const char from[] = "0abtnvfre \"/\\N_LP\t";
            static const char *const to[] = {"\0", "\a", "\b", "\t", "\n", "\v", "\f", "\r",
                                             "\x1b", " ", "\"", "/", "\\", "\xc2\x85",
                                             "\xc2\xa0", "\xe2\x80\xa8", "\xe2\x80\xa9", "\t"};
            const char *f = e ? strchr(from, e) : NULL;
            if (!f) {
                free(buf);
                return yfail(p, "unknown escape \\%c in a double-quoted scalar", e);
            }
            const char *r = to[f - from];
            size_t rl = e == '0' ? 1 : strlen(r);
            memcpy(buf + k, r, rl);
            k += rl;
            continue;
        }
        buf[k++] = c;
    }
    if (!closed) {
        free(buf);
        return yfail(p, "%s-quoted scalar is not closed on its line (multi-line quoted scalars are not read)",
                     q == '"' ? "double" : "single");
    }
    *pp = s;
    json_t *v = json_stringn(buf, k);
    free(buf);
    return v ? v : yfail(p, "quoted scalar is not valid UTF-8");
}

static const char *skip_ws(const char *s, const char *end)
{
    while (s < end && (*s == ' ' || *s == '\t'))
        s++;
    return s;
}

static json_t *parse_flow(yparser *p, const char **pp, const char *end);

/* A flow collection [..] or {..} at *pp (one line). */
static json_t *parse_flow_collection(yparser *p, const char **pp, const char *end)
{
    if (++p->depth > MAX_DEPTH)
        return yfail(p, "nesting deeper than %d", MAX_DEPTH);
    bool map = **pp == '{';
    char close = map ? '}' : ']';
    json_t *c = map ? json_object() : json_array();
    const char *s = *pp + 1;
    for (;;) {
        s = skip_ws(s, end);
        if (s >= end) {
            json_decref(c);
            return yfail(p, "flow collection not closed on its line");
        }
        if (*s == close) {
            s++;
            break;
        }
        json_t *k = parse_flow(p, &s, end);
        if (!k) {
            json_decref(c);
            return NULL;
        }
        s = skip_ws(s, end);
        if (map) {
            json_t *v = json_null();
            if (s < end && *s == ':') {
                s = skip_ws(s + 1, end);
                json_decref(v);
                v = (s < end && (*s == ',' || *s == '}')) ? json_null() : parse_flow(p, &s, end);
                if (!v) {
                    json_decref(k);
                    json_decref(c);
                    return NULL;
                }
            }
            const char *ks = json_is_string(k) ? json_string_value(k) : NULL;
            char kb[64];
            if (!ks) {
                snprintf(kb, sizeof(kb), "%g", json_number_value(k));
                ks = kb;
            }
            json_object_set_new(c, ks, v);
            json_decref(k);
        } else {
            json_array_append_new(c, k);
        }
        s = skip_ws(s, end);
        if (s < end && *s == ',')
            s++;
        else if (!(s < end && *s == close)) {
            json_decref(c);
            return yfail(p, "expected ',' or '%c' in a flow collection", close);
        }
    }
    p->depth--;
    *pp = s;
    return c;
}

/* One node in flow context: collection, quoted or plain scalar (a plain
 * scalar ends at ',', ']', '}' or ": "). */
static json_t *parse_flow(yparser *p, const char **pp, const char *end)
{
    const char *s = skip_ws(*pp, end);
    if (s < end && (*s == '[' || *s == '{')) {
        *pp = s;
        return parse_flow_collection(p, pp, end);
    }
    if (s < end && (*s == '"' || *s == '\'')) {
        *pp = s;
        return parse_quoted(p, pp, end);
    }
    if (s < end && (*s == '&' || *s == '*' || *s == '!'))
        return yfail(p, "anchors, aliases and tags are not read");
    const char *b = s;
    while (s < end && *s != ',' && *s != ']' && *s != '}' &&
           !(*s == ':' && (s + 1 == end || s[1] == ' ')))
        s++;
    const char *e = s;
    while (e > b && (e[-1] == ' ' || e[-1] == '\t'))
        e--;
    *pp = s;
    return resolve_plain(b, (size_t)(e - b));
}

/* The value written inline after "key:" or "- ". */
static json_t *parse_inline(yparser *p, const char *s, size_t n)
{
    const char *end = s + n;
    if (n && (*s == '&' || *s == '*' || *s == '!'))
        return yfail(p, "anchors, aliases and tags are not read");
    if (n && (*s == '[' || *s == '{' || *s == '"' || *s == '\'')) {
        const char *q = s;
        json_t *v = *s == '[' || *s == '{' ? parse_flow_collection(p, &q, end)
                                           : parse_quoted(p, &q, end);
        if (v && skip_ws(q, end) != end) {
            json_decref(v);
            return yfail(p, "unexpected text after a %s", *s == '[' || *s == '{' ? "flow collection" : "quoted scalar");
        }
        return v;
    }
    return resolve_plain(s, n);
}

/* ------------------------------------------------------------- blocks */

static json_t *parse_block(yparser *p, int min_indent);

static bool is_seq_item(const yline *l)
{
    return l->len >= 1 && l->s[0] == '-' && (l->len == 1 || l->s[1] == ' ');
}

/* The ':' ending a mapping key on this line (followed by a blank or the end),
 * outside quotes and flow brackets; -1 if the line is no "key: ..." line. */
static long key_colon(const yline *l)
{
    const char *s = l->s;
    size_t n = l->len;
    if (n && (s[0] == '[' || s[0] == '{'))
        return -1;
    size_t i = 0;
    if (n && (s[0] == '"' || s[0] == '\'')) {
        char q = s[0];
        for (i = 1; i < n && s[i] != q; i++)
            if (q == '"' && s[i] == '\\')
                i++;
        i++;
    }
    for (; i < n; i++)
        if (s[i] == ':' && (i + 1 == n || s[i + 1] == ' ' || s[i + 1] == '\t'))
            return (long)i;
    return -1;
}

/* A | or > block scalar whose indicator line is p->i - 1 (parent indent). */
static json_t *parse_block_scalar(yparser *p, const char *ind, size_t n, int parent)
{
    bool fold = ind[0] == '>';
    char chomp = 0;
    int explicit_indent = 0;
    for (size_t i = 1; i < n; i++) {
        if (ind[i] == '-' || ind[i] == '+')
            chomp = ind[i];
        else if (ind[i] >= '1' && ind[i] <= '9')
            explicit_indent = ind[i] - '0';
        else
            return yfail(p, "bad block scalar indicator");
    }
    size_t first = p->i, last = p->i; /* [first, last) lines of content */
    int indent = explicit_indent ? parent + explicit_indent : -1;
    for (size_t i = p->i; i < p->n; i++) {
        const yline *l = &p->l[i];
        bool empty = l->indent == (int)l->raw_len;
        if (empty) {
            continue;
        }
        if (indent < 0)
            indent = l->indent;
        if (l->indent <= parent || l->indent < indent)
            break;
        last = i + 1;
    }
    size_t cap = 1;
    for (size_t i = first; i < last; i++)
        cap += p->l[i].raw_len + 1;
    char *buf = malloc(cap);
    if (!buf)
        return yfail(p, "out of memory");
    size_t k = 0;
    bool prev_more = false, prev_empty = true;
    for (size_t i = first; i < last; i++) {
        const yline *l = &p->l[i];
        bool empty = l->indent == (int)l->raw_len;
        size_t off = empty ? l->raw_len : (size_t)indent;
        if (off > l->raw_len)
            off = l->raw_len;
        const char *t = l->raw + off;
        size_t tl = l->raw_len - off;
        bool more = !empty && tl && (t[0] == ' ' || t[0] == '\t');
        if (i > first) {
            if (!fold || empty || prev_empty || more || prev_more)
                buf[k++] = '\n';
            else
                buf[k++] = ' ';
        }
        memcpy(buf + k, t, tl);
        k += tl;
        prev_more = more;
        prev_empty = empty;
    }
    /* chomping: clip keeps one final newline, strip none, keep all */
    while (k && buf[k - 1] == '\n' && chomp != '+')
        k--;
    if (last > first && chomp != '-')
        buf[k++] = '\n';
    p->i = last;
    json_t *v = json_stringn(buf, k);
    free(buf);
    return v ? v : yfail(p, "block scalar is not valid UTF-8");
}

/* A plain scalar that goes on over more-indented lines: folded with spaces. */
static json_t *parse_multiline_plain(yparser *p, const char *s, size_t n, int parent)
{
    size_t cap = n + 1, i = p->i;
    while (i < p->n && !p->l[i].blank && p->l[i].indent > parent)
        cap += p->l[i++].len + 1;
    if (i == p->i)
        return resolve_plain(s, n);
    char *buf = malloc(cap);
    if (!buf)
        return yfail(p, "out of memory");
    memcpy(buf, s, n);
    size_t k = n;
    for (; p->i < i; p->i++) {
        buf[k++] = ' ';
        memcpy(buf + k, p->l[p->i].s, p->l[p->i].len);
        k += p->l[p->i].len;
    }
    json_t *v = json_stringn(buf, k);
    free(buf);
    return v ? v : yfail(p, "scalar is not valid UTF-8");
}

/* The value after "key:" (or "- ") whose text is s[0..n) on line p->i - 1. */
static json_t *parse_value(yparser *p, const char *s, size_t n, int parent)
{
    if (n && (s[0] == '&' || s[0] == '*' || s[0] == '!'))
        return yfail(p, "anchors, aliases and tags are not read");
    if (n && (s[0] == '|' || s[0] == '>'))
        return parse_block_scalar(p, s, n, parent);
    if (n) {
        if (s[0] != '[' && s[0] != '{' && s[0] != '"' && s[0] != '\'')
            return parse_multiline_plain(p, s, n, parent);
        return parse_inline(p, s, n);
    }
    skip_blank(p);
    if (p->i >= p->n)
        return json_null();
    const yline *l = &p->l[p->i];
    if (l->indent > parent || (l->indent == parent && is_seq_item(l)))
        return parse_block(p, l->indent == parent ? parent : parent + 1);
    return json_null();
}

static json_t *parse_sequence(yparser *p, int indent)
{
    json_t *a = json_array();
    for (;;) {
        skip_blank(p);
        if (p->i >= p->n)
            break;
        yline *l = &p->l[p->i];
        if (l->indent != indent || !is_seq_item(l))
            break;
        size_t k = 1;
        while (k < l->len && l->s[k] == ' ')
            k++;
        json_t *v;
        if (k >= l->len) { /* "-" alone: the item is on the next lines */
            p->i++;
            v = parse_value(p, "", 0, indent);
        } else {
            /* the rest of the line is a node indented by k more columns:
             * re-read this line from there ("- key: v" starts a mapping) */
            yline saved = *l;
            l->s += k;
            l->len -= k;
            l->indent += (int)k;
            v = is_seq_item(l) || key_colon(l) >= 0 ? parse_block(p, l->indent) : NULL;
            if (!v && !p->err[0]) {
                p->i++;
                v = parse_value(p, l->s, l->len, indent);
            }
            *l = saved;
        }
        if (!v) {
            json_decref(a);
            return NULL;
        }
        json_array_append_new(a, v);
    }
    return a;
}

static json_t *parse_mapping(yparser *p, int indent)
{
    json_t *o = json_object();
    for (;;) {
        skip_blank(p);
        if (p->i >= p->n)
            break;
        const yline *l = &p->l[p->i];
        if (l->indent < indent)
            break;
        if (l->indent > indent) {
            json_decref(o);
            return yfail(p, "unexpected indentation");
        }
        if (is_seq_item(l))
            break;
        long c = key_colon(l);
        if (c < 0) {
            json_decref(o);
            return yfail(p, "expected \"key: value\"");
        }
        json_t *k;
        if (l->s[0] == '"' || l->s[0] == '\'') {
            const char *q = l->s;
            k = parse_quoted(p, &q, l->s + c);
        } else {
            size_t kl = (size_t)c;
            while (kl && (l->s[kl - 1] == ' ' || l->s[kl - 1] == '\t'))
                kl--;
            if (kl && (l->s[0] == '&' || l->s[0] == '*' || l->s[0] == '!' || l->s[0] == '?'))
                k = yfail(p, "anchors, aliases, tags and complex keys are not read");
            else
                k = json_stringn(l->s, kl);
        }
        if (!k) {
            json_decref(o);
            return p->err[0] ? NULL : yfail(p, "key is not valid UTF-8");
        }
        const char *vs = l->s + c + 1;
        size_t vn = l->len - (size_t)c - 1;
        while (vn && (*vs == ' ' || *vs == '\t')) {
            vs++;
            vn--;
        }
        p->i++;
        json_t *v = parse_value(p, vs, vn, indent);
        if (!v) {
            json_decref(k);
            json_decref(o);
            return NULL;
        }
        const char *ks = json_is_string(k) ? json_string_value(k) : "";
        json_object_set_new(o, ks, v); /* a repeated key: the last wins, as in PyYAML */
        json_decref(k);
    }
    return o;
}

/* The node starting at the next non-blank line, indented at least min_indent. */
static json_t *parse_block(yparser *p, int min_indent)
{
    if (++p->depth > MAX_DEPTH)
        return yfail(p, "nesting deeper than %d", MAX_DEPTH);
    skip_blank(p);
    json_t *v;
    if (p->i >= p->n || p->l[p->i].indent < min_indent) {
        v = json_null();
    } else {
        yline *l = &p->l[p->i];
        if (is_seq_item(l))
            v = parse_sequence(p, l->indent);
        else if (key_colon(l) >= 0)
            v = parse_mapping(p, l->indent);
        else {
            p->i++;
            v = parse_value(p, l->s, l->len, l->indent - 1);
        }
    }
    p->depth--;
    return v;
}

/* ---------------------------------------------------------------- API */

json_t *mf_hf_front_matter(const char *text, size_t n, char *err, size_t errlen)
{
    err[0] = 0;
    /* the first line must be exactly "---" */
    size_t e = 0;
    while (e < n && text[e] != '\n' && text[e] != '\r')
        e++;
    if (e != 3 || memcmp(text, "---", 3) != 0)
        return json_object();
    size_t b = e + (e + 1 < n && text[e] == '\r' && text[e + 1] == '\n' ? 2 : 1);
    if (b > n)
        b = n;
    /* up to the closing "---" line (or the end of the file) */
    size_t end = b;
    for (size_t pos = b; pos < n;) {
        size_t le = pos;
        while (le < n && text[le] != '\n' && text[le] != '\r')
            le++;
        if (le - pos == 3 && memcmp(text + pos, "---", 3) == 0)
            break;
        pos = le + (le + 1 < n && text[le] == '\r' && text[le + 1] == '\n' ? 2 : 1);
        end = pos > n ? n : pos;
    }
    yparser p = {.err = err, .errlen = errlen};
    json_t *root = NULL;
    if (split_lines(&p, text + b, end - b) == 0) {
        for (size_t i = 0; i < p.n && !root; i++)
            if (!p.l[i].blank && p.l[i].s[0] == '\t')
                root = yfail(&p, "tab used for indentation");
        if (!p.err[0]) {
            skip_blank(&p);
            root = p.i < p.n ? parse_block(&p, 0) : json_object();
            skip_blank(&p);
            if (root && p.i < p.n) {
                json_decref(root);
                root = yfail(&p, "unexpected text");
            }
        }
    }
    free(p.l);
    if (root && json_is_null(root)) {
        json_decref(root);
        root = json_object();
    }
    if (root && !json_is_object(root)) {
        json_decref(root);
        snprintf(err, errlen, "front matter is not a mapping");
        return NULL;
    }
    return root;
}
