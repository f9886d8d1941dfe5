/* module.c - the extension module mfmt._mfmt. */
#define PYMFMT_MAIN
#include "pymfmt.h"

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "mfmt._mfmt",
    .m_doc = "The C layer of the mfmt package, on libmfmt's public API "
             "(include/mfmt.h). Use the `mfmt` package, not this module.",
    .m_size = -1,
    .m_methods = ops_methods,
};

PyMODINIT_FUNC PyInit__mfmt(void)
{
    import_array();
    if (errors_init() != 0)
        return NULL;
    if (PyType_Ready(&Model_Type) < 0 || PyType_Ready(&Region_Type) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m)
        return NULL;
    if (PyModule_AddFunctions(m, ops_more_methods) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    if (PyModule_AddObjectRef(m, "Model", (PyObject *)&Model_Type) < 0 ||
        PyModule_AddObjectRef(m, "Region", (PyObject *)&Region_Type) < 0 ||
        PyModule_AddStringConstant(m, "LIB_VERSION", MF_VERSION_STRING) < 0 ||
        PyModule_AddIntConstant(m, "OPEN_TRAIN_MODULE_STATES", MF_OPEN_TRAIN_MODULE_STATES) < 0 ||
        PyModule_AddIntConstant(m, "OPEN_TRAIN_EXCLUDE_FROZEN", MF_OPEN_TRAIN_EXCLUDE_FROZEN) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
