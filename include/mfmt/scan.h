/* mfmt/scan.h - is a file safe to load? Finds every pickle a loader could
 * run (any zip member, nested archives, tar members, .npy object arrays,
 * legacy torch streams, pickles after STOP, Keras Lambda layers) and judges
 * every name it reaches, without running anything. Where mfmt's reading
 * could differ from a loader's, the verdict is never `safe`.
 * Part of the public API; include <mfmt.h>, not this file. */
#ifndef MFMT_SCAN_H
#define MFMT_SCAN_H
#ifndef MFMT_H
#error "include <mfmt.h>"
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mf_verdict {
    MF_VERDICT_SAFE = 0,      /* only allowlisted names */
    MF_VERDICT_UNKNOWN = 1,   /* names off the allowlist not known to be dangerous,
                                 or something that could not be checked */
    MF_VERDICT_DANGEROUS = 2, /* names that run code, touch files or the network ... */
} mf_verdict;

/* "safe", "unknown", "dangerous". Static. */
MF_API const char *mf_verdict_name(mf_verdict v);

typedef struct mf_finding {
    mf_verdict severity;  /* SAFE: a note that does not change the verdict */
    const char *member;   /* archive member ("a.zip/inner.pt:archive/data.pkl"), "" if none */
    int64_t offset;       /* byte of the opcode in the member (the file when no member); -1 */
    int64_t file_offset;  /* byte in the file, when the member is stored plainly; -1 */
    const char *opcode;   /* "GLOBAL", "STACK_GLOBAL", "INST", "EXT1", "BUILD", ... or NULL */
    const char *global;   /* "os.system", or NULL */
    const char *message;  /* why */
} mf_finding;

typedef struct mf_scan_global {
    const char *name; /* module.name */
    mf_verdict cls;
} mf_scan_global;

/* One file's report. Every pointer inside is owned by the report: free it
 * with mf_scan_free. Read-only: may be read from several threads. */
typedef struct mf_scan_report {
    const char *path;
    mf_verdict verdict;
    mf_finding *findings;
    size_t n_findings, dropped_findings;
    mf_scan_global *globals; /* every distinct name reached, in order of first use */
    size_t n_globals;
    size_t n_pickles;        /* pickles interpreted */
    struct mf_arena *arena;  /* private */
} mf_scan_report;

/* Scans one file. Returns -1 (st filled) only when it cannot be read;
 * anything wrong inside it is a finding. Thread-safe. */
MF_API int mf_scan_file(const char *path, mf_scan_report **out, mf_status *st);
/* The same over bytes in memory (path names them in findings). */
MF_API int mf_scan_bytes(const char *path, const uint8_t *b, uint64_t n,
                         mf_scan_report **out, mf_status *st);
MF_API void mf_scan_free(mf_scan_report *r); /* NULL is fine */

/* Scans a file, or every regular file under a directory (three levels,
 * names sorted), handing each report to fn (which must not free it).
 * Returns -1 with st filled when a path cannot be read (the others are
 * still scanned); fn returning non-zero stops the walk (then -1 with
 * MF_ERR_CANCELLED). */
typedef int (*mf_scan_fn)(void *user, const mf_scan_report *r);
MF_API int mf_scan_path(const char *path, mf_scan_fn fn, void *user, mf_status *st);

/* The verdict over everything an open model's path holds, as mf_open
 * computed it (the worst of mf_scan_path's reports); MF_VERDICT_SAFE for
 * formats that cannot carry code (safetensors, GGUF, ...), and
 * MF_VERDICT_UNKNOWN when the model was opened with MF_OPEN_NO_SCAN.
 * Constant time, thread-safe. */
MF_API mf_verdict mf_model_verdict(const mf_model *m);
/* A fresh full scan of the model's path, as mf_scan_path does it (a
 * directory: one report per file, to fn). */
MF_API int mf_model_scan(const mf_model *m, mf_scan_fn fn, void *user, mf_status *st);

#ifdef __cplusplus
}
#endif
#endif /* MFMT_SCAN_H */
