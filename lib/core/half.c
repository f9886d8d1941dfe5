/* half.c - IEEE binary16 and bfloat16 conversions, bit exact. */
#include "core/core.h"

float mf_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f;
    uint32_t man = h & 0x3ff;
    if (exp == 0x1f) { /* inf / nan: keep the payload, quieted (as ggml's
                        * fp16 table and x86's f16c do: 0x7c01 -> 0x7fc02000) */
        uint32_t quiet = man ? 0x00400000u : 0;
        return mf_bits_f32(sign | 0x7f800000u | quiet | man << 13);
    }
    if (exp == 0) {
        if (man == 0)
            return mf_bits_f32(sign);
        /* subnormal: value = man * 2^-24, exact in f32 */
        float v = (float)man * 0x1p-24f;
        return sign ? -v : v;
    }
    return mf_bits_f32(sign | (exp + 112) << 23 | man << 13);
}

uint16_t mf_f32_to_f16(float f)
{
    uint32_t x = mf_f32_bits(f);
    uint32_t sign = (x >> 16) & 0x8000;
    uint32_t ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) /* nan: quiet, keep the top payload bits */
        return (uint16_t)(sign | 0x7e00); /* as ggml: canonical quiet nan */
    if (ax >= 0x477ff000u) /* rounds to >= 65520: infinity */
        return (uint16_t)(sign | 0x7c00);
    if (ax < 0x38800000u) { /* below 2^-14: subnormal or zero */
        if (ax < 0x33000000u) /* below 2^-25: rounds to 0 (ties to even) */
            return (uint16_t)sign;
        uint32_t e = ax >> 23;
        uint32_t m = (ax & 0x7fffff) | 0x800000;
        uint32_t shift = 126 - e; /* bits to drop to get units of 2^-24 */
        uint32_t q = m >> shift;
        uint32_t rem = m & ((1u << shift) - 1);
        uint32_t half = 1u << (shift - 1);
        if (rem > half || (rem == half && (q & 1)))
            q++;
        return (uint16_t)(sign | q);
    }
    uint32_t r = ax + 0xfff + ((ax >> 13) & 1); /* round to nearest even */
    return (uint16_t)(sign | ((r - 0x38000000u) >> 13));
}

float mf_bf16_to_f32(uint16_t h)
{
    return mf_bits_f32((uint32_t)h << 16);
}

uint16_t mf_f32_to_bf16(float f)
{
    uint32_t x = mf_f32_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) /* nan: force quiet */
        return (uint16_t)((x >> 16) | 64);
    return (uint16_t)((x + (0x7fff + ((x >> 16) & 1))) >> 16);
}

/* npy_halfbits_to_floatbits: a NaN's payload moves up unquieted. */
float mf_f16_to_f32_numpy(uint16_t h)
{
    if ((h & 0x7c00u) == 0x7c00u && (h & 0x03ffu))
        return mf_bits_f32((uint32_t)(h & 0x8000u) << 16 | 0x7f800000u | (uint32_t)(h & 0x03ffu) << 13);
    return mf_f16_to_f32(h);
}

/* npy_floatbits_to_halfbits: a NaN keeps its top payload bits (made
 * non-zero so it stays a NaN). Every other value as mf_f32_to_f16 (checked
 * over all 2^32 inputs). */
uint16_t mf_f32_to_f16_numpy(float f)
{
    uint32_t x = mf_f32_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) {
        uint16_t r = (uint16_t)(0x7c00u + ((x & 0x007fffffu) >> 13));
        return (uint16_t)(((x >> 16) & 0x8000u) | (r == 0x7c00u ? r + 1 : r));
    }
    return mf_f32_to_f16(f);
}
