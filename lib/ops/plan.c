/* plan.c - where a model's modules would go on the given devices, the way
 * Accelerate's infer_auto_device_map places them (accelerate/utils/
 * modeling.py; the "sequential" map: devices filled in order):
 *  - modules are taken in declaration order; one that does not fit is split
 *    into its own parameters and children, except decoder layers (the
 *    model's _no_split_modules) and leaf modules, which move whole to the
 *    next device;
 *  - the first GPU and the cpu keep room for the largest unsplittable layer
 *    still to place (for offloaded layers to be brought in);
 *  - a module tied to one already waiting (lm_head tied to the embedding)
 *    goes with it; tied weights count once;
 *  - what fits on no GPU goes to cpu, then disk (unlimited);
 *  - the map is cleaned: a module whose parts all went to one device is
 *    listed once. */
#include "formats/formats.h"
#include "ops/estimate.h"
#include "ops/hf_ops.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <strings.h>

/* ----------------------------------------------------------- the tree */

typedef struct node {
    char *name;
    uint64_t size;
    bool is_param, nosplit;
    size_t *kids;
    size_t n_kids, cap_kids;
} node;

typedef struct tree {
    node *v;
    size_t n, cap;
    /* name -> index, open addressing */
    size_t *slots;
    size_t n_slots;
} tree;

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static int tree_rehash(tree *t)
{
    size_t ns = t->n_slots ? t->n_slots * 2 : 64;
    size_t *slots = malloc(ns * sizeof(size_t));
    if (!slots)
        return -1;
    for (size_t i = 0; i < ns; i++)
        slots[i] = SIZE_MAX;
    for (size_t i = 0; i < t->n; i++) {
        size_t h = (size_t)hash_str(t->v[i].name) & (ns - 1);
        while (slots[h] != SIZE_MAX)
            h = (h + 1) & (ns - 1);
        slots[h] = i;
    }
    free(t->slots);
    t->slots = slots;
    t->n_slots = ns;
    return 0;
}

static size_t tree_find(const tree *t, const char *name)
{
    if (!t->n_slots)
        return SIZE_MAX;
    size_t h = (size_t)hash_str(name) & (t->n_slots - 1);
    while (t->slots[h] != SIZE_MAX) {
        if (!strcmp(t->v[t->slots[h]].name, name))
            return t->slots[h];
        h = (h + 1) & (t->n_slots - 1);
    }
    return SIZE_MAX;
}

static bool all_digits(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isdigit((unsigned char)s[i]))
            return false;
    return n > 0;
}

/* A decoder layer: "<...>.<layers|h|blocks|blk|layer>.<N>". */
static bool is_layer_name(const char *name)
{
    const char *last = strrchr(name, '.');
    if (!last || !all_digits(last + 1, strlen(last + 1)))
        return false;
    const char *b = last;
    while (b > name && b[-1] != '.')
        b--;
    size_t l = (size_t)(last - b);
    static const char *const parents[] = {"layers", "h", "blocks", "blk", "layer", NULL};
    for (size_t i = 0; parents[i]; i++)
        if (strlen(parents[i]) == l && !strncmp(b, parents[i], l))
            return true;
    return false;
}

static size_t tree_add(tree *t, size_t parent, const char *name, size_t len, bool is_param)
{
    if (t->n == t->cap && mf_vec_grow((void **)&t->v, &t->cap, t->n + 1, sizeof(node)))
        return SIZE_MAX;
    node *x = &t->v[t->n];
    memset(x, 0, sizeof(*x));
    x->name = strndup(name, len);
    if (!x->name)
        return SIZE_MAX;
    x->is_param = is_param;
    x->nosplit = !is_param && is_layer_name(x->name);
    size_t idx = t->n++;
    if (parent != SIZE_MAX) {
        node *p = &t->v[parent];
        if (p->n_kids == p->cap_kids &&
            mf_vec_grow((void **)&p->kids, &p->cap_kids, p->n_kids + 1, sizeof(size_t)))
            return SIZE_MAX;
        p->kids[p->n_kids++] = idx;
    }
    if ((t->n * 2 > t->n_slots && tree_rehash(t)) || !t->n_slots)
        return SIZE_MAX;
    size_t h = (size_t)hash_str(t->v[idx].name) & (t->n_slots - 1);
    while (t->slots[h] != SIZE_MAX && t->slots[h] != idx)
        h = (h + 1) & (t->n_slots - 1);
    t->slots[h] = idx;
    return idx;
}

/* Adds a parameter and the modules above it; sizes add up the tree. */
static int tree_param(tree *t, const char *name, uint64_t bytes)
{
    size_t parent = 0;
    for (const char *p = strchr(name, '.'); p; p = strchr(p + 1, '.')) {
        char *prefix = strndup(name, (size_t)(p - name));
        if (!prefix)
            return -1;
        size_t m = tree_find(t, prefix);
        if (m == SIZE_MAX)
            m = tree_add(t, parent, prefix, strlen(prefix), false);
        free(prefix);
        if (m == SIZE_MAX)
            return -1;
        parent = m;
    }
    size_t leaf = tree_find(t, name);
    if (leaf == SIZE_MAX)
        leaf = tree_add(t, parent, name, strlen(name), true);
    if (leaf == SIZE_MAX)
        return -1;
    /* add the size to the parameter and every module above it */
    t->v[leaf].size += bytes;
    t->v[0].size += bytes;
    for (const char *p = strchr(name, '.'); p; p = strchr(p + 1, '.')) {
        char *prefix = strndup(name, (size_t)(p - name));
        if (!prefix)
            return -1;
        size_t m = tree_find(t, prefix);
        free(prefix);
        t->v[m].size += bytes;
    }
    return 0;
}

static void tree_free(tree *t)
{
    for (size_t i = 0; i < t->n; i++) {
        free(t->v[i].name);
        free(t->v[i].kids);
    }
    free(t->v);
    free(t->slots);
}

static uint64_t size_of(const tree *t, const char *name)
{
    size_t i = tree_find(t, name);
    return i == SIZE_MAX ? 0 : t->v[i].size;
}

/* --------------------------------------------------------- work list */

typedef struct list {
    size_t *v;
    size_t n, cap;
} list;

static int list_insert(list *l, size_t at, const size_t *items, size_t k)
{
    if (l->n + k > l->cap && mf_vec_grow((void **)&l->v, &l->cap, l->n + k, sizeof(size_t)))
        return -1;
    memmove(l->v + at + k, l->v + at, (l->n - at) * sizeof(size_t));
    memcpy(l->v + at, items, k * sizeof(size_t));
    l->n += k;
    return 0;
}

static size_t list_pop(list *l, size_t at)
{
    size_t x = l->v[at];
    memmove(l->v + at, l->v + at + 1, (l->n - at - 1) * sizeof(size_t));
    l->n--;
    return x;
}

static size_t n_module_kids(const tree *t, size_t x)
{
    size_t k = 0;
    for (size_t i = 0; i < t->v[x].n_kids; i++)
        k += !t->v[t->v[x].kids[i]].is_param;
    return k;
}

/* named_parameters(recurse=False) + named_children() */
static int split_items(const tree *t, size_t x, size_t **out, size_t *n)
{
    const node *p = &t->v[x];
    *out = malloc((p->n_kids ? p->n_kids : 1) * sizeof(size_t));
    if (!*out)
        return -1;
    *n = 0;
    for (size_t i = 0; i < p->n_kids; i++)
        if (t->v[p->kids[i]].is_param)
            (*out)[(*n)++] = p->kids[i];
    for (size_t i = 0; i < p->n_kids; i++)
        if (!t->v[p->kids[i]].is_param)
            (*out)[(*n)++] = p->kids[i];
    return 0;
}

/* get_max_layer_size over the modules of the list: the largest module that
 * is a leaf or unsplittable; names: all of that size. */
static int max_layer(const tree *t, const list *l, uint64_t *max_size, list *names)
{
    list work = {0};
    names->n = 0;
    *max_size = 0;
    for (size_t i = 0; i < l->n; i++)
        if (!t->v[l->v[i]].is_param && list_insert(&work, work.n, &l->v[i], 1))
            return -1;
    while (work.n) {
        size_t x = list_pop(&work, 0);
        if (n_module_kids(t, x) == 0 || t->v[x].nosplit) {
            if (t->v[x].size > *max_size) {
                *max_size = t->v[x].size;
                names->n = 0;
            }
            if (t->v[x].size == *max_size && list_insert(names, names->n, &x, 1)) {
                free(work.v);
                return -1;
            }
        } else {
            size_t kids[4096], k = 0;
            const node *p = &t->v[x];
            size_t *buf = p->n_kids > 4096 ? malloc(p->n_kids * sizeof(size_t)) : kids;
            if (!buf) {
                free(work.v);
                return -1;
            }
            for (size_t i = 0; i < p->n_kids; i++)
                if (!t->v[p->kids[i]].is_param)
                    buf[k++] = p->kids[i];
            int rc = list_insert(&work, 0, buf, k);
            if (buf != kids)
                free(buf);
            if (rc) {
                free(work.v);
                return -1;
            }
        }
    }
    free(work.v);
    return 0;
}

static bool starts_module(const char *n, const char *name)
{
    size_t l = strlen(name);
    return !strncmp(n, name, l) && n[l] == '.';
}

/* "name." in "k." (Accelerate's substring test) */
static bool dotted_in(const char *name, const char *k)
{
    size_t nl = strlen(name), kl = strlen(k);
    char *a = malloc(nl + 2), *b = malloc(kl + 2);
    bool r = false;
    if (a && b) {
        sprintf(a, "%s.", name);
        sprintf(b, "%s.", k);
        r = strstr(b, a) != NULL;
    }
    free(a);
    free(b);
    return r;
}

typedef struct placer {
    const tree *t;
    const char *tie[2];  /* one tied group, or NULLs */
    mf_plan *out;
    list todo;
    /* device_map before cleaning: (node, device) in placement order */
    size_t *placed_node, *placed_dev;
    size_t n_placed, cap_placed;
} placer;

static int place(placer *p, size_t x, size_t dev)
{
    if (p->n_placed == p->cap_placed) {
        size_t cap = p->cap_placed ? p->cap_placed * 2 : 64;
        size_t *a = realloc(p->placed_node, cap * sizeof(size_t));
        if (!a)
            return -1;
        p->placed_node = a;
        size_t *b = realloc(p->placed_dev, cap * sizeof(size_t));
        if (!b)
            return -1;
        p->placed_dev = b;
        p->cap_placed = cap;
    }
    p->placed_node[p->n_placed] = x;
    p->placed_dev[p->n_placed++] = dev;
    p->out->used[dev] += p->t->v[x].size;
    return 0;
}

static size_t find_in_todo(const placer *p, const char *param)
{
    for (size_t i = 0; i < p->todo.n; i++)
        if (strstr(param, p->t->v[p->todo.v[i]].name))
            return i;
    return SIZE_MAX;
}

static int infer(placer *p, size_t n_gpus, bool has_cpu)
{
    const tree *t = p->t;
    mf_plan *o = p->out;
    size_t *top;
    size_t ntop;
    if (split_items(t, 0, &top, &ntop) || list_insert(&p->todo, 0, top, ntop)) {
        free(top);
        return -1;
    }
    free(top);
    list names = {0};
    uint64_t max_size;
    if (max_layer(t, &p->todo, &max_size, &names))
        return -1;
    o->reserved = max_size;
    size_t dev = 0;
    uint64_t used = 0;
    int rc = 0;
    while (p->todo.n && rc == 0) {
        size_t x = list_pop(&p->todo, 0);
        const char *name = t->v[x].name;
        /* the largest layer still to come may have changed */
        size_t k = 0;
        for (size_t i = 0; i < names.n; i++) {
            const char *nn = t->v[names.v[i]].name;
            if (strcmp(nn, name) && !starts_module(nn, name))
                names.v[k++] = names.v[i];
        }
        names.n = k;
        if (!names.n && max_layer(t, &p->todo, &max_size, &names)) {
            rc = -1;
            break;
        }
        uint64_t size = t->v[x].size;
        /* tied parameters outside this module */
        const char *tied_param = NULL;
        if (p->tie[0]) {
            bool in0 = dotted_in(name, p->tie[0]), in1 = dotted_in(name, p->tie[1]);
            if (in0 != in1)
                tied_param = in0 ? p->tie[1] : p->tie[0];
        }
        const mf_plan_device *d = &o->devices[dev];
        bool main_dev = (n_gpus > 0 && dev == 0) || (!strcmp(d->name, "cpu") && (n_gpus > 0 || has_cpu));
        uint64_t max = d->capacity, reserved = 0;
        if (max != MF_PLAN_UNLIMITED && main_dev) {
            max = max > max_size ? max - max_size : 0;
            reserved = max_size;
        }
        size_t tied_at = tied_param ? find_in_todo(p, tied_param) : SIZE_MAX;
        if (max != MF_PLAN_UNLIMITED && used + size > max) {
            /* too big: split, or go to the next device */
            if (t->v[x].is_param || n_module_kids(t, x) == 0 || t->v[x].nosplit) {
                (void)reserved;
                dev++;
                used = 0;
                rc = list_insert(&p->todo, 0, &x, 1);
            } else {
                size_t *kids, nk;
                if (split_items(t, x, &kids, &nk))
                    return -1;
                rc = list_insert(&p->todo, 0, kids, nk);
                free(kids);
                if (rc == 0)
                    rc = max_layer(t, &p->todo, &max_size, &names);
            }
        } else if (tied_at != SIZE_MAX) {
            size_t tm = p->todo.v[tied_at];
            uint64_t with_ties = size + t->v[tm].size - size_of(t, tied_param);
            if (max == MF_PLAN_UNLIMITED || used + with_ties <= max) {
                used += with_ties;
                rc = place(p, x, dev);
                list_pop(&p->todo, tied_at);
                if (rc == 0)
                    rc = place(p, tm, dev);
            } else if (!t->v[tm].is_param && n_module_kids(t, tm) && !t->v[tm].nosplit) {
                /* split the tied module and try again */
                size_t *kids, nk;
                if (split_items(t, tm, &kids, &nk))
                    return -1;
                list_pop(&p->todo, tied_at);
                rc = list_insert(&p->todo, tied_at, kids, nk);
                free(kids);
                if (rc == 0)
                    rc = list_insert(&p->todo, 0, &x, 1);
                if (rc == 0)
                    rc = max_layer(t, &p->todo, &max_size, &names);
            } else {
                dev++;
                used = 0;
                rc = list_insert(&p->todo, 0, &x, 1);
            }
        } else {
            used += size;
            rc = place(p, x, dev);
        }
        if (dev >= o->n_devices)
            rc = -1; /* cannot happen: disk is unlimited */
    }
    free(names.v);
    return rc;
}

/* ------------------------------------------------------------ cleaning */

typedef struct entry {
    char *name;
    size_t dev;
} entry;

typedef struct emap {
    entry *v;
    size_t n, cap;
} emap;

static bool has_prefix(const char *k, const char *module)
{
    if (!*module)
        return true;
    return starts_module(k, module);
}

static int cmp_cstr(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* clean_device_map: a module whose entries all went to one device becomes
 * one entry; then its children are cleaned. */
static int clean(emap *m, const char *module, int depth)
{
    if (depth > 64)
        return 0;
    size_t count = 0, dev = SIZE_MAX;
    bool one = true;
    for (size_t i = 0; i < m->n; i++) {
        if (!has_prefix(m->v[i].name, module))
            continue;
        if (count++ && m->v[i].dev != dev)
            one = false;
        dev = m->v[i].dev;
    }
    if (one && count > 1) {
        size_t k = 0;
        for (size_t i = 0; i < m->n; i++) {
            if (has_prefix(m->v[i].name, module))
                free(m->v[i].name);
            else
                m->v[k++] = m->v[i];
        }
        m->n = k;
        m->v[m->n].name = strdup(module);
        if (!m->v[m->n].name)
            return -1;
        m->v[m->n++].dev = dev;
    }
    /* the children one level below */
    size_t depth_parts = *module ? 1 : 0;
    for (const char *p = module; *p; p++)
        depth_parts += *p == '.';
    char **kids = NULL;
    size_t nk = 0;
    for (size_t i = 0; i < m->n; i++) {
        const char *k = m->v[i].name;
        if (!has_prefix(k, module) || strlen(k) <= strlen(module))
            continue;
        const char *e = k;
        for (size_t d = 0; d <= depth_parts && e; d++) {
            e = strchr(e, '.');
            if (e && d < depth_parts)
                e++;
        }
        size_t len = e ? (size_t)(e - k) : strlen(k);
        bool seen = false;
        for (size_t j = 0; j < nk && !seen; j++)
            seen = strlen(kids[j]) == len && !strncmp(kids[j], k, len);
        if (seen)
            continue;
        char **nv = realloc(kids, (nk + 1) * sizeof(char *));
        if (!nv)
            break;
        kids = nv;
        kids[nk] = strndup(k, len);
        if (kids[nk])
            nk++;
    }
    if (nk)
        qsort(kids, nk, sizeof(char *), cmp_cstr);
    int rc = 0;
    for (size_t j = 0; j < nk; j++) {
        if (rc == 0)
            rc = clean(m, kids[j], depth + 1);
        free(kids[j]);
    }
    free(kids);
    return rc;
}

/* ------------------------------------------------------------- driver */

static int order_devices(const mf_plan_device *devs, size_t n, mf_plan *o, size_t *n_gpus, bool *has_cpu)
{
    o->devices = calloc(n + 1, sizeof(mf_plan_device));
    o->used = calloc(n + 1, sizeof(uint64_t));
    if (!o->devices || !o->used)
        return -1;
    *n_gpus = 0;
    *has_cpu = false;
    for (int pass = 0; pass < 3; pass++)
        for (size_t i = 0; i < n; i++) {
            bool cpu = !strcmp(devs[i].name, "cpu"), disk = !strcmp(devs[i].name, "disk");
            if ((pass == 0 && !cpu && !disk) || (pass == 1 && cpu) || (pass == 2 && disk)) {
                o->devices[o->n_devices] = devs[i];
                if (disk)
                    o->devices[o->n_devices].capacity = MF_PLAN_UNLIMITED;
                o->n_devices++;
                *n_gpus += pass == 0;
                *has_cpu |= cpu;
            }
        }
    if (!o->n_devices || strcmp(o->devices[o->n_devices - 1].name, "disk")) {
        snprintf(o->devices[o->n_devices].name, sizeof(o->devices[0].name), "disk");
        o->devices[o->n_devices++].capacity = MF_PLAN_UNLIMITED;
    }
    return 0;
}

static void plan_clear(mf_plan *p);

static int plan_tensors_into(const mf_plan_tensor *ts, size_t n, const char *tied,
                             const char *tied_to, const mf_plan_device *devs, size_t n_devs,
                             mf_plan *out, mf_status *st)
{
    memset(out, 0, sizeof(*out));
    size_t n_gpus;
    bool has_cpu;
    tree t = {0};
    placer p = {.t = &t, .out = out};
    int rc = order_devices(devs, n_devs, out, &n_gpus, &has_cpu);
    if (rc == 0 && tree_add(&t, SIZE_MAX, "", 0, false) == SIZE_MAX)
        rc = -1;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (tied && tied_to && !strcmp(ts[i].name, tied))
            continue; /* a tied weight counts once, with the embedding */
        rc = tree_param(&t, ts[i].name, ts[i].bytes);
    }
    if (rc == 0 && tied && tied_to && tree_find(&t, tied_to) != SIZE_MAX) {
        rc = tree_param(&t, tied, 0); /* the tied module: no bytes of its own */
        p.tie[0] = tied;
        p.tie[1] = tied_to;
    }
    if (rc == 0)
        rc = infer(&p, n_gpus, has_cpu);
    emap m = {0};
    if (rc == 0) {
        m.v = calloc(p.n_placed + 1, sizeof(entry));
        rc = m.v ? 0 : -1;
    }
    for (size_t i = 0; rc == 0 && i < p.n_placed; i++) {
        m.v[i].name = strdup(t.v[p.placed_node[i]].name);
        m.v[i].dev = p.placed_dev[i];
        rc = m.v[i].name ? 0 : -1;
        m.n++;
    }
    if (rc == 0)
        rc = clean(&m, "", 0);
    out->map = (mf_plan_entry *)calloc(m.n ? m.n : 1, sizeof(mf_plan_entry));
    if (rc == 0 && out->map) {
        for (size_t i = 0; i < m.n; i++) {
            out->map[i].module = m.v[i].name;
            out->map[i].device = m.v[i].dev;
        }
        out->n_map = m.n;
    } else {
        for (size_t i = 0; i < m.n; i++)
            free(m.v[i].name);
        rc = -1;
    }
    free(m.v);
    out->total = t.n ? t.v[0].size : 0;
    free(p.todo.v);
    free(p.placed_node);
    free(p.placed_dev);
    tree_free(&t);
    if (rc) {
        plan_clear(out);
        return mf_oom(st, NULL);
    }
    return 0;
}

static void plan_clear(mf_plan *p)
{
    for (size_t i = 0; i < p->n_map; i++)
        free(p->map[i].module);
    free(p->map);
    free(p->devices);
    free(p->used);
    memset(p, 0, sizeof(*p));
}

void mf_plan_free(mf_plan *p)
{
    if (!p)
        return;
    plan_clear(p);
    free(p);
}

/* Runs fill into a new plan for *out (NULL on failure). */
static int plan_alloc(mf_plan **out, mf_plan **p, mf_status *st)
{
    *out = NULL;
    *p = calloc(1, sizeof(**p));
    return *p ? 0 : mf_oom(st, NULL);
}

static int plan_finish(int rc, mf_plan *p, mf_plan **out)
{
    if (rc) {
        plan_clear(p);
        free(p);
        return -1;
    }
    *out = p;
    return 0;
}

int mf_plan_tensors(const mf_plan_tensor *ts, size_t n, const char *tied, const char *tied_to,
                    const mf_plan_device *devs, size_t n_devs, mf_plan **out, mf_status *st)
{
    MF_ST_GUARD(st);
    mf_plan *p;
    if (plan_alloc(out, &p, st))
        return -1;
    return plan_finish(plan_tensors_into(ts, n, tied, tied_to, devs, n_devs, p, st), p, out);
}

void mf_plan_opts_init(mf_plan_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->struct_size = sizeof(*o);
}


/* ------------------------------------------------------------- sources */

static uint64_t bytes_at(const mf_tensor *t, const char *dtype)
{
    if (!dtype)
        return t->nbytes;
    const mf_dtype_info *di = mf_dtype_info_of(t->dtype);
    uint64_t n = mf_tensor_nelems(t);
    if (!di || di->block_elems != 1 || !di->is_float || n == UINT64_MAX)
        return t->nbytes; /* ints and quantized blocks stay as they are */
    int want = !strcasecmp(dtype, "f32") || !strcasecmp(dtype, "float32") ? 4 : 2;
    uint64_t es = di->block_bytes < (uint64_t)want ? di->block_bytes : (uint64_t)want;
    return n * es; /* compute_module_sizes: min(dtype size, stored size) */
}

static int plan_path_into(const char *path, const mf_plan_device *devs, size_t n_devs,
                          const char *dtype, mf_plan *out, mf_status *st)
{
    json_t *cfg = NULL;
    mf_hf_shape *exp = NULL;
    size_t n_exp = 0;
    bool tied = false, have_exp = false;
    if (mf_is_dir(path)) {
        cfg = mf_hf_load_config(path, false, st);
        if (st->code)
            return -1;
        mf_status why; /* without expected tensors the plan uses the weights only */
        mf_status_init(&why);
        have_exp = cfg && mf_hf_expected_tensors(cfg, &exp, &n_exp, &tied, &why) == 0;
        mf_status_clear(&why);
    }
    mf_status sub;
    mf_status_init(&sub);
    mf_model *m = NULL;
    bool weights = mf_open_model(path, 0, &m, &sub) == 0 && m->n_tensors;
    if (!weights && !have_exp) {
        int rc = sub.code ? (mf_status_merge(st, &sub), -1)
                          : mf_fail(st, MF_ERR_FORMAT, path, -1, "no tensors to place");
        mf_status_clear(&sub);
        mf_close(m);
        json_decref(cfg);
        return rc;
    }
    mf_status_clear(&sub);
    size_t cap = (weights ? m->n_tensors : 0) + n_exp + 1;
    mf_plan_tensor *ts = calloc(cap, sizeof(*ts));
    bool *used = calloc(weights ? m->n_tensors + 1 : 1, sizeof(bool));
    size_t n = 0;
    int rc = ts && used ? 0 : mf_oom(st, path);
    const char *emb = NULL;
    if (rc == 0 && have_exp) {
        emb = n_exp ? exp[0].name : NULL; /* the embedding comes first */
        int b = 4;
        const char *td = json_string_value(json_object_get(cfg, "torch_dtype"));
        if (dtype)
            b = !strcasecmp(dtype, "f32") || !strcasecmp(dtype, "float32") ? 4 : 2;
        else if (td && (!strcmp(td, "float16") || !strcmp(td, "bfloat16")))
            b = 2;
        for (size_t i = 0; i < n_exp; i++) { /* declaration order */
            if (weights) {
                const mf_tensor *t = mf_tensor_find(m, exp[i].name);
                if (!t)
                    continue;
                used[t - m->tensors] = true;
                ts[n].name = t->name;
                ts[n++].bytes = bytes_at(t, dtype);
            } else if (!exp[i].optional) {
                uint64_t k = 1;
                for (int d = 0; d < exp[i].ndim; d++)
                    k *= (uint64_t)exp[i].shape[d];
                ts[n].name = exp[i].name;
                ts[n++].bytes = k * (uint64_t)b;
            }
        }
    }
    if (rc == 0 && weights) { /* the rest in file order, the output head last */
        for (int pass = 0; pass < 2; pass++)
            for (size_t i = 0; i < m->n_tensors; i++) {
                bool head = !strncmp(m->tensors[i].name, "lm_head.", 8);
                if (used[i] || head != (pass == 1))
                    continue;
                ts[n].name = m->tensors[i].name;
                ts[n++].bytes = bytes_at(&m->tensors[i], dtype);
            }
    }
    if (rc == 0 && !have_exp && cfg)
        tied = json_is_true(json_object_get(cfg, "tie_word_embeddings"));
    if (rc == 0)
        rc = plan_tensors_into(ts, n, tied ? "lm_head.weight" : NULL, emb, devs, n_devs, out, st);
    free(ts);
    free(used);
    mf_hf_shapes_free(exp, n_exp);
    mf_close(m);
    json_decref(cfg);
    return rc;
}

int mf_plan_path(const char *path, const mf_plan_device *devs, size_t n_devs,
                 const mf_plan_opts *opts, mf_plan **out, mf_status *st)
{
    MF_ST_GUARD(st);
    *out = NULL;
    mf_plan_opts o;
    mf_plan_opts_init(&o);
    if (mf_opts_copy(&o, sizeof(o), opts, "mf_plan_opts", st))
        return -1;
    mf_plan *p;
    if (plan_alloc(out, &p, st))
        return -1;
    return plan_finish(plan_path_into(path, devs, n_devs, o.dtype, p, st), p, out);
}
