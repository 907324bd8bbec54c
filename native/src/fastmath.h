/* fastmath.h -- what the float32 row kernels (softmax, attention) share: loops
 * cloned per ISA level, and exp by a polynomial (about 1.5 ulp). */
#ifndef MLRT_FASTMATH_H
#define MLRT_FASTMATH_H

#include <stdint.h>

/* hot loops: one clone per ISA level, picked at load time; FMA contraction allowed.
 * MAX_LOOP lets a max reduction vectorise (NaN is dealt with by the caller),
 * SUM_LOOP a sum (in a different order of additions). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define HOT_LOOP \
    __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"), optimize("fp-contract=fast")))
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

#endif
