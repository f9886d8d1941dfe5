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
    if (mo->has_data) { /* after mf_close: the model read these bytes in place */
        mo->has_data = 0;
        PyBuffer_Release(&mo->data);
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
    const mf_tensor *t = index < 0 ? NULL : mf_model_tensor_at(mo->m, (size_t)index);
    if (!t)
        PyErr_SetString(PyExc_IndexError, "tensor index out of range");
    return t;
}

/* ------------------------------------------------------ life of a Model */

static PyObject *model_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    ModelObject *mo = (ModelObject *)type->tp_alloc(type, 0);
    return (PyObject *)mo;
}

static int model_init(ModelObject *mo, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"path", "strict", "logical", "scan", "data", "fd", NULL};
    PyObject *path = NULL, *data = Py_None;
    int strict = 0, logical = 0, scan = 1, fd = -1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&|pppOi", kwlist,
                                     PyUnicode_FSDecoder, &path, &strict,
                                     &logical, &scan, &data, &fd))
        return -1;
    if (mo->m || mo->pins || mo->has_data) {
        Py_DECREF(path);
        PyErr_SetString(PyExc_RuntimeError, "Model.__init__ called twice");
        return -1;
    }
    /* data: the bytes of one file, read in place (mf_open_buffer); fd >= 0:
     * what an open file descriptor holds from its position (mf_open_fd);
     * path is then only the name messages give it */
    if (data != Py_None && PyObject_GetBuffer(data, &mo->data, PyBUF_SIMPLE) != 0) {
        Py_DECREF(path);
        return -1;
    }
    mo->has_data = data != Py_None;
    PyObject *bytes = PyUnicode_EncodeFSDefault(path);
    if (!bytes) {
        Py_DECREF(path);
        return -1;
    }
    mf_open_opts opts;
    mf_open_opts_init(&opts);
    opts.flags = (strict ? MF_OPEN_STRICT : 0) | (logical ? MF_OPEN_LOGICAL : 0) |
                 (scan ? 0 : MF_OPEN_NO_SCAN);
    mf_status st;
    mf_status_init(&st);
    mf_model *m = NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    if (mo->has_data)
        rc = mf_open_buffer(mo->data.buf, (size_t)mo->data.len, PyBytes_AS_STRING(bytes), &opts,
                            &m, &st);
    else if (fd >= 0)
        rc = mf_open_fd(fd, PyBytes_AS_STRING(bytes), &opts, &m, &st);
    else
        rc = mf_open(PyBytes_AS_STRING(bytes), &opts, &m, &st);
    Py_END_ALLOW_THREADS
    Py_DECREF(bytes);
    if (rc != 0) {
        Py_DECREF(path);
        if (mo->has_data) {
            mo->has_data = 0;
            PyBuffer_Release(&mo->data);
        }
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

static PyObject *text(const char *s)
{
    if (!s)
        Py_RETURN_NONE;
    return PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "surrogateescape");
}

static PyObject *get_format(ModelObject *mo, void *c)
{
    if (model_open_or_raise(mo))
        return NULL;
    return PyUnicode_FromString(mf_format_name(mf_model_format(mo->m)));
}

static PyObject *get_version(ModelObject *mo, void *c)
{
    if (model_open_or_raise(mo))
        return NULL;
    return text(mf_model_version(mo->m));
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
    return PyLong_FromUnsignedLongLong(mf_model_header_bytes(mo->m));
}

static PyObject *get_notes(ModelObject *mo, void *c)
{
    if (model_open_or_raise(mo))
        return NULL;
    size_t n = mf_model_note_count(mo->m);
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; list && i < n; i++) {
        PyObject *s = text(mf_model_note_at(mo->m, i));
        if (!s) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)i, s);
    }
    return list;
}

static PyObject *get_verdict(ModelObject *mo, void *c)
{
    if (model_open_or_raise(mo))
        return NULL;
    return PyUnicode_FromString(mf_verdict_name(mf_model_verdict(mo->m)));
}

/* ------------------------------------------------------------- metadata */

/* {key: value} in file order; with offsets=True {key: byte offset}. */
static PyObject *model_metadata(ModelObject *mo, PyObject *args)
{
    int offsets = 0;
    if (!PyArg_ParseTuple(args, "|p", &offsets) || model_open_or_raise(mo))
        return NULL;
    size_t n = mf_model_meta_count(mo->m);
    PyObject *d = PyDict_New();
    for (size_t i = 0; d && i < n; i++) {
        const mf_kv *kv = mf_model_meta_at(mo->m, i);
        PyObject *v = offsets ? PyLong_FromUnsignedLongLong(kv->offset)
                              : value_to_py(&kv->v);
        PyObject *k = v ? text(kv->key) : NULL;
        if (!k || PyDict_SetItem(d, k, v) != 0)
            Py_CLEAR(d);
        Py_XDECREF(k);
        Py_XDECREF(v);
    }
    return d;
}

/* A value's GGUF types as GGUFReader.fields[k].types lists them: (type,)
 * for a scalar, (ARRAY, element type) for an array, and for an array of
 * arrays the inner arrays' element type after those. */
static PyObject *value_types(const mf_value *v)
{
    int t[4], n = 0;
    t[n++] = (int)v->type;
    if (v->type == MF_V_ARR) {
        t[n++] = (int)v->as.arr.elem;
        if (v->as.arr.elem == MF_V_ARR && v->as.arr.n > 0)
            t[n++] = (int)v->as.arr.items[0].as.arr.elem;
    }
    PyObject *tup = PyTuple_New(n);
    for (int i = 0; tup && i < n; i++) {
        PyObject *x = PyLong_FromLong(t[i]);
        if (!x) {
            Py_CLEAR(tup);
            break;
        }
        PyTuple_SET_ITEM(tup, i, x);
    }
    return tup;
}

/* {key: (GGUF value type, ...)} in file order (MF_V_NULL: 100, a format
 * whose metadata has no GGUF type). */
static PyObject *model_metadata_types(ModelObject *mo, PyObject *unused)
{
    (void)unused;
    if (model_open_or_raise(mo))
        return NULL;
    size_t n = mf_model_meta_count(mo->m);
    PyObject *d = PyDict_New();
    for (size_t i = 0; d && i < n; i++) {
        const mf_kv *kv = mf_model_meta_at(mo->m, i);
        PyObject *v = value_types(&kv->v);
        PyObject *k = v ? text(kv->key) : NULL;
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
    int nd = mf_tensor_ndim(t);
    const int64_t *strides = mf_tensor_strides(t);
    PyObject *st = strides ? int64_tuple(strides, nd) : Py_NewRef(Py_None);
    PyObject *shape = int64_tuple(mf_tensor_shape(t), nd);
    PyObject *name = text(mf_tensor_name(t));
    const char *fp = mf_tensor_file_path(m, t);
    PyObject *file = fp ? PyUnicode_DecodeFSDefault(fp) : Py_NewRef(Py_None);
    PyObject *res = NULL;
    if (st && shape && name && file)
        res = Py_BuildValue("(OsOOOKKOO)", name, mf_dtype_name(mf_tensor_dtype(t)),
                            shape, st, file,
                            (unsigned long long)mf_tensor_offset(t),
                            (unsigned long long)mf_tensor_nbytes(t),
                            mf_tensor_mapped(m, t) ? Py_True : Py_False,
                            mf_tensor_big_endian(t) ? Py_True : Py_False);
    Py_XDECREF(st);
    Py_XDECREF(shape);
    Py_XDECREF(name);
    Py_XDECREF(file);
    return res;
}

static PyObject *model_tensor_infos(ModelObject *mo, PyObject *unused)
{
    if (model_open_or_raise(mo))
        return NULL;
    const mf_model *m = mo->m;
    size_t n = mf_model_tensor_count(m);
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; list && i < n; i++) {
        PyObject *t = tensor_info_tuple(m, mf_model_tensor_at(m, i));
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
    mf_dtype dt = mf_tensor_dtype(t);
    const mf_dtype_info *di = mf_dtype_info_of(dt);
    int nd = mf_tensor_ndim(t);
    const int64_t *shape = mf_tensor_shape(t);
    if (!di || di->block_bytes == 0)
        return -1; /* STRING and unknown types have no fixed layout */
    uint64_t need;
    if (!mf_tensor_strides(t) &&
        (mf_dtype_nbytes(dt, mf_tensor_nelems(t), &need) != 0 || need != mf_tensor_nbytes(t))) {
        /* stored bytes that are not the shape's (a sparse TFLite tensor's
         * compressed buffer): flat, as mf_tensor_stream gives them */
        L->typenum = NPY_UINT8;
        L->itemsize = 1;
        L->elementwise = false;
        L->ndim = 1;
        L->dims[0] = (npy_intp)mf_tensor_nbytes(t);
        return 0;
    }
    if (di->block_elems == 1) {
        int tn = dtype_to_npy(dt);
        if (tn < 0)
            tn = di->block_bytes == 2 ? NPY_UINT16
               : di->block_bytes == 1 ? NPY_UINT8 : -1;
        if (tn < 0)
            return -1;
        L->typenum = tn;
        L->itemsize = di->block_bytes;
        L->ndim = nd;
        for (int i = 0; i < nd; i++)
            L->dims[i] = (npy_intp)shape[i];
        L->elementwise = true;
        return 0;
    }
    L->typenum = NPY_UINT8;
    L->itemsize = 1;
    L->elementwise = false;
    int last = nd - 1;
    if (di->is_quant && nd >= 1 && shape[last] % di->block_elems == 0) {
        L->ndim = nd;
        for (int i = 0; i < last; i++)
            L->dims[i] = (npy_intp)shape[i];
        L->dims[last] = (npy_intp)(shape[last] / di->block_elems * di->block_bytes);
        return 0;
    }
    L->ndim = 1;
    L->dims[0] = (npy_intp)mf_tensor_nbytes(t);
    return 0;
}

/* libmfmt's bytes are little-endian (the mapping's and every canonical
 * stream): the dtype says so, which on a little-endian host is native. */
static PyArray_Descr *le_descr(int typenum)
{
    PyArray_Descr *d = PyArray_DescrFromType(typenum);
    if (!d || d->elsize <= 1 || PyArray_ISNBO(NPY_LITTLE))
        return d;
    PyArray_Descr *le = PyArray_DescrNewByteorder(d, NPY_LITTLE);
    Py_DECREF(d);
    return le;
}

/* A new C-contiguous array of little-endian elements. */
static PyObject *le_array(int ndim, npy_intp *dims, int typenum)
{
    PyArray_Descr *d = le_descr(typenum);
    return d ? PyArray_Empty(ndim, dims, d, 0) : NULL;
}

/* Bytes a strided view reaches below (lo <= 0) and above (hi) its first
 * element; -1 on overflow. */
static int strided_extent(const mf_tensor *t, size_t itemsize, int64_t *lo,
                          int64_t *hi)
{
    int nd = mf_tensor_ndim(t);
    const int64_t *shape = mf_tensor_shape(t), *strides = mf_tensor_strides(t);
    *lo = 0;
    *hi = (int64_t)itemsize;
    for (int i = 0; i < nd; i++) {
        if (shape[i] == 0) {
            *lo = *hi = 0;
            return 0;
        }
    }
    for (int i = 0; i < nd; i++) {
        int64_t step;
        if (__builtin_mul_overflow(strides[i], (int64_t)itemsize, &step) ||
            __builtin_mul_overflow(step, shape[i] - 1, &step))
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
    /* mf_tensor_mapped: element 0 in the mapping, also for strided views;
     * the reader checked that every element they reach lies inside it. */
    const uint8_t *data = mf_tensor_mapped(mo->m, t);
    if (!data || layout_of(t, &L) != 0)
        Py_RETURN_NONE;
    const int64_t *tstrides = mf_tensor_strides(t);
    if (tstrides && !L.elementwise)
        Py_RETURN_NONE;
    int64_t lo = 0, hi = (int64_t)mf_tensor_nbytes(t);
    if (tstrides && strided_extent(t, L.itemsize, &lo, &hi) != 0)
        Py_RETURN_NONE;
    npy_intp strides[MF_MAX_DIMS];
    if (tstrides)
        for (int i = 0; i < L.ndim; i++)
            strides[i] = (npy_intp)(tstrides[i] * (int64_t)L.itemsize);
    PyObject *region = region_new(mo, data + lo, (Py_ssize_t)(hi - lo));
    if (!region)
        return NULL;
    PyArray_Descr *descr = le_descr(L.typenum);
    PyObject *arr = descr ? PyArray_NewFromDescr(
        &PyArray_Type, descr, L.ndim, L.dims, tstrides ? strides : NULL,
        (void *)data, 0 /* read-only */, NULL) : NULL;
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
} buf_sink;

/* An mf_sink_fn into a fixed buffer; more bytes than it holds fail. */
static int buf_sink_write(void *ctx, const void *buf, size_t n, mf_status *st)
{
    buf_sink *b = ctx;
    if (n > b->cap - b->pos)
        return mf_status_fail(st, MF_ERR_FORMAT, "more bytes streamed than the shape holds");
    memcpy(b->dst + b->pos, buf, n);
    b->pos += n;
    return 0;
}

static PyObject *unsupported(const mf_tensor *t, const char *what)
{
    mf_status st;
    mf_status_init(&st);
    mf_status_fail(&st, MF_ERR_UNSUPPORTED, "tensor \"%s\": dtype %s %s",
                   mf_tensor_name(t), mf_dtype_name(mf_tensor_dtype(t)), what);
    return raise_status(&st);
}

/* Reads rows [row0, row0+nrows) of tensor `index` into a new array of
 * `typenum` with dims (dims[0] = nrows), GIL released. */
static PyObject *read_rows(ModelObject *mo, const mf_tensor *t, mf_dtype as,
                           int typenum, int ndim, npy_intp *dims,
                           uint64_t row0, uint64_t nrows)
{
    PyObject *arr = le_array(ndim, dims, typenum);
    if (!arr)
        return NULL;
    if (model_pin(mo) != 0) {
        Py_DECREF(arr);
        return NULL;
    }
    void *buf = PyArray_BYTES((PyArrayObject *)arr);
    size_t cap = (size_t)PyArray_NBYTES((PyArrayObject *)arr);
    mf_status st;
    mf_status_init(&st);
    int rc;
    Py_BEGIN_ALLOW_THREADS
    uint64_t need = 0;
    rc = mf_tensor_read_size(t, as, nrows, &need, &st);
    if (rc == 0 && need != cap)
        rc = mf_status_fail(&st, MF_ERR_FORMAT,
                            "tensor \"%s\": %llu bytes to read, the array holds %zu",
                            mf_tensor_name(t), (unsigned long long)need, cap);
    if (rc == 0)
        rc = mf_tensor_read(mo->m, t, as, row0, nrows, buf, cap, &st);
    Py_END_ALLOW_THREADS
    model_unpin(mo);
    return status_result(arr, rc, &st);
}

/* _read(i): a new, writable, C-contiguous array of the tensor's canonical
 * bytes (C order, little-endian, stored dtype). */
static PyObject *model_read(ModelObject *mo, PyObject *arg)
{
    Py_ssize_t index = PyLong_AsSsize_t(arg);
    if (index == -1 && PyErr_Occurred())
        return NULL;
    const mf_tensor *t = model_tensor(mo, index);
    if (!t)
        return NULL;
    np_layout L;
    if (layout_of(t, &L) != 0)
        return unsupported(t, "has no fixed-size NumPy layout");
    /* the whole tensor: streamed, which every dtype allows (mf_tensor_read
     * wants rows that end on whole bytes/blocks: not so for an odd I4) */
    PyObject *arr = le_array(L.ndim, L.dims, L.typenum);
    if (!arr)
        return NULL;
    if (model_pin(mo) != 0) {
        Py_DECREF(arr);
        return NULL;
    }
    buf_sink b = {(uint8_t *)PyArray_BYTES((PyArrayObject *)arr),
                  (size_t)PyArray_NBYTES((PyArrayObject *)arr), 0};
    mf_status st;
    mf_status_init(&st);
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = mf_tensor_stream(mo->m, t, buf_sink_write, &b, &st);
    if (rc == 0 && b.pos != b.cap)
        rc = mf_status_fail(&st, MF_ERR_FORMAT, "tensor \"%s\": %zu bytes streamed, %zu expected",
                            mf_tensor_name(t), b.pos, b.cap);
    Py_END_ALLOW_THREADS
    model_unpin(mo);
    return status_result(arr, rc, &st);
}

/* _read_f32(i, row0, row1): rows row0..row1 of the outermost dimension
 * (-1: from the start / to the end) as float32, from any dtype
 * mf_dtype_to_f32_supported accepts. */
static PyObject *model_read_f32(ModelObject *mo, PyObject *args)
{
    Py_ssize_t index;
    long long r0 = -1, r1 = -1;
    if (!PyArg_ParseTuple(args, "n|LL", &index, &r0, &r1))
        return NULL;
    const mf_tensor *t = model_tensor(mo, index);
    if (!t)
        return NULL;
    if (!mf_dtype_to_f32_supported(mf_tensor_dtype(t)))
        return unsupported(t, "does not convert to float32");
    int nd = mf_tensor_ndim(t);
    const int64_t *shape = mf_tensor_shape(t);
    uint64_t rows = mf_tensor_rows(t);
    uint64_t row0 = r0 < 0 ? 0 : (uint64_t)r0;
    uint64_t row1 = r1 < 0 ? rows : (uint64_t)r1;
    if (row0 > row1 || row1 > rows)
        return PyErr_Format(PyExc_IndexError, "rows %llu..%llu of a tensor with %llu",
                            (unsigned long long)row0, (unsigned long long)row1,
                            (unsigned long long)rows);
    npy_intp dims[MF_MAX_DIMS];
    for (int i = 0; i < nd; i++)
        dims[i] = (npy_intp)shape[i];
    if (nd > 0)
        dims[0] = (npy_intp)(row1 - row0);
    return read_rows(mo, t, MF_F32, NPY_FLOAT32, nd, dims, row0, row1 - row0);
}

static PyObject *model_hash_tensor(ModelObject *mo, PyObject *args)
{
    Py_ssize_t index;
    const char *algo = "sha256";
    if (!PyArg_ParseTuple(args, "n|s", &index, &algo))
        return NULL;
    mf_hash_algo a;
    if (mf_hash_algo_from_name(algo, &a) != 0)
        return raise_usage("unknown hash algorithm \"%s\"", algo);
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

/* ------------------------------------------------------------ the type */

static PyMethodDef model_methods[] = {
    {"close", (PyCFunction)model_close, METH_NOARGS,
     "close()\n--\n\nRelease the model. Arrays already returned stay valid: "
     "the mapping is unmapped when the last of them is freed."},
    {"_metadata_types", (PyCFunction)model_metadata_types, METH_NOARGS,
     "_metadata_types(): {key: (GGUF value type, ...)}, in file order."},
    {"_metadata", (PyCFunction)model_metadata, METH_VARARGS,
     "_metadata(offsets=False): {key: value} (or {key: byte offset}), in file order."},
    {"_tensor_infos", (PyCFunction)model_tensor_infos, METH_NOARGS,
     "One tuple per tensor: (name, dtype, shape, strides, file, offset, "
     "nbytes, mapped, big_endian)."},
    {"_view", (PyCFunction)model_view, METH_O,
     "Zero-copy read-only array of tensor #i, or None."},
    {"_read", (PyCFunction)model_read, METH_O,
     "New array with tensor #i's canonical bytes."},
    {"_hash_tensor", (PyCFunction)model_hash_tensor, METH_VARARGS,
     "Canonical hash of tensor #i."},
    {"_read_f32", (PyCFunction)model_read_f32, METH_VARARGS,
     "_read_f32(i, row0=-1, row1=-1): rows of tensor #i as float32."},
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
    {"verdict", (getter)get_verdict, NULL,
     "The safety scan's verdict from opening: \"safe\", \"unknown\" or \"dangerous\".", NULL},
    {NULL},
};

PyTypeObject Model_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "mfmt._mfmt.Model",
    .tp_basicsize = sizeof(ModelObject),
    .tp_dealloc = (destructor)model_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "Model(path, strict=False, logical=False, scan=True)\n--\n\nAn open model file (the C view).",
    .tp_weaklistoffset = offsetof(ModelObject, weakrefs),
    .tp_methods = model_methods,
    .tp_getset = model_getset,
    .tp_init = (initproc)model_init,
    .tp_new = model_new,
};
