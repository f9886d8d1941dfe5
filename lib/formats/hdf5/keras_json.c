/* keras_json.c - Keras configs read as Python's json module reads them
 * (Keras parses config.json and the model_config attribute with
 * json.loads): NaN, Infinity and -Infinity are numbers, integers have no
 * size limit, lone surrogate escapes are kept, a UTF-8 BOM on bytes is
 * skipped. jansson refuses all of these, and a config it refused used to
 * hide its Lambda layers; here such tokens are rewritten (to 0, or to
 * U+FFFD, the same number of bytes) before jansson reads the text. What is
 * still refused (UTF-16/32 text, which json.loads of bytes also decodes)
 * is for the caller to treat as unreadable: never as harmless. */
#include "formats/hdf5/keras.h"
#include "core/json_build.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

static void blank(char *p, size_t n)
{
    p[0] = '0';
    memset(p + 1, ' ', n - 1);
}

static bool is_num_char(char c)
{
    return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

/* A number token at p[0..n): rewritten to 0 when jansson would refuse it
 * (an integer beyond int64, a real beyond double). */
static void fix_number(char *p, size_t n)
{
    bool real = false;
    for (size_t i = 0; i < n; i++)
        real |= p[i] == '.' || p[i] == 'e' || p[i] == 'E';
    char save = p[n];
    p[n] = 0;
    errno = 0;
    if (real) {
        double d = strtod(p, NULL);
        if (errno == ERANGE && isinf(d))
            blank(p, n);
    } else {
        (void)strtoll(p, NULL, 10);
        if (errno == ERANGE)
            blank(p, n);
    }
    p[n] = save;
}

static int hexv(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* The \uXXXX escape at p (p[0] == '\\'), or -1. */
static long u_escape(const char *p, size_t left)
{
    if (left < 6 || p[1] != 'u')
        return -1;
    long v = 0;
    for (int i = 2; i < 6; i++) {
        int h = hexv(p[i]);
        if (h < 0)
            return -1;
        v = v * 16 + h;
    }
    return v;
}

/* Inside a string from p[i] (after the quote): lone surrogates to U+FFFD;
 * returns the index after the closing quote. */
static size_t fix_string(char *p, size_t n, size_t i)
{
    while (i < n && p[i] != '"') {
        if (p[i] != '\\') {
            i++;
            continue;
        }
        long u = u_escape(p + i, n - i);
        if (u >= 0xd800 && u <= 0xdbff) {
            long lo = u_escape(p + i + 6, n - i - 6 > n ? 0 : n - i - 6);
            if (lo >= 0xdc00 && lo <= 0xdfff) {
                i += 12;
                continue;
            }
            memcpy(p + i, "\\uFFFD", 6);
        } else if (u >= 0xdc00 && u <= 0xdfff) {
            memcpy(p + i, "\\uFFFD", 6);
        }
        i += u >= 0 ? 6 : 2;
    }
    return i + 1;
}

json_t *mf_keras_json_load(const char *text, size_t n, json_error_t *err)
{
    if (n >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0) { /* json.loads(bytes): utf-8-sig */
        text += 3;
        n -= 3;
    }
    if (n >= 2 && (text[0] == 0 || text[1] == 0)) {
        if (err)
            snprintf(err->text, sizeof(err->text), "UTF-16 or UTF-32 text (Python's json reads it)");
        return NULL;
    }
    char *p = malloc(n + 1);
    if (!p) {
        if (err)
            snprintf(err->text, sizeof(err->text), "out of memory");
        return NULL;
    }
    memcpy(p, text, n);
    p[n] = 0;
    for (size_t i = 0; i < n;) {
        char c = p[i];
        if (c == '"') {
            i = fix_string(p, n, i + 1);
        } else if (c == 'N' && n - i >= 3 && memcmp(p + i, "NaN", 3) == 0) {
            blank(p + i, 3);
            i += 3;
        } else if (c == 'I' && n - i >= 8 && memcmp(p + i, "Infinity", 8) == 0) {
            blank(p + i, 8);
            i += 8;
        } else if (c == '-' && n - i >= 9 && memcmp(p + i, "-Infinity", 9) == 0) {
            blank(p + i, 9);
            i += 9;
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            size_t k = i + 1;
            while (k < n && is_num_char(p[k]))
                k++;
            fix_number(p + i, k - i);
            i = k;
        } else {
            i++;
        }
    }
    json_t *j = mf_json_loadb(p, n, JSON_DECODE_ANY | JSON_ALLOW_NUL, err);
    free(p);
    return j;
}
