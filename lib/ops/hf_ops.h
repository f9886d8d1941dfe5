/* hf_ops.h - operations on Hugging Face model directories: the load report
 * (config vs weights), memory estimate and device plan. The conversion to
 * and from GGUF is the wing lib/ops/hfconv/ (its interface: hfconv/hfconv.h). */
#ifndef MF_HF_OPS_H
#define MF_HF_OPS_H
#include "formats/formats.h"
#include "ops/gguf_kv.h"

/* --------------------------------------------------------- load report */

/* A tensor the config implies: name, C-order shape, optional (a tied
 * lm_head.weight). */
typedef struct mf_hf_shape {
    char *name;
    int ndim;
    int64_t shape[2];
    bool optional;
} mf_hf_shape;
/* The tensors transformers declares for cfg's model_type (llama, mistral,
 * qwen2, qwen3, gemma, gemma2, phi3, gpt2), in declaration order; -1 with
 * st (MF_ERR_UNSUPPORTED, saying why; no file named) for others or
 * quantized checkpoints. *tied: tie_word_embeddings. */
int mf_hf_expected_tensors(const json_t *cfg, mf_hf_shape **out, size_t *n, bool *tied,
                           mf_status *st);
void mf_hf_shapes_free(mf_hf_shape *v, size_t n);

#endif
