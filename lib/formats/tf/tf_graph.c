/* tf_graph.c - walking TensorFlow graphs: every NodeDef of a GraphDef and of
 * its function library, the op names they use, and the ops that touch
 * files, run code or reach the network.
 *
 * GraphDef: node = 1, library = 2 {function = 1}, versions = 4.
 * FunctionDef: signature = 1 {OpDef name = 1}, node_def = 3.
 * NodeDef: name = 1, op = 2, input = 3, device = 4, attr = 5. */
#include "formats/tf/tf.h"

#include <stdlib.h>

typedef struct op_rule {
    const char *op;
    mf_tf_level level;
    const char *why;
} op_rule;

#define RUNS_PY "runs Python code (tf.py_function / tf.numpy_function)"
#define READS "reads files at paths the graph gives"
#define WRITES "writes files at paths the graph gives"
#define NET "connects to a network address the graph gives"
#define CKPT_IN "reads checkpoint files (normal in a saver/restore function)"
#define CKPT_OUT "writes checkpoint files (normal in a saver function)"

static const op_rule rules[] = {
    {"PyFunc", MF_TF_DANGER, RUNS_PY},
    {"PyFuncStateless", MF_TF_DANGER, RUNS_PY},
    {"EagerPyFunc", MF_TF_DANGER, RUNS_PY},
    {"ReadFile", MF_TF_DANGER, READS},
    {"WriteFile", MF_TF_DANGER, WRITES},
    {"MatchingFiles", MF_TF_DANGER, "lists files matching a pattern the graph gives"},
    {"MatchingFilesDataset", MF_TF_DANGER, "lists files matching a pattern the graph gives"},
    {"ExperimentalMatchingFilesDataset", MF_TF_DANGER, "lists files matching a pattern the graph gives"},
    {"ImmutableConst", MF_TF_DANGER, "maps a file named by the graph into a tensor"},
    {"FileSystemSetConfiguration", MF_TF_DANGER, "changes file system settings"},
    {"WholeFileReader", MF_TF_DANGER, READS},
    {"WholeFileReaderV2", MF_TF_DANGER, READS},
    {"TextLineReader", MF_TF_DANGER, READS},
    {"TextLineReaderV2", MF_TF_DANGER, READS},
    {"FixedLengthRecordReader", MF_TF_DANGER, READS},
    {"FixedLengthRecordReaderV2", MF_TF_DANGER, READS},
    {"TFRecordReader", MF_TF_DANGER, READS},
    {"TFRecordReaderV2", MF_TF_DANGER, READS},
    {"LMDBReader", MF_TF_DANGER, READS},
    {"TextLineDataset", MF_TF_DANGER, READS},
    {"TFRecordDataset", MF_TF_DANGER, READS},
    {"TFRecordDatasetV2", MF_TF_DANGER, READS},
    {"FixedLengthRecordDataset", MF_TF_DANGER, READS},
    {"FixedLengthRecordDatasetV2", MF_TF_DANGER, READS},
    {"LMDBDataset", MF_TF_DANGER, READS},
    {"ExperimentalLMDBDataset", MF_TF_DANGER, READS},
    {"CSVDataset", MF_TF_DANGER, READS},
    {"CSVDatasetV2", MF_TF_DANGER, READS},
    {"ExperimentalCSVDataset", MF_TF_DANGER, READS},
    {"SqlDataset", MF_TF_DANGER, "queries a database the graph names"},
    {"ExperimentalSqlDataset", MF_TF_DANGER, "queries a database the graph names"},
    {"LoadDataset", MF_TF_DANGER, READS},
    {"SnapshotDataset", MF_TF_DANGER, "reads and writes snapshot files at a path the graph gives"},
    {"SnapshotDatasetV2", MF_TF_DANGER, "reads and writes snapshot files at a path the graph gives"},
    {"SaveDataset", MF_TF_DANGER, WRITES},
    {"SaveDatasetV2", MF_TF_DANGER, WRITES},
    {"DatasetToTFRecord", MF_TF_DANGER, WRITES},
    {"ExperimentalDatasetToTFRecord", MF_TF_DANGER, WRITES},
    {"CreateSummaryFileWriter", MF_TF_DANGER, "opens an event file for writing at a path the graph gives"},
    {"CreateSummaryDbWriter", MF_TF_DANGER, "opens a database for writing at a path the graph gives"},
    {"DebugIdentityV2", MF_TF_DANGER, "dumps tensors to a directory the graph names"},
    {"DebugIdentityV3", MF_TF_DANGER, "dumps tensors to a directory the graph names"},
    {"Rpc", MF_TF_DANGER, NET},
    {"TryRpc", MF_TF_DANGER, NET},
    {"RpcClient", MF_TF_DANGER, NET},
    {"RpcServer", MF_TF_DANGER, "serves RPCs on an address the graph gives"},
    {"RpcServerStart", MF_TF_DANGER, "serves RPCs on an address the graph gives"},
    {"DataServiceDataset", MF_TF_DANGER, NET},
    {"DataServiceDatasetV2", MF_TF_DANGER, NET},
    {"DataServiceDatasetV3", MF_TF_DANGER, NET},
    {"DataServiceDatasetV4", MF_TF_DANGER, NET},
    {"Save", MF_TF_CAUTION, CKPT_OUT},
    {"SaveV2", MF_TF_CAUTION, CKPT_OUT},
    {"SaveSlices", MF_TF_CAUTION, CKPT_OUT},
    {"MergeV2Checkpoints", MF_TF_CAUTION, "merges and deletes checkpoint files (normal in a saver function)"},
    {"Restore", MF_TF_CAUTION, CKPT_IN},
    {"RestoreV2", MF_TF_CAUTION, CKPT_IN},
    {"RestoreSlice", MF_TF_CAUTION, CKPT_IN},
    {"LoadAndRemapMatrix", MF_TF_CAUTION, CKPT_IN},
    {"GenerateVocabRemapping", MF_TF_CAUTION, "reads vocabulary files"},
    {"InitializeTableFromTextFile", MF_TF_CAUTION, "reads a vocabulary file (normally an asset of the model)"},
    {"InitializeTableFromTextFileV2", MF_TF_CAUTION, "reads a vocabulary file (normally an asset of the model)"},
    {"DecodeProtoV2", MF_TF_CAUTION, "may read a descriptor file named by the graph"},
    {"EncodeProto", MF_TF_CAUTION, "may read a descriptor file named by the graph"},
    {"PrintV2", MF_TF_CAUTION, "prints, possibly to a file the graph names"},
    {"WriteSummary", MF_TF_CAUTION, "writes summaries through a summary writer"},
    {"WriteScalarSummary", MF_TF_CAUTION, "writes summaries through a summary writer"},
    {"WriteHistogramSummary", MF_TF_CAUTION, "writes summaries through a summary writer"},
    {"WriteImageSummary", MF_TF_CAUTION, "writes summaries through a summary writer"},
    {"WriteAudioSummary", MF_TF_CAUTION, "writes summaries through a summary writer"},
    {"WriteGraphSummary", MF_TF_CAUTION, "writes summaries through a summary writer"},
    {"WriteRawProtoSummary", MF_TF_CAUTION, "writes summaries through a summary writer"},
    {"ImportEvent", MF_TF_CAUTION, "writes summaries through a summary writer"},
};

mf_tf_level mf_tf_op_level(const char *op, size_t len, const char **why)
{
    for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
        if (strlen(rules[i].op) == len && memcmp(rules[i].op, op, len) == 0) {
            if (why)
                *why = rules[i].why;
            return rules[i].level;
        }
    if (why)
        *why = NULL;
    return (mf_tf_level)0;
}

/* ------------------------------------------------------------ walking */

static int walk_node(mf_cursor *gc, const mf_pb_field *nf, const mf_pb_field *fn_name,
                     mf_tf_node_fn fn, void *ctx)
{
    mf_cursor nc;
    mf_pb_sub(gc, nf, &nc);
    mf_tf_node n = {.graph = gc, .def = nf};
    if (fn_name) {
        n.function = fn_name->data;
        n.function_len = fn_name->len;
    }
    mf_pb_field f;
    int r;
    while ((r = mf_pb_next(&nc, &f)) == 1) {
        if (f.number == 1 && f.wire == 2)
            n.name = f.data, n.name_len = f.len;
        else if (f.number == 2 && f.wire == 2)
            n.op = f.data, n.op_len = f.len;
    }
    if (r < 0)
        return -1;
    return fn(ctx, &n);
}

/* FunctionDef: its name first (signature.name), then its node_defs. */
static int walk_function(mf_cursor *lc, const mf_pb_field *ff, mf_tf_node_fn fn, void *ctx)
{
    mf_cursor fc;
    mf_pb_sub(lc, ff, &fc);
    mf_pb_field f, name = {.wire = 2, .data = (const uint8_t *)"", .len = 0};
    int r;
    while ((r = mf_pb_next(&fc, &f)) == 1) {
        if (f.number != 1 || f.wire != 2)
            continue;
        mf_cursor sc;
        mf_pb_sub(&fc, &f, &sc);
        mf_pb_field g;
        while ((r = mf_pb_next(&sc, &g)) == 1)
            if (g.number == 1 && g.wire == 2)
                name = g;
        if (r < 0)
            return -1;
    }
    if (r < 0)
        return -1;
    mf_cur_seek(&fc, 0, "FunctionDef");
    while ((r = mf_pb_next(&fc, &f)) == 1)
        if (f.number == 3 && f.wire == 2 && walk_node(&fc, &f, &name, fn, ctx))
            return -1;
    return r < 0 ? -1 : 0;
}

int mf_tf_walk_graph(mf_cursor *gc, mf_tf_node_fn fn, void *ctx, uint64_t *functions)
{
    mf_pb_field f;
    int r;
    while ((r = mf_pb_next(gc, &f)) == 1) {
        if (f.wire != 2)
            continue;
        if (f.number == 1) {
            if (walk_node(gc, &f, NULL, fn, ctx))
                return -1;
        } else if (f.number == 2) {
            mf_cursor lc;
            mf_pb_sub(gc, &f, &lc);
            mf_pb_field g;
            while ((r = mf_pb_next(&lc, &g)) == 1) {
                if (g.number != 1 || g.wire != 2)
                    continue;
                if (functions)
                    (*functions)++;
                if (walk_function(&lc, &g, fn, ctx))
                    return -1;
            }
            if (r < 0)
                return -1;
        }
    }
    return r < 0 ? -1 : 0;
}

/* --------------------------------------------------- ops and findings */

int mf_tf_collect_ops(void *ctx, const mf_tf_node *n)
{
    mf_tf_ops *o = ctx;
    if (!n->function)
        o->nodes++;
    const char *op = n->op ? (const char *)n->op : "";
    size_t ol = (size_t)n->op_len;
    if (mf_names_add(&o->names, o->m->arena, op, ol))
        return mf_oom(o->st, o->file);
    const char *why;
    mf_tf_level level = mf_tf_op_level(op, ol, &why);
    if (!level)
        return 0;
    *(level == MF_TF_DANGER ? &o->danger : &o->caution) += 1;
    mf_arena *a = o->m->arena;
    mf_tf_finding fd = {
        .op = mf_arena_strndup(a, op, ol),
        .node = mf_arena_strndup(a, n->name ? (const char *)n->name : "", (size_t)n->name_len),
        .function = n->function ? mf_arena_strndup(a, (const char *)n->function,
                                                   (size_t)n->function_len)
                                : NULL,
        .why = why,
        .level = level,
        .file = o->file,
        .offset = n->def->offset,
    };
    if (!fd.op || !fd.node || (n->function && !fd.function))
        return mf_oom(o->st, o->file);
    if (o->findings.n >= 100000) /* counted, not kept */
        return 0;
    if (MF_VEC_PUSH(o->findings, fd))
        return mf_oom(o->st, o->file);
    return 0;
}

typedef struct tf_findings {
    mf_tf_finding *v;
    size_t n;
} tf_findings;

void mf_tf_ops_free(mf_tf_ops *o)
{
    mf_names_free(&o->names);
    MF_VEC_FREE(o->findings);
}

int mf_tf_ops_finish(mf_tf_ops *o)
{
    mf_model *m = o->m;
    mf_kv *kv = mf_model_add_meta(m, "ops", o->st);
    mf_names_sort(&o->names);
    size_t n = o->names.list.n;
    mf_value *items = n ? mf_arena_calloc(m->arena, n, sizeof(mf_value)) : NULL;
    if (!kv || (n && !items)) {
        mf_tf_ops_free(o);
        return kv ? mf_oom(o->st, o->file) : -1;
    }
    if (n)
        memcpy(items, o->names.list.v, n * sizeof(mf_value));
    kv->v.type = MF_V_ARR;
    kv->v.as.arr.elem = MF_V_STR;
    kv->v.as.arr.n = n;
    kv->v.as.arr.items = items;
    if (!(kv = mf_model_add_meta(m, "dangerous_ops", o->st))) {
        mf_tf_ops_free(o);
        return -1;
    }
    kv->v = mf_value_int((int64_t)o->danger);
    if (!(kv = mf_model_add_meta(m, "file_io_ops", o->st))) {
        mf_tf_ops_free(o);
        return -1;
    }
    kv->v = mf_value_int((int64_t)o->caution);
    for (size_t i = 0; i < o->findings.n; i++) {
        const mf_tf_finding *f = &o->findings.v[i];
        if (f->level == MF_TF_DANGER)
            mf_model_note(m, "DANGEROUS op %s (node \"%s\"%s%s%s): %s", f->op, f->node,
                          f->function ? " in function \"" : "", f->function ? f->function : "",
                          f->function ? "\"" : "", f->why);
    }
    tf_findings *keep = mf_arena_alloc(m->arena, sizeof(*keep));
    if (!keep) {
        mf_tf_ops_free(o);
        return mf_oom(o->st, o->file);
    }
    keep->v = o->findings.v;
    keep->n = o->findings.n;
    o->findings.v = NULL;
    o->findings.n = o->findings.cap = 0;
    m->priv = keep;
    mf_names_free(&o->names);
    return 0;
}

void mf_tf_close(mf_model *m)
{
    tf_findings *keep = m->priv;
    if (keep)
        free(keep->v);
    m->priv = NULL;
}

int mf_tf_find_dangerous_ops(const mf_model *m, mf_tf_finding **out, size_t *n, mf_status *st)
{
    *out = NULL;
    *n = 0;
    if (m->format != MF_FMT_TF_SAVEDMODEL && m->format != MF_FMT_TF_GRAPHDEF)
        return mf_fail(st, MF_ERR_USAGE, m->path, -1,
                       "not a TensorFlow SavedModel or GraphDef (%s)", mf_format_name(m->format));
    const tf_findings *keep = m->priv;
    if (!keep || keep->n == 0)
        return 0;
    *out = malloc(keep->n * sizeof(mf_tf_finding));
    if (!*out)
        return mf_oom(st, m->path);
    memcpy(*out, keep->v, keep->n * sizeof(mf_tf_finding));
    *n = keep->n;
    return 0;
}

/* The readers' find_code hook (scan): each op that runs code or touches
 * files, as a finding. */
int mf_tf_find_code(const mf_model *m, mf_code_fn fn, void *ctx, mf_status *st)
{
    mf_tf_finding *f = NULL;
    size_t n = 0;
    mf_status sub;
    mf_status_init(&sub);
    if (mf_tf_find_dangerous_ops(m, &f, &n, &sub)) {
        mf_fail(st, sub.code, NULL, -1, "the TensorFlow graph cannot be read: %s", sub.msg);
        mf_status_clear(&sub);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        char msg[1024];
        snprintf(msg, sizeof(msg), "TensorFlow op %s in node \"%s\"%s%s: %s", f[i].op, f[i].node,
                 f[i].function ? " of function " : "", f[i].function ? f[i].function : "",
                 f[i].why);
        mf_code_finding c = {f[i].level == MF_TF_DANGER ? MF_CODE_DANGEROUS : MF_CODE_NOTE,
                             f[i].op, msg};
        fn(ctx, &c);
    }
    free(f);
    return 0;
}
