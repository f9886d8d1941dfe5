/* bpe_steps.c - the normalizers and pre-tokenizers of a tokenizer.json, run
 * as the Hugging Face `tokenizers` library runs them (pre_tokenizers/
 * byte_level.rs, split.rs, digits.rs, punctuation.rs; normalizers/
 * prepend.rs, replace.rs; tokenizer/normalizer.rs for the split
 * behaviors). Every step works on one text piece at a time and drops empty
 * pieces, as PreTokenizedString::split does. Regexes: PCRE2 in place of
 * Oniguruma (onig_to_pcre2 says where the two read a pattern differently). */
#include "ops/hfconv/bpe_int.h"

#include <stdlib.h>

size_t bpe_utf8_len(uint8_t c)
{
    return c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
}

uint32_t bpe_utf8_decode(const char *s, size_t n)
{
    const uint8_t *u = (const uint8_t *)s;
    size_t len = bpe_utf8_len(u[0]);
    if (len > n)
        return u[0];
    uint32_t cp = len == 1 ? u[0] : u[0] & (0x7f >> len);
    for (size_t k = 1; k < len; k++)
        cp = cp << 6 | (u[k] & 0x3f);
    return cp;
}

int bpe_piece_push(bpe_pieces *ps, const char *s, size_t n, int32_t id)
{
    if (n == 0 && id < 0)
        return 0; /* empty splits are removed */
    char *copy = malloc(n + 1);
    if (!copy)
        return -1;
    memcpy(copy, s, n);
    copy[n] = 0;
    bpe_piece p = {copy, n, id, false};
    if (MF_VEC_PUSH(*ps, p)) {
        free(copy);
        return -1;
    }
    return 0;
}

void bpe_piece_mark_start(bpe_pieces *ps, size_t i, bool at_start)
{
    if (i < ps->n)
        ps->v[i].at_start = at_start;
}

void bpe_pieces_free(bpe_pieces *ps)
{
    for (size_t i = 0; i < ps->n; i++)
        free(ps->v[i].s);
    MF_VEC_FREE(*ps);
}

void bpe_steps_free(bpe_steps *s)
{
    for (size_t i = 0; i < s->n; i++) {
        pcre2_code_free(s->v[i].re);
        free(s->v[i].text);
    }
    MF_VEC_FREE(*s);
}

/* ------------------------------------------------------------- regexes */

typedef MF_VEC(char) charbuf;

static int put_str(charbuf *b, const char *s, size_t n)
{
    if (mf_vec_grow((void **)&b->v, &b->cap, b->n + n + 1, 1))
        return -1;
    memcpy(b->v + b->n, s, n);
    b->n += n;
    b->v[b->n] = 0;
    return 0;
}

/* "(?m", "(?i-m:", ...: an option group that names m. */
static bool names_option_m(const char *p, size_t n)
{
    for (size_t i = 2; i < n && strchr("imx-", p[i]); i++)
        if (p[i] == 'm')
            return true;
    return false;
}

/* tokenizers compiles its patterns with Oniguruma's default syntax
 * (ONIG_SYNTAX_ONIGURUMA, ONIG_OPTION_NONE, UTF-8). PCRE2 in UTF+UCP mode
 * with PCRE2_MULTILINE (Oniguruma's ^ and $ anchor at every line) reads
 * the same text alike, except:
 *  - \s: Oniguruma's is Unicode White_Space; PCRE2 10.42's (UCP) also has
 *    U+180E (in its \h list): written out as White_Space's list (\S inside
 *    a class cannot be: refused);
 *  - \h (Oniguruma: a hex digit), \w \W \b \B (Oniguruma's word has marks
 *    and connector punctuation, PCRE2's numbers), (?m) (Oniguruma: dot
 *    matches newline), && in a class: refused;
 *  - a class inside a class (Oniguruma: a union; `(`, `|`, `)` in a class
 *    are literals in both) is flattened into the outer class; a negated
 *    inner class or a range touching one is refused.
 * Unicode properties (\p{L}, \p{N}) come from each library's own Unicode
 * tables: characters assigned in a version one has and the other lacks
 * can differ. */
/* Unicode White_Space, as members of a PCRE2 class */
static const char white_space[] = "\\t-\\r\\x20\\x{85}\\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}"
                                  "\\x{202f}\\x{205f}\\x{3000}";

/* A class inside a class at pat[i] (Oniguruma: the union of its members):
 * flattened into the enclosing class, so its brackets are written as
 * nothing. What flattening would change is refused: a negated inner class,
 * a range ending at it ("a-[..."). A leading ']' or '-' of the inner class
 * is a literal there and is escaped. Returns the characters consumed. */
static size_t open_inner_class(const char *pat, size_t i, size_t n, charbuf *b, int *rc, const char **why)
{
    size_t k = 1;
    if (i + k < n && pat[i + k] == '^') {
        *why = "a negated class inside a class";
        *rc = -1;
        return k;
    }
    if (i >= 1 && pat[i - 1] == '-' && !(i >= 2 && pat[i - 2] == '\\')) {
        *why = "a range ending at a class inside a class";
        *rc = -1;
        return k;
    }
    if (i + k < n && (pat[i + k] == ']' || pat[i + k] == '-')) {
        *rc = put_str(b, "\\", 1) || put_str(b, pat + i + k, 1);
        k++;
    }
    return k;
}

static char *onig_to_pcre2(const char *pat, size_t n, const char **why)
{
    charbuf b = {0};
    int depth = 0; /* classes open: Oniguruma nests them (a union) */
    bool inner_closed = false; /* the last character closed an inner class */
    int rc = put_str(&b, "", 0);
    for (size_t i = 0; rc == 0 && i < n;) {
        char c = pat[i];
        bool in_class = depth > 0;
        if (c == '\\' && i + 1 < n) {
            char e = pat[i + 1];
            if (strchr("hHwWbB", e)) {
                *why = "\\h, \\w and \\b mean other things in Oniguruma than in PCRE2";
                rc = -1;
            } else if (e == 's') {
                rc = in_class ? put_str(&b, white_space, strlen(white_space))
                              : put_str(&b, "[", 1) || put_str(&b, white_space, strlen(white_space)) ||
                                put_str(&b, "]", 1);
            } else if (e == 'S') {
                if (in_class) {
                    *why = "\\S inside a class";
                    rc = -1;
                } else {
                    rc = put_str(&b, "[^", 2) || put_str(&b, white_space, strlen(white_space)) || put_str(&b, "]", 1);
                }
            } else {
                rc = put_str(&b, pat + i, 2);
            }
            i += 2;
            inner_closed = false;
            continue;
        }
        if (!in_class && c == '(' && i + 1 < n && pat[i + 1] == '?' && names_option_m(pat + i, n - i)) {
            *why = "(?m) is dot-all in Oniguruma";
            rc = -1;
            break;
        }
        if (in_class && c == '&' && i + 1 < n && pat[i + 1] == '&') {
            *why = "&& (class intersection) is Oniguruma's, not PCRE2's";
            rc = -1;
            break;
        }
        if (in_class && c == '-' && inner_closed && !(i + 1 < n && pat[i + 1] == ']')) {
            *why = "a range starting at a class inside a class";
            rc = -1;
            break;
        }
        inner_closed = false;
        size_t k = 1;
        if (in_class && c == '[' && !(i + 1 < n && pat[i + 1] == ':')) {
            depth++;
            i += open_inner_class(pat, i, n, &b, &rc, why);
            continue;
        }
        if (in_class && depth > 1 && c == ']') {
            depth--;
            inner_closed = true;
            i++;
            continue;
        }
        if (in_class && depth > 1 && c == '-' && i + 1 < n && pat[i + 1] == ']') {
            rc = put_str(&b, "\\-", 2); /* a trailing '-' of an inner class is a literal */
            i++;
            continue;
        }
        if (!in_class && c == '[') {
            depth = 1;
            if (i + k < n && pat[i + k] == '^')
                k++;
            if (i + k < n && pat[i + k] == ']') /* a leading ] is literal */
                k++;
        } else if (in_class && c == ']') {
            depth = 0;
        } else if (in_class && c == '[') { /* [:name:] */
            const char *end = strstr(pat + i, ":]");
            k = end && end < pat + n ? (size_t)(end - (pat + i)) + 2 : 1;
        }
        rc = put_str(&b, pat + i, k);
        i += k;
    }
    if (rc) {
        free(b.v);
        return NULL;
    }
    return b.v;
}

static pcre2_code *compile_onig(const char *pat, size_t n, const char *what, mf_status *st)
{
    const char *why = "out of memory";
    char *p = onig_to_pcre2(pat, n, &why);
    if (!p) {
        mf_fail(st, MF_ERR_UNSUPPORTED, what, -1, "tokenizer.json: regex /%.*s/: %s", (int)n, pat, why);
        return NULL;
    }
    int err;
    PCRE2_SIZE at;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)p, PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_UCP | PCRE2_MULTILINE,
                                   &err, &at, NULL);
    if (!re) {
        PCRE2_UCHAR msg[160];
        pcre2_get_error_message(err, msg, sizeof(msg));
        mf_fail(st, MF_ERR_UNSUPPORTED, what, -1, "tokenizer.json: regex /%.*s/ at %zu: %s", (int)n, pat,
                (size_t)at, (const char *)msg);
    }
    free(p);
    return re;
}

static pcre2_code *compile_literal(const char *s, size_t n, const char *what, mf_status *st)
{
    int err;
    PCRE2_SIZE at;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)s, n, PCRE2_UTF | PCRE2_LITERAL, &err, &at, NULL);
    if (!re)
        mf_fail(st, MF_ERR_FORMAT, what, -1, "tokenizer.json: pattern \"%.*s\" is not valid UTF-8", (int)n, s);
    return re;
}

/* ------------------------------------------------- finding, splitting */

typedef struct span {
    size_t a, b;
    bool match;
} span;
typedef MF_VEC(span) spans;

static int push_span(spans *sp, size_t a, size_t b, bool match)
{
    span s = {a, b, match};
    return MF_VEC_PUSH(*sp, s);
}

/* Pattern::find_matches for a regex: the matches and the gaps between
 * them, covering the text. Iterated as the onig crate's find_iter: an
 * empty match right where the previous match ended is skipped. */
static int find_matches(const pcre2_code *re, const char *s, size_t n, spans *out, const char *what,
                        mf_status *st)
{
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
    if (!md)
        return mf_oom(st, what);
    size_t start = 0, prev = 0, last_end = SIZE_MAX;
    int rc = 0;
    while (rc == 0 && start <= n) {
        int m = pcre2_match(re, (PCRE2_SPTR)s, n, start, 0, md, NULL);
        if (m == PCRE2_ERROR_NOMATCH)
            break;
        if (m < 0) {
            PCRE2_UCHAR msg[160];
            pcre2_get_error_message(m, msg, sizeof(msg));
            rc = mf_fail(st, MF_ERR_UNSUPPORTED, what, -1, "tokenizer.json: regex match: %s", (const char *)msg);
            break;
        }
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        size_t a = ov[0], b = ov[1];
        if (a == b && b == last_end) {
            start = b + (b < n ? bpe_utf8_len((uint8_t)s[b]) : 1);
            continue;
        }
        if ((a > prev && push_span(out, prev, a, false)) || push_span(out, a, b, true))
            rc = mf_oom(st, what);
        prev = last_end = start = b;
    }
    if (rc == 0 && prev < n && push_span(out, prev, n, false))
        rc = mf_oom(st, what);
    pcre2_match_data_free(md);
    return rc;
}

/* NormalizedString::split: which spans become pieces (merged per the
 * behavior) and which are removed. Out: spans whose match flag now means
 * "remove". */
static int apply_behavior(const spans *in, bpe_behavior beh, spans *out)
{
    bool prev_match = false;
    if (beh == B_MERGED_NEXT) { /* folded from the right */
        for (size_t k = in->n; k-- > 0;) {
            const span *x = &in->v[k];
            if (x->match && !prev_match && out->n)
                out->v[out->n - 1].a = x->a;
            else if (push_span(out, x->a, x->b, false))
                return -1;
            prev_match = x->match;
        }
        for (size_t i = 0, j = out->n ? out->n - 1 : 0; i < j; i++, j--) {
            span t = out->v[i];
            out->v[i] = out->v[j];
            out->v[j] = t;
        }
        return 0;
    }
    for (size_t k = 0; k < in->n; k++) {
        const span *x = &in->v[k];
        bool merge = (beh == B_CONTIGUOUS && x->match == prev_match) ||
                     (beh == B_MERGED_PREVIOUS && x->match && !prev_match);
        if (merge && out->n)
            out->v[out->n - 1].b = x->b;
        else if (push_span(out, x->a, x->b, beh == B_REMOVED && x->match))
            return -1;
        prev_match = x->match;
    }
    return 0;
}

static int split_piece(const pcre2_code *re, bpe_behavior beh, bool invert, const bpe_piece *p, bpe_pieces *out,
                       const char *what, mf_status *st)
{
    spans found = {0}, kept = {0};
    int rc = find_matches(re, p->s, p->n, &found, what, st);
    for (size_t i = 0; rc == 0 && invert && i < found.n; i++)
        found.v[i].match = !found.v[i].match;
    if (rc == 0 && apply_behavior(&found, beh, &kept))
        rc = mf_oom(st, what);
    size_t first = out->n;
    for (size_t i = 0; rc == 0 && i < kept.n; i++)
        if (!kept.v[i].match && bpe_piece_push(out, p->s + kept.v[i].a, kept.v[i].b - kept.v[i].a, -1))
            rc = mf_oom(st, what);
    /* the piece that begins at offset 0 keeps the parent's start */
    if (rc == 0 && kept.n && !kept.v[0].match && kept.v[0].b > 0)
        bpe_piece_mark_start(out, first, p->at_start);
    MF_VEC_FREE(found);
    MF_VEC_FREE(kept);
    return rc;
}

/* bytes_to_unicode (GPT-2): printable Latin-1 bytes stand for themselves,
 * the other 68 for U+0100 onwards, in byte order. */
uint32_t mf_bpe_byte_char(uint8_t b)
{
    if ((b >= '!' && b <= '~') || (b >= 0xa1 && b <= 0xac) || b >= 0xae)
        return b;
    return 256u + (b <= 0x20 ? b : b <= 0xa0 ? 33u + (b - 0x7fu) : 67u);
}

static int push_byte_level(bpe_pieces *out, const char *s, size_t n)
{
    char *m = malloc(n * 3 + 1);
    if (!m)
        return -1;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += mf_utf8_put((uint8_t *)m + k, mf_bpe_byte_char((uint8_t)s[i]));
    int rc = bpe_piece_push(out, m, k, -1);
    free(m);
    return rc;
}

/* The GPT-2 split ByteLevel uses when use_regex is on. */
static const char gpt2_regex[] = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

static int byte_level_piece(const bpe_step *s, const bpe_piece *p, bpe_pieces *out, const char *what,
                            mf_status *st)
{
    bpe_pieces parts = {0};
    bpe_piece whole = *p;
    char *spaced = NULL;
    if (s->add_prefix_space && p->s[0] != ' ') {
        if (!(spaced = malloc(p->n + 2)))
            return mf_oom(st, what);
        spaced[0] = ' ';
        memcpy(spaced + 1, p->s, p->n + 1);
        whole.s = spaced;
        whole.n = p->n + 1;
    }
    int rc = s->re ? split_piece(s->re, B_ISOLATED, false, &whole, &parts, what, st)
                   : bpe_piece_push(&parts, whole.s, whole.n, -1) ? mf_oom(st, what) : 0;
    whole.at_start = p->at_start;
    if (!s->re && parts.n)
        parts.v[0].at_start = p->at_start;
    for (size_t i = 0; rc == 0 && i < parts.n; i++) {
        if (push_byte_level(out, parts.v[i].s, parts.v[i].n))
            rc = mf_oom(st, what);
        else
            bpe_piece_mark_start(out, out->n - 1, parts.v[i].at_start);
    }
    bpe_pieces_free(&parts);
    free(spaced);
    return rc;
}

static int prepend_piece(const bpe_step *s, const bpe_piece *p, bpe_pieces *out, const char *what, mf_status *st)
{
    size_t k = strlen(s->text);
    char *t = malloc(k + p->n + 1);
    if (!t)
        return mf_oom(st, what);
    memcpy(t, s->text, k);
    memcpy(t + k, p->s, p->n);
    int rc = bpe_piece_push(out, t, k + p->n, -1) ? mf_oom(st, what) : 0;
    if (rc == 0)
        bpe_piece_mark_start(out, out->n - 1, p->at_start);
    free(t);
    return rc;
}

static int replace_piece(const bpe_step *s, const bpe_piece *p, bpe_pieces *out, const char *what, mf_status *st)
{
    PCRE2_SIZE cap = p->n * 2 + 64;
    for (int tries = 0; tries < 8; tries++) {
        PCRE2_UCHAR *buf = malloc(cap);
        if (!buf)
            return mf_oom(st, what);
        PCRE2_SIZE len = cap;
        int m = pcre2_substitute(s->re, (PCRE2_SPTR)p->s, p->n, 0,
                                 PCRE2_SUBSTITUTE_GLOBAL | PCRE2_SUBSTITUTE_LITERAL | PCRE2_SUBSTITUTE_OVERFLOW_LENGTH,
                                 NULL, NULL, (PCRE2_SPTR)s->text, PCRE2_ZERO_TERMINATED, buf, &len);
        if (m >= 0) {
            size_t before = out->n;
            int rc = bpe_piece_push(out, (const char *)buf, len, -1) ? mf_oom(st, what) : 0;
            if (rc == 0 && out->n > before)
                bpe_piece_mark_start(out, before, p->at_start);
            free(buf);
            return rc;
        }
        free(buf);
        if (m != PCRE2_ERROR_NOMEMORY)
            return mf_fail(st, MF_ERR_UNSUPPORTED, what, -1, "tokenizer.json: Replace normalizer failed (%d)", m);
        cap = len; /* the length it needs */
    }
    return mf_oom(st, what);
}

/* Metaspace::pre_tokenize: spaces become the replacement, which is put in
 * front (always, or on the input's first piece), then the piece splits
 * before each replacement (MergedWithNext). */
static int metaspace_piece(const bpe_step *s, const bpe_piece *p, bpe_pieces *out, const char *what, mf_status *st)
{
    size_t r = strlen(s->text), spaces = 0;
    for (size_t i = 0; i < p->n; i++)
        spaces += p->s[i] == ' ';
    char *t = malloc(p->n + spaces * r + r + 1);
    if (!t)
        return mf_oom(st, what);
    size_t k = 0;
    bool lead = p->n >= r && !memcmp(p->s, s->text, r);
    if (p->s[0] == ' ')
        lead = true; /* it will start with the replacement */
    if (!lead && (s->prepend == P_ALWAYS || (s->prepend == P_FIRST && p->at_start))) {
        memcpy(t, s->text, r);
        k = r;
    }
    for (size_t i = 0; i < p->n; i++) {
        if (p->s[i] == ' ') {
            memcpy(t + k, s->text, r);
            k += r;
        } else {
            t[k++] = p->s[i];
        }
    }
    bpe_piece whole = {t, k, -1, p->at_start};
    int rc = 0;
    if (s->split)
        rc = split_piece(s->re, B_MERGED_NEXT, false, &whole, out, what, st);
    else if (bpe_piece_push(out, t, k, -1))
        rc = mf_oom(st, what);
    else
        bpe_piece_mark_start(out, out->n - 1, p->at_start);
    free(t);
    return rc;
}

static int run_step(const bpe_step *s, const bpe_piece *p, bpe_pieces *out, const char *what, mf_status *st)
{
    switch (s->kind) {
    case S_METASPACE: return metaspace_piece(s, p, out, what, st);
    case S_SPLIT: return split_piece(s->re, s->behavior, s->invert, p, out, what, st);
    case S_BYTELEVEL: return byte_level_piece(s, p, out, what, st);
    case S_PREPEND: return prepend_piece(s, p, out, what, st);
    case S_REPLACE: return replace_piece(s, p, out, what, st);
    }
    return -1;
}

int bpe_run_steps(const bpe_steps *s, bpe_pieces *ps, const char *what, mf_status *st)
{
    for (size_t k = 0; k < s->n; k++) {
        bpe_pieces next = {0};
        int rc = 0;
        for (size_t i = 0; rc == 0 && i < ps->n; i++) {
            const bpe_piece *p = &ps->v[i];
            if (p->id >= 0) /* an added token: untouched */
                rc = bpe_piece_push(&next, p->s, p->n, p->id) ? mf_oom(st, what) : 0;
            else
                rc = run_step(&s->v[k], p, &next, what, st);
        }
        bpe_pieces_free(ps);
        *ps = next;
        if (rc)
            return rc;
    }
    return 0;
}

/* ------------------------------------------------------------- parsing */

static const char *type_of(const json_t *j)
{
    return json_string_value(json_object_get(j, "type"));
}

static bool flag(const json_t *j, const char *key, bool dflt)
{
    json_t *v = json_object_get(j, key);
    return json_is_boolean(v) ? json_is_true(v) : dflt;
}

static int push_step(bpe_steps *out, bpe_step s, const char *what, mf_status *st)
{
    if (MF_VEC_PUSH(*out, s)) {
        pcre2_code_free(s.re);
        free(s.text);
        return mf_oom(st, what);
    }
    return 0;
}

static int parse_behavior(const json_t *j, bpe_behavior *out, const char *what, mf_status *st)
{
    static const char *const names[] = {"Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"};
    const char *b = json_string_value(json_object_get(j, "behavior"));
    if (!b) {
        *out = B_ISOLATED;
        return 0;
    }
    for (int i = 0; i < 5; i++)
        if (!strcmp(b, names[i])) {
            *out = (bpe_behavior)i;
            return 0;
        }
    return mf_fail(st, MF_ERR_UNSUPPORTED, what, -1, "tokenizer.json: split behavior \"%s\"", b);
}

/* {"String": s} or {"Regex": r} */
static pcre2_code *parse_pattern(const json_t *j, const char *what, mf_status *st)
{
    json_t *pat = json_object_get(j, "pattern");
    json_t *lit = json_object_get(pat, "String"), *rx = json_object_get(pat, "Regex");
    if (json_is_string(lit))
        return compile_literal(json_string_value(lit), json_string_length(lit), what, st);
    if (json_is_string(rx))
        return compile_onig(json_string_value(rx), json_string_length(rx), what, st);
    mf_fail(st, MF_ERR_FORMAT, what, -1, "tokenizer.json: a pattern is neither a String nor a Regex");
    return NULL;
}

static int regex_step(bpe_steps *out, const char *pat, bpe_behavior beh, const char *what, mf_status *st)
{
    bpe_step s = {.kind = S_SPLIT, .behavior = beh};
    if (!(s.re = compile_onig(pat, strlen(pat), what, st)))
        return -1;
    return push_step(out, s, what, st);
}

static int parse_pre_one(const json_t *j, bpe_steps *out, int depth, const char *what, mf_status *st);
static int parse_norm_one(const json_t *j, bpe_steps *out, int depth, const char *what, mf_status *st);

static int parse_sequence(const json_t *list, bpe_steps *out, int depth, bool pre, const char *what,
                          mf_status *st)
{
    if (!json_is_array(list) || depth > 8)
        return mf_fail(st, MF_ERR_FORMAT, what, -1, "tokenizer.json: a Sequence without a list (or nested too deep)");
    for (size_t i = 0; i < json_array_size(list); i++) {
        const json_t *e = json_array_get(list, i);
        if (pre ? parse_pre_one(e, out, depth + 1, what, st) : parse_norm_one(e, out, depth + 1, what, st))
            return -1;
    }
    return 0;
}

/* Punctuation: char::is_ascii_punctuation or a Unicode P* category. */
static const char punctuation_class[] = "[\\p{P}!-/:-@\\[-`{-~]";

/* Metaspace: replacement (one character), prepend_scheme (or the older
 * add_prefix_space: true is "always"), split; defaults "\u2581", always,
 * true. */
static int parse_metaspace(const json_t *j, bpe_steps *out, const char *what, mf_status *st)
{
    const json_t *rep = json_object_get(j, "replacement"), *aps = json_object_get(j, "add_prefix_space");
    const char *scheme = json_string_value(json_object_get(j, "prepend_scheme"));
    const char *r = json_is_string(rep) ? json_string_value(rep) : "\xe2\x96\x81";
    size_t rn = strlen(r);
    if (!rn || bpe_utf8_len((uint8_t)r[0]) != rn)
        return mf_fail(st, MF_ERR_FORMAT, what, -1, "tokenizer.json: Metaspace replacement is not one character");
    bpe_step s = {.kind = S_METASPACE, .split = flag(j, "split", true),
                  .prepend = scheme ? (!strcmp(scheme, "first") ? P_FIRST : !strcmp(scheme, "never") ? P_NEVER : P_ALWAYS)
                                    : json_is_false(aps) ? P_NEVER : P_ALWAYS};
    if (scheme && strcmp(scheme, "first") && strcmp(scheme, "never") && strcmp(scheme, "always"))
        return mf_fail(st, MF_ERR_UNSUPPORTED, what, -1, "tokenizer.json: Metaspace prepend_scheme \"%s\"", scheme);
    if (!(s.text = strdup(r)))
        return mf_oom(st, what);
    if (!(s.re = compile_literal(r, rn, what, st))) {
        free(s.text);
        return -1;
    }
    return push_step(out, s, what, st);
}

static int parse_pre_one(const json_t *j, bpe_steps *out, int depth, const char *what, mf_status *st)
{
    const char *t = type_of(j);
    bpe_behavior beh = B_ISOLATED;
    if (!t)
        return mf_fail(st, MF_ERR_FORMAT, what, -1, "tokenizer.json: a pre_tokenizer without a type");
    if (!strcmp(t, "Sequence"))
        return parse_sequence(json_object_get(j, "pretokenizers"), out, depth, true, what, st);
    if (!strcmp(t, "ByteLevel")) { /* ByteLevel::default(): both true */
        bpe_step s = {.kind = S_BYTELEVEL, .add_prefix_space = flag(j, "add_prefix_space", true)};
        if (flag(j, "use_regex", true) && !(s.re = compile_onig(gpt2_regex, strlen(gpt2_regex), what, st)))
            return -1;
        return push_step(out, s, what, st);
    }
    if (!strcmp(t, "Split")) {
        bpe_step s = {.kind = S_SPLIT, .invert = flag(j, "invert", false)};
        if (parse_behavior(j, &s.behavior, what, st) || !(s.re = parse_pattern(j, what, st)))
            return -1;
        return push_step(out, s, what, st);
    }
    if (!strcmp(t, "Metaspace"))
        return parse_metaspace(j, out, what, st);
    if (!strcmp(t, "Digits")) /* char::is_numeric: Nd, Nl, No */
        return regex_step(out, "\\p{N}", flag(j, "individual_digits", false) ? B_ISOLATED : B_CONTIGUOUS, what, st);
    if (!strcmp(t, "Punctuation"))
        return parse_behavior(j, &beh, what, st) ? -1 : regex_step(out, punctuation_class, beh, what, st);
    return mf_fail(st, MF_ERR_UNSUPPORTED, what, -1, "tokenizer.json: pre_tokenizer %s is not run by mfmt's encoder", t);
}

/* NFC is taken as the identity: exact for text already in NFC, as the
 * check text is (tests/test_bpe_encode.c); composing needs Unicode's
 * tables, which mfmt does not carry. */
static int parse_norm_one(const json_t *j, bpe_steps *out, int depth, const char *what, mf_status *st)
{
    const char *t = type_of(j);
    if (!t)
        return mf_fail(st, MF_ERR_FORMAT, what, -1, "tokenizer.json: a normalizer without a type");
    if (!strcmp(t, "Sequence"))
        return parse_sequence(json_object_get(j, "normalizers"), out, depth, false, what, st);
    if (!strcmp(t, "NFC"))
        return 0;
    if (!strcmp(t, "Prepend") && json_is_string(json_object_get(j, "prepend"))) {
        bpe_step s = {.kind = S_PREPEND, .text = strdup(json_string_value(json_object_get(j, "prepend")))};
        return s.text ? push_step(out, s, what, st) : mf_oom(st, what);
    }
    if (!strcmp(t, "Replace") && json_is_string(json_object_get(j, "content"))) {
        bpe_step s = {.kind = S_REPLACE};
        if (!(s.re = parse_pattern(j, what, st)))
            return -1;
        if (!(s.text = strdup(json_string_value(json_object_get(j, "content"))))) {
            pcre2_code_free(s.re);
            return mf_oom(st, what);
        }
        return push_step(out, s, what, st);
    }
    return mf_fail(st, MF_ERR_UNSUPPORTED, what, -1, "tokenizer.json: normalizer %s is not run by mfmt's encoder", t);
}

int bpe_parse_normalizer(const json_t *j, bpe_steps *out, const char *what, mf_status *st)
{
    return !j || json_is_null(j) ? 0 : parse_norm_one(j, out, 0, what, st);
}

int bpe_parse_pre_tokenizer(const json_t *j, bpe_steps *out, const char *what, mf_status *st)
{
    return !j || json_is_null(j) ? 0 : parse_pre_one(j, out, 0, what, st);
}
