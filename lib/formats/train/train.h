/* train.h - what the training-checkpoint readers (DeepSpeed ZeRO, torch
 * distributed checkpoints, Megatron-LM) share: the torch.save shards they
 * open (as the PyTorch zip reader reads them, every pickle through the
 * restricted machine), and the logical tensors they list, whose bytes are
 * gathered from pieces of those shards when streamed. doc/training.md
 * describes each layout and its rules. */
#ifndef MF_TRAIN_H
#define MF_TRAIN_H
#include "formats/formats.h"
#include "formats/pickle/pytorch.h"

/* A contiguous run of a shard tensor's elements: n elements from `first`. */
typedef struct tr_piece {
    const mf_tensor *src;     /* a tensor of one of the shards (tr_state.shards) */
    const mf_model *shard;
    uint64_t first, n;
} tr_piece;

/* A block of the logical tensor, in C order at `off` with `size`, whose
 * elements are the source's contiguous run (size's product elements). */
typedef struct tr_block {
    tr_piece from;
    int64_t off[MF_MAX_DIMS], size[MF_MAX_DIMS];
} tr_block;

/* t->priv of a logical tensor. */
typedef struct tr_tensor {
    mf_dtype src_dtype;  /* the pieces' element type (t->dtype: F32 from BF16/F16 allowed) */
    tr_piece *pieces;    /* concatenated in order (flat partitions): streamed as they are */
    size_t n_pieces;
    tr_block *blocks;    /* placed (TP/DCP chunks): gathered in one buffer of the tensor */
    size_t n_blocks;
} tr_tensor;

/* The readers' m->priv: the shards they opened (closed with the model). */
typedef struct tr_state {
    mf_model **shards;
    size_t n_shards, cap_shards;
    void *reader;        /* the reader's own (arena) */
} tr_state;

tr_state *tr_state_of(mf_model *m);
/* Opens a torch.save zip file as a shard of m, with the PyTorch zip
 * reader (its errors name the file, byte and rule), and lists the file in
 * m->files (so no output overwrites it). */
mf_model *tr_open_torch(mf_model *m, const char *path, unsigned flags, mf_status *st);
/* The object tree of a shard opened by tr_open_torch. */
const pk_obj *tr_root(const mf_model *shard);
/* A shard tensor by its dotted path; NULL when absent. */
const mf_tensor *tr_find(const mf_model *shard, const char *path);
/* Adds a logical tensor (name copied) with shape and dtypes; priv zeroed. */
mf_tensor *tr_add(mf_model *m, const char *name, mf_dtype dt, mf_dtype src_dt, int ndim,
                  const int64_t *shape, mf_status *st);
/* Appends a piece / a block to a logical tensor's list (arena-backed). */
int tr_add_piece(mf_model *m, mf_tensor *t, const tr_piece *p, mf_status *st);
int tr_add_block(mf_model *m, mf_tensor *t, const tr_block *b, mf_status *st);
/* Checks that the pieces or blocks of t cover it exactly (no gap, no
 * overlap for blocks: the element count adds up and every block is inside). */
int tr_check_cover(const mf_model *m, const mf_tensor *t, mf_status *st);

/* The readers' stream and close hooks. */
int tr_stream(const mf_model *m, const mf_tensor *t, mf_sink_fn sink, void *ctx,
              mf_status *st);
void tr_close(mf_model *m);
/* The file_runs hook: a tensor of concatenated pieces, each a stored
 * member's run in a local file, as file runs (1 otherwise). */
int tr_file_runs(const mf_model *m, const mf_tensor *t, mf_file_run **runs, size_t *n,
                 mf_status *st);

/* Reads the torch.distributed.checkpoint in folder path into m (dcp.c):
 * a logical tensor per .metadata entry; inner (Megatron torch_dist): every
 * chunk a placed block, and the framework left for the caller to name.
 * tr_dcp_close frees what it keeps (and closes the shards). */
int tr_dcp_load(mf_model *m, const char *path, bool inner, mf_status *st);
void tr_dcp_close(mf_model *m);

/* ---- the pickled values the readers look into */
/* A dict's value by key (plain dict or OrderedDict); NULL when absent. */
const pk_obj *tr_get(const pk_obj *d, const char *key);
/* A field of an object rebuilt by NEWOBJ + BUILD (a dataclass, an
 * argparse.Namespace): its dict state, or the dict of a (dict, slots)
 * state; NULL when absent. */
const pk_obj *tr_field(const pk_obj *o, const char *key);
/* An int, a bool, or an int-valued enum (ZeroStageEnum(2): a call of a
 * class with one int argument); false otherwise. */
bool tr_int(const pk_obj *o, int64_t *v);
/* A shape: a torch.Size / tuple / list of non-negative ints. */
bool tr_shape(const pk_obj *o, int *ndim, int64_t *shape);
/* The items of a list or tuple (n = 0 and NULL for other kinds). */
pk_obj *const *tr_items(const pk_obj *o, size_t *n);
/* How many entries of a folder `match` accepts (0 when it cannot be listed). */
size_t tr_dir_count(const char *dir, bool (*match)(const char *name));
/* Reads a small text file (`latest`, `latest_checkpointed_iteration.txt`)
 * trimmed of white space into buf; false when absent or too long. */
bool tr_read_marker(const char *path, char *buf, size_t cap);
#endif
