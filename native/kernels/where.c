/* where.c -- Where: y = condition ? x : y, three inputs broadcast together.
 *
 * The inputs arrive as views of the output's shape (broadcast dims have stride 0,
 * set by the Python semantics).  Elements are moved by size, so every fixed-size
 * type works (bool, integers, float16, bfloat16, float, double). */
#include "nditer.h"

typedef struct where_job {
    mlrt_rows rows;
    const uint8_t *c;
    const void *a, *b;
    void *y;
    size_t item;
} where_job;

#define WHERE_LOOP(T)                                                                       \
    {                                                                                       \
        const T *as = j->a, *bs = j->b;                                                     \
        T *ys = j->y;                                                                       \
        for (int64_t r = begin; r < end; ++r) {                                             \
            mlrt_rows_offsets(&j->rows, r, off);                                            \
            const uint8_t *pc = j->c + off[0];                                              \
            const T *pa = as + off[1], *pb = bs + off[2];                                   \
            T *py = ys + off[3];                                                            \
            for (int64_t i = 0; i < n; ++i) py[i] = pc[i * sc] ? pa[i * sa] : pb[i * sb];   \
        }                                                                                   \
    }                                                                                       \
    break;

static void where_range(void *arg, int64_t begin, int64_t end) {
    const where_job *j = arg;
    int64_t n = j->rows.row_len, off[4];
    int32_t last = j->rows.rank - 1;
    int64_t sc = j->rows.strides[0][last], sa = j->rows.strides[1][last], sb = j->rows.strides[2][last];
    switch (j->item) {
    case 1: WHERE_LOOP(uint8_t)
    case 2: WHERE_LOOP(uint16_t)
    case 4: WHERE_LOOP(uint32_t)
    case 8: WHERE_LOOP(uint64_t)
    }
}

static int k_where(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                   const void *params, size_t params_size) {
    MLRT_CHECK(n_in == 3 && n_out == 1, "expects 3 inputs and 1 output");
    const mlrt_tensor *c = &in[0], *a = &in[1], *b = &in[2];
    mlrt_tensor *y = &out[0];
    MLRT_CHECK(c->dtype == MLRT_BOOL, "condition must be bool, not type %d", c->dtype);
    MLRT_CHECK(a->dtype == y->dtype && b->dtype == y->dtype, "x and y types differ (%d, %d -> %d)", a->dtype, b->dtype, y->dtype);
    size_t item = mlrt_dtype_size(y->dtype);
    if (item != 1 && item != 2 && item != 4 && item != 8)
        return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "element type %d not supported", y->dtype);
    MLRT_CHECK(mlrt_same_shape(c, y) && mlrt_same_shape(a, y) && mlrt_same_shape(b, y),
               "inputs must be views of the output's shape");
    where_job job = {.c = c->data, .a = a->data, .b = b->data, .y = y->data, .item = item};
    const mlrt_tensor *ops[4] = {c, a, b, y};
    mlrt_rows_init(&job.rows, y, ops, 4);
    int64_t grain = job.rows.row_len >= 4096 ? 1 : 4096 / (job.rows.row_len + 1) + 1;
    mlrt_parallel_for(ctx, job.rows.n_rows, grain, where_range, &job);
    return MLRT_OK;
}

/* selected by x's type (input 1) */
MLRT_KERNEL(where, "Where", "", 1, MLRT_OPSET_MAX, MLRT_MASK_ALL, k_where);
