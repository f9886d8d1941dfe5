/* scan.c - pickle safety, without running anything.
 *
 * Every place a loader may unpickle is visited, whatever the file is named:
 *  - the file itself from byte 0 (pickle.load and torch.load's legacy path
 *    do that), then whatever follows each STOP;
 *  - torch's legacy stream: all five pickles, the magic number judged by
 *    value, not spelling;
 *  - zip archives as torch.load reads them (file starts with PK\3\4,
 *    members found through the central directory, flag bits and CRCs
 *    ignored) and zip archives appended to other data (zipfile finds them):
 *    every member that is named or looks like a pickle, nested archives
 *    and .npy members; discrepancies between local and central headers,
 *    encryption flags and CRC mismatches are reported;
 *  - tar archives (torch's oldest format), .npy object arrays (np.load with
 *    allow_pickle=True unpickles them), torch.storage._load_from_bytes
 *    payloads (torch.load inside the pickle).
 * A pickle that stops with an error still counts what it reached first,
 * and the error itself makes the file `unknown`. */
#include "formats/formats.h"
#include "ops/scan.h"

#include "core/zip.h"
#include "formats/hdf5/keras.h"
#include "formats/numpy/npy.h"
#include "formats/pickle/pytorch.h"
#include "formats/tf/tf.h"

#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <zlib.h>

#define MAX_DEPTH 4           /* archives inside archives */
#define MAX_FINDINGS 1000
#define MAX_GLOBALS 4096
#define MAX_INSPECT (256u << 20) /* a deflated member inflated for inspection */
#define MAX_PICKLES 64        /* pickles one after another in one buffer */

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
} scanner;

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
    if (MF_VEC_PUSH(sc->f, x))
        sc->r->dropped_findings++;
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
    if (x.name)
        (void)MF_VEC_PUSH(sc->g, x);
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

static void scan_buffer(scanner *sc, const uint8_t *b, uint64_t n);

static char *join_label(scanner *sc, const char *inner)
{
    if (!sc->member[0])
        return mf_arena_strdup(sc->r->arena, inner);
    return mf_arena_printf(sc->r->arena, "%s!%s", sc->member, inner);
}

/* Scans bytes found inside the current buffer as a file of their own. */
static void scan_nested(scanner *sc, const char *label, const uint8_t *b, uint64_t n,
                        int64_t file_base)
{
    scanner saved = *sc;
    sc->member = label ? label : "?";
    sc->file_base = file_base;
    sc->depth++;
    sc->notes_after_stop = false;
    scan_buffer(sc, b, n);
    sc->member = saved.member;
    sc->buf = saved.buf;
    sc->file_base = saved.file_base;
    sc->origin = saved.origin;
    sc->depth = saved.depth;
    sc->notes_after_stop = saved.notes_after_stop;
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

/* -------------------------------------------------------------- pickles */

static const char *rule_of(const char *msg)
{
    const char *p = strstr(msg, "pickle: ");
    return p ? p + 8 : msg;
}

typedef struct chain_result {
    bool complete; /* every pickle ran to STOP (trailing non-pickle bytes allowed) */
    uint64_t end;
} chain_result;

static uint64_t scan_legacy(scanner *sc, const uint8_t *b, uint64_t n, uint64_t start);

/* Runs the pickles found from `start` on: the first, then any that follow
 * a STOP. */
static chain_result scan_pickles(scanner *sc, const uint8_t *b, uint64_t n, uint64_t start)
{
    chain_result res = {true, start};
    pk_opts o = {.file = sc->path, .on_global = on_global, .on_call = on_call, .ctx = sc};
    pk_machine *pm = pk_new(&o);
    if (!pm) {
        add_finding(sc, MF_VERDICT_UNKNOWN, -1, NULL, NULL, "out of memory while scanning");
        res.complete = false;
        return res;
    }
    sc->buf = b;
    uint64_t pos = start;
    for (int count = 0; pos < n && count < MAX_PICKLES; count++) {
        size_t before = sc->f.n;
        mf_status st;
        mf_status_init(&st);
        pk_obj *v;
        size_t used;
        uint64_t ops = 0;
        sc->origin = pos;
        int rc = pk_load(pm, b + pos, (size_t)(n - pos), &v, &used, &ops, &st);
        sc->r->n_pickles += ops > 0;
        if (rc == 0 && count == 0 && pt_is_legacy_magic(v)) {
            pos = scan_legacy(sc, b, n, pos);
            count += 4;
        } else if (rc == 0) {
            pos += used;
        } else {
            /* a stream that reached a name, or ran long enough to be a pickle */
            bool looks = ops >= 8 || b[pos] == 0x80 || sc->f.n > before;
            if (looks)
                add_finding(sc, MF_VERDICT_UNKNOWN, (int64_t)(pos + used), NULL, NULL,
                            "the pickle stops with an error: %s (what a loader would do after "
                            "it cannot be vouched for)", rule_of(st.msg));
            else if (count == 0 && pos == start)
                add_finding(sc, MF_VERDICT_SAFE, (int64_t)pos, NULL, NULL,
                            "not a pickle: unpickling fails at once (%s)", rule_of(st.msg));
            else
                add_finding(sc, MF_VERDICT_SAFE, (int64_t)pos, NULL, NULL,
                            "%llu bytes after STOP are not a pickle", (unsigned long long)(n - pos));
            res.complete = !looks;
            mf_status_clear(&st);
            break;
        }
        mf_status_clear(&st);
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

/* The legacy torch stream: its five pickles, then past the storages. */
static uint64_t scan_legacy(scanner *sc, const uint8_t *b, uint64_t n, uint64_t start)
{
    pk_opts o = {.file = sc->path, .on_global = on_global, .on_call = on_call, .ctx = sc};
    pk_machine *pm = pk_new(&o);
    if (!pm)
        return n;
    pt_legacy L;
    bool magic;
    mf_status st;
    mf_status_init(&st);
    sc->origin = start;
    int rc = pt_legacy_parse(pm, b + start, n - start, sc->path, &L, &magic, &st);
    sc->r->n_pickles += 4;
    uint64_t end = n;
    if (rc)
        add_finding(sc, MF_VERDICT_UNKNOWN, -1, NULL, NULL,
                    "legacy torch stream: %s", st.msg);
    else
        end = start + L.data_end;
    mf_status_clear(&st);
    pk_free(pm);
    return end;
}

/* Pickle bytes in a member that is not named as one (a storage record that
 * happens to start like a pickle): only a complete pickle, or a dangerous
 * name, counts. */
static void scan_quiet_pickles(scanner *sc, const uint8_t *b, uint64_t n)
{
    size_t f0 = sc->f.n, g0 = sc->g.n;
    mf_verdict v0 = sc->r->verdict;
    chain_result res = scan_pickles(sc, b, n, 0);
    if (res.complete)
        return;
    size_t k = f0;
    mf_verdict v = v0;
    for (size_t i = f0; i < sc->f.n; i++)
        if (sc->f.v[i].severity == MF_VERDICT_DANGEROUS) {
            sc->f.v[k++] = sc->f.v[i];
            v = MF_VERDICT_DANGEROUS;
        }
    sc->f.n = k;
    sc->g.n = g0;
    for (size_t i = f0; i < k; i++)
        add_global(sc, sc->f.v[i].global, MF_VERDICT_DANGEROUS);
    sc->r->verdict = v;
}

/* ----------------------------------------------------------------- npy */

/* numpy/lib/format.py: an object array's data is a pickle of it. */
static void scan_npy(scanner *sc, const uint8_t *b, uint64_t n)
{
    mf_npy_header h;
    mf_status st;
    mf_status_init(&st);
    if (mf_npy_parse_header(b, n, sc->path, 0, &h, &st)) {
        add_finding(sc, MF_VERDICT_SAFE, 0, NULL, NULL,
                    "a .npy header np.load refuses (%s): holds no pickle it would run", st.msg);
        mf_status_clear(&st);
        return;
    }
    mf_status_clear(&st);
    if (!h.is_object || h.data_offset > n)
        return;
    add_finding(sc, MF_VERDICT_UNKNOWN, 0, NULL, NULL,
                "object array: its data is a pickle, which np.load(allow_pickle=True) runs");
    scan_pickles(sc, b, n, h.data_offset);
}

/* ----------------------------------------------------------------- tar */

static bool is_tar(const uint8_t *b, uint64_t n)
{
    return n >= 512 && memcmp(b + 257, "ustar", 5) == 0;
}

static uint64_t tar_size(const uint8_t *f)
{
    uint64_t v = 0;
    if (f[0] & 0x80) { /* base-256 */
        for (int i = 1; i < 12; i++)
            v = v << 8 | f[i];
        return v;
    }
    for (int i = 0; i < 12 && f[i] >= '0' && f[i] <= '7'; i++)
        v = v * 8 + (uint64_t)(f[i] - '0');
    return v;
}

static void scan_tar(scanner *sc, const uint8_t *b, uint64_t n)
{
    uint64_t pos = 0;
    for (int count = 0; pos + 512 <= n && count < 100000; count++) {
        const uint8_t *h = b + pos;
        bool zero = true;
        for (int i = 0; i < 512 && zero; i++)
            zero = h[i] == 0;
        if (zero)
            break;
        char name[260];
        snprintf(name, sizeof(name), "%.155s%s%.100s", (const char *)h + 345, h[345] ? "/" : "",
                 (const char *)h);
        uint64_t size = tar_size(h + 124), data = pos + 512;
        if (size > n - data) {
            add_finding(sc, MF_VERDICT_UNKNOWN, (int64_t)pos, NULL, NULL,
                        "tar member \"%s\" runs past the end", name);
            return;
        }
        if (h[156] == '0' || h[156] == 0)
            scan_nested(sc, join_label(sc, name), b + data, size,
                        sc->file_base >= 0 ? sc->file_base + (int64_t)data : -1);
        pos = data + mf_align_up(size, 512);
    }
}

/* ----------------------------------------------------------------- zip */

static bool ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
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

static bool looks_like_pickle_start(const uint8_t *p, size_t n)
{
    return n >= 2 && p[0] == 0x80 && p[1] <= 5;
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

static size_t member_prefix(const mf_zip *z, const mf_zip_entry *e, uint8_t *out)
{
    prefix_sink p = {.n = 0};
    mf_status st;
    mf_status_init(&st);
    mf_zip_stream(z, e, false, to_prefix, &p, &st);
    mf_status_clear(&st);
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

static void scan_member(scanner *sc, const mf_zip *z, const mf_zip_entry *e)
{
    const char *outer = sc->member;
    sc->member = join_label(sc, e->name);
    if (!sc->member)
        sc->member = outer;
    zip_anomalies(sc, e);
    if (!e->local_ok) {
        add_finding(sc, MF_VERDICT_UNKNOWN, (int64_t)e->local_offset, NULL, NULL,
                    "no valid local header: the member cannot be read");
        sc->member = outer;
        return;
    }
    uint8_t head[16];
    size_t hn = member_prefix(z, e, head);
    bool named = named_interesting(e->name);
    bool quiet = !named && !looks_like_container(head, hn);
    if (quiet && !looks_like_pickle_start(head, hn)) {
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
    mf_status_clear(&st);
    if (p) {
        uLong crc = crc32(0, NULL, 0);
        for (size_t off = 0; off < len; off += 1u << 30)
            crc = crc32(crc, p + off, (uInt)(len - off < (1u << 30) ? len - off : (1u << 30)));
        if (crc != e->crc)
            add_finding(sc, MF_VERDICT_UNKNOWN, (int64_t)e->local_offset, NULL, NULL,
                        "CRC-32 %08lx does not match the recorded %08x (torch does not check; "
                        "scanned as read)", crc, e->crc);
        int64_t fb = e->method == 0 && sc->file_base >= 0 ? sc->file_base + (int64_t)e->data_offset : -1;
        scanner saved = *sc;
        sc->file_base = fb;
        sc->depth++;
        sc->notes_after_stop = false;
        if (quiet) {
            sc->buf = p;
            scan_quiet_pickles(sc, p, len);
        } else {
            scan_buffer(sc, p, len);
        }
        sc->buf = saved.buf;
        sc->file_base = saved.file_base;
        sc->depth = saved.depth;
        sc->origin = saved.origin;
        sc->notes_after_stop = saved.notes_after_stop;
    }
    free(buf);
    sc->member = outer;
}

static void scan_zip(scanner *sc, const uint8_t *b, uint64_t n, bool appended)
{
    mf_arena *a = mf_arena_new();
    mf_status st;
    mf_status_init(&st);
    mf_zip z;
    if (!a || mf_zip_open(&z, b, n, sc->path, a, &st)) {
        if (!appended)
            add_finding(sc, MF_VERDICT_UNKNOWN, -1, NULL, NULL,
                        "a zip archive whose central directory cannot be read: %s",
                        a ? st.msg : "out of memory");
        mf_status_clear(&st);
        mf_arena_free(a);
        return;
    }
    if (appended)
        add_finding(sc, MF_VERDICT_SAFE, (int64_t)z.cd_offset, NULL, NULL,
                    "a zip archive is appended (zip readers open it): its %zu members are scanned",
                    z.n);
    for (size_t i = 0; i < z.n; i++)
        scan_member(sc, &z, &z.entries[i]);
    mf_status_clear(&st);
    mf_arena_free(a);
}

/* ------------------------------------------------------------ dispatch */

/* Formats that hold no pickle, by their magic. */
static const char *other_format(const uint8_t *b, uint64_t n)
{
    if (n >= 8 && memcmp(b, "GGUF", 4) == 0)
        return "GGUF";
    if (n >= 4 && (memcmp(b, "lmgg", 4) == 0 || memcmp(b, "fmgg", 4) == 0 ||
                   memcmp(b, "tjgg", 4) == 0))
        return "GGML";
    if (n >= 8 && memcmp(b + 4, "TFL3", 4) == 0)
        return "TFLite";
    for (uint64_t off = 0; off + 8 <= n && off <= (1ull << 30); off = off ? off * 2 : 512)
        if (memcmp(b + off, "\x89HDF\r\n\x1a\n", 8) == 0)
            return "HDF5";
    if (n >= 10) {
        uint64_t hl = mf_rd64le(b);
        if (hl >= 2 && hl <= n - 8 && b[8] == '{')
            return "safetensors";
    }
    return NULL;
}

/* Where a zip archive that ends the data starts: as zipfile does, from
 * the end record (the central directory sits right before it, and its
 * recorded offset says how far the archive's own start is). -1: none. */
static int64_t appended_zip_start(const uint8_t *b, uint64_t n)
{
    if (n < 22)
        return -1;
    uint64_t lo = n > 22 + 65535 ? n - 22 - 65535 : 0;
    for (uint64_t p = n - 22 + 1; p-- > lo;) {
        if (mf_rd32le(b + p) != 0x06054b50u || p + 22 + mf_rd16le(b + p + 20) != n)
            continue;
        uint64_t cd_size = mf_rd32le(b + p + 12), cd_off = mf_rd32le(b + p + 16);
        if (cd_size > p || cd_off > p - cd_size)
            return 0; /* ZIP64 or inconsistent: try the data as it is */
        return (int64_t)(p - cd_size - cd_off);
    }
    return -1;
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
    if (n >= 4 && (memcmp(b, "PK\3\4", 4) == 0 || memcmp(b, "PK\5\6", 4) == 0)) {
        scan_zip(sc, b, n, false); /* torch.load's _is_zipfile test */
        return;
    }
    if (n >= 6 && memcmp(b, "\x93NUMPY", 6) == 0) {
        scan_npy(sc, b, n);
        return;
    }
    if (is_tar(b, n)) {
        scan_tar(sc, b, n);
        return;
    }
    const char *other = other_format(b, n);
    if (other) {
        add_finding(sc, MF_VERDICT_SAFE, 0, NULL, NULL, "a %s file: holds no pickle", other);
        scan_quiet_pickles(sc, b, n); /* a polyglot that also unpickles */
    } else {
        scan_pickles(sc, b, n, 0);
    }
    int64_t zs = appended_zip_start(b, n);
    if (zs >= 0) {
        int64_t fb = sc->file_base;
        sc->file_base = fb >= 0 ? fb + zs : -1;
        scan_zip(sc, b + zs, n - (uint64_t)zs, true);
        sc->file_base = fb;
    }
}

/* ------------------------------------------------ other formats' code */

static int on_lambda(void *ctx, const mf_keras_lambda *l)
{
    scanner *sc = ctx;
    bool code = strcmp(l->kind, "bytecode") == 0 || strcmp(l->kind, "raw") == 0;
    add_finding(sc, code ? MF_VERDICT_DANGEROUS : MF_VERDICT_UNKNOWN, -1, NULL, NULL,
                "Keras Lambda layer \"%s\" (%s, in %s): %s", l->layer, l->kind, l->source,
                code ? "loading the model runs the Python code it carries"
                     : "loading the model calls a function by name");
    return 0;
}

/* Keras Lambda layers and TensorFlow ops that run code or touch files:
 * the other formats in which loading means running something. */
static void scan_model_code(scanner *sc, const char *path)
{
    mf_detection d;
    mf_status st;
    mf_status_init(&st);
    if (mf_detect(path, &d, &st) ||
        (d.format != MF_FMT_HDF5 && d.format != MF_FMT_KERAS &&
         d.format != MF_FMT_TF_SAVEDMODEL && d.format != MF_FMT_TF_GRAPHDEF)) {
        mf_status_clear(&st);
        return;
    }
    mf_model *m;
    if (mf_open_model(path, 0, &m, &st)) {
        add_finding(sc, MF_VERDICT_SAFE, -1, NULL, NULL,
                    "a %s file that cannot be opened to look for code in it: %s",
                    mf_format_name(d.format), st.msg);
        mf_status_clear(&st);
        return;
    }
    if (d.format == MF_FMT_HDF5 || d.format == MF_FMT_KERAS) {
        if (mf_keras_find_lambdas(m, on_lambda, sc, &st) < 0)
            add_finding(sc, MF_VERDICT_UNKNOWN, -1, NULL, NULL,
                        "the Keras architecture cannot be read: %s", st.msg);
    } else {
        mf_tf_finding *f = NULL;
        size_t n = 0;
        if (mf_tf_find_dangerous_ops(m, &f, &n, &st) == 0) {
            for (size_t i = 0; i < n; i++)
                add_finding(sc, f[i].level == MF_TF_DANGER ? MF_VERDICT_DANGEROUS : MF_VERDICT_SAFE,
                            -1, f[i].op, NULL, "TensorFlow op %s in node \"%s\"%s%s: %s",
                            f[i].op, f[i].node, f[i].function ? " of function " : "",
                            f[i].function ? f[i].function : "", f[i].why);
            free(f);
        } else {
            add_finding(sc, MF_VERDICT_UNKNOWN, -1, NULL, NULL,
                        "the TensorFlow graph cannot be read: %s", st.msg);
        }
    }
    mf_status_clear(&st);
    mf_close(m);
}

/* ---------------------------------------------------------------- API */

static int scan_run(const char *path, const uint8_t *b, uint64_t n, bool is_file,
                    mf_scan_report **out, mf_status *st)
{
    *out = NULL;
    mf_scan_report *r = calloc(1, sizeof(*r));
    if (!r || !(r->arena = mf_arena_new())) {
        free(r);
        return mf_oom(st, path);
    }
    r->path = mf_arena_strdup(r->arena, path);
    scanner sc = {.r = r, .path = r->path, .member = "", .file_base = 0};
    scan_buffer(&sc, b, n);
    if (is_file) {
        sc.depth = 0;
        sc.file_base = -1;
        scan_model_code(&sc, path);
    }
    r->findings = sc.f.v;
    r->n_findings = sc.f.n;
    r->globals = sc.g.v;
    r->n_globals = sc.g.n;
    *out = r;
    return 0;
}

int mf_scan_bytes(const char *path, const uint8_t *b, uint64_t n, mf_scan_report **out,
                  mf_status *st)
{
    MF_ST_GUARD(st);
    return scan_run(path, b, n, false, out, st);
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
    int rc = scan_run(path, f.base, f.size, true, out, st);
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
        } else if (S_ISREG(sb.st_mode) && scan_one(names.v[i], fn, ctx, st, stop)) {
            rc = -1;
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
