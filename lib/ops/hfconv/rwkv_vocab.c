/* rwkv_vocab.c - the RWKV "world" vocabulary file (rwkv_vocab_v20230424.txt)
 * as llama.cpp's converter reads it (Rwkv6Model.set_vocab at c392e509) and
 * back. Each line is "ID LITERAL LENGTH": LITERAL a Python str or bytes
 * literal (ast.literal_eval), the token its bytes (a str encoded as UTF-8),
 * LENGTH their count. The GGUF token text is repr(bytes)[2:-1]: Python's
 * bytes repr without b and the quotes. No code runs: the literal is parsed
 * here, escapes by the Python language reference (string and bytes
 * literals); \N{...} names are refused. */
#include "ops/hfconv/rwkv_vocab.h"
#include "core/cursor.h"

#include <stdlib.h>
#include <string.h>

static int hexval(int ch)
{
    return ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
                                          : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
}

/* A code point as UTF-8 into out (4 bytes room); its length, 0 when
 * str.encode("utf-8") refuses it (a surrogate, or past U+10FFFF). */
static size_t utf8_put(uint32_t cp, uint8_t *out)
{
    return (cp >= 0xd800 && cp < 0xe000) || cp > 0x10ffff ? 0 : mf_utf8_put(out, cp);
}

/* One escape sequence after the backslash at s (s < e): its bytes into out
 * (a str's code points as UTF-8), how many source bytes it took; 0: not one
 * this reader takes. */
static size_t unescape(const char *s, const char *e, bool bytes, uint8_t *out, size_t *n_out)
{
    static const char simple[] = "\\\\''\"\"a\ab\bf\fn\nr\rt\tv\v";
    for (size_t i = 0; simple[i]; i += 2)
        if (*s == simple[i]) {
            out[0] = (uint8_t)simple[i + 1];
            *n_out = 1;
            return 1;
        }
    uint32_t cp = 0;
    size_t digits = 0, used = 0;
    if (*s >= '0' && *s <= '7') { /* octal, up to three digits */
        while (used < 3 && s + used < e && s[used] >= '0' && s[used] <= '7')
            cp = cp * 8 + (uint32_t)(s[used++] - '0');
        if (bytes && cp > 0xff)
            return 0;
    } else {
        digits = *s == 'x' ? 2 : (!bytes && *s == 'u') ? 4 : (!bytes && *s == 'U') ? 8 : 0;
        if (!digits || e - s < (ptrdiff_t)(digits + 1))
            return 0;
        for (size_t i = 1; i <= digits; i++) {
            int h = hexval((unsigned char)s[i]);
            if (h < 0)
                return 0;
            cp = cp * 16 + (uint32_t)h;
        }
        used = digits + 1;
    }
    if (bytes) {
        out[0] = (uint8_t)cp;
        *n_out = 1;
        return used;
    }
    *n_out = utf8_put(cp, out);
    return *n_out ? used : 0;
}

/* A Python str or bytes literal [s, e) to its bytes (malloc'd); -1 when it
 * is not one. */
static int parse_literal(const char *s, const char *e, uint8_t **tok, size_t *n)
{
    bool bytes = s < e && (*s == 'b' || *s == 'B');
    s += bytes;
    if (e - s < 2 || (*s != '\'' && *s != '"') || e[-1] != *s)
        return -1;
    char q = *s++;
    e--;
    uint8_t *out = malloc((size_t)(e - s) * 4 + 1);
    if (!out)
        return -2;
    size_t k = 0;
    while (s < e) {
        if (*s == q) { /* a quote inside: not one literal */
            free(out);
            return -1;
        }
        if (*s != '\\') {
            if (bytes && (unsigned char)*s >= 0x80) { /* bytes can only contain ASCII literal characters */
                free(out);
                return -1;
            }
            out[k++] = (uint8_t)*s++;
            continue;
        }
        size_t w = 0, used = s + 1 < e ? unescape(s + 1, e, bytes, out + k, &w) : 0;
        if (!used) {
            free(out);
            return -1;
        }
        k += w;
        s += 1 + used;
    }
    *tok = out;
    *n = k;
    return 0;
}

size_t mf_rwkv_repr(const uint8_t *b, size_t n, char *out)
{
    bool sq = memchr(b, '\'', n) != NULL, dq = memchr(b, '"', n) != NULL;
    char q = sq && !dq ? '"' : '\''; /* bytes.__repr__'s choice of quote */
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t c = b[i];
        if (c == (uint8_t)q || c == '\\') {
            out[k++] = '\\';
            out[k++] = (char)c;
        } else if (c == '\t' || c == '\n' || c == '\r') {
            out[k++] = '\\';
            out[k++] = c == '\t' ? 't' : c == '\n' ? 'n' : 'r';
        } else if (c < 0x20 || c >= 0x7f) {
            static const char hx[] = "0123456789abcdef";
            out[k++] = '\\';
            out[k++] = 'x';
            out[k++] = hx[c >> 4];
            out[k++] = hx[c & 15];
        } else {
            out[k++] = (char)c;
        }
    }
    out[k] = 0;
    return k;
}

int mf_rwkv_unrepr(const char *text, size_t n, uint8_t *out, size_t *n_out)
{
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        if (text[i] != '\\') {
            out[k++] = (uint8_t)text[i++];
            continue;
        }
        size_t w = 0, used = i + 1 < n ? unescape(text + i + 1, text + n, true, out + k, &w) : 0;
        if (!used)
            return -1;
        k += w;
        i += 1 + used;
    }
    *n_out = k;
    return 0;
}

int mf_rwkv_read_vocab(const char *path, const uint8_t *data, size_t size, mf_rwkv_token **tokens, size_t *count,
                       mf_status *st)
{
    mf_rwkv_token *v = NULL;
    size_t n = 0, cap = 0, line = 0;
    for (size_t pos = 0; pos < size; line++) {
        const uint8_t *nl = memchr(data + pos, '\n', size - pos);
        size_t end = nl ? (size_t)(nl - data) : size, next = nl ? end + 1 : size;
        const char *s = (const char *)data + pos, *e = (const char *)data + end;
        /* parts = line.split(' '): the id, the literal (the middle parts), the length */
        const char *sp1 = memchr(s, ' ', (size_t)(e - s)), *sp2 = e;
        while (sp2 > s && sp2[-1] != ' ')
            sp2--;
        if (!sp1 || sp2 <= sp1 + 1)
            goto bad;
        char *endp;
        char len_text[24];
        size_t ll = (size_t)(e - sp2);
        if (ll == 0 || ll >= sizeof(len_text))
            goto bad;
        memcpy(len_text, sp2, ll);
        len_text[ll] = 0;
        long want = strtol(len_text, &endp, 10);
        if (*endp || want < 0)
            goto bad;
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 1024;
            mf_rwkv_token *g = realloc(v, nc * sizeof(*v));
            if (!g) {
                mf_rwkv_free(v, n);
                return mf_oom(st, path);
            }
            v = g;
            cap = nc;
        }
        int rc = parse_literal(sp1 + 1, sp2 - 1, &v[n].bytes, &v[n].n);
        if (rc == -2) {
            mf_rwkv_free(v, n);
            return mf_oom(st, path);
        }
        if (rc)
            goto bad;
        n++;
        if (v[n - 1].n != (size_t)want) { /* assert len(token) == token_len */
            size_t got = v[n - 1].n;
            mf_rwkv_free(v, n);
            return mf_fail(st, MF_ERR_FORMAT, path, (int64_t)pos, "line %zu: the token has %zu bytes, the line says %ld",
                           line + 1, got, want);
        }
        pos = next;
        continue;
    bad:
        mf_rwkv_free(v, n);
        return mf_fail(st, MF_ERR_FORMAT, path, (int64_t)pos,
                       "line %zu: not \"ID LITERAL LENGTH\" with a Python str or bytes literal", line + 1);
    }
    *tokens = v;
    *count = n;
    return 0;
}

void mf_rwkv_free(mf_rwkv_token *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        free(v[i].bytes);
    free(v);
}
