/* ms_quant_matmul.c -- com.microsoft MatMulIntegerToFloat, DynamicQuantizeMatMul,
 * MatMulNBits, and the com.microsoft QuantizeLinear / DequantizeLinear.
 *
 * MatMulIntegerToFloat: Y = (A - a_zp) @ (B - b_zp) * (a_scale * b_scale) + bias.  The
 * integer product is MatMulInteger's (kernels/qlinear.c, mlrt_qmatmul_float), whose finish
 * multiplies each int32 sum by the float32 product of the scales (a per tensor, b per
 * tensor or per column) and adds bias, as onnxruntime's scale-bias output processor does
 * (a_zp is per tensor, as onnxruntime's: per row with a b_zp per column is refused).
 *
 * DynamicQuantizeMatMul: A (float) is first quantized to uint8 with onnxruntime's
 * dynamic parameters: the range [min(A, 0), max(A, 0)], scale = range / 255 (1 when
 * the range is empty), zero point = round(clamp(-min / scale, 0, 255)), q =
 * saturate(round(a / scale) + zero point), rounding half to even; then as above.
 *
 * MatMulNBits: B's blockwise codes are dequantized to float rows of W [N, K] (in
 * parallel over N), Y = A @ W^T on the float GEMM core, + bias.  accuracy_level is
 * accepted and ignored: the product is always computed in float.
 *
 * The com.microsoft QuantizeLinear / DequantizeLinear run the ai.onnx kernels, found
 * in the kernel table, with the same parameter block. */
#include <math.h>
#include <stdlib.h>

#include "gemm.h"
#include "internal.h"
#include "qgemm.h"
#include "ms_quant_matmul.h"
#include "qlinear.h"
#include "quantize.h"

#define MQ_GRAIN 16384

static inline int64_t mq_batch_offset(const mlrt_tensor *t, int32_t R, int64_t b) {
    int64_t off = 0;
    for (int32_t d = R - 3; d >= 0; --d) {
        off += (b % t->shape[d]) * t->strides[d];
        b /= t->shape[d];
    }
    return off;
}

static bool mq_is_8bit(int32_t t) { return t == MLRT_INT8 || t == MLRT_UINT8; }

/* Y = (A - Az) @ (B - Bz) * (a_scale * b_scale) + bias, A and B 8-bit */
static int mq_finish(const mlrt_context *ctx, const char *op, const mlrt_tensor *A, const mlrt_tensor *Az,
                     const mlrt_tensor *B, const mlrt_tensor *Bz, const mlrt_tensor *packed, float a_scale,
                     const mlrt_tensor *Bs, const mlrt_tensor *bias, mlrt_tensor *Y) {
    int32_t R = A->rank;
    MLRT_CHECK(R >= 2 && R <= 8 && B->rank == R, "%s: A and B must be views of equal rank >= 2", op);
    MLRT_CHECK(mq_is_8bit(B->dtype), "%s: B must be int8 or uint8", op);
    MLRT_CHECK(Bs->dtype == MLRT_FLOAT && mlrt_same_shape(Bs, B), "%s: b_scale must be a float view of B's shape", op);
    MLRT_CHECK(Y->dtype == MLRT_FLOAT && mlrt_is_contiguous(Y), "%s: needs a contiguous float output", op);
    int64_t M = A->shape[R - 2], N = B->shape[R - 1];
    MLRT_CHECK(!bias || (bias->dtype == MLRT_FLOAT && mlrt_is_contiguous(bias) && mlrt_numel(bias) == N),
               "%s: bias must be float with %lld elements", op, (long long)N);
    int64_t n_y = mlrt_numel(Y);
    MLRT_CHECK(M >= 0 && N >= 0 && (M == 0 || N == 0 || n_y % (M * N) == 0), "%s: the output does not fit the product",
               op);
    if (n_y == 0) return MLRT_OK;
    return mlrt_qmatmul_float(ctx, op, A, Az, B, Bz, packed, a_scale, Bs, bias ? bias->data : NULL, Y);
}

static const mlrt_tensor *mq_opt(const mlrt_tensor *in, int32_t n_in, int32_t i) {
    return i < n_in && mlrt_present(&in[i]) ? &in[i] : NULL;
}

/* inputs: A, B, a_scale, b_scale, a_zero_point, b_zero_point, bias (the last three
 * optional) [, B packed: params.packed_b names it]; A, B and the zero points as views,
 * b_scale a view of B's shape */
static int k_matmul_integer_to_float(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                                     int32_t n_out, const void *params, size_t params_size) {
    const char *op = "MatMulIntegerToFloat";
    const mlrt_tensor *packed = NULL;
    if (params) { /* (an older plan passes none) */
        MLRT_PARAMS(mlrt_qmatmul_params, p, params, params_size);
        MLRT_CHECK(p->packed_b == 0 || (p->packed_b >= 4 && p->packed_b == n_in - 1), "%s: packed B at input %lld of %d",
                   op, (long long)p->packed_b, n_in);
        if (p->packed_b) packed = &in[p->packed_b], n_in = (int32_t)p->packed_b;
    }
    MLRT_CHECK(n_in >= 4 && n_in <= 7 && n_out == 1, "%s: expects 4 to 7 inputs and 1 output", op);
    const mlrt_tensor *As = &in[2];
    MLRT_CHECK(As->dtype == MLRT_FLOAT && mlrt_numel(As) == 1, "%s: a_scale must be one float", op);
    MLRT_CHECK(mq_is_8bit(in[0].dtype), "%s: A must be int8 or uint8", op);
    return mq_finish(ctx, op, &in[0], mq_opt(in, n_in, 4), &in[1], mq_opt(in, n_in, 5), packed,
                     *(const float *)As->data, &in[3], mq_opt(in, n_in, 6), &out[0]);
}

typedef struct mq_quant_job {
    const mlrt_tensor *A;
    uint8_t *q;
    int64_t M, K;
    float scale, zp;
    float lo, hi; /* per-thread results of the min / max pass */
} mq_quant_job;

static inline const float *mq_row(const mlrt_tensor *A, int64_t r, int64_t M) {
    int32_t R = A->rank;
    return (const float *)A->data + mq_batch_offset(A, R, r / M) + (r % M) * A->strides[R - 2];
}

static void quantize_rows(void *arg, int64_t begin, int64_t end) {
    const mq_quant_job *j = arg;
    int64_t sk = j->A->strides[j->A->rank - 1];
    for (int64_t r = begin; r < end; ++r) {
        const float *a = mq_row(j->A, r, j->M);
        uint8_t *q = j->q + r * j->K;
        for (int64_t k = 0; k < j->K; ++k) {
            float v = nearbyintf(a[k * sk] / j->scale) + j->zp;
            q[k] = v != v ? 0 : v <= 0.0f ? 0 : v >= 255.0f ? 255 : (uint8_t)v;
        }
    }
}

/* inputs: A (float view), B, b_scale (a view of B's shape), b_zero_point, bias (the last two optional) */
static int k_dynamic_quantize_matmul(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                                     int32_t n_out, const void *params, size_t params_size) {
    const char *op = "DynamicQuantizeMatMul";
    MLRT_CHECK(n_in >= 3 && n_in <= 5 && n_out == 1, "%s: expects 3 to 5 inputs and 1 output", op);
    const mlrt_tensor *A = &in[0];
    int32_t R = A->rank;
    MLRT_CHECK(A->dtype == MLRT_FLOAT && R >= 2 && R <= 8 && in[1].rank == R, "%s: A must be a float view of rank >= 2",
               op);
    int64_t M = A->shape[R - 2], K = A->shape[R - 1], rows = 1;
    for (int32_t d = 0; d < R - 1; ++d) rows *= A->shape[d];
    if (mlrt_numel(&out[0]) == 0) return MLRT_OK;
    /* the range over every element of the view (a broadcast repeats elements, which
     * changes neither end); onnxruntime widens it to hold zero */
    float lo = 0.0f, hi = 0.0f;
    int64_t sk = A->strides[R - 1];
    for (int64_t r = 0; r < rows; ++r) {
        const float *a = mq_row(A, r, M);
        for (int64_t k = 0; k < K; ++k) {
            float v = a[k * sk];
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
    }
    float scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
    float z = 0.0f - lo / scale;
    z = z < 0.0f ? 0.0f : z > 255.0f ? 255.0f : z;
    uint8_t zp = (uint8_t)nearbyintf(z);
    uint8_t *q = malloc((size_t)(rows * K) + 1);
    if (!q) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "%s: cannot allocate the quantized A", op);
    mq_quant_job j = {A, q, M, K, scale, (float)zp, 0, 0};
    mlrt_parallel_for(ctx, rows, K >= MQ_GRAIN ? 1 : MQ_GRAIN / (K + 1) + 1, quantize_rows, &j);
    mlrt_tensor Aq = *A, Az = *A;
    Aq.dtype = MLRT_UINT8, Aq.data = q;
    int64_t s = 1;
    for (int32_t d = R - 1; d >= 0; --d) Aq.strides[d] = s, s *= Aq.shape[d];
    Az.dtype = MLRT_UINT8, Az.data = &zp;
    for (int32_t d = 0; d < R; ++d) Az.strides[d] = 0;
    int status =
        mq_finish(ctx, op, &Aq, &Az, &in[1], mq_opt(in, n_in, 3), NULL, scale, &in[2], mq_opt(in, n_in, 4), &out[0]);
    free(q);
    return status;
}

/* -- MatMulNBits ------------------------------------------------------------------------------- */

typedef struct nbits_job {
    const mlrt_matmul_nbits_params *p;
    const uint8_t *b;
    const void *scales, *zp;
    int32_t st; /* the scales' (and a float zero point's) type */
    int64_t k_blocks, blob, zp_row;
    float *w; /* [N, K] */
} nbits_job;

static inline int32_t nbits_code(const uint8_t *bytes, int64_t i, int64_t bits) {
    int64_t bit = i * bits;
    return (bytes[bit >> 3] >> (bit & 7)) & ((1 << bits) - 1);
}

static void dequantize_rows(void *arg, int64_t begin, int64_t end) {
    const nbits_job *j = arg;
    const mlrt_matmul_nbits_params *p = j->p;
    for (int64_t n = begin; n < end; ++n) {
        float *w = j->w + n * p->K;
        for (int64_t blk = 0; blk < j->k_blocks; ++blk) {
            int64_t si = n * j->k_blocks + blk;
            float scale = (float)mlrt_load_as_double(j->scales, si, j->st);
            float zp = (float)(1 << (p->bits - 1));
            if (p->zp_kind == 1) zp = (float)nbits_code(j->zp + n * j->zp_row, blk, p->bits);
            else if (p->zp_kind == 2) zp = (float)mlrt_load_as_double(j->zp, si, j->st);
            const uint8_t *codes = j->b + si * j->blob;
            int64_t k0 = blk * p->block_size, kn = p->K - k0 < p->block_size ? p->K - k0 : p->block_size;
            for (int64_t k = 0; k < kn; ++k) w[k0 + k] = ((float)nbits_code(codes, k, p->bits) - zp) * scale;
        }
    }
}

/* inputs: A [..., K] (float), B [N, k_blocks, blob] (uint8), scales, zero_points, g_idx
 * (refused), bias [N]; output Y [..., N] */
static int k_matmul_nbits(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                          int32_t n_out, const void *params, size_t params_size) {
    const char *op = "MatMulNBits";
    MLRT_PARAMS(mlrt_matmul_nbits_params, p, params, params_size);
    MLRT_CHECK(n_in >= 3 && n_in <= 6 && n_out == 1, "%s: expects 3 to 6 inputs and 1 output", op);
    const mlrt_tensor *A = &in[0], *B = &in[1], *S = &in[2], *Z = mq_opt(in, n_in, 3), *bias = mq_opt(in, n_in, 5);
    mlrt_tensor *Y = &out[0];
    MLRT_CHECK(!mq_opt(in, n_in, 4), "%s: g_idx is not supported", op);
    MLRT_CHECK(p->bits >= 2 && p->bits <= 8 && (p->bits & (p->bits - 1)) == 0, "%s: bits must be 2, 4 or 8", op);
    MLRT_CHECK(p->block_size >= 1 && p->block_size * p->bits % 8 == 0 && p->K >= 0 && p->N >= 0,
               "%s: bad K / N / block_size", op);
    int64_t K = p->K, N = p->N, k_blocks = (K + p->block_size - 1) / p->block_size;
    int64_t blob = p->block_size * p->bits / 8, zp_row = (k_blocks * p->bits + 7) / 8;
    MLRT_CHECK(A->dtype == MLRT_FLOAT && Y->dtype == MLRT_FLOAT && S->dtype == MLRT_FLOAT,
               "%s: A, scales and Y must be float", op);
    MLRT_CHECK(mlrt_is_contiguous(A) && mlrt_is_contiguous(Y) && mlrt_is_contiguous(B) && mlrt_is_contiguous(S),
               "%s: needs contiguous tensors", op);
    MLRT_CHECK(A->rank >= 1 && A->shape[A->rank - 1] == K, "%s: A's last dim must be K = %lld", op, (long long)K);
    int64_t M = K ? mlrt_numel(A) / K : 0;
    if (K == 0) {
        M = 1;
        for (int32_t d = 0; d < A->rank - 1; ++d) M *= A->shape[d];
    }
    MLRT_CHECK(B->dtype == MLRT_UINT8 && mlrt_numel(B) == N * k_blocks * blob,
               "%s: B must be uint8 [N, k_blocks, blob] = [%lld, %lld, %lld]", op, (long long)N, (long long)k_blocks,
               (long long)blob);
    MLRT_CHECK(mlrt_numel(S) == N * k_blocks, "%s: scales must have N * k_blocks = %lld elements", op,
               (long long)(N * k_blocks));
    MLRT_CHECK(mlrt_numel(Y) == M * N, "%s: Y must have %lld elements", op, (long long)(M * N));
    if (p->zp_kind == 1)
        MLRT_CHECK(Z && Z->dtype == MLRT_UINT8 && mlrt_is_contiguous(Z) && mlrt_numel(Z) == N * zp_row,
                   "%s: packed zero_points must be uint8 with %lld elements", op, (long long)(N * zp_row));
    else if (p->zp_kind == 2)
        MLRT_CHECK(Z && Z->dtype == S->dtype && mlrt_is_contiguous(Z) && mlrt_numel(Z) == N * k_blocks,
                   "%s: zero_points of the scales' type must have %lld elements", op, (long long)(N * k_blocks));
    else
        MLRT_CHECK(p->zp_kind == 0, "%s: bad zero point kind", op);
    MLRT_CHECK(!bias || (bias->dtype == MLRT_FLOAT && mlrt_is_contiguous(bias) && mlrt_numel(bias) == N),
               "%s: bias must be float with N = %lld elements", op, (long long)N);
    if (M * N == 0) return MLRT_OK;
    float *y = Y->data;
    if (K == 0) {
        for (int64_t i = 0; i < M * N; ++i) y[i] = bias ? ((const float *)bias->data)[i % N] : 0.0f;
        return MLRT_OK;
    }
    float *w = malloc((size_t)(N * K) * sizeof(float));
    if (!w) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "%s: cannot allocate the %lld x %lld dequantized weights", op,
                             (long long)N, (long long)K);
    nbits_job j = {p, B->data, S->data, Z ? Z->data : NULL, S->dtype, k_blocks, blob, zp_row, w};
    mlrt_parallel_for(ctx, N, K >= MQ_GRAIN ? 1 : MQ_GRAIN / (K + 1) + 1, dequantize_rows, &j);
    int status = mlrt_sgemm(ctx, false, true, M, N, K, 1.0f, A->data, K, w, K, 0.0f, y, N);
    free(w);
    if (status == MLRT_OK && bias) {
        const float *bv = bias->data;
        for (int64_t i = 0; i < M * N; ++i) y[i] += bv[i % N];
    }
    return status;
}

/* -- QuantizeLinear / DequantizeLinear ------------------------------------------------------- */

static int mq_forward(const char *op, const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                      int32_t n_out, const void *params, size_t params_size) {
    MLRT_CHECK(n_in >= 1, "%s: expects an input", op);
    int32_t k = mlrt_kernel_find("", op, 21, in[0].dtype);
    if (k < 0) return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "com.microsoft %s: no kernel for this input type", op);
    return mlrt_kernel_get(k)->run(ctx, in, n_in, out, n_out, params, params_size);
}

static int k_ms_quantize(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                         const void *params, size_t params_size) {
    return mq_forward("QuantizeLinear", ctx, in, n_in, out, n_out, params, params_size);
}

static int k_ms_dequantize(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                           int32_t n_out, const void *params, size_t params_size) {
    return mq_forward("DequantizeLinear", ctx, in, n_in, out, n_out, params, params_size);
}

#define MQ_8BIT (MLRT_BIT(MLRT_INT8) | MLRT_BIT(MLRT_UINT8))
#define MQ_Q_IN (MLRT_BIT(MLRT_FLOAT) | MLRT_BIT(MLRT_FLOAT16))
#define MQ_DQ_IN (MQ_8BIT | MLRT_BIT(MLRT_INT16) | MLRT_BIT(MLRT_UINT16) | MLRT_BIT(MLRT_INT32) | \
                  MLRT_BIT(MLRT_INT4) | MLRT_BIT(MLRT_UINT4))

MLRT_KERNEL(ms_matmul_integer_to_float, "MatMulIntegerToFloat", "com.microsoft", 1, MLRT_OPSET_MAX, MQ_8BIT,
            k_matmul_integer_to_float);
MLRT_KERNEL(ms_dynamic_quantize_matmul, "DynamicQuantizeMatMul", "com.microsoft", 1, MLRT_OPSET_MAX,
            MLRT_BIT(MLRT_FLOAT), k_dynamic_quantize_matmul);
MLRT_KERNEL(ms_matmul_nbits, "MatMulNBits", "com.microsoft", 1, MLRT_OPSET_MAX, MLRT_BIT(MLRT_FLOAT), k_matmul_nbits);
MLRT_KERNEL(ms_quantizelinear, "QuantizeLinear", "com.microsoft", 1, MLRT_OPSET_MAX, MQ_Q_IN, k_ms_quantize);
MLRT_KERNEL(ms_dequantizelinear, "DequantizeLinear", "com.microsoft", 1, MLRT_OPSET_MAX, MQ_DQ_IN, k_ms_dequantize);

/* -- DynamicQuantizeLSTM ---------------------------------------------------------------------- */

/* inputs: the node's 12 (X, W, R, B, sequence_lens, initial_h, initial_c, P, W_scale,
 * W_zero_point, R_scale, R_zero_point), then the float W [dirs, 4H, input] and R
 * [dirs, 4H, H] dequantized once by the plan; runs the LSTM kernel on X, W, R, B, ..., P */
static int k_dynamic_quantize_lstm(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                                   int32_t n_out, const void *params, size_t params_size) {
    const char *op = "DynamicQuantizeLSTM";
    MLRT_CHECK(n_in == 14, "%s: expects 12 inputs and the 2 dequantized weights", op);
    MLRT_CHECK(in[12].dtype == MLRT_FLOAT && in[13].dtype == MLRT_FLOAT && in[0].dtype == MLRT_FLOAT,
               "%s: X and the dequantized weights must be float", op);
    int32_t k = mlrt_kernel_find("", "LSTM", 14, MLRT_FLOAT);
    if (k < 0) return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "%s: no LSTM kernel to run on", op);
    mlrt_tensor lstm_in[8];
    memcpy(lstm_in, in, sizeof lstm_in);
    lstm_in[1] = in[12], lstm_in[2] = in[13];
    return mlrt_kernel_get(k)->run(ctx, lstm_in, 8, out, n_out, params, params_size);
}

MLRT_KERNEL(ms_dynamic_quantize_lstm, "DynamicQuantizeLSTM", "com.microsoft", 1, MLRT_OPSET_MAX, MLRT_BIT(MLRT_FLOAT),
            k_dynamic_quantize_lstm);
