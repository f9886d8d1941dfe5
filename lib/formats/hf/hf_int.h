/* hf_int.h - the Hugging Face family's shared internals: the hf-dir
 * reader's pieces (hf_dir.c, hf_tokenizer.c), metadata helpers, transformers'
 * remote code (hf_remote.c) and the weights file from_pretrained picks. What
 * the layers above use of this family (its JSON, LFS-pointer, model-card and
 * SentencePiece readers, for the operations on HF directories) is declared
 * in formats/formats.h. */
#ifndef MF_HF_INT_H
#define MF_HF_INT_H
#include "formats/formats.h"

/* Adds a JSON value to m's metadata under `key`: objects are flattened into
 * key.sub keys `flatten` levels deep (deeper ones, and arrays that are not
 * of one scalar type, become their compact JSON text). */
int mf_hf_meta_json(mf_model *m, const char *key, json_t *v, int flatten, mf_status *st);
int mf_hf_meta_str(mf_model *m, const char *key, const char *s, mf_status *st);
int mf_hf_meta_int(mf_model *m, const char *key, int64_t v, mf_status *st);
int mf_hf_meta_bool(mf_model *m, const char *key, bool v, mf_status *st);

/* The hf-dir reader's pieces (hf_dir.c, hf_tokenizer.c). mf_hfdir_json:
 * DIR/NAME as a JSON object, NULL when absent, an LFS pointer, malformed or
 * not an object (a breach when strict, else a note on m). */
json_t *mf_hfdir_json(mf_model *m, const char *dir, const char *name, bool strict,
                      mf_status *st);
/* Tokenizer files: tokenizer.* and chat_template metadata, and checks
 * against config.json (cfg may be NULL). */
int mf_hfdir_tokenizer(mf_model *m, const char *dir, const json_t *cfg, bool strict,
                       mf_status *st);

/* ----------------------------------------------------------- remote code */
/* One "auto_map" entry: transformers imports py_file (relative to the
 * directory) when loading with trust_remote_code=True. */
typedef struct mf_hf_code {
    const char *json_file;  /* "config.json", "tokenizer_config.json", ... */
    const char *auto_class; /* "AutoModelForCausalLM" */
    const char *ref;        /* "modeling_x.XForCausalLM" or "repo--modeling_x.X" */
    char py_file[512];      /* "modeling_x.py" */
    bool present;           /* the file is in the directory */
    bool other_repo;        /* "repo--...": code fetched from another repository */
} mf_hf_code;
typedef void (*mf_hf_code_fn)(void *ctx, const mf_hf_code *c);
/* Calls fn for every auto_map entry of dir's configs (only that config
 * file when `only` is given); returns how many there are. */
int mf_hf_remote_code(const char *dir, const char *only, mf_hf_code_fn fn, void *ctx);
/* scan's code_around hook (the HF directory reader): the remote code a
 * config.json or .py file at `path` is part of, each finding to fn. */
void mf_hf_code_around(const char *path, mf_code_fn fn, void *ctx);

/* ---------------------------------------------------------- weights file */
typedef enum mf_hf_weights {
    MF_HF_W_NONE = 0,
    MF_HF_W_SAFETENSORS,       /* model.safetensors */
    MF_HF_W_SAFETENSORS_INDEX, /* model.safetensors.index.json + shards */
    MF_HF_W_BIN,               /* pytorch_model.bin */
    MF_HF_W_BIN_INDEX,         /* pytorch_model.bin.index.json + shards */
} mf_hf_weights;
/* The weights file transformers' from_pretrained picks in `dir`, in its
 * order: model.safetensors, model.safetensors.index.json, pytorch_model.bin,
 * pytorch_model.bin.index.json. *name gets the file name (static). */
mf_hf_weights mf_hf_pick_weights(const char *dir, const char **name);

/* ------------------------------------------- pre-quantized checkpoints */
/* hf_prequant.c: after the weights are open, the packed weights
 * config.json's quantization_config names (GPTQ, AWQ, FP8, compressed-
 * tensors, gpt-oss MXFP4, ModelOpt NVFP4), described for lib/quant's
 * dequantizers and recorded as quant.* metadata; kept in m->priv. A packed
 * weight whose parts break the layout's rules is a breach when strict,
 * else a note, and reading it fails with that rule. */
typedef struct mf_hf_prequant mf_hf_prequant;
int mf_hf_prequant_open(mf_model *m, const json_t *cfg, bool strict, mf_status *st);

#endif
