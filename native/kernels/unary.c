/* unary.c -- elementwise math on one tensor:
 *   Abs, Neg, Sign (all numeric types); Exp, Log, Sqrt, Reciprocal, Floor, Ceil,
 *   Round, Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh, Erf,
 *   Sigmoid, Tanh, Softplus, Softsign (float types); IsNaN, IsInf (float -> bool).
 *
 * y has x's shape; both are contiguous.  float16 and bfloat16 are computed in
 * float and rounded back to nearest even.  One kernel per op, made by a macro
 * from the op's float and double expressions of x; Erf's float32 loop is a
 * polynomial (fastmath.h) in a loop cloned per ISA level, its double is libm's. */
#include <math.h>

#include "fastmath.h"
#include "internal.h"
#include "unary.h"

/* defined in cast.c */

#define MASK_FLOAT_TYPES (MLRT_MASK_FLOATS | MLRT_BIT(MLRT_FLOAT16) | MLRT_BIT(MLRT_BFLOAT16))
#define MASK_SIGNED (MLRT_BIT(MLRT_INT8) | MLRT_BIT(MLRT_INT16) | MLRT_BIT(MLRT_INT32) | MLRT_BIT(MLRT_INT64))
#define UNARY_GRAIN 16384

typedef struct unary_job {
    const void *x;
    void *y;
    int32_t dtype;
    const mlrt_isinf_params *isinf;
} unary_job;

/* Check the tensors and run fn over every element.  out_dtype 0 means "x's type". */
static int unary_run(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                     mlrt_range_fn fn, uint64_t mask, int32_t out_dtype, const mlrt_isinf_params *isinf) {
    MLRT_CHECK(n_in == 1 && n_out == 1, "expects 1 input and 1 output");
    const mlrt_tensor *x = &in[0];
    mlrt_tensor *y = &out[0];
    if (x->dtype < 0 || x->dtype >= 64 || !((mask >> x->dtype) & 1))
        return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "element type %d not supported", x->dtype);
    MLRT_CHECK(y->dtype == (out_dtype ? out_dtype : x->dtype), "output type %d does not fit input type %d", y->dtype, x->dtype);
    MLRT_CHECK(mlrt_same_shape(x, y), "output shape must match the input's");
    MLRT_CHECK(mlrt_is_contiguous(x) && mlrt_is_contiguous(y), "needs contiguous tensors");
    unary_job job = {x->data, y->data, x->dtype, isinf};
    mlrt_parallel_for(ctx, mlrt_numel(y), UNARY_GRAIN, fn, &job);
    mlrt_note_path(MLRT_LOOP_PATH("unary"));
    return MLRT_OK;
}

/* loops over one type: `T x = xs[i]; y[i] = (T)(EXPR);` */
#define LOOP(T, EXPR)                                                                   \
    {                                                                                   \
        const T *xs = j->x;                                                             \
        T *ys = j->y;                                                                   \
        for (int64_t i = begin; i < end; ++i) { T x = xs[i]; ys[i] = (T)(EXPR); }       \
    }                                                                                   \
    break;
#define HALF_LOOP(TO, FROM, FN)                                                         \
    {                                                                                   \
        const uint16_t *xs = j->x;                                                      \
        uint16_t *ys = j->y;                                                            \
        for (int64_t i = begin; i < end; ++i) ys[i] = FROM(FN(TO(xs[i])));              \
    }                                                                                   \
    break;
#define FLOAT_CASES(NAME)                                                               \
    case MLRT_FLOAT: LOOP(float, NAME##_f(x))                                           \
    case MLRT_DOUBLE: LOOP(double, NAME##_d(x))                                         \
    case MLRT_FLOAT16: HALF_LOOP(mlrt_f16_to_f32, mlrt_f32_to_f16, NAME##_f)            \
    case MLRT_BFLOAT16: HALF_LOOP(mlrt_bf16_to_f32, mlrt_f32_to_bf16, NAME##_f)
#define SIGNED_CASES(EXPR)                                                              \
    case MLRT_INT8: LOOP(int8_t, EXPR)                                                  \
    case MLRT_INT16: LOOP(int16_t, EXPR)                                                \
    case MLRT_INT32: LOOP(int32_t, EXPR)                                                \
    case MLRT_INT64: LOOP(int64_t, EXPR)
#define UNSIGNED_CASES(EXPR)                                                            \
    case MLRT_UINT8: LOOP(uint8_t, EXPR)                                                \
    case MLRT_UINT16: LOOP(uint16_t, EXPR)                                              \
    case MLRT_UINT32: LOOP(uint32_t, EXPR)                                              \
    case MLRT_UINT64: LOOP(uint64_t, EXPR)

#define KERNEL_FN(NAME, MASK)                                                                              \
    static int k_##NAME(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,  \
                        int32_t n_out, const void *params, size_t params_size) {                         \
        return unary_run(ctx, in, n_in, out, n_out, NAME##_range, MASK, 0, NULL);                         \
    }

/* An op on float types: FE is its float expression of x, DE its double one. */
#define FLOAT_OP(NAME, OP, FE, DE)                                                      \
    static inline float NAME##_f(float x) { return FE; }                                \
    static inline double NAME##_d(double x) { return DE; }                              \
    static void NAME##_range(void *arg, int64_t begin, int64_t end) {                   \
        const unary_job *j = arg;                                                       \
        switch (j->dtype) { FLOAT_CASES(NAME) }                                         \
    }                                                                                   \
    KERNEL_FN(NAME, MASK_FLOAT_TYPES)                                                   \
    MLRT_KERNEL(NAME, OP, "", 1, MLRT_OPSET_MAX, MASK_FLOAT_TYPES, k_##NAME);

/* An op on float types whose float32 loop is ROW(x, y, n) (an MLRT_HOT_FN), FE its float
 * expression for float16 / bfloat16, DE its double one. */
#define ROW_OP(NAME, OP, ROW, FE, DE)                                                   \
    static inline float NAME##_f(float x) { return FE; }                                \
    static inline double NAME##_d(double x) { return DE; }                              \
    static void NAME##_range(void *arg, int64_t begin, int64_t end) {                   \
        const unary_job *j = arg;                                                       \
        switch (j->dtype) {                                                             \
        case MLRT_FLOAT: ROW((const float *)j->x + begin, (float *)j->y + begin, end - begin); break; \
        case MLRT_DOUBLE: LOOP(double, NAME##_d(x))                                     \
        case MLRT_FLOAT16: HALF_LOOP(mlrt_f16_to_f32, mlrt_f32_to_f16, NAME##_f)        \
        case MLRT_BFLOAT16: HALF_LOOP(mlrt_bf16_to_f32, mlrt_f32_to_bf16, NAME##_f)     \
        }                                                                               \
    }                                                                                   \
    KERNEL_FN(NAME, MASK_FLOAT_TYPES)                                                   \
    MLRT_KERNEL(NAME, OP, "", 1, MLRT_OPSET_MAX, MASK_FLOAT_TYPES, k_##NAME);

/* An op on every numeric type: SE for signed integers, UE for unsigned ones. */
#define NUMERIC_OP(NAME, OP, FE, DE, SE, UE, MASK)                                      \
    static inline float NAME##_f(float x) { return FE; }                                \
    static inline double NAME##_d(double x) { return DE; }                              \
    static void NAME##_range(void *arg, int64_t begin, int64_t end) {                   \
        const unary_job *j = arg;                                                       \
        switch (j->dtype) { FLOAT_CASES(NAME) SIGNED_CASES(SE) UNSIGNED_CASES(UE) }     \
    }                                                                                   \
    KERNEL_FN(NAME, MASK)                                                               \
    MLRT_KERNEL(NAME, OP, "", 1, MLRT_OPSET_MAX, MASK, k_##NAME);

/* integer negation that wraps (no signed overflow) */
#define WRAP_NEG(x) (0 - (uint64_t)(x))

NUMERIC_OP(abs, "Abs", fabsf(x), fabs(x), x < 0 ? WRAP_NEG(x) : (uint64_t)x, x, MASK_FLOAT_TYPES | MLRT_MASK_INTS)
NUMERIC_OP(neg, "Neg", -x, -x, WRAP_NEG(x), WRAP_NEG(x), MASK_FLOAT_TYPES | MASK_SIGNED)
NUMERIC_OP(sign, "Sign", x > 0 ? 1.0f : x < 0 ? -1.0f : x == x ? 0.0f : x, x > 0 ? 1.0 : x < 0 ? -1.0 : x == x ? 0.0 : x,
           (x > 0) - (x < 0), x > 0, MASK_FLOAT_TYPES | MLRT_MASK_INTS)

/* Exp, Sigmoid and Tanh over float32 go a vector at a time on the exp polynomial of
 * fastmath.h (about 1.5 ulp), where libm's expf is one call per value (24x slower on a
 * [1, 96, 112, 112] Sigmoid).  Exp: +inf above 88.72, 4 exp(x - 2 ln 2) from 88 (where the
 * polynomial's 2^k stops), 0 where the true value is denormal. */
MLRT_MATH float exp_fast(float x) {
    float top = 4.0f * mlrt_exp_f32(x - 1.38629436f); /* (88, 88.72]: past the polynomial's 2^k */
    return x > 88.7228394f ? INFINITY : x > 88.0f ? top : mlrt_exp_f32(x);
}
MLRT_HOT_FN(, void, exp_row_f32, (const float *x, float *y, int64_t n), (x, y, n)) {
    for (int64_t i = 0; i < n; ++i) y[i] = exp_fast(x[i]);
}
ROW_OP(exp, "Exp", exp_row_f32, expf(x), exp(x))
FLOAT_OP(log, "Log", logf(x), log(x))
FLOAT_OP(sqrt, "Sqrt", sqrtf(x), sqrt(x))
FLOAT_OP(reciprocal, "Reciprocal", 1.0f / x, 1.0 / x)
FLOAT_OP(floor, "Floor", floorf(x), floor(x))
FLOAT_OP(ceil, "Ceil", ceilf(x), ceil(x))
FLOAT_OP(round, "Round", nearbyintf(x), nearbyint(x)) /* default rounding mode: half to even */
FLOAT_OP(sin, "Sin", sinf(x), sin(x))
FLOAT_OP(cos, "Cos", cosf(x), cos(x))
FLOAT_OP(tan, "Tan", tanf(x), tan(x))
FLOAT_OP(asin, "Asin", asinf(x), asin(x))
FLOAT_OP(acos, "Acos", acosf(x), acos(x))
FLOAT_OP(atan, "Atan", atanf(x), atan(x))
FLOAT_OP(sinh, "Sinh", sinhf(x), sinh(x))
FLOAT_OP(cosh, "Cosh", coshf(x), cosh(x))
FLOAT_OP(asinh, "Asinh", asinhf(x), asinh(x))
FLOAT_OP(acosh, "Acosh", acoshf(x), acosh(x))
FLOAT_OP(atanh, "Atanh", atanhf(x), atanh(x))
MLRT_HOT_FN(, void, erf_row_f32, (const float *x, float *y, int64_t n), (x, y, n)) {
    for (int64_t i = 0; i < n; ++i) y[i] = mlrt_erf_f32(x[i]);
}
ROW_OP(erf, "Erf", erf_row_f32, mlrt_erf_f32(x), erf(x))
/* tanh |x| = (1 - e) / (1 + e), e = exp(-2|x|), with the sign of x put back; below 0.25
 * an odd polynomial (Taylor to x^9: the next term is under 1e-8 of x there), where 1 - e
 * would cancel.  NaN stays NaN (its sign bit is kept), +-inf gives +-1. */
MLRT_MATH float tanh_fast(float x) {
    f32_bits bits = {.f = x}, mag = {.u = bits.u & 0x7fffffffu};
    float a = mag.f, e = mlrt_exp_f32(-2.0f * a), big = (1.0f - e) / (1.0f + e);
    float x2 = a * a;
    float small = a + a * x2 * (-1.0f / 3 + x2 * (2.0f / 15 + x2 * (-17.0f / 315 + x2 * (62.0f / 2835))));
    f32_bits r = {.f = a < 0.25f ? small : big};
    r.u |= bits.u & 0x80000000u;
    return a != a ? x : r.f;
}
MLRT_HOT_FN(, void, tanh_row_f32, (const float *x, float *y, int64_t n), (x, y, n)) {
    for (int64_t i = 0; i < n; ++i) y[i] = tanh_fast(x[i]);
}
ROW_OP(tanh, "Tanh", tanh_row_f32, tanhf(x), tanh(x))
/* stable both ways: exp of a non-positive number only (mlrt_sigmoid_f32) */
MLRT_HOT_FN(, void, sigmoid_row_f32, (const float *x, float *y, int64_t n), (x, y, n)) {
    for (int64_t i = 0; i < n; ++i) y[i] = mlrt_sigmoid_f32(x[i]);
}
ROW_OP(sigmoid, "Sigmoid", sigmoid_row_f32, x >= 0 ? 1.0f / (1.0f + expf(-x)) : expf(x) / (1.0f + expf(x)),
       x >= 0 ? 1.0 / (1.0 + exp(-x)) : exp(x) / (1.0 + exp(x)))
/* log(1 + e^x) = max(x, 0) + log1p(e^-|x|) */
FLOAT_OP(softplus, "Softplus", (x > 0 ? x : 0.0f) + log1pf(expf(-fabsf(x))), (x > 0 ? x : 0.0) + log1p(exp(-fabs(x))))
FLOAT_OP(softsign, "Softsign", x / (1.0f + fabsf(x)), x / (1.0 + fabs(x)))

/* -- IsNaN, IsInf: float types -> bool ------------------------------------------------- */

#define PRED_LOOP(T, EXPR)                                                              \
    {                                                                                   \
        const T *xs = j->x;                                                             \
        uint8_t *ys = j->y;                                                             \
        for (int64_t i = begin; i < end; ++i) { T x = xs[i]; ys[i] = (uint8_t)(EXPR); } \
    }                                                                                   \
    break;

static void isnan_range(void *arg, int64_t begin, int64_t end) {
    const unary_job *j = arg;
    switch (j->dtype) {
    case MLRT_FLOAT: PRED_LOOP(float, x != x)
    case MLRT_DOUBLE: PRED_LOOP(double, x != x)
    case MLRT_FLOAT16: PRED_LOOP(uint16_t, (x & 0x7fffu) > 0x7c00u)
    case MLRT_BFLOAT16: PRED_LOOP(uint16_t, (x & 0x7fffu) > 0x7f80u)
    }
}

static void isinf_range(void *arg, int64_t begin, int64_t end) {
    const unary_job *j = arg;
    const bool neg = j->isinf->detect_negative != 0, pos = j->isinf->detect_positive != 0;
    switch (j->dtype) {
    case MLRT_FLOAT: PRED_LOOP(float, (x == INFINITY && pos) || (x == -INFINITY && neg))
    case MLRT_DOUBLE: PRED_LOOP(double, (x == INFINITY && pos) || (x == -INFINITY && neg))
    case MLRT_FLOAT16: PRED_LOOP(uint16_t, (x == 0x7c00u && pos) || (x == 0xfc00u && neg))
    case MLRT_BFLOAT16: PRED_LOOP(uint16_t, (x == 0x7f80u && pos) || (x == 0xff80u && neg))
    }
}

static int k_isnan(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                   const void *params, size_t params_size) {
    return unary_run(ctx, in, n_in, out, n_out, isnan_range, MASK_FLOAT_TYPES, MLRT_BOOL, NULL);
}

static int k_isinf(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                   const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_isinf_params, p, params, params_size);
    return unary_run(ctx, in, n_in, out, n_out, isinf_range, MASK_FLOAT_TYPES, MLRT_BOOL, p);
}

MLRT_KERNEL(isnan, "IsNaN", "", 1, MLRT_OPSET_MAX, MASK_FLOAT_TYPES, k_isnan);
MLRT_KERNEL(isinf, "IsInf", "", 1, MLRT_OPSET_MAX, MASK_FLOAT_TYPES, k_isinf);
