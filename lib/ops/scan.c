/* scan.c - pickle safety, without running anything.
 *
 * Every place a loader may unpickle is visited, whatever the file is named:
 *  - the file itself from byte 0 (pickle.load and torch.load's legacy path
 *    do that), whatever other format's signature it also carries, then
 *    every pickle that follows a STOP, to the end;
 *  - torch's legacy stream: all five pickles, the magic number judged by
 *    value, not spelling;
 *  - zip archives as torch.load reads them (file starts with PK\3\4,
 *    members found through the central directory, flag bits and CRCs
 *    ignored) and zip archives appended to other data (zipfile finds them):
 *    every member that is named or looks like a pickle, nested archives
 *    and .npy members; discrepancies between local and central headers,
 *    encryption flags and CRC mismatches are reported;
 *  - tar archives (torch's oldest format), .npy arrays whose dtype holds an
 *    object anywhere, or whose header mfmt cannot read exactly as numpy
 *    (np.load with allow_pickle=True unpickles them),
 *    torch.storage._load_from_bytes payloads (torch.load inside the pickle);
 *  - Keras architectures (Lambda layers, objects naming dangerous modules)
 *    and TensorFlow graphs (file and code ops).
 * A pickle that stops with an error still counts what it reached first,
 * and the error itself makes the file `unknown`; one that stops at one of
 * mfmt's own limits is always `unknown`. doc/scan.md has the rules. */
#include "formats/formats.h"
#include "ops/scan.h"
#include "ops/scan_joblib.h"
#include "ops/scan_template.h"

#include "core/crc32.h"
#include "core/pickle.h"
#include "core/remote.h"
#include "core/tar.h"
#include "core/zip.h"

#include <dirent.h>
#include <strings.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define MAX_DEPTH 4           /* archives inside archives */
#define MAX_FINDINGS 1000
#define MAX_GLOBALS 4096
#define MAX_INSPECT (256u << 20) /* a deflated member inflated for inspection */
#define CRC_CHUNK ((size_t)8 << 20) /* stored members are CRC-checked (and dropped) so much at a time */

typedef struct scanner {
    mf_scan_report *r;
    const char *path;
    MF_VEC(mf_finding) f;
    MF_VEC(mf_scan_global) g;
    const char *member;  /* current member label; "" at the top */
    const uint8_t *buf;  /* current buffer */
    int64_t file_base;   /* file offset of buf[0]; -1 when not in the file as is */
    uint64_t origin;     /* offset in buf of the pickle being run */
    int depth;
    uint64_t inflated;   /* bytes inflated so far (bounded by MAX_INSPECT x 4) */
    bool notes_after_stop;
    bool joblib_only; /* bytes only joblib.load reads (a decompressed stream) */
    bool oom; /* an allocation failed: the report would be short, the scan fails */
    /* the local file's private read-only mapping, whose pages may be
     * dropped once read (NULL: a caller's buffer or a remote file) */
    const uint8_t *map_lo, *map_hi;
} scanner;

/* Drops the pages of [p, p + n) from this process once they are read,
 * when they belong to the file's mapping (the page cache keeps them; the
 * next access reads them again): scanning a shard of any size then keeps
 * a bounded part of it resident. */
static void drop_pages(const scanner *sc, const uint8_t *p, uint64_t n)
{
    if (!sc->map_lo || p < sc->map_lo || p >= sc->map_hi || n > (uint64_t)(sc->map_hi - p))
        return;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t a = ((uintptr_t)p + page - 1) & ~(page - 1), b = ((uintptr_t)p + n) & ~(page - 1);
    if (b > a)
        madvise((void *)a, b - a, MADV_DONTNEED);
}

const char *mf_verdict_name(mf_verdict v)
{
    return v == MF_VERDICT_DANGEROUS ? "dangerous" : v == MF_VERDICT_UNKNOWN ? "unknown" : "safe";
}

/* ------------------------------------------------------------ findings */

static void add_finding(scanner *sc, mf_verdict sev, int64_t off, const char *opcode,
                        const char *global, const char *fmt, ...) MF_PRINTF(6, 7);
static void add_finding(scanner *sc, mf_verdict sev, int64_t off, const char *opcode,
                        const char *global, const char *fmt, ...)
{
    if (sev > sc->r->verdict)
        sc->r->verdict = sev;
    if (sc->f.n >= MAX_FINDINGS) {
        sc->r->dropped_findings++;
        return;
    }
    mf_arena *a = sc->r->arena;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    mf_finding x = {
        .severity = sev,
        .member = mf_arena_strdup(a, sc->member),
        .offset = off,
        .file_offset = off >= 0 && sc->file_base >= 0 ? sc->file_base + off : -1,
        .opcode = opcode ? mf_arena_strdup(a, opcode) : NULL,
        .global = global ? mf_arena_strdup(a, global) : NULL,
        .message = mf_arena_strdup(a, msg),
    };
    if (!x.member || !x.message || (opcode && !x.opcode) || (global && !x.global) ||
        MF_VEC_PUSH(sc->f, x))
        sc->oom = true;
}

/* Clears a status a step of the scan used, noting when it ran out of memory. */
static void scan_status_clear(scanner *sc, mf_status *st)
{
    if (st->code == MF_ERR_NOMEM)
        sc->oom = true;
    mf_status_clear(st);
}

static void add_global(scanner *sc, const char *name, mf_verdict cls)
{
    for (size_t i = 0; i < sc->g.n; i++)
        if (strcmp(sc->g.v[i].name, name) == 0) {
            if (cls > sc->g.v[i].cls)
                sc->g.v[i].cls = cls;
            return;
        }
    if (sc->g.n >= MAX_GLOBALS)
        return;
    mf_scan_global x = {mf_arena_strdup(sc->r->arena, name), cls};
    if (!x.name || MF_VEC_PUSH(sc->g, x))
        sc->oom = true;
}

static void on_global(void *ctx, const pk_global *g, const char *opcode, uint64_t off)
{
    scanner *sc = ctx;
    char name[600];
    snprintf(name, sizeof(name), "%s.%s", g->module, g->name);
    mf_verdict cls = (mf_verdict)g->cls;
    add_global(sc, name, cls);
    if (cls != MF_VERDICT_SAFE)
        add_finding(sc, cls, (int64_t)(sc->origin + off), opcode, name, "%s", g->reason);
}

/* A step outside the canonical form (doc/scan.md): the pickle may read
 * otherwise in some loader, so it is never vouched for. */
static void on_irregular(void *ctx, uint64_t off, const char *rule)
{
    scanner *sc = ctx;
    add_finding(sc, MF_VERDICT_UNKNOWN, (int64_t)(sc->origin + off), NULL, NULL, "%s", rule);
}

static void scan_buffer(scanner *sc, const uint8_t *b, uint64_t n);

static char *join_label(scanner *sc, const char *inner)
{
    if (!sc->member[0])
        return mf_arena_strdup(sc->r->arena, inner);
    return mf_arena_printf(sc->r->arena, "%s!%s", sc->member, inner);
}

/* Entering bytes inside the current buffer (a member, a payload): the
 * scanner's place is saved, then set for them (file_base -1: not where
 * they lie in the file); leave_inner puts it back. */
static scanner enter_inner(scanner *sc, int64_t file_base)
{
    scanner saved = *sc;
    sc->file_base = file_base;
    sc->depth++;
    sc->notes_after_stop = false;
    return saved;
}

static void leave_inner(scanner *sc, const scanner *saved)
{
    sc->member = saved->member;
    sc->buf = saved->buf;
    sc->file_base = saved->file_base;
    sc->origin = saved->origin;
    sc->depth = saved->depth;
    sc->notes_after_stop = saved->notes_after_stop;
}

/* Scans bytes found inside the current buffer as a file of their own. */
static void scan_nested(scanner *sc, const char *label, const uint8_t *b, uint64_t n,
                        int64_t file_base)
{
    scanner saved = enter_inner(sc, file_base);
    sc->member = label ? label : "?";
    scan_buffer(sc, b, n);
    leave_inner(sc, &saved);
}

/* torch.storage._load_from_bytes(b): torch.load of bytes in the pickle. */
static void on_call(void *ctx, const pk_global *g, const pk_obj *args, uint64_t off)
{
    scanner *sc = ctx;
    if (strcmp(g->module, "torch.storage") != 0 || strcmp(g->name, "_load_from_bytes") != 0)
        return;
    const pk_obj *a0 = args && args->kind == PK_TUPLE && args->u.c.n ? args->u.c.v[0] : NULL;
    if (!a0 || a0->kind != PK_BYTES)
        return;
    const uint8_t *p = (const uint8_t *)a0->u.s.p;
    int64_t fb = sc->file_base >= 0 && sc->buf && p >= sc->buf ? sc->file_base + (p - sc->buf) : -1;
    char inner[64];
    snprintf(inner, sizeof(inner), "_load_from_bytes@%llu", (unsigned long long)(sc->origin + off));
    scan_nested(sc, join_label(sc, inner), p, a0->u.s.n, fb);
}

/* --------------------------------------------------------------- joblib */

/* After a BUILD: a joblib NumpyArrayWrapper's array follows in the stream
 * (ops/scan_joblib.c). joblib.load reads it and goes on after it; an
 * object array is a pickle of its own, run here. pickle.load of the same
 * file reads those bytes as opcodes instead: where they start with one,
 * the file is not vouched for (unknown) and the bytes are scanned. */
static int on_build(void *ctx, pk_machine *pm, const pk_obj *inst, const uint8_t *d, size_t at,
                    size_t n, uint64_t *skip, mf_status *st)
{
    scanner *sc = ctx;
    bool nested;
    const char *why = NULL;
    int r = mf_joblib_after_build(inst, d, at, n, skip, &nested, &why);
    if (r < 0)
        return pk_fail(pm, at, st, "%s", why);
    if (r == 0)
        return 0;
    if (nested) {
        pk_opts o = {.file = sc->path, .on_global = on_global, .on_call = on_call, .ctx = sc};
        pk_machine *sub = pk_new(&o);
        if (!sub)
            return mf_oom(st, sc->path); /* the scanner notes it from st */
        uint64_t origin = sc->origin;
        sc->origin = origin + at;
        pk_obj *v;
        size_t used = 0;
        uint64_t ops;
        int rc = pk_load(sub, d + at, n - at, &v, &used, &ops, st);
        sc->origin = origin;
        pk_free(sub);
        *skip = used;
        return rc;
    }
    if (*skip && !sc->joblib_only && mf_pickle_opcode_byte(d[at]))
        add_finding(sc, MF_VERDICT_UNKNOWN, (int64_t)(sc->origin + at), NULL, NULL,
                    "a joblib array's bytes start with a pickle opcode: pickle.load of this file "
                    "would run them, joblib.load reads them as data");
    else if (*skip && !sc->joblib_only)
        add_finding(sc, MF_VERDICT_SAFE, (int64_t)(sc->origin + at), NULL, NULL,
                    "joblib array data (%llu bytes): joblib.load reads it as an array; pickle.load "
                    "stops at its first byte, not an opcode, having reached only the names above",
                    (unsigned long long)*skip);
    return 0;
}

/* joblib.load decompresses a file it recognises by its first bytes, then
 * unpickles it: zlib and gzip are inflated and scanned; the others are
 * not vouched for. */
static void scan_compressed(scanner *sc, const uint8_t *b, uint64_t n)
{
    const char *kind = mf_joblib_compressor(b, n);
    if (!kind)
        return;
    uint8_t *out;
    size_t len;
    bool truncated;
    bool zl = !strcmp(kind, "zlib") || !strcmp(kind, "gzip");
    if (zl && mf_joblib_inflate(b, n, MAX_INSPECT, &out, &len, &truncated) == 0) {
        char label[32];
        snprintf(label, sizeof(label), "(%s)", kind);
        bool only = sc->joblib_only;
        sc->joblib_only = true;
        scan_nested(sc, join_label(sc, label), out, len, -1);
        sc->joblib_only = only;
        add_finding(sc, MF_VERDICT_SAFE, 0, NULL, NULL,
                    "%s data: inflated (%zu bytes) and scanned as joblib.load unpickles it", kind, len);
        if (truncated)
            add_finding(sc, MF_VERDICT_UNKNOWN, 0, NULL, NULL,
                        "the %s stream inflates past %u MiB: the rest is not inspected", kind,
                        (unsigned)(MAX_INSPECT >> 20));
        free(out);
    } else if (!zl) {
        add_finding(sc, MF_VERDICT_UNKNOWN, 0, NULL, NULL,
                    "starts as %s data: joblib.load decompresses it and unpickles the result, "
                    "which mfmt does not decompress", kind);
    }
}

/* -------------------------------------------------------------- pickles */

/* A machine reporting to the scanner. */
static pk_machine *scan_machine(scanner *sc)
{
    pk_opts o = {.file = sc->path, .on_global = on_global, .on_call = on_call,
                 .on_irregular = on_irregular, .on_build = on_build, .ctx = sc};
    pk_machine *pm = pk_new(&o);
    if (!pm)
        sc->oom = true;
    return pm;
}

static const char *rule_of(const char *msg)
{
    const char *p = strstr(msg, "pickle: ");
    return p ? p + 8 : msg;
}

typedef struct chain_result {
    bool complete; /* every pickle ran to STOP (trailing non-pickle bytes allowed) */
    uint64_t end;
} chain_result;

static int scan_stream(scanner *sc, const pk_obj *first, const uint8_t *b, uint64_t n,
                       uint64_t *pos);

/* Runs the pickles found from `start` on: the first, then every one that
 * follows a STOP, to the end of the data (each takes at least two bytes,
 * and the machine's budgets are counted over the whole buffer once).
 * `polyglot`: the data also looks like another format; a first pickle that
 * fails at once, as CPython's would, is then not worth a note. */
static chain_result scan_pickles_as(scanner *sc, const uint8_t *b, uint64_t n, uint64_t start,
                                    bool polyglot)
{
    chain_result res = {true, start};
    pk_machine *pm = scan_machine(sc);
    if (!pm) {
        res.complete = false;
        return res;
    }
    sc->buf = b;
    uint64_t pos = start;
    for (uint64_t count = 0; pos < n; count++) {
        mf_status st;
        mf_status_init(&st);
        pk_obj *v;
        size_t used;
        uint64_t ops = 0;
        sc->origin = pos;
        pk_set_base(pm, pos);
        int rc = pk_load(pm, b + pos, (size_t)(n - pos), &v, &used, &ops, &st);
        sc->r->n_pickles += ops > 0;
        if (rc == 0 && count == 0 && scan_stream(sc, v, b, n, &pos) > 0) {
            ; /* read as its format's loader reads it, to where that stops */
        } else if (rc == 0) {
            /* (a stream that breaks its loader's rules is reported; the
             * chain then goes on after its first pickle, so that no
             * pickle later in the bytes goes unseen) */
            pos += used;
        } else {
            /* No excuses (doc/scan.md): bytes are "not a pickle" only when
             * CPython's unpickler provably fails at the same opcode having
             * reached nothing that runs (pk_failure_proven); any other
             * failure is mfmt's, where a loader may go on. */
            bool limit = pk_stopped_by_limit(pm);
            bool proven = pk_failure_proven(pm);
            if (limit)
                add_finding(sc, MF_VERDICT_UNKNOWN, (int64_t)(pos + used), NULL, NULL,
                            "the pickle is stopped by a limit of mfmt's, where a loader would "
                            "go on: %s (what it would do next cannot be vouched for)",
                            rule_of(st.msg));
            else if (!proven)
                add_finding(sc, MF_VERDICT_UNKNOWN, (int64_t)(pos + used), NULL, NULL,
                            "the pickle stops with an error: %s (what a loader would do after "
                            "it cannot be vouched for)", rule_of(st.msg));
            else if (polyglot && count == 0)
                ; /* the other format's bytes: pickle.load fails there, as here */
            else if (count == 0 && pos == start)
                add_finding(sc, MF_VERDICT_SAFE, (int64_t)pos, NULL, NULL,
                            "not a pickle: CPython's unpickler fails at byte %llu too (%s), "
                            "before any name", (unsigned long long)(pos + used), rule_of(st.msg));
            else
                add_finding(sc, MF_VERDICT_SAFE, (int64_t)pos, NULL, NULL,
                            "%llu bytes after STOP are not a pickle (CPython's unpickler fails "
                            "at byte %llu, before any name: %s)", (unsigned long long)(n - pos),
                            (unsigned long long)(pos + used), rule_of(st.msg));
            res.complete = proven && !limit;
            scan_status_clear(sc, &st);
            break;
        }
        scan_status_clear(sc, &st);
        if (pos < n && !sc->notes_after_stop) {
            sc->notes_after_stop = true;
            add_finding(sc, MF_VERDICT_SAFE, (int64_t)pos, NULL, NULL,
                        "%llu bytes follow STOP: scanned for further pickles",
                        (unsigned long long)(n - pos));
        }
    }
    res.end = pos;
    pk_free(pm);
    return res;
}

static chain_result scan_pickles(scanner *sc, const uint8_t *b, uint64_t n, uint64_t start)
{
    return scan_pickles_as(sc, b, n, start, false);
}

/* A reader's scan hooks; none (every hook NULL) when it has no group. */
static const mf_scan_hooks *hooks_of(const mf_reader *r)
{
    static const mf_scan_hooks none;
    return r->scan ? r->scan : &none;
}

/* A stream a format's loader reads from this first pickle on (the
 * readers' pickle_stream hook: torch's legacy format, five pickles then
 * the storages): its pickles are run. 1: read, *pos moves to where the
 * loader stops; -1: the stream breaks the loader's rules (reported,
 * *pos unchanged); 0: no loader reads such a stream. */
static int scan_stream(scanner *sc, const pk_obj *first, const uint8_t *b, uint64_t n,
                       uint64_t *pos)
{
    const mf_reader *r;
    for (size_t i = 0; (r = mf_reader_at(i)) != NULL; i++) {
        if (!hooks_of(r)->pickle_stream)
            continue;
        pk_machine *pm = scan_machine(sc);
        if (!pm)
            return -1;
        mf_status st;
        mf_status_init(&st);
        uint64_t start = *pos, end = n - start;
        sc->origin = start;
        pk_set_base(pm, start);
        int rc = hooks_of(r)->pickle_stream(first, pm, b + start, n - start, sc->path, &end, &st);
        if (rc != 0)
            sc->r->n_pickles += 4;
        if (rc < 0)
            add_finding(sc, MF_VERDICT_UNKNOWN, -1, NULL, NULL, "%s", st.msg);
        if (rc > 0)
            *pos = start + end;
        scan_status_clear(sc, &st);
        pk_free(pm);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* Pickle bytes in a member that is not named as one (a storage record that
 * happens to start like a pickle): only a complete pickle, or a dangerous
 * name, counts. An EXT opcode is not one here, complete or not: it names
 * nothing in the file (pickle.py load_ext raises "unregistered extension
 * code" unless the loading program registered the code with
 * copyreg.add_extension), torch never unpickles a storage record
 * (check_member_crc), and random tensor bytes hit 0x82-0x84 after a
 * pickle-like first byte often enough (a Megatron test checkpoint's fp32
 * storage did, its chain even ending in a STOP byte). */
static chain_result scan_quiet_pickles(scanner *sc, const uint8_t *b, uint64_t n)
{
    size_t f0 = sc->f.n, g0 = sc->g.n;
    mf_verdict v0 = sc->r->verdict;
    chain_result res = scan_pickles(sc, b, n, 0);
    size_t k = f0;
    mf_verdict v = v0;
    for (size_t i = f0; i < sc->f.n; i++) {
        const mf_finding *f = &sc->f.v[i];
        bool ext = f->global && strncmp(f->global, "copyreg._extension_registry.", 28) == 0;
        if (ext || (!res.complete && f->severity != MF_VERDICT_DANGEROUS))
            continue;
        if (f->severity > v)
            v = f->severity;
        sc->f.v[k++] = *f;
    }
    sc->f.n = k;
    if (!res.complete) { /* the names of the dropped findings go too */
        sc->g.n = g0;
        for (size_t i = f0; i < k; i++)
            add_global(sc, sc->f.v[i].global, MF_VERDICT_DANGEROUS);
    }
    sc->r->verdict = v;
    return res;
}

/* ------------------------------------------------- pickles in payloads */

/* Bytes a format's loader takes whose data it may unpickle (the readers'
 * pickle_payload hook: np.load of an object array). False when no such
 * loader takes them. */
static bool scan_payload(scanner *sc, const uint8_t *b, uint64_t n)
{
    const mf_reader *r;
    for (size_t i = 0; (r = mf_reader_at(i)) != NULL; i++) {
        mf_payload pl = {0};
        int taken = hooks_of(r)->pickle_payload ? hooks_of(r)->pickle_payload(b, n, sc->path, &pl) : 0;
        if (taken < 0)
            sc->oom = true;
        if (taken <= 0)
            continue;
        if (pl.message[0])
            add_finding(sc, (mf_verdict)pl.severity, 0, NULL, NULL, "%s", pl.message);
        if (pl.run == MF_PAYLOAD_PICKLE)
            scan_pickles(sc, b, n, pl.at);
        else if (pl.run == MF_PAYLOAD_POLYGLOT)
            scan_pickles_as(sc, b, n, pl.at, true);
        return true;
    }
    return false;
}

/* ----------------------------------------------------------------- tar */

/* The scanner's side of a reader's walk of a tar member (mf_pickle_walk). */
typedef struct member_walk {
    scanner *sc;
    pk_machine *pm;
    const uint8_t *b;
    uint64_t n;
} member_walk;

static int walk_run(void *ctx, uint64_t at, const pk_obj **value, uint64_t *end, const char **why)
{
    member_walk *mw = ctx;
    scanner *sc = mw->sc;
    mf_status st;
    mf_status_init(&st);
    size_t used = 0;
    uint64_t ops = 0;
    pk_obj *v = NULL;
    sc->origin = at;
    pk_set_base(mw->pm, at);
    int rc = pk_load(mw->pm, mw->b + at, (size_t)(mw->n - at), &v, &used, &ops, &st);
    sc->r->n_pickles += ops > 0;
    *end = at + used;
    *value = v;
    if (rc) /* the rule outlives st: the scanner's arena keeps it */
        *why = mf_arena_strdup(sc->r->arena, rule_of(st.msg));
    if (rc && !*why) {
        *why = "out of memory";
        sc->oom = true;
    }
    scan_status_clear(sc, &st);
    return rc ? -1 : 0;
}

static void walk_finding(void *ctx, int severity, uint64_t at, const char *msg)
{
    member_walk *mw = ctx;
    add_finding(mw->sc, (mf_verdict)severity, (int64_t)at, NULL, NULL, "%s", msg);
}

static void walk_rest(void *ctx, uint64_t at)
{
    member_walk *mw = ctx;
    scan_quiet_pickles(mw->sc, mw->b + at, mw->n - at); /* a pickle there is noted */
}

/* A member the loader reads its own way (the reader's walk_tar_member
 * hook); false when it reads it as any other member. */
static bool walk_member(scanner *sc, const mf_scan_hooks *r, const char *name, const uint8_t *b,
                        uint64_t n)
{
    pk_machine *pm = scan_machine(sc);
    if (!pm)
        return true;
    sc->buf = b;
    member_walk mw = {sc, pm, b, n};
    mf_pickle_walk w = {&mw, walk_run, walk_finding, walk_rest};
    bool walked = r->walk_tar_member(name, b, n, &w) == 1;
    pk_free(pm);
    return walked;
}

/* The scan hooks of the reader whose loader reads tar archives (its
 * tar_members hook). */
static const mf_scan_hooks *tar_loader_hooks(void)
{
    const mf_reader *r;
    for (size_t i = 0; (r = mf_reader_at(i)) != NULL; i++)
        if (hooks_of(r)->tar_members && hooks_of(r)->walk_tar_member)
            return hooks_of(r);
    return NULL;
}

/* The name by which the loader opens m (the last member of that name,
 * links followed), so that it reads it its own way; NULL for none. */
static const char *loaded_as(const mf_tar *t, const mf_tar_member *m,
                             const mf_scan_hooks *loader)
{
    for (size_t k = 0; loader && loader->tar_members[k]; k++) {
        const mf_tar_member *named = mf_tar_find(t, loader->tar_members[k]);
        if (named && mf_tar_resolve(t, named) == m)
            return loader->tar_members[k];
    }
    return NULL;
}

/* tarfile's reading (core/tar.h); torch.load opens "storages", "tensors"
 * and "pickle" (the last member of each name, links followed). Every
 * member with data is scanned; the three torch members as torch reads
 * them. */
static void scan_tar(scanner *sc, const uint8_t *b, uint64_t n)
{
    mf_arena *a = mf_arena_new();
    mf_status st;
    mf_status_init(&st);
    mf_tar t;
    if (!a || mf_tar_open(&t, b, n, sc->path, a, &st)) {
        sc->oom |= !a;
        add_finding(sc, MF_VERDICT_UNKNOWN, 0, NULL, NULL, "a tar archive that cannot be read: %s",
                    a ? st.msg : "out of memory");
        scan_status_clear(sc, &st);
        mf_arena_free(a);
        return;
    }
    const mf_scan_hooks *loader = tar_loader_hooks();
    for (size_t k = 0; loader && loader->tar_members[k]; k++) {
        const mf_tar_member *m = mf_tar_find(&t, loader->tar_members[k]);
        const mf_tar_member *to = m ? mf_tar_resolve(&t, m) : NULL;
        if (m && !to)
            add_finding(sc, MF_VERDICT_UNKNOWN, (int64_t)m->offset, NULL, NULL,
                        "tar member \"%s\" is a link to \"%s\", which is not in the archive: "
                        "%s would read a file outside it", m->name, m->linkname,
                        loader->tar_loader);
        else if (m && to != m)
            add_finding(sc, MF_VERDICT_UNKNOWN, (int64_t)m->offset, NULL, NULL,
                        "tar member \"%s\" is a link: %s reads \"%s\" through it", m->name,
                        loader->tar_loader, to->name);
    }
    for (size_t i = 0; i < t.n; i++) {
        const mf_tar_member *m = &t.m[i];
        if (mf_tar_resolve(&t, m) != m)
            continue; /* links, folders: their data is another member's */
        const uint8_t *p;
        uint64_t len;
        scan_status_clear(sc, &st);
        mf_status_init(&st);
        const char *outer = sc->member;
        sc->member = join_label(sc, m->name);
        if (!sc->member)
            sc->member = outer;
        if (mf_tar_data(&t, m, &p, &len, &st)) {
            add_finding(sc, MF_VERDICT_UNKNOWN, (int64_t)m->offset, NULL, NULL, "%s", st.msg);
            sc->member = outer;
            continue;
        }
        int64_t fb = sc->file_base >= 0 ? sc->file_base + (int64_t)m->data_offset : -1;
        scanner saved = enter_inner(sc, fb);
        const char *as = loaded_as(&t, m, loader);
        if (!as || !walk_member(sc, loader, as, p, len))
            scan_buffer(sc, p, len);
        leave_inner(sc, &saved);
        sc->member = outer;
    }
    if (t.end_why && strcmp(t.end_why, "an end-of-archive block") != 0 &&
        strcmp(t.end_why, "the end of the file") != 0)
        add_finding(sc, MF_VERDICT_SAFE, (int64_t)t.end, NULL, NULL,
                    "tar: the member list ends at %s, as tarfile ends it", t.end_why);
    scan_status_clear(sc, &st);
    mf_arena_free(a);
}

/* ----------------------------------------------------------------- zip */

/* Case-insensitively: miniz finds archive/DATA.PKL for data.pkl. */
static bool ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcasecmp(s + a - b, suf) == 0;
}

/* Members looked at whatever their bytes: pickles and archives by name. */
static bool named_interesting(const char *name)
{
    static const char *const exts[] = {".pkl", ".pickle", ".pt", ".pth", ".bin", ".ckpt",
                                       ".npy", ".npz", ".zip", ".tar", ".joblib"};
    for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++)
        if (ends_with(name, exts[i]))
            return true;
    return false;
}

/* A pickle of any protocol: PROTO (0x80) for protocol 2+, else any
 * opcode of protocols 0 and 1 (a protocol-0 pickle may start with
 * GLOBAL 'c', MARK '(' ...). Storage records that pass this are run
 * quietly: only a complete pickle, or a dangerous name, counts. */
static bool looks_like_pickle_start(const uint8_t *p, size_t n)
{
    static const char ops01[] = "(.0123FIJKLMNPQRSVXUabcdeghijloprqstu}])G";
    if (n >= 2 && p[0] == 0x80)
        return p[1] <= 5;
    return n >= 1 && p[0] && strchr(ops01, p[0]) != NULL;
}

static bool looks_like_container(const uint8_t *p, size_t n)
{
    return (n >= 4 && memcmp(p, "PK\3\4", 4) == 0) || (n >= 6 && memcmp(p, "\x93NUMPY", 6) == 0);
}

typedef struct prefix_sink {
    uint8_t b[16];
    size_t n;
} prefix_sink;

static int to_prefix(void *ctx, const void *buf, size_t n, mf_status *st)
{
    prefix_sink *p = ctx;
    size_t k = n < sizeof(p->b) - p->n ? n : sizeof(p->b) - p->n;
    memcpy(p->b + p->n, buf, k);
    p->n += k;
    if (p->n == sizeof(p->b))
        return mf_fail(st, MF_ERR_USAGE, NULL, -1, "enough"); /* stop inflating */
    return 0;
}

static size_t member_prefix(scanner *sc, const mf_zip *z, const mf_zip_entry *e, uint8_t *out)
{
    prefix_sink p = {.n = 0};
    mf_status st;
    mf_status_init(&st);
    mf_zip_stream(z, e, false, to_prefix, &p, &st);
    scan_status_clear(sc, &st);
    memcpy(out, p.b, p.n);
    return p.n;
}

static void zip_anomalies(scanner *sc, const mf_zip_entry *e)
{
    if (e->name_mismatch)
        add_finding(sc, MF_VERDICT_UNKNOWN, (int64_t)e->local_offset, NULL, NULL,
                    "the local header names another file than the central directory "
                    "(loaders go by the central name)");
    if (e->flags & 1)
        add_finding(sc, MF_VERDICT_UNKNOWN, (int64_t)e->local_offset, NULL, NULL,
                    "marked encrypted, yet stored readable: torch ignores the flag and loads it");
    if (e->size_mismatch)
        add_finding(sc, MF_VERDICT_SAFE, (int64_t)e->local_offset, NULL, NULL,
                    "the local header's sizes or method differ from the central directory");
}

#define FIRST_WINDOW (1u << 20)
#define LAST_WINDOW (32u << 20) /* beyond it, the member is inflated whole (MAX_INSPECT) */

/* A deflated member that starts like a pickle: loaders stop at STOP, and
 * so does the chain of pickles the scanner follows once it meets bytes
 * that start no pickle. It is inflated a window at a time (1 MiB,
 * doubling) until the chain ends inside the window, so a small pickle
 * followed by a gigabyte of padding (a zip bomb) costs the window.
 * Findings of a window that proved too short are dropped before the next.
 * Returns false when the caller must inflate the member whole. */
static bool scan_windowed(scanner *sc, const mf_zip *z, const mf_zip_entry *e, bool quiet)
{
    for (uint64_t want = FIRST_WINDOW; want < e->usize && want <= LAST_WINDOW; want *= 2) {
        uint8_t *buf;
        size_t len;
        mf_status st;
        mf_status_init(&st);
        if (mf_zip_extract_prefix(z, e, (size_t)want, &buf, &len, &st)) {
            scan_status_clear(sc, &st);
            return false;
        }
        scan_status_clear(sc, &st);
        size_t f0 = sc->f.n, g0 = sc->g.n, d0 = sc->r->dropped_findings;
        uint64_t p0 = sc->r->n_pickles;
        mf_verdict v0 = sc->r->verdict;
        scanner saved = enter_inner(sc, -1);
        sc->buf = buf;
        chain_result res = quiet ? scan_quiet_pickles(sc, buf, len) : scan_pickles(sc, buf, len, 0);
        leave_inner(sc, &saved);
        bool ended = res.end < len && !looks_like_pickle_start(buf + res.end, len - res.end) &&
                     buf[res.end] != 0x80;
        free(buf);
        if (ended) {
            add_finding(sc, MF_VERDICT_SAFE, (int64_t)res.end, NULL, NULL,
                        "the pickles end at byte %llu of %llu: the rest (no loader reads it) "
                        "was neither inflated nor CRC-checked", (unsigned long long)res.end,
                        (unsigned long long)e->usize);
            return true;
        }
        sc->f.n = f0; /* too short a window: start again with a longer one */
        sc->g.n = g0;
        sc->r->dropped_findings = d0;
        sc->r->n_pickles = p0;
        sc->r->verdict = v0;
    }
    return false;
}

/* The CRC of a member a loader unpickles or opens (named like a pickle or
 * an archive, or one by its bytes). A quiet member -- a storage record that
 * merely starts like a pickle -- is not CRC-checked, which saves reading
 * it whole (a third of a training checkpoint's storages start with such a
 * byte). Why that leaves `safe` sound:
 *  - torch.load (torch/serialization.py `_load`) unpickles exactly the
 *    record named `data.pkl`; a record `data/<key>` is handed to
 *    `get_storage_from_record` as a storage's raw bytes and never
 *    unpickled. No name is both ("data/" + key never equals "data.pkl"),
 *    and a member whose bytes overlap another's is flagged by
 *    view_ambiguities; `data.pkl` itself is named, so checked here.
 *  - torch's miniz is built with MINIZ_DISABLE_ZIP_READER_CRC32_CHECKS
 *    (pytorch cmake/Dependencies.cmake): torch reads a storage whatever
 *    its CRC, and a reader that checks (Python's zipfile) refuses the
 *    member rather than reading other bytes. A mismatch in bytes nothing
 *    unpickles changes nothing that runs.
 *  - The quiet member is still run through the pickle machine from its
 *    first byte (scan_quiet_pickles: a dangerous name counts), which reads
 *    only as far as the chain of pickles goes. */
static void check_member_crc(scanner *sc, const mf_zip_entry *e, const uint8_t *p, size_t len)
{
    uint32_t crc = 0;
    for (size_t off = 0; off < len; off += CRC_CHUNK) {
        size_t k = len - off < CRC_CHUNK ? len - off : CRC_CHUNK;
        crc = mf_crc32(crc, p + off, k);
        drop_pages(sc, p + off, k);
    }
    if (crc != e->crc)
        add_finding(sc, MF_VERDICT_UNKNOWN, (int64_t)e->local_offset, NULL, NULL,
                    "CRC-32 %08x does not match the recorded %08x (torch does not check; "
                    "scanned as read)", crc, e->crc);
}

static void scan_member(scanner *sc, const mf_zip *z, const mf_zip_entry *e)
{
    const char *outer = sc->member;
    sc->member = join_label(sc, e->name);
    if (!sc->member) {
        sc->oom = true;
        sc->member = outer;
    }
    zip_anomalies(sc, e);
    if (!e->local_ok) {
        add_finding(sc, MF_VERDICT_UNKNOWN, (int64_t)e->local_offset, NULL, NULL,
                    "no valid local header: the member cannot be read");
        sc->member = outer;
        return;
    }
    uint8_t head[16];
    size_t hn = member_prefix(sc, z, e, head);
    bool named = named_interesting(e->name);
    bool quiet = !named && !looks_like_container(head, hn);
    if (quiet && ends_with(e->name, ".py")) { /* source, reported as code; nothing unpickles it */
        sc->member = outer;
        return;
    }
    if (quiet && !looks_like_pickle_start(head, hn)) {
        sc->member = outer;
        return;
    }
    if (e->method == 8 && e->usize > FIRST_WINDOW && !looks_like_container(head, hn) &&
        looks_like_pickle_start(head, hn) && scan_windowed(sc, z, e, quiet)) {
        sc->member = outer;
        return;
    }
    const uint8_t *p = NULL;
    uint8_t *buf = NULL;
    size_t len = 0;
    mf_status st;
    mf_status_init(&st);
    if (e->method == 0) {
        p = mf_zip_stored_data(z, e, &st);
        len = (size_t)e->usize;
    } else if (e->usize > MAX_INSPECT || sc->inflated + e->usize > 4ull * MAX_INSPECT) {
        add_finding(sc, MF_VERDICT_UNKNOWN, (int64_t)e->local_offset, NULL, NULL,
                    "a compressed member of %llu bytes: too large to inspect",
                    (unsigned long long)e->usize);
    } else if (mf_zip_extract(z, e, MAX_INSPECT, &buf, &len, &st) == 0) {
        p = buf;
        sc->inflated += len;
    }
    if (!p && st.code != MF_OK)
        add_finding(sc, MF_VERDICT_UNKNOWN, (int64_t)e->local_offset, NULL, NULL,
                    "cannot be read: %s", st.msg);
    scan_status_clear(sc, &st);
    if (p && !quiet)
        check_member_crc(sc, e, p, len);
    if (p) {
        int64_t fb = e->method == 0 && sc->file_base >= 0 ? sc->file_base + (int64_t)e->data_offset : -1;
        scanner saved = enter_inner(sc, fb);
        if (quiet) {
            sc->buf = p;
            scan_quiet_pickles(sc, p, len);
        } else {
            scan_buffer(sc, p, len);
        }
        leave_inner(sc, &saved);
        drop_pages(sc, p, len);
    }
    free(buf);
    sc->member = outer;
}

#define MAX_VIEWS 8

typedef struct zip_view {
    mf_zip z;
    const char *who; /* "torch's miniz", "Python's zipfile", "another end record" */
} zip_view;

static const char *dialect_name(mf_zip_dialect d)
{
    return d == MF_ZIP_MINIZ ? "torch's miniz" : "Python's zipfile";
}

/* Findings for what one reading hides: never safe. */
static void view_ambiguities(scanner *sc, const zip_view *v)
{
    mf_zip_ambiguity amb;
    if (mf_zip_ambiguities(&v->z, &amb))
        sc->oom = true;
    if (amb.dup_names)
        add_finding(sc, MF_VERDICT_UNKNOWN, (int64_t)v->z.cd_offset, NULL, NULL,
                    "zip: %zu members share a name with another as %s compares names "
                    "(e.g. \"%s\"): which one a loader opens depends on the reader; all are "
                    "scanned", amb.dup_names, v->who, amb.dup_example);
    if (amb.overlaps)
        add_finding(sc, MF_VERDICT_UNKNOWN, (int64_t)v->z.cd_offset, NULL, NULL,
                    "zip: %zu members overlap the bytes of others (e.g. \"%s\", as %s reads "
                    "the archive): one file's bytes under two names; all are scanned",
                    amb.overlaps, amb.overlap_example, v->who);
    if (v->z.concat > 0)
        add_finding(sc, MF_VERDICT_UNKNOWN, (int64_t)v->z.concat, NULL, NULL,
                    "zip: %lld bytes are prepended to the archive: %s shifts every member by "
                    "them, other readers do not; both readings are scanned",
                    (long long)v->z.concat, v->who);
    else if (amb.lead_bytes)
        add_finding(sc, MF_VERDICT_UNKNOWN, 0, NULL, NULL,
                    "zip: %llu bytes come before the first member (as %s reads the archive): "
                    "data a loader may read as something else; scanned as well",
                    (unsigned long long)amb.lead_bytes, v->who);
}

/* A member another reading already scanned: same name, same bytes.
 * Returns 1 when seen, 0 when new (now recorded), -1 out of memory. */
static int member_seen(mf_strset *seen, mf_arena *a, const mf_zip_entry *e)
{
    char *key = mf_arena_printf(a, "%llu/%llu/%llu/%llu/%u/%s",
                                (unsigned long long)e->local_offset,
                                (unsigned long long)e->data_offset,
                                (unsigned long long)e->csize, (unsigned long long)e->usize,
                                e->method, e->name);
    int r = key ? mf_strset_add(seen, key) : -1; /* the set keeps the pointer */
    return r < 0 ? -1 : r == 0;
}

/* An end record inside a stored member that is itself an archive: the
 * member is scanned as one (scan_member), so it is no other reading. */
static bool inside_nested_archive(const zip_view *v, size_t nv, uint64_t eocd)
{
    for (size_t i = 0; i < nv; i++)
        for (size_t k = 0; k < v[i].z.n; k++) {
            const mf_zip_entry *e = &v[i].z.entries[k];
            if (e->method == 0 && e->local_ok && eocd >= e->data_offset &&
                eocd - e->data_offset < e->csize && e->csize >= 4 &&
                e->data_offset + 4 <= v[i].z.size &&
                memcmp(v[i].z.base + e->data_offset, "PK\3\4", 4) == 0)
                return true;
        }
    return false;
}

static bool add_view(zip_view *v, size_t *nv, mf_zip_dialect d, const uint8_t *b, uint64_t n,
                     int64_t eocd, const char *who, const char *path, mf_arena *a,
                     mf_status *st)
{
    if (*nv >= MAX_VIEWS)
        return false;
    zip_view *x = &v[*nv];
    int rc = eocd < 0 ? mf_zip_open_as(&x->z, d, b, n, path, a, st)
                      : mf_zip_open_at(&x->z, d, b, n, (uint64_t)eocd, path, a, st);
    if (rc)
        return false;
    for (size_t i = 0; i < *nv; i++)
        if (mf_zip_same(&v[i].z, &x->z))
            return true; /* the same reading */
    x->who = who;
    (*nv)++;
    return true;
}

/* Archives that ship code (issue 10, class 10). torch.package
 * (.data/extern_modules) imports every module the archive holds as
 * <module path>.py or <module path>/__init__.py from the archive first,
 * so a global whose module (or a parent package) is shipped runs the
 * archive's code, however harmless its name; TorchScript archives
 * (code/ + constants.pkl) are compiled and run by torch.jit.load. */
typedef struct shipped_code {
    MF_VEC(char *) modules; /* dotted module names of .py members */
    bool package, torchscript;
    size_t ts_files;
} shipped_code;

static char *module_of(const char *name)
{
    const char *slash = strchr(name, '/'); /* the archive's folder */
    const char *rel = slash ? slash + 1 : name;
    size_t n = strlen(rel);
    if (n < 4 || strcasecmp(rel + n - 3, ".py") != 0)
        return NULL;
    char *m = strndup(rel, n - 3);
    if (!m)
        return NULL;
    size_t l = strlen(m);
    if (l >= 9 && strcmp(m + l - 9, "/__init__") == 0)
        m[l - 9] = 0;
    for (char *p = m; *p; p++)
        if (*p == '/')
            *p = '.';
    return m;
}

static void collect_code(shipped_code *c, const mf_zip *z)
{
    for (size_t i = 0; i < z->n; i++) {
        const char *nm = z->entries[i].name;
        const char *slash = strchr(nm, '/');
        const char *rel = slash ? slash + 1 : nm;
        if (strcmp(rel, ".data/extern_modules") == 0)
            c->package = true;
        if (strncmp(rel, "code/", 5) == 0) {
            c->torchscript = true;
            c->ts_files++;
            continue;
        }
        char *m = module_of(nm);
        if (m && MF_VEC_PUSH(c->modules, m))
            free(m);
    }
}

static const char *shipped_module(const shipped_code *c, const char *global)
{
    for (size_t i = 0; i < c->modules.n; i++) {
        const char *m = c->modules.v[i];
        size_t l = strlen(m);
        if (l && strncmp(global, m, l) == 0 && global[l] == '.')
            return m; /* "module.name": the module or one of its parents is shipped */
    }
    return NULL;
}

static void report_code(scanner *sc, shipped_code *c)
{
    if (c->torchscript)
        add_finding(sc, MF_VERDICT_UNKNOWN, -1, NULL, NULL,
                    "a TorchScript archive: torch.jit.load compiles and runs the code in its "
                    "%zu code/ members, which mfmt does not judge", c->ts_files);
    for (size_t i = 0; i < c->modules.n; i++)
        add_finding(sc, MF_VERDICT_UNKNOWN, -1, NULL, NULL,
                    "the archive ships Python module \"%s\"%s", c->modules.v[i],
                    c->package ? ": torch.package imports it from the archive, before any "
                                 "installed module of that name"
                               : ": a loader that imports from the archive runs it");
    for (size_t i = 0; i < sc->g.n; i++) {
        const char *m = shipped_module(c, sc->g.v[i].name);
        if (m && c->package)
            add_finding(sc, MF_VERDICT_DANGEROUS, -1, NULL, sc->g.v[i].name,
                        "global %s resolves to the archive's own module \"%s\" (torch.package "
                        "imports modules from inside the archive first): it runs shipped code",
                        sc->g.v[i].name, m);
    }
    for (size_t i = 0; i < c->modules.n; i++)
        free(c->modules.v[i]);
    MF_VEC_FREE(c->modules);
}

/* Reads the archive as every loader could: torch's miniz, Python's
 * zipfile, and each other end-of-central-directory record in reach of a
 * zip reader; scans the members of every distinct reading. */
static void scan_zip(scanner *sc, const uint8_t *b, uint64_t n, bool appended)
{
    mf_arena *a = mf_arena_new();
    zip_view *v = calloc(MAX_VIEWS, sizeof(zip_view));
    if (!a || !v) {
        sc->oom = true;
        mf_arena_free(a);
        free(v);
        return;
    }
    size_t nv = 0;
    mf_status st_miniz, st_py, tmp;
    mf_status_init(&st_miniz);
    mf_status_init(&st_py);
    bool miniz_ok = add_view(v, &nv, MF_ZIP_MINIZ, b, n, -1, dialect_name(MF_ZIP_MINIZ),
                             sc->path, a, &st_miniz);
    bool py_ok = add_view(v, &nv, MF_ZIP_PYTHON, b, n, -1, dialect_name(MF_ZIP_PYTHON),
                          sc->path, a, &st_py);
    size_t loaders = nv;
    uint64_t cand[MAX_VIEWS];
    size_t nc = mf_zip_eocd_candidates(b, n, cand, MAX_VIEWS);
    for (size_t i = 0; i < nc; i++)
        for (int d = 0; d < 2 && !inside_nested_archive(v, loaders, cand[i]); d++) {
            bool again = false; /* a loader's own end record, read with its own rules */
            for (size_t k = 0; k < loaders; k++)
                again |= v[k].z.eocd_offset == cand[i] &&
                         v[k].z.dialect == (d ? MF_ZIP_PYTHON : MF_ZIP_MINIZ);
            if (again)
                continue;
            mf_status_init(&tmp);
            add_view(v, &nv, d ? MF_ZIP_PYTHON : MF_ZIP_MINIZ, b, n, (int64_t)cand[i],
                     "another end record", sc->path, a, &tmp);
            scan_status_clear(sc, &tmp);
        }
    if (nv == 0) {
        if (!appended)
            add_finding(sc, MF_VERDICT_UNKNOWN, -1, NULL, NULL,
                        "a zip archive whose central directory cannot be read: %s", st_py.msg);
    } else {
        if (appended)
            add_finding(sc, MF_VERDICT_SAFE, (int64_t)v[0].z.cd_offset, NULL, NULL,
                        "a zip archive is appended (zip readers open it): its %zu members are "
                        "scanned", v[0].z.n);
        if (loaders == 2)
            add_finding(sc, MF_VERDICT_UNKNOWN, (int64_t)v[1].z.eocd_offset, NULL, NULL,
                        "zip: torch's miniz and Python's zipfile read different archives here "
                        "(%zu members, central directory at %llu; %zu members, at %llu): every "
                        "reading is scanned", v[0].z.n, (unsigned long long)v[0].z.cd_offset,
                        v[1].z.n, (unsigned long long)v[1].z.cd_offset);
        else if (miniz_ok != py_ok && !appended)
            add_finding(sc, MF_VERDICT_UNKNOWN, -1, NULL, NULL,
                        "zip: %s cannot read this archive (%s) but %s can",
                        miniz_ok ? dialect_name(MF_ZIP_PYTHON) : dialect_name(MF_ZIP_MINIZ),
                        miniz_ok ? st_py.msg : st_miniz.msg,
                        miniz_ok ? dialect_name(MF_ZIP_MINIZ) : dialect_name(MF_ZIP_PYTHON));
        for (size_t i = loaders; i < nv; i++)
            add_finding(sc, MF_VERDICT_UNKNOWN, (int64_t)v[i].z.eocd_offset, NULL, NULL,
                        "zip: the end-of-central-directory record at %llu describes another "
                        "archive (%zu members) than the loaders read: several end records, "
                        "all scanned", (unsigned long long)v[i].z.eocd_offset, v[i].z.n);
        shipped_code code = {0};
        mf_strset seen = {0};
        for (size_t i = 0; i < nv; i++) {
            view_ambiguities(sc, &v[i]);
            collect_code(&code, &v[i].z);
            for (size_t k = 0; k < v[i].z.n; k++)
                if (member_seen(&seen, a, &v[i].z.entries[k]) != 1)
                    scan_member(sc, &v[i].z, &v[i].z.entries[k]);
        }
        report_code(sc, &code);
        mf_strset_free(&seen);
    }
    scan_status_clear(sc, &st_miniz);
    scan_status_clear(sc, &st_py);
    free(v);
    mf_arena_free(a);
}

/* ------------------------------------------------------------ dispatch */

/* Bytes of a format whose loader never unpickles, as the readers' probes
 * recognise them (formats/detect.c, asked as of a file): a data_only
 * format (GGUF, GGML, safetensors, TFLite, ONNX) or one whose reader's
 * scan hooks say never_unpickles (HDF5, TensorFlow). Fills d; false for
 * any other bytes. */
static bool no_pickle_format(const scanner *sc, const uint8_t *b, uint64_t n, mf_detection *d)
{
    const mf_reader *r = mf_detect_bytes(b, n, sc->path, d);
    return r && (r->data_only || (r->scan && r->scan->never_unpickles));
}

/* A file of a no-pickle format that pickle.load would also read from byte
 * 0, whose chain fails (not complete): an EXT opcode in it names nothing in
 * the file (load_ext raises "unregistered extension code" unless the
 * loading program registered the code with copyreg.add_extension) and the
 * unpickler stops with an error soon after. A safetensors file whose header
 * length starts with 0x82-0x84 is one (1 in 85 of them): "dangerous" there
 * is not proven, so the finding is demoted to unknown (never to safe: what
 * a registered extension would do is not vouched for). */
static void demote_unreached_ext(scanner *sc, size_t f0, mf_verdict v0)
{
    mf_verdict v = v0;
    for (size_t i = f0; i < sc->f.n; i++) {
        mf_finding *f = &sc->f.v[i];
        if (f->severity == MF_VERDICT_DANGEROUS && f->global &&
            strncmp(f->global, "copyreg._extension_registry.", 28) == 0) {
            f->severity = MF_VERDICT_UNKNOWN;
            for (size_t k = 0; k < sc->g.n; k++)
                if (!strcmp(sc->g.v[k].name, f->global) && sc->g.v[k].cls == MF_VERDICT_DANGEROUS)
                    sc->g.v[k].cls = MF_VERDICT_UNKNOWN;
        }
        if (f->severity > v)
            v = f->severity;
    }
    sc->r->verdict = v;
}

static void scan_buffer(scanner *sc, const uint8_t *b, uint64_t n)
{
    sc->buf = b;
    if (sc->depth > MAX_DEPTH) {
        add_finding(sc, MF_VERDICT_UNKNOWN, -1, NULL, NULL,
                    "archives nested more than %d deep are not inspected", MAX_DEPTH);
        return;
    }
    if (n == 0) {
        add_finding(sc, MF_VERDICT_SAFE, -1, NULL, NULL, "empty");
        return;
    }
    if (mf_zip_starts(b, n)) {
        scan_zip(sc, b, n, false); /* torch.load's _is_zipfile test */
        return;
    }
    if (scan_payload(sc, b, n))
        return;
    scan_compressed(sc, b, n); /* joblib.load's reading; pickle.load's follows */
    if (mf_tar_probe(b, n)) { /* torch.load tries tarfile first */
        scan_tar(sc, b, n);
        /* pickle.load (and torch.load when tarfile refuses it) reads the
         * same bytes from byte 0 */
        scan_pickles_as(sc, b, n, 0, true);
        return;
    }
    if (n >= 512 && memcmp(b + 257, "ustar", 5) == 0)
        add_finding(sc, MF_VERDICT_UNKNOWN, 0, NULL, NULL,
                    "a tar header that Python's tarfile refuses (bad checksum or number): other "
                    "tar readers may still open it");
    mf_detection other;
    if (no_pickle_format(sc, b, n, &other)) {
        /* pickle.load and np.load read any file from byte 0: a file that
         * also unpickles is scanned as the pickle it is, every finding kept */
        size_t f0 = sc->f.n;
        mf_verdict v0 = sc->r->verdict;
        chain_result res = scan_pickles_as(sc, b, n, 0, true);
        if (!res.complete)
            demote_unreached_ext(sc, f0, v0);
        if (res.end == 0 && sc->f.n == f0)
            add_finding(sc, MF_VERDICT_SAFE, 0, NULL, NULL, "a %s file (%s): holds no pickle",
                        mf_format_name(other.format), other.detail);
        else
            add_finding(sc, MF_VERDICT_SAFE, 0, NULL, NULL,
                        "a %s signature (%s) on a file that pickle.load reads as a pickle "
                        "from byte 0: scanned as that pickle", mf_format_name(other.format),
                        other.detail);
    } else {
        scan_pickles(sc, b, n, 0);
    }
    uint64_t eocd;
    if (mf_zip_eocd_candidates(b, n, &eocd, 1))
        scan_zip(sc, b, n, true); /* zip readers find an archive at the end */
}

/* ------------------------------------------------ other formats' code */

static void on_code(void *ctx, const mf_code_finding *f)
{
    add_finding(ctx, (mf_verdict)f->severity, -1, f->opcode, NULL, "%s", f->message);
}

/* Code that loading runs besides pickles (Keras Lambda layers, TensorFlow
 * ops that run code or touch files): asked of the reader of the file's
 * format when it has a find_code hook. */
static void scan_model_code(scanner *sc, const char *path, const uint8_t *b, uint64_t fsize)
{
    mf_detection d;
    mf_status st;
    mf_status_init(&st);
    const mf_reader *r = mf_detect(path, &d, &st) == 0 ? mf_reader_for(d.format) : NULL;
    if (!r || !hooks_of(r)->find_code) {
        scan_status_clear(sc, &st);
        return;
    }
    mf_model *m;
    if (mf_open_model(path, 0, &m, &st)) {
        /* a file its own loader may read where mfmt cannot (the reader's
         * may_hold_code hook: a Keras archive, an HDF5 file with a Keras
         * model_config attribute) may hold the code */
        bool maybe = hooks_of(r)->may_hold_code && b && hooks_of(r)->may_hold_code(b, fsize);
        add_finding(sc, maybe ? MF_VERDICT_UNKNOWN : MF_VERDICT_SAFE, -1, NULL, NULL,
                    "a %s file that cannot be opened to look for code in it: %s",
                    mf_format_name(d.format), st.msg);
        scan_status_clear(sc, &st);
        return;
    }
    if (hooks_of(r)->find_code(m, on_code, sc, &st) < 0)
        add_finding(sc, MF_VERDICT_UNKNOWN, -1, NULL, NULL, "%s", st.msg);
    scan_status_clear(sc, &st);
    mf_close(m);
}

/* ------------------------------------------------------ chat templates */

/* A template's finding (ops/scan_template.c): its key or part is the
 * member, the byte is in the template. */
static void on_template(void *ctx, const mf_template_finding *f)
{
    scanner *sc = ctx;
    const char *saved = sc->member;
    int64_t base = sc->file_base;
    sc->member = f->where;
    sc->file_base = f->file_offset >= 0 && f->offset >= 0 ? f->file_offset - f->offset : -1;
    add_finding(sc, (mf_verdict)f->severity, f->offset, "jinja", NULL, "%s", f->message);
    sc->member = saved;
    sc->file_base = base;
}

/* ------------------------------------------------- code around a file */

/* Code that loading the directory around the file runs (the readers'
 * code_around hook: transformers' auto_map remote code names Python files
 * of the directory). */
static void scan_code_around(scanner *sc, const char *path)
{
    const mf_reader *r;
    for (size_t i = 0; (r = mf_reader_at(i)) != NULL; i++)
        if (hooks_of(r)->code_around)
            hooks_of(r)->code_around(path, on_code, sc);
}

/* ------------------------------------------- slices other files name */

typedef struct slice_ref {
    const char *file;
    uint64_t off, len;
} slice_ref;

typedef struct slice_list {
    scanner *sc;
    MF_VEC(slice_ref) v;
} slice_list;

static void on_slice(void *ctx, const char *file, uint64_t off, uint64_t len)
{
    slice_list *l = ctx;
    const char *f = mf_arena_strdup(l->sc->r->arena, file);
    if (!f || MF_VEC_PUSH(l->v, ((slice_ref){f, off, len})))
        l->sc->oom = true;
}

static int cmp_slice(const void *a, const void *b)
{
    const slice_ref *x = a, *y = b;
    int c = strcmp(x->file, y->file);
    if (c)
        return c;
    if (x->off != y->off)
        return x->off < y->off ? -1 : 1;
    return x->len < y->len ? -1 : x->len > y->len;
}

/* Scans each distinct slice of one file (l->v[i..j), sorted) as a file of
 * its own: a loader reads it so. A whole sibling file is left to its own
 * scan. A file that cannot be read is read by no loader either. */
static void scan_file_slices(scanner *sc, const char *dir_of, const slice_ref *v, size_t n)
{
    mf_file f;
    mf_status st;
    mf_status_init(&st);
    if (mf_map_file(v[0].file, &f, &st)) {
        struct stat sb; /* a file that is not there: no loader reads it either */
        if (stat(v[0].file, &sb) == 0)
            add_finding(sc, MF_VERDICT_UNKNOWN, -1, NULL, NULL,
                        "names %s, which cannot be read as a file (%s): what a loader reads "
                        "there is not known", v[0].file, st.msg);
        scan_status_clear(sc, &st);
        return;
    }
    const char *slash = strrchr(v[0].file, '/');
    bool sibling = slash && (size_t)(slash - v[0].file) == strlen(dir_of) &&
                   strncmp(v[0].file, dir_of, strlen(dir_of)) == 0;
    /* a writer's slices do not overlap: about the file's bytes in all; a
     * file naming the same bytes again and again would make the scan
     * quadratic, so past that budget the rest is left (unknown) */
    uint64_t budget = f.size + (64u << 10), spent = 0;
    for (size_t i = 0; i < n && !sc->oom; i++) {
        if (i && v[i].off == v[i - 1].off && v[i].len == v[i - 1].len)
            continue;
        if (v[i].off >= f.size || (sibling && v[i].off == 0 && v[i].len >= f.size))
            continue;
        uint64_t len = v[i].len < f.size - v[i].off ? v[i].len : f.size - v[i].off;
        if (len > budget - spent) {
            add_finding(sc, MF_VERDICT_UNKNOWN, -1, NULL, NULL,
                        "the slices named in %s overlap beyond its size: %zu of them not "
                        "scanned", v[0].file, n - i);
            break;
        }
        spent += len;
        char *label = mf_arena_printf(sc->r->arena, "%s[%llu..%llu]", slash ? slash + 1 : v[0].file,
                                      (unsigned long long)v[i].off,
                                      (unsigned long long)(v[i].off + len));
        if (!label) {
            sc->oom = true;
            break;
        }
        scan_nested(sc, join_label(sc, label), f.base + v[i].off, len, -1);
    }
    mf_unmap_file(&f);
}

/* Slices of other files that loading the directory around this one reads
 * as files of their own (the readers' slices_named hook: a DCP .metadata
 * places each item at a byte range of a .distcp file, which torch.load
 * reads alone: an archive inside another archive's bytes is such a
 * file). */
static void scan_slices(scanner *sc, const char *path, const uint8_t *b, uint64_t n)
{
    const mf_reader *r;
    const char *slash = strrchr(path, '/');
    char *dir = mf_arena_printf(sc->r->arena, "%.*s", slash ? (int)(slash - path) : 1,
                                slash ? path : ".");
    if (!dir) {
        sc->oom = true;
        return;
    }
    for (size_t i = 0; (r = mf_reader_at(i)) != NULL; i++) {
        if (!hooks_of(r)->slices_named)
            continue;
        slice_list l = {sc, {0}};
        if (hooks_of(r)->slices_named(path, b, n, on_slice, &l) < 0)
            add_finding(sc, MF_VERDICT_UNKNOWN, -1, NULL, NULL,
                        "%s places the parts a loader reads in other files, in a form mfmt "
                        "cannot read: those parts are not scanned", mf_format_name(r->format));
        if (l.v.n)
            qsort(l.v.v, l.v.n, sizeof(*l.v.v), cmp_slice);
        for (size_t a = 0, e; a < l.v.n && !sc->oom; a = e) {
            for (e = a + 1; e < l.v.n && strcmp(l.v.v[e].file, l.v.v[a].file) == 0; e++)
                ;
            scan_file_slices(sc, dir, l.v.v + a, e - a);
        }
        MF_VEC_FREE(l.v);
    }
}

/* ---------------------------------------------------------------- API */

static int scan_run(const char *path, const uint8_t *b, uint64_t n, bool is_file,
                    bool droppable, mf_scan_report **out, mf_status *st)
{
    *out = NULL;
    mf_scan_report *r = calloc(1, sizeof(*r));
    if (!r || !(r->arena = mf_arena_new())) {
        free(r);
        return mf_oom(st, path);
    }
    r->path = mf_arena_strdup(r->arena, path);
    scanner sc = {.r = r, .path = r->path, .member = "", .file_base = 0};
    if (droppable) {
        sc.map_lo = b;
        sc.map_hi = n ? b + n : b; /* an empty file: a NULL mapping, no offset */
    }
    scan_buffer(&sc, b, n);
    if (is_file) {
        sc.depth = 0;
        sc.file_base = -1;
        scan_model_code(&sc, path, b, n);
        scan_code_around(&sc, path);
        scan_slices(&sc, path, b, n);
        mf_scan_templates(path, b, n, on_template, &sc);
    }
    r->findings = sc.f.v;
    r->n_findings = sc.f.n;
    r->globals = sc.g.v;
    r->n_globals = sc.g.n;
    if (sc.oom || !r->path) { /* a report missing what it would have said */
        mf_scan_free(r);
        return mf_oom(st, path);
    }
    *out = r;
    return 0;
}

int mf_scan_bytes(const char *path, const uint8_t *b, uint64_t n, mf_scan_report **out,
                  mf_status *st)
{
    MF_ST_GUARD(st);
    return scan_run(path, b, n, false, false, out, st);
}

int mf_scan_file(const char *path, mf_scan_report **out, mf_status *st)
{
    MF_ST_GUARD(st);
    *out = NULL;
    if (mf_is_dir(path))
        return mf_fail(st, MF_ERR_USAGE, path, -1, "is a directory: scan the files in it");
    mf_file f;
    if (mf_map_file(path, &f, st))
        return -1;
    int rc = scan_run(path, f.base, f.size, true, !mf_is_url(path), out, st);
    mf_unmap_file(&f);
    return rc;
}

void mf_scan_free(mf_scan_report *r)
{
    if (!r)
        return;
    free(r->findings);
    free(r->globals);
    mf_arena_free(r->arena);
    free(r);
}

/* ---------------------------------------------------------- directories */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int scan_one(const char *path, mf_scan_fn fn, void *ctx, mf_status *st, int *stop)
{
    mf_scan_report *r;
    mf_status sub;
    mf_status_init(&sub);
    int rc = mf_scan_file(path, &r, &sub);
    if (rc) {
        mf_status_merge(st, &sub);
        if (st->code == MF_OK)
            st->code = sub.code;
    } else {
        *stop = fn(ctx, r);
        mf_scan_free(r);
    }
    mf_status_clear(&sub);
    return rc;
}

static int scan_dir(const char *dir, int depth, mf_scan_fn fn, void *ctx, mf_status *st,
                    int *stop)
{
    DIR *d = opendir(dir);
    if (!d)
        return mf_fail(st, MF_ERR_IO, dir, -1, "cannot open the directory");
    MF_VEC(char *) names = {0};
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
            continue;
        size_t n = strlen(dir) + strlen(e->d_name) + 2;
        char *p = malloc(n);
        if (!p || MF_VEC_PUSH(names, p)) {
            free(p);
            rc = mf_oom(st, dir);
            break;
        }
        snprintf(p, n, "%s/%s", dir, e->d_name);
    }
    closedir(d);
    if (names.n)
        qsort(names.v, names.n, sizeof(char *), cmp_str);
    for (size_t i = 0; i < names.n && !*stop; i++) {
        struct stat sb;
        if (stat(names.v[i], &sb) != 0)
            continue;
        if (S_ISDIR(sb.st_mode)) {
            if (depth < 3 && scan_dir(names.v[i], depth + 1, fn, ctx, st, stop))
                rc = -1;
        } else if (scan_one(names.v[i], fn, ctx, st, stop)) {
            rc = -1; /* a FIFO, socket or device too: a loader would read what
                        it gives, which no scan sees (an error, never safe) */
        }
    }
    for (size_t i = 0; i < names.n; i++)
        free(names.v[i]);
    MF_VEC_FREE(names);
    return rc;
}

int mf_scan_path(const char *path, mf_scan_fn fn, void *ctx, mf_status *st)
{
    MF_ST_GUARD(st);
    int stop = 0;
    if (mf_is_dir(path))
        return scan_dir(path, 0, fn, ctx, st, &stop);
    return scan_one(path, fn, ctx, st, &stop);
}
