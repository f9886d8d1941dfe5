/* hf2gguf_plan.c - the tensor plan of an HF -> GGUF conversion (see
 * hf2gguf.c): each source tensor through its architecture's rules and
 * gguf-py's name map (arch_table.c, arch_names.inc) into output tensors -
 * sources, row maps, transposes, element-wise ops, output types - and the
 * generated tensors (rope_freqs, rope_factors_long/short). */
#include "ops/hfconv/hf2gguf_int.h"
#include "ops/hfconv/arch_file.h"

#include <math.h>
#include <stdlib.h>

/* ------------------------------------------------------- names */

static char *map_name(const conv *c, const char *name)
{
    static const char *const suffixes[] = {"", ".weight", ".bias"};
    size_t n = strlen(name);
    for (size_t s = 0; s < 3; s++) {
        size_t sl = strlen(suffixes[s]);
        if (n < sl || strcmp(name + n - sl, suffixes[s]))
            continue;
        for (size_t i = 0; i < c->n_names; i++) {
            int64_t bid = -1;
            if ((c->name_arch >= 0 && !conv_name_in_arch(i, c->name_arch)) ||
                !h2g_match_pattern(c->names[i].hf, name, n - sl, c->block_count, &bid))
                continue;
            const char *g = c->names[i].gguf, *ph = strstr(g, "{bid}");
            char *out = malloc(strlen(g) + sl + 24);
            if (!out)
                return NULL;
            if (ph)
                sprintf(out, "%.*s%lld%s%s", (int)(ph - g), g, (long long)bid, ph + 5, suffixes[s]);
            else
                sprintf(out, "%s%s", g, suffixes[s]);
            return out;
        }
    }
    return NULL;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

/* The first all-digit part of a dotted name (prepare_tensors' bid), or -1. */
static int64_t name_bid(const char *name)
{
    for (const char *p = name; *p;) {
        const char *e = strchr(p, '.');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        bool digits = l > 0 && l < 10;
        for (size_t i = 0; digits && i < l; i++)
            digits = p[i] >= '0' && p[i] <= '9';
        if (digits)
            return strtoll(p, NULL, 10);
        p += l + (e ? 1 : 0);
        if (!e)
            break;
    }
    return -1;
}

static bool rule_matches(const conv *c, const conv_rule *r, const char *name)
{
    size_t n = strlen(name), k = strlen(r->pat);
    switch (r->m) {
    case M_SUFFIX: return ends_with(name, r->pat);
    case M_EXACT: return !strcmp(name, r->pat);
    case M_CONTAINS: return strstr(name, r->pat) != NULL;
    case M_PREFIX: return n >= k && !strncmp(name, r->pat, k);
    case M_LAYER_BEYOND:
        if (n <= k || strncmp(name, r->pat, k) || name[k] < '0' || name[k] > '9')
            return false;
        return strtoll(name + k, NULL, 10) >= c->block_count;
    case M_PATTERN: return conv_pattern_match(r->pat, name);
    }
    return false;
}

/* The rule's matched part replaced by `with` (malloc'd). */
static char *replace_match(const conv_rule *r, const char *name, const char *with)
{
    size_t n = strlen(name), k = strlen(r->pat), w = strlen(with);
    char *out = malloc(n + w + 1);
    if (!out)
        return NULL;
    const char *at = r->m == M_PREFIX ? name : r->m == M_SUFFIX ? name + n - k : strstr(name, r->pat);
    size_t pre = (size_t)(at - name);
    memcpy(out, name, pre);
    memcpy(out + pre, with, w);
    strcpy(out + pre + w, at + k);
    return out;
}

static char *rename_by(const conv_rule *r, const char *name)
{
    return replace_match(r, name, r->with);
}

static size_t count_ws(const char *const *ws)
{
    size_t n = 0;
    while (ws && ws[n])
        n++;
    return n;
}

/* ------------------------------------------------------- output types */

static bool is_block_tensor(const char *name, const char *kind)
{
    if (strncmp(name, "blk.", 4))
        return false;
    const char *p = name + 4;
    while (*p >= '0' && *p <= '9')
        p++;
    return p > name + 4 && *p == '.' && !strcmp(p + 1, kind);
}

static bool always_f32(const conv *c, const char *new_name, int ndim)
{
    return ndim <= 1 || ends_with(new_name, "_norm.weight") || !ends_with(new_name, ".weight") ||
           is_block_tensor(new_name, "ffn_gate_inp.weight") || !strcmp(new_name, "position_embd.weight") ||
           !strcmp(new_name, "token_types.weight") || is_block_tensor(new_name, "ssm_conv1d.weight") ||
           is_block_tensor(new_name, "shortconv.conv.weight") || is_block_tensor(new_name, "time_mix_first.weight") ||
           is_block_tensor(new_name, "time_mix_w1.weight") || is_block_tensor(new_name, "time_mix_w2.weight") ||
           is_block_tensor(new_name, "time_mix_decay_w1.weight") ||
           is_block_tensor(new_name, "time_mix_decay_w2.weight") ||
           is_block_tensor(new_name, "time_mix_lerp_fused.weight") ||
           (c->l2026 && is_block_tensor(new_name, "ffn_gate_inp_shexp.weight"));
}

/* prepare_tensors: the types "always in float32", else the output type;
 * with tensor_force_quant (AF_FORCE_QUANT) only 1-d tensors and norms are F32. */
static mf_dtype tensor_type(const conv *c, const char *new_name, int ndim, int64_t row)
{
    bool forced = (c->arch->flags & AF_FORCE_QUANT) && ndim > 1 && !ends_with(new_name, "_norm.weight");
    if (!forced && always_f32(c, new_name, ndim))
        return MF_F32;
    mf_dtype t = c->qtype;
    const mf_dtype_info *di = mf_dtype_info_of(t);
    if (di && di->block_elems > 1 && row % di->block_elems) /* QuantError: fall back to F16 */
        t = MF_F16;
    return t;
}

void h2g_free_out(out_tensor *o)
{
    free(o->name);
    free(o->segs);
    free(o->row_map);
    free(o->col_map);
    free(o->out_perm);
    free(o->generated);
    free(o->row_scale);
}

int64_t h2g_numel(const int64_t *shape, int ndim)
{
    int64_t n = 1;
    for (int d = 0; d < ndim; d++)
        n *= shape[d];
    return n;
}

/* Adds o (taking its allocations, also on failure). */
static int add_out(conv *c, out_tensor *o)
{
    for (size_t i = 0; i < c->n_out; i++)
        if (!strcmp(c->out[i].name, o->name)) {
            int rc = mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "duplicated tensor name \"%s\"", o->name);
            h2g_free_out(o);
            return rc;
        }
    if (c->n_out == c->cap_out && mf_vec_grow((void **)&c->out, &c->cap_out, c->n_out + 1, sizeof(*o))) {
        h2g_free_out(o);
        return mf_oom(c->st, c->dir);
    }
    if (!o->row_len)
        o->row_len = o->ndim ? o->shape[o->ndim - 1] : 1;
    o->plan = o->dtype = o->mxfp4 ? MF_MXFP4 : c->mm ? h2g_mmproj_type(c, o) : tensor_type(c, o->name, o->ndim, o->row_len);
    c->out[c->n_out++] = *o;
    return 0;
}

static int add_generated(conv *c, const char *name, const double *v, size_t n)
{
    out_tensor o = {.ndim = 1, .shape = {(int64_t)n}, .ew = OP_SKIP};
    o.name = strdup(name);
    o.generated = malloc((n ? n : 1) * sizeof(float));
    if (!o.name || !o.generated) {
        h2g_free_out(&o);
        return mf_oom(c->st, c->dir);
    }
    for (size_t i = 0; i < n; i++)
        o.generated[i] = (float)v[i];
    return add_out(c, &o);
}

/* ------------------------------------------------------- row maps */

/* LlamaModel.permute: rows viewed as [heads][2][half] are read as
 * [heads][half][2]. Output row r takes source row permute_row(r). */
static int64_t permute_row(int64_t r, int64_t rows, int64_t heads)
{
    int64_t per_head = rows / heads, half = per_head / 2;
    int64_t h = r / per_head, k = r % per_head, i = k / 2, j = k % 2;
    return h * per_head + j * half + i;
}

int h2g_need_hp_int(const conv *c, const char *key, int64_t *out)
{
    json_t *v = h2g_hparam(c, key);
    if (!v)
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json has no %s", key);
    if (h2g_need_int(c, v, key, out))
        return -1;
    if (*out <= 0)
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json %s must be positive", key);
    return 0;
}

/* The head count permute() uses for q (k: n_head_kv when it differs) in
 * block bid (-1: none). */
static int permute_heads(const conv *c, int64_t bid, bool k, int64_t *heads)
{
    int64_t n_head, n_kv;
    if ((c->arch->flags & AF_LAYER_HEADS) ? h2g_layer_heads(c, bid, &n_head, &n_kv)
                                           : h2g_head_counts(c, &n_head, &n_kv))
        return -1;
    *heads = k && n_kv && n_kv != n_head ? n_kv : n_head;
    if (k && n_kv && n_kv != n_head && (c->arch->flags & AF_K_PERMUTE_RATIO))
        *heads = n_head / n_kv; /* _reverse_hf_permute: n_head //= n_kv_head */
    return 0;
}

static int64_t *alloc_map(conv *c, int64_t n)
{
    int64_t *m = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    if (!m)
        mf_oom(c->st, c->dir);
    return m;
}

/* Applies permute() on top of an existing row map (or the identity). */
static int add_permute(conv *c, out_tensor *o, int64_t rows, int64_t heads, const char *src)
{
    if (heads <= 0 || rows % (heads * 2))
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1,
                       "tensor \"%s\": %lld rows do not split into %lld heads of row pairs", src,
                       (long long)rows, (long long)heads);
    int64_t *m = alloc_map(c, rows);
    if (!m)
        return -1;
    for (int64_t r = 0; r < rows; r++) {
        int64_t s = permute_row(r, rows, heads);
        m[r] = o->row_map ? o->row_map[s] : s;
    }
    free(o->row_map);
    o->row_map = m;
    return 0;
}

/* ------------------------------------------------------------- plan */

static bool dtype_convertible(mf_dtype d)
{
    switch (d) {
    case MF_F64: case MF_F32: case MF_F16: case MF_BF16: case MF_I8: case MF_I16:
    case MF_I32: case MF_I64: case MF_U8: case MF_U16: case MF_U32: case MF_U64: case MF_BOOL:
        return true;
    default:
        return false;
    }
}

static int one_seg(conv *c, out_tensor *o, const mf_model *part, const mf_tensor *t)
{
    o->segs = malloc(sizeof(seg));
    if (!o->segs)
        return mf_oom(c->st, c->dir);
    o->segs[0] = (seg){part, t};
    o->n_segs = 1;
    return 0;
}

/* Rows of a 2-d (or 1-d: elements) tensor and their length. */
static void rows_of(const mf_tensor *t, int64_t *rows, int64_t *len)
{
    *rows = t->ndim ? t->shape[0] : 1;
    *len = t->ndim ? h2g_numel(t->shape, t->ndim) / (*rows ? *rows : 1) : 1;
}

/* One or three output tensors from a fused qkv (GPT-NeoX, Falcon, InternLM2). */
static int plan_qkv(conv *c, const conv_rule *r, const mf_model *part, const mf_tensor *t,
                    const char *name, int64_t bid)
{
    int64_t n_head, n_kv = 0, hidden, rows, len;
    if (h2g_need_hp_int(c, r->op == OP_QKV_PER_HEAD && h2g_hparam(c, "n_head") ? "n_head" : "num_attention_heads", &n_head) ||
        h2g_need_hp_int(c, h2g_hparam(c, "hidden_size") ? "hidden_size" : "n_embed", &hidden))
        return -1;
    if (r->op == OP_QKV_KV_GROUPS) {
        json_t *kv = h2g_hparam(c, "num_kv_heads");
        if (!kv || json_is_null(kv))
            kv = h2g_hparam(c, "n_head_kv");
        if (kv && !json_is_null(kv) && h2g_need_int(c, kv, "num_kv_heads", &n_kv))
            return -1;
        if (n_kv == 0)
            n_kv = 1; /* "or 1" */
    } else if (r->op == OP_QKV_GROUPED && h2g_need_hp_int(c, "num_key_value_heads", &n_kv)) {
        return -1;
    }
    rows_of(t, &rows, &len);
    int64_t hd = hidden / n_head;
    bool bias = t->ndim == 1;
    if (t->ndim > 2 || hd <= 0 || (n_kv && (n_head % n_kv)) || (bias && r->op != OP_QKV_PER_HEAD))
        return mf_fail(c->st, MF_ERR_FORMAT, part->path, -1, "tensor \"%s\": cannot split a fused qkv of "
                       "shape %lld x %lld with %lld heads", name, (long long)rows, (long long)len, (long long)n_head);
    int64_t q_per = n_kv ? n_head / n_kv : 0;
    int64_t want = r->op == OP_QKV_PER_HEAD ? 3 * n_head * hd : n_kv * (q_per + 2) * hd;
    if (rows != want || (!bias && len != hidden))
        return mf_fail(c->st, MF_ERR_FORMAT, part->path, -1,
                       "tensor \"%s\": %lld rows, the fused qkv of %lld heads (%lld kv) of %lld needs %lld",
                       name, (long long)rows, (long long)n_head, (long long)n_kv, (long long)hd, (long long)want);
    if (r->op != OP_QKV_GROUPED) {
        out_tensor o = {.ndim = t->ndim, .ew = OP_SKIP};
        memcpy(o.shape, t->shape, sizeof(o.shape));
        if (bias)
            o.row_len = 1;
        o.name = map_name(c, name);
        if (!o.name)
            return mf_fail(c->st, MF_ERR_FORMAT, part->path, -1, "can not map tensor \"%s\"", name);
        if (one_seg(c, &o, part, t) || !(o.row_map = alloc_map(c, rows))) {
            h2g_free_out(&o);
            return -1;
        }
        int64_t k = 0;
        if (r->op == OP_QKV_PER_HEAD) { /* [n_head][3][hd] -> [3][n_head][hd] */
            for (int64_t p = 0; p < 3; p++)
                for (int64_t h = 0; h < n_head; h++)
                    for (int64_t d = 0; d < hd; d++)
                        o.row_map[k++] = (h * 3 + p) * hd + d;
        } else { /* [kv][q_per + 2][hd] -> all q heads, then k, then v */
            for (int64_t g = 0; g < n_kv; g++)
                for (int64_t j = 0; j < q_per; j++)
                    for (int64_t d = 0; d < hd; d++)
                        o.row_map[k++] = (g * (q_per + 2) + j) * hd + d;
            for (int64_t p = q_per; p < q_per + 2; p++)
                for (int64_t g = 0; g < n_kv; g++)
                    for (int64_t d = 0; d < hd; d++)
                        o.row_map[k++] = (g * (q_per + 2) + p) * hd + d;
        }
        return add_out(c, &o);
    }
    /* InternLM2: [groups][q_per + 2][hd] rows to q, k, v; q and k permuted */
    static const char *const kinds[] = {"attn_q", "attn_k", "attn_v"};
    for (int p = 0; p < 3; p++) {
        int64_t per = p == 0 ? q_per : 1, out_rows = n_kv * per * hd;
        int64_t first = p == 0 ? 0 : q_per + p - 1; /* the group's first row block of this part */
        out_tensor o = {.ndim = 2, .shape = {out_rows, len}, .ew = OP_SKIP};
        o.name = malloc(64);
        if (!o.name || one_seg(c, &o, part, t) || !(o.row_map = alloc_map(c, out_rows))) {
            bool oom = !o.name;
            h2g_free_out(&o);
            return oom ? mf_oom(c->st, c->dir) : -1;
        }
        snprintf(o.name, 64, "blk.%lld.%s.weight", (long long)bid, kinds[p]);
        int64_t k = 0;
        for (int64_t g = 0; g < n_kv; g++)
            for (int64_t j = 0; j < per; j++)
                for (int64_t d = 0; d < hd; d++)
                    o.row_map[k++] = (g * (q_per + 2) + first + j) * hd + d;
        /* permute(q, n_head, n_head); permute(k, n_head, n_kv): n_kv heads */
        if (p < 2 && add_permute(c, &o, out_rows, p == 0 ? n_head : n_kv, name)) {
            h2g_free_out(&o);
            return -1;
        }
        if (add_out(c, &o))
            return -1;
    }
    return 0;
}

/* DeepseekV2Model.modify_tensors (2026-02): kv_b_proj viewed as
 * [n_head_kv][nope + v][kv_lora] split into k_b = [:, :nope].transpose(1, 2)
 * and v_b = [:, nope:]. k_b is a transpose per head: its row map lists each
 * head's source rows (hf2gguf_stream.c reads a column of them per row). */
static int plan_kv_b(conv *c, const mf_model *part, const mf_tensor *t, const char *name)
{
    int64_t n_kv, v, nope;
    if (h2g_need_hp_int(c, "num_key_value_heads", &n_kv) || h2g_need_hp_int(c, "v_head_dim", &v) ||
        h2g_need_hp_int(c, "qk_nope_head_dim", &nope))
        return -1;
    if (t->ndim != 2 || t->shape[0] != n_kv * (v + nope))
        return mf_fail(c->st, MF_ERR_FORMAT, part->path, -1, "tensor \"%s\": kv_b_proj needs %lld x (%lld + %lld) "
                       "rows (num_key_value_heads x (v_head_dim + qk_nope_head_dim))", name, (long long)n_kv,
                       (long long)v, (long long)nope);
    int64_t r = t->shape[1];
    for (int k = 0; k < 2; k++) {
        int64_t per = k == 0 ? nope : v, first = k == 0 ? 0 : nope;
        out_tensor o = {.ndim = 3, .ew = OP_SKIP, .transpose = k == 0};
        int64_t shape_k[3] = {n_kv, r, nope}, shape_v[3] = {n_kv, v, r};
        memcpy(o.shape, k == 0 ? shape_k : shape_v, sizeof(shape_k));
        o.row_len = k == 0 ? nope : r;
        const char *at = strstr(name, "kv_b_proj");
        char *hf = at ? malloc(strlen(name) + 1) : NULL;
        if (hf)
            sprintf(hf, "%.*s%s%s", (int)(at - name), name, k == 0 ? "k_b_proj" : "v_b_proj", at + 9);
        o.name = hf ? map_name(c, hf) : NULL;
        bool mapped = o.name != NULL;
        free(hf);
        if (!mapped || one_seg(c, &o, part, t) || !(o.row_map = alloc_map(c, n_kv * per))) {
            h2g_free_out(&o);
            return mapped ? -1 : mf_fail(c->st, MF_ERR_FORMAT, part->path, -1, "can not map tensor \"%s\"", name);
        }
        for (int64_t h = 0, i = 0; h < n_kv; h++)
            for (int64_t j = 0; j < per; j++)
                o.row_map[i++] = h * (nope + v) + first + j;
        if (add_out(c, &o))
            return -1;
    }
    return 0;
}

/* The first config key of "a|b" present (find_hparam), else the last. */
static const char *first_present(const conv *c, const char *keys)
{
    static _Thread_local char k[64];
    for (const char *p = keys;;) {
        size_t n = strcspn(p, "|");
        snprintf(k, sizeof(k), "%.*s", (int)n, p);
        if (!p[n] || h2g_hparam(c, k))
            return k;
        p += n + 1;
    }
}

/* Llama4Model.modify_tensors: fused experts gate_up_proj [E, h, 2*ff]
 * transposed to [E, 2*ff, h] and split into gate and up; down_proj
 * [E, ff, h] transposed. Each output row is a column of one expert's matrix
 * (hf2gguf_stream.c: t_cols columns from t_col0 per expert). */
static int plan_experts_transposed(conv *c, const mf_model *part, const mf_tensor *t, const char *name)
{
    bool gate_up = ends_with(name, "gate_up_proj");
    if (t->ndim != 3 || (gate_up && t->shape[2] % 2))
        return mf_fail(c->st, MF_ERR_FORMAT, part->path, -1, "tensor \"%s\": fused experts must be [experts, rows, "
                       "columns]%s", name, gate_up ? " with an even column count" : "");
    int64_t per = gate_up ? t->shape[2] / 2 : t->shape[2];
    size_t stem = strlen(name) - strlen(gate_up ? "gate_up_proj" : "down_proj");
    for (int k = 0; k < (gate_up ? 2 : 1); k++) {
        out_tensor o = {.ndim = 3, .shape = {t->shape[0], per, t->shape[1]}, .ew = OP_SKIP, .transpose = true,
                        .row_len = t->shape[1], .t_cols = per, .t_col0 = k * per};
        char *hf = malloc(stem + 24);
        if (hf)
            sprintf(hf, "%.*s%s", (int)stem, name, !gate_up ? "down_proj.weight" : k ? "up_proj.weight" : "gate_proj.weight");
        o.name = hf ? map_name(c, hf) : NULL;
        int rc = o.name ? 0 : hf ? mf_fail(c->st, MF_ERR_FORMAT, part->path, -1, "can not map tensor \"%s\"", hf)
                                 : mf_oom(c->st, c->dir);
        free(hf);
        if (rc || one_seg(c, &o, part, t)) {
            h2g_free_out(&o);
            return -1;
        }
        if (add_out(c, &o))
            return -1;
    }
    return 0;
}

/* The parts collected so far for rule r in block bid (a new entry when
 * none); NULL when out of memory (st set). */
static pending *pending_of(conv *c, const conv_rule *r, int64_t bid)
{
    for (size_t i = 0; i < c->n_pend; i++)
        if (c->pend[i].rule == r && c->pend[i].bid == bid)
            return &c->pend[i];
    if (c->n_pend == c->cap_pend && mf_vec_grow((void **)&c->pend, &c->cap_pend, c->n_pend + 1, sizeof(pending))) {
        mf_oom(c->st, c->dir);
        return NULL;
    }
    pending *p = &c->pend[c->n_pend++];
    *p = (pending){.rule = r, .bid = bid};
    return p;
}

/* Stacks the block's collected parts when all arrived (OP_STACK). */
static int plan_stack(conv *c, const conv_rule *r, const mf_model *part, const mf_tensor *t,
                      const char *name, int64_t bid)
{
    if (bid < 0)
        return mf_fail(c->st, MF_ERR_FORMAT, part->path, -1, "tensor \"%s\": no block number", name);
    int64_t count;
    if (h2g_need_hp_int(c, first_present(c, r->count_key), &count))
        return -1;
    pending *p = pending_of(c, r, bid);
    if (!p)
        return -1;
    if (p->n == p->cap) {
        size_t cap = p->cap;
        if (mf_vec_grow((void **)&p->names, &cap, p->n + 1, sizeof(char *)))
            return mf_oom(c->st, c->dir);
        seg *grown = realloc(p->segs, cap * sizeof(seg));
        if (!grown)
            return mf_oom(c->st, c->dir);
        p->segs = grown;
        p->cap = cap;
    }
    if (!(p->names[p->n] = strdup(name)))
        return mf_oom(c->st, c->dir);
    p->segs[p->n++] = (seg){part, t};
    size_t n_ws = 0;
    while (r->ws[n_ws])
        n_ws++;
    if ((int64_t)p->n < count * (int64_t)n_ws)
        return 0;
    for (size_t w = 0; w < n_ws; w++) {
        out_tensor o = {.ew = OP_SKIP};
        o.segs = calloc((size_t)count, sizeof(seg));
        if (!o.segs)
            return mf_oom(c->st, c->dir);
        o.n_segs = (size_t)count;
        char want[512], merged[512];
        for (int64_t x = 0; x < count; x++) {
            char *d = want;
            for (const char *f = r->part_fmt; *f && d < want + sizeof(want) - 32; f++) {
                if (f[0] == '%' && (f[1] == 'b' || f[1] == 'x' || f[1] == 'w')) {
                    d += f[1] == 'w' ? sprintf(d, "%s", r->ws[w]) : sprintf(d, "%lld", (long long)(f[1] == 'b' ? bid : x));
                    f++;
                } else {
                    *d++ = *f;
                }
            }
            *d = 0;
            size_t k = 0;
            while (k < p->n && (!p->names[k] || strcmp(p->names[k], want)))
                k++;
            if (k == p->n) {
                h2g_free_out(&o);
                return mf_fail(c->st, MF_ERR_FORMAT, part->path, -1,
                               "block %lld: the %lld parts to stack have no \"%s\"", (long long)bid,
                               (long long)count, want);
            }
            o.segs[x] = p->segs[k];
            free(p->names[k]);
            p->names[k] = NULL;
            const mf_tensor *s0 = o.segs[0].t, *sx = o.segs[x].t;
            if (sx->ndim != s0->ndim || memcmp(sx->shape, s0->shape, sizeof(int64_t) * (size_t)s0->ndim)) {
                h2g_free_out(&o);
                return mf_fail(c->st, MF_ERR_FORMAT, part->path, -1, "\"%s\": parts to stack differ in shape", want);
            }
        }
        const mf_tensor *s0 = o.segs[0].t;
        if (s0->ndim + 1 > 4) {
            h2g_free_out(&o);
            return mf_fail(c->st, MF_ERR_UNSUPPORTED, part->path, -1, "\"%s\": stacked, more than 4 dimensions", want);
        }
        o.ndim = s0->ndim + 1;
        o.shape[0] = count;
        memcpy(o.shape + 1, s0->shape, sizeof(int64_t) * (size_t)s0->ndim);
        char *d = merged;
        for (const char *f = r->merged_fmt; *f && d < merged + sizeof(merged) - 32; f++) {
            if (f[0] == '%' && (f[1] == 'b' || f[1] == 'w')) {
                d += f[1] == 'w' ? sprintf(d, "%s", r->ws[w]) : sprintf(d, "%lld", (long long)bid);
                f++;
            } else {
                *d++ = *f;
            }
        }
        *d = 0;
        o.name = map_name(c, merged);
        if (!o.name) {
            h2g_free_out(&o);
            return mf_fail(c->st, MF_ERR_FORMAT, part->path, -1, "can not map tensor \"%s\"", merged);
        }
        if (add_out(c, &o))
            return -1;
    }
    size_t keep = 0; /* parts beyond the stack stay pending (an error at the end) */
    for (size_t k = 0; k < p->n; k++)
        if (p->names[k]) {
            p->names[keep] = p->names[k];
            p->segs[keep++] = p->segs[k];
        }
    p->n = keep;
    return 0;
}

/* DbrxModel: a [E * rows, cols] expert parameter viewed as [E][rows][cols]
 * (OP_VIEW_EXPERTS) or permuted to [E][cols][rows] (OP_VIEW_EXPERTS_T). */
static int view_experts(conv *c, const conv_rule *r, out_tensor *o, const mf_model *part, const mf_tensor *t)
{
    int64_t e;
    if (h2g_need_hp_int(c, r->count_key, &e))
        return -1;
    if (t->ndim != 2 || t->shape[0] % e)
        return mf_fail(c->st, MF_ERR_FORMAT, part->path, -1,
                       "tensor \"%s\": not a 2-d tensor of %lld experts' rows", t->name, (long long)e);
    int64_t rows = t->shape[0] / e, cols = t->shape[1];
    bool t_ = r->op == OP_VIEW_EXPERTS_T;
    o->ndim = 3;
    o->shape[0] = e;
    o->shape[1] = t_ ? cols : rows;
    o->shape[2] = t_ ? rows : cols;
    o->transpose = t_;
    if (t_) { /* transposed block by block: each block of rows is one expert's rows in order */
        if (!(o->row_map = alloc_map(c, t->shape[0])))
            return -1;
        for (int64_t i = 0; i < t->shape[0]; i++)
            o->row_map[i] = i;
    }
    return 0;
}

/* An output tensor from source t under the HF name `hf` (mapped; NULL: out
 * of memory; the caller keeps it), of the given shape, rows of row_len
 * picked by map (taken, also on failure). */
static int add_mapped(conv *c, const mf_model *part, const mf_tensor *t, const char *hf, int ndim,
                      const int64_t *shape, int64_t row_len, int64_t *map)
{
    out_tensor o = {.ndim = ndim, .ew = OP_SKIP, .row_len = row_len, .row_map = map};
    memcpy(o.shape, shape, sizeof(int64_t) * (size_t)ndim);
    if (!hf) {
        h2g_free_out(&o);
        return mf_oom(c->st, c->dir);
    }
    o.name = map_name(c, hf);
    if (!o.name) {
        h2g_free_out(&o);
        return mf_fail(c->st, MF_ERR_FORMAT, part->path, -1, "can not map tensor \"%s\"", hf);
    }
    if (one_seg(c, &o, part, t)) {
        h2g_free_out(&o);
        return -1;
    }
    return add_out(c, &o);
}

/* OP_DEINTERLEAVE: the last dimension's elements k::n to output k, each
 * element a row of its own (x[..., k::n]). */
static int plan_deinterleave(conv *c, const conv_rule *r, const mf_model *part, const mf_tensor *t,
                             const char *name)
{
    size_t n = count_ws(r->ws);
    int64_t last = t->ndim ? t->shape[t->ndim - 1] : 0;
    if (n == 0 || t->ndim < 1 || last % (int64_t)n)
        return mf_fail(c->st, MF_ERR_FORMAT, part->path, -1, "tensor \"%s\": its last dimension %lld does not "
                       "split into %zu interleaved parts", name, (long long)last, n);
    int64_t total = h2g_numel(t->shape, t->ndim), width = last / (int64_t)n, shape[MF_MAX_DIMS];
    memcpy(shape, t->shape, sizeof(shape));
    shape[t->ndim - 1] = width;
    for (size_t k = 0; k < n; k++) {
        int64_t *map = alloc_map(c, total / (int64_t)n);
        if (!map)
            return -1;
        for (int64_t i = 0; i < total / (int64_t)n; i++)
            map[i] = (i / width) * last + (i % width) * (int64_t)n + (int64_t)k;
        char *hf = replace_match(r, name, r->ws[k]);
        int rc = add_mapped(c, part, t, hf, t->ndim, shape, 1, map);
        free(hf);
        if (rc)
            return -1;
    }
    return 0;
}

/* OP_SPLIT_ROWS: dimension -2 cut into n contiguous parts. */
static int plan_split_rows(conv *c, const conv_rule *r, const mf_model *part, const mf_tensor *t, const char *name)
{
    size_t n = count_ws(r->ws);
    if (n == 0 || t->ndim < 2 || t->shape[t->ndim - 2] % (int64_t)n)
        return mf_fail(c->st, MF_ERR_FORMAT, part->path, -1, "tensor \"%s\": dimension -2 does not split into %zu", name, n);
    int64_t rows = t->shape[t->ndim - 2], part_rows = rows / (int64_t)n, lead = h2g_numel(t->shape, t->ndim - 2);
    int64_t shape[MF_MAX_DIMS];
    memcpy(shape, t->shape, sizeof(shape));
    shape[t->ndim - 2] = part_rows;
    for (size_t k = 0; k < n; k++) {
        int64_t *map = alloc_map(c, lead * part_rows);
        if (!map)
            return -1;
        for (int64_t i = 0; i < lead * part_rows; i++)
            map[i] = (i / part_rows) * rows + (int64_t)k * part_rows + i % part_rows;
        char *hf = replace_match(r, name, r->ws[k]);
        int rc = add_mapped(c, part, t, hf, t->ndim, shape, t->shape[t->ndim - 1], map);
        free(hf);
        if (rc)
            return -1;
    }
    return 0;
}

/* The linear-attention head sizes (Qwen3-Next's linear_* keys). */
typedef struct linear_heads {
    int64_t nk, nv, hk, hv;
} linear_heads;

static int linear_heads_of(const conv *c, linear_heads *h)
{
    return h2g_need_hp_int(c, "linear_num_key_heads", &h->nk) || h2g_need_hp_int(c, "linear_num_value_heads", &h->nv) ||
           h2g_need_hp_int(c, "linear_key_head_dim", &h->hk) || h2g_need_hp_int(c, "linear_value_head_dim", &h->hv) ? -1 : 0;
}

/* OP_QKVZ (Qwen3NextModel.modify_tensors): per key head [q hk, k hk, v r*hv,
 * z r*hv] rows; attn_qkv takes every group's q, then k, then v; attn_gate z. */
static int plan_qkvz(conv *c, const mf_model *part, const mf_tensor *t, const char *name, int64_t bid)
{
    linear_heads h;
    if (linear_heads_of(c, &h))
        return -1;
    int64_t vz = h.nv / h.nk * h.hv, group = 2 * h.hk + 2 * vz;
    if (t->ndim != 2 || h.nv % h.nk || t->shape[0] != h.nk * group)
        return mf_fail(c->st, MF_ERR_FORMAT, part->path, -1, "tensor \"%s\": %lld rows are not %lld key-head groups "
                       "of q, k, v, z (%lld)", name, (long long)(t->ndim ? t->shape[0] : 0), (long long)h.nk,
                       (long long)group);
    const int64_t off[4] = {0, h.hk, 2 * h.hk, 2 * h.hk + vz}, size[4] = {h.hk, h.hk, vz, vz};
    for (int out = 0; out < 2; out++) {
        int64_t n = out ? h.nk * vz : h.nk * (2 * h.hk + vz), k = 0;
        int64_t *map = alloc_map(c, n);
        if (!map)
            return -1;
        for (int p = out ? 3 : 0; p < (out ? 4 : 3); p++)
            for (int64_t g = 0; g < h.nk; g++)
                for (int64_t i = 0; i < size[p]; i++)
                    map[k++] = g * group + off[p] + i;
        char hf[96];
        snprintf(hf, sizeof(hf), "blk.%lld.%s.weight", (long long)bid, out ? "attn_gate" : "attn_qkv");
        int64_t shape[2] = {n, t->shape[1]};
        if (add_mapped(c, part, t, hf, 2, shape, t->shape[1], map))
            return -1;
    }
    return 0;
}

/* OP_VHEADS: the index map of V heads [nk][r][d] read as [r][nk][d] after
 * `prefix` unchanged entries, over n entries; NULL (and no error) when
 * nothing moves. */
static int64_t *vheads_map(conv *c, const char *where, int64_t n, const char *name)
{
    linear_heads h;
    if (linear_heads_of(c, &h))
        return NULL;
    if (h.nk == h.nv)
        return NULL;
    bool one = !strcmp(where, "heads");
    int64_t d = one ? 1 : h.hv, prefix = !strcmp(where, "qkv") ? 2 * h.nk * h.hk : 0;
    if (h.nv % h.nk || n != prefix + h.nv * d) {
        mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "tensor \"%s\": %lld entries are not %lld V heads of %lld after %lld",
                name, (long long)n, (long long)h.nv, (long long)d, (long long)prefix);
        return NULL;
    }
    int64_t *m = alloc_map(c, n);
    for (int64_t i = 0; m && i < n; i++)
        m[i] = conv_vheads_source(i, prefix, h.nk, h.nv, d);
    return m;
}

/* Applies OP_VHEADS to o (rows, or the columns for "cols"). */
static int apply_vheads(conv *c, const conv_rule *r, out_tensor *o, const mf_tensor *t, const char *name)
{
    bool cols = !strcmp(r->with, "cols");
    int64_t rows, len;
    rows_of(t, &rows, &len);
    int64_t n = cols ? len : rows;
    int64_t *m = vheads_map(c, r->with, n, name);
    if (!m)
        return c->st->code ? -1 : 0;
    if (cols) {
        free(o->col_map);
        o->col_map = m;
        return 0;
    }
    if (t->ndim == 1)
        o->row_len = 1;
    for (int64_t i = 0; o->row_map && i < n; i++)
        m[i] = o->row_map[m[i]];
    free(o->row_map);
    o->row_map = m;
    return 0;
}

/* The source tensor of this name in any part (NULL: none). */
static const mf_tensor *find_source(const conv *c, const char *name, const mf_model **part)
{
    for (size_t p = 0; p < c->n_parts; p++) {
        const mf_tensor *t = mf_tensor_find(c->parts[p], name);
        if (t) {
            *part = c->parts[p];
            return t;
        }
    }
    return NULL;
}

/* OP_MXFP4 at a "..._scales" tensor: with its "..._blocks", ggml MXFP4
 * tensors [E, rows / n, nb * 32] for the n interleaved row sets
 * (GptOssModel.repack_mxfp4; the bytes are made in hf2gguf_stream.c). */
static int plan_mxfp4(conv *c, const conv_rule *r, const mf_model *part, const mf_tensor *scales)
{
    size_t n = count_ws(r->ws), nl = strlen(scales->name);
    char *bname = malloc(nl + 2);
    if (!bname)
        return mf_oom(c->st, c->dir);
    snprintf(bname, nl + 2, "%.*s_blocks", (int)(nl - strlen("_scales")), scales->name);
    const mf_model *bpart = NULL;
    const mf_tensor *blocks = find_source(c, bname, &bpart);
    int rc = 0;
    if (!blocks)
        rc = mf_fail(c->st, MF_ERR_FORMAT, part->path, -1, "tensor \"%s\": no \"%s\" holds its MXFP4 blocks",
                     scales->name, bname);
    else if (blocks->dtype != MF_U8 || scales->dtype != MF_U8 || blocks->ndim != 4 || scales->ndim != 3 ||
             blocks->shape[3] != 16 || memcmp(blocks->shape, scales->shape, 3 * sizeof(int64_t)) ||
             n == 0 || blocks->shape[1] % (int64_t)n)
        rc = mf_fail(c->st, MF_ERR_FORMAT, part->path, -1, "tensors \"%s\" / \"%s\": MXFP4 needs uint8 blocks "
                     "[E, rows, nb, 16] and uint8 scales [E, rows, nb], rows a multiple of %zu", bname,
                     scales->name, n);
    free(bname);
    if (rc)
        return rc;
    int64_t E = blocks->shape[0], rows = blocks->shape[1], nb = blocks->shape[2], orows = rows / (int64_t)n;
    for (size_t k = 0; k < n; k++) {
        out_tensor o = {.ndim = 3, .shape = {E, orows, nb * 32}, .ew = OP_SKIP, .row_len = nb * 32, .mxfp4 = true};
        char *renamed = replace_match(r, scales->name, r->ws[k]);
        o.name = renamed ? map_name(c, renamed) : NULL;
        rc = !renamed ? mf_oom(c->st, c->dir)
             : !o.name ? mf_fail(c->st, MF_ERR_FORMAT, part->path, -1, "can not map tensor \"%s\"", renamed) : 0;
        free(renamed);
        o.segs = rc ? NULL : malloc(2 * sizeof(seg));
        if (rc == 0 && (!o.segs || !(o.row_map = alloc_map(c, E * orows))))
            rc = o.segs ? -1 : mf_oom(c->st, c->dir);
        if (rc) {
            h2g_free_out(&o);
            return -1;
        }
        o.segs[0] = (seg){bpart, blocks};
        o.segs[1] = (seg){part, scales};
        o.n_segs = 2;
        for (int64_t i = 0; i < E * orows; i++)
            o.row_map[i] = (i / orows) * rows + (i % orows) * (int64_t)n + (int64_t)k;
        if (add_out(c, &o))
            return -1;
    }
    return 0;
}

/* A fused tensor cut along its rows (dimension -2; each leading slice of a
 * 3-d one alike) into the parts of r->split (OP_SPLIT); each part as its
 * row map, permuted when its op says so. */
static int plan_split(conv *c, const conv_rule *r, const mf_model *part, const mf_tensor *t,
                      const char *name, int64_t bid)
{
    const conv_split *sp = r->split;
    size_t n_parts = 0;
    while (sp->names[n_parts])
        n_parts++;
    if (t->ndim < 1 || t->ndim > 3 || n_parts < 2 || bid < 0)
        return mf_fail(c->st, MF_ERR_FORMAT, part->path, -1, "tensor \"%s\": cannot split a %d-d tensor "
                       "into %zu parts", name, t->ndim, n_parts);
    /* a 1-d one (a fused bias) is cut as rows of one element */
    int rd = t->ndim >= 2 ? t->ndim - 2 : 0;
    int64_t outer = t->ndim == 3 ? t->shape[0] : 1, rows = t->shape[rd], len = t->ndim >= 2 ? t->shape[t->ndim - 1] : 1;
    if (n_parts > 8)
        return mf_fail(c->st, MF_ERR_FORMAT, part->path, -1, "tensor \"%s\": %zu parts", name, n_parts);
    int64_t first = rows / (int64_t)n_parts, each[8], sum = 0;
    if (sp->part_rows) {
        if (sp->part_rows(c, rows, each))
            return -1;
        for (size_t p = 0; p < n_parts; p++)
            sum += each[p] > 0 ? each[p] : -rows - 1;
        if (sum != rows)
            return mf_fail(c->st, MF_ERR_FORMAT, part->path, -1, "tensor \"%s\": %lld rows are not the sum of "
                           "its %zu parts' (%lld, %lld, ...)", name, (long long)rows, n_parts, (long long)each[0],
                           (long long)each[1]);
    } else {
        if (sp->first_rows && sp->first_rows(c, bid, rows, &first))
            return -1;
        if (sp->first_rows ? (n_parts != 2 || first <= 0 || first >= rows) : rows % (int64_t)n_parts)
            return mf_fail(c->st, MF_ERR_FORMAT, part->path, -1, "tensor \"%s\": %lld rows do not split into "
                           "%zu parts (the first of %lld)", name, (long long)rows, n_parts, (long long)first);
        for (size_t p = 0; p < n_parts; p++)
            each[p] = sp->first_rows && p == 1 ? rows - first : first;
    }
    const char *suffix = ends_with(name, ".bias") ? ".bias" : ".weight";
    int64_t at = 0;
    for (size_t p = 0; p < n_parts; p++) {
        int64_t prow = each[p];
        out_tensor o = {.ndim = t->ndim, .ew = OP_SKIP};
        memcpy(o.shape, t->shape, sizeof(o.shape));
        o.shape[rd] = prow;
        o.row_len = len;
        o.name = malloc(strlen(sp->names[p]) + 32);
        if (!o.name || one_seg(c, &o, part, t) || !(o.row_map = alloc_map(c, outer * prow))) {
            bool oom = !o.name;
            h2g_free_out(&o);
            return oom ? mf_oom(c->st, c->dir) : -1;
        }
        const char *b = strstr(sp->names[p], "%b");
        if (b)
            sprintf(o.name, "%.*s%lld%s%s", (int)(b - sp->names[p]), sp->names[p], (long long)bid, b + 2, suffix);
        else
            sprintf(o.name, "%s%s", sp->names[p], suffix);
        for (int64_t e = 0; e < outer; e++)
            for (int64_t k = 0; k < prow; k++)
                o.row_map[e * prow + k] = e * rows + at + k;
        at += prow;
        int64_t heads;
        if ((sp->ops[p] == OP_PERMUTE_Q || sp->ops[p] == OP_PERMUTE_K) &&
            (outer != 1 || permute_heads(c, bid, sp->ops[p] == OP_PERMUTE_K, &heads) ||
             add_permute(c, &o, prow, heads, name))) {
            if (!c->st->code)
                mf_fail(c->st, MF_ERR_FORMAT, part->path, -1, "tensor \"%s\": a 3-d part cannot be permuted", name);
            h2g_free_out(&o);
            return -1;
        }
        if (add_out(c, &o))
            return -1;
    }
    return 0;
}

/* RobertaModel: data_torch[pad_token_id + 1:, :] (nothing without a pad id). */
static int drop_rows(conv *c, const conv_rule *r, out_tensor *o, const mf_model *part, const mf_tensor *t)
{
    json_t *pad = h2g_hparam(c, r->count_key);
    int64_t k;
    if (!pad || json_is_null(pad))
        return 0;
    if (h2g_need_int(c, pad, r->count_key, &k))
        return -1;
    k += 1;
    if (t->ndim != 2 || k < 0 || k > t->shape[0])
        return mf_fail(c->st, MF_ERR_FORMAT, part->path, -1, "tensor \"%s\": cannot drop its first %lld rows",
                       t->name, (long long)k);
    o->shape[0] = t->shape[0] - k;
    free(o->row_map);
    if (!(o->row_map = alloc_map(c, o->shape[0])))
        return -1;
    for (int64_t i = 0; i < o->shape[0]; i++)
        o->row_map[i] = i + k;
    return 0;
}

/* Tensors written before the others from the packed weights
 * (generate_extra_tensors): each OP_MXFP4 rule's "_scales" tensors in the
 * order the parts are read. */
static int plan_packed(conv *c, const mf_model *part, const mf_tensor *t)
{
    for (const conv_rule *r = c->arch->rules; r->pat; r++)
        if (r->op == OP_MXFP4 && rule_matches(c, r, t->name))
            return plan_mxfp4(c, r, part, t);
    return 0;
}

/* fn on every source tensor in the order the converter reads them (parts
 * in order, each part's tensors in its order). */
static int each_source(conv *c, int (*fn)(conv *, const mf_model *, const mf_tensor *))
{
    for (size_t p = 0; p < c->n_parts; p++) {
        const mf_tensor **order = h2g_part_order(c, c->parts[p], c->st);
        if (!order)
            return -1;
        int rc = 0;
        for (size_t i = 0; i < c->parts[p]->n_tensors && rc == 0; i++)
            rc = fn(c, c->parts[p], order[i]);
        free(order);
        if (rc)
            return -1;
    }
    return 0;
}

/* JaisModel.modify_tensors: relative_pe.slopes is not written; its first
 * value gives max_alibi_bias = -round(log2(first) * 2 ** floor(log2(n_head)))
 * (Python's round: half to even) */
static int alibi_slopes(conv *c, const mf_model *part, const mf_tensor *t)
{
    int64_t heads;
    float *v = NULL;
    if (h2g_need_hp_int(c, "n_head", &heads))
        return -1;
    if (mf_tensor_nelems(t) < 1 || mf_tensor_read_f32(part, t, &v, c->st))
        return c->st->code ? -1 : mf_fail(c->st, MF_ERR_FORMAT, part->path, -1, "tensor \"%s\" is empty", t->name);
    double closest = pow(2.0, floor(log2((double)heads))), first = v[0];
    free(v);
    if (!(first > 0) || isinf(first)) /* math.log2 raises there */
        return mf_fail(c->st, MF_ERR_FORMAT, part->path, -1, "tensor \"%s\": first ALiBi slope %g is not a "
                       "positive finite number", t->name, first);
    c->max_alibi_bias = -nearbyint(log2(first) * closest);
    return 0;
}

/* OP_FIRST_OF: was a tensor of this group met already? Marks it met. */
static bool first_of_seen(conv *c, const char *group)
{
    for (size_t i = 0; i < c->n_first_of_seen; i++)
        if (!strcmp(c->first_of_seen[i], group))
            return true;
    if (c->n_first_of_seen < sizeof(c->first_of_seen) / sizeof(c->first_of_seen[0]))
        c->first_of_seen[c->n_first_of_seen++] = group;
    return false;
}

/* CodeShellModel: "lm_head.weight" or "output.weight" among the tensors? */
static bool has_head(const conv *c)
{
    for (size_t p = 0; p < c->n_parts; p++)
        if (mf_tensor_find(c->parts[p], "lm_head.weight") || mf_tensor_find(c->parts[p], "output.weight"))
            return true;
    return false;
}

/* OP_SKIP_UNLESS: does the name start with (M_PREFIX) or hold (M_CONTAINS)
 * one of the rule's strings? */
static bool kept_by(const conv_rule *r, const char *name)
{
    for (const char *const *w = r->ws; w && *w; w++)
        if (r->m == M_PREFIX ? !strncmp(name, *w, strlen(*w)) : strstr(name, *w) != NULL)
            return true;
    return false;
}

/* OP_PICK_ROW: row c->pick_id of a 2-d tensor as a 1-d tensor (LlavaVisionModel:
 * data_torch[img_break_tok_id]); nothing when the id is not positive. */
static int plan_pick_row(conv *c, const conv_rule *r, const mf_model *part, const mf_tensor *t)
{
    if (c->pick_id <= 0)
        return 0;
    if (t->ndim != 2 || c->pick_id >= t->shape[0])
        return mf_fail(c->st, MF_ERR_FORMAT, part->path, -1, "tensor \"%s\": no row %lld (token %s) in a %d-d "
                       "tensor of %lld rows", t->name, (long long)c->pick_id, r->count_key, t->ndim,
                       (long long)(t->ndim ? t->shape[0] : 0));
    out_tensor o = {.ndim = 1, .shape = {t->shape[1]}, .row_len = t->shape[1], .ew = OP_SKIP};
    o.name = map_name(c, r->with);
    if (!o.name || one_seg(c, &o, part, t) || !(o.row_map = alloc_map(c, 1))) {
        bool mapped = o.name != NULL;
        h2g_free_out(&o);
        return mapped ? -1 : mf_fail(c->st, MF_ERR_FORMAT, part->path, -1, "can not map tensor \"%s\"", r->with);
    }
    o.row_map[0] = c->pick_id;
    return add_out(c, &o);
}

/* OP_UNSTACK: dimension d = r->with split into its entries, entry k as the
 * tensor ws[k] (Qwen2VLVisionModel: data_torch[:, :, k, ...]): the source
 * read as [A][K][B] rows of B, part k taking rows a * K + k. */
static int plan_unstack(conv *c, const conv_rule *r, const mf_model *part, const mf_tensor *t, const char *name)
{
    int d = r->with[0] - '0';
    int64_t k_n = (int64_t)count_ws(r->ws);
    if (d < 0 || d >= t->ndim || t->ndim - 1 > 4 || t->ndim < 2 || t->shape[d] != k_n)
        return mf_fail(c->st, MF_ERR_FORMAT, part->path, -1, "tensor \"%s\": dimension %d of a %d-d tensor must "
                       "have %lld entries (temporal_patch_size %lld)", name, d, t->ndim, (long long)k_n,
                       (long long)k_n);
    int64_t a = 1, b = 1;
    for (int i = 0; i < d; i++)
        a *= t->shape[i];
    for (int i = d + 1; i < t->ndim; i++)
        b *= t->shape[i];
    for (int64_t k = 0; k < k_n; k++) {
        out_tensor o = {.ndim = t->ndim - 1, .row_len = b, .ew = OP_SKIP};
        for (int i = 0, j = 0; i < t->ndim; i++)
            if (i != d)
                o.shape[j++] = t->shape[i];
        o.name = strdup(r->ws[k]);
        if (!o.name || one_seg(c, &o, part, t) || !(o.row_map = alloc_map(c, a))) {
            bool oom = !o.name;
            h2g_free_out(&o);
            return oom ? mf_oom(c->st, c->dir) : -1;
        }
        for (int64_t i = 0; i < a; i++)
            o.row_map[i] = i * k_n + k;
        if (add_out(c, &o))
            return -1;
    }
    return 0;
}

/* OP_BN_FOLD: one block's BatchNorm tensors (ConformerAudioModel.modify_tensors'
 * _batch_norm_tensors[bid]) until its fifth arrives. */
typedef struct bn_fold {
    int64_t bid;
    int n;                      /* names met (a name is met once) */
    const mf_model *part[4];    /* weight, bias, running_mean, running_var */
    const mf_tensor *t[4];
} bn_fold;

void h2g_free_bn(conv *c)
{
    free(c->bn);
    c->bn = NULL;
    c->n_bn = 0;
}

static bn_fold *bn_of(conv *c, int64_t bid)
{
    for (size_t i = 0; i < c->n_bn; i++)
        if (c->bn[i].bid == bid)
            return &c->bn[i];
    bn_fold *grown = realloc(c->bn, (c->n_bn + 1) * sizeof(*grown));
    if (!grown)
        return NULL;
    c->bn = grown;
    memset(&c->bn[c->n_bn], 0, sizeof(bn_fold));
    c->bn[c->n_bn].bid = bid;
    return &c->bn[c->n_bn++];
}

/* torch's float ops on the source's type: float32, or float16 rounded after
 * each op (prepare_tensors turns other types into float32 first) */
static float in_type(float x, bool half)
{
    return half ? mf_f16_to_f32(mf_f32_to_f16(x)) : x;
}

/* The folded pair of a complete block: w / sqrt(var + eps), bias - mean * a
 * (eps 1e-5 as a float, "default value"), each op rounded as torch does. */
static int bn_write(conv *c, const bn_fold *b, const char *stem)
{
    float *v[4] = {NULL, NULL, NULL, NULL};
    int64_t n = (int64_t)mf_tensor_nelems(b->t[0]);
    bool half = true;
    int rc = 0;
    for (int k = 0; k < 4 && rc == 0; k++) {
        half = half && b->t[k]->dtype == MF_F16;
        if ((int64_t)mf_tensor_nelems(b->t[k]) != n || b->t[k]->ndim != 1)
            rc = mf_fail(c->st, MF_ERR_FORMAT, b->part[k]->path, -1, "tensor \"%s\": a BatchNorm tensor of %lld "
                         "values expected (1-d, as its weight)", b->t[k]->name, (long long)n);
        else
            rc = mf_tensor_read_f32(b->part[k], b->t[k], &v[k], c->st);
    }
    static const char *const sfx[] = {".weight", ".bias"};
    for (int o = 0; o < 2 && rc == 0; o++) {
        char name[512];
        snprintf(name, sizeof(name), "%s%s", stem, sfx[o]);
        out_tensor ot = {.ndim = 1, .shape = {n}, .ew = OP_SKIP};
        ot.name = map_name(c, name);
        ot.generated = malloc((size_t)(n ? n : 1) * sizeof(float));
        if (!ot.name || !ot.generated) {
            bool mapped = ot.name != NULL;
            h2g_free_out(&ot);
            rc = mapped ? mf_oom(c->st, c->dir) : mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "can not map tensor "
                                                            "\"%s\"", name);
            break;
        }
        for (int64_t i = 0; i < n; i++) {
            float a = in_type(v[0][i] / in_type(sqrtf(in_type(v[3][i] + 1e-5f, half)), half), half);
            ot.generated[i] = o == 0 ? a : in_type(v[1][i] - in_type(v[2][i] * a, half), half);
        }
        rc = add_out(c, &ot);
    }
    for (int k = 0; k < 4; k++)
        free(v[k]);
    return rc;
}

/* A tensor of a BatchNorm (name holds pat): kept until its block has five,
 * then its weight and bias folded (nothing written before; a block that
 * never has five writes nothing, as the converter). */
static int plan_bn_fold(conv *c, const conv_rule *r, const mf_model *part, const mf_tensor *t, const char *name,
                        int64_t bid)
{
    if (bid < 0 || bid >= c->block_count)
        return mf_fail(c->st, MF_ERR_FORMAT, part->path, -1, "tensor \"%s\": a BatchNorm outside the %lld blocks",
                       name, (long long)c->block_count);
    bn_fold *b = bn_of(c, bid);
    if (!b)
        return mf_oom(c->st, c->dir);
    static const char *const roles[] = {".weight", ".bias", ".running_mean", ".running_var"};
    const char *at = strstr(name, r->pat);
    for (int k = 0; k < 4; k++)
        if (ends_with(name, roles[k])) {
            b->part[k] = part;
            b->t[k] = t;
        }
    if (++b->n < 5)
        return 0;
    for (int k = 0; k < 4; k++)
        if (!b->t[k])
            return mf_fail(c->st, MF_ERR_FORMAT, part->path, -1, "block %lld's BatchNorm has no %s", (long long)bid,
                           roles[k] + 1);
    char stem[400];
    snprintf(stem, sizeof(stem), "%.*s", (int)(at - name + (ptrdiff_t)strlen(r->pat)), name);
    return bn_write(c, b, stem);
}

/* OP_RENUMBER: the first all-digit part n of the name replaced by element
 * n of the config list r->count_key (malloc'd; NULL with st set). */
static char *renumber(conv *c, const conv_rule *r, const char *name)
{
    int64_t n = name_bid(name), v;
    json_t *list = h2g_hparam(c, r->count_key);
    if (n < 0 || !json_is_array(list) || (size_t)n >= json_array_size(list)) {
        mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "tensor \"%s\": no entry %lld in config.json's %s", name,
                (long long)n, r->count_key);
        return NULL;
    }
    if (h2g_need_int(c, json_array_get(list, (size_t)n), r->count_key, &v))
        return NULL;
    /* the number's place: the first dotted part that is all digits */
    for (const char *p = name;;) {
        size_t l = strcspn(p, ".");
        bool digits = l > 0;
        for (size_t i = 0; i < l; i++)
            digits = digits && p[i] >= '0' && p[i] <= '9';
        if (digits) {
            char *out = malloc(strlen(name) + 24);
            if (!out) {
                mf_oom(c->st, c->dir);
                return NULL;
            }
            sprintf(out, "%.*s%lld%s", (int)(p - name), name, (long long)v, p + l);
            return out;
        }
        if (!p[l])
            break;
        p += l + 1;
    }
    mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "tensor \"%s\" has no layer number", name);
    return NULL;
}

/* Does a skip rule drop this source name? (before any check of its shape:
 * Qwen2-VL's 5-d vision patch embedding is never read) */
static bool skipped_by_rule(const conv *c, const char *src)
{
    char *name = strdup(src);
    bool skip = false;
    for (const conv_rule *r = c->rules; name && r->pat; r++) {
        if (r->op == OP_ALSO_OUTPUT || r->op == OP_DROP_IF_EMBD || r->op == OP_ALSO_OUTPUT_UNTIED ||
            !rule_matches(c, r, name))
            continue;
        if (r->op == OP_SKIP || (r->op == OP_SKIP_UNLESS && !kept_by(r, name))) {
            skip = true;
            break;
        }
        if (r->op != OP_RENAME && r->op != OP_SKIP_UNLESS) /* decided by plan_one */
            break;
        if (r->op == OP_RENAME) { /* the rules that follow see the renamed name (LightOnOCR's) */
            char *n2 = rename_by(r, name);
            free(name);
            name = n2;
        }
    }
    free(name); /* out of memory: not skipped here; plan_one reports it */
    return skip;
}

/* One source tensor (or rows [r0, r0 + nrows) of it, nrows < 0: all) under
 * the name src_name through the rules and the name map. */
static int plan_one(conv *c, const mf_model *part, const mf_tensor *t, const char *src_name, int64_t r0,
                    int64_t nrows);

/* JinaBertV2Model.get_tensors: a fused tensor cut by rows into parts named (OP_CUT_ROWS)
 * with the rule's pattern replaced, each planned as a tensor of its own. */
static int plan_cut_rows(conv *c, const conv_rule *r, const mf_model *part, const mf_tensor *t)
{
    int64_t rows_per;
    if (h2g_need_hp_int(c, r->count_key, &rows_per))
        return -1;
    size_t n = 0;
    while (r->ws[n])
        n++;
    if (t->ndim < 1 || n == 0 || rows_per * (int64_t)(n - 1) >= t->shape[0])
        return mf_fail(c->st, MF_ERR_FORMAT, part->path, -1, "tensor \"%s\": %lld rows do not split into %zu "
                       "parts of %lld", t->name, (long long)(t->ndim ? t->shape[0] : 0), n, (long long)rows_per);
    for (size_t i = 0; i < n; i++) {
        const char *at = strstr(t->name, r->pat);
        size_t pre = (size_t)(at - t->name), k = strlen(r->pat), w = strlen(r->ws[i]);
        char *name = malloc(strlen(t->name) + w + 1);
        if (!name)
            return mf_oom(c->st, c->dir);
        memcpy(name, t->name, pre);
        memcpy(name + pre, r->ws[i], w);
        strcpy(name + pre + w, at + k);
        int64_t r0 = rows_per * (int64_t)i, nr = i + 1 < n ? rows_per : t->shape[0] - r0;
        int rc = plan_one(c, part, t, name, r0, nr);
        free(name);
        if (rc)
            return -1;
    }
    return 0;
}

/* OP_HEAD0_INTERLEAVE: every output row is source row 0 (after any row map)
 * with columns k*hd/2 + i moved to i*2 + k. */
static int head0_interleave(conv *c, out_tensor *o, const mf_tensor *t, const char *name)
{
    int64_t rows, len;
    rows_of(t, &rows, &len);
    if (t->ndim != 2 || len % 2 || rows < 1)
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "tensor \"%s\": [heads, head_dim] with an even head_dim "
                       "is needed to interleave its first head", name);
    int64_t *rm = alloc_map(c, rows), *cm = alloc_map(c, len);
    if (!rm || !cm) {
        free(rm);
        free(cm);
        return -1;
    }
    for (int64_t r = 0; r < rows; r++)
        rm[r] = o->row_map ? o->row_map[0] : 0;
    for (int64_t i = 0; i < len / 2; i++)
        for (int64_t k = 0; k < 2; k++)
            cm[i * 2 + k] = k * (len / 2) + i;
    free(o->row_map);
    free(o->col_map);
    o->row_map = rm;
    o->col_map = cm;
    o->row_len = len;
    return 0;
}

/* index i of [b][a][rest] as the index of the same element in [a][b][rest] */
int64_t conv_swap_groups_source(int64_t i, int64_t a, int64_t b, int64_t rest)
{
    int64_t j = i / (a * rest), k = i / rest % a, e = i % rest;
    return (k * b + j) * rest + e;
}

/* OP_SWAP_ROW_GROUPS / OP_SWAP_COL_GROUPS: a row (column) map of [A][B][rest]
 * read as [B][A][rest]. */
static int swap_groups(conv *c, const conv_rule *r, out_tensor *o, const mf_tensor *t, const char *name)
{
    long long a = 0, b = 0;
    int64_t rows, len;
    rows_of(t, &rows, &len);
    bool cols = r->op == OP_SWAP_COL_GROUPS;
    int64_t n = cols ? len : rows;
    if (sscanf(r->with, "%lld,%lld", &a, &b) != 2 || a < 1 || b < 1 || t->ndim != 2 || n % (a * b))
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "tensor \"%s\": its %s (%lld) are not groups of %lld x %lld",
                       name, cols ? "columns" : "rows", (long long)n, a, b);
    int64_t *m = alloc_map(c, n);
    if (!m)
        return -1;
    for (int64_t i = 0; i < n; i++) {
        int64_t s = conv_swap_groups_source(i, a, b, n / (a * b));
        m[i] = !cols && o->row_map ? o->row_map[s] : s;
    }
    free(cols ? o->col_map : o->row_map);
    if (cols) {
        o->col_map = m;
        o->row_len = len;
    } else {
        o->row_map = m;
    }
    return 0;
}

/* A factor from config.json: "KEY" or "KEY[i]" (a list's element), a number. */
static int config_factor(conv *c, const char *spec, const char *path, const char *name, double *f)
{
    char key[96];
    size_t n = strcspn(spec, "[");
    snprintf(key, sizeof(key), "%.*s", (int)(n < sizeof(key) ? n : sizeof(key) - 1), spec);
    json_t *v = h2g_hparam(c, key);
    if (spec[n] == '[' && json_is_array(v))
        v = json_array_get(v, (size_t)strtoul(spec + n + 1, NULL, 10));
    if (!json_is_number(v))
        return mf_fail(c->st, MF_ERR_FORMAT, path, -1, "tensor \"%s\": config.json has no number %s to scale it by",
                       name, spec);
    *f = json_number_value(v);
    return 0;
}

/* OP_SCALE (w * f: the first factor in o->scale, a later one per row) and
 * OP_SCALE_ROWS (a factor per row range, after them) */
static int plan_scale(conv *c, const conv_rule *r, out_tensor *o, const mf_model *part, const char *name)
{
    int64_t rows = o->shape[o->ndim - 1] ? h2g_numel(o->shape, o->ndim) / o->shape[o->ndim - 1] : 0;
    double f = 0;
    if (r->op == OP_SCALE && o->ew != OP_SCALE) {
        json_t *v = r->factor ? r->factor->fwd(c) : NULL;
        if (r->factor && !v)
            return -1;
        if (v) {
            f = json_number_value(v);
            json_decref(v);
        } else if (config_factor(c, r->count_key, part->path, name, &f)) {
            return -1;
        }
        o->ew = OP_SCALE;
        o->scale = (float)f;
        return 0;
    }
    if (o->row_scale)
        return mf_fail(c->st, MF_ERR_UNSUPPORTED, part->path, -1, "tensor \"%s\": a third scaling", name);
    if (!(o->row_scale = malloc(sizeof(float) * (size_t)(rows ? rows : 1))))
        return mf_oom(c->st, c->dir);
    if (r->op == OP_SCALE_ROWS)
        return r->row_factors(c, rows, o->row_scale);
    if (r->factor || config_factor(c, r->count_key, part->path, name, &f))
        return r->factor ? mf_fail(c->st, MF_ERR_UNSUPPORTED, part->path, -1, "tensor \"%s\": a second computed scale",
                                   name) : -1;
    for (int64_t i = 0; i < rows; i++)
        o->row_scale[i] = (float)f;
    return 0;
}

/* OP_RKVWG: output row (g, i) of 5 equal groups comes from group
 * {3, 1, 2, 0, 4}[g] (RWKV6Qwen2Model.modify_tensors' restacking of
 * time_mix_w1/w2 after the transposes; the order is its own inverse). */
static int rkvwg_order(conv *c, out_tensor *o, const mf_model *part, const char *name)
{
    static const int64_t from[5] = {3, 1, 2, 0, 4};
    int64_t last = o->shape[o->ndim - 1], rows = last ? h2g_numel(o->shape, o->ndim) / last : 0;
    if (o->out_perm || rows % 5 || rows == 0)
        return mf_fail(c->st, MF_ERR_FORMAT, part->path, -1, "tensor \"%s\": %lld rows are not 5 equal groups "
                       "(r, k, v, w, g)", name, (long long)rows);
    if (!(o->out_perm = alloc_map(c, rows)))
        return -1;
    int64_t per = rows / 5;
    for (int64_t r = 0; r < rows; r++)
        o->out_perm[r] = from[r / per] * per + r % per;
    return 0;
}

/* OP_HALVE_EVERY: data_torch.div_(2 ** int(bid // rescale_every)) when
 * rescale_every > 0 (absent: a KeyError the converter passes over); times
 * the exact power of two 2 ** -k, the same value */
static int plan_halve(conv *c, const conv_rule *r, out_tensor *o, const mf_model *part, const char *name, int64_t bid)
{
    json_t *v = h2g_hparam(c, r->count_key);
    int64_t every;
    if (!v || json_is_null(v))
        return 0;
    if (h2g_need_int(c, v, r->count_key, &every))
        return -1;
    if (every <= 0)
        return 0;
    if (bid < 0)
        return mf_fail(c->st, MF_ERR_FORMAT, part->path, -1, "tensor \"%s\": no block number", name);
    int64_t k = bid / every;
    if (k > 120)
        return mf_fail(c->st, MF_ERR_UNSUPPORTED, part->path, -1, "tensor \"%s\": divided by 2 ** %lld", name,
                       (long long)k);
    if (o->ew != OP_SKIP)
        return mf_fail(c->st, MF_ERR_UNSUPPORTED, part->path, -1, "tensor \"%s\": a second element-wise op", name);
    o->ew = OP_SCALE;
    o->scale = ldexpf(1.0f, (int)-k);
    return 0;
}

/* OP_STACK_PARTS: the part name after pat is one of ws (time_maa_w, not time_maa_w1) */
static bool stack_part_of(const conv_rule *r, const char *name)
{
    const char *p = strstr(name, r->pat);
    if (!p)
        return false;
    p += strlen(r->pat);
    for (size_t w = 0; r->ws[w]; w++)
        if (!strcmp(p, r->ws[w]))
            return true;
    return false;
}

/* OP_STACK_PARTS: collects the block's parts; when all of ws arrived,
 * one [len(ws), 1, 1, n] tensor of them in ws order. */
static int plan_stack_parts(conv *c, const conv_rule *r, const mf_model *part, const mf_tensor *t, const char *name,
                            int64_t bid)
{
    if (bid < 0)
        return mf_fail(c->st, MF_ERR_FORMAT, part->path, -1, "tensor \"%s\": no block number", name);
    pending *p = pending_of(c, r, bid);
    if (!p)
        return -1;
    size_t n_ws = count_ws(r->ws);
    if (!p->names) {
        p->names = calloc(n_ws, sizeof(char *));
        p->segs = calloc(n_ws, sizeof(seg));
        p->cap = n_ws;
        if (!p->names || !p->segs)
            return mf_oom(c->st, c->dir);
    }
    const char *which = strstr(name, r->pat) + strlen(r->pat);
    size_t w = 0;
    while (strcmp(r->ws[w], which))
        w++;
    if (p->names[w])
        return mf_fail(c->st, MF_ERR_FORMAT, part->path, -1, "tensor \"%s\": twice", name);
    if (!(p->names[w] = strdup(name)))
        return mf_oom(c->st, c->dir);
    p->segs[w] = (seg){part, t};
    if (++p->n < n_ws)
        return 0;
    out_tensor o = {.ndim = 4, .ew = OP_SKIP};
    int64_t len = (int64_t)mf_tensor_nelems(t);
    for (size_t k = 0; k < n_ws; k++) {
        const mf_tensor *s0 = p->segs[k].t;
        int64_t rows = s0->ndim ? (int64_t)mf_tensor_nelems(s0) / s0->shape[s0->ndim - 1] : 1;
        if ((int64_t)mf_tensor_nelems(s0) != len || rows != 1)
            return mf_fail(c->st, MF_ERR_FORMAT, part->path, -1, "block %lld: the parts to stack with \"%s\" are "
                           "not vectors of one size", (long long)bid, name);
    }
    o.shape[0] = (int64_t)n_ws;
    o.shape[1] = o.shape[2] = 1;
    o.shape[3] = len;
    o.segs = malloc(n_ws * sizeof(seg));
    if (!o.segs)
        return mf_oom(c->st, c->dir);
    memcpy(o.segs, p->segs, n_ws * sizeof(seg));
    o.n_segs = n_ws;
    char merged[256];
    snprintf(merged, sizeof(merged), "%s", r->merged_fmt);
    char *b = strstr(merged, "%b");
    if (b) {
        char tail[256];
        snprintf(tail, sizeof(tail), "%s", b + 2);
        snprintf(b, sizeof(merged) - (size_t)(b - merged), "%lld%s", (long long)bid, tail);
    }
    for (size_t k = 0; k < n_ws; k++) {
        free(p->names[k]);
        p->names[k] = NULL;
    }
    p->n = 0;
    o.name = map_name(c, merged);
    if (!o.name) {
        h2g_free_out(&o);
        return mf_fail(c->st, MF_ERR_FORMAT, part->path, -1, "can not map tensor \"%s\"", merged);
    }
    return add_out(c, &o);
}

/* OP_GROUPS: [.., n] as [g, n / g] */
static int plan_groups(conv *c, const conv_rule *r, out_tensor *o, const mf_model *part, const char *name)
{
    int64_t g, n = h2g_numel(o->shape, o->ndim);
    const char *key = first_present(c, r->count_key);
    if (!key || h2g_need_hp_int(c, key, &g))
        return key ? -1 : mf_fail(c->st, MF_ERR_FORMAT, part->path, -1, "tensor \"%s\": config.json has no %s", name,
                                  r->count_key);
    if (g <= 0 || n % g)
        return mf_fail(c->st, MF_ERR_FORMAT, part->path, -1, "tensor \"%s\": %lld values in %lld groups", name,
                       (long long)n, (long long)g);
    o->ndim = 2;
    o->shape[0] = g;
    o->shape[1] = n / g;
    return 0;
}

/* OP_VIEW: o's values in the shape r->with (torch order: sizes, "dN" for
 * dimension N of the tensor as it arrives, one "-1" for the rest) */
static int plan_view(conv *c, const conv_rule *r, out_tensor *o, const mf_model *part, const char *name)
{
    int64_t shape[MF_MAX_DIMS], n = h2g_numel(o->shape, o->ndim);
    uint64_t known = 1;
    int nd = 0, rest = -1;
    bool bad = false;
    for (const char *p = r->with; *p && !bad; nd++) {
        char *end;
        if (nd == MF_MAX_DIMS) {
            bad = true;
            break;
        }
        if (*p == 'd') {
            long d = strtol(p + 1, &end, 10);
            bad = end == p + 1 || d < 0 || d >= o->ndim;
            shape[nd] = bad ? 0 : o->shape[d];
        } else {
            shape[nd] = strtoll(p, &end, 10);
            bad = end == p || shape[nd] < -1 || shape[nd] == 0 || (shape[nd] == -1 && rest >= 0);
            if (shape[nd] == -1)
                rest = nd;
        }
        bad = bad || (*end && *end != ',') || (shape[nd] > 0 && mf_mul_ovf(known, (uint64_t)shape[nd], &known));
        p = *end == ',' ? end + 1 : end;
    }
    if (!bad && rest >= 0 && known > 0 && (uint64_t)n % known == 0) {
        shape[rest] = n / (int64_t)known;
        known = (uint64_t)n;
    }
    if (bad || nd == 0 || known != (uint64_t)n)
        return mf_fail(c->st, MF_ERR_FORMAT, part->path, -1, "tensor \"%s\": %lld values cannot be viewed as [%s]",
                       name, (long long)n, r->with);
    o->ndim = nd;
    memcpy(o->shape, shape, sizeof(int64_t) * (size_t)nd);
    return 0;
}

/* OP_QK_SPLIT_ROPE: the row map of a fused [q; k; v] whose q and k heads'
 * rows [d/4][2][2] are read as [2][d/4][2] (a 1-d bias: its elements) */
static int qk_split_rope(conv *c, const conv_rule *r, out_tensor *o, const mf_tensor *t, const char *name)
{
    int64_t rows, len, heads = 0;
    rows_of(t, &rows, &len);
    json_t *h = h2g_lookup(c, r->count_key);
    int rc = h ? h2g_need_int(c, h, r->count_key, &heads) : -1;
    json_decref(h);
    int64_t part = rows / 3, hd = heads > 0 ? part / heads : 0;
    if (rc || t->ndim < 1 || t->ndim > 2 || rows % 3 || heads <= 0 || part % heads || hd % 4 || hd == 0)
        return c->st->code ? -1 : mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "tensor \"%s\": %lld rows are not "
                                          "q, k, v of %lld heads with a head size a multiple of 4", name,
                                          (long long)rows, (long long)heads);
    int64_t *m = alloc_map(c, rows);
    if (!m)
        return -1;
    for (int64_t i = 0; i < rows; i++) {
        int64_t s = i;
        if (i < 2 * part) /* q and k; v as it is */
            s = i / hd * hd + conv_swap_groups_source(i % hd, hd / 4, 2, 2);
        m[i] = o->row_map ? o->row_map[s] : s;
    }
    free(o->row_map);
    o->row_map = m;
    if (t->ndim == 1)
        o->row_len = 1;
    return 0;
}

static int plan_tensor(conv *c, const mf_model *part, const mf_tensor *t)
{
    for (const conv_rule *r = c->rules; r->pat; r++)
        if (r->op == OP_CUT_ROWS && rule_matches(c, r, t->name))
            return plan_cut_rows(c, r, part, t);
    return plan_one(c, part, t, t->name, 0, -1);
}

static int plan_one(conv *c, const mf_model *part, const mf_tensor *t, const char *src_name, int64_t r0,
                    int64_t nrows)
{
    if (ends_with(t->name, ".attention.masked_bias") || ends_with(t->name, ".attention.bias") ||
        ends_with(t->name, ".rotary_emb.inv_freq") || skipped_by_rule(c, t->name))
        return 0; /* "we don't need these" */
    if (!dtype_convertible(t->dtype))
        return mf_fail(c->st, MF_ERR_UNSUPPORTED, part->path, -1,
                       "tensor \"%s\": %s values cannot be converted", t->name, mf_dtype_name(t->dtype));
    int64_t bid = name_bid(src_name);
    char *name = strdup(src_name);
    if (!name)
        return mf_oom(c->st, c->dir);
    out_tensor o = {.ndim = t->ndim, .ew = OP_SKIP};
    memcpy(o.shape, t->shape, sizeof(o.shape));
    if (nrows >= 0) { /* a part of the rows (plan_split) */
        o.shape[0] = nrows;
        if (!(o.row_map = alloc_map(c, nrows))) {
            free(name);
            return -1;
        }
        for (int64_t i = 0; i < nrows; i++)
            o.row_map[i] = r0 + i;
    }
    int permute = 0, rc = 0;
    bool stop = false, head0 = false, swap3 = false, rkvwg = false;
    char *gguf_name = NULL; /* OP_GGUF_NAME: the name is final */
    const conv_rule *swap = NULL, *qkrope = NULL;
    const conv_rule *after_map = NULL, *view = NULL, *drop = NULL;
    for (const conv_rule *r = c->rules; r->pat && !stop; r++) {
        if (r->op == OP_ALSO_OUTPUT || r->op == OP_DROP_IF_EMBD || r->op == OP_ALSO_OUTPUT_UNTIED) {
            after_map = r;
            continue;
        }
        if (r->op == OP_MXFP4) /* planned before every tensor (plan_packed_first) */
            continue;
        if (!rule_matches(c, r, name) || (r->op == OP_STACK_PARTS && !stack_part_of(r, name)))
            continue;
        switch (r->op) {
        case OP_RENAME: {
            char *n2 = rename_by(r, name);
            free(name);
            if (!(name = n2)) {
                h2g_free_out(&o);
                return mf_oom(c->st, c->dir);
            }
            continue;
        }
        case OP_SKIP: free(name); h2g_free_out(&o); return 0;
        case OP_SKIP_UNLESS:
            if (!kept_by(r, name)) {
                free(name);
                h2g_free_out(&o);
                return 0;
            }
            continue;
        case OP_GGUF_NAME:
        case OP_RENUMBER: {
            char *n2 = r->op == OP_RENUMBER ? renumber(c, r, name) : rename_by(r, name);
            free(name);
            if (!(name = n2)) {
                h2g_free_out(&o);
                return c->st->code ? -1 : mf_oom(c->st, c->dir);
            }
            if (r->op == OP_GGUF_NAME) {
                gguf_name = name;
                stop = true;
            }
            continue;
        }
        case OP_PICK_ROW: rc = plan_pick_row(c, r, part, t); break;
        case OP_UNSTACK: rc = plan_unstack(c, r, part, t, name); break;
        case OP_BN_FOLD: rc = plan_bn_fold(c, r, part, t, name, bid); break;
        case OP_SKIP_IF_TIED:
            if (json_is_true(h2g_hparam(c, "tie_word_embeddings"))) {
                free(name);
                h2g_free_out(&o);
                return 0;
            }
            continue;
        case OP_PERMUTE_Q: case OP_PERMUTE_K: permute = r->op; continue;
        case OP_ADD_ONE: case OP_NEG_EXP: case OP_TERNARY: o.ew = r->op; continue;
        case OP_SCALE: case OP_SCALE_ROWS:
            if (plan_scale(c, r, &o, part, name)) {
                free(name);
                h2g_free_out(&o);
                return -1;
            }
            continue;
        case OP_HALVE_EVERY:
            if (plan_halve(c, r, &o, part, name, bid)) {
                free(name);
                h2g_free_out(&o);
                return -1;
            }
            continue;
        case OP_SWAP_LAST2:
            if (t->ndim != 3) {
                rc = mf_fail(c->st, MF_ERR_FORMAT, part->path, -1, "tensor \"%s\": [a, b, c] expected", name);
                free(name);
                h2g_free_out(&o);
                return rc;
            }
            /* output row (i, k) is column k of the source's matrix i: t_cols columns per
               block of shape[1] source rows (hf2gguf_stream.c's transposed read) */
            o.shape[1] = t->shape[2];
            o.shape[2] = t->shape[1];
            o.row_len = t->shape[1];
            o.t_cols = t->shape[2];
            swap3 = true;
            continue;
        case OP_STACK_PARTS: rc = plan_stack_parts(c, r, part, t, name, bid); break;
        case OP_UNSQUEEZE_LAST:
            if (o.ndim < MF_MAX_DIMS)
                o.shape[o.ndim++] = 1;
            continue;
        case OP_VIEW:
            if (plan_view(c, r, &o, part, name)) {
                free(name);
                h2g_free_out(&o);
                return -1;
            }
            continue;
        case OP_GROUPS:
            if (plan_groups(c, r, &o, part, name)) {
                free(name);
                h2g_free_out(&o);
                return -1;
            }
            continue;
        case OP_TRANSPOSE: o.transpose = true; continue;
        case OP_HEAD0_INTERLEAVE: head0 = true; continue;
        case OP_RKVWG: rkvwg = true; continue;
        case OP_SWAP_ROW_GROUPS: case OP_SWAP_COL_GROUPS: swap = r; continue;
        case OP_QK_SPLIT_ROPE: qkrope = r; continue;
        case OP_VIEW_EXPERTS: case OP_VIEW_EXPERTS_T: view = r; continue;
        case OP_DROP_ROWS: drop = r; continue;
        case OP_CUT_ROWS: continue; /* done before (plan_tensor) */
        case OP_VOCAB_ROWS: o.vocab_rows = true; continue; /* cut once the vocabulary is known */
        case OP_FIRST_OF: {
            if (first_of_seen(c, r->count_key)) {
                free(name);
                h2g_free_out(&o);
                return 0; /* "skipping shared tensor" */
            }
            char *n2 = strdup(r->with);
            free(name);
            if (!(name = n2)) {
                h2g_free_out(&o);
                return mf_oom(c->st, c->dir);
            }
            continue;
        }
        case OP_SQUEEZE: { /* torch.squeeze: the same values, the size-1 dimensions gone */
            int nd = 0;
            for (int d = 0; d < o.ndim; d++)
                if (o.shape[d] != 1)
                    o.shape[nd++] = o.shape[d];
            o.ndim = nd ? nd : 1;
            if (!nd)
                o.shape[0] = 1;
            continue;
        }
        case OP_SQUEEZE1:
            if (o.ndim >= 2 && o.shape[1] == 1) {
                memmove(o.shape + 1, o.shape + 2, sizeof(int64_t) * (size_t)(o.ndim - 2));
                o.shape[--o.ndim] = 0;
            }
            continue;
        case OP_STOP: stop = true; continue;
        case OP_VHEADS:
            if (apply_vheads(c, r, &o, t, name)) {
                free(name);
                h2g_free_out(&o);
                return -1;
            }
            continue;
        case OP_QKVZ: rc = plan_qkvz(c, part, t, name, bid); free(name); h2g_free_out(&o); return rc;
        case OP_SPLIT_ROWS: rc = plan_split_rows(c, r, part, t, name); free(name); h2g_free_out(&o); return rc;
        case OP_DEINTERLEAVE: rc = plan_deinterleave(c, r, part, t, name); free(name); h2g_free_out(&o); return rc;
        case OP_ALIBI_SLOPES: rc = alibi_slopes(c, part, t); break;
        case OP_STACK: rc = plan_stack(c, r, part, t, name, bid); break;
        case OP_SPLIT: rc = plan_split(c, r, part, t, name, bid); break;
        case OP_SPLIT_KV_B: rc = plan_kv_b(c, part, t, name); break;
        default: rc = plan_qkv(c, r, part, t, name, bid); break;
        case OP_EXPERTS_T: rc = plan_experts_transposed(c, part, t, name); break;
        }
        free(name);
        h2g_free_out(&o);
        return rc;
    }
    if (view && view_experts(c, view, &o, part, t)) {
        free(name);
        h2g_free_out(&o);
        return -1;
    }
    if (o.ndim > 4) { /* after the rules: a skipped tensor (a vision tower's) may have more */
        rc = mf_fail(c->st, MF_ERR_UNSUPPORTED, part->path, -1, "tensor \"%s\": %d dimensions (GGUF holds at most 4)",
                     t->name, o.ndim);
        free(name);
        h2g_free_out(&o);
        return rc;
    }
    if (swap3)
        o.transpose = true;
    else if (o.transpose && !view) {
        if (t->ndim != 2) {
            rc = mf_fail(c->st, MF_ERR_FORMAT, part->path, -1, "tensor \"%s\": a transpose needs 2 dimensions", name);
            free(name);
            h2g_free_out(&o);
            return rc;
        }
        o.shape[0] = t->shape[1];
        o.shape[1] = t->shape[0];
    }
    o.name = gguf_name ? strdup(name) : map_name(c, name);
    if (!o.name) {
        rc = gguf_name ? mf_oom(c->st, c->dir) : mf_fail(c->st, MF_ERR_FORMAT, part->path, -1, "can not map tensor \"%s\"", name);
        free(name);
        h2g_free_out(&o);
        return rc;
    }
    if (drop && drop_rows(c, drop, &o, part, t)) {
        free(name);
        h2g_free_out(&o);
        return -1;
    }
    if (permute) {
        int64_t heads, rows, len;
        rows_of(t, &rows, &len);
        if (t->ndim == 1)
            o.row_len = 1; /* a bias: its elements are the rows permuted */
        if (t->ndim < 1) {
            rc = mf_fail(c->st, MF_ERR_FORMAT, part->path, -1, "tensor \"%s\": a scalar cannot be permuted", name);
        } else if (permute_heads(c, bid, permute == OP_PERMUTE_K, &heads) || add_permute(c, &o, rows, heads, name)) {
            rc = -1;
        }
        if (rc) {
            free(name);
            h2g_free_out(&o);
            return -1;
        }
    }
    if (qkrope && qk_split_rope(c, qkrope, &o, t, name)) {
        free(name);
        h2g_free_out(&o);
        return -1;
    }
    if (swap && swap_groups(c, swap, &o, t, name)) {
        free(name);
        h2g_free_out(&o);
        return -1;
    }
    if (rkvwg && rkvwg_order(c, &o, part, name)) {
        free(name);
        h2g_free_out(&o);
        return -1;
    }
    if (head0 && head0_interleave(c, &o, t, name)) {
        free(name);
        h2g_free_out(&o);
        return -1;
    }
    free(name);
    if (after_map && after_map->op == OP_DROP_IF_EMBD && !strcmp(o.name, after_map->pat)) {
        for (size_t i = 0; i < c->n_out; i++)
            if (!strcmp(c->out[i].name, "token_embd.weight") && h2g_same_values(c, &c->out[i], part, t)) {
                h2g_free_out(&o);
                return 0; /* "equivalent to token_embd.weight, omitting" */
            }
    }
    if (one_seg(c, &o, part, t)) {
        h2g_free_out(&o);
        return -1;
    }
    bool dup = after_map && (after_map->op == OP_ALSO_OUTPUT || (after_map->op == OP_ALSO_OUTPUT_UNTIED &&
                                                                 !has_head(c))) && !strcmp(o.name, after_map->pat);
    out_tensor copy = o;
    if (add_out(c, &o))
        return -1;
    if (!dup)
        return 0;
    copy.name = strdup("output.weight");
    copy.segs = malloc(sizeof(seg));
    copy.row_map = NULL;
    copy.out_perm = NULL;
    if (!copy.name || !copy.segs) {
        h2g_free_out(&copy);
        return mf_oom(c->st, c->dir);
    }
    copy.segs[0] = (seg){part, t};
    if (o.row_scale) {
        size_t rb = sizeof(float) * (size_t)(h2g_numel(o.shape, o.ndim) / o.row_len);
        if (!(copy.row_scale = malloc(rb))) {
            h2g_free_out(&copy);
            return mf_oom(c->st, c->dir);
        }
        memcpy(copy.row_scale, o.row_scale, rb);
    }
    return add_out(c, &copy);
}


/* The rope_freqs values of llama3 rope scaling, (dim + 1) / 2 of them, in
 * float32 as LlamaModel.generate_extra_tensors computes them (x / y on a
 * scalar left operand is reciprocal(y) * x in torch). The GGUF -> HF
 * direction solves them back (gguf2hf_config.c). */
void conv_llama3_rope_factors(double base, int64_t dim, double factor, double low, double high, double old_ctx,
                              double *vals)
{
    double low_wavelen = old_ctx / low, high_wavelen = old_ctx / high;
    size_t n = (size_t)(dim + 1) / 2;
    const float two_pi = (float)(2 * M_PI), hf32 = (float)high_wavelen, lf32 = (float)low_wavelen;
    for (size_t i = 0; i < n; i++) {
        float x = (float)(2 * i) / (float)dim;
        float freq = (1.0f / powf((float)base, x)) * 1.0f;
        float wavelen = (1.0f / freq) * two_pi;
        float v;
        if (wavelen < hf32) {
            v = 1.0f;
        } else if (wavelen > lf32) {
            v = (float)factor;
        } else {
            float smooth = ((1.0f / wavelen) * (float)old_ctx - (float)low) / (float)(high - low);
            float d = (1.0f - smooth) / (float)factor + smooth;
            v = (1.0f / d) * 1.0f;
        }
        vals[i] = v;
    }
}

/* LlamaModel.generate_extra_tensors: rope_freqs for "llama3" rope scaling,
 * computed in float32 as the converter's torch code does (x / y on a
 * scalar left operand is reciprocal(y) * x there). */
static int llama3_rope_freqs(conv *c)
{
    /* 2026: rope_parameters (its full_attention part when it has one),
     * the theta from there too */
    json_t *rs = h2g_hparam(c, "rope_scaling"), *rp = c->l2026 ? h2g_rope_params(c) : NULL;
    if (rp)
        rs = json_object_get(rp, "full_attention") ? json_object_get(rp, "full_attention") : rp;
    const char *rt = json_string_value(json_object_get(rs, "rope_type"));
    if (!json_is_object(rs) || !rt || strcasecmp(rt, "llama3"))
        return 0;
    double base = 10000.0;
    json_t *th = rp ? json_object_get(rs, "rope_theta") : h2g_hparam(c, "rope_theta");
    if (th)
        base = json_number_value(th);
    int64_t dim, hidden, heads;
    if (h2g_hparam(c, "head_dim")) {
        if (h2g_need_int(c, h2g_hparam(c, "head_dim"), "head_dim", &dim))
            return -1;
    } else {
        if (h2g_need_int(c, h2g_hparam(c, "hidden_size"), "hidden_size", &hidden) ||
            h2g_need_int(c, h2g_hparam(c, "num_attention_heads"), "num_attention_heads", &heads))
            return -1;
        if (heads <= 0)
            return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "num_attention_heads must be positive");
        dim = hidden / heads; /* Python // on positive values */
    }
    if (dim <= 0 || dim > (1 << 20))
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "head dimension %lld is out of range", (long long)dim);
    json_t *f = json_object_get(rs, "factor"), *lf = json_object_get(rs, "low_freq_factor"),
           *hf = json_object_get(rs, "high_freq_factor");
    double factor = f ? json_number_value(f) : 8.0, low = lf ? json_number_value(lf) : 1.0,
           high = hf ? json_number_value(hf) : 4.0;
    json_t *oc = h2g_hparam(c, "original_max_position_embeddings");
    double old_ctx = oc ? json_number_value(oc) : 8192.0;
    double low_wavelen = old_ctx / low, high_wavelen = old_ctx / high;
    if (low_wavelen == high_wavelen && !c->l2026) /* an assert in c392e50, commented out since ("Errors for Llama4") */
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "rope_scaling: low and high frequency factors are equal");
    size_t n = (size_t)(dim + 1) / 2;
    double *vals = malloc(n * sizeof(double));
    if (!vals)
        return mf_oom(c->st, c->dir);
    conv_llama3_rope_factors(base, dim, factor, low, high, old_ctx, vals);
    int rc = add_generated(c, "rope_freqs.weight", vals, n);
    free(vals);
    return rc;
}

/* rope_scaling's long_factor and short_factor lists, dims / 2 values each,
 * as rope_factors_long / rope_factors_short (float32) */
static int factor_tensors(conv *c, json_t *rs, int64_t dims)
{
    json_t *lf = json_object_get(rs, "long_factor"), *sf = json_object_get(rs, "short_factor");
    if (!json_is_array(lf) || !json_is_array(sf))
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1,
                       "config.json: missing the required key rope_scaling.long_factor or short_factor");
    size_t n = json_array_size(lf);
    if (json_array_size(sf) != n || (double)n != (double)dims / 2)
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "the length of rope long and short factors must be %g",
                       (double)dims / 2);
    double *v = malloc((n ? n : 1) * sizeof(double));
    if (!v)
        return mf_oom(c->st, c->dir);
    int rc = 0;
    for (int which = 0; rc == 0 && which < 2; which++) {
        json_t *a = which ? sf : lf;
        for (size_t i = 0; rc == 0 && i < n; i++) {
            if (!json_is_number(json_array_get(a, i)))
                rc = mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json rope_scaling factors must be numbers");
            v[i] = json_number_value(json_array_get(a, i));
        }
        if (rc == 0)
            rc = add_generated(c, which ? "rope_factors_short.weight" : "rope_factors_long.weight", v, n);
    }
    free(v);
    return rc;
}

/* Phi3MiniModel.generate_extra_tensors: LongRoPE factors and the attention
 * factor (written before the other keys, as the converter does). */
static int longrope_tensors(conv *c)
{
    json_t *rs = h2g_hparam(c, "rope_scaling");
    if (!rs || json_is_null(rs))
        return 0;
    static const char *const emb[] = {"hidden_size", "n_embd", NULL}, *const heads[] = {"num_attention_heads", "n_head", NULL},
                             *const maxp[] = {"n_positions", "max_position_embeddings", NULL};
    int64_t n_embd, n_head, max_pos, orig;
    json_t *o = h2g_hparam(c, "original_max_position_embeddings");
    if (h2g_need_int(c, h2g_find_hparam(c, emb), "hidden_size", &n_embd) || h2g_need_int(c, h2g_find_hparam(c, heads), "num_attention_heads", &n_head) ||
        h2g_need_int(c, h2g_find_hparam(c, maxp), "max_position_embeddings", &max_pos) ||
        h2g_need_int(c, o, "original_max_position_embeddings", &orig))
        return -1;
    if (n_head <= 0 || orig <= 0)
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json head count and original context must be positive");
    const char *type = json_string_value(json_object_get(rs, "type"));
    if (!type || !*type)
        return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "config.json: missing the required key rope_scaling.type");
    double scale = (double)max_pos / (double)orig, attn;
    if (!strcasecmp(type, "su") || !strcasecmp(type, "longrope"))
        attn = scale > 1.0 ? sqrt(1 + log(scale) / log((double)orig)) : 1.0;
    else if (!strcasecmp(type, "yarn"))
        attn = scale > 1.0 ? 0.1 * log(scale) + 1.0 : 1.0;
    else
        return mf_fail(c->st, MF_ERR_UNSUPPORTED, c->dir, -1, "rope scaling type %s is not supported", type);
    char key[128];
    snprintf(key, sizeof(key), "%s.rope.scaling.attn_factor", c->arch->name);
    mf_kv_f32(c->kv, key, (float)attn);
    return factor_tensors(c, rs, n_embd / n_head);
}

/* MiniCPMModel / MiniCPM3Model.generate_extra_tensors: with a rope_scaling,
 * its long_factor and short_factor lists (rope_dims / 2 values each) as
 * rope_factors_long / rope_factors_short; no attention factor. */
static int rope_factor_pair(conv *c)
{
    json_t *rs = h2g_hparam(c, "rope_scaling");
    if (!rs || json_is_null(rs))
        return 0;
    int64_t dims, hidden, heads;
    if (c->arch->flags & AF_ROPE_FACTORS_QK) {
        if (h2g_need_hp_int(c, "qk_rope_head_dim", &dims))
            return -1;
    } else {
        if (h2g_need_hp_int(c, "hidden_size", &hidden) || h2g_need_hp_int(c, "num_attention_heads", &heads))
            return -1;
        dims = hidden / heads;
    }
    return factor_tensors(c, rs, dims);
}

int h2g_plan_tensors(conv *c)
{
    c->max_alibi_bias = 8.0; /* JaisModel.__init__ */
    if ((c->arch->flags & (AF_ROPE_FACTORS | AF_ROPE_FACTORS_QK)) && rope_factor_pair(c))
        return -1;
    if ((c->arch->flags & AF_LLAMA3_ROPE) && llama3_rope_freqs(c))
        return -1;
    if ((c->arch->flags & AF_LONGROPE) && longrope_tensors(c))
        return -1;
    if (!c->stored && (c->arch->flags & AF_MXFP4) && each_source(c, plan_packed))
        return -1;
    if (each_source(c, plan_tensor))
        return -1;
    if (c->arch->flags & AF_ALIBI_BIAS) { /* JaisModel.prepare_tensors, after the tensors */
        char key[96];
        snprintf(key, sizeof(key), "%s.attention.max_alibi_bias", c->arch->name);
        mf_kv_f32(c->kv, key, (float)c->max_alibi_bias);
    }
    for (size_t i = 0; i < c->n_pend; i++)
        for (size_t k = 0; k < c->pend[i].n; k++)
            return mf_fail(c->st, MF_ERR_FORMAT, c->dir, -1, "unprocessed tensor \"%s\": its block's parts "
                           "to stack are incomplete", c->pend[i].names[k]);
    return h2g_check_index(c);
}

