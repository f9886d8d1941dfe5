/* test_conformance.c - the shared corpora, read through the library:
 * ../shared/corpus, ../shared/real (manifest.json each) and real-gguf.
 * ok cases: every tensor's name, dtype, shape and canonical SHA-256 as in the
 * manifest; error cases: opening fails with a message naming the file;
 * unsafe cases: the scanner flags them (malicious ones as dangerous), and
 * it calls every benign file safe. Cases of a format with no reader yet
 * are counted as skipped and listed, never as passed. */
#include "testlib.h"

#include "core/core.h"
#include "formats/formats.h"
#include "conformance_hooks.h"

#include <jansson.h>

typedef struct tally {
    int pass, fail, skip;
} tally;

static tally per_format[MF_FMT_COUNT];
static int scan_safe_pass, scan_safe_fail; /* benign files the scanner calls safe */
static bool verbose;

static mf_format format_from_name(const char *n)
{
    for (int f = 0; f < MF_FMT_COUNT; f++)
        if (strcmp(mf_format_name((mf_format)f), n) == 0)
            return (mf_format)f;
    return MF_FMT_UNKNOWN;
}

static bool shape_equal(const mf_tensor *t, json_t *shape)
{
    if (!json_is_array(shape) || (size_t)t->ndim != json_array_size(shape))
        return false;
    for (int i = 0; i < t->ndim; i++)
        if (json_number_value(json_array_get(shape, (size_t)i)) != (double)t->shape[i])
            return false;
    return true;
}

/* Returns the number of mismatches (printed). */
static int compare_tensors(const char *path, mf_model *m, json_t *want)
{
    int bad = 0;
    size_t n = json_array_size(want);
    if (n != m->n_tensors) {
        fprintf(stderr, "  %s: %zu tensors, manifest has %zu\n", path, m->n_tensors, n);
        bad++;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *w = json_array_get(want, i);
        const char *name = json_string_value(json_object_get(w, "name"));
        const char *dtype = json_string_value(json_object_get(w, "dtype"));
        const char *sha = json_string_value(json_object_get(w, "sha256"));
        const mf_tensor *t = name ? mf_tensor_find(m, name) : NULL;
        if (!t) {
            fprintf(stderr, "  %s: tensor \"%s\" missing\n", path, name ? name : "?");
            bad++;
            continue;
        }
        if (!dtype || strcmp(dtype, mf_dtype_name(t->dtype)) != 0) {
            fprintf(stderr, "  %s: \"%s\" dtype %s, want %s\n", path, name, mf_dtype_name(t->dtype),
                    dtype ? dtype : "?");
            bad++;
        }
        if (!shape_equal(t, json_object_get(w, "shape"))) {
            fprintf(stderr, "  %s: \"%s\" shape differs\n", path, name);
            bad++;
        }
        if (!sha)
            continue; /* STRING tensors have no canonical hash */
        mf_status st;
        mf_status_init(&st);
        char hex[129];
        if (mf_hash_tensor(m, t, MF_SHA256, hex, &st)) {
            fprintf(stderr, "  %s: \"%s\" cannot be hashed: %s\n", path, name, st.msg);
            bad++;
        } else if (strcmp(hex, sha) != 0) {
            fprintf(stderr, "  %s: \"%s\" sha256 %s, want %s\n", path, name, hex, sha);
            bad++;
        }
        mf_status_clear(&st);
    }
    return bad;
}

static void run_case(const char *base, json_t *c)
{
    const char *rel = json_string_value(json_object_get(c, "path"));
    const char *fmt = json_string_value(json_object_get(c, "format"));
    const char *expect = json_string_value(json_object_get(c, "expect"));
    if (!rel || !fmt || !expect)
        return;
    char path[8192];
    snprintf(path, sizeof(path), "%s/%s", base, rel);
    mf_format f = format_from_name(fmt);
    tally *t = &per_format[f];
    if (strcmp(expect, "unsafe") == 0) {
        int v = conformance_scan_verdict(path);
        if (v < 0) {
            t->skip++;
            return;
        }
        /* every unsafe case is flagged; the malicious ones run code */
        bool malicious = strstr(rel, "malicious/") != NULL;
        bool ok = malicious ? v == 2 : v >= 1;
        CHECKF(ok, "%s: scanner says %s, want %s", rel, v == 2 ? "dangerous" : v ? "unknown" : "safe",
               malicious ? "dangerous" : "unknown or dangerous");
        ok ? t->pass++ : t->fail++;
        return;
    }
    if (strcmp(expect, "ok") == 0 && !mf_is_dir(path)) {
        /* a benign file is safe: no false alarm on any format */
        int v = conformance_scan_verdict(path);
        CHECKF(v == 0, "%s: benign, but the scanner says %s", rel,
               v == 2 ? "dangerous" : v == 1 ? "unknown" : "it cannot be scanned");
        v == 0 ? scan_safe_pass++ : scan_safe_fail++;
    }
    if (!mf_reader_for(f)) {
        t->skip++;
        return;
    }
    mf_status st;
    mf_status_init(&st);
    mf_model *m = NULL;
    mf_open_opts o = {.struct_size = sizeof(mf_open_opts), .flags = MF_OPEN_STRICT};
    int rc = mf_open(path, &o, &m, &st);
    bool ok;
    if (strcmp(expect, "error") == 0) {
        ok = rc != 0 && strstr(st.msg, path) != NULL;
        CHECKF(ok, "%s: must be rejected with a message naming it (got rc %d: %s)", rel, rc,
               st.msg);
        if (verbose && rc != 0)
            fprintf(stderr, "  ok-error %s: %s\n", rel, st.msg);
    } else {
        if (rc != 0 && f == MF_FMT_HF_DIR && st.code == MF_ERR_UNSUPPORTED) {
            /* a directory whose weights need a reader mfmt lacks yet */
            printf("conformance: %s skipped: %s\n", rel, st.msg);
            t->skip++;
            mf_status_clear(&st);
            return;
        }
        ok = rc == 0;
        CHECKF(ok, "%s: must open: %s", rel, st.msg);
        if (ok) {
            json_t *ts = json_object_get(c, "tensors");
            int bad = ts ? compare_tensors(rel, m, ts) : 0;
            ok = bad == 0;
            CHECKF(ok, "%s: %d tensor mismatches", rel, bad);
        }
    }
    ok ? t->pass++ : t->fail++;
    mf_close(m);
    mf_status_clear(&st);
}

static void run_manifest(const char *shared, const char *dir)
{
    char base[4096], mpath[4200];
    snprintf(base, sizeof(base), "%s/%s", shared, dir);
    snprintf(mpath, sizeof(mpath), "%s/manifest.json", base);
    json_error_t err;
    /* the manifests hold u64 values beyond jansson's int64: read numbers as
     * doubles (shapes stay exact below 2^53) */
    json_t *man = json_load_file(mpath, JSON_DECODE_INT_AS_REAL, &err);
    if (!man) {
        printf("conformance: %s: %s, skipped\n", mpath, err.text);
        return;
    }
    memset(per_format, 0, sizeof(per_format));
    scan_safe_pass = scan_safe_fail = 0;
    for (size_t i = 0; i < json_array_size(man); i++)
        run_case(base, json_array_get(man, i));
    json_decref(man);
    for (int f = 0; f < MF_FMT_COUNT; f++) {
        tally *t = &per_format[f];
        if (t->pass + t->fail + t->skip)
            printf("conformance %-7s %-15s %3d passed %3d failed %3d skipped (no reader or scanner yet)\n",
                   dir, mf_format_name((mf_format)f), t->pass, t->fail, t->skip);
    }
    printf("conformance %-7s scan: %d benign files safe, %d flagged\n", dir, scan_safe_pass,
           scan_safe_fail);
}

/* real-gguf: vocab-only files from llama.cpp; they must open and hash. */
static void run_real_gguf(const char *shared)
{
    static const char *const files[] = {
        "ggml-vocab-bert-bge.gguf", "ggml-vocab-falcon.gguf", "ggml-vocab-gpt-2.gguf",
        "ggml-vocab-llama-spm.gguf", "ggml-vocab-mpt.gguf", "ggml-vocab-phi-3.gguf",
    };
    int pass = 0;
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/real-gguf/%s", shared, files[i]);
        if (!mf_path_exists(path))
            continue;
        mf_status st;
        mf_status_init(&st);
        mf_model *m;
        int rc = mf_open(path, NULL, &m, &st);
        CHECKF(rc == 0, "%s: %s", path, st.msg);
        if (rc == 0) {
            const mf_value *tok = mf_meta_get(m, "tokenizer.ggml.tokens");
            CHECKF(tok && tok->type == MF_V_ARR && tok->as.arr.n > 1000,
                   "%s: tokenizer.ggml.tokens missing", path);
            pass += tok != NULL;
            mf_close(m);
        }
        mf_status_clear(&st);
    }
    printf("conformance real-gguf %d files read with their vocabularies\n", pass);
}

int main(int argc, char **argv)
{
    verbose = argc > 1 && strcmp(argv[1], "-v") == 0;
    const char *shared = tl_shared_dir();
    if (!shared) {
        TL_SKIP("conformance: every corpus and real case (no ../shared)");
        return tl_report("conformance");
    }
    run_manifest(shared, "corpus");
    run_manifest(shared, "real");
    run_real_gguf(shared);
    return tl_report("conformance");
}
