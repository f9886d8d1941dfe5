/* hf2gguf_vocab.c - the tokenizer keys llama.cpp's converter writes for a
 * Hugging Face directory (convert_hf_to_gguf.py set_vocab and gguf-py's
 * SpecialVocab, at the commit of ../shared/convert-ref/README.md):
 *  - SentencePiece (tokenizer.model): tokens, scores and types from the
 *    model, then added_tokens.json, then tokenizer_config.json's
 *    added_tokens_decoder; tokenizer.ggml.model "llama", pre "default".
 *  - byte-level BPE (tokenizer.json): tokens from the vocabulary plus added
 *    tokens, types NORMAL/CONTROL/USER_DEFINED/UNUSED, merges as "a b";
 *    tokenizer.ggml.model "gpt2" and the pre-tokenizer's llama.cpp name.
 *  - special token ids (tokenizer_config.json contents looked up in the
 *    added tokens, then config.json *_token_id), add_bos/add_eos, chat
 *    template. */
#include "ops/hfconv/bpe_encode.h"
#include "ops/hfconv/arch.h"
#include "ops/hfconv/mistral.h"
#include "ops/hfconv/rwkv_vocab.h"
#include "ops/hfconv/tiktoken.h"

#include <ctype.h>
#include <stdlib.h>

enum { TT_NORMAL = 1, TT_UNKNOWN = 2, TT_CONTROL = 3, TT_USER_DEFINED = 4, TT_UNUSED = 5,
       TT_BYTE = 6 };

typedef struct vocab {
    const char *dir;
    const json_t *cfg;
    mf_kvlist *kv;
    mf_status *st;
    json_t *tcfg, *tj; /* tokenizer_config.json, tokenizer.json (may be NULL) */
    /* the token list being built */
    char **text;
    size_t *len;
    float *score;
    int32_t *type;
    size_t n;
    const char *arch;    /* GGUF architecture */
    int64_t vocab_size;  /* config.json vocab_size as the class sees it; -1: none */
    const mf_hf_vocab_opts *o;
    bool wordpiece;      /* tokenizer.json's model is WordPiece (set_vocab_bert) */
} vocab;

static char *path_in(const vocab *v, const char *name)
{
    return mf_path_join_new(v->dir, name);
}

static bool file_in(const vocab *v, const char *name)
{
    char *p = path_in(v, name);
    bool r = p && mf_path_exists(p);
    free(p);
    return r;
}

static json_t *json_in(const vocab *v, const char *name, mf_status *st, bool *failed)
{
    char *p = path_in(v, name);
    if (!p) {
        *failed = true;
        mf_oom(st, v->dir);
        return NULL;
    }
    json_t *j = NULL;
    if (mf_path_exists(p)) {
        j = mf_hf_load_json(p, st);
        if (!j)
            *failed = true;
    }
    free(p);
    return j;
}

static int set_token(vocab *v, size_t i, const char *s, size_t n)
{
    char *copy = malloc(n + 1);
    if (!copy)
        return mf_oom(v->st, v->dir);
    memcpy(copy, s, n);
    copy[n] = 0;
    free(v->text[i]);
    v->text[i] = copy;
    v->len[i] = n;
    return 0;
}

static int alloc_tokens(vocab *v, size_t n)
{
    v->n = n;
    v->text = calloc(n ? n : 1, sizeof(char *));
    v->len = calloc(n ? n : 1, sizeof(size_t));
    v->score = calloc(n ? n : 1, sizeof(float));
    v->type = calloc(n ? n : 1, sizeof(int32_t));
    if (!v->text || !v->len || !v->score || !v->type)
        return mf_oom(v->st, v->dir);
    return 0;
}

static void free_tokens(vocab *v)
{
    for (size_t i = 0; v->text && i < v->n; i++)
        free(v->text[i]);
    free(v->text);
    free(v->len);
    free(v->score);
    free(v->type);
}

/* Model.does_token_look_special */
static bool looks_special(const char *t)
{
    size_t n = strlen(t);
    if (!strcmp(t, "<pad>") || !strcmp(t, "<mask>") || !strcmp(t, "<2mass>") || !strcmp(t, "[@BOS@]"))
        return true;
    if (n >= 4 && !strncmp(t, "<|", 2) && !strcmp(t + n - 2, "|>"))
        return true;
    /* "<｜" ... "｜>" (fullwidth vertical line, U+FF5C) */
    if (n >= 8 && !strncmp(t, "<\xef\xbd\x9c", 4) && !strcmp(t + n - 4, "\xef\xbd\x9c>"))
        return true;
    return n >= 8 && !strncmp(t, "<unused", 7) && t[n - 1] == '>';
}

/* token.replace("\u2581", " "): pre-normalized user-defined spaces */
static char *replace_lower_one_eighth_block(const char *s)
{
    char *out = malloc(strlen(s) + 1), *d = out;
    if (!out)
        return NULL;
    while (*s) {
        if (!strncmp(s, "\xe2\x96\x81", 3)) {
            *d++ = ' ';
            s += 3;
        } else {
            *d++ = *s++;
        }
    }
    *d = 0;
    return out;
}

/* int(key) for the keys of added_tokens_decoder */
static bool parse_id(const char *s, int64_t *out)
{
    char *end;
    while (*s == ' ')
        s++;
    long long v = strtoll(s, &end, 10);
    while (*end == ' ')
        end++;
    if (end == s || *end)
        return false;
    *out = v;
    return true;
}

/* ------------------------------------------------------- SentencePiece */

/* What XLMRobertaModel / T5Model.set_vocab read of the model's
 * normalizer_spec and trainer_spec besides the pieces. */
typedef struct spm_facts {
    int model_type;
    bool add_dummy_prefix, remove_extra_whitespaces;
    uint8_t *charsmap; /* malloc'd copy; NULL when empty */
    size_t charsmap_len;
} spm_facts;

/* The pieces of the SentencePiece model `file` over [PAD{i}] placeholders
 * up to config.json's vocab_size; facts (may be NULL) gets the rest. */
static int sentencepiece_tokens_of(vocab *v, const char *file, spm_facts *facts)
{
    char *path = path_in(v, file);
    char *buf = NULL;
    size_t blen;
    mf_spm spm = {0};
    int rc = path ? 0 : mf_oom(v->st, v->dir);
    uint64_t promised;
    if (rc == 0 && mf_hf_lfs_pointer(path, &promised, NULL))
        rc = mf_fail(v->st, MF_ERR_FORMAT, path, 0,
                     "a Git LFS pointer, not the tokenizer: not downloaded (%llu bytes promised)",
                     (unsigned long long)promised);
    if (rc == 0)
        rc = mf_read_small_file(path, 1u << 30, &buf, &blen, v->st);
    if (rc == 0)
        rc = mf_spm_parse((const uint8_t *)buf, blen, path, &spm, v->st);
    int64_t vocab_size = v->vocab_size >= 0 ? v->vocab_size : (int64_t)spm.n;
    if (rc == 0 && (vocab_size < 0 || (uint64_t)vocab_size > (1u << 28)))
        rc = mf_fail(v->st, MF_ERR_FORMAT, v->dir, -1, "config.json vocab_size %lld is out of range",
                     (long long)vocab_size);
    if (rc == 0 && spm.n > (uint64_t)vocab_size)
        rc = mf_fail(v->st, MF_ERR_FORMAT, path, -1,
                     "%zu pieces but config.json vocab_size is %lld: ids past it have no place",
                     spm.n, (long long)vocab_size);
    if (rc == 0)
        rc = alloc_tokens(v, (size_t)vocab_size);
    for (size_t i = 0; rc == 0 && i < v->n; i++) { /* [PAD{i}], -10000, UNUSED */
        char pad[32];
        int k = snprintf(pad, sizeof(pad), "[PAD%zu]", i);
        rc = set_token(v, i, pad, (size_t)k);
        v->score[i] = -10000.0f;
        v->type[i] = TT_UNUSED;
    }
    for (size_t i = 0; rc == 0 && i < spm.n; i++) {
        const mf_spm_piece *p = &spm.pieces[i];
        rc = set_token(v, i, p->text, p->len);
        v->score[i] = p->score;
        /* IsUnknown, IsControl, IsUnused, IsByte, else NORMAL (user-defined too) */
        v->type[i] = p->type == MF_SPM_UNKNOWN ? TT_UNKNOWN : p->type == MF_SPM_CONTROL ? TT_CONTROL
                   : p->type == MF_SPM_UNUSED ? TT_UNUSED : p->type == MF_SPM_BYTE ? TT_BYTE
                   : TT_NORMAL;
    }
    if (rc == 0 && facts) {
        *facts = (spm_facts){.model_type = spm.model_type, .add_dummy_prefix = spm.add_dummy_prefix,
                             .remove_extra_whitespaces = spm.remove_extra_whitespaces};
        if (spm.charsmap_len && !(facts->charsmap = malloc((size_t)spm.charsmap_len)))
            rc = mf_oom(v->st, v->dir);
        else if (spm.charsmap_len) {
            memcpy(facts->charsmap, spm.charsmap, (size_t)spm.charsmap_len);
            facts->charsmap_len = (size_t)spm.charsmap_len;
        }
    }
    mf_spm_free(&spm);
    free(buf);
    free(path);
    return rc;
}

static int sentencepiece_tokens(vocab *v)
{
    return sentencepiece_tokens_of(v, "tokenizer.model", NULL);
}

/* added_tokens.json over the SentencePiece list: USER_DEFINED, -1000. */
static int added_tokens_json_over(vocab *v)
{
    bool failed = false;
    json_t *added = json_in(v, "added_tokens.json", v->st, &failed);
    if (failed)
        return -1;
    const char *k;
    json_t *x;
    int rc = 0;
    json_object_foreach(added, k, x) {
        int64_t id;
        if (!mf_hf_json_int(x, &id)) {
            rc = mf_fail(v->st, MF_ERR_FORMAT, v->dir, -1, "added_tokens.json: \"%s\" has no integer id", k);
            break;
        }
        if (id < 0 || (uint64_t)id >= v->n) /* "ignore token: id is out of range" */
            continue;
        if ((rc = set_token(v, (size_t)id, k, strlen(k))))
            break;
        v->score[id] = -1000.0f;
        v->type[id] = TT_USER_DEFINED;
    }
    json_decref(added);
    return rc;
}

static int sentencepiece_added(vocab *v)
{
    int rc = added_tokens_json_over(v);
    if (rc)
        return rc;
    const char *k;
    json_t *x;
    json_t *atd = json_object_get(v->tcfg, "added_tokens_decoder");
    json_object_foreach(atd, k, x) {
        int64_t id;
        const char *content = json_string_value(json_object_get(x, "content"));
        if (!parse_id(k, &id) || !content)
            return mf_fail(v->st, MF_ERR_FORMAT, v->dir, -1,
                           "tokenizer_config.json: added_tokens_decoder[\"%s\"] needs an id and a content", k);
        if (id < 0 || (uint64_t)id >= v->n)
            return mf_fail(v->st, MF_ERR_FORMAT, v->dir, -1,
                           "tokenizer_config.json: added token %lld is past the vocabulary (%zu)",
                           (long long)id, v->n);
        json_t *sp = json_object_get(x, "special");
        if ((sp && json_is_true(sp)) || looks_special(content)) {
            rc = set_token(v, (size_t)id, content, strlen(content));
            v->type[id] = TT_CONTROL;
        } else {
            char *t = replace_lower_one_eighth_block(content);
            rc = t ? set_token(v, (size_t)id, t, strlen(t)) : mf_oom(v->st, v->dir);
            free(t);
            v->type[id] = TT_USER_DEFINED;
        }
        v->score[id] = -1000.0f;
        if (rc)
            return rc;
    }
    return 0;
}

/* ------------------------------------------------------------------ BPE */

/* The family of a tokenizer.json pre_tokenizer, from its shape. */
typedef enum pre_family { PF_OTHER, PF_BYTELEVEL, PF_DIGITS_BYTELEVEL, PF_LLAMA3, PF_QWEN2, PF_DEEPSEEK_LLM,
                          PF_DEEPSEEK_V3, PF_FALCON, PF_BERT, PF_TEKKEN, PF_O200K, PF_BLOOM, PF_QWEN35 } pre_family;

static const char *split_regex(const json_t *p)
{
    const char *t = json_string_value(json_object_get(p, "type"));
    return t && !strcmp(t, "Split") ? json_string_value(json_object_get(json_object_get(p, "pattern"), "Regex")) : NULL;
}

static pre_family pre_tokenizer_family(const json_t *tj)
{
    static const char llama3[] = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|"
                                 "\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
    static const char qwen2[] = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|"
                                "\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
    /* Mistral's tekken (Mistral-Nemo, Ministral 3) and OpenAI's o200k
     * (Llama 4, gpt-4o): case-split words, the latter with contractions */
    static const char tekken[] = "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+|"
                                 "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*|"
                                 "\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
    static const char o200k[] = "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+"
                                "(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+"
                                "[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+"
                                "[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
    /* Qwen3.5: Qwen2's with \p{M} in the letter classes, digits one by one */
    static const char qwen35[] = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
    json_t *pt = json_object_get(tj, "pre_tokenizer");
    const char *type = json_string_value(json_object_get(pt, "type"));
    if (!type)
        return PF_OTHER;
    if (!strcmp(type, "BertPreTokenizer"))
        return PF_BERT;
    json_t *seq = json_object_get(pt, "pretokenizers");
    size_t n = strcmp(type, "Sequence") ? 1 : json_array_size(seq);
    char types[256] = "";
    const char *regex = NULL, *first_regex = NULL;
    for (size_t i = 0; i < n; i++) {
        json_t *p = strcmp(type, "Sequence") ? pt : json_array_get(seq, i);
        const char *t = json_string_value(json_object_get(p, "type"));
        snprintf(types + strlen(types), sizeof(types) - strlen(types), "%s%s", i ? "+" : "", t ? t : "?");
        const char *r = split_regex(p);
        if (r && !regex)
            regex = r;
        if (i == 0)
            first_regex = r;
        if (t && !strcmp(t, "ByteLevel") && !strcmp(types, "ByteLevel") && n == 1 &&
            json_is_true(json_object_get(p, "use_regex")))
            return PF_BYTELEVEL;
    }
    if (regex && !strcmp(regex, llama3))
        return PF_LLAMA3;
    if (regex && !strcmp(regex, qwen2))
        return PF_QWEN2;
    if (regex && !strcmp(regex, tekken))
        return PF_TEKKEN;
    if (regex && !strcmp(regex, o200k))
        return PF_O200K;
    if (regex && !strcmp(regex, qwen35))
        return PF_QWEN35;
    if (!strcmp(types, "Digits+ByteLevel"))
        return PF_DIGITS_BYTELEVEL;
    if (!strcmp(types, "Punctuation+ByteLevel+Digits+Split"))
        return PF_FALCON;
    if (first_regex && !strcmp(first_regex, "[\r\n]") && strstr(types, "+Digits+ByteLevel"))
        return PF_DEEPSEEK_LLM;
    /* DeepSeek-V3's: digits in threes, CJK runs, its word regex, then
     * ByteLevel without a regex */
    if (first_regex && !strcmp(first_regex, "\\p{N}{1,3}") && !strcmp(types, "Split+Split+Split+ByteLevel"))
        return PF_DEEPSEEK_V3;
    /* BLOOM's: runs up to whitespace and its sentence punctuation, then ByteLevel without a regex */
    if (first_regex && !strcmp(first_regex, " ?[^(\\s|[.,!?\u2026\u3002\uff0c\u3001\u0964\u06d4\u060c])]+") &&
        !strcmp(types, "Split+ByteLevel"))
        return PF_BLOOM;
    return PF_OTHER;
}

/* get_vocab_base_pre: the name of the hash of the ids the tokenizer gives
 * the check text, or NULL when mfmt's encoder does not run this
 * tokenizer.json (not BPE, or a part it lacks) or the table has no such
 * hash (every tiny test vocabulary). Its errors are not the converter's:
 * the family names the pre-tokenizer then. */
static const char *pre_name_by_hash(const vocab *v, char hex[65])
{
    mf_status local = MF_STATUS_INIT;
    mf_bpe *b = mf_bpe_new(v->tj, v->tcfg, v->dir, &local);
    hex[0] = 0;
    const char *name = NULL;
    if (b && mf_bpe_chkhsh(b, hex, &local) == 0) /* the layout's converter's table */
        name = v->o->l2026 ? mf_bpe_pre_name_of_hash_2026(hex) : mf_bpe_pre_name_of_hash(hex);
    if (!b || local.code != MF_OK)
        hex[0] = 0;
    mf_bpe_free(b);
    mf_status_clear(&local);
    return name;
}

/* The name of the pre-tokenizer's family, from the architecture and the
 * pre_tokenizer's shape: the names this converter version gives the real
 * families' tokenizers (first row that fits; arch NULL: any). */
static const char *pre_family_name(const json_t *tj, const char *arch, const char *dir, mf_status *st)
{
    static const struct { const char *arch; pre_family f; const char *name; } names[] = {
        {"gpt2", PF_BYTELEVEL, "gpt-2"},        {"phi2", PF_BYTELEVEL, "phi-2"},
        {"gptneox", PF_BYTELEVEL, "olmo"},      {"mamba", PF_BYTELEVEL, "olmo"},
        /* StableLM-Epoch (stablelm-3b-4e1t) ships the GPT-NeoX-20B tokenizer */
        {"stablelm", PF_BYTELEVEL, "olmo"},     {"olmo", PF_BYTELEVEL, "olmo"},
        {"bert", PF_BYTELEVEL, "roberta-bpe"}, /* RobertaModel's byte-level BPE */
        {"jina-bert-v2", PF_BYTELEVEL, "roberta-bpe"},
        /* MPT ships the GPT-NeoX-20B tokenizer: its hash is MPT's and OLMo's, the later "olmo" wins */
        {"mpt", PF_BYTELEVEL, "olmo"},
        {"dbrx", PF_LLAMA3, "dbrx"},
        {"olmoe", PF_BYTELEVEL, "olmo"},       {"codeshell", PF_BYTELEVEL, "codeshell"},
        {"jais", PF_BYTELEVEL, "jais"},       {"exaone", PF_BYTELEVEL, "exaone"},
        {NULL, PF_BYTELEVEL, "gpt-2"},
        {"granite", PF_DIGITS_BYTELEVEL, "refact"}, {"command-r", PF_DIGITS_BYTELEVEL, "command-r"},
        {"cohere2", PF_DIGITS_BYTELEVEL, "command-r"},
        {"lfm2", PF_LLAMA3, "lfm2"}, /* the 2026-02 table: LiquidAI/LFM2-Tokenizer */
        {"falcon-h1", PF_LLAMA3, "falcon-h1"}, /* the 2026-02 table: tiiuae/Falcon-H1-*-Base */
        /* Granite 4.0: cl100k-style, DBRX's 100352 ids; the 2026-02 table has no
         * granite-4 row (the convert-ref-new README's assumption) */
        {"granitehybrid", PF_LLAMA3, "dbrx"},
        {"cohere2", PF_DIGITS_BYTELEVEL, "command-r"}, {"granitemoe", PF_DIGITS_BYTELEVEL, "refact"},
        {"refact", PF_DIGITS_BYTELEVEL, "refact"},
        {NULL, PF_DIGITS_BYTELEVEL, "starcoder"},
        {"olmo2", PF_LLAMA3, "dbrx"},           {"hunyuan-dense", PF_LLAMA3, "hunyuan-dense"},
        {"glm4moe", PF_LLAMA3, "glm4"},         {NULL, PF_LLAMA3, "llama-bpe"},
        {NULL, PF_TEKKEN, "tekken"},            {"llama4", PF_O200K, "llama4"},
        {"stablelm", PF_QWEN2, "stablelm2"},    {NULL, PF_QWEN2, "qwen2"},
        {NULL, PF_DEEPSEEK_LLM, "deepseek-llm"}, {NULL, PF_DEEPSEEK_V3, "deepseek-v3"},
        {NULL, PF_FALCON, "falcon"},            {NULL, PF_BLOOM, "bloom"},
        /* the 2026-02 table: Xenova/gpt-4o (gpt-oss's o200k_harmony has its base ids) */
        {NULL, PF_O200K, "gpt-4o"},
        {NULL, PF_QWEN35, "qwen35"}, /* the 2026-02 table: Qwen/Qwen3.5-9B-Instruct */
        {NULL, PF_BERT, "jina-v2-en"},
    };
    pre_family f = pre_tokenizer_family(tj);
    for (size_t i = 0; f != PF_OTHER && i < sizeof(names) / sizeof(names[0]); i++)
        if (names[i].f == f && (!names[i].arch || !strcmp(names[i].arch, arch)))
            return names[i].name;
    mf_fail(st, MF_ERR_UNSUPPORTED, dir, -1,
            "tokenizer.json: BPE pre-tokenizer not recognized (llama.cpp knows it by name; mfmt "
            "recognizes the GPT-2 ByteLevel, StarCoder Digits+ByteLevel, Llama-3, Qwen2, DeepSeek-LLM, DeepSeek-V3, "
            "Falcon, BLOOM, BERT, tekken and o200k (Llama 4) pre-tokenizers)");
    return NULL;
}

/* llama.cpp's name for the pre-tokenizer: by the check-text hash as its
 * converter names it; where the hash is unknown (the converter would stop:
 * "BPE pre-tokenizer was not recognized"), by the family. */
static const char *pre_tokenizer_name(const vocab *v)
{
    char hex[65], msg[600], reason[200];
    const char *name = pre_name_by_hash(v, hex);
    if (name)
        return name;
    name = v->o && v->o->pre_fallback ? v->o->pre_fallback : pre_family_name(v->tj, v->arch, v->dir, v->st);
    if (name && v->o && v->o->note) {
        if (hex[0])
            snprintf(reason, sizeof(reason), "the check-text hash %s is not in llama.cpp's table",
                     hex);
        else
            snprintf(reason, sizeof(reason),
                     "mfmt's encoder cannot run this tokenizer.json to hash the check text");
        snprintf(msg, sizeof(msg),
                 "tokenizer.ggml.pre = \"%s\", from the tokenizer's family: %s (llama.cpp's "
                 "converter stops here; check that llama.cpp tokenizes this model as the family "
                 "does)", name, reason);
        v->o->note(v->o->note_user, msg);
    }
    return name;
}

static int bpe_tokens(vocab *v)
{
    json_t *model = json_object_get(v->tj, "model");
    const char *mtype = json_string_value(json_object_get(model, "type"));
    json_t *vocab_obj = json_object_get(model, "vocab");
    const char *want = v->wordpiece ? "WordPiece" : "BPE";
    if (!mtype || strcmp(mtype, want) != 0 || !json_is_object(vocab_obj))
        return mf_fail(v->st, MF_ERR_UNSUPPORTED, v->dir, -1,
                       "tokenizer.json: a %s model, not a %s vocabulary", mtype ? mtype : "typeless",
                       !strcmp(want, "BPE") ? "byte-level BPE" : want);
    json_t *added = json_object_get(v->tj, "added_tokens");
    /* get_vocab(): the model's vocabulary, then the added tokens over it */
    int64_t max_id = -1;
    const char *k;
    json_t *x;
    json_object_foreach(vocab_obj, k, x) {
        int64_t id;
        if (!mf_hf_json_int(x, &id) || id < 0)
            return mf_fail(v->st, MF_ERR_FORMAT, v->dir, -1, "tokenizer.json: vocab \"%s\" has no valid id", k);
        if (id > max_id)
            max_id = id;
    }
    for (size_t i = 0; i < json_array_size(added); i++) {
        int64_t id;
        json_t *a = json_array_get(added, i);
        if (!mf_hf_json_int(json_object_get(a, "id"), &id) || id < 0 ||
            !json_is_string(json_object_get(a, "content")))
            return mf_fail(v->st, MF_ERR_FORMAT, v->dir, -1, "tokenizer.json: added_tokens[%zu] is malformed", i);
        if (id > max_id)
            max_id = id;
    }
    int64_t vocab_size = v->vocab_size;
    if (vocab_size < 0) { /* len(tokenizer.vocab): distinct contents */
        vocab_size = (int64_t)json_object_size(vocab_obj);
        for (size_t i = 0; i < json_array_size(added); i++)
            vocab_size += !json_object_get(vocab_obj, json_string_value(json_object_get(json_array_get(added, i), "content")));
    }
    if (max_id >= vocab_size || vocab_size > (1 << 28))
        return mf_fail(v->st, MF_ERR_FORMAT, v->dir, -1,
                       "tokenizer has ids up to %lld but config.json vocab_size is %lld",
                       (long long)max_id, (long long)vocab_size);
    if (alloc_tokens(v, (size_t)vocab_size))
        return -1;
    int8_t *from_added = calloc((size_t)vocab_size + 1, 1);
    if (!from_added)
        return mf_oom(v->st, v->dir);
    int rc = 0;
    json_object_foreach(vocab_obj, k, x) {
        int64_t id;
        mf_hf_json_int(x, &id);
        if ((rc = set_token(v, (size_t)id, k, strlen(k))))
            break;
    }
    for (size_t i = 0; rc == 0 && i < json_array_size(added); i++) {
        json_t *a = json_array_get(added, i), *c = json_object_get(a, "content");
        int64_t id, vid;
        mf_hf_json_int(json_object_get(a, "id"), &id);
        /* get_vocab(): an added token's content maps to its id only, so a
         * vocabulary id with the same content loses its token */
        if (mf_hf_json_int(json_object_get(vocab_obj, json_string_value(c)), &vid) && vid != id &&
            v->text[vid] && !from_added[vid]) {
            free(v->text[vid]);
            v->text[vid] = NULL;
        }
        rc = set_token(v, (size_t)id, json_string_value(c), json_string_length(c));
        from_added[id] = 1;
    }
    for (size_t i = 0; rc == 0 && i < v->n; i++) {
        if (!v->text[i]) {
            char pad[32];
            int k2 = snprintf(pad, sizeof(pad), "[PAD%zu]", i);
            rc = set_token(v, i, pad, (size_t)k2);
            v->type[i] = TT_UNUSED;
            continue;
        }
        if (!from_added[i]) {
            v->type[i] = TT_NORMAL;
            continue;
        }
        /* an added token: CONTROL when special (added_tokens_decoder) or
         * looking special, else USER_DEFINED with pre-normalized spaces */
        bool special = false;
        for (size_t j = 0; j < json_array_size(added); j++) {
            json_t *a = json_array_get(added, j);
            int64_t id;
            mf_hf_json_int(json_object_get(a, "id"), &id);
            if ((size_t)id == i)
                special = json_is_true(json_object_get(a, "special"));
        }
        if (special || looks_special(v->text[i])) {
            v->type[i] = TT_CONTROL;
        } else {
            char *t = replace_lower_one_eighth_block(v->text[i]);
            rc = t ? set_token(v, i, t, strlen(t)) : mf_oom(v->st, v->dir);
            free(t);
            v->type[i] = TT_USER_DEFINED;
        }
    }
    free(from_added);
    return rc;
}

/* ------------------------------------------------------- SpecialVocab */

enum { MAX_TYPES = 10 };

typedef struct special_vocab {
    const char *types[MAX_TYPES];
    size_t ntypes;
    int64_t n_vocab; /* -1: no limit */
    int64_t id[MAX_TYPES];
    size_t id_order[MAX_TYPES], n_ids;
    int add[MAX_TYPES];   /* -1 unset */
    size_t add_order[MAX_TYPES], n_adds;
    json_t *chat_template; /* owned */
    json_t *merges;        /* owned: array of "a b" strings */
    json_t *scratch;       /* owned: values read_post_processor made */
    bool l2026;            /* gguf-py 0.18 */
} special_vocab;

static int set_special(special_vocab *sv, size_t t, const json_t *tid, const char *dir, mf_status *st)
{
    int64_t id;
    if (!tid || !mf_hf_json_int(tid, &id)) /* isinstance(tid, int) */
        return 0;
    if (id < 0)
        return mf_fail(st, MF_ERR_FORMAT, dir, -1, "invalid value for special token type %s: %lld",
                       sv->types[t], (long long)id);
    if (sv->n_vocab >= 0 && id >= sv->n_vocab)
        return 0; /* "out of range, must be under n_vocab - skipping" */
    for (size_t i = 0; i < sv->n_ids; i++)
        if (sv->id_order[i] == t)
            return 0; /* the first one set stays */
    sv->id[t] = id;
    sv->id_order[sv->n_ids++] = t;
    return 0;
}

/* merges: strings as they are; [a, b] pairs joined with a space, spaces
 * inside a part written as U+0120 (gguf-py's conversion of tokenizers >= 0.20). */
static int load_merges(special_vocab *sv, json_t *tj, const char *dir, mf_status *st)
{
    json_t *m = json_object_get(json_object_get(tj, "model"), "merges");
    if (!json_is_array(m) || !json_array_size(m))
        return 0;
    json_t *first = json_array_get(m, 0);
    sv->merges = json_array();
    if (json_is_string(first)) {
        json_array_extend(sv->merges, m);
        return 0;
    }
    if (!(json_is_array(first) && json_array_size(first) == 2 && json_is_string(json_array_get(first, 0))))
        return mf_fail(st, MF_ERR_FORMAT, dir, -1, "tokenizer.json: unknown merges format");
    for (size_t i = 0; i < json_array_size(m); i++) {
        json_t *pair = json_array_get(m, i);
        const char *a = json_string_value(json_array_get(pair, 0)),
                   *b = json_string_value(json_array_get(pair, 1));
        if (!json_is_array(pair) || json_array_size(pair) != 2 || !a || !b)
            return mf_fail(st, MF_ERR_FORMAT, dir, -1, "tokenizer.json: merge %zu is not a pair of strings", i);
        size_t la = strlen(a), lb = strlen(b);
        char *s = malloc(2 * (la + lb) + 2), *d = s;
        if (!s)
            return mf_oom(st, dir);
        for (const char *p = a; *p; p++)
            d = *p == ' ' ? (memcpy(d, "\xc4\xa0", 2), d + 2) : (*d = *p, d + 1);
        *d++ = ' ';
        for (const char *p = b; *p; p++)
            d = *p == ' ' ? (memcpy(d, "\xc4\xa0", 2), d + 2) : (*d = *p, d + 1);
        *d = 0;
        json_array_append_new(sv->merges, json_string(s));
        free(s);
    }
    return 0;
}

/* merges.txt: "a b" per line, an optional "#version" first line. */
static int load_merges_txt(special_vocab *sv, const char *dir, mf_status *st)
{
    char *p = mf_path_join_new(dir, "merges.txt");
    if (!p)
        return mf_oom(st, dir);
    if (!mf_path_exists(p)) {
        free(p);
        return 0;
    }
    char *text;
    size_t len;
    int rc = mf_read_small_file(p, 1u << 30, &text, &len, st);
    free(p);
    if (rc)
        return -1;
    sv->merges = json_array();
    bool first = true;
    for (char *line = text; line < text + len;) {
        char *nl = memchr(line, '\n', (size_t)(text + len - line));
        if (nl)
            *nl = 0;
        char *next = nl ? nl + 1 : text + len;
        char *save = NULL;
        char *a = strtok_r(line, " \t\r\f\v", &save);
        if (first && a && a[0] == '#') { /* the version line */
            first = false;
            line = next;
            continue;
        }
        first = false;
        char *b = a ? strtok_r(NULL, " \t\r\f\v", &save) : NULL;
        char *c = b ? strtok_r(NULL, " \t\r\f\v", &save) : NULL;
        if (a && b && !c) {
            char *m = malloc(strlen(a) + strlen(b) + 2);
            if (!m) {
                free(text);
                return mf_oom(st, dir);
            }
            sprintf(m, "%s %s", a, b);
            json_array_append_new(sv->merges, json_string(m));
            free(m);
        }
        line = next;
    }
    free(text);
    return 0;
}

/* ------------------------- gguf-py 0.18's post-processor reading (2026) */

static bool truthy(const json_t *v)
{
    switch (v ? json_typeof(v) : JSON_NULL) {
    case JSON_STRING: return json_string_length(v) > 0;
    case JSON_OBJECT: return json_object_size(v) > 0;
    case JSON_ARRAY: return json_array_size(v) > 0;
    case JSON_INTEGER: return json_integer_value(v) != 0;
    case JSON_REAL: return json_real_value(v) != 0.0;
    case JSON_TRUE: return true;
    default: return false;
    }
}

/* Python's s == v for a token name s and a tokenizer_config entry v (a
 * string, or an AddedToken dict that never equals a string). */
static bool same_token(const char *s, const json_t *v)
{
    return s && json_is_string(v) && !strcmp(s, json_string_value(v));
}

/* item.get('SpecialToken', {}).get('id') when a non-empty string */
static const char *template_special(const json_t *item)
{
    const char *id = json_string_value(json_object_get(json_object_get(item, "SpecialToken"), "id"));
    return id && *id ? id : NULL;
}

static size_t type_index(special_vocab *sv, const char *type)
{
    for (size_t t = 0; t < sv->ntypes; t++)
        if (!strcmp(sv->types[t], type))
            return t;
    if (sv->ntypes < MAX_TYPES)
        sv->types[sv->ntypes++] = type;
    return sv->ntypes - 1;
}

/* add_special_token[type] = value: a dict keeps a key's first place */
static void set_add(special_vocab *sv, const char *type, bool value)
{
    size_t t = type_index(sv, type);
    if (sv->add[t] < 0)
        sv->add_order[sv->n_adds++] = t;
    sv->add[t] = value;
}

static bool has_type(const special_vocab *sv, const char *type)
{
    for (size_t t = 0; t < sv->ntypes; t++)
        if (!strcmp(sv->types[t], type))
            return true;
    return false;
}

/* TemplateProcessing's single template: BOS/EOS added or not, a trailing
 * token other than eos_token becomes the eos (the old one eot or eom). */
static void template_single(special_vocab *sv, json_t *tc, json_t *single, const char **first,
                            const char **last, json_t **bos, json_t *cls, json_t **eos)
{
    if (json_array_size(single) <= 1)
        return;
    if ((*first = template_special(json_array_get(single, 0)))) {
        if (!truthy(tc)) {
            *bos = json_string(*first);
            json_object_set_new(sv->scratch, "bos", *bos);
        }
        set_add(sv, "bos", same_token(*first, *bos) || same_token(*first, cls));
    }
    if (!(*last = template_special(json_array_get(single, json_array_size(single) - 1))))
        return;
    if (!truthy(tc)) {
        *eos = json_string(*last);
        json_object_set_new(sv->scratch, "eos", *eos);
    } else if (!same_token(*last, *eos)) {
        const char *fallback = !has_type(sv, "eot") ? "eot" : !has_type(sv, "eom") ? "eom" : NULL;
        if (fallback) {
            type_index(sv, fallback);
            json_object_set(tc, !strcmp(fallback, "eot") ? "eot_token" : "eom_token", *eos ? *eos : json_null());
        }
        json_object_set_new(tc, "eos_token", json_string(*last));
        *eos = json_object_get(tc, "eos_token");
    }
    set_add(sv, "eos", same_token(*last, *eos));
}

/* The pair template "[first] A [sep] [eos] B [last]": whether a separator is added. */
static void template_pair(special_vocab *sv, json_t *tc, json_t *pair, const char *first, const char *last,
                          json_t *sep, json_t *eos)
{
    size_t n = json_array_size(pair), start = 0, stop = n;
    if (!n)
        return;
    if (first && (template_special(json_array_get(pair, 0)) && !strcmp(template_special(json_array_get(pair, 0)), first)))
        start = 1;
    if (last && template_special(json_array_get(pair, n - 1)) && !strcmp(template_special(json_array_get(pair, n - 1)), last))
        stop = n - 1;
    if (stop <= start)
        return;
    const char *a = json_string_value(json_object_get(json_object_get(json_array_get(pair, start), "Sequence"), "id"));
    const char *b = json_string_value(json_object_get(json_object_get(json_array_get(pair, stop - 1), "Sequence"), "id"));
    if (!a || !b || strcmp(a, "A") || strcmp(b, "B") || stop - start < 3)
        return;
    size_t mid = start + 1, n_mid = stop - start - 2;
    bool add_sep = false;
    const char *e = template_special(json_array_get(pair, mid));
    if (e && (same_token(e, sep) || same_token(e, eos)) && !last)
        add_sep = true;
    if (n_mid == 2 && (e = template_special(json_array_get(pair, mid + 1))) && (same_token(e, sep) || same_token(e, eos)))
        add_sep = true;
    set_add(sv, "sep", add_sep);
    if (add_sep && !truthy(sep) && truthy(tc))
        json_object_set(tc, "sep_token", eos ? eos : json_null());
}

/* SpecialVocab._try_load_from_tokenizer_json (gguf-py 0.18): the
 * tokenizer's post_processor (RobertaProcessing, TemplateProcessing) says
 * which special tokens are added; tc (a copy of tokenizer_config, or NULL)
 * takes the entries it implies. */
static void read_post_processor(special_vocab *sv, json_t *tj, json_t *tc)
{
    json_t *bos = json_object_get(tc, "bos_token"), *cls = json_object_get(tc, "cls_token"),
           *eos = json_object_get(tc, "eos_token"), *sep = json_object_get(tc, "sep_token");
    if (!truthy(bos) && truthy(cls) && truthy(tc)) {
        json_object_set(tc, "bos_token", cls);
        bos = cls;
    }
    if (!truthy(eos) && truthy(sep) && truthy(tc)) {
        json_object_set(tc, "eos_token", sep);
        eos = sep;
    }
    json_t *pp = json_object_get(tj, "post_processor");
    if (!truthy(pp))
        return;
    json_t *list = json_object_get(pp, "processors"), *one = json_array();
    if (!list) {
        json_array_append(one, pp);
        list = one;
    }
    for (size_t i = 0; i < json_array_size(list); i++) {
        json_t *p = json_array_get(list, i);
        const char *type = json_string_value(json_object_get(p, "type"));
        if (type && !strcmp(type, "RobertaProcessing")) {
            set_add(sv, "bos", true);
            set_add(sv, "eos", true);
            set_add(sv, "sep", true);
            if (!truthy(cls) && truthy(tc)) {
                json_t *c = json_object_get(p, "cls");
                json_object_set(tc, "cls_token", c ? json_array_get(c, 0) : bos ? bos : json_null());
                cls = json_object_get(tc, "cls_token");
            }
            if (!truthy(sep) && truthy(tc)) {
                json_t *c = json_object_get(p, "sep");
                json_object_set(tc, "sep_token", c ? json_array_get(c, 0) : eos ? eos : json_null());
                sep = json_object_get(tc, "sep_token");
            }
        } else if (type && !strcmp(type, "TemplateProcessing")) {
            const char *first = NULL, *last = NULL;
            template_single(sv, tc, json_object_get(p, "single"), &first, &last, &bos, cls, &eos);
            template_pair(sv, tc, json_object_get(p, "pair"), first, last, sep, eos);
        }
    }
    json_decref(one);
}

static const char *entry_content(json_t *e)
{
    if (json_is_string(e))
        return json_string_value(e);
    if (json_is_object(e))
        return json_string_value(json_object_get(e, "content"));
    return NULL;
}

static int special_vocab_config(special_vocab *sv, vocab *v, json_t *tcfg, json_t *added);

static int special_vocab_load(special_vocab *sv, vocab *v, bool load_merges_flag)
{
    sv->l2026 = v->o->l2026;
    const char *dir = v->dir;
    for (size_t t = 0; t < MAX_TYPES; t++)
        sv->add[t] = -1;
    json_t *added = NULL;
    if (v->tj) {
        if (load_merges_flag && load_merges(sv, v->tj, dir, v->st))
            return -1;
        added = json_object_get(v->tj, "added_tokens");
    }
    json_t *tcfg = v->tcfg;
    if (v->o->l2026 && v->tj) {
        tcfg = v->tcfg ? json_deep_copy(v->tcfg) : NULL;
        sv->scratch = json_object();
        if ((v->tcfg && !tcfg) || !sv->scratch)
            return mf_oom(v->st, dir);
        read_post_processor(sv, v->tj, tcfg);
    }
    int rc = special_vocab_config(sv, v, tcfg, added);
    if (tcfg != v->tcfg)
        json_decref(tcfg);
    if (rc)
        return -1;
    for (size_t t = 0; t < sv->ntypes; t++) {
        char key[64];
        snprintf(key, sizeof(key), "%s_token_id", sv->types[t]);
        json_t *id = json_object_get(v->cfg, key);
        if (v->o->l2026 && (!id || json_is_null(id))) /* 0.18: else text_config's (Kimi-VL) */
            id = json_object_get(json_object_get(v->cfg, "text_config"), key);
        if (set_special(sv, t, id, dir, v->st))
            return -1;
    }
    if (load_merges_flag && !sv->merges && load_merges_txt(sv, dir, v->st))
        return -1;
    return 0;
}

/* tokenizer_config.json (tcfg): the chat template, add_*_token, and the ids
 * of the *_token entries among the added tokens. */
static int special_vocab_config(special_vocab *sv, vocab *v, json_t *tcfg, json_t *added)
{
    const char *dir = v->dir;
    if (tcfg) {
        char *ctj_path = malloc(strlen(dir) + 32);
        if (!ctj_path)
            return mf_oom(v->st, dir);
        json_t *alt = NULL;
        sprintf(ctj_path, "%s/chat_template.jinja", dir);
        if (mf_path_exists(ctj_path)) {
            char *text;
            size_t len;
            if (mf_read_small_file(ctj_path, 64u << 20, &text, &len, v->st)) {
                free(ctj_path);
                return -1;
            }
            alt = json_stringn(text, len);
            free(text);
        } else {
            sprintf(ctj_path, "%s/chat_template.json", dir);
            if (mf_path_exists(ctj_path)) {
                json_t *j = mf_hf_load_json(ctj_path, v->st);
                if (!j) {
                    free(ctj_path);
                    return -1;
                }
                alt = json_incref(json_object_get(j, "chat_template"));
                json_decref(j);
            }
        }
        free(ctj_path);
        json_t *ct = json_object_get(tcfg, "chat_template");
        if (!ct)
            ct = alt;
        if (ct && (json_is_string(ct) || json_is_array(ct)))
            sv->chat_template = json_incref(ct);
        json_decref(alt);
        for (size_t t = 0; t < sv->ntypes; t++) {
            char key[64];
            snprintf(key, sizeof(key), "add_%s_token", sv->types[t]);
            json_t *a = json_object_get(tcfg, key);
            if (json_is_boolean(a))
                set_add(sv, sv->types[t], json_is_true(a));
            snprintf(key, sizeof(key), "%s_token", sv->types[t]);
            const char *content = entry_content(json_object_get(tcfg, key));
            if (!content)
                continue;
            json_t *found = NULL; /* the first added token with that content */
            for (size_t i = 0; i < json_array_size(added) && !found; i++) {
                json_t *at = json_array_get(added, i);
                const char *c = json_string_value(json_object_get(at, "content"));
                if (c && !strcmp(c, content))
                    found = json_object_get(at, "id");
            }
            if (set_special(sv, t, found, dir, v->st))
                return -1;
        }
    }
    return 0;
}

static const char *id_key(const char *type)
{
    static const struct { const char *t, *k; } keys[] = {
        {"bos", "tokenizer.ggml.bos_token_id"}, {"eos", "tokenizer.ggml.eos_token_id"},
        {"unk", "tokenizer.ggml.unknown_token_id"}, {"sep", "tokenizer.ggml.seperator_token_id"},
        {"pad", "tokenizer.ggml.padding_token_id"}, {"mask", "tokenizer.ggml.mask_token_id"},
        {"eot", "tokenizer.ggml.eot_token_id"}, {"eom", "tokenizer.ggml.eom_token_id"}, /* GGUFWriter has no add_{cls,prefix,suffix,middle,fsep}_token_id:
                                                   "No handler for special token type" */
    };
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (!strcmp(keys[i].t, type))
            return keys[i].k;
    return NULL;
}

/* GGUFWriter.add_chat_template: a string, or named templates. */
static void add_chat_template(mf_kvlist *kv, json_t *ct)
{
    if (json_is_string(ct)) {
        mf_kv_str(kv, "tokenizer.chat_template", json_string_value(ct), json_string_length(ct));
        return;
    }
    json_t *dflt = NULL, *names = json_array();
    for (size_t i = 0; i < json_array_size(ct); i++) {
        json_t *c = json_array_get(ct, i);
        const char *name = json_string_value(json_object_get(c, "name"));
        json_t *tmpl = json_object_get(c, "template");
        if (!name || !*name || !json_is_string(tmpl))
            continue;
        char clean[256];
        size_t k = 0;
        for (const char *p = name; *p && k + 1 < sizeof(clean); p++)
            clean[k++] = (char)(((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                                 (*p >= '0' && *p <= '9')) ? *p : '_');
        clean[k] = 0;
        if (!strcmp(clean, "default")) {
            dflt = tmpl;
            continue;
        }
        char key[300];
        snprintf(key, sizeof(key), "tokenizer.chat_template.%s", clean);
        mf_kv_str(kv, key, json_string_value(tmpl), json_string_length(tmpl));
        bool seen = false;
        for (size_t j = 0; j < json_array_size(names); j++)
            seen |= !strcmp(json_string_value(json_array_get(names, j)), clean);
        if (!seen)
            json_array_append_new(names, json_string(clean));
    }
    if (json_array_size(names)) {
        mf_value *a = mf_kv_arr(kv, "tokenizer.chat_templates", MF_V_STR, json_array_size(names));
        for (size_t j = 0; a && j < json_array_size(names); j++)
            mf_kv_arr_str(kv, a, j, json_string_value(json_array_get(names, j)),
                          json_string_length(json_array_get(names, j)));
    }
    json_decref(names);
    if (dflt)
        mf_kv_str(kv, "tokenizer.chat_template", json_string_value(dflt), json_string_length(dflt));
}

/* SpecialVocab.add_to_gguf */
static void special_vocab_add(special_vocab *sv, mf_kvlist *kv, bool with_template)
{
    size_t nm = json_array_size(sv->merges);
    if (nm) {
        mf_value *a = mf_kv_arr(kv, "tokenizer.ggml.merges", MF_V_STR, nm);
        for (size_t i = 0; a && i < nm; i++)
            mf_kv_arr_str(kv, a, i, json_string_value(json_array_get(sv->merges, i)),
                          json_string_length(json_array_get(sv->merges, i)));
    }
    for (size_t i = 0; i < sv->n_ids; i++) {
        size_t t = sv->id_order[i];
        const char *k = id_key(sv->types[t]);
        if (k)
            mf_kv_u32(kv, k, (uint32_t)sv->id[t]);
    }
    for (size_t i = 0; i < sv->n_adds; i++) { /* add_bos/add_eos have handlers (and add_sep in 0.18) */
        size_t t = sv->add_order[i];
        if (!strcmp(sv->types[t], "bos"))
            mf_kv_bool(kv, "tokenizer.ggml.add_bos_token", sv->add[t]);
        else if (!strcmp(sv->types[t], "eos"))
            mf_kv_bool(kv, "tokenizer.ggml.add_eos_token", sv->add[t]);
        else if (!strcmp(sv->types[t], "sep") && sv->l2026) /* add_add_sep_token: gguf-py 0.18 */
            mf_kv_bool(kv, "tokenizer.ggml.add_sep_token", sv->add[t]);
    }
    if (with_template && sv->chat_template)
        add_chat_template(kv, sv->chat_template);
}

static void special_vocab_free(special_vocab *sv)
{
    json_decref(sv->chat_template);
    json_decref(sv->merges);
    json_decref(sv->scratch);
}

static int add_special_vocab(vocab *v, int64_t n_vocab, bool merges)
{
    special_vocab sv = {.types = {"bos", "eos", "unk", "sep", "pad", "cls", "mask"}, .ntypes = 7,
                        .n_vocab = n_vocab};
    int rc = special_vocab_load(&sv, v, merges);
    if (rc == 0)
        special_vocab_add(&sv, v->kv, true);
    special_vocab_free(&sv);
    return rc;
}

/* ---------------------------------------------------------------- keys */

static void add_token_arrays(vocab *v, bool scores)
{
    mf_value *t = mf_kv_arr(v->kv, "tokenizer.ggml.tokens", MF_V_STR, v->n);
    for (size_t i = 0; t && i < v->n; i++)
        mf_kv_arr_str(v->kv, t, i, v->text[i], v->len[i]);
    if (scores) {
        mf_value *s = mf_kv_arr(v->kv, "tokenizer.ggml.scores", MF_V_F32, v->n);
        for (size_t i = 0; s && i < v->n; i++)
            s->as.arr.items[i].as.f = v->score[i];
    }
    mf_value *ty = mf_kv_arr(v->kv, "tokenizer.ggml.token_type", MF_V_I32, v->n);
    for (size_t i = 0; ty && i < v->n; i++)
        ty->as.arr.items[i].as.i = v->type[i];
}

/* _create_vocab_sentencepiece and the keys every SentencePiece set_vocab writes first */
static int sentencepiece_arrays(vocab *v)
{
    if (sentencepiece_tokens(v) || sentencepiece_added(v))
        return -1;
    mf_kv_str(v->kv, "tokenizer.ggml.model", "llama", 5);
    mf_kv_str(v->kv, "tokenizer.ggml.pre", "default", 7);
    add_token_arrays(v, true);
    return 0;
}

static int set_vocab_sentencepiece(vocab *v)
{
    if (sentencepiece_arrays(v))
        return -1;
    return add_special_vocab(v, (int64_t)v->n, false);
}

/* The id of the added token with this content (get_added_vocab()), or NULL. */
static json_t *added_id(const vocab *v, const char *content)
{
    json_t *added = json_object_get(v->tj, "added_tokens");
    for (size_t i = 0; i < json_array_size(added); i++) {
        const char *c = json_string_value(json_object_get(json_array_get(added, i), "content"));
        if (c && !strcmp(c, content))
            return json_object_get(json_array_get(added, i), "id");
    }
    return NULL;
}

/* GLM's _set_vocab_glm: BPE, then bos [gMASK], eot <|user|>, unk
 * <|endoftext|>, eom <|observation|> (each unless already set) */
static int glm_special_vocab(vocab *v)
{
    static const char *const ids[][2] = {
        {"bos", "[gMASK]"}, {"eot", "<|user|>"}, {"unk", "<|endoftext|>"}, {"eom", "<|observation|>"},
    };
    special_vocab sv = {.types = {"bos", "eos", "unk", "sep", "pad", "cls", "mask"}, .ntypes = 7, .n_vocab = -1};
    int rc = special_vocab_load(&sv, v, true);
    for (size_t i = 0; rc == 0 && i < sizeof(ids) / sizeof(ids[0]); i++) {
        json_t *id = added_id(v, ids[i][1]);
        if (!id) /* tokenizer.get_added_vocab()[...]: a KeyError */
            rc = mf_fail(v->st, MF_ERR_FORMAT, v->dir, -1, "tokenizer.json: GLM's added token %s is missing", ids[i][1]);
        else
            rc = set_special(&sv, type_index(&sv, ids[i][0]), id, v->dir, v->st);
    }
    if (rc == 0)
        special_vocab_add(&sv, v->kv, true);
    special_vocab_free(&sv);
    return rc;
}

/* Rwkv6Model.set_vocab: <s> (CONTROL), then the world vocabulary's tokens
 * as repr(bytes)[2:-1] (NORMAL), [PAD{i}] (UNUSED) up to vocab_size
 * (default 65536); model "rwkv"; SpecialVocab without merges, eot 261
 * ("\n\n", the converter's hack) and the template name "rwkv-world". */
static int set_vocab_rwkv(vocab *v)
{
    char *path = path_in(v, "rwkv_vocab_v20230424.txt");
    mf_file f = {0};
    mf_rwkv_token *tok = NULL;
    size_t nt = 0;
    int rc = !path ? mf_oom(v->st, v->dir)
             : !mf_path_exists(path) ? mf_fail(v->st, MF_ERR_FORMAT, path, -1, "missing: the RWKV world vocabulary")
             : mf_map_file(path, &f, v->st);
    if (rc == 0)
        rc = mf_rwkv_read_vocab(path, f.base, (size_t)f.size, &tok, &nt, v->st);
    int64_t total = v->vocab_size >= 0 ? v->vocab_size : 65536;
    if (rc == 0 && total < (int64_t)nt + 1)
        rc = mf_fail(v->st, MF_ERR_FORMAT, v->dir, -1, "config.json vocab_size %lld is below the %zu tokens of %s",
                     (long long)total, nt + 1, path);
    if (rc == 0)
        rc = alloc_tokens(v, (size_t)total);
    char *text = rc == 0 ? malloc(4 * 1024 + 32) : NULL;
    size_t text_cap = 4 * 1024;
    if (rc == 0 && !text)
        rc = mf_oom(v->st, v->dir);
    for (size_t i = 0; rc == 0 && i < (size_t)total; i++) {
        if (i == 0) {
            rc = set_token(v, 0, "<s>", 3);
            v->type[0] = TT_CONTROL;
            continue;
        }
        if (i > nt) {
            int k = snprintf(text, text_cap, "[PAD%zu]", i);
            rc = set_token(v, i, text, (size_t)k);
            v->type[i] = TT_UNUSED;
            continue;
        }
        const mf_rwkv_token *t = &tok[i - 1];
        if (4 * t->n + 1 > text_cap) {
            char *g = realloc(text, 4 * t->n + 32);
            if (!g) {
                rc = mf_oom(v->st, v->dir);
                break;
            }
            text = g;
            text_cap = 4 * t->n + 1;
        }
        size_t k = mf_rwkv_repr(t->bytes, t->n, text);
        rc = set_token(v, i, text, k);
        v->type[i] = TT_NORMAL;
    }
    free(text);
    mf_rwkv_free(tok, nt);
    mf_unmap_file(&f);
    free(path);
    if (rc)
        return -1;
    mf_kv_str(v->kv, "tokenizer.ggml.model", "rwkv", 4);
    add_token_arrays(v, false);
    special_vocab sv = {.types = {"bos", "eos", "unk", "sep", "pad", "cls", "mask"}, .ntypes = 7, .n_vocab = -1};
    rc = special_vocab_load(&sv, v, false);
    if (rc == 0) {
        json_decref(sv.chat_template);
        sv.chat_template = json_string("rwkv-world");
        json_t *eot = json_integer(261);
        rc = sv.chat_template && eot ? set_special(&sv, type_index(&sv, "eot"), eot, v->dir, v->st)
                                     : mf_oom(v->st, v->dir);
        json_decref(eot);
    }
    if (rc == 0)
        special_vocab_add(&sv, v->kv, true);
    special_vocab_free(&sv);
    return rc;
}

static int set_vocab_gpt2(vocab *v)
{
    if (!v->tj)
        return mf_fail(v->st, MF_ERR_UNSUPPORTED, v->dir, -1,
                       "no tokenizer.model and no tokenizer.json: mfmt converts SentencePiece "
                       "and tokenizer.json BPE tokenizers");
    const char *pre = pre_tokenizer_name(v);
    if (!pre || bpe_tokens(v))
        return -1;
    mf_kv_str(v->kv, "tokenizer.ggml.model", "gpt2", 4);
    mf_kv_str(v->kv, "tokenizer.ggml.pre", pre, strlen(pre));
    add_token_arrays(v, false);
    return v->o->kind == V_GLM ? glm_special_vocab(v) : add_special_vocab(v, -1, true);
}

/* Is content among the added entries (objects with "content")? */
static bool added_has(const json_t *all, const char *content)
{
    for (size_t i = 0; i < json_array_size(all); i++)
        if (!strcmp(json_string_value(json_object_get(json_array_get(all, i), "content")), content))
            return true;
    return false;
}

static void added_push(json_t *all, int64_t id, const char *content, bool special)
{
    json_t *e = json_object();
    json_object_set_new(e, "id", json_integer(id));
    json_object_set_new(e, "content", json_string(content));
    json_object_set_new(e, "special", json_boolean(special));
    json_array_append_new(all, e);
}

/* The added tokens transformers' fast tokenizer reports (get_added_vocab,
 * added_tokens_decoder): tokenizer.json's added_tokens, then
 * tokenizer_config.json's added_tokens_decoder entries not yet there, then
 * the special tokens tokenizer_config.json names (bos ... mask,
 * additional_special_tokens) not yet there, special, at their vocabulary id
 * or else the next free one. max_id grows with them. A new array or NULL. */
static json_t *fast_added_tokens(vocab *v, const json_t *vocab_obj, int64_t *max_id)
{
    json_t *all = json_array(), *added = json_object_get(v->tj, "added_tokens");
    int64_t id;
    for (size_t i = 0; i < json_array_size(added); i++) {
        json_t *a = json_array_get(added, i), *c = json_object_get(a, "content");
        if (!mf_hf_json_int(json_object_get(a, "id"), &id) || id < 0 || !json_is_string(c)) {
            json_decref(all);
            mf_fail(v->st, MF_ERR_FORMAT, v->dir, -1, "tokenizer.json: added_tokens[%zu] is malformed", i);
            return NULL;
        }
        added_push(all, id, json_string_value(c), json_is_true(json_object_get(a, "special")));
    }
    const char *k;
    json_t *e;
    json_object_foreach(json_object_get(v->tcfg, "added_tokens_decoder"), k, e) {
        const char *c = entry_content(e);
        if (c && parse_id(k, &id) && id >= 0 && !added_has(all, c))
            added_push(all, id, c, json_is_true(json_object_get(e, "special")));
    }
    for (size_t i = 0; i < json_array_size(all); i++) {
        mf_hf_json_int(json_object_get(json_array_get(all, i), "id"), &id);
        *max_id = id > *max_id ? id : *max_id;
    }
    static const char *const named[] = {"bos_token", "eos_token", "unk_token", "sep_token", "pad_token",
                                        "cls_token", "mask_token"};
    json_t *extra = json_object_get(v->tcfg, "additional_special_tokens");
    for (size_t i = 0; i < 7 + json_array_size(extra); i++) {
        const char *c = entry_content(i < 7 ? json_object_get(v->tcfg, named[i]) : json_array_get(extra, i - 7));
        if (!c || added_has(all, c))
            continue;
        if (!mf_hf_json_int(json_object_get(vocab_obj, c), &id))
            id = ++*max_id;
        added_push(all, id, c, true);
    }
    return all;
}

/* The model vocabulary's ids checked (*max_id: the largest), then the
 * fast tokenizer's added tokens (fast_added_tokens); NULL on error. */
static json_t *vocab_and_added(vocab *v, const json_t *vocab_obj, int64_t *max_id)
{
    const char *k;
    json_t *x;
    int64_t id;
    json_object_foreach((json_t *)vocab_obj, k, x) {
        if (!mf_hf_json_int(x, &id) || id < 0) {
            mf_fail(v->st, MF_ERR_FORMAT, v->dir, -1, "tokenizer.json: vocab \"%s\" has no valid id", k);
            return NULL;
        }
        *max_id = id > *max_id ? id : *max_id;
    }
    return fast_added_tokens(v, vocab_obj, max_id);
}

/* XverseModel.set_vocab: AutoTokenizer's vocab (tokenizer.json's model
 * vocabulary, the added tokens over it) read by id up to vocab_size;
 * "\x00" and <0xNN> pieces BYTE (the first written "<b'\\x00'>", Python's
 * f"<{bytes}>"), added tokens CONTROL when special else USER_DEFINED, the
 * rest NORMAL; no scores, no merges; tokenizer model "llama", pre "default". */
static int set_vocab_xverse(vocab *v)
{
    json_t *model = json_object_get(v->tj, "model"), *vocab_obj = json_object_get(model, "vocab");
    if (!v->tj || !json_is_object(vocab_obj))
        return mf_fail(v->st, MF_ERR_UNSUPPORTED, v->dir, -1, "XVERSE: tokenizer.json with a model vocabulary "
                       "is required (the converter asserts it)");
    int64_t n = v->vocab_size, max_id = -1, id;
    const char *k;
    json_t *x, *added = vocab_and_added(v, vocab_obj, &max_id);
    if (!added)
        return -1;
    if (n < 0) /* len(tokenizer.vocab) */
        n = max_id + 1;
    int rc = max_id >= n ? mf_fail(v->st, MF_ERR_FORMAT, v->dir, -1, "Vocabulary size exceeds expected maximum size.")
                         : alloc_tokens(v, (size_t)n);
    json_object_foreach(vocab_obj, k, x) {
        mf_hf_json_int(x, &id);
        if (rc == 0)
            rc = set_token(v, (size_t)id, k, strlen(k));
        if (rc == 0)
            v->type[id] = TT_NORMAL;
    }
    for (size_t i = 0; rc == 0 && i < json_array_size(added); i++) {
        json_t *a = json_array_get(added, i), *c = json_object_get(a, "content");
        int64_t vid;
        mf_hf_json_int(json_object_get(a, "id"), &id);
        /* the dict keeps one id per content: a vocabulary id under the
         * same content is gone (the converter's reverse lookup then fails) */
        if (mf_hf_json_int(json_object_get(vocab_obj, json_string_value(c)), &vid) && vid != id && v->text[vid]) {
            free(v->text[vid]);
            v->text[vid] = NULL;
        }
        rc = set_token(v, (size_t)id, json_string_value(c), json_string_length(c));
        v->type[id] = json_is_true(json_object_get(a, "special")) ? TT_CONTROL : TT_USER_DEFINED;
    }
    json_decref(added);
    for (size_t i = 0; rc == 0 && i < v->n; i++) {
        if (!v->text[i])
            return mf_fail(v->st, MF_ERR_FORMAT, v->dir, -1, "tokenizer.json has no token of id %zu (below "
                           "vocab_size %lld: the converter's lookup fails)", i, (long long)n);
        const char *t = v->text[i];
        bool hex = v->len[i] == 6 && !strncmp(t, "<0x", 3) && t[5] == '>' && isxdigit((unsigned char)t[3]) &&
                   isxdigit((unsigned char)t[4]);
        if (v->len[i] == 1 && t[0] == 0) {
            rc = set_token(v, i, "<b'\\x00'>", 9);
            v->type[i] = TT_BYTE;
        } else if (hex) {
            v->type[i] = TT_BYTE;
        }
    }
    if (rc)
        return rc;
    mf_kv_str(v->kv, "tokenizer.ggml.model", "llama", 5);
    mf_kv_str(v->kv, "tokenizer.ggml.pre", "default", 7);
    add_token_arrays(v, false);
    return add_special_vocab(v, (int64_t)v->n, false);
}

/* gguf.LlamaHfVocab refuses Llama-3-style tokenizers (TypeError) and
 * non-Llama ones (FileNotFoundError): both go on to the BPE path. */
static bool is_llama_hf_tokenizer(const json_t *tj)
{
    json_t *m = json_object_get(tj, "model");
    const char *type = json_string_value(json_object_get(m, "type"));
    json_t *im = json_object_get(m, "ignore_merges"), *bf = json_object_get(m, "byte_fallback");
    bool byte_fallback = bf ? json_is_true(bf) : false;
    bool is_llama3 = type && !strcmp(type, "BPE") && json_is_true(im) && !(bf ? json_is_true(bf) : true);
    if (is_llama3)
        return false;
    const char *dec = json_string_value(json_object_get(json_object_get(tj, "decoder"), "type"));
    return type && !strcmp(type, "BPE") && byte_fallback && dec && !strcmp(dec, "Sequence");
}

/* An id of the fast tokenizer's get_vocab(): the added token of that
 * content, else the model vocabulary's; -1 when neither has it. */
static int64_t fast_vocab_id(const json_t *vocab_obj, const json_t *added, const char *content)
{
    int64_t id = -1;
    for (size_t i = 0; i < json_array_size(added); i++) {
        json_t *a = json_array_get(added, i);
        if (!strcmp(json_string_value(json_object_get(a, "content")), content))
            mf_hf_json_int(json_object_get(a, "id"), &id); /* the dict keeps the last */
    }
    if (id < 0 && !mf_hf_json_int(json_object_get(vocab_obj, content), &id))
        id = -1;
    return id;
}

/* transformers' all_special_tokens: tokenizer_config.json's bos, eos, unk,
 * sep, pad, cls and mask tokens that are set, then additional_special_tokens
 * (SpecialTokensMixin); is content one of them? */
static bool is_named_special(const vocab *v, const char *content)
{
    static const char *const named[] = {"bos_token", "eos_token", "unk_token", "sep_token", "pad_token",
                                        "cls_token", "mask_token"};
    json_t *extra = json_object_get(v->tcfg, "additional_special_tokens");
    for (size_t i = 0; i < 7 + json_array_size(extra); i++) {
        const char *c = entry_content(i < 7 ? json_object_get(v->tcfg, named[i]) : json_array_get(extra, i - 7));
        if (c && !strcmp(c, content))
            return true;
    }
    return false;
}

/* Is id the id of a special token (all_special_ids)? */
static bool is_special_id(const vocab *v, const json_t *vocab_obj, const json_t *added, int64_t id)
{
    static const char *const named[] = {"bos_token", "eos_token", "unk_token", "sep_token", "pad_token",
                                        "cls_token", "mask_token"};
    json_t *extra = json_object_get(v->tcfg, "additional_special_tokens");
    for (size_t i = 0; i < 7 + json_array_size(extra); i++) {
        const char *c = entry_content(i < 7 ? json_object_get(v->tcfg, named[i]) : json_array_get(extra, i - 7));
        if (c && fast_vocab_id(vocab_obj, added, c) == id)
            return true;
    }
    return false;
}

typedef struct id_at {
    int64_t id;
    size_t at;
} id_at;

static int id_at_cmp(const void *a, const void *b)
{
    const id_at *x = a, *y = b;
    return x->id != y->id ? (x->id < y->id ? -1 : 1) : (x->at > y->at) - (x->at < y->at);
}

static bool is_byte_piece(const char *t, size_t n)
{
    return n == 6 && !strncmp(t, "<0x", 3) && t[5] == '>' && isxdigit((unsigned char)t[3]) &&
           isxdigit((unsigned char)t[4]);
}

/* gguf-py's LlamaHfVocab (Model._set_vocab_llama_hf): the fast tokenizer's
 * ids 0 .. vocab_size - 1 (vocab_size = the model vocabulary's count; each
 * text from get_vocab(), an added token over a piece of its id), then the
 * added tokens of id >= that count in id order; every score -1000; <0xNN>
 * BYTE, a special token's id CONTROL, other pieces NORMAL, other added
 * tokens USER_DEFINED; no padding to config.json's vocab_size; model
 * "llama", pre "default"; SpecialVocab without merges. */
static int set_vocab_llama_hf(vocab *v)
{
    json_t *vocab_obj = json_object_get(json_object_get(v->tj, "model"), "vocab");
    if (!v->tj || !is_llama_hf_tokenizer(v->tj) || !json_is_object(vocab_obj))
        return mf_fail(v->st, MF_ERR_UNSUPPORTED, v->dir, -1, "no Llama-2-style tokenizer.json (BPE with "
                       "byte_fallback, a Sequence decoder), which LlamaHfVocab requires");
    size_t base = json_object_size(vocab_obj);
    int64_t max_id = -1, id;
    const char *k;
    json_t *x, *added = vocab_and_added(v, vocab_obj, &max_id);
    if (!added)
        return -1;
    /* the added tokens past the model vocabulary, by id (get_added_vocab() sorted) */
    size_t n_extra = 0;
    for (size_t i = 0; i < json_array_size(added); i++) {
        mf_hf_json_int(json_object_get(json_array_get(added, i), "id"), &id);
        n_extra += (uint64_t)id >= base;
    }
    int rc = alloc_tokens(v, base + n_extra);
    json_object_foreach(vocab_obj, k, x) {
        mf_hf_json_int(x, &id);
        if (rc == 0 && (uint64_t)id < base && fast_vocab_id(vocab_obj, added, k) == id)
            rc = set_token(v, (size_t)id, k, strlen(k));
    }
    for (size_t i = 0; rc == 0 && i < json_array_size(added); i++) {
        json_t *c = json_object_get(json_array_get(added, i), "content");
        mf_hf_json_int(json_object_get(json_array_get(added, i), "id"), &id);
        if ((uint64_t)id < base && fast_vocab_id(vocab_obj, added, json_string_value(c)) == id)
            rc = set_token(v, (size_t)id, json_string_value(c), json_string_length(c));
    }
    for (size_t i = 0; rc == 0 && i < base; i++) {
        if (!v->text[i])
            rc = mf_fail(v->st, MF_ERR_FORMAT, v->dir, -1, "tokenizer.json has no token of id %zu (below its "
                         "vocabulary's %zu entries: LlamaHfVocab's lookup fails)", i, base);
        else
            v->type[i] = is_byte_piece(v->text[i], v->len[i]) ? TT_BYTE
                         : is_special_id(v, vocab_obj, added, (int64_t)i) ? TT_CONTROL : TT_NORMAL;
        v->score[i] = -1000.0f;
    }
    /* then the later ids in order; equal ids keep their file order, as sorted() does */
    id_at *later = rc == 0 ? calloc(n_extra ? n_extra : 1, sizeof(*later)) : NULL;
    if (rc == 0 && !later)
        rc = mf_oom(v->st, v->dir);
    size_t m = 0;
    for (size_t i = 0; rc == 0 && i < json_array_size(added); i++) {
        mf_hf_json_int(json_object_get(json_array_get(added, i), "id"), &id);
        if ((uint64_t)id >= base)
            later[m++] = (id_at){id, i};
    }
    if (rc == 0)
        qsort(later, m, sizeof(*later), id_at_cmp);
    for (size_t j = 0; rc == 0 && j < m; j++) {
        json_t *c = json_object_get(json_array_get(added, later[j].at), "content");
        rc = set_token(v, base + j, json_string_value(c), json_string_length(c));
        v->score[base + j] = -1000.0f;
        v->type[base + j] = is_named_special(v, json_string_value(c)) ? TT_CONTROL : TT_USER_DEFINED;
    }
    free(later);
    json_decref(added);
    if (rc)
        return rc;
    mf_kv_str(v->kv, "tokenizer.ggml.model", "llama", 5);
    mf_kv_str(v->kv, "tokenizer.ggml.pre", "default", 7);
    add_token_arrays(v, true);
    return add_special_vocab(v, (int64_t)v->n, false);
}

/* ------------------------------------------------ per-class variants */

/* An added token over the SentencePiece list (Phi3MiniModel, InternLM2Model):
 * USER_DEFINED, CONTROL when marked special; score -1000. */
static int put_added(vocab *v, json_t *entry, int64_t id, const char *what)
{
    const char *content = json_string_value(json_object_get(entry, "content"));
    if (!content || id < 0 || (uint64_t)id >= v->n)
        return mf_fail(v->st, MF_ERR_FORMAT, v->dir, -1, "%s: added token %lld is malformed or past the "
                       "vocabulary (%zu)", what, (long long)id, v->n);
    if (set_token(v, (size_t)id, content, strlen(content)))
        return -1;
    v->score[id] = -1000.0f;
    v->type[id] = json_is_true(json_object_get(entry, "special")) ? TT_CONTROL : TT_USER_DEFINED;
    return 0;
}

/* added_tokens_decoder of tokenizer_config.json, then tokenizer.json's
 * added_tokens; *eos_id: the id of chat_eos when one has that content. */
static int added_over_spm(vocab *v, const char *chat_eos, int64_t *eos_id)
{
    const char *k;
    json_t *x;
    json_object_foreach(json_object_get(v->tcfg, "added_tokens_decoder"), k, x) {
        int64_t id;
        if (!parse_id(k, &id))
            return mf_fail(v->st, MF_ERR_FORMAT, v->dir, -1, "tokenizer_config.json: added_tokens_decoder key \"%s\"", k);
        const char *content = json_string_value(json_object_get(x, "content"));
        if (chat_eos && content && !strcmp(content, chat_eos))
            *eos_id = id;
        if (put_added(v, x, id, "tokenizer_config.json"))
            return -1;
    }
    json_t *added = json_object_get(v->tj, "added_tokens");
    for (size_t i = 0; i < json_array_size(added); i++) {
        json_t *e = json_array_get(added, i);
        int64_t id;
        if (!mf_hf_json_int(json_object_get(e, "id"), &id))
            return mf_fail(v->st, MF_ERR_FORMAT, v->dir, -1, "tokenizer.json: added_tokens[%zu] has no id", i);
        const char *content = json_string_value(json_object_get(e, "content"));
        if (chat_eos && content && !strcmp(content, chat_eos))
            *eos_id = id;
        if (put_added(v, e, id, "tokenizer.json"))
            return -1;
    }
    return 0;
}

/* Phi3MiniModel.set_vocab: padded SentencePiece list, then added tokens. */
static int set_vocab_phi3(vocab *v)
{
    const char *cls = json_string_value(json_object_get(v->tcfg, "tokenizer_class"));
    if (cls && !strcmp(cls, "GPT2Tokenizer"))
        return set_vocab_gpt2(v);
    if (!file_in(v, "tokenizer.model"))
        return mf_fail(v->st, MF_ERR_FORMAT, v->dir, -1, "missing tokenizer.model");
    int64_t unused = 0;
    if (sentencepiece_tokens(v) || added_tokens_json_over(v) || added_over_spm(v, NULL, &unused))
        return -1;
    mf_kv_str(v->kv, "tokenizer.ggml.model", "llama", 5);
    mf_kv_str(v->kv, "tokenizer.ggml.pre", "default", 7);
    add_token_arrays(v, true);
    return add_special_vocab(v, (int64_t)v->n, false);
}

static int grow_tokens(vocab *v, size_t n)
{
    char **t = realloc(v->text, n * sizeof(char *));
    if (t)
        v->text = t;
    size_t *l = realloc(v->len, n * sizeof(size_t));
    if (l)
        v->len = l;
    float *sc = realloc(v->score, n * sizeof(float));
    if (sc)
        v->score = sc;
    int32_t *ty = realloc(v->type, n * sizeof(int32_t));
    if (ty)
        v->type = ty;
    if (!t || !l || !sc || !ty)
        return mf_oom(v->st, v->dir);
    for (size_t i = v->n; i < n; i++)
        v->text[i] = NULL;
    v->n = n;
    return 0;
}

/* InternLM2Model.set_vocab */
static int set_vocab_internlm2(vocab *v)
{
    char *path = path_in(v, "tokenizer.model");
    char *buf = NULL;
    size_t blen;
    mf_spm spm = {0};
    int rc = path ? 0 : mf_oom(v->st, v->dir);
    if (rc == 0 && !mf_path_exists(path))
        rc = mf_fail(v->st, MF_ERR_FORMAT, path, -1, "missing tokenizer.model");
    if (rc == 0)
        rc = mf_read_small_file(path, 1u << 30, &buf, &blen, v->st);
    if (rc == 0)
        rc = mf_spm_parse((const uint8_t *)buf, blen, path, &spm, v->st);
    int64_t n = v->vocab_size >= 0 ? v->vocab_size : (int64_t)spm.n;
    if (rc == 0 && (n < 0 || (uint64_t)n > spm.n)) /* IdToPiece past the model fails */
        rc = mf_fail(v->st, MF_ERR_FORMAT, path, -1, "config.json vocab_size %lld but %zu pieces",
                     (long long)n, spm.n);
    if (rc == 0)
        rc = alloc_tokens(v, (size_t)n);
    for (size_t i = 0; rc == 0 && i < v->n; i++) {
        const mf_spm_piece *p = &spm.pieces[i];
        if (p->len == 1 && p->text[0] == 0) /* "\x00" becomes the dragon emoji */
            rc = set_token(v, i, "\xf0\x9f\x90\x89", 4);
        else
            rc = set_token(v, i, p->text, p->len);
        v->score[i] = p->score;
        v->type[i] = p->type == MF_SPM_UNKNOWN ? TT_UNKNOWN : p->type == MF_SPM_CONTROL ? TT_CONTROL
                   : p->type == MF_SPM_UNUSED ? TT_UNUSED : p->type == MF_SPM_BYTE ? TT_BYTE : TT_NORMAL;
        if (p->len >= 7 && !memcmp(p->text, "[UNUSED", 7))
            v->type[i] = TT_UNUSED;
    }
    bool add_prefix = spm.add_dummy_prefix;
    mf_spm_free(&spm);
    free(buf);
    free(path);
    if (rc)
        return -1;
    bool failed = false;
    json_t *added = json_in(v, "added_tokens.json", v->st, &failed);
    if (failed)
        return -1;
    const char *k;
    json_t *x;
    json_object_foreach(added, k, x) { /* appended */
        if (rc == 0 && (rc = grow_tokens(v, v->n + 1)) == 0 && (rc = set_token(v, v->n - 1, k, strlen(k))) == 0) {
            v->score[v->n - 1] = -1000.0f;
            v->type[v->n - 1] = TT_USER_DEFINED;
        }
    }
    json_decref(added);
    int64_t eos = -1;
    if (rc || added_over_spm(v, "<|im_end|>", &eos))
        return -1;
    mf_kv_str(v->kv, "tokenizer.ggml.model", "llama", 5);
    mf_kv_str(v->kv, "tokenizer.ggml.pre", "default", 7);
    add_token_arrays(v, true);
    mf_kv_bool(v->kv, "tokenizer.ggml.add_space_prefix", add_prefix);
    special_vocab sv = {.types = {"bos", "eos", "unk", "sep", "pad", "cls", "mask"}, .ntypes = 7,
                        .n_vocab = (int64_t)v->n};
    rc = special_vocab_load(&sv, v, false);
    if (rc == 0 && eos >= 0) { /* "Replace eos ... in chat mode" */
        bool set = false;
        for (size_t i = 0; i < sv.n_ids; i++)
            set |= sv.id_order[i] == 1;
        if (!set)
            sv.id_order[sv.n_ids++] = 1;
        sv.id[1] = eos;
    }
    if (rc == 0)
        special_vocab_add(&sv, v->kv, true);
    special_vocab_free(&sv);
    return rc;
}

/* BertModel.set_vocab: WordPiece with phantom spaces. */
static int set_vocab_bert(vocab *v)
{
    if (!v->tj)
        return mf_fail(v->st, MF_ERR_UNSUPPORTED, v->dir, -1, "no tokenizer.json: mfmt converts WordPiece "
                       "vocabularies from tokenizer.json");
    const char *pre = pre_tokenizer_name(v);
    v->wordpiece = true;
    if (!pre || bpe_tokens(v))
        return -1;
    int64_t types = 1;
    json_t *tv = json_object_get(v->cfg, "type_vocab_size");
    if (tv && !mf_hf_json_int(tv, &types))
        return mf_fail(v->st, MF_ERR_FORMAT, v->dir, -1, "config.json type_vocab_size is not an integer");
    if (types < 0 || types > UINT32_MAX)
        return mf_fail(v->st, MF_ERR_FORMAT, v->dir, -1, "config.json type_vocab_size is out of range");
    mf_kv_u32(v->kv, "tokenizer.ggml.token_type_count", (uint32_t)types);
    for (size_t i = 0; i < v->n; i++) {
        const char *t = v->text[i];
        size_t n = v->len[i];
        if (n >= 2 && t[0] == '[' && t[n - 1] == ']')
            continue;
        char *p = malloc(n + 4);
        if (!p)
            return mf_oom(v->st, v->dir);
        size_t k;
        if (n >= 2 && t[0] == '#' && t[1] == '#') {
            memcpy(p, t + 2, n - 2);
            k = n - 2;
        } else {
            memcpy(p, "\xe2\x96\x81", 3);
            memcpy(p + 3, t, n);
            k = n + 3;
        }
        int rc = set_token(v, i, p, k);
        free(p);
        if (rc)
            return -1;
    }
    mf_kv_str(v->kv, "tokenizer.ggml.model", "bert", 4);
    mf_kv_str(v->kv, "tokenizer.ggml.pre", pre, strlen(pre));
    add_token_arrays(v, false);
    return add_special_vocab(v, (int64_t)v->n, false);
}

/* The add_bos / add_eos a set_vocab writes itself, after SpecialVocab's keys. */
static void add_bos_eos(vocab *v, bool bos, bool eos)
{
    mf_kv_bool(v->kv, "tokenizer.ggml.add_bos_token", bos);
    mf_kv_bool(v->kv, "tokenizer.ggml.add_eos_token", eos);
}

static int type_vocab_count(vocab *v)
{
    int64_t types = 1;
    json_t *tv = json_object_get(v->cfg, "type_vocab_size");
    if (tv && !mf_hf_json_int(tv, &types))
        return mf_fail(v->st, MF_ERR_FORMAT, v->dir, -1, "config.json type_vocab_size is not an integer");
    if (types < 0 || types > UINT32_MAX)
        return mf_fail(v->st, MF_ERR_FORMAT, v->dir, -1, "config.json type_vocab_size is out of range");
    mf_kv_u32(v->kv, "tokenizer.ggml.token_type_count", (uint32_t)types);
    return 0;
}

/* RobertaModel.set_vocab: tokenizer.json's byte-level BPE with add_bos and
 * add_eos, else BERT's WordPiece */
static int set_vocab_roberta(vocab *v)
{
    if (!v->tj)
        return set_vocab_bert(v);
    if (set_vocab_gpt2(v))
        return -1;
    add_bos_eos(v, true, true);
    return type_vocab_count(v);
}

/* The keys of a SentencePiece Unigram vocabulary as llama.cpp's "t5"
 * tokenizer reads them (XLMRobertaModel, T5Model). */
static int unigram_keys(vocab *v, const spm_facts *f, bool token_types)
{
    if (f->model_type != MF_SPM_UNIGRAM)
        return mf_fail(v->st, MF_ERR_UNSUPPORTED, v->dir, -1, "a SentencePiece %s model where the converter "
                       "asserts a Unigram one", mf_spm_model_name(f->model_type));
    mf_kv_str(v->kv, "tokenizer.ggml.model", "t5", 2);
    mf_kv_str(v->kv, "tokenizer.ggml.pre", "default", 7);
    add_token_arrays(v, true);
    mf_kv_bool(v->kv, "tokenizer.ggml.add_space_prefix", f->add_dummy_prefix);
    if (token_types && type_vocab_count(v))
        return -1;
    mf_kv_bool(v->kv, "tokenizer.ggml.remove_extra_whitespaces", f->remove_extra_whitespaces);
    if (f->charsmap_len) {
        mf_value *a = mf_kv_arr(v->kv, "tokenizer.ggml.precompiled_charsmap", MF_V_U8, f->charsmap_len);
        for (size_t i = 0; a && i < f->charsmap_len; i++)
            a->as.arr.items[i].as.u = f->charsmap[i];
    }
    return 0;
}

/* XLMRobertaModel.set_vocab: sentencepiece.bpe.model, then the fairseq
 * layout (<s> <pad> </s> <unk> first: every other piece one id later, the
 * last one dropped) */
static int set_vocab_xlmr(vocab *v)
{
    spm_facts f = {0};
    int rc = sentencepiece_tokens_of(v, "sentencepiece.bpe.model", &f);
    if (rc == 0 && v->n < 4)
        rc = mf_fail(v->st, MF_ERR_FORMAT, v->dir, -1, "sentencepiece.bpe.model: fewer than 4 ids");
    for (size_t i = v->n - 1; rc == 0 && i >= 4; i--) { /* new[i] = old[i - 1] */
        rc = set_token(v, i, v->text[i - 1], v->len[i - 1]);
        v->score[i] = v->score[i - 1];
        v->type[i] = v->type[i - 1];
    }
    static const char *const first[] = {"<s>", "<pad>", "</s>", "<unk>"};
    for (size_t i = 0; rc == 0 && i < 4; i++) {
        rc = set_token(v, i, first[i], strlen(first[i]));
        v->score[i] = 0.0f;
        v->type[i] = i < 3 ? TT_CONTROL : TT_UNKNOWN;
    }
    if (rc == 0)
        rc = unigram_keys(v, &f, true);
    if (rc == 0)
        rc = add_special_vocab(v, (int64_t)v->n, false);
    if (rc == 0)
        add_bos_eos(v, true, true);
    free(f.charsmap);
    return rc;
}

/* T5Model.set_vocab: tokenizer.model or spiece.model; a BPE model goes the
 * SentencePiece way, a Unigram one with added_tokens.json over it */
static int set_vocab_t5(vocab *v)
{
    const char *file = file_in(v, "tokenizer.model") ? "tokenizer.model" : "spiece.model";
    spm_facts f = {0};
    int rc = sentencepiece_tokens_of(v, file, &f);
    if (rc == 0 && f.model_type == MF_SPM_BPE) {
        free(f.charsmap);
        free_tokens(v);
        if (strcmp(file, "tokenizer.model"))
            return mf_fail(v->st, MF_ERR_FORMAT, v->dir, -1, "a BPE spiece.model: the converter asserts tokenizer.model");
        return set_vocab_sentencepiece(v);
    }
    if (rc == 0)
        rc = added_tokens_json_over(v);
    if (rc == 0)
        rc = unigram_keys(v, &f, false);
    if (rc == 0)
        rc = add_special_vocab(v, (int64_t)v->n, false);
    if (rc == 0)
        add_bos_eos(v, false, true);
    free(f.charsmap);
    return rc;
}

/* JinaBertV2Model.set_vocab: BertTokenizer's WordPiece, or RobertaTokenizer's
 * BPE with two token types; add_bos and add_eos after either */
static int set_vocab_jina(vocab *v)
{
    const char *cls = json_string_value(json_object_get(v->tcfg, "tokenizer_class"));
    int rc;
    if (cls && !strcmp(cls, "BertTokenizer")) {
        rc = set_vocab_bert(v);
    } else if (cls && !strcmp(cls, "RobertaTokenizer")) {
        rc = set_vocab_gpt2(v);
        if (rc == 0)
            mf_kv_u32(v->kv, "tokenizer.ggml.token_type_count", 2);
    } else {
        return mf_fail(v->st, MF_ERR_UNSUPPORTED, v->dir, -1, "tokenizer_config.json tokenizer_class %s%s%s: "
                       "JinaBertModel converts BertTokenizer and RobertaTokenizer", cls ? "\"" : "",
                       cls ? cls : "absent", cls ? "\"" : "");
    }
    if (rc == 0)
        add_bos_eos(v, true, true);
    return rc;
}

static int codellama_ids(vocab *v)
{
    special_vocab sv = {.types = {"prefix", "suffix", "middle", "eot"}, .ntypes = 4, .n_vocab = -1};
    int rc = special_vocab_load(&sv, v, false);
    static const int64_t ids[] = {32007, 32008, 32009, 32010};
    for (size_t t = 0; rc == 0 && t < 4; t++) {
        json_t *id = json_integer(ids[t]);
        rc = set_special(&sv, t, id, v->dir, v->st);
        json_decref(id);
    }
    if (rc == 0) /* the template is in already: writing it twice would fail */
        special_vocab_add(&sv, v->kv, false);
    special_vocab_free(&sv);
    return rc;
}

/* GemmaModel.set_vocab: the CodeGemma ids (only eot has a handler). */
static int gemma_ids(vocab *v)
{
    special_vocab sv = {.types = {"prefix", "suffix", "middle", "fsep", "eot"}, .ntypes = 5, .n_vocab = -1};
    int rc = special_vocab_load(&sv, v, false);
    static const int64_t ids[] = {67, 69, 68, 70, 107};
    for (size_t t = 0; rc == 0 && t < 5; t++) {
        json_t *id = json_integer(ids[t]);
        rc = set_special(&sv, t, id, v->dir, v->st);
        json_decref(id);
    }
    if (rc == 0)
        special_vocab_add(&sv, v->kv, false); /* "do not add it twice" */
    special_vocab_free(&sv);
    return rc;
}

/* InternLM3Model.set_vocab: SentencePiece; add_prefix_space from
 * tokenizer_config.json before the special ids; each special token of
 * added_tokens_decoder is offered to SpecialVocab under its text as the type
 * (only a text naming a type takes effect), and <|im_end|> replaces a set eos. */
static int set_vocab_internlm3(vocab *v)
{
    if (sentencepiece_arrays(v))
        return -1;
    json_t *aps = json_object_get(v->tcfg, "add_prefix_space");
    if (aps && !json_is_boolean(aps))
        return mf_fail(v->st, MF_ERR_FORMAT, v->dir, -1, "tokenizer_config.json add_prefix_space is not a boolean");
    if (aps)
        mf_kv_bool(v->kv, "tokenizer.ggml.add_space_prefix", json_is_true(aps));
    special_vocab sv = {.types = {"bos", "eos", "unk", "sep", "pad", "cls", "mask"}, .ntypes = 7,
                        .n_vocab = (int64_t)v->n};
    int rc = special_vocab_load(&sv, v, false);
    const char *key;
    json_t *tok;
    json_object_foreach(json_object_get(v->tcfg, "added_tokens_decoder"), key, tok) {
        const char *text = json_string_value(json_object_get(tok, "content"));
        char *end;
        long long id = strtoll(key, &end, 10);
        if (rc || !json_is_true(json_object_get(tok, "special")) || !text)
            continue;
        if (*end || end == key) {
            rc = mf_fail(v->st, MF_ERR_FORMAT, v->dir, -1,
                         "tokenizer_config.json added_tokens_decoder key \"%s\" is not an id", key);
            continue;
        }
        json_t *jid = json_integer(id);
        for (size_t t = 0; rc == 0 && t < sv.ntypes; t++)
            if (!strcmp(text, sv.types[t]))
                rc = set_special(&sv, t, jid, v->dir, v->st);
        json_decref(jid);
        bool eos_set = false;
        for (size_t i = 0; i < sv.n_ids; i++)
            eos_set |= sv.id_order[i] == 1;
        if (rc == 0 && !strcmp(text, "<|im_end|>") && eos_set) {
            if (id < 0)
                rc = mf_fail(v->st, MF_ERR_FORMAT, v->dir, -1, "added token id %lld is negative", id);
            else
                sv.id[1] = id; /* special_token_ids["eos"]: keeps its place */
        }
    }
    if (rc == 0)
        special_vocab_add(&sv, v->kv, true);
    special_vocab_free(&sv);
    return rc;
}

/* NemotronModel.set_vocab: the pad and unk ids are added after the special
 * vocabulary; gguf-py refuses a key written twice, so do we. */
static int set_vocab_nemotron(vocab *v)
{
    if (set_vocab_sentencepiece(v))
        return -1;
    static const char *const keys[] = {"tokenizer.ggml.padding_token_id", "tokenizer.ggml.unknown_token_id"};
    for (uint32_t i = 0; i < 2; i++) {
        if (mf_kv_get(v->kv, keys[i]))
            return mf_fail(v->st, MF_ERR_FORMAT, v->dir, -1, "%s written twice (gguf-py: duplicated key name)",
                           keys[i]);
        mf_kv_u32(v->kv, keys[i], i);
    }
    return 0;
}

static int set_vocab_llama(vocab *v)
{
    int rc;
    if (file_in(v, "tokenizer.model"))
        rc = set_vocab_sentencepiece(v);
    else if (v->tj && is_llama_hf_tokenizer(v->tj))
        rc = set_vocab_llama_hf(v);
    else
        rc = set_vocab_gpt2(v);
    int64_t vs = v->vocab_size >= 0 ? v->vocab_size : 32000;
    if (rc == 0 && vs == 32016) /* CodeLlama's infill tokens */
        rc = codellama_ids(v);
    if (rc == 0) {
        json_t *aps = json_object_get(v->tcfg, "add_prefix_space");
        if (json_is_boolean(aps))
            mf_kv_bool(v->kv, "tokenizer.ggml.add_space_prefix", json_is_true(aps));
        if (vs == 49152 && !mf_kv_get(v->kv, "tokenizer.ggml.add_bos_token")) /* granite small */
            mf_kv_bool(v->kv, "tokenizer.ggml.add_bos_token", false);
    }
    return rc;
}

/* ------------------------------------- remote-code tokenizers, from files */

/* A tokenizer file of the directory, whole (refused when it is a Git LFS
 * pointer); *path_out (may be NULL) gets its path, owned by the caller. */
static int read_tokenizer_file(vocab *v, const char *name, char **buf, size_t *len, char **path_out)
{
    char *path = path_in(v, name);
    uint64_t promised;
    int rc = !path ? mf_oom(v->st, v->dir)
             : !mf_path_exists(path) ? mf_fail(v->st, MF_ERR_FORMAT, path, -1, "missing: the family's tokenizer reads it")
             : mf_hf_lfs_pointer(path, &promised, NULL)
                 ? mf_fail(v->st, MF_ERR_FORMAT, path, 0, "a Git LFS pointer, not the tokenizer: not downloaded "
                           "(%llu bytes promised)", (unsigned long long)promised)
                 : mf_read_small_file(path, 1u << 30, buf, len, v->st);
    if (rc == 0 && path_out)
        *path_out = path;
    else
        free(path);
    return rc;
}

/* QWenTokenizer's special tokens (tokenization_qwen.py): <|endoftext|>,
 * <|im_start|>, <|im_end|>, <|extra_0|> .. <|extra_204|> from id 151643. */
enum { QWEN_SPECIAL_START = 151643, QWEN_N_SPECIAL = 208 };

static int qwen_special_name(size_t k, char *out, size_t cap)
{
    static const char *const first[] = {"<|endoftext|>", "<|im_start|>", "<|im_end|>"};
    return k < 3 ? snprintf(out, cap, "%s", first[k]) : snprintf(out, cap, "<|extra_%zu|>", k - 3);
}

/* The merges derived from tiktoken ranks: for every token of two or more
 * bytes, in file order, the parts bpe(ranks, token, max_rank=rank) leaves,
 * as byte-level texts joined by spaces. _set_vocab_qwen asserts two parts;
 * ChatGLMModel.set_vocab (GLM-4's remote tokenizer) allows 2 to 7. */
static json_t *tiktoken_merges(vocab *v, const mf_tiktoken *t, const char *path, int max_parts)
{
    json_t *m = json_array();
    char *text = NULL;
    size_t cap = 0, *ends = NULL, ends_cap = 0;
    for (size_t i = 0; m && i < t->n; i++) {
        const mf_tt_entry *e = &t->v[i];
        if (e->n == 1)
            continue;
        if (e->n > ends_cap) {
            size_t *g = realloc(ends, e->n * sizeof(size_t));
            if (!g) {
                mf_oom(v->st, v->dir);
                break;
            }
            ends = g;
            ends_cap = e->n;
        }
        int parts = mf_tiktoken_split(t, e->bytes, e->n, e->rank, ends);
        if (parts < 0) {
            mf_oom(v->st, v->dir);
            break;
        }
        if (parts < 2 || parts > max_parts) { /* the converter's assert on len(merged) */
            mf_fail(v->st, MF_ERR_FORMAT, path, -1, "the token of rank %lld is not the merge of %s of lower "
                    "rank (%d parts): not a BPE vocabulary", (long long)e->rank,
                    max_parts == 2 ? "two tokens" : "2 to 7 tokens", parts);
            break;
        }
        if (4 * e->n + (size_t)parts > cap) {
            cap = 4 * e->n + (size_t)parts;
            char *g = realloc(text, cap);
            if (!g) {
                mf_oom(v->st, v->dir);
                break;
            }
            text = g;
        }
        size_t k = 0, from = 0;
        for (int p = 0; p < parts; p++) {
            if (p)
                text[k++] = ' ';
            k += mf_byte_level_text(e->bytes + from, ends[p] - from, text + k);
            from = ends[p];
        }
        json_array_append_new(m, json_stringn(text, k));
    }
    free(text);
    free(ends);
    if (!m || v->st->code != MF_OK) {
        json_decref(m);
        if (v->st->code == MF_OK)
            mf_oom(v->st, v->dir);
        return NULL;
    }
    return m;
}

/* The ranks as byte-level tokens, the specials CONTROL, [PAD{i}] UNUSED
 * elsewhere, up to config.json's vocab_size. */
static int qwen_tokens(vocab *v, const mf_tiktoken *t, const char *path)
{
    if (v->vocab_size < 0)
        return mf_fail(v->st, MF_ERR_FORMAT, v->dir, -1, "config.json has no vocab_size (QwenModel reads it)");
    int64_t n_vocab = t->max_rank > QWEN_SPECIAL_START + QWEN_N_SPECIAL - 1 ? t->max_rank + 1
                                                                          : QWEN_SPECIAL_START + QWEN_N_SPECIAL;
    if ((int64_t)t->n + QWEN_N_SPECIAL != n_vocab) /* QWenTokenizer.__init__'s assert */
        return mf_fail(v->st, MF_ERR_FORMAT, path, -1, "%zu ranks up to %lld: QWenTokenizer needs the ranks "
                       "0..%d with its %d special tokens after them", t->n, (long long)t->max_rank,
                       QWEN_SPECIAL_START - 1, QWEN_N_SPECIAL);
    if (t->max_rank >= v->vocab_size)
        return mf_fail(v->st, MF_ERR_FORMAT, path, -1, "rank %lld is past config.json vocab_size %lld",
                       (long long)t->max_rank, (long long)v->vocab_size);
    if (alloc_tokens(v, (size_t)v->vocab_size))
        return -1;
    char buf[64];
    for (size_t i = 0; i < v->n; i++) {
        int k = snprintf(buf, sizeof(buf), "[PAD%zu]", i);
        if (set_token(v, i, buf, (size_t)k))
            return -1;
        v->type[i] = TT_UNUSED;
    }
    char *text = NULL;
    for (size_t i = 0; i < t->n; i++) {
        const mf_tt_entry *e = &t->v[i];
        char *g = realloc(text, 2 * e->n + 1);
        if (!g) {
            free(text);
            return mf_oom(v->st, v->dir);
        }
        text = g;
        if (set_token(v, (size_t)e->rank, text, mf_byte_level_text(e->bytes, e->n, text))) {
            free(text);
            return -1;
        }
        v->type[e->rank] = TT_NORMAL;
    }
    free(text);
    for (size_t k = 0; k < QWEN_N_SPECIAL && QWEN_SPECIAL_START + (int64_t)k < v->vocab_size; k++) {
        int len = qwen_special_name(k, buf, sizeof(buf));
        if (set_token(v, QWEN_SPECIAL_START + k, buf, (size_t)len))
            return -1;
        v->type[QWEN_SPECIAL_START + k] = TT_CONTROL;
    }
    return 0;
}

/* What the tiktoken families write after their token list is built: model
 * "gpt2", the pre-tokenizer (the arch file's, else dflt), the tokens and
 * types, then SpecialVocab without tokenizer.json merges (sv loaded) and the
 * derived merges (owned by sv from here, even on failure). */
static int tiktoken_vocab_keys(vocab *v, const char *dflt, json_t *merges, special_vocab *sv)
{
    const char *pre = v->o->pre_fallback ? v->o->pre_fallback : dflt;
    mf_kv_str(v->kv, "tokenizer.ggml.model", "gpt2", 4);
    mf_kv_str(v->kv, "tokenizer.ggml.pre", pre, strlen(pre));
    add_token_arrays(v, false);
    int rc = special_vocab_load(sv, v, false);
    sv->merges = merges;
    return rc;
}

/* QwenModel._set_vocab_qwen. The pre-tokenizer's name: the arch file's, else
 * "qwen2": the converter hashes QWenTokenizer's encoding of its check text,
 * and over the real qwen.tiktoken that is Qwen1.5's hash, e636dc30.., qwen2
 * (checked outside the repository with a tiktoken encoder:
 * tests/data/arch_remote/README.md). */
static int set_vocab_qwen(vocab *v)
{
    char *buf = NULL, *path = NULL;
    size_t len = 0;
    mf_tiktoken t = {0};
    int rc = read_tokenizer_file(v, "qwen.tiktoken", &buf, &len, &path);
    if (rc == 0)
        rc = mf_tiktoken_read(path, buf, len, &t, v->st);
    free(buf);
    if (rc == 0)
        rc = qwen_tokens(v, &t, path);
    json_t *merges = rc == 0 ? tiktoken_merges(v, &t, path, 2) : NULL;
    mf_tiktoken_free(&t);
    free(path);
    if (!merges)
        return -1;
    special_vocab sv = {.types = {"bos", "eos", "unk", "sep", "pad", "cls", "mask"}, .ntypes = 7, .n_vocab = -1};
    rc = tiktoken_vocab_keys(v, "qwen2", merges, &sv);
    /* bos and eos <|endoftext|> only when no special id was found; unk always
     * (SpecialVocab keeps an id set before) */
    json_t *eot = json_integer(QWEN_SPECIAL_START);
    if (rc == 0 && sv.n_ids == 0)
        rc = set_special(&sv, type_index(&sv, "bos"), eot, v->dir, v->st) ||
             set_special(&sv, type_index(&sv, "eos"), eot, v->dir, v->st);
    if (rc == 0)
        rc = set_special(&sv, type_index(&sv, "unk"), eot, v->dir, v->st);
    json_decref(eot);
    if (rc == 0)
        special_vocab_add(&sv, v->kv, true);
    special_vocab_free(&sv);
    return rc;
}

/* ChatGLM3's SPTokenizer (tokenization_chatglm.py): its special tokens after
 * the SentencePiece pieces. */
static const char *const chatglm3_specials[] = {"[MASK]", "[gMASK]", "[sMASK]", "sop", "eop",
                                                "<|system|>", "<|user|>", "<|assistant|>", "<|observation|>"};
enum { CHATGLM3_N_SPECIAL = 9 };

/* The id of the CONTROL piece with this text (sentencepiece's bos_id() /
 * eos_id() of the default "<s>" / "</s>"), -1 without one. */
static int64_t spm_control_id(const mf_spm *spm, const char *text)
{
    for (size_t i = 0; i < spm->n; i++)
        if (spm->pieces[i].type == MF_SPM_CONTROL && spm->pieces[i].len == strlen(text) &&
            !memcmp(spm->pieces[i].text, text, spm->pieces[i].len))
            return (int64_t)i;
    return -1;
}

/* One token of ChatGLMModel.set_vocab_chatglm3's loop over
 * range(padded_vocab_size): SPTokenizer.convert_id_to_token (the special
 * names, "" for the bos/eos/pad(= unk) ids and ids past the pieces), ids
 * 0-2 renamed <unk> <bos> <eos>, the piece's score and type. */
static int chatglm3_token(vocab *v, const mf_spm *spm, size_t id, const int64_t skip[3])
{
    size_t n_sp = spm->n;
    const char *piece = "";
    size_t plen = 0;
    if (id >= n_sp && id < n_sp + CHATGLM3_N_SPECIAL) {
        piece = chatglm3_specials[id - n_sp];
        plen = strlen(piece);
    } else if (id < n_sp && (int64_t)id != skip[0] && (int64_t)id != skip[1] && (int64_t)id != skip[2]) {
        piece = spm->pieces[id].text;
        plen = spm->pieces[id].len;
    }
    static const char *const renamed[] = {"<unk>", "<bos>", "<eos>"};
    if (id < 3) {
        piece = renamed[id];
        plen = strlen(piece);
    }
    v->score[id] = plen && id < n_sp ? spm->pieces[id].score : 0.0f;
    if (id >= n_sp) {
        if (plen) {
            v->type[id] = TT_CONTROL; /* every name SPTokenizer gives past the pieces is in the converter's list */
            return set_token(v, id, piece, plen);
        }
        char pad[32];
        int k = snprintf(pad, sizeof(pad), "[PAD%zu]", id);
        v->type[id] = TT_UNUSED;
        return set_token(v, id, pad, (size_t)k);
    }
    int t = spm->pieces[id].type;
    v->type[id] = t == MF_SPM_UNKNOWN ? TT_UNKNOWN : t == MF_SPM_CONTROL ? TT_CONTROL : t == MF_SPM_UNUSED ? TT_UNUSED
                : t == MF_SPM_BYTE ? TT_BYTE : TT_NORMAL;
    return set_token(v, id, piece, plen);
}

/* ChatGLMModel.set_vocab_chatglm3: model "llama", pre "chatglm-spm". */
static int set_vocab_chatglm3(vocab *v)
{
    char *buf = NULL, *path = NULL;
    size_t len = 0;
    mf_spm spm = {0};
    int64_t padded = -1;
    json_t *pj = json_object_get(v->cfg, "padded_vocab_size");
    int rc = read_tokenizer_file(v, "tokenizer.model", &buf, &len, &path);
    if (rc == 0)
        rc = mf_spm_parse((const uint8_t *)buf, len, path, &spm, v->st);
    if (rc == 0 && (!pj || !mf_hf_json_int(pj, &padded) || padded < 0 || padded > (1 << 28)))
        rc = mf_fail(v->st, MF_ERR_UNSUPPORTED, v->dir, -1, "config.json has no usable padded_vocab_size (without "
                     "it ChatGLM3's vocabulary size is len(tokenizer.get_vocab()), which mfmt does not work out)");
    int64_t max_added = -1; /* tokenizer_config.json's added tokens are in get_vocab() too */
    const char *k;
    json_t *x;
    json_object_foreach(json_object_get(v->tcfg, "added_tokens_decoder"), k, x) {
        int64_t id;
        if (parse_id(k, &id) && id > max_added)
            max_added = id;
    }
    int64_t top = (int64_t)spm.n + CHATGLM3_N_SPECIAL - 1 > max_added ? (int64_t)spm.n + CHATGLM3_N_SPECIAL - 1
                                                                      : max_added;
    if (rc == 0 && top >= padded) /* assert max(tokenizer.get_vocab().values()) < vocab_size */
        rc = mf_fail(v->st, MF_ERR_FORMAT, v->dir, -1, "the tokenizer has ids up to %lld but config.json "
                     "padded_vocab_size is %lld", (long long)top, (long long)padded);
    if (rc == 0)
        rc = alloc_tokens(v, (size_t)padded);
    int64_t unk = -1;
    for (size_t i = 0; rc == 0 && i < spm.n && unk < 0; i++)
        if (spm.pieces[i].type == MF_SPM_UNKNOWN)
            unk = (int64_t)i;
    int64_t skip[3] = {spm_control_id(&spm, "</s>"), spm_control_id(&spm, "<s>"), unk};
    for (size_t i = 0; rc == 0 && i < v->n; i++)
        rc = chatglm3_token(v, &spm, i, skip);
    mf_spm_free(&spm);
    free(buf);
    free(path);
    if (rc)
        return -1;
    mf_kv_str(v->kv, "tokenizer.ggml.model", "llama", 5);
    mf_kv_str(v->kv, "tokenizer.ggml.pre", "chatglm-spm", 11);
    add_token_arrays(v, true);
    return add_special_vocab(v, (int64_t)v->n, false);
}

/* tokenizer_config.json's added_tokens_decoder (what transformers' slow
 * class takes as added tokens): each id below padded, its content, special
 * flag. An id among the ranks, a content that is a rank's byte-level text or
 * another added token's, and a named special token (bos_token ..
 * additional_special_tokens) that is none of them are refused: the
 * converter's {**vocab, **added_vocab} would drop one of the two, or
 * transformers would add it at a new id. */
static int glm4_added_tokens(vocab *v, int64_t padded, const char *tc_path)
{
    const char *k;
    json_t *x;
    json_t *decoder = json_object_get(v->tcfg, "added_tokens_decoder");
    if (!json_is_object(decoder))
        return mf_fail(v->st, MF_ERR_FORMAT, tc_path, -1, "no added_tokens_decoder: GLM-4's special tokens "
                       "(<|endoftext|>, <|user|>, ...) are the tokenizer's added tokens");
    json_object_foreach(decoder, k, x) {
        int64_t id;
        const char *content = json_string_value(json_object_get(x, "content"));
        if (!parse_id(k, &id) || !content)
            return mf_fail(v->st, MF_ERR_FORMAT, tc_path, -1, "added_tokens_decoder entry \"%s\" is not an id "
                           "with a content", k);
        if (id >= padded) /* assert max(tokenizer.get_vocab().values()) < vocab_size */
            return mf_fail(v->st, MF_ERR_FORMAT, tc_path, -1, "added token %lld is past config.json "
                           "padded_vocab_size %lld", (long long)id, (long long)padded);
        if (v->text[id]) /* the ranks are in already */
            return mf_fail(v->st, MF_ERR_FORMAT, tc_path, -1, "added token %lld (%s) has the id of a rank of "
                           "tokenizer.model or of another added token", (long long)id, content);
        for (size_t i = 0; i < v->n; i++)
            if (v->text[i] && !strcmp(v->text[i], content))
                return mf_fail(v->st, MF_ERR_FORMAT, tc_path, -1, "added token %lld (%s): its content is "
                               "token %zu's too", (long long)id, content, i);
        if (set_token(v, (size_t)id, content, strlen(content)))
            return -1;
        v->type[id] = json_is_true(json_object_get(x, "special")) ? TT_CONTROL : TT_USER_DEFINED;
    }
    static const char *const named[] = {"bos_token", "eos_token", "unk_token", "sep_token", "pad_token",
                                        "cls_token", "mask_token"};
    json_t *extra = json_object_get(v->tcfg, "additional_special_tokens");
    for (size_t i = 0; i < sizeof(named) / sizeof(named[0]) + json_array_size(extra); i++) {
        json_t *e = i < 7 ? json_object_get(v->tcfg, named[i]) : json_array_get(extra, i - 7);
        const char *content = json_is_object(e) ? json_string_value(json_object_get(e, "content"))
                                                : json_string_value(e);
        bool found = !content;
        for (size_t j = 0; !found && j < v->n; j++)
            found = v->text[j] && (v->type[j] == TT_CONTROL || v->type[j] == TT_USER_DEFINED) &&
                    !strcmp(v->text[j], content);
        if (!found)
            return mf_fail(v->st, MF_ERR_UNSUPPORTED, tc_path, -1, "special token %s is not in "
                           "added_tokens_decoder: transformers would add it at a new id, which mfmt does not "
                           "work out", content);
    }
    return 0;
}

/* The ranks as byte-level text (NORMAL) at their ids. */
static int tiktoken_rank_tokens(vocab *v, const mf_tiktoken *t)
{
    char *text = NULL;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < t->n; i++) {
        const mf_tt_entry *e = &t->v[i];
        char *g = realloc(text, 2 * e->n + 1);
        if (!g) {
            rc = mf_oom(v->st, v->dir);
            break;
        }
        text = g;
        rc = set_token(v, (size_t)e->rank, text, mf_byte_level_text(e->bytes, e->n, text));
        v->type[e->rank] = TT_NORMAL;
    }
    free(text);
    return rc;
}

/* ChatGLM4Tokenizer reads its file line by line with
 * line.strip().split() into two fields and no skip: a blank line stops it
 * (Qwen's _load_tiktoken_bpe skips them, mf_tiktoken_read too). The byte
 * offset of the first blank line, -1 for none. */
static long blank_line_at(const char *buf, size_t len)
{
    size_t start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && buf[i] != '\n')
            continue;
        if (i == len && start == len)
            break; /* after the last newline: no line */
        bool blank = true;
        for (size_t k = start; k < i && blank; k++)
            blank = buf[k] == ' ' || buf[k] == '\t' || buf[k] == '\r' || buf[k] == '\v' || buf[k] == '\f';
        if (blank)
            return (long)start;
        start = i + 1;
    }
    return -1;
}

/* ChatGLMModel.set_vocab for GLM-4 with its remote-code ChatGLM4Tokenizer
 * (glm-4-9b-chat: tokenizer.model holds tiktoken ranks, no tokenizer.json),
 * as llama.cpp's converter wrote it up to 53debe6, its last commit with this
 * path (from 0cec062 on, c392e50 included, get_vocab_base reads
 * tokenizer.vocab, which that slow class lacks, and the converter stops):
 * padded_vocab_size tokens - the ranks as byte-level text (NORMAL), the
 * added tokens (CONTROL when special, else USER_DEFINED), [PAD{i}] (UNUSED)
 * elsewhere -, merges derived from the ranks (ChatGLMModel.bpe: 2 to 7
 * parts), SpecialVocab without tokenizer.json, then eos and unk
 * <|endoftext|>, eot <|user|> unless set. */
static int set_vocab_glm4_tiktoken(vocab *v)
{
    const char *cls = json_string_value(json_object_get(v->tcfg, "tokenizer_class"));
    if (!cls || strcmp(cls, "ChatGLM4Tokenizer"))
        return mf_fail(v->st, MF_ERR_UNSUPPORTED, v->dir, -1, "GLM-4 without tokenizer.json and tokenizer_class "
                       "%s%s%s: mfmt reads GLM-4's ChatGLM4Tokenizer (a tiktoken tokenizer.model) or a "
                       "tokenizer.json", cls ? "\"" : "", cls ? cls : "missing", cls ? "\"" : "");
    int64_t padded = -1;
    if (!mf_hf_json_int(json_object_get(v->cfg, "padded_vocab_size"), &padded) || padded < 0 || padded > (1 << 28))
        return mf_fail(v->st, MF_ERR_FORMAT, v->dir, -1, "config.json has no usable padded_vocab_size (the "
                       "converter's GLM-4 tiktoken path reads it)");
    char *buf = NULL, *path = NULL, *tc_path = path_in(v, "tokenizer_config.json");
    size_t len = 0;
    mf_tiktoken t = {0};
    int rc = tc_path ? read_tokenizer_file(v, "tokenizer.model", &buf, &len, &path) : mf_oom(v->st, v->dir);
    long blank = rc == 0 ? blank_line_at(buf, len) : -1;
    if (blank >= 0)
        rc = mf_fail(v->st, MF_ERR_FORMAT, path, blank, "a blank line: ChatGLM4Tokenizer reads every line as "
                     "\"BASE64TOKEN RANK\" and stops on it");
    if (rc == 0)
        rc = mf_tiktoken_read(path, buf, len, &t, v->st);
    free(buf);
    if (rc == 0 && t.max_rank >= padded)
        rc = mf_fail(v->st, MF_ERR_FORMAT, path, -1, "rank %lld is past config.json padded_vocab_size %lld",
                     (long long)t.max_rank, (long long)padded);
    if (rc == 0)
        rc = alloc_tokens(v, (size_t)padded);
    if (rc == 0)
        rc = tiktoken_rank_tokens(v, &t);
    if (rc == 0)
        rc = glm4_added_tokens(v, padded, tc_path);
    char pad[32];
    for (size_t i = 0; rc == 0 && i < v->n; i++)
        if (!v->text[i]) {
            rc = set_token(v, i, pad, (size_t)snprintf(pad, sizeof(pad), "[PAD%zu]", i));
            v->type[i] = TT_UNUSED;
        }
    json_t *merges = rc == 0 ? tiktoken_merges(v, &t, path, 7) : NULL;
    mf_tiktoken_free(&t);
    free(path);
    free(tc_path);
    if (!merges)
        return -1;
    special_vocab sv = {.types = {"bos", "eos", "unk", "sep", "pad", "cls", "mask"}, .ntypes = 7, .n_vocab = -1};
    rc = tiktoken_vocab_keys(v, "chatglm-bpe", merges, &sv);
    static const char *const ids[][2] = {{"eos", "<|endoftext|>"}, {"eot", "<|user|>"}, {"unk", "<|endoftext|>"}};
    for (size_t i = 0; rc == 0 && i < sizeof(ids) / sizeof(ids[0]); i++) {
        size_t id = 0;
        while (id < v->n && !((v->type[id] == TT_CONTROL || v->type[id] == TT_USER_DEFINED) &&
                              !strcmp(v->text[id], ids[i][1])))
            id++;
        json_t *jid = id < v->n ? json_integer((json_int_t)id) : NULL;
        rc = !jid ? mf_fail(v->st, MF_ERR_FORMAT, v->dir, -1, "tokenizer_config.json: GLM-4's added token %s is "
                            "missing", ids[i][1])
                  : set_special(&sv, type_index(&sv, ids[i][0]), jid, v->dir, v->st);
        json_decref(jid);
    }
    if (rc == 0)
        special_vocab_add(&sv, v->kv, true);
    special_vocab_free(&sv);
    return rc;
}

/* ChatGLMModel.set_vocab for GLM-4: get_vocab_base over tokenizer.json,
 * then eos and unk <|endoftext|>, eot <|user|> (each unless already set). */
static int set_vocab_glm4(vocab *v)
{
    if (!v->tj)
        return set_vocab_glm4_tiktoken(v);
    json_t *pj = json_object_get(v->cfg, "padded_vocab_size");
    int64_t limit = -1;
    if (!mf_hf_json_int(pj ? pj : json_object_get(v->cfg, "vocab_size"), &limit))
        return mf_fail(v->st, MF_ERR_FORMAT, v->dir, -1, "config.json has no padded_vocab_size or vocab_size");
    const char *pre = pre_tokenizer_name(v);
    if (!pre || bpe_tokens(v))
        return -1;
    for (size_t i = 0; i < json_array_size(json_object_get(v->tj, "added_tokens")); i++) {
        int64_t id;
        if (mf_hf_json_int(json_object_get(json_array_get(json_object_get(v->tj, "added_tokens"), i), "id"), &id) &&
            id >= limit)
            return mf_fail(v->st, MF_ERR_FORMAT, v->dir, -1, "added token %lld is past padded_vocab_size %lld",
                           (long long)id, (long long)limit);
    }
    mf_kv_str(v->kv, "tokenizer.ggml.model", "gpt2", 4);
    mf_kv_str(v->kv, "tokenizer.ggml.pre", pre, strlen(pre));
    add_token_arrays(v, false);
    static const char *const ids[][2] = {{"eos", "<|endoftext|>"}, {"eot", "<|user|>"}, {"unk", "<|endoftext|>"}};
    special_vocab sv = {.types = {"bos", "eos", "unk", "sep", "pad", "cls", "mask"}, .ntypes = 7, .n_vocab = -1};
    int rc = special_vocab_load(&sv, v, true);
    for (size_t i = 0; rc == 0 && i < sizeof(ids) / sizeof(ids[0]); i++) {
        json_t *id = added_id(v, ids[i][1]);
        rc = !id ? mf_fail(v->st, MF_ERR_FORMAT, v->dir, -1, "tokenizer.json: GLM-4's added token %s is missing", ids[i][1])
                 : set_special(&sv, type_index(&sv, ids[i][0]), id, v->dir, v->st);
    }
    if (rc == 0)
        special_vocab_add(&sv, v->kv, true);
    special_vocab_free(&sv);
    return rc;
}

static int set_vocab_chatglm(vocab *v)
{
    const char *name = json_string_value(json_object_get(v->cfg, "_name_or_path"));
    return name && strstr(name, "THUDM/chatglm3-6b") ? set_vocab_chatglm3(v) : set_vocab_glm4(v);
}

int mf_hf_vocab_keys(const char *dir, const json_t *cfg, const mf_hf_vocab_opts *o, mf_kvlist *kv,
                     mf_status *st)
{
    vocab v = {.dir = dir, .cfg = cfg, .kv = kv, .st = st, .arch = o->arch ? o->arch : "llama", .o = o,
               .vocab_size = -1};
    bool failed = false;
    v.tcfg = json_in(&v, "tokenizer_config.json", st, &failed);
    if (!failed)
        v.tj = json_in(&v, "tokenizer.json", st, &failed);
    int rc = failed ? -1 : 0;
    json_t *vs = json_object_get(cfg, "vocab_size");
    if (rc == 0 && vs && !mf_hf_json_int(vs, &v.vocab_size))
        rc = mf_fail(st, MF_ERR_FORMAT, dir, -1, "config.json vocab_size is not an integer");
    if (rc == 0 && vs && (v.vocab_size < 0 || v.vocab_size > (1 << 28)))
        rc = mf_fail(st, MF_ERR_FORMAT, dir, -1, "config.json vocab_size %lld is out of range", (long long)v.vocab_size);
    if (rc == 0 && (o->kind == V_MAMBA || o->kind == V_GRANITE_HYBRID)) { /* rounded up to a multiple of
                                                                               pad_vocab_size_multiple */
        int64_t pad = 8;
        json_t *pj = o->kind == V_MAMBA ? json_object_get(cfg, "pad_vocab_size_multiple") : NULL; /* Granite: 8 */
        if (!vs)
            rc = mf_fail(st, MF_ERR_FORMAT, dir, -1, "config.json has no vocab_size");
        else if (pj && (!mf_hf_json_int(pj, &pad) || pad <= 0 || pad > (1 << 20)))
            rc = mf_fail(st, MF_ERR_FORMAT, dir, -1, "config.json pad_vocab_size_multiple is not a positive integer");
        else
            v.vocab_size = (v.vocab_size + pad - 1) / pad * pad;
    }
    if (rc == 0) {
        switch (o->kind) {
        case V_LLAMA: rc = set_vocab_llama(&v); break;
        case V_SPM_OR_BPE:
            rc = file_in(&v, "tokenizer.model") ? set_vocab_sentencepiece(&v) : set_vocab_gpt2(&v);
            break;
        case V_SPM: rc = set_vocab_sentencepiece(&v); break;
        case V_GEMMA3:
            if (!file_in(&v, "tokenizer.model")) {
                rc = set_vocab_gpt2(&v);
                break;
            }
            rc = set_vocab_sentencepiece(&v);
            if (rc == 0)
                mf_kv_bool(kv, "tokenizer.ggml.add_space_prefix", false);
            break;
        case V_GEMMA: case V_GEMMA2:
            rc = set_vocab_sentencepiece(&v);
            if (rc == 0 && o->kind == V_GEMMA)
                rc = gemma_ids(&v);
            if (rc == 0)
                mf_kv_bool(kv, "tokenizer.ggml.add_space_prefix", false);
            break;
        case V_PHI3: rc = set_vocab_phi3(&v); break;
        case V_GLM: rc = set_vocab_gpt2(&v); break;
        case V_ERNIE: /* then add_prefix_space, when tokenizer_config.json has it */
            rc = set_vocab_sentencepiece(&v);
            if (rc == 0 && json_is_boolean(json_object_get(v.tcfg, "add_prefix_space")))
                mf_kv_bool(kv, "tokenizer.ggml.add_space_prefix", json_is_true(json_object_get(v.tcfg, "add_prefix_space")));
            break;
        case V_NEMOTRON: rc = set_vocab_nemotron(&v); break;
        case V_INTERNLM3: rc = set_vocab_internlm3(&v); break;
        case V_INTERNLM2: rc = set_vocab_internlm2(&v); break;
        case V_BERT: rc = set_vocab_bert(&v); break;
        case V_ROBERTA: rc = set_vocab_roberta(&v); break;
        case V_XLMR: rc = set_vocab_xlmr(&v); break;
        case V_T5: rc = set_vocab_t5(&v); break;
        case V_JINA: rc = set_vocab_jina(&v); break;
        case V_XVERSE: rc = set_vocab_xverse(&v); break;
        case V_RWKV: rc = set_vocab_rwkv(&v); break;
        case V_QWEN: rc = set_vocab_qwen(&v); break;
        case V_CHATGLM: rc = set_vocab_chatglm(&v); break;
        case V_DECI: /* the 51B's 128256 (also when config.json has none) or DeciLM-7B's */
            rc = (vs ? v.vocab_size : 128256) == 128256 ? set_vocab_gpt2(&v) : set_vocab_llama_hf(&v);
            break;
        case V_MISTRAL: rc = h2g_mistral_vocab(dir, o->arch, kv, st); break;
        case V_OPENELM:
            rc = file_in(&v, "tokenizer.model") ? set_vocab_sentencepiece(&v)
                 : mf_fail(st, MF_ERR_UNSUPPORTED, dir, -1, "no tokenizer.model: llama.cpp's converter would "
                           "use its built-in llama-spm vocabulary (models/ggml-vocab-llama-spm.gguf), which "
                           "mfmt does not have; put the Llama-2 tokenizer.model the model uses beside it");
            break;
        case V_GRANITE_HYBRID: /* Mamba2Model.set_vocab: tokenizer.model first */
            if (file_in(&v, "tokenizer.model"))
                rc = set_vocab_sentencepiece(&v);
            else if (v.tj)
                rc = set_vocab_gpt2(&v);
            else
                rc = mf_fail(st, MF_ERR_UNSUPPORTED, dir, -1, "no tokenizer files: llama.cpp would use its "
                             "built-in GPT-NeoX vocabulary, which mfmt does not have");
            break;
        case V_MAMBA:
            if (v.tj)
                rc = set_vocab_gpt2(&v);
            else if (file_in(&v, "tokenizer.model"))
                rc = set_vocab_sentencepiece(&v);
            else
                rc = mf_fail(st, MF_ERR_UNSUPPORTED, dir, -1, "no tokenizer files: llama.cpp would use its "
                             "built-in GPT-NeoX vocabulary, which mfmt does not have");
            break;
        default: rc = set_vocab_gpt2(&v); break;
        }
    }
    free_tokens(&v);
    json_decref(v.tcfg);
    json_decref(v.tj);
    return rc;
}
