/* tensor_f32.c - tensor values as float32 (F8 formats per OCP FP8 and the
 * FNUZ variants, FP4 per OCP MX, packed 4- and 2-bit integers; ggml blocks
 * through the quant kernels). F6 (4 values in 3 bytes) and complex types
 * are not read as numbers. */
#include "ops/tensor_f32.h"
#include "quant/quant.h"

#include <math.h>
#include <stdlib.h>

/* A minifloat with `eb` exponent bits and `mb` mantissa bits; fnuz: no
 * negative zero, 0x80 is NaN, bias one more; e4m3fn: only S.1111.111 is NaN. */
static float minifloat(uint8_t v, int eb, int mb, int bias, bool fn, bool fnuz)
{
    if (fnuz && v == 0x80)
        return NAN;
    int s = v >> 7, e = (v >> mb) & ((1 << eb) - 1), m = v & ((1 << mb) - 1);
    float r;
    if (!fn && !fnuz && e == (1 << eb) - 1) /* IEEE-like: e5m2 inf/nan */
        r = m ? NAN : INFINITY;
    else if (fn && e == (1 << eb) - 1 && m == (1 << mb) - 1)
        r = NAN;
    else if (e == 0)
        r = ldexpf((float)m, 1 - bias - mb);
    else
        r = ldexpf((float)((1 << mb) + m), e - bias - mb);
    return s ? -r : r;
}

/* OCP MX FP4 (E2M1): bias 1, no infinity or NaN. */
static const float fp4_e2m1[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};

/* Sub-byte integers and FP4, packed from the low bits of each byte up (the
 * first element in the least significant bits: ONNX INT4/UINT4/INT2/UINT2
 * and FLOAT4E2M1, TFLite INT4). */
static void unpack_sub_byte(mf_dtype dt, const uint8_t *p, float *d, uint64_t n)
{
    unsigned bits = dt == MF_I2 || dt == MF_U2 ? 2 : 4, per = 8 / bits, mask = (1u << bits) - 1;
    for (uint64_t i = 0; i < n; i++) {
        unsigned v = (p[i / per] >> (bits * (unsigned)(i % per))) & mask;
        if (dt == MF_F4)
            d[i] = v & 8 ? -fp4_e2m1[v & 7] : fp4_e2m1[v];
        else if (dt == MF_I4 || dt == MF_I2) /* two's complement in `bits` bits */
            d[i] = (float)((int)v - (v >> (bits - 1) ? (int)(mask + 1) : 0));
        else
            d[i] = (float)v;
    }
}

bool mf_dtype_to_f32_supported(mf_dtype dt)
{
    switch (dt) {
    case MF_F64: case MF_I8: case MF_I16: case MF_I32: case MF_I64: case MF_U8:
    case MF_U16: case MF_U32: case MF_U64: case MF_BOOL: case MF_F8_E4M3:
    case MF_F8_E5M2: case MF_F8_E4M3FNUZ: case MF_F8_E5M2FNUZ: case MF_F8_E8M0:
    case MF_F4: case MF_I4: case MF_U4: case MF_I2: case MF_U2:
        return true;
    default:
        return mf_can_dequantize(dt);
    }
}

int mf_convert_to_f32(mf_dtype dt, const uint8_t *p, float *d, uint64_t n)
{
    switch (dt) {
    case MF_F64: for (uint64_t i = 0; i < n; i++) { double v; memcpy(&v, p + 8 * i, 8); d[i] = (float)v; } return 0;
    case MF_I8: for (uint64_t i = 0; i < n; i++) d[i] = (int8_t)p[i]; return 0;
    case MF_U8: for (uint64_t i = 0; i < n; i++) d[i] = p[i]; return 0;
    case MF_BOOL: for (uint64_t i = 0; i < n; i++) d[i] = p[i] != 0; return 0;
    case MF_I16: for (uint64_t i = 0; i < n; i++) d[i] = (int16_t)mf_rd16le(p + 2 * i); return 0;
    case MF_U16: for (uint64_t i = 0; i < n; i++) d[i] = mf_rd16le(p + 2 * i); return 0;
    case MF_I32: for (uint64_t i = 0; i < n; i++) d[i] = (float)(int32_t)mf_rd32le(p + 4 * i); return 0;
    case MF_U32: for (uint64_t i = 0; i < n; i++) d[i] = (float)mf_rd32le(p + 4 * i); return 0;
    case MF_I64: for (uint64_t i = 0; i < n; i++) d[i] = (float)(int64_t)mf_rd64le(p + 8 * i); return 0;
    case MF_U64: for (uint64_t i = 0; i < n; i++) d[i] = (float)mf_rd64le(p + 8 * i); return 0;
    case MF_F8_E4M3: for (uint64_t i = 0; i < n; i++) d[i] = minifloat(p[i], 4, 3, 7, true, false); return 0;
    case MF_F8_E5M2: for (uint64_t i = 0; i < n; i++) d[i] = minifloat(p[i], 5, 2, 15, false, false); return 0;
    case MF_F8_E4M3FNUZ: for (uint64_t i = 0; i < n; i++) d[i] = minifloat(p[i], 4, 3, 8, false, true); return 0;
    case MF_F8_E5M2FNUZ: for (uint64_t i = 0; i < n; i++) d[i] = minifloat(p[i], 5, 2, 16, false, true); return 0;
    case MF_F8_E8M0: for (uint64_t i = 0; i < n; i++) d[i] = p[i] == 0xff ? NAN : ldexpf(1.0f, (int)p[i] - 127); return 0;
    case MF_F4: case MF_I4: case MF_U4: case MF_I2: case MF_U2: unpack_sub_byte(dt, p, d, n); return 0;
    default:
        if (n > INT64_MAX)
            return -1;
        return mf_dequantize_row(dt, p, d, (int64_t)n);
    }
}

int mf_tensor_read_f32(const mf_model *m, const mf_tensor *t, float **out, mf_status *st)
{
    *out = NULL;
    uint64_t n = mf_tensor_nelems(t), fbytes;
    if (!mf_dtype_to_f32_supported(t->dtype))
        return mf_fail(st, MF_ERR_UNSUPPORTED, m->path, -1,
                       "tensor \"%s\": %s values cannot be read as numbers", t->name,
                       mf_dtype_name(t->dtype));
    if (n == UINT64_MAX || mf_mul_ovf(n, 4, &fbytes) || fbytes > SIZE_MAX / 2)
        return mf_fail(st, MF_ERR_FORMAT, m->path, -1, "tensor \"%s\" is too large", t->name);
    mf_buf_sink c = {malloc(t->nbytes ? (size_t)t->nbytes : 1), 0, t->nbytes,
                     "tensor yields more bytes than its size"};
    float *f = malloc(fbytes ? (size_t)fbytes : 1);
    int rc = (!c.p || !f) ? mf_oom(st, m->path) : mf_tensor_stream(m, t, mf_buf_sink_fn, &c, st);
    if (rc == 0 && c.n != t->nbytes)
        rc = mf_fail(st, MF_ERR_FORMAT, m->path, -1, "tensor \"%s\": %llu of %llu bytes", t->name,
                     (unsigned long long)c.n, (unsigned long long)t->nbytes);
    if (rc == 0 && mf_convert_to_f32(t->dtype, c.p, f, n))
        rc = mf_fail(st, MF_ERR_UNSUPPORTED, m->path, -1, "tensor \"%s\": cannot convert %s",
                     t->name, mf_dtype_name(t->dtype));
    free(c.p);
    if (rc) {
        free(f);
        return -1;
    }
    *out = f;
    return 0;
}
