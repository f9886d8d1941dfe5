/* tar.h - tar archives read as CPython's tarfile reads them (Lib/tarfile.py
 * TarInfo.frombuf, _proc_member, TarFile.next), which is how torch.load
 * opens its oldest checkpoints (members "storages", "tensors", "pickle"):
 * V7, ustar, GNU (longname/longlink 'L'/'K') and pax ('x', 'g') headers;
 * numbers in octal with spaces or NULs around them, or base-256. */
#ifndef MF_TAR_H
#define MF_TAR_H
#include "core/core.h"

typedef struct mf_tar_member {
    const char *name;       /* after ustar prefix, GNU longname and pax path */
    const char *linkname;
    char type;              /* the type flag byte ('0', '\0', '7', '1', '2', '5', 'x' ...) */
    uint64_t offset;        /* its first header (extended headers included) */
    uint64_t data_offset;   /* where tarfile reads its data */
    int64_t size;           /* as tarfile has it (a pax size overrides; may be < 0) */
} mf_tar_member;

typedef struct mf_tar {
    mf_tar_member *m;
    size_t n;
    const uint8_t *base;
    uint64_t size;
    const char *file;
    uint64_t end;           /* where tarfile stopped reading headers */
    const char *end_why;    /* why: "end-of-archive block", "invalid header ..." */
} mf_tar;

/* Does the file start with a header tarfile accepts (valid checksum and
 * numbers)? That is what decides whether torch.load takes the tar path. */
bool mf_tar_probe(const uint8_t *b, uint64_t size);
/* Reads the member list as tarfile does (a broken first header fails, a
 * broken later one ends the archive, as TarFile.next does). */
int mf_tar_open(mf_tar *t, const uint8_t *b, uint64_t size, const char *file,
                mf_arena *a, mf_status *st);
/* Regular-file types (REGULAR_TYPES: '0', '\0', '7', 'S'). */
bool mf_tar_is_regular(char type);
/* TarFile.getmember: the LAST member of that name. */
const mf_tar_member *mf_tar_find(const mf_tar *t, const char *name);
/* The member whose data extractfile/extract reads for m: m itself, or the
 * target of a hard or symbolic link (followed a few times); NULL when
 * tarfile would find nothing to read. */
const mf_tar_member *mf_tar_resolve(const mf_tar *t, const mf_tar_member *m);
/* The data span of a regular member, checked against the file. */
int mf_tar_data(const mf_tar *t, const mf_tar_member *m, const uint8_t **p, uint64_t *n,
                mf_status *st);
#endif
