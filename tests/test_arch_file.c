/* test_arch_file.c - `mfmt convert --arch-file FAMILY.json` (doc/arch-file.md):
 *  - built-in families written as arch files (tests/data/arch/llama.json,
 *    qwen2.json, gemma.json, baichuan.json and refact.json: splits) convert
 *    to the bytes of the built-in path and of llama.cpp's own converter
 *    (../shared/convert-ref, convert-ref-arch); llama.json takes Mixtral's
 *    stacked experts too;
 *  - families the built-in tables do not have (Grok, Chameleon, PLaMo)
 *    convert to the bytes llama.cpp's unmodified converter wrote for the
 *    directories of tests/data/arch_ref (made by its make_dirs.py; see its
 *    README), one-pass Q4_K_M to llama-quantize's;
 *  - GGUF -> HF with the file gives the built-in's directory, and HF -> GGUF
 *    again the same bytes; the tensors come back bit for bit;
 *  - a bad file is refused naming the file, line, column and JSON path,
 *    and nothing is written. */
#include "testmf.h"

#include <mfmt.h>

#include <dirent.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmp[256];

static bool same_file(const char *a, const char *b)
{
    size_t na, nb;
    uint8_t *x = tl_read_file(a, &na), *y = tl_read_file(b, &nb);
    bool same = x && y && na == nb && !memcmp(x, y, na);
    free(x);
    free(y);
    return same;
}

/* Every file of directory a has an equal file in b, and b has no other. */
static bool same_dir(const char *a, const char *b)
{
    size_t na = 0, nb = 0;
    bool same = true;
    for (int side = 0; side < 2; side++) {
        DIR *d = opendir(side ? b : a);
        if (!d)
            return false;
        for (struct dirent *e; (e = readdir(d));) {
            if (e->d_name[0] == '.')
                continue;
            char p[1200], q[1200];
            snprintf(p, sizeof(p), "%s/%s", a, e->d_name);
            snprintf(q, sizeof(q), "%s/%s", b, e->d_name);
            if (side)
                nb++;
            else {
                na++;
                if (!same_file(p, q)) {
                    fprintf(stderr, "  %s differs from %s\n", p, q);
                    same = false;
                }
            }
        }
        closedir(d);
    }
    return same && na == nb;
}

static void rm_tree(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

static int to_gguf(const char *dir, const char *out, const char *arch_file, const char *type, mf_status *st)
{
    mf_convert_gguf_opts o;
    mf_convert_gguf_opts_init(&o);
    o.arch_file = arch_file;
    o.type = type;
    return mf_convert_to_gguf(dir, out, &o, st);
}

static int to_hf(const char *gguf, const char *out, const char *arch_file, mf_status *st)
{
    mf_convert_hf_opts o;
    mf_convert_hf_opts_init(&o);
    o.arch_file = arch_file;
    return mf_convert_to_hf(gguf, out, &o, st);
}

/* One family: DIR with the file (and the built-in path when it has one)
 * against REF; then GGUF -> HF -> GGUF. exact: the source's tensors are of
 * the output type and no op rounds (F16 sources written as f16), so the HF
 * directory written back holds them bit for bit. */
static void family(const char *name, const char *dir, const char *file, const char *ref, const char *type,
                   bool builtin, bool exact)
{
    char with[400], plain[400], hf[400], hf_b[400], again[400];
    snprintf(with, sizeof(with), "%s/%s-%s-file.gguf", tmp, name, type);
    snprintf(plain, sizeof(plain), "%s/%s-%s-builtin.gguf", tmp, name, type);
    /* the directory written back has the source's name (general.name and
     * the other naming keys come from the card and the directory's name) */
    const char *base = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
    snprintf(hf, sizeof(hf), "%s/%s-%s-hf", tmp, name, type);
    mkdir(hf, 0755);
    snprintf(hf + strlen(hf), sizeof(hf) - strlen(hf), "/%s", base);
    snprintf(hf_b, sizeof(hf_b), "%s/%s-%s-hf-builtin", tmp, name, type);
    snprintf(again, sizeof(again), "%s/%s-%s-again.gguf", tmp, name, type);
    mf_status st;
    mf_status_init(&st);
    int rc = to_gguf(dir, with, file, type, &st);
    CHECKF(rc == 0, "%s: convert with %s: %s", name, file, mf_status_message(&st, 0));
    mf_status_clear(&st);
    if (rc)
        return;
    if (ref)
        CHECKF(same_file(with, ref), "%s %s: with %s not byte-identical to %s", name, type, file, ref);
    if (!ref && !builtin) {
        CHECK(!"a family without a reference nor a built-in path to compare with");
        return;
    }
    if (!ref) { /* compared with the built-in path only (a quantize mix: not back to the same bytes) */
        CHECKF(to_gguf(dir, plain, NULL, type, NULL) == 0 && same_file(with, plain),
               "%s %s: the arch file and the built-in table differ", name, type);
        remove(with);
        remove(plain);
        return;
    }
    if (builtin) {
        CHECKF(to_gguf(dir, plain, NULL, type, NULL) == 0 && same_file(with, plain),
               "%s %s: the arch file and the built-in table differ", name, type);
    }
    rc = to_hf(with, hf, file, &st);
    CHECKF(rc == 0, "%s: GGUF -> HF with %s: %s", name, file, mf_status_message(&st, 0));
    mf_status_clear(&st);
    if (rc)
        return;
    if (builtin) {
        CHECKF(to_hf(with, hf_b, NULL, NULL) == 0 && same_dir(hf, hf_b),
               "%s: GGUF -> HF with the file differs from the built-in's directory", name);
        rm_tree(hf_b);
    }
    CHECKF(to_gguf(hf, again, file, type, NULL) == 0 && same_file(again, with),
           "%s %s: HF -> GGUF -> HF -> GGUF with the file is not byte-identical", name, type);
    if (exact)
        CHECKF(tl_same_tensors(dir, hf), "%s: GGUF -> HF tensors differ from the source's", name);
    if (!getenv("KEEP")) {
        *strrchr(hf, '/') = 0;
        rm_tree(hf);
        remove(with);
        remove(plain);
        remove(again);
    }
}

/* A file with this text is refused with a message holding every `want`. */
static void refused(const char *label, const char *text, const char *const *want)
{
    char file[400], out[400];
    snprintf(file, sizeof(file), "%s/bad.json", tmp);
    snprintf(out, sizeof(out), "%s/bad.gguf", tmp);
    FILE *f = fopen(file, "w");
    fputs(text, f);
    fclose(f);
    mf_status st;
    mf_status_init(&st);
    int rc = to_gguf("tests/data/arch_ref/dirs/grok-tiny", out, file, NULL, &st);
    const char *msg = mf_status_message(&st, 0);
    CHECKF(rc != 0, "%s: accepted", label);
    for (const char *const *w = want; *w; w++)
        CHECKF(msg && strstr(msg, *w), "%s: message \"%s\" lacks \"%s\"", label, msg ? msg : "", *w);
    CHECKF(access(out, F_OK) != 0, "%s: an output was written", label);
    mf_status_clear(&st);
    remove(out);
}

#define WANT(...) ((const char *const[]){__VA_ARGS__, NULL})
#define HEAD "{\n  \"mfmt_arch_file\": 1,\n  \"architecture\": \"grok\",\n  \"classes\": [\"GrokForCausalLM\"],\n"

static void bad_files(void)
{
    refused("not JSON", HEAD "  \"tokenizer\": \"spm\",\n  \"tensors\": [,]\n}\n",
            WANT("bad.json", "not valid JSON", "line 6, column"));
    refused("unknown op",
            HEAD "  \"tokenizer\": \"spm\",\n  \"tensors\": [\n    {\"hf\": \"a\", \"gguf\": \"b\"},\n"
                 "    {\"hf\": \"c\", \"gguf\": \"d\", \"op\": \"permut_q\"}\n  ],\n  \"hparams\": [{\"base\": true}]\n}\n",
            WANT("bad.json", "line 8, column", "$.tensors[1].op", "unknown op \"permut_q\"", "permute_q"));
    refused("unknown key", HEAD "  \"tokenizer\": \"spm\",\n  \"tensorz\": []\n}\n",
            WANT("bad.json", "line 6, column 14", "$.tensorz", "unknown key \"tensorz\""));
    refused("unknown tokenizer", HEAD "  \"tokenizer\": \"sentencepiece\",\n  \"tensors\": [], \"hparams\": []\n}\n",
            WANT("$.tokenizer", "unknown tokenizer kind \"sentencepiece\"", "spm"));
    refused("unknown calc",
            HEAD "  \"tokenizer\": \"spm\",\n  \"tensors\": [{\"hf\": \"a\", \"gguf\": \"b\"}],\n"
                 "  \"hparams\": [{\"key\": \"rope.dimension_count\", \"type\": \"u32\", \"calc\": \"rope_dim_lama\"}]\n}\n",
            WANT("$.hparams[0].calc", "unknown calc \"rope_dim_lama\"", "rope_dim_llama"));
    refused("unknown block",
            HEAD "  \"tokenizer\": \"spm\",\n  \"tensors\": [{\"hf\": \"a\", \"gguf\": \"b\"}],\n"
                 "  \"hparams\": [{\"block\": \"rope\"}]\n}\n",
            WANT("$.hparams[0].block", "unknown block \"rope\""));
    refused("unknown flag",
            HEAD "  \"tokenizer\": \"spm\", \"flags\": [\"llama3\"],\n  \"tensors\": [{\"hf\": \"a\", \"gguf\": \"b\"}],\n"
                 "  \"hparams\": [{\"base\": true}]\n}\n",
            WANT("$.flags[0]", "unknown flag \"llama3\"", "llama3_rope"));
    refused("version", "{\"mfmt_arch_file\": 2}\n", WANT("$.mfmt_arch_file", "version"));
    refused("stack without {x}",
            HEAD "  \"tokenizer\": \"spm\",\n  \"tensors\": [{\"hf\": \"m.{bid}.e\", \"gguf\": \"blk.{bid}.x\", "
                 "\"op\": \"stack\", \"count\": \"n\"}],\n  \"hparams\": [{\"base\": true}]\n}\n",
            WANT("$.tensors[0].hf", "{x}"));
    refused("stack without count",
            HEAD "  \"tokenizer\": \"spm\",\n  \"tensors\": [{\"hf\": \"m.{bid}.e.{x}\", \"gguf\": \"blk.{bid}.x\", "
                 "\"op\": \"stack\"}],\n  \"hparams\": [{\"base\": true}]\n}\n",
            WANT("$.tensors[0]", "count"));
    refused("two sources",
            HEAD "  \"tokenizer\": \"spm\",\n  \"tensors\": [{\"hf\": \"a\", \"gguf\": \"b\"}],\n"
                 "  \"hparams\": [{\"key\": \"k\", \"type\": \"u32\", \"from\": \"a\", \"value\": 1}]\n}\n",
            WANT("$.hparams[0]", "exactly one of"));
    refused("bad type",
            HEAD "  \"tokenizer\": \"spm\",\n  \"tensors\": [{\"hf\": \"a\", \"gguf\": \"b\"}],\n"
                 "  \"hparams\": [{\"key\": \"k\", \"type\": \"uint\", \"from\": \"a\"}]\n}\n",
            WANT("$.hparams[0].type", "unknown type \"uint\"", "u32"));
    refused("other brace", HEAD "  \"tokenizer\": \"spm\",\n  \"tensors\": [{\"hf\": \"m.{layer}.a\", \"gguf\": \"b\"}],\n"
                                "  \"hparams\": [{\"base\": true}]\n}\n",
            WANT("$.tensors[0].hf", "{bid}"));
    refused("{bid} on one side",
            HEAD "  \"tokenizer\": \"spm\",\n  \"tensors\": [{\"hf\": \"m.{bid}.a\", \"gguf\": \"b\"}],\n"
                 "  \"hparams\": [{\"base\": true}]\n}\n",
            WANT("$.tensors[0]", "both name the block"));
    refused("{bid} twice",
            HEAD "  \"tokenizer\": \"spm\",\n  \"tensors\": [{\"hf\": \"m.{bid}.{bid}\", \"gguf\": \"blk.{bid}\"}],\n"
                 "  \"hparams\": [{\"base\": true}]\n}\n",
            WANT("$.tensors[0].hf", "once at most"));
    refused("swap without groups",
            HEAD "  \"tokenizer\": \"spm\",\n  \"tensors\": [{\"hf\": \"a\", \"gguf\": \"b\", \"op\": \"swap_row_groups\"}],\n"
                 "  \"hparams\": [{\"base\": true}]\n}\n",
            WANT("$.tensors[0]", "groups"));
    refused("an unmapped tensor",
            HEAD "  \"tokenizer\": \"spm\",\n  \"tensors\": [{\"hf\": \"transformer.in_out_embed\", \"gguf\": \"token_embd\"}],\n"
                 "  \"hparams\": [{\"base\": true}]\n}\n",
            WANT("can not map tensor"));
    refused("duplicate key", HEAD "  \"tokenizer\": \"spm\",\n  \"tokenizer\": \"bpe\"\n}\n",
            WANT("bad.json", "duplicate"));
    refused("no such file", "", WANT("bad.json")); /* an empty file: not JSON */
    /* a class the file does not describe */
    char out[400];
    snprintf(out, sizeof(out), "%s/llama.gguf", tmp);
    mf_status st;
    mf_status_init(&st);
    const char *shared = tl_shared_dir();
    if (shared) {
        char dir[400];
        snprintf(dir, sizeof(dir), "%s/corpus/hf-dir/llama-tiny", shared);
        CHECK(to_gguf(dir, out, "tests/data/arch/grok.json", NULL, &st) != 0 &&
              strstr(mf_status_message(&st, 0), "LlamaForCausalLM is not one of the classes"));
        CHECK(access(out, F_OK) != 0);
        mf_status_clear(&st);
    }
    /* GGUF -> HF with the file of another architecture */
    char hf[400];
    snprintf(hf, sizeof(hf), "%s/grok-as-llama", tmp);
    CHECK(to_hf("tests/data/arch_ref/grok-tiny-f16.gguf", hf, "tests/data/arch/llama.json", &st) != 0 &&
          strstr(mf_status_message(&st, 0), "describes \"llama\""));
    CHECK(access(hf, F_OK) != 0);
    mf_status_clear(&st);
}

/* PLaMo: its converter takes one shape only (two 5120 x 5120 matrices), too
 * large to commit: the directory is made by make_dirs.py --large (seeded, so
 * the same bytes everywhere: its safetensors' SHA-256 is checked) and the
 * GGUF compared with the SHA-256 of llama.cpp's output
 * (tests/data/arch_ref/README.md). */
static void plamo(const char *shared)
{
    static const char st_sha[] = "465fef979ee218f88b6b5e7b2693d6ee7a3bad65b9f5433ac499cc1bad9deeb7";
    static const char ref_sha[] = "139db98bd25eab12c2f8df2336714f14290b5feffd87aad17bb48ac6a2c1f9dd";
    char root[300], dir[400], cmd[1400], log[400], msg[4096], out[500], hf[500], hex[129];
    snprintf(root, sizeof(root), "%s/large", tmp);
    snprintf(dir, sizeof(dir), "%s/plamo-13b-shape", root);
    snprintf(log, sizeof(log), "%s/make.log", tmp);
    snprintf(cmd, sizeof(cmd), "/usr/bin/python3 tests/data/arch_ref/make_dirs.py --large '%s' '%s'", shared, root);
    if (tl_run_cmd(cmd, log, msg, sizeof(msg)) != 0) {
        TL_SKIP("PLaMo: its 126 MB directory could not be made here (python3 with numpy): %.200s", msg);
        return;
    }
    snprintf(out, sizeof(out), "%s/model.safetensors", dir);
    size_t n;
    uint8_t *b = tl_read_file(out, &n);
    tl_sha256_hex(b, n, hex);
    free(b);
    CHECKF(!strcmp(hex, st_sha), "PLaMo: make_dirs.py made other weights (%s)", hex);
    snprintf(out, sizeof(out), "%s/plamo.gguf", tmp);
    mf_status st;
    mf_status_init(&st);
    CHECKF(to_gguf(dir, out, "tests/data/arch/plamo.json", NULL, &st) == 0, "PLaMo: %s", mf_status_message(&st, 0));
    mf_status_clear(&st);
    b = tl_read_file(out, &n);
    tl_sha256_hex(b, n, hex);
    free(b);
    CHECKF(!strcmp(hex, ref_sha), "PLaMo f16: not llama.cpp's bytes (%s)", hex);
    snprintf(hf, sizeof(hf), "%s/back", tmp);
    mkdir(hf, 0755);
    snprintf(hf + strlen(hf), sizeof(hf) - strlen(hf), "/plamo-13b-shape");
    CHECK(to_hf(out, hf, "tests/data/arch/plamo.json", NULL) == 0);
    CHECKF(tl_same_tensors(dir, hf), "PLaMo: GGUF -> HF does not give the q/o weights back");
    rm_tree(root);
    *strrchr(hf, '/') = 0;
    rm_tree(hf);
    remove(out);
}

/* The key path a/b of a JSON file, as text ("" when absent). */
static char *json_at(const char *dir, const char *file, const char *key, const char *sub)
{
    char path[600];
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    json_t *j = json_load_file(path, 0, NULL), *x = json_object_get(j, key);
    if (sub)
        x = json_object_get(x, sub);
    char *text = x ? json_dumps(x, JSON_SORT_KEYS | JSON_ENCODE_ANY) : strdup("");
    json_decref(j);
    return text;
}

static bool file_has(const char *path, const char *what)
{
    size_t n;
    char *b = (char *)tl_read_file(path, &n);
    bool r = b && memmem(b, n, what, strlen(what));
    free(b);
    return r;
}

/* GGUF -> HF of a remote-code family (issue 25's review): config.json's
 * auto_map as the family's repositories have it (want_cfg: a directory whose
 * config.json has the real one), tokenizer_config.json's for the remote
 * tokenizer written (tok_class, NULL: none, a tokenizer.json the fast class
 * reads), the model card naming the code files, and no code written. */
static void remote_code_back(const char *hf, const char *want_cfg, const char *tok_class, const char *code_file)
{
    char *got = json_at(hf, "config.json", "auto_map", NULL), *want = json_at(want_cfg, "config.json", "auto_map", NULL);
    CHECKF(*want && !strcmp(got, want), "%s: config.json auto_map %s, not the family's %s", hf, got, want);
    free(got);
    free(want);
    got = json_at(hf, "tokenizer_config.json", "auto_map", "AutoTokenizer");
    char cls[200] = "";
    if (tok_class)
        snprintf(cls, sizeof(cls), "[\"%s\", null]", tok_class);
    CHECKF(!strcmp(got, cls), "%s: tokenizer_config.json auto_map %s, not %s", hf, got, cls);
    free(got);
    char card[600];
    snprintf(card, sizeof(card), "%s/README.md", hf);
    CHECKF(file_has(card, code_file) && file_has(card, "mfmt writes and fetches no code"),
           "%s: the model card does not say which code files to copy", hf);
    DIR *d = opendir(hf);
    struct dirent *e;
    while (d && (e = readdir(d)))
        CHECKF(!strstr(e->d_name, ".py"), "%s: code written (%s)", hf, e->d_name);
    if (d)
        closedir(d);
}

/* ChatGLM3, GLM-4 (tokenizer.json) and GLM-4 (tiktoken): the references back
 * to HF directories: the remote-code keys, and GLM-4's tiktoken layout with
 * its files as they were (merges of 3 and 4 parts: no tokenizer.json) */
static void chatglm_back(void)
{
    static const struct { const char *name, *tok_class; } fams[] = {
        {"chatglm3", "tokenization_chatglm.ChatGLMTokenizer"},
        {"glm4", NULL},
        {"glm4-tiktoken", "tokenization_chatglm.ChatGLM4Tokenizer"},
    };
    for (size_t i = 0; i < sizeof(fams) / sizeof(fams[0]); i++) {
        char ref[300], hf[400], src[300], a[600], b[600];
        snprintf(ref, sizeof(ref), "tests/data/arch_remote/%s-tiny-f16.gguf", fams[i].name);
        snprintf(src, sizeof(src), "tests/data/arch_remote/dirs/%s-tiny", fams[i].name);
        snprintf(hf, sizeof(hf), "%s/%s-back", tmp, fams[i].name);
        mf_status st;
        mf_status_init(&st);
        CHECKF(to_hf(ref, hf, "tests/data/arch/chatglm.json", &st) == 0, "%s: %s", hf, mf_status_message(&st, 0));
        mf_status_clear(&st);
        remote_code_back(hf, "tests/data/arch_remote/dirs/glm4-tiktoken-tiny", fams[i].tok_class, "modeling_chatglm.py");
        if (i != 2) {
            rm_tree(hf);
            continue;
        }
        snprintf(a, sizeof(a), "%s/tokenizer.model", hf);
        snprintf(b, sizeof(b), "%s/tokenizer.model", src);
        CHECKF(same_file(a, b), "GLM-4 (tiktoken): GGUF -> HF does not give tokenizer.model back");
        snprintf(a, sizeof(a), "%s/tokenizer.json", hf);
        CHECKF(access(a, F_OK) != 0, "GLM-4 (tiktoken): a tokenizer.json was written beside tokenizer.model");
        char *x = json_at(hf, "tokenizer_config.json", "added_tokens_decoder", NULL),
             *y = json_at(src, "tokenizer_config.json", "added_tokens_decoder", NULL);
        CHECKF(*y && !strcmp(x, y), "GLM-4 (tiktoken): added_tokens_decoder %.200s, not %.200s", x, y);
        free(x);
        free(y);
        rm_tree(hf);
    }
}

/* Qwen v1: QWenTokenizer asserts 151643 ranks, so its directory (seeded,
 * made by tests/data/arch_remote/make_dirs.py --large) is too large to
 * commit; the GGUFs are compared with the SHA-256 of llama.cpp's outputs
 * (tests/data/arch_remote/README.md), the tokenizer file must come back
 * as it was. */
static void qwen_v1(const char *shared)
{
    static const char tt_sha[] = "31f88f58ad85e8aa267a25be01ea69ebc8e91ac1bb6d82ca05a4148b0b264dbf";
    static const char st_sha[] = "8f5c35b5dfb92048c8c35da818d14d028b86421d04d798101385f9c3fbe66a13";
    static const struct { const char *type, *sha; } refs[] = {
        {"f16", "93baed6aac8c0d94ba0af17024df9391673674d1024cfc36cdd90d72fc4ad7ae"},
        {"q8_0", "700852356034c083afab9bd48d0cdb17fbc3be121134c215fa53f5e2120e1937"},
        {"Q4_K_M", "6491dd622a584e15fb139553dede355a92d51f65245f921eec7024a61cd1f5a6"}, /* llama-quantize's */
    };
    const char *file = "tests/data/arch/qwen.json";
    char root[300], dir[400], cmd[1400], log[400], msg[4096], out[500], hf[500], again[500], hex[129];
    snprintf(root, sizeof(root), "%s/remote", tmp);
    snprintf(dir, sizeof(dir), "%s/qwen-tiny", root);
    snprintf(log, sizeof(log), "%s/make-remote.log", tmp);
    snprintf(cmd, sizeof(cmd), "/usr/bin/python3 tests/data/arch_remote/make_dirs.py --large '%s' '%s'", shared, root);
    if (tl_run_cmd(cmd, log, msg, sizeof(msg)) != 0) {
        TL_SKIP("Qwen v1: its directory could not be made here (python3 with numpy): %.200s", msg);
        return;
    }
    static const char *const inputs[] = {"qwen.tiktoken", "model.safetensors"};
    const char *want[] = {tt_sha, st_sha};
    for (size_t i = 0; i < 2; i++) {
        snprintf(out, sizeof(out), "%s/%s", dir, inputs[i]);
        size_t n;
        uint8_t *b = tl_read_file(out, &n);
        tl_sha256_hex(b, n, hex);
        free(b);
        CHECKF(!strcmp(hex, want[i]), "Qwen v1: make_dirs.py made another %s (%s)", inputs[i], hex);
    }
    for (size_t i = 0; i < sizeof(refs) / sizeof(refs[0]); i++) {
        snprintf(out, sizeof(out), "%s/qwen-%s.gguf", tmp, refs[i].type);
        mf_status st;
        mf_status_init(&st);
        CHECKF(to_gguf(dir, out, file, refs[i].type, &st) == 0, "Qwen v1 %s: %s", refs[i].type,
               mf_status_message(&st, 0));
        mf_status_clear(&st);
        size_t n;
        uint8_t *b = tl_read_file(out, &n);
        tl_sha256_hex(b, n, hex);
        free(b);
        CHECKF(!strcmp(hex, refs[i].sha), "Qwen v1 %s: not llama.cpp's bytes (%s)", refs[i].type, hex);
        if (i)
            remove(out);
    }
    snprintf(out, sizeof(out), "%s/qwen-f16.gguf", tmp);
    snprintf(hf, sizeof(hf), "%s/qwen-back", tmp);
    mkdir(hf, 0755);
    snprintf(hf + strlen(hf), sizeof(hf) - strlen(hf), "/qwen-tiny");
    snprintf(again, sizeof(again), "%s/qwen-again.gguf", tmp);
    CHECK(to_hf(out, hf, file, NULL) == 0);
    char a[600], b2[600];
    snprintf(a, sizeof(a), "%s/qwen.tiktoken", hf);
    snprintf(b2, sizeof(b2), "%s/qwen.tiktoken", dir);
    CHECKF(same_file(a, b2), "Qwen v1: GGUF -> HF does not give qwen.tiktoken back");
    remote_code_back(hf, dir, "tokenization_qwen.QWenTokenizer", "modeling_qwen.py");
    CHECKF(to_gguf(hf, again, file, "f16", NULL) == 0 && same_file(again, out),
           "Qwen v1: HF -> GGUF -> HF -> GGUF is not byte-identical");
    CHECKF(tl_same_tensors(dir, hf), "Qwen v1: GGUF -> HF tensors differ from the source's");
    rm_tree(root);
    *strrchr(hf, '/') = 0;
    rm_tree(hf);
    remove(out);
    remove(again);
}

int main(void)
{
    snprintf(tmp, sizeof(tmp), "/tmp/mfmt-archfile-XXXXXX");
    if (!mkdtemp(tmp)) {
        perror("mkdtemp");
        return 1;
    }
    /* a family only an arch file describes: always (its data is committed) */
    family("grok", "tests/data/arch_ref/dirs/grok-tiny", "tests/data/arch/grok.json",
           "tests/data/arch_ref/grok-tiny-f16.gguf", "f16", false, true);
    family("grok", "tests/data/arch_ref/dirs/grok-tiny", "tests/data/arch/grok.json",
           "tests/data/arch_ref/grok-tiny-q8_0.gguf", "q8_0", false, false);
    /* Chameleon: table rows had none either; one op (head0_interleave) and the
     * pre-tokenizer name were added for it */
    family("chameleon", "tests/data/arch_ref/dirs/chameleon-tiny", "tests/data/arch/chameleon.json",
           "tests/data/arch_ref/chameleon-tiny-f16.gguf", "f16", false, false);
    family("chameleon", "tests/data/arch_ref/dirs/chameleon-tiny", "tests/data/arch/chameleon.json",
           "tests/data/arch_ref/chameleon-tiny-q8_0.gguf", "q8_0", false, false);
    /* one-pass Q4_K_M with the file: llama-quantize's (c392e50) output for the
     * converter's f16 file (tests/data/arch_ref/README.md) */
    static const char *const q4[] = {"grok", "chameleon"};
    for (size_t i = 0; i < 2; i++) {
        char q[400], dir[200], file[200], ref[200];
        snprintf(q, sizeof(q), "%s/%s-Q4_K_M.gguf", tmp, q4[i]);
        snprintf(dir, sizeof(dir), "tests/data/arch_ref/dirs/%s-tiny", q4[i]);
        snprintf(file, sizeof(file), "tests/data/arch/%s.json", q4[i]);
        snprintf(ref, sizeof(ref), "tests/data/arch_ref/%s-tiny-Q4_K_M.gguf", q4[i]);
        mf_status st;
        mf_status_init(&st);
        CHECKF(to_gguf(dir, q, file, "Q4_K_M", &st) == 0 && same_file(q, ref),
               "%s Q4_K_M in one pass is not llama-quantize's: %s", q4[i], mf_status_message(&st, 0));
        mf_status_clear(&st);
        remove(q);
    }
    /* ChatGLM3 (remote-code SentencePiece tokenizer read from its file):
     * llama.cpp's converter run with a stand-in built from the files
     * (tests/data/arch_remote/README.md) */
    /* and GLM-4 (the same class, a tokenizer.json BPE vocabulary), and GLM-4
     * with its remote-code ChatGLM4Tokenizer over tiktoken ranks (the
     * converter of 53debe6, the last with that path) */
    static const char *const glm_names[] = {"chatglm3", "glm4", "glm4-tiktoken"},
                             *const glm_types[] = {"f16", "q8_0"};
    for (size_t g = 0; g < 3; g++) {
        char dir[200], ref[200], q[400];
        snprintf(dir, sizeof(dir), "tests/data/arch_remote/dirs/%s-tiny", glm_names[g]);
        for (size_t i = 0; i < 2; i++) {
            snprintf(ref, sizeof(ref), "tests/data/arch_remote/%s-tiny-%s.gguf", glm_names[g], glm_types[i]);
            family(glm_names[g], dir, "tests/data/arch/chatglm.json", ref, glm_types[i], false,
                   false); /* its rotary_pos_emb.inv_freq buffer is not in the GGUF */
        }
        snprintf(q, sizeof(q), "%s/%s-Q4_K_M.gguf", tmp, glm_names[g]);
        snprintf(ref, sizeof(ref), "tests/data/arch_remote/%s-tiny-Q4_K_M.gguf", glm_names[g]);
        mf_status st;
        mf_status_init(&st);
        CHECKF(to_gguf(dir, q, "tests/data/arch/chatglm.json", "Q4_K_M", &st) == 0 && same_file(q, ref),
               "%s Q4_K_M in one pass is not llama-quantize's: %s", glm_names[g], mf_status_message(&st, 0));
        mf_status_clear(&st);
        remove(q);
    }
    chatglm_back();
    /* RWKV6-Qwen2: a built-in table row (its reference beside the remote-code
     * families': tests/data/arch_remote/README.md) */
    static const char *const rq_types[] = {"f16", "q8_0", "Q4_K_M"};
    for (size_t i = 0; i < 3; i++) {
        char ref[200];
        snprintf(ref, sizeof(ref), "tests/data/arch_remote/rwkv6qwen2-tiny-%s.gguf", rq_types[i]);
        if (i < 2) {
            family("rwkv6qwen2", "tests/data/arch_remote/dirs/rwkv6qwen2-tiny", NULL, ref, rq_types[i], false, i == 0);
            continue;
        }
        char q[400];
        snprintf(q, sizeof(q), "%s/rwkv6qwen2-Q4_K_M.gguf", tmp);
        mf_status st;
        mf_status_init(&st);
        CHECKF(to_gguf("tests/data/arch_remote/dirs/rwkv6qwen2-tiny", q, NULL, "Q4_K_M", &st) == 0 && same_file(q, ref),
               "rwkv6qwen2 Q4_K_M in one pass is not llama-quantize's: %s", mf_status_message(&st, 0));
        mf_status_clear(&st);
        remove(q);
    }
    const char *shared = tl_shared_dir();
    if (!shared) {
        TL_SKIP("arch files of built-in families: no ../shared (convert-ref references)");
    } else {
        static const struct {
            const char *name, *dir, *file, *ref, *type;
            bool exact;
        } fams[] = {
            {"llama", "corpus/hf-dir/llama-tiny", "llama", "convert-ref/llama-tiny-f16.gguf", "f16", true},
            {"llama", "corpus/hf-dir/llama-tiny", "llama", "convert-ref/llama-tiny-q8_0.gguf", "q8_0", false},
            {"llama-bpe", "corpus/hf-dir/llama-tiny-bpe", "llama", "convert-ref/llama-tiny-bpe-f16.gguf", "f16", true},
            {"qwen2", "corpus/hf-dir/qwen2-tiny", "qwen2", "convert-ref/qwen2-tiny-f16.gguf", "f16", false},
            {"qwen2", "corpus/hf-dir/qwen2-tiny", "qwen2", "convert-ref/qwen2-tiny-bf16.gguf", "bf16", true},
            {"gemma", "convert-ref-arch/dirs/gemma-tiny", "gemma", "convert-ref-arch/gemma-tiny-f16.gguf", "f16", false},
            {"mixtral", "convert-ref-arch/dirs/mixtral-tiny", "llama", "convert-ref-arch/mixtral-tiny-f16.gguf",
             "f16", false},
            /* splits: equal parts with permutes, and cut by a first_rows function */
            {"baichuan", "convert-ref-arch/dirs/baichuan2-32l-tiny", "baichuan",
             "convert-ref-arch/baichuan2-32l-tiny-f16.gguf", "f16", false},
            {"refact", "convert-ref-arch/dirs/refact-tiny", "refact", "convert-ref-arch/refact-tiny-f16.gguf", "f16",
             false},
            /* llama-quantize's Q4_K_M of the converter's f16 (tests/data/hf_arch/llama_quantize.json) */
            {"gemma", "convert-ref-arch/dirs/gemma-tiny", "gemma", NULL, "Q4_K_M", false},
        };
        plamo(shared);
        qwen_v1(shared);
        for (size_t i = 0; i < sizeof(fams) / sizeof(fams[0]); i++) {
            char dir[400], file[400], ref[400];
            snprintf(dir, sizeof(dir), "%s/%s", shared, fams[i].dir);
            snprintf(file, sizeof(file), "tests/data/arch/%s.json", fams[i].file);
            snprintf(ref, sizeof(ref), "%s/%s", shared, fams[i].ref ? fams[i].ref : "");
            family(fams[i].name, dir, file, fams[i].ref ? ref : NULL, fams[i].type, true, fams[i].exact);
        }
    }
    bad_files();
    if (!getenv("KEEP"))
        rm_tree(tmp);
    return tl_report("arch_file");
}
