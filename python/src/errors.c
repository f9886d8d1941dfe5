/* errors.c - an mf_status as a Python exception (classes in mfmt/_errors.py). */
#include "pymfmt.h"

#include <stdarg.h>

static PyObject *from_status; /* mfmt._errors._from_status */

int errors_init(void)
{
    PyObject *mod = PyImport_ImportModule("mfmt._errors");
    if (!mod)
        return -1;
    from_status = PyObject_GetAttrString(mod, "_from_status");
    Py_DECREF(mod);
    return from_status ? 0 : -1;
}

PyObject *status_result(PyObject *obj, int rc, mf_status *st)
{
    if (!obj) {
        mf_status_clear(st);
        return NULL;
    }
    if (rc != 0) {
        Py_DECREF(obj);
        return raise_status(st);
    }
    mf_status_clear(st);
    return obj;
}

PyObject *raise_status(mf_status *st)
{
    if (PyErr_Occurred()) { /* a callback raised or Ctrl-C: that wins */
        mf_status_clear(st);
        return NULL;
    }
    PyObject *all = PyList_New(0);
    for (size_t i = 0; all && i < st->n_all; i++) {
        PyObject *s = PyUnicode_DecodeUTF8(st->all[i], strlen(st->all[i]),
                                           "surrogateescape");
        if (!s || PyList_Append(all, s) != 0)
            Py_CLEAR(all);
        Py_XDECREF(s);
    }
    PyObject *exc = NULL;
    if (all)
        exc = PyObject_CallFunction(from_status, "iNO", (int)st->code,
                                    PyUnicode_DecodeUTF8(st->msg, strlen(st->msg),
                                                         "surrogateescape"),
                                    all);
    Py_XDECREF(all);
    mf_status_clear(st);
    if (exc) {
        PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
        Py_DECREF(exc);
    }
    return NULL;
}

void raise_cancelled(void)
{
    PyObject *mod = PyImport_ImportModule("mfmt._errors");
    PyObject *cls = mod ? PyObject_GetAttrString(mod, "CancelledError") : NULL;
    Py_XDECREF(mod);
    if (cls) {
        PyErr_SetString(cls, "cancelled by the progress callback");
        Py_DECREF(cls);
    }
}

PyObject *raise_usage(const char *fmt, ...)
{
    mf_status st;
    mf_status_init(&st);
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    mf_status_fail(&st, MF_ERR_USAGE, "%s", buf);
    return raise_status(&st);
}
