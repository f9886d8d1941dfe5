/* pickle_build.h - builds pickles, zip archives and temporary files byte by
 * byte for the pickle, scan and convert tests (no Python needed). */
#ifndef MF_PICKLE_BUILD_H
#define MF_PICKLE_BUILD_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define MF_PB_UNUSED __attribute__((unused))

typedef struct pb {
    uint8_t *b;
    size_t n, cap;
} pb;

static MF_PB_UNUSED void pb_raw(pb *p, const void *d, size_t n)
{
    if (p->n + n > p->cap) {
        p->cap = (p->n + n) * 2 + 64;
        p->b = realloc(p->b, p->cap);
        if (!p->b)
            abort();
    }
    memcpy(p->b + p->n, d, n);
    p->n += n;
}

static MF_PB_UNUSED void pb_op(pb *p, uint8_t op) { pb_raw(p, &op, 1); }
static MF_PB_UNUSED void pb_u32(pb *p, uint32_t v)
{
    uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    pb_raw(p, b, 4);
}
static MF_PB_UNUSED void pb_u16(pb *p, uint16_t v)
{
    uint8_t b[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
    pb_raw(p, b, 2);
}
static MF_PB_UNUSED void pb_proto(pb *p, int v) { pb_op(p, 0x80); pb_op(p, (uint8_t)v); }
static MF_PB_UNUSED void pb_stop(pb *p) { pb_op(p, '.'); }
/* BINUNICODE / SHORT_BINUNICODE */
static MF_PB_UNUSED void pb_str(pb *p, const char *s)
{
    size_t n = strlen(s);
    if (n < 256) {
        pb_op(p, 0x8c);
        pb_op(p, (uint8_t)n);
    } else {
        pb_op(p, 'X');
        pb_u32(p, (uint32_t)n);
    }
    pb_raw(p, s, n);
}
static MF_PB_UNUSED void pb_bytes(pb *p, const void *d, size_t n)
{
    pb_op(p, 'B');
    pb_u32(p, (uint32_t)n);
    pb_raw(p, d, n);
}
static MF_PB_UNUSED void pb_int(pb *p, int32_t v)
{
    pb_op(p, 'J');
    pb_u32(p, (uint32_t)v);
}
/* GLOBAL 'module\nname\n' */
static MF_PB_UNUSED void pb_global(pb *p, const char *mod, const char *name)
{
    pb_op(p, 'c');
    pb_raw(p, mod, strlen(mod));
    pb_op(p, '\n');
    pb_raw(p, name, strlen(name));
    pb_op(p, '\n');
}
static MF_PB_UNUSED void pb_text(pb *p, const char *s) { pb_raw(p, s, strlen(s)); }
static MF_PB_UNUSED void pb_free(pb *p) { free(p->b); memset(p, 0, sizeof(*p)); }

/* A state dict pickle: OrderedDict of name -> _rebuild_tensor_v2 of a
 * FloatStorage persistent id ('storage', FloatStorage, key, 'cpu', numel). */
static MF_PB_UNUSED void pb_tensor_v2(pb *p, const char *key, uint32_t numel, uint32_t offset,
                         const uint32_t *size, const uint32_t *stride, int ndim)
{
    pb_global(p, "torch._utils", "_rebuild_tensor_v2");
    pb_op(p, '(');
    pb_op(p, '(');
    pb_str(p, "storage");
    pb_global(p, "torch", "FloatStorage");
    pb_str(p, key);
    pb_str(p, "cpu");
    pb_int(p, (int32_t)numel);
    pb_op(p, 't');
    pb_op(p, 'Q');
    pb_int(p, (int32_t)offset);
    pb_op(p, '(');
    for (int i = 0; i < ndim; i++)
        pb_int(p, (int32_t)size[i]);
    pb_op(p, 't');
    pb_op(p, '(');
    for (int i = 0; i < ndim; i++)
        pb_int(p, (int32_t)stride[i]);
    pb_op(p, 't');
    pb_op(p, 0x89);
    pb_global(p, "collections", "OrderedDict");
    pb_op(p, ')');
    pb_op(p, 'R');
    pb_op(p, 't');
    pb_op(p, 'R');
}

/* ------------------------------------------------------------------ zip */

typedef struct zip_member {
    const char *name;
    const void *data;
    size_t n;
    const char *local_name; /* NULL: same as name */
    uint16_t flags;
    int bad_crc;
    int deflate;
} zip_member;

static MF_PB_UNUSED void zip_build(pb *out, const zip_member *m, size_t n)
{
    uint32_t *offs = calloc(n ? n : 1, sizeof(uint32_t)), *crcs = calloc(n ? n : 1, 4),
             *csz = calloc(n ? n : 1, 4);
    uint8_t **cdata = calloc(n ? n : 1, sizeof(uint8_t *));
    for (size_t i = 0; i < n; i++) {
        offs[i] = (uint32_t)out->n;
        crcs[i] = (uint32_t)crc32(0, m[i].data, (uInt)m[i].n) ^ (m[i].bad_crc ? 0xdeadbeefu : 0);
        if (m[i].deflate) {
            uLongf cl = compressBound((uLong)m[i].n) + 16;
            uint8_t *tmp = malloc(cl);
            z_stream zs;
            memset(&zs, 0, sizeof(zs));
            deflateInit2(&zs, 6, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
            zs.next_in = (Bytef *)m[i].data;
            zs.avail_in = (uInt)m[i].n;
            zs.next_out = tmp;
            zs.avail_out = (uInt)cl;
            deflate(&zs, Z_FINISH);
            csz[i] = (uint32_t)zs.total_out;
            deflateEnd(&zs);
            cdata[i] = tmp;
        } else {
            csz[i] = (uint32_t)m[i].n;
        }
        const char *ln = m[i].local_name ? m[i].local_name : m[i].name;
        pb_u32(out, 0x04034b50u);
        pb_u16(out, 20);
        pb_u16(out, m[i].flags);
        pb_u16(out, m[i].deflate ? 8 : 0);
        pb_u16(out, 0);
        pb_u16(out, 0);
        pb_u32(out, crcs[i]);
        pb_u32(out, csz[i]);
        pb_u32(out, (uint32_t)m[i].n);
        pb_u16(out, (uint16_t)strlen(ln));
        pb_u16(out, 0);
        pb_raw(out, ln, strlen(ln));
        pb_raw(out, m[i].deflate ? cdata[i] : m[i].data, csz[i]);
    }
    uint32_t cd = (uint32_t)out->n;
    for (size_t i = 0; i < n; i++) {
        pb_u32(out, 0x02014b50u);
        pb_u16(out, 20);
        pb_u16(out, 20);
        pb_u16(out, m[i].flags);
        pb_u16(out, m[i].deflate ? 8 : 0);
        pb_u16(out, 0);
        pb_u16(out, 0);
        pb_u32(out, crcs[i]);
        pb_u32(out, csz[i]);
        pb_u32(out, (uint32_t)m[i].n);
        pb_u16(out, (uint16_t)strlen(m[i].name));
        pb_u16(out, 0);
        pb_u16(out, 0);
        pb_u16(out, 0);
        pb_u16(out, 0);
        pb_u32(out, 0);
        pb_u32(out, offs[i]);
        pb_raw(out, m[i].name, strlen(m[i].name));
        free(cdata[i]);
    }
    uint32_t cdsize = (uint32_t)out->n - cd;
    pb_u32(out, 0x06054b50u);
    pb_u16(out, 0);
    pb_u16(out, 0);
    pb_u16(out, (uint16_t)n);
    pb_u16(out, (uint16_t)n);
    pb_u32(out, cdsize);
    pb_u32(out, cd);
    pb_u16(out, 0);
    free(offs);
    free(crcs);
    free(csz);
    free(cdata);
}

/* --------------------------------------------------------------- files */

static char pb_dir[256];

static MF_PB_UNUSED const char *pb_tmp(const char *name)
{
    static char p[8][600];
    static int k;
    if (!pb_dir[0]) {
        snprintf(pb_dir, sizeof(pb_dir), "/tmp/mfmt-test-XXXXXX");
        if (!mkdtemp(pb_dir)) {
            perror("mkdtemp");
            exit(2);
        }
    }
    k = (k + 1) % 8;
    snprintf(p[k], sizeof(p[k]), "%s/%s", pb_dir, name);
    return p[k];
}

static MF_PB_UNUSED void pb_write(const char *path, const void *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) {
        perror(path);
        exit(2);
    }
    if (n)
        fwrite(b, 1, n, f);
    fclose(f);
}

static MF_PB_UNUSED void pb_cleanup(void)
{
    if (pb_dir[0]) {
        char cmd[400];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", pb_dir);
        if (system(cmd) != 0)
            fprintf(stderr, "could not remove %s\n", pb_dir);
    }
}
#endif
