/* keras.c - Keras 3 `.keras` archives: a zip holding config.json (the
 * architecture), metadata.json (keras_version, date_saved) and
 * model.weights.h5 (the weights, HDF5). The inner HDF5 is read in place
 * when STORED (offsets are those of the outer file) and inflated into
 * memory, with a size cap, when DEFLATED. Tensors are named by their
 * absolute dataset path in model.weights.h5 (`/layers/dense/vars/0`). */
#include "formats/formats.h"
#include "core/zip.h"
#include "formats/hdf5/hdf5_int.h"
#include "formats/hdf5/keras.h"
#include "core/json_build.h"

#include <jansson.h>
#include <stdlib.h>

#define WEIGHTS "model.weights.h5"
#define MAX_JSON (64u << 20)
#define MAX_INFLATED (8ull << 30) /* a deflated model.weights.h5 is read in memory */

typedef struct keras_priv {
    uint8_t *inflated; /* model.weights.h5 when it was DEFLATED */
} keras_priv;

static int add_str(mf_model *m, const char *key, const char *s, size_t n, uint64_t off,
                   mf_status *st)
{
    mf_kv *kv = mf_model_add_meta(m, key, st);
    if (!kv)
        return -1;
    kv->v = mf_value_str(m->arena, s, n);
    kv->offset = off;
    return 0;
}

/* A JSON value as metadata: strings as they are, other values as JSON. */
static int add_json_value(mf_model *m, const char *key, json_t *v, uint64_t off, mf_status *st)
{
    if (json_is_string(v))
        return add_str(m, key, json_string_value(v), json_string_length(v), off, st);
    mf_kv *kv = mf_model_add_meta(m, key, st);
    if (!kv)
        return -1;
    kv->offset = off;
    if (json_is_integer(v))
        kv->v = mf_value_int(json_integer_value(v));
    else if (json_is_real(v))
        kv->v = mf_value_f64(json_real_value(v));
    else if (json_is_boolean(v))
        kv->v = mf_value_bool(json_is_true(v));
    else if (!json_is_null(v)) {
        char *text = mf_json_dumps(v, JSON_COMPACT);
        if (!text)
            return mf_oom(st, m->path);
        kv->v = mf_value_str(m->arena, text, strlen(text));
        free(text);
    }
    return 0;
}

static int read_member_json(mf_model *m, const mf_zip *z, const char *name, uint8_t **buf,
                            size_t *len, json_t **out, mf_status *st)
{
    *out = NULL;
    *buf = NULL;
    const mf_zip_entry *e = mf_zip_find(z, name);
    if (!e)
        return 0;
    if (mf_zip_extract(z, e, MAX_JSON, buf, len, st))
        return -1;
    json_error_t err;
    *out = mf_keras_json_load((const char *)*buf, *len, &err);
    if (!*out && strcmp(name, "config.json") == 0) {
        /* kept as text: the scanner says it cannot vouch for it */
        return mf_model_note(m, "%s cannot be read as Python's json would: %s", name, err.text), 0;
    }
    if (!*out)
        return mf_fail(st, MF_ERR_FORMAT, m->path, (int64_t)e->data_offset,
                       "%s is not valid JSON: %s (line %d)", name, err.text, err.line);
    return 0;
}

/* metadata.json: every field; config.json: class_name, module, and the
 * whole text (the scanner looks for Lambda layers in it). */
static int read_json_members(mf_model *m, const mf_zip *z, mf_status *st)
{
    uint8_t *buf;
    size_t len;
    json_t *j;
    if (read_member_json(m, z, "metadata.json", &buf, &len, &j, st)) {
        free(buf);
        return -1;
    }
    const mf_zip_entry *e = mf_zip_find(z, "metadata.json");
    int rc = 0;
    if (j && json_is_object(j)) {
        const char *k;
        json_t *v;
        json_object_foreach(j, k, v)
            if (rc == 0)
                rc = add_json_value(m, k, v, e->data_offset, st);
        const char *ver = json_string_value(json_object_get(j, "keras_version"));
        if (ver)
            snprintf(m->version, sizeof(m->version), "keras %s", ver);
    }
    json_decref(j);
    free(buf);
    if (rc || read_member_json(m, z, "config.json", &buf, &len, &j, st)) {
        free(buf);
        return -1;
    }
    e = mf_zip_find(z, "config.json");
    if (e && !j && buf) /* unreadable: its text, for the scanner */
        rc = add_str(m, "config.json", (const char *)buf, len, e->data_offset, st);
    if (j && json_is_object(j)) {
        static const char *const keys[] = {"class_name", "module"};
        for (size_t i = 0; i < 2 && rc == 0; i++) {
            json_t *v = json_object_get(j, keys[i]);
            if (v)
                rc = add_json_value(m, keys[i], v, e->data_offset, st);
        }
        if (rc == 0)
            rc = add_str(m, "config.json", (const char *)buf, len, e->data_offset, st);
    }
    json_decref(j);
    free(buf);
    return rc;
}

static int open_weights(mf_model *m, uint32_t fi, const mf_zip *z, const mf_zip_entry *e,
                        unsigned flags, mf_status *st)
{
    char *label = mf_arena_printf(m->arena, "%s[%s]", m->path, WEIGHTS);
    if (!label)
        return mf_oom(st, m->path);
    if (e->method == 0) {
        const uint8_t *p = mf_zip_stored_data(z, e, st);
        if (!p)
            return -1;
        return mf_hdf5_parse_range(m, fi, p, e->usize, e->data_offset, label, flags, st);
    }
    if (e->method != 8)
        return mf_fail(st, MF_ERR_UNSUPPORTED, m->path, (int64_t)e->local_offset,
                       "%s is compressed with zip method %u (only stored and deflated are read)",
                       WEIGHTS, e->method);
    keras_priv *kp = m->priv;
    uint8_t *buf;
    size_t len;
    if (mf_zip_extract(z, e, (size_t)(MAX_INFLATED < SIZE_MAX ? MAX_INFLATED : SIZE_MAX), &buf, &len, st))
        return -1;
    kp->inflated = buf;
    mf_model_note(m, "%s is deflated: it was inflated into memory (%zu bytes); tensor offsets "
                  "are within the inflated member", WEIGHTS, len);
    size_t first = m->n_tensors;
    if (mf_hdf5_parse_range(m, fi, buf, len, 0, label, flags, st))
        return -1;
    /* mf_tensor.data points into the model's files only: bytes that live
     * in the inflated copy are streamed from it */
    for (size_t i = first; i < m->n_tensors; i++) {
        mf_tensor *t = &m->tensors[i];
        h5_dset *d = t->priv;
        if (t->data && d) {
            d->plain = t->data;
            t->data = NULL;
        }
    }
    return 0;
}

static int open_keras(mf_model *m, const char *path, unsigned flags, mf_status *st)
{
    keras_priv *kp = calloc(1, sizeof(*kp));
    if (!kp)
        return mf_oom(st, path);
    m->priv = kp;
    uint32_t fi;
    if (mf_model_add_file(m, path, &fi, st))
        return -1;
    mf_zip z;
    if (mf_zip_open(&z, m->files[fi].base, m->files[fi].size, m->files[fi].path, m->arena, st))
        return -1;
    const mf_zip_entry *e = mf_zip_find(&z, WEIGHTS);
    if (!e)
        return mf_fail(st, MF_ERR_FORMAT, path, -1, "Keras archive has no %s", WEIGHTS);
    if (read_json_members(m, &z, st))
        return -1;
    char version[64];
    memcpy(version, m->version, sizeof(version));
    if (open_weights(m, fi, &z, e, flags, st))
        return -1;
    /* the HDF5 parser wrote its superblock version; keep Keras's */
    if (version[0])
        memcpy(m->version, version, sizeof(version));
    else
        snprintf(m->version, sizeof(m->version), "keras 3");
    return mf_keras_note_lambdas(m) ? mf_oom(st, path) : 0;
}

static void close_keras(mf_model *m)
{
    keras_priv *kp = m->priv;
    if (kp)
        free(kp->inflated);
    free(kp);
    m->priv = NULL;
}

/* ------------------------------------------------------------- detection */

/* A Keras 3 .keras archive: config.json + model.weights.h5. */
static int probe_keras(mf_probe *p)
{
    if (p->zip && mf_zip_find(p->zip, "config.json") && mf_zip_find(p->zip, "model.weights.h5"))
        return mf_probe_found(p, MF_FMT_KERAS, "Keras 3 archive (%zu members)", p->zip->n);
    return MF_PROBE_NO;
}

static const char *const keras_extensions[] = {".keras", NULL};

const mf_reader mf_reader_keras = {
    .format = MF_FMT_KERAS,
    .name = "keras",
    .extensions = keras_extensions,
    .probe_zip = probe_keras,
    .open = open_keras,
    .stream = mf_hdf5_stream,
    .close = close_keras,
    .scan = &(const mf_scan_hooks){
        .find_code = mf_keras_find_code,
        .may_hold_code = mf_keras_may_hold_code,
    },
};
