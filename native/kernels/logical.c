/* logical.c -- And, Or, Xor, Not (bool); BitwiseAnd, BitwiseOr, BitwiseXor,
 * BitwiseNot, BitShift (integers; ONNX lists unsigned ones, signed ones follow
 * onnx.reference).
 *
 * Binary ops see their inputs as views of the output's shape (broadcast dims have
 * stride 0, set by the Python semantics); unary ones need contiguous tensors. */
#include "logical.h"
#include "nditer.h"

typedef enum { L_AND, L_OR, L_XOR, B_AND, B_OR, B_XOR, SHL, SHR } logop;

typedef struct log_job {
    mlrt_rows rows;
    const void *a, *b;
    void *y;
    int32_t dtype;
    logop op;
} log_job;

#define ROW(T, EXPR) for (int64_t i = 0; i < n; ++i) { T u = pa[i * sa], v = pb[i * sb]; py[i] = (T)(EXPR); }

/* Shifts of a BITS-wide T by v: a shift out of [0, BITS) gives 0, or -1 for a right
 * shift of a negative value (NEG(u) tells); a right shift of a signed value is
 * arithmetic, a left one works on the bits. */
#define LOG_LOOP(T, BITS, NEG)                                                                 \
    {                                                                                       \
        const T *as = j->a, *bs = j->b;                                                     \
        T *ys = j->y;                                                                       \
        for (int64_t r = begin; r < end; ++r) {                                             \
            mlrt_rows_offsets(&j->rows, r, off);                                            \
            const T *pa = as + off[0], *pb = bs + off[1];                                   \
            T *py = ys + off[2];                                                            \
            switch (j->op) {                                                                \
            case L_AND: ROW(T, (u != 0) & (v != 0)) break;                                     \
            case L_OR: ROW(T, (u != 0) | (v != 0)) break;                                      \
            case L_XOR: ROW(T, (u != 0) ^ (v != 0)) break;                                     \
            case B_AND: ROW(T, u & v) break;                                                   \
            case B_OR: ROW(T, u | v) break;                                                    \
            case B_XOR: ROW(T, u ^ v) break;                                                   \
            case SHL: ROW(T, (uint64_t)v < (BITS) ? (T)((uint64_t)u << (uint64_t)v) : 0) break; \
            case SHR: ROW(T, (uint64_t)v < (BITS) ? (T)(u >> v) : NEG(u) ? (T)-1 : 0) break; \
            }                                                                               \
        }                                                                                   \
    }                                                                                       \
    break;

#define NEGATIVE(u) ((u) < 0)
#define NONNEG(u) 0

static void log_range(void *arg, int64_t begin, int64_t end) {
    const log_job *j = arg;
    int64_t n = j->rows.row_len, off[3];
    int64_t sa = j->rows.strides[0][j->rows.rank - 1], sb = j->rows.strides[1][j->rows.rank - 1];
    switch (j->dtype) {
    case MLRT_BOOL: LOG_LOOP(uint8_t, 8, NONNEG)
    case MLRT_INT8: LOG_LOOP(int8_t, 8, NEGATIVE)
    case MLRT_INT16: LOG_LOOP(int16_t, 16, NEGATIVE)
    case MLRT_INT32: LOG_LOOP(int32_t, 32, NEGATIVE)
    case MLRT_INT64: LOG_LOOP(int64_t, 64, NEGATIVE)
    case MLRT_UINT8: LOG_LOOP(uint8_t, 8, NONNEG)
    case MLRT_UINT16: LOG_LOOP(uint16_t, 16, NONNEG)
    case MLRT_UINT32: LOG_LOOP(uint32_t, 32, NONNEG)
    case MLRT_UINT64: LOG_LOOP(uint64_t, 64, NONNEG)
    }
}

#define MASK_BOOL MLRT_BIT(MLRT_BOOL)

static int run_log(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                   logop op, uint64_t mask) {
    MLRT_CHECK(n_in == 2 && n_out == 1, "expects 2 inputs and 1 output");
    const mlrt_tensor *a = &in[0], *b = &in[1];
    mlrt_tensor *y = &out[0];
    if (a->dtype < 0 || a->dtype >= 64 || !((mask >> a->dtype) & 1))
        return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "element type %d not supported", a->dtype);
    MLRT_CHECK(b->dtype == a->dtype && y->dtype == a->dtype, "operand types differ (%d, %d -> %d)", a->dtype, b->dtype, y->dtype);
    MLRT_CHECK(mlrt_same_shape(a, y) && mlrt_same_shape(b, y), "operands must be views of the output's shape");
    log_job job = {.a = a->data, .b = b->data, .y = y->data, .dtype = a->dtype, .op = op};
    const mlrt_tensor *ops[3] = {a, b, y};
    mlrt_rows_init(&job.rows, y, ops, 3);
    int64_t grain = job.rows.row_len >= 4096 ? 1 : 4096 / (job.rows.row_len + 1) + 1;
    mlrt_parallel_for(ctx, job.rows.n_rows, grain, log_range, &job);
    return MLRT_OK;
}

#define LOG_KERNEL(NAME, OP, CODE, MASK)                                                                   \
    static int k_##NAME(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,  \
                        int32_t n_out, const void *params, size_t params_size) {                         \
        return run_log(ctx, in, n_in, out, n_out, CODE, MASK);                                            \
    }                                                                                                     \
    MLRT_KERNEL(NAME, OP, "", 1, MLRT_OPSET_MAX, MASK, k_##NAME);

LOG_KERNEL(and, "And", L_AND, MASK_BOOL)
LOG_KERNEL(or, "Or", L_OR, MASK_BOOL)
LOG_KERNEL(xor, "Xor", L_XOR, MASK_BOOL)
LOG_KERNEL(bitwise_and, "BitwiseAnd", B_AND, MLRT_MASK_INTS)
LOG_KERNEL(bitwise_or, "BitwiseOr", B_OR, MLRT_MASK_INTS)
LOG_KERNEL(bitwise_xor, "BitwiseXor", B_XOR, MLRT_MASK_INTS)

static int k_bitshift(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                      const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_bitshift_params, p, params, params_size);
    return run_log(ctx, in, n_in, out, n_out, p->left ? SHL : SHR, MLRT_MASK_INTS);
}

MLRT_KERNEL(bitshift, "BitShift", "", 1, MLRT_OPSET_MAX, MLRT_MASK_INTS, k_bitshift);

/* -- Not, BitwiseNot: one contiguous tensor -------------------------------------------------- */

typedef struct not_job { const void *x; void *y; int32_t dtype; } not_job;

#define NOT_LOOP(T, EXPR)                                                               \
    {                                                                                   \
        const T *xs = j->x;                                                             \
        T *ys = j->y;                                                                   \
        for (int64_t i = begin; i < end; ++i) { T x = xs[i]; ys[i] = (T)(EXPR); }       \
    }                                                                                   \
    break;

static void not_range(void *arg, int64_t begin, int64_t end) {
    const not_job *j = arg;
    switch (j->dtype) {
    case MLRT_BOOL: NOT_LOOP(uint8_t, x == 0)
    case MLRT_INT8: NOT_LOOP(int8_t, ~x)
    case MLRT_INT16: NOT_LOOP(int16_t, ~x)
    case MLRT_INT32: NOT_LOOP(int32_t, ~x)
    case MLRT_INT64: NOT_LOOP(int64_t, ~x)
    case MLRT_UINT8: NOT_LOOP(uint8_t, ~x)
    case MLRT_UINT16: NOT_LOOP(uint16_t, ~x)
    case MLRT_UINT32: NOT_LOOP(uint32_t, ~x)
    case MLRT_UINT64: NOT_LOOP(uint64_t, ~x)
    }
}

static int run_not(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                   uint64_t mask) {
    MLRT_CHECK(n_in == 1 && n_out == 1, "expects 1 input and 1 output");
    const mlrt_tensor *x = &in[0];
    mlrt_tensor *y = &out[0];
    if (x->dtype < 0 || x->dtype >= 64 || !((mask >> x->dtype) & 1))
        return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "element type %d not supported", x->dtype);
    MLRT_CHECK(x->dtype == y->dtype && mlrt_same_shape(x, y), "output must match the input");
    MLRT_CHECK(mlrt_is_contiguous(x) && mlrt_is_contiguous(y), "needs contiguous tensors");
    not_job job = {x->data, y->data, x->dtype};
    mlrt_parallel_for(ctx, mlrt_numel(y), 65536, not_range, &job);
    return MLRT_OK;
}

static int k_not(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                 const void *params, size_t params_size) {
    return run_not(ctx, in, n_in, out, n_out, MASK_BOOL);
}

static int k_bitwise_not(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                         const void *params, size_t params_size) {
    return run_not(ctx, in, n_in, out, n_out, MLRT_MASK_INTS);
}

MLRT_KERNEL(not, "Not", "", 1, MLRT_OPSET_MAX, MASK_BOOL, k_not);
MLRT_KERNEL(bitwise_not, "BitwiseNot", "", 1, MLRT_OPSET_MAX, MLRT_MASK_INTS, k_bitwise_not);
