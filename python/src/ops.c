/* ops.c - module-level functions: every operation of the mfmt command, on
 * the public API, with the GIL released while C works. Arguments arrive
 * already checked and named by mfmt/_ops.py; results go back as dicts and
 * lists that mfmt/_ops.py turns into result objects. */
#include "pymfmt.h"

#include <string.h>
#include <strings.h>

/* ---------------------------------------------------------------- helpers */

/* Path argument (str, bytes or os.PathLike) -> new bytes object. */
static int fs_path(PyObject *arg, void *out)
{
    return PyUnicode_FSConverter(arg, out);
}

static PyObject *text(const char *s)
{
    if (!s)
        Py_RETURN_NONE;
    return PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "surrogateescape");
}

/* After an operation: what the progress callback raised (or Ctrl-C, or a
 * cancel) wins over the library's MF_ERR_CANCELLED; else the status. */
static PyObject *op_failed(mf_status *st, progress_ctx *p)
{
    if (p && (p->et || p->cancelled)) {
        mf_status_clear(st);
        progress_finish(p);
        return NULL;
    }
    return raise_status(st);
}

/* The end of an operation with progress: None, or what failed (above). */
static PyObject *op_result(int rc, mf_status *st, progress_ctx *p)
{
    if (rc != 0)
        return op_failed(st, p);
    mf_status_clear(st);
    if (progress_finish(p) != 0)
        return NULL;
    Py_RETURN_NONE;
}

/* Opens inside a GIL-released block. */
static int open_model(const char *path, unsigned flags, mf_model **m, mf_status *st)
{
    mf_open_opts o;
    mf_open_opts_init(&o);
    o.flags = flags;
    return mf_open(path, &o, m, st);
}

static unsigned unsafe_flags(int allow_unsafe)
{
    return allow_unsafe ? 0 : MF_OPEN_REFUSE_UNSAFE;
}

static int dict_set(PyObject *d, const char *key, PyObject *v)
{
    if (!v)
        return -1;
    int rc = PyDict_SetItemString(d, key, v);
    Py_DECREF(v);
    return rc;
}

static PyObject *status_messages(const mf_status *st)
{
    size_t n = mf_status_count(st);
    PyObject *list = PyList_New(0);
    for (size_t i = 0; list && i < n; i++) {
        PyObject *s = text(mf_status_message(st, i));
        if (!s || PyList_Append(list, s) != 0)
            Py_CLEAR(list);
        Py_XDECREF(s);
    }
    return list;
}

static mf_dtype dtype_arg(const char *name, int *ok)
{
    *ok = 1;
    if (!name)
        return MF_DTYPE_INVALID;
    mf_dtype dt = mf_dtype_from_name(name);
    if (dt == MF_DTYPE_INVALID) {
        raise_usage("unknown dtype \"%s\"", name);
        *ok = 0;
    }
    return dt;
}

/* A list of str (or None) as C strings, for the options' string arrays;
 * the strings are copies (PyMem), valid while the GIL is released. */
typedef struct str_list {
    const char **v;
    size_t n;
} str_list;

static void str_list_free(str_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        PyMem_Free((void *)l->v[i]);
    PyMem_Free(l->v);
    l->v = NULL;
    l->n = 0;
}

static int str_list_get(PyObject *seq, str_list *l)
{
    l->v = NULL;
    l->n = 0;
    if (!seq || seq == Py_None)
        return 0;
    PyObject *f = PySequence_Fast(seq, "a list of str");
    if (!f)
        return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(f);
    l->v = PyMem_Calloc(n ? (size_t)n : 1, sizeof(*l->v));
    int rc = l->v ? 0 : (PyErr_NoMemory(), -1);
    for (Py_ssize_t i = 0; rc == 0 && i < n; i++) {
        const char *s = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(f, i));
        char *c = s ? PyMem_Malloc(strlen(s) + 1) : NULL;
        if (!c) {
            rc = -1;
            if (s)
                PyErr_NoMemory();
            break;
        }
        strcpy(c, s);
        l->v[l->n++] = c;
    }
    Py_DECREF(f);
    if (rc)
        str_list_free(l);
    return rc;
}

/* ----------------------------------------------------------------- detect */

static PyObject *op_detect(PyObject *self, PyObject *args)
{
    PyObject *path;
    if (!PyArg_ParseTuple(args, "O&", fs_path, &path))
        return NULL;
    mf_detection d;
    mf_status st;
    mf_status_init(&st);
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = mf_detect(PyBytes_AS_STRING(path), &d, &st);
    Py_END_ALLOW_THREADS
    Py_DECREF(path);
    if (rc != 0)
        return raise_status(&st);
    mf_status_clear(&st);
    return Py_BuildValue("(sN)", mf_format_name(d.format), text(d.detail));
}

/* --------------------------------------------------------------- validate */

/* (code, [messages]): code 0 when every rule holds; breaches of the format
 * are returned, not raised; I/O and usage errors raise. */
static PyObject *op_validate(PyObject *self, PyObject *args)
{
    PyObject *path;
    if (!PyArg_ParseTuple(args, "O&", fs_path, &path))
        return NULL;
    mf_status st;
    mf_status_init(&st);
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = mf_validate(PyBytes_AS_STRING(path), &st);
    Py_END_ALLOW_THREADS
    Py_DECREF(path);
    if (rc != 0 && st.code != MF_ERR_FORMAT && st.code != MF_ERR_UNSUPPORTED &&
        st.code != MF_ERR_UNSAFE)
        return raise_status(&st);
    PyObject *msgs = status_messages(&st);
    PyObject *res = msgs ? Py_BuildValue("(iN)", rc == 0 ? 0 : (int)st.code, msgs) : NULL;
    mf_status_clear(&st);
    return res;
}

/* ------------------------------------------------------------------- hash */

static PyObject *hash_result_dict(const mf_model *m, const mf_hash_result *r)
{
    PyObject *d = PyDict_New();
    if (!d)
        return NULL;
    PyObject *per = Py_NewRef(Py_None);
    if (r->n_tensors) {
        Py_SETREF(per, PyDict_New());
        for (size_t i = 0; per && i < r->n_tensors; i++) {
            PyObject *k = text(mf_tensor_name(mf_model_tensor_at(m, i)));
            PyObject *v = PyUnicode_FromString(r->tensor_hex[i]);
            if (!k || !v || PyDict_SetItem(per, k, v) != 0)
                Py_CLEAR(per);
            Py_XDECREF(k);
            Py_XDECREF(v);
        }
    }
    if (!per ||
        dict_set(d, "algo", PyUnicode_FromString(mf_hash_algo_name(r->algo))) ||
        dict_set(d, "file", r->has_file ? PyUnicode_FromString(r->file_hex)
                                        : Py_NewRef(Py_None)) ||
        dict_set(d, "tensor_content", PyUnicode_FromString(r->content_hex)) ||
        dict_set(d, "tensors", per)) {
        Py_DECREF(d);
        return NULL;
    }
    return d;
}

static PyObject *op_hash(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"path", "algo", "file", "tensors", "progress", NULL};
    PyObject *path, *progress = Py_None;
    const char *algo = "sha256";
    int whole = 1, per = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&|sppO", kwlist, fs_path, &path,
                                     &algo, &whole, &per, &progress))
        return NULL;
    mf_hash_opts o;
    mf_hash_opts_init(&o);
    if (mf_hash_algo_from_name(algo, &o.algo) != 0) {
        Py_DECREF(path);
        return raise_usage("algo=\"%s\": sha256, sha1, xxh64 or xxh3", algo);
    }
    progress_ctx p;
    progress_init(&p, progress);
    o.whole_file = whole;
    o.per_tensor = per;
    o.progress = progress_trampoline;
    o.progress_user = &p;
    mf_status st;
    mf_status_init(&st);
    mf_model *m = NULL;
    mf_hash_result *r = NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = open_model(PyBytes_AS_STRING(path), MF_OPEN_NO_SCAN, &m, &st);
    if (rc == 0)
        rc = mf_hash_model(m, &o, &r, &st);
    Py_END_ALLOW_THREADS
    Py_DECREF(path);
    PyObject *res = NULL;
    if (rc != 0)
        op_failed(&st, &p);
    else if (progress_finish(&p) == 0)
        res = hash_result_dict(m, r);
    mf_hash_result_free(r);
    mf_close(m);
    mf_status_clear(&st);
    return res;
}

static PyObject *op_hash_file(PyObject *self, PyObject *args)
{
    PyObject *path;
    const char *algo = "sha256";
    if (!PyArg_ParseTuple(args, "O&|s", fs_path, &path, &algo))
        return NULL;
    mf_hash_algo a;
    if (mf_hash_algo_from_name(algo, &a) != 0) {
        Py_DECREF(path);
        return raise_usage("unknown hash algorithm \"%s\"", algo);
    }
    char hex[129];
    mf_status st;
    mf_status_init(&st);
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = mf_hash_file(PyBytes_AS_STRING(path), a, hex, &st);
    Py_END_ALLOW_THREADS
    Py_DECREF(path);
    if (rc != 0)
        return raise_status(&st);
    mf_status_clear(&st);
    return PyUnicode_FromString(hex);
}

/* ------------------------------------------------------------------- scan */

static PyObject *finding_dict(const mf_finding *f)
{
    return Py_BuildValue("{s:s,s:N,s:L,s:L,s:N,s:N,s:N}",
                         "severity", mf_verdict_name(f->severity),
                         "member", text(f->member ? f->member : ""),
                         "offset", (long long)f->offset,
                         "file_offset", (long long)f->file_offset,
                         "opcode", text(f->opcode), "global", text(f->global),
                         "message", text(f->message));
}

static PyObject *scan_report_dict(const mf_scan_report *r)
{
    PyObject *findings = PyList_New(0), *globals = PyList_New(0);
    for (size_t i = 0; findings && i < r->n_findings; i++) {
        PyObject *f = finding_dict(&r->findings[i]);
        if (!f || PyList_Append(findings, f) != 0)
            Py_CLEAR(findings);
        Py_XDECREF(f);
    }
    for (size_t i = 0; globals && i < r->n_globals; i++) {
        PyObject *g = Py_BuildValue("(Ns)", text(r->globals[i].name),
                                    mf_verdict_name(r->globals[i].cls));
        if (!g || PyList_Append(globals, g) != 0)
            Py_CLEAR(globals);
        Py_XDECREF(g);
    }
    if (!findings || !globals) {
        Py_XDECREF(findings);
        Py_XDECREF(globals);
        return NULL;
    }
    return Py_BuildValue("{s:N,s:s,s:N,s:n,s:N,s:n}", "path", text(r->path),
                         "verdict", mf_verdict_name(r->verdict), "findings", findings,
                         "dropped_findings", (Py_ssize_t)r->dropped_findings,
                         "globals", globals, "n_pickles", (Py_ssize_t)r->n_pickles);
}

typedef struct {
    PyObject *list;
} scan_collect;

/* Called on the calling thread with the GIL released: take it to build
 * the report's Python form (the report is freed after the call). */
static int scan_collect_fn(void *user, const mf_scan_report *r)
{
    scan_collect *c = user;
    PyGILState_STATE g = PyGILState_Ensure();
    int rc = 0;
    if (c->list) {
        PyObject *d = scan_report_dict(r);
        if (!d || PyList_Append(c->list, d) != 0) {
            Py_CLEAR(c->list);
            rc = 1;
        }
        Py_XDECREF(d);
    }
    PyGILState_Release(g);
    return rc;
}

static PyObject *op_scan(PyObject *self, PyObject *args)
{
    PyObject *path;
    if (!PyArg_ParseTuple(args, "O&", fs_path, &path))
        return NULL;
    scan_collect c = {PyList_New(0)};
    if (!c.list) {
        Py_DECREF(path);
        return NULL;
    }
    mf_status st;
    mf_status_init(&st);
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = mf_scan_path(PyBytes_AS_STRING(path), scan_collect_fn, &c, &st);
    Py_END_ALLOW_THREADS
    Py_DECREF(path);
    return status_result(c.list, rc, &st);
}

/* The scan reports of an open model's path (for UnsafeFileError). */
static PyObject *op_model_scan(PyObject *self, PyObject *arg)
{
    if (!PyObject_TypeCheck(arg, &Model_Type))
        return PyErr_Format(PyExc_TypeError, "a Model is needed");
    ModelObject *mo = (ModelObject *)arg;
    if (model_pin(mo) != 0)
        return NULL;
    scan_collect c = {PyList_New(0)};
    mf_status st;
    mf_status_init(&st);
    int rc = -1;
    if (c.list) {
        Py_BEGIN_ALLOW_THREADS
        rc = mf_model_scan(mo->m, scan_collect_fn, &c, &st);
        Py_END_ALLOW_THREADS
    }
    model_unpin(mo);
    return status_result(c.list, rc, &st);
}

/* ---------------------------------------------------------------- convert */

static PyObject *op_convert_safetensors(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"src", "out", "key", "max_shard_size", "include_optimizer",
                             "allow_unsafe", "progress", "keep_tied", "dtype", "threads",
                             "train_flags", "config", NULL};
    PyObject *src, *out, *progress = Py_None;
    const char *key = NULL, *dtype = NULL, *config = NULL;
    unsigned long long max_shard = 0;
    int include_opt = 0, allow_unsafe = 0, keep_tied = 0, threads = 1;
    unsigned int train_flags = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&O&|zKppOpziIz", kwlist, fs_path, &src,
                                     fs_path, &out, &key, &max_shard, &include_opt,
                                     &allow_unsafe, &progress, &keep_tied, &dtype, &threads,
                                     &train_flags, &config))
        return NULL;
    progress_ctx p;
    progress_init(&p, progress);
    mf_convert_st_opts o;
    mf_convert_st_opts_init(&o);
    o.key = key;
    o.max_shard_size = max_shard;
    o.include_optimizer = include_opt;
    o.keep_tied = keep_tied;
    o.dtype = dtype;
    o.threads = threads;
    o.progress = progress_trampoline;
    o.progress_user = &p;
    mf_status st;
    mf_status_init(&st);
    mf_model *m = NULL;
    mf_open_opts oo;
    mf_open_opts_init(&oo);
    oo.flags = unsafe_flags(allow_unsafe) | (train_flags & (MF_OPEN_TRAIN_MODULE_STATES |
                                                            MF_OPEN_TRAIN_EXCLUDE_FROZEN));
    oo.config = config;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = mf_open(PyBytes_AS_STRING(src), &oo, &m, &st);
    if (rc == 0)
        rc = mf_convert_to_safetensors(m, PyBytes_AS_STRING(out), &o, NULL, &st);
    mf_close(m);
    Py_END_ALLOW_THREADS
    Py_DECREF(src);
    Py_DECREF(out);
    return op_result(rc, &st, &p);
}

/* An operation from one path to another, with its options. */
typedef int (*path_op_fn)(const char *in, const char *out, const void *opts, mf_status *st);

static int hf_op(const char *in, const char *out, const void *opts, mf_status *st)
{
    return mf_convert_to_hf(in, out, opts, st);
}

/* Runs fn(src, out, opts) with the GIL released; takes src and out. */
static PyObject *run_path_op(path_op_fn fn, PyObject *src, PyObject *out, const void *opts,
                             progress_ctx *p)
{
    mf_status st;
    mf_status_init(&st);
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = fn(PyBytes_AS_STRING(src), PyBytes_AS_STRING(out), opts, &st);
    Py_END_ALLOW_THREADS
    Py_DECREF(src);
    Py_DECREF(out);
    return op_result(rc, &st, p);
}

/* The converter's notes, kept while the GIL is released, then warned. */
typedef struct note_buf {
    char msg[4][700];
    int n;
} note_buf;

static void note_collect(void *user, const char *msg)
{
    note_buf *b = user;
    if (b->n < 4)
        snprintf(b->msg[b->n++], sizeof(b->msg[0]), "%s", msg);
}

/* r, after each note is warned (UserWarning); NULL when a warning filter
 * turned one into an error. */
static PyObject *warn_notes(PyObject *r, const note_buf *b)
{
    for (int i = 0; r && i < b->n; i++)
        if (PyErr_WarnEx(PyExc_UserWarning, b->msg[i], 1) < 0)
            Py_CLEAR(r);
    return r;
}

/* convert_gguf(src, out|None, ...) -> the path written (out as
 * convert_hf_to_gguf.py's --outfile: a directory, or None for src itself,
 * gets the converter's default name). */
static PyObject *op_convert_gguf(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"src", "out", "type", "threads", "progress", "arch_file", "layout",
                             "model_name", "metadata", "vocab_only", "mix_rules", "mmproj",
                             "mistral_format", NULL};
    PyObject *src, *out = Py_None, *outb = NULL, *progress = Py_None;
    const char *type = NULL, *arch_file = NULL, *model_name = NULL, *metadata = NULL;
    int threads = 1, layout = MF_CONVERT_LAYOUT_C392E50, vocab_only = 0, rules = 0, mmproj = 0;
    int mistral = MF_MISTRAL_AUTO;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&O|ziOzizzpipi", kwlist, fs_path, &src, &out,
                                     &type, &threads, &progress, &arch_file, &layout,
                                     &model_name, &metadata, &vocab_only, &rules, &mmproj, &mistral))
        return NULL;
    if (out != Py_None && !PyUnicode_FSConverter(out, &outb)) {
        Py_DECREF(src);
        return NULL;
    }
    progress_ctx p;
    progress_init(&p, progress);
    mf_convert_gguf_opts o;
    mf_convert_gguf_opts_init(&o);
    o.type = type;
    o.threads = threads;
    o.arch_file = arch_file;
    o.layout = layout;
    o.model_name = model_name;
    o.metadata_override = metadata;
    o.vocab_only = vocab_only;
    o.mix_rules = rules;
    o.mmproj = mmproj;
    o.mistral_format = mistral;
    o.progress = progress_trampoline;
    o.progress_user = &p;
    note_buf notes = {.n = 0};
    o.note = note_collect;
    o.note_user = &notes;
    char written[4200] = "";
    o.out_path = written;
    o.out_path_cap = sizeof(written);
    mf_status st;
    mf_status_init(&st);
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = mf_convert_to_gguf(PyBytes_AS_STRING(src), outb ? PyBytes_AS_STRING(outb) : NULL, &o,
                            &st);
    Py_END_ALLOW_THREADS
    Py_DECREF(src);
    Py_XDECREF(outb);
    PyObject *r = op_result(rc, &st, &p);
    if (!r)
        return NULL;
    Py_DECREF(r);
    return warn_notes(PyUnicode_DecodeFSDefault(written), &notes);
}

static PyObject *op_convert_hf(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"src", "out", "dtype", "max_shard_size", "progress", "arch_file", "mmproj", NULL};
    PyObject *src, *out, *progress = Py_None;
    const char *dtype = NULL, *arch_file = NULL, *mmproj = NULL;
    unsigned long long shard = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&O&|zKOzz", kwlist, fs_path, &src, fs_path, &out,
                                     &dtype, &shard, &progress, &arch_file, &mmproj))
        return NULL;
    mf_convert_hf_opts o;
    mf_convert_hf_opts_init(&o);
    o.arch_file = arch_file;
    o.mmproj = mmproj;
    if (dtype) {
        int ok;
        o.dtype = dtype_arg(dtype, &ok);
        if (!ok) {
            Py_DECREF(src);
            Py_DECREF(out);
            return NULL;
        }
    }
    o.max_shard_size = shard;
    progress_ctx p;
    progress_init(&p, progress);
    o.progress = progress_trampoline;
    o.progress_user = &p;
    return run_path_op(hf_op, src, out, &o, &p);
}

static PyObject *op_dequantize(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"src", "out", "dtype", "progress", NULL};
    PyObject *src, *out, *progress = Py_None;
    const char *dtype = "F32";
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&O&|sO", kwlist, fs_path, &src,
                                     fs_path, &out, &dtype, &progress))
        return NULL;
    int ok;
    mf_dequantize_opts o;
    mf_dequantize_opts_init(&o);
    o.dtype = dtype_arg(dtype, &ok);
    if (!ok) {
        Py_DECREF(src);
        Py_DECREF(out);
        return NULL;
    }
    progress_ctx p;
    progress_init(&p, progress);
    o.progress = progress_trampoline;
    o.progress_user = &p;
    mf_dequantize_result r;
    memset(&r, 0, sizeof(r));
    mf_status st;
    mf_status_init(&st);
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = mf_dequantize_file(PyBytes_AS_STRING(src), PyBytes_AS_STRING(out), &o, &r, &st);
    Py_END_ALLOW_THREADS
    Py_DECREF(src);
    Py_DECREF(out);
    if (rc != 0)
        return op_failed(&st, &p);
    mf_status_clear(&st);
    if (progress_finish(&p) != 0)
        return NULL;
    return Py_BuildValue("{s:n,s:n,s:n,s:n,s:n,s:K}", "n_tensors", (Py_ssize_t)r.n_tensors,
                         "n_converted", (Py_ssize_t)r.n_converted,
                         "n_copied", (Py_ssize_t)r.n_copied,
                         "meta_kept", (Py_ssize_t)r.meta_kept,
                         "meta_skipped", (Py_ssize_t)r.meta_skipped,
                         "out_bytes", (unsigned long long)r.out_bytes);
}

/* ------------------------------------------------------------ split/merge */

/* split's plan, one (first tensor, tensors, bytes) per file (on_shard). */
typedef struct {
    PyObject *list;
} shard_collect;

static void shard_fn(void *user, size_t no, size_t n_files, size_t first, size_t n,
                     uint64_t bytes)
{
    (void)no, (void)n_files;
    shard_collect *c = user;
    PyGILState_STATE g = PyGILState_Ensure();
    PyObject *t = c->list ? Py_BuildValue("(nnK)", (Py_ssize_t)first, (Py_ssize_t)n,
                                          (unsigned long long)bytes)
                          : NULL;
    if (c->list && (!t || PyList_Append(c->list, t) != 0))
        Py_CLEAR(c->list); /* the error stays set; reported after the call */
    Py_XDECREF(t);
    PyGILState_Release(g);
}

/* split(...) -> [(first tensor, tensors, bytes)] per file of the set. */
static PyObject *op_split(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"src", "prefix", "max_tensors", "max_size", "progress",
                             "no_tensor_first_split", "dry_run", NULL};
    PyObject *src, *prefix, *progress = Py_None;
    unsigned long long max_tensors = 0, max_size = 0;
    int no_first = 0, dry = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&O&|KKOpp", kwlist, fs_path, &src,
                                     fs_path, &prefix, &max_tensors, &max_size, &progress,
                                     &no_first, &dry))
        return NULL;
    progress_ctx p;
    progress_init(&p, progress);
    mf_split_opts o;
    mf_split_opts_init(&o);
    o.max_tensors = max_tensors;
    o.max_bytes = max_size;
    o.no_tensor_first_split = no_first;
    o.dry_run = dry;
    shard_collect c = {PyList_New(0)};
    o.on_shard = shard_fn;
    o.on_shard_user = &c;
    o.progress = progress_trampoline;
    o.progress_user = &p;
    mf_status st;
    mf_status_init(&st);
    mf_model *m = NULL;
    size_t n_files = 0;
    int rc = -1;
    if (c.list) {
        Py_BEGIN_ALLOW_THREADS
        rc = open_model(PyBytes_AS_STRING(src), MF_OPEN_NO_SCAN, &m, &st);
        if (rc == 0)
            rc = mf_gguf_split(m, PyBytes_AS_STRING(prefix), &o, &n_files, &st);
        mf_close(m);
        Py_END_ALLOW_THREADS
    }
    Py_DECREF(src);
    Py_DECREF(prefix);
    if (rc != 0) {
        bool listed = c.list != NULL; /* else PyList_New failed: MemoryError is set */
        Py_XDECREF(c.list);
        if (listed)
            return op_failed(&st, &p);
        mf_status_clear(&st);
        return NULL;
    }
    mf_status_clear(&st);
    if (progress_finish(&p) != 0 || !c.list) {
        Py_XDECREF(c.list);
        return NULL;
    }
    return c.list;
}

static PyObject *op_merge(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"src", "out", "progress", NULL};
    PyObject *src, *out, *progress = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&O&|O", kwlist, fs_path, &src,
                                     fs_path, &out, &progress))
        return NULL;
    progress_ctx p;
    progress_init(&p, progress);
    mf_merge_opts o;
    mf_merge_opts_init(&o);
    o.progress = progress_trampoline;
    o.progress_user = &p;
    mf_status st;
    mf_status_init(&st);
    mf_model *m = NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = open_model(PyBytes_AS_STRING(src), MF_OPEN_NO_SCAN, &m, &st);
    if (rc == 0)
        rc = mf_merge(m, PyBytes_AS_STRING(out), &o, &st);
    mf_close(m);
    Py_END_ALLOW_THREADS
    Py_DECREF(src);
    Py_DECREF(out);
    return op_result(rc, &st, &p);
}

/* --------------------------------------------------------------- quantize */

typedef struct {
    PyObject *list;
    progress_ctx *p;
} quant_collect;

static PyObject *ne_tuple(const int64_t *ne, int n)
{
    PyObject *t = PyTuple_New(n);
    for (int i = 0; t && i < n; i++) {
        PyObject *x = PyLong_FromLongLong(ne[i]);
        if (!x) {
            Py_CLEAR(t);
            break;
        }
        PyTuple_SET_ITEM(t, i, x);
    }
    return t;
}

static int quant_report_fn(void *user, const mf_quant_tensor_report *r)
{
    quant_collect *c = user;
    PyGILState_STATE g = PyGILState_Ensure();
    int rc = 0;
    PyObject *d = Py_BuildValue(
        "{s:N,s:s,s:s,s:N,s:K,s:K,s:K,s:O,s:O,s:O,s:d,s:d,s:d,s:O,s:i}",
        "name", text(r->name), "src", mf_dtype_name(r->src), "dst", mf_dtype_name(r->dst),
        "ne", ne_tuple(r->ne, 4), "nelems", (unsigned long long)r->nelems,
        "src_bytes", (unsigned long long)r->src_bytes,
        "dst_bytes", (unsigned long long)r->dst_bytes,
        "converted", r->converted ? Py_True : Py_False,
        "fallback", r->fallback ? Py_True : Py_False,
        "imatrix", r->imatrix ? Py_True : Py_False, "rmse", r->rmse,
        "max_abs", r->max_abs, "cosine", r->cosine,
        "nonfinite", r->nonfinite ? Py_True : Py_False, "n_dims", r->n_dims);
    if (!d || PyList_Append(c->list, d) != 0) {
        /* keep the exception for the caller, as a progress callback's */
        c->p->cancelled = 1;
        PyObject *et, *ev, *tb;
        PyErr_Fetch(&et, &ev, &tb);
        if (!c->p->et) {
            c->p->et = et;
            c->p->ev = ev;
            c->p->tb = tb;
        }
        rc = 1;
    }
    Py_XDECREF(d);
    PyGILState_Release(g);
    return rc;
}

static PyObject *op_quantize(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"src", "out", "type", "threads", "imatrix", "allow_requantize",
                             "pure", "leave_output", "output_type", "token_embd_type",
                             "dry_run", "progress", "keep_split", "include_weights",
                             "exclude_weights", "override_kv", "mix_rules", NULL};
    PyObject *src, *out = Py_None, *outb = NULL, *imatrix = Py_None, *imb = NULL;
    PyObject *progress = Py_None;
    const char *type, *output_type = NULL, *embd_type = NULL;
    int threads = 1, requant = 0, pure = 0, leave_output = 0, dry = 0, keep_split = 0, rules = 0;
    PyObject *incl = NULL, *excl = NULL, *kvo = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&Os|iOpppzzpOpOOOi", kwlist, fs_path, &src,
                                     &out, &type, &threads, &imatrix, &requant, &pure,
                                     &leave_output, &output_type, &embd_type, &dry,
                                     &progress, &keep_split, &incl, &excl, &kvo, &rules))
        return NULL;
    PyObject *res = NULL, *tensors = NULL;
    str_list li = {0}, le = {0}, lk = {0};
    if (str_list_get(incl, &li) || str_list_get(excl, &le) || str_list_get(kvo, &lk))
        goto done;
    /* llama-quantize's COPY: by name only, any case */
    bool only_copy = strcasecmp(type, "COPY") == 0;
    mf_ftype ft = only_copy ? MF_FTYPE_ALL_F32 : mf_ftype_parse(type);
    int ok1, ok2;
    mf_dtype otype = dtype_arg(output_type, &ok1);
    mf_dtype etype = ok1 ? dtype_arg(embd_type, &ok2) : MF_DTYPE_INVALID;
    if (!ok1 || !ok2)
        goto done;
    if (ft == MF_FTYPE_INVALID) {
        raise_usage("unknown quantization type \"%s\"", type);
        goto done;
    }
    if (out != Py_None && !PyUnicode_FSConverter(out, &outb))
        goto done;
    if (imatrix != Py_None && !PyUnicode_FSConverter(imatrix, &imb))
        goto done;
    progress_ctx p;
    progress_init(&p, progress);
    mf_quantize_opts o;
    mf_quantize_opts_init(&o, ft);
    o.nthreads = threads;
    o.imatrix_path = imb ? PyBytes_AS_STRING(imb) : NULL;
    o.allow_requantize = requant;
    o.pure = pure;
    o.leave_output = leave_output;
    o.output_type = otype;
    o.token_embd_type = etype;
    o.dry_run = dry;
    o.only_copy = only_copy;
    o.keep_split = keep_split;
    o.mix_rules = (mf_mix_rules)rules;
    o.include_weights = li.v;
    o.n_include_weights = li.n;
    o.exclude_weights = le.v;
    o.n_exclude_weights = le.n;
    o.kv_overrides = lk.v;
    o.n_kv_overrides = lk.n;
    o.progress = progress_trampoline;
    o.progress_user = &p;
    quant_collect c = {PyList_New(0), &p};
    if (!c.list)
        goto done;
    tensors = c.list;
    mf_quantize_result r;
    memset(&r, 0, sizeof(r));
    mf_status st;
    mf_status_init(&st);
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = mf_quantize_file(PyBytes_AS_STRING(src), outb ? PyBytes_AS_STRING(outb) : NULL,
                          &o, quant_report_fn, &c, &r, &st);
    Py_END_ALLOW_THREADS
    if (rc != 0) {
        op_failed(&st, &p);
        goto done;
    }
    mf_status_clear(&st);
    if (progress_finish(&p) != 0)
        goto done;
    res = Py_BuildValue(
        "{s:s,s:n,s:n,s:n,s:n,s:K,s:K,s:K,s:K,s:d,s:n,s:n,s:O}",
        "type", only_copy ? "COPY" : mf_ftype_name(ft), "n_tensors", (Py_ssize_t)r.n_tensors,
        "n_converted", (Py_ssize_t)r.n_converted, "n_fallback", (Py_ssize_t)r.n_fallback,
        "n_k_quantized", (Py_ssize_t)r.n_k_quantized, "n_params", (unsigned long long)r.n_params,
        "in_tensor_bytes", (unsigned long long)r.in_tensor_bytes,
        "out_tensor_bytes", (unsigned long long)r.out_tensor_bytes,
        "out_file_bytes", (unsigned long long)r.out_file_bytes, "bpw", r.bpw,
        "imatrix_entries", (Py_ssize_t)r.imatrix_entries,
        "imatrix_used", (Py_ssize_t)r.imatrix_used, "tensors", tensors);
done:
    str_list_free(&li);
    str_list_free(&le);
    str_list_free(&lk);
    Py_XDECREF(tensors);
    Py_DECREF(src);
    Py_XDECREF(outb);
    Py_XDECREF(imb);
    return res;
}

/* ------------------------------------------------------------------- diff */

typedef struct {
    PyObject *list;
} diff_collect;

static PyObject *side(const mf_tensor *t)
{
    if (!t)
        Py_RETURN_NONE;
    PyObject *shape = ne_tuple(mf_tensor_shape(t), mf_tensor_ndim(t));
    return shape ? Py_BuildValue("(sN)", mf_dtype_name(mf_tensor_dtype(t)), shape) : NULL;
}

static int diff_row_fn(void *user, const mf_diff_row *r)
{
    diff_collect *c = user;
    PyGILState_STATE g = PyGILState_Ensure();
    int rc = 0;
    if (c->list) {
        PyObject *d = Py_BuildValue("{s:N,s:s,s:N,s:N,s:d,s:d,s:d,s:K}", "name", text(r->name),
                                    "kind", mf_diff_kind_name(r->kind), "a", side(r->a),
                                    "b", side(r->b), "max_abs", r->max_abs, "rmse", r->rmse,
                                    "cosine", r->cosine, "n_diff", (unsigned long long)r->n_diff);
        if (!d || PyList_Append(c->list, d) != 0) {
            Py_CLEAR(c->list);
            rc = 1;
        }
        Py_XDECREF(d);
    }
    PyGILState_Release(g);
    return rc;
}

/* An HF directory and a GGUF (either order): the GGUF re-opened as the
 * directory's tensors through the converter's tables or arch_file, as
 * `mfmt diff` does unless --no-map. 0 and *mapped true when it is; 0 and
 * a note in `why` when the pair is one but the converter cannot read that
 * GGUF (names then compared as they are; an error with arch_file). */
static int diff_map_gguf(mf_model **a, mf_model **b, const char *pa, const char *pb,
                         const char *arch_file, bool *mapped, char *why, size_t why_cap, mf_status *st)
{
    mf_format fa = mf_model_format(*a), fb = mf_model_format(*b);
    int g = fa == MF_FMT_HF_DIR && fb == MF_FMT_GGUF ? 1 : fa == MF_FMT_GGUF && fb == MF_FMT_HF_DIR ? 0 : -1;
    *mapped = false;
    if (g < 0)
        return arch_file ? mf_status_fail(st, MF_ERR_USAGE, "arch_file= maps an HF directory against a GGUF; "
                                          "%s and %s are not such a pair", pa, pb)
                         : 0;
    mf_convert_hf_opts ho;
    mf_convert_hf_opts_init(&ho);
    ho.dtype = MF_F32;
    ho.arch_file = arch_file;
    mf_model *view = NULL;
    mf_status ms;
    mf_status_init(&ms);
    int rc = mf_open_gguf_as_hf(g ? pb : pa, &ho, &view, arch_file ? st : &ms);
    if (rc == 0) {
        mf_close(g ? *b : *a);
        *(g ? b : a) = view;
        *mapped = true;
    } else if (!arch_file) {
        snprintf(why, why_cap, "%s not mapped through the converter (%s); names compared as they are",
                 g ? pb : pa, ms.msg);
        rc = 0;
    }
    mf_status_clear(&ms);
    return rc;
}

static PyObject *op_diff(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"a", "b", "allow_unsafe", "map", "arch_file", NULL};
    PyObject *pa, *pb;
    int allow_unsafe = 0, map = 1;
    const char *arch_file = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&O&|ppz", kwlist, fs_path, &pa, fs_path,
                                     &pb, &allow_unsafe, &map, &arch_file))
        return NULL;
    diff_collect c = {PyList_New(0)};
    mf_status st;
    mf_status_init(&st);
    mf_model *a = NULL, *b = NULL;
    int rc = -1;
    bool mapped = false;
    char why[1200] = "";
    if (c.list) {
        Py_BEGIN_ALLOW_THREADS
        rc = open_model(PyBytes_AS_STRING(pa), unsafe_flags(allow_unsafe), &a, &st);
        if (rc == 0)
            rc = open_model(PyBytes_AS_STRING(pb), unsafe_flags(allow_unsafe), &b, &st);
        if (rc == 0 && map)
            rc = diff_map_gguf(&a, &b, PyBytes_AS_STRING(pa), PyBytes_AS_STRING(pb), arch_file, &mapped,
                               why, sizeof(why), &st);
        if (rc == 0)
            rc = mf_diff(a, b, diff_row_fn, &c, &st);
        mf_close(a);
        mf_close(b);
        Py_END_ALLOW_THREADS
    }
    Py_DECREF(pa);
    Py_DECREF(pb);
    PyObject *rows = status_result(c.list, rc, &st);
    if (rows && why[0] && PyErr_WarnEx(PyExc_UserWarning, why, 1) < 0)
        Py_CLEAR(rows);
    return rows ? Py_BuildValue("(NO)", rows, mapped ? Py_True : Py_False) : NULL;
}

/* --------------------------------------------------------------- estimate */

static PyObject *op_estimate(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"path", "ctx", "batch", "kv_type", "type", "mix_rules", NULL};
    PyObject *path;
    long long ctx = 0, batch = 0;
    const char *kv = NULL, *wt = NULL;
    int rules = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&|LLzzi", kwlist, fs_path, &path, &ctx,
                                     &batch, &kv, &wt, &rules))
        return NULL;
    mf_estimate_opts o;
    mf_estimate_opts_init(&o);
    o.ctx = ctx;
    o.batch = batch;
    o.kv_type = kv;
    o.weight_type = wt;
    o.mix_rules = rules;
    mf_status st;
    mf_status_init(&st);
    mf_estimate *e = NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = mf_estimate_path(PyBytes_AS_STRING(path), &o, &e, &st);
    Py_END_ALLOW_THREADS
    Py_DECREF(path);
    if (rc != 0)
        return raise_status(&st);
    mf_status_clear(&st);
    PyObject *d = Py_BuildValue(
        "{s:s,s:s,s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:K,s:O,s:K,s:d,s:s,s:s,s:d,s:K,s:K,s:N}",
        "source", e->source, "arch", e->arch, "n_layers", (long long)e->n_layers,
        "n_heads", (long long)e->n_heads, "n_kv_heads", (long long)e->n_kv_heads,
        "hidden", (long long)e->hidden, "head_dim_k", (long long)e->head_dim_k,
        "head_dim_v", (long long)e->head_dim_v, "ctx", (long long)e->ctx,
        "ctx_train", (long long)e->ctx_train, "batch", (long long)e->batch,
        "n_params", (unsigned long long)e->n_params,
        "params_from_config", e->params_from_config ? Py_True : Py_False,
        "weight_bytes", (unsigned long long)e->weight_bytes, "weight_bpw", e->weight_bpw,
        "weight_type", e->weight_type, "kv_type", e->kv_type,
        "kv_bytes_per_elem", e->kv_bytes_per_elem, "kv_bytes", (unsigned long long)e->kv_bytes,
        "total_bytes", (unsigned long long)e->total_bytes,
        "weight_note", e->weight_note[0] ? text(e->weight_note) : Py_NewRef(Py_None));
    mf_estimate_free(e);
    return d;
}

/* ------------------------------------------------------------------- plan */

static PyObject *op_plan(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"path", "devices", "dtype", NULL};
    PyObject *path, *devices;
    const char *dtype = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&O|z", kwlist, fs_path, &path, &devices,
                                     &dtype))
        return NULL;
    PyObject *seq = PySequence_Fast(devices, "devices: a list of (name, bytes)");
    if (!seq) {
        Py_DECREF(path);
        return NULL;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    mf_plan_device *devs = PyMem_Calloc(n ? (size_t)n : 1, sizeof(*devs));
    PyObject *res = NULL;
    if (!devs) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        const char *name;
        unsigned long long cap;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, i), "sK", &name, &cap))
            goto done;
        snprintf(devs[i].name, sizeof(devs[i].name), "%s", name);
        devs[i].capacity = cap;
    }
    mf_plan_opts o;
    mf_plan_opts_init(&o);
    o.dtype = dtype;
    mf_status st;
    mf_status_init(&st);
    mf_plan *pl = NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = mf_plan_path(PyBytes_AS_STRING(path), devs, (size_t)n, &o, &pl, &st);
    Py_END_ALLOW_THREADS
    if (rc != 0) {
        raise_status(&st);
        goto done;
    }
    mf_status_clear(&st);
    PyObject *dl = PyList_New(0), *map = PyDict_New();
    for (size_t i = 0; dl && i < pl->n_devices; i++) {
        PyObject *t = Py_BuildValue("(sKK)", pl->devices[i].name,
                                    (unsigned long long)pl->devices[i].capacity,
                                    (unsigned long long)pl->used[i]);
        if (!t || PyList_Append(dl, t) != 0)
            Py_CLEAR(dl);
        Py_XDECREF(t);
    }
    for (size_t i = 0; map && i < pl->n_map; i++) {
        size_t d = pl->map[i].device;
        PyObject *v = PyUnicode_FromString(d < pl->n_devices ? pl->devices[d].name : "?");
        PyObject *k = text(pl->map[i].module);
        if (!k || !v || PyDict_SetItem(map, k, v) != 0)
            Py_CLEAR(map);
        Py_XDECREF(k);
        Py_XDECREF(v);
    }
    if (dl && map)
        res = Py_BuildValue("{s:O,s:O,s:K,s:K}", "devices", dl, "device_map", map,
                            "total", (unsigned long long)pl->total,
                            "reserved", (unsigned long long)pl->reserved);
    Py_XDECREF(dl);
    Py_XDECREF(map);
    mf_plan_free(pl);
done:
    PyMem_Free(devs);
    Py_DECREF(seq);
    Py_DECREF(path);
    return res;
}

/* ------------------------------------------------------------------- edit */

/* edit(src, out|None, [(kind, key, text|None)], force, dry_run) -> dict;
 * kind: "set", "delete", "rename_tensor", "chat_template_from". */
static PyObject *op_edit(PyObject *self, PyObject *args)
{
    PyObject *src, *out = Py_None, *outb = NULL, *items;
    int force = 0, dry = 0;
    if (!PyArg_ParseTuple(args, "O&OOpp", fs_path, &src, &out, &items, &force, &dry))
        return NULL;
    PyObject *seq = PySequence_Fast(items, "ops: a list"), *res = NULL;
    mf_edit_op *ops = NULL;
    if (!seq || (out != Py_None && !PyUnicode_FSConverter(out, &outb)))
        goto done;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    ops = PyMem_Calloc(n ? (size_t)n : 1, sizeof(*ops));
    if (!ops) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        const char *kind, *key, *txt = NULL;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, i), "ssz", &kind, &key, &txt))
            goto done;
        if (strcmp(kind, "set") == 0)
            ops[i].kind = MF_EDIT_SET;
        else if (strcmp(kind, "delete") == 0)
            ops[i].kind = MF_EDIT_DELETE;
        else if (strcmp(kind, "rename_tensor") == 0)
            ops[i].kind = MF_EDIT_RENAME_TENSOR;
        else if (strcmp(kind, "chat_template_from") == 0)
            ops[i].kind = MF_EDIT_CHAT_TEMPLATE_FROM;
        else {
            raise_usage("edit: unknown operation \"%s\"", kind);
            goto done;
        }
        ops[i].key = *key ? key : NULL;
        ops[i].text = txt;
    }
    mf_edit_opts o = {.struct_size = sizeof(mf_edit_opts),
                      .flags = (force ? MF_EDIT_FORCE : 0) | (dry ? MF_EDIT_DRY_RUN : 0)};
    mf_edit_report r;
    memset(&r, 0, sizeof(r));
    mf_status st;
    mf_status_init(&st);
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = mf_edit(PyBytes_AS_STRING(src), outb ? PyBytes_AS_STRING(outb) : NULL, ops,
                 (size_t)n, &o, &r, &st);
    Py_END_ALLOW_THREADS
    if (rc != 0) {
        raise_status(&st);
        goto done;
    }
    mf_status_clear(&st);
    PyObject *changes = PyList_New(0);
    static const char *const kinds[] = {"set", "delete", "rename_tensor", "chat_template_from"};
    for (size_t i = 0; changes && i < r.n_changes; i++) {
        const mf_edit_change *c = &r.changes[i];
        PyObject *t = Py_BuildValue("(sNNN)",
                                    (unsigned)c->kind < 4 ? kinds[c->kind] : "?",
                                    text(c->key), text(c->before), text(c->after));
        if (!t || PyList_Append(changes, t) != 0)
            Py_CLEAR(changes);
        Py_XDECREF(t);
    }
    if (changes)
        res = Py_BuildValue("{s:K,s:K,s:K,s:N}", "old_header_bytes",
                            (unsigned long long)r.old_header_bytes, "new_header_bytes",
                            (unsigned long long)r.new_header_bytes, "data_bytes",
                            (unsigned long long)r.data_bytes, "changes", changes);
    mf_edit_report_free(&r);
done:
    PyMem_Free(ops);
    Py_XDECREF(seq);
    Py_XDECREF(outb);
    Py_DECREF(src);
    return res;
}

/* -------------------------------------------------------------- save_file */

typedef struct {
    Py_buffer *views;
} save_ctx;

static int save_fill(void *ctx, size_t index, mf_sink_fn sink, void *sink_ctx,
                     mf_status *st)
{
    save_ctx *c = ctx;
    return sink(sink_ctx, c->views[index].buf, (size_t)c->views[index].len, st);
}

/* save_file(path, [(name, dtype, shape, contiguous buffer)], {str: str}) */
static PyObject *op_save_safetensors(PyObject *self, PyObject *args)
{
    PyObject *path, *items, *meta;
    if (!PyArg_ParseTuple(args, "O&OO!", fs_path, &path, &items, &PyDict_Type, &meta))
        return NULL;
    PyObject *seq = PySequence_Fast(items, "tensors: a list");
    if (!seq) {
        Py_DECREF(path);
        return NULL;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq), nm = PyDict_Size(meta), got = 0;
    mf_out_tensor *ts = PyMem_Calloc(n ? (size_t)n : 1, sizeof(*ts));
    Py_buffer *views = PyMem_Calloc(n ? (size_t)n : 1, sizeof(*views));
    mf_kv *kv = PyMem_Calloc(nm ? (size_t)nm : 1, sizeof(*kv));
    PyObject *res = NULL;
    if (!ts || !views || !kv) {
        PyErr_NoMemory();
        goto done;
    }
    for (; got < n; got++) {
        PyObject *shape, *buf;
        const char *name, *dtype;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, got), "ssOO", &name, &dtype,
                              &shape, &buf))
            goto done;
        int ok;
        ts[got].name = name;
        ts[got].dtype = dtype_arg(dtype, &ok);
        if (!ok)
            goto done;
        PyObject *sh = PySequence_Fast(shape, "shape: a sequence");
        if (!sh)
            goto done;
        Py_ssize_t nd = PySequence_Fast_GET_SIZE(sh);
        if (nd > MF_MAX_DIMS) {
            Py_DECREF(sh);
            raise_usage("tensor \"%s\": %zd dimensions", name, nd);
            goto done;
        }
        ts[got].ndim = (int)nd;
        for (Py_ssize_t d = 0; d < nd; d++)
            ts[got].shape[d] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(sh, d));
        Py_DECREF(sh);
        if (PyErr_Occurred())
            goto done;
        if (PyObject_GetBuffer(buf, &views[got], PyBUF_C_CONTIGUOUS) != 0)
            goto done;
    }
    Py_ssize_t pos = 0, i = 0;
    PyObject *k, *v;
    while (PyDict_Next(meta, &pos, &k, &v)) {
        Py_ssize_t kl, vl;
        const char *ks = PyUnicode_AsUTF8AndSize(k, &kl);
        const char *vs = ks ? PyUnicode_AsUTF8AndSize(v, &vl) : NULL;
        if (!vs) {
            PyErr_SetString(PyExc_TypeError, "metadata: str keys and str values");
            goto done;
        }
        kv[i].key = ks;
        kv[i].v.type = MF_V_STR;
        kv[i].v.as.s.ptr = vs;
        kv[i].v.as.s.len = (size_t)vl;
        i++;
    }
    save_ctx c = {views};
    mf_status st;
    mf_status_init(&st);
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = mf_safetensors_write(PyBytes_AS_STRING(path), ts, (size_t)n, kv, (size_t)nm,
                              save_fill, &c, &st);
    Py_END_ALLOW_THREADS
    if (rc != 0) {
        raise_status(&st);
        goto done;
    }
    mf_status_clear(&st);
    res = Py_NewRef(Py_None);
done:
    for (Py_ssize_t j = 0; views && j < got; j++)
        PyBuffer_Release(&views[j]);
    PyMem_Free(ts);
    PyMem_Free(views);
    PyMem_Free(kv);
    Py_DECREF(seq);
    Py_DECREF(path);
    return res;
}

/* ----------------------------------------------------------------- tables */

/* (name, ggml_id, block_elems, block_bytes, bits, is_float, is_quant,
 *  is_signed, to_f32) of a dtype name, or None. */
static PyObject *op_dtype_info(PyObject *self, PyObject *args)
{
    const char *name;
    if (!PyArg_ParseTuple(args, "s", &name))
        return NULL;
    mf_dtype dt = mf_dtype_from_name(name);
    const mf_dtype_info *di = dt == MF_DTYPE_INVALID ? NULL : mf_dtype_info_of(dt);
    if (!di)
        Py_RETURN_NONE;
    return Py_BuildValue("(siIIIOOOO)", di->name, di->ggml_id, di->block_elems,
                         di->block_bytes, di->bits, di->is_float ? Py_True : Py_False,
                         di->is_quant ? Py_True : Py_False,
                         di->is_signed ? Py_True : Py_False,
                         mf_dtype_to_f32_supported(dt) ? Py_True : Py_False);
}

static PyObject *op_parse_size(PyObject *self, PyObject *args)
{
    const char *s;
    if (!PyArg_ParseTuple(args, "s", &s))
        return NULL;
    uint64_t v;
    if (mf_parse_size(s, &v) != 0)
        return raise_usage("\"%s\" is not a size (5GB, 500MiB, 1024)", s);
    return PyLong_FromUnsignedLongLong(v);
}

/* mf_diff_kind_name of every kind, in enum order. */
static PyObject *op_diff_kinds(PyObject *self, PyObject *unused)
{
    return Py_BuildValue("(sssssss)", mf_diff_kind_name(MF_DIFF_SAME_BYTES),
                         mf_diff_kind_name(MF_DIFF_SAME_VALUES), mf_diff_kind_name(MF_DIFF_VALUES),
                         mf_diff_kind_name(MF_DIFF_SHAPE), mf_diff_kind_name(MF_DIFF_ONLY_A),
                         mf_diff_kind_name(MF_DIFF_ONLY_B),
                         mf_diff_kind_name(MF_DIFF_INCOMPARABLE));
}

static PyObject *op_lib_version(PyObject *self, PyObject *unused)
{
    return PyUnicode_FromString(mf_version());
}

PyMethodDef ops_methods[] = {
    {"detect", op_detect, METH_VARARGS, "detect(path) -> (format, detail)"},
    {"validate", op_validate, METH_VARARGS, "validate(path) -> (code, [messages])"},
    {"hash", (PyCFunction)(void (*)(void))op_hash, METH_VARARGS | METH_KEYWORDS,
     "hash(path, algo, file, tensors, progress) -> dict"},
    {"hash_file", op_hash_file, METH_VARARGS, "hash_file(path, algo) -> hex"},
    {"scan", op_scan, METH_VARARGS, "scan(path) -> [report dict]"},
    {"model_scan", op_model_scan, METH_O, "model_scan(model) -> [report dict]"},
    {"convert_safetensors", (PyCFunction)(void (*)(void))op_convert_safetensors,
     METH_VARARGS | METH_KEYWORDS, "convert_safetensors(src, out, ...)"},
    {"convert_gguf", (PyCFunction)(void (*)(void))op_convert_gguf,
     METH_VARARGS | METH_KEYWORDS, "convert_gguf(dir, out, type, threads, progress)"},
    {"convert_hf", (PyCFunction)(void (*)(void))op_convert_hf, METH_VARARGS | METH_KEYWORDS,
     "convert_hf(gguf, out_dir, dtype, max_shard_size, progress)"},
    {"dequantize", (PyCFunction)(void (*)(void))op_dequantize, METH_VARARGS | METH_KEYWORDS,
     "dequantize(src, out, dtype, progress) -> dict"},
    {"split", (PyCFunction)(void (*)(void))op_split, METH_VARARGS | METH_KEYWORDS,
     "split(src, prefix, max_tensors, max_size, progress) -> files written"},
    {"merge", (PyCFunction)(void (*)(void))op_merge, METH_VARARGS | METH_KEYWORDS,
     "merge(src, out, progress)"},
    {"quantize", (PyCFunction)(void (*)(void))op_quantize, METH_VARARGS | METH_KEYWORDS,
     "quantize(src, out, type, ...) -> dict"},
    {"diff", (PyCFunction)(void (*)(void))op_diff, METH_VARARGS | METH_KEYWORDS,
     "diff(a, b, allow_unsafe, map, arch_file) -> ([row dict], mapped)"},
    {"estimate", (PyCFunction)(void (*)(void))op_estimate, METH_VARARGS | METH_KEYWORDS,
     "estimate(path, ctx, batch, kv_type, type) -> dict"},
    {"plan", (PyCFunction)(void (*)(void))op_plan, METH_VARARGS | METH_KEYWORDS,
     "plan(path, [(name, bytes)], dtype) -> dict"},
    {"edit", op_edit, METH_VARARGS, "edit(src, out, [(kind, key, text)], force, dry_run) -> dict"},
    {"save_safetensors", op_save_safetensors, METH_VARARGS,
     "save_safetensors(path, [(name, dtype, shape, buffer)], {str: str})"},
    {"dtype_info", op_dtype_info, METH_VARARGS, "dtype_info(name) -> tuple|None"},
    {"parse_size", op_parse_size, METH_VARARGS, "parse_size(\"5GB\") -> bytes"},
    {"lib_version", op_lib_version, METH_NOARGS, "libmfmt's version"},
    {"diff_kinds", op_diff_kinds, METH_NOARGS, "the names of the diff kinds, in enum order"},
    {NULL},
};
