/* pytorch.h - internals shared by the PyTorch readers (zip, legacy,
 * sharded index), the plain pickle reader and the scanner. */
#ifndef MF_PYTORCH_H
#define MF_PYTORCH_H
#include "core/zip.h"
#include "core/pickle.h"

/* Where a storage's bytes are. */
typedef struct pt_storage_ref {
    const uint8_t *data; /* first byte in the mapping; NULL when it must be streamed */
    uint64_t nbytes;     /* bytes the storage holds (as declared, checked against the file) */
    uint32_t file;       /* index into m->files */
    uint64_t file_offset;
    bool big_endian;
    void *priv;          /* reader's, for streamed storages (becomes t->priv) */
} pt_storage_ref;

/* Resolves a PK_STORAGE; returns -1 with st filled when the file is broken. */
typedef int (*pt_resolve_fn)(void *ctx, const pk_obj *storage, pt_storage_ref *out,
                             mf_status *st);

/* Where the bytes of a tensor that is not mapped come from (t->priv):
 * memory outside the mapping (numpy data decoded from a protocol-2 string,
 * an inflated data.pkl), or a deflated zip record. t->offset - base is
 * where the tensor starts in it. */
typedef struct pt_stream_src {
    enum { PT_SRC_MEM, PT_SRC_ZIP } kind;
    const uint8_t *p; /* MEM */
    uint64_t n;
    const mf_zip_entry *e; /* ZIP */
    uint64_t base;    /* the offset t->offset counts from */
} pt_stream_src;

typedef struct pt_model_info pt_model_info;

typedef struct pt_tree_opts {
    const char *file;        /* for messages */
    pt_resolve_fn resolve;   /* NULL: tensors of persistent storages are not listed */
    void *ctx;
    uint32_t file_index;     /* the file the pickle itself is in (numpy arrays) */
    const uint8_t *pickle_base; /* where pickle bytes are mapped, if they are */
    uint64_t pickle_size, pickle_offset; /* mapping span and its file offset */
    uint64_t objects;        /* objects the machine made (bounds the walk) */
    pt_model_info *info;     /* where mapping paths are recorded (may be NULL) */
} pt_tree_opts;

/* Lists every tensor of the object tree under its dotted path (dict keys
 * and list indices joined with '.') and every scalar value as metadata.
 * Also records, in the model, the paths of every mapping (for convert's
 * state_dict unwrapping). */
int pt_tree_collect(mf_model *m, const pk_obj *root, const pt_tree_opts *o, mf_status *st);

/* Paths of the mappings of a checkpoint's object tree, kept by the model
 * (m->priv of the PyTorch and pickle readers). */
struct pt_model_info {
    char **mappings; /* dotted paths of every dict that holds tensors */
    size_t n_mappings, cap_mappings;
    pk_machine *pm;  /* values the tensors may still point into */
    const pk_obj *root; /* the object tree (zip reader), owned by pm */
    void *buf;       /* malloc'd pickle bytes (an inflated data.pkl) */
    mf_zip zip;      /* the archive, for streamed (deflated) storages */
};

pt_model_info *pt_info(mf_model *m); /* creates it in m->priv on first use */
void pt_close(mf_model *m);          /* the readers' close callback */

/* The readers' is_mapping hook: true when the model was opened by a
 * PyTorch/pickle reader and `path` is a mapping that holds tensors (e.g.
 * "state_dict" of a Lightning .ckpt). Above lib/formats: mf_model_is_mapping. */
bool mf_pytorch_is_mapping(const mf_model *m, const char *path);

/* The readers' `stream` callback: mapped tensors as usual, the others
 * from their pt_stream_src (zip records through m->priv's archive). */
int pt_stream(const mf_model *m, const mf_tensor *t, mf_sink_fn sink, void *ctx,
              mf_status *st);

/* Names off the allowlist a reader met (for a note pointing to `scan`):
 * pk_opts.on_global = pt_on_global with ctx = a pt_flagged. */
typedef struct pt_flagged {
    size_t n;
    char names[512];
} pt_flagged;
void pt_on_global(void *ctx, const pk_global *g, const char *opcode, uint64_t off);
void pt_note_flagged(mf_model *m, const pt_flagged *f, const char *what);

/* The legacy torch.save stream (torch < 1.6, _use_new_zipfile_serialization=
 * False): five pickles, then the raw storages in the order of the keys. */
typedef struct pt_legacy_storage {
    const char *key;
    mf_dtype dtype;
    uint64_t numel;       /* elements, as the persistent ids declare */
    uint64_t data_offset; /* after its 8-byte count; 0 until located */
    bool located;
} pt_legacy_storage;

typedef struct pt_legacy {
    pk_obj *magic, *protocol, *sys_info, *root, *keys;
    uint64_t pickle_end[5];   /* where each pickle stops */
    pt_legacy_storage *storages;
    size_t n_storages;
    uint64_t data_end;        /* end of the last storage */
    bool big_endian;
} pt_legacy;

/* Runs the five pickles on `pm` (its on_global callback sees every name)
 * and locates each storage. Returns -1 with st on the first error; what was
 * read before stays in *out. `first_ok` says the first pickle was the magic
 * number (false: not a legacy file). */
int pt_legacy_parse(pk_machine *pm, const uint8_t *b, uint64_t size, const char *file,
                    pt_legacy *out, bool *first_ok, mf_status *st);
bool pt_is_legacy_magic(const pk_obj *o);

/* scan's hooks for legacy tars (pytorch_tar.c): the members torch.load
 * opens, and the walk of 'storages' and 'tensors' as it reads them. */
extern const char *const mf_pt_tar_members[];
int mf_pt_tar_walk_member(const char *name, const uint8_t *b, uint64_t n,
                          const mf_pickle_walk *w);

/* scan's pickle_stream hook (pytorch_legacy.c): a buffer whose first
 * pickle is torch's legacy magic number is read as torch reads it. */
int mf_pt_legacy_stream(const pk_obj *first, pk_machine *pm, const uint8_t *b, uint64_t n,
                        const char *file, uint64_t *end, mf_status *st);

/* One tensor torch.save'd into bytes [b, b+n) of a mapped file, at file
 * offset `origin` (torch.distributed.checkpoint writes each chunk so, at an
 * offset of a .distcp file): its type, shape and elements (contiguous,
 * inside the mapping). Every pickle through the restricted machine. */
typedef struct pt_lone_tensor {
    mf_dtype dtype;
    int ndim;
    int64_t shape[MF_MAX_DIMS];
    const uint8_t *data;
    uint64_t nbytes;
    bool big_endian;
} pt_lone_tensor;
int pt_zip_lone_tensor(const uint8_t *b, uint64_t n, const char *file, uint64_t origin,
                       pt_lone_tensor *out, mf_status *st);
#endif
