/* half.c -- float16 and bfloat16 bit conversions, rounding to nearest even, shared
 * by every kernel that computes half-precision types in float. */
#include <string.h>

#include "internal.h"

float mlrt_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu, bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (man << 13);
    } else if (exp == 0) {
        float f = (float)man * 0x1p-24f; /* zero or subnormal: exact */
        return sign ? -f : f;
    } else {
        bits = sign | ((exp + 112u) << 23) | (man << 13);
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* Round the significand m (value m * 2^-shift half-subnormal units) to nearest even. */
static inline uint16_t round_shift(uint64_t m, int shift) {
    if (shift > 63) return 0;
    uint64_t q = m >> shift, rem = m & ((UINT64_C(1) << shift) - 1), half = UINT64_C(1) << (shift - 1);
    if (rem > half || (rem == half && (q & 1))) ++q;
    return (uint16_t)q;
}

uint16_t mlrt_f32_to_f16(float f) {
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) { /* NaN: keep the top payload bits, stay a NaN */
        uint16_t r = (uint16_t)(0x7c00u | ((ax >> 13) & 0x3ffu));
        return sign | (r == 0x7c00u ? 0x7c01u : r);
    }
    if (ax >= 0x477ff000u) return sign | 0x7c00u; /* >= 65520 rounds to inf */
    if (ax < 0x38800000u) {                       /* below 2^-14: half subnormal or zero */
        uint32_t e = ax >> 23;
        if (e == 0) return sign;
        uint64_t m = (ax & 0x7fffffu) | 0x800000u; /* value = m * 2^(e-150) = q * 2^-24 */
        return sign | round_shift(m, (int)(126 - e));
    }
    uint32_t r = ax - 0x38000000u; /* rebias 127 -> 15 */
    r += 0xfffu + ((r >> 13) & 1u);
    return sign | (uint16_t)(r >> 13);
}

uint16_t mlrt_f64_to_f16(double d) {
    uint64_t x;
    memcpy(&x, &d, sizeof x);
    uint16_t sign = (uint16_t)((x >> 48) & 0x8000u);
    uint64_t ax = x & UINT64_C(0x7fffffffffffffff);
    if (ax > UINT64_C(0x7ff0000000000000)) {
        uint16_t r = (uint16_t)(0x7c00u | ((ax >> 42) & 0x3ffu));
        return sign | (r == 0x7c00u ? 0x7c01u : r);
    }
    if (ax >= UINT64_C(0x40effe0000000000)) return sign | 0x7c00u; /* >= 65520 */
    if (ax < UINT64_C(0x3f10000000000000)) {                      /* below 2^-14 */
        uint64_t e = ax >> 52;
        if (e == 0) return sign;
        uint64_t m = (ax & UINT64_C(0xfffffffffffff)) | (UINT64_C(1) << 52); /* m * 2^(e-1075) */
        return sign | round_shift(m, (int)(1051 - e));
    }
    uint64_t r = ax - (UINT64_C(1008) << 52); /* rebias 1023 -> 15 */
    r += (UINT64_C(1) << 41) - 1 + ((r >> 42) & 1u);
    return sign | (uint16_t)(r >> 42);
}

float mlrt_bf16_to_f32(uint16_t h) {
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

uint16_t mlrt_f32_to_bf16(float f) {
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u); /* quiet NaN */
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

