/* imatrix.h - llama.cpp importance-matrix files, read as llama-quantize
 * reads them.
 *
 * Two forms:
 *  - legacy `.dat` (llama-imatrix before mid-2025): int32 n_entries; per
 *    entry int32 len, name bytes, int32 ncall, int32 nval, nval float32;
 *    then optionally int32 last_call, int32 len, dataset name. Stored values
 *    are sums over ncall calls: each value is divided by ncall (a float32
 *    division) when ncall > 0;
 *  - GGUF: tensors `<name>.in_sum2` (F32 [n_mat, n]) and `<name>.counts`
 *    (F32, n_mat values); value = in_sum2 / count for each matrix, or 1 when
 *    its count is 0. KVs imatrix.datasets, imatrix.chunk_count,
 *    imatrix.chunk_size.
 * Either way the result is one float vector per weight name. */
#ifndef MF_IMATRIX_H
#define MF_IMATRIX_H
#include "core/core.h"

typedef struct mf_imatrix_entry {
    const char *name;
    const float *values;
    size_t n;
} mf_imatrix_entry;

typedef struct mf_imatrix {
    bool is_gguf;
    mf_imatrix_entry *entries; /* sorted by name, names unique (the last wins) */
    size_t n_entries;
    const char *dataset; /* the (first) dataset it was computed on, or NULL */
    int chunks;          /* chunks it was computed on; 0: not recorded */
    mf_arena *arena;
} mf_imatrix;

int mf_imatrix_load(const char *path, mf_imatrix **out, mf_status *st);
const mf_imatrix_entry *mf_imatrix_find(const mf_imatrix *im, const char *name);
void mf_imatrix_free(mf_imatrix *im);

#endif /* MF_IMATRIX_H */
