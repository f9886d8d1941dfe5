/* gguf2hf_vocab.c - the tokenizer of a GGUF as Hugging Face files:
 *  - tokenizer.ggml.model "llama": a SentencePiece tokenizer.model
 *    (sentencepiece_model.proto: pieces with score and type, trainer_spec,
 *    normalizer_spec), user-defined tokens also in added_tokens_decoder;
 *  - "gpt2": tokenizer.json with a byte-level BPE model (vocab, merges),
 *    added tokens, and the normalizer / pre-tokenizer / decoder of the family
 *    tokenizer.ggml.pre names (gguf2hf_pretok.inc);
 *  - "bert": tokenizer.json with a WordPiece model and vocab.txt, the
 *    phantom-space spelling llama.cpp uses undone;
 * and for all: tokenizer_config.json (special tokens, add_bos/add_eos, chat
 * template(s)), special_tokens_map.json. */
#include "ops/hfconv/gguf2hf_int.h"
#include "core/json_build.h"
#include "ops/hfconv/rwkv_vocab.h"
#include "ops/hfconv/tiktoken.h"

#include <stdlib.h>

enum { TT_NORMAL = 1, TT_UNKNOWN = 2, TT_CONTROL = 3, TT_USER_DEFINED = 4, TT_UNUSED = 5,
       TT_BYTE = 6 };

typedef struct vocab_view {
    const mf_value *tokens, *scores, *types, *merges;
    size_t n;
} vocab_view;

static const mf_value *arr_of(const hfc *c, const char *key, mf_vtype elem)
{
    const mf_value *v = mf_meta_get(c->m, key);
    return v && v->type == MF_V_ARR && v->as.arr.elem == elem ? v : NULL;
}

static int view_vocab(hfc *c, vocab_view *v)
{
    v->tokens = arr_of(c, "tokenizer.ggml.tokens", MF_V_STR);
    v->scores = arr_of(c, "tokenizer.ggml.scores", MF_V_F32);
    v->types = arr_of(c, "tokenizer.ggml.token_type", MF_V_I32);
    v->merges = arr_of(c, "tokenizer.ggml.merges", MF_V_STR);
    if (!v->tokens)
        return mf_fail(c->st, MF_ERR_FORMAT, c->path, -1,
                       "no tokenizer.ggml.tokens: the GGUF carries no tokenizer to write");
    v->n = v->tokens->as.arr.n;
    if ((v->scores && v->scores->as.arr.n != v->n) || (v->types && v->types->as.arr.n != v->n))
        return mf_fail(c->st, MF_ERR_FORMAT, c->path, -1,
                       "tokenizer.ggml.scores/token_type and tokens differ in length");
    return 0;
}

static const char *tok(const vocab_view *v, size_t i) { return v->tokens->as.arr.items[i].as.s.ptr; }
static size_t tok_len(const vocab_view *v, size_t i) { return v->tokens->as.arr.items[i].as.s.len; }
static int tok_type(const vocab_view *v, size_t i)
{
    return v->types ? (int)v->types->as.arr.items[i].as.i : TT_NORMAL;
}
static float tok_score(const vocab_view *v, size_t i)
{
    return v->scores ? (float)v->scores->as.arr.items[i].as.f : 0.0f;
}

static const char *special_text(const hfc *c, const vocab_view *v, const char *key)
{
    int64_t id;
    if (!hfc_int(mf_meta_get(c->m, key), &id) || id < 0 || (uint64_t)id >= v->n)
        return NULL;
    return tok(v, (size_t)id);
}

/* ------------------------------------------------------ SentencePiece */

typedef MF_VEC(uint8_t) bytes;

static void put_raw(bytes *b, const void *p, size_t n)
{
    if (mf_vec_grow((void **)&b->v, &b->cap, b->n + n, 1))
        return;
    memcpy(b->v + b->n, p, n);
    b->n += n;
}

static void put_varint(bytes *b, uint64_t x)
{
    uint8_t t[10];
    size_t n = 0;
    do {
        t[n++] = (uint8_t)((x & 0x7f) | (x > 0x7f ? 0x80 : 0));
        x >>= 7;
    } while (x);
    put_raw(b, t, n);
}

static void put_tag(bytes *b, unsigned field, unsigned wire) { put_varint(b, (uint64_t)field << 3 | wire); }

static void put_len(bytes *b, unsigned field, const void *p, size_t n)
{
    put_tag(b, field, 2);
    put_varint(b, n);
    put_raw(b, p, n);
}

/* Tokens past the pieces: the converter pads a vocab_size larger than the
 * model with [PAD{i}] (UNUSED, -10000); those are not pieces. */
static size_t spm_pieces(const hfc *c, const vocab_view *v)
{
    size_t n = v->n;
    /* ChatGLM3: SPTokenizer's special tokens follow the pieces, [MASK] first */
    for (size_t i = 0; c->fwd->vocab == V_CHATGLM && i < v->n; i++)
        if (tok_type(v, i) == TT_CONTROL && !strcmp(tok(v, i), "[MASK]"))
            return i;
    while (n > 0) {
        char pad[32];
        snprintf(pad, sizeof(pad), "[PAD%zu]", n - 1);
        if (tok_type(v, n - 1) != TT_UNUSED || strcmp(tok(v, n - 1), pad))
            break;
        n--;
    }
    return n;
}

/* SentencePiece refuses a model without an UNKNOWN piece ("unk is not
 * defined"). The converter turns <unk> into CONTROL when tokenizer_config's
 * added_tokens_decoder calls it special; that piece goes back as UNKNOWN
 * (and into added_tokens_decoder: hfc_spm_unk). */
static long hfc_spm_unk(const hfc *c, const vocab_view *v)
{
    for (size_t i = 0; i < v->n; i++)
        if (tok_type(v, i) == TT_UNKNOWN)
            return (long)i;
    int64_t id;
    if (hfc_int(mf_meta_get(c->m, "tokenizer.ggml.unknown_token_id"), &id) && id >= 0 &&
        (uint64_t)id < v->n)
        return (long)id;
    for (size_t i = 0; i < v->n; i++)
        if (!strcmp(tok(v, i), "<unk>"))
            return (long)i;
    return -1;
}

static int write_spm(hfc *c, const vocab_view *v)
{
    bytes b = {0}, piece = {0};
    size_t n = spm_pieces(c, v);
    long unk = hfc_spm_unk(c, v);
    bool any_byte = false;
    for (size_t i = 0; i < n; i++) {
        piece.n = 0;
        put_len(&piece, 1, tok(v, i), tok_len(v, i));
        float s = tok_score(v, i);
        uint8_t f[4];
        uint32_t u;
        memcpy(&u, &s, 4);
        mf_wr32le(f, u);
        put_tag(&piece, 2, 5);
        put_raw(&piece, f, 4);
        int t = tok_type(v, i);
        if (t == TT_USER_DEFINED) /* the converter takes these from added tokens */
            t = TT_NORMAL;
        if ((long)i == unk)
            t = TT_UNKNOWN;
        any_byte |= t == TT_BYTE;
        put_tag(&piece, 3, 0);
        put_varint(&piece, (uint64_t)t);
        put_len(&b, 1, piece.v, piece.n);
    }
    /* trainer_spec: BPE (Llama, Gemma, Phi-3 are), byte_fallback, the ids */
    bytes ts = {0};
    put_tag(&ts, 3, 0);
    put_varint(&ts, 2);
    put_tag(&ts, 35, 0);
    put_varint(&ts, any_byte);
    static const struct { unsigned field; const char *key; } ids[] = {
        {41, "tokenizer.ggml.bos_token_id"}, {42, "tokenizer.ggml.eos_token_id"},
        {43, "tokenizer.ggml.padding_token_id"},
    };
    put_tag(&ts, 40, 0);
    put_varint(&ts, unk >= 0 ? (uint64_t)unk : 0);
    for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
        int64_t id;
        put_tag(&ts, ids[i].field, 0);
        put_varint(&ts, hfc_int(mf_meta_get(c->m, ids[i].key), &id) ? (uint64_t)id
                                                                     : (uint64_t)(int64_t)-1);
    }
    put_len(&b, 2, ts.v, ts.n);
    /* normalizer_spec: identity, add_dummy_prefix as the GGUF says */
    bytes ns = {0};
    const mf_value *asp = mf_meta_get(c->m, "tokenizer.ggml.add_space_prefix");
    put_len(&ns, 1, "identity", 8);
    put_tag(&ns, 3, 0);
    put_varint(&ns, asp && asp->type == MF_V_BOOL ? asp->as.b : 1);
    put_tag(&ns, 4, 0);
    put_varint(&ns, 0);
    put_tag(&ns, 5, 0);
    put_varint(&ns, 1);
    put_len(&b, 3, ns.v, ns.n);
    int rc = b.v && ts.v && ns.v ? hfc_write_bytes(c, "tokenizer.model", b.v, b.n)
                                 : mf_oom(c->st, c->path);
    free(b.v);
    free(piece.v);
    free(ts.v);
    free(ns.v);
    return rc;
}

/* A "t5" (SentencePiece Unigram) vocabulary back as the model file its
 * class reads: XLM-RoBERTa's sentencepiece.bpe.model in the fairseq layout
 * (the converter put <s> <pad> </s> <unk> first and every piece one id
 * later: pieces 0-2 are <unk> <s> </s> again, piece i >= 3 is token i + 1),
 * or T5's spiece.model as the tokens are. The normalizer: the precompiled
 * charsmap, add_dummy_prefix and remove_extra_whitespaces of the GGUF. */
static int write_unigram(hfc *c, const vocab_view *v, bool fairseq)
{
    bytes b = {0}, piece = {0};
    size_t n = spm_pieces(c, v);
    while (fairseq && n > 4) { /* placeholders one id later: token i is [PAD{i - 1}] */
        char pad[32];
        snprintf(pad, sizeof(pad), "[PAD%zu]", n - 2);
        if (tok_type(v, n - 1) != TT_UNUSED || strcmp(tok(v, n - 1), pad))
            break;
        n--;
    }
    if (fairseq && n < 4)
        return mf_fail(c->st, MF_ERR_FORMAT, c->path, -1, "a \"t5\" vocabulary of %zu tokens: "
                       "XLM-RoBERTa's layout has 4 first", n);
    size_t pieces = fairseq ? n - 1 : n;
    static const char *const fairseq_first[] = {"<unk>", "<s>", "</s>"};
    for (size_t i = 0; i < pieces; i++) {
        size_t from = fairseq ? i + 1 : i;
        bool first = fairseq && i < 3;
        const char *text = first ? fairseq_first[i] : tok(v, from);
        size_t len = first ? strlen(text) : tok_len(v, from);
        float s = first ? 0.0f : tok_score(v, from);
        int t = first ? (i == 0 ? TT_UNKNOWN : TT_CONTROL) : tok_type(v, from);
        if (t == TT_USER_DEFINED)
            t = TT_NORMAL;
        piece.n = 0;
        put_len(&piece, 1, text, len);
        uint8_t f[4];
        uint32_t u;
        memcpy(&u, &s, 4);
        mf_wr32le(f, u);
        put_tag(&piece, 2, 5);
        put_raw(&piece, f, 4);
        put_tag(&piece, 3, 0);
        put_varint(&piece, (uint64_t)t);
        put_len(&b, 1, piece.v, piece.n);
    }
    bytes ts = {0}, ns = {0};
    put_tag(&ts, 3, 0);
    put_varint(&ts, 1); /* UNIGRAM */
    const mf_value *cm = mf_meta_get(c->m, "tokenizer.ggml.precompiled_charsmap");
    const mf_value *asp = mf_meta_get(c->m, "tokenizer.ggml.add_space_prefix");
    const mf_value *rws = mf_meta_get(c->m, "tokenizer.ggml.remove_extra_whitespaces");
    bool has_map = cm && cm->type == MF_V_ARR && cm->as.arr.n;
    put_len(&ns, 1, has_map ? "nmt_nfkc" : "identity", 8);
    if (has_map) {
        uint8_t *map = malloc(cm->as.arr.n);
        if (!map) {
            free(b.v);
            free(piece.v);
            free(ts.v);
            free(ns.v);
            return mf_oom(c->st, c->path);
        }
        for (size_t i = 0; i < cm->as.arr.n; i++)
            map[i] = (uint8_t)cm->as.arr.items[i].as.u;
        put_len(&ns, 2, map, cm->as.arr.n);
        free(map);
    }
    put_tag(&ns, 3, 0);
    put_varint(&ns, asp && asp->type == MF_V_BOOL ? asp->as.b : 1);
    put_tag(&ns, 4, 0);
    put_varint(&ns, rws && rws->type == MF_V_BOOL ? rws->as.b : 1);
    put_len(&b, 2, ts.v, ts.n);
    put_len(&b, 3, ns.v, ns.n);
    int rc = b.v && ts.v && ns.v
                 ? hfc_write_bytes(c, fairseq ? "sentencepiece.bpe.model" : "spiece.model", b.v, b.n)
                 : mf_oom(c->st, c->path);
    free(b.v);
    free(piece.v);
    free(ts.v);
    free(ns.v);
    return rc;
}

/* ------------------------------------------------------ tokenizer.json */

static const struct pretok { const char *name, *normalizer, *pre, *decoder; } pretoks[] = {
#include "ops/hfconv/gguf2hf_pretok.inc"
};

static const struct pretok *pretok_for(const char *pre)
{
    for (size_t i = 0; i < sizeof(pretoks) / sizeof(pretoks[0]); i++)
        if (!strcmp(pretoks[i].name, pre))
            return &pretoks[i];
    return NULL;
}

static json_t *json_text(const char *s)
{
    return mf_json_loadb(s, strlen(s), JSON_DECODE_ANY, NULL);
}

static json_t *added_entry(size_t id, const char *content, bool special)
{
    json_t *e = json_object();
    json_object_set_new(e, "id", json_integer((json_int_t)id));
    json_object_set_new(e, "content", json_string(content));
    json_object_set_new(e, "single_word", json_false());
    json_object_set_new(e, "lstrip", json_false());
    json_object_set_new(e, "rstrip", json_false());
    json_object_set_new(e, "normalized", json_boolean(!special));
    json_object_set_new(e, "special", json_boolean(special));
    return e;
}

/* BERT: llama.cpp wrote "##x" as "x" and "x" as "\u2581x"; [..] as they were. */
static char *wordpiece_text(const char *t)
{
    size_t n = strlen(t);
    if (n >= 2 && t[0] == '[' && t[n - 1] == ']')
        return strdup(t);
    if (!strncmp(t, "\xe2\x96\x81", 3))
        return strdup(t + 3);
    char *p = malloc(n + 3);
    if (p) {
        memcpy(p, "##", 2);
        memcpy(p + 2, t, n + 1);
    }
    return p;
}

/* A family of the 2026-02 converter that adds a BOS and no separator: the
 * Llama-3 style TemplateProcessing that makes the fast tokenizer add it
 * (gguf-py 0.18 reads add_bos true and add_sep false from it, as from
 * tokenizer_config.json); otherwise none. */
static json_t *bos_template(hfc *c, const vocab_view *v)
{
    const mf_value *b = mf_meta_get(c->m, "tokenizer.ggml.add_bos_token"),
                   *sep = mf_meta_get(c->m, "tokenizer.ggml.add_sep_token");
    const char *bos = special_text(c, v, "tokenizer.ggml.bos_token_id");
    int64_t id;
    if (!c->fwd || !(c->fwd->flags & AF_ONLY_2026) || !b || b->type != MF_V_BOOL || !b->as.b || !bos ||
        !sep || sep->type != MF_V_BOOL || sep->as.b || !hfc_int(mf_meta_get(c->m, "tokenizer.ggml.bos_token_id"), &id))
        return json_null();
    json_t *pp = json_pack("{s:s, s:[{s:{s:s, s:i}}, {s:{s:s, s:i}}], s:[{s:{s:s, s:i}}, {s:{s:s, s:i}}, "
                           "{s:{s:s, s:i}}, {s:{s:s, s:i}}], s:{s:{s:s, s:[I], s:[s]}}}",
                           "type", "TemplateProcessing",
                           "single", "SpecialToken", "id", bos, "type_id", 0, "Sequence", "id", "A", "type_id", 0,
                           "pair", "SpecialToken", "id", bos, "type_id", 0, "Sequence", "id", "A", "type_id", 0,
                           "SpecialToken", "id", bos, "type_id", 1, "Sequence", "id", "B", "type_id", 1,
                           "special_tokens", bos, "id", bos, "ids", (json_int_t)id, "tokens", bos);
    return pp ? pp : json_null();
}

/* tokenizer.json of the GGUF's vocabulary; *vocab_txt: vocab.txt's text
 * for WordPiece (malloc'd, may be NULL). NULL when out of memory. */
static json_t *tokenizer_json(hfc *c, const vocab_view *v, bool bert, char **vocab_txt, size_t *vocab_txt_n)
{
    const mf_value *pv = mf_meta_get(c->m, "tokenizer.ggml.pre");
    const char *pre = pv && pv->type == MF_V_STR ? pv->as.s.ptr : "gpt-2";
    const struct pretok *pt = pretok_for(pre);
    if (!pt)
        pt = pretok_for(bert ? "jina-v2-en" : "gpt-2");
    json_t *tj = json_object(), *added = json_array(), *model = json_object(), *vocab = json_object();
    json_object_set_new(tj, "version", json_string("1.0"));
    json_object_set_new(tj, "truncation", json_null());
    json_object_set_new(tj, "padding", json_null());
    MF_VEC(char) vtxt = {0};
    for (size_t i = 0; i < v->n; i++) {
        int t = tok_type(v, i);
        char pad[32];
        snprintf(pad, sizeof(pad), "[PAD%zu]", i);
        if (t == TT_UNUSED && !strcmp(tok(v, i), pad))
            continue; /* ids past the tokenizer; config.json vocab_size keeps them */
        char *text = bert ? wordpiece_text(tok(v, i)) : strdup(tok(v, i));
        if (!text) {
            json_decref(tj);
            json_decref(added);
            json_decref(model);
            json_decref(vocab);
            free(vtxt.v);
            return NULL;
        }
        json_object_set_new(vocab, text, json_integer((json_int_t)i));
        if (t == TT_CONTROL || t == TT_USER_DEFINED)
            json_array_append_new(added, added_entry(i, text, t == TT_CONTROL));
        if (bert) {
            size_t k = strlen(text);
            if (!mf_vec_grow((void **)&vtxt.v, &vtxt.cap, vtxt.n + k + 1, 1)) {
                memcpy(vtxt.v + vtxt.n, text, k);
                vtxt.n += k;
                vtxt.v[vtxt.n++] = '\n';
            }
        }
        free(text);
    }
    json_object_set_new(tj, "added_tokens", added);
    json_object_set_new(tj, "normalizer", json_text(pt->normalizer));
    json_object_set_new(tj, "pre_tokenizer", json_text(pt->pre));
    json_object_set_new(tj, "post_processor", bos_template(c, v));
    json_object_set_new(tj, "decoder", json_text(pt->decoder));
    if (bert) {
        json_object_set_new(model, "type", json_string("WordPiece"));
        const char *unk = special_text(c, v, "tokenizer.ggml.unknown_token_id");
        json_object_set_new(model, "unk_token", json_string(unk ? unk : "[UNK]"));
        json_object_set_new(model, "continuing_subword_prefix", json_string("##"));
        json_object_set_new(model, "max_input_chars_per_word", json_integer(100));
        json_object_set_new(model, "vocab", vocab);
    } else {
        json_t *merges = json_array();
        for (size_t i = 0; v->merges && i < v->merges->as.arr.n; i++)
            json_array_append_new(merges, json_stringn(v->merges->as.arr.items[i].as.s.ptr,
                                                       v->merges->as.arr.items[i].as.s.len));
        json_object_set_new(model, "type", json_string("BPE"));
        json_object_set_new(model, "dropout", json_null());
        json_object_set_new(model, "unk_token", json_null());
        json_object_set_new(model, "continuing_subword_prefix", json_null());
        json_object_set_new(model, "end_of_word_suffix", json_null());
        json_object_set_new(model, "fuse_unk", json_false());
        json_object_set_new(model, "byte_fallback", json_false());
        json_object_set_new(model, "vocab", vocab);
        json_object_set_new(model, "merges", merges);
    }
    json_object_set_new(tj, "model", model);
    *vocab_txt = vtxt.v;
    *vocab_txt_n = vtxt.n;
    return tj;
}

static int write_tokenizer_json(hfc *c, const vocab_view *v, bool bert)
{
    char *vtxt = NULL;
    size_t vtxt_n = 0;
    json_t *tj = tokenizer_json(c, v, bert, &vtxt, &vtxt_n);
    char *text = tj ? mf_json_dumps(tj, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
    json_decref(tj);
    int rc = text ? hfc_write_bytes(c, "tokenizer.json", text, strlen(text)) : mf_oom(c->st, c->path);
    free(text);
    if (rc == 0 && bert)
        rc = hfc_write_bytes(c, "vocab.txt", vtxt ? vtxt : "", vtxt_n);
    free(vtxt);
    return rc;
}

/* The first id of the added tokens LlamaHfVocab appended past the model
 * vocabulary: the trailing run of USER_DEFINED/CONTROL tokens that holds a
 * USER_DEFINED one (none: n); -1 when a USER_DEFINED token is followed by
 * another type (not that layout). */
static long llama_hf_base(const vocab_view *v)
{
    long base = (long)v->n;
    bool user = false;
    for (long i = (long)v->n - 1; i >= 0; i--) {
        int t = tok_type(v, (size_t)i);
        if (t != TT_USER_DEFINED && t != TT_CONTROL)
            break;
        user |= t == TT_USER_DEFINED;
        base = i;
    }
    if (!user)
        base = (long)v->n;
    for (long i = 0; i < base; i++)
        if (tok_type(v, (size_t)i) == TT_USER_DEFINED)
            return -1;
    return base;
}

/* Merges of a vocabulary whose pieces are all the merges' results (a
 * SentencePiece BPE's, as transformers' LlamaConverter derives them): each
 * split of a piece into two pieces, by the piece's id. */
static json_t *derived_merges(const json_t *vocab, const vocab_view *v, long base)
{
    json_t *m = json_array();
    for (long i = 0; m && i < base; i++) {
        const char *t = tok(v, (size_t)i);
        size_t n = tok_len(v, (size_t)i);
        if (tok_type(v, (size_t)i) != TT_NORMAL || n < 2)
            continue;
        for (size_t k = 1; k < n; k++) {
            if (((unsigned char)t[k] & 0xC0) == 0x80)
                continue; /* inside a UTF-8 character */
            char *a = strndup(t, k), *b = strndup(t + k, n - k);
            if (a && b && json_object_get(vocab, a) && json_object_get(vocab, b)) {
                char *ab = malloc(n + 2);
                if (ab) {
                    snprintf(ab, n + 2, "%s %s", a, b);
                    json_array_append_new(m, json_string(ab));
                }
                free(ab);
            }
            free(a);
            free(b);
        }
    }
    return m;
}

/* DeciLM-7B's "llama" vocabulary came from LlamaHfVocab: it goes back as
 * the Llama-2-style tokenizer.json that class reads (BPE with
 * byte_fallback, the pieces up to the first appended added token as the
 * model vocabulary, CONTROL pieces and the appended tokens as added tokens,
 * LlamaConverter's normalizer and decoder). */
static int write_llama_hf_json(hfc *c, const vocab_view *v)
{
    long base = llama_hf_base(v);
    if (base < 0)
        return mf_fail(c->st, MF_ERR_UNSUPPORTED, c->path, -1, "the vocabulary has a user-defined token before a "
                       "normal one: not the layout of llama.cpp's LlamaHfVocab, no tokenizer.json for it");
    json_t *vocab = json_object(), *added = json_array();
    for (long i = 0; i < (long)v->n; i++) {
        int t = tok_type(v, (size_t)i);
        if (i < base)
            json_object_set_new(vocab, tok(v, (size_t)i), json_integer(i));
        if (i >= base || t == TT_CONTROL)
            json_array_append_new(added, added_entry((size_t)i, tok(v, (size_t)i), t == TT_CONTROL));
    }
    const char *unk = special_text(c, v, "tokenizer.ggml.unknown_token_id");
    json_t *model = json_pack("{s:s, s:n, s:o, s:n, s:n, s:b, s:b, s:o, s:o}", "type", "BPE", "dropout",
                              "unk_token", unk ? json_string(unk) : json_null(), "continuing_subword_prefix",
                              "end_of_word_suffix", "fuse_unk", 1, "byte_fallback", 1, "vocab", vocab,
                              "merges", derived_merges(vocab, v, base));
    json_t *tj = json_pack("{s:s, s:n, s:n, s:o, s:o, s:n, s:n, s:o, s:o}", "version", "1.0", "truncation",
                           "padding", "added_tokens", added, "normalizer",
                           json_text("{\"type\": \"Sequence\", \"normalizers\": [{\"type\": \"Prepend\", "
                                     "\"prepend\": \"\\u2581\"}, {\"type\": \"Replace\", \"pattern\": "
                                     "{\"String\": \" \"}, \"content\": \"\\u2581\"}]}"),
                           "pre_tokenizer", "post_processor", "decoder",
                           json_text("{\"type\": \"Sequence\", \"decoders\": [{\"type\": \"Replace\", \"pattern\": "
                                     "{\"String\": \"\\u2581\"}, \"content\": \" \"}, {\"type\": \"ByteFallback\"}, "
                                     "{\"type\": \"Fuse\"}, {\"type\": \"Strip\", \"content\": \" \", \"start\": 1, "
                                     "\"stop\": 0}]}"),
                           "model", model);
    char *text = tj ? mf_json_dumps(tj, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
    json_decref(tj);
    int rc = text ? hfc_write_bytes(c, "tokenizer.json", text, strlen(text)) : mf_oom(c->st, c->path);
    free(text);
    return rc;
}

json_t *mf_hf_tokenizer_json_of(mf_model *m, const char *path, mf_status *st)
{
    hfc c = {.path = path, .m = m, .st = st};
    vocab_view v;
    const mf_value *kind = mf_meta_get(m, "tokenizer.ggml.model");
    if (!kind || kind->type != MF_V_STR || (strcmp(kind->as.s.ptr, "gpt2") && strcmp(kind->as.s.ptr, "bert"))) {
        mf_fail(st, MF_ERR_UNSUPPORTED, path, -1, "tokenizer.ggml.model is not gpt2 or bert: no tokenizer.json");
        return NULL;
    }
    if (view_vocab(&c, &v))
        return NULL;
    char *vtxt = NULL;
    size_t vtxt_n;
    json_t *tj = tokenizer_json(&c, &v, !strcmp(kind->as.s.ptr, "bert"), &vtxt, &vtxt_n);
    free(vtxt);
    if (!tj)
        mf_oom(st, path);
    return tj;
}

/* ------------------------------------------------------ tokenizer_config */

static json_t *chat_template(const hfc *c)
{
    const mf_value *def = mf_meta_get(c->m, "tokenizer.chat_template");
    const mf_value *names = arr_of(c, "tokenizer.chat_templates", MF_V_STR);
    if (!names)
        return def && def->type == MF_V_STR ? json_stringn(def->as.s.ptr, def->as.s.len) : NULL;
    json_t *list = json_array();
    if (def && def->type == MF_V_STR) {
        json_t *e = json_object();
        json_object_set_new(e, "name", json_string("default"));
        json_object_set_new(e, "template", json_stringn(def->as.s.ptr, def->as.s.len));
        json_array_append_new(list, e);
    }
    for (size_t i = 0; i < names->as.arr.n; i++) {
        char key[300];
        snprintf(key, sizeof(key), "tokenizer.chat_template.%s", names->as.arr.items[i].as.s.ptr);
        const mf_value *t = mf_meta_get(c->m, key);
        if (!t || t->type != MF_V_STR)
            continue;
        json_t *e = json_object();
        json_object_set_new(e, "name", json_string(names->as.arr.items[i].as.s.ptr));
        json_object_set_new(e, "template", json_stringn(t->as.s.ptr, t->as.s.len));
        json_array_append_new(list, e);
    }
    return list;
}

const hfc_special_type hfc_special[HFC_N_SPECIAL] = {
    {"tokenizer.ggml.bos_token_id", "bos_token", "bos_token_id"},
    {"tokenizer.ggml.eos_token_id", "eos_token", "eos_token_id"},
    {"tokenizer.ggml.unknown_token_id", "unk_token", "unk_token_id"},
    {"tokenizer.ggml.seperator_token_id", "sep_token", "sep_token_id"},
    {"tokenizer.ggml.padding_token_id", "pad_token", "pad_token_id"},
    {"tokenizer.ggml.cls_token_id", "cls_token", "cls_token_id"},
    {"tokenizer.ggml.mask_token_id", "mask_token", "mask_token_id"},
};

static long meta_index(const hfc *c, const char *key)
{
    for (size_t i = 0; i < c->m->n_meta; i++)
        if (!strcmp(c->m->meta[i].key, key))
            return (long)i;
    return -1;
}

/* _set_vocab_glm sets bos and unk from fixed added tokens after the ones
 * it loaded: those written after every loaded one are not given back (the
 * forward converter sets them again in that place). order: the types by
 * position in the file. */
static void glm_fixed_specials(hfc *c, const int *order, int n)
{
    /* glm4moe: bos and unk; ChatGLM's GLM-4 path: eos, eot and unk */
    bool glm45 = !strcmp(c->arch, "glm4moe"), glm4 = c->fwd->vocab == V_CHATGLM;
    if (!glm45 && !glm4)
        return;
    int i = n;
    while (i > 0) {
        const char *t = hfc_special[order[i - 1]].name;
        if (strcmp(t, "unk_token") && strcmp(t, glm45 ? "bos_token" : "eos_token") &&
            (glm45 || strcmp(t, "eot_token")))
            break;
        i--;
    }
    for (; i < n; i++)
        c->special_in_tokcfg[order[i]] = c->special_in_config[order[i]] = false;
}

/* A GGUF of GLM-4 from its remote ChatGLM4Tokenizer (ChatGLMModel's
 * tiktoken path) can hold merges of 3 to 7 parts, which no tokenizer.json
 * merge can be: such a GGUF gets the family's tiktoken tokenizer.model
 * back (ChatGLM4Tokenizer, auto_map); one whose merges are all pairs gets
 * a tokenizer.json, which transformers reads with its own fast class and
 * llama.cpp's c392e50 converter reads too. */
static bool glm4_tiktoken_layout(const hfc *c, const vocab_view *v)
{
    if (c->fwd->vocab != V_CHATGLM || !v->merges)
        return false;
    for (size_t i = 0; i < v->merges->as.arr.n; i++) {
        const char *m = v->merges->as.arr.items[i].as.s.ptr;
        const char *sp = strchr(m, ' ');
        if (sp && strchr(sp + 1, ' '))
            return true;
    }
    return false;
}

/* Where each special id goes so that the forward converter writes them in
 * this GGUF's order: SpecialVocab first takes, in its type order, the
 * tokenizer_config.json contents it finds among tokenizer.json's added
 * tokens, then config.json's *_token_id. The GGUF's order is split into a
 * first run in type order whose tokens are added tokens (tokenizer_config)
 * and the rest (config.json). */
void hfc_plan_specials(hfc *c)
{
    vocab_view v;
    mf_status quiet;
    mf_status_init(&quiet);
    mf_status *keep = c->st;
    c->st = &quiet;
    bool have = view_vocab(c, &v) == 0;
    c->st = keep;
    mf_status_clear(&quiet);
    const mf_value *model = mf_meta_get(c->m, "tokenizer.ggml.model");
    bool has_tj = model && model->type == MF_V_STR &&
                  (!strcmp(model->as.s.ptr, "gpt2") || !strcmp(model->as.s.ptr, "bert")) &&
                  !(have && glm4_tiktoken_layout(c, &v));
    int order[HFC_N_SPECIAL], n = 0;
    for (int t = 0; t < HFC_N_SPECIAL; t++)
        if (meta_index(c, hfc_special[t].gguf) >= 0)
            order[n++] = t;
    for (int i = 1; i < n; i++) /* by position in the file */
        for (int j = i; j > 0 && meta_index(c, hfc_special[order[j]].gguf) <
                                     meta_index(c, hfc_special[order[j - 1]].gguf); j--) {
            int x = order[j];
            order[j] = order[j - 1];
            order[j - 1] = x;
        }
    bool in_run = true;
    int last = -1;
    for (int i = 0; i < n; i++) {
        int t = order[i];
        int64_t id = -1;
        hfc_int(mf_meta_get(c->m, hfc_special[t].gguf), &id);
        bool added = have && has_tj && id >= 0 && (uint64_t)id < v.n &&
                     (tok_type(&v, (size_t)id) == TT_CONTROL || tok_type(&v, (size_t)id) == TT_USER_DEFINED);
        in_run = in_run && added && t > last;
        if (in_run)
            last = t;
        c->special_in_tokcfg[t] = in_run || !added;
        c->special_in_config[t] = !in_run;
        /* NemotronModel.set_vocab writes pad 0 and unk 1 itself (V_NEMOTRON):
         * given back as well, the forward converter would write them twice */
        if (!strcmp(c->arch, "nemotron") && (!strcmp(hfc_special[t].name, "pad_token") ||
                                             !strcmp(hfc_special[t].name, "unk_token")))
            c->special_in_tokcfg[t] = c->special_in_config[t] = false;
    }
    glm_fixed_specials(c, order, n);
}

static int write_tokenizer_config(hfc *c, const vocab_view *v, bool spm, bool bert)
{
    json_t *tc = json_object(), *map = json_object(), *atd = json_object();
    for (size_t i = 0; i < HFC_N_SPECIAL; i++) {
        const char *t = special_text(c, v, hfc_special[i].gguf);
        if (!t)
            continue;
        char *text = bert ? wordpiece_text(t) : strdup(t);
        if (!text)
            return mf_oom(c->st, c->path);
        if (c->special_in_tokcfg[i])
            json_object_set_new(tc, hfc_special[i].name, json_string(text));
        json_object_set_new(map, hfc_special[i].name, json_string(text));
        free(text);
    }
    static const struct { const char *gguf, *hf; } adds[] = {
        {"tokenizer.ggml.add_bos_token", "add_bos_token"},
        {"tokenizer.ggml.add_eos_token", "add_eos_token"},
        /* gguf-py 0.18 (2026 layout): from the post-processor or this key;
         * this key gives it back, after bos and eos */
        {"tokenizer.ggml.add_sep_token", "add_sep_token"},
    };
    /* RoBERTa's, XLM-R's and T5's set_vocab write both themselves: given
     * back, the forward converter would write them twice */
    bool own_adds = c->fwd->vocab == V_ROBERTA || c->fwd->vocab == V_XLMR || c->fwd->vocab == V_T5 ||
                    c->fwd->vocab == V_JINA;
    for (size_t i = 0; i < 3 && !own_adds; i++) {
        const mf_value *b = mf_meta_get(c->m, adds[i].gguf);
        if (b && b->type == MF_V_BOOL && !hfc_fwd_constant(c, adds[i].gguf))
            json_object_set_new(tc, adds[i].hf, json_boolean(b->as.b));
    }
    /* LlamaModel.set_vocab reads add_prefix_space from tokenizer_config */
    const mf_value *asp = mf_meta_get(c->m, "tokenizer.ggml.add_space_prefix");
    if (asp && asp->type == MF_V_BOOL && c->fwd->vocab == V_LLAMA)
        json_object_set_new(tc, "add_prefix_space", json_boolean(asp->as.b));
    /* SentencePiece: user-defined tokens come back as added tokens */
    long unk = spm ? hfc_spm_unk(c, v) : -1;
    for (size_t i = 0; spm && i < v->n; i++) {
        bool control_unk = (long)i == unk && tok_type(v, i) == TT_CONTROL;
        if (tok_type(v, i) != TT_USER_DEFINED && !control_unk)
            continue;
        char id[24];
        snprintf(id, sizeof(id), "%zu", i);
        json_t *e = added_entry(i, tok(v, i), control_unk);
        json_object_del(e, "id");
        json_object_set_new(atd, id, e);
    }
    /* GLM-4's tiktoken layout: every added token (CONTROL when special) */
    bool glm4_tt = glm4_tiktoken_layout(c, v);
    for (size_t i = 0; glm4_tt && i < v->n; i++) {
        if (tok_type(v, i) != TT_CONTROL && tok_type(v, i) != TT_USER_DEFINED)
            continue;
        char id[24];
        snprintf(id, sizeof(id), "%zu", i);
        json_t *e = added_entry(i, tok(v, i), true);
        json_object_del(e, "id");
        json_object_set_new(e, "special", json_boolean(tok_type(v, i) == TT_CONTROL));
        json_object_set_new(atd, id, e);
    }
    if (json_object_size(atd))
        json_object_set_new(tc, "added_tokens_decoder", atd);
    else
        json_decref(atd);
    /* LlamaHfVocab types a token CONTROL when transformers lists it among
     * all_special_tokens: the CONTROL tokens that are no bos/eos/... */
    bool llama_hf = c->fwd->vocab == V_DECI && !spm && !bert && mf_meta_get(c->m, "tokenizer.ggml.scores");
    json_t *extra = llama_hf ? json_array() : NULL;
    for (size_t i = 0; extra && i < v->n; i++) {
        bool named = false;
        for (size_t k = 0; k < HFC_N_SPECIAL; k++) {
            const char *t = special_text(c, v, hfc_special[k].gguf);
            named |= t && !strcmp(t, tok(v, i));
        }
        if (tok_type(v, i) == TT_CONTROL && !named)
            json_array_append_new(extra, json_string(tok(v, i)));
    }
    if (extra && json_array_size(extra))
        json_object_set_new(tc, "additional_special_tokens", extra);
    else
        json_decref(extra);
    json_t *ct = chat_template(c);
    if (ct)
        json_object_set_new(tc, "chat_template", ct);
    const char *cls = spm ? "LlamaTokenizer" : bert ? "BertTokenizer" : llama_hf ? "LlamaTokenizerFast"
                                                                        : "PreTrainedTokenizerFast";
    if (c->fwd->vocab == V_XLMR || c->fwd->vocab == V_T5)
        cls = c->fwd->vocab == V_XLMR ? "XLMRobertaTokenizer" : "T5Tokenizer";
    if (c->fwd->vocab == V_RWKV) /* RWKV's own (remote-code) class reads rwkv_vocab_v20230424.txt */
        cls = "Rwkv6Tokenizer";
    if (c->fwd->vocab == V_CHATGLM && spm) /* the remote-code classes of the family's files */
        cls = "ChatGLMTokenizer";
    if (c->fwd->vocab == V_QWEN)
        cls = "QWenTokenizer";
    if (glm4_tt)
        cls = "ChatGLM4Tokenizer";
    json_object_set_new(tc, "tokenizer_class", json_string(cls));
    /* the remote classes as the families' tokenizer_config.json name them
     * (the code itself is not written: gguf2hf_config.c's card note) */
    const char *module = c->fwd->vocab == V_QWEN ? "tokenization_qwen" : "tokenization_chatglm";
    if (c->fwd->vocab == V_QWEN || (c->fwd->vocab == V_CHATGLM && (spm || glm4_tt))) {
        json_t *am = json_object(), *pair = json_array();
        char ref[64];
        snprintf(ref, sizeof(ref), "%s.%s", module, cls);
        json_array_append_new(pair, json_string(ref));
        json_array_append_new(pair, json_null());
        json_object_set_new(am, "AutoTokenizer", pair);
        json_object_set_new(tc, "auto_map", am);
    }
    json_object_set_new(tc, "clean_up_tokenization_spaces", json_false());
    int64_t ctx = 0;
    if (hfc_int(hfc_key(c, "context_length"), &ctx) && ctx > 0)
        json_object_set_new(tc, "model_max_length", json_integer(ctx));
    int rc = hfc_write_json(c, "tokenizer_config.json", tc);
    if (rc == 0)
        rc = hfc_write_json(c, "special_tokens_map.json", map);
    else
        json_decref(map);
    return rc;
}

/* "rwkv": the world vocabulary file back, one line "ID b'...' LENGTH" per
 * token after <s> (the [PADi] tail left to vocab_size): the GGUF text is
 * repr(bytes)[2:-1], so the line's literal is that text in the quotes
 * bytes.__repr__ chose, and the forward reader gives the same bytes. */
static int write_rwkv(hfc *c, const vocab_view *v)
{
    size_t last = v->n;
    while (last > 1 && tok_type(v, last - 1) == TT_UNUSED)
        last--;
    size_t cap = 64, k = 0;
    char *out = malloc(cap);
    int rc = out ? 0 : mf_oom(c->st, c->path);
    for (size_t i = 1; rc == 0 && i < last; i++) {
        size_t n = tok_len(v, i), nb = 0;
        uint8_t *b = malloc(n + 1);
        char *check = malloc(4 * n + 1);
        if (!b || !check) {
            rc = mf_oom(c->st, c->path);
        } else if (mf_rwkv_unrepr(tok(v, i), n, b, &nb) || mf_rwkv_repr(b, nb, check) != n ||
                   memcmp(check, tok(v, i), n)) {
            rc = mf_fail(c->st, MF_ERR_FORMAT, c->path, -1, "token %zu is not the repr of bytes an RWKV world "
                         "vocabulary gives", i);
        } else {
            char q = memchr(b, '\'', nb) && !memchr(b, '"', nb) ? '"' : '\'';
            if (k + n + 64 > cap) {
                cap = 2 * (k + n + 64);
                char *g = realloc(out, cap);
                if (!g)
                    rc = mf_oom(c->st, c->path);
                else
                    out = g;
            }
            if (rc == 0)
                k += (size_t)snprintf(out + k, cap - k, "%zu b%c%.*s%c %zu\n", i, q, (int)n, tok(v, i), q, nb);
        }
        free(b);
        free(check);
    }
    if (rc == 0)
        rc = hfc_write_bytes(c, "rwkv_vocab_v20230424.txt", out, k);
    free(out);
    return rc;
}

/* Qwen v1 (qwen.tiktoken) and GLM-4's remote tokenizer (tokenizer.model):
 * the NORMAL tokens back as tiktoken ranks, one "BASE64(bytes) RANK" line
 * per token in rank order (the byte-level text undone); the forward step
 * derives the same merges from these ranks. */
static int write_tiktoken(hfc *c, const vocab_view *v, const char *name)
{
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    bytes out = {0};
    uint8_t *raw = NULL;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < v->n; i++) {
        if (tok_type(v, i) != TT_NORMAL)
            continue;
        size_t n = tok_len(v, i), nb = 0;
        uint8_t *g = realloc(raw, n + 1);
        if (!g) {
            rc = mf_oom(c->st, c->path);
            break;
        }
        raw = g;
        if (mf_byte_level_bytes(tok(v, i), n, raw, &nb) || nb == 0) {
            rc = mf_fail(c->st, MF_ERR_FORMAT, c->path, -1, "token %zu is not byte-level BPE text", i);
            break;
        }
        char line[64];
        for (size_t k = 0; k < nb; k += 3) {
            uint32_t w = (uint32_t)raw[k] << 16 | (k + 1 < nb ? (uint32_t)raw[k + 1] << 8 : 0) |
                         (k + 2 < nb ? raw[k + 2] : 0);
            char q[4] = {b64[w >> 18], b64[(w >> 12) & 63], k + 1 < nb ? b64[(w >> 6) & 63] : '=',
                         k + 2 < nb ? b64[w & 63] : '='};
            put_raw(&out, q, 4);
        }
        int len = snprintf(line, sizeof(line), " %zu\n", i);
        put_raw(&out, line, (size_t)len);
    }
    free(raw);
    if (rc == 0)
        rc = out.v ? hfc_write_bytes(c, name, out.v, out.n) : mf_oom(c->st, c->path);
    free(out.v);
    return rc;
}

int hfc_write_tokenizer(hfc *c)
{
    const mf_value *model = mf_meta_get(c->m, "tokenizer.ggml.model");
    if (!model || model->type != MF_V_STR)
        return 0; /* a model without a tokenizer: weights and config only */
    vocab_view v;
    if (view_vocab(c, &v))
        return -1;
    const char *kind = model->as.s.ptr;
    /* XVERSE writes model "llama" from a tokenizer.json (its set_vocab reads
     * only that): it comes back as one */
    bool spm = !strcmp(kind, "llama") && c->fwd->vocab != V_XVERSE && c->fwd->vocab != V_DECI,
         bert = !strcmp(kind, "bert");
    int rc;
    if (spm)
        rc = write_spm(c, &v);
    else if (!strcmp(kind, "t5"))
        rc = write_unigram(c, &v, c->fwd->vocab == V_XLMR);
    else if (!strcmp(kind, "rwkv"))
        rc = write_rwkv(c, &v);
    else if (c->fwd->vocab == V_QWEN && !strcmp(kind, "gpt2"))
        rc = write_tiktoken(c, &v, "qwen.tiktoken");
    else if (!strcmp(kind, "gpt2") && glm4_tiktoken_layout(c, &v))
        rc = write_tiktoken(c, &v, "tokenizer.model");
    else if (!strcmp(kind, "llama") && c->fwd->vocab == V_DECI)
        rc = write_llama_hf_json(c, &v);
    else if (bert || !strcmp(kind, "gpt2") || !strcmp(kind, "llama"))
        rc = write_tokenizer_json(c, &v, bert);
    else
        return mf_fail(c->st, MF_ERR_UNSUPPORTED, c->path, -1,
                       "tokenizer.ggml.model \"%s\": mfmt writes llama (SentencePiece), t5 (Unigram), "
                       "gpt2 (BPE), bert (WordPiece) and rwkv (world) tokenizers",
                       kind);
    return rc ? rc : write_tokenizer_config(c, &v, spm, bert);
}
