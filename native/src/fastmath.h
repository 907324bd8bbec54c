/* fastmath.h -- what the float32 row kernels (softmax, attention, erf, gelu, sigmoid) share:
 * loops cloned per ISA level, exp by a polynomial (about 1.5 ulp) and erf from it
 * (about 2.5 ulp). */
#ifndef MLRT_FASTMATH_H
#define MLRT_FASTMATH_H

#include <stdint.h>

/* hot loops: one clone per ISA level, picked at load time; FMA contraction allowed.
 * MAX_LOOP lets a max reduction vectorise (NaN is dealt with by the caller),
 * SUM_LOOP a sum (in a different order of additions). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#if defined(__ELF__) /* the clones are ifuncs */
#define HOT_LOOP \
    __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"), optimize("fp-contract=fast")))
#else
#define HOT_LOOP __attribute__((optimize("fp-contract=fast")))
#endif
#define MAX_LOOP __attribute__((optimize("finite-math-only", "no-signed-zeros")))
#define SUM_LOOP __attribute__((optimize("associative-math", "no-signed-zeros", "no-trapping-math")))
#else
#define HOT_LOOP
#define MAX_LOOP
#define SUM_LOOP
#endif

typedef union { float f; uint32_t u; } f32_bits;

/* exp(x) for x <= 88; 0 below -87.3 (where the true value is denormal); NaN stays NaN. */
static inline float mlrt_exp_f32(float x) {
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
static inline float mlrt_sigmoid_f32(float x) {
    float e = mlrt_exp_f32(-__builtin_fabsf(x)), r = 1.0f / (1.0f + e);
    return x >= 0 ? r : e * r;
}

/* erf(x), branch-free: |x| < 0.921875: x * P(x^2); above, 1 - exp(Q(|x|)) with Q a fit of
 * log(erfc) on [0.921875, 4] (erfc(4) < 2^-25, so erf rounds to 1 beyond).  NaN stays NaN,
 * -0 stays -0, +-inf gives +-1. */
static inline float mlrt_erf_f32(float x) {
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
