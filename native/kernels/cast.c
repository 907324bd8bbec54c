/* cast.c -- Cast and CastLike between bool, the eight integer types, float16,
 * bfloat16, float and double, and the low-precision types (float8 E4M3FN / E4M3FNUZ /
 * E5M2 / E5M2FNUZ / E8M0, float4 E2M1, int4 / uint4 / int2 / uint2).
 *
 * The output's dtype says what to convert to (the Python semantics chose it), so
 * the kernel takes no parameters.  Rules, as numpy's astype (onnx.reference):
 * float -> float rounds to nearest even (+-inf when out of range), float -> int
 * truncates toward zero, int -> int wraps, anything -> bool is "!= 0" (NaN is true),
 * bool -> number is 0/1.
 *
 * Float -> int out of the type's range (NaN and +-inf included) is undefined in ONNX;
 * mlrt's answer, the same for every float source (docs/undefined.md): what x86 gives,
 * the "integer indefinite" value of a 32-bit (64-bit for int64 / uint32 / uint64)
 * conversion where that conversion overflows, and the low bits of the truncated value
 * for narrower types.
 *
 * Low-precision types go through float (ml_dtypes' rules, src/half.c): to float8 with
 * `saturate` (out of range -> the largest finite value, else inf / NaN), to float8e8m0
 * with `round_mode`; to the 4- and 2-bit integers like to any integer (truncate toward
 * zero, keep the low bits); from them to an integer like from float.
 */
#include <math.h>

#include "cast.h"
#include "internal.h"

/* -- float -> integer, deterministic where C leaves it undefined -------------------- */

static inline int64_t f_to_i64(double v) {
    return (v >= -0x1p63 && v < 0x1p63) ? (int64_t)v : INT64_MIN;
}
static inline int32_t f_to_i32(double v) {
    return (v > -0x1p31 - 1.0 && v < 0x1p31) ? (int32_t)v : INT32_MIN;
}
static inline uint64_t f_to_u64(double v) {
    if (v >= 0x1p63) return (uint64_t)f_to_i64(v - 0x1p63) ^ (UINT64_C(1) << 63);
    return (uint64_t)f_to_i64(v);
}

/* -- one loop per (source, destination) pair ------------------------------------------- */

/* storage types */
typedef uint8_t ct_b;
typedef int8_t ct_i8;
typedef int16_t ct_i16;
typedef int32_t ct_i32;
typedef int64_t ct_i64;
typedef uint8_t ct_u8;
typedef uint16_t ct_u16;
typedef uint32_t ct_u32;
typedef uint64_t ct_u64;
typedef uint16_t ct_f16;
typedef uint16_t ct_bf16;
typedef float ct_f32;
typedef double ct_f64;

/* element -> a plain C value (halves widen to float, bool to 0/1) */
#define LOAD_b(v) ((uint8_t)((v) != 0))
#define LOAD_i8(v) (v)
#define LOAD_i16(v) (v)
#define LOAD_i32(v) (v)
#define LOAD_i64(v) (v)
#define LOAD_u8(v) (v)
#define LOAD_u16(v) (v)
#define LOAD_u32(v) (v)
#define LOAD_u64(v) (v)
#define LOAD_f16(v) mlrt_f16_to_f32(v)
#define LOAD_bf16(v) mlrt_bf16_to_f32(v)
#define LOAD_f32(v) (v)
#define LOAD_f64(v) (v)

/* a plain C value -> element of the destination type */
#define IS_FLOAT(v) _Generic((v), float: 1, double: 1, default: 0)
#define STORE_b(v) ((uint8_t)((v) != 0))
#define STORE_i8(v) (IS_FLOAT(v) ? (int8_t)f_to_i32((double)(v)) : (int8_t)(v))
#define STORE_i16(v) (IS_FLOAT(v) ? (int16_t)f_to_i32((double)(v)) : (int16_t)(v))
#define STORE_i32(v) (IS_FLOAT(v) ? f_to_i32((double)(v)) : (int32_t)(v))
#define STORE_i64(v) (IS_FLOAT(v) ? f_to_i64((double)(v)) : (int64_t)(v))
#define STORE_u8(v) (IS_FLOAT(v) ? (uint8_t)f_to_i32((double)(v)) : (uint8_t)(v))
#define STORE_u16(v) (IS_FLOAT(v) ? (uint16_t)f_to_i32((double)(v)) : (uint16_t)(v))
#define STORE_u32(v) (IS_FLOAT(v) ? (uint32_t)f_to_i64((double)(v)) : (uint32_t)(v))
#define STORE_u64(v) (IS_FLOAT(v) ? f_to_u64((double)(v)) : (uint64_t)(v))
#define STORE_f16(v) _Generic((v), double: mlrt_f64_to_f16((double)(v)), default: mlrt_f32_to_f16((float)(v)))
#define STORE_bf16(v) mlrt_f32_to_bf16((float)(v))
#define STORE_f32(v) ((float)(v))
#define STORE_f64(v) ((double)(v))

typedef struct cast_job { const void *x; void *y; } cast_job;

#define CAST_FN(S, D)                                                                  \
    static void cast_##S##_##D(void *arg, int64_t begin, int64_t end) {                \
        const cast_job *j = arg;                                                       \
        const ct_##S *x = j->x;                                                        \
        ct_##D *y = j->y;                                                              \
        for (int64_t i = begin; i < end; ++i) y[i] = STORE_##D(LOAD_##S(x[i]));        \
    }
#define CAST_ROW(S)                                                                    \
    CAST_FN(S, b) CAST_FN(S, i8) CAST_FN(S, i16) CAST_FN(S, i32) CAST_FN(S, i64)       \
    CAST_FN(S, u8) CAST_FN(S, u16) CAST_FN(S, u32) CAST_FN(S, u64) CAST_FN(S, f16)     \
    CAST_FN(S, bf16) CAST_FN(S, f32) CAST_FN(S, f64)
CAST_ROW(b) CAST_ROW(i8) CAST_ROW(i16) CAST_ROW(i32) CAST_ROW(i64) CAST_ROW(u8) CAST_ROW(u16)
CAST_ROW(u32) CAST_ROW(u64) CAST_ROW(f16) CAST_ROW(bf16) CAST_ROW(f32) CAST_ROW(f64)

#define CAST_ENTRY(S)                                                                              \
    {cast_##S##_b, cast_##S##_i8, cast_##S##_i16, cast_##S##_i32, cast_##S##_i64, cast_##S##_u8, \
     cast_##S##_u16, cast_##S##_u32, cast_##S##_u64, cast_##S##_f16, cast_##S##_bf16,             \
     cast_##S##_f32, cast_##S##_f64}
static const mlrt_range_fn cast_table[13][13] = {
    CAST_ENTRY(b), CAST_ENTRY(i8), CAST_ENTRY(i16), CAST_ENTRY(i32), CAST_ENTRY(i64),
    CAST_ENTRY(u8), CAST_ENTRY(u16), CAST_ENTRY(u32), CAST_ENTRY(u64), CAST_ENTRY(f16),
    CAST_ENTRY(bf16), CAST_ENTRY(f32), CAST_ENTRY(f64)};

/* float16 <-> float32, a row at a time on the vector units (src/half.c) */
static void cast_f16_rows(void *arg, int64_t begin, int64_t end) {
    const cast_job *j = arg;
    mlrt_f16_to_f32_row((const uint16_t *)j->x + begin, (float *)j->y + begin, end - begin);
}

static void cast_to_f16_rows(void *arg, int64_t begin, int64_t end) {
    const cast_job *j = arg;
    mlrt_f32_to_f16_row((const float *)j->x + begin, (uint16_t *)j->y + begin, end - begin);
}

/* row/column of a dtype in cast_table, -1 if the type cannot be cast here */
static int cast_slot(int32_t dtype) {
    switch (dtype) {
    case MLRT_BOOL: return 0;
    case MLRT_INT8: return 1;
    case MLRT_INT16: return 2;
    case MLRT_INT32: return 3;
    case MLRT_INT64: return 4;
    case MLRT_UINT8: return 5;
    case MLRT_UINT16: return 6;
    case MLRT_UINT32: return 7;
    case MLRT_UINT64: return 8;
    case MLRT_FLOAT16: return 9;
    case MLRT_BFLOAT16: return 10;
    case MLRT_FLOAT: return 11;
    case MLRT_DOUBLE: return 12;
    default: return -1;
    }
}

typedef struct copy_job { const char *x; char *y; size_t item; } copy_job;

static void copy_range(void *arg, int64_t begin, int64_t end) {
    const copy_job *j = arg;
    memcpy(j->y + (size_t)begin * j->item, j->x + (size_t)begin * j->item, (size_t)(end - begin) * j->item);
}

/* -- the low-precision types, one element at a time -------------------------------- */

/* element i as a float (floating sources; low-precision floats decode exactly) */
static inline float lp_load_float(const void *x, int64_t i, int32_t t) {
    if (mlrt_is_lowp_float(t)) return mlrt_lowp_to_f32(((const uint8_t *)x)[i], t);
    return (float)mlrt_load_as_double(x, i, t);
}

/* element i as an integer (integer and bool sources) */
static inline int64_t lp_load_int(const void *x, int64_t i, int32_t t) {
    switch (t) {
    case MLRT_BOOL: return ((const uint8_t *)x)[i] != 0;
    case MLRT_INT8: return ((const int8_t *)x)[i];
    case MLRT_INT16: return ((const int16_t *)x)[i];
    case MLRT_INT32: return ((const int32_t *)x)[i];
    case MLRT_INT64: return ((const int64_t *)x)[i];
    case MLRT_UINT8: return ((const uint8_t *)x)[i];
    case MLRT_UINT16: return ((const uint16_t *)x)[i];
    case MLRT_UINT32: return ((const uint32_t *)x)[i];
    case MLRT_UINT64: return (int64_t)((const uint64_t *)x)[i];
    default: return mlrt_lowp_int_load(((const uint8_t *)x)[i], t);
    }
}

static inline bool lp_is_int_source(int32_t t) {
    return t == MLRT_BOOL || mlrt_is_lowp_int(t) || (MLRT_MASK_INTS & MLRT_BIT(t)) != 0;
}

/* store an integer / a float into element i of any castable type, by the rules above */
#define LP_STORE(y, i, t, v)                                                                  \
    switch (t) {                                                                              \
    case MLRT_BOOL: ((ct_b *)(y))[i] = STORE_b(v); break;                                     \
    case MLRT_INT8: ((ct_i8 *)(y))[i] = STORE_i8(v); break;                                   \
    case MLRT_INT16: ((ct_i16 *)(y))[i] = STORE_i16(v); break;                                \
    case MLRT_INT32: ((ct_i32 *)(y))[i] = STORE_i32(v); break;                                \
    case MLRT_INT64: ((ct_i64 *)(y))[i] = STORE_i64(v); break;                                \
    case MLRT_UINT8: ((ct_u8 *)(y))[i] = STORE_u8(v); break;                                  \
    case MLRT_UINT16: ((ct_u16 *)(y))[i] = STORE_u16(v); break;                               \
    case MLRT_UINT32: ((ct_u32 *)(y))[i] = STORE_u32(v); break;                               \
    case MLRT_UINT64: ((ct_u64 *)(y))[i] = STORE_u64(v); break;                               \
    case MLRT_FLOAT16: ((ct_f16 *)(y))[i] = STORE_f16(v); break;                              \
    case MLRT_BFLOAT16: ((ct_bf16 *)(y))[i] = STORE_bf16(v); break;                           \
    case MLRT_FLOAT: ((ct_f32 *)(y))[i] = STORE_f32(v); break;                                \
    case MLRT_DOUBLE: ((ct_f64 *)(y))[i] = STORE_f64(v); break;                               \
    case MLRT_INT4: case MLRT_UINT4: ((uint8_t *)(y))[i] = (uint8_t)(STORE_i32(v) & 0xf); break; \
    case MLRT_INT2: case MLRT_UINT2: ((uint8_t *)(y))[i] = (uint8_t)(STORE_i32(v) & 0x3); break; \
    case MLRT_FLOAT8E8M0: ((uint8_t *)(y))[i] = mlrt_f32_to_e8m0((float)(v), sat, round); break; \
    default: ((uint8_t *)(y))[i] = mlrt_f32_to_lowp((float)(v), t, sat); break;               \
    }

typedef struct lp_job { const void *x; void *y; int32_t xt, yt; int saturate, round_mode; } lp_job;

static void cast_lowp(void *arg, int64_t begin, int64_t end) {
    const lp_job *j = arg;
    const int32_t xt = j->xt, yt = j->yt;
    const int sat = j->saturate, round = j->round_mode;
    if (lp_is_int_source(xt)) {
        for (int64_t i = begin; i < end; ++i) {
            int64_t v = lp_load_int(j->x, i, xt);
            if (xt == MLRT_UINT64 && v < 0) { /* beyond int64: as a float */
                float f = (float)(uint64_t)v;
                LP_STORE(j->y, i, yt, f);
            } else {
                LP_STORE(j->y, i, yt, v);
            }
        }
    } else if (xt == MLRT_DOUBLE && !mlrt_is_lowp_float(yt)) { /* double -> 4/2-bit int: no float detour */
        for (int64_t i = begin; i < end; ++i) {
            double v = ((const double *)j->x)[i];
            LP_STORE(j->y, i, yt, v);
        }
    } else {
        for (int64_t i = begin; i < end; ++i) {
            float v = lp_load_float(j->x, i, xt);
            LP_STORE(j->y, i, yt, v);
        }
    }
}

static bool lp_castable(int32_t t) {
    return cast_slot(t) >= 0 || mlrt_is_lowp_float(t) || mlrt_is_lowp_int(t);
}

/* Cast(x) and CastLike(x, like): y takes y's own dtype; `like` only typed y. */
static int k_cast(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                  const void *params, size_t params_size) {
    MLRT_CHECK((n_in == 1 || n_in == 2) && n_out == 1, "expects 1 or 2 inputs and 1 output");
    const mlrt_tensor *x = &in[0];
    mlrt_tensor *y = &out[0];
    MLRT_CHECK(mlrt_same_shape(x, y), "output shape must match the input's");
    MLRT_CHECK(mlrt_is_contiguous(x) && mlrt_is_contiguous(y), "needs contiguous tensors");
    mlrt_cast_params defaults = {1, MLRT_ROUND_UP};
    const mlrt_cast_params *p = &defaults;
    if (params != NULL || params_size != 0) {
        MLRT_PARAMS(mlrt_cast_params, given, params, params_size);
        p = given;
    }
    MLRT_CHECK(p->round_mode >= MLRT_ROUND_UP && p->round_mode <= MLRT_ROUND_NEAREST,
               "round_mode %lld is not 0 (up), 1 (down) or 2 (nearest)",
               (long long)p->round_mode);
    if (!lp_castable(x->dtype) || !lp_castable(y->dtype))
        return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "cast from element type %d to %d is not supported", x->dtype, y->dtype);
    int64_t n = mlrt_numel(y);
    if (n == 0) return MLRT_OK;
    int s = cast_slot(x->dtype), d = cast_slot(y->dtype);
    if (s < 0 || d < 0) {
        lp_job job = {x->data, y->data, x->dtype, y->dtype, p->saturate != 0, (int)p->round_mode};
        if (x->dtype == y->dtype && mlrt_is_lowp_float(x->dtype) && x->dtype != MLRT_FLOAT8E8M0 &&
            (!p->saturate || x->dtype == MLRT_FLOAT4E2M1)) {
            copy_job copy = {x->data, y->data, 1}; /* same type, nothing to saturate: the bytes */
            mlrt_parallel_for(ctx, n, 65536, copy_range, &copy);
        } else {
            mlrt_parallel_for(ctx, n, 16384, cast_lowp, &job);
        }
        return MLRT_OK;
    }
    if (s == d && s != 0) { /* same type: copy the bytes (bool is normalised to 0/1 below) */
        copy_job job = {x->data, y->data, mlrt_dtype_size(y->dtype)};
        mlrt_parallel_for(ctx, n, 65536, copy_range, &job);
        return MLRT_OK;
    }
    cast_job job = {x->data, y->data};
    mlrt_range_fn fn = cast_table[s][d];
    if (x->dtype == MLRT_FLOAT16 && y->dtype == MLRT_FLOAT) fn = cast_f16_rows;
    if (x->dtype == MLRT_FLOAT && y->dtype == MLRT_FLOAT16) fn = cast_to_f16_rows;
    if (fn != cast_table[s][d]) mlrt_note_path(mlrt_half_rows_path());
    mlrt_parallel_for(ctx, n, 16384, fn, &job);
    return MLRT_OK;
}

#define MASK_CAST (MLRT_MASK_ALL | MLRT_MASK_LOWP)
MLRT_KERNEL(cast, "Cast", "", 1, MLRT_OPSET_MAX, MASK_CAST, k_cast);
