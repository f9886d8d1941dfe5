/* llama_load.h - would llama.cpp's loader (c392e509) take this GGUF? */
#ifndef MF_LLAMA_LOAD_H
#define MF_LLAMA_LOAD_H
#include "core/core.h"

typedef void (*mf_load_problem_fn)(void *ctx, const char *msg);
/* Calls fn for each reason llama.cpp would refuse to load the model (an
 * unknown architecture, a required key or tensor missing); returns how many. */
size_t mf_llama_load_problems(const mf_model *m, mf_load_problem_fn fn, void *ctx);

/* The part llama-quantize meets first (load_arch, load_hparams): an unknown
 * architecture or a required key missing; keys looked up with get(). */
typedef const mf_value *(*mf_key_lookup_fn)(void *ctx, const char *key);
size_t mf_llama_hparams_problems(const char *arch, mf_key_lookup_fn get, void *hctx,
                                 mf_load_problem_fn fn, void *ctx);
/* The same for the runtime of the 2026-02 converter (llama.cpp ecbcb7ea):
 * its architecture list, the same key rules. */
size_t mf_llama_hparams_problems_2026(const char *arch, mf_key_lookup_fn get, void *hctx,
                                      mf_load_problem_fn fn, void *ctx);

#endif
