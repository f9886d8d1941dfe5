/* test_json_out.c - cli/json_out.c (the streaming JSON of `inspect --json`)
 * writes exactly the bytes jansson's dump of the same document gives:
 * reals (its own exact "%.17g" against glibc's and jansson's), integers,
 * strings with every escape and invalid UTF-8 (cli_json_string's U+FFFD),
 * nesting and empty containers; metadata values against cli_json_value. */
#include "testlib.h"

#include "../cli/common.c"
#include "../cli/json_out.c"
#include "../cli/args.c" /* common.c reads options (cli_get) */
#include "../cli/batch.c" /* and the batch key (cli_batch_input) */

/* args.c's --help names quantize's type list (cmd_quantize.c, not linked
 * here: this test prints no help) */
void cli_quantize_print_types(FILE *f)
{
    (void)f;
}

#include <float.h>
#include <math.h>

static uint64_t rng = 0x243f6a8885a308d3ull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* What jansson prints for json_real(v). */
static void jansson_real(double v, char *out, size_t n)
{
    json_t *r = json_real(v);
    char *s = json_dumps(r, JSON_ENCODE_ANY);
    snprintf(out, n, "%s", s ? s : "?");
    free(s);
    json_decref(r);
}

static int check_real(double v)
{
    char a[64], b[80];
    jo_format_real(v, a);
    jansson_real(v, b, sizeof(b));
    if (strcmp(a, b) == 0)
        return 0;
    fprintf(stderr, "  real %a: ours %s, jansson %s\n", v, a, b);
    return 1;
}

static void test_reals(void)
{
    int bad = 0, n = 0;
    static const double fixed[] = {1, -1, 0.5, 0.1, 1e-5, 9.99999975e-06, 1e16, 1e17, 123456789012345678.0,
                                   99999999999999999.0, 0.000123, 1e-4, 9.9999999999999995e-5, 1e22, 1e-300,
                                   DBL_MAX, DBL_MIN, 5e-324, -0.0, 0.0, 1.5, 2.5, 0.3, 1e100, 65504, 3.0e38};
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++, n++)
        bad += check_real(fixed[i]);
    /* every float exponent, random mantissas: metadata F32 values */
    for (int e = 0; e < 255; e++)
        for (int k = 0; k < 400; k++, n++) {
            uint32_t u = (uint32_t)e << 23 | (uint32_t)(next() & 0x7fffff) | (uint32_t)(next() & 1) << 31;
            float f;
            memcpy(&f, &u, 4);
            bad += check_real(f);
        }
    /* random doubles, short mantissas (ties at 17 digits), integers */
    for (int k = 0; k < 100000; k++, n++) {
        uint64_t u = next();
        double d;
        memcpy(&d, &u, 8);
        if (!isfinite(d))
            continue;
        bad += check_real(d);
        bad += check_real(ldexp((double)(next() % 100000), (int)(next() % 200) - 100));
        bad += check_real((double)(int64_t)(next() >> (next() % 64)));
    }
    CHECKF(bad == 0, "%d of %d reals differ from jansson's", bad, n);
}

/* A document through both writers. */
static char *ours(const json_t *v)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    jout *j = malloc(sizeof(*j));
    jo_init(j, f);
    jo_json(j, v);
    jo_finish(j);
    free(j);
    fclose(f);
    return buf;
}

static char *theirs(const json_t *v)
{
    char *s = json_dumps(v, JSON_INDENT(2) | JSON_ENCODE_ANY);
    char *t = NULL;
    if (s && asprintf(&t, "%s\n", s) < 0)
        t = NULL;
    free(s);
    return t;
}

static json_t *random_value(int depth)
{
    int kind = (int)(next() % (depth > 3 ? 5 : 7));
    switch (kind) {
    case 0: return json_integer((json_int_t)next() >> (next() % 64));
    case 1: return json_real(ldexp((double)(next() % 1000000), (int)(next() % 60) - 40));
    case 2: return json_boolean(next() & 1);
    case 3: return json_null();
    case 4: {
        char s[24];
        size_t n = next() % sizeof(s);
        for (size_t i = 0; i < n; i++) /* ASCII incl. every control character, quotes, backslashes */
            s[i] = (char)(next() % 128);
        return json_stringn(s, n);
    }
    case 5: {
        json_t *a = json_array();
        for (int i = 0, n = (int)(next() % 4); i < n; i++)
            json_array_append_new(a, random_value(depth + 1));
        return a;
    }
    default: {
        json_t *o = json_object();
        for (int i = 0, n = (int)(next() % 4); i < n; i++) {
            char k[8];
            snprintf(k, sizeof(k), "k\t%d\"", (int)(next() % 10));
            json_object_set_new(o, k, random_value(depth + 1));
        }
        return o;
    }
    }
}

static void test_documents(void)
{
    int bad = 0;
    for (int k = 0; k < 2000; k++) {
        json_t *v = random_value(0);
        char *a = ours(v), *b = theirs(v);
        if (!a || !b || strcmp(a, b) != 0) {
            if (bad++ < 3)
                fprintf(stderr, "  ours:\n%s  jansson:\n%s", a ? a : "?", b ? b : "?");
        }
        free(a);
        free(b);
        json_decref(v);
    }
    CHECKF(bad == 0, "%d of 2000 random documents differ", bad);
    /* UTF-8 beyond ASCII is written as is; U+2028 and DEL are not escaped */
    json_t *s = json_string("\xc4\xa0x\xe2\x80\xa8\x7f\xf0\x9f\x98\x80");
    char *a = ours(s), *b = theirs(s);
    CHECK(a && b && strcmp(a, b) == 0);
    free(a), free(b), json_decref(s);
}

/* Metadata values straight from mf_value: the same as cli_json_value. */
static void test_values(void)
{
#define S(lit) {lit, sizeof(lit) - 1}
    static const struct {
        const char *s;
        size_t n;
    } strs[] = {S("plain"), S("q\"b\\s\x01\x1f\n"), S("bad \xff byte"), S("cut \xe2\x82"),
                S("\xed\xa0\x80 surrogate"), S(""), S("nul\0in"), S("over\xc0\xaflong")};
#undef S
    mf_value items[16];
    size_t n = 0;
    for (size_t i = 0; i < 8; i++) {
        items[n].type = MF_V_STR;
        items[n].as.s.ptr = strs[i].s;
        items[n++].as.s.len = strs[i].n;
    }
    items[n].type = MF_V_F32, items[n++].as.f = NAN;
    items[n].type = MF_V_F32, items[n++].as.f = -INFINITY;
    items[n].type = MF_V_F32, items[n++].as.f = (double)1e-5f;
    items[n].type = MF_V_U64, items[n++].as.u = UINT64_MAX;
    items[n].type = MF_V_I64, items[n++].as.i = INT64_MIN;
    items[n].type = MF_V_BOOL, items[n++].as.b = true;
    mf_value arr = {.type = MF_V_ARR};
    arr.as.arr.elem = MF_V_STR;
    arr.as.arr.n = n;
    arr.as.arr.items = items;
    mf_value empty = {.type = MF_V_ARR};
    const mf_value *vals[] = {&arr, &empty, &items[1], &items[12]};
    for (size_t i = 0; i < 4; i++) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        jout *j = malloc(sizeof(*j));
        jo_init(j, f);
        jo_value(j, vals[i]);
        jo_finish(j);
        free(j);
        fclose(f);
        json_t *ref = cli_json_value(vals[i]);
        char *b = theirs(ref);
        CHECKF(buf && b && strcmp(buf, b) == 0, "value %zu: ours %s jansson %s", i, buf, b);
        free(buf), free(b), json_decref(ref);
    }
}

/* `mfmt inspect --json` of real vocabularies (llama.cpp's ggml-vocab files)
 * and corpus files: jansson reads the output back and prints the same bytes. */
static void test_inspect_files(void)
{
    const char *shared = tl_shared_dir(), *mfmt = getenv("MFMT");
    if (!shared || !mfmt || !*mfmt) {
        TL_SKIP("json_out: inspect of the corpus files (no ../shared or $MFMT)");
        return;
    }
    static const char *const files[] = {
        "real-gguf/ggml-vocab-bert-bge.gguf", "real-gguf/ggml-vocab-falcon.gguf", "real-gguf/ggml-vocab-gpt-2.gguf",
        "real-gguf/ggml-vocab-llama-spm.gguf", "real-gguf/ggml-vocab-mpt.gguf", "real-gguf/ggml-vocab-phi-3.gguf",
        "corpus/gguf/dtypes.gguf", "corpus/gguf/llama_tiny.gguf", "corpus/safetensors/all_dtypes.safetensors"};
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        char cmd[2048];
        snprintf(cmd, sizeof(cmd), "%s inspect --json %s/%s", mfmt, shared, files[i]);
        FILE *p = popen(cmd, "r");
        char *out = NULL;
        size_t len = 0, cap = 0;
        for (int c; p && (c = fgetc(p)) != EOF;) {
            if (len + 1 >= cap) {
                cap = cap ? 2 * cap : 1 << 16;
                out = realloc(out, cap);
            }
            out[len++] = (char)c;
        }
        CHECKF(p && pclose(p) == 0 && out, "%s: inspect failed", files[i]);
        if (!out)
            continue;
        out[len] = 0;
        json_error_t je;
        json_t *doc = json_loadb(out, len, 0, &je);
        char *again = doc ? theirs(doc) : NULL;
        CHECKF(again && strcmp(again, out) == 0, "%s: the output is not jansson's dump of itself", files[i]);
        free(again);
        json_decref(doc);
        free(out);
    }
}

int main(void)
{
    test_reals();
    test_documents();
    test_values();
    test_inspect_files();
    return tl_report("json_out");
}
