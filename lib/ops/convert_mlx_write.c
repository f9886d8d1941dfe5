/* convert_mlx_write.c - the MLX directory: weights streamed one tensor at
 * a time (a quantized weight row by row: its packed codes go out as they
 * are made, its scales and biases are kept until their turn), shards cut
 * as mlx_lm's make_shards cuts them, model.safetensors.index.json and
 * config.json as save_model / save_config write them (json.dump, indent
 * 4), and the files mlx_lm's save copies. The directory is made beside
 * OUT and renamed into place (nothing left on failure). */
#include "ops/convert_mlx.h"
#include "formats/formats.h"
#include "ops/pyjson.h"
#include "quant/mlx_affine.h"
#include "quant/quant.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* Float rows go through lib/quant's F32/F16/BF16 rows (ggml's
 * conversions: round to nearest even, as MLX's astype and its float16_t /
 * bfloat16_t do for every non-NaN value). */
static size_t el_size(mf_dtype dt)
{
    return dt == MF_F32 ? 4 : 2;
}

/* ------------------------------------------------------ row streaming */

/* Collects a tensor's canonical bytes into whole rows (the last
 * dimension) and hands each to `row`. */
typedef struct rows {
    mlxc *c;
    const mlx_param *p;
    uint8_t *buf;        /* one source row */
    size_t row_bytes, have;
    float *f;            /* the row as the quantizer reads it */
    uint8_t *out;        /* one output row */
    uint64_t r;          /* rows done */
    mf_sink_fn sink;
    void *sink_ctx;
    int (*row)(struct rows *rs, mf_status *st);
} rows;

static int emit(rows *rs, const void *b, size_t n, mf_status *st)
{
    mlxc *c = rs->c;
    if (rs->sink(rs->sink_ctx, b, n, st))
        return -1;
    c->done += n;
    return mf_progress_report(c->o->progress, c->o->progress_user, c->done, c->total, c->in, st);
}

static int rows_sink(void *ctx, const void *buf, size_t n, mf_status *st)
{
    rows *rs = ctx;
    const uint8_t *b = buf;
    while (n) {
        size_t k = rs->row_bytes - rs->have;
        if (k > n)
            k = n;
        memcpy(rs->buf + rs->have, b, k);
        rs->have += k;
        b += k;
        n -= k;
        if (rs->have == rs->row_bytes) {
            if (rs->row(rs, st))
                return -1;
            rs->have = 0;
            rs->r++;
        }
    }
    return 0;
}

/* A float row of the source as MLX holds it after the cast to `as`
 * (scratch: n elements of `as`). */
static void row_floats(rows *rs, mf_dtype as, uint8_t *scratch)
{
    mf_dtype sdt = rs->p->src->dtype;
    int64_t n = (int64_t)(rs->row_bytes / el_size(sdt));
    mf_dequantize_row(sdt, rs->buf, rs->f, n);
    if (as != sdt) {
        mf_quantize_rows(as, rs->f, scratch, 1, n, NULL);
        mf_dequantize_row(as, scratch, rs->f, n);
    }
}

static int cast_row(rows *rs, mf_status *st)
{
    mf_dtype dt = rs->p->out.dtype, sdt = rs->p->src->dtype;
    int64_t n = (int64_t)(rs->row_bytes / el_size(sdt));
    mf_dequantize_row(sdt, rs->buf, rs->f, n);
    mf_quantize_rows(dt, rs->f, rs->out, 1, n, NULL);
    return emit(rs, rs->out, (size_t)n * el_size(dt), st);
}

static int quantize_row(rows *rs, mf_status *st)
{
    const mlx_param *p = rs->p;
    mlxc *c = rs->c;
    mf_dtype dt = p[1].out.dtype; /* the scales' type: the weight's after the cast */
    uint64_t n = rs->row_bytes / el_size(p->src->dtype), groups = n / (uint64_t)p->group_size;
    row_floats(rs, dt, rs->out);
    float *sc = rs->f + n, *bi = sc + groups;
    mf_mlx_quantize_row(rs->f, n, p->bits, p->group_size, (int)c->o->kernel, rs->out, sc, bi);
    size_t off = (size_t)(rs->r * groups * el_size(dt));
    mf_quantize_rows(dt, sc, c->keep + off, 1, (int64_t)groups, NULL);
    mf_quantize_rows(dt, bi, c->keep + c->keep_half + off, 1, (int64_t)groups, NULL);
    return emit(rs, rs->out, mf_mlx_packed_bytes(n, p->bits), st);
}

static int pass_through(void *ctx, const void *buf, size_t n, mf_status *st)
{
    return emit(ctx, buf, n, st);
}

/* --------------------------------------------------------------- fill */

/* A parameter's source bytes: its tensor's, or the stacked experts' one
 * after another (mx.stack along a new first axis). */
static int stream_source(mlxc *c, const mlx_param *p, mf_sink_fn sink, void *ctx)
{
    if (!p->stack)
        return mf_tensor_stream(c->src, p->src, sink, ctx, c->st);
    for (size_t e = 0; e < p->n_stack; e++)
        if (mf_tensor_stream(c->src, p->stack[e], sink, ctx, c->st))
            return -1;
    return 0;
}

static int fill_quantized(mlxc *c, rows *rs)
{
    const mlx_param *p = rs->p;
    const mlx_param *sp = p + 1;
    uint64_t n = (uint64_t)p->src->shape[p->src->ndim - 1];
    free(c->keep);
    c->keep_half = sp->nbytes;
    c->keep = malloc(sp->nbytes ? 2 * sp->nbytes : 1);
    rs->f = malloc((n + 2 * (n / (uint64_t)p->group_size)) * sizeof(float));
    rs->out = malloc(n * 4 + 1); /* the packed codes, or a cast row (scratch) */
    if (!c->keep || !rs->f || !rs->out)
        return mf_oom(c->st, c->in);
    rs->row = quantize_row;
    return stream_source(c, p, rows_sink, rs);
}

static int fill_cast(mlxc *c, rows *rs)
{
    const mlx_param *p = rs->p;
    size_t n = rs->row_bytes / el_size(p->src->dtype);
    rs->f = malloc((n ? n : 1) * sizeof(float));
    rs->out = malloc((n ? n : 1) * el_size(p->out.dtype));
    if (!rs->f || !rs->out)
        return mf_oom(c->st, c->in);
    rs->row = cast_row;
    return stream_source(c, p, rows_sink, rs);
}

/* Row i of a tensor whose rows are LlamaModel.permute's undone with
 * `heads` heads: the GGUF row it comes from (gguf2hf.c's unpermute). */
static int64_t unpermuted_row(int64_t i, int64_t rows, int64_t heads)
{
    if (!heads)
        return i;
    int64_t half = rows / heads / 2;
    int64_t h = i / (2 * half), k = i / half % 2, j = i % half;
    return (h * half + j) * 2 + k;
}

/* A lossless weight (opts->lossless): each row's GGUF blocks as MLX's GGUF
 * loader turns them into codes, float16 scales and biases; the codes go
 * out, scales and biases are kept for their turn. */
static int fill_lossless(mlxc *c, rows *rs)
{
    const mlx_param *p = rs->p;
    const mf_tensor *g = p->ll->src;
    uint64_t n = (uint64_t)g->shape[1], groups = n / 32;
    int64_t nrows = g->shape[0];
    uint64_t row_bytes = groups * (g->dtype == MF_Q4_0 ? 18 : g->dtype == MF_Q4_1 ? 20 : 34);
    if (!g->data || row_bytes * (uint64_t)nrows > g->nbytes)
        return mf_fail(c->st, MF_ERR_FORMAT, c->in, -1, "\"%s\": its blocks are not mapped whole",
                       g->name);
    if (mf_tensor_need(g, c->st))
        return -1;
    const mlx_param *sp = p + 1;
    free(c->keep);
    c->keep_half = sp->nbytes;
    c->keep = malloc(sp->nbytes ? 2 * sp->nbytes : 1);
    rs->out = malloc(n + 1);
    uint16_t *sb = malloc(2 * groups * sizeof(uint16_t) + 2);
    int rc = c->keep && rs->out && sb ? 0 : mf_oom(c->st, c->in);
    for (int64_t i = 0; rc == 0 && i < nrows; i++) {
        int64_t r = unpermuted_row(i, nrows, p->ll->heads);
        mf_mlx_from_ggml_row((int)g->dtype, g->data + (uint64_t)r * row_bytes, n, rs->out, sb,
                             sb + groups);
        for (uint64_t k = 0; k < groups; k++) {
            uint8_t *sd = c->keep + ((uint64_t)i * groups + k) * 2;
            mf_wr16le(sd, sb[k]);
            mf_wr16le(sd + c->keep_half, sb[groups + k]);
        }
        rc = emit(rs, rs->out, mf_mlx_packed_bytes(n, p->bits), c->st);
    }
    free(sb);
    return rc;
}

/* The kept scales or biases of the weight just written. */
static int fill_kept(mlxc *c, rows *rs)
{
    const mlx_param *p = rs->p;
    if (!c->keep || c->keep_half != p->nbytes)
        return mf_fail(c->st, MF_ERR_USAGE, c->in, -1, "\"%s\" written before its weight",
                       p->name);
    return emit(rs, c->keep + (p->part == MLX_QBIASES ? c->keep_half : 0), p->nbytes, c->st);
}

static int fill_param(mlxc *c, size_t i, mf_sink_fn sink, void *sink_ctx)
{
    const mlx_param *p = &c->p.v[i];
    const mf_tensor *t = p->src;
    rows rs = {.c = c, .p = p, .sink = sink, .sink_ctx = sink_ctx};
    if (p->part == MLX_QSCALES || p->part == MLX_QBIASES)
        return fill_kept(c, &rs);
    if (p->ll && p->part == MLX_QWEIGHT) {
        int rc = fill_lossless(c, &rs);
        free(rs.out);
        return rc;
    }
    bool cast = p->part == MLX_QWEIGHT || p->out.dtype != t->dtype;
    if (!cast)
        return stream_source(c, p, pass_through, &rs);
    rs.row_bytes = (size_t)(t->ndim ? (uint64_t)t->shape[t->ndim - 1] : 1) * el_size(t->dtype);
    rs.buf = malloc(rs.row_bytes ? rs.row_bytes : 1);
    int rc = !rs.buf ? mf_oom(c->st, c->in)
                     : p->part == MLX_QWEIGHT ? fill_quantized(c, &rs) : fill_cast(c, &rs);
    if (rc == 0 && rs.have)
        rc = mf_fail(c->st, MF_ERR_FORMAT, c->in, -1, "\"%s\": a partial row", t->name);
    free(rs.buf);
    free(rs.f);
    free(rs.out);
    return rc;
}

/* ------------------------------------------------------------- shards */

typedef struct shard_fill {
    mlxc *c;
    size_t first;
} shard_fill;

static int fill_shard(void *ctx, size_t i, mf_sink_fn sink, void *sink_ctx, mf_status *st)
{
    shard_fill *f = ctx;
    return fill_param(f->c, f->first + i, sink, sink_ctx);
}

/* make_shards: a new shard when the next tensor would pass the limit
 * (even when the current one is empty: a first tensor past the limit
 * leaves an empty first shard, as mlx_lm does). starts[k]: first param of
 * shard k; returns the count. */
static size_t plan_shards(const mlxc *c, uint64_t max, size_t *starts)
{
    size_t ns = 0;
    uint64_t size = 0;
    starts[ns++] = 0;
    for (size_t i = 0; i < c->p.n; i++) {
        if (size + c->p.v[i].nbytes > max) {
            starts[ns++] = i;
            size = 0;
        }
        size += c->p.v[i].nbytes;
    }
    return ns;
}

/* Where a file of the output is written: its staged path in the set. */
static const char *dir_path(mlxc *c, const char *name)
{
    char *p = mf_path_join(c->a, c->final_dir, name);
    if (!p) {
        mf_oom(c->st, c->in);
        return NULL;
    }
    return mf_atomic_set_add(c->set, p, c->st);
}

static int write_shard(mlxc *c, const char *file, size_t first, size_t end)
{
    mf_kv fmt = {.key = "format", .v = mf_value_str(c->a, "mlx", 3)};
    mf_out_tensor *ts = calloc(end > first ? end - first : 1, sizeof(*ts));
    const char *path = dir_path(c, file);
    if (!ts || !path) {
        free(ts);
        return mf_oom(c->st, c->in);
    }
    for (size_t i = first; i < end; i++)
        ts[i - first] = c->p.v[i].out;
    shard_fill f = {c, first};
    int rc = mf_safetensors_write_mlx(path, ts, end - first, &fmt, 1, fill_shard, &f, c->st);
    free(ts);
    return rc;
}

typedef struct named {
    const char *name, *file;
} named;

static int cmp_named(const void *a, const void *b)
{
    return strcmp(((const named *)a)->name, ((const named *)b)->name);
}

/* save_model's index: metadata {total_size, total_parameters}, then the
 * weight map sorted by name. */
static int write_index(mlxc *c, const char *const *files, const size_t *starts, size_t ns)
{
    uint64_t total = 0, params = 0;
    for (size_t i = 0; i < c->p.n; i++) {
        total += c->p.v[i].nbytes;
        params += c->p.v[i].logical;
    }
    const char **shard_of = malloc((c->p.n ? c->p.n : 1) * sizeof(char *));
    json_t *root = json_object(), *md = json_object(), *wm = json_object();
    if (!shard_of || !root || !md || !wm) {
        free(shard_of);
        json_decref(root);
        json_decref(md);
        json_decref(wm);
        return mf_oom(c->st, c->in);
    }
    for (size_t s = 0; s < ns; s++)
        for (size_t i = starts[s]; i < (s + 1 < ns ? starts[s + 1] : c->p.n); i++)
            shard_of[i] = files[s];
    json_object_set_new(md, "total_size", json_integer((json_int_t)total));
    json_object_set_new(md, "total_parameters", json_integer((json_int_t)params));
    json_object_set_new(root, "metadata", md);
    /* sorted(weight_map): by name, each with its shard */
    named *ix = malloc((c->p.n ? c->p.n : 1) * sizeof(named));
    int rc = ix ? 0 : mf_oom(c->st, c->in);
    for (size_t i = 0; rc == 0 && i < c->p.n; i++)
        ix[i] = (named){c->p.v[i].name, shard_of[i]};
    if (rc == 0)
        qsort(ix, c->p.n, sizeof(named), cmp_named);
    for (size_t i = 0; rc == 0 && i < c->p.n; i++)
        json_object_set_new(wm, ix[i].name, json_string(ix[i].file));
    json_object_set_new(root, "weight_map", wm);
    const char *path = rc == 0 ? dir_path(c, "model.safetensors.index.json") : NULL;
    if (rc == 0)
        rc = path ? mf_pyjson_write(path, root, 4, c->st) : -1;
    json_decref(root);
    free(ix);
    free(shard_of);
    return rc;
}

int mlx_write_weights(mlxc *c)
{
    uint64_t max = c->o->max_shard_size ? c->o->max_shard_size : (uint64_t)5 << 30;
    size_t *starts = mf_arena_calloc(c->a, c->p.n + 1, sizeof(size_t));
    const char **files = mf_arena_calloc(c->a, c->p.n + 1, sizeof(char *));
    if (!starts || !files)
        return mf_oom(c->st, c->in);
    for (size_t i = 0; i < c->p.n; i++)
        c->total += c->p.v[i].nbytes;
    size_t ns = plan_shards(c, max, starts);
    int rc = 0;
    for (size_t s = 0; rc == 0 && s < ns; s++) {
        files[s] = ns > 1 ? mf_arena_printf(c->a, "model-%05zu-of-%05zu.safetensors", s + 1, ns)
                          : "model.safetensors";
        rc = files[s] ? write_shard(c, files[s], starts[s], s + 1 < ns ? starts[s + 1] : c->p.n)
                      : mf_oom(c->st, c->in);
    }
    if (rc == 0)
        rc = write_index(c, files, starts, ns);
    const char *cfg = rc == 0 ? dir_path(c, "config.json") : NULL;
    if (rc == 0)
        rc = cfg ? mf_pyjson_write(cfg, c->cfg, 4, c->st) : -1;
    free(c->keep);
    c->keep = NULL;
    return rc;
}

/* ------------------------------------------------------- copied files */

/* The tokenizer's files (what load_tokenizer downloads and
 * save_pretrained writes back), and what save() copies: *.py and
 * generation_config.json. Weights, config.json and the index are ours. */
static bool copied(const char *name)
{
    static const char *const globs[] = {
        "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
        "added_tokens.json", "tokenizer.model", "vocab.json", "vocab.txt", "merges.txt",
        "chat_template.json", "chat_template.jinja", "*.tiktoken", "tiktoken.model",
        "generation_config.json", "*.py",
    };
    for (size_t i = 0; i < sizeof(globs) / sizeof(globs[0]); i++)
        if (fnmatch(globs[i], name, 0) == 0)
            return true;
    return false;
}

int mlx_copy_side_files(mlxc *c)
{
    DIR *d = opendir(c->in);
    if (!d)
        return mf_fail(c->st, MF_ERR_IO, c->in, -1, "cannot list the directory: %s",
                       strerror(errno));
    int rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d));) {
        if (e->d_name[0] == '.' || !copied(e->d_name))
            continue;
        char *from = mf_path_join(c->a, c->in, e->d_name);
        const char *to = dir_path(c, e->d_name);
        struct stat sb;
        if (!from || !to)
            rc = mf_oom(c->st, c->in);
        else if (stat(from, &sb) == 0 && S_ISREG(sb.st_mode))
            rc = mf_atomic_copy_file(from, to, c->st);
    }
    closedir(d);
    return rc;
}

/* README.md: the model card mlx_lm's save() writes through
 * create_model_card (mlx_lm/utils.py) for a local source: huggingface_hub's
 * ModelCard.from_template(ModelCardData(language="en")) with library_name
 * "mlx", pipeline_tag "text-generation", tags ["mlx"] and an empty text,
 * saved as "---\n" + yaml.dump(sort_keys=False) + "---\n". The source's own
 * README.md is not read (a hub id would be, which mfmt never has). */
int mlx_write_model_card(mlxc *c)
{
    static const char card[] = "---\n"
                               "language: en\n"
                               "library_name: mlx\n"
                               "pipeline_tag: text-generation\n"
                               "tags:\n"
                               "- mlx\n"
                               "---\n";
    const char *path = dir_path(c, "README.md");
    if (!path)
        return mf_oom(c->st, c->in);
    mf_atomic *w;
    int rc = mf_atomic_open(path, &w, c->st);
    if (rc == 0) {
        rc = mf_atomic_write(w, card, sizeof(card) - 1, c->st);
        rc = rc == 0 ? mf_atomic_commit(w, c->st) : (mf_atomic_abort(w), -1);
    }
    return rc;
}
