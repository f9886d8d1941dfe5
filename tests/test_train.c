/* test_train.c - training checkpoints (lib/formats/train/) merged against
 * the frameworks' own consolidation: DeepSpeed checkpoints laid out as
 * DeepSpeed's engine writes them, merged by DeepSpeed's own
 * utils/zero_to_fp32.py into *.ref.pt (tests/data/train/README.md says how
 * each was made); every tensor of the reference must come out of mfmt's
 * merge with the same name, dtype, shape and bytes, in the same order.
 * Then the rules: a missing, truncated or foreign shard is refused with
 * an error naming the shard. */
#include "testlib.h"
#include "testmf.h"

#include <mfmt.h>
#include "core/atomic.h"
#include <sys/stat.h>
#include <unistd.h>

#define DATA "tests/data/train/"

typedef struct grow_sink {
    unsigned char *p;
    size_t n, cap;
} grow_sink;

static int into(void *ctx, const void *buf, size_t n, mf_status *st)
{
    grow_sink *g = ctx;
    if (n > g->cap - g->n)
        return mf_fail(st, MF_ERR_USAGE, NULL, -1, "more bytes than the tensor's size");
    memcpy(g->p + g->n, buf, n);
    g->n += n;
    return 0;
}

static unsigned char *read_all(const mf_model *m, const mf_tensor *t, size_t *n)
{
    *n = (size_t)mf_tensor_nbytes(t);
    unsigned char *b = malloc(*n ? *n : 1);
    grow_sink s = {b, 0, *n};
    mf_status st;
    mf_status_init(&st);
    if (!b || mf_tensor_stream(m, t, into, &s, &st) || s.n != *n) {
        fprintf(stderr, "stream %s: %s\n", mf_tensor_name(t), st.msg);
        free(b);
        b = NULL;
    }
    mf_status_clear(&st);
    return b;
}

/* Every tensor of ref, in order, equal in mfmt's merge of ckpt. */
static void check_equal_cfg(const char *ckpt, unsigned flags, const char *config,
                            const char *ref)
{
    mf_open_opts o = MF_OPEN_OPTS_INIT;
    o.flags = flags | MF_OPEN_NO_SCAN;
    o.config = config;
    mf_model *m = NULL, *r = NULL;
    mf_status st;
    mf_status_init(&st);
    int rc = mf_open(ckpt, &o, &m, &st);
    CHECKF(rc == 0, "%s: %s", ckpt, st.msg);
    mf_status_clear(&st);
    o.config = NULL;
    rc = mf_open(ref, &o, &r, &st);
    CHECKF(rc == 0, "%s: %s", ref, st.msg);
    mf_status_clear(&st);
    if (!m || !r)
        goto out;
    size_t n = mf_model_tensor_count(r);
    CHECKF(mf_model_tensor_count(m) == n, "%s: %zu tensors, reference %zu", ckpt,
           mf_model_tensor_count(m), n);
    for (size_t i = 0; i < n && i < mf_model_tensor_count(m); i++) {
        const mf_tensor *a = mf_model_tensor_at(m, i), *b = mf_model_tensor_at(r, i);
        CHECKF(strcmp(mf_tensor_name(a), mf_tensor_name(b)) == 0, "%s: tensor %zu is %s, "
               "reference %s", ckpt, i, mf_tensor_name(a), mf_tensor_name(b));
        CHECKF(mf_tensor_dtype(a) == mf_tensor_dtype(b), "%s: %s dtype", ckpt, mf_tensor_name(a));
        int nd = mf_tensor_ndim(a);
        bool same_shape = nd == mf_tensor_ndim(b);
        for (int d = 0; same_shape && d < nd; d++)
            same_shape = mf_tensor_shape(a)[d] == mf_tensor_shape(b)[d];
        CHECKF(same_shape, "%s: %s shape", ckpt, mf_tensor_name(a));
        size_t na, nb;
        unsigned char *x = read_all(m, a, &na), *y = read_all(r, b, &nb);
        CHECKF(x && y && na == nb && memcmp(x, y, na) == 0, "%s: %s bytes differ", ckpt,
               mf_tensor_name(a));
        free(x);
        free(y);
    }
out:
    mf_close(m);
    mf_close(r);
}

static void check_equal(const char *ckpt, unsigned flags, const char *ref)
{
    check_equal_cfg(ckpt, flags, NULL, ref);
}

static const char *meta_str(const mf_model *m, const char *key, char *buf, size_t cap)
{
    const mf_value *v = NULL;
    for (size_t i = 0; i < mf_model_meta_count(m) && !v; i++)
        if (strcmp(mf_model_meta_at(m, i)->key, key) == 0)
            v = &mf_model_meta_at(m, i)->v;
    if (!v)
        return "";
    if (v->type == MF_V_STR)
        snprintf(buf, cap, "%.*s", (int)v->as.s.len, v->as.s.ptr);
    else if (v->type == MF_V_I64)
        snprintf(buf, cap, "%lld", (long long)v->as.i);
    else
        snprintf(buf, cap, "?");
    return buf;
}

static void test_deepspeed_inspect(void)
{
    mf_open_opts o = MF_OPEN_OPTS_INIT;
    o.flags = MF_OPEN_NO_SCAN;
    mf_model *m = NULL;
    CHECK(mf_open(DATA "deepspeed/zero3", &o, &m, NULL) == 0);
    if (!m)
        return;
    char b[64];
    CHECK(mf_model_format(m) == MF_FMT_DEEPSPEED);
    CHECK(strcmp(meta_str(m, "train.zero_stage", b, sizeof(b)), "3") == 0);
    CHECK(strcmp(meta_str(m, "train.world_size", b, sizeof(b)), "3") == 0);
    CHECK(strcmp(meta_str(m, "train.step", b, sizeof(b)), "10") == 0);
    CHECK(strcmp(meta_str(m, "train.tag", b, sizeof(b)), "global_step10") == 0);
    CHECK(strcmp(meta_str(m, "train.module_dtype", b, sizeof(b)), "BF16") == 0);
    mf_close(m);
    /* the tag folder itself opens the same */
    CHECK(mf_open(DATA "deepspeed/zero2/global_step10", &o, &m, NULL) == 0);
    mf_close(m);
}

static void test_deepspeed_merge(void)
{
    check_equal(DATA "deepspeed/zero1", 0, DATA "deepspeed/zero1.ref.pt");
    check_equal(DATA "deepspeed/zero2", 0, DATA "deepspeed/zero2.ref.pt");
    check_equal(DATA "deepspeed/zero3", 0, DATA "deepspeed/zero3.ref.pt");
    check_equal(DATA "deepspeed/zero2", MF_OPEN_TRAIN_EXCLUDE_FROZEN,
                DATA "deepspeed/zero2.nofrozen.ref.pt");
    /* ZeRO-0 (no partitions) and --from-module-states: module as saved */
    check_equal(DATA "deepspeed/zero0", 0,
                DATA "deepspeed/zero0.ref.pt");
}

static const char *mfmt_bin(void)
{
    const char *b = getenv("MFMT");
    return b && *b ? b : "build/mfmt";
}

/* The merge written by mf_convert_to_safetensors (partitions copied as
 * file runs, in the kernel) on 1 and on several threads: the same file
 * byte for byte, and equal to zero_to_fp32's reference. The copy threads
 * are given 64 bytes each at least, so these small checkpoints are split. */
static void copy_tree(const char *from, const char *to)
{
    char cmd[1024];
    snprintf(cmd, sizeof(cmd), "cp -r '%s' '%s'", from, to);
    CHECK(system(cmd) == 0);
}

static void merge_threads(const char *dir, const char *ckpt, const char *ref, const char *tag)
{
    uint64_t saved = mf_atomic_share_min;
    mf_atomic_share_min = 64;
    char out[8][512];
    int counts[] = {1, 2, 3, 7};
    mf_open_opts o = MF_OPEN_OPTS_INIT;
    o.flags = MF_OPEN_NO_SCAN;
    mf_model *m = NULL;
    mf_status st;
    mf_status_init(&st);
    CHECK(mf_open(ckpt, &o, &m, &st) == 0);
    for (int i = 0; m && i < 4; i++) {
        mf_convert_st_opts co;
        mf_convert_st_opts_init(&co);
        co.threads = counts[i];
        snprintf(out[i], sizeof(out[i]), "%s/%s-t%d.safetensors", dir, tag, counts[i]);
        CHECKF(mf_convert_to_safetensors(m, out[i], &co, NULL, &st) == 0, "%s: %s", out[i], st.msg);
        mf_status_clear(&st);
    }
    mf_close(m);
    check_equal(out[0], 0, ref);
    for (int i = 1; i < 4; i++) {
        char cmd[1200];
        snprintf(cmd, sizeof(cmd), "cmp -s '%s' '%s'", out[0], out[i]);
        CHECKF(system(cmd) == 0, "%s: %d threads wrote another file than 1", tag, counts[i]);
    }
    mf_atomic_share_min = saved;
}

static void test_deepspeed_threads(void)
{
    char dir[256], cmd[4000];
    if (!tl_make_tmpdir(dir, sizeof(dir), "threads"))
        return;
    merge_threads(dir, DATA "deepspeed/zero2", DATA "deepspeed/zero2.ref.pt", "zero2");
    merge_threads(dir, DATA "deepspeed/zero3", DATA "deepspeed/zero3.ref.pt", "zero3");
    merge_threads(dir, DATA "dcp113/dcp", DATA "dcp113/dcp.ref.pt", "dcp113");
    merge_threads(dir, DATA "megatron/megatron_dist", DATA "megatron/megatron_llama.ref.pt",
                  "mgdist");
    /* a partition replaced between the open (and its scan) and the copy:
     * the copy reopens it by path, and refuses another file than the one
     * it read (a swapped-in file's bytes were neither validated nor
     * scanned) */
    char swap[512], part[700], out[700];
    snprintf(swap, sizeof(swap), "%s/swap", dir);
    copy_tree(DATA "deepspeed/zero2", swap);
    mf_open_opts o = MF_OPEN_OPTS_INIT;
    o.flags = MF_OPEN_NO_SCAN;
    mf_model *m = NULL;
    mf_status st;
    mf_status_init(&st);
    CHECK(mf_open(swap, &o, &m, &st) == 0);
    snprintf(part, sizeof(part), "%s/global_step10/bf16_zero_pp_rank_1_mp_rank_00_optim_states.pt",
             swap);
    snprintf(cmd, sizeof(cmd), "cp '%s' '%s.new' && mv '%s.new' '%s'", part, part, part, part);
    CHECK(system(cmd) == 0);
    snprintf(out, sizeof(out), "%s/swapped.safetensors", dir);
    CHECKF(m && mf_convert_to_safetensors(m, out, NULL, NULL, &st) != 0 &&
           strstr(st.msg, "was replaced since it was read"), "swap: %s", st.msg);
    CHECKF(access(out, F_OK) != 0, "%s written", out);
    mf_status_clear(&st);
    mf_close(m);
    /* the CLI takes --threads for a merge to safetensors and to OUT/ */
    snprintf(cmd, sizeof(cmd), "%s convert -q --threads 3 " DATA "deepspeed/zero2 '%s/cli.safetensors' "
             "&& cmp -s '%s/cli.safetensors' '%s/zero2-t1.safetensors' && %s convert -q --threads 2 "
             DATA "deepspeed/zero2 '%s/out/' && test -f '%s/out/model.safetensors'", mfmt_bin(), dir,
             dir, dir, mfmt_bin(), dir, dir);
    CHECK(system(cmd) == 0);
    snprintf(cmd, sizeof(cmd), "%s convert -q --threads 0 " DATA "deepspeed/zero2 '%s/x.safetensors' "
             "2>/dev/null", mfmt_bin(), dir);
    CHECK(system(cmd) != 0);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

static void expect_error(const char *path, const char *needle1, const char *needle2)
{
    mf_open_opts o = MF_OPEN_OPTS_INIT;
    o.flags = MF_OPEN_NO_SCAN;
    mf_model *m = NULL;
    mf_status st;
    mf_status_init(&st);
    int rc = mf_open(path, &o, &m, &st);
    CHECKF(rc != 0, "%s opened", path);
    CHECKF(st.msg[0] && strstr(st.msg, needle1) && (!needle2 || strstr(st.msg, needle2)),
           "%s: message \"%s\" lacks \"%s\" / \"%s\"", path, st.msg, needle1,
           needle2 ? needle2 : "");
    mf_status_clear(&st);
    mf_close(m);
}

/* Megatron-Core torch_dist (TP=2 PP=2), written by torch's DCP writer on
 * four gloo ranks from the same weights and split rules as megatron_llama:
 * its merge equals megatron_llama's reference. */
static void test_megatron_dist(void)
{
    check_equal(DATA "megatron/megatron_dist", 0, DATA "megatron/megatron_llama.ref.pt");
    mf_open_opts o = MF_OPEN_OPTS_INIT;
    o.flags = MF_OPEN_NO_SCAN;
    mf_model *m = NULL;
    char b[64];
    CHECK(mf_open(DATA "megatron/megatron_dist/iter_0000100", &o, &m, NULL) == 0);
    if (m) {
        CHECK(mf_model_format(m) == MF_FMT_MEGATRON);
        CHECK(strcmp(meta_str(m, "train.framework", b, sizeof(b)), "megatron-core torch_dist") == 0);
        CHECK(strcmp(meta_str(m, "train.pipeline_parallel", b, sizeof(b)), "2") == 0);
        /* config.json is beside the parent: opened here, the padding stays */
        CHECK(strcmp(meta_str(m, "train.vocab_size", b, sizeof(b)), "64") == 0);
    }
    mf_close(m);
    char dir[256], p[512], q[1024];
    if (!tl_make_tmpdir(dir, sizeof(dir), "mgdist"))
        return;
    snprintf(p, sizeof(p), "%s/missing", dir);
    copy_tree(DATA "megatron/megatron_dist", p);
    snprintf(q, sizeof(q), "%s/iter_0000100/__1_0.distcp", p);
    CHECK(remove(q) == 0);
    expect_error(p, "__1_0.distcp", "missing");
    snprintf(p, sizeof(p), "%s/nocommon", dir);
    copy_tree(DATA "megatron/megatron_dist", p);
    snprintf(q, sizeof(q), "%s/iter_0000100/common.pt", p);
    CHECK(remove(q) == 0);
    expect_error(p, "common.pt", NULL);
    /* Megatron-Core's singleton_local_shards layout (gen_megatron_singleton.py):
     * refused by name, from common.pt's content_metadata or from a key of
     * .metadata, never half read */
    snprintf(p, sizeof(p), "%s/singleton", dir);
    copy_tree(DATA "megatron/megatron_dist", p);
    snprintf(q, sizeof(q), "cp " DATA "megatron/megatron_dist.singleton.common.pt "
             "'%s/iter_0000100/common.pt'", p);
    CHECK(system(q) == 0);
    expect_error(p, "common.pt", "singleton_local_shards is True");
    snprintf(p, sizeof(p), "%s/singleton_keys", dir);
    copy_tree(DATA "megatron/megatron_dist", p);
    snprintf(q, sizeof(q), "cp " DATA "megatron/megatron_dist.singleton.metadata "
             "'%s/iter_0000100/.metadata'", p);
    CHECK(system(q) == 0);
    expect_error(p, "linear_fc1.weight_w\" is Megatron-Core's singleton_local_shards layout",
                 ".metadata");
    snprintf(q, sizeof(q), "rm -rf '%s'", dir);
    CHECK(system(q) == 0);
}

typedef struct worst_verdict {
    mf_verdict v;
    size_t files;
    char first_bad[512];
} worst_verdict;

static int note_verdict(void *user, const mf_scan_report *r)
{
    worst_verdict *w = user;
    w->files++;
    if (r->verdict > w->v) {
        w->v = r->verdict;
        size_t k = 0; /* the first finding as bad as the file */
        while (k + 1 < r->n_findings && r->findings[k].severity != r->verdict)
            k++;
        snprintf(w->first_bad, sizeof(w->first_bad), "%s: %s", r->path,
                 r->n_findings ? r->findings[k].message : "");
    }
    return 0;
}

/* Megatron-Core torch_dist MoE (TP=2 DP=4 EP=2) with the distributed
 * optimizer's flattened fp32 master weights, written by torch 1.13's DCP
 * writer on eight gloo ranks (gen_megatron_dist_moe.py): the merge takes
 * the masters (bit-exact to megatron_merge_ref.py's merge of a legacy
 * checkpoint of them), --from-module-states the bf16 experts. */
static void test_megatron_dist_moe(void)
{
    const char *ck = DATA "megatron/megatron_dist_moe";
    check_equal(ck, 0, DATA "megatron/megatron_dist_moe.fp32.ref.pt");
    check_equal(ck, MF_OPEN_TRAIN_MODULE_STATES, DATA "megatron/megatron_dist_moe.ref.pt");
    mf_open_opts o = MF_OPEN_OPTS_INIT;
    o.flags = MF_OPEN_NO_SCAN;
    mf_model *m = NULL;
    char b[64];
    CHECK(mf_open(ck, &o, &m, NULL) == 0);
    if (m)
        CHECK(strcmp(meta_str(m, "train.source", b, sizeof(b)), "fp32 master weights "
                     "(distributed optimizer)") == 0);
    mf_close(m);
    /* broken copies: a DP rank's file of a flattened piece gone; the
     * .metadata of another checkpoint (the dense one) over these files */
    char dir[256], p[512], q[1024];
    if (!tl_make_tmpdir(dir, sizeof(dir), "mgmoe"))
        return;
    snprintf(p, sizeof(p), "%s/missing", dir);
    copy_tree(ck, p);
    snprintf(q, sizeof(q), "%s/iter_0000100/__7_0.distcp", p);
    CHECK(remove(q) == 0);
    expect_error(p, "__7_0.distcp", "missing");
    snprintf(p, sizeof(p), "%s/nomoe", dir);
    copy_tree(ck, p);
    snprintf(q, sizeof(q), "cp " DATA "megatron/megatron_dist/iter_0000100/.metadata "
             "'%s/iter_0000100/.metadata'", p);
    CHECK(system(q) == 0);
    expect_error(p, "__0_0.distcp", "needs bytes"); /* its chunks are not where it says */
    /* a flattened fp32 entry filed under another parameter (gen_megatron_dist_moe.py --bad-flat) */
    snprintf(p, sizeof(p), "%s/badflat", dir);
    copy_tree(ck, p);
    snprintf(q, sizeof(q), "cp " DATA "megatron/megatron_dist_moe.badflat.metadata "
             "'%s/iter_0000100/.metadata'", p);
    CHECK(system(q) == 0);
    expect_error(p, "fp32_param.decoder.layers.pre_mlp_layernorm.weight",
                 "not a flattened state of");
    snprintf(q, sizeof(q), "rm -rf '%s'", dir);
    CHECK(system(q) == 0);
}

static void test_deepspeed_broken(void)
{
    char dir[256], p[512], q[1024];
    if (!tl_make_tmpdir(dir, sizeof(dir), "train"))
        return;
    /* a missing rank */
    snprintf(p, sizeof(p), "%s/missing", dir);
    copy_tree(DATA "deepspeed/zero2", p);
    snprintf(q, sizeof(q), "%s/global_step10/bf16_zero_pp_rank_1_mp_rank_00_optim_states.pt", p);
    CHECK(remove(q) == 0);
    expect_error(p, "rank 1", "missing");
    /* the last rank missing: partition_count disagrees with the files */
    snprintf(p, sizeof(p), "%s/lastmissing", dir);
    copy_tree(DATA "deepspeed/zero2", p);
    snprintf(q, sizeof(q), "%s/global_step10/bf16_zero_pp_rank_2_mp_rank_00_optim_states.pt", p);
    CHECK(remove(q) == 0);
    expect_error(p, "partition_count says 3", NULL);
    /* a truncated shard: named, with the zip rule it breaks */
    snprintf(p, sizeof(p), "%s/truncated", dir);
    copy_tree(DATA "deepspeed/zero3", p);
    snprintf(q, sizeof(q), "%s/global_step10/bf16_zero_pp_rank_2_mp_rank_00_optim_states.pt", p);
    struct stat sb;
    CHECK(stat(q, &sb) == 0 && truncate(q, sb.st_size / 2) == 0);
    expect_error(p, "bf16_zero_pp_rank_2_mp_rank_00_optim_states.pt", NULL);
    /* a partition of another checkpoint: its sizes do not add up */
    snprintf(p, sizeof(p), "%s/foreign", dir);
    copy_tree(DATA "deepspeed/zero2", p);
    char r[512];
    snprintf(q, sizeof(q), "%s/global_step10/bf16_zero_pp_rank_0_mp_rank_00_optim_states.pt", p);
    snprintf(r, sizeof(r), DATA "deepspeed/zero1/global_step10/"
                           "bf16_zero_pp_rank_0_mp_rank_00_optim_states.pt");
    char cmd[2600];
    snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", r, q);
    CHECK(system(cmd) == 0);
    expect_error(p, "group", "partitions hold");
    /* `latest` naming a folder outside (".."): DeepSpeed's load_checkpoint
     * follows it, so the reader does not and the scan of the folder is not
     * safe (it was: the merge read the parent's pickles, never scanned) */
    snprintf(p, sizeof(p), "%s/escape", dir);
    copy_tree(DATA "deepspeed/zero2/global_step10", p);
    snprintf(cmd, sizeof(cmd), "mkdir '%s/ckpt' && printf '..\\n' > '%s/ckpt/latest'", p, p);
    CHECK(system(cmd) == 0);
    snprintf(q, sizeof(q), "%s/ckpt", p);
    mf_model *esc = NULL;
    CHECK(mf_open(q, NULL, &esc, NULL) != 0); /* not a DeepSpeed folder of its own */
    mf_close(esc);
    snprintf(cmd, sizeof(cmd), "cp '%s/mp_rank_00_model_states.pt' '%s/ckpt/'", p, p);
    CHECK(system(cmd) == 0);
    expect_error(q, "outside this folder", NULL); /* with model states: refused, named */
    worst_verdict w = {MF_VERDICT_SAFE, 0, ""};
    CHECK(mf_scan_path(q, note_verdict, &w, NULL) == 0);
    CHECKF(w.v == MF_VERDICT_UNKNOWN && strstr(w.first_bad, "load_checkpoint"), "%s: %s (%s)", q,
           mf_verdict_name(w.v), w.first_bad);
    /* ZeRO-3 module states are placeholders: --from-module-states refused */
    mf_open_opts o = MF_OPEN_OPTS_INIT;
    o.flags = MF_OPEN_NO_SCAN | MF_OPEN_TRAIN_MODULE_STATES;
    mf_model *m = NULL;
    mf_status st;
    mf_status_init(&st);
    CHECK(mf_open(DATA "deepspeed/zero3", &o, &m, &st) != 0 && strstr(st.msg, "placeholders"));
    mf_status_clear(&st);
    mf_close(m);
    /* OUT/ appears whole or not at all: a failed merge leaves neither OUT
     * nor its staging folder; a non-empty OUT is refused and left as is */
    char log[600], out[2048];
    snprintf(log, sizeof(log), "%s/log", dir);
    snprintf(cmd, sizeof(cmd), "%s convert -q '%s/foreign' '%s/out/'", mfmt_bin(), dir, dir);
    CHECK(tl_run_cmd(cmd, log, out, sizeof(out)) != 0);
    snprintf(cmd, sizeof(cmd), "ls -d '%s'/out* 2>/dev/null | grep -q .", dir);
    CHECKF(system(cmd) != 0, "a failed merge left %s/out*", dir);
    snprintf(cmd, sizeof(cmd), "mkdir '%s/full' && echo x > '%s/full/keep' && %s convert -q "
             DATA "deepspeed/zero2 '%s/full/'", dir, dir, mfmt_bin(), dir);
    CHECK(tl_run_cmd(cmd, log, out, sizeof(out)) != 0 && strstr(out, "not an empty directory"));
    snprintf(cmd, sizeof(cmd), "test \"$(ls '%s/full')\" = keep", dir);
    CHECK(system(cmd) == 0);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

static void test_dcp(void)
{
    check_equal(DATA "dcp113/dcp", 0, DATA "dcp113/dcp.ref.pt");
    /* torch 2.x layout: several chunks per .distcp at offsets */
    check_equal(DATA "dcp2x/dcp2", 0, DATA "dcp2x/dcp2.ref.pt");
    mf_open_opts o = MF_OPEN_OPTS_INIT;
    o.flags = MF_OPEN_NO_SCAN;
    mf_model *m = NULL;
    CHECK(mf_open(DATA "dcp113/dcp", &o, &m, NULL) == 0);
    char b[64];
    if (m) {
        CHECK(mf_model_format(m) == MF_FMT_DCP);
        CHECK(strcmp(meta_str(m, "train.world_size", b, sizeof(b)), "2") == 0);
        CHECK(strstr(meta_str(m, "train.layout", b, sizeof(b)), "1.13") != NULL);
    }
    mf_close(m);
    char dir[256], p[512], q[1024], cmd[1200];
    if (!tl_make_tmpdir(dir, sizeof(dir), "dcp"))
        return;
    snprintf(p, sizeof(p), "%s/missing", dir);
    copy_tree(DATA "dcp113/dcp", p);
    snprintf(q, sizeof(q), "%s/__1_0.distcp", p);
    CHECK(remove(q) == 0);
    expect_error(p, "__1_0.distcp", "missing");
    snprintf(p, sizeof(p), "%s/truncated", dir);
    copy_tree(DATA "dcp113/dcp", p);
    snprintf(q, sizeof(q), "%s/__0_2.distcp", p);
    CHECK(truncate(q, 300) == 0);
    expect_error(p, "__0_2.distcp", "truncated");
    /* a chunk file of another tensor: dtype/shape disagree with .metadata */
    snprintf(p, sizeof(p), "%s/swapped", dir);
    copy_tree(DATA "dcp113/dcp", p);
    snprintf(cmd, sizeof(cmd), "cp '%s/__0_2.distcp' '%s/__0_1.distcp'", p, p);
    CHECK(system(cmd) == 0);
    expect_error(p, "__0_1.distcp", ".metadata says BF16 [4, 5]");
    /* a FIFO where a chunk file should be: open() of it blocked until a
     * writer came (inspect hung); now refused, and the scan not safe */
    snprintf(p, sizeof(p), "%s/fifo", dir);
    copy_tree(DATA "dcp113/dcp", p);
    snprintf(cmd, sizeof(cmd), "rm '%s/__0_0.distcp' && mkfifo '%s/__0_0.distcp'", p, p);
    CHECK(system(cmd) == 0);
    snprintf(cmd, sizeof(cmd), "timeout 20 %s inspect '%s' >/dev/null 2>&1; test $? -eq 2",
             mfmt_bin(), p);
    CHECKF(system(cmd) == 0, "%s: inspect did not fail at once", p);
    worst_verdict fw = {MF_VERDICT_SAFE, 0, ""};
    mf_status fst;
    mf_status_init(&fst);
    CHECK(mf_scan_path(p, note_verdict, &fw, &fst) != 0 || fw.v != MF_VERDICT_SAFE);
    mf_status_clear(&fst);
    /* chunks placed outside the tensor (tests/data/train/gen_hostile.py):
     * at column 2^63 - 2 the sum wrapped and the gather wrote outside its
     * buffer; rows 3..10 of 7 were streamed as rows 0..6 */
    const char *outside[] = {"dcp_huge_off", "dcp_row_shift"};
    for (size_t i = 0; i < 2; i++) {
        snprintf(p, sizeof(p), "%s/%s", dir, outside[i]);
        copy_tree(DATA "dcp113/dcp", p);
        snprintf(cmd, sizeof(cmd), "cp " DATA "hostile/%s.metadata '%s/.metadata'", outside[i], p);
        CHECK(system(cmd) == 0);
        expect_error(p, "reaches outside the tensor", NULL);
        snprintf(cmd, sizeof(cmd), "%s convert -q '%s' '%s.safetensors' 2>/dev/null", mfmt_bin(),
                 p, p);
        CHECK(system(cmd) != 0);
        snprintf(q, sizeof(q), "%s.safetensors", p);
        CHECKF(access(q, F_OK) != 0, "%s written", q);
    }
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

static void test_megatron(void)
{
    /* TP=2 PP=2, config.json beside; TP=2 EP=2 MoE with qkv bias, --config */
    check_equal(DATA "megatron/megatron_llama", 0, DATA "megatron/megatron_llama.ref.pt");
    check_equal_cfg(DATA "megatron/megatron_mixtral", 0, DATA "megatron/megatron_mixtral.config.json",
                    DATA "megatron/megatron_mixtral.ref.pt");
    mf_open_opts o = MF_OPEN_OPTS_INIT;
    o.flags = MF_OPEN_NO_SCAN;
    mf_model *m = NULL;
    char b[64];
    CHECK(mf_open(DATA "megatron/megatron_llama/iter_0000100", &o, &m, NULL) == 0);
    if (m) {
        CHECK(mf_model_format(m) == MF_FMT_MEGATRON);
        CHECK(strcmp(meta_str(m, "train.tensor_parallel", b, sizeof(b)), "2") == 0);
        CHECK(strcmp(meta_str(m, "train.pipeline_parallel", b, sizeof(b)), "2") == 0);
        CHECK(strcmp(meta_str(m, "train.step", b, sizeof(b)), "100") == 0);
        /* the iteration folder alone: no config.json beside, padding kept */
        const mf_tensor *e = mf_tensor_find(m, "model.embed_tokens.weight");
        CHECK(e && mf_tensor_shape(e)[0] == 64);
    }
    mf_close(m);
    char dir[256], p[512], q[1024], cmd[1200];
    if (!tl_make_tmpdir(dir, sizeof(dir), "megatron"))
        return;
    snprintf(p, sizeof(p), "%s/missing", dir);
    copy_tree(DATA "megatron/megatron_llama", p);
    snprintf(cmd, sizeof(cmd), "rm -r '%s/iter_0000100/mp_rank_01_001'", p);
    CHECK(system(cmd) == 0);
    expect_error(p, "mp_rank_01_001/model_optim_rng.pt", "t=1 p=1");
    snprintf(p, sizeof(p), "%s/truncated", dir);
    copy_tree(DATA "megatron/megatron_llama", p);
    snprintf(q, sizeof(q), "%s/iter_0000100/mp_rank_00_001/model_optim_rng.pt", p);
    CHECK(truncate(q, 5000) == 0);
    expect_error(p, "mp_rank_00_001/model_optim_rng.pt", NULL);
    /* a rank of the MoE checkpoint in the dense one: shapes disagree */
    snprintf(p, sizeof(p), "%s/foreign", dir);
    copy_tree(DATA "megatron/megatron_llama", p);
    snprintf(cmd, sizeof(cmd), "cp '%s' '%s/iter_0000100/mp_rank_01_000/model_optim_rng.pt'",
             DATA "megatron/megatron_llama/iter_0000100/mp_rank_00_001/model_optim_rng.pt", p);
    CHECK(system(cmd) == 0);
    expect_error(p, "mp_rank_01_000/model_optim_rng.pt", "holds no tensor");
    /* args.hidden_size 2^62 (gen_hostile.py): 4 x hidden overflowed */
    snprintf(p, sizeof(p), "%s/huge", dir);
    copy_tree(DATA "megatron/megatron_llama", p);
    snprintf(cmd, sizeof(cmd), "cp " DATA "hostile/megatron_hidden_huge.pt "
             "'%s/iter_0000100/mp_rank_00_000/model_optim_rng.pt'", p);
    CHECK(system(cmd) == 0);
    expect_error(p, "args.hidden_size 4611686018427387904 is not 1..", NULL);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

/* convert of a plain trainer checkpoint: the wrappers' names dropped, the
 * optimizer, scheduler, RNG and loop state left out; every tensor of the
 * bare model's state dict there, by name. */
static void check_plain(const char *ckpt, const char *ref)
{
    char dir[256], out[512];
    if (!tl_make_tmpdir(dir, sizeof(dir), "plain"))
        return;
    snprintf(out, sizeof(out), "%s/out.safetensors", dir);
    mf_open_opts o = MF_OPEN_OPTS_INIT;
    o.flags = MF_OPEN_NO_SCAN;
    mf_model *m = NULL, *w = NULL, *r = NULL;
    mf_status st;
    mf_status_init(&st);
    CHECKF(mf_open(ckpt, &o, &m, &st) == 0, "%s: %s", ckpt, st.msg);
    CHECKF(m && mf_convert_to_safetensors(m, out, NULL, NULL, &st) == 0, "%s: %s", ckpt, st.msg);
    mf_status_clear(&st);
    CHECK(mf_open(out, &o, &w, NULL) == 0);
    CHECK(mf_open(ref, &o, &r, NULL) == 0);
    if (w && r) {
        CHECKF(mf_model_tensor_count(w) == mf_model_tensor_count(r), "%s: %zu tensors, not %zu",
               ckpt, mf_model_tensor_count(w), mf_model_tensor_count(r));
        for (size_t i = 0; i < mf_model_tensor_count(r); i++) {
            const mf_tensor *b = mf_model_tensor_at(r, i);
            const mf_tensor *a = mf_tensor_find(w, mf_tensor_name(b));
            CHECKF(a != NULL, "%s: no %s", ckpt, mf_tensor_name(b));
            size_t na = 0, nb = 0;
            unsigned char *x = a ? read_all(w, a, &na) : NULL, *y = read_all(r, b, &nb);
            CHECKF(!a || (x && y && na == nb && mf_tensor_dtype(a) == mf_tensor_dtype(b) &&
                          memcmp(x, y, na) == 0), "%s: %s differs", ckpt, mf_tensor_name(b));
            free(x);
            free(y);
        }
    }
    mf_close(m);
    mf_close(w);
    mf_close(r);
    remove(out);
    rmdir(dir);
}

static void test_plain(void)
{
    check_plain(DATA "plain/lightning.ckpt", DATA "plain/plain.ref.pt");
    check_plain(DATA "plain/ddp_fsdp.pt", DATA "plain/plain.ref.pt");
}

static bool same_file(const char *a, const char *b)
{
    FILE *x = fopen(a, "rb"), *y = fopen(b, "rb");
    bool same = x && y;
    int ca, cb;
    while (same && ((ca = fgetc(x)) != EOF) | ((cb = fgetc(y)) != EOF))
        same = ca == cb;
    if (x)
        fclose(x);
    if (y)
        fclose(y);
    return same;
}

/* The ZeRO-3 partitions of hf-dir/llama-tiny's weights, merged and
 * converted to GGUF in one command, give the very file llama.cpp's
 * convert_hf_to_gguf.py wrote from the original directory. */
static void test_checkpoint_to_gguf(void)
{
    const char *shared = tl_shared_dir();
    if (!shared || access(mfmt_bin(), X_OK) != 0) {
        printf("SKIP test_checkpoint_to_gguf: no ../shared or no %s\n", mfmt_bin());
        return;
    }
    char dir[256], cmd[2048], log[512], out[4096];
    if (!tl_make_tmpdir(dir, sizeof(dir), "ckpt-gguf"))
        return;
    snprintf(log, sizeof(log), "%s/log", dir);
    snprintf(cmd, sizeof(cmd), "%s convert -q --config "
             "%s/corpus/hf-dir/llama-tiny/config.json --type f16 " DATA
             "deepspeed-llama-tiny %s/llama-tiny.gguf", mfmt_bin(), shared, dir);
    int rc = tl_run_cmd(cmd, log, out, sizeof(out));
    CHECKF(rc == 0, "%s: %s", cmd, out);
    char got[512], want[512];
    snprintf(got, sizeof(got), "%s/llama-tiny.gguf", dir);
    snprintf(want, sizeof(want), "%s/convert-ref/llama-tiny-f16.gguf", shared);
    CHECKF(same_file(got, want), "%s differs from %s", got, want);
    /* to an HF directory: weights, config and tokenizer files */
    snprintf(cmd, sizeof(cmd), "%s convert -q --config "
             "%s/corpus/hf-dir/llama-tiny/config.json " DATA "deepspeed-llama-tiny %s/hf/",
             mfmt_bin(), shared, dir);
    CHECKF(tl_run_cmd(cmd, log, out, sizeof(out)) == 0, "%s: %s", cmd, out);
    snprintf(got, sizeof(got), "%s/hf/tokenizer.model", dir);
    snprintf(want, sizeof(want), "%s/corpus/hf-dir/llama-tiny/tokenizer.model", shared);
    CHECK(same_file(got, want));
    snprintf(got, sizeof(got), "%s/hf/config.json", dir);
    snprintf(want, sizeof(want), "%s/corpus/hf-dir/llama-tiny/config.json", shared);
    CHECK(same_file(got, want));
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

/* The real writers' pickles (Python 3.11 Enum members as getattr, DeepSpeed's
 * loss scalers and fragment addresses, torch.distributed.checkpoint's
 * metadata classes) scan safe: the gated names of doc/scan.md; so convert
 * takes them without --allow-unsafe. tests/data/scan_gate has the hostile
 * uses of the same names. */
static void test_scan_verdicts(void)
{
    const char *safe[] = {DATA "deepspeed/zero0", DATA "deepspeed/zero1", DATA "deepspeed/zero2",
                          DATA "deepspeed/zero3", DATA "deepspeed-llama-tiny",
                          DATA "dcp113/dcp", DATA "dcp2x/dcp2/.metadata", DATA "megatron",
                          DATA "plain"};
    for (size_t i = 0; i < sizeof(safe) / sizeof(safe[0]); i++) {
        worst_verdict w = {MF_VERDICT_SAFE, 0, ""};
        mf_status st;
        mf_status_init(&st);
        CHECKF(mf_scan_path(safe[i], note_verdict, &w, &st) == 0, "%s: %s", safe[i], st.msg);
        CHECKF(w.files > 0 && w.v == MF_VERDICT_SAFE, "%s: %s (%s)", safe[i],
               mf_verdict_name(w.v), w.first_bad);
        mf_status_clear(&st);
    }
    /* an item slice that is an archive inside a tensor's bytes of another
     * file (tests/data/scan/dcp_nested, gen_hostile.py): torch's
     * load_state_dict runs its call, so mf_open refuses it */
    mf_open_opts o = MF_OPEN_OPTS_INIT;
    o.flags = MF_OPEN_REFUSE_UNSAFE;
    mf_model *m = NULL;
    mf_status st;
    mf_status_init(&st);
    CHECKF(mf_open("tests/data/scan/dcp_nested", &o, &m, &st) != 0 && st.code == MF_ERR_UNSAFE,
           "dcp_nested: %s", st.msg);
    mf_status_clear(&st);
    mf_close(m);
}

int main(void)
{
    test_scan_verdicts();
    test_plain();
    test_checkpoint_to_gguf();
    test_megatron();
    test_megatron_dist();
    test_megatron_dist_moe();
    test_dcp();
    test_deepspeed_inspect();
    test_deepspeed_merge();
    test_deepspeed_threads();
    test_deepspeed_broken();
    printf("RESULT test_train %d %d\n", tl_passed, tl_failed);
    return tl_failed != 0;
}
