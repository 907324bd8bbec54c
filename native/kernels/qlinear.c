/* qlinear.c -- MatMulInteger, QLinearMatMul, ConvInteger, QLinearConv.
 *
 * The 8-bit operands, less their zero points, are widened to float and multiplied by
 * the BLAS core (MatMul) or the float Conv kernel (looked up in the kernel table, so
 * the im2col / depthwise / pointwise paths are shared).  Every product of two 8-bit
 * differences is at most 255 * 255, so a sum of up to 256 of them is an integer below
 * 2^24 and float arithmetic is exact: the reduction is cut into chunks of at most 256
 * terms (K columns of a product, input channels of a convolution) whose exact float
 * results are added into an int32 accumulator, wrapping like numpy's int32 sums
 * ("accumulation may overflow if and only if in 32 bits").  A convolution window
 * larger than 256 taps runs in double instead (exact up to 2^36 terms).
 *
 * The QLinear ops then requantize: y = saturate(round(acc * (a_scale * b_scale /
 * y_scale) + y_zero_point)), the multiplier rounded in the scales' type at each step
 * and the rest in double, as in onnx.reference, rounding half to even.
 *
 * MatMul operands come as views broadcast to a common batch shape (numpy.matmul);
 * zero points and scales as views of their operand's shape: per tensor (all strides
 * 0), per row of a / per column of b. */
#include <math.h>
#include <stdlib.h>

#include "conv.h"
#include "gemm.h"
#include "internal.h"
#define ql_load mlrt_load_as_double

#define QL_GRAIN 16384
#define QL_EXACT_TERMS 256 /* 256 * 255 * 255 < 2^24 */

static inline int32_t ql_load8(const void *p, int64_t i, int32_t t) {
    return t == MLRT_INT8 ? ((const int8_t *)p)[i] : ((const uint8_t *)p)[i];
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

/* acc += v (an exact integer in float or double), wrapping in 32 bits */
static inline int32_t ql_add(int32_t acc, double v) { return (int32_t)((uint32_t)acc + (uint32_t)(int64_t)v); }

static bool ql_is_8bit(int32_t t) { return t == MLRT_INT8 || t == MLRT_UINT8; }
static bool ql_is_scale(int32_t t) { return t == MLRT_FLOAT || t == MLRT_FLOAT16 || t == MLRT_BFLOAT16; }

static inline void ql_store(void *y, int64_t i, int32_t t, double v) {
    double r = nearbyint(v);
    if (t == MLRT_UINT8) ((uint8_t *)y)[i] = r != r || r <= 0 ? 0 : r >= 255 ? 255 : (uint8_t)r;
    else ((int8_t *)y)[i] = r != r || r <= -128 ? -128 : r >= 127 ? 127 : (int8_t)r;
}

typedef struct ql_fold_job {
    const void *src; /* float or double partial results */
    bool f64;
    int32_t *acc;
    bool first;
} ql_fold_job;

static void fold_range(void *arg, int64_t begin, int64_t end) {
    const ql_fold_job *j = arg;
    for (int64_t i = begin; i < end; ++i) {
        double v = j->f64 ? ((const double *)j->src)[i] : ((const float *)j->src)[i];
        j->acc[i] = ql_add(j->first ? 0 : j->acc[i], v);
    }
}

static void ql_fold(const mlrt_context *ctx, const void *src, bool f64, int32_t *acc, int64_t n, bool first) {
    ql_fold_job j = {src, f64, acc, first};
    mlrt_parallel_for(ctx, n, QL_GRAIN, fold_range, &j);
}

/* -- integer matrix products ------------------------------------------------------------------- */

typedef struct qmm_job {
    const mlrt_tensor *A, *Az, *B, *Bz;
    int32_t R;
    int64_t M, N, K, batch;
    float *a, *b; /* widened A (batch, M, K) and B (1 or batch, K, N) */
} qmm_job;

static inline int64_t batch_offset(const mlrt_tensor *t, int32_t R, int64_t b) {
    int64_t off = 0;
    for (int32_t d = R - 3; d >= 0; --d) {
        off += (b % t->shape[d]) * t->strides[d];
        b /= t->shape[d];
    }
    return off;
}

/* rows (b, i) of a widened operand: X[b, i, :] - Z[b, i, :] */
static void widen_rows(const mlrt_tensor *X, const mlrt_tensor *Z, int32_t R, int64_t rows_per_batch, int64_t cols,
                       float *dst, int64_t begin, int64_t end) {
    int64_t sr = X->strides[R - 2], sc = X->strides[R - 1];
    for (int64_t r = begin; r < end; ++r) {
        int64_t b = r / rows_per_batch, i = r % rows_per_batch;
        int64_t ox = batch_offset(X, R, b) + i * sr;
        float *out = dst + r * cols;
        for (int64_t k = 0; k < cols; ++k) out[k] = (float)ql_load8(X->data, ox + k * sc, X->dtype);
        if (Z) {
            int64_t oz = batch_offset(Z, R, b) + i * Z->strides[R - 2], zc = Z->strides[R - 1];
            for (int64_t k = 0; k < cols; ++k) out[k] -= (float)ql_load8(Z->data, oz + k * zc, Z->dtype);
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

/* Check the views and set acc (batch, M, N) = (A - Az) @ (B - Bz), wrapping in int32. */
static int qmm_accumulate(const mlrt_context *ctx, const char *op, const mlrt_tensor *A, const mlrt_tensor *Az,
                          const mlrt_tensor *B, const mlrt_tensor *Bz, const mlrt_tensor *Y, int32_t *acc,
                          int64_t *dims) {
    int32_t R = A->rank;
    MLRT_CHECK(R >= 2 && B->rank == R, "%s: A and B must be views of equal rank >= 2", op);
    MLRT_CHECK(ql_is_8bit(A->dtype) && ql_is_8bit(B->dtype), "%s: A and B must be int8 or uint8", op);
    MLRT_CHECK(!Az || (Az->dtype == A->dtype && mlrt_same_shape(Az, A)),
               "%s: A's zero point must be a view of A's type and shape", op);
    MLRT_CHECK(!Bz || (Bz->dtype == B->dtype && mlrt_same_shape(Bz, B)),
               "%s: B's zero point must be a view of B's type and shape", op);
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
    int64_t n_acc = batch * M * N;
    if (n_acc == 0) return MLRT_OK;
    bool b_shared = batch_shared(B, R) && (!Bz || batch_shared(Bz, R));
    int64_t nb = b_shared ? 1 : batch;
    size_t na = (size_t)(batch * M * K), nbk = (size_t)(nb * K * N);
    float *buf = malloc((na + nbk + (size_t)n_acc) * sizeof(float) + 1);
    if (!buf) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "%s: cannot allocate %zu bytes of work space", op,
                               (na + nbk + (size_t)n_acc) * sizeof(float));
    qmm_job j = {A, Az, B, Bz, R, M, N, K, batch, buf, buf + na};
    float *part = buf + na + nbk;
    int64_t grain_a = K >= QL_GRAIN ? 1 : QL_GRAIN / (K + 1) + 1, grain_b = N >= QL_GRAIN ? 1 : QL_GRAIN / (N + 1) + 1;
    mlrt_parallel_for(ctx, batch * M, grain_a, widen_a, &j);
    mlrt_parallel_for(ctx, nb * K, grain_b, widen_b, &j);
    int status = MLRT_OK;
    if (K == 0) memset(acc, 0, (size_t)n_acc * sizeof(int32_t));
    for (int64_t k0 = 0; k0 < K && status == MLRT_OK; k0 += QL_EXACT_TERMS) {
        int64_t kc = K - k0 < QL_EXACT_TERMS ? K - k0 : QL_EXACT_TERMS;
        if (b_shared)
            status = mlrt_sgemm(ctx, false, false, batch * M, N, kc, 1.0f, j.a + k0, K, j.b + k0 * N, N, 0.0f, part, N);
        for (int64_t b = 0; !b_shared && b < batch && status == MLRT_OK; ++b)
            status = mlrt_sgemm(ctx, false, false, M, N, kc, 1.0f, j.a + b * M * K + k0, K, j.b + (b * K + k0) * N, N,
                                0.0f, part + b * M * N, N);
        if (status == MLRT_OK) ql_fold(ctx, part, false, acc, n_acc, k0 == 0);
    }
    free(buf);
    return status;
}

typedef struct ql_out_job {
    const int32_t *acc;
    void *y;
    int32_t yt;
    int64_t M, N;
    const double *row_scale, *col_scale; /* (batch, M), (batch, N) when not per tensor */
    int32_t st;                          /* the scales' type */
    double y_scale, y_zp, mult;          /* mult when both scales are per tensor */
    bool per_tensor;
} ql_out_job;

static void store_requantized_mm(void *arg, int64_t begin, int64_t end) {
    const ql_out_job *j = arg;
    for (int64_t i = begin; i < end; ++i) {
        double mult = j->mult;
        if (!j->per_tensor) {
            int64_t n = i % j->N, bm = i / j->N, b = bm / j->M;
            mult = ql_round(ql_round(j->row_scale[bm] * j->col_scale[b * j->N + n], j->st) / j->y_scale, j->st);
        }
        ql_store(j->y, i, j->yt, (double)j->acc[i] * mult + j->y_zp);
    }
}

/* inputs: A, B, a_zero_point (optional), b_zero_point (optional); output: Y (int32) */
static int k_matmulinteger(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                           int32_t n_out, const void *params, size_t params_size) {
    MLRT_CHECK(n_in >= 2 && n_in <= 4 && n_out == 1, "MatMulInteger: expects 2 to 4 inputs and 1 output");
    const mlrt_tensor *az = n_in > 2 && mlrt_present(&in[2]) ? &in[2] : NULL;
    const mlrt_tensor *bz = n_in > 3 && mlrt_present(&in[3]) ? &in[3] : NULL;
    MLRT_CHECK(out[0].dtype == MLRT_INT32, "MatMulInteger: the output must be int32");
    int64_t dims[3];
    return qmm_accumulate(ctx, "MatMulInteger", &in[0], az, &in[1], bz, &out[0], out[0].data, dims);
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
    MLRT_CHECK(ql_is_8bit(Y->dtype) && (!Yz || Yz->dtype == Y->dtype),
               "QLinearMatMul: y must be int8 or uint8, of its zero point's type");
    MLRT_CHECK(ql_is_scale(As->dtype) && Bs->dtype == As->dtype && Ys->dtype == As->dtype,
               "QLinearMatMul: the scales must share one float type");
    MLRT_CHECK(mlrt_same_shape(As, A) && mlrt_same_shape(Bs, B),
               "QLinearMatMul: scales must be views of their operand's shape");
    MLRT_CHECK(mlrt_numel(Ys) == 1 && (!Yz || mlrt_numel(Yz) == 1),
               "QLinearMatMul: y_scale and y_zero_point must be scalars");
    int64_t n_y = mlrt_numel(Y), dims[3];
    int32_t *acc = malloc((size_t)n_y * sizeof(int32_t) + 1);
    if (!acc) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "QLinearMatMul: out of memory");
    int status = qmm_accumulate(ctx, "QLinearMatMul", A, Az, B, Bz, Y, acc, dims);
    if (status || n_y == 0) {
        free(acc);
        return status;
    }
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
    mlrt_parallel_for(ctx, n_y, QL_GRAIN, store_requantized_mm, &j);
    free(scales);
    free(acc);
    return MLRT_OK;
}

#define MASK_8BIT (MLRT_BIT(MLRT_INT8) | MLRT_BIT(MLRT_UINT8))

MLRT_KERNEL(matmulinteger, "MatMulInteger", "", 10, MLRT_OPSET_MAX, MASK_8BIT, k_matmulinteger);
MLRT_KERNEL(qlinearmatmul, "QLinearMatMul", "", 10, MLRT_OPSET_MAX, MASK_8BIT, k_qlinearmatmul);

/* -- integer convolutions ------------------------------------------------------------------------ */

/* Channels [c0, c0 + cc) of every group, widened: x (N, G * cc, spatial) less its zero
 * point, or w (M, cc, window) less its per-output-channel zero point. */
typedef struct qconv_widen {
    const void *src;
    int32_t st;
    const void *zp;
    int32_t zt;
    int64_t n_zp;          /* 1, or one per outer index (w's output channels) */
    int64_t outer;         /* images of x / output channels of w */
    int64_t groups;        /* G for x, 1 for w */
    int64_t channels;      /* channels per group in the source (Cg) */
    int64_t c0, cc;        /* the chunk */
    int64_t plane;         /* elements per channel */
    void *dst;
    bool f64;
} qconv_widen;

static void widen_planes(void *arg, int64_t begin, int64_t end) {
    const qconv_widen *j = arg;
    for (int64_t p = begin; p < end; ++p) { /* p = (outer, group, c) */
        int64_t c = p % j->cc, og = p / j->cc, g = og % j->groups, o = og / j->groups;
        int64_t src = ((o * j->groups + g) * j->channels + j->c0 + c) * j->plane;
        double z = j->zp ? (double)ql_load8(j->zp, j->n_zp == 1 ? 0 : o, j->zt) : 0;
        if (j->f64) {
            double *d = (double *)j->dst + p * j->plane;
            for (int64_t i = 0; i < j->plane; ++i) d[i] = ql_load8(j->src, src + i, j->st) - z;
        } else {
            float *d = (float *)j->dst + p * j->plane;
            float zf = (float)z;
            for (int64_t i = 0; i < j->plane; ++i) d[i] = (float)ql_load8(j->src, src + i, j->st) - zf;
        }
    }
}

static void set_contiguous(mlrt_tensor *t) {
    int64_t acc = 1;
    for (int32_t d = t->rank - 1; d >= 0; --d) {
        t->strides[d] = acc;
        acc *= t->shape[d];
    }
}

/* acc (y's shape) = Conv(x - x_zp, w - w_zp[m]), by chunks of input channels */
static int qconv_accumulate(const mlrt_context *ctx, const char *op, const mlrt_conv_params *p, const mlrt_tensor *X,
                            const mlrt_tensor *Xz, const mlrt_tensor *W, const mlrt_tensor *Wz, const mlrt_tensor *Y,
                            int32_t *acc) {
    MLRT_CHECK(ql_is_8bit(X->dtype) && ql_is_8bit(W->dtype), "%s: x and w must be int8 or uint8", op);
    MLRT_CHECK(mlrt_is_contiguous(X) && mlrt_is_contiguous(W) && mlrt_is_contiguous(Y), "%s: needs contiguous tensors",
               op);
    MLRT_CHECK(X->rank >= 3 && W->rank == X->rank && Y->rank == X->rank, "%s: x, w and y must have one rank >= 3", op);
    MLRT_CHECK(!Xz || (Xz->dtype == X->dtype && mlrt_numel(Xz) == 1), "%s: x's zero point must be one value of x's type",
               op);
    int64_t N = X->shape[0], C = X->shape[1], M = W->shape[0], Cg = W->shape[1], G = p->group;
    MLRT_CHECK(!Wz || (Wz->dtype == W->dtype && (mlrt_numel(Wz) == 1 || mlrt_numel(Wz) == M)),
               "%s: w's zero point must be of w's type, one value or one per output channel", op);
    MLRT_CHECK(G >= 1 && C == G * Cg, "%s: x has %lld channels, w %lld per group for %lld groups", op, (long long)C,
               (long long)Cg, (long long)G);
    int64_t ny = mlrt_numel(Y);
    if (ny == 0) return MLRT_OK;
    int64_t in_plane = 1, window = 1;
    for (int32_t d = 2; d < X->rank; ++d) in_plane *= X->shape[d], window *= W->shape[d];
    /* channels per chunk: sums of at most 256 products stay exact in float */
    bool f64 = window > QL_EXACT_TERMS;
    int64_t per = Cg;
    if (!f64 && window > 0 && QL_EXACT_TERMS / window < per) per = QL_EXACT_TERMS / window;
    if (per < 1) per = 1;
    int32_t dt = f64 ? MLRT_DOUBLE : MLRT_FLOAT;
    int32_t k = mlrt_kernel_find("", "Conv", 11, dt);
    if (k < 0) return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "%s: no %s Conv kernel to run on", op, f64 ? "double" : "float");
    size_t esz = f64 ? sizeof(double) : sizeof(float);
    size_t nx = (size_t)(N * G * per * in_plane), nw = (size_t)(M * per * window);
    char *buf = malloc((nx + nw + (size_t)ny) * esz + 1);
    if (!buf) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "%s: cannot allocate the work space", op);
    int status = MLRT_OK;
    if (Cg == 0) memset(acc, 0, (size_t)ny * sizeof(int32_t));
    for (int64_t c0 = 0; c0 < Cg && status == MLRT_OK; c0 += per) {
        int64_t cc = Cg - c0 < per ? Cg - c0 : per;
        qconv_widen jx = {X->data, X->dtype, Xz ? Xz->data : NULL, Xz ? Xz->dtype : 0, 1, N, G, Cg, c0, cc,
                          in_plane, buf, f64};
        qconv_widen jw = {W->data, W->dtype, Wz ? Wz->data : NULL, Wz ? Wz->dtype : 0, Wz ? mlrt_numel(Wz) : 1, M, 1,
                          Cg, c0, cc, window, buf + nx * esz, f64};
        int64_t gx = in_plane >= QL_GRAIN ? 1 : QL_GRAIN / (in_plane + 1) + 1;
        int64_t gw = window >= QL_GRAIN ? 1 : QL_GRAIN / (window + 1) + 1;
        mlrt_parallel_for(ctx, N * G * cc, gx, widen_planes, &jx);
        mlrt_parallel_for(ctx, M * cc, gw, widen_planes, &jw);
        mlrt_tensor t[3] = {*X, *W, *Y};
        t[0].shape[1] = G * cc, t[1].shape[1] = cc;
        for (int i = 0; i < 3; ++i) t[i].dtype = dt, set_contiguous(&t[i]);
        t[0].data = buf, t[1].data = buf + nx * esz, t[2].data = buf + (nx + nw) * esz;
        status = mlrt_kernel_get(k)->run(ctx, t, 2, &t[2], 1, p, sizeof *p);
        if (status == MLRT_OK) ql_fold(ctx, t[2].data, f64, acc, ny, c0 == 0);
    }
    free(buf);
    return status;
}

/* inputs: x, w, x_zero_point (optional), w_zero_point (optional); output: y (int32) */
static int k_convinteger(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                         int32_t n_out, const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_conv_params, p, params, params_size);
    MLRT_CHECK(n_in >= 2 && n_in <= 4 && n_out == 1, "ConvInteger: expects 2 to 4 inputs and 1 output");
    MLRT_CHECK(out[0].dtype == MLRT_INT32, "ConvInteger: the output must be int32");
    const mlrt_tensor *xz = n_in > 2 && mlrt_present(&in[2]) ? &in[2] : NULL;
    const mlrt_tensor *wz = n_in > 3 && mlrt_present(&in[3]) ? &in[3] : NULL;
    return qconv_accumulate(ctx, "ConvInteger", p, &in[0], xz, &in[1], wz, &out[0], out[0].data);
}

typedef struct qconv_out_job {
    const int32_t *acc;
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
        int32_t a = j->acc[i];
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
    MLRT_CHECK(ql_is_8bit(Y->dtype) && (!Yz || Yz->dtype == Y->dtype),
               "QLinearConv: y must be int8 or uint8, of its zero point's type");
    MLRT_CHECK(Xs->dtype == MLRT_FLOAT && Ws->dtype == MLRT_FLOAT && Ys->dtype == MLRT_FLOAT,
               "QLinearConv: the scales must be float");
    MLRT_CHECK(mlrt_numel(Xs) == 1 && mlrt_numel(Ys) == 1 && (!Yz || mlrt_numel(Yz) == 1),
               "QLinearConv: x_scale, y_scale and y_zero_point must be scalars");
    MLRT_CHECK(mlrt_is_contiguous(Ws) && (mlrt_numel(Ws) == 1 || mlrt_numel(Ws) == M),
               "QLinearConv: w_scale must have 1 or %lld elements", (long long)M);
    MLRT_CHECK(!B || (B->dtype == MLRT_INT32 && mlrt_numel(B) == M && mlrt_is_contiguous(B)),
               "QLinearConv: B must be int32 with %lld elements", (long long)M);
    MLRT_CHECK(Y->rank >= 2 && Y->shape[1] == M, "QLinearConv: y must have %lld channels", (long long)M);
    int64_t ny = mlrt_numel(Y);
    int32_t *acc = malloc((size_t)ny * sizeof(int32_t) + 1);
    double *mult = malloc((size_t)M * sizeof(double) + 1);
    int status = acc && mult ? qconv_accumulate(ctx, "QLinearConv", p, X, Xz, W, Wz, Y, acc)
                             : mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "QLinearConv: out of memory");
    if (status || ny == 0) {
        free(acc);
        free(mult);
        return status;
    }
    float xs = *(const float *)Xs->data, ys = *(const float *)Ys->data;
    int64_t nws = mlrt_numel(Ws);
    for (int64_t m = 0; m < M; ++m) { /* float32 steps, as numpy computes x_scale * w_scale / y_scale */
        float xw = xs * ((const float *)Ws->data)[nws == 1 ? 0 : m];
        mult[m] = (float)(xw / ys);
    }
    int64_t plane = ny / (Y->shape[0] * M);
    qconv_out_job j = {acc, Y->data, Y->dtype, M, plane, B ? B->data : NULL, mult,
                       Yz ? ql_load(Yz->data, 0, Yz->dtype) : 0};
    mlrt_parallel_for(ctx, ny, QL_GRAIN, store_requantized_conv, &j);
    free(acc);
    free(mult);
    return MLRT_OK;
}

MLRT_KERNEL(convinteger, "ConvInteger", "", 10, MLRT_OPSET_MAX, MASK_8BIT, k_convinteger);
MLRT_KERNEL(qlinearconv, "QLinearConv", "", 10, MLRT_OPSET_MAX, MASK_8BIT, k_qlinearconv);
