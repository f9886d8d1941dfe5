/* prequant.h - dequantizers of the layouts pre-quantized Hugging Face
 * checkpoints store (GPTQ, AWQ, FP8, compressed-tensors, MXFP4 as gpt-oss
 * ships it, NVFP4 as ModelOpt writes it), beside the ggml blocks.
 *
 * A reader describes the packing (mf_pq: the method, its parameters and
 * the stored parts, each a pointer into a mapping with its dtype and
 * shape); mf_pq_check proves every part has the shape the method implies
 * and every index (g_idx) is in range; mf_pq_rows then gives rows of one
 * logical matrix as floats, each value computed as the producing project computes
 * it (the operation order and the dtype of each step: see each method in
 * prequant.c) and rounded to q->native, the dtype upstream gets.
 *
 * The logical tensor is the weight the model had before quantization:
 * [rows, cols] = nn.Linear's [out_features, in_features] (gpt-oss experts:
 * [n_experts, in, out] as transformers' GptOss experts hold them), with
 * nmat leading matrices (experts) for 3-D tensors. */
#ifndef MF_PREQUANT_H
#define MF_PREQUANT_H
#include "core/core.h"

typedef enum mf_pq_method {
    MF_PQ_GPTQ,      /* AutoGPTQ / GPTQModel / optimum, checkpoint_format gptq or gptq_v2 */
    MF_PQ_AWQ,       /* AutoAWQ gemm (and gemv: mf_pq.gemv) */
    MF_PQ_FP8,       /* fp8 / fbgemm_fp8 / compressed-tensors float-quantized */
    MF_PQ_CT_INT,    /* compressed-tensors pack-quantized / int-quantized / naive */
    MF_PQ_MXFP4,     /* gpt-oss *_blocks + *_scales */
    MF_PQ_NVFP4,     /* ModelOpt NVFP4 */
    MF_PQ_BNB4,      /* bitsandbytes nf4 / fp4, nested (double) quantization or not */
    MF_PQ_BNB8,      /* bitsandbytes LLM.int8 (weight + SCB) */
    MF_PQ_COUNT
} mf_pq_method;

/* One stored tensor of a packed weight. */
typedef struct mf_pq_part {
    const char *name;  /* its name in the checkpoint (for messages) */
    const uint8_t *p;  /* its bytes, C order, little-endian */
    uint64_t nbytes;
    mf_dtype dt;
    int ndim;
    int64_t shape[MF_MAX_DIMS];
} mf_pq_part;

/* How the scales of FP8 / compressed-tensors weights are laid out. */
typedef enum mf_pq_scale_kind {
    MF_PQ_SCALE_TENSOR,  /* one scale */
    MF_PQ_SCALE_CHANNEL, /* one per output row ([rows] or [rows, 1]) */
    MF_PQ_SCALE_GROUP,   /* [rows, cols / group] */
    MF_PQ_SCALE_BLOCK,   /* [ceil(rows / br), ceil(cols / bc)] (DeepSeek's weight_scale_inv) */
} mf_pq_scale_kind;

typedef struct mf_pq {
    mf_pq_method method;
    int bits;              /* 2, 3, 4, 8 for the integer methods; 8 for FP8; 4 for FP4 */
    int group_size;        /* GPTQ/AWQ/CT group; -1: the whole input dimension */
    bool sym;              /* no zero points stored (CT) / symmetric (GPTQ: informative) */
    bool desc_act;         /* GPTQ act-order: g_idx maps each input to its group */
    bool gemv;             /* AWQ: WQLinear_GEMV's layout (version "gemv"), not GEMM's */
    int zero_offset;       /* GPTQ checkpoint_format "gptq": 1 (stored zero - 1); gptq_v2: 0 */
    mf_pq_scale_kind scale_kind;
    int block_rows, block_cols; /* MF_PQ_SCALE_BLOCK */
    int64_t nmat, rows, cols;   /* logical: nmat matrices of [rows, cols] */
    mf_dtype native;       /* the dtype upstream's dequantization gives */
    bool f32_math;         /* FP8 as llama.cpp's convert_hf_to_gguf.py dequantizes it
                              (ecbcb7ea dequant_model: weight.float() * scale.float()):
                              one float32 product, never rounded to the scale's dtype
                              or to native */
    mf_pq_part w, scale, zero, g_idx, scale2; /* absent parts: p == NULL */
    /* bitsandbytes 4-bit: scale = absmax (F32, or U8 codes when nested),
     * code = quant_map (16 F32), nested_* the absmax's own blockwise
     * quantization (256 F32 codes, F32 absmax per nested_blocksize) and
     * offset, which is added back */
    mf_pq_part code, nested_absmax, nested_code;
    int blocksize, nested_blocksize;
    float offset;
} mf_pq;

/* The method's name as quantization_config spells it ("gptq", "awq", ...). */
const char *mf_pq_method_name(mf_pq_method m);

/* Checks q's parts against its method and parameters; on a breach returns
 * -1 with `why` holding "<tensor>: <rule>" (never reads out of bounds). */
int mf_pq_check(const mf_pq *q, char *why, size_t cap);

/* Rows [row0, row0 + nrows) of matrix `mat` (0 <= mat < nmat), each
 * value the one upstream computes, rounded to q->native, then written as
 * dt (F32, F16 or BF16, little-endian; rounded to nearest even as
 * mf_f32_to_f16 / mf_f32_to_bf16) to dst, nrows * cols elements. q must
 * have passed mf_pq_check. Thread-safe; -1 only when out of memory. */
int mf_pq_rows(const mf_pq *q, int64_t mat, int64_t row0, int64_t nrows, mf_dtype dt, void *dst);

/* Bits per logical weight the stored parts take (all of them: codes,
 * scales, zero points, indices), for reports. */
double mf_pq_bits_per_weight(const mf_pq *q);

/* The FP8 / FP4 element types as floats (exact). */
float mf_pq_e4m3_to_f32(uint8_t b);
float mf_pq_e5m2_to_f32(uint8_t b);
#endif
