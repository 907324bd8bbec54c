/* compare.c -- Equal, Less, Greater, LessOrEqual, GreaterOrEqual: bool results.
 *
 * Inputs arrive as views of the output's shape (broadcast dims have stride 0, set
 * by the Python semantics).  Every numeric type, bool, float16 and bfloat16 (the
 * last two compared as float, so -0 == +0 and NaN compares false). */
#include "nditer.h"

/* defined in cast.c */

typedef enum { CMP_EQ, CMP_LT, CMP_GT, CMP_LE, CMP_GE } cmpop;

typedef struct cmp_job {
    mlrt_rows rows;
    const void *a, *b;
    uint8_t *y;
    int32_t dtype;
    cmpop op;
} cmp_job;

#define CMP_ROW(T, LOAD, REL) MLRT_ROW2(T, T, (uint8_t)(LOAD(u) REL LOAD(v)))

#define CMP_LOOP(T, LOAD)                                                              \
    {                                                                                  \
        const T *as = j->a, *bs = j->b;                                                \
        for (int64_t r = begin; r < end; ++r) {                                        \
            mlrt_rows_offsets(&j->rows, r, off);                                       \
            const T *pa = as + off[0], *pb = bs + off[1];                              \
            uint8_t *py = j->y + off[2];                                               \
            switch (j->op) {                                                           \
            case CMP_EQ: CMP_ROW(T, LOAD, ==) break;                                      \
            case CMP_LT: CMP_ROW(T, LOAD, <) break;                                       \
            case CMP_GT: CMP_ROW(T, LOAD, >) break;                                       \
            case CMP_LE: CMP_ROW(T, LOAD, <=) break;                                      \
            case CMP_GE: CMP_ROW(T, LOAD, >=) break;                                      \
            }                                                                          \
        }                                                                              \
    }                                                                                  \
    break;
#define PLAIN(v) (v)
#define TRUTH(v) ((v) != 0)

static void cmp_range(void *arg, int64_t begin, int64_t end) {
    const cmp_job *j = arg;
    int64_t n = j->rows.row_len, off[3];
    int64_t sa = j->rows.strides[0][j->rows.rank - 1], sb = j->rows.strides[1][j->rows.rank - 1];
    switch (j->dtype) {
    case MLRT_FLOAT: CMP_LOOP(float, PLAIN)
    case MLRT_DOUBLE: CMP_LOOP(double, PLAIN)
    case MLRT_INT8: CMP_LOOP(int8_t, PLAIN)
    case MLRT_INT16: CMP_LOOP(int16_t, PLAIN)
    case MLRT_INT32: CMP_LOOP(int32_t, PLAIN)
    case MLRT_INT64: CMP_LOOP(int64_t, PLAIN)
    case MLRT_UINT8: CMP_LOOP(uint8_t, PLAIN)
    case MLRT_UINT16: CMP_LOOP(uint16_t, PLAIN)
    case MLRT_UINT32: CMP_LOOP(uint32_t, PLAIN)
    case MLRT_UINT64: CMP_LOOP(uint64_t, PLAIN)
    case MLRT_BOOL: CMP_LOOP(uint8_t, TRUTH)
    case MLRT_FLOAT16: CMP_LOOP(uint16_t, mlrt_f16_to_f32)
    case MLRT_BFLOAT16: CMP_LOOP(uint16_t, mlrt_bf16_to_f32)
    }
}

#define MASK_CMP MLRT_MASK_ALL

static int run_cmp(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                   cmpop op) {
    MLRT_CHECK(n_in == 2 && n_out == 1, "expects 2 inputs and 1 output");
    const mlrt_tensor *a = &in[0], *b = &in[1];
    mlrt_tensor *y = &out[0];
    if (a->dtype < 0 || a->dtype >= 64 || !((MASK_CMP >> a->dtype) & 1))
        return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "element type %d not supported", a->dtype);
    MLRT_CHECK(b->dtype == a->dtype, "operand types differ (%d, %d)", a->dtype, b->dtype);
    MLRT_CHECK(y->dtype == MLRT_BOOL, "output must be bool, not type %d", y->dtype);
    MLRT_CHECK(mlrt_same_shape(a, y) && mlrt_same_shape(b, y), "operands must be views of the output's shape");
    cmp_job job = {.a = a->data, .b = b->data, .y = y->data, .dtype = a->dtype, .op = op};
    const mlrt_tensor *ops[3] = {a, b, y};
    mlrt_rows_init(&job.rows, y, ops, 3);
    int64_t grain = job.rows.row_len >= 4096 ? 1 : 4096 / (job.rows.row_len + 1) + 1;
    mlrt_parallel_for(ctx, job.rows.n_rows, grain, cmp_range, &job);
    return MLRT_OK;
}

#define CMP_KERNEL(NAME, OP, CODE)                                                                         \
    static int k_##NAME(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,  \
                        int32_t n_out, const void *params, size_t params_size) {                         \
        return run_cmp(ctx, in, n_in, out, n_out, CODE);                                                  \
    }                                                                                                     \
    MLRT_KERNEL(NAME, OP, "", 1, MLRT_OPSET_MAX, MASK_CMP, k_##NAME);

CMP_KERNEL(equal, "Equal", CMP_EQ)
CMP_KERNEL(less, "Less", CMP_LT)
CMP_KERNEL(greater, "Greater", CMP_GT)
CMP_KERNEL(less_or_equal, "LessOrEqual", CMP_LE)
CMP_KERNEL(greater_or_equal, "GreaterOrEqual", CMP_GE)
