/* transformer.c -- RMSNormalization, RotaryEmbedding, Swish, Shrink.
 *
 *   RMSNormalization  y = x / sqrt(mean(x^2) + epsilon) * scale, the mean taken
 *                     over each group of a grouped view (in double); Scale may
 *                     have another float type than X and Y
 *   RotaryEmbedding   per [batch, seq, head] row, the first rotary_dim elements
 *                     are rotated pairwise by the row's cos / sin (pairs are
 *                     (i, i + rotary_dim / 2), or (2i, 2i + 1) when interleaved);
 *                     the rest are copied
 *   Swish             y = x * sigmoid(alpha * x)
 *   Shrink            y = x + bias below -lambd, x - bias above lambd, else 0
 *
 * float16 / bfloat16 compute in float; RotaryEmbedding rounds each product and
 * sum to the input type, as the reference's arithmetic in that type does. */
#include <math.h>

#include "internal.h"
#include "transformer.h"

#define store mlrt_store_real
#define load mlrt_load_as_double

#define FLOAT_TYPES (MLRT_MASK_FLOATS | MLRT_BIT(MLRT_FLOAT16) | MLRT_BIT(MLRT_BFLOAT16))

static bool is_float_type(int32_t t) { return t >= 0 && t < 64 && ((FLOAT_TYPES >> t) & 1); }

/* -- RMSNormalization ---------------------------------------------------------------------------- */

typedef struct rms_job {
    const mlrt_tensor *x, *s;
    const mlrt_tensor *y;
    int32_t n_kept, rank;
    int64_t count;  /* elements per group */
    double eps;
} rms_job;

static void rms_groups(void *arg, int64_t begin, int64_t end) {
    const rms_job *j = arg;
    const mlrt_tensor *x = j->x, *s = j->s;
    int32_t last = j->rank - 1;
    int64_t len = x->shape[last], lines = j->count / (len ? len : 1);
    for (int64_t g = begin; g < end; ++g) {
        int64_t gx = 0, gs = 0;
        int64_t rem = g;
        for (int32_t d = j->n_kept - 1; d >= 0; --d) {
            int64_t i = rem % x->shape[d];
            rem /= x->shape[d];
            gx += i * x->strides[d];
            gs += i * s->strides[d];
        }
        /* pass 1: mean of squares */
        double acc = 0.0;
        for (int64_t r = 0; r < lines; ++r) {
            int64_t ox = gx, rem2 = r;
            for (int32_t d = last - 1; d >= j->n_kept; --d) {
                int64_t i = rem2 % x->shape[d];
                rem2 /= x->shape[d];
                ox += i * x->strides[d];
            }
            for (int64_t i = 0; i < len; ++i) {
                double v = load(x->data, ox + i * x->strides[last], x->dtype);
                acc += v * v;
            }
        }
        double inv = 1.0 / sqrt(acc / (double)j->count + j->eps);
        /* pass 2: y = x * inv * scale, at x's offsets */
        for (int64_t r = 0; r < lines; ++r) {
            int64_t ox = gx, os = gs, rem2 = r;
            for (int32_t d = last - 1; d >= j->n_kept; --d) {
                int64_t i = rem2 % x->shape[d];
                rem2 /= x->shape[d];
                ox += i * x->strides[d];
                os += i * s->strides[d];
            }
            for (int64_t i = 0; i < len; ++i) {
                int64_t at = ox + i * x->strides[last];
                double v = load(x->data, at, x->dtype) * inv * load(s->data, os + i * s->strides[last], s->dtype);
                store(j->y->data, at, j->y->dtype, v);
            }
        }
    }
}

static int k_rmsnorm(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                     const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_rmsnorm_params, p, params, params_size);
    MLRT_CHECK(n_in == 2 && n_out == 1, "expects 2 inputs and 1 output");
    const mlrt_tensor *x = &in[0], *s = &in[1], *y = &out[0];
    if (!is_float_type(x->dtype) || !is_float_type(s->dtype))
        return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "element types %d / %d not supported", x->dtype, s->dtype);
    MLRT_CHECK(y->dtype == x->dtype && mlrt_is_contiguous(y) && mlrt_numel(y) == mlrt_numel(x),
               "Y must have X's size and type");
    MLRT_CHECK(x->rank >= 1 && p->n_kept >= 0 && p->n_kept < x->rank && mlrt_same_shape(x, s),
               "X and Scale views must share a shape with at least one normalised dim");
    int64_t groups = 1, count = 1;
    for (int32_t d = 0; d < x->rank; ++d) {
        MLRT_CHECK(x->strides[d] >= 0 && s->strides[d] >= 0, "negative strides");
        if (d < p->n_kept) groups *= x->shape[d];
        else count *= x->shape[d];
    }
    if (groups == 0 || count == 0) return MLRT_OK;
    rms_job job = {x, s, y, (int32_t)p->n_kept, x->rank, count, p->epsilon};
    mlrt_parallel_for(ctx, groups, 16384 / count + 1, rms_groups, &job);
    return MLRT_OK;
}

MLRT_KERNEL(rmsnorm, "RMSNormalization", "", 23, MLRT_OPSET_MAX, FLOAT_TYPES, k_rmsnorm);

/* -- RotaryEmbedding ----------------------------------------------------------------------------- */

typedef struct rotary_job {
    const mlrt_tensor *x, *cos, *sin, *pos;
    const mlrt_tensor *y;
    int64_t half, interleaved, positions;  /* positions: rows of the tables (with position ids) */
    int kind;                              /* 0 none, 1 float16, 2 bfloat16 rounding */
    int bad;
} rotary_job;

static inline float rnd(float v, int kind) {
    if (kind == 1) return mlrt_f16_to_f32(mlrt_f32_to_f16(v));
    if (kind == 2) return mlrt_bf16_to_f32(mlrt_f32_to_bf16(v));
    return v;
}

static void rotary_rows(void *arg, int64_t begin, int64_t end) {
    rotary_job *j = arg;
    const mlrt_tensor *x = j->x;
    int64_t S = x->shape[1], H = x->shape[2], D = x->shape[3], half = j->half;
    int32_t dt = x->dtype;
    for (int64_t r = begin; r < end; ++r) {
        int64_t h = r % H, bs = r / H, s = bs % S, b = bs / S;
        int64_t c0, s0, cstride, sstride;  /* table row offsets and element strides */
        if (j->pos) {
            int64_t at = ((const int64_t *)j->pos->data)[b * j->pos->strides[0] + s * j->pos->strides[1]];
            if (at < 0 || at >= j->positions) {
                __atomic_store_n(&j->bad, 1, __ATOMIC_RELAXED);
                continue;
            }
            c0 = at * j->cos->strides[0];
            s0 = at * j->sin->strides[0];
            cstride = j->cos->strides[1];
            sstride = j->sin->strides[1];
        } else {
            c0 = b * j->cos->strides[0] + s * j->cos->strides[1];
            s0 = b * j->sin->strides[0] + s * j->sin->strides[1];
            cstride = j->cos->strides[2];
            sstride = j->sin->strides[2];
        }
        int64_t base = b * x->strides[0] + s * x->strides[1] + h * x->strides[2], e = x->strides[3];
        for (int64_t i = 0; i < half; ++i) {
            int64_t i1 = j->interleaved ? 2 * i : i, i2 = j->interleaved ? 2 * i + 1 : i + half;
            double c = load(j->cos->data, c0 + i * cstride, dt), sn = load(j->sin->data, s0 + i * sstride, dt);
            double x1 = load(x->data, base + i1 * e, dt), x2 = load(x->data, base + i2 * e, dt);
            double real, imag;
            if (dt == MLRT_DOUBLE) {
                real = c * x1 - sn * x2;
                imag = sn * x1 + c * x2;
            } else {
                float fc = (float)c, fs = (float)sn, f1 = (float)x1, f2 = (float)x2;
                real = rnd(rnd(fc * f1, j->kind) - rnd(fs * f2, j->kind), j->kind);
                imag = rnd(rnd(fs * f1, j->kind) + rnd(fc * f2, j->kind), j->kind);
            }
            store(j->y->data, base + i1 * e, dt, real);
            store(j->y->data, base + i2 * e, dt, imag);
        }
        for (int64_t i = 2 * half; i < D; ++i) store(j->y->data, base + i * e, dt, load(x->data, base + i * e, dt));
    }
}

static int k_rotary(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                    const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_rotary_params, p, params, params_size);
    MLRT_CHECK(n_in >= 3 && n_in <= 4 && n_out == 1, "expects 3 or 4 inputs and 1 output");
    const mlrt_tensor *x = &in[0], *c = &in[1], *sn = &in[2], *y = &out[0];
    const mlrt_tensor *pos = n_in > 3 && mlrt_present(&in[3]) ? &in[3] : NULL;
    if (!is_float_type(x->dtype)) return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "element type %d not supported", x->dtype);
    MLRT_CHECK(x->rank == 4 && c->dtype == x->dtype && sn->dtype == x->dtype,
               "needs a 4-D input view and tables of its type");
    MLRT_CHECK(y->dtype == x->dtype && mlrt_is_contiguous(y) && mlrt_numel(y) == mlrt_numel(x),
               "Y must match the input");
    int64_t B = x->shape[0], S = x->shape[1], half = p->rotary_dim / 2;
    MLRT_CHECK(p->rotary_dim >= 0 && p->rotary_dim % 2 == 0 && p->rotary_dim <= x->shape[3], "bad rotary_dim %lld",
               (long long)p->rotary_dim);
    MLRT_CHECK(!pos == !p->has_position_ids, "position_ids presence does not match");
    if (pos) {
        MLRT_CHECK(pos->dtype == MLRT_INT64 && pos->rank == 2 && pos->shape[0] == B && pos->shape[1] == S,
                   "position_ids must be an int64 [batch, seq] view");
        MLRT_CHECK(c->rank == 2 && sn->rank == 2 && c->shape[1] == half && sn->shape[1] == half &&
                       sn->shape[0] == c->shape[0],
                   "cos / sin caches must be [positions, rotary_dim / 2]");
    } else {
        MLRT_CHECK(c->rank == 3 && sn->rank == 3 && c->shape[0] == B && c->shape[1] == S && c->shape[2] == half &&
                       sn->shape[0] == B && sn->shape[1] == S && sn->shape[2] == half,
                   "cos / sin caches must be [batch, seq, rotary_dim / 2] views");
    }
    rotary_job job = {x, c, sn, pos, y, half, p->interleaved, pos ? c->shape[0] : 0,
                      x->dtype == MLRT_FLOAT16 ? 1 : x->dtype == MLRT_BFLOAT16 ? 2 : 0, 0};
    mlrt_parallel_for(ctx, B * S * x->shape[2], 8192 / (x->shape[3] + 1) + 1, rotary_rows, &job);
    if (job.bad)
        return mlrt_fail(MLRT_ERR_INVALID_ARGUMENT, "a position id is outside [0, %lld)", (long long)job.positions);
    return MLRT_OK;
}

MLRT_KERNEL(rotary, "RotaryEmbedding", "", 23, MLRT_OPSET_MAX, FLOAT_TYPES, k_rotary);

/* -- Swish and Shrink: one contiguous tensor in, same shape out -------------------------------------- */

typedef struct elem_job {
    const void *x;
    void *y;
    int32_t dtype;
    double a, b;  /* Swish: alpha; Shrink: lambd, bias */
} elem_job;

static void swish_range(void *arg, int64_t begin, int64_t end) {
    const elem_job *j = arg;
    if (j->dtype == MLRT_FLOAT) {
        const float *x = j->x;
        float *y = j->y, a = (float)j->a;
        for (int64_t i = begin; i < end; ++i) y[i] = x[i] * (1.0f / (1.0f + expf(-a * x[i])));
    } else if (j->dtype == MLRT_DOUBLE) {
        const double *x = j->x;
        double *y = j->y;
        for (int64_t i = begin; i < end; ++i) y[i] = x[i] * (1.0 / (1.0 + exp(-j->a * x[i])));
    } else {
        float a = (float)j->a;
        for (int64_t i = begin; i < end; ++i) {
            float v = (float)load(j->x, i, j->dtype);
            store(j->y, i, j->dtype, v * (1.0f / (1.0f + expf(-a * v))));
        }
    }
}

#define SHRINK_INT(T)                                                                              \
    {                                                                                              \
        const T *x = j->x;                                                                         \
        T *y = j->y;                                                                               \
        for (int64_t i = begin; i < end; ++i) {                                                    \
            double v = (double)x[i];                                                               \
            y[i] = v < -j->a ? (T)(int64_t)(v + j->b) : v > j->a ? (T)(int64_t)(v - j->b) : (T)0;  \
        }                                                                                          \
    }                                                                                              \
    break;

static void shrink_range(void *arg, int64_t begin, int64_t end) {
    const elem_job *j = arg;
    switch (j->dtype) {
    case MLRT_FLOAT: {
        const float *x = j->x;
        float *y = j->y, l = (float)j->a, b = (float)j->b;
        for (int64_t i = begin; i < end; ++i) y[i] = x[i] < -l ? x[i] + b : x[i] > l ? x[i] - b : 0.0f;
    } break;
    case MLRT_DOUBLE: {
        const double *x = j->x;
        double *y = j->y;
        for (int64_t i = begin; i < end; ++i) y[i] = x[i] < -j->a ? x[i] + j->b : x[i] > j->a ? x[i] - j->b : 0.0;
    } break;
    case MLRT_FLOAT16: case MLRT_BFLOAT16: {
        float l = (float)j->a, b = (float)j->b;
        for (int64_t i = begin; i < end; ++i) {
            float v = (float)load(j->x, i, j->dtype);
            store(j->y, i, j->dtype, v < -l ? v + b : v > l ? v - b : 0.0f);
        }
    } break;
    case MLRT_INT8: SHRINK_INT(int8_t)
    case MLRT_INT16: SHRINK_INT(int16_t)
    case MLRT_INT32: SHRINK_INT(int32_t)
    case MLRT_INT64: SHRINK_INT(int64_t)
    case MLRT_UINT8: SHRINK_INT(uint8_t)
    case MLRT_UINT16: SHRINK_INT(uint16_t)
    case MLRT_UINT32: SHRINK_INT(uint32_t)
    case MLRT_UINT64: SHRINK_INT(uint64_t)
    }
}

static int run_elem(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                    uint64_t types, mlrt_range_fn fn, double a, double b) {
    MLRT_CHECK(n_in == 1 && n_out == 1, "expects 1 input and 1 output");
    const mlrt_tensor *x = &in[0], *y = &out[0];
    if (x->dtype < 0 || x->dtype >= 64 || !((types >> x->dtype) & 1))
        return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "element type %d not supported", x->dtype);
    MLRT_CHECK(y->dtype == x->dtype && mlrt_same_shape(x, y), "output must match the input");
    MLRT_CHECK(mlrt_is_contiguous(x) && mlrt_is_contiguous(y), "needs contiguous tensors");
    elem_job job = {x->data, y->data, x->dtype, a, b};
    mlrt_parallel_for(ctx, mlrt_numel(y), 16384, fn, &job);
    return MLRT_OK;
}

static int k_swish(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                   const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_swish_params, p, params, params_size);
    return run_elem(ctx, in, n_in, out, n_out, FLOAT_TYPES, swish_range, p->alpha, 0.0);
}

#define SHRINK_TYPES (MLRT_MASK_NUMERIC | MLRT_BIT(MLRT_FLOAT16) | MLRT_BIT(MLRT_BFLOAT16))

static int k_shrink(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                    const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_shrink_params, p, params, params_size);
    return run_elem(ctx, in, n_in, out, n_out, SHRINK_TYPES, shrink_range, p->lambd, p->bias);
}

MLRT_KERNEL(swish, "Swish", "", 24, MLRT_OPSET_MAX, FLOAT_TYPES, k_swish);
MLRT_KERNEL(shrink, "Shrink", "", 9, MLRT_OPSET_MAX, SHRINK_TYPES, k_shrink);
