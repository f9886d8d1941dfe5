/* tf_savedmodel.c - reader for TensorFlow SavedModel directories:
 * saved_model.pb (metadata, signatures, graph ops) and the variables in
 * variables/variables.index + variables.data-NNNNN-of-MMMMM.
 *
 * SavedModel: saved_model_schema_version = 1, meta_graphs = 2.
 * MetaGraphDef: meta_info_def = 1 {meta_graph_version = 1, tags = 4,
 * tensorflow_version = 5, tensorflow_git_version = 6}, graph_def = 2,
 * signature_def = 5 (map: key = 1, value = 2).
 * Tensors are the bundle's entries, named by their keys; the graph's Const
 * nodes are not listed (the variables hold the weights). */
#include "formats/formats.h"
#include "formats/tf/tf.h"

#include <libgen.h>
#include <stdlib.h>

typedef MF_VEC(mf_value) value_vec;

typedef struct smodel {
    mf_model *m;
    mf_status *st;
    const char *file;
    mf_tf_ops ops;
    value_vec tags, signatures;
    uint64_t meta_graphs, functions;
    const char *tf_version, *tf_git;
} smodel;

static int push_str(smodel *x, value_vec *v, const mf_pb_field *f)
{
    if (v->n >= 100000)
        return 0;
    if (MF_VEC_PUSH(*v, mf_value_str(x->m->arena, (const char *)f->data, (size_t)f->len)))
        return mf_oom(x->st, x->file);
    return 0;
}

static int read_meta_info(smodel *x, mf_cursor *c, const mf_pb_field *mf, bool first)
{
    mf_cursor ic;
    mf_pb_sub(c, mf, &ic);
    mf_pb_field f;
    int r;
    while ((r = mf_pb_next(&ic, &f)) == 1) {
        if (f.wire != 2 || !first)
            continue;
        if (f.number == 4 && push_str(x, &x->tags, &f))
            return -1;
        if (f.number == 5)
            x->tf_version = mf_arena_strndup(x->m->arena, (const char *)f.data, (size_t)f.len);
        if (f.number == 6)
            x->tf_git = mf_arena_strndup(x->m->arena, (const char *)f.data, (size_t)f.len);
    }
    return r < 0 ? -1 : 0;
}

static int read_signature_key(smodel *x, mf_cursor *c, const mf_pb_field *sf)
{
    mf_cursor ec;
    mf_pb_sub(c, sf, &ec);
    mf_pb_field f;
    int r;
    while ((r = mf_pb_next(&ec, &f)) == 1)
        if (f.number == 1 && f.wire == 2 && push_str(x, &x->signatures, &f))
            return -1;
    return r < 0 ? -1 : 0;
}

static int read_meta_graph(smodel *x, mf_cursor *c, const mf_pb_field *gf)
{
    bool first = x->meta_graphs++ == 0;
    mf_cursor mc;
    mf_pb_sub(c, gf, &mc);
    mf_pb_field f;
    int r;
    while ((r = mf_pb_next(&mc, &f)) == 1) {
        if (f.wire != 2)
            continue;
        int bad = 0;
        if (f.number == 1)
            bad = read_meta_info(x, &mc, &f, first);
        else if (f.number == 2) {
            mf_cursor gc;
            mf_pb_sub(&mc, &f, &gc);
            bad = mf_tf_walk_graph(&gc, mf_tf_collect_ops, &x->ops, &x->functions);
        } else if (f.number == 5 && first)
            bad = read_signature_key(x, &mc, &f);
        if (bad)
            return -1;
    }
    return r < 0 ? -1 : 0;
}

static int cmp_str_value(const void *a, const void *b)
{
    const mf_value *x = a, *y = b;
    return strcmp(x->as.s.ptr, y->as.s.ptr);
}

static int meta_array(smodel *x, const char *key, value_vec *v)
{
    mf_kv *kv = mf_model_add_meta(x->m, key, x->st);
    mf_value *items = v->n ? mf_arena_calloc(x->m->arena, v->n, sizeof(mf_value)) : NULL;
    if (!kv || (v->n && !items))
        return kv ? mf_oom(x->st, x->file) : -1;
    if (v->n)
        memcpy(items, v->v, v->n * sizeof(mf_value));
    kv->v.type = MF_V_ARR;
    kv->v.as.arr.elem = MF_V_STR;
    kv->v.as.arr.n = v->n;
    kv->v.as.arr.items = items;
    return 0;
}

static int meta_text(smodel *x, const char *key, const char *s)
{
    if (!s)
        return 0;
    mf_kv *kv = mf_model_add_meta(x->m, key, x->st);
    if (!kv)
        return -1;
    kv->v = mf_value_str(x->m->arena, s, strlen(s));
    return 0;
}

static int meta_int(smodel *x, const char *key, int64_t v)
{
    return mf_model_put_meta(x->m, key, mf_value_int(v), x->st);
}

static int read_saved_model(smodel *x, const mf_file *f)
{
    mf_cursor c;
    mf_cur_init(&c, f->base, f->size, f->path, x->st);
    mf_pb_field fl;
    int r;
    int64_t schema = -1;
    while ((r = mf_pb_next(&c, &fl)) == 1) {
        if (fl.number == 1 && fl.wire == 0)
            schema = (int64_t)fl.varint;
        else if (fl.number == 2 && fl.wire == 2 && read_meta_graph(x, &c, &fl))
            return -1;
    }
    if (r < 0)
        return -1;
    if (x->meta_graphs == 0)
        return mf_fail(x->st, MF_ERR_FORMAT, f->path, -1, "SavedModel has no meta graph");
    if (x->signatures.n > 1) /* a map: its order in the file means nothing */
        qsort(x->signatures.v, x->signatures.n, sizeof(mf_value), cmp_str_value);
    if ((schema >= 0 && meta_int(x, "saved_model_schema_version", schema)) ||
        meta_array(x, "tags", &x->tags) || meta_text(x, "tensorflow_version", x->tf_version) ||
        meta_text(x, "tensorflow_git_version", x->tf_git) ||
        meta_array(x, "signatures", &x->signatures) ||
        meta_int(x, "meta_graphs", (int64_t)x->meta_graphs) ||
        meta_int(x, "nodes", (int64_t)x->ops.nodes) ||
        meta_int(x, "functions", (int64_t)x->functions))
        return -1;
    if (x->meta_graphs > 1)
        mf_model_note(x->m, "%llu meta graphs: tags and signatures are the first one's",
                      (unsigned long long)x->meta_graphs);
    return 0;
}

static int open_savedmodel(mf_model *m, const char *path, unsigned flags, mf_status *st)
{
    if (!mf_is_dir(path)) { /* saved_model.pb itself: its directory is the model */
        char *tmp = mf_arena_strdup(m->arena, path);
        path = tmp ? mf_arena_strdup(m->arena, dirname(tmp)) : NULL;
        if (!path)
            return mf_oom(st, m->path);
    }
    char *pb = mf_path_join(m->arena, path, "saved_model.pb");
    if (!pb)
        return mf_oom(st, path);
    if (!mf_path_exists(pb)) {
        char *txt = mf_path_join(m->arena, path, "saved_model.pbtxt");
        if (txt && mf_path_exists(txt))
            return mf_fail(st, MF_ERR_UNSUPPORTED, txt, -1,
                           "text-format SavedModels (saved_model.pbtxt) are not supported");
        return mf_fail(st, MF_ERR_FORMAT, path, -1, "no saved_model.pb in this directory");
    }
    uint32_t fi;
    if (mf_model_add_file(m, pb, &fi, st))
        return -1;
    smodel x = {.m = m, .st = st, .file = m->files[fi].path};
    x.ops = (mf_tf_ops){.m = m, .st = st, .file = x.file};
    snprintf(m->version, sizeof(m->version), "SavedModel");
    m->header_bytes = m->files[fi].size;
    int rc = read_saved_model(&x, &m->files[fi]);
    if (rc == 0)
        rc = mf_tf_ops_finish(&x.ops);
    else
        mf_tf_ops_free(&x.ops);
    MF_VEC_FREE(x.tags);
    MF_VEC_FREE(x.signatures);
    if (rc)
        return -1;
    char *vars = mf_path_join(m->arena, path, "variables/variables");
    char *index = mf_path_join(m->arena, path, "variables/variables.index");
    if (!vars || !index)
        return mf_oom(st, path);
    if (!mf_path_exists(index)) {
        mf_model_note(m, "no variables/variables.index: the model has no saved variables");
        return 0;
    }
    return mf_tf_read_bundle(m, vars, flags, st);
}

/* ------------------------------------------------------------- detection */

/* SavedModel proto: saved_model_schema_version = 1 (varint) and
 * meta_graphs = 2, nothing else. */
static int probe_savedmodel(mf_probe *p)
{
    const mf_pb_summary *s = mf_probe_protobuf(p);
    if (s && (s->var >> 1 & 1) && (s->len >> 2 & 1) && !(s->len & ~(1ull << 2)) &&
        !(s->var & ~(1ull << 1)))
        return mf_probe_found(p, MF_FMT_TF_SAVEDMODEL, "TensorFlow SavedModel proto");
    return MF_PROBE_NO;
}

static int probe_savedmodel_dir(mf_probe *p)
{
    if (mf_probe_dir_has(p, "saved_model.pb") || mf_probe_dir_has(p, "saved_model.pbtxt"))
        return mf_probe_found(p, MF_FMT_TF_SAVEDMODEL, "TensorFlow SavedModel directory");
    return MF_PROBE_NO;
}

const mf_reader mf_reader_tf_savedmodel = {
    .format = MF_FMT_TF_SAVEDMODEL,
    .name = "tf-savedmodel",
    .probe = probe_savedmodel,
    .probe_dir = probe_savedmodel_dir,
    .open = open_savedmodel,
    .stream = mf_tf_stream,
    .close = mf_tf_close,
    .scan = &(const mf_scan_hooks){
        .never_unpickles = true,
        .find_code = mf_tf_find_code,
    },
};
