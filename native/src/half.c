/* half.c -- float16, bfloat16 and the low-precision (float8, float4, 4- and 2-bit)
 * bit conversions, rounding to nearest even, shared
 * by every kernel that computes half-precision types in float. */
#include <math.h>
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


/* -- float8 (E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ), float4 E2M1, float8 E8M0 <-> float ----
 * Bit-compatible with ml_dtypes (what onnx.reference computes with): a double goes to
 * float first, values round to nearest even.  FN types have no infinity and one NaN
 * code per sign (S.1111.111), FNUZ types no infinity, no -0 and one NaN (0x80);
 * float4 E2M1 has neither NaN nor infinity (out of range saturates; ml_dtypes turns
 * a NaN into a zero of the opposite sign). */

typedef struct mini_format {
    int man_bits, bias;
    uint8_t sign_bit, max_code; /* largest finite magnitude code */
    uint8_t kind;                /* 0 FN, 1 FNUZ, 2 IEEE-like (has inf), 3 float4 */
} mini_format;

static bool mini_format_of(int32_t dtype, mini_format *m) {
    switch (dtype) {
    case MLRT_FLOAT8E4M3FN: *m = (mini_format){3, 7, 0x80, 0x7e, 0}; return true;
    case MLRT_FLOAT8E4M3FNUZ: *m = (mini_format){3, 8, 0x80, 0x7f, 1}; return true;
    case MLRT_FLOAT8E5M2: *m = (mini_format){2, 15, 0x80, 0x7b, 2}; return true;
    case MLRT_FLOAT8E5M2FNUZ: *m = (mini_format){2, 16, 0x80, 0x7f, 1}; return true;
    case MLRT_FLOAT4E2M1: *m = (mini_format){1, 1, 0x08, 0x07, 3}; return true;
    default: return false;
    }
}

static float f32_from_bits(uint32_t b) {
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

float mlrt_lowp_to_f32(uint8_t v, int32_t dtype) {
    if (dtype == MLRT_FLOAT8E8M0) return v == 0xff ? f32_from_bits(0x7fc00000u) : ldexpf(1.0f, (int)v - 127);
    mini_format m;
    if (!mini_format_of(dtype, &m)) return f32_from_bits(0x7fc00000u);
    bool neg = (v & m.sign_bit) != 0;
    uint8_t mag = v & (uint8_t)(m.sign_bit - 1);
    if (m.kind == 1 && v == 0x80) return f32_from_bits(0xffc00000u);
    if (m.kind == 0 && mag == 0x7f) return f32_from_bits(neg ? 0xffc00000u : 0x7fc00000u);
    int e = mag >> m.man_bits, man = mag & ((1 << m.man_bits) - 1);
    if (m.kind == 2 && e == 31) {
        if (man) return f32_from_bits(neg ? 0xffc00000u : 0x7fc00000u);
        return neg ? -__builtin_inff() : __builtin_inff();
    }
    float f = e == 0 ? ldexpf((float)man, 1 - m.bias - m.man_bits)
                     : ldexpf((float)((1 << m.man_bits) | man), e - m.bias - m.man_bits);
    return neg ? -f : f;
}

uint8_t mlrt_f32_to_lowp(float f, int32_t dtype, int saturate) {
    mini_format m;
    if (!mini_format_of(dtype, &m)) return 0;
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint8_t sign = (x >> 31) ? m.sign_bit : 0;
    float a = fabsf(f);
    if (a != a) { /* NaN */
        switch (m.kind) {
        case 0: return sign | 0x7f;
        case 1: return 0x80;
        case 2: return sign | 0x7e;
        default: return sign ? 0 : m.sign_bit;
        }
    }
    uint8_t mag = 0;
    bool overflow = a > 0x1p30f; /* infinity and anything far beyond every format */
    if (!overflow && a != 0.0f) {
        int e;
        frexpf(a, &e);
        int E = e - 1, emin = 1 - m.bias;
        if (E < emin) E = emin;
        uint32_t q = (uint32_t)rintf(ldexpf(a, m.man_bits - E)); /* exact scaling, then RNE */
        if (q >= (2u << m.man_bits)) q >>= 1, ++E;
        uint32_t code = q < (1u << m.man_bits) ? q : ((uint32_t)(E + m.bias) << m.man_bits) | (q - (1u << m.man_bits));
        if (code > m.max_code) overflow = true;
        else mag = (uint8_t)code;
    }
    if (overflow) {
        if (saturate || m.kind == 3) return sign | m.max_code;
        switch (m.kind) {
        case 0: return sign | 0x7f;
        case 1: return 0x80;
        default: return sign | 0x7c; /* infinity */
        }
    }
    if (mag == 0 && m.kind == 1) return 0; /* no -0 */
    return sign | mag;
}

uint8_t mlrt_f32_to_e8m0(float f, int saturate, int round_mode) {
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint32_t e = (x >> 23) & 0xffu; /* the sign is ignored (negative input is undefined) */
    if (e == 0xffu) return 0xff;
    bool up;
    switch (round_mode) {
    case MLRT_ROUND_DOWN: up = false; break;
    case MLRT_ROUND_NEAREST: /* as onnx.numpy_helper.to_float8e8m0 */
        up = (x & 0x400000u) && ((x & 0x200000u) || (x & 0x1fffffu) || e > 0);
        break;
    default: up = (x & 0x7fffffu) != 0; break;
    }
    if (up && saturate && e == 0xfeu) up = false;
    return (uint8_t)(e + up);
}

/* 4- and 2-bit integers: the value sits in the low bits of its byte */
int32_t mlrt_lowp_int_load(uint8_t v, int32_t dtype) {
    switch (dtype) {
    case MLRT_INT4: return (int32_t)((v & 0xfu) ^ 0x8u) - 8;
    case MLRT_UINT4: return v & 0xf;
    case MLRT_INT2: return (int32_t)((v & 0x3u) ^ 0x2u) - 2;
    case MLRT_UINT2: return v & 0x3;
    default: return 0;
    }
}

/* -- rows of float16 <-> float32 on the vector units -----------------------------------
 * F16C on x86-64 (the AVX2 level), NEON on AArch64: the hardware's conversions round to
 * nearest even like the scalar ones above.  They differ only on NaN, whose quiet bit the
 * hardware sets; a vector holding a NaN is converted again by the scalar code, so every
 * path gives the same bits. */
#ifdef MLRT_X86
#include <immintrin.h>

__attribute__((target("avx,f16c"))) static void f16_to_f32_f16c(const uint16_t *x, float *y, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i h = _mm_loadu_si128((const __m128i *)(x + i));
        __m128i nan = _mm_cmpgt_epi16(_mm_and_si128(h, _mm_set1_epi16(0x7fff)), _mm_set1_epi16(0x7c00));
        if (_mm_movemask_epi8(nan))
            for (int k = 0; k < 8; ++k) y[i + k] = mlrt_f16_to_f32(x[i + k]);
        else
            _mm256_storeu_ps(y + i, _mm256_cvtph_ps(h));
    }
    for (; i < n; ++i) y[i] = mlrt_f16_to_f32(x[i]);
}

__attribute__((target("avx,f16c"))) static void f32_to_f16_f16c(const float *x, uint16_t *y, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps(x + i);
        if (_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)))
            for (int k = 0; k < 8; ++k) y[i + k] = mlrt_f32_to_f16(x[i + k]);
        else
            _mm_storeu_si128((__m128i *)(y + i), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    }
    for (; i < n; ++i) y[i] = mlrt_f32_to_f16(x[i]);
}
#elif defined(__aarch64__)
#include <arm_neon.h>

static void f16_to_f32_neon(const uint16_t *x, float *y, int64_t n) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        uint16x4_t h = vld1_u16(x + i);
        if (vmaxv_u16(vand_u16(h, vdup_n_u16(0x7fff))) > 0x7c00)
            for (int k = 0; k < 4; ++k) y[i + k] = mlrt_f16_to_f32(x[i + k]);
        else
            vst1q_f32(y + i, vcvt_f32_f16(vreinterpret_f16_u16(h)));
    }
    for (; i < n; ++i) y[i] = mlrt_f16_to_f32(x[i]);
}

static void f32_to_f16_neon(const float *x, uint16_t *y, int64_t n) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        float32x4_t v = vld1q_f32(x + i);
        if (vminvq_u32(vceqq_f32(v, v)) == 0) /* a lane unequal to itself: NaN */
            for (int k = 0; k < 4; ++k) y[i + k] = mlrt_f32_to_f16(x[i + k]);
        else
            vst1_u16(y + i, vreinterpret_u16_f16(vcvt_f16_f32(v)));
    }
    for (; i < n; ++i) y[i] = mlrt_f32_to_f16(x[i]);
}
#endif

const char *mlrt_half_rows_path(void) {
#ifdef MLRT_X86
    if (MLRT_X86_HAS(MLRT_ISA_AVX2, F16C)) return "cast/avx2";
#elif defined(__aarch64__)
    if (mlrt_cpu_isa() == MLRT_ISA_NEON) return "cast/neon";
#endif
    return "cast/portable";
}

void mlrt_f16_to_f32_row(const uint16_t *x, float *y, int64_t n) {
#ifdef MLRT_X86
    if (MLRT_X86_HAS(MLRT_ISA_AVX2, F16C)) { f16_to_f32_f16c(x, y, n); return; }
#elif defined(__aarch64__)
    if (mlrt_cpu_isa() == MLRT_ISA_NEON) { f16_to_f32_neon(x, y, n); return; }
#endif
    for (int64_t i = 0; i < n; ++i) y[i] = mlrt_f16_to_f32(x[i]);
}

void mlrt_f32_to_f16_row(const float *x, uint16_t *y, int64_t n) {
#ifdef MLRT_X86
    if (MLRT_X86_HAS(MLRT_ISA_AVX2, F16C)) { f32_to_f16_f16c(x, y, n); return; }
#elif defined(__aarch64__)
    if (mlrt_cpu_isa() == MLRT_ISA_NEON) { f32_to_f16_neon(x, y, n); return; }
#endif
    for (int64_t i = 0; i < n; ++i) y[i] = mlrt_f32_to_f16(x[i]);
}
