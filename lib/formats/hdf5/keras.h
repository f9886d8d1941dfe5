/* keras.h - Keras specifics shared with the operations layer (the scanner).
 * Not public. */
#ifndef MF_KERAS_H
#define MF_KERAS_H

#include "core/core.h"

#include <jansson.h>

/* A Keras `Lambda` layer found in a model's architecture. Loading such a
 * model (Keras 2 always, Keras 3 with safe_mode=False) runs the Python the
 * layer carries. */
typedef struct mf_keras_lambda {
    const char *layer;   /* the layer's "name" ("lambda_1"), or "?" */
    const char *source;  /* where the architecture came from: "model_config"
                            (Keras 2 .h5 root attribute) or "config.json"
                            (Keras 3 .keras) */
    const char *kind;    /* "bytecode": marshalled Python code (Keras 2
                            function_type "lambda", Keras 3 "__lambda__");
                            "function": a function named by module/name;
                            "raw" or another function_type as stored;
                            "module": any object (layer, activation,
                            initializer...) whose "module" and name reach
                            code that is dangerous to import or call
                            (CVE-2025-1550: imported even in safe mode);
                            layer is then its class_name, detail module.name */
    const char *detail;  /* function name, or the first bytes of the code */
} mf_keras_lambda;

typedef int (*mf_keras_lambda_fn)(void *ctx, const mf_keras_lambda *l);

/* Calls fn for every Lambda layer in the model's Keras architecture
 * (metadata "model_config" of an HDF5/Keras 2 file, "config.json" of a
 * Keras 3 archive; nested models and wrapper layers included). Returns the
 * number found (0 when the model has no Keras architecture), or -1 with st
 * filled (fn failed, or out of memory). Strings are valid during the call. */
int mf_keras_find_lambdas(const mf_model *m, mf_keras_lambda_fn fn, void *ctx,
                          mf_status *st);

/* The HDF5 and Keras readers' find_code hook (scan): each Lambda layer as a
 * finding (code it carries: dangerous; a function named: unknown). */
int mf_keras_find_code(const mf_model *m, mf_code_fn fn, void *ctx, mf_status *st);
/* The may_hold_code hooks of the Keras and HDF5 readers. */
bool mf_keras_may_hold_code(const uint8_t *b, uint64_t n);
bool mf_hdf5_may_hold_keras_code(const uint8_t *b, uint64_t n);

/* A Keras config as Python's json.loads reads it (keras_json.c): NaN,
 * Infinity, integers of any size, lone surrogates. NULL with err filled
 * when it still cannot be read. */
json_t *mf_keras_json_load(const char *text, size_t n, json_error_t *err);

/* Adds one note per Lambda layer to m (used by the readers at open time). */
int mf_keras_note_lambdas(mf_model *m);

#endif
