/* gguf_edit.c - the GGUF reader's rewrite hook: a new header (metadata in
 * the order given, tensor infos renamed) in front of the original data
 * section, copied as bytes. Before anything is written the edit is checked
 * against what llama.cpp's loader demands of the keys it reads (exact GGUF
 * types: llama-model-loader's get_key refuses "wrong type"), unless
 * MF_EDIT_FORCE. */
#include "formats/gguf/gguf_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define GGML_MAX_NAME 64 /* ggml.h: names are at most 63 bytes + NUL */

/* A key llama.cpp reads and the one type it accepts (ARRAY_OK: also an
 * array of u32/i32, as get_key_or_arr reads per-layer values). */
typedef struct key_rule {
    const char *key; /* "%s." prefixed keys carry the architecture */
    mf_vtype type;
    bool arch, array_ok;
} key_rule;

static const key_rule rules[] = {
    {"general.architecture", MF_V_STR, false, false},
    {"general.name", MF_V_STR, false, false},
    {"general.file_type", MF_V_U32, false, false},
    {"general.quantization_version", MF_V_U32, false, false},
    {"general.alignment", MF_V_U32, false, false},
    {"vocab_size", MF_V_U32, true, false},
    {"context_length", MF_V_U32, true, false},
    {"embedding_length", MF_V_U32, true, false},
    {"block_count", MF_V_U32, true, false},
    {"leading_dense_block_count", MF_V_U32, true, false},
    {"feed_forward_length", MF_V_U32, true, true},
    {"expert_feed_forward_length", MF_V_U32, true, false},
    {"expert_shared_feed_forward_length", MF_V_U32, true, false},
    {"expert_count", MF_V_U32, true, false},
    {"expert_used_count", MF_V_U32, true, false},
    {"expert_shared_count", MF_V_U32, true, false},
    {"expert_weights_scale", MF_V_F32, true, false},
    {"pooling_type", MF_V_U32, true, false},
    {"logit_scale", MF_V_F32, true, false},
    {"embedding_scale", MF_V_F32, true, false},
    {"residual_scale", MF_V_F32, true, false},
    {"use_parallel_residual", MF_V_BOOL, true, false},
    {"attn_logit_softcapping", MF_V_F32, true, false},
    {"final_logit_softcapping", MF_V_F32, true, false},
    {"attention.head_count", MF_V_U32, true, true},
    {"attention.head_count_kv", MF_V_U32, true, true},
    {"attention.key_length", MF_V_U32, true, false},
    {"attention.value_length", MF_V_U32, true, false},
    {"attention.layer_norm_epsilon", MF_V_F32, true, false},
    {"attention.layer_norm_rms_epsilon", MF_V_F32, true, false},
    {"attention.causal", MF_V_BOOL, true, false},
    {"attention.sliding_window", MF_V_U32, true, false},
    {"attention.scale", MF_V_F32, true, false},
    {"attention.q_lora_rank", MF_V_U32, true, false},
    {"attention.kv_lora_rank", MF_V_U32, true, false},
    {"rope.dimension_count", MF_V_U32, true, false},
    {"rope.freq_base", MF_V_F32, true, false},
    {"rope.scale_linear", MF_V_F32, true, false},
    {"rope.scaling.type", MF_V_STR, true, false},
    {"rope.scaling.factor", MF_V_F32, true, false},
    {"rope.scaling.attn_factor", MF_V_F32, true, false},
    {"rope.scaling.original_context_length", MF_V_U32, true, false},
    {"ssm.conv_kernel", MF_V_U32, true, false},
    {"ssm.inner_size", MF_V_U32, true, false},
    {"ssm.state_size", MF_V_U32, true, false},
    {"ssm.time_step_rank", MF_V_U32, true, false},
    {"tokenizer.ggml.model", MF_V_STR, false, false},
    {"tokenizer.ggml.pre", MF_V_STR, false, false},
    {"tokenizer.ggml.bos_token_id", MF_V_U32, false, false},
    {"tokenizer.ggml.eos_token_id", MF_V_U32, false, false},
    {"tokenizer.ggml.unknown_token_id", MF_V_U32, false, false},
    {"tokenizer.ggml.seperator_token_id", MF_V_U32, false, false},
    {"tokenizer.ggml.padding_token_id", MF_V_U32, false, false},
    {"tokenizer.ggml.cls_token_id", MF_V_U32, false, false},
    {"tokenizer.ggml.mask_token_id", MF_V_U32, false, false},
    {"tokenizer.ggml.eot_token_id", MF_V_U32, false, false},
    {"tokenizer.ggml.eom_token_id", MF_V_U32, false, false},
    {"tokenizer.ggml.add_bos_token", MF_V_BOOL, false, false},
    {"tokenizer.ggml.add_eos_token", MF_V_BOOL, false, false},
    {"tokenizer.ggml.add_space_prefix", MF_V_BOOL, false, false},
    {"tokenizer.ggml.remove_extra_whitespaces", MF_V_BOOL, false, false},
    {"tokenizer.chat_template", MF_V_STR, false, false},
};

/* Arrays llama-vocab reads by element type. */
static const struct { const char *key; mf_vtype elem; } array_rules[] = {
    {"tokenizer.ggml.tokens", MF_V_STR},
    {"tokenizer.ggml.scores", MF_V_F32},
    {"tokenizer.ggml.token_type", MF_V_I32},
    {"tokenizer.ggml.merges", MF_V_STR},
};

static const char *vname(mf_vtype t)
{
    static const char *const n[] = {"u8", "i8", "u16", "i16", "u32", "i32", "f32",
                                    "bool", "string", "array", "u64", "i64", "f64"};
    return (unsigned)t < sizeof(n) / sizeof(n[0]) ? n[t] : "?";
}

static const mf_kv *find(const mf_rewrite *rw, const char *key)
{
    for (size_t i = 0; i < rw->n_meta; i++)
        if (!strcmp(rw->meta[i].key, key))
            return &rw->meta[i];
    return NULL;
}

static const char *const force_hint = " (--force writes it anyway)";

static const key_rule *rule_for(const char *key, const char *arch)
{
    size_t al = arch ? strlen(arch) : 0;
    for (size_t r = 0; r < sizeof(rules) / sizeof(rules[0]); r++) {
        const key_rule *k = &rules[r];
        if (k->arch ? arch && !strncmp(key, arch, al) && key[al] == '.' &&
                          !strcmp(key + al + 1, k->key)
                    : !strcmp(key, k->key))
            return k;
    }
    return NULL;
}

mf_vtype mf_gguf_key_type(const mf_model *m, const char *key)
{
    const mf_value *arch = mf_meta_get(m, "general.architecture");
    const key_rule *k = rule_for(key, arch && arch->type == MF_V_STR ? arch->as.s.ptr : NULL);
    return k ? k->type : MF_V_NULL;
}

/* The type llama.cpp reads `kv` as (llama_model_loader::get_key throws
 * "key ... has wrong type", llama-vocab asserts its arrays' types); hint
 * ends the message. */
static int check_key_type(const char *file, const mf_kv *kv, const char *arch, const char *hint,
                          mf_status *st)
{
    const key_rule *k = rule_for(kv->key, arch);
    if (k) {
        bool ok = kv->v.type == k->type ||
                  (k->array_ok && kv->v.type == MF_V_ARR &&
                   (kv->v.as.arr.elem == MF_V_U32 || kv->v.as.arr.elem == MF_V_I32));
        if (!ok)
            return mf_fail(st, MF_ERR_USAGE, file, -1,
                           "%s must be a %s for llama.cpp, not a %s%s", kv->key, vname(k->type),
                           vname(kv->v.type), hint);
        return 0;
    }
    for (size_t r = 0; r < sizeof(array_rules) / sizeof(array_rules[0]); r++)
        if (!strcmp(kv->key, array_rules[r].key) &&
            (kv->v.type != MF_V_ARR || kv->v.as.arr.elem != array_rules[r].elem))
            return mf_fail(st, MF_ERR_USAGE, file, -1,
                           "%s must be an array of %s for llama.cpp%s", kv->key,
                           vname(array_rules[r].elem), hint);
    return 0;
}

int mf_gguf_check_key(const mf_model *m, const mf_kv *kv, mf_status *st)
{
    const mf_value *arch = mf_meta_get(m, "general.architecture");
    /* no file name: validate's report already names the file */
    return check_key_type(NULL, kv, arch && arch->type == MF_V_STR ? arch->as.s.ptr : NULL, "", st);
}

/* tokens, scores and token types are read in step: equal lengths. */
static int check_vocab_lengths(const mf_model *m, const mf_rewrite *rw, mf_status *st)
{
    const mf_kv *tok = find(rw, "tokenizer.ggml.tokens");
    const char *others[] = {"tokenizer.ggml.scores", "tokenizer.ggml.token_type"};
    for (size_t i = 0; tok && tok->v.type == MF_V_ARR && i < 2; i++) {
        const mf_kv *o = find(rw, others[i]);
        if (o && o->v.type == MF_V_ARR && o->v.as.arr.n != tok->v.as.arr.n)
            return mf_fail(st, MF_ERR_USAGE, m->path, -1,
                           "%s has %zu entries but tokenizer.ggml.tokens has %zu%s", others[i],
                           o->v.as.arr.n, tok->v.as.arr.n, force_hint);
    }
    return 0;
}

static bool value_equal_u32(const mf_kv *kv, uint64_t x)
{
    return kv && kv->v.type == MF_V_U32 && kv->v.as.u == x;
}

static int check_rules(const mf_model *m, const mf_rewrite *rw, const mf_gguf_layout *l,
                       mf_status *st)
{
    const mf_kv *arch = find(rw, "general.architecture");
    if (!arch && mf_meta_get(m, "general.architecture"))
        return mf_fail(st, MF_ERR_USAGE, m->path, -1,
                       "general.architecture is required by llama.cpp; it cannot be deleted%s",
                       force_hint);
    /* llama.cpp picks the loader, the ARCH.* key prefix and the tensor set
     * from general.architecture: the other keys and tensors were written
     * for the old one, so a new name makes a model it loads as another. */
    const mf_value *old_arch = mf_meta_get(m, "general.architecture");
    if (arch && old_arch && !mf_value_equal(&arch->v, old_arch))
        return mf_fail(st, MF_ERR_USAGE, m->path, -1,
                       "general.architecture: changing \"%s\" to \"%s\" leaves every %s.* key "
                       "and tensor name written for the old architecture%s",
                       old_arch->type == MF_V_STR ? old_arch->as.s.ptr : "?",
                       arch->v.type == MF_V_STR ? arch->v.as.s.ptr : "(not a string)",
                       old_arch->type == MF_V_STR ? old_arch->as.s.ptr : "?", force_hint);
    const mf_kv *al = find(rw, "general.alignment");
    bool had = mf_meta_get(m, "general.alignment") != NULL;
    if ((al || had) && !(al && value_equal_u32(al, l->alignment)))
        return mf_fail(st, MF_ERR_USAGE, m->path, -1,
                       "general.alignment fixes where every tensor starts; changing it moves "
                       "all tensor data%s",
                       force_hint);
    for (size_t i = 0; i < rw->n_meta; i++) {
        const mf_kv *kv = &rw->meta[i];
        const mf_value *old = mf_meta_get(m, kv->key);
        if (!strncmp(kv->key, "split.", 6) && (!old || old->type != kv->v.type ||
                                               (old->type != MF_V_STR && old->as.u != kv->v.as.u)))
            return mf_fail(st, MF_ERR_USAGE, m->path, -1,
                           "%s ties this file to the other files of its split set%s", kv->key,
                           force_hint);
        if (check_key_type(m->path, kv, arch && arch->v.type == MF_V_STR ? arch->v.as.s.ptr : NULL,
                           force_hint, st))
            return -1;
    }
    for (size_t i = 0; i < m->n_meta; i++)
        if (!strncmp(m->meta[i].key, "split.", 6) && !find(rw, m->meta[i].key))
            return mf_fail(st, MF_ERR_USAGE, m->path, -1,
                           "%s ties this file to the other files of its split set%s",
                           m->meta[i].key, force_hint);
    for (size_t i = 0; i < rw->n_rename; i++)
        if (strlen(rw->rename_to[i]) >= GGML_MAX_NAME)
            return mf_fail(st, MF_ERR_USAGE, m->path, -1,
                           "tensor name \"%s\" is longer than ggml's %d-byte limit%s",
                           rw->rename_to[i], GGML_MAX_NAME - 1, force_hint);
    return check_vocab_lengths(m, rw, st);
}

/* general.alignment of the new metadata: always a u32 power of two (GGUF
 * itself needs it, forced or not). */
static int new_alignment(const mf_model *m, const mf_rewrite *rw, uint64_t *out, mf_status *st)
{
    const mf_kv *al = find(rw, "general.alignment");
    *out = 32;
    if (!al)
        return 0;
    if (al->v.type != MF_V_U32 || !al->v.as.u || (al->v.as.u & (al->v.as.u - 1)))
        return mf_fail(st, MF_ERR_USAGE, m->path, -1,
                       "general.alignment must be a u32 power of two (GGUF rule)");
    *out = al->v.as.u;
    return 0;
}

static const char *renamed(const mf_rewrite *rw, const char *name)
{
    for (size_t i = 0; i < rw->n_rename; i++)
        if (!strcmp(rw->rename_from[i], name))
            return rw->rename_to[i];
    return name;
}

/* The tensors of file 0 as the new header lists them. When the alignment
 * changes, each tensor moves to the next multiple of it (in data order). */
static int build_infos(const mf_model *m, const mf_rewrite *rw, const mf_gguf_layout *l,
                       uint64_t align, mf_gguf_tinfo *ti, size_t *n_out, mf_status *st)
{
    size_t n = 0;
    uint64_t off = 0;
    for (size_t i = 0; i < m->n_tensors; i++) {
        const mf_tensor *t = &m->tensors[i];
        if (t->file != 0 || t->owner)
            continue;
        const mf_dtype_info *di = mf_dtype_info_of(t->dtype);
        uint64_t rel = t->offset - l->data_start;
        if (align != l->alignment) { /* the reader checked tensors lie in order */
            rel = mf_align_up(off, align);
            off = rel + t->nbytes;
        }
        ti[n++] = (mf_gguf_tinfo){.name = renamed(rw, t->name), .ndim = t->ndim,
                                  .shape = t->shape, .ggml_type = di ? di->ggml_id : -1,
                                  .rel_offset = rel};
    }
    for (size_t i = 0; i < rw->n_rename; i++) {
        const mf_tensor *t = mf_tensor_find(m, rw->rename_from[i]);
        if (t && (t->file != 0 || t->owner))
            return mf_fail(st, MF_ERR_USAGE, m->path, -1,
                           "tensor \"%s\" lives in another file of the split set; edit that file",
                           t->name);
    }
    *n_out = n;
    return 0;
}

/* The output may replace the input itself, never another file it reads
 * (the shared rule, core/atomic.c). */
static int check_output(const mf_model *m, const char *out, mf_status *st)
{
    return mf_output_check_replacing(m, m->files[0].path, out, st);
}

static int write_edited(const mf_model *m, const mf_rewrite *rw, const mf_gguf_layout *l,
                        const mf_gguf_buf *hdr, const mf_gguf_tinfo *ti, size_t n, uint64_t align,
                        mf_status *st)
{
    const mf_file *f = &m->files[0];
    int fd = open(f->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return mf_fail(st, MF_ERR_IO, f->path, -1, "cannot reopen: %s", strerror(errno));
    mf_atomic *w;
    int rc = mf_atomic_open(rw->out, &w, st);
    if (rc == 0)
        rc = mf_atomic_write(w, hdr->p, hdr->n, st);
    if (rc == 0 && align == l->alignment) {
        rc = mf_atomic_copy_from(w, fd, l->data_start,
                                 f->size > l->data_start ? f->size - l->data_start : 0, st);
    } else {
        static const uint8_t zeros[256];
        uint64_t at = 0;
        for (size_t i = 0, k = 0; rc == 0 && i < m->n_tensors; i++) {
            const mf_tensor *t = &m->tensors[i];
            if (t->file != 0 || t->owner)
                continue;
            while (rc == 0 && at < ti[k].rel_offset) {
                uint64_t gap = ti[k].rel_offset - at;
                size_t z = gap < sizeof(zeros) ? (size_t)gap : sizeof(zeros);
                rc = mf_atomic_write(w, zeros, z, st);
                at += z;
            }
            if (rc == 0)
                rc = mf_atomic_copy_from(w, fd, t->offset, t->nbytes, st);
            at += t->nbytes;
            k++;
        }
    }
    close(fd);
    if (rc == 0)
        return mf_atomic_commit(w, st);
    if (w)
        mf_atomic_abort(w);
    return rc;
}

int mf_gguf_rewrite(const mf_model *m, const mf_rewrite *rw, mf_status *st)
{
    const mf_gguf_layout *l = m->priv;
    if (!l)
        return mf_oom(st, m->path);
    if (l->big_endian)
        return mf_fail(st, MF_ERR_UNSUPPORTED, m->path, 4,
                       "editing a big-endian GGUF is not supported");
    if (!(rw->flags & MF_EDIT_FORCE) && check_rules(m, rw, l, st))
        return -1;
    uint64_t align;
    if (new_alignment(m, rw, &align, st) || check_output(m, rw->out, st))
        return -1;
    mf_gguf_tinfo *ti = calloc(m->n_tensors ? m->n_tensors : 1, sizeof(*ti));
    if (!ti)
        return mf_oom(st, m->path);
    size_t n = 0;
    mf_gguf_buf hdr = {0};
    int rc = build_infos(m, rw, l, align, ti, &n, st);
    size_t unpadded = 0;
    if (rc == 0)
        rc = mf_gguf_header_build(&hdr, l->version, rw->meta, rw->n_meta, ti, n, align,
                                  &unpadded, rw->out, st);
    if (rc == 0) {
        const mf_file *f = &m->files[0];
        /* a file of metadata only (a vocab GGUF) may end before the padding */
        bool tail_unpadded = n == 0 && f->size < l->data_start;
        if (tail_unpadded)
            hdr.n = unpadded;
        *rw->old_header_bytes = tail_unpadded ? f->size : l->data_start;
        *rw->new_header_bytes = hdr.n;
        *rw->data_bytes = f->size > l->data_start ? f->size - l->data_start : 0;
        if (align != l->alignment) /* moved tensors: the data they span now */
            for (size_t i = 0, k = 0; i < m->n_tensors; i++)
                if (m->tensors[i].file == 0 && !m->tensors[i].owner)
                    *rw->data_bytes = ti[k++].rel_offset + m->tensors[i].nbytes;
        if (!(rw->flags & MF_EDIT_DRY_RUN))
            rc = write_edited(m, rw, l, &hdr, ti, n, align, st);
    }
    free(hdr.p);
    free(ti);
    return rc;
}
