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
 *   M.qweight [out, in / 8] + M.qzeros [out, zw] + M.scales [out, zw * 8]:
 *     AWQ gemv (WQLinear_GEMV); the group size is the one of 32, 64, 128,
 *     256, ... whose calculate_zeros_width gives zw and whose group count
 *     is the last scale column holding a non-zero value plus one (from_linear
 *     pads the columns past the groups with zeros); none or several: the
 *     note says it cannot be told and nothing is inferred.
 *   M.weight_packed I32 + M.weight_scale [+ M.weight_zero_point] +
 *     M.weight_shape: compressed-tensors pack-quantized (bits = 32 * packed
 *     columns / weight_shape[1]; strategy tensor / channel / group and the
 *     group size from the scale's shape; symmetric when no zero point);
 *     M.weight I8 + M.weight_scale (float): int-quantized (naive-quantized
 *     stores the same tensors and dequantizes alike; the note says so);
 *     M.weight F8 + an F16 / BF16 M.weight_scale: float-quantized. An F8
 *     weight with an F32 weight_scale is fbgemm_fp8's layout and also
 *     AutoFP8's and compressed-tensors' with F32 scales: every one of them
 *     dequantizes it as the same F32 product, and the note says so.
 * Nothing is inferred from a partial set. */
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

/* AutoAWQ gemv.py calculate_zeros_width */
static int64_t zeros_width(int64_t in, int64_t group)
{
    int64_t mult = group >= 128 ? 1 : group == 64 ? 2 : group == 32 ? 4 : 0;
    if (!mult || in % group)
        return -1;
    int64_t base = (in / group + 7) / 8;
    return (base + mult - 1) / mult * mult;
}

/* The last column of a 2-D float tensor with a non-zero value in any
 * row, or -1. */
static int64_t last_nonzero_column(const mf_tensor *t)
{
    const int es = t->dtype == MF_F32 ? 4 : 2;
    const uint32_t mag = es == 4 ? 0x7fffffffu : 0x7fffu;
    int64_t last = -1;
    for (int64_t r = 0; t->data && r < t->shape[0]; r++)
        for (int64_t c = t->shape[1] - 1; c > last; c--) {
            const uint8_t *p = t->data + (uint64_t)(r * t->shape[1] + c) * (uint64_t)es;
            if ((es == 4 ? mf_rd32le(p) : mf_rd16le(p)) & mag) {
                last = c;
                break;
            }
        }
    return last;
}

/* AWQ gemv from qweight [out, in / 8], qzeros [out, zw], scales [out, zw * 8]. */
static json_t *infer_awq_gemv(const mf_tensor *qw, const mf_tensor *qz, const mf_tensor *sc,
                              char *note, size_t cap)
{
    const int64_t out = qw->shape[0], in = qw->shape[1] * 8, zw = qz->shape[1];
    if (qz->shape[0] != out || sc->shape[0] != out || sc->shape[1] != zw * 8 || qz->dtype != MF_I32 ||
        (sc->dtype != MF_F16 && sc->dtype != MF_BF16 && sc->dtype != MF_F32))
        return NULL;
    const int64_t used = last_nonzero_column(sc) + 1;
    int64_t group = 0, fits = 0;
    for (int64_t g = 32; g <= in; g *= 2)
        if (zeros_width(in, g) == zw && in / g == used)
            group = g, fits++;
    if (fits != 1) {
        snprintf(note, cap, "%s has AWQ gemv's layout, but its group size cannot be told from the "
                 "tensors (%lld fit); give the checkpoint's config.json", qw->name, (long long)fits);
        return NULL;
    }
    return json_pack("{s:s, s:i, s:I, s:s, s:b}", "quant_method", "awq", "bits", 4, "group_size",
                     (json_int_t)group, "version", "gemv", "zero_point", 1);
}

/* compressed-tensors' config_groups for one scheme of the weights. */
static json_t *ct_config(const char *format, const char *type, int64_t bits, bool sym,
                         const mf_tensor *scale, int64_t rows, int64_t cols)
{
    json_t *w = json_pack("{s:I, s:s, s:b}", "num_bits", (json_int_t)bits, "type", type, "symmetric", sym);
    if (!w)
        return NULL;
    uint64_t n = mf_tensor_nelems(scale);
    if (n == 1)
        json_object_set_new(w, "strategy", json_string("tensor"));
    else if (scale->ndim == 2 && scale->shape[0] == rows && scale->shape[1] == 1)
        json_object_set_new(w, "strategy", json_string("channel"));
    else if (scale->ndim == 2 && scale->shape[0] == rows && scale->shape[1] > 1 &&
             cols % scale->shape[1] == 0) {
        json_object_set_new(w, "strategy", json_string("group"));
        json_object_set_new(w, "group_size", json_integer(cols / scale->shape[1]));
    } else {
        json_decref(w);
        return NULL;
    }
    return json_pack("{s:s, s:s, s:{s:{s:[s], s:o}}}", "quant_method", "compressed-tensors", "format",
                     format, "config_groups", "group_0", "targets", "Linear", "weights", w);
}

/* pack-quantized: weight_packed I32 [out, in * bits / 32] + weight_shape. */
static json_t *infer_ct_packed(const mf_model *m, const mf_tensor *wp, size_t bl)
{
    const mf_tensor *sc = named(m, wp->name, bl, ".weight_scale"),
                    *shape = named(m, wp->name, bl, ".weight_shape");
    if (!sc || !shape || wp->dtype != MF_I32 || wp->ndim != 2 || !shape->data ||
        mf_tensor_nelems(shape) != 2 || (shape->dtype != MF_I64 && shape->dtype != MF_I32))
        return NULL;
    bool i64 = shape->dtype == MF_I64;
    int64_t rows = i64 ? (int64_t)mf_rd64le(shape->data) : (int32_t)mf_rd32le(shape->data);
    int64_t cols = i64 ? (int64_t)mf_rd64le(shape->data + 8) : (int32_t)mf_rd32le(shape->data + 4);
    if (rows != wp->shape[0] || cols < 1 || (32 * wp->shape[1]) % cols)
        return NULL;
    int64_t bits = 32 * wp->shape[1] / cols;
    if (bits != 2 && bits != 4 && bits != 8)
        return NULL;
    return ct_config("pack-quantized", "int", bits, !named(m, wp->name, bl, ".weight_zero_point"),
                     sc, rows, cols);
}

/* GPTQ or AWQ from one complete qweight/qzeros/scales triple. */
static json_t *infer_gptq_awq(const mf_model *m, const mf_tensor *qw, size_t bl, char *note,
                              size_t cap)
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
    if (qw->shape[0] == sc->shape[0]) /* AWQ gemv: [out, in / 8] */
        return infer_awq_gemv(qw, qz, sc, note, cap);
    return NULL;
}

static json_t *infer_one(const mf_model *m, const mf_tensor *t, char *note, size_t cap)
{
    size_t bl;
    if (suffix(t->name, ".qweight", &bl))
        return infer_gptq_awq(m, t, bl, note, cap);
    if (suffix(t->name, ".weight_packed", &bl))
        return infer_ct_packed(m, t, bl);
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
        if (!w || named(m, t->name, bl, ".weight_scale_2") || w->ndim != 2)
            return NULL;
        bool sym = !named(m, t->name, bl, ".weight_zero_point");
        if (w->dtype == MF_I8 && (t->dtype == MF_F16 || t->dtype == MF_BF16 || t->dtype == MF_F32)) {
            snprintf(note, cap, "compressed-tensors int-quantized (naive-quantized stores the same "
                     "tensors and dequantizes them alike)");
            return ct_config("int-quantized", "int", 8, sym, t, w->shape[0], w->shape[1]);
        }
        if (is_f8(w->dtype) && (t->dtype == MF_F16 || t->dtype == MF_BF16))
            return ct_config("float-quantized", "float", 8, sym, t, w->shape[0], w->shape[1]);
        if (is_f8(w->dtype) && t->dtype == MF_F32 && sym) {
            snprintf(note, cap, "fbgemm_fp8's layout, which AutoFP8's fp8 and compressed-tensors' "
                     "float-quantized with F32 scales share: each dequantizes it as the same F32 "
                     "product");
            return json_pack("{s:s}", "quant_method", "fbgemm_fp8");
        }
        return NULL;
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
    char note[400] = "", why[400] = "";
    for (size_t i = 0; !qc && i < m->n_tensors; i++) {
        qc = infer_one(m, &m->tensors[i], note, sizeof(note));
        if (!qc && note[0] && !why[0])
            memcpy(why, note, sizeof(why)); /* the first ambiguity, if nothing is found */
        if (!qc)
            note[0] = 0;
    }
    if (!qc) {
        if (why[0])
            mf_model_note(m, "no config.json: %s", why);
        return 0;
    }
    json_t *cfg = json_pack("{s:o, s:s}", "quantization_config", qc, "torch_dtype", native_name(m));
    if (!cfg)
        return mf_oom(st, m->path);
    const char *method = json_string_value(json_object_get(qc, "quant_method"));
    mf_model_note(m, "no config.json: the tensors follow %s's packed layout (quantization_config "
                  "inferred from their names and shapes, the model's dtype taken as %s%s)", method,
                  native_name(m),
                  !strcmp(method, "gptq") ? "; zero points taken as checkpoint_format \"gptq\"" : "");
    if (note[0])
        mf_model_note(m, "the inferred layout: %s", note);
    int rc = mf_hf_prequant_open(m, cfg, flags & MF_OPEN_STRICT, st);
    json_decref(cfg);
    return rc;
}
