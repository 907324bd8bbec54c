/* activation.c -- Relu, LeakyRelu, Elu, Selu, Celu, HardSigmoid, HardSwish,
 * ThresholdedRelu, Mish, Gelu (one tensor in, same shape and type out), PRelu
 * (x and a slope broadcast to it) and Clip (bounds from attributes or inputs).
 *
 * com.microsoft (as onnxruntime's contrib ops): Gelu, FastGelu, BiasGelu, QuickGelu and
 * BiasAdd, act(X [+ bias] [+ skip]) with bias over the last dim.
 *
 * float16 / bfloat16 are computed in float and rounded back to nearest even.  Gelu's
 * float32 loop uses the erf and exp polynomials of fastmath.h, cloned per ISA level. */
#include <math.h>

#include "activation.h"
#include "fastmath.h"
#include "nditer.h"

/* defined in cast.c */

#define MASK_FLOAT_TYPES (MLRT_MASK_FLOATS | MLRT_BIT(MLRT_FLOAT16) | MLRT_BIT(MLRT_BFLOAT16))
#define ACT_GRAIN 16384
#define SAME(v) (v)

/* -- Relu ------------------------------------------------------------------------------- */

typedef struct relu_job { const void *x; void *y; int32_t dtype; } relu_job;

MLRT_ISA_FN(, void, relu_rows, (void *arg, int64_t begin, int64_t end), (arg, begin, end)) {
    const relu_job *j = arg;
    switch (j->dtype) {
    case MLRT_FLOAT: { const float *x = j->x; float *y = j->y;
        for (int64_t i = begin; i < end; ++i) y[i] = x[i] > 0.0f ? x[i] : (x[i] != x[i] ? x[i] : 0.0f); } break;
    case MLRT_DOUBLE: { const double *x = j->x; double *y = j->y;
        for (int64_t i = begin; i < end; ++i) y[i] = x[i] > 0.0 ? x[i] : (x[i] != x[i] ? x[i] : 0.0); } break;
    case MLRT_INT8: { const int8_t *x = j->x; int8_t *y = j->y; for (int64_t i = begin; i < end; ++i) y[i] = x[i] > 0 ? x[i] : 0; } break;
    case MLRT_INT16: { const int16_t *x = j->x; int16_t *y = j->y; for (int64_t i = begin; i < end; ++i) y[i] = x[i] > 0 ? x[i] : 0; } break;
    case MLRT_INT32: { const int32_t *x = j->x; int32_t *y = j->y; for (int64_t i = begin; i < end; ++i) y[i] = x[i] > 0 ? x[i] : 0; } break;
    case MLRT_INT64: { const int64_t *x = j->x; int64_t *y = j->y; for (int64_t i = begin; i < end; ++i) y[i] = x[i] > 0 ? x[i] : 0; } break;
    }
}

static int k_relu(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                  const void *params, size_t params_size) {
    MLRT_CHECK(n_in == 1 && n_out == 1, "expects 1 input and 1 output");
    MLRT_CHECK(in[0].dtype == out[0].dtype && mlrt_same_shape(&in[0], &out[0]), "output must match the input");
    MLRT_CHECK(mlrt_is_contiguous(&in[0]) && mlrt_is_contiguous(&out[0]), "needs contiguous tensors");
    relu_job job = {in[0].data, out[0].data, in[0].dtype};
    mlrt_parallel_for(ctx, mlrt_numel(&out[0]), 16384, relu_rows, &job);
    mlrt_note_path(MLRT_LOOP_PATH("relu"));
    return MLRT_OK;
}

MLRT_KERNEL(relu, "Relu", "", 1, MLRT_OPSET_MAX,
            MLRT_MASK_FLOATS | MLRT_BIT(MLRT_INT8) | MLRT_BIT(MLRT_INT16) | MLRT_BIT(MLRT_INT32) | MLRT_BIT(MLRT_INT64), k_relu);

/* -- activations with attributes: float types ---------------------------------------------- */

typedef struct act_job {
    const void *x;
    void *y;
    int32_t dtype;
    int64_t mode;
    float af, bf, gf;   /* alpha, beta, gamma as float ... */
    double ad, bd, gd;  /* ... and as double */
} act_job;

/* An activation: FE / DE are its float / double expressions of x and of a, b, g
 * (alpha, beta, gamma in that precision) and mode.  ACT_ROW_OP's float32 loop is
 * instead ROW(x, y, n, mode), an MLRT_HOT_FN. */
#define ACT_FLOAT_LOOP(NAME)                                                                              \
    { const float *x = j->x; float *y = j->y;                                                             \
      for (int64_t i = begin; i < end; ++i) y[i] = NAME##_f(x[i], j->af, j->bf, j->gf, j->mode); } break;
#define ACT_ROW_LOOP(ROW) ROW((const float *)j->x + begin, (float *)j->y + begin, end - begin, j->mode); break;
#define ACT_KERNEL(NAME, OP, FLOAT_LOOP, FE, DE)                                                          \
    static inline float NAME##_f(float x, float a, float b, float g, int64_t mode) { return FE; }        \
    static inline double NAME##_d(double x, double a, double b, double g, int64_t mode) { return DE; }   \
    static void NAME##_range(void *arg, int64_t begin, int64_t end) {                                     \
        const act_job *j = arg;                                                                           \
        switch (j->dtype) {                                                                               \
        case MLRT_FLOAT: FLOAT_LOOP                                                                       \
        case MLRT_DOUBLE: { const double *x = j->x; double *y = j->y;                                     \
            for (int64_t i = begin; i < end; ++i) y[i] = NAME##_d(x[i], j->ad, j->bd, j->gd, j->mode); } break; \
        case MLRT_FLOAT16: { const uint16_t *x = j->x; uint16_t *y = j->y;                                \
            for (int64_t i = begin; i < end; ++i)                                                         \
                y[i] = mlrt_f32_to_f16(NAME##_f(mlrt_f16_to_f32(x[i]), j->af, j->bf, j->gf, j->mode)); } break; \
        case MLRT_BFLOAT16: { const uint16_t *x = j->x; uint16_t *y = j->y;                               \
            for (int64_t i = begin; i < end; ++i)                                                         \
                y[i] = mlrt_f32_to_bf16(NAME##_f(mlrt_bf16_to_f32(x[i]), j->af, j->bf, j->gf, j->mode)); } break; \
        }                                                                                                 \
    }                                                                                                     \
    static int k_##NAME(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,  \
                        int32_t n_out, const void *params, size_t params_size) {                         \
        MLRT_PARAMS(mlrt_activation_params, p, params, params_size);                                      \
        return act_run(ctx, in, n_in, out, n_out, NAME##_range, p);                                       \
    }                                                                                                     \
    MLRT_KERNEL(NAME, OP, "", 1, MLRT_OPSET_MAX, MASK_FLOAT_TYPES, k_##NAME);
#define ACT_OP(NAME, OP, FE, DE) ACT_KERNEL(NAME, OP, ACT_FLOAT_LOOP(NAME), FE, DE)
#define ACT_ROW_OP(NAME, OP, ROW, FE, DE) ACT_KERNEL(NAME, OP, ACT_ROW_LOOP(ROW), FE, DE)

static int act_run(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                   mlrt_range_fn fn, const mlrt_activation_params *p) {
    MLRT_CHECK(n_in == 1 && n_out == 1, "expects 1 input and 1 output");
    const mlrt_tensor *x = &in[0];
    mlrt_tensor *y = &out[0];
    if (x->dtype < 0 || x->dtype >= 64 || !((MASK_FLOAT_TYPES >> x->dtype) & 1))
        return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "element type %d not supported", x->dtype);
    MLRT_CHECK(x->dtype == y->dtype && mlrt_same_shape(x, y), "output must match the input");
    MLRT_CHECK(mlrt_is_contiguous(x) && mlrt_is_contiguous(y), "needs contiguous tensors");
    act_job job = {x->data, y->data, x->dtype, p->mode, (float)p->alpha, (float)p->beta, (float)p->gamma,
                   p->alpha, p->beta, p->gamma};
    mlrt_parallel_for(ctx, mlrt_numel(y), ACT_GRAIN, fn, &job);
    return MLRT_OK;
}

/* NaN-propagating clamp to [0, 1] */
#define UNIT(v) ((v) > 1 ? 1 : (v) < 0 ? 0 : (v))

ACT_OP(leakyrelu, "LeakyRelu", x > 0 ? x : a * x, x > 0 ? x : a * x)
ACT_OP(elu, "Elu", x > 0 ? x : a * expm1f(x), x > 0 ? x : a * expm1(x))
ACT_OP(selu, "Selu", g * (x > 0 ? x : a * expm1f(x)), g * (x > 0 ? x : a * expm1(x)))
ACT_OP(celu, "Celu", x < 0 ? a * expm1f(x / a) : x, x < 0 ? a * expm1(x / a) : x)
ACT_OP(hardsigmoid, "HardSigmoid", UNIT(a * x + b), UNIT(a * x + b))
ACT_OP(hardswish, "HardSwish", x * UNIT(x / 6.0f + 0.5f), x * UNIT(x / 6.0 + 0.5))
ACT_OP(thresholdedrelu, "ThresholdedRelu", x > a ? x : 0.0f, x > a ? x : 0.0)
/* x * tanh(softplus(x)) */
ACT_OP(mish, "Mish", x * tanhf((x > 0 ? x : 0.0f) + log1pf(expf(-fabsf(x)))),
       x * tanh((x > 0 ? x : 0.0) + log1p(exp(-fabs(x)))))
/* none: x/2 (1 + erf(x / sqrt 2)); tanh: x/2 (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3),
 * which is x / (1 + e^-2u) (no cancellation), 0 * x where e^-2u overflows (as 1 + tanh(u)
 * rounds to 0 there; -inf gives NaN, as the formula does). */
MLRT_MATH float gelu_fast_f32(float x, int64_t mode) {
    if (mode == MLRT_GELU_TANH) {
        float m = -1.5957691216057308f * (x + 0.044715f * x * x * x);
        return m > 88.0f ? x * 0.0f : x / (1.0f + mlrt_exp_f32(m));
    }
    return 0.5f * x * (1.0f + mlrt_erf_f32(x * 0.7071067811865476f));
}

MLRT_HOT_FN(, void, gelu_row_f32, (const float *x, float *y, int64_t n, int64_t mode), (x, y, n, mode)) {
    if (mode == MLRT_GELU_TANH)
        for (int64_t i = 0; i < n; ++i) y[i] = gelu_fast_f32(x[i], MLRT_GELU_TANH);
    else
        for (int64_t i = 0; i < n; ++i) y[i] = gelu_fast_f32(x[i], MLRT_GELU_NONE);
}

ACT_ROW_OP(gelu, "Gelu", gelu_row_f32, gelu_fast_f32(x, mode),
           mode == MLRT_GELU_TANH ? 0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))
                                  : 0.5 * x * (1.0 + erf(x * 0.7071067811865476)))

/* -- com.microsoft: y = act(x + bias + skip), bias (1-D) over the last dim, skip of x's shape ----- */

typedef struct bias_act_job {
    const void *x, *bias, *skip;
    void *y;
    int32_t dtype;
    int64_t mode, len;  /* enum mlrt_bias_activation; the last dim (bias's length) */
    double alpha;
} bias_act_job;

static inline float bias_act_f32(float v, int64_t mode, float alpha) {
    switch (mode) {
    case MLRT_BIAS_ACT_GELU: return gelu_fast_f32(v, MLRT_GELU_NONE);
    case MLRT_BIAS_ACT_GELU_TANH: return gelu_fast_f32(v, MLRT_GELU_TANH);
    case MLRT_BIAS_ACT_QUICK_GELU: return v * mlrt_sigmoid_f32(alpha * v);
    default: return v;
    }
}

static inline double bias_act_f64(double v, int64_t mode, double alpha) {
    switch (mode) {
    case MLRT_BIAS_ACT_GELU: return 0.5 * v * (1.0 + erf(v * 0.7071067811865476));
    case MLRT_BIAS_ACT_GELU_TANH: return 0.5 * v * (1.0 + tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
    case MLRT_BIAS_ACT_QUICK_GELU: return v / (1.0 + exp(-alpha * v));
    default: return v;
    }
}

/* rows [begin, end) of len elements; LOAD / STORE convert T to and from the compute type C */
#define BIAS_ACT_LOOP(T, C, LOAD, STORE, ACT)                                              \
    {                                                                                      \
        const T *xs = j->x, *bs = j->bias, *ks = j->skip;                                  \
        T *ys = j->y;                                                                      \
        for (int64_t i = begin * j->len; i < end * j->len; ++i) {                         \
            C v = LOAD(xs[i]);                                                             \
            if (bs) v += LOAD(bs[i % j->len]);                                             \
            if (ks) v += LOAD(ks[i]);                                                      \
            ys[i] = STORE(ACT(v, j->mode, (C)j->alpha));                                   \
        }                                                                                  \
    }                                                                                      \
    break;

/* float32: y = x (+ bias) (+ skip) a row at a time, then the activation over the row, each a
 * vector loop (the generic loop above switches per value and does not vectorize) */
MLRT_HOT_FN(, void, bias_skip_row_f32, (const float *x, const float *b, const float *k, float *y, int64_t n), (x, b, k, y, n)) {
    if (b && k)
        for (int64_t i = 0; i < n; ++i) y[i] = (x[i] + b[i]) + k[i];
    else if (b)
        for (int64_t i = 0; i < n; ++i) y[i] = x[i] + b[i];
    else
        for (int64_t i = 0; i < n; ++i) y[i] = x[i] + k[i];
}

MLRT_HOT_FN(, void, quick_gelu_row_f32, (const float *x, float *y, int64_t n, float alpha), (x, y, n, alpha)) {
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] * mlrt_sigmoid_f32(alpha * x[i]);
}

static void bias_act_rows_f32(const bias_act_job *j, int64_t begin, int64_t end) {
    const float *bias = j->bias;
    for (int64_t r = begin; r < end; ++r) {
        const float *x = (const float *)j->x + r * j->len, *skip = j->skip ? (const float *)j->skip + r * j->len : NULL;
        float *y = (float *)j->y + r * j->len;
        if (bias || skip) {
            bias_skip_row_f32(x, bias, skip, y, j->len);
            x = y;
        }
        switch (j->mode) {
        case MLRT_BIAS_ACT_GELU: gelu_row_f32(x, y, j->len, MLRT_GELU_NONE); break;
        case MLRT_BIAS_ACT_GELU_TANH: gelu_row_f32(x, y, j->len, MLRT_GELU_TANH); break;
        case MLRT_BIAS_ACT_QUICK_GELU: quick_gelu_row_f32(x, y, j->len, (float)j->alpha); break;
        default:
            if (x != y) memcpy(y, x, (size_t)j->len * sizeof *y);
        }
    }
}

static void bias_act_rows(void *arg, int64_t begin, int64_t end) {
    const bias_act_job *j = arg;
    switch (j->dtype) {
    case MLRT_FLOAT: bias_act_rows_f32(j, begin, end); break;
    case MLRT_DOUBLE: BIAS_ACT_LOOP(double, double, SAME, SAME, bias_act_f64)
    case MLRT_FLOAT16: BIAS_ACT_LOOP(uint16_t, float, mlrt_f16_to_f32, mlrt_f32_to_f16, bias_act_f32)
    case MLRT_BFLOAT16: BIAS_ACT_LOOP(uint16_t, float, mlrt_bf16_to_f32, mlrt_f32_to_bf16, bias_act_f32)
    }
}

/* inputs: X, then optionally bias (1-D, X's last dim) and skip (X's shape); absent ones are
 * given as absent tensors */
static int k_bias_act(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                      const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_activation_params, p, params, params_size);
    MLRT_CHECK(n_in >= 1 && n_in <= 3 && n_out == 1, "expects 1 to 3 inputs and 1 output");
    const mlrt_tensor *x = &in[0];
    mlrt_tensor *y = &out[0];
    if (x->dtype < 0 || x->dtype >= 64 || !((MASK_FLOAT_TYPES >> x->dtype) & 1))
        return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "element type %d not supported", x->dtype);
    MLRT_CHECK(p->mode >= MLRT_BIAS_ACT_IDENTITY && p->mode <= MLRT_BIAS_ACT_QUICK_GELU, "unknown mode %lld",
               (long long)p->mode);
    MLRT_CHECK(x->dtype == y->dtype && mlrt_same_shape(x, y), "output must match the input");
    MLRT_CHECK(mlrt_is_contiguous(x) && mlrt_is_contiguous(y), "needs contiguous tensors");
    int64_t len = x->rank ? x->shape[x->rank - 1] : 1, n = mlrt_numel(x);
    const mlrt_tensor *bias = n_in > 1 && mlrt_present(&in[1]) ? &in[1] : NULL;
    const mlrt_tensor *skip = n_in > 2 && mlrt_present(&in[2]) ? &in[2] : NULL;
    if (bias)
        MLRT_CHECK(bias->dtype == x->dtype && mlrt_is_contiguous(bias) && mlrt_numel(bias) == len,
                   "bias must be %lld contiguous values of X's type", (long long)len);
    if (skip)
        MLRT_CHECK(skip->dtype == x->dtype && mlrt_is_contiguous(skip) && mlrt_same_shape(skip, x),
                   "skip must be a contiguous tensor of X's shape and type");
    if (n == 0) return MLRT_OK;
    bias_act_job job = {x->data, bias ? bias->data : NULL, skip ? skip->data : NULL, y->data, x->dtype,
                        p->mode, len, p->alpha};
    mlrt_parallel_for(ctx, n / len, ACT_GRAIN / len + 1, bias_act_rows, &job);
    return MLRT_OK;
}

#define MS_BIAS_ACT(NAME, OP) MLRT_KERNEL(NAME, OP, "com.microsoft", 1, MLRT_OPSET_MAX, MASK_FLOAT_TYPES, k_bias_act);
MS_BIAS_ACT(ms_gelu, "Gelu")
MS_BIAS_ACT(ms_fastgelu, "FastGelu")
MS_BIAS_ACT(ms_biasgelu, "BiasGelu")
MS_BIAS_ACT(ms_quickgelu, "QuickGelu")
MS_BIAS_ACT(ms_biasadd, "BiasAdd")

/* -- PRelu: y = x > 0 ? x : x * slope, slope a view of y's shape -------------------------------- */

typedef struct prelu_job { mlrt_rows rows; const void *x, *s; void *y; int32_t dtype; } prelu_job;

#define PRELU_LOOP(T)                                                                     \
    {                                                                                      \
        const T *xs = j->x, *ss = j->s;                                                    \
        T *ys = j->y;                                                                      \
        for (int64_t r = begin; r < end; ++r) {                                            \
            mlrt_rows_offsets(&j->rows, r, off);                                           \
            const T *px = xs + off[0], *ps = ss + off[1];                                  \
            T *py = ys + off[2];                                                           \
            for (int64_t i = 0; i < n; ++i) {                                              \
                T xv = px[i * sx];                                                         \
                py[i] = xv > 0 ? xv : (T)(xv * ps[i * ss_]);                               \
            }                                                                              \
        }                                                                                  \
    }                                                                                      \
    break;
#define PRELU_HALF_LOOP(TO, FROM)                                                          \
    {                                                                                      \
        const uint16_t *xs = j->x, *ss = j->s;                                             \
        uint16_t *ys = j->y;                                                               \
        for (int64_t r = begin; r < end; ++r) {                                            \
            mlrt_rows_offsets(&j->rows, r, off);                                           \
            const uint16_t *px = xs + off[0], *ps = ss + off[1];                           \
            uint16_t *py = ys + off[2];                                                    \
            for (int64_t i = 0; i < n; ++i) {                                              \
                float xv = TO(px[i * sx]);                                                 \
                py[i] = xv > 0 ? px[i * sx] : FROM(xv * TO(ps[i * ss_]));                  \
            }                                                                              \
        }                                                                                  \
    }                                                                                      \
    break;

static void prelu_range(void *arg, int64_t begin, int64_t end) {
    const prelu_job *j = arg;
    int64_t n = j->rows.row_len, off[3];
    int64_t sx = j->rows.strides[0][j->rows.rank - 1], ss_ = j->rows.strides[1][j->rows.rank - 1];
    switch (j->dtype) {
    case MLRT_FLOAT: PRELU_LOOP(float)
    case MLRT_DOUBLE: PRELU_LOOP(double)
    case MLRT_INT8: PRELU_LOOP(int8_t)
    case MLRT_INT16: PRELU_LOOP(int16_t)
    case MLRT_INT32: PRELU_LOOP(int32_t)
    case MLRT_INT64: PRELU_LOOP(int64_t)
    case MLRT_UINT8: PRELU_LOOP(uint8_t)
    case MLRT_UINT16: PRELU_LOOP(uint16_t)
    case MLRT_UINT32: PRELU_LOOP(uint32_t)
    case MLRT_UINT64: PRELU_LOOP(uint64_t)
    case MLRT_FLOAT16: PRELU_HALF_LOOP(mlrt_f16_to_f32, mlrt_f32_to_f16)
    case MLRT_BFLOAT16: PRELU_HALF_LOOP(mlrt_bf16_to_f32, mlrt_f32_to_bf16)
    }
}

#define MASK_PRELU (MASK_FLOAT_TYPES | MLRT_MASK_INTS)

static int k_prelu(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                   const void *params, size_t params_size) {
    MLRT_CHECK(n_in == 2 && n_out == 1, "expects 2 inputs and 1 output");
    const mlrt_tensor *x = &in[0], *s = &in[1];
    mlrt_tensor *y = &out[0];
    if (x->dtype < 0 || x->dtype >= 64 || !((MASK_PRELU >> x->dtype) & 1))
        return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "element type %d not supported", x->dtype);
    MLRT_CHECK(s->dtype == x->dtype && y->dtype == x->dtype, "x, slope and y must share one type");
    MLRT_CHECK(mlrt_same_shape(x, y) && mlrt_same_shape(s, y), "x and slope must be views of the output's shape");
    prelu_job job = {.x = x->data, .s = s->data, .y = y->data, .dtype = x->dtype};
    const mlrt_tensor *ops[3] = {x, s, y};
    mlrt_rows_init(&job.rows, y, ops, 3);
    int64_t grain = job.rows.row_len >= 4096 ? 1 : 4096 / (job.rows.row_len + 1) + 1;
    mlrt_parallel_for(ctx, job.rows.n_rows, grain, prelu_range, &job);
    return MLRT_OK;
}

MLRT_KERNEL(prelu, "PRelu", "", 1, MLRT_OPSET_MAX, MASK_PRELU, k_prelu);

/* -- Clip: y = min(max(x, lo), hi); absent bounds do not clip; NaN stays NaN ------------------- */

typedef struct clip_job {
    const void *x;
    void *y;
    int32_t dtype;
    bool has_lo, has_hi;
    const void *lo_ptr, *hi_ptr;  /* the bound inputs (opset >= 11), or NULL */
    double lo, hi;                /* the bound attributes (opset < 11) */
} clip_job;

#define CLIP_LOOP(T, LOAD, STORE)                                                          \
    {                                                                                      \
        const T *xs = j->x;                                                                \
        T *ys = j->y;                                                                      \
        T lo = j->lo_ptr ? *(const T *)j->lo_ptr : STORE(j->lo);                           \
        T hi = j->hi_ptr ? *(const T *)j->hi_ptr : STORE(j->hi);                           \
        bool has_lo = j->has_lo, has_hi = j->has_hi;                                       \
        for (int64_t i = begin; i < end; ++i) {                                            \
            T v = xs[i];                                                                   \
            if (has_lo && LOAD(v) < LOAD(lo)) v = lo;                                      \
            if (has_hi && LOAD(v) > LOAD(hi)) v = hi;                                      \
            ys[i] = v;                                                                     \
        }                                                                                  \
    }                                                                                      \
    break;
static void clip_range(void *arg, int64_t begin, int64_t end) {
    const clip_job *j = arg;
    switch (j->dtype) {
    case MLRT_FLOAT: CLIP_LOOP(float, SAME, (float))
    case MLRT_DOUBLE: CLIP_LOOP(double, SAME, (double))
    case MLRT_INT8: CLIP_LOOP(int8_t, SAME, (int8_t))
    case MLRT_INT16: CLIP_LOOP(int16_t, SAME, (int16_t))
    case MLRT_INT32: CLIP_LOOP(int32_t, SAME, (int32_t))
    case MLRT_INT64: CLIP_LOOP(int64_t, SAME, (int64_t))
    case MLRT_UINT8: CLIP_LOOP(uint8_t, SAME, (uint8_t))
    case MLRT_UINT16: CLIP_LOOP(uint16_t, SAME, (uint16_t))
    case MLRT_UINT32: CLIP_LOOP(uint32_t, SAME, (uint32_t))
    case MLRT_UINT64: CLIP_LOOP(uint64_t, SAME, (uint64_t))
    case MLRT_FLOAT16: CLIP_LOOP(uint16_t, mlrt_f16_to_f32, mlrt_f32_to_f16)
    case MLRT_BFLOAT16: CLIP_LOOP(uint16_t, mlrt_bf16_to_f32, mlrt_f32_to_bf16)
    }
}

#define MASK_CLIP (MASK_FLOAT_TYPES | MLRT_MASK_INTS)

static int k_clip(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                  const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_clip_params, p, params, params_size);
    MLRT_CHECK(n_in >= 1 && n_in <= 3 && n_out == 1, "expects 1 to 3 inputs and 1 output");
    const mlrt_tensor *x = &in[0];
    mlrt_tensor *y = &out[0];
    if (x->dtype < 0 || x->dtype >= 64 || !((MASK_CLIP >> x->dtype) & 1))
        return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "element type %d not supported", x->dtype);
    MLRT_CHECK(x->dtype == y->dtype && mlrt_same_shape(x, y), "output must match the input");
    MLRT_CHECK(mlrt_is_contiguous(x) && mlrt_is_contiguous(y), "needs contiguous tensors");
    MLRT_CHECK(!(p->has_min || p->has_max) || ((MASK_FLOAT_TYPES >> x->dtype) & 1),
               "bounds given as attributes need a floating-point input");
    clip_job job = {x->data, y->data, x->dtype, p->has_min != 0, p->has_max != 0, NULL, NULL, p->min, p->max};
    for (int32_t k = 1; k < n_in; ++k) {
        const mlrt_tensor *b = &in[k];
        if (!mlrt_present(b)) continue;
        MLRT_CHECK(b->dtype == x->dtype, "bound %d has type %d, input has %d", k, b->dtype, x->dtype);
        MLRT_CHECK(mlrt_numel(b) == 1, "bound %d must hold one value, it has %lld", k, (long long)mlrt_numel(b));
        if (k == 1) job.lo_ptr = b->data, job.has_lo = true;
        else job.hi_ptr = b->data, job.has_hi = true;
    }
    mlrt_parallel_for(ctx, mlrt_numel(y), ACT_GRAIN, clip_range, &job);
    return MLRT_OK;
}

MLRT_KERNEL(clip, "Clip", "", 1, MLRT_OPSET_MAX, MASK_CLIP, k_clip);
