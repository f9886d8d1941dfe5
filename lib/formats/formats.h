/* formats.h - what the formats layer offers the layers above it and its own
 * readers: the reader registry, detection probes and the open path.
 * (lib/core never includes this: arrows point down.) */
#ifndef MF_FORMATS_H
#define MF_FORMATS_H
#include "core/core.h"
#include "core/proto.h"
#include "core/zip.h"

/* The reader registered for f (registry.c); NULL: none. */
const mf_reader *mf_reader_for(mf_format f);
/* The registry in order (detection asks readers in this order); NULL past
 * the end. */
const mf_reader *mf_reader_at(size_t i);

/* ------------------------------------------------------------ detection */
/* What a reader's probe sees (core.h, struct mf_reader). The top-level
 * field summary of a protobuf file is worked out once, on the first
 * mf_probe_protobuf call, for every probe that asks. */
typedef struct mf_pb_summary {
    uint64_t len, var;      /* bit n: field n < 64 seen as length-delimited / other */
    uint32_t n_fields;
    mf_pb_field first_len1; /* the first length-delimited field 1 (data NULL: none) */
} mf_pb_summary;

struct mf_probe {
    const char *path;
    const uint8_t *b;   /* the file's bytes (probe, probe_zip); NULL for a directory */
    uint64_t size;
    const mf_zip *zip;  /* probe_zip: the central directory as zipfile reads
                           it; NULL when that fails (p->b, p->size: the bytes) */
    mf_detection *out;  /* filled by mf_probe_found */
    /* private to detect.c */
    int pb_state;       /* 0: not parsed; 1: a protobuf; -1: not one */
    mf_pb_summary pb;
};

/* Records the format and its detail ("GGUF v3 little-endian"); returns
 * MF_PROBE_YES (a weak probe returns MF_PROBE_WEAK after calling it). */
int mf_probe_found(mf_probe *p, mf_format f, const char *fmt, ...) MF_PRINTF(3, 4);
/* probe_dir: does the directory hold `name`? */
bool mf_probe_dir_has(const mf_probe *p, const char *name);
/* The file parsed as top-level protobuf fields, or NULL when it does not
 * (the whole file must parse, with at least one field). */
const mf_pb_summary *mf_probe_protobuf(mf_probe *p);
/* A shard index (JSON with "weight_map" whose first entry names a ".bin"
 * shard when `bin`, any other file otherwise): hf/shard_index.c. */
int mf_probe_shard_index(mf_probe *p, bool bin);

/* ------------------------------------------------------------- opening */
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
/* mf_gguf_write with ggml's layout (llama-quantize's output): the last
 * tensor padded to the alignment as well. */
int mf_gguf_write_all_padded(const char *path, const mf_out_tensor *ts, size_t n, const mf_kv *meta,
                             size_t n_meta, mf_fill_fn fill, void *ctx, mf_status *st);

#endif
