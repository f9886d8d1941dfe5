/* ops_more.c - the CLI's capabilities ops.c did not cover: MLX output,
 * llama-gguf-hash manifests, remote-read settings, Hub names and the Hub
 * cache (scan, verify, download). Same rules as ops.c: arguments checked
 * and named by mfmt/_ops.py and mfmt/_hub.py, the GIL released while C
 * works, results as dicts and lists. */
#include "pymfmt.h"

#include <string.h>

static int fs_path(PyObject *arg, void *out)
{
    return PyUnicode_FSConverter(arg, out);
}

/* An optional path: None stays NULL. */
static int fs_path_opt(PyObject *arg, void *out)
{
    if (arg == Py_None) {
        *(PyObject **)out = NULL;
        return 1;
    }
    return PyUnicode_FSConverter(arg, out);
}

#define PATH_OR_NULL(b) ((b) ? PyBytes_AS_STRING(b) : NULL)

static PyObject *text(const char *s)
{
    if (!s)
        Py_RETURN_NONE;
    return PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "surrogateescape");
}

static PyObject *path_text(const char *s)
{
    if (!s)
        Py_RETURN_NONE;
    return PyUnicode_DecodeFSDefault(s);
}

/* d[key] = v, taking v; -1 when v is NULL or the set fails. */
static int dict_set_str(PyObject *d, const char *key, PyObject *v)
{
    if (!v)
        return -1;
    int rc = PyDict_SetItemString(d, key, v);
    Py_DECREF(v);
    return rc;
}

/* The end of an operation with progress (ops.c's op_result, kept local). */
static PyObject *finish(int rc, mf_status *st, progress_ctx *p, PyObject *value)
{
    if (rc != 0) {
        Py_XDECREF(value);
        if (p && (p->et || p->cancelled)) {
            mf_status_clear(st);
            progress_finish(p);
            return NULL;
        }
        return raise_status(st);
    }
    mf_status_clear(st);
    if (p && progress_finish(p) != 0) {
        Py_XDECREF(value);
        return NULL;
    }
    return value;
}

/* -------------------------------------------------------------------- MLX */

static PyObject *op_convert_mlx(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"src", "out", "quantize", "bits", "group_size", "quant_predicate",
                             "dtype", "kernel", "dequantize", "max_shard_size", "lossless",
                             "progress", NULL};
    PyObject *src, *out, *progress = Py_None;
    int quantize = 0, bits = 0, group = 0, kernel = MF_MLX_KERNEL_CPU, dequant = 0, lossless = 0;
    const char *pred = NULL, *dtype = NULL;
    unsigned long long shard = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&O&|piizzipKpO", kwlist, fs_path, &src,
                                     fs_path, &out, &quantize, &bits, &group, &pred, &dtype,
                                     &kernel, &dequant, &shard, &lossless, &progress))
        return NULL;
    mf_convert_mlx_opts o;
    mf_convert_mlx_opts_init(&o);
    o.quantize = quantize;
    o.bits = bits;
    o.group_size = group;
    o.quant_predicate = pred;
    o.kernel = kernel ? MF_MLX_KERNEL_METAL : MF_MLX_KERNEL_CPU;
    o.dequantize = dequant;
    o.max_shard_size = shard;
    o.lossless = lossless;
    if (dtype) {
        o.dtype = mf_dtype_from_name(dtype);
        if (o.dtype != MF_F32 && o.dtype != MF_F16 && o.dtype != MF_BF16) {
            Py_DECREF(src);
            Py_DECREF(out);
            return raise_usage("dtype=%s: f16, bf16 or f32 for MLX output", dtype);
        }
    }
    progress_ctx p;
    progress_init(&p, progress);
    o.progress = progress_trampoline;
    o.progress_user = &p;
    mf_status st;
    mf_status_init(&st);
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = mf_convert_to_mlx(PyBytes_AS_STRING(src), PyBytes_AS_STRING(out), &o, &st);
    Py_END_ALLOW_THREADS
    Py_DECREF(src);
    Py_DECREF(out);
    return finish(rc, &st, &p, Py_NewRef(Py_None));
}

/* ------------------------------------------------- training checkpoints */

static PyObject *ckpt_result(int rc, mf_status *st, progress_ctx *p,
                             const mf_convert_model_result *r, const char *out)
{
    PyObject *d = rc ? NULL
                     : Py_BuildValue("{s:n,s:K,s:n,s:n,s:N}", "n_tensors", (Py_ssize_t)r->n_tensors,
                                     "tensor_bytes", (unsigned long long)r->tensor_bytes,
                                     "n_files", (Py_ssize_t)r->n_files,
                                     "n_copied", (Py_ssize_t)r->n_copied,
                                     "out", path_text(out));
    if (rc == 0 && !d)
        return NULL;
    return finish(rc, st, p, d);
}

/* The options both routes take. */
static void model_opts(mf_convert_model_opts *o, unsigned flags, int allow_unsafe,
                       PyObject *config, PyObject *tokenizer, const char *dtype,
                       unsigned long long shard, int threads, progress_ctx *p)
{
    mf_convert_model_opts_init(o);
    /* as mfmt.open: a `dangerous` input is refused unless allow_unsafe */
    o->open_flags = (flags & (MF_OPEN_TRAIN_MODULE_STATES | MF_OPEN_TRAIN_EXCLUDE_FROZEN)) |
                    (allow_unsafe ? MF_OPEN_NO_SCAN : MF_OPEN_REFUSE_UNSAFE);
    o->config = PATH_OR_NULL(config);
    o->tokenizer = PATH_OR_NULL(tokenizer);
    o->dtype = dtype;
    o->max_shard_size = shard;
    o->threads = threads;
    o->progress = progress_trampoline;
    o->progress_user = p;
}

/* convert_model_hf(src, out, ...) -> {n_tensors, tensor_bytes, n_files, n_copied, out} */
static PyObject *op_convert_model_hf(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"src", "out", "train_flags", "config", "tokenizer", "dtype",
                             "max_shard_size", "threads", "progress", "allow_unsafe", NULL};
    PyObject *src, *out, *config = NULL, *tok = NULL, *progress = Py_None;
    unsigned int flags = 0;
    const char *dtype = NULL;
    unsigned long long shard = 0;
    int threads = 1, allow_unsafe = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&O&|IO&O&zKiOp", kwlist, fs_path, &src, fs_path,
                                     &out, &flags, fs_path_opt, &config, fs_path_opt, &tok,
                                     &dtype, &shard, &threads, &progress, &allow_unsafe))
        return NULL;
    progress_ctx p;
    progress_init(&p, progress);
    mf_convert_model_opts o;
    model_opts(&o, flags, allow_unsafe, config, tok, dtype, shard, threads, &p);
    mf_convert_model_result r;
    memset(&r, 0, sizeof(r));
    mf_status st;
    mf_status_init(&st);
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = mf_convert_model_to_hf_dir(PyBytes_AS_STRING(src), PyBytes_AS_STRING(out), &o, &r, &st);
    Py_END_ALLOW_THREADS
    PyObject *res = ckpt_result(rc, &st, &p, &r, PyBytes_AS_STRING(out));
    Py_DECREF(src);
    Py_DECREF(out);
    Py_XDECREF(config);
    Py_XDECREF(tok);
    return res;
}

/* convert_model_gguf(src, out, ...): a training checkpoint or an MLX
 * directory to GGUF (through a directory the library makes and removes). */
static PyObject *op_convert_model_gguf(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"src", "out", "train_flags", "config", "tokenizer", "type",
                             "threads", "layout", "progress", "allow_unsafe", "dtype", NULL};
    PyObject *src, *out, *config = NULL, *tok = NULL, *progress = Py_None;
    unsigned int flags = 0;
    const char *type = NULL, *dtype = NULL;
    int threads = 1, layout = MF_CONVERT_LAYOUT_C392E50, allow_unsafe = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&O&|IO&O&ziiOpz", kwlist, fs_path, &src, fs_path,
                                     &out, &flags, fs_path_opt, &config, fs_path_opt, &tok,
                                     &type, &threads, &layout, &progress, &allow_unsafe, &dtype))
        return NULL;
    progress_ctx p;
    progress_init(&p, progress);
    mf_convert_model_opts o;
    model_opts(&o, flags, allow_unsafe, config, tok, dtype, 0, 1, &p);
    mf_convert_gguf_opts g;
    mf_convert_gguf_opts_init(&g);
    g.type = type;
    g.threads = threads;
    g.layout = layout;
    g.progress = progress_trampoline;
    g.progress_user = &p;
    char written[4200] = "";
    g.out_path = written;
    g.out_path_cap = sizeof(written);
    mf_convert_model_result r;
    memset(&r, 0, sizeof(r));
    mf_status st;
    mf_status_init(&st);
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = mf_convert_model_to_gguf(PyBytes_AS_STRING(src), PyBytes_AS_STRING(out), &o, &g, &r,
                                  &st);
    Py_END_ALLOW_THREADS
    Py_DECREF(src);
    Py_DECREF(out);
    Py_XDECREF(config);
    Py_XDECREF(tok);
    return ckpt_result(rc, &st, &p, &r, written);
}

/* split_written(path, max_size, max_tensors) -> files (1: left as it was) */
static PyObject *op_split_written(PyObject *self, PyObject *args)
{
    PyObject *path;
    unsigned long long max_size, max_tensors;
    if (!PyArg_ParseTuple(args, "O&KK", fs_path, &path, &max_size, &max_tensors))
        return NULL;
    mf_status st;
    mf_status_init(&st);
    size_t n = 0;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = mf_gguf_split_written(PyBytes_AS_STRING(path), max_size, max_tensors, &n, &st);
    Py_END_ALLOW_THREADS
    Py_DECREF(path);
    return finish(rc, &st, NULL, rc ? NULL : PyLong_FromSize_t(n));
}

/* -------------------------------------------------------------- manifests */

/* manifest(path, kinds, label) -> the manifest text (llama-gguf-hash's lines) */
typedef struct {
    char *buf;
    size_t n, cap;
} text_sink;

static int text_sink_fn(void *ctx, const void *b, size_t n, mf_status *st)
{
    text_sink *s = ctx;
    if (s->n + n + 1 > s->cap) {
        size_t cap = (s->n + n + 1) * 2;
        char *v = PyMem_RawRealloc(s->buf, cap);
        if (!v)
            return mf_status_fail(st, MF_ERR_NOMEM, "out of memory");
        s->buf = v;
        s->cap = cap;
    }
    memcpy(s->buf + s->n, b, n);
    s->n += n;
    s->buf[s->n] = 0;
    return 0;
}

static int kinds_mask(const char *kinds, unsigned *mask)
{
    *mask = 0;
    if (kinds && mf_hash_kinds_parse(kinds, mask) != 0) {
        raise_usage("algo=%s: sha256, sha1, xxh64, xxh3, uuid or all (comma-separated)", kinds);
        return -1;
    }
    return 0;
}

/* no_layer: the model's lines only (mf_hash_kinds without per-tensor
 * hashes), in the manifest's line form as `mfmt hash --no-layer` writes them */
typedef struct {
    text_sink *sink;
    const char *label;
} model_lines;

static int model_line_fn(void *user, int kind, const char *hex, const char *tensor, mf_status *st)
{
    model_lines *c = user;
    if (tensor)
        return 0;
    char line[600];
    int n = snprintf(line, sizeof(line), "%-8s  %s  %s\n", mf_hash_kind_name(kind), hex, c->label);
    if (n < 0 || (size_t)n >= sizeof(line))
        return mf_status_fail(st, MF_ERR_USAGE, "%s: label too long", c->label);
    return text_sink_fn(c->sink, line, (size_t)n, st);
}

static PyObject *op_manifest(PyObject *self, PyObject *args)
{
    PyObject *path;
    const char *kinds, *label;
    int per_tensor = 1;
    if (!PyArg_ParseTuple(args, "O&ss|p", fs_path, &path, &kinds, &label, &per_tensor))
        return NULL;
    unsigned mask;
    if (kinds_mask(kinds, &mask)) {
        Py_DECREF(path);
        return NULL;
    }
    text_sink s = {NULL, 0, 0};
    mf_status st;
    mf_status_init(&st);
    mf_model *m = NULL;
    mf_open_opts oo;
    mf_open_opts_init(&oo);
    oo.flags = MF_OPEN_NO_SCAN;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = mf_open(PyBytes_AS_STRING(path), &oo, &m, &st);
    model_lines ml = {&s, label};
    if (rc == 0)
        rc = per_tensor ? mf_manifest_write(m, label, mask, text_sink_fn, &s, &st)
                        : mf_hash_kinds(m, mask, false, model_line_fn, &ml, &st);
    mf_close(m);
    Py_END_ALLOW_THREADS
    Py_DECREF(path);
    PyObject *r = rc ? NULL : text(s.buf ? s.buf : "");
    PyMem_RawFree(s.buf);
    if (rc == 0 && !r)
        return NULL;
    return finish(rc, &st, NULL, r);
}

typedef struct {
    PyObject *list;
} line_collect;

static int check_line_fn(void *user, int kind, const char *hex, const char *name,
                         mf_manifest_match match)
{
    line_collect *c = user;
    PyGILState_STATE g = PyGILState_Ensure();
    int rc = 0;
    PyObject *t = Py_BuildValue("(sNNs)", mf_hash_kind_name(kind), text(hex), text(name),
                                mf_manifest_match_name(match));
    if (!t || PyList_Append(c->list, t) != 0)
        rc = 1;
    Py_XDECREF(t);
    PyGILState_Release(g);
    return rc;
}

/* manifest_check(path, manifest, kinds|None) -> (outcome code, outcome name,
 * label, [(kind, hex, name, match)]) */
static PyObject *op_manifest_check(PyObject *self, PyObject *args)
{
    PyObject *path, *man;
    const char *kinds = NULL;
    if (!PyArg_ParseTuple(args, "O&O&z", fs_path, &path, fs_path, &man, &kinds))
        return NULL;
    unsigned mask;
    line_collect c = {NULL};
    if (kinds_mask(kinds, &mask) || !(c.list = PyList_New(0))) {
        Py_DECREF(path);
        Py_DECREF(man);
        return NULL;
    }
    mf_status st;
    mf_status_init(&st);
    mf_manifest *mf = NULL;
    mf_model *m = NULL;
    char *label = NULL;
    mf_manifest_outcome outcome = MF_MANIFEST_FILE_ERROR;
    int rc;
    bool unreadable = false;
    Py_BEGIN_ALLOW_THREADS
    rc = mf_manifest_load(PyBytes_AS_STRING(man), &mf, &st);
    unreadable = rc != 0;
    if (rc == 0) {
        mf_open_opts oo;
        mf_open_opts_init(&oo);
        oo.flags = MF_OPEN_NO_SCAN;
        rc = mf_open(PyBytes_AS_STRING(path), &oo, &m, &st);
    }
    if (rc == 0) {
        label = mf_manifest_label(mf, m, PyBytes_AS_STRING(path));
        rc = label ? 0 : mf_status_fail(&st, MF_ERR_NOMEM, "out of memory");
    }
    if (rc == 0)
        rc = mf_manifest_check(mf, m, label, mask, check_line_fn, &c, &outcome, &st);
    mf_close(m);
    mf_manifest_free(mf);
    Py_END_ALLOW_THREADS
    Py_DECREF(path);
    Py_DECREF(man);
    PyObject *r = NULL;
    if (unreadable) { /* as llama-gguf-hash: an unreadable manifest is an outcome */
        mf_status_clear(&st);
        rc = 0;
        r = Py_BuildValue("(isNO)", (int)MF_MANIFEST_FILE_ERROR,
                          mf_manifest_outcome_name(MF_MANIFEST_FILE_ERROR), text(NULL), c.list);
    } else if (rc == 0) {
        r = Py_BuildValue("(isNO)", (int)outcome, mf_manifest_outcome_name(outcome), text(label),
                          c.list);
    }
    Py_DECREF(c.list);
    mf_free(label);
    if (rc == 0 && !r)
        return NULL;
    return finish(rc, &st, NULL, r);
}

/* ------------------------------------------------------------------ remote */

/* remote_configure(token, max_bytes, timeout, retries) */
static PyObject *op_remote_configure(PyObject *self, PyObject *args)
{
    const char *token;
    unsigned long long max_bytes;
    unsigned int timeout, retries;
    if (!PyArg_ParseTuple(args, "zKII", &token, &max_bytes, &timeout, &retries))
        return NULL;
    mf_remote_opts o;
    mf_remote_opts_init(&o);
    o.token = token;
    o.max_bytes = max_bytes;
    if (timeout)
        o.timeout_s = timeout;
    o.retries = retries;
    mf_status st;
    mf_status_init(&st);
    int rc = mf_remote_configure(&o, &st);
    return finish(rc, &st, NULL, rc ? NULL : Py_NewRef(Py_None));
}

static PyObject *op_remote_defaults(PyObject *self, PyObject *noargs)
{
    mf_remote_opts o;
    mf_remote_opts_init(&o);
    return Py_BuildValue("(KII)", (unsigned long long)o.max_bytes, o.timeout_s, o.retries);
}

static PyObject *op_remote_bytes_read(PyObject *self, PyObject *noargs)
{
    return PyLong_FromUnsignedLongLong(mf_remote_bytes_read());
}

/* -------------------------------------------------------------------- hub */

static const char *hub_kind_name(mf_hub_kind k)
{
    return k == MF_HUB_CACHED ? "cached" : k == MF_HUB_REMOTE ? "remote" : "local";
}

/* hub_resolve(arg, cache_dir|None, allow_remote) -> dict */
static PyObject *op_hub_resolve(PyObject *self, PyObject *args)
{
    PyObject *arg, *cache = NULL;
    int remote = 0;
    if (!PyArg_ParseTuple(args, "O&O&p", fs_path, &arg, fs_path_opt, &cache, &remote))
        return NULL;
    mf_hub_target t;
    memset(&t, 0, sizeof(t));
    mf_status st;
    mf_status_init(&st);
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = mf_hub_resolve(PyBytes_AS_STRING(arg), PATH_OR_NULL(cache), remote, &t, &st);
    Py_END_ALLOW_THREADS
    Py_DECREF(arg);
    Py_XDECREF(cache);
    PyObject *d = rc ? NULL
                     : Py_BuildValue("{s:s,s:N,s:N,s:N,s:N,s:N,s:N,s:N}", "kind",
                                     hub_kind_name(t.kind), "path", path_text(t.path), "repo_type",
                                     text(t.repo_type), "repo_id", text(t.repo_id), "revision",
                                     text(t.revision), "commit", text(t.commit), "file",
                                     text(t.file), "cache_dir", path_text(t.cache_dir));
    if (rc == 0)
        mf_hub_target_free(&t);
    if (rc == 0 && !d)
        return NULL;
    return finish(rc, &st, NULL, d);
}

static PyObject *op_hub_cache_dir(PyObject *self, PyObject *noargs)
{
    char *d = mf_hub_cache_dir();
    if (!d)
        return PyErr_NoMemory();
    PyObject *r = path_text(d);
    free(d);
    return r;
}

static PyObject *str_tuple(const char *const *v, size_t n)
{
    PyObject *t = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; t && i < n; i++) {
        PyObject *s = text(v[i]);
        if (!s) {
            Py_CLEAR(t);
            break;
        }
        PyList_SET_ITEM(t, (Py_ssize_t)i, s);
    }
    return t;
}

static PyObject *revision_dict(const mf_cache_revision *r)
{
    return Py_BuildValue("{s:N,s:N,s:K,s:K}", "commit", text(r->commit), "refs",
                         str_tuple(r->refs, r->n_refs), "n_files", (unsigned long long)r->n_files,
                         "size_on_disk", (unsigned long long)r->size_on_disk);
}

static PyObject *repo_dict(const mf_cache_repo *r)
{
    PyObject *revs = PyList_New((Py_ssize_t)r->n_revisions);
    for (size_t i = 0; revs && i < r->n_revisions; i++) {
        PyObject *d = revision_dict(&r->revisions[i]);
        if (!d) {
            Py_CLEAR(revs);
            break;
        }
        PyList_SET_ITEM(revs, (Py_ssize_t)i, d);
    }
    if (!revs)
        return NULL;
    return Py_BuildValue("{s:N,s:N,s:N,s:K,s:K,s:L,s:N}", "repo_type", text(r->repo_type),
                         "repo_id", text(r->repo_id), "path", path_text(r->path), "size_on_disk",
                         (unsigned long long)r->size_on_disk, "n_blobs",
                         (unsigned long long)r->n_blobs, "last_modified",
                         (long long)r->last_modified, "revisions", revs);
}

/* cache_scan(cache_dir|None) -> dict */
static PyObject *op_cache_scan(PyObject *self, PyObject *args)
{
    PyObject *cache = NULL;
    if (!PyArg_ParseTuple(args, "O&", fs_path_opt, &cache))
        return NULL;
    mf_cache_report *r = NULL;
    mf_status st;
    mf_status_init(&st);
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = mf_cache_scan(PATH_OR_NULL(cache), &r, &st);
    Py_END_ALLOW_THREADS
    Py_XDECREF(cache);
    if (rc)
        return raise_status(&st);
    mf_status_clear(&st);
    PyObject *repos = PyList_New((Py_ssize_t)r->n_repos);
    for (size_t i = 0; repos && i < r->n_repos; i++) {
        PyObject *d = repo_dict(&r->repos[i]);
        if (!d) {
            Py_CLEAR(repos);
            break;
        }
        PyList_SET_ITEM(repos, (Py_ssize_t)i, d);
    }
    PyObject *res = repos ? Py_BuildValue("{s:N,s:N,s:K,s:N}", "cache_dir",
                                          path_text(r->cache_dir), "repos", repos, "size_on_disk",
                                          (unsigned long long)r->size_on_disk, "warnings",
                                          str_tuple(r->warnings, r->n_warnings))
                          : NULL;
    mf_cache_report_free(r);
    return res;
}

/* cache_verify(cache_dir|None, repo|None, progress) -> dict */
static PyObject *op_cache_verify(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"cache_dir", "repo", "progress", NULL};
    PyObject *cache = NULL, *progress = Py_None;
    const char *repo = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&|zO", kwlist, fs_path_opt, &cache, &repo,
                                     &progress))
        return NULL;
    progress_ctx p;
    progress_init(&p, progress);
    mf_cache_verify_report *r = NULL;
    mf_status st;
    mf_status_init(&st);
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = mf_cache_verify(PATH_OR_NULL(cache), repo, progress_trampoline, &p, &r, &st);
    Py_END_ALLOW_THREADS
    Py_XDECREF(cache);
    PyObject *res = NULL;
    if (rc == 0) {
        PyObject *probs = PyList_New((Py_ssize_t)r->n_problems);
        for (size_t i = 0; probs && i < r->n_problems; i++) {
            const mf_cache_problem *q = &r->problems[i];
            PyObject *t = Py_BuildValue("(sNNN)", mf_cache_problem_name(q->kind), text(q->repo_id),
                                        path_text(q->path), text(q->detail));
            if (!t) {
                Py_CLEAR(probs);
                break;
            }
            PyList_SET_ITEM(probs, (Py_ssize_t)i, t);
        }
        res = probs ? Py_BuildValue("{s:N,s:n,s:K,s:K,s:N}", "cache_dir", path_text(r->cache_dir),
                                    "n_repos", (Py_ssize_t)r->n_repos, "n_blobs_checked",
                                    (unsigned long long)r->n_blobs_checked, "bytes_checked",
                                    (unsigned long long)r->bytes_checked, "problems", probs)
                    : NULL;
        mf_cache_verify_free(r);
        if (!res) {
            mf_status_clear(&st);
            progress_finish(&p);
            return NULL;
        }
    }
    return finish(rc, &st, &p, res);
}

static const char *dl_state_name(mf_hub_download_state s)
{
    return s == MF_DL_DOWNLOADED ? "downloaded" : s == MF_DL_RESUMED ? "resumed" : "present";
}

/* hub_download(repo, cache_dir|None, include, exclude, progress) -> dict */
static PyObject *op_hub_download(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"repo", "cache_dir", "include", "exclude", "progress", NULL};
    const char *repo;
    PyObject *cache = NULL, *inc = Py_None, *exc = Py_None, *progress = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "s|O&OOO", kwlist, &repo, fs_path_opt, &cache,
                                     &inc, &exc, &progress))
        return NULL;
    PyObject *fi = inc == Py_None ? PyTuple_New(0) : PySequence_Tuple(inc);
    PyObject *fe = exc == Py_None ? PyTuple_New(0) : PySequence_Tuple(exc);
    Py_ssize_t ni = fi ? PyTuple_GET_SIZE(fi) : 0, ne = fe ? PyTuple_GET_SIZE(fe) : 0;
    const char **vi = PyMem_Calloc((size_t)ni + 1, sizeof(char *));
    const char **ve = PyMem_Calloc((size_t)ne + 1, sizeof(char *));
    PyObject *res = NULL;
    bool ok = fi && fe && vi && ve;
    for (Py_ssize_t i = 0; ok && i < ni; i++)
        ok = (vi[i] = PyUnicode_AsUTF8(PyTuple_GET_ITEM(fi, i))) != NULL;
    for (Py_ssize_t i = 0; ok && i < ne; i++)
        ok = (ve[i] = PyUnicode_AsUTF8(PyTuple_GET_ITEM(fe, i))) != NULL;
    if (!ok) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        goto done;
    }
    progress_ctx p;
    progress_init(&p, progress);
    mf_hub_download_opts o;
    mf_hub_download_opts_init(&o);
    o.cache_dir = PATH_OR_NULL(cache);
    o.include = ni ? vi : NULL;
    o.n_include = (size_t)ni;
    o.exclude = ne ? ve : NULL;
    o.n_exclude = (size_t)ne;
    o.progress = progress_trampoline;
    o.progress_user = &p;
    mf_hub_download_report *r = NULL;
    mf_status st;
    mf_status_init(&st);
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = mf_hub_download(repo, &o, &r, &st);
    Py_END_ALLOW_THREADS
    PyObject *d = NULL;
    if (rc == 0) {
        PyObject *files = PyList_New((Py_ssize_t)r->n_files);
        for (size_t i = 0; files && i < r->n_files; i++) {
            const mf_hub_download_file *f = &r->files[i];
            PyObject *t = Py_BuildValue("{s:N,s:N,s:K,s:K,s:s}", "path", text(f->path), "blob",
                                        text(f->blob), "size", (unsigned long long)f->size,
                                        "fetched", (unsigned long long)f->fetched, "state",
                                        dl_state_name(f->state));
            if (!t) {
                Py_CLEAR(files);
                break;
            }
            PyList_SET_ITEM(files, (Py_ssize_t)i, t);
        }
        d = files ? Py_BuildValue("{s:N,s:N,s:N,s:N,s:K,s:N}", "repo_id", text(r->repo_id),
                                  "revision", text(r->revision), "commit", text(r->commit),
                                  "snapshot", path_text(r->snapshot), "bytes_fetched",
                                  (unsigned long long)r->bytes_fetched, "files", files)
                  : NULL;
        mf_hub_download_report_free(r);
        if (!d) {
            mf_status_clear(&st);
            progress_finish(&p);
            goto done;
        }
    }
    res = finish(rc, &st, &p, d);
done:
    PyMem_Free(vi);
    PyMem_Free(ve);
    Py_XDECREF(fi);
    Py_XDECREF(fe);
    Py_XDECREF(cache);
    return res;
}

/* ------------------------------------------------------- error against */

/* The statistics of sums, as `mfmt report --json` names them. */
static PyObject *acc_dict(const mf_error_acc *a)
{
    return Py_BuildValue("{s:n,s:d,s:d,s:d,s:d,s:d}", "tensors_compared", (Py_ssize_t)a->tensors,
                         "parameters", a->n, "rmse", mf_error_rmse(a), "rel_error",
                         mf_error_rel(a), "snr_db", mf_error_snr_db(a), "cosine",
                         mf_error_cosine(a));
}

static PyObject *error_report_dict(const mf_error_report *r)
{
    PyObject *layers = PyList_New((Py_ssize_t)r->n_layers);
    PyObject *tensors = layers ? PyList_New((Py_ssize_t)r->n_tensors) : NULL;
    PyObject *worst = tensors ? PyList_New((Py_ssize_t)r->n_worst) : NULL;
    bool ok = worst != NULL;
    for (size_t i = 0; ok && i < r->n_layers; i++) {
        PyObject *d = acc_dict(&r->layers[i].acc);
        ok = d && dict_set_str(d, "layer", text(r->layers[i].name)) == 0;
        if (d)
            PyList_SET_ITEM(layers, (Py_ssize_t)i, d);
    }
    for (size_t i = 0; ok && i < r->n_tensors; i++) {
        const mf_error_tensor *t = &r->tensors[i];
        /* one tensor's sums, for its relative error and SNR (as the page) */
        mf_error_acc q = {.n = t->n, .sum_sq = t->n * t->rmse * t->rmse,
                          .sum_ref_sq = t->n * t->rms_ref * t->rms_ref};
        PyObject *d = Py_BuildValue("{s:N,s:s,s:s,s:d,s:d,s:d,s:d,s:d,s:d}", "name",
                                    text(t->name), "dtype_original", mf_dtype_name(t->original),
                                    "dtype_model", mf_dtype_name(t->model), "n", t->n, "rmse",
                                    t->rmse, "max_abs", t->max_abs, "rel_error", mf_error_rel(&q),
                                    "snr_db", mf_error_snr_db(&q), "cosine", t->cosine);
        ok = d != NULL;
        if (d)
            PyList_SET_ITEM(tensors, (Py_ssize_t)i, d);
    }
    for (size_t i = 0; ok && i < r->n_worst; i++) {
        PyObject *t = Py_BuildValue("(Ndd)", text(r->worst[i].name), r->worst[i].rmse,
                                    r->worst[i].cosine);
        ok = t != NULL;
        if (t)
            PyList_SET_ITEM(worst, (Py_ssize_t)i, t);
    }
    PyObject *d = ok ? acc_dict(&r->all) : NULL;
    if (d && (dict_set_str(d, "original", path_text(r->original)) ||
                                   dict_set_str(d, "mapped", PyBool_FromLong(r->mapped)) ||
                                   dict_set_str(d, "only_original",
                                                PyLong_FromSize_t(r->only_original)) ||
                                   dict_set_str(d, "only_model", PyLong_FromSize_t(r->only_model)) ||
                                   dict_set_str(d, "shape_mismatch",
                                                PyLong_FromSize_t(r->shape_mismatch)) ||
                                   dict_set_str(d, "incomparable",
                                                PyLong_FromSize_t(r->incomparable)) ||
                                   dict_set_str(d, "layers", Py_NewRef(layers)) ||
                                   dict_set_str(d, "tensors", Py_NewRef(tensors)) ||
                                   dict_set_str(d, "worst", Py_NewRef(worst))))
        Py_CLEAR(d);
    Py_XDECREF(layers);
    Py_XDECREF(tensors);
    Py_XDECREF(worst);
    return d;
}

/* error_against(model, original) -> dict (report --json's "against") */
static PyObject *op_error_against(PyObject *self, PyObject *args)
{
    PyObject *model, *orig;
    const char *arch_file = NULL;
    if (!PyArg_ParseTuple(args, "O&O&|z", fs_path, &model, fs_path, &orig, &arch_file))
        return NULL;
    mf_error_report *r = NULL;
    mf_error_opts eo;
    mf_error_opts_init(&eo);
    eo.arch_file = arch_file;
    mf_status st;
    mf_status_init(&st);
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = mf_error_against(PyBytes_AS_STRING(model), PyBytes_AS_STRING(orig), &eo, &r, &st);
    Py_END_ALLOW_THREADS
    Py_DECREF(model);
    Py_DECREF(orig);
    if (rc)
        return raise_status(&st);
    mf_status_clear(&st);
    PyObject *d = error_report_dict(r);
    mf_error_report_free(r);
    return d;
}

/* ------------------------------------------------------ delivery records */

/* record_make(model, per_tensor) -> (record JSON text, files) */
static PyObject *op_record_make(PyObject *self, PyObject *args)
{
    PyObject *model;
    int per_tensor = 0;
    if (!PyArg_ParseTuple(args, "O&p", fs_path, &model, &per_tensor))
        return NULL;
    char *json = NULL;
    size_t n = 0;
    mf_status st;
    mf_status_init(&st);
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = mf_record_make(PyBytes_AS_STRING(model), per_tensor, &json, &n, &st);
    Py_END_ALLOW_THREADS
    Py_DECREF(model);
    PyObject *r = rc ? NULL : Py_BuildValue("(Nn)", text(json), (Py_ssize_t)n);
    mf_free(json);
    if (rc == 0 && !r)
        return NULL;
    return finish(rc, &st, NULL, r);
}

/* record_check(model, record) -> dict */
static PyObject *op_record_check(PyObject *self, PyObject *args)
{
    PyObject *model, *rec;
    if (!PyArg_ParseTuple(args, "O&O&", fs_path, &model, fs_path, &rec))
        return NULL;
    mf_record_report *c = NULL;
    mf_status st;
    mf_status_init(&st);
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = mf_record_check(PyBytes_AS_STRING(model), PyBytes_AS_STRING(rec), &c, &st);
    Py_END_ALLOW_THREADS
    Py_DECREF(model);
    Py_DECREF(rec);
    if (rc)
        return raise_status(&st);
    mf_status_clear(&st);
    PyObject *files = PyList_New((Py_ssize_t)c->n_files);
    for (size_t i = 0; files && i < c->n_files; i++) {
        const mf_record_file_check *f = &c->files[i];
        PyObject *t = Py_BuildValue("(NsNs)", text(f->path), f->result_name,
                                    f->tensors_same < 0 ? Py_NewRef(Py_None)
                                                        : PyBool_FromLong(f->tensors_same),
                                    f->meaning);
        if (!t) {
            Py_CLEAR(files);
            break;
        }
        PyList_SET_ITEM(files, (Py_ssize_t)i, t);
    }
    PyObject *d = files ? Py_BuildValue("{s:i,s:N,s:N,s:N,s:N}", "code", c->outcome, "error",
                                        text(c->outcome == MF_RECORD_UNREADABLE ? c->error : NULL),
                                        "repo", text(c->repo), "commit", text(c->commit),
                                        "files", files)
                        : NULL;
    mf_record_report_free(c);
    return d;
}

/* -------------------------------------------------------- metadata diff */

typedef struct {
    PyObject *list;
} meta_collect;

static int meta_row_fn(void *user, const mf_meta_diff_row *r)
{
    meta_collect *c = user;
    PyGILState_STATE g = PyGILState_Ensure();
    int rc = 0;
    PyObject *t = Py_BuildValue("(NsNN)", text(r->key), mf_meta_diff_kind_name(r->kind),
                                r->a ? value_to_py(r->a) : Py_NewRef(Py_None),
                                r->b ? value_to_py(r->b) : Py_NewRef(Py_None));
    if (!t || PyList_Append(c->list, t) != 0)
        rc = 1; /* the exception stays set: mf_diff_metadata stops */
    Py_XDECREF(t);
    PyGILState_Release(g);
    return rc;
}

/* diff_metadata(a, b) -> [(key, kind, value a, value b)] */
static PyObject *op_diff_metadata(PyObject *self, PyObject *args)
{
    PyObject *pa, *pb;
    if (!PyArg_ParseTuple(args, "O&O&", fs_path, &pa, fs_path, &pb))
        return NULL;
    meta_collect c = {PyList_New(0)};
    mf_open_opts oo;
    mf_open_opts_init(&oo);
    oo.flags = MF_OPEN_NO_SCAN; /* metadata only: nothing a loader would run */
    mf_model *a = NULL, *b = NULL;
    mf_status st;
    mf_status_init(&st);
    int rc = -1;
    if (c.list) {
        Py_BEGIN_ALLOW_THREADS
        rc = mf_open(PyBytes_AS_STRING(pa), &oo, &a, &st) ||
                     mf_open(PyBytes_AS_STRING(pb), &oo, &b, &st)
                 ? -1
                 : 0;
        if (rc == 0)
            rc = mf_diff_metadata(a, b, meta_row_fn, &c, &st);
        mf_close(a);
        mf_close(b);
        Py_END_ALLOW_THREADS
    }
    Py_DECREF(pa);
    Py_DECREF(pb);
    if (PyErr_Occurred()) {
        mf_status_clear(&st);
        Py_XDECREF(c.list);
        return NULL;
    }
    return finish(rc, &st, NULL, c.list);
}

/* ------------------------------------------------------------------ graph */

/* model_graph(model) -> the graph as text (`mfmt inspect --graph`) */
static PyObject *op_model_graph(PyObject *self, PyObject *arg)
{
    if (!PyObject_TypeCheck(arg, &Model_Type))
        return raise_usage("model_graph: an mfmt model");
    ModelObject *mo = (ModelObject *)arg;
    if (model_pin(mo) != 0)
        return NULL;
    text_sink s = {NULL, 0, 0};
    mf_status st;
    mf_status_init(&st);
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = mf_model_graph_text(mo->m, text_sink_fn, &s, &st);
    Py_END_ALLOW_THREADS
    model_unpin(mo);
    PyObject *r = rc ? NULL : text(s.buf ? s.buf : "");
    PyMem_RawFree(s.buf);
    if (rc == 0 && !r)
        return NULL;
    return finish(rc, &st, NULL, r);
}

/* ------------------------------------------------------------------ table */

#define KW(f) (PyCFunction)(void (*)(void))(f), METH_VARARGS | METH_KEYWORDS

PyMethodDef ops_more_methods[] = {
    {"convert_mlx", KW(op_convert_mlx), "convert_mlx(src, out, ...) -> None"},
    {"convert_model_hf", KW(op_convert_model_hf), "convert_model_hf(src, out, ...) -> dict"},
    {"convert_model_gguf", KW(op_convert_model_gguf), "convert_model_gguf(src, out, ...) -> dict"},
    {"split_written", op_split_written, METH_VARARGS,
     "split_written(path, max_size, max_tensors) -> files"},
    {"diff_metadata", op_diff_metadata, METH_VARARGS,
     "diff_metadata(a, b) -> [(key, kind, a, b)]"},
    {"model_graph", op_model_graph, METH_O, "model_graph(model) -> text"},
    {"record_make", op_record_make, METH_VARARGS, "record_make(model, per_tensor) -> (json, n)"},
    {"record_check", op_record_check, METH_VARARGS, "record_check(model, record) -> dict"},
    {"error_against", op_error_against, METH_VARARGS,
     "error_against(model, original, arch_file) -> dict"},
    {"manifest", op_manifest, METH_VARARGS, "manifest(path, kinds, label) -> text"},
    {"manifest_check", op_manifest_check, METH_VARARGS,
     "manifest_check(path, manifest, kinds) -> (code, outcome, label, lines)"},
    {"remote_configure", op_remote_configure, METH_VARARGS,
     "remote_configure(token, max_bytes, timeout, retries)"},
    {"remote_defaults", op_remote_defaults, METH_NOARGS, "(max_bytes, timeout, retries)"},
    {"remote_bytes_read", op_remote_bytes_read, METH_NOARGS, "bytes received over HTTP"},
    {"hub_resolve", op_hub_resolve, METH_VARARGS, "hub_resolve(arg, cache_dir, allow_remote)"},
    {"hub_cache_dir", op_hub_cache_dir, METH_NOARGS, "the Hub cache directory"},
    {"cache_scan", op_cache_scan, METH_VARARGS, "cache_scan(cache_dir) -> dict"},
    {"cache_verify", KW(op_cache_verify), "cache_verify(cache_dir, repo, progress) -> dict"},
    {"hub_download", KW(op_hub_download), "hub_download(repo, ...) -> dict"},
    {NULL, NULL, 0, NULL},
};
