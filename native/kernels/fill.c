/* fill.c -- ConstantOfShape, EyeLike, OneHot, Range: outputs made from a few values.
 *
 * Fill values arrive as bit patterns of the output's element type (set by the
 * Python semantics), so filling is by element size and serves every type.  OneHot
 * reads its indices in their own type; Range computes in the input's type the way
 * numpy's arange does (the conformance oracle). */
#include <math.h>

#include "internal.h"
#include "fill.h"

#define SMALL_BYTES ((int64_t)64 * 1024)

typedef struct fill_job {
    char *dst;
    int64_t pattern;
    size_t es;
} fill_job;

static void fill_range(void *arg, int64_t begin, int64_t end) {
    const fill_job *j = arg;
    int64_t n = end - begin;
    char *dst = j->dst + begin * (int64_t)j->es;
#define FILL(T) { T v; memcpy(&v, &j->pattern, sizeof v); T *d = (T *)dst; for (int64_t i = 0; i < n; ++i) d[i] = v; } break
    switch (j->es) {
    case 1: memset(dst, (int)(j->pattern & 0xff), (size_t)n); break;
    case 2: FILL(uint16_t);
    case 4: FILL(uint32_t);
    case 8: FILL(uint64_t);
    }
#undef FILL
}

/* Fill all of t with the pattern, on the pool. */
static int fill_tensor(const mlrt_context *ctx, mlrt_tensor *t, int64_t pattern) {
    size_t es = mlrt_dtype_size(t->dtype);
    if (!es) return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "element type %d not supported", t->dtype);
    MLRT_CHECK(mlrt_is_contiguous(t), "output must be contiguous");
    fill_job job = {t->data, pattern, es};
    mlrt_parallel_for(ctx, mlrt_numel(t), SMALL_BYTES / (int64_t)es, fill_range, &job);
    return MLRT_OK;
}

static void put_elem(char *dst, int64_t i, const void *pattern, size_t es) { memcpy(dst + i * (int64_t)es, pattern, es); }

/* ---- ConstantOfShape ---------------------------------------------------------- */

static int k_constant_of_shape(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                               int32_t n_out, const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_constant_of_shape_params, p, params, params_size);
    MLRT_CHECK(n_out >= 1 && mlrt_present(&out[0]), "expects one output");
    return fill_tensor(ctx, &out[0], p->value_bits);
}

MLRT_KERNEL(constant_of_shape, "ConstantOfShape", "", 9, MLRT_OPSET_MAX, MLRT_BIT(MLRT_INT64), k_constant_of_shape);

/* ---- EyeLike -------------------------------------------------------------------- */

static int k_eye_like(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                      const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_eye_like_params, p, params, params_size);
    MLRT_CHECK(n_out >= 1 && mlrt_present(&out[0]) && out[0].rank == 2, "expects one 2-D output");
    mlrt_tensor *y = &out[0];
    int status = fill_tensor(ctx, y, 0);
    if (status) return status;
    size_t es = mlrt_dtype_size(y->dtype);
    int64_t rows = y->shape[0], cols = y->shape[1];
    if (p->k <= -rows || p->k >= cols) return MLRT_OK; /* the diagonal misses the matrix */
    for (int64_t i = p->k < 0 ? -p->k : 0; i < rows && i + p->k < cols; ++i)
        put_elem(y->data, i * cols + i + p->k, &p->one_bits, es);
    return MLRT_OK;
}

MLRT_KERNEL(eye_like, "EyeLike", "", 9, MLRT_OPSET_MAX, MLRT_MASK_ALL, k_eye_like);

/* ---- OneHot --------------------------------------------------------------------- */

/* Index k of t as an integer; false if it is not a whole number or does not fit. */
static bool read_index(const mlrt_tensor *t, int64_t k, int64_t *out) {
    double f;
    switch (t->dtype) {
    case MLRT_INT8: *out = ((const int8_t *)t->data)[k]; return true;
    case MLRT_INT16: *out = ((const int16_t *)t->data)[k]; return true;
    case MLRT_INT32: *out = ((const int32_t *)t->data)[k]; return true;
    case MLRT_INT64: *out = ((const int64_t *)t->data)[k]; return true;
    case MLRT_UINT8: *out = ((const uint8_t *)t->data)[k]; return true;
    case MLRT_UINT16: *out = ((const uint16_t *)t->data)[k]; return true;
    case MLRT_UINT32: *out = ((const uint32_t *)t->data)[k]; return true;
    case MLRT_UINT64: {
        uint64_t u = ((const uint64_t *)t->data)[k];
        *out = (int64_t)u;
        return u <= (uint64_t)INT64_MAX;
    }
    case MLRT_FLOAT: f = ((const float *)t->data)[k]; break;
    case MLRT_DOUBLE: f = ((const double *)t->data)[k]; break;
    case MLRT_FLOAT16: f = mlrt_f16_to_f32(((const uint16_t *)t->data)[k]); break;
    default: return false;
    }
    if (!(f == floor(f)) || f < -9.2e18 || f > 9.2e18) return false;
    *out = (int64_t)f;
    return true;
}

static int k_one_hot(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                     const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_one_hot_params, p, params, params_size);
    MLRT_CHECK(n_in >= 3 && n_out >= 1 && mlrt_present(&in[0]) && mlrt_present(&in[2]) && mlrt_present(&out[0]),
               "expects indices, depth, values and one output");
    const mlrt_tensor *ind = &in[0], *values = &in[2];
    mlrt_tensor *y = &out[0];
    size_t es = mlrt_dtype_size(y->dtype);
    if (!es) return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "element type %d not supported", y->dtype);
    MLRT_CHECK(values->dtype == y->dtype && mlrt_numel(values) == 2 && mlrt_is_contiguous(values),
               "values must be [off_value, on_value] of the output's type");
    MLRT_CHECK(mlrt_is_contiguous(ind), "indices must be contiguous");
    MLRT_CHECK(y->rank == ind->rank + 1 && p->axis >= 0 && p->axis < y->rank && y->shape[p->axis] == p->depth,
               "output shape does not match the indices, axis and depth");
    for (int32_t d = 0, s = 0; d < y->rank; ++d)
        if (d != p->axis) MLRT_CHECK(y->shape[d] == ind->shape[s++], "output shape does not match the indices");
    int64_t off = 0, on = 0;
    memcpy(&off, values->data, es);
    memcpy(&on, (const char *)values->data + es, es);
    int status = fill_tensor(ctx, y, off);
    if (status) return status;
    int64_t inner = 1;
    for (int32_t d = (int32_t)p->axis; d < ind->rank; ++d) inner *= ind->shape[d];
    int64_t n = mlrt_numel(ind);
    for (int64_t k = 0; k < n; ++k) {
        int64_t idx;
        if (!read_index(ind, k, &idx)) continue;
        if (idx < 0) idx += p->depth;
        if (idx < 0 || idx >= p->depth) continue; /* out of range: all off, as the spec says */
        int64_t o = k / inner, i = k % inner;
        put_elem(y->data, (o * p->depth + idx) * inner + i, &on, es);
    }
    return MLRT_OK;
}

MLRT_KERNEL(one_hot, "OneHot", "", 9, MLRT_OPSET_MAX, MLRT_MASK_NUMERIC | MLRT_BIT(MLRT_FLOAT16), k_one_hot);

/* ---- Range ---------------------------------------------------------------------- */

static double read_scalar(const mlrt_tensor *t) {
    switch (t->dtype) {
    case MLRT_FLOAT: return *(const float *)t->data;
    case MLRT_DOUBLE: return *(const double *)t->data;
    case MLRT_FLOAT16: return mlrt_f16_to_f32(*(const uint16_t *)t->data);
    case MLRT_BFLOAT16: return mlrt_bf16_to_f32(*(const uint16_t *)t->data);
    default: return 0.0;
    }
}

static int64_t read_int(const mlrt_tensor *t) {
    switch (t->dtype) {
    case MLRT_INT16: return *(const int16_t *)t->data;
    case MLRT_INT32: return *(const int32_t *)t->data;
    case MLRT_INT64: return *(const int64_t *)t->data;
    default: return 0;
    }
}

static int k_range(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                   const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_range_params, p, params, params_size);
    MLRT_CHECK(n_in >= 2 && n_in <= 3 && n_out >= 1 && mlrt_present(&out[0]),
               "expects start, limit, delta and one output");
    mlrt_tensor *y = &out[0];
    /* delta is optional (com.microsoft Range): absent, it is 1 of the output's type */
    const bool has_delta = n_in == 3 && mlrt_present(&in[2]);
    for (int32_t i = 0; i < (has_delta ? 3 : 2); ++i)
        MLRT_CHECK(mlrt_present(&in[i]) && in[i].dtype == y->dtype && mlrt_numel(&in[i]) == 1,
                   "input %d must be one element of the output's type", i);
    MLRT_CHECK(y->rank == 1, "output must be 1-D");
    int64_t n = y->shape[0];
    switch (y->dtype) {
    case MLRT_INT16: case MLRT_INT32: case MLRT_INT64: {
        int64_t s = read_int(&in[0]), d = has_delta ? read_int(&in[2]) : 1;
        for (int64_t i = 0; i < n; ++i) {
            int64_t v = (int64_t)((uint64_t)s + (uint64_t)i * (uint64_t)d);
            if (y->dtype == MLRT_INT16) ((int16_t *)y->data)[i] = (int16_t)v;
            else if (y->dtype == MLRT_INT32) ((int32_t *)y->data)[i] = (int32_t)v;
            else ((int64_t *)y->data)[i] = v;
        }
        return MLRT_OK;
    }
    case MLRT_FLOAT: case MLRT_DOUBLE: case MLRT_FLOAT16: case MLRT_BFLOAT16: break;
    default: return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "element type %d not supported", y->dtype);
    }
    double s = read_scalar(&in[0]), d = has_delta ? read_scalar(&in[2]) : 1.0;
    const bool low = y->dtype == MLRT_FLOAT16 || y->dtype == MLRT_BFLOAT16;
    uint16_t *y16 = y->data;
    if (low && p->low_in_float) {
        /* numpy's float32 arange: the second value rounded, then start + i * step in float */
        float fs = (float)s, step = (float)(s + d) - fs;
        for (int64_t i = 0; i < n; ++i) {
            float v = i == 0 ? fs : i == 1 ? (float)(s + d) : fs + (float)i * step;
            y16[i] = y->dtype == MLRT_FLOAT16 ? mlrt_f32_to_f16(v) : mlrt_f32_to_bf16(v);
        }
        return MLRT_OK;
    }
    /* numpy's float64 arange, cast to the output type (bfloat16 through float, as ml_dtypes does) */
    double step = (s + d) - s;
    for (int64_t i = 0; i < n; ++i) {
        double v = i == 0 ? s : i == 1 ? s + d : s + (double)i * step;
        if (y->dtype == MLRT_FLOAT) ((float *)y->data)[i] = (float)v;
        else if (y->dtype == MLRT_DOUBLE) ((double *)y->data)[i] = v;
        else if (y->dtype == MLRT_FLOAT16) y16[i] = mlrt_f64_to_f16(v);
        else y16[i] = mlrt_f32_to_bf16((float)v);
    }
    return MLRT_OK;
}

MLRT_KERNEL(range, "Range", "", 11, MLRT_OPSET_MAX,
            MLRT_MASK_FLOATS | MLRT_BIT(MLRT_FLOAT16) | MLRT_BIT(MLRT_BFLOAT16) | MLRT_BIT(MLRT_INT16) |
                MLRT_BIT(MLRT_INT32) | MLRT_BIT(MLRT_INT64),
            k_range);
MLRT_KERNEL(ms_range, "Range", "com.microsoft", 1, MLRT_OPSET_MAX,
            MLRT_MASK_FLOATS | MLRT_BIT(MLRT_INT16) | MLRT_BIT(MLRT_INT32) | MLRT_BIT(MLRT_INT64), k_range);
