/* pow.c -- Pow (base and exponent of possibly different types; y has the base's
 * type) and Mod (fmod or Python-style sign rules).
 *
 * Inputs arrive as views of the output's shape (broadcast dims have stride 0, set
 * by the Python semantics).  As numpy: an integer base with an integer exponent is
 * exact integer power (wrapping); when either is floating point the power is taken
 * in floating point and converted to the base's type (truncated for integers). */
#include <math.h>

#include "nditer.h"
#include "pow.h"
#define load_f mlrt_load_as_double

/* defined in cast.c */

#define MASK_FLOAT_TYPES (MLRT_MASK_FLOATS | MLRT_BIT(MLRT_FLOAT16) | MLRT_BIT(MLRT_BFLOAT16))
#define MASK_POW (MASK_FLOAT_TYPES | MLRT_MASK_INTS)

static inline bool is_float_type(int32_t t) { return ((MASK_FLOAT_TYPES >> t) & 1) != 0; }

typedef struct bin_job {
    mlrt_rows rows;
    const void *a, *b;
    void *y;
    int32_t ta, tb;  /* element types of a (= y) and b */
    int64_t fmod;
} bin_job;

/* Walk rows: inside BODY, pa/pb/py are the row starts, sa/sb the last-dim strides. */
#define FOR_ROWS(TA, TB, ...)                                                          \
    {                                                                                  \
        const TA *as = j->a;                                                           \
        const TB *bs = j->b;                                                           \
        TA *ys = j->y;                                                                 \
        for (int64_t r = begin; r < end; ++r) {                                        \
            mlrt_rows_offsets(&j->rows, r, off);                                       \
            const TA *pa = as + off[0];                                                \
            const TB *pb = bs + off[1];                                                \
            TA *py = ys + off[2];                                                      \
            (void)pb;                                                                  \
            for (int64_t i = 0; i < n; ++i) { __VA_ARGS__ }                           \
        }                                                                              \
    }
#define ROW_SETUP                                                                      \
    const bin_job *j = arg;                                                            \
    int64_t n = j->rows.row_len, off[3];                                               \
    int64_t sa = j->rows.strides[0][j->rows.rank - 1], sb = j->rows.strides[1][j->rows.rank - 1];

/* -- element access by runtime type (the mixed-type Pow path) --------------------------- */

static inline int64_t load_i(const void *p, int64_t i, int32_t t) {
    switch (t) {
    case MLRT_INT8: return ((const int8_t *)p)[i];
    case MLRT_INT16: return ((const int16_t *)p)[i];
    case MLRT_INT32: return ((const int32_t *)p)[i];
    case MLRT_INT64: return ((const int64_t *)p)[i];
    case MLRT_UINT8: return ((const uint8_t *)p)[i];
    case MLRT_UINT16: return ((const uint16_t *)p)[i];
    case MLRT_UINT32: return ((const uint32_t *)p)[i];
    case MLRT_UINT64: return (int64_t)((const uint64_t *)p)[i];
    default: return 0;
    }
}

/* float -> int as x86 does it (out of range and NaN give the "indefinite" value) */
static inline int64_t f_to_i64(double v) { return (v >= -0x1p63 && v < 0x1p63) ? (int64_t)v : INT64_MIN; }
static inline int32_t f_to_i32(double v) { return (v > -0x1p31 - 1.0 && v < 0x1p31) ? (int32_t)v : INT32_MIN; }

static inline void store_f(void *p, int64_t i, int32_t t, double v) {
    switch (t) {
    case MLRT_FLOAT: ((float *)p)[i] = (float)v; break;
    case MLRT_DOUBLE: ((double *)p)[i] = v; break;
    case MLRT_FLOAT16: ((uint16_t *)p)[i] = mlrt_f32_to_f16((float)v); break;
    case MLRT_BFLOAT16: ((uint16_t *)p)[i] = mlrt_f32_to_bf16((float)v); break;
    case MLRT_INT8: ((int8_t *)p)[i] = (int8_t)f_to_i32(v); break;
    case MLRT_INT16: ((int16_t *)p)[i] = (int16_t)f_to_i32(v); break;
    case MLRT_INT32: ((int32_t *)p)[i] = f_to_i32(v); break;
    case MLRT_INT64: ((int64_t *)p)[i] = f_to_i64(v); break;
    case MLRT_UINT8: ((uint8_t *)p)[i] = (uint8_t)f_to_i32(v); break;
    case MLRT_UINT16: ((uint16_t *)p)[i] = (uint16_t)f_to_i32(v); break;
    case MLRT_UINT32: ((uint32_t *)p)[i] = (uint32_t)f_to_i64(v); break;
    case MLRT_UINT64: ((uint64_t *)p)[i] = (uint64_t)f_to_i64(v); break;
    }
}

static inline void store_i(void *p, int64_t i, int32_t t, uint64_t v) {
    switch (t) {
    case MLRT_INT8: case MLRT_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case MLRT_INT16: case MLRT_UINT16: ((uint16_t *)p)[i] = (uint16_t)v; break;
    case MLRT_INT32: case MLRT_UINT32: ((uint32_t *)p)[i] = (uint32_t)v; break;
    case MLRT_INT64: case MLRT_UINT64: ((uint64_t *)p)[i] = v; break;
    }
}

/* base^e in wrapping integer arithmetic; a negative e gives the integer part of 1/base^-e */
static inline uint64_t ipow(int64_t base, int64_t e) {
    if (e < 0) return base == 1 ? 1 : base == -1 ? ((e & 1) ? UINT64_MAX : 1) : 0;
    uint64_t r = 1, b = (uint64_t)base;
    for (uint64_t k = (uint64_t)e; k; k >>= 1) {
        if (k & 1) r *= b;
        b *= b;
    }
    return r;
}

/* The exponent when it is one float constant (broadcast over the whole output), else NaN. */
static float constant_exponent(const bin_job *j, int64_t *off) {
    for (int32_t d = 0; d < j->rows.rank; ++d)
        if (j->rows.strides[1][d] != 0) return NAN;
    mlrt_rows_offsets(&j->rows, 0, off);
    return ((const float *)j->b)[off[1]];
}

/* Rows of float x^e: x^2 as x * x (exact), x^3 as x * x * x (as onnxruntime computes it:
 * within an ulp of powf), else powf. */
static void pow_rows_f32(const bin_job *j, int64_t begin, int64_t end) {
    int64_t n = j->rows.row_len, off[3];
    int64_t sa = j->rows.strides[0][j->rows.rank - 1], sb = j->rows.strides[1][j->rows.rank - 1];
    float e = j->rows.n_rows > 0 ? constant_exponent(j, off) : NAN;
    for (int64_t r = begin; r < end; ++r) {
        mlrt_rows_offsets(&j->rows, r, off);
        const float *pa = (const float *)j->a + off[0], *pb = (const float *)j->b + off[1];
        float *py = (float *)j->y + off[2];
        if (e == 2.0f) {
            MLRT_ROW2(float, float, u * u)
        } else if (e == 3.0f) {
            MLRT_ROW2(float, float, u * u * u)
        } else {
            MLRT_ROW2(float, float, powf(u, v))
        }
    }
}

static void pow_range(void *arg, int64_t begin, int64_t end) {
    ROW_SETUP
    if (j->ta == j->tb && j->ta == MLRT_FLOAT) {
        pow_rows_f32(j, begin, end);
        return;
    }
    if (j->ta == j->tb && j->ta == MLRT_DOUBLE) {
        FOR_ROWS(double, double, py[i] = pow(pa[i * sa], pb[i * sb]);)
        return;
    }
    /* mixed or narrow types: one element at a time through double or int64 */
    bool in_float = is_float_type(j->ta) || is_float_type(j->tb);
    for (int64_t r = begin; r < end; ++r) {
        mlrt_rows_offsets(&j->rows, r, off);
        for (int64_t i = 0; i < n; ++i) {
            int64_t ia = off[0] + i * sa, ib = off[1] + i * sb, iy = off[2] + i;
            if (in_float) store_f(j->y, iy, j->ta, pow(load_f(j->a, ia, j->ta), load_f(j->b, ib, j->tb)));
            else store_i(j->y, iy, j->ta, ipow(load_i(j->a, ia, j->ta), load_i(j->b, ib, j->tb)));
        }
    }
}

static int k_pow(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                 const void *params, size_t params_size) {
    MLRT_CHECK(n_in == 2 && n_out == 1, "expects 2 inputs and 1 output");
    const mlrt_tensor *a = &in[0], *b = &in[1];
    mlrt_tensor *y = &out[0];
    if (a->dtype < 0 || a->dtype >= 64 || !((MASK_POW >> a->dtype) & 1) ||
        b->dtype < 0 || b->dtype >= 64 || !((MASK_POW >> b->dtype) & 1))
        return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "element types %d ^ %d not supported", a->dtype, b->dtype);
    MLRT_CHECK(y->dtype == a->dtype, "output type %d must be the base's type %d", y->dtype, a->dtype);
    MLRT_CHECK(mlrt_same_shape(a, y) && mlrt_same_shape(b, y), "operands must be views of the output's shape");
    bin_job job = {.a = a->data, .b = b->data, .y = y->data, .ta = a->dtype, .tb = b->dtype};
    const mlrt_tensor *ops[3] = {a, b, y};
    mlrt_rows_init(&job.rows, y, ops, 3);
    int64_t grain = job.rows.row_len >= 4096 ? 1 : 4096 / (job.rows.row_len + 1) + 1;
    mlrt_parallel_for(ctx, job.rows.n_rows, grain, pow_range, &job);
    return MLRT_OK;
}

MLRT_KERNEL(pow, "Pow", "", 1, MLRT_OPSET_MAX, MASK_POW, k_pow);

/* -- Mod ------------------------------------------------------------------------------------- */

/* Python's float %: the result takes the divisor's sign (numpy's np.mod) */
static inline double py_fmod(double a, double b) {
    double m = fmod(a, b);
    if (m != 0) {
        if ((b < 0) != (m < 0)) m += b;
    } else {
        m = copysign(0.0, b);
    }
    return m;
}
static inline float py_fmodf(float a, float b) {
    float m = fmodf(a, b);
    if (m != 0) {
        if ((b < 0) != (m < 0)) m += b;
    } else {
        m = copysignf(0.0f, b);
    }
    return m;
}

/* truncated (C) and floored (Python) remainders, 0 for a zero divisor, no overflow on MIN % -1 */
#define TRUNC_MOD(T, u, v) ((v) == 0 || (v) == (T)-1 ? (T)0 : (T)((u) % (v)))
#define FLOOR_MOD(T, u, v) ((v) == 0 || (v) == (T)-1 ? (T)0 : (T)(((u) % (v) != 0 && (((u) % (v) < 0) != ((v) < 0))) ? (u) % (v) + (v) : (u) % (v)))

#define MOD_SIGNED(T)                                                                            \
    if (j->fmod) FOR_ROWS(T, T, T u = pa[i * sa], v = pb[i * sb]; py[i] = TRUNC_MOD(T, u, v);)   \
    else FOR_ROWS(T, T, T u = pa[i * sa], v = pb[i * sb]; py[i] = FLOOR_MOD(T, u, v);)            \
    break;
#define MOD_UNSIGNED(T) FOR_ROWS(T, T, T u = pa[i * sa], v = pb[i * sb]; py[i] = v == 0 ? 0 : (T)(u % v);) break;
#define MOD_FLOAT(T, FMOD, PYMOD)                                                                \
    if (j->fmod) FOR_ROWS(T, T, py[i] = FMOD(pa[i * sa], pb[i * sb]);)                           \
    else FOR_ROWS(T, T, py[i] = PYMOD(pa[i * sa], pb[i * sb]);)                                  \
    break;
#define MOD_HALF(TO, FROM)                                                                       \
    FOR_ROWS(uint16_t, uint16_t, float u = TO(pa[i * sa]), v = TO(pb[i * sb]);                   \
             py[i] = FROM(j->fmod ? fmodf(u, v) : py_fmodf(u, v));)                              \
    break;

static void mod_range(void *arg, int64_t begin, int64_t end) {
    ROW_SETUP
    switch (j->ta) {
    case MLRT_FLOAT: MOD_FLOAT(float, fmodf, py_fmodf)
    case MLRT_DOUBLE: MOD_FLOAT(double, fmod, py_fmod)
    case MLRT_FLOAT16: MOD_HALF(mlrt_f16_to_f32, mlrt_f32_to_f16)
    case MLRT_BFLOAT16: MOD_HALF(mlrt_bf16_to_f32, mlrt_f32_to_bf16)
    case MLRT_INT8: MOD_SIGNED(int8_t)
    case MLRT_INT16: MOD_SIGNED(int16_t)
    case MLRT_INT32: MOD_SIGNED(int32_t)
    case MLRT_INT64: MOD_SIGNED(int64_t)
    case MLRT_UINT8: MOD_UNSIGNED(uint8_t)
    case MLRT_UINT16: MOD_UNSIGNED(uint16_t)
    case MLRT_UINT32: MOD_UNSIGNED(uint32_t)
    case MLRT_UINT64: MOD_UNSIGNED(uint64_t)
    }
}

static int k_mod(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                 const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_mod_params, p, params, params_size);
    MLRT_CHECK(n_in == 2 && n_out == 1, "expects 2 inputs and 1 output");
    const mlrt_tensor *a = &in[0], *b = &in[1];
    mlrt_tensor *y = &out[0];
    if (a->dtype < 0 || a->dtype >= 64 || !((MASK_POW >> a->dtype) & 1))
        return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "element type %d not supported", a->dtype);
    MLRT_CHECK(b->dtype == a->dtype && y->dtype == a->dtype, "operand types differ (%d, %d -> %d)", a->dtype, b->dtype, y->dtype);
    MLRT_CHECK(mlrt_same_shape(a, y) && mlrt_same_shape(b, y), "operands must be views of the output's shape");
    bin_job job = {.a = a->data, .b = b->data, .y = y->data, .ta = a->dtype, .tb = b->dtype, .fmod = p->fmod};
    const mlrt_tensor *ops[3] = {a, b, y};
    mlrt_rows_init(&job.rows, y, ops, 3);
    int64_t grain = job.rows.row_len >= 4096 ? 1 : 4096 / (job.rows.row_len + 1) + 1;
    mlrt_parallel_for(ctx, job.rows.n_rows, grain, mod_range, &job);
    return MLRT_OK;
}

MLRT_KERNEL(mod, "Mod", "", 1, MLRT_OPSET_MAX, MASK_POW, k_mod);
