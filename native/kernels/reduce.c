/* reduce.c -- ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2,
 * ReduceLogSum, ReduceLogSumExp, ReduceSumSquare; ArgMax, ArgMin.
 *
 * Reduce*: the Python semantics resolve the axes and hand the input over as a view
 * whose first n_kept dims are kept (their product is the output size, written
 * contiguously) and whose other dims are reduced.  Adjacent dims of one kind are
 * merged there, so for a contiguous input exactly one dim has stride 1:
 *   - the last reduced dim: each output element reduces contiguous lines ("elements");
 *   - the last kept dim: a block of neighbouring outputs is updated together from
 *     each reduced position, along contiguous memory ("columns").
 * Sums and products accumulate in double for floats and in uint64 for integers
 * (wrapping like the integer type); max/min propagate NaN.  An empty reduction
 * gives the identity: 0, 1, -inf/+inf (type min/max for integers, false/true for
 * bool), and through the final step log(0) = -inf, 0/0 = NaN for a float mean.
 *
 * ArgMax/ArgMin: a contiguous [outer, n, inner] input; the first (or, with
 * select_last_index, the last) extreme wins and a NaN counts as the extreme. */
#include <math.h>

#include "internal.h"
#include "reduce.h"

#define BLOCK 256

typedef enum { R_SUM, R_MEAN, R_MAX, R_MIN, R_PROD, R_L1, R_L2, R_LOGSUM, R_LOGSUMEXP, R_SUMSQ } rop;

typedef struct red_job {
    const void *x;
    void *y;
    rop op;
    int32_t n_kept, n_red;                          /* kept / reduced dims of the view */
    int64_t kshape[MLRT_MAX_RANK], kstride[MLRT_MAX_RANK];
    int64_t rshape[MLRT_MAX_RANK], rstride[MLRT_MAX_RANK];
    int64_t count;                                  /* elements reduced into each output */
    int64_t col_len, col_blocks;                    /* columns: the last kept dim (stride 1), in blocks */
} red_job;

/* offset of kept index `e` (row-major over the first `rank` kept dims) */
static inline int64_t kept_offset(const red_job *j, int32_t rank, int64_t e) {
    int64_t off = 0;
    for (int32_t d = rank - 1; d >= 0; --d) {
        off += (e % j->kshape[d]) * j->kstride[d];
        e /= j->kshape[d];
    }
    return off;
}

/* advance an odometer over shape[0..rank), keeping the element offset in step */
static inline void odometer_next(int64_t *idx, int64_t *off, const int64_t *shape, const int64_t *stride,
                                 int32_t rank) {
    for (int32_t d = rank - 1; d >= 0; --d) {
        *off += stride[d];
        if (++idx[d] < shape[d]) return;
        *off -= stride[d] * shape[d];
        idx[d] = 0;
    }
}

/* Per element kind: accumulator type and the steps that differ.
 * F: float types (double accumulator), S: signed ints, U: unsigned ints (uint64
 * accumulators, wrapping), B: bool (as uint8). */
#define ABS_F(v) fabs((double)(v))
#define ABS_S(v) ((v) < 0 ? (uint64_t)0 - (uint64_t)(v) : (uint64_t)(v))
#define ABS_U(v) ((uint64_t)(v))
#define ISNAN_F(v) ((v) != (v))
#define ISNAN_S(v) 0
#define ISNAN_U(v) 0
#define TODBL_F(a) (a)
#define TODBL_S(a) ((double)(int64_t)(a))
#define TODBL_U(a) ((double)(a))
#define MEAN_F(a, n) ((a) / (double)(n))
#define MEAN_S(a, n) ((n) ? (uint64_t)((int64_t)(a) / (n)) : 0)
#define MEAN_U(a, n) ((n) ? (a) / (uint64_t)(n) : 0)

/* The largest (up) or smallest of float p[0 .. n) and *m into *m, a vector at a time
 * (vmaxps / vminps keep *m's side when v is NaN, so NaN is noted apart); returns how far
 * it got: 0 where a NaN was seen (the caller's scalar loop then finds it, and what it
 * returns), else n rounded down to the vector. */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

__attribute__((target("avx512f"))) static int64_t extreme_f32_avx512(const float *p, int64_t n, float *m, bool up) {
    __m512 a = _mm512_set1_ps(*m), b = a;
    __mmask16 nan = 0;
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m512 u = _mm512_loadu_ps(p + i), v = _mm512_loadu_ps(p + i + 16);
        nan |= _mm512_cmp_ps_mask(u, v, _CMP_UNORD_Q);
        a = up ? _mm512_max_ps(u, a) : _mm512_min_ps(u, a);
        b = up ? _mm512_max_ps(v, b) : _mm512_min_ps(v, b);
    }
    if (nan) return 0;
    a = up ? _mm512_max_ps(a, b) : _mm512_min_ps(a, b);
    *m = up ? _mm512_reduce_max_ps(a) : _mm512_reduce_min_ps(a);
    return i;
}

__attribute__((target("avx2"))) static int64_t extreme_f32_avx2(const float *p, int64_t n, float *m, bool up) {
    __m256 a = _mm256_set1_ps(*m), b = a, nan = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256 u = _mm256_loadu_ps(p + i), v = _mm256_loadu_ps(p + i + 8);
        nan = _mm256_or_ps(nan, _mm256_cmp_ps(u, v, _CMP_UNORD_Q));
        a = up ? _mm256_max_ps(u, a) : _mm256_min_ps(u, a);
        b = up ? _mm256_max_ps(v, b) : _mm256_min_ps(v, b);
    }
    if (_mm256_movemask_ps(nan)) return 0;
    float lanes[16];
    _mm256_storeu_ps(lanes, a), _mm256_storeu_ps(lanes + 8, b);
    for (int k = 0; k < 16; ++k) *m = up ? (lanes[k] > *m ? lanes[k] : *m) : (lanes[k] < *m ? lanes[k] : *m);
    return i;
}
#endif

static int64_t extreme_f32(const float *p, int64_t n, float *m, bool up) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (mlrt_cpu_isa() == MLRT_ISA_AVX512) return extreme_f32_avx512(p, n, m, up);
    if (MLRT_X86_HAS(MLRT_ISA_AVX2, AVX2)) return extreme_f32_avx2(p, n, m, up);
#endif
    return 0;
}

static int64_t extreme_none(const void *p, int64_t n, void *m, bool up) { return 0; }

#define EXTREME(p, n, m, up) _Generic((p), const float *: extreme_f32, default: extreme_none)(p, n, m, up)

#define DEFINE_REDUCE(T, SUF, ACC, K, LO, HI)                                                           \
    static void line_##SUF(rop op, const T *p, int64_t n, int64_t s, ACC *acc, T *m, int pass) {        \
        ACC a = *acc;                                                                                   \
        T mm = *m;                                                                                      \
        if (pass == 1) { /* log-sum-exp, second pass */                                                 \
            double c = (double)mm, t = 0.0;                                                             \
            for (int64_t i = 0; i < n; ++i) t += exp((double)p[i * s] - c);                              \
            *acc += (ACC)t;                                                                             \
            return;                                                                                     \
        }                                                                                               \
        switch (op) {                                                                                   \
        case R_SUM: case R_MEAN: case R_LOGSUM:                                                         \
            if (s == 1) {                                                                               \
                ACC part[8] = {0};                                                                      \
                int64_t i = 0;                                                                          \
                for (; i + 8 <= n; i += 8)                                                              \
                    for (int k = 0; k < 8; ++k) part[k] += (ACC)p[i + k];                               \
                for (; i < n; ++i) a += (ACC)p[i];                                                      \
                for (int k = 0; k < 8; ++k) a += part[k];                                               \
            } else {                                                                                    \
                for (int64_t i = 0; i < n; ++i) a += (ACC)p[i * s];                                     \
            }                                                                                           \
            break;                                                                                      \
        case R_SUMSQ: case R_L2:                                                                        \
            if (s == 1) {                                                                               \
                ACC part[8] = {0};                                                                      \
                int64_t i = 0;                                                                          \
                for (; i + 8 <= n; i += 8)                                                              \
                    for (int k = 0; k < 8; ++k) part[k] += (ACC)p[i + k] * (ACC)p[i + k];               \
                for (; i < n; ++i) a += (ACC)p[i] * (ACC)p[i];                                          \
                for (int k = 0; k < 8; ++k) a += part[k];                                               \
            } else {                                                                                    \
                for (int64_t i = 0; i < n; ++i) a += (ACC)p[i * s] * (ACC)p[i * s];                     \
            }                                                                                           \
            break;                                                                                      \
        case R_L1: for (int64_t i = 0; i < n; ++i) a += ABS_##K(p[i * s]); break;                       \
        case R_PROD: for (int64_t i = 0; i < n; ++i) a *= (ACC)p[i * s]; break;                         \
        case R_MAX: case R_LOGSUMEXP: case R_MIN: {                                                     \
            bool up = op != R_MIN;                                                                      \
            int64_t i = s == 1 ? EXTREME(p, n, &mm, up) : 0;                                      \
            for (; i < n; ++i) {                                                                        \
                T v = p[i * s];                                                                         \
                if ((up ? v > mm : v < mm) || ISNAN_##K(v)) mm = v;                                     \
            }                                                                                           \
            break;                                                                                      \
        }                                                                                               \
        }                                                                                               \
        *acc = a;                                                                                       \
        *m = mm;                                                                                        \
    }                                                                                                   \
                                                                                                        \
    /* lane-wise: w neighbouring outputs from one reduced position */                                   \
    static void lanes_##SUF(rop op, const T *p, int64_t w, ACC *acc, T *m, int pass) {       \
        if (pass == 1) {                                                                                \
            for (int64_t i = 0; i < w; ++i) acc[i] += (ACC)exp((double)p[i] - (double)m[i]);        \
            return;                                                                                     \
        }                                                                                               \
        switch (op) {                                                                                   \
        case R_SUM: case R_MEAN: case R_LOGSUM:                                                         \
            for (int64_t i = 0; i < w; ++i) acc[i] += (ACC)p[i];                                    \
            break;                                                                                      \
        case R_SUMSQ: case R_L2:                                                                        \
            for (int64_t i = 0; i < w; ++i) acc[i] += (ACC)p[i] * (ACC)p[i];                    \
            break;                                                                                      \
        case R_L1: for (int64_t i = 0; i < w; ++i) acc[i] += ABS_##K(p[i]); break;                  \
        case R_PROD: for (int64_t i = 0; i < w; ++i) acc[i] *= (ACC)p[i]; break;                    \
        case R_MAX: case R_LOGSUMEXP:                                                                   \
            for (int64_t i = 0; i < w; ++i) { T v = p[i]; m[i] = (v > m[i] || ISNAN_##K(v)) ? v : m[i]; } \
            break;                                                                                      \
        case R_MIN:                                                                                     \
            for (int64_t i = 0; i < w; ++i) { T v = p[i]; m[i] = (v < m[i] || ISNAN_##K(v)) ? v : m[i]; } \
            break;                                                                                      \
        }                                                                                               \
    }                                                                                                   \
                                                                                                        \
    static T finish_##SUF(rop op, ACC a, T m, int64_t count) {                                          \
        switch (op) {                                                                                   \
        case R_MEAN: return (T)MEAN_##K(a, count);                                                      \
        case R_L2: return (T)sqrt(TODBL_##K(a));                                                        \
        case R_LOGSUM: return (T)log(TODBL_##K(a));                                                     \
        case R_MAX: case R_MIN: return m;                                                               \
        case R_LOGSUMEXP: return isfinite((double)m) ? (T)((double)m + log(TODBL_##K(a))) : m;          \
        default: return (T)a;                                                                           \
        }                                                                                               \
    }                                                                                                   \
                                                                                                        \
    static void elements_##SUF(void *arg, int64_t begin, int64_t end) {                                 \
        const red_job *j = arg;                                                                         \
        const T *x = j->x;                                                                              \
        T *y = j->y;                                                                                    \
        int32_t rr = j->n_red - 1; /* reduced dims walked as rows; the last one is the line */         \
        int64_t len = j->rshape[rr], s = j->rstride[rr], rows = 1;                                      \
        for (int32_t d = 0; d < rr; ++d) rows *= j->rshape[d];                                          \
        if (len == 0) rows = 0;                                                                         \
        int passes = j->op == R_LOGSUMEXP ? 2 : 1;                                                      \
        for (int64_t e = begin; e < end; ++e) {                                                         \
            const T *base = x + kept_offset(j, j->n_kept, e);                                           \
            ACC a = j->op == R_PROD ? (ACC)1 : (ACC)0;                                                  \
            T m = j->op == R_MIN ? HI : LO;                                                             \
            for (int pass = 0; pass < passes; ++pass) {                                                 \
                if (pass == 1 && !isfinite((double)m)) break;                                           \
                int64_t idx[MLRT_MAX_RANK] = {0}, off = 0;                                              \
                for (int64_t r = 0; r < rows; ++r) {                                                    \
                    line_##SUF(j->op, base + off, len, s, &a, &m, pass);                                \
                    odometer_next(idx, &off, j->rshape, j->rstride, rr);                                \
                }                                                                                       \
            }                                                                                           \
            y[e] = finish_##SUF(j->op, a, m, j->count);                                                 \
        }                                                                                               \
    }                                                                                                   \
                                                                                                        \
    static void columns_##SUF(void *arg, int64_t begin, int64_t end) {                                  \
        const red_job *j = arg;                                                                         \
        const T *x = j->x;                                                                              \
        T *y = j->y;                                                                                    \
        ACC acc[BLOCK];                                                                                 \
        T m[BLOCK];                                                                                     \
        int passes = j->op == R_LOGSUMEXP ? 2 : 1;                                                      \
        for (int64_t b = begin; b < end; ++b) {                                                         \
            int64_t row = b / j->col_blocks, c0 = (b % j->col_blocks) * BLOCK;                          \
            int64_t w = j->col_len - c0 < BLOCK ? j->col_len - c0 : BLOCK;                              \
            const T *base = x + kept_offset(j, j->n_kept - 1, row) + c0;                                \
            for (int64_t i = 0; i < w; ++i) {                                                           \
                acc[i] = j->op == R_PROD ? (ACC)1 : (ACC)0;                                             \
                m[i] = j->op == R_MIN ? HI : LO;                                                        \
            }                                                                                           \
            for (int pass = 0; pass < passes; ++pass) {                                                 \
                int64_t idx[MLRT_MAX_RANK] = {0}, off = 0;                                              \
                for (int64_t r = 0; r < j->count; ++r) {                                                \
                    lanes_##SUF(j->op, base + off, w, acc, m, pass);                                    \
                    odometer_next(idx, &off, j->rshape, j->rstride, j->n_red);                          \
                }                                                                                       \
            }   /* a lane whose max is not finite gets NaN sums here, which finish ignores */           \
            T *yb = y + row * j->col_len + c0;                                                          \
            for (int64_t i = 0; i < w; ++i) yb[i] = finish_##SUF(j->op, acc[i], m[i], j->count);        \
        }                                                                                               \
    }

DEFINE_REDUCE(float, f32, double, F, -INFINITY, INFINITY)
DEFINE_REDUCE(double, f64, double, F, -INFINITY, INFINITY)
DEFINE_REDUCE(int8_t, i8, uint64_t, S, INT8_MIN, INT8_MAX)
DEFINE_REDUCE(int16_t, i16, uint64_t, S, INT16_MIN, INT16_MAX)
DEFINE_REDUCE(int32_t, i32, uint64_t, S, INT32_MIN, INT32_MAX)
DEFINE_REDUCE(int64_t, i64, uint64_t, S, INT64_MIN, INT64_MAX)
DEFINE_REDUCE(uint8_t, u8, uint64_t, U, 0, UINT8_MAX)
DEFINE_REDUCE(uint16_t, u16, uint64_t, U, 0, UINT16_MAX)
DEFINE_REDUCE(uint32_t, u32, uint64_t, U, 0, UINT32_MAX)
DEFINE_REDUCE(uint64_t, u64, uint64_t, U, 0, UINT64_MAX)
DEFINE_REDUCE(uint8_t, b8, uint64_t, U, 0, 1)

typedef struct red_fns { mlrt_range_fn elements, columns; } red_fns;

static red_fns reduce_fns(int32_t dtype) {
    switch (dtype) {
    case MLRT_FLOAT: return (red_fns){elements_f32, columns_f32};
    case MLRT_DOUBLE: return (red_fns){elements_f64, columns_f64};
    case MLRT_INT8: return (red_fns){elements_i8, columns_i8};
    case MLRT_INT16: return (red_fns){elements_i16, columns_i16};
    case MLRT_INT32: return (red_fns){elements_i32, columns_i32};
    case MLRT_INT64: return (red_fns){elements_i64, columns_i64};
    case MLRT_UINT8: return (red_fns){elements_u8, columns_u8};
    case MLRT_UINT16: return (red_fns){elements_u16, columns_u16};
    case MLRT_UINT32: return (red_fns){elements_u32, columns_u32};
    case MLRT_UINT64: return (red_fns){elements_u64, columns_u64};
    case MLRT_BOOL: return (red_fns){elements_b8, columns_b8};
    default: return (red_fns){NULL, NULL};
    }
}

static int run_reduce(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                      const void *params, size_t params_size, rop op) {
    MLRT_CHECK(n_in >= 1 && n_in <= 2 && n_out == 1, "expects 1 or 2 inputs and 1 output");
    MLRT_PARAMS(mlrt_reduce_params, p, params, params_size);
    const mlrt_tensor *x = &in[0];
    mlrt_tensor *y = &out[0];
    MLRT_CHECK(x->dtype == y->dtype, "output type %d differs from the input's %d", y->dtype, x->dtype);
    MLRT_CHECK(mlrt_is_contiguous(y), "needs a contiguous output");
    MLRT_CHECK(p->n_kept >= 0 && p->n_kept < x->rank, "n_kept %lld leaves no reduced dim of the rank-%d view",
               (long long)p->n_kept, x->rank);
    red_fns fns = reduce_fns(x->dtype);
    if (!fns.elements) return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "element type %d not supported", x->dtype);
    red_job job = {.x = x->data, .y = y->data, .op = op, .n_kept = (int32_t)p->n_kept,
                   .n_red = x->rank - (int32_t)p->n_kept, .count = 1};
    int64_t n_out_elems = 1;
    for (int32_t d = 0; d < job.n_kept; ++d) {
        MLRT_CHECK(x->shape[d] >= 0, "negative extent");
        job.kshape[d] = x->shape[d];
        job.kstride[d] = x->strides[d];
        MLRT_CHECK(!__builtin_mul_overflow(n_out_elems, x->shape[d], &n_out_elems), "extents overflow");
    }
    for (int32_t d = 0; d < job.n_red; ++d) {
        MLRT_CHECK(x->shape[job.n_kept + d] >= 0, "negative extent");
        job.rshape[d] = x->shape[job.n_kept + d];
        job.rstride[d] = x->strides[job.n_kept + d];
        MLRT_CHECK(!__builtin_mul_overflow(job.count, job.rshape[d], &job.count), "extents overflow");
    }
    MLRT_CHECK(n_out_elems == mlrt_numel(y), "the view keeps %lld elements, the output has %lld",
               (long long)n_out_elems, (long long)mlrt_numel(y));
    if (n_out_elems == 0) return MLRT_OK;
    /* columns when the kept dims end in the contiguous one and the reduced dims do not */
    int64_t last_red_stride = job.rstride[job.n_red - 1];
    if (job.n_kept > 0 && job.kstride[job.n_kept - 1] == 1 && last_red_stride != 1 && job.kshape[job.n_kept - 1] > 1) {
        job.col_len = job.kshape[job.n_kept - 1];
        job.col_blocks = (job.col_len + BLOCK - 1) / BLOCK;
        int64_t items = (n_out_elems / job.col_len) * job.col_blocks;
        int64_t work = job.count * (job.col_len < BLOCK ? job.col_len : BLOCK);
        mlrt_parallel_for(ctx, items, 32768 / (work + 1) + 1, fns.columns, &job);
    } else {
        mlrt_parallel_for(ctx, n_out_elems, 32768 / (job.count + 1) + 1, fns.elements, &job);
    }
    return MLRT_OK;
}

#define REDUCE_KERNEL(NAME, OP)                                                                       \
    static int k_##NAME(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, \
                        int32_t n_out, const void *params, size_t params_size) {                      \
        return run_reduce(ctx, in, n_in, out, n_out, params, params_size, OP);                        \
    }
REDUCE_KERNEL(reduce_sum, R_SUM)
REDUCE_KERNEL(reduce_mean, R_MEAN)
REDUCE_KERNEL(reduce_max, R_MAX)
REDUCE_KERNEL(reduce_min, R_MIN)
REDUCE_KERNEL(reduce_prod, R_PROD)
REDUCE_KERNEL(reduce_l1, R_L1)
REDUCE_KERNEL(reduce_l2, R_L2)
REDUCE_KERNEL(reduce_logsum, R_LOGSUM)
REDUCE_KERNEL(reduce_logsumexp, R_LOGSUMEXP)
REDUCE_KERNEL(reduce_sumsquare, R_SUMSQ)

#define MASK_REDUCE_ARITH \
    (MLRT_MASK_FLOATS | MLRT_BIT(MLRT_INT32) | MLRT_BIT(MLRT_INT64) | MLRT_BIT(MLRT_UINT32) | MLRT_BIT(MLRT_UINT64))
#define MASK_REDUCE_ORDER (MASK_REDUCE_ARITH | MLRT_BIT(MLRT_INT8) | MLRT_BIT(MLRT_UINT8))

MLRT_KERNEL(reduce_sum, "ReduceSum", "", 1, MLRT_OPSET_MAX, MASK_REDUCE_ARITH, k_reduce_sum);
MLRT_KERNEL(reduce_mean, "ReduceMean", "", 1, MLRT_OPSET_MAX, MASK_REDUCE_ARITH, k_reduce_mean);
MLRT_KERNEL(reduce_max, "ReduceMax", "", 1, MLRT_OPSET_MAX, MASK_REDUCE_ORDER, k_reduce_max);
MLRT_KERNEL(reduce_max_bool, "ReduceMax", "", 20, MLRT_OPSET_MAX, MLRT_BIT(MLRT_BOOL), k_reduce_max);
MLRT_KERNEL(reduce_min, "ReduceMin", "", 1, MLRT_OPSET_MAX, MASK_REDUCE_ORDER, k_reduce_min);
MLRT_KERNEL(reduce_min_bool, "ReduceMin", "", 20, MLRT_OPSET_MAX, MLRT_BIT(MLRT_BOOL), k_reduce_min);
MLRT_KERNEL(reduce_prod, "ReduceProd", "", 1, MLRT_OPSET_MAX, MASK_REDUCE_ARITH, k_reduce_prod);
MLRT_KERNEL(reduce_l1, "ReduceL1", "", 1, MLRT_OPSET_MAX, MASK_REDUCE_ARITH, k_reduce_l1);
MLRT_KERNEL(reduce_l2, "ReduceL2", "", 1, MLRT_OPSET_MAX, MASK_REDUCE_ARITH, k_reduce_l2);
MLRT_KERNEL(reduce_logsum, "ReduceLogSum", "", 1, MLRT_OPSET_MAX, MLRT_MASK_FLOATS, k_reduce_logsum);
MLRT_KERNEL(reduce_logsumexp, "ReduceLogSumExp", "", 1, MLRT_OPSET_MAX, MLRT_MASK_FLOATS, k_reduce_logsumexp);
MLRT_KERNEL(reduce_sumsquare, "ReduceSumSquare", "", 1, MLRT_OPSET_MAX, MASK_REDUCE_ARITH, k_reduce_sumsquare);

/* ---- ArgMax / ArgMin ------------------------------------------------------------------- */

typedef struct arg_job {
    const void *x;
    int64_t *y;
    int64_t n, inner, blocks;  /* blocks of BLOCK neighbouring lines per outer index */
    int variant;               /* ARG_MAX_FIRST ... */
} arg_job;

enum { ARG_MAX_FIRST, ARG_MAX_LAST, ARG_MIN_FIRST, ARG_MIN_LAST };

/* does `v` beat `b`?  Larger (smaller) -- or equal when the last index wins; the first
 * (last) NaN beats everything */
#define WIN_MAX_FIRST(v, b, ISNAN) ((v) > (b) || (ISNAN(v) && !ISNAN(b)))
#define WIN_MAX_LAST(v, b, ISNAN) (((v) >= (b) && !ISNAN(b)) || ISNAN(v))
#define WIN_MIN_FIRST(v, b, ISNAN) ((v) < (b) || (ISNAN(v) && !ISNAN(b)))
#define WIN_MIN_LAST(v, b, ISNAN) (((v) <= (b) && !ISNAN(b)) || ISNAN(v))

/* one line (stride `inner`) at a time */
#define ARG_LINE(T, WIN, ISNAN)                                                                         \
    for (int64_t k = 1; k < n; ++k) {                                                                \
        T v = p[k * inner];                                                                          \
        if (WIN(v, best, ISNAN)) { best = v; bi = k; }                                               \
    }
/* w neighbouring lines together, along contiguous memory */
#define ARG_LANES(T, WIN, ISNAN)                                                                        \
    for (int64_t k = 1; k < n; ++k) {                                                                \
        const T *q = p + k * inner;                                                                  \
        for (int64_t i = 0; i < w; ++i) {                                                            \
            T v = q[i];                                                                              \
            bool win = WIN(v, best[i], ISNAN);                                                       \
            best[i] = win ? v : best[i];                                                             \
            bi[i] = win ? k : bi[i];                                                                 \
        }                                                                                            \
    }

#define DEFINE_ARG(T, SUF, ISNAN)                                                                    \
    static void arg_lines_##SUF(void *arg, int64_t begin, int64_t end) {                             \
        const arg_job *j = arg;                                                                      \
        int64_t n = j->n, inner = j->inner;                                                          \
        for (int64_t l = begin; l < end; ++l) {                                                      \
            const T *p = (const T *)j->x + (l / inner) * n * inner + l % inner;                      \
            T best = p[0];                                                                           \
            int64_t bi = 0;                                                                          \
            switch (j->variant) {                                                                    \
            case ARG_MAX_FIRST: ARG_LINE(T, WIN_MAX_FIRST, ISNAN) break;                                 \
            case ARG_MAX_LAST: ARG_LINE(T, WIN_MAX_LAST, ISNAN) break;                                   \
            case ARG_MIN_FIRST: ARG_LINE(T, WIN_MIN_FIRST, ISNAN) break;                                 \
            default: ARG_LINE(T, WIN_MIN_LAST, ISNAN) break;                                            \
            }                                                                                        \
            j->y[l] = bi;                                                                            \
        }                                                                                            \
    }                                                                                                \
    static void arg_blocks_##SUF(void *arg, int64_t begin, int64_t end) {                            \
        const arg_job *j = arg;                                                                      \
        int64_t n = j->n, inner = j->inner;                                                          \
        T best[BLOCK];                                                                               \
        int64_t bi[BLOCK];                                                                           \
        for (int64_t b = begin; b < end; ++b) {                                                      \
            int64_t o = b / j->blocks, i0 = (b % j->blocks) * BLOCK;                                 \
            int64_t w = inner - i0 < BLOCK ? inner - i0 : BLOCK;                                     \
            const T *p = (const T *)j->x + o * n * inner + i0;                                       \
            for (int64_t i = 0; i < w; ++i) { best[i] = p[i]; bi[i] = 0; }                          \
            switch (j->variant) {                                                                    \
            case ARG_MAX_FIRST: ARG_LANES(T, WIN_MAX_FIRST, ISNAN) break;                                \
            case ARG_MAX_LAST: ARG_LANES(T, WIN_MAX_LAST, ISNAN) break;                                  \
            case ARG_MIN_FIRST: ARG_LANES(T, WIN_MIN_FIRST, ISNAN) break;                                \
            default: ARG_LANES(T, WIN_MIN_LAST, ISNAN) break;                                           \
            }                                                                                        \
            int64_t *y = j->y + o * inner + i0;                                                      \
            for (int64_t i = 0; i < w; ++i) y[i] = bi[i];                                            \
        }                                                                                            \
    }
#define ARG_FNAN(v) ((v) != (v))
#define ARG_INAN(v) false
DEFINE_ARG(float, f32, ARG_FNAN)
DEFINE_ARG(double, f64, ARG_FNAN)
DEFINE_ARG(int8_t, i8, ARG_INAN)
DEFINE_ARG(int16_t, i16, ARG_INAN)
DEFINE_ARG(int32_t, i32, ARG_INAN)
DEFINE_ARG(int64_t, i64, ARG_INAN)
DEFINE_ARG(uint8_t, u8, ARG_INAN)
DEFINE_ARG(uint16_t, u16, ARG_INAN)
DEFINE_ARG(uint32_t, u32, ARG_INAN)
DEFINE_ARG(uint64_t, u64, ARG_INAN)

static red_fns arg_fns(int32_t dtype) {
    switch (dtype) {
    case MLRT_FLOAT: return (red_fns){arg_lines_f32, arg_blocks_f32};
    case MLRT_DOUBLE: return (red_fns){arg_lines_f64, arg_blocks_f64};
    case MLRT_INT8: return (red_fns){arg_lines_i8, arg_blocks_i8};
    case MLRT_INT16: return (red_fns){arg_lines_i16, arg_blocks_i16};
    case MLRT_INT32: return (red_fns){arg_lines_i32, arg_blocks_i32};
    case MLRT_INT64: return (red_fns){arg_lines_i64, arg_blocks_i64};
    case MLRT_UINT8: return (red_fns){arg_lines_u8, arg_blocks_u8};
    case MLRT_UINT16: return (red_fns){arg_lines_u16, arg_blocks_u16};
    case MLRT_UINT32: return (red_fns){arg_lines_u32, arg_blocks_u32};
    case MLRT_UINT64: return (red_fns){arg_lines_u64, arg_blocks_u64};
    default: return (red_fns){NULL, NULL};
    }
}

static int run_arg(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                   const void *params, size_t params_size, bool is_max) {
    MLRT_CHECK(n_in == 1 && n_out == 1, "expects 1 input and 1 output");
    MLRT_PARAMS(mlrt_argreduce_params, p, params, params_size);
    const mlrt_tensor *x = &in[0];
    mlrt_tensor *y = &out[0];
    MLRT_CHECK(y->dtype == MLRT_INT64, "the output must be int64");
    MLRT_CHECK(mlrt_is_contiguous(x) && mlrt_is_contiguous(y), "needs contiguous tensors");
    MLRT_CHECK(mlrt_block_covers(p->outer, p->n, p->inner, mlrt_numel(x)), "[outer, n, inner] does not cover the input");
    MLRT_CHECK(mlrt_block_covers(p->outer, 1, p->inner, mlrt_numel(y)), "[outer, inner] does not cover the output");
    if (mlrt_numel(y) == 0) return MLRT_OK;
    MLRT_CHECK(p->n > 0, "cannot take the arg%s of an empty axis", is_max ? "max" : "min");
    red_fns fns = arg_fns(x->dtype);
    if (!fns.elements) return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "element type %d not supported", x->dtype);
    bool last = p->select_last_index != 0;
    arg_job job = {x->data, y->data, p->n, p->inner, (p->inner + BLOCK - 1) / BLOCK,
                   is_max ? (last ? ARG_MAX_LAST : ARG_MAX_FIRST) : (last ? ARG_MIN_LAST : ARG_MIN_FIRST)};
    if (p->inner == 1) {
        mlrt_parallel_for(ctx, p->outer, 32768 / (p->n + 1) + 1, fns.elements, &job);
    } else {
        int64_t work = p->n * (p->inner < BLOCK ? p->inner : BLOCK);
        mlrt_parallel_for(ctx, p->outer * job.blocks, 32768 / (work + 1) + 1, fns.columns, &job);
    }
    return MLRT_OK;
}

static int k_argmax(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                    const void *params, size_t params_size) {
    return run_arg(ctx, in, n_in, out, n_out, params, params_size, true);
}
static int k_argmin(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                    const void *params, size_t params_size) {
    return run_arg(ctx, in, n_in, out, n_out, params, params_size, false);
}

#define MASK_ARG (MLRT_MASK_FLOATS | MLRT_MASK_INTS)
MLRT_KERNEL(argmax, "ArgMax", "", 1, MLRT_OPSET_MAX, MASK_ARG, k_argmax);
MLRT_KERNEL(argmin, "ArgMin", "", 1, MLRT_OPSET_MAX, MASK_ARG, k_argmin);
