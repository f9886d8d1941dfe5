/* convert_mlx.h - the MLX writer's plan (convert_mlx.c: which tensors,
 * names, dtypes, quantization, config) and its output (convert_mlx_write.c:
 * streaming, shards, index, the directory). */
#ifndef MF_CONVERT_MLX_H
#define MF_CONVERT_MLX_H
#include "core/core.h"

#include <jansson.h>

/* A weight of the GGUF a lossless conversion starts from (opts->lossless):
 * the Hugging Face tensor `hf_name` is whole rows of GGUF tensor `src`
 * (Q4_0, Q4_1 or Q8_0), unpermuted with `heads` (0: in order). */
typedef struct mlx_lossless {
    const char *hf_name;
    const mf_tensor *src;
    int64_t heads;
    int bits;               /* 4 or 8 */
} mlx_lossless;

typedef struct mlx_lossless_set {
    const mf_model *gguf;
    mlx_lossless *v;
    size_t n;
} mlx_lossless_set;

typedef enum mlx_part { MLX_PLAIN, MLX_QWEIGHT, MLX_QSCALES, MLX_QBIASES } mlx_part;

/* One output tensor (a parameter of mlx_lm's model, in its order). */
typedef struct mlx_param {
    const mf_tensor *src;   /* the logical source tensor (for a stack: its shape) */
    const mf_tensor *const *stack; /* NULL, or the n_stack tensors mx.stack joins */
    size_t n_stack;
    const mlx_lossless *ll; /* the GGUF blocks the triple is made of, or NULL */
    const char *name;       /* output name */
    mlx_part part;
    mf_out_tensor out;      /* name, dtype, shape written */
    uint64_t nbytes;
    int bits, group_size;   /* quantized parts */
    int entry;              /* the weight's own "quantization" entry: 0 none, 1 a recipe's
                             * {group_size, bits, mode}, 2 the model's {group_size, bits},
                             * 3 {group_size, bits, mode} of a lossless GGUF weight */
    uint64_t key[4];        /* sort key: mlx_lm's parameter order */
    uint64_t logical;       /* elements counted in total_parameters (0 for scales/biases) */
} mlx_param;

struct mlx_arch;

typedef struct mlxc {
    const mf_convert_mlx_opts *o;
    mf_status *st;
    mf_arena *a;
    const char *in, *out;
    mf_model *m, *view;     /* the opened model, its logical view (or NULL) */
    const mf_model *src;    /* view or m */
    json_t *cfg;            /* config.json as written */
    const struct mlx_arch *arch; /* the model class (convert_mlx.c) */
    bool lm_head;           /* the class has an lm_head parameter here */
    const mlx_lossless_set *ll; /* opts->lossless: the GGUF's carried-over weights */
    mf_dtype cast;          /* float parameters become this (INVALID: as stored) */
    MF_VEC(mlx_param) p;
    /* writing */
    uint8_t *keep;          /* scales then biases of the last quantized weight */
    uint64_t keep_half;     /* bytes of each */
    uint64_t done, total;
    char *final_dir;
    bool made_dir;          /* OUT did not exist: removed again on failure */
    mf_atomic_set *set;     /* the output files, staged inside OUT */
} mlxc;

/* convert_mlx.c: fills c->p (sorted) and c->cfg from c->src and the
 * input directory. */
int mlx_plan(mlxc *c);

/* convert_mlx_write.c: writes the planned directory into c->tmp_dir. */
int mlx_write_weights(mlxc *c);
int mlx_copy_side_files(mlxc *c);
int mlx_write_model_card(mlxc *c);

#endif
