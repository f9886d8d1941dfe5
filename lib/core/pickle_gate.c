/* pickle_gate.c - names that are judged by how the pickle uses them.
 *
 * Real training checkpoints pickle a few names that are not safe in
 * general: Python 3.11 pickles an Enum member as getattr(Class, 'name')
 * (Lib/enum.py Enum.__reduce_ex__ of 3.11.0-3.11.4; later versions write
 * Class(value)), and DeepSpeed's and torch.distributed.checkpoint's states
 * hold instances of their own plain classes. Such a "gated" name is
 * reported when the pickle ends: `safe` only when every use of it had one
 * of the shapes its writers produce (below) and it was used so at least
 * once; otherwise with its own verdict (getattr and torch.distributed stay
 * dangerous, DeepSpeed's classes unknown). The shapes:
 *
 *   getattr(E, "member")     E a gated Enum class, "member" one of its names
 *   E(value)                 value one of E's member values
 *   R.__new__(R) + BUILD     NEWOBJ with no arguments (copyreg.__newobj__ of
 *                            protocol 2+), then BUILD with a dict whose keys
 *                            are R's fields, or the tuple R.__getstate__
 *                            returns (TensorProperties)
 *
 * Any other call of a gated name, a gated name handed to a call or a BUILD
 * in another place (defaultdict(getattr), _rebuild_from_type_v2(R, ...)),
 * or a call of what a gated call returned, breaks the gate. Values built
 * so run nothing: getattr of an Enum member is a constant lookup, Enum(v)
 * a lookup by value, and R's instances are filled by __dict__.update (no
 * __setstate__) or by TensorProperties.__setstate__, which only assigns
 * its fields. */
#include "core/pickle_int.h"

#include <stdint.h>
#include <stdlib.h>

typedef enum gate_kind { GATE_GETATTR, GATE_ENUM, GATE_RECORD } gate_kind;

struct pk_gate {
    const char *name;      /* module.name as resolved (Python 3 spelling) */
    gate_kind kind;
    const char *const *words; /* ENUM: member names; RECORD: field names */
    const int64_t *values;    /* ENUM: member values (words[i] has values[i]) */
    size_t tuple_state;       /* RECORD: BUILD takes a tuple of this size (0: a dict) */
};

#define END NULL
/* deepspeed/runtime/zero/config.py (microsoft/DeepSpeed 38327e07f6cd) */
static const char *const zero_stage_names[] = {"disabled", "optimizer_states", "gradients",
                                               "weights", "max_stage", END};
static const int64_t zero_stage_values[] = {0, 1, 2, 3, 3};
/* torch/distributed/_shard/sharded_tensor/metadata.py (1.13) and
 * torch/distributed/checkpoint/metadata.py (2.x, _MEM_FORMAT_ENCODING) */
static const char *const mem_format_names[] = {"TORCH_CONTIGUOUS_FORMAT", "TORCH_CHANNELS_LAST",
                                               "TORCH_PRESERVE_FORMAT", END};
static const int64_t mem_format_values[] = {0, 1, 2};
/* deepspeed/runtime/fp16/loss_scaler.py: LossScalerBase.__init__ and
 * DynamicLossScaler.__init__ */
static const char *const loss_scaler_fields[] = {
    "cur_scale", "dynamic", "cur_iter", "last_overflow_iter", "scale_factor", "scale_window",
    "min_scale", "delayed_shift", "cur_hysteresis", "consecutive_hysteresis",
    "raise_error_at_min_scale", "dtype", END};
/* deepspeed/utils/tensor_fragment.py */
static const char *const fragment_fields[] = {"numel", "start", END};
/* torch.distributed.checkpoint's dataclasses (1.13: _shard/checkpoint/
 * metadata.py and filesystem.py; 2.x: checkpoint/metadata.py, filesystem.py) */
static const char *const chunk_fields[] = {"offsets", "sizes", END};
static const char *const tensor_md_fields[] = {"properties", "size", "chunks", END};
static const char *const no_fields[] = {END};
static const char *const metadata_fields[] = {"state_dict_metadata", "planner_data",
                                              "storage_data", "storage_meta", "version", END};
static const char *const index_fields[] = {"fqn", "offset", "index", END};
static const char *const storage_info_fields[] = {"relative_path", "offset", "length",
                                                  "transform_descriptors", END};
static const char *const storage_meta_fields[] = {"checkpoint_id", "save_id", "load_id",
                                                  "modules", END};

#define ENUM(n, w, v) {n, GATE_ENUM, w, v, 0}
#define RECORD(n, f) {n, GATE_RECORD, f, NULL, 0}
static const pk_gate gates[] = {
    {"builtins.getattr", GATE_GETATTR, NULL, NULL, 0},
    ENUM("deepspeed.runtime.zero.config.ZeroStageEnum", zero_stage_names, zero_stage_values),
    RECORD("deepspeed.runtime.fp16.loss_scaler.LossScaler", loss_scaler_fields),
    RECORD("deepspeed.runtime.fp16.loss_scaler.DynamicLossScaler", loss_scaler_fields),
    RECORD("deepspeed.utils.tensor_fragment.fragment_address", fragment_fields),
    /* torch 1.13 */
    ENUM("torch.distributed._shard.sharded_tensor.metadata.MEM_FORMAT_ENCODING",
         mem_format_names, mem_format_values),
    {"torch.distributed._shard.sharded_tensor.metadata.TensorProperties", GATE_RECORD, no_fields,
     NULL, 5},
    RECORD("torch.distributed._shard.checkpoint.metadata.Metadata", metadata_fields),
    RECORD("torch.distributed._shard.checkpoint.metadata.TensorStorageMetadata",
           tensor_md_fields),
    RECORD("torch.distributed._shard.checkpoint.metadata.ChunkStorageMetadata", chunk_fields),
    RECORD("torch.distributed._shard.checkpoint.metadata.BytesStorageMetadata", no_fields),
    RECORD("torch.distributed._shard.checkpoint.metadata.MetadataIndex", index_fields),
    RECORD("torch.distributed._shard.checkpoint.filesystem._StorageInfo", storage_info_fields),
    /* torch 2.x */
    ENUM("torch.distributed.checkpoint.metadata._MEM_FORMAT_ENCODING", mem_format_names,
         mem_format_values),
    {"torch.distributed.checkpoint.metadata.TensorProperties", GATE_RECORD, no_fields, NULL, 5},
    RECORD("torch.distributed.checkpoint.metadata.Metadata", metadata_fields),
    RECORD("torch.distributed.checkpoint.metadata.TensorStorageMetadata", tensor_md_fields),
    RECORD("torch.distributed.checkpoint.metadata.ChunkStorageMetadata", chunk_fields),
    RECORD("torch.distributed.checkpoint.metadata.BytesStorageMetadata", no_fields),
    RECORD("torch.distributed.checkpoint.metadata.MetadataIndex", index_fields),
    RECORD("torch.distributed.checkpoint.metadata.StorageMeta", storage_meta_fields),
    RECORD("torch.distributed.checkpoint.filesystem._StorageInfo", storage_info_fields),
};

const pk_gate *pk_gate_of(const char *full)
{
    for (size_t i = 0; i < sizeof(gates) / sizeof(gates[0]); i++)
        if (strcmp(full, gates[i].name) == 0)
            return &gates[i];
    return NULL;
}

/* ------------------------------------------------------------- uses */

enum { USE_NONE = 0, USE_OK = 1, USE_BROKEN = 2 };

static bool is_gated(const pk_obj *o)
{
    return o && o->kind == PK_GLOBAL && o->u.g.gate;
}

static void mark(pk_obj *g, bool ok)
{
    if (!is_gated(g))
        return;
    if (!ok)
        g->u.g.gate_use = USE_BROKEN;
    else if (g->u.g.gate_use == USE_NONE)
        g->u.g.gate_use = USE_OK;
}

static size_t word_index(const char *const *words, const pk_obj *s)
{
    for (size_t i = 0; words[i]; i++)
        if (pk_is_str(s, words[i]))
            return i;
    return SIZE_MAX;
}

static size_t nitems(const pk_obj *t)
{
    return t && t->kind == PK_TUPLE ? t->u.c.n : SIZE_MAX;
}

static bool enum_value_ok(const pk_gate *e, const pk_obj *v)
{
    int64_t x;
    if (!v || v->kind != PK_INT)
        return false;
    x = v->u.i;
    for (size_t i = 0; e->words[i]; i++)
        if (e->values[i] == x)
            return true;
    return false;
}

/* The value a call of a gated name made, or an instance of a gated record:
 * calling it is no shape any writer produces. */
static pk_obj *gated_origin(const pk_obj *o)
{
    if (o && o->kind == PK_OBJECT && is_gated(o->u.o.callable))
        return o->u.o.callable;
    return NULL;
}

void pk_gate_call(pk_machine *pm, pk_obj *fn, pk_obj *args, pk_obj *kwargs)
{
    bool newobj = pm->call_newobj;
    pm->call_newobj = false;
    size_t n = nitems(args);
    pk_obj *slot_ok = NULL; /* the one argument in its allowed place */
    if (is_gated(fn)) {
        const pk_gate *gt = fn->u.g.gate;
        bool ok = false;
        if (kwargs) {
            ok = false;
        } else if (gt->kind == GATE_GETATTR) {
            pk_obj *cls = n == 2 ? args->u.c.v[0] : NULL;
            ok = is_gated(cls) && cls->u.g.gate->kind == GATE_ENUM &&
                 word_index(cls->u.g.gate->words, args->u.c.v[1]) != SIZE_MAX;
            if (ok)
                slot_ok = cls;
        } else if (gt->kind == GATE_ENUM) {
            ok = !newobj && n == 1 && enum_value_ok(gt, args->u.c.v[0]);
        } else {
            ok = newobj && n == 0;
        }
        mark(fn, ok);
        if (slot_ok)
            mark(slot_ok, true);
    } else {
        mark(gated_origin(fn), false);
    }
    /* a gated name anywhere else in the call's arguments */
    for (size_t i = 0; n != SIZE_MAX && i < n; i++)
        if (args->u.c.v[i] != slot_ok)
            mark(args->u.c.v[i], false);
    if (args && args->kind == PK_LIST)
        for (size_t i = 0; i < args->u.c.n; i++)
            mark(args->u.c.v[i], false);
    if (kwargs && kwargs->kind == PK_DICT)
        for (size_t i = 0; i < 2 * kwargs->u.c.n; i++)
            mark(kwargs->u.c.v[i], false);
}

static bool record_state_ok(const pk_gate *gt, const pk_obj *state)
{
    if (gt->tuple_state)
        return nitems(state) == gt->tuple_state;
    if (!state || state->kind != PK_DICT)
        return false;
    for (size_t k = 0; k < state->u.c.n; k++)
        if (word_index(gt->words, state->u.c.v[2 * k]) == SIZE_MAX)
            return false;
    return true;
}

void pk_gate_build(pk_machine *pm, pk_obj *inst, pk_obj *state)
{
    (void)pm;
    pk_obj *g = gated_origin(inst);
    if (g)
        mark(g, g->u.g.gate->kind == GATE_RECORD && record_state_ok(g->u.g.gate, state));
    /* a gated name as (a field of) the state */
    mark(state, false);
    if (state && (state->kind == PK_TUPLE || state->kind == PK_LIST))
        for (size_t i = 0; i < state->u.c.n; i++)
            mark(state->u.c.v[i], false);
    if (state && state->kind == PK_DICT)
        for (size_t i = 0; i < 2 * state->u.c.n; i++)
            mark(state->u.c.v[i], false);
}

int pk_gate_hold(pk_machine *pm, pk_obj *g, const char *opcode, mf_status *st)
{
    if (pm->gated_n == pm->gated_cap) {
        size_t cap = pm->gated_cap ? 2 * pm->gated_cap : 16;
        pk_obj **v = realloc(pm->gated, cap * sizeof(*v));
        if (!v)
            return pk_oom(pm, st);
        pm->gated = v;
        pm->gated_cap = cap;
    }
    g->u.g.gate_op = opcode;
    g->u.g.gate_use = USE_NONE;
    pm->gated[pm->gated_n++] = g;
    return 0;
}

void pk_gate_flush(pk_machine *pm)
{
    for (size_t i = 0; i < pm->gated_n; i++) {
        pk_obj *o = pm->gated[i];
        pk_global g = o->u.g;
        if (g.gate_use == USE_OK) {
            g.cls = PK_SAFE;
            g.reason = NULL;
        } else if (g.cls == PK_SAFE) {
            g.cls = PK_UNKNOWN;
        }
        if (g.gate_use != USE_OK && g.cls == PK_UNKNOWN)
            g.reason = "a name allowed only in the shapes its writers use (doc/scan.md "
                       "\"Gated names\"), not so here";
        if (pm->o.on_global)
            pm->o.on_global(pm->o.ctx, &g, g.gate_op, pm->o.origin + o->off);
    }
    pm->gated_n = 0;
}
