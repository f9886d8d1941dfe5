/* hf_prequant_infer.c - a single .safetensors file without its config.json
 * whose tensors follow a known packed layout: the quantization_config the
 * producing tool would have written beside it is inferred from the tensor
 * names, dtypes and shapes, then the file opens as hf_prequant.c opens a
 * directory (logical view, quant.* metadata, the same shape rules).
 *
 * What the names and shapes prove, per method (doc/prequant.md):
 *   M.qweight I32 + M.qzeros + M.scales: GPTQ when qweight's columns equal
 *     the scales' (AutoGPTQ's [in*b/32, out]; bits = 32 * qzeros columns /
 *     out), AWQ gemm when they are an eighth of them ([in, out/8], 4 bits);
 *     group size = input dimension / scale rows. GPTQ's zero-point
 *     convention cannot be seen in the tensors: the default "gptq" format
 *     (stored zero - 1) is taken, as AutoGPTQ and GPTQModel save it, and a
 *     note says so.
 *   P_blocks U8 + P_scales U8 (gpt-oss): mxfp4.
 *   M.weight F8 + M.weight_scale_inv: fp8 in 128 x 128 blocks (DeepSeek-V3,
 *     Qwen3-FP8); + M.weight_scale: per-channel / per-tensor fp8.
 *   M.weight U8 + M.weight_scale F8_E4M3 + M.weight_scale_2: NVFP4.
 *   M.weight.quant_state.bitsandbytes__nf4|fp4, or M.SCB: bitsandbytes.
 * compressed-tensors is not inferred (its scheme lives only in the
 * config). Nothing is inferred from a partial set. */
#include "formats/hf/hf_int.h"

#include <stdlib.h>

static const mf_tensor *named(const mf_model *m, const char *base, size_t bl, const char *suf)
{
    size_t sl = strlen(suf);
    for (size_t i = 0; i < m->n_tensors; i++) {
        const char *n = m->tensors[i].name;
        if (strlen(n) == bl + sl && !strncmp(n, base, bl) && !strcmp(n + bl, suf))
            return &m->tensors[i];
    }
    return NULL;
}

static bool suffix(const char *s, const char *suf, size_t *bl)
{
    size_t n = strlen(s), k = strlen(suf);
    if (n < k || strcmp(s + n - k, suf))
        return false;
    *bl = n - k;
    return true;
}

static bool is_f8(mf_dtype t)
{
    return t == MF_F8_E4M3 || t == MF_F8_E5M2;
}

/* GPTQ or AWQ from one complete qweight/qzeros/scales triple. */
static json_t *infer_gptq_awq(const mf_model *m, const mf_tensor *qw, size_t bl)
{
    const mf_tensor *qz = named(m, qw->name, bl, ".qzeros"), *sc = named(m, qw->name, bl, ".scales");
    if (!qz || !sc || qw->dtype != MF_I32 || qw->ndim != 2 || qz->ndim != 2 || sc->ndim != 2 ||
        sc->shape[0] < 1 || sc->shape[1] < 1)
        return NULL;
    int64_t out = sc->shape[1], groups = sc->shape[0];
    if (qw->shape[1] == out) { /* GPTQ: [in * bits / 32, out] */
        int64_t bits = 32 * qz->shape[1] / out;
        if (bits < 2 || bits > 8 || 32 * qz->shape[1] != bits * out)
            return NULL;
        int64_t in = qw->shape[0] * 32 / bits;
        int64_t group = groups == 1 ? -1 : in / groups;
        return json_pack("{s:s, s:I, s:I, s:b, s:s}", "quant_method", "gptq", "bits", (json_int_t)bits,
                         "group_size", (json_int_t)group, "desc_act",
                         named(m, qw->name, bl, ".g_idx") != NULL, "checkpoint_format", "gptq");
    }
    if (qw->shape[1] * 8 == out) /* AWQ gemm: [in, out / 8] */
        return json_pack("{s:s, s:i, s:I, s:s}", "quant_method", "awq", "bits", 4, "group_size",
                         (json_int_t)(qw->shape[0] / groups), "version", "gemm");
    return NULL;
}

static json_t *infer_one(const mf_model *m, const mf_tensor *t)
{
    size_t bl;
    if (suffix(t->name, ".qweight", &bl))
        return infer_gptq_awq(m, t, bl);
    if (suffix(t->name, "_blocks", &bl) && t->dtype == MF_U8) {
        const mf_tensor *s = named(m, t->name, bl, "_scales");
        return s && s->dtype == MF_U8 ? json_pack("{s:s}", "quant_method", "mxfp4") : NULL;
    }
    if (suffix(t->name, ".weight_scale_inv", &bl)) {
        const mf_tensor *w = named(m, t->name, bl, ".weight");
        return w && is_f8(w->dtype)
                   ? json_pack("{s:s, s:[i,i]}", "quant_method", "fp8", "weight_block_size", 128, 128)
                   : NULL;
    }
    if (suffix(t->name, ".weight_scale_2", &bl)) {
        const mf_tensor *w = named(m, t->name, bl, ".weight"), *s = named(m, t->name, bl, ".weight_scale");
        return w && s && w->dtype == MF_U8 && s->dtype == MF_F8_E4M3
                   ? json_pack("{s:s}", "quant_method", "modelopt") : NULL;
    }
    if (suffix(t->name, ".weight_scale", &bl)) {
        const mf_tensor *w = named(m, t->name, bl, ".weight");
        bool nvfp4 = named(m, t->name, bl, ".weight_scale_2") != NULL;
        return w && is_f8(w->dtype) && !nvfp4
                   ? json_pack("{s:s}", "quant_method", "fbgemm_fp8") : NULL;
    }
    if (strstr(t->name, ".weight.quant_state.bitsandbytes__") || suffix(t->name, ".SCB", &bl))
        return json_pack("{s:s}", "quant_method", "bitsandbytes");
    return NULL;
}

/* The float type the file's unquantized tensors have (what the config's
 * torch_dtype would say); when none, BF16, the type of the FP8 / NVFP4 /
 * MXFP4 releases (DeepSeek-V3, Qwen3-FP8, gpt-oss, ModelOpt's). */
static const char *native_name(const mf_model *m)
{
    for (size_t i = 0; i < m->n_tensors; i++) {
        mf_dtype d = m->tensors[i].dtype;
        if (d == MF_F16)
            return "float16";
        if (d == MF_BF16)
            return "bfloat16";
    }
    return "bfloat16";
}

int mf_prequant_infer_single(mf_model *m, unsigned flags, mf_status *st)
{
    json_t *qc = NULL;
    for (size_t i = 0; !qc && i < m->n_tensors; i++)
        qc = infer_one(m, &m->tensors[i]);
    if (!qc)
        return 0;
    json_t *cfg = json_pack("{s:o, s:s}", "quantization_config", qc, "torch_dtype", native_name(m));
    if (!cfg)
        return mf_oom(st, m->path);
    const char *method = json_string_value(json_object_get(qc, "quant_method"));
    mf_model_note(m, "no config.json: the tensors follow %s's packed layout (quantization_config "
                  "inferred from their names and shapes, the model's dtype taken as %s%s)", method,
                  native_name(m),
                  !strcmp(method, "gptq") ? "; zero points taken as checkpoint_format \"gptq\"" : "");
    int rc = mf_hf_prequant_open(m, cfg, flags & MF_OPEN_STRICT, st);
    json_decref(cfg);
    return rc;
}
