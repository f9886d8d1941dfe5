/* hash_model.c - mf_hash_model: the whole-file, tensor-content and
 * per-tensor hashes of a model in as few reads as its layout allows.
 *
 * A single file whose tensors lie plainly in table order is read once
 * (hash_onepass.c: whole-file and tensor hashes on two threads); otherwise
 * the whole-file hash runs on a second thread while this one streams the
 * tensors once (content and per-tensor hashers fed from the same bytes). On
 * two cores that costs about one SHA-256 pass over the file. */
#include "ops/hash_onepass.h"

#include <pthread.h>
#include <stdlib.h>

void mf_hash_opts_init(mf_hash_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->struct_size = sizeof(*o);
    o->algo = MF_SHA256;
    o->whole_file = true;
}

void mf_hash_result_free(mf_hash_result *r)
{
    if (!r)
        return;
    free(r->tensor_hex);
    free(r);
}

/* ------------------------------------------------ whole file, on a thread */

typedef struct file_job {
    const char *path;
    const mf_mem_source *mem; /* a model in memory: the path names it in this scope */
    mf_hash_algo algo;
    char hex[129];
    mf_status st;
    int rc;
} file_job;

static void *hash_file_thread(void *arg)
{
    file_job *j = arg;
    const mf_mem_source *prev = mf_mem_scope_enter(j->mem);
    j->rc = mf_hash_file(j->path, j->algo, j->hex, &j->st);
    mf_mem_scope_leave(prev);
    return NULL;
}

/* ------------------------------------------------ tensors, streamed once */

typedef struct tensor_pass {
    const mf_model *m;
    const mf_hash_opts *o;
    mf_hasher *content, *tensor;
    uint64_t done, total;
} tensor_pass;

static int pass_sink(void *ctx, const void *buf, size_t n, mf_status *st)
{
    tensor_pass *p = ctx;
    mf_hasher_update(p->content, buf, n);
    if (p->tensor)
        mf_hasher_update(p->tensor, buf, n);
    p->done += n;
    return mf_progress_report(p->o->progress, p->o->progress_user, p->done, p->total,
                              p->m->path, st);
}

static int hash_tensors(const mf_model *m, const mf_hash_opts *o, mf_hash_result *r,
                        mf_status *st)
{
    tensor_pass p = {.m = m, .o = o};
    for (size_t i = 0; i < m->n_tensors; i++)
        p.total += m->tensors[i].nbytes;
    p.content = mf_hasher_new(o->algo);
    p.tensor = o->per_tensor ? mf_hasher_new(o->algo) : NULL;
    int rc = !p.content || (o->per_tensor && !p.tensor) ? mf_oom(st, m->path) : 0;
    for (size_t i = 0; i < m->n_tensors && rc == 0; i++) {
        rc = mf_tensor_stream(m, &m->tensors[i], pass_sink, &p, st);
        if (rc == 0 && p.tensor)
            mf_hasher_final_hex(p.tensor, r->tensor_hex[i]);
    }
    if (rc == 0)
        mf_hasher_final_hex(p.content, r->content_hex);
    mf_hasher_free(p.content);
    mf_hasher_free(p.tensor);
    return rc;
}

/* Two passes: the file on a second thread, the tensors here. */
static int hash_two_pass(const mf_model *m, const mf_hash_opts *o, bool whole_file,
                         mf_hash_result *r, mf_status *st)
{
    file_job job = {.path = m->path, .mem = m->mem, .algo = o->algo};
    mf_status_init(&job.st);
    pthread_t th;
    bool threaded = whole_file && pthread_create(&th, NULL, hash_file_thread, &job) == 0;
    if (whole_file && !threaded)
        hash_file_thread(&job);
    int rc = hash_tensors(m, o, r, st);
    if (threaded)
        pthread_join(th, NULL);
    if (whole_file && job.rc) {
        if (rc) /* the file's error is the one to tell */
            mf_status_clear(st);
        mf_status_merge(st, &job.st);
        rc = -1;
    } else if (whole_file) {
        memcpy(r->file_hex, job.hex, sizeof(r->file_hex));
        r->has_file = true;
    }
    mf_status_clear(&job.st);
    return rc;
}

int mf_hash_model(const mf_model *m, const mf_hash_opts *opts, mf_hash_result **out,
                  mf_status *st)
{
    MF_ST_GUARD(st);
    *out = NULL;
    mf_hash_opts o;
    mf_hash_opts_init(&o);
    if (mf_opts_copy(&o, sizeof(o), opts, "mf_hash_opts", st))
        return -1;
    if ((unsigned)o.algo > MF_XXH3)
        return mf_fail(st, MF_ERR_USAGE, m->path, -1, "unknown hash algorithm %d", (int)o.algo);
    mf_hash_result *r = calloc(1, sizeof(*r));
    if (!r)
        return mf_oom(st, m->path);
    r->algo = o.algo;
    if (o.per_tensor) {
        r->tensor_hex = calloc(m->n_tensors ? m->n_tensors : 1, sizeof(*r->tensor_hex));
        if (!r->tensor_hex) {
            free(r);
            return mf_oom(st, m->path);
        }
        r->n_tensors = m->n_tensors;
    }
    /* a remote file has no whole-file hash here: that would download it
     * (the Hub states an LFS file's SHA-256: mf_remote_info's linked_etag) */
    bool whole_file = o.whole_file && (m->mem || !mf_is_dir(m->path)) &&
                      !(m->n_files && mf_source_is_remote(m->files[0].base));
    /* one read of the file when the layout allows it, else two passes */
    onepass_result op;
    int rc = whole_file ? hash_onepass(m, m->path, o.algo, o.per_tensor, o.progress,
                                       o.progress_user, &op, st)
                        : 1;
    if (rc == 0) {
        memcpy(r->file_hex, op.file_hex, sizeof(r->file_hex));
        memcpy(r->content_hex, op.content_hex, sizeof(r->content_hex));
        r->has_file = true;
        if (o.per_tensor && m->n_tensors)
            memcpy(r->tensor_hex, op.tensor_hex, m->n_tensors * sizeof(*r->tensor_hex));
        onepass_result_free(&op);
    } else if (rc > 0) {
        rc = hash_two_pass(m, &o, whole_file, r, st);
    }
    if (rc) {
        mf_hash_result_free(r);
        return -1;
    }
    *out = r;
    return 0;
}
