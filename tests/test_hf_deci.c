/* test_hf_deci.c - DeciLM (DeciLMForCausalLM, GGUF arch "deci") and gguf-py's
 * LlamaHfVocab, against llama.cpp's own converter (c392e50) and llama-quantize:
 *  - the directories of tests/data/arch_ref/dirs made by make_deci.py
 *    (DeciLM-7B's per-layer KV heads, Nemotron-51B's block_configs with
 *    normal, linear and no-op attention layers, Llama with a tokenizer.json
 *    and no tokenizer.model; held-out variants "-b") convert to the SHA-256
 *    the converter's output has (deci.json; f16, q8_0, bf16, and Q4_K_M in
 *    one pass against llama-quantize on the converter's f16 file); the
 *    committed reference files are those bytes;
 *  - GGUF -> HF -> GGUF gives the same bytes, the tensors come back bit for
 *    bit, block_configs and linear_attn come back;
 *  - the 128256-vocabulary BPE directory (make_deci.py --large, not
 *    committed) when /usr/bin/python3 has numpy (else a counted SKIP);
 *  - malformed block_configs are refused naming the directory. */
#include "testmf.h"

#include <mfmt.h>

#include <jansson.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmp[256];
static json_t *refs;

static bool sha_of(const char *path, char hex[129], size_t *n)
{
    uint8_t *b = tl_read_file(path, n);
    if (!b)
        return false;
    tl_sha256_hex(b, *n, hex);
    free(b);
    return true;
}

/* The file has the SHA-256 and size deci.json lists for output `name`. */
static bool matches(const char *path, const char *name)
{
    json_t *e = json_object_get(json_object_get(refs, "outputs"), name);
    char hex[129];
    size_t n;
    if (!e || !sha_of(path, hex, &n))
        return false;
    return !strcmp(hex, json_string_value(json_object_get(e, "sha256"))) &&
           (json_int_t)n == json_integer_value(json_object_get(e, "bytes"));
}

static int to_gguf(const char *dir, const char *out, const char *type, mf_status *st)
{
    mf_convert_gguf_opts o;
    mf_convert_gguf_opts_init(&o);
    o.type = type;
    return mf_convert_to_gguf(dir, out, &o, st);
}

static int to_hf(const char *gguf, const char *out, mf_status *st)
{
    mf_convert_hf_opts o;
    mf_convert_hf_opts_init(&o);
    return mf_convert_to_hf(gguf, out, &o, st);
}

static void rm_tree(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

/* DIR (in root) at every type deci.json lists, then its f16 back to HF and
 * to GGUF again. */
static void family(const char *root, const char *name)
{
    static const char *const types[] = {"f16", "q8_0", "bf16", "Q4_K_M"};
    char dir[600], out[600], key[200];
    snprintf(dir, sizeof(dir), "%s/%s", root, name);
    for (size_t i = 0; i < 4; i++) {
        snprintf(key, sizeof(key), "%s-%s", name, types[i]);
        if (!json_object_get(json_object_get(refs, "outputs"), key))
            continue;
        snprintf(out, sizeof(out), "%s/%s.gguf", tmp, key);
        mf_status st;
        mf_status_init(&st);
        CHECKF(to_gguf(dir, out, types[i], &st) == 0 && matches(out, key),
               "%s: not the bytes of llama.cpp's converter (llama-quantize for Q4_K_M): %s", key,
               mf_status_message(&st, 0));
        mf_status_clear(&st);
        CHECKF(mf_validate(out, NULL) == 0, "%s: llama.cpp's load rules refuse it", key);
        if (i)
            remove(out);
    }
    char hf[600], again[600];
    snprintf(out, sizeof(out), "%s/%s-f16.gguf", tmp, name);
    snprintf(hf, sizeof(hf), "%s/back-%s", tmp, name);
    snprintf(again, sizeof(again), "%s/%s-again.gguf", tmp, name);
    mf_status st;
    mf_status_init(&st);
    CHECKF(to_hf(out, hf, &st) == 0, "%s: GGUF -> HF: %s", name, mf_status_message(&st, 0));
    mf_status_clear(&st);
    /* written back under the directory's name, so general.name is the same */
    char named[700];
    snprintf(named, sizeof(named), "%s/rt/%s", tmp, name);
    char cmd[2600];
    snprintf(cmd, sizeof(cmd), "mkdir -p '%s/rt' && rm -rf '%s' && mv '%s' '%s'", tmp, named, hf, named);
    CHECK(system(cmd) == 0);
    snprintf(key, sizeof(key), "%s-f16", name);
    CHECKF(to_gguf(named, again, "f16", &st) == 0 && matches(again, key),
           "%s: HF -> GGUF -> HF -> GGUF is not the converter's bytes: %s", name, mf_status_message(&st, 0));
    mf_status_clear(&st);
    CHECKF(tl_same_tensors(dir, named), "%s: GGUF -> HF tensors differ from the source's", name);
    remove(out);
    remove(again);
}

/* deci51b-tiny written back: its block_configs say normal, linear, no-op,
 * normal, with the FFN widths; the linear layer's weight is linear_attn. */
static void block_configs_back(void)
{
    char out[600], hf[600], cfg[700], st_path[700];
    snprintf(out, sizeof(out), "%s/nas.gguf", tmp);
    snprintf(hf, sizeof(hf), "%s/nas-back", tmp);
    CHECK(to_gguf("tests/data/arch_ref/dirs/deci51b-tiny", out, "f16", NULL) == 0 && to_hf(out, hf, NULL) == 0);
    snprintf(cfg, sizeof(cfg), "%s/config.json", hf);
    json_t *c = json_load_file(cfg, 0, NULL), *bc = json_object_get(c, "block_configs");
    CHECKF(json_array_size(bc) == 4, "block_configs has %zu blocks", json_array_size(bc));
    static const int group[] = {2, 0, 0, 4}, linear[] = {0, 1, 0, 0}, noop[] = {0, 0, 1, 0};
    static const int width[] = {256, 512, 256, 512};
    for (size_t i = 0; i < json_array_size(bc); i++) {
        json_t *at = json_object_get(json_array_get(bc, i), "attention");
        json_t *g = json_object_get(at, "n_heads_in_group");
        double m = json_real_value(json_object_get(json_object_get(json_array_get(bc, i), "ffn"), "ffn_mult"));
        int64_t w = (int64_t)(2 * m * 32 / 3);
        w += w % 256 ? 256 - w % 256 : 0;
        CHECKF((group[i] ? json_integer_value(g) == group[i] : json_is_null(g)) &&
                   json_is_true(json_object_get(at, "replace_with_linear")) == linear[i] &&
                   json_is_true(json_object_get(at, "no_op")) == noop[i] && w == width[i],
               "block %zu comes back wrong", i);
    }
    CHECK(!strcmp(json_string_value(json_object_get(c, "model_type")), "nemotron-nas"));
    json_decref(c);
    snprintf(st_path, sizeof(st_path), "%s/model.safetensors", hf);
    mf_model *m = NULL;
    CHECK(mf_open(st_path, NULL, &m, NULL) == 0 && mf_tensor_find(m, "model.layers.1.self_attn.linear_attn.weight") &&
          !mf_tensor_find(m, "model.layers.2.self_attn.o_proj.weight"));
    mf_close(m);
    rm_tree(hf);
    remove(out);
}

/* A config the converter stops on is refused, naming the directory. */
static void refusals(void)
{
    char dir[600], cmd[2000];
    snprintf(dir, sizeof(dir), "%s/bad-nas", tmp);
    snprintf(cmd, sizeof(cmd),
             "cp -r tests/data/arch_ref/dirs/deci51b-tiny '%s' && /usr/bin/python3 -c \"import json,sys; "
             "p=sys.argv[1]+'/config.json'; c=json.load(open(p)); c['block_configs']=c['block_configs'][:3]; "
             "json.dump(c, open(p,'w'))\" '%s'", dir, dir);
    if (system(cmd) != 0) {
        TL_SKIP("DeciLM refusals: no /usr/bin/python3 to edit a config");
        return;
    }
    char out[700];
    snprintf(out, sizeof(out), "%s/bad.gguf", tmp);
    mf_status st;
    mf_status_init(&st);
    CHECKF(to_gguf(dir, out, "f16", &st) != 0 && strstr(mf_status_message(&st, 0), "block_configs") &&
               strstr(mf_status_message(&st, 0), dir) && access(out, F_OK) != 0,
           "3 block_configs for 4 layers: %s", mf_status_message(&st, 0));
    mf_status_clear(&st);
    rm_tree(dir);
}

/* Nemotron-51B's 128256-token vocabulary: the BPE path (made here, 16 MB). */
static void bpe_large(void)
{
    const char *shared = tl_shared_dir();
    if (!shared) {
        TL_SKIP("DeciLM 128256-vocabulary directory: no ../shared (corpus tokenizer)");
        return;
    }
    char root[600], cmd[1600], st_path[700];
    snprintf(root, sizeof(root), "%s/large", tmp);
    snprintf(cmd, sizeof(cmd), "/usr/bin/python3 tests/data/arch_ref/make_deci.py --large '%s' '%s' 2>/dev/null",
             shared, root);
    if (system(cmd) != 0) {
        TL_SKIP("DeciLM 128256-vocabulary directory: /usr/bin/python3 with numpy could not make it");
        return;
    }
    snprintf(st_path, sizeof(st_path), "%s/deci51b-bpe/model.safetensors", root);
    char hex[129];
    size_t n;
    CHECKF(sha_of(st_path, hex, &n) &&
               !strcmp(hex, json_string_value(json_object_get(json_object_get(refs, "sources"), "deci51b-bpe"))),
           "make_deci.py --large did not make the directory the references were made from");
    family(root, "deci51b-bpe");
    rm_tree(root);
}

int main(void)
{
    snprintf(tmp, sizeof(tmp), "/tmp/mfmt-deci-XXXXXX");
    if (!mkdtemp(tmp)) {
        perror("mkdtemp");
        return 1;
    }
    refs = json_load_file("tests/data/arch_ref/deci.json", 0, NULL);
    CHECKF(refs != NULL, "tests/data/arch_ref/deci.json unreadable");
    /* the committed reference files are the converter's bytes deci.json lists */
    static const char *const committed[] = {"deci7b-tiny", "deci51b-tiny", "llama-hf-tiny"};
    static const char *const ctypes[] = {"f16", "q8_0", "Q4_K_M"};
    for (size_t i = 0; i < 3; i++)
        for (size_t k = 0; k < 3; k++) {
            char path[300], key[200];
            snprintf(key, sizeof(key), "%s-%s", committed[i], ctypes[k]);
            snprintf(path, sizeof(path), "tests/data/arch_ref/%s.gguf", key);
            CHECKF(matches(path, key), "%s differs from deci.json", path);
        }
    static const char *const dirs[] = {"deci7b-tiny", "deci51b-tiny", "llama-hf-tiny",
                                       "deci7b-b",    "deci51b-b",    "llama-hf-b"};
    for (size_t i = 0; i < 6; i++)
        family("tests/data/arch_ref/dirs", dirs[i]);
    block_configs_back();
    refusals();
    bpe_large();
    json_decref(refs);
    if (!getenv("KEEP"))
        rm_tree(tmp);
    return tl_report("hf_deci");
}
