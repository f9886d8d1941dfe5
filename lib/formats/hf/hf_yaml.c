/* hf_yaml.c - the YAML front matter of a model card, read into JSON values.
 *
 * Hugging Face model cards start with YAML between two "---" lines
 * (huggingface/hub-docs modelcard.md); tools read it with PyYAML's
 * safe_load. libyaml (the C parser PyYAML itself can use) reads the YAML;
 * on top of it go the few rules of safe_load and of model cards:
 *  - plain scalars are resolved as YAML 1.1 (PyYAML's resolver): null ~,
 *    booleans yes/no/on/off/true/false, ints, floats (which need a dot);
 *    quoted and block scalars stay strings; mapping keys are their text;
 *  - anchors, aliases and tags are refused, never expanded (no "billion
 *    laughs"); one document only;
 *  - depth (64) and the number of values (2^20) are bounded, so memory is
 *    too, whatever the card holds (the caller bounds its size). */
#include "formats/hf/hf_int.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <yaml.h>

enum { MAX_DEPTH = 64, MAX_NODES = 1 << 20 };

/* ------------------------------------------------------------ scalars */

static bool all_in(const char *s, size_t n, const char *set)
{
    for (size_t i = 0; i < n; i++)
        if (!strchr(set, s[i]))
            return false;
    return n > 0;
}

static bool word_is(const char *s, size_t n, const char *const *words)
{
    for (; *words; words++)
        if (strlen(*words) == n && memcmp(*words, s, n) == 0)
            return true;
    return false;
}

/* YAML 1.1 int (PyYAML's resolver): [-+]?0b[01_]+ | [-+]?0[0-7_]+ |
 * [-+]?(0|[1-9][0-9_]*) | [-+]?0x[0-9a-fA-F_]+ (sexagesimal not taken). */
static json_t *resolve_int(const char *s, size_t n)
{
    char buf[80];
    size_t k = 0;
    size_t i = 0;
    bool neg = false;
    if (i < n && (s[i] == '-' || s[i] == '+'))
        neg = s[i++] == '-';
    int base = 10;
    if (n - i > 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'b')) {
        base = s[i + 1] == 'x' ? 16 : 2;
        i += 2;
    } else if (n - i > 1 && s[i] == '0') {
        base = 8;
        i++;
    }
    const char *digits = base == 16 ? "0123456789abcdefABCDEF_" : base == 2 ? "01_" :
                         base == 8 ? "01234567_" : "0123456789_";
    if (i >= n || !all_in(s + i, n - i, digits) || (base == 10 && s[i] == '_'))
        return NULL;
    for (; i < n && k + 1 < sizeof(buf); i++)
        if (s[i] != '_')
            buf[k++] = s[i];
    if (k == 0 || i < n)
        return NULL;
    buf[k] = 0;
    errno = 0;
    unsigned long long v = strtoull(buf, NULL, base);
    if (errno == ERANGE || v > (unsigned long long)INT64_MAX) /* beyond 64 bits */
        return json_real(neg ? -strtod(buf, NULL) : strtod(buf, NULL));
    return json_integer(neg ? -(json_int_t)v : (json_int_t)v);
}

/* YAML 1.1 float: [-+]?([0-9][0-9_]*)?\.[0-9_]*([eE][-+][0-9]+)? | .inf | .nan */
static json_t *resolve_float(const char *s, size_t n)
{
    static const char *const inf[] = {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", NULL};
    static const char *const ninf[] = {"-.inf", "-.Inf", "-.INF", NULL};
    static const char *const nan_[] = {".nan", ".NaN", ".NAN", NULL};
    if (word_is(s, n, inf))
        return json_real(INFINITY); /* jansson refuses non-finite reals: NULL */
    if (word_is(s, n, ninf) || word_is(s, n, nan_))
        return NULL;
    size_t i = 0, digits = 0;
    char buf[128];
    size_t k = 0;
    if (n >= sizeof(buf))
        return NULL;
    if (s[i] == '-' || s[i] == '+')
        buf[k++] = s[i++];
    while (i < n && (isdigit((unsigned char)s[i]) || (s[i] == '_' && digits))) {
        if (s[i] != '_') {
            buf[k++] = s[i];
            digits++;
        }
        i++;
    }
    if (i >= n || s[i] != '.')
        return NULL;
    buf[k++] = s[i++];
    while (i < n && (isdigit((unsigned char)s[i]) || s[i] == '_')) {
        if (s[i] != '_') {
            buf[k++] = s[i];
            digits++;
        }
        i++;
    }
    if (!digits)
        return NULL;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        buf[k++] = s[i++];
        if (i >= n || (s[i] != '-' && s[i] != '+'))
            return NULL;
        buf[k++] = s[i++];
        size_t e0 = i;
        while (i < n && isdigit((unsigned char)s[i]))
            buf[k++] = s[i++];
        if (i == e0)
            return NULL;
    }
    if (i != n)
        return NULL;
    buf[k] = 0;
    double v = strtod(buf, NULL);
    return isfinite(v) ? json_real(v) : NULL;
}

static json_t *resolve_plain(const char *s, size_t n)
{
    static const char *const nulls[] = {"~", "null", "Null", "NULL", NULL};
    static const char *const yes[] = {"yes", "Yes", "YES", "true", "True", "TRUE",
                                      "on", "On", "ON", NULL};
    static const char *const no[] = {"no", "No", "NO", "false", "False", "FALSE",
                                     "off", "Off", "OFF", NULL};
    if (n == 0 || word_is(s, n, nulls))
        return json_null();
    /* PyYAML's bool resolver: yes/no/true/false/on/off (not y/n) */
    if (word_is(s, n, yes))
        return json_true();
    if (word_is(s, n, no))
        return json_false();
    json_t *v = resolve_int(s, n);
    if (!v)
        v = resolve_float(s, n);
    return v ? v : json_stringn(s, n);
}

/* ----------------------------------------------------- events -> JSON */

typedef struct frame {
    json_t *c;   /* the open object or array */
    char *key;   /* an object's key waiting for its value (malloc'd) */
} frame;

typedef struct ybuild {
    yaml_parser_t p;
    frame stack[MAX_DEPTH + 1];
    int depth;
    size_t nodes;
    json_t *root;
    mf_status *st;
} ybuild;

/* Line numbers count from the card's first line, the opening "---". */
static int yfail(ybuild *b, const yaml_mark_t *at, const char *fmt, ...) MF_PRINTF(3, 4);
static int yfail(ybuild *b, const yaml_mark_t *at, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return mf_fail(b->st, MF_ERR_FORMAT, NULL, -1, "front matter line %zu: %s",
                   (size_t)at->line + 2, msg);
}

/* Puts v where the open container wants it (or as the root); takes v. */
static int place(ybuild *b, json_t *v, const yaml_mark_t *at)
{
    if (!v)
        return yfail(b, at, "out of memory (or a string that is not UTF-8)");
    if (++b->nodes > MAX_NODES) {
        json_decref(v);
        return yfail(b, at, "more than %d values", MAX_NODES);
    }
    if (b->depth == 0) {
        b->root = v;
        return 0;
    }
    frame *f = &b->stack[b->depth - 1];
    if (json_is_array(f->c))
        return json_array_append_new(f->c, v) ? yfail(b, at, "out of memory") : 0;
    /* a repeated key: the last wins, as in PyYAML */
    int rc = json_object_set_new(f->c, f->key ? f->key : "", v);
    free(f->key);
    f->key = NULL;
    return rc ? yfail(b, at, "key is not valid UTF-8") : 0;
}

static int on_scalar(ybuild *b, const yaml_event_t *e)
{
    const char *s = (const char *)e->data.scalar.value;
    size_t n = e->data.scalar.length;
    frame *f = b->depth ? &b->stack[b->depth - 1] : NULL;
    if (f && json_is_object(f->c) && !f->key) { /* a key: its text */
        if (!(f->key = malloc(n + 1)))
            return yfail(b, &e->start_mark, "out of memory");
        memcpy(f->key, s, n);
        f->key[n] = 0;
        if (memchr(s, 0, n))
            return yfail(b, &e->start_mark, "a key holds a NUL character");
        return 0;
    }
    json_t *v = e->data.scalar.style == YAML_PLAIN_SCALAR_STYLE ? resolve_plain(s, n)
                                                                 : json_stringn(s, n);
    return place(b, v, &e->start_mark);
}

static int open_node(ybuild *b, const yaml_event_t *e, bool map)
{
    frame *f = b->depth ? &b->stack[b->depth - 1] : NULL;
    if (f && json_is_object(f->c) && !f->key)
        return yfail(b, &e->start_mark, "complex keys (a mapping or sequence as a key) are not read");
    if (b->depth >= MAX_DEPTH)
        return yfail(b, &e->start_mark, "nesting deeper than %d", MAX_DEPTH);
    json_t *c = map ? json_object() : json_array();
    if (!c)
        return yfail(b, &e->start_mark, "out of memory");
    b->stack[b->depth++] = (frame){c, NULL};
    return 0;
}

static int close_node(ybuild *b, const yaml_event_t *e)
{
    frame f = b->stack[--b->depth];
    free(f.key);
    return place(b, f.c, &e->start_mark);
}

/* Anchors, aliases and tags: refused (safe_load would expand an alias). */
static bool decorated(const yaml_event_t *e)
{
    switch (e->type) {
    case YAML_ALIAS_EVENT: return true;
    case YAML_SCALAR_EVENT: return e->data.scalar.anchor || e->data.scalar.tag;
    case YAML_SEQUENCE_START_EVENT: return e->data.sequence_start.anchor || e->data.sequence_start.tag;
    case YAML_MAPPING_START_EVENT: return e->data.mapping_start.anchor || e->data.mapping_start.tag;
    default: return false;
    }
}

static int on_event(ybuild *b, const yaml_event_t *e, int *documents)
{
    if (decorated(e))
        return yfail(b, &e->start_mark, "anchors, aliases and tags are not read");
    switch (e->type) {
    case YAML_DOCUMENT_START_EVENT:
        return ++*documents > 1 ? yfail(b, &e->start_mark, "more than one YAML document") : 0;
    case YAML_SCALAR_EVENT: return on_scalar(b, e);
    case YAML_SEQUENCE_START_EVENT: return open_node(b, e, false);
    case YAML_MAPPING_START_EVENT: return open_node(b, e, true);
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT: return close_node(b, e);
    default: return 0;
    }
}

/* The YAML text as one JSON value (NULL for an empty document), or -1. */
static int yaml_to_json(const char *text, size_t n, json_t **out, mf_status *st)
{
    ybuild b = {.st = st};
    *out = NULL;
    if (!yaml_parser_initialize(&b.p))
        return mf_oom(st, NULL);
    yaml_parser_set_input_string(&b.p, (const unsigned char *)text, n);
    yaml_parser_set_encoding(&b.p, YAML_UTF8_ENCODING);
    int rc = 0, documents = 0;
    for (bool done = false; !done && rc == 0;) {
        yaml_event_t e;
        if (!yaml_parser_parse(&b.p, &e)) {
            rc = yfail(&b, &b.p.problem_mark, "%s%s%s", b.p.problem ? b.p.problem : "malformed YAML",
                       b.p.context ? " " : "", b.p.context ? b.p.context : "");
            break;
        }
        done = e.type == YAML_STREAM_END_EVENT;
        rc = on_event(&b, &e, &documents);
        yaml_event_delete(&e);
    }
    while (b.depth > 0) { /* stopped inside containers */
        frame *f = &b.stack[--b.depth];
        free(f->key);
        json_decref(f->c);
    }
    yaml_parser_delete(&b.p);
    if (rc) {
        json_decref(b.root);
        return -1;
    }
    *out = b.root;
    return 0;
}

/* ---------------------------------------------------------------- API */

json_t *mf_hf_front_matter(const char *text, size_t n, mf_status *st)
{
    /* the first line must be exactly "---" */
    size_t e = 0;
    while (e < n && text[e] != '\n' && text[e] != '\r')
        e++;
    if (e != 3 || memcmp(text, "---", 3) != 0)
        return json_object();
    size_t b = e + (e + 1 < n && text[e] == '\r' && text[e + 1] == '\n' ? 2 : 1);
    if (b > n)
        b = n;
    /* up to the closing "---" line (or the end of the file) */
    size_t end = b;
    for (size_t pos = b; pos < n;) {
        size_t le = pos;
        while (le < n && text[le] != '\n' && text[le] != '\r')
            le++;
        if (le - pos == 3 && memcmp(text + pos, "---", 3) == 0)
            break;
        pos = le + (le + 1 < n && text[le] == '\r' && text[le + 1] == '\n' ? 2 : 1);
        end = pos > n ? n : pos;
    }
    json_t *root;
    if (yaml_to_json(text + b, end - b, &root, st))
        return NULL;
    if (!root || json_is_null(root)) {
        json_decref(root);
        return json_object();
    }
    if (!json_is_object(root)) {
        json_decref(root);
        mf_fail(st, MF_ERR_FORMAT, NULL, -1, "front matter is not a mapping");
        return NULL;
    }
    return root;
}
