/* scatter.c -- ScatterElements (and the deprecated Scatter) and ScatterND.
 *
 * The output starts as a copy of data; updates are then applied in index order
 * (so with duplicate indices the last write wins, as in the reference), replacing
 * or combining (add, mul, max, min) with what is there.  Every index is checked
 * against its dimension before anything is written; negative ones count from the
 * end.  Combining is typed: floats (float16 and bfloat16 through float32, as numpy
 * and ml_dtypes do), ints with wrap-around, bool as or/and. */

#include "internal.h"
#include "scatter.h"

typedef void (*apply_fn)(char *dst, const char *src, int64_t n);

#define NANMAX(a, b) ((a) != (a) ? (a) : (b) != (b) ? (b) : (a) > (b) ? (a) : (b))
#define NANMIN(a, b) ((a) != (a) ? (a) : (b) != (b) ? (b) : (a) < (b) ? (a) : (b))

#define DEF_APPLY1(NAME, T, EXPR)                                       \
    static void NAME(char *d_, const char *s_, int64_t n) {             \
        T *d = (T *)d_;                                                 \
        const T *s = (const T *)s_;                                     \
        for (int64_t i = 0; i < n; ++i) {                               \
            T a = d[i], b = s[i];                                       \
            d[i] = EXPR;                                                \
        }                                                               \
    }
#define DEF_FLOAT(N, T)                                \
    DEF_APPLY1(N##_add, T, a + b)                      \
    DEF_APPLY1(N##_mul, T, a * b)                      \
    DEF_APPLY1(N##_max, T, NANMAX(a, b))               \
    DEF_APPLY1(N##_min, T, NANMIN(a, b))
#define DEF_INT(N, T, UW)                              \
    DEF_APPLY1(N##_add, T, (T)((UW)a + (UW)b))         \
    DEF_APPLY1(N##_mul, T, (T)((UW)a * (UW)b))         \
    DEF_APPLY1(N##_max, T, a > b ? a : b)              \
    DEF_APPLY1(N##_min, T, a < b ? a : b)

DEF_FLOAT(f32, float)
DEF_FLOAT(f64, double)
DEF_INT(i8, int8_t, uint32_t)
DEF_INT(i16, int16_t, uint32_t)
DEF_INT(i32, int32_t, uint32_t)
DEF_INT(i64, int64_t, uint64_t)
DEF_INT(u8, uint8_t, uint32_t)
DEF_INT(u16, uint16_t, uint32_t)
DEF_INT(u32, uint32_t, uint32_t)
DEF_INT(u64, uint64_t, uint64_t)
DEF_APPLY1(b8_or, uint8_t, (uint8_t)(a || b))
DEF_APPLY1(b8_and, uint8_t, (uint8_t)(a && b))
#define HF(x) mlrt_f16_to_f32(x)
DEF_APPLY1(f16_add, uint16_t, mlrt_f32_to_f16(HF(a) + HF(b)))
DEF_APPLY1(f16_mul, uint16_t, mlrt_f32_to_f16(HF(a) * HF(b)))
DEF_APPLY1(f16_max, uint16_t, mlrt_f32_to_f16(NANMAX(HF(a), HF(b))))
DEF_APPLY1(f16_min, uint16_t, mlrt_f32_to_f16(NANMIN(HF(a), HF(b))))
#define BF(x) mlrt_bf16_to_f32(x)
DEF_APPLY1(bf16_add, uint16_t, mlrt_f32_to_bf16(BF(a) + BF(b)))
DEF_APPLY1(bf16_mul, uint16_t, mlrt_f32_to_bf16(BF(a) * BF(b)))
DEF_APPLY1(bf16_max, uint16_t, mlrt_f32_to_bf16(NANMAX(BF(a), BF(b))))
DEF_APPLY1(bf16_min, uint16_t, mlrt_f32_to_bf16(NANMIN(BF(a), BF(b))))


#define PICK(N)                                                                        \
    return red == MLRT_SCATTER_ADD ? N##_add : red == MLRT_SCATTER_MUL ? N##_mul       \
         : red == MLRT_SCATTER_MAX ? N##_max : N##_min
static apply_fn pick_apply(int32_t dtype, int64_t red) {
    switch (dtype) {
    case MLRT_FLOAT: PICK(f32);
    case MLRT_DOUBLE: PICK(f64);
    case MLRT_FLOAT16: PICK(f16);
    case MLRT_BFLOAT16: PICK(bf16);
    case MLRT_INT8: PICK(i8);
    case MLRT_INT16: PICK(i16);
    case MLRT_INT32: PICK(i32);
    case MLRT_INT64: PICK(i64);
    case MLRT_UINT8: PICK(u8);
    case MLRT_UINT16: PICK(u16);
    case MLRT_UINT32: PICK(u32);
    case MLRT_UINT64: PICK(u64);
    case MLRT_BOOL: return red == MLRT_SCATTER_ADD || red == MLRT_SCATTER_MAX ? b8_or : b8_and;
    default: return NULL;
    }
}
#undef PICK

static inline int64_t index_at(const mlrt_tensor *t, int64_t k) {
    return t->dtype == MLRT_INT32 ? ((const int32_t *)t->data)[k] : ((const int64_t *)t->data)[k];
}

typedef struct copy_job { const char *src; char *dst; } copy_job;

static void copy_bytes(void *arg, int64_t begin, int64_t end) {
    const copy_job *j = arg;
    memcpy(j->dst + begin, j->src + begin, (size_t)(end - begin));
}

/* Checks shared by both kernels; picks the combining function (NULL: replace). */
static int start(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                 int64_t red, apply_fn *fn) {
    MLRT_CHECK(n_in >= 3 && n_out >= 1 && mlrt_present(&in[0]) && mlrt_present(&in[1]) && mlrt_present(&in[2]) &&
                   mlrt_present(&out[0]), "expects data, indices, updates and one output");
    const mlrt_tensor *x = &in[0], *ind = &in[1], *upd = &in[2];
    mlrt_tensor *y = &out[0];
    size_t es = mlrt_dtype_size(x->dtype);
    if (!es) return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "element type %d not supported", x->dtype);
    MLRT_CHECK(upd->dtype == x->dtype && y->dtype == x->dtype, "data, updates and output must have one type");
    MLRT_CHECK(mlrt_same_shape(x, y), "output must have the data's shape");
    MLRT_CHECK(ind->dtype == MLRT_INT32 || ind->dtype == MLRT_INT64, "indices must be int32 or int64");
    MLRT_CHECK(mlrt_is_contiguous(x) && mlrt_is_contiguous(y) && mlrt_is_contiguous(ind) && mlrt_is_contiguous(upd),
               "needs contiguous tensors");
    MLRT_CHECK(red >= MLRT_SCATTER_NONE && red <= MLRT_SCATTER_MIN, "unknown reduction %lld", (long long)red);
    *fn = NULL;
    if (red != MLRT_SCATTER_NONE && !(*fn = pick_apply(x->dtype, red)))
        return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "reduction on element type %d not supported", x->dtype);
    return MLRT_OK;
}

static void copy_data(const mlrt_context *ctx, const mlrt_tensor *x, mlrt_tensor *y) {
    int64_t bytes = mlrt_numel(x) * (int64_t)mlrt_dtype_size(x->dtype);
    if (bytes == 0 || x->data == y->data) return;
    copy_job job = {x->data, y->data};
    mlrt_parallel_for(ctx, bytes, 65536, copy_bytes, &job);
}

/* ---- ScatterElements ------------------------------------------------------------ */

static int k_scatter_elements(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                              int32_t n_out, const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_scatter_elements_params, p, params, params_size);
    apply_fn fn;
    int status = start(ctx, in, n_in, out, n_out, p->reduction, &fn);
    if (status) return status;
    const mlrt_tensor *x = &in[0], *ind = &in[1], *upd = &in[2];
    mlrt_tensor *y = &out[0];
    const int64_t es = (int64_t)mlrt_dtype_size(x->dtype), axis = p->axis;
    MLRT_CHECK(x->rank >= 1 && ind->rank == x->rank && mlrt_same_shape(ind, upd),
               "indices and updates must have one shape of the data's rank");
    MLRT_CHECK(axis >= 0 && axis < x->rank, "axis %lld is out of range for rank %d", (long long)axis, x->rank);
    int64_t stride[MLRT_MAX_RANK], acc = 1;
    for (int32_t d = x->rank - 1; d >= 0; --d) {
        MLRT_CHECK(d == axis || ind->shape[d] <= x->shape[d], "indices dimension %d (%lld) exceeds the data's (%lld)", d,
                   (long long)ind->shape[d], (long long)x->shape[d]);
        stride[d] = acc;
        acc *= x->shape[d];
    }
    const int64_t n = mlrt_numel(ind), dim = x->shape[axis];
    for (int64_t k = 0; k < n; ++k) {
        int64_t v = index_at(ind, k);
        MLRT_CHECK(v >= -dim && v < dim, "index %lld is out of range for axis %lld of size %lld", (long long)v,
                   (long long)axis, (long long)dim);
    }
    copy_data(ctx, x, y);
    int64_t idx[MLRT_MAX_RANK] = {0}, base = 0; /* base: offset of idx without the axis term */
    char *dst = y->data;
    const char *src = upd->data;
    for (int64_t k = 0; k < n; ++k) {
        int64_t v = index_at(ind, k);
        if (v < 0) v += dim;
        char *d = dst + (base + v * stride[axis]) * es;
        if (fn) fn(d, src + k * es, 1);
        else memcpy(d, src + k * es, (size_t)es);
        for (int32_t q = x->rank - 1; q >= 0; --q) { /* odometer over the indices' shape */
            if (q != axis) base += stride[q];
            if (++idx[q] < ind->shape[q]) break;
            if (q != axis) base -= idx[q] * stride[q];
            idx[q] = 0;
        }
    }
    return MLRT_OK;
}

MLRT_KERNEL(scatter_elements, "ScatterElements", "", 9, MLRT_OPSET_MAX, MLRT_MASK_ALL, k_scatter_elements);

/* ---- ScatterND --------------------------------------------------------------------- */

static int k_scatter_nd(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                        const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_scatter_nd_params, p, params, params_size);
    apply_fn fn;
    int status = start(ctx, in, n_in, out, n_out, p->reduction, &fn);
    if (status) return status;
    const mlrt_tensor *x = &in[0], *ind = &in[1], *upd = &in[2];
    mlrt_tensor *y = &out[0];
    const int64_t es = (int64_t)mlrt_dtype_size(x->dtype), q = ind->rank, r = x->rank;
    MLRT_CHECK(q >= 1 && r >= 1, "data and indices must have rank >= 1");
    const int64_t k = ind->shape[q - 1];
    MLRT_CHECK(k >= 1 && k <= r, "indices' last dimension %lld must be in [1, %lld]", (long long)k, (long long)r);
    /* updates: indices.shape[:-1] + data.shape[k:] */
    MLRT_CHECK(upd->rank == q - 1 + r - k, "updates have rank %d, expected %lld", upd->rank, (long long)(q - 1 + r - k));
    for (int32_t d = 0; d < upd->rank; ++d) {
        int64_t want = d < q - 1 ? ind->shape[d] : x->shape[k + d - (q - 1)];
        MLRT_CHECK(upd->shape[d] == want, "updates dimension %d is %lld, expected %lld", d, (long long)upd->shape[d],
                   (long long)want);
    }
    int64_t stride[MLRT_MAX_RANK], acc = 1;
    for (int32_t d = (int32_t)r - 1; d >= 0; --d) {
        stride[d] = acc;
        acc *= x->shape[d];
    }
    const int64_t slice = k < r ? stride[k - 1] : 1;
    const int64_t tuples = mlrt_numel(ind) / k;
    for (int64_t t = 0; t < tuples; ++t)
        for (int64_t i = 0; i < k; ++i) {
            int64_t v = index_at(ind, t * k + i);
            MLRT_CHECK(v >= -x->shape[i] && v < x->shape[i], "index %lld is out of range for axis %lld of size %lld",
                       (long long)v, (long long)i, (long long)x->shape[i]);
        }
    copy_data(ctx, x, y);
    char *dst = y->data;
    const char *src = upd->data;
    for (int64_t t = 0; t < tuples; ++t) {
        int64_t off = 0;
        for (int64_t i = 0; i < k; ++i) {
            int64_t v = index_at(ind, t * k + i);
            off += (v < 0 ? v + x->shape[i] : v) * stride[i];
        }
        if (fn) fn(dst + off * es, src + t * slice * es, slice);
        else memcpy(dst + off * es, src + t * slice * es, (size_t)(slice * es));
    }
    return MLRT_OK;
}

MLRT_KERNEL(scatter_nd, "ScatterND", "", 11, MLRT_OPSET_MAX, MLRT_MASK_ALL, k_scatter_nd);
