/* quantize.c -- QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear.
 *
 * QuantizeLinear: y = saturate(round(x / scale) + zero_point), per tensor, per axis or
 * blocked (the Python semantics resolve which scale each element uses into strides);
 * x float / float16 / bfloat16 / double / int32, y int8 / uint8 / int16 / uint16 / int4 /
 * uint4 / int2 / uint2 (value in the low bits of a byte), or a float8 type (x / scale
 * converted with `saturate`, the zero point is not added) or float4 E2M1 (x / scale +
 * zero point converted, saturating).
 * As in onnx.reference, x and the scale are rounded to the promoted (or `precision`)
 * type and divided in it, the quotient is rounded half to even, the zero point added,
 * and the result saturated to y's range (NaN goes to the low end of the range).
 *
 * DequantizeLinear: y = (x - zero_point) * scale with x int8 / uint8 / int16 / uint16 /
 * int32 / int4 / uint4 / int2 / uint2 / float8 / float4 (the float types ignore the zero
 * point), y float / float16 / bfloat16 (/ double): the product is formed in float (in
 * double for int32 x, whose conversion to float rounds first), then y's type.
 *
 * DynamicQuantizeLinear: float x to uint8 with a scale and zero point covering
 * [min(x, 0), max(x, 0)], in float32 arithmetic step for step as onnxruntime computes them
 * (and the reference, where the spec defines the result): NaN elements take no part in
 * the range (and quantize to 0), an empty range (x all zero, or empty) has scale 1
 * (docs/undefined.md).
 */
#include <math.h>
#include <stdlib.h>

#include "gemm.h" /* mlrt_ctx_threads */
#include "internal.h"
#include "quantize.h"
#define q_load mlrt_load_as_double

#define Q_GRAIN 16384

/* element i of a tensor of type t, as a double (0 for a type not listed) */
/* v rounded (to nearest even) to floating type t, back as a double */
static inline double q_round(double v, int32_t t) {
    switch (t) {
    case MLRT_FLOAT: return (float)v;
    case MLRT_FLOAT16: return mlrt_f16_to_f32(mlrt_f64_to_f16(v));
    case MLRT_BFLOAT16: return mlrt_bf16_to_f32(mlrt_f32_to_bf16((float)v));
    default: return v;
    }
}

static bool q_int_range(int32_t t, int32_t *lo, int32_t *hi) {
    switch (t) {
    case MLRT_UINT8: *lo = 0, *hi = 255; return true;
    case MLRT_INT8: *lo = -128, *hi = 127; return true;
    case MLRT_UINT16: *lo = 0, *hi = 65535; return true;
    case MLRT_INT16: *lo = -32768, *hi = 32767; return true;
    case MLRT_UINT4: *lo = 0, *hi = 15; return true;
    case MLRT_INT4: *lo = -8, *hi = 7; return true;
    case MLRT_UINT2: *lo = 0, *hi = 3; return true;
    case MLRT_INT2: *lo = -2, *hi = 1; return true;
    default: return false;
    }
}

static bool q_is_float(int32_t t) {
    return t == MLRT_FLOAT || t == MLRT_DOUBLE || t == MLRT_FLOAT16 || t == MLRT_BFLOAT16;
}

/* round(q) + zp saturated to [lo, hi]; NaN gives lo */
static inline int32_t q_saturate(double q, double zp, int32_t lo, int32_t hi) {
    double v = nearbyint(q) + zp;
    if (v != v || v <= lo) return lo;
    return v >= hi ? hi : (int32_t)v;
}

static inline void q_store_int(void *p, int64_t i, int32_t t, int32_t v) {
    switch (t) {
    case MLRT_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case MLRT_INT8: ((int8_t *)p)[i] = (int8_t)v; break;
    case MLRT_UINT16: ((uint16_t *)p)[i] = (uint16_t)v; break;
    case MLRT_INT16: ((int16_t *)p)[i] = (int16_t)v; break;
    case MLRT_UINT4: case MLRT_INT4: ((uint8_t *)p)[i] = (uint8_t)(v & 0xf); break;
    case MLRT_UINT2: case MLRT_INT2: ((uint8_t *)p)[i] = (uint8_t)(v & 0x3); break;
    }
}

/* the float8 / float4 outputs of QuantizeLinear */
static bool q_is_lowp_out(int32_t t) { return mlrt_is_lowp_float(t) && t != MLRT_FLOAT8E8M0; }

static inline void q_store_float(void *p, int64_t i, int32_t t, double v) {
    switch (t) {
    case MLRT_FLOAT: ((float *)p)[i] = (float)v; break;
    case MLRT_DOUBLE: ((double *)p)[i] = v; break;
    case MLRT_FLOAT16: ((uint16_t *)p)[i] = mlrt_f64_to_f16(v); break;
    case MLRT_BFLOAT16: ((uint16_t *)p)[i] = mlrt_f32_to_bf16((float)v); break;
    }
}

/* The common cases as loops that vectorize, cloned per ISA level (MLRT_ISA_FN). */

#define Q_MAGIC 12582912.0f /* 1.5 * 2^23: (v + M) - M rounds |v| < 2^22 to nearest even */

/* float x / float scale to an integer type: the bounds lo / hi are the range less the
 * zero point (exact in float), so clamping first keeps the rounding trick in range */
#define DEFINE_Q_FAST(T, SUF)                                                                          \
    MLRT_ISA_FN(, void, quantize_f32_##SUF, (const float *x, T *y, int64_t n, float s, float zp, float lo, \
                                             float hi), (x, y, n, s, zp, lo, hi)) {                     \
        for (int64_t i = 0; i < n; ++i) {                                                              \
            float v = x[i] / s;                                                                        \
            v = v != v ? lo : v;                                                                       \
            v = v < lo ? lo : v > hi ? hi : v;                                                         \
            v = (v + Q_MAGIC) - Q_MAGIC;                                                               \
            y[i] = (T)(int32_t)(v + zp);                                                               \
        }                                                                                              \
    }                                                                                                  \
    MLRT_ISA_FN(, void, dequantize_f32_##SUF, (const T *x, float *y, int64_t n, float s, float zp),    \
                (x, y, n, s, zp)) {                                                                    \
        for (int64_t i = 0; i < n; ++i) y[i] = ((float)x[i] - zp) * s;                                 \
    }
DEFINE_Q_FAST(uint8_t, u8)
DEFINE_Q_FAST(int8_t, i8)
DEFINE_Q_FAST(uint16_t, u16)
DEFINE_Q_FAST(int16_t, i16)

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define Q_X86 1
/* quantize_f32_u8 / _i8's steps on 16 lanes, written out (the compiler's vectorization of
 * the C loop spends more on masks and blends than on the division): vmaxps (v, lo) is lo
 * for a NaN v (its second operand), roundscale rounds to nearest even as the magic number
 * does (but for the sign of a zero, which the zero point's addition and the conversion
 * drop); the sums are whole numbers in the type's range, narrowed exactly. */
__attribute__((target("avx512f"))) static void quantize_f32_8bit_avx512(const float *x, void *y, int64_t n, float s,
                                                                       float zp, float lo, float hi, bool s8) {
    __m512 vs = _mm512_set1_ps(s), vz = _mm512_set1_ps(zp), vl = _mm512_set1_ps(lo), vh = _mm512_set1_ps(hi);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512 v = _mm512_div_ps(_mm512_loadu_ps(x + i), vs);
        v = _mm512_min_ps(_mm512_max_ps(v, vl), vh);
        v = _mm512_add_ps(_mm512_roundscale_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), vz);
        __m512i q = _mm512_cvttps_epi32(v);
        _mm_storeu_si128((__m128i *)((char *)y + i), s8 ? _mm512_cvtsepi32_epi8(q) : _mm512_cvtusepi32_epi8(q));
    }
    if (s8) quantize_f32_i8(x + i, (int8_t *)y + i, n - i, s, zp, lo, hi);
    else quantize_f32_u8(x + i, (uint8_t *)y + i, n - i, s, zp, lo, hi);
}
#endif

/* the fast loops for one row of n elements at offset `at`; false if the types have none */
static bool quantize_row_fast(int32_t yt, const float *x, void *y, int64_t at, int64_t n, float s, double zp,
                              int32_t lo, int32_t hi) {
    float z = (float)zp, l = (float)(lo - zp), h = (float)(hi - zp);
#ifdef Q_X86
    if ((yt == MLRT_UINT8 || yt == MLRT_INT8) && MLRT_X86_HAS(MLRT_ISA_AVX512, AVX512F)) {
        quantize_f32_8bit_avx512(x + at, (char *)y + at, n, s, z, l, h, yt == MLRT_INT8);
        return true;
    }
#endif
    switch (yt) {
    case MLRT_UINT8: quantize_f32_u8(x + at, (uint8_t *)y + at, n, s, z, l, h); return true;
    case MLRT_INT8: quantize_f32_i8(x + at, (int8_t *)y + at, n, s, z, l, h); return true;
    case MLRT_UINT16: quantize_f32_u16(x + at, (uint16_t *)y + at, n, s, z, l, h); return true;
    case MLRT_INT16: quantize_f32_i16(x + at, (int16_t *)y + at, n, s, z, l, h); return true;
    default: return false;
    }
}

static bool dequantize_row_fast(int32_t xt, const void *x, float *y, int64_t at, int64_t n, float s, float zp) {
    switch (xt) {
    case MLRT_UINT8: dequantize_f32_u8((const uint8_t *)x + at, y + at, n, s, zp); return true;
    case MLRT_INT8: dequantize_f32_i8((const int8_t *)x + at, y + at, n, s, zp); return true;
    case MLRT_UINT16: dequantize_f32_u16((const uint16_t *)x + at, y + at, n, s, zp); return true;
    case MLRT_INT16: dequantize_f32_i16((const int16_t *)x + at, y + at, n, s, zp); return true;
    default: return false;
    }
}

typedef struct quant_job {
    const mlrt_quantize_params *p;
    const void *x, *scale, *zp;
    void *y;
    int32_t xt, st, zt, yt, ct;
    int32_t lo, hi;
    int saturate;
} quant_job;

/* element i of y from the quotient q = x / scale and the zero point */
static inline void q_store_quant(const quant_job *j, int64_t i, double q, double zp) {
    if (j->yt == MLRT_FLOAT4E2M1)
        ((uint8_t *)j->y)[i] = mlrt_f32_to_lowp((float)(j->zp ? q + zp : q), j->yt, 1); /* keeps -0 */
    else if (q_is_lowp_out(j->yt))
        ((uint8_t *)j->y)[i] = mlrt_f32_to_lowp((float)q, j->yt, j->saturate);
    else
        q_store_int(j->y, i, j->yt, q_saturate(q, zp, j->lo, j->hi));
}

/* Work is split into segments of rows of `inner` elements: task t is segment
 * t % tiles of row t / tiles, so a single long row (per tensor) spreads over the pool. */
#define Q_TILE 16384

/* scale / zero point offset of the start of row r (= o * axis_len + a) */
static inline int64_t q_row_base(const mlrt_quantize_params *p, int64_t r) {
    int64_t o = r / p->axis_len, a = r % p->axis_len;
    return o * p->s_outer + (a / p->block_size) * p->s_block;
}

static inline int64_t q_tiles(int64_t inner) { return inner > Q_TILE ? (inner + Q_TILE - 1) / Q_TILE : 1; }

static void quantize_tasks(void *arg, int64_t begin, int64_t end) {
    const quant_job *j = arg;
    const mlrt_quantize_params *p = j->p;
    int64_t tiles = q_tiles(p->inner);
    for (int64_t t = begin; t < end; ++t) {
        int64_t r = t / tiles, i0 = (t % tiles) * Q_TILE, i1 = i0 + Q_TILE < p->inner ? i0 + Q_TILE : p->inner;
        int64_t base = q_row_base(p, r), at = r * p->inner;
        if (p->s_inner != 0) {
            for (int64_t i = i0; i < i1; ++i) {
                int64_t k = base + i * p->s_inner;
                double s = q_round(q_load(j->scale, k, j->st), j->ct);
                double zp = j->zp ? q_load(j->zp, k, j->zt) : 0;
                double q = q_round(q_round(q_load(j->x, at + i, j->xt), j->ct) / s, j->ct);
                q_store_quant(j, at + i, q, zp);
            }
            continue;
        }
        double s = q_round(q_load(j->scale, base, j->st), j->ct);
        double zp = j->zp ? q_load(j->zp, base, j->zt) : 0;
        if (j->xt == MLRT_FLOAT && j->ct == MLRT_FLOAT &&
            quantize_row_fast(j->yt, j->x, j->y, at + i0, i1 - i0, (float)s, zp, j->lo, j->hi))
            continue;
        for (int64_t i = i0; i < i1; ++i) {
            double q = q_round(q_round(q_load(j->x, at + i, j->xt), j->ct) / s, j->ct);
            q_store_quant(j, at + i, q, zp);
        }
    }
}

static void dequantize_tasks(void *arg, int64_t begin, int64_t end) {
    const quant_job *j = arg;
    const mlrt_quantize_params *p = j->p;
    int64_t tiles = q_tiles(p->inner);
    bool fast = p->s_inner == 0 && j->yt == MLRT_FLOAT && j->ct == MLRT_FLOAT && j->xt != MLRT_INT32;
    for (int64_t t = begin; t < end; ++t) {
        int64_t r = t / tiles, i0 = (t % tiles) * Q_TILE, i1 = i0 + Q_TILE < p->inner ? i0 + Q_TILE : p->inner;
        int64_t base = q_row_base(p, r), at = r * p->inner;
        if (fast) { /* 8 / 16-bit x less its zero point is exact in float: one float product */
            float s = (float)q_load(j->scale, base, j->st), zp = j->zp ? (float)q_load(j->zp, base, j->zt) : 0.0f;
            if (dequantize_row_fast(j->xt, j->x, j->y, at + i0, i1 - i0, s, zp)) continue;
        }
        for (int64_t i = i0; i < i1; ++i) {
            int64_t k = base + i * p->s_inner;
            double s = q_load(j->scale, k, j->st);
            double zp = j->zp ? q_load(j->zp, k, j->zt) : 0;
            double d = (double)(float)q_load(j->x, at + i, j->xt) - zp;
            q_store_float(j->y, at + i, j->yt, q_round(d * s, j->ct));
        }
    }
}

/* Common checks: x and y contiguous of one shape covered by [outer, axis_len, inner];
 * scale (and zero point) contiguous and large enough for every index the strides make. */
static int q_setup(const mlrt_quantize_params *p, const mlrt_tensor *in, int32_t n_in, const mlrt_tensor *out,
                   int32_t n_out, const char *op, quant_job *j) {
    MLRT_CHECK((n_in == 2 || n_in == 3) && n_out == 1, "%s: expects 2 or 3 inputs and 1 output", op);
    const mlrt_tensor *x = &in[0], *s = &in[1], *zp = n_in == 3 && mlrt_present(&in[2]) ? &in[2] : NULL;
    const mlrt_tensor *y = &out[0];
    MLRT_CHECK(mlrt_same_shape(x, y), "%s: y must have x's shape", op);
    MLRT_CHECK(mlrt_is_contiguous(x) && mlrt_is_contiguous(y) && mlrt_is_contiguous(s) && (!zp || mlrt_is_contiguous(zp)),
               "%s: needs contiguous tensors", op);
    int64_t on, all, numel = mlrt_numel(x);
    MLRT_CHECK(p->outer >= 0 && p->axis_len >= 0 && p->inner >= 0 && p->block_size >= 1 && p->s_outer >= 0 &&
                   p->s_block >= 0 && p->s_inner >= 0,
               "%s: bad block geometry", op);
    MLRT_CHECK(!__builtin_mul_overflow(p->outer, p->axis_len, &on) && !__builtin_mul_overflow(on, p->inner, &all) &&
                   all == numel,
               "%s: [outer, axis, inner] = [%lld, %lld, %lld] does not cover x (%lld elements)", op,
               (long long)p->outer, (long long)p->axis_len, (long long)p->inner, (long long)numel);
    int64_t n_scale = mlrt_numel(s);
    MLRT_CHECK(!zp || mlrt_numel(zp) == n_scale, "%s: zero point and scale have different sizes", op);
    if (numel > 0) {
        /* the largest index any element uses, without overflow */
        int64_t a = 0, b = 0, c = 0, top;
        bool ovf = __builtin_mul_overflow(p->outer - 1, p->s_outer, &a) ||
                   __builtin_mul_overflow((p->axis_len - 1) / p->block_size, p->s_block, &b) ||
                   __builtin_mul_overflow(p->inner - 1, p->s_inner, &c) || __builtin_add_overflow(a, b, &top) ||
                   __builtin_add_overflow(top, c, &top);
        MLRT_CHECK(!ovf && top < n_scale, "%s: the scale has %lld elements, too few for x's quantization blocks", op,
                   (long long)n_scale);
    }
    *j = (quant_job){p, x->data, s->data, zp ? zp->data : NULL, y->data, x->dtype, s->dtype,
                     zp ? zp->dtype : MLRT_UNDEFINED, y->dtype, (int32_t)p->compute_dtype, 0, 0, p->saturate != 0};
    MLRT_CHECK(q_is_float(s->dtype) || s->dtype == MLRT_INT32, "%s: scale type %d not supported", op, s->dtype);
    MLRT_CHECK(q_is_float(j->ct), "%s: compute type %d is not a floating type", op, j->ct);
    return MLRT_OK;
}

/* run fn over every (row, segment) task */
static void q_run(const mlrt_context *ctx, const mlrt_quantize_params *p, mlrt_range_fn fn, quant_job *j) {
    int64_t tiles = q_tiles(p->inner), seg = p->inner < Q_TILE ? p->inner : Q_TILE;
    int64_t grain = seg >= Q_GRAIN ? 1 : Q_GRAIN / (seg + 1) + 1;
    mlrt_parallel_for(ctx, p->outer * p->axis_len * tiles, grain, fn, j);
}

/* inputs: x, y_scale, y_zero_point (optional); output: y */
static int k_quantize(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                      const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_quantize_params, p, params, params_size);
    quant_job j;
    int status = q_setup(p, in, n_in, out, n_out, "QuantizeLinear", &j);
    if (status) return status;
    if (!q_is_float(j.xt) && j.xt != MLRT_INT32)
        return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "QuantizeLinear: input type %d not supported", j.xt);
    if (!q_int_range(j.yt, &j.lo, &j.hi) && !q_is_lowp_out(j.yt))
        return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "QuantizeLinear: output type %d not supported", j.yt);
    MLRT_CHECK(!j.zp || j.zt == j.yt, "QuantizeLinear: the zero point must have the output's type");
    q_run(ctx, p, quantize_tasks, &j);
    return MLRT_OK;
}

/* inputs: x, x_scale, x_zero_point (optional); output: y */
static int k_dequantize(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                        int32_t n_out, const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_quantize_params, p, params, params_size);
    quant_job j;
    int status = q_setup(p, in, n_in, out, n_out, "DequantizeLinear", &j);
    if (status) return status;
    int32_t lo, hi;
    if (!q_int_range(j.xt, &lo, &hi) && j.xt != MLRT_INT32 && !q_is_lowp_out(j.xt))
        return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "DequantizeLinear: input type %d not supported", j.xt);
    if (!q_is_float(j.yt))
        return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "DequantizeLinear: output type %d not supported", j.yt);
    MLRT_CHECK(!j.zp || j.zt == j.xt, "DequantizeLinear: the zero point must have x's type");
    if (q_is_lowp_out(j.xt)) j.zp = NULL; /* float8 / float4: no zero point (zero for float8) */
    q_run(ctx, p, dequantize_tasks, &j);
    return MLRT_OK;
}

#define Q_IN_TYPES (MLRT_MASK_FLOATS | MLRT_BIT(MLRT_FLOAT16) | MLRT_BIT(MLRT_BFLOAT16) | MLRT_BIT(MLRT_INT32))
#define DQ_IN_TYPES                                                                                       \
    (MLRT_BIT(MLRT_INT8) | MLRT_BIT(MLRT_UINT8) | MLRT_BIT(MLRT_INT16) | MLRT_BIT(MLRT_UINT16) |         \
     MLRT_BIT(MLRT_INT32) | (MLRT_MASK_LOWP & ~MLRT_BIT(MLRT_FLOAT8E8M0)))

MLRT_KERNEL(quantizelinear, "QuantizeLinear", "", 10, MLRT_OPSET_MAX, Q_IN_TYPES, k_quantize);
MLRT_KERNEL(dequantizelinear, "DequantizeLinear", "", 10, MLRT_OPSET_MAX, DQ_IN_TYPES, k_dequantize);

/* -- DynamicQuantizeLinear ------------------------------------------------------------------ */

/* The range pass's chunks: about equal, as many per thread, at most DQL_CHUNK floats
 * and at least DQL_CHUNK_MIN (in chunks of 65536, an activation of 14 x 14 x 334 or less
 * ran on one thread). */
#define DQL_CHUNK 65536
#define DQL_CHUNK_MIN 4096

typedef struct dql_job {
    const float *x;
    uint8_t *y;
    int64_t n, chunk;
    float *lo, *hi;   /* per chunk minimum / maximum */
    float scale, zp;
} dql_job;

/* The range of x[a, b) joined to [*lo, *hi] (which holds 0): v < lo ? v : lo per element, a
 * NaN comparing false and so skipped, and -0 never below 0. */
static void dql_range_portable(const float *x, int64_t a, int64_t b, float *lo, float *hi) {
    float l = *lo, h = *hi;
    for (int64_t i = a; i < b; ++i) {
        float v = x[i];
        l = v < l ? v : l;
        h = v > h ? v : h;
    }
    *lo = l, *hi = h;
}

#if defined(__x86_64__) && defined(__GNUC__)
/* vminps (v, l) is v < l ? v : l lane by lane (its second operand where either is a NaN
 * or they are equal), so lanes folded in any order give the scalar loop's result; four
 * accumulators of each, the compares' latency hidden. */
__attribute__((target("avx512f"))) static void dql_range_avx512(const float *x, int64_t a, int64_t b, float *lo,
                                                               float *hi) {
    __m512 l[4], h[4];
    for (int k = 0; k < 4; ++k) l[k] = _mm512_set1_ps(*lo), h[k] = _mm512_set1_ps(*hi);
    int64_t i = a;
    for (; i + 64 <= b; i += 64)
        for (int k = 0; k < 4; ++k) {
            __m512 v = _mm512_loadu_ps(x + i + 16 * k);
            l[k] = _mm512_min_ps(v, l[k]), h[k] = _mm512_max_ps(v, h[k]);
        }
    float ls[16], hs[16];
    _mm512_storeu_ps(ls, _mm512_min_ps(_mm512_min_ps(l[0], l[1]), _mm512_min_ps(l[2], l[3])));
    _mm512_storeu_ps(hs, _mm512_max_ps(_mm512_max_ps(h[0], h[1]), _mm512_max_ps(h[2], h[3])));
    float lv = *lo, hv = *hi;
    for (int k = 0; k < 16; ++k) lv = ls[k] < lv ? ls[k] : lv, hv = hs[k] > hv ? hs[k] : hv;
    *lo = lv, *hi = hv;
    dql_range_portable(x, i, b, lo, hi);
}

#endif

static void dql_minmax(void *arg, int64_t begin, int64_t end) {
    dql_job *j = arg;
    void (*range)(const float *, int64_t, int64_t, float *, float *) = dql_range_portable;
#if defined(__x86_64__) && defined(__GNUC__)
    if (MLRT_X86_HAS(MLRT_ISA_AVX512, AVX512F)) range = dql_range_avx512;
#endif
    for (int64_t c = begin; c < end; ++c) {
        int64_t a = c * j->chunk, b = a + j->chunk < j->n ? a + j->chunk : j->n;
        float lo = 0.0f, hi = 0.0f; /* the range always holds 0 */
        range(j->x, a, b, &lo, &hi);
        j->lo[c] = lo, j->hi[c] = hi;
    }
}

MLRT_ISA_FN(, void, dql_quantize_row, (const float *x, uint8_t *y, int64_t n, float scale, float zp),
            (x, y, n, scale, zp)) {
    for (int64_t i = 0; i < n; ++i) {
        float v = x[i] / scale;
        v = v != v ? -512.0f : v < -512.0f ? -512.0f : v > 512.0f ? 512.0f : v; /* NaN -> 0 below */
        v = ((v + Q_MAGIC) - Q_MAGIC) + zp;
        y[i] = (uint8_t)(int32_t)(v < 0.0f ? 0.0f : v > 255.0f ? 255.0f : v);
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
/* dql_quantize_row's steps on 16 lanes: vmaxps (v, -512) is -512 for a NaN v (its second
 * operand), the rounding to nearest even is roundscale's (the magic number's result but
 * for the sign of a zero, which the zero point's addition drops).  The division x / scale
 * (vdivps: two thirds of the node's time) is taken, where scale and its reciprocal are
 * normal floats, as q = x * r, r = 1 / scale rounded, then corrected once by fused
 * multiply-adds, q + (x - q scale) r: with r correctly rounded and q within an ulp of the
 * quotient, that is the correctly rounded quotient (Markstein's theorem; x - q scale is
 * exact), the same float as the division, so the same bytes as onnxruntime's. */
__attribute__((target("avx512f"))) static void dql_quantize_avx512(const float *x, uint8_t *y, int64_t n, float scale,
                                                                  float zp) {
    __m512 s = _mm512_set1_ps(scale), z = _mm512_set1_ps(zp), lo = _mm512_set1_ps(-512.0f), hi = _mm512_set1_ps(512.0f);
    __m512 zero = _mm512_setzero_ps(), top = _mm512_set1_ps(255.0f);
    bool fma = scale >= 0x1p-100f && scale <= 0x1p100f; /* (else: the division; an infinite scale too) */
    __m512 r = _mm512_set1_ps(1.0f / scale);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512 xv = _mm512_loadu_ps(x + i), v;
        if (fma) {
            v = _mm512_mul_ps(xv, r);
            v = _mm512_fmadd_ps(_mm512_fnmadd_ps(v, s, xv), r, v);
        } else {
            v = _mm512_div_ps(xv, s);
        }
        v = _mm512_min_ps(_mm512_max_ps(v, lo), hi);
        v = _mm512_add_ps(_mm512_roundscale_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), z);
        v = _mm512_min_ps(_mm512_max_ps(v, zero), top);
        _mm_storeu_si128((__m128i *)(y + i), _mm512_cvtusepi32_epi8(_mm512_cvttps_epi32(v)));
    }
    dql_quantize_row(x + i, y + i, n - i, scale, zp);
}
#endif

static void dql_quantize(void *arg, int64_t begin, int64_t end) {
    const dql_job *j = arg;
#if defined(__x86_64__) && defined(__GNUC__)
    if (MLRT_X86_HAS(MLRT_ISA_AVX512, AVX512F)) {
        dql_quantize_avx512(j->x + begin, j->y + begin, end - begin, j->scale, j->zp);
        return;
    }
#endif
    dql_quantize_row(j->x + begin, j->y + begin, end - begin, j->scale, j->zp);
}

/* input: x (float); outputs: y (uint8, x's shape), y_scale (float scalar), y_zero_point (uint8 scalar) */
static int k_dynamic_quantize(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                              int32_t n_out, const void *params, size_t params_size) {
    MLRT_CHECK(n_in == 1 && n_out >= 1 && n_out <= 3, "DynamicQuantizeLinear: expects 1 input and up to 3 outputs");
    const mlrt_tensor *x = &in[0];
    if (x->dtype != MLRT_FLOAT)
        return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "DynamicQuantizeLinear: input type %d not supported", x->dtype);
    const mlrt_tensor *y = mlrt_present(&out[0]) ? &out[0] : NULL;
    const mlrt_tensor *ys = n_out > 1 && mlrt_present(&out[1]) ? &out[1] : NULL;
    const mlrt_tensor *yz = n_out > 2 && mlrt_present(&out[2]) ? &out[2] : NULL;
    MLRT_CHECK(mlrt_is_contiguous(x), "DynamicQuantizeLinear: needs a contiguous x");
    MLRT_CHECK(!y || (y->dtype == MLRT_UINT8 && mlrt_same_shape(x, y) && mlrt_is_contiguous(y)),
               "DynamicQuantizeLinear: y must be uint8 of x's shape");
    MLRT_CHECK(!ys || (ys->dtype == MLRT_FLOAT && mlrt_numel(ys) == 1),
               "DynamicQuantizeLinear: y_scale must be a float scalar");
    MLRT_CHECK(!yz || (yz->dtype == MLRT_UINT8 && mlrt_numel(yz) == 1),
               "DynamicQuantizeLinear: y_zero_point must be a uint8 scalar");
    dql_job j = {x->data, y ? y->data : NULL, mlrt_numel(x), DQL_CHUNK, NULL, NULL, 0, 0};
    /* about equal chunks, a multiple of the threads' count of them (65536 floats each cut
     * a 224 x 224 x 3 input into 3: 2 + 1 on 2 threads) */
    int64_t threads = mlrt_ctx_threads(ctx), rounds = j.n / (threads * DQL_CHUNK) + 1;
    int64_t each = (j.n + threads * rounds - 1) / (threads * rounds);
    j.chunk = each > DQL_CHUNK_MIN ? (each + 63) / 64 * 64 : DQL_CHUNK_MIN;
    int64_t chunks = (j.n + j.chunk - 1) / j.chunk;
    float lo = 0.0f, hi = 0.0f;
    if (chunks > 0) {
        j.lo = malloc((size_t)chunks * 2 * sizeof(float));
        if (!j.lo) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "DynamicQuantizeLinear: out of memory");
        j.hi = j.lo + chunks;
        mlrt_parallel_for(ctx, chunks, 1, dql_minmax, &j);
        for (int64_t c = 0; c < chunks; ++c) {
            lo = j.lo[c] < lo ? j.lo[c] : lo;
            hi = j.hi[c] > hi ? j.hi[c] : hi;
        }
        free(j.lo);
    }
    /* onnxruntime's steps, in float32 (the reference's where the range is not empty) */
    float scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
    float izp = 0.0f - lo / scale;
    float zp = izp < 255.0f ? izp : 255.0f; /* Python's min(255, izp), max(0, .) */
    zp = zp > 0.0f ? zp : 0.0f;
    zp = rintf(zp);
    j.scale = scale, j.zp = zp;
    if (ys) *(float *)ys->data = scale;
    if (yz) *(uint8_t *)yz->data = (uint8_t)zp;
    if (y) mlrt_parallel_for(ctx, j.n, Q_GRAIN, dql_quantize, &j);
    return MLRT_OK;
}

MLRT_KERNEL(dynamicquantizelinear, "DynamicQuantizeLinear", "", 11, MLRT_OPSET_MAX, MLRT_BIT(MLRT_FLOAT),
            k_dynamic_quantize);
