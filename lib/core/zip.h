/* zip.h - ZIP archives read exactly as the loaders that open them do
 * (APPNOTE.TXT 4.3: local headers, central directory, ZIP64 records).
 *
 * Two readers matter, and they disagree on hostile archives:
 *  - MF_ZIP_PYTHON: CPython's zipfile (np.load of .npz, Keras .keras):
 *    _EndRecData takes the end record at the last 22 bytes when its comment
 *    length is 0, else the last signature in the last 64 KiB + 22; the
 *    ZIP64 records are taken right before it; offsets are shifted by the
 *    "concat" (data prepended to the archive); the central directory is
 *    read until its recorded size is used up (the entry count is ignored);
 *    names end at the first NUL; a name appearing twice resolves to the
 *    last; opening a member checks the local header's name and refuses
 *    overlapped entries.
 *  - MF_ZIP_MINIZ: miniz as PyTorch uses it (torch.load, torch.jit.load):
 *    the last end-record signature with 22 bytes after it, searched
 *    backwards in 4 KiB blocks; absolute offsets; the entry count from the
 *    end record; names looked up case-insensitively by a binary search
 *    over miniz's own heap sort of the central directory. */
#ifndef MF_ZIP_H
#define MF_ZIP_H
#include "core/core.h"

typedef enum mf_zip_dialect { MF_ZIP_PYTHON, MF_ZIP_MINIZ } mf_zip_dialect;

typedef struct mf_zip_entry {
    const char *name;        /* central directory name, NUL-terminated (Python: cut at NUL) */
    const uint8_t *raw_name; /* the name's bytes in the mapping */
    uint16_t name_len;       /* ... and their count (miniz compares all of them) */
    uint16_t method;         /* 0 stored, 8 deflated */
    uint16_t flags;          /* general purpose bit flag */
    uint32_t crc;
    uint64_t csize, usize;
    uint64_t cd_offset;      /* offset of its central directory record */
    uint64_t local_offset;   /* offset of its local header (Python: shifted by concat) */
    uint64_t data_offset;    /* first byte of its data (after the local header) */
    bool local_ok;           /* local header present and in bounds */
    bool name_mismatch;      /* local and central names differ */
    bool size_mismatch;      /* local header sizes/method disagree (non-zero) */
    const char *refused;     /* why this dialect's loader refuses to open it, or NULL */
} mf_zip_entry;

typedef struct mf_zip {
    mf_zip_entry *entries;
    size_t n;
    const uint8_t *base;
    uint64_t size;
    const char *file;
    mf_zip_dialect dialect;
    uint64_t eocd_offset;    /* the end record this view was read from */
    uint64_t cd_offset;      /* where the central directory is (after any shift) */
    int64_t concat;          /* Python: bytes prepended to the archive (0 otherwise) */
    uint32_t *sorted;        /* miniz: entry indices in miniz's sorted order */
    bool zip64;
} mf_zip;

/* Reads the central directory as CPython's zipfile does. Entries live in `a`. */
int mf_zip_open(mf_zip *z, const uint8_t *base, uint64_t size,
                const char *file, mf_arena *a, mf_status *st);
/* Reads it as `d` does. */
int mf_zip_open_as(mf_zip *z, mf_zip_dialect d, const uint8_t *base, uint64_t size,
                   const char *file, mf_arena *a, mf_status *st);
/* Reads it from the end record at `eocd` with `d`'s rules (another
 * interpretation of the same bytes: every candidate end record counts). */
int mf_zip_open_at(mf_zip *z, mf_zip_dialect d, const uint8_t *base, uint64_t size,
                   uint64_t eocd, const char *file, mf_arena *a, mf_status *st);
/* Offsets of end-record signatures with 22 bytes after them in the last
 * 64 KiB + 22 bytes (latest first), at most `max`; returns the count. */
size_t mf_zip_eocd_candidates(const uint8_t *base, uint64_t size, uint64_t *out, size_t max);
/* Do the bytes start as a zip archive: a local header, or the end record
 * of an empty archive (the test torch.load's _is_zipfile and np.load make
 * of the first bytes; detection judges such a file by its members)? */
bool mf_zip_starts(const uint8_t *b, uint64_t n);
/* Do two views list the same members (names, data spans, methods)? */
bool mf_zip_same(const mf_zip *a, const mf_zip *b);

/* The member the dialect's loader opens for `name`: Python the last entry
 * of that name, miniz its case-insensitive binary search. */
const mf_zip_entry *mf_zip_find(const mf_zip *z, const char *name);
/* Every entry whose name equals `name` ignoring ASCII case (what a
 * case-insensitive or a case-sensitive loader could open); returns the count. */
size_t mf_zip_find_all(const mf_zip *z, const char *name, const mf_zip_entry **out, size_t max);
/* Entry whose name ends with `suffix` (e.g. "/data.pkl"); first match. */
const mf_zip_entry *mf_zip_find_suffix(const mf_zip *z, const char *suffix);

/* What a hostile archive hides from one reading or another. */
typedef struct mf_zip_ambiguity {
    size_t dup_names;        /* entries whose name another entry has (the dialect's comparison) */
    size_t overlaps;         /* pairs of entries whose bytes overlap */
    uint64_t lead_bytes;     /* bytes before the first local header (after any shift) */
    const char *dup_example, *overlap_example;
} mf_zip_ambiguity;
/* 0, or -1 when out of memory (then `out` counts every member a duplicate:
 * cannot tell). */
int mf_zip_ambiguities(const mf_zip *z, mf_zip_ambiguity *out);

/* Pointer to a STORED member's bytes in the mapping (NULL otherwise),
 * readable (a remote archive's member is fetched). */
const uint8_t *mf_zip_stored_data(const mf_zip *z, const mf_zip_entry *e,
                                  mf_status *st);
/* The same pointer without fetching anything: for tensor data, which the
 * tensor streams fetch when (and if) a tensor is read (mf_tensor_need). */
const uint8_t *mf_zip_stored_span(const mf_zip *z, const mf_zip_entry *e,
                                  mf_status *st);
/* Streams the uncompressed bytes (stored or deflated) to sink, checking
 * the size; CRC is checked when check_crc. */
int mf_zip_stream(const mf_zip *z, const mf_zip_entry *e, bool check_crc,
                  mf_sink_fn sink, void *ctx, mf_status *st);
/* Extracts a member into malloc'd memory if usize <= limit. */
int mf_zip_extract(const mf_zip *z, const mf_zip_entry *e, size_t limit,
                   uint8_t **out, size_t *len, mf_status *st);
/* Extracts at most the first `want` bytes of a member (fewer if it is
 * shorter) into malloc'd memory: a prefix, without inflating the rest. */
int mf_zip_extract_prefix(const mf_zip *z, const mf_zip_entry *e, size_t want,
                          uint8_t **out, size_t *len, mf_status *st);
#endif
