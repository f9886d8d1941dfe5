/* hash.c - SHA-256/SHA-1 through libcrypto, XXH64/XXH3 through libxxhash. */
#include "core/core.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <xxhash.h>

struct mf_hasher {
    mf_hash_algo algo;
    EVP_MD_CTX *md;
    XXH64_state_t *x64;
    XXH3_state_t *x3;
};

static const char *const algo_names[] = {"sha256", "sha1", "xxh64", "xxh3"};

int mf_hash_algo_from_name(const char *name, mf_hash_algo *out)
{
    for (int i = 0; i < 4; i++)
        if (strcmp(name, algo_names[i]) == 0) {
            *out = (mf_hash_algo)i;
            return 0;
        }
    return -1;
}

const char *mf_hash_algo_name(mf_hash_algo a)
{
    return (unsigned)a < 4 ? algo_names[a] : "?";
}

static void hasher_reset(mf_hasher *h)
{
    switch (h->algo) {
    case MF_SHA256: EVP_DigestInit_ex(h->md, EVP_sha256(), NULL); break;
    case MF_SHA1: EVP_DigestInit_ex(h->md, EVP_sha1(), NULL); break;
    case MF_XXH64: XXH64_reset(h->x64, 0); break;
    case MF_XXH3: XXH3_64bits_reset(h->x3); break;
    }
}

mf_hasher *mf_hasher_new(mf_hash_algo a)
{
    mf_hasher *h = calloc(1, sizeof(*h));
    if (!h)
        return NULL;
    h->algo = a;
    if (a == MF_SHA256 || a == MF_SHA1)
        h->md = EVP_MD_CTX_new();
    else if (a == MF_XXH64)
        h->x64 = XXH64_createState();
    else
        h->x3 = XXH3_createState();
    if (!h->md && !h->x64 && !h->x3) {
        free(h);
        return NULL;
    }
    hasher_reset(h);
    return h;
}

void mf_hasher_update(mf_hasher *h, const void *buf, size_t n)
{
    switch (h->algo) {
    case MF_SHA256:
    case MF_SHA1: EVP_DigestUpdate(h->md, buf, n); break;
    case MF_XXH64: XXH64_update(h->x64, buf, n); break;
    case MF_XXH3: XXH3_64bits_update(h->x3, buf, n); break;
    }
}

static void to_hex(const uint8_t *d, size_t n, char *hex)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        hex[2 * i] = digits[d[i] >> 4];
        hex[2 * i + 1] = digits[d[i] & 15];
    }
    hex[2 * n] = 0;
}

void mf_hasher_final_hex(mf_hasher *h, char hex[129])
{
    uint8_t d[64];
    unsigned n = 0;
    if (h->md) {
        EVP_DigestFinal_ex(h->md, d, &n);
    } else {
        /* xxhash's canonical form is big-endian, as llama-gguf-hash prints */
        uint64_t v = h->x64 ? XXH64_digest(h->x64) : XXH3_64bits_digest(h->x3);
        for (int i = 0; i < 8; i++)
            d[i] = (uint8_t)(v >> (56 - 8 * i));
        n = 8;
    }
    to_hex(d, n, hex);
    hasher_reset(h);
}

void mf_hasher_free(mf_hasher *h)
{
    if (!h)
        return;
    EVP_MD_CTX_free(h->md);
    if (h->x64)
        XXH64_freeState(h->x64);
    if (h->x3)
        XXH3_freeState(h->x3);
    free(h);
}

int mf_hasher_sink(void *hasher, const void *buf, size_t n, mf_status *st)
{
    MF_ST_GUARD(st);
    mf_hasher_update(hasher, buf, n);
    return 0;
}

/* Reads with read(2) in large blocks: streaming, never the whole file. */
int mf_hash_file(const char *path, mf_hash_algo a, char hex[129], mf_status *st)
{
    MF_ST_GUARD(st);
    mf_file mem;
    int in_mem = mf_mem_map(path, &mem, st); /* a buffer given to mf_open_buffer */
    if (in_mem) {
        mf_hasher *h = in_mem > 0 ? mf_hasher_new(a) : NULL;
        if (h) {
            mf_hasher_update(h, mem.base, (size_t)mem.size);
            mf_hasher_final_hex(h, hex);
            mf_hasher_free(h);
        }
        return in_mem < 0 ? -1 : h ? 0 : mf_oom(st, path);
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return mf_fail(st, MF_ERR_IO, path, -1, "cannot open: %s", strerror(errno));
    posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    enum { BUF = 1 << 20 };
    uint8_t *buf = malloc(BUF);
    mf_hasher *h = mf_hasher_new(a);
    int rc = 0;
    if (!buf || !h) {
        rc = mf_oom(st, path);
        goto out;
    }
    for (;;) {
        ssize_t k = read(fd, buf, BUF);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            rc = mf_fail(st, MF_ERR_IO, path, -1, "read failed: %s", strerror(errno));
            goto out;
        }
        if (k == 0)
            break;
        mf_hasher_update(h, buf, (size_t)k);
    }
    mf_hasher_final_hex(h, hex);
out:
    close(fd);
    free(buf);
    mf_hasher_free(h);
    return rc;
}

int mf_hash_tensor(const mf_model *m, const mf_tensor *t, mf_hash_algo a,
                   char hex[129], mf_status *st)
{
    MF_ST_GUARD(st);
    mf_hasher *h = mf_hasher_new(a);
    if (!h)
        return mf_oom(st, m->path);
    int rc = mf_tensor_stream(m, t, mf_hasher_sink, h, st);
    if (rc == 0)
        mf_hasher_final_hex(h, hex);
    mf_hasher_free(h);
    return rc;
}

int mf_hash_tensor_content(const mf_model *m, mf_hash_algo a, char hex[129],
                           mf_status *st)
{
    MF_ST_GUARD(st);
    mf_hasher *h = mf_hasher_new(a);
    if (!h)
        return mf_oom(st, m->path);
    int rc = 0;
    for (size_t i = 0; i < m->n_tensors && rc == 0; i++)
        rc = mf_tensor_stream(m, &m->tensors[i], mf_hasher_sink, h, st);
    if (rc == 0)
        mf_hasher_final_hex(h, hex);
    mf_hasher_free(h);
    return rc;
}
