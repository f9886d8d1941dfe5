/* jinja_eval.c - what a parsed Jinja2 template can reach, without running
 * it: an abstract interpretation of the tree (jinja.c parses it).
 *
 * A value is abstracted as the strings it may be or hold (folded where
 * jinja2 would compute them from constants: ~ and + of strings, escapes,
 * |format's %c, |join of a literal list, |replace, |lower, slices...),
 * whether it may hold the caller's data (messages, tools: the caller's,
 * not the template's), a string mfmt could not fold ("opaque"), and which
 * of Jinja's own objects it may be (loop, self, a macro, cycler, joiner,
 * namespace, the globals). Variables are flow-insensitive: every
 * assignment to a name joins into it, and the template is run to a fixed
 * point (macro parameters join the arguments of every call; what a
 * mutating method like append puts into a container joins every read of a
 * container's item), so a constant reaches every use it can reach.
 *
 * Judged at every attribute or item access (.x, [k], |attr, the attribute
 * arguments of map/selectattr/sort/groupby/..., str.format fields):
 *  - a name starting with "__" (dunder) or a mangled private name
 *    ("_TemplateReference__context"): dangerous;
 *  - a name starting with "_" on anything but the caller's data or a
 *    string: dangerous (a macro's _environment, a loop's internals);
 *  - an attribute of a Jinja global or object beyond its documented use
 *    (lipsum, cycler, joiner, namespace, range, dict, self, loop, caller,
 *    macros): dangerous;
 *  - a name mfmt cannot resolve to constants: unknown.
 * Loading another template (include, import, extends) is dangerous; an
 * unknown filter, test or tag is unknown. */
#include "ops/jinja_int.h"

#include <stdarg.h>
#include <stdlib.h>

#define JV_MAXSTR 16
#define JV_MAXLEN 512
#define MAX_PASSES 8

enum {
    JV_NUM = 1u << 0,    /* a number, bool or none: never a string */
    JV_DATA = 1u << 1,   /* the caller's data (or built from it alone) */
    JV_OPAQUE = 1u << 2, /* a string from the template mfmt cannot fold */
    JV_STR = 1u << 3,    /* may be one of strs */
    JV_SEQ = 1u << 4,    /* may be a container whose items may be strs */
    JV_CHAR = 1u << 5,   /* one character of a template string: harmless as a
                            name (no dunder, no private name has one), but
                            unknown once characters are put together */
    JO_LOOP = 1u << 8, JO_SELF = 1u << 9, JO_CALLER = 1u << 10, JO_MACRO = 1u << 11,
    JO_CYCLER = 1u << 12, JO_JOINER = 1u << 13, JO_NS = 1u << 14, JO_BLOCKFN = 1u << 15,
    JO_LIPSUM = 1u << 16, JO_RANGE = 1u << 17, JO_DICT = 1u << 18, JO_CYCLERFN = 1u << 19,
    JO_JOINERFN = 1u << 20, JO_NSFN = 1u << 21, JO_SUPER = 1u << 22,
    JO_FORMAT = 1u << 23, /* str.format bound to strs (or an unknown string) */
    JO_METHOD = 1u << 24, /* another method of a string: calling it gives a string */
};
#define JO_ANY (~0u << 8)

typedef struct jval {
    uint32_t f;
    int macro; /* with JO_MACRO: its index, -2 several */
    bool has_int;
    int64_t ival;
    uint32_t nstr;
    const char *str[JV_MAXSTR];
    uint32_t len[JV_MAXSTR];
} jval;

typedef struct jvar {
    const char *name;
    jval v;
} jvar;

typedef struct jframe {
    int macro;            /* >= 0: inside that macro's body */
    const jnode *callblk; /* inside this call block's body */
} jframe;

typedef struct jseen {
    uint64_t off;
    int sev;
} jseen;

typedef struct jan {
    jparse *p;
    mf_arena *a;
    MF_VEC(jvar) env;
    MF_VEC(const jnode *) macros;
    MF_VEC(const jnode *) blocks;
    MF_VEC(jseen) seen;
    jframe frames[JINJA_MAX_DEPTH];
    int n_frames;
    jval heap;        /* what mutating methods put into containers */
    jval placeholder; /* the input of a filter block or {% set %} block */
    bool changed, report, widen;
    int worst;
    int depth;
    mf_jinja_fn fn;
    void *ctx;
} jan;

/* ------------------------------------------------------------- findings */

static void finding(jan *an, int sev, uint64_t off, const char *fmt, ...) MF_PRINTF(4, 5);
static void finding(jan *an, int sev, uint64_t off, const char *fmt, ...)
{
    if (!an->report)
        return;
    for (size_t i = 0; i < an->seen.n; i++)
        if (an->seen.v[i].off == off && an->seen.v[i].sev == sev)
            return;
    (void)MF_VEC_PUSH(an->seen, ((jseen){off, sev}));
    if (sev > an->worst)
        an->worst = sev;
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    an->fn(an->ctx, &(mf_jinja_finding){sev, off, msg});
}

/* A name for messages: printable, at most 60 bytes. */
static const char *shown(const char *s, size_t n, char *buf, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < n && o + 5 < cap && i < 60; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f)
            buf[o++] = (char)c;
        else
            o += (size_t)snprintf(buf + o, cap - o, "\\x%02x", c);
    }
    if (n > 60 && o + 4 < cap)
        o += (size_t)snprintf(buf + o, cap - o, "...");
    buf[o] = 0;
    return buf;
}

/* --------------------------------------------------------------- values */

static jval v_flags(uint32_t f)
{
    jval v;
    memset(&v, 0, sizeof(v));
    v.f = f;
    v.macro = -1;
    return v;
}

static jval v_num(bool has, int64_t i)
{
    jval v = v_flags(JV_NUM);
    v.has_int = has;
    v.ival = i;
    return v;
}

static jval v_str(jan *an, const char *s, size_t n)
{
    jval v = v_flags(JV_STR);
    if (n > JV_MAXLEN) {
        v.f = JV_OPAQUE;
        return v;
    }
    v.str[0] = s;
    v.len[0] = (uint32_t)n;
    v.nstr = 1;
    (void)an;
    return v;
}

/* One string value only (no data, no objects): the foldable kind. */
static bool is_const_str(const jval *v)
{
    return v->f == JV_STR && v->nstr == 1;
}

static bool is_const_int(const jval *v)
{
    return v->f == JV_NUM && v->has_int;
}

static bool has_str(const jval *v, const char *s, size_t n)
{
    for (uint32_t i = 0; i < v->nstr; i++)
        if (v->len[i] == n && memcmp(v->str[i], s, n) == 0)
            return true;
    return false;
}

/* dst |= src; true when dst changed. */
static bool vjoin(jan *an, jval *dst, const jval *src)
{
    jval old = *dst;
    bool was_empty = dst->f == 0;
    dst->f |= src->f;
    if (src->f & JO_MACRO)
        dst->macro = (old.f & JO_MACRO) && old.macro != src->macro ? -2 : src->macro;
    if (was_empty) {
        dst->has_int = src->has_int;
        dst->ival = src->ival;
    } else if (!(src->has_int && dst->has_int && src->ival == dst->ival) && src->f) {
        dst->has_int = false;
    }
    for (uint32_t i = 0; i < src->nstr; i++) {
        if (has_str(dst, src->str[i], src->len[i]))
            continue;
        if (dst->nstr >= JV_MAXSTR) {
            dst->f |= JV_OPAQUE;
            continue;
        }
        dst->str[dst->nstr] = src->str[i];
        dst->len[dst->nstr++] = src->len[i];
    }
    (void)an;
    return dst->f != old.f || dst->nstr != old.nstr || dst->macro != old.macro ||
           dst->has_int != old.has_int;
}

/* What an unmodelled operation over these values may give: the caller's
 * data when only data went in; an unknown string when any string, object
 * or unknown went in; a number when only numbers did. */
static jval combine(const jval *const *vs, size_t n)
{
    uint32_t f = 0;
    for (size_t i = 0; i < n; i++) {
        if (vs[i]->f & JV_DATA)
            f |= JV_DATA;
        if (vs[i]->f & (JV_OPAQUE | JV_STR | JV_SEQ | JV_CHAR | JO_ANY))
            f |= JV_OPAQUE;
    }
    return v_flags(f ? f : JV_NUM);
}

static jval combine2(const jval *a, const jval *b)
{
    const jval *vs[2] = {a, b};
    return combine(vs, b ? 2 : 1);
}

/* An item of a container (a for loop's variable, x[i], |first): what it
 * holds, plus anything a mutating method may have put into a container. */
static jval elem(jan *an, const jval *v)
{
    jval e = v_flags(v->f & (JV_DATA | JV_NUM | JV_OPAQUE | JV_CHAR));
    if ((v->f & JV_SEQ) && v->nstr) {
        e.f |= JV_STR | JV_SEQ;
        for (uint32_t i = 0; i < v->nstr; i++) {
            e.str[i] = v->str[i];
            e.len[i] = v->len[i];
        }
        e.nstr = v->nstr;
    }
    if (v->f & (JV_STR | JV_CHAR)) /* the characters of a string */
        e.f |= JV_CHAR;
    if (v->f & (JO_ANY & ~(JO_RANGE | JO_METHOD | JO_FORMAT | JO_MACRO)))
        e.f |= JV_OPAQUE;
    if (v->f & JO_RANGE)
        e.f |= JV_NUM;
    if (!e.f)
        e.f = JV_NUM;
    if (an->heap.f && (v->f & (JV_SEQ | JV_DATA | JV_OPAQUE | JO_ANY)))
        vjoin(an, &e, &an->heap);
    return e;
}

static char *concat(jan *an, const char *a, size_t na, const char *b, size_t nb)
{
    char *s = mf_arena_alloc(an->a, na + nb + 1);
    if (s) {
        memcpy(s, a, na);
        memcpy(s + na, b, nb);
    }
    return s;
}

/* The text of a constant (a string, or an int as str() writes it). */
static bool const_text(jan *an, const jval *v, uint32_t i, const char **s, size_t *n)
{
    if (v->f == JV_STR) {
        *s = v->str[i];
        *n = v->len[i];
        return true;
    }
    if (is_const_int(v)) {
        char *b = mf_arena_printf(an->a, "%lld", (long long)v->ival);
        *s = b;
        *n = b ? strlen(b) : 0;
        return b != NULL;
    }
    return false;
}

static uint32_t n_consts(const jval *v)
{
    return v->f == JV_STR ? v->nstr : is_const_int(v) ? 1 : 0;
}

/* a ~ b: every pair of constants folded; else what combine gives. */
static jval fold_concat(jan *an, const jval *a, const jval *b)
{
    uint32_t na = n_consts(a), nb = n_consts(b);
    if (!na || !nb || na * nb > JV_MAXSTR) {
        if ((a->f | b->f) == JV_NUM)
            return v_flags(JV_NUM);
        return combine2(a, b);
    }
    jval r = v_flags(JV_STR);
    for (uint32_t i = 0; i < na; i++)
        for (uint32_t j = 0; j < nb; j++) {
            const char *s1, *s2;
            size_t n1, n2;
            if (!const_text(an, a, i, &s1, &n1) || !const_text(an, b, j, &s2, &n2))
                return v_flags(JV_OPAQUE);
            if (n1 + n2 > JV_MAXLEN)
                return v_flags(JV_OPAQUE);
            char *s = concat(an, s1, n1, s2, n2);
            if (!s)
                return v_flags(JV_OPAQUE);
            jval one = v_str(an, s, n1 + n2);
            vjoin(an, &r, &one);
        }
    return r;
}

/* ------------------------------------------------------------ variables */

static jvar *var(jan *an, const char *name, size_t n)
{
    for (size_t i = 0; i < an->env.n; i++)
        if (strlen(an->env.v[i].name) == n && memcmp(an->env.v[i].name, name, n) == 0)
            return &an->env.v[i];
    return NULL;
}

static void assign(jan *an, const char *name, size_t n, const jval *v)
{
    jvar *x = var(an, name, n);
    if (!x) {
        jvar nv = {mf_arena_strndup(an->a, name, n), v_flags(0)};
        if (!nv.name || MF_VEC_PUSH(an->env, nv))
            return;
        x = &an->env.v[an->env.n - 1];
    }
    jval w = *v;
    if (an->widen && w.nstr) { /* no fixed point yet: constants give way */
        w.nstr = 0;
        w.f |= JV_OPAQUE;
    }
    if (vjoin(an, &x->v, &w))
        an->changed = true;
}

static jval lookup(jan *an, const char *name, size_t n)
{
    jvar *x = var(an, name, n);
    return x ? x->v : v_flags(0);
}

static void heap_add(jan *an, const jval *v)
{
    jval w = *v; /* numbers and the caller's data are harmless as keys */
    w.f &= ~(uint32_t)(JV_NUM | JV_DATA);
    if (!w.f && !w.nstr)
        return;
    if (an->widen && w.nstr) {
        w.nstr = 0;
        w.f |= JV_OPAQUE;
    }
    if (vjoin(an, &an->heap, &w))
        an->changed = true;
}

static bool name_is(const char *s, size_t n, const char *w)
{
    return strlen(w) == n && memcmp(s, w, n) == 0;
}

static int macro_index(jan *an, const jnode *m)
{
    for (size_t i = 0; i < an->macros.n; i++)
        if (an->macros.v[i] == m)
            return (int)i;
    return -1;
}

static bool is_param(const jnode *owner, size_t first, const char *s, size_t n)
{
    for (size_t i = first; i < owner->nk; i++)
        if (owner->k[i] && owner->k[i]->slen == n && memcmp(owner->k[i]->s, s, n) == 0)
            return true;
    return false;
}

static void param_key(char *buf, size_t cap, int macro, const char *s, size_t n)
{
    snprintf(buf, cap, "m%d:%.*s", macro, (int)(n > 200 ? 200 : n), s);
}

/* A name as the template sees it: a macro's parameter, a call block's,
 * a variable the template sets, a Jinja global, or the caller's data. */
static jval resolve(jan *an, const char *s, size_t n)
{
    for (int i = an->n_frames - 1; i >= 0; i--) {
        const jframe *fr = &an->frames[i];
        if (fr->macro >= 0 && is_param(an->macros.v[fr->macro], 1, s, n)) {
            char key[260];
            param_key(key, sizeof(key), fr->macro, s, n);
            jval v = lookup(an, key, strlen(key));
            return v.f ? v : v_flags(JV_NUM);
        }
        if (fr->callblk && is_param(fr->callblk, 2, s, n))
            return v_flags(JV_OPAQUE);
        if ((fr->macro >= 0 || fr->callblk) && (name_is(s, n, "varargs") || name_is(s, n, "kwargs")))
            return v_flags(JV_OPAQUE | JV_SEQ);
    }
    static const struct { const char *name; uint32_t f; } globals[] = {
        {"loop", JO_LOOP},       {"self", JO_SELF},         {"caller", JO_CALLER},
        {"super", JO_SUPER},     {"lipsum", JO_LIPSUM},     {"range", JO_RANGE},
        {"dict", JO_DICT},       {"cycler", JO_CYCLERFN},   {"joiner", JO_JOINERFN},
        {"namespace", JO_NSFN},
    };
    jval v = lookup(an, s, n);
    uint32_t f = JV_DATA;
    for (size_t i = 0; i < sizeof(globals) / sizeof(globals[0]); i++)
        if (name_is(s, n, globals[i].name))
            f = globals[i].f;
    jval g = v_flags(f);
    vjoin(an, &v, &g);
    return v;
}

/* ------------------------------------------------------------- judging */

static bool listed(const char *s, size_t n, const char *const *list)
{
    for (size_t i = 0; list[i]; i++)
        if (name_is(s, n, list[i]))
            return true;
    return false;
}

static const char *object_name(uint32_t bit)
{
    switch (bit) {
    case JO_LOOP: return "loop";
    case JO_SELF: return "self";
    case JO_CALLER: return "caller";
    case JO_MACRO: return "a macro";
    case JO_CYCLER: return "a cycler";
    case JO_JOINER: return "a joiner";
    case JO_NS: return "a namespace";
    case JO_BLOCKFN: return "a block";
    case JO_LIPSUM: return "the global lipsum";
    case JO_RANGE: return "the global range";
    case JO_DICT: return "the global dict";
    case JO_CYCLERFN: return "the global cycler";
    case JO_JOINERFN: return "the global joiner";
    case JO_NSFN: return "the global namespace";
    case JO_FORMAT: return "str.format";
    case JO_METHOD: return "a string's method";
    default: return "super";
    }
}

/* Jinja's documented attributes of its objects (templates.html: "The
 * loop variable", "Macros", "Cycler", "Namespace"). */
static bool documented(jan *an, uint32_t bit, const char *s, size_t n)
{
    static const char *const loop_attrs[] = {
        "index", "index0", "revindex", "revindex0", "first", "last", "length", "cycle",
        "depth", "depth0", "previtem", "nextitem", "changed", NULL};
    static const char *const cycler_attrs[] = {"next", "current", "reset", NULL};
    static const char *const macro_attrs[] = {"name", "arguments", "catch_kwargs",
                                              "catch_varargs", "caller", NULL};
    switch (bit) {
    case JO_LOOP: return listed(s, n, loop_attrs);
    case JO_CYCLER: return listed(s, n, cycler_attrs);
    case JO_MACRO: return listed(s, n, macro_attrs);
    case JO_NS: return true;
    case JO_METHOD: /* a builtin method has no attribute without underscores */
    case JO_FORMAT: return true;
    case JO_SELF:
        for (size_t i = 0; i < an->blocks.n; i++)
            if (an->blocks.v[i]->slen == n && memcmp(an->blocks.v[i]->s, s, n) == 0)
                return true;
        return false;
    default: return false;
    }
}

static void judge_name(jan *an, const jval *recv, const char *s, size_t n, uint64_t off,
                       const char *how);

/* str.format's replacement fields ({0.__class__}, {x[k].attr}) reach
 * attributes of its arguments (Python's Formatter.get_field). */
static void judge_format_fields(jan *an, const char *s, size_t n, uint64_t off)
{
    jval any = v_flags(JV_OPAQUE);
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '{')
            continue;
        if (i + 1 < n && s[i + 1] == '{') {
            i++;
            continue;
        }
        size_t j = i + 1;
        while (j < n && s[j] != '}' && s[j] != '!' && s[j] != ':')
            j++;
        /* field name: arg_name ('.' attr | '[' key ']')* */
        for (size_t k = i + 1; k < j; k++) {
            if (s[k] == '[') {
                while (k < j && s[k] != ']')
                    k++;
            } else if (s[k] == '.') {
                size_t e = k + 1;
                while (e < j && s[e] != '.' && s[e] != '[')
                    e++;
                judge_name(an, &any, s + k + 1, e - k - 1, off, "a str.format field");
                k = e - 1;
            }
        }
        i = j;
    }
}

static void judge_name(jan *an, const jval *recv, const char *s, size_t n, uint64_t off,
                       const char *how)
{
    char b[300];
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] >= 0x80) {
            finding(an, MF_CODE_UNKNOWN, off,
                    "%s names '%s', with characters beyond ASCII: not judged", how,
                    shown(s, n, b, sizeof(b)));
            return;
        }
    if (n >= 2 && s[0] == '_' && s[1] == '_') {
        finding(an, MF_CODE_DANGEROUS, off,
                "%s reaches the dunder attribute '%s': Python's internals, the way from a "
                "template to os and subprocess",
                how, shown(s, n, b, sizeof(b)));
        return;
    }
    if (n >= 1 && s[0] == '_') {
        bool mangled = false;
        for (size_t i = 1; i + 1 < n; i++)
            if (s[i] == '_' && s[i + 1] == '_')
                mangled = true;
        if (mangled || (recv->f & (JO_ANY | JV_OPAQUE))) {
            finding(an, MF_CODE_DANGEROUS, off,
                    "%s reaches the private attribute '%s'%s: Jinja's internals (a "
                    "macro's environment, the template's context)",
                    how, shown(s, n, b, sizeof(b)), mangled ? " (a mangled name)" : "");
            return;
        }
    }
    for (uint32_t bit = JO_LOOP; bit && (bit & JO_ANY); bit <<= 1)
        if ((recv->f & bit) && !documented(an, bit, s, n))
            finding(an, MF_CODE_DANGEROUS, off,
                    "%s reaches '%s' of %s: beyond its documented use, into Jinja's internals",
                    how, shown(s, n, b, sizeof(b)), object_name(bit));
}

/* A call of str.format / format_map (the value carries the format
 * strings it may be bound to). */
static void judge_format_call(jan *an, const jval *fmt, uint64_t off)
{
    if (fmt->f & JV_OPAQUE)
        finding(an, MF_CODE_UNKNOWN, off,
                "str.format on a string mfmt cannot resolve: its fields may reach attributes");
    for (uint32_t i = 0; i < fmt->nstr; i++)
        judge_format_fields(an, fmt->str[i], fmt->len[i], off);
}

/* An attribute name or key given as a value: each constant judged; one
 * mfmt cannot resolve is unknown. */
static void judge_key(jan *an, const jval *recv, const jval *key, uint64_t off, const char *how)
{
    for (uint32_t i = 0; i < key->nstr; i++)
        judge_name(an, recv, key->str[i], key->len[i], off, how);
    if (key->f & JV_OPAQUE) /* Jinja's objects are not strings: no getattr */
        finding(an, MF_CODE_UNKNOWN, off,
                "%s with a name mfmt cannot resolve to a constant: it may reach any attribute",
                how);
}

/* make_attrgetter's dotted path ("a.b.0"): each part is an item or
 * attribute lookup. */
static void judge_dotted(jan *an, const jval *recv, const jval *path, uint64_t off, const char *how)
{
    for (uint32_t i = 0; i < path->nstr; i++) {
        const char *s = path->str[i];
        size_t n = path->len[i];
        for (size_t a = 0; a <= n;) {
            size_t e = a;
            while (e < n && s[e] != '.')
                e++;
            bool digits = e > a;
            for (size_t k = a; k < e; k++)
                digits = digits && s[k] >= '0' && s[k] <= '9';
            if (!digits)
                judge_name(an, recv, s + a, e - a, off, how);
            a = e + 1;
        }
    }
    if (path->f & JV_OPAQUE)
        finding(an, MF_CODE_UNKNOWN, off,
                "%s with a name mfmt cannot resolve to a constant: it may reach any attribute",
                how);
}

/* ----------------------------------------------------------- expressions */

static jval eval(jan *an, const jnode *x);

static jval attr_value(jan *an, const jval *r, const char *s, size_t n)
{
    jval out = v_flags(0);
    if (r->f & JO_LOOP) {
        jval v = name_is(s, n, "previtem") || name_is(s, n, "nextitem") || name_is(s, n, "cycle") ||
                         name_is(s, n, "changed")
                     ? v_flags(JV_OPAQUE | JV_DATA)
                     : v_flags(JV_NUM);
        vjoin(an, &out, &v);
    }
    if (r->f & JO_NS) {
        char key[260];
        snprintf(key, sizeof(key), ".%.*s", (int)(n > 200 ? 200 : n), s);
        jval v = lookup(an, key, strlen(key));
        jval any = lookup(an, ".*", 2);
        vjoin(an, &out, &v);
        vjoin(an, &out, &any);
        if (!out.f)
            out = v_flags(JV_NUM);
    }
    if (r->f & JO_SELF) {
        jval v = v_flags(JO_BLOCKFN);
        vjoin(an, &out, &v);
    }
    if (r->f & (JO_ANY & ~(JO_LOOP | JO_NS | JO_SELF | JO_METHOD | JO_FORMAT))) {
        jval v = v_flags(JV_OPAQUE);
        vjoin(an, &out, &v);
    }
    if (r->f & JV_DATA) {
        jval v = v_flags(JV_DATA);
        vjoin(an, &out, &v);
        if (an->heap.f)
            vjoin(an, &out, &an->heap);
    }
    if (r->f & JV_SEQ) { /* a dict's attribute falls back to its item */
        jval v = elem(an, r);
        vjoin(an, &out, &v);
    }
    if (r->f & (JV_STR | JV_CHAR | JV_OPAQUE)) { /* a method of a string */
        jval v = v_flags(JO_METHOD);
        if (name_is(s, n, "format") || name_is(s, n, "format_map")) {
            v.f |= JO_FORMAT;
            for (uint32_t i = 0; i < r->nstr && (r->f & JV_STR); i++) {
                jval one = v_str(an, r->str[i], r->len[i]);
                vjoin(an, &v, &one);
            }
            v.f |= r->f & JV_OPAQUE;
        }
        vjoin(an, &out, &v);
    }
    if (!out.f)
        out = v_flags(JV_NUM);
    return out;
}

static jval item_value(jan *an, const jval *r, const jval *key)
{
    jval out = elem(an, r);
    if (r->f & JO_ANY) { /* getitem falls back to getattr */
        for (uint32_t i = 0; i < key->nstr; i++) {
            jval v = attr_value(an, r, key->str[i], key->len[i]);
            vjoin(an, &out, &v);
        }
    }
    return out;
}

/* Python's s[a:b:c] of ASCII constants. */
static jval slice_value(jan *an, const jval *r, const jval *parts[3])
{
    if (!is_const_str(r))
        return (r->f & JV_SEQ) ? *r : combine2(r, NULL);
    int64_t n = r->len[0], ix[3] = {0, n, 1};
    bool given[3] = {false, false, false};
    for (int k = 0; k < 3; k++) {
        if (!parts[k])
            continue;
        if (!is_const_int(parts[k]))
            return v_flags(JV_OPAQUE);
        ix[k] = parts[k]->ival;
        given[k] = true;
    }
    for (int64_t i = 0; i < n; i++)
        if ((unsigned char)r->str[0][i] >= 0x80)
            return v_flags(JV_OPAQUE);
    int64_t step = ix[2];
    if (step == 0)
        return v_flags(JV_NUM); /* ValueError */
    int64_t lo = step > 0 ? 0 : -1, hi = step > 0 ? n : n - 1;
    int64_t a = given[0] ? ix[0] : (step > 0 ? 0 : n - 1);
    int64_t b = given[1] ? ix[1] : (step > 0 ? n : -n - 1);
    if (given[0])
        a = a < 0 ? (a + n < lo ? lo : a + n) : (a > hi ? hi : a);
    if (given[1])
        b = b < 0 ? (b + n < lo ? lo : b + n) : (b > hi ? hi : b);
    else if (step < 0)
        b = -1;
    char *s = mf_arena_alloc(an->a, (size_t)n + 1);
    if (!s)
        return v_flags(JV_OPAQUE);
    size_t o = 0;
    for (int64_t i = a; step > 0 ? i < b : i > b; i += step)
        s[o++] = r->str[0][i];
    return v_str(an, s, o);
}

/* Python's "fmt % args" for %s %d %i %c %x %o %% without flags. */
static jval percent_format(jan *an, const jval *fmt, const jval *const *args, size_t nargs)
{
    if (!is_const_str(fmt))
        return v_flags(JV_OPAQUE);
    const char *s = fmt->str[0];
    size_t n = fmt->len[0], used = 0;
    char *out = mf_arena_alloc(an->a, JV_MAXLEN + 8);
    size_t o = 0;
    if (!out)
        return v_flags(JV_OPAQUE);
    for (size_t i = 0; i < n; i++) {
        if (o > JV_MAXLEN)
            return v_flags(JV_OPAQUE);
        if (s[i] != '%') {
            out[o++] = s[i];
            continue;
        }
        char c = i + 1 < n ? s[++i] : 0;
        if (c == '%') {
            out[o++] = '%';
            continue;
        }
        if (used >= nargs)
            return v_flags(JV_OPAQUE);
        const jval *a = args[used++];
        if (c == 's' && is_const_str(a)) {
            if (o + a->len[0] > JV_MAXLEN)
                return v_flags(JV_OPAQUE);
            memcpy(out + o, a->str[0], a->len[0]);
            o += a->len[0];
        } else if ((c == 's' || c == 'd' || c == 'i' || c == 'x' || c == 'o') && is_const_int(a)) {
            o += (size_t)snprintf(out + o, 24, c == 'x' ? "%llx" : c == 'o' ? "%llo" : "%lld",
                                  (long long)a->ival);
        } else if (c == 'c' && is_const_int(a) && a->ival >= 0 && a->ival < 0x110000) {
            char u[4];
            uint32_t cp = (uint32_t)a->ival;
            size_t k = cp < 0x80 ? (u[0] = (char)cp, 1) : 0;
            if (!k)
                return v_flags(JV_OPAQUE);
            memcpy(out + o, u, k);
            o += k;
        } else if (c == 'c' && is_const_str(a) && a->len[0] == 1) {
            out[o++] = a->str[0][0];
        } else {
            return v_flags(JV_OPAQUE);
        }
    }
    if (used != nargs)
        return v_flags(JV_OPAQUE);
    return v_str(an, out, o);
}

/* A call's evaluated arguments. */
typedef struct jargs {
    jval pos[16];
    size_t npos;
    const jnode *pos_node[16];
    const char *kw_name[16];
    uint32_t kw_len[16];
    jval kw[16];
    size_t nkw;
    jval rest; /* positional beyond 16, *args, **kwargs */
    bool has_rest;
} jargs;

static void eval_args(jan *an, const jnode *const *k, size_t n, jargs *a)
{
    memset(a, 0, sizeof(*a));
    a->rest = v_flags(0);
    for (size_t i = 0; i < n; i++) {
        const jnode *x = k[i];
        if (!x)
            continue;
        jval v = eval(an, x->kind == JE_KW || x->kind == JE_STAR || x->kind == JE_DSTAR ? x->k[0] : x);
        if (x->kind == JE_KW && a->nkw < 16) {
            a->kw_name[a->nkw] = x->s;
            a->kw_len[a->nkw] = x->slen;
            a->kw[a->nkw++] = v;
        } else if (x->kind == JE_STAR || x->kind == JE_DSTAR || x->kind == JE_KW || a->npos >= 16) {
            jval e = x->kind == JE_STAR ? elem(an, &v) : v;
            vjoin(an, &a->rest, &e);
            a->has_rest = true;
        } else {
            a->pos_node[a->npos] = x;
            a->pos[a->npos++] = v;
        }
    }
}

static const jval *kwarg(const jargs *a, const char *name)
{
    for (size_t i = 0; i < a->nkw; i++)
        if (name_is(a->kw_name[i], a->kw_len[i], name))
            return &a->kw[i];
    return NULL;
}

/* A parameter given by keyword or at position pos (-1: keyword only). */
static const jval *param(const jargs *a, const char *name, int pos)
{
    const jval *v = kwarg(a, name);
    if (!v && pos >= 0 && (size_t)pos < a->npos)
        v = &a->pos[pos];
    return v;
}

static jval all_args(jan *an, const jargs *a)
{
    jval v = v_flags(0);
    for (size_t i = 0; i < a->npos; i++)
        vjoin(an, &v, &a->pos[i]);
    for (size_t i = 0; i < a->nkw; i++)
        vjoin(an, &v, &a->kw[i]);
    if (a->has_rest)
        vjoin(an, &v, &a->rest);
    return v;
}

static jval combine_call(jan *an, const jval *r, const jargs *a)
{
    jval args = all_args(an, a);
    return combine2(r, args.f ? &args : NULL);
}

static const char *const jinja_tests[] = {
    "boolean", "callable", "defined", "divisibleby", "eq", "equalto", "escaped", "even",
    "false", "filter", "float", "ge", "gt", "greaterthan", "in", "integer", "iterable", "le",
    "lessthan", "lower", "lt", "mapping", "ne", "none", "number", "odd", "sameas", "sequence",
    "string", "test", "true", "undefined", "upper", "==", "!=", "<", "<=", ">", ">=", NULL};

static const char *const jinja_filters[] = {
    "abs", "attr", "batch", "capitalize", "center", "count", "d", "default", "dictsort", "e",
    "escape", "filesizeformat", "first", "float", "forceescape", "format", "groupby", "indent",
    "int", "items", "join", "last", "length", "list", "lower", "map", "max", "min", "pprint",
    "random", "reject", "rejectattr", "replace", "reverse", "round", "safe", "select",
    "selectattr", "slice", "sort", "string", "striptags", "sum", "title", "tojson", "trim",
    "truncate", "unique", "upper", "urlencode", "urlize", "wordcount", "wordwrap", "xmlattr",
    NULL};

static void judge_test_name(jan *an, const jval *name, uint64_t off, const char *how)
{
    for (uint32_t i = 0; i < name->nstr; i++)
        if (!listed(name->str[i], name->len[i], jinja_tests)) {
            char b[100];
            finding(an, MF_CODE_UNKNOWN, off, "%s names '%s', not one of Jinja2's tests", how,
                    shown(name->str[i], name->len[i], b, sizeof(b)));
        }
    if (name->f & ~(uint32_t)JV_STR)
        finding(an, MF_CODE_UNKNOWN, off, "%s with a test name mfmt cannot resolve", how);
}

static jval apply_filter(jan *an, const char *name, size_t nlen, const jval *in,
                         const jnode *in_node, const jargs *a, uint64_t off, int depth);

/* The one string a constant-folding filter works on, or NULL. */
static char *const_copy(jan *an, const jval *in, size_t *n)
{
    if (!is_const_str(in))
        return NULL;
    *n = in->len[0];
    return mf_arena_strndup(an->a, in->str[0], *n);
}

static jval fold_case(jan *an, const jval *in, int mode)
{
    size_t n;
    char *s = const_copy(an, in, &n);
    if (!s)
        return (in->f & ~(uint32_t)(JV_DATA | JV_NUM)) ? combine2(in, NULL) : *in;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x80)
            return v_flags(JV_OPAQUE); /* Unicode case rules */
        if (mode == 'u' && c >= 'a' && c <= 'z')
            s[i] = (char)(c - 32);
        if (mode == 'l' && c >= 'A' && c <= 'Z')
            s[i] = (char)(c + 32);
    }
    if (mode == 'r')
        for (size_t i = 0; i < n / 2; i++) {
            char t = s[i];
            s[i] = s[n - 1 - i];
            s[n - 1 - i] = t;
        }
    if (mode == 't') { /* str.strip() of ASCII whitespace */
        size_t b = 0, e = n;
        while (b < e && strchr(" \t\n\r\f\v", s[b]))
            b++;
        while (e > b && strchr(" \t\n\r\f\v", s[e - 1]))
            e--;
        return v_str(an, s + b, e - b);
    }
    return v_str(an, s, n);
}

static jval fold_replace(jan *an, const jval *in, const jval *old, const jval *new_, const jval *count)
{
    if (!is_const_str(in) || !old || !new_ || !is_const_str(old) || !is_const_str(new_) ||
        (count && !is_const_int(count)) || old->len[0] == 0) {
        const jval *vs[4] = {in, old ? old : in, new_ ? new_ : in, count ? count : in};
        return combine(vs, 4);
    }
    int64_t left = count ? count->ival : -1;
    char *out = mf_arena_alloc(an->a, JV_MAXLEN + 1);
    size_t o = 0;
    const char *s = in->str[0];
    size_t n = in->len[0];
    if (!out)
        return v_flags(JV_OPAQUE);
    for (size_t i = 0; i < n;) {
        if (left != 0 && i + old->len[0] <= n && memcmp(s + i, old->str[0], old->len[0]) == 0) {
            if (o + new_->len[0] > JV_MAXLEN)
                return v_flags(JV_OPAQUE);
            memcpy(out + o, new_->str[0], new_->len[0]);
            o += new_->len[0];
            i += old->len[0];
            if (left > 0)
                left--;
        } else {
            if (o + 1 > JV_MAXLEN)
                return v_flags(JV_OPAQUE);
            out[o++] = s[i++];
        }
    }
    return v_str(an, out, o);
}

/* |join of a literal list of constants, folded; else what combine gives
 * (a list's items joined in an order mfmt does not keep). */
static jval fold_join(jan *an, const jval *in, const jnode *in_node, const jval *sep)
{
    if (in_node && (in_node->kind == JE_LIST || in_node->kind == JE_TUPLE) &&
        (!sep || is_const_str(sep))) {
        jval acc = v_str(an, "", 0);
        bool ok = true;
        for (uint32_t i = 0; i < in_node->nk && ok; i++) {
            jval e = eval(an, in_node->k[i]);
            if (n_consts(&e) != 1) {
                ok = false;
                break;
            }
            if (i && sep)
                acc = fold_concat(an, &acc, sep);
            acc = fold_concat(an, &acc, &e);
            ok = acc.f == JV_STR;
        }
        if (ok)
            return acc;
    }
    jval items = elem(an, in);
    if ((items.f & ~(uint32_t)(JV_DATA | JV_NUM)) == 0 && (!sep || sep->f == JV_STR))
        return v_flags(items.f & JV_DATA ? JV_DATA : JV_NUM);
    return combine2(&items, sep);
}

static jval map_filter(jan *an, const jval *in, const jargs *a, uint64_t off, int depth)
{
    jval items = elem(an, in);
    const jval *attr = kwarg(a, "attribute");
    if (attr) {
        judge_dotted(an, &items, attr, off, "|map(attribute=...)");
        jval r = attr_value(an, &items, "", 0);
        jval d = kwarg(a, "default") ? *kwarg(a, "default") : v_flags(0);
        vjoin(an, &r, &d);
        r.f |= JV_SEQ;
        return r;
    }
    if (a->npos == 0) {
        finding(an, MF_CODE_UNKNOWN, off, "|map without a filter name");
        return v_flags(JV_OPAQUE);
    }
    const jval *fname = &a->pos[0];
    jval out = v_flags(JV_SEQ);
    if (fname->f != JV_STR) {
        finding(an, MF_CODE_UNKNOWN, off, "|map with a filter name mfmt cannot resolve");
        out.f |= JV_OPAQUE;
    }
    jargs rest = *a;
    memmove(rest.pos, rest.pos + 1, (rest.npos - 1) * sizeof(jval));
    memmove(rest.pos_node, rest.pos_node + 1, (rest.npos - 1) * sizeof(jnode *));
    rest.npos--;
    for (uint32_t i = 0; i < fname->nstr; i++) {
        jval r = apply_filter(an, fname->str[i], fname->len[i], &items, NULL, &rest, off, depth + 1);
        vjoin(an, &out, &r);
    }
    return out;
}

/* The attribute argument of sort, groupby, sum, unique, min, max, join,
 * selectattr, rejectattr (make_attrgetter: dotted, each part getitem
 * then getattr). */
static void judge_attribute_param(jan *an, const jval *in, const jargs *a, int pos, uint64_t off,
                                  const char *filter)
{
    const jval *attr = param(a, "attribute", pos);
    if (!attr)
        return;
    char how[80];
    snprintf(how, sizeof(how), "|%s's attribute", filter);
    jval items = elem(an, in);
    judge_dotted(an, &items, attr, off, how);
}

static jval apply_filter(jan *an, const char *name, size_t nlen, const jval *in,
                         const jnode *in_node, const jargs *a, uint64_t off, int depth)
{
    char b[100];
    if (depth > 8)
        return v_flags(JV_OPAQUE);
#define IS(w) name_is(name, nlen, w)
    if (!listed(name, nlen, jinja_filters)) {
        finding(an, MF_CODE_UNKNOWN, off,
                "filter '%s' is not one of Jinja2's: mfmt cannot tell what it does",
                shown(name, nlen, b, sizeof(b)));
        return v_flags(JV_OPAQUE);
    }
    if (IS("attr")) {
        if (a->npos < 1)
            return v_flags(JV_NUM);
        judge_key(an, in, &a->pos[0], off, "|attr");
        jval out = v_flags(0);
        for (uint32_t i = 0; i < a->pos[0].nstr; i++) {
            jval v = attr_value(an, in, a->pos[0].str[i], a->pos[0].len[i]);
            vjoin(an, &out, &v);
        }
        jval rest = attr_value(an, in, "", 0);
        vjoin(an, &out, &rest);
        return out;
    }
    if (IS("map"))
        return map_filter(an, in, a, off, depth);
    if (IS("select") || IS("reject")) {
        if (a->npos >= 1)
            judge_test_name(an, &a->pos[0], off, IS("select") ? "|select" : "|reject");
        return *in;
    }
    if (IS("selectattr") || IS("rejectattr")) {
        judge_attribute_param(an, in, a, 0, off, IS("selectattr") ? "selectattr" : "rejectattr");
        if (a->npos >= 2)
            judge_test_name(an, &a->pos[1], off, "|selectattr's test");
        return *in;
    }
    if (IS("sort") || IS("groupby") || IS("sum") || IS("unique") || IS("min") || IS("max")) {
        int pos = IS("sort") ? 2 : IS("groupby") || IS("sum") ? 0 : 1;
        char fname[16];
        snprintf(fname, sizeof(fname), "%.*s", (int)nlen, name);
        judge_attribute_param(an, in, a, pos, off, fname);
        if (IS("min") || IS("max") || IS("sum"))
            return elem(an, in);
        return *in;
    }
    if (IS("join")) {
        judge_attribute_param(an, in, a, 1, off, "join");
        return fold_join(an, in, in_node, param(a, "d", 0));
    }
    if (IS("format")) {
        const jval *args[16];
        for (size_t i = 0; i < a->npos; i++)
            args[i] = &a->pos[i];
        if (!a->nkw && !a->has_rest) {
            jval r = percent_format(an, in, args, a->npos);
            if (r.f == JV_STR)
                return r;
        }
        return combine_call(an, in, a);
    }
    if (IS("replace"))
        return fold_replace(an, in, param(a, "old", 0), param(a, "new", 1), param(a, "count", 2));
    if (IS("lower"))
        return fold_case(an, in, 'l');
    if (IS("upper"))
        return fold_case(an, in, 'u');
    if (IS("trim") && a->npos == 0 && a->nkw == 0)
        return fold_case(an, in, 't');
    if (IS("reverse"))
        return (in->f & JV_SEQ) ? *in : fold_case(an, in, 'r');
    if (IS("string") || IS("safe") || IS("list") || IS("items") || IS("dictsort") ||
        IS("batch") || IS("slice")) {
        if ((IS("list")) && (in->f & JV_STR)) {
            jval c = elem(an, in);
            c.f |= JV_SEQ;
            return c;
        }
        jval out = *in;
        jval extra = all_args(an, a);
        vjoin(an, &out, &extra);
        return out;
    }
    if (IS("e") || IS("escape") || IS("forceescape")) {
        for (uint32_t i = 0; i < in->nstr; i++)
            for (uint32_t k = 0; k < in->len[i]; k++)
                if (strchr("<>&'\"", in->str[i][k]))
                    return combine2(in, NULL);
        return *in;
    }
    if (IS("default") || IS("d")) {
        jval out = *in;
        const jval *d = param(a, "default_value", 0);
        if (d)
            vjoin(an, &out, d);
        return out;
    }
    if (IS("first") || IS("last") || IS("random"))
        return elem(an, in);
    if (IS("length") || IS("count") || IS("wordcount") || IS("int") || IS("float") ||
        IS("abs") || IS("round"))
        return v_flags(JV_NUM);
    /* tojson, pprint, title, capitalize, center, indent, truncate,
     * wordwrap, striptags, urlencode, urlize, xmlattr, filesizeformat */
    return combine_call(an, in, a);
#undef IS
}

static jval eval_filter(jan *an, const jnode *x)
{
    const jnode *in_node = x->k[0];
    jval in = in_node->kind == JE_NONE && in_node->flags == 2 ? an->placeholder : eval(an, in_node);
    jargs a;
    eval_args(an, (const jnode *const *)x->k + 1, x->nk - 1, &a);
    return apply_filter(an, x->s, x->slen, &in, in_node, &a, x->off, 0);
}

/* Arguments bound to a macro's parameters (each joins into the
 * parameter: the body sees every value any call passes). */
static void bind_macro(jan *an, int idx, const jargs *a)
{
    const jnode *m = an->macros.v[idx];
    char key[260];
    for (size_t i = 1; i < m->nk; i++) {
        const jnode *prm = m->k[i];
        param_key(key, sizeof(key), idx, prm->s, prm->slen);
        jval v = v_flags(0);
        if (i - 1 < a->npos)
            vjoin(an, &v, &a->pos[i - 1]);
        for (size_t k = 0; k < a->nkw; k++)
            if (a->kw_len[k] == prm->slen && memcmp(a->kw_name[k], prm->s, prm->slen) == 0)
                vjoin(an, &v, &a->kw[k]);
        if (a->has_rest)
            vjoin(an, &v, &a->rest);
        if (v.f)
            assign(an, key, strlen(key), &v);
    }
}

static const char *const mutators[] = {"append", "extend", "insert", "update", "setdefault",
                                       "add", NULL};
static const char *const data_methods[] = {
    "split", "rsplit", "splitlines", "strip", "lstrip", "rstrip", "lower", "upper", "title",
    "capitalize", "casefold", "swapcase", "keys", "values", "items", "copy", "removeprefix",
    "removesuffix", NULL};
static const char *const num_methods[] = {
    "startswith", "endswith", "count", "find", "rfind", "index", "rindex", "isdigit",
    "isalpha", "isalnum", "isspace", "islower", "isupper", "isnumeric", "isdecimal",
    "isidentifier", "istitle", "__len__", NULL};

/* The variable at the root of x (messages in messages[0].content), for a
 * mutating method: what it puts in joins into that variable too. */
static void mutate_root(jan *an, const jnode *x, const jval *v)
{
    while (x && (x->kind == JE_GETATTR || x->kind == JE_GETITEM))
        x = x->k[0];
    if (x && x->kind == JE_NAME)
        assign(an, x->s, x->slen, v);
}

static jval method_call(jan *an, const jnode *callee, const jargs *a)
{
    jval r = eval(an, callee->k[0]);
    const char *s = callee->s;
    size_t n = callee->slen;
    judge_name(an, &r, s, n, callee->off, "an attribute");
    if ((name_is(s, n, "format") || name_is(s, n, "format_map")) && (r.f & (JV_STR | JV_OPAQUE))) {
        jval fmt = attr_value(an, &r, s, n);
        judge_format_call(an, &fmt, callee->off);
        return combine_call(an, &r, a);
    }
    if (listed(s, n, mutators)) {
        jval v = all_args(an, a);
        heap_add(an, &v);
        jval w = v;
        w.f |= JV_SEQ;
        mutate_root(an, callee->k[0], &w);
        return v_flags(JV_NUM);
    }
    if (r.f & JO_LOOP && name_is(s, n, "cycle")) /* returns one of its arguments */
        return all_args(an, a);
    if ((r.f & (JO_CYCLER | JO_JOINER)) && !(r.f & ~(uint32_t)(JO_CYCLER | JO_JOINER))) {
        jval v = v_flags(JV_OPAQUE);
        vjoin(an, &v, &an->heap);
        return v;
    }
    if (is_const_str(&r) && a->npos == 0 && a->nkw == 0) {
        if (name_is(s, n, "upper"))
            return fold_case(an, &r, 'u');
        if (name_is(s, n, "lower"))
            return fold_case(an, &r, 'l');
        if (name_is(s, n, "strip"))
            return fold_case(an, &r, 't');
    }
    if (is_const_str(&r) && name_is(s, n, "replace"))
        return fold_replace(an, &r, param(a, "", 0), param(a, "", 1), param(a, "", 2));
    if (is_const_str(&r) && name_is(s, n, "join") && a->npos == 1 && a->pos_node[0])
        return fold_join(an, &a->pos[0], a->pos_node[0], &r);
    if (listed(s, n, num_methods))
        return v_flags(JV_NUM);
    if (name_is(s, n, "get") || name_is(s, n, "pop")) {
        jval out = item_value(an, &r, a->npos ? &a->pos[0] : &r);
        if (a->npos >= 2)
            vjoin(an, &out, &a->pos[1]);
        return out;
    }
    if (listed(s, n, data_methods) && !(r.f & ~(uint32_t)(JV_DATA | JV_NUM)))
        return v_flags(r.f & JV_DATA ? JV_DATA : JV_NUM);
    return combine_call(an, &r, a);
}

static jval eval_call(jan *an, const jnode *x)
{
    jargs a;
    eval_args(an, (const jnode *const *)x->k + 1, x->nk - 1, &a);
    const jnode *callee = x->k[0];
    if (callee->kind == JE_GETATTR)
        return method_call(an, callee, &a);
    jval c = eval(an, callee);
    jval out = v_flags(0);
    if (c.f & JO_MACRO) {
        if (c.macro >= 0)
            bind_macro(an, c.macro, &a);
        else
            for (size_t i = 0; i < an->macros.n; i++)
                bind_macro(an, (int)i, &a);
        jval v = v_flags(JV_OPAQUE);
        vjoin(an, &out, &v);
    }
    jval args = all_args(an, &a);
    if (c.f & JO_FORMAT) {
        judge_format_call(an, &c, x->off);
        jval v = combine2(&c, args.f ? &args : NULL);
        vjoin(an, &out, &v);
    }
    if (c.f & (JO_CYCLERFN | JO_JOINERFN)) {
        heap_add(an, &args);
        jval v = v_flags(c.f & JO_CYCLERFN ? JO_CYCLER : 0);
        v.f |= c.f & JO_JOINERFN ? JO_JOINER : 0;
        vjoin(an, &out, &v);
    }
    if (c.f & JO_NSFN) {
        for (size_t i = 0; i < a.nkw; i++) {
            char key[260];
            snprintf(key, sizeof(key), ".%.*s", (int)(a.kw_len[i] > 200 ? 200 : a.kw_len[i]), a.kw_name[i]);
            assign(an, key, strlen(key), &a.kw[i]);
        }
        for (size_t i = 0; i < a.npos; i++)
            assign(an, ".*", 2, &a.pos[i]);
        if (a.has_rest)
            assign(an, ".*", 2, &a.rest);
        jval v = v_flags(JO_NS);
        vjoin(an, &out, &v);
    }
    if (c.f & JO_DICT) {
        jval v = v_flags(JV_SEQ);
        for (size_t i = 0; i < a.nkw; i++) {
            jval k = v_str(an, a.kw_name[i], a.kw_len[i]);
            vjoin(an, &v, &k);
        }
        vjoin(an, &v, &args);
        v.f |= JV_SEQ;
        vjoin(an, &out, &v);
    }
    if (c.f & JO_RANGE) {
        jval v = v_flags(JV_NUM);
        vjoin(an, &out, &v);
    }
    if (c.f & JO_LIPSUM) {
        jval v = v_flags(JV_DATA);
        vjoin(an, &out, &v);
    }
    if (c.f & (JO_LOOP | JO_CALLER | JO_BLOCKFN | JO_SUPER | JO_JOINER | JO_CYCLER | JO_SELF | JO_NS | JO_METHOD |
               JV_STR | JV_SEQ | JV_CHAR | JV_OPAQUE)) {
        jval v = v_flags(JV_OPAQUE);
        vjoin(an, &out, &v);
        if (c.f & JO_JOINER)
            vjoin(an, &out, &an->heap);
    }
    if (c.f & (JV_DATA | JV_NUM)) { /* a function the caller gave (raise_exception) */
        jval v = combine2(&c, args.f ? &args : NULL);
        vjoin(an, &out, &v);
    }
    if (!out.f)
        out = v_flags(JV_NUM);
    return out;
}

static jval eval_bin(jan *an, const jnode *x)
{
    jval a = eval(an, x->k[0]), b = eval(an, x->k[1]);
    switch (x->op) {
    case '~':
        return fold_concat(an, &a, &b);
    case '+':
        if (is_const_int(&a) && is_const_int(&b))
            return v_num(true, a.ival + b.ival);
        if (a.f == JV_STR && b.f == JV_STR)
            return fold_concat(an, &a, &b);
        if (((a.f | b.f) & ~(uint32_t)JV_NUM) == 0)
            return v_flags(JV_NUM);
        if (((a.f | b.f) & JV_SEQ)) { /* list + list: the items of both */
            jval out = a;
            vjoin(an, &out, &b);
            if ((a.f | b.f) & (JV_STR | JV_CHAR | JV_OPAQUE))
                out.f |= JV_OPAQUE;
            return out;
        }
        return combine2(&a, &b);
    case '*':
        if (is_const_int(&a) && is_const_int(&b))
            return v_num(true, a.ival * b.ival);
        if ((is_const_str(&a) && is_const_int(&b)) || (is_const_int(&a) && is_const_str(&b))) {
            const jval *s = a.f == JV_STR ? &a : &b;
            int64_t k = a.f == JV_STR ? b.ival : a.ival;
            if (k <= 0)
                return v_str(an, "", 0);
            if ((uint64_t)k * s->len[0] > JV_MAXLEN)
                return v_flags(JV_OPAQUE);
            jval out = v_str(an, "", 0);
            for (int64_t i = 0; i < k; i++)
                out = fold_concat(an, &out, s);
            return out;
        }
        if ((a.f | b.f) & JV_SEQ) {
            jval out = a;
            vjoin(an, &out, &b);
            return out;
        }
        return ((a.f | b.f) & ~(uint32_t)JV_NUM) == 0 ? v_flags(JV_NUM) : combine2(&a, &b);
    case '%': {
        if (a.f == JV_STR) {
            const jval *args[16];
            size_t n = 0;
            const jnode *rn = x->k[1];
            if (rn->kind == JE_TUPLE && rn->nk <= 16) {
                jval tmp[16];
                for (uint32_t i = 0; i < rn->nk; i++) {
                    tmp[i] = eval(an, rn->k[i]);
                    args[n++] = &tmp[i];
                }
                jval r = percent_format(an, &a, args, n);
                return r.f == JV_STR ? r : combine2(&a, &b);
            }
            args[0] = &b;
            jval r = percent_format(an, &a, args, 1);
            return r.f == JV_STR ? r : combine2(&a, &b);
        }
        return ((a.f | b.f) & ~(uint32_t)JV_NUM) == 0 ? v_flags(JV_NUM) : combine2(&a, &b);
    }
    case JOP_AND:
    case JOP_OR: {
        jval out = a;
        vjoin(an, &out, &b);
        return out;
    }
    default: /* - / // ** and comparisons give numbers or fail */
        return v_flags(JV_NUM);
    }
}

static jval eval_seq(jan *an, const jnode *x)
{
    jval out = v_flags(JV_SEQ);
    for (uint32_t i = 0; i < x->nk; i++) {
        jval v = eval(an, x->k[i]);
        v.f &= ~(uint32_t)JV_STR;
        if (v.nstr)
            v.f |= JV_SEQ;
        vjoin(an, &out, &v);
    }
    out.has_int = false;
    return out;
}

static jval eval(jan *an, const jnode *x)
{
    if (!x)
        return v_flags(JV_NUM);
    if (++an->depth > JINJA_MAX_DEPTH * 4) {
        an->depth--;
        return v_flags(JV_OPAQUE);
    }
    jval r;
    switch (x->kind) {
    case JE_NAME:
        r = resolve(an, x->s, x->slen);
        break;
    case JE_STR:
        r = x->flags ? v_str(an, x->s, x->slen) : v_flags(JV_OPAQUE);
        break;
    case JE_NUM:
        r = v_num(x->flags != 0, x->ival);
        break;
    case JE_NONE:
        r = x->flags == 2 ? an->placeholder : v_flags(JV_NUM);
        break;
    case JE_LIST:
    case JE_TUPLE:
    case JE_DICT:
        r = eval_seq(an, x);
        break;
    case JE_GETATTR: {
        jval o = eval(an, x->k[0]);
        if (x->flags)
            finding(an, MF_CODE_UNKNOWN, x->off, "an attribute named with characters beyond ASCII");
        judge_name(an, &o, x->s, x->slen, x->off, "an attribute");
        r = attr_value(an, &o, x->s, x->slen);
        break;
    }
    case JE_GETITEM: {
        jval o = eval(an, x->k[0]);
        const jnode *kn = x->k[1];
        if (kn->kind == JE_SLICE) {
            jval parts[3];
            const jval *pp[3];
            for (int i = 0; i < 3; i++) {
                pp[i] = kn->k[i] ? &parts[i] : NULL;
                if (kn->k[i])
                    parts[i] = eval(an, kn->k[i]);
            }
            r = slice_value(an, &o, pp);
        } else {
            jval k = eval(an, kn);
            judge_key(an, &o, &k, x->off, "a subscript");
            r = item_value(an, &o, &k);
        }
        break;
    }
    case JE_CALL:
        r = eval_call(an, x);
        break;
    case JE_FILTER:
        r = eval_filter(an, x);
        break;
    case JE_TEST: {
        for (uint32_t i = 0; i < x->nk; i++)
            (void)eval(an, x->k[i]->kind == JE_KW ? x->k[i]->k[0] : x->k[i]);
        jval name = v_str(an, x->s, x->slen);
        judge_test_name(an, &name, x->off, "a test");
        r = v_flags(JV_NUM);
        break;
    }
    case JE_BIN:
        r = eval_bin(an, x);
        break;
    case JE_UNARY: {
        jval a = eval(an, x->k[0]);
        bool fold = is_const_int(&a) && (x->op == '-' || x->op == '+') && a.ival != INT64_MIN;
        r = v_num(fold, fold && x->op == '-' ? -a.ival : a.ival);
        break;
    }
    case JE_COND: {
        (void)eval(an, x->k[0]);
        r = eval(an, x->k[1]);
        jval b = x->k[2] ? eval(an, x->k[2]) : v_flags(JV_NUM);
        vjoin(an, &r, &b);
        break;
    }
    default:
        for (uint32_t i = 0; i < x->nk; i++)
            (void)eval(an, x->k[i]);
        r = v_flags(JV_OPAQUE);
    }
    an->depth--;
    return r;
}

/* ------------------------------------------------------------ statements */

static void assign_target(jan *an, const jnode *t, const jval *v)
{
    if (!t)
        return;
    if (t->kind == JE_NAME) {
        assign(an, t->s, t->slen, v);
    } else if (t->kind == JE_TUPLE) {
        jval e = elem(an, v);
        for (uint32_t i = 0; i < t->nk; i++)
            assign_target(an, t->k[i], &e);
    } else if (t->kind == JE_GETATTR) { /* {% set ns.attr = v %} */
        jval ns = eval(an, t->k[0]);
        judge_name(an, &ns, t->s, t->slen, t->off, "a namespace assignment");
        char key[260];
        snprintf(key, sizeof(key), ".%.*s", (int)(t->slen > 200 ? 200 : t->slen), t->s);
        assign(an, key, strlen(key), v);
    }
}

static void stmt(jan *an, const jnode *x);

static bool ws(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* What a block renders ({% set x %}...{% endset %}, {% filter %}): its
 * text when it is text alone, with every way the environment may trim it
 * (a "-" on either tag strips all whitespace there; trim_blocks removes
 * the first newline after a tag; lstrip_blocks the spaces and tabs before
 * one); anything else is a string mfmt does not fold. */
static jval block_text(jan *an, const jnode *body)
{
    if (!body || body->nk == 0)
        return v_str(an, "", 0);
    if (body->nk != 1 || body->k[0]->kind != JS_DATA)
        return v_flags(JV_OPAQUE);
    const char *s = body->k[0]->s;
    size_t n = body->k[0]->slen;
    jval out = v_flags(0);
    for (int l = 0; l < 3; l++)
        for (int r = 0; r < 3; r++) {
            size_t a = 0, b = n;
            if (l == 1 && a < b && s[a] == '\n')
                a++;
            if (l == 2)
                while (a < b && ws(s[a]))
                    a++;
            if (r == 1)
                while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\t'))
                    b--;
            if (r == 2)
                while (b > a && ws(s[b - 1]))
                    b--;
            jval one = v_str(an, s + a, b - a);
            vjoin(an, &out, &one);
        }
    return out;
}

static void push_frame(jan *an, int macro, const jnode *callblk)
{
    if (an->n_frames < JINJA_MAX_DEPTH)
        an->frames[an->n_frames++] = (jframe){macro, callblk};
}

static void stmt(jan *an, const jnode *x)
{
    if (!x)
        return;
    if (++an->depth > JINJA_MAX_DEPTH * 4) {
        an->depth--;
        return;
    }
    char b[100];
    switch (x->kind) {
    case JS_LIST:
        for (uint32_t i = 0; i < x->nk; i++)
            stmt(an, x->k[i]);
        break;
    case JS_OUT:
        if (x->nk)
            (void)eval(an, x->k[0]);
        break;
    case JS_FOR: {
        jval it = eval(an, x->k[1]);
        jval e = elem(an, &it);
        assign_target(an, x->k[0], &e);
        (void)eval(an, x->k[2]);
        stmt(an, x->k[3]);
        stmt(an, x->k[4]);
        break;
    }
    case JS_IF:
        (void)eval(an, x->k[0]);
        stmt(an, x->k[1]);
        stmt(an, x->k[2]);
        break;
    case JS_SET: {
        jval v;
        if (x->k[1]) {
            v = eval(an, x->k[1]);
        } else {
            stmt(an, x->k[2]);
            v = block_text(an, x->k[2]);
            if (x->k[3]) {
                jval saved = an->placeholder;
                an->placeholder = v;
                v = eval(an, x->k[3]);
                an->placeholder = saved;
            }
        }
        assign_target(an, x->k[0], &v);
        break;
    }
    case JS_MACRO: {
        int idx = macro_index(an, x);
        jval m = v_flags(JO_MACRO);
        m.macro = idx;
        assign(an, x->s, x->slen, &m);
        push_frame(an, idx, NULL);
        for (uint32_t i = 1; i < x->nk; i++)
            if (x->k[i]->kind == JE_KW) {
                jval d = eval(an, x->k[i]->k[0]);
                char key[260];
                param_key(key, sizeof(key), idx, x->k[i]->s, x->k[i]->slen);
                assign(an, key, strlen(key), &d);
            }
        stmt(an, x->k[0]);
        an->n_frames--;
        break;
    }
    case JS_CALLBLOCK:
        (void)eval(an, x->k[1]);
        push_frame(an, -1, x);
        for (uint32_t i = 2; i < x->nk; i++)
            if (x->k[i]->kind == JE_KW)
                (void)eval(an, x->k[i]->k[0]);
        stmt(an, x->k[0]);
        an->n_frames--;
        break;
    case JS_FILTERBLOCK: {
        stmt(an, x->k[1]);
        jval saved = an->placeholder;
        an->placeholder = block_text(an, x->k[1]);
        (void)eval(an, x->k[0]);
        an->placeholder = saved;
        break;
    }
    case JS_WITH:
        for (uint32_t i = 1; i + 1 < x->nk; i += 2) {
            jval v = eval(an, x->k[i + 1]);
            assign_target(an, x->k[i], &v);
        }
        stmt(an, x->k[0]);
        break;
    case JS_BLOCK:
    case JS_WRAP:
        if (x->k && x->k[0])
            (void)eval(an, x->k[0]);
        stmt(an, x->nk > 1 ? x->k[1] : NULL);
        break;
    case JS_LOAD:
        (void)eval(an, x->k[0]);
        finding(an, MF_CODE_DANGEROUS, x->off,
                "{%% %s %%} loads another template by name: its code is not in this file, and "
                "the environment's loader reads it from wherever it is told",
                shown(x->s, x->slen, b, sizeof(b)));
        break;
    case JS_DATA:
        break;
    case JS_UNKNOWN:
        finding(an, MF_CODE_UNKNOWN, x->off,
                "{%% %s %%} is not a tag of Jinja2 or of the extensions chat templates use: "
                "mfmt cannot tell what it does",
                shown(x->s, x->slen, b, sizeof(b)));
        break;
    default:
        (void)eval(an, x);
    }
    an->depth--;
}

/* Macros and blocks, found once before the passes. */
static void collect(jan *an, const jnode *x, int depth)
{
    if (!x || depth > JINJA_MAX_DEPTH * 2)
        return;
    if (x->kind == JS_MACRO)
        (void)MF_VEC_PUSH(an->macros, x);
    if (x->kind == JS_BLOCK)
        (void)MF_VEC_PUSH(an->blocks, x);
    for (uint32_t i = 0; i < x->nk; i++)
        collect(an, x->k[i], depth + 1);
}

int mf_jinja_analyse(jparse *p, const jnode *root, mf_jinja_fn fn, void *ctx)
{
    jan an = {.p = p, .a = p->a, .fn = fn, .ctx = ctx, .worst = MF_CODE_NOTE};
    an.heap = v_flags(0);
    an.placeholder = v_flags(JV_OPAQUE);
    collect(&an, root, 0);
    /* to a fixed point: constants first, then (if they still grow) every
     * string still changing is taken as unknown */
    int pass = 0;
    do {
        an.changed = false;
        an.widen = pass >= MAX_PASSES;
        stmt(&an, root);
    } while (an.changed && ++pass < 2 * MAX_PASSES);
    an.report = true;
    if (an.changed)
        finding(&an, MF_CODE_UNKNOWN, 0, "the template's values did not settle: not analysed");
    stmt(&an, root);
    MF_VEC_FREE(an.env);
    MF_VEC_FREE(an.macros);
    MF_VEC_FREE(an.blocks);
    MF_VEC_FREE(an.seen);
    return an.worst;
}
