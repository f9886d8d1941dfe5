/* values.c - metadata values and element types, C to Python. */
#include "pymfmt.h"

#include <string.h>

int dtype_to_npy(mf_dtype dt)
{
    switch (dt) {
    case MF_F32: return NPY_FLOAT32;
    case MF_F16: return NPY_FLOAT16;
    case MF_F64: return NPY_FLOAT64;
    case MF_I8: return NPY_INT8;
    case MF_I16: return NPY_INT16;
    case MF_I32: return NPY_INT32;
    case MF_I64: return NPY_INT64;
    case MF_U8: return NPY_UINT8;
    case MF_U16: return NPY_UINT16;
    case MF_U32: return NPY_UINT32;
    case MF_U64: return NPY_UINT64;
    case MF_BOOL: return NPY_BOOL;
    case MF_C64: return NPY_COMPLEX64;
    case MF_C128: return NPY_COMPLEX128;
    default: return -1;
    }
}

static PyObject *str_value(const char *p, size_t n)
{
    /* Vocabularies hold byte tokens that are not UTF-8: surrogateescape
     * keeps every byte (s.encode("utf-8", "surrogateescape") gives them
     * back) instead of failing or replacing. */
    return PyUnicode_DecodeUTF8(p, (Py_ssize_t)n, "surrogateescape");
}

static int vtype_to_npy(mf_vtype t)
{
    switch (t) {
    case MF_V_U8: return NPY_UINT8;
    case MF_V_I8: return NPY_INT8;
    case MF_V_U16: return NPY_UINT16;
    case MF_V_I16: return NPY_INT16;
    case MF_V_U32: return NPY_UINT32;
    case MF_V_I32: return NPY_INT32;
    case MF_V_U64: return NPY_UINT64;
    case MF_V_I64: return NPY_INT64;
    case MF_V_F32: return NPY_FLOAT32;
    case MF_V_F64: return NPY_FLOAT64;
    case MF_V_BOOL: return NPY_BOOL;
    default: return -1;
    }
}

/* A numeric array as a 1-D NumPy array of the file's element type. */
static PyObject *numeric_array(const mf_value *v, int typenum)
{
    npy_intp n = (npy_intp)v->as.arr.n;
    PyObject *arr = PyArray_SimpleNew(1, &n, typenum);
    if (!arr)
        return NULL;
    char *p = PyArray_BYTES((PyArrayObject *)arr);
    const mf_value *it = v->as.arr.items;
    for (npy_intp i = 0; i < n; i++) {
        const mf_value *x = &it[i];
        switch (v->as.arr.elem) {
        case MF_V_U8: ((uint8_t *)p)[i] = (uint8_t)x->as.u; break;
        case MF_V_I8: ((int8_t *)p)[i] = (int8_t)x->as.i; break;
        case MF_V_U16: ((uint16_t *)p)[i] = (uint16_t)x->as.u; break;
        case MF_V_I16: ((int16_t *)p)[i] = (int16_t)x->as.i; break;
        case MF_V_U32: ((uint32_t *)p)[i] = (uint32_t)x->as.u; break;
        case MF_V_I32: ((int32_t *)p)[i] = (int32_t)x->as.i; break;
        case MF_V_U64: ((uint64_t *)p)[i] = x->as.u; break;
        case MF_V_I64: ((int64_t *)p)[i] = x->as.i; break;
        case MF_V_F32: ((float *)p)[i] = (float)x->as.f; break;
        case MF_V_F64: ((double *)p)[i] = x->as.f; break;
        case MF_V_BOOL: ((npy_bool *)p)[i] = x->as.b ? 1 : 0; break;
        default: break;
        }
    }
    return arr;
}

PyObject *value_to_py(const mf_value *v)
{
    switch (v->type) {
    case MF_V_U8: case MF_V_U16: case MF_V_U32: case MF_V_U64:
        return PyLong_FromUnsignedLongLong(v->as.u);
    case MF_V_I8: case MF_V_I16: case MF_V_I32: case MF_V_I64:
        return PyLong_FromLongLong(v->as.i);
    case MF_V_F32: case MF_V_F64:
        return PyFloat_FromDouble(v->as.f);
    case MF_V_BOOL:
        return PyBool_FromLong(v->as.b);
    case MF_V_STR:
        return str_value(v->as.s.ptr, v->as.s.len);
    case MF_V_NULL:
        Py_RETURN_NONE;
    case MF_V_ARR: {
        int tn = vtype_to_npy(v->as.arr.elem);
        if (tn >= 0)
            return numeric_array(v, tn);
        PyObject *list = PyList_New((Py_ssize_t)v->as.arr.n);
        for (size_t i = 0; list && i < v->as.arr.n; i++) {
            PyObject *x = value_to_py(&v->as.arr.items[i]);
            if (!x) {
                Py_CLEAR(list);
                break;
            }
            PyList_SET_ITEM(list, (Py_ssize_t)i, x);
        }
        return list;
    }
    }
    Py_RETURN_NONE;
}
