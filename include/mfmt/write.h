/* mfmt/write.h - writing files: an atomic writer and the safetensors and
 * GGUF writers. Part of the public API; include <mfmt.h>, not this file. */
#ifndef MFMT_WRITE_H
#define MFMT_WRITE_H
#ifndef MFMT_H
#error "include <mfmt.h>"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Atomic file writer: a temporary file beside `path`, fsync, rename; the
 * file appears whole or not at all. A handle belongs to one thread. */
typedef struct mf_atomic mf_atomic;
MF_API int mf_atomic_open(const char *path, mf_atomic **out, mf_status *st);
MF_API int mf_atomic_write(mf_atomic *w, const void *buf, size_t n, mf_status *st);
/* An mf_sink_fn writing to the mf_atomic passed as ctx. */
MF_API int mf_atomic_sink(void *w, const void *buf, size_t n, mf_status *st);
MF_API uint64_t mf_atomic_tell(const mf_atomic *w); /* bytes written so far */
/* Publishes the file under its name. Frees w, also on failure. */
MF_API int mf_atomic_commit(mf_atomic *w, mf_status *st);
/* Removes the temporary file and frees w. NULL is fine. */
MF_API void mf_atomic_abort(mf_atomic *w);

/* What a writer needs to know of one output tensor before any data. */
typedef struct mf_out_tensor {
    const char *name;
    mf_dtype dtype;
    int ndim;
    int64_t shape[MF_MAX_DIMS]; /* C order */
} mf_out_tensor;

/* Called once per tensor, in order: write exactly the tensor's bytes
 * (canonical layout) to sink(sink_ctx, ...). Return -1 (st filled) to fail. */
typedef int (*mf_fill_fn)(void *ctx, size_t index, mf_sink_fn sink,
                          void *sink_ctx, mf_status *st);

/* Writes a safetensors file atomically; `meta` holds string values only
 * (the __metadata__ map). Fails, writing nothing, when fill gives more or
 * fewer bytes than a tensor holds. */
MF_API int mf_safetensors_write(const char *path, const mf_out_tensor *tensors,
                                size_t n, const mf_kv *meta, size_t n_meta,
                                mf_fill_fn fill, void *ctx, mf_status *st);

/* GGUF v3, little-endian, atomically. Metadata written in the order given;
 * alignment from general.alignment when present in meta, else 32. */
MF_API int mf_gguf_write(const char *path, const mf_out_tensor *tensors, size_t n,
                         const mf_kv *meta, size_t n_meta, mf_fill_fn fill,
                         void *ctx, mf_status *st);

#ifdef __cplusplus
}
#endif
#endif /* MFMT_WRITE_H */
