/* hash_onepass.h - whole-file and tensor hashes in one sequential read of
 * the file (behind mf_hash_model, mfmt/hash.h).
 *
 * Hashing prints two digests of (nearly) every byte: the whole file's and
 * the tensor content's (and per tensor, when asked). Reading the tensors
 * through the memory mapping costs page faults; reading the file a second
 * time costs a pass. When every tensor is stored plainly in the one file,
 * in table order, this reads the file once with read(2) into a ring of
 * buffers: this thread hashes the whole file while a second thread hashes
 * the tensor slices of the same buffers. On two cores that takes about as
 * long as one SHA-256 of the file. */
#ifndef MF_HASH_ONEPASS_H
#define MF_HASH_ONEPASS_H
#include "core/core.h"

typedef struct onepass_result {
    char file_hex[129];
    char content_hex[129];
    char (*tensor_hex)[129]; /* per tensor when asked, malloc'd; else NULL */
} onepass_result;

/* Returns 1 (and does nothing) when the model's layout does not allow it,
 * 0 on success, -1 on error (st filled). progress: file bytes read of the
 * file's size (may cancel). */
int hash_onepass(const mf_model *m, const char *path, mf_hash_algo algo, bool per_tensor,
                 mf_progress_fn progress, void *progress_user, onepass_result *out,
                 mf_status *st);
void onepass_result_free(onepass_result *r);
#endif
