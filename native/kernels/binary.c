/* binary.c -- Add, Sub, Mul, Div, and variadic Sum/Max/Min/Mean.
 *
 * Inputs arrive as views of the output's shape (broadcast dims have stride 0, set
 * by the Python semantics), so a kernel only walks rows.  A row whose operands are
 * contiguous or constant takes a vectorisable loop, cloned per x86-64 level (MLRT_ISA_FN;
 * NEON by the compiler on aarch64). */
#include "nditer.h"

typedef enum { OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MAX, OP_MIN } binop;

typedef struct binary_job {
    mlrt_rows rows;
    const void *a, *b;
    void *y;
    int32_t dtype;
    binop op;
} binary_job;

#define APPLY(op, x, y) \
    ((op) == OP_ADD ? (x) + (y) : (op) == OP_SUB ? (x) - (y) : (op) == OP_MUL ? (x) * (y) : (x) / (y))

#define ROW_LOOP(T, EXPR) MLRT_ROW2(T, T, EXPR)

#define DEFINE_ROWS(T, NAME, DIVOK)                                                              \
    MLRT_ISA_FN(, void, NAME, (void *arg, int64_t begin, int64_t end), (arg, begin, end)) {       \
        const binary_job *j = arg;                                                                \
        const T *a = j->a, *b = j->b;                                                              \
        T *y = j->y;                                                                               \
        int64_t n = j->rows.row_len, off[3];                                                       \
        int64_t sa = j->rows.strides[0][j->rows.rank - 1], sb = j->rows.strides[1][j->rows.rank - 1]; \
        for (int64_t r = begin; r < end; ++r) {                                                    \
            mlrt_rows_offsets(&j->rows, r, off);                                                   \
            const T *pa = a + off[0], *pb = b + off[1];                                            \
            T *py = y + off[2];                                                                    \
            switch (j->op) {                                                                       \
            case OP_ADD: ROW_LOOP(T, u + v) break;                                                 \
            case OP_SUB: ROW_LOOP(T, u - v) break;                                                 \
            case OP_MUL: ROW_LOOP(T, u * v) break;                                                 \
            case OP_DIV: ROW_LOOP(T, DIVOK(u, v)) break;                                           \
            case OP_MAX: ROW_LOOP(T, (u != u) ? u : (v != v) ? v : (u > v ? u : v)) break;         \
            case OP_MIN: ROW_LOOP(T, (u != u) ? u : (v != v) ? v : (u < v ? u : v)) break;         \
            }                                                                                      \
        }                                                                                          \
    }

#define FDIV(x, d) ((x) / (d))
#define IDIV(x, d) ((d) == 0 ? 0 : (x) / (d))
DEFINE_ROWS(float, rows_f32, FDIV)
DEFINE_ROWS(double, rows_f64, FDIV)
DEFINE_ROWS(int8_t, rows_i8, IDIV)
DEFINE_ROWS(int16_t, rows_i16, IDIV)
DEFINE_ROWS(int32_t, rows_i32, IDIV)
DEFINE_ROWS(int64_t, rows_i64, IDIV)
DEFINE_ROWS(uint8_t, rows_u8, IDIV)
DEFINE_ROWS(uint16_t, rows_u16, IDIV)
DEFINE_ROWS(uint32_t, rows_u32, IDIV)
DEFINE_ROWS(uint64_t, rows_u64, IDIV)

/* float16 / bfloat16: each element computed in float and rounded back (as numpy does) */
#define DEFINE_HALF_ROWS(NAME, TO_F32, FROM_F32)                                                   \
    MLRT_ISA_FN(, void, NAME, (void *arg, int64_t begin, int64_t end), (arg, begin, end)) {         \
        const binary_job *j = arg;                                                                 \
        const uint16_t *a = j->a, *b = j->b;                                                       \
        uint16_t *y = j->y;                                                                        \
        int64_t n = j->rows.row_len, off[3];                                                       \
        int64_t sa = j->rows.strides[0][j->rows.rank - 1], sb = j->rows.strides[1][j->rows.rank - 1]; \
        for (int64_t r = begin; r < end; ++r) {                                                    \
            mlrt_rows_offsets(&j->rows, r, off);                                                   \
            for (int64_t i = 0; i < n; ++i) {                                                      \
                float u = TO_F32(a[off[0] + i * sa]), v = TO_F32(b[off[1] + i * sb]), w;           \
                switch (j->op) {                                                                   \
                case OP_ADD: w = u + v; break;                                                     \
                case OP_SUB: w = u - v; break;                                                     \
                case OP_MUL: w = u * v; break;                                                     \
                case OP_DIV: w = u / v; break;                                                     \
                case OP_MAX: w = (u != u) ? u : (v != v) ? v : (u > v ? u : v); break;             \
                default: w = (u != u) ? u : (v != v) ? v : (u < v ? u : v); break;                \
                }                                                                                  \
                y[off[2] + i] = FROM_F32(w);                                                       \
            }                                                                                      \
        }                                                                                          \
    }
DEFINE_HALF_ROWS(rows_f16, mlrt_f16_to_f32, mlrt_f32_to_f16)
DEFINE_HALF_ROWS(rows_bf16, mlrt_bf16_to_f32, mlrt_f32_to_bf16)
#define MASK_HALVES (MLRT_BIT(MLRT_FLOAT16) | MLRT_BIT(MLRT_BFLOAT16))

static mlrt_range_fn rows_for(int32_t dtype) {
    switch (dtype) {
    case MLRT_FLOAT: return rows_f32;
    case MLRT_DOUBLE: return rows_f64;
    case MLRT_INT8: return rows_i8;
    case MLRT_INT16: return rows_i16;
    case MLRT_INT32: return rows_i32;
    case MLRT_INT64: return rows_i64;
    case MLRT_UINT8: return rows_u8;
    case MLRT_UINT16: return rows_u16;
    case MLRT_UINT32: return rows_u32;
    case MLRT_UINT64: return rows_u64;
    case MLRT_FLOAT16: return rows_f16;
    case MLRT_BFLOAT16: return rows_bf16;
    default: return NULL;
    }
}

/* y = a op b, all three of y's shape (a and b possibly broadcast views). */
static int apply(const mlrt_context *ctx, const mlrt_tensor *a, const mlrt_tensor *b, mlrt_tensor *y, binop op) {
    MLRT_CHECK(a->dtype == y->dtype && b->dtype == y->dtype, "operand types differ (%d, %d -> %d)", a->dtype, b->dtype, y->dtype);
    MLRT_CHECK(mlrt_same_shape(a, y) && mlrt_same_shape(b, y), "operands must be views of the output's shape");
    mlrt_range_fn fn = rows_for(y->dtype);
    if (!fn) return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "element type %d not supported", y->dtype);
    binary_job job = {.a = a->data, .b = b->data, .y = y->data, .dtype = y->dtype, .op = op};
    const mlrt_tensor *ops[3] = {a, b, y};
    mlrt_rows_init(&job.rows, y, ops, 3);
    int64_t grain = job.rows.row_len >= 4096 ? 1 : 4096 / (job.rows.row_len + 1) + 1;
    mlrt_parallel_for(ctx, job.rows.n_rows, grain, fn, &job);
    mlrt_note_path(MLRT_LOOP_PATH("binary"));
    return MLRT_OK;
}

static int run_binary(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out, binop op) {
    MLRT_CHECK(n_in == 2 && n_out == 1, "expects 2 inputs and 1 output");
    return apply(ctx, &in[0], &in[1], &out[0], op);
}

#define BINARY_KERNEL(NAME, OP)                                                                     \
    static int k_##NAME(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, \
                        int32_t n_out, const void *params, size_t params_size) {                    \
        return run_binary(ctx, in, n_in, out, n_out, OP);                                           \
    }
BINARY_KERNEL(add, OP_ADD)
BINARY_KERNEL(sub, OP_SUB)
BINARY_KERNEL(mul, OP_MUL)
BINARY_KERNEL(div, OP_DIV)

MLRT_KERNEL(add, "Add", "", 1, MLRT_OPSET_MAX, MLRT_MASK_NUMERIC | MASK_HALVES, k_add);
MLRT_KERNEL(sub, "Sub", "", 1, MLRT_OPSET_MAX, MLRT_MASK_NUMERIC | MASK_HALVES, k_sub);
MLRT_KERNEL(mul, "Mul", "", 1, MLRT_OPSET_MAX, MLRT_MASK_NUMERIC | MASK_HALVES, k_mul);
MLRT_KERNEL(div, "Div", "", 1, MLRT_OPSET_MAX, MLRT_MASK_NUMERIC | MASK_HALVES, k_div);

/* Variadic: the first two inputs combine into y, then y combines with each next
 * input (y itself is a plain contiguous tensor, safe to read while writing). */
static int run_variadic(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                        binop op, bool mean) {
    MLRT_CHECK(n_in >= 1 && n_out == 1, "expects at least 1 input and 1 output");
    mlrt_tensor *y = &out[0];
    if (n_in == 1) {
        /* y = in0 (a view of y's shape): in0 + 0 is not exact for -0.0, so copy by max(x, x) */
        int status = apply(ctx, &in[0], &in[0], y, OP_MAX);
        if (status) return status;
    } else {
        int status = apply(ctx, &in[0], &in[1], y, op);
        if (status) return status;
        for (int32_t i = 2; i < n_in; ++i)
            if ((status = apply(ctx, y, &in[i], y, op))) return status;
    }
    if (mean && n_in > 1) {
        int64_t n = mlrt_numel(y);
        if (y->dtype == MLRT_FLOAT) { float *p = y->data; for (int64_t i = 0; i < n; ++i) p[i] /= (float)n_in; }
        else if (y->dtype == MLRT_DOUBLE) { double *p = y->data; for (int64_t i = 0; i < n; ++i) p[i] /= (double)n_in; }
        else if (y->dtype == MLRT_FLOAT16) { uint16_t *p = y->data; for (int64_t i = 0; i < n; ++i) p[i] = mlrt_f32_to_f16(mlrt_f16_to_f32(p[i]) / (float)n_in); }
        else if (y->dtype == MLRT_BFLOAT16) { uint16_t *p = y->data; for (int64_t i = 0; i < n; ++i) p[i] = mlrt_f32_to_bf16(mlrt_bf16_to_f32(p[i]) / (float)n_in); }
        else return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "Mean needs a floating-point type");
    }
    return MLRT_OK;
}

#define VARIADIC_KERNEL(NAME, OP, MEAN)                                                             \
    static int k_##NAME(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, \
                        int32_t n_out, const void *params, size_t params_size) {                    \
        return run_variadic(ctx, in, n_in, out, n_out, OP, MEAN);                                   \
    }
VARIADIC_KERNEL(sum, OP_ADD, false)
VARIADIC_KERNEL(max, OP_MAX, false)
VARIADIC_KERNEL(min, OP_MIN, false)
VARIADIC_KERNEL(mean, OP_ADD, true)

MLRT_KERNEL(sum, "Sum", "", 1, MLRT_OPSET_MAX, MLRT_MASK_FLOATS | MASK_HALVES, k_sum);
MLRT_KERNEL(max, "Max", "", 1, MLRT_OPSET_MAX, MLRT_MASK_NUMERIC | MASK_HALVES, k_max);
MLRT_KERNEL(min, "Min", "", 1, MLRT_OPSET_MAX, MLRT_MASK_NUMERIC | MASK_HALVES, k_min);
MLRT_KERNEL(mean, "Mean", "", 1, MLRT_OPSET_MAX, MLRT_MASK_FLOATS | MASK_HALVES, k_mean);
