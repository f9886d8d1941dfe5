#!/usr/bin/python3
"""make_keras_code.py - .keras archives whose architecture loads code
through layers other than Lambda (issue 18): tf.keras's TFOpLambda (a
TensorFlow symbol by name, tf.io.write_file here), Keras 2's marshalled
functions (func_dump: "function_type": "lambda") in any object's config,
and a plain Dense twin. The weights and metadata are those of
../keras_json_nan_benign.keras (written by make_scan_tests.py); only
config.json differs. Run from this folder: /usr/bin/python3 make_keras_code.py"""
import json
import zipfile

src = zipfile.ZipFile("../keras_json_nan_benign.keras")
weights, meta = src.read("model.weights.h5"), src.read("metadata.json")


def keras(name, layers):
    cfg = {"module": "keras", "class_name": "Sequential", "registered_name": None,
           "config": {"name": "s", "layers": layers}}
    with zipfile.ZipFile(name, "w") as z:
        z.writestr("metadata.json", meta)
        z.writestr("config.json", json.dumps(cfg))
        z.writestr("model.weights.h5", weights)


keras("tfoplambda.keras", [{"module": None, "class_name": "TFOpLambda",
                            "config": {"name": "tf.io.write_file", "function": "io.write_file"}}])
keras("slicingoplambda.keras", [{"module": None, "class_name": "SlicingOpLambda",
                                 "config": {"name": "s", "function": "__operators__.getitem"}}])
keras("funcdump_activation.keras", [{"module": "keras.layers", "class_name": "Dense", "config": {
    "name": "d", "units": 2, "activation": {"class_name": "Custom", "config": {
        "function_type": "lambda", "function": ["4wEAAAAAAAAAAAAAAAE=", None, None]}}}}])
keras("lambda_output_shape.keras", [{"module": "keras.layers", "class_name": "Lambda", "config": {
    "name": "l", "function": "tf.identity", "function_type": "raw",
    "output_shape": ["4wEAAAAAAAAAAAAAAAE=", None, None], "output_shape_type": "lambda"}}])
keras("dense.keras", [{"module": "keras.layers", "class_name": "Dense",
                       "config": {"name": "d", "units": 2}}])
