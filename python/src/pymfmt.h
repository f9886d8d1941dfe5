/* pymfmt.h - what the files of the extension module mfmt._mfmt share.
 *
 * The module is built on include/mfmt.h only (the public C API). Python-
 * level conveniences (safe_open, slices, result classes) live in
 * mfmt/__init__.py; this layer does what needs C: holding the mapping alive
 * under NumPy arrays, streaming bytes with the GIL released, converting
 * metadata values, turning an mf_status into an exception. */
#ifndef PYMFMT_H
#define PYMFMT_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL pymfmt_ARRAY_API
#ifndef PYMFMT_MAIN
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>

#include "mfmt.h"

/* ------------------------------------------------------------- the model */

/* _mfmt.Model: owns one mf_model. `pins` counts what still needs the
 * mapping: every Region (the base object of a zero-copy array) and every
 * call running without the GIL. close() only marks the object closed when
 * something is pinned; the last unpin frees the model, so no array ever
 * outlives the bytes it views. */
typedef struct {
    PyObject_HEAD
    mf_model *m;
    int closed;
    Py_ssize_t pins;
    PyObject *path; /* str, as given */
    PyObject *weakrefs;
    Py_buffer data; /* Model(name, data=...): the bytes the model reads in place */
    int has_data;
} ModelObject;

extern PyTypeObject Model_Type;
extern PyTypeObject Region_Type;

/* Pins the model for work without the GIL; -1 (exception set) if closed. */
int model_pin(ModelObject *mo);
void model_unpin(ModelObject *mo);
/* The tensor at `index`, or NULL with IndexError/ValueError set. */
const mf_tensor *model_tensor(ModelObject *mo, Py_ssize_t index);

/* ---------------------------------------------------------------- errors */

/* Raises the mfmt exception for `st` (class by st->code, every message in
 * .messages); returns NULL so callers can `return raise_status(&st);`.
 * Clears st. A pending Python exception (a callback raised, Ctrl-C) wins. */
PyObject *raise_status(mf_status *st);
/* The end of an operation that made obj (NULL: it could not be made, its
 * error set): obj, or (rc != 0) the library's error with obj released.
 * Clears st. */
PyObject *status_result(PyObject *obj, int rc, mf_status *st);
int errors_init(void); /* imports mfmt._errors */
/* Raises mfmt.UsageError (a ValueError) with a printf-style message. */
PyObject *raise_usage(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* ---------------------------------------------------------------- values */

/* An mf_value as a Python object: ints, floats, bools, str (UTF-8 with
 * surrogateescape, so bytes that are not UTF-8 survive), None; arrays of
 * numbers as 1-D NumPy arrays, other arrays as lists. */
PyObject *value_to_py(const mf_value *v);
/* NumPy type number for an element dtype, or -1 when NumPy has none
 * (BF16, F8, packed sub-byte and ggml block types). */
int dtype_to_npy(mf_dtype dt);

/* ------------------------------------------------------------ progress */

/* What a C progress callback needs to reach Python: the callable (or NULL:
 * then only Ctrl-C is checked), and the time of the last check. */
typedef struct {
    PyObject *callable;
    double last;
    int cancelled;
    PyObject *et, *ev, *tb; /* what the callable raised, or KeyboardInterrupt */
} progress_ctx;

void progress_init(progress_ctx *p, PyObject *callable);
/* Called from C with the GIL released; takes the GIL, calls the callable
 * with (done, total), checks signals. Returns nonzero to cancel (the
 * callable returned False or raised, or Ctrl-C). */
int progress_call(progress_ctx *p, uint64_t done, uint64_t total);
/* After the C call, with the GIL: raises what the callable raised, or
 * KeyboardInterrupt, or mfmt.CancelledError when it returned False;
 * returns -1 then, else 0. */
int progress_finish(progress_ctx *p);
/* Raises mfmt.CancelledError. */
void raise_cancelled(void);
/* An mf_progress_fn whose user pointer is a progress_ctx. */
int progress_trampoline(void *user, uint64_t done, uint64_t total);

/* ------------------------------------------------------------------- ops */

extern PyMethodDef ops_methods[];
extern PyMethodDef ops_more_methods[]; /* ops_more.c */

#endif
