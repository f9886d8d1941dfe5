/* test_split.c - GGUF split sets and merging, on the bundled example model:
 * every tensor's canonical hash survives split -> open as one -> merge. */
#include "testlib.h"

#include "ops/split.h"

#include <stdlib.h>
#include <unistd.h>

static mf_model *open_or_null(const char *path)
{
    mf_status st;
    mf_status_init(&st);
    mf_model *m = NULL;
    if (mf_open(path, NULL, &m, &st))
        fprintf(stderr, "open %s: %s\n", path, st.msg);
    mf_status_clear(&st);
    return m;
}

static bool same_tensors(const mf_model *a, const mf_model *b)
{
    if (a->n_tensors != b->n_tensors)
        return false;
    for (size_t i = 0; i < a->n_tensors; i++) {
        const mf_tensor *tb = mf_tensor_find(b, a->tensors[i].name);
        char ha[129], hb[129];
        mf_status st;
        mf_status_init(&st);
        bool ok = tb && tb->dtype == a->tensors[i].dtype &&
                  !mf_hash_tensor(a, &a->tensors[i], MF_SHA256, ha, &st) &&
                  !mf_hash_tensor(b, tb, MF_SHA256, hb, &st) && strcmp(ha, hb) == 0;
        mf_status_clear(&st);
        if (!ok)
            return false;
    }
    return true;
}

int main(void)
{
    char dir[] = "/tmp/mfmt-split-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    mf_model *src = open_or_null("examples/tiny-llama.gguf");
    CHECK(src != NULL);
    if (!src)
        return tl_report("split");
    char prefix[256], first[300], merged[300], st_out[300];
    snprintf(prefix, sizeof(prefix), "%s/part", dir);
    mf_status st;
    mf_status_init(&st);
    size_t nf = 0;
    CHECK(mf_gguf_split(src, prefix, &(mf_split_opts){.struct_size = sizeof(mf_split_opts), .max_tensors = 5, .max_bytes = 0}, &nf, &st) == 0);
    CHECKF(nf == 3, "12 tensors at 5 per file make 3 files, got %zu", nf);
    snprintf(first, sizeof(first), "%s-00001-of-%05zu.gguf", prefix, nf);
    mf_model *set = open_or_null(first);
    CHECK(set != NULL);
    if (set) {
        CHECK(same_tensors(src, set));
        const mf_value *cnt = mf_meta_get(set, "split.count");
        CHECK(cnt && cnt->type == MF_V_U16 && cnt->as.u == nf);
        CHECK(mf_meta_get(set, "general.architecture") != NULL);
        snprintf(merged, sizeof(merged), "%s/merged.gguf", dir);
        CHECK(mf_merge(set, merged, NULL, &st) == 0);
        mf_model *mm = open_or_null(merged);
        CHECK(mm && same_tensors(src, mm));
        CHECK(mm && mf_meta_get(mm, "split.count") == NULL);
        CHECK(mm && mm->n_meta == src->n_meta);
        mf_close(mm);
        mf_close(set);
    }
    /* a missing split file is an error naming it */
    char second[300];
    snprintf(second, sizeof(second), "%s-00002-of-%05zu.gguf", prefix, nf);
    unlink(second);
    mf_model *broken = NULL;
    mf_status_clear(&st);
    CHECK(mf_open(first, NULL, &broken, &st) != 0 && strstr(st.msg, "00002") != NULL);
    /* merge to safetensors: F16/F32 tensors, string metadata only */
    mf_model *tiny = open_or_null("examples/tiny.safetensors");
    snprintf(st_out, sizeof(st_out), "%s/copy.safetensors", dir);
    mf_status_clear(&st);
    CHECK(tiny && mf_merge(tiny, st_out, NULL, &st) == 0);
    mf_model *copy = open_or_null(st_out);
    CHECK(tiny && copy && same_tensors(tiny, copy));
    mf_close(copy);
    mf_close(tiny);
    mf_status_clear(&st);
    mf_close(src);
    CHECK(tl_remove_tmpdir(dir));
    return tl_report("split");
}
