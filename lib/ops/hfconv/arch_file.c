/* arch_file.c - an architecture read from a JSON file (arch_file.h,
 * doc/arch-file.md). The file becomes the very rows of the built-in tables:
 * a conv_arch (rules, hyper-parameter keys, tokenizer kind, flags), name
 * rows (conv_name_row) and the reverse names (hf_rev_name), all in one
 * arena. Every name the file may use (ops, calcs, blocks, flags, tokenizer
 * kinds) is looked up in a table here; anything else is an error naming the
 * file, the JSON path and its line and column. */
#include "ops/hfconv/arch_file.h"
#include "core/json_build.h"
#include "core/json_pos.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

enum { MAX_DEPTH = 6, MAX_SRC = 250 };

typedef struct loader {
    conv_arch_file *f;
    const char *text;
    size_t n;
    mf_json_step path[MAX_DEPTH];
    size_t depth;
    mf_status *st;
} loader;

/* ------------------------------------------------------------ errors */

/* "$.tensors[3].op" of the current path */
static void path_text(const loader *l, char *out, size_t cap)
{
    size_t k = (size_t)snprintf(out, cap, "$");
    for (size_t i = 0; i < l->depth && k < cap; i++)
        k += l->path[i].key ? (size_t)snprintf(out + k, cap - k, ".%s", l->path[i].key)
                            : (size_t)snprintf(out + k, cap - k, "[%zu]", l->path[i].index);
}

static int fail(loader *l, const char *fmt, ...) MF_PRINTF(2, 3);
static int fail(loader *l, const char *fmt, ...)
{
    char where[256], msg[768];
    path_text(l, where, sizeof(where));
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    int64_t off = mf_json_locate(l->text, l->n, 0, l->path, l->depth);
    int line = 1, col = 1;
    for (int64_t i = 0; i < off && (size_t)i < l->n; i++) {
        col = l->text[i] == '\n' ? 1 : col + 1;
        line += l->text[i] == '\n';
    }
    if (off < 0)
        return mf_fail(l->st, MF_ERR_FORMAT, l->f->path, -1, "arch file: %s: %s", where, msg);
    return mf_fail(l->st, MF_ERR_FORMAT, l->f->path, off, "arch file: line %d, column %d: %s: %s", line, col, where,
                   msg);
}

static void push_key(loader *l, const char *key)
{
    l->path[l->depth++] = (mf_json_step){.key = key};
}

static void push_index(loader *l, size_t i)
{
    l->path[l->depth++] = (mf_json_step){.key = NULL, .index = i};
}

static void pop(loader *l)
{
    l->depth--;
}

/* Every member of obj must be one of `known` (NULL-terminated). */
static int only_keys(loader *l, json_t *obj, const char *const *known)
{
    const char *k;
    json_t *v;
    json_object_foreach(obj, k, v) {
        bool ok = false;
        for (const char *const *q = known; *q && !ok; q++)
            ok = !strcmp(*q, k);
        if (!ok) {
            char list[512] = "";
            for (const char *const *q = known; *q; q++)
                snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", q == known ? "" : ", ", *q);
            push_key(l, k);
            int rc = fail(l, "unknown key \"%s\" (known: %s)", k, list);
            pop(l);
            return rc;
        }
    }
    return 0;
}

/* A string member (NULL when absent and not required). */
static int get_str(loader *l, json_t *obj, const char *key, bool required, const char **out)
{
    json_t *v = json_object_get(obj, key);
    *out = NULL;
    if (!v && !required)
        return 0;
    push_key(l, key);
    int rc = 0;
    if (!v)
        rc = fail(l, "missing (a string)");
    else if (!json_is_string(v) || !json_string_length(v))
        rc = fail(l, "must be a non-empty string");
    else if (!(*out = mf_arena_strdup(l->f->a, json_string_value(v))))
        rc = mf_oom(l->st, l->f->path);
    pop(l);
    return rc;
}

static int get_bool(loader *l, json_t *obj, const char *key, bool *out)
{
    json_t *v = json_object_get(obj, key);
    *out = false;
    if (!v)
        return 0;
    if (!json_is_boolean(v)) {
        push_key(l, key);
        int rc = fail(l, "must be true or false");
        pop(l);
        return rc;
    }
    *out = json_is_true(v);
    return 0;
}

/* ------------------------------------------------------- name tables */

typedef struct named {
    const char *name;
    int value;
} named;

static int by_name(loader *l, const named *t, const char *what, const char *s, int *out)
{
    for (const named *p = t; p->name; p++)
        if (!strcmp(p->name, s)) {
            *out = p->value;
            return 0;
        }
    char list[1024] = "";
    for (const named *p = t; p->name; p++)
        snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", p == t ? "" : ", ", p->name);
    return fail(l, "unknown %s \"%s\" (known: %s)", what, s, list);
}

static const named vocab_kinds[] = {
    {"llama", V_LLAMA}, {"spm_or_bpe", V_SPM_OR_BPE}, {"gpt2", V_BPE}, {"bpe", V_BPE}, {"spm", V_SPM},
    {"gemma", V_GEMMA}, {"gemma2", V_GEMMA2}, {"phi3", V_PHI3}, {"internlm2", V_INTERNLM2}, {"bert", V_BERT},
    {"internlm3", V_INTERNLM3}, {"nemotron", V_NEMOTRON}, {"mamba", V_MAMBA}, {"roberta", V_ROBERTA},
    {"xlmr", V_XLMR}, {"t5", V_T5}, {"jina", V_JINA}, {"gemma3", V_GEMMA3}, {"glm", V_GLM}, {"ernie", V_ERNIE},
    {"xverse", V_XVERSE}, {"openelm", V_OPENELM}, {"qwen", V_QWEN}, {"chatglm", V_CHATGLM}, {"deci", V_DECI}, {NULL, 0},
};

static const named flag_names[] = {
    {"no_head_dim", AF_NO_HEAD_DIM}, {"ctx_model_max", AF_CTX_MODEL_MAX}, {"llama3_rope", AF_LLAMA3_ROPE},
    {"longrope", AF_LONGROPE}, {"only_2026", AF_ONLY_2026}, {"rope_factors", AF_ROPE_FACTORS},
    {"rope_factors_qk", AF_ROPE_FACTORS_QK}, {"k_permute_ratio", AF_K_PERMUTE_RATIO},
    {"alibi_bias", AF_ALIBI_BIAS}, {"nextn", AF_NEXTN}, {"force_quant", AF_FORCE_QUANT}, {NULL, 0},
};

/* Tensor entries' ops. OP_SKIP_IF_TIED, OP_SKIP and the generated tensors
 * have no reverse row (nothing comes back, or the GGUF has it only). */
enum { T_NONE = 100, T_GENERATED, T_STACK, T_SPLIT };
static const named tensor_ops[] = {
    {"none", T_NONE}, {"skip", OP_SKIP}, {"skip_if_tied", OP_SKIP_IF_TIED}, {"permute_q", OP_PERMUTE_Q},
    {"permute_k", OP_PERMUTE_K}, {"add_one", OP_ADD_ONE}, {"neg_exp", OP_NEG_EXP}, {"transpose", OP_TRANSPOSE},
    {"stack", T_STACK}, {"split", T_SPLIT}, {"generated", T_GENERATED}, {"head0_interleave", OP_HEAD0_INTERLEAVE},
    {"swap_row_groups", OP_SWAP_ROW_GROUPS}, {"swap_col_groups", OP_SWAP_COL_GROUPS}, {NULL, 0},
};
static const named part_ops[] = {
    {"none", OP_RENAME}, {"permute_q", OP_PERMUTE_Q}, {"permute_k", OP_PERMUTE_K}, {NULL, 0},
};
static const named rule_ops[] = {{"rename", OP_RENAME}, {"skip", OP_SKIP}, {NULL, 0}};
static const named matches[] = {
    {"prefix", M_PREFIX}, {"suffix", M_SUFFIX}, {"contains", M_CONTAINS}, {"exact", M_EXACT}, {NULL, 0},
};

/* The computed values, key blocks and split functions of arch.h, by name. */
typedef struct named_ptr {
    const char *name;
    const conv_calc *calc;
    const conv_block *block;
    int (*rows)(struct conv *c, int64_t bid, int64_t rows, int64_t *first);
} named_ptr;
#define CALC_ROW(n) {#n, &conv_calc_##n, NULL, NULL},
#define BLOCK_ROW(n) {#n, NULL, &conv_block_##n, NULL},
#define ROWS_ROW(n) {#n, NULL, NULL, h2g_rows_##n},
static const named_ptr calcs[] = {CONV_CALCS(CALC_ROW){NULL, NULL, NULL, NULL}};
static const named_ptr blocks[] = {CONV_BLOCKS(BLOCK_ROW){NULL, NULL, NULL, NULL}};
static const named_ptr split_rows[] = {CONV_SPLIT_ROWS(ROWS_ROW){NULL, NULL, NULL, NULL}};

/* s in table, else NULL after an error listing the names */
static const named_ptr *find_ptr(loader *l, const named_ptr *table, const char *what, const char *s)
{
    for (const named_ptr *p = table; p->name; p++)
        if (!strcmp(p->name, s))
            return p;
    char list[1536] = "";
    for (const named_ptr *p = table; p->name; p++)
        snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", p == table ? "" : ", ", p->name);
    fail(l, "unknown %s \"%s\" (known: %s)", what, s, list);
    return NULL;
}

/* ------------------------------------------------------------ patterns */

static bool has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

/* pat (with {bid}, {x}) against exactly name[0..n) */
static bool match_n(const char *pat, const char *name, size_t n)
{
    size_t i = 0;
    for (const char *p = pat; *p;) {
        size_t ph = !strncmp(p, "{bid}", 5) ? 5 : !strncmp(p, "{x}", 3) ? 3 : 0;
        if (ph) {
            size_t d = 0;
            while (i + d < n && name[i + d] >= '0' && name[i + d] <= '9' && d < 10)
                d++;
            if (!d || (d > 1 && name[i] == '0'))
                return false;
            i += d;
            p += ph;
        } else {
            if (i >= n || name[i] != *p)
                return false;
            i++;
            p++;
        }
    }
    return i == n;
}

bool conv_pattern_match(const char *pat, const char *name)
{
    size_t n = strlen(name);
    if (match_n(pat, name, n))
        return true;
    if (has_suffix(pat, ".weight") || has_suffix(pat, ".bias"))
        return false;
    static const char *const sfx[] = {".weight", ".bias"};
    for (int s = 0; s < 2; s++)
        if (has_suffix(name, sfx[s]) && match_n(pat, name, n - strlen(sfx[s])))
            return true;
    return false;
}

/* s with every `from` replaced by `to` (arena) */
static char *replace_all(mf_arena *a, const char *s, const char *from, const char *to)
{
    size_t n = strlen(s), fl = strlen(from), tl = strlen(to), cnt = 0;
    for (const char *p = strstr(s, from); p; p = strstr(p + fl, from))
        cnt++;
    char *out = mf_arena_alloc(a, n + cnt * (tl > fl ? tl - fl : 0) + 1);
    if (!out)
        return NULL;
    char *d = out;
    for (const char *p = s; *p;) {
        if (!strncmp(p, from, fl)) {
            memcpy(d, to, tl);
            d += tl;
            p += fl;
        } else {
            *d++ = *p++;
        }
    }
    *d = 0;
    return out;
}

/* the pattern without a trailing .weight / .bias (a name row's form) */
static char *base_of(mf_arena *a, const char *pat)
{
    size_t n = strlen(pat);
    if (has_suffix(pat, ".weight"))
        n -= 7;
    else if (has_suffix(pat, ".bias"))
        n -= 5;
    return mf_arena_strndup(a, pat, n);
}

/* "{bid}" and "{x}" only, each at most once; no other brace */
static int check_pattern(loader *l, const char *pat, bool x_allowed)
{
    int n_bid = 0, n_x = 0;
    for (const char *p = pat; *p; p++) {
        if (*p == '{' && !strncmp(p, "{bid}", 5)) {
            p += 4;
            n_bid++;
        } else if (*p == '{' && x_allowed && !strncmp(p, "{x}", 3)) {
            p += 2;
            n_x++;
        } else if (*p == '{' || *p == '}') {
            return fail(l, "\"%s\": only {bid}%s may stand in a name", pat, x_allowed ? " and {x}" : "");
        }
    }
    if (n_bid > 1 || n_x > 1)
        return fail(l, "\"%s\": {bid} and {x} stand once at most", pat);
    return 0;
}

/* ---------------------------------------------------------- building */

typedef struct lists {
    MF_VEC(conv_rule) rules;
    MF_VEC(conv_name_row) names;
    MF_VEC(hf_rev_name) rev;
    MF_VEC(conv_hp) hps;
} lists;

/* MF_VEC_PUSH, out of memory as the loader's error */
#define PUSH(vec, item, l) (MF_VEC_PUSH(vec, item) ? mf_oom((l)->st, (l)->f->path) : 0)

static const char *const one_w[] = {"", NULL};

static int add_rev(loader *l, lists *s, const char *gguf, const char *hf, hf_rev_op op)
{
    for (size_t i = 0; i < s->rev.n; i++)
        if (!strcmp(s->rev.v[i].gguf, gguf))
            return 0; /* the first entry of a GGUF name is the one written back */
    return PUSH(s->rev, ((hf_rev_name){gguf, hf, op}), l);
}

static int add_name(loader *l, lists *s, const char *hf, const char *gguf)
{
    return PUSH(s->names, ((conv_name_row){hf, gguf}), l);
}

hf_rev_op conv_reverse_op(conv_op op)
{
    switch (op) {
    case OP_PERMUTE_Q: return R_UNPERMUTE_Q;
    case OP_PERMUTE_K: return R_UNPERMUTE_K;
    case OP_ADD_ONE: return R_SUB_ONE;
    case OP_NEG_EXP: return R_LOG_NEG;
    case OP_TRANSPOSE: return R_TRANSPOSE;
    case OP_STACK: return R_UNSTACK;
    case OP_QKV_PER_HEAD: return R_QKV_PER_HEAD;
    case OP_QKV_KV_GROUPS: return R_QKV_KV_GROUPS;
    case OP_QKV_GROUPED: return R_FUSE_GROUPED;
    case OP_DROP_ROWS: return R_PAD_ROWS;
    case OP_TERNARY: return R_UNTERNARY;
    case OP_CUT_ROWS: return R_JOIN_UP;
    case OP_VIEW_EXPERTS: return R_UNVIEW_EXPERTS;
    case OP_VIEW_EXPERTS_T: return R_UNVIEW_EXPERTS_T;
    case OP_MXFP4: return R_MXFP4_UNPACK;
    case OP_SQUEEZE1: return R_UNSQUEEZE1;
    case OP_UNSQUEEZE_LAST: case OP_GROUPS: return R_FLAT;
    case OP_HALVE_EVERY: return R_DOUBLE_EVERY;
    case OP_SWAP_LAST2: return R_EXPERTS_T;
    case OP_STACK_PARTS: return R_UNSTACK;
    case OP_QKVZ: return R_QKVZ;
    case OP_SPLIT_ROWS: return R_FUSE_ROWS;
    case OP_DEINTERLEAVE: return R_INTERLEAVE;
    case OP_EXPERTS_T: return R_EXPERTS_T;
    case OP_SPLIT: return R_CONCAT;
    case OP_HEAD0_INTERLEAVE: return R_HEAD_DEINTERLEAVE;
    case OP_SWAP_ROW_GROUPS: return R_SWAP_ROW_GROUPS;
    case OP_SWAP_COL_GROUPS: return R_SWAP_COL_GROUPS;
    case OP_RKVWG: return R_TRANSPOSE_RKVWG; /* with a transpose; after OP_SWAP_LAST2: R_EXPERTS_T_RKVWG */
    default: return R_PLAIN;
    }
}

/* {"gguf": ..., "op": "permute_q"} of a split's "parts" */
static int split_entry(loader *l, lists *s, json_t *e, const char *hf, conv_rule *r)
{
    static const char *const part_keys[] = {"gguf", "op", NULL};
    json_t *parts = json_object_get(e, "parts");
    push_key(l, "parts");
    size_t np = json_array_size(parts);
    if (!json_is_array(parts) || np < 2 || np > 8) {
        int rc = fail(l, "a split needs \"parts\": an array of 2 to 8 objects {\"gguf\", \"op\"}");
        pop(l);
        return rc;
    }
    const char **names = mf_arena_calloc(l->f->a, np + 1, sizeof(char *));
    conv_op *ops = mf_arena_calloc(l->f->a, np, sizeof(conv_op));
    conv_split *sp = mf_arena_alloc(l->f->a, sizeof(conv_split));
    if (!names || !ops || !sp) {
        pop(l);
        return mf_oom(l->st, l->f->path);
    }
    for (size_t i = 0; i < np; i++) {
        json_t *p = json_array_get(parts, i);
        push_index(l, i);
        const char *g = NULL, *opn = NULL;
        int op = OP_RENAME;
        int rc = !json_is_object(p) ? fail(l, "must be an object {\"gguf\", \"op\"}")
                 : only_keys(l, p, part_keys) || get_str(l, p, "gguf", true, &g) || get_str(l, p, "op", false, &opn);
        if (!rc && opn) {
            push_key(l, "op");
            rc = by_name(l, part_ops, "part op", opn, &op);
            pop(l);
        }
        if (!rc) {
            push_key(l, "gguf");
            rc = check_pattern(l, g, false);
            pop(l);
        }
        pop(l);
        if (rc) {
            pop(l);
            return -1;
        }
        const char *gb = base_of(l->f->a, g);
        names[i] = gb ? replace_all(l->f->a, gb, "{bid}", "%b") : NULL;
        ops[i] = (conv_op)op;
        if (!names[i] || add_rev(l, s, gb, hf, i ? R_FUSED_PART : R_CONCAT))
            return mf_oom(l->st, l->f->path);
    }
    pop(l);
    sp->names = names;
    sp->ops = ops;
    const char *fr = NULL;
    if (get_str(l, e, "first_rows", false, &fr))
        return -1;
    if (fr) {
        push_key(l, "first_rows");
        const named_ptr *row = find_ptr(l, split_rows, "first_rows function", fr);
        pop(l);
        if (!row)
            return -1;
        if (np != 2) {
            push_key(l, "first_rows");
            int rc = fail(l, "a split by first_rows has 2 parts");
            pop(l);
            return rc;
        }
        sp->first_rows = row->rows;
    }
    r->op = OP_SPLIT;
    r->split = sp;
    return 0;
}

/* One element of "tensors": its name row, forward rule and reverse row. */
static int tensor_entry(loader *l, lists *s, json_t *e)
{
    static const char *const keys[] = {"hf", "gguf", "op", "count", "parts", "first_rows", "groups", "description",
                                       NULL};
    if (!json_is_object(e))
        return fail(l, "must be an object {\"hf\", \"gguf\", \"op\"}");
    const char *hf = NULL, *gguf = NULL, *opn = NULL, *count = NULL;
    if (only_keys(l, e, keys) || get_str(l, e, "hf", false, &hf) || get_str(l, e, "gguf", false, &gguf) ||
        get_str(l, e, "op", false, &opn) || get_str(l, e, "count", false, &count))
        return -1;
    int op = T_NONE;
    if (opn) {
        push_key(l, "op");
        int rc = by_name(l, tensor_ops, "op", opn, &op);
        pop(l);
        if (rc)
            return -1;
    }
    bool want_gguf = op != OP_SKIP && op != OP_SKIP_IF_TIED && op != T_SPLIT;
    if (op == T_GENERATED ? !gguf || hf : !hf || want_gguf != (gguf != NULL))
        return fail(l, op == T_GENERATED ? "a generated tensor has \"gguf\" and no \"hf\""
                       : want_gguf ? "needs \"hf\" and \"gguf\""
                                   : "a skip or split has \"hf\" and no \"gguf\" (a split names its parts)");
    if ((op == T_STACK) != (count != NULL))
        return fail(l, op == T_STACK ? "a stack needs \"count\" (the config key of the number of parts)"
                                     : "\"count\" is for a stack");
    bool swap = op == OP_SWAP_ROW_GROUPS || op == OP_SWAP_COL_GROUPS;
    json_t *groups = json_object_get(e, "groups");
    if (swap != (groups != NULL))
        return fail(l, swap ? "a swap needs \"groups\": [A, B] (rows or columns as [A][B][rest] become [B][A][rest])"
                            : "\"groups\" is for swap_row_groups and swap_col_groups");
    if (swap && (json_array_size(groups) != 2 || !json_is_integer(json_array_get(groups, 0)) ||
                 !json_is_integer(json_array_get(groups, 1)) || json_integer_value(json_array_get(groups, 0)) < 1 ||
                 json_integer_value(json_array_get(groups, 1)) < 1 ||
                 json_integer_value(json_array_get(groups, 0)) > (1 << 20) ||
                 json_integer_value(json_array_get(groups, 1)) > (1 << 20))) {
        push_key(l, "groups");
        int rc = fail(l, "two positive integers [A, B]");
        pop(l);
        return rc;
    }
    if ((op == T_SPLIT) != (json_object_get(e, "parts") != NULL) ||
        (op != T_SPLIT && json_object_get(e, "first_rows")))
        return fail(l, "\"parts\" and \"first_rows\" are for a split, which needs \"parts\"");
    if (hf) {
        push_key(l, "hf");
        int rc = check_pattern(l, hf, op == T_STACK);
        if (!rc && op == T_STACK && !strstr(hf, "{x}"))
            rc = fail(l, "a stack's HF name has {x} (the part's number)");
        pop(l);
        if (rc)
            return -1;
    }
    if (gguf) {
        push_key(l, "gguf");
        int rc = check_pattern(l, gguf, false);
        pop(l);
        if (rc)
            return -1;
    }
    if (hf && gguf && (strstr(hf, "{bid}") != NULL) != (strstr(gguf, "{bid}") != NULL))
        return fail(l, "\"hf\" and \"gguf\" both name the block ({bid}) or neither does");
    mf_arena *a = l->f->a;
    const char *hb = hf ? base_of(a, hf) : NULL, *gb = gguf ? base_of(a, gguf) : NULL;
    if ((hf && !hb) || (gguf && !gb))
        return mf_oom(l->st, l->f->path);
    if (op == T_GENERATED)
        return add_rev(l, s, gb, NULL, R_SKIP);
    conv_rule r = {.m = M_PATTERN, .pat = hf};
    switch (op) {
    case T_NONE:
        return add_name(l, s, hb, gb) || add_rev(l, s, gb, hb, R_PLAIN);
    case T_STACK: { /* parts model...{x}... stacked; the merged name has "*" for {x} */
        const char *sfx = has_suffix(hf, ".weight") || has_suffix(hf, ".bias") ? "" : ".weight";
        char *fb = replace_all(a, hf, "{bid}", "%b"), *fmt = fb ? replace_all(a, fb, "{x}", "%x") : NULL;
        char *star = replace_all(a, hb, "{x}", "*");
        char *merged = star ? replace_all(a, star, "{bid}", "%b") : NULL;
        r.op = OP_STACK;
        r.count_key = count;
        r.part_fmt = fmt ? mf_arena_printf(a, "%s%s", fmt, sfx) : NULL;
        r.merged_fmt = merged ? mf_arena_printf(a, "%s.weight", merged) : NULL;
        r.ws = one_w;
        if (!r.part_fmt || !r.merged_fmt || PUSH(s->rules, r, l) || add_name(l, s, star, gb))
            return mf_oom(l->st, l->f->path);
        return add_rev(l, s, gb, hb, R_UNSTACK);
    }
    case T_SPLIT:
        return split_entry(l, s, e, hb, &r) || PUSH(s->rules, r, l);
    default:
        r.op = (conv_op)op;
        if (swap) {
            long long ga = (long long)json_integer_value(json_array_get(groups, 0)),
                      gb2 = (long long)json_integer_value(json_array_get(groups, 1));
            if (!(r.with = mf_arena_printf(a, "%lld,%lld", ga, gb2)))
                return mf_oom(l->st, l->f->path);
        }
        if (PUSH(s->rules, r, l))
            return -1;
        if (op == OP_SKIP || op == OP_SKIP_IF_TIED)
            return 0;
        return add_name(l, s, hb, gb) || add_rev(l, s, gb, hb, conv_reverse_op((conv_op)op));
    }
}

/* One element of "rules": a rename or skip before the tensor entries
 * (a multimodal checkpoint's "language_model." prefix, its vision tower). */
static int rule_entry(loader *l, lists *s, json_t *e)
{
    static const char *const keys[] = {"op", "prefix", "suffix", "contains", "exact", "with", "description", NULL};
    if (!json_is_object(e))
        return fail(l, "must be an object {\"op\", \"prefix\"|\"suffix\"|\"contains\"|\"exact\", \"with\"}");
    const char *opn, *with = NULL;
    int op = 0, m = -1;
    if (only_keys(l, e, keys) || get_str(l, e, "op", true, &opn))
        return -1;
    push_key(l, "op");
    int rc = by_name(l, rule_ops, "rule op", opn, &op);
    pop(l);
    if (rc)
        return -1;
    conv_rule r = {.op = (conv_op)op};
    for (const named *k = matches; k->name; k++) {
        json_t *v = json_object_get(e, k->name);
        if (!v)
            continue;
        push_key(l, k->name);
        rc = m >= 0 ? fail(l, "one of prefix, suffix, contains, exact") : !json_is_string(v) || !json_string_length(v)
                                                                             ? fail(l, "must be a non-empty string") : 0;
        pop(l);
        if (rc)
            return -1;
        m = k->value;
        if (!(r.pat = mf_arena_strdup(l->f->a, json_string_value(v))))
            return mf_oom(l->st, l->f->path);
    }
    if (m < 0)
        return fail(l, "needs one of prefix, suffix, contains, exact");
    json_t *w = json_object_get(e, "with");
    if ((op == OP_RENAME) != (w != NULL) || (w && !json_is_string(w)))
        return fail(l, op == OP_RENAME ? "a rename needs \"with\" (a string, may be empty)" : "\"with\" is for a rename");
    if (w && !(with = mf_arena_strdup(l->f->a, json_string_value(w))))
        return mf_oom(l->st, l->f->path);
    r.m = (conv_match)m;
    r.with = with;
    return PUSH(s->rules, r, l);
}

/* A JSON scalar as the table's "=V" constant text */
static int constant_text(loader *l, json_t *v, char *out, size_t cap)
{
    if (json_is_string(v) && json_string_length(v) && !strchr(json_string_value(v), '|'))
        snprintf(out, cap, "=%s", json_string_value(v));
    else if (json_is_integer(v))
        snprintf(out, cap, "=%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        snprintf(out, cap, "=%.17g", json_real_value(v));
    else if (json_is_boolean(v))
        snprintf(out, cap, "=%d", json_is_true(v));
    else
        return fail(l, "must be a number, true/false or a non-empty string without '|'");
    return 0;
}

static const named hp_types[] = {
    {"u32", 'u'}, {"i32", 'i'}, {"f32", 'f'}, {"bool", 'b'}, {"str", 's'}, {NULL, 0},
};

/* "from" (a key or a list), "times", "default" (key absent), "or" (falsy) as
 * the table's source text "N*a|b|=V||=W" */
static int hp_source(loader *l, json_t *e, char *src, size_t cap)
{
    json_t *from = json_object_get(e, "from"), *times = json_object_get(e, "times");
    size_t k = 0;
    src[0] = 0;
    if (times) {
        push_key(l, "times");
        int rc = json_is_integer(times) && json_integer_value(times) >= 2 && json_integer_value(times) <= 9
                     ? 0 : fail(l, "must be an integer from 2 to 9");
        pop(l);
        if (rc)
            return -1;
        k += (size_t)snprintf(src, cap, "%d*", (int)json_integer_value(times));
    }
    push_key(l, "from");
    size_t nf = json_is_array(from) ? json_array_size(from) : 1;
    for (size_t i = 0; i < nf; i++) {
        json_t *x = json_is_array(from) ? json_array_get(from, i) : from;
        if (json_is_array(from))
            push_index(l, i);
        const char *ks = json_string_value(x);
        int rc = !ks || !*ks || strpbrk(ks, "|=*") ? fail(l, "a config key: a non-empty string without '|', '=', '*'") : 0;
        if (json_is_array(from))
            pop(l);
        if (rc) {
            pop(l);
            return -1;
        }
        k += (size_t)snprintf(src + k, k < cap ? cap - k : 0, "%s%s", i ? "|" : "", ks);
    }
    if (json_is_array(from) && !nf) {
        int rc = fail(l, "an empty list");
        pop(l);
        return rc;
    }
    pop(l);
    static const char *const tails[] = {"default", "or"};
    for (int t = 0; t < 2; t++) {
        json_t *d = json_object_get(e, tails[t]);
        if (!d)
            continue;
        char c[96];
        push_key(l, tails[t]);
        int rc = constant_text(l, d, c, sizeof(c));
        pop(l);
        if (rc)
            return -1;
        k += (size_t)snprintf(src + k, k < cap ? cap - k : 0, "%s%s", t ? "||" : "|", c);
    }
    if (k >= cap || k > MAX_SRC)
        return fail(l, "the key list is longer than %d characters", MAX_SRC);
    return 0;
}

/* One element of "hparams": a GGUF key and where its value comes from. */
static int hp_entry(loader *l, lists *s, json_t *e)
{
    static const char *const keys[] = {"key", "type", "from", "times", "default", "or", "value", "calc", "block",
                                       "base", "optional", "truthy", "description", NULL};
    if (!json_is_object(e))
        return fail(l, "must be an object {\"key\", \"type\", \"from\"|\"value\"|\"calc\"} or {\"base\": true} "
                       "or {\"block\": NAME}");
    if (only_keys(l, e, keys))
        return -1;
    bool base, opt, truthy;
    const char *key = NULL, *type = NULL, *calc = NULL, *block = NULL;
    if (get_bool(l, e, "base", &base) || get_bool(l, e, "optional", &opt) || get_bool(l, e, "truthy", &truthy) ||
        get_str(l, e, "calc", false, &calc) || get_str(l, e, "block", false, &block))
        return -1;
    int kinds = base + (calc != NULL) + (block != NULL) + (json_object_get(e, "from") != NULL) +
                (json_object_get(e, "value") != NULL);
    if (kinds != 1)
        return fail(l, "exactly one of \"from\", \"value\", \"calc\", \"block\", \"base\": true");
    conv_hp h = {0};
    if (base || block) {
        if (json_object_size(e) != 1 + (json_object_get(e, "description") != NULL))
            return fail(l, "\"base\" and \"block\" stand alone (with a \"description\" at most)");
        h.key = base ? "@base" : mf_arena_printf(l->f->a, "@@%s", block);
        if (block) {
            push_key(l, "block");
            const named_ptr *row = find_ptr(l, blocks, "block", block);
            pop(l);
            if (!row)
                return -1;
            h.block = row->block;
        }
        return h.key ? PUSH(s->hps, h, l) : mf_oom(l->st, l->f->path);
    }
    int t = 0;
    if (get_str(l, e, "key", true, &key) || get_str(l, e, "type", true, &type))
        return -1;
    push_key(l, "type");
    int rc = by_name(l, hp_types, "type", type, &t);
    pop(l);
    if (rc)
        return -1;
    if (key[0] == '@' || strchr(key, ' '))
        return fail(l, "\"%s\": a GGUF key without the architecture's prefix", key);
    h.key = key;
    h.type = (char)t;
    h.flags = (opt ? HP_OPT : 0) | (truthy ? HP_TRUTHY : 0);
    if (calc) {
        if (json_object_get(e, "times") || json_object_get(e, "default") || json_object_get(e, "or"))
            return fail(l, "\"times\", \"default\" and \"or\" go with \"from\"");
        push_key(l, "calc");
        const named_ptr *row = find_ptr(l, calcs, "calc", calc);
        pop(l);
        if (!row)
            return -1;
        h.calc = row->calc;
        return PUSH(s->hps, h, l);
    }
    char src[MAX_SRC + 16];
    json_t *value = json_object_get(e, "value");
    if (value) {
        if (json_object_get(e, "times") || json_object_get(e, "default") || json_object_get(e, "or"))
            return fail(l, "\"times\", \"default\" and \"or\" go with \"from\"");
        push_key(l, "value");
        rc = constant_text(l, value, src, sizeof(src));
        pop(l);
    } else {
        rc = hp_source(l, e, src, sizeof(src));
    }
    if (rc)
        return -1;
    if (!(h.src = mf_arena_strdup(l->f->a, src)))
        return mf_oom(l->st, l->f->path);
    return PUSH(s->hps, h, l);
}

/* Each element of the array member `key` through fn. */
static int each(loader *l, lists *s, json_t *root, const char *key, bool required,
                int (*fn)(loader *, lists *, json_t *))
{
    json_t *arr = json_object_get(root, key);
    if (!arr && !required)
        return 0;
    push_key(l, key);
    if (!json_is_array(arr) || (required && !json_array_size(arr))) {
        int rc = fail(l, arr ? "must be a non-empty array" : "missing (an array)");
        pop(l);
        return rc;
    }
    for (size_t i = 0; i < json_array_size(arr); i++) {
        push_index(l, i);
        int rc = fn(l, s, json_array_get(arr, i));
        pop(l);
        if (rc) {
            pop(l);
            return -1;
        }
    }
    pop(l);
    return 0;
}

static int strings(loader *l, json_t *root, const char *key, bool required, const char ***out, size_t *n)
{
    json_t *arr = json_object_get(root, key);
    *out = NULL;
    *n = 0;
    if (!arr && !required)
        return 0;
    push_key(l, key);
    int rc = 0;
    if (!json_is_array(arr) || (required && !json_array_size(arr)))
        rc = fail(l, arr ? "must be a non-empty array of strings" : "missing (an array of strings)");
    if (!rc && !(*out = mf_arena_calloc(l->f->a, json_array_size(arr) + 1, sizeof(char *))))
        rc = mf_oom(l->st, l->f->path);
    for (size_t i = 0; !rc && i < json_array_size(arr); i++) {
        json_t *v = json_array_get(arr, i);
        push_index(l, i);
        if (!json_is_string(v) || !json_string_length(v))
            rc = fail(l, "must be a non-empty string");
        else if (!((*out)[i] = mf_arena_strdup(l->f->a, json_string_value(v))))
            rc = mf_oom(l->st, l->f->path);
        pop(l);
    }
    *n = rc ? 0 : json_array_size(arr);
    pop(l);
    return rc;
}

/* "reverse": one object {"class", "model_type", "when"} or a list of them,
 * the first whose "when" key the GGUF has non-zero taken (the last has no
 * "when", else the first class is the fallback). */
static int reverse_list(loader *l, json_t *rev)
{
    static const char *const keys[] = {"class", "model_type", "when", NULL};
    bool list = json_is_array(rev);
    size_t n = list ? json_array_size(rev) : 1;
    push_key(l, "reverse");
    int rc = n < 1 || n > 4 ? fail(l, "one object or a list of 1 to 4") : 0;
    for (size_t i = 0; !rc && i < n; i++) {
        json_t *e = list ? json_array_get(rev, i) : rev;
        if (list)
            push_index(l, i);
        const char *cls = NULL, *mt = NULL, *when = NULL;
        rc = !json_is_object(e) ? fail(l, "must be an object {\"class\", \"model_type\", \"when\"}")
             : only_keys(l, e, keys) || get_str(l, e, "class", true, &cls) || get_str(l, e, "model_type", false, &mt) ||
                   get_str(l, e, "when", false, &when);
        if (list)
            pop(l);
        l->f->variants[i].hf_class = cls;
        l->f->variants[i].model_type = mt;
        l->f->variants[i].when = when;
    }
    pop(l);
    l->f->n_variants = rc ? 0 : n;
    return rc;
}

static int top_level(loader *l, json_t *root, lists *s)
{
    static const char *const keys[] = {"mfmt_arch_file", "architecture", "classes", "reverse", "tokenizer",
                                       "pre_tokenizer", "flags", "rules", "tensors", "hparams", "description", NULL};
    if (!json_is_object(root))
        return fail(l, "an arch file holds a JSON object");
    if (only_keys(l, root, keys))
        return -1;
    json_t *ver = json_object_get(root, "mfmt_arch_file");
    if (!json_is_integer(ver) || json_integer_value(ver) != 1) {
        push_key(l, "mfmt_arch_file");
        int rc = fail(l, ver ? "version %s: this mfmt reads version 1" : "missing: the format version (1)",
                      json_is_integer(ver) ? "other than 1" : "not an integer");
        pop(l);
        return rc;
    }
    conv_arch *fa = &l->f->fwd;
    const char *name, *tok;
    const char **classes, **flags;
    size_t n_classes, n_flags;
    if (get_str(l, root, "architecture", true, &name) || strings(l, root, "classes", true, &classes, &n_classes) ||
        get_str(l, root, "tokenizer", true, &tok) || get_str(l, root, "pre_tokenizer", false, &l->f->pre_tokenizer) ||
        strings(l, root, "flags", false, &flags, &n_flags))
        return -1;
    int v = 0;
    push_key(l, "tokenizer");
    int rc = by_name(l, vocab_kinds, "tokenizer kind", tok, &v);
    pop(l);
    if (rc)
        return -1;
    unsigned fl = 0;
    for (size_t i = 0; i < n_flags; i++) {
        int f = 0;
        push_key(l, "flags");
        push_index(l, i);
        rc = by_name(l, flag_names, "flag", flags[i], &f);
        pop(l);
        pop(l);
        if (rc)
            return -1;
        fl |= (unsigned)f;
    }
    json_t *rev = json_object_get(root, "reverse");
    if (rev && reverse_list(l, rev))
        return -1;
    if (each(l, s, root, "rules", false, rule_entry) || each(l, s, root, "tensors", true, tensor_entry) ||
        each(l, s, root, "hparams", true, hp_entry))
        return -1;
    *fa = (conv_arch){.name = name, .classes = classes, .bit = -1, .vocab = (conv_vocab)v, .flags = fl};
    l->f->rev = (hf_rev_arch){.arch = name, .hf_class = classes[0], .model_type = name};
    if (!l->f->n_variants) /* no "reverse": the first class, the architecture's name */
        l->f->variants[l->f->n_variants++].hf_class = NULL;
    return 0;
}

/* The vectors copied into the arena, each with its terminator. */
static int settle(loader *l, lists *s)
{
    mf_arena *a = l->f->a;
    conv_rule *rules = mf_arena_calloc(a, s->rules.n + 1, sizeof(conv_rule));
    conv_hp *hps = mf_arena_calloc(a, s->hps.n + 1, sizeof(conv_hp));
    hf_rev_name *rev = mf_arena_calloc(a, s->rev.n + 1, sizeof(hf_rev_name));
    conv_name_row *names = mf_arena_calloc(a, s->names.n + 1, sizeof(conv_name_row));
    if (!rules || !hps || !rev || !names)
        return mf_oom(l->st, l->f->path);
    if (s->rules.n)
        memcpy(rules, s->rules.v, s->rules.n * sizeof(conv_rule));
    if (s->hps.n)
        memcpy(hps, s->hps.v, s->hps.n * sizeof(conv_hp));
    if (s->rev.n)
        memcpy(rev, s->rev.v, s->rev.n * sizeof(hf_rev_name));
    if (s->names.n)
        memcpy(names, s->names.v, s->names.n * sizeof(conv_name_row));
    l->f->fwd.rules = rules;
    l->f->fwd.hparams = hps;
    l->f->rev.names = rev;
    l->f->names = names;
    l->f->n_names = s->names.n;
    return 0;
}

conv_arch_file *conv_arch_file_load(const char *path, mf_status *st)
{
    mf_arena *a = mf_arena_new();
    conv_arch_file *f = a ? mf_arena_alloc(a, sizeof(*f)) : NULL;
    if (!f) {
        mf_arena_free(a);
        mf_oom(st, path);
        return NULL;
    }
    f->a = a;
    f->path = mf_arena_strdup(a, path);
    char *text = NULL;
    size_t n = 0;
    if (!f->path || mf_read_small_file(path, 16u << 20, &text, &n, st)) {
        if (!f->path)
            mf_oom(st, path);
        mf_arena_free(a);
        return NULL;
    }
    json_error_t je;
    json_t *root = mf_json_loadb(text, n, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        if (mf_json_error_is_oom(&je))
            mf_oom(st, path);
        else
            mf_fail(st, MF_ERR_FORMAT, path, (int64_t)je.position, "arch file: not valid JSON (line %d, column %d): %s",
                    je.line, je.column, je.text);
        free(text);
        mf_arena_free(a);
        return NULL;
    }
    loader l = {.f = f, .text = text, .n = n, .st = st};
    lists s = {0};
    int rc = top_level(&l, root, &s);
    if (rc == 0)
        rc = settle(&l, &s);
    free(s.rules.v);
    free(s.names.v);
    free(s.rev.v);
    free(s.hps.v);
    json_decref(root);
    free(text);
    if (rc) {
        mf_arena_free(a);
        return NULL;
    }
    return f;
}

void conv_arch_file_free(conv_arch_file *f)
{
    if (f)
        mf_arena_free(f->a);
}
