/* test_prequant.c - pre-quantized Hugging Face checkpoints (GPTQ 2/3/4/8-bit
 * with and without act-order and both zero conventions, AWQ gemm, FP8 128x128
 * blocks, fbgemm per-channel FP8, compressed-tensors pack-quantized and
 * int-quantized, gpt-oss MXFP4, ModelOpt NVFP4) against reference floats of
 * an independent numpy dequantizer: tests/data/prequant/make_prequant.py
 * packs each case as the producing project's code does (file and commit
 * cited there) and writes CASE.ref.safetensors. Every logical tensor must
 * match bit for bit in F32; the corrupt variants (bad.txt) must fail with
 * the message naming the tensor and the rule. Also the GGUF block types of
 * ggml b10256 (quant_fp4.c) on hand-made blocks. */
#include "testlib.h"
#include "testmf.h"

#include "core/core.h"
#include "core/reader.h"
#include "quant/qimpl.h"
#include "quant/quant.h"

#include <mfmt/analyze.h>
#include <mfmt/convert.h>

#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#define DATA "tests/data/prequant"

/* t of m equals rt of r bit for bit, both read as F32. */
static void check_same_f32(const char *name, const mf_model *m, const mf_tensor *t,
                           const mf_model *r, const mf_tensor *rt)
{
    const mf_dtype as = MF_F32;
    void *a = NULL, *b = NULL;
    uint64_t na = 0, nb = 0;
    mf_status st;
    mf_status_init(&st);
    CHECKF(mf_tensor_read_alloc(m, t, as, &a, &na, &st) == 0, "%s: %s", name, st.msg);
    CHECK(mf_tensor_read_alloc(r, rt, as, &b, &nb, &st) == 0);
    CHECKF(a && b && na == nb && memcmp(a, b, na) == 0, "%s: %s differs from the reference",
           name, mf_tensor_name(rt));
    mf_free(a);
    mf_free(b);
    mf_status_clear(&st);
}

/* The logical view of dir written as F16 / BF16 (mf_pq_rows' encoders:
 * F16C or the scalar loops) equals the reference floats rounded by
 * mf_f32_to_f16 / mf_f32_to_bf16, value for value. */
static void check_half_view(const char *name, const mf_model *stored, const mf_model *r,
                            mf_dtype dt)
{
    mf_model *v = NULL;
    mf_status st;
    mf_status_init(&st);
    CHECKF(mf_model_logical_view_as(stored, dt, &v, &st) == 0 && v, "%s: %s", name, st.msg);
    for (size_t i = 0; v && i < mf_model_tensor_count(r); i++) {
        const mf_tensor *rt = mf_model_tensor_at(r, i);
        const mf_tensor *t = mf_tensor_find(v, mf_tensor_name(rt));
        if (!t || mf_tensor_dtype(t) != dt)
            continue; /* passed through unquantized: not the encoders' */
        float *ref = NULL;
        uint8_t *got = NULL;
        uint64_t nr = 0, ng = 0;
        CHECK(mf_tensor_read_alloc(r, rt, MF_F32, (void **)&ref, &nr, &st) == 0);
        CHECKF(mf_tensor_read_alloc(v, t, dt, (void **)&got, &ng, &st) == 0, "%s: %s", name, st.msg);
        bool same = ref && got && ng == nr / 2;
        for (uint64_t k = 0; same && k < nr / 4; k++)
            same = mf_rd16le(got + 2 * k) ==
                   (dt == MF_F16 ? mf_f32_to_f16(ref[k]) : mf_f32_to_bf16(ref[k]));
        CHECKF(same, "%s: %s as %s differs from the rounded reference", name, mf_tensor_name(rt),
               mf_dtype_name(dt));
        mf_free(ref);
        mf_free(got);
    }
    mf_close(v);
    mf_status_clear(&st);
}

static void check_case(const char *name)
{
    char dir[512], ref[512];
    snprintf(dir, sizeof(dir), DATA "/%s", name);
    snprintf(ref, sizeof(ref), DATA "/%s.ref.safetensors", name);
    mf_open_opts o;
    mf_open_opts_init(&o);
    o.flags = MF_OPEN_LOGICAL | MF_OPEN_NO_SCAN;
    mf_model *m = NULL, *r = NULL;
    mf_status st;
    mf_status_init(&st);
    CHECKF(mf_open(dir, &o, &m, &st) == 0, "%s: %s", name, st.msg);
    o.flags = MF_OPEN_NO_SCAN;
    CHECKF(mf_open(ref, &o, &r, &st) == 0, "%s: %s", ref, st.msg);
    if (!m || !r) {
        mf_close(m);
        mf_close(r);
        mf_status_clear(&st);
        return;
    }
    for (size_t i = 0; i < mf_model_tensor_count(r); i++) {
        const mf_tensor *rt = mf_model_tensor_at(r, i);
        const mf_tensor *t = mf_tensor_find(m, mf_tensor_name(rt));
        CHECKF(t != NULL, "%s: no logical tensor %s", name, mf_tensor_name(rt));
        if (!t)
            continue;
        CHECKF(mf_tensor_ndim(t) == mf_tensor_ndim(rt) &&
                   !memcmp(mf_tensor_shape(t), mf_tensor_shape(rt),
                           sizeof(int64_t) * (size_t)mf_tensor_ndim(t)),
               "%s: %s has another shape", name, mf_tensor_name(rt));
        check_same_f32(name, m, t, r, rt);
    }
    mf_model *stored = NULL;
    o.flags = MF_OPEN_NO_SCAN;
    CHECK(mf_open(dir, &o, &stored, &st) == 0);
    unsigned was = mf_quant_set_simd(MF_QUANT_ALL);
    for (int simd = 0; stored && simd < 2; simd++) {
        mf_quant_set_simd(simd ? was : 0);
        check_half_view(name, stored, r, MF_F16);
        check_half_view(name, stored, r, MF_BF16);
    }
    mf_quant_set_simd(was);
    mf_close(stored);
    mf_close(m);
    mf_close(r);
    mf_status_clear(&st);
}

/* The F16C kernels mf_pq_rows uses give mf_f32_to_f16's halves and its
 * round trip on a sweep of float bit patterns (every 4099th, so every
 * exponent and both signs, zeros, subnormals, the overflow edge, NaNs). */
static void check_f16c_kernels(void)
{
    enum { N = 1 << 16 };
    static float x[N], y[N];
    static uint8_t h[2 * N];
    uint64_t bad = 0, n = 0;
    bool ran = true;
    for (uint64_t u0 = 0; ran && u0 < (1ull << 32); u0 += (uint64_t)N * 4099) {
        for (int k = 0; k < N; k++) {
            uint32_t u = (uint32_t)(u0 + (uint64_t)k * 4099);
            if (k < 8) /* the edges, in every chunk */
                u = (uint32_t[]){0, 0x80000000u, 0x477fefffu, 0x477ff000u, 0x33000000u, 0x33000001u,
                                 0x387fe000u, 0x7f800001u}[k];
            memcpy(&x[k], &u, 4);
            y[k] = x[k];
        }
        ran = mq_simd_f32_to_f16(x, h, N) && mq_simd_round_f16(y, N);
        for (int k = 0; ran && k < N; k++, n++) {
            float back = mf_f16_to_f32(mf_f32_to_f16(x[k]));
            bad += mf_rd16le(h + 2 * k) != mf_f32_to_f16(x[k]) || memcmp(&y[k], &back, 4) != 0;
        }
    }
    if (!ran) {
        TL_SKIP("prequant: no F16C on this CPU, the F16C kernels are not compared");
        return;
    }
    CHECKF(bad == 0, "%llu of %llu floats differ from mf_f32_to_f16", (unsigned long long)bad,
           (unsigned long long)n);
}

/* dir must fail to open, logically and strictly (MF_ERR_FORMAT), with a
 * message holding `want`. */
static void expect_refused(const char *dir, const char *want, const char *label)
{
    mf_open_opts o;
    mf_open_opts_init(&o);
    o.flags = MF_OPEN_LOGICAL | MF_OPEN_NO_SCAN;
    mf_model *m = NULL;
    mf_status st;
    mf_status_init(&st);
    int rc = mf_open(dir, &o, &m, &st);
    CHECKF(rc != 0 && strstr(st.msg, want) != NULL, "%s: got \"%s\", want \"%s\"", label,
           rc ? st.msg : "opened", want);
    mf_close(m);
    mf_status_clear(&st);
    o.flags = MF_OPEN_STRICT | MF_OPEN_NO_SCAN;
    m = NULL;
    rc = mf_open(dir, &o, &m, &st);
    CHECKF(rc != 0 && st.code == MF_ERR_FORMAT && strstr(st.msg, want) != NULL,
           "%s strict: got \"%s\"", label, rc ? st.msg : "opened");
    mf_close(m);
    mf_status_clear(&st);
}

/* Invalid quantization configs: a fixture's config.json with one value
 * changed (text `from` replaced by `to`) must fail to open logically and
 * strictly, naming the key. Before these were checked, group_size 0 and
 * 2^40 (an int cast: 0) fell back to the scales' shape and opened. */
static void check_bad_configs(void)
{
    static const char *const cases[][4] = {
        {"ct-pack-w4-g32", "\"group_size\": 32", "\"group_size\": 0", "group_size is 0"},
        {"ct-pack-w4-g32", "\"group_size\": 32", "\"group_size\": 1099511627776",
         "group_size is 1099511627776"},
        {"ct-pack-w4-g32", "\"group_size\": 32", "\"group_size\": \"32\"", "not an integer"},
        {"ct-pack-w4-g32", "\"group_size\": 32", "\"group_size\": null", "without a group_size"},
        {"ct-pack-w4-g32", "\"group_size\": 32", "\"group_size\": 48",
         "group size 48 does not divide"},
        {"ct-pack-w4-g32", "\"num_bits\": 4", "\"num_bits\": 3", "num_bits is 3"},
        {"ct-pack-w4-g32", "\"num_bits\": 4", "\"num_bits\": 4294967300", "num_bits is 4294967300"},
        {"ct-pack-w4-g32", "\"strategy\": \"group\"", "\"strategy\": \"tensor_group\"",
         "strategy is \"tensor_group\""},
        {"ct-pack-w4-g32", "\"pack-quantized\"", "\"marlin-24\"", "format is \"marlin-24\""},
        {"ct-pack-w4-g32", "\"group_0\"",
         "\"group_1\": {\"targets\": [\"x\"], \"weights\": {\"num_bits\": 8, "
         "\"type\": \"int\", \"strategy\": \"channel\"}}, \"group_0\"",
         "mixed schemes are not supported"},
        {"gptq-4bit-g32-sym", "\"group_size\": 32", "\"group_size\": 0", "group_size is 0"},
        {"gptq-4bit-g32-sym", "\"group_size\": 32", "\"group_size\": 1099511627776",
         "group_size is 1099511627776"},
        {"gptq-4bit-g32-sym", "\"bits\": 4", "\"bits\": 4294967300", "bits is 4294967300"},
        {"gptq-4bit-g32-sym", "\"bits\": 4", "\"bits\": 5", "GPTQ stores 2, 3, 4 or 8 bits"},
        {"gptq-4bit-g32-sym", "\"checkpoint_format\": \"gptq\"",
         "\"checkpoint_format\": \"marlin\"", "checkpoint_format is \"marlin\""},
        {"awq-gemm-g32", "\"version\": \"gemm\"", "\"version\": \"gemv_fast\"",
         "version is \"gemv_fast\""},
        {"awq-gemm-g32", "\"group_size\": 32", "\"group_size\": -2", "group_size is -2"},
        {"fp8-block", "[\n   128,", "[\n   0,", "weight_block_size[0] must be an integer"},
        {"fp8-block", "128\n  ]", "1099511627904\n  ]", "weight_block_size[1] must be an integer"},
        {"nvfp4-modelopt", "\"NVFP4\"", "\"W4A8_AWQ\"", "quant_algo is \"W4A8_AWQ\""},
        {"nvfp4-modelopt", "\"group_size\": 16", "\"group_size\": 32", "group_size is 32"},
    };
    char tmp[256], dir[600], cmd[1400];
    if (!tl_make_tmpdir(tmp, sizeof(tmp), "prequant-badcfg"))
        return;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        snprintf(dir, sizeof(dir), "%s/c%zu", tmp, i);
        snprintf(cmd, sizeof(cmd), "cp -r " DATA "/%s '%s'", cases[i][0], dir);
        CHECK(system(cmd) == 0);
        char cfg[700], *text = NULL;
        snprintf(cfg, sizeof(cfg), "%s/config.json", dir);
        FILE *f = fopen(cfg, "rb");
        static char buf[1 << 16], out[1 << 16];
        size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
        if (f)
            fclose(f);
        buf[n] = 0;
        text = strstr(buf, cases[i][1]);
        CHECKF(text != NULL, "%s: no %s in config.json", cases[i][0], cases[i][1]);
        if (!text)
            continue;
        snprintf(out, sizeof(out), "%.*s%s%s", (int)(text - buf), buf, cases[i][2],
                 text + strlen(cases[i][1]));
        f = fopen(cfg, "wb");
        CHECK(f && fputs(out, f) >= 0);
        if (f)
            fclose(f);
        char label[300];
        snprintf(label, sizeof(label), "%s with %s", cases[i][0], cases[i][2]);
        expect_refused(dir, cases[i][3], label);
    }
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
    CHECK(system(cmd) == 0);
}

/* The corrupt variants: opening (strict) and reading must both fail with
 * the rule bad.txt gives. */
static void check_bad(void)
{
    FILE *f = fopen(DATA "/bad.txt", "r");
    CHECK(f != NULL);
    if (!f)
        return;
    char line[1024];
    int n = 0;
    while (fgets(line, sizeof(line), f)) {
        char *tab = strchr(line, '\t');
        if (!tab)
            continue;
        *tab = 0;
        char *want = tab + 1;
        want[strcspn(want, "\n")] = 0;
        char dir[1100];
        snprintf(dir, sizeof(dir), DATA "/%s", line);
        expect_refused(dir, want, line);
        n++;
    }
    fclose(f);
    CHECK(n == 4);
}

static const char *meta_str(const mf_model *m, const char *key)
{
    const mf_value *v = mf_meta_get(m, key);
    return v && v->type == MF_V_STR ? v->as.s.ptr : "";
}

static int64_t meta_int(const mf_model *m, const char *key)
{
    const mf_value *v = mf_meta_get(m, key);
    return !v ? INT64_MIN : v->type == MF_V_U64 || v->type == MF_V_U32 ? (int64_t)v->as.u : v->as.i;
}

/* inspect's metadata (inspect --json prints it): the method as
 * quantization_config names it, the layout, bits, group size, act-order
 * and the FP8 block, as each case's config.json and tensors say. */
static void check_meta(void)
{
    static const struct {
        const char *dir, *method, *layout;
        int bits, group;
        bool desc_act;
        const char *extra_key, *extra;
    } want[] = {
        {"gptq-4bit-g32-sym", "gptq", "gptq", 4, 32, false, "quant.checkpoint_format", "gptq"},
        {"gptq-3bit-g64-actorder", "gptq", "gptq", 3, 64, true, NULL, NULL},
        {"gptq-8bit-gall-v2", "gptq", "gptq", 8, -1, false, "quant.checkpoint_format", "gptq_v2"},
        {"awq-gemm-g32", "awq", "awq", 4, 32, false, NULL, NULL},
        {"awq-gemv-g64", "awq", "awq-gemv", 4, 64, false, NULL, NULL},
        {"fp8-block", "fp8", "fp8", 8, -1, false, "quant.block_size", "[128, 128]"},
        {"fbgemm-fp8-channel", "fbgemm_fp8", "fp8", 8, -1, false, NULL, NULL},
        {"ct-pack-w4-g32", "compressed-tensors", "compressed-tensors", 4, 32, false, NULL, NULL},
        {"ct-int8-channel-asym", "compressed-tensors", "compressed-tensors", 8, -1, false, NULL, NULL},
        {"mxfp4-gptoss", "mxfp4", "mxfp4", 4, 32, false, NULL, NULL},
        {"nvfp4-modelopt", "modelopt", "nvfp4", 4, 16, false, NULL, NULL},
        {"bnb-nf4", "bitsandbytes", "bitsandbytes-4bit", 4, 64, false, NULL, NULL},
        {"bnb-int8", "bitsandbytes", "bitsandbytes-8bit", 8, -1, false, NULL, NULL},
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        char dir[256];
        snprintf(dir, sizeof(dir), DATA "/%s", want[i].dir);
        mf_open_opts o;
        mf_open_opts_init(&o);
        o.flags = MF_OPEN_NO_SCAN;
        mf_model *m = NULL;
        mf_status st;
        mf_status_init(&st);
        CHECKF(mf_open(dir, &o, &m, &st) == 0, "%s: %s", dir, st.msg);
        if (m) {
            const mf_value *da = mf_meta_get(m, "quant.desc_act");
            CHECKF(!strcmp(meta_str(m, "quant.method"), want[i].method) &&
                       !strcmp(meta_str(m, "quant.layout"), want[i].layout) &&
                       meta_int(m, "quant.bits") == want[i].bits &&
                       meta_int(m, "quant.group_size") == want[i].group && da &&
                       da->type == MF_V_BOOL && da->as.b == want[i].desc_act,
                   "%s: quant.method %s, layout %s, bits %lld, group %lld", want[i].dir,
                   meta_str(m, "quant.method"), meta_str(m, "quant.layout"),
                   (long long)meta_int(m, "quant.bits"), (long long)meta_int(m, "quant.group_size"));
            CHECKF(!want[i].extra_key || !strcmp(meta_str(m, want[i].extra_key), want[i].extra),
                   "%s: %s is \"%s\"", want[i].dir, want[i].extra_key ? want[i].extra_key : "",
                   want[i].extra_key ? meta_str(m, want[i].extra_key) : "");
        }
        mf_close(m);
        mf_status_clear(&st);
    }
}

/* ggml b10256's blocks, values worked out by hand from ggml-quants.c. */
static void check_ggml_new_types(void)
{
    float y[128];
    /* NVFP4: d[0] = 0x38 (UE4M3 exp 7, man 0: 1.0, halved 0.5); code 7 (12) -> 6 */
    uint8_t nv[36] = {0x38, 0, 0, 0};
    nv[4] = 0x97; /* element 0: code 7, element 8: code 9 (-1) */
    CHECK(mf_dequantize_row(MF_NVFP4, nv, y, 64) == 0 && y[0] == 6.0f && y[8] == -0.5f &&
          y[16] == 0.0f);
    /* Q1_0: d = 0.5 (f16 0x3800), bit set: +d */
    uint8_t q1[18] = {0x00, 0x38, 0x01};
    CHECK(mf_dequantize_row(MF_Q1_0, q1, y, 128) == 0 && y[0] == 0.5f && y[1] == -0.5f);
    /* Q2_0: d = 2 (0x4000); codes 0..3 -> -2, 0, 2, 4 */
    uint8_t q2[18] = {0x00, 0x40, 0xe4};
    CHECK(mf_dequantize_row(MF_Q2_0, q2, y, 64) == 0 && y[0] == -2.0f && y[1] == 0.0f &&
          y[2] == 2.0f && y[3] == 4.0f);
    /* round trips where the values are representable */
    float x[64];
    for (int i = 0; i < 64; i++)
        x[i] = (float)((i % 7) - 3);
    uint8_t b[36];
    CHECK(mf_quantize_rows(MF_Q2_0, x, b, 1, 64, NULL) == 0);
    CHECK(mf_dequantize_row(MF_Q2_0, b, y, 64) == 0 && y[0] == -3.0f && y[3] == 0.0f && y[6] == 3.0f);
    for (int i = 0; i < 32; i++)
        x[i] = (float)(i % 4) * ((i & 1) ? -1.0f : 1.0f);
    CHECK(mf_quantize_rows(MF_MXFP4, x, b, 1, 32, NULL) == 0);
    CHECK(mf_dequantize_row(MF_MXFP4, b, y, 32) == 0);
    bool same = true;
    for (int i = 0; i < 32; i++)
        same &= y[i] == x[i];
    CHECK(same);
}

/* The whole tiny GPTQ llama: the load report compares the logical tensors
 * and names the quantizer; estimate counts the logical parameters and the
 * bytes the quantizer keeps in memory (the stored buffers: QuantLinear's
 * qweight, qzeros, scales, g_idx and the fp16 tensors). */
static void check_llama_report(void)
{
    const char *dir = DATA "/gptq-llama-tiny";
    mf_open_opts o;
    mf_open_opts_init(&o);
    o.flags = MF_OPEN_NO_SCAN;
    mf_model *m = NULL, *w = NULL, *v = NULL;
    mf_status st;
    mf_status_init(&st);
    CHECK(mf_open(dir, &o, &m, &st) == 0);
    CHECK(mf_open(DATA "/gptq-llama-tiny/model.safetensors", &o, &w, &st) == 0);
    if (!m || !w) {
        mf_close(m);
        mf_close(w);
        mf_status_clear(&st);
        return;
    }
    mf_load_report *r = NULL;
    CHECK(mf_hf_load_report(m, &r, &st) == 0 && r);
    if (r) {
        CHECK(r->arch && r->n_expected == 21 && r->n_missing == 0 && r->n_unexpected == 0 &&
              r->n_mismatched == 0);
        CHECK(!strcmp(r->quant_method, "gptq") && r->quantizer &&
              !strcmp(r->quantizer, "GptqHfQuantizer") && r->requires);
        CHECK(r->n_not_converted == 1 && !strcmp(r->not_converted[0], "lm_head"));
    }
    mf_load_report_free(r);
    uint64_t stored = 0, logical = 0;
    for (size_t i = 0; i < mf_model_tensor_count(w); i++)
        stored += mf_tensor_nbytes(mf_model_tensor_at(w, i));
    CHECK(mf_model_logical_view(m, &v, &st) == 0 && v);
    for (size_t i = 0; v && i < mf_model_tensor_count(v); i++)
        logical += mf_tensor_nelems(mf_model_tensor_at(v, i));
    mf_estimate *e = NULL;
    CHECK(mf_estimate_path(dir, NULL, &e, &st) == 0 && e);
    if (e) {
        double err = fabs((double)e->weight_bytes - (double)stored) / (double)stored;
        CHECKF(err < 0.01, "estimate %llu bytes, in memory %llu", (unsigned long long)e->weight_bytes,
               (unsigned long long)stored);
        CHECKF(e->n_params == logical, "%llu parameters, logical %llu",
               (unsigned long long)e->n_params, (unsigned long long)logical);
        printf("estimate: %llu bytes for %llu in memory (error %.3f%%), %llu parameters\n",
               (unsigned long long)e->weight_bytes, (unsigned long long)stored, 100 * err,
               (unsigned long long)e->n_params);
    }
    mf_estimate_free(e);
    mf_close(v);
    mf_close(w);
    mf_close(m);
    mf_status_clear(&st);
}

/* The bytes transformers' quantizer keeps for a case, from its stored
 * tensors by name (what each loader's modules hold: see
 * mf_hf_prequant_memory): every stored tensor, less the bitsandbytes
 * quant_state JSON and weight_format (parsed at load, not kept), plus the
 * nested offset (F32) of each double-quantized bitsandbytes weight, the
 * F32 input_scale_ub fbgemm's Linear adds, and the zero point (one byte a
 * scale) compressed-tensors creates where a symmetric scheme stores none. */
static uint64_t loaded_bytes(const mf_model *w, const char *method)
{
    uint64_t b = 0;
    for (size_t i = 0; i < mf_model_tensor_count(w); i++) {
        const mf_tensor *t = mf_model_tensor_at(w, i);
        const char *n = mf_tensor_name(t);
        size_t len = strlen(n);
        if (strstr(n, ".quant_state.bitsandbytes__") || strstr(n, ".weight_format"))
            continue;
        b += mf_tensor_nbytes(t);
        if (len > 14 && !strcmp(n + len - 14, ".nested_absmax"))
            b += 4;
        if (len > 13 && !strcmp(n + len - 13, ".weight_scale")) {
            char zp[600];
            snprintf(zp, sizeof(zp), "%.*s.weight_zero_point", (int)(len - 13), n);
            if (!strcmp(method, "fbgemm_fp8"))
                b += 4;
            else if (!strcmp(method, "compressed-tensors") && !mf_tensor_find(w, zp))
                b += mf_tensor_nelems(t);
        }
    }
    return b;
}

/* estimate's weight bytes of every method's case against loaded_bytes,
 * within the 1%. The cases' configs have no geometry, so each is
 * copied with num_hidden_layers / num_attention_heads added. */
static void check_memory_estimates(void)
{
    static const char *const cases[] = {
        "gptq-4bit-g32-sym", "gptq-3bit-g64-actorder", "gptq-8bit-gall-v2", "awq-gemm-g32",
        "awq-gemv-g64", "fp8-block", "fbgemm-fp8-channel", "ct-pack-w4-g32", "ct-int8-channel-asym",
        "mxfp4-gptoss", "nvfp4-modelopt", "bnb-nf4", "bnb-nf4-nested", "bnb-fp4", "bnb-int8",
    };
    char tmp[256], dir[600], path[700], cmd[1600];
    if (!tl_make_tmpdir(tmp, sizeof(tmp), "prequant-mem"))
        return;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        snprintf(dir, sizeof(dir), "%s/%s", tmp, cases[i]);
        snprintf(cmd, sizeof(cmd), "mkdir -p '%s' && cp " DATA "/%s/model.safetensors '%s/'", dir,
                 cases[i], dir);
        CHECK(system(cmd) == 0);
        snprintf(path, sizeof(path), DATA "/%s/config.json", cases[i]);
        json_t *cfg = json_load_file(path, 0, NULL);
        CHECK(cfg != NULL);
        if (!cfg)
            continue;
        json_object_set_new(cfg, "num_hidden_layers", json_integer(1));
        json_object_set_new(cfg, "num_attention_heads", json_integer(1));
        snprintf(path, sizeof(path), "%s/config.json", dir);
        CHECK(json_dump_file(cfg, path, 0) == 0);
        const char *method = json_string_value(
            json_object_get(json_object_get(cfg, "quantization_config"), "quant_method"));
        snprintf(path, sizeof(path), "%s/model.safetensors", dir);
        mf_open_opts o;
        mf_open_opts_init(&o);
        o.flags = MF_OPEN_NO_SCAN;
        mf_model *w = NULL;
        mf_estimate *e = NULL;
        mf_status st;
        mf_status_init(&st);
        CHECK(mf_open(path, &o, &w, &st) == 0);
        CHECKF(mf_estimate_path(dir, NULL, &e, &st) == 0 && e, "%s: %s", cases[i], st.msg);
        if (w && e && method) {
            uint64_t want = loaded_bytes(w, method);
            double err = fabs((double)e->weight_bytes - (double)want) / (double)want;
            CHECKF(err < 0.01, "%s: estimate %llu bytes, the quantizer holds %llu", cases[i],
                   (unsigned long long)e->weight_bytes, (unsigned long long)want);
            CHECKF(e->weight_note[0] != 0, "%s: estimate does not say how it counted", cases[i]);
            printf("estimate %-24s %6llu bytes, held %6llu (%.3f%%): %s\n", cases[i],
                   (unsigned long long)e->weight_bytes, (unsigned long long)want, 100 * err,
                   e->weight_note);
        }
        mf_estimate_free(e);
        mf_close(w);
        json_decref(cfg);
        mf_status_clear(&st);
    }
    tl_remove_tmpdir(tmp);
}

/* ggml b10256's own bytes (tests/data/prequant/ggml-b10256-newtypes.c made
 * them with lm_ggml_quantize_chunk and to_float): MXFP4, NVFP4, Q1_0, Q2_0
 * rows must quantize to the same bytes and dequantize to the same floats. */
static void check_ggml_reference(void)
{
    FILE *f = fopen(DATA "/ggml-b10256-newtypes.bin", "rb");
    CHECK(f != NULL);
    if (!f)
        return;
    enum { NR = 8, N = 512 };
    static float x[NR * N], y[NR * N], ry[NR * N];
    static uint8_t q[NR * 2 * N], rq[NR * 2 * N];
    CHECK(fread(x, sizeof(float), NR * N, f) == NR * N);
    int types = 0;
    uint32_t id;
    while (fread(&id, 4, 1, f) == 1) {
        mf_dtype dt = mf_dtype_from_ggml(id);
        const mf_dtype_info *di = mf_dtype_info_of(dt);
        CHECKF(di != NULL, "type %u", id);
        if (!di)
            break;
        size_t rb = (size_t)N / di->block_elems * di->block_bytes;
        CHECK(fread(rq, rb, NR, f) == NR && fread(ry, sizeof(float), NR * N, f) == NR * N);
        CHECK(mf_quantize_rows(dt, x, q, NR, N, NULL) == 0);
        CHECKF(memcmp(q, rq, rb * NR) == 0, "%s: quantized bytes differ from ggml's", di->name);
        CHECK(mf_dequantize_row(dt, rq, y, NR * N) == 0);
        CHECKF(memcmp(y, ry, sizeof(y)) == 0, "%s: dequantized floats differ from ggml's", di->name);
        types++;
    }
    fclose(f);
    CHECK(types == 4);
}

/* HF -> GGUF of the GPTQ llama (with ../shared's llama-tiny tokenizer)
 * gives the same tensors as converting its reference floats as a plain
 * fp16 directory: the converter dequantizes through the logical view. */
static void check_convert(void)
{
    char shared[512], tmp[256], cmd[3000], out[2048];
    snprintf(shared, sizeof(shared), "%s/corpus/hf-dir/llama-tiny", tl_shared_dir());
    if (!tl_make_tmpdir(tmp, sizeof(tmp), "prequant"))
        return;
    char cwd[1024], log[300];
    CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
    snprintf(log, sizeof(log), "%s/log", tmp);
    /* q: the GPTQ directory + tokenizer; f: the same with the reference
     * floats as its weights and no quantization_config */
    snprintf(cmd, sizeof(cmd),
             "(set -e; D=%s/%s; T=$(cd %s && pwd); cd %s; mkdir q f; cp $D/gptq-llama-tiny/* q/; "
             "cp $T/tokenizer.model $T/tokenizer_config.json $T/special_tokens_map.json q/; "
             "cp q/tokenizer* q/special_tokens_map.json f/; "
             "cp $D/gptq-llama-tiny.ref.safetensors f/model.safetensors; "
             "sed 's/\"quantization_config\"/\"was_quantization_config\"/' q/config.json > f/config.json)",
             cwd, DATA, shared, tmp);
    int rc = tl_run_cmd(cmd, log, out, sizeof(out));
    CHECKF(rc == 0, "setup: %s", out);
    if (rc) {
        tl_remove_tmpdir(tmp);
        return;
    }
    static const char *const types[] = {"f16", "Q4_K_M"};
    for (size_t k = 0; k < 2; k++) {
        char qd[300], fd[300], qo[300], fo[300];
        snprintf(qd, sizeof(qd), "%s/q", tmp);
        snprintf(fd, sizeof(fd), "%s/f", tmp);
        snprintf(qo, sizeof(qo), "%s/q.gguf", tmp);
        snprintf(fo, sizeof(fo), "%s/f.gguf", tmp);
        mf_convert_gguf_opts o;
        mf_convert_gguf_opts_init(&o);
        o.type = types[k];
        mf_status st;
        mf_status_init(&st);
        CHECKF(mf_convert_to_gguf(qd, qo, &o, &st) == 0, "%s: %s", types[k], st.msg);
        CHECKF(mf_convert_to_gguf(fd, fo, &o, &st) == 0, "%s: %s", types[k], st.msg);
        mf_open_opts oo;
        mf_open_opts_init(&oo);
        oo.flags = MF_OPEN_NO_SCAN;
        mf_model *a = NULL, *b = NULL;
        CHECK(mf_open(qo, &oo, &a, &st) == 0 && mf_open(fo, &oo, &b, &st) == 0);
        size_t same = 0;
        for (size_t i = 0; a && b && i < mf_model_tensor_count(a); i++) {
            const mf_tensor *ta = mf_model_tensor_at(a, i);
            const mf_tensor *tb = mf_tensor_find(b, mf_tensor_name(ta));
            const void *da = mf_tensor_data(a, ta), *db = tb ? mf_tensor_data(b, tb) : NULL;
            same += tb && da && db && mf_tensor_dtype(ta) == mf_tensor_dtype(tb) &&
                    mf_tensor_nbytes(ta) == mf_tensor_nbytes(tb) &&
                    !memcmp(da, db, mf_tensor_nbytes(ta));
        }
        CHECKF(a && b && same == mf_model_tensor_count(a) && same == mf_model_tensor_count(b) &&
                   same == 21,
               "%s: %zu tensors equal", types[k], same);
        mf_close(a);
        mf_close(b);
        mf_status_clear(&st);
    }
    tl_remove_tmpdir(tmp);
}

/* mfmt convert DIR OUT/ (mf_convert_to_hf of a pre-quantized directory):
 * a plain float directory whose tensors are the reference floats, whose
 * config.json is the input's without quantization_config, written whole
 * or not at all. */
static void check_float_dir(const char *name, const char *tmp)
{
    char dir[512], out[700], ref[512], cfg[800];
    snprintf(dir, sizeof(dir), DATA "/%s", name);
    snprintf(out, sizeof(out), "%s/%s-float/", tmp, name);
    snprintf(ref, sizeof(ref), DATA "/%s.ref.safetensors", name);
    mf_status st;
    mf_status_init(&st);
    CHECKF(mf_convert_to_hf(dir, out, NULL, &st) == 0, "%s: %s", name, st.msg);
    mf_open_opts o;
    mf_open_opts_init(&o);
    o.flags = MF_OPEN_NO_SCAN;
    mf_model *m = NULL, *r = NULL;
    CHECKF(mf_open(out, &o, &m, &st) == 0, "%s: %s", out, st.msg);
    CHECK(mf_open(ref, &o, &r, &st) == 0);
    for (size_t i = 0; m && r && i < mf_model_tensor_count(r); i++) {
        const mf_tensor *rt = mf_model_tensor_at(r, i);
        const mf_tensor *t = mf_tensor_find(m, mf_tensor_name(rt));
        CHECKF(t != NULL, "%s: no tensor %s in the float directory", name, mf_tensor_name(rt));
        if (!t)
            continue;
        mf_dtype dt = mf_tensor_dtype(t);
        CHECKF(dt == MF_F32 || dt == MF_F16 || dt == MF_BF16, "%s: %s is not a float tensor",
               name, mf_tensor_name(rt));
        check_same_f32(name, m, t, r, rt);
    }
    mf_close(m);
    mf_close(r);
    snprintf(cfg, sizeof(cfg), "%sconfig.json", out);
    json_t *got = json_load_file(cfg, 0, NULL);
    snprintf(cfg, sizeof(cfg), "%s/config.json", dir);
    json_t *want = json_load_file(cfg, 0, NULL);
    CHECK(got && want && json_object_get(want, "quantization_config") &&
          !json_object_get(got, "quantization_config"));
    json_object_del(want, "quantization_config");
    CHECKF(json_equal(got, want), "%s: config.json changed beyond quantization_config", name);
    json_decref(got);
    json_decref(want);
    mf_status_clear(&st);
}

static void check_float_dirs(const char *const *cases, size_t n)
{
    char tmp[256];
    if (!tl_make_tmpdir(tmp, sizeof(tmp), "prequant-float"))
        return;
    for (size_t i = 0; i < n; i++)
        check_float_dir(cases[i], tmp);
    /* a layout that breaks its rules: refused, nothing left */
    char out[400], cmd[600];
    snprintf(out, sizeof(out), "%s/bad/", tmp);
    mf_status st;
    mf_status_init(&st);
    CHECK(mf_convert_to_hf(DATA "/bad-short-qweight", out, NULL, &st) != 0 &&
          strstr(st.msg, "qweight"));
    mf_status_clear(&st);
    snprintf(cmd, sizeof(cmd), "ls -d '%s'/bad* 2>/dev/null | grep -q .", tmp);
    CHECKF(system(cmd) != 0, "a failed conversion left %s/bad*", tmp);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
    CHECK(system(cmd) == 0);
}

/* Whole-file MXFP4_MOE: mfmt's quantize of the MoE references in ../shared
 * hashes as llama-quantize-current's output (mxfp4_moe-b10256.sha256 says
 * how it was made). */
static void check_mxfp4_moe_files(void)
{
    const char *shared = tl_shared_dir();
    FILE *f = fopen(DATA "/mxfp4_moe-b10256.sha256", "r");
    CHECK(f != NULL);
    if (!shared || !f) {
        printf("SKIP check_mxfp4_moe_files: no ../shared\n");
        if (f)
            fclose(f);
        return;
    }
    char tmp[256], line[512], want[80], rel[300], in[700], out[400];
    if (!tl_make_tmpdir(tmp, sizeof(tmp), "mxfp4-moe")) {
        fclose(f);
        return;
    }
    snprintf(out, sizeof(out), "%s/out.gguf", tmp);
    size_t n = 0;
    while (fgets(line, sizeof(line), f)) {
        if (line[0] == '#' || sscanf(line, "%79s %299s", want, rel) != 2)
            continue;
        snprintf(in, sizeof(in), "%s/%s", shared, rel);
        mf_quantize_opts o;
        mf_quantize_opts_init(&o, MF_FTYPE_MXFP4_MOE);
        mf_status st;
        mf_status_init(&st);
        CHECKF(mf_quantize_file(in, out, &o, NULL, NULL, NULL, &st) == 0, "%s: %s", rel, st.msg);
        mf_status_clear(&st);
        size_t len;
        uint8_t *b = tl_read_file(out, &len);
        char got[129] = "";
        if (b)
            tl_sha256_hex(b, len, got);
        CHECKF(strcmp(got, want) == 0, "%s: MXFP4_MOE differs from llama-quantize-current", rel);
        free(b);
        remove(out);
        n++;
    }
    fclose(f);
    CHECK(n >= 7);
    rmdir(tmp);
}

/* Whether any note of m holds `needle`. */
static bool has_note(const mf_model *m, const char *needle)
{
    for (size_t i = 0; i < mf_model_note_count(m); i++)
        if (strstr(mf_model_note_at(m, i), needle))
            return true;
    return false;
}

/* An AWQ gemv file whose scales are all zero: no group size fits
 * (calculate_zeros_width and the used scale columns), so nothing is
 * inferred: the file opens with its tensors as stored and a note saying
 * why, never a guessed layout. */
static void check_gemv_ambiguous(const char *tmp)
{
    const char *hdr = "{\"m.qweight\":{\"dtype\":\"I32\",\"shape\":[8,128],\"data_offsets\":[0,4096]},"
                      "\"m.qzeros\":{\"dtype\":\"I32\",\"shape\":[8,1],\"data_offsets\":[4096,4128]},"
                      "\"m.scales\":{\"dtype\":\"F16\",\"shape\":[8,8],\"data_offsets\":[4128,4256]}}";
    char path[512];
    snprintf(path, sizeof(path), "%s/gemv-zero-scales.safetensors", tmp);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f)
        return;
    uint8_t len[8];
    mf_wr64le(len, strlen(hdr));
    static const uint8_t zeros[4256];
    CHECK(fwrite(len, 8, 1, f) == 1 && fwrite(hdr, strlen(hdr), 1, f) == 1 &&
          fwrite(zeros, sizeof(zeros), 1, f) == 1);
    fclose(f);
    mf_open_opts o;
    mf_open_opts_init(&o);
    o.flags = MF_OPEN_NO_SCAN;
    mf_model *m = NULL, *v = NULL;
    mf_status st;
    mf_status_init(&st);
    CHECKF(mf_open(path, &o, &m, &st) == 0, "%s", st.msg);
    CHECK(m && has_note(m, "group size cannot be told"));
    CHECK(m && mf_model_logical_view(m, &v, &st) == 0 && v && mf_tensor_find(v, "m.qweight") &&
          !mf_tensor_find(v, "m.weight"));
    mf_close(v);
    mf_close(m);
    mf_status_clear(&st);
}

/* A lone model.safetensors (no config.json): the packing is inferred from
 * the tensors (hf_prequant_infer.c) and the logical tensors are the
 * reference floats. Not inferable, so not here: GPTQ's v2 zero points
 * (the tensors cannot tell them from v1's) and bnb-int8's float16 (its
 * file holds no float tensor that would say the model's dtype; bfloat16
 * is taken). The notes say what was inferred and what was assumed. */
static void check_single_files(void)
{
    static const char *const cases[] = {
        "gptq-4bit-g32-sym", "gptq-3bit-g64-actorder", "gptq-2bit-g32", "awq-gemm-g32",
        "fp8-block", "fbgemm-fp8-channel", "mxfp4-gptoss", "nvfp4-modelopt",
        "bnb-nf4", "bnb-nf4-nested", "bnb-fp4", "awq-gemv-g64", "ct-pack-w4-g32",
        "ct-int8-channel-asym",
    };
    static const char *const noted[][2] = {
        {"fbgemm-fp8-channel", "each dequantizes it as the same F32 product"},
        {"ct-int8-channel-asym", "naive-quantized stores the same tensors"},
        {"gptq-4bit-g32-sym", "checkpoint_format \"gptq\""},
    };
    char tmp[256], cmd[1200], file[512], ref[512];
    if (!tl_make_tmpdir(tmp, sizeof(tmp), "prequant-single"))
        return;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        snprintf(file, sizeof(file), "%s/%s.safetensors", tmp, cases[i]);
        snprintf(ref, sizeof(ref), DATA "/%s.ref.safetensors", cases[i]);
        snprintf(cmd, sizeof(cmd), "cp " DATA "/%s/model.safetensors '%s'", cases[i], file);
        CHECK(system(cmd) == 0);
        mf_open_opts o;
        mf_open_opts_init(&o);
        o.flags = MF_OPEN_LOGICAL | MF_OPEN_NO_SCAN | MF_OPEN_STRICT;
        mf_model *m = NULL, *r = NULL;
        mf_status st;
        mf_status_init(&st);
        CHECKF(mf_open(file, &o, &m, &st) == 0, "%s: %s", cases[i], st.msg);
        o.flags = MF_OPEN_NO_SCAN;
        CHECK(mf_open(ref, &o, &r, &st) == 0);
        mf_model *raw = NULL; /* the notes are the stored model's */
        CHECK(mf_open(file, &o, &raw, &st) == 0);
        for (size_t k = 0; raw && k < sizeof(noted) / sizeof(noted[0]); k++)
            CHECKF(strcmp(noted[k][0], cases[i]) || has_note(raw, noted[k][1]),
                   "%s: no note \"%s\"", cases[i], noted[k][1]);
        mf_close(raw);
        for (size_t k = 0; m && r && k < mf_model_tensor_count(r); k++) {
            const mf_tensor *rt = mf_model_tensor_at(r, k);
            const mf_tensor *t = mf_tensor_find(m, mf_tensor_name(rt));
            CHECKF(t != NULL, "%s: no logical tensor %s", cases[i], mf_tensor_name(rt));
            if (t)
                check_same_f32(cases[i], m, t, r, rt);
        }
        mf_close(m);
        mf_close(r);
        mf_status_clear(&st);
    }
    check_gemv_ambiguous(tmp);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
    CHECK(system(cmd) == 0);
}

/* The F32 values of tensor `name` of m (malloc'd by mfmt), or NULL. */
static float *values_of(mf_model *m, const char *name, uint64_t *n)
{
    const mf_tensor *t = mf_tensor_find(m, name);
    void *v = NULL;
    uint64_t nb = 0;
    mf_status st;
    mf_status_init(&st);
    if (t && mf_tensor_read_alloc(m, t, MF_F32, &v, &nb, &st))
        v = NULL;
    CHECKF(v != NULL, "%s: %s", name, t ? st.msg : "missing");
    mf_status_clear(&st);
    *n = nb / 4;
    return v;
}

/* gpt-oss HF -> GGUF keeps the MXFP4 experts: the GGUF's ggml MXFP4
 * tensors (type 39, not requantized) hold exactly the values of the
 * checkpoint's logical view (transformers' dequantization, checked above
 * against numpy): gate[e][r][c] = gate_up_proj[e][c][2r], up at 2r + 1,
 * down[e][r][c] = down_proj[e][c][r]; and the whole file is the 2026-02
 * converter's (convert-ref-new/gpt-oss-tiny-*.gguf). */
static void check_mxfp4_kept(void)
{
    const char *shared = tl_shared_dir();
    char dir[512], tmp[256], out[300], ref[600];
    snprintf(dir, sizeof(dir), "%s/convert-ref-new/dirs/gpt-oss-tiny", shared ? shared : "");
    if (!shared || access(dir, F_OK)) {
        TL_SKIP("prequant: gpt-oss MXFP4 kept (no ../shared/convert-ref-new)");
        return;
    }
    if (!tl_make_tmpdir(tmp, sizeof(tmp), "mxfp4"))
        return;
    snprintf(out, sizeof(out), "%s/g.gguf", tmp);
    static const char *const types[] = {"f16", "q8_0"};
    static const char *const want_sha[] = {"941089864f566e81004cdb20b9b04aa8baab1d2f359d3c53b7fb96911f9ddac5",
                                           "b7bb37cca3ccf53113d5eeeb372d90c3f6a01b6dda8490b34139445379a362c7"};
    mf_status st;
    mf_status_init(&st);
    for (size_t k = 0; k < 2; k++) {
        mf_convert_gguf_opts o;
        mf_convert_gguf_opts_init(&o);
        o.type = types[k];
        char hex[129] = "";
        CHECKF(mf_convert_to_gguf(dir, out, &o, &st) == 0, "gpt-oss %s: %s", types[k], st.msg);
        CHECKF(mf_hash_file(out, MF_SHA256, hex, &st) == 0 && !strcmp(hex, want_sha[k]),
               "gpt-oss %s: sha256 %s, the 2026-02 converter's is %s", types[k], hex, want_sha[k]);
        snprintf(ref, sizeof(ref), "%s/convert-ref-new/gpt-oss-tiny-%s.gguf", shared, types[k]);
        CHECKF(mf_hash_file(ref, MF_SHA256, hex, &st) == 0 && !strcmp(hex, want_sha[k]), "%s: not the reference", ref);
    }
    mf_open_opts oo;
    mf_open_opts_init(&oo);
    oo.flags = MF_OPEN_LOGICAL | MF_OPEN_NO_SCAN;
    mf_model *hf = NULL, *g = NULL;
    CHECKF(mf_open(dir, &oo, &hf, &st) == 0, "%s: %s", dir, st.msg);
    oo.flags = MF_OPEN_NO_SCAN;
    CHECKF(mf_open(out, &oo, &g, &st) == 0, "%s: %s", out, st.msg);
    size_t checked = 0, differ = 0;
    for (int b = 0; hf && g && b < 2; b++) {
        char n[4][128];
        snprintf(n[0], 128, "model.layers.%d.mlp.experts.gate_up_proj", b);
        snprintf(n[1], 128, "model.layers.%d.mlp.experts.down_proj", b);
        snprintf(n[2], 128, "blk.%d.ffn_gate_exps.weight", b);
        snprintf(n[3], 128, "blk.%d.ffn_up_exps.weight", b);
        char dn[128];
        snprintf(dn, sizeof(dn), "blk.%d.ffn_down_exps.weight", b);
        const mf_tensor *gt = mf_tensor_find(g, n[2]), *dt = mf_tensor_find(g, dn);
        CHECKF(gt && dt && mf_tensor_dtype(gt) == MF_MXFP4 && mf_tensor_dtype(dt) == MF_MXFP4,
               "block %d: the experts are not MXFP4", b);
        uint64_t ngu, ndn, ng, nu, nd;
        float *gu = values_of(hf, n[0], &ngu), *hd = values_of(hf, n[1], &ndn);
        float *fg = values_of(g, n[2], &ng), *fu = values_of(g, n[3], &nu), *fd = values_of(g, dn, &nd);
        if (gu && hd && fg && fu && fd && gt && dt) {
            const int64_t *sh = mf_tensor_shape(gt), *dsh = mf_tensor_shape(dt); /* [E, ff, h], [E, h, ff] */
            int64_t E = sh[0], ff = sh[1], h = sh[2];
            CHECK(ngu == (uint64_t)(E * h * 2 * ff) && ndn == (uint64_t)(E * ff * h) && dsh[1] == h && dsh[2] == ff);
            for (int64_t e = 0; ngu == (uint64_t)(E * h * 2 * ff) && e < E; e++)
                for (int64_t r = 0; r < ff; r++)
                    for (int64_t c = 0; c < h; c++) {
                        differ += fg[(e * ff + r) * h + c] != gu[(e * h + c) * 2 * ff + 2 * r];
                        differ += fu[(e * ff + r) * h + c] != gu[(e * h + c) * 2 * ff + 2 * r + 1];
                        differ += fd[(e * h + c) * ff + r] != hd[(e * ff + r) * h + c];
                        checked += 3;
                    }
        }
        mf_free(gu);
        mf_free(hd);
        mf_free(fg);
        mf_free(fu);
        mf_free(fd);
    }
    CHECKF(checked > 0 && differ == 0, "gpt-oss MXFP4: %zu of %zu expert values differ from the checkpoint's", differ,
           checked);
    printf("prequant: gpt-oss MXFP4 experts kept: %zu values equal the checkpoint's dequantization\n", checked);
    mf_close(hf);
    mf_close(g);
    mf_status_clear(&st);
    tl_remove_tmpdir(tmp);
}

int main(void)
{
    static const char *cases[] = {
        "gptq-4bit-g32-sym", "gptq-3bit-g64-actorder", "gptq-8bit-gall-v2", "gptq-2bit-g32",
        "awq-gemm-g32", "fp8-block", "fbgemm-fp8-channel", "ct-pack-w4-g32",
        "ct-int8-channel-asym", "mxfp4-gptoss", "nvfp4-modelopt", "gptq-llama-tiny",
        "bnb-nf4", "bnb-nf4-nested", "bnb-fp4", "bnb-int8", "awq-gemv-g64",
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        check_case(cases[i]);
    check_float_dirs(cases, sizeof(cases) / sizeof(cases[0]));
    check_bad();
    check_bad_configs();
    check_meta();
    check_f16c_kernels();
    check_llama_report();
    check_memory_estimates();
    check_convert();
    check_mxfp4_kept();
    check_ggml_new_types();
    check_ggml_reference();
    check_mxfp4_moe_files();
    check_single_files();
    return tl_report("prequant");
}
