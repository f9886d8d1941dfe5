/* pyjson.c - CPython's json.dump(obj, f, indent=N) text (Lib/json/encoder.py:
 * ensure_ascii escapes, item separator "," and key separator ": " when an
 * indent is given, empty containers as {} and []; float.__repr__). */
#include "ops/pyjson.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct buf {
    char *p;
    size_t n, cap;
    bool oom;
} buf;

static void put(buf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n + 1)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

static void puts_(buf *b, const char *s)
{
    put(b, s, strlen(s));
}

static void put_u16(buf *b, unsigned u)
{
    char t[16];
    snprintf(t, sizeof(t), "\\u%04x", u & 0xffffu);
    puts_(b, t);
}

/* One UTF-8 sequence starting at s (n bytes left): the code point and its
 * length; an invalid byte stands for itself (jansson only holds valid UTF-8). */
static unsigned utf8_next(const unsigned char *s, size_t n, size_t *len)
{
    unsigned c = s[0];
    int k = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : c >= 0xc0 ? 1 : 0;
    if ((size_t)k >= n) {
        *len = 1;
        return c;
    }
    unsigned cp = k == 0 ? c : c & (0x3fu >> k);
    for (int i = 1; i <= k; i++)
        cp = (cp << 6) | (s[i] & 0x3fu);
    *len = (size_t)k + 1;
    return cp;
}

/* encoder.py py_encode_basestring_ascii */
static void put_string(buf *b, const char *s, size_t n)
{
    put(b, "\"", 1);
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        const char *esc = c == '"' ? "\\\"" : c == '\\' ? "\\\\" : c == '\n' ? "\\n"
                        : c == '\r' ? "\\r" : c == '\t' ? "\\t" : c == '\b' ? "\\b"
                        : c == '\f' ? "\\f" : NULL;
        if (esc) {
            puts_(b, esc);
            i++;
        } else if (c >= 0x20 && c < 0x7f) {
            put(b, s + i, 1);
            i++;
        } else {
            size_t len;
            unsigned cp = utf8_next((const unsigned char *)s + i, n - i, &len);
            if (cp >= 0x10000) {
                cp -= 0x10000;
                put_u16(b, 0xd800 | (cp >> 10));
                put_u16(b, 0xdc00 | (cp & 0x3ff));
            } else {
                put_u16(b, cp);
            }
            i += len;
        }
    }
    put(b, "\"", 1);
}

/* float.__repr__: the shortest digits that read back as v (the nearest
 * such decimal: what %.*e gives at that precision), then Python's layout
 * (Python/pystrtod.c format_float_short, mode 'r'): an exponent when the
 * decimal point is at or before the 4th place after or past the 16th
 * digit, "e-05" style; else plain digits with ".0" when integral. */
static void put_float(buf *b, double v)
{
    if (isnan(v)) {
        puts_(b, "NaN");
        return;
    }
    if (isinf(v)) {
        puts_(b, v < 0 ? "-Infinity" : "Infinity");
        return;
    }
    if (v == 0) {
        puts_(b, signbit(v) ? "-0.0" : "0.0");
        return;
    }
    char e[40];
    for (int p = 0; p < 17; p++) {
        snprintf(e, sizeof(e), "%.*e", p, v);
        if (strtod(e, NULL) == v)
            break;
    }
    /* e: [-]d[.ddd]e[+-]XX */
    const char *s = e;
    bool neg = *s == '-';
    if (neg)
        s++;
    char digits[24];
    size_t nd = 0;
    for (; *s && *s != 'e'; s++)
        if (*s != '.' && nd < sizeof(digits) - 1)
            digits[nd++] = *s;
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    digits[nd] = 0;
    int decpt = atoi(s + 1) + 1; /* v = 0.DIGITS * 10^decpt */
    char out[64];
    size_t k = 0;
    if (neg)
        out[k++] = '-';
    if (decpt <= -4 || decpt > 16) {
        out[k++] = digits[0];
        if (nd > 1) {
            out[k++] = '.';
            memcpy(out + k, digits + 1, nd - 1);
            k += nd - 1;
        }
        snprintf(out + k, sizeof(out) - k, "e%c%02d", decpt - 1 < 0 ? '-' : '+',
                 abs(decpt - 1));
    } else if (decpt <= 0) {
        out[k++] = '0';
        out[k++] = '.';
        for (int i = 0; i < -decpt; i++)
            out[k++] = '0';
        snprintf(out + k, sizeof(out) - k, "%s", digits);
    } else if ((size_t)decpt >= nd) {
        memcpy(out + k, digits, nd);
        k += nd;
        for (int i = (int)nd; i < decpt; i++)
            out[k++] = '0';
        snprintf(out + k, sizeof(out) - k, ".0");
    } else {
        memcpy(out + k, digits, (size_t)decpt);
        k += (size_t)decpt;
        out[k++] = '.';
        snprintf(out + k, sizeof(out) - k, "%s", digits + decpt);
    }
    puts_(b, out);
}

static void newline(buf *b, int indent, int depth)
{
    put(b, "\n", 1);
    for (int i = 0; i < indent * depth; i++)
        put(b, " ", 1);
}

static void put_value(buf *b, const json_t *j, int indent, int depth)
{
    char t[32];
    switch (json_typeof(j)) {
    case JSON_OBJECT: {
        if (json_object_size(j) == 0) {
            puts_(b, "{}");
            return;
        }
        puts_(b, "{");
        const char *key;
        json_t *v;
        bool first = true;
        json_object_foreach((json_t *)j, key, v) {
            if (!first)
                puts_(b, ",");
            first = false;
            newline(b, indent, depth + 1);
            put_string(b, key, strlen(key));
            puts_(b, ": ");
            put_value(b, v, indent, depth + 1);
        }
        newline(b, indent, depth);
        puts_(b, "}");
        return;
    }
    case JSON_ARRAY:
        if (json_array_size(j) == 0) {
            puts_(b, "[]");
            return;
        }
        puts_(b, "[");
        for (size_t i = 0; i < json_array_size(j); i++) {
            if (i)
                puts_(b, ",");
            newline(b, indent, depth + 1);
            put_value(b, json_array_get(j, i), indent, depth + 1);
        }
        newline(b, indent, depth);
        puts_(b, "]");
        return;
    case JSON_STRING:
        put_string(b, json_string_value(j), json_string_length(j));
        return;
    case JSON_INTEGER:
        snprintf(t, sizeof(t), "%" JSON_INTEGER_FORMAT, json_integer_value(j));
        puts_(b, t);
        return;
    case JSON_REAL:
        put_float(b, json_real_value(j));
        return;
    case JSON_TRUE:
        puts_(b, "true");
        return;
    case JSON_FALSE:
        puts_(b, "false");
        return;
    case JSON_NULL:
        puts_(b, "null");
        return;
    }
}

char *mf_pyjson_dumps(const json_t *j, int indent)
{
    buf b = {0};
    put_value(&b, j, indent, 0);
    if (b.oom || !b.p) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

int mf_pyjson_write(const char *path, const json_t *j, int indent, mf_status *st)
{
    char *text = mf_pyjson_dumps(j, indent);
    if (!text)
        return mf_oom(st, path);
    mf_atomic *w;
    int rc = mf_atomic_open(path, &w, st);
    if (rc == 0) {
        rc = mf_atomic_write(w, text, strlen(text), st);
        rc = rc == 0 ? mf_atomic_commit(w, st) : (mf_atomic_abort(w), -1);
    }
    free(text);
    return rc;
}
