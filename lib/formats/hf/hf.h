/* hf.h - Hugging Face model directories: the pieces shared by the hf-dir
 * reader (hfdir.c) and the operations on such directories (lib/ops/hf_*.c,
 * convert_gguf.c, estimate.c): lenient JSON files, Git LFS pointers, the
 * weights file from_pretrained would load, the model card's YAML front
 * matter and SentencePiece tokenizer.model files. */
#ifndef MF_HF_H
#define MF_HF_H
#include "core/core.h"

#include <jansson.h>

/* ------------------------------------------------------------ JSON files */
/* Loads a JSON file (at most 1 GiB) as Python's json module would accept it:
 * duplicate keys allowed (the last wins); integers beyond 64 bits (a
 * tokenizer_config.json's model_max_length of 10^30) become reals instead of
 * failing the whole file. NULL with st filled ("FILE: byte N: ..."). */
json_t *mf_hf_load_json(const char *path, mf_status *st);
/* DIR/config.json loaded as mf_hf_load_json does. When it does not exist:
 * required, NULL with st "DIR/config.json: config.json is missing"; else
 * NULL with st untouched. */
json_t *mf_hf_load_config(const char *dir, bool required, mf_status *st);
/* A JSON integer as Python's isinstance(v, int) sees it (true/false are ints
 * too); false for anything else. */
bool mf_hf_json_int(const json_t *v, int64_t *out);

/* Adds a JSON value to m's metadata under `key`: objects are flattened into
 * key.sub keys `flatten` levels deep (deeper ones, and arrays that are not
 * of one scalar type, become their compact JSON text). */
int mf_hf_meta_json(mf_model *m, const char *key, json_t *v, int flatten, mf_status *st);
int mf_hf_meta_str(mf_model *m, const char *key, const char *s, mf_status *st);
int mf_hf_meta_int(mf_model *m, const char *key, int64_t v, mf_status *st);
int mf_hf_meta_bool(mf_model *m, const char *key, bool v, mf_status *st);

/* The hf-dir reader's pieces (hfdir.c, hfdir_tokenizer.c). mf_hfdir_json:
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

/* ------------------------------------------------------ Git LFS pointers */
/* A Git LFS pointer file (git-lfs spec v1: "version https://git-lfs.github.com/
 * spec/v1", "oid sha256:<64 hex>", "size <n>") left in place of the real file.
 * Returns true for a pointer and fills the promised size and oid (either may
 * be NULL). Reads at most the first 1 KiB of the file. */
bool mf_hf_lfs_pointer(const char *path, uint64_t *size, char oid[65]);

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

/* ------------------------------------------------------------ model card */
/* The YAML front matter of a model card (README.md): the lines between a
 * first line "---" and the next line "---", read (with libyaml) as PyYAML's
 * safe_load reads it: YAML 1.1 null/bool/int/float for plain scalars.
 * Returns a new JSON object; an empty object when there is no front matter;
 * NULL with st filled (MF_ERR_FORMAT, "front matter line N: ...", no file
 * named) when the YAML is malformed, deeper than 64, holds more than 2^20
 * values or uses anchors, aliases or tags (refused, never expanded). */
json_t *mf_hf_front_matter(const char *text, size_t n, mf_status *st);

/* ---------------------------------------------------- SentencePiece model */
enum { MF_SPM_NORMAL = 1, MF_SPM_UNKNOWN = 2, MF_SPM_CONTROL = 3,
       MF_SPM_USER_DEFINED = 4, MF_SPM_UNUSED = 5, MF_SPM_BYTE = 6 };
enum { MF_SPM_UNIGRAM = 1, MF_SPM_BPE = 2, MF_SPM_WORD = 3, MF_SPM_CHAR = 4 };

typedef struct mf_spm_piece {
    const char *text; /* into the buffer given to mf_spm_parse; not NUL-ended */
    uint32_t len;
    float score;
    int type;         /* MF_SPM_* (NORMAL when absent) */
} mf_spm_piece;

typedef struct mf_spm {
    mf_spm_piece *pieces;
    size_t n;
    int model_type;        /* trainer_spec.model_type (UNIGRAM by default) */
    bool byte_fallback;    /* trainer_spec.byte_fallback */
    int32_t unk_id, bos_id, eos_id, pad_id;   /* trainer_spec ids */
    bool add_dummy_prefix, remove_extra_whitespaces; /* normalizer_spec */
} mf_spm;

/* Parses a sentencepiece ModelProto (sentencepiece_model.proto): pieces = 1,
 * trainer_spec = 2, normalizer_spec = 3. */
int mf_spm_parse(const uint8_t *buf, uint64_t n, const char *file, mf_spm *out,
                 mf_status *st);
void mf_spm_free(mf_spm *s);
const char *mf_spm_model_name(int model_type); /* "BPE", "Unigram", ... */

#endif
