/* test_ggml_legacy.c - GGML / GGMF / GGJT files built here by hand (no
 * tool writes them any more): hyper-parameters, vocabulary, tensors with
 * GGJT's 32-byte alignment, the old quant layouts refused, malformed files. */
#include "testmf.h"

#include "core/core.h"

#include <unistd.h>

static char dir[256];

typedef struct buf {
    uint8_t b[1 << 14];
    size_t n;
} buf;

static void put32(buf *b, uint32_t v)
{
    mf_wr32le(b->b + b->n, v);
    b->n += 4;
}

static void put(buf *b, const void *p, size_t n)
{
    memcpy(b->b + b->n, p, n);
    b->n += n;
}

enum { GGML, GGMF, GGJT };

static void header(buf *b, int kind, uint32_t version, uint32_t ftype, bool scores_ok)
{
    b->n = 0;
    static const uint32_t magic[] = {0x67676d6cu, 0x67676d66u, 0x67676a74u};
    put32(b, magic[kind]);
    if (kind != GGML)
        put32(b, version);
    uint32_t hp[7] = {3, 32, 256, 4, 1, 8, ftype};
    for (int i = 0; i < 7; i++)
        put32(b, hp[i]);
    static const char *const toks[] = {"<unk>", " the", "\xe2\x96"}; /* last: partial UTF-8 */
    for (int i = 0; i < 3; i++) {
        put32(b, (uint32_t)strlen(toks[i]));
        put(b, toks[i], strlen(toks[i]));
        if (kind != GGML && scores_ok) {
            float s = -1.0f * (float)i;
            put(b, &s, 4);
        }
    }
}

/* A tensor record with ne (fastest first) and data bytes of `fill`. */
static size_t tensor(buf *b, int kind, const char *name, uint32_t type, int n_dims,
                     const uint32_t *ne, size_t nbytes, uint8_t fill)
{
    put32(b, (uint32_t)n_dims);
    put32(b, (uint32_t)strlen(name));
    put32(b, type);
    for (int i = 0; i < n_dims; i++)
        put32(b, ne[i]);
    put(b, name, strlen(name));
    if (kind == GGJT)
        while (b->n % 32)
            b->b[b->n++] = 0;
    size_t at = b->n;
    for (size_t i = 0; i < nbytes; i++)
        b->b[b->n++] = (uint8_t)(fill + i);
    return at;
}

static const char *save(const char *name, const buf *b)
{
    static char p[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(p[k], sizeof(p[k]), "%s/%s", dir, name);
    FILE *f = fopen(p[k], "wb");
    fwrite(b->b, 1, b->n, f);
    fclose(f);
    return p[k];
}

static void check_hash(mf_model *m, const char *name, const uint8_t *want, size_t n)
{
    const mf_tensor *t = mf_tensor_find(m, name);
    CHECKF(t != NULL, "no tensor %s", name);
    if (!t)
        return;
    char a[129], b[129];
    mf_status st;
    mf_status_init(&st);
    tl_sha256_hex(want, n, a);
    CHECKF(mf_hash_tensor(m, t, MF_SHA256, b, &st) == 0 && strcmp(a, b) == 0, "%s: hash (%s)", name,
           st.msg);
    mf_status_clear(&st);
}

static mf_model *open_ok(const char *path)
{
    mf_status st;
    mf_status_init(&st);
    mf_model *m = NULL;
    mf_open_opts o = {.struct_size = sizeof(mf_open_opts), .flags = MF_OPEN_STRICT};
    int rc = mf_open(path, &o, &m, &st);
    CHECKF(rc == 0, "%s: %s", path, st.msg);
    mf_status_clear(&st);
    return m;
}

static void test_ggjt_v3(void)
{
    static buf b;
    header(&b, GGJT, 3, 2, true);
    size_t at_tok = b.n;
    size_t o1 = tensor(&b, GGJT, "tok_embeddings.weight", 0, 2, (uint32_t[]){3, 2}, 24, 1);
    size_t o2 = tensor(&b, GGJT, "norm.weight", 1, 1, (uint32_t[]){5}, 10, 50);
    size_t o3 = tensor(&b, GGJT, "layers.0.attention.wq.weight", 2, 2, (uint32_t[]){64, 2},
                       4 * 18, 100);
    size_t o4 = tensor(&b, GGJT, "output.weight", 12, 2, (uint32_t[]){256, 1}, 144, 7);
    const char *p = save("v3.bin", &b);
    mf_model *m = open_ok(p);
    if (!m)
        return;
    CHECK(m->format == MF_FMT_GGML_LEGACY && strcmp(m->version, "GGJT v3") == 0);
    CHECK(m->n_tensors == 4);
    const mf_tensor *t = mf_tensor_find(m, "tok_embeddings.weight");
    CHECK(t && t->dtype == MF_F32 && t->ndim == 2 && t->shape[0] == 2 && t->shape[1] == 3 &&
          t->offset == o1 && o1 % 32 == 0);
    check_hash(m, "tok_embeddings.weight", b.b + o1, 24);
    t = mf_tensor_find(m, "norm.weight");
    CHECK(t && t->dtype == MF_F16 && t->ndim == 1 && t->shape[0] == 5 && t->offset == o2);
    check_hash(m, "norm.weight", b.b + o2, 10);
    t = mf_tensor_find(m, "layers.0.attention.wq.weight");
    CHECK(t && t->dtype == MF_Q4_0 && t->shape[0] == 2 && t->shape[1] == 64 && t->nbytes == 72 &&
          t->offset == o3);
    check_hash(m, "layers.0.attention.wq.weight", b.b + o3, 72);
    t = mf_tensor_find(m, "output.weight");
    CHECK(t && t->dtype == MF_Q4_K && t->offset == o4);
    const mf_value *v = mf_meta_get(m, "hparams.n_embd");
    CHECK(v && v->type == MF_V_U64 && v->as.u == 32);
    v = mf_meta_get(m, "hparams.ftype_name");
    CHECK(v && v->type == MF_V_STR && strcmp(v->as.s.ptr, "MOSTLY_Q4_0") == 0);
    v = mf_meta_get(m, "tokenizer.ggml.tokens");
    CHECK(v && v->type == MF_V_ARR && v->as.arr.n == 3 &&
          strcmp(v->as.arr.items[1].as.s.ptr, " the") == 0 && v->as.arr.items[2].as.s.len == 2);
    v = mf_meta_get(m, "tokenizer.ggml.scores");
    CHECK(v && v->type == MF_V_ARR && v->as.arr.n == 3 && v->as.arr.items[2].as.f == -2.0);
    CHECK(m->n_notes == 1 && strstr(m->notes[0], "convert_llama_ggml_to_gguf.py") &&
          strstr(m->notes[0], "GGJT v3"));
    CHECK(m->header_bytes > at_tok && m->header_bytes == b.n - (24 + 10 + 72 + 144));
    mf_close(m);
}

static void test_old_kinds(void)
{
    static buf b;
    /* GGML: no version, no scores, no alignment */
    header(&b, GGML, 0, 0, true);
    size_t o = tensor(&b, GGML, "a", 0, 1, (uint32_t[]){3}, 12, 9);
    mf_model *m = open_ok(save("ggml.bin", &b));
    if (m) {
        CHECK(strcmp(m->version, "GGML") == 0 && m->n_tensors == 1 && m->tensors[0].offset == o);
        CHECK(mf_meta_get(m, "tokenizer.ggml.scores") == NULL);
        check_hash(m, "a", b.b + o, 12);
        mf_close(m);
    }
    /* GGMF v1 F16, unaligned */
    header(&b, GGMF, 1, 1, true);
    o = tensor(&b, GGMF, "b", 1, 2, (uint32_t[]){2, 2}, 8, 3);
    m = open_ok(save("ggmf.bin", &b));
    if (m) {
        CHECK(strcmp(m->version, "GGMF v1") == 0 && m->tensors[0].offset == o);
        check_hash(m, "b", b.b + o, 8);
        mf_close(m);
    }
    /* GGJT v2: Q5_0 blocks are today's; Q8_0 ones are not */
    header(&b, GGJT, 2, 8, true);
    tensor(&b, GGJT, "q5", 6, 1, (uint32_t[]){32}, 22, 0);
    m = open_ok(save("v2_q5.bin", &b));
    mf_close(m);
    header(&b, GGJT, 2, 7, true);
    tensor(&b, GGJT, "q8", 8, 1, (uint32_t[]){32}, 36, 0);
    tl_expect_open_error(save("v2_q8.bin", &b), MF_ERR_UNSUPPORTED, "f32 scale");
    /* GGJT v1 quantized: the old nibble order */
    header(&b, GGJT, 1, 2, true);
    tensor(&b, GGJT, "q4", 2, 1, (uint32_t[]){32}, 20, 0);
    tl_expect_open_error(save("v1_q4.bin", &b), MF_ERR_UNSUPPORTED, "nibble order");
    /* GGJT v1 unquantized is fine */
    header(&b, GGJT, 1, 0, true);
    o = tensor(&b, GGJT, "f", 0, 1, (uint32_t[]){2}, 8, 0);
    m = open_ok(save("v1_f32.bin", &b));
    if (m) {
        CHECK(m->tensors[0].offset == o && o % 32 == 0);
        mf_close(m);
    }
    /* Q4_2 (removed), an unknown type, the I types' old ids */
    header(&b, GGJT, 1, 5, true);
    tensor(&b, GGJT, "q42", 4, 1, (uint32_t[]){16}, 10, 0);
    tl_expect_open_error(save("q42.bin", &b), MF_ERR_UNSUPPORTED, "Q4_2");
    header(&b, GGJT, 3, 0, true);
    tensor(&b, GGJT, "x", 40, 1, (uint32_t[]){16}, 10, 0);
    tl_expect_open_error(save("type40.bin", &b), MF_ERR_FORMAT, "type 40");
    header(&b, GGJT, 3, 0, true);
    o = tensor(&b, GGJT, "i32", 18, 1, (uint32_t[]){2}, 8, 0);
    m = open_ok(save("i32.bin", &b));
    if (m) {
        CHECK(m->tensors[0].dtype == MF_I32);
        mf_close(m);
    }
}

static void test_malformed(void)
{
    static buf b;
    header(&b, GGMF, 2, 0, true);
    tl_expect_open_error(save("ggmf2.bin", &b), MF_ERR_FORMAT, "GGMF version 2");
    header(&b, GGJT, 4, 0, true);
    tl_expect_open_error(save("ggjt4.bin", &b), MF_ERR_FORMAT, "GGJT version 4");
    header(&b, GGJT, 3, 0, true);
    mf_wr32le(b.b + 8, 0x40000000u); /* n_vocab */
    tl_expect_open_error(save("nvocab.bin", &b), MF_ERR_FORMAT, "n_vocab");
    header(&b, GGJT, 3, 0, false); /* GGJT vocabulary without scores: misread */
    tensor(&b, GGJT, "a", 0, 1, (uint32_t[]){3}, 12, 9);
    tl_expect_open_error(save("noscores.bin", &b), MF_ERR_FORMAT, "");
    header(&b, GGJT, 3, 0, true);
    tensor(&b, GGJT, "a", 0, 1, (uint32_t[]){3}, 12, 9);
    b.n -= 4;
    tl_expect_open_error(save("cut.bin", &b), MF_ERR_FORMAT, "past the end");
    header(&b, GGJT, 3, 0, true);
    tensor(&b, GGJT, "a", 0, 5, (uint32_t[]){1, 1, 1, 1, 1}, 4, 9);
    tl_expect_open_error(save("dims5.bin", &b), MF_ERR_FORMAT, "n_dims 5");
    header(&b, GGJT, 3, 0, true);
    tensor(&b, GGJT, "a", 0, 1, (uint32_t[]){1}, 4, 9);
    tensor(&b, GGJT, "a", 0, 1, (uint32_t[]){1}, 4, 9);
    tl_expect_open_error(save("dup.bin", &b), MF_ERR_FORMAT, "twice");
    header(&b, GGJT, 3, 2, true);
    tensor(&b, GGJT, "q", 2, 1, (uint32_t[]){16}, 9, 9);
    tl_expect_open_error(save("partial.bin", &b), MF_ERR_FORMAT, "block");
    header(&b, GGJT, 3, 0, true);
    tensor(&b, GGJT, "", 0, 1, (uint32_t[]){1}, 4, 9);
    tl_expect_open_error(save("noname.bin", &b), MF_ERR_FORMAT, "name length 0");
    header(&b, GGJT, 3, 0, true);
    tensor(&b, GGJT, "a", 0, 2, (uint32_t[]){0xffffffffu, 0xffffffffu}, 0, 0);
    tl_expect_open_error(save("huge.bin", &b), MF_ERR_FORMAT, "overflows");
    header(&b, GGJT, 3, 0, true);
    b.b[b.n++] = 1; /* a partial tensor record */
    tl_expect_open_error(save("tail.bin", &b), MF_ERR_FORMAT, "unexpected end");
    b.n = 6;
    tl_expect_open_error(save("short.bin", &b), MF_ERR_FORMAT, "unexpected end");
}

int main(void)
{
    if (!tl_make_tmpdir(dir, sizeof(dir), "ggml")) {
        return 2;
    }
    test_ggjt_v3();
    test_old_kinds();
    test_malformed();
    tl_remove_tmpdir(dir);
    return tl_report("ggml_legacy");
}
