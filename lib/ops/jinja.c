/* jinja.c - a Jinja2 template as jinja2 3.x reads it (lexer.py, parser.py),
 * then an abstract interpretation of its tree (jinja_eval.c) that judges
 * every attribute it can reach. This file: the lexer and the parser.
 *
 * Lexing follows lexer.py with the default delimiters ({{ }}, {% %}, {# #},
 * "-" and "+" whitespace control, {% raw %}), no line statements: names
 * (unicode identifiers), strings decoded as Python's "unicode-escape" does
 * (lexer.py: value.encode("ascii", "backslashreplace").decode(
 * "unicode-escape")), integers and floats with underscores, the operator
 * table, and the bracket balance that lets "}}" close a dict inside a tag.
 * Parsing follows parser.py's precedence (condexpr < or < and < not <
 * compare < + - < ~ < * / // % < ** < unary < postfix/filter/test) and its
 * statements. */
#include "ops/jinja_int.h"

#include <stdarg.h>
#include <stdlib.h>

/* ---------------------------------------------------------------- errors */

static void jl_error(jparse *p, uint64_t off, const char *fmt, ...) MF_PRINTF(3, 4);
static void jl_error(jparse *p, uint64_t off, const char *fmt, ...)
{
    if (p->failed)
        return;
    p->failed = true;
    p->err_off = off;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err, sizeof(p->err), fmt, ap);
    va_end(ap);
}

/* ----------------------------------------------------------------- lexer */

static bool is_name_start(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}

static bool is_name_char(unsigned char c)
{
    return is_name_start(c) || (c >= '0' && c <= '9');
}

static bool is_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static bool push_tok(jparse *p, jtok t)
{
    if (p->toks.n >= JINJA_MAX_TOKENS) {
        jl_error(p, t.off, "more than %d tokens: not analysed", JINJA_MAX_TOKENS);
        return false;
    }
    if (MF_VEC_PUSH(p->toks, t)) {
        jl_error(p, t.off, "out of memory");
        return false;
    }
    return true;
}

/* UTF-8 of code point cp into out (4 bytes at most); its length. */
static size_t utf8_put(uint32_t cp, char *out)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xc0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xe0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    out[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* \N{NAME}: the names of U+005F (the one character a dunder needs) are
 * known; any other name leaves the string unresolved. */
static bool named_escape(const char *name, size_t n, uint32_t *cp)
{
    static const char *const low_line[] = {"LOW LINE", "SPACING UNDERSCORE"};
    for (size_t i = 0; i < 2; i++)
        if (strlen(low_line[i]) == n && strncasecmp(name, low_line[i], n) == 0) {
            *cp = '_';
            return true;
        }
    return false;
}

/* The string literal s[0..n) (between its quotes) as Python's
 * "unicode-escape" codec decodes it. tok->str_ok false: it holds a
 * \N{...} name mfmt does not know. Returns false on an escape Python
 * refuses (jinja2 then fails to compile the template). */
static bool decode_string(jparse *p, const char *s, size_t n, jtok *tok)
{
    char *out = mf_arena_alloc(p->a, n + 1);
    if (!out) {
        jl_error(p, tok->off, "out of memory");
        return false;
    }
    size_t o = 0;
    tok->str_ok = true;
    for (size_t i = 0; i < n;) {
        if (s[i] != '\\') {
            out[o++] = s[i++];
            continue;
        }
        if (i + 1 >= n) {
            jl_error(p, tok->off + i, "a string ends with a backslash (\\ at end of string)");
            return false;
        }
        char c = s[i + 1];
        i += 2;
        uint32_t cp = 0;
        int digits = 0;
        switch (c) {
        case '\n': continue; /* line continuation */
        case '\\': out[o++] = '\\'; continue;
        case '\'': out[o++] = '\''; continue;
        case '"': out[o++] = '"'; continue;
        case 'a': out[o++] = '\a'; continue;
        case 'b': out[o++] = '\b'; continue;
        case 'f': out[o++] = '\f'; continue;
        case 'n': out[o++] = '\n'; continue;
        case 'r': out[o++] = '\r'; continue;
        case 't': out[o++] = '\t'; continue;
        case 'v': out[o++] = '\v'; continue;
        case 'x': digits = 2; break;
        case 'u': digits = 4; break;
        case 'U': digits = 8; break;
        case 'N': {
            const char *close = i < n && s[i] == '{' ? memchr(s + i, '}', n - i) : NULL;
            if (!close) {
                jl_error(p, tok->off + i, "malformed \\N character escape");
                return false;
            }
            if (!named_escape(s + i + 1, (size_t)(close - s - i - 1), &cp))
                tok->str_ok = false;
            i = (size_t)(close - s) + 1;
            o += utf8_put(cp, out + o);
            continue;
        }
        default:
            if (c >= '0' && c <= '7') { /* up to three octal digits */
                cp = (uint32_t)(c - '0');
                for (int k = 0; k < 2 && i < n && s[i] >= '0' && s[i] <= '7'; k++)
                    cp = cp * 8 + (uint32_t)(s[i++] - '0');
                o += utf8_put(cp, out + o);
                continue;
            }
            out[o++] = '\\'; /* an unknown escape stays as written */
            out[o++] = c;
            continue;
        }
        for (int k = 0; k < digits; k++) {
            int h = i < n ? hexval(s[i]) : -1;
            if (h < 0) {
                jl_error(p, tok->off + i, "truncated \\%c escape", c);
                return false;
            }
            cp = cp * 16 + (uint32_t)h;
            i++;
        }
        if (cp > 0x10ffff) {
            jl_error(p, tok->off + i, "illegal Unicode character in \\U escape");
            return false;
        }
        o += utf8_put(cp, out + o);
    }
    out[o] = 0;
    tok->s = out;
    tok->slen = o;
    return true;
}

static size_t lex_digits(const char *s, size_t i, size_t n, int (*ok)(int))
{
    /* digits with single underscores between them: (_?D)+ after a first D */
    while (i < n) {
        if (ok((unsigned char)s[i]))
            i++;
        else if (s[i] == '_' && i + 1 < n && ok((unsigned char)s[i + 1]))
            i += 2;
        else
            break;
    }
    return i;
}

static int is_dec(int c) { return c >= '0' && c <= '9'; }
static int is_hex(int c) { return hexval((char)c) >= 0; }
static int is_oct(int c) { return c >= '0' && c <= '7'; }
static int is_bin(int c) { return c == '0' || c == '1'; }

/* A number at s[i]: lexer.py's float_re (not right after a '.') before
 * integer_re. */
static size_t lex_number(jparse *p, const char *s, size_t i, size_t n, jtok *t)
{
    size_t start = i;
    t->type = JT_INT;
    if (s[i] == '0' && i + 1 < n && strchr("xXoObB", s[i + 1]) && s[i + 1]) {
        int (*ok)(int) = (s[i + 1] | 0x20) == 'x' ? is_hex : (s[i + 1] | 0x20) == 'o' ? is_oct : is_bin;
        size_t j = i + 2;
        if (j < n && s[j] == '_')
            j++;
        if (j < n && ok((unsigned char)s[j])) {
            i = lex_digits(s, j, n, ok);
            t->ival_ok = false; /* the value is not needed: it is a number */
            return i;
        }
    }
    size_t j = lex_digits(s, i, n, is_dec);
    bool after_dot = start > 0 && s[start - 1] == '.';
    bool flt = false;
    if (!after_dot) {
        size_t k = j;
        if (k + 1 < n && s[k] == '.' && is_dec((unsigned char)s[k + 1])) {
            k = lex_digits(s, k + 1, n, is_dec);
            flt = true;
        }
        if (k < n && (s[k] | 0x20) == 'e') {
            size_t e = k + 1;
            if (e < n && (s[e] == '+' || s[e] == '-'))
                e++;
            if (e < n && is_dec((unsigned char)s[e])) {
                k = lex_digits(s, e, n, is_dec);
                flt = true;
            }
        }
        if (flt) {
            t->type = JT_FLOAT;
            return k;
        }
    }
    /* integer: [1-9](_?\d)* | 0(_?0)* */
    int64_t v = 0;
    bool fits = true;
    for (size_t k = i; k < j; k++)
        if (s[k] != '_') {
            if (v > (INT64_MAX - 9) / 10)
                fits = false;
            else
                v = v * 10 + (s[k] - '0');
        }
    t->ival = v;
    t->ival_ok = fits;
    (void)p;
    return j;
}

static const char *const ops2[] = {"//", "**", "==", "!=", ">=", "<="};
static const char ops1[] = "+-/*%~[](){}><=.:|,;";

/* The end of a tag at s[i] ("-%}" / "+%}" / "%}" or the variable's). */
static size_t tag_end_len(const char *s, size_t i, size_t n, char close)
{
    size_t j = i;
    if (j < n && (s[j] == '-' || s[j] == '+'))
        j++;
    if (j + 1 < n && s[j] == close && s[j + 1] == '}')
        return j + 2 - i;
    return 0;
}

/* Tokens of one tag, from s[i] to its end; returns the byte after it. */
static size_t lex_tag(jparse *p, const char *s, size_t i, size_t n, char close, int end_type)
{
    char stack[JINJA_MAX_DEPTH];
    int depth = 0;
    while (!p->failed) {
        while (i < n && is_space((unsigned char)s[i]))
            i++;
        if (i >= n) {
            jl_error(p, i, "unexpected end of template: the tag is not closed");
            return n;
        }
        size_t el = depth == 0 ? tag_end_len(s, i, n, close) : 0;
        if (el) {
            push_tok(p, (jtok){.type = end_type, .off = i});
            return i + el;
        }
        jtok t = {.off = i};
        unsigned char c = (unsigned char)s[i];
        if (is_name_start(c)) {
            size_t j = i;
            while (j < n && is_name_char((unsigned char)s[j])) {
                if ((unsigned char)s[j] >= 0x80)
                    t.non_ascii = true;
                j++;
            }
            t.type = JT_NAME;
            t.s = s + i;
            t.slen = j - i;
            i = j;
        } else if (is_dec(c)) {
            i = lex_number(p, s, i, n, &t);
        } else if (c == '\'' || c == '"') {
            size_t j = i + 1;
            while (j < n && s[j] != (char)c)
                j += s[j] == '\\' ? 2 : 1;
            if (j >= n) {
                jl_error(p, i, "unterminated string");
                return n;
            }
            t.type = JT_STRING;
            if (!decode_string(p, s + i + 1, j - i - 1, &t))
                return n;
            i = j + 1;
        } else {
            t.type = JT_OP;
            for (size_t k = 0; k < sizeof(ops2) / sizeof(ops2[0]); k++)
                if (i + 1 < n && s[i] == ops2[k][0] && s[i + 1] == ops2[k][1]) {
                    t.op = (uint16_t)(ops2[k][0] << 8 | ops2[k][1]);
                    break;
                }
            if (t.op) {
                i += 2;
            } else if (c && strchr(ops1, c)) {
                t.op = c;
                i++;
            } else {
                jl_error(p, i, "unexpected character '%c' (byte 0x%02x)", c >= 0x20 && c < 0x7f ? c : '?', c);
                return n;
            }
            if (c == '(' || c == '[' || c == '{') {
                if (depth >= JINJA_MAX_DEPTH) {
                    jl_error(p, t.off, "brackets nested more than %d deep", JINJA_MAX_DEPTH);
                    return n;
                }
                stack[depth++] = c == '(' ? ')' : c == '[' ? ']' : '}';
            } else if (c == ')' || c == ']' || c == '}') {
                if (depth == 0 || stack[depth - 1] != (char)c) {
                    jl_error(p, t.off, "unexpected '%c'", c);
                    return n;
                }
                depth--;
            }
        }
        push_tok(p, t);
    }
    return n;
}

/* {% raw %} (any '-'/'+' marks) at s[i]: the byte after it, else 0. */
static size_t raw_tag(const char *s, size_t i, size_t n, const char *word)
{
    size_t j = i + 2;
    if (j < n && (s[j] == '-' || s[j] == '+'))
        j++;
    while (j < n && is_space((unsigned char)s[j]))
        j++;
    size_t wl = strlen(word);
    if (j + wl > n || memcmp(s + j, word, wl) != 0)
        return 0;
    j += wl;
    while (j < n && is_space((unsigned char)s[j]))
        j++;
    size_t el = tag_end_len(s, j, n, '%');
    return el ? j + el : 0;
}

static void lex(jparse *p)
{
    const char *s = p->src;
    size_t n = p->n, i = 0;
    while (i < n && !p->failed) {
        const char *open = NULL;
        for (size_t k = i; k + 1 < n; k++)
            if (s[k] == '{' && (s[k + 1] == '{' || s[k + 1] == '%' || s[k + 1] == '#')) {
                open = s + k;
                break;
            }
        size_t text_end = open ? (size_t)(open - s) : n;
        if (text_end > i && !push_tok(p, (jtok){.type = JT_DATA, .off = i, .s = s + i,
                                                .slen = (uint32_t)(text_end - i)}))
            return;
        if (!open)
            break;
        i = (size_t)(open - s);
        if (open[1] == '#') {
            const char *close = NULL;
            for (size_t k = i + 2; k + 1 < n; k++)
                if (s[k] == '#' && s[k + 1] == '}') {
                    close = s + k;
                    break;
                }
            if (!close) {
                jl_error(p, i, "unexpected end of template: a comment is not closed");
                return;
            }
            i = (size_t)(close - s) + 2;
        } else if (open[1] == '%') {
            size_t after = raw_tag(s, i, n, "raw");
            if (after) {
                size_t k = after;
                size_t end = 0;
                for (; k + 1 < n; k++)
                    if (s[k] == '{' && s[k + 1] == '%' && (end = raw_tag(s, k, n, "endraw")))
                        break;
                if (!end) {
                    jl_error(p, i, "missing end of raw directive");
                    return;
                }
                i = end;
                continue;
            }
            size_t j = i + 2;
            if (j < n && (s[j] == '-' || s[j] == '+'))
                j++;
            if (!push_tok(p, (jtok){.type = JT_BLOCK_BEGIN, .off = i}))
                return;
            i = lex_tag(p, s, j, n, '%', JT_BLOCK_END);
        } else {
            size_t j = i + 2;
            if (j < n && (s[j] == '-' || s[j] == '+'))
                j++;
            if (!push_tok(p, (jtok){.type = JT_VAR_BEGIN, .off = i}))
                return;
            i = lex_tag(p, s, j, n, '}', JT_VAR_END);
        }
    }
    push_tok(p, (jtok){.type = JT_EOF, .off = n});
}

/* ---------------------------------------------------------------- parser */

static const jtok *cur(jparse *p) { return &p->toks.v[p->pos]; }
static const jtok *peek(jparse *p, size_t k)
{
    size_t i = p->pos + k < p->toks.n ? p->pos + k : p->toks.n - 1;
    return &p->toks.v[i];
}
static void advance(jparse *p)
{
    if (p->pos + 1 < p->toks.n)
        p->pos++;
}
static bool is_op(const jtok *t, int op) { return t->type == JT_OP && t->op == op; }
static bool is_name(const jtok *t, const char *w)
{
    return t->type == JT_NAME && t->slen == strlen(w) && memcmp(t->s, w, t->slen) == 0;
}

static const char *tok_desc(const jtok *t)
{
    switch (t->type) {
    case JT_NAME: return "a name";
    case JT_STRING: return "a string";
    case JT_INT: case JT_FLOAT: return "a number";
    case JT_OP: return "an operator";
    case JT_BLOCK_END: return "the end of the statement";
    case JT_VAR_END: return "the end of the print statement";
    case JT_EOF: return "the end of the template";
    case JT_DATA: return "template text";
    default: return "a tag";
    }
}

static bool expect_op(jparse *p, int op)
{
    if (!is_op(cur(p), op)) {
        if (op >= 256)
            jl_error(p, cur(p)->off, "expected '%c%c', found %s", op >> 8, op & 0xff, tok_desc(cur(p)));
        else
            jl_error(p, cur(p)->off, "expected '%c', found %s", op, tok_desc(cur(p)));
        return false;
    }
    advance(p);
    return true;
}

static bool expect_type(jparse *p, int type)
{
    if (cur(p)->type != type) {
        jl_error(p, cur(p)->off, "expected %s, found %s",
                 tok_desc(&(jtok){.type = type}), tok_desc(cur(p)));
        return false;
    }
    advance(p);
    return true;
}

typedef MF_VEC(jnode *) nodevec;

static jnode *mk(jparse *p, int kind, uint64_t off)
{
    if (++p->n_nodes > JINJA_MAX_NODES) {
        jl_error(p, off, "more than %d nodes: not analysed", JINJA_MAX_NODES);
        return NULL;
    }
    jnode *x = mf_arena_alloc(p->a, sizeof(*x));
    if (!x) {
        jl_error(p, off, "out of memory");
        return NULL;
    }
    x->kind = (uint8_t)kind;
    x->off = off;
    return x;
}

/* x's height from its children; a tree too high is refused. */
static bool set_height(jparse *p, jnode *x)
{
    uint32_t h = 0;
    for (uint32_t i = 0; i < x->nk; i++)
        if (x->k[i] && x->k[i]->height > h)
            h = x->k[i]->height;
    if (h + 1 > JINJA_MAX_HEIGHT) {
        jl_error(p, x->off, "nested more than %d deep: not analysed", JINJA_MAX_HEIGHT);
        return false;
    }
    x->height = (uint16_t)(h + 1);
    return true;
}

/* Moves the collected children into x (the vector is freed). */
static bool set_kids(jparse *p, jnode *x, nodevec *v)
{
    if (!x) {
        MF_VEC_FREE(*v);
        return false;
    }
    if (v->n) {
        x->k = mf_arena_calloc(p->a, v->n, sizeof(jnode *));
        if (!x->k) {
            MF_VEC_FREE(*v);
            jl_error(p, x->off, "out of memory");
            return false;
        }
        memcpy(x->k, v->v, v->n * sizeof(jnode *));
    }
    x->nk = (uint32_t)v->n;
    MF_VEC_FREE(*v);
    return set_height(p, x);
}

static jnode *mk2(jparse *p, int kind, uint64_t off, jnode *a, jnode *b)
{
    jnode *x = mk(p, kind, off);
    if (!x)
        return NULL;
    nodevec v = {0};
    if (MF_VEC_PUSH(v, a) || MF_VEC_PUSH(v, b)) {
        MF_VEC_FREE(v);
        jl_error(p, off, "out of memory");
        return NULL;
    }
    return set_kids(p, x, &v) ? x : NULL;
}

static bool push_node(jparse *p, nodevec *v, jnode *x)
{
    if (!x)
        return false;
    if (MF_VEC_PUSH(*v, x)) {
        jl_error(p, x->off, "out of memory");
        return false;
    }
    return true;
}

static bool enter(jparse *p)
{
    if (++p->depth > JINJA_MAX_DEPTH) {
        jl_error(p, cur(p)->off, "nested more than %d deep: not analysed", JINJA_MAX_DEPTH);
        return false;
    }
    return true;
}

static jnode *parse_expr(jparse *p, bool with_condexpr);
static jnode *parse_unary(jparse *p, bool with_filter);
static jnode *parse_tuple(jparse *p, bool with_condexpr, const char *extra_end);
static jnode *parse_filter(jparse *p, jnode *node, bool start_inline);

/* Arguments of a call (after '('): positional, name=value, *a, **kw. */
static bool parse_call_args(jparse *p, nodevec *args)
{
    if (!expect_op(p, '('))
        return false;
    bool first = true;
    while (!is_op(cur(p), ')') && !p->failed) {
        if (!first && !expect_op(p, ','))
            return false;
        if (is_op(cur(p), ')'))
            break;
        first = false;
        uint64_t off = cur(p)->off;
        jnode *a;
        if (is_op(cur(p), '*') || is_op(cur(p), '*' << 8 | '*')) {
            int kind = is_op(cur(p), '*') ? JE_STAR : JE_DSTAR;
            advance(p);
            a = mk(p, kind, off);
            jnode *v = parse_expr(p, true);
            if (!a || !v)
                return false;
            a->k = mf_arena_calloc(p->a, 1, sizeof(jnode *));
            if (!a->k)
                return false;
            a->k[0] = v;
            a->nk = 1;
            if (!set_height(p, a))
                return false;
        } else if (cur(p)->type == JT_NAME && is_op(peek(p, 1), '=')) {
            const jtok *nt = cur(p);
            advance(p);
            advance(p);
            jnode *v = parse_expr(p, true);
            a = mk(p, JE_KW, off);
            if (!a || !v)
                return false;
            a->s = nt->s;
            a->slen = nt->slen;
            a->k = mf_arena_calloc(p->a, 1, sizeof(jnode *));
            if (!a->k)
                return false;
            a->k[0] = v;
            a->nk = 1;
            if (!set_height(p, a))
                return false;
        } else {
            a = parse_expr(p, true);
        }
        if (!push_node(p, args, a))
            return false;
    }
    return expect_op(p, ')');
}

/* A dotted filter or test name (parser.py: name ('.' name)*). */
static bool parse_dotted(jparse *p, jnode *x)
{
    const jtok *t = cur(p);
    if (t->type != JT_NAME) {
        jl_error(p, t->off, "expected a filter or test name, found %s", tok_desc(t));
        return false;
    }
    const char *start = t->s;
    const char *end = t->s + t->slen;
    advance(p);
    while (is_op(cur(p), '.') && peek(p, 1)->type == JT_NAME) {
        advance(p);
        end = cur(p)->s + cur(p)->slen;
        advance(p);
    }
    x->s = start;
    x->slen = (uint32_t)(end - start);
    return true;
}

static jnode *parse_filter(jparse *p, jnode *node, bool start_inline)
{
    while ((is_op(cur(p), '|') || start_inline) && !p->failed) {
        if (!start_inline)
            advance(p);
        start_inline = false;
        jnode *f = mk(p, JE_FILTER, cur(p)->off);
        if (!f || !parse_dotted(p, f))
            return NULL;
        nodevec v = {0};
        jnode *input = node ? node : mk(p, JE_NONE, f->off);
        if (input && !node)
            input->flags = 2; /* a filter block's or set block's input */
        if (!push_node(p, &v, input)) {
            MF_VEC_FREE(v);
            return NULL;
        }
        if (is_op(cur(p), '(') && !parse_call_args(p, &v)) {
            MF_VEC_FREE(v);
            return NULL;
        }
        if (!set_kids(p, f, &v))
            return NULL;
        node = f;
    }
    return node;
}

static jnode *parse_postfix(jparse *p, jnode *node);
static jnode *parse_primary(jparse *p);

static jnode *parse_test(jparse *p, jnode *node)
{
    uint64_t off = cur(p)->off;
    advance(p); /* is */
    bool neg = false;
    if (is_name(cur(p), "not")) {
        advance(p);
        neg = true;
    }
    jnode *t = mk(p, JE_TEST, off);
    if (!t || !parse_dotted(p, t))
        return NULL;
    t->flags = neg;
    nodevec v = {0};
    if (!push_node(p, &v, node))
        return NULL;
    const jtok *c = cur(p);
    if (is_op(c, '(')) {
        if (!parse_call_args(p, &v)) {
            MF_VEC_FREE(v);
            return NULL;
        }
    } else if ((c->type == JT_NAME || c->type == JT_STRING || c->type == JT_INT ||
                c->type == JT_FLOAT || is_op(c, '[') || is_op(c, '{')) &&
               !is_name(c, "else") && !is_name(c, "or") && !is_name(c, "and")) {
        if (is_name(c, "is")) {
            MF_VEC_FREE(v);
            jl_error(p, c->off, "you cannot chain multiple tests with is");
            return NULL;
        }
        jnode *arg = parse_postfix(p, parse_primary(p));
        if (!push_node(p, &v, arg)) {
            MF_VEC_FREE(v);
            return NULL;
        }
    }
    return set_kids(p, t, &v) ? t : NULL;
}

static jnode *parse_subscript(jparse *p)
{
    uint64_t off = cur(p)->off;
    jnode *parts[3] = {NULL, NULL, NULL};
    bool slice = false;
    for (int k = 0; k < 3; k++) {
        if (!is_op(cur(p), ':') && !is_op(cur(p), ']') && !is_op(cur(p), ','))
            parts[k] = parse_expr(p, true);
        if (p->failed)
            return NULL;
        if (k < 2 && is_op(cur(p), ':')) {
            slice = true;
            advance(p);
            continue;
        }
        break;
    }
    if (!slice)
        return parts[0];
    jnode *x = mk(p, JE_SLICE, off);
    if (!x)
        return NULL;
    x->k = mf_arena_calloc(p->a, 3, sizeof(jnode *));
    if (!x->k)
        return NULL;
    for (int k = 0; k < 3; k++)
        x->k[k] = parts[k];
    x->nk = 3;
    return set_height(p, x) ? x : NULL;
}

static jnode *parse_postfix(jparse *p, jnode *node)
{
    while (node && !p->failed) {
        const jtok *t = cur(p);
        if (is_op(t, '.')) {
            advance(p);
            const jtok *a = cur(p);
            if (a->type == JT_NAME) {
                jnode *g = mk2(p, JE_GETATTR, a->off, node, NULL);
                if (!g)
                    return NULL;
                g->nk = 1;
                g->s = a->s;
                g->slen = a->slen;
                g->flags = a->non_ascii;
                advance(p);
                node = g;
            } else if (a->type == JT_INT) {
                jnode *k = mk(p, JE_NUM, a->off);
                if (!k)
                    return NULL;
                k->ival = a->ival;
                k->flags = a->ival_ok;
                advance(p);
                node = mk2(p, JE_GETITEM, a->off, node, k);
            } else {
                jl_error(p, a->off, "expected a name or number after '.', found %s", tok_desc(a));
                return NULL;
            }
        } else if (is_op(t, '[')) {
            advance(p);
            nodevec v = {0};
            while (!is_op(cur(p), ']') && !p->failed) {
                if (v.n && !expect_op(p, ','))
                    break;
                if (is_op(cur(p), ']'))
                    break;
                if (!push_node(p, &v, parse_subscript(p)))
                    break;
            }
            if (p->failed || !expect_op(p, ']')) {
                MF_VEC_FREE(v);
                return NULL;
            }
            jnode *key;
            if (v.n == 1) {
                key = v.v[0];
                MF_VEC_FREE(v);
            } else {
                key = mk(p, JE_TUPLE, t->off);
                if (!set_kids(p, key, &v))
                    return NULL;
            }
            node = mk2(p, JE_GETITEM, t->off, node, key);
        } else if (is_op(t, '(')) {
            jnode *c = mk(p, JE_CALL, t->off);
            nodevec v = {0};
            if (!c || !push_node(p, &v, node) || !parse_call_args(p, &v)) {
                MF_VEC_FREE(v);
                return NULL;
            }
            node = set_kids(p, c, &v) ? c : NULL;
        } else {
            break;
        }
    }
    return node;
}

static jnode *parse_filter_expr(jparse *p, jnode *node)
{
    while (node && !p->failed) {
        const jtok *t = cur(p);
        if (is_op(t, '|'))
            node = parse_filter(p, node, false);
        else if (is_name(t, "is"))
            node = parse_test(p, node);
        else if (is_op(t, '('))
            node = parse_postfix(p, node); /* a call after a filter or test */
        else
            break;
    }
    return node;
}

/* [a, b], {k: v}, (a, b) */
static jnode *parse_seq(jparse *p, int kind, int close)
{
    uint64_t off = cur(p)->off;
    advance(p);
    nodevec v = {0};
    while (!is_op(cur(p), close) && !p->failed) {
        if (v.n && !expect_op(p, ','))
            break;
        if (is_op(cur(p), close))
            break;
        jnode *x = parse_expr(p, true);
        if (!push_node(p, &v, x))
            break;
        if (kind == JE_DICT) {
            if (!expect_op(p, ':') || !push_node(p, &v, parse_expr(p, true)))
                break;
        }
    }
    if (p->failed || !expect_op(p, close)) {
        MF_VEC_FREE(v);
        return NULL;
    }
    jnode *x = mk(p, kind, off);
    return set_kids(p, x, &v) ? x : NULL;
}

static jnode *parse_primary(jparse *p)
{
    const jtok *t = cur(p);
    jnode *x = NULL;
    switch (t->type) {
    case JT_NAME:
        if (is_name(t, "true") || is_name(t, "false") || is_name(t, "none") ||
            is_name(t, "True") || is_name(t, "False") || is_name(t, "None")) {
            x = mk(p, JE_NONE, t->off);
        } else {
            x = mk(p, JE_NAME, t->off);
            if (x) {
                x->s = t->s;
                x->slen = t->slen;
                x->flags = t->non_ascii;
            }
        }
        advance(p);
        break;
    case JT_STRING: {
        /* adjacent strings are one (parser.py: while current is string) */
        x = mk(p, JE_STR, t->off);
        if (!x)
            return NULL;
        x->s = t->s;
        x->slen = t->slen;
        x->flags = t->str_ok;
        advance(p);
        while (cur(p)->type == JT_STRING && !p->failed) {
            const jtok *u = cur(p);
            char *j = mf_arena_alloc(p->a, x->slen + u->slen + 1);
            if (!j) {
                jl_error(p, u->off, "out of memory");
                return NULL;
            }
            memcpy(j, x->s, x->slen);
            memcpy(j + x->slen, u->s, u->slen);
            x->s = j;
            x->slen += u->slen;
            x->flags = x->flags && u->str_ok;
            advance(p);
        }
        break;
    }
    case JT_INT:
    case JT_FLOAT:
        x = mk(p, JE_NUM, t->off);
        if (x) {
            x->ival = t->ival;
            x->flags = t->type == JT_INT && t->ival_ok;
        }
        advance(p);
        break;
    case JT_OP:
        if (t->op == '(') {
            advance(p);
            x = parse_tuple(p, true, NULL);
            if (x && x->kind == JE_TUPLE && x->nk == 0 && !is_op(cur(p), ')'))
                x = NULL;
            if (!expect_op(p, ')'))
                return NULL;
        } else if (t->op == '[') {
            x = parse_seq(p, JE_LIST, ']');
        } else if (t->op == '{') {
            x = parse_seq(p, JE_DICT, '}');
        } else {
            jl_error(p, t->off, "unexpected operator");
        }
        break;
    default:
        jl_error(p, t->off, "unexpected %s", tok_desc(t));
    }
    return x;
}

static jnode *parse_unary(jparse *p, bool with_filter)
{
    if (!enter(p))
        return NULL;
    const jtok *t = cur(p);
    jnode *x;
    if (is_op(t, '-') || is_op(t, '+')) {
        advance(p);
        jnode *a = parse_unary(p, false);
        x = a ? mk2(p, JE_UNARY, t->off, a, NULL) : NULL;
        if (x) {
            x->nk = 1;
            x->op = t->op;
        }
    } else {
        x = parse_primary(p);
    }
    x = parse_postfix(p, x);
    if (with_filter)
        x = parse_filter_expr(p, x);
    p->depth--;
    return x;
}

static jnode *bin(jparse *p, int op, uint64_t off, jnode *a, jnode *b)
{
    if (!a || !b)
        return NULL;
    jnode *x = mk2(p, JE_BIN, off, a, b);
    if (x)
        x->op = (uint16_t)op;
    return x;
}

static jnode *parse_pow(jparse *p)
{
    jnode *x = parse_unary(p, true);
    while (x && is_op(cur(p), '*' << 8 | '*')) {
        uint64_t off = cur(p)->off;
        advance(p);
        x = bin(p, '*' << 8 | '*', off, x, parse_unary(p, true));
    }
    return x;
}

static jnode *parse_math2(jparse *p)
{
    jnode *x = parse_pow(p);
    while (x && (is_op(cur(p), '*') || is_op(cur(p), '/') || is_op(cur(p), '/' << 8 | '/') ||
                 is_op(cur(p), '%'))) {
        int op = cur(p)->op;
        uint64_t off = cur(p)->off;
        advance(p);
        x = bin(p, op, off, x, parse_pow(p));
    }
    return x;
}

static jnode *parse_concat(jparse *p)
{
    jnode *x = parse_math2(p);
    while (x && is_op(cur(p), '~')) {
        uint64_t off = cur(p)->off;
        advance(p);
        x = bin(p, '~', off, x, parse_math2(p));
    }
    return x;
}

static jnode *parse_math1(jparse *p)
{
    jnode *x = parse_concat(p);
    while (x && (is_op(cur(p), '+') || is_op(cur(p), '-'))) {
        int op = cur(p)->op;
        uint64_t off = cur(p)->off;
        advance(p);
        x = bin(p, op, off, x, parse_concat(p));
    }
    return x;
}

static bool is_cmp(const jtok *t)
{
    if (t->type != JT_OP)
        return false;
    return t->op == ('=' << 8 | '=') || t->op == ('!' << 8 | '=') || t->op == '>' ||
           t->op == '<' || t->op == ('>' << 8 | '=') || t->op == ('<' << 8 | '=');
}

static jnode *parse_compare(jparse *p)
{
    jnode *x = parse_math1(p);
    while (x && !p->failed) {
        const jtok *t = cur(p);
        if (is_cmp(t)) {
            advance(p);
            x = bin(p, JOP_CMP, t->off, x, parse_math1(p));
        } else if (is_name(t, "in")) {
            advance(p);
            x = bin(p, JOP_CMP, t->off, x, parse_math1(p));
        } else if (is_name(t, "not") && is_name(peek(p, 1), "in")) {
            advance(p);
            advance(p);
            x = bin(p, JOP_CMP, t->off, x, parse_math1(p));
        } else {
            break;
        }
    }
    return x;
}

static jnode *parse_not(jparse *p)
{
    if (is_name(cur(p), "not")) {
        uint64_t off = cur(p)->off;
        advance(p);
        if (!enter(p))
            return NULL;
        jnode *a = parse_not(p);
        p->depth--;
        jnode *x = a ? mk2(p, JE_UNARY, off, a, NULL) : NULL;
        if (x) {
            x->nk = 1;
            x->op = JOP_NOT;
        }
        return x;
    }
    return parse_compare(p);
}

static jnode *parse_and(jparse *p)
{
    jnode *x = parse_not(p);
    while (x && is_name(cur(p), "and")) {
        uint64_t off = cur(p)->off;
        advance(p);
        x = bin(p, JOP_AND, off, x, parse_not(p));
    }
    return x;
}

static jnode *parse_or(jparse *p)
{
    jnode *x = parse_and(p);
    while (x && is_name(cur(p), "or")) {
        uint64_t off = cur(p)->off;
        advance(p);
        x = bin(p, JOP_OR, off, x, parse_and(p));
    }
    return x;
}

static jnode *parse_expr(jparse *p, bool with_condexpr)
{
    if (!enter(p))
        return NULL;
    jnode *x = parse_or(p);
    while (with_condexpr && x && is_name(cur(p), "if")) {
        uint64_t off = cur(p)->off;
        advance(p);
        jnode *test = parse_or(p);
        jnode *other = NULL;
        if (is_name(cur(p), "else")) {
            advance(p);
            other = parse_expr(p, true);
            if (!other)
                x = NULL;
        }
        jnode *c = test && x ? mk(p, JE_COND, off) : NULL;
        if (c) {
            c->k = mf_arena_calloc(p->a, 3, sizeof(jnode *));
            if (!c->k)
                c = NULL;
            else {
                c->k[0] = test;
                c->k[1] = x;
                c->k[2] = other;
                c->nk = 3;
                if (!set_height(p, c))
                    c = NULL;
            }
        }
        x = c;
    }
    p->depth--;
    return x;
}

static bool tuple_ends(jparse *p, const char *extra_end)
{
    const jtok *t = cur(p);
    return t->type == JT_VAR_END || t->type == JT_BLOCK_END || t->type == JT_EOF ||
           is_op(t, ')') || (extra_end && is_name(t, extra_end));
}

static jnode *parse_tuple(jparse *p, bool with_condexpr, const char *extra_end)
{
    uint64_t off = cur(p)->off;
    nodevec v = {0};
    bool comma = false;
    while (!p->failed) {
        if (v.n) {
            if (!is_op(cur(p), ','))
                break;
            advance(p);
            comma = true;
        }
        if (tuple_ends(p, extra_end))
            break;
        if (!push_node(p, &v, parse_expr(p, with_condexpr)))
            break;
    }
    if (p->failed) {
        MF_VEC_FREE(v);
        return NULL;
    }
    if (v.n == 1 && !comma) {
        jnode *x = v.v[0];
        MF_VEC_FREE(v);
        return x;
    }
    if (v.n == 0 && !is_op(cur(p), ')')) {
        MF_VEC_FREE(v);
        jl_error(p, off, "expected an expression, found %s", tok_desc(cur(p)));
        return NULL;
    }
    jnode *x = mk(p, JE_TUPLE, off);
    return set_kids(p, x, &v) ? x : NULL;
}

/* An assignment target: a name, ns.attr (set only), or a tuple of them. */
static jnode *parse_target(jparse *p, bool with_namespace, const char *extra_end)
{
    uint64_t off = cur(p)->off;
    if (with_namespace && cur(p)->type == JT_NAME && is_op(peek(p, 1), '.') &&
        peek(p, 2)->type == JT_NAME) {
        jnode *ns = mk(p, JE_NAME, off);
        if (!ns)
            return NULL;
        ns->s = cur(p)->s;
        ns->slen = cur(p)->slen;
        advance(p);
        advance(p);
        jnode *g = mk2(p, JE_GETATTR, cur(p)->off, ns, NULL);
        if (!g)
            return NULL;
        g->nk = 1;
        g->s = cur(p)->s;
        g->slen = cur(p)->slen;
        g->flags = cur(p)->non_ascii;
        advance(p);
        return g;
    }
    bool paren = is_op(cur(p), '(');
    if (paren)
        advance(p);
    nodevec v = {0};
    bool comma = false;
    while (!p->failed) {
        if (v.n) {
            if (!is_op(cur(p), ','))
                break;
            advance(p);
            comma = true;
        }
        const jtok *t = cur(p);
        if (t->type != JT_NAME || (extra_end && is_name(t, extra_end)))
            break;
        jnode *x = mk(p, JE_NAME, t->off);
        if (!x)
            break;
        x->s = t->s;
        x->slen = t->slen;
        x->flags = t->non_ascii;
        advance(p);
        push_node(p, &v, x);
    }
    if (paren && !p->failed)
        expect_op(p, ')');
    if (p->failed || v.n == 0) {
        MF_VEC_FREE(v);
        jl_error(p, off, "expected an assignment target (a name)");
        return NULL;
    }
    if (v.n == 1 && !comma && !paren) {
        jnode *x = v.v[0];
        MF_VEC_FREE(v);
        return x;
    }
    jnode *x = mk(p, JE_TUPLE, off);
    return set_kids(p, x, &v) ? x : NULL;
}

static jnode *parse_body(jparse *p, const char *const *ends);

/* The statement list up to one of `ends` ({% endfor %} ...): the end tag's
 * name token is current on return. */
static bool body_into(jparse *p, jnode *stmt, const char *const *ends, nodevec *v)
{
    return push_node(p, v, parse_body(p, ends)) && stmt;
}

static bool end_tag(jparse *p, const char *name)
{
    if (!is_name(cur(p), name)) {
        jl_error(p, cur(p)->off, "expected '%s'", name);
        return false;
    }
    advance(p);
    /* {% endblock name %}, {% endmacro name %} are allowed */
    if (cur(p)->type == JT_NAME && (!strcmp(name, "endblock") || !strcmp(name, "endmacro")))
        advance(p);
    return expect_type(p, JT_BLOCK_END);
}

static jnode *parse_for(jparse *p, uint64_t off)
{
    jnode *x = mk(p, JS_FOR, off);
    nodevec v = {0};
    /* kids: target, iter, cond|NULL, body, else|NULL */
    if (!x || !push_node(p, &v, parse_target(p, false, "in")))
        goto fail;
    if (!is_name(cur(p), "in")) {
        jl_error(p, cur(p)->off, "expected 'in'");
        goto fail;
    }
    advance(p);
    if (!push_node(p, &v, parse_tuple(p, false, "recursive")))
        goto fail;
    jnode *cond = NULL;
    if (is_name(cur(p), "if")) {
        advance(p);
        if (!(cond = parse_expr(p, true)))
            goto fail;
    }
    if (is_name(cur(p), "recursive")) {
        advance(p);
        x->flags = 1;
    }
    if (MF_VEC_PUSH(v, cond) || !expect_type(p, JT_BLOCK_END))
        goto fail;
    static const char *const ends[] = {"endfor", "else", NULL};
    if (!body_into(p, x, ends, &v))
        goto fail;
    jnode *els = NULL;
    if (is_name(cur(p), "else")) {
        advance(p);
        static const char *const e2[] = {"endfor", NULL};
        if (!expect_type(p, JT_BLOCK_END) || !(els = parse_body(p, e2)))
            goto fail;
    }
    if (MF_VEC_PUSH(v, els) || !end_tag(p, "endfor"))
        goto fail;
    return set_kids(p, x, &v) ? x : NULL;
fail:
    MF_VEC_FREE(v);
    return NULL;
}

static jnode *parse_if(jparse *p, uint64_t off)
{
    jnode *x = mk(p, JS_IF, off);
    nodevec v = {0};
    static const char *const ends[] = {"elif", "else", "endif", NULL};
    if (!x || !push_node(p, &v, parse_tuple(p, false, NULL)) || !expect_type(p, JT_BLOCK_END) ||
        !body_into(p, x, ends, &v))
        goto fail;
    jnode *els = NULL;
    if (is_name(cur(p), "elif")) {
        uint64_t eoff = cur(p)->off;
        advance(p);
        if (!(els = parse_if(p, eoff))) /* consumes the endif */
            goto fail;
        if (MF_VEC_PUSH(v, els))
            goto fail;
        return set_kids(p, x, &v) ? x : NULL;
    }
    if (is_name(cur(p), "else")) {
        advance(p);
        static const char *const e2[] = {"endif", NULL};
        if (!expect_type(p, JT_BLOCK_END) || !(els = parse_body(p, e2)))
            goto fail;
    }
    if (MF_VEC_PUSH(v, els) || !end_tag(p, "endif"))
        goto fail;
    return set_kids(p, x, &v) ? x : NULL;
fail:
    MF_VEC_FREE(v);
    return NULL;
}

/* kids: target, value (or NULL), body (or NULL), filter (or NULL) */
static jnode *parse_set(jparse *p, uint64_t off)
{
    jnode *x = mk(p, JS_SET, off);
    jnode *target = parse_target(p, true, NULL);
    if (!x || !target)
        return NULL;
    jnode *k[4] = {target, NULL, NULL, NULL};
    if (is_op(cur(p), '=')) {
        advance(p);
        if (!(k[1] = parse_tuple(p, true, NULL)) || !expect_type(p, JT_BLOCK_END))
            return NULL;
    } else {
        if (is_op(cur(p), '|') && !(k[3] = parse_filter(p, NULL, false)))
            return NULL;
        static const char *const ends[] = {"endset", NULL};
        if (!expect_type(p, JT_BLOCK_END) || !(k[2] = parse_body(p, ends)) ||
            !end_tag(p, "endset"))
            return NULL;
    }
    x->k = mf_arena_calloc(p->a, 4, sizeof(jnode *));
    if (!x->k)
        return NULL;
    memcpy(x->k, k, sizeof(k));
    x->nk = 4;
    return set_height(p, x) ? x : NULL;
}

/* (a, b=default, ...) of a macro or call block: JE_NAME or JE_KW nodes. */
static bool parse_signature(jparse *p, nodevec *v)
{
    if (!expect_op(p, '('))
        return false;
    while (!is_op(cur(p), ')') && !p->failed) {
        if (v->n && !expect_op(p, ','))
            return false;
        const jtok *t = cur(p);
        if (!expect_type(p, JT_NAME))
            return false;
        jnode *a;
        if (is_op(cur(p), '=')) {
            advance(p);
            jnode *d = parse_expr(p, true);
            a = d ? mk2(p, JE_KW, t->off, d, NULL) : NULL;
            if (a)
                a->nk = 1;
        } else {
            a = mk(p, JE_NAME, t->off);
        }
        if (!a)
            return false;
        a->s = t->s;
        a->slen = t->slen;
        a->flags = t->non_ascii;
        if (!push_node(p, v, a))
            return false;
    }
    return expect_op(p, ')');
}

/* macro: s = name; kids: body, params...  call: kids: body, call, params... */
static jnode *parse_macro(jparse *p, uint64_t off, bool call_block)
{
    jnode *x = mk(p, call_block ? JS_CALLBLOCK : JS_MACRO, off);
    nodevec params = {0}, v = {0};
    if (!x)
        return NULL;
    jnode *call = NULL;
    if (call_block) {
        if (is_op(cur(p), '(') && !parse_signature(p, &params))
            goto fail;
        if (!(call = parse_expr(p, true)))
            goto fail;
        if (call->kind != JE_CALL) {
            jl_error(p, call->off, "expected call");
            goto fail;
        }
    } else {
        const jtok *t = cur(p);
        if (!expect_type(p, JT_NAME))
            goto fail;
        x->s = t->s;
        x->slen = t->slen;
        if (!parse_signature(p, &params))
            goto fail;
    }
    static const char *const mends[] = {"endmacro", NULL};
    static const char *const cends[] = {"endcall", NULL};
    if (!expect_type(p, JT_BLOCK_END) || !push_node(p, &v, parse_body(p, call_block ? cends : mends)) ||
        !end_tag(p, call_block ? "endcall" : "endmacro"))
        goto fail;
    if (call_block && !push_node(p, &v, call))
        goto fail;
    for (size_t i = 0; i < params.n; i++)
        if (!push_node(p, &v, params.v[i]))
            goto fail;
    MF_VEC_FREE(params);
    return set_kids(p, x, &v) ? x : NULL;
fail:
    MF_VEC_FREE(params);
    MF_VEC_FREE(v);
    return NULL;
}

/* A statement with a body and one end tag; kids: head (or NULL), body. */
static jnode *parse_wrapped(jparse *p, int kind, uint64_t off, jnode *head, const char *end)
{
    const char *ends[] = {end, NULL};
    if (p->failed || !expect_type(p, JT_BLOCK_END))
        return NULL;
    jnode *body = parse_body(p, ends);
    if (!body || !end_tag(p, end))
        return NULL;
    return mk2(p, kind, off, head, body);
}

/* {% with a = 1, b = x %}: kids: body, then target/value pairs */
static jnode *parse_with(jparse *p, uint64_t off)
{
    jnode *x = mk(p, JS_WITH, off);
    nodevec v = {0}, pairs = {0};
    if (!x)
        return NULL;
    while (cur(p)->type != JT_BLOCK_END && !p->failed) {
        if (pairs.n && !expect_op(p, ','))
            break;
        jnode *t = parse_target(p, false, NULL);
        if (!t || !expect_op(p, '='))
            break;
        jnode *e = parse_expr(p, true);
        if (!push_node(p, &pairs, t) || !push_node(p, &pairs, e))
            break;
    }
    static const char *const ends[] = {"endwith", NULL};
    if (p->failed || !expect_type(p, JT_BLOCK_END) || !push_node(p, &v, parse_body(p, ends)) ||
        !end_tag(p, "endwith")) {
        MF_VEC_FREE(v);
        MF_VEC_FREE(pairs);
        return NULL;
    }
    for (size_t i = 0; i < pairs.n; i++)
        push_node(p, &v, pairs.v[i]);
    MF_VEC_FREE(pairs);
    return set_kids(p, x, &v) ? x : NULL;
}

/* extends / include / import / from: everything up to the tag's end is
 * kept as expressions (the template name and what is imported). */
static jnode *parse_load(jparse *p, uint64_t off, const jtok *kw)
{
    jnode *x = mk(p, JS_LOAD, off);
    if (!x)
        return NULL;
    x->s = kw->s;
    x->slen = kw->slen;
    nodevec v = {0};
    if (!push_node(p, &v, parse_expr(p, true))) {
        MF_VEC_FREE(v);
        return NULL;
    }
    while (cur(p)->type != JT_BLOCK_END && cur(p)->type != JT_EOF)
        advance(p); /* ignore missing, with context, as NAME, import NAMES */
    if (!expect_type(p, JT_BLOCK_END)) {
        MF_VEC_FREE(v);
        return NULL;
    }
    return set_kids(p, x, &v) ? x : NULL;
}

/* A statement whose tag name t is current (after {%). */
static jnode *parse_statement(jparse *p)
{
    const jtok *t = cur(p);
    uint64_t off = t->off;
    if (t->type != JT_NAME) {
        jl_error(p, off, "tag name expected");
        return NULL;
    }
    advance(p);
    if (is_name(t, "for"))
        return parse_for(p, off);
    if (is_name(t, "if"))
        return parse_if(p, off);
    if (is_name(t, "set"))
        return parse_set(p, off);
    if (is_name(t, "macro"))
        return parse_macro(p, off, false);
    if (is_name(t, "call"))
        return parse_macro(p, off, true);
    if (is_name(t, "with"))
        return parse_with(p, off);
    if (is_name(t, "filter")) {
        jnode *f = parse_filter(p, NULL, true);
        return f ? parse_wrapped(p, JS_FILTERBLOCK, off, f, "endfilter") : NULL;
    }
    if (is_name(t, "block")) {
        const jtok *n = cur(p);
        if (!expect_type(p, JT_NAME))
            return NULL;
        while (is_name(cur(p), "scoped") || is_name(cur(p), "required"))
            advance(p);
        jnode *x = parse_wrapped(p, JS_BLOCK, off, NULL, "endblock");
        if (x) {
            x->s = n->s;
            x->slen = n->slen;
        }
        return x;
    }
    if (is_name(t, "autoescape")) {
        jnode *e = parse_expr(p, true);
        return e ? parse_wrapped(p, JS_WRAP, off, e, "endautoescape") : NULL;
    }
    if (is_name(t, "generation")) /* transformers' AssistantTracker extension */
        return parse_wrapped(p, JS_WRAP, off, NULL, "endgeneration");
    if (is_name(t, "extends") || is_name(t, "include") || is_name(t, "import") || is_name(t, "from"))
        return parse_load(p, off, t);
    if (is_name(t, "break") || is_name(t, "continue")) { /* jinja2.ext.loopcontrols */
        jnode *x = mk(p, JS_OUT, off);
        return x && expect_type(p, JT_BLOCK_END) ? x : NULL;
    }
    if (is_name(t, "do")) { /* jinja2.ext.do */
        jnode *e = parse_tuple(p, true, NULL);
        jnode *x = e ? mk2(p, JS_OUT, off, e, NULL) : NULL;
        if (x)
            x->nk = 1;
        return x && expect_type(p, JT_BLOCK_END) ? x : NULL;
    }
    /* a tag no default environment knows ({% trans %}, an extension's):
     * jinja2 refuses it unless a consumer added the extension */
    jnode *x = mk(p, JS_UNKNOWN, off);
    if (x) {
        x->s = t->s;
        x->slen = t->slen;
    }
    while (cur(p)->type != JT_BLOCK_END && cur(p)->type != JT_EOF)
        advance(p);
    return x && expect_type(p, JT_BLOCK_END) ? x : NULL;
}

static bool is_end(const jtok *t, const char *const *ends)
{
    for (size_t i = 0; ends && ends[i]; i++)
        if (is_name(t, ends[i]))
            return true;
    return false;
}

static jnode *parse_body(jparse *p, const char *const *ends)
{
    if (!enter(p))
        return NULL;
    uint64_t off = cur(p)->off;
    nodevec v = {0};
    while (!p->failed) {
        const jtok *t = cur(p);
        if (t->type == JT_EOF) {
            if (ends)
                jl_error(p, t->off, "unexpected end of template: '%s' is missing", ends[0]);
            break;
        }
        if (t->type == JT_DATA) {
            jnode *x = mk(p, JS_DATA, t->off);
            if (x) {
                x->s = t->s;
                x->slen = t->slen;
                x->height = 1;
            }
            advance(p);
            if (!push_node(p, &v, x))
                break;
            continue;
        }
        if (t->type == JT_VAR_BEGIN) {
            advance(p);
            jnode *e = parse_tuple(p, true, NULL);
            jnode *x = e ? mk2(p, JS_OUT, t->off, e, NULL) : NULL;
            if (x)
                x->nk = 1;
            if (!push_node(p, &v, x) || !expect_type(p, JT_VAR_END))
                break;
            continue;
        }
        if (t->type != JT_BLOCK_BEGIN) {
            jl_error(p, t->off, "unexpected %s", tok_desc(t));
            break;
        }
        advance(p);
        if (is_end(cur(p), ends)) {
            jnode *x = mk(p, JS_LIST, off);
            p->depth--;
            return set_kids(p, x, &v) ? x : NULL;
        }
        if (!push_node(p, &v, parse_statement(p)))
            break;
    }
    p->depth--;
    if (p->failed || ends) {
        MF_VEC_FREE(v);
        return NULL;
    }
    jnode *x = mk(p, JS_LIST, off);
    return set_kids(p, x, &v) ? x : NULL;
}

/* ------------------------------------------------------------------ API */

int mf_jinja_judge(const char *src, size_t n, mf_jinja_fn fn, void *ctx)
{
    jparse p = {.src = src, .n = n, .a = mf_arena_new()};
    if (!p.a) {
        fn(ctx, &(mf_jinja_finding){MF_CODE_UNKNOWN, 0, "out of memory: the template is not analysed"});
        return MF_CODE_UNKNOWN;
    }
    lex(&p);
    jnode *root = p.failed ? NULL : parse_body(&p, NULL);
    int worst;
    if (!root || p.failed) {
        char msg[400];
        snprintf(msg, sizeof(msg),
                 "not Jinja2 as mfmt reads it (%s): jinja2 may refuse it, or read it otherwise",
                 p.err[0] ? p.err : "syntax error");
        fn(ctx, &(mf_jinja_finding){MF_CODE_UNKNOWN, p.err_off, msg});
        worst = MF_CODE_UNKNOWN;
    } else {
        worst = mf_jinja_analyse(&p, root, fn, ctx);
    }
    MF_VEC_FREE(p.toks);
    mf_arena_free(p.a);
    return worst;
}
