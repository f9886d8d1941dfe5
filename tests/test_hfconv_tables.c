/* test_hfconv_tables.c - the converter wing's tables agree with each other
 * (lib/ops/hfconv/): every architecture the HF -> GGUF table converts
 *  - has its GGUF -> HF entry (gguf2hf_arch.c), and for each tensor rule
 *    that changes values or layout (permute, +1, -exp, transpose, stack,
 *    fused qkv) the reverse table holds the inverse (unpermute, -1, log,
 *    transpose, unstack, unfuse);
 *  - has a llama.cpp load rule (llama_load.c): a known architecture with
 *    its required keys;
 *  - has, for each computed value and key block, the forward step and its
 *    inverse (conv_calc/conv_block), the inverse absent only where nothing
 *    goes back into config.json (file_type, head_dim_embd, pooling_type).
 * So a family added in one direction only fails here. */
#include "testlib.h"

#include "ops/hfconv/arch.h"
#include "ops/hfconv/arch_file.h"
#include "ops/hfconv/gguf2hf.h"
#include "ops/hfconv/llama_load.h"

/* The reverse row of the forward row's class (architectures several
 * classes share), else the architecture's first. */
static const hf_rev_arch *reverse_of(const conv_arch *a)
{
    for (size_t i = 0; i < hf_rev_n_variants; i++)
        for (const char *const *k = a->classes; *k; k++)
            if (!strcmp(hf_rev_variants[i].rev.arch, a->name) && !strcmp(hf_rev_variants[i].rev.hf_class, *k))
                return &hf_rev_variants[i].rev;
    for (size_t i = 0; i < hf_rev_n_archs; i++)
        for (const char *const *k = a->classes; *k; k++)
            if (!strcmp(hf_rev_archs[i].arch, a->name) && !strcmp(hf_rev_archs[i].hf_class, *k))
                return &hf_rev_archs[i];
    const char *arch = a->name;
    for (size_t i = 0; i < hf_rev_n_archs; i++)
        if (!strcmp(hf_rev_archs[i].arch, arch))
            return &hf_rev_archs[i];
    return NULL;
}

static bool has_rev_op(const hf_rev_arch *r, hf_rev_op op)
{
    for (const hf_rev_name *n = r->names; n->gguf; n++)
        if (n->op == op)
            return true;
    return false;
}

static bool has_vheads(const char *arch)
{
    for (size_t i = 0; i < hf_rev_n_vheads; i++)
        if (!strcmp(hf_rev_vheads_rows[i].arch, arch))
            return true;
    return false;
}

static hf_rev_op rev_op_of(const hf_rev_arch *r, const char *gguf)
{
    for (const hf_rev_name *n = r->names; n->gguf; n++)
        if (!strcmp(n->gguf, gguf))
            return n->op;
    return R_SKIP;
}

/* A split's parts come back joined: its first part's reverse row is
 * R_CONCAT, the others R_FUSED_PART (under the same GGUF names); or, for a
 * split written back unfused (ERNIE 4.5's Paddle layout), each part's row
 * is a plain one, except in a class variant that fuses them back. */
static void check_split(const conv_arch *a, const hf_rev_arch *r, const conv_split *sp)
{
    for (size_t p = 0; sp->names[p]; p++) {
        char name[128];
        const char *b = strstr(sp->names[p], "%b");
        if (b)
            snprintf(name, sizeof(name), "%.*s{bid}%s", (int)(b - sp->names[p]), sp->names[p], b + 2);
        else
            snprintf(name, sizeof(name), "%s", sp->names[p]);
        bool variant = false;
        for (size_t i = 0; i < hf_rev_n_variants; i++)
            variant |= r == &hf_rev_variants[i].rev;
        hf_rev_op want = sp->unfused_back && !variant ? R_PLAIN : p ? R_FUSED_PART : R_CONCAT;
        CHECKF(rev_op_of(r, name) == want, "%s: split part %s has reverse op %d, not %d", a->name, name,
               (int)rev_op_of(r, name), (int)want);
        CHECKF(sp->ops[p] == OP_RENAME || sp->ops[p] == OP_PERMUTE_Q || sp->ops[p] == OP_PERMUTE_K,
               "%s: split part %s: op %d (rename or permute only)", a->name, name, (int)sp->ops[p]);
    }
}

static void check_rules(const conv_arch *a, const hf_rev_arch *r)
{
    for (const conv_rule *x = a->rules; x->pat; x++) {
        if (x->op == OP_VHEADS)
            CHECKF(has_vheads(a->name), "%s: V-head re-order on \"%s\" has no inverse in hf_rev_vheads_rows", a->name, x->pat);
        if (x->op == OP_SPLIT)
            check_split(a, r, x->split);
        /* a scale has no inverse (GGUF keeps only the product): its factor
         * must at least be computable */
        if (x->op == OP_SCALE)
            CHECKF((x->factor && x->factor->fwd) || (!x->factor && x->count_key),
                   "%s: scale rule on \"%s\" without a factor", a->name, x->pat);
        if (x->op == OP_SCALE_ROWS)
            CHECKF(x->row_factors && x->count_key, "%s: row scale rule on \"%s\" without its hook and key",
                   a->name, x->pat);
        /* a split written back unfused: its parts' plain rows (check_split) */
        hf_rev_op inv = x->op == OP_SPLIT && x->split->unfused_back ? R_PLAIN : conv_reverse_op(x->op);
        /* A = -exp(A_log) with a trailing 1 comes back by one row doing both */
        /* RWKV6-Qwen2's group re-order after a transpose comes back in the row
         * that undoes both */
        if (inv == R_TRANSPOSE_RKVWG || (inv == R_EXPERTS_T && has_rev_op(r, R_EXPERTS_T_RKVWG)))
            CHECKF(has_rev_op(r, R_TRANSPOSE_RKVWG) || has_rev_op(r, R_EXPERTS_T_RKVWG),
                   "%s: rule on \"%s\" (op %d) has no inverse in gguf2hf_arch.c", a->name, x->pat, (int)x->op);
        else if (inv == R_LOG_NEG || inv == R_FLAT)
            CHECKF(has_rev_op(r, inv) || has_rev_op(r, R_LOG_NEG_FLAT),
                   "%s: rule on \"%s\" (op %d) has no inverse (op %d) in gguf2hf_arch.c", a->name, x->pat,
                   (int)x->op, (int)inv);
        else if (inv != R_PLAIN)
            CHECKF(has_rev_op(r, inv), "%s: rule on \"%s\" (op %d) has no inverse (op %d) in gguf2hf_arch.c",
                   a->name, x->pat, (int)x->op, (int)inv);
    }
}

static const mf_value *no_key(void *ctx, const char *key)
{
    (void)ctx;
    (void)key;
    return NULL;
}

static void count_problem(void *ctx, const char *msg)
{
    if (strstr(msg, "unknown model architecture"))
        ++*(int *)ctx;
}

/* Converted, but newer than the loader llama_load.c restates (c392e509):
 * Qwen3 came to llama.cpp in April 2025, so its load check says
 * "unknown model architecture" - rightly, and checked to stay so. */
static bool newer_than_loader(const char *arch)
{
    return !strcmp(arch, "qwen3");
}

static void check_load_rule(const conv_arch *a)
{
    int unknown = 0;
    if (a->flags & AF_ONLY_2026) { /* a family of the 2026-02 converter: its runtime (ecbcb7ea) */
        size_t n = mf_llama_hparams_problems_2026(a->name, no_key, NULL, count_problem, &unknown);
        CHECKF(unknown == 0 && n > 0, "%s: no llama.cpp ecbcb7ea load rule in llama_load.c", a->name);
        return;
    }
    size_t n = mf_llama_hparams_problems(a->name, no_key, NULL, count_problem, &unknown);
    if (newer_than_loader(a->name)) {
        CHECKF(unknown == 1, "%s: listed as unknown to llama.cpp c392e509 but llama_load.c knows it", a->name);
        return;
    }
    CHECKF(unknown == 0, "%s: no llama.cpp load rule in llama_load.c", a->name);
    CHECKF(n > 0, "%s: llama_load.c requires no key of it (no row in required[])", a->name);
}

static void check_hparams(const conv_arch *a, const conv_hp *list)
{
    for (const conv_hp *h = list; h->key; h++) {
        if (h->calc) {
            /* nothing goes back into config.json from the file type and
             * n_embd // n_head; DeepSeek-V2's 2026 MLA lengths come back
             * through the c392e50 keys' inverses (kv_lora_rank, qk_*_head_dim);
             * ERNIE's shared width is intermediate_size // num_key_value_heads,
             * both given back by the base keys; RWKV6's time-mix and decay
             * LoRA sizes are 32/64 (64/128 at hidden_size 4096): hidden_size,
             * given back, gives them */
            bool none_back = h->calc == &conv_calc_file_type || h->calc == &conv_calc_head_dim_embd ||
                             h->calc == &conv_calc_mla_key_length || h->calc == &conv_calc_yarn_log_mul_2026 ||
                             h->calc == &conv_calc_ernie_shexp_ffl || h->calc == &conv_calc_rwkv_mix_extra ||
                             h->calc == &conv_calc_rwkv_decay_extra || h->calc == &conv_calc_rwkv_mix_extra_ge ||
                             h->calc == &conv_calc_rwkv_decay_extra_ge;
            CHECKF(h->calc->fwd != NULL, "%s.%s: computed value without a forward step", a->name, h->key);
            CHECKF(none_back || h->calc->back != NULL, "%s.%s: computed value @%s has no inverse", a->name,
                   h->key, h->calc->name);
        } else if (h->block) {
            CHECKF(h->block->fwd != NULL, "%s %s: key block without a forward step", a->name, h->key);
            /* pooling_type: not a config.json key; rope_nemotron writes only "none",
             * whose inverse is config.json without rope_scaling */
            CHECKF(h->block == &conv_block_pooling_type || h->block == &conv_block_rope_nemotron ||
                       h->block->back != NULL,
                   "%s %s: key block has no inverse", a->name, h->key);
        } else if (strcmp(h->key, "@base") && strcmp(h->key, "@set")) {
            CHECKF(h->src != NULL, "%s.%s: neither a config key nor a computed value", a->name, h->key);
        }
    }
}

int main(void)
{
    CHECK(conv_n_archs >= 20);
    for (size_t i = 0; i < conv_n_archs; i++) {
        const conv_arch *a = &conv_archs[i];
        const hf_rev_arch *r = reverse_of(a);
        CHECKF(r != NULL, "%s: no GGUF -> HF entry in gguf2hf_arch.c", a->name);
        if (r)
            check_rules(a, r);
        check_load_rule(a);
        check_hparams(a, a->hparams);
    }
    check_hparams(&conv_archs[0], conv_base_hparams);
    check_hparams(&conv_archs[0], conv_base_hparams_2026);
    for (size_t i = 0; i < conv_n_archs_2026; i++) /* the 2026-02 layout of older families */
        if (conv_archs_2026[i].hparams)
            check_hparams(&conv_archs[0], conv_archs_2026[i].hparams);
    /* every name-table row belongs to some architecture of the table */
    for (size_t i = 0; i < conv_n_names; i++) {
        bool some = false;
        for (int bit = 0; bit < AB_COUNT; bit++)
            some |= conv_name_in_arch(i, bit);
        bool beyond = false; /* a bit past AB_COUNT */
        for (int w = 0; w < CONV_ARCH_WORDS; w++) {
            int first = w * 64, last = first + 64; /* the word's bits [first, last) */
            uint64_t valid = AB_COUNT >= last ? ~0ull : AB_COUNT <= first ? 0 : (1ull << (AB_COUNT - first)) - 1;
            beyond |= (conv_name_archs[w][i] & ~valid) != 0;
        }
        CHECKF(some && !beyond, "arch_names.inc row %zu (%s): architecture set empty or out of range", i,
               conv_names[i].hf);
    }
    printf("hfconv tables: %zu architectures, %zu reverse entries, %zu name rows\n", conv_n_archs,
           hf_rev_n_archs, conv_n_names);
    return tl_report("hfconv_tables");
}
