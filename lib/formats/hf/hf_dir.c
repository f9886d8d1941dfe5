/* hf_dir.c - reader for Hugging Face model directories (format "hf-dir").
 *
 * A directory is many files that must agree (transformers' from_pretrained
 * and the hub's conventions): config.json (required), generation_config.json,
 * tokenizer files (hf_tokenizer.c), the model card's YAML front matter
 * (README.md) and the weights file from_pretrained picks (model.safetensors,
 * model.safetensors.index.json, pytorch_model.bin, pytorch_model.bin.index.json,
 * in that order), opened as a child model so its tensors are this model's.
 * A weights file that is still a Git LFS pointer is reported as not
 * downloaded, with the size the pointer promises. */
#include "formats/formats.h"
#include "formats/hf/hf_int.h"

#include <stdlib.h>

json_t *mf_hfdir_json(mf_model *m, const char *dir, const char *name, bool strict,
                      mf_status *st)
{
    char *path = mf_path_join(m->arena, dir, name);
    if (!path || !mf_path_exists(path))
        return NULL;
    uint64_t promised;
    if (mf_hf_lfs_pointer(path, &promised, NULL)) {
        if (strict)
            mf_breach(st, path, 0, "a Git LFS pointer, not the file: not downloaded (%llu bytes promised)",
                      (unsigned long long)promised);
        else
            mf_model_note(m, "%s is a Git LFS pointer: not downloaded (%llu bytes promised)", name,
                          (unsigned long long)promised);
        return NULL;
    }
    mf_status sub;
    mf_status_init(&sub);
    json_t *j = mf_hf_load_json(path, &sub);
    if (!j) {
        if (strict)
            mf_status_merge(st, &sub);
        else
            mf_model_note(m, "%s", sub.msg);
    } else if (!json_is_object(j)) {
        if (strict)
            mf_breach(st, path, 0, "must hold a JSON object");
        else
            mf_model_note(m, "%s does not hold a JSON object", name);
        json_decref(j);
        j = NULL;
    }
    mf_status_clear(&sub);
    return j;
}

/* config.json: required; its fields become config.* keys. */
static int read_config(mf_model *m, const char *dir, bool strict, json_t **cfg, mf_status *st)
{
    char *path = mf_path_join(m->arena, dir, "config.json");
    if (!path)
        return mf_oom(st, dir);
    if (!mf_path_exists(path))
        return mf_fail(st, MF_ERR_FORMAT, path, -1,
                       "config.json is missing: from_pretrained cannot build the model without it");
    if (mf_hf_lfs_pointer(path, NULL, NULL))
        return mf_fail(st, MF_ERR_FORMAT, path, 0, "a Git LFS pointer, not the file: not downloaded");
    *cfg = mf_hf_load_json(path, st);
    if (!*cfg)
        return -1;
    if (!json_is_object(*cfg))
        return mf_fail(st, MF_ERR_FORMAT, path, 0, "must hold a JSON object");
    json_t *arch = json_object_get(*cfg, "architectures");
    if (arch && !json_is_array(arch))
        mf_breach(st, path, -1, "\"architectures\" must be a list of class names");
    json_t *mt = json_object_get(*cfg, "model_type");
    if (!json_is_string(mt))
        mf_model_note(m, "config.json has no \"model_type\" (AutoConfig needs it)");
    return mf_hf_meta_json(m, "config", *cfg, 2, st);
}

/* The model card's front matter: card.* keys. */
static int read_card(mf_model *m, const char *dir, mf_status *st)
{
    char *path = mf_path_join(m->arena, dir, "README.md");
    if (!path)
        return mf_oom(st, dir);
    if (!mf_path_exists(path))
        return 0;
    char *text;
    size_t len;
    mf_status sub;
    mf_status_init(&sub);
    if (mf_read_small_file(path, 64u << 20, &text, &len, &sub)) {
        mf_model_note(m, "README.md not read: %s", sub.msg);
        mf_status_clear(&sub);
        return 0;
    }
    json_t *card = mf_hf_front_matter(text, len, &sub);
    free(text);
    if (!card) {
        mf_model_note(m, "README.md: model card metadata not read: %s", sub.msg);
        mf_status_clear(&sub);
        return 0;
    }
    static const char *const keys[] = {"license", "license_name", "license_link", "base_model",
                                       "base_model_relation", "library_name", "pipeline_tag",
                                       "tags", "datasets", "language", "model_name", NULL};
    int rc = 0;
    for (size_t i = 0; keys[i] && rc == 0; i++) {
        json_t *v = json_object_get(card, keys[i]);
        if (v) {
            char *k = mf_arena_printf(m->arena, "card.%s", keys[i]);
            rc = k ? mf_hf_meta_json(m, k, v, 0, st) : mf_oom(st, path);
        }
    }
    json_decref(card);
    return rc;
}

/* Shards named by an index that are LFS pointers; returns how many. */
static size_t lfs_shards(mf_model *m, const char *dir, const char *index, bool strict, mf_status *st)
{
    char *ipath = mf_path_join(m->arena, dir, index);
    mf_status sub;
    mf_status_init(&sub);
    json_t *j = ipath ? mf_hf_load_json(ipath, &sub) : NULL;
    mf_status_clear(&sub);
    json_t *wm = j ? json_object_get(j, "weight_map") : NULL;
    size_t found = 0;
    if (json_is_object(wm)) {
        mf_strset seen = {0};
        const char *k;
        json_t *v;
        json_object_foreach(wm, k, v) {
            const char *file = json_string_value(v);
            if (!file || strchr(file, '/') || mf_strset_add(&seen, file) != 1)
                continue;
            char *p = mf_path_join(m->arena, dir, file);
            uint64_t promised;
            if (p && mf_hf_lfs_pointer(p, &promised, NULL)) {
                found++;
                if (strict)
                    mf_breach(st, p, 0, "shard is a Git LFS pointer, not the weights: not downloaded "
                              "(%llu bytes promised; run git lfs pull)", (unsigned long long)promised);
                else
                    mf_model_note(m, "%s is a Git LFS pointer: not downloaded (%llu bytes promised)", file,
                                  (unsigned long long)promised);
            }
        }
        mf_strset_free(&seen);
    }
    json_decref(j);
    return found;
}

static int open_weights(mf_model *m, const char *dir, unsigned flags, mf_status *st)
{
    bool strict = flags & MF_OPEN_STRICT;
    const char *name;
    mf_hf_weights kind = mf_hf_pick_weights(dir, &name);
    if (kind == MF_HF_W_NONE) {
        if (strict)
            mf_breach(st, dir, -1, "no weights: none of model.safetensors, model.safetensors.index.json, "
                      "pytorch_model.bin, pytorch_model.bin.index.json is here");
        else
            mf_model_note(m, "no weights file (model.safetensors, pytorch_model.bin or their index)");
        return 0;
    }
    char *path = mf_path_join(m->arena, dir, name);
    if (!path || mf_hf_meta_str(m, "weights.file", name, st))
        return path ? -1 : mf_oom(st, dir);
    uint64_t promised;
    char oid[65];
    if (mf_hf_lfs_pointer(path, &promised, oid)) {
        if (strict)
            mf_breach(st, path, 0, "a Git LFS pointer, not the weights: not downloaded "
                      "(%llu bytes promised, sha256 %s; run git lfs pull)",
                      (unsigned long long)promised, oid);
        else
            mf_model_note(m, "%s is a Git LFS pointer: not downloaded (%llu bytes promised)", name,
                          (unsigned long long)promised);
        return 0;
    }
    if ((kind == MF_HF_W_SAFETENSORS_INDEX || kind == MF_HF_W_BIN_INDEX) &&
        lfs_shards(m, dir, name, strict, st) > 0)
        return 0;
    mf_status sub;
    mf_status_init(&sub);
    mf_model *child = mf_model_open_child(m, path, flags, &sub);
    if (!child && sub.code == MF_ERR_UNSUPPORTED && !strict) {
        /* e.g. .bin weights before mfmt reads them: the rest is still worth showing */
        mf_model_note(m, "weights not read: %s", sub.msg);
        mf_status_clear(&sub);
        return 0;
    }
    mf_status_merge(st, &sub);
    mf_status_clear(&sub);
    if (child)
        mf_hf_meta_str(m, "weights.format", mf_format_name(child->format), st);
    return child ? 0 : -1;
}

/* ------------------------------------------------- Mistral's own format */

/* params.json + consolidated.safetensors without the Hugging Face weight
 * files: Mistral's format (what convert_hf_to_gguf.py --mistral-format
 * and `mfmt convert` read; doc/hf.md) */
static bool mistral_layout(const char *dir)
{
    const char *name;
    char *a = mf_path_join_new(dir, "params.json"), *b = mf_path_join_new(dir, "consolidated.safetensors");
    bool yes = a && b && mf_path_exists(a) && mf_path_exists(b) && mf_hf_pick_weights(dir, &name) == MF_HF_W_NONE;
    free(a);
    free(b);
    return yes;
}

/* The tokenizer the converter's MistralVocab reads: tekken.json, else the
 * last SentencePiece file in sorted (byte) order */
static int mistral_tokenizer(mf_model *m, const char *dir, mf_status *st)
{
    static const char *const files[] = {"tekken.json", "tokenizer.model.v7", "tokenizer.model.v3",
                                        "tokenizer.model.v2", "tokenizer.model.v15", "tokenizer.model.v13",
                                        "tokenizer.model.v11", "tokenizer.model.v1", "tokenizer.model", NULL};
    for (size_t i = 0; files[i]; i++) {
        char *p = mf_path_join(m->arena, dir, files[i]);
        if (!p)
            return mf_oom(st, dir);
        if (mf_path_exists(p))
            return mf_hf_meta_str(m, "tokenizer.kind", i ? "sentencepiece" : "tekken", st) ||
                   mf_hf_meta_str(m, "tokenizer.file", files[i], st);
    }
    mf_model_note(m, "no tokenizer (tekken.json or tokenizer.model.v*)");
    return 0;
}

static int open_mistral(mf_model *m, const char *dir, unsigned flags, mf_status *st)
{
    bool strict = flags & MF_OPEN_STRICT;
    json_t *params = mf_hfdir_json(m, dir, "params.json", strict, st);
    int rc = params ? mf_hf_meta_json(m, "params", params, 2, st) : st->code ? -1 : 0;
    if (rc == 0)
        rc = mistral_tokenizer(m, dir, st);
    char *path = mf_path_join(m->arena, dir, "consolidated.safetensors");
    if (rc == 0 && !path)
        rc = mf_oom(st, dir);
    if (rc == 0)
        rc = mf_hf_meta_str(m, "weights.file", "consolidated.safetensors", st);
    mf_model *child = rc == 0 ? mf_model_open_child(m, path, flags, st) : NULL;
    if (rc == 0 && !child)
        rc = -1;
    if (child)
        rc = mf_hf_meta_str(m, "weights.format", mf_format_name(child->format), st);
    /* MistralModel: arch mistral3 with llama_4_scaling, else llama; MistralMoeModel with "moe" */
    const char *arch = json_object_get(params, "moe") ? "deepseek2 (moe)"
                       : json_object_get(params, "llama_4_scaling") ? "mistral3" : "llama";
    snprintf(m->version, sizeof(m->version), "Mistral format (params.json), GGUF arch %s", arch);
    json_decref(params);
    return rc == 0 && st->code == MF_OK ? 0 : -1;
}

static int open_hfdir(mf_model *m, const char *dir, unsigned flags, mf_status *st)
{
    bool strict = flags & MF_OPEN_STRICT;
    if (mistral_layout(dir))
        return open_mistral(m, dir, flags, st);
    json_t *cfg = NULL;
    int rc = read_config(m, dir, strict, &cfg, st);
    if (rc == 0) {
        json_t *gen = mf_hfdir_json(m, dir, "generation_config.json", strict, st);
        rc = gen ? mf_hf_meta_json(m, "generation", gen, 1, st) : 0;
        json_decref(gen);
    }
    if (rc == 0)
        rc = mf_hfdir_tokenizer(m, dir, cfg, strict, st);
    if (rc == 0)
        rc = read_card(m, dir, st);
    if (rc == 0)
        rc = open_weights(m, dir, flags, st);
    if (rc == 0 && cfg)
        rc = mf_hf_prequant_open(m, cfg, strict, st);
    const char *mt = json_string_value(json_object_get(cfg, "model_type"));
    const char *wf = json_string_value(json_object_get(cfg, "transformers_version"));
    snprintf(m->version, sizeof(m->version), "%s%s%s", mt ? mt : "no model_type",
             wf ? ", transformers " : "", wf ? wf : "");
    json_decref(cfg);
    return rc == 0 && st->code == MF_OK ? 0 : -1;
}

/* ------------------------------------------------------------- detection */

static int probe_hfdir(mf_probe *p)
{
    bool hf_weights = mf_probe_dir_has(p, "model.safetensors.index.json") ||
                      mf_probe_dir_has(p, "pytorch_model.bin.index.json") ||
                      mf_probe_dir_has(p, "model.safetensors") || mf_probe_dir_has(p, "pytorch_model.bin");
    if (!hf_weights && mf_probe_dir_has(p, "params.json") && mf_probe_dir_has(p, "consolidated.safetensors"))
        return mf_probe_found(p, MF_FMT_HF_DIR, "Mistral-format model directory (params.json, "
                              "consolidated.safetensors)");
    if (mf_probe_dir_has(p, "config.json"))
        return mf_probe_found(p, MF_FMT_HF_DIR, "Hugging Face model directory");
    if (mf_probe_dir_has(p, "model.safetensors.index.json") ||
        mf_probe_dir_has(p, "pytorch_model.bin.index.json") ||
        mf_probe_dir_has(p, "model.safetensors") || mf_probe_dir_has(p, "pytorch_model.bin"))
        return mf_probe_found(p, MF_FMT_HF_DIR, "model directory without config.json");
    return MF_PROBE_NO;
}

const mf_reader mf_reader_hfdir = {
    .format = MF_FMT_HF_DIR,
    .name = "hf-dir",
    .probe_dir = probe_hfdir,
    .open = open_hfdir,
    .scan = &(const mf_scan_hooks){
        .code_around = mf_hf_code_around,
    },
    .logical_view = mf_hf_prequant_view,
};
