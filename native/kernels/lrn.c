/* lrn.c -- LRN: local response normalisation across channels.
 *
 * y[n, c, i] = x[n, c, i] / (bias + alpha / size * sum of x[n, c', i]^2)^beta over
 * c' in [c - floor((size-1)/2), c + ceil((size-1)/2)] inside the channels.  Each
 * (image, channel) plane is done in blocks of positions; beta 0.75 / 0.5 / 1 avoid pow. */
#include <math.h>

#include "internal.h"
#include "lrn.h"

#define LRN_BLOCK 512

typedef struct lrn_job {
    const void *x;
    void *y;
    int32_t dtype;
    int64_t C, S, lo, hi;  /* channels, positions per plane, window below / above */
    double k, beta, bias;  /* k = alpha / size */
} lrn_job;

MLRT_ISA_FN(, void, lrn_block_f32, (const float *x, float *y, int64_t S, int64_t n, int64_t c_lo, int64_t c_hi,
                                     int64_t c, float k, float bias, double beta),
            (x, y, S, n, c_lo, c_hi, c, k, bias, beta)) {
    float acc[LRN_BLOCK];
    for (int64_t i = 0; i < n; ++i) acc[i] = 0;
    for (int64_t cc = c_lo; cc <= c_hi; ++cc) {
        const float *xc = x + (cc - c) * S;
        for (int64_t i = 0; i < n; ++i) acc[i] += xc[i] * xc[i];
    }
    for (int64_t i = 0; i < n; ++i) acc[i] = bias + k * acc[i];
    if (beta == 0.75)
        for (int64_t i = 0; i < n; ++i) { float r = sqrtf(acc[i]); y[i] = x[i] / (r * sqrtf(r)); }
    else if (beta == 0.5)
        for (int64_t i = 0; i < n; ++i) y[i] = x[i] / sqrtf(acc[i]);
    else if (beta == 1.0)
        for (int64_t i = 0; i < n; ++i) y[i] = x[i] / acc[i];
    else
        for (int64_t i = 0; i < n; ++i) y[i] = (float)(x[i] / pow(acc[i], beta));
}

static void lrn_block_f64(const double *x, double *y, int64_t S, int64_t n, int64_t c_lo, int64_t c_hi, int64_t c,
                          double k, double bias, double beta) {
    double acc[LRN_BLOCK];
    for (int64_t i = 0; i < n; ++i) acc[i] = 0;
    for (int64_t cc = c_lo; cc <= c_hi; ++cc) {
        const double *xc = x + (cc - c) * S;
        for (int64_t i = 0; i < n; ++i) acc[i] += xc[i] * xc[i];
    }
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] / pow(bias + k * acc[i], beta);
}

static void lrn_planes(void *arg, int64_t begin, int64_t end) {
    const lrn_job *j = arg;
    for (int64_t plane = begin; plane < end; ++plane) { /* plane = n * C + c */
        int64_t c = plane % j->C;
        int64_t c_lo = c - j->lo < 0 ? 0 : c - j->lo, c_hi = c + j->hi >= j->C ? j->C - 1 : c + j->hi;
        for (int64_t i0 = 0; i0 < j->S; i0 += LRN_BLOCK) {
            int64_t n = j->S - i0 < LRN_BLOCK ? j->S - i0 : LRN_BLOCK, at = plane * j->S + i0;
            if (j->dtype == MLRT_FLOAT)
                lrn_block_f32((const float *)j->x + at, (float *)j->y + at, j->S, n, c_lo, c_hi, c, (float)j->k,
                              (float)j->bias, j->beta);
            else
                lrn_block_f64((const double *)j->x + at, (double *)j->y + at, j->S, n, c_lo, c_hi, c, j->k, j->bias,
                              j->beta);
        }
    }
}

static int k_lrn(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                 const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_lrn_params, p, params, params_size);
    MLRT_CHECK(n_in == 1 && n_out == 1, "expects 1 input and 1 output");
    const mlrt_tensor *X = &in[0];
    mlrt_tensor *Y = &out[0];
    MLRT_CHECK(X->dtype == MLRT_FLOAT || X->dtype == MLRT_DOUBLE, "element type %d not supported", X->dtype);
    MLRT_CHECK(X->rank >= 2 && mlrt_same_shape(X, Y) && Y->dtype == X->dtype, "Y must match X (rank >= 2)");
    MLRT_CHECK(mlrt_is_contiguous(X) && mlrt_is_contiguous(Y), "needs contiguous tensors");
    MLRT_CHECK(p->size >= 1, "size must be >= 1");
    lrn_job j = {X->data, Y->data, X->dtype, X->shape[1], 1, (p->size - 1) / 2, p->size / 2,
                 p->alpha / (double)p->size, p->beta, p->bias};
    for (int32_t d = 2; d < X->rank; ++d) j.S *= X->shape[d];
    int64_t planes = X->shape[0] * X->shape[1];
    if (planes == 0 || j.S == 0) return MLRT_OK;
    int64_t work = j.S * (p->size + 4);
    mlrt_parallel_for(ctx, planes, work >= (1 << 17) ? 1 : (1 << 17) / work + 1, lrn_planes, &j);
    if (X->dtype == MLRT_FLOAT) mlrt_note_path(MLRT_LOOP_PATH("lrn"));
    return MLRT_OK;
}

MLRT_KERNEL(lrn, "LRN", "", 1, MLRT_OPSET_MAX, MLRT_MASK_FLOATS, k_lrn);
