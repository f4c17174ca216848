/*
 * aclsim_dtype.h - data-type helpers shared by nnopbase and the operator kernels (header-only).
 *
 * Conversions are pure integer bit manipulation, independent of the FPU's rounding mode and
 * flush-to-zero state:
 *   float32 -> float16 and float32 -> bfloat16 round to nearest, ties to even, keep subnormals,
 *   overflow to +-inf, and turn NaN into a quiet NaN (bf16: 0x7FC0 / 0xFFC0 like ml_dtypes;
 *   fp16: the top 10 payload bits with the quiet bit set, like x86 F16C).
 */
#ifndef ACLSIM_DTYPE_H
#define ACLSIM_DTYPE_H

#include <stdint.h>
#include <string.h>

#include "aclsim.h"

/* Size of one element in bits (sub-byte types: 1, 4, 6), 0 for an unknown/unsupported type. */
static inline int aclsim_dtype_bits(int32_t dt)
{
    switch (dt) {
    case ACL_BOOL:
    case ACL_INT8:
    case ACL_UINT8:
    case ACL_HIFLOAT8:
    case ACL_FLOAT8_E5M2:
    case ACL_FLOAT8_E4M3FN:
    case ACL_FLOAT8_E8M0:
        return 8;
    case ACL_FLOAT16:
    case ACL_BF16:
    case ACL_INT16:
    case ACL_UINT16:
        return 16;
    case ACL_FLOAT:
    case ACL_INT32:
    case ACL_UINT32:
    case ACL_COMPLEX32:
        return 32;
    case ACL_INT64:
    case ACL_UINT64:
    case ACL_DOUBLE:
    case ACL_COMPLEX64:
        return 64;
    case ACL_COMPLEX128:
        return 128;
    case ACL_INT4:
    case ACL_FLOAT4_E2M1:
    case ACL_FLOAT4_E1M2:
        return 4;
    case ACL_FLOAT6_E3M2:
    case ACL_FLOAT6_E2M3:
        return 6;
    case ACL_UINT1:
        return 1;
    default: /* ACL_STRING, ACL_DT_UNDEFINED, unknown */
        return 0;
    }
}

/* Bytes per element for byte-sized types, 0 otherwise. */
static inline int aclsim_dtype_size(int32_t dt)
{
    int b = aclsim_dtype_bits(dt);
    return b % 8 ? 0 : b / 8;
}

static inline const char *aclsim_dtype_name(int32_t dt)
{
    switch (dt) {
    case ACL_FLOAT: return "FLOAT";
    case ACL_FLOAT16: return "FLOAT16";
    case ACL_INT8: return "INT8";
    case ACL_INT32: return "INT32";
    case ACL_UINT8: return "UINT8";
    case ACL_INT16: return "INT16";
    case ACL_UINT16: return "UINT16";
    case ACL_UINT32: return "UINT32";
    case ACL_INT64: return "INT64";
    case ACL_UINT64: return "UINT64";
    case ACL_DOUBLE: return "DOUBLE";
    case ACL_BOOL: return "BOOL";
    case ACL_STRING: return "STRING";
    case ACL_COMPLEX64: return "COMPLEX64";
    case ACL_COMPLEX128: return "COMPLEX128";
    case ACL_BF16: return "BF16";
    case ACL_INT4: return "INT4";
    case ACL_UINT1: return "UINT1";
    case ACL_COMPLEX32: return "COMPLEX32";
    case ACL_HIFLOAT8: return "HIFLOAT8";
    case ACL_FLOAT8_E5M2: return "FLOAT8_E5M2";
    case ACL_FLOAT8_E4M3FN: return "FLOAT8_E4M3FN";
    case ACL_FLOAT8_E8M0: return "FLOAT8_E8M0";
    case ACL_FLOAT6_E3M2: return "FLOAT6_E3M2";
    case ACL_FLOAT6_E2M3: return "FLOAT6_E2M3";
    case ACL_FLOAT4_E2M1: return "FLOAT4_E2M1";
    case ACL_FLOAT4_E1M2: return "FLOAT4_E1M2";
    case ACL_DT_UNDEFINED: return "UNDEFINED";
    default: return "unknown";
    }
}

static inline uint32_t aclsim_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float aclsim_bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline float aclsim_bf16_to_f32(uint16_t h)
{
    return aclsim_bits_f32((uint32_t)h << 16);
}

static inline uint16_t aclsim_f32_to_bf16(float f)
{
    uint32_t x = aclsim_f32_bits(f);
    if ((x & 0x7FFFFFFFu) > 0x7F800000u) /* NaN */
        return (x & 0x80000000u) ? 0xFFC0u : 0x7FC0u;
    x += 0x7FFFu + ((x >> 16) & 1u); /* RNE; carries into the exponent (up to inf) as needed */
    return (uint16_t)(x >> 16);
}

static inline float aclsim_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1Fu;
    uint32_t man = h & 0x3FFu;
    if (exp == 0x1F) /* inf / NaN: keep the payload */
        return aclsim_bits_f32(sign | 0x7F800000u | (man << 13));
    if (exp == 0) {
        if (man == 0)
            return aclsim_bits_f32(sign);
        /* subnormal: man * 2^-24, normalise */
        int e = -1;
        do {
            man <<= 1;
            e++;
        } while (!(man & 0x400u));
        return aclsim_bits_f32(sign | ((uint32_t)(112 - e) << 23) | ((man & 0x3FFu) << 13));
    }
    return aclsim_bits_f32(sign | ((exp + 112u) << 23) | (man << 13));
}

static inline uint16_t aclsim_f32_to_f16(float f)
{
    uint32_t x = aclsim_f32_bits(f);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t ax = x & 0x7FFFFFFFu;
    if (ax > 0x7F800000u) /* NaN -> quiet NaN with the top payload bits */
        return (uint16_t)(sign | 0x7E00u | ((ax >> 13) & 0x3FFu));
    if (ax >= 0x477FF000u) /* >= 65520 (incl. inf) rounds to inf */
        return (uint16_t)(sign | 0x7C00u);
    if (ax >= 0x38800000u) { /* normal result: rebias exponent 127 -> 15, round 23 -> 10 bits */
        uint32_t r = ax - 0x38000000u;
        r += 0xFFFu + ((r >> 13) & 1u);
        return (uint16_t)(sign | (r >> 13));
    }
    if (ax <= 0x33000000u) /* <= 2^-25: ties-to-even gives zero */
        return sign;
    /* subnormal result in units of 2^-24: value = m * 2^(e-150) = m * 2^-24 >> (126 - e) */
    uint32_t e = ax >> 23;
    uint32_t m = (ax & 0x7FFFFFu) | 0x800000u;
    uint32_t shift = 126u - e; /* 14..24 */
    uint32_t q = m >> shift;
    uint32_t rem = m & ((1u << shift) - 1u);
    uint32_t half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (q & 1u)))
        q++;
    return (uint16_t)(sign | q);
}

#endif /* ACLSIM_DTYPE_H */
