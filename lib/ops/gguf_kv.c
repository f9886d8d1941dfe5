/* gguf_kv.c - an ordered GGUF key/value list (see gguf_kv.h). */
#include "ops/gguf_kv.h"

#include <stdlib.h>

int mf_kvlist_init(mf_kvlist *l)
{
    memset(l, 0, sizeof(*l));
    l->a = mf_arena_new();
    return l->a ? 0 : -1;
}

void mf_kvlist_free(mf_kvlist *l)
{
    free(l->kv);
    mf_arena_free(l->a);
    memset(l, 0, sizeof(*l));
}

const mf_value *mf_kv_get(const mf_kvlist *l, const char *key)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->kv[i].key, key) == 0)
            return &l->kv[i].v;
    return NULL;
}

mf_value *mf_kv_add(mf_kvlist *l, const char *key, mf_vtype type)
{
    if (l->failed)
        return NULL;
    for (size_t i = 0; l->overwrite && i < l->n; i++)
        if (strcmp(l->kv[i].key, key) == 0) {
            memset(&l->kv[i].v, 0, sizeof(l->kv[i].v));
            l->kv[i].v.type = type;
            return &l->kv[i].v;
        }
    if (mf_kv_get(l, key)) {
        l->failed = true;
        snprintf(l->dup, sizeof(l->dup), "%s", key);
        return NULL;
    }
    if (l->n == l->cap && mf_vec_grow((void **)&l->kv, &l->cap, l->n + 1, sizeof(mf_kv))) {
        l->failed = true;
        return NULL;
    }
    mf_kv *kv = &l->kv[l->n];
    memset(kv, 0, sizeof(*kv));
    kv->key = mf_arena_strdup(l->a, key);
    if (!kv->key) {
        l->failed = true;
        return NULL;
    }
    kv->v.type = type;
    l->n++;
    return &kv->v;
}

void mf_kv_str(mf_kvlist *l, const char *key, const char *s, size_t n)
{
    mf_value *v = mf_kv_add(l, key, MF_V_STR);
    if (!v)
        return;
    *v = mf_value_str(l->a, s, n);
    if (v->type != MF_V_STR)
        l->failed = true;
}

void mf_kv_u32(mf_kvlist *l, const char *key, uint32_t x)
{
    mf_value *v = mf_kv_add(l, key, MF_V_U32);
    if (v)
        v->as.u = x;
}

void mf_kv_i32(mf_kvlist *l, const char *key, int32_t x)
{
    mf_value *v = mf_kv_add(l, key, MF_V_I32);
    if (v)
        v->as.i = x;
}

void mf_kv_f32(mf_kvlist *l, const char *key, float x)
{
    mf_value *v = mf_kv_add(l, key, MF_V_F32);
    if (v)
        v->as.f = x;
}

void mf_kv_bool(mf_kvlist *l, const char *key, bool x)
{
    mf_value *v = mf_kv_add(l, key, MF_V_BOOL);
    if (v)
        v->as.b = x;
}

mf_value *mf_kv_arr(mf_kvlist *l, const char *key, mf_vtype elem, size_t n)
{
    mf_value *v = mf_kv_add(l, key, MF_V_ARR);
    if (!v)
        return NULL;
    v->as.arr.elem = elem;
    v->as.arr.n = n;
    v->as.arr.items = mf_arena_calloc(l->a, n ? n : 1, sizeof(mf_value));
    if (!v->as.arr.items) {
        l->failed = true;
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        v->as.arr.items[i].type = elem;
    return v;
}

void mf_kv_arr_str(mf_kvlist *l, mf_value *arr, size_t i, const char *s, size_t n)
{
    arr->as.arr.items[i] = mf_value_str(l->a, s, n);
    if (arr->as.arr.items[i].type != MF_V_STR)
        l->failed = true;
}
