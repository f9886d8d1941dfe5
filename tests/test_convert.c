/* test_convert.c - conversion to safetensors: every tensor of the corpus's
 * PyTorch files comes out with the canonical hash it went in with;
 * checkpoints are unwrapped, optimizer state kept only on request, shards
 * and their index written as Hugging Face does, inputs never overwritten. */
#include "testlib.h"

#include "ops/convert_st.h"
#include "pickle_build.h"

#include <jansson.h>

static int n_roundtrips;

static bool hash_of(const mf_model *m, const mf_tensor *t, char hex[129])
{
    mf_status st;
    mf_status_init(&st);
    int rc = mf_hash_tensor(m, t, MF_SHA256, hex, &st);
    mf_status_clear(&st);
    return rc == 0;
}

static mf_model *open_or_null(const char *path)
{
    mf_status st;
    mf_status_init(&st);
    mf_model *m = NULL;
    if (mf_open(path, NULL, &m, &st)) {
        fprintf(stderr, "  %s: %s\n", path, st.msg);
        m = NULL;
    }
    mf_status_clear(&st);
    return m;
}

/* Converts `in` to `out` and checks every selected tensor against the
 * output; returns the number of tensors written (-1 on failure). */
static int roundtrip(const char *in, const char *out, const mf_convert_st_opts *o)
{
    mf_model *m = open_or_null(in);
    if (!m)
        return -1;
    mf_status st;
    mf_status_init(&st);
    int written = -1;
    mf_convert_st_result res;
    if (mf_convert_to_safetensors(m, out, o, &res, &st)) {
        fprintf(stderr, "  convert %s: %s\n", in, st.msg);
    } else {
        mf_arena *a = mf_arena_new();
        mf_convert_item *items;
        size_t n;
        mf_model *w = mf_convert_select(m, o, a, &items, &n, &st) == 0 ? open_or_null(out) : NULL;
        if (w) {
            written = (int)w->n_tensors;
            CHECKF(w->n_tensors == n, "%s: %zu tensors written, %zu selected", in, w->n_tensors, n);
            /* the report says what the output holds (the CLI prints it) */
            uint64_t bytes = 0;
            for (size_t i = 0; i < w->n_tensors; i++)
                bytes += w->tensors[i].nbytes;
            CHECKF(res.n_tensors == w->n_tensors && res.tensor_bytes == bytes &&
                   (o->max_shard_size ? res.n_files >= 1 : res.n_files == 1),
                   "%s: reported %zu tensors, %llu bytes, %zu files; the output holds %zu, %llu", in,
                   res.n_tensors, (unsigned long long)res.tensor_bytes, res.n_files, w->n_tensors,
                   (unsigned long long)bytes);
            for (size_t i = 0; i < n; i++) {
                const mf_tensor *t = mf_tensor_find(w, items[i].name);
                char h1[129], h2[129];
                bool same = t && hash_of(m, items[i].t, h1) && hash_of(w, t, h2) &&
                            strcmp(h1, h2) == 0 && t->ndim == items[i].t->ndim &&
                            t->dtype == items[i].t->dtype;
                CHECKF(same, "%s: tensor \"%s\" differs after conversion", in, items[i].name);
            }
            const mf_value *fmt = mf_meta_get(w, "format");
            CHECKF(o->max_shard_size || (fmt && fmt->type == MF_V_STR && strcmp(fmt->as.s.ptr, "pt") == 0),
                   "%s: no __metadata__ format pt", out);
            mf_close(w);
            n_roundtrips++;
        }
        mf_arena_free(a);
    }
    mf_status_clear(&st);
    mf_close(m);
    return written;
}

static void test_corpus(const char *shared)
{
    char man[512];
    snprintf(man, sizeof(man), "%s/corpus/manifest.json", shared);
    json_t *cases = json_load_file(man, JSON_DECODE_INT_AS_REAL, NULL);
    size_t i;
    json_t *c;
    json_array_foreach(cases, i, c) {
        const char *fmt = json_string_value(json_object_get(c, "format"));
        const char *exp = json_string_value(json_object_get(c, "expect"));
        const char *rel = json_string_value(json_object_get(c, "path"));
        if (!fmt || !exp || !rel || strcmp(exp, "ok") != 0 ||
            (strcmp(fmt, "pytorch-zip") != 0 && strcmp(fmt, "pytorch-pickle") != 0 &&
             strcmp(fmt, "safetensors") != 0))
            continue;
        char in[700];
        snprintf(in, sizeof(in), "%s/corpus/%s", shared, rel);
        if (mf_is_dir(in))
            continue;
        mf_convert_st_opts o = {.struct_size = sizeof(mf_convert_st_opts)};
        CHECKF(roundtrip(in, pb_tmp("out.safetensors"), &o) >= 0, "%s: round trip failed", rel);
    }
    json_decref(cases);
}

static void test_checkpoint(const char *shared)
{
    char in[600];
    snprintf(in, sizeof(in), "%s/corpus/pytorch/lightning/epoch=3-step=10.ckpt", shared);
    mf_convert_st_opts o = {.struct_size = sizeof(mf_convert_st_opts)};
    const char *out = pb_tmp("ckpt.safetensors");
    CHECK(roundtrip(in, out, &o) == 4);
    mf_model *w = open_or_null(out);
    CHECK(w && mf_tensor_find(w, "model.fc1.weight") && !mf_tensor_find(w, "state_dict.model.fc1.weight"));
    mf_close(w);
    o.include_optimizer = true;
    CHECK(roundtrip(in, out, &o) == 16);
    w = open_or_null(out);
    CHECK(w && mf_tensor_find(w, "model.fc1.weight") &&
          mf_tensor_find(w, "optimizer_states.0.state.0.exp_avg"));
    mf_close(w);
    mf_convert_st_opts k = {.struct_size = sizeof(mf_convert_st_opts), .key = "optimizer_states.0.state"};
    CHECK(roundtrip(in, out, &k) == 12);
    w = open_or_null(out);
    CHECK(w && mf_tensor_find(w, "0.exp_avg_sq"));
    mf_close(w);
    k.key = "no.such.key";
    mf_model *m = open_or_null(in);
    mf_status st;
    mf_status_init(&st);
    CHECK(m && mf_convert_to_safetensors(m, out, &k, NULL, &st) == -1 && strstr(st.msg, "no.such.key"));
    mf_status_clear(&st);
    mf_close(m);
    /* tied weights: the shared tensor once, as save_pretrained writes it
     * (lm_head.weight, the later name, dropped); --keep-tied: every name */
    snprintf(in, sizeof(in), "%s/corpus/pytorch/tied_weights/pytorch_model.bin", shared);
    CHECK(roundtrip(in, out, &o) == 2);
    w = open_or_null(out);
    CHECK(w && mf_tensor_find(w, "model.embed_tokens.weight") && !mf_tensor_find(w, "lm_head.weight"));
    mf_close(w);
    o.keep_tied = true;
    CHECK(roundtrip(in, out, &o) == 3);
    w = open_or_null(out);
    CHECK(w && mf_tensor_find(w, "lm_head.weight"));
    mf_close(w);
    /* views of one storage at other offsets or strides are not tied */
    snprintf(in, sizeof(in), "%s/corpus/pytorch/views.pt", shared);
    o.keep_tied = false;
    mf_model *vm = open_or_null(in);
    size_t nv = vm ? vm->n_tensors : 0;
    mf_close(vm);
    CHECK(nv > 2 && roundtrip(in, out, &o) == (int)nv);
}

static void test_shards(const char *shared)
{
    char in[600];
    snprintf(in, sizeof(in), "%s/corpus/pytorch/views.pt", shared);
    const char *out = pb_tmp("sharded.safetensors");
    mf_convert_st_opts o = {.struct_size = sizeof(mf_convert_st_opts), .max_shard_size = 100};
    mf_model *m = open_or_null(in);
    mf_status st;
    mf_status_init(&st);
    CHECK(m && mf_convert_to_safetensors(m, out, &o, NULL, &st) == 0);
    char index[700];
    snprintf(index, sizeof(index), "%s.index.json", out);
    CHECK(mf_path_exists(pb_tmp("sharded-00001-of-00006.safetensors")) &&
          mf_path_exists(pb_tmp("sharded-00006-of-00006.safetensors")) && !mf_path_exists(out));
    json_t *j = json_load_file(index, 0, NULL);
    json_t *wm = json_object_get(j, "weight_map");
    CHECK(json_is_object(wm) && json_object_size(wm) == 8 &&
          strcmp(json_string_value(json_object_get(wm, "base")), "sharded-00001-of-00006.safetensors") == 0 &&
          json_integer_value(json_object_get(json_object_get(j, "metadata"), "total_size")) > 0);
    json_decref(j);
    /* the index opens as one model with the same tensors */
    mf_model *w = open_or_null(index);
    CHECK(w && w->n_tensors == 8);
    for (size_t i = 0; w && m && i < m->n_tensors; i++) {
        char h1[129], h2[129];
        const mf_tensor *t = mf_tensor_find(w, m->tensors[i].name);
        CHECK(t && hash_of(m, &m->tensors[i], h1) && hash_of(w, t, h2) && strcmp(h1, h2) == 0);
    }
    mf_close(w);
    /* a shard size larger than the model: one plain file */
    o.max_shard_size = 1ull << 30;
    CHECK(mf_convert_to_safetensors(m, pb_tmp("one.safetensors"), &o, NULL, &st) == 0 &&
          mf_path_exists(pb_tmp("one.safetensors")) &&
          !mf_path_exists(pb_tmp("one.safetensors.index.json")));
    mf_status_clear(&st);
    mf_close(m);
}

static int fill_floats(void *ctx, size_t index, mf_sink_fn sink, void *sink_ctx, mf_status *st)
{
    (void)index;
    return sink(sink_ctx, ctx, 4 * sizeof(float), st);
}

static void test_no_overwrite(void)
{
    /* a model converted onto itself is refused and left intact */
    float w[4] = {1, 2, 3, 4};
    mf_out_tensor t = {.name = "w", .dtype = MF_F32, .ndim = 1, .shape = {4}};
    const char *path = pb_tmp("self.safetensors");
    mf_status st;
    mf_status_init(&st);
    CHECK(mf_safetensors_write(path, &t, 1, NULL, 0, fill_floats, w, &st) == 0);
    char before[129], after[129];
    CHECK(mf_hash_file(path, MF_SHA256, before, &st) == 0);
    mf_model *m = open_or_null(path);
    mf_convert_st_opts o = {.struct_size = sizeof(mf_convert_st_opts)};
    CHECK(m && mf_convert_to_safetensors(m, path, &o, NULL, &st) == -1 && strstr(st.msg, "refusing to overwrite"));
    mf_close(m);
    mf_status_clear(&st);
    CHECK(mf_hash_file(path, MF_SHA256, after, &st) == 0 && strcmp(before, after) == 0);
    mf_status_clear(&st);
    /* and a copy converts fine, with the same bytes */
    mf_convert_st_opts none = {.struct_size = sizeof(mf_convert_st_opts)};
    CHECK(roundtrip(path, pb_tmp("copy.safetensors"), &none) == 1);
}

/* --max-shard-size as Hugging Face spells it (lib/core/size.c has the rest) */
static void test_sizes(void)
{
    uint64_t v;
    CHECK(mf_parse_size("5GB", &v) == 0 && v == 5000000000ull);
    CHECK(mf_parse_size("2GiB", &v) == 0 && v == 2ull << 30);
    CHECK(mf_parse_size("500MB", &v) == 0 && v == 500000000ull);
}

int main(void)
{
    test_sizes();
    const char *shared = tl_shared_dir();
    if (shared) {
        test_corpus(shared);
        test_checkpoint(shared);
        test_shards(shared);
        printf("convert: %d round trips\n", n_roundtrips);
    } else {
        TL_SKIP("convert: the corpus, checkpoint and shard conversions (no ../shared)");
    }
    test_no_overwrite();
    pb_cleanup();
    return tl_report("convert");
}
