/* estimate.h - memory estimate (weights + KV cache) and the device plan
 * (Accelerate's automatic device map) of a model. */
#ifndef MF_ESTIMATE_H
#define MF_ESTIMATE_H
#include "core/core.h"

#include <jansson.h>

/* ----------------------------------------------------------- estimate */

typedef struct mf_estimate_opts {
    int64_t ctx;             /* 0: the model's training context (4096 if unknown) */
    int64_t batch;           /* 0: 1 */
    const char *kv_type;     /* NULL: f16; a ggml type: f32, f16, bf16, q8_0, q4_0, ... */
    const char *weight_type; /* NULL: as stored; a ggml type or a mix (Q4_K_M, ...) */
} mf_estimate_opts;

typedef struct mf_estimate {
    char source[32];         /* "weights", "config.json" or "gguf" */
    char arch[64];
    int64_t n_layers, n_heads, n_kv_heads, hidden, head_dim_k, head_dim_v;
    int64_t ctx, ctx_train, batch;
    uint64_t n_params;
    bool params_from_config; /* computed from config.json (no weights read) */
    uint64_t weight_bytes;
    double weight_bpw;
    char weight_type[64];
    char kv_type[16];
    double kv_bytes_per_elem;
    uint64_t kv_bytes;       /* layers x ctx x batch x (K + V bytes per token) */
    uint64_t total_bytes;
} mf_estimate;

/* PATH: a Hugging Face directory (config.json; weights when present) or a
 * GGUF file. */
int mf_estimate_path(const char *path, const mf_estimate_opts *o, mf_estimate *e, mf_status *st);
/* From a config.json object alone (weights computed from it). */
int mf_estimate_config(const json_t *cfg, const mf_estimate_opts *o, mf_estimate *e, mf_status *st);
/* Bits per weight of a ggml type ("q8_0": 8.5) or of a llama.cpp mix
 * ("Q4_K_M": its measured average); canon gets the type's spelling. */
int mf_type_bpw(const char *name, double *bpw, char *canon, size_t cl);

/* --------------------------------------------------------------- plan */

#define MF_PLAN_UNLIMITED UINT64_MAX

typedef struct mf_plan_device {
    char name[64];           /* "cuda:0", "0", "mps", "cpu", "disk" */
    uint64_t capacity;       /* bytes; MF_PLAN_UNLIMITED for disk */
} mf_plan_device;

/* A tensor to place, in the model's declaration order. */
typedef struct mf_plan_tensor {
    const char *name;
    uint64_t bytes;
} mf_plan_tensor;

typedef struct mf_plan_entry {
    char *module;            /* "" for the whole model */
    size_t device;           /* index into devices */
} mf_plan_entry;

typedef struct mf_plan {
    mf_plan_device *devices; /* as given, GPUs before cpu before disk; disk added */
    size_t n_devices;
    uint64_t *used;          /* bytes placed per device */
    mf_plan_entry *map;      /* module -> device, cleaned as Accelerate cleans it */
    size_t n_map;
    uint64_t total;
    uint64_t reserved;       /* largest no-split layer, kept free on the main devices */
} mf_plan;

/* Accelerate's infer_auto_device_map over the module tree of the tensor
 * names (decoder layers "*.layers.N", "*.h.N", "*.blocks.N", "blk.N" are
 * never split); tied: the parameter tied to the embedding (lm_head.weight)
 * or NULL, with its embedding's name. */
int mf_plan_tensors(const mf_plan_tensor *t, size_t n, const char *tied, const char *tied_to,
                    const mf_plan_device *devs, size_t n_devs, mf_plan *out, mf_status *st);
/* PATH: a Hugging Face directory (weights or, without them, config.json)
 * or any weights file; dtype: NULL (as stored, or torch_dtype) or the
 * dtype to load floating-point weights in ("f16", "bf16", "f32"). */
int mf_plan_path(const char *path, const mf_plan_device *devs, size_t n_devs, const char *dtype,
                 mf_plan *out, mf_status *st);
void mf_plan_free(mf_plan *p);
#endif
