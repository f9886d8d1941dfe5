/* gguf_kv.h - building an ordered list of GGUF key/value pairs (what
 * gguf-py's GGUFWriter.add_* calls accumulate), for mf_gguf_write. */
#ifndef MF_GGUF_KV_H
#define MF_GGUF_KV_H
#include "core/core.h"

typedef struct mf_kvlist {
    mf_kv *kv;
    size_t n, cap;
    mf_arena *a;       /* owns keys, strings and arrays */
    bool failed;       /* out of memory or a duplicated key */
    char dup[128];     /* the duplicated key, if any */
    /* gguf-py 0.18 (2026): a key added twice keeps its place and takes the
     * new value (with a warning) instead of failing */
    bool overwrite;
} mf_kvlist;

int mf_kvlist_init(mf_kvlist *l);
void mf_kvlist_free(mf_kvlist *l);
/* Each add records failure in l->failed (checked once at the end), as
 * GGUFWriter refuses a key added twice. */
mf_value *mf_kv_add(mf_kvlist *l, const char *key, mf_vtype type);
void mf_kv_str(mf_kvlist *l, const char *key, const char *s, size_t n);
void mf_kv_u32(mf_kvlist *l, const char *key, uint32_t v);
void mf_kv_i32(mf_kvlist *l, const char *key, int32_t v);
void mf_kv_f32(mf_kvlist *l, const char *key, float v);
void mf_kv_bool(mf_kvlist *l, const char *key, bool v);
/* An array of n items of elem type; items zeroed, to be filled by the caller. */
mf_value *mf_kv_arr(mf_kvlist *l, const char *key, mf_vtype elem, size_t n);
/* Sets item i of an array to a copy of the string. */
void mf_kv_arr_str(mf_kvlist *l, mf_value *arr, size_t i, const char *s, size_t n);
const mf_value *mf_kv_get(const mf_kvlist *l, const char *key);
#endif
