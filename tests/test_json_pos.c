/* test_json_pos.c - byte offsets of JSON values in error messages: the
 * scanner (core/json_pos.c) and the safetensors corpus, where every breach
 * inside the header must name the byte where the offending value starts. */
#include "core/core.h"
#include "testlib.h"

#include <stdlib.h>

static int64_t loc1(const char *t, const char *key)
{
    mf_json_step p[1] = {{key, 0}};
    return mf_json_locate(t, strlen(t), 0, p, 1);
}

static void test_scanner(void)
{
    const char *t = " {\"a\": 1, \"b\" : [10, {\"c\": \"x,}]\"}, 30], \"a\": [1]}";
    CHECK(loc1(t, "a") == (int64_t)(strstr(t, "[1]") - t)); /* the last "a", as json.loads */
    CHECK(loc1(t, "b") == (int64_t)(strstr(t, "[10") - t));
    CHECK(loc1(t, "zz") == -1);
    mf_json_step p[3] = {{"b", 0}, {NULL, 2}, {NULL, 0}};
    CHECK(mf_json_locate(t, strlen(t), 0, p, 2) == (int64_t)(strstr(t, "30") - t));
    mf_json_step q[3] = {{"b", 0}, {NULL, 1}, {"c", 0}};
    CHECK(mf_json_locate(t, strlen(t), 0, q, 3) == (int64_t)(strstr(t, "\"x,}]\"") - t));
    mf_json_step r[2] = {{"b", 0}, {NULL, 3}};
    CHECK(mf_json_locate(t, strlen(t), 0, r, 2) == -1); /* past the end of the array */
    /* escaped keys decode before they are compared */
    const char *e = "{\"\\u00e9t\\u00e9\": 1, \"a\\\"b\": 2, \"\\ud83d\\ude00\": 3}";
    CHECK(loc1(e, "\xc3\xa9t\xc3\xa9") == (int64_t)(strstr(e, "1") - e));
    CHECK(loc1(e, "a\"b") == (int64_t)(strstr(e, "2") - e));
    CHECK(loc1(e, "\xf0\x9f\x98\x80") == (int64_t)(strstr(e, ": 3") + 2 - e));
    /* never past the span: a value cut short is not found */
    const char *cut = "{\"a\": [1, 2";
    mf_json_step s[2] = {{"a", 0}, {NULL, 5}};
    CHECK(mf_json_locate(cut, strlen(cut), 0, s, 2) == -1);
    CHECK(mf_json_skip_value(cut, strlen(cut), 6) == strlen(cut));
}

/* Each invalid corpus file: the offending value starts at the reported byte. */
static void test_corpus(const char *shared)
{
    static const struct { const char *file, *at; } cases[] = {
        {"dtype_numpy_name", "\"float32\""},
        {"unknown_dtype", "\"F128\""},
        {"duplicate_key", "\"w\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[16"},
        {"float_dim", "2.0"},
        {"negative_dim", "-"},
        {"string_dim", "\""},
        {"shape_overflow", "["},
        {"metadata_nested", "{"},
        {"metadata_non_string", "3"},
        {"metadata_not_object", "\""},
        {"missing_dtype", "{"},
        {"missing_shape", "{"},
        {"tensor_not_object", "["},
        {"offsets_negative", "-16"},
        {"offsets_start_after_end", "4]"},
        {"offsets_three_values", "["},
        {"size_mismatch", "[0,12]"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char path[512];
        snprintf(path, sizeof(path), "%s/corpus/safetensors/invalid/%s.safetensors", shared,
                 cases[i].file);
        mf_status st;
        mf_status_init(&st);
        mf_model *m = NULL;
        mf_open_opts o = {.struct_size = sizeof(mf_open_opts), .flags = MF_OPEN_STRICT};
        int rc = mf_open(path, &o, &m, &st);
        CHECKF(rc != 0, "%s opened", cases[i].file);
        const char *b = strstr(st.msg, ": byte ");
        long long off = b ? atoll(b + 7) : -1;
        mf_file f;
        mf_status fst;
        mf_status_init(&fst);
        if (off > 8 && mf_map_file(path, &f, &fst) == 0) {
            size_t k = strlen(cases[i].at);
            CHECKF((uint64_t)off + k <= f.size && memcmp(f.base + off, cases[i].at, k) == 0,
                   "%s: %s", cases[i].file, st.msg);
            mf_unmap_file(&f);
        } else {
            CHECKF(0, "%s: no offset past byte 8 in \"%s\"", cases[i].file, st.msg);
        }
        mf_status_clear(&fst);
        mf_status_clear(&st);
        mf_close(m);
    }
}

int main(void)
{
    test_scanner();
    const char *shared = tl_shared_dir();
    if (shared)
        test_corpus(shared);
    else
        TL_SKIP("json_pos: the corpus offsets (no ../shared)");
    return tl_report("json_pos");
}
