/* onnx.c - readers for ONNX models (ModelProto) and lone TensorProto files.
 *
 * ModelProto: ir_version = 1, producer_name = 2, producer_version = 3,
 * domain = 4, model_version = 5, doc_string = 6, graph = 7,
 * opset_import = 8 {domain = 1, version = 2}, metadata_props = 14
 * {key = 1, value = 2}, training_info = 20, functions = 25.
 * GraphProto: node = 1, name = 2, initializer = 5, doc_string = 10,
 * input = 11, output = 12, value_info = 13, sparse_initializer = 15.
 * NodeProto: input = 1, output = 2, name = 3, op_type = 4, attribute = 5,
 * domain = 7. AttributeProto: name = 1, g = 6, graphs = 11.
 *
 * Tensors are the main graph's initializers, named by their names. Constant
 * nodes and the initializers of subgraphs (If/Loop/Scan bodies) are counted
 * in the metadata, not listed: they are values of the graph, not its
 * weights table (onnx.load's graph.initializer). */
#include "formats/formats.h"
#include "formats/onnx/onnx.h"
#include "core/names.h"

#include <libgen.h>
#include <stdlib.h>

typedef MF_VEC(mf_value) value_vec;

/* What walking the graphs gathers for the metadata. */
typedef struct graph_stats {
    uint64_t nodes, constant_nodes, subgraphs, sub_initializers, sub_nodes,
        sub_constant_nodes, sparse_initializers;
    mf_names ops;      /* distinct op types of the main graph */
    value_vec inputs;  /* "name: F32[1, 3, N]" */
    value_vec outputs;
} graph_stats;

typedef struct onnx_reader {
    mf_onnx_ctx x;
    mf_cursor c;      /* over the whole model file */
    graph_stats gs;
} onnx_reader;

static bool str_is(const mf_pb_field *f, const char *s)
{
    size_t n = strlen(s);
    return f->wire == 2 && f->len == n && memcmp(f->data, s, n) == 0;
}

static mf_kv *meta_str(mf_model *m, const char *key, const mf_pb_field *f, mf_status *st)
{
    mf_kv *kv = mf_model_add_meta(m, key, st);
    if (!kv)
        return NULL;
    kv->v = mf_value_str(m->arena, (const char *)f->data, (size_t)f->len);
    kv->offset = f->offset;
    return kv;
}

static int meta_int(mf_model *m, const char *key, int64_t v, uint64_t off, mf_status *st)
{
    mf_kv *kv = mf_model_add_meta(m, key, st);
    if (!kv)
        return -1;
    kv->v = mf_value_int(v);
    kv->offset = off;
    return 0;
}

/* ------------------------------------------------------ value info text */

/* TypeProto.tensor_type {elem_type = 1, shape = 2 {dim = 1 {dim_value = 1,
 * dim_param = 2}}} as "F32[1, 3, N]"; other types by their kind. */
static int type_text(mf_cursor *c, const mf_pb_field *tf, char *buf, size_t cap)
{
    mf_cursor tc;
    mf_pb_sub(c, tf, &tc);
    mf_pb_field f;
    int r;
    snprintf(buf, cap, "?");
    while ((r = mf_pb_next(&tc, &f)) == 1) {
        if (f.wire != 2)
            continue;
        if (f.number == 4 || f.number == 5 || f.number == 9 || f.number == 8) {
            snprintf(buf, cap, "%s", f.number == 4 ? "sequence" : f.number == 5 ? "map"
                                     : f.number == 9 ? "optional" : "sparse tensor");
            continue;
        }
        if (f.number != 1)
            continue;
        mf_cursor tt;
        mf_pb_sub(&tc, &f, &tt);
        mf_pb_field g;
        uint64_t elem = 0;
        char dims[512] = "";
        size_t dl = 0;
        bool has_shape = false;
        while ((r = mf_pb_next(&tt, &g)) == 1) {
            if (g.number == 1 && g.wire == 0)
                elem = g.varint;
            if (g.number != 2 || g.wire != 2)
                continue;
            has_shape = true;
            mf_cursor sc;
            mf_pb_sub(&tt, &g, &sc);
            mf_pb_field d;
            while ((r = mf_pb_next(&sc, &d)) == 1) {
                if (d.number != 1 || d.wire != 2)
                    continue;
                mf_cursor dc;
                mf_pb_sub(&sc, &d, &dc);
                mf_pb_field v;
                char one[96] = "?";
                while ((r = mf_pb_next(&dc, &v)) == 1) {
                    if (v.number == 1 && v.wire == 0)
                        snprintf(one, sizeof(one), "%lld", (long long)v.varint);
                    else if (v.number == 2 && v.wire == 2)
                        snprintf(one, sizeof(one), "%.*s", (int)(v.len > 64 ? 64 : v.len),
                                 (const char *)v.data);
                }
                if (r < 0)
                    return -1;
                if (dl + 1 < sizeof(dims)) {
                    int k = snprintf(dims + dl, sizeof(dims) - dl, "%s%s", dl ? ", " : "", one);
                    dl = k > 0 && dl + (size_t)k < sizeof(dims) ? dl + (size_t)k : sizeof(dims) - 1;
                }
            }
            if (r < 0)
                return -1;
        }
        if (r < 0)
            return -1;
        mf_dtype dt = mf_onnx_dtype(elem);
        const char *tn = dt != MF_DTYPE_INVALID ? mf_dtype_name(dt) : "?";
        if (has_shape)
            snprintf(buf, cap, "%s[%s]", tn, dims);
        else
            snprintf(buf, cap, "%s (any shape)", tn);
    }
    return r < 0 ? -1 : 0;
}

/* ValueInfoProto {name = 1, type = 2} as "name: F32[1, 3]". */
static int value_info_text(mf_model *m, mf_cursor *c, const mf_pb_field *vf, value_vec *out,
                           mf_status *st)
{
    mf_cursor vc;
    mf_pb_sub(c, vf, &vc);
    mf_pb_field f;
    int r;
    const uint8_t *name = NULL;
    uint64_t nl = 0;
    char type[640] = "?";
    while ((r = mf_pb_next(&vc, &f)) == 1) {
        if (f.number == 1 && f.wire == 2)
            name = f.data, nl = f.len;
        else if (f.number == 2 && f.wire == 2 && type_text(&vc, &f, type, sizeof(type)))
            return -1;
    }
    if (r < 0)
        return -1;
    char *s = mf_arena_printf(m->arena, "%.*s: %s", (int)(nl > 4096 ? 4096 : nl),
                              name ? (const char *)name : "", type);
    if (!s)
        return mf_oom(st, c->file);
    if (MF_VEC_PUSH(*out, mf_value_str(m->arena, s, strlen(s))))
        return mf_oom(st, c->file);
    return 0;
}

/* ------------------------------------------------------------- graphs */

static int walk_graph(onnx_reader *r, mf_cursor *gc, int depth, bool main);

static int add_op(onnx_reader *r, const mf_pb_field *f)
{
    if (mf_names_add(&r->gs.ops, r->x.m->arena, (const char *)f->data, (size_t)f->len))
        return mf_oom(r->x.st, r->c.file);
    return 0;
}

/* Subgraphs hang off attributes: g = 6 (one graph), graphs = 11. */
static int walk_attribute(onnx_reader *r, mf_cursor *nc, const mf_pb_field *af, int depth)
{
    mf_cursor ac;
    mf_pb_sub(nc, af, &ac);
    mf_pb_field f;
    int rc;
    while ((rc = mf_pb_next(&ac, &f)) == 1) {
        if ((f.number == 6 || f.number == 11) && f.wire == 2) {
            mf_cursor gc;
            mf_pb_sub(&ac, &f, &gc);
            r->gs.subgraphs++;
            if (walk_graph(r, &gc, depth + 1, false))
                return -1;
        }
    }
    return rc < 0 ? -1 : 0;
}

static int walk_node(onnx_reader *r, mf_cursor *gc, const mf_pb_field *nf, int depth, bool main)
{
    mf_cursor nc;
    mf_pb_sub(gc, nf, &nc);
    mf_pb_field f;
    int rc;
    while ((rc = mf_pb_next(&nc, &f)) == 1) {
        if (f.number == 4 && f.wire == 2) {
            if (str_is(&f, "Constant"))
                *(main ? &r->gs.constant_nodes : &r->gs.sub_constant_nodes) += 1;
            if (main && add_op(r, &f))
                return -1;
        } else if (f.number == 5 && f.wire == 2) {
            if (walk_attribute(r, &nc, &f, depth))
                return -1;
        }
    }
    return rc < 0 ? -1 : 0;
}

static int walk_graph(onnx_reader *r, mf_cursor *gc, int depth, bool main)
{
    if (depth > MF_ONNX_MAX_DEPTH)
        return mf_cur_fail(gc, "subgraphs nested more than %d deep", MF_ONNX_MAX_DEPTH);
    mf_model *m = r->x.m;
    mf_pb_field f;
    int rc;
    while ((rc = mf_pb_next(gc, &f)) == 1) {
        if (f.wire != 2)
            continue;
        switch (f.number) {
        case 1:
            *(main ? &r->gs.nodes : &r->gs.sub_nodes) += 1;
            if (walk_node(r, gc, &f, depth, main))
                return -1;
            break;
        case 2:
            if (main && !meta_str(m, "graph.name", &f, r->x.st))
                return -1;
            break;
        case 5:
            if (main) {
                mf_cursor tc;
                mf_pb_sub(gc, &f, &tc);
                mf_tensor *t;
                if (mf_onnx_read_tensor(&r->x, &tc, &t))
                    return -1;
            } else {
                r->gs.sub_initializers++;
            }
            break;
        case 11:
        case 12:
            if (main && value_info_text(m, gc, &f, f.number == 11 ? &r->gs.inputs : &r->gs.outputs,
                                        r->x.st))
                return -1;
            break;
        case 15:
            r->gs.sparse_initializers++;
            break;
        }
    }
    return rc < 0 ? -1 : 0;
}

/* ----------------------------------------------------------- metadata */

static int read_opset(onnx_reader *r, const mf_pb_field *of)
{
    mf_cursor oc;
    mf_pb_sub(&r->c, of, &oc);
    mf_pb_field f;
    int rc;
    const char *domain = "ai.onnx";
    int dl = 7;
    int64_t version = 0;
    while ((rc = mf_pb_next(&oc, &f)) == 1) {
        if (f.number == 1 && f.wire == 2 && f.len > 0)
            domain = (const char *)f.data, dl = f.len > 256 ? 256 : (int)f.len;
        else if (f.number == 2 && f.wire == 0)
            version = (int64_t)f.varint;
    }
    if (rc < 0)
        return -1;
    char key[300];
    snprintf(key, sizeof(key), "opset.%.*s", dl, domain);
    return meta_int(r->x.m, key, version, of->offset, r->x.st);
}

/* metadata_props keep their own keys unless one collides with ours. */
static int read_metadata_prop(onnx_reader *r, const mf_pb_field *pf)
{
    mf_cursor pc;
    mf_pb_sub(&r->c, pf, &pc);
    mf_pb_field f, key = {0}, val = {0};
    int rc;
    while ((rc = mf_pb_next(&pc, &f)) == 1) {
        if (f.number == 1 && f.wire == 2)
            key = f;
        else if (f.number == 2 && f.wire == 2)
            val = f;
    }
    if (rc < 0)
        return -1;
    mf_model *m = r->x.m;
    char *k = mf_arena_strndup(m->arena, key.data ? (const char *)key.data : "", key.len);
    if (!k)
        return mf_oom(r->x.st, r->c.file);
    if (mf_meta_get(m, k) || strncmp(k, "graph.", 6) == 0 || strncmp(k, "opset.", 6) == 0)
        k = mf_arena_printf(m->arena, "metadata_props.%s", k);
    if (!k)
        return mf_oom(r->x.st, r->c.file);
    val.offset = pf->offset;
    if (!val.data)
        val.wire = 2, val.data = (const uint8_t *)"", val.len = 0;
    return meta_str(m, k, &val, r->x.st) ? 0 : -1;
}

static int add_array(mf_model *m, const char *key, const mf_value *v, size_t n, mf_status *st)
{
    mf_kv *kv = mf_model_add_meta(m, key, st);
    if (!kv)
        return -1;
    mf_value *items = n ? mf_arena_calloc(m->arena, n, sizeof(mf_value)) : NULL;
    if (n && !items)
        return mf_oom(st, m->path);
    if (n)
        memcpy(items, v, n * sizeof(mf_value));
    kv->v.type = MF_V_ARR;
    kv->v.as.arr.elem = MF_V_STR;
    kv->v.as.arr.n = n;
    kv->v.as.arr.items = items;
    return 0;
}

static int add_counts(onnx_reader *r, uint64_t functions, uint64_t training)
{
    mf_model *m = r->x.m;
    mf_status *st = r->x.st;
    const graph_stats *g = &r->gs;
    if (add_array(m, "graph.inputs", g->inputs.v, g->inputs.n, st) ||
        add_array(m, "graph.outputs", g->outputs.v, g->outputs.n, st) ||
        add_array(m, "graph.ops", g->ops.list.v, g->ops.list.n, st) ||
        meta_int(m, "graph.nodes", (int64_t)g->nodes, 0, st) ||
        meta_int(m, "graph.initializers", (int64_t)m->n_tensors, 0, st) ||
        meta_int(m, "graph.constant_nodes", (int64_t)g->constant_nodes, 0, st))
        return -1;
    if (g->subgraphs &&
        (meta_int(m, "graph.subgraphs", (int64_t)g->subgraphs, 0, st) ||
         meta_int(m, "graph.subgraph_nodes", (int64_t)g->sub_nodes, 0, st) ||
         meta_int(m, "graph.subgraph_initializers", (int64_t)g->sub_initializers, 0, st) ||
         meta_int(m, "graph.subgraph_constant_nodes", (int64_t)g->sub_constant_nodes, 0, st)))
        return -1;
    if (functions && meta_int(m, "functions", (int64_t)functions, 0, st))
        return -1;
    uint64_t consts = g->constant_nodes + g->sub_constant_nodes;
    if (consts)
        mf_model_note(m, "%llu Constant node%s (%llu in subgraphs) hold%s values that are not listed as tensors",
                      (unsigned long long)consts, consts == 1 ? "" : "s",
                      (unsigned long long)g->sub_constant_nodes, consts == 1 ? "s" : "");
    if (g->sub_initializers)
        mf_model_note(m, "%llu initializer%s of subgraphs (If/Loop/Scan bodies) are not listed as tensors",
                      (unsigned long long)g->sub_initializers, g->sub_initializers == 1 ? "" : "s");
    if (g->sparse_initializers)
        mf_model_note(m, "%llu sparse initializer%s are not listed as tensors",
                      (unsigned long long)g->sparse_initializers,
                      g->sparse_initializers == 1 ? "" : "s");
    if (training)
        mf_model_note(m, "%llu training_info entr%s (training graphs) not read",
                      (unsigned long long)training, training == 1 ? "y" : "ies");
    return 0;
}

static int cmp_tensor_name(const void *a, const void *b)
{
    const mf_tensor *const *x = a, *const *y = b;
    return strcmp((*x)->name, (*y)->name);
}

/* Initializer names are unique (the graph is in SSA form; the checker
 * refuses repeats); onnx.load keeps them, so outside validate it is a note. */
static int check_unique_names(mf_model *m, unsigned flags, mf_status *st)
{
    if (m->n_tensors < 2)
        return 0;
    const mf_tensor **v = malloc(m->n_tensors * sizeof(*v));
    if (!v)
        return mf_oom(st, m->path);
    for (size_t i = 0; i < m->n_tensors; i++)
        v[i] = &m->tensors[i];
    qsort(v, m->n_tensors, sizeof(*v), cmp_tensor_name);
    for (size_t i = 1; i < m->n_tensors; i++) {
        if (strcmp(v[i]->name, v[i - 1]->name) != 0)
            continue;
        if (flags & MF_OPEN_STRICT)
            mf_breach(st, m->path, (int64_t)v[i]->offset, "initializer name \"%s\" appears twice",
                      v[i]->name);
        else
            mf_model_note(m, "initializer name \"%s\" appears twice (the ONNX checker refuses it)",
                          v[i]->name);
        break;
    }
    free(v);
    return 0;
}

static const char *model_dir(mf_model *m, const char *path)
{
    char *tmp = mf_arena_strdup(m->arena, path);
    return tmp ? mf_arena_strdup(m->arena, dirname(tmp)) : NULL;
}

static int open_onnx(mf_model *m, const char *path, unsigned flags, mf_status *st)
{
    onnx_reader r;
    memset(&r, 0, sizeof(r));
    uint32_t fi;
    if (mf_model_add_file(m, path, &fi, st))
        return -1;
    const char *dir = model_dir(m, path);
    if (!dir)
        return mf_oom(st, path);
    r.x = (mf_onnx_ctx){.m = m, .fi = fi, .dir = dir, .flags = flags, .st = st};
    mf_cur_init(&r.c, m->files[fi].base, m->files[fi].size, m->files[fi].path, st);
    mf_pb_field f, graph = {0};
    int rc;
    uint64_t functions = 0, training = 0;
    bool has_ir = false;
    while ((rc = mf_pb_next(&r.c, &f)) == 1) {
        int bad = 0;
        switch (f.number) {
        case 1:
            if (f.wire == 0) {
                has_ir = true;
                bad = meta_int(m, "ir_version", (int64_t)f.varint, f.offset, st);
                snprintf(m->version, sizeof(m->version), "IR %lld", (long long)f.varint);
            }
            break;
        case 2: if (f.wire == 2) bad = !meta_str(m, "producer_name", &f, st); break;
        case 3: if (f.wire == 2) bad = !meta_str(m, "producer_version", &f, st); break;
        case 4: if (f.wire == 2) bad = !meta_str(m, "domain", &f, st); break;
        case 5: if (f.wire == 0) bad = meta_int(m, "model_version", (int64_t)f.varint, f.offset, st); break;
        case 6: if (f.wire == 2) bad = !meta_str(m, "doc_string", &f, st); break;
        case 7: if (f.wire == 2) graph = f; break;
        case 8: if (f.wire == 2) bad = read_opset(&r, &f); break;
        case 14: if (f.wire == 2) bad = read_metadata_prop(&r, &f); break;
        case 20: training++; break;
        case 25: functions++; break;
        }
        if (bad) {
            mf_onnx_ctx_free(&r.x);
            return -1;
        }
    }
    m->header_bytes = m->files[fi].size;
    if (rc == 0 && !graph.data)
        rc = mf_fail(st, MF_ERR_FORMAT, path, -1, "ModelProto has no graph (field 7)");
    if (rc == 0 && !has_ir)
        mf_model_note(m, "ModelProto has no ir_version");
    if (rc == 0) {
        mf_cursor gc;
        mf_pb_sub(&r.c, &graph, &gc);
        rc = walk_graph(&r, &gc, 0, true);
    }
    if (rc == 0)
        rc = add_counts(&r, functions, training);
    if (rc == 0)
        rc = check_unique_names(m, flags, st);
    mf_names_free(&r.gs.ops);
    MF_VEC_FREE(r.gs.inputs);
    MF_VEC_FREE(r.gs.outputs);
    mf_onnx_ctx_free(&r.x);
    return rc < 0 || st->code != MF_OK ? -1 : 0;
}

/* ------------------------------------------------------------- detection */

/* ModelProto: graph = 7 with ir_version = 1 or opset_import = 8. Without a
 * graph (ir_version + producer_name/opset_import) only when no other
 * protobuf probe claims the file. */
static int probe_onnx(mf_probe *p)
{
    const mf_pb_summary *s = mf_probe_protobuf(p);
    if (!s)
        return MF_PROBE_NO;
    bool var1 = s->var >> 1 & 1, len2 = s->len >> 2 & 1, len7 = s->len >> 7 & 1,
         len8 = s->len >> 8 & 1;
    if (len7 && (var1 || len8))
        return mf_probe_found(p, MF_FMT_ONNX, "ONNX ModelProto");
    if (var1 && (len2 || len8))
        return mf_probe_found(p, MF_FMT_ONNX, "ONNX ModelProto (no graph)"), MF_PROBE_WEAK;
    return MF_PROBE_NO;
}

static const char *const onnx_extensions[] = {".onnx", NULL};

const mf_reader mf_reader_onnx = {
    .format = MF_FMT_ONNX,
    .data_only = true, /* numbers and names: loading runs nothing */
    .name = "onnx",
    .extensions = onnx_extensions,
    .probe = probe_onnx,
    .open = open_onnx,
    .stream = mf_onnx_stream,
    .print_graph = mf_onnx_print_graph,
};

/* ------------------------------------------------ lone TensorProto .pb */

static int open_onnx_tensor(mf_model *m, const char *path, unsigned flags, mf_status *st)
{
    uint32_t fi;
    if (mf_model_add_file(m, path, &fi, st))
        return -1;
    const char *dir = model_dir(m, path);
    if (!dir)
        return mf_oom(st, path);
    mf_onnx_ctx x = {.m = m, .fi = fi, .dir = dir, .flags = flags, .st = st};
    mf_cursor c;
    mf_cur_init(&c, m->files[fi].base, m->files[fi].size, m->files[fi].path, st);
    snprintf(m->version, sizeof(m->version), "TensorProto");
    m->header_bytes = m->files[fi].size;
    mf_tensor *t;
    int rc = mf_onnx_read_tensor(&x, &c, &t);
    mf_onnx_ctx_free(&x);
    return rc;
}

/* ------------------------------------------------------------- detection */

/* A lone TensorProto: data_type = 2 (varint) beside any of its data or
 * shape fields. */
static int probe_onnx_tensor(mf_probe *p)
{
    const mf_pb_summary *s = mf_probe_protobuf(p);
    if (!s || !(s->var >> 2 & 1))
        return MF_PROBE_NO;
    const uint64_t data_len = 1ull << 1 | 1ull << 4 | 1ull << 5 | 1ull << 6 | 1ull << 7 |
                              1ull << 8 | 1ull << 9 | 1ull << 10 | 1ull << 11 | 1ull << 13;
    if ((s->len & data_len) || (s->var >> 1 & 1))
        return mf_probe_found(p, MF_FMT_ONNX_TENSOR, "ONNX TensorProto");
    return MF_PROBE_NO;
}

const mf_reader mf_reader_onnx_tensor = {
    .format = MF_FMT_ONNX_TENSOR,
    .data_only = true, /* numbers and names: loading runs nothing */
    .name = "onnx-tensor",
    .probe = probe_onnx_tensor,
    .open = open_onnx_tensor,
    .stream = mf_onnx_stream,
};
