/* estimate.h - memory estimate and device plan (public API: mfmt/analyze.h);
 * what the library's other parts use besides. */
#ifndef MF_ESTIMATE_H
#define MF_ESTIMATE_H
#include "core/core.h"

#include <jansson.h>

/* From a config.json object alone (weights computed from it); fills *e. */
int mf_estimate_config(const json_t *cfg, const mf_estimate_opts *o, mf_estimate *e,
                       mf_status *st);
/* The same as mf_estimate_path into a caller's struct. */
int mf_estimate_path_into(const char *path, const mf_estimate_opts *o, mf_estimate *e,
                          mf_status *st);
#endif
