/* mfmt/hash.h - hashing: files, tensors, models, llama-gguf-hash manifests.
 * Part of the public API; include <mfmt.h>, not this file. */
#ifndef MFMT_HASH_H
#define MFMT_HASH_H
#ifndef MFMT_H
#error "include <mfmt.h>"
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mf_hash_algo { MF_SHA256, MF_SHA1, MF_XXH64, MF_XXH3 } mf_hash_algo;

/* "sha256", "sha1", "xxh64", "xxh3" -> *out; -1 for others (no status). */
MF_API int mf_hash_algo_from_name(const char *name, mf_hash_algo *out);
MF_API const char *mf_hash_algo_name(mf_hash_algo a); /* static; "?" */

/* An incremental hasher (opaque; one thread at a time). */
typedef struct mf_hasher mf_hasher;
/* NULL when out of memory or a bad algo. Free with mf_hasher_free. */
MF_API mf_hasher *mf_hasher_new(mf_hash_algo a);
MF_API void mf_hasher_update(mf_hasher *h, const void *buf, size_t n);
/* Lower-case hex digest, NUL-terminated; the hasher then starts afresh. */
MF_API void mf_hasher_final_hex(mf_hasher *h, char hex[129]);
MF_API void mf_hasher_free(mf_hasher *h);
/* An mf_sink_fn feeding the hasher passed as ctx (never fails). */
MF_API int mf_hasher_sink(void *hasher, const void *buf, size_t n, mf_status *st);

/* Hash of every byte of a file (read with read(2), not mapped). Thread-safe. */
MF_API int mf_hash_file(const char *path, mf_hash_algo a, char hex[129], mf_status *st);
/* Hash of one tensor's canonical bytes (mf_tensor_stream). Thread-safe. */
MF_API int mf_hash_tensor(const mf_model *m, const mf_tensor *t, mf_hash_algo a,
                          char hex[129], mf_status *st);
/* Hash of all tensors' canonical bytes, in table order (metadata excluded):
 * the "tensor content" hash, equal across formats for equal tensors. */
MF_API int mf_hash_tensor_content(const mf_model *m, mf_hash_algo a, char hex[129],
                                  mf_status *st);

/* ---------------------------------------------------- everything at once */

typedef struct mf_hash_opts {
    size_t struct_size;   /* sizeof(mf_hash_opts) */
    mf_hash_algo algo;    /* default MF_SHA256 */
    bool whole_file;      /* also hash the model's file (default true; ignored
                             for a directory, which has no one file) */
    bool per_tensor;      /* also hash each tensor (default false) */
    mf_progress_fn progress; /* bytes of tensor data hashed; may cancel */
    void *progress_user;
} mf_hash_opts;

MF_API void mf_hash_opts_init(mf_hash_opts *o);

/* What mf_hash_model computed; owned by the caller, free with
 * mf_hash_result_free. */
typedef struct mf_hash_result {
    mf_hash_algo algo;
    bool has_file;          /* file_hex is set */
    char file_hex[129];     /* whole file */
    char content_hex[129];  /* tensor content (mf_hash_tensor_content) */
    size_t n_tensors;       /* entries of tensor_hex (0 unless per_tensor) */
    char (*tensor_hex)[129]; /* per tensor, in table order */
} mf_hash_result;

/* The whole-file, tensor-content and (optionally) per-tensor hashes of an
 * open model in as few reads as the layout allows: when every tensor lies
 * plainly in the one file in table order, one sequential read(2) of the
 * file feeds both the file hash and the tensor hashes on two threads;
 * otherwise the file hash runs on a second thread while the tensors are
 * streamed once. opts NULL: defaults. Thread-safe on one model. */
MF_API int mf_hash_model(const mf_model *m, const mf_hash_opts *opts,
                         mf_hash_result **out, mf_status *st);
MF_API void mf_hash_result_free(mf_hash_result *r);

/* ------------------------------------------- llama-gguf-hash manifests */

/* Manifest lines are "%-8s  %s  %s": kind padded to 8, hex digest, and
 * NAME:TENSOR for a tensor (its canonical bytes) or NAME for the model
 * (every tensor's bytes in table order), as llama.cpp's llama-gguf-hash
 * writes them. Kinds are the mf_hash_algo values plus MF_HASH_KIND_UUID,
 * llama-gguf-hash's UUIDv5 of the model. Sets of kinds are bit masks. */
#define MF_HASH_KIND_UUID 4
#define MF_HASH_KIND_COUNT 5
#define MF_HASH_BIT(kind) (1u << (kind))

/* "sha256", ..., "uuid"; "?" for others. Static. */
MF_API const char *mf_hash_kind_name(int kind);
/* A comma-separated list ("xxh64,sha1"; "all": the four hashes, as
 * llama-gguf-hash's --all) -> mask. -1 on an unknown or empty name. */
MF_API int mf_hash_kinds_parse(const char *list, unsigned *mask);

/* Receives each digest as it is finished; tensor == NULL for the model's
 * line. Return non-zero (with st filled, or not) to stop: the caller of
 * mf_hash_kinds then fails (MF_ERR_CANCELLED when st was left MF_OK). */
typedef int (*mf_hash_emit_fn)(void *user, int kind, const char *hex, const char *tensor,
                               mf_status *st);

/* Streams every tensor once, feeding one hasher per kind in `mask` for the
 * tensor (when per_tensor) and one per kind for the model, and emits in
 * llama-gguf-hash's order: per tensor xxh64, xxh3, sha1, sha256; then the
 * model's lines in the same order, then uuid. */
MF_API int mf_hash_kinds(const mf_model *m, unsigned mask, bool per_tensor,
                         mf_hash_emit_fn emit, void *user, mf_status *st);

/* Writes the manifest of `m` (every tensor's and the model's line per kind,
 * names prefixed by `label`, usually the path) to sink. Fails
 * (MF_ERR_UNSUPPORTED) on a tensor name holding a line break. */
MF_API int mf_manifest_write(const mf_model *m, const char *label, unsigned mask,
                             mf_sink_fn sink, void *ctx, mf_status *st);
/* The same into a file, written atomically. */
MF_API int mf_manifest_write_file(const mf_model *m, const char *label, unsigned mask,
                                  const char *out_path, mf_status *st);

/* A loaded manifest (opaque; read-only once loaded). */
typedef struct mf_manifest mf_manifest;

/* llama-gguf-hash --check's outcome (also `mfmt hash --check`'s exit code). */
typedef enum mf_manifest_outcome {
    MF_MANIFEST_OK = 0,
    MF_MANIFEST_MISMATCH = 1,
    MF_MANIFEST_MISSING_ENTRY = 3,
    MF_MANIFEST_UNKNOWN_HASH = 4, /* no line of a known kind */
    MF_MANIFEST_FILE_ERROR = 5,   /* the manifest cannot be read */
} mf_manifest_outcome;

/* "Success", "Failure", "Manifest Missing Entry", ... Static. */
MF_API const char *mf_manifest_outcome_name(mf_manifest_outcome o);

/* Reads a manifest (lines of unknown kinds skipped, as llama-gguf-hash
 * does). Free with mf_manifest_free. */
MF_API int mf_manifest_load(const char *path, mf_manifest **out, mf_status *st);
MF_API void mf_manifest_free(mf_manifest *mf);
/* The kinds it holds (a mask; 0: none known). */
MF_API unsigned mf_manifest_kinds(const mf_manifest *mf);
/* The strongest kind it holds as a one-bit mask (sha256 > sha1 > xxh64 >
 * xxh3 > uuid), which --check uses without --algo; 0 if none. */
MF_API unsigned mf_manifest_default_mask(const mf_manifest *mf);
/* The name the manifest gives this model: `path` when a line names it
 * exactly, else the one model name with the same file name (from the model
 * line or the first tensor's line; for "-", standard input, the one model
 * name of the first tensor's line). malloc'd, free with mf_free. */
MF_API char *mf_manifest_label(const mf_manifest *mf, const mf_model *m, const char *path);

/* How one computed line compares with the manifest. */
typedef enum mf_manifest_match {
    MF_MATCH_OK, MF_MATCH_MISMATCH, MF_MATCH_NOT_FOUND,
} mf_manifest_match;
/* "Ok", "Mismatch", "Not Found". Static. */
MF_API const char *mf_manifest_match_name(mf_manifest_match m);

/* Called per computed line: name is LABEL or LABEL:TENSOR. Non-zero stops. */
typedef int (*mf_manifest_line_fn)(void *user, int kind, const char *hex, const char *name,
                                   mf_manifest_match match);

/* Hashes `m` in the kinds of `mask` (0: mf_manifest_default_mask), compares
 * each line with the manifest under `label`, and sets *outcome as
 * llama-gguf-hash decides it. Returns -1 only when hashing fails. */
MF_API int mf_manifest_check(const mf_manifest *mf, const mf_model *m, const char *label,
                             unsigned mask, mf_manifest_line_fn on_line, void *user,
                             mf_manifest_outcome *outcome, mf_status *st);

/* ---------------------------------------------------- delivery records */

/* A delivery record (doc/hub.md): for every file of a model (a Hub cache
 * snapshot, ORG/NAME or hf://..., a local directory, one file) its path,
 * size and SHA-256 and, for the files mfmt opens as models, the
 * tensor-content SHA-256 (per_tensor: each tensor's too), with the repo
 * and commit when it came through the Hub cache. *json_text: the record
 * (JSON, a line break at the end; free with mf_free); *n_files (may be
 * NULL) the files recorded. Thread-safe. */
MF_API int mf_record_make(const char *model, bool per_tensor, char **json_text, size_t *n_files,
                          mf_status *st);

/* How a copy compares with a record (also `mfmt hash --check-record`'s
 * exit code): the worst file's. */
enum { MF_RECORD_OK = 0, MF_RECORD_DIFFERS = 1, MF_RECORD_MISSING = 3, MF_RECORD_UNREADABLE = 5 };

typedef struct mf_record_file_check {
    const char *path;        /* as recorded */
    int result;              /* MF_RECORD_OK, _DIFFERS, _MISSING (also unreadable) */
    int tensors_same;        /* a differing file: 1 its tensors are the recorded ones,
                                0 they differ, -1 not known */
    const char *result_name; /* "ok", "missing", "differs", "file-differs-tensors-same" */
    const char *meaning;     /* a sentence for the user (static) */
} mf_record_file_check;

typedef struct mf_record_report {
    int outcome;             /* MF_RECORD_*: the worst file's; UNREADABLE: see error */
    char error[600];         /* why the record could not be read */
    char *repo, *commit;     /* the record's origin; NULL when it had none */
    mf_record_file_check *files;
    size_t n_files;
} mf_record_report;

/* Checks MODEL (a copy) against a record: which file differs, and whether
 * its tensors do. An unreadable record is an outcome (MF_RECORD_UNREADABLE),
 * not a failure; -1 only when MODEL cannot be resolved or memory runs out.
 * Free with mf_record_report_free. Thread-safe. */
MF_API int mf_record_check(const char *model, const char *record, mf_record_report **out,
                           mf_status *st);
MF_API void mf_record_report_free(mf_record_report *c); /* NULL is fine */

#ifdef __cplusplus
}
#endif
#endif /* MFMT_HASH_H */
