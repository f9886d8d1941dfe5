/* test_gguf_to_hf.c - GGUF -> Hugging Face directory, over every reference
 * directory of ../shared (convert-ref-arch/dirs, convert-ref-new/dirs and
 * corpus/hf-dir, written as transformers' modeling code names tensors), the
 * variants of tests/data/hf_arch/gen_variants.py and the held-out-style ones
 * of gen_roundtrip.py (RoPE scaling of every kind, Falcon's two decoder
 * layouts, tied heads): HF -> GGUF (mfmt) -> HF (mfmt) gives the original
 * tensors (bit-exact at the source's dtype, but for the operations that
 * round: Gemma's +1 norms, Mamba's -exp(A_log)) and config values, and ->
 * GGUF again gives the same metadata and tensors (byte-identical files but
 * where the source order came from shards or a pickle), so the tokens,
 * scores, types, merges, special ids, templates and the RoPE tensors
 * llama.cpp computes (rope_freqs) survive. Every architecture the converter
 * knows must be among them. Each written config.json is checked against
 * its transformers config class (tests/data/hf_arch/hf_config_keys.json):
 * only keys the class takes, of its types, and every key the forward
 * converter reads under the name transformers uses. */
#include "core/core.h"
#include "ops/hfconv/arch.h"
#include "ops/hfconv/gguf2hf.h"
#include "ops/hfconv/hfconv.h"
#include "ops/tensor_f32.h"
#include "testlib.h"

#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[64];
static json_t *schema; /* tests/data/hf_arch/hf_config_keys.json */
static char covered[128][64]; /* GGUF architectures round-tripped */
static size_t n_covered;
static int n_configs_checked, n_configs_remote, n_refused, n_effective;

static bool same_file(const char *a, const char *b)
{
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    bool same = fa && fb;
    while (same) {
        int x = fgetc(fa), y = fgetc(fb);
        same = x == y;
        if (x == EOF || y == EOF)
            break;
    }
    if (fa)
        fclose(fa);
    if (fb)
        fclose(fb);
    return same;
}

static const char *source_type(const char *dir)
{
    mf_status st;
    mf_status_init(&st);
    mf_model *m;
    const char *t = "f16";
    if (mf_open(dir, NULL, &m, &st) == 0) {
        for (size_t i = 0; i < m->n_tensors; i++)
            if (m->tensors[i].ndim == 2) {
                t = m->tensors[i].dtype == MF_BF16 ? "bf16" : m->tensors[i].dtype == MF_F32 ? "f32" : "f16";
                break;
            }
        mf_close(m);
    }
    mf_status_clear(&st);
    return t;
}

/* RobertaModel / XLMRobertaModel: pad_token_id + 1 position rows are cut. */
static int64_t skip_rows_of(const char *dir)
{
    char p[1400];
    snprintf(p, sizeof(p), "%s/config.json", dir);
    json_t *cfg = json_load_file(p, 0, NULL);
    const char *cls = json_string_value(json_array_get(json_object_get(cfg, "architectures"), 0));
    json_t *pad = json_object_get(cfg, "pad_token_id");
    int64_t k = cls && strstr(cls, "Roberta") && json_is_integer(pad) ? json_integer_value(pad) + 1 : 0;
    json_decref(cfg);
    return k;
}

/* A number of the original directory's config.json (1.0 when absent). */
static double jais_scale(const char *dir, const char *key)
{
    char p[1400];
    snprintf(p, sizeof(p), "%s/config.json", dir);
    json_t *cfg = json_load_file(p, 0, NULL);
    json_t *v = json_object_get(cfg, key);
    double x = json_is_number(v) ? json_number_value(v) : 1.0;
    json_decref(cfg);
    return x;
}

/* Falcon-H1: the factor FalconH1Model.modify_tensors multiplied row `row`
 * of tensor `name` by (its muP multipliers, the first pattern the name
 * contains; in_proj's rows by zxbcdt block too); 1.0 for the others. */
static double falcon_h1_factor(const char *dir, const char *name, int64_t row)
{
    char p[1400];
    snprintf(p, sizeof(p), "%s/config.json", dir);
    json_t *cfg = json_load_file(p, 0, NULL);
#define NUM(k) (json_is_number(json_object_get(cfg, k)) ? json_number_value(json_object_get(cfg, k)) : 1.0)
#define NTH(k, i) (json_is_number(json_array_get(json_object_get(cfg, k), i)) ? \
                   json_number_value(json_array_get(json_object_get(cfg, k), i)) : 1.0)
    double f = 1.0;
    if (strstr(name, "down_proj"))
        f = NTH("mlp_multipliers", 1);
    else if (strstr(name, "gate_proj"))
        f = NTH("mlp_multipliers", 0);
    else if (strstr(name, "k_proj"))
        f = NUM("key_multiplier") * NUM("attention_in_multiplier");
    else if (strstr(name, "q_proj") || strstr(name, "v_proj"))
        f = NUM("attention_in_multiplier");
    else if (strstr(name, "o_proj"))
        f = NUM("attention_out_multiplier");
    else if (strstr(name, "out_proj"))
        f = NUM("ssm_out_multiplier");
    else if (strstr(name, "in_proj")) {
        int64_t d = (int64_t)NUM("mamba_d_ssm"), gs = (int64_t)(NUM("mamba_n_groups") * NUM("mamba_d_state"));
        int64_t ends[4] = {d, 2 * d, 2 * d + gs, 2 * d + 2 * gs};
        size_t k = 0;
        while (k < 4 && row >= ends[k])
            k++;
        f = NUM("ssm_in_multiplier") * NTH("ssm_multipliers", k);
    } else if (strstr(name, "lm_head"))
        f = NUM("lm_head_multiplier");
    else if (strstr(name, "embed_tokens"))
        f = NUM("embedding_multiplier");
#undef NUM
#undef NTH
    json_decref(cfg);
    return f;
}

static int compare_tensors(const char *orig, const char *back, const char *arch)
{
    mf_status st;
    mf_status_init(&st);
    mf_model *a = NULL, *b = NULL;
    int bad = 0;
    bool gemma = !strncmp(arch, "gemma", 5), jais = !strcmp(arch, "jais");
    if (mf_open(orig, NULL, &a, &st) || mf_open(back, NULL, &b, &st)) {
        CHECKF(0, "%s: %s", back, st.msg);
        goto out;
    }
    for (size_t i = 0; i < b->n_tensors; i++)
        CHECKF(mf_tensor_find(a, b->tensors[i].name) != NULL, "%s: %s is not in the original",
               back, b->tensors[i].name);
    for (size_t i = 0; i < a->n_tensors; i++) {
        const mf_tensor *ta = &a->tensors[i], *tb = mf_tensor_find(b, ta->name);
        if (!tb)
            continue; /* dropped by the forward converter (pooler, tied lm_head, attn.bias) */
        /* JAIS: the converter multiplied the embedding and the head by the
         * config's scales; GGUF keeps the products (they come back so) */
        double scale = !jais ? 1.0 : !strcmp(ta->name, "transformer.wte.weight") ? jais_scale(orig, "embeddings_scale")
                                   : !strcmp(ta->name, "lm_head.weight") ? jais_scale(orig, "width_scale") : 1.0;
        bool falcon_h1 = !strcmp(arch, "falcon-h1") && falcon_h1_factor(orig, ta->name, 0) != 1.0;
        /* A_log: -exp is not one-to-one in float32 (any SSM family); RWKV6's
         * rescaled weights: halving an F16 value can round it (subnormals) */
        bool rwkv_halved = !strcmp(arch, "rwkv6") && (strstr(ta->name, "attention.output.") ||
                                                      strstr(ta->name, "feed_forward.value."));
        bool exact = !((gemma && strstr(ta->name, "norm")) || strstr(ta->name, "A_log") ||
                       scale != 1.0 || falcon_h1 || rwkv_halved);
        /* BitNet's latent projection weights: the GGUF holds them ternarised
         * (the byte-identical second GGUF checks what came back) */
        CHECK(ta->ndim == tb->ndim && !memcmp(ta->shape, tb->shape, sizeof(int64_t) * (size_t)ta->ndim));
        if (!strcmp(arch, "bitnet") && strstr(ta->name, "_proj.weight"))
            continue;
        float *fa = NULL, *fb = NULL;
        /* RoBERTa's positions before pad_token_id + 1: cut by the converter
         * (not in the GGUF), written back as zeros; the rest is compared */
        uint64_t from = 0;
        if (!strcmp(ta->name, "embeddings.position_embeddings.weight") && ta->ndim == 2 &&
            skip_rows_of(orig) > 0)
            from = (uint64_t)skip_rows_of(orig) * (uint64_t)ta->shape[1];
        if (mf_tensor_read_f32(a, ta, &fa, &st) == 0 && mf_tensor_read_f32(b, tb, &fb, &st) == 0) {
            uint64_t n = mf_tensor_nelems(ta), diff = 0;
            for (uint64_t k = 0; scale != 1.0 && k < n; k++)
                fa[k] *= (float)scale;
            /* Falcon-H1: its multipliers came folded in (the config back has them 1) */
            int64_t cols = ta->ndim ? ta->shape[ta->ndim - 1] : 1;
            for (uint64_t r = 0; falcon_h1 && cols > 0 && r < n / (uint64_t)cols; r++) {
                double f = falcon_h1_factor(orig, ta->name, (int64_t)r);
                for (uint64_t k = r * (uint64_t)cols; k < (r + 1) * (uint64_t)cols; k++)
                    fa[k] = (float)((double)fa[k] * f);
            }
            double worst = 0;
            for (uint64_t k = from; k < n; k++) {
                if (memcmp(&fa[k], &fb[k], 4))
                    diff++;
                double e = fabs((double)fa[k] - (double)fb[k]);
                worst = e > worst ? e : worst;
            }
            if (exact)
                CHECKF(diff == 0, "%s: %s differs in %llu of %llu values", back, ta->name,
                       (unsigned long long)diff, (unsigned long long)n);
            else
                CHECKF(worst < 0.02, "%s: %s off by %g", back, ta->name, worst);
            bad += diff && exact;
        } else {
            CHECKF(0, "%s: %s", ta->name, st.msg);
        }
        free(fa);
        free(fb);
    }
out:
    mf_close(a);
    mf_close(b);
    mf_status_clear(&st);
    return bad;
}

static double num_of(json_t *o, const char *k, double dflt)
{
    json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : dflt;
}

static const char *rope_type_of(json_t *rs)
{
    const char *t = json_string_value(json_object_get(rs, "rope_type"));
    return t ? t : json_string_value(json_object_get(rs, "type"));
}

/* The same rotation as transformers computes it (floats as float32): llama3
 * depends on original context / low and / high only, so the pair written
 * back for llama.cpp's context 8192 is the same scaling. */
/* A nested config object (MPT's and DBRX's attn_config, ffn_config) written
 * back with the keys the GGUF keeps: each of them as in the original (the
 * others, attn_pdrop or moe_loss_weight, have no GGUF key; the same rule as
 * for the top-level keys). */
static bool same_kept_subkeys(json_t *orig, json_t *back)
{
    const char *k;
    json_t *vb;
    size_t n = 0;
    json_object_foreach(back, k, vb) {
        json_t *va = json_object_get(orig, k);
        bool same = va && (json_equal(va, vb) || (json_is_number(va) && json_is_number(vb) &&
                                                  (float)json_number_value(va) == (float)json_number_value(vb)));
        if (!same)
            return false;
        n++;
    }
    return n > 0;
}

static bool same_rope_scaling(json_t *a, json_t *b)
{
    const char *ta = rope_type_of(a), *tb = rope_type_of(b);
    if (!ta || !tb || strcmp(ta, tb))
        return false;
#define F32EQ(x, y) ((float)(x) == (float)(y))
    if (!strcmp(ta, "llama3")) {
        double ca = num_of(a, "original_max_position_embeddings", 8192), cb = num_of(b, "original_max_position_embeddings", 8192);
        return F32EQ(num_of(a, "factor", 8), num_of(b, "factor", 8)) &&
               F32EQ(ca / num_of(a, "low_freq_factor", 1), cb / num_of(b, "low_freq_factor", 1)) &&
               F32EQ(ca / num_of(a, "high_freq_factor", 4), cb / num_of(b, "high_freq_factor", 4));
    }
    if (!strcmp(ta, "longrope") || !strcmp(ta, "su")) {
        static const char *const lists[] = {"long_factor", "short_factor"};
        for (int l = 0; l < 2; l++) {
            json_t *x = json_object_get(a, lists[l]), *y = json_object_get(b, lists[l]);
            if (json_array_size(x) != json_array_size(y))
                return false;
            for (size_t i = 0; i < json_array_size(x); i++)
                if (!F32EQ(json_number_value(json_array_get(x, i)), json_number_value(json_array_get(y, i))))
                    return false;
        }
        return true;
    }
    bool ok = F32EQ(num_of(a, "factor", 1), num_of(b, "factor", 1));
    if (!strcmp(ta, "yarn"))
        ok &= F32EQ(num_of(a, "original_max_position_embeddings", 0), num_of(b, "original_max_position_embeddings", 0));
#undef F32EQ
    return ok;
}

/* Every key of the rebuilt config.json that the original has: same value
 * (floats as float32, since GGUF holds them so). */
static const char *not_carried(json_t *cls, const char *k);

static void compare_config(const char *orig, const char *back)
{
    char pa[1400], pb[1400];
    snprintf(pa, sizeof(pa), "%s/config.json", orig);
    snprintf(pb, sizeof(pb), "%s/config.json", back);
    json_t *a = json_load_file(pa, JSON_DECODE_INT_AS_REAL, NULL), *b = json_load_file(pb, JSON_DECODE_INT_AS_REAL, NULL);
    CHECKF(a && b, "%s: config.json unreadable", back);
    /* a multimodal config (Qwen3.5) as the converter reads it: text_config
     * lifted to the top, in both (check_config_keys checks the nesting) */
    json_t *tc = json_object_get(a, "text_config");
    if (json_is_object(tc))
        json_object_update(a, tc);
    tc = json_object_get(b, "text_config");
    if (json_is_object(tc))
        json_object_update(b, tc);
    const char *k;
    json_t *vb;
    size_t common = 0;
    json_object_foreach(b, k, vb) {
        json_t *va = json_object_get(a, k);
        /* GGUF keeps what these give, not the values: the rotary dims
         * (partial_rotary_factor 0.4 and 0.375 can give the same), the
         * special ids the converter may take from elsewhere (InternLM2's
         * chat eos), JAIS's scales (compare_tensors checks the weights
         * they were folded into), OpenELM's ffn_multipliers (only the widths
         * _make_divisible gives them are kept); the byte-identical second
         * GGUF checks them */
        /* not kept by the GGUF: Command-R's max_position_embeddings
         * beside the model_max_length its converter reads; an expand that
         * disagrees with the weights (transformers derives the width from
         * it: the one written back is the weights') */
        if ((!strcmp(k, "max_position_embeddings") && json_object_get(a, "model_max_length")) ||
            (!strcmp(k, "expand") && json_object_get(a, "intermediate_size") && json_object_get(a, "hidden_size") &&
             json_number_value(va) * json_number_value(json_object_get(a, "hidden_size")) !=
                 json_number_value(json_object_get(a, "intermediate_size"))))
            continue;
        json_t *cls = json_object_get(json_object_get(schema, "classes"), json_string_value(json_object_get(b, "model_type")));
        if (cls && not_carried(cls, k)) /* hf_config_keys.json says why */
            continue;
        if (!va || !strcmp(k, "torch_dtype") || !strcmp(k, "architectures") || !strcmp(k, "text_config") ||
            !strcmp(k, "model_type") || !strcmp(k, "tie_word_embeddings") ||
            !strcmp(k, "partial_rotary_factor") || !strcmp(k, "rotary_pct") || !strcmp(k, "ffn_multipliers") ||
            !strcmp(k, "embeddings_scale") || !strcmp(k, "width_scale") || /* JAIS: folded into the weights */
            /* Falcon-H1's muP factors: folded into the weights, back as 1 */
            (strstr(k, "_multiplier") && !strcmp(json_string_value(json_object_get(a, "model_type")), "falcon_h1")) ||
            /* Granite 4.0-H: the context the converter writes over with 2**20 */
            (!strcmp(k, "max_position_embeddings") && json_object_get(a, "layer_types") &&
             !strcmp(json_string_value(json_object_get(a, "model_type")), "granitemoehybrid")) ||
            strstr(k, "_token_id") ||
            /* LFM2's feed-forward size: GGUF keeps the adjusted one */
            !strncmp(k, "block_", 6) || (!strcmp(k, "intermediate_size") && json_object_get(a, "block_ff_dim")))
            continue;
        common++;
        bool same = json_equal(va, vb) ||
                    (json_is_number(va) && json_is_number(vb) &&
                     (float)json_number_value(va) == (float)json_number_value(vb));
        if (!same && json_is_object(va) && json_is_object(vb))
            same = same_rope_scaling(va, vb) || same_kept_subkeys(va, vb);
        CHECKF(same, "%s: config %s differs", back, k);
    }
    CHECKF(common >= 3, "%s: only %zu config keys in common", back, common);
    json_decref(a);
    json_decref(b);
}

/* ------------------------------------------------ the two GGUFs, by content */

static bool same_value(const mf_value *a, const mf_value *b)
{
    if (a->type != b->type)
        return false;
    switch (a->type) {
    case MF_V_STR:
        return a->as.s.len == b->as.s.len && !memcmp(a->as.s.ptr, b->as.s.ptr, a->as.s.len);
    case MF_V_ARR:
        if (a->as.arr.elem != b->as.arr.elem || a->as.arr.n != b->as.arr.n)
            return false;
        for (size_t i = 0; i < a->as.arr.n; i++)
            if (!same_value(&a->as.arr.items[i], &b->as.arr.items[i]))
                return false;
        return true;
    case MF_V_F32: case MF_V_F64:
        return !memcmp(&a->as.f, &b->as.f, sizeof(double));
    case MF_V_BOOL:
        return a->as.b == b->as.b;
    default:
        return a->as.u == b->as.u;
    }
}

/* Same keys with the same values, same tensors (name, type, shape, bytes);
 * the order of tensors may differ (the source's came from shards or a
 * pickle). */
static void same_gguf_content(const char *g1, const char *g2, const char *name)
{
    mf_status st;
    mf_status_init(&st);
    mf_model *a = NULL, *b = NULL;
    if (mf_open(g1, NULL, &a, &st) || mf_open(g2, NULL, &b, &st)) {
        CHECKF(0, "%s: %s", name, st.msg);
        goto out;
    }
    CHECKF(mf_model_meta_count(a) == mf_model_meta_count(b), "%s: %zu keys, then %zu", name,
           mf_model_meta_count(a), mf_model_meta_count(b));
    for (size_t i = 0; i < mf_model_meta_count(a); i++) {
        const mf_kv *kv = mf_model_meta_at(a, i);
        const mf_value *v = mf_meta_get(b, kv->key);
        CHECKF(v && same_value(&kv->v, v), "%s: key %s lost or changed", name, kv->key);
    }
    CHECKF(mf_model_tensor_count(a) == mf_model_tensor_count(b), "%s: %zu tensors, then %zu", name,
           mf_model_tensor_count(a), mf_model_tensor_count(b));
    for (size_t i = 0; i < mf_model_tensor_count(a); i++) {
        const mf_tensor *ta = mf_model_tensor_at(a, i), *tb = mf_tensor_find(b, mf_tensor_name(ta));
        bool same = tb && mf_tensor_dtype(ta) == mf_tensor_dtype(tb) && mf_tensor_nbytes(ta) == mf_tensor_nbytes(tb) &&
                    mf_tensor_ndim(ta) == mf_tensor_ndim(tb) &&
                    !memcmp(mf_tensor_shape(ta), mf_tensor_shape(tb), sizeof(int64_t) * (size_t)mf_tensor_ndim(ta));
        const void *da = same ? mf_tensor_data(a, ta) : NULL, *db = same ? mf_tensor_data(b, tb) : NULL;
        CHECKF(same && da && db && !memcmp(da, db, (size_t)mf_tensor_nbytes(ta)), "%s: tensor %s lost or changed",
               name, mf_tensor_name(ta));
    }
out:
    mf_close(a);
    mf_close(b);
    mf_status_clear(&st);
}

/* ------------------------------------- config.json against transformers */

static bool type_ok(json_t *v, const char *spec)
{
    char buf[64];
    snprintf(buf, sizeof(buf), "%s", spec);
    for (char *save = NULL, *t = strtok_r(buf, "|", &save); t; t = strtok_r(NULL, "|", &save)) {
        if ((!strcmp(t, "int") && json_is_integer(v)) || (!strcmp(t, "float") && json_is_real(v)) ||
            (!strcmp(t, "bool") && json_is_boolean(v)) || (!strcmp(t, "str") && json_is_string(v)) ||
            (!strcmp(t, "list") && json_is_array(v)) || (!strcmp(t, "dict") && json_is_object(v)) ||
            (!strcmp(t, "null") && json_is_null(v)) || !strcmp(t, "any"))
            return true;
    }
    return false;
}

static bool in_array(json_t *arr, const char *s)
{
    size_t i;
    json_t *e;
    json_array_foreach(arr, i, e) if (json_is_string(e) && !strcmp(json_string_value(e), s)) return true;
    return false;
}

/* The type the class gives key k ("int", "float|null"...), or NULL: not its key. */
static const char *key_type(json_t *cls, const char *k)
{
    json_t *spec = json_object_get(json_object_get(cls, "keys"), k);
    if (!spec && json_is_true(json_object_get(cls, "rope_legacy")))
        spec = json_object_get(json_object_get(json_object_get(schema, "rope_legacy"), "keys"), k);
    if (spec)
        return json_string_value(json_array_get(spec, 0));
    if (in_array(json_object_get(cls, "converter_extras"), k))
        return "any";
    return json_string_value(json_object_get(json_object_get(schema, "extra_types"), k));
}

/* rope_scaling holds what transformers' validation of its rope_type needs. */
static void check_rope_scaling(json_t *rs, const char *name)
{
    if (!json_is_object(rs))
        return;
    const char *t = json_string_value(json_object_get(rs, "rope_type"));
    if (!t)
        t = json_string_value(json_object_get(rs, "type"));
    json_t *want = json_object_get(json_object_get(schema, "rope_scaling_keys"), t ? t : "?");
    CHECKF(want != NULL, "%s: rope_scaling of type %s", name, t ? t : "(none)");
    size_t i;
    json_t *k;
    json_array_foreach(json_object_get(want, "required"), i, k)
        CHECKF(json_object_get(rs, json_string_value(k)) != NULL, "%s: rope_scaling (%s) has no %s", name, t,
               json_string_value(k));
}

/* The value at a dotted path of config.json ("attn_config.kv_n_heads"), as
 * the forward converter reads nested keys; NULL: none. */
static json_t *config_at(json_t *cfg, const char *path)
{
    char part[200];
    json_t *v = cfg;
    for (const char *p = path; v && *p;) {
        size_t n = strcspn(p, ".");
        snprintf(part, sizeof(part), "%.*s", (int)n, p);
        v = json_object_get(v, part);
        p += n + (p[n] == '.');
    }
    return v;
}

static const conv_arch *fwd_row(const char *cls)
{
    for (size_t i = 0; cls && i < conv_n_archs; i++)
        for (const char *const *c = conv_archs[i].classes; *c; c++)
            if (!strcmp(*c, cls))
                return &conv_archs[i];
    return NULL;
}

static bool arch_lists(const conv_arch *a, const char *key)
{
    for (const conv_hp *h = a->hparams; h->key; h++)
        if (strcmp(h->key, "@base") && !strcmp(h->key, key))
            return true;
    return false;
}

/* Every config key the forward converter reads for a GGUF key the file
 * has: the first of its alternatives present in config.json must be a key
 * of the class (the name transformers uses), not an alias only llama.cpp
 * knows. */
static void check_forward_keys(const conv_arch *a, const conv_hp *list, bool base, json_t *cfg, json_t *cls,
                               mf_model *g, const char *name)
{
    for (const conv_hp *h = list; h->key; h++) {
        if (!strcmp(h->key, "@base")) { /* the 2026-02 converter's for its own classes */
            check_forward_keys(a, a->flags & AF_ONLY_2026 ? conv_base_hparams_2026 : conv_base_hparams, true, cfg, cls,
                               g, name);
            continue;
        }
        if (!h->src || h->src[0] == '=' || h->calc || h->block || (base && arch_lists(a, h->key)))
            continue;
        char key[200], alts[200];
        if (!strncmp(h->key, "general.", 8) || !strncmp(h->key, "tokenizer.", 10))
            snprintf(key, sizeof(key), "%s", h->key);
        else
            snprintf(key, sizeof(key), "%s.%s", a->name, h->key);
        if (!mf_meta_get(g, key))
            continue;
        if (strchr(h->src, ':'))
            continue; /* "rope:k": a key inside rope_scaling / rope_parameters (check_rope_scaling) */
        snprintf(alts, sizeof(alts), "%s", h->src + (strncmp(h->src, "4*", 2) ? 0 : 2));
        if ((a->flags & AF_CTX_MODEL_MAX) && !strcmp(h->key, "context_length"))
            snprintf(alts, sizeof(alts), "model_max_length"); /* Command-R's converter reads this */
        if ((a->flags & AF_LLAMA4) && !strcmp(alts, "intermediate_size_moe"))
            snprintf(alts, sizeof(alts), "intermediate_size"); /* renamed so by hf2gguf's adjust_config */
        const char *read = NULL;
        for (char *save = NULL, *t = strtok_r(alts, "|", &save); t && *t != '=' && !read; t = strtok_r(NULL, "|", &save))
            if (config_at(cfg, t))
                read = t;
        /* "k|=V": none of them present gives the constant V, fine where the GGUF has V */
        const char *dflt = strstr(h->src, "|=");
        const mf_value *gv = mf_meta_get(g, key);
        bool gives_default = !read && dflt && gv &&
                             ((gv->type == MF_V_BOOL && gv->as.b == (atoi(dflt + 2) != 0)) ||
                              (gv->type != MF_V_BOOL && gv->type != MF_V_STR && gv->type != MF_V_ARR &&
                               gv->as.i == atoll(dflt + 2)));
        CHECKF(read != NULL || gives_default, "%s: config.json has none of %s (GGUF %s)", name, h->src, key);
        char top[200]; /* a nested key ("attn_config.kv_n_heads", DBRX's): its object is the class's key */
        snprintf(top, sizeof(top), "%.*s", read ? (int)strcspn(read, ".") : 0, read ? read : "");
        if (read)
            CHECKF(key_type(cls, top) != NULL, "%s: the converter reads %s for %s; %s does not take it", name, read,
                   key, json_string_value(json_object_get(cls, "class")));
    }
}

/* A key the original config.json sets away from its class's default, of
 * a value the GGUF carries (the key beside it), must come back: else
 * from_pretrained builds another model than the GGUF describes. */
static void check_defaults(json_t *orig, json_t *cfg, json_t *cls, mf_model *g, const char *arch, const char *name)
{
    static const struct { const char *cfg, *gguf; } carried[] = {
        {"intermediate_size", "feed_forward_length"}, {"num_key_value_heads", "attention.head_count_kv"},
        {"max_position_embeddings", "context_length"}, {"n_positions", "context_length"},
        {"expand", "ssm.inner_size"}, {"sliding_window", "attention.sliding_window"},
        {"head_dim", "attention.key_length"}, {"num_hidden_layers", "block_count"},
        {"hidden_size", "embedding_length"}, {"num_attention_heads", "attention.head_count"},
    };
    for (size_t i = 0; i < sizeof(carried) / sizeof(carried[0]); i++) {
        char key[160];
        snprintf(key, sizeof(key), "%s.%s", arch, carried[i].gguf);
        json_t *spec = json_object_get(json_object_get(cls, "keys"), carried[i].cfg);
        json_t *ov = json_object_get(orig, carried[i].cfg), *def = json_array_get(spec, 1);
        if (!spec || !json_is_integer(ov) || json_object_get(cfg, carried[i].cfg) || !mf_meta_get(g, key))
            continue;
        bool same = json_is_number(def) && json_number_value(def) == json_number_value(ov);
        CHECKF(same, "%s: config.json drops %s (%lld in the original, %s default %g)", name, carried[i].cfg,
               (long long)json_integer_value(ov), json_string_value(json_object_get(cls, "class")),
               json_is_number(def) ? json_number_value(def) : -1.0);
    }
}

/* The keys of one level of config.json against its class: only keys it
 * takes, of its types; rope_scaling / rope_parameters with what
 * transformers' validation of their rope_type requires. */
static void check_level(json_t *obj, json_t *cls, const char *name)
{
    const char *k, *cname = json_string_value(json_object_get(cls, "class"));
    json_t *v;
    json_object_foreach(obj, k, v) {
        const char *t = key_type(cls, k);
        CHECKF(t != NULL, "%s: config.json key %s is not a key of %s", name, k, cname);
        CHECKF(!t || type_ok(v, t), "%s: config.json %s is not %s", name, k, t);
    }
    check_rope_scaling(json_object_get(obj, "rope_scaling"), name);
    check_rope_scaling(json_object_get(obj, "rope_parameters"), name);
    json_t *rs = json_object_get(obj, "rope_scaling");
    size_t ri;
    json_t *rk; /* what the class's own validation adds (PhimoeConfig's mscales) */
    json_array_foreach(json_object_get(cls, "rope_scaling_required"), ri, rk)
        CHECKF(!json_is_object(rs) || json_object_get(rs, json_string_value(rk)), "%s: rope_scaling has no %s (%s requires it)",
               name, json_string_value(rk), cname);
}

/* Values the class ends with that two keys must agree on: layer_types,
 * which Qwen3_5TextConfig / Qwen3NextConfig read before the
 * full_attention_interval the forward converter reads; the rotary fraction
 * kept both as the kwarg and inside rope_parameters. */
static void check_level_values(json_t *obj, const char *name)
{
    json_t *lt = json_object_get(obj, "layer_types"), *fai = json_object_get(obj, "full_attention_interval");
    json_int_t n = json_integer_value(json_object_get(obj, "num_hidden_layers"));
    if (json_is_array(lt) && json_is_integer(json_object_get(obj, "num_hidden_layers")))
        CHECKF((json_int_t)json_array_size(lt) == n, "%s: layer_types has %zu entries for %lld layers", name,
               json_array_size(lt), (long long)n);
    if (json_is_array(lt) && json_is_integer(fai) && json_integer_value(fai) > 0) {
        json_int_t every = json_integer_value(fai);
        for (size_t i = 0; i < json_array_size(lt); i++) {
            const char *want = ((json_int_t)i + 1) % every ? "linear_attention" : "full_attention";
            const char *got = json_string_value(json_array_get(lt, i));
            CHECKF(got && !strcmp(got, want), "%s: layer_types[%zu] is %s, full_attention_interval %lld says %s", name,
                   i, got ? got : "(not a string)", (long long)every, want);
        }
    }
    json_t *prf = json_object_get(obj, "partial_rotary_factor"),
           *rprf = json_object_get(json_object_get(obj, "rope_parameters"), "partial_rotary_factor");
    if (prf && rprf)
        CHECKF(json_number_value(prf) == json_number_value(rprf),
               "%s: partial_rotary_factor %g, rope_parameters' %g", name, json_number_value(prf), json_number_value(rprf));
}

/* The rotary base from_pretrained ends with (rope_parameters' rope_theta,
 * else rope_theta, else the class's default) is the GGUF's, where the GGUF
 * holds one and the converter writes it as it is (not HunYuan's, folded
 * with its NTK alpha; not a sliding/full split). */
static void check_rope_theta(json_t *flat, json_t *cls, mf_model *g, const char *arch, const char *name)
{
    char key[160];
    snprintf(key, sizeof(key), "%s.rope.freq_base", arch);
    const mf_value *fb = mf_meta_get(g, key);
    json_t *rp = json_object_get(flat, "rope_parameters"), *rs = json_object_get(flat, "rope_scaling");
    if (!fb || fb->type != MF_V_F32 || json_object_get(rs, "alpha") || json_object_get(rp, "full_attention"))
        return;
    json_t *theta = json_object_get(rp, "rope_theta");
    if (!theta)
        theta = json_object_get(flat, "rope_theta");
    json_t *spec = json_object_get(json_object_get(cls, "keys"), "rope_theta");
    if (!theta && !spec && json_is_true(json_object_get(cls, "rope_legacy")))
        spec = json_object_get(json_object_get(json_object_get(schema, "rope_legacy"), "keys"), "rope_theta");
    if (!theta && spec)
        theta = json_array_get(spec, 1);
    if (!json_is_number(theta))
        return; /* a class without a rotary base (ALiBi, learned positions) */
    CHECKF((float)json_number_value(theta) == (float)fb->as.f, "%s: from_pretrained would take rope theta %g, the GGUF says %g",
           name, json_number_value(theta), fb->as.f);
}

/* Keys a class takes and then sets itself ("derived" in the table): the
 * value written must be the one it derives, else transformers builds
 * another model than the GGUF's. rwkv_ffn: Rwkv6Config sets
 * intermediate_size None; Rwkv6FeedForward takes int(hidden_size * 3.5) // 32 * 32. */
static void check_derived(json_t *flat, json_t *cls, const char *name)
{
    const char *k;
    json_t *how;
    json_object_foreach(json_object_get(cls, "derived"), k, how) {
        json_t *v = json_object_get(flat, k);
        CHECKF(!strcmp(json_string_value(how), "rwkv_ffn"), "%s: unknown derivation %s", name, json_string_value(how));
        json_int_t h = json_integer_value(json_object_get(flat, "hidden_size")), want = (json_int_t)((double)h * 3.5) / 32 * 32;
        CHECKF(!v || json_integer_value(v) == want, "%s: %s %lld, but %s derives %lld", name, k,
               (long long)json_integer_value(v), json_string_value(json_object_get(cls, "class")), (long long)want);
    }
}

/* Why a key is not compared by check_effective ("not_carried": the
 * table's, then the class's), NULL: compared. */
static const char *not_carried(json_t *cls, const char *k)
{
    json_t *why = json_object_get(json_object_get(cls, "not_carried"), k);
    if (!why)
        why = json_object_get(json_object_get(schema, "not_carried"), k);
    if (!why && strstr(k, "_token_id"))
        why = json_object_get(json_object_get(schema, "not_carried"), "*_token_id");
    return json_string_value(why);
}

/* v, else the class's default for k (NULL: the class has none) */
static json_t *effective(json_t *flat, json_t *cls, const char *k)
{
    json_t *v = json_object_get(flat, k);
    return v ? v : json_array_get(json_object_get(json_object_get(cls, "keys"), k), 1);
}

static bool same_effective(json_t *a, json_t *b)
{
    if (json_is_number(a) && json_is_number(b))
        return (float)json_number_value(a) == (float)json_number_value(b);
    if ((json_is_null(a) || !a) && json_is_array(b) && !json_array_size(b))
        return true; /* a list key's None is the empty list (mlp_only_layers) */
    if ((json_is_null(b) || !b) && json_is_array(a) && !json_array_size(a))
        return true;
    if (json_is_array(a) && json_is_array(b) && json_array_size(a) == json_array_size(b)) {
        for (size_t i = 0; i < json_array_size(a); i++)
            if (!same_effective(json_array_get(a, i), json_array_get(b, i)))
                return false;
        return true;
    }
    return json_equal(a, b);
}

/* Every key of the class ends with the same value in from_pretrained for
 * the original config.json and the one written back (the key, else the
 * class default): else transformers builds another model than the
 * original, which the GGUF describes. Keys the GGUF does not carry are
 * listed with why (hf_config_keys.json "not_carried"); dict-valued keys
 * (rope_scaling, DBRX/MPT sub-configs) are compared by compare_config. */
static void check_effective(json_t *orig_flat, json_t *flat, json_t *cls, const char *name)
{
    const char *k;
    json_t *spec;
    json_object_foreach(json_object_get(cls, "keys"), k, spec) {
        json_t *a = effective(orig_flat, cls, k), *b = effective(flat, cls, k);
        if (json_is_object(a) || json_is_object(b) || not_carried(cls, k))
            continue;
        n_effective++;
        char *as = a ? json_dumps(a, JSON_ENCODE_ANY | JSON_COMPACT) : NULL,
             *bs = b ? json_dumps(b, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
        CHECKF(same_effective(a, b), "%s: from_pretrained ends with %s = %.60s from the original config.json, %.60s from "
               "the one written back (%s)", name, k, as ? as : "(none)", bs ? bs : "(none)",
               json_string_value(json_object_get(cls, "class")));
        free(as);
        free(bs);
    }
}

/* A Granite 4.0-H config.json without layer_types: GraniteMoeHybridConfig
 * would build every layer Mamba, llama.cpp's converter (get_attn_layers)
 * reads attn_layer_indices, else attn_layer_period / _offset. The layers
 * the GGUF (and the directory written back) say are those, so the original
 * is compared as meaning them. */
static void granite_layers_as_converted(json_t *orig_flat)
{
    json_t *lt = json_object_get(orig_flat, "layer_types"), *idx = json_object_get(orig_flat, "attn_layer_indices");
    json_int_t n = json_integer_value(json_object_get(orig_flat, "num_hidden_layers")),
               period = json_integer_value(json_object_get(orig_flat, "attn_layer_period")),
               offset = json_integer_value(json_object_get(orig_flat, "attn_layer_offset"));
    if ((json_is_array(lt) && json_array_size(lt)) || n <= 0 || n > 4096 || (!json_array_size(idx) && period <= 0))
        return;
    json_t *kinds = json_array();
    for (json_int_t i = 0; i < n; i++) {
        bool attn = false;
        size_t k;
        json_t *e;
        json_array_foreach(idx, k, e) attn |= json_integer_value(e) == i;
        if (!json_array_size(idx))
            attn = i % period == offset;
        json_array_append_new(kinds, json_string(attn ? "attention" : "mamba"));
    }
    json_object_set_new(orig_flat, "layer_types", kinds);
}

/* config.json as the forward converter reads it: text_config lifted */
static json_t *lifted(json_t *cfg)
{
    json_t *flat = json_deep_copy(cfg), *tc = json_object_get(cfg, "text_config");
    if (flat && json_is_object(tc))
        json_object_update(flat, tc);
    return flat;
}

static void check_config_keys(const char *orig_dir, const char *out, const char *g1, const char *name)
{
    char p[1400];
    snprintf(p, sizeof(p), "%s/config.json", out);
    json_t *cfg = json_load_file(p, 0, NULL);
    snprintf(p, sizeof(p), "%s/config.json", orig_dir);
    json_t *orig = json_load_file(p, 0, NULL), *flat = NULL, *orig_flat = NULL;
    const char *mt = json_string_value(json_object_get(cfg, "model_type"));
    json_t *classes = json_object_get(schema, "classes"), *cls = json_object_get(classes, mt ? mt : "?");
    CHECKF(mt != NULL, "%s: config.json has no model_type", name);
    if (!cls) { /* a family added without its class's keys: said and counted */
        TL_SKIP("%s: model_type %s has no entry in tests/data/hf_arch/hf_config_keys.json: its config.json is "
                "not checked against transformers (add the class's keys)", name, mt ? mt : "(none)");
        goto out;
    }
    if (json_is_null(json_object_get(cls, "class"))) {
        n_configs_remote++;
        goto out;
    }
    n_configs_checked++;
    check_level(cfg, cls, name);
    check_level_values(cfg, name);
    /* a composite class (Qwen3_5Config) builds the language model from
     * text_config alone, a class of its own model_type */
    const char *text_mt = json_string_value(json_object_get(cls, "text_config"));
    json_t *text_cls = text_mt ? json_object_get(classes, text_mt) : NULL, *tc = json_object_get(cfg, "text_config");
    CHECKF(!text_mt || text_cls, "%s: the table has no %s (text_config of %s)", name, text_mt, mt);
    if (text_cls) {
        const char *tmt = json_string_value(json_object_get(tc, "model_type"));
        CHECKF(json_is_object(tc), "%s: %s reads the language model from text_config; config.json has none", name,
               json_string_value(json_object_get(cls, "class")));
        CHECKF(tmt && !strcmp(tmt, text_mt), "%s: text_config model_type %s, not %s", name, tmt ? tmt : "(none)", text_mt);
        check_level(tc, text_cls, name);
        check_level_values(tc, name);
    }
    json_t *reader = text_cls ? text_cls : cls; /* the class whose keys the text model's values are */
    flat = lifted(cfg);
    orig_flat = orig ? lifted(orig) : NULL;
    if (orig_flat && !strcmp(mt, "granitemoehybrid"))
        granite_layers_as_converted(orig_flat);
    check_derived(flat, reader, name);
    const conv_arch *a = fwd_row(json_string_value(json_array_get(json_object_get(cfg, "architectures"), 0)));
    CHECKF(a != NULL, "%s: the converter takes no class of config.json's architectures", name);
    mf_model *g = NULL;
    mf_status st;
    mf_status_init(&st);
    if (a && flat && mf_open(g1, NULL, &g, &st) == 0) {
        check_forward_keys(a, a->hparams, false, flat, reader, g, name);
        check_rope_theta(flat, reader, g, a->name, name);
        if (orig_flat)
            check_defaults(orig_flat, flat, reader, g, a->name, name);
        if (orig_flat)
            check_effective(orig_flat, flat, reader, name);
    }
    mf_close(g);
    mf_status_clear(&st);
out:
    json_decref(cfg);
    json_decref(orig);
    json_decref(flat);
    json_decref(orig_flat);
}

static void note_covered(const char *arch)
{
    for (size_t i = 0; i < n_covered; i++)
        if (!strcmp(covered[i], arch))
            return;
    if (n_covered < sizeof(covered) / sizeof(covered[0]))
        snprintf(covered[n_covered++], sizeof(covered[0]), "%s", arch);
}

/* mf_open_gguf_as_hf: the tensors the directory written from g1 holds -
 * the same names in the same order, dtypes, shapes and bytes - without
 * writing it. */
static void same_as_view(const char *g1, const char *out, const char *name)
{
    mf_status st;
    mf_status_init(&st);
    mf_model *v = NULL, *d = NULL;
    mf_convert_hf_opts o;
    mf_convert_hf_opts_init(&o);
    CHECKF(mf_open_gguf_as_hf(g1, &o, &v, &st) == 0, "%s: view: %s", name, st.msg);
    CHECKF(mf_open(out, NULL, &d, &st) == 0, "%s: %s", out, st.msg);
    size_t same = 0;
    for (size_t i = 0; v && d && i < v->n_tensors; i++) {
        const mf_tensor *a = &v->tensors[i], *b = mf_tensor_find(d, a->name);
        if (!b || a->dtype != b->dtype || a->ndim != b->ndim || a->nbytes != b->nbytes ||
            memcmp(a->shape, b->shape, sizeof(a->shape[0]) * (size_t)a->ndim)) {
            CHECKF(0, "%s: view tensor %s is not the written one's", name, a->name);
            continue;
        }
        mf_buf_sink x = {.p = malloc(a->nbytes ? a->nbytes : 1), .cap = a->nbytes};
        mf_buf_sink y = {.p = malloc(b->nbytes ? b->nbytes : 1), .cap = b->nbytes};
        bool ok = x.p && y.p && mf_tensor_stream(v, a, mf_buf_sink_fn, &x, &st) == 0 &&
                  mf_tensor_stream(d, b, mf_buf_sink_fn, &y, &st) == 0 && x.n == a->nbytes &&
                  y.n == b->nbytes && memcmp(x.p, y.p, a->nbytes) == 0;
        CHECKF(ok, "%s: view tensor %s: other bytes (%s)", name, a->name, st.msg);
        same += ok;
        free(x.p);
        free(y.p);
        mf_status_clear(&st);
    }
    CHECKF(v && d && same == v->n_tensors && v->n_tensors == d->n_tensors, "%s: view %zu tensors, %zu same, "
           "directory %zu", name, v ? v->n_tensors : 0, same, d ? d->n_tensors : 0);
    mf_close(v);
    mf_close(d);
    mf_status_clear(&st);
}

static void round_trip(const char *dir, const char *name)
{
    char g1[600], g2[600], out[600];
    snprintf(g1, sizeof(g1), "%s/%s-1.gguf", tmpdir, name);
    snprintf(g2, sizeof(g2), "%s/%s-2.gguf", tmpdir, name);
    snprintf(out, sizeof(out), "%s/out/%s", tmpdir, name);
    const char *type = source_type(dir);
    mf_status st;
    mf_status_init(&st);
    if (mf_convert_to_gguf(dir, g1, &(mf_convert_gguf_opts){.struct_size = sizeof(mf_convert_gguf_opts), .type = type}, &st)) {
        const char *why = strstr(st.msg, "; it converts"); /* the message lists every class */
        printf("  %s: forward conversion refused (%.*s): not a round-trip case\n", name,
               why ? (int)(why - st.msg) : (int)strlen(st.msg), st.msg);
        n_refused++;
        mf_status_clear(&st);
        return;
    }
    mf_hf_out_opts o = {.dtype = MF_DTYPE_INVALID};
    int rc = mf_convert_gguf_to_hf(g1, out, &o, &st);
    CHECKF(rc == 0, "%s: %s", name, st.msg);
    if (rc == 0)
        same_as_view(g1, out, name);
    if (rc == 0)
        rc = mf_convert_to_gguf(out, g2, &(mf_convert_gguf_opts){.struct_size = sizeof(mf_convert_gguf_opts), .type = type}, &st);
    CHECKF(rc == 0, "%s: back to GGUF: %s", name, st.msg);
    mf_status_clear(&st);
    if (rc)
        return;
    /* a .bin source lists tensors in the pickle's order, shards in theirs;
     * the directory written back has one safetensors file in name order */
    char idx[700];
    snprintf(idx, sizeof(idx), "%s/model.safetensors.index.json", dir);
    bool any_order = strstr(name, "-bin") != NULL || access(idx, F_OK) == 0;
    same_gguf_content(g1, g2, name);
    CHECKF(any_order || same_file(g1, g2), "%s: HF -> GGUF -> HF -> GGUF is not byte-identical", name);
    mf_model *m;
    const char *arch = "";
    char archbuf[64] = "";
    if (mf_open(g1, NULL, &m, &st) == 0) {
        const mf_value *v = mf_meta_get(m, "general.architecture");
        snprintf(archbuf, sizeof(archbuf), "%s", v ? v->as.s.ptr : "");
        arch = archbuf;
        mf_close(m);
    }
    mf_status_clear(&st);
    note_covered(arch);
    compare_tensors(dir, out, arch);
    compare_config(dir, out);
    check_config_keys(dir, out, g1, name);
}

/* prefix: the round trips' file names (two folders hold a deepseek-v3-tiny) */
static void run_dirs(const char *base, const char *prefix, int *count)
{
    DIR *d = opendir(base);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        char p[600], cfg[700];
        snprintf(p, sizeof(p), "%s/%s", base, e->d_name);
        snprintf(cfg, sizeof(cfg), "%s/config.json", p);
        if (e->d_name[0] == '.' || access(cfg, F_OK) != 0)
            continue;
        char name[300];
        snprintf(name, sizeof(name), "%s%s", prefix, e->d_name);
        round_trip(p, name);
        (*count)++;
    }
    closedir(d);
}

/* The held-out-style directories as llama.cpp's own converter converts
 * them (tests/data/hf_arch/roundtrip.json): mfmt's GGUF, where each round
 * trip starts, is that file. */
static void same_as_llama_cpp(const char *dir)
{
    json_t *e = json_load_file("tests/data/hf_arch/roundtrip.json", 0, NULL);
    CHECKF(e != NULL, "tests/data/hf_arch/roundtrip.json unreadable");
    const char *name;
    json_t *v;
    int same = 0, total = 0;
    json_object_foreach(json_object_get(e, "outputs"), name, v) {
        char src[400], out[500], h[129] = "";
        snprintf(src, sizeof(src), "%s/%s", dir, name);
        snprintf(out, sizeof(out), "%s/%s-ref.gguf", tmpdir, name);
        mf_status st;
        mf_status_init(&st);
        int rc = mf_convert_to_gguf(src, out, &(mf_convert_gguf_opts){.struct_size = sizeof(mf_convert_gguf_opts), .type = "f16"}, &st);
        CHECKF(rc == 0, "%s: %s", name, st.msg);
        if (rc == 0)
            mf_hash_file(out, MF_SHA256, h, &st);
        mf_status_clear(&st);
        bool ok = !strcmp(h, json_string_value(json_object_get(v, "sha256")));
        CHECKF(ok, "%s: mfmt's GGUF differs from llama.cpp's converter output", name);
        same += ok;
        total++;
        unlink(out);
    }
    printf("gguf -> hf: %d of %d held-out-style directories convert byte-identically to llama.cpp's converter\n", same,
           total);
    CHECKF(total >= 8, "roundtrip.json lists %d outputs", total);
    json_decref(e);
}

/* rope_freqs values no llama3 scaling gives: refused with the tensor
 * named (config.json could not say them), no directory left. */
static void unsolvable_rope_freqs(const char *dir)
{
    char src[400], g[400], out[400];
    snprintf(src, sizeof(src), "%s/llama31-rt", dir);
    snprintf(g, sizeof(g), "%s/bad-rope.gguf", tmpdir);
    snprintf(out, sizeof(out), "%s/bad-rope-out", tmpdir);
    mf_status st;
    mf_status_init(&st);
    CHECK(mf_convert_to_gguf(src, g, &(mf_convert_gguf_opts){.struct_size = sizeof(mf_convert_gguf_opts), .type = "f16"}, &st) == 0);
    mf_model *m = NULL;
    uint64_t off = 0;
    if (mf_open(g, NULL, &m, &st) == 0) {
        const mf_tensor *t = mf_tensor_find(m, "rope_freqs.weight");
        CHECK(t && mf_tensor_nelems(t) >= 4);
        off = t ? mf_tensor_offset(t) : 0;
    }
    mf_close(m);
    FILE *f = off ? fopen(g, "r+b") : NULL;
    const float junk[4] = {3.0f, 1.0f, 7.0f, 2.0f}; /* not monotonic: no factors give it */
    CHECK(f && fseek(f, (long)off, SEEK_SET) == 0 && fwrite(junk, 4, 4, f) == 4);
    if (f)
        fclose(f);
    int rc = mf_convert_gguf_to_hf(g, out, NULL, &st);
    CHECKF(rc != 0 && strstr(st.msg, "rope_freqs.weight") && strstr(st.msg, "llama3"), "rc %d: %s", rc, st.msg);
    CHECK(access(out, F_OK) != 0);
    mf_status_clear(&st);
    unlink(g);
}

/* The directories a generator of tests/data/hf_arch writes (numpy needed:
 * else a counted skip); returns how many were round-tripped. */
/* a python3 with numpy (the generators need it), or NULL */
static const char *python_numpy(void)
{
    static const char *const cands[] = {"python3", "/usr/bin/python3"};
    for (size_t i = 0; i < 2; i++) {
        char cmd[256];
        snprintf(cmd, sizeof(cmd), "%s -c 'import numpy' >/dev/null 2>&1", cands[i]);
        if (system(cmd) == 0)
            return cands[i];
    }
    return NULL;
}

static int run_generated(const char *shared, const char *script, const char *src)
{
    const char *py = python_numpy();
    if (!py) {
        TL_SKIP("gguf_to_hf: the %s directories (no python3 with numpy)", script);
        return 0;
    }
    char out[300], cmd[2048];
    const char *slash = strrchr(script, '/'); /* a path of its own, else tests/data/hf_arch's */
    snprintf(out, sizeof(out), "%s/gen-%s", tmpdir, slash ? slash + 1 : script);
    snprintf(cmd, sizeof(cmd), "%s %s%s %s/%s %s >/dev/null", py, slash ? "" : "tests/data/hf_arch/", script, shared,
             src, out);
    CHECKF(system(cmd) == 0, "%s failed", cmd);
    int n = 0;
    run_dirs(out, "", &n);
    CHECKF(n > 0, "%s wrote no directory", script);
    if (!strcmp(script, "gen_roundtrip.py")) {
        same_as_llama_cpp(out);
        unsolvable_rope_freqs(out);
    }
    return n;
}

/* The 2026 converter's own GGUFs (convert-ref-new, NAME-f16.gguf and NAME-bf16.gguf:
 * its layout, e.g. DeepSeek-V3's attn_k_b / attn_v_b and MLA key lengths)
 * -> HF -> GGUF with --layout 2026-02: the reference bytes again. Known:
 * DeepSeek-V3's tokenizer.ggml.add_sep_token comes back one key later
 * (gguf-py 0.18 places it by the tokenizer.json post-processor, which a
 * SentencePiece directory written back has not): same keys and tensors
 * required there. */
static void reference_ggufs_2026(const char *shared)
{
    char base[512];
    snprintf(base, sizeof(base), "%s/convert-ref-new", shared);
    DIR *d = opendir(base);
    int same = 0, content = 0, total = 0;
    char parent[200];
    for (int k = 0; k < 2; k++) { /* one per type: an f16 and a bf16 file share a name */
        snprintf(parent, sizeof(parent), "%s/r26-%s", tmpdir, k ? "bf16" : "f16");
        mkdir(parent, 0755);
    }
    for (struct dirent *e; d && (e = readdir(d));) {
        const char *n = e->d_name, *dash = strrchr(n, '-');
        size_t len = strlen(n);
        if (!dash || len < 6 || strcmp(n + len - 5, ".gguf") || (strcmp(dash, "-f16.gguf") && strcmp(dash, "-bf16.gguf")))
            continue;
        char in[1024], out[600], back[700], type[8];
        snprintf(in, sizeof(in), "%s/%s", base, n);
        snprintf(type, sizeof(type), "%.*s", (int)(len - 5 - (size_t)(dash + 1 - n)), dash + 1);
        snprintf(out, sizeof(out), "%s/r26-%s/%.*s", tmpdir, type, (int)(dash - n), n); /* its name: general.name */
        snprintf(back, sizeof(back), "%s/back-%s", tmpdir, n);
        mf_status st;
        mf_status_init(&st);
        int rc = mf_convert_gguf_to_hf(in, out, NULL, &st);
        CHECKF(rc == 0, "%s -> HF: %s", n, st.msg);
        if (rc == 0)
            rc = mf_convert_to_gguf(out, back, &(mf_convert_gguf_opts){.struct_size = sizeof(mf_convert_gguf_opts), .type = type, .layout = MF_CONVERT_LAYOUT_2026_02}, &st);
        CHECKF(rc == 0, "%s -> HF -> GGUF: %s", n, st.msg);
        mf_status_clear(&st);
        total++;
        if (rc)
            continue;
        bool bytes = same_file(in, back), known = !strcmp(n, "deepseek-v3-tiny-f16.gguf");
        same += bytes;
        CHECKF(bytes || known, "%s -> HF -> GGUF (--layout 2026-02) is not the reference's bytes", n);
        if (!bytes && known) {
            same_gguf_content(in, back, n);
            content++;
        }
        unlink(back);
    }
    if (d)
        closedir(d);
    printf("gguf -> hf: %d of %d 2026 reference GGUFs back to their bytes, %d to the same keys and tensors "
           "(add_sep_token's place)\n", same, total, content);
    CHECKF(total >= 19, "only %d 2026 reference GGUFs", total);
}

/* A quantized GGUF comes back as F16 values equal to its dequantization. */
static void quantized_source(const char *shared)
{
    char in[512], out[300];
    snprintf(in, sizeof(in), "%s/convert-ref/llama-tiny-q8_0.gguf", shared);
    snprintf(out, sizeof(out), "%s/q8", tmpdir);
    mf_status st;
    mf_status_init(&st);
    CHECKF(mf_convert_gguf_to_hf(in, out, NULL, &st) == 0, "%s", st.msg);
    mf_model *g = NULL, *h = NULL;
    if (mf_open(in, NULL, &g, &st) == 0 && mf_open(out, NULL, &h, &st) == 0) {
        const mf_tensor *tg = mf_tensor_find(g, "blk.0.attn_v.weight"),
                        *th = mf_tensor_find(h, "model.layers.0.self_attn.v_proj.weight");
        CHECK(tg && th && tg->dtype == MF_Q8_0 && th->dtype == MF_F16);
        float *a = NULL, *b = NULL;
        if (tg && th && !mf_tensor_read_f32(g, tg, &a, &st) && !mf_tensor_read_f32(h, th, &b, &st)) {
            uint64_t bad = 0;
            for (uint64_t i = 0; i < mf_tensor_nelems(tg); i++)
                bad += mf_f16_to_f32(mf_f32_to_f16(a[i])) != b[i];
            CHECK(bad == 0);
        }
        free(a);
        free(b);
    }
    mf_close(g);
    mf_close(h);
    mf_status_clear(&st);
}

static void refusals(const char *shared)
{
    char in[512], out[300], marker[400];
    snprintf(in, sizeof(in), "%s/convert-ref/llama-tiny-f16.gguf", shared);
    snprintf(out, sizeof(out), "%s/full", tmpdir);
    mkdir(out, 0755);
    snprintf(marker, sizeof(marker), "%s/keep.txt", out);
    FILE *f = fopen(marker, "w");
    if (f)
        fclose(f);
    mf_status st;
    mf_status_init(&st);
    CHECK(mf_convert_gguf_to_hf(in, out, NULL, &st) != 0 && strstr(st.msg, "not an empty directory"));
    CHECK(access(marker, F_OK) == 0);
    mf_status_clear(&st);
    /* an architecture without a table: named, with the known ones */
    char foo[300];
    snprintf(foo, sizeof(foo), "%s/foo.gguf", tmpdir);
    mf_edit_op op = {MF_EDIT_SET, "general.architecture", "foo"};
    mf_edit_opts eo = {.struct_size = sizeof(eo), .flags = MF_EDIT_FORCE};
    CHECK(mf_edit(in, foo, &op, 1, &eo, NULL, &st) == 0);
    snprintf(out, sizeof(out), "%s/foo-out", tmpdir);
    CHECK(mf_convert_gguf_to_hf(foo, out, NULL, &st) != 0 && strstr(st.msg, "\"foo\"") &&
          strstr(st.msg, "gemma2"));
    CHECK(access(out, F_OK) != 0);
    mf_status_clear(&st);
    /* not a GGUF */
    snprintf(in, sizeof(in), "%s/corpus/safetensors/all_dtypes.safetensors", shared);
    CHECK(mf_convert_gguf_to_hf(in, out, NULL, &st) != 0 && st.code == MF_ERR_USAGE);
    mf_status_clear(&st);
    /* no temporary directory left beside any output */
    DIR *d = opendir(tmpdir);
    for (struct dirent *e; d && (e = readdir(d));)
        CHECKF(!strstr(e->d_name, ".tmp."), "left behind: %s", e->d_name);
    if (d)
        closedir(d);
}

/* gen_gap_variants.py's directories (gap_variants.json): mfmt's GGUF, the
 * 2026 converter's bytes (checked first), -> HF -> GGUF in that layout.
 * Byte-identical (ERNIE 4.5's Paddle layout written back fused, as its
 * tensor order tells; FP8 written back as the floats; Q8_0 as F32), except DeepSeek-V3's
 * add_sep_token one key later (as reference_ggufs_2026 says). */
static void gap_round_trips(const char *shared)
{
    const char *py = python_numpy();
    json_t *e = json_load_file("tests/data/hf_new/gap_variants.json", 0, NULL);
    CHECKF(e != NULL, "tests/data/hf_new/gap_variants.json unreadable");
    if (!py || !e) {
        TL_SKIP("gguf_to_hf: gen_gap_variants.py's directories (no python3 with numpy)");
        json_decref(e);
        return;
    }
    char dirs[400], cmd[2048];
    snprintf(dirs, sizeof(dirs), "%s/gaps", tmpdir);
    snprintf(cmd, sizeof(cmd), "%s tests/data/hf_new/gen_gap_variants.py %s/convert-ref-new/dirs %s >/dev/null", py,
             shared, dirs);
    CHECKF(system(cmd) == 0, "%s failed", cmd);
    const char *key;
    json_t *v;
    int same = 0, content = 0;
    json_object_foreach(json_object_get(e, "outputs"), key, v) {
        const char *d = json_string_value(json_object_get(v, "dir")), *t = json_string_value(json_object_get(v, "outtype"));
        char src[600], g1[600], g2[600], out[600], h[129] = "";
        snprintf(src, sizeof(src), "%s/%s", dirs, d ? d : "?");
        snprintf(g1, sizeof(g1), "%s/gap-%s-1.gguf", tmpdir, key);
        snprintf(g2, sizeof(g2), "%s/gap-%s-2.gguf", tmpdir, key);
        snprintf(out, sizeof(out), "%s/gap-out-%s", tmpdir, key);
        mf_convert_gguf_opts o = {.struct_size = sizeof(o), .type = t, .layout = MF_CONVERT_LAYOUT_2026_02};
        mf_status st;
        mf_status_init(&st);
        int rc = mf_convert_to_gguf(src, g1, &o, &st);
        if (rc == 0)
            mf_hash_file(g1, MF_SHA256, h, &st);
        CHECKF(rc == 0 && !strcmp(h, json_string_value(json_object_get(v, "sha256"))),
               "%s: not the 2026 converter's bytes (%s)", key, st.msg);
        /* Q8_0 as F32: d * q is exact there, and quantizes back to the same blocks */
        mf_hf_out_opts ho = {.dtype = strcmp(t, "q8_0") ? MF_DTYPE_INVALID : MF_F32};
        rc = rc ? rc : mf_convert_gguf_to_hf(g1, out, &ho, &st);
        rc = rc ? rc : mf_convert_to_gguf(out, g2, &o, &st);
        CHECKF(rc == 0, "%s: %s", key, st.msg);
        mf_status_clear(&st);
        if (rc)
            continue;
        bool exact = same_file(g1, g2);
        bool reordered = strstr(key, "deepseek-v3") != NULL;
        same_gguf_content(g1, g2, key);
        CHECKF(exact || reordered, "%s: GGUF -> HF -> GGUF is not byte-identical", key);
        same += exact;
        content += !exact;
        printf("gguf -> hf -> gguf %-26s %s\n", key, exact ? "byte-identical" : "same keys and tensors, a key moved");
    }
    printf("gguf -> hf -> gguf, gap variants: %d byte-identical, %d the same keys and tensors in another order\n", same,
           content);
    CHECK(same >= 8);
    json_decref(e);
}

int main(void)
{
    const char *shared = tl_shared_dir();
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/mfmt-g2h-XXXXXX");
    if (!mkdtemp(tmpdir))
        return 1;
    if (!shared) {
        TL_SKIP("gguf_to_hf: the round trips of the reference directories (no ../shared)");
        return tl_report("gguf_to_hf");
    }
    schema = json_load_file("tests/data/hf_arch/hf_config_keys.json", 0, NULL);
    CHECKF(schema != NULL, "tests/data/hf_arch/hf_config_keys.json unreadable");
    int n = 0;
    char base[512];
    snprintf(base, sizeof(base), "%s/convert-ref-arch/dirs", shared);
    run_dirs(base, "", &n);
    snprintf(base, sizeof(base), "%s/corpus/hf-dir", shared);
    run_dirs(base, "", &n);
    /* RWKV6-Qwen2's reference directory (its ChatGLM neighbours need their
     * arch file: refused here, round-tripped by test_arch_file) */
    run_dirs("tests/data/arch_remote/dirs", "remote-", &n);
    /* DeciLM's and LlamaHfVocab's (Grok and Chameleon need their arch files: refused here) */
    run_dirs("tests/data/arch_ref/dirs", "archref-", &n);
    /* the 2026-02 converter's families (convert-ref-new): its layout */
    snprintf(base, sizeof(base), "%s/convert-ref-new/dirs", shared);
    run_dirs(base, "new-", &n);
    CHECKF(n >= 25, "only %d reference directories", n);
    int n_var = run_generated(shared, "gen_variants.py", "convert-ref-arch/dirs");
    int n_rt = run_generated(shared, "gen_roundtrip.py", ".");
    n_var += run_generated(shared, "tests/data/hf_new/gen_hybrid_variants.py", "convert-ref-new/dirs");
    printf("gguf -> hf: %d directories (%d variants, %d held-out-style), %d refused by the forward converter\n",
           n + n_var + n_rt, n_var, n_rt, n_refused);
    /* every architecture the converter knows came back and converted again */
    for (size_t i = 0; mf_convert_arch_name(i); i++) {
        bool seen = false;
        for (size_t k = 0; k < n_covered; k++)
            seen |= !strcmp(covered[k], mf_convert_arch_name(i));
        CHECKF(seen, "architecture %s: no directory round-tripped", mf_convert_arch_name(i));
    }
    printf("gguf -> hf: %zu architectures round-tripped; %d config.json checked against transformers' classes, "
           "%d of remote-code classes (no transformers class to check); %d class keys compared as from_pretrained "
           "ends with them\n",
           n_covered, n_configs_checked, n_configs_remote, n_effective);
    json_decref(schema);
    reference_ggufs_2026(shared);
    gap_round_trips(shared);
    quantized_source(shared);
    refusals(shared);
    tl_remove_tmpdir(tmpdir);
    return tl_report("gguf_to_hf");
}
