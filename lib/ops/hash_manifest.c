/* hash_manifest.c - multi-algorithm tensor hashing and llama-gguf-hash
 * manifests (write and check); the line format is in mfmt/hash.h:
 *
 *     xxh64     f66e9cd66a4396a0  model.gguf:blk.0.attn_q.weight
 *     xxh64     2d0b6e8f0a3c9e71  model.gguf
 *
 * mfmt hashes canonical bytes, which for a GGUF file are exactly the raw
 * bytes llama-gguf-hash (llama.cpp examples/gguf-hash) reads. */
#include "core/core.h"

#include <stdlib.h>
#include <strings.h>

static const char *const hk_names[MF_HASH_KIND_COUNT] = {"sha256", "sha1", "xxh64", "xxh3", "uuid"};
/* The order in which llama-gguf-hash prints a tensor's (and the model's) lines. */
static const int emit_order[MF_HASH_KIND_COUNT] = {MF_XXH64, MF_XXH3, MF_SHA1, MF_SHA256, MF_HASH_KIND_UUID};
/* --check without --algo takes the strongest kind the manifest holds. */
static const int strength_order[MF_HASH_KIND_COUNT] = {MF_SHA256, MF_SHA1, MF_XXH64, MF_XXH3, MF_HASH_KIND_UUID};

/* uuid.uuid5(uuid.NAMESPACE_URL, 'en.wikipedia.org/wiki/Llama.cpp'), the
 * namespace llama-gguf-hash prefixes to the tensor bytes for its UUIDv5. */
static const uint8_t uuid_namespace[16] = {0xef, 0x00, 0x12, 0x06, 0xda, 0xdc, 0x5f, 0x6d,
                                           0xa1, 0x5f, 0x33, 0x59, 0xe5, 0x77, 0xd4, 0xe5};

const char *mf_hash_kind_name(int kind)
{
    return kind >= 0 && kind < MF_HASH_KIND_COUNT ? hk_names[kind] : "?";
}

static int hk_from_name(const char *s, size_t n)
{
    for (int k = 0; k < MF_HASH_KIND_COUNT; k++)
        if (strlen(hk_names[k]) == n && strncmp(hk_names[k], s, n) == 0)
            return k;
    return -1;
}

int mf_hash_kinds_parse(const char *s, unsigned *mask)
{
    *mask = 0;
    if (!s)
        return -1;
    while (*s) {
        size_t n = strcspn(s, ",");
        if (n == 3 && strncmp(s, "all", 3) == 0)
            *mask |= MF_HASH_BIT(MF_SHA256) | MF_HASH_BIT(MF_SHA1) | MF_HASH_BIT(MF_XXH64) | MF_HASH_BIT(MF_XXH3);
        else {
            int k = hk_from_name(s, n);
            if (k < 0)
                return -1;
            *mask |= MF_HASH_BIT(k);
        }
        s += n;
        if (*s == ',')
            s++;
    }
    return *mask ? 0 : -1;
}

/* ------------------------------------------------------ one-pass hashing */

typedef struct tee {
    mf_hasher *h[2 * MF_HASH_KIND_COUNT];
    size_t n;
} tee;

static int tee_sink(void *ctx, const void *buf, size_t n, mf_status *st)
{
    tee *t = ctx;
    for (size_t i = 0; i < t->n; i++)
        mf_hasher_update(t->h[i], buf, n);
    return 0;
}

/* RFC 9562 5.5: the first 16 bytes of the SHA-1, version 5, variant 10xx. */
static void uuid_from_sha1_hex(const char *hex, char out[129])
{
    uint8_t u[16];
    for (int i = 0; i < 16; i++) {
        unsigned v;
        sscanf(hex + 2 * i, "%2x", &v);
        u[i] = (uint8_t)v;
    }
    u[6] = (uint8_t)((u[6] & 0x0f) | 0x50);
    u[8] = (uint8_t)((u[8] & 0x3f) | 0x80);
    snprintf(out, 129,
             "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
             u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14],
             u[15]);
}

/* An emit callback stopped the run: its own error, or "cancelled". */
static int emit_stopped(mf_status *st, const char *path)
{
    return mf_ok(st) ? mf_fail(st, MF_ERR_CANCELLED, path, -1, "cancelled") : -1;
}

int mf_hash_kinds(const mf_model *m, unsigned mask, bool per_tensor, mf_hash_emit_fn emit,
                  void *ctx, mf_status *st)
{
    MF_ST_GUARD(st);
    mf_hasher *model[MF_HASH_KIND_COUNT] = {0}, *tensor[MF_HASH_KIND_COUNT] = {0};
    int rc = 0;
    for (int k = 0; k < MF_HASH_KIND_COUNT && rc == 0; k++) {
        if (!(mask & MF_HASH_BIT(k)))
            continue;
        model[k] = mf_hasher_new(k == MF_HASH_KIND_UUID ? MF_SHA1 : (mf_hash_algo)k);
        if (per_tensor && k != MF_HASH_KIND_UUID)
            tensor[k] = mf_hasher_new((mf_hash_algo)k);
        if (!model[k] || (per_tensor && k != MF_HASH_KIND_UUID && !tensor[k]))
            rc = mf_oom(st, m->path);
        else if (k == MF_HASH_KIND_UUID)
            mf_hasher_update(model[k], uuid_namespace, sizeof(uuid_namespace));
    }
    tee all = {.n = 0};
    for (int k = 0; k < MF_HASH_KIND_COUNT; k++) {
        if (model[k])
            all.h[all.n++] = model[k];
        if (tensor[k])
            all.h[all.n++] = tensor[k];
    }
    char hex[129];
    for (size_t i = 0; i < m->n_tensors && rc == 0; i++) {
        const mf_tensor *t = &m->tensors[i];
        rc = mf_tensor_stream(m, t, tee_sink, &all, st);
        for (int j = 0; j < MF_HASH_KIND_COUNT && rc == 0; j++) {
            int k = emit_order[j];
            if (!tensor[k])
                continue;
            mf_hasher_final_hex(tensor[k], hex);
            if (emit(ctx, k, hex, t->name, st))
                rc = emit_stopped(st, m->path);
        }
    }
    for (int j = 0; j < MF_HASH_KIND_COUNT && rc == 0; j++) {
        int k = emit_order[j];
        if (!model[k])
            continue;
        mf_hasher_final_hex(model[k], hex);
        if (k == MF_HASH_KIND_UUID)
            uuid_from_sha1_hex(hex, hex);
        if (emit(ctx, k, hex, NULL, st))
            rc = emit_stopped(st, m->path);
    }
    for (int k = 0; k < MF_HASH_KIND_COUNT; k++) {
        mf_hasher_free(model[k]);
        mf_hasher_free(tensor[k]);
    }
    return rc;
}

/* ----------------------------------------------------------------- write */

typedef struct writer {
    const char *label;
    mf_sink_fn sink;
    void *sink_ctx;
} writer;

static int write_line(void *ctx, int kind, const char *hex, const char *tensor, mf_status *st)
{
    writer *wr = ctx;
    if (tensor && strpbrk(tensor, "\r\n"))
        return mf_fail(st, MF_ERR_UNSUPPORTED, wr->label, -1,
                       "tensor name \"%s\" holds a line break: it cannot be a manifest line",
                       tensor);
    char *line = NULL;
    int n = asprintf(&line, "%-8s  %s  %s%s%s\n", mf_hash_kind_name(kind), hex, wr->label,
                     tensor ? ":" : "", tensor ? tensor : "");
    if (n < 0)
        return mf_oom(st, wr->label);
    int rc = wr->sink(wr->sink_ctx, line, (size_t)n, st);
    free(line);
    return rc;
}

int mf_manifest_write(const mf_model *m, const char *label, unsigned mask, mf_sink_fn sink,
                      void *ctx, mf_status *st)
{
    MF_ST_GUARD(st);
    if (!mask)
        return mf_fail(st, MF_ERR_USAGE, m->path, -1, "no hash kind asked for");
    writer wr = {.label = label ? label : m->path, .sink = sink, .sink_ctx = ctx};
    return mf_hash_kinds(m, mask, true, write_line, &wr, st);
}

int mf_manifest_write_file(const mf_model *m, const char *label, unsigned mask,
                           const char *out_path, mf_status *st)
{
    MF_ST_GUARD(st);
    mf_atomic *w;
    if (mf_output_check(m, out_path, st) || mf_atomic_open(out_path, &w, st))
        return -1;
    if (mf_manifest_write(m, label, mask, mf_atomic_sink, w, st)) {
        mf_atomic_abort(w);
        return -1;
    }
    return mf_atomic_commit(w, st);
}

/* ----------------------------------------------------------------- check */

typedef struct entry {
    int kind;
    const char *hash, *name;
    size_t line;
} entry;

struct mf_manifest {
    char *text;
    entry *e;
    size_t n;
    unsigned kinds;
};
typedef struct mf_manifest manifest;

static int cmp_entry(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    if (x->kind != y->kind)
        return x->kind - y->kind;
    int c = strcmp(x->name, y->name);
    if (c)
        return c;
    return x->line < y->line ? -1 : x->line > y->line;
}

static char *skip_ws(char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

static char *word_end(char *p)
{
    while (*p && *p != ' ' && *p != '\t')
        p++;
    return p;
}

/* One line: KIND HASH NAME (the name runs to the end of the line, so names
 * with spaces survive; llama-gguf-hash reads the third word, the same for
 * every name it writes). Lines of unknown kinds are skipped, as it does. */
static void parse_line(manifest *mf, char *line, size_t lineno)
{
    size_t len = strlen(line);
    while (len && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t'))
        line[--len] = 0;
    char *kind = skip_ws(line), *ke = word_end(kind);
    char *hash = skip_ws(ke), *he = word_end(hash);
    char *name = skip_ws(he);
    if (ke == kind || he == hash || !*name)
        return;
    *ke = 0;
    *he = 0;
    int k = hk_from_name(kind, strlen(kind));
    if (k < 0)
        return;
    mf->e[mf->n++] = (entry){k, hash, name, lineno};
    mf->kinds |= MF_HASH_BIT(k);
}

static int manifest_load(manifest *mf, const char *path, mf_status *st)
{
    size_t len;
    if (mf_read_small_file(path, (size_t)1 << 30, &mf->text, &len, st))
        return -1;
    size_t lines = 1;
    for (size_t i = 0; i < len; i++)
        lines += mf->text[i] == '\n';
    mf->e = calloc(lines, sizeof(entry));
    if (!mf->e)
        return mf_oom(st, path);
    size_t lineno = 0;
    for (char *p = mf->text, *nl; p; p = nl ? nl + 1 : NULL) {
        nl = strchr(p, '\n');
        if (nl)
            *nl = 0;
        parse_line(mf, p, ++lineno); /* at most one entry per line */
    }
    qsort(mf->e, mf->n, sizeof(entry), cmp_entry);
    return 0;
}

int mf_manifest_load(const char *path, mf_manifest **out, mf_status *st)
{
    MF_ST_GUARD(st);
    *out = NULL;
    manifest *mf = calloc(1, sizeof(*mf));
    if (!mf)
        return mf_oom(st, path);
    if (manifest_load(mf, path, st)) {
        mf_manifest_free(mf);
        return -1;
    }
    *out = mf;
    return 0;
}

void mf_manifest_free(mf_manifest *mf)
{
    if (!mf)
        return;
    free(mf->text);
    free(mf->e);
    free(mf);
}

unsigned mf_manifest_kinds(const mf_manifest *mf)
{
    return mf->kinds;
}

unsigned mf_manifest_default_mask(const mf_manifest *mf)
{
    for (int j = 0; j < MF_HASH_KIND_COUNT; j++)
        if (mf->kinds & MF_HASH_BIT(strength_order[j]))
            return MF_HASH_BIT(strength_order[j]);
    return 0;
}

/* The first line (in file order) of this kind and name, as llama-gguf-hash
 * takes the first that matches. */
static const entry *manifest_find(const manifest *mf, int kind, const char *name)
{
    size_t lo = 0, hi = mf->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const entry *e = &mf->e[mid];
        int c = e->kind != kind ? e->kind - kind : strcmp(e->name, name);
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < mf->n && mf->e[lo].kind == kind && strcmp(mf->e[lo].name, name) == 0)
        return &mf->e[lo];
    return NULL;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

static bool names_model(const char *entry_name, const char *label)
{
    size_t n = strlen(label);
    return strncmp(entry_name, label, n) == 0 && (entry_name[n] == 0 || entry_name[n] == ':');
}

/* llama-gguf-hash matches names exactly, so a manifest written for
 * "model.gguf" fails for "./dir/model.gguf". mfmt takes the exact path when
 * the manifest has it, else the one model name with the same file name
 * (from the model line, or the line of the first tensor). */
static char *resolve_label(const manifest *mf, const mf_model *m, const char *path)
{
    for (size_t i = 0; i < mf->n; i++)
        if (names_model(mf->e[i].name, path))
            return strdup(path);
    const char *want = base_name(path), *found = NULL;
    /* "-" (standard input) has no file name: any one model name will do */
    bool any_name = strcmp(path, "-") == 0;
    const char *t0 = m->n_tensors ? m->tensors[0].name : NULL;
    size_t t0len = t0 ? strlen(t0) : 0;
    for (size_t i = 0; i < mf->n; i++) {
        const char *nm = mf->e[i].name;
        size_t len = strlen(nm);
        char *cand = NULL;
        if (!any_name && strcmp(base_name(nm), want) == 0)
            cand = strdup(nm);
        else if (t0 && len > t0len + 1 && nm[len - t0len - 1] == ':' &&
                 strcmp(nm + len - t0len, t0) == 0)
            cand = strndup(nm, len - t0len - 1);
        if (!cand)
            continue;
        if (!any_name && strcmp(base_name(cand), want) != 0) {
            free(cand);
            continue;
        }
        if (found && strcmp(found, cand) != 0) { /* two candidates: ambiguous */
            free(cand);
            free((char *)found);
            return strdup(path);
        }
        free((char *)found);
        found = cand;
    }
    return found ? (char *)found : strdup(path);
}

char *mf_manifest_label(const mf_manifest *mf, const mf_model *m, const char *path)
{
    return resolve_label(mf, m, path);
}

typedef struct checker {
    const manifest *mf;
    const char *label;
    mf_manifest_line_fn on_line;
    void *user;
    bool tensor_seen, tensor_bad, model_seen, model_bad;
} checker;

static int check_line(void *ctx, int kind, const char *hex, const char *tensor, mf_status *st)
{
    checker *c = ctx;
    char *name = NULL;
    if (asprintf(&name, "%s%s%s", c->label, tensor ? ":" : "", tensor ? tensor : "") < 0)
        return mf_oom(st, c->label);
    const entry *e = manifest_find(c->mf, kind, name);
    mf_manifest_match match = MF_MATCH_NOT_FOUND;
    if (e) {
        bool ok = strcasecmp(e->hash, hex) == 0;
        match = ok ? MF_MATCH_OK : MF_MATCH_MISMATCH;
        if (tensor) {
            c->tensor_seen = true;
            c->tensor_bad |= !ok;
        } else {
            c->model_seen = true;
            c->model_bad |= !ok;
        }
    }
    int rc = c->on_line ? c->on_line(c->user, kind, hex, name, match) : 0;
    free(name);
    return rc;
}

/* llama-gguf-hash's verdict: without the model line, the tensor lines
 * decide (none found: missing entry); with it, any mismatch fails. */
static mf_manifest_outcome verdict_of(const checker *c)
{
    if (!c->model_seen) {
        if (!c->tensor_seen)
            return MF_MANIFEST_MISSING_ENTRY;
        return c->tensor_bad ? MF_MANIFEST_MISMATCH : MF_MANIFEST_OK;
    }
    return c->tensor_bad || c->model_bad ? MF_MANIFEST_MISMATCH : MF_MANIFEST_OK;
}

const char *mf_manifest_outcome_name(mf_manifest_outcome o)
{
    switch (o) {
    case MF_MANIFEST_OK: return "Success";
    case MF_MANIFEST_MISMATCH: return "Failure";
    case MF_MANIFEST_MISSING_ENTRY: return "Manifest Missing Entry";
    case MF_MANIFEST_UNKNOWN_HASH: return "Unknown Hash Type";
    case MF_MANIFEST_FILE_ERROR: return "Manifest File Error";
    }
    return "?";
}

const char *mf_manifest_match_name(mf_manifest_match m)
{
    switch (m) {
    case MF_MATCH_OK: return "Ok";
    case MF_MATCH_MISMATCH: return "Mismatch";
    case MF_MATCH_NOT_FOUND: return "Not Found";
    }
    return "?";
}

int mf_manifest_check(const mf_manifest *mf, const mf_model *m, const char *label,
                      unsigned mask, mf_manifest_line_fn on_line, void *user,
                      mf_manifest_outcome *outcome, mf_status *st)
{
    MF_ST_GUARD(st);
    if (!mf->kinds) {
        *outcome = MF_MANIFEST_UNKNOWN_HASH;
        return 0;
    }
    if (!mask)
        mask = mf_manifest_default_mask(mf);
    checker c = {.mf = mf, .label = label ? label : m->path, .on_line = on_line, .user = user};
    if (mf_hash_kinds(m, mask, true, check_line, &c, st))
        return -1;
    *outcome = verdict_of(&c);
    return 0;
}
