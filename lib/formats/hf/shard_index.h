/* shard_index.h - one reader for the shard indexes of sharded checkpoints
 * (model.safetensors.index.json, pytorch_model.bin.index.json). */
#ifndef MF_SHARD_INDEX_H
#define MF_SHARD_INDEX_H
#include "core/core.h"

/* Opens the index at `index` and every shard it names as a child model
 * (mf_model_open_child), checking weight_map against what the shards hold.
 * exact_total_size: a metadata.total_size that differs from the tensors'
 * bytes is a breach (safetensors) rather than a note (torch counts tied
 * tensors once). */
int mf_open_shard_index(mf_model *m, const char *index, unsigned flags, bool exact_total_size,
                        mf_status *st);
/* Of an index file (*.index.json) by its place: a finding to fn when its
 * weight_map names a shard outside its directory (from_pretrained loads it,
 * a scan of the directory does not see it). */
void mf_shard_index_around(const char *path, mf_code_fn fn, void *ctx);
#endif
