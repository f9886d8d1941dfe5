/* mistral.h - Mistral's own directory format (params.json,
 * consolidated*.safetensors, tekken.json or tokenizer.model.v*), which
 * convert_hf_to_gguf.py converts with --mistral-format (doc/hf.md). */
#ifndef MF_HFCONV_MISTRAL_H
#define MF_HFCONV_MISTRAL_H
#include "ops/gguf_kv.h"
#include "formats/formats.h"

/* The tokenizer keys _set_vocab_mistral writes (mistral_vocab.c), from
 * tokenizer.ggml.model to the chat template; arch: general.architecture
 * (its .vocab_size key is among them). */
int h2g_mistral_vocab(const char *dir, const char *arch, mf_kvlist *kv, mf_status *st);
#endif
