/* bpe_int.h - what bpe_encode.c (model, added tokens, post-processor) and
 * bpe_steps.c (normalizers, pre-tokenizers) share. */
#ifndef MF_BPE_INT_H
#define MF_BPE_INT_H
#include "ops/hfconv/bpe_encode.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

/* A piece of the input on its way through the pipeline: text (id < 0) or
 * an added token already found (its id). s is owned. */
typedef struct bpe_piece {
    char *s;
    size_t n;
    int32_t id;
    bool at_start; /* it starts where the input did (Metaspace's "first") */
} bpe_piece;
typedef MF_VEC(bpe_piece) bpe_pieces;

/* tokenizers' SplitDelimiterBehavior */
typedef enum bpe_behavior { B_REMOVED, B_ISOLATED, B_MERGED_PREVIOUS, B_MERGED_NEXT, B_CONTIGUOUS } bpe_behavior;

typedef enum bpe_step_kind { S_SPLIT, S_BYTELEVEL, S_PREPEND, S_REPLACE, S_METASPACE } bpe_step_kind;

/* Metaspace's prepend_scheme */
typedef enum bpe_prepend { P_ALWAYS, P_FIRST, P_NEVER } bpe_prepend;

/* One normalizer or pre-tokenizer, run on every text piece. */
typedef struct bpe_step {
    bpe_step_kind kind;
    pcre2_code *re;        /* S_SPLIT, S_REPLACE; S_BYTELEVEL with use_regex */
    bpe_behavior behavior; /* S_SPLIT */
    bool invert;           /* S_SPLIT */
    bool add_prefix_space; /* S_BYTELEVEL */
    char *text;            /* S_PREPEND: the prefix; S_REPLACE: the content; S_METASPACE: the replacement */
    bpe_prepend prepend;   /* S_METASPACE */
    bool split;            /* S_METASPACE */
} bpe_step;
typedef MF_VEC(bpe_step) bpe_steps;

/* tokenizer.json's "normalizer" / "pre_tokenizer" (null: none) as steps. */
int bpe_parse_normalizer(const json_t *j, bpe_steps *out, const char *what, mf_status *st);
int bpe_parse_pre_tokenizer(const json_t *j, bpe_steps *out, const char *what, mf_status *st);
void bpe_steps_free(bpe_steps *s);

/* Runs the steps over the text pieces of *ps (token pieces pass through). */
int bpe_run_steps(const bpe_steps *s, bpe_pieces *ps, const char *what, mf_status *st);

void bpe_pieces_free(bpe_pieces *ps);
/* A copy of s as a new piece (not at_start); empty text pieces are dropped. */
int bpe_piece_push(bpe_pieces *ps, const char *s, size_t n, int32_t id);
/* The piece pushed at index i (if one was) starts where the input did. */
void bpe_piece_mark_start(bpe_pieces *ps, size_t i, bool at_start);

/* The length of the UTF-8 sequence that starts with byte c (1 for a stray
 * continuation byte: the input was checked before). */
size_t bpe_utf8_len(uint8_t c);
uint32_t bpe_utf8_decode(const char *s, size_t n);
#endif
