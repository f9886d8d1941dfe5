/* core.h - internal helpers shared by every layer of libmfmt (not public).
 *
 * Errors: mf_fail() records a fatal error and returns -1; mf_breach() records
 * a breach and lets the reader go on (so validate can list them all). Every
 * message has the form "FILE: byte OFFSET: RULE" (offset < 0: no byte). */
#ifndef MF_CORE_H
#define MF_CORE_H

#include "mfmt.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#if defined(__GNUC__)
#define MF_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define MF_UNUSED __attribute__((unused))
#else
#define MF_PRINTF(a, b)
#define MF_UNUSED
#endif

/* ------------------------------------------------- the model, inside */
/* What mfmt.h keeps opaque (mf_model, mf_tensor): readers fill these, ops
 * read them; callers outside lib/ use the accessors of mfmt.h. */
typedef struct mf_arena mf_arena;
struct mf_reader;

typedef struct mf_file {
    const char *path;
    const uint8_t *base; /* read-only mapping (NULL for an empty file) */
    uint64_t size;
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
};

/* The file a tensor lives in (follows t->owner). */
const mf_file *mf_tensor_file(const mf_model *m, const mf_tensor *t);

/* Copies a caller's option struct (first field struct_size) over `dflt`
 * (already holding the defaults, dflt_size bytes): fields beyond the
 * caller's struct_size keep their defaults. NULL opts: defaults. -1 with
 * MF_ERR_USAGE when struct_size is 0 (the struct was not initialised). */
int mf_opts_copy(void *dflt, size_t dflt_size, const void *opts, const char *what,
                 mf_status *st);

/* Calls a caller's progress callback (NULL: nothing); non-zero from it
 * fails with MF_ERR_CANCELLED ("FILE: cancelled"). Returns 0 or -1. */
int mf_progress_report(mf_progress_fn fn, void *user, uint64_t done, uint64_t total,
                       const char *file, mf_status *st);

/* First line of every public function taking an mf_status: a NULL status
 * is allowed everywhere (mfmt.h), so it is replaced by a local one that is
 * cleared when the function returns. */
static inline void mf_status_local_end(mf_status *s) { mf_status_clear(s); }
#define MF_ST_GUARD(st)                                                       \
    mf_status mf_st_local_ __attribute__((cleanup(mf_status_local_end))) =    \
        MF_STATUS_INIT;                                                       \
    if (!(st))                                                                \
    (st) = &mf_st_local_

/* ------------------------------------------------------------- status */
int mf_fail(mf_status *st, mf_code code, const char *file, int64_t offset,
            const char *fmt, ...) MF_PRINTF(5, 6);
void mf_breach(mf_status *st, const char *file, int64_t offset,
               const char *fmt, ...) MF_PRINTF(4, 5);
int mf_failv(mf_status *st, mf_code code, const char *file, int64_t offset,
             const char *fmt, va_list ap);
/* Appends a message of another status (e.g. from a nested reader). */
void mf_status_merge(mf_status *dst, const mf_status *src);
static inline bool mf_ok(const mf_status *st) { return st->code == MF_OK; }
int mf_oom(mf_status *st, const char *file);

/* ---------------------------------------------------- checked arithmetic */
static inline bool mf_add_ovf(uint64_t a, uint64_t b, uint64_t *out)
{
    return __builtin_add_overflow(a, b, out);
}
static inline bool mf_mul_ovf(uint64_t a, uint64_t b, uint64_t *out)
{
    return __builtin_mul_overflow(a, b, out);
}
static inline uint64_t mf_align_up(uint64_t v, uint64_t a) /* a: power of 2 */
{
    return (v + a - 1) & ~(a - 1);
}

/* ---------------------------------------------------------------- arena */
/* Bump allocator that owns every string/array of a model; freed at once. */
mf_arena *mf_arena_new(void);
void mf_arena_free(mf_arena *a);
void *mf_arena_alloc(mf_arena *a, size_t n);        /* zeroed, 16-aligned */
void *mf_arena_calloc(mf_arena *a, size_t n, size_t size); /* NULL on ovf */
char *mf_arena_strndup(mf_arena *a, const char *s, size_t n);
char *mf_arena_strdup(mf_arena *a, const char *s);
char *mf_arena_printf(mf_arena *a, const char *fmt, ...) MF_PRINTF(2, 3);

/* -------------------------------------------------------- growable array */
/* MF_VEC(T) v = {0}; MF_VEC_PUSH(v, x) -> 0 or -1 (out of memory). */
#define MF_VEC(T) struct { T *v; size_t n, cap; }
int mf_vec_grow(void **v, size_t *cap, size_t need, size_t elem);
#define MF_VEC_PUSH(vec, x)                                                  \
    (((vec).n < (vec).cap ||                                                 \
      mf_vec_grow((void **)&(vec).v, &(vec).cap, (vec).n + 1,                \
                  sizeof(*(vec).v)) == 0)                                    \
         ? ((vec).v[(vec).n++] = (x), 0)                                     \
         : -1)
#define MF_VEC_FREE(vec) (free((vec).v), (vec).v = NULL, (vec).n = (vec).cap = 0)

/* ------------------------------------------------------- string set */
/* Open-addressing set of borrowed strings, for duplicate-name checks in
 * O(n) (a hostile file may hold millions of names). */
typedef struct mf_strset {
    const char **slots;
    size_t cap, n;
} mf_strset;
/* 1: added; 0: already present; -1: out of memory. */
int mf_strset_add(mf_strset *s, const char *str);
bool mf_strset_has(const mf_strset *s, const char *str);
void mf_strset_free(mf_strset *s);
/* ------------------------------------------------- atomic output (atomic.c)
 * Temporaries are NAME.mfmt-tmp-XXXXXX (files, or a set's staging
 * directory) and PREFIX.mfmt-commit-XXXXXX (a set being renamed into
 * place), each locked (flock) by its living writer. */
bool mf_atomic_is_temp_name(const char *name);
/* Tests only: SIGKILL the process at a point of atomic.c ("write": after a
 * buffer reached the temporary; "link": named, not yet renamed; "stage": a
 * set fully staged, before its commit point; "commit": after the commit
 * point and the first rename), and force named temporaries. */
extern const char *mf_atomic_kill_point;
extern bool mf_atomic_named_only;
/* Removes the temporaries of dead runs in dir; finishes committed sets. */
void mf_atomic_sweep(const char *dir);
/* A set of files that appears together: each file is written (mf_atomic,
 * or any writer taking a path) to the staging path mf_atomic_set_add
 * returns for its final path (same directory as PREFIX); commit moves them
 * all into place (see atomic.c for the guarantee); abort removes them. */
typedef struct mf_atomic_set mf_atomic_set;
int mf_atomic_set_begin(const char *prefix, mf_atomic_set **out, mf_status *st);
const char *mf_atomic_set_add(mf_atomic_set *s, const char *final_path, mf_status *st);
int mf_atomic_set_commit(mf_atomic_set *s, mf_status *st); /* frees s */
void mf_atomic_set_abort(mf_atomic_set *s);                /* frees s */

/* Every writing command refuses an output that is one of its inputs: the
 * same inode as the model's path, any file it maps (every shard of a split
 * set, every weights file of a directory, through tensor owners), or a
 * file a model directory's reader reads (its *.json, *.model, *.txt,
 * *.jinja). A path that does not exist yet passes. */
int mf_output_check(const mf_model *m, const char *out, mf_status *st);
/* The same, for a command that may replace the input file `self` in place
 * (edit): out == self passes, any other input is refused. */
int mf_output_check_replacing(const mf_model *m, const char *self, const char *out, mf_status *st);
/* The same for one more input path (an imatrix file, a model directory). */
int mf_output_check_path(const char *input, const char *out, mf_status *st);

/* FNV-1a of a C string (the sets' hash). */
uint64_t mf_str_hash(const char *s);

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

/* A size such as "5GB", "500MiB", "2G", "1024" in bytes (see size.c). */
int mf_parse_size(const char *s, uint64_t *out);

/* ------------------------------------------------------------ file maps */
/* Maps a whole file read-only (size 0 gives base NULL). */
int mf_map_file(const char *path, mf_file *out, mf_status *st);
void mf_unmap_file(mf_file *f);
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
bool mf_path_exists(const char *path);
/* Joins dir and name with '/', allocated in the arena. */
char *mf_path_join(mf_arena *a, const char *dir, const char *name);
/* The same, malloc'd (NULL: out of memory). */
char *mf_path_join_new(const char *dir, const char *name);
/* Reads a small file (< limit bytes) fully into malloc'd memory, NUL ended. */
int mf_read_small_file(const char *path, size_t limit, char **out, size_t *len,
                       mf_status *st);

/* --------------------------------------------------------------- cursor */
/* Bounds-checked reader over [base, base+size). `origin` is added to every
 * offset reported (a cursor over a member of a zip reports file offsets).
 * On a short read it records "unexpected end of data reading WHAT". */
typedef struct mf_cursor {
    const uint8_t *base;
    uint64_t size, pos, origin;
    const char *file;
    mf_status *st;
    bool big_endian;
} mf_cursor;

void mf_cur_init(mf_cursor *c, const uint8_t *base, uint64_t size,
                 const char *file, mf_status *st);
static inline uint64_t mf_cur_left(const mf_cursor *c) { return c->size - c->pos; }
static inline uint64_t mf_cur_off(const mf_cursor *c) { return c->origin + c->pos; }
int mf_cur_need(mf_cursor *c, uint64_t n, const char *what);
int mf_cur_u8(mf_cursor *c, uint8_t *v, const char *what);
int mf_cur_u16(mf_cursor *c, uint16_t *v, const char *what); /* c->big_endian */
int mf_cur_u32(mf_cursor *c, uint32_t *v, const char *what);
int mf_cur_u64(mf_cursor *c, uint64_t *v, const char *what);
int mf_cur_bytes(mf_cursor *c, uint64_t n, const uint8_t **p, const char *what);
int mf_cur_skip(mf_cursor *c, uint64_t n, const char *what);
int mf_cur_seek(mf_cursor *c, uint64_t pos, const char *what);
/* Fails at the cursor's offset: "FILE: byte OFF: <fmt>". */
int mf_cur_fail(mf_cursor *c, const char *fmt, ...) MF_PRINTF(2, 3);

static inline uint16_t mf_rd16le(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline uint32_t mf_rd32le(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t mf_rd64le(const uint8_t *p)
{
    return (uint64_t)mf_rd32le(p) | (uint64_t)mf_rd32le(p + 4) << 32;
}
static inline uint16_t mf_rd16be(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static inline uint32_t mf_rd32be(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}
static inline uint64_t mf_rd64be(const uint8_t *p)
{
    return (uint64_t)mf_rd32be(p) << 32 | (uint64_t)mf_rd32be(p + 4);
}
static inline void mf_wr16le(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static inline void mf_wr32le(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static inline void mf_wr64le(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* ------------------------------------------------------------ half floats */
float mf_f16_to_f32(uint16_t h);
uint16_t mf_f32_to_f16(float f);   /* round to nearest even (numpy, ggml) */
float mf_bf16_to_f32(uint16_t h);
uint16_t mf_f32_to_bf16(float f);  /* round to nearest even, NaN kept quiet */
/* numpy's npy_half conversions (what gguf-py and convert_hf_to_gguf.py
 * compute with): the same but for NaNs, whose payload is kept as is
 * (f16 -> f32: not quieted; f32 -> f16: the top 10 payload bits, never 0). */
float mf_f16_to_f32_numpy(uint16_t h);
uint16_t mf_f32_to_f16_numpy(float f);

/* ------------------------------------------------------ JSON positions */
/* For messages that name the byte of a JSON value (jansson keeps no
 * positions): scanners over text jansson accepted, within [0, n). */
typedef struct mf_json_step {
    const char *key; /* an object member (the last of that name), or NULL: */
    size_t index;    /* an array element */
} mf_json_step;
/* The offset of the value at `path` below the value at `at`, or -1. */
int64_t mf_json_locate(const char *t, size_t n, size_t at, const mf_json_step *path,
                       size_t depth);
/* The next member of the object whose '{' is at *i (start there; each call
 * moves *i on): offsets of its key's '"' and of its value. */
bool mf_json_next_member(const char *t, size_t n, size_t *i, size_t *key, size_t *value);
/* Does the string whose '"' is at i decode to `s`? */
bool mf_json_string_is(const char *t, size_t n, size_t i, const char *s);
/* The offset just past the value at i. */
size_t mf_json_skip_value(const char *t, size_t n, size_t i);

/* ------------------------------------------------------------------ UTF-8 */
/* Returns the offset of the first invalid byte, or -1 if all valid. */
int64_t mf_utf8_check(const uint8_t *s, size_t n);
/* Writes code point cp (< 0x110000) as UTF-8 at o (room for 4); returns
 * the bytes written. Surrogates are written as they are (Python's
 * surrogatepass), for the readers that must keep them. */
size_t mf_utf8_put(uint8_t *o, uint32_t cp);

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
/* Appends len bytes of in_fd from off to w (in the kernel where it can). */
int mf_atomic_copy_from(mf_atomic *w, int in_fd, uint64_t off, uint64_t len, mf_status *st);

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

/* ------------------------------------------------------------- readers */
/* A reader is the whole of a format: its name, how its bytes are recognised,
 * how it is opened and streamed, and the optional hooks through which the
 * operations above (lib/ops) learn what only the format knows. Nothing
 * above lib/formats names a format: it asks these hooks (through the
 * mf_model_* wrappers below, which also follow a directory's children). */
typedef struct mf_probe mf_probe; /* formats/formats.h */

enum { MF_PROBE_NO = 0, MF_PROBE_WEAK = 1, MF_PROBE_YES = 2 };

struct mf_rewrite;

/* What a loader would run besides unpickling, for scan's find_code hook. */
enum { MF_CODE_NOTE = 0, MF_CODE_UNKNOWN = 1, MF_CODE_DANGEROUS = 2 }; /* = mf_verdict */
typedef struct mf_code_finding {
    int severity;        /* MF_CODE_*: how bad loading it is */
    const char *opcode;  /* the op that runs it ("PyFunc"), or NULL */
    const char *message; /* what and why (valid during the call) */
} mf_code_finding;
typedef void (*mf_code_fn)(void *ctx, const mf_code_finding *f);

/* What a loader does with bytes it takes for its format, for scan's
 * pickle_payload hook: a finding to report, then where pickles run. */
enum {
    MF_PAYLOAD_NONE = 0,     /* nothing unpickled */
    MF_PAYLOAD_PICKLE = 1,   /* the loader unpickles from `at` */
    MF_PAYLOAD_POLYGLOT = 2, /* it does not, but another reader might: scanned quietly */
};
typedef struct mf_payload {
    int severity;      /* MF_CODE_* of the finding */
    char message[1024]; /* "": no finding */
    int run;           /* MF_PAYLOAD_* */
    uint64_t at;
} mf_payload;

/* scan's side of a member that a loader reads as pickles with raw parts
 * between them (the reader's walk_tar_member hook; torch's legacy tars). */
struct pk_obj;
struct pk_machine;
typedef struct mf_pickle_walk {
    void *ctx;
    /* Runs the pickle at byte `at` of the member on the scanner's machine
     * (every global it names is judged): 0 with *value (valid until the
     * next run) and *end after it; -1 with *why (the rule it breaks) and
     * *end where it stopped. */
    int (*run)(void *ctx, uint64_t at, const struct pk_obj **value, uint64_t *end,
               const char **why);
    /* A finding (MF_CODE_* severity) at byte `at` of the member. */
    void (*finding)(void *ctx, int severity, uint64_t at, const char *msg);
    /* The loader reads no further: what follows `at` is scanned quietly. */
    void (*rest)(void *ctx, uint64_t at);
} mf_pickle_walk;

typedef struct mf_reader {
    mf_format format;
    const char *name; /* mf_format_name: "safetensors", "pytorch-zip", ... */
    /* The format holds only numbers and names: no loader of it runs code
     * (the scan verdict on open is then not worked out). */
    bool data_only;
    /* Its metadata may carry chat templates (tokenizer.chat_template and
     * tokenizer.chat_template.NAME: GGUF), which Python consumers render
     * with Jinja2: scan and mf_open's verdict judge them (ops/scan_template.c)
     * even when the format is data_only. */
    bool meta_templates;
    /* Endings such as ".pt" (NULL-ended): when the bytes match no probe,
     * the reader a file's name suggests explains best what is wrong. */
    const char *const *extensions;

    /* Detection (formats/detect.c asks every reader, in registry order;
     * each returns MF_PROBE_YES, MF_PROBE_WEAK (taken only when no reader
     * says YES) or MF_PROBE_NO, and fills the detection through
     * mf_probe_found). Each is optional. */
    int (*probe)(mf_probe *p);     /* a file's bytes (not a zip archive) */
    int (*probe_zip)(mf_probe *p); /* a zip archive: p->zip is its directory */
    int (*probe_dir)(mf_probe *p); /* a directory */

    /* Fills m (files, meta, tensors). flags: MF_OPEN_*. */
    int (*open)(mf_model *m, const char *path, unsigned flags, mf_status *st);
    /* Optional: canonical bytes of a tensor that is not plainly mapped. */
    int (*stream)(const mf_model *m, const mf_tensor *t, mf_sink_fn sink,
                  void *ctx, mf_status *st);
    /* Optional: frees m->priv. */
    void (*close)(mf_model *m);

    /* ---- optional hooks for the operations (see the wrappers below) */
    /* The state-dict unwrap rule: is the dotted `path` a mapping of the
     * file's object tree that holds tensors (a checkpoint's "state_dict")? */
    bool (*is_mapping)(const mf_model *m, const char *path);
    /* Packed tensors (MLX-style weight + scales + biases): a model whose
     * table is the logical one, dequantized to `out` (MF_DTYPE_INVALID:
     * the format's own float type). *view = NULL when m has none. */
    int (*logical_view)(const mf_model *m, mf_dtype out, mf_model **view,
                        mf_status *st);
    /* The computation graph as text (inspect --graph). */
    int (*print_graph)(const mf_model *m, FILE *out, mf_status *st);
    /* scan: the code loading the model runs besides pickles (Keras Lambda
     * layers, TensorFlow ops that run code or touch files), each handed to
     * fn; -1 with st (saying what could not be read) when the part that
     * would hold it cannot be read. */
    int (*find_code)(const mf_model *m, mf_code_fn fn, void *ctx, mf_status *st);
    /* scan, when the file cannot be opened to ask find_code: may its own
     * loader still read code out of these bytes? */
    bool (*may_hold_code)(const uint8_t *b, uint64_t n);
    /* scan, over any bytes (archive members too): 0 when the loader would
     * not take them for this format (its own test: np.load's magic); else
     * 1 with *out saying what it does with them (np.load of an object
     * array unpickles its data). */
    int (*pickle_payload)(const uint8_t *b, uint64_t n, const char *file, mf_payload *out);
    /* scan of a file by its place: code that loading the directory around
     * it runs (transformers' auto_map remote code), each finding to fn. */
    void (*code_around)(const char *path, mf_code_fn fn, void *ctx);
    /* scan, when a buffer's first pickle is `first`: does this format's
     * loader read the buffer as a stream that starts with it (torch's
     * legacy magic number)? 0: no; 1: its pickles were run on pm (the
     * scanner judges every global) and *end is where the loader stops
     * reading; -1 with st when the stream breaks a rule. */
    int (*pickle_stream)(const struct pk_obj *first, struct pk_machine *pm, const uint8_t *b,
                         uint64_t n, const char *file, uint64_t *end, mf_status *st);
    /* scan of a tar archive, for a format whose loader reads tars
     * (torch.load's legacy checkpoints): tar_loader names the loader
     * ("torch.load"), tar_members the members it opens by name (NULL-ended;
     * each the last of its name, links followed); walk_tar_member walks
     * one of them as the loader reads it, through w, and returns 1, or 0
     * when the loader reads that member as a plain pickle. */
    const char *tar_loader;
    const char *const *tar_members;
    int (*walk_tar_member)(const char *name, const uint8_t *b, uint64_t n,
                           const mf_pickle_walk *w);
    /* Optional (formats with a metadata header before raw tensor data):
     * writes rw->out as m's first file with metadata rw->meta and tensors
     * renamed, tensor bytes copied unchanged; checks the format's rules
     * (unless MF_EDIT_FORCE) before writing anything. */
    int (*rewrite)(const mf_model *m, const struct mf_rewrite *rw, mf_status *st);
    /* Optional: the type a metadata key must have (a new key set without a
     * TYPE: takes it); MF_V_NULL when the format does not say. */
    mf_vtype (*key_type)(const mf_model *m, const char *key);
    /* Optional: -1 with st when metadata value kv breaks the type rule the
     * format's main loader puts on its key (GGUF: what llama.cpp reads a
     * key as, the tokenizer arrays' element types); validate asks it of
     * every key. */
    int (*check_key)(const mf_model *m, const mf_kv *kv, mf_status *st);
} mf_reader;

/* What ops/edit.c asks of a reader's rewrite hook. */
typedef struct mf_rewrite {
    const char *out;             /* where to write (may be m's own file) */
    const mf_kv *meta;           /* the new metadata, in order */
    size_t n_meta;
    const char *const *rename_from, *const *rename_to;
    size_t n_rename;
    unsigned flags;              /* MF_EDIT_* */
    uint64_t *old_header_bytes, *new_header_bytes, *data_bytes; /* filled */
} mf_rewrite;

/* The hooks, for lib/ops: each follows a directory's children (tensor
 * owners) where the model's own reader has no answer. */
bool mf_model_is_mapping(const mf_model *m, const char *path);
/* *view = NULL (returns 0) when no tensor of m is packed. The view borrows
 * from m, which must stay open until mf_close(view). */
int mf_model_logical_view_as(const mf_model *m, mf_dtype out, mf_model **view,
                          mf_status *st);
/* Fails (MF_ERR_USAGE) for a model whose format has no graph. */
int mf_model_print_graph(const mf_model *m, FILE *out, mf_status *st);

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
/* Streams a mapped tensor (t->data set) honouring strides and byte order. */
/* The page-aligned span of a file mapping that t's elements reach (for
 * madvise); false when t->data is not inside one of m's file mappings. */
bool mf_tensor_mapped_span(const mf_model *m, const mf_tensor *t, uint8_t **lo, size_t *len);
int mf_stream_mapped(const mf_model *m, const mf_tensor *t, mf_sink_fn sink,
                     void *ctx, mf_status *st);
/* Drops a mapped tensor's pages from the process after direct reads of
 * t->data (the page cache keeps them); a no-op for unmapped tensors. */
void mf_tensor_release(const mf_model *m, const mf_tensor *t);

#endif /* MF_CORE_H */
