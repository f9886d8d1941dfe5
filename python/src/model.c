/* model.c - _mfmt.Model (one open mf_model) and _mfmt.Region (the base
 * object that keeps a model's mapping alive under a zero-copy array). */
#include "pymfmt.h"

#include <string.h>

/* ---------------------------------------------------------------- Region */

typedef struct {
    PyObject_HEAD
    ModelObject *owner; /* strong reference and one pin */
    const void *ptr;
    Py_ssize_t len;
} RegionObject;

static void region_dealloc(RegionObject *r)
{
    ModelObject *mo = r->owner;
    r->owner = NULL;
    if (mo) {
        model_unpin(mo);
        Py_DECREF(mo);
    }
    Py_TYPE(r)->tp_free((PyObject *)r);
}

static int region_getbuffer(RegionObject *r, Py_buffer *view, int flags)
{
    /* The mapping is PROT_READ: a writable export would crash on write. */
    return PyBuffer_FillInfo(view, (PyObject *)r, (void *)r->ptr, r->len, 1,
                             flags);
}

static PyBufferProcs region_as_buffer = {
    .bf_getbuffer = (getbufferproc)region_getbuffer,
};

PyTypeObject Region_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "mfmt._mfmt.Region",
    .tp_basicsize = sizeof(RegionObject),
    .tp_dealloc = (destructor)region_dealloc,
    .tp_as_buffer = &region_as_buffer,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Read-only bytes of an open model's mapping; keeps the model "
              "alive while any array views them.",
};

static PyObject *region_new(ModelObject *mo, const void *ptr, Py_ssize_t len)
{
    RegionObject *r = PyObject_New(RegionObject, &Region_Type);
    if (!r)
        return NULL;
    mo->pins++;
    Py_INCREF(mo);
    r->owner = mo;
    r->ptr = ptr;
    r->len = len;
    return (PyObject *)r;
}

/* ------------------------------------------------------------ pin/unpin */

static void model_free(ModelObject *mo)
{
    if (mo->m) {
        mf_close(mo->m);
        mo->m = NULL;
    }
}

int model_pin(ModelObject *mo)
{
    if (mo->closed || !mo->m) {
        PyErr_SetString(PyExc_ValueError, "I/O operation on a closed model");
        return -1;
    }
    mo->pins++;
    return 0;
}

void model_unpin(ModelObject *mo)
{
    if (--mo->pins == 0 && mo->closed)
        model_free(mo);
}

const mf_tensor *model_tensor(ModelObject *mo, Py_ssize_t index)
{
    if (mo->closed || !mo->m) {
        PyErr_SetString(PyExc_ValueError, "I/O operation on a closed model");
        return NULL;
    }
    if (index < 0 || (size_t)index >= mo->m->n_tensors) {
        PyErr_SetString(PyExc_IndexError, "tensor index out of range");
        return NULL;
    }
    return &mo->m->tensors[index];
}

/* ------------------------------------------------------ life of a Model */

static PyObject *model_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    ModelObject *mo = (ModelObject *)type->tp_alloc(type, 0);
    return (PyObject *)mo;
}

static int model_init(ModelObject *mo, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"path", "strict", NULL};
    PyObject *path = NULL;
    int strict = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&|p", kwlist,
                                     PyUnicode_FSDecoder, &path, &strict))
        return -1;
    if (mo->m || mo->pins) {
        Py_DECREF(path);
        PyErr_SetString(PyExc_RuntimeError, "Model.__init__ called twice");
        return -1;
    }
    PyObject *bytes = PyUnicode_EncodeFSDefault(path);
    if (!bytes) {
        Py_DECREF(path);
        return -1;
    }
    mf_open_opts opts = {.flags = strict ? MF_OPEN_STRICT : 0};
    mf_status st;
    mf_status_init(&st);
    mf_model *m = NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = mf_open(PyBytes_AS_STRING(bytes), &opts, &m, &st);
    Py_END_ALLOW_THREADS
    Py_DECREF(bytes);
    if (rc != 0) {
        Py_DECREF(path);
        raise_status(&st);
        return -1;
    }
    mf_status_clear(&st);
    Py_XSETREF(mo->path, path);
    mo->m = m;
    mo->closed = 0;
    return 0;
}

static void model_dealloc(ModelObject *mo)
{
    if (mo->weakrefs)
        PyObject_ClearWeakRefs((PyObject *)mo);
    /* Regions hold references, so nothing can be pinned here. */
    model_free(mo);
    Py_CLEAR(mo->path);
    Py_TYPE(mo)->tp_free((PyObject *)mo);
}

static PyObject *model_close(ModelObject *mo, PyObject *unused)
{
    mo->closed = 1;
    if (mo->pins == 0)
        model_free(mo);
    Py_RETURN_NONE;
}

/* -------------------------------------------------------------- getters */

static int model_open_or_raise(ModelObject *mo)
{
    if (mo->closed || !mo->m) {
        PyErr_SetString(PyExc_ValueError, "I/O operation on a closed model");
        return -1;
    }
    return 0;
}

static PyObject *get_format(ModelObject *mo, void *c)
{
    if (model_open_or_raise(mo))
        return NULL;
    return PyUnicode_FromString(mf_format_name(mo->m->format));
}

static PyObject *get_version(ModelObject *mo, void *c)
{
    if (model_open_or_raise(mo))
        return NULL;
    return PyUnicode_DecodeUTF8(mo->m->version, strlen(mo->m->version),
                                "surrogateescape");
}

static PyObject *get_path(ModelObject *mo, void *c)
{
    if (!mo->path)
        Py_RETURN_NONE;
    return Py_NewRef(mo->path);
}

static PyObject *get_closed(ModelObject *mo, void *c)
{
    return PyBool_FromLong(mo->closed || !mo->m);
}

static PyObject *get_file_bytes(ModelObject *mo, void *c)
{
    if (model_open_or_raise(mo))
        return NULL;
    return PyLong_FromUnsignedLongLong(mf_model_file_bytes(mo->m));
}

static PyObject *get_file_count(ModelObject *mo, void *c)
{
    if (model_open_or_raise(mo))
        return NULL;
    return PyLong_FromSize_t(mf_model_file_count(mo->m));
}

static PyObject *get_header_bytes(ModelObject *mo, void *c)
{
    if (model_open_or_raise(mo))
        return NULL;
    return PyLong_FromUnsignedLongLong(mo->m->header_bytes);
}

static PyObject *str_list(char **v, size_t n)
{
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; list && i < n; i++) {
        PyObject *s = PyUnicode_DecodeUTF8(v[i], strlen(v[i]), "surrogateescape");
        if (!s) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)i, s);
    }
    return list;
}

static PyObject *get_notes(ModelObject *mo, void *c)
{
    if (model_open_or_raise(mo))
        return NULL;
    return str_list(mo->m->notes, mo->m->n_notes);
}

static PyObject *get_n_tensors(ModelObject *mo, void *c)
{
    if (model_open_or_raise(mo))
        return NULL;
    return PyLong_FromSize_t(mo->m->n_tensors);
}

/* ------------------------------------------------------------- metadata */

static PyObject *model_metadata(ModelObject *mo, PyObject *unused)
{
    if (model_open_or_raise(mo))
        return NULL;
    PyObject *d = PyDict_New();
    for (size_t i = 0; d && i < mo->m->n_meta; i++) {
        const mf_kv *kv = &mo->m->meta[i];
        PyObject *v = value_to_py(&kv->v);
        PyObject *k = v ? PyUnicode_DecodeUTF8(kv->key, strlen(kv->key),
                                               "surrogateescape") : NULL;
        if (!k || PyDict_SetItem(d, k, v) != 0)
            Py_CLEAR(d);
        Py_XDECREF(k);
        Py_XDECREF(v);
    }
    return d;
}

static PyObject *model_metadata_offsets(ModelObject *mo, PyObject *unused)
{
    if (model_open_or_raise(mo))
        return NULL;
    PyObject *d = PyDict_New();
    for (size_t i = 0; d && i < mo->m->n_meta; i++) {
        const mf_kv *kv = &mo->m->meta[i];
        PyObject *v = PyLong_FromUnsignedLongLong(kv->offset);
        PyObject *k = v ? PyUnicode_DecodeUTF8(kv->key, strlen(kv->key),
                                               "surrogateescape") : NULL;
        if (!k || PyDict_SetItem(d, k, v) != 0)
            Py_CLEAR(d);
        Py_XDECREF(k);
        Py_XDECREF(v);
    }
    return d;
}

/* -------------------------------------------------------------- tensors */

static PyObject *int64_tuple(const int64_t *v, int n)
{
    PyObject *t = PyTuple_New(n);
    for (int i = 0; t && i < n; i++) {
        PyObject *x = PyLong_FromLongLong(v[i]);
        if (!x) {
            Py_CLEAR(t);
            break;
        }
        PyTuple_SET_ITEM(t, i, x);
    }
    return t;
}

/* (name, dtype, shape, strides|None, file path, offset, nbytes, mapped,
 *  big_endian) for one tensor. */
static PyObject *tensor_info_tuple(const mf_model *m, const mf_tensor *t)
{
    const mf_file *f = mf_tensor_file(m, t);
    PyObject *strides = t->strides ? int64_tuple(t->strides, t->ndim)
                                   : Py_NewRef(Py_None);
    PyObject *shape = int64_tuple(t->shape, t->ndim);
    PyObject *res = NULL;
    if (strides && shape) {
        PyObject *name = PyUnicode_DecodeUTF8(t->name, strlen(t->name),
                                              "surrogateescape");
        PyObject *file = f && f->path ? PyUnicode_DecodeFSDefault(f->path)
                                      : Py_NewRef(Py_None);
        if (name && file)
            res = Py_BuildValue("(OsOOOKKOO)", name, mf_dtype_name(t->dtype),
                                shape, strides, file,
                                (unsigned long long)t->offset,
                                (unsigned long long)t->nbytes,
                                t->data ? Py_True : Py_False,
                                t->big_endian ? Py_True : Py_False);
        Py_XDECREF(name);
        Py_XDECREF(file);
    }
    Py_XDECREF(strides);
    Py_XDECREF(shape);
    return res;
}

static PyObject *model_tensor_infos(ModelObject *mo, PyObject *unused)
{
    if (model_open_or_raise(mo))
        return NULL;
    const mf_model *m = mo->m;
    PyObject *list = PyList_New((Py_ssize_t)m->n_tensors);
    for (size_t i = 0; list && i < m->n_tensors; i++) {
        PyObject *t = tensor_info_tuple(m, &m->tensors[i]);
        if (!t) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)i, t);
    }
    return list;
}

/* ------------------------------------------------------ array layouts */

/* How a tensor looks as a NumPy array: element types NumPy has keep their
 * type; BF16 and the FP8 types are their bit patterns (uint16 / uint8);
 * ggml block types are their raw blocks as uint8, one row of blocks per
 * row when the last dimension is whole blocks; packed sub-byte types are
 * their packed bytes, flat. */
typedef struct {
    int typenum;
    int ndim;
    npy_intp dims[MF_MAX_DIMS];
    size_t itemsize;
    bool elementwise; /* one array element per tensor element */
} np_layout;

static int layout_of(const mf_tensor *t, np_layout *L)
{
    const mf_dtype_info *di = mf_dtype_info_of(t->dtype);
    if (!di || di->block_bytes == 0)
        return -1; /* STRING and unknown types have no fixed layout */
    if (di->block_elems == 1) {
        int tn = dtype_to_npy(t->dtype);
        if (tn < 0)
            tn = di->block_bytes == 2 ? NPY_UINT16
               : di->block_bytes == 1 ? NPY_UINT8 : -1;
        if (tn < 0)
            return -1;
        L->typenum = tn;
        L->itemsize = di->block_bytes;
        L->ndim = t->ndim;
        for (int i = 0; i < t->ndim; i++)
            L->dims[i] = (npy_intp)t->shape[i];
        L->elementwise = true;
        return 0;
    }
    L->typenum = NPY_UINT8;
    L->itemsize = 1;
    L->elementwise = false;
    int last = t->ndim - 1;
    if (di->is_quant && t->ndim >= 1 && t->shape[last] % di->block_elems == 0) {
        L->ndim = t->ndim;
        for (int i = 0; i < last; i++)
            L->dims[i] = (npy_intp)t->shape[i];
        L->dims[last] = (npy_intp)(t->shape[last] / di->block_elems * di->block_bytes);
        return 0;
    }
    L->ndim = 1;
    L->dims[0] = (npy_intp)t->nbytes;
    return 0;
}

/* Bytes a strided view reaches below (lo <= 0) and above (hi) its first
 * element; -1 on overflow. */
static int strided_extent(const mf_tensor *t, size_t itemsize, int64_t *lo,
                          int64_t *hi)
{
    *lo = 0;
    *hi = (int64_t)itemsize;
    for (int i = 0; i < t->ndim; i++) {
        if (t->shape[i] == 0) {
            *lo = *hi = 0;
            return 0;
        }
    }
    for (int i = 0; i < t->ndim; i++) {
        int64_t step;
        if (__builtin_mul_overflow(t->strides[i], (int64_t)itemsize, &step) ||
            __builtin_mul_overflow(step, t->shape[i] - 1, &step))
            return -1;
        if (step < 0 ? __builtin_add_overflow(*lo, step, lo)
                     : __builtin_add_overflow(*hi, step, hi))
            return -1;
    }
    return 0;
}

/* A read-only array over the mapping, or None when the tensor is not laid
 * out plainly in it (compressed, chunked, big-endian, typed fields). */
static PyObject *model_view(ModelObject *mo, PyObject *arg)
{
    Py_ssize_t index = PyLong_AsSsize_t(arg);
    if (index == -1 && PyErr_Occurred())
        return NULL;
    const mf_tensor *t = model_tensor(mo, index);
    if (!t)
        return NULL;
    np_layout L;
    if (!t->data || t->big_endian || layout_of(t, &L) != 0)
        Py_RETURN_NONE;
    if (t->strides && !L.elementwise)
        Py_RETURN_NONE;
    int64_t lo = 0, hi = (int64_t)t->nbytes;
    if (t->strides && strided_extent(t, L.itemsize, &lo, &hi) != 0)
        Py_RETURN_NONE;
    const mf_file *f = mf_tensor_file(mo->m, t);
    if (!f || !f->base)
        Py_RETURN_NONE;
    /* Defence in depth: readers check this; a view must never reach past
     * its file's mapping. */
    int64_t at = (int64_t)(t->data - f->base);
    if (at + lo < 0 || at + hi > (int64_t)f->size)
        Py_RETURN_NONE;
    npy_intp strides[MF_MAX_DIMS];
    if (t->strides)
        for (int i = 0; i < t->ndim; i++)
            strides[i] = (npy_intp)(t->strides[i] * (int64_t)L.itemsize);
    PyObject *region = region_new(mo, t->data + lo, (Py_ssize_t)(hi - lo));
    if (!region)
        return NULL;
    PyArray_Descr *descr = PyArray_DescrFromType(L.typenum);
    PyObject *arr = descr ? PyArray_NewFromDescr(
        &PyArray_Type, descr, L.ndim, L.dims, t->strides ? strides : NULL,
        (void *)t->data, 0 /* read-only */, NULL) : NULL;
    if (!arr) {
        Py_DECREF(region);
        return NULL;
    }
    if (PyArray_SetBaseObject((PyArrayObject *)arr, region) != 0) {
        Py_DECREF(arr);
        return NULL;
    }
    return arr;
}

typedef struct {
    uint8_t *dst;
    size_t cap, pos;
    const char *name;
} buf_sink;

static int buf_sink_write(void *ctx, const void *buf, size_t n, mf_status *st)
{
    buf_sink *b = ctx;
    (void)st;
    if (n > b->cap - b->pos)
        return -1; /* checked by the caller: pos != cap */
    memcpy(b->dst + b->pos, buf, n);
    b->pos += n;
    return 0;
}

/* A new, writable, C-contiguous array holding the tensor's canonical bytes
 * (C order, little-endian, stored dtype), streamed with the GIL released. */
static PyObject *model_read(ModelObject *mo, PyObject *arg)
{
    Py_ssize_t index = PyLong_AsSsize_t(arg);
    if (index == -1 && PyErr_Occurred())
        return NULL;
    const mf_tensor *t = model_tensor(mo, index);
    if (!t)
        return NULL;
    np_layout L;
    if (layout_of(t, &L) != 0) {
        mf_status st;
        mf_status_init(&st);
        st.code = MF_ERR_UNSUPPORTED;
        snprintf(st.msg, sizeof(st.msg),
                 "tensor \"%s\": dtype %s has no fixed-size NumPy layout",
                 t->name, mf_dtype_name(t->dtype));
        return raise_status(&st);
    }
    PyObject *arr = PyArray_SimpleNew(L.ndim, L.dims, L.typenum);
    if (!arr)
        return NULL;
    buf_sink b = {(uint8_t *)PyArray_BYTES((PyArrayObject *)arr),
                  (size_t)PyArray_NBYTES((PyArrayObject *)arr), 0, t->name};
    if (model_pin(mo) != 0) {
        Py_DECREF(arr);
        return NULL;
    }
    mf_status st;
    mf_status_init(&st);
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = mf_tensor_stream(mo->m, t, buf_sink_write, &b, &st);
    Py_END_ALLOW_THREADS
    if (rc == 0 && b.pos != b.cap) {
        st.code = MF_ERR_FORMAT;
        snprintf(st.msg, sizeof(st.msg),
                 "tensor \"%s\": %zu bytes streamed, %zu expected", t->name,
                 b.pos, b.cap);
        rc = -1;
    }
    model_unpin(mo);
    if (rc != 0) {
        Py_DECREF(arr);
        if (st.code == MF_OK) {
            st.code = MF_ERR_FORMAT;
            snprintf(st.msg, sizeof(st.msg),
                     "tensor \"%s\": more bytes streamed than its shape holds",
                     t->name);
        }
        return raise_status(&st);
    }
    mf_status_clear(&st);
    return arr;
}

static PyObject *model_hash_tensor(ModelObject *mo, PyObject *args)
{
    Py_ssize_t index;
    const char *algo = "sha256";
    if (!PyArg_ParseTuple(args, "n|s", &index, &algo))
        return NULL;
    mf_hash_algo a;
    if (mf_hash_algo_from_name(algo, &a) != 0)
        return PyErr_Format(PyExc_ValueError, "unknown hash algorithm \"%s\"", algo);
    const mf_tensor *t = model_tensor(mo, index);
    if (!t || model_pin(mo) != 0)
        return NULL;
    char hex[129];
    mf_status st;
    mf_status_init(&st);
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = mf_hash_tensor(mo->m, t, a, hex, &st);
    Py_END_ALLOW_THREADS
    model_unpin(mo);
    if (rc != 0)
        return raise_status(&st);
    mf_status_clear(&st);
    return PyUnicode_FromString(hex);
}

static PyObject *model_hash_content(ModelObject *mo, PyObject *args)
{
    const char *algo = "sha256";
    if (!PyArg_ParseTuple(args, "|s", &algo))
        return NULL;
    mf_hash_algo a;
    if (mf_hash_algo_from_name(algo, &a) != 0)
        return PyErr_Format(PyExc_ValueError, "unknown hash algorithm \"%s\"", algo);
    if (model_pin(mo) != 0)
        return NULL;
    char hex[129];
    mf_status st;
    mf_status_init(&st);
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = mf_hash_tensor_content(mo->m, a, hex, &st);
    Py_END_ALLOW_THREADS
    model_unpin(mo);
    if (rc != 0)
        return raise_status(&st);
    mf_status_clear(&st);
    return PyUnicode_FromString(hex);
}

/* ------------------------------------------------------------ the type */

static PyMethodDef model_methods[] = {
    {"close", (PyCFunction)model_close, METH_NOARGS,
     "close()\n--\n\nRelease the model. Arrays already returned stay valid: "
     "the mapping is unmapped when the last of them is freed."},
    {"_metadata", (PyCFunction)model_metadata, METH_NOARGS,
     "Metadata as a dict, in file order."},
    {"_metadata_offsets", (PyCFunction)model_metadata_offsets, METH_NOARGS,
     "Byte offset of each metadata pair in its file (0 when not known)."},
    {"_tensor_infos", (PyCFunction)model_tensor_infos, METH_NOARGS,
     "One tuple per tensor: (name, dtype, shape, strides, file, offset, "
     "nbytes, mapped, big_endian)."},
    {"_view", (PyCFunction)model_view, METH_O,
     "Zero-copy read-only array of tensor #i, or None."},
    {"_read", (PyCFunction)model_read, METH_O,
     "New array with tensor #i's canonical bytes."},
    {"_hash_tensor", (PyCFunction)model_hash_tensor, METH_VARARGS,
     "Canonical hash of tensor #i."},
    {"_hash_content", (PyCFunction)model_hash_content, METH_VARARGS,
     "Hash of all tensors' canonical bytes in table order."},
    {NULL},
};

static PyGetSetDef model_getset[] = {
    {"format", (getter)get_format, NULL, "Format name (\"safetensors\", \"gguf\", ...).", NULL},
    {"version", (getter)get_version, NULL, "Format version as the file states it.", NULL},
    {"path", (getter)get_path, NULL, "The path given to open().", NULL},
    {"closed", (getter)get_closed, NULL, "True after close().", NULL},
    {"file_bytes", (getter)get_file_bytes, NULL, "Bytes of every file the model maps.", NULL},
    {"file_count", (getter)get_file_count, NULL, "How many files the model maps.", NULL},
    {"header_bytes", (getter)get_header_bytes, NULL, "Bytes read to open the model.", NULL},
    {"notes", (getter)get_notes, NULL, "Warnings that are not breaches of the format.", NULL},
    {"_n_tensors", (getter)get_n_tensors, NULL, NULL, NULL},
    {NULL},
};

PyTypeObject Model_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "mfmt._mfmt.Model",
    .tp_basicsize = sizeof(ModelObject),
    .tp_dealloc = (destructor)model_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "Model(path, strict=False)\n--\n\nAn open model file (the C view).",
    .tp_weaklistoffset = offsetof(ModelObject, weakrefs),
    .tp_methods = model_methods,
    .tp_getset = model_getset,
    .tp_init = (initproc)model_init,
    .tp_new = model_new,
};
