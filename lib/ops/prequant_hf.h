/* prequant_hf.h - a pre-quantized Hugging Face directory to a plain float
 * one (doc/prequant.md "Conversion"); mf_convert_to_hf dispatches here. */
#ifndef MF_PREQUANT_HF_H
#define MF_PREQUANT_HF_H
#include "core/core.h"

/* A directory whose config.json has a quantization_config object. */
bool mf_hf_is_prequant_dir(const char *dir);
/* Writes OUT (absent or an empty directory) as the float directory of the
 * pre-quantized directory IN: o->dtype (or each logical tensor's own
 * dtype), sharded past o->max_shard_size (0: 5GB, as save_pretrained). */
int mf_prequant_to_hf(const char *in, const char *out, const mf_convert_hf_opts *o,
                      mf_status *st);
#endif
