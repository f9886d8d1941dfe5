/* shard_index.c - sharded checkpoints: model.safetensors.index.json and
 * pytorch_model.bin.index.json ({"metadata": {"total_size"}, "weight_map":
 * {tensor: shard file}}, as transformers writes them) and their shards, each
 * opened as a model of its own. weight_map must name exactly each shard's
 * tensors, every shard must exist inside the index's directory. */
#include "formats/formats.h"
#include "formats/hf/shard_index.h"
#include "core/json_build.h"

#include <jansson.h>
#include <stdlib.h>

/* A shard name must stay inside the index's directory. */
static bool safe_shard_name(const char *s)
{
    return *s && s[0] != '/' && !strstr(s, "..") && !strchr(s, '\\');
}

typedef struct shard {
    const char *name;
    size_t first, count; /* its tensors in m->tensors */
    bool opened;
} shard;

static void check_shard(mf_model *m, const char *index, json_t *wm, const shard *sh,
                        mf_status *st)
{
    for (size_t k = sh->first; k < sh->first + sh->count; k++) {
        const char *name = m->tensors[k].name;
        json_t *where = json_object_get(wm, name);
        if (!where)
            mf_breach(st, index, -1, "tensor \"%s\" is in shard \"%s\" but not in weight_map",
                      name, sh->name);
        else if (!json_is_string(where) || strcmp(json_string_value(where), sh->name) != 0)
            mf_breach(st, index, -1, "weight_map puts tensor \"%s\" in \"%s\" but it is in \"%s\"",
                      name, json_is_string(where) ? json_string_value(where) : "?", sh->name);
    }
}

/* Tensors in two shards, and weight_map entries no opened shard holds. */
static void check_coverage(mf_model *m, const char *index, json_t *wm, const shard *sh,
                           size_t n, mf_status *st)
{
    json_t *seen = json_object();
    for (size_t k = 0; seen && k < m->n_tensors; k++) {
        if (json_object_get(seen, m->tensors[k].name))
            mf_breach(st, index, -1, "tensor \"%s\" is in two shards", m->tensors[k].name);
        json_object_set_new(seen, m->tensors[k].name, json_true());
    }
    const char *k;
    json_t *v;
    json_object_foreach(wm, k, v) {
        const char *file = json_string_value(v);
        bool opened = false;
        for (size_t i = 0; file && i < n; i++)
            if (strcmp(sh[i].name, file) == 0)
                opened = sh[i].opened;
        if (opened && !json_object_get(seen, k))
            mf_breach(st, index, -1,
                      "weight_map names tensor \"%s\" in \"%s\", which does not hold it", k, file);
    }
    json_decref(seen);
}

static void check_total_size(mf_model *m, const char *index, json_t *root, bool exact,
                             mf_status *st)
{
    json_t *md = json_object_get(root, "metadata");
    json_t *ts = json_is_object(md) ? json_object_get(md, "total_size") : NULL;
    if (!ts)
        return;
    uint64_t sum = 0;
    for (size_t i = 0; i < m->n_tensors; i++)
        sum += m->tensors[i].nbytes;
    double want = json_number_value(ts);
    if (!json_is_number(ts) || want < 0)
        mf_breach(st, index, -1, "metadata.total_size is not a non-negative number");
    else if (want != (double)sum && exact)
        mf_breach(st, index, -1, "metadata.total_size is %.0f but the tensors hold %llu bytes",
                  want, (unsigned long long)sum);
    else if (want != (double)sum) /* torch: tied tensors counted once, not a breach */
        mf_model_note(m, "metadata.total_size is %.0f; the tensors hold %llu bytes", want,
                      (unsigned long long)sum);
    if (!(want >= 0 && want < 18446744073709551616.0))
        return; /* kept only when it is a byte count (1e300 -> uint64 is undefined) */
    mf_kv *kv = mf_model_add_meta(m, "total_size", st);
    if (kv)
        kv->v = mf_value_uint((uint64_t)want);
}

static int open_shards(mf_model *m, const char *index, json_t *wm, shard *sh, size_t n,
                       unsigned flags, mf_status *st)
{
    const char *slash = strrchr(index, '/');
    char *dir = slash ? mf_arena_strndup(m->arena, index, (size_t)(slash - index))
                      : mf_arena_strdup(m->arena, ".");
    if (!dir)
        return mf_oom(st, index);
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
        sh[i].opened = mf_model_open_child(m, p, flags, &sub) != NULL;
        sh[i].count = m->n_tensors - sh[i].first;
        mf_status_merge(st, &sub);
        mf_status_clear(&sub);
        if (sh[i].opened)
            check_shard(m, index, wm, &sh[i], st);
    }
    check_coverage(m, index, wm, sh, n, st);
    return 0;
}

int mf_open_shard_index(mf_model *m, const char *index, unsigned flags, bool exact_total_size,
                        mf_status *st)
{
    json_error_t jerr;
    json_t *root = mf_json_load_file(index, JSON_REJECT_DUPLICATES, &jerr);
    if (!root && mf_json_error_is_oom(&jerr))
        return mf_oom(st, index);
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
        size_t i = 0;
        while (i < n && strcmp(sh[i].name, json_string_value(v)) != 0)
            i++;
        if (i == n && n == 4096) {
            free(sh);
            json_decref(root);
            return mf_fail(st, MF_ERR_FORMAT, index, -1, "weight_map names more than 4096 shards");
        }
        if (i == n)
            sh[n++].name = json_string_value(v);
    }
    snprintf(m->version, sizeof(m->version), "sharded, %zu files", n);
    int rc = open_shards(m, index, wm, sh, n, flags, st);
    if (rc == 0)
        check_total_size(m, index, root, exact_total_size, st);
    free(sh);
    json_decref(root);
    return rc == 0 && mf_ok(st) ? 0 : -1;
}

/* ------------------------------------------------------------- detection */

int mf_probe_shard_index(mf_probe *p, bool bin)
{
    if (p->size < 2 || p->b[0] != '{' || p->size > (64u << 20))
        return MF_PROBE_NO;
    json_t *j = mf_json_loadb((const char *)p->b, (size_t)p->size, 0, NULL);
    if (!j)
        return MF_PROBE_NO;
    json_t *wm = json_object_get(j, "weight_map");
    int r = MF_PROBE_NO;
    if (json_is_object(wm)) {
        const char *k;
        json_t *v;
        bool is_bin = false;
        json_object_foreach(wm, k, v) {
            const char *s = json_string_value(v);
            size_t l = s ? strlen(s) : 0;
            is_bin = l >= 4 && strcmp(s + l - 4, ".bin") == 0;
            break;
        }
        if (is_bin == bin)
            r = mf_probe_found(p, bin ? MF_FMT_PYTORCH_ZIP : MF_FMT_SAFETENSORS,
                               "%s shard index (%zu tensors)", bin ? "PyTorch" : "safetensors",
                               json_object_size(wm));
    }
    json_decref(j);
    return r;
}

/* scan's side (through the HF reader's code_around): from_pretrained joins
 * each weight_map file to the directory (get_checkpoint_shard_files), so a
 * name that leaves it loads a file -- a pickle, for a .bin index -- that a
 * scan of the directory never reads. */
void mf_shard_index_around(const char *path, mf_code_fn fn, void *ctx)
{
    size_t l = strlen(path);
    if (l < 11 || strcmp(path + l - 11, ".index.json") != 0)
        return;
    mf_status st;
    mf_status_init(&st);
    json_t *root = mf_hf_load_json(path, &st); /* as transformers' json.load reads it */
    mf_status_clear(&st);
    json_t *wm = json_object_get(root, "weight_map");
    const char *k;
    json_t *v;
    char msg[700];
    json_object_foreach(wm, k, v) {
        const char *f = json_string_value(v);
        if (f && !safe_shard_name(f)) {
            snprintf(msg, sizeof(msg), "weight_map names shard \"%.500s\", outside this "
                     "directory: from_pretrained loads it, the scan of the directory does not",
                     f);
            mf_code_finding c = {MF_CODE_UNKNOWN, NULL, msg};
            fn(ctx, &c);
            break;
        }
    }
    json_decref(root);
}
