/* tf_graphdef.c - reader for frozen TensorFlow GraphDef .pb files: the
 * weights are the values of the graph's Const nodes (NodeDef op "Const",
 * attr "value" = AttrValue {tensor = 8}), named by their node names.
 * NodeDef: name = 1, op = 2, attr = 5 (map: key = 1, value = 2).
 * GraphDef: versions = 4 {producer = 1}. */
#include "formats/formats.h"
#include "formats/tf/tf.h"

#include <stdlib.h>

typedef struct gdef {
    mf_model *m;
    mf_status *st;
    uint32_t fi;
    mf_tf_ops ops;
} gdef;

static bool bytes_are(const uint8_t *p, uint64_t n, const char *s)
{
    return n == strlen(s) && memcmp(p, s, (size_t)n) == 0;
}

/* The TensorProto of attr "value" of a Const node, if any. */
static int const_value(gdef *g, const mf_tf_node *n)
{
    mf_cursor nc;
    mf_pb_sub(n->graph, n->def, &nc);
    mf_pb_field f;
    int r;
    while ((r = mf_pb_next(&nc, &f)) == 1) {
        if (f.number != 5 || f.wire != 2)
            continue;
        mf_cursor ec;
        mf_pb_sub(&nc, &f, &ec);
        mf_pb_field e, key = {0}, val = {0};
        while ((r = mf_pb_next(&ec, &e)) == 1) {
            if (e.number == 1 && e.wire == 2)
                key = e;
            else if (e.number == 2 && e.wire == 2)
                val = e;
        }
        if (r < 0)
            return -1;
        if (!key.data || !bytes_are(key.data, key.len, "value") || !val.data)
            continue;
        mf_cursor vc;
        mf_pb_sub(&ec, &val, &vc);
        mf_pb_field a;
        while ((r = mf_pb_next(&vc, &a)) == 1) {
            if (a.number != 8 || a.wire != 2)
                continue;
            mf_cursor tc;
            mf_pb_sub(&vc, &a, &tc);
            const char *name = mf_arena_strndup(g->m->arena, (const char *)n->name,
                                                (size_t)n->name_len);
            if (!name)
                return mf_oom(g->st, g->m->path);
            return mf_tf_read_tensor_proto(g->m, g->fi, &tc, name, g->st);
        }
        if (r < 0)
            return -1;
    }
    return r < 0 ? -1 : 0;
}

static int on_node(void *ctx, const mf_tf_node *n)
{
    gdef *g = ctx;
    if (mf_tf_collect_ops(&g->ops, n))
        return -1;
    if (n->function || !n->op || !bytes_are(n->op, n->op_len, "Const"))
        return 0;
    if (!n->name || n->name_len == 0)
        return mf_fail(g->st, MF_ERR_FORMAT, g->m->path, (int64_t)n->def->offset,
                       "a Const node has no name");
    return const_value(g, n);
}

static int graph_producer(mf_model *m, const mf_file *f, mf_status *st)
{
    mf_cursor c;
    mf_cur_init(&c, f->base, f->size, f->path, st);
    mf_pb_field fl;
    int r;
    while ((r = mf_pb_next(&c, &fl)) == 1) {
        if (fl.number != 4 || fl.wire != 2)
            continue;
        mf_cursor vc;
        mf_pb_sub(&c, &fl, &vc);
        mf_pb_field g;
        while ((r = mf_pb_next(&vc, &g)) == 1)
            if (g.number == 1 && g.wire == 0)
                return mf_model_put_meta(m, "graph_producer_version", mf_value_int((int64_t)g.varint), st);
        if (r < 0)
            return -1;
    }
    return r < 0 ? -1 : 0;
}

static int cmp_tensor_name(const void *a, const void *b)
{
    const mf_tensor *const *x = a, *const *y = b;
    return strcmp((*x)->name, (*y)->name);
}

/* Node names are unique in a graph (they name the tensors here). */
static int check_unique_names(mf_model *m, mf_status *st)
{
    if (m->n_tensors < 2)
        return 0;
    const mf_tensor **by_name = malloc(m->n_tensors * sizeof(*by_name));
    if (!by_name)
        return mf_oom(st, m->path);
    for (size_t i = 0; i < m->n_tensors; i++)
        by_name[i] = &m->tensors[i];
    qsort(by_name, m->n_tensors, sizeof(*by_name), cmp_tensor_name);
    for (size_t i = 1; i < m->n_tensors; i++)
        if (strcmp(by_name[i]->name, by_name[i - 1]->name) == 0) {
            mf_breach(st, m->path, (int64_t)by_name[i]->offset,
                      "Const node name \"%s\" appears twice", by_name[i]->name);
            break;
        }
    free(by_name);
    return 0;
}

static int open_graphdef(mf_model *m, const char *path, unsigned flags, mf_status *st)
{
    (void)flags;
    gdef g = {.m = m, .st = st};
    if (mf_model_add_file(m, path, &g.fi, st))
        return -1;
    const mf_file *f = &m->files[g.fi];
    g.ops = (mf_tf_ops){.m = m, .st = st, .file = f->path};
    snprintf(m->version, sizeof(m->version), "GraphDef");
    m->header_bytes = f->size;
    mf_cursor c;
    mf_cur_init(&c, f->base, f->size, f->path, st);
    uint64_t functions = 0;
    if (mf_tf_walk_graph(&c, on_node, &g, &functions)) {
        mf_tf_ops_free(&g.ops);
        return -1;
    }
    if (g.ops.nodes == 0) {
        mf_tf_ops_free(&g.ops);
        return mf_fail(st, MF_ERR_FORMAT, path, -1, "GraphDef has no nodes");
    }
    if (mf_model_put_meta(m, "nodes", mf_value_int((int64_t)g.ops.nodes), st) ||
        mf_model_put_meta(m, "functions", mf_value_int((int64_t)functions), st) || graph_producer(m, f, st)) {
        mf_tf_ops_free(&g.ops);
        return -1;
    }
    if (mf_tf_ops_finish(&g.ops))
        return -1;
    check_unique_names(m, st);
    return st->code == MF_OK ? 0 : -1;
}

/* ------------------------------------------------------------- detection */

/* A GraphDef's node (field 1) is a NodeDef: name = 1 and op = 2, both
 * strings, fields 1-7 only. (A SentencePiece model's field 1 is a piece
 * whose field 2 is a float score.) */
static bool looks_like_nodedef(const uint8_t *b, uint64_t n, const char *path)
{
    mf_status st;
    mf_status_init(&st);
    mf_cursor c;
    mf_cur_init(&c, b, n, path, &st);
    mf_pb_field f;
    int r;
    bool name = false, op = false, other = false;
    while ((r = mf_pb_next(&c, &f)) == 1) {
        name |= f.number == 1 && f.wire == 2;
        op |= f.number == 2 && f.wire == 2;
        other |= f.number > 7 || ((f.number == 1 || f.number == 2) && f.wire != 2);
    }
    mf_status_clear(&st);
    return r == 0 && name && op && !other;
}

/* GraphDef: node = 1 with versions = 4 or library = 2, varints only in
 * field 3 (the deprecated version), and its first node a NodeDef. */
static int probe_graphdef(mf_probe *p)
{
    const mf_pb_summary *s = mf_probe_protobuf(p);
    if (s && (s->len >> 1 & 1) && ((s->len >> 4 & 1) || (s->len >> 2 & 1)) &&
        !(s->var & ~(1ull << 3)) &&
        looks_like_nodedef(s->first_len1.data, s->first_len1.len, p->path))
        return mf_probe_found(p, MF_FMT_TF_GRAPHDEF, "TensorFlow GraphDef");
    return MF_PROBE_NO;
}

const mf_reader mf_reader_tf_graphdef = {
    .format = MF_FMT_TF_GRAPHDEF,
    .name = "tf-graphdef",
    .probe = probe_graphdef,
    .open = open_graphdef,
    .stream = mf_tf_stream,
    .close = mf_tf_close,
    .scan = &(const mf_scan_hooks){
        .never_unpickles = true,
        .find_code = mf_tf_find_code,
    },
};
