/* tiktoken.c - tiktoken BPE files and merges (tiktoken.h). The file
 * format and the merge are facts from the families' tokenization code
 * (Qwen's tokenization_qwen.py, GLM-4's tokenization_chatglm.py:
 * _load_tiktoken_bpe) and convert_hf_to_gguf.py's QwenModel.bpe (llama.cpp
 * c392e50). */
#include "ops/hfconv/tiktoken.h"
#include "ops/hfconv/bpe_encode.h"

#include <stdlib.h>
#include <string.h>

static uint64_t fnv1a(const uint8_t *b, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

/* The slot of b: where it is, or the empty slot where it would go. */
static size_t find_slot(const mf_tiktoken *t, const uint8_t *b, size_t n)
{
    size_t i = (size_t)fnv1a(b, n) & (t->cap - 1);
    while (t->slot[i]) {
        const mf_tt_entry *e = &t->v[t->slot[i] - 1];
        if (e->n == n && !memcmp(e->bytes, b, n))
            break;
        i = (i + 1) & (t->cap - 1);
    }
    return i;
}

int64_t mf_tiktoken_rank(const mf_tiktoken *t, const uint8_t *b, size_t n)
{
    if (!t->cap)
        return -1;
    size_t i = find_slot(t, b, n);
    return t->slot[i] ? t->v[t->slot[i] - 1].rank : -1;
}

static int b64_value(int c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* Standard base64 with '=' padding; false when s is not that. */
static bool b64_decode(const char *s, size_t n, uint8_t *out, size_t *n_out)
{
    if (n % 4)
        return false;
    size_t k = 0;
    for (size_t i = 0; i < n; i += 4) {
        int v[4];
        int pad = 0;
        for (int j = 0; j < 4; j++) {
            if (s[i + j] == '=' && i + 4 == n && j >= 2) {
                v[j] = 0;
                pad++;
            } else if (pad || (v[j] = b64_value((unsigned char)s[i + j])) < 0) {
                return false;
            }
        }
        uint32_t w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | (uint32_t)v[3];
        out[k++] = (uint8_t)(w >> 16);
        if (pad < 2)
            out[k++] = (uint8_t)(w >> 8);
        if (pad < 1)
            out[k++] = (uint8_t)w;
    }
    *n_out = k;
    return true;
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\v' || c == '\f';
}

/* Doubles the slots and the entries with them (entries: half the slots,
 * the load the caller keeps), so that reading N lines copies O(N) entries:
 * growing the entries one by one was quadratic where realloc cannot remap
 * in place (151,643 lines ran over 20 minutes under AddressSanitizer). */
static int grow_table(mf_tiktoken *t, mf_status *st, const char *path)
{
    size_t cap = t->cap ? t->cap * 2 : 1024;
    mf_tt_entry *v = realloc(t->v, cap / 2 * sizeof(*v));
    if (!v)
        return mf_oom(st, path);
    t->v = v;
    size_t *slot = calloc(cap, sizeof(size_t));
    if (!slot)
        return mf_oom(st, path);
    free(t->slot);
    t->slot = slot;
    t->cap = cap;
    for (size_t e = 0; e < t->n; e++)
        t->slot[find_slot(t, t->v[e].bytes, t->v[e].n)] = e + 1;
    return 0;
}

/* One "TOKEN RANK" line (line: its bytes, no line break). */
static int read_line(mf_tiktoken *t, const char *path, const char *line, size_t len, size_t off, size_t lineno,
                     mf_status *st)
{
    size_t a = 0;
    while (a < len && is_space(line[a]))
        a++;
    size_t b = a;
    while (b < len && !is_space(line[b]))
        b++;
    size_t c = b;
    while (c < len && is_space(line[c]))
        c++;
    size_t d = c;
    while (d < len && !is_space(line[d]))
        d++;
    size_t e = d;
    while (e < len && is_space(line[e]))
        e++;
    if (a == b || c == d || e != len)
        return mf_fail(st, MF_ERR_FORMAT, path, (int64_t)off, "line %zu: not \"BASE64TOKEN RANK\"", lineno);
    int64_t rank = 0;
    for (size_t i = c; i < d; i++) {
        if (line[i] < '0' || line[i] > '9' || rank > (INT64_C(1) << 40))
            return mf_fail(st, MF_ERR_FORMAT, path, (int64_t)(off + c), "line %zu: the rank is not a "
                           "non-negative integer below 2^40", lineno);
        rank = rank * 10 + (line[i] - '0');
    }
    char where[48];
    snprintf(where, sizeof(where), "line %zu", lineno);
    return mf_tiktoken_add_b64(t, line + a, b - a, rank, path, (int64_t)(off + a), where, st);
}

int mf_tiktoken_add_b64(mf_tiktoken *t, const char *b64, size_t len, int64_t rank, const char *path, int64_t err_off,
                        const char *where, mf_status *st)
{
    uint8_t *bytes = malloc(len / 4 * 3 + 1);
    size_t n = 0;
    if (!bytes)
        return mf_oom(st, path);
    if (!b64_decode(b64, len, bytes, &n) || n == 0) {
        free(bytes);
        return mf_fail(st, MF_ERR_FORMAT, path, err_off, "%s: the token is not base64 of one or more bytes", where);
    }
    if (2 * (t->n + 1) > t->cap && grow_table(t, st, path)) {
        free(bytes);
        return -1;
    }
    size_t s = find_slot(t, bytes, n);
    if (t->slot[s]) {
        free(bytes);
        return mf_fail(st, MF_ERR_FORMAT, path, err_off, "%s: the token of line-rank %lld again", where,
                       (long long)t->v[t->slot[s] - 1].rank);
    }
    t->v[t->n] = (mf_tt_entry){bytes, n, rank}; /* room: 2 (n + 1) <= cap, cap / 2 entries */
    t->slot[s] = ++t->n;
    if (rank > t->max_rank)
        t->max_rank = rank;
    return 0;
}

static int cmp_rank_line(const void *a, const void *b)
{
    const int64_t *x = a, *y = b; /* {rank, line} */
    return x[0] != y[0] ? (x[0] < y[0] ? -1 : 1) : (x[1] < y[1] ? -1 : x[1] > y[1]);
}

/* Ranks must be distinct: tiktoken's CoreBPE refuses duplicates. Sorted,
 * not marked in a table of max_rank bytes: the memory is the lines', never
 * a size one rank in the file asks for. */
static int distinct_ranks(const mf_tiktoken *t, const char *path, mf_status *st)
{
    if (t->max_rank >= (int64_t)(1u << 30))
        return mf_fail(st, MF_ERR_FORMAT, path, -1, "rank %lld: larger than any vocabulary mfmt converts",
                       (long long)t->max_rank);
    int64_t *v = malloc(t->n * 2 * sizeof(*v));
    if (!v)
        return mf_oom(st, path);
    for (size_t i = 0; i < t->n; i++)
        v[2 * i] = t->v[i].rank, v[2 * i + 1] = (int64_t)i + 1;
    qsort(v, t->n, 2 * sizeof(*v), cmp_rank_line);
    int rc = 0;
    for (size_t i = 1; i < t->n && rc == 0; i++)
        if (v[2 * i] == v[2 * i - 2])
            rc = mf_fail(st, MF_ERR_FORMAT, path, -1, "rank %lld is given to two tokens (lines %lld and %lld)",
                         (long long)v[2 * i], (long long)v[2 * i - 1], (long long)v[2 * i + 1]);
    free(v);
    return rc;
}

/* The merges of a token of n bytes cost about n^2 rank lookups
 * (mf_tiktoken_split, QwenModel.bpe's loop): the tokens' n^2 summed is
 * bounded so that a file of long tokens is refused rather than run for
 * hours. Vocabularies' tokens are a few bytes each: test_arch_file's
 * 151,643-rank Qwen file sums to 1.1 x 10^7, a hundredth of the bound. */
#define MAX_TOKEN_BYTES 1024
#define MAX_MERGE_WORK ((uint64_t)1 << 30)

int mf_tiktoken_read(const char *path, const char *data, size_t size, mf_tiktoken *t, mf_status *st)
{
    *t = (mf_tiktoken){.max_rank = -1};
    size_t lineno = 0;
    uint64_t work = 0;
    for (size_t off = 0; off < size;) {
        size_t end = off;
        while (end < size && data[end] != '\n' && data[end] != '\r')
            end++;
        lineno++;
        if (end > off && read_line(t, path, data + off, end - off, off, lineno, st)) {
            mf_tiktoken_free(t);
            return -1;
        }
        size_t n = end > off ? t->v[t->n - 1].n : 0;
        work += (uint64_t)n * n;
        if (n > MAX_TOKEN_BYTES || work > MAX_MERGE_WORK) {
            mf_fail(st, MF_ERR_FORMAT, path, (int64_t)off, "line %zu: %s", lineno,
                    n > MAX_TOKEN_BYTES ? "a token longer than 1024 bytes: not a tiktoken vocabulary"
                                        : "the tokens are too long in sum (their squared lengths pass "
                                          "2^30): deriving their merges would not end");
            mf_tiktoken_free(t);
            return -1;
        }
        off = end + (end < size && data[end] == '\r' && end + 1 < size && data[end + 1] == '\n' ? 2 : 1);
    }
    if (t->n == 0 || distinct_ranks(t, path, st)) {
        if (t->n == 0)
            mf_fail(st, MF_ERR_FORMAT, path, 0, "no ranks");
        mf_tiktoken_free(t);
        return -1;
    }
    return 0;
}

void mf_tiktoken_free(mf_tiktoken *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->v[i].bytes);
    free(t->v);
    free(t->slot);
    *t = (mf_tiktoken){.max_rank = -1};
}

int mf_tiktoken_split(const mf_tiktoken *t, const uint8_t *b, size_t n, int64_t max_rank, size_t *ends)
{
    size_t *start = malloc((n + 1) * sizeof(size_t)); /* part k is b[start[k] .. start[k + 1]) */
    if (!start)
        return -1;
    size_t parts = n;
    for (size_t i = 0; i <= n; i++)
        start[i] = i;
    for (;;) {
        size_t best = 0;
        int64_t best_rank = -1;
        for (size_t k = 0; k + 1 < parts; k++) {
            int64_t r = mf_tiktoken_rank(t, b + start[k], start[k + 2] - start[k]);
            if (r >= 0 && (best_rank < 0 || r < best_rank)) {
                best = k;
                best_rank = r;
            }
        }
        if (best_rank < 0 || best_rank >= max_rank)
            break;
        memmove(start + best + 1, start + best + 2, (parts - best - 1) * sizeof(size_t));
        parts--;
    }
    for (size_t k = 0; k < parts; k++)
        ends[k] = start[k + 1];
    free(start);
    return (int)(parts > (size_t)1 << 30 ? 1 << 30 : parts);
}

size_t mf_byte_level_text(const uint8_t *b, size_t n, char *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += mf_utf8_put((uint8_t *)out + k, mf_bpe_byte_char(b[i]));
    return k;
}

/* The byte whose bytes_to_unicode character is cp, -1 for none: the
 * printable ones stand for themselves, U+0100 + k for the k-th other byte
 * (0x00-0x20, 0x7f-0xa0, 0xad in order). */
static int byte_of_char(uint32_t cp)
{
    if (cp < 256)
        return mf_bpe_byte_char((uint8_t)cp) == cp ? (int)cp : -1;
    uint32_t k = cp - 256;
    return k <= 32 ? (int)k : k <= 66 ? (int)(0x7f + k - 33) : k == 67 ? 0xad : -1;
}

int mf_byte_level_bytes(const char *text, size_t n, uint8_t *out, size_t *n_out)
{
    const uint8_t *s = (const uint8_t *)text;
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp; /* every such character is one or two bytes of UTF-8 */
        if (s[i] < 0x80) {
            cp = s[i++];
        } else if ((s[i] & 0xe0) == 0xc0 && i + 1 < n && (s[i + 1] & 0xc0) == 0x80) {
            cp = (uint32_t)(s[i] & 0x1f) << 6 | (s[i + 1] & 0x3f);
            i += 2;
        } else {
            return -1;
        }
        int b = byte_of_char(cp);
        if (b < 0)
            return -1;
        out[k++] = (uint8_t)b;
    }
    *n_out = k;
    return 0;
}
