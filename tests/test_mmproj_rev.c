/* test_mmproj_rev.c - GGUF -> HF of mmproj files (gguf2hf_mmproj.c):
 *  - the tables: every rule op of every conv_mmprojs row has a reverse
 *    (g2h_mm_reversible), every computed key and key block an inverse,
 *    every layout row a class of some mmproj row (fails when a row is
 *    added with an op the reverse does not know);
 *  - alone: each directory of tests/data/mmproj/dirs (and of
 *    tests/data/mmaudio/dirs: no converter run recorded there, a counted
 *    SKIP; the tensors compared to the original's) at f16, q8_0, bf16 and
 *    f32 (mfmt's forward, the converter's bytes: expected.json) back to HF
 *    and forward again gives the same bytes; reverse.json records that
 *    llama.cpp's converter (ecbcb7ea) on the same HF output gives them too;
 *    at f32 the HF tensors hold the values of the original directory (but
 *    the lossy ops: Gemma 3's F16 input projection and its norm's +1) and
 *    the vision_config keys written equal the original's;
 *  - with the text model (../shared/convert-ref-new's Gemma 3 and Llama 4
 *    GGUFs, width 64 as the mmproj's projection): one multimodal directory,
 *    whose text GGUF is the reference's bytes again and whose mmproj is
 *    what the converter writes from it (reverse.json); `validate` passes;
 *  - the refusals: a pair whose keys disagree, a text model without the
 *    [IMG_BREAK] token, an mmproj given twice, a text GGUF as the mmproj,
 *    the mmproj of another family's text model. */
#include "testlib.h"

#include "core/core.h"
#include "formats/formats.h"
#include "ops/hfconv/gguf2hf_int.h"
#include "ops/tensor_f32.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define DATA "tests/data/mmproj"

/* ------------------------------------------------------------ tables */

static bool has_class(const char *cls)
{
    for (size_t i = 0; i < conv_n_mmprojs; i++)
        for (const char *const *k = conv_mmprojs[i].a.classes; *k; k++)
            if (!strcmp(*k, cls))
                return true;
    return false;
}

static void tables(void)
{
    size_t ops = 0, calcs = 0, reversible = 0, forward_only = 0;
    for (size_t i = 0; i < conv_n_mmprojs; i++) {
        const conv_mmproj *row = &conv_mmprojs[i];
        bool projector = false;
        for (const conv_hp *h = row->a.hparams; h->key; h++)
            projector |= !strcmp(h->key, "projector_type") && h->src && h->src[0] == '=';
        CHECKF(projector, "mmproj row %s: no projector_type constant (GGUF -> HF picks the row by it)",
               row->a.classes[0]);
        char why[300] = "";
        if (!g2h_mm_row_reversible(row, why, sizeof(why))) {
            /* converted HF -> GGUF only; GGUF -> HF refuses it (errors() checks one) */
            TL_SKIP("GGUF -> HF of the %s mmproj not done: %s", row->a.classes[0], why);
            forward_only++;
            continue;
        }
        reversible++;
        for (const conv_rule *r = row->a.rules; r->pat; r++)
            ops++;
        for (const conv_hp *h = row->a.hparams; h->key; h++)
            calcs += (h->calc && strcmp(h->key, "general.file_type")) || h->block;
    }
    /* the eight families of the reverse references are all reversible */
    static const char *const must[] = {"Gemma3ForConditionalGeneration", "Qwen2VLForConditionalGeneration",
                                       "Mistral3ForConditionalGeneration", "Llama4ForConditionalGeneration",
                                       "SmolVLMForConditionalGeneration", "Qwen3VLForConditionalGeneration",
                                       /* the Whisper-style audio encoders (OP_UNSQUEEZE_LAST's squeeze) */
                                       "Qwen2AudioForConditionalGeneration", "UltravoxModel",
                                       "VoxtralForConditionalGeneration", "AudioFlamingo3ForConditionalGeneration",
                                       "GlmasrModel", "KimiK25ForConditionalGeneration",
                                       /* the key blocks' inverses (the activation) */
                                       "Glm4vForConditionalGeneration", "YoutuVLForConditionalGeneration",
                                       "JanusForConditionalGeneration", NULL};
    for (const char *const *k = must; *k; k++)
        for (size_t i = 0; i < conv_n_mmprojs; i++)
            for (const char *const *c = conv_mmprojs[i].a.classes; *c; c++)
                if (!strcmp(*c, *k)) {
                    char why[300] = "";
                    CHECKF(g2h_mm_row_reversible(&conv_mmprojs[i], why, sizeof(why)), "%s: %s", *k, why);
                }
    printf("tables: %zu mmproj rows reversible, %zu HF -> GGUF only\n", reversible, forward_only);
    for (size_t i = 0; i < conv_n_mm_layouts; i++) {
        const conv_mm_layout *l = &conv_mm_layouts[i];
        CHECKF(has_class(l->hf_class), "layout %s: no mmproj row has the class", l->hf_class);
        for (const char *const *n = l->rev_names; n && *n; n++)
            CHECKF(strchr(*n, '=') != NULL, "layout %s: rev_names \"%s\" is not GGUF=HF", l->hf_class, *n);
        for (const char *const *n = l->text_names; n && *n; n++)
            CHECKF(strchr(*n, '=') != NULL, "layout %s: text_names \"%s\" is not FROM=TO", l->hf_class, *n);
    }
    /* a forward op without a reverse is reported as one */
    CHECK(!g2h_mm_reversible(OP_TRANSPOSE) && !g2h_mm_reversible(OP_STACK));
    printf("tables: %zu rule ops and %zu computed keys with their reverses, %zu layouts\n", ops, calcs,
           conv_n_mm_layouts);
}

/* ------------------------------------------------------------ helpers */

static int to_gguf(const char *dir, const char *out, const char *type, bool mmproj, mf_status *st)
{
    mf_convert_gguf_opts o;
    mf_convert_gguf_opts_init(&o);
    o.type = type;
    o.mmproj = mmproj;
    return mf_convert_to_gguf(dir, out, &o, st);
}

static int to_hf(const char *gguf, const char *mmproj, const char *out, mf_status *st)
{
    mf_convert_hf_opts o;
    mf_convert_hf_opts_init(&o);
    o.mmproj = mmproj;
    return mf_convert_to_hf(gguf, out, &o, st);
}

static bool sha_is(const char *path, const char *want)
{
    char h[129] = "";
    mf_status st;
    mf_status_init(&st);
    mf_hash_file(path, MF_SHA256, h, &st);
    mf_status_clear(&st);
    return want && !strcmp(h, want);
}

static void rm_dir(const char *dir)
{
    char cmd[1200];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

/* The original directory's tensor `name` equals the reversed one (values). */
static int same_values(const mf_model *a, const mf_model *b, const char *name, float tol)
{
    const mf_tensor *x = mf_tensor_find(a, name), *y = mf_tensor_find(b, name);
    if (!x || !y || x->ndim != y->ndim || memcmp(x->shape, y->shape, sizeof(int64_t) * (size_t)x->ndim))
        return 0;
    mf_status st;
    mf_status_init(&st);
    float *u = NULL, *v = NULL;
    int ok = mf_tensor_read_f32(a, x, &u, &st) == 0 && mf_tensor_read_f32(b, y, &v, &st) == 0;
    for (uint64_t i = 0; ok && i < mf_tensor_nelems(x); i++)
        ok = tol > 0 ? fabsf(u[i] - v[i]) <= tol : memcmp(&u[i], &v[i], sizeof(float)) == 0;
    free(u);
    free(v);
    mf_status_clear(&st);
    return ok;
}

/* Reversed (f32) against the original directory: every reversed tensor but
 * the stand-in text embedding holds the original's values; the vision
 * config keys written hold the original's. */
static void against_original(const char *orig, const char *rev, const char *fam, bool vision)
{
    char po[600], pr[600];
    snprintf(po, sizeof(po), "%s/model.safetensors", orig);
    snprintf(pr, sizeof(pr), "%s/model.safetensors", rev);
    mf_model *a = NULL, *b = NULL;
    mf_status st;
    mf_status_init(&st);
    CHECKF(mf_open(po, NULL, &a, &st) == 0 && mf_open(pr, NULL, &b, &st) == 0, "%s: %s", fam, st.msg);
    mf_status_clear(&st);
    size_t same = 0, lossy = 0, n = 0;
    for (size_t i = 0; a && b && i < b->n_tensors; i++) {
        const char *name = b->tensors[i].name;
        if (strstr(name, "embed_tokens")) /* alone: a two-row stand-in for the text embedding */
            continue;
        n++;
        /* Gemma 3: the input projection is F16 in every file, the soft norm's +1 in float32 */
        bool lossy_op = strstr(name, "mm_input_projection") || strstr(name, "soft_emb_norm");
        int ok = same_values(a, b, name, lossy_op ? 1e-3f : 0);
        CHECKF(ok, "%s: tensor %s differs from the original directory's", fam, name);
        same += ok && !lossy_op;
        lossy += ok && lossy_op;
    }
    for (size_t i = 0; a && b && i < a->n_tensors; i++) { /* every vision tensor came back */
        const char *name = a->tensors[i].name;
        bool text = strstr(name, "embed_tokens") || !strncmp(name, "lm_head.", 8) || !strncmp(name, "mtp.", 4) ||
                    !strncmp(name, "audio_encoder.proj.", 19) || /* GLM-ASR's: the converter drops it */
                    !strncmp(name, "model.norm.", 11) ||          /* Youtu-VL's text model */
                    !strncmp(name, "model.generation_head.", 22) || !strncmp(name, "model.vqmodel.", 14); /* Janus */
        CHECKF(text || mf_tensor_find(b, name), "%s: the original's %s did not come back", fam, name);
    }
    printf("  %-18s %zu tensors as the original directory's (%zu equal values, %zu within the lossy op's rounding)\n",
           fam, n, same, lossy);
    mf_close(a);
    mf_close(b);
    snprintf(po, sizeof(po), "%s/config.json", orig);
    snprintf(pr, sizeof(pr), "%s/config.json", rev);
    json_t *jo = json_load_file(po, 0, NULL), *jr = json_load_file(pr, 0, NULL);
    /* an audio encoder: its config at the class's path (GLM-ASR's whisper_config) */
    const char *sub = vision                                  ? "vision_config"
                      : json_object_get(jo, "audio_config") ? "audio_config"
                                                            : "whisper_config";
    json_t *vo = json_object_get(jo, sub), *vr = json_object_get(jr, sub);
    CHECKF(json_is_object(vr), "%s: no %s written", fam, sub);
    const char *k;
    json_t *v;
    size_t keys = 0;
    json_object_foreach(vr, k, v) {
        json_t *w = json_object_get(vo, k);
        if (!w)
            continue; /* a key the original leaves to transformers' default */
        bool eq = json_equal(v, w) || (json_is_number(v) && json_is_number(w) &&
                                       (float)json_number_value(v) == (float)json_number_value(w));
        CHECKF(eq, "%s: %s.%s differs from the original's", fam, sub, k);
        keys++;
    }
    CHECKF(keys >= 5, "%s: only %zu %s keys", fam, keys, sub);
    json_decref(jo);
    json_decref(jr);
}

/* ------------------------------------------------------------ alone */

static void alone(const char *tmp, const char *data, int min_total)
{
    char ep[256], rp[256];
    snprintf(ep, sizeof(ep), "%s/expected.json", data);
    snprintf(rp, sizeof(rp), "%s/reverse.json", data);
    json_t *e = json_load_file(ep, 0, NULL), *rv = json_load_file(rp, 0, NULL);
    /* tests/data/mmaudio has no reverse.json: its converter runs on the GGUF -> HF outputs are to do */
    bool recorded = rv != NULL;
    CHECKF(e && (rv || strcmp(data, DATA)), "%s unreadable (or %s's reverse.json)", ep, data);
    if (!recorded)
        TL_SKIP("%s: no llama.cpp converter run on the GGUF -> HF outputs recorded (mfmt's round trip only)", data);
    const char *key;
    json_t *v;
    int same = 0, total = 0, conv_same = 0;
    json_object_foreach(json_object_get(e, "outputs"), key, v) {
        const char *d = json_string_value(json_object_get(v, "dir")), *t = json_string_value(json_object_get(v, "outtype"));
        const char *want = json_string_value(json_object_get(v, "sha256"));
        char src[512], g1[512], hf[512], g2[512];
        snprintf(src, sizeof(src), "%s/dirs/%s", data, d ? d : "?");
        snprintf(g1, sizeof(g1), "%s/%s.gguf", tmp, key);
        snprintf(hf, sizeof(hf), "%s/hf-%s/%s", tmp, key, d ? d : "?"); /* the name gives general.name */
        snprintf(g2, sizeof(g2), "%s/%s.again.gguf", tmp, key);
        mf_status st;
        mf_status_init(&st);
        int rc = to_gguf(src, g1, t, true, &st);
        CHECKF(rc == 0 && sha_is(g1, want), "%s: the forward is not the converter's (%s)", key, st.msg);
        mf_status_clear(&st);
        if (rc == 0)
            rc = to_hf(g1, NULL, hf, &st);
        if (rc && st.code == MF_ERR_UNSUPPORTED && strstr(st.msg, "is not done")) {
            /* a row tables() reports as HF -> GGUF only: counted, not compared */
            TL_SKIP("%s: %s", key, st.msg);
            mf_status_clear(&st);
            unlink(g1);
            continue;
        }
        CHECKF(rc == 0, "%s: GGUF -> HF: %s", key, st.msg);
        mf_status_clear(&st);
        if (rc == 0)
            rc = to_gguf(hf, g2, t, true, &st);
        CHECKF(rc == 0, "%s: HF -> GGUF again: %s", key, st.msg);
        mf_status_clear(&st);
        bool ok = rc == 0 && sha_is(g2, want);
        total++;
        same += ok;
        CHECKF(ok, "%s: GGUF -> HF -> GGUF is not the same file", key);
        /* the 2026 converter's bytes on the same HF output (reverse.json, made by the recipe of README.md) */
        char rkey[256];
        snprintf(rkey, sizeof(rkey), "%s", key + (strncmp(key, "mmproj-", 7) ? 0 : 7));
        json_t *r = json_object_get(json_object_get(rv, "alone"), rkey);
        const char *conv_sha = json_string_value(json_object_get(r, "converter_on_reverse_sha256"));
        if (!recorded) {
            /* counted once above */
        } else if (!r) {
            /* a family added to expected.json since reverse.json was made: its converter run is to do */
            TL_SKIP("%s: no converter run on its GGUF -> HF output recorded in reverse.json (README.md's recipe)", rkey);
        } else {
            bool conv = want && conv_sha && !strcmp(want, conv_sha);
            conv_same += conv;
            CHECKF(conv, "%s: reverse.json's converter result is not the reference", rkey);
        }
        printf("mmproj %-26s -> HF -> GGUF %s\n", key,
               !ok ? "DIFFERS" : r ? "the same bytes (mfmt; the converter's too)" : "the same bytes (mfmt)");
        /* the HF names and values as the original's: the recorded families, the audio ones and those
           below (PaddleOCR-VL's names come back as SigLIP's visual.* ones: not compared) */
        static const char *const compared[] = {"kimik25-tiny", "cogvlm-tiny", "glm4v-tiny", "glm45v-tiny",
                                               "youtuvl-tiny", "janus-pro-tiny", NULL};
        bool same_names = r || !recorded;
        for (const char *const *x = compared; *x && d; x++)
            same_names |= !strcmp(d, *x);
        if (rc == 0 && !strcmp(t, "f32") && same_names)
            against_original(src, hf, d, recorded);
        unlink(g1);
        unlink(g2);
        snprintf(hf, sizeof(hf), "%s/hf-%s", tmp, key);
        rm_dir(hf);
    }
    if (recorded)
        printf("%s GGUF -> HF -> GGUF: %d of %d the same bytes with mfmt, %d of %d with llama.cpp's converter "
               "(reverse.json)\n", data, same, total, conv_same, total);
    else
        printf("%s GGUF -> HF -> GGUF: %d of %d the same bytes with mfmt\n", data, same, total);
    CHECKF(total >= min_total, "%s: %d round trips, %d expected", data, total, min_total);
    json_decref(e);
    json_decref(rv);
}

/* ------------------------------------------------------------ with the text model */

static void with_text(const char *tmp)
{
    const char *shared = tl_shared_dir();
    if (!shared) {
        TL_SKIP("GGUF -> HF of a text model with its mmproj: ../shared (convert-ref-new) not found");
        return;
    }
    json_t *rv = json_load_file(DATA "/reverse.json", 0, NULL);
    const char *fam;
    json_t *v;
    int done = 0;
    json_object_foreach(json_object_get(rv, "with_text"), fam, v) {
        char text[600], src[512], mm[512], hf[512], g[512], cfgp[600];
        snprintf(text, sizeof(text), "%s/%s", shared, json_string_value(json_object_get(v, "text_gguf")));
        snprintf(src, sizeof(src), DATA "/dirs/%s", fam);
        snprintf(mm, sizeof(mm), "%s/mm-%s.gguf", tmp, fam);
        snprintf(hf, sizeof(hf), "%s/pair-%s/%s", tmp, fam, fam);
        snprintf(g, sizeof(g), "%s/again-%s.gguf", tmp, fam);
        mf_status st;
        mf_status_init(&st);
        int rc = to_gguf(src, mm, "f16", true, &st);
        if (rc == 0)
            rc = to_hf(text, mm, hf, &st);
        CHECKF(rc == 0, "%s: text + mmproj -> HF: %s", fam, st.msg);
        mf_status_clear(&st);
        if (rc)
            continue;
        CHECKF(mf_validate(hf, &st) == 0, "%s: validate of the directory: %s", fam, st.msg);
        mf_status_clear(&st);
        snprintf(cfgp, sizeof(cfgp), "%s/config.json", hf);
        json_t *cfg = json_load_file(cfgp, 0, NULL);
        CHECKF(json_is_object(json_object_get(cfg, "vision_config")) &&
               json_is_object(json_object_get(cfg, "text_config")), "%s: config.json lacks text_config or "
               "vision_config", fam);
        json_decref(cfg);
        bool t_ok = to_gguf(hf, g, "f16", false, &st) == 0 &&
                    sha_is(g, json_string_value(json_object_get(v, "text_reference_sha256"))) &&
                    sha_is(g, json_string_value(json_object_get(v, "converter_text_f16_sha256")));
        CHECKF(t_ok, "%s: its text GGUF is not the reference's bytes (%s)", fam, st.msg);
        mf_status_clear(&st);
        bool m_ok = to_gguf(hf, g, "f16", true, &st) == 0 &&
                    sha_is(g, json_string_value(json_object_get(v, "converter_mmproj_f16_sha256")));
        CHECKF(m_ok, "%s: its mmproj is not the converter's from the same directory (%s)", fam, st.msg);
        mf_status_clear(&st);
        printf("%-16s text GGUF + mmproj -> HF: text GGUF %s, mmproj %s\n", fam,
               t_ok ? "the reference's bytes" : "DIFFERS", m_ok ? "the converter's bytes" : "DIFFERS");
        done += t_ok && m_ok;
        unlink(mm);
        unlink(g);
        snprintf(hf, sizeof(hf), "%s/pair-%s", tmp, fam);
        rm_dir(hf);
    }
    CHECK(done == 2);
    json_decref(rv);
}

/* ------------------------------------------------------------ refusals */

static void refused(const char *tmp, const char *text, const char *mm, mf_code code, const char *needle)
{
    char hf[512];
    snprintf(hf, sizeof(hf), "%s/refused", tmp);
    rm_dir(hf);
    mf_status st;
    mf_status_init(&st);
    int rc = to_hf(text, mm, hf, &st);
    CHECKF(rc != 0 && st.code == code && strstr(st.msg, needle), "%s + %s: expected a refusal with \"%s\", got "
           "rc %d code %d: %s", text, mm ? mm : "-", needle, rc, (int)st.code, st.msg);
    printf("refused: %s\n", st.msg);
    mf_status_clear(&st);
    struct stat sb;
    CHECKF(stat(hf, &sb) != 0, "a refused conversion left %s", hf);
}

static void errors(const char *tmp)
{
    const char *shared = tl_shared_dir();
    char mm[512], mm2[512];
    snprintf(mm, sizeof(mm), "%s/q35.gguf", tmp);
    snprintf(mm2, sizeof(mm2), "%s/pix.gguf", tmp);
    mf_status st;
    mf_status_init(&st);
    CHECK(to_gguf(DATA "/dirs/qwen35-vl-tiny", mm, "f16", true, &st) == 0);
    CHECK(to_gguf(DATA "/dirs/mistral3-vl-tiny", mm2, "f16", true, &st) == 0);
    mf_status_clear(&st);
    refused(tmp, mm, mm2, MF_ERR_USAGE, "is an mmproj file");
    /* a family converted HF -> GGUF only (tables(): its reverse is not done) */
    char iv[512];
    snprintf(iv, sizeof(iv), "%s/internvl.gguf", tmp);
    CHECK(to_gguf(DATA "/dirs/internvl-tiny", iv, "f16", true, &st) == 0);
    mf_status_clear(&st);
    refused(tmp, iv, NULL, MF_ERR_UNSUPPORTED, "is not done");
    unlink(iv);
    if (shared) {
        char t[600], t2[600];
        snprintf(t, sizeof(t), "%s/convert-ref-new/qwen35-tiny-f16.gguf", shared);
        snprintf(t2, sizeof(t2), "%s/convert-ref-new/ministral3-tiny-f16.gguf", shared);
        refused(tmp, t, mm, MF_ERR_FORMAT, "disagrees with the text model's");
        refused(tmp, t2, mm2, MF_ERR_FORMAT, "[IMG_BREAK]");
        refused(tmp, t, t2, MF_ERR_USAGE, "is not an mmproj GGUF");
        refused(tmp, t2, mm, MF_ERR_USAGE, "not to the text model's");
    } else {
        TL_SKIP("the refusals of text + mmproj pairs: ../shared not found");
    }
    unlink(mm);
    unlink(mm2);
}

int main(void)
{
    char tmp[] = "/tmp/mfmt-mmrev-XXXXXX";
    CHECK(mkdtemp(tmp) != NULL);
    tables();
    alone(tmp, DATA, 32);
    alone(tmp, "tests/data/mmaudio", 20); /* the Whisper-style audio encoders (5 families x 4 types) */
    with_text(tmp);
    errors(tmp);
    rm_dir(tmp);
    return tl_report("mmproj_rev");
}
