/* progress.c - progress callbacks into Python, and Ctrl-C, from C code
 * that runs with the GIL released. */
#include "pymfmt.h"

#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void progress_init(progress_ctx *p, PyObject *callable)
{
    p->callable = callable == Py_None ? NULL : callable;
    p->last = 0;
    p->cancelled = 0;
    p->et = p->ev = p->tb = NULL;
}

int progress_finish(progress_ctx *p)
{
    if (p->et) {
        PyErr_Restore(p->et, p->ev, p->tb);
        p->et = p->ev = p->tb = NULL;
        return -1;
    }
    if (p->cancelled) {
        raise_cancelled();
        return -1;
    }
    return 0;
}

/* The exception moves to the thread that made the call: progress may be
 * reported from a worker thread, whose thread state would lose it. */
static void keep_exception(progress_ctx *p)
{
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb);
    if (!p->et) {
        p->et = et;
        p->ev = ev;
        p->tb = tb;
    } else {
        Py_XDECREF(et);
        Py_XDECREF(ev);
        Py_XDECREF(tb);
    }
}

/* Reaching Python costs a GIL round trip: at most every 50 ms, except the
 * first and the last report, which always arrive. */
int progress_call(progress_ctx *p, uint64_t done, uint64_t total)
{
    if (p->cancelled)
        return 1;
    double t = now();
    bool edge = done == 0 || (total && done >= total);
    if (!edge && t - p->last < 0.05)
        return 0;
    p->last = t;
    PyGILState_STATE g = PyGILState_Ensure();
    /* Ctrl-C: the handler only sets a flag; this runs it (main thread). */
    if (PyErr_CheckSignals() != 0) {
        p->cancelled = 1;
        keep_exception(p);
    }
    if (!p->cancelled && p->callable) {
        PyObject *r = PyObject_CallFunction(p->callable, "KK",
                                            (unsigned long long)done,
                                            (unsigned long long)total);
        if (!r) {
            p->cancelled = 1;
            keep_exception(p);
        } else {
            if (r == Py_False)
                p->cancelled = 1;
            Py_DECREF(r);
        }
    }
    PyGILState_Release(g);
    return p->cancelled;
}

int progress_trampoline(void *user, uint64_t done, uint64_t total)
{
    return progress_call(user, done, total);
}
