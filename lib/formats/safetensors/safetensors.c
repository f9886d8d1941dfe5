/* safetensors.c - reader for huggingface/safetensors files.
 * Rules follow the reference implementation (safetensors/src/tensor.rs):
 * 8-byte little-endian header length N, N bytes of UTF-8 JSON starting with
 * '{', then the data section; every tensor {dtype, shape, data_offsets},
 * offsets contiguous from 0 to the end of the data section. */
#include "formats/formats.h"
#include "formats/safetensors/safetensors.h"
#include "formats/hf/shard_index.h"
#include "core/json_build.h"

#include <jansson.h>
#include <stdlib.h>
#include <sys/stat.h>

#define MAX_HEADER 100000000ull /* the reference's MAX_HEADER_SIZE */

typedef struct entry {
    mf_tensor *t; /* index into m->tensors is stable, pointer is not */
    size_t ti;
    uint64_t begin, end;
    bool ok;
} entry;

static int cmp_entry(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

/* A JSON non-negative integer, or -1 with a breach. */
static int json_uint(json_t *v, uint64_t *out)
{
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return -1;
    *out = (uint64_t)json_integer_value(v);
    return 0;
}

static const char *json_kind(json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return json_integer_value(v) < 0 ? "a negative integer" : "an integer";
    case JSON_REAL: return "a float";
    case JSON_TRUE: case JSON_FALSE: return "a boolean";
    default: return "null";
    }
}

/* Where a value of the header is, for messages: the header text and the
 * offset in it of the member's value being read (-1: not found). */
typedef struct hpos {
    const char *t;
    size_t n;
    int64_t at;
} hpos;

/* The file offset of the value at key (and index >= 0 in it) under h->at;
 * the member's own value when that is absent, byte 8 when nothing is known. */
static int64_t at(const hpos *h, const char *key, int index)
{
    if (h->at < 0)
        return 8;
    mf_json_step path[2] = {{key, 0}, {NULL, (size_t)(index < 0 ? 0 : index)}};
    int64_t v = key ? mf_json_locate(h->t, h->n, (size_t)h->at, path, index < 0 ? 1 : 2) : -1;
    return 8 + (v >= 0 ? v : h->at);
}

static int read_metadata(mf_model *m, const char *file, json_t *md, bool with_meta,
                         const hpos *h, mf_status *st)
{
    if (!json_is_object(md)) {
        mf_breach(st, file, at(h, NULL, -1), "__metadata__ must be an object of strings, found %s",
                  json_kind(md));
        return 0;
    }
    const char *k;
    json_t *v;
    json_object_foreach(md, k, v) {
        if (!json_is_string(v)) {
            mf_breach(st, file, at(h, k, -1), "__metadata__ value \"%s\" must be a string, found %s",
                      k, json_kind(v));
            continue;
        }
        if (!with_meta)
            continue;
        mf_kv *kv = mf_model_add_meta(m, k, st);
        if (!kv)
            return -1;
        kv->v = mf_value_str(m->arena, json_string_value(v), json_string_length(v));
        kv->offset = 8;
    }
    return 0;
}

/* Reads one header entry into a tensor; returns false on a breach. */
static bool read_entry(mf_model *m, const char *file, const char *name, json_t *info,
                       entry *e, const hpos *h, mf_status *st)
{
    if (!json_is_object(info)) {
        mf_breach(st, file, at(h, NULL, -1), "tensor \"%s\": entry must be an object, found %s", name,
                  json_kind(info));
        return false;
    }
    json_t *dt = json_object_get(info, "dtype"), *shape = json_object_get(info, "shape"),
           *offs = json_object_get(info, "data_offsets");
    bool ok = true;
    mf_dtype dtype = MF_DTYPE_INVALID;
    if (!json_is_string(dt)) {
        mf_breach(st, file, at(h, "dtype", -1), "tensor \"%s\": \"dtype\" is missing or not a string", name);
        ok = false;
    } else if ((dtype = mf_dtype_from_name(json_string_value(dt))) == MF_DTYPE_INVALID ||
               (mf_dtype_info_of(dtype)->ggml_id >= 0 && mf_dtype_info_of(dtype)->is_quant) ||
               dtype == MF_STRING) {
        mf_breach(st, file, at(h, "dtype", -1), "tensor \"%s\": unknown dtype \"%s\"", name, json_string_value(dt));
        ok = false;
    }
    if (!json_is_array(shape)) {
        mf_breach(st, file, at(h, "shape", -1), "tensor \"%s\": \"shape\" is missing or not an array", name);
        ok = false;
    } else if (json_array_size(shape) > MF_MAX_DIMS) {
        mf_breach(st, file, at(h, "shape", -1), "tensor \"%s\": %zu dimensions (mfmt reads at most %d)", name,
                  json_array_size(shape), MF_MAX_DIMS);
        ok = false;
    }
    if (!json_is_array(offs) || json_array_size(offs) != 2) {
        mf_breach(st, file, at(h, "data_offsets", -1),
                  "tensor \"%s\": \"data_offsets\" must be an array of 2 integers", name);
        ok = false;
    } else if (json_uint(json_array_get(offs, 0), &e->begin) ||
               json_uint(json_array_get(offs, 1), &e->end)) {
        mf_breach(st, file, at(h, "data_offsets", json_uint(json_array_get(offs, 0), &e->begin) ? 0 : 1),
                  "tensor \"%s\": data_offsets must be non-negative integers", name);
        ok = false;
    } else if (e->end < e->begin) {
        mf_breach(st, file, at(h, "data_offsets", 1), "tensor \"%s\": data_offsets end %llu is before start %llu", name,
                  (unsigned long long)e->end, (unsigned long long)e->begin);
        ok = false;
    }
    mf_tensor *t = mf_model_add_tensor(m, st);
    if (!t)
        return false;
    e->ti = (size_t)(t - m->tensors);
    t->name = mf_arena_strdup(m->arena, name);
    t->dtype = dtype;
    if (json_is_array(shape) && json_array_size(shape) <= MF_MAX_DIMS) {
        t->ndim = (int)json_array_size(shape);
        for (int i = 0; i < t->ndim; i++) {
            uint64_t d;
            if (json_uint(json_array_get(shape, (size_t)i), &d) || d > INT64_MAX) {
                mf_breach(st, file, at(h, "shape", i), "tensor \"%s\": shape[%d] is %s, not a non-negative integer",
                          name, i, json_kind(json_array_get(shape, (size_t)i)));
                ok = false;
                break;
            }
            t->shape[i] = (int64_t)d;
        }
    }
    if (ok) {
        mf_status tmp;
        mf_status_init(&tmp);
        uint64_t n = mf_tensor_nelems(t), bits;
        const mf_dtype_info *di = mf_dtype_info_of(dtype);
        if (n == UINT64_MAX || mf_mul_ovf(n, di->bits, &bits)) {
            mf_breach(st, file, at(h, "shape", -1), "tensor \"%s\": shape overflows 64 bits", name);
            ok = false;
        } else if (bits % 8) { /* the reference refuses partial bytes */
            mf_breach(st, file, at(h, "shape", -1), "tensor \"%s\": %llu %s elements are not a whole number of bytes",
                      name, (unsigned long long)n, di->name);
            ok = false;
        } else if (mf_tensor_set_nbytes(t, file, at(h, "shape", -1), &tmp)) {
            mf_status_merge(st, &tmp);
            ok = false;
        } else if (t->nbytes != e->end - e->begin) {
            mf_breach(st, file, at(h, "data_offsets", -1),
                      "tensor \"%s\": data_offsets span %llu bytes but shape x dtype needs %llu",
                      name, (unsigned long long)(e->end - e->begin),
                      (unsigned long long)t->nbytes);
            ok = false;
        }
        mf_status_clear(&tmp);
    }
    return ok;
}

/* Offsets must tile the data section exactly: sorted, from 0, no gap, no
 * overlap, ending at its end. */
static void check_layout(mf_model *m, const char *file, entry *es, size_t n,
                         uint64_t data_len, uint64_t data_start, mf_status *st)
{
    qsort(es, n, sizeof(*es), cmp_entry);
    uint64_t expect = 0;
    for (size_t i = 0; i < n; i++) {
        const char *name = m->tensors[es[i].ti].name;
        if (es[i].begin < expect)
            mf_breach(st, file, (int64_t)(data_start + es[i].begin),
                      "tensor \"%s\": data_offsets [%llu, %llu] overlap the previous tensor (ends at %llu)",
                      name, (unsigned long long)es[i].begin, (unsigned long long)es[i].end,
                      (unsigned long long)expect);
        else if (es[i].begin > expect)
            mf_breach(st, file, (int64_t)(data_start + expect),
                      "tensor \"%s\": data_offsets start %llu leaves a gap after %llu",
                      name, (unsigned long long)es[i].begin, (unsigned long long)expect);
        if (es[i].end > expect)
            expect = es[i].end;
    }
    if (expect > data_len)
        mf_breach(st, file, (int64_t)(data_start + data_len),
                  "data_offsets end %llu is past the data section (%llu bytes)",
                  (unsigned long long)expect, (unsigned long long)data_len);
    else if (expect < data_len)
        mf_breach(st, file, (int64_t)(data_start + expect),
                  "%llu bytes after the last tensor: the data section must end with it",
                  (unsigned long long)(data_len - expect));
}

static void note_alignment(mf_model *m, const mf_tensor *t, uint64_t abs)
{
    const mf_dtype_info *di = mf_dtype_info_of(t->dtype);
    if (!di || t->nbytes == 0)
        return;
    uint64_t es = di->block_elems == 1 ? di->block_bytes : 1;
    if (es > 1 && abs % es)
        mf_model_note(m, "tensor \"%s\": data at byte %llu is not aligned to its %llu-byte elements",
                      t->name, (unsigned long long)abs, (unsigned long long)es);
    else if (abs % 64)
        mf_model_info(m, "tensor \"%s\": data at byte %llu is not 64-byte aligned (zero-copy loaders may copy)",
                      t->name, (unsigned long long)abs);
}

/* Where jansson's error is: its position, except that a duplicate key is
 * reported at the key's opening quote rather than after it. */
static int64_t json_error_offset(const uint8_t *text, const json_error_t *e)
{
    int64_t p = e->position;
    if (json_error_code(e) != json_error_duplicate_key || p < 2 || text[p - 1] != '"')
        return p;
    for (int64_t q = p - 2; q >= 0; q--) {
        int64_t bs = 0;
        while (q - 1 - bs >= 0 && text[q - 1 - bs] == '\\')
            bs++;
        if (text[q] == '"' && bs % 2 == 0)
            return q;
    }
    return p;
}

static int parse_header(const mf_file *f, uint64_t *hlen, mf_status *st)
{
    const char *file = f->path;
    if (f->size < 8)
        return mf_fail(st, MF_ERR_FORMAT, file, 0,
                       "file is %llu bytes: too small for the 8-byte header length",
                       (unsigned long long)f->size);
    uint64_t n = mf_rd64le(f->base);
    if (n > MAX_HEADER)
        return mf_fail(st, MF_ERR_FORMAT, file, 0,
                       "header length %llu exceeds the 100 MB limit", (unsigned long long)n);
    if (n > f->size - 8)
        return mf_fail(st, MF_ERR_FORMAT, file, 0,
                       "header length %llu exceeds the %llu bytes after it",
                       (unsigned long long)n, (unsigned long long)(f->size - 8));
    if (mf_source_need(f->base, 8 + n, st)) /* a remote file: the header, nothing more */
        return -1;
    if (n < 2 || f->base[8] != '{')
        return mf_fail(st, MF_ERR_FORMAT, file, 8,
                       "header must be a JSON object starting with '{'");
    int64_t bad = mf_utf8_check(f->base + 8, (size_t)n);
    if (bad >= 0)
        return mf_fail(st, MF_ERR_FORMAT, file, 8 + bad, "header is not valid UTF-8");
    *hlen = n;
    return 0;
}

int mf_safetensors_parse(mf_model *m, uint32_t fi, bool with_meta, unsigned flags,
                         mf_status *st)
{
    const mf_file *f = &m->files[fi];
    const char *file = f->path;
    uint64_t hlen = 0;
    if (parse_header(f, &hlen, st))
        return -1;
    json_error_t jerr;
    json_t *root = mf_json_loadb((const char *)f->base + 8, (size_t)hlen,
                              JSON_REJECT_DUPLICATES, &jerr);
    if (!root && mf_json_error_is_oom(&jerr))
        return mf_oom(st, file);
    if (!root)
        return mf_fail(st, MF_ERR_FORMAT, file, 8 + json_error_offset(f->base + 8, &jerr),
                       "header is not valid JSON: %s", jerr.text);
    if (!json_is_object(root)) {
        json_decref(root);
        return mf_fail(st, MF_ERR_FORMAT, file, 8, "header must be a JSON object");
    }
    uint64_t data_start = 8 + hlen, data_len = f->size - data_start;
    m->header_bytes += data_start;
    size_t count = json_object_size(root), n = 0, first = m->n_tensors;
    entry *es = calloc(count ? count : 1, sizeof(entry));
    if (!es) {
        json_decref(root);
        return mf_oom(st, file);
    }
    const char *k;
    json_t *v;
    bool all_ok = true;
    /* jansson keeps members in the order of the text (and refused
     * duplicates): the text is walked beside it for the offsets */
    hpos h = {(const char *)f->base + 8, (size_t)hlen, -1};
    size_t walk = 0, key_at, value_at;
    json_object_foreach(root, k, v) {
        bool same = mf_json_next_member(h.t, h.n, &walk, &key_at, &value_at) &&
                    mf_json_string_is(h.t, h.n, key_at, k);
        h.at = same ? (int64_t)value_at : -1;
        if (strcmp(k, "__metadata__") == 0) {
            if (read_metadata(m, file, v, with_meta, &h, st))
                break;
            continue;
        }
        entry *e = &es[n];
        e->ok = read_entry(m, file, k, v, e, &h, st);
        if (m->n_tensors > first + n)
            n++;
        all_ok &= e->ok;
    }
    json_decref(root);
    if (all_ok)
        check_layout(m, file, es, n, data_len, data_start, st);
    for (size_t i = 0; i < n; i++) {
        mf_tensor *t = &m->tensors[es[i].ti];
        t->file = fi;
        t->offset = data_start + es[i].begin;
        if (es[i].ok && es[i].end <= data_len) {
            t->data = f->base + t->offset;
            note_alignment(m, t, t->offset);
        }
    }
    free(es);
    return st->code == MF_OK ? 0 : -1;
}

/* A config.json in the file's folder: the file is a directory's weights,
 * whose reader knows the packing (a lone file's is inferred). */
static bool config_beside(const char *path)
{
    const char *slash = strrchr(path, '/');
    char p[4096];
    snprintf(p, sizeof(p), "%.*sconfig.json", slash ? (int)(slash - path + 1) : 0, path);
    return mf_path_exists(p); /* (never the disk beside an in-memory buffer) */
}

static int open_safetensors(mf_model *m, const char *path, unsigned flags, mf_status *st)
{
    uint32_t fi;
    if (mf_model_add_file(m, path, &fi, st))
        return -1;
    /* detect() also sends shard index files (JSON with weight_map) here */
    if (m->files[fi].size > 0 && m->files[fi].base[0] == '{')
        return mf_open_shard_index(m, path, flags, true, st);
    snprintf(m->version, sizeof(m->version), "safetensors");
    if (mf_safetensors_parse(m, fi, true, flags, st))
        return -1;
    return config_beside(path) ? 0 : mf_prequant_infer_single(m, flags, st);
}

/* ------------------------------------------------------------- detection */

/* An 8-byte header length that fits the file, then '{'; or a shard index. */
static int probe_safetensors(mf_probe *p)
{
    if (p->size >= 2 && p->b[0] == '{' && mf_probe_shard_index(p, false) == MF_PROBE_YES)
        return MF_PROBE_YES;
    if (p->size < 10)
        return MF_PROBE_NO;
    uint64_t n = mf_rd64le(p->b);
    if (n == 0 || n > p->size - 8 || p->b[8] != '{')
        return MF_PROBE_NO;
    return mf_probe_found(p, MF_FMT_SAFETENSORS, "safetensors, %llu-byte header",
                          (unsigned long long)n);
}

static const char *const safetensors_extensions[] = {".safetensors", NULL};

const mf_reader mf_reader_safetensors = {
    .format = MF_FMT_SAFETENSORS,
    .data_only = true, /* numbers and names: loading runs nothing */
    .name = "safetensors",
    .extensions = safetensors_extensions,
    .probe = probe_safetensors,
    .open = open_safetensors,
    .edit = &(const mf_edit_hooks){
        .rewrite = mf_safetensors_rewrite,
    },
    .logical_view = mf_hf_prequant_view,
};
