/* proto.h - protocol buffers wire format: bounds-checked field iteration.
 * (protobuf.dev/programming-guides/encoding: tag = field << 3 | wire type;
 * 0 varint, 1 i64, 2 len, 5 i32; 3/4 deprecated groups, refused.) */
#ifndef MF_PROTO_H
#define MF_PROTO_H
#include "core/core.h"

typedef struct mf_pb_field {
    uint32_t number;
    uint8_t wire;        /* 0, 1, 2, 5 */
    uint64_t varint;     /* wire 0; wire 1/5: the raw little-endian value */
    const uint8_t *data; /* wire 2: payload */
    uint64_t len;        /* wire 2: payload length */
    uint64_t offset;     /* file offset of the tag */
} mf_pb_field;

/* Reads the next field of the message under the cursor.
 * Returns 1 when a field was read, 0 at the end, -1 on malformed data. */
int mf_pb_next(mf_cursor *c, mf_pb_field *f);
int mf_pb_varint(mf_cursor *c, uint64_t *v, const char *what);
/* A sub-cursor over a length-delimited field (offsets stay file offsets). */
void mf_pb_sub(const mf_cursor *parent, const mf_pb_field *f, mf_cursor *sub);
#endif
