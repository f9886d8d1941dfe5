/* tiktoken.h - a tiktoken BPE file ("BASE64TOKEN RANK" per line: Qwen's
 * qwen.tiktoken, GLM-4's tokenizer.model) and the byte-pair merge
 * tiktoken runs over its ranks (tiktoken.c; internal to lib/ops). */
#ifndef MF_TIKTOKEN_H
#define MF_TIKTOKEN_H
#include "core/base.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct mf_tt_entry {
    uint8_t *bytes;
    size_t n;
    int64_t rank;
} mf_tt_entry;

typedef struct mf_tiktoken {
    mf_tt_entry *v; /* in file order */
    size_t n;
    int64_t max_rank;
    size_t *slot, cap; /* open addressing: index + 1 into v, 0 empty */
} mf_tiktoken;

/* The ranks of the file's lines, as the families' _load_tiktoken_bpe read
 * them (blank lines skipped); a second line with the same token or the
 * same rank is refused (the Python dict would drop one and tiktoken then
 * refuses the duplicate rank). Errors name path, byte offset and line. */
int mf_tiktoken_read(const char *path, const char *data, size_t size, mf_tiktoken *t, mf_status *st);
void mf_tiktoken_free(mf_tiktoken *t);
/* One more entry: base64 text b64[0..n) of rank `rank` (tekken.json's
 * vocabulary; its order is the caller's to check). Bad base64 or a token
 * already there is refused, naming path, err_off (-1: none) and `where`
 * ("line 3", "vocab[7]"). */
int mf_tiktoken_add_b64(mf_tiktoken *t, const char *b64, size_t n, int64_t rank, const char *path, int64_t err_off,
                        const char *where, mf_status *st);

/* The rank of bytes b[0..n), -1 when no line has them. */
int64_t mf_tiktoken_rank(const mf_tiktoken *t, const uint8_t *b, size_t n);

/* convert_hf_to_gguf.py's QwenModel.bpe / ChatGLMModel.bpe(ranks, token,
 * max_rank): the token's bytes merged pair by pair, lowest rank first
 * (leftmost of equal ones), while the rank is below max_rank. Returns the
 * number of parts; ends (room for n entries) gets each part's end offset.
 * -1 when out of memory. */
int mf_tiktoken_split(const mf_tiktoken *t, const uint8_t *b, size_t n, int64_t max_rank, size_t *ends);

/* GPT-2's bytes_to_unicode text of b (out: room for 2 * n bytes); its length. */
size_t mf_byte_level_text(const uint8_t *b, size_t n, char *out);
/* Its inverse: -1 when text holds a character no byte maps to. */
int mf_byte_level_bytes(const char *text, size_t n, uint8_t *out, size_t *n_out);
#endif
