/* st_index.c - sharded safetensors: model.safetensors.index.json + shards
 * (transformers' modeling_utils: {"metadata": {"total_size"}, "weight_map":
 * {tensor: shard file}}). One view over every shard. */
#include "formats/safetensors.h"

#include <jansson.h>
#include <stdlib.h>

/* A shard name must stay inside the index's directory. */
static bool safe_shard_name(const char *s)
{
    return *s && s[0] != '/' && !strstr(s, "..") && !strchr(s, '\\');
}

static char *dir_of(mf_arena *a, const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? mf_arena_strndup(a, path, (size_t)(slash - path)) : mf_arena_strdup(a, ".");
}

typedef struct shard {
    const char *name;
    uint32_t file;
    size_t first, count; /* tensors it holds in m->tensors */
    bool opened;
} shard;

static int find_or_add_shard(shard *sh, size_t *n, const char *name)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp(sh[i].name, name) == 0)
            return (int)i;
    sh[*n].name = name;
    return (int)(*n)++;
}

static int open_shards(mf_model *m, const char *index, const char *dir, shard *sh,
                       size_t n, unsigned flags, mf_status *st)
{
    for (size_t i = 0; i < n; i++) {
        if (!safe_shard_name(sh[i].name)) {
            mf_breach(st, index, -1, "weight_map names shard \"%s\", which leaves the directory",
                      sh[i].name);
            continue;
        }
        char *p = mf_path_join(m->arena, dir, sh[i].name);
        if (!p)
            return mf_oom(st, index);
        if (!mf_path_exists(p)) {
            mf_breach(st, index, -1, "weight_map names shard \"%s\", which is not in the directory",
                      sh[i].name);
            continue;
        }
        mf_status sub;
        mf_status_init(&sub);
        sh[i].first = m->n_tensors;
        if (mf_model_add_file(m, p, &sh[i].file, &sub) == 0) {
            sh[i].opened = true;
            mf_safetensors_parse(m, sh[i].file, false, flags, &sub);
        }
        sh[i].count = m->n_tensors - sh[i].first;
        mf_status_merge(st, &sub);
        mf_status_clear(&sub);
    }
    return 0;
}

/* weight_map must name exactly the shards' tensors, each in its shard. */
static void check_weight_map(mf_model *m, const char *index, json_t *wm, shard *sh,
                             size_t n, mf_status *st)
{
    mf_strset seen = {0};
    for (size_t i = 0; i < n; i++) {
        if (!sh[i].opened)
            continue;
        for (size_t k = sh[i].first; k < sh[i].first + sh[i].count; k++) {
            const char *name = m->tensors[k].name;
            json_t *where = json_object_get(wm, name);
            if (!where)
                mf_breach(st, index, -1, "tensor \"%s\" is in shard \"%s\" but not in weight_map",
                          name, sh[i].name);
            else if (json_is_string(where) && /* non-strings: breached when read */
                     strcmp(json_string_value(where), sh[i].name) != 0)
                mf_breach(st, index, -1,
                          "weight_map puts tensor \"%s\" in \"%s\" but it is in \"%s\"", name,
                          json_string_value(where), sh[i].name);
            if (mf_strset_add(&seen, name) == 0)
                mf_breach(st, index, -1, "tensor \"%s\" is in two shards", name);
        }
    }
    const char *k;
    json_t *v;
    json_object_foreach(wm, k, v) {
        const char *file = json_string_value(v);
        if (!file) /* not a string: breached when the index was read */
            continue;
        bool opened = false;
        for (size_t i = 0; i < n; i++)
            if (strcmp(sh[i].name, file) == 0)
                opened = sh[i].opened;
        if (opened && !mf_strset_has(&seen, k))
            mf_breach(st, index, -1, "weight_map names tensor \"%s\" in \"%s\", which does not hold it",
                      k, file);
    }
    mf_strset_free(&seen);
}

static void check_total_size(mf_model *m, const char *index, json_t *root, mf_status *st)
{
    json_t *md = json_object_get(root, "metadata");
    json_t *ts = json_is_object(md) ? json_object_get(md, "total_size") : NULL;
    if (!ts)
        return;
    uint64_t sum = 0;
    for (size_t i = 0; i < m->n_tensors; i++)
        sum += m->tensors[i].nbytes;
    double want = json_number_value(ts);
    if (!json_is_number(ts) || want != (double)sum)
        mf_breach(st, index, -1, "metadata.total_size is %.0f but the tensors hold %llu bytes",
                  want, (unsigned long long)sum);
    /* converting a double outside [0, 2^64) (or NaN) to uint64_t is undefined */
    if (!(want >= 0 && want < 18446744073709551616.0))
        return;
    mf_kv *kv = mf_model_add_meta(m, "total_size", st);
    if (kv)
        kv->v = mf_value_uint((uint64_t)want);
}

int mf_safetensors_open_index(mf_model *m, const char *index, unsigned flags, mf_status *st)
{
    json_error_t jerr;
    json_t *root = json_load_file(index, JSON_REJECT_DUPLICATES, &jerr);
    if (!root)
        return mf_fail(st, MF_ERR_FORMAT, index, jerr.position, "index is not valid JSON: %s",
                       jerr.text);
    json_t *wm = json_object_get(root, "weight_map");
    if (!json_is_object(wm)) {
        json_decref(root);
        return mf_fail(st, MF_ERR_FORMAT, index, -1, "index has no \"weight_map\" object");
    }
    size_t nmap = json_object_size(wm), n = 0;
    shard *sh = calloc(nmap ? nmap : 1, sizeof(*sh));
    if (!sh) {
        json_decref(root);
        return mf_oom(st, index);
    }
    const char *k;
    json_t *v;
    json_object_foreach(wm, k, v) {
        if (!json_is_string(v)) {
            mf_breach(st, index, -1, "weight_map[\"%s\"] is not a file name", k);
            continue;
        }
        find_or_add_shard(sh, &n, json_string_value(v));
    }
    snprintf(m->version, sizeof(m->version), "sharded, %zu files", n);
    char *dir = dir_of(m->arena, index);
    int rc = dir ? open_shards(m, index, dir, sh, n, flags, st) : mf_oom(st, index);
    if (rc == 0) {
        check_weight_map(m, index, wm, sh, n, st);
        check_total_size(m, index, root, st);
    }
    free(sh);
    json_decref(root);
    return st->code == MF_OK ? 0 : -1;
}
