/* bpe_encode.h - a byte-level BPE tokenizer that runs a Hugging Face
 * tokenizer.json the way the `tokenizers` library does (internal to
 * lib/ops). It exists so the converter can name the pre-tokenizer as
 * llama.cpp's does: tokenize a check text and hash the ids
 * (hf2gguf_vocab.c). What it runs (anything else: MF_ERR_UNSUPPORTED):
 *  - added tokens, split off first (non-normalized ones on the raw text,
 *    normalized ones after the normalizer), longest leftmost match, with
 *    single_word / lstrip / rstrip;
 *  - normalizers: none, NFC (taken as the identity: see bpe_encode.c),
 *    Prepend, Replace, Sequence of these;
 *  - pre-tokenizers: ByteLevel (add_prefix_space, use_regex), Split
 *    (String or Regex pattern, every behavior, invert), Digits,
 *    Punctuation, Metaspace (prepend_scheme, split), Sequence of these;
 *  - model BPE: merges by rank, ignore_merges, byte_fallback, unk_token;
 *  - post-processors: TemplateProcessing, RobertaProcessing,
 *    BertProcessing, ByteLevel, Sequence; and transformers' classes that
 *    rebuild the template from tokenizer_config.json's add_bos_token /
 *    add_eos_token (LlamaTokenizerFast and kin).
 * Regexes run in PCRE2 (UTF + UCP, multiline as Oniguruma's Ruby syntax
 * is); doc/hf.md lists where it and Oniguruma could differ. */
#ifndef MF_BPE_ENCODE_H
#define MF_BPE_ENCODE_H
#include "core/core.h"

#include <jansson.h>

typedef struct mf_bpe mf_bpe;
typedef MF_VEC(int32_t) mf_bpe_ids;

/* Builds the tokenizer of tokenizer.json tj (tcfg: tokenizer_config.json or
 * NULL); what names the directory in errors. NULL with st set when the file
 * has a part this encoder does not run or is malformed. */
mf_bpe *mf_bpe_new(const json_t *tj, const json_t *tcfg, const char *what, mf_status *st);

/* tokenizer.encode(text, add_special_tokens=add_special): appends the ids
 * to *out. text: n bytes of UTF-8. */
int mf_bpe_encode(const mf_bpe *b, const char *text, size_t n, bool add_special, mf_bpe_ids *out,
                  mf_status *st);

void mf_bpe_free(mf_bpe *b);

/* llama.cpp's check: sha256 of Python's str() of the ids
 * tokenizer.encode(chktxt) gives ("[1, 2, 3]"), as 64 hex digits. */
int mf_bpe_chkhsh(const mf_bpe *b, char hex[65], mf_status *st);

/* The check text itself (UTF-8, *n bytes). */
const char *mf_bpe_chktxt(size_t *n);

/* The name convert_hf_to_gguf.py's get_vocab_base_pre gives that hash, or
 * NULL when its table does not know it. */
const char *mf_bpe_pre_name_of_hash(const char *hex);
/* the same in the 2026-02-27 converter's table (ecbcb7ea, 81 rows) */
const char *mf_bpe_pre_name_of_hash_2026(const char *hex);
/* GPT-2's bytes_to_unicode: the character byte b stands for (bpe_steps.c). */
uint32_t mf_bpe_byte_char(uint8_t b);
#endif
