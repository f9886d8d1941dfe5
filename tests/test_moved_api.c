/* test_moved_api.c - the capabilities moved from cli/ into the library for
 * the bindings (lib/ops/convert_model.c, error_against.c, hash_record.c)
 * keep the API's promises: struct_size 0 refused, NULL status allowed,
 * nothing left behind on failure; and their results: a checkpoint's HF
 * directory, a GGUF split after writing, a model against itself (no error)
 * and against its Q4_K_M (the report's numbers, tests/report_against.py
 * checks them against numpy), delivery records (a copy with one byte
 * changed). The CLI and Python compare their outputs with each other
 * (tests/check_cli.sh, python/tests/test_cli_options.py). */
#include "testmf.h"

#include <mfmt.h>

#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmp[256];

static bool exists(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0;
}

static void test_struct_size_and_null_status(void)
{
    mf_convert_model_opts o;
    mf_convert_model_opts_init(&o);
    o.struct_size = 0;
    mf_status st;
    mf_status_init(&st);
    char out[400];
    snprintf(out, sizeof(out), "%s/never/", tmp);
    CHECK(mf_convert_model_to_hf_dir("tests/data/train/deepspeed/zero2", out, &o, NULL, &st) != 0 &&
          st.code == MF_ERR_USAGE);
    mf_status_clear(&st);
    snprintf(out, sizeof(out), "%s/never.gguf", tmp);
    CHECK(mf_convert_model_to_gguf("tests/data/train/deepspeed/zero2", out, &o, NULL, NULL, &st) != 0 &&
          st.code == MF_ERR_USAGE);
    mf_status_clear(&st);
    mf_error_opts eo;
    mf_error_opts_init(&eo);
    eo.struct_size = 0;
    mf_error_report *r = NULL;
    CHECK(mf_error_against("examples/tiny.safetensors", "examples/tiny.safetensors", &eo, &r, &st) != 0 &&
          st.code == MF_ERR_USAGE && r == NULL);
    mf_status_clear(&st);
    /* a NULL status: the failures still fail */
    CHECK(mf_error_against("nonexistent.gguf", "examples/tiny.safetensors", NULL, &r, NULL) != 0);
    CHECK(mf_gguf_split_written("nonexistent.gguf", 0, 2, NULL, NULL) != 0);
    CHECK(!exists(out));
}

static void test_checkpoint_to_hf_dir(void)
{
    char out[400], p[500];
    snprintf(out, sizeof(out), "%s/hf/", tmp);
    mf_convert_model_opts o;
    mf_convert_model_opts_init(&o);
    o.open_flags = MF_OPEN_NO_SCAN;
    o.threads = 2;
    mf_convert_model_result res;
    mf_status st;
    mf_status_init(&st);
    CHECKF(mf_convert_model_to_hf_dir("tests/data/train/deepspeed/zero2", out, &o, &res, &st) == 0,
           "%s", st.msg);
    snprintf(p, sizeof(p), "%s/model.safetensors", out);
    CHECK(exists(p) && res.n_tensors > 0 && res.n_files == 1 && res.n_copied == 0);
    /* its tensors are the checkpoint's merge, bit for bit */
    mf_model *a = NULL, *b = NULL;
    mf_open_opts oo;
    mf_open_opts_init(&oo);
    oo.flags = MF_OPEN_NO_SCAN;
    CHECK(mf_open("tests/data/train/deepspeed/zero2", &oo, &a, &st) == 0 && mf_open(p, &oo, &b, &st) == 0);
    char ha[129] = "", hb[129] = "";
    CHECK(a && b && mf_hash_tensor_content(a, MF_SHA256, ha, &st) == 0 &&
          mf_hash_tensor_content(b, MF_SHA256, hb, &st) == 0 && !strcmp(ha, hb));
    mf_close(a);
    mf_close(b);
    /* a directory with anything in it is refused and left as it was */
    CHECK(mf_convert_model_to_hf_dir("tests/data/train/deepspeed/zero2", out, &o, &res, &st) != 0 &&
          st.code == MF_ERR_USAGE && strstr(st.msg, "not an empty directory"));
    mf_status_clear(&st);
}

static void test_split_written(void)
{
    const char *shared = tl_shared_dir();
    if (!shared) {
        TL_SKIP("mf_gguf_split_written: no ../shared");
        return;
    }
    char src[400], path[400], cmd[1000], first[450];
    snprintf(src, sizeof(src), "%s/convert-ref/llama-tiny-f16.gguf", shared);
    snprintf(path, sizeof(path), "%s/s.gguf", tmp);
    snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", src, path);
    CHECK(system(cmd) == 0);
    size_t n = 0;
    mf_status st;
    mf_status_init(&st);
    CHECK(mf_gguf_split_written(path, 0, 1000000, &n, &st) == 0 && n == 1 && exists(path));
    CHECKF(mf_gguf_split_written(path, 0, 5, &n, &st) == 0 && n > 1, "%s", st.msg);
    snprintf(first, sizeof(first), "%s/s-00001-of-%05zu.gguf", tmp, n);
    CHECK(!exists(path) && exists(first));
    mf_status_clear(&st);
}

static void test_error_against(void)
{
    mf_error_report *r = NULL;
    mf_status st;
    mf_status_init(&st);
    /* a model against itself: every tensor exact */
    CHECKF(mf_error_against("examples/tiny-llama.gguf", "examples/tiny-llama.gguf", NULL, &r, &st) == 0,
           "%s", st.msg);
    CHECK(r && r->all.tensors > 0 && mf_error_rmse(&r->all) == 0 && mf_error_cosine(&r->all) == 1 &&
          isinf(mf_error_snr_db(&r->all)) && !r->mapped && r->n_tensors == r->all.tensors);
    mf_error_report_free(r);
    r = NULL;
    const char *shared = tl_shared_dir();
    if (shared) {
        char orig[400];
        snprintf(orig, sizeof(orig), "%s/convert-ref/llama-tiny-f32.gguf", shared);
        CHECKF(mf_error_against("tests/data/report_against/llama-tiny-Q4_K_M.gguf", orig, NULL, &r,
                                &st) == 0, "%s", st.msg);
        /* the layers' sums add up to the model's */
        double n = 0, sq = 0;
        for (size_t i = 0; r && i < r->n_layers; i++) {
            n += r->layers[i].acc.n;
            sq += r->layers[i].acc.sum_sq;
        }
        CHECK(r && r->all.tensors == 21 && n == r->all.n && fabs(sq - r->all.sum_sq) <= 1e-12 * sq &&
              mf_error_snr_db(&r->all) > 30 && mf_error_snr_db(&r->all) < 45 && r->n_worst == 5 &&
              r->worst[0].rmse >= r->worst[4].rmse);
        mf_error_report_free(r);
        r = NULL;
    }
    /* nothing in common: an error naming the model */
    CHECK(mf_error_against("examples/tiny.safetensors", "examples/tiny-llama.gguf", NULL, &r, &st) != 0 &&
          st.code == MF_ERR_FORMAT && strstr(st.msg, "counterpart") && r == NULL);
    mf_status_clear(&st);
    char layer[64];
    mf_layer_of("model.layers.12.mlp.up_proj.weight", layer, sizeof(layer));
    CHECK(!strcmp(layer, "model.layers.12"));
    mf_layer_of("output.weight", layer, sizeof(layer));
    CHECK(!strcmp(layer, ""));
}

static void test_records(void)
{
    char dir[400], rec[400], cmd[1200];
    snprintf(dir, sizeof(dir), "%s/model", tmp);
    snprintf(cmd, sizeof(cmd), "mkdir -p '%s' && cp examples/tiny.safetensors examples/tiny-llama.gguf '%s/'",
             dir, dir);
    CHECK(system(cmd) == 0);
    char *text = NULL;
    size_t n = 0;
    mf_status st;
    mf_status_init(&st);
    CHECKF(mf_record_make(dir, false, &text, &n, &st) == 0 && n == 2 && text &&
               strstr(text, "\"tensor_content_sha256\""), "%s", st.msg);
    snprintf(rec, sizeof(rec), "%s/rec.json", tmp);
    FILE *f = fopen(rec, "w");
    CHECK(f && text && fputs(text, f) >= 0);
    if (f)
        fclose(f);
    mf_free(text);
    mf_record_report *c = NULL;
    CHECK(mf_record_check(dir, rec, &c, &st) == 0 && c && c->outcome == MF_RECORD_OK && c->n_files == 2);
    mf_record_report_free(c);
    /* one tensor byte changed: the file and its tensors differ */
    snprintf(cmd, sizeof(cmd), "printf 'Z' | dd of='%s/tiny.safetensors' bs=1 seek=630 conv=notrunc 2>/dev/null",
             dir);
    CHECK(system(cmd) == 0);
    c = NULL;
    CHECK(mf_record_check(dir, rec, &c, &st) == 0 && c && c->outcome == MF_RECORD_DIFFERS);
    for (size_t i = 0; c && i < c->n_files; i++)
        if (!strcmp(c->files[i].path, "tiny.safetensors"))
            CHECK(c->files[i].result == MF_RECORD_DIFFERS && c->files[i].tensors_same == 0);
    mf_record_report_free(c);
    c = NULL;
    CHECK(mf_record_check(dir, "nonexistent.json", &c, &st) == 0 && c &&
          c->outcome == MF_RECORD_UNREADABLE && c->error[0]);
    mf_record_report_free(c);
    mf_status_clear(&st);
}

int main(void)
{
    snprintf(tmp, sizeof(tmp), "/tmp/mfmt-moved-XXXXXX");
    if (!mkdtemp(tmp)) {
        perror("mkdtemp");
        return 1;
    }
    test_struct_size_and_null_status();
    test_checkpoint_to_hf_dir();
    test_split_written();
    test_error_against();
    test_records();
    char cmd[400];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmp);
    return tl_report("moved_api");
}
