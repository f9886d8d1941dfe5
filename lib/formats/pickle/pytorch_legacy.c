/* pytorch_legacy.c - torch.save's legacy stream (torch < 1.6, or
 * _use_new_zipfile_serialization=False), as torch/serialization.py's
 * _legacy_save writes it and _legacy_load reads it: five pickles (the magic
 * number 0x1950a86a20f9469cfc6c, the protocol version 1001, sys_info, the
 * object, the sorted storage keys), then each storage in key order as an
 * 8-byte element count followed by its elements. Persistent ids are
 * ('storage', storage_type, root_key, location, numel, view_metadata). */
#include "formats/formats.h"
#include "core/tar.h"
#include "formats/pickle/pytorch.h"

#include <stdlib.h>

#define PROTOCOL_VERSION 1001

typedef struct legacy_ctx {
    pt_legacy *out;
    size_t cap;
} legacy_ctx;

bool pt_is_legacy_magic(const pk_obj *o)
{
    return o && o->kind == PK_BIGINT && o->u.s.n == strlen(PK_TORCH_LEGACY_MAGIC) &&
           memcmp(o->u.s.p, PK_TORCH_LEGACY_MAGIC, o->u.s.n) == 0;
}

static int add_storage(pk_machine *pm, legacy_ctx *c, const char *key, mf_dtype dt,
                       uint64_t numel, mf_status *st)
{
    pt_legacy *L = c->out;
    if (L->n_storages == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 16;
        pt_legacy_storage *v = mf_arena_calloc(pk_arena(pm), cap, sizeof(*v));
        if (!v)
            return mf_oom(st, NULL);
        if (L->n_storages)
            memcpy(v, L->storages, L->n_storages * sizeof(*v));
        L->storages = v;
        c->cap = cap;
    }
    pt_legacy_storage *s = &L->storages[L->n_storages++];
    memset(s, 0, sizeof(*s));
    s->key = key;
    s->dtype = dt;
    s->numel = numel;
    return 0;
}

static pk_obj *persistent_load(void *ctx, pk_machine *pm, pk_obj *pid, uint64_t off,
                               mf_status *st)
{
    legacy_ctx *c = ctx;
    pk_obj *const *v = pid->kind == PK_TUPLE ? pid->u.c.v : NULL;
    size_t n = v ? pid->u.c.n : 0;
    if (n >= 1 && pk_is_str(v[0], "module")) { /* a pickled nn.Module class and its source */
        pk_obj *o = pk_new_obj(pm, PK_OBJECT, off);
        if (!o)
            return mf_oom(st, NULL), NULL;
        o->u.o.args = pid;
        o->u.o.persistent = true;
        return o;
    }
    if (n < 5 || n > 6 || !pk_is_str(v[0], "storage"))
        return pk_fail(pm, off, st, "persistent id is not ('storage', type, key, location, "
                                    "numel, view)"), NULL;
    int64_t numel;
    if (v[1]->kind != PK_GLOBAL || v[1]->u.g.id != PKN_STORAGE_CLASS || v[2]->kind != PK_STR ||
        !pk_as_int(v[4], &numel) || numel < 0)
        return pk_fail(pm, off, st, "persistent id: bad storage type, key or size"), NULL;
    pk_obj *s = pk_new_obj(pm, PK_STORAGE, off);
    if (!s)
        return mf_oom(st, NULL), NULL;
    s->u.st.dtype = v[1]->u.g.dtype;
    s->u.st.key = pk_cstr(pk_arena(pm), v[2]);
    s->u.st.location = v[3]->kind == PK_STR ? pk_cstr(pk_arena(pm), v[3]) : "";
    s->u.st.numel = (uint64_t)numel;
    if (!s->u.st.key || !s->u.st.location)
        return mf_oom(st, NULL), NULL;
    if (add_storage(pm, c, s->u.st.key, s->u.st.dtype, (uint64_t)numel, st))
        return NULL;
    pk_obj *view = n == 6 ? v[5] : NULL;
    if (view && view->kind != PK_NONE) { /* (view_key, offset, view_size) */
        int64_t voff, vsize;
        if (view->kind != PK_TUPLE || view->u.c.n != 3 || !pk_as_int(view->u.c.v[1], &voff) ||
            !pk_as_int(view->u.c.v[2], &vsize) || voff < 0 || vsize < 0 ||
            (uint64_t)voff > (uint64_t)numel || (uint64_t)vsize > (uint64_t)numel - (uint64_t)voff)
            return pk_fail(pm, off, st, "persistent id: storage view outside its storage"), NULL;
        s->u.st.is_view = true;
        s->u.st.view_offset = (uint64_t)voff;
        s->u.st.numel = (uint64_t)vsize;
    }
    return s;
}

static int cmp_storage(const void *a, const void *b)
{
    return strcmp(((const pt_legacy_storage *)a)->key, ((const pt_legacy_storage *)b)->key);
}

static pt_legacy_storage *find_storage(pt_legacy *L, const char *key)
{
    size_t lo = 0, hi = L->n_storages;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int r = strcmp(L->storages[mid].key, key);
        if (r == 0)
            return &L->storages[mid];
        if (r < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* Sorted by key, one entry per root key (the first declaration wins, as
 * torch's deserialized_objects cache does). */
static void unique_storages(pt_legacy *L)
{
    if (!L->n_storages)
        return;
    /* stable for equal keys: sort indices by (key, position) */
    for (size_t i = 0; i < L->n_storages; i++)
        L->storages[i].data_offset = i;
    qsort(L->storages, L->n_storages, sizeof(*L->storages), cmp_storage);
    size_t k = 0;
    for (size_t i = 0; i < L->n_storages; i++) {
        if (k && strcmp(L->storages[k - 1].key, L->storages[i].key) == 0) {
            if (L->storages[i].data_offset < L->storages[k - 1].data_offset)
                L->storages[k - 1] = L->storages[i];
            continue;
        }
        L->storages[k++] = L->storages[i];
    }
    L->n_storages = k;
    for (size_t i = 0; i < k; i++)
        L->storages[i].data_offset = 0;
}

static int locate_storages(const uint8_t *b, uint64_t size, const char *file, pt_legacy *L,
                           uint64_t pos, mf_status *st)
{
    pk_obj *keys = L->keys;
    if (!keys || keys->kind != PK_LIST)
        return mf_fail(st, MF_ERR_FORMAT, file, (int64_t)L->pickle_end[3],
                       "the storage keys pickle is not a list");
    for (size_t i = 0; i < keys->u.c.n; i++) {
        pk_obj *k = keys->u.c.v[i];
        char key[256];
        if (k->kind != PK_STR || k->u.s.n >= sizeof(key))
            return mf_fail(st, MF_ERR_FORMAT, file, (int64_t)L->pickle_end[3],
                           "storage key %zu is not a string", i);
        memcpy(key, k->u.s.p, k->u.s.n);
        key[k->u.s.n] = 0;
        pt_legacy_storage *s = find_storage(L, key);
        if (!s)
            return mf_fail(st, MF_ERR_FORMAT, file, (int64_t)L->pickle_end[3],
                           "storage key \"%s\" is not used by the object pickle", key);
        if (size - pos < 8)
            return mf_fail(st, MF_ERR_FORMAT, file, (int64_t)pos,
                           "storage \"%s\": the file ends before its element count", key);
        uint64_t count = L->big_endian ? mf_rd64be(b + pos) : mf_rd64le(b + pos);
        if (count != s->numel)
            return mf_fail(st, MF_ERR_FORMAT, file, (int64_t)pos,
                           "storage \"%s\" holds %llu elements but the pickle declares %llu", key,
                           (unsigned long long)count, (unsigned long long)s->numel);
        uint64_t esz = mf_dtype_info_of(s->dtype) ? mf_dtype_info_of(s->dtype)->block_bytes : 0, nb;
        if (!esz || mf_mul_ovf(count, esz, &nb) || nb > size - pos - 8)
            return mf_fail(st, MF_ERR_FORMAT, file, (int64_t)pos + 8,
                           "storage \"%s\": %llu elements run past the end of the file "
                           "(%llu bytes left)", key, (unsigned long long)count,
                           (unsigned long long)(size - pos - 8));
        s->data_offset = pos + 8;
        s->located = true;
        pos += 8 + nb;
    }
    L->data_end = pos;
    return 0;
}

static int parse_pickles(pk_machine *pm, const uint8_t *b, uint64_t size, const char *file,
                         pt_legacy *out, bool *first_ok, mf_status *st)
{
    pk_obj **slots[5] = {&out->magic, &out->protocol, &out->sys_info, &out->root, &out->keys};
    uint64_t pos = 0;
    for (int i = 0; i < 5; i++) {
        pk_set_member(pm, NULL, pos);
        size_t used;
        if (pk_load(pm, b + pos, (size_t)(size - pos), slots[i], &used, NULL, st))
            return -1;
        pos += used;
        out->pickle_end[i] = pos;
        if (i == 0 && !(*first_ok = pt_is_legacy_magic(out->magic)))
            return mf_fail(st, MF_ERR_FORMAT, file, 0,
                           "the first pickle is not torch's legacy magic number");
        int64_t v;
        if (i == 1 && (!pk_as_int(out->protocol, &v) || v != PROTOCOL_VERSION))
            return mf_fail(st, MF_ERR_FORMAT, file, (int64_t)out->pickle_end[0],
                           "legacy protocol version must be %d", PROTOCOL_VERSION);
        if (i == 2) {
            pk_obj *le = pk_dict_get(out->sys_info, "little_endian");
            out->big_endian = le && le->kind == PK_BOOL && !le->u.b;
        }
        if (i == 3)
            unique_storages(out);
    }
    return locate_storages(b, size, file, out, pos, st);
}

int pt_legacy_parse(pk_machine *pm, const uint8_t *b, uint64_t size, const char *file,
                    pt_legacy *out, bool *first_ok, mf_status *st)
{
    memset(out, 0, sizeof(*out));
    *first_ok = false;
    legacy_ctx c = {.out = out};
    pk_set_persistent(pm, persistent_load, &c);
    int rc = parse_pickles(pm, b, size, file, out, first_ok, st);
    pk_set_persistent(pm, NULL, NULL);
    return rc;
}

/* ------------------------------------------------------------- reader */

typedef struct reader_ctx {
    pt_legacy L;
    const mf_file *f;
    pt_flagged flagged;
} reader_ctx;

static int resolve(void *ctx, const pk_obj *sto, pt_storage_ref *out, mf_status *st)
{
    reader_ctx *c = ctx;
    pt_legacy_storage *s = find_storage(&c->L, sto->u.st.key);
    if (!s || !s->located)
        return mf_fail(st, MF_ERR_FORMAT, c->f->path, -1,
                       "storage \"%s\" is not among the stored keys", sto->u.st.key);
    uint64_t esz = mf_dtype_info_of(s->dtype)->block_bytes;
    uint64_t start = sto->u.st.is_view ? sto->u.st.view_offset * esz : 0;
    if (start > s->numel * esz)
        return mf_fail(st, MF_ERR_FORMAT, c->f->path, (int64_t)s->data_offset,
                       "a view of storage \"%s\" starts past its end", sto->u.st.key);
    out->data = c->f->base + s->data_offset + start;
    out->file_offset = s->data_offset + start;
    /* what this reference declares, within what the root storage holds */
    uint64_t avail = s->numel * esz - start, declared;
    if (mf_mul_ovf(sto->u.st.numel, mf_dtype_info_of(sto->u.st.dtype)->block_bytes, &declared))
        declared = UINT64_MAX;
    out->nbytes = declared < avail ? declared : avail;
    out->big_endian = c->L.big_endian;
    out->file = 0;
    return 0;
}

/* Reads the legacy stream of file 0 into m (also used by the pickle reader
 * when a plain-looking pickle starts with the magic number). */
int pt_legacy_read(mf_model *m, unsigned flags, mf_status *st)
{
    const mf_file *f = &m->files[0];
    pt_model_info *info = pt_info(m);
    reader_ctx *c = info ? mf_arena_alloc(m->arena, sizeof(*c)) : NULL;
    if (!c)
        return mf_oom(st, f->path);
    c->f = f;
    pk_opts po = {.file = f->path, .on_global = pt_on_global, .ctx = &c->flagged};
    pk_free(info->pm);
    info->pm = pk_new(&po);
    if (!info->pm)
        return mf_oom(st, f->path);
    bool magic;
    if (pt_legacy_parse(info->pm, f->base, f->size, f->path, &c->L, &magic, st))
        return -1;
    m->format = MF_FMT_PYTORCH_PICKLE;
    m->header_bytes += c->L.pickle_end[4];
    snprintf(m->version, sizeof(m->version), "torch legacy (protocol %d)%s", PROTOCOL_VERSION,
             c->L.big_endian ? ", big-endian" : "");
    if (c->L.data_end < f->size && (flags & MF_OPEN_STRICT))
        mf_breach(st, f->path, (int64_t)c->L.data_end, "%llu bytes after the last storage",
                  (unsigned long long)(f->size - c->L.data_end));
    pt_tree_opts to = {.file = f->path, .resolve = resolve, .ctx = c, .pickle_base = f->base,
                       .pickle_size = c->L.pickle_end[4], .objects = pk_objects(info->pm),
                       .info = info};
    if (pt_tree_collect(m, c->L.root, &to, st))
        return -1;
    pt_note_flagged(m, &c->flagged, "the pickle");
    return mf_ok(st) ? 0 : -1;
}

int pt_tar_read(mf_model *m, unsigned flags, mf_status *st);

/* torch.load tries tarfile first (the oldest format), then the stream. */
static int open_legacy(mf_model *m, const char *path, unsigned flags, mf_status *st)
{
    if (mf_model_add_file(m, path, NULL, st))
        return -1;
    if (mf_tar_probe(m->files[0].base, m->files[0].size))
        return pt_tar_read(m, flags, st);
    return pt_legacy_read(m, flags, st);
}

/* ------------------------------------------------------------- detection */

/* The pickle that torch.save's legacy format starts with: protocol 2,
 * LONG1 of the magic number 0x1950a86a20f9469cfc6c. */
static const uint8_t torch_legacy_magic[] = {0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c,
                                             0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19};

static int probe_legacy(mf_probe *p)
{
    if (p->size < 2)
        return MF_PROBE_NO;
    if (p->size >= sizeof(torch_legacy_magic) &&
        memcmp(p->b, torch_legacy_magic, sizeof(torch_legacy_magic)) == 0)
        return mf_probe_found(p, MF_FMT_PYTORCH_PICKLE,
                              "PyTorch legacy (pickle protocol 2 + magic number)");
    /* torch.load compares the magic number's value: any spelling works */
    if (pk_starts_torch_legacy(p->b, (size_t)p->size))
        return mf_probe_found(p, MF_FMT_PYTORCH_PICKLE,
                              "PyTorch legacy (magic number spelled otherwise)");
    return MF_PROBE_NO;
}

/* torch.load's first try: Python's tarfile (core/tar.h). A legacy torch
 * checkpoint has members storages, tensors and pickle. */
static int probe_tar(mf_probe *p)
{
    if (!mf_tar_probe(p->b, p->size))
        return MF_PROBE_NO;
    mf_arena *a = mf_arena_new();
    mf_status st;
    mf_status_init(&st);
    mf_tar t;
    int r = MF_PROBE_NO;
    if (a && mf_tar_open(&t, p->b, p->size, p->path, a, &st) == 0) {
        if (mf_tar_find(&t, "pickle") && mf_tar_find(&t, "storages"))
            r = mf_probe_found(p, MF_FMT_PYTORCH_PICKLE, "PyTorch legacy tar (%zu members)", t.n);
    }
    mf_status_clear(&st);
    mf_arena_free(a);
    return r;
}

int mf_pt_legacy_stream(const pk_obj *first, pk_machine *pm, const uint8_t *b, uint64_t n,
                        const char *file, uint64_t *end, mf_status *st)
{
    if (!pt_is_legacy_magic(first))
        return 0;
    pt_legacy L;
    bool magic;
    mf_status why;
    mf_status_init(&why);
    *end = n;
    int rc = pt_legacy_parse(pm, b, n, file, &L, &magic, &why);
    if (rc && why.code == MF_ERR_NOMEM)
        mf_oom(st, file);
    else if (rc) /* the finding says which stream broke the rule */
        mf_fail(st, MF_ERR_FORMAT, NULL, -1, "legacy torch stream: %s", why.msg);
    else
        *end = L.data_end;
    mf_status_clear(&why);
    return rc ? -1 : 1;
}

/* The same reader, registered a second time for its tar probe, which must
 * run before HDF5's (a tar's first member's data sits at byte 512). */
const mf_reader mf_reader_pytorch_tar = {
    .format = MF_FMT_PYTORCH_PICKLE,
    .name = "pytorch-pickle",
    .probe = probe_tar,
    .open = open_legacy,
    .stream = pt_stream,
    .close = pt_close,
    .is_mapping = mf_pytorch_is_mapping,
    .scan = &(const mf_scan_hooks){
        .tar_loader = "torch.load",
        .tar_members = mf_pt_tar_members,
        .walk_tar_member = mf_pt_tar_walk_member,
    },
};

const mf_reader mf_reader_pytorch_pickle = {
    .format = MF_FMT_PYTORCH_PICKLE,
    .name = "pytorch-pickle",
    .probe = probe_legacy,
    .open = open_legacy,
    .stream = pt_stream,
    .close = pt_close,
    .is_mapping = mf_pytorch_is_mapping,
    .scan = &(const mf_scan_hooks){
        .pickle_stream = mf_pt_legacy_stream,
    },
};
