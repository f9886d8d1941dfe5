/* deepspeed.c - a DeepSpeed checkpoint folder (the tag folder, or its
 * parent holding `latest`) read as the merged model, as DeepSpeed's
 * utils/zero_to_fp32.py consolidates it (microsoft/DeepSpeed 38327e07f6cd):
 *
 *  - *_model_states.pt (rank 0: mp_rank_00_model_states.pt; ZeRO-3:
 *    zero_pp_rank_R_mp_rank_00_model_states.pt per rank) holds `module` (the
 *    bf16/fp16 state dict; ZeRO-3: empty placeholders), buffer_names,
 *    param_shapes (one ordered name -> shape dict per parameter group: the
 *    order the flat partitions are laid out in), frozen_param_shapes and
 *    frozen_param_fragments, shared_params (tied name -> holder);
 *  - [bf16_]zero_pp_rank_R_mp_rank_00_optim_states.pt per data-parallel rank
 *    holds optimizer_state_dict with zero_stage, partition_count and the
 *    fp32 master weights: ZeRO-1/2 single_partition_of_fp32_groups (rank
 *    R's slice of each group's flat vector, padding stripped), ZeRO-3
 *    fp32_flat_groups (per parameter, ceil(numel / world) elements of each
 *    rank, the last padded).
 *
 * Tensors come out in zero_to_fp32's order: buffers (as float32), frozen
 * parameters, trainable parameters by group, tied names. Each is a list of
 * pieces of the partitions, streamed without building the flat vectors. */
#include "formats/train/train.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_RANKS 65536

typedef struct ds_files {
    char *model0;        /* mp_rank_00_model_states.pt, or ZeRO-3's rank 0 */
    char **model3;       /* ZeRO-3: zero_pp_rank_R_mp_rank_00_model_states.pt */
    char **optim;        /* by rank */
    size_t n_model3, n_optim;
    const char *dir, *tag;
} ds_files;

/* "zero_pp_rank_12_mp_rank_00_optim_states.pt" (with a bf16_/fp16_ prefix)
 * -> 12; kind: "optim" or "model". -1 when not such a name. */
static long zero_rank(const char *name, const char *kind)
{
    const char *p = name;
    if (!strncmp(p, "bf16_", 5) || !strncmp(p, "fp16_", 5))
        p += 5;
    if (strncmp(p, "zero_pp_rank_", 13))
        return -1;
    char *end;
    long r = strtol(p + 13, &end, 10);
    char want[64];
    snprintf(want, sizeof(want), "_mp_rank_00_%s_states.pt", kind);
    if (end == p + 13 || r < 0 || r >= MAX_RANKS || strcmp(end, want))
        return -1;
    return r;
}

static int put_rank(mf_model *m, char ***v, size_t *n, long r, const char *path, mf_status *st)
{
    if ((size_t)r >= *n) {
        char **nv = mf_arena_calloc(m->arena, (size_t)r + 1, sizeof(char *));
        if (!nv)
            return mf_oom(st, path);
        if (*n)
            memcpy(nv, *v, *n * sizeof(char *));
        *v = nv;
        *n = (size_t)r + 1;
    }
    if ((*v)[r])
        return mf_fail(st, MF_ERR_FORMAT, path, -1,
                       "two files hold data-parallel rank %ld (also %s)", r, (*v)[r]);
    (*v)[r] = mf_arena_strdup(m->arena, path);
    return (*v)[r] ? 0 : mf_oom(st, path);
}

static int list_files(mf_model *m, const char *dir, ds_files *f, mf_status *st)
{
    DIR *d = mf_opendir(dir);
    if (!d)
        return mf_fail(st, MF_ERR_IO, dir, -1, "cannot list the checkpoint folder");
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        long r;
        char *p = mf_path_join(m->arena, dir, e->d_name);
        if (!p) {
            rc = mf_oom(st, dir);
        } else if (strcmp(e->d_name, "mp_rank_00_model_states.pt") == 0) {
            f->model0 = p;
        } else if ((r = zero_rank(e->d_name, "optim")) >= 0) {
            rc = put_rank(m, &f->optim, &f->n_optim, r, p, st);
        } else if ((r = zero_rank(e->d_name, "model")) >= 0) {
            rc = put_rank(m, &f->model3, &f->n_model3, r, p, st);
        }
    }
    closedir(d);
    if (rc)
        return -1;
    if (!f->model0 && f->n_model3)
        f->model0 = f->model3[0];
    if (!f->model0)
        return mf_fail(st, MF_ERR_FORMAT, dir, -1,
                       "no mp_rank_00_model_states.pt nor zero_pp_rank_0_mp_rank_00_model_states.pt "
                       "(DeepSpeed writes one of them in every checkpoint)");
    for (size_t r = 0; r < f->n_optim; r++)
        if (!f->optim[r])
            return mf_fail(st, MF_ERR_FORMAT, dir, -1,
                           "optimizer partition of data-parallel rank %zu is missing "
                           "(zero_pp_rank_%zu_mp_rank_00_optim_states.pt): ranks 0..%zu must all "
                           "be there", r, r, f->n_optim - 1);
    for (size_t r = 0; r < f->n_model3; r++)
        if (!f->model3[r])
            return mf_fail(st, MF_ERR_FORMAT, dir, -1,
                           "model states of data-parallel rank %zu are missing "
                           "(zero_pp_rank_%zu_mp_rank_00_model_states.pt)", r, r);
    return 0;
}

/* DeepSpeed's load_checkpoint joins `latest`'s text (str.strip()'d) to
 * the folder (engine.py _get_ckpt_name / load_checkpoint): ".." or a '/'
 * (an absolute path, a parent's folder) names files outside this folder,
 * which a scan of it does not reach. Tested on the raw text, wider than
 * strip: any '/' or ".." in it. */
static bool tag_escapes(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] == '/' || (s[i] == '.' && i + 1 < n && s[i + 1] == '.'))
            return true;
    return false;
}

/* The tag folder: PATH/`latest`'s tag when PATH holds `latest`, else PATH;
 * NULL when `latest` names a folder outside PATH (not followed). */
static const char *tag_dir(mf_model *m, const char *path, const char **tag)
{
    char buf[512];
    char *latest = mf_path_join(m->arena, path, "latest");
    *tag = NULL;
    if (latest && tr_read_marker(latest, buf, sizeof(buf)) && tag_escapes(buf, strlen(buf)))
        return NULL;
    if (latest && tr_read_marker(latest, buf, sizeof(buf))) {
        char *d = mf_path_join(m->arena, path, buf);
        if (d && mf_is_dir(d)) {
            *tag = mf_arena_strdup(m->arena, buf);
            return d;
        }
    }
    return path;
}

static bool is_states(const char *name)
{
    return strcmp(name, "mp_rank_00_model_states.pt") == 0 || zero_rank(name, "model") == 0;
}

static int probe_deepspeed(mf_probe *p)
{
    mf_arena *a = mf_arena_new();
    if (!a)
        return MF_PROBE_NO;
    mf_model fake = {.arena = a};
    const char *tag;
    const char *dir = tag_dir(&fake, p->path, &tag);
    /* a `latest` leaving the folder: open says why it is not followed */
    int rc = tr_dir_count(dir ? dir : p->path, is_states) ? mf_probe_found(p, MF_FMT_DEEPSPEED, "DeepSpeed checkpoint%s%s",
                                              tag ? ", tag " : "", tag ? tag : "")
                             : MF_PROBE_NO;
    mf_arena_free(a);
    return rc;
}

/* ------------------------------------------------------------- the merge */

typedef struct ds_ctx {
    mf_model *m;
    unsigned flags;
    ds_files f;
    mf_model *ms0;            /* model states of rank 0 */
    const pk_obj *ms;         /* its root dict */
    mf_model **opt;           /* optimizer shards by rank */
    const pk_obj **osd;       /* their optimizer_state_dict */
    mf_model **ms3;           /* ZeRO-3 model states by rank */
    int64_t stage, world;
    mf_strset names;          /* listed names */
} ds_ctx;

static mf_tensor *add_named(ds_ctx *c, const char *name, mf_dtype dt, mf_dtype src, int nd,
                            const int64_t *shape, mf_status *st)
{
    int r = mf_strset_add(&c->names, name);
    if (r < 0)
        return mf_oom(st, c->m->path), NULL;
    if (r == 0)
        return mf_fail(st, MF_ERR_FORMAT, c->f.model0, -1,
                       "\"%s\" is listed twice (param_shapes, frozen_param_shapes, buffers)",
                       name), NULL;
    mf_tensor *t = tr_add(c->m, name, dt, src, nd, shape, st);
    if (t && mf_strset_add(&c->names, t->name) < 0) /* the set keeps the arena copy */
        return mf_oom(st, c->m->path), NULL;
    return t;
}

static const mf_tensor *shard_tensor(const mf_model *shard, const char *a, const char *b,
                                     mf_status *st)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s.%s", a, b);
    const mf_tensor *t = tr_find(shard, path);
    if (!t && st)
        mf_fail(st, MF_ERR_FORMAT, shard->path, -1, "holds no tensor \"%s\"", path);
    return t;
}

/* A whole shard tensor as the logical tensor `name` (module states, ZeRO-2
 * frozen fragments, buffers). */
static int add_whole(ds_ctx *c, const char *name, const mf_tensor *src, bool widen,
                     mf_status *st)
{
    mf_dtype dt = src->dtype;
    if (widen && (dt == MF_BF16 || dt == MF_F16))
        dt = MF_F32;
    mf_tensor *t = add_named(c, name, dt, src->dtype, src->ndim, src->shape, st);
    if (!t)
        return -1;
    uint64_t n = 1;
    for (int d = 0; d < src->ndim; d++)
        n *= (uint64_t)src->shape[d];
    tr_piece p = {src, c->ms0, 0, n};
    return tr_add_piece(c->m, t, &p, st) || tr_check_cover(c->m, t, st) ? -1 : 0;
}

static bool is_buffer(const pk_obj *names, const char *key)
{
    size_t n;
    pk_obj *const *v = tr_items(names, &n);
    for (size_t i = 0; i < n; i++)
        if (pk_is_str(v[i], key))
            return true;
    return false;
}

static int add_buffers(ds_ctx *c, mf_status *st)
{
    const pk_obj *module = tr_get(c->ms, "module"), *names = tr_get(c->ms, "buffer_names");
    if (!module || module->kind != PK_DICT)
        return mf_fail(st, MF_ERR_FORMAT, c->f.model0, -1,
                       "has no \"module\" state dict (not DeepSpeed model states)");
    for (size_t k = 0; k < module->u.c.n; k++) {
        const pk_obj *key = module->u.c.v[2 * k];
        char *name = pk_cstr(c->m->arena, key);
        if (!name || !is_buffer(names, name))
            continue;
        const mf_tensor *src = shard_tensor(c->ms0, "module", name, st);
        if (!src || add_whole(c, name, src, true, st))
            return -1;
    }
    return 0;
}

/* Every tensor of `module` as it is (stage 0, --from-module-states). */
static int add_module_states(ds_ctx *c, mf_status *st)
{
    const pk_obj *module = tr_get(c->ms, "module");
    if (!module || module->kind != PK_DICT)
        return mf_fail(st, MF_ERR_FORMAT, c->f.model0, -1, "has no \"module\" state dict");
    for (size_t k = 0; k < module->u.c.n; k++) {
        char *name = pk_cstr(c->m->arena, module->u.c.v[2 * k]);
        if (!name)
            continue;
        const mf_tensor *src = shard_tensor(c->ms0, "module", name, st);
        if (!src)
            return -1;
        if (src->nbytes == 0 && c->stage == 3)
            return mf_fail(st, MF_ERR_FORMAT, c->f.model0, -1,
                           "ZeRO-3 module states hold empty placeholders (\"%s\"): the weights "
                           "are only in the optimizer partitions", name);
        if (add_whole(c, name, src, false, st))
            return -1;
    }
    return 0;
}

static int shape_of(ds_ctx *c, const char *name, const pk_obj *v, int *nd, int64_t *shape,
                    uint64_t *numel, mf_status *st)
{
    if (!tr_shape(v, nd, shape))
        return mf_fail(st, MF_ERR_FORMAT, c->f.model0, (int64_t)v->off,
                       "param_shapes: the shape of \"%s\" is not a torch.Size", name);
    *numel = 1;
    for (int d = 0; d < *nd; d++)
        if (mf_mul_ovf(*numel, (uint64_t)shape[d], numel))
            return mf_fail(st, MF_ERR_FORMAT, c->f.model0, (int64_t)v->off,
                           "param_shapes: \"%s\" overflows 64 bits", name);
    return 0;
}

static int add_frozen(ds_ctx *c, mf_status *st)
{
    const pk_obj *shapes = tr_get(c->ms, "frozen_param_shapes");
    if (!shapes || shapes->kind != PK_DICT || (c->flags & MF_OPEN_TRAIN_EXCLUDE_FROZEN))
        return 0;
    for (size_t k = 0; k < shapes->u.c.n; k++) {
        char *name = pk_cstr(c->m->arena, shapes->u.c.v[2 * k]);
        int nd;
        int64_t shape[MF_MAX_DIMS];
        uint64_t numel;
        if (!name || shape_of(c, name, shapes->u.c.v[2 * k + 1], &nd, shape, &numel, st))
            return name ? -1 : mf_oom(st, c->m->path);
        if (c->stage <= 2) { /* the whole parameter, on rank 0 */
            const mf_tensor *src = shard_tensor(c->ms0, "frozen_param_fragments", name, st);
            if (!src || add_whole(c, name, src, false, st))
                return -1;
            continue;
        }
        /* ZeRO-3: every rank's partition, concatenated, cut to numel */
        mf_tensor *t = NULL;
        uint64_t left = numel;
        for (int64_t r = 0; r < c->world; r++) {
            const mf_tensor *src = shard_tensor(c->ms3[r], "frozen_param_fragments", name, st);
            if (!src)
                return -1;
            if (!t && !(t = add_named(c, name, src->dtype, src->dtype, nd, shape, st)))
                return -1;
            uint64_t have = src->nbytes / mf_dtype_info_of(src->dtype)->block_bytes;
            uint64_t take = have < left ? have : left;
            tr_piece p = {src, c->ms3[r], 0, take};
            if (take && tr_add_piece(c->m, t, &p, st))
                return -1;
            left -= take;
        }
        if (t && tr_check_cover(c->m, t, st))
            return -1;
    }
    return 0;
}

/* The fp32 flat tensors of rank r (list under optimizer_state_dict.KEY). */
static int rank_groups(ds_ctx *c, int64_t r, const char *key, const mf_tensor ***out, size_t *n,
                       mf_status *st)
{
    const pk_obj *g = tr_get(c->osd[r], key);
    size_t k;
    if (!tr_items(g, &k) && !(g && (g->kind == PK_LIST || g->kind == PK_TUPLE)))
        return mf_fail(st, MF_ERR_FORMAT, c->f.optim[r], -1,
                       "optimizer_state_dict has no list \"%s\"", key);
    const mf_tensor **v = mf_arena_calloc(c->m->arena, k ? k : 1, sizeof(*v));
    if (!v)
        return mf_oom(st, c->f.optim[r]);
    for (size_t i = 0; i < k; i++) {
        char path[128];
        snprintf(path, sizeof(path), "optimizer_state_dict.%s.%zu", key, i);
        v[i] = tr_find(c->opt[r], path);
        if (!v[i])
            return mf_fail(st, MF_ERR_FORMAT, c->f.optim[r], -1, "holds no tensor \"%s\"", path);
        if (v[i]->dtype != MF_F32 || v[i]->ndim != 1 || v[i]->strides)
            return mf_fail(st, MF_ERR_FORMAT, c->f.optim[r], -1,
                           "\"%s\" is not a flat float32 vector (%s, %d dimensions)", path,
                           mf_dtype_name(v[i]->dtype), v[i]->ndim);
    }
    *out = v;
    *n = k;
    return 0;
}

static uint64_t align_up(uint64_t x, uint64_t a)
{
    return (x + a - 1) / a * a;
}

/* Entry k of a param_shapes dict: its name, shape and element count. */
static int param_entry(ds_ctx *c, const pk_obj *shapes, size_t k, char **name, int *nd,
                       int64_t *shape, uint64_t *numel, mf_status *st)
{
    *name = pk_cstr(c->m->arena, shapes->u.c.v[2 * k]);
    if (!*name)
        return mf_oom(st, c->m->path);
    return shape_of(c, *name, shapes->u.c.v[2 * k + 1], nd, shape, numel, st);
}

/* ZeRO-1/2 (and the bf16 optimizer): group g's flat vector is the ranks'
 * partitions one after the other; its parameters follow each other in
 * param_shapes order from element 0. */
static int add_trainable_12(ds_ctx *c, const pk_obj *groups, mf_status *st)
{
    const mf_tensor ***parts = mf_arena_calloc(c->m->arena, (size_t)c->world, sizeof(*parts));
    size_t n_groups = 0;
    if (!parts)
        return mf_oom(st, c->m->path);
    for (int64_t r = 0; r < c->world; r++) {
        size_t k;
        if (rank_groups(c, r, "single_partition_of_fp32_groups", &parts[r], &k, st))
            return -1;
        if (r && k != n_groups)
            return mf_fail(st, MF_ERR_FORMAT, c->f.optim[r], -1,
                           "holds %zu parameter groups, rank 0 %zu", k, n_groups);
        n_groups = k;
    }
    size_t ng;
    pk_obj *const *gv = tr_items(groups, &ng);
    if (ng != n_groups)
        return mf_fail(st, MF_ERR_FORMAT, c->f.model0, -1,
                       "param_shapes lists %zu parameter groups, the optimizer partitions %zu",
                       ng, n_groups);
    for (size_t g = 0; g < ng; g++) {
        uint64_t avail = 0;
        for (int64_t r = 0; r < c->world; r++)
            avail += (uint64_t)parts[r][g]->shape[0];
        const pk_obj *shapes = gv[g];
        if (shapes->kind != PK_DICT)
            return mf_fail(st, MF_ERR_FORMAT, c->f.model0, (int64_t)shapes->off,
                           "param_shapes[%zu] is not a dict of name -> shape", g);
        uint64_t offset = 0;
        int64_t r = 0;
        uint64_t r_start = 0; /* element of the group where rank r's part begins */
        for (size_t k = 0; k < shapes->u.c.n; k++) {
            char *name;
            int nd;
            int64_t shape[MF_MAX_DIMS];
            uint64_t numel;
            if (param_entry(c, shapes, k, &name, &nd, shape, &numel, st))
                return -1;
            if (offset + numel > avail)
                return mf_fail(st, MF_ERR_FORMAT, c->f.optim[c->world - 1], -1,
                               "group %zu: \"%s\" needs elements %llu..%llu but the %lld "
                               "partitions hold %llu (a partition is truncated or missing)",
                               g, name, (unsigned long long)offset,
                               (unsigned long long)(offset + numel), (long long)c->world,
                               (unsigned long long)avail);
            mf_tensor *t = add_named(c, name, MF_F32, MF_F32, nd, shape, st);
            if (!t)
                return -1;
            uint64_t at = offset, end = offset + numel;
            while (at < end) {
                uint64_t len = (uint64_t)parts[r][g]->shape[0];
                if (at >= r_start + len) {
                    r_start += len;
                    r++;
                    continue;
                }
                uint64_t take = (end < r_start + len ? end : r_start + len) - at;
                tr_piece p = {parts[r][g], c->opt[r], at - r_start, take};
                if (tr_add_piece(c->m, t, &p, st))
                    return -1;
                at += take;
            }
            if (tr_check_cover(c->m, t, st))
                return -1;
            offset = end;
        }
        /* zero_to_fp32: both counts, aligned to 2 * world size, must agree
         * (the saved partitions may or may not keep the alignment padding) */
        uint64_t a = 2 * (uint64_t)c->world;
        if (align_up(offset, a) != align_up(avail, a))
            return mf_fail(st, MF_ERR_FORMAT, c->f.optim[0], -1,
                           "group %zu: param_shapes account for %llu elements but the partitions "
                           "hold %llu (aligned to 2 x world size: %llu vs %llu): a partition "
                           "of another checkpoint or model?", g, (unsigned long long)offset,
                           (unsigned long long)avail, (unsigned long long)align_up(offset, a),
                           (unsigned long long)align_up(avail, a));
    }
    return 0;
}

/* ZeRO-3: each parameter takes ceil(numel / world) elements of every
 * rank's flat vector (the groups' vectors one after the other), rank 0's
 * first; the last rank's run is padded. */
static int add_trainable_3(ds_ctx *c, const pk_obj *groups, mf_status *st)
{
    const mf_tensor ***flat = mf_arena_calloc(c->m->arena, (size_t)c->world, sizeof(*flat));
    size_t n_groups = 0;
    if (!flat)
        return mf_oom(st, c->m->path);
    uint64_t per_rank = 0;
    for (int64_t r = 0; r < c->world; r++) {
        size_t k;
        if (rank_groups(c, r, "fp32_flat_groups", &flat[r], &k, st))
            return -1;
        uint64_t total = 0;
        for (size_t g = 0; g < k; g++)
            total += (uint64_t)flat[r][g]->shape[0];
        if (r && (k != n_groups || total != per_rank))
            return mf_fail(st, MF_ERR_FORMAT, c->f.optim[r], -1,
                           "holds %zu groups of %llu elements, rank 0 %zu of %llu", k,
                           (unsigned long long)total, n_groups, (unsigned long long)per_rank);
        for (size_t g = 0; r && g < k; g++)
            if (flat[r][g]->shape[0] != flat[0][g]->shape[0])
                return mf_fail(st, MF_ERR_FORMAT, c->f.optim[r], -1,
                               "group %zu holds %lld elements, rank 0's %lld", g,
                               (long long)flat[r][g]->shape[0], (long long)flat[0][g]->shape[0]);
        n_groups = k;
        per_rank = total;
    }
    size_t ng;
    pk_obj *const *gv = tr_items(groups, &ng);
    uint64_t offset = 0;
    for (size_t g = 0; g < ng; g++) {
        const pk_obj *shapes = gv[g];
        if (shapes->kind != PK_DICT)
            return mf_fail(st, MF_ERR_FORMAT, c->f.model0, (int64_t)shapes->off,
                           "param_shapes[%zu] is not a dict of name -> shape", g);
        for (size_t k = 0; k < shapes->u.c.n; k++) {
            char *name;
            int nd;
            int64_t shape[MF_MAX_DIMS];
            uint64_t numel;
            if (param_entry(c, shapes, k, &name, &nd, shape, &numel, st))
                return -1;
            uint64_t part = (numel + (uint64_t)c->world - 1) / (uint64_t)c->world;
            if (offset + part > per_rank)
                return mf_fail(st, MF_ERR_FORMAT, c->f.optim[0], -1,
                               "\"%s\" needs elements %llu..%llu of each rank's partition, "
                               "which holds %llu", name, (unsigned long long)offset,
                               (unsigned long long)(offset + part), (unsigned long long)per_rank);
            mf_tensor *t = add_named(c, name, MF_F32, MF_F32, nd, shape, st);
            if (!t)
                return -1;
            uint64_t left = numel;
            for (int64_t r = 0; r < c->world && left; r++) {
                uint64_t at = offset, want = part < left ? part : left, g0 = 0;
                left -= want;
                for (size_t gi = 0; gi < n_groups && want; gi++) {
                    uint64_t len = (uint64_t)flat[r][gi]->shape[0];
                    if (at < g0 + len) {
                        uint64_t take = g0 + len - at < want ? g0 + len - at : want;
                        tr_piece p = {flat[r][gi], c->opt[r], at - g0, take};
                        if (tr_add_piece(c->m, t, &p, st))
                            return -1;
                        at += take;
                        want -= take;
                    }
                    g0 += len;
                }
            }
            if (tr_check_cover(c->m, t, st))
                return -1;
            offset += part;
        }
    }
    if (offset != per_rank)
        return mf_fail(st, MF_ERR_FORMAT, c->f.optim[0], -1,
                       "param_shapes account for %llu elements of each rank's partition, which "
                       "holds %llu", (unsigned long long)offset, (unsigned long long)per_rank);
    return 0;
}

/* shared_params: name -> the parameter holding its data (tied weights). */
static int add_shared(ds_ctx *c, mf_status *st)
{
    const pk_obj *sh = tr_get(c->ms, "shared_params");
    if (!sh || sh->kind != PK_DICT)
        return 0;
    for (size_t k = 0; k < sh->u.c.n; k++) {
        char *name = pk_cstr(c->m->arena, sh->u.c.v[2 * k]);
        char *holder = pk_cstr(c->m->arena, sh->u.c.v[2 * k + 1]);
        if (!name || !holder)
            continue;
        const mf_tensor *h = NULL;
        for (size_t i = 0; i < c->m->n_tensors && !h; i++)
            if (strcmp(c->m->tensors[i].name, holder) == 0)
                h = &c->m->tensors[i];
        if (!h || mf_strset_has(&c->names, name))
            continue;
        mf_tensor copy = *h;
        mf_tensor *t = add_named(c, name, h->dtype, h->dtype, h->ndim, h->shape, st);
        if (!t)
            return -1;
        copy.name = t->name;
        *t = copy; /* the same pieces */
    }
    return 0;
}

/* ------------------------------------------------------------- metadata */

static void put_int(mf_model *m, const char *key, const pk_obj *o, mf_status *st)
{
    int64_t v;
    if (tr_int(o, &v))
        mf_model_put_meta(m, key, mf_value_int(v), st);
}

static void put_str(mf_model *m, const char *key, const char *s, mf_status *st)
{
    if (s)
        mf_model_put_meta(m, key, mf_value_str(m->arena, s, strlen(s)), st);
}

static const char *module_dtype(ds_ctx *c)
{
    const pk_obj *module = tr_get(c->ms, "module");
    for (size_t k = 0; module && module->kind == PK_DICT && k < module->u.c.n; k++) {
        char *name = pk_cstr(c->m->arena, module->u.c.v[2 * k]);
        const mf_tensor *t = name ? shard_tensor(c->ms0, "module", name, NULL) : NULL;
        if (t)
            return mf_dtype_name(t->dtype);
    }
    return NULL;
}

static void describe(ds_ctx *c, mf_status *st)
{
    mf_model *m = c->m;
    put_str(m, "train.framework", "deepspeed", st);
    const pk_obj *v = tr_get(c->ms, "ds_version");
    if (v && v->kind == PK_STR)
        put_str(m, "train.framework_version", pk_cstr(m->arena, v), st);
    put_str(m, "train.tag", c->f.tag, st);
    put_int(m, "train.step", tr_get(c->ms, "global_steps"), st);
    put_int(m, "train.samples", tr_get(c->ms, "global_samples"), st);
    mf_model_put_meta(m, "train.zero_stage", mf_value_int(c->stage), st);
    mf_model_put_meta(m, "train.world_size", mf_value_int(c->world), st);
    put_int(m, "train.mp_world_size", tr_get(c->ms, "mp_world_size"), st);
    put_str(m, "train.module_dtype", module_dtype(c), st);
    put_str(m, "train.source", (c->flags & MF_OPEN_TRAIN_MODULE_STATES) || !c->f.n_optim
                                   ? "module states"
                                   : "fp32 master weights of the optimizer partitions", st);
    bool moments = false;
    for (int64_t r = 0; c->osd && r < c->world && !moments; r++)
        moments = tr_get(c->osd[r], "base_optimizer_state") ||
                  tr_get(c->osd[r], "optimizer_state_dict");
    moments = moments || (tr_get(c->ms, "optimizer") && tr_get(c->ms, "optimizer")->kind != PK_NONE);
    mf_model_put_meta(m, "train.optimizer_state", mf_value_bool(moments), st);
    const pk_obj *sched = tr_get(c->ms, "lr_scheduler");
    mf_model_put_meta(m, "train.lr_scheduler", mf_value_bool(sched && sched->kind != PK_NONE), st);
    const pk_obj *fz = tr_get(c->ms, "frozen_param_shapes");
    mf_model_put_meta(m, "train.frozen_parameters",
                      mf_value_int(fz && fz->kind == PK_DICT ? (int64_t)fz->u.c.n : 0), st);
    if (c->stage == 1 && !fz)
        mf_model_note(m, "ZeRO-1 checkpoints do not save frozen parameters (engine.py saves "
                         "them from stage 2 on): any the model had are missing");
}

/* --------------------------------------------------------------- open */

/* zero_stage: an int, ZeroStageEnum(2) (Python < 3.11 pickles an IntEnum
 * member by value) or getattr(ZeroStageEnum, 'gradients') (3.11 on: by
 * name; deepspeed/runtime/zero/config.py names the members). */
static bool zero_stage_of(const pk_obj *o, int64_t *stage)
{
    static const char *const names[] = {"disabled", "optimizer_states", "gradients", "weights"};
    if (tr_int(o, stage))
        return true;
    if (!o || o->kind != PK_OBJECT || !o->u.o.args || o->u.o.args->kind != PK_TUPLE ||
        o->u.o.args->u.c.n != 2)
        return false;
    const pk_obj *cls = o->u.o.args->u.c.v[0], *name = o->u.o.args->u.c.v[1];
    if (!cls || cls->kind != PK_GLOBAL || strcmp(cls->u.g.name, "ZeroStageEnum"))
        return false;
    for (int64_t i = 0; i < 4; i++)
        if (pk_is_str(name, names[i]))
            return *stage = i, true;
    return false;
}

static int open_optim(ds_ctx *c, mf_status *st)
{
    c->world = (int64_t)c->f.n_optim;
    c->opt = mf_arena_calloc(c->m->arena, c->f.n_optim, sizeof(*c->opt));
    c->osd = mf_arena_calloc(c->m->arena, c->f.n_optim, sizeof(*c->osd));
    if (!c->opt || !c->osd)
        return mf_oom(st, c->m->path);
    for (size_t r = 0; r < c->f.n_optim; r++) {
        if (!(c->opt[r] = tr_open_torch(c->m, c->f.optim[r], c->flags, st)))
            return -1;
        c->osd[r] = tr_get(tr_root(c->opt[r]), "optimizer_state_dict");
        if (!c->osd[r] || c->osd[r]->kind != PK_DICT)
            return mf_fail(st, MF_ERR_FORMAT, c->f.optim[r], -1,
                           "has no optimizer_state_dict (not a DeepSpeed optimizer partition)");
    }
    int64_t pc = 0, stage = -1;
    const pk_obj *p = tr_get(c->osd[0], "partition_count");
    size_t n;
    pk_obj *const *v = tr_items(p, &n);
    if (v) { /* one per group (expert groups may differ): the largest */
        for (size_t i = 0; i < n; i++) {
            int64_t x;
            if (tr_int(v[i], &x) && x > pc)
                pc = x;
        }
    } else {
        tr_int(p, &pc);
    }
    if (pc && pc != c->world)
        return mf_fail(st, MF_ERR_FORMAT, c->f.optim[0], -1,
                       "partition_count says %lld data-parallel ranks but the folder holds %lld "
                       "optimizer partitions (zero_to_fp32.py's rule: one file per rank)",
                       (long long)pc, (long long)c->world);
    if (!zero_stage_of(tr_get(c->osd[0], "zero_stage"), &stage))
        stage = 0; /* the bf16 optimizer without ZeRO saves no stage */
    if (stage < 0 || stage > 3)
        return mf_fail(st, MF_ERR_FORMAT, c->f.optim[0], -1, "zero_stage %lld is not 0..3",
                       (long long)stage);
    c->stage = stage;
    return 0;
}

static int open_deepspeed(mf_model *m, const char *path, unsigned flags, mf_status *st)
{
    ds_ctx c = {.m = m, .flags = flags};
    const char *dir = tag_dir(m, path, &c.f.tag);
    if (!dir)
        return mf_fail(st, MF_ERR_UNSUPPORTED, path, -1,
                       "`latest` names a tag folder outside this folder (\"..\" or a '/'): "
                       "not followed");
    c.f.dir = dir;
    snprintf(m->version, sizeof(m->version), "DeepSpeed");
    int rc = list_files(m, dir, &c.f, st);
    if (rc == 0 && !(c.ms0 = tr_open_torch(m, c.f.model0, flags, st)))
        rc = -1;
    if (rc == 0 && (c.ms = tr_root(c.ms0)) == NULL)
        rc = mf_fail(st, MF_ERR_FORMAT, c.f.model0, -1, "holds no object");
    if (rc == 0 && c.f.n_optim)
        rc = open_optim(&c, st);
    if (rc == 0 && c.stage == 3) {
        if (c.f.n_model3 != (size_t)c.world)
            rc = mf_fail(st, MF_ERR_FORMAT, dir, -1,
                         "ZeRO-3 with %lld ranks needs as many zero_pp_rank_R_mp_rank_00_"
                         "model_states.pt files; the folder holds %zu", (long long)c.world,
                         c.f.n_model3);
        c.ms3 = mf_arena_calloc(m->arena, (size_t)c.world, sizeof(*c.ms3));
        if (rc == 0 && !c.ms3)
            rc = mf_oom(st, path);
        for (int64_t r = 0; rc == 0 && r < c.world; r++)
            c.ms3[r] = r == 0 ? c.ms0 : tr_open_torch(m, c.f.model3[r], flags, st);
        for (int64_t r = 0; rc == 0 && r < c.world; r++)
            if (!c.ms3[r])
                rc = -1;
    }
    if (rc == 0) {
        const pk_obj *groups = tr_get(c.ms, "param_shapes");
        bool modules = (flags & MF_OPEN_TRAIN_MODULE_STATES) || !c.f.n_optim;
        if (modules) {
            rc = add_module_states(&c, st);
        } else if (!groups || groups->kind == PK_NONE) {
            rc = mf_fail(st, MF_ERR_FORMAT, c.f.model0, -1,
                         "has no param_shapes: the optimizer partitions cannot be laid out");
        } else {
            rc = add_buffers(&c, st);
            if (rc == 0)
                rc = add_frozen(&c, st);
            if (rc == 0)
                rc = c.stage == 3 ? add_trainable_3(&c, groups, st)
                                  : add_trainable_12(&c, groups, st);
            if (rc == 0)
                rc = add_shared(&c, st);
        }
    }
    if (rc == 0) {
        snprintf(m->version, sizeof(m->version), "DeepSpeed %s, ZeRO-%lld",
                 c.f.tag ? c.f.tag : "", (long long)c.stage);
        describe(&c, st);
    }
    mf_strset_free(&c.names);
    return rc == 0 && mf_ok(st) ? 0 : -1;
}

/* The code_around hook: a `latest` whose tag leaves the folder makes
 * load_checkpoint read pickles the scan of this folder never saw. */
static void latest_around(const char *path, mf_code_fn fn, void *ctx)
{
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    /* load_checkpoint reads `latest_universal` instead for a universal
     * checkpoint (engine.py: load_universal_checkpoint()) */
    if (strcmp(base, "latest") != 0 && strcmp(base, "latest_universal") != 0)
        return;
    mf_status st;
    mf_status_init(&st);
    char *s = NULL;
    size_t n = 0;
    bool read = mf_read_small_file(path, 1u << 20, &s, &n, &st) == 0;
    mf_status_clear(&st);
    if (!read || tag_escapes(s, n)) {
        mf_code_finding f = {MF_CODE_UNKNOWN, NULL,
                             read ? "DeepSpeed's load_checkpoint loads the tag folder `latest` "
                                    "names, here one outside this folder (\"..\" or a '/'): "
                                    "its pickles are not scanned with it"
                                  : "`latest` cannot be read (1 MiB at most): DeepSpeed's "
                                    "load_checkpoint loads the tag folder it names"};
        fn(ctx, &f);
    }
    free(s);
}

const mf_reader mf_reader_deepspeed = {
    .format = MF_FMT_DEEPSPEED,
    .name = "deepspeed",
    .probe_dir = probe_deepspeed,
    .open = open_deepspeed,
    .stream = tr_stream,
    .file_runs = tr_file_runs,
    .close = tr_close,
    .scan = &(const mf_scan_hooks){.code_around = latest_around},
};
