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
#include "ops/hfconv/hfconv.h"
#include "ops/quant_mix.h"
#include "ops/tensor_f32.h"
#include "ops/quantize.h"

#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <sys/wait.h>
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

/* References whose architecture mfmt convert does not support yet: each
 * printed as a SKIP line when met and counted at the end, never passed. */
static char skipped[8192];
static int n_skipped;

/* config.json "architectures"[0] of directory src when mfmt convert does not
 * list it (copied into cls), else false. */
static bool arch_unsupported(const char *src, char *cls, size_t n)
{
    char p[4400];
    snprintf(p, sizeof(p), "%s/config.json", src);
    json_t *cfg = json_load_file(p, 0, NULL);
    const char *c = json_string_value(json_array_get(json_object_get(cfg, "architectures"), 0));
    bool known = false;
    for (const char *const *a = mf_convert_gguf_archs(); c && *a; a++)
        known = known || !strcmp(*a, c);
    snprintf(cls, n, "%s", c ? c : "(no architectures)");
    json_decref(cfg);
    return !known;
}

/* An unsupported architecture must be refused as such (MF_ERR_UNSUPPORTED
 * naming it), nothing written; then the reference is skipped. Returns true
 * when skipped. */
static bool skip_unsupported(const char *src, const char *ref, const char *out, const char *type, int layout)
{
    char cls[256];
    if (!arch_unsupported(src, cls, sizeof(cls)))
        return false;
    mf_status st;
    mf_status_init(&st);
    int rc = mf_convert_to_gguf(src, out, &(mf_convert_gguf_opts){.struct_size = sizeof(mf_convert_gguf_opts), .type = type, .layout = layout}, &st);
    CHECKF(rc != 0 && st.code == MF_ERR_UNSUPPORTED && strstr(st.msg, "is not supported by mfmt convert") &&
               strstr(st.msg, cls),
           "%s: architecture %s: wanted \"not supported\", got rc %d \"%s\"", ref, cls, rc, st.msg);
    CHECKF(access(out, F_OK) != 0, "%s: a refused conversion left %s", ref, out);
    mf_status_clear(&st);
    printf("SKIP %s (%s): architecture %s not supported by mfmt convert yet\n", ref, type, cls);
    if (!strstr(skipped, ref) && strlen(skipped) + strlen(ref) + 3 < sizeof(skipped)) {
        snprintf(skipped + strlen(skipped), sizeof(skipped) - strlen(skipped), "%s%s", n_skipped ? ", " : "", ref);
        n_skipped++;
    }
    return true;
}

/* folder: "convert-ref" (sources under ../shared), "convert-ref-arch" or
 * "convert-ref-new" (sources "shared/dirs/X" inside the folder); layout: the
 * converter whose references they are (MF_CONVERT_LAYOUT_*). */
static void run_one(const char *shared, const char *folder, const char *file, const char *tmp, int layout)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s/%s", shared, folder, file);
    json_t *e = json_load_file(path, 0, NULL);
    CHECKF(e != NULL, "%s: unreadable", path);
    if (!e)
        return;
    const char *source = json_string_value(json_object_get(e, "source"));
    const char *outtype = json_string_value(json_object_get(e, "outtype"));
    char src[4096], out[4200];
    if (source && !strncmp(source, "shared/", 7))
        snprintf(src, sizeof(src), "%s/%s/%s", shared, folder, source + 7);
    else
        snprintf(src, sizeof(src), "%s/%s", shared, source ? source : "?");
    snprintf(out, sizeof(out), "%s/%s.gguf", tmp, file);
    char ref[256];
    snprintf(ref, sizeof(ref), "%.*s", (int)(strstr(file, ".expected.json") ? strstr(file, ".expected.json") - file : (long)strlen(file)), file);
    if (skip_unsupported(src, ref, out, outtype ? outtype : "f16", layout)) {
        json_decref(e);
        return;
    }
    mf_status st;
    mf_status_init(&st);
    int rc = mf_convert_to_gguf(src, out, &(mf_convert_gguf_opts){.struct_size = sizeof(mf_convert_gguf_opts), .type = outtype, .layout = layout}, &st);
    if (rc && st.code == MF_ERR_UNSUPPORTED && !mf_reader_for(MF_FMT_PYTORCH_ZIP)) {
        printf("%s %-36s skipped: .bin weights need the PyTorch reader\n", folder, file);
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
        printf("%s %-36s tensors %3d/%-3zu keys %2d/%-2zu file %s\n", folder, file, tok,
               json_array_size(json_object_get(e, "tensors")), kok,
               json_array_size(json_object_get(e, "metadata")), same ? "byte-identical" : "DIFFERS");
        CHECKF(bad == 0, "%s: %d mismatches with llama.cpp's converter", file, bad);
        CHECKF(same, "%s: file bytes differ from llama.cpp's converter output", file);
        mf_close(m);
    }
    unlink(out);
    json_decref(e);
}

/* A mix in the same pass gives exactly the bytes of quantizing the F16
 * conversion with mfmt quantize (llama-quantize's rules per architecture). */
static void check_mix(const char *src, const char *name, const char *mix, const char *tmp, int layout)
{
    char a[4200], f[4200], b[4200];
    snprintf(a, sizeof(a), "%s/%s-%s-one-pass.gguf", tmp, name, mix);
    snprintf(f, sizeof(f), "%s/%s-f16.gguf", tmp, name);
    snprintf(b, sizeof(b), "%s/%s-%s-quantized.gguf", tmp, name, mix);
    if (skip_unsupported(src, name, a, mix, layout))
        return;
    mf_status st;
    mf_status_init(&st);
    int rc = mf_convert_to_gguf(src, a, &(mf_convert_gguf_opts){.struct_size = sizeof(mf_convert_gguf_opts), .type = mix, .layout = layout}, &st);
    if (rc && st.code == MF_ERR_UNSUPPORTED && strstr(st.msg, "llama-quantize refuses")) {
        /* refused as llama-quantize refuses the F16 file (gpt-oss's MXFP4
         * experts): mfmt quantize must refuse that file too */
        mf_status_clear(&st);
        int qrc = mf_convert_to_gguf(src, f, &(mf_convert_gguf_opts){.struct_size = sizeof(mf_convert_gguf_opts), .type = "f16", .layout = layout}, &st);
        mf_quantize_opts o;
        mf_quantize_opts_init(&o, mf_ftype_parse(mix));
        mf_quantize_result res;
        qrc = qrc ? qrc : mf_quantize_file(f, b, &o, NULL, NULL, &res, &st);
        printf("mix %-28s %-7s one pass refused, f16 + quantize %s\n", name, mix, qrc ? "refused too" : "DID NOT refuse");
        CHECKF(qrc != 0, "%s as %s: refused in one pass but f16 + quantize works", name, mix);
        mf_status_clear(&st);
        unlink(f);
        unlink(b);
        return;
    }
    CHECKF(rc == 0, "%s as %s: %s", name, mix, st.msg);
    mf_status_clear(&st);
    rc = rc ? rc : mf_convert_to_gguf(src, f, &(mf_convert_gguf_opts){.struct_size = sizeof(mf_convert_gguf_opts), .type = "f16", .layout = layout}, &st);
    mf_quantize_opts o;
    mf_quantize_opts_init(&o, mf_ftype_parse(mix));
    mf_quantize_result res;
    rc = rc ? rc : mf_quantize_file(f, b, &o, NULL, NULL, &res, &st);
    CHECKF(rc == 0, "%s: f16 + quantize %s: %s", name, mix, st.msg);
    mf_status_clear(&st);
    char ha[129] = "a", hb[129] = "b";
    if (rc == 0) {
        mf_hash_file(a, MF_SHA256, ha, &st);
        mf_hash_file(b, MF_SHA256, hb, &st);
        mf_status_clear(&st);
        printf("mix %-28s %-7s one pass %s f16 + quantize\n", name, mix, strcmp(ha, hb) ? "DIFFERS from" : "==");
        CHECKF(!strcmp(ha, hb), "%s as %s in one pass differs from f16 + quantize", name, mix);
    }
    unlink(a);
    unlink(f);
    unlink(b);
}

/* Every directory of ../shared/FOLDER/dirs, as Q4_K_M. */
static void run_mixes(const char *shared, const char *folder, int layout)
{
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s/%s/dirs", shared, folder);
    DIR *d = opendir(dir);
    if (!d)
        return;
    char tmp[] = "/tmp/mfmt-convert-mix-XXXXXX";
    CHECK(mkdtemp(tmp) != NULL);
    struct dirent *de;
    while ((de = readdir(d))) {
        char src[4400];
        snprintf(src, sizeof(src), "%s/%s", dir, de->d_name);
        if (de->d_name[0] == '.' || !mf_is_dir(src))
            continue;
        check_mix(src, de->d_name, "Q4_K_M", tmp, layout);
    }
    closedir(d);
    rmdir(tmp);
}

/* Every NAME.expected.json of ../shared/FOLDER; at least min_files. */
static void run_folder(const char *shared, const char *folder, size_t min_files, int layout)
{
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s/%s", shared, folder);
    DIR *d = opendir(dir);
    if (!d) {
        printf("%s: %s not present; nothing to check\n", folder, dir);
        return;
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
    CHECKF(n >= min_files, "%s holds %zu reference files", folder, n);
    for (size_t i = 0; i < n; i++) {
        run_one(shared, folder, names[i], tmp, layout);
        free(names[i]);
    }
    rmdir(tmp);
}

/* The references skipped since the last report, then none. */
static void report_skips(const char *folder)
{
    printf("%s: %d references skipped (architecture not supported yet)%s%s\n", folder, n_skipped,
           n_skipped ? ": " : "", skipped);
    n_skipped = 0;
    skipped[0] = 0;
}

/* A python3 with numpy (the variant generator's one need), or NULL. */
static const char *python_with_numpy(void)
{
    static const char *const cands[] = {"python3", "/usr/bin/python3", NULL};
    for (size_t i = 0; cands[i]; i++) {
        char cmd[256];
        snprintf(cmd, sizeof(cmd), "%s -c 'import numpy' >/dev/null 2>&1", cands[i]);
        if (system(cmd) == 0)
            return cands[i];
    }
    return NULL;
}

/* Each directory converted with a mix in one pass against llama-quantize's
 * own output on the llama.cpp converter's F16 file (llama_quantize.json);
 * variants: NULL when they could not be generated. */
static void run_llama_quantize(const char *shared, const char *variants)
{
    json_t *e = json_load_file("tests/data/hf_arch/llama_quantize.json", 0, NULL);
    CHECKF(e != NULL, "tests/data/hf_arch/llama_quantize.json unreadable");
    char tmp[] = "/tmp/mfmt-convert-lq-XXXXXX";
    CHECK(mkdtemp(tmp) != NULL);
    const char *key;
    json_t *v;
    int same = 0, total = 0;
    json_object_foreach(json_object_get(e, "outputs"), key, v) {
        const char *d = json_string_value(json_object_get(v, "dir")), *t = json_string_value(json_object_get(v, "type"));
        bool variant = !strcmp(json_string_value(json_object_get(v, "kind")), "variant");
        if (variant && !variants)
            continue;
        char src[4400], out[4400], h[129] = "";
        if (variant)
            snprintf(src, sizeof(src), "%s/%s", variants, d);
        else
            snprintf(src, sizeof(src), "%s/convert-ref-arch/dirs/%s", shared, d);
        snprintf(out, sizeof(out), "%s/%s.gguf", tmp, key);
        mf_status st;
        mf_status_init(&st);
        int rc = mf_convert_to_gguf(src, out, &(mf_convert_gguf_opts){.struct_size = sizeof(mf_convert_gguf_opts), .type = t}, &st);
        CHECKF(rc == 0, "%s: %s", key, st.msg);
        mf_status_clear(&st);
        if (rc == 0)
            mf_hash_file(out, MF_SHA256, h, &st);
        mf_status_clear(&st);
        bool ok = !strcmp(h, json_string_value(json_object_get(v, "sha256")));
        total++;
        same += ok;
        CHECKF(ok, "%s as %s in one pass differs from llama-quantize on the converter's F16 file", d, t);
        unlink(out);
    }
    printf("llama-quantize: %d of %d one-pass mixes byte-identical to llama-quantize's output\n", same, total);
    CHECK(total >= (variants ? 100 : 90));
    rmdir(tmp);
    json_decref(e);
}

/* Variant-B directories (tests/data/hf_arch/gen_variants.py: other layer
 * counts, KV heads, dtypes, tying, 2 shards, rounding-edge values) against
 * the sha256 of llama.cpp's own converter output on them (variants.json),
 * and each quantized in one pass as mfmt quantize does the F16 file. */
static void run_variants(const char *shared)
{
    const char *py = python_with_numpy();
    if (!py) {
        printf("hf-arch variants: skipped (no python3 with numpy to generate them)\n");
        run_llama_quantize(shared, NULL);
        return;
    }
    json_t *e = json_load_file("tests/data/hf_arch/variants.json", 0, NULL);
    CHECKF(e != NULL, "tests/data/hf_arch/variants.json unreadable");
    if (!e)
        return;
    char tmp[] = "/tmp/mfmt-convert-var-XXXXXX";
    CHECK(mkdtemp(tmp) != NULL);
    char cmd[8192];
    snprintf(cmd, sizeof(cmd), "%s tests/data/hf_arch/gen_variants.py %s/convert-ref-arch/dirs %s >/dev/null", py,
             shared, tmp);
    CHECKF(system(cmd) == 0, "%s failed", cmd);
    const char *key;
    json_t *v;
    int same = 0, total = 0;
    json_object_foreach(json_object_get(e, "outputs"), key, v) {
        const char *d = json_string_value(json_object_get(v, "dir")), *t = json_string_value(json_object_get(v, "outtype"));
        char src[4400], out[4400];
        snprintf(src, sizeof(src), "%s/%s", tmp, d ? d : "?");
        snprintf(out, sizeof(out), "%s/%s.gguf", tmp, key);
        mf_status st;
        mf_status_init(&st);
        int rc = mf_convert_to_gguf(src, out, &(mf_convert_gguf_opts){.struct_size = sizeof(mf_convert_gguf_opts), .type = t}, &st);
        CHECKF(rc == 0, "%s: %s", key, st.msg);
        mf_status_clear(&st);
        char h[129] = "";
        if (rc == 0)
            mf_hash_file(out, MF_SHA256, h, &st);
        mf_status_clear(&st);
        bool ok = !strcmp(h, json_string_value(json_object_get(v, "sha256")));
        total++;
        same += ok;
        printf("hf-arch variant %-24s %-5s %s\n", d, t, ok ? "byte-identical to llama.cpp's converter" : "DIFFERS");
        CHECKF(ok, "%s: differs from llama.cpp's converter output", key);
        unlink(out);
        if (!strcmp(t, "f16"))
            check_mix(src, d, "Q4_K_M", tmp, MF_CONVERT_LAYOUT_C392E50);
    }
    printf("hf-arch variants: %d of %d byte-identical\n", same, total);
    CHECKF(total >= 66, "variants.json lists %d outputs", total);
    run_llama_quantize(shared, tmp);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
    CHECK(system(cmd) == 0);
    json_decref(e);
}

/* A copy of reference directory `name` with config.json's key set to the
 * JSON value `value`; converting it must fail naming `want`. */
static void refused_as(const char *shared, const char *name, const char *key, const char *value, const char *type,
                       const char *want)
{
    char tmp[] = "/tmp/mfmt-convert-bad-XXXXXX", cmd[8192], cfgp[4200], out[4200];
    CHECK(mkdtemp(tmp) != NULL);
    snprintf(cmd, sizeof(cmd), "cp -r %s/convert-ref-arch/dirs/%s %s/", shared, name, tmp);
    CHECK(system(cmd) == 0);
    snprintf(cfgp, sizeof(cfgp), "%s/%s/config.json", tmp, name);
    json_t *cfg = json_load_file(cfgp, 0, NULL), *v = json_loads(value, JSON_DECODE_ANY, NULL);
    CHECK(cfg && v);
    json_object_set_new(cfg, key, v);
    CHECK(json_dump_file(cfg, cfgp, 0) == 0);
    json_decref(cfg);
    snprintf(out, sizeof(out), "%s/out.gguf", tmp);
    mf_status st;
    mf_status_init(&st);
    snprintf(cmd, sizeof(cmd), "%s/%s", tmp, name);
    int rc = mf_convert_to_gguf(cmd, out, &(mf_convert_gguf_opts){.struct_size = sizeof(mf_convert_gguf_opts), .type = type}, &st);
    CHECKF(rc != 0 && strstr(st.msg, want), "%s with %s = %s: rc %d, \"%s\" (wanted \"%s\")", name, key, value, rc,
           st.msg, want);
    CHECKF(access(out, F_OK) != 0, "%s: a failed conversion left %s", name, out);
    mf_status_clear(&st);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
    CHECK(system(cmd) == 0);
}

static void refused_with(const char *shared, const char *name, const char *key, const char *value,
                         const char *want)
{
    refused_as(shared, name, key, value, "f16", want);
}

/* ggml's quantize_row_q5_0_ref on one block, its x*id + 16.5f rounded
 * twice (as C says, and mfmt: -ffp-contract=off) or fused into one fmaf (as
 * GCC builds it with -march=native on an FMA machine). */
static void q5_0_block(const float *x, uint8_t out[22], bool fused)
{
    float amax = 0, max = 0;
    for (int j = 0; j < 32; j++)
        if (amax < fabsf(x[j])) {
            amax = fabsf(x[j]);
            max = x[j];
        }
    float d = max / -16, id = d != 0.0f ? 1.0f / d : 0.0f;
    mf_wr16le(out, mf_f32_to_f16(d));
    uint32_t qh = 0;
    for (int j = 0; j < 16; j++) {
        float x0 = fused ? fmaf(x[j], id, 16.5f) : x[j] * id + 16.5f;
        float x1 = fused ? fmaf(x[16 + j], id, 16.5f) : x[16 + j] * id + 16.5f;
        uint8_t q0 = (uint8_t)((int8_t)x0 < 31 ? (int8_t)x0 : 31), q1 = (uint8_t)((int8_t)x1 < 31 ? (int8_t)x1 : 31);
        out[6 + j] = (uint8_t)((q0 & 0x0F) | ((q1 & 0x0F) << 4));
        qh |= (uint32_t)((q0 & 0x10u) >> 4) << j;
        qh |= (uint32_t)((q1 & 0x10u) >> 4) << (j + 16);
    }
    mf_wr32le(out + 2, qh);
}

/* SHA-256 of tensor `name` of the F16 file quantized to Q5_0 either way. */
static bool q5_0_sha(const mf_model *f16, const char *name, bool fused, char out[129])
{
    const mf_tensor *t = mf_tensor_find(f16, name);
    float *v = NULL;
    mf_status st;
    mf_status_init(&st);
    bool ok = t && mf_tensor_read_f32(f16, t, &v, &st) == 0 && mf_tensor_nelems(t) % 32 == 0;
    mf_status_clear(&st);
    mf_hasher *h = ok ? mf_hasher_new(MF_SHA256) : NULL;
    for (uint64_t b = 0; h && b < mf_tensor_nelems(t) / 32; b++) {
        uint8_t blk[22];
        q5_0_block(v + 32 * b, blk, fused);
        mf_hasher_update(h, blk, 22);
    }
    if (h) {
        mf_hasher_final_hex(h, out);
        mf_hasher_free(h);
    }
    free(v);
    return h != NULL;
}

/* One output against its llama-quantize record: the header bytes (keys and
 * tensor infos: the mix's type per tensor) and every tensor's bytes; a Q5_0
 * tensor of the record must be the fused quantization of the F16 values
 * and mfmt's the unfused one. Returns the mismatches. */
static int match_record(const char *path, const mf_model *m, const mf_model *f16, json_t *rec, int *q5)
{
    json_t *want = json_object_get(rec, "tensors");
    int bad = json_array_size(want) != m->n_tensors;
    uint64_t start = UINT64_MAX;
    for (size_t i = 0; i < m->n_tensors; i++)
        start = m->tensors[i].offset < start ? m->tensors[i].offset : start;
    FILE *f = fopen(path, "rb");
    uint8_t *hdr = start != UINT64_MAX && start < (1u << 24) ? malloc(start) : NULL;
    char hh[129] = "";
    if (f && hdr && fread(hdr, 1, start, f) == start) {
        mf_hasher *h = mf_hasher_new(MF_SHA256);
        mf_hasher_update(h, hdr, start);
        mf_hasher_final_hex(h, hh);
        mf_hasher_free(h);
    }
    free(hdr);
    if (f)
        fclose(f);
    if (strcmp(hh, json_string_value(json_object_get(rec, "header_sha256")))) {
        fprintf(stderr, "  %s: keys or tensor infos differ from llama-quantize's\n", path);
        bad++;
    }
    for (size_t i = 0; i < json_array_size(want) && i < m->n_tensors; i++) {
        char name[256], type[16], sha[80], mine[129], q[129];
        const mf_tensor *t = &m->tensors[i];
        if (sscanf(json_string_value(json_array_get(want, i)), "%255s %15s %79s", name, type, sha) != 3)
            return bad + 1;
        mf_status st;
        mf_status_init(&st);
        bool ok = !strcmp(name, t->name) && !strcmp(type, mf_dtype_name(t->dtype)) &&
                  mf_hash_tensor(m, t, MF_SHA256, mine, &st) == 0;
        mf_status_clear(&st);
        if (ok && strcmp(type, "Q5_0"))
            ok = !strcmp(mine, sha);
        else if (ok) { /* the FMA build's rounding, then mfmt's */
            ok = q5_0_sha(f16, name, true, q) && !strcmp(q, sha) && q5_0_sha(f16, name, false, q) && !strcmp(q, mine);
            *q5 += ok;
        }
        if (!ok)
            fprintf(stderr, "  %s: tensor %s differs from llama-quantize's\n", path, name);
        bad += !ok;
    }
    return bad;
}

/* The 2026 families converted in one pass as Q4_K_M against llama-quantize
 * of llama.cpp b10256 on the 2026 converter's F16 files
 * (tests/data/hf_new/llama_quantize_current.json; how made: README.md there). */
static void run_llama_quantize_current(const char *shared)
{
    json_t *e = json_load_file("tests/data/hf_new/llama_quantize_current.json", 0, NULL);
    CHECKF(e != NULL, "tests/data/hf_new/llama_quantize_current.json unreadable");
    char tmp[] = "/tmp/mfmt-convert-lqc-XXXXXX";
    CHECK(mkdtemp(tmp) != NULL);
    const char *key;
    json_t *v;
    int same = 0, total = 0, q5 = 0;
    json_object_foreach(json_object_get(e, "outputs"), key, v) {
        const char *d = json_string_value(json_object_get(v, "dir")), *t = json_string_value(json_object_get(v, "type"));
        char src[4400], out[4400], ref[4400];
        snprintf(src, sizeof(src), "%s/convert-ref-new/dirs/%s", shared, d ? d : "?");
        snprintf(ref, sizeof(ref), "%s/convert-ref-new/%s", shared, json_string_value(json_object_get(v, "f16")));
        snprintf(out, sizeof(out), "%s/%s.gguf", tmp, key);
        mf_status st;
        mf_status_init(&st);
        mf_model *m = NULL, *f16 = NULL;
        int rc = mf_convert_to_gguf(src, out, &(mf_convert_gguf_opts){.struct_size = sizeof(mf_convert_gguf_opts), .type = t, .layout = MF_CONVERT_LAYOUT_2026_02}, &st);
        CHECKF(rc == 0, "%s: %s", key, st.msg);
        mf_status_clear(&st);
        rc = rc ? rc : mf_open(out, NULL, &m, &st) || mf_open(ref, NULL, &f16, &st);
        CHECKF(rc == 0, "%s: %s", key, st.msg);
        mf_status_clear(&st);
        int bad = rc ? 1 : match_record(out, m, f16, v, &q5);
        total++;
        same += bad == 0;
        printf("llama-quantize b10256 %-22s %s %s\n", d, t, bad ? "DIFFERS" : "same keys, types and bytes (Q5_0: FMA-fused rounding)");
        CHECKF(bad == 0, "%s as %s in one pass: %d differences from llama-quantize b10256", d, t, bad);
        mf_close(m);
        mf_close(f16);
        unlink(out);
    }
    printf("llama-quantize b10256: %d of %d one-pass mixes match (%d Q5_0 tensors: its fused rounding, mfmt's unfused)\n",
           same, total, q5);
    CHECK(total >= 11 && q5 > 0);
    rmdir(tmp);
    json_decref(e);
}

/* The held-out hybrids (gen_hybrid_variants.py: Granite 4.0-H with experts,
 * dense, by attn_layer_period and by attn_layer_indices; Falcon-H1) in one
 * pass as Q4_K_M against llama-quantize b10256 on the 2026 converter's F16
 * of them (tests/data/hf_new/llama_quantize_variants.json): the F16 the
 * Q5_0 rounding is checked from is mfmt's, byte-identical to that
 * converter's (hybrid_variants.json). */
static void run_llama_quantize_variants(const char *shared, const char *gen, const char *json, int min)
{
    const char *py = python_with_numpy();
    json_t *e = json_load_file(json, 0, NULL);
    CHECKF(e != NULL, "%s unreadable", json);
    if (!py) {
        TL_SKIP("llama-quantize b10256 of the hybrid variants: no python3 to generate them");
        json_decref(e);
        return;
    }
    char tmp[] = "/tmp/mfmt-convert-lqv-XXXXXX", cmd[8192];
    CHECK(mkdtemp(tmp) != NULL);
    snprintf(cmd, sizeof(cmd), "%s %s %s/convert-ref-new/dirs %s/dirs >/dev/null", py, gen, shared, tmp);
    CHECKF(system(cmd) == 0, "%s failed", cmd);
    const char *key;
    json_t *v;
    int same = 0, total = 0, q5 = 0;
    json_object_foreach(json_object_get(e, "outputs"), key, v) {
        const char *d = json_string_value(json_object_get(v, "dir")), *t = json_string_value(json_object_get(v, "type"));
        char src[4400], out[4400], f16p[4400];
        snprintf(src, sizeof(src), "%s/dirs/%s", tmp, d ? d : "?");
        snprintf(out, sizeof(out), "%s/%s.gguf", tmp, key);
        snprintf(f16p, sizeof(f16p), "%s/%s-f16.gguf", tmp, d ? d : "?");
        mf_status st;
        mf_status_init(&st);
        mf_model *m = NULL, *f16 = NULL;
        int rc = mf_convert_to_gguf(src, out, &(mf_convert_gguf_opts){.struct_size = sizeof(mf_convert_gguf_opts), .type = t, .layout = MF_CONVERT_LAYOUT_2026_02}, &st);
        rc = rc ? rc : mf_convert_to_gguf(src, f16p, &(mf_convert_gguf_opts){.struct_size = sizeof(mf_convert_gguf_opts), .type = "f16", .layout = MF_CONVERT_LAYOUT_2026_02}, &st);
        rc = rc ? rc : mf_open(out, NULL, &m, &st) || mf_open(f16p, NULL, &f16, &st);
        CHECKF(rc == 0, "%s: %s", key, st.msg);
        mf_status_clear(&st);
        int bad = rc ? 1 : match_record(out, m, f16, v, &q5);
        total++;
        same += bad == 0;
        printf("llama-quantize b10256 %-22s %s %s\n", d, t, bad ? "DIFFERS" : "same keys, types and bytes (Q5_0: FMA-fused rounding)");
        CHECKF(bad == 0, "%s as %s in one pass: %d differences from llama-quantize b10256", d, t, bad);
        mf_close(m);
        mf_close(f16);
    }
    printf("llama-quantize b10256, %s: %d of %d one-pass mixes match (%d Q5_0 tensors)\n", json, same, total, q5);
    CHECK(total >= min && q5 > 0);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
    CHECK(system(cmd) == 0);
    json_decref(e);
}

/* The multimodal checkpoint layouts the 2026 converter takes a text model
 * from (Gemma 3, Mistral 3 as ministral3 and as llama, Llama 4):
 * tests/data/hf_new/gen_mm_variants.py makes them from convert-ref-new's
 * directories; mm_variants.json holds the sha256 of that converter's output.
 * The same for the held-out Mamba-2 hybrids (gen_hybrid_variants.py,
 * hybrid_variants.json: Granite 4.0-H and Falcon-H1 with 2 SSM groups, other
 * layer patterns, tying) and gen_gap_variants.py's (gap_variants.json:
 * Gemma 3's extra embedding rows, ERNIE 4.5's Paddle fusion, FP8 block
 * scales; an entry's "layout", a "refused" list the converter refuses). */
static void run_2026_variants(const char *shared, const char *what, const char *gen, const char *json, int min)
{
    const char *py = python_with_numpy();
    if (!py) {
        TL_SKIP("convert-ref-new %s: no python3 to generate them", what);
        return;
    }
    json_t *e = json_load_file(json, 0, NULL);
    CHECKF(e != NULL, "%s unreadable", json);
    char tmp[] = "/tmp/mfmt-convert-mm-XXXXXX", cmd[8192];
    CHECK(mkdtemp(tmp) != NULL);
    snprintf(cmd, sizeof(cmd), "%s %s %s/convert-ref-new/dirs %s/dirs >/dev/null", py, gen, shared, tmp);
    CHECKF(system(cmd) == 0, "%s failed", cmd);
    const char *key;
    json_t *v;
    int same = 0, total = 0;
    json_object_foreach(json_object_get(e, "outputs"), key, v) {
        const char *d = json_string_value(json_object_get(v, "dir")), *t = json_string_value(json_object_get(v, "outtype"));
        char src[4400], out[4400], h[129] = "";
        snprintf(src, sizeof(src), "%s/dirs/%s", tmp, d ? d : "?");
        snprintf(out, sizeof(out), "%s/%s.gguf", tmp, key);
        mf_status st;
        mf_status_init(&st);
        const char *lay = json_string_value(json_object_get(v, "layout"));
        int layout = lay && !strcmp(lay, "2026-02") ? MF_CONVERT_LAYOUT_2026_02 : MF_CONVERT_LAYOUT_C392E50;
        int rc = mf_convert_to_gguf(src, out, &(mf_convert_gguf_opts){.struct_size = sizeof(mf_convert_gguf_opts), .type = t, .layout = layout}, &st);
        CHECKF(rc == 0, "%s: %s", key, st.msg);
        mf_status_clear(&st);
        if (rc == 0)
            mf_hash_file(out, MF_SHA256, h, &st);
        mf_status_clear(&st);
        bool ok = !strcmp(h, json_string_value(json_object_get(v, "sha256")));
        total++;
        same += ok;
        printf("convert-ref-new %s %-20s %s %s\n", what, d, t, ok ? "byte-identical to llama.cpp's converter" : "DIFFERS");
        CHECKF(ok, "%s: differs from the 2026 converter's output", key);
        unlink(out);
    }
    /* directories the converter itself refuses: refused too, for its reason */
    json_object_foreach(json_object_get(e, "refused"), key, v) {
        char src[4400], out[4400];
        snprintf(src, sizeof(src), "%s/dirs/%s", tmp, key);
        snprintf(out, sizeof(out), "%s/%s.gguf", tmp, key);
        mf_status st;
        mf_status_init(&st);
        int rc = mf_convert_to_gguf(src, out, &(mf_convert_gguf_opts){.struct_size = sizeof(mf_convert_gguf_opts), .type = "f16"}, &st);
        CHECKF(rc != 0 && strstr(st.msg, "can not map tensor"), "%s: the converter refuses it (%s); mfmt: rc %d, %s",
               key, json_string_value(v), rc, st.msg);
        printf("convert-ref-new %s %-20s refused as the converter refuses it: %s\n", what, key, st.msg);
        mf_status_clear(&st);
    }
    printf("convert-ref-new %s: %d of %d byte-identical\n", what, same, total);
    CHECK(total >= min);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
    CHECK(system(cmd) == 0);
    json_decref(e);
}

/* --layout 2026-02 for the older families: convert-ref-arch's directories
 * against the 2026 converter's output on them (tests/data/hf_new/
 * arch_2026.json, make_arch_2026.sh). "same": byte-identical required;
 * "known": a difference not done yet, printed and counted; classes mfmt
 * does not convert: skipped as in the c392e50 run. */
static void run_arch_2026(const char *shared)
{
    json_t *e = json_load_file("tests/data/hf_new/arch_2026.json", 0, NULL);
    CHECKF(e != NULL, "tests/data/hf_new/arch_2026.json unreadable");
    char tmp[] = "/tmp/mfmt-convert-a26-XXXXXX";
    CHECK(mkdtemp(tmp) != NULL);
    const char *key;
    json_t *v;
    int same = 0, total = 0, known = 0;
    json_object_foreach(json_object_get(e, "outputs"), key, v) {
        const char *d = json_string_value(json_object_get(v, "dir")), *t = json_string_value(json_object_get(v, "outtype")),
                   *status = json_string_value(json_object_get(v, "status"));
        char src[4400], out[4400], h[129] = "", cls[256];
        snprintf(src, sizeof(src), "%s/convert-ref-arch/dirs/%s", shared, d ? d : "?");
        snprintf(out, sizeof(out), "%s/%s.gguf", tmp, key);
        if (!status || !strcmp(status, "unsupported") || arch_unsupported(src, cls, sizeof(cls)))
            continue;
        mf_status st;
        mf_status_init(&st);
        int rc = mf_convert_to_gguf(src, out, &(mf_convert_gguf_opts){.struct_size = sizeof(mf_convert_gguf_opts), .type = t, .layout = MF_CONVERT_LAYOUT_2026_02}, &st);
        mf_status_clear(&st);
        if (rc == 0)
            mf_hash_file(out, MF_SHA256, h, &st);
        mf_status_clear(&st);
        bool ok = !strcmp(h, json_string_value(json_object_get(v, "sha256")));
        if (!strcmp(status, "known") && !ok) {
            printf("KNOWN %s --layout 2026-02: differs from the 2026 converter (not done yet)\n", key);
            known++;
        } else {
            total++;
            same += ok;
            printf("convert-ref-arch 2026-02 %-30s %s\n", key, ok ? "byte-identical" : "DIFFERS");
            CHECKF(ok, "%s: --layout 2026-02 differs from the 2026 converter's output", key);
        }
        unlink(out);
    }
    printf("convert-ref-arch in the 2026-02 layout: %d of %d byte-identical, %d known differences\n", same, total,
           known);
    CHECK(total >= 10);
    rmdir(tmp);
    json_decref(e);
}

/* The current runtime loads and runs what mfmt writes in the 2026 layout:
 * $MFMT_LLAMA_SIMPLE (llama-simple of llama.cpp b10256, see
 * tests/data/hf_new/README.md) -m OUT -n 4 Hello exits 0 for each
 * convert-ref-new directory mfmt converts, as f16 and as Q4_K_M. Not in CI:
 * without the variable, a counted SKIP. */
static void run_current_runtime(const char *shared)
{
    const char *simple = getenv("MFMT_LLAMA_SIMPLE");
    if (!simple || !*simple) {
        TL_SKIP("convert-ref-new in the current runtime: MFMT_LLAMA_SIMPLE (llama-simple b10256) not set");
        return;
    }
    char dir[4096], tmp[] = "/tmp/mfmt-convert-run-XXXXXX";
    snprintf(dir, sizeof(dir), "%s/convert-ref-new/dirs", shared);
    DIR *d = opendir(dir);
    CHECK(d != NULL && mkdtemp(tmp) != NULL);
    struct dirent *de;
    int ran = 0;
    while (d && (de = readdir(d))) {
        char src[4400], cls[256];
        snprintf(src, sizeof(src), "%s/%s", dir, de->d_name);
        if (de->d_name[0] == '.' || !mf_is_dir(src) || arch_unsupported(src, cls, sizeof(cls)))
            continue;
        static const char *const types[] = {"f16", "Q4_K_M"};
        for (size_t k = 0; k < 2; k++) {
            char out[4600], cmd[12000];
            snprintf(out, sizeof(out), "%s/%s-%s.gguf", tmp, de->d_name, types[k]);
            mf_status st;
            mf_status_init(&st);
            int rc = mf_convert_to_gguf(src, out, &(mf_convert_gguf_opts){.struct_size = sizeof(mf_convert_gguf_opts), .type = types[k], .layout = MF_CONVERT_LAYOUT_2026_02}, &st);
            if (rc && strstr(st.msg, "llama-quantize refuses")) { /* gpt-oss's MXFP4 experts as Q4_K_M: checked above */
                printf("llama-simple b10256 %-22s %-6s not run: refused as llama-quantize refuses it\n", de->d_name,
                       types[k]);
                mf_status_clear(&st);
                continue;
            }
            CHECKF(rc == 0, "%s: %s", de->d_name, st.msg);
            mf_status_clear(&st);
            snprintf(cmd, sizeof(cmd), "LM_GGML_NO_BACKTRACE=1 '%s' -m '%s' -n 4 Hello >/dev/null 2>&1", simple, out);
            int x = rc == 0 ? system(cmd) : -1;
            printf("llama-simple b10256 %-22s %-6s exit %d\n", de->d_name, types[k], x == -1 ? -1 : WEXITSTATUS(x));
            CHECKF(x == 0, "%s as %s: llama-simple exit %d", de->d_name, types[k], x == -1 ? -1 : WEXITSTATUS(x));
            unlink(out);
            ran++;
        }
    }
    if (d)
        closedir(d);
    CHECK(ran >= 22);
    rmdir(tmp);
}

/* Inputs the rules cannot apply to are refused with a reason, nothing written. */
static void run_refusals(const char *shared)
{
    /* experts counted from config: the block never completes */
    refused_with(shared, "mixtral-tiny", "num_local_experts", "5", "to stack are incomplete");
    /* a fused qkv whose rows do not fit the head counts */
    refused_with(shared, "falcon-tiny", "num_attention_heads", "8", "fused qkv");
    refused_with(shared, "pythia-tiny", "num_attention_heads", "3", "fused qkv");
    refused_with(shared, "internlm2-tiny", "num_key_value_heads", "2", "fused qkv");
    /* Q/K rows that do not split into the heads */
    refused_with(shared, "granite-tiny", "num_key_value_heads", "3", "heads of row pairs");
    /* LongRoPE factors of the wrong length, an unknown scaling type */
    refused_with(shared, "phi3-tiny-128k", "rope_scaling",
                 "{\"type\": \"longrope\", \"long_factor\": [1.0], \"short_factor\": [1.0]}", "rope long and short");
    refused_with(shared, "phi3-tiny-128k", "rope_scaling", "{\"type\": \"dynamic\"}", "not supported");
    /* a required hyper-parameter missing or of the wrong kind */
    refused_with(shared, "gemma2-tiny", "attn_logit_softcapping", "null", "attn_logit_softcapping");
    refused_with(shared, "deepseek-v2-tiny", "scoring_func", "\"relu\"", "scoring_func");
    refused_with(shared, "gpt2-tiny", "n_embd", "\"64\"", "n_embd");
    refused_with(shared, "mamba-tiny", "intermediate_size", "100", "d_inner");
    /* a mix llama-quantize would refuse: DeepSeek-V2 of 3 layers without q_lora_rank */
    refused_as(shared, "deepseek-v2-tiny", "q_lora_rank", "null", "Q4_K_M", "llama-quantize refuses");
    /* splits whose sizes do not fit, per-layer lists of the wrong length */
    refused_with(shared, "granitemoe-tiny", "intermediate_size", "16", "2 * intermediate_size");
    refused_with(shared, "openelm-tiny", "ffn_multipliers", "[0.5]", "ffn_multipliers");
    refused_with(shared, "openelm-tiny", "num_kv_heads", "[1]", "num_kv_heads");
    refused_with(shared, "baichuan2-32l-tiny", "num_attention_heads", "3", "heads of row pairs");
    /* what the classes assert or need */
    refused_with(shared, "jais-tiny", "position_embedding_type", "\"rotary\"", "alibi only");
    refused_with(shared, "jais-tiny", "embeddings_scale", "null", "embeddings_scale");
    refused_with(shared, "minicpm-tiny", "dim_model_base", "null", "dim_model_base");
    refused_with(shared, "xverse-tiny", "vocab_size", "100", "Vocabulary size exceeds");
    /* the class is checked before its keys: OpenELM's config has no
     * num_hidden_layers, an unknown class is still named as such */
    refused_with(shared, "openelm-tiny", "architectures", "[\"OpenELMv9ForCausalLM\"]", "is not supported");
    /* an architecture not in the table */
    refused_with(shared, "gpt2-tiny", "architectures", "[\"NoSuchModelForCausalLM\"]", "MambaForCausalLM");
}

/* One-pass mixes of the 2026 families against the current llama-quantize
 * (b10256) run on the reference F16 files (tests/data/hf_new/quant_current.json,
 * made by quant_current.py there): a refusal must be mfmt's too; every
 * tensor's type must match (the mix's choices); the bytes are compared and
 * a difference is reported and counted: the b10256 oracle build rounds some
 * Q5_0/Q6_K values differently from mfmt quantize on every family, the
 * c392e50 ones (convert-ref llama-tiny) as well. */
static void run_quant_current(const char *shared)
{
    json_error_t err;
    json_t *j = json_load_file("tests/data/hf_new/quant_current.json", 0, &err);
    CHECKF(j != NULL, "quant_current.json: %s", err.text);
    char tmp[64];
    if (!j || !tl_make_tmpdir(tmp, sizeof(tmp), "qcur")) {
        json_decref(j);
        return;
    }
    json_t *runs = json_object_get(j, "runs");
    for (size_t i = 0; i < json_array_size(runs); i++) {
        json_t *r = json_array_get(runs, i);
        const char *dir = json_string_value(json_object_get(r, "dir")), *mix = json_string_value(json_object_get(r, "mix"));
        char src[4200], out[4200];
        snprintf(src, sizeof(src), "%s/convert-ref-new/dirs/%s", shared, dir);
        snprintf(out, sizeof(out), "%s/%s-%s.gguf", tmp, dir, mix);
        mf_status st;
        mf_status_init(&st);
        int rc = mf_convert_to_gguf(src, out, &(mf_convert_gguf_opts){.struct_size = sizeof(mf_convert_gguf_opts), .type = mix}, &st);
        if (json_object_get(r, "refused")) {
            printf("llama-quantize b10256 %-16s %-9s refused; mfmt %s\n", dir, mix, rc ? "refuses too" : "DOES NOT refuse");
            CHECKF(rc != 0 && strstr(st.msg, "llama-quantize refuses"), "%s %s: llama-quantize refuses, mfmt: %s", dir, mix,
                   rc ? st.msg : "converted");
            mf_status_clear(&st);
            continue;
        }
        CHECKF(rc == 0, "%s %s: %s", dir, mix, st.msg);
        mf_status_clear(&st);
        mf_model *m = NULL;
        if (rc || mf_open(out, NULL, &m, &st)) {
            mf_status_clear(&st);
            continue;
        }
        json_t *ts = json_object_get(r, "tensors");
        size_t same_type = 0, same_bytes = 0, n = json_array_size(ts);
        for (size_t k = 0; k < n; k++) {
            json_t *e = json_array_get(ts, k);
            const char *tn = json_string_value(json_object_get(e, "name"));
            const mf_tensor *t = mf_tensor_find(m, tn);
            if (!t)
                continue;
            bool st_ok = !strcmp(mf_dtype_name(mf_tensor_dtype(t)), json_string_value(json_object_get(e, "type")));
            /* attn_qkv in attn_v's category (b10256's ladder): the mix applies it
             * to the architectures only newer runtimes load (quant_mix.c) */
            same_type += st_ok;
            const void *d = mf_tensor_data(m, t);
            char hex[129] = "";
            mf_hasher *h = d ? mf_hasher_new(MF_SHA256) : NULL;
            if (h) {
                mf_hasher_update(h, d, mf_tensor_nbytes(t));
                mf_hasher_final_hex(h, hex);
                mf_hasher_free(h);
            }
            same_bytes += !strcmp(hex, json_string_value(json_object_get(e, "sha256")));
        }
        char fh[129] = "";
        mf_hash_file(out, MF_SHA256, fh, &st);
        mf_status_clear(&st);
        bool file_same = !strcmp(fh, json_string_value(json_object_get(r, "sha256")));
        printf("llama-quantize b10256 %-16s %-9s types %zu/%zu, bytes %zu/%zu, file %s\n", dir, mix, same_type, n,
               same_bytes, n, file_same ? "byte-identical" : "differs");
        CHECKF(same_type == n && mf_model_tensor_count(m) == n, "%s %s: tensor types differ from llama-quantize b10256",
               dir, mix);
        if (!file_same)
            TL_SKIP("%s %s: %zu tensors' bytes differ from llama-quantize b10256 (the types above, and a few values "
                    "that build rounds otherwise on every family; known, see doc/hf.md)",
                    dir, mix, n - same_bytes);
        mf_close(m);
        unlink(out);
    }
    tl_remove_tmpdir(tmp);
    json_decref(j);
}

int main(void)
{
    const char *shared = tl_shared_dir();
    if (!shared) {
        TL_SKIP("convert_ref: the converter references (no ../shared)");
        return tl_report("convert_ref");
    }
    const int old = MF_CONVERT_LAYOUT_C392E50, now = MF_CONVERT_LAYOUT_2026_02;
    run_folder(shared, "convert-ref", 15, old);
    run_folder(shared, "convert-ref-arch", 19, old);
    run_mixes(shared, "convert-ref-arch", old);
    run_variants(shared);
    run_refusals(shared);
    report_skips("convert-ref-arch");
    /* the 2026-02 converter's references (llama.cpp ecbcb7ea), in its layout */
    run_folder(shared, "convert-ref-new", 23, now);
    run_mixes(shared, "convert-ref-new", now);
    run_llama_quantize_current(shared);
    run_llama_quantize_variants(shared, "tests/data/hf_new/gen_hybrid_variants.py",
                                "tests/data/hf_new/llama_quantize_variants.json", 5);
    run_llama_quantize_variants(shared, "tests/data/hf_new/gen_gap_variants.py",
                                "tests/data/hf_new/llama_quantize_gaps.json", 5);
    run_2026_variants(shared, "multimodal layouts", "tests/data/hf_new/gen_mm_variants.py",
                      "tests/data/hf_new/mm_variants.json", 4);
    run_2026_variants(shared, "hybrid variants", "tests/data/hf_new/gen_hybrid_variants.py",
                      "tests/data/hf_new/hybrid_variants.json", 15);
    run_2026_variants(shared, "gap variants", "tests/data/hf_new/gen_gap_variants.py",
                      "tests/data/hf_new/gap_variants.json", 10);
    run_arch_2026(shared);
    run_current_runtime(shared);
    report_skips("convert-ref-new");
    run_quant_current(shared);
    return tl_report("convert_ref");
}
