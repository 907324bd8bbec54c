/* fastmath.h -- what the float32 row kernels (softmax, attention, erf, gelu, sigmoid) share:
 * loops cloned per ISA level, exp by a polynomial (about 1.5 ulp) and erf from it
 * (about 2.5 ulp). */
#ifndef MLRT_FASTMATH_H
#define MLRT_FASTMATH_H

#include <stdint.h>

#include "internal.h"

/* hot loops: one clone per ISA level (MLRT_ISA_FN, src/internal.h) with FMA contraction
 * allowed, also on aarch64 (NEON's fused multiply-add), and floating-point traps assumed
 * off, so that a loop with a choice in it (the exp's range, the sigmoid's sign) computes
 * both sides and blends: without masked vector instructions (AVX2, NEON) the compiler
 * left such loops scalar -- Sigmoid 11x slower on the AVX2 clone than on AVX-512's; the
 * values are the same.  MAX_LOOP lets a max reduction
 * vectorise (NaN is dealt with by the caller), SUM_LOOP a sum (in a different order of
 * additions).  A hot loop is written
 *     MLRT_HOT_FN(SUM_LOOP, float, name, (const float *x, int64_t n), (x, n)) { ... } */
#if defined(__GNUC__) && !defined(__clang__) && (defined(__x86_64__) || defined(__aarch64__))
#define HOT_OPT __attribute__((optimize("fp-contract=fast", "no-trapping-math")))
#define MAX_LOOP __attribute__((optimize("finite-math-only", "no-signed-zeros")))
#define SUM_LOOP __attribute__((optimize("associative-math", "no-signed-zeros", "no-trapping-math")))
#else
#define HOT_OPT
#define MAX_LOOP
#define SUM_LOOP
#endif
#define MLRT_HOT_FN(attrs, ret, name, params, args) MLRT_ISA_FN(HOT_OPT attrs, ret, name, params, args)

typedef union { float f; uint32_t u; } f32_bits;

/* exp(x) for x <= 88; 0 below -87.3 (where the true value is denormal); NaN stays NaN. */
/* (always inlined: a hot loop's own optimize attributes would otherwise keep gcc from
 * inlining these into it) */
#define MLRT_MATH static inline __attribute__((always_inline))

MLRT_MATH float mlrt_exp_f32(float x) {
    const float lo = -87.33654f, hi = 88.0f;
    float xc = x < lo ? lo : x;
    xc = xc > hi ? hi : xc;
    f32_bits t = {.f = xc * 1.44269504088896341f + 12582912.0f};  /* round(x / ln2) in the low bits */
    float k = t.f - 12582912.0f;
    float r = xc - k * 0.693359375f;
    r = r - k * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    f32_bits scale = {.u = (t.u - 0x4B400000u + 127u) << 23};  /* 2^k */
    float y = p * scale.f;
    return x < lo ? 0.0f : y;
}

/* sigmoid(x) from e = exp(-|x|) (no overflow either way): 1 / (1 + e) for x >= 0, e / (1 + e)
 * below; NaN stays NaN. */
MLRT_MATH float mlrt_sigmoid_f32(float x) {
    float e = mlrt_exp_f32(-__builtin_fabsf(x)), r = 1.0f / (1.0f + e);
    return x >= 0 ? r : e * r;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* sigmoid on 16 lanes, as mlrt_sigmoid_f32 from e = exp(-|u|) (0 below -87.34), with the
 * cheaper steps an error of 1e-7 or so in a value of [0, 1] allows: |u| reduced by ln 2 in
 * one step (its rounding, 2e-8 k, matters only where e is small), e^r by a degree-5 fit on
 * [-ln2/2, ln2/2] (1.6e-7 relative), 2^k by vscalefps, and 1 / (1 + e) by vrcp14ps and a
 * Newton step instead of vdivps, whose throughput (one in about ten cycles) held a Swish
 * epilogue to half speed: 19 vector operations, a fifth fewer than mlrt_exp_f32's steps
 * (SiLU networks spend a fifth of their time here).  Within 3e-7 of sigmoid; NaN stays NaN. */
__attribute__((target("avx512f"), always_inline)) static inline __m512 mlrt_sigmoid_avx512(__m512 u) {
    const __m512 lowest = _mm512_set1_ps(-87.33654f), shift = _mm512_set1_ps(12582912.0f), one = _mm512_set1_ps(1.0f);
    __m512 x = _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(u), _mm512_set1_epi32((int)0x80000000u)));
    __mmask16 kept = _mm512_cmp_ps_mask(x, lowest, _CMP_NLT_UQ); /* (NaN kept too) */
    __m512 xc = _mm512_max_ps(lowest, x); /* (NaN in x is kept: vmaxps returns its second operand) */
    __m512 t = _mm512_fmadd_ps(xc, _mm512_set1_ps(1.44269504088896341f), shift);
    __m512 k = _mm512_sub_ps(t, shift);
    __m512 r = _mm512_fnmadd_ps(k, _mm512_set1_ps(0.693147180559945f), xc);
    __m512 q = _mm512_fmadd_ps(_mm512_set1_ps(8.3125252e-3f), r, _mm512_set1_ps(4.1890115e-2f));
    q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(1.6667114e-1f));
    q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(4.9999231e-1f));
    __m512 p = _mm512_fmadd_ps(_mm512_mul_ps(r, r), q, _mm512_add_ps(r, one));
    __m512 e = _mm512_maskz_scalef_ps(kept, p, k);
    __m512 d = _mm512_add_ps(one, e), rc = _mm512_rcp14_ps(d); /* d in [1, 2]: rc within 2^-14 of 1 / d */
    __m512 s = _mm512_fmadd_ps(_mm512_fnmadd_ps(d, rc, one), rc, rc);
    __mmask16 neg = _mm512_cmp_ps_mask(u, _mm512_setzero_ps(), _CMP_NGE_UQ); /* u < 0 or NaN */
    return _mm512_mask_mul_ps(s, neg, e, s);
}
#endif

/* erf(x), branch-free: |x| < 0.921875: x * P(x^2); above, 1 - exp(Q(|x|)) with Q a fit of
 * log(erfc) on [0.921875, 4] (erfc(4) < 2^-25, so erf rounds to 1 beyond).  NaN stays NaN,
 * -0 stays -0, +-inf gives +-1. */
MLRT_MATH float mlrt_erf_f32(float x) {
    f32_bits bits = {.f = x}, mag = {.u = bits.u & 0x7fffffffu};
    float a = mag.f > 4.0f ? 4.0f : mag.f;  /* NaN stays NaN */
    float t = a * a;
    float p = -5.99087391e-4f;
    p = p * t + 4.99318587e-3f;
    p = p * t + -2.67666224e-2f;
    p = p * t + 1.12818167e-1f;
    p = p * t + -3.76124948e-1f;
    p = p * t + 1.12837911e+0f;
    float small = a * p;
    float q = 1.94734428e-4f;
    q = q * a + -3.03160050e-3f;
    q = q * a + 2.21813992e-2f;
    q = q * a + -1.03838913e-1f;
    q = q * a + -6.37285769e-1f;
    q = q * a + -1.12761545e+0f;
    q = q * a + -2.09911959e-4f;
    float big = 1.0f - mlrt_exp_f32(q);
    f32_bits r = {.f = a < 0.921875f ? small : big};
    r.u |= bits.u & 0x80000000u;
    return r.f;
}

#endif
