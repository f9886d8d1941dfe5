/* scan.h - is a file safe to load? Finds every pickle a loader could run
 * (any zip member, nested archives, tar members, .npy object arrays,
 * legacy torch streams, pickles after STOP) and judges every name it
 * reaches, without running anything. */
#ifndef MF_SCAN_H
#define MF_SCAN_H
#include "core/core.h"

typedef enum mf_verdict {
    MF_VERDICT_SAFE = 0,      /* only allowlisted names */
    MF_VERDICT_UNKNOWN = 1,   /* names off the allowlist not known to be dangerous,
                                 or something that could not be checked */
    MF_VERDICT_DANGEROUS = 2, /* names that run code, touch files or the network ... */
} mf_verdict;

const char *mf_verdict_name(mf_verdict v); /* "safe", "unknown", "dangerous" */

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

typedef struct mf_scan_report {
    const char *path;
    mf_verdict verdict;
    mf_finding *findings;
    size_t n_findings, dropped_findings;
    mf_scan_global *globals; /* every distinct name reached, in order of first use */
    size_t n_globals;
    size_t n_pickles;        /* pickles interpreted */
    mf_arena *arena;
} mf_scan_report;

/* Scans one file. Returns -1 (st filled) only when it cannot be read;
 * anything wrong inside it is a finding. */
int mf_scan_file(const char *path, mf_scan_report **out, mf_status *st);
/* The same over bytes in memory (path names them in findings). */
int mf_scan_bytes(const char *path, const uint8_t *b, uint64_t n, mf_scan_report **out,
                  mf_status *st);
void mf_scan_free(mf_scan_report *r);

/* Scans a file, or every regular file under a directory (three levels,
 * names sorted), handing each report to fn (which must not free it).
 * Returns -1 with st filled when a path cannot be read (the others are
 * still scanned); fn returning non-zero stops the walk. */
typedef int (*mf_scan_fn)(void *ctx, const mf_scan_report *r);
int mf_scan_path(const char *path, mf_scan_fn fn, void *ctx, mf_status *st);
#endif
