/* hash_manifest.h - tensor hashes in several algorithms in one pass, and
 * manifests in the line format of llama.cpp's llama-gguf-hash
 * (examples/gguf-hash/gguf-hash.cpp):
 *
 *     xxh64     f66e9cd66a4396a0  model.gguf:blk.0.attn_q.weight
 *     xxh64     2d0b6e8f0a3c9e71  model.gguf
 *
 * "%-8s  %s  %s": the algorithm padded to 8, the hex digest, and NAME:TENSOR
 * for a tensor (its raw bytes) or NAME for the whole model (every tensor's
 * bytes in table order). mfmt hashes canonical bytes, which for a GGUF file
 * are exactly the raw bytes llama-gguf-hash reads. */
#ifndef MF_HASH_MANIFEST_H
#define MF_HASH_MANIFEST_H
#include "cli.h"

/* The manifest's hash kinds: mf_hash_algo values, plus llama-gguf-hash's
 * UUIDv5 of the model (SHA-1 of a fixed namespace + all tensor bytes). */
enum { HK_UUID = 4, HK_COUNT = 5 };
#define HK_BIT(k) (1u << (k))

/* llama-gguf-hash's exit codes for --check (0 and 1 also mean what they do
 * for every mfmt command; 2 stays mfmt's usage or I/O error). */
enum {
    MANIFEST_OK = 0,
    MANIFEST_MISMATCH = 1,
    MANIFEST_MISSING_ENTRY = 3,
    MANIFEST_UNKNOWN_HASH = 4,
    MANIFEST_FILE_ERROR = 5,
};

const char *hk_name(int kind);
/* "sha256", "xxh64,sha1", "all" (llama's --all: the four hashes), "uuid".
 * Returns -1 on an unknown name. */
int hk_parse_list(const char *s, unsigned *mask);

/* Receives each hash as it is finished; tensor == NULL for the model line. */
typedef int (*hk_emit_fn)(void *ctx, int kind, const char *hex, const char *tensor,
                          mf_status *st);

/* Streams every tensor once, feeding one hasher per kind in `mask` for the
 * tensor (unless !per_tensor) and one per kind for the model. Emits, as
 * llama-gguf-hash prints them: per tensor xxh64, xxh3, sha1, sha256; then the
 * model in the same order, then uuid. */
int hk_hash_model(const mf_model *m, unsigned mask, bool per_tensor, hk_emit_fn emit,
                  void *ctx, mf_status *st);

/* mfmt hash --manifest OUT: writes the manifest atomically ("-": stdout). */
int manifest_write(const mf_model *m, const char *label, unsigned mask, const char *out,
                   mf_status *st);
/* mfmt hash --check MANIFEST: prints each line with Ok / Mismatch / Not Found
 * and returns one of the MANIFEST_* codes. mask 0: the strongest kind the
 * manifest holds, as llama-gguf-hash picks. */
int manifest_check(const char *model_path, const char *manifest, unsigned mask);
#endif
