/* ggml_legacy.c - llama.cpp's files from before GGUF (March-August 2023):
 * GGML (unversioned), GGMF v1, GGJT v1-v3. Layout, as llama.cpp's loader of
 * that time and convert_llama_ggml_to_gguf.py read it, all little-endian:
 *   magic u32 ('ggml' | 'ggmf' | 'ggjt'), version u32 (not for 'ggml'),
 *   hparams u32 x 7: n_vocab n_embd n_mult n_head n_layer n_rot ftype,
 *   n_vocab x {len u32, bytes, score f32 (not for 'ggml')},
 *   tensors to the end of the file: n_dims u32, name_len u32, type u32,
 *   ne u32 x n_dims, name, (GGJT: zero padding to a multiple of 32), data.
 * The quantized blocks changed under these files: GGJT v2 reordered the
 * 4- and 5-bit quants' nibbles, v3 made Q4_0/Q4_1/Q8_0 scales f16. Only
 * blocks laid out as today's ggml are read; older ones are refused. */
#include "formats/formats.h"
#include "core/core.h"

#include <stdlib.h>

#define MAGIC_GGML 0x67676d6cu
#define MAGIC_GGMF 0x67676d66u
#define MAGIC_GGJT 0x67676a74u
#define LEGACY_MAX_DIMS 4
#define MAX_TOKEN_LEN 65536
#define MAX_NAME_LEN 4096

typedef struct legacy {
    mf_model *m;
    mf_cursor c;
    uint32_t fi;
    const char *kind; /* "GGML", "GGMF", "GGJT" */
    uint32_t version; /* 0 for GGML */
    bool scores, aligned;
    mf_status *st;
} legacy;

static const char *const hparam_names[] = {"n_vocab", "n_embd", "n_mult", "n_head",
                                           "n_layer", "n_rot", "ftype"};

/* llama.cpp's llama_ftype of the time (the file's "mostly" type). */
static const char *ftype_name(uint32_t f)
{
    static const char *const names[] = {
        "ALL_F32", "MOSTLY_F16", "MOSTLY_Q4_0", "MOSTLY_Q4_1", "MOSTLY_Q4_1_SOME_F16",
        "MOSTLY_Q4_2", "MOSTLY_Q4_3", "MOSTLY_Q8_0", "MOSTLY_Q5_0", "MOSTLY_Q5_1",
        "MOSTLY_Q2_K", "MOSTLY_Q3_K_S", "MOSTLY_Q3_K_M", "MOSTLY_Q3_K_L", "MOSTLY_Q4_K_S",
        "MOSTLY_Q4_K_M", "MOSTLY_Q5_K_S", "MOSTLY_Q5_K_M", "MOSTLY_Q6_K"};
    return f < sizeof(names) / sizeof(names[0]) ? names[f] : "unknown";
}

/* ggml_type ids of mid-2023: 0-15 are today's, 4 and 5 were Q4_2 and Q4_3
 * (removed in May 2023), 16-18 were I8, I16, I32 (now 24-26). */
static mf_dtype legacy_dtype(uint32_t type)
{
    switch (type) {
    case 4: case 5: return MF_DTYPE_INVALID;
    case 16: return MF_I8;
    case 17: return MF_I16;
    case 18: return MF_I32;
    }
    return type <= 15 ? mf_dtype_from_ggml(type) : MF_DTYPE_INVALID;
}

static const char *legacy_type_name(uint32_t type)
{
    return type == 4 ? "Q4_2" : type == 5 ? "Q4_3" : mf_dtype_name(legacy_dtype(type));
}

/* Whether this file's blocks of `dt` are laid out as ggml's today: NULL,
 * or why not. */
static const char *old_layout(const legacy *g, mf_dtype dt)
{
    const mf_dtype_info *di = mf_dtype_info_of(dt);
    if (!di || !di->is_quant)
        return NULL;
    bool v3 = g->version >= 3 && g->aligned;
    bool v2 = g->version == 2 && g->aligned;
    if (v3)
        return NULL;
    if (v2 && (dt == MF_Q5_0 || dt == MF_Q5_1))
        return NULL;
    if (v2)
        return "GGJT v2 stored it with an f32 scale (GGJT v3 made it f16)";
    return "files before GGJT v2 stored it with the old nibble order";
}

/* Every file this reader accepts is one convert_llama_ggml_to_gguf.py
 * converts (it refuses the old quant layouts, as we do). */
static void note_obsolete(legacy *g)
{
    char what[32];
    snprintf(what, sizeof(what), g->version ? "%s v%u" : "%s", g->kind, g->version);
    mf_model_note(g->m,
                  "%s is an obsolete llama.cpp format: since August 2023 llama.cpp reads only "
                  "GGUF. Convert it with llama.cpp's convert_llama_ggml_to_gguf.py --input FILE "
                  "--output FILE.gguf",
                  what);
}

static int read_magic(legacy *g)
{
    uint32_t magic;
    if (mf_cur_u32(&g->c, &magic, "magic"))
        return -1;
    if (magic == MAGIC_GGML) {
        g->kind = "GGML";
        return 0;
    }
    if (magic != MAGIC_GGMF && magic != MAGIC_GGJT)
        return mf_fail(g->st, MF_ERR_FORMAT, g->c.file, 0,
                       "magic %08x is not 'ggml', 'ggmf' or 'ggjt'", magic);
    g->kind = magic == MAGIC_GGMF ? "GGMF" : "GGJT";
    g->scores = true;
    g->aligned = magic == MAGIC_GGJT;
    if (mf_cur_u32(&g->c, &g->version, "version"))
        return -1;
    uint32_t max = magic == MAGIC_GGMF ? 1 : 3;
    if (g->version < 1 || g->version > max)
        return mf_fail(g->st, MF_ERR_FORMAT, g->c.file, 4, "%s version %u does not exist (1%s)",
                       g->kind, g->version, max == 1 ? " only" : " to 3");
    return 0;
}

static int read_hparams(legacy *g, uint32_t hp[7])
{
    for (int i = 0; i < 7; i++) {
        uint64_t at = mf_cur_off(&g->c);
        if (mf_cur_u32(&g->c, &hp[i], hparam_names[i]))
            return -1;
        char key[32];
        snprintf(key, sizeof(key), "hparams.%s", hparam_names[i]);
        mf_kv *kv = mf_model_add_meta(g->m, key, g->st);
        if (!kv)
            return -1;
        kv->v = mf_value_uint(hp[i]);
        kv->offset = at;
    }
    mf_kv *kv = mf_model_add_meta(g->m, "hparams.ftype_name", g->st);
    if (!kv)
        return -1;
    const char *fn = ftype_name(hp[6]);
    kv->v = mf_value_str(g->m->arena, fn, strlen(fn));
    return 0;
}

/* The vocabulary as GGUF names it: tokenizer.ggml.tokens (+ .scores). */
static int read_vocab(legacy *g, uint32_t n_vocab)
{
    uint64_t at = mf_cur_off(&g->c), min = g->scores ? 8 : 4, need;
    if (mf_mul_ovf(n_vocab, min, &need) || need > mf_cur_left(&g->c))
        return mf_cur_fail(&g->c,
                           "n_vocab %u tokens cannot fit in the %llu bytes left (mfmt reads "
                           "llama.cpp's layout; other ggml example models had their own)",
                           n_vocab, (unsigned long long)mf_cur_left(&g->c));
    mf_kv *tk = mf_model_add_meta(g->m, "tokenizer.ggml.tokens", g->st);
    mf_value *toks = tk ? mf_arena_calloc(g->m->arena, n_vocab ? n_vocab : 1, sizeof(mf_value)) : NULL;
    mf_value *scores = NULL;
    if (toks && g->scores)
        scores = mf_arena_calloc(g->m->arena, n_vocab ? n_vocab : 1, sizeof(mf_value));
    if (!toks || (g->scores && !scores))
        return mf_oom(g->st, g->c.file);
    tk->offset = at;
    tk->v.type = MF_V_ARR;
    tk->v.as.arr.elem = MF_V_STR;
    tk->v.as.arr.n = n_vocab;
    tk->v.as.arr.items = toks;
    for (uint32_t i = 0; i < n_vocab; i++) {
        uint32_t len;
        const uint8_t *p;
        if (mf_cur_u32(&g->c, &len, "token length"))
            return -1;
        if (len > MAX_TOKEN_LEN || len > mf_cur_left(&g->c))
            return mf_cur_fail(&g->c, "token %u: length %u is past the end or absurd (mfmt reads "
                               "llama.cpp's layout; other ggml example models had their own)",
                               i, len);
        mf_cur_bytes(&g->c, len, &p, "token");
        toks[i] = mf_value_str(g->m->arena, (const char *)p, len);
        if (toks[i].type == MF_V_NULL)
            return mf_oom(g->st, g->c.file);
        if (g->scores) {
            uint32_t bits;
            if (mf_cur_u32(&g->c, &bits, "token score"))
                return -1;
            float f;
            memcpy(&f, &bits, 4);
            scores[i].type = MF_V_F32;
            scores[i].as.f = f;
        }
    }
    if (g->scores) {
        mf_kv *sk = mf_model_add_meta(g->m, "tokenizer.ggml.scores", g->st);
        if (!sk)
            return -1;
        sk->offset = at;
        sk->v.type = MF_V_ARR;
        sk->v.as.arr.elem = MF_V_F32;
        sk->v.as.arr.n = n_vocab;
        sk->v.as.arr.items = scores;
    }
    return 0;
}

/* One tensor record; returns 0, or -1 with st filled. */
static int read_tensor(legacy *g)
{
    uint64_t at = mf_cur_off(&g->c);
    uint32_t n_dims, name_len, type, ne[LEGACY_MAX_DIMS];
    if (mf_cur_u32(&g->c, &n_dims, "tensor n_dims") ||
        mf_cur_u32(&g->c, &name_len, "tensor name length") ||
        mf_cur_u32(&g->c, &type, "tensor type"))
        return -1;
    if (n_dims < 1 || n_dims > LEGACY_MAX_DIMS)
        return mf_fail(g->st, MF_ERR_FORMAT, g->c.file, (int64_t)at,
                       "tensor record: n_dims %u is not 1 to %d", n_dims, LEGACY_MAX_DIMS);
    for (uint32_t i = 0; i < n_dims; i++)
        if (mf_cur_u32(&g->c, &ne[i], "tensor ne"))
            return -1;
    if (name_len == 0 || name_len > MAX_NAME_LEN || name_len > mf_cur_left(&g->c))
        return mf_fail(g->st, MF_ERR_FORMAT, g->c.file, (int64_t)at + 4,
                       "tensor record: name length %u is 0, absurd or past the end", name_len);
    const uint8_t *np;
    mf_cur_bytes(&g->c, name_len, &np, "tensor name");
    mf_tensor *t = mf_model_add_tensor(g->m, g->st);
    if (!t)
        return -1;
    t->name = mf_arena_strndup(g->m->arena, (const char *)np, name_len);
    if (!t->name)
        return mf_oom(g->st, g->c.file);
    mf_dtype dt = legacy_dtype(type);
    if (dt == MF_DTYPE_INVALID)
        return mf_fail(g->st, type == 4 || type == 5 ? MF_ERR_UNSUPPORTED : MF_ERR_FORMAT,
                       g->c.file, (int64_t)at + 8, "tensor \"%s\": type %u (%s) %s", t->name,
                       type, type == 4 || type == 5 ? legacy_type_name(type) : "unknown",
                       type == 4 || type == 5
                           ? "was removed from ggml in May 2023; no tool reads it now"
                           : "is not a ggml type of that era");
    const char *why = old_layout(g, dt);
    if (why)
        return mf_fail(g->st, MF_ERR_UNSUPPORTED, g->c.file, (int64_t)at + 8,
                       "tensor \"%s\": %s blocks in a %s v%u file are not ggml's current %s: %s. "
                       "Make a GGUF from the original weights instead (llama.cpp's "
                       "convert_llama_ggml_to_gguf.py refuses it too)",
                       t->name, mf_dtype_name(dt), g->kind, g->version, mf_dtype_name(dt), why);
    t->dtype = dt;
    t->ndim = (int)n_dims;
    for (uint32_t i = 0; i < n_dims; i++) /* ne is fastest-first: reverse */
        t->shape[n_dims - 1 - i] = ne[i];
    if (mf_tensor_set_nbytes(t, g->c.file, (int64_t)at, g->st))
        return -1;
    if (g->aligned) {
        uint64_t pad = mf_align_up(mf_cur_off(&g->c), 32) - mf_cur_off(&g->c);
        if (mf_cur_skip(&g->c, pad, "tensor alignment padding"))
            return -1;
    }
    t->file = g->fi;
    t->offset = mf_cur_off(&g->c);
    if (t->nbytes > mf_cur_left(&g->c))
        return mf_fail(g->st, MF_ERR_FORMAT, g->c.file, (int64_t)t->offset,
                       "tensor \"%s\": %llu bytes of %s data run past the end of the file "
                       "(%llu left)",
                       t->name, (unsigned long long)t->nbytes, mf_dtype_name(dt),
                       (unsigned long long)mf_cur_left(&g->c));
    t->data = g->c.base + t->offset;
    mf_cur_skip(&g->c, t->nbytes, "tensor data");
    return 0;
}

static void check_duplicate_names(legacy *g)
{
    mf_model *m = g->m;
    mf_strset names = {0};
    for (size_t i = 0; i < m->n_tensors; i++) {
        int added = mf_strset_add(&names, m->tensors[i].name);
        if (added < 0) {
            mf_oom(g->st, g->c.file);
            break;
        }
        if (added == 0)
            mf_breach(g->st, g->c.file, (int64_t)m->tensors[i].offset,
                      "tensor \"%s\" appears twice", m->tensors[i].name);
    }
    mf_strset_free(&names);
}

static int open_ggml_legacy(mf_model *m, const char *path, unsigned flags, mf_status *st)
{
    legacy g = {.m = m, .st = st};
    if (mf_model_add_file(m, path, &g.fi, st))
        return -1;
    const mf_file *f = &m->files[g.fi];
    mf_cur_init(&g.c, f->base, f->size, path, st);
    uint32_t hp[7];
    if (read_magic(&g) || read_hparams(&g, hp))
        return -1;
    if (g.version)
        snprintf(m->version, sizeof(m->version), "%s v%u", g.kind, g.version);
    else
        snprintf(m->version, sizeof(m->version), "%s", g.kind);
    if (read_vocab(&g, hp[0]))
        return -1;
    m->header_bytes = mf_cur_off(&g.c);
    while (mf_cur_left(&g.c) > 0) {
        uint64_t before = mf_cur_off(&g.c);
        if (read_tensor(&g))
            return -1;
        m->header_bytes += mf_cur_off(&g.c) - before - m->tensors[m->n_tensors - 1].nbytes;
    }
    check_duplicate_names(&g);
    note_obsolete(&g);
    return mf_ok(st) ? 0 : -1;
}

/* ------------------------------------------------------------- detection */

static int probe_ggml_legacy(mf_probe *p)
{
    if (p->size < 4)
        return MF_PROBE_NO;
    switch (mf_rd32le(p->b)) {
    case 0x67676d6cu: return mf_probe_found(p, MF_FMT_GGML_LEGACY, "GGML (unversioned, obsolete)");
    case 0x67676d66u: return mf_probe_found(p, MF_FMT_GGML_LEGACY, "GGMF (obsolete)");
    case 0x67676a74u: return mf_probe_found(p, MF_FMT_GGML_LEGACY, "GGJT v%u (obsolete)",
                                            p->size >= 8 ? mf_rd32le(p->b + 4) : 0);
    }
    return MF_PROBE_NO;
}

const mf_reader mf_reader_ggml_legacy = {
    .format = MF_FMT_GGML_LEGACY,
    .data_only = true, /* numbers and names: loading runs nothing */
    .name = "ggml-legacy",
    .probe = probe_ggml_legacy,
    .open = open_ggml_legacy,
};
