/* cumsum.c -- CumSum.
 *
 * X is a contiguous [outer, n, inner] block (the axis input is resolved in Python);
 * a block of up to BLOCK neighbouring lines is summed together along n, forwards or
 * in reverse, inclusive or exclusive.  Floats accumulate in their own type (like a
 * running sum in the reference); integers wrap, through their unsigned type. */
#include "cumsum.h"
#include "internal.h"

#define BLOCK 256

typedef struct cumsum_job {
    const void *x;
    void *y;
    int64_t n, inner, blocks;
    bool exclusive, reverse;
} cumsum_job;

#define DEFINE_CUMSUM(T, ACC, SUF)                                                          \
    static void cumsum_##SUF(void *arg, int64_t begin, int64_t end) {                       \
        const cumsum_job *j = arg;                                                          \
        ACC acc[BLOCK];                                                                     \
        for (int64_t b = begin; b < end; ++b) {                                             \
            int64_t o = b / j->blocks, i0 = (b % j->blocks) * BLOCK;                        \
            int64_t w = j->inner - i0 < BLOCK ? j->inner - i0 : BLOCK;                      \
            const T *x = (const T *)j->x + o * j->n * j->inner + i0;                        \
            T *y = (T *)j->y + o * j->n * j->inner + i0;                                    \
            for (int64_t i = 0; i < w; ++i) acc[i] = 0;                                     \
            for (int64_t t = 0; t < j->n; ++t) {                                            \
                int64_t k = j->reverse ? j->n - 1 - t : t;                                  \
                const T *p = x + k * j->inner;                                              \
                T *q = y + k * j->inner;                                                    \
                if (j->exclusive)                                                           \
                    for (int64_t i = 0; i < w; ++i) { q[i] = (T)acc[i]; acc[i] += (ACC)p[i]; } \
                else                                                                        \
                    for (int64_t i = 0; i < w; ++i) { acc[i] += (ACC)p[i]; q[i] = (T)acc[i]; } \
            }                                                                               \
        }                                                                                   \
    }
DEFINE_CUMSUM(float, float, f32)
DEFINE_CUMSUM(double, double, f64)
DEFINE_CUMSUM(int32_t, uint32_t, i32)
DEFINE_CUMSUM(int64_t, uint64_t, i64)
DEFINE_CUMSUM(uint32_t, uint32_t, u32)
DEFINE_CUMSUM(uint64_t, uint64_t, u64)

static mlrt_range_fn cumsum_fn(int32_t dtype) {
    switch (dtype) {
    case MLRT_FLOAT: return cumsum_f32;
    case MLRT_DOUBLE: return cumsum_f64;
    case MLRT_INT32: return cumsum_i32;
    case MLRT_INT64: return cumsum_i64;
    case MLRT_UINT32: return cumsum_u32;
    case MLRT_UINT64: return cumsum_u64;
    default: return NULL;
    }
}

/* inputs: X, axis (already resolved into the params); output: Y */
static int k_cumsum(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                    const void *params, size_t params_size) {
    MLRT_CHECK(n_in >= 1 && n_in <= 2 && n_out == 1, "expects 2 inputs and 1 output");
    MLRT_PARAMS(mlrt_cumsum_params, p, params, params_size);
    const mlrt_tensor *x = &in[0];
    mlrt_tensor *y = &out[0];
    MLRT_CHECK(x->dtype == y->dtype && mlrt_same_shape(x, y), "output must match the input");
    MLRT_CHECK(mlrt_is_contiguous(x) && mlrt_is_contiguous(y), "needs contiguous tensors");
    MLRT_CHECK(mlrt_block_covers(p->outer, p->n, p->inner, mlrt_numel(x)), "[outer, n, inner] does not cover the input");
    mlrt_range_fn fn = cumsum_fn(x->dtype);
    if (!fn) return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "element type %d not supported", x->dtype);
    if (mlrt_numel(x) == 0) return MLRT_OK;
    cumsum_job job = {x->data, y->data, p->n, p->inner, (p->inner + BLOCK - 1) / BLOCK,
                      p->exclusive != 0, p->reverse != 0};
    int64_t work = p->n * (p->inner < BLOCK ? p->inner : BLOCK);
    mlrt_parallel_for(ctx, p->outer * job.blocks, 32768 / (work + 1) + 1, fn, &job);
    return MLRT_OK;
}

#define MASK_CUMSUM \
    (MLRT_MASK_FLOATS | MLRT_BIT(MLRT_INT32) | MLRT_BIT(MLRT_INT64) | MLRT_BIT(MLRT_UINT32) | MLRT_BIT(MLRT_UINT64))
MLRT_KERNEL(cumsum, "CumSum", "", 11, MLRT_OPSET_MAX, MASK_CUMSUM, k_cumsum);
