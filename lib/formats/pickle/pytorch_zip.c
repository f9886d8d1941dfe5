/* pytorch_zip.c - torch.save's zip format (torch >= 1.6), read as
 * torch.load does (torch/serialization.py _load, caffe2/serialize/
 * inline_container.cc): the archive's folder is the first member's first
 * path component; <folder>/data.pkl is the object pickle, whose persistent
 * ids ('storage', storage_type, key, location, numel) name the records
 * <folder>/data/<key>; <folder>/byteorder says "little" or "big" (absent:
 * little). The archive is read as torch's miniz reads it (core/zip.h,
 * MF_ZIP_MINIZ) and records are looked up as miniz does: by central-
 * directory name, case-insensitively, through its binary search. STORED
 * records are mapped, never copied; a deflated data.pkl is inflated only
 * as far as its pickle goes. */
#include "formats/formats.h"
#include "formats/pickle/pytorch.h"

#include <stdlib.h>
#include <strings.h>

#define MAX_PICKLE (256ull << 20) /* an inflated data.pkl's pickle beyond this is refused */
#define FIRST_WINDOW (1u << 20)    /* first try at inflating a deflated data.pkl */

typedef struct zip_ctx {
    mf_model *m;
    const mf_zip *z;
    const char *file;
    const char *prefix; /* "archive/" */
    bool big_endian;
    pt_flagged flagged;
} zip_ctx;

/* getRecord: mz_zip_reader_locate_file with flags 0, i.e. miniz's
 * case-insensitive binary search over its sorted central directory. */
static const mf_zip_entry *find_record(const zip_ctx *c, const char *rel)
{
    char name[1024];
    if ((size_t)snprintf(name, sizeof(name), "%s%s", c->prefix, rel) >= sizeof(name))
        return NULL;
    return mf_zip_find(c->z, name);
}

/* A small text record ("version", "byteorder"); NULL when absent. */
static char *small_record(zip_ctx *c, const char *rel, mf_status *st)
{
    const mf_zip_entry *e = find_record(c, rel);
    if (!e || e->usize > 64)
        return NULL;
    uint8_t *buf;
    size_t n;
    mf_status tmp;
    mf_status_init(&tmp);
    char *s = NULL;
    if (mf_zip_extract(c->z, e, 64, &buf, &n, &tmp) == 0) {
        while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
            n--;
        s = mf_arena_strndup(c->m->arena, (const char *)buf, n);
        free(buf);
    } else {
        mf_breach(st, c->file, (int64_t)e->local_offset, "record \"%s\" cannot be read: %s",
                  e->name, tmp.msg);
    }
    mf_status_clear(&tmp);
    return s;
}

/* torch's persistent_load: ('storage', storage_type, key, location, numel). */
static pk_obj *persistent_load(void *ctx, pk_machine *pm, pk_obj *pid, uint64_t off,
                               mf_status *st)
{
    (void)ctx;
    pk_obj *const *v = pid->kind == PK_TUPLE ? pid->u.c.v : NULL;
    if (!v || pid->u.c.n != 5 || !pk_is_str(v[0], "storage"))
        return pk_fail(pm, off, st, "persistent id is not ('storage', type, key, location, "
                                    "numel)"), NULL;
    if (v[1]->kind != PK_GLOBAL || v[1]->u.g.id != PKN_STORAGE_CLASS)
        return pk_fail(pm, off, st, "persistent id names a storage type that is not a torch "
                                    "storage class"), NULL;
    int64_t numel;
    if (v[2]->kind != PK_STR || v[3]->kind != PK_STR || !pk_as_int(v[4], &numel) || numel < 0)
        return pk_fail(pm, off, st, "persistent id: key and location must be strings and "
                                    "numel a non-negative integer"), NULL;
    pk_obj *s = pk_new_obj(pm, PK_STORAGE, off);
    if (!s)
        return mf_oom(st, NULL), NULL;
    s->u.st.dtype = v[1]->u.g.dtype;
    s->u.st.key = pk_cstr(pk_arena(pm), v[2]);
    s->u.st.location = pk_cstr(pk_arena(pm), v[3]);
    s->u.st.numel = (uint64_t)numel;
    if (!s->u.st.key || !s->u.st.location)
        return mf_oom(st, NULL), NULL;
    return s;
}

static int resolve(void *ctx, const pk_obj *sto, pt_storage_ref *out, mf_status *st)
{
    zip_ctx *c = ctx;
    char rel[600];
    snprintf(rel, sizeof(rel), "data/%s", sto->u.st.key);
    const mf_zip_entry *e = find_record(c, rel);
    if (!e)
        return mf_fail(st, MF_ERR_FORMAT, c->file, -1,
                       "data.pkl refers to storage \"%s\" but the archive has no record \"%s%s\"",
                       sto->u.st.key, c->prefix, rel);
    const mf_dtype_info *di = mf_dtype_info_of(sto->u.st.dtype);
    uint64_t need;
    if (!di || mf_mul_ovf(sto->u.st.numel, di->block_bytes, &need))
        return mf_fail(st, MF_ERR_FORMAT, c->file, (int64_t)e->cd_offset,
                       "storage \"%s\": %llu elements overflow 64 bits", sto->u.st.key,
                       (unsigned long long)sto->u.st.numel);
    if (e->usize < need)
        return mf_fail(st, MF_ERR_FORMAT, c->file, (int64_t)e->cd_offset,
                       "data.pkl declares storage \"%s\" of %llu %s elements (%llu bytes) but "
                       "its record holds %llu bytes",
                       sto->u.st.key, (unsigned long long)sto->u.st.numel, di->name,
                       (unsigned long long)need, (unsigned long long)e->usize);
    out->nbytes = need;
    out->file = 0;
    out->big_endian = c->big_endian;
    if (e->method == 0) {
        out->data = mf_zip_stored_span(c->z, e, st); /* fetched when streamed */
        if (!out->data)
            return -1;
        out->file_offset = e->data_offset;
        return 0;
    }
    if (e->method != 8)
        return mf_fail(st, MF_ERR_UNSUPPORTED, c->file, (int64_t)e->cd_offset,
                       "record \"%s\": compression method %u is not supported", e->name,
                       e->method);
    /* deflated (torch writes STORED records; other zip tools may not) */
    pt_stream_src *src = mf_arena_alloc(c->m->arena, sizeof(*src));
    if (!src)
        return mf_oom(st, c->file);
    src->kind = PT_SRC_ZIP;
    src->e = e;
    src->base = e->data_offset;
    out->data = NULL;
    out->priv = src;
    out->file_offset = e->data_offset;
    return 0;
}

static void note_anomalies(mf_model *m, const mf_zip *z, unsigned flags, mf_status *st)
{
    size_t names = 0, flagged = 0;
    for (size_t i = 0; i < z->n; i++) {
        const mf_zip_entry *e = &z->entries[i];
        names += e->name_mismatch;
        flagged += (e->flags & 1) != 0;
        if ((flags & MF_OPEN_STRICT) && !e->local_ok)
            mf_breach(st, z->file, (int64_t)e->local_offset,
                      "zip: member \"%s\": no valid local header", e->name);
        else if ((flags & MF_OPEN_STRICT) && e->name_mismatch)
            mf_breach(st, z->file, (int64_t)e->local_offset,
                      "zip: member \"%s\": the local header names another file", e->name);
    }
    if (names)
        mf_model_note(m, "%zu zip members have a local header name that differs from the "
                         "central directory (read by the central name, as torch does)", names);
    if (flagged)
        mf_model_note(m, "%zu zip members are marked encrypted; torch ignores the flag and so "
                         "does mfmt", flagged);
}

static int null_sink(void *ctx, const void *buf, size_t n, mf_status *st)
{
    (void)ctx; (void)buf; (void)n; (void)st;
    return 0;
}

/* validate: every member's CRC-32 (torch's miniz does not check them). */
static void check_crcs(const mf_zip *z, mf_status *st)
{
    for (size_t i = 0; i < z->n; i++) {
        mf_status tmp;
        mf_status_init(&tmp);
        if (mf_zip_stream(z, &z->entries[i], true, null_sink, NULL, &tmp))
            mf_status_merge(st, &tmp);
        mf_status_clear(&tmp);
    }
}

/* A deflated data.pkl: torch unpickles it up to STOP, so it is inflated a
 * window at a time (1 MiB, doubling) until the pickle completes in it; a
 * member that inflates to a gigabyte after a small pickle (a zip bomb)
 * costs only the window. Beyond MAX_PICKLE, a clear error. */
static int load_deflated_pickle(zip_ctx *c, pt_model_info *info, const mf_zip_entry *e,
                                const pk_opts *po, pk_obj **root, size_t *used, size_t *n,
                                mf_status *st)
{
    for (size_t want = FIRST_WINDOW;; want *= 2) {
        bool whole = e->usize <= want;
        if (!whole && want > MAX_PICKLE)
            return mf_fail(st, MF_ERR_FORMAT, c->file, (int64_t)e->local_offset,
                           "record \"%s\" inflates to %llu bytes and its pickle does not end "
                           "in the first %llu MiB: refused (a zip bomb?)", e->name,
                           (unsigned long long)e->usize, MAX_PICKLE >> 20);
        uint8_t *buf;
        if (mf_zip_extract_prefix(c->z, e, whole ? (size_t)e->usize : want, &buf, n, st))
            return -1;
        mf_status tmp;
        mf_status_init(&tmp);
        int rc = pk_load(info->pm, buf, *n, root, used, NULL, whole ? st : &tmp);
        mf_status_clear(&tmp);
        if (rc == 0 || whole) {
            if (rc) {
                free(buf);
                return -1;
            }
            free(info->buf);
            info->buf = buf;
            return 0;
        }
        free(buf);
        pk_free(info->pm); /* start again on a fresh machine */
        info->pm = pk_new(po);
        if (!info->pm)
            return mf_oom(st, c->file);
    }
}

static int run_pickle(zip_ctx *c, pt_model_info *info, const mf_zip_entry *e, pk_opts *po,
                      const uint8_t **p, size_t *n, pk_obj **root, size_t *used,
                      mf_status *st)
{
    info->pm = pk_new(po);
    if (!info->pm)
        return mf_oom(st, c->file);
    if (e->method != 0) {
        if (load_deflated_pickle(c, info, e, po, root, used, n, st))
            return -1;
        *p = info->buf;
        return 0;
    }
    *p = mf_zip_stored_data(c->z, e, st);
    *n = (size_t)e->usize;
    if (!*p)
        return -1;
    return pk_load(info->pm, *p, *n, root, used, NULL, st);
}

static int read_archive(mf_model *m, zip_ctx *c, unsigned flags, mf_status *st)
{
    pt_model_info *info = pt_info(m);
    if (!info)
        return mf_oom(st, c->file);
    const char *first = c->z->entries[0].name, *slash = strchr(first, '/');
    if (!slash)
        return mf_fail(st, MF_ERR_FORMAT, c->file, (int64_t)c->z->entries[0].cd_offset,
                       "zip member \"%s\" is not in a folder: torch.load needs every record "
                       "under the archive's folder", first);
    c->prefix = mf_arena_strndup(m->arena, first, (size_t)(slash - first) + 1);
    const mf_zip_entry *pkl = c->prefix ? find_record(c, "data.pkl") : NULL;
    if (!pkl)
        return mf_fail(st, MF_ERR_FORMAT, c->file, -1, "archive has no record \"%sdata.pkl\"",
                       c->prefix ? c->prefix : "");
    const char *version = small_record(c, "version", st);
    if (!version)
        version = small_record(c, ".data/version", st);
    const char *order = small_record(c, "byteorder", st);
    c->big_endian = order && strcmp(order, "big") == 0;
    if (order && strcmp(order, "big") != 0 && strcmp(order, "little") != 0)
        mf_breach(st, c->file, -1, "record \"%sbyteorder\" says \"%s\", not little or big",
                  c->prefix, order);
    snprintf(m->version, sizeof(m->version), "torch zip v%s%s", version ? version : "?",
             c->big_endian ? ", big-endian" : "");
    const uint8_t *p = NULL;
    size_t n = 0, used = 0;
    pk_obj *root = NULL;
    pk_opts po = {.file = c->file, .member = pkl->name,
                  .origin = pkl->method == 0 ? pkl->data_offset : 0,
                  .on_global = pt_on_global, .persistent_load = persistent_load,
                  .ctx = &c->flagged};
    if (run_pickle(c, info, pkl, &po, &p, &n, &root, &used, st))
        return -1;
    m->header_bytes += n;
    info->root = root;
    if (used < pkl->usize && (flags & MF_OPEN_STRICT)) /* n may be a window of it */
        mf_breach(st, c->file, (int64_t)(po.origin + used),
                  "%s: %llu bytes after the pickle's STOP", pkl->name,
                  (unsigned long long)(pkl->usize - used));
    pt_tree_opts to = {.file = c->file, .resolve = resolve, .ctx = c, .file_index = 0,
                       .pickle_base = pkl->method == 0 ? p : NULL, .pickle_size = n,
                       .pickle_offset = pkl->data_offset, .objects = pk_objects(info->pm),
                       .info = info};
    if (pt_tree_collect(m, root, &to, st))
        return -1;
    pt_note_flagged(m, &c->flagged, "data.pkl");
    return 0;
}

/* ------------------------------------------------- a lone saved tensor */

static bool record_says_big(const zip_ctx *c)
{
    const mf_zip_entry *e = find_record(c, "byteorder");
    uint8_t *buf = NULL;
    size_t n = 0;
    mf_status tmp;
    mf_status_init(&tmp);
    bool big = e && e->usize <= 64 && mf_zip_extract(c->z, e, 64, &buf, &n, &tmp) == 0 &&
               n >= 3 && memcmp(buf, "big", 3) == 0;
    free(buf);
    mf_status_clear(&tmp);
    return big;
}

static int lone_tensor_of(const zip_ctx *c, const pk_obj *x, const char *file,
                          pt_lone_tensor *out, mf_status *st)
{
    if (!x || x->kind != PK_TENSOR || x->u.t.storage->kind != PK_STORAGE)
        return mf_fail(st, MF_ERR_FORMAT, file, -1, "the saved object is not one tensor");
    const pk_obj *sto = x->u.t.storage, *size = x->u.t.size, *stride = x->u.t.stride;
    const mf_dtype_info *di = mf_dtype_info_of(x->u.t.dtype);
    if (!di || di->block_elems != 1 || !di->block_bytes || size->u.c.n > MF_MAX_DIMS ||
        size->u.c.n != stride->u.c.n)
        return mf_fail(st, MF_ERR_UNSUPPORTED, file, -1, "saved tensor: unsupported type or rank");
    char rel[600];
    snprintf(rel, sizeof(rel), "data/%s", sto->u.st.key);
    const mf_zip_entry *e = find_record(c, rel);
    if (!e)
        return mf_fail(st, MF_ERR_FORMAT, file, -1, "no record \"%s%s\" for the saved tensor",
                       c->prefix, rel);
    if (e->method != 0)
        return mf_fail(st, MF_ERR_UNSUPPORTED, file, (int64_t)e->cd_offset,
                       "record \"%s\" is compressed (torch stores them)", e->name);
    out->dtype = x->u.t.dtype;
    out->ndim = (int)size->u.c.n;
    uint64_t numel = 1, expect = 1;
    bool contiguous = true;
    for (int d = out->ndim - 1; d >= 0; d--) {
        int64_t sz, sd;
        if (!pk_as_int(size->u.c.v[d], &sz) || !pk_as_int(stride->u.c.v[d], &sd) || sz < 0)
            return mf_fail(st, MF_ERR_FORMAT, file, -1, "saved tensor: bad size or stride");
        out->shape[d] = sz;
        if (sz != 1 && (uint64_t)sd != expect)
            contiguous = false;
        if (mf_mul_ovf(expect, (uint64_t)sz, &expect) || mf_mul_ovf(numel, (uint64_t)sz, &numel))
            return mf_fail(st, MF_ERR_FORMAT, file, -1, "saved tensor: size overflows");
    }
    if (!contiguous)
        return mf_fail(st, MF_ERR_UNSUPPORTED, file, -1, "saved tensor is not contiguous");
    uint64_t start, bytes, end;
    if (x->u.t.offset < 0 || mf_mul_ovf((uint64_t)x->u.t.offset, di->block_bytes, &start) ||
        mf_mul_ovf(numel, di->block_bytes, &bytes) || mf_add_ovf(start, bytes, &end) ||
        end > e->usize)
        return mf_fail(st, MF_ERR_FORMAT, file, (int64_t)e->cd_offset,
                       "saved tensor reaches past its record \"%s\" (%llu bytes)", e->name,
                       (unsigned long long)e->usize);
    const uint8_t *p = mf_zip_stored_data(c->z, e, st);
    if (!p)
        return -1;
    out->data = p + start;
    out->nbytes = bytes;
    out->big_endian = c->big_endian;
    return 0;
}

int pt_zip_lone_tensor(const uint8_t *b, uint64_t n, const char *file, uint64_t origin,
                       pt_lone_tensor *out, mf_status *st)
{
    mf_arena *a = mf_arena_new();
    if (!a)
        return mf_oom(st, file);
    mf_zip z;
    zip_ctx c = {.z = &z, .file = file};
    pk_machine *pm = NULL;
    int rc = mf_zip_open_as(&z, MF_ZIP_MINIZ, b, n, file, a, st);
    if (rc == 0 && z.n == 0)
        rc = mf_fail(st, MF_ERR_FORMAT, file, (int64_t)origin, "saved tensor: empty archive");
    const char *slash = rc == 0 ? strchr(z.entries[0].name, '/') : NULL;
    if (rc == 0 && !slash)
        rc = mf_fail(st, MF_ERR_FORMAT, file, (int64_t)origin,
                     "saved tensor: zip member \"%s\" is not in a folder", z.entries[0].name);
    const mf_zip_entry *pkl = NULL;
    if (rc == 0) {
        c.prefix = mf_arena_strndup(a, z.entries[0].name, (size_t)(slash - z.entries[0].name) + 1);
        pkl = c.prefix ? find_record(&c, "data.pkl") : NULL;
        if (!pkl || pkl->method != 0)
            rc = mf_fail(st, MF_ERR_FORMAT, file, (int64_t)origin,
                         "saved tensor: no stored record \"%sdata.pkl\"", c.prefix ? c.prefix : "");
    }
    pk_obj *root = NULL;
    if (rc == 0) {
        c.big_endian = record_says_big(&c);
        pk_opts po = {.file = file, .member = pkl->name, .origin = origin + pkl->data_offset,
                      .persistent_load = persistent_load};
        const uint8_t *p = mf_zip_stored_data(&z, pkl, st);
        size_t used;
        pm = pk_new(&po);
        rc = !p ? -1 : !pm ? mf_oom(st, file)
                           : pk_load(pm, p, (size_t)pkl->usize, &root, &used, NULL, st);
    }
    if (rc == 0)
        rc = lone_tensor_of(&c, root, file, out, st);
    pk_free(pm);
    mf_arena_free(a);
    return rc;
}

#include "formats/hf/shard_index.h"

/* What torch reads is what is described; where other zip readers (or a
 * different end record) would see other members, or members hide behind
 * one another, the model says so (`mfmt scan` reads every one). */
static int note_other_readings(mf_model *m, const mf_zip *z, mf_status *st_out)
{
    mf_zip_ambiguity amb;
    if (mf_zip_ambiguities(z, &amb))
        return mf_oom(st_out, z->file);
    if (amb.dup_names)
        mf_model_note(m, "%zu zip members share a name with another (ignoring case, as miniz "
                         "compares): torch reads the one its binary search meets, e.g. \"%s\"",
                      amb.dup_names, amb.dup_example);
    if (amb.overlaps)
        mf_model_note(m, "%zu zip members overlap other members' bytes (e.g. \"%s\")",
                      amb.overlaps, amb.overlap_example);
    mf_arena *a = mf_arena_new();
    mf_status st;
    mf_status_init(&st);
    mf_zip py;
    if (a && mf_zip_open_as(&py, MF_ZIP_PYTHON, z->base, z->size, z->file, a, &st) == 0) {
        if (!mf_zip_same(z, &py))
            mf_model_note(m, "Python's zipfile reads this archive differently (%zu members, "
                             "central directory at %llu): described as torch's miniz reads it",
                          py.n, (unsigned long long)py.cd_offset);
    } else if (a) {
        mf_model_note(m, "Python's zipfile cannot read this archive (%s): described as torch's "
                         "miniz reads it", st.msg);
    }
    bool oom = !a || st.code == MF_ERR_NOMEM;
    mf_status_clear(&st);
    mf_arena_free(a);
    return oom ? mf_oom(st_out, z->file) : 0;
}

static int open_pytorch_zip(mf_model *m, const char *path, unsigned flags, mf_status *st)
{
    uint32_t fi;
    if (mf_model_add_file(m, path, &fi, st))
        return -1;
    const mf_file *f = &m->files[fi];
    if (f->size > 0 && f->base[0] == '{') /* pytorch_model.bin.index.json */
        return mf_open_shard_index(m, path, flags, false, st);
    pt_model_info *info = pt_info(m);
    if (!info)
        return mf_oom(st, path);
    if (mf_zip_open_as(&info->zip, MF_ZIP_MINIZ, f->base, f->size, m->files[fi].path, m->arena,
                       st))
        return -1;
    if (info->zip.n == 0)
        return mf_fail(st, MF_ERR_FORMAT, path, -1, "zip archive has no members");
    zip_ctx c = {.m = m, .z = &info->zip, .file = m->files[fi].path};
    if (note_other_readings(m, &info->zip, st))
        return -1;
    int rc = read_archive(m, &c, flags, st);
    if (rc == 0) {
        note_anomalies(m, &info->zip, flags, st);
        if (flags & MF_OPEN_STRICT)
            check_crcs(&info->zip, st);
    }
    return rc == 0 && mf_ok(st) ? 0 : -1;
}

/* ------------------------------------------------------------- detection */

/* torch.load's reading of a zip (miniz): the folder of the first member,
 * and <folder>/data.pkl found as miniz finds it (case-insensitively). */
static bool torch_archive(const uint8_t *b, uint64_t size, const char *path, mf_arena *a,
                          size_t *members)
{
    mf_status st;
    mf_status_init(&st);
    mf_zip z;
    bool yes = false;
    if (mf_zip_open_as(&z, MF_ZIP_MINIZ, b, size, path, a, &st) == 0 && z.n) {
        const char *slash = strchr(z.entries[0].name, '/');
        char want[1100];
        if (slash && (size_t)(slash - z.entries[0].name) < 1000) {
            snprintf(want, sizeof(want), "%.*s/data.pkl", (int)(slash - z.entries[0].name),
                     z.entries[0].name);
            yes = mf_zip_find(&z, want) != NULL;
        }
        *members = z.n;
    }
    mf_status_clear(&st);
    return yes;
}

/* torch.save's zip: as torch reads it first, then ARCHIVE/data.pkl (any
 * single top folder) as zipfile reads it. */
static int probe_zip_archive(mf_probe *p)
{
    mf_arena *a = mf_arena_new();
    size_t n = 0;
    bool torch = a && torch_archive(p->b, p->size, p->path, a, &n);
    mf_arena_free(a);
    if (torch)
        return mf_probe_found(p, MF_FMT_PYTORCH_ZIP, "PyTorch zip archive (%zu members)", n);
    if (p->zip && (mf_zip_find_suffix(p->zip, "/data.pkl") || mf_zip_find(p->zip, "data.pkl")))
        return mf_probe_found(p, MF_FMT_PYTORCH_ZIP, "PyTorch zip archive (%zu members)",
                              p->zip->n);
    return MF_PROBE_NO;
}

/* pytorch_model.bin.index.json */
static int probe_bin_index(mf_probe *p)
{
    return p->size >= 2 && p->b[0] == '{' ? mf_probe_shard_index(p, true) : MF_PROBE_NO;
}

static const char *const pytorch_zip_extensions[] = {".pt", ".pth", ".ckpt", NULL};

const mf_reader mf_reader_pytorch_zip = {
    .format = MF_FMT_PYTORCH_ZIP,
    .name = "pytorch-zip",
    .extensions = pytorch_zip_extensions,
    .probe = probe_bin_index,
    .probe_zip = probe_zip_archive,
    .open = open_pytorch_zip,
    .stream = pt_stream,
    .close = pt_close,
    .is_mapping = mf_pytorch_is_mapping,
};
