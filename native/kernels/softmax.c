/* softmax.c -- Softmax, LogSoftmax, Hardmax.
 *
 * The Python semantics hand every kernel a contiguous [outer, n, inner] block
 * (opsets < 13 coerce to 2-D, so there inner is 1); each line of n elements at
 * stride inner is normalised on its own:
 *   Softmax    y = exp(x - max) / sum(exp(x - max))
 *   LogSoftmax y = x - max - log(sum(exp(x - max)))
 *   Hardmax    y = 1 at the first maximum of the line, 0 elsewhere
 * Lines with inner == 1 are contiguous rows; otherwise a block of up to BLOCK
 * neighbouring lines is walked together so the loops run along contiguous memory.
 * float32 uses a vectorisable exp (about 1.5 ulp) in functions cloned per ISA. */
#include <math.h>

#include "internal.h"
#include "softmax.h"
#include "fastmath.h"

#define BLOCK 256

typedef enum { SM_SOFTMAX, SM_LOGSOFTMAX, SM_HARDMAX } sm_kind;

typedef struct sm_job {
    const void *x;
    void *y;
    int64_t n, inner, blocks;  /* blocks: of BLOCK lines per outer index (float32, inner > 1) */
    int32_t dtype;
    sm_kind kind;
} sm_job;

/* ---- float32 building blocks ------------------------------------------------------ */

/* max of a row; with a NaN in the row the result is unspecified, but the NaN still
 * poisons the sum that follows, so the whole line comes out NaN */
MLRT_HOT_FN(MAX_LOOP, float, max_row_f32, (const float *x, int64_t n), (x, n)) {
    float m = -INFINITY;
    for (int64_t i = 0; i < n; ++i) m = x[i] > m ? x[i] : m;
    return m;
}

/* y = exp(x - m) */
MLRT_HOT_FN(, void, exp_row_f32, (const float *x, float *y, int64_t n, float m), (x, y, n, m)) {
    for (int64_t i = 0; i < n; ++i) y[i] = mlrt_exp_f32(x[i] - m);
}

/* (the sum is its own loop: reassociating additions must not touch exp's rounding trick) */
MLRT_HOT_FN(SUM_LOOP, float, sum_row_f32, (const float *y, int64_t n), (y, n)) {
    float s = 0.0f;
    for (int64_t i = 0; i < n; ++i) s += y[i];
    return s;
}

MLRT_HOT_FN(, void, scale_row_f32, (float *y, int64_t n, float s), (y, n, s)) {
    for (int64_t i = 0; i < n; ++i) y[i] *= s;
}

/* y = (x - m) - l: x - m first, so the result keeps its precision where x is large */
MLRT_HOT_FN(, void, log_row_f32, (const float *x, float *y, int64_t n, float m, float l), (x, y, n, m, l)) {
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - m) - l;
}

/* lane-wise over w neighbouring lines: m = max(m, x) */
MLRT_HOT_FN(, void, max_lanes_f32, (const float *x, float *m, int64_t w), (x, m, w)) {
    for (int64_t i = 0; i < w; ++i) m[i] = x[i] > m[i] ? x[i] : m[i];
}

/* lane-wise: y = exp(x - m); s += y */
MLRT_HOT_FN(, void, exp_sum_lanes_f32, (const float *x, float *y, const float *m, float *s, int64_t w), (x, y, m, s, w)) {
    for (int64_t i = 0; i < w; ++i) {
        float e = mlrt_exp_f32(x[i] - m[i]);
        y[i] = e;
        s[i] += e;
    }
}

/* lane-wise: s += exp(x - m) */
MLRT_HOT_FN(, void, sum_exp_lanes_f32, (const float *x, const float *m, float *s, int64_t w), (x, m, s, w)) {
    for (int64_t i = 0; i < w; ++i) s[i] += mlrt_exp_f32(x[i] - m[i]);
}

MLRT_HOT_FN(, void, mul_lanes_f32, (float *y, const float *s, int64_t w), (y, s, w)) {
    for (int64_t i = 0; i < w; ++i) y[i] *= s[i];
}

MLRT_HOT_FN(, void, log_lanes_f32, (const float *x, float *y, const float *m, const float *l, int64_t w), (x, y, m, l, w)) {
    for (int64_t i = 0; i < w; ++i) y[i] = (x[i] - m[i]) - l[i];
}

/* ---- lines, per element type --------------------------------------------------------- */

static void rows_f32(const sm_job *j, int64_t begin, int64_t end) {
    const float *x = j->x;
    float *y = j->y;
    int64_t n = j->n;
    for (int64_t r = begin; r < end; ++r) {
        const float *xr = x + r * n;
        float *yr = y + r * n;
        float m = max_row_f32(xr, n);
        if (m == INFINITY) m = NAN;  /* inf - inf: the reference gives NaN for the whole line */
        exp_row_f32(xr, yr, n, m);
        float s = sum_row_f32(yr, n);
        if (j->kind == SM_SOFTMAX) scale_row_f32(yr, n, 1.0f / s);
        else log_row_f32(xr, yr, n, m, logf(s));
    }
}

static void blocks_f32(const sm_job *j, int64_t begin, int64_t end) {
    const float *x = j->x;
    float *y = j->y;
    int64_t n = j->n, inner = j->inner;
    float m[BLOCK], s[BLOCK];
    for (int64_t b = begin; b < end; ++b) {
        int64_t o = b / j->blocks, i0 = (b % j->blocks) * BLOCK;
        int64_t w = inner - i0 < BLOCK ? inner - i0 : BLOCK;
        const float *xb = x + o * n * inner + i0;
        float *yb = y + o * n * inner + i0;
        for (int64_t i = 0; i < w; ++i) { m[i] = -INFINITY; s[i] = 0.0f; }
        for (int64_t k = 0; k < n; ++k) max_lanes_f32(xb + k * inner, m, w);
        for (int64_t i = 0; i < w; ++i) if (m[i] == INFINITY) m[i] = NAN;
        if (j->kind == SM_SOFTMAX) {
            for (int64_t k = 0; k < n; ++k) exp_sum_lanes_f32(xb + k * inner, yb + k * inner, m, s, w);
            for (int64_t i = 0; i < w; ++i) s[i] = 1.0f / s[i];
            for (int64_t k = 0; k < n; ++k) mul_lanes_f32(yb + k * inner, s, w);
        } else {
            for (int64_t k = 0; k < n; ++k) sum_exp_lanes_f32(xb + k * inner, m, s, w);
            for (int64_t i = 0; i < w; ++i) s[i] = logf(s[i]);
            for (int64_t k = 0; k < n; ++k) log_lanes_f32(xb + k * inner, yb + k * inner, m, s, w);
        }
    }
}

/* float64: plain loops over libm's exp, one line at a time (any inner stride) */
static void lines_f64(const sm_job *j, int64_t begin, int64_t end) {
    const double *x = j->x;
    double *y = j->y;
    int64_t n = j->n, inner = j->inner;
    for (int64_t l = begin; l < end; ++l) {
        int64_t base = (l / inner) * n * inner + l % inner;
        const double *xl = x + base;
        double *yl = y + base;
        double m = -INFINITY, s = 0.0;
        for (int64_t k = 0; k < n; ++k) m = xl[k * inner] > m ? xl[k * inner] : m;
        if (m == INFINITY) m = NAN;
        for (int64_t k = 0; k < n; ++k) {
            double e = exp(xl[k * inner] - m);
            if (j->kind == SM_SOFTMAX) yl[k * inner] = e;
            s += e;
        }
        if (j->kind == SM_SOFTMAX) {
            double inv = 1.0 / s;
            for (int64_t k = 0; k < n; ++k) yl[k * inner] *= inv;
        } else {
            double l = log(s);
            for (int64_t k = 0; k < n; ++k) yl[k * inner] = (xl[k * inner] - m) - l;
        }
    }
}

/* Hardmax: the first maximum wins; a NaN counts as the maximum (as numpy's argmax) */
#define DEFINE_HARDMAX(T, NAME)                                                         \
    static void NAME(const sm_job *j, int64_t begin, int64_t end) {                     \
        const T *x = j->x;                                                              \
        T *y = j->y;                                                                    \
        int64_t n = j->n, inner = j->inner;                                             \
        for (int64_t l = begin; l < end; ++l) {                                         \
            int64_t base = (l / inner) * n * inner + l % inner, best = 0;               \
            const T *xl = x + base;                                                     \
            T *yl = y + base;                                                           \
            T bv = xl[0];                                                               \
            for (int64_t k = 1; k < n && bv == bv; ++k) {                               \
                T v = xl[k * inner];                                                    \
                if (v > bv || v != v) { bv = v; best = k; }                             \
            }                                                                           \
            for (int64_t k = 0; k < n; ++k) yl[k * inner] = (T)(k == best);             \
        }                                                                               \
    }
DEFINE_HARDMAX(float, hardmax_f32)
DEFINE_HARDMAX(double, hardmax_f64)

static void sm_range(void *arg, int64_t begin, int64_t end) {
    const sm_job *j = arg;
    if (j->kind == SM_HARDMAX) {
        if (j->dtype == MLRT_DOUBLE) hardmax_f64(j, begin, end);
        else hardmax_f32(j, begin, end);
    } else if (j->dtype == MLRT_DOUBLE) {
        lines_f64(j, begin, end);
    } else if (j->inner == 1) {
        rows_f32(j, begin, end);
    } else {
        blocks_f32(j, begin, end);
    }
}

static int run_softmax(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                       const void *params, size_t params_size, sm_kind kind) {
    MLRT_CHECK(n_in == 1 && n_out == 1, "expects 1 input and 1 output");
    MLRT_PARAMS(mlrt_softmax_params, p, params, params_size);
    const mlrt_tensor *x = &in[0];
    mlrt_tensor *y = &out[0];
    MLRT_CHECK(x->dtype == y->dtype && mlrt_same_shape(x, y), "output must match the input");
    MLRT_CHECK(mlrt_is_contiguous(x) && mlrt_is_contiguous(y), "needs contiguous tensors");
    int64_t numel = mlrt_numel(x);
    MLRT_CHECK(mlrt_block_covers(p->outer, p->n, p->inner, numel),
               "[outer %lld, n %lld, inner %lld] does not cover %lld elements",
               (long long)p->outer, (long long)p->n, (long long)p->inner, (long long)numel);
    if (numel == 0) return MLRT_OK;
    if (x->dtype != MLRT_FLOAT && x->dtype != MLRT_DOUBLE)
        return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "element type %d not supported", x->dtype);
    sm_job job = {x->data, y->data, p->n, p->inner, 0, x->dtype, kind};
    int64_t items = p->outer * p->inner, work = p->n;  /* lines, and elements per line */
    if (x->dtype == MLRT_FLOAT && kind != SM_HARDMAX) {
        if (p->inner == 1) {
            items = p->outer;
        } else {
            job.blocks = (p->inner + BLOCK - 1) / BLOCK;
            items = p->outer * job.blocks;
            work = p->n * (p->inner < BLOCK ? p->inner : BLOCK);
        }
    }
    /* chunks of >= 64k elements: waking a worker costs about as much as that much work */
    mlrt_parallel_for(ctx, items, 65536 / (work + 1) + 1, sm_range, &job);
    mlrt_note_path(MLRT_LOOP_PATH("softmax"));
    return MLRT_OK;
}

#define SOFTMAX_KERNEL(NAME, KIND)                                                                   \
    static int k_##NAME(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, \
                        int32_t n_out, const void *params, size_t params_size) {                     \
        return run_softmax(ctx, in, n_in, out, n_out, params, params_size, KIND);                    \
    }
SOFTMAX_KERNEL(softmax, SM_SOFTMAX)
SOFTMAX_KERNEL(logsoftmax, SM_LOGSOFTMAX)
SOFTMAX_KERNEL(hardmax, SM_HARDMAX)

MLRT_KERNEL(softmax, "Softmax", "", 1, MLRT_OPSET_MAX, MLRT_MASK_FLOATS, k_softmax);
MLRT_KERNEL(logsoftmax, "LogSoftmax", "", 1, MLRT_OPSET_MAX, MLRT_MASK_FLOATS, k_logsoftmax);
MLRT_KERNEL(hardmax, "Hardmax", "", 1, MLRT_OPSET_MAX, MLRT_MASK_FLOATS, k_hardmax);
