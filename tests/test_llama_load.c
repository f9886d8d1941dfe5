/* test_llama_load.c - validate's llama.cpp load check: every GGUF that
 * llama.cpp's own converter wrote (../shared/convert-ref, convert-ref-arch;
 * llama.cpp loads them all) passes; the same file without a key or a
 * tensor llama.cpp requires, or with an architecture it does not know, is
 * refused with the reason llama.cpp gives. */
#include "testlib.h"

#include "core/core.h"
#include "formats/formats.h"
#include "ops/hfconv/llama_load.h"
#include "ops/split.h"

#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>

static void collect(void *ctx, const char *msg)
{
    char *buf = ctx;
    size_t n = strlen(buf);
    snprintf(buf + n, 4096 - n, "%s\n", msg);
}

static size_t problems_of(const char *path, char *msgs)
{
    mf_status st;
    mf_status_init(&st);
    mf_model *m = NULL;
    msgs[0] = 0;
    size_t n = (size_t)-1;
    if (mf_open(path, NULL, &m, &st) == 0)
        n = mf_llama_load_problems(m, collect, msgs);
    CHECKF(m != NULL, "%s: %s", path, st.msg);
    mf_close(m);
    mf_status_clear(&st);
    return n;
}

static void all_references_load(const char *shared, const char *folder, int *count)
{
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s/%s", shared, folder);
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t l = strlen(de->d_name);
        if (l < 5 || strcmp(de->d_name + l - 5, ".gguf"))
            continue;
        char p[4400], msgs[4096];
        snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
        size_t n = problems_of(p, msgs);
        CHECKF(n == 0, "%s: llama.cpp loads it, but: %s", de->d_name, msgs);
        (*count)++;
    }
    closedir(d);
}

/* A copy of src without the key `drop_key` and the tensor `drop_tensor`,
 * general.architecture set to `arch` when not NULL, the key `as_f32` (if
 * any) turned into an f32. */
static int write_changed(const char *src, const char *out, const char *drop_key,
                         const char *drop_tensor, const char *arch, const char *as_f32)
{
    mf_status st;
    mf_status_init(&st);
    mf_model *m = NULL;
    if (mf_open(src, NULL, &m, &st)) {
        mf_status_clear(&st);
        return -1;
    }
    mf_kv *kv = calloc(m->n_meta, sizeof(mf_kv));
    mf_out_tensor *ts = calloc(m->n_tensors, sizeof(mf_out_tensor));
    size_t *map = calloc(m->n_tensors, sizeof(size_t));
    size_t nk = 0, nt = 0;
    for (size_t i = 0; i < m->n_meta; i++) {
        if (drop_key && !strcmp(m->meta[i].key, drop_key))
            continue;
        kv[nk] = m->meta[i];
        if (arch && !strcmp(kv[nk].key, "general.architecture")) {
            kv[nk].v.as.s.ptr = arch;
            kv[nk].v.as.s.len = strlen(arch);
        }
        if (as_f32 && !strcmp(kv[nk].key, as_f32)) {
            kv[nk].v.type = MF_V_F32;
            kv[nk].v.as.f = 2.0;
        }
        nk++;
    }
    for (size_t i = 0; i < m->n_tensors; i++) {
        if (drop_tensor && !strcmp(m->tensors[i].name, drop_tensor))
            continue;
        mf_out_from_tensor(&m->tensors[i], &ts[nt]);
        map[nt++] = i;
    }
    mf_model_fill f = {.m = m, .map = map};
    int rc = mf_gguf_write(out, ts, nt, kv, nk, mf_model_fill_fn, &f, &st);
    CHECKF(rc == 0, "%s", st.msg);
    free(kv);
    free(ts);
    free(map);
    mf_close(m);
    mf_status_clear(&st);
    return rc;
}

int main(void)
{
    const char *shared = tl_shared_dir();
    if (!shared) {
        TL_SKIP("llama_load: the real GGUFs (no ../shared)");
        return tl_report("llama_load");
    }
    int count = 0;
    all_references_load(shared, "convert-ref", &count);
    all_references_load(shared, "convert-ref-arch", &count);
    printf("llama_load: %d reference GGUFs pass the llama.cpp load check\n", count);
    CHECK(count >= 34);

    char src[4096], out[] = "/tmp/mfmt-llama-load-XXXXXX.gguf", msgs[4096];
    snprintf(src, sizeof(src), "%s/convert-ref/llama-tiny-f16.gguf", shared);
    int fd = mkstemps(out, 5);
    CHECK(fd >= 0);
    close(fd);
    /* the case of the issue: no layer_norm_rms_epsilon */
    CHECK(write_changed(src, out, "llama.attention.layer_norm_rms_epsilon", NULL, NULL, NULL) == 0);
    CHECK(problems_of(out, msgs) == 1 && strstr(msgs, "key not found in model: llama.attention.layer_norm_rms_epsilon"));
    /* a block's tensor missing */
    CHECK(write_changed(src, out, NULL, "blk.1.attn_k.weight", NULL, NULL) == 0);
    CHECK(problems_of(out, msgs) == 1 && strstr(msgs, "missing tensor 'blk.1.attn_k.weight'"));
    /* an architecture llama.cpp does not know (qwen3 came after c392e509) */
    CHECK(write_changed(src, out, NULL, NULL, "qwen3", NULL) == 0);
    CHECK(problems_of(out, msgs) == 1 && strstr(msgs, "unknown model architecture 'qwen3'"));
    /* per architecture: Mamba's SSM keys, BERT's causal flag */
    snprintf(src, sizeof(src), "%s/convert-ref-arch/mamba-tiny-f16.gguf", shared);
    CHECK(write_changed(src, out, "mamba.ssm.state_size", "blk.0.ssm_dt.bias", NULL, NULL) == 0);
    CHECK(problems_of(out, msgs) == 2 && strstr(msgs, "mamba.ssm.state_size") && strstr(msgs, "blk.0.ssm_dt.bias"));
    snprintf(src, sizeof(src), "%s/convert-ref-arch/bge-tiny-f16.gguf", shared);
    CHECK(write_changed(src, out, "bert.attention.causal", NULL, NULL, NULL) == 0);
    CHECK(problems_of(out, msgs) == 1 && strstr(msgs, "bert.attention.causal"));
    /* a key llama.cpp reads as a u32, written as an f32: its loader throws
     * "key ... has wrong type" */
    snprintf(src, sizeof(src), "%s/convert-ref/llama-tiny-f16.gguf", shared);
    CHECK(write_changed(src, out, NULL, NULL, NULL, "llama.attention.head_count") == 0);
    CHECK(problems_of(out, msgs) == 1 &&
          strstr(msgs, "llama.attention.head_count must be a u32 for llama.cpp, not a f32"));
    /* the 2026-02 families with a load rule (ecbcb7ea's loader): their
     * references load, the sinks and the sliding window are required */
    static const char *const new_refs[] = {"gpt-oss-tiny-f16.gguf", "gpt-oss-tiny-q8_0.gguf", "lfm2-tiny-f16.gguf",
                                           "qwen3next-tiny-f16.gguf", "qwen35-tiny-f16.gguf", "qwen35moe-tiny-f16.gguf"};
    for (size_t i = 0; i < sizeof(new_refs) / sizeof(new_refs[0]); i++) {
        snprintf(src, sizeof(src), "%s/convert-ref-new/%s", shared, new_refs[i]);
        CHECKF(problems_of(src, msgs) == 0, "%s: llama.cpp loads it, but: %s", new_refs[i], msgs);
    }
    snprintf(src, sizeof(src), "%s/convert-ref-new/gpt-oss-tiny-f16.gguf", shared);
    CHECK(write_changed(src, out, "gpt-oss.attention.sliding_window", "blk.1.attn_sinks.weight", NULL, NULL) == 0);
    CHECK(problems_of(out, msgs) == 2 && strstr(msgs, "gpt-oss.attention.sliding_window") &&
          strstr(msgs, "missing tensor 'blk.1.attn_sinks.weight'"));
    unlink(out);
    return tl_report("llama_load");
}
