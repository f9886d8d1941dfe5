/* gguf2hf_mmproj.c - GGUF -> HF of an mmproj file (llama.cpp's vision tower
 * + projector, `clip`), alone (`convert mmproj.gguf OUT/`) or with its text
 * model (`convert model.gguf OUT/ --with-mmproj mmproj.gguf`): the inverse of
 * hf2gguf_mmproj.c, derived from the same rows (mmproj_table.c), nothing per
 * family written twice:
 *  - the row: the one whose "projector_type" constant is the file's;
 *  - each tensor's HF name: the preimage of its GGUF name under the row's
 *    rules and gguf-py's MMPROJ map (conv_clip_names), found by undoing the
 *    rules last to first (prefix/suffix renames, OP_RENUMBER through the
 *    config list, OP_GGUF_NAME, the skip tests); where gguf-py's map has
 *    several names the class's layout (conv_mm_layouts) ranks them;
 *  - each tensor op undone: OP_SPLIT's parts concatenated, OP_UNSTACK's
 *    entries stacked back, OP_PERMUTE_Q/K unpermuted with the vision heads,
 *    OP_ADD_ONE minus one, OP_PICK_ROW's row left to the text embedding
 *    (alone: a two-row embedding with the token at id 1);
 *  - vision_config from the row's key list read backwards (a key's first
 *    config name, through the row's `fixes` to the key the class reads it
 *    from; "^k" into config.json, "pre:k" into preprocessor_config.json),
 *    each computed key through its conv_calc's inverse.
 * g2h_mm_reversible says which forward ops have an inverse here;
 * tests/test_mmproj_rev.c fails on a row using any other. */
#include "ops/hfconv/gguf2hf_int.h"
#include "ops/hfconv/hf2gguf_int.h"
#include "formats/formats.h"

#include <math.h>
#include <stdlib.h>

bool g2h_mm_reversible(conv_op op)
{
    switch (op) {
    case OP_SKIP: case OP_SKIP_UNLESS: case OP_RENAME: case OP_GGUF_NAME: case OP_RENUMBER:
    case OP_UNSTACK: case OP_SPLIT: case OP_PICK_ROW: case OP_ADD_ONE: case OP_PERMUTE_Q: case OP_PERMUTE_K:
    case OP_UNSQUEEZE_LAST: case OP_QK_SPLIT_ROPE:
        return true;
    default:
        return false;
    }
}

/* Every rule of the row has its reverse here (a split's parts renames),
 * every computed key but the file type and every key block its inverse:
 * else false and `why` names the first that has none. A row that is not
 * is converted HF -> GGUF only; GGUF -> HF of its mmproj is refused. */
bool g2h_mm_row_reversible(const conv_mmproj *row, char *why, size_t cap)
{
    const conv_mm_layout *l = g2h_mm_layout(row->a.classes[0]);
    if (l && l->not_reversible) {
        snprintf(why, cap, "%s", l->not_reversible);
        return false;
    }
    for (const conv_rule *r = row->a.rules; r->pat; r++) {
        bool ok = g2h_mm_reversible(r->op);
        for (size_t p = 0; ok && r->op == OP_SPLIT && r->split->names[p]; p++)
            ok = r->split->ops[p] == OP_RENAME;
        if (!ok) {
            snprintf(why, cap, "its rule \"%s\" (op %d) has no reverse", r->pat, (int)r->op);
            return false;
        }
    }
    for (const conv_hp *h = row->a.hparams; h->key; h++) {
        if (h->calc && strcmp(h->key, "general.file_type") && !h->calc->back) {
            snprintf(why, cap, "its computed key %s has no inverse", h->key);
            return false;
        }
        if (h->block && !h->block->back) {
            snprintf(why, cap, "a key block of its config has no inverse");
            return false;
        }
    }
    return true;
}

/* OP_RENAME undone only where the forward's change is not ambiguous:
 * a prefix, a suffix or a whole name (a substring rename: rev_names). */
static bool rename_invertible(const conv_rule *r)
{
    return r->m == M_PREFIX || r->m == M_SUFFIX || r->m == M_EXACT;
}

/* ------------------------------------------------------------ lookups */

static const mf_value *mm_key(const hfc *c, const char *key)
{
    char k[160];
    if (!strncmp(key, "general.", 8))
        return mf_meta_get(c->mm->m, key);
    snprintf(k, sizeof(k), "clip.%s", key);
    return mf_meta_get(c->mm->m, k);
}

static int64_t mm_int(const hfc *c, const char *key, int64_t dflt)
{
    int64_t x;
    return hfc_int(mm_key(c, key), &x) ? x : dflt;
}

/* The projector type a row writes (its "projector_type" constant). */
static const char *row_projector(const conv_mmproj *row)
{
    const char *p = NULL; /* the last: a class writes its own over its base's, in place */
    for (const conv_hp *h = row->a.hparams; h->key; h++)
        if (!strcmp(h->key, "projector_type") && h->src && h->src[0] == '=')
            p = h->src + 1;
    return p;
}

const conv_mm_layout *g2h_mm_layout(const char *hf_class)
{
    for (size_t i = 0; hf_class && i < conv_n_mm_layouts; i++)
        if (!strcmp(conv_mm_layouts[i].hf_class, hf_class))
            return &conv_mm_layouts[i];
    return NULL;
}

/* Is cls the text model's class or one its forward row takes? */
static bool text_takes(const hfc *c, const char *cls)
{
    if (c->hf_class && !strcmp(cls, c->hf_class))
        return true;
    for (const char *const *f = c->fwd ? c->fwd->classes : NULL; f && *f; f++)
        if (!strcmp(*f, cls))
            return true;
    return false;
}

/* The row's class: the one of its model_type (Qwen2.5-VL's row), else the
 * one the text model's row shares, else the first; NULL when a text model
 * is given and shares none (not the text model of this projector). */
static const char *pick_class(const hfc *c, const conv_mmproj *row, bool alone)
{
    bool shared = false;
    const char *fit = NULL;
    for (const char *const *k = row->a.classes; *k; k++)
        if (!alone && text_takes(c, *k)) {
            shared = true;
            fit = fit ? fit : *k;
        }
    if (!alone && !shared)
        return NULL;
    for (const char *const *k = row->a.classes; row->model_type && *k; k++) {
        const conv_mm_layout *l = g2h_mm_layout(*k);
        if (l && !strcmp(l->model_type, row->model_type))
            return *k;
    }
    return fit ? fit : row->a.classes[0];
}

/* ------------------------------------------------------------ names */

static bool starts(const char *s, const char *p)
{
    return !strncmp(s, p, strlen(p));
}

static bool ends(const char *s, const char *p)
{
    size_t n = strlen(s), k = strlen(p);
    return n >= k && !strcmp(s + n - k, p);
}

static bool rule_hits(const conv_rule *r, const char *name)
{
    switch (r->m) {
    case M_SUFFIX: return ends(name, r->pat);
    case M_EXACT: return !strcmp(name, r->pat);
    case M_CONTAINS: return strstr(name, r->pat) != NULL;
    case M_PREFIX: return starts(name, r->pat);
    default: return false;
    }
}

static bool kept(const conv_rule *r, const char *name)
{
    for (const char *const *w = r->ws; w && *w; w++)
        if (r->m == M_PREFIX ? starts(name, *w) : strstr(name, *w) != NULL)
            return true;
    return false;
}

/* `from` at the matched place of name replaced by `to` (M_PREFIX, M_SUFFIX,
 * M_EXACT, or the first occurrence). */
static void replace_at(const char *name, conv_match m, const char *from, const char *to, char *out, size_t cap)
{
    size_t n = strlen(name), k = strlen(from);
    const char *at = m == M_PREFIX ? name : m == M_SUFFIX ? name + n - k : strstr(name, from);
    if (!at)
        at = name;
    snprintf(out, cap, "%.*s%s%s", (int)(at - name), name, to, at + k);
}

/* OP_RENUMBER undone: the first number v of name back to the index i of the
 * config list whose element is v. */
static bool unrenumber(const hfc *c, const conv_rule *r, char *name, size_t cap)
{
    json_t *list = json_object_get(c->mm->vcfg, r->count_key);
    for (char *p = name; *p;) {
        size_t l = strcspn(p, ".");
        bool digits = l > 0 && l < 10;
        for (size_t i = 0; digits && i < l; i++)
            digits = p[i] >= '0' && p[i] <= '9';
        if (digits) {
            long long v = strtoll(p, NULL, 10);
            size_t i;
            json_t *e;
            json_array_foreach(list, i, e) {
                if (json_is_integer(e) && json_integer_value(e) == v) {
                    char tail[256];
                    snprintf(tail, sizeof(tail), "%s", p + l);
                    snprintf(p, cap - (size_t)(p - name), "%zu%s", i, tail);
                    return true;
                }
            }
            return false;
        }
        if (!p[l])
            break;
        p += l + 1;
    }
    return false;
}

/* The forward's element op on the way (what the reverse undoes). */
typedef struct mm_undo {
    hf_rev_op op;
    bool squeeze_last; /* OP_UNSQUEEZE_LAST undone: the trailing size-1 dimension dropped */
} mm_undo;

/* Does the class's layout prefer names starting with `prefix` as they are
 * (a rev_prefer entry "^prefix")? A prefix rename to it is then not undone. */
static bool layout_keeps(const hfc *c, const char *prefix)
{
    const conv_mm_layout *l = g2h_mm_layout(c->mm->hf_class);
    for (const char *const *p = l ? l->rev_prefer : NULL; p && *p; p++)
        if ((*p)[0] == '^' && !strcmp(*p + 1, prefix))
            return true;
    return false;
}

/* Does a rule before rules[i] rename by the same match to the same name
 * (GLM-ASR's layer_norm and adapting.layer_norm both to ln_pre)? */
static bool earlier_same_rename(const conv_rule *rules, size_t i)
{
    for (size_t j = 0; j < i; j++)
        if (rules[j].op == OP_RENAME && rules[j].m == rules[i].m && rules[j].with && rules[i].with &&
            !strcmp(rules[j].with, rules[i].with))
            return true;
    return false;
}

/* The rules before index `upto` undone on `name` (last to first): false
 * when the forward would not have given this name (a skip takes it, a rule
 * that names its output itself catches it first, a rename it would make). */
static bool undo_rules(const hfc *c, size_t upto, char *name, size_t cap, mm_undo *u)
{
    const conv_rule *rules = c->mm->row->a.rules;
    for (size_t i = upto; i-- > 0;) {
        const conv_rule *r = &rules[i];
        char buf[256];
        switch (r->op) {
        case OP_RENAME:
            if (earlier_same_rename(rules, i))
                break; /* several sources of one name: the first rule's is taken back */
            if (rename_invertible(r) && (r->m == M_EXACT ? !strcmp(name, r->with)
                                         : r->m == M_PREFIX ? starts(name, r->with) : ends(name, r->with))) {
                replace_at(name, r->m, r->with, r->pat, buf, sizeof(buf));
                if (r->m == M_PREFIX && !rule_hits(r, name) && layout_keeps(c, r->with))
                    break; /* the class's checkpoint has the renamed form itself (Janus's model.aligner.) */
                snprintf(name, cap, "%s", buf);
            } else if (rule_hits(r, name)) {
                return false; /* the forward would have renamed it */
            }
            break;
        case OP_RENUMBER:
            if (starts(name, r->pat) && !unrenumber(c, r, name, cap))
                return false;
            break;
        case OP_SKIP:
            if (rule_hits(r, name))
                return false;
            break;
        case OP_SKIP_UNLESS:
            if (!kept(r, name))
                return false;
            break;
        case OP_ADD_ONE:
            if (rule_hits(r, name))
                u->op = R_SUB_ONE;
            break;
        case OP_PERMUTE_Q:
        case OP_PERMUTE_K:
            if (rule_hits(r, name))
                u->op = r->op == OP_PERMUTE_Q ? R_UNPERMUTE_Q : R_UNPERMUTE_K;
            break;
        case OP_QK_SPLIT_ROPE:
            if (rule_hits(r, name))
                u->op = R_QK_UNROPE;
            break;
        case OP_UNSQUEEZE_LAST: /* Whisper's conv biases [c] written [c, 1]: the same values */
            if (rule_hits(r, name))
                u->squeeze_last = true;
            break;
        default: /* a rule that writes its own outputs: it would have taken the name */
            if (rule_hits(r, name))
                return false;
        }
    }
    return true;
}

/* The rank of an HF name under the layout's rev_prefer (lower first). */
static size_t prefer_rank(const conv_mm_layout *l, const char *hf)
{
    size_t i = 0;
    for (const char *const *p = l ? l->rev_prefer : NULL; p && *p; p++, i++)
        if ((*p)[0] == '^' ? starts(hf, *p + 1) : strstr(hf, *p) != NULL)
            return i;
    return i;
}

/* gguf-py pattern `pat` ("v.blk.{bid}.ln1") against a GGUF base name: the block */
static bool gguf_pattern(const char *pat, const char *base, int64_t *bid)
{
    *bid = -1;
    return h2g_match_pattern(pat, base, strlen(base), INT64_MAX, bid);
}

static void fill_bid(const char *pat, int64_t bid, const char *suffix, char *out, size_t cap)
{
    const char *ph = strstr(pat, "{bid}");
    if (ph)
        snprintf(out, cap, "%.*s%lld%s%s", (int)(ph - pat), pat, (long long)bid, ph + 5, suffix);
    else
        snprintf(out, cap, "%s%s", pat, suffix);
}

/* The best preimage of GGUF name `gguf` through gguf-py's map and the rules
 * (all of them: the map comes after), restricted to names the rule `must`
 * matches when given (an OP_SPLIT / OP_UNSTACK source); "" when none. */
static void map_preimage(const hfc *c, const char *gguf, const conv_rule *must, size_t upto, char *out, size_t cap,
                         mm_undo *u)
{
    char base[256], suffix[16] = "";
    snprintf(base, sizeof(base), "%s", gguf);
    static const char *const sfx[] = {".weight", ".bias"};
    for (int i = 0; i < 2; i++)
        if (ends(base, sfx[i]) && strlen(base) > strlen(sfx[i])) {
            base[strlen(base) - strlen(sfx[i])] = 0;
            snprintf(suffix, sizeof(suffix), "%s", sfx[i]);
        }
    const conv_mm_layout *l = g2h_mm_layout(c->mm->hf_class);
    size_t best = SIZE_MAX;
    out[0] = 0;
    for (size_t i = 0; i < conv_n_clip_names; i++) {
        int64_t bid;
        if (!gguf_pattern(conv_clip_names[i].gguf, base, &bid))
            continue;
        char cand[256];
        fill_bid(conv_clip_names[i].hf, bid, suffix, cand, sizeof(cand));
        if (must && !rule_hits(must, cand))
            continue;
        mm_undo cu = {.op = R_PLAIN};
        if (!undo_rules(c, upto, cand, sizeof(cand), &cu))
            continue;
        size_t rank = prefer_rank(l, cand);
        if (rank < best) {
            best = rank;
            snprintf(out, cap, "%s", cand);
            *u = cu;
        }
    }
}

static size_t rule_index(const conv_mmproj *row, const conv_rule *r)
{
    return (size_t)(r - row->a.rules);
}

static size_t n_rules(const conv_mmproj *row)
{
    size_t n = 0;
    while (row->a.rules[n].pat)
        n++;
    return n;
}

static size_t count_list(const char *const *ws)
{
    size_t n = 0;
    while (ws && ws[n])
        n++;
    return n;
}

/* ------------------------------------------------------------ items */

static int add_mm_item(hfc *c, const mf_tensor *t, const char *hf, hf_rev_op op, hfc_item **out)
{
    if (mf_vec_grow((void **)&c->items.v, &c->items.cap, c->items.n + 1, sizeof(hfc_item)))
        return mf_oom(c->st, c->mm->path);
    hfc_item *it = &c->items.v[c->items.n++];
    *it = (hfc_item){.src = t, .op = op, .from = c->mm->m};
    it->out.name = mf_arena_strdup(c->a, hf);
    if (!it->out.name)
        return mf_oom(c->st, c->mm->path);
    bool plain = t->dtype == MF_F32 || t->dtype == MF_F16 || t->dtype == MF_BF16;
    /* a block type as F32: Q8_0's q * d is exact there, so it quantizes back to the same blocks */
    it->out.dtype = c->opts.dtype != MF_DTYPE_INVALID ? c->opts.dtype : plain ? t->dtype : MF_F32;
    it->out.ndim = t->ndim;
    memcpy(it->out.shape, t->shape, sizeof(int64_t) * (size_t)t->ndim);
    *out = it;
    return 0;
}

static const mf_tensor *mm_find(const hfc *c, const char *name)
{
    return mf_tensor_find(c->mm->m, name);
}

/* OP_SPLIT's part name ("v.blk.%b.attn_q") for a block, with a suffix. */
static void part_name(const char *fmt, int64_t bid, const char *suffix, char *out, size_t cap)
{
    const char *b = strstr(fmt, "%b");
    if (b)
        snprintf(out, cap, "%.*s%lld%s%s", (int)(b - fmt), fmt, (long long)bid, b + 2, suffix);
    else
        snprintf(out, cap, "%s%s", fmt, suffix);
}

/* Is t part k of a split rule of the row? (block, suffix and k set) */
static const conv_rule *split_of(const hfc *c, const char *name, int64_t *bid, char *suffix, size_t *k)
{
    for (const conv_rule *r = c->mm->row->a.rules; r->pat; r++) {
        if (r->op != OP_SPLIT)
            continue;
        for (size_t p = 0; r->split->names[p]; p++) {
            const char *fmt = r->split->names[p], *b = strstr(fmt, "%b");
            for (int s = 0; s < 2; s++) {
                const char *sf = s ? ".bias" : ".weight";
                char pat[160];
                snprintf(pat, sizeof(pat), "%.*s%s%s%s", b ? (int)(b - fmt) : (int)strlen(fmt), fmt, b ? "{bid}" : "",
                         b ? b + 2 : "", sf);
                if (h2g_match_pattern(pat, name, strlen(name), INT64_MAX, bid)) {
                    snprintf(suffix, 16, "%s", sf);
                    *k = p;
                    return r;
                }
            }
        }
    }
    return NULL;
}

/* An OP_SPLIT's parts joined back: the first part's item holds them all. */
static int plan_concat(hfc *c, const mf_tensor *t, const conv_rule *r, int64_t bid, const char *suffix)
{
    const conv_split *sp = r->split;
    size_t np = count_list(sp->names);
    const mf_tensor *parts[8];
    if (np > sizeof(parts) / sizeof(parts[0]))
        return mf_fail(c->st, MF_ERR_UNSUPPORTED, c->mm->path, (int64_t)t->offset, "tensor \"%s\": a split in %zu "
                       "parts (at most 8 are joined back)", t->name, np);
    int64_t rows = 0;
    for (size_t p = 0; p < np; p++) {
        char n[160];
        part_name(sp->names[p], bid, suffix, n, sizeof(n));
        parts[p] = p ? mm_find(c, n) : t;
        bool fits = parts[p] && parts[p]->ndim == t->ndim && t->ndim >= 1 && t->ndim <= 2 &&
                    (t->ndim == 1 || parts[p]->shape[1] == t->shape[1]);
        if (!fits)
            return mf_fail(c->st, MF_ERR_FORMAT, c->mm->path, (int64_t)t->offset, "tensor \"%s\": its part \"%s\" "
                           "is missing or of another width", t->name, n);
        if (sp->ops[p] != OP_RENAME)
            return mf_fail(c->st, MF_ERR_UNSUPPORTED, c->mm->path, (int64_t)t->offset, "tensor \"%s\": a permuted "
                           "part of a split has no reverse for mmproj files", t->name);
        rows += parts[p]->shape[0];
    }
    /* the fused source: the name map's preimage the split rule takes */
    char fused[160], hf[256];
    part_name(sp->names[0], bid, suffix, fused, sizeof(fused));
    mm_undo u = {.op = R_PLAIN};
    hf[0] = 0;
    for (size_t i = 0; i < conv_n_clip_names && !hf[0]; i++) {
        /* any gguf-py name of this block the rule's pattern takes */
        const char *g = conv_clip_names[i].hf;
        char cand[256];
        fill_bid(g, bid, suffix, cand, sizeof(cand));
        if (strstr(conv_clip_names[i].gguf, "{bid}") && rule_hits(r, cand) &&
            undo_rules(c, rule_index(c->mm->row, r), cand, sizeof(cand), &u))
            snprintf(hf, sizeof(hf), "%s", cand);
    }
    if (!hf[0])
        return mf_fail(c->st, MF_ERR_UNSUPPORTED, c->mm->path, (int64_t)t->offset, "tensor \"%s\": no Hugging Face "
                       "name the split rule \"%s\" takes", t->name, r->pat);
    hfc_item *it;
    if (add_mm_item(c, t, hf, R_CONCAT, &it))
        return -1;
    memcpy(it->parts, parts, sizeof(parts[0]) * np);
    it->n_parts = np;
    it->out.shape[0] = rows;
    return 0;
}

/* An OP_UNSTACK's entries stacked back at dimension d (entry 0's item). */
static int plan_stack(hfc *c, const mf_tensor *t, const conv_rule *r)
{
    size_t k_n = count_list(r->ws);
    int d = r->with[0] - '0';
    if (k_n > 8 || d < 0 || d > t->ndim || t->ndim + 1 > MF_MAX_DIMS)
        return mf_fail(c->st, MF_ERR_FORMAT, c->mm->path, (int64_t)t->offset, "tensor \"%s\": cannot stack %zu "
                       "entries at dimension %d", t->name, k_n, d);
    hfc_item *it;
    char hf[256] = "";
    mm_undo u = {.op = R_PLAIN};
    if (r->m == M_EXACT) {
        snprintf(hf, sizeof(hf), "%s", r->pat);
        if (!undo_rules(c, rule_index(c->mm->row, r), hf, sizeof(hf), &u))
            hf[0] = 0;
    } else {
        map_preimage(c, r->ws[0], r, rule_index(c->mm->row, r), hf, sizeof(hf), &u);
    }
    if (!hf[0])
        return mf_fail(c->st, MF_ERR_UNSUPPORTED, c->mm->path, (int64_t)t->offset, "tensor \"%s\": no Hugging Face "
                       "name the rule \"%s\" takes", t->name, r->pat);
    if (add_mm_item(c, t, hf, R_STACK_DIM, &it))
        return -1;
    for (size_t k = 0; k < k_n; k++) {
        const mf_tensor *p = k ? mm_find(c, r->ws[k]) : t;
        if (!p || p->ndim != t->ndim || memcmp(p->shape, t->shape, sizeof(int64_t) * (size_t)t->ndim))
            return mf_fail(c->st, MF_ERR_FORMAT, c->mm->path, (int64_t)t->offset, "tensor \"%s\": its entry \"%s\" "
                           "is missing or of another shape", t->name, r->ws[k]);
        it->parts[k] = p;
    }
    it->n_parts = k_n;
    it->x = d;
    it->out.ndim = t->ndim + 1;
    for (int i = 0, j = 0; i < it->out.ndim; i++)
        it->out.shape[i] = i == d ? (int64_t)k_n : t->shape[j++];
    return 0;
}

/* Is name an output of an OP_SPLIT or OP_UNSTACK other than the first
 * (joined into the first's item)? */
static bool later_part(const hfc *c, const char *name)
{
    int64_t bid;
    char suffix[16];
    size_t k;
    if (split_of(c, name, &bid, suffix, &k))
        return k > 0;
    for (const conv_rule *r = c->mm->row->a.rules; r->pat; r++)
        for (size_t i = 1; r->op == OP_UNSTACK && r->ws && r->ws[i - 1] && r->ws[i]; i++)
            if (!strcmp(r->ws[i], name))
                return true;
    return false;
}

/* OP_PICK_ROW's tensor: with the text model its embedding holds the row;
 * alone, a two-row embedding (row 1 the token's, tokenizer_config.json
 * names id 1) under the layout's name of the text embedding. */
static int plan_pick(hfc *c, const mf_tensor *t, const conv_rule *r)
{
    if (!c->mm->alone)
        return 0;
    if (t->ndim != 1)
        return mf_fail(c->st, MF_ERR_FORMAT, c->mm->path, (int64_t)t->offset, "tensor \"%s\" should be 1-d", t->name);
    char hf[256] = "model.embed_tokens.weight";
    const conv_mm_layout *l = g2h_mm_layout(c->mm->hf_class);
    for (const char *const *n = l ? l->text_names : NULL; n && *n; n++) {
        const char *eq = strchr(*n, '=');
        if (eq && !strncmp(hf, *n, (size_t)(eq - *n))) {
            char buf[256];
            snprintf(buf, sizeof(buf), "%s%s", eq + 1, hf + (eq - *n));
            snprintf(hf, sizeof(hf), "%s", buf);
            break;
        }
    }
    if (!rule_hits(r, hf))
        return mf_fail(c->st, MF_ERR_UNSUPPORTED, c->mm->path, (int64_t)t->offset, "tensor \"%s\": the text "
                       "embedding name %s is not what the rule \"%s\" takes", t->name, hf, r->pat);
    hfc_item *it;
    if (add_mm_item(c, t, hf, R_ROW_AT, &it))
        return -1;
    it->x = 1;
    it->out.ndim = 2;
    it->out.shape[0] = 2;
    it->out.shape[1] = t->shape[0];
    c->mm->pick_token = r->count_key;
    c->mm->pick_id = 1;
    return 0;
}

/* The HF name of one mmproj tensor and its item (or none for a part). */
static int plan_one(hfc *c, const mf_tensor *t)
{
    const conv_mmproj *row = c->mm->row;
    if (later_part(c, t->name))
        return 0;
    int64_t bid;
    char suffix[16];
    size_t k;
    const conv_rule *sr = split_of(c, t->name, &bid, suffix, &k);
    if (sr)
        return plan_concat(c, t, sr, bid, suffix);
    for (const conv_rule *r = row->a.rules; r->pat; r++) {
        if (r->op == OP_UNSTACK && r->ws && r->ws[0] && !strcmp(r->ws[0], t->name))
            return plan_stack(c, t, r);
        if (r->op == OP_PICK_ROW && !strncmp(t->name, r->with, strlen(r->with)) &&
            (!t->name[strlen(r->with)] || !strcmp(t->name + strlen(r->with), ".weight")))
            return plan_pick(c, t, r);
    }
    char hf[256] = "";
    mm_undo u = {.op = R_PLAIN};
    /* names the row gives outright */
    const conv_mm_layout *l = g2h_mm_layout(c->mm->hf_class);
    for (const char *const *n = l ? l->rev_names : NULL; n && *n && !hf[0]; n++) {
        const char *eq = strchr(*n, '=');
        if (eq && strlen(t->name) == (size_t)(eq - *n) && !strncmp(*n, t->name, (size_t)(eq - *n)))
            snprintf(hf, sizeof(hf), "%s", eq + 1);
    }
    /* OP_GGUF_NAME: its `with` back to its pattern, then the rules before it */
    for (const conv_rule *r = row->a.rules; r->pat && !hf[0]; r++) {
        if (r->op != OP_GGUF_NAME)
            continue;
        bool hit = r->m == M_EXACT ? !strcmp(t->name, r->with) : r->m == M_PREFIX && starts(t->name, r->with);
        if (!hit)
            continue;
        char cand[256];
        replace_at(t->name, r->m, r->with, r->pat, cand, sizeof(cand));
        mm_undo cu = {.op = R_PLAIN};
        if (undo_rules(c, rule_index(row, r), cand, sizeof(cand), &cu)) {
            snprintf(hf, sizeof(hf), "%s", cand);
            u = cu;
        }
    }
    if (!hf[0])
        map_preimage(c, t->name, NULL, n_rules(row), hf, sizeof(hf), &u);
    if (!hf[0])
        return mf_fail(c->st, MF_ERR_UNSUPPORTED, c->mm->path, (int64_t)t->offset, "tensor \"%s\" has no Hugging "
                       "Face name for the %s projector (%s)", t->name, row_projector(row), c->mm->hf_class);
    hfc_item *it;
    if (add_mm_item(c, t, hf, u.op, &it))
        return -1;
    if (u.squeeze_last) {
        if (it->out.ndim < 2 || it->out.shape[it->out.ndim - 1] != 1)
            return mf_fail(c->st, MF_ERR_FORMAT, c->mm->path, (int64_t)t->offset, "tensor \"%s\" should end in a "
                           "dimension of size 1 (the converter's unsqueeze(-1) of %s)", t->name, hf);
        it->out.ndim--;
    }
    return 0;
}

/* ------------------------------------------------------------ values */

static int read_all(hfc *c, const mf_tensor *t, float **v)
{
    return mf_tensor_read_f32(c->mm->m, t, v, c->st);
}

/* OP_QK_SPLIT_ROPE undone: the forward's output row i came from source row
 * i / hd * hd + conv_swap_groups_source(i % hd, hd / 4, 2, 2) in q and k
 * (v kept); that row is given its value back. The head count is the vision
 * config's num_attention_heads, which the reverse writes from head_count. */
static int qk_unrope(hfc *c, const mf_tensor *t, const float *s, float *w, int64_t rows, int64_t cols,
                     int64_t heads)
{
    if (t->ndim == 1) { /* a bias: each element a row */
        cols = 1;
        rows = t->shape[0];
    }
    int64_t part = rows / 3, hd = heads > 0 ? part / heads : 0;
    if (rows % 3 || heads <= 0 || part % heads || hd % 4 || hd == 0)
        return mf_fail(c->st, MF_ERR_FORMAT, c->mm->path, (int64_t)t->offset, "tensor \"%s\": %lld rows are not "
                       "q, k, v of %lld vision heads with a head size a multiple of 4", t->name, (long long)rows,
                       (long long)heads);
    for (int64_t i = 0; i < rows; i++) {
        int64_t src = i < 2 * part ? i / hd * hd + conv_swap_groups_source(i % hd, hd / 4, 2, 2) : i;
        memcpy(w + src * cols, s + i * cols, sizeof(float) * (size_t)cols);
    }
    return 0;
}

int hfc_mm_item_f32(hfc *c, const hfc_item *it, float **out, uint64_t *n_out)
{
    const mf_tensor *t = it->src;
    uint64_t n = 1;
    for (int i = 0; i < it->out.ndim; i++)
        n *= (uint64_t)it->out.shape[i];
    float *w = calloc(n ? n : 1, sizeof(float)), *s = NULL;
    if (!w)
        return mf_oom(c->st, c->mm->path);
    int rc = 0;
    if (it->op == R_CONCAT || it->op == R_STACK_DIM) {
        /* concat: parts one after the other; stack: [A][K][B], part k at rows a * K + k */
        uint64_t per = mf_tensor_nelems(t), a = 1, b = per;
        if (it->op == R_STACK_DIM) {
            a = 1;
            for (int i = 0; i < it->x; i++)
                a *= (uint64_t)t->shape[i];
            b = a ? per / a : 0;
        }
        uint64_t at = 0;
        for (size_t k = 0; rc == 0 && k < it->n_parts; k++) {
            if ((rc = read_all(c, it->parts[k], &s)) != 0)
                break;
            uint64_t pn = mf_tensor_nelems(it->parts[k]);
            if (it->op == R_CONCAT) {
                memcpy(w + at, s, sizeof(float) * (size_t)pn);
                at += pn;
            } else {
                for (uint64_t i = 0; i < a; i++)
                    memcpy(w + (i * it->n_parts + k) * b, s + i * b, sizeof(float) * (size_t)b);
            }
            free(s);
            s = NULL;
        }
    } else if ((rc = read_all(c, t, &s)) == 0) {
        uint64_t sn = mf_tensor_nelems(t);
        int64_t rows = t->ndim ? t->shape[0] : 1, cols = rows ? (int64_t)(sn / (uint64_t)rows) : 0;
        int64_t heads = mm_int(c, "vision.attention.head_count", 0);
        switch (it->op) {
        case R_SUB_ONE:
            for (uint64_t i = 0; i < sn; i++)
                w[i] = s[i] - 1.0f;
            break;
        case R_UNPERMUTE_Q:
        case R_UNPERMUTE_K:
            if (heads <= 0 || rows % (2 * heads))
                rc = mf_fail(c->st, MF_ERR_FORMAT, c->mm->path, (int64_t)t->offset, "tensor \"%s\": %lld rows do "
                             "not split into %lld vision heads", t->name, (long long)rows, (long long)heads);
            else
                hfc_unpermute(s, w, rows, cols, heads);
            break;
        case R_QK_UNROPE:
            rc = qk_unrope(c, t, s, w, rows, cols, heads);
            break;
        case R_ROW_AT: /* zero rows, then the tensor at row x */
            memcpy(w + (uint64_t)it->x * sn, s, sizeof(float) * (size_t)sn);
            break;
        default:
            memcpy(w, s, sizeof(float) * (size_t)sn);
        }
        free(s);
    }
    if (rc) {
        free(w);
        return -1;
    }
    *out = w;
    *n_out = n;
    return 0;
}

/* ------------------------------------------------------------ config */

static json_t *f32_json(double v)
{
    return hfc_f32_json(v);
}

static json_t *value_json(const mf_value *v, char type)
{
    int64_t x;
    if (v->type == MF_V_ARR) {
        json_t *a = json_array();
        for (size_t i = 0; a && i < v->as.arr.n; i++)
            json_array_append_new(a, value_json(&v->as.arr.items[i], type == 'F' ? 'f' : type == 'B' ? 'b' : type));
        return a;
    }
    if (v->type == MF_V_F32 || v->type == MF_V_F64)
        return f32_json(v->as.f);
    if (v->type == MF_V_BOOL)
        return json_boolean(v->as.b);
    if (v->type == MF_V_STR)
        return json_stringn(v->as.s.ptr, v->as.s.len);
    if (hfc_int(v, &x))
        return json_integer(x);
    return NULL;
}

/* "a.b" of obj (objects made on the way); the value is taken. An existing
 * different value: false (two sources disagree). */
static bool put_path(json_t *obj, const char *key, json_t *v)
{
    if (!v)
        return true;
    for (const char *dot; (dot = strchr(key, '.')) != NULL; key = dot + 1) {
        char part[128];
        snprintf(part, sizeof(part), "%.*s", (int)(dot - key), key);
        json_t *o = json_object_get(obj, part);
        if (!json_is_object(o)) {
            o = json_object();
            json_object_set_new(obj, part, o);
        }
        obj = o;
    }
    json_t *old = json_object_get(obj, key);
    if (old) {
        bool same = json_equal(old, v) ||
                    (json_is_number(old) && json_is_number(v) &&
                     (float)json_number_value(old) == (float)json_number_value(v));
        json_decref(v);
        return same;
    }
    json_object_set_new(obj, key, v);
    return true;
}

/* Does a fix's guard hold for the class? "?g=v:" when the vision config
 * has g = v; "?g:" (g present) when the layout says the class's config has g
 * (rev_guards: the reverse writes g then). */
static bool guard_holds(const hfc *c, const char *fix)
{
    if (fix[0] != '?')
        return true;
    const char *colon = strchr(fix, ':'), *eq = strchr(fix, '=');
    if (!colon)
        return false;
    if (eq && eq < colon) {
        char g[64];
        snprintf(g, sizeof(g), "%.*s", (int)(eq - fix - 1), fix + 1);
        const char *v = json_string_value(json_object_get(c->mm->vcfg, g));
        return v && strlen(v) == (size_t)(colon - eq - 1) && !strncmp(v, eq + 1, (size_t)(colon - eq - 1));
    }
    const conv_mm_layout *l = g2h_mm_layout(c->mm->hf_class);
    for (const char *const *k = l ? l->rev_guards : NULL; k && *k; k++)
        if (strlen(*k) == (size_t)(colon - fix - 1) && !strncmp(*k, fix + 1, (size_t)(colon - fix - 1)))
            return true;
    return false;
}

/* Is g (len bytes) one of the keys the layout says the class's config has (rev_guards)? */
static bool layout_has_guard(const hfc *c, const char *g, size_t len)
{
    const conv_mm_layout *l = g2h_mm_layout(c->mm->hf_class);
    for (const char *const *k = l ? l->rev_guards : NULL; k && *k; k++)
        if (strlen(*k) == len && !strncmp(*k, g, len))
            return true;
    return false;
}

/* Does every guard of a fix hold for the class (p past them in *rest)?
 * "?!g:" (g absent) holds unless the layout's rev_guards has g: the reverse
 * then writes the names the fix reads from, never g itself. */
static bool guards_hold(const hfc *c, const char *fix, const char **rest)
{
    while (fix[0] == '?') {
        const char *colon = strchr(fix, ':');
        if (!colon)
            return false;
        if (fix[1] == '!' ? layout_has_guard(c, fix + 2, (size_t)(colon - fix - 2)) : !guard_holds(c, fix))
            return false;
        fix = colon + 1;
    }
    *rest = fix;
    return true;
}

/* The config key a class reads `key` from after its `fixes` ("k=SRC" makes
 * k SRC's value; "k=SRC,k2=SRC2" several): the fixes whose guards hold
 * undone last to first. An "aud:k" key goes through the row's afixes (its
 * audio config's changes) and keeps its prefix. */
static void fixed_source(const hfc *c, char *key, size_t cap)
{
    const conv_mmproj *row = c->mm->row;
    bool aud = !strncmp(key, "aud:", 4);
    const char *const *fixes = aud ? row->afixes : row->fixes;
    char *k = aud ? key + 4 : key;
    size_t kcap = aud ? cap - 4 : cap;
    size_t n = count_list(fixes);
    for (size_t i = n; i-- > 0;) {
        const char *f;
        if (!guards_hold(c, fixes[i], &f))
            continue;
        for (const char *a = f; *a;) { /* each assignment "k=SRC" up to a comma */
            size_t al = strcspn(a, ",");
            const char *eq = memchr(a, '=', al);
            if (eq && strlen(k) == (size_t)(eq - a) && !strncmp(a, k, (size_t)(eq - a))) {
                size_t l = strcspn(eq + 1, "|,");
                if (eq[1] != '=' && l > 0) { /* "k=|=V" (a constant) keeps k */
                    char src[128];
                    snprintf(src, sizeof(src), "%.*s", (int)l, eq + 1);
                    snprintf(k, kcap, "%s", src);
                }
                break;
            }
            a += al + (a[al] ? 1 : 0);
        }
    }
}

static bool fixed_by(const hfc *c, const char *key)
{
    char k[128];
    snprintf(k, sizeof(k), "%.120s", key);
    fixed_source(c, k, sizeof(k));
    return strcmp(k, key) != 0;
}

/* Of a key list "a|b|^c|pre:d|=V", the config name the reverse writes: one
 * the class's fixes read from, else transformers' usual name among them,
 * else the first. */
static void pick_source(const hfc *c, const char *src, char *out, size_t cap)
{
    static const char *const usual[] = {"num_hidden_layers", "num_attention_heads", "hidden_size",
                                        "intermediate_size", NULL};
    char alts[8][128];
    size_t n = 0;
    for (const char *p = src; *p && n < 8;) {
        size_t l = strcspn(p, "|");
        if (l && p[0] != '=')
            snprintf(alts[n++], sizeof(alts[0]), "%.*s", (int)l, p);
        p += l + (p[l] ? 1 : 0);
    }
    out[0] = 0;
    for (size_t i = 0; i < n && !out[0]; i++)
        if (fixed_by(c, alts[i]))
            snprintf(out, cap, "%.120s", alts[i]);
    for (size_t i = 0; i < n && !out[0]; i++)
        for (const char *const *u = usual; *u; u++)
            if (!strcmp(alts[i] + (strncmp(alts[i], "aud:", 4) ? 0 : 4), *u))
                snprintf(out, cap, "%.120s", alts[i]);
    if (!out[0] && n)
        snprintf(out, cap, "%.120s", alts[0]);
}

/* Some alternative of a "^" key list already in config.json (the text model's)? */
static const char *global_has(const hfc *c, const char *src, char *buf, size_t cap)
{
    for (const char *p = src; *p;) {
        size_t l = strcspn(p, "|");
        if (p[0] == '^') {
            snprintf(buf, cap, "%.*s", (int)(l - 1), p + 1);
            json_t *o = c->mm->global;
            char tmp[128];
            snprintf(tmp, sizeof(tmp), "%s", buf);
            char *k = tmp;
            for (char *dot; o && (dot = strchr(k, '.')) != NULL; k = dot + 1) {
                *dot = 0;
                o = json_object_get(o, k);
            }
            if (json_object_get(o, k))
                return buf;
        }
        p += l + (p[l] ? 1 : 0);
    }
    return NULL;
}

/* pass 0: the vision config, the preprocessor's, computed keys; pass 1:
 * the "^" keys into config.json (once the text model's keys are there) */
static bool global_key(const conv_hp *h)
{
    return h->src && h->src[0] == '^';
}

static int put_hp(hfc *c, const conv_hp *h, int pass)
{
    hfc_mm *mm = c->mm;
    if (global_key(h) != (pass == 1))
        return 0;
    if (h->block) {
        if (h->block->back)
            h->block->back(c, mm->vcfg);
        return 0;
    }
    const mf_value *v = mm_key(c, h->key);
    if (h->calc) {
        int64_t x = MF_MM_ABSENT;
        if (v && !hfc_int(v, &x))
            x = v->type == MF_V_ARR ? 0 : MF_MM_ABSENT;
        if (h->calc->back)
            h->calc->back(c, mm->vcfg, x);
        return 0;
    }
    if (!v || !h->src || h->src[0] == '=')
        return 0;
    char key[128], have[128];
    pick_source(c, h->src, key, sizeof(key));
    if (!key[0])
        return 0;
    json_t *j = value_json(v, h->type);
    int64_t mult = 1;
    if (key[0] >= '1' && key[0] <= '9' && strchr(key, '*')) { /* "4*a": a * 4 */
        mult = strtoll(key, NULL, 10);
        memmove(key, strchr(key, '*') + 1, strlen(strchr(key, '*') + 1) + 1);
        if (json_is_integer(j) && mult > 0)
            json_integer_set(j, json_integer_value(j) / mult);
    }
    if (!strncmp(key, "pre:", 4))
        return put_path(mm->pre, key + 4, j) ? 0 : -1;
    if (key[0] == '^') {
        const char *at = global_has(c, h->src, have, sizeof(have));
        if (put_path(mm->global, at ? at : key + 1, j))
            return 0;
        return mf_fail(c->st, MF_ERR_FORMAT, mm->path, -1, "clip.%s disagrees with the text model's config.json "
                       "%s: the two GGUFs are not one model", h->key, at ? at : key + 1);
    }
    fixed_source(c, key, sizeof(key));
    if (!strncmp(key, "aud:", 4))
        return put_path(mm->acfg, key + 4, j) ? 0 : -1;
    put_path(mm->vcfg, key, j);
    return 0;
}

/* Gemma3VisionModel: projector.scale_factor = (image // patch) // sqrt(image_seq_length);
 * absent when it is 4 (or not positive): image_seq_length made to give 4
 * (the processor's default 256 gives (image // patch) // 16) */
void g2h_mm_gemma3_scale(hfc *c, json_t *vcfg, int64_t x)
{
    (void)vcfg;
    int64_t side = mm_int(c, "vision.image_size", 0) / (mm_int(c, "vision.patch_size", 0) > 0
                                                          ? mm_int(c, "vision.patch_size", 1) : 1);
    int64_t f = x == MF_MM_ABSENT ? 4 : x;
    if (x == MF_MM_ABSENT && (side / 16 == 4 || side / 16 <= 0))
        return; /* the default already gives no key */
    if (f <= 0 || side / f <= 0)
        return;
    put_path(c->mm->pre, "image_seq_length", json_integer((side / f) * (side / f)));
}

/* Llama4VisionModel: int(1 / pixel_shuffle_ratio) */
void g2h_mm_inverse_ratio(hfc *c, json_t *vcfg, int64_t x)
{
    (void)c;
    if (x > 0)
        put_path(vcfg, "pixel_shuffle_ratio", f32_json(1.0 / (double)x));
}

/* InternVisionModel: the top-level downsample_ratio = 1 / x (kept in
 * mm->global until config.json is put together) */
void g2h_mm_inverse_downsample(hfc *c, json_t *vcfg, int64_t x)
{
    (void)vcfg;
    if (x > 0)
        put_path(c->mm->global, "downsample_ratio", f32_json(1.0 / (double)x));
}

/* Qwen2.5-VL: fullatt_block_indexes every x layers (x - 1, 2x - 1, ...) */
void g2h_mm_wa_pattern(hfc *c, json_t *vcfg, int64_t x)
{
    int64_t n = mm_int(c, "vision.block_count", 0);
    if (x <= 0 || n <= 0 || n > (1 << 20))
        return;
    json_t *a = json_array();
    for (int64_t i = x - 1; a && i < n; i += x)
        json_array_append_new(a, json_integer(i));
    put_path(vcfg, "fullatt_block_indexes", a);
}

/* Qwen3-VL: deepstack_visual_indexes = the layers is_deepstack_layers marks */
void g2h_mm_deepstack_layers(hfc *c, json_t *vcfg, int64_t x)
{
    (void)x;
    const mf_value *v = mm_key(c, "vision.is_deepstack_layers");
    json_t *a = json_array();
    for (size_t i = 0; a && v && v->type == MF_V_ARR && i < v->as.arr.n; i++)
        if (v->as.arr.items[i].type == MF_V_BOOL && v->as.arr.items[i].as.b)
            json_array_append_new(a, json_integer((json_int_t)i));
    put_path(vcfg, "deepstack_visual_indexes", a);
}

/* hidden_act from use_silu / use_gelu, the latter as `gelu` */
static void act_back(hfc *c, json_t *vcfg, const char *gelu_name)
{
    const mf_value *silu = mm_key(c, "use_silu"), *gelu = mm_key(c, "use_gelu");
    if (silu && silu->type == MF_V_BOOL && silu->as.b)
        put_path(vcfg, "hidden_act", json_string("silu"));
    else if (gelu && gelu->type == MF_V_BOOL && gelu->as.b)
        put_path(vcfg, "hidden_act", json_string(gelu_name));
}

/* Pixtral (and GLM-4V, Janus-Pro: h2g_mm_act_if_known): hidden_act from use_silu / use_gelu */
void g2h_mm_act(hfc *c, json_t *vcfg)
{
    act_back(c, vcfg, "gelu");
}

/* KimiK25Model's keys back (h2g_mm_kimik25_keys): init_pos_emb_* from the
 * vision.pos_emb_* keys (written without the clip. prefix),
 * projector_hidden_act "gelu" when use_gelu (false: the activation is not
 * known, none written), projector_ln_eps, merge_kernel_size [f, f] and the
 * preprocessor's in_patch_limit = max_pixels / (patch * patch) */
void g2h_mm_kimik25_keys(hfc *c, json_t *vcfg)
{
    static const char *const grid[][2] = {{"vision.pos_emb_height", "init_pos_emb_height"},
                                          {"vision.pos_emb_width", "init_pos_emb_width"},
                                          {"vision.pos_emb_time", "init_pos_emb_time"}};
    for (size_t i = 0; i < sizeof(grid) / sizeof(grid[0]); i++) {
        int64_t x;
        if (hfc_int(mf_meta_get(c->mm->m, grid[i][0]), &x))
            put_path(vcfg, grid[i][1], json_integer(x));
    }
    const mf_value *gelu = mm_key(c, "use_gelu");
    if (gelu && gelu->type == MF_V_BOOL && gelu->as.b)
        put_path(vcfg, "projector_hidden_act", json_string("gelu"));
    const mf_value *eps = mm_key(c, "vision.attention.layer_norm_epsilon");
    if (eps && (eps->type == MF_V_F32 || eps->type == MF_V_F64))
        put_path(vcfg, "projector_ln_eps", f32_json(eps->as.f));
    int64_t f = mm_int(c, "vision.projector.scale_factor", -1);
    if (f >= 0) {
        json_t *mk = json_array();
        json_array_append_new(mk, json_integer(f));
        json_array_append_new(mk, json_integer(f));
        put_path(vcfg, "merge_kernel_size", mk);
    }
    int64_t p = mm_int(c, "vision.patch_size", 0), mx = mm_int(c, "vision.image_max_pixels", -1);
    if (p > 0 && p <= 65535 && mx >= 0 && mx % (p * p) == 0)
        put_path(c->mm->pre, "in_patch_limit", json_integer(mx / (p * p)));
}

/* YoutuVLVisionModel: use_gelu back as its default gelu_pytorch_tanh (one
 * of the GELUs the class takes), use_silu as silu */
void g2h_mm_act_youtuvl(hfc *c, json_t *vcfg)
{
    act_back(c, vcfg, "gelu_pytorch_tanh");
}

/* The vision config and the rest of config.json / the preprocessor's. */
static int build_configs(hfc *c)
{
    hfc_mm *mm = c->mm;
    const conv_mm_layout *l = g2h_mm_layout(mm->hf_class);
    if (l && l->vision_type)
        put_path(mm->vcfg, "model_type", json_string(l->vision_type));
    else if (mm->row->vision_type)
        put_path(mm->vcfg, "model_type", json_string(mm->row->vision_type));
    for (const char *const *f = l ? l->vision_fixed : NULL; f && *f; f++) {
        const char *eq = strchr(*f, '=');
        json_error_t err;
        json_t *v = eq ? json_loads(eq + 1, JSON_DECODE_ANY, &err) : NULL;
        char k[128];
        snprintf(k, sizeof(k), "%.*s", eq ? (int)(eq - *f) : 0, *f);
        if (!v || !put_path(mm->vcfg, k, v))
            return mf_fail(c->st, MF_ERR_USAGE, mm->path, -1, "layout key \"%s\" of %s is malformed", *f,
                           mm->hf_class);
    }
    for (const conv_hp *h = mm->row->a.hparams; h->key; h++)
        if (!h->calc && put_hp(c, h, 0))
            return -1;
    for (const conv_hp *h = mm->row->a.hparams; h->key; h++) /* computed keys need the sizes */
        if (h->calc && put_hp(c, h, 0))
            return -1;
    return 0;
}

/* ------------------------------------------------------------ driver */

/* Opens the mmproj file (or takes c->m, alone), picks its row and class,
 * and rebuilds its configs. */
int hfc_mm_start(hfc *c, const char *path, bool alone)
{
    hfc_mm *mm = calloc(1, sizeof(*mm));
    if (!mm)
        return mf_oom(c->st, path);
    c->mm = mm;
    mm->path = path;
    mm->alone = alone;
    if (alone)
        mm->m = c->m;
    else if (mf_open_model(path, 0, &mm->m, c->st))
        return -1;
    const mf_value *a = mf_meta_get(mm->m, "general.architecture");
    if (mm->m->format != MF_FMT_GGUF || !a || a->type != MF_V_STR || strcmp(a->as.s.ptr, "clip"))
        return mf_fail(c->st, MF_ERR_USAGE, path, -1, "is not an mmproj GGUF (general.architecture \"clip\")");
    const mf_value *pt = mm_key(c, "projector_type");
    if (!pt || pt->type != MF_V_STR)
        return mf_fail(c->st, MF_ERR_FORMAT, path, -1, "no clip.projector_type");
    char known[512] = "";
    for (size_t i = 0; i < conv_n_mmprojs && !mm->row; i++) {
        const char *p = row_projector(&conv_mmprojs[i]);
        if (p && !strcmp(p, pt->as.s.ptr))
            mm->row = &conv_mmprojs[i];
        else if (p && strlen(known) + strlen(p) + 3 < sizeof(known))
            snprintf(known + strlen(known), sizeof(known) - strlen(known), "%s%s", known[0] ? ", " : "", p);
    }
    if (!mm->row)
        return mf_fail(c->st, MF_ERR_UNSUPPORTED, path, -1, "clip.projector_type \"%s\" cannot be written as a "
                       "Hugging Face directory (known: %s)", pt->as.s.ptr, known);
    char why[300];
    if (!g2h_mm_row_reversible(mm->row, why, sizeof(why)))
        return mf_fail(c->st, MF_ERR_UNSUPPORTED, path, -1, "GGUF -> HF of a %s projector (%s) is not done: %s",
                       pt->as.s.ptr, mm->row->a.classes[0], why);
    mm->hf_class = pick_class(c, mm->row, alone);
    if (!mm->hf_class)
        return mf_fail(c->st, MF_ERR_USAGE, path, -1, "its %s projector belongs to %s, not to the text model's "
                       "architecture %s (%s)", pt->as.s.ptr, mm->row->a.classes[0], c->arch,
                       c->hf_class ? c->hf_class : "?");
    mm->vcfg = json_object();
    mm->global = json_object();
    mm->pre = json_object();
    mm->acfg = json_object();
    if (!mm->vcfg || !mm->global || !mm->pre || !mm->acfg)
        return mf_oom(c->st, path);
    return build_configs(c);
}

/* The text model's tensor names as the multimodal checkpoint has them. */
static int rename_text(hfc *c)
{
    const conv_mm_layout *l = g2h_mm_layout(c->mm->hf_class);
    for (size_t i = 0; l && i < c->items.n; i++) {
        hfc_item *it = &c->items.v[i];
        for (const char *const *n = l->text_names; n && *n; n++) {
            const char *eq = strchr(*n, '=');
            size_t fl = eq ? (size_t)(eq - *n) : 0;
            if (eq && !strncmp(it->out.name, *n, fl)) {
                char *nn = mf_arena_printf(c->a, "%s%s", eq + 1, it->out.name + fl);
                if (!nn)
                    return mf_oom(c->st, c->path);
                it->out.name = nn;
                break;
            }
        }
    }
    return 0;
}

int hfc_mm_plan(hfc *c)
{
    if (!c->mm->alone && rename_text(c))
        return -1;
    for (size_t i = 0; i < c->mm->m->n_tensors; i++) {
        const mf_tensor *t = &c->mm->m->tensors[i];
        if (!mf_dtype_to_f32_supported(t->dtype))
            return mf_fail(c->st, MF_ERR_UNSUPPORTED, c->mm->path, (int64_t)t->offset, "tensor \"%s\": %s cannot be "
                           "decoded", t->name, mf_dtype_name(t->dtype));
        if (plan_one(c, t))
            return -1;
    }
    for (size_t i = 0; i < c->items.n; i++) /* two names for one tensor: the layout is wrong */
        for (size_t j = i + 1; j < c->items.n; j++)
            if (!strcmp(c->items.v[i].out.name, c->items.v[j].out.name))
                return mf_fail(c->st, MF_ERR_FORMAT, c->mm->path, -1, "two tensors would be \"%s\" in the Hugging "
                               "Face directory", c->items.v[i].out.name);
    return 0;
}

/* config.json: alone, the vision half (architectures, model_type,
 * vision_config, the text width the projector feeds); with the text model,
 * its config.json (written by hfc_write_config) put in the class's layout. */
static json_t *combined_config(hfc *c)
{
    hfc_mm *mm = c->mm;
    const conv_mm_layout *l = g2h_mm_layout(mm->hf_class);
    if (mm->alone)
        return json_object();
    if (!l || l->alone_only) {
        mf_fail(c->st, MF_ERR_UNSUPPORTED, mm->path, -1, "no multimodal checkpoint layout for %s: convert the "
                "mmproj file alone (mfmt convert MMPROJ.gguf OUT/)", mm->hf_class);
        return NULL;
    }
    char *p = mf_path_join(c->a, c->tmp_dir, "config.json");
    json_error_t err;
    json_t *text = p ? json_load_file(p, 0, &err) : NULL;
    if (!json_is_object(text)) {
        json_decref(text);
        mf_fail(c->st, MF_ERR_IO, p ? p : c->out, -1, "cannot read back the text model's config.json");
        return NULL;
    }
    if (!l->nest_text || json_object_get(text, "text_config"))
        return text;
    json_t *g = json_object();
    json_object_del(text, "architectures");
    if (!g || json_object_set_new(g, "text_config", text)) {
        json_decref(g);
        mf_oom(c->st, c->path);
        return NULL;
    }
    return g;
}

static int write_token_config(hfc *c)
{
    hfc_mm *mm = c->mm;
    if (!mm->pick_token)
        return 0;
    json_t *tc = json_object(), *dec = json_object(), *e = json_object();
    char id[24];
    snprintf(id, sizeof(id), "%lld", (long long)mm->pick_id);
    json_object_set_new(e, "content", json_string(mm->pick_token));
    json_object_set_new(e, "special", json_true());
    json_object_set_new(dec, id, e);
    json_object_set_new(tc, "added_tokens_decoder", dec);
    return hfc_write_json(c, "tokenizer_config.json", tc);
}

/* With the text model: its tokenizer must hold the token OP_PICK_ROW reads. */
static int check_pick_token(hfc *c)
{
    const char *token = NULL;
    for (const conv_rule *r = c->mm->row->a.rules; r->pat; r++)
        if (r->op == OP_PICK_ROW)
            token = r->count_key;
    if (!token || c->mm->alone)
        return 0;
    char *p = mf_path_join(c->a, c->tmp_dir, "tokenizer_config.json");
    json_error_t err;
    json_t *tc = p ? json_load_file(p, 0, &err) : NULL;
    const char *k;
    json_t *v;
    bool found = false;
    json_object_foreach(json_object_get(tc, "added_tokens_decoder"), k, v) {
        const char *content = json_string_value(json_object_get(v, "content"));
        found |= content && !strcmp(content, token);
    }
    json_decref(tc);
    return found ? 0 : mf_fail(c->st, MF_ERR_FORMAT, c->path, -1, "the text model's vocabulary has no added token "
                               "%s, which the %s projector's v.token_embd.img_break row is read from", token,
                               row_projector(c->mm->row));
}

/* obj's "a.b" set to v (a reference taken; objects made on the way) */
static void set_path(json_t *obj, const char *path, json_t *v)
{
    char k[128];
    snprintf(k, sizeof(k), "%s", path);
    char *p = k;
    for (char *dot; (dot = strchr(p, '.')) != NULL; p = dot + 1) {
        *dot = 0;
        json_t *o = json_object_get(obj, p);
        if (!json_is_object(o)) {
            o = json_object();
            json_object_set_new(obj, p, o);
        }
        obj = o;
    }
    json_object_set(obj, p, v);
}

int hfc_mm_write_config(hfc *c)
{
    hfc_mm *mm = c->mm;
    json_t *g = combined_config(c);
    if (!g)
        return -1;
    /* top-level keys the computed keys' inverses wrote (InternVL's downsample_ratio) */
    if (json_object_update_missing(g, mm->global)) {
        json_decref(g);
        return mf_oom(c->st, mm->path);
    }
    json_decref(mm->global);
    mm->global = g;
    for (const conv_hp *h = mm->row->a.hparams; h->key; h++)
        if (put_hp(c, h, 1))
            return -1;
    const conv_mm_layout *l = g2h_mm_layout(mm->hf_class);
    json_t *arch = json_array();
    json_array_append_new(arch, json_string(mm->hf_class));
    json_object_set_new(g, "architectures", arch);
    const char *mt = mm->row->model_type ? mm->row->model_type : l ? l->model_type : NULL;
    if (mt)
        json_object_set_new(g, "model_type", json_string(mt));
    /* the vision config at the row's path (none for an audio-only class), the audio config at the
       first of its paths (get_audio_config) */
    if (!mm->row->no_vision)
        set_path(g, mm->row->vision_cfg ? mm->row->vision_cfg : "vision_config", mm->vcfg);
    if (mm->row->audio_cfg) { /* the class's own path, else the first the converter reads */
        char ap[128];
        snprintf(ap, sizeof(ap), "%.*s", (int)strcspn(mm->row->audio_cfg, "|"), mm->row->audio_cfg);
        if (l && l->audio_type)
            put_path(mm->acfg, "model_type", json_string(l->audio_type));
        set_path(g, l && l->audio_cfg ? l->audio_cfg : ap, mm->acfg);
    }
    mm->global = NULL;
    if (hfc_write_json(c, "config.json", g))
        return -1;
    if (json_object_size(mm->pre) && hfc_write_json(c, "preprocessor_config.json", json_incref(mm->pre)))
        return -1;
    return mm->alone ? write_token_config(c) : check_pick_token(c);
}

void hfc_mm_free(hfc *c)
{
    if (!c->mm)
        return;
    if (!c->mm->alone)
        mf_close(c->mm->m);
    json_decref(c->mm->vcfg);
    json_decref(c->mm->acfg);
    json_decref(c->mm->global);
    json_decref(c->mm->pre);
    free(c->mm);
    c->mm = NULL;
}
