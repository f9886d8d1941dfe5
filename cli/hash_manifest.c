/* hash_manifest.c - multi-algorithm tensor hashing and llama-gguf-hash
 * manifests (write and check). See hash_manifest.h for the line format. */
#include "hash_manifest.h"

#include <stdlib.h>
#include <strings.h>

static const char *const hk_names[HK_COUNT] = {"sha256", "sha1", "xxh64", "xxh3", "uuid"};
/* The order in which llama-gguf-hash prints a tensor's (and the model's) lines. */
static const int emit_order[HK_COUNT] = {MF_XXH64, MF_XXH3, MF_SHA1, MF_SHA256, HK_UUID};
/* --check without --algo takes the strongest kind the manifest holds. */
static const int strength_order[HK_COUNT] = {MF_SHA256, MF_SHA1, MF_XXH64, MF_XXH3, HK_UUID};

/* uuid.uuid5(uuid.NAMESPACE_URL, 'en.wikipedia.org/wiki/Llama.cpp'), the
 * namespace llama-gguf-hash prefixes to the tensor bytes for its UUIDv5. */
static const uint8_t uuid_namespace[16] = {0xef, 0x00, 0x12, 0x06, 0xda, 0xdc, 0x5f, 0x6d,
                                           0xa1, 0x5f, 0x33, 0x59, 0xe5, 0x77, 0xd4, 0xe5};

const char *hk_name(int kind)
{
    return kind >= 0 && kind < HK_COUNT ? hk_names[kind] : "?";
}

static int hk_from_name(const char *s, size_t n)
{
    for (int k = 0; k < HK_COUNT; k++)
        if (strlen(hk_names[k]) == n && strncmp(hk_names[k], s, n) == 0)
            return k;
    return -1;
}

int hk_parse_list(const char *s, unsigned *mask)
{
    *mask = 0;
    while (*s) {
        size_t n = strcspn(s, ",");
        if (n == 3 && strncmp(s, "all", 3) == 0)
            *mask |= HK_BIT(MF_SHA256) | HK_BIT(MF_SHA1) | HK_BIT(MF_XXH64) | HK_BIT(MF_XXH3);
        else {
            int k = hk_from_name(s, n);
            if (k < 0)
                return -1;
            *mask |= HK_BIT(k);
        }
        s += n;
        if (*s == ',')
            s++;
    }
    return *mask ? 0 : -1;
}

/* ------------------------------------------------------ one-pass hashing */

typedef struct tee {
    mf_hasher *h[2 * HK_COUNT];
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

int hk_hash_model(const mf_model *m, unsigned mask, bool per_tensor, hk_emit_fn emit,
                  void *ctx, mf_status *st)
{
    mf_hasher *model[HK_COUNT] = {0}, *tensor[HK_COUNT] = {0};
    int rc = 0;
    for (int k = 0; k < HK_COUNT && rc == 0; k++) {
        if (!(mask & HK_BIT(k)))
            continue;
        model[k] = mf_hasher_new(k == HK_UUID ? MF_SHA1 : (mf_hash_algo)k);
        if (per_tensor && k != HK_UUID)
            tensor[k] = mf_hasher_new((mf_hash_algo)k);
        if (!model[k] || (per_tensor && k != HK_UUID && !tensor[k]))
            rc = mf_oom(st, m->path);
        else if (k == HK_UUID)
            mf_hasher_update(model[k], uuid_namespace, sizeof(uuid_namespace));
    }
    tee all = {.n = 0};
    for (int k = 0; k < HK_COUNT; k++) {
        if (model[k])
            all.h[all.n++] = model[k];
        if (tensor[k])
            all.h[all.n++] = tensor[k];
    }
    char hex[129];
    for (size_t i = 0; i < m->n_tensors && rc == 0; i++) {
        const mf_tensor *t = &m->tensors[i];
        rc = mf_tensor_stream(m, t, tee_sink, &all, st);
        for (int j = 0; j < HK_COUNT && rc == 0; j++) {
            int k = emit_order[j];
            if (!tensor[k])
                continue;
            mf_hasher_final_hex(tensor[k], hex);
            rc = emit(ctx, k, hex, t->name, st);
        }
    }
    for (int j = 0; j < HK_COUNT && rc == 0; j++) {
        int k = emit_order[j];
        if (!model[k])
            continue;
        mf_hasher_final_hex(model[k], hex);
        if (k == HK_UUID)
            uuid_from_sha1_hex(hex, hex);
        rc = emit(ctx, k, hex, NULL, st);
    }
    for (int k = 0; k < HK_COUNT; k++) {
        mf_hasher_free(model[k]);
        mf_hasher_free(tensor[k]);
    }
    return rc;
}

/* ----------------------------------------------------------------- write */

typedef struct writer {
    const char *label, *out;
    mf_atomic *w; /* NULL: stdout */
} writer;

static int write_line(void *ctx, int kind, const char *hex, const char *tensor, mf_status *st)
{
    writer *wr = ctx;
    if (tensor && strpbrk(tensor, "\r\n"))
        return mf_fail(st, MF_ERR_UNSUPPORTED, wr->out, -1,
                       "tensor name \"%s\" holds a line break: it cannot be a manifest line",
                       tensor);
    char *line = NULL;
    int n = asprintf(&line, "%-8s  %s  %s%s%s\n", hk_name(kind), hex, wr->label,
                     tensor ? ":" : "", tensor ? tensor : "");
    if (n < 0)
        return mf_oom(st, wr->out);
    int rc = 0;
    if (wr->w)
        rc = mf_atomic_write(wr->w, line, (size_t)n, st);
    else if (fwrite(line, 1, (size_t)n, stdout) != (size_t)n)
        rc = mf_fail(st, MF_ERR_IO, "stdout", -1, "write failed");
    free(line);
    return rc;
}

int manifest_write(const mf_model *m, const char *label, unsigned mask, const char *out,
                   mf_status *st)
{
    writer wr = {.label = label, .out = out};
    if (strcmp(out, "-") != 0 && (mf_output_check(m, out, st) || mf_atomic_open(out, &wr.w, st)))
        return -1;
    int rc = hk_hash_model(m, mask, true, write_line, &wr, st);
    if (wr.w) {
        if (rc == 0)
            rc = mf_atomic_commit(wr.w, st);
        else
            mf_atomic_abort(wr.w);
    }
    return rc;
}

/* ----------------------------------------------------------------- check */

typedef struct entry {
    int kind;
    const char *hash, *name;
    size_t line;
} entry;

typedef struct manifest {
    char *text;
    entry *e;
    size_t n;
    unsigned kinds;
} manifest;

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
    mf->kinds |= HK_BIT(k);
}

static int manifest_load(manifest *mf, const char *path, mf_status *st)
{
    memset(mf, 0, sizeof(*mf));
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

static void manifest_free(manifest *mf)
{
    free(mf->text);
    free(mf->e);
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
static const char *resolve_label(const manifest *mf, const mf_model *m, const char *path)
{
    for (size_t i = 0; i < mf->n; i++)
        if (names_model(mf->e[i].name, path))
            return path;
    const char *want = base_name(path), *found = NULL;
    const char *t0 = m->n_tensors ? m->tensors[0].name : NULL;
    size_t t0len = t0 ? strlen(t0) : 0;
    for (size_t i = 0; i < mf->n; i++) {
        const char *nm = mf->e[i].name;
        size_t len = strlen(nm);
        char *cand = NULL;
        if (strcmp(base_name(nm), want) == 0)
            cand = strdup(nm);
        else if (t0 && len > t0len + 1 && nm[len - t0len - 1] == ':' &&
                 strcmp(nm + len - t0len, t0) == 0)
            cand = strndup(nm, len - t0len - 1);
        if (!cand)
            continue;
        if (strcmp(base_name(cand), want) != 0) {
            free(cand);
            continue;
        }
        if (found && strcmp(found, cand) != 0) { /* two candidates: ambiguous */
            free(cand);
            free((char *)found);
            return path;
        }
        free((char *)found);
        found = cand;
    }
    return found ? found : path;
}

typedef struct checker {
    const manifest *mf;
    const char *label;
    bool tensor_seen, tensor_bad, model_seen, model_bad;
} checker;

static int check_line(void *ctx, int kind, const char *hex, const char *tensor, mf_status *st)
{
    checker *c = ctx;
    char *name = NULL;
    if (asprintf(&name, "%s%s%s", c->label, tensor ? ":" : "", tensor ? tensor : "") < 0)
        return mf_oom(st, c->label);
    const entry *e = manifest_find(c->mf, kind, name);
    const char *verdict = "Not Found";
    if (e) {
        bool ok = strcasecmp(e->hash, hex) == 0;
        verdict = ok ? "Ok" : "Mismatch";
        if (tensor) {
            c->tensor_seen = true;
            c->tensor_bad |= !ok;
        } else {
            c->model_seen = true;
            c->model_bad |= !ok;
        }
    }
    printf("%-8s  %s  %s  -  %s\n", hk_name(kind), hex, name, verdict);
    free(name);
    return 0;
}

/* llama-gguf-hash's verdict: without the model line, the tensor lines
 * decide (none found: missing entry); with it, any mismatch fails. */
static int verdict_of(const checker *c)
{
    if (!c->model_seen) {
        if (!c->tensor_seen)
            return MANIFEST_MISSING_ENTRY;
        return c->tensor_bad ? MANIFEST_MISMATCH : MANIFEST_OK;
    }
    return c->tensor_bad || c->model_bad ? MANIFEST_MISMATCH : MANIFEST_OK;
}

static const char *verdict_name(int v)
{
    switch (v) {
    case MANIFEST_OK: return "Success";
    case MANIFEST_MISMATCH: return "Failure";
    case MANIFEST_MISSING_ENTRY: return "Manifest Missing Entry";
    default: return "?";
    }
}

int manifest_check(const char *model_path, const char *manifest_path, unsigned mask)
{
    mf_status st;
    mf_status_init(&st);
    manifest mf;
    if (manifest_load(&mf, manifest_path, &st)) {
        fprintf(stderr, "mfmt: cannot read manifest: %s\n", st.msg);
        manifest_free(&mf);
        mf_status_clear(&st);
        return MANIFEST_FILE_ERROR;
    }
    int rc;
    mf_model *m = NULL;
    if (!mf.kinds) {
        fprintf(stderr, "mfmt: %s: no line of a known hash type (sha256, sha1, xxh64, xxh3, uuid)\n",
                manifest_path);
        rc = MANIFEST_UNKNOWN_HASH;
        goto out;
    }
    printf("manifest  %s", manifest_path);
    for (int j = 0; j < HK_COUNT; j++)
        if (mf.kinds & HK_BIT(strength_order[j]))
            printf("  %s", hk_name(strength_order[j]));
    printf("\n");
    if (!mask)
        for (int j = 0; j < HK_COUNT && !mask; j++)
            if (mf.kinds & HK_BIT(strength_order[j]))
                mask = HK_BIT(strength_order[j]);
    if (mf_open(model_path, NULL, &m, &st)) {
        rc = cli_report(&st);
        goto out;
    }
    checker c = {.mf = &mf, .label = resolve_label(&mf, m, model_path)};
    if (c.label != model_path)
        fprintf(stderr, "mfmt: the manifest names this model \"%s\"\n", c.label);
    if (hk_hash_model(m, mask, true, check_line, &c, &st)) {
        rc = cli_report(&st);
    } else {
        rc = verdict_of(&c);
        printf("\nVerification results for %s - %s\n", manifest_path, verdict_name(rc));
    }
    if (c.label != model_path)
        free((char *)c.label);
out:
    mf_close(m);
    manifest_free(&mf);
    mf_status_clear(&st);
    return rc;
}
