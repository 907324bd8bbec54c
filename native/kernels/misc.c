/* misc.c -- CumProd, BitCast, GlobalLpPool, MaxRoiPool, TensorScatter, SwiGLU.
 *
 * Small operators that share no machinery with a family of their own.  Axes, output
 * shapes and block extents are resolved in Python; every kernel checks the extents
 * it is handed against the tensors before touching memory. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "internal.h"
#include "misc.h"
#define float_type mlrt_is_real

#define store_f(b, t, i, v) mlrt_store_real((b), (i), (t), (v))
#define load_f(b, t, i) mlrt_load_as_double((b), (i), (t))

/* a * b * c == numel, without overflow (the extents come from outside) */
static bool covers(int64_t a, int64_t b, int64_t c, int64_t numel) {
    int64_t ab, all;
    if (a < 0 || b < 0 || c < 0) return false;
    if (__builtin_mul_overflow(a, b, &ab) || __builtin_mul_overflow(ab, c, &all)) return false;
    return all == numel;
}

/* -- CumProd ---------------------------------------------------------------------------
 * Products accumulate in the element type, rounded at every step as numpy does
 * (float16 / bfloat16 through float); integers wrap, through their unsigned type. */

#define BLOCK 256

typedef struct cumprod_job {
    const mlrt_cumprod_params *p;
    const void *x;
    void *y;
    int64_t blocks;
} cumprod_job;

#define DEFINE_CUMPROD(T, ACC, SUF, LOAD, STORE)                                               \
    static void cumprod_##SUF(void *arg, int64_t begin, int64_t end) {                         \
        const cumprod_job *j = arg;                                                            \
        const mlrt_cumprod_params *p = j->p;                                                   \
        ACC acc[BLOCK];                                                                        \
        for (int64_t b = begin; b < end; ++b) {                                                \
            int64_t o = b / j->blocks, i0 = (b % j->blocks) * BLOCK;                           \
            int64_t w = p->inner - i0 < BLOCK ? p->inner - i0 : BLOCK;                         \
            const T *x = (const T *)j->x + o * p->n * p->inner + i0;                           \
            T *y = (T *)j->y + o * p->n * p->inner + i0;                                       \
            for (int64_t i = 0; i < w; ++i) acc[i] = 1;                                        \
            for (int64_t t = 0; t < p->n; ++t) {                                               \
                int64_t k = p->reverse ? p->n - 1 - t : t;                                     \
                const T *xs = x + k * p->inner;                                                \
                T *ys = y + k * p->inner;                                                      \
                for (int64_t i = 0; i < w; ++i) {                                              \
                    ACC v = LOAD(xs[i]);                                                       \
                    if (p->exclusive) {                                                        \
                        ys[i] = STORE(acc[i]);                                                 \
                        acc[i] = LOAD(STORE(acc[i] * v));                                      \
                    } else {                                                                   \
                        acc[i] = LOAD(STORE(acc[i] * v));                                      \
                        ys[i] = STORE(acc[i]);                                                 \
                    }                                                                          \
                }                                                                              \
            }                                                                                  \
        }                                                                                      \
    }
#define SAME(v) (v)
DEFINE_CUMPROD(float, float, f32, SAME, SAME)
DEFINE_CUMPROD(double, double, f64, SAME, SAME)
DEFINE_CUMPROD(uint16_t, float, f16, mlrt_f16_to_f32, mlrt_f32_to_f16)
DEFINE_CUMPROD(uint16_t, float, bf16, mlrt_bf16_to_f32, mlrt_f32_to_bf16)
#define U32(v) ((uint32_t)(v))
#define I32(v) ((int32_t)(v))
#define U64(v) ((uint64_t)(v))
#define I64(v) ((int64_t)(v))
DEFINE_CUMPROD(int32_t, uint32_t, i32, U32, I32)
DEFINE_CUMPROD(int64_t, uint64_t, i64, U64, I64)
DEFINE_CUMPROD(uint32_t, uint32_t, u32, U32, U32)
DEFINE_CUMPROD(uint64_t, uint64_t, u64, U64, U64)

static mlrt_range_fn cumprod_fn(int32_t dtype) {
    switch (dtype) {
    case MLRT_FLOAT: return cumprod_f32;
    case MLRT_DOUBLE: return cumprod_f64;
    case MLRT_FLOAT16: return cumprod_f16;
    case MLRT_BFLOAT16: return cumprod_bf16;
    case MLRT_INT32: return cumprod_i32;
    case MLRT_INT64: return cumprod_i64;
    case MLRT_UINT32: return cumprod_u32;
    case MLRT_UINT64: return cumprod_u64;
    default: return NULL;
    }
}

/* inputs: x, axis (resolved into the params); output: y */
static int k_cumprod(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                     const void *params, size_t params_size) {
    MLRT_CHECK(n_in >= 1 && n_in <= 2 && n_out == 1, "expects 2 inputs and 1 output");
    MLRT_PARAMS(mlrt_cumprod_params, p, params, params_size);
    const mlrt_tensor *x = &in[0];
    mlrt_tensor *y = &out[0];
    MLRT_CHECK(x->dtype == y->dtype && mlrt_same_shape(x, y), "output must match the input");
    MLRT_CHECK(mlrt_is_contiguous(x) && mlrt_is_contiguous(y), "needs contiguous tensors");
    MLRT_CHECK(covers(p->outer, p->n, p->inner, mlrt_numel(x)), "[outer, n, inner] does not cover the input");
    mlrt_range_fn fn = cumprod_fn(x->dtype);
    if (!fn) return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "element type %d not supported", x->dtype);
    if (mlrt_numel(x) == 0) return MLRT_OK;
    cumprod_job job = {p, x->data, y->data, (p->inner + BLOCK - 1) / BLOCK};
    int64_t work = p->n * (p->inner < BLOCK ? p->inner : BLOCK);
    mlrt_parallel_for(ctx, p->outer * job.blocks, 32768 / (work + 1) + 1, fn, &job);
    return MLRT_OK;
}

/* -- BitCast: the bytes as they are, under another type of the same size ---------------- */

static int k_bitcast(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                     const void *params, size_t params_size) {
    MLRT_CHECK(n_in == 1 && n_out == 1, "expects 1 input and 1 output");
    const mlrt_tensor *x = &in[0];
    mlrt_tensor *y = &out[0];
    size_t size = mlrt_dtype_size(x->dtype);
    MLRT_CHECK(size > 0 && size == mlrt_dtype_size(y->dtype), "types %d and %d differ in size", x->dtype, y->dtype);
    MLRT_CHECK(mlrt_same_shape(x, y), "output must have the input's shape");
    MLRT_CHECK(mlrt_is_contiguous(x) && mlrt_is_contiguous(y), "needs contiguous tensors");
    int64_t n = mlrt_numel(x);
    if (n > 0 && x->data != y->data) memmove(y->data, x->data, (size_t)n * size);
    return MLRT_OK;
}

/* -- GlobalLpPool ------------------------------------------------------------------------ */

typedef struct lp_job {
    const mlrt_global_lp_pool_params *p;
    const void *x;
    void *y;
    int32_t dtype;
} lp_job;

static void lp_planes(void *arg, int64_t begin, int64_t end) {
    const lp_job *j = arg;
    int64_t size = j->p->size;
    double pw = j->p->p;
    for (int64_t c = begin; c < end; ++c) {
        double s = 0.0;
        if (pw == 2.0) {
            for (int64_t i = 0; i < size; ++i) {
                double v = load_f(j->x, j->dtype, c * size + i);
                s += v * v;
            }
            store_f(j->y, j->dtype, c, sqrt(s));
        } else {
            for (int64_t i = 0; i < size; ++i) s += pow(fabs(load_f(j->x, j->dtype, c * size + i)), pw);
            store_f(j->y, j->dtype, c, pw == 1.0 ? s : pow(s, 1.0 / pw));
        }
    }
}

/* inputs: X; output: Y */
static int k_global_lp_pool(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                            int32_t n_out, const void *params, size_t params_size) {
    MLRT_CHECK(n_in == 1 && n_out == 1, "expects 1 input and 1 output");
    MLRT_PARAMS(mlrt_global_lp_pool_params, p, params, params_size);
    const mlrt_tensor *x = &in[0];
    mlrt_tensor *y = &out[0];
    MLRT_CHECK(float_type(x->dtype) && x->dtype == y->dtype, "input and output must share a floating type");
    MLRT_CHECK(mlrt_is_contiguous(x) && mlrt_is_contiguous(y), "needs contiguous tensors");
    MLRT_CHECK(covers(p->planes, p->size, 1, mlrt_numel(x)) && p->planes == mlrt_numel(y),
               "[planes, size] does not cover the input");
    MLRT_CHECK(p->p > 0, "p must be positive");
    lp_job job = {p, x->data, y->data, x->dtype};
    mlrt_parallel_for(ctx, p->planes, 16384 / (p->size + 1) + 1, lp_planes, &job);
    return MLRT_OK;
}

/* -- MaxRoiPool --------------------------------------------------------------------------
 * Each region [batch, x1, y1, x2, y2] is scaled and rounded to pixels (ends inclusive),
 * split into pooled_h x pooled_w bins (floor / ceil edges, clipped to the image); a
 * bin's output is its maximum, 0 for an empty bin. */

typedef struct roi_job {
    const mlrt_max_roi_pool_params *p;
    const mlrt_tensor *x, *rois;
    mlrt_tensor *y;
} roi_job;

static void roi_planes(void *arg, int64_t begin, int64_t end) {
    const roi_job *j = arg;
    const mlrt_max_roi_pool_params *p = j->p;
    int32_t dt = j->x->dtype;
    int64_t C = j->x->shape[1], H = j->x->shape[2], W = j->x->shape[3];
    for (int64_t rc = begin; rc < end; ++rc) {
        int64_t r = rc / C, c = rc % C;
        int64_t b = (int64_t)load_f(j->rois->data, dt, r * 5);
        double sc = p->spatial_scale;
        int64_t x1 = (int64_t)round(load_f(j->rois->data, dt, r * 5 + 1) * sc);
        int64_t y1 = (int64_t)round(load_f(j->rois->data, dt, r * 5 + 2) * sc);
        int64_t x2 = (int64_t)round(load_f(j->rois->data, dt, r * 5 + 3) * sc);
        int64_t y2 = (int64_t)round(load_f(j->rois->data, dt, r * 5 + 4) * sc);
        int64_t rh = y2 - y1 + 1 > 1 ? y2 - y1 + 1 : 1, rw = x2 - x1 + 1 > 1 ? x2 - x1 + 1 : 1;
        double bh = (double)rh / (double)p->pooled_h, bw = (double)rw / (double)p->pooled_w;
        int64_t plane = (b * C + c) * H * W, o = rc * p->pooled_h * p->pooled_w;
        for (int64_t ph = 0; ph < p->pooled_h; ++ph) {
            int64_t hs = (int64_t)floor((double)ph * bh) + y1, he = (int64_t)ceil((double)(ph + 1) * bh) + y1;
            hs = hs < 0 ? 0 : hs > H ? H : hs;
            he = he < 0 ? 0 : he > H ? H : he;
            for (int64_t pw = 0; pw < p->pooled_w; ++pw) {
                int64_t ws = (int64_t)floor((double)pw * bw) + x1, we = (int64_t)ceil((double)(pw + 1) * bw) + x1;
                ws = ws < 0 ? 0 : ws > W ? W : ws;
                we = we < 0 ? 0 : we > W ? W : we;
                double m = 0.0;
                if (he > hs && we > ws) {
                    m = -INFINITY;
                    for (int64_t h = hs; h < he; ++h)
                        for (int64_t w = ws; w < we; ++w) {
                            double v = load_f(j->x->data, dt, plane + h * W + w);
                            if (v > m || v != v) m = v;
                            if (m != m) break;
                        }
                }
                store_f(j->y->data, dt, o + ph * p->pooled_w + pw, m);
            }
        }
    }
}

/* inputs: X, rois; output: Y */
static int k_max_roi_pool(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                          int32_t n_out, const void *params, size_t params_size) {
    MLRT_CHECK(n_in == 2 && n_out == 1, "expects 2 inputs and 1 output");
    MLRT_PARAMS(mlrt_max_roi_pool_params, p, params, params_size);
    const mlrt_tensor *x = &in[0], *rois = &in[1];
    mlrt_tensor *y = &out[0];
    MLRT_CHECK(float_type(x->dtype) && x->dtype == rois->dtype && x->dtype == y->dtype,
               "X, rois and Y must share a floating type");
    MLRT_CHECK(mlrt_is_contiguous(x) && mlrt_is_contiguous(rois) && mlrt_is_contiguous(y), "needs contiguous tensors");
    MLRT_CHECK(x->rank == 4 && rois->rank == 2 && rois->shape[1] == 5, "X must be [N, C, H, W] and rois [R, 5]");
    MLRT_CHECK(p->pooled_h >= 1 && p->pooled_w >= 1, "pooled_shape must be positive");
    MLRT_CHECK(y->rank == 4 && y->shape[0] == rois->shape[0] && y->shape[1] == x->shape[1] &&
               y->shape[2] == p->pooled_h && y->shape[3] == p->pooled_w, "Y must be [R, C, pooled_h, pooled_w]");
    for (int64_t r = 0; r < rois->shape[0]; ++r) {
        double b = load_f(rois->data, rois->dtype, r * 5);
        MLRT_CHECK(b >= 0 && b < (double)x->shape[0], "region %lld names batch %g; X has %lld", (long long)r, b,
                   (long long)x->shape[0]);
        for (int k = 1; k < 5; ++k) {
            double v = load_f(rois->data, rois->dtype, r * 5 + k) * p->spatial_scale;
            MLRT_CHECK(isfinite(v) && fabs(v) < 1e15, "region %lld has a coordinate out of range", (long long)r);
        }
    }
    roi_job job = {p, x, rois, y};
    int64_t work = x->shape[2] * x->shape[3] + p->pooled_h * p->pooled_w;
    mlrt_parallel_for(ctx, y->shape[0] * y->shape[1], 16384 / (work + 1) + 1, roi_planes, &job);
    return MLRT_OK;
}

/* -- TensorScatter ----------------------------------------------------------------------
 * present = past, then update's rows along the sequence axis are written from each
 * batch's write index on (wrapping around max_len in circular mode). */

/* inputs: past_cache, update, [write_indices]; output: present_cache */
static int k_tensor_scatter(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                            int32_t n_out, const void *params, size_t params_size) {
    MLRT_CHECK(n_in >= 2 && n_in <= 3 && n_out == 1, "expects 2 or 3 inputs and 1 output");
    MLRT_PARAMS(mlrt_tensor_scatter_params, p, params, params_size);
    const mlrt_tensor *past = &in[0], *upd = &in[1];
    const mlrt_tensor *wi = n_in > 2 && mlrt_present(&in[2]) ? &in[2] : NULL;
    mlrt_tensor *y = &out[0];
    size_t es = mlrt_dtype_size(past->dtype);
    MLRT_CHECK(es > 0 && upd->dtype == past->dtype && y->dtype == past->dtype && mlrt_same_shape(past, y),
               "update and present_cache must match past_cache's type (and present its shape)");
    MLRT_CHECK(mlrt_is_contiguous(past) && mlrt_is_contiguous(upd) && mlrt_is_contiguous(y), "needs contiguous tensors");
    MLRT_CHECK(covers(p->outer, p->max_len, p->inner, mlrt_numel(past)) &&
               covers(p->outer, p->seq_len, p->inner, mlrt_numel(upd)), "[outer, len, inner] does not cover the tensors");
    MLRT_CHECK(p->batch >= 0 && (p->batch == 0 ? p->outer == 0 : p->outer % p->batch == 0) && p->seq_len <= p->max_len,
               "bad batch or sequence extents");
    if (wi) {
        MLRT_CHECK(wi->dtype == MLRT_INT64 && mlrt_numel(wi) == p->batch && mlrt_is_contiguous(wi),
                   "write_indices must be an int64 tensor of batch_size (%lld) elements", (long long)p->batch);
        const int64_t *w = wi->data;
        for (int64_t b = 0; b < p->batch; ++b) {
            if (p->circular) continue;
            MLRT_CHECK(w[b] >= 0 && w[b] <= p->max_len - p->seq_len,
                       "write index %lld of batch %lld puts %lld rows past the cache's %lld (linear mode)",
                       (long long)w[b], (long long)b, (long long)p->seq_len, (long long)p->max_len);
        }
    }
    int64_t n = mlrt_numel(past);
    if (n > 0 && y->data != past->data) memmove(y->data, past->data, (size_t)n * es);
    if (p->outer == 0 || p->max_len == 0 || p->seq_len == 0 || p->inner == 0) return MLRT_OK;
    int64_t per_batch = p->outer / p->batch;
    size_t row = (size_t)p->inner * es;
    for (int64_t o = 0; o < p->outer; ++o) {
        int64_t start = wi ? ((const int64_t *)wi->data)[o / per_batch] : 0;
        for (int64_t s = 0; s < p->seq_len; ++s) {
            int64_t t = start + s;
            if (p->circular) t = ((t % p->max_len) + p->max_len) % p->max_len;
            memcpy((char *)y->data + ((size_t)(o * p->max_len + t)) * row,
                   (const char *)upd->data + ((size_t)(o * p->seq_len + s)) * row, row);
        }
    }
    return MLRT_OK;
}

/* -- SwiGLU --------------------------------------------------------------------------------
 * Y = A * sigmoid(alpha * A) * B, step by step in the element type as numpy does it:
 * float16 / bfloat16 round to their type after every operation (computed in float). */

typedef struct swiglu_job {
    const void *a, *b;
    void *y;
    int32_t dtype;
    double alpha;
} swiglu_job;

static inline float round_to(int32_t dt, float v) {
    return dt == MLRT_FLOAT16 ? mlrt_f16_to_f32(mlrt_f32_to_f16(v)) : dt == MLRT_BFLOAT16 ? mlrt_bf16_to_f32(mlrt_f32_to_bf16(v)) : v;
}

static void swiglu_range(void *arg, int64_t begin, int64_t end) {
    const swiglu_job *j = arg;
    if (j->dtype == MLRT_DOUBLE) {
        const double *a = j->a, *b = j->b;
        double *y = j->y;
        for (int64_t i = begin; i < end; ++i) y[i] = a[i] * (1.0 / (1.0 + exp(-j->alpha * a[i]))) * b[i];
        return;
    }
    int32_t dt = j->dtype;
    float na = round_to(dt, (float)-j->alpha);
    for (int64_t i = begin; i < end; ++i) {
        float a = (float)load_f(j->a, dt, i), b = (float)load_f(j->b, dt, i);
        float e = round_to(dt, expf(round_to(dt, na * a)));
        float s = round_to(dt, 1.0f / round_to(dt, 1.0f + e));
        store_f(j->y, dt, i, round_to(dt, round_to(dt, a * s) * b));
    }
}

/* inputs: A, B; output: Y */
static int k_swiglu(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                    const void *params, size_t params_size) {
    MLRT_CHECK(n_in == 2 && n_out == 1, "expects 2 inputs and 1 output");
    MLRT_PARAMS(mlrt_swiglu_params, p, params, params_size);
    const mlrt_tensor *a = &in[0], *b = &in[1];
    mlrt_tensor *y = &out[0];
    MLRT_CHECK(float_type(a->dtype) && b->dtype == a->dtype && y->dtype == a->dtype, "A, B and Y must share a float type");
    MLRT_CHECK(mlrt_same_shape(a, b) && mlrt_same_shape(a, y), "A, B and Y must have one shape");
    MLRT_CHECK(mlrt_is_contiguous(a) && mlrt_is_contiguous(b) && mlrt_is_contiguous(y), "needs contiguous tensors");
    swiglu_job job = {a->data, b->data, y->data, a->dtype, p->alpha};
    mlrt_parallel_for(ctx, mlrt_numel(y), 16384, swiglu_range, &job);
    return MLRT_OK;
}

#define MASK_FLOATS_ALL (MLRT_MASK_FLOATS | MLRT_BIT(MLRT_FLOAT16) | MLRT_BIT(MLRT_BFLOAT16))
#define MASK_CUMPROD                                                                              \
    (MASK_FLOATS_ALL | MLRT_BIT(MLRT_INT32) | MLRT_BIT(MLRT_INT64) | MLRT_BIT(MLRT_UINT32) |      \
     MLRT_BIT(MLRT_UINT64))
MLRT_KERNEL(cumprod, "CumProd", "", 26, MLRT_OPSET_MAX, MASK_CUMPROD, k_cumprod);
MLRT_KERNEL(bitcast, "BitCast", "", 26, MLRT_OPSET_MAX, MLRT_MASK_ALL, k_bitcast);
MLRT_KERNEL(global_lp_pool, "GlobalLpPool", "", 1, MLRT_OPSET_MAX, MASK_FLOATS_ALL, k_global_lp_pool);
MLRT_KERNEL(max_roi_pool, "MaxRoiPool", "", 1, MLRT_OPSET_MAX, MASK_FLOATS_ALL, k_max_roi_pool);
MLRT_KERNEL(tensor_scatter, "TensorScatter", "", 24, MLRT_OPSET_MAX, MLRT_MASK_ALL, k_tensor_scatter);
MLRT_KERNEL(swiglu, "SwiGLU", "", 28, MLRT_OPSET_MAX, MASK_FLOATS_ALL, k_swiglu);
