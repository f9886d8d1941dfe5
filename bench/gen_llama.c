/* gen_llama.c - writes a llama-architecture F16 GGUF of a chosen size with
 * pseudo-random N(0, 0.02)-like weights, for the quantize benchmark:
 *   gen_llama OUT.gguf N_LAYER HIDDEN FFN VOCAB [square]
 * (12 2048 5632 32000: 0.66B parameters, 1.3 GB). `square`: as many KV heads
 * as heads, no norm vectors and no output.weight (tied to token_embd), so
 * `1 4096 4096 4096 square` is 8 F16 tensors of 4096x4096 (256 MiB), the
 * input of bench/quant_types.sh. llama-quantize loads both kinds. Or, for
 * the HF -> GGUF benchmark, the same model as a Hugging Face directory
 * (model.safetensors with the transformers names, F16, and config.json; the
 * tokenizer files are the caller's):
 *   gen_llama --hf DIR N_LAYER HIDDEN FFN VOCAB */
#include "core/core.h"

#include <stdlib.h>

typedef struct gen {
    uint64_t state;
    const mf_out_tensor *ts;
} gen;

/* xorshift64*; a sum of 4 uniforms approximates a normal well enough here */
static float next_weight(gen *g)
{
    float s = 0;
    for (int i = 0; i < 4; i++) {
        g->state ^= g->state >> 12;
        g->state ^= g->state << 25;
        g->state ^= g->state >> 27;
        s += (float)((g->state * 0x2545F4914F6CDD1Dull) >> 40) / (float)(1 << 24) - 0.5f;
    }
    return s * 0.035f;
}

static int fill(void *ctx, size_t i, mf_sink_fn sink, void *sctx, mf_status *st)
{
    gen *g = ctx;
    const mf_out_tensor *t = &g->ts[i];
    uint64_t n = 1;
    for (int d = 0; d < t->ndim; d++)
        n *= (uint64_t)t->shape[d];
    enum { CH = 1 << 16 };
    static uint16_t h[CH];
    static float f[CH];
    for (uint64_t k = 0; k < n; k += CH) {
        size_t c = n - k < CH ? (size_t)(n - k) : CH;
        int rc;
        if (t->dtype == MF_F32) {
            for (size_t j = 0; j < c; j++)
                f[j] = 1.0f + next_weight(g);
            rc = sink(sctx, f, c * 4, st);
        } else {
            for (size_t j = 0; j < c; j++)
                h[j] = mf_f32_to_f16(next_weight(g));
            rc = sink(sctx, h, c * 2, st);
        }
        if (rc)
            return rc;
    }
    return 0;
}

static mf_out_tensor mk(mf_arena *a, const char *name, mf_dtype dt, int64_t rows, int64_t cols)
{
    mf_out_tensor t = {.name = mf_arena_strdup(a, name), .dtype = dt, .ndim = rows ? 2 : 1};
    if (rows) {
        t.shape[0] = rows;
        t.shape[1] = cols;
    } else {
        t.shape[0] = cols;
    }
    return t;
}

static mf_kv kv_u32(const char *k, uint64_t v)
{
    mf_kv kv = {.key = k};
    kv.v.type = MF_V_U32;
    kv.v.as.u = v;
    return kv;
}

/* The GGUF names as transformers' LlamaForCausalLM calls them. */
static void hf_names(mf_arena *a, mf_out_tensor *ts, size_t n)
{
    static const struct { const char *gguf, *hf; } map[] = {
        {"attn_norm", "input_layernorm"}, {"attn_q", "self_attn.q_proj"}, {"attn_k", "self_attn.k_proj"},
        {"attn_v", "self_attn.v_proj"}, {"attn_output", "self_attn.o_proj"},
        {"ffn_norm", "post_attention_layernorm"}, {"ffn_gate", "mlp.gate_proj"}, {"ffn_up", "mlp.up_proj"},
        {"ffn_down", "mlp.down_proj"},
    };
    for (size_t i = 0; i < n; i++) {
        const char *g = ts[i].name;
        int l;
        char kind[64];
        if (!strcmp(g, "token_embd.weight")) {
            ts[i].name = "model.embed_tokens.weight";
        } else if (!strcmp(g, "output_norm.weight")) {
            ts[i].name = "model.norm.weight";
        } else if (!strcmp(g, "output.weight")) {
            ts[i].name = "lm_head.weight";
        } else if (sscanf(g, "blk.%d.%63[a-z_].weight", &l, kind) == 2) {
            for (size_t k = 0; k < sizeof(map) / sizeof(map[0]); k++)
                if (!strcmp(kind, map[k].gguf))
                    ts[i].name = mf_arena_printf(a, "model.layers.%d.%s.weight", l, map[k].hf);
        }
    }
}

static int write_hf_config(const char *dir, int nl, int64_t hid, int64_t ffn, int64_t voc, int64_t heads,
                           int64_t kv_heads)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/config.json", dir);
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "{\n  \"architectures\": [\"LlamaForCausalLM\"],\n  \"bos_token_id\": 1,\n"
               "  \"eos_token_id\": 2,\n  \"hidden_size\": %lld,\n  \"intermediate_size\": %lld,\n"
               "  \"max_position_embeddings\": 4096,\n  \"model_type\": \"llama\",\n"
               "  \"num_attention_heads\": %lld,\n  \"num_hidden_layers\": %d,\n"
               "  \"num_key_value_heads\": %lld,\n  \"rms_norm_eps\": 1e-05,\n  \"rope_theta\": 10000.0,\n"
               "  \"tie_word_embeddings\": false,\n  \"torch_dtype\": \"float16\",\n  \"vocab_size\": %lld\n}\n",
            (long long)hid, (long long)ffn, (long long)heads, nl, (long long)kv_heads, (long long)voc);
    return fclose(f) ? -1 : 0;
}

int main(int argc, char **argv)
{
    bool hf = argc == 7 && !strcmp(argv[1], "--hf");
    if (hf) {
        argv++;
        argc--;
    }
    if (argc != 6 && !(argc == 7 && !hf && strcmp(argv[6], "square") == 0)) {
        fprintf(stderr, "usage: gen_llama OUT.gguf N_LAYER HIDDEN FFN VOCAB [square]\n"
                        "       gen_llama --hf DIR N_LAYER HIDDEN FFN VOCAB\n");
        return 2;
    }
    const bool square = argc == 7;
    int nl = atoi(argv[2]);
    int64_t hid = atoll(argv[3]), ffn = atoll(argv[4]), voc = atoll(argv[5]);
    int64_t heads = hid / 64, kv_heads = square ? heads : heads / 4 ? heads / 4 : 1, kv = kv_heads * 64;
    mf_arena *a = mf_arena_new();
    size_t n = 0, cap = 3 + 9 * (size_t)nl;
    mf_out_tensor *ts = calloc(cap, sizeof(*ts));
    ts[n++] = mk(a, "token_embd.weight", MF_F16, voc, hid);
    for (int l = 0; l < nl; l++) {
        char b[64];
#define T(suffix, dt, r, c) (snprintf(b, sizeof(b), "blk.%d." suffix, l), ts[n++] = mk(a, b, dt, r, c))
        if (!square)
            T("attn_norm.weight", MF_F32, 0, hid);
        T("attn_q.weight", MF_F16, hid, hid);
        T("attn_k.weight", MF_F16, kv, hid);
        T("attn_v.weight", MF_F16, kv, hid);
        T("attn_output.weight", MF_F16, hid, hid);
        if (!square)
            T("ffn_norm.weight", MF_F32, 0, hid);
        T("ffn_gate.weight", MF_F16, ffn, hid);
        T("ffn_up.weight", MF_F16, ffn, hid);
        T("ffn_down.weight", MF_F16, hid, ffn);
#undef T
    }
    if (!square) {
        ts[n++] = mk(a, "output_norm.weight", MF_F32, 0, hid);
        ts[n++] = mk(a, "output.weight", MF_F16, voc, hid);
    }
    mf_kv meta[9];
    size_t k = 0;
    meta[k].key = "general.architecture";
    meta[k++].v = mf_value_str(a, "llama", 5);
    meta[k++] = kv_u32("llama.block_count", (uint64_t)nl);
    meta[k++] = kv_u32("llama.embedding_length", (uint64_t)hid);
    meta[k++] = kv_u32("llama.feed_forward_length", (uint64_t)ffn);
    meta[k++] = kv_u32("llama.attention.head_count", (uint64_t)heads);
    meta[k++] = kv_u32("llama.attention.head_count_kv", (uint64_t)kv_heads);
    meta[k++] = kv_u32("llama.context_length", 4096);
    meta[k++] = kv_u32("general.file_type", 1);
    /* llama.cpp's loader requires it for the llama architecture */
    meta[k].key = "llama.attention.layer_norm_rms_epsilon";
    meta[k].v.type = MF_V_F32;
    meta[k++].v.as.f = 1e-5f; /* F32 values are held exactly */
    gen g = {0x9e3779b97f4a7c15ull, ts};
    mf_status st;
    mf_status_init(&st);
    int rc;
    if (hf) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/model.safetensors", argv[1]);
        hf_names(a, ts, n);
        rc = write_hf_config(argv[1], nl, hid, ffn, voc, heads, kv_heads);
        if (rc)
            fprintf(stderr, "gen_llama: cannot write %s/config.json\n", argv[1]);
        else
            rc = mf_safetensors_write(path, ts, n, NULL, 0, fill, &g, &st);
    } else {
        rc = mf_gguf_write(argv[1], ts, n, meta, k, fill, &g, &st);
    }
    if (rc)
        fprintf(stderr, "gen_llama: %s\n", st.msg);
    mf_status_clear(&st);
    free(ts);
    mf_arena_free(a);
    return rc ? 1 : 0;
}
