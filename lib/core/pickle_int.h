/* pickle_int.h - internals shared by pickle.c (opcodes), pickle_obj.c
 * (values) and pickle_call.c (what allowlisted calls build). */
#ifndef MF_PICKLE_INT_H
#define MF_PICKLE_INT_H
#include "core/pickle.h"

typedef struct pk_memo_slot {
    int64_t key;
    pk_obj *v; /* NULL: empty */
} pk_memo_slot;

struct pk_machine {
    pk_opts o;
    pk_persistent_fn pload; /* o.persistent_load, or pk_set_persistent's */
    void *pctx;
    mf_arena *a;
    /* the pickle being run */
    const uint8_t *d;
    size_t n, pos;
    uint64_t op_off; /* offset of the current opcode */
    int proto;
    /* Python's stack and its marks (the C unpickler's "fence": an opcode
     * never reaches below the last mark) */
    pk_obj **stk;
    size_t sn, scap;
    size_t *marks;
    size_t mn, mcap;
    /* memo: open addressing on the integer key */
    pk_memo_slot *memo;
    size_t memo_n, memo_cap;
    /* budgets, cumulative over the pickles this machine runs */
    uint64_t input_bytes, work, max_work, objects, max_objects, items, max_items;
    int call_depth;
    /* the last failure is one of mfmt's limits, not one CPython shares */
    bool unsure;
    /* the canonical form (doc/scan.md): the open FRAME [frame_at: opcode,
     * frame_end: first byte after it; 0 when none]; irregular: a step
     * outside the form was seen (reported once per pickle); named: a
     * GLOBAL/INST/STACK_GLOBAL/EXT or persistent id ran; unproven: the
     * failure is a text argument mfmt reads more strictly than CPython */
    uint64_t frame_at, frame_end;
    bool irregular, named, unproven;
    uint64_t base; /* pk_set_base: added to the offsets in irregular rules */
    /* input counted into the budgets: [cnt_lo, cnt_hi) of the caller's buffer */
    const uint8_t *cnt_lo, *cnt_hi;
    /* gated names of the current pickle (pickle_gate.c), reported at its
     * end; call_newobj: the next pk_call is NEWOBJ's */
    pk_obj **gated;
    size_t gated_n, gated_cap;
    bool call_newobj;
};

/* A failure where CPython might go on (a limit of mfmt's). */
int pk_fail_unsure(pk_machine *pm, uint64_t off, mf_status *st, const char *fmt, ...)
    MF_PRINTF(4, 5);
int pk_oom(pk_machine *pm, mf_status *st);
/* A failure where CPython's parser may accept what mfmt's refuses. */
int pk_fail_unproven(pk_machine *pm, uint64_t off, mf_status *st, const char *fmt, ...)
    MF_PRINTF(4, 5);
/* A step outside the canonical form at off (in the pickle): recorded, and
 * reported to on_irregular once per pickle. */
void pk_note_irregular(pk_machine *pm, uint64_t off, const char *fmt, ...) MF_PRINTF(3, 4);

int pk_charge(pk_machine *pm, uint64_t units, mf_status *st);
/* A new value made by the current opcode; NULL with st filled. */
pk_obj *pk_make(pk_machine *pm, pk_kind k, mf_status *st);
int pk_reserve(pk_machine *pm, pk_obj *c, size_t need, mf_status *st);
int pk_append(pk_machine *pm, pk_obj *c, pk_obj *x, mf_status *st);
pk_obj *pk_seq(pk_machine *pm, pk_kind k, pk_obj **items, size_t n, mf_status *st);
int pk_dict_set(pk_machine *pm, pk_obj *d, pk_obj *key, pk_obj *value, mf_status *st);
int pk_set_add(pk_machine *pm, pk_obj *s, pk_obj *x, mf_status *st);
pk_obj *pk_long_from_bytes(pk_machine *pm, const uint8_t *b, size_t n, mf_status *st);

/* pickle_call.c: callable(*args, **kwargs) as REDUCE/NEWOBJ/INST/OBJ do;
 * allowlisted names build values, others an opaque record. */
pk_obj *pk_call(pk_machine *pm, pk_obj *callable, pk_obj *args, pk_obj *kwargs,
                mf_status *st);
/* BUILD: applies state to inst. */
int pk_build(pk_machine *pm, pk_obj *inst, pk_obj *state, mf_status *st);
/* A global reference for module.name (strings copied), classified and
 * reported to the on_global callback. */
pk_obj *pk_global_ref(pk_machine *pm, const char *module, size_t ml, const char *name,
                      size_t nl, const char *opcode, mf_status *st);
/* pickle_gate.c: names judged by the shape of their use. */
const pk_gate *pk_gate_of(const char *full);
int pk_gate_hold(pk_machine *pm, pk_obj *g, const char *opcode, mf_status *st);
void pk_gate_call(pk_machine *pm, pk_obj *fn, pk_obj *args, pk_obj *kwargs);
void pk_gate_build(pk_machine *pm, pk_obj *inst, pk_obj *state);
/* Reports each held name with its verdict (pk_load's end). */
void pk_gate_flush(pk_machine *pm);
/* Reports a mutation (BUILD, APPEND, SETITEM...) of a global itself. */
void pk_report_mutation(pk_machine *pm, const pk_obj *g, const char *opcode);
#endif
