/* test_dequantize.c - GGUF to safetensors with plain floats
 * (lib/ops/dequantize.c) and the quantize/dequantize command lines. */
#include "testlib.h"

#include "gguf_fixture.h"
#include "ops/dequantize.h"
#include "quant/quant.h"

#include <jansson.h>
#include <sys/wait.h>
#include <unistd.h>

static char g_tmp[] = "/tmp/mfmt-dequant-XXXXXX";
static char g_mix[512];

static void tmp_path(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", g_tmp, name);
}

/* The F16 model back to F16: the F16 tensors are the same bytes
 * (F16 -> F32 -> F16 is exact), shapes in C order. */
static void test_f16_identity(void)
{
    if (!*g_mix)
        return;
    char in[600], out[300];
    snprintf(in, sizeof(in), "%s/model-F16.gguf", g_mix);
    tmp_path(out, sizeof(out), "f16.safetensors");
    mf_status st;
    mf_status_init(&st);
    mf_dequantize_result r;
    CHECKF(mf_dequantize_file(in, out, &(mf_dequantize_opts){.struct_size = sizeof(mf_dequantize_opts), .dtype = MF_F16}, &r, &st) == 0, "%s", st.msg);
    CHECK(r.n_tensors == 75 && r.n_converted == 75 && r.n_copied == 0);
    mf_model *a = NULL, *b = NULL;
    if (mf_open(in, NULL, &a, &st) == 0 && mf_open(out, NULL, &b, &st) == 0) {
        CHECK(b->format == MF_FMT_SAFETENSORS && b->n_tensors == 75);
        int same = 0, f16 = 0;
        for (size_t i = 0; i < a->n_tensors; i++) {
            const mf_tensor *ta = &a->tensors[i], *tb = mf_tensor_find(b, ta->name);
            if (!tb || tb->dtype != MF_F16 || tb->ndim != ta->ndim ||
                memcmp(tb->shape, ta->shape, sizeof(int64_t) * (size_t)ta->ndim)) {
                CHECKF(0, "%s: missing or wrong shape", ta->name);
                continue;
            }
            if (ta->dtype != MF_F16)
                continue;
            f16++;
            char h1[129], h2[129];
            mf_hash_tensor(a, ta, MF_SHA256, h1, &st);
            mf_hash_tensor(b, tb, MF_SHA256, h2, &st);
            same += strcmp(h1, h2) == 0;
        }
        CHECKF(same == 58 && f16 == 58, "%d of %d F16 tensors identical", same, f16);
        const mf_tensor *k = mf_tensor_find(b, "blk.0.attn_k.weight");
        CHECK(k && k->ndim == 2 && k->shape[0] == 128 && k->shape[1] == 256); /* ne [256, 128] */
    }
    mf_close(a);
    mf_close(b);
    unlink(out);
    mf_status_clear(&st);
}

static const char *meta_str(const mf_model *m, const char *key)
{
    const mf_value *v = mf_meta_get(m, key);
    return v && v->type == MF_V_STR ? v->as.s.ptr : "";
}

/* A quantized model: every value as ggml's to_float gives it; metadata. */
static void test_q4_k_m_values(void)
{
    if (!*g_mix)
        return;
    char in[600], out[300];
    snprintf(in, sizeof(in), "%s/model-Q4_K_M-imatrix.gguf", g_mix);
    tmp_path(out, sizeof(out), "q4.safetensors");
    mf_status st;
    mf_status_init(&st);
    CHECKF(mf_dequantize_file(in, out, &(mf_dequantize_opts){.struct_size = sizeof(mf_dequantize_opts), .dtype = MF_F32}, NULL, &st) == 0, "%s", st.msg);
    mf_model *a = NULL, *b = NULL;
    if (mf_open(in, NULL, &a, &st) == 0 && mf_open(out, NULL, &b, &st) == 0) {
        int good = 0;
        for (size_t i = 0; i < a->n_tensors; i++) {
            const mf_tensor *ta = &a->tensors[i], *tb = mf_tensor_find(b, ta->name);
            size_t n = (size_t)mf_tensor_nelems(ta);
            float *want = malloc(n * 4);
            bool ok = tb && tb->dtype == MF_F32 && tb->nbytes == n * 4 && want &&
                      mf_dequantize_row(ta->dtype, ta->data, want, (int64_t)n) == 0 &&
                      memcmp(want, tb->data, n * 4) == 0;
            good += ok;
            free(want);
        }
        CHECKF(good == 75, "%d of 75 tensors bit-equal", good);
        CHECK(strcmp(meta_str(b, "general.architecture"), "llama") == 0);
        CHECK(strcmp(meta_str(b, "llama.block_count"), "8") == 0);
        CHECK(strcmp(meta_str(b, "general.file_type"), "15") == 0);
        CHECK(strcmp(meta_str(b, "llama.attention.layer_norm_rms_epsilon"), "9.99999975e-06") == 0);
        CHECK(strcmp(meta_str(b, "quantize.imatrix.file"), "imatrix.dat") == 0);
        CHECK(strcmp(meta_str(b, "quantize.imatrix.chunks_count"), "10") == 0);
    }
    mf_close(a);
    mf_close(b);
    unlink(out);
    mf_status_clear(&st);
}

/* Tensors over 1 MiB arrive in chunks that split blocks (210 and 34 bytes
 * do not divide 1 MiB); integer tensors are copied. */
static void test_split_blocks(void)
{
    enum { ROWS = 7500, NE0 = 256 };
    size_t n = (size_t)ROWS * NE0;
    float *x = malloc(n * 4), *want = malloc(n * 4);
    uint8_t *q6 = malloc(n), *q8 = malloc(n * 2);
    int32_t ints[6] = {1, -2, 3, -4, 5, 1 << 30};
    uint64_t s = 12345;
    for (size_t i = 0; i < n; i++)
        x[i] = fx_rand(&s, 1.0f);
    mf_quantize_rows(MF_Q6_K, x, q6, ROWS, NE0, NULL);
    mf_quantize_rows(MF_Q8_0, x, q8, ROWS, NE0, NULL);
    fx_tensor ts[3] = {{"a.q6", MF_Q6_K, 2, {ROWS, NE0}, q6, (size_t)ROWS * 210},
                       {"b.q8", MF_Q8_0, 2, {ROWS, NE0}, q8, (size_t)ROWS * 8 * 34},
                       {"c.ints", MF_I32, 2, {2, 3}, ints, sizeof(ints)}};
    mf_kv arr_meta = {"some.array", {MF_V_ARR, {0}}, 0};
    mf_value items[3] = {mf_value_uint(1), mf_value_uint(2), mf_value_uint(3)};
    for (int i = 0; i < 3; i++)
        items[i].type = MF_V_U32;
    arr_meta.v.as.arr.elem = MF_V_U32;
    arr_meta.v.as.arr.n = 3;
    arr_meta.v.as.arr.items = items;
    char in[300], out[300];
    tmp_path(in, sizeof(in), "split.gguf");
    tmp_path(out, sizeof(out), "split.safetensors");
    mf_status st;
    mf_status_init(&st);
    CHECK(fx_write_gguf(in, ts, 3, &arr_meta, 1, &st) == 0);
    mf_dequantize_result r;
    CHECKF(mf_dequantize_file(in, out, &(mf_dequantize_opts){.struct_size = sizeof(mf_dequantize_opts), .dtype = MF_BF16}, &r, &st) == 0, "%s", st.msg);
    CHECK(r.n_converted == 2 && r.n_copied == 1 && r.meta_kept == 1);
    mf_model *b = NULL;
    if (mf_open(out, NULL, &b, &st) == 0) {
        for (int k = 0; k < 2; k++) {
            const mf_tensor *t = mf_tensor_find(b, ts[k].name);
            mf_dequantize_row(ts[k].dt, ts[k].data, want, (int64_t)n);
            size_t bad = t && t->dtype == MF_BF16 && t->nbytes == n * 2 ? 0 : n;
            for (size_t i = 0; !bad && i < n; i++)
                bad += mf_rd16le(t->data + 2 * i) != mf_f32_to_bf16(want[i]);
            CHECKF(bad == 0, "%s: %zu values differ", ts[k].name, bad);
        }
        const mf_tensor *t = mf_tensor_find(b, "c.ints");
        CHECK(t && t->dtype == MF_I32 && t->nbytes == sizeof(ints) && memcmp(t->data, ints, sizeof(ints)) == 0);
        CHECK(strcmp(meta_str(b, "some.array"), "[1,2,3]") == 0);
        mf_close(b);
    }
    /* --dtype other than F32/F16/BF16 */
    CHECK(mf_dequantize_file(in, out, &(mf_dequantize_opts){.struct_size = sizeof(mf_dequantize_opts), .dtype = MF_Q8_0}, NULL, &st) == -1);
    mf_status_clear(&st);
    unlink(in);
    unlink(out);
    free(x);
    free(want);
    free(q6);
    free(q8);
}

static void test_meta_text(void)
{
    char *s;
    size_t n;
    mf_value v = mf_value_uint(8);
    v.type = MF_V_U32;
    CHECK(mf_meta_value_text(&v, &s, &n) && strcmp(s, "8") == 0 && n == 1);
    free(s);
    v = mf_value_int(-3);
    v.type = MF_V_I64;
    CHECK(mf_meta_value_text(&v, &s, &n) && strcmp(s, "-3") == 0);
    free(s);
    v = mf_value_bool(true);
    CHECK(mf_meta_value_text(&v, &s, &n) && strcmp(s, "true") == 0);
    free(s);
    v = mf_value_f64(0.1);
    CHECK(mf_meta_value_text(&v, &s, &n) && strcmp(s, "0.10000000000000001") == 0);
    free(s);
    v.type = MF_V_STR;
    v.as.s.ptr = "caf\xc3\xa9";
    v.as.s.len = 5;
    CHECK(mf_meta_value_text(&v, &s, &n) && n == 5 && strcmp(s, "caf\xc3\xa9") == 0);
    free(s);
    v.as.s.ptr = "bad\xff";
    v.as.s.len = 4;
    CHECK(!mf_meta_value_text(&v, &s, &n)); /* not UTF-8: cannot be JSON text */
    /* arrays: short ones as JSON, long or nested ones left out */
    static mf_value items[MF_DEQUANT_MAX_META_ARRAY + 1];
    for (int i = 0; i <= MF_DEQUANT_MAX_META_ARRAY; i++) {
        items[i].type = MF_V_STR;
        items[i].as.s.ptr = "a\"b";
        items[i].as.s.len = 3;
    }
    mf_value arr = {MF_V_ARR, {0}};
    arr.as.arr.elem = MF_V_STR;
    arr.as.arr.items = items;
    arr.as.arr.n = 2;
    CHECK(mf_meta_value_text(&arr, &s, &n) && strcmp(s, "[\"a\\\"b\",\"a\\\"b\"]") == 0);
    free(s);
    arr.as.arr.n = MF_DEQUANT_MAX_META_ARRAY + 1;
    CHECK(!mf_meta_value_text(&arr, &s, &n));
    arr.as.arr.elem = MF_V_ARR;
    arr.as.arr.n = 1;
    CHECK(!mf_meta_value_text(&arr, &s, &n));
}

/* ------------------------------------------------ command lines */

static int run_cmd(const char *cmd, char *out, size_t cap)
{
    char log[300];
    tmp_path(log, sizeof(log), "cmd.log");
    return tl_run_cmd(cmd, log, out, cap);
}

static void test_cli(void)
{
    const char *mfmt = getenv("MFMT");
    if (!mfmt || !*g_mix || access(mfmt, X_OK) != 0) {
        printf("skip: CLI tests (MFMT not set)\n");
        return;
    }
    static char out[65536];
    char cmd[2048], q[300], d[300];
    tmp_path(q, sizeof(q), "cli.gguf");
    tmp_path(d, sizeof(d), "cli.safetensors");
    /* an already-quantized input is refused, exit 1, with the reason */
    snprintf(cmd, sizeof(cmd), "%s quantize %s/model-Q4_K_M.gguf %s Q8_0", mfmt, g_mix, q);
    CHECK(run_cmd(cmd, out, sizeof(out)) == 1 && strstr(out, "not a superset") && access(q, F_OK) != 0);
    /* usage errors exit 2 */
    snprintf(cmd, sizeof(cmd), "%s quantize %s/model-F16.gguf %s Q9_K", mfmt, g_mix, q);
    CHECK(run_cmd(cmd, out, sizeof(out)) == 2 && strstr(out, "Q4_K_M"));
    snprintf(cmd, sizeof(cmd), "%s quantize %s/model-F16.gguf %s Q8_0 --threads 0", mfmt, g_mix, q);
    CHECK(run_cmd(cmd, out, sizeof(out)) == 2);
    /* dry run as JSON */
    snprintf(cmd, sizeof(cmd), "%s quantize --dry-run --json %s/model-F16.gguf Q4_K_M 2>/dev/null",
             mfmt, g_mix);
    CHECK(run_cmd(cmd, out, sizeof(out)) == 0);
    json_t *j = json_loads(out, 0, NULL);
    CHECK(j && json_integer_value(json_object_get(j, "file_bytes")) == 1983840 &&
          json_array_size(json_object_get(j, "tensors")) == 75);
    json_decref(j);
    /* a real run with options, then dequantize */
    snprintf(cmd, sizeof(cmd),
             "%s quantize %s/model-F16.gguf %s q4_k_m --threads 2 --output-tensor-type q8_0 "
             "--token-embedding-type f16",
             mfmt, g_mix, q);
    CHECK(run_cmd(cmd, out, sizeof(out)) == 0 && strstr(out, "wrote"));
    mf_status st;
    mf_status_init(&st);
    mf_model *m;
    if (mf_open(q, NULL, &m, &st) == 0) {
        CHECK(mf_tensor_find(m, "output.weight")->dtype == MF_Q8_0);
        CHECK(mf_tensor_find(m, "token_embd.weight")->dtype == MF_F16);
        CHECK(mf_tensor_find(m, "blk.0.attn_v.weight")->dtype == MF_Q6_K);
        mf_close(m);
    }
    snprintf(cmd, sizeof(cmd), "%s dequantize %s %s --dtype bf16", mfmt, q, d);
    CHECK(run_cmd(cmd, out, sizeof(out)) == 0 && strstr(out, "not recovered"));
    if (mf_open(d, NULL, &m, &st) == 0) {
        CHECK(m->n_tensors == 75 && mf_tensor_find(m, "output.weight")->dtype == MF_BF16);
        mf_close(m);
    }
    mf_status_clear(&st);
    unlink(q);
    unlink(d);
}

int main(void)
{
    if (!mkdtemp(g_tmp)) {
        CHECK(0);
        return tl_report("dequantize");
    }
    const char *shared = tl_shared_dir();
    if (shared)
        snprintf(g_mix, sizeof(g_mix), "%s/quant-ref/mix", shared);
    test_f16_identity();
    test_q4_k_m_values();
    test_split_blocks();
    test_meta_text();
    test_cli();
    rmdir(g_tmp);
    return tl_report("dequantize");
}
