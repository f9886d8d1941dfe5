/* test_bpe_encode.c - mfmt's BPE encoder and llama.cpp's pre-tokenizer
 * naming, against facts from outside mfmt (tests/data/bpe/facts.json, made
 * by make_facts.py from llama.cpp's converter and its HF-tokenizer test
 * outputs) and llama.cpp's own vocab GGUFs (../shared/real-gguf):
 *  - the check text and the chkhsh table are the script's;
 *  - each gpt2-model vocab GGUF, written back as tokenizer.json by mfmt,
 *    encodes every test text to the ids Hugging Face's tokenizer gave (and
 *    the corner texts of stress.json, made by make_stress.js), and
 *    its check-text hash is the one the table lists for the GGUF's own
 *    tokenizer.ggml.pre;
 *  - patched copies of GPT-2's tokenizer.json (added-token options, split
 *    behaviors, normalizers, Metaspace, byte_fallback, unk, post-processors)
 *    encode as tokenizers 0.22.2 encoded the same files (stress.json);
 *  - the converter names the pre-tokenizer by that hash even where the
 *    family would give another name, and falls back to the family for the
 *    tiny test vocabularies only because their hashes are unknown. */
#include "core/core.h"
#include "mfmt/hash.h"
#include "ops/hfconv/bpe_encode.h"
#include "ops/hfconv/arch.h"
#include "ops/hfconv/gguf2hf_int.h"
#include "ops/hfconv/hfconv.h"
#include "testlib.h"

#include <dirent.h>
#include <jansson.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static json_t *facts, *stress;

/* The name the script's chain of ifs gives a hash: the last row's. */
static const char *facts_name_of(const char *hash)
{
    const char *name = NULL;
    json_t *rows = json_object_get(facts, "chkhsh_rows");
    for (size_t i = 0; i < json_array_size(rows); i++)
        if (!strcmp(json_string_value(json_array_get(json_array_get(rows, i), 0)), hash))
            name = json_string_value(json_array_get(json_array_get(rows, i), 1));
    return name;
}

/* The hash the script lists for a model's name (its first row). */
static const char *facts_hash_for(const char *name)
{
    json_t *rows = json_object_get(facts, "chkhsh_rows");
    for (size_t i = 0; i < json_array_size(rows); i++)
        if (!strcmp(json_string_value(json_array_get(json_array_get(rows, i), 1)), name))
            return json_string_value(json_array_get(json_array_get(rows, i), 0));
    return NULL;
}

static void test_chktxt_and_table(void)
{
    size_t n;
    const char *t = mf_bpe_chktxt(&n);
    mf_hasher *h = mf_hasher_new(MF_SHA256);
    char hex[129];
    mf_hasher_update(h, t, n);
    mf_hasher_final_hex(h, hex);
    mf_hasher_free(h);
    CHECKF(n == (size_t)json_integer_value(json_object_get(facts, "chktxt_bytes")), "%zu bytes", n);
    CHECKF(!strcmp(hex, json_string_value(json_object_get(facts, "chktxt_sha256"))), "chktxt sha256 %s", hex);
    CHECK(json_is_true(json_object_get(facts, "chktxt_is_nfc"))); /* NFC as identity is exact on it */
    json_t *rows = json_object_get(facts, "chkhsh_rows");
    CHECKF(json_array_size(rows) == 41, "%zu rows", json_array_size(rows));
    size_t agree = 0;
    for (size_t i = 0; i < json_array_size(rows); i++) {
        const char *hash = json_string_value(json_array_get(json_array_get(rows, i), 0));
        const char *got = mf_bpe_pre_name_of_hash(hash), *want = facts_name_of(hash);
        agree += got && want && !strcmp(got, want);
        if (!got || !want || strcmp(got, want))
            fprintf(stderr, "  %s: mfmt %s, script %s\n", hash, got ? got : "-", want ? want : "-");
    }
    CHECKF(agree == json_array_size(rows), "%zu of %zu rows agree", agree, json_array_size(rows));
    CHECK(!strcmp(mf_bpe_pre_name_of_hash(facts_hash_for("mpt")), "olmo")); /* the later if wins */
    CHECK(!strcmp(mf_bpe_pre_name_of_hash(facts_hash_for("bert-bge")), "jina-v2-en"));
    CHECK(mf_bpe_pre_name_of_hash("0000000000000000000000000000000000000000000000000000000000000000") == NULL);
}

/* The 2026-02-27 converter's table (--layout 2026-02): every row of
 * tests/data/bpe/chkhsh_2026.txt (chkhsh_rows.py of that converter's source)
 * names what the script's chain of ifs gives (the later row of a hash), and
 * its check text is the c392e509 one. */
static void test_table_2026(void)
{
    FILE *f = fopen("tests/data/bpe/chkhsh_2026.txt", "r");
    CHECKF(f != NULL, "tests/data/bpe/chkhsh_2026.txt unreadable");
    if (!f)
        return;
    char line[512], hash[100][65], name[100][64], sha[65] = "";
    size_t n = 0, agree = 0;
    while (fgets(line, sizeof(line), f)) {
        if (sscanf(line, "/* chktxt sha256 %64s", sha) == 1)
            continue;
        if (n < 100 && sscanf(line, " {\"%64[0-9a-f]\", \"%63[^\"]\"}", hash[n], name[n]) == 2)
            n++;
    }
    fclose(f);
    CHECKF(!strcmp(sha, json_string_value(json_object_get(facts, "chktxt_sha256"))), "2026 chktxt sha256 %s", sha);
    for (size_t i = 0; i < n; i++) {
        const char *want = name[i];
        for (size_t k = i + 1; k < n; k++) /* a later row of the same hash wins */
            if (!strcmp(hash[k], hash[i]))
                want = name[k];
        const char *got = mf_bpe_pre_name_of_hash_2026(hash[i]);
        agree += got && !strcmp(got, want);
        if (!got || strcmp(got, want))
            fprintf(stderr, "  2026 %s: mfmt %s, script %s\n", hash[i], got ? got : "-", want);
    }
    printf("chkhsh 2026 table: %zu of %zu rows agree\n", agree, n);
    CHECKF(n == 81 && agree == n, "%zu of %zu rows agree", agree, n);
}

/* "[1, 2]" of an id list, for messages */
static void ids_text(const int32_t *v, size_t n, char *out, size_t cap)
{
    size_t k = 0;
    out[0] = 0;
    for (size_t i = 0; i < n && k + 16 < cap; i++)
        k += (size_t)snprintf(out + k, cap - k, "%s%d", i ? " " : "", v[i]);
}

static size_t check_texts(const mf_bpe *b, const char *name, const json_t *texts, const json_t *want, bool special)
{
    size_t ok = 0;
    for (size_t i = 0; i < json_array_size(texts); i++) {
        const json_t *t = json_array_get(texts, i), *w = json_array_get(want, i);
        mf_bpe_ids ids = {0};
        mf_status st = MF_STATUS_INIT;
        int rc = mf_bpe_encode(b, json_string_value(t), json_string_length(t), special, &ids, &st);
        bool same = rc == 0 && ids.n == json_array_size(w);
        for (size_t k = 0; same && k < ids.n; k++)
            same = ids.v[k] == json_integer_value(json_array_get(w, k));
        if (!same) {
            char got[512];
            ids_text(ids.v, ids.n, got, sizeof(got));
            fprintf(stderr, "  %s text %zu%s: got %s\n", name, i, special ? " with special tokens" : "", got);
        }
        ok += same;
        MF_VEC_FREE(ids);
        mf_status_clear(&st);
    }
    return ok;
}

/* A directory holding only tokenizer.json (and an empty
 * tokenizer_config.json), for mf_hf_vocab_keys. */
static bool write_tok_dir(const char *dir, const json_t *tj)
{
    char p[700];
    mkdir(dir, 0755);
    snprintf(p, sizeof(p), "%s/tokenizer.json", dir);
    if (json_dump_file(tj, p, 0))
        return false;
    snprintf(p, sizeof(p), "%s/tokenizer_config.json", dir);
    FILE *f = fopen(p, "w");
    if (!f)
        return false;
    fputs("{}\n", f);
    return fclose(f) == 0;
}

/* tokenizer.ggml.pre that the converter writes for the directory as arch */
static char *converter_pre(const char *dir, const char *arch)
{
    mf_kvlist kv;
    mf_status st = MF_STATUS_INIT;
    json_t *cfg = json_object();
    mf_hf_vocab_opts o = {.kind = V_BPE, .arch = arch};
    char *name = NULL;
    mf_kvlist_init(&kv);
    if (mf_hf_vocab_keys(dir, cfg, &o, &kv, &st) == 0) {
        const mf_value *v = mf_kv_get(&kv, "tokenizer.ggml.pre");
        name = v && v->type == MF_V_STR ? strdup(v->as.s.ptr) : NULL;
    } else {
        fprintf(stderr, "  %s: %s\n", dir, mf_status_message(&st, 0));
    }
    mf_kvlist_free(&kv);
    json_decref(cfg);
    mf_status_clear(&st);
    return name;
}

/* arch: one whose family name differs from the hash's, where there is one */
static void test_vocab_gguf(const char *shared, const char *name, const char *arch, const char *tmp)
{
    char path[512], dir[600];
    snprintf(path, sizeof(path), "%s/real-gguf/ggml-vocab-%s.gguf", shared, name);
    mf_status st = MF_STATUS_INIT;
    mf_model *m = NULL;
    CHECKF(mf_open(path, NULL, &m, &st) == 0, "%s", path);
    const mf_value *pre = m ? mf_meta_get(m, "tokenizer.ggml.pre") : NULL;
    json_t *tj = m ? mf_hf_tokenizer_json_of(m, path, &st) : NULL;
    mf_bpe *b = tj ? mf_bpe_new(tj, NULL, path, &st) : NULL;
    CHECKF(pre && pre->type == MF_V_STR && b, "%s: %s", name, mf_status_count(&st) ? mf_status_message(&st, 0) : "");
    if (b) {
        json_t *want = json_object_get(json_object_get(facts, "ids"), name);
        size_t ok = check_texts(b, name, json_object_get(facts, "texts"), want, false);
        CHECKF(ok == json_array_size(want) && ok > 40, "%s: %zu of %zu texts as HF tokenizers", name, ok,
               json_array_size(want));
        json_t *swant = json_object_get(json_object_get(stress, "ids"), name);
        if (swant) { /* the corner texts, ids from tokenizers 0.22.2 */
            ok = check_texts(b, name, json_object_get(stress, "texts"), swant, false);
            CHECKF(ok == json_array_size(swant) && ok > 80, "%s: %zu of %zu stress texts as HF tokenizers", name,
                   ok, json_array_size(swant));
        }
        char hex[65];
        const char *listed = facts_hash_for(pre->as.s.ptr);
        CHECKF(mf_bpe_chkhsh(b, hex, &st) == 0 && listed && !strcmp(hex, listed), "%s: chkhsh %s, table %s", name,
               hex, listed ? listed : "-");
        snprintf(dir, sizeof(dir), "%s/%s", tmp, name);
        char *got = write_tok_dir(dir, tj) ? converter_pre(dir, arch) : NULL;
        const char *expect = listed ? facts_name_of(listed) : NULL;
        CHECKF(got && expect && !strcmp(got, expect), "%s as %s: converter names %s, the hash %s", name, arch,
               got ? got : "-", expect ? expect : "-");
        free(got);
    }
    mf_bpe_free(b);
    json_decref(tj);
    mf_close(m);
    mf_status_clear(&st);
}

/* make_stress.js's patch over a copy of tj (see there) */
static json_t *patched(const json_t *tj, const json_t *p)
{
    json_t *t = json_deep_copy(tj), *model = json_object_get(t, "model");
    json_object_update(t, json_object_get(p, "top"));
    json_object_update(model, json_object_get(p, "model"));
    json_array_extend(json_object_get(t, "added_tokens"), json_object_get(p, "append_added"));
    if (json_is_true(json_object_get(p, "byte_tokens"))) {
        json_t *vocab = json_object_get(model, "vocab");
        json_int_t next = 0;
        const char *k;
        json_t *v;
        json_object_foreach(vocab, k, v) {
            if (json_integer_value(v) >= next)
                next = json_integer_value(v) + 1;
        }
        for (int b = 0; b < 256; b++) {
            char name[8];
            snprintf(name, sizeof(name), "<0x%02X>", b);
            json_object_set_new(vocab, name, json_integer(next++));
        }
        json_object_set_new(vocab, "<unk>", json_integer(next));
    }
    return t;
}

/* The features the vocab GGUFs leave out, on patched copies of GPT-2's
 * tokenizer.json, against the ids tokenizers 0.22.2 gave the same files. */
static void test_variants(const char *shared)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/real-gguf/ggml-vocab-gpt-2.gguf", shared);
    mf_status st = MF_STATUS_INIT;
    mf_model *m = NULL;
    json_t *base = mf_open(path, NULL, &m, &st) == 0 ? mf_hf_tokenizer_json_of(m, path, &st) : NULL;
    CHECKF(base != NULL, "%s", path);
    const json_t *texts = json_object_get(stress, "variant_texts"), *v;
    const char *name;
    size_t n = 0;
    json_object_foreach(json_object_get(stress, "variants"), name, v) {
        json_t *tj = base ? patched(base, json_object_get(v, "patch")) : NULL;
        mf_bpe *b = tj ? mf_bpe_new(tj, NULL, name, &st) : NULL;
        CHECKF(b != NULL, "%s: %s", name, mf_status_count(&st) ? mf_status_message(&st, 0) : "");
        if (b) {
            size_t ok = check_texts(b, name, texts, json_object_get(v, "ids"), false);
            size_t oks = check_texts(b, name, texts, json_object_get(v, "ids_special"), true);
            CHECKF(ok == json_array_size(texts) && oks == ok && ok > 100, "%s: %zu and %zu of %zu texts", name, ok, oks,
                   json_array_size(texts));
        }
        n++;
        mf_bpe_free(b);
        json_decref(tj);
    }
    CHECKF(n >= 6, "%zu variants", n);
    json_decref(base);
    mf_close(m);
    mf_status_clear(&st);
}

/* Every BPE tokenizer.json of the tiny reference directories: the encoder
 * runs it and the hash is unknown, so the converter's family name stands. */
static void test_tiny_dirs_fall_back(const char *shared)
{
    char root[512];
    snprintf(root, sizeof(root), "%s/convert-ref-arch/dirs", shared);
    DIR *d = opendir(root);
    CHECKF(d != NULL, "%s", root);
    size_t hashed = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        char p[1024];
        snprintf(p, sizeof(p), "%s/%s/tokenizer.json", root, e->d_name);
        json_t *tj = e->d_name[0] != '.' ? json_load_file(p, 0, NULL) : NULL;
        const char *type = json_string_value(json_object_get(json_object_get(tj, "model"), "type"));
        if (tj && type && !strcmp(type, "BPE")) {
            mf_status st = MF_STATUS_INIT;
            mf_bpe *b = mf_bpe_new(tj, NULL, p, &st);
            char hex[65];
            bool ran = b && mf_bpe_chkhsh(b, hex, &st) == 0;
            CHECKF(ran, "%s: %s", e->d_name, mf_status_count(&st) ? mf_status_message(&st, 0) : "");
            CHECKF(!ran || !mf_bpe_pre_name_of_hash(hex), "%s hashes to a known model", e->d_name);
            hashed += ran;
            mf_bpe_free(b);
            mf_status_clear(&st);
        }
        json_decref(tj);
    }
    if (d)
        closedir(d);
    CHECKF(hashed >= 14, "%zu BPE directories hashed", hashed);
}

/* A hand-made tokenizer.json: added tokens split first (longest match,
 * lstrip/rstrip), Split behaviors, ByteLevel's prefix space, merges by
 * rank, the template's BOS; each expected id list is worked out by hand
 * from the rules in tokenizers' sources (not from mfmt). The added tokens
 * have the ids tokenizers gives them: the next ones after the 9 entries of
 * the vocabulary. */
static void test_small_rules(void)
{
    const char *text =
        "{\"added_tokens\":["
        "{\"id\":9,\"content\":\"<s>\",\"special\":true,\"normalized\":false},"
        "{\"id\":10,\"content\":\"<s>x\",\"special\":true,\"normalized\":false},"
        "{\"id\":11,\"content\":\"[x]\",\"special\":false,\"normalized\":true,\"lstrip\":true,\"rstrip\":true}],"
        "\"normalizer\":null,"
        "\"pre_tokenizer\":{\"type\":\"Sequence\",\"pretokenizers\":["
        "{\"type\":\"Split\",\"pattern\":{\"String\":\"-\"},\"behavior\":\"MergedWithNext\",\"invert\":false},"
        "{\"type\":\"ByteLevel\",\"add_prefix_space\":true,\"use_regex\":false}]},"
        "\"post_processor\":{\"type\":\"TemplateProcessing\",\"single\":[{\"SpecialToken\":{\"id\":\"<s>\"}},"
        "{\"Sequence\":{\"id\":\"A\"}}],\"special_tokens\":{\"<s>\":{\"id\":\"<s>\",\"ids\":[9]}}},"
        "\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0,\"b\":1,\"-\":2,\"\\u0120\":3,\"ab\":4,\"\\u0120a\":5,"
        "\"\\u0120ab\":6,\"-a\":7,\"bb\":8},"
        "\"merges\":[\"\\u0120 a\",\"a b\",\"\\u0120a b\",\"- a\",[\"b\",\"b\"]]}}";
    json_t *tj = json_loads(text, 0, NULL);
    mf_status st = MF_STATUS_INIT;
    mf_bpe *b = tj ? mf_bpe_new(tj, NULL, "small", &st) : NULL;
    CHECKF(b != NULL, "%s", mf_status_count(&st) ? mf_status_message(&st, 0) : "json");
    static const struct { const char *in; bool special; int32_t want[12]; size_t n; } cases[] = {
        /* "ab" -> " ab" (prefix space) -> Ġ a b: Ġa (rank 0), then Ġab (2) */
        {"ab", true, {9, 6}, 2},
        /* "<s>x" and "<s>" both start at 0: the longer wins */
        {"<s>xab", false, {10, 6}, 2},
        /* "a-ab": MergedWithNext keeps "-" on "ab": "a", "-ab" -> " a", " -ab";
           " -ab": Ġ - a b: a b (1) before - a (3) -> Ġ - ab; no Ġ- merge, no -ab */
        {"a-ab", false, {5, 3, 2, 4}, 4},
        /* " [x] b": lstrip/rstrip take the spaces around [x]: "", [x], "b" -> Ġb: no merge */
        {"a [x] b", false, {5, 11, 3, 1}, 4},
        /* bbb: the leftmost bb merges first (equal ranks) */
        {"bbb", false, {3, 8, 1}, 3},
    };
    for (size_t i = 0; b && i < sizeof(cases) / sizeof(cases[0]); i++) {
        mf_bpe_ids ids = {0};
        int rc = mf_bpe_encode(b, cases[i].in, strlen(cases[i].in), cases[i].special, &ids, &st);
        bool same = rc == 0 && ids.n == cases[i].n && !memcmp(ids.v, cases[i].want, ids.n * sizeof(int32_t));
        char got[256];
        ids_text(ids.v, ids.n, got, sizeof(got));
        CHECKF(same, "\"%s\": got %s", cases[i].in, got);
        MF_VEC_FREE(ids);
    }
    mf_bpe_ids ids = {0};
    CHECK(b && mf_bpe_encode(b, "\xff", 1, false, &ids, &st) != 0); /* not UTF-8: refused */
    MF_VEC_FREE(ids);
    mf_bpe_free(b);
    json_decref(tj);
    mf_status_clear(&st);
}

/* BLOOM's split regex " ?[^(\s|[.,!?])]+" nests a class in a class: in
 * Oniguruma the union, with '(' '|' ')' literal members, so "(" and "."
 * are split off as their own pieces. Worked out by hand from Oniguruma's
 * class syntax (doc/RE: "[...[...]...]" is a union); vocabulary b ( . bb
 * and the merges "b (", "( b" show where the pieces are cut. */
static void test_nested_class(void)
{
    const char *text =
        "{\"pre_tokenizer\":{\"type\":\"Split\",\"pattern\":{\"Regex\":\" ?[^(\\\\s|[.,!?])]+\"},"
        "\"behavior\":\"Isolated\",\"invert\":false},"
        "\"model\":{\"type\":\"BPE\",\"vocab\":{\"b\":0,\"(\":1,\".\":2,\"b(\":3,\"(b\":4,\"|\":5,\" \":6},"
        "\"merges\":[\"b (\",\"( b\"]}}";
    json_t *tj = json_loads(text, 0, NULL);
    mf_status st = MF_STATUS_INIT;
    mf_bpe *b = tj ? mf_bpe_new(tj, NULL, "nested", &st) : NULL;
    CHECKF(b != NULL, "%s", mf_status_count(&st) ? mf_status_message(&st, 0) : "json");
    /* "b(b|b. b": pieces b ( b | b . " b" -> no merge crosses a cut */
    static const int32_t want[] = {0, 1, 0, 5, 0, 2, 6, 0};
    mf_bpe_ids ids = {0};
    int rc = b ? mf_bpe_encode(b, "b(b|b. b", 8, false, &ids, &st) : -1;
    char got[256];
    ids_text(ids.v, ids.n, got, sizeof(got));
    CHECKF(rc == 0 && ids.n == 8 && !memcmp(ids.v, want, sizeof(want)), "nested class: got %s", got);
    MF_VEC_FREE(ids);
    mf_bpe_free(b);
    json_decref(tj);
    mf_status_clear(&st);
}

/* What the encoder does not run is refused, never guessed. */
static void test_refusals(void)
{
    static const char *const bad[] = {
        "{\"model\":{\"type\":\"WordPiece\",\"vocab\":{}}}",
        "{\"normalizer\":{\"type\":\"NFKC\"},\"model\":{\"type\":\"BPE\",\"vocab\":{},\"merges\":[]}}",
        "{\"pre_tokenizer\":{\"type\":\"Split\",\"pattern\":{\"Regex\":\"\\\\w+\"}},"
        "\"model\":{\"type\":\"BPE\",\"vocab\":{},\"merges\":[]}}",
        "{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0},\"merges\":[\"a b\"]}}", /* b not in vocab */
        /* a negated class inside a class cannot be flattened */
        "{\"pre_tokenizer\":{\"type\":\"Split\",\"pattern\":{\"Regex\":\"[a[^b]]\"},\"behavior\":\"Isolated\"},"
        "\"model\":{\"type\":\"BPE\",\"vocab\":{},\"merges\":[]}}",
        "{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":-1},\"merges\":[]}}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        json_t *tj = json_loads(bad[i], 0, NULL);
        mf_status st = MF_STATUS_INIT;
        mf_bpe *b = mf_bpe_new(tj, NULL, "bad", &st);
        CHECKF(tj && !b && mf_status_count(&st) > 0, "case %zu accepted", i);
        mf_bpe_free(b);
        json_decref(tj);
        mf_status_clear(&st);
    }
}

int main(void)
{
    facts = json_load_file("tests/data/bpe/facts.json", 0, NULL);
    stress = json_load_file("tests/data/bpe/stress.json", JSON_ALLOW_NUL, NULL);
    CHECK(facts != NULL && stress != NULL);
    if (!facts)
        return tl_report("bpe_encode");
    test_chktxt_and_table();
    test_table_2026();
    test_small_rules();
    test_refusals();
    test_nested_class();
    const char *shared = tl_shared_dir();
    if (!shared) {
        TL_SKIP("bpe_encode: the real vocab GGUFs (no ../shared)");
    } else {
        char tmp[] = "/tmp/mfmt-bpe-XXXXXX";
        CHECK(mkdtemp(tmp) != NULL);
        test_vocab_gguf(shared, "gpt-2", "phi2", tmp); /* the family would say phi-2 */
        test_vocab_gguf(shared, "falcon", "falcon", tmp);
        test_vocab_gguf(shared, "mpt", "llama", tmp); /* the family would say gpt-2 */
        test_variants(shared);
        test_tiny_dirs_fall_back(shared);
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
        CHECK(system(cmd) == 0);
    }
    json_decref(facts);
    json_decref(stress);
    return tl_report("bpe_encode");
}
