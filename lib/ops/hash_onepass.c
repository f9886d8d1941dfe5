/* hash_onepass.c - whole-file and tensor hashes from one read of the file
 * (see hash_onepass.h). A ring of NBUF buffers: this thread reads a block,
 * publishes it, hashes it for the whole-file digest; the content thread
 * hashes the parts of the block that belong to tensors, in table order. A
 * buffer is refilled only after both are done with it. */
#include "ops/hash_onepass.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

enum { NBUF = 4, BUFSZ = 4 << 20 };

/* Every tensor with bytes is mapped plainly from the one file (contiguous,
 * little-endian, no reader-specific stream) and the table runs in file order
 * without overlaps: then the tensor content is slices of one sequential read. */
static bool plain_in_order(const mf_model *m, const char *path)
{
    if (m->n_files != 1 || !m->reader || m->reader->stream || strcmp(m->files[0].path, path))
        return false;
    uint64_t end = 0;
    for (size_t i = 0; i < m->n_tensors; i++) {
        const mf_tensor *t = &m->tensors[i];
        if (t->owner)
            return false;
        if (t->nbytes == 0)
            continue;
        if (!mf_tensor_data(m, t) || t->file != 0 || t->offset < end ||
            t->nbytes > m->files[0].size - t->offset)
            return false;
        end = t->offset + t->nbytes;
    }
    return true;
}

typedef struct ring {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint8_t *buf[NBUF];
    size_t len[NBUF];
    uint64_t off[NBUF];
    uint64_t produced, consumed; /* blocks read; blocks the content side finished */
    bool eof;
    /* content side (its thread only) */
    const mf_model *m;
    mf_hasher *content, *tensor;
    char (*tensor_hex)[129];
    size_t ti; /* the next tensor not yet complete */
} ring;

static void finish_tensor(ring *r)
{
    if (r->tensor)
        mf_hasher_final_hex(r->tensor, r->tensor_hex[r->ti]);
    r->ti++;
}

/* Feeds the tensor bytes inside [off, off + len) to the content hashers. */
static void hash_block_slices(ring *r, const uint8_t *b, uint64_t off, size_t len)
{
    const mf_model *m = r->m;
    uint64_t end = off + len;
    while (r->ti < m->n_tensors) {
        const mf_tensor *t = &m->tensors[r->ti];
        if (t->nbytes == 0) {
            finish_tensor(r);
            continue;
        }
        uint64_t a = t->offset, z = t->offset + t->nbytes;
        if (a >= end)
            return;
        uint64_t from = a > off ? a : off, to = z < end ? z : end;
        mf_hasher_update(r->content, b + (from - off), (size_t)(to - from));
        if (r->tensor)
            mf_hasher_update(r->tensor, b + (from - off), (size_t)(to - from));
        if (z > end)
            return;
        finish_tensor(r);
    }
}

static void *content_thread(void *arg)
{
    ring *r = arg;
    for (;;) {
        pthread_mutex_lock(&r->mu);
        while (r->consumed == r->produced && !r->eof)
            pthread_cond_wait(&r->cv, &r->mu);
        if (r->consumed == r->produced) { /* eof, all done */
            pthread_mutex_unlock(&r->mu);
            break;
        }
        size_t k = (size_t)(r->consumed % NBUF);
        pthread_mutex_unlock(&r->mu);
        hash_block_slices(r, r->buf[k], r->off[k], r->len[k]);
        pthread_mutex_lock(&r->mu);
        r->consumed++;
        pthread_cond_broadcast(&r->cv);
        pthread_mutex_unlock(&r->mu);
    }
    while (r->ti < r->m->n_tensors && r->m->tensors[r->ti].nbytes == 0)
        finish_tensor(r); /* empty tensors after the last bytes */
    return NULL;
}

static ssize_t read_full(int fd, uint8_t *b, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t k = read(fd, b + got, n - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return -1;
        if (k == 0)
            break;
        got += (size_t)k;
    }
    return (ssize_t)got;
}

/* This thread: read each block, publish it, hash it whole. */
static int produce(ring *r, int fd, mf_hasher *file, const char *path, uint64_t *total,
                   mf_progress_fn progress, void *user, mf_status *st)
{
    int rc = 0;
    for (;;) {
        pthread_mutex_lock(&r->mu);
        while (r->produced - r->consumed >= NBUF)
            pthread_cond_wait(&r->cv, &r->mu);
        pthread_mutex_unlock(&r->mu);
        size_t k = (size_t)(r->produced % NBUF);
        ssize_t n = read_full(fd, r->buf[k], BUFSZ);
        if (n < 0)
            rc = mf_fail(st, MF_ERR_IO, path, (int64_t)*total, "read failed: %s", strerror(errno));
        else if (mf_progress_report(progress, user, *total, r->m->files[0].size, path, st)) {
            rc = -1; /* cancelled: stop reading; the content side drains the ring */
            n = -1;
        }
        pthread_mutex_lock(&r->mu);
        if (n > 0) {
            r->len[k] = (size_t)n;
            r->off[k] = *total;
            r->produced++;
        } else {
            r->eof = true;
        }
        pthread_cond_broadcast(&r->cv);
        pthread_mutex_unlock(&r->mu);
        if (n <= 0)
            return rc;
        mf_hasher_update(file, r->buf[k], (size_t)n);
        *total += (uint64_t)n;
    }
}

void onepass_result_free(onepass_result *r)
{
    free(r->tensor_hex);
    r->tensor_hex = NULL;
}

int hash_onepass(const mf_model *m, const char *path, mf_hash_algo algo, bool per_tensor,
                 mf_progress_fn progress, void *progress_user, onepass_result *out,
                 mf_status *st)
{
    memset(out, 0, sizeof(*out));
    if (!plain_in_order(m, path) || (m->n_files && m->files[0].borrowed))
        return 1; /* a buffer in memory (mf_open_buffer) has no file to read ahead */
    ring r = {.m = m};
    mf_hasher *file = mf_hasher_new(algo);
    r.content = mf_hasher_new(algo);
    r.tensor = per_tensor ? mf_hasher_new(algo) : NULL;
    r.tensor_hex = per_tensor ? calloc(m->n_tensors ? m->n_tensors : 1, sizeof(*r.tensor_hex))
                              : NULL;
    bool ok = file && r.content && (!per_tensor || (r.tensor && r.tensor_hex));
    for (int i = 0; i < NBUF && ok; i++)
        ok = (r.buf[i] = malloc(BUFSZ)) != NULL;
    int fd = ok ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    int rc;
    if (!ok)
        rc = mf_oom(st, path);
    else if (fd < 0)
        rc = mf_fail(st, MF_ERR_IO, path, -1, "cannot open: %s", strerror(errno));
    else {
        posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
        pthread_mutex_init(&r.mu, NULL);
        pthread_cond_init(&r.cv, NULL);
        pthread_t th;
        bool threaded = pthread_create(&th, NULL, content_thread, &r) == 0;
        uint64_t total = 0;
        if (threaded) {
            rc = produce(&r, fd, file, path, &total, progress, progress_user, st);
            pthread_join(th, NULL);
        } else {
            rc = 1; /* no thread: let the caller take the other way */
        }
        pthread_mutex_destroy(&r.mu);
        pthread_cond_destroy(&r.cv);
        if (rc == 0 && (total != m->files[0].size || r.ti != m->n_tensors))
            rc = mf_fail(st, MF_ERR_IO, path, -1,
                         "the file changed while it was hashed (%llu bytes read, %llu when opened)",
                         (unsigned long long)total, (unsigned long long)m->files[0].size);
        if (rc == 0) {
            mf_hasher_final_hex(file, out->file_hex);
            mf_hasher_final_hex(r.content, out->content_hex);
            out->tensor_hex = r.tensor_hex;
            r.tensor_hex = NULL;
        }
        close(fd);
    }
    for (int i = 0; i < NBUF; i++)
        free(r.buf[i]);
    free(r.tensor_hex);
    mf_hasher_free(file);
    mf_hasher_free(r.content);
    mf_hasher_free(r.tensor);
    return rc;
}
