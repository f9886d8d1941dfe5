/* test_rwkv_vocab.c - the RWKV world vocabulary reader (lib/ops/hfconv/
 * rwkv_vocab.c) against CPython: tests/data/rwkv/vocab.txt holds str and
 * bytes literals as the vocabulary file writes them (and spellings only
 * ast.literal_eval reads), expected.txt the hex of repr(bytes)[2:-1] CPython
 * gives for each (make_vocab.py); then the inverse, and malformed lines. */
#include "ops/hfconv/rwkv_vocab.h"
#include "testlib.h"

#include <stdint.h>

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = malloc(1 << 16);
    *n = buf ? fread(buf, 1, (1 << 16) - 1, f) : 0;
    fclose(f);
    if (buf)
        buf[*n] = 0;
    return buf;
}

static void against_cpython(void)
{
    size_t nv = 0, ne = 0;
    char *vocab = slurp("tests/data/rwkv/vocab.txt", &nv), *exp = slurp("tests/data/rwkv/expected.txt", &ne);
    CHECK(vocab && exp);
    if (!vocab || !exp) {
        free(vocab);
        free(exp);
        return;
    }
    mf_status st;
    mf_status_init(&st);
    mf_rwkv_token *t = NULL;
    size_t n = 0;
    CHECKF(mf_rwkv_read_vocab("vocab.txt", (const uint8_t *)vocab, nv, &t, &n, &st) == 0, "%s", st.msg);
    CHECKF(n == 33, "%zu tokens", n);
    const char *line = exp;
    for (size_t i = 0; i < n && *line; i++) {
        char text[512], hex[1100] = "";
        size_t k = mf_rwkv_repr(t[i].bytes, t[i].n, text);
        for (size_t j = 0; j < k; j++)
            snprintf(hex + 2 * j, 3, "%02x", (unsigned char)text[j]);
        size_t len = strcspn(line, "\n");
        CHECKF(strlen(hex) == len && !strncmp(hex, line, len), "token %zu: repr %s, CPython %.*s", i + 1, hex, (int)len,
               line);
        uint8_t back[512];
        size_t nb = 0;
        CHECKF(mf_rwkv_unrepr(text, k, back, &nb) == 0 && nb == t[i].n && !memcmp(back, t[i].bytes, nb),
               "token %zu: the repr does not read back", i + 1);
        line += len + (line[len] == '\n');
    }
    mf_rwkv_free(t, n);
    mf_status_clear(&st);
    free(vocab);
    free(exp);
}

/* A malformed line is refused naming the line; nothing is returned. */
static void refused(const char *text, const char *want)
{
    mf_status st;
    mf_status_init(&st);
    mf_rwkv_token *t = NULL;
    size_t n = 0;
    int rc = mf_rwkv_read_vocab("v.txt", (const uint8_t *)text, strlen(text), &t, &n, &st);
    CHECKF(rc != 0 && t == NULL && strstr(st.msg, want) && strstr(st.msg, "v.txt"), "\"%s\": rc %d, %s", text, rc,
           st.msg);
    mf_rwkv_free(t, n);
    mf_status_clear(&st);
}

int main(void)
{
    against_cpython();
    refused("1 'a' 2\n", "line 1: the token has 1 bytes, the line says 2");
    refused("1 'a' 1\n2 'b\n", "line 2");                /* no closing quote */
    refused("1 'a'b' 2\n", "line 1");                    /* a quote inside */
    refused("1 b'\xc3\xa9' 2\n", "line 1");              /* bytes: ASCII only */
    refused("1 '\\x4' 1\n", "line 1");                   /* \x needs two hex digits */
    refused("1 '\\N{DASH}' 3\n", "line 1");              /* names are not looked up */
    refused("1 '\\ud800' 3\n", "line 1");                /* str.encode refuses surrogates */
    refused("1 'a'\n", "line 1");                        /* no length */
    refused("1 'a' x\n", "line 1");
    refused("nothing\n", "line 1");
    uint8_t b[8];
    size_t nb;
    CHECK(mf_rwkv_unrepr("\\x4", 3, b, &nb) != 0);
    return tl_report("rwkv_vocab");
}
