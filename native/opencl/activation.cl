/* Activations and elementwise math on one tensor: y = f(x), computed in float.
 *   Relu, LeakyRelu, Sigmoid, Tanh, Elu, Selu, Celu, HardSigmoid, HardSwish,
 *   ThresholdedRelu, Mish, Gelu (erf or tanh form), Softplus, Softsign, Erf, Exp, Log,
 *   Sqrt, Abs, Neg, Reciprocal, Floor, Ceil, Round, Sign, Sin, Cos, Tan, Asin, Acos,
 *   Atan, Sinh, Cosh, Asinh, Acosh, Atanh; Clip (bounds from attributes or inputs).
 *
 * Every mlrt_<fn> kernel takes (x, y, n, alpha, beta, gamma) -- the op's attributes,
 * unused by most -- over n contiguous elements.  The expressions are the float ones
 * of the C kernels (activation.c, unary.c), so NaN, inf and signed zeros come out the
 * same. */

/* VEC elements per work-item (a build option: elementwise.py's VEC): vector loads, which PoCL needs */
#if !defined(VEC) || VEC != 8
#error "VEC, a build option from elementwise.py, is the width of LOADV's float8"
#endif

/* EXPR is written once for a float and a float8 v (ternaries select per lane) */
#define MLRT_UNARY(NAME, EXPR)                                                                          \
__kernel void mlrt_##NAME(__global const T *x, __global T *y, long n, float alpha, float beta, float gamma) \
{                                                                                                       \
    long i = get_global_id(0) * VEC;                                                                    \
    if (i + VEC <= n) {                                                                                 \
        float8 v = LOADV(x, i);                                                                         \
        STOREV(y, i, (EXPR));                                                                           \
    } else {                                                                                            \
        for (; i < n; ++i) { float v = LOAD(x, i); STORE(y, i, (EXPR)); }                               \
    }                                                                                                   \
}

/* Scalar in every lane, for PoCL 3.1's vector sin/cos/tan: they go wrong on small
 * arguments (1e-4 -> 0.008) when another lane of the vector holds a huge one. */
#define MLRT_UNARY_SCALAR(NAME, EXPR)                                                                   \
__kernel void mlrt_##NAME(__global const T *x, __global T *y, long n, float alpha, float beta, float gamma) \
{                                                                                                       \
    long i = get_global_id(0) * VEC;                                                                    \
    for (long e = min(i + VEC, n); i < e; ++i) { float v = LOAD(x, i); STORE(y, i, (EXPR)); }            \
}

/* tanh saturating to exactly +-1 where float tanh rounds to it (|v| > 9.01): PoCL 3.1's
 * tanh stops at 0.99999994, even for inf, which Gelu's 1 + tanh turns into a wrong
 * non-zero (and -inf * 6e-8 instead of the C kernels' -inf * 0 = NaN) */
#define TANH_SAT(v) (fabs(v) > 9.1f ? sign(v) : tanh(v))

/* NaN-propagating clamp to [0, 1] */
#define UNIT(u) ((u) > 1.0f ? 1.0f : (u) < 0.0f ? 0.0f : (u))
/* ln(1 + e^v) = max(v, 0) + ln(1 + e^-|v|), no overflow */
#define SOFTPLUS(v) (((v) > 0.0f ? (v) : 0.0f) + log1p(exp(-fabs(v))))

MLRT_UNARY(relu, v > 0.0f ? v : (isnan(v) ? v : 0.0f))
MLRT_UNARY(leaky_relu, v > 0.0f ? v : alpha * v)
/* (exp(-|v|) is exp(-v) for v >= 0 and exp(v) below: activation.c's two forms) */
MLRT_UNARY(sigmoid, v >= 0.0f ? 1.0f / (1.0f + exp(-fabs(v))) : exp(-fabs(v)) / (1.0f + exp(-fabs(v))))
MLRT_UNARY(tanh, TANH_SAT(v))
MLRT_UNARY(elu, v > 0.0f ? v : alpha * expm1(v))
MLRT_UNARY(selu, gamma * (v > 0.0f ? v : alpha * expm1(v)))
MLRT_UNARY(celu, v < 0.0f ? alpha * expm1(v / alpha) : v)
MLRT_UNARY(hard_sigmoid, UNIT(alpha * v + beta))
MLRT_UNARY(hard_swish, v * UNIT(v / 6.0f + 0.5f))
MLRT_UNARY(thresholded_relu, v > alpha ? v : 0.0f)
MLRT_UNARY(mish, v * TANH_SAT(SOFTPLUS(v)))
MLRT_UNARY(gelu, 0.5f * v * (1.0f + erf(v * 0.7071067811865476f)))
MLRT_UNARY(gelu_tanh, 0.5f * v * (1.0f + TANH_SAT(0.7978845608028654f * (v + 0.044715f * v * v * v))))
MLRT_UNARY(softplus, SOFTPLUS(v))
MLRT_UNARY(softsign, v / (1.0f + fabs(v)))
MLRT_UNARY(erf, erf(v))
MLRT_UNARY(exp, exp(v))
MLRT_UNARY(log, log(v))
MLRT_UNARY(sqrt, sqrt(v))
MLRT_UNARY(abs, fabs(v))
MLRT_UNARY(neg, -v)
MLRT_UNARY(reciprocal, 1.0f / v)
MLRT_UNARY(floor, floor(v))
MLRT_UNARY(ceil, ceil(v))
MLRT_UNARY(round, rint(v))  /* half to even, as nearbyintf */
MLRT_UNARY(sign, v > 0.0f ? 1.0f : v < 0.0f ? -1.0f : v == v ? 0.0f : v)
MLRT_UNARY_SCALAR(sin, sin(v))
MLRT_UNARY_SCALAR(cos, cos(v))
MLRT_UNARY_SCALAR(tan, tan(v))
MLRT_UNARY(asin, asin(v))
MLRT_UNARY(acos, acos(v))
MLRT_UNARY(atan, atan(v))
MLRT_UNARY(sinh, sinh(v))
MLRT_UNARY(cosh, cosh(v))
MLRT_UNARY(asinh, asinh(v))
MLRT_UNARY(acosh, acosh(v))
MLRT_UNARY(atanh, atanh(v))

/* Clip: an absent bound does not clip, NaN stays NaN; bounds from attributes (already
 * rounded to T by the recorder) or from one-element tensors (opset 11+, an absent one
 * is not read). */
#define CLIP(v, lo, hi) { if (has_lo) v = v < lo ? lo : v; if (has_hi) v = v > hi ? hi : v; }
#define MLRT_CLIP(NAME, BOUND, GET)                                                                     \
__kernel void NAME(__global const T *x, __global T *y, long n, int has_lo, BOUND lo_, int has_hi, BOUND hi_) \
{                                                                                                       \
    long i = get_global_id(0) * VEC;                                                                    \
    float lo = has_lo ? GET(lo_) : 0.0f, hi = has_hi ? GET(hi_) : 0.0f;                                 \
    if (i + VEC <= n) {                                                                                 \
        float8 v = LOADV(x, i);                                                                         \
        CLIP(v, lo, hi)                                                                                 \
        STOREV(y, i, v);                                                                                \
    } else {                                                                                            \
        for (; i < n; ++i) { float v = LOAD(x, i); CLIP(v, lo, hi) STORE(y, i, v); }                   \
    }                                                                                                   \
}
#define BOUND_VALUE(b) (b)
#define BOUND_TENSOR(b) LOAD(b, 0)
MLRT_CLIP(mlrt_clip, float, BOUND_VALUE)
MLRT_CLIP(mlrt_clip_inputs, __global const T *, BOUND_TENSOR)
