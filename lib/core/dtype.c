/* dtype.c - the one table of element and block types.
 * ggml block sizes and bytes from ggml's type traits (ggml.c, ggml-common.h). */
#include "core/core.h"

#include <strings.h>

typedef struct entry {
    mf_dtype dt;
    mf_dtype_info info;
} entry;

/*            name       ggml  blk  bytes bits  float  quant signed */
#define PLAIN(D, N, G, BYTES, F, S) {D, {N, G, 1, BYTES, (BYTES) * 8, F, false, S}}
#define BLOCK(D, N, G, BLK, BYTES) {D, {N, G, BLK, BYTES, 0, true, true, true}}
#define PACKED(D, N, BITS, F, S) {D, {N, -1, 8 / (BITS), 1, BITS, F, false, S}}

static const entry table[] = {
    PLAIN(MF_F32, "F32", 0, 4, true, true),
    PLAIN(MF_F16, "F16", 1, 2, true, true),
    BLOCK(MF_Q4_0, "Q4_0", 2, 32, 18),
    BLOCK(MF_Q4_1, "Q4_1", 3, 32, 20),
    BLOCK(MF_Q5_0, "Q5_0", 6, 32, 22),
    BLOCK(MF_Q5_1, "Q5_1", 7, 32, 24),
    BLOCK(MF_Q8_0, "Q8_0", 8, 32, 34),
    BLOCK(MF_Q8_1, "Q8_1", 9, 32, 36),
    BLOCK(MF_Q2_K, "Q2_K", 10, 256, 84),
    BLOCK(MF_Q3_K, "Q3_K", 11, 256, 110),
    BLOCK(MF_Q4_K, "Q4_K", 12, 256, 144),
    BLOCK(MF_Q5_K, "Q5_K", 13, 256, 176),
    BLOCK(MF_Q6_K, "Q6_K", 14, 256, 210),
    BLOCK(MF_Q8_K, "Q8_K", 15, 256, 292),
    BLOCK(MF_IQ2_XXS, "IQ2_XXS", 16, 256, 66),
    BLOCK(MF_IQ2_XS, "IQ2_XS", 17, 256, 74),
    BLOCK(MF_IQ3_XXS, "IQ3_XXS", 18, 256, 98),
    BLOCK(MF_IQ1_S, "IQ1_S", 19, 256, 50),
    BLOCK(MF_IQ4_NL, "IQ4_NL", 20, 32, 18),
    BLOCK(MF_IQ3_S, "IQ3_S", 21, 256, 110),
    BLOCK(MF_IQ2_S, "IQ2_S", 22, 256, 82),
    BLOCK(MF_IQ4_XS, "IQ4_XS", 23, 256, 136),
    PLAIN(MF_I8, "I8", 24, 1, false, true),
    PLAIN(MF_I16, "I16", 25, 2, false, true),
    PLAIN(MF_I32, "I32", 26, 4, false, true),
    PLAIN(MF_I64, "I64", 27, 8, false, true),
    PLAIN(MF_F64, "F64", 28, 8, true, true),
    BLOCK(MF_IQ1_M, "IQ1_M", 29, 256, 56),
    PLAIN(MF_BF16, "BF16", 30, 2, true, true),
    BLOCK(MF_TQ1_0, "TQ1_0", 34, 256, 54),
    BLOCK(MF_TQ2_0, "TQ2_0", 35, 256, 66),
    BLOCK(MF_MXFP4, "MXFP4", 39, 32, 17),
    BLOCK(MF_NVFP4, "NVFP4", 40, 64, 36),
    BLOCK(MF_Q1_0, "Q1_0", 41, 128, 18),
    BLOCK(MF_Q2_0, "Q2_0", 42, 64, 18),
    PLAIN(MF_U8, "U8", -1, 1, false, false),
    PLAIN(MF_U16, "U16", -1, 2, false, false),
    PLAIN(MF_U32, "U32", -1, 4, false, false),
    PLAIN(MF_U64, "U64", -1, 8, false, false),
    PLAIN(MF_BOOL, "BOOL", -1, 1, false, false),
    PLAIN(MF_F8_E4M3, "F8_E4M3", -1, 1, true, true),
    PLAIN(MF_F8_E5M2, "F8_E5M2", -1, 1, true, true),
    PLAIN(MF_F8_E4M3FNUZ, "F8_E4M3FNUZ", -1, 1, true, true),
    PLAIN(MF_F8_E5M2FNUZ, "F8_E5M2FNUZ", -1, 1, true, true),
    PLAIN(MF_F8_E8M0, "F8_E8M0", -1, 1, true, false),
    /* safetensors stores F6 unpacked? It packs 4 values in 3 bytes. */
    {MF_F6_E2M3, {"F6_E2M3", -1, 4, 3, 6, true, false, true}},
    {MF_F6_E3M2, {"F6_E3M2", -1, 4, 3, 6, true, false, true}},
    PACKED(MF_F4, "F4", 4, true, true),
    PACKED(MF_I4, "I4", 4, false, true),
    PACKED(MF_U4, "U4", 4, false, false),
    PACKED(MF_I2, "I2", 2, false, true),
    PACKED(MF_U2, "U2", 2, false, false),
    PLAIN(MF_C64, "C64", -1, 8, true, true),
    PLAIN(MF_C128, "C128", -1, 16, true, true),
    {MF_STRING, {"STRING", -1, 1, 0, 0, false, false, false}},
};

#define N_TABLE (sizeof(table) / sizeof(table[0]))

const mf_dtype_info *mf_dtype_info_of(mf_dtype dt)
{
    for (size_t i = 0; i < N_TABLE; i++)
        if (table[i].dt == dt)
            return &table[i].info;
    return NULL;
}

const char *mf_dtype_name(mf_dtype dt)
{
    const mf_dtype_info *i = mf_dtype_info_of(dt);
    return i ? i->name : "?";
}

mf_dtype mf_dtype_from_name(const char *name)
{
    for (size_t i = 0; i < N_TABLE; i++)
        if (strcmp(table[i].info.name, name) == 0)
            return table[i].dt;
    /* ggml's lower-case spellings (q4_k, f16) are accepted too */
    for (size_t i = 0; i < N_TABLE; i++)
        if (table[i].info.ggml_id >= 0 && strcasecmp(table[i].info.name, name) == 0)
            return table[i].dt;
    return MF_DTYPE_INVALID;
}

mf_dtype mf_dtype_from_ggml(uint32_t id)
{
    for (size_t i = 0; i < N_TABLE; i++)
        if (table[i].info.ggml_id >= 0 && (uint32_t)table[i].info.ggml_id == id)
            return table[i].dt;
    return MF_DTYPE_INVALID;
}

int mf_dtype_nbytes(mf_dtype dt, uint64_t n, uint64_t *out)
{
    const mf_dtype_info *i = mf_dtype_info_of(dt);
    if (!i || i->block_bytes == 0)
        return -1;
    uint64_t blocks = n / i->block_elems;
    if (n % i->block_elems) {
        if (i->ggml_id >= 0)
            return -1; /* ggml blocks are never partial */
        blocks++;      /* packed sub-byte types pad the last byte */
    }
    return mf_mul_ovf(blocks, i->block_bytes, out) ? -1 : 0;
}
