/* hf2gguf_general.c - the general.* GGUF keys llama.cpp's converter derives from a
 * Hugging Face directory: gguf-py's Metadata heuristics (gguf/metadata.py
 * and utility.py at the llama.cpp commit of ../shared/convert-ref), applied
 * to the model card's front matter, config.json's _name_or_path and the
 * directory's name, written in set_gguf_meta_model's order. */
#include "ops/hfconv/hfconv.h"
#include "core/json_build.h"

#include <ctype.h>
#include <stddef.h>
#include <math.h>
#include <stdlib.h>

/* ------------------------------------------------------- Python strings */

static bool py_islower(const char *s)
{
    bool cased = false;
    for (; *s; s++) {
        if (isupper((unsigned char)*s))
            return false;
        cased |= islower((unsigned char)*s) != 0;
    }
    return cased;
}

/* str.title(): a cased character is upper-cased after an uncased one,
 * lower-cased after a cased one (ASCII letters are the cased characters). */
static void py_title(char *s)
{
    bool prev_cased = false;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        bool cased = isalpha(c) != 0;
        if (cased)
            *s = (char)(prev_cased ? tolower(c) : toupper(c));
        prev_cased = cased;
    }
}

/* re.match(r'^(v\d+(?:\.\d+)*|\d.*)$', w) */
/* fullmatch \d+([.]\d+)* */
static bool dotted_number(const char *p)
{
    for (;;) {
        size_t k = 0;
        while (isdigit((unsigned char)p[k]))
            k++;
        if (!k)
            return false;
        p += k;
        if (!*p)
            return true;
        if (*p != '.')
            return false;
        p++;
    }
}

static bool version_or_number(const char *w)
{
    if (isdigit((unsigned char)w[0]))
        return true;
    return w[0] == 'v' && dotted_number(w + 1);
}

/* Metadata.id_to_title: words split on blanks (after '-' -> ' '); a word
 * all in lower case is title-cased unless it is a version or starts with a
 * digit. Returns malloc'd text. */
char *mf_hf_id_to_title(const char *id)
{
    size_t n = strlen(id);
    char *buf = malloc(n + 1), *out = malloc(n + 1);
    if (!buf || !out) {
        free(buf);
        free(out);
        return NULL;
    }
    for (size_t i = 0; i <= n; i++)
        buf[i] = id[i] == '-' ? ' ' : id[i];
    size_t k = 0;
    char *save = NULL;
    for (char *w = strtok_r(buf, " \t\n\r\f\v", &save); w; w = strtok_r(NULL, " \t\n\r\f\v", &save)) {
        if (py_islower(w) && !version_or_number(w))
            py_title(w);
        if (k)
            out[k++] = ' ';
        memcpy(out + k, w, strlen(w));
        k += strlen(w);
    }
    out[k] = 0;
    free(buf);
    return out;
}

/* ---------------------------------------------- model id components */

enum { T_BASENAME = 1, T_SIZE = 2, T_FINETUNE = 4, T_VERSION = 8, T_TYPE = 16 };

/* fullmatch (v|iter)?\d+([.]\d+)* , ignoring case */
static bool is_version_part(const char *s)
{
    if (strncasecmp(s, "iter", 4) == 0 && isdigit((unsigned char)s[4]))
        s += 4;
    else if ((s[0] == 'v' || s[0] == 'V') && isdigit((unsigned char)s[1]))
        s += 1;
    return dotted_number(s);
}

static bool is_word_char(char c)
{
    return isalnum((unsigned char)c) || c == '_' || (unsigned char)c >= 0x80;
}

/* fullmatch i?q\d(_\w)*|b?fp?(16|32) , ignoring case */
static bool is_type_part(const char *s)
{
    const char *p = s;
    if (tolower((unsigned char)*p) == 'i')
        p++;
    if (tolower((unsigned char)*p) == 'q' && isdigit((unsigned char)p[1])) {
        p += 2;
        while (p[0] == '_' && p[1] && is_word_char(p[1]))
            p += 2;
        if (!*p)
            return true;
    }
    p = s;
    if (tolower((unsigned char)*p) == 'b')
        p++;
    if (tolower((unsigned char)*p) != 'f')
        return false;
    p++;
    if (tolower((unsigned char)*p) == 'p')
        p++;
    return strcmp(p, "16") == 0 || strcmp(p, "32") == 0;
}

static bool is_kmbt(char c)
{
    return c && strchr("KMBTkmbt", c);
}

/* fullmatch (([A]|\d+[x])?\d+([._]\d+)?[KMBT][\d]?|small|mini|medium|large|x?xl) , ignoring case */
static bool is_size_part(const char *s)
{
    static const char *const words[] = {"small", "mini", "medium", "large", "xl", "xxl", NULL};
    for (size_t i = 0; words[i]; i++)
        if (strcasecmp(s, words[i]) == 0)
            return true;
    const char *p = s;
    if (*p == 'A' || *p == 'a') {
        p++;
    } else {
        const char *q = p;
        while (isdigit((unsigned char)*q))
            q++;
        if (q > p && (*q == 'x' || *q == 'X'))
            p = q + 1;
    }
    size_t k = 0;
    while (isdigit((unsigned char)p[k]))
        k++;
    if (!k)
        return false;
    p += k;
    if ((*p == '.' || *p == '_') && isdigit((unsigned char)p[1])) {
        p++;
        while (isdigit((unsigned char)*p))
            p++;
    }
    if (!is_kmbt(*p))
        return false;
    p++;
    if (isdigit((unsigned char)*p))
        p++;
    return *p == 0;
}

static bool is_finetune_word(const char *s)
{
    return strcasecmp(s, "chat") == 0 || strcasecmp(s, "instruct") == 0 ||
           strcasecmp(s, "vision") == 0 || strcasecmp(s, "lora") == 0;
}

/* normalize_size_label: '_' -> '.'; "7b1" -> "7.1b"; a lower-case suffix
 * after a digit upper-cased. In place (same length or one longer: the
 * buffer has room). */
static void normalize_size_label(char *l)
{
    for (char *p = l; *p; p++)
        if (*p == '_')
            *p = '.';
    size_t n = strlen(l);
    if (n >= 2 && isdigit((unsigned char)l[n - 1])) {
        char last = l[n - 1], prev = l[n - 2];
        l[n - 2] = '.';
        l[n - 1] = last;
        l[n] = prev;
        l[n + 1] = 0;
        n++;
    }
    if (n > 1 && isdigit((unsigned char)l[n - 2]) && strchr("kmbt", l[n - 1]))
        l[n - 1] = (char)toupper((unsigned char)l[n - 1]);
}

/* float(label[:-1]) * 1000 ** " KMBT".find(label[-1]); false if not a number */
static bool size_label_params(const char *l, double *out)
{
    size_t n = strlen(l);
    if (n < 2)
        return false;
    char num[64];
    if (n - 1 >= sizeof(num))
        return false;
    memcpy(num, l, n - 1);
    num[n - 1] = 0;
    char *end;
    double v = strtod(num, &end);
    if (*end || end == num || isspace((unsigned char)num[0]))
        return false;
    const char *pos = strchr(" KMBT", l[n - 1]);
    int e = pos ? (int)(pos - " KMBT") : -1;
    *out = v * pow(1000.0, e);
    return true;
}

static char *join_parts(char **parts, const int *types, size_t n, int want, int exclude, bool dedup)
{
    size_t len = 1;
    for (size_t i = 0; i < n; i++)
        len += strlen(parts[i]) + 1;
    char *out = malloc(len);
    if (!out)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(types[i] & want) || (types[i] & exclude))
            continue;
        bool seen = false;
        for (size_t j = 0; dedup && j < i; j++)
            seen |= (types[j] & want) && strcmp(parts[j], parts[i]) == 0;
        if (seen)
            continue;
        if (k)
            out[k++] = '-';
        memcpy(out + k, parts[i], strlen(parts[i]));
        k += strlen(parts[i]);
    }
    out[k] = 0;
    if (!k) {
        free(out);
        return NULL;
    }
    return out;
}

void mf_hf_id_free(mf_hf_id *c)
{
    free(c->full_name);
    free(c->org);
    free(c->basename);
    free(c->finetune);
    free(c->version);
    free(c->size_label);
    memset(c, 0, sizeof(*c));
}

/* Metadata.get_model_id_components(model_id, total_params). */
int mf_hf_id_components(const char *id, int64_t total_params, mf_hf_id *c)
{
    memset(c, 0, sizeof(*c));
    if (!id)
        return 0;
    if (strchr(id, ' ')) {
        c->full_name = strdup(id);
        return c->full_name ? 0 : -1;
    }
    const char *slash = strchr(id, '/');
    c->full_name = strdup(slash ? slash + 1 : id);
    if (slash && slash > id && id[0] != '.')
        c->org = strndup(id, (size_t)(slash - id));
    else if (slash && slash == id)
        c->org = strdup("");
    if (!c->full_name || (slash && slash > id && id[0] != '.' && !c->org))
        return -1;
    size_t n = strlen(c->full_name);
    char *work = malloc(n + 1);
    char **parts = calloc(n + 1, sizeof(char *));
    int *types = calloc(n + 1, sizeof(int));
    if (!work || !parts || !types) {
        free(work);
        free(parts);
        free(types);
        return -1;
    }
    size_t np = 0;
    memcpy(work, c->full_name, n + 1);
    int rc = 0;
    for (char *p = work, *e; p; p = e ? e + 1 : NULL) {
        e = strchr(p, '-');
        if (e)
            *e = 0;
        if (*p) {
            parts[np] = malloc(strlen(p) + 2); /* room for normalize_size_label */
            if (!parts[np]) {
                rc = -1;
                break;
            }
            strcpy(parts[np++], p);
        }
    }
    for (size_t i = 0; rc == 0 && i < np; i++) {
        char *part = parts[i];
        if (is_version_part(part)) {
            types[i] |= T_VERSION;
        } else if (is_type_part(part)) {
            types[i] |= T_TYPE;
            for (char *q = part; *q; q++)
                *q = (char)toupper((unsigned char)*q);
        } else if (i > 0 && is_size_part(part)) {
            normalize_size_label(part);
            double lp;
            if (total_params != 0 && size_label_params(part, &lp)) {
                int64_t tp = total_params < 0 ? -total_params : total_params;
                bool ctx_len = total_params < 0 ? lp < (double)(tp / 8)
                                                : fabs(lp - (double)total_params) > (double)(7 * tp / 8);
                if (ctx_len) { /* likely a context length: a finetune part */
                    types[i] |= T_FINETUNE;
                    size_t pl = strlen(part);
                    part[pl - 1] = (char)tolower((unsigned char)part[pl - 1]);
                }
            }
            if (!types[i])
                types[i] |= T_SIZE;
        } else if (i > 0 && is_finetune_word(part)) {
            types[i] |= total_params < 0 && strcasecmp(part, "lora") == 0 ? T_TYPE : T_FINETUNE;
        }
    }
    /* word sizes (small, large...) do not count when a numeric one is there */
    bool numeric_size = false;
    for (size_t i = 0; i < np; i++)
        if (types[i] & T_SIZE)
            for (const char *q = parts[i]; *q; q++)
                numeric_size |= isdigit((unsigned char)*q) != 0;
    for (size_t i = 0; numeric_size && i < np; i++) {
        bool alpha = true;
        for (const char *q = parts[i]; *q; q++)
            alpha &= isalpha((unsigned char)*q) != 0;
        if ((types[i] & T_SIZE) && alpha)
            types[i] &= ~T_SIZE;
    }
    bool at_start = true;
    for (size_t i = 0; i < np; i++) {
        if (at_start && ((types[i] == 0 && isalpha((unsigned char)parts[i][0])) || (types[i] & T_VERSION))) {
            types[i] |= T_BASENAME;
        } else {
            at_start = false;
            if (types[i] == 0)
                types[i] |= T_FINETUNE;
        }
    }
    for (size_t i = np; i-- > 0;) { /* a trailing version is no part of the basename */
        if ((types[i] & T_BASENAME) && types[i] != T_BASENAME)
            types[i] &= ~T_BASENAME;
        else
            break;
    }
    if (rc == 0) {
        c->basename = join_parts(parts, types, np, T_BASENAME, 0, false);
        c->size_label = join_parts(parts, types, np, T_SIZE, 0, true);
        c->finetune = join_parts(parts, types, np, T_FINETUNE, 0, false);
        c->version = join_parts(parts, types, np, T_VERSION, T_BASENAME, false);
        if (!c->size_label && !c->finetune && !c->version) { /* too ambiguous */
            free(c->basename);
            c->basename = NULL;
        }
    }
    for (size_t i = 0; i < np; i++)
        free(parts[i]);
    free(parts);
    free(types);
    free(work);
    return rc;
}

/* utility.py model_weight_count_rounded_notation(n, min_digits=2) */
void mf_hf_size_label(int64_t total, char *out, size_t cap)
{
    double n = (double)(total < 0 ? -total : total), scaled;
    char suffix;
    if (n > 1e12) { scaled = n * 1e-12; suffix = 'T'; }
    else if (n > 1e9) { scaled = n * 1e-9; suffix = 'B'; }
    else if (n > 1e6) { scaled = n * 1e-6; suffix = 'M'; }
    else { scaled = n * 1e-3; suffix = 'K'; }
    /* fix = max(min_digits - len(str(round(scaled)).lstrip('0')), 0); Python's
     * round() goes to even on ties, as nearbyint does */
    char digits[64];
    snprintf(digits, sizeof(digits), "%.0f", nearbyint(scaled));
    const char *d = digits;
    while (*d == '0')
        d++;
    int fix = 2 - (int)strlen(d);
    if (fix < 0)
        fix = 0;
    snprintf(out, cap, "%.*f%c", fix, scaled, suffix);
}

/* ------------------------------------------------------------ metadata */

typedef struct gmeta {
    /* the fields set_gguf_meta_model writes, in its order */
    char *name, *author, *version, *organization, *finetune, *basename, *description,
         *quantized_by, *size_label, *license, *license_name, *license_link, *url, *doi,
         *uuid, *repo_url, *source_url, *source_doi, *source_uuid, *source_repo_url;
    json_t *base_models, *datasets, *tags, *languages; /* arrays, NULL when unset */
} gmeta;

static void set_if_unset(char **field, const char *v)
{
    if (!*field && v)
        *field = strdup(v);
}

/* use_model_card_metadata: a card key sets a field not yet set. Non-string
 * values are kept as their text (the converter would pass them on). */
static void use_card(json_t *card, char **field, const char *key)
{
    json_t *v = json_object_get(card, key);
    if (!v || *field || json_is_null(v))
        return;
    if (json_is_string(v)) {
        *field = strdup(json_string_value(v));
    } else if (json_is_array(v) && field) { /* license: [a, b] -> "a,b" */
        size_t len = 1;
        for (size_t i = 0; i < json_array_size(v); i++)
            len += strlen(json_string_value(json_array_get(v, i)) ? json_string_value(json_array_get(v, i)) : "") + 1;
        char *s = calloc(1, len);
        for (size_t i = 0; s && i < json_array_size(v); i++) {
            const char *x = json_string_value(json_array_get(v, i));
            if (i)
                strcat(s, ",");
            strcat(s, x ? x : "");
        }
        *field = s;
    } else {
        char *t = mf_json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
        *field = t;
    }
}

/* use_array_model_card_metadata: appends a string or a list. */
static void use_card_array(json_t *card, json_t **field, const char *key)
{
    json_t *v = json_object_get(card, key);
    if (!v || json_is_null(v))
        return;
    if (!*field)
        *field = json_array();
    if (json_is_string(v))
        json_array_append(*field, v);
    else if (json_is_array(v))
        json_array_extend(*field, v);
}

/* A base model or dataset entry from an id, a URL or a dict. */
static json_t *source_entry(json_t *id, int64_t total_params)
{
    if (json_is_object(id))
        return json_incref(id);
    json_t *e = json_object();
    const char *s = json_string_value(id);
    if (!s)
        return e; /* "not in a known format": an empty entry, counted */
    const char *hfid = NULL;
    bool url = strncmp(s, "http://", 7) == 0 || strncmp(s, "https://", 8) == 0 || strncmp(s, "ssh://", 6) == 0;
    if (url) {
        json_object_set_new(e, "repo_url", json_string(s));
        /* re.match(r"https?://huggingface.co/([^/]+/[^/]+)$", s) */
        const char *p = strncmp(s, "https://", 8) == 0 ? s + 8 : strncmp(s, "http://", 7) == 0 ? s + 7 : NULL;
        if (p && strstr(s, "huggingface.co") && strncmp(p, "huggingface.co/", 15) == 0) {
            p += 15;
            const char *sl = strchr(p, '/');
            if (sl && sl > p && sl[1] && !strchr(sl + 1, '/'))
                hfid = p;
        }
        if (!hfid)
            return e;
    } else {
        hfid = s;
    }
    mf_hf_id c;
    if (mf_hf_id_components(hfid, total_params, &c) == 0) {
        char *t;
        if (c.full_name && (t = mf_hf_id_to_title(c.full_name))) {
            json_object_set_new(e, "name", json_string(t));
            free(t);
        }
        if (c.org && (t = mf_hf_id_to_title(c.org))) {
            json_object_set_new(e, "organization", json_string(t));
            free(t);
        }
        if (c.version)
            json_object_set_new(e, "version", json_string(c.version));
        if (!url && c.org && c.full_name) {
            char *u = malloc(strlen(c.org) + strlen(c.full_name) + 32);
            if (u) {
                sprintf(u, "https://huggingface.co/%s/%s", c.org, c.full_name);
                json_object_set_new(e, "repo_url", json_string(u));
                free(u);
            }
        }
    }
    mf_hf_id_free(&c);
    return e;
}

static json_t *card_sources(json_t *card, const char *const *keys, int64_t total_params)
{
    json_t *v = NULL;
    bool present = false;
    for (size_t i = 0; keys[i]; i++)
        present |= json_object_get(card, keys[i]) != NULL;
    if (!present)
        return NULL;
    for (size_t i = 0; keys[i] && !v; i++)
        v = json_object_get(card, keys[i]); /* card.get(a, card.get(b, ...)) */
    json_t *ids = json_array(), *out = json_array();
    if (json_is_string(v))
        json_array_append(ids, v);
    else if (json_is_array(v))
        json_array_extend(ids, v);
    for (size_t i = 0; i < json_array_size(ids); i++)
        json_array_append_new(out, source_entry(json_array_get(ids, i), total_params));
    json_decref(ids);
    return out;
}

static void apply_card(gmeta *g, json_t *card, int64_t total_params)
{
    static const struct { size_t off; const char *key; } direct[] = {
#define F(f) offsetof(gmeta, f)
        {F(name), "name"}, {F(author), "author"}, {F(version), "version"},
        {F(organization), "organization"}, {F(description), "description"},
        {F(finetune), "finetune"}, {F(basename), "basename"}, {F(size_label), "size_label"},
        {F(source_url), "url"}, {F(source_doi), "doi"}, {F(source_uuid), "uuid"},
        {F(source_repo_url), "repo_url"},
        {F(name), "model_name"}, {F(author), "model_author"}, {F(version), "model_version"},
        {F(organization), "model_organization"}, {F(description), "model_description"},
        {F(finetune), "model_finetune"}, {F(basename), "model_basename"},
        {F(size_label), "model_size_label"}, {F(source_url), "model_url"},
        {F(source_doi), "model_doi"}, {F(source_uuid), "model_uuid"},
        {F(source_repo_url), "model_repo_url"},
        {F(name), "model_name"}, {F(author), "model_creator"}, {F(basename), "model_type"},
#undef F
    };
    for (size_t i = 0; i < sizeof(direct) / sizeof(direct[0]); i++)
        use_card(card, (char **)((char *)g + direct[i].off), direct[i].key);
    static const char *const bm_keys[] = {"base_model", "base_models", "base_model_sources", NULL};
    static const char *const ds_keys[] = {"datasets", "dataset", "dataset_sources", NULL};
    json_t *bm = card_sources(card, bm_keys, total_params);
    if (bm) {
        if (!g->base_models)
            g->base_models = json_array();
        json_array_extend(g->base_models, bm);
        json_decref(bm);
    }
    json_t *ds = card_sources(card, ds_keys, total_params);
    if (ds) {
        if (!g->datasets)
            g->datasets = json_array();
        json_array_extend(g->datasets, ds);
        json_decref(ds);
    }
    use_card(card, &g->license, "license");
    use_card(card, &g->license_name, "license_name");
    use_card(card, &g->license_link, "license_link");
    use_card_array(card, &g->tags, "tags");
    use_card_array(card, &g->tags, "pipeline_tag");
    use_card_array(card, &g->languages, "languages");
    use_card_array(card, &g->languages, "language");
}

/* _name_or_path of config.json and the directory's name: name components. */
static int apply_id(gmeta *g, const char *id, int64_t total_params)
{
    mf_hf_id c;
    if (mf_hf_id_components(id, total_params, &c))
        return -1;
    if (!g->name && c.full_name)
        g->name = mf_hf_id_to_title(c.full_name);
    if (!g->organization && c.org)
        g->organization = mf_hf_id_to_title(c.org);
    set_if_unset(&g->basename, c.basename);
    set_if_unset(&g->finetune, c.finetune);
    set_if_unset(&g->version, c.version);
    set_if_unset(&g->size_label, c.size_label);
    mf_hf_id_free(&c);
    return 0;
}

static void free_gmeta(gmeta *g)
{
    char **fields[] = {&g->name, &g->author, &g->version, &g->organization, &g->finetune,
                       &g->basename, &g->description, &g->quantized_by, &g->size_label,
                       &g->license, &g->license_name, &g->license_link, &g->url, &g->doi,
                       &g->uuid, &g->repo_url, &g->source_url, &g->source_doi,
                       &g->source_uuid, &g->source_repo_url};
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
        free(*fields[i]);
    json_decref(g->base_models);
    json_decref(g->datasets);
    json_decref(g->tags);
    json_decref(g->languages);
}

/* GGUFWriter.add_string skips empty (falsy) values. */
static void put_str(mf_kvlist *kv, const char *key, const char *v)
{
    if (v && *v)
        mf_kv_str(kv, key, v, strlen(v));
}

static void put_str_array(mf_kvlist *kv, const char *key, json_t *a)
{
    size_t n = json_array_size(a);
    if (!n) /* add_array skips empty lists */
        return;
    mf_value *v = mf_kv_arr(kv, key, MF_V_STR, n);
    for (size_t i = 0; v && i < n; i++) {
        json_t *x = json_array_get(a, i);
        if (json_is_string(x)) {
            mf_kv_arr_str(kv, v, i, json_string_value(x), json_string_length(x));
        } else {
            char *t = mf_json_dumps(x, JSON_ENCODE_ANY | JSON_COMPACT);
            mf_kv_arr_str(kv, v, i, t ? t : "", t ? strlen(t) : 0);
            free(t);
        }
    }
}

static void put_sources(mf_kvlist *kv, const char *what, json_t *list)
{
    static const char *const fields[] = {"name", "author", "version", "organization", "description",
                                         "url", "doi", "uuid", "repo_url", NULL};
    char key[160];
    snprintf(key, sizeof(key), "general.%s.count", what);
    mf_kv_u32(kv, key, (uint32_t)json_array_size(list));
    for (size_t i = 0; i < json_array_size(list); i++) {
        json_t *e = json_array_get(list, i);
        for (size_t f = 0; fields[f]; f++) {
            json_t *v = json_object_get(e, fields[f]);
            if (!v)
                continue;
            snprintf(key, sizeof(key), "general.%s.%zu.%s", what, i, fields[f]);
            if (json_is_string(v)) {
                put_str(kv, key, json_string_value(v));
            } else {
                char *t = mf_json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
                put_str(kv, key, t);
                free(t);
            }
        }
    }
}

static void write_gmeta(const gmeta *g, mf_kvlist *kv)
{
    put_str(kv, "general.name", g->name);
    put_str(kv, "general.author", g->author);
    put_str(kv, "general.version", g->version);
    put_str(kv, "general.organization", g->organization);
    put_str(kv, "general.finetune", g->finetune);
    put_str(kv, "general.basename", g->basename);
    put_str(kv, "general.description", g->description);
    put_str(kv, "general.quantized_by", g->quantized_by);
    put_str(kv, "general.size_label", g->size_label);
    put_str(kv, "general.license", g->license);
    put_str(kv, "general.license.name", g->license_name);
    put_str(kv, "general.license.link", g->license_link);
    put_str(kv, "general.url", g->url);
    put_str(kv, "general.doi", g->doi);
    put_str(kv, "general.uuid", g->uuid);
    put_str(kv, "general.repo_url", g->repo_url);
    put_str(kv, "general.source.url", g->source_url);
    put_str(kv, "general.source.doi", g->source_doi);
    put_str(kv, "general.source.uuid", g->source_uuid);
    put_str(kv, "general.source.repo_url", g->source_repo_url);
    if (g->base_models)
        put_sources(kv, "base_model", g->base_models);
    if (g->datasets)
        put_sources(kv, "dataset", g->datasets);
    if (g->tags)
        put_str_array(kv, "general.tags", g->tags);
    if (g->languages)
        put_str_array(kv, "general.languages", g->languages);
}

/* The directory's own name, as pathlib's Path(dir).name. */
static char *dir_name(const char *dir)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    size_t b = n;
    while (b > 0 && dir[b - 1] != '/')
        b--;
    char *name = strndup(dir + b, n - b);
    if (name && (!strcmp(name, ".") || !strcmp(name, "..") || !*name)) {
        free(name);
        char *real = realpath(dir, NULL);
        const char *s = real ? strrchr(real, '/') : NULL;
        name = strdup(s ? s + 1 : "");
        free(real);
    }
    return name;
}

/* Metadata.load_metadata_override + the assignments after it: each key the
 * file has replaces the field, a JSON null unsets it (dict.get returns the
 * None). general.license is not among them (the converter leaves it). */
static int apply_override(gmeta *g, const char *path, mf_status *st)
{
    static const struct {
        const char *key;
        size_t off;
    } strs[] = {
#define S(k, f) {k, offsetof(gmeta, f)}
        S("general.name", name), S("general.author", author), S("general.version", version),
        S("general.organization", organization), S("general.finetune", finetune),
        S("general.basename", basename), S("general.description", description),
        S("general.quantized_by", quantized_by), S("general.size_label", size_label),
        S("general.license.name", license_name), S("general.license.link", license_link),
        S("general.url", url), S("general.doi", doi), S("general.uuid", uuid),
        S("general.repo_url", repo_url), S("general.source.url", source_url),
        S("general.source.doi", source_doi), S("general.source.uuid", source_uuid),
        S("general.source.repo_url", source_repo_url),
#undef S
    };
    static const struct {
        const char *key;
        size_t off;
    } arrs[] = {
        {"general.base_models", offsetof(gmeta, base_models)},
        {"general.datasets", offsetof(gmeta, datasets)},
        {"general.tags", offsetof(gmeta, tags)},
        {"general.languages", offsetof(gmeta, languages)},
    };
    char *text;
    size_t len;
    if (mf_read_small_file(path, 16u << 20, &text, &len, st))
        return -1;
    json_error_t je;
    json_t *o = json_loadb(text, len, JSON_DECODE_ANY, &je);
    free(text);
    if (!o || !json_is_object(o)) {
        json_decref(o);
        return mf_fail(st, MF_ERR_FORMAT, path, o ? 0 : (int64_t)je.position,
                       "metadata override: %s", o ? "not a JSON object" : je.text);
    }
    for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
        json_t *v = json_object_get(o, strs[i].key);
        if (!v)
            continue;
        char **field = (char **)((char *)g + strs[i].off);
        free(*field);
        *field = json_is_null(v) ? NULL
                 : json_is_string(v) ? strdup(json_string_value(v))
                                     : json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
    }
    for (size_t i = 0; i < sizeof(arrs) / sizeof(arrs[0]); i++) {
        json_t *v = json_object_get(o, arrs[i].key);
        if (!v)
            continue;
        if (!json_is_null(v) && !json_is_array(v)) {
            json_decref(o);
            return mf_fail(st, MF_ERR_FORMAT, path, -1, "metadata override: %s must be a list",
                           arrs[i].key);
        }
        json_t **field = (json_t **)((char *)g + arrs[i].off);
        json_decref(*field);
        *field = json_is_null(v) ? NULL : json_incref(v);
    }
    json_decref(o);
    return 0;
}

/* gguf.naming_convention: part.strip() with ' ' (and '/' in the name) -> '-'. */
static void name_part(char *out, size_t cap, const char *v, bool slash, bool upper)
{
    const char *b = v, *e = v + strlen(v);
    while (*b && isspace((unsigned char)*b))
        b++;
    while (e > b && isspace((unsigned char)e[-1]))
        e--;
    size_t n = strlen(out);
    if (n + 1 < cap)
        out[n++] = '-';
    for (const char *p = b; p < e && n + 1 < cap; p++)
        out[n++] = *p == ' ' || (slash && *p == '/') ? '-' : upper ? (char)toupper((unsigned char)*p) : *p;
    out[n] = 0;
}

static void file_name_of(const gmeta *g, const mf_hf_meta_in *in, char *out, size_t cap)
{
    out[0] = 0;
    const char *name = g->basename ? g->basename : g->name ? g->name : NULL;
    if (name) {
        name_part(out, cap, name, true, false);
        memmove(out, out + 1, strlen(out)); /* no '-' before the name */
    } else {
        snprintf(out, cap, "ggml-model");
    }
    if (!in->vocab_only && !in->mmproj && g->size_label) { /* used as is: f"-{size_label}" */
        size_t n = strlen(out);
        snprintf(out + n, cap - n, "-%s", g->size_label);
    }
    if (g->finetune)
        name_part(out, cap, g->finetune, false, false);
    if (g->version)
        name_part(out, cap, g->version, false, false);
    if (!in->vocab_only && in->output_type)
        name_part(out, cap, in->output_type, false, true);
    if (in->vocab_only)
        name_part(out, cap, "vocab", false, false);
    size_t n = strlen(out);
    if (n + 6 <= cap)
        memcpy(out + n, ".gguf", 6);
    if (in->mmproj && n + 6 + 7 <= cap) { /* MmprojModel.prepare_metadata: f"mmproj-{fname_default}.gguf" */
        memmove(out + 7, out, n + 6);
        memcpy(out, "mmproj-", 7);
    }
}

int mf_hf_general_meta(const char *dir, const json_t *cfg, const mf_hf_params *params,
                       mf_hf_meta_in *in, mf_kvlist *kv, mf_status *st)
{
    int64_t total_params = params->total;
    gmeta g;
    memset(&g, 0, sizeof(g));
    char *card_path = mf_path_join_new(dir, "README.md");
    if (!card_path)
        return mf_oom(st, dir);
    json_t *card = NULL;
    if (mf_path_exists(card_path)) {
        char *text;
        size_t len;
        if (mf_read_small_file(card_path, 64u << 20, &text, &len, st)) {
            free(card_path);
            return -1;
        }
        mf_status why;
        mf_status_init(&why);
        card = mf_hf_front_matter(text, len, &why);
        free(text);
        if (!card) {
            int rc = mf_fail(st, why.code, card_path, -1, "model card metadata: %s", why.msg);
            mf_status_clear(&why);
            free(card_path);
            return rc;
        }
    }
    free(card_path);
    if (card)
        apply_card(&g, card, total_params);
    json_decref(card);
    const char *nop = json_string_value(json_object_get(cfg, "_name_or_path"));
    int rc = 0;
    if (nop) {
        size_t slashes = 0;
        for (const char *p = nop; *p; p++)
            slashes += *p == '/';
        if (slashes <= 1)
            rc = apply_id(&g, nop, total_params);
    }
    char *dn = dir_name(dir);
    if (rc == 0 && dn)
        rc = apply_id(&g, dn, total_params);
    if (rc == 0 && in && in->override_path && apply_override(&g, in->override_path, st)) {
        free(dn);
        free_gmeta(&g);
        return -1;
    }
    if (rc == 0 && in && in->model_name) { /* "Direct Metadata Override" */
        free(g.name);
        g.name = strdup(in->model_name);
    }
    if (!g.name && dn) /* prepare_metadata's fallback, after the overrides */
        g.name = strdup(dn);
    free(dn);
    if (rc == 0 && !g.size_label && total_params > 0) {
        char buf[96], pretty[64];
        if (params->expert_count > 0) { /* gguf.size_label: "{experts}x{shared + expert}" */
            mf_hf_size_label(llabs(params->shared) + llabs(params->expert), pretty, sizeof(pretty));
            snprintf(buf, sizeof(buf), "%lldx%s", (long long)params->expert_count, pretty);
        } else {
            mf_hf_size_label(total_params, buf, sizeof(buf));
        }
        g.size_label = strdup(buf);
    }
    if (rc == 0)
        write_gmeta(&g, kv);
    if (rc == 0 && in && in->file_name)
        file_name_of(&g, in, in->file_name, in->file_name_cap);
    free_gmeta(&g);
    return rc ? mf_oom(st, dir) : 0;
}
