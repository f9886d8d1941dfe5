/* onnx_graph.c - an ONNX model's graph as text (`mfmt inspect --graph`):
 *
 *   graph "main"
 *   input %X: F32[1, 4]
 *   initializer %W: F32[4, 3]
 *   %XW = MatMul(%X, %W)
 *   %Y = Add(%XW, %B)
 *   output %Y: F32[1, 3]
 *
 * One node a line; attributes follow in braces; the bodies of If/Loop/Scan
 * are printed under their node, indented. The file is read again from its
 * mapping, with the same bounds checks as the reader. */
#include "formats/onnx/onnx.h"

#include <inttypes.h>

typedef struct printer {
    FILE *out;
    const char *file;
    mf_status *st;
} printer;

static void indent(printer *p, int depth)
{
    for (int i = 0; i < depth; i++)
        fputs("  ", p->out);
}

/* Names and strings as they are, control bytes escaped, long ones cut. */
static void put_text(printer *p, const uint8_t *s, uint64_t n, uint64_t max)
{
    for (uint64_t i = 0; i < n && i < max; i++) {
        if (s[i] < 0x20 || s[i] == 0x7f || s[i] == '"' || s[i] == '\\')
            fprintf(p->out, "\\x%02x", s[i]);
        else
            fputc(s[i], p->out);
    }
    if (n > max)
        fputs("...", p->out);
}

static void put_name(printer *p, const mf_pb_field *f)
{
    fputc('%', p->out);
    if (f->len == 0)
        fputs("\"\"", p->out);
    else
        put_text(p, f->data, f->len, 256);
}

/* A TensorProto's "F32[2, 3]" (dims = 1, data_type = 2, name = 8). */
static int tensor_summary(printer *p, mf_cursor *c, const mf_pb_field *tf, bool with_name)
{
    mf_cursor tc;
    mf_pb_sub(c, tf, &tc);
    mf_pb_field f, name = {0};
    int r;
    uint64_t type = 0, dims[MF_MAX_DIMS];
    int nd = 0;
    bool many = false;
    while ((r = mf_pb_next(&tc, &f)) == 1) {
        if (f.number == 2 && f.wire == 0)
            type = f.varint;
        else if (f.number == 8 && f.wire == 2)
            name = f;
        else if (f.number == 1 && f.wire == 0) {
            if (nd < MF_MAX_DIMS) dims[nd++] = f.varint; else many = true;
        } else if (f.number == 1 && f.wire == 2) {
            mf_cursor dc;
            mf_pb_sub(&tc, &f, &dc);
            while (mf_cur_left(&dc) > 0) {
                uint64_t v;
                if (mf_pb_varint(&dc, &v, "TensorProto dims"))
                    return -1;
                if (nd < MF_MAX_DIMS) dims[nd++] = v; else many = true;
            }
        }
    }
    if (r < 0)
        return -1;
    if (with_name) {
        put_name(p, &name);
        fputs(": ", p->out);
    }
    mf_dtype dt = mf_onnx_dtype(type);
    fprintf(p->out, "%s[", dt == MF_DTYPE_INVALID ? "?" : mf_dtype_name(dt));
    for (int i = 0; i < nd; i++)
        fprintf(p->out, "%s%" PRId64, i ? ", " : "", (int64_t)dims[i]);
    fprintf(p->out, "%s]", many ? ", ..." : "");
    return 0;
}

/* Repeated numbers of an attribute (ints = 8 varint, floats = 7 fixed32),
 * packed or not; at most 16 shown. */
static int put_number(printer *p, const mf_pb_field *f, bool is_float, unsigned *shown)
{
    if ((*shown)++ == 16) {
        fputs(", ...", p->out);
        return 0;
    }
    if (*shown > 16)
        return 0;
    if (*shown > 1)
        fputs(", ", p->out);
    if (is_float) {
        uint32_t bits = (uint32_t)f->varint;
        float v;
        memcpy(&v, &bits, 4);
        fprintf(p->out, "%g", (double)v);
    } else {
        fprintf(p->out, "%" PRId64, (int64_t)f->varint);
    }
    return 0;
}

static int put_numbers(printer *p, mf_cursor *ac, const mf_pb_field *f, bool is_float,
                       unsigned *shown)
{
    if (f->wire != 2)
        return put_number(p, f, is_float, shown);
    mf_cursor s;
    mf_pb_sub(ac, f, &s);
    while (mf_cur_left(&s) > 0) {
        mf_pb_field one = {.wire = is_float ? 5 : 0};
        if (is_float) {
            uint32_t v;
            if (mf_cur_u32(&s, &v, "attribute floats"))
                return -1;
            one.varint = v;
        } else if (mf_pb_varint(&s, &one.varint, "attribute ints")) {
            return -1;
        }
        put_number(p, &one, is_float, shown);
    }
    return 0;
}

static int print_graph(printer *p, mf_cursor *gc, int depth);

/* AttributeProto: name = 1, f = 2, i = 3, s = 4, t = 5, g = 6, floats = 7,
 * ints = 8, strings = 9, tensors = 10, graphs = 11, type = 20,
 * ref_attr_name = 21. Prints "name=value"; returns how many graphs it has. */
static int print_attribute(printer *p, mf_cursor *nc, const mf_pb_field *af, int *graphs)
{
    mf_cursor ac;
    mf_pb_sub(nc, af, &ac);
    mf_pb_field f, name = {0};
    int r;
    while ((r = mf_pb_next(&ac, &f)) == 1)
        if (f.number == 1 && f.wire == 2)
            name = f;
    if (r < 0)
        return -1;
    put_text(p, name.data, name.len, 128);
    fputc('=', p->out);
    mf_cur_seek(&ac, 0, "attribute");
    unsigned ints = 0, floats = 0, strings = 0, tensors = 0, gs = 0;
    bool list = false, any = false;
    while ((r = mf_pb_next(&ac, &f)) == 1) {
        switch (f.number) {
        case 2: if (f.wire == 5) { any = true; put_number(p, &f, true, &floats); } break;
        case 3: if (f.wire == 0) { any = true; put_number(p, &f, false, &ints); } break;
        case 4:
            if (f.wire == 2) {
                any = true;
                fputc('"', p->out);
                put_text(p, f.data, f.len, 64);
                fputc('"', p->out);
            }
            break;
        case 5:
            if (f.wire == 2) {
                any = true;
                if (tensor_summary(p, &ac, &f, false))
                    return -1;
            }
            break;
        case 6: if (f.wire == 2) { any = true; gs++; fputs("<graph>", p->out); } break;
        case 7:
        case 8:
            if (!list)
                fputc('[', p->out);
            list = any = true;
            if (put_numbers(p, &ac, &f, f.number == 7, f.number == 7 ? &floats : &ints))
                return -1;
            break;
        case 9:
        case 10:
        case 11:
            if (f.wire != 2)
                break;
            if (!list)
                fputc('[', p->out);
            list = any = true;
            if (ints + floats + strings + tensors + gs)
                fputs(", ", p->out);
            if (f.number == 9) {
                strings++;
                fputc('"', p->out);
                put_text(p, f.data, f.len, 64);
                fputc('"', p->out);
            } else if (f.number == 10) {
                tensors++;
                if (tensor_summary(p, &ac, &f, false))
                    return -1;
            } else {
                gs++;
                fputs("<graph>", p->out);
            }
            break;
        case 21:
            if (f.wire == 2) {
                any = true;
                fputc('@', p->out);
                put_text(p, f.data, f.len, 128);
            }
            break;
        }
    }
    if (r < 0)
        return -1;
    if (list)
        fputc(']', p->out);
    else if (!any)
        fputs("[]", p->out);
    *graphs += (int)gs;
    return 0;
}

/* The graphs of a node's attributes, each under "name:" at depth + 1. */
static int print_subgraphs(printer *p, mf_cursor *nc, int depth)
{
    mf_pb_field f;
    int r;
    mf_cur_seek(nc, 0, "node");
    while ((r = mf_pb_next(nc, &f)) == 1) {
        if (f.number != 5 || f.wire != 2)
            continue;
        mf_cursor ac;
        mf_pb_sub(nc, &f, &ac);
        mf_pb_field a, name = {0};
        while ((r = mf_pb_next(&ac, &a)) == 1)
            if (a.number == 1 && a.wire == 2)
                name = a;
        if (r < 0)
            return -1;
        mf_cur_seek(&ac, 0, "attribute");
        while ((r = mf_pb_next(&ac, &a)) == 1) {
            if ((a.number != 6 && a.number != 11) || a.wire != 2)
                continue;
            indent(p, depth + 1);
            put_text(p, name.data, name.len, 128);
            fputs(":\n", p->out);
            mf_cursor gc;
            mf_pb_sub(&ac, &a, &gc);
            if (print_graph(p, &gc, depth + 2))
                return -1;
        }
        if (r < 0)
            return -1;
    }
    return r < 0 ? -1 : 0;
}

/* NodeProto: input = 1, output = 2, op_type = 4, attribute = 5, domain = 7. */
static int print_node(printer *p, mf_cursor *gc, const mf_pb_field *nf, int depth)
{
    mf_cursor nc;
    mf_pb_sub(gc, nf, &nc);
    mf_pb_field f, op = {0}, domain = {0};
    int r, n_out = 0, n_in = 0, n_attr = 0, graphs = 0;
    indent(p, depth);
    while ((r = mf_pb_next(&nc, &f)) == 1) {
        if (f.number == 2 && f.wire == 2) {
            if (n_out++)
                fputs(", ", p->out);
            put_name(p, &f);
        } else if (f.number == 4 && f.wire == 2) {
            op = f;
        } else if (f.number == 7 && f.wire == 2) {
            domain = f;
        }
    }
    if (r < 0)
        return -1;
    fputs(n_out ? " = " : "", p->out);
    if (domain.len && !(domain.len == 7 && memcmp(domain.data, "ai.onnx", 7) == 0)) {
        put_text(p, domain.data, domain.len, 128);
        fputc('.', p->out);
    }
    put_text(p, op.data, op.len, 128);
    fputc('(', p->out);
    mf_cur_seek(&nc, 0, "node");
    while ((r = mf_pb_next(&nc, &f)) == 1) {
        if (f.number == 1 && f.wire == 2) {
            if (n_in++)
                fputs(", ", p->out);
            put_name(p, &f);
        }
    }
    if (r < 0)
        return -1;
    fputc(')', p->out);
    mf_cur_seek(&nc, 0, "node");
    while ((r = mf_pb_next(&nc, &f)) == 1) {
        if (f.number == 5 && f.wire == 2) {
            fputs(n_attr++ ? ", " : " {", p->out);
            if (print_attribute(p, &nc, &f, &graphs))
                return -1;
        }
    }
    if (r < 0)
        return -1;
    fputs(n_attr ? "}\n" : "\n", p->out);
    return graphs ? print_subgraphs(p, &nc, depth) : 0;
}

/* ValueInfoProto {name = 1, type = 2 {tensor_type = 1 {elem_type = 1,
 * shape = 2 {dim = 1 {dim_value = 1, dim_param = 2}}}}}. */
static int print_value_info(printer *p, mf_cursor *gc, const mf_pb_field *vf, const char *kind,
                            int depth)
{
    mf_cursor vc;
    mf_pb_sub(gc, vf, &vc);
    mf_pb_field f, name = {0}, type = {0};
    int r;
    while ((r = mf_pb_next(&vc, &f)) == 1) {
        if (f.number == 1 && f.wire == 2)
            name = f;
        else if (f.number == 2 && f.wire == 2)
            type = f;
    }
    if (r < 0)
        return -1;
    indent(p, depth);
    fprintf(p->out, "%s ", kind);
    put_name(p, &name);
    uint64_t elem = 0;
    bool shaped = false;
    mf_cursor tc, tt, sc, dc;
    if (type.data) {
        mf_pb_sub(&vc, &type, &tc);
        while ((r = mf_pb_next(&tc, &f)) == 1) {
            if (f.number != 1 || f.wire != 2)
                continue;
            mf_pb_sub(&tc, &f, &tt);
            mf_pb_field g;
            while ((r = mf_pb_next(&tt, &g)) == 1) {
                if (g.number == 1 && g.wire == 0) {
                    elem = g.varint;
                    continue;
                }
                if (g.number != 2 || g.wire != 2)
                    continue;
                mf_dtype dt = mf_onnx_dtype(elem);
                fprintf(p->out, ": %s[", dt == MF_DTYPE_INVALID ? "?" : mf_dtype_name(dt));
                shaped = true;
                mf_pb_sub(&tt, &g, &sc);
                mf_pb_field d;
                int k = 0;
                while ((r = mf_pb_next(&sc, &d)) == 1) {
                    if (d.number != 1 || d.wire != 2)
                        continue;
                    fputs(k++ ? ", " : "", p->out);
                    mf_pb_sub(&sc, &d, &dc);
                    mf_pb_field v;
                    bool any = false;
                    while ((r = mf_pb_next(&dc, &v)) == 1) {
                        if (v.number == 1 && v.wire == 0)
                            fprintf(p->out, "%" PRId64, (int64_t)v.varint), any = true;
                        else if (v.number == 2 && v.wire == 2)
                            put_text(p, v.data, v.len, 64), any = true;
                    }
                    if (!any)
                        fputc('?', p->out);
                    if (r < 0)
                        return -1;
                }
                if (r < 0)
                    return -1;
                fputc(']', p->out);
            }
            if (r < 0)
                return -1;
            if (!shaped) {
                mf_dtype dt = mf_onnx_dtype(elem);
                fprintf(p->out, ": %s", dt == MF_DTYPE_INVALID ? "?" : mf_dtype_name(dt));
            }
        }
        if (r < 0)
            return -1;
    }
    fputc('\n', p->out);
    return 0;
}

/* GraphProto: node = 1, name = 2, initializer = 5, input = 11, output = 12.
 * Printed in that order: name, inputs, initializers, nodes, outputs. */
static int print_graph(printer *p, mf_cursor *gc, int depth)
{
    if (depth / 2 > MF_ONNX_MAX_DEPTH)
        return mf_cur_fail(gc, "subgraphs nested more than %d deep", MF_ONNX_MAX_DEPTH);
    static const int order[] = {2, 11, 5, 1, 12};
    for (size_t k = 0; k < sizeof(order) / sizeof(order[0]); k++) {
        mf_pb_field f;
        int r;
        mf_cur_seek(gc, 0, "graph");
        while ((r = mf_pb_next(gc, &f)) == 1) {
            if ((int)f.number != order[k] || f.wire != 2)
                continue;
            int bad = 0;
            switch (f.number) {
            case 2:
                indent(p, depth);
                fputs("graph \"", p->out);
                put_text(p, f.data, f.len, 256);
                fputs("\"\n", p->out);
                break;
            case 11: bad = print_value_info(p, gc, &f, "input", depth); break;
            case 12: bad = print_value_info(p, gc, &f, "output", depth); break;
            case 5:
                indent(p, depth);
                fputs("initializer ", p->out);
                bad = tensor_summary(p, gc, &f, true);
                fputc('\n', p->out);
                break;
            case 1: bad = print_node(p, gc, &f, depth); break;
            }
            if (bad)
                return -1;
        }
        if (r < 0)
            return -1;
    }
    return 0;
}

int mf_onnx_print_graph(const mf_model *m, FILE *out, mf_status *st)
{
    if (m->format != MF_FMT_ONNX || m->n_files == 0)
        return mf_fail(st, MF_ERR_USAGE, m->path, -1, "--graph: not an ONNX model (%s)",
                       mf_format_name(m->format));
    const mf_file *file = &m->files[0];
    printer p = {out, file->path, st};
    mf_cursor c;
    mf_cur_init(&c, file->base, file->size, file->path, st);
    mf_pb_field f;
    int r;
    while ((r = mf_pb_next(&c, &f)) == 1) {
        if (f.number == 7 && f.wire == 2) {
            mf_cursor gc;
            mf_pb_sub(&c, &f, &gc);
            return print_graph(&p, &gc, 0);
        }
    }
    return r < 0 ? -1 : mf_fail(st, MF_ERR_FORMAT, file->path, -1, "ModelProto has no graph");
}
