/* bpe_encode.c - tokenizer.encode() of a byte-level BPE tokenizer.json, as
 * the Hugging Face `tokenizers` library computes it (tokenizer/mod.rs
 * encode_single_sequence): added tokens split off (added_vocabulary.rs),
 * normalizer and pre-tokenizer (bpe_steps.c), the BPE model
 * (models/bpe/model.rs merge_word, word.rs merge_all), then the
 * post-processor's special tokens (processors/: template.rs, roberta.rs, bert.rs) or, for the
 * transformers classes that rebuild it, the add_bos/add_eos template. */
#include "ops/hfconv/bpe_int.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct bpe_added {
    char *s; /* what is matched: the content, normalized when the token is */
    size_t n;
    const char *content; /* in the tokenizer.json (a reference is held) */
    size_t content_n;
    int32_t id;
    bool single_word, lstrip, rstrip, normalized;
} bpe_added;

/* (left id, right id) -> rank and the merged token's id */
typedef struct pair_slot {
    int32_t a, b, rank, id; /* rank < 0: empty */
} pair_slot;

struct mf_bpe {
    json_t *tj;    /* held: vocab and added token texts live in it */
    json_t *vocab; /* model.vocab */
    bpe_steps normalizer, pre;
    bpe_added *added;
    size_t n_added;
    size_t first[257]; /* added tokens sorted by first byte: first[c]..first[c+1] */
    pcre2_code *word_re; /* single_word's word characters, when a token has it */
    pair_slot *pairs;
    size_t pair_mask;
    bool ignore_merges, byte_fallback, fuse_unk;
    int32_t unk;
    mf_bpe_ids prefix, suffix; /* what add_special_tokens puts around */
    char *what;
};

enum { MAX_MERGES = 1 << 24, MAX_ADDED = 1 << 22 };

/* ------------------------------------------------------------- vocab */

static int32_t vocab_id(const mf_bpe *b, const char *s, size_t n)
{
    json_t *v = json_object_getn(b->vocab, s, n);
    return json_is_integer(v) ? (int32_t)json_integer_value(v) : -1;
}

static int check_vocab(const mf_bpe *b, mf_status *st)
{
    const char *k;
    json_t *v;
    json_object_foreach(b->vocab, k, v) {
        json_int_t id = json_is_integer(v) ? json_integer_value(v) : -1;
        if (id < 0 || id > INT32_MAX)
            return mf_fail(st, MF_ERR_FORMAT, b->what, -1, "tokenizer.json: vocab \"%s\" has no valid id", k);
    }
    return 0;
}

/* An id by token text: an added token's, else the vocabulary's
 * (Tokenizer::token_to_id). */
static int32_t token_to_id(const mf_bpe *b, const char *s)
{
    size_t n = strlen(s);
    for (size_t i = 0; i < b->n_added; i++)
        if (b->added[i].content_n == n && !memcmp(b->added[i].content, s, n))
            return b->added[i].id;
    return vocab_id(b, s, n);
}

/* ------------------------------------------------------------ merges */

static size_t pair_hash(int32_t a, int32_t b)
{
    uint64_t h = ((uint64_t)(uint32_t)a << 32 | (uint32_t)b) * 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 17);
}

static pair_slot *pair_find(const mf_bpe *b, int32_t l, int32_t r)
{
    for (size_t k = pair_hash(l, r) & b->pair_mask;; k = (k + 1) & b->pair_mask) {
        pair_slot *p = &b->pairs[k];
        if (p->rank < 0 || (p->a == l && p->b == r))
            return p;
    }
}

/* One entry of "merges": "a b" (exactly one space, as tokenizers splits
 * it) or ["a", "b"]. */
static bool merge_parts(const json_t *m, const char **a, size_t *an, const char **b, size_t *bn)
{
    if (json_is_array(m) && json_array_size(m) == 2 && json_is_string(json_array_get(m, 0)) &&
        json_is_string(json_array_get(m, 1))) {
        *a = json_string_value(json_array_get(m, 0));
        *an = json_string_length(json_array_get(m, 0));
        *b = json_string_value(json_array_get(m, 1));
        *bn = json_string_length(json_array_get(m, 1));
        return true;
    }
    if (!json_is_string(m))
        return false;
    const char *s = json_string_value(m), *sp = memchr(s, ' ', json_string_length(m));
    if (!sp || memchr(sp + 1, ' ', json_string_length(m) - (size_t)(sp + 1 - s)))
        return false;
    *a = s;
    *an = (size_t)(sp - s);
    *b = sp + 1;
    *bn = json_string_length(m) - *an - 1;
    return true;
}

static int add_merge(mf_bpe *b, const json_t *m, size_t rank, char **buf, size_t *cap, mf_status *st)
{
    const char *l, *r;
    size_t ln, rn;
    if (!merge_parts(m, &l, &ln, &r, &rn))
        return mf_fail(st, MF_ERR_FORMAT, b->what, -1, "tokenizer.json: merges[%zu] is not \"a b\" nor [a, b]", rank);
    if (ln + rn + 1 > *cap) {
        char *t = realloc(*buf, ln + rn + 1);
        if (!t)
            return mf_oom(st, b->what);
        *buf = t;
        *cap = ln + rn + 1;
    }
    memcpy(*buf, l, ln);
    memcpy(*buf + ln, r, rn);
    int32_t li = vocab_id(b, l, ln), ri = vocab_id(b, r, rn), id = vocab_id(b, *buf, ln + rn);
    if (li < 0 || ri < 0 || id < 0) /* tokenizers: MergeTokenOutOfVocabulary */
        return mf_fail(st, MF_ERR_FORMAT, b->what, -1, "tokenizer.json: merges[%zu] has a token not in the vocab", rank);
    pair_slot *p = pair_find(b, li, ri);
    *p = (pair_slot){li, ri, (int32_t)rank, id}; /* a repeated pair: the later rank, as a HashMap collect */
    return 0;
}

static int load_merges(mf_bpe *b, const json_t *merges, mf_status *st)
{
    size_t n = json_array_size(merges), cap = 64;
    if (n > MAX_MERGES)
        return mf_fail(st, MF_ERR_FORMAT, b->what, -1, "tokenizer.json: %zu merges (more than %d)", n, MAX_MERGES);
    while (cap < 2 * n + 2)
        cap *= 2;
    b->pairs = malloc(cap * sizeof(pair_slot));
    if (!b->pairs)
        return mf_oom(st, b->what);
    for (size_t i = 0; i < cap; i++)
        b->pairs[i].rank = -1;
    b->pair_mask = cap - 1;
    char *buf = NULL;
    size_t bcap = 0;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = add_merge(b, json_array_get(merges, i), i, &buf, &bcap, st);
    free(buf);
    return rc;
}

/* ------------------------------------------------------ added tokens */

static int cmp_first_byte(const void *x, const void *y)
{
    const bpe_added *a = x, *b = y;
    return (int)(uint8_t)a->s[0] - (int)(uint8_t)b->s[0];
}

/* An added token's id as AddedVocabulary::add_tokens gives it, the file's
 * tokens in order: an earlier added token's, else the model's, else the
 * next free one past the model (tokenizers warns when the file says
 * otherwise, and goes by its own). */
static int32_t added_id(const mf_bpe *b, const char *s, size_t n, int32_t *max_added)
{
    for (size_t i = 0; i < b->n_added; i++)
        if (b->added[i].content_n == n && !memcmp(b->added[i].content, s, n))
            return b->added[i].id;
    int32_t id = vocab_id(b, s, n);
    if (id < 0) {
        int32_t model_n = (int32_t)json_object_size(b->vocab);
        id = *max_added < 0 ? model_n : *max_added >= model_n || model_n == 0 ? *max_added + 1 : model_n;
    }
    if (id > *max_added)
        *max_added = id;
    return id;
}

/* refresh_added_tokens: a normalized token is matched as the normalizer
 * writes its content. */
static int added_pattern(const mf_bpe *b, const char *s, size_t n, bool normalized, bpe_added *a, mf_status *st)
{
    bpe_pieces ps = {0};
    if (bpe_piece_push(&ps, s, n, -1))
        return mf_oom(st, b->what);
    if (normalized && bpe_run_steps(&b->normalizer, &ps, b->what, st)) {
        bpe_pieces_free(&ps);
        return -1;
    }
    a->s = ps.n == 1 ? ps.v[0].s : NULL; /* the steps keep one piece, or none when it became empty */
    a->n = ps.n == 1 ? ps.v[0].n : 0;
    if (ps.n == 1)
        ps.v[0].s = NULL;
    bpe_pieces_free(&ps);
    return 0;
}

static int word_class(mf_bpe *b, mf_status *st)
{
    int err;
    PCRE2_SIZE at;
    /* the regex crate's Unicode \w, as ends_with_word / starts_with_word use it */
    b->word_re = pcre2_compile((PCRE2_SPTR) "[\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\p{Join_Control}]",
                               PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_UCP | PCRE2_ANCHORED, &err, &at, NULL);
    return b->word_re ? 0 : mf_oom(st, b->what);
}

static int load_added(mf_bpe *b, const json_t *list, mf_status *st)
{
    size_t n = json_array_size(list);
    if (n > MAX_ADDED)
        return mf_fail(st, MF_ERR_FORMAT, b->what, -1, "tokenizer.json: %zu added tokens", n);
    b->added = calloc(n ? n : 1, sizeof(bpe_added));
    if (!b->added)
        return mf_oom(st, b->what);
    bool single_word = false;
    int32_t max_added = -1;
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_array_get(list, i), *c = json_object_get(e, "content"), *norm = json_object_get(e, "normalized");
        if (!json_is_string(c))
            return mf_fail(st, MF_ERR_FORMAT, b->what, -1, "tokenizer.json: added_tokens[%zu] has no content", i);
        if (!json_string_length(c))
            continue; /* tokenizers ignores empty tokens */
        bpe_added a = {.id = added_id(b, json_string_value(c), json_string_length(c), &max_added),
                       .content = json_string_value(c),
                       .content_n = json_string_length(c),
                       .single_word = json_is_true(json_object_get(e, "single_word")),
                       .lstrip = json_is_true(json_object_get(e, "lstrip")),
                       .rstrip = json_is_true(json_object_get(e, "rstrip")),
                       .normalized = norm ? json_is_true(norm) : !json_is_true(json_object_get(e, "special"))};
        if (added_pattern(b, json_string_value(c), json_string_length(c), a.normalized, &a, st))
            return -1;
        if (a.n == 0) { /* normalized away: it can never match */
            free(a.s);
            continue;
        }
        b->added[b->n_added++] = a;
        single_word |= a.single_word;
    }
    qsort(b->added, b->n_added, sizeof(bpe_added), cmp_first_byte);
    for (size_t c = 0, i = 0; c <= 256; c++) {
        while (i < b->n_added && (size_t)(uint8_t)b->added[i].s[0] < c)
            i++;
        b->first[c] = i;
    }
    return single_word ? word_class(b, st) : 0;
}

/* char::is_whitespace: Unicode White_Space */
static bool is_white(uint32_t c)
{
    return (c >= 9 && c <= 13) || c == ' ' || c == 0x85 || c == 0xa0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200a) ||
           c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
}

static size_t char_start_before(const char *s, size_t end)
{
    size_t i = end - 1;
    while (i > 0 && ((uint8_t)s[i] & 0xc0) == 0x80)
        i--;
    return i;
}

static bool is_word_at(const mf_bpe *b, const char *s, size_t n, size_t at)
{
    pcre2_match_data *md = pcre2_match_data_create(1, NULL);
    bool r = md && pcre2_match(b->word_re, (PCRE2_SPTR)s, n, at, 0, md, NULL) >= 0;
    pcre2_match_data_free(md);
    return r;
}

/* single_word: the match must not touch a word character on either side */
static bool single_word_ok(const mf_bpe *b, const char *s, size_t n, size_t start, size_t stop)
{
    if (start > 0 && is_word_at(b, s, n, char_start_before(s, start)))
        return false;
    return stop == n || !is_word_at(b, s, n, stop);
}

/* The longest added token of this pass that starts at s[at] (NULL: none). */
static const bpe_added *added_at(const mf_bpe *b, bool normalized, const char *s, size_t n, size_t at)
{
    const bpe_added *best = NULL;
    uint8_t c = (uint8_t)s[at];
    for (size_t i = b->first[c]; i < b->first[c + 1]; i++) {
        const bpe_added *a = &b->added[i];
        if (a->normalized == normalized && a->n <= n - at && (!best || a->n > best->n) && !memcmp(s + at, a->s, a->n))
            best = a;
    }
    return best;
}

/* AddedVocabulary::split_with_indices over one text piece: leftmost
 * longest matches (its Aho-Corasick), then single_word, lstrip, rstrip. */
static int split_added_piece(const mf_bpe *b, bool normalized, const bpe_piece *p, bpe_pieces *out)
{
    const char *s = p->s;
    size_t n = p->n, start_offset = 0, pos = 0, first = out->n;
    while (pos < n) {
        const bpe_added *a = added_at(b, normalized, s, n, pos);
        if (!a) {
            pos++;
            continue;
        }
        size_t start = pos, stop = pos + a->n;
        pos = stop;
        if (a->single_word && !single_word_ok(b, s, n, start, stop))
            continue;
        if (a->lstrip) {
            size_t ns = start;
            while (ns > 0) {
                size_t c = char_start_before(s, ns);
                if (!is_white(bpe_utf8_decode(s + c, n - c)))
                    break;
                ns = c;
            }
            start = ns > start_offset ? ns : start_offset;
        }
        while (a->rstrip && stop < n && is_white(bpe_utf8_decode(s + stop, n - stop)))
            stop += bpe_utf8_len((uint8_t)s[stop]);
        if ((start_offset < start && bpe_piece_push(out, s + start_offset, start - start_offset, -1)) ||
            bpe_piece_push(out, s + start, stop > start ? stop - start : 0, a->id))
            return -1;
        start_offset = stop;
    }
    if (start_offset < n && bpe_piece_push(out, s + start_offset, n - start_offset, -1))
        return -1;
    if (out->n > first && out->v[first].id < 0) /* text from offset 0 */
        bpe_piece_mark_start(out, first, p->at_start);
    return 0;
}

static int split_added(const mf_bpe *b, bool normalized, bpe_pieces *ps, mf_status *st)
{
    bpe_pieces next = {0};
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < ps->n; i++) {
        const bpe_piece *p = &ps->v[i];
        rc = p->id >= 0 ? bpe_piece_push(&next, p->s, p->n, p->id) : split_added_piece(b, normalized, p, &next);
    }
    bpe_pieces_free(ps);
    *ps = next;
    return rc ? mf_oom(st, b->what) : 0;
}

/* ---------------------------------------------------- post-processor */

static int push_ids(mf_bpe_ids *v, const json_t *ids)
{
    for (size_t i = 0; i < json_array_size(ids); i++) {
        json_int_t x = json_integer_value(json_array_get(ids, i));
        if (!json_is_integer(json_array_get(ids, i)) || x < 0 || x > INT32_MAX || MF_VEC_PUSH(*v, (int32_t)x))
            return -1;
    }
    return 0;
}

/* TemplateProcessing's "single": its SpecialTokens before and after $A. */
static int template_single(const json_t *pp, mf_bpe_ids *pre, mf_bpe_ids *post)
{
    const json_t *single = json_object_get(pp, "single"), *specials = json_object_get(pp, "special_tokens");
    int seen_a = 0;
    for (size_t i = 0; i < json_array_size(single); i++) {
        const json_t *item = json_array_get(single, i), *sp = json_object_get(item, "SpecialToken");
        const char *seq = json_string_value(json_object_get(json_object_get(item, "Sequence"), "id"));
        if (seq) {
            if (strcmp(seq, "A"))
                return -1;
            seen_a++;
            continue;
        }
        const char *name = json_string_value(json_object_get(sp, "id"));
        const json_t *tok = name ? json_object_get(specials, name) : NULL;
        if (!tok || push_ids(seen_a ? post : pre, json_object_get(tok, "ids")))
            return -1;
    }
    return seen_a == 1 ? 0 : -1;
}

/* RobertaProcessing / BertProcessing: cls $A sep; cls and sep are
 * [text, id]. */
static int cls_sep(const json_t *pp, mf_bpe_ids *pre, mf_bpe_ids *post)
{
    const json_t *cls = json_array_get(json_object_get(pp, "cls"), 1), *sep = json_array_get(json_object_get(pp, "sep"), 1);
    if (!json_is_integer(cls) || !json_is_integer(sep) || json_integer_value(cls) < 0 || json_integer_value(sep) < 0 ||
        json_integer_value(cls) > INT32_MAX || json_integer_value(sep) > INT32_MAX)
        return -1;
    if (MF_VEC_PUSH(*pre, (int32_t)json_integer_value(cls)) || MF_VEC_PUSH(*post, (int32_t)json_integer_value(sep)))
        return -1;
    return 0;
}

/* One processor wraps what the earlier ones made: its prefix goes first,
 * its suffix last. */
static int parse_post(mf_bpe *b, const json_t *pp, int depth, mf_status *st)
{
    const char *t = json_string_value(json_object_get(pp, "type"));
    if (!pp || json_is_null(pp) || (t && !strcmp(t, "ByteLevel")))
        return 0;
    if (t && !strcmp(t, "Sequence") && depth < 8) {
        const json_t *list = json_object_get(pp, "processors");
        for (size_t i = 0; i < json_array_size(list); i++)
            if (parse_post(b, json_array_get(list, i), depth + 1, st))
                return -1;
        return 0;
    }
    mf_bpe_ids pre = {0}, post = {0};
    int rc = !t ? -1 : !strcmp(t, "TemplateProcessing") ? template_single(pp, &pre, &post)
           : !strcmp(t, "RobertaProcessing") || !strcmp(t, "BertProcessing") ? cls_sep(pp, &pre, &post) : -1;
    for (size_t i = 0; rc == 0 && i < b->prefix.n; i++)
        rc = MF_VEC_PUSH(pre, b->prefix.v[i]);
    for (size_t i = 0; rc == 0 && i < post.n; i++)
        rc = MF_VEC_PUSH(b->suffix, post.v[i]);
    MF_VEC_FREE(post);
    if (rc) {
        MF_VEC_FREE(pre);
        return mf_fail(st, MF_ERR_UNSUPPORTED, b->what, -1, "tokenizer.json: post_processor %s is not run by "
                       "mfmt's encoder (or is malformed)", t ? t : "without a type");
    }
    MF_VEC_FREE(b->prefix);
    b->prefix = pre;
    return 0;
}

/* transformers' fast classes that rebuild the post-processor in __init__
 * (update_post_processor) from add_bos_token / add_eos_token, with their
 * defaults; tokenizer_class "X" loads "XFast" when that exists. */
static const struct tf_class {
    const char *name, *bos, *eos;
    bool add_bos, add_eos;
} tf_classes[] = {
    {"LlamaTokenizer", "<s>", "</s>", true, false},
    {"CodeLlamaTokenizer", "<s>", "</s>", true, false},
    {"GemmaTokenizer", "<bos>", "<eos>", true, false},
    {"CohereTokenizer", "<BOS_TOKEN>", "<|END_OF_TURN_TOKEN|>", true, false},
    {"GPTNeoXTokenizer", "<|endoftext|>", "<|endoftext|>", false, false},
};

static const struct tf_class *tf_class_of(const json_t *tcfg)
{
    const char *c = json_string_value(json_object_get(tcfg, "tokenizer_class"));
    size_t n = c ? strlen(c) : 0;
    if (n > 4 && !strcmp(c + n - 4, "Fast"))
        n -= 4;
    for (size_t i = 0; c && i < sizeof(tf_classes) / sizeof(tf_classes[0]); i++)
        if (strlen(tf_classes[i].name) == n && !strncmp(tf_classes[i].name, c, n))
            return &tf_classes[i];
    return NULL;
}

/* tokenizer_config.json's bos_token / eos_token: a string or an AddedToken
 * {"content": ...}; absent: the class default; null: none. */
static const char *config_token(const json_t *tcfg, const char *key, const char *dflt)
{
    const json_t *v = json_object_get(tcfg, key);
    if (!v)
        return dflt;
    return json_is_string(v) ? json_string_value(v) : json_string_value(json_object_get(v, "content"));
}

static int class_template(mf_bpe *b, const struct tf_class *c, const json_t *tcfg, mf_status *st)
{
    const json_t *ab = json_object_get(tcfg, "add_bos_token"), *ae = json_object_get(tcfg, "add_eos_token");
    bool add_bos = ab ? json_is_true(ab) : c->add_bos, add_eos = ae ? json_is_true(ae) : c->add_eos;
    MF_VEC_FREE(b->prefix);
    MF_VEC_FREE(b->suffix);
    const char *bos = config_token(tcfg, "bos_token", c->bos), *eos = config_token(tcfg, "eos_token", c->eos);
    int32_t bos_id = bos ? token_to_id(b, bos) : -1, eos_id = eos ? token_to_id(b, eos) : -1;
    if ((add_bos && bos_id < 0) || (add_eos && eos_id < 0)) /* transformers: ValueError */
        return mf_fail(st, MF_ERR_FORMAT, b->what, -1, "tokenizer_config.json: add_bos_token/add_eos_token without "
                       "a known bos/eos token");
    if ((add_bos && MF_VEC_PUSH(b->prefix, bos_id)) || (add_eos && MF_VEC_PUSH(b->suffix, eos_id)))
        return mf_oom(st, b->what);
    return 0;
}

/* ------------------------------------------------------------- model */

static int load_model(mf_bpe *b, const json_t *model, mf_status *st)
{
    const char *type = json_string_value(json_object_get(model, "type"));
    if (!type || strcmp(type, "BPE"))
        return mf_fail(st, MF_ERR_UNSUPPORTED, b->what, -1, "tokenizer.json: a %s model, not BPE", type ? type : "typeless");
    const json_t *drop = json_object_get(model, "dropout");
    if ((drop && !json_is_null(drop) && json_number_value(drop) != 0.0) ||
        json_string_length(json_object_get(model, "continuing_subword_prefix")) > 0 ||
        json_string_length(json_object_get(model, "end_of_word_suffix")) > 0) /* "" is none */
        return mf_fail(st, MF_ERR_UNSUPPORTED, b->what, -1, "tokenizer.json: BPE dropout or subword affixes are not "
                       "run by mfmt's encoder");
    b->vocab = json_object_get(model, "vocab");
    if (!json_is_object(b->vocab) || !json_is_array(json_object_get(model, "merges")))
        return mf_fail(st, MF_ERR_FORMAT, b->what, -1, "tokenizer.json: the BPE model needs a vocab and merges");
    b->ignore_merges = json_is_true(json_object_get(model, "ignore_merges"));
    b->byte_fallback = json_is_true(json_object_get(model, "byte_fallback"));
    b->fuse_unk = json_is_true(json_object_get(model, "fuse_unk"));
    b->unk = -1;
    const json_t *unk = json_object_get(model, "unk_token");
    if (json_is_string(unk) && (b->unk = vocab_id(b, json_string_value(unk), json_string_length(unk))) < 0)
        return mf_fail(st, MF_ERR_FORMAT, b->what, -1, "tokenizer.json: unk_token is not in the vocab");
    return check_vocab(b, st) || load_merges(b, json_object_get(model, "merges"), st) ? -1 : 0;
}

mf_bpe *mf_bpe_new(const json_t *tj, const json_t *tcfg, const char *what, mf_status *st)
{
    mf_bpe *b = calloc(1, sizeof(*b));
    if (!b || !(b->what = strdup(what ? what : "tokenizer.json"))) {
        free(b);
        mf_oom(st, what);
        return NULL;
    }
    b->tj = json_incref((json_t *)tj);
    const struct tf_class *cls = tf_class_of(tcfg);
    int rc = load_model(b, json_object_get(tj, "model"), st);
    if (rc == 0)
        rc = bpe_parse_normalizer(json_object_get(tj, "normalizer"), &b->normalizer, b->what, st);
    if (rc == 0)
        rc = load_added(b, json_object_get(tj, "added_tokens"), st);
    if (rc == 0)
        rc = bpe_parse_pre_tokenizer(json_object_get(tj, "pre_tokenizer"), &b->pre, b->what, st);
    if (rc == 0)
        rc = cls ? class_template(b, cls, tcfg, st) : parse_post(b, json_object_get(tj, "post_processor"), 0, st);
    if (rc) {
        mf_bpe_free(b);
        return NULL;
    }
    return b;
}

void mf_bpe_free(mf_bpe *b)
{
    if (!b)
        return;
    bpe_steps_free(&b->normalizer);
    bpe_steps_free(&b->pre);
    for (size_t i = 0; b->added && i < b->n_added; i++)
        free(b->added[i].s);
    free(b->added);
    pcre2_code_free(b->word_re);
    free(b->pairs);
    MF_VEC_FREE(b->prefix);
    MF_VEC_FREE(b->suffix);
    json_decref(b->tj);
    free(b->what);
    free(b);
}

/* ----------------------------------------------------------- encoding */

/* byte_fallback: "<0xAB>" for every byte, when all of them exist. */
static bool push_byte_tokens(const mf_bpe *b, const char *s, size_t n, mf_bpe_ids *w, bool *oom)
{
    int32_t ids[4];
    for (size_t i = 0; i < n; i++) {
        char t[8];
        snprintf(t, sizeof(t), "<0x%02X>", (uint8_t)s[i]);
        if ((ids[i] = vocab_id(b, t, 6)) < 0)
            return false;
    }
    for (size_t i = 0; i < n; i++)
        *oom |= MF_VEC_PUSH(*w, ids[i]) != 0;
    return true;
}

/* BPE::merge_word's first half: one symbol per character (unknown ones as
 * byte tokens or unk, fused when fuse_unk, or dropped). */
static int word_symbols(const mf_bpe *b, const char *s, size_t n, mf_bpe_ids *w)
{
    bool oom = false, pending_unk = false;
    for (size_t i = 0; i < n && !oom;) {
        size_t len = bpe_utf8_len((uint8_t)s[i]);
        len = len > n - i ? n - i : len;
        int32_t id = vocab_id(b, s + i, len);
        if (id >= 0) {
            if (pending_unk)
                oom |= MF_VEC_PUSH(*w, b->unk) != 0;
            pending_unk = false;
            oom |= MF_VEC_PUSH(*w, id) != 0;
        } else if (!(b->byte_fallback && push_byte_tokens(b, s + i, len, w, &oom)) && b->unk >= 0) {
            if (pending_unk && !b->fuse_unk)
                oom |= MF_VEC_PUSH(*w, b->unk) != 0;
            pending_unk = true;
        }
        i += len;
    }
    if (pending_unk)
        oom |= MF_VEC_PUSH(*w, b->unk) != 0;
    return oom ? -1 : 0;
}

/* Word::merge_all: the pair of lowest rank merges first, the leftmost of
 * equal ranks (its heap orders by rank, then position). */
static void merge_all(const mf_bpe *b, mf_bpe_ids *w)
{
    for (;;) {
        size_t best = SIZE_MAX;
        int32_t best_rank = INT32_MAX, best_id = -1;
        for (size_t i = 0; i + 1 < w->n; i++) {
            const pair_slot *p = pair_find(b, w->v[i], w->v[i + 1]);
            if (p->rank >= 0 && p->rank < best_rank) {
                best = i;
                best_rank = p->rank;
                best_id = p->id;
            }
        }
        if (best == SIZE_MAX)
            return;
        w->v[best] = best_id;
        memmove(w->v + best + 1, w->v + best + 2, (w->n - best - 2) * sizeof(int32_t));
        w->n--;
    }
}

static int encode_word(const mf_bpe *b, const char *s, size_t n, mf_bpe_ids *out)
{
    int32_t whole = b->ignore_merges ? vocab_id(b, s, n) : -1;
    if (whole >= 0)
        return MF_VEC_PUSH(*out, whole);
    mf_bpe_ids w = {0};
    int rc = word_symbols(b, s, n, &w);
    if (rc == 0)
        merge_all(b, &w);
    for (size_t i = 0; rc == 0 && i < w.n; i++)
        rc = MF_VEC_PUSH(*out, w.v[i]);
    MF_VEC_FREE(w);
    return rc;
}

static int push_all(mf_bpe_ids *out, const mf_bpe_ids *ids)
{
    for (size_t i = 0; i < ids->n; i++)
        if (MF_VEC_PUSH(*out, ids->v[i]))
            return -1;
    return 0;
}

int mf_bpe_encode(const mf_bpe *b, const char *text, size_t n, bool add_special, mf_bpe_ids *out, mf_status *st)
{
    int64_t bad = mf_utf8_check((const uint8_t *)text, n);
    if (bad >= 0)
        return mf_fail(st, MF_ERR_FORMAT, b->what, bad, "text to encode is not UTF-8");
    bpe_pieces ps = {0};
    int rc = bpe_piece_push(&ps, text, n, -1) ? mf_oom(st, b->what) : 0;
    bpe_piece_mark_start(&ps, 0, true);
    if (rc == 0)
        rc = split_added(b, false, &ps, st);
    if (rc == 0)
        rc = bpe_run_steps(&b->normalizer, &ps, b->what, st);
    if (rc == 0)
        rc = split_added(b, true, &ps, st);
    if (rc == 0)
        rc = bpe_run_steps(&b->pre, &ps, b->what, st);
    if (rc == 0 && add_special && push_all(out, &b->prefix))
        rc = mf_oom(st, b->what);
    for (size_t i = 0; rc == 0 && i < ps.n; i++) {
        const bpe_piece *p = &ps.v[i];
        if (p->id >= 0 ? MF_VEC_PUSH(*out, p->id) : encode_word(b, p->s, p->n, out))
            rc = mf_oom(st, b->what);
    }
    if (rc == 0 && add_special && push_all(out, &b->suffix))
        rc = mf_oom(st, b->what);
    bpe_pieces_free(&ps);
    return rc;
}
