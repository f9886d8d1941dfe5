/* rwkv_vocab.h - the RWKV world vocabulary file (rwkv_vocab.c) */
#ifndef MF_RWKV_VOCAB_H
#define MF_RWKV_VOCAB_H
#include "core/base.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct mf_rwkv_token {
    uint8_t *bytes;
    size_t n;
} mf_rwkv_token;

/* The tokens of the file's lines in order (the ids are not read: the
 * converter appends in file order); errors name path, byte offset, line. */
int mf_rwkv_read_vocab(const char *path, const uint8_t *data, size_t size, mf_rwkv_token **tokens, size_t *count,
                       mf_status *st);
void mf_rwkv_free(mf_rwkv_token *v, size_t n);
/* repr(bytes)[2:-1] of b into out (room for 4 * n + 1), its length. */
size_t mf_rwkv_repr(const uint8_t *b, size_t n, char *out);
/* Its inverse (out: room for n bytes); -1 when text is not such a repr. */
int mf_rwkv_unrepr(const char *text, size_t n, uint8_t *out, size_t *n_out);

#endif
