/* hf2gguf_mmproj.c - `convert --mmproj`: the vision tower and projector (or
 * the audio encoder) of a multimodal directory as the separate GGUF llama.cpp's converter
 * (ecbcb7ea) writes with --mmproj (MmprojModel): the class's row of
 * conv_mmprojs[] (mmproj_table.c) chosen, its hparams made what
 * MmprojModel.__init__ makes them (the vision config, with the class's
 * renames; the whole config.json kept as global_config; the preprocessor
 * config merged), its tensor_force_quant, and its computed keys. The rest
 * (rules, name map, streaming, keys) is the text path's. */
#include "ops/hfconv/hf2gguf_int.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <strings.h>

static const conv_mmproj *mmproj_row(const char *cls)
{
    for (size_t i = 0; cls && i < conv_n_mmprojs; i++)
        for (const char *const *k = conv_mmprojs[i].a.classes; *k; k++)
            if (!strcmp(*k, cls)) {
                /* a class in two rows (Qwen2-VL's projector by model_type): the caller checks */
                return &conv_mmprojs[i];
            }
    return NULL;
}

/* The row of cls whose model_type fits (Qwen2-VL / Qwen2.5-VL), else the
 * first row of the class (its check then fails with the reason). */
static const conv_mmproj *pick_row(const char *cls, const char *model_type)
{
    const conv_mmproj *first = mmproj_row(cls);
    for (size_t i = 0; first && i < conv_n_mmprojs; i++)
        for (const char *const *k = conv_mmprojs[i].a.classes; *k; k++)
            if (!strcmp(*k, cls) && conv_mmprojs[i].model_type && model_type &&
                !strcmp(conv_mmprojs[i].model_type, model_type))
                return &conv_mmprojs[i];
    return first;
}

static int no_row(conv *c, const char *cls)
{
    char known[2048] = "";
    size_t n = 0;
    for (size_t i = 0; i < conv_n_mmprojs && n < sizeof(known); i++)
        for (const char *const *k = conv_mmprojs[i].a.classes; *k && n < sizeof(known); k++)
            if (mmproj_row(*k) == &conv_mmprojs[i]) /* a class in two rows: once */
                n += (size_t)snprintf(known + n, sizeof(known) - n, "%s%s", n ? ", " : "", *k);
    return mf_fail(c->st, MF_ERR_UNSUPPORTED, c->dir, -1, "--mmproj: no vision projector rule for %s (mfmt writes "
                   "the mmproj of: %s)", cls ? cls : "(none: config.json has no \"architectures\")", known);
}

/* One assignment "k=SRC" of a config change: k set to SRC's value. */
static int assign(conv *c, char *p, const char *fix)
{
    char *eq = strchr(p, '=');
    if (!eq)
        return mf_fail(c->st, MF_ERR_USAGE, c->dir, -1, "mmproj config change \"%s\" malformed", fix);
    *eq = 0;
    json_t *v = h2g_lookup(c, eq + 1);
    if (!v && c->st->code)
        return -1;
    /* dict.get's None when absent: its reader then says the key is missing */
    return json_object_set_new(c->cfg, p, v ? v : json_null()) ? mf_oom(c->st, c->dir) : 0;
}

/* One of the row's changes of the config c->cfg: guards "?g:" (key g
 * present), "?!g:" (absent), "?g=v:" (g is the string v), all tested
 * first, then the assignments "k=SRC,k2=SRC2" in order. */
static int apply_fix(conv *c, const char *fix)
{
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", fix);
    char *p = buf;
    while (*p == '?') {
        char *colon = strchr(p, ':');
        if (!colon)
            return mf_fail(c->st, MF_ERR_USAGE, c->dir, -1, "mmproj config change \"%s\" malformed", fix);
        *colon = 0;
        bool absent = p[1] == '!';
        char *g = p + 1 + absent, *eq = strchr(g, '=');
        if (eq)
            *eq = 0;
        json_t *v = h2g_hparam(c, g);
        bool holds = absent ? !v : v && (!eq || (json_is_string(v) && !strcmp(json_string_value(v), eq + 1)));
        if (!holds)
            return 0;
        p = colon + 1;
    }
    for (char *save = NULL, *a = strtok_r(p, ",", &save); a; a = strtok_r(NULL, ",", &save))
        if (assign(c, a, fix))
            return -1;
    return 0;
}

/* The fixes of a list applied to `target` (the vision or the audio config). */
static int apply_fixes(conv *c, json_t *target, const char *const *fixes)
{
    json_t *keep = c->cfg;
    c->cfg = target;
    int rc = 0;
    for (const char *const *f = fixes; f && *f && rc == 0; f++)
        rc = apply_fix(c, *f);
    c->cfg = keep;
    return rc;
}

/* ModelBase.load_hparams' renames: InternVL's llm_config, GLM-ASR's
 * lm_config, Qwen2.5-Omni's thinker_config.text_config and LFM2-Audio's
 * lfm become text_config (the text width an mmproj's projection_dim is). */
static int lift_text_config(conv *c)
{
    static const char *const from[] = {"llm_config", "lm_config", "thinker_config.text_config", "lfm", NULL};
    for (const char *const *k = from; *k; k++) {
        json_t *v = h2g_json_path(c->global, *k);
        if (v && json_object_set(c->global, "text_config", v))
            return mf_oom(c->st, c->dir);
    }
    return 0;
}

/* get_vision_config / get_audio_config: the first present of "a|b" (paths
 * in config.json); borrowed, NULL when none. */
static json_t *sub_config(conv *c, const char *paths)
{
    char buf[128];
    snprintf(buf, sizeof(buf), "%s", paths);
    for (char *save = NULL, *k = strtok_r(buf, "|", &save); k; k = strtok_r(NULL, "|", &save)) {
        json_t *v = h2g_json_path(c->global, k);
        if (v)
            return v;
    }
    return NULL;
}

/* config.json's DIR/NAME merged into c->pre ({**pre, **cfg}), with the
 * object under `inner` lifted first ({**cfg, **cfg[inner]}). */
static int merge_preprocessor(conv *c, const char *name, const char *inner)
{
    char *p = mf_path_join_new(c->dir, name);
    if (!p)
        return mf_oom(c->st, c->dir);
    int rc = 0;
    if (mf_path_exists(p)) {
        json_t *cfg = mf_hf_load_json(p, c->st);
        if (!cfg)
            rc = -1;
        else if (!json_is_object(cfg))
            rc = mf_fail(c->st, MF_ERR_FORMAT, p, -1, "must hold a JSON object");
        json_t *in = rc ? NULL : json_object_get(cfg, inner);
        if (rc == 0 && json_is_object(in) && json_object_update(cfg, in))
            rc = mf_oom(c->st, c->dir);
        if (rc == 0 && json_object_update(c->pre, cfg))
            rc = mf_oom(c->st, c->dir);
        json_decref(cfg);
    }
    free(p);
    return rc;
}

/* MmprojModel.__init__ after the class is known: global_config =
 * config.json (text_config lifted as load_hparams does), hparams = the
 * vision config, else the audio encoder's (an audio class: its row's
 * audio_cfg; c->audio, "aud:" in key lists), the block count of hparams
 * (128 with both encoders), the class's changes applied to each config,
 * the preprocessor config; the MMPROJ name map. */
int h2g_mmproj_setup(conv *c)
{
    /* get_model_architecture: vision_config's architectures first (InternVL's InternVisionModel) */
    json_t *varch = h2g_json_path(c->cfg, "vision_config.architectures");
    const char *cls = json_string_value(json_array_get(varch ? varch : h2g_hparam(c, "architectures"), 0));
    const char *mt = json_string_value(h2g_hparam(c, "model_type"));
    const conv_mmproj *row = cls ? pick_row(cls, mt) : NULL;
    if (!row)
        return no_row(c, cls);
    if (row->model_type && (!mt || strcmp(mt, row->model_type)))
        return mf_fail(c->st, MF_ERR_UNSUPPORTED, c->dir, -1, "--mmproj: %s with model_type \"%s\": the vision "
                       "projectors mfmt knows for it are by model_type (%s, ...)", cls, mt ? mt : "(none)",
                       row->model_type);
    c->global = c->cfg;
    c->cfg = NULL;
    if (lift_text_config(c))
        return -1;
    const char *vpath = row->vision_cfg ? row->vision_cfg : "vision_config";
    json_t *vc = sub_config(c, vpath), *ac = row->audio_cfg ? sub_config(c, row->audio_cfg) : NULL;
    if (row->no_vision && vc)
        return mf_fail(c->st, MF_ERR_UNSUPPORTED, c->dir, -1, "--mmproj: %s has no vision encoder, but config.json "
                       "has a %s (the converter would take its hparams from it)", cls, vpath);
    if (!row->no_vision && !json_is_object(vc))
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "--mmproj: config.json has no %s: no vision "
                       "tower to write (%s)", vpath, cls);
    if (row->audio_cfg && !json_is_object(ac))
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "--mmproj: config.json has no %s: no audio encoder to "
                       "write (%s)", row->audio_cfg, cls);
    const char *vt = json_string_value(json_object_get(vc, "model_type"));
    if (row->vision_type && (!vt || strcmp(vt, row->vision_type)))
        return mf_fail(c->st, MF_ERR_UNSUPPORTED, c->dir, -1, "--mmproj: %s with a vision_config of model_type "
                       "\"%s\": the converter takes %s", cls, vt ? vt : "(none)", row->vision_type);
    c->mm = row;
    c->arch = &row->a;
    c->l2026 = true; /* only the 2026 converter writes mmproj files */
    c->kv->overwrite = true;
    c->rules = row->a.rules;
    c->hparams = row->a.hparams;
    c->names = conv_clip_names;
    c->n_names = conv_n_clip_names;
    c->name_arch = -1;
    /* hparams = the vision config, else the audio config's (the same object) */
    c->audio = ac ? json_deep_copy(ac) : NULL;
    c->cfg = vc ? json_deep_copy(vc) : json_incref(c->audio);
    c->pre = json_object();
    if (!c->cfg || !c->pre || (ac && !c->audio))
        return mf_oom(c->st, c->dir);
    /* preprocessor_config.json (media_proc_cfg lifted), then processor_config.json (image_processor
     * lifted): MmprojModel.__init__ reads them before a class's own changes (PaddleOCR-VL's use them) */
    if (merge_preprocessor(c, "preprocessor_config.json", "media_proc_cfg") ||
        merge_preprocessor(c, "processor_config.json", "image_processor"))
        return -1;
    /* MmprojModel.__init__: the block count of hparams (128 with two encoders: a name map for all) */
    static const char *const block_keys[] = {"n_layers", "num_hidden_layers", "n_layer", "num_layers", "depth",
                                             "encoder_layers", "vt_num_hidden_layers", NULL};
    json_t *bc = h2g_find_hparam(c, block_keys);
    if (vc && ac)
        c->block_count = 128;
    else if (!bc)
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json %s has no num_hidden_layers (or depth, "
                       "encoder_layers)", vc ? vpath : row->audio_cfg);
    else if (h2g_need_int(c, bc, "num_hidden_layers", &c->block_count))
        return -1;
    if (c->block_count < 0 || c->block_count > (1 << 20))
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json: the encoder's block count is out of range");
    if (apply_fixes(c, c->cfg, vc ? row->fixes : NULL) || apply_fixes(c, c->audio, row->afixes))
        return -1;
    if (row->prepare && row->prepare(c))
        return -1;
    /* LlavaVisionModel.__init__ (pixtral): the [IMG_BREAK] id, an error when absent */
    for (const conv_rule *r = c->rules; r->pat; r++)
        if (r->op == OP_PICK_ROW && h2g_token_id(c, r->count_key, &c->pick_id))
            return -1;
    return 0;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

/* A force rule's type, MF_DTYPE_INVALID when none matches. */
static mf_dtype forced(const conv *c, const conv_force_type *list, const char *src, const char *gguf)
{
    for (const conv_force_type *f = list; f && f->pat; f++)
        if (strstr(f->on == 's' ? src : gguf, f->pat) && (!f->also || strstr(f->on == 's' ? src : gguf, f->also)))
            return f->type == 'h' ? MF_F16 : f->type == 'f' || c->ftype != MF_FTYPE_F16 ? MF_F32 : MF_F16;
    return MF_DTYPE_INVALID;
}

/* prepare_tensors with MmprojModel's tensor_force_quant (the class's list,
 * then the base's): 1-d tensors and norms F32 over any of them; unforced,
 * the position embedding and non-.weight names F32, the rest the output
 * type (Q8_0 rows not a multiple of 32: F16). */
mf_dtype h2g_mmproj_type(const conv *c, const out_tensor *o)
{
    const char *src = o->n_segs ? o->segs[0].t->name : "";
    mf_dtype t = forced(c, c->mm->types, src, o->name);
    if (t == MF_DTYPE_INVALID)
        t = forced(c, conv_mmproj_base_types, src, o->name);
    if (o->ndim <= 1 || ends_with(o->name, "_norm.weight"))
        return MF_F32;
    if (t != MF_DTYPE_INVALID)
        return t;
    if (!strcmp(o->name, "v.position_embd.weight") || !strcmp(o->name, "a.position_embd.weight") ||
        !ends_with(o->name, ".weight"))
        return MF_F32;
    t = c->qtype;
    const mf_dtype_info *di = mf_dtype_info_of(t);
    if (di && di->block_elems > 1 && o->shape[o->ndim - 1] % di->block_elems) /* QuantError: F16 */
        t = MF_F16;
    return t;
}

/* LlavaVisionModel.get_token_id: the id of an added token of
 * tokenizer_config.json's added_tokens_decoder. */
int h2g_token_id(conv *c, const char *token, int64_t *id)
{
    char *p = mf_path_join_new(c->dir, "tokenizer_config.json");
    if (!p)
        return mf_oom(c->st, c->dir);
    json_t *tc = mf_path_exists(p) ? mf_hf_load_json(p, c->st) : NULL;
    int rc = -1;
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(tc, "added_tokens_decoder"), k, v) {
        const char *content = json_string_value(json_object_get(v, "content"));
        char *end;
        long long x = strtoll(k, &end, 10);
        if (rc && content && !strcmp(content, token) && *k && !*end && x >= 0) {
            *id = x;
            rc = 0;
        }
    }
    if (rc && !c->st->code)
        mf_fail(c->st, MF_ERR_FORMAT, p, -1, "token '%s' not found in tokenizer config", token);
    json_decref(tc);
    free(p);
    return rc;
}

/* ------------------------------------------------ computed keys */

static json_t *int_of(conv *c, const char *src, const char *what, int64_t *out)
{
    json_t *v = h2g_lookup(c, src);
    int rc = v ? h2g_need_int(c, v, what, out) : mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json vision_config "
                                                          "has no %s", what);
    json_decref(v);
    return rc ? NULL : json_true(); /* a marker: ok */
}

/* Gemma3VisionModel: (image_size // patch_size) // int(image_seq_length ** 0.5)
 * (image_seq_length from the preprocessor config, default 256), written
 * only when > 0 and not the default 4 */
json_t *h2g_mm_gemma3_scale(conv *c)
{
    int64_t image, patch, seq;
    if (!int_of(c, "image_size", "image_size", &image) || !int_of(c, "patch_size", "patch_size", &patch) ||
        !int_of(c, "pre:image_seq_length|=256", "image_seq_length", &seq))
        return NULL;
    if (patch <= 0 || seq < 0) {
        mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "vision_config patch_size / image_seq_length out of range");
        return NULL;
    }
    int64_t side = (int64_t)sqrt((double)seq); /* int(x ** 0.5) */
    if (side <= 0) {
        mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "image_seq_length %lld: division by zero", (long long)seq);
        return NULL;
    }
    int64_t f = (image / patch) / side;
    return f > 0 && f != 4 ? json_integer(f) : NULL;
}

/* int(1.0 / r) for config value r (`what` names it) */
static json_t *inverse_of(conv *c, json_t *r, const char *what)
{
    if (!json_is_number(r) || !(json_number_value(r) > 0)) {
        mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json %s must be a positive number", what);
        return NULL;
    }
    double x = 1.0 / json_number_value(r);
    if (x >= 4294967296.0) {
        mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json %s is too small", what);
        return NULL;
    }
    return json_integer((int64_t)x);
}

/* Llama4VisionModel: int(1.0 / pixel_shuffle_ratio) */
json_t *h2g_mm_inverse_ratio(conv *c)
{
    return inverse_of(c, h2g_hparam(c, "pixel_shuffle_ratio"), "vision_config pixel_shuffle_ratio");
}

/* InternVisionModel: int(1.0 / downsample_ratio), the top-level key */
json_t *h2g_mm_inverse_downsample(conv *c)
{
    return inverse_of(c, json_object_get(c->global, "downsample_ratio"), "downsample_ratio");
}

/* InternVisionModel.set_gguf_parameters: a list image_size / patch_size
 * ([448, 448] in transformers' InternVL configs) as its first element */
int h2g_mm_internvl_prepare(conv *c)
{
    static const char *const keys[] = {"image_size", "patch_size"};
    for (size_t i = 0; i < 2; i++) {
        json_t *v = h2g_hparam(c, keys[i]);
        if (!json_is_array(v))
            continue;
        if (json_array_size(v) == 0)
            return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json vision_config %s is an empty list", keys[i]);
        if (json_object_set(c->cfg, keys[i], json_array_get(v, 0)))
            return mf_oom(c->st, c->dir);
    }
    return 0;
}

/* LFM2VLModel: the vision block count less the layers past
 * vision_feature_layer (-1: none): n + vision_feature_layer + 1 */
json_t *h2g_mm_lfm2_blocks(conv *c)
{
    int64_t n, layer = -1;
    json_t *fl = json_object_get(c->global, "vision_feature_layer");
    if (!int_of(c, "n_layers|num_hidden_layers|n_layer|num_layers|depth|encoder_layers|vt_num_hidden_layers",
                "num_hidden_layers", &n) || (fl && h2g_need_int(c, fl, "vision_feature_layer", &layer)))
        return NULL;
    int64_t blocks = n + layer + 1;
    if (blocks < 0 || blocks > n) {
        mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json vision_feature_layer %lld is not a layer of %lld",
                (long long)layer, (long long)n);
        return NULL;
    }
    return json_integer(blocks);
}

/* Qwen2VLVisionModel (qwen2_5_vl): fullatt_block_indexes[0] + 1, every later
 * index that many after the one before */
json_t *h2g_mm_wa_pattern(conv *c)
{
    json_t *ix = h2g_hparam(c, "fullatt_block_indexes");
    size_t n = json_array_size(ix);
    int64_t prev = 0, x, pat = 0;
    if (!json_is_array(ix) || n == 0) {
        mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "fullatt_block_indexes is required for qwen2_5_vl");
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        if (h2g_need_int(c, json_array_get(ix, i), "fullatt_block_indexes", &x))
            return NULL;
        if (i == 0)
            pat = x + 1;
        else if (x - prev != pat) {
            mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "Invalid fullatt_block_indexes: entry %zu is %lld after %lld "
                    "(every %lld expected)", i, (long long)x, (long long)prev, (long long)pat);
            return NULL;
        }
        prev = x;
    }
    return json_integer(pat);
}

/* LlavaVisionModel (pixtral): clip.use_silu or clip.use_gelu by hidden_act */
int h2g_mm_act(conv *c)
{
    const char *act = json_string_value(h2g_hparam(c, "hidden_act"));
    if (!act || (strcmp(act, "silu") && strcmp(act, "gelu")))
        return mf_fail(c->st, MF_ERR_UNSUPPORTED, c->dir, -1, "Unsupported hidden_act: %s (silu or gelu)",
                       act ? act : "(none)");
    mf_kv_bool(c->kv, !strcmp(act, "silu") ? "clip.use_silu" : "clip.use_gelu", true);
    return 0;
}

/* Glm4VVisionModel: clip.use_gelu or clip.use_silu by hidden_act
 * (lower-cased), nothing for another activation */
int h2g_mm_act_if_known(conv *c)
{
    const char *act = json_string_value(h2g_hparam(c, "hidden_act"));
    if (act && !strcasecmp(act, "gelu"))
        mf_kv_bool(c->kv, "clip.use_gelu", true);
    else if (act && !strcasecmp(act, "silu"))
        mf_kv_bool(c->kv, "clip.use_silu", true);
    return 0;
}

/* JanusProVisionModel.__init__: intermediate_size, when absent, is
 * int(round(hidden_size * mlp_ratio)) (Python's round: ties to even) */
int h2g_mm_janus_prepare(conv *c)
{
    json_t *r = h2g_hparam(c, "mlp_ratio"), *h = h2g_hparam(c, "hidden_size");
    if (h2g_hparam(c, "intermediate_size") || !json_is_number(r) || !json_is_number(h))
        return 0;
    double x = nearbyint(json_number_value(h) * json_number_value(r));
    if (!(x >= 0 && x < 4294967296.0))
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json vision_config hidden_size * mlp_ratio is out "
                       "of range");
    return json_object_set_new(c->cfg, "intermediate_size", json_integer((int64_t)x)) ? mf_oom(c->st, c->dir) : 0;
}

/* YoutuVLVisionModel: clip.use_gelu for gelu, gelu_pytorch_tanh (the
 * default), gelu_fast, gelu_new, gelu_accurate; clip.use_silu for silu
 * (lower-cased); another activation refused */
int h2g_mm_act_youtuvl(conv *c)
{
    static const char *const gelus[] = {"gelu", "gelu_pytorch_tanh", "gelu_fast", "gelu_new", "gelu_accurate", NULL};
    json_t *a = h2g_hparam(c, "hidden_act");
    const char *act = a ? json_string_value(a) : "gelu_pytorch_tanh";
    for (const char *const *g = gelus; act && *g; g++)
        if (!strcasecmp(act, *g)) {
            mf_kv_bool(c->kv, "clip.use_gelu", true);
            return 0;
        }
    if (act && !strcasecmp(act, "silu")) {
        mf_kv_bool(c->kv, "clip.use_silu", true);
        return 0;
    }
    return mf_fail(c->st, MF_ERR_UNSUPPORTED, c->dir, -1, "Unsupported activation function for YOUTUVL: %s",
                   act ? act : "(not a string)");
}

/* PaddleOCRVisionModel.__init__: min_pixels and max_pixels from the
 * preprocessor config (required), image_size int(sqrt(max_pixels)) */
int h2g_mm_paddleocr_prepare(conv *c)
{
    json_t *mx = h2g_json_path(c->pre, "max_pixels");
    if (!json_is_number(h2g_json_path(c->pre, "min_pixels")) || !json_is_number(mx) || json_number_value(mx) < 0)
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "preprocessor_config.json needs min_pixels and max_pixels "
                       "(numbers) for PaddleOCR-VL");
    double x = sqrt(json_number_value(mx));
    if (x >= 4294967296.0)
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "preprocessor_config.json max_pixels is out of range");
    return json_object_set_new(c->cfg, "image_size", json_integer((int64_t)x)) ? mf_oom(c->st, c->dir) : 0;
}

/* KimiK25Model.__init__: image_size = init_pos_emb_height (64) * patch_size (14) */
int h2g_mm_kimik25_prepare(conv *c)
{
    int64_t h, p;
    if (!int_of(c, "init_pos_emb_height|=64", "init_pos_emb_height", &h) || !int_of(c, "patch_size|=14", "patch_size", &p))
        return -1;
    if (h < 0 || p < 0 || (p && h > INT64_MAX / p))
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json vision_config init_pos_emb_height * patch_size "
                       "is out of range");
    return json_object_set_new(c->cfg, "image_size", json_integer(h * p)) ? mf_oom(c->st, c->dir) : 0;
}

/* An unsigned 32-bit value of key list src (what: its name) into key. */
static int put_u32(conv *c, const char *key, const char *src, const char *what, int64_t mul)
{
    int64_t x;
    if (!int_of(c, src, what, &x))
        return -1;
    if (x < 0 || (mul && x > UINT32_MAX / mul) || x * mul > UINT32_MAX)
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json %s = %lld (times %lld) does not fit a u32", what,
                       (long long)x, (long long)mul);
    mf_kv_u32(c->kv, key, (uint32_t)(x * mul));
    return 0;
}

/* KimiK25Model.set_gguf_parameters after the projector type: the position
 * embedding grid (vision.pos_emb_* without the clip. prefix, as written),
 * use_gelu = (projector_hidden_act == "gelu"), projector_ln_eps (1e-5),
 * the scale factor merge_kernel_size[0], min pixels 8 * p * p and max
 * pixels in_patch_limit (16384, preprocessor) * p * p */
int h2g_mm_kimik25_keys(conv *c)
{
    int64_t p;
    if (!int_of(c, "patch_size|=14", "patch_size", &p) || p < 0 || p > 65535)
        return c->st->code ? -1 : mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json patch_size out of range");
    if (put_u32(c, "vision.pos_emb_height", "init_pos_emb_height|=64", "init_pos_emb_height", 1) ||
        put_u32(c, "vision.pos_emb_width", "init_pos_emb_width|=64", "init_pos_emb_width", 1) ||
        put_u32(c, "vision.pos_emb_time", "init_pos_emb_time|=4", "init_pos_emb_time", 1))
        return -1;
    json_t *act = h2g_lookup(c, "projector_hidden_act|=gelu");
    mf_kv_bool(c->kv, "clip.use_gelu", json_is_string(act) && !strcmp(json_string_value(act), "gelu"));
    json_decref(act);
    json_t *eps = h2g_lookup(c, "projector_ln_eps|=1e-5");
    if (!json_is_number(eps)) {
        json_decref(eps);
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json projector_ln_eps is not a number");
    }
    mf_kv_f32(c->kv, "clip.vision.attention.layer_norm_epsilon", (float)json_number_value(eps));
    json_decref(eps);
    json_t *mk = h2g_hparam(c, "merge_kernel_size");
    int64_t merge = 2;
    if (mk && (!json_is_array(mk) || h2g_need_int(c, json_array_get(mk, 0), "merge_kernel_size[0]", &merge)))
        return c->st->code ? -1 : mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json merge_kernel_size is not a list");
    if (merge < 0 || merge > UINT32_MAX)
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json merge_kernel_size[0] does not fit a u32");
    mf_kv_u32(c->kv, "clip.vision.projector.scale_factor", (uint32_t)merge);
    mf_kv_u32(c->kv, "clip.vision.image_min_pixels", (uint32_t)(8 * p * p));
    return put_u32(c, "clip.vision.image_max_pixels", "pre:in_patch_limit|=16384", "in_patch_limit", p * p);
}

/* Qwen3VLVisionModel.__init__: image_size, when absent, int(sqrt(
 * num_position_embeddings (2304)) * patch_size (16)) */
int h2g_mm_qwen3vl_prepare(conv *c)
{
    if (h2g_hparam(c, "image_size"))
        return 0;
    json_t *np = h2g_lookup(c, "num_position_embeddings|=2304"), *ps = h2g_lookup(c, "patch_size|=16");
    int rc = 0;
    if (!json_is_number(np) || !json_is_number(ps) || json_number_value(np) < 0)
        rc = mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json vision_config num_position_embeddings and "
                     "patch_size must be numbers");
    double x = rc ? 0 : sqrt(json_number_value(np)) * json_number_value(ps);
    if (rc == 0 && !(x >= 0 && x < 4294967296.0))
        rc = mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json vision_config: image size out of range");
    if (rc == 0 && json_object_set_new(c->cfg, "image_size", json_integer((int64_t)x)))
        rc = mf_oom(c->st, c->dir);
    json_decref(np);
    json_decref(ps);
    return rc;
}

/* Qwen3VLVisionModel: [False] * int(num_hidden_layers or 0), True at each
 * deepstack_visual_indexes entry (an index past the layers is an error);
 * NULL (not written) when there are no layers */
json_t *h2g_mm_deepstack_layers(conv *c)
{
    json_t *nl = h2g_hparam(c, "num_hidden_layers"), *ix = h2g_hparam(c, "deepstack_visual_indexes");
    int64_t n = 0, k;
    if (nl && !json_is_null(nl) && h2g_need_int(c, nl, "num_hidden_layers", &n))
        return NULL;
    if (n <= 0)
        return NULL;
    if (n > (1 << 20)) {
        mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json vision_config depth is out of range");
        return NULL;
    }
    json_t *a = json_array();
    for (int64_t i = 0; a && i < n; i++)
        json_array_append_new(a, json_false());
    size_t i;
    json_t *e;
    json_array_foreach(ix, i, e) {
        if (h2g_need_int(c, e, "deepstack_visual_indexes", &k) || k < -n || k >= n) {
            if (!c->st->code)
                mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "deepstack_visual_indexes[%zu] is not a layer (of %lld)", i,
                        (long long)n);
            json_decref(a);
            return NULL;
        }
        json_array_set_new(a, (size_t)(k < 0 ? k + n : k), json_true()); /* Python's negative index */
    }
    if (!a)
        mf_oom(c->st, c->dir);
    return a;
}
