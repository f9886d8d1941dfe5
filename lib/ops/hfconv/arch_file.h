/* arch_file.h - an architecture described by a JSON file (`mfmt convert
 * --arch-file FAMILY.json`, doc/arch-file.md): the same conv_arch row, name
 * rows and reverse names the built-in tables hold, read at run time, so a
 * family converts without a new mfmt. Both directions read one file: the
 * GGUF -> HF names and inverse operations are derived from the forward
 * entries (permute_q <-> unpermute, add_one <-> sub_one, stack <-> unstack,
 * split <-> concat, transpose <-> transpose, neg_exp <-> log_neg). */
#ifndef MF_HFCONV_ARCH_FILE_H
#define MF_HFCONV_ARCH_FILE_H
#include "ops/hfconv/arch.h"
#include "ops/hfconv/gguf2hf.h"

typedef struct conv_arch_file {
    mf_arena *a;
    const char *path;
    conv_arch fwd;            /* bit -1: no bit of arch_names.inc */
    hf_rev_arch rev;          /* class and model_type: the first of `variants` that fits */
    /* "reverse": up to 4 (class, model_type, when) choices; when: a GGUF key
     * without the architecture's prefix that must be non-zero ("expert_count":
     * Mixtral), NULL: always */
    struct {
        const char *hf_class, *model_type, *when;
    } variants[4];
    size_t n_variants;
    const char *pre_tokenizer; /* BPE: the name when the check-text hash is not llama.cpp's; NULL: by family */
    const conv_name_row *names; /* HF name ("{bid}" the block) -> GGUF name, every row of this family */
    size_t n_names;
} conv_arch_file;

/* Reads and checks the file strictly: a JSON error by line and column, an
 * unknown key, op, calc, block, flag or tokenizer kind by its JSON path
 * ($.tensors[3].op) and line/column. NULL with st set on failure. */
conv_arch_file *conv_arch_file_load(const char *path, mf_status *st);
void conv_arch_file_free(conv_arch_file *f);

/* A pattern of an arch file ("model.layers.{bid}.mlp.experts.{x}.w1",
 * optionally ending in .weight/.bias) against a tensor name: "{bid}" and
 * "{x}" are decimal numbers; without its own suffix the pattern also takes
 * the name with ".weight" or ".bias". */
bool conv_pattern_match(const char *pat, const char *name);

/* The GGUF -> HF op that undoes a forward op (permute_q -> unpermute,
 * add_one -> sub_one, stack -> unstack, split -> concat...); R_PLAIN when
 * none is needed (renames, skips). The arch files' reverse rows and
 * tests/test_hfconv_tables.c's check of the built-in ones both use it. */
hf_rev_op conv_reverse_op(conv_op op);

#endif
