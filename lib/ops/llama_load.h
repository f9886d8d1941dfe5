/* llama_load.h - would llama.cpp's loader (c392e509) take this GGUF? */
#ifndef MF_LLAMA_LOAD_H
#define MF_LLAMA_LOAD_H
#include "core/core.h"

typedef void (*mf_load_problem_fn)(void *ctx, const char *msg);
/* Calls fn for each reason llama.cpp would refuse to load the model (an
 * unknown architecture, a required key or tensor missing); returns how many. */
size_t mf_llama_load_problems(const mf_model *m, mf_load_problem_fn fn, void *ctx);

#endif
