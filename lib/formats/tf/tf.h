/* tf.h - TensorFlow readers: SavedModel directories (saved_model.pb and the
 * variables/ TensorBundle) and frozen GraphDef .pb files; and the scan of
 * their graphs for ops that touch files or run code.
 * Protos from tensorflow/core/framework and core/protobuf (field numbers
 * cited where they are read). */
#ifndef MF_TF_H
#define MF_TF_H
#include "core/core.h"
#include "core/proto.h"
#include "core/names.h"

#include <stdio.h>

/* ------------------------------------------------ dangerous ops (public) */

typedef enum mf_tf_level {
    /* file I/O that checkpointing normally does (SaveV2, RestoreV2,
     * MergeV2Checkpoints ...): every SavedModel has them in its saver */
    MF_TF_CAUTION = 1,
    /* runs code (PyFunc, EagerPyFunc), reads, lists, writes or maps files at
     * paths of the model's choosing (ReadFile, WriteFile, MatchingFiles,
     * ImmutableConst, ...), or talks to the network (Rpc) */
    MF_TF_DANGER = 2,
} mf_tf_level;

typedef struct mf_tf_finding {
    const char *op;       /* "PyFunc" */
    const char *node;     /* the node's name */
    const char *function; /* the library function holding it; NULL: the graph */
    const char *why;      /* "runs Python code" */
    mf_tf_level level;
    const char *file;     /* the .pb file */
    uint64_t offset;      /* byte offset of the NodeDef there */
} mf_tf_finding;

/* The ops of a tf-savedmodel or tf-graphdef model (every meta graph, its
 * graph and its function library) that touch files or run code. *out is
 * malloc'd (free() it; its strings belong to m); returns 0, or -1 with st
 * filled (also when m is not a TensorFlow model). */
int mf_tf_find_dangerous_ops(const mf_model *m, mf_tf_finding **out, size_t *n,
                             mf_status *st);
/* The readers' find_code hook (scan): mf_tf_find_dangerous_ops as findings. */
int mf_tf_find_code(const mf_model *m, mf_code_fn fn, void *ctx, mf_status *st);
/* The level and reason of one op name; 0 when harmless. */
mf_tf_level mf_tf_op_level(const char *op, size_t len, const char **why);

/* ----------------------------------------------------- shared internals */

/* TF DataType -> mfmt dtype (MF_DTYPE_INVALID: resource, variant, ...). */
mf_dtype mf_tf_dtype(uint64_t dt);
const char *mf_tf_dtype_name(uint64_t dt); /* "DT_FLOAT"; NULL if unknown */

/* TensorShapeProto {dim = 2 {size = 1}, unknown_rank = 3} into t. */
int mf_tf_read_shape(mf_cursor *c, const mf_pb_field *f, mf_tensor *t);

/* A TensorProto (dtype = 1, tensor_shape = 2, tensor_content = 4, typed
 * *_val fields) as a new tensor of m named `name`, in file `fi`. */
int mf_tf_read_tensor_proto(mf_model *m, uint32_t fi, mf_cursor *c, const char *name,
                            mf_status *st);

/* A DT_STRING bundle entry's stored bytes (varint64 lengths, a 4-byte
 * masked CRC32C of them, the bytes) checked and attached to t for
 * streaming; *crc gets the entry's CRC32C as tensor_bundle.cc computes it. */
int mf_tf_bundle_strings(mf_model *m, mf_tensor *t, const uint8_t *enc, uint64_t len,
                         const char *file, mf_status *st, uint32_t *crc);

/* A tensor bundle (variables.index + data shards): its entries as tensors. */
int mf_tf_read_bundle(mf_model *m, const char *prefix, unsigned flags, mf_status *st);

/* Walks every NodeDef of a GraphDef (node = 1) and of its function library
 * (library = 2 {function = 1 {signature = 1 {name = 1}, node_def = 3}}). */
typedef struct mf_tf_node {
    const uint8_t *name, *op, *function;
    uint64_t name_len, op_len, function_len;
    mf_cursor *graph;    /* the cursor the NodeDef field came from */
    const mf_pb_field *def;
} mf_tf_node;
typedef int (*mf_tf_node_fn)(void *ctx, const mf_tf_node *n);
int mf_tf_walk_graph(mf_cursor *gc, mf_tf_node_fn fn, void *ctx, uint64_t *functions);

/* Every reader of TF files streams through this. */
int mf_tf_stream(const mf_model *m, const mf_tensor *t, mf_sink_fn sink, void *ctx,
                 mf_status *st);

/* Ops seen and dangerous ones found while a reader walks its graphs; kept
 * as metadata ("ops", "dangerous_ops", "file_io_ops"), notes, and the
 * findings mf_tf_find_dangerous_ops returns. */
typedef struct mf_tf_ops {
    mf_names names; /* distinct op names */
    MF_VEC(mf_tf_finding) findings;
    uint64_t nodes, danger, caution;
    mf_model *m;
    mf_status *st;
    const char *file;
} mf_tf_ops;
int mf_tf_collect_ops(void *ctx, const mf_tf_node *n); /* an mf_tf_node_fn */
/* Adds the metadata and notes, hands the findings to m (m->priv); frees
 * the rest. Readers using it set .close = mf_tf_close. */
int mf_tf_ops_finish(mf_tf_ops *o);
void mf_tf_ops_free(mf_tf_ops *o);
void mf_tf_close(mf_model *m);
#endif
