/* diff.h - two models compared tensor by tensor, across formats. */
#ifndef MF_DIFF_H
#define MF_DIFF_H
#include "core/core.h"

typedef enum mf_diff_kind {
    MF_DIFF_SAME_BYTES,   /* same dtype, shape and canonical bytes */
    MF_DIFF_SAME_VALUES,  /* other dtype or layout, equal values as floats */
    MF_DIFF_VALUES,       /* values differ (stats say how much) */
    MF_DIFF_SHAPE,        /* shapes differ */
    MF_DIFF_ONLY_A, MF_DIFF_ONLY_B,
    MF_DIFF_INCOMPARABLE, /* e.g. STRING tensors of different bytes */
} mf_diff_kind;

typedef struct mf_diff_row {
    const char *name;
    mf_diff_kind kind;
    const mf_tensor *a, *b;
    double max_abs, rmse, cosine; /* MF_DIFF_VALUES / SAME_VALUES */
    uint64_t n_diff;              /* elements that differ */
} mf_diff_row;

/* Calls `row` once per tensor name (A's order, then B's extra names). */
int mf_diff(const mf_model *a, const mf_model *b,
            int (*row)(void *ctx, const mf_diff_row *r), void *ctx, mf_status *st);
const char *mf_diff_kind_name(mf_diff_kind k);
#endif
