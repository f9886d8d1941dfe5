/* proto.c - protocol buffers wire format reader. */
#include "core/proto.h"

int mf_pb_varint(mf_cursor *c, uint64_t *v, const char *what)
{
    uint64_t r = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        uint8_t b;
        if (mf_cur_u8(c, &b, what))
            return -1;
        if (shift == 63 && b > 1)
            return mf_cur_fail(c, "%s: varint longer than 64 bits", what);
        r |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = r;
            return 0;
        }
    }
    return mf_cur_fail(c, "%s: varint longer than 10 bytes", what);
}

int mf_pb_next(mf_cursor *c, mf_pb_field *f)
{
    if (mf_cur_left(c) == 0)
        return 0;
    memset(f, 0, sizeof(*f));
    f->offset = mf_cur_off(c);
    uint64_t tag;
    if (mf_pb_varint(c, &tag, "protobuf tag"))
        return -1;
    f->number = (uint32_t)(tag >> 3);
    f->wire = (uint8_t)(tag & 7);
    if (f->number == 0 || tag >> 3 > 0x1fffffff)
        return mf_cur_fail(c, "protobuf field number %llu is invalid",
                           (unsigned long long)(tag >> 3));
    const uint8_t *p;
    switch (f->wire) {
    case 0:
        return mf_pb_varint(c, &f->varint, "protobuf varint") ? -1 : 1;
    case 1:
        if (mf_cur_bytes(c, 8, &p, "protobuf fixed64"))
            return -1;
        f->varint = mf_rd64le(p);
        return 1;
    case 5:
        if (mf_cur_bytes(c, 4, &p, "protobuf fixed32"))
            return -1;
        f->varint = mf_rd32le(p);
        return 1;
    case 2:
        if (mf_pb_varint(c, &f->len, "protobuf length"))
            return -1;
        if (f->len > mf_cur_left(c))
            return mf_cur_fail(c, "protobuf field %u: length %llu exceeds the %llu bytes left",
                               f->number, (unsigned long long)f->len,
                               (unsigned long long)mf_cur_left(c));
        f->data = c->base + c->pos;
        c->pos += f->len;
        return 1;
    default:
        return mf_cur_fail(c, "protobuf field %u: wire type %u is not supported",
                           f->number, f->wire);
    }
}

void mf_pb_sub(const mf_cursor *parent, const mf_pb_field *f, mf_cursor *sub)
{
    mf_cur_init(sub, f->data, f->len, parent->file, parent->st);
    sub->origin = parent->origin + (uint64_t)(f->data - parent->base);
}
