/* ms_qlinear.c -- com.microsoft QLinearAdd, QLinearMul, QLinearSigmoid, QLinearLeakyRelu,
 * QLinearGlobalAveragePool and QLinearConcat (int8 / uint8, per-tensor scales and zero
 * points), computed as onnxruntime's CPU kernels do: in float, rounding half to even,
 * saturating to the output type.
 *
 *   Add:   y = round(b * rb + (a * ra + (c_zp - (ra * a_zp + rb * b_zp)))), ra = a_s / c_s,
 *          rb = b_s / c_s, each step in float with fused multiply-adds (onnxruntime's order)
 *   Mul:   y = round((a - a_zp) * (b - b_zp) * (a_s * b_s / c_s) + c_zp)
 *   Sigmoid, LeakyRelu, Concat's requantized inputs: a 256-entry table built from the
 *          scales, t[x] = round(f(x_s * (x - x_zp)) / y_s) + y_zp
 *   GlobalAveragePool: y = round((sum(x) - x_zp * n) * (x_s / (y_s * n))) + y_zp
 *
 * A and B of Add / Mul come as views of the output's shape (broadcast strides 0); rows
 * where both run contiguously take 16 elements at a time on AVX-512 (the same float
 * operations, fused multiply-adds where the scalar code has them). */
#include <math.h>
#include <stdlib.h>

#include "concat.h"
#include "internal.h"
#include "ms_qlinear.h"
#include "nditer.h"

#define MSQ_GRAIN 16384

static bool msq_is_8bit(int32_t t) { return t == MLRT_INT8 || t == MLRT_UINT8; }

static inline int32_t msq_load(const void *p, int64_t i, int32_t t) {
    return t == MLRT_INT8 ? ((const int8_t *)p)[i] : ((const uint8_t *)p)[i];
}

/* round(v) + zp, saturated to t (NaN gives the type's low end); Add and Mul add their zero
 * point before rounding instead, as onnxruntime does, which decides ties differently */
static inline int32_t msq_quantize(float v, int32_t zp, int32_t t) {
    float r = nearbyintf(v) + (float)zp;
    float lo = t == MLRT_INT8 ? -128.0f : 0.0f, hi = t == MLRT_INT8 ? 127.0f : 255.0f;
    if (!(r >= lo)) return (int32_t)lo;
    return r >= hi ? (int32_t)hi : (int32_t)r;
}

static inline void msq_store(void *y, int64_t i, int32_t t, int32_t v) {
    if (t == MLRT_INT8) ((int8_t *)y)[i] = (int8_t)v;
    else ((uint8_t *)y)[i] = (uint8_t)v;
}

/* A per-tensor scale (one float) and zero point (absent, or one value of type t). */
static int msq_scalar_pair(const char *op, const char *name, const mlrt_tensor *s, const mlrt_tensor *z, int32_t t,
                           float *scale, int32_t *zp) {
    MLRT_CHECK(s->dtype == MLRT_FLOAT && mlrt_numel(s) == 1, "%s: %s_scale must be one float", op, name);
    MLRT_CHECK(!z || (z->dtype == t && mlrt_numel(z) == 1), "%s: %s_zero_point must be one value of the tensor's type",
               op, name);
    *scale = *(const float *)s->data;
    *zp = z ? msq_load(z->data, 0, z->dtype) : 0;
    return MLRT_OK;
}

static const mlrt_tensor *msq_optional(const mlrt_tensor *in, int32_t n_in, int32_t i) {
    return i < n_in && mlrt_present(&in[i]) ? &in[i] : NULL;
}

/* -- QLinearAdd / QLinearMul ------------------------------------------------------------------ */

typedef struct msq_binary_job {
    mlrt_rows rows;
    const void *a, *b;
    void *y;
    int32_t t;
    int32_t za, zb, zc;
    float ra, rb; /* Add: a_s / c_s and b_s / c_s; Mul: ra = a_s * b_s / c_s */
    float fixed;  /* Add: c_zp - (ra * a_zp + rb * b_zp) */
    bool mul;
} msq_binary_job;

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define MSQ_X86 1

/* Elements [0, n) of contiguous rows a, b into y, as binary_range computes them. */
__attribute__((target("avx512f,avx512bw,avx512vl,fma"))) static void binary_row_avx512(const msq_binary_job *j,
                                                                                        const void *a, const void *b,
                                                                                        void *y, int64_t n) {
    bool s8 = j->t == MLRT_INT8;
    __m512 ra = _mm512_set1_ps(j->ra), rb = _mm512_set1_ps(j->rb), fixed = _mm512_set1_ps(j->fixed);
    __m512 zc = _mm512_set1_ps((float)j->zc), lo = _mm512_set1_ps(s8 ? -128.0f : 0.0f), hi = _mm512_set1_ps(s8 ? 127.0f : 255.0f);
    __m512i za = _mm512_set1_epi32(j->za), zb = _mm512_set1_epi32(j->zb);
    for (int64_t i = 0; i < n; i += 16) {
        __mmask16 k = n - i >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - i)) - 1);
        __m128i a8 = _mm_maskz_loadu_epi8(k, (const int8_t *)a + i), b8 = _mm_maskz_loadu_epi8(k, (const int8_t *)b + i);
        __m512i ai = s8 ? _mm512_cvtepi8_epi32(a8) : _mm512_cvtepu8_epi32(a8);
        __m512i bi = s8 ? _mm512_cvtepi8_epi32(b8) : _mm512_cvtepu8_epi32(b8);
        __m512 v;
        if (j->mul)
            v = _mm512_add_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_mullo_epi32(_mm512_sub_epi32(ai, za),
                                                                                  _mm512_sub_epi32(bi, zb))), ra), zc);
        else
            v = _mm512_fmadd_ps(_mm512_cvtepi32_ps(bi), rb, _mm512_fmadd_ps(_mm512_cvtepi32_ps(ai), ra, fixed));
        v = _mm512_roundscale_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        v = _mm512_min_ps(_mm512_max_ps(v, lo), hi); /* (NaN: max's second operand, the low end) */
        __m512i q = _mm512_cvtps_epi32(v);
        if (s8) _mm_mask_storeu_epi8((int8_t *)y + i, k, _mm512_cvtsepi32_epi8(q));
        else _mm_mask_storeu_epi8((uint8_t *)y + i, k, _mm512_cvtusepi32_epi8(q));
    }
}
#endif

#ifdef MSQ_X86
static bool msq_avx512(void) {
    return MLRT_X86_HAS(MLRT_ISA_AVX512, AVX512BW) && MLRT_X86_FEATURE(AVX512VL) && MLRT_X86_FEATURE(FMA);
}
#endif

/* Elements [begin, end) of the flat job (rows of one element each otherwise). */
static void binary_flat(void *arg, int64_t begin, int64_t end) {
    const msq_binary_job *j = arg;
#ifdef MSQ_X86
    if (msq_avx512()) {
        binary_row_avx512(j, (const char *)j->a + begin, (const char *)j->b + begin, (char *)j->y + begin, end - begin);
        return;
    }
#endif
    for (int64_t i = begin; i < end; ++i) {
        int32_t a = msq_load(j->a, i, j->t), b = msq_load(j->b, i, j->t);
        if (j->mul) a -= j->za, b -= j->zb;
        float v = j->mul ? (float)(a * b) * j->ra + (float)j->zc : fmaf((float)b, j->rb, fmaf((float)a, j->ra, j->fixed));
        msq_store(j->y, i, j->t, msq_quantize(v, 0, j->t));
    }
}

static void binary_range(void *arg, int64_t begin, int64_t end) {
    const msq_binary_job *j = arg;
    int64_t n = j->rows.row_len, off[3];
    int32_t last = j->rows.rank - 1;
    int64_t sa = j->rows.strides[0][last], sb = j->rows.strides[1][last];
    for (int64_t r = begin; r < end; ++r) {
        mlrt_rows_offsets(&j->rows, r, off);
        for (int64_t i = 0; i < n; ++i) {
            int32_t a = msq_load(j->a, off[0] + i * sa, j->t), b = msq_load(j->b, off[1] + i * sb, j->t);
            if (j->mul) a -= j->za, b -= j->zb;
            float v = j->mul ? (float)(a * b) * j->ra + (float)j->zc : fmaf((float)b, j->rb, fmaf((float)a, j->ra, j->fixed));
            msq_store(j->y, off[2] + i, j->t, msq_quantize(v, 0, j->t));
        }
    }
}

static int msq_binary(const mlrt_context *ctx, const char *op, bool mul, const mlrt_tensor *in, int32_t n_in,
                      mlrt_tensor *out, int32_t n_out) {
    MLRT_CHECK(n_in >= 7 && n_in <= 8 && n_out == 1, "%s: expects 7 or 8 inputs and 1 output", op);
    const mlrt_tensor *A = &in[0], *B = &in[3];
    mlrt_tensor *Y = &out[0];
    int32_t t = Y->dtype;
    MLRT_CHECK(msq_is_8bit(t) && A->dtype == t && B->dtype == t, "%s: A, B and C must share one type, int8 or uint8", op);
    MLRT_CHECK(mlrt_same_shape(A, Y) && mlrt_same_shape(B, Y) && mlrt_is_contiguous(Y),
               "%s: A and B must be views of the output's shape, the output contiguous", op);
    msq_binary_job j = {.a = A->data, .b = B->data, .y = Y->data, .t = t, .mul = mul};
    float sa, sb, sc;
    int status = msq_scalar_pair(op, "A", &in[1], msq_optional(in, n_in, 2), t, &sa, &j.za);
    if (!status) status = msq_scalar_pair(op, "B", &in[4], msq_optional(in, n_in, 5), t, &sb, &j.zb);
    if (!status) status = msq_scalar_pair(op, "C", &in[6], msq_optional(in, n_in, 7), t, &sc, &j.zc);
    if (status) return status;
    if (mul) j.ra = sa * sb / sc;
    else j.ra = sa / sc, j.rb = sb / sc, j.fixed = (float)j.zc - (j.ra * (float)j.za + j.rb * (float)j.zb);
    if (mlrt_is_contiguous(A) && mlrt_is_contiguous(B)) {
        mlrt_parallel_for(ctx, mlrt_numel(Y), MSQ_GRAIN, binary_flat, &j);
        return MLRT_OK;
    }
    const mlrt_tensor *ops[3] = {A, B, Y};
    mlrt_rows_init(&j.rows, Y, ops, 3);
    int64_t grain = j.rows.row_len >= MSQ_GRAIN ? 1 : MSQ_GRAIN / (j.rows.row_len + 1) + 1;
    mlrt_parallel_for(ctx, j.rows.n_rows, grain, binary_range, &j);
    return MLRT_OK;
}

/* inputs: A, A_scale, A_zero_point, B, B_scale, B_zero_point, C_scale, C_zero_point; output: C */
static int k_qlinear_add(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                         const void *params, size_t params_size) {
    return msq_binary(ctx, "QLinearAdd", false, in, n_in, out, n_out);
}

static int k_qlinear_mul(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                         const void *params, size_t params_size) {
    return msq_binary(ctx, "QLinearMul", true, in, n_in, out, n_out);
}

/* -- lookup tables: QLinearSigmoid, QLinearLeakyRelu ------------------------------------------ */

enum msq_fn { MSQ_IDENTITY, MSQ_SIGMOID, MSQ_LEAKY_RELU };

/* table[byte] for every byte pattern of type t */
static void msq_table(uint8_t *table, int32_t t, float xs, int32_t xz, float ys, int32_t yz, enum msq_fn fn,
                      float alpha) {
    for (int32_t u = 0; u < 256; ++u) {
        int32_t x = t == MLRT_INT8 ? (int32_t)(int8_t)(uint8_t)u : u;
        float v = xs * (float)(x - xz);
        if (fn == MSQ_SIGMOID) v = 1.0f / (1.0f + expf(-v));
        else if (fn == MSQ_LEAKY_RELU) v = v >= 0.0f ? v : v * alpha;
        int32_t q = msq_quantize(v / ys, yz, t);
        table[u] = t == MLRT_INT8 ? (uint8_t)(int8_t)q : (uint8_t)q;
    }
}

typedef struct msq_map_job {
    const uint8_t *x;
    uint8_t *y;
    const uint8_t *table;
} msq_map_job;

static void map_range(void *arg, int64_t begin, int64_t end) {
    const msq_map_job *j = arg;
    for (int64_t i = begin; i < end; ++i) j->y[i] = j->table[j->x[i]];
}

/* inputs: X, X_scale, X_zero_point, Y_scale, Y_zero_point; output: Y */
static int msq_lookup(const mlrt_context *ctx, const char *op, enum msq_fn fn, float alpha, const mlrt_tensor *in,
                      int32_t n_in, mlrt_tensor *out, int32_t n_out) {
    MLRT_CHECK(n_in >= 4 && n_in <= 5 && n_out == 1, "%s: expects 4 or 5 inputs and 1 output", op);
    const mlrt_tensor *X = &in[0];
    mlrt_tensor *Y = &out[0];
    int32_t t = X->dtype;
    MLRT_CHECK(msq_is_8bit(t) && Y->dtype == t, "%s: X and Y must share one type, int8 or uint8", op);
    MLRT_CHECK(mlrt_same_shape(X, Y) && mlrt_is_contiguous(X) && mlrt_is_contiguous(Y),
               "%s: X and Y must be contiguous tensors of one shape", op);
    float xs, ys;
    int32_t xz, yz;
    int status = msq_scalar_pair(op, "X", &in[1], msq_optional(in, n_in, 2), t, &xs, &xz);
    if (!status) status = msq_scalar_pair(op, "Y", &in[3], msq_optional(in, n_in, 4), t, &ys, &yz);
    if (status) return status;
    uint8_t table[256];
    msq_table(table, t, xs, xz, ys, yz, fn, alpha);
    msq_map_job j = {X->data, Y->data, table};
    mlrt_parallel_for(ctx, mlrt_numel(Y), MSQ_GRAIN * 4, map_range, &j);
    return MLRT_OK;
}

static int k_qlinear_sigmoid(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                             int32_t n_out, const void *params, size_t params_size) {
    return msq_lookup(ctx, "QLinearSigmoid", MSQ_SIGMOID, 0.0f, in, n_in, out, n_out);
}

static int k_qlinear_leaky_relu(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                                int32_t n_out, const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_qlinear_lut_params, p, params, params_size);
    return msq_lookup(ctx, "QLinearLeakyRelu", MSQ_LEAKY_RELU, (float)p->alpha, in, n_in, out, n_out);
}

/* -- QLinearGlobalAveragePool ----------------------------------------------------------------- */

typedef struct msq_pool_job {
    const void *x;
    void *y;
    int32_t t, xz, yz;
    int64_t C, image;
    bool channels_last;
    float scale;
} msq_pool_job;

static void pool_range(void *arg, int64_t begin, int64_t end) { /* outputs (n, c) */
    const msq_pool_job *j = arg;
    for (int64_t o = begin; o < end; ++o) {
        int64_t n = o / j->C, c = o % j->C, sum = 0;
        if (j->channels_last) {
            int64_t base = n * j->image * j->C + c;
            for (int64_t i = 0; i < j->image; ++i) sum += msq_load(j->x, base + i * j->C, j->t);
        } else {
            int64_t base = o * j->image;
            for (int64_t i = 0; i < j->image; ++i) sum += msq_load(j->x, base + i, j->t);
        }
        int32_t q = j->image ? msq_quantize((float)(sum - (int64_t)j->xz * j->image) * j->scale, j->yz, j->t) : j->yz;
        msq_store(j->y, o, j->t, q);
    }
}

/* inputs: X, x_scale, x_zero_point, y_scale, y_zero_point; output: Y */
static int k_qlinear_global_average_pool(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                                         int32_t n_out, const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_qlinear_pool_params, p, params, params_size);
    const char *op = "QLinearGlobalAveragePool";
    MLRT_CHECK(n_in >= 4 && n_in <= 5 && n_out == 1, "%s: expects 4 or 5 inputs and 1 output", op);
    const mlrt_tensor *X = &in[0];
    mlrt_tensor *Y = &out[0];
    int32_t t = X->dtype, R = X->rank;
    MLRT_CHECK(msq_is_8bit(t) && Y->dtype == t, "%s: X and Y must share one type, int8 or uint8", op);
    MLRT_CHECK(R >= 3 && Y->rank == R && mlrt_is_contiguous(X) && mlrt_is_contiguous(Y),
               "%s: X and Y must be contiguous, of one rank >= 3", op);
    bool last = p->channels_last != 0;
    int64_t N = X->shape[0], C = last ? X->shape[R - 1] : X->shape[1], image = 1;
    for (int32_t d = last ? 1 : 2; d < (last ? R - 1 : R); ++d) image *= X->shape[d];
    MLRT_CHECK(mlrt_numel(Y) == N * C && Y->shape[0] == N && Y->shape[last ? R - 1 : 1] == C,
               "%s: Y must hold one value per image and channel", op);
    msq_pool_job j = {.x = X->data, .y = Y->data, .t = t, .C = C, .image = image, .channels_last = last};
    float xs, ys;
    int status = msq_scalar_pair(op, "x", &in[1], msq_optional(in, n_in, 2), t, &xs, &j.xz);
    if (!status) status = msq_scalar_pair(op, "y", &in[3], msq_optional(in, n_in, 4), t, &ys, &j.yz);
    if (status) return status;
    j.scale = xs / (ys * (float)image);
    int64_t grain = image >= MSQ_GRAIN ? 1 : MSQ_GRAIN / (image + 1) + 1;
    mlrt_parallel_for(ctx, N * C, grain, pool_range, &j);
    return MLRT_OK;
}

/* -- QLinearConcat ------------------------------------------------------------------------------ */

typedef struct msq_concat_job {
    int32_t n;              /* inputs */
    const uint8_t **x;      /* their data */
    const uint8_t *tables;  /* 256 per input */
    int64_t *piece, *start; /* elements of input i in one output row, and where they start */
    int64_t row;            /* elements of an output row */
    uint8_t *y;
} msq_concat_job;

static void concat_range(void *arg, int64_t begin, int64_t end) { /* output rows */
    const msq_concat_job *j = arg;
    for (int64_t o = begin; o < end; ++o)
        for (int32_t k = 0; k < j->n; ++k) {
            const uint8_t *x = j->x[k] + o * j->piece[k], *table = j->tables + 256 * k;
            uint8_t *y = j->y + o * j->row + j->start[k];
            for (int64_t i = 0; i < j->piece[k]; ++i) y[i] = table[x[i]];
        }
}

/* inputs: Y_scale, Y_zero_point, then (X, X_scale, X_zero_point) per piece; output: Y */
static int k_qlinear_concat(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                            int32_t n_out, const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_concat_params, p, params, params_size);
    const char *op = "QLinearConcat";
    MLRT_CHECK(n_in >= 5 && (n_in - 2) % 3 == 0 && n_out == 1, "%s: expects 2 + 3k inputs and 1 output", op);
    mlrt_tensor *Y = &out[0];
    int32_t t = Y->dtype, R = Y->rank, n = (n_in - 2) / 3;
    MLRT_CHECK(msq_is_8bit(t) && mlrt_is_contiguous(Y), "%s: Y must be contiguous int8 or uint8", op);
    MLRT_CHECK(p->axis >= 0 && p->axis < R, "%s: axis %lld out of range for rank %d", op, (long long)p->axis, R);
    float ys;
    int32_t yz;
    int status = msq_scalar_pair(op, "Y", &in[0], msq_optional(in, n_in, 1), t, &ys, &yz);
    if (status) return status;
    int64_t axis = p->axis, outer = 1, inner = 1, total = 0;
    for (int64_t d = 0; d < axis; ++d) outer *= Y->shape[d];
    for (int64_t d = axis + 1; d < R; ++d) inner *= Y->shape[d];
    for (int32_t k = 0; k < n; ++k) {
        const mlrt_tensor *X = &in[2 + 3 * k];
        MLRT_CHECK(X->dtype == t && X->rank == R && mlrt_is_contiguous(X),
                   "%s: input %d must be a contiguous tensor of Y's type and rank", op, k);
        for (int32_t d = 0; d < R; ++d)
            MLRT_CHECK(d == axis || X->shape[d] == Y->shape[d], "%s: input %d differs from Y off the axis", op, k);
        total += X->shape[axis];
    }
    MLRT_CHECK(total == Y->shape[axis], "%s: the inputs' axis lengths add to %lld, Y has %lld", op, (long long)total,
               (long long)Y->shape[axis]);
    size_t bytes = (size_t)n * (256 + 2 * sizeof(int64_t) + sizeof(void *));
    char *buf = malloc(bytes);
    if (!buf) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "%s: out of memory", op);
    msq_concat_job j = {.n = n, .x = (const uint8_t **)buf, .piece = (int64_t *)(buf + (size_t)n * sizeof(void *)),
                        .row = Y->shape[axis] * inner, .y = Y->data};
    j.start = j.piece + n;
    uint8_t *tables = (uint8_t *)(j.start + n);
    j.tables = tables;
    int64_t at = 0;
    for (int32_t k = 0; k < n && !status; ++k) {
        const mlrt_tensor *X = &in[2 + 3 * k];
        float xs;
        int32_t xz;
        status = msq_scalar_pair(op, "X", &in[3 + 3 * k], msq_optional(in, n_in, 4 + 3 * k), t, &xs, &xz);
        j.x[k] = X->data;
        j.piece[k] = X->shape[axis] * inner;
        j.start[k] = at;
        at += j.piece[k];
        msq_table(tables + 256 * k, t, xs, xz, ys, yz, MSQ_IDENTITY, 0.0f);
    }
    if (!status && j.row > 0) {
        int64_t grain = j.row >= MSQ_GRAIN ? 1 : MSQ_GRAIN / (j.row + 1) + 1;
        mlrt_parallel_for(ctx, outer, grain, concat_range, &j);
    }
    free(buf);
    return status;
}

#define MASK_8BIT (MLRT_BIT(MLRT_INT8) | MLRT_BIT(MLRT_UINT8))
#define MS "com.microsoft"

MLRT_KERNEL(ms_qlinear_add, "QLinearAdd", MS, 1, MLRT_OPSET_MAX, MASK_8BIT, k_qlinear_add);
MLRT_KERNEL(ms_qlinear_mul, "QLinearMul", MS, 1, MLRT_OPSET_MAX, MASK_8BIT, k_qlinear_mul);
MLRT_KERNEL(ms_qlinear_sigmoid, "QLinearSigmoid", MS, 1, MLRT_OPSET_MAX, MASK_8BIT, k_qlinear_sigmoid);
MLRT_KERNEL(ms_qlinear_leaky_relu, "QLinearLeakyRelu", MS, 1, MLRT_OPSET_MAX, MASK_8BIT, k_qlinear_leaky_relu);
MLRT_KERNEL(ms_qlinear_global_average_pool, "QLinearGlobalAveragePool", MS, 1, MLRT_OPSET_MAX, MASK_8BIT,
            k_qlinear_global_average_pool);
/* selected by Y_zero_point's type (input 1) */
MLRT_KERNEL(ms_qlinear_concat, "QLinearConcat", MS, 1, MLRT_OPSET_MAX, MASK_8BIT, k_qlinear_concat);
