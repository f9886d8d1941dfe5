/* test_gguf_to_hf.c - GGUF -> Hugging Face directory, over every reference
 * directory of ../shared (convert-ref-arch/dirs, convert-ref-new/dirs and corpus/hf-dir, written
 * as transformers' modeling code names tensors): HF -> GGUF (mfmt) -> HF
 * (mfmt) gives the original tensors (bit-exact at the source's dtype, but
 * for the operations that round: Gemma's +1 norms, Mamba's -exp(A_log)) and
 * config values, and -> GGUF again gives a file byte-identical to the first
 * (so the tokens, scores, types, merges, special ids and template survive). */
#include "core/core.h"
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

static int compare_tensors(const char *orig, const char *back, const char *arch)
{
    mf_status st;
    mf_status_init(&st);
    mf_model *a = NULL, *b = NULL;
    int bad = 0;
    bool gemma = !strncmp(arch, "gemma", 5), mamba = !strcmp(arch, "mamba"), jais = !strcmp(arch, "jais");
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
        bool exact = !((gemma && strstr(ta->name, "norm")) || (mamba && strstr(ta->name, "A_log")) || scale != 1.0);
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

/* Every key of the rebuilt config.json that the original has: same value
 * (floats as float32, since GGUF holds them so). */
static void compare_config(const char *orig, const char *back)
{
    char pa[1400], pb[1400];
    snprintf(pa, sizeof(pa), "%s/config.json", orig);
    snprintf(pb, sizeof(pb), "%s/config.json", back);
    json_t *a = json_load_file(pa, JSON_DECODE_INT_AS_REAL, NULL), *b = json_load_file(pb, JSON_DECODE_INT_AS_REAL, NULL);
    CHECKF(a && b, "%s: config.json unreadable", back);
    /* a multimodal config (Qwen3.5) as the converter reads it: text_config
     * lifted to the top (GGUF -> HF writes the text model's keys there) */
    json_t *tc = json_object_get(a, "text_config");
    if (json_is_object(tc))
        json_object_update(a, tc);
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
        if (!va || !strcmp(k, "torch_dtype") || !strcmp(k, "architectures") ||
            !strcmp(k, "model_type") || !strcmp(k, "tie_word_embeddings") ||
            !strcmp(k, "partial_rotary_factor") || !strcmp(k, "rotary_pct") || !strcmp(k, "ffn_multipliers") ||
            !strcmp(k, "embeddings_scale") || !strcmp(k, "width_scale") || /* JAIS: folded into the weights */
            strstr(k, "_token_id") ||
            /* LFM2's feed-forward size: GGUF keeps the adjusted one */
            !strncmp(k, "block_", 6) || (!strcmp(k, "intermediate_size") && json_object_get(a, "block_ff_dim")))
            continue;
        common++;
        bool same = json_equal(va, vb) ||
                    (json_is_number(va) && json_is_number(vb) &&
                     (float)json_number_value(va) == (float)json_number_value(vb));
        if (!same && json_is_object(va) && json_is_object(vb))
            same = true; /* rope_scaling: compared through the GGUF it gives */
        CHECKF(same, "%s: config %s differs", back, k);
    }
    CHECKF(common >= 3, "%s: only %zu config keys in common", back, common);
    json_decref(a);
    json_decref(b);
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
        printf("  %s: forward conversion refused (%s): not a round-trip case\n", name, st.msg);
        mf_status_clear(&st);
        return;
    }
    mf_hf_out_opts o = {.dtype = MF_DTYPE_INVALID};
    int rc = mf_convert_gguf_to_hf(g1, out, &o, &st);
    CHECKF(rc == 0, "%s: %s", name, st.msg);
    if (rc == 0)
        rc = mf_convert_to_gguf(out, g2, &(mf_convert_gguf_opts){.struct_size = sizeof(mf_convert_gguf_opts), .type = type}, &st);
    CHECKF(rc == 0, "%s: back to GGUF: %s", name, st.msg);
    mf_status_clear(&st);
    if (rc)
        return;
    /* a .bin source lists tensors in the pickle's order, safetensors by name */
    bool bin = strstr(name, "-bin") != NULL;
    CHECKF(bin || same_file(g1, g2), "%s: HF -> GGUF -> HF -> GGUF is not byte-identical", name);
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
    compare_tensors(dir, out, arch);
    compare_config(dir, out);
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
    int n = 0;
    char base[512];
    snprintf(base, sizeof(base), "%s/convert-ref-arch/dirs", shared);
    run_dirs(base, "", &n);
    snprintf(base, sizeof(base), "%s/corpus/hf-dir", shared);
    run_dirs(base, "", &n);
    /* the 2026-02 converter's families (convert-ref-new): its layout */
    snprintf(base, sizeof(base), "%s/convert-ref-new/dirs", shared);
    run_dirs(base, "new-", &n);
    CHECKF(n >= 25, "only %d reference directories", n);
    printf("gguf -> hf: %d directories round-tripped\n", n);
    quantized_source(shared);
    refusals(shared);
    tl_remove_tmpdir(tmpdir);
    return tl_report("gguf_to_hf");
}
