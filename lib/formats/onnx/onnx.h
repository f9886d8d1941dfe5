/* onnx.h - ONNX readers (ModelProto .onnx and lone TensorProto .pb files),
 * shared between onnx.c, onnx_tensor.c and onnx_graph.c.
 * Field numbers from onnx/onnx.proto (IR version 11). */
#ifndef MF_ONNX_H
#define MF_ONNX_H
#include "core/core.h"
#include "core/proto.h"

#include <stdio.h>

/* Subgraphs (If/Loop/Scan bodies) nest; deeper nesting is refused. */
#define MF_ONNX_MAX_DEPTH 32

/* What reading TensorProtos of one file needs. */
typedef struct mf_onnx_ctx {
    mf_model *m;
    uint32_t fi;      /* the model file's index in m->files */
    const char *dir;  /* the model's directory (external data) */
    unsigned flags;   /* MF_OPEN_* */
    mf_status *st;
    /* external data files already mapped: location -> m->files index */
    struct { const char *location; uint32_t fi; } *ext;
    size_t n_ext, cap_ext;
} mf_onnx_ctx;

/* Reads the TensorProto under `c` (a sub-cursor of the model file) into a
 * new tensor of x->m, named by the proto's `name`. Raw and external data
 * are mapped; typed fields are checked and streamed by mf_onnx_stream. */
int mf_onnx_read_tensor(mf_onnx_ctx *x, mf_cursor *c, mf_tensor **out);
void mf_onnx_ctx_free(mf_onnx_ctx *x);

/* The reader's stream callback (typed fields, strings; else mapped). */
int mf_onnx_stream(const mf_model *m, const mf_tensor *t, mf_sink_fn sink,
                   void *ctx, mf_status *st);

/* TensorProto.DataType -> mfmt dtype (MF_DTYPE_INVALID if unknown) and its
 * ONNX spelling ("FLOAT", "INT4", ...; NULL if unknown). */
mf_dtype mf_onnx_dtype(uint64_t onnx_type);
const char *mf_onnx_type_name(uint64_t onnx_type);

/* The reader's print_graph hook (inspect --graph): the model's graph as text, one node a line,
 * `%Y = Add(%XW, %B)`, subgraphs indented under their node. */
int mf_onnx_print_graph(const mf_model *m, FILE *out, mf_status *st);
#endif
