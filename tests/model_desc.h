/* model_desc.h - what a caller sees of a model, as one string (format,
 * tensor count, content hash, metadata keys, notes, verdict), for tests
 * that open the same bytes two ways (test_open_buffer, test_open_fd);
 * public API only. */
#ifndef MF_TEST_MODEL_DESC_H
#define MF_TEST_MODEL_DESC_H
#include <mfmt.h>
#include <stdio.h>
#include <stdlib.h>

/* The whole of a file into *buf (malloc'd; free it). */
static inline bool md_read_all(const char *path, uint8_t **buf, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    *buf = malloc(n > 0 ? (size_t)n : 1);
    *len = n > 0 ? fread(*buf, 1, (size_t)n, f) : 0;
    fclose(f);
    return *len == (size_t)(n > 0 ? n : 0);
}

static inline void md_describe(const mf_model *m, char *out, size_t cap)
{
    char hex[129] = "";
    mf_status st;
    mf_status_init(&st);
    if (mf_hash_tensor_content(m, MF_SHA256, hex, &st) != 0)
        snprintf(hex, sizeof(hex), "error: %.100s", st.msg);
    mf_status_clear(&st);
    int k = snprintf(out, cap, "%s %zu %s meta %zu notes %zu verdict %d",
                     mf_format_name(mf_model_format(m)), mf_model_tensor_count(m), hex,
                     mf_model_meta_count(m), mf_model_note_count(m), (int)mf_model_verdict(m));
    for (size_t i = 0; i < mf_model_meta_count(m) && k > 0 && (size_t)k < cap; i++)
        k += snprintf(out + k, cap - (size_t)k, " %s", mf_model_meta_at(m, i)->key);
}

#endif /* MF_TEST_MODEL_DESC_H */
