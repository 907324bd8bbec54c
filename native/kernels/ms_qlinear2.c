/* ms_qlinear2.c -- com.microsoft QGemm, QLinearSoftmax, QLinearAveragePool, QLinearWhere and
 * NhwcMaxPool (int8 / uint8, per-tensor scales and zero points but QGemm's b), computed as
 * onnxruntime's CPU kernels do.
 *
 *   QGemm:        acc = (A - a_zp) @ (B - b_zp) + C in int32 (the MatMulInteger kernel of the
 *                 table, then C), s[n] = alpha * a_s * b_s[n] (/ y_s) in float;
 *                 y = saturate(round(float(acc) * s) + y_zp) as src/qgemm.h requantizes,
 *                 or float y = float(acc) * s; B' may come packed once (params.packed_b)
 *   QLinearSoftmax: t[i] = float(exp((i - 255 + shift) * x_s)) in double, shift = max(0,
 *                 log(FLT_MAX / D) - 5) / x_s; per row e_k = t[255 + x_k - max(x)],
 *                 y_k = saturate(round(e_k * (1 / sum(e) * floor(1 / y_s)) + y_zp)), the float
 *                 sum in the order of onnxruntime's x86 AVX2 kernel
 *   QLinearAveragePool: float mean of the dequantized window (clipped to X, summed in
 *                 row-major order), y = saturate(round(mean / y_s + y_zp)); a window that
 *                 is the whole unpadded image runs QLinearGlobalAveragePool's kernel
 *   QLinearWhere: z = condition ? tx[x] : ty[y], 256-entry requantization tables
 *   NhwcMaxPool:  MaxPool's kernel on the channels-first copy of X. */
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "internal.h"
#include "ms_qlinear.h"
#include "ms_qlinear2.h"
#include "nditer.h"
#include "pool.h"
#include "qgemm.h"
#include "qlinear.h"

#define MSQ2_GRAIN 16384
#define MS "com.microsoft"

static bool q2_is_8bit(int32_t t) { return t == MLRT_INT8 || t == MLRT_UINT8; }

static inline int32_t q2_load(const void *p, int64_t i, int32_t t) {
    return t == MLRT_INT8 ? ((const int8_t *)p)[i] : ((const uint8_t *)p)[i];
}

static inline void q2_store(void *y, int64_t i, int32_t t, int32_t v) {
    if (t == MLRT_INT8) ((int8_t *)y)[i] = (int8_t)v;
    else ((uint8_t *)y)[i] = (uint8_t)v;
}

/* v (already holding the zero point, or with `zp` added after rounding) rounded half to
 * even and saturated to t; NaN gives the zero point */
static inline int32_t q2_saturate(float v, int32_t zp, int32_t t) {
    int32_t lo = t == MLRT_INT8 ? -128 : 0, hi = t == MLRT_INT8 ? 127 : 255;
    if (v != v) return zp < lo ? lo : zp > hi ? hi : zp;
    float r = nearbyintf(v) + (float)zp;
    if (r <= (float)lo) return lo;
    return r >= (float)hi ? hi : (int32_t)r;
}

static const mlrt_tensor *q2_optional(const mlrt_tensor *in, int32_t n_in, int32_t i) {
    return i < n_in && mlrt_present(&in[i]) ? &in[i] : NULL;
}

/* A per-tensor scale (one float) and zero point (absent, or one value of type t). */
static int q2_scalar_pair(const char *op, const char *name, const mlrt_tensor *s, const mlrt_tensor *z, int32_t t,
                          float *scale, int32_t *zp) {
    MLRT_CHECK(s && s->dtype == MLRT_FLOAT && mlrt_numel(s) == 1, "%s: %s_scale must be one float", op, name);
    MLRT_CHECK(!z || (z->dtype == t && mlrt_numel(z) == 1), "%s: %s_zero_point must be one value of the tensor's type",
               op, name);
    *scale = *(const float *)s->data;
    *zp = z ? q2_load(z->data, 0, t) : 0;
    return MLRT_OK;
}

/* -- QGemm ------------------------------------------------------------------------------------- */

typedef struct qgemm_job {
    int32_t *acc;
    const mlrt_tensor *C; /* int32 view of (M, N), or NULL */
    void *y;
    int32_t yt, yz;
    int64_t N;
    const float *scale; /* per column, or one */
    bool per_column;
} qgemm_job;

static void qgemm_rows(void *arg, int64_t begin, int64_t end) {
    const qgemm_job *j = arg;
    for (int64_t m = begin; m < end; ++m)
        for (int64_t n = 0; n < j->N; ++n) {
            int64_t i = m * j->N + n;
            int32_t a = j->acc[i];
            if (j->C) {
                int32_t c = ((const int32_t *)j->C->data)[m * j->C->strides[0] + n * j->C->strides[1]];
                a = (int32_t)((uint32_t)a + (uint32_t)c); /* wraps, as the int32 accumulation */
            }
            float s = j->scale[j->per_column ? n : 0];
            if (j->yt == MLRT_FLOAT) ((float *)j->y)[i] = (float)a * s;
            else q2_store(j->y, i, j->yt, mlrt_requantize(a, s, j->yz, j->yt == MLRT_INT8 ? -128 : 0,
                                                          j->yt == MLRT_INT8 ? 127 : 255));
        }
}

/* inputs: A, a_scale, a_zero_point, B, b_scale, b_zero_point, C, y_scale, y_zero_point (the last
 * three optional); A (M, K), B (K, N) and their zero points as views, C as an (M, N) view */
static int k_qgemm(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                   const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_qgemm_params, p, params, params_size);
    const char *op = "QGemm";
    int64_t pk = p->packed_b; /* the node's inputs come before it */
    MLRT_CHECK(pk == 0 || (pk >= 5 && pk == n_in - 1), "%s: packed B at input %lld of %d", op, (long long)pk, n_in);
    const mlrt_tensor *packed = pk ? &in[pk] : NULL;
    n_in = pk ? (int32_t)pk : n_in;
    MLRT_CHECK(n_in >= 5 && n_in <= 9 && n_out == 1, "%s: expects 5 to 9 inputs and 1 output", op);
    const mlrt_tensor *A = &in[0], *B = &in[3], *Az = q2_optional(in, n_in, 2), *Bz = q2_optional(in, n_in, 5);
    const mlrt_tensor *C = q2_optional(in, n_in, 6), *Ys = q2_optional(in, n_in, 7), *Yz = q2_optional(in, n_in, 8);
    mlrt_tensor *Y = &out[0];
    MLRT_CHECK(q2_is_8bit(A->dtype) && q2_is_8bit(B->dtype), "%s: A and B must be int8 or uint8", op);
    MLRT_CHECK(A->rank == 2 && B->rank == 2 && Y->rank == 2 && mlrt_is_contiguous(Y),
               "%s: A, B and Y must be matrices, Y contiguous", op);
    int64_t M = A->shape[0], K = A->shape[1], N = B->shape[1];
    MLRT_CHECK(B->shape[0] == K && Y->shape[0] == M && Y->shape[1] == N,
               "%s: shapes (%lld, %lld) @ (%lld, %lld) -> (%lld, %lld) do not fit", op, (long long)M, (long long)K,
               (long long)B->shape[0], (long long)N, (long long)Y->shape[0], (long long)Y->shape[1]);
    MLRT_CHECK(!C || (C->dtype == MLRT_INT32 && mlrt_same_shape(C, Y)), "%s: C must be an int32 view of Y's shape", op);
    MLRT_CHECK(Y->dtype == MLRT_FLOAT || (q2_is_8bit(Y->dtype) && Yz && Yz->dtype == Y->dtype),
               "%s: Y is float, or int8 / uint8 of y_zero_point's type", op);
    MLRT_CHECK(A->dtype == MLRT_UINT8 || B->dtype == MLRT_INT8, "%s: int8 A takes int8 B", op);
    int32_t yz = 0;
    float a_s, y_s = 1.0f;
    MLRT_CHECK(in[1].dtype == MLRT_FLOAT && mlrt_numel(&in[1]) == 1, "%s: a_scale must be one float", op);
    a_s = *(const float *)in[1].data;
    const mlrt_tensor *Bs = &in[4];
    int64_t n_bs = mlrt_numel(Bs);
    MLRT_CHECK(Bs->dtype == MLRT_FLOAT && (n_bs == 1 || n_bs == N), "%s: b_scale must be float, one or N values", op);
    if (Ys) {
        MLRT_CHECK(Ys->dtype == MLRT_FLOAT && mlrt_numel(Ys) == 1, "%s: y_scale must be one float", op);
        y_s = *(const float *)Ys->data;
    }
    if (Yz) {
        MLRT_CHECK(mlrt_numel(Yz) == 1, "%s: y_zero_point must be one value", op);
        yz = q2_load(Yz->data, 0, Yz->dtype);
    }
    if (M == 0 || N == 0) return MLRT_OK;
    int32_t k = mlrt_kernel_find("", "MatMulInteger", 10, A->dtype);
    if (k < 0) return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "%s: no MatMulInteger kernel to run on", op);
    size_t n_acc = (size_t)(M * N);
    char *buf = malloc(n_acc * sizeof(int32_t) + (size_t)n_bs * sizeof(float) + 1);
    if (!buf) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "%s: out of memory", op);
    float *scale = (float *)(buf + n_acc * sizeof(int32_t));
    for (int64_t n = 0; n < n_bs; ++n) {
        scale[n] = (float)p->alpha * a_s * ((const float *)Bs->data)[n];
        if (Ys) scale[n] /= y_s;
    }
    mlrt_tensor mm_in[5] = {*A, *B}, acc = {.dtype = MLRT_INT32, .rank = 2, .shape = {M, N}, .strides = {N, 1},
                                           .data = buf};
    mm_in[2] = Az ? *Az : (mlrt_tensor){.dtype = MLRT_UNDEFINED};
    mm_in[3] = Bz ? *Bz : (mlrt_tensor){.dtype = MLRT_UNDEFINED};
    mlrt_qmatmul_params mp = {packed ? 4 : 0};
    if (packed) mm_in[4] = *packed;
    int status = mlrt_kernel_get(k)->run(ctx, mm_in, packed ? 5 : 4, &acc, 1, &mp, sizeof mp);
    if (status == MLRT_OK) {
        qgemm_job j = {(int32_t *)buf, C, Y->data, Y->dtype, yz, N, scale, n_bs > 1};
        mlrt_parallel_for(ctx, M, N >= MSQ2_GRAIN ? 1 : MSQ2_GRAIN / (N + 1) + 1, qgemm_rows, &j);
    }
    free(buf);
    return status;
}

/* -- QLinearSoftmax ---------------------------------------------------------------------------- */

typedef struct qsoftmax_job {
    const void *x;
    void *y;
    int32_t t, yz;
    int64_t D, inner;
    const float *table; /* 256 entries: e(d) at table[255 + d], d = x - max(x) */
    float y_scale;      /* floor(1 / y_s) */
} qsoftmax_job;

static void qsoftmax_rows(void *arg, int64_t begin, int64_t end) { /* rows (o, i) */
    const qsoftmax_job *j = arg;
    for (int64_t r = begin; r < end; ++r) {
        int64_t base = (r / j->inner) * j->D * j->inner + r % j->inner, s = j->inner;
        int32_t xmax = q2_load(j->x, base, j->t);
        for (int64_t d = 1; d < j->D; ++d) {
            int32_t v = q2_load(j->x, base + d * s, j->t);
            if (v > xmax) xmax = v;
        }
        /* onnxruntime's (x86 AVX2) order: 8 lanes over blocks of 16, the rest in turn, then the lanes */
        float lanes[8] = {0}, sum = 0.0f;
        int64_t blocked = j->D / 16 * 16;
        for (int64_t d = 0; d < blocked; ++d)
            lanes[d % 8] += j->table[255 + q2_load(j->x, base + d * s, j->t) - xmax];
        for (int64_t d = blocked; d < j->D; ++d) sum += j->table[255 + q2_load(j->x, base + d * s, j->t) - xmax];
        for (int32_t l = 0; l < 8; ++l) sum += lanes[l];
        float scale = 1.0f / sum * j->y_scale;
        for (int64_t d = 0; d < j->D; ++d) {
            float e = j->table[255 + q2_load(j->x, base + d * s, j->t) - xmax];
            q2_store(j->y, base + d * s, j->t, q2_saturate(e * scale + (float)j->yz, 0, j->t));
        }
    }
}

/* inputs: X, X_scale, x_zero_point, y_scale, y_zero_point (zero points optional); output: Y */
static int k_qlinear_softmax(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                             int32_t n_out, const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_qlinear_softmax_params, p, params, params_size);
    const char *op = "QLinearSoftmax";
    MLRT_CHECK(n_in >= 4 && n_in <= 5 && n_out == 1, "%s: expects 4 or 5 inputs and 1 output", op);
    const mlrt_tensor *X = &in[0];
    mlrt_tensor *Y = &out[0];
    int32_t t = X->dtype;
    MLRT_CHECK(q2_is_8bit(t) && Y->dtype == t, "%s: X and Y must share one type, int8 or uint8", op);
    MLRT_CHECK(mlrt_same_shape(X, Y) && mlrt_is_contiguous(X) && mlrt_is_contiguous(Y),
               "%s: X and Y must be contiguous tensors of one shape", op);
    MLRT_CHECK(p->outer >= 0 && p->D >= 0 && p->inner >= 0 && p->outer * p->D * p->inner == mlrt_numel(X),
               "%s: rows (%lld, %lld, %lld) do not cover X", op, (long long)p->outer, (long long)p->D,
               (long long)p->inner);
    float xs, ys;
    int32_t xz, yz;
    int status = q2_scalar_pair(op, "x", &in[1], q2_optional(in, n_in, 2), t, &xs, &xz);
    if (!status) status = q2_scalar_pair(op, "y", &in[3], q2_optional(in, n_in, 4), t, &ys, &yz);
    if (status || mlrt_numel(X) == 0) return status;
    float table[256];
    double shift = log((double)(FLT_MAX / (float)p->D)) - 5.0;
    shift = (shift > 0.0 ? shift : 0.0) / (double)xs;
    for (int32_t i = 0; i < 256; ++i) table[i] = (float)exp(((double)i - 255.0 + shift) * (double)xs);
    qsoftmax_job j = {X->data, Y->data, t, yz, p->D, p->inner, table, floorf(1.0f / ys)};
    mlrt_parallel_for(ctx, p->outer * p->inner, p->D >= MSQ2_GRAIN ? 1 : MSQ2_GRAIN / (p->D + 1) + 1, qsoftmax_rows,
                      &j);
    return MLRT_OK;
}

/* -- QLinearAveragePool ------------------------------------------------------------------------ */

typedef struct qavg_job {
    const mlrt_qlinear_avgpool_params *p;
    const void *x;
    void *y;
    int32_t t, yz;
    int64_t C, in[3], out[3], in_image, out_image;
    float y_scale, dq[256]; /* dq[byte] = x_s * (x - x_zp) */
} qavg_job;

static void qavg_range(void *arg, int64_t begin, int64_t end) { /* outputs (n, c, position) */
    const qavg_job *j = arg;
    const mlrt_qlinear_avgpool_params *p = j->p;
    bool last = p->channels_last != 0;
    for (int64_t o = begin; o < end; ++o) {
        int64_t n = o / (j->C * j->out_image), c = o / j->out_image % j->C, pos = o % j->out_image;
        int64_t lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1}, rest = pos, count = 1;
        for (int32_t d = (int32_t)p->n_spatial - 1; d >= 0; --d) {
            int64_t od = rest % j->out[d], start = od * p->strides[d] - p->pads_begin[d];
            rest /= j->out[d];
            int64_t stop = start + p->kernel[d] < j->in[d] ? start + p->kernel[d] : j->in[d];
            lo[d] = start > 0 ? start : 0, hi[d] = stop;
            count *= p->count_include_pad ? p->kernel[d] : (stop > lo[d] ? stop - lo[d] : 0);
        }
        float sum = 0.0f;
        for (int64_t a = lo[0]; a < hi[0]; ++a)
            for (int64_t b = lo[1]; b < hi[1]; ++b)
                for (int64_t e = lo[2]; e < hi[2]; ++e) {
                    int64_t at = (a * j->in[1] + b) * j->in[2] + e;
                    int64_t i = last ? (n * j->in_image + at) * j->C + c : (n * j->C + c) * j->in_image + at;
                    sum += j->dq[(uint8_t)q2_load(j->x, i, j->t)];
                }
        float mean = sum / (float)count;
        int64_t yi = last ? (n * j->out_image + pos) * j->C + c : (n * j->C + c) * j->out_image + pos;
        q2_store(j->y, yi, j->t, q2_saturate(mean / j->y_scale + (float)j->yz, 0, j->t));
    }
}

/* inputs: X, x_scale, x_zero_point, y_scale, y_zero_point (zero points optional); output: Y */
static int k_qlinear_average_pool(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                                  int32_t n_out, const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_qlinear_avgpool_params, p, params, params_size);
    const char *op = "QLinearAveragePool";
    MLRT_CHECK(n_in >= 4 && n_in <= 5 && n_out == 1, "%s: expects 4 or 5 inputs and 1 output", op);
    const mlrt_tensor *X = &in[0];
    mlrt_tensor *Y = &out[0];
    int32_t t = X->dtype, R = X->rank;
    MLRT_CHECK(q2_is_8bit(t) && Y->dtype == t, "%s: X and Y must share one type, int8 or uint8", op);
    MLRT_CHECK(p->n_spatial >= 1 && p->n_spatial <= 3 && R == p->n_spatial + 2 && Y->rank == R,
               "%s: X and Y must have rank 3 to 5, 2 + the kernel's", op);
    MLRT_CHECK(mlrt_is_contiguous(X) && mlrt_is_contiguous(Y), "%s: X and Y must be contiguous", op);
    if (p->global) {
        int32_t k = mlrt_kernel_find(MS, "QLinearGlobalAveragePool", 1, t);
        if (k < 0) return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "%s: no QLinearGlobalAveragePool kernel", op);
        mlrt_qlinear_pool_params gp = {p->channels_last};
        return mlrt_kernel_get(k)->run(ctx, in, n_in, out, n_out, &gp, sizeof gp);
    }
    bool last = p->channels_last != 0;
    qavg_job j = {.p = p, .x = X->data, .y = Y->data, .t = t, .C = X->shape[last ? R - 1 : 1], .in_image = 1,
                  .out_image = 1};
    MLRT_CHECK(Y->shape[0] == X->shape[0] && Y->shape[last ? R - 1 : 1] == j.C, "%s: X and Y differ in N or C", op);
    for (int32_t d = 0; d < 3; ++d) {
        bool real = d < p->n_spatial;
        j.in[d] = real ? X->shape[d + (last ? 1 : 2)] : 1;
        j.out[d] = real ? Y->shape[d + (last ? 1 : 2)] : 1;
        MLRT_CHECK(!real || (p->kernel[d] >= 1 && p->strides[d] >= 1 && p->pads_begin[d] >= 0),
                   "%s: kernel and strides must be positive, pads not negative", op);
        j.in_image *= j.in[d], j.out_image *= j.out[d];
    }
    float xs;
    int32_t xz;
    int status = q2_scalar_pair(op, "x", &in[1], q2_optional(in, n_in, 2), t, &xs, &xz);
    if (!status) status = q2_scalar_pair(op, "y", &in[3], q2_optional(in, n_in, 4), t, &j.y_scale, &j.yz);
    if (status) return status;
    for (int32_t u = 0; u < 256; ++u) {
        int32_t x = t == MLRT_INT8 ? (int32_t)(int8_t)(uint8_t)u : u;
        j.dq[u] = xs * (float)(x - xz);
    }
    int64_t kernel = p->kernel[0] * (p->n_spatial > 1 ? p->kernel[1] : 1) * (p->n_spatial > 2 ? p->kernel[2] : 1);
    mlrt_parallel_for(ctx, mlrt_numel(Y), kernel >= MSQ2_GRAIN ? 1 : MSQ2_GRAIN / (kernel + 1) + 1, qavg_range, &j);
    return MLRT_OK;
}

/* -- QLinearWhere ------------------------------------------------------------------------------ */

typedef struct qwhere_job {
    mlrt_rows rows;
    const uint8_t *c, *x, *y, *tx, *ty; /* tables: 256 entries, indexed by the byte */
    uint8_t *z;
} qwhere_job;

static void qwhere_range(void *arg, int64_t begin, int64_t end) {
    const qwhere_job *j = arg;
    int64_t n = j->rows.row_len, off[4];
    int32_t last = j->rows.rank - 1;
    int64_t sc = j->rows.strides[0][last], sx = j->rows.strides[1][last], sy = j->rows.strides[2][last];
    for (int64_t r = begin; r < end; ++r) {
        mlrt_rows_offsets(&j->rows, r, off);
        const uint8_t *c = j->c + off[0], *x = j->x + off[1], *y = j->y + off[2];
        uint8_t *z = j->z + off[3];
        for (int64_t i = 0; i < n; ++i) z[i] = c[i * sc] ? j->tx[x[i * sx]] : j->ty[y[i * sy]];
    }
}

/* table[byte] requantizing a value of (xs, xz) to (zs, zz); the identity where they agree */
static void q2_requant_table(uint8_t *table, int32_t t, float xs, int32_t xz, float zs, int32_t zz) {
    for (int32_t u = 0; u < 256; ++u) {
        int32_t x = t == MLRT_INT8 ? (int32_t)(int8_t)(uint8_t)u : u;
        int32_t q = xs == zs && xz == zz ? x : q2_saturate(xs * (float)(x - xz) / zs, zz, t);
        table[u] = (uint8_t)q;
    }
}

/* inputs: condition, X, x_scale, x_zero_point, Y, y_scale, y_zero_point, z_scale, z_zero_point;
 * condition, X and Y as views of Z's shape */
static int k_qlinear_where(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                           int32_t n_out, const void *params, size_t params_size) {
    const char *op = "QLinearWhere";
    MLRT_CHECK(n_in == 9 && n_out == 1, "%s: expects 9 inputs and 1 output", op);
    const mlrt_tensor *Cd = &in[0], *X = &in[1], *Yv = &in[4];
    mlrt_tensor *Z = &out[0];
    int32_t t = Z->dtype;
    MLRT_CHECK(Cd->dtype == MLRT_BOOL, "%s: condition must be bool", op);
    MLRT_CHECK(q2_is_8bit(t) && X->dtype == t && Yv->dtype == t, "%s: X, Y and Z must share one type, int8 or uint8",
               op);
    MLRT_CHECK(mlrt_same_shape(Cd, Z) && mlrt_same_shape(X, Z) && mlrt_same_shape(Yv, Z) && mlrt_is_contiguous(Z),
               "%s: condition, X and Y must be views of Z's shape, Z contiguous", op);
    float xs, ys, zs;
    int32_t xz, yz, zz;
    int status = q2_scalar_pair(op, "x", &in[2], q2_optional(in, n_in, 3), t, &xs, &xz);
    if (!status) status = q2_scalar_pair(op, "y", &in[5], q2_optional(in, n_in, 6), t, &ys, &yz);
    if (!status) status = q2_scalar_pair(op, "z", &in[7], q2_optional(in, n_in, 8), t, &zs, &zz);
    if (status) return status;
    uint8_t tx[256], ty[256];
    q2_requant_table(tx, t, xs, xz, zs, zz);
    q2_requant_table(ty, t, ys, yz, zs, zz);
    qwhere_job j = {.c = Cd->data, .x = X->data, .y = Yv->data, .tx = tx, .ty = ty, .z = Z->data};
    const mlrt_tensor *ops[4] = {Cd, X, Yv, Z};
    mlrt_rows_init(&j.rows, Z, ops, 4);
    int64_t grain = j.rows.row_len >= MSQ2_GRAIN ? 1 : MSQ2_GRAIN / (j.rows.row_len + 1) + 1;
    mlrt_parallel_for(ctx, j.rows.n_rows, grain, qwhere_range, &j);
    return MLRT_OK;
}

/* -- NhwcMaxPool ------------------------------------------------------------------------------- */

typedef struct q2_move {
    const uint8_t *src;
    uint8_t *dst;
    int64_t S, C; /* spatial elements, channels */
    bool to_last;
} q2_move;

static void move_planes(void *arg, int64_t begin, int64_t end) { /* planes (n, c) */
    const q2_move *j = arg;
    for (int64_t p = begin; p < end; ++p) {
        int64_t n = p / j->C, c = p % j->C;
        for (int64_t s = 0; s < j->S; ++s) {
            int64_t f = p * j->S + s, l = (n * j->S + s) * j->C + c;
            if (j->to_last) j->dst[l] = j->src[f];
            else j->dst[f] = j->src[l];
        }
    }
}

static void q2_transpose(const mlrt_context *ctx, const void *src, void *dst, int64_t N, int64_t S, int64_t C,
                         bool to_last) {
    q2_move j = {src, dst, S, C, to_last};
    mlrt_parallel_for(ctx, N * C, S >= MSQ2_GRAIN ? 1 : MSQ2_GRAIN / (S + 1) + 1, move_planes, &j);
}

/* t (N, spatial..., C) seen as channels first, contiguous, over data */
static mlrt_tensor q2_first(const mlrt_tensor *t, void *data) {
    mlrt_tensor v = *t;
    v.shape[1] = t->shape[t->rank - 1];
    for (int32_t d = 2; d < t->rank; ++d) v.shape[d] = t->shape[d - 1];
    int64_t acc = 1;
    for (int32_t d = t->rank - 1; d >= 0; --d) v.strides[d] = acc, acc *= v.shape[d];
    v.data = data;
    return v;
}

/* input: X (N, spatial..., C); output: Y (N, out..., C) */
static int k_nhwc_max_pool(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                           int32_t n_out, const void *params, size_t params_size) {
    const char *op = "NhwcMaxPool";
    MLRT_CHECK(n_in == 1 && n_out == 1, "%s: expects 1 input and 1 output", op);
    const mlrt_tensor *X = &in[0];
    mlrt_tensor *Y = &out[0];
    int32_t R = X->rank;
    MLRT_CHECK(q2_is_8bit(X->dtype) && Y->dtype == X->dtype, "%s: X and Y must share one type, int8 or uint8", op);
    MLRT_CHECK(R >= 3 && Y->rank == R && mlrt_is_contiguous(X) && mlrt_is_contiguous(Y),
               "%s: X and Y must be contiguous, of one rank >= 3", op);
    MLRT_CHECK(Y->shape[0] == X->shape[0] && Y->shape[R - 1] == X->shape[R - 1], "%s: X and Y differ in N or C", op);
    int32_t k = mlrt_kernel_find("", "MaxPool", 12, X->dtype);
    if (k < 0) return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "%s: no MaxPool kernel to run on", op);
    int64_t nx = mlrt_numel(X), ny = mlrt_numel(Y), N = X->shape[0], C = X->shape[R - 1];
    if (ny == 0) return MLRT_OK;
    uint8_t *buf = malloc((size_t)(nx + ny) + 1);
    if (!buf) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "%s: out of memory", op);
    mlrt_tensor xf = q2_first(X, buf), yf = q2_first(Y, buf + nx);
    q2_transpose(ctx, X->data, xf.data, N, C ? nx / (N * C) : 0, C, false);
    int status = mlrt_kernel_get(k)->run(ctx, &xf, 1, &yf, 1, params, params_size);
    if (status == MLRT_OK) q2_transpose(ctx, yf.data, Y->data, N, ny / (N * C), C, true);
    free(buf);
    return status;
}

#define MASK_8BIT (MLRT_BIT(MLRT_INT8) | MLRT_BIT(MLRT_UINT8))

/* selected by A's type */
MLRT_KERNEL(ms_qgemm, "QGemm", MS, 1, MLRT_OPSET_MAX, MASK_8BIT, k_qgemm);
MLRT_KERNEL(ms_qlinear_softmax, "QLinearSoftmax", MS, 1, MLRT_OPSET_MAX, MASK_8BIT, k_qlinear_softmax);
MLRT_KERNEL(ms_qlinear_average_pool, "QLinearAveragePool", MS, 1, MLRT_OPSET_MAX, MASK_8BIT, k_qlinear_average_pool);
/* selected by X's type (input 1) */
MLRT_KERNEL(ms_qlinear_where, "QLinearWhere", MS, 1, MLRT_OPSET_MAX, MASK_8BIT, k_qlinear_where);
MLRT_KERNEL(ms_nhwc_max_pool, "NhwcMaxPool", MS, 1, MLRT_OPSET_MAX, MASK_8BIT, k_nhwc_max_pool);
