/* test_split_ref.c - `mfmt split` with llama-gguf-split's spellings against
 * llama-gguf-split itself: for each case of tests/data/gguf_split_ref.json
 * (the oracle's shard hashes, made by the llama.cpp build named there) the
 * shards mfmt writes have the same SHA-256, in order and in number. Also:
 * --dry-run writes nothing, the decimal size units, validate of every shard
 * and of the first one for the whole set. */
#include "testlib.h"

#include <mfmt.h>

#include <jansson.h>
#include <stdlib.h>
#include <unistd.h>

static const char *mfmt_bin(void)
{
    const char *b = getenv("MFMT");
    return b && *b ? b : "build/mfmt";
}

static bool exists(const char *p)
{
    return access(p, F_OK) == 0;
}

static void check_case(const char *shared, const char *dir, size_t idx, json_t *c)
{
    const char *input = json_string_value(json_object_get(c, "input"));
    const char *args = json_string_value(json_object_get(c, "args"));
    json_t *shards = json_object_get(c, "shards");
    char in[512], prefix[512], cmd[2048], out[8192];
    snprintf(in, sizeof(in), "%s/%s", shared, input);
    snprintf(prefix, sizeof(prefix), "%s/case%zu", dir, idx);
    if (!exists(in)) {
        printf("skip: %s is missing\n", in);
        return;
    }
    snprintf(cmd, sizeof(cmd), "%s split --split %s '%s' '%s'", mfmt_bin(), args, in, prefix);
    int rc = tl_run_cmd(cmd, "/tmp/mfmt_split_ref.log", out, sizeof(out));
    CHECKF(rc == 0, "%s: exit %d: %s", cmd, rc, out);
    size_t n = json_array_size(shards);
    for (size_t i = 0; i < n; i++) {
        char path[600], hex[129];
        snprintf(path, sizeof(path), "%s-%05zu-of-%05zu.gguf", prefix, i + 1, n);
        mf_status st;
        mf_status_init(&st);
        bool ok = mf_hash_file(path, MF_SHA256, hex, &st) == 0;
        CHECKF(ok, "%s (%s): shard %s not written: %s", input, args, path, st.msg);
        mf_status_clear(&st);
        if (ok)
            CHECKF(strcmp(hex, json_string_value(json_array_get(shards, i))) == 0,
                   "%s (%s): shard %zu of %zu differs from llama-gguf-split's", input, args, i + 1, n);
    }
    /* no more shards than the oracle's: the next count would be another name */
    char extra[600];
    snprintf(extra, sizeof(extra), "%s-00001-of-%05zu.gguf", prefix, n + 1);
    CHECKF(!exists(extra), "%s (%s): more shards than llama-gguf-split", input, args);
    /* validate: every shard alone, and the first for the whole set */
    for (size_t i = 0; i < n && n > 1; i++) {
        snprintf(cmd, sizeof(cmd), "%s validate '%s-%05zu-of-%05zu.gguf'", mfmt_bin(), prefix, i + 1, n);
        rc = tl_run_cmd(cmd, "/tmp/mfmt_split_ref.log", out, sizeof(out));
        CHECKF(rc == 0 && strstr(out, ": OK"), "%s: exit %d: %s", cmd, rc, out);
    }
}

static void check_dry_run(const char *shared, const char *dir)
{
    char cmd[2048], out[8192], in[512], first[600];
    snprintf(in, sizeof(in), "%s/convert-ref-arch/gemma2-tiny-f16.gguf", shared);
    if (!exists(in))
        return;
    snprintf(cmd, sizeof(cmd), "%s split --dry-run --split-max-tensors 100 '%s' '%s/dry'", mfmt_bin(),
             in, dir);
    int rc = tl_run_cmd(cmd, "/tmp/mfmt_split_ref.log", out, sizeof(out));
    CHECKF(rc == 0 && strstr(out, "split 00001: n_tensors = 100") && strstr(out, "split 00003:"),
           "dry run: exit %d: %s", rc, out);
    snprintf(first, sizeof(first), "%s/dry-00001-of-00003.gguf", dir);
    CHECKF(!exists(first), "--dry-run wrote %s", first);
    /* "1M" is 1000*1000 bytes as llama.cpp parses it: the oracle's 2 files */
    snprintf(cmd, sizeof(cmd), "%s split --dry-run --max-size 1M '%s' '%s/dry'", mfmt_bin(), in, dir);
    rc = tl_run_cmd(cmd, "/tmp/mfmt_split_ref.log", out, sizeof(out));
    CHECKF(rc == 0 && strstr(out, "split 00002:") && !strstr(out, "split 00003:"), "--max-size 1M: %s", out);
    snprintf(cmd, sizeof(cmd), "%s split --split-max-size 1X '%s' '%s/dry'", mfmt_bin(), in, dir);
    rc = tl_run_cmd(cmd, "/tmp/mfmt_split_ref.log", out, sizeof(out));
    CHECKF(rc == 2, "a size in unknown units is a usage error, got %d: %s", rc, out);
}

int main(void)
{
    const char *shared = tl_shared_dir();
    json_error_t e;
    json_t *ref = json_load_file("tests/data/gguf_split_ref.json", 0, &e);
    CHECKF(ref != NULL, "tests/data/gguf_split_ref.json: %s", e.text);
    if (!shared || !ref) {
        if (!shared)
            TL_SKIP("split_ref: the gguf-split references (no ../shared)");
        json_decref(ref);
        return tl_report("split_ref");
    }
    char dir[] = "/tmp/mfmt_split_refXXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    json_t *cases = json_object_get(ref, "cases");
    CHECK(json_array_size(cases) == 5);
    for (size_t i = 0; i < json_array_size(cases); i++)
        check_case(shared, dir, i, json_array_get(cases, i));
    check_dry_run(shared, dir);
    CHECK(tl_remove_tmpdir(dir));
    json_decref(ref);
    return tl_report("split_ref");
}
