/* gguf2hf.c - mf_convert_gguf_to_hf: a GGUF back into a Hugging Face
 * model directory that from_pretrained loads: config.json rebuilt from the
 * hyper-parameter keys (the forward table of arch_table.c read
 * backwards), the tokenizer files (gguf2hf_vocab.c), and
 * model.safetensors with transformers' tensor names (gguf2hf_arch.c),
 * every operation of the forward converter undone. Tensors stream one at a
 * time; the directory appears whole or not at all (written beside the
 * target, then renamed). */
#include "ops/gguf_rows.h"
#include "ops/prequant_hf.h"
#include "ops/hfconv/arch.h"
#include "ops/hfconv/gguf2hf.h"
#include "formats/formats.h"
#include "ops/hfconv/gguf2hf_int.h"
#include "ops/hfconv/arch_file.h"
#include "ops/tensor_f32.h"
#include "core/json_build.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------ lookups */

const mf_value *hfc_key(const hfc *c, const char *suffix)
{
    char key[256];
    snprintf(key, sizeof(key), "%s.%s", c->arch, suffix);
    return mf_meta_get(c->m, key);
}

bool hfc_int(const mf_value *v, int64_t *out)
{
    if (!v)
        return false;
    switch (v->type) {
    case MF_V_U8: case MF_V_U16: case MF_V_U32: case MF_V_U64: *out = (int64_t)v->as.u; return true;
    case MF_V_I8: case MF_V_I16: case MF_V_I32: case MF_V_I64: *out = v->as.i; return true;
    case MF_V_BOOL: *out = v->as.b; return true;
    default: return false;
    }
}

static int64_t key_int(const hfc *c, const char *suffix, int64_t dflt)
{
    int64_t x;
    return hfc_int(hfc_key(c, suffix), &x) ? x : dflt;
}

/* attention.head_count_kv: a per-layer list (0 for recurrent layers:
 * Granite 4.0-H, LFM2) gives the attention layers' count, its largest */
static int64_t kv_heads(const hfc *c, int64_t dflt)
{
    const mf_value *v = hfc_key(c, "attention.head_count_kv");
    int64_t x = dflt;
    if (v && v->type == MF_V_ARR) {
        x = 0;
        for (size_t i = 0; i < v->as.arr.n; i++) {
            int64_t e;
            if (hfc_int(&v->as.arr.items[i], &e) && e > x)
                x = e;
        }
        return x ? x : dflt;
    }
    return hfc_int(v, &x) ? x : dflt;
}

/* Element block of a per-layer key (DeciLM's head counts), when the key is
 * a list and the element positive; else dflt. */
static int64_t layer_int(const hfc *c, const char *suffix, int64_t block, int64_t dflt)
{
    const mf_value *v = hfc_key(c, suffix);
    int64_t x;
    if (v && v->type == MF_V_ARR && block >= 0 && (uint64_t)block < v->as.arr.n &&
        hfc_int(&v->as.arr.items[block], &x) && x > 0)
        return x;
    return dflt;
}

/* The block number of a "blk.N." tensor name, or -1. */
static int64_t name_block(const char *name)
{
    const char *b = strstr(name, "blk.");
    char *end;
    long long x = b ? strtoll(b + 4, &end, 10) : -1;
    return b && end > b + 4 && *end == '.' ? x : -1;
}

static const hf_rev_arch *find_rev(const mf_model *m, const char *arch)
{
    for (size_t i = 0; i < hf_rev_n_variants; i++)
        if (!strcmp(hf_rev_variants[i].rev.arch, arch) && hf_rev_variants[i].when(m))
            return &hf_rev_variants[i].rev;
    for (size_t i = 0; i < hf_rev_n_archs; i++)
        if (!strcmp(hf_rev_archs[i].arch, arch))
            return &hf_rev_archs[i];
    return NULL;
}

/* A Llama GGUF whose add_space_prefix comes before a special id or chat
 * template was written by InternLM3Model.set_vocab (LlamaModel writes it
 * after them): only that class converts back to the same bytes. */
static bool space_prefix_before_ids(const hfc *c)
{
    bool seen = false;
    for (size_t i = 0; i < c->m->n_meta; i++) {
        const char *k = c->m->meta[i].key;
        if (!strcmp(k, "tokenizer.ggml.add_space_prefix"))
            seen = true;
        else if (seen && (strstr(k, "_token_id") || !strncmp(k, "tokenizer.chat_template", 23)))
            return true;
    }
    return false;
}

/* A row for a block_configs config (AF_BLOCK_CONFIGS) fits a GGUF whose
 * attention.head_count is per layer; the others fit any. */
static bool fwd_fits(const conv_arch *a, const mf_model *m)
{
    if (!(a->flags & AF_BLOCK_CONFIGS))
        return true;
    char key[160];
    snprintf(key, sizeof(key), "%s.attention.head_count", a->name);
    const mf_value *v = mf_meta_get(m, key);
    return v && v->type == MF_V_ARR;
}

/* The forward row of the class (several share a GGUF architecture), else
 * the architecture's first. */
static const conv_arch *find_fwd(const mf_model *m, const char *arch, const char *hf_class)
{
    for (size_t i = 0; hf_class && i < conv_n_archs; i++)
        for (const char *const *k = conv_archs[i].classes; *k; k++)
            if (!strcmp(conv_archs[i].name, arch) && !strcmp(*k, hf_class) && fwd_fits(&conv_archs[i], m))
                return &conv_archs[i];
    for (size_t i = 0; i < conv_n_archs; i++)
        if (!strcmp(conv_archs[i].name, arch) && fwd_fits(&conv_archs[i], m))
            return &conv_archs[i];
    return NULL;
}

/* ------------------------------------------------------------ tensor plan */

/* "blk.12.attn_q.weight" -> block 12, base "blk.{bid}.attn_q", suffix
 * ".weight" (suffix "" for Mamba's A and D). */
static void split_name(const char *name, char *base, size_t cap, char *suffix, int64_t *block)
{
    *block = -1;
    const char *tail = name;
    base[0] = 0;
    /* "blk.N." first, or after a stack's prefix (T5's "enc.blk.N.", "dec.blk.N.") */
    const char *blk = !strncmp(name, "blk.", 4) ? name : strstr(name, ".blk.") ? strstr(name, ".blk.") + 1 : NULL;
    if (blk && (blk == name || !strchr(name, '.') || strchr(name, '.') + 1 == blk)) {
        char *end;
        long long b = strtoll(blk + 4, &end, 10);
        if (end > blk + 4 && *end == '.') {
            *block = b;
            snprintf(base, cap, "%.*sblk.{bid}", (int)(blk - name), name);
            tail = end;
        }
    }
    size_t bl = strlen(base);
    snprintf(base + bl, cap - bl, "%s", tail);
    suffix[0] = 0;
    static const char *const sfx[] = {".weight", ".bias"};
    for (int i = 0; i < 2; i++) {
        size_t n = strlen(base), k = strlen(sfx[i]);
        if (n > k && !strcmp(base + n - k, sfx[i])) {
            base[n - k] = 0;
            strcpy(suffix, sfx[i]);
        }
    }
}

/* pattern with {bid} and {x} filled in, then the suffix; a pattern ending
 * in '$' is the whole HF name (DeepSeek-V3's e_score_correction_bias is
 * exp_probs_b.bias in GGUF: no ".bias" added back). */
static char *fill_name(mf_arena *a, const char *pat, int64_t block, int64_t x, const char *suffix)
{
    char buf[512];
    size_t n = 0;
    for (const char *p = pat; *p && n + 24 < sizeof(buf);) {
        if (!strncmp(p, "{bid}", 5)) {
            n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%lld", (long long)block);
            p += 5;
        } else if (!strncmp(p, "{x:", 3)) { /* "{x:a,b,c}": the x-th name of the list */
            const char *e = strchr(p, '}'), *q = p + 3;
            for (int64_t i = 0; e && i < x && q < e; i++) {
                const char *comma = memchr(q, ',', (size_t)(e - q));
                q = comma ? comma + 1 : e;
            }
            const char *comma = e ? memchr(q, ',', (size_t)(e - q)) : NULL;
            size_t len = e ? (size_t)((comma ? comma : e) - q) : 0;
            if (len > sizeof(buf) - n - 24)
                len = sizeof(buf) - n - 24;
            memcpy(buf + n, q, len);
            n += len;
            p = e ? e + 1 : p + strlen(p);
        } else if (!strncmp(p, "{x}", 3)) {
            n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%lld", (long long)x);
            p += 3;
        } else {
            buf[n++] = *p++;
        }
    }
    bool whole = n && buf[n - 1] == '$';
    buf[whole ? n - 1 : n] = 0;
    return mf_arena_printf(a, "%s%s", buf, whole ? "" : suffix);
}

static const hf_rev_name *rev_row(const hfc *c, const char *base)
{
    for (const hf_rev_name *r = c->rev->names; r->gguf; r++)
        if (!strcmp(r->gguf, base))
            return r;
    return NULL;
}

static bool is_plain_float(mf_dtype d)
{
    return d == MF_F32 || d == MF_F16 || d == MF_BF16;
}

/* Each tensor keeps its float type (the round trip is then exact); block
 * types come back as c->quant_dtype; --dtype sets them all. */
static mf_dtype out_dtype(const hfc *c, const mf_tensor *t)
{
    if (c->opts.dtype != MF_DTYPE_INVALID)
        return c->opts.dtype;
    return is_plain_float(t->dtype) ? t->dtype : c->quant_dtype;
}

/* R_SWAP_*_GROUPS: A and B of the arch file's forward rule for this HF name. */
static bool swap_groups_of(const hfc *c, const hfc_item *it, int64_t *a, int64_t *b)
{
    conv_op want = it->op == R_SWAP_ROW_GROUPS ? OP_SWAP_ROW_GROUPS : OP_SWAP_COL_GROUPS;
    for (const conv_rule *r = c->rules; r->pat; r++) {
        long long x, y;
        if (r->op == want && r->m == M_PATTERN && conv_pattern_match(r->pat, it->out.name) &&
            sscanf(r->with, "%lld,%lld", &x, &y) == 2 && x > 0 && y > 0) {
            *a = x;
            *b = y;
            return true;
        }
    }
    return false;
}

/* RoBERTa: the rows the converter cut before the positions (pad id + 1). */
static int64_t pad_rows(const hfc *c)
{
    int64_t pad;
    return hfc_int(mf_meta_get(c->m, "tokenizer.ggml.padding_token_id"), &pad) && pad >= 0 && pad < (1 << 20)
               ? pad + 1 : 0;
}

static int add_item(hfc *c, const mf_tensor *t, const hf_rev_name *r, int64_t x, const char *name)
{
    if (mf_vec_grow((void **)&c->items.v, &c->items.cap, c->items.n + 1, sizeof(hfc_item)))
        return mf_oom(c->st, c->path);
    hfc_item *it = &c->items.v[c->items.n++];
    *it = (hfc_item){.src = t, .op = r->op, .x = x};
    /* the forward +1 is on "norm.weight" only: a norm's bias (Nemotron) came as is */
    size_t nl = strlen(t->name);
    if (r->op == R_SUB_ONE && !(nl >= 7 && !strcmp(t->name + nl - 7, ".weight")))
        it->op = R_PLAIN;
    it->out.name = name;
    it->out.dtype = r->op == R_UNTERNARY ? MF_F32 : out_dtype(c, t);
    if (r->op == R_UNSTACK) {
        it->out.ndim = t->ndim - 1;
        memcpy(it->out.shape, t->shape + 1, sizeof(int64_t) * (size_t)(t->ndim - 1));
    } else if (r->op == R_PAD_ROWS && t->ndim == 2) {
        it->out.ndim = 2;
        it->out.shape[0] = t->shape[0] + pad_rows(c);
        it->out.shape[1] = t->shape[1];
    } else if (r->op == R_UNVIEW_EXPERTS || r->op == R_UNVIEW_EXPERTS_T) { /* [E * ff, embd] */
        bool tr = r->op == R_UNVIEW_EXPERTS_T;
        it->out.ndim = 2;
        it->out.shape[0] = t->shape[0] * (tr ? t->shape[2] : t->shape[1]);
        it->out.shape[1] = tr ? t->shape[1] : t->shape[2];
    } else {
        it->out.ndim = t->ndim;
        memcpy(it->out.shape, t->shape, sizeof(int64_t) * (size_t)t->ndim);
        if (r->op == R_LEAD11) {
            it->out.ndim = 3;
            it->out.shape[0] = it->out.shape[1] = 1;
            it->out.shape[2] = (int64_t)mf_tensor_nelems(t);
        }
        if (r->op == R_FLAT || r->op == R_LOG_NEG_FLAT) {
            it->out.ndim = 1;
            it->out.shape[0] = (int64_t)mf_tensor_nelems(t);
        }
        if (r->op == R_UNSQUEEZE1 && t->ndim >= 2 && t->ndim < MF_MAX_DIMS) { /* not a bias */
            memmove(it->out.shape + 2, t->shape + 1, sizeof(int64_t) * (size_t)(t->ndim - 1));
            it->out.shape[1] = 1;
            it->out.ndim = t->ndim + 1;
        }
        if ((r->op == R_TRANSPOSE || r->op == R_TRANSPOSE_RKVWG) && t->ndim == 2) {
            it->out.shape[0] = t->shape[1];
            it->out.shape[1] = t->shape[0];
        }
        if ((r->op == R_EXPERTS_T || r->op == R_EXPERTS_T_RKVWG || r->op == R_GATE_UP_T) && t->ndim == 3) {
            it->out.shape[1] = t->shape[2];
            it->out.shape[2] = t->shape[1] * (r->op == R_GATE_UP_T ? 2 : 1);
        }
    }
    return 0;
}

/* InternLM2's wqkv: the block's attn_k and attn_v join attn_q; the fused
 * tensor has their rows together. */
static int fuse_parts(hfc *c, hfc_item *it, int64_t block, const char *suffix)
{
    char name[96];
    snprintf(name, sizeof(name), "blk.%lld.attn_k%s", (long long)block, suffix);
    it->k = mf_tensor_find(c->m, name);
    snprintf(name, sizeof(name), "blk.%lld.attn_v%s", (long long)block, suffix);
    it->v = mf_tensor_find(c->m, name);
    const mf_tensor *q = it->src;
    if (!it->k || !it->v || it->k->ndim != q->ndim || it->v->ndim != q->ndim ||
        (q->ndim == 2 && (it->k->shape[1] != q->shape[1] || it->v->shape[1] != q->shape[1])))
        return mf_fail(c->st, MF_ERR_FORMAT, c->path, (int64_t)q->offset,
                       "block %lld: attn_q has no attn_k and attn_v of its width to fuse with",
                       (long long)block);
    it->out.shape[0] = q->shape[0] + it->k->shape[0] + it->v->shape[0];
    return 0;
}

/* Jina-BERT's gated_layers: the block's ffn_up rows after ffn_gate's. */
static int join_up(hfc *c, hfc_item *it, int64_t block, const char *suffix)
{
    char name[96];
    snprintf(name, sizeof(name), "blk.%lld.ffn_up%s", (long long)block, suffix);
    it->k = mf_tensor_find(c->m, name);
    const mf_tensor *g = it->src;
    if (!it->k || g->ndim != 2 || it->k->ndim != 2 || it->k->shape[1] != g->shape[1])
        return mf_fail(c->st, MF_ERR_FORMAT, c->path, (int64_t)g->offset,
                       "block %lld: ffn_gate has no ffn_up of its width to join", (long long)block);
    it->out.shape[0] = g->shape[0] + it->k->shape[0];
    return 0;
}

/* R_UP_GATED: of "a|b", a when the tensor's block has an ffn_gate, else b. */
static bool up_name(const hfc *c, const mf_tensor *t, const char *alts, char *out, size_t cap)
{
    const char *bar = strchr(alts, '|'), *up = strstr(t->name, "ffn_up");
    if (!bar || !up)
        return false;
    char gate[256];
    snprintf(gate, sizeof(gate), "%.*sffn_gate%s", (int)(up - t->name), t->name, up + 6);
    if (mf_tensor_find(c->m, gate))
        snprintf(out, cap, "%.*s", (int)(bar - alts), alts);
    else
        snprintf(out, cap, "%s", bar + 1);
    return true;
}

/* R_OUT_LINEAR: of "a|b", a when the tensor's block has an attn_q, else b. */
static bool out_name(const hfc *c, const mf_tensor *t, const char *alts, char *out, size_t cap)
{
    const char *bar = strchr(alts, '|'), *o = strstr(t->name, "attn_output");
    if (!bar || !o)
        return false;
    char q[256];
    snprintf(q, sizeof(q), "%.*sattn_q.weight", (int)(o - t->name), t->name);
    if (mf_tensor_find(c->m, q))
        snprintf(out, cap, "%.*s", (int)(bar - alts), alts);
    else
        snprintf(out, cap, "%s", bar + 1);
    return true;
}

/* R_INTERLEAVE's partner: the tensor of the next R_FUSED_PART row, same
 * block and suffix. */
static const mf_tensor *partner_of(const hfc *c, const hf_rev_name *r, int64_t block, const char *suffix)
{
    const hf_rev_name *p = r + 1;
    if (!p->gguf || p->op != R_FUSED_PART)
        return NULL;
    char name[256];
    const char *ph = strstr(p->gguf, "{bid}");
    if (ph)
        snprintf(name, sizeof(name), "%.*s%lld%s%s", (int)(ph - p->gguf), p->gguf, (long long)block, ph + 5, suffix);
    else
        snprintf(name, sizeof(name), "%s%s", p->gguf, suffix);
    return mf_tensor_find(c->m, name);
}

/* gpt-oss's experts (R_MXFP4_UNPACK, R_INTERLEAVE): an MXFP4 .weight as
 * _blocks and _scales, a .bias as _bias; R_INTERLEAVE takes every other
 * row (or last-dimension element) from its partner. */
static int plan_experts(hfc *c, const mf_tensor *t, const hf_rev_name *r, int64_t block, const char *suffix)
{
    int64_t k = r->op == R_INTERLEAVE ? 2 : 1;
    const mf_tensor *p = NULL;
    if (k == 2 && (!(p = partner_of(c, r, block, suffix)) || p->dtype != t->dtype || p->ndim != t->ndim ||
                   memcmp(p->shape, t->shape, sizeof(int64_t) * (size_t)t->ndim)))
        return mf_fail(c->st, MF_ERR_FORMAT, c->path, (int64_t)t->offset,
                       "tensor \"%s\": no partner of its type and shape to interleave with", t->name);
    char *base = fill_name(c->a, r->hf, block, -1, "");
    if (!base)
        return mf_oom(c->st, c->path);
    bool weight = !strcmp(suffix, ".weight");
    if (!weight) { /* a bias [E, n]: k * n elements per expert */
        char *name = mf_arena_printf(c->a, "%s_bias", base);
        if (!name || add_item(c, t, r, -1, name))
            return c->st->code ? -1 : mf_oom(c->st, c->path);
        hfc_item *it = &c->items.v[c->items.n - 1];
        it->k = p;
        if (t->ndim >= 1)
            it->out.shape[t->ndim - 1] *= k;
        if (k == 1)
            it->op = R_PLAIN;
        return 0;
    }
    if (t->dtype != MF_MXFP4 || t->ndim != 3 || t->shape[2] % 32)
        return mf_fail(c->st, MF_ERR_UNSUPPORTED, c->path, (int64_t)t->offset,
                       "tensor \"%s\": gpt-oss experts convert back only as MXFP4 (%s here)", t->name,
                       mf_dtype_name(t->dtype));
    for (int64_t x = 0; x < 2; x++) {
        char *name = mf_arena_printf(c->a, "%s_%s", base, x ? "scales" : "blocks");
        if (!name || add_item(c, t, r, x, name))
            return c->st->code ? -1 : mf_oom(c->st, c->path);
        hfc_item *it = &c->items.v[c->items.n - 1];
        it->k = p;
        it->out.dtype = MF_U8;
        it->out.ndim = x ? 3 : 4;
        int64_t sh[4] = {t->shape[0], t->shape[1] * k, t->shape[2] / 32, 16};
        memcpy(it->out.shape, sh, sizeof(sh));
    }
    return 0;
}

/* R_JOIN_KV_B: attn_v_b of the block, of the same heads and rank; the
 * output is kv_b_proj [kv * (nope + v)][r] */
static int kv_b_partner(hfc *c, hfc_item *it, const hf_rev_name *r, int64_t block, const char *suffix)
{
    const mf_tensor *k = it->src, *v = partner_of(c, r, block, suffix);
    bool ok = v && k->ndim == 3 && v->ndim == 3 && k->shape[0] == v->shape[0] && k->shape[1] == v->shape[2];
    if (!ok)
        return mf_fail(c->st, MF_ERR_FORMAT, c->path, (int64_t)k->offset,
                       "tensor \"%s\": no attn_v_b [heads, v, rank] of its heads and rank to join", k->name);
    it->k = v;
    it->out.ndim = 2;
    it->out.shape[0] = k->shape[0] * (k->shape[2] + v->shape[1]);
    it->out.shape[1] = k->shape[1];
    return 0;
}

/* R_QKVZ / R_FUSE_ROWS: the partner's rows join (along dimension 0 for
 * in_proj_qkvz, -2 per expert for gate_up_proj). */
static int fuse_partner(hfc *c, hfc_item *it, const hf_rev_name *r, int64_t block, const char *suffix)
{
    const mf_tensor *t = it->src, *p = partner_of(c, r, block, suffix);
    int nd = t->ndim;
    bool ok = p && p->ndim == nd && nd >= 2 && p->shape[nd - 1] == t->shape[nd - 1] &&
              (r->op == R_QKVZ || (p->shape[nd - 2] == t->shape[nd - 2] && !memcmp(p->shape, t->shape, sizeof(int64_t) * (size_t)nd)));
    if (!ok)
        return mf_fail(c->st, MF_ERR_FORMAT, c->path, (int64_t)t->offset,
                       "tensor \"%s\": no partner of its width to fuse with", t->name);
    it->k = p;
    it->out.shape[nd - 2] += p->shape[nd - 2];
    return 0;
}

/* The V-head order to undo for this GGUF name (hf_rev_vheads_rows). */
static const char *vheads_of(const hfc *c, const char *gguf)
{
    for (size_t i = 0; i < hf_rev_n_vheads; i++)
        if (!strcmp(hf_rev_vheads_rows[i].arch, c->arch) && !strcmp(hf_rev_vheads_rows[i].gguf, gguf))
            return hf_rev_vheads_rows[i].where;
    return NULL;
}

/* Llama 4's gate_up_proj: the block's ffn_up_exps joins ffn_gate_exps. */
static int gate_up_part(hfc *c, hfc_item *it, int64_t block, const char *suffix)
{
    char name[96];
    snprintf(name, sizeof(name), "blk.%lld.ffn_up_exps%s", (long long)block, suffix);
    it->k = mf_tensor_find(c->m, name);
    const mf_tensor *g = it->src;
    if (g->ndim != 3 || !it->k || it->k->ndim != 3 || memcmp(it->k->shape, g->shape, 3 * sizeof(int64_t)))
        return mf_fail(c->st, MF_ERR_FORMAT, c->path, (int64_t)g->offset,
                       "block %lld: ffn_gate_exps has no ffn_up_exps of its shape to join", (long long)block);
    return 0;
}

/* "blk.%b.attn_q" of a conv_split with the block filled in, then suffix. */
static void split_part_name(const char *fmt, int64_t block, const char *suffix, char *out, size_t cap)
{
    const char *b = strstr(fmt, "%b");
    if (b)
        snprintf(out, cap, "%.*s%lld%s%s", (int)(b - fmt), fmt, (long long)block, b + 2, suffix);
    else
        snprintf(out, cap, "%s%s", fmt, suffix);
}

/* R_CONCAT: the forward rule that split this tensor off, and the other
 * parts of its block, of the same width (and leading dimension). */
static int concat_parts(hfc *c, hfc_item *it, int64_t block, const char *suffix)
{
    const mf_tensor *t = it->src;
    char first[128];
    for (const conv_rule *r = c->rules; r->pat && !it->split; r++) {
        if (r->op != OP_SPLIT)
            continue;
        split_part_name(r->split->names[0], block, suffix, first, sizeof(first));
        if (!strcmp(first, t->name))
            it->split = r->split;
    }
    if (!it->split || t->ndim < 2 || t->ndim > 3)
        return mf_fail(c->st, MF_ERR_FORMAT, c->path, (int64_t)t->offset,
                       "tensor \"%s\": no split of the %s table makes it (or not 2-d/3-d)", t->name, c->arch);
    int64_t rows = 0;
    for (size_t p = 0; it->split->names[p]; p++) {
        char name[128];
        split_part_name(it->split->names[p], block, suffix, name, sizeof(name));
        const mf_tensor *q = p ? mf_tensor_find(c->m, name) : t;
        bool fits = q && p < sizeof(it->parts) / sizeof(it->parts[0]) && q->ndim == t->ndim &&
                    q->shape[t->ndim - 1] == t->shape[t->ndim - 1] && (t->ndim == 2 || q->shape[0] == t->shape[0]);
        if (!fits)
            return mf_fail(c->st, MF_ERR_FORMAT, c->path, (int64_t)t->offset,
                           "tensor \"%s\": its part \"%s\" is missing or of another width", t->name, name);
        it->parts[it->n_parts++] = q;
        rows += q->shape[q->ndim - 2];
    }
    it->out.shape[t->ndim - 2] = rows;
    return 0;
}

/* R_TIED: the bytes of token_embd.weight again (CodeShell's copied head) */
static bool same_as_embd(const hfc *c, const mf_tensor *t)
{
    const mf_tensor *e = mf_tensor_find(c->m, "token_embd.weight");
    return e && e != t && e->dtype == t->dtype && e->ndim == t->ndim && e->nbytes == t->nbytes && e->data &&
           t->data && !memcmp(e->shape, t->shape, sizeof(int64_t) * (size_t)t->ndim) &&
           !memcmp(e->data, t->data, (size_t)t->nbytes);
}

static int cmp_item(const void *a, const void *b)
{
    return strcmp(((const hfc_item *)a)->out.name, ((const hfc_item *)b)->out.name);
}

bool hfc_output_is_copy(const hfc *c)
{
    const mf_tensor *o = mf_tensor_find(c->m, "output.weight"), *e = mf_tensor_find(c->m, "token_embd.weight");
    if (!o || !e || o->dtype != e->dtype || o->ndim != e->ndim || o->nbytes != e->nbytes || !o->data || !e->data ||
        memcmp(o->shape, e->shape, sizeof(int64_t) * (size_t)o->ndim))
        return false;
    mf_status st;
    mf_status_init(&st);
    bool same = mf_tensor_need(o, &st) == 0 && mf_tensor_need(e, &st) == 0 && !memcmp(o->data, e->data, o->nbytes);
    mf_status_clear(&st);
    return same;
}

static int plan_tensors(hfc *c)
{
    for (size_t i = 0; i < c->m->n_tensors; i++) {
        const mf_tensor *t = &c->m->tensors[i];
        char base[256], suffix[16];
        int64_t block;
        split_name(t->name, base, sizeof(base), suffix, &block);
        const hf_rev_name *r = rev_row(c, base);
        if (!r)
            return mf_fail(c->st, MF_ERR_UNSUPPORTED, c->path, (int64_t)t->offset,
                           "tensor \"%s\" has no Hugging Face name for architecture %s", t->name,
                           c->arch);
        if (r->op == R_SKIP || r->op == R_FUSED_PART || (r->op == R_TIED && same_as_embd(c, t)))
            continue;
        if (!mf_dtype_to_f32_supported(t->dtype))
            return mf_fail(c->st, MF_ERR_UNSUPPORTED, c->path, (int64_t)t->offset,
                           "tensor \"%s\": %s cannot be decoded", t->name, mf_dtype_name(t->dtype));
        if (r->op == R_UNSTACK) {
            if (t->ndim < 2)
                return mf_fail(c->st, MF_ERR_FORMAT, c->path, (int64_t)t->offset,
                               "tensor \"%s\" should be stacked (2 or more dimensions)", t->name);
            for (int64_t x = 0; x < t->shape[0]; x++) {
                char *name = fill_name(c->a, r->hf, block, x, suffix);
                if (!name || add_item(c, t, r, x, name))
                    return mf_oom(c->st, c->path);
            }
            continue;
        }
        if (r->op == R_MXFP4_UNPACK || r->op == R_INTERLEAVE) {
            if (plan_experts(c, t, r, block, suffix))
                return -1;
            continue;
        }
        bool unview = r->op == R_UNVIEW_EXPERTS || r->op == R_UNVIEW_EXPERTS_T;
        if (unview && (t->ndim != 3 || strcmp(suffix, ".weight")))
            return mf_fail(c->st, MF_ERR_FORMAT, c->path, (int64_t)t->offset,
                           "tensor \"%s\" should be a 3-d expert weight", t->name);
        char pick[256];
        const char *hf = r->hf;
        if (r->op == R_UP_GATED && up_name(c, t, r->hf, pick, sizeof(pick)))
            hf = pick;
        if (r->op == R_OUT_LINEAR && out_name(c, t, r->hf, pick, sizeof(pick)))
            hf = pick;
        char *name = fill_name(c->a, hf, block, -1, unview ? "" : suffix); /* DBRX: no ".weight" */
        if (!name || add_item(c, t, r, -1, name))
            return c->st->code ? -1 : mf_oom(c->st, c->path);
        if (r->op == R_DOUBLE_EVERY) { /* the exponent of the forward division */
            int64_t every = key_int(c, "rescale_every_n_layers", 0);
            c->items.v[c->items.n - 1].x = every > 0 && block >= 0 ? block / every : 0;
            if (c->items.v[c->items.n - 1].x > 120)
                return mf_fail(c->st, MF_ERR_FORMAT, c->path, (int64_t)t->offset, "tensor \"%s\": scaled by 2 ** %lld",
                               t->name, (long long)c->items.v[c->items.n - 1].x);
        }
        if (r->op == R_FUSE_GROUPED && fuse_parts(c, &c->items.v[c->items.n - 1], block, suffix))
            return -1;
        if (r->op == R_JOIN_UP && join_up(c, &c->items.v[c->items.n - 1], block, suffix))
            return -1;
        if (r->op == R_GATE_UP_T && gate_up_part(c, &c->items.v[c->items.n - 1], block, suffix))
            return -1;
        if ((r->op == R_EXPERTS_T || r->op == R_EXPERTS_T_RKVWG || r->op == R_GATE_UP_T) && t->ndim != 3)
            return mf_fail(c->st, MF_ERR_FORMAT, c->path, (int64_t)t->offset,
                           "tensor \"%s\" should be stacked experts (3 dimensions)", t->name);
        if (r->op == R_CONCAT && concat_parts(c, &c->items.v[c->items.n - 1], block, suffix))
            return -1;
        if ((r->op == R_QKVZ || r->op == R_FUSE_ROWS) && fuse_partner(c, &c->items.v[c->items.n - 1], r, block, suffix))
            return -1;
        if (r->op == R_JOIN_KV_B && kv_b_partner(c, &c->items.v[c->items.n - 1], r, block, suffix))
            return -1;
        c->items.v[c->items.n - 1].vheads = vheads_of(c, r->gguf);
    }
    /* transformers' save_pretrained sorts nothing, but safetensors' own
     * writer (and the forward converter's reading) go by name */
    qsort(c->items.v, c->items.n, sizeof(hfc_item), cmp_item);
    return 0;
}

/* ------------------------------------------------------------ tensor data */

/* LlamaModel.permute viewed rows as [h][2][half]: the GGUF holds
 * P[h][j][k] = W[h][k][j]; W comes back by the inverse index map. */
static void unpermute(const float *p, float *w, int64_t rows, int64_t cols, int64_t heads)
{
    int64_t half = rows / heads / 2;
    for (int64_t h = 0; h < heads; h++)
        for (int64_t k = 0; k < 2; k++)
            for (int64_t j = 0; j < half; j++)
                memcpy(w + ((h * 2 + k) * half + j) * cols, p + ((h * half + j) * 2 + k) * cols,
                       sizeof(float) * (size_t)cols);
}

/* GPT-NeoX: P[t][h][d] rows; W[h][t][d]. */
static void unorder_per_head(const float *p, float *w, int64_t rows, int64_t cols, int64_t heads)
{
    int64_t hd = rows / 3 / heads;
    for (int64_t t = 0; t < 3; t++)
        for (int64_t h = 0; h < heads; h++)
            memcpy(w + ((h * 3 + t) * hd) * cols, p + ((t * heads + h) * hd) * cols,
                   sizeof(float) * (size_t)(hd * cols));
}

/* Falcon: P = q (n_head rows of hd), k (n_kv), v (n_kv); W[g][q_per_kv+2][hd]. */
static void unorder_kv_groups(const float *p, float *w, int64_t rows, int64_t cols, int64_t heads,
                              int64_t kv)
{
    int64_t qpk = heads / kv, hd = rows / (heads + 2 * kv);
    size_t blk = sizeof(float) * (size_t)(hd * cols);
    for (int64_t g = 0; g < kv; g++) {
        for (int64_t i = 0; i < qpk; i++)
            memcpy(w + ((g * (qpk + 2) + i) * hd) * cols, p + ((g * qpk + i) * hd) * cols, blk);
        memcpy(w + ((g * (qpk + 2) + qpk) * hd) * cols, p + ((heads + g) * hd) * cols, blk);
        memcpy(w + ((g * (qpk + 2) + qpk + 1) * hd) * cols, p + ((heads + kv + g) * hd) * cols, blk);
    }
}

static int64_t rows_of(const mf_tensor *t)
{
    return t->ndim ? t->shape[0] : 1;
}

/* The source tensor's values, decoded once for all the experts cut from it. */
static int source_f32(hfc *c, const mf_tensor *t, const float **out)
{
    if (c->cached != t) {
        free(c->cache);
        c->cache = NULL;
        c->cached = NULL;
        float *v;
        if (mf_tensor_read_f32(c->m, t, &v, c->st))
            return -1;
        c->cache = v;
        c->cached = t;
    }
    *out = c->cache;
    return 0;
}

/* InternLM2: W[g][i] = q rows (g*qpk + i) for i < qpk, then k row g, v row g
 * (rows of hd), q and k unpermuted first. */
static int fused_f32(hfc *c, const hfc_item *it, float **out, uint64_t *n_out)
{
    int64_t heads = key_int(c, "attention.head_count", 0);
    int64_t kv = kv_heads(c, heads);
    const mf_tensor *q = it->src;
    int64_t cols = q->ndim == 2 ? q->shape[1] : 1, qr = q->shape[0];
    if (heads <= 0 || kv <= 0 || heads % kv || qr % heads || it->k->shape[0] != qr / heads * kv ||
        it->v->shape[0] != it->k->shape[0])
        return mf_fail(c->st, MF_ERR_FORMAT, c->path, (int64_t)q->offset,
                       "tensor \"%s\": rows do not fit %lld heads and %lld KV heads", q->name,
                       (long long)heads, (long long)kv);
    int64_t hd = qr / heads, qpk = heads / kv;
    float *fq = NULL, *fk = NULL, *fv = NULL;
    uint64_t n = (uint64_t)(qr + 2 * kv * hd) * (uint64_t)cols;
    float *w = malloc(sizeof(float) * (size_t)n), *uq = malloc(sizeof(float) * (size_t)(qr * cols)),
          *uk = malloc(sizeof(float) * (size_t)(kv * hd * cols));
    int rc = w && uq && uk ? 0 : mf_oom(c->st, c->path);
    if (rc == 0)
        rc = mf_tensor_read_f32(c->m, q, &fq, c->st);
    if (rc == 0)
        rc = mf_tensor_read_f32(c->m, it->k, &fk, c->st);
    if (rc == 0)
        rc = mf_tensor_read_f32(c->m, it->v, &fv, c->st);
    if (rc == 0) {
        unpermute(fq, uq, qr, cols, heads);
        unpermute(fk, uk, kv * hd, cols, kv);
        size_t row = sizeof(float) * (size_t)(hd * cols);
        for (int64_t g = 0; g < kv; g++) {
            float *dst = w + (g * (qpk + 2) * hd) * cols;
            memcpy(dst, uq + (g * qpk * hd) * cols, row * (size_t)qpk);
            memcpy(dst + (qpk * hd) * cols, uk + (g * hd) * cols, row);
            memcpy(dst + ((qpk + 1) * hd) * cols, fv + (g * hd) * cols, row);
        }
    }
    free(fq);
    free(fk);
    free(fv);
    free(uq);
    free(uk);
    if (rc) {
        free(w);
        return -1;
    }
    *out = w;
    *n_out = n;
    return 0;
}

/* The values of an item and its partner (it->k) as float32, and room for
 * n_w results; -1 (st set) on failure, all three then freed. */
static int read_pair(hfc *c, const hfc_item *it, uint64_t n_w, float **a, float **b, float **w)
{
    *a = *b = NULL;
    *w = malloc(sizeof(float) * (size_t)(n_w ? n_w : 1));
    int rc = *w ? 0 : mf_oom(c->st, c->path);
    if (rc == 0)
        rc = mf_tensor_read_f32(c->m, it->src, a, c->st);
    if (rc == 0)
        rc = mf_tensor_read_f32(c->m, it->k, b, c->st);
    if (rc) {
        free(*a);
        free(*b);
        free(*w);
        *a = *b = *w = NULL;
    }
    return rc;
}

/* R_INTERLEAVE on a bias: element j of the last dimension from t at 2j,
 * from the partner at 2j + 1. */
static int interleaved_f32(hfc *c, const hfc_item *it, float **out, uint64_t *n_out)
{
    const mf_tensor *t = it->src;
    uint64_t n = mf_tensor_nelems(t);
    int64_t last = t->ndim ? t->shape[t->ndim - 1] : 1;
    float *a, *b, *w;
    if (read_pair(c, it, 2 * n, &a, &b, &w))
        return -1;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t row = i / (uint64_t)last, j = i % (uint64_t)last;
        w[row * 2 * (uint64_t)last + 2 * j] = a[i];
        w[row * 2 * (uint64_t)last + 2 * j + 1] = b[i];
    }
    free(a);
    free(b);
    *out = w;
    *n_out = 2 * n;
    return 0;
}

/* One ggml MXFP4 block (scale, then byte j = value j | value j + 16 << 4)
 * back to the checkpoint's 16 bytes (byte i = value 2i | value 2i + 1 << 4). */
static void mxfp4_unpack_block(const uint8_t *g, uint8_t *hf)
{
    for (int i = 0; i < 16; i++) {
        int lo = 2 * i, hi = 2 * i + 1;
        uint8_t a = (uint8_t)((g[1 + lo % 16] >> (lo < 16 ? 0 : 4)) & 0x0F);
        uint8_t b = (uint8_t)((g[1 + hi % 16] >> (hi < 16 ? 0 : 4)) & 0x0F);
        hf[i] = (uint8_t)(a | (b << 4));
    }
}

/* An MXFP4 item's _blocks (x 0) or _scales (x 1) bytes, rows interleaved
 * with the partner's for R_INTERLEAVE. */
static int fill_mxfp4_item(hfc *c, const hfc_item *it, mf_sink_fn sink, void *sink_ctx, mf_status *st)
{
    const mf_tensor *t = it->src;
    int64_t k = it->k ? 2 : 1, E = t->shape[0], R = t->shape[1], nb = t->shape[2] / 32;
    const uint8_t *a = mf_tensor_data(c->m, t), *b = it->k ? mf_tensor_data(c->m, it->k) : NULL;
    if (!a || (it->k && !b))
        return mf_fail(st, MF_ERR_IO, c->path, (int64_t)t->offset, "tensor \"%s\": data not readable", t->name);
    size_t row_bytes = (size_t)nb * (it->x ? 1 : 16);
    uint8_t *row = malloc(row_bytes);
    if (!row)
        return mf_oom(st, c->path);
    int rc = 0;
    for (int64_t e = 0; rc == 0 && e < E; e++)
        for (int64_t r = 0; rc == 0 && r < R * k; r++) {
            const uint8_t *src = (r % k ? b : a) + (uint64_t)((e * R + r / k) * nb) * 17;
            for (int64_t j = 0; j < nb; j++) {
                if (it->x)
                    row[j] = src[j * 17];
                else
                    mxfp4_unpack_block(src + j * 17, row + j * 16);
            }
            rc = sink(sink_ctx, row, row_bytes, st);
        }
    free(row);
    return rc;
}

/* The linear-attention sizes back from the keys (Qwen3NextModel's). */
static int linear_sizes(const hfc *c, int64_t *nk, int64_t *nv, int64_t *hk, int64_t *hv)
{
    *nk = key_int(c, "ssm.group_count", 0);
    *nv = key_int(c, "ssm.time_step_rank", 0);
    *hk = key_int(c, "ssm.state_size", 0);
    int64_t inner = key_int(c, "ssm.inner_size", 0);
    *hv = *nv > 0 ? inner / *nv : 0;
    return *nk > 0 && *nv > 0 && *hk > 0 && *hv > 0 && *nv % *nk == 0 ? 0 : -1;
}

/* R_QKVZ: the checkpoint's [nk][q hk, k hk, v r*hv, z r*hv] rows from
 * attn_qkv (all q, all k, all v) and attn_gate (all z). */
static int qkvz_f32(hfc *c, const hfc_item *it, float **out, uint64_t *n_out)
{
    int64_t nk, nv, hk, hv;
    const mf_tensor *q = it->src, *z = it->k;
    if (linear_sizes(c, &nk, &nv, &hk, &hv))
        return mf_fail(c->st, MF_ERR_FORMAT, c->path, (int64_t)q->offset, "tensor \"%s\": ssm sizes missing", q->name);
    int64_t vz = nv / nk * hv, group = 2 * hk + 2 * vz, cols = q->shape[1];
    if (q->shape[0] != nk * (2 * hk + vz) || z->shape[0] != nk * vz)
        return mf_fail(c->st, MF_ERR_FORMAT, c->path, (int64_t)q->offset, "tensor \"%s\": rows do not fit the ssm sizes", q->name);
    float *a, *b, *w;
    if (read_pair(c, it, (uint64_t)(nk * group * cols), &a, &b, &w))
        return -1;
    const int64_t off[4] = {0, hk, 2 * hk, 2 * hk + vz}, size[4] = {hk, hk, vz, vz};
    for (int p = 0, k = 0, kz = 0; p < 4; p++)
        for (int64_t g = 0; g < nk; g++)
            for (int64_t i = 0; i < size[p]; i++) {
                const float *src = p < 3 ? a + (k++) * cols : b + (kz++) * cols;
                memcpy(w + (g * group + off[p] + i) * cols, src, sizeof(float) * (size_t)cols);
            }
    free(a);
    free(b);
    *out = w;
    *n_out = (uint64_t)(nk * group * cols);
    return 0;
}

/* R_JOIN_KV_B: per head, k_b[h] ([r][nope]) transposed to nope rows of
 * r, then v_b[h]'s v rows. */
static int kv_b_f32(hfc *c, const hfc_item *it, float **out, uint64_t *n_out)
{
    int64_t heads = it->src->shape[0], r = it->src->shape[1], nope = it->src->shape[2], v = it->k->shape[1];
    uint64_t n = (uint64_t)(heads * (nope + v) * r);
    float *a, *b, *w;
    if (read_pair(c, it, n, &a, &b, &w))
        return -1;
    for (int64_t h = 0; h < heads; h++) {
        float *dst = w + h * (nope + v) * r;
        for (int64_t j = 0; j < nope; j++)
            for (int64_t i = 0; i < r; i++)
                dst[j * r + i] = a[(h * r + i) * nope + j];
        memcpy(dst + nope * r, b + h * v * r, sizeof(float) * (size_t)(v * r));
    }
    free(a);
    free(b);
    *out = w;
    *n_out = n;
    return 0;
}

/* R_FUSE_ROWS: per leading index, t's rows then the partner's. */
static int fuse_rows_f32(hfc *c, const hfc_item *it, float **out, uint64_t *n_out)
{
    const mf_tensor *t = it->src;
    int nd = t->ndim;
    int64_t rows = t->shape[nd - 2], cols = t->shape[nd - 1], lead = (int64_t)(mf_tensor_nelems(t) / (uint64_t)(rows * cols));
    float *a, *b, *w;
    if (read_pair(c, it, (uint64_t)(2 * lead * rows * cols), &a, &b, &w))
        return -1;
    size_t blk = sizeof(float) * (size_t)(rows * cols);
    for (int64_t e = 0; e < lead; e++) {
        memcpy(w + (2 * e) * rows * cols, a + e * rows * cols, blk);
        memcpy(w + (2 * e + 1) * rows * cols, b + e * rows * cols, blk);
    }
    free(a);
    free(b);
    *out = w;
    *n_out = (uint64_t)(2 * lead * rows * cols);
    return 0;
}

/* OP_VHEADS undone on w (the item's values, rows of the source's width). */
static int vheads_back(hfc *c, const hfc_item *it, float *w, uint64_t n)
{
    int64_t nk, nv, hk, hv;
    const mf_tensor *t = it->src;
    if (linear_sizes(c, &nk, &nv, &hk, &hv))
        return mf_fail(c->st, MF_ERR_FORMAT, c->path, (int64_t)t->offset, "tensor \"%s\": ssm sizes missing", t->name);
    if (nk == nv)
        return 0;
    bool cols = !strcmp(it->vheads, "cols");
    int64_t rows = t->ndim ? t->shape[0] : 1, width = rows ? (int64_t)(n / (uint64_t)rows) : 0;
    int64_t d = !strcmp(it->vheads, "heads") ? 1 : hv, prefix = !strcmp(it->vheads, "qkv") ? 2 * nk * hk : 0;
    int64_t count = cols ? width : rows;
    if (count != prefix + nv * d)
        return mf_fail(c->st, MF_ERR_FORMAT, c->path, (int64_t)t->offset, "tensor \"%s\": %lld entries are not %lld V heads",
                       t->name, (long long)count, (long long)nv);
    float *tmp = malloc(sizeof(float) * (size_t)(n ? n : 1));
    if (!tmp)
        return mf_oom(c->st, c->path);
    memcpy(tmp, w, sizeof(float) * (size_t)n);
    for (int64_t i = 0; i < count; i++) {
        int64_t src = conv_vheads_source(i, prefix, nk, nv, d);
        if (cols)
            for (int64_t r = 0; r < rows; r++)
                w[r * width + src] = tmp[r * width + i];
        else
            memcpy(w + src * width, tmp + i * width, sizeof(float) * (size_t)width);
    }
    free(tmp);
    return 0;
}

/* Llama 4's experts: each [a][b] matrix transposed; with R_GATE_UP_T the
 * up matrices' columns follow the gate's. */
static int experts_t_f32(hfc *c, const hfc_item *it, float **out, uint64_t *n_out)
{
    const mf_tensor *t = it->src;
    int64_t e = t->shape[0], a = t->shape[1], b = t->shape[2], parts = it->op == R_GATE_UP_T ? 2 : 1;
    uint64_t n = mf_tensor_nelems(t) * (uint64_t)parts;
    float *w = malloc(sizeof(float) * (size_t)(n ? n : 1));
    if (!w)
        return mf_oom(c->st, c->path);
    for (int64_t p = 0; p < parts; p++) {
        const float *src;
        if (source_f32(c, p ? it->k : t, &src)) {
            free(w);
            return -1;
        }
        for (int64_t x = 0; x < e; x++)
            for (int64_t i = 0; i < a; i++)
                for (int64_t j = 0; j < b; j++)
                    w[(x * b + j) * a * parts + p * a + i] = src[(x * a + i) * b + j];
    }
    *out = w;
    *n_out = n;
    return 0;
}

/* A_log = log(-A), the float32 whose -exp (torch's, as the converter
 * computed it) gives A back bit for bit when one a few ulps away does:
 * logf alone can land one ulp off, and converting again would change A. */
static float exact_log_neg(float a)
{
    float x = logf(-a), up = x, down = x;
    if (-conv_torch_expf(x) == a || !isfinite(x))
        return x;
    for (int k = 0; k < 8; k++) {
        up = nextafterf(up, INFINITY);
        down = nextafterf(down, -INFINITY);
        if (-conv_torch_expf(up) == a)
            return up;
        if (-conv_torch_expf(down) == a)
            return down;
    }
    return x;
}

/* R_CONCAT: the parts, each unpermuted as the forward split permuted it,
 * joined along the rows (per leading slice of a 3-d tensor). */
static int concat_f32(hfc *c, const hfc_item *it, float **out, uint64_t *n_out)
{
    const mf_tensor *t = it->src;
    int nd = t->ndim;
    int64_t outer = nd == 3 ? t->shape[0] : 1, cols = t->shape[nd - 1], rows = it->out.shape[nd - 2];
    int64_t heads = key_int(c, "attention.head_count", 0);
    int64_t kv = kv_heads(c, heads);
    uint64_t n = (uint64_t)(outer * rows * cols);
    float *w = malloc(sizeof(float) * (size_t)(n ? n : 1));
    if (!w)
        return mf_oom(c->st, c->path);
    int64_t at = 0;
    for (size_t p = 0; p < it->n_parts; p++) {
        const mf_tensor *q = it->parts[p];
        int64_t pr = q->shape[nd - 2];
        float *v = NULL, *u = NULL;
        if (mf_tensor_read_f32(c->m, q, &v, c->st)) {
            free(w);
            return -1;
        }
        conv_op op = it->split->ops[p];
        if (op == OP_PERMUTE_Q || op == OP_PERMUTE_K) {
            int64_t h = op == OP_PERMUTE_Q ? heads : kv;
            if (op == OP_PERMUTE_K && kv > 0 && kv != heads && (c->fwd->flags & AF_K_PERMUTE_RATIO))
                h = heads / kv;
            if (nd != 2 || h <= 0 || pr % (2 * h) || !(u = malloc(sizeof(float) * (size_t)(pr * cols)))) {
                free(v);
                free(w);
                return u || nd != 2 || h <= 0 || pr % (2 * h)
                           ? mf_fail(c->st, MF_ERR_FORMAT, c->path, (int64_t)q->offset, "tensor \"%s\": %lld rows "
                                     "do not split into %lld heads", q->name, (long long)pr, (long long)h)
                           : mf_oom(c->st, c->path);
            }
            unpermute(v, u, pr, cols, h);
            free(v);
            v = u;
        }
        for (int64_t e = 0; e < outer; e++)
            memcpy(w + (e * rows + at) * cols, v + e * pr * cols, sizeof(float) * (size_t)(pr * cols));
        free(v);
        at += pr;
    }
    *out = w;
    *n_out = n;
    return 0;
}

/* ffn_gate's values, then ffn_up's */
static int joined_f32(hfc *c, const hfc_item *it, float **out, uint64_t *n_out)
{
    float *a = NULL, *b = NULL;
    uint64_t na = mf_tensor_nelems(it->src), nb = mf_tensor_nelems(it->k);
    float *w = malloc(sizeof(float) * (size_t)(na + nb ? na + nb : 1));
    int rc = w ? 0 : mf_oom(c->st, c->path);
    if (rc == 0)
        rc = mf_tensor_read_f32(c->m, it->src, &a, c->st);
    if (rc == 0)
        rc = mf_tensor_read_f32(c->m, it->k, &b, c->st);
    if (rc == 0) {
        memcpy(w, a, sizeof(float) * (size_t)na);
        memcpy(w + na, b, sizeof(float) * (size_t)nb);
        *out = w;
        *n_out = na + nb;
    } else {
        free(w);
    }
    free(a);
    free(b);
    return rc;
}

/* R_*_RKVWG: in the Hugging Face layout w (n values; cols per row), the 5
 * equal groups of columns (rows == 1: of the whole tensor) swapped 0 <-> 3:
 * RWKV6Qwen2Model's w k v r g order back to r k v w g. */
static int rkvwg_back(hfc *c, const hfc_item *it, float *w, uint64_t n, int64_t cols)
{
    if (cols <= 0 || cols % 5 || n % (uint64_t)cols)
        return mf_fail(c->st, MF_ERR_FORMAT, c->path, (int64_t)it->src->offset,
                       "tensor \"%s\": not 5 equal groups (w, k, v, r, g)", it->src->name);
    int64_t per = cols / 5;
    for (uint64_t r = 0; r < n / (uint64_t)cols; r++)
        for (int64_t k = 0; k < per; k++) {
            float *a = w + r * (uint64_t)cols + k, *b = a + 3 * per, x = *a;
            *a = *b;
            *b = x;
        }
    return 0;
}

/* The item's values as float32 (malloc'd, n elements). */
static int item_f32(hfc *c, const hfc_item *it, float **out, uint64_t *n_out)
{
    if (it->op == R_TRANSPOSE_RKVWG || it->op == R_EXPERTS_T_RKVWG) {
        hfc_item plain = *it;
        plain.op = it->op == R_TRANSPOSE_RKVWG ? R_TRANSPOSE : R_EXPERTS_T;
        if (item_f32(c, &plain, out, n_out))
            return -1;
        /* w1 [h, 5 r]: column groups; w2 [5, r, h]: the tensor as one row */
        int64_t cols = it->op == R_TRANSPOSE_RKVWG ? it->src->shape[0] : (int64_t)*n_out;
        if (rkvwg_back(c, it, *out, *n_out, cols)) {
            free(*out);
            *out = NULL;
            return -1;
        }
        return 0;
    }
    if (it->op == R_QKVZ)
        return qkvz_f32(c, it, out, n_out);
    if (it->op == R_FUSE_ROWS)
        return fuse_rows_f32(c, it, out, n_out);
    if (it->op == R_JOIN_KV_B)
        return kv_b_f32(c, it, out, n_out);
    if (it->vheads) {
        hfc_item plain = *it;
        plain.vheads = NULL;
        if (item_f32(c, &plain, out, n_out))
            return -1;
        if (vheads_back(c, it, *out, *n_out)) {
            free(*out);
            *out = NULL;
            return -1;
        }
        return 0;
    }
    if (it->op == R_FUSE_GROUPED)
        return fused_f32(c, it, out, n_out);
    if (it->op == R_JOIN_UP)
        return joined_f32(c, it, out, n_out);
    if (it->op == R_EXPERTS_T || it->op == R_GATE_UP_T)
        return experts_t_f32(c, it, out, n_out);
    if (it->op == R_CONCAT)
        return concat_f32(c, it, out, n_out);
    const mf_tensor *t = it->src;
    const float *src;
    if (source_f32(c, t, &src))
        return -1;
    uint64_t n = mf_tensor_nelems(t);
    if (it->op == R_UNSTACK)
        n /= (uint64_t)t->shape[0];
    uint64_t front = 0; /* R_PAD_ROWS: zero values before the rows */
    if (it->op == R_PAD_ROWS && t->ndim == 2) {
        front = (uint64_t)pad_rows(c) * (uint64_t)t->shape[1];
        n += front;
    }
    float *w = malloc(sizeof(float) * (size_t)(n ? n : 1));
    if (!w)
        return mf_oom(c->st, c->path);
    int64_t rows = rows_of(t), cols = rows ? (int64_t)(mf_tensor_nelems(t) / (uint64_t)rows) : 0;
    int64_t heads = key_int(c, "attention.head_count", 0);
    int64_t kv = kv_heads(c, heads);
    if (c->fwd->flags & AF_LAYER_HEADS) { /* DeciLM: permuted with its own layer's heads */
        heads = layer_int(c, "attention.head_count", name_block(t->name), heads);
        kv = layer_int(c, "attention.head_count_kv", name_block(t->name), kv);
    }
    bool bad_heads = false;
    switch (it->op) {
    case R_UNPERMUTE_Q:
    case R_UNPERMUTE_K: {
        int64_t h = it->op == R_UNPERMUTE_Q ? heads : kv;
        if (it->op == R_UNPERMUTE_K && kv > 0 && kv != heads && (c->fwd->flags & AF_K_PERMUTE_RATIO))
            h = heads / kv; /* XVERSE, Baichuan: permuted with n_head // n_head_kv heads */
        bad_heads = h <= 0 || rows % (2 * h);
        if (!bad_heads)
            unpermute(src, w, rows, cols, h);
        break;
    }
    case R_QKV_PER_HEAD:
        bad_heads = heads <= 0 || rows % (3 * heads);
        if (!bad_heads)
            unorder_per_head(src, w, rows, cols, heads);
        break;
    case R_QKV_KV_GROUPS:
        bad_heads = heads <= 0 || kv <= 0 || heads % kv || rows % (heads + 2 * kv);
        if (!bad_heads)
            unorder_kv_groups(src, w, rows, cols, heads, kv);
        break;
    case R_DOUBLE_EVERY: /* an exact power of two */
        for (uint64_t i = 0; i < n; i++)
            w[i] = ldexpf(src[i], (int)it->x);
        break;
    case R_TRANSPOSE:
        for (int64_t r = 0; r < rows; r++)
            for (int64_t k = 0; k < cols; k++)
                w[k * rows + r] = src[r * cols + k];
        break;
    case R_UNSTACK:
        memcpy(w, src + (uint64_t)it->x * n, sizeof(float) * (size_t)n);
        break;
    case R_UNVIEW_EXPERTS_T: { /* [E][embd][ff] -> [E][ff][embd] */
        int64_t e = t->shape[0], a = t->shape[1], b = t->shape[2];
        for (int64_t x = 0; x < e; x++)
            for (int64_t i = 0; i < a; i++)
                for (int64_t j = 0; j < b; j++)
                    w[(x * b + j) * a + i] = src[(x * a + i) * b + j];
        break;
    }
    case R_UNTERNARY: { /* +-s / share: its mean |w| is s again */
        uint64_t nonzero = 0;
        for (uint64_t i = 0; i < n; i++)
            nonzero += src[i] != 0.0f;
        float share = n ? (float)((double)nonzero / (double)n) : 1.0f;
        for (uint64_t i = 0; i < n; i++)
            w[i] = src[i] == 0.0f || share == 0.0f ? src[i] : src[i] / share; /* -0.0 stays -0.0 */
        break;
    }
    case R_PAD_ROWS:
        memset(w, 0, sizeof(float) * (size_t)front);
        memcpy(w + front, src, sizeof(float) * (size_t)(n - front));
        break;
    case R_SUB_ONE:
        for (uint64_t i = 0; i < n; i++)
            w[i] = src[i] - 1.0f;
        break;
    case R_SWAP_ROW_GROUPS:
    case R_SWAP_COL_GROUPS: {
        int64_t a, b;
        bool by_cols = it->op == R_SWAP_COL_GROUPS, ok = swap_groups_of(c, it, &a, &b);
        int64_t m = by_cols ? cols : rows;
        bad_heads = !ok || m % (a * b) != 0;
        for (int64_t i = 0; !bad_heads && i < m; i++) {
            int64_t s = conv_swap_groups_source(i, a, b, m / (a * b));
            if (by_cols)
                for (int64_t r = 0; r < rows; r++)
                    w[r * cols + s] = src[r * cols + i];
            else
                memcpy(w + s * cols, src + i * cols, sizeof(float) * (size_t)cols);
        }
        break;
    }
    case R_HEAD_DEINTERLEAVE: /* w[r][k*h + i] = src[r][i*2 + k], h = cols / 2 */
        bad_heads = cols % 2 != 0;
        for (int64_t r = 0; !bad_heads && r < rows; r++)
            for (int64_t i = 0; i < cols / 2; i++)
                for (int64_t k = 0; k < 2; k++)
                    w[r * cols + k * (cols / 2) + i] = src[r * cols + i * 2 + k];
        break;
    case R_LOG_NEG:
    case R_LOG_NEG_FLAT:
        for (uint64_t i = 0; i < n; i++)
            w[i] = it->out.dtype == MF_F32 ? exact_log_neg(src[i]) : logf(-src[i]);
        break;
    case R_INTERLEAVE: /* a bias: [..., n] of t and of its partner -> [..., 2n] */
        free(w);
        return interleaved_f32(c, it, out, n_out);
    default:
        memcpy(w, src, sizeof(float) * (size_t)n);
    }
    if (bad_heads) {
        free(w);
        return mf_fail(c->st, MF_ERR_FORMAT, c->path, (int64_t)t->offset,
                       "tensor \"%s\": %lld rows do not split into the %lld heads (%lld KV) of %s",
                       t->name, (long long)rows, (long long)heads, (long long)kv, c->arch);
    }
    *out = w;
    *n_out = n;
    return 0;
}

static int emit_as(mf_dtype dt, const float *v, uint64_t n, mf_sink_fn sink, void *ctx,
                   mf_status *st)
{
    uint8_t buf[1 << 15];
    size_t es = dt == MF_F32 ? 4 : 2, per = sizeof(buf) / es;
    for (uint64_t i = 0; i < n;) {
        size_t k = n - i < per ? (size_t)(n - i) : per;
        for (size_t j = 0; j < k; j++) {
            float f = v[i + j];
            if (dt == MF_F32)
                memcpy(buf + 4 * j, &f, 4);
            else
                mf_wr16le(buf + 2 * j, dt == MF_F16 ? mf_f32_to_f16(f) : mf_f32_to_bf16(f));
        }
        if (sink(ctx, buf, k * es, st))
            return -1;
        i += k;
    }
    return 0;
}

static int fill_item(void *ctx, size_t i, mf_sink_fn sink, void *sink_ctx, mf_status *st)
{
    hfc *c = ctx;
    const hfc_item *it = &c->items.v[i];
    /* a tensor that only changes its name: its bytes as they are */
    if (it->op == R_PLAIN && !it->vheads && it->out.dtype == it->src->dtype)
        return mf_tensor_stream(c->m, it->src, sink, sink_ctx, st);
    if (it->out.dtype == MF_U8 && it->src->dtype == MF_MXFP4)
        return fill_mxfp4_item(c, it, sink, sink_ctx, st);
    float *v = NULL;
    uint64_t n = 0;
    if (item_f32(c, it, &v, &n))
        return -1;
    int rc = emit_as(it->out.dtype, v, n, sink, sink_ctx, st);
    free(v);
    if (rc == 0)
        rc = mf_progress_report(c->opts.progress, c->opts.progress_user, i + 1, c->items.n,
                                c->m->path, st);
    return rc;
}

/* ------------------------------------------------------------ writing */

static char *dir_file(hfc *c, const char *name)
{
    return mf_path_join(c->a, c->tmp_dir, name);
}

int hfc_write_json(hfc *c, const char *name, json_t *j)
{
    char *p = dir_file(c, name);
    char *text = j ? mf_json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(9)) : NULL;
    json_decref(j);
    if (!p || !text) {
        free(text);
        return mf_oom(c->st, c->path);
    }
    mf_atomic *w;
    int rc = mf_atomic_open(p, &w, c->st);
    if (rc == 0)
        rc = mf_atomic_write(w, text, strlen(text), c->st);
    if (rc == 0)
        rc = mf_atomic_write(w, "\n", 1, c->st);
    if (w)
        rc = rc == 0 ? mf_atomic_commit(w, c->st) : (mf_atomic_abort(w), rc);
    free(text);
    return rc;
}

int hfc_write_bytes(hfc *c, const char *name, const void *data, size_t n)
{
    char *p = dir_file(c, name);
    if (!p)
        return mf_oom(c->st, c->path);
    mf_atomic *w;
    int rc = mf_atomic_open(p, &w, c->st);
    if (rc == 0)
        rc = mf_atomic_write(w, data, n, c->st);
    if (w)
        rc = rc == 0 ? mf_atomic_commit(w, c->st) : (mf_atomic_abort(w), rc);
    return rc;
}

/* One shard's fill: item indices offset by the shard's first. */
typedef struct shard_fill {
    hfc *c;
    size_t first;
} shard_fill;

static int fill_shard(void *ctx, size_t i, mf_sink_fn sink, void *sink_ctx, mf_status *st)
{
    shard_fill *f = ctx;
    return fill_item(f->c, f->first + i, sink, sink_ctx, st);
}

static uint64_t item_bytes(const hfc_item *it)
{
    uint64_t n = 1;
    for (int d = 0; d < it->out.ndim; d++)
        n *= (uint64_t)it->out.shape[d];
    return n * (it->out.dtype == MF_F32 ? 4 : it->out.dtype == MF_U8 ? 1 : 2);
}

/* Shards as save_pretrained cuts them: in order, a new one when the next
 * tensor would pass the limit; model.safetensors.index.json maps names. */
static int write_sharded(hfc *c, mf_out_tensor *outs, const mf_kv *fmt)
{
    size_t n = c->items.n, n_shards = 0;
    size_t *shard_of = calloc(n ? n : 1, sizeof(size_t));
    if (!shard_of)
        return mf_oom(c->st, c->path);
    uint64_t in_shard = 0, total = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t b = item_bytes(&c->items.v[i]);
        if (i == 0 || (in_shard && in_shard + b > c->opts.max_shard_size)) {
            n_shards++;
            in_shard = 0;
        }
        shard_of[i] = n_shards - 1;
        in_shard += b;
        total += b;
    }
    json_t *index = json_object(), *map = json_object(), *meta = json_object();
    json_object_set_new(meta, "total_size", json_integer((json_int_t)total));
    json_object_set_new(index, "metadata", meta);
    json_object_set_new(index, "weight_map", map);
    int rc = 0;
    for (size_t s = 0, first = 0; rc == 0 && s < n_shards; s++) {
        size_t end = first;
        while (end < n && shard_of[end] == s)
            end++;
        char *name = mf_arena_printf(c->a, "model-%05zu-of-%05zu.safetensors", s + 1, n_shards);
        char *p = name ? dir_file(c, name) : NULL;
        shard_fill f = {c, first};
        rc = p ? mf_safetensors_write(p, outs + first, end - first, fmt, 1, fill_shard, &f, c->st)
               : mf_oom(c->st, c->path);
        for (size_t i = first; rc == 0 && i < end; i++)
            json_object_set_new(map, outs[i].name, json_string(name));
        first = end;
    }
    free(shard_of);
    if (rc == 0)
        return hfc_write_json(c, "model.safetensors.index.json", index);
    json_decref(index);
    return rc;
}

static int write_weights(hfc *c)
{
    mf_out_tensor *outs = calloc(c->items.n ? c->items.n : 1, sizeof(*outs));
    if (!outs)
        return mf_oom(c->st, c->path);
    for (size_t i = 0; i < c->items.n; i++)
        outs[i] = c->items.v[i].out;
    mf_kv fmt = {.key = "format", .v = mf_value_str(c->a, "pt", 2)};
    uint64_t total = 0;
    for (size_t i = 0; i < c->items.n; i++)
        total += item_bytes(&c->items.v[i]);
    int rc;
    if (c->opts.max_shard_size && total > c->opts.max_shard_size) {
        rc = write_sharded(c, outs, &fmt);
    } else {
        char *p = dir_file(c, "model.safetensors");
        rc = p ? mf_safetensors_write(p, outs, c->items.n, &fmt, 1, fill_item, c, c->st)
               : mf_oom(c->st, c->path);
    }
    free(outs);
    free(c->cache);
    c->cache = NULL;
    c->cached = NULL;
    return rc;
}

/* Removes a directory this run made (files and the directories it made). */
static void remove_tree(const char *dir, int depth)
{
    DIR *d = opendir(dir);
    if (d) {
        char p[4096];
        for (struct dirent *e; (e = readdir(d));) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
            struct stat sb;
            if (depth < 2 && lstat(p, &sb) == 0 && S_ISDIR(sb.st_mode))
                remove_tree(p, depth + 1);
            else
                unlink(p);
        }
        closedir(d);
    }
    rmdir(dir);
}

static void make_parents(const char *path)
{
    char p[4096];
    snprintf(p, sizeof(p), "%s", path);
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = 0;
        mkdir(p, 0755); /* EEXIST is fine; a real failure shows at mkdtemp */
        *s = '/';
    }
}

/* The output is made as OUT.tmp.XXXXXX beside OUT, then renamed: an
 * existing OUT must be an empty directory (or absent). */
static int make_tmp_dir(hfc *c)
{
    struct stat sb;
    if (stat(c->out, &sb) == 0) {
        DIR *d = S_ISDIR(sb.st_mode) ? opendir(c->out) : NULL;
        bool empty = d != NULL;
        for (struct dirent *e; d && (e = readdir(d));)
            empty &= !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
        if (d)
            closedir(d);
        if (!empty)
            return mf_fail(c->st, MF_ERR_USAGE, c->out, -1,
                           "exists and is not an empty directory: refusing to write into it");
    }
    size_t n = strlen(c->out);
    while (n > 1 && c->out[n - 1] == '/')
        n--;
    c->tmp_dir = mf_arena_printf(c->a, "%.*s.tmp.XXXXXX", (int)n, c->out);
    c->final_dir = mf_arena_printf(c->a, "%.*s", (int)n, c->out);
    if (!c->tmp_dir || !c->final_dir)
        return mf_oom(c->st, c->path);
    make_parents(c->final_dir); /* as save_pretrained's os.makedirs */
    if (!mkdtemp(c->tmp_dir))
        return mf_fail(c->st, MF_ERR_IO, c->out, -1, "cannot create a directory beside it: %s",
                       strerror(errno));
    chmod(c->tmp_dir, 0755);
    return 0;
}

static int commit_dir(hfc *c)
{
    rmdir(c->final_dir); /* an empty one is replaced */
    if (rename(c->tmp_dir, c->final_dir) != 0)
        return mf_fail(c->st, MF_ERR_IO, c->out, -1, "rename failed: %s", strerror(errno));
    c->tmp_dir = NULL;
    return 0;
}

/* ------------------------------------------------------------ driver */

static mf_dtype file_float_type(const hfc *c)
{
    int64_t ft;
    if (!hfc_int(mf_meta_get(c->m, "general.file_type"), &ft))
        return MF_F16;
    return ft == 0 ? MF_F32 : ft == 32 ? MF_BF16 : MF_F16;
}

static void set_quant_dtype(hfc *c)
{
    c->quant_dtype = file_float_type(c);
    if (c->quant_dtype != MF_F32 && c->quant_dtype != MF_BF16)
        c->quant_dtype = MF_F16;
}

/* --arch-file: its forward row and the names derived from it, for a GGUF
 * of its architecture only. */
static int start_arch_file(hfc *c)
{
    if (!(c->arch_file = conv_arch_file_load(c->opts.arch_file, c->st)))
        return -1;
    if (strcmp(c->arch_file->fwd.name, c->arch))
        return mf_fail(c->st, MF_ERR_USAGE, c->path, -1, "general.architecture is \"%s\", the arch file %s "
                       "describes \"%s\"", c->arch, c->opts.arch_file, c->arch_file->fwd.name);
    c->fwd = &c->arch_file->fwd;
    c->rev = &c->arch_file->rev;
    c->rules = c->fwd->rules;
    c->hparams = c->fwd->hparams;
    c->l2026 = (c->fwd->flags & AF_ONLY_2026) != 0;
    c->hf_class = c->rev->hf_class;
    c->model_type = c->rev->model_type;
    for (size_t i = 0; i < c->arch_file->n_variants; i++) {
        const char *when = c->arch_file->variants[i].when;
        if (when && key_int(c, when, 0) == 0)
            continue;
        if (c->arch_file->variants[i].hf_class)
            c->hf_class = c->arch_file->variants[i].hf_class;
        if (c->arch_file->variants[i].model_type)
            c->model_type = c->arch_file->variants[i].model_type;
        break;
    }
    set_quant_dtype(c);
    return 0;
}

static int start(hfc *c)
{
    const mf_value *a = mf_meta_get(c->m, "general.architecture");
    if (!a || a->type != MF_V_STR)
        return mf_fail(c->st, MF_ERR_FORMAT, c->path, -1, "no general.architecture: not a model GGUF");
    c->arch = a->as.s.ptr;
    if (c->opts.arch_file)
        return start_arch_file(c);
    c->rev = find_rev(c->m, c->arch);
    c->fwd = find_fwd(c->m, c->arch, c->rev ? c->rev->hf_class : NULL);
    if (!c->rev || !c->fwd) {
        char known[1024] = "";
        for (size_t i = 0; i < hf_rev_n_archs; i++)
            snprintf(known + strlen(known), sizeof(known) - strlen(known), "%s%s", i ? ", " : "",
                     hf_rev_archs[i].arch);
        return mf_fail(c->st, MF_ERR_UNSUPPORTED, c->path, -1,
                       "architecture \"%s\" cannot be written as a Hugging Face directory (known: %s)",
                       c->arch, known);
    }
    c->rules = c->fwd->rules;
    c->hparams = c->fwd->hparams;
    c->l2026 = (c->fwd->flags & AF_ONLY_2026) != 0;
    /* DeepSeek-V2/V3 of --layout 2026-02 (the MLA key lengths, attn_k_b and
     * attn_v_b): that layout's keys and rules read backwards */
    if (!strcmp(c->arch, "deepseek2") && hfc_key(c, "attention.key_length_mla")) {
        c->l2026 = true;
        for (size_t i = 0; i < conv_n_archs_2026; i++)
            if (conv_archs_2026[i].bit == c->fwd->bit) {
                c->rules = conv_archs_2026[i].rules ? conv_archs_2026[i].rules : c->rules;
                c->hparams = conv_archs_2026[i].hparams ? conv_archs_2026[i].hparams : c->hparams;
            }
    }
    /* an expert_gating_func its own table does not write: the 2026 base
     * keys wrote it (DeepSeek-MoE of --layout 2026-02) */
    bool own = false;
    for (const conv_hp *h = c->hparams; h->key; h++)
        own |= !strcmp(h->key, "expert_gating_func");
    if (!own && hfc_key(c, "expert_gating_func"))
        c->l2026 = true;
    /* Granite 4.0-H without experts: its FFN came from the shared MLP */
    if (!strcmp(c->arch, "granitehybrid") && key_int(c, "expert_count", 0) == 0)
        c->rules = conv_granite_hybrid_dense_rules;
    /* two layer norms per block: Falcon's new decoder architecture */
    if (!strcmp(c->arch, "falcon") && mf_tensor_find(c->m, "blk.0.attn_norm_2.weight"))
        c->rev = &hf_rev_falcon_new;
    c->hf_class = c->rev->hf_class;
    c->model_type = c->rev->model_type;
    if (!strcmp(c->arch, "llama") && key_int(c, "expert_count", 0) > 0) {
        c->hf_class = "MixtralForCausalLM";
        c->model_type = "mixtral";
    }
    if (!strcmp(c->arch, "llama") && space_prefix_before_ids(c)) {
        c->hf_class = "InternLM3ForCausalLM";
        c->model_type = "internlm3";
    }
    set_quant_dtype(c);
    return 0;
}

int mf_convert_gguf_to_hf(const char *in, const char *out, const mf_hf_out_opts *o, mf_status *st)
{
    mf_status local;
    if (!st) {
        mf_status_init(&local);
        st = &local;
    }
    hfc c = {.path = in, .out = out, .st = st};
    c.opts = o ? *o : (mf_hf_out_opts){.dtype = MF_DTYPE_INVALID};
    int rc = -1;
    c.a = mf_arena_new();
    if (!c.a) {
        rc = mf_oom(st, in);
        goto done;
    }
    if (c.opts.dtype != MF_DTYPE_INVALID && !is_plain_float(c.opts.dtype)) {
        rc = mf_fail(st, MF_ERR_USAGE, out, -1, "--dtype takes f32, f16 or bf16");
        goto done;
    }
    if (mf_open_model(in, 0, &c.m, st))
        goto done;
    if (c.m->format != MF_FMT_GGUF) {
        rc = mf_fail(st, MF_ERR_USAGE, in, -1, "is %s: a Hugging Face directory is made from a GGUF",
                     mf_format_name(c.m->format));
        goto done;
    }
    rc = start(&c);
    if (rc == 0)
        rc = plan_tensors(&c);
    if (rc == 0)
        rc = make_tmp_dir(&c);
    if (rc == 0) {
        hfc_plan_specials(&c);
        rc = hfc_write_config(&c);
    }
    if (rc == 0)
        rc = hfc_write_tokenizer(&c);
    if (rc == 0)
        rc = write_weights(&c);
    if (rc == 0)
        rc = commit_dir(&c);
done:
    if (c.tmp_dir)
        remove_tree(c.tmp_dir, 0);
    free(c.items.v);
    free(c.cache);
    conv_arch_file_free(c.arch_file);
    mf_close(c.m);
    if (c.a)
        mf_arena_free(c.a);
    if (st == &local)
        mf_status_clear(&local);
    return rc;
}

void mf_convert_hf_opts_init(mf_convert_hf_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->struct_size = sizeof(*o);
    o->dtype = MF_DTYPE_INVALID;
}

int mf_convert_to_hf(const char *in, const char *out, const mf_convert_hf_opts *opts,
                     mf_status *st)
{
    MF_ST_GUARD(st);
    mf_convert_hf_opts o;
    mf_convert_hf_opts_init(&o);
    if (mf_opts_copy(&o, sizeof(o), opts, "mf_convert_hf_opts", st))
        return -1;
    if (mf_hf_is_prequant_dir(in)) /* GPTQ, AWQ, FP8...: a float directory */
        return mf_prequant_to_hf(in, out, &o, st);
    return mf_convert_gguf_to_hf(in, out, &o, st);
}

/* ------------------------------------------- whole rows (ops/gguf_rows.h) */

/* The heads an R_UNPERMUTE_Q/K item is unpermuted with (item_f32's rule). */
static int64_t unpermute_heads(hfc *c, const hfc_item *it)
{
    int64_t heads = key_int(c, "attention.head_count", 0);
    int64_t kv = key_int(c, "attention.head_count_kv", heads);
    if (c->fwd->flags & AF_LAYER_HEADS) {
        heads = layer_int(c, "attention.head_count", name_block(it->src->name), heads);
        kv = layer_int(c, "attention.head_count_kv", name_block(it->src->name), kv);
    }
    if (it->op == R_UNPERMUTE_Q)
        return heads;
    if (kv > 0 && kv != heads && (c->fwd->flags & AF_K_PERMUTE_RATIO))
        return heads / kv;
    return kv;
}

int mf_gguf_hf_rows(mf_model *m, const char *path, mf_gguf_row_fn fn, void *ctx, mf_status *st)
{
    hfc c = {.path = path, .st = st, .m = m};
    c.opts = (mf_hf_out_opts){.dtype = MF_DTYPE_INVALID};
    if (!(c.a = mf_arena_new()))
        return mf_oom(st, path);
    int rc = start(&c);
    if (rc == 0)
        rc = plan_tensors(&c);
    for (size_t i = 0; rc == 0 && i < c.items.n; i++) {
        const hfc_item *it = &c.items.v[i];
        const mf_tensor *t = it->src;
        bool rows = it->op == R_PLAIN || it->op == R_UNPERMUTE_Q || it->op == R_UNPERMUTE_K;
        if (!rows || it->vheads || !t || t->ndim != 2 || it->out.ndim != 2 ||
            it->out.shape[0] != t->shape[0] || it->out.shape[1] != t->shape[1])
            continue;
        int64_t heads = it->op == R_PLAIN ? 0 : unpermute_heads(&c, it);
        if (it->op != R_PLAIN && (heads <= 0 || t->shape[0] % (2 * heads)))
            continue; /* the converter refuses it */
        rc = fn(ctx, it->out.name, t, heads, st);
    }
    free(c.items.v);
    free(c.cache);
    mf_arena_free(c.a);
    return rc;
}

/* ------------------------------------------- the view (gguf2hf_view.c) */

int hfc_prepare(hfc *c)
{
    int rc = start(c);
    return rc ? rc : plan_tensors(c);
}

int hfc_fill(hfc *c, size_t i, mf_sink_fn sink, void *sink_ctx, mf_status *st)
{
    return fill_item(c, i, sink, sink_ctx, st);
}
