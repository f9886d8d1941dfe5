/* test_mmproj.c - `convert --mmproj` against llama.cpp's converter
 * (ecbcb7ea, --mmproj): each directory of tests/data/mmproj/dirs
 * (gen_dirs.py: Gemma 3, Qwen2-VL, Qwen2.5-VL, Mistral 3 / Pixtral,
 * Llama 4, SmolVLM, Qwen3-VL, Qwen3.5, InternVL (both layouts), Kimi-VL,
 * GLM-4.1V / 4.5V, LFM2-VL, CogVLM, Janus-Pro, Youtu-VL, PaddleOCR-VL,
 * LightOnOCR, Kimi-K2.5) converted to f16, q8_0, bf16 and f32 must give the
 * file the converter wrote, byte for byte (expected.json: its sha256, keys
 * and tensors, made by make_expected.py); on a difference the first key or
 * tensor that differs is printed. Then the default output name, the errors
 * (a class without an mmproj rule, no vision_config, a llama-quantize mix,
 * --vocab-only, Pixtral without [IMG_BREAK], Qwen2.5-VL's uneven
 * fullatt_block_indexes, InternVL without InternVisionModel or
 * downsample_ratio), LFM2-VL's vision_feature_layer against the
 * converter's bytes, validate's load check (the clip loader's keys:
 * no problem), and, when MFMT_CLIPCHECK names the clip loader of
 * tests/data/mmproj/README.md, that llama.cpp b10256 loads and encodes each
 * output (a counted SKIP otherwise). */
#include "testlib.h"

#include "core/core.h"
#include "formats/formats.h"
#include "ops/hfconv/hfconv.h"
#include "ops/hfconv/llama_load.h"

#include <jansson.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define DATA "tests/data/mmproj"
#define LFM2_LAYER_2_SHA256 "a7f1f71c4df6a543fbda03c44fc56284a02e64ae42b814fb399bb5eaca4d900a"

#include "mmproj_test.h"

/* The first key or tensor of `path` that differs from the record. */
static void explain(const char *path, json_t *rec)
{
    mf_status st;
    mf_status_init(&st);
    mf_model *m = NULL;
    if (mf_open(path, NULL, &m, &st)) {
        fprintf(stderr, "  cannot read %s back: %s\n", path, st.msg);
        mf_status_clear(&st);
        return;
    }
    json_t *keys = json_object_get(rec, "keys"), *ts = json_object_get(rec, "tensors");
    size_t nk = 0;
    for (size_t i = 0; i < m->n_meta; i++) {
        if (!strncmp(m->meta[i].key, "GGUF.", 5))
            continue;
        const char *want = json_string_value(json_array_get(keys, nk++));
        if (!want || strcmp(want, m->meta[i].key)) {
            fprintf(stderr, "  key %zu: %s, the converter's %s\n", nk - 1, m->meta[i].key, want ? want : "(none)");
            break;
        }
    }
    for (size_t i = 0; i < m->n_tensors; i++) {
        const mf_tensor *t = &m->tensors[i];
        json_t *w = json_array_get(ts, i);
        const char *wn = json_string_value(json_array_get(w, 0)), *wt = json_string_value(json_array_get(w, 1));
        if (!wn || strcmp(wn, t->name) || !wt || strcasecmp(wt, mf_dtype_name(t->dtype))) {
            fprintf(stderr, "  tensor %zu: %s %s, the converter's %s %s\n", i, t->name, mf_dtype_name(t->dtype),
                    wn ? wn : "(none)", wt ? wt : "");
            break;
        }
    }
    mf_close(m);
}

/* MFMT_CLIPCHECK OUT SIZE: llama.cpp b10256's clip_init + one encode */
static int clip_runs(const char *path, int size)
{
    const char *tool = getenv("MFMT_CLIPCHECK");
    char cmd[8400];
    snprintf(cmd, sizeof(cmd), "%s %s %d >/dev/null 2>&1", tool, path, size);
    return system(cmd);
}

static void run_references(const char *tmp)
{
    json_t *e = json_load_file(DATA "/expected.json", 0, NULL);
    CHECKF(e != NULL, DATA "/expected.json unreadable");
    const char *key;
    json_t *v;
    int same = 0, total = 0, loaded = 0, tried = 0;
    json_object_foreach(json_object_get(e, "outputs"), key, v) {
        const char *d = json_string_value(json_object_get(v, "dir")), *t = json_string_value(json_object_get(v, "outtype"));
        const char *want = json_string_value(json_object_get(v, "sha256"));
        char src[512], out[512], h[129] = "";
        snprintf(src, sizeof(src), DATA "/dirs/%s", d ? d : "?");
        snprintf(out, sizeof(out), "%s/%s.gguf", tmp, key);
        mf_status st;
        mf_status_init(&st);
        int rc = convert(src, out, t, false, &st);
        CHECKF(rc == 0, "%s: %s", key, st.msg);
        mf_status_clear(&st);
        if (rc == 0)
            mf_hash_file(out, MF_SHA256, h, &st);
        mf_status_clear(&st);
        bool ok = want && !strcmp(h, want);
        total++;
        same += ok;
        printf("mmproj %-26s %s\n", key, ok ? "byte-identical to llama.cpp's converter (--mmproj)" : "DIFFERS");
        CHECKF(ok, "%s: differs from the converter's mmproj file", key);
        if (!ok && rc == 0)
            explain(out, v);
        /* validate's load check: an mmproj is read by mtmd's clip loader, whose keys it has */
        mf_model *m = NULL;
        if (rc == 0 && mf_open(out, NULL, &m, &st) == 0) {
            size_t np = mf_llama_load_problems(m, NULL, NULL);
            CHECKF(np == 0, "%s: %zu load problems", key, np);
            mf_close(m);
        }
        mf_status_clear(&st);
        /* the vision towers' image sizes the encoder takes: 32 x 32 (Qwen: dynamic, 32 too) */
        if (rc == 0 && getenv("MFMT_CLIPCHECK") && (!strcmp(t, "f16") || !strcmp(t, "q8_0"))) {
            tried++;
            int r = clip_runs(out, 32);
            loaded += r == 0;
            printf("llama.cpp b10256 clip_init + encode %-20s exit %d\n", key, r);
            CHECKF(r == 0, "%s: the clip loader of llama.cpp b10256 fails on it", key);
        }
        unlink(out);
    }
    printf("mmproj: %d of %d byte-identical to llama.cpp's converter\n", same, total);
    CHECK(total >= 80);
    if (getenv("MFMT_CLIPCHECK"))
        printf("mmproj: %d of %d load and encode in llama.cpp b10256's clip\n", loaded, tried);
    else
        TL_SKIP("mmproj outputs in llama.cpp's clip loader: MFMT_CLIPCHECK not set (tests/data/mmproj/README.md)");
    json_decref(e);
}

/* convert_hf_to_gguf.py --mmproj --outfile DIR: DIR/mmproj-{name}-{TYPE}.gguf
 * (no size label), the same bytes */
static void default_name(const char *tmp)
{
    char dir[512], path[600], h[129] = "";
    snprintf(dir, sizeof(dir), "%s/named", tmp);
    CHECK(mkdir(dir, 0700) == 0);
    mf_status st;
    mf_status_init(&st);
    int rc = convert(DATA "/dirs/gemma3-vl-tiny", dir, "q8_0", false, &st);
    CHECKF(rc == 0, "%s", st.msg);
    mf_status_clear(&st);
    snprintf(path, sizeof(path), "%s/mmproj-Gemma3-Vl-Tiny-Q8_0.gguf", dir);
    CHECKF(mf_hash_file(path, MF_SHA256, h, &st) == 0, "%s not written", path);
    mf_status_clear(&st);
    json_t *e = json_load_file(DATA "/expected.json", 0, NULL);
    const char *want = json_string_value(json_object_get(json_object_get(json_object_get(e, "outputs"),
                                                                         "gemma3-vl-tiny-q8_0"), "sha256"));
    CHECK(want && !strcmp(h, want));
    json_decref(e);
    unlink(path);
    rmdir(dir);
}

static void errors(const char *tmp)
{
    char d[600], cmd[700];
    variant(tmp, "gemma3-vl-tiny", "text-only", "{\"architectures\": [\"Qwen3ForCausalLM\"], \"hidden_size\": 64, "
            "\"num_hidden_layers\": 1}", NULL, d, sizeof(d));
    refused(tmp, d, "f16", false, MF_ERR_UNSUPPORTED, "no vision projector rule for Qwen3ForCausalLM");
    variant(tmp, "gemma3-vl-tiny", "no-vision", "{\"architectures\": [\"Gemma3ForConditionalGeneration\"], "
            "\"model_type\": \"gemma3\", \"text_config\": {\"hidden_size\": 64}}", NULL, d, sizeof(d));
    refused(tmp, d, "f16", false, MF_ERR_FORMAT, "has no vision_config");
    refused(tmp, DATA "/dirs/llama4-vl-tiny", "Q4_K_M", false, MF_ERR_USAGE, "--mmproj writes f32, f16, bf16 or q8_0");
    refused(tmp, DATA "/dirs/llama4-vl-tiny", "f16", true, MF_ERR_USAGE, "no vocabulary");
    variant(tmp, "mistral3-vl-tiny", "no-break", "{\"architectures\": [\"Mistral3ForConditionalGeneration\"], "
            "\"model_type\": \"mistral3\", \"text_config\": {\"hidden_size\": 64}, \"vision_config\": "
            "{\"model_type\": \"pixtral\", \"hidden_size\": 32, \"num_hidden_layers\": 3, \"num_attention_heads\": 2, "
            "\"intermediate_size\": 64, \"image_size\": 32, \"patch_size\": 4, \"hidden_act\": \"silu\"}}",
            "{\"added_tokens_decoder\": {\"1\": {\"content\": \"<s>\"}}}", d, sizeof(d));
    refused(tmp, d, "f16", false, MF_ERR_FORMAT, "token '[IMG_BREAK]' not found");
    variant(tmp, "qwen25vl-tiny", "uneven", "{\"architectures\": [\"Qwen2_5_VLForConditionalGeneration\"], "
            "\"model_type\": \"qwen2_5_vl\", \"hidden_size\": 64, \"vision_config\": {\"depth\": 3, \"hidden_size\": 32, "
            "\"intermediate_size\": 64, \"num_heads\": 2, \"patch_size\": 4, \"fullatt_block_indexes\": [1, 2]}}",
            NULL, d, sizeof(d));
    refused(tmp, d, "f16", false, MF_ERR_FORMAT, "Invalid fullatt_block_indexes");
    variant(tmp, "qwen2vl-tiny", "omni", "{\"architectures\": [\"Qwen2VLForConditionalGeneration\"], "
            "\"model_type\": \"qwen2_5_omni\", \"hidden_size\": 64, \"vision_config\": {\"depth\": 3}}", NULL, d,
            sizeof(d));
    refused(tmp, d, "f16", false, MF_ERR_UNSUPPORTED, "model_type \"qwen2_5_omni\"");
    /* transformers' InternVL whose vision_config does not name InternVisionModel: the converter
       has no mmproj class for InternVLForConditionalGeneration either */
    variant(tmp, "internvl-hf-tiny", "internvl-noarch", "{\"architectures\": [\"InternVLForConditionalGeneration\"], "
            "\"model_type\": \"internvl\", \"downsample_ratio\": 0.5, \"text_config\": {\"hidden_size\": 64}, "
            "\"vision_config\": {\"model_type\": \"internvl_vision\", \"num_hidden_layers\": 4}}", NULL, d, sizeof(d));
    refused(tmp, d, "f16", false, MF_ERR_UNSUPPORTED, "no vision projector rule for InternVLForConditionalGeneration");
    variant(tmp, "internvl-tiny", "internvl-noratio", "{\"architectures\": [\"InternVLChatModel\"], "
            "\"llm_config\": {\"hidden_size\": 64}, \"vision_config\": {\"architectures\": [\"InternVisionModel\"], "
            "\"hidden_size\": 32, \"image_size\": 32, \"intermediate_size\": 64, \"layer_norm_eps\": 1e-6, "
            "\"num_attention_heads\": 2, \"num_hidden_layers\": 4, \"patch_size\": 4, \"hidden_act\": \"gelu\"}}",
            NULL, d, sizeof(d));
    refused(tmp, d, "f16", false, MF_ERR_FORMAT, "downsample_ratio must be a positive number");
    snprintf(cmd, sizeof(cmd), "rm -rf %s/text-only %s/no-vision %s/no-break %s/uneven %s/omni %s/internvl-noarch "
             "%s/internvl-noratio", tmp, tmp, tmp, tmp, tmp, tmp, tmp);
    CHECK(system(cmd) == 0);
}

/* LFM2-VL with vision_feature_layer -2: the converter writes
 * clip.vision.block_count twice, the second (one block fewer) in the
 * first's place. The sha256 is of convert_hf_to_gguf.py's (ecbcb7ea,
 * unmodified) --mmproj --outtype f16 output for this same variant
 * (tests/data/mmproj/README.md, "variants"). */
static void lfm2_feature_layer(const char *tmp)
{
    char d[600], out[700], h[129] = "", cmd[700];
    variant(tmp, "lfm2vl-tiny", "lfm2vl-layer-2", "{\"architectures\": [\"Lfm2VlForConditionalGeneration\"], "
            "\"model_type\": \"lfm2-vl\", \"downsample_factor\": 2, \"vision_feature_layer\": -2, "
            "\"text_config\": {\"hidden_size\": 64, \"model_type\": \"lfm2\"}, \"vision_config\": {\"model_type\": "
            "\"siglip2_vision_model\", \"hidden_size\": 32, \"intermediate_size\": 64, \"num_hidden_layers\": 3, "
            "\"num_attention_heads\": 2, \"num_patches\": 16, \"patch_size\": 16, \"layer_norm_eps\": 1e-6}}", NULL,
            d, sizeof(d));
    snprintf(out, sizeof(out), "%s/lfm2vl-layer-2.gguf", tmp);
    mf_status st;
    mf_status_init(&st);
    int rc = convert(d, out, "f16", false, &st);
    CHECKF(rc == 0, "%s", st.msg);
    mf_status_clear(&st);
    if (rc == 0)
        mf_hash_file(out, MF_SHA256, h, &st);
    mf_status_clear(&st);
    CHECKF(!strcmp(h, LFM2_LAYER_2_SHA256), "lfm2vl vision_feature_layer -2: %s, the converter's " LFM2_LAYER_2_SHA256, h);
    printf("mmproj lfm2vl vision_feature_layer -2 (block_count 2) %s\n",
           strcmp(h, LFM2_LAYER_2_SHA256) ? "DIFFERS" : "byte-identical to llama.cpp's converter");
    unlink(out);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", d);
    CHECK(system(cmd) == 0);
}

int main(void)
{
    char tmp[] = "/tmp/mfmt-mmproj-XXXXXX";
    CHECK(mkdtemp(tmp) != NULL);
    run_references(tmp);
    default_name(tmp);
    errors(tmp);
    without_key_refused(tmp, "smolvlm-tiny", "clip.vision.patch_size");
    lfm2_feature_layer(tmp);
    CHECK(rmdir(tmp) == 0);
    return tl_report("mmproj");
}
