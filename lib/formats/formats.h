/* formats.h - what the formats layer offers the layers above it and its own
 * readers: the reader registry, detection probes and the open path, and
 * the Hugging Face directory files the operations on such directories read.
 * (lib/core never includes this: arrows point down.) */
#ifndef MF_FORMATS_H
#define MF_FORMATS_H
#include "core/core.h"
#include "core/proto.h"
#include "core/zip.h"

/* The reader registered for f (registry.c); NULL: none. */
const mf_reader *mf_reader_for(mf_format f);
/* The registry in order (detection asks readers in this order); NULL past
 * the end. */
const mf_reader *mf_reader_at(size_t i);

/* ------------------------------------------------------------ detection */
/* What a reader's probe sees (core.h, struct mf_reader). The top-level
 * field summary of a protobuf file is worked out once, on the first
 * mf_probe_protobuf call, for every probe that asks. */
typedef struct mf_pb_summary {
    uint64_t len, var;      /* bit n: field n < 64 seen as length-delimited / other */
    uint32_t n_fields;
    mf_pb_field first_len1; /* the first length-delimited field 1 (data NULL: none) */
} mf_pb_summary;

struct mf_probe {
    const char *path;
    const uint8_t *b;   /* the file's bytes (probe, probe_zip); NULL for a directory */
    uint64_t size;
    const mf_zip *zip;  /* probe_zip: the central directory as zipfile reads
                           it; NULL when that fails (p->b, p->size: the bytes) */
    mf_detection *out;  /* filled by mf_probe_found */
    /* private to detect.c */
    int pb_state;       /* 0: not parsed; 1: a protobuf; -1: not one */
    mf_pb_summary pb;
};

/* Records the format and its detail ("GGUF v3 little-endian"); returns
 * MF_PROBE_YES (a weak probe returns MF_PROBE_WEAK after calling it). */
int mf_probe_found(mf_probe *p, mf_format f, const char *fmt, ...) MF_PRINTF(3, 4);
/* Whether bytes [off, off+n) of the probed file can be read: for a remote
 * file they are fetched (false when that fails); a probe that looks past
 * the first 64 KiB (which are always in) asks first. */
bool mf_probe_has(const mf_probe *p, uint64_t off, uint64_t n);
/* probe_dir: does the directory hold `name`? */
bool mf_probe_dir_has(const mf_probe *p, const char *name);
/* The file parsed as top-level protobuf fields, or NULL when it does not
 * (the whole file must parse, with at least one field). */
const mf_pb_summary *mf_probe_protobuf(mf_probe *p);
/* The reader whose probe claims bytes b[0..n) that do not start a zip
 * archive (the `probe` hooks in registry order, as mf_detect asks them of
 * a file; label names the bytes); NULL when none does (out: unknown). */
const mf_reader *mf_detect_bytes(const uint8_t *b, uint64_t n, const char *label,
                                 mf_detection *out);
/* A shard index (JSON with "weight_map" whose first entry names a ".bin"
 * shard when `bin`, any other file otherwise): hf/shard_index.c. */
int mf_probe_shard_index(mf_probe *p, bool bin);

/* ------------------------------------------------------------- opening */
/* The open path under the public mf_open (which lives in lib/ops because
 * it also scans): detect, pick the reader, let it fill a model. flags:
 * MF_OPEN_STRICT (the others are mf_open's). */
int mf_open_model(const char *path, unsigned flags, mf_model **out, mf_status *st);

/* Opens `path` as a model of its own and lists its tensors in `m` too (with
 * owner = the child, which m keeps open until mf_close(m)); its notes are
 * copied. A directory reader uses it for the weights files it chooses.
 * Returns the child (NULL on failure, st filled). */
/* mf_open_model with a config.json for training checkpoints that lack one
 * (m->config while the reader opens; NULL: none given). */
int mf_open_model_cfg(const char *path, unsigned flags, const char *config, mf_model **out,
                      mf_status *st);
mf_model *mf_model_open_child(mf_model *m, const char *path, unsigned flags,
                              mf_status *st);
/* mf_gguf_write with ggml's layout (llama-quantize's output): the last
 * tensor padded to the alignment as well. */
int mf_gguf_write_all_padded(const char *path, const mf_out_tensor *ts, size_t n, const mf_kv *meta,
                             size_t n_meta, mf_fill_fn fill, void *ctx, mf_status *st);
/* mf_safetensors_write with MLX's header (mlx/io/safetensors.cpp
 * save_safetensors: nlohmann's dump(), keys sorted bytewise, no spaces, no
 * padding after the header); the data in the order given. */
int mf_safetensors_write_mlx(const char *path, const mf_out_tensor *ts, size_t n, const mf_kv *meta,
                             size_t n_meta, mf_fill_fn fill, void *ctx, mf_status *st);
/* An MLX model's logical view as mlx_lm.convert reads it after its
 * astype(cast) of every float parameter (convert.py set_dtype, before
 * dequantize_model): scales and biases rounded to `cast` first, the
 * arithmetic in `cast` (formats/mlx/mlx_dequant.c). NULL view when nothing
 * is packed; cast MF_DTYPE_INVALID: the plain logical view. */
int mf_mlx_cast_dequantized_view(const mf_model *src, mf_dtype cast, mf_model **view,
                                 mf_status *st);


/* ============================================ Hugging Face directory files
 * What the operations on Hugging Face directories (convert HF -> GGUF,
 * estimate/plan from config.json, the load report, general.* keys) read of
 * such a directory's files, implemented by the HF family (formats/hf/):
 * its JSON as Python's json module reads it, Git LFS pointers, the model
 * card's front matter and SentencePiece tokenizer.model files. */
/* Passes len bytes of the file at path from off to a writer's fill sink:
 * by copy_file_range into mf_safetensors_write / mf_gguf_write's own sink
 * (falling back to reads and writes), by reads into any other
 * (writer_common.c). */
int mf_sink_copy_file(mf_sink_fn sink, void *sink_ctx, const char *path, uint64_t off,
                      uint64_t len, mf_status *st);
/* The same for runs laid end to end (mf_model_file_runs), copied by up to
 * `threads` threads into a writer's own sink (the same bytes whatever the
 * count), by reads in order into any other. */
int mf_sink_copy_runs(mf_sink_fn sink, void *sink_ctx, const mf_file_run *runs, size_t n,
                      int threads, mf_status *st);

#include <jansson.h>

/* ------------------------------------------------------------ JSON files */
/* Loads a JSON file (at most 1 GiB) as Python's json module would accept it:
 * duplicate keys allowed (the last wins); integers beyond 64 bits (a
 * tokenizer_config.json's model_max_length of 10^30) become reals instead of
 * failing the whole file. NULL with st filled ("FILE: byte N: ..."). */
json_t *mf_hf_load_json(const char *path, mf_status *st);
/* DIR/config.json loaded as mf_hf_load_json does. When it does not exist:
 * required, NULL with st "DIR/config.json: config.json is missing"; else
 * NULL with st untouched. */
json_t *mf_hf_load_config(const char *dir, bool required, mf_status *st);
/* A JSON integer as Python's isinstance(v, int) sees it (true/false are ints
 * too); false for anything else. */
bool mf_hf_json_int(const json_t *v, int64_t *out);

/* ------------------------------------------------------ Git LFS pointers */
/* A Git LFS pointer file (git-lfs spec v1: "version https://git-lfs.github.com/
 * spec/v1", "oid sha256:<64 hex>", "size <n>") left in place of the real file.
 * Returns true for a pointer and fills the promised size and oid (either may
 * be NULL). Reads at most the first 1 KiB of the file. */
bool mf_hf_lfs_pointer(const char *path, uint64_t *size, char oid[65]);

/* ------------------------------------------------------------ model card */
/* The YAML front matter of a model card (README.md): the lines between a
 * first line "---" and the next line "---", read (with libyaml) as PyYAML's
 * safe_load reads it: YAML 1.1 null/bool/int/float for plain scalars.
 * Returns a new JSON object; an empty object when there is no front matter;
 * NULL with st filled (MF_ERR_FORMAT, "front matter line N: ...", no file
 * named) when the YAML is malformed, deeper than 64, holds more than 2^20
 * values or uses anchors, aliases or tags (refused, never expanded). */
json_t *mf_hf_front_matter(const char *text, size_t n, mf_status *st);

/* ---------------------------------------------------- SentencePiece model */
enum { MF_SPM_NORMAL = 1, MF_SPM_UNKNOWN = 2, MF_SPM_CONTROL = 3,
       MF_SPM_USER_DEFINED = 4, MF_SPM_UNUSED = 5, MF_SPM_BYTE = 6 };
enum { MF_SPM_UNIGRAM = 1, MF_SPM_BPE = 2, MF_SPM_WORD = 3, MF_SPM_CHAR = 4 };

typedef struct mf_spm_piece {
    const char *text; /* into the buffer given to mf_spm_parse; not NUL-ended */
    uint32_t len;
    float score;
    int type;         /* MF_SPM_* (NORMAL when absent) */
} mf_spm_piece;

typedef struct mf_spm {
    mf_spm_piece *pieces;
    size_t n;
    int model_type;        /* trainer_spec.model_type (UNIGRAM by default) */
    bool byte_fallback;    /* trainer_spec.byte_fallback */
    int32_t unk_id, bos_id, eos_id, pad_id;   /* trainer_spec ids */
    bool add_dummy_prefix, remove_extra_whitespaces; /* normalizer_spec */
    const uint8_t *charsmap; /* normalizer_spec.precompiled_charsmap, into the buffer */
    uint64_t charsmap_len;
} mf_spm;

/* Parses a sentencepiece ModelProto (sentencepiece_model.proto): pieces = 1,
 * trainer_spec = 2, normalizer_spec = 3. */
int mf_spm_parse(const uint8_t *buf, uint64_t n, const char *file, mf_spm *out,
                 mf_status *st);
void mf_spm_free(mf_spm *s);
const char *mf_spm_model_name(int model_type); /* "BPE", "Unigram", ... */

/* Pre-quantized weights (formats/hf/hf_prequant*.c). The hf-dir and
 * safetensors readers' logical_view hook: the original weights as floats
 * (no view when nothing is packed). */
int mf_hf_prequant_view(const mf_model *m, mf_dtype out, mf_model **view, mf_status *st);
/* The view llama.cpp's convert_hf_to_gguf.py (ecbcb7ea dequant_model) reads:
 * FP8 weights as F32 products weight.float() * scale.float() (no rounding to
 * the scale's or torch_dtype), the other methods as mf_hf_prequant_view. */
int mf_hf_prequant_view_llama(const mf_model *m, mf_model **view, mf_status *st);
/* The bytes a pre-quantized HF directory's tensors take in memory once
 * transformers' (or vLLM's) quantizer has loaded them (hf_prequant.c
 * says per method what it keeps), and how that was counted; false when m
 * has no packed weights. */
bool mf_hf_prequant_memory(const mf_model *m, uint64_t *bytes, char *how, size_t cap);
/* A lone .safetensors file (no config.json beside it) whose tensors follow
 * a known packed layout (GPTQ, AWQ gemm, FP8, NVFP4, MXFP4, bitsandbytes):
 * its quantization_config inferred from the names and shapes, then opened
 * as a pre-quantized directory's weights are. 0 when nothing is packed. */
int mf_prequant_infer_single(mf_model *m, unsigned flags, mf_status *st);

#endif
