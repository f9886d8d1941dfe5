/* test_convert_ref.c - mfmt's HF -> GGUF conversion against the files
 * llama.cpp's own converter wrote (../shared/convert-ref/NAME.expected.json):
 * each corpus directory is converted with the same output type and the
 * result read back with mfmt's GGUF reader; every tensor (name, type, ne,
 * offset, size, sha256 of its bytes) and every key (order, type, value;
 * arrays by type, length and sha256 of their bytes as stored) must match,
 * and the whole file's sha256 too. Prints the match counts per file. */
#include "testlib.h"

#include "core/core.h"
#include "formats/formats.h"
#include "ops/hf_ops.h"

#include <dirent.h>
#include <jansson.h>
#include <unistd.h>

static const char *vtype_name(mf_vtype t)
{
    static const char *const n[] = {"u8", "i8", "u16", "i16", "u32", "i32", "f32",
                                    "bool", "str", "arr", "u64", "i64", "f64"};
    return (unsigned)t < 13 ? n[t] : "?";
}

/* SHA-256 of an array's element bytes as GGUF stores them. */
static void array_sha(const mf_value *v, char out[129])
{
    mf_hasher *c = mf_hasher_new(MF_SHA256);
    if (!c) {
        out[0] = 0;
        return;
    }
    for (size_t i = 0; i < v->as.arr.n; i++) {
        const mf_value *x = &v->as.arr.items[i];
        uint8_t b[8];
        switch (v->as.arr.elem) {
        case MF_V_STR:
            mf_wr64le(b, x->as.s.len);
            mf_hasher_update(c, b, 8);
            mf_hasher_update(c, x->as.s.ptr, x->as.s.len);
            break;
        case MF_V_F32: {
            float f = (float)x->as.f;
            memcpy(b, &f, 4);
            mf_hasher_update(c, b, 4);
            break;
        }
        case MF_V_I32: case MF_V_U32: mf_wr32le(b, (uint32_t)x->as.u); mf_hasher_update(c, b, 4); break;
        case MF_V_I64: case MF_V_U64: mf_wr64le(b, x->as.u); mf_hasher_update(c, b, 8); break;
        case MF_V_U8: case MF_V_I8: case MF_V_BOOL:
            b[0] = (uint8_t)(x->type == MF_V_BOOL ? x->as.b : x->as.u);
            mf_hasher_update(c, b, 1);
            break;
        case MF_V_U16: case MF_V_I16: mf_wr16le(b, (uint16_t)x->as.u); mf_hasher_update(c, b, 2); break;
        case MF_V_F64: memcpy(b, &x->as.f, 8); mf_hasher_update(c, b, 8); break;
        default: break;
        }
    }
    mf_hasher_final_hex(c, out);
    mf_hasher_free(c);
}

static bool scalar_equal(const mf_value *v, json_t *want)
{
    switch (v->type) {
    case MF_V_STR:
        return json_is_string(want) && json_string_length(want) == v->as.s.len &&
               memcmp(json_string_value(want), v->as.s.ptr, v->as.s.len) == 0;
    case MF_V_BOOL: return json_is_boolean(want) && json_is_true(want) == v->as.b;
    case MF_V_F32: return json_is_number(want) && (float)json_number_value(want) == (float)v->as.f;
    case MF_V_F64: return json_is_number(want) && json_number_value(want) == v->as.f;
    case MF_V_I8: case MF_V_I16: case MF_V_I32: case MF_V_I64:
        return json_is_integer(want) && json_integer_value(want) == v->as.i;
    default:
        return json_is_integer(want) && (uint64_t)json_integer_value(want) == v->as.u;
    }
}

/* Returns mismatches; counts matching keys. */
static int compare_keys(const char *name, const mf_model *m, json_t *want, int *ok)
{
    int bad = 0;
    size_t n = json_array_size(want);
    if (n != m->n_meta) {
        fprintf(stderr, "  %s: %zu keys, reference has %zu\n", name, m->n_meta, n);
        bad++;
    }
    for (size_t i = 0; i < n && i < m->n_meta; i++) {
        json_t *w = json_array_get(want, i);
        const mf_kv *kv = &m->meta[i];
        const char *key = json_string_value(json_object_get(w, "key"));
        const char *type = json_string_value(json_object_get(w, "type"));
        bool good = key && !strcmp(key, kv->key) && type && !strcmp(type, vtype_name(kv->v.type));
        if (good && kv->v.type == MF_V_ARR) {
            char sha[129];
            array_sha(&kv->v, sha);
            const char *et = json_string_value(json_object_get(w, "elem_type"));
            good = et && !strcmp(et, vtype_name(kv->v.as.arr.elem)) &&
                   json_integer_value(json_object_get(w, "len")) == (json_int_t)kv->v.as.arr.n &&
                   !strcmp(sha, json_string_value(json_object_get(w, "sha256_raw")));
        } else if (good) {
            good = scalar_equal(&kv->v, json_object_get(w, "value"));
        }
        if (good) {
            (*ok)++;
        } else {
            fprintf(stderr, "  %s: key %zu: \"%s\" (%s) differs from reference \"%s\" (%s)\n", name, i,
                    kv->key, vtype_name(kv->v.type), key ? key : "?", type ? type : "?");
            bad++;
        }
    }
    return bad;
}

static int compare_tensors(const char *name, const mf_model *m, json_t *e, int *ok)
{
    json_t *want = json_object_get(e, "tensors");
    uint64_t data_offset = (uint64_t)json_integer_value(json_object_get(e, "data_offset"));
    int bad = 0;
    size_t n = json_array_size(want);
    if (n != m->n_tensors) {
        fprintf(stderr, "  %s: %zu tensors, reference has %zu\n", name, m->n_tensors, n);
        bad++;
    }
    for (size_t i = 0; i < n && i < m->n_tensors; i++) {
        json_t *w = json_array_get(want, i);
        const mf_tensor *t = &m->tensors[i];
        json_t *ne = json_object_get(w, "ne");
        bool good = !strcmp(json_string_value(json_object_get(w, "name")), t->name) &&
                    !strcmp(json_string_value(json_object_get(w, "type")), mf_dtype_name(t->dtype)) &&
                    json_array_size(ne) == (size_t)t->ndim &&
                    (uint64_t)json_integer_value(json_object_get(w, "offset")) == t->offset - data_offset &&
                    (uint64_t)json_integer_value(json_object_get(w, "n_bytes")) == t->nbytes;
        for (int d = 0; good && d < t->ndim; d++)
            good = json_integer_value(json_array_get(ne, (size_t)d)) == t->shape[t->ndim - 1 - d];
        mf_status st;
        mf_status_init(&st);
        char h[129];
        good = good && mf_hash_tensor(m, t, MF_SHA256, h, &st) == 0 &&
               !strcmp(h, json_string_value(json_object_get(w, "sha256")));
        mf_status_clear(&st);
        if (good) {
            (*ok)++;
        } else {
            fprintf(stderr, "  %s: tensor %zu \"%s\" differs from the reference\n", name, i, t->name);
            bad++;
        }
    }
    return bad;
}

static void run_one(const char *shared, const char *file, const char *tmp)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/convert-ref/%s", shared, file);
    json_t *e = json_load_file(path, 0, NULL);
    CHECKF(e != NULL, "%s: unreadable", path);
    if (!e)
        return;
    const char *source = json_string_value(json_object_get(e, "source"));
    const char *outtype = json_string_value(json_object_get(e, "outtype"));
    char src[4096], out[4200];
    snprintf(src, sizeof(src), "%s/%s", shared, source ? source : "?");
    snprintf(out, sizeof(out), "%s/%s.gguf", tmp, file);
    mf_status st;
    mf_status_init(&st);
    int rc = mf_convert_to_gguf(src, out, &(mf_convert_gguf_opts){.struct_size = sizeof(mf_convert_gguf_opts), .type = outtype}, &st);
    if (rc && st.code == MF_ERR_UNSUPPORTED && !mf_reader_for(MF_FMT_PYTORCH_ZIP)) {
        printf("convert-ref %-36s skipped: .bin weights need the PyTorch reader\n", file);
        mf_status_clear(&st);
        json_decref(e);
        return;
    }
    CHECKF(rc == 0, "%s: conversion failed: %s", file, st.msg);
    mf_status_clear(&st);
    mf_model *m = NULL;
    if (rc == 0) {
        rc = mf_open(out, NULL, &m, &st);
        CHECKF(rc == 0, "%s: output unreadable: %s", file, st.msg);
        mf_status_clear(&st);
    }
    if (m) {
        int tok = 0, kok = 0;
        int bad = compare_tensors(file, m, e, &tok) + compare_keys(file, m, json_object_get(e, "metadata"), &kok);
        char fh[129];
        mf_hash_file(out, MF_SHA256, fh, &st);
        mf_status_clear(&st);
        bool same = !strcmp(fh, json_string_value(json_object_get(e, "sha256")));
        printf("convert-ref %-36s tensors %2d/%-2zu keys %2d/%-2zu file %s\n", file, tok,
               json_array_size(json_object_get(e, "tensors")), kok,
               json_array_size(json_object_get(e, "metadata")), same ? "byte-identical" : "DIFFERS");
        CHECKF(bad == 0, "%s: %d mismatches with llama.cpp's converter", file, bad);
        CHECKF(same, "%s: file bytes differ from llama.cpp's converter output", file);
        mf_close(m);
    }
    unlink(out);
    json_decref(e);
}

int main(void)
{
    const char *shared = tl_shared_dir();
    char dir[4096];
    if (!shared) {
        printf("convert-ref: ../shared not present; nothing to check\n");
        return tl_report("convert_ref");
    }
    snprintf(dir, sizeof(dir), "%s/convert-ref", shared);
    DIR *d = opendir(dir);
    if (!d) {
        printf("convert-ref: %s not present; nothing to check\n", dir);
        return tl_report("convert_ref");
    }
    char tmp[] = "/tmp/mfmt-convert-ref-XXXXXX";
    CHECK(mkdtemp(tmp) != NULL);
    struct dirent *de;
    char *names[256];
    size_t n = 0;
    while ((de = readdir(d)) && n < 256) {
        size_t l = strlen(de->d_name);
        if (l > 14 && !strcmp(de->d_name + l - 14, ".expected.json"))
            names[n++] = strdup(de->d_name);
    }
    closedir(d);
    for (size_t i = 0; i + 1 < n; i++) /* sorted, for a stable report */
        for (size_t j = i + 1; j < n; j++)
            if (strcmp(names[i], names[j]) > 0) {
                char *t = names[i];
                names[i] = names[j];
                names[j] = t;
            }
    CHECKF(n >= 15, "convert-ref holds %zu reference files", n);
    for (size_t i = 0; i < n; i++) {
        run_one(shared, names[i], tmp);
        free(names[i]);
    }
    rmdir(tmp);
    return tl_report("convert_ref");
}
