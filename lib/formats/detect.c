/* detect.c - the format of a path, from its bytes (the name never decides).
 * Each reader recognises its own format (its probe, probe_zip or probe_dir
 * hook); this file asks them in registry order and keeps what is common:
 * the zip directory, the protobuf field summary, the fallbacks. */
#include "formats/formats.h"

bool mf_probe_has(const mf_probe *p, uint64_t off, uint64_t n)
{
    if (off > p->size || n > p->size - off)
        return false;
    mf_status st;
    mf_status_init(&st);
    bool ok = mf_source_need(p->b + off, n, &st) == 0;
    mf_status_clear(&st);
    return ok;
}

int mf_probe_found(mf_probe *p, mf_format f, const char *fmt, ...)
{
    p->out->format = f;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->out->detail, sizeof(p->out->detail), fmt, ap);
    va_end(ap);
    return MF_PROBE_YES;
}

bool mf_probe_dir_has(const mf_probe *p, const char *name)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", p->path, name);
    return mf_path_exists(path);
}

const mf_pb_summary *mf_probe_protobuf(mf_probe *p)
{
    if (p->pb_state == 0) {
        p->pb_state = -1;
        if (!p->b || p->size < 2)
            return NULL;
        mf_status st;
        mf_status_init(&st);
        mf_cursor c;
        mf_cur_init(&c, p->b, p->size, p->path, &st);
        mf_pb_summary s = {0};
        mf_pb_field f;
        int r;
        while ((r = mf_pb_next(&c, &f)) == 1) {
            s.n_fields++;
            if (f.number == 1 && f.wire == 2 && !s.first_len1.data)
                s.first_len1 = f;
            if (f.number < 64)
                *(f.wire == 2 ? &s.len : &s.var) |= 1ull << f.number;
        }
        mf_status_clear(&st);
        if (r == 0 && s.n_fields > 0) {
            p->pb = s;
            p->pb_state = 1;
        }
    }
    return p->pb_state == 1 ? &p->pb : NULL;
}

static void hex_head(mf_probe *p)
{
    char *d = p->out->detail;
    size_t cap = sizeof(p->out->detail);
    int k = snprintf(d, cap, "%llu bytes; first bytes:", (unsigned long long)p->size);
    for (uint64_t i = 0; i < p->size && i < 16 && k > 0 && (size_t)k < cap; i++)
        k += snprintf(d + k, cap - (size_t)k, " %02x", p->b[i]);
}

typedef enum { ASK_BYTES, ASK_ZIP, ASK_DIR } ask_kind;

/* Asks every reader with the hook of that kind, in registry order: the
 * first YES wins, else the first WEAK. Returns whether one answered. */
static bool ask_readers(mf_probe *p, ask_kind kind)
{
    mf_detection *result = p->out, scratch, weak;
    bool have_weak = false;
    const mf_reader *r;
    for (size_t i = 0; (r = mf_reader_at(i)) != NULL; i++) {
        int (*fn)(mf_probe *) = kind == ASK_BYTES ? r->probe
                                : kind == ASK_ZIP ? r->probe_zip : r->probe_dir;
        if (!fn)
            continue;
        memset(&scratch, 0, sizeof(scratch));
        p->out = &scratch;
        int v = fn(p);
        p->out = result;
        if (v == MF_PROBE_YES) {
            *result = scratch;
            return true;
        }
        if (v == MF_PROBE_WEAK && !have_weak) {
            weak = scratch;
            have_weak = true;
        }
    }
    if (have_weak)
        *result = weak;
    return have_weak;
}

/* A file that starts as a zip archive is judged by its members only. The
 * zip probes see the directory as zipfile reads it (p->zip; NULL when
 * that fails: a loader reading zips its own way, as torch's miniz does,
 * may still take the file). */
static void detect_zip(mf_probe *p)
{
    mf_arena *a = mf_arena_new();
    mf_status st;
    mf_status_init(&st);
    mf_zip z;
    bool readable = a && mf_zip_open(&z, p->b, p->size, p->path, a, &st) == 0;
    p->zip = readable ? &z : NULL;
    if (!ask_readers(p, ASK_ZIP)) {
        if (readable)
            mf_probe_found(p, MF_FMT_ZIP, "zip archive (%zu members)", z.n);
        else
            mf_probe_found(p, MF_FMT_ZIP, "zip archive (central directory unreadable)");
    }
    p->zip = NULL;
    mf_status_clear(&st);
    mf_arena_free(a);
}

/* Bytes that are not a zip archive: the probes' answer, else "unknown"
 * with the first bytes. */
static bool detect_bytes(mf_probe *p)
{
    if (ask_readers(p, ASK_BYTES))
        return true;
    p->out->format = MF_FMT_UNKNOWN;
    hex_head(p);
    return false;
}

static int detect_dir(const char *path, mf_detection *out)
{
    mf_probe p = {.path = path, .out = out};
    if (!ask_readers(&p, ASK_DIR))
        mf_probe_found(&p, MF_FMT_UNKNOWN, "a directory with no model files mfmt knows");
    return 0;
}

int mf_detect(const char *path, mf_detection *out, mf_status *st)
{
    memset(out, 0, sizeof(*out));
    if (mf_is_dir(path))
        return detect_dir(path, out);
    mf_file f;
    if (mf_map_file(path, &f, st))
        return -1;
    mf_probe p = {.path = path, .b = f.base, .size = f.size, .out = out};
    if (mf_zip_starts(p.b, p.size))
        detect_zip(&p);
    else
        detect_bytes(&p);
    mf_unmap_file(&f);
    return 0;
}

const mf_reader *mf_detect_bytes(const uint8_t *b, uint64_t n, const char *label,
                                 mf_detection *out)
{
    memset(out, 0, sizeof(*out));
    mf_probe p = {.path = label, .b = b, .size = n, .out = out};
    return detect_bytes(&p) ? mf_reader_for(out->format) : NULL;
}
