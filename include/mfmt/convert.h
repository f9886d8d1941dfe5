/* mfmt/convert.h - writing a model in another form: to safetensors, a
 * Hugging Face directory to GGUF, dequantize to plain floats, GGUF split
 * sets and merging shard sets. Every output is written atomically and
 * nothing is left behind on failure or cancellation.
 * Part of the public API; include <mfmt.h>, not this file. */
#ifndef MFMT_CONVERT_H
#define MFMT_CONVERT_H
#ifndef MFMT_H
#error "include <mfmt.h>"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------ to safetensors */

typedef struct mf_convert_st_opts {
    size_t struct_size;       /* sizeof(mf_convert_st_opts) */
    const char *key;          /* write the tensors under this path ("state_dict"); NULL */
    uint64_t max_shard_size;  /* bytes per shard; 0: one file */
    bool include_optimizer;   /* keep optimizer state of a checkpoint */
    mf_progress_fn progress;  /* bytes written of the total to write; may cancel */
    void *progress_user;
    bool keep_tied;           /* also write names that view the same bytes as an
                                 earlier tensor (tied embeddings); default: once,
                                 as save_pretrained and safetensors' converter do */
    const char *dtype;        /* "f32", "f16" or "bf16": every F32/F16/BF16 tensor cast
                                 to it (round to nearest even, as torch's .to());
                                 NULL (the default): as stored */
    int threads;              /* threads copying a tensor's file runs (a training
                                 checkpoint's partitions); <= 1: the calling thread.
                                 The output is the same byte for byte. */
} mf_convert_st_opts;

MF_API void mf_convert_st_opts_init(mf_convert_st_opts *o);

/* What mf_convert_to_safetensors wrote. */
typedef struct mf_convert_st_result {
    size_t n_tensors;      /* tensors written (unwrapped, tied names once) */
    uint64_t tensor_bytes; /* their data bytes */
    size_t n_files;        /* safetensors files (shards), the index not counted */
} mf_convert_st_result;

/* Writes the model's tensors to `out`, or with max_shard_size to
 * PREFIX-0000i-of-0000N.safetensors + OUT.index.json as Hugging Face does
 * (PREFIX: out without ".safetensors"). A checkpoint's state_dict / model /
 * module mapping is unwrapped as loaders do (sd.get("state_dict", sd));
 * optimizer state is left out unless asked for; STRING tensors are left out
 * (safetensors holds none); MLX packed triples are written dequantized.
 * Every tensor contiguous, C order, bit-identical to its canonical bytes;
 * __metadata__ {"format": "pt"}. Refuses to write over any file the model
 * reads. opts NULL: defaults; res (may be NULL) says what was written.
 * Thread-safe on one model (distinct outputs). */
MF_API int mf_convert_to_safetensors(const mf_model *m, const char *out,
                                     const mf_convert_st_opts *opts,
                                     mf_convert_st_result *res, mf_status *st);

/* ------------------------------------------------- HF directory to GGUF */

typedef struct mf_convert_gguf_opts {
    size_t struct_size;       /* sizeof(mf_convert_gguf_opts) */
    /* f32, f16, bf16, q8_0 or auto (NULL: f16, the converter's default), or
     * a llama-quantize type (Q4_K_M, Q6_K, IQ4_XS, ...: the bytes of
     * converting to f32 and quantizing that, in one pass) */
    const char *type;
    int threads;              /* quantization threads (<= 1: the calling thread) */
    mf_progress_fn progress;  /* bytes of output written; may cancel */
    void *progress_user;
    /* Optional: told what the file holds that llama.cpp's converter would
     * not have written so (a BPE pre-tokenizer whose check-text hash its
     * table does not know, named from the tokenizer's family, where the
     * converter stops). msg is valid during the call. */
    void (*note)(void *user, const char *msg);
    void *note_user;
    /* Which converter's bytes to write where both exist (doc/hf.md): the
     * default MF_CONVERT_LAYOUT_C392E50 (llama.cpp's converter of Feb 2025,
     * read by old and new runtimes) or MF_CONVERT_LAYOUT_2026_02 (ecbcb7ea,
     * 2026-02-27: sampling keys from generation_config.json, its key order,
     * DeepSeek-V2/V3's split attn_k_b/attn_v_b...). Families only the 2026
     * converter knows are written in its layout either way. */
    int layout;
    /* convert_hf_to_gguf.py's --model-name: general.name, over the model
     * card, the override file and the directory's name */
    const char *model_name;
    /* its --metadata: a JSON object of general.* keys (gguf-py's
     * Metadata.load_metadata_override) that replace what the model card and
     * the names gave; a null value unsets a key. NULL: none */
    const char *metadata_override;
    /* its --vocab-only: the metadata and vocabulary, no tensors (the size
     * label is then not computed, as the converter counts no parameters) */
    bool vocab_only;
    /* Filled with the path written (when out is a directory or NULL, the
     * converter's default name in it), if not NULL */
    char *out_path;
    size_t out_path_cap;
    /* Optional: the model whose tensors are converted, instead of DIR's
     * weight files (DIR then gives config.json and the tokenizer): a
     * training checkpoint's merge (doc/training.md) goes to GGUF in one
     * pass, read as a directory holding it as one model.safetensors would
     * be (names sorted). The caller keeps it open for the call. */
    const mf_model *weights;
    /* Optional: a JSON file describing the architecture (doc/arch-file.md:
     * classes, tensor names and ops, hyper-parameter keys, tokenizer kind),
     * used instead of the built-in tables; config.json's class must be one
     * of its classes. NULL: the built-in tables. */
    const char *arch_file;
    /* convert_hf_to_gguf.py's --mmproj: the vision tower and projector of a
     * multimodal directory as the separate GGUF (general.architecture
     * "clip", clip.* keys) llama.cpp's converter of 2026-02 writes, for the
     * classes doc/hf.md lists; f32, f16, bf16 or q8_0; the default name is
     * mmproj-{name}-{TYPE}.gguf. */
    bool mmproj;
    /* convert_hf_to_gguf.py's --mistral-format: DIR in Mistral's own format
     * (params.json, consolidated*.safetensors, tekken.json or
     * tokenizer.model.v*; doc/hf.md). MF_MISTRAL_AUTO (default): when DIR
     * has params.json and consolidated*.safetensors but no model*.safetensors
     * or pytorch_model*.bin; MF_MISTRAL_ON / _OFF force it either way. */
    int mistral_format;
} mf_convert_gguf_opts;

enum { MF_MISTRAL_AUTO = 0, MF_MISTRAL_ON = 1, MF_MISTRAL_OFF = 2 };

enum { MF_CONVERT_LAYOUT_C392E50 = 0, MF_CONVERT_LAYOUT_2026_02 = 1 };

MF_API void mf_convert_gguf_opts_init(mf_convert_gguf_opts *o);

/* Converts a Hugging Face directory (every architecture
 * mf_convert_gguf_archs lists; weights as safetensors or .bin) to one GGUF file as llama.cpp's
 * convert_hf_to_gguf.py writes it: same tensors, names, shapes, types and
 * bytes, same keys and values in the same order. Streams tensor by tensor.
 * `out` as the converter's --outfile: a directory (or NULL: `dir` itself)
 * gets the converter's default name, {basename or name}-{size label}
 * [-{finetune}][-{version}]-{TYPE}.gguf (gguf.naming_convention; "-vocab"
 * for vocab_only); in a file name, {ftype}/{outtype} are replaced by the
 * type in lower case, {FTYPE}/{OUTTYPE} in upper case. Thread-safe. */
MF_API int mf_convert_to_gguf(const char *dir, const char *out,
                              const mf_convert_gguf_opts *opts, mf_status *st);
/* The architectures (config.json "architectures"[0]) it converts, as a
 * NULL-terminated static array. */
MF_API const char *const *mf_convert_gguf_archs(void);

/* ------------------------------------------- GGUF to HF directory */

typedef struct mf_convert_hf_opts {
    size_t struct_size;       /* sizeof(mf_convert_hf_opts) */
    /* MF_F32, MF_F16 or MF_BF16 for every tensor; MF_DTYPE_INVALID (the
     * default): each float tensor as stored, block types as the file's
     * float type (F16 unless F32/BF16) */
    mf_dtype dtype;
    uint64_t max_shard_size;  /* bytes per model-0000i-of-0000N.safetensors; 0: one file */
    mf_progress_fn progress;  /* tensors written of the total; may cancel */
    void *progress_user;
    /* Optional: the arch file (mf_convert_gguf_opts.arch_file) the GGUF was
     * written by: its names and ops read backwards. NULL: built-in tables. */
    const char *arch_file;
} mf_convert_hf_opts;

MF_API void mf_convert_hf_opts_init(mf_convert_hf_opts *o);

/* Writes the GGUF `in` as the Hugging Face directory `out` (absent or
 * empty): config.json, generation_config.json, tokenizer files, model card
 * and model.safetensors with the names transformers loads, the inverse of
 * mf_convert_to_gguf for every architecture it converts. The directory is
 * made beside `out` and renamed into place: nothing is left on failure.
 * `in` may also be a pre-quantized Hugging Face directory (config.json's
 * quantization_config: GPTQ, AWQ, bitsandbytes, FP8, compressed-tensors,
 * MXFP4, NVFP4): `out` is then its float twin, the weights dequantized as
 * upstream computes them (opts->dtype, else each tensor's own float type),
 * quantization_config removed from config.json, the other files copied.
 * opts NULL: defaults. Thread-safe. */
MF_API int mf_convert_to_hf(const char *in, const char *out, const mf_convert_hf_opts *opts,
                            mf_status *st);

/* The GGUF `in` as the tensors of the directory mf_convert_to_hf would
 * write, without writing anything: the same names, dtypes (opts->dtype)
 * and shapes, each tensor's bytes computed by the converter's reverse
 * operations when it is read or streamed (about one tensor in memory; the
 * GGUF stays mapped). Tensors only (no config.json keys). opts->arch_file
 * as for mf_convert_to_hf; max_shard_size and progress are ignored. The
 * view is not thread-safe; close it with mf_close. */
MF_API int mf_open_gguf_as_hf(const char *in, const mf_convert_hf_opts *opts, mf_model **out,
                              mf_status *st);

/* ------------------------------------------------------------------ MLX */

/* Which MLX kernel's rounding the quantizer reproduces: the CPU kernel's
 * (what mlx_lm.convert writes on Linux or with the CPU device) or the Metal
 * kernel's (a Mac's GPU). doc/mlx.md says how they differ. */
typedef enum mf_mlx_kernel { MF_MLX_KERNEL_CPU = 0, MF_MLX_KERNEL_METAL = 1 } mf_mlx_kernel;

typedef struct mf_convert_mlx_opts {
    size_t struct_size;       /* sizeof(mf_convert_mlx_opts) */
    bool quantize;            /* mlx_lm.convert -q */
    int bits;                 /* --q-bits: 2, 3, 4, 5, 6 or 8; 0: 4 */
    int group_size;           /* --q-group-size: 32, 64 or 128; 0: 64 */
    /* --quant-predicate: NULL, "mixed_2_6", "mixed_3_4", "mixed_3_6" or
     * "mixed_4_6" (mlx_lm's recipes; implies quantize) */
    const char *quant_predicate;
    /* --dtype: MF_F16, MF_BF16 or MF_F32 for every float parameter;
     * MF_DTYPE_INVALID (default): config.json's torch_dtype as mlx_lm reads
     * it, else each tensor as stored */
    mf_dtype dtype;
    mf_mlx_kernel kernel;     /* default MF_MLX_KERNEL_CPU */
    bool dequantize;          /* mlx_lm.convert -d: an MLX model written unquantized */
    uint64_t max_shard_size;  /* bytes per shard; 0: mlx_lm's 5 GiB */
    mf_progress_fn progress;  /* bytes of weights written of the total; may cancel */
    void *progress_user;
    /* A GGUF input only, not with quantize: its Q4_0, Q4_1 and Q8_0 tensors
     * that the GGUF -> HF conversion writes as whole rows are written as
     * the affine triples MLX's own GGUF loader (mlx/io/gguf_quants.cpp)
     * makes of them, without loss (group 32; 4 or 8 bits; float16 scales
     * and biases); every other tensor as the dequantized route writes it. */
    bool lossless;
} mf_convert_mlx_opts;

MF_API void mf_convert_mlx_opts_init(mf_convert_mlx_opts *o);

/* Writes the model at `in` as the MLX directory `out` (absent or empty),
 * as mlx_lm.convert writes it for the same arguments: the same tensors
 * (names, dtypes, shapes, bytes; affine quantization bit for bit with the
 * chosen kernel), model.safetensors or model-0000i-of-0000N.safetensors
 * with {"format": "mlx"}, model.safetensors.index.json, config.json with
 * "quantization" and "quantization_config", and the tokenizer files,
 * generation_config.json and *.py files copied. `in` is a Hugging Face
 * directory (the mlx_lm classes llama, mistral, qwen2, qwen3, gemma, gemma2,
 * gemma3_text, phi3, qwen3_moe, qwen2_moe, mixtral), an MLX directory (read through
 * its dequantized view) or a GGUF (converted to a Hugging Face directory
 * first, dequantized). Streams one tensor at a time; nothing is left on
 * failure. opts NULL: defaults. Thread-safe. */
MF_API int mf_convert_to_mlx(const char *in, const char *out, const mf_convert_mlx_opts *opts,
                             mf_status *st);

/* ------------------------------------- through a directory (checkpoints) */

/* Options of the conversions of a model that is not a Hugging Face
 * directory (a training checkpoint above all: doc/training.md). */
typedef struct mf_convert_model_opts {
    size_t struct_size;       /* sizeof(mf_convert_model_opts) */
    /* mf_open's flags for the input: MF_OPEN_TRAIN_MODULE_STATES,
     * MF_OPEN_TRAIN_EXCLUDE_FROZEN, MF_OPEN_NO_SCAN / MF_OPEN_REFUSE_UNSAFE */
    unsigned open_flags;
    const char *config;       /* the config.json it lacks (Megatron); NULL: beside it */
    const char *tokenizer;    /* the folder of its tokenizer files; NULL: beside config.json */
    const char *dtype;        /* "f32", "f16", "bf16": the weights cast; NULL: as merged */
    uint64_t max_shard_size;  /* bytes per safetensors shard; 0: 5GB (save_pretrained's) */
    int threads;              /* threads copying the partitions; <= 1: one */
    mf_progress_fn progress;  /* bytes written of the total; may cancel */
    void *progress_user;
} mf_convert_model_opts;

MF_API void mf_convert_model_opts_init(mf_convert_model_opts *o);

typedef struct mf_convert_model_result {
    size_t n_tensors;         /* tensors written */
    uint64_t tensor_bytes;    /* their bytes (HF directory output) */
    size_t n_files;           /* safetensors files (HF directory output) */
    size_t n_copied;          /* config.json and tokenizer files copied */
} mf_convert_model_result;

/* Writes any model mfmt reads (a DeepSpeed, DCP or Megatron-LM checkpoint
 * merged, a .bin, ...) as the Hugging Face directory `out` (absent or
 * empty; it appears whole or not at all): model.safetensors, sharded past
 * max_shard_size with model.safetensors.index.json, then config.json (given,
 * or found in the checkpoint's folder or its parent) and the tokenizer
 * files beside it. n_copied 0: no config.json was found (the directory
 * holds the weights only). res may be NULL. Thread-safe. */
MF_API int mf_convert_model_to_hf_dir(const char *in, const char *out,
                                      const mf_convert_model_opts *opts,
                                      mf_convert_model_result *res, mf_status *st);

/* Writes such a model, or an MLX directory, as the GGUF `out` (a file
 * name) as mf_convert_to_gguf writes the Hugging Face directory it stands
 * for: a checkpoint's merge streamed into the converter in one pass (with
 * config.json and the tokenizer files in a directory made beside `out`;
 * with a dtype, the cast merge written there first); an MLX directory
 * dequantized there first. The directory is removed after, on failure too.
 * gopts: the converter's options (type, threads, layout, note, out_path;
 * arch_file, model_name, metadata_override and vocab_only are refused).
 * res (may be NULL): n_tensors and n_copied. Thread-safe. */
MF_API int mf_convert_model_to_gguf(const char *in, const char *out,
                                    const mf_convert_model_opts *opts,
                                    const mf_convert_gguf_opts *gopts,
                                    mf_convert_model_result *res, mf_status *st);

/* convert_hf_to_gguf.py's --split-max-size / --split-max-tensors on a GGUF
 * already written: when the plan (mf_gguf_split) has more than one file,
 * the file is split into PATH-0000i-of-0000n.gguf (PATH less ".gguf") and
 * removed; otherwise left as it is. *n_files (may be NULL): the files now
 * standing for it (1: the file itself). Thread-safe. */
MF_API int mf_gguf_split_written(const char *path, uint64_t max_bytes, uint64_t max_tensors,
                                 size_t *n_files, mf_status *st);

/* ---------------------------------------------------------- dequantize */

typedef struct mf_dequantize_opts {
    size_t struct_size;       /* sizeof(mf_dequantize_opts) */
    mf_dtype dtype;           /* MF_F32 (default), MF_F16 or MF_BF16 */
    mf_progress_fn progress;  /* input bytes processed of the tensor total; may cancel */
    void *progress_user;
} mf_dequantize_opts;

MF_API void mf_dequantize_opts_init(mf_dequantize_opts *o);

typedef struct mf_dequantize_result {
    size_t n_tensors, n_converted, n_copied;
    size_t meta_kept, meta_skipped; /* skipped: long arrays, nested arrays, invalid UTF-8 */
    uint64_t out_bytes;
} mf_dequantize_result;

/* Writes every tensor of in_path as plain floats to a safetensors file:
 * float and ggml block tensors become `dtype` (values as ggml's to_float
 * gives them), integer and bool tensors are copied; metadata is kept as
 * safetensors' string map where it fits (arrays of at most 64 items as JSON
 * text). res may be NULL. Thread-safe. */
MF_API int mf_dequantize_file(const char *in_path, const char *out_path,
                              const mf_dequantize_opts *opts, mf_dequantize_result *res,
                              mf_status *st);

/* ------------------------------------------------------- split / merge */

typedef struct mf_split_opts {
    size_t struct_size;       /* sizeof(mf_split_opts) */
    uint64_t max_tensors;     /* tensors per file; 0: no limit */
    uint64_t max_bytes;       /* about this many bytes of tensor data per file; 0: no limit */
    mf_progress_fn progress;  /* tensor bytes written; may cancel */
    void *progress_user;
    /* llama-gguf-split --no-tensor-first-split: the first file holds the
     * metadata only, the tensors start in the second */
    bool no_tensor_first_split;
    /* llama-gguf-split --dry-run: plan (on_shard) but write nothing */
    bool dry_run;
    /* called once per file of the set, in order, before it is written:
     * file number (0-based), the number of files, its first tensor, its
     * tensor count and tensor bytes (each padded to 32, as the plan counts) */
    void (*on_shard)(void *user, size_t no, size_t n_files, size_t first_tensor,
                     size_t n_tensors, uint64_t bytes);
    void *on_shard_user;
} mf_split_opts;

MF_API void mf_split_opts_init(mf_split_opts *o);

/* Writes a model (GGUF, or any format whose dtypes GGUF stores) as a
 * split set PREFIX-0000i-of-0000n.gguf as
 * llama-gguf-split writes it: the first file has every key plus
 * split.no/split.count/split.tensors.count, the others only the split.*
 * keys. *n_files (may be NULL) gets the number of files written. On failure
 * no file of the set is left. */
MF_API int mf_gguf_split(const mf_model *m, const char *prefix, const mf_split_opts *opts,
                         size_t *n_files, mf_status *st);

typedef struct mf_merge_opts {
    size_t struct_size;       /* sizeof(mf_merge_opts) */
    mf_progress_fn progress;  /* tensor bytes written; may cancel */
    void *progress_user;
} mf_merge_opts;

MF_API void mf_merge_opts_init(mf_merge_opts *o);

/* Writes all tensors of an opened set (GGUF split set, sharded safetensors)
 * into one file of the same kind: `out` ending in .gguf or .safetensors.
 * opts NULL: defaults. */
MF_API int mf_merge(const mf_model *m, const char *out, const mf_merge_opts *opts,
                    mf_status *st);

#ifdef __cplusplus
}
#endif
#endif /* MFMT_CONVERT_H */
