/* formats.h - what the formats layer offers the layers above it and its own
 * directory readers: the reader registry and the open path. (lib/core never
 * includes this: arrows point down.) */
#ifndef MF_FORMATS_H
#define MF_FORMATS_H
#include "core/core.h"

/* The reader registered for f (registry.c); NULL: none. */
const mf_reader *mf_reader_for(mf_format f);

/* The open path under the public mf_open (which lives in lib/ops because
 * it also scans): detect, pick the reader, let it fill a model. flags:
 * MF_OPEN_STRICT (the others are mf_open's). */
int mf_open_model(const char *path, unsigned flags, mf_model **out, mf_status *st);

/* Opens `path` as a model of its own and lists its tensors in `m` too (with
 * owner = the child, which m keeps open until mf_close(m)); its notes are
 * copied. A directory reader uses it for the weights files it chooses.
 * Returns the child (NULL on failure, st filled). */
mf_model *mf_model_open_child(mf_model *m, const char *path, unsigned flags,
                              mf_status *st);
#endif
