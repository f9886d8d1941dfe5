/* json_out.c - streaming JSON output in exactly the bytes jansson's
 * json_dumpf(JSON_INDENT(2)) gives (see json_out.h). */
#include "json_out.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

static void jo_flush(jout *j)
{
    if (j->n)
        fwrite(j->buf, 1, j->n, j->f);
    j->n = 0;
}

static void jo_put(jout *j, const char *s, size_t n)
{
    if (n > sizeof(j->buf) - j->n) {
        jo_flush(j);
        if (n > sizeof(j->buf)) {
            fwrite(s, 1, n, j->f);
            return;
        }
    }
    memcpy(j->buf + j->n, s, n);
    j->n += n;
}

static void jo_putc(jout *j, char c)
{
    if (j->n == sizeof(j->buf))
        jo_flush(j);
    j->buf[j->n++] = c;
}

void jo_init(jout *j, FILE *f)
{
    memset(j, 0, sizeof(*j));
    j->f = f;
}

void jo_finish(jout *j)
{
    jo_putc(j, '\n');
    jo_flush(j);
}

/* Before a value or key: "," after a sibling, then newline and indent
 * (jansson: two spaces per level); nothing right after a key. */
static void jo_prefix(jout *j)
{
    if (j->after_key) {
        j->after_key = false;
        return;
    }
    if (j->depth == 0)
        return;
    if (j->count[j->depth]++)
        jo_putc(j, ',');
    jo_putc(j, '\n');
    for (int i = 0; i < j->depth; i++)
        jo_put(j, "  ", 2);
}

static void jo_open(jout *j, char c)
{
    jo_prefix(j);
    jo_putc(j, c);
    if (j->depth + 1 < JO_MAX_DEPTH)
        j->depth++;
    j->count[j->depth] = 0;
}

static void jo_close(jout *j, char c)
{
    bool had = j->count[j->depth] != 0;
    if (j->depth > 0)
        j->depth--;
    if (had) {
        jo_putc(j, '\n');
        for (int i = 0; i < j->depth; i++)
            jo_put(j, "  ", 2);
    }
    jo_putc(j, c);
}

void jo_begin_object(jout *j) { jo_open(j, '{'); }
void jo_end_object(jout *j) { jo_close(j, '}'); }
void jo_begin_array(jout *j) { jo_open(j, '['); }
void jo_end_array(jout *j) { jo_close(j, ']'); }

/* A valid UTF-8 string, escaped as jansson does without JSON_ENSURE_ASCII:
 * '"', '\\' and control characters only (\b \f \n \r \t, else \u00XX). */
static void put_escaped(jout *j, const char *s, size_t n)
{
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        jo_put(j, s + run, i - run);
        run = i + 1;
        char seq[8];
        const char *e = seq;
        switch (c) {
        case '"': e = "\\\""; break;
        case '\\': e = "\\\\"; break;
        case '\b': e = "\\b"; break;
        case '\f': e = "\\f"; break;
        case '\n': e = "\\n"; break;
        case '\r': e = "\\r"; break;
        case '\t': e = "\\t"; break;
        default: snprintf(seq, sizeof(seq), "\\u%04X", c); break;
        }
        jo_put(j, e, strlen(e));
    }
    jo_put(j, s + run, n - run);
}

/* cli_json_string's reading: invalid UTF-8 bytes become U+FFFD each. */
static void put_string(jout *j, const char *s, size_t n)
{
    jo_putc(j, '"');
    size_t i = 0;
    while (i < n) {
        int64_t bad = mf_utf8_check((const uint8_t *)s + i, n - i);
        size_t good = bad < 0 ? n - i : (size_t)bad;
        put_escaped(j, s + i, good);
        i += good;
        if (i < n) {
            jo_put(j, "\xef\xbf\xbd", 3);
            i++;
        }
    }
    jo_putc(j, '"');
}

bool jo_key(jout *j, const char *key)
{
    if (mf_utf8_check((const uint8_t *)key, strlen(key)) >= 0)
        return false; /* json_object_set_new refuses such a key */
    jo_prefix(j);
    put_string(j, key, strlen(key));
    jo_put(j, ": ", 2);
    j->after_key = true;
    return true;
}

void jo_string(jout *j, const char *s, size_t n)
{
    jo_prefix(j);
    put_string(j, s, n);
}


/* Decimal digits of n (no leading zeros; "0" for 0): one 128-bit division,
 * then 64-bit ones, which compile to multiplications. */
static int u128_digits(unsigned __int128 n, char *d)
{
    const uint64_t e19 = 10000000000000000000ull;
    char tmp[48];
    int k = 0;
    uint64_t hi = (uint64_t)(n / e19), lo = (uint64_t)(n % e19);
    bool top = hi == 0;
    for (int i = 0; i < 19 && (!top || lo || i == 0); i++) {
        tmp[k++] = (char)('0' + lo % 10);
        lo /= 10;
    }
    for (; hi; hi /= 10)
        tmp[k++] = (char)('0' + hi % 10);
    for (int i = 0; i < k; i++)
        d[i] = tmp[k - 1 - i];
    return k;
}

/* printf("%.17g", v) for the doubles whose exact value m * 2^e fits an
 * exact integer N = m * 5^k (v = N / 10^k) in 128 bits, which covers every
 * F32 metadata value of ordinary size: all digits exact, rounded half to
 * even as glibc rounds. -1: not handled (zero, subnormal, inf/NaN, too large
 * or too small), use snprintf. */
static int g17(double v, char *out)
{
    uint64_t bits;
    memcpy(&bits, &v, 8);
    int bexp = (int)((bits >> 52) & 0x7ff);
    if (bexp == 0 || bexp == 0x7ff)
        return -1;
    uint64_t m = (bits & ((1ull << 52) - 1)) | (1ull << 52);
    int e = bexp - 1075, tz = __builtin_ctzll(m);
    m >>= tz;
    e += tz;
    int mbits = 64 - __builtin_clzll(m), k = 0;
    unsigned __int128 n = m;
    if (e >= 0) {
        if (mbits + e > 127)
            return -1;
        n <<= e;
    } else {
        k = -e; /* log2(5) < 2.33 */
        if (mbits + (k * 233 + 99) / 100 > 127)
            return -1;
        for (int i = 0; i < k; i++)
            n *= 5;
    }
    char d[48];
    int nd = u128_digits(n, d), x = nd - 1 - k; /* x: exponent of the first digit */
    if (nd > 17) {
        bool rest = false;
        for (int i = 18; i < nd; i++)
            rest |= d[i] != '0';
        bool up = d[17] > '5' || (d[17] == '5' && (rest || ((d[16] - '0') & 1)));
        nd = 17;
        for (int i = 16; up && i >= 0; i--) {
            if (d[i] == '9') {
                d[i] = '0';
            } else {
                d[i]++;
                up = false;
            }
        }
        if (up) { /* 99...9 carried into a new digit */
            d[0] = '1';
            x++;
        }
    }
    while (nd > 1 && d[nd - 1] == '0')
        nd--; /* %g drops trailing zeros */
    int o = 0;
    if (bits >> 63)
        out[o++] = '-';
    if (x < -4 || x >= 17) {
        out[o++] = d[0];
        if (nd > 1) {
            out[o++] = '.';
            memcpy(out + o, d + 1, (size_t)(nd - 1));
            o += nd - 1;
        }
        o += snprintf(out + o, 8, "e%c%02d", x < 0 ? '-' : '+', x < 0 ? -x : x);
    } else if (x >= 0) {
        for (int i = 0; i <= x; i++)
            out[o++] = i < nd ? d[i] : '0';
        if (nd > x + 1) {
            out[o++] = '.';
            memcpy(out + o, d + x + 1, (size_t)(nd - x - 1));
            o += nd - x - 1;
        }
    } else {
        out[o++] = '0';
        out[o++] = '.';
        for (int i = 0; i < -x - 1; i++)
            out[o++] = '0';
        memcpy(out + o, d, (size_t)nd);
        o += nd;
    }
    out[o] = 0;
    return o;
}

int jo_format_real(double v, char b[64])
{
    int k = g17(v, b);
    if (k < 0)
        k = snprintf(b, 64, "%.17g", v);
    if (k < 0 || k >= 64 - 3)
        k = 0;
    b[k] = 0;
    /* jansson's jsonp_dtostr: ".0" added when it reads as an integer, the
     * exponent without '+' and leading zeros */
    if (!strchr(b, '.') && !strchr(b, 'e')) {
        memcpy(b + k, ".0", 3);
        k += 2;
    }
    char *e = strchr(b, 'e');
    if (e) {
        char *start = e + 1, *end = e + 2;
        if (*start == '-')
            start++;
        while (*end == '0')
            end++;
        if (end != start) {
            memmove(start, end, (size_t)(b + k - end) + 1);
            k -= (int)(end - start);
        }
    }
    return k;
}

void jo_int(jout *j, long long v)
{
    char b[24];
    int k = sizeof(b);
    unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
    do {
        b[--k] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        b[--k] = '-';
    jo_prefix(j);
    jo_put(j, b + k, sizeof(b) - (size_t)k);
}

void jo_real(jout *j, double v)
{
    char b[64];
    int k = jo_format_real(v, b);
    jo_prefix(j);
    jo_put(j, b, (size_t)k);
}

void jo_bool(jout *j, bool v)
{
    jo_prefix(j);
    jo_put(j, v ? "true" : "false", v ? 4 : 5);
}

void jo_null(jout *j)
{
    jo_prefix(j);
    jo_put(j, "null", 4);
}

/* cli_json_value, written out instead of built. */
void jo_value(jout *j, const mf_value *v)
{
    switch (v->type) {
    case MF_V_U8: case MF_V_U16: case MF_V_U32: case MF_V_U64:
        if (v->as.u > INT64_MAX)
            jo_real(j, (double)v->as.u);
        else
            jo_int(j, (long long)v->as.u);
        return;
    case MF_V_I8: case MF_V_I16: case MF_V_I32: case MF_V_I64: jo_int(j, (long long)v->as.i); return;
    case MF_V_F32: case MF_V_F64:
        if (!isfinite(v->as.f)) { /* JSON has no NaN/inf: give them as text */
            const char *s = isnan(v->as.f) ? "nan" : v->as.f > 0 ? "inf" : "-inf";
            jo_string(j, s, strlen(s));
        } else {
            jo_real(j, v->as.f);
        }
        return;
    case MF_V_BOOL: jo_bool(j, v->as.b); return;
    case MF_V_STR: jo_string(j, v->as.s.ptr, v->as.s.len); return;
    case MF_V_ARR:
        jo_begin_array(j);
        for (size_t i = 0; i < v->as.arr.n; i++)
            jo_value(j, &v->as.arr.items[i]);
        jo_end_array(j);
        return;
    default: jo_null(j); return;
    }
}

void jo_json(jout *j, const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        const char *k;
        json_t *x;
        jo_begin_object(j);
        json_object_foreach((json_t *)v, k, x)
            if (jo_key(j, k))
                jo_json(j, x);
        jo_end_object(j);
        return;
    }
    case JSON_ARRAY:
        jo_begin_array(j);
        for (size_t i = 0; i < json_array_size(v); i++)
            jo_json(j, json_array_get(v, i));
        jo_end_array(j);
        return;
    case JSON_STRING: jo_string(j, json_string_value(v), json_string_length(v)); return;
    case JSON_INTEGER: jo_int(j, (long long)json_integer_value(v)); return;
    case JSON_REAL: jo_real(j, json_real_value(v)); return;
    case JSON_TRUE: jo_bool(j, true); return;
    case JSON_FALSE: jo_bool(j, false); return;
    default: jo_null(j); return;
    }
}

bool jo_key_json(jout *j, const char *key, json_t *v)
{
    bool ok = v && jo_key(j, key);
    if (ok)
        jo_json(j, v);
    json_decref(v);
    return ok;
}

/* ------------------------------------------ --json / --jsonl per path */

int cli_json_mode_of(const cli_args *a, cli_json_mode *m)
{
    bool json = false, jsonl = false;
    for (int i = 0; i < a->n_opts; i++) {
        json |= strcmp(a->opt[i].name, "--json") == 0;
        jsonl |= strcmp(a->opt[i].name, "--jsonl") == 0;
    }
    if (json && jsonl)
        return cli_usage_error(a->cmd->name, "--json and --jsonl exclude each other");
    *m = jsonl ? CLI_JSONL : json ? CLI_JSON : CLI_TEXT;
    return 0;
}

static size_t json_list_items;

void cli_json_list_item(bool many)
{
    if (many)
        fputs(json_list_items++ ? ",\n" : "[\n", stdout);
}

void cli_json_list_end(bool many)
{
    if (many)
        fputs(json_list_items ? "]\n" : "[]\n", stdout);
}

void cli_json_emit(cli_json_mode m, json_t *all, json_t *obj)
{
    if (m == CLI_JSONL)
        cli_print_jsonl(obj);
    else if (all)
        json_array_append_new(all, obj);
    else
        cli_print_json(obj);
}
