/* registry.c - which reader opens which format. A new reader adds one
 * extern line and one table line here. */
#include "core/core.h"
#include "formats/formats.h"

extern const mf_reader mf_reader_safetensors;
extern const mf_reader mf_reader_gguf;
extern const mf_reader mf_reader_hfdir;
extern const mf_reader mf_reader_onnx;
extern const mf_reader mf_reader_onnx_tensor;
extern const mf_reader mf_reader_tflite;
extern const mf_reader mf_reader_tf_savedmodel;
extern const mf_reader mf_reader_tf_graphdef;
extern const mf_reader mf_reader_hdf5;
extern const mf_reader mf_reader_keras;
extern const mf_reader mf_reader_npy;
extern const mf_reader mf_reader_npz;
extern const mf_reader mf_reader_ggml_legacy;
extern const mf_reader mf_reader_mlx;
extern const mf_reader mf_reader_pytorch_zip, mf_reader_pytorch_pickle, mf_reader_pickle;

static const mf_reader *const readers[] = {
    &mf_reader_safetensors,
    &mf_reader_gguf,
    &mf_reader_hfdir,
    &mf_reader_onnx,
    &mf_reader_onnx_tensor,
    &mf_reader_tflite,
    &mf_reader_tf_savedmodel,
    &mf_reader_tf_graphdef,
    &mf_reader_hdf5,
    &mf_reader_keras,
    &mf_reader_npy,
    &mf_reader_npz,
    &mf_reader_ggml_legacy,
    &mf_reader_mlx,
    &mf_reader_pytorch_zip,
    &mf_reader_pytorch_pickle,
    &mf_reader_pickle,
};

const mf_reader *mf_reader_for(mf_format f)
{
    for (size_t i = 0; i < sizeof(readers) / sizeof(readers[0]); i++)
        if (readers[i]->format == f)
            return readers[i];
    return NULL;
}

static const char *const format_names[MF_FMT_COUNT] = {
    [MF_FMT_UNKNOWN] = "unknown",
    [MF_FMT_SAFETENSORS] = "safetensors",
    [MF_FMT_GGUF] = "gguf",
    [MF_FMT_PYTORCH_ZIP] = "pytorch-zip",
    [MF_FMT_PYTORCH_PICKLE] = "pytorch-pickle",
    [MF_FMT_NUMPY_NPY] = "numpy-npy",
    [MF_FMT_NUMPY_NPZ] = "numpy-npz",
    [MF_FMT_HDF5] = "hdf5",
    [MF_FMT_ONNX] = "onnx",
    [MF_FMT_ONNX_TENSOR] = "onnx-tensor",
    [MF_FMT_TFLITE] = "tflite",
    [MF_FMT_KERAS] = "keras",
    [MF_FMT_TF_SAVEDMODEL] = "tf-savedmodel",
    [MF_FMT_TF_GRAPHDEF] = "tf-graphdef",
    [MF_FMT_MLX] = "mlx",
    [MF_FMT_HF_DIR] = "hf-dir",
    [MF_FMT_PICKLE] = "pickle",
    [MF_FMT_GGML_LEGACY] = "ggml-legacy",
    [MF_FMT_ZIP] = "zip",
};

const char *mf_format_name(mf_format f)
{
    return (unsigned)f < MF_FMT_COUNT && format_names[f] ? format_names[f] : "unknown";
}
