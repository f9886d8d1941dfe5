/* test_every_tensor.c - every tensor of every file (and directory) under
 * ../shared/corpus and ../shared/real gives the same bytes three ways: the
 * stream (mf_hash_tensor, what `mfmt hash --tensors` prints), mf_tensor_read
 * of the whole tensor in its own dtype, and the zero-copy bytes
 * (mf_tensor_data / mf_tensor_mapped) where the library offers them. A
 * zero-copy pointer is only right where the stored bytes are the canonical
 * ones (issue 23: a sparse TFLite tensor's view showed other data); the
 * Python side of the same check is python/tests/test_every_tensor.py. */
#define _XOPEN_SOURCE 700
#include "testlib.h"
#include "testmf.h"

#include <ftw.h>
#include <stdint.h>

#include "core/core.h"

static size_t n_paths, n_opened, n_tensors, n_read, n_mapped, n_unreadable;

/* The canonical bytes of t by mf_tensor_read, hashed; 1: not readable as
 * its own dtype (STRING), which must then fail cleanly. */
static int read_hash(const mf_model *m, const mf_tensor *t, char hex[129])
{
    mf_status st;
    mf_status_init(&st);
    uint64_t need = 0;
    if (mf_tensor_read_size(t, mf_tensor_dtype(t), UINT64_MAX, &need, &st) != 0) {
        CHECKF(st.code == MF_ERR_UNSUPPORTED || st.code == MF_ERR_USAGE, "%s: %s: %s",
               mf_model_path(m), t->name, st.msg);
        mf_status_clear(&st);
        return 1;
    }
    uint8_t *buf = malloc(need ? need : 1);
    if (!buf)
        return 1;
    int rc = mf_tensor_read(m, t, mf_tensor_dtype(t), 0, UINT64_MAX, buf, need, &st);
    CHECKF(rc == 0, "%s: %s: mf_tensor_read: %s", mf_model_path(m), t->name, st.msg);
    tl_sha256_hex(buf, need, hex);
    free(buf);
    mf_status_clear(&st);
    return rc == 0 ? 0 : -1;
}

static void check_tensor(const mf_model *m, const mf_tensor *t)
{
    char streamed[129], read[129], direct[129];
    mf_status st;
    mf_status_init(&st);
    n_tensors++;
    if (mf_hash_tensor(m, t, MF_SHA256, streamed, &st) != 0) {
        /* a tensor the stream refuses must also be refused by the reads */
        n_unreadable++;
        mf_status_clear(&st);
        return;
    }
    int rr = read_hash(m, t, read);
    if (rr == 0) {
        n_read++;
        CHECKF(strcmp(read, streamed) == 0, "%s: %s (%s): mf_tensor_read %.16s, stream %.16s",
               mf_model_path(m), t->name, mf_dtype_name(t->dtype), read, streamed);
    }
    const void *data = mf_tensor_data(m, t);
    if (data) {
        n_mapped++;
        tl_sha256_hex(data, t->nbytes, direct);
        CHECKF(strcmp(direct, streamed) == 0, "%s: %s: mf_tensor_data bytes differ from the stream",
               mf_model_path(m), t->name);
    }
    const void *mapped = mf_tensor_mapped(m, t);
    CHECKF(!mapped || mf_tensor_is_plain(t), "%s: %s: mapped but not plain", mf_model_path(m),
           t->name);
    mf_status_clear(&st);
}

static int visit(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
    (void)sb;
    const char *base = path + ftw->base;
    if (ftw->level == 0 || (type != FTW_F && type != FTW_D))
        return 0;
    if (type == FTW_F && (strstr(base, ".json") || strstr(base, ".md") || strstr(base, ".py")))
        return 0;
    n_paths++;
    mf_status st;
    mf_status_init(&st);
    mf_model *m = NULL;
    mf_open_opts o;
    mf_open_opts_init(&o);
    o.flags = MF_OPEN_NO_SCAN;
    if (mf_open(path, &o, &m, &st) == 0) {
        n_opened++;
        for (size_t i = 0; i < mf_model_tensor_count(m); i++)
            check_tensor(m, mf_model_tensor_at(m, i));
        mf_close(m);
    }
    mf_status_clear(&st);
    return 0;
}

/* A tensor whose stored bytes are not the shape's (a sparse TFLite tensor:
 * its compressed buffer under the dense shape) offers no zero-copy bytes. */
static void test_plain_rule(void)
{
    static const uint8_t bytes[16];
    mf_tensor t = {.name = "w", .dtype = MF_F16, .ndim = 1, .shape = {8}, .data = bytes,
                   .nbytes = 16};
    CHECK(mf_tensor_is_plain(&t) && mf_tensor_data(NULL, &t) == bytes &&
          mf_tensor_mapped(NULL, &t) == bytes);
    t.nbytes = 10; /* stored compressed */
    CHECK(!mf_tensor_is_plain(&t) && !mf_tensor_data(NULL, &t) && !mf_tensor_mapped(NULL, &t));
    t.nbytes = 16;
    t.big_endian = true;
    CHECK(!mf_tensor_is_plain(&t) && !mf_tensor_mapped(NULL, &t));
    t.big_endian = false;
    static const int64_t strides[1] = {1};
    t.strides = strides;
    CHECK(mf_tensor_is_plain(&t) && !mf_tensor_data(NULL, &t) && mf_tensor_mapped(NULL, &t));
}

int main(void)
{
    test_plain_rule();
    const char *shared = tl_shared_dir();
    if (!shared) {
        TL_SKIP("every_tensor: every tensor of ../shared/corpus and ../shared/real (no ../shared)");
        return tl_report("every_tensor");
    }
    const char *sub[] = {"corpus", "real"};
    for (int i = 0; i < 2; i++) {
        char root[512];
        snprintf(root, sizeof(root), "%s/%s", shared, sub[i]);
        CHECKF(nftw(root, visit, 16, FTW_PHYS) == 0, "walk %s", root);
    }
    printf("%zu paths, %zu opened, %zu tensors: %zu read whole and compared, %zu zero-copy, "
           "%zu refused by the stream\n",
           n_paths, n_opened, n_tensors, n_read, n_mapped, n_unreadable);
    CHECKF(n_tensors > 1000, "only %zu tensors found", n_tensors);
    return tl_report("every_tensor");
}
