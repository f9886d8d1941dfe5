/* jinja_int.h - what jinja.c (lexer, parser) hands jinja_eval.c (the
 * analysis): tokens and the tree. Private to those two files. */
#ifndef MF_JINJA_INT_H
#define MF_JINJA_INT_H
#include "ops/jinja.h"

#include <strings.h>

#define JINJA_MAX_TOKENS 2000000
#define JINJA_MAX_NODES 4000000
#define JINJA_MAX_DEPTH 200
/* Height of the tree (chains like a.b.c.d or a ~ b ~ c nest without
 * recursion in the parser; the analysis recurses over them): beyond it a
 * template is not analysed (unknown). Real templates stay below 40. */
#define JINJA_MAX_HEIGHT 160

enum { JT_EOF, JT_NAME, JT_STRING, JT_INT, JT_FLOAT, JT_OP,
       JT_BLOCK_BEGIN, JT_BLOCK_END, JT_VAR_BEGIN, JT_VAR_END, JT_DATA };

typedef struct jtok {
    int type;
    uint64_t off;     /* byte in the template */
    const char *s;    /* name (in the source) or decoded string (arena) */
    uint32_t slen;
    uint16_t op;      /* '+' or ('/' << 8 | '/') for two-character operators */
    bool str_ok;      /* a string whose every escape mfmt could decode */
    bool non_ascii;   /* a name with characters beyond ASCII */
    bool ival_ok;
    int64_t ival;
} jtok;

/* Expression and statement nodes (k: children; NULL where a part is absent) */
enum {
    JE_NAME,    /* s */
    JE_STR,     /* s, slen; flags: decoded exactly */
    JE_NUM,     /* ival; flags: an int that fits */
    JE_NONE,    /* true, false, none (no string) */
    JE_LIST, JE_TUPLE, JE_DICT, /* k (dict: key, value, key, value...) */
    JE_GETATTR, /* k[0].s; flags: non-ASCII name */
    JE_GETITEM, /* k[0][k[1]] */
    JE_SLICE,   /* k[0]:k[1]:k[2] */
    JE_CALL,    /* k[0](k[1..]) */
    JE_KW,      /* s=k[0] (call argument or parameter with a default) */
    JE_STAR, JE_DSTAR, /* *k[0], **k[0] */
    JE_FILTER,  /* k[0]|s(k[1..]) */
    JE_TEST,    /* k[0] is [not] s(k[1..]) */
    JE_BIN,     /* k[0] op k[1] */
    JE_UNARY,   /* op k[0] */
    JE_COND,    /* k[1] if k[0] else k[2] */
    JS_LIST,    /* statements */
    JS_OUT,     /* {{ k[0] }}, {% do k[0] %}; no kids: break/continue */
    JS_FOR,     /* for k[0] in k[1] if k[2]: k[3] else k[4]; flags: recursive */
    JS_IF,      /* if k[0]: k[1] else k[2] */
    JS_SET,     /* k[0] = k[1] | block k[2] filtered by k[3] */
    JS_MACRO,   /* s(k[1..]) = k[0] */
    JS_CALLBLOCK, /* call(k[2..]) k[1]: k[0] */
    JS_FILTERBLOCK, /* filter k[0]: k[1] */
    JS_WITH,    /* with k[1] = k[2], ...: k[0] */
    JS_BLOCK,   /* block s: k[1] */
    JS_WRAP,    /* autoescape k[0] / generation: k[1] */
    JS_LOAD,    /* s (extends, include, import, from) k[0] */
    JS_UNKNOWN, /* a tag s no default environment knows */
    JS_DATA,    /* template text s (a {% set %} block's value when alone) */
};
enum { JOP_CMP = 1000, JOP_AND, JOP_OR, JOP_NOT };

typedef struct jnode {
    uint8_t kind;
    uint8_t flags;
    uint16_t op;
    uint16_t height; /* 1 + the highest child's */
    uint32_t nk;
    uint64_t off;
    const char *s;
    uint32_t slen;
    int64_t ival;
    struct jnode **k;
} jnode;

typedef struct jparse {
    const char *src;
    size_t n;
    mf_arena *a;
    MF_VEC(jtok) toks;
    size_t pos;
    int depth;
    size_t n_nodes;
    bool failed;
    uint64_t err_off;
    char err[300];
} jparse;

/* jinja_eval.c: judges the parsed template; the worst MF_CODE_*. */
int mf_jinja_analyse(jparse *p, const jnode *root, mf_jinja_fn fn, void *ctx);

#endif
