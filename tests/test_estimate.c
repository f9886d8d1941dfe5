/* test_estimate.c - mfmt estimate and plan against hand computation.
 * estimate: three real configs (Llama-2-7B, Mistral-7B-v0.1 with grouped
 * query attention, Qwen2-0.5B with tied embeddings), from config.json alone;
 * a corpus directory and its GGUF conversion agree; a GGUF at a
 * llama-quantize mix weighs, tensor by tensor, what llama-quantize's own
 * output of that file weighs (../shared/quant-ref/mix: c392e50;
 * tests/data/hf_new/quant_current.json: b10256, MXFP4_MOE among them).
 * plan: Accelerate's infer_auto_device_map worked by hand on small trees. */
#include "testlib.h"

#include "core/core.h"
#include "ops/estimate.h"
#include "ops/hf_ops.h"

#include <jansson.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

/* meta-llama/Llama-2-7b-hf config.json */
static const char llama2_7b[] =
    "{\"architectures\": [\"LlamaForCausalLM\"], \"bos_token_id\": 1, \"eos_token_id\": 2,"
    " \"hidden_act\": \"silu\", \"hidden_size\": 4096, \"initializer_range\": 0.02,"
    " \"intermediate_size\": 11008, \"max_position_embeddings\": 4096, \"model_type\": \"llama\","
    " \"num_attention_heads\": 32, \"num_hidden_layers\": 32, \"num_key_value_heads\": 32,"
    " \"pretraining_tp\": 1, \"rms_norm_eps\": 1e-05, \"rope_scaling\": null,"
    " \"tie_word_embeddings\": false, \"torch_dtype\": \"float16\", \"transformers_version\": \"4.31.0.dev0\","
    " \"use_cache\": true, \"vocab_size\": 32000}";

/* mistralai/Mistral-7B-v0.1 config.json */
static const char mistral_7b[] =
    "{\"architectures\": [\"MistralForCausalLM\"], \"bos_token_id\": 1, \"eos_token_id\": 2,"
    " \"hidden_act\": \"silu\", \"hidden_size\": 4096, \"initializer_range\": 0.02,"
    " \"intermediate_size\": 14336, \"max_position_embeddings\": 32768, \"model_type\": \"mistral\","
    " \"num_attention_heads\": 32, \"num_hidden_layers\": 32, \"num_key_value_heads\": 8,"
    " \"rms_norm_eps\": 1e-05, \"rope_theta\": 10000.0, \"sliding_window\": 4096,"
    " \"tie_word_embeddings\": false, \"torch_dtype\": \"bfloat16\", \"transformers_version\": \"4.34.0.dev0\","
    " \"use_cache\": true, \"vocab_size\": 32000}";

/* Qwen/Qwen2-0.5B config.json */
static const char qwen2_05b[] =
    "{\"architectures\": [\"Qwen2ForCausalLM\"], \"attention_dropout\": 0.0, \"bos_token_id\": 151643,"
    " \"eos_token_id\": 151643, \"hidden_act\": \"silu\", \"hidden_size\": 896, \"initializer_range\": 0.02,"
    " \"intermediate_size\": 4864, \"max_position_embeddings\": 131072, \"max_window_layers\": 24,"
    " \"model_type\": \"qwen2\", \"num_attention_heads\": 14, \"num_hidden_layers\": 24,"
    " \"num_key_value_heads\": 2, \"rms_norm_eps\": 1e-06, \"rope_theta\": 1000000.0,"
    " \"sliding_window\": 131072, \"tie_word_embeddings\": true, \"torch_dtype\": \"bfloat16\","
    " \"transformers_version\": \"4.40.1\", \"use_cache\": true, \"use_sliding_window\": false,"
    " \"vocab_size\": 151936}";

static char tmp[] = "/tmp/mfmt-test-estimate-XXXXXX";

static const char *dir_with(const char *name, const char *config)
{
    static char dir[4200];
    snprintf(dir, sizeof(dir), "%s/%s", tmp, name);
    mkdir(dir, 0755);
    char p[4300];
    snprintf(p, sizeof(p), "%s/config.json", dir);
    FILE *f = fopen(p, "w");
    if (f) {
        fputs(config, f);
        fclose(f);
    }
    return dir;
}

static void test_llama2(void)
{
    /* by hand: embeddings 32000*4096 = 131072000, twice (untied);
     * a layer: attention 4 * 4096*4096 = 67108864, MLP 3 * 4096*11008 =
     * 135266304, norms 2*4096 -> 202383360; 32 layers = 6476267520; final
     * norm 4096: 6738415616 parameters; F16: 13476831232 bytes.
     * KV at 4096 tokens, F16: 2 * 32 layers * 32 heads * 128 * 4096 * 2 = 2147483648. */
    mf_status st;
    mf_status_init(&st);
    mf_estimate e;
    mf_estimate_opts o = {.struct_size = sizeof(mf_estimate_opts)};
    CHECKF(mf_estimate_path_into(dir_with("llama2", llama2_7b), &o, &e, &st) == 0, "%s", st.msg);
    CHECK(e.n_params == 6738415616ull && e.params_from_config);
    CHECK(e.weight_bytes == 13476831232ull);
    CHECK(e.ctx == 4096 && e.head_dim_k == 128 && e.n_kv_heads == 32);
    CHECK(e.kv_bytes == 2147483648ull);
    CHECK(e.total_bytes == 13476831232ull + 2147483648ull);
    /* Q8_0 weights: 8.5 bits: 6738415616 * 8.5 / 8 = 7159566592; a q8_0 KV
     * cache: 4096-element rows = 128 blocks of 34 bytes: 2 * 4352 * 32 * 4096 */
    o.weight_type = "q8_0";
    o.kv_type = "q8_0";
    CHECK(mf_estimate_path_into(dir_with("llama2", llama2_7b), &o, &e, &st) == 0);
    CHECK(e.weight_bytes == 7159566592ull && e.kv_bytes == 2ull * 4352 * 32 * 4096);
    /* Q4_K_M at its 4.84 average: 6738415616 * 4.84 / 8 = 4076741447.68 -> 4076741448 */
    o.weight_type = "Q4_K_M";
    o.kv_type = NULL;
    CHECK(mf_estimate_path_into(dir_with("llama2", llama2_7b), &o, &e, &st) == 0);
    CHECKF(e.weight_bytes == 4076741448ull, "%llu", (unsigned long long)e.weight_bytes);
    mf_status_clear(&st);
    o.weight_type = "Q9_Z";
    CHECK(mf_estimate_path_into(dir_with("llama2", llama2_7b), &o, &e, &st) != 0 && st.code == MF_ERR_USAGE);
    mf_status_clear(&st);
}

static void test_mistral(void)
{
    /* by hand: a layer: q 4096*4096 + k, v 1024*4096 each + o 4096*4096 =
     * 41943040, MLP 3 * 4096*14336 = 176160768, norms 8192 -> 218112000;
     * 32 layers 6979584000 + embeddings 2 * 131072000 + norm 4096 =
     * 7241732096; BF16 14483464192 bytes. KV at 8192 tokens, batch 4, F16:
     * 2 * 32 * 8 KV heads * 128 * 8192 * 4 * 2 = 4294967296. */
    mf_status st;
    mf_status_init(&st);
    mf_estimate e;
    mf_estimate_opts o = {.struct_size = sizeof(mf_estimate_opts), .ctx = 8192, .batch = 4};
    CHECKF(mf_estimate_path_into(dir_with("mistral", mistral_7b), &o, &e, &st) == 0, "%s", st.msg);
    CHECK(e.n_params == 7241732096ull && e.weight_bytes == 14483464192ull);
    CHECK(e.n_kv_heads == 8 && e.kv_bytes == 4294967296ull);
    mf_status_clear(&st);
}

static void test_qwen2(void)
{
    /* by hand: embeddings 151936*896 = 136134656, once (tied); a layer:
     * q 896*896 + 896, k and v 128*896 + 128 each, o 896*896, MLP
     * 3 * 896*4864 = 13074432, norms 1792 -> 14912384; 24 layers 357897216;
     * norm 896: 494032768 parameters; BF16 988065536 bytes. KV at 32768
     * tokens, F16: 2 * 24 * 2 KV heads * 64 * 32768 * 2 = 402653184. */
    mf_status st;
    mf_status_init(&st);
    mf_estimate e;
    mf_estimate_opts o = {.struct_size = sizeof(mf_estimate_opts), .ctx = 32768};
    CHECKF(mf_estimate_path_into(dir_with("qwen2", qwen2_05b), &o, &e, &st) == 0, "%s", st.msg);
    CHECK(e.n_params == 494032768ull && e.weight_bytes == 988065536ull);
    CHECK(e.head_dim_k == 64 && e.kv_bytes == 402653184ull);
    CHECK(e.ctx_train == 131072);
    mf_status_clear(&st);
}

static void test_corpus_and_gguf(const char *shared)
{
    char dir[4096], out[4200];
    snprintf(dir, sizeof(dir), "%s/corpus/hf-dir/llama-tiny", shared);
    snprintf(out, sizeof(out), "%s/tiny.gguf", tmp);
    mf_status st;
    mf_status_init(&st);
    mf_estimate a, b;
    mf_estimate_opts o = {.struct_size = sizeof(mf_estimate_opts)};
    CHECK(mf_estimate_path_into(dir, &o, &a, &st) == 0);
    /* from the weights: 115008 F16 parameters; KV 2 * 2 * 2 * 16 * 128 * 2 */
    CHECK(a.n_params == 115008 && !a.params_from_config && a.weight_bytes == 230016 && a.kv_bytes == 32768);
    CHECK(mf_convert_to_gguf(dir, out, &(mf_convert_gguf_opts){.struct_size = sizeof(mf_convert_gguf_opts), .type = "f16"}, &st) == 0);
    CHECK(mf_estimate_path_into(out, &o, &b, &st) == 0);
    CHECKF(b.n_params == a.n_params && b.kv_bytes == a.kv_bytes && b.ctx == 128 && b.n_kv_heads == 2,
           "gguf estimate %llu %llu", (unsigned long long)b.n_params, (unsigned long long)b.kv_bytes);
    unlink(out);
    /* a safetensors file alone has no geometry */
    snprintf(out, sizeof(out), "%s/model.safetensors", dir);
    CHECK(mf_estimate_path_into(out, &o, &b, &st) != 0 && st.code == MF_ERR_UNSUPPORTED);
    mf_status_clear(&st);
}


static uint64_t tensor_bytes_of(const char *path)
{
    mf_status st;
    mf_status_init(&st);
    mf_model *m = NULL;
    uint64_t sum = 0;
    if (mf_open_model(path, 0, &m, &st) == 0)
        for (size_t i = 0; i < m->n_tensors; i++)
            sum += m->tensors[i].nbytes;
    CHECKF(m != NULL, "%s: %s", path, st.msg);
    mf_close(m);
    mf_status_clear(&st);
    return sum;
}

static uint64_t estimate_weights_as(const char *path, const char *type, int rules, char *note, size_t nl)
{
    mf_status st;
    mf_status_init(&st);
    mf_estimate e;
    mf_estimate_opts o = {.struct_size = sizeof(mf_estimate_opts), .weight_type = type, .mix_rules = rules};
    int rc = mf_estimate_path_into(path, &o, &e, &st);
    CHECKF(rc == 0, "%s --type %s: %s", path, type, st.msg);
    mf_status_clear(&st);
    if (note)
        snprintf(note, nl, "%s", rc ? "" : e.weight_note);
    return rc ? 0 : e.weight_bytes;
}

static uint64_t estimate_weights(const char *path, const char *type, char *note, size_t nl)
{
    return estimate_weights_as(path, type, MF_MIX_RULES_ECBCB7EA, note, nl);
}

/* Every mix llama-quantize c392e50 wrote of one F16 GGUF (without an
 * imatrix): the estimate equals its tensors' bytes. */
static void test_mix_c392e50(const char *shared)
{
    static const char *const mixes[] = {"Q2_K", "Q3_K_S", "Q3_K_M", "Q3_K_L", "Q4_0", "Q4_1", "Q4_K_S",
                                        "Q4_K_M", "Q5_0", "Q5_1", "Q5_K_S", "Q5_K_M", "Q6_K", "Q8_0",
                                        "IQ4_NL", "IQ4_XS"};
    char src[4096], ref[4200], note[256];
    snprintf(src, sizeof(src), "%s/quant-ref/mix/model-F16.gguf", shared);
    for (size_t i = 0; i < sizeof(mixes) / sizeof(mixes[0]); i++) {
        snprintf(ref, sizeof(ref), "%s/quant-ref/mix/model-%s.gguf", shared, mixes[i]);
        uint64_t want = tensor_bytes_of(ref), got = estimate_weights(src, mixes[i], note, sizeof(note));
        CHECKF(want && got == want, "estimate --type %s: %llu bytes, llama-quantize wrote %llu", mixes[i],
               (unsigned long long)got, (unsigned long long)want);
        CHECKF(strstr(note, "without an imatrix") != NULL, "%s: note \"%s\"", mixes[i], note);
    }
}

/* llama-quantize b10256's per-tensor types (quant_current.json) times the
 * F16 reference's element counts: the bytes of its output's tensors. */
static void test_mix_b10256(const char *shared)
{
    json_error_t err;
    json_t *j = json_load_file("tests/data/hf_new/quant_current.json", 0, &err);
    CHECKF(j != NULL, "quant_current.json: %s", err.text);
    size_t k, runs = 0;
    json_t *run;
    json_array_foreach(json_object_get(j, "runs"), k, run) {
        json_t *tensors = json_object_get(run, "tensors");
        if (!json_is_array(tensors))
            continue; /* a refusal */
        char src[4096];
        snprintf(src, sizeof(src), "%s/convert-ref-new/%s-f16.gguf", shared,
                 json_string_value(json_object_get(run, "dir")));
        mf_status st;
        mf_status_init(&st);
        mf_model *m = NULL;
        CHECKF(mf_open_model(src, 0, &m, &st) == 0, "%s: %s", src, st.msg);
        mf_status_clear(&st);
        if (!m)
            continue;
        uint64_t want = 0;
        size_t ti;
        json_t *t;
        json_array_foreach(tensors, ti, t) {
            const mf_tensor *x = mf_tensor_find(m, json_string_value(json_object_get(t, "name")));
            mf_dtype d = mf_dtype_from_name(json_string_value(json_object_get(t, "type")));
            uint64_t b = 0;
            CHECKF(x && d != MF_DTYPE_INVALID && mf_dtype_nbytes(d, mf_tensor_nelems(x), &b) == 0, "%s: %s",
                   src, json_string_value(json_object_get(t, "name")));
            want += b;
        }
        CHECK(json_array_size(tensors) == m->n_tensors);
        mf_close(m);
        const char *mix = json_string_value(json_object_get(run, "mix"));
        uint64_t got = estimate_weights_as(src, mix, MF_MIX_RULES_B10256, NULL, 0);
        CHECKF(got == want, "%s --type %s: %llu bytes, llama-quantize b10256 wrote %llu", src, mix,
               (unsigned long long)got, (unsigned long long)want);
        runs++;
    }
    CHECK(runs >= 5);
    json_decref(j);
}

/* A Hugging Face directory has no GGUF names: MXFP4_MOE is counted from
 * its own names (experts, routers). On these MoE references it comes
 * within 0.5 % of the exact count over the GGUF the converter made of the
 * same directory (c392e50 keeps Qwen2-MoE's shared-expert gate in F16, the
 * estimate counts it F32: the 256 bytes). */
static void test_mxfp4_moe_dir(const char *shared)
{
    static const char *const fams[] = {"mixtral", "olmoe", "deepseek-moe", "granitemoe", "qwen2moe", "phimoe"};
    char dir[4096], gg[4200], note[256];
    for (size_t i = 0; i < sizeof(fams) / sizeof(fams[0]); i++) {
        snprintf(dir, sizeof(dir), "%s/convert-ref-arch/dirs/%s-tiny", shared, fams[i]);
        snprintf(gg, sizeof(gg), "%s/convert-ref-arch/%s-tiny-f16.gguf", shared, fams[i]);
        double a = (double)estimate_weights(dir, "MXFP4_MOE", note, sizeof(note));
        double b = (double)estimate_weights(gg, "mxfp4_moe", NULL, 0);
        CHECKF(b > 0 && fabs(a - b) <= 0.005 * b, "%s: MXFP4_MOE from the names %.0f, from the GGUF %.0f", fams[i],
               a, b);
        CHECKF(strstr(note, "experts") != NULL, "%s: note \"%s\"", fams[i], note);
    }
    /* the mix over a file whose experts are MXFP4 already needs --allow-requantize */
    snprintf(gg, sizeof(gg), "%s/convert-ref-new/gpt-oss-tiny-f16.gguf", shared);
    estimate_weights(gg, "Q4_K_M", note, sizeof(note));
    CHECKF(strstr(note, "--allow-requantize") != NULL, "gpt-oss Q4_K_M note \"%s\"", note);
}

/* ---------------------------------------------------------------- plan */

static const char *dev_of(const mf_plan *p, const char *module)
{
    for (size_t i = 0; p && i < p->n_map; i++)
        if (!strcmp(p->map[i].module, module))
            return p->devices[p->map[i].device].name;
    return NULL;
}

static bool is(const char *a, const char *b)
{
    return a && b && !strcmp(a, b);
}

static const mf_plan_tensor toy[] = {
    {"model.embed_tokens.weight", 100},
    {"model.layers.0.mlp.weight", 50}, {"model.layers.1.mlp.weight", 50},
    {"model.layers.2.mlp.weight", 50}, {"model.layers.3.mlp.weight", 50},
    {"model.norm.weight", 1},
    {"lm_head.weight", 100},
};

static void test_plan(void)
{
    mf_status st;
    mf_status_init(&st);
    mf_plan *p = NULL;
    mf_plan_device devs[3] = {{"cuda:0", 300}, {"cpu", 1000}};
    /* By hand (Accelerate's loop): the largest unsplittable layer is 100
     * (embedding, lm_head), kept free on cuda:0 and cpu. cuda:0 has 200:
     * model (301) splits; embed 100 fits; layers (200) split; layers.0 and
     * .1 fit (200); layers.2 does not: cpu (900 free) takes layers.2, .3,
     * norm; lm_head, the last, needs no reserve: cpu. */
    CHECK(mf_plan_tensors(toy, 7, NULL, NULL, devs, 2, &p, &st) == 0);
    CHECK(is(dev_of(p, "model.embed_tokens"), "cuda:0") && is(dev_of(p, "model.layers.0"), "cuda:0") &&
          is(dev_of(p, "model.layers.1"), "cuda:0") && is(dev_of(p, "model.layers.2"), "cpu") &&
          is(dev_of(p, "model.layers.3"), "cpu") && is(dev_of(p, "model.norm"), "cpu") &&
          is(dev_of(p, "lm_head"), "cpu"));
    CHECK(p->n_map == 7 && p->used[0] == 200 && p->used[1] == 201 && p->total == 401 && p->reserved == 100);
    CHECK(p->n_devices == 3 && !strcmp(p->devices[2].name, "disk")); /* disk added */
    mf_plan_free(p);

    /* tied: lm_head counts nothing and goes with the embedding. By hand:
     * popping model drops the embedding from the largest-layer names, which
     * leaves lm_head (0): no reserve, 301 > 300 still splits; then the
     * reserve is a decoder layer (50): 250 free; embed + lm_head 100;
     * layers.0-2 -> 250; layers.3 is the last layer: the reserve becomes
     * the norm (1), 300 > 299: cpu, and the norm too. */
    CHECK(mf_plan_tensors(toy, 7, "lm_head.weight", "model.embed_tokens.weight", devs, 2, &p, &st) == 0);
    CHECK(is(dev_of(p, "lm_head"), "cuda:0") && is(dev_of(p, "model.embed_tokens"), "cuda:0"));
    CHECK(is(dev_of(p, "model.layers.2"), "cuda:0") && is(dev_of(p, "model.layers.3"), "cpu") &&
          is(dev_of(p, "model.norm"), "cpu"));
    CHECK(p->total == 301 && p->used[0] == 250 && p->used[1] == 51);
    mf_plan_free(p);

    /* everything fits: one entry for the whole model */
    mf_plan_device big[1] = {{"cuda:0", 10000}};
    CHECK(mf_plan_tensors(toy, 7, NULL, NULL, big, 1, &p, &st) == 0);
    CHECK(p->n_map == 1 && is(dev_of(p, ""), "cuda:0"));
    mf_plan_free(p);

    /* too little: the embedding (100) fits neither cuda:0 (150 - 100) nor
     * cpu (150 - 100): from there on, disk, and the map collapses */
    mf_plan_device small[2] = {{"cuda:0", 150}, {"cpu", 150}};
    CHECK(mf_plan_tensors(toy, 7, NULL, NULL, small, 2, &p, &st) == 0);
    CHECK(p->n_map == 1 && is(dev_of(p, ""), "disk") && p->used[2] == 401);
    mf_plan_free(p);

    /* two GPUs: only the first keeps the reserve; the second fills up */
    mf_plan_device two[3] = {{"cuda:0", 250}, {"cuda:1", 110}, {"cpu", 1000}};
    CHECK(mf_plan_tensors(toy, 7, NULL, NULL, two, 3, &p, &st) == 0);
    /* cuda:0 (150 free): embed 100; layers.0 (50) -> 150; layers.1 no.
     * cuda:1 (110, no reserve): layers.1, .2 (100); layers.3 no. cpu:
     * layers.3, norm, lm_head. */
    CHECK(is(dev_of(p, "model.embed_tokens"), "cuda:0") && is(dev_of(p, "model.layers.0"), "cuda:0") &&
          is(dev_of(p, "model.layers.1"), "cuda:1") && is(dev_of(p, "model.layers.2"), "cuda:1") &&
          is(dev_of(p, "model.layers.3"), "cpu") && is(dev_of(p, "lm_head"), "cpu"));
    mf_plan_free(p);

    uint64_t v;
    CHECK(mf_parse_size("24GiB", &v) == 0 && v == 24ull << 30);
    CHECK(mf_parse_size("24GB", &v) == 0 && v == 24000000000ull);
    CHECK(mf_parse_size("512MiB", &v) == 0 && v == 512ull << 20);
    CHECK(mf_parse_size("1000", &v) == 0 && v == 1000);
    CHECK(mf_parse_size("8Gb", &v) == 0 && v == 1000000000ull); /* bits */
    CHECK(mf_parse_size("lots", &v) != 0 && mf_parse_size("5XB", &v) != 0 && mf_parse_size("-1GB", &v) != 0);
    mf_status_clear(&st);
}

static void test_plan_path(const char *shared)
{
    /* a config-only directory: tensors from config.json at torch_dtype */
    mf_status st;
    mf_status_init(&st);
    mf_plan *p = NULL;
    mf_plan_device devs[2] = {{"cuda:0", 8ull << 30}, {"cpu", 64ull << 30}};
    CHECKF(mf_plan_path(dir_with("llama2", llama2_7b), devs, 2, NULL, &p, &st) == 0, "%s", st.msg);
    /* 13476831232 bytes; the largest layer is the embedding (32000*4096*2 =
     * 262144000) vs a decoder layer (202383360*2 = 404766720): 404766720 */
    CHECK(p->total == 13476831232ull && p->reserved == 404766720ull);
    CHECK(is(dev_of(p, "model.embed_tokens"), "cuda:0") && is(dev_of(p, "lm_head"), "cpu"));
    CHECK(p->used[0] <= (8ull << 30) - 404766720ull && p->used[0] + p->used[1] == p->total);
    /* layers are whole: (8 GiB - 404766720 reserve - 262144000 embedding) /
     * 404766720 = 19.57: layers 0-18 on cuda:0 */
    CHECK(is(dev_of(p, "model.layers.18"), "cuda:0") && is(dev_of(p, "model.layers.19"), "cpu"));
    mf_plan_free(p);
    /* a corpus directory with its weights, tied embeddings */
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s/corpus/hf-dir/qwen2-tiny", shared);
    mf_plan_device tiny[2] = {{"0", 150000}, {"cpu", 1000000}};
    CHECK(mf_plan_path(dir, tiny, 2, NULL, &p, &st) == 0);
    CHECK(p->total == 189568 && is(dev_of(p, "lm_head"), "0") && is(dev_of(p, "model.layers"), "cpu"));
    mf_plan_free(p);
    mf_status_clear(&st);
}

int main(void)
{
    CHECK(mkdtemp(tmp) != NULL);
    test_llama2();
    test_mistral();
    test_qwen2();
    test_plan();
    const char *shared = tl_shared_dir();
    if (shared) {
        test_corpus_and_gguf(shared);
        test_mix_c392e50(shared);
        test_mix_b10256(shared);
        test_mxfp4_moe_dir(shared);
        test_plan_path(shared);
    } else {
        TL_SKIP("estimate: the corpus and GGUF estimates, plan paths (no ../shared)");
    }
    CHECK(tl_remove_tmpdir(tmp));
    return tl_report("estimate");
}
