/* gguf_int.h - what the GGUF family's files share: the layout the reader
 * found (for rewriting a file in place of its header) and the header
 * serializer the writer and the editor both use. */
#ifndef MF_GGUF_INT_H
#define MF_GGUF_INT_H
#include "core/core.h"

/* Set by the reader on m->priv (in m's arena) for the model's first file. */
typedef struct mf_gguf_layout {
    uint32_t version;    /* 2 or 3 */
    bool big_endian;
    uint64_t alignment;  /* general.alignment or 32 */
    uint64_t data_start; /* absolute offset of the data section in file 0 */
} mf_gguf_layout;

/* One tensor info as the header stores it. */
typedef struct mf_gguf_tinfo {
    const char *name;
    int ndim;
    const int64_t *shape; /* C order (written reversed: ggml's ne) */
    int ggml_type;
    uint64_t rel_offset;  /* from the start of the data section */
} mf_gguf_tinfo;

/* A growable byte buffer. */
typedef struct mf_gguf_buf {
    uint8_t *p;
    size_t n, cap;
    bool oom;
} mf_gguf_buf;

/* Serializes magic, version, counts, the pairs in order, the tensor infos
 * and the zero padding up to `align` into b (little-endian); *unpadded (NULL
 * allowed) gets the length before the padding. -1 with st on a value GGUF
 * cannot encode or out of memory. b->p is the caller's to free. */
int mf_gguf_header_build(mf_gguf_buf *b, uint32_t version, const mf_kv *meta, size_t n_meta,
                         const mf_gguf_tinfo *ts, size_t n, uint64_t align, size_t *unpadded,
                         const char *path, mf_status *st);

/* The reader's rewrite hook (gguf_edit.c). */
int mf_gguf_rewrite(const mf_model *m, const mf_rewrite *rw, mf_status *st);
/* The type llama.cpp reads a key as (MF_V_NULL: a key it does not read). */
mf_vtype mf_gguf_key_type(const mf_model *m, const char *key);
/* The reader's check_key hook: the type llama.cpp reads a key as. */
int mf_gguf_check_key(const mf_model *m, const mf_kv *kv, mf_status *st);
#endif
