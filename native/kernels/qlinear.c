/* qlinear.c -- MatMulInteger, QLinearMatMul, ConvInteger, QLinearConv.
 *
 * The 8-bit operands, less their zero points, are widened to double and multiplied
 * by the BLAS core (MatMul) or the Conv kernel (looked up in the kernel table, so the
 * im2col / depthwise paths are shared): every product of two 8-bit differences is
 * below 2^17, so the sums are exact up to 2^36 terms.  The integer result wraps to
 * int32 (accumulation "may overflow if and only if in 32 bits"), and the QLinear ops
 * requantize it: y = saturate(round(acc * (a_scale * b_scale / y_scale) + y_zero_point)),
 * the multiplier rounded in the scales' type at each step and the rest in double, as
 * in onnx.reference, rounding half to even.
 *
 * MatMul operands come as views broadcast to a common batch shape (numpy.matmul);
 * zero points and scales as views of their operand's shape: per tensor (all strides
 * 0), per row of a / per column of b. */
#include <math.h>
#include <stdlib.h>

#include "conv.h"
#include "gemm.h"
#include "internal.h"

#define QL_GRAIN 16384

static inline double ql_load(const void *p, int64_t i, int32_t t) {
    switch (t) {
    case MLRT_FLOAT: return ((const float *)p)[i];
    case MLRT_DOUBLE: return ((const double *)p)[i];
    case MLRT_FLOAT16: return mlrt_f16_to_f32(((const uint16_t *)p)[i]);
    case MLRT_BFLOAT16: return mlrt_bf16_to_f32(((const uint16_t *)p)[i]);
    case MLRT_INT8: return ((const int8_t *)p)[i];
    case MLRT_UINT8: return ((const uint8_t *)p)[i];
    case MLRT_INT32: return ((const int32_t *)p)[i];
    default: return 0;
    }
}

/* v rounded to the floating type t (as numpy computes in it), back as a double */
static inline double ql_round(double v, int32_t t) {
    switch (t) {
    case MLRT_FLOAT: return (float)v;
    case MLRT_FLOAT16: return mlrt_f16_to_f32(mlrt_f64_to_f16(v));
    case MLRT_BFLOAT16: return mlrt_bf16_to_f32(mlrt_f32_to_bf16((float)v));
    default: return v;
    }
}

/* an exact integer sum, wrapped to int32 like numpy's int32 accumulation */
static inline int32_t ql_wrap(double v) { return (int32_t)(uint32_t)(uint64_t)(int64_t)v; }

static bool ql_is_8bit(int32_t t) { return t == MLRT_INT8 || t == MLRT_UINT8; }
static bool ql_is_scale(int32_t t) { return t == MLRT_FLOAT || t == MLRT_FLOAT16 || t == MLRT_BFLOAT16; }

static inline void ql_store(void *y, int64_t i, int32_t t, double v) {
    double r = nearbyint(v);
    if (t == MLRT_UINT8) ((uint8_t *)y)[i] = r != r || r <= 0 ? 0 : r >= 255 ? 255 : (uint8_t)r;
    else ((int8_t *)y)[i] = r != r || r <= -128 ? -128 : r >= 127 ? 127 : (int8_t)r;
}

/* -- integer matrix products ------------------------------------------------------------------- */

typedef struct qmm_job {
    const mlrt_tensor *A, *Az, *B, *Bz;
    int32_t R;
    int64_t M, N, K, batch;
    double *a, *b; /* widened A (batch, M, K) and B (1 or batch, K, N) */
} qmm_job;

static inline int64_t batch_offset(const mlrt_tensor *t, int32_t R, int64_t b) {
    int64_t off = 0;
    for (int32_t d = R - 3; d >= 0; --d) {
        off += (b % t->shape[d]) * t->strides[d];
        b /= t->shape[d];
    }
    return off;
}

/* rows (b, i) of a widened operand: X[b, i, :] - zp[b, i, :] */
static void widen_rows(const mlrt_tensor *X, const mlrt_tensor *Z, int32_t R, int64_t rows_per_batch, int64_t cols,
                       double *dst, int64_t begin, int64_t end) {
    int64_t sr = X->strides[R - 2], sc = X->strides[R - 1];
    for (int64_t r = begin; r < end; ++r) {
        int64_t b = r / rows_per_batch, i = r % rows_per_batch;
        int64_t ox = batch_offset(X, R, b) + i * sr;
        double *out = dst + r * cols;
        for (int64_t k = 0; k < cols; ++k) out[k] = ql_load(X->data, ox + k * sc, X->dtype);
        if (Z) {
            int64_t oz = batch_offset(Z, R, b) + i * Z->strides[R - 2], zc = Z->strides[R - 1];
            for (int64_t k = 0; k < cols; ++k) out[k] -= ql_load(Z->data, oz + k * zc, Z->dtype);
        }
    }
}

static void widen_a(void *arg, int64_t begin, int64_t end) {
    const qmm_job *j = arg;
    widen_rows(j->A, j->Az, j->R, j->M, j->K, j->a, begin, end);
}

static void widen_b(void *arg, int64_t begin, int64_t end) {
    const qmm_job *j = arg;
    widen_rows(j->B, j->Bz, j->R, j->K, j->N, j->b, begin, end);
}

static bool batch_shared(const mlrt_tensor *t, int32_t R) {
    for (int32_t d = 0; d < R - 2; ++d)
        if (t->shape[d] != 1 && t->strides[d] != 0) return false;
    return true;
}

/* Check the views and compute acc = (A - Az) @ (B - Bz) in double, (batch, M, N),
 * into a buffer the caller frees. */
static int qmm_accumulate(const mlrt_context *ctx, const char *op, const mlrt_tensor *A, const mlrt_tensor *Az,
                          const mlrt_tensor *B, const mlrt_tensor *Bz, const mlrt_tensor *Y, double **acc_out,
                          int64_t *dims) {
    int32_t R = A->rank;
    MLRT_CHECK(R >= 2 && B->rank == R, "%s: A and B must be views of equal rank >= 2", op);
    MLRT_CHECK(ql_is_8bit(A->dtype) && ql_is_8bit(B->dtype), "%s: A and B must be int8 or uint8", op);
    MLRT_CHECK(!Az || (Az->dtype == A->dtype && mlrt_same_shape(Az, A)), "%s: A's zero point must be a view of A's type and shape", op);
    MLRT_CHECK(!Bz || (Bz->dtype == B->dtype && mlrt_same_shape(Bz, B)), "%s: B's zero point must be a view of B's type and shape", op);
    MLRT_CHECK(mlrt_is_contiguous(Y), "%s: needs a contiguous output", op);
    int64_t M = A->shape[R - 2], K = A->shape[R - 1], N = B->shape[R - 1], batch = 1;
    MLRT_CHECK(B->shape[R - 2] == K, "%s: inner dimensions differ (%lld vs %lld)", op, (long long)K,
               (long long)B->shape[R - 2]);
    for (int32_t d = 0; d < R - 2; ++d) {
        MLRT_CHECK(A->shape[d] == B->shape[d], "%s: batch dimensions of the views differ", op);
        batch *= A->shape[d];
    }
    MLRT_CHECK(mlrt_numel(Y) == batch * M * N, "%s: the output has %lld elements, expected %lld", op,
               (long long)mlrt_numel(Y), (long long)(batch * M * N));
    dims[0] = batch, dims[1] = M, dims[2] = N;
    *acc_out = NULL;
    if (batch * M * N == 0) return MLRT_OK;
    bool b_shared = batch_shared(B, R) && (!Bz || batch_shared(Bz, R));
    int64_t nb = b_shared ? 1 : batch;
    size_t na = (size_t)(batch * M * K), nbk = (size_t)(nb * K * N), nacc = (size_t)(batch * M * N);
    double *buf = malloc((na + nbk + nacc) * sizeof(double) + 1);
    if (!buf) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "%s: cannot allocate %zu bytes of work space", op,
                               (na + nbk + nacc) * sizeof(double));
    qmm_job j = {A, Az, B, Bz, R, M, N, K, batch, buf, buf + na};
    double *acc = buf + na + nbk;
    int64_t grain_a = K >= QL_GRAIN ? 1 : QL_GRAIN / (K + 1) + 1, grain_b = N >= QL_GRAIN ? 1 : QL_GRAIN / (N + 1) + 1;
    mlrt_parallel_for(ctx, batch * M, grain_a, widen_a, &j);
    mlrt_parallel_for(ctx, nb * K, grain_b, widen_b, &j);
    int status = MLRT_OK;
    if (b_shared) {
        status = mlrt_dgemm(ctx, false, false, batch * M, N, K, 1.0, j.a, K, j.b, N, 0.0, acc, N);
    } else {
        for (int64_t b = 0; b < batch && status == MLRT_OK; ++b)
            status = mlrt_dgemm(ctx, false, false, M, N, K, 1.0, j.a + b * M * K, K, j.b + b * K * N, N, 0.0,
                                acc + b * M * N, N);
    }
    if (status) {
        free(buf);
        return status;
    }
    /* keep only the accumulator: move it to the front of the buffer */
    memmove(buf, acc, nacc * sizeof(double));
    *acc_out = buf;
    return MLRT_OK;
}

typedef struct ql_out_job {
    const double *acc;
    void *y;
    int32_t yt;
    /* QLinear: per element multiplier from per-row and per-column scales */
    int64_t M, N;
    const double *row_scale, *col_scale; /* (batch, M), (batch, N) */
    int32_t st;                          /* the scales' type */
    double y_scale, y_zp, mult;          /* mult when both scales are per tensor */
    bool per_tensor;
} ql_out_job;

static void store_int32(void *arg, int64_t begin, int64_t end) {
    const ql_out_job *j = arg;
    for (int64_t i = begin; i < end; ++i) ((int32_t *)j->y)[i] = ql_wrap(j->acc[i]);
}

static void store_requantized_mm(void *arg, int64_t begin, int64_t end) {
    const ql_out_job *j = arg;
    for (int64_t i = begin; i < end; ++i) {
        double mult = j->mult;
        if (!j->per_tensor) {
            int64_t n = i % j->N, bm = i / j->N, b = bm / j->M;
            mult = ql_round(ql_round(j->row_scale[bm] * j->col_scale[b * j->N + n], j->st) / j->y_scale, j->st);
        }
        ql_store(j->y, i, j->yt, (double)ql_wrap(j->acc[i]) * mult + j->y_zp);
    }
}

/* inputs: A, B, a_zero_point (optional), b_zero_point (optional); output: Y (int32) */
static int k_matmulinteger(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                           int32_t n_out, const void *params, size_t params_size) {
    MLRT_CHECK(n_in >= 2 && n_in <= 4 && n_out == 1, "MatMulInteger: expects 2 to 4 inputs and 1 output");
    const mlrt_tensor *az = n_in > 2 && mlrt_present(&in[2]) ? &in[2] : NULL;
    const mlrt_tensor *bz = n_in > 3 && mlrt_present(&in[3]) ? &in[3] : NULL;
    MLRT_CHECK(out[0].dtype == MLRT_INT32, "MatMulInteger: the output must be int32");
    double *acc;
    int64_t dims[3];
    int status = qmm_accumulate(ctx, "MatMulInteger", &in[0], az, &in[1], bz, &out[0], &acc, dims);
    if (status || !acc) return status;
    ql_out_job j = {.acc = acc, .y = out[0].data};
    mlrt_parallel_for(ctx, dims[0] * dims[1] * dims[2], QL_GRAIN, store_int32, &j);
    free(acc);
    return MLRT_OK;
}

/* Values of a per-row (or per-column) scale view for every (batch, i): the view has its
 * operand's shape; `along` is the dimension it varies on (R-2 rows of a, R-1 columns of b). */
static void gather_scales(const mlrt_tensor *s, int32_t R, int32_t along, int64_t batch, double *dst) {
    int64_t n = s->shape[along];
    for (int64_t b = 0; b < batch; ++b) {
        int64_t off = batch_offset(s, R, b);
        for (int64_t i = 0; i < n; ++i) dst[b * n + i] = ql_load(s->data, off + i * s->strides[along], s->dtype);
    }
}

static bool all_zero_strides(const mlrt_tensor *t) {
    for (int32_t d = 0; d < t->rank; ++d)
        if (t->shape[d] != 1 && t->strides[d] != 0) return false;
    return true;
}

/* inputs: a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point; output: y */
static int k_qlinearmatmul(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                           int32_t n_out, const void *params, size_t params_size) {
    MLRT_CHECK(n_in == 8 && n_out == 1, "QLinearMatMul: expects 8 inputs and 1 output");
    const mlrt_tensor *A = &in[0], *As = &in[1], *B = &in[3], *Bs = &in[4], *Ys = &in[6];
    const mlrt_tensor *Az = mlrt_present(&in[2]) ? &in[2] : NULL, *Bz = mlrt_present(&in[5]) ? &in[5] : NULL;
    const mlrt_tensor *Yz = mlrt_present(&in[7]) ? &in[7] : NULL;
    mlrt_tensor *Y = &out[0];
    MLRT_CHECK(ql_is_8bit(Y->dtype) && (!Yz || Yz->dtype == Y->dtype), "QLinearMatMul: y must be int8 or uint8, "
               "of its zero point's type");
    MLRT_CHECK(ql_is_scale(As->dtype) && Bs->dtype == As->dtype && Ys->dtype == As->dtype,
               "QLinearMatMul: the scales must share one float type");
    MLRT_CHECK(mlrt_same_shape(As, A) && mlrt_same_shape(Bs, B), "QLinearMatMul: scales must be views of their operand's shape");
    MLRT_CHECK(mlrt_numel(Ys) == 1 && (!Yz || mlrt_numel(Yz) == 1), "QLinearMatMul: y_scale and y_zero_point must be scalars");
    double *acc;
    int64_t dims[3];
    int status = qmm_accumulate(ctx, "QLinearMatMul", A, Az, B, Bz, Y, &acc, dims);
    if (status || !acc) return status;
    int32_t R = A->rank;
    ql_out_job j = {.acc = acc, .y = Y->data, .yt = Y->dtype, .M = dims[1], .N = dims[2], .st = As->dtype,
                    .y_scale = ql_load(Ys->data, 0, Ys->dtype), .y_zp = Yz ? ql_load(Yz->data, 0, Yz->dtype) : 0};
    j.per_tensor = all_zero_strides(As) && all_zero_strides(Bs);
    double *scales = NULL;
    if (j.per_tensor) {
        j.mult = ql_round(ql_round(ql_load(As->data, 0, j.st) * ql_load(Bs->data, 0, j.st), j.st) / j.y_scale, j.st);
    } else {
        scales = malloc((size_t)(dims[0] * (dims[1] + dims[2])) * sizeof(double) + 1);
        if (!scales) {
            free(acc);
            return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "QLinearMatMul: out of memory");
        }
        gather_scales(As, R, R - 2, dims[0], scales);
        gather_scales(Bs, R, R - 1, dims[0], scales + dims[0] * dims[1]);
        j.row_scale = scales, j.col_scale = scales + dims[0] * dims[1];
    }
    mlrt_parallel_for(ctx, dims[0] * dims[1] * dims[2], QL_GRAIN, store_requantized_mm, &j);
    free(scales);
    free(acc);
    return MLRT_OK;
}

#define MASK_8BIT (MLRT_BIT(MLRT_INT8) | MLRT_BIT(MLRT_UINT8))

MLRT_KERNEL(matmulinteger, "MatMulInteger", "", 10, MLRT_OPSET_MAX, MASK_8BIT, k_matmulinteger);
MLRT_KERNEL(qlinearmatmul, "QLinearMatMul", "", 10, MLRT_OPSET_MAX, MASK_8BIT, k_qlinearmatmul);

/* -- integer convolutions ------------------------------------------------------------------------ */

typedef struct widen_job {
    const void *src;
    int32_t st;
    const void *zp; /* NULL, one value, or one per row */
    int32_t zt;
    int64_t row_len, n_zp;
    double *dst;
} widen_job;

static void widen_flat(void *arg, int64_t begin, int64_t end) {
    const widen_job *j = arg;
    for (int64_t i = begin; i < end; ++i) {
        double z = j->zp ? ql_load(j->zp, j->n_zp == 1 ? 0 : i / j->row_len, j->zt) : 0;
        j->dst[i] = ql_load(j->src, i, j->st) - z;
    }
}

/* acc (y's shape, double) = Conv(x - x_zp, w - w_zp[m]) through the double Conv kernel */
static int qconv_accumulate(const mlrt_context *ctx, const char *op, const mlrt_conv_params *p, const mlrt_tensor *X,
                            const mlrt_tensor *Xz, const mlrt_tensor *W, const mlrt_tensor *Wz, const mlrt_tensor *Y,
                            double **acc_out) {
    *acc_out = NULL;
    MLRT_CHECK(ql_is_8bit(X->dtype) && ql_is_8bit(W->dtype), "%s: x and w must be int8 or uint8", op);
    MLRT_CHECK(mlrt_is_contiguous(X) && mlrt_is_contiguous(W) && mlrt_is_contiguous(Y), "%s: needs contiguous tensors", op);
    MLRT_CHECK(X->rank >= 3 && W->rank == X->rank && Y->rank == X->rank, "%s: x, w and y must have one rank >= 3", op);
    MLRT_CHECK(!Xz || (Xz->dtype == X->dtype && mlrt_numel(Xz) == 1), "%s: x's zero point must be one value of x's type", op);
    int64_t M = W->shape[0];
    MLRT_CHECK(!Wz || (Wz->dtype == W->dtype && (mlrt_numel(Wz) == 1 || mlrt_numel(Wz) == M)),
               "%s: w's zero point must be of w's type, one value or one per output channel", op);
    int64_t nx = mlrt_numel(X), nw = mlrt_numel(W), ny = mlrt_numel(Y);
    if (ny == 0) return MLRT_OK;
    int32_t k = mlrt_kernel_find("", "Conv", 11, MLRT_DOUBLE);
    if (k < 0) return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "%s: no double Conv kernel to run on", op);
    double *buf = malloc((size_t)(nx + nw + ny) * sizeof(double) + 1);
    if (!buf) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "%s: cannot allocate the work space", op);
    widen_job jx = {X->data, X->dtype, Xz ? Xz->data : NULL, Xz ? Xz->dtype : 0, 1, 1, buf};
    widen_job jw = {W->data, W->dtype, Wz ? Wz->data : NULL, Wz ? Wz->dtype : 0, M ? nw / M : 1,
                    Wz ? mlrt_numel(Wz) : 1, buf + nx};
    mlrt_parallel_for(ctx, nx, QL_GRAIN, widen_flat, &jx);
    mlrt_parallel_for(ctx, nw, QL_GRAIN, widen_flat, &jw);
    mlrt_tensor t[3] = {*X, *W, *Y};
    t[0].dtype = t[1].dtype = t[2].dtype = MLRT_DOUBLE;
    t[0].data = buf, t[1].data = buf + nx, t[2].data = buf + nx + nw;
    int status = mlrt_kernel_get(k)->run(ctx, t, 2, &t[2], 1, p, sizeof *p);
    if (status) {
        free(buf);
        return status;
    }
    memmove(buf, buf + nx + nw, (size_t)ny * sizeof(double));
    *acc_out = buf;
    return MLRT_OK;
}

/* inputs: x, w, x_zero_point (optional), w_zero_point (optional); output: y (int32) */
static int k_convinteger(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                         int32_t n_out, const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_conv_params, p, params, params_size);
    MLRT_CHECK(n_in >= 2 && n_in <= 4 && n_out == 1, "ConvInteger: expects 2 to 4 inputs and 1 output");
    MLRT_CHECK(out[0].dtype == MLRT_INT32, "ConvInteger: the output must be int32");
    const mlrt_tensor *xz = n_in > 2 && mlrt_present(&in[2]) ? &in[2] : NULL;
    const mlrt_tensor *wz = n_in > 3 && mlrt_present(&in[3]) ? &in[3] : NULL;
    double *acc;
    int status = qconv_accumulate(ctx, "ConvInteger", p, &in[0], xz, &in[1], wz, &out[0], &acc);
    if (status || !acc) return status;
    ql_out_job j = {.acc = acc, .y = out[0].data};
    mlrt_parallel_for(ctx, mlrt_numel(&out[0]), QL_GRAIN, store_int32, &j);
    free(acc);
    return MLRT_OK;
}

typedef struct qconv_out_job {
    const double *acc;
    void *y;
    int32_t yt;
    int64_t M, plane; /* output channels, elements per (image, channel) plane */
    const int32_t *bias;
    const double *mult; /* per output channel */
    double y_zp;
} qconv_out_job;

static void store_requantized_conv(void *arg, int64_t begin, int64_t end) {
    const qconv_out_job *j = arg;
    for (int64_t i = begin; i < end; ++i) {
        int64_t m = (i / j->plane) % j->M;
        int32_t a = ql_wrap(j->acc[i]);
        if (j->bias) a = (int32_t)((uint32_t)a + (uint32_t)j->bias[m]);
        ql_store(j->y, i, j->yt, (double)a * j->mult[m] + j->y_zp);
    }
}

/* inputs: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B (optional); output: y */
static int k_qlinearconv(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                         int32_t n_out, const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_conv_params, p, params, params_size);
    MLRT_CHECK((n_in == 8 || n_in == 9) && n_out == 1, "QLinearConv: expects 8 or 9 inputs and 1 output");
    const mlrt_tensor *X = &in[0], *Xs = &in[1], *W = &in[3], *Ws = &in[4], *Ys = &in[6];
    const mlrt_tensor *Xz = mlrt_present(&in[2]) ? &in[2] : NULL, *Wz = mlrt_present(&in[5]) ? &in[5] : NULL;
    const mlrt_tensor *Yz = mlrt_present(&in[7]) ? &in[7] : NULL, *B = n_in == 9 && mlrt_present(&in[8]) ? &in[8] : NULL;
    mlrt_tensor *Y = &out[0];
    int64_t M = W->rank >= 1 ? W->shape[0] : 0;
    MLRT_CHECK(ql_is_8bit(Y->dtype) && (!Yz || Yz->dtype == Y->dtype), "QLinearConv: y must be int8 or uint8, "
               "of its zero point's type");
    MLRT_CHECK(Xs->dtype == MLRT_FLOAT && Ws->dtype == MLRT_FLOAT && Ys->dtype == MLRT_FLOAT,
               "QLinearConv: the scales must be float");
    MLRT_CHECK(mlrt_numel(Xs) == 1 && mlrt_numel(Ys) == 1 && (!Yz || mlrt_numel(Yz) == 1),
               "QLinearConv: x_scale, y_scale and y_zero_point must be scalars");
    MLRT_CHECK(mlrt_numel(Ws) == 1 || mlrt_numel(Ws) == M, "QLinearConv: w_scale must have 1 or %lld elements", (long long)M);
    MLRT_CHECK(!B || (B->dtype == MLRT_INT32 && mlrt_numel(B) == M && mlrt_is_contiguous(B)),
               "QLinearConv: B must be int32 with %lld elements", (long long)M);
    MLRT_CHECK(mlrt_is_contiguous(Ws), "QLinearConv: needs a contiguous w_scale");
    double *acc;
    int status = qconv_accumulate(ctx, "QLinearConv", p, X, Xz, W, Wz, Y, &acc);
    if (status || !acc) return status;
    double *mult = malloc((size_t)M * sizeof(double) + 1);
    if (!mult) {
        free(acc);
        return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "QLinearConv: out of memory");
    }
    float xs = *(const float *)Xs->data, ys = *(const float *)Ys->data;
    int64_t nws = mlrt_numel(Ws);
    for (int64_t m = 0; m < M; ++m) {
        float ws = ((const float *)Ws->data)[nws == 1 ? 0 : m];
        float xw = xs * ws;
        mult[m] = (float)(xw / ys);
    }
    int64_t plane = 1;
    for (int32_t d = 2; d < Y->rank; ++d) plane *= Y->shape[d];
    qconv_out_job j = {acc, Y->data, Y->dtype, M, plane, B ? B->data : NULL, mult, Yz ? ql_load(Yz->data, 0, Yz->dtype) : 0};
    if (plane > 0) mlrt_parallel_for(ctx, mlrt_numel(Y), QL_GRAIN, store_requantized_conv, &j);
    free(mult);
    free(acc);
    return MLRT_OK;
}

MLRT_KERNEL(convinteger, "ConvInteger", "", 10, MLRT_OPSET_MAX, MASK_8BIT, k_convinteger);
MLRT_KERNEL(qlinearconv, "QLinearConv", "", 10, MLRT_OPSET_MAX, MASK_8BIT, k_qlinearconv);
