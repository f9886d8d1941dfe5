/* json_pos.c - where a value sits in JSON text, for error messages that
 * name its byte. jansson keeps no positions once parsed, so the text is
 * walked again: a small scanner over text jansson already accepted
 * (RFC 8259 grammar), iterative, never past the span it is given. */
#include "core/core.h"

static size_t skip_ws(const char *t, size_t n, size_t i)
{
    while (i < n && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r'))
        i++;
    return i;
}

/* i at '"': the index past the closing quote (n if there is none). */
static size_t skip_string(const char *t, size_t n, size_t i)
{
    for (i++; i < n; i++) {
        if (t[i] == '\\')
            i++;
        else if (t[i] == '"')
            return i + 1;
    }
    return n;
}

size_t mf_json_skip_value(const char *t, size_t n, size_t i)
{
    if (i >= n)
        return n;
    if (t[i] == '"')
        return skip_string(t, n, i);
    if (t[i] == '{' || t[i] == '[') {
        size_t depth = 0;
        while (i < n) {
            char c = t[i];
            if (c == '"') {
                i = skip_string(t, n, i);
                continue;
            }
            if (c == '{' || c == '[')
                depth++;
            else if ((c == '}' || c == ']') && --depth == 0)
                return i + 1;
            i++;
        }
        return n;
    }
    while (i < n && t[i] != ',' && t[i] != '}' && t[i] != ']' && t[i] != ' ' &&
           t[i] != '\t' && t[i] != '\n' && t[i] != '\r')
        i++;
    return i;
}

static int hex4(const char *t, size_t n, size_t i, unsigned *out)
{
    unsigned v = 0;
    for (size_t k = 0; k < 4; k++) {
        if (i + k >= n)
            return -1;
        char c = t[i + k];
        unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0')
                     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                     : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10) : 16u;
        if (d > 15)
            return -1;
        v = v << 4 | d;
    }
    *out = v;
    return 0;
}

bool mf_json_string_is(const char *t, size_t n, size_t i, const char *key)
{
    static const char esc_from[] = "\"\\/bfnrt", esc_to[] = "\"\\/\b\f\n\r\t";
    const uint8_t *k = (const uint8_t *)key;
    for (i++; i < n && t[i] != '"';) {
        uint8_t buf[4];
        size_t len = 1;
        if (t[i] != '\\') {
            buf[0] = (uint8_t)t[i++];
        } else if (i + 1 < n && t[i + 1] == 'u') {
            unsigned cp, lo;
            if (hex4(t, n, i + 2, &cp))
                return false;
            i += 6;
            if (cp >= 0xd800 && cp < 0xdc00 && i + 1 < n && t[i] == '\\' && t[i + 1] == 'u' &&
                hex4(t, n, i + 2, &lo) == 0 && lo >= 0xdc00 && lo < 0xe000) {
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                i += 6;
            }
            len = mf_utf8_put(buf, cp);
        } else {
            const char *e = i + 1 < n && t[i + 1] ? strchr(esc_from, t[i + 1]) : NULL;
            if (!e)
                return false;
            buf[0] = (uint8_t)esc_to[e - esc_from];
            i += 2;
        }
        for (size_t b = 0; b < len; b++, k++)
            if (*k != buf[b])
                return false;
    }
    return i < n && *k == 0;
}

bool mf_json_next_member(const char *t, size_t n, size_t *i, size_t *key, size_t *value)
{
    size_t p = skip_ws(t, n, *i);
    if (p < n && (t[p] == '{' || t[p] == ','))
        p = skip_ws(t, n, p + 1);
    if (p >= n || t[p] != '"')
        return false;
    *key = p;
    p = skip_ws(t, n, skip_string(t, n, p));
    if (p >= n || t[p] != ':')
        return false;
    *value = skip_ws(t, n, p + 1);
    *i = skip_ws(t, n, mf_json_skip_value(t, n, *value));
    return *value < n;
}

int64_t mf_json_locate(const char *t, size_t n, size_t at, const mf_json_step *path,
                       size_t depth)
{
    size_t i = skip_ws(t, n, at);
    for (size_t d = 0; d < depth && i < n; d++) {
        if (path[d].key) { /* the last member of that name, as Python's json keeps */
            if (t[i] != '{')
                return -1;
            size_t it = i, key, value, found = n;
            while (mf_json_next_member(t, n, &it, &key, &value))
                if (mf_json_string_is(t, n, key, path[d].key))
                    found = value;
            i = found;
        } else {
            if (t[i] != '[')
                return -1;
            i = skip_ws(t, n, i + 1);
            for (size_t k = 0; k < path[d].index && i < n && t[i] != ']'; k++) {
                i = skip_ws(t, n, mf_json_skip_value(t, n, i));
                i = i < n && t[i] == ',' ? skip_ws(t, n, i + 1) : n;
            }
            if (i < n && t[i] == ']')
                return -1;
        }
    }
    return i < n ? (int64_t)i : -1;
}
