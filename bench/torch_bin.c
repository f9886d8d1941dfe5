/* torch_bin.c - writes a large torch.save-style zip (a pytorch_model.bin)
 * without PyTorch, for the convert benchmark:
 *
 *   torch_bin OUT.bin TENSORS ROWS COLS
 *
 * TENSORS float32 tensors "layers.N.weight" of ROWS x COLS, each in its
 * own STORED record "model/data/N" (64-byte aligned, as torch writes them)
 * with pseudo-random contents, a protocol-2 data.pkl naming them through
 * torch._utils._rebuild_tensor_v2 and FloatStorage persistent ids, and
 * "model/version". ZIP64 records are written when the archive passes 4 GiB. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

typedef struct buf {
    uint8_t *b;
    size_t n, cap;
} buf;

static void put(buf *o, const void *d, size_t n)
{
    if (o->n + n > o->cap) {
        o->cap = (o->n + n) * 2 + 4096;
        o->b = realloc(o->b, o->cap);
        if (!o->b)
            exit(1);
    }
    memcpy(o->b + o->n, d, n);
    o->n += n;
}
static void u8(buf *o, uint8_t v) { put(o, &v, 1); }
static void le(buf *o, uint64_t v, int k)
{
    for (int i = 0; i < k; i++)
        u8(o, (uint8_t)(v >> (8 * i)));
}
static void ustr(buf *o, const char *s)
{
    u8(o, 0x8c);
    u8(o, (uint8_t)strlen(s));
    put(o, s, strlen(s));
}
static void global(buf *o, const char *mod, const char *name)
{
    u8(o, 'c');
    put(o, mod, strlen(mod));
    u8(o, '\n');
    put(o, name, strlen(name));
    u8(o, '\n');
}
static void binint(buf *o, uint32_t v)
{
    u8(o, 'J');
    le(o, v, 4);
}

static void data_pkl(buf *o, int n, uint32_t rows, uint32_t cols)
{
    u8(o, 0x80);
    u8(o, 2);
    global(o, "collections", "OrderedDict");
    u8(o, ')');
    u8(o, 'R');
    u8(o, '(');
    for (int i = 0; i < n; i++) {
        char name[64], key[16];
        snprintf(name, sizeof(name), "layers.%d.weight", i);
        snprintf(key, sizeof(key), "%d", i);
        ustr(o, name);
        global(o, "torch._utils", "_rebuild_tensor_v2");
        u8(o, '(');
        u8(o, '(');
        ustr(o, "storage");
        global(o, "torch", "FloatStorage");
        ustr(o, key);
        ustr(o, "cpu");
        binint(o, rows * cols);
        u8(o, 't');
        u8(o, 'Q');
        binint(o, 0);
        binint(o, rows);
        binint(o, cols);
        u8(o, 0x86);
        binint(o, cols);
        binint(o, 1);
        u8(o, 0x86);
        u8(o, 0x89);
        global(o, "collections", "OrderedDict");
        u8(o, ')');
        u8(o, 'R');
        u8(o, 't');
        u8(o, 'R');
    }
    u8(o, 'u');
    u8(o, '.');
}

typedef struct member {
    char name[64];
    uint64_t offset, size;
    uint32_t crc;
} member;

static FILE *out;
static uint64_t pos;

static void emit(const void *d, size_t n)
{
    if (fwrite(d, 1, n, out) != n) {
        perror("write");
        exit(1);
    }
    pos += n;
}

/* Local header (+ZIP64 extra when big) padded so the data starts 64-aligned. */
static void local_header(member *m, bool z64)
{
    buf h = {0};
    size_t nl = strlen(m->name);
    size_t base = 30 + nl + (z64 ? 20 : 0);
    size_t pad = (64 - (pos + base + 4) % 64) % 64;
    le(&h, 0x04034b50u, 4);
    le(&h, z64 ? 45 : 20, 2);
    le(&h, 0, 2);
    le(&h, 0, 2);
    le(&h, 0, 4);
    le(&h, m->crc, 4);
    le(&h, z64 ? 0xffffffffu : m->size, 4);
    le(&h, z64 ? 0xffffffffu : m->size, 4);
    le(&h, nl, 2);
    le(&h, (z64 ? 20 : 0) + 4 + pad, 2);
    put(&h, m->name, nl);
    if (z64) {
        le(&h, 1, 2);
        le(&h, 16, 2);
        le(&h, m->size, 8);
        le(&h, m->size, 8);
    }
    le(&h, 0xface, 2); /* padding extra field, as torch uses "FB" */
    le(&h, pad, 2);
    for (size_t i = 0; i < pad; i++)
        u8(&h, 'Z');
    m->offset = pos;
    emit(h.b, h.n);
    free(h.b);
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static void fill_random(float *f, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        f[i] = (float)((int32_t)(rng >> 32)) / 2147483648.0f;
    }
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: torch_bin OUT.bin TENSORS ROWS COLS\n");
        return 2;
    }
    int n = atoi(argv[2]);
    uint32_t rows = (uint32_t)atol(argv[3]), cols = (uint32_t)atol(argv[4]);
    uint64_t tbytes = (uint64_t)rows * cols * 4;
    out = fopen(argv[1], "wb");
    if (!out || n <= 0 || n > 10000 || !tbytes) {
        perror(argv[1]);
        return 1;
    }
    member *ms = calloc((size_t)n + 2, sizeof(member));
    buf pkl = {0};
    data_pkl(&pkl, n, rows, cols);
    snprintf(ms[0].name, sizeof(ms[0].name), "model/data.pkl");
    ms[0].size = pkl.n;
    ms[0].crc = (uint32_t)crc32(0, pkl.b, (uInt)pkl.n);
    local_header(&ms[0], false);
    emit(pkl.b, pkl.n);
    size_t chunk_elems = 1 << 20;
    float *chunk = malloc(chunk_elems * 4);
    for (int i = 0; i < n; i++) {
        member *m = &ms[i + 1];
        snprintf(m->name, sizeof(m->name), "model/data/%d", i);
        m->size = tbytes;
        /* CRC first (the local header carries it): generate twice */
        uint64_t save = rng, left = tbytes;
        uLong crc = crc32(0, NULL, 0);
        while (left) {
            size_t k = left / 4 < chunk_elems ? (size_t)(left / 4) : chunk_elems;
            fill_random(chunk, k);
            crc = crc32(crc, (const Bytef *)chunk, (uInt)(k * 4));
            left -= k * 4;
        }
        m->crc = (uint32_t)crc;
        rng = save;
        local_header(m, pos + tbytes > 0xfffffffful || tbytes > 0xfffffffful);
        for (left = tbytes; left;) {
            size_t k = left / 4 < chunk_elems ? (size_t)(left / 4) : chunk_elems;
            fill_random(chunk, k);
            emit(chunk, k * 4);
            left -= k * 4;
        }
    }
    member *v = &ms[n + 1];
    snprintf(v->name, sizeof(v->name), "model/version");
    v->size = 2;
    v->crc = (uint32_t)crc32(0, (const Bytef *)"3\n", 2);
    local_header(v, false);
    emit("3\n", 2);
    /* central directory */
    uint64_t cd = pos;
    bool any64 = false;
    for (int i = 0; i < n + 2; i++) {
        member *m = &ms[i];
        bool z64 = m->offset > 0xfffffffful || m->size > 0xfffffffful;
        any64 |= z64;
        buf h = {0};
        size_t nl = strlen(m->name);
        le(&h, 0x02014b50u, 4);
        le(&h, z64 ? 45 : 20, 2);
        le(&h, z64 ? 45 : 20, 2);
        le(&h, 0, 2);
        le(&h, 0, 2);
        le(&h, 0, 4);
        le(&h, m->crc, 4);
        le(&h, z64 ? 0xffffffffu : m->size, 4);
        le(&h, z64 ? 0xffffffffu : m->size, 4);
        le(&h, nl, 2);
        le(&h, z64 ? 28 : 0, 2);
        le(&h, 0, 2);
        le(&h, 0, 2);
        le(&h, 0, 2);
        le(&h, 0, 4);
        le(&h, z64 ? 0xffffffffu : m->offset, 4);
        put(&h, m->name, nl);
        if (z64) {
            le(&h, 1, 2);
            le(&h, 24, 2);
            le(&h, m->size, 8);
            le(&h, m->size, 8);
            le(&h, m->offset, 8);
        }
        emit(h.b, h.n);
        free(h.b);
    }
    uint64_t cd_size = pos - cd;
    buf e = {0};
    if (any64 || cd > 0xfffffffful) {
        uint64_t rec = pos;
        le(&e, 0x06064b50u, 4);
        le(&e, 44, 8);
        le(&e, 45, 2);
        le(&e, 45, 2);
        le(&e, 0, 4);
        le(&e, 0, 4);
        le(&e, (uint64_t)n + 2, 8);
        le(&e, (uint64_t)n + 2, 8);
        le(&e, cd_size, 8);
        le(&e, cd, 8);
        le(&e, 0x07064b50u, 4);
        le(&e, 0, 4);
        le(&e, rec, 8);
        le(&e, 1, 4);
    }
    bool big = any64 || cd > 0xfffffffful;
    le(&e, 0x06054b50u, 4);
    le(&e, 0, 2);
    le(&e, 0, 2);
    le(&e, big ? 0xffff : (uint64_t)n + 2, 2);
    le(&e, big ? 0xffff : (uint64_t)n + 2, 2);
    le(&e, big ? 0xffffffffu : cd_size, 4);
    le(&e, big ? 0xffffffffu : cd, 4);
    le(&e, 0, 2);
    emit(e.b, e.n);
    fclose(out);
    free(e.b);
    free(pkl.b);
    free(chunk);
    free(ms);
    return 0;
}
