/* safetensors.h - safetensors reader pieces shared with the HF-dir reader. */
#ifndef MF_SAFETENSORS_H
#define MF_SAFETENSORS_H
#include "core/core.h"

/* Parses one mapped safetensors file (already in m->files[file]) and appends
 * its tensors and (if with_meta) its __metadata__ to m. Breaches go to st;
 * returns -1 when the file cannot be read at all. */
int mf_safetensors_parse(mf_model *m, uint32_t file, bool with_meta,
                         unsigned flags, mf_status *st);
/* The reader's rewrite hook (safetensors_edit.c): new __metadata__ and
 * tensor names, data copied as bytes. */
int mf_safetensors_rewrite(const mf_model *m, const mf_rewrite *rw, mf_status *st);
#endif
