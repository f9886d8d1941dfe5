/* hf2gguf_mmproj.c - `convert --mmproj`: the vision tower and projector of
 * a multimodal directory as the separate GGUF llama.cpp's converter
 * (ecbcb7ea) writes with --mmproj (MmprojModel): the class's row of
 * conv_mmprojs[] (mmproj_table.c) chosen, its hparams made what
 * MmprojModel.__init__ makes them (the vision config, with the class's
 * renames; the whole config.json kept as global_config; the preprocessor
 * config merged), its tensor_force_quant, and its computed keys. The rest
 * (rules, name map, streaming, keys) is the text path's. */
#include "ops/hfconv/hf2gguf_int.h"

#include <math.h>
#include <stdlib.h>

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
    char known[1024] = "";
    size_t n = 0;
    for (size_t i = 0; i < conv_n_mmprojs && n < sizeof(known); i++)
        for (const char *const *k = conv_mmprojs[i].a.classes; *k && n < sizeof(known); k++)
            if (mmproj_row(*k) == &conv_mmprojs[i]) /* a class in two rows: once */
                n += (size_t)snprintf(known + n, sizeof(known) - n, "%s%s", n ? ", " : "", *k);
    return mf_fail(c->st, MF_ERR_UNSUPPORTED, c->dir, -1, "--mmproj: no vision projector rule for %s (mfmt writes "
                   "the mmproj of: %s)", cls ? cls : "(none: config.json has no \"architectures\")", known);
}

/* One of the row's "?GUARD:k=SRC" changes of the vision config. */
static int apply_fix(conv *c, const char *fix)
{
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", fix);
    char *p = buf;
    if (*p == '?') { /* "?g:" key g present, "?g=v:" g is the string v */
        char *colon = strchr(p, ':');
        if (!colon)
            return mf_fail(c->st, MF_ERR_USAGE, c->dir, -1, "mmproj config change \"%s\" malformed", fix);
        *colon = 0;
        char *eq = strchr(p + 1, '=');
        if (eq)
            *eq = 0;
        json_t *g = h2g_hparam(c, p + 1);
        if (!g || (eq && (!json_is_string(g) || strcmp(json_string_value(g), eq + 1))))
            return 0;
        p = colon + 1;
    }
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

/* MmprojModel.__init__ after the class is known: hparams = vision_config
 * (the class's changes applied), global_config = config.json, the block
 * count of the vision encoder, the preprocessor config; the MMPROJ name map. */
int h2g_mmproj_setup(conv *c)
{
    const char *cls = json_string_value(json_array_get(h2g_hparam(c, "architectures"), 0));
    const char *mt = json_string_value(h2g_hparam(c, "model_type"));
    const conv_mmproj *row = cls ? pick_row(cls, mt) : NULL;
    if (!row)
        return no_row(c, cls);
    if (row->model_type && (!mt || strcmp(mt, row->model_type)))
        return mf_fail(c->st, MF_ERR_UNSUPPORTED, c->dir, -1, "--mmproj: %s with model_type \"%s\": the vision "
                       "projectors mfmt knows for it are by model_type (%s, ...)", cls, mt ? mt : "(none)",
                       row->model_type);
    json_t *vc = h2g_hparam(c, "vision_config");
    if (!json_is_object(vc))
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "--mmproj: config.json has no vision_config: no vision "
                       "tower to write (%s)", cls);
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
    c->global = c->cfg;
    c->cfg = json_deep_copy(vc);
    c->pre = json_object();
    if (!c->cfg || !c->pre)
        return mf_oom(c->st, c->dir);
    for (const char *const *f = row->fixes; f && *f; f++)
        if (apply_fix(c, *f))
            return -1;
    if (row->prepare && row->prepare(c))
        return -1;
    static const char *const block_keys[] = {"n_layers", "num_hidden_layers", "n_layer", "num_layers", "depth",
                                             "encoder_layers", "vt_num_hidden_layers", NULL};
    json_t *bc = h2g_find_hparam(c, block_keys);
    if (!bc)
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json vision_config has no num_hidden_layers "
                       "(or depth)");
    if (h2g_need_int(c, bc, "vision_config.num_hidden_layers", &c->block_count))
        return -1;
    if (c->block_count < 0 || c->block_count > (1 << 20))
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json vision_config block count is out of range");
    /* LlavaVisionModel.__init__ (pixtral): the [IMG_BREAK] id, an error when absent */
    for (const conv_rule *r = c->rules; r->pat; r++)
        if (r->op == OP_PICK_ROW && h2g_token_id(c, r->count_key, &c->pick_id))
            return -1;
    /* preprocessor_config.json (media_proc_cfg lifted), then processor_config.json (image_processor lifted) */
    return merge_preprocessor(c, "preprocessor_config.json", "media_proc_cfg") ||
           merge_preprocessor(c, "processor_config.json", "image_processor") ? -1 : 0;
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
        if (strstr(f->on == 's' ? src : gguf, f->pat))
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
    if (!strcmp(o->name, "v.position_embd.weight") || !ends_with(o->name, ".weight"))
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

/* Llama4VisionModel: int(1.0 / pixel_shuffle_ratio) */
json_t *h2g_mm_inverse_ratio(conv *c)
{
    json_t *r = h2g_hparam(c, "pixel_shuffle_ratio");
    if (!json_is_number(r) || !(json_number_value(r) > 0)) {
        mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json vision_config pixel_shuffle_ratio must be a positive "
                "number");
        return NULL;
    }
    double x = 1.0 / json_number_value(r);
    if (x >= 4294967296.0) {
        mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json vision_config pixel_shuffle_ratio is too small");
        return NULL;
    }
    return json_integer((int64_t)x);
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
