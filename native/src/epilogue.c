/* epilogue.c -- the finish of a product stored without one: rows of Y get + bias[r],
 * + Z (Y's layout), then an activation (enum mlrt_conv_activation, include/mlrt.h).
 *
 * Conv's paths run it where the micro-kernels' store could not finish the result (BLAS,
 * Winograd, activations the strip kernels lack), FusedGemm after its product; declared
 * in src/gemm.h beside the strip kernels' own epilogue. */
#include <math.h>

#include "../include/mlrt.h" /* enum mlrt_conv_activation */
#include "fastmath.h"
#include "gemm.h"

/* Row loops of the float32 activations that need more than a compare: the exp is the
 * polynomial of fastmath.h (as the Sigmoid kernel's, about 2 ulp), cloned per ISA. */
MLRT_HOT_FN(, void, sigmoid_row_portable, (float *y, int64_t n), (y, n)) {
    for (int64_t i = 0; i < n; ++i) y[i] = 1.0f / (1.0f + mlrt_exp_f32(-y[i]));
}

MLRT_HOT_FN(, void, swish_row_portable, (float *y, int64_t n, float alpha), (y, n, alpha)) {
    for (int64_t i = 0; i < n; ++i) y[i] = y[i] / (1.0f + mlrt_exp_f32(-alpha * y[i]));
}

#if defined(__x86_64__) && defined(__GNUC__)
/* AVX-512: the strip kernels' sigmoid (fastmath.h: no division), so that a Swish is the
 * same whichever path stored the conv; swish: v * sigmoid(alpha v). */
__attribute__((target("avx512f"))) static void act_row_avx512(float *y, int64_t n, float alpha, bool swish) {
    __m512 a = _mm512_set1_ps(alpha);
    for (int64_t i = 0; i < n; i += 16) {
        __mmask16 k = n - i >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - i)) - 1);
        __m512 v = _mm512_maskz_loadu_ps(k, y + i);
        __m512 s = mlrt_sigmoid_avx512(swish ? _mm512_mul_ps(a, v) : v);
        _mm512_mask_storeu_ps(y + i, k, swish ? _mm512_mul_ps(v, s) : s);
    }
}
#endif

static void sigmoid_row_f32(float *y, int64_t n) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (mlrt_isa_level >= 4) {
        act_row_avx512(y, n, 1.0f, false);
        return;
    }
#endif
    sigmoid_row_portable(y, n);
}

static void swish_row_f32(float *y, int64_t n, float alpha) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (mlrt_isa_level >= 4) {
        act_row_avx512(y, n, alpha, true);
        return;
    }
#endif
    swish_row_portable(y, n, alpha);
}

MLRT_HOT_FN(, void, hard_swish_row_f32, (float *y, int64_t n, float alpha, float beta), (y, n, alpha, beta)) {
    for (int64_t i = 0; i < n; ++i) {
        float h = alpha * y[i] + beta;
        h = h < 0.0f ? 0.0f : h > 1.0f ? 1.0f : h;
        y[i] = y[i] * h;
    }
}

MLRT_HOT_FN(, void, clip_row_f32, (float *y, int64_t n, float lo, float hi), (y, n, lo, hi)) {
    for (int64_t i = 0; i < n; ++i) y[i] = y[i] < lo ? lo : y[i] > hi ? hi : y[i];
}

MLRT_HOT_FN(, void, relu_row_f32, (float *y, int64_t n), (y, n)) {
    for (int64_t i = 0; i < n; ++i) y[i] = y[i] > 0 ? y[i] : (y[i] != y[i] ? y[i] : 0);
}

MLRT_HOT_FN(, void, bias_add_row_f32, (float *y, const float *z, int64_t n, float bias), (y, z, n, bias)) {
    if (z)
        for (int64_t i = 0; i < n; ++i) y[i] = (y[i] + bias) + z[i];
    else
        for (int64_t i = 0; i < n; ++i) y[i] += bias;
}

/* One activation (enum mlrt_conv_activation) on one value, in double. */
static inline double act_f64(double v, int64_t act, double alpha, double beta) {
    switch (act) {
    case MLRT_CONV_ACT_RELU: return v > 0 ? v : (v != v ? v : 0);
    case MLRT_CONV_ACT_LEAKY_RELU: return v >= 0 ? v : alpha * v;
    case MLRT_CONV_ACT_CLIP: return v < alpha ? alpha : v > beta ? beta : v;
    case MLRT_CONV_ACT_SIGMOID: return 1.0 / (1.0 + exp(-v));
    case MLRT_CONV_ACT_TANH: return tanh(v);
    case MLRT_CONV_ACT_HARD_SIGMOID: { double h = alpha * v + beta; return h < 0 ? 0 : h > 1 ? 1 : h; }
    case MLRT_CONV_ACT_HARD_SWISH: { double h = alpha * v + beta; return v * (h < 0 ? 0 : h > 1 ? 1 : h); }
    case MLRT_CONV_ACT_SWISH: return v / (1.0 + exp(-alpha * v));
    default: return v;
    }
}

void mlrt_epilogue_f32(float *y, const float *z, int64_t rows, int64_t cols, int64_t ld, const float *bias,
                       int64_t act, double alpha, double beta) {
    if (!bias && !z && !act) return;
    const float a = (float)alpha, b = (float)beta;
    for (int64_t r = 0; r < rows; ++r) {
        float *yr = y + r * ld;
        if (bias || z) bias_add_row_f32(yr, z ? z + r * ld : NULL, cols, bias ? bias[r] : 0.0f);
        switch (act) {
        case MLRT_CONV_ACT_NONE: break;
        case MLRT_CONV_ACT_RELU: relu_row_f32(yr, cols); break;
        case MLRT_CONV_ACT_CLIP: clip_row_f32(yr, cols, a, b); break;
        case MLRT_CONV_ACT_SIGMOID: sigmoid_row_f32(yr, cols); break;
        case MLRT_CONV_ACT_SWISH: swish_row_f32(yr, cols, a); break;
        case MLRT_CONV_ACT_HARD_SWISH: hard_swish_row_f32(yr, cols, a, b); break;
        default:
            for (int64_t i = 0; i < cols; ++i) yr[i] = (float)act_f64(yr[i], act, alpha, beta);
        }
    }
}

void mlrt_epilogue_f64(double *y, const double *z, int64_t rows, int64_t cols, int64_t ld, const double *bias,
                       int64_t act, double alpha, double beta) {
    if (!bias && !z && !act) return;
    for (int64_t r = 0; r < rows; ++r) {
        double *yr = y + r * ld, bv = bias ? bias[r] : 0;
        const double *zr = z ? z + r * ld : NULL;
        if (bias) for (int64_t i = 0; i < cols; ++i) yr[i] += bv;
        if (zr) for (int64_t i = 0; i < cols; ++i) yr[i] += zr[i];
        if (act) for (int64_t i = 0; i < cols; ++i) yr[i] = act_f64(yr[i], act, alpha, beta);
    }
}
