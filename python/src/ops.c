/* ops.c - module-level functions: detect, validate, hash, dtype table. */
#include "pymfmt.h"

#include <string.h>

/* Path argument (str, bytes or os.PathLike) -> new bytes object. */
static int fs_path(PyObject *arg, PyObject **out)
{
    return PyUnicode_FSConverter(arg, out);
}

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
    return Py_BuildValue("(sN)", mf_format_name(d.format),
                         PyUnicode_DecodeUTF8(d.detail, strlen(d.detail),
                                              "surrogateescape"));
}

/* Opens with MF_OPEN_STRICT and returns (format, [messages]) without
 * raising for breaches of the format; I/O and usage errors raise. */
static PyObject *op_validate(PyObject *self, PyObject *args)
{
    PyObject *path;
    if (!PyArg_ParseTuple(args, "O&", fs_path, &path))
        return NULL;
    mf_open_opts opts = {.flags = MF_OPEN_STRICT};
    mf_status st;
    mf_status_init(&st);
    mf_model *m = NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = mf_open(PyBytes_AS_STRING(path), &opts, &m, &st);
    Py_END_ALLOW_THREADS
    Py_DECREF(path);
    if (st.code != MF_OK && st.code != MF_ERR_FORMAT &&
        st.code != MF_ERR_UNSUPPORTED) {
        if (m)
            mf_close(m);
        return raise_status(&st);
    }
    const char *fmt = m ? mf_format_name(m->format) : NULL;
    PyObject *msgs = PyList_New(0);
    for (size_t i = 0; msgs && i < st.n_all; i++) {
        PyObject *s = PyUnicode_DecodeUTF8(st.all[i], strlen(st.all[i]),
                                           "surrogateescape");
        if (!s || PyList_Append(msgs, s) != 0)
            Py_CLEAR(msgs);
        Py_XDECREF(s);
    }
    if (msgs && st.n_all == 0 && st.code != MF_OK) {
        PyObject *s = PyUnicode_DecodeUTF8(st.msg, strlen(st.msg), "surrogateescape");
        if (!s || PyList_Append(msgs, s) != 0)
            Py_CLEAR(msgs);
        Py_XDECREF(s);
    }
    PyObject *res = msgs ? Py_BuildValue("(ziiO)", fmt, (int)st.code,
                                         rc == 0, msgs) : NULL;
    Py_XDECREF(msgs);
    if (m)
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
        return PyErr_Format(PyExc_ValueError, "unknown hash algorithm \"%s\"", algo);
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

/* (name, ggml_id, block_elems, block_bytes, bits, is_float, is_quant,
 *  is_signed) of a dtype name, or None. */
static PyObject *op_dtype_info(PyObject *self, PyObject *args)
{
    const char *name;
    if (!PyArg_ParseTuple(args, "s", &name))
        return NULL;
    mf_dtype dt = mf_dtype_from_name(name);
    const mf_dtype_info *di = dt == MF_DTYPE_INVALID ? NULL : mf_dtype_info_of(dt);
    if (!di)
        Py_RETURN_NONE;
    return Py_BuildValue("(siIIIOOO)", di->name, di->ggml_id, di->block_elems,
                         di->block_bytes, di->bits,
                         di->is_float ? Py_True : Py_False,
                         di->is_quant ? Py_True : Py_False,
                         di->is_signed ? Py_True : Py_False);
}

PyMethodDef ops_methods[] = {
    {"detect", op_detect, METH_VARARGS, "detect(path) -> (format, detail)"},
    {"validate", op_validate, METH_VARARGS,
     "validate(path) -> (format|None, code, opened, [messages])"},
    {"hash_file", op_hash_file, METH_VARARGS, "hash_file(path, algo) -> hex"},
    {"dtype_info", op_dtype_info, METH_VARARGS, "dtype_info(name) -> tuple|None"},
    {NULL},
};
