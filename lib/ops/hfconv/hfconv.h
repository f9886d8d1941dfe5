/* hfconv.h - the interface of the converter wing lib/ops/hfconv/ (Hugging
 * Face directory <-> GGUF, as llama.cpp's convert_hf_to_gguf.py does it):
 * the pieces code outside the wing (tests, fuzzers) calls. The public entry
 * points (mf_convert_to_gguf, mf_convert_to_hf, mf_llama_load_problems) are
 * declared in include/mfmt/ and implemented inside the wing. Generic
 * operations of lib/ops include no header of the wing (rule 7 of
 * tests/check_layers.sh); should one ever need to, this is the way in. */
#ifndef MF_HFCONV_H
#define MF_HFCONV_H
#include "ops/hf_ops.h"

/* ------------------------------------------------------------ convert */

/* The architectures mf_convert_to_gguf (mfmt/convert.h) converts: the i-th
 * GGUF architecture's name and its k-th HF class (config.json
 * "architectures"[0]); NULL past the end. */
const char *mf_convert_arch_name(size_t i);
const char *mf_convert_arch_class(size_t i, size_t k);

/* ------------------------------------------------- converter's pieces */

/* Tokenizer keys (tokenizer.ggml.*) of a directory, as the converter's
 * set_vocab for the architecture writes them. kind: a conv_vocab of
 * ops/hfconv/arch.h (V_LLAMA: SentencePiece, then tokenizer.json BPE,
 * add_prefix_space...); arch: the GGUF architecture (BPE pre-tokenizer
 * names depend on it). */
typedef struct mf_hf_vocab_opts {
    int kind;
    const char *arch;
    void (*note)(void *user, const char *msg); /* optional: see mf_convert_gguf_opts */
    void *note_user;
    bool l2026;        /* gguf-py 0.18's keys (MF_CONVERT_LAYOUT_2026_02) */
    /* a BPE pre-tokenizer name for a check-text hash llama.cpp's table does
     * not know (an arch file's "pre_tokenizer"), before the family's; NULL: none */
    const char *pre_fallback;
} mf_hf_vocab_opts;
int mf_hf_vocab_keys(const char *dir, const json_t *cfg, const mf_hf_vocab_opts *o,
                     mf_kvlist *kv, mf_status *st);

/* GGUFWriter.get_total_parameter_count: all output tensors' elements; of
 * them the experts' ("_exps." tensors, counted once per expert) and the
 * rest; the mean expert count of the expert tensors (0: none). */
typedef struct mf_hf_params {
    int64_t total, shared, expert, expert_count;
} mf_hf_params;

/* gguf-py Metadata: general.* keys from the model card, config.json's
 * _name_or_path and the directory's name; the size label from the
 * parameter counts ("4x107K" for experts). */
typedef struct mf_hf_meta_in {
    const char *model_name;    /* --model-name: general.name, over everything */
    const char *override_path; /* --metadata: a JSON file of general.* keys, or NULL */
    const char *output_type;   /* "F16", "Q8_0", ... for the file name */
    bool vocab_only;           /* the name gets "-vocab", no size or type */
    bool mmproj;               /* the name is "mmproj-" + the name without the size label */
    char *file_name;           /* out: naming_convention(...) + ".gguf", or NULL */
    size_t file_name_cap;
} mf_hf_meta_in;
int mf_hf_general_meta(const char *dir, const json_t *cfg, const mf_hf_params *params,
                       mf_hf_meta_in *in, mf_kvlist *kv, mf_status *st);

typedef struct mf_hf_id {
    char *full_name, *org, *basename, *finetune, *version, *size_label;
} mf_hf_id;
/* Metadata.get_model_id_components: "org/Name-7B-Instruct-v0.1" parts. */
int mf_hf_id_components(const char *id, int64_t total_params, mf_hf_id *out);
void mf_hf_id_free(mf_hf_id *c);
char *mf_hf_id_to_title(const char *id); /* malloc'd */
/* "115K", "7.2B": utility.model_weight_count_rounded_notation */
void mf_hf_size_label(int64_t total_params, char *out, size_t cap);

#endif
