/* registry.c - the readers, in the order detection asks them. A new format
 * is one folder (lib/formats/FAMILY/) defining `const mf_reader
 * mf_reader_NAME` and one line here; the reader itself carries its name,
 * its file-name endings and its probe (core.h, struct mf_reader).
 *
 * Order matters only for probes: a probe that accepts much (protobuf
 * field sets) comes after the ones with magic numbers; pytorch-pickle's
 * magic before plain pickle; directories: SavedModel, then MLX (an HF
 * directory with MLX quantization), then any HF directory. */
#include "formats/formats.h"

#define MF_READERS(X)                                                     \
    X(gguf)                                                               \
    X(ggml_legacy)                                                        \
    X(npy)                                                                \
    X(pytorch_tar)  /* torch's oldest format: before HDF5 (data at 512) */ \
    X(pytorch_zip)  /* zip with data.pkl; pytorch_model.bin.index.json */ \
    X(keras)        /* zip with config.json + model.weights.h5 */         \
    X(npz)          /* zip of .npy members */                             \
    X(hdf5)                                                               \
    X(tflite)                                                             \
    X(safetensors)  /* also model.safetensors.index.json */               \
    X(pytorch_pickle)                                                     \
    X(pickle)                                                             \
    X(onnx)         /* protobuf probes from here on */                    \
    X(tf_savedmodel)                                                      \
    X(onnx_tensor)                                                        \
    X(tf_graphdef)                                                        \
    X(deepspeed)    /* training checkpoint folders, before any HF dir */  \
    X(dcp)                                                                \
    X(megatron)                                                           \
    X(mlx)                                                                \
    X(hfdir)                                                              \
    /* a new reader: one line above, where its probe belongs */

#define DECLARE(name) extern const mf_reader mf_reader_##name;
#define ENTRY(name) &mf_reader_##name,
MF_READERS(DECLARE)
static const mf_reader *const readers[] = {MF_READERS(ENTRY)};

const mf_reader *mf_reader_at(size_t i)
{
    return i < sizeof(readers) / sizeof(readers[0]) ? readers[i] : NULL;
}

const mf_reader *mf_reader_for(mf_format f)
{
    for (size_t i = 0; i < sizeof(readers) / sizeof(readers[0]); i++)
        if (readers[i]->format == f)
            return readers[i];
    return NULL;
}

/* DESIGN.md's names; the two without a reader are named here. */
const char *mf_format_name(mf_format f)
{
    const mf_reader *r = mf_reader_for(f);
    if (r && r->name)
        return r->name;
    return f == MF_FMT_ZIP ? "zip" : "unknown";
}
