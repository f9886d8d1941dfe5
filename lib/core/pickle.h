/* pickle.h - a restricted pickle interpreter (protocols 0-5).
 *
 * Every opcode of Python's pickle (Lib/pickletools.py documents them all) is
 * carried out as a data operation on values that live in an arena. Nothing
 * is ever called: GLOBAL, STACK_GLOBAL, INST and EXT yield a *reference* to a
 * name; REDUCE / NEWOBJ / NEWOBJ_EX / INST / OBJ / BUILD on an allowlisted
 * name (torch's tensor and storage rebuilders, collections.OrderedDict,
 * NumPy's array reconstructors, ...) build the matching value, and on any
 * other name an opaque object that records the call, so the rest of the
 * stream can still be read. Every name reached is reported to a callback
 * with its byte offset and opcode, for the scanner.
 *
 * Work, object count, stack and memo are bounded by the input's size, so
 * DUP/memo expansion bombs stop with an error instead of exhausting memory
 * or time. */
#ifndef MF_PICKLE_H
#define MF_PICKLE_H
#include "core/core.h"

typedef enum pk_kind {
    PK_NONE, PK_BOOL, PK_INT, PK_BIGINT, PK_FLOAT, PK_STR, PK_BYTES,
    PK_TUPLE, PK_LIST, PK_DICT, PK_SET, PK_FROZENSET,
    PK_GLOBAL,  /* a reference to module.name, never resolved */
    PK_OBJECT,  /* opaque: a call, an instance or a persistent id */
    PK_TENSOR,  /* torch tensor: storage + offset + size + stride */
    PK_STORAGE, /* torch storage, from a persistent id */
    PK_NDARRAY, /* numpy array (numpy.core.multiarray._reconstruct + BUILD) */
    PK_NPDTYPE, /* numpy.dtype(...) */
} pk_kind;

/* What a name is to the scanner. */
typedef enum pk_class { PK_SAFE = 0, PK_UNKNOWN = 1, PK_DANGEROUS = 2 } pk_class;

/* Names the interpreter knows how to build (everything else is opaque). */
typedef enum pk_name_id {
    PKN_OTHER = 0,
    PKN_ORDERED_DICT, PKN_REBUILD_TENSOR, PKN_REBUILD_TENSOR_V2, PKN_REBUILD_TENSOR_V3,
    PKN_REBUILD_PARAMETER, PKN_REBUILD_PARAMETER_STATE, PKN_PARAMETER,
    PKN_REBUILD_FROM_TYPE_V2, PKN_REBUILD_DEVICE_FROM_CPU, PKN_TORCH_SIZE,
    PKN_STORAGE_CLASS, /* torch.FloatStorage, torch.UntypedStorage, ... */
    PKN_TORCH_DTYPE,   /* torch.float32, ... (values, not callables) */
    PKN_TORCH_DEVICE,
    PKN_SET, PKN_FROZENSET, PKN_BYTEARRAY, PKN_CODECS_ENCODE,
    PKN_NP_RECONSTRUCT, PKN_NP_NDARRAY, PKN_NP_DTYPE, PKN_NP_SCALAR,
    PKN_SAFE_OPAQUE, /* allowlisted, harmless, built as an opaque value */
} pk_name_id;

typedef struct pk_obj pk_obj;
typedef struct pk_index pk_index;

/* A name judged by how the pickle uses it (pickle_gate.c). */
typedef struct pk_gate pk_gate;

typedef struct pk_global {
    const char *module, *name; /* as written (NUL-terminated copies) */
    pk_name_id id;
    mf_dtype dtype;            /* storage classes and torch dtypes */
    pk_class cls;
    const char *reason;        /* why it is unknown/dangerous (static) */
    const pk_gate *gate;       /* gated: reported when the pickle ends */
    const char *gate_op;       /* the opcode that named it */
    unsigned char gate_use;    /* none yet / only allowed shapes / broken */
} pk_global;

struct pk_obj {
    pk_kind kind;
    uint64_t off; /* offset of the opcode that made it, in the pickle */
    union {
        bool b;
        int64_t i;
        double f;
        struct { const char *p; size_t n; } s; /* STR (UTF-8), BYTES, BIGINT (text) */
        struct {                                /* TUPLE LIST SET FROZENSET: n items; */
            pk_obj **v;                         /* DICT: n pairs, v[2k] key, v[2k+1] value */
            size_t n, cap;
            pk_index *ix;                       /* DICT key index, built when large */
            pk_obj *state;                      /* DICT: BUILD state (OrderedDict attrs) */
        } c;
        pk_global g;
        struct {
            pk_obj *callable; /* a GLOBAL (or anything called) */
            pk_obj *args, *kwargs, *state;
            pk_obj *list, *dict; /* APPENDed / SETITEMed into it */
            bool persistent;  /* a persistent id nobody resolved */
        } o;
        struct {
            pk_obj *storage;
            int64_t offset;   /* in elements */
            pk_obj *size, *stride; /* tuples of ints */
            mf_dtype dtype;   /* the storage's, or _rebuild_tensor_v3's */
        } t;
        struct {
            mf_dtype dtype;   /* U8 for untyped storages */
            const char *key, *location;
            uint64_t numel;   /* elements as declared by the persistent id */
            uint64_t view_offset; /* legacy storage views: elements into root */
            bool is_view;
        } st;
        struct {
            pk_obj *dtype;    /* PK_NPDTYPE */
            pk_obj *shape;    /* tuple */
            bool fortran, built;
            pk_obj *data;     /* BYTES (or a list for object arrays) */
        } nd;
        struct {
            const char *descr; /* "f4", "i8", "O", ... as given */
            char order;        /* '<', '>', '|', '=' */
        } nt;
    } u;
};

/* The singleton values (never allocated). */
extern pk_obj pk_none, pk_true, pk_false;

typedef struct pk_machine pk_machine;

/* Called for every name reference the stream makes (GLOBAL, STACK_GLOBAL,
 * INST, EXT*). opcode: "GLOBAL", ...; off: offset of the opcode, counted
 * from the machine's origin (pk_opts.origin / pk_set_member). */
typedef void (*pk_global_fn)(void *ctx, const pk_global *g, const char *opcode,
                             uint64_t off);
/* Turns a persistent id into a value (torch: a storage). Returns NULL with
 * st filled to stop, or a value. */
typedef pk_obj *(*pk_persistent_fn)(void *ctx, pk_machine *pm, pk_obj *pid, uint64_t off,
                                    mf_status *st);

/* Called for every call of a global (REDUCE, NEWOBJ, INST, OBJ) before
 * its value is built: the scanner looks into torch.storage._load_from_bytes
 * arguments this way. */
typedef void (*pk_call_fn)(void *ctx, const pk_global *callable, const pk_obj *args,
                           uint64_t off);

/* Called after each BUILD with the object built (joblib's NumpyUnpickler
 * reads an array's bytes, or a pickle of them, from the stream right
 * after the BUILD of its NumpyArrayWrapper): data[at..size) follows the
 * opcode; 0 with *skip, the bytes there that the loader reads itself (the
 * machine goes on after them), or -1 with st to stop. */
typedef int (*pk_build_fn)(void *ctx, pk_machine *pm, const pk_obj *inst, const uint8_t *data,
                           size_t at, size_t size, uint64_t *skip, mf_status *st);
/* Called when the stream leaves the canonical form (doc/scan.md "The
 * canonical form"): a step real writers never produce, or one the machine
 * does not model exactly (taken as done). The first such step of each
 * pickle is reported; off as for pk_global_fn, rule says which. */
typedef void (*pk_irregular_fn)(void *ctx, uint64_t off, const char *rule);

typedef struct pk_opts {
    const char *file;   /* for messages */
    const char *member; /* archive member, or NULL */
    uint64_t origin;    /* file offset of the pickle's first byte (0 if unknown) */
    pk_global_fn on_global;
    pk_persistent_fn persistent_load;
    pk_call_fn on_call;
    pk_irregular_fn on_irregular;
    void *ctx;
    pk_build_fn on_build; /* optional */
} pk_opts;

/* A machine owns an arena holding every value it made; values stay valid
 * until pk_free. One machine can run several pickles (legacy torch files). */
pk_machine *pk_new(const pk_opts *o);
void pk_free(pk_machine *pm);
mf_arena *pk_arena(pk_machine *pm);
void pk_set_member(pk_machine *pm, const char *member, uint64_t origin);
/* Where the caller's offsets start: the byte numbers in on_irregular's
 * rules are base + origin + the opcode's offset (the scanner's member
 * offsets). */
void pk_set_base(pk_machine *pm, uint64_t base);
void pk_set_persistent(pk_machine *pm, pk_persistent_fn fn, void *ctx);
/* Objects made so far (bounds walks over the values). */
uint64_t pk_objects(const pk_machine *pm);

/* Runs one pickle from data[0] to its STOP. *out gets the value, *used the
 * bytes consumed. The data must outlive the values (strings and bytes point
 * into it). On error, st says "FILE: byte N: [MEMBER: ]pickle: RULE" and
 * *used is the offset of the failing opcode; *ops_done tells how many
 * opcodes ran before it (0: not a pickle at all). */
int pk_load(pk_machine *pm, const uint8_t *data, size_t size, pk_obj **out, size_t *used,
            uint64_t *ops_done, mf_status *st);

/* After pk_load failed: true when it stopped at one of mfmt's limits (work,
 * object, stack or memo caps, memory) where CPython's unpickler could go
 * on; false when CPython fails at that opcode too. */
bool pk_stopped_by_limit(const pk_machine *pm);

/* After pk_load: did the pickle leave the canonical form (a step that
 * on_irregular reported)? */
bool pk_irregular(const pk_machine *pm);

/* After pk_load failed: true only when CPython's unpickler provably fails
 * at the same opcode without having reached anything that can run: every
 * opcode before it was canonical and modelled exactly, none of them named
 * a global or a persistent id, and the failure is one CPython's C
 * unpickler shares (an invalid opcode, truncated data, a stack, mark or
 * memo error on values of Python's own types) -- not a limit of mfmt's nor
 * a text argument mfmt parses more strictly than C's strtol /
 * PyLong_FromString. Only then are the bytes "not a pickle". */
bool pk_failure_proven(const pk_machine *pm);

/* Failures inside callbacks: "FILE: byte N: [MEMBER: ]pickle: ..." */
int pk_fail(pk_machine *pm, uint64_t off, mf_status *st, const char *fmt, ...)
    MF_PRINTF(4, 5);

/* ---- values */
pk_obj *pk_new_obj(pk_machine *pm, pk_kind k, uint64_t off);
bool pk_is_str(const pk_obj *o, const char *s);
/* The value as int64 (INT, BOOL); false otherwise. */
bool pk_as_int(const pk_obj *o, int64_t *v);
/* Dict lookup by string key; NULL when absent. */
pk_obj *pk_dict_get(const pk_obj *d, const char *key);
/* Python's str() of a simple key (str, int, bool, None, float, bytes),
 * in the arena; NULL for other kinds. */
char *pk_key_text(mf_arena *a, const pk_obj *k);
/* A NUL-terminated arena copy of a STR. */
char *pk_cstr(mf_arena *a, const pk_obj *s);

/* ---- names (pickle_names.c) */
/* Classifies module.name and fills id/dtype/cls/reason. */
void pk_classify(pk_global *g);
/* "torch.float32" -> MF_F32 etc.; MF_DTYPE_INVALID when not a dtype. */
mf_dtype pk_torch_dtype(const char *name);
/* numpy descr ("f4", "<i8", "b1") -> dtype; MF_DTYPE_INVALID otherwise. */
mf_dtype pk_numpy_dtype(const char *descr);

/* The magic number of torch's legacy format, as pk_load's BIGINT text. */
#define PK_TORCH_LEGACY_MAGIC "119547037146038801333356"

/* Does the first pickle of b evaluate to that magic number, however it is
 * spelled (LONG1, LONG4, text LONG, ...)? Reads at most a few hundred
 * bytes; for format detection. */
bool pk_starts_torch_legacy(const uint8_t *b, size_t n);
#endif
