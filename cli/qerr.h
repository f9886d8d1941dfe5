/* qerr.h - how far a model is from its original (diff HF_DIR model.gguf's
 * summary, report --against): mf_diff's rows summed per tensor, per layer
 * and for the whole model, and the GGUF side of an HF directory / GGUF pair
 * read back through the converter's tables. */
#ifndef MF_QERR_H
#define MF_QERR_H
#include "cli.h"

enum { QERR_WORST = 5 };

/* Sums over tensors, each weighted by its element count n. */
typedef struct qerr_acc {
    double n, sum_sq, sum_ref_sq, sum_cos; /* n; n * rmse^2, n * rms_ref^2, n * cosine */
    size_t tensors;
} qerr_acc;

typedef struct qerr_layer {
    char name[128]; /* cli_layer_of; "(outside the layers)" */
    qerr_acc acc;
} qerr_layer;

/* One tensor both sides hold (kept when qerr_sum.keep_tensors). */
typedef struct qerr_tensor {
    char *name;
    mf_dtype ref, model; /* A's and B's dtypes */
    double n, rmse, max_abs, cosine, rms_ref;
} qerr_tensor;

typedef struct qerr_sum {
    qerr_acc all;
    qerr_layer *layers;
    size_t n_layers, cap_layers;
    struct {
        char name[256];
        double rmse, cosine;
    } worst[QERR_WORST]; /* by rmse, largest first */
    size_t n_worst;
    bool keep_tensors;
    qerr_tensor *tensors;
    size_t n_tensors, cap_tensors;
} qerr_sum;

/* A row of mf_diff(REFERENCE, MODEL) into the sums; rows of other kinds
 * than same bytes / same values / values are left out. Equal bytes or
 * values count as rmse 0, cosine 1. rms_same: A's root mean square for a
 * row of equal bytes (mf_diff does not read their values; 0 if unknown).
 * 0, or -1 when out of memory. */
int qerr_add(qerr_sum *s, const mf_diff_row *r, double rms_same);
void qerr_free(qerr_sum *s);
double qerr_rmse(const qerr_acc *a);
double qerr_cosine(const qerr_acc *a);
/* rmse / rms of the reference (0 when the reference is all zeros). */
double qerr_rel(const qerr_acc *a);
/* Signal to noise in dB, 10 log10(sum ref^2 / sum (ref - model)^2);
 * INFINITY when there is no error. */
double qerr_snr_db(const qerr_acc *a);
/* The root mean square of a tensor's values (read whole as F32). */
int qerr_tensor_rms(const mf_model *m, const mf_tensor *t, double *rms, mf_status *st);

/* An HF directory against a GGUF: the GGUF read as the directory it came
 * from (mf_open_gguf_as_hf: the converter's tables read backwards, permutes
 * undone, every tensor dequantized to F32 as it is streamed; nothing
 * written), which then stands for that side (*side closed and replaced).
 * arch_file: the --arch-file the GGUF was made with, or NULL. 0, or -1
 * with st. */
int qerr_map_gguf_side(const char *path, const char *arch_file, mf_model **side, mf_status *st);
/* Which of a and b is the GGUF to map: 1 (b) when a is an HF directory
 * and b a GGUF, 0 for the other way round, -1 otherwise. */
int qerr_gguf_side(const mf_model *a, const mf_model *b);

#endif
