/* model.h - the model inside: files, tensors, how readers build a model,
 * file mappings, canonical streams of mapped tensors. */
#ifndef MF_CORE_MODEL_H
#define MF_CORE_MODEL_H

#include "core/base.h"

#include <dirent.h>
#include <stdio.h>

/* ------------------------------------------------- the model, inside */
/* What mfmt.h keeps opaque (mf_model, mf_tensor): readers fill these, ops
 * read them; callers outside lib/ use the accessors of mfmt.h. */
struct mf_reader;

typedef struct mf_file {
    const char *path;
    const uint8_t *base; /* read-only mapping (NULL for an empty file) */
    uint64_t size;
    bool borrowed;       /* the caller's buffer (memfile.c): not unmapped */
    uint64_t dev, ino;   /* the mapped file's identity (0, 0: not a local file) */
} mf_file;

struct mf_tensor {
    const char *name;
    mf_dtype dtype;
    int ndim;
    int64_t shape[MF_MAX_DIMS]; /* C order: outermost first */
    const int64_t *strides;     /* element strides, C order; NULL = contiguous */
    uint32_t file;              /* index into mf_model.files */
    uint64_t offset;            /* byte offset of the first element there */
    uint64_t nbytes;            /* bytes of the tensor stored contiguously */
    const uint8_t *data;        /* into the mapping; NULL when not mapped as is
                                   (compressed, chunked, ...): use mf_tensor_stream */
    bool big_endian;            /* stored big-endian (swapped when streamed) */
    void *priv;                 /* reader-private */
    const struct mf_model *owner; /* the model whose files and reader hold this
                                     tensor (a shard, a directory's weights
                                     file); NULL: the model listing it */
};

struct mf_model {
    mf_format format;
    char version[64];          /* "3", "1.0", "torch zip v3", ... */
    const char *path;
    mf_kv *meta;   size_t n_meta;
    mf_tensor *tensors; size_t n_tensors;
    mf_file *files; size_t n_files;
    char **notes;  size_t n_notes; /* warnings that are not breaches */
    uint64_t header_bytes;     /* bytes read to open (O(header) check) */
    const struct mf_reader *reader;
    mf_arena *arena;           /* owns every string and array above */
    void *priv;
    mf_verdict verdict;        /* the scan at open (mf_model_verdict) */
    struct mf_model *view_src_owned; /* MF_OPEN_LOGICAL: the raw model this view owns */
    const char *config;        /* while a reader opens: mf_open_opts.config (or NULL) */
    bool lost_note;            /* a note could not be stored (out of memory): the open fails */
    struct mf_mem_source *mem; /* mf_open_buffer/mf_open_fd: its bytes, freed by mf_close */
};

/* The file a tensor lives in (follows t->owner). */
const mf_file *mf_tensor_file(const mf_model *m, const mf_tensor *t);

/* Tensors of a model by name in O(1) (mf_tensor_find is a linear scan):
 * for loops over every tensor of another model (diff). Borrows m. */
typedef struct mf_tensor_index {
    const mf_model *m;
    size_t *slot; /* tensor index + 1; 0 = empty */
    size_t cap;
} mf_tensor_index;
int mf_tensor_index_build(const mf_model *m, mf_tensor_index *ix); /* -1: no memory */
const mf_tensor *mf_tensor_index_find(const mf_tensor_index *ix, const char *name);
void mf_tensor_index_free(mf_tensor_index *ix);

/* ------------------------------------------------------------ file maps */
/* Maps a whole file read-only (size 0 gives base NULL). */
int mf_map_file(const char *path, mf_file *out, mf_status *st);
void mf_unmap_file(mf_file *f);
/* A caller's buffer as a file (memfile.c): a source named "mem:ID/name"
 * (mf_mem_path) that is found by its handle, never by parsing a path: only
 * while a thread has it as its scope (mf_mem_scope_enter, which returns the
 * previous scope for mf_mem_scope_leave) does mf_map_file resolve its name
 * to it, and do the path helpers (mf_path_exists, mf_is_dir, mf_open_read)
 * treat every other "mem:ID/..." path of it as absent. Outside a scope such
 * a path is an ordinary file path. mf_mem_register: NULL when out of memory;
 * the buffer is borrowed. mf_mem_map: 0 when path is not the scope's, 1 with
 * *out filled for its own name, -1 (st) for another file beside it. */
typedef struct mf_mem_source mf_mem_source;
mf_mem_source *mf_mem_register(const void *buf, size_t len, const char *name);
/* The same for what an open file descriptor holds (mf_open_fd), owned by
 * the source (unmapped or freed by mf_mem_unregister): a regular file
 * mapped from its current position to its end (the position is left as
 * it was), anything else (a pipe) read to its end, at most max_read bytes
 * (more: MF_ERR_USAGE, saying so). NULL with st on failure. */
mf_mem_source *mf_mem_register_fd(int fd, const char *name, uint64_t max_read, mf_status *st);
const char *mf_mem_path(const mf_mem_source *s);
void mf_mem_unregister(mf_mem_source *s);
const mf_mem_source *mf_mem_scope_enter(const mf_mem_source *s);
void mf_mem_scope_leave(const mf_mem_source *prev);
int mf_mem_map(const char *path, mf_file *out, mf_status *st);
/* In the scope's namespace but not the buffer itself: a file beside the
 * buffer, which does not exist. */
bool mf_mem_shadows(const char *path);
/* The scope's buffer itself (a file, not a directory). */
bool mf_mem_is_source(const char *path);
/* Makes [p, p+n) of a mapping readable: for a remote file (remote.c) the
 * missing pages are fetched (-1, st filled, when that fails or passes the
 * byte budget); for anything else nothing to do. Call it before reading
 * bytes of a mapping by pointer (the cursor does it for its reads). */
int mf_source_need(const uint8_t *p, uint64_t n, mf_status *st);
/* Whether p lies in a remote file's mapping. */
bool mf_source_is_remote(const uint8_t *p);
/* mf_source_need for every byte a mapped tensor's elements reach. */
int mf_tensor_need(const mf_tensor *t, mf_status *st);
bool mf_is_dir(const char *path);
/* open(path, O_RDONLY) that never waits: a FIFO where a file is expected
 * is opened without blocking until a writer comes (O_NONBLOCK, cleared
 * after the open); callers refuse what is not a regular file. -1 with
 * errno. mf_fopen_read: the same as a stdio stream ("rb"). */
int mf_open_read(const char *path);
FILE *mf_fopen_read(const char *path);
bool mf_path_exists(const char *path);
/* opendir(path), except the folder of an in-memory buffer in scope (NULL,
 * ENOENT): readers list a folder through it. */
DIR *mf_opendir(const char *path);
/* Joins dir and name with '/', allocated in the arena. */
char *mf_path_join(mf_arena *a, const char *dir, const char *name);
/* The same, malloc'd (NULL: out of memory). */
char *mf_path_join_new(const char *dir, const char *name);
/* Reads a small file (< limit bytes) fully into malloc'd memory, NUL ended. */
int mf_read_small_file(const char *path, size_t limit, char **out, size_t *len,
                       mf_status *st);

/* ----------------------------------------------------------- model build */
/* Readers build a model with these; the arena owns everything. */
mf_model *mf_model_new(mf_format fmt, const char *path);
/* Maps `path` and adds it to m->files; *index gets its slot. */
int mf_model_add_file(mf_model *m, const char *path, uint32_t *index,
                      mf_status *st);
mf_tensor *mf_model_add_tensor(mf_model *m, mf_status *st); /* zeroed */
mf_kv *mf_model_add_meta(mf_model *m, const char *key, mf_status *st);
/* Adds key = v (a string must live in m's arena). v of type MF_V_NULL is
 * taken as mf_value_str's out of memory. 0, or -1 with st. */
int mf_model_put_meta(mf_model *m, const char *key, mf_value v, mf_status *st);
int mf_model_note(mf_model *m, const char *fmt, ...) MF_PRINTF(2, 3);
/* A note that is information, not a warning (mf_model_note_is_info). */
int mf_model_info(mf_model *m, const char *fmt, ...) MF_PRINTF(2, 3);
/* Lists child's tensors in `m` too (with owner = the child, which m keeps
 * open until mf_close(m)) and copies its notes. On failure child is closed
 * or already owned by m; -1 with st filled. (Opening the child is the
 * formats layer's job: mf_model_open_child in formats/formats.h.) */
int mf_model_adopt_child(mf_model *m, mf_model *child, const char *path,
                         mf_status *st);
/* Sets t->nbytes from dtype and shape; fails on overflow / partial block. */
int mf_tensor_set_nbytes(mf_tensor *t, const char *file, int64_t off,
                         mf_status *st);
/* Values */
mf_value mf_value_str(mf_arena *a, const char *s, size_t n);
mf_value mf_value_int(int64_t v);
mf_value mf_value_uint(uint64_t v);
mf_value mf_value_f64(double v);
mf_value mf_value_bool(bool v);

/* Reverses the bytes of each `width`-byte element of p[0..n) (byte order). */
void mf_swap_bytes(uint8_t *p, uint64_t n, uint32_t width);
/* A sink that fills a buffer of cap bytes (p); more than cap fails with
 * MF_ERR_FORMAT "<too_long>" (e.g. "zip member larger than recorded"). */
typedef struct mf_buf_sink {
    uint8_t *p;
    uint64_t n, cap;
    const char *too_long;
} mf_buf_sink;
int mf_buf_sink_fn(void *ctx, const void *buf, size_t n, mf_status *st);
/* t->data holds the canonical bytes as they lie (api.c): the condition of
 * every zero-copy read; otherwise mf_tensor_stream. */
bool mf_tensor_is_plain(const mf_tensor *t);
/* The page-aligned span of a file mapping that t's elements reach (for
 * madvise); false when t->data is not inside one of m's file mappings. */
bool mf_tensor_mapped_span(const mf_model *m, const mf_tensor *t, uint8_t **lo, size_t *len);
/* Streams a mapped tensor (t->data set) honouring strides and byte order. */
int mf_stream_mapped(const mf_model *m, const mf_tensor *t, mf_sink_fn sink,
                     void *ctx, mf_status *st);
/* Drops a mapped tensor's pages from the process after direct reads of
 * t->data (the page cache keeps them); a no-op for unmapped tensors. */
void mf_tensor_release(const mf_model *m, const mf_tensor *t);

#endif /* MF_CORE_MODEL_H */
