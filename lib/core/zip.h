/* zip.h - ZIP archives read from the central directory, as loaders do
 * (APPNOTE.TXT 4.3: local headers, central directory, ZIP64 records). */
#ifndef MF_ZIP_H
#define MF_ZIP_H
#include "core/core.h"

typedef struct mf_zip_entry {
    const char *name;        /* central directory name, NUL-terminated */
    uint16_t method;         /* 0 stored, 8 deflated */
    uint16_t flags;          /* general purpose bit flag */
    uint32_t crc;
    uint64_t csize, usize;
    uint64_t cd_offset;      /* offset of its central directory record */
    uint64_t local_offset;   /* offset of its local header */
    uint64_t data_offset;    /* first byte of its data (after the local header) */
    bool local_ok;           /* local header present and in bounds */
    bool name_mismatch;      /* local and central names differ */
    bool size_mismatch;      /* local header sizes/method disagree (non-zero) */
} mf_zip_entry;

typedef struct mf_zip {
    mf_zip_entry *entries;
    size_t n;
    const uint8_t *base;
    uint64_t size;
    const char *file;
    uint64_t cd_offset;
    bool zip64;
} mf_zip;

/* Reads the central directory. Entries live in `a`. */
int mf_zip_open(mf_zip *z, const uint8_t *base, uint64_t size,
                const char *file, mf_arena *a, mf_status *st);
const mf_zip_entry *mf_zip_find(const mf_zip *z, const char *name);
/* Entry whose name ends with `suffix` (e.g. "/data.pkl"); first match. */
const mf_zip_entry *mf_zip_find_suffix(const mf_zip *z, const char *suffix);
/* Pointer to a STORED member's bytes in the mapping (NULL otherwise). */
const uint8_t *mf_zip_stored_data(const mf_zip *z, const mf_zip_entry *e,
                                  mf_status *st);
/* Streams the uncompressed bytes (stored or deflated) to sink, checking
 * the size; CRC is checked when check_crc. */
int mf_zip_stream(const mf_zip *z, const mf_zip_entry *e, bool check_crc,
                  mf_sink_fn sink, void *ctx, mf_status *st);
/* Extracts a member into malloc'd memory if usize <= limit. */
int mf_zip_extract(const mf_zip *z, const mf_zip_entry *e, size_t limit,
                   uint8_t **out, size_t *len, mf_status *st);
#endif
