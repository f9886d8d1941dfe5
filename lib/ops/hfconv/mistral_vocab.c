/* mistral_vocab.c - the tokenizer keys of a Mistral-format directory
 * (convert_hf_to_gguf.py --mistral-format at llama.cpp ecbcb7ea:
 * TextModel._set_vocab_mistral over gguf-py 0.18's MistralVocab, which asks
 * mistral_common for the tokenizer). Facts from mistral_common's
 * tokens/tokenizers/{tekken,sentencepiece,utils}.py and gguf-py's vocab.py:
 *  - the file: tekken.json, else a SentencePiece tokenizer.model[.vN[mM]]
 *    (several: tekken.json, else the last in sorted order);
 *  - tekken.json: config {default_vocab_size, default_num_special_tokens,
 *    version}, vocab [{rank, token_bytes (base64), token_str}] cut to
 *    default_vocab_size - default_num_special_tokens entries, special_tokens
 *    [{rank, token_str, is_control}] (absent up to v7: a fixed list of 20),
 *    padded with "<SPECIAL_i>" up to default_num_special_tokens. Ids: the
 *    special tokens first (CONTROL), then the vocabulary in rank order as
 *    GPT-2 byte-level text (NORMAL); scores 0 (Python ints: an INT32 array);
 *    merges: for each rank from 256 every split of its bytes into two
 *    tokens of the vocabulary, by (left rank, right rank);
 *  - SentencePiece: the pieces, scores and types; bos/eos/pad the CONTROL
 *    pieces "<s>", "</s>", "<pad>", unk the UNKNOWN "<unk>" (sentencepiece's
 *    bos_id()...), pad -1 becoming eos;
 *  - the chat template: chat_template.jinja when the directory has one,
 *    else a name by tokenizer version (mistral-v1, mistral-v3,
 *    mistral-v3-tekken, mistral-v7, mistral-v7-tekken). */
#include "ops/hfconv/mistral.h"
#include "ops/hfconv/tiktoken.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

enum { TT_NORMAL = 1, TT_CONTROL = 3, TT_UNKNOWN = 2, TT_UNUSED = 5, TT_BYTE = 6 };

/* mistral_common's TokenizerVersion members, in order */
static const char *const versions[] = {"v1", "v2", "v3", "v7", "v11", "v13", "v15", NULL};

static int version_index(const char *v)
{
    for (int i = 0; v && versions[i]; i++)
        if (!strcmp(v, versions[i]))
            return i;
    return -1;
}

/* Tekkenizer.DEPRECATED_SPECIAL_TOKENS (tekken files of v7 and before without special_tokens) */
static const char *const old_specials[] = {
    "<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]", "[TOOL_RESULTS]",
    "[/TOOL_RESULTS]", "[TOOL_CALLS]", "[IMG]", "<pad>", "[IMG_BREAK]", "[IMG_END]", "[PREFIX]", "[MIDDLE]",
    "[SUFFIX]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]", "[TOOL_CONTENT]", NULL};

/* utils._filter_valid_tokenizer_files: "tekken.json", or a name whose
 * suffixes (Path.suffixes joined) are ".model" or ".model.vN[mM]", vN a
 * TokenizerVersion */
static bool tokenizer_file_name(const char *name)
{
    if (!strcmp(name, "tekken.json"))
        return true;
    const char *m = strchr(name, '.');
    if (!m || m == name || strncmp(m, ".model", 6))
        return false;
    const char *v = m + 6;
    if (!*v)
        return true;
    if (v[0] != '.' || v[1] != 'v')
        return false;
    char ver[8];
    size_t k = 0;
    for (v += 1; *v && *v != 'm' && k < sizeof(ver) - 1; v++)
        ver[k++] = *v;
    ver[k] = 0;
    if (version_index(ver) < 0)
        return false;
    if (*v == 'm') { /* a multimodal version mN */
        if (!v[1])
            return false;
        for (v++; *v >= '0' && *v <= '9'; v++)
            ;
    }
    return !*v;
}

/* MistralVocab.__init__: the tokenizer file's name in dir (malloc'd), or NULL with st set. */
static char *pick_tokenizer_file(const char *dir, mf_status *st)
{
    DIR *d = opendir(dir);
    if (!d) {
        mf_fail(st, MF_ERR_IO, dir, -1, "cannot list the directory");
        return NULL;
    }
    char *best = NULL;
    bool tekken = false;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (!tokenizer_file_name(e->d_name) || tekken)
            continue;
        if (!strcmp(e->d_name, "tekken.json"))
            tekken = true;
        if (tekken || !best || strcmp(e->d_name, best) > 0) {
            free(best);
            if (!(best = strdup(e->d_name)))
                break;
        }
    }
    closedir(d);
    if (!best)
        mf_fail(st, MF_ERR_FORMAT, dir, -1, "Mistral format: no tokenizer file (tekken.json or tokenizer.model.v*)");
    return best;
}

static int read_file_in(const char *dir, const char *name, char **buf, size_t *len, char **path, mf_status *st)
{
    *path = mf_path_join_new(dir, name);
    if (!*path)
        return mf_oom(st, dir);
    uint64_t promised;
    if (mf_hf_lfs_pointer(*path, &promised, NULL))
        return mf_fail(st, MF_ERR_FORMAT, *path, 0, "a Git LFS pointer, not the tokenizer: not downloaded "
                       "(%llu bytes promised)", (unsigned long long)promised);
    return mf_read_small_file(*path, 1u << 30, buf, len, st);
}

/* ------------------------------------------------------------- tekken */

typedef struct tekken {
    const char *path;
    int version;            /* index into versions[] */
    int64_t n_special, vocab_size;
    const char **special;   /* n_special texts (borrowed from the JSON or static) */
    char **filler;          /* the "<SPECIAL_i>" ones, owned */
    mf_tiktoken ranks;      /* the vocabulary cut to vocab_size - n_special */
} tekken;

static void tekken_free(tekken *t)
{
    for (int64_t i = 0; t->filler && i < t->n_special; i++)
        free(t->filler[i]);
    free(t->filler);
    free(t->special);
    mf_tiktoken_free(&t->ranks);
}

static int need_int(const tekken *t, json_t *o, const char *key, int64_t *out, mf_status *st)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_integer(v))
        return mf_fail(st, MF_ERR_FORMAT, t->path, -1, "config.%s is missing or not an integer", key);
    *out = json_integer_value(v);
    return 0;
}

/* Tekkenizer.from_file + __init__: the special tokens, unique, padded */
static int tekken_specials(tekken *t, json_t *root, mf_status *st)
{
    json_t *sp = json_object_get(root, "special_tokens");
    size_t n_given = 0;
    if (sp && !json_is_null(sp)) {
        if (!json_is_array(sp))
            return mf_fail(st, MF_ERR_FORMAT, t->path, -1, "special_tokens is not a list");
        n_given = json_array_size(sp);
    } else if (t->version > version_index("v7")) {
        return mf_fail(st, MF_ERR_FORMAT, t->path, -1, "Special tokens not found (tokenizers after v7 list them)");
    } else {
        n_given = sizeof(old_specials) / sizeof(old_specials[0]) - 1;
    }
    if ((int64_t)n_given > t->n_special)
        return mf_fail(st, MF_ERR_FORMAT, t->path, -1, "%zu special tokens but default_num_special_tokens is %lld",
                       n_given, (long long)t->n_special);
    t->special = calloc((size_t)t->n_special ? (size_t)t->n_special : 1, sizeof(char *));
    t->filler = calloc((size_t)t->n_special ? (size_t)t->n_special : 1, sizeof(char *));
    if (!t->special || !t->filler)
        return mf_oom(st, t->path);
    for (size_t i = 0; i < n_given; i++) {
        const char *s = sp && !json_is_null(sp) ? json_string_value(json_object_get(json_array_get(sp, i), "token_str"))
                                                : old_specials[i];
        if (!s)
            return mf_fail(st, MF_ERR_FORMAT, t->path, -1, "special_tokens[%zu] has no token_str string", i);
        t->special[i] = s;
    }
    for (int64_t i = (int64_t)n_given; i < t->n_special; i++) {
        char buf[40];
        snprintf(buf, sizeof(buf), "<SPECIAL_%lld>", (long long)i);
        if (!(t->filler[i] = strdup(buf)))
            return mf_oom(st, t->path);
        t->special[i] = t->filler[i];
    }
    for (int64_t i = 0; i < t->n_special; i++) /* "Special tokens must be unique" */
        for (int64_t j = 0; j < i; j++)
            if (!strcmp(t->special[i], t->special[j]))
                return mf_fail(st, MF_ERR_FORMAT, t->path, -1, "special token \"%s\" twice (ids %lld and %lld)",
                               t->special[i], (long long)j, (long long)i);
    return 0;
}

/* _reload_mergeable_ranks: the first `inner` entries, each of its own rank,
 * the first 256 the single bytes */
static int tekken_ranks(tekken *t, json_t *vocab, int64_t inner, mf_status *st)
{
    if (!json_is_array(vocab))
        return mf_fail(st, MF_ERR_FORMAT, t->path, -1, "vocab is not a list");
    if ((int64_t)json_array_size(vocab) < inner)
        return mf_fail(st, MF_ERR_FORMAT, t->path, -1, "vocab has %zu entries, fewer than default_vocab_size - "
                       "default_num_special_tokens = %lld", json_array_size(vocab), (long long)inner);
    t->ranks = (mf_tiktoken){.max_rank = -1};
    for (int64_t i = 0; i < inner; i++) {
        json_t *e = json_array_get(vocab, (size_t)i), *r = json_object_get(e, "rank");
        const char *b = json_string_value(json_object_get(e, "token_bytes"));
        char where[48];
        snprintf(where, sizeof(where), "vocab[%lld]", (long long)i);
        if (!json_is_integer(r) || json_integer_value(r) != i || !b)
            return mf_fail(st, MF_ERR_FORMAT, t->path, -1, "%s: not {\"rank\": %lld, \"token_bytes\": base64}",
                           where, (long long)i);
        if (mf_tiktoken_add_b64(&t->ranks, b, strlen(b), i, t->path, -1, where, st))
            return -1;
        const mf_tt_entry *x = &t->ranks.v[t->ranks.n - 1];
        if (i < 256 && (x->n != 1 || x->bytes[0] != (uint8_t)i))
            return mf_fail(st, MF_ERR_FORMAT, t->path, -1, "%s: rank %lld must be the byte %lld", where,
                           (long long)i, (long long)i);
    }
    return 0;
}

static int tekken_load(tekken *t, const char *buf, size_t len, mf_status *st)
{
    json_error_t err;
    json_t *root = json_loadb(buf, len, JSON_ALLOW_NUL, &err); /* token_str "\u0000" */
    if (!json_is_object(root)) {
        json_decref(root);
        return mf_fail(st, MF_ERR_FORMAT, t->path, root ? -1 : (int64_t)err.position, "not a JSON object%s%s",
                       root ? "" : ": ", root ? "" : err.text);
    }
    json_t *cfg = json_object_get(root, "config");
    const char *ver = json_string_value(json_object_get(cfg, "version"));
    int64_t inner = 0;
    int rc = 0;
    if ((t->version = version_index(ver)) < 0)
        rc = mf_fail(st, MF_ERR_FORMAT, t->path, -1, "Unknown version: %s (mistral_common knows v1, v2, v3, v7, "
                     "v11, v13, v15)", ver ? ver : "(none)");
    if (rc == 0)
        rc = need_int(t, cfg, "default_vocab_size", &t->vocab_size, st) ||
             need_int(t, cfg, "default_num_special_tokens", &t->n_special, st);
    if (rc == 0 && (t->n_special < 0 || t->n_special > (1 << 20) || t->vocab_size < t->n_special + 256 ||
                    t->vocab_size > (1 << 24)))
        rc = mf_fail(st, MF_ERR_FORMAT, t->path, -1, "default_vocab_size %lld with %lld special tokens is out of "
                     "range (the 256 bytes at least, at most 2^24)", (long long)t->vocab_size,
                     (long long)t->n_special);
    inner = t->vocab_size - t->n_special;
    if (rc == 0)
        rc = tekken_specials(t, root, st);
    if (rc == 0)
        rc = tekken_ranks(t, json_object_get(root, "vocab"), inner, st);
    /* the special tokens' strings live in root: keep them as copies */
    for (int64_t i = 0; rc == 0 && i < t->n_special; i++)
        if (!t->filler[i] && !(t->filler[i] = strdup(t->special[i])))
            rc = mf_oom(st, t->path);
    for (int64_t i = 0; rc == 0 && i < t->n_special; i++)
        t->special[i] = t->filler[i];
    json_decref(root);
    return rc;
}

static int64_t special_id(const tekken *t, const char *s)
{
    for (int64_t i = 0; i < t->n_special; i++)
        if (!strcmp(t->special[i], s))
            return i;
    return -1;
}

/* The entry of rank r (ranks are 0..n-1 in file order) */
static const mf_tt_entry *by_rank(const tekken *t, int64_t r)
{
    return &t->ranks.v[r];
}

/* MistralVocab.extract_vocab_merges_from_model */
static int tekken_merges(const tekken *t, mf_kvlist *kv, mf_status *st)
{
    size_t n = 0, cap = 0;
    struct merge { int64_t l, r; uint32_t split; int64_t rank; } *m = NULL;
    for (int64_t i = 256; i < (int64_t)t->ranks.n; i++) {
        const mf_tt_entry *e = by_rank(t, i);
        size_t first = n;
        for (size_t j = 1; j < e->n; j++) {
            int64_t l = mf_tiktoken_rank(&t->ranks, e->bytes, j), r = mf_tiktoken_rank(&t->ranks, e->bytes + j, e->n - j);
            if (l < 0 || r < 0)
                continue;
            if (n == cap) {
                cap = cap ? 2 * cap : 1024;
                struct merge *g = realloc(m, cap * sizeof(*m));
                if (!g) {
                    free(m);
                    return mf_oom(st, t->path);
                }
                m = g;
            }
            m[n++] = (struct merge){l, r, (uint32_t)j, i};
        }
        if (n == first) {
            free(m);
            return mf_fail(st, MF_ERR_FORMAT, t->path, -1, "Could not find valid merge for token at rank %lld",
                           (long long)i);
        }
        /* sorted by (left rank, right rank): insertion sort, few splits each */
        for (size_t a = first + 1; a < n; a++)
            for (size_t b = a; b > first && (m[b - 1].l > m[b].l || (m[b - 1].l == m[b].l && m[b - 1].r > m[b].r)); b--) {
                struct merge x = m[b];
                m[b] = m[b - 1];
                m[b - 1] = x;
            }
    }
    mf_value *arr = mf_kv_arr(kv, "tokenizer.ggml.merges", MF_V_STR, n);
    char *text = NULL;
    size_t tcap = 0;
    int rc = 0;
    for (size_t k = 0; arr && k < n && rc == 0; k++) {
        const mf_tt_entry *e = by_rank(t, m[k].rank);
        if (2 * e->n + 2 > tcap) {
            tcap = 2 * e->n + 2;
            char *g = realloc(text, tcap);
            if (!g) {
                rc = mf_oom(st, t->path);
                break;
            }
            text = g;
        }
        size_t len = mf_byte_level_text(e->bytes, m[k].split, text);
        text[len++] = ' ';
        len += mf_byte_level_text(e->bytes + m[k].split, e->n - m[k].split, text + len);
        mf_kv_arr_str(kv, arr, k, text, len);
    }
    free(text);
    free(m);
    return rc;
}

static int tekken_keys(const char *dir, const char *file, const char *arch, mf_kvlist *kv, mf_status *st,
                       int *version)
{
    char *buf = NULL, *path = NULL;
    size_t len = 0;
    tekken t = {0};
    int rc = read_file_in(dir, file, &buf, &len, &path, st);
    t.path = path;
    if (rc == 0)
        rc = tekken_load(&t, buf, len, st);
    free(buf);
    int64_t ids[4] = {-1, -1, -1, -1};
    static const char *const names[4] = {"<s>", "</s>", "<unk>", "<pad>"};
    for (int i = 0; rc == 0 && i < 4; i++)
        if ((ids[i] = special_id(&t, names[i])) < 0)
            rc = mf_fail(st, MF_ERR_FORMAT, path, -1, "Unknown control token %s (the tokenizer needs it)", names[i]);
    if (rc == 0) {
        *version = t.version;
        mf_kv_str(kv, "tokenizer.ggml.model", "gpt2", 4);
        mf_kv_str(kv, "tokenizer.ggml.pre", "tekken", 6);
        rc = tekken_merges(&t, kv, st);
    }
    if (rc == 0) {
        static const char *const keys[4] = {"tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id",
                                            "tokenizer.ggml.unknown_token_id", "tokenizer.ggml.padding_token_id"};
        for (int i = 0; i < 4; i++)
            mf_kv_u32(kv, keys[i], (uint32_t)ids[i]);
        size_t n = (size_t)t.vocab_size;
        /* each array filled before the next key is added (mf_kv_arr's
         * pointer moves when the list grows) */
        mf_value *tok = mf_kv_arr(kv, "tokenizer.ggml.tokens", MF_V_STR, n);
        char *text = NULL;
        for (size_t i = 0; tok && i < n && rc == 0; i++) {
            if ((int64_t)i < t.n_special) {
                mf_kv_arr_str(kv, tok, i, t.special[i], strlen(t.special[i]));
                continue;
            }
            const mf_tt_entry *e = by_rank(&t, (int64_t)i - t.n_special);
            char *g = realloc(text, 2 * e->n + 1);
            if (!g) {
                rc = mf_oom(st, path);
                break;
            }
            text = g;
            mf_kv_arr_str(kv, tok, i, text, mf_byte_level_text(e->bytes, e->n, text));
        }
        free(text);
        mf_kv_arr(kv, "tokenizer.ggml.scores", MF_V_I32, n); /* Python ints 0: INT32, zeroed */
        mf_value *ty = mf_kv_arr(kv, "tokenizer.ggml.token_type", MF_V_I32, n);
        for (size_t i = 0; ty && i < n; i++)
            ty->as.arr.items[i].as.i = (int64_t)i < t.n_special ? TT_CONTROL : TT_NORMAL;
        char key[96];
        snprintf(key, sizeof(key), "%s.vocab_size", arch);
        mf_kv_u32(kv, key, (uint32_t)n);
    }
    tekken_free(&t);
    free(path);
    return rc;
}

/* ------------------------------------------------------ SentencePiece */

/* sentencepiece's bos_id()/eos_id()/pad_id() (a CONTROL piece of the
 * default name) and unk_id() (the UNKNOWN "<unk>"); -1 when none */
static int64_t spm_id(const mf_spm *spm, const char *text, int type)
{
    for (size_t i = 0; i < spm->n; i++)
        if (spm->pieces[i].type == type && spm->pieces[i].len == strlen(text) &&
            !memcmp(spm->pieces[i].text, text, spm->pieces[i].len))
            return (int64_t)i;
    return -1;
}

/* SentencePieceTokenizer: the version from the name (tokenizer.model.v3 -> v3, else v1) */
static int spm_version(const char *file)
{
    const char *v = strstr(file, ".model.v");
    if (!v)
        return 0;
    char ver[8];
    size_t k = 0;
    for (v += 7; *v && *v != 'm' && k < sizeof(ver) - 1; v++)
        ver[k++] = *v;
    ver[k] = 0;
    int i = version_index(ver);
    return i < 0 ? 0 : i;
}

static int spm_keys(const char *dir, const char *file, const char *arch, mf_kvlist *kv, mf_status *st, int *version)
{
    char *buf = NULL, *path = NULL;
    size_t len = 0;
    mf_spm spm = {0};
    int rc = read_file_in(dir, file, &buf, &len, &path, st);
    if (rc == 0)
        rc = mf_spm_parse((const uint8_t *)buf, len, path, &spm, st);
    int64_t bos = -1, eos = -1, unk = -1, pad = -1;
    if (rc == 0) {
        bos = spm_id(&spm, "<s>", MF_SPM_CONTROL);
        eos = spm_id(&spm, "</s>", MF_SPM_CONTROL);
        unk = spm_id(&spm, "<unk>", MF_SPM_UNKNOWN);
        pad = spm_id(&spm, "<pad>", MF_SPM_CONTROL);
        pad = pad < 0 ? eos : pad; /* MistralVocab.pad_id */
        if (bos < 0 || eos < 0 || unk < 0) /* gguf-py would write -1 into a u32 */
            rc = mf_fail(st, MF_ERR_FORMAT, path, -1, "no %s piece: the converter needs bos, eos and unk ids",
                         bos < 0 ? "CONTROL <s>" : eos < 0 ? "CONTROL </s>" : "UNKNOWN <unk>");
    }
    if (rc == 0) {
        *version = spm_version(file);
        mf_kv_str(kv, "tokenizer.ggml.model", "llama", 5);
        mf_kv_u32(kv, "tokenizer.ggml.bos_token_id", (uint32_t)bos);
        mf_kv_u32(kv, "tokenizer.ggml.eos_token_id", (uint32_t)eos);
        mf_kv_u32(kv, "tokenizer.ggml.unknown_token_id", (uint32_t)unk);
        mf_kv_u32(kv, "tokenizer.ggml.padding_token_id", (uint32_t)pad);
        mf_value *tok = mf_kv_arr(kv, "tokenizer.ggml.tokens", MF_V_STR, spm.n);
        for (size_t i = 0; tok && i < spm.n; i++) /* each array filled before the next key */
            mf_kv_arr_str(kv, tok, i, spm.pieces[i].text, spm.pieces[i].len);
        mf_value *sc = mf_kv_arr(kv, "tokenizer.ggml.scores", MF_V_F32, spm.n);
        for (size_t i = 0; sc && i < spm.n; i++)
            sc->as.arr.items[i].as.f = spm.pieces[i].score;
        mf_value *ty = mf_kv_arr(kv, "tokenizer.ggml.token_type", MF_V_I32, spm.n);
        for (size_t i = 0; ty && i < spm.n; i++) {
            int p = spm.pieces[i].type;
            ty->as.arr.items[i].as.i = p == MF_SPM_UNKNOWN ? TT_UNKNOWN : p == MF_SPM_CONTROL ? TT_CONTROL
                                     : p == MF_SPM_UNUSED ? TT_UNUSED : p == MF_SPM_BYTE ? TT_BYTE : TT_NORMAL;
        }
        char key[96];
        snprintf(key, sizeof(key), "%s.vocab_size", arch);
        mf_kv_u32(kv, key, (uint32_t)spm.n);
    }
    mf_spm_free(&spm);
    free(buf);
    free(path);
    return rc;
}

/* ------------------------------------------------------ chat template */

/* MistralModel.get_community_chat_template: a template name by version and kind */
static int chat_template(const char *dir, int version, bool is_tekken, mf_kvlist *kv, mf_status *st)
{
    char *path = mf_path_join_new(dir, "chat_template.jinja");
    if (!path)
        return mf_oom(st, dir);
    if (mf_path_exists(path)) { /* "Using an existing Mistral local chat template" */
        char *buf = NULL;
        size_t len = 0;
        int rc = mf_read_small_file(path, 1u << 26, &buf, &len, st);
        if (rc == 0)
            mf_kv_str(kv, "tokenizer.chat_template", buf, len);
        free(buf);
        free(path);
        return rc;
    }
    free(path);
    const char *v = versions[version], *name = NULL;
    if (!strcmp(v, "v1"))
        name = "mistral-v1";
    else if (!strcmp(v, "v3"))
        name = is_tekken ? "mistral-v3-tekken" : "mistral-v3";
    else if (!strcmp(v, "v7"))
        name = is_tekken ? "mistral-v7-tekken" : "mistral-v7";
    else if (!strcmp(v, "v11") || !strcmp(v, "v13"))
        return mf_fail(st, MF_ERR_UNSUPPORTED, dir, -1, "tokenizer %s: llama.cpp's converter writes the template "
                       "file it carries (models/templates/%s), which mfmt does not have; put it in the directory as "
                       "chat_template.jinja", v, !strcmp(v, "v11") ? "Mistral-Small-3.2-24B-Instruct-2506.jinja"
                                                                    : "unsloth-mistral-Devstral-Small-2507.jinja");
    else
        return mf_fail(st, MF_ERR_UNSUPPORTED, dir, -1, "Unknown tokenizer type: %s and version %s (the converter "
                       "has no chat template for it)", is_tekken ? "tekken" : "spm", v);
    mf_kv_str(kv, "tokenizer.chat_template", name, strlen(name));
    return 0;
}

int h2g_mistral_vocab(const char *dir, const char *arch, mf_kvlist *kv, mf_status *st)
{
    char *file = pick_tokenizer_file(dir, st);
    if (!file)
        return st->code ? -1 : mf_oom(st, dir);
    bool is_tekken = !strcmp(file, "tekken.json");
    int version = 0;
    int rc = is_tekken ? tekken_keys(dir, file, arch, kv, st, &version) : spm_keys(dir, file, arch, kv, st, &version);
    free(file);
    if (rc == 0) { /* _set_vocab_mistral: add_bos True, add_eos False, then the template */
        mf_kv_bool(kv, "tokenizer.ggml.add_bos_token", true);
        mf_kv_bool(kv, "tokenizer.ggml.add_eos_token", false);
        rc = chat_template(dir, version, is_tekken, kv, st);
    }
    return rc;
}
