/* batchnorm.c -- BatchNormalization (inference; training-mode statistics too).
 *
 * Y = (X - mean) / sqrt(var + epsilon) * scale + B, folded per channel into
 * Y = X * a + b (a, b computed once in double).  X is (N, C, spatial...); the four
 * parameter tensors have C values, or C x spatial values when per_element is set
 * (the pre-opset-9 spatial=0 form).  They may be float or double whatever X is.
 * In training mode the batch's mean and (biased) variance replace mean and var, and
 * the outputs after Y receive momentum-blended running statistics, then (before
 * opset 14) the batch statistics themselves. */
#include <math.h>
#include <stdlib.h>

#include "batchnorm.h"
#include "internal.h"

static double param_at(const mlrt_tensor *t, int64_t i) {
    return t->dtype == MLRT_DOUBLE ? ((const double *)t->data)[i] : (double)((const float *)t->data)[i];
}

static void param_set(mlrt_tensor *t, int64_t i, double v) {
    if (t->dtype == MLRT_DOUBLE) ((double *)t->data)[i] = v;
    else ((float *)t->data)[i] = (float)v;
}

typedef struct bn_job {
    const void *x;
    void *y;
    int32_t dtype;
    int64_t C, S;            /* channels, positions per channel */
    bool per_element;
    const double *a, *b;     /* per parameter index */
} bn_job;

MLRT_ISA_FN(, void, bn_plane_f32, (const float *x, float *y, int64_t n, const double *a, const double *b, bool per_element),
            (x, y, n, a, b, per_element)) {
    if (per_element) {
        for (int64_t i = 0; i < n; ++i) y[i] = (float)(x[i] * a[i] + b[i]);
        return;
    }
    float av = (float)a[0], bv = (float)b[0];
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] * av + bv;
}

static void bn_planes(void *arg, int64_t begin, int64_t end) {
    const bn_job *j = arg;
    for (int64_t plane = begin; plane < end; ++plane) { /* plane = n * C + c */
        int64_t c = plane % j->C, q = j->per_element ? c * j->S : c;
        if (j->dtype == MLRT_FLOAT) {
            bn_plane_f32((const float *)j->x + plane * j->S, (float *)j->y + plane * j->S, j->S, j->a + q, j->b + q,
                         j->per_element);
        } else {
            const double *x = (const double *)j->x + plane * j->S;
            double *y = (double *)j->y + plane * j->S;
            for (int64_t i = 0; i < j->S; ++i) y[i] = x[i] * j->a[j->per_element ? q + i : q] + j->b[j->per_element ? q + i : q];
        }
    }
}

/* Mean and biased variance of every channel over the batch and positions (two passes, double). */
static void batch_stats(const mlrt_tensor *X, int64_t N, int64_t C, int64_t S, double *mean, double *var) {
    for (int64_t c = 0; c < C; ++c) {
        double sum = 0, sq = 0;
        for (int64_t n = 0; n < N; ++n)
            for (int64_t i = 0; i < S; ++i) sum += param_at(X, (n * C + c) * S + i);
        double m = N * S > 0 ? sum / (double)(N * S) : 0;
        for (int64_t n = 0; n < N; ++n)
            for (int64_t i = 0; i < S; ++i) {
                double d = param_at(X, (n * C + c) * S + i) - m;
                sq += d * d;
            }
        mean[c] = m;
        var[c] = N * S > 0 ? sq / (double)(N * S) : 0;
    }
}

static int k_batchnorm(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                       const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_batchnorm_params, p, params, params_size);
    MLRT_CHECK(n_in == 5 && n_out >= 1 && n_out <= 5, "expects 5 inputs and 1 to 5 outputs");
    const mlrt_tensor *X = &in[0];
    mlrt_tensor *Y = &out[0];
    MLRT_CHECK(X->dtype == MLRT_FLOAT || X->dtype == MLRT_DOUBLE, "element type %d not supported", X->dtype);
    MLRT_CHECK(X->rank >= 2 && mlrt_same_shape(X, Y) && Y->dtype == X->dtype, "Y must match X");
    MLRT_CHECK(mlrt_is_contiguous(X) && mlrt_is_contiguous(Y), "needs contiguous tensors");
    int64_t N = X->shape[0], C = X->shape[1], S = 1;
    for (int32_t d = 2; d < X->rank; ++d) S *= X->shape[d];
    int64_t P = p->per_element ? C * S : C;
    for (int32_t i = 1; i < 5; ++i) {
        const mlrt_tensor *t = &in[i];
        MLRT_CHECK((t->dtype == MLRT_FLOAT || t->dtype == MLRT_DOUBLE) && mlrt_is_contiguous(t) && mlrt_numel(t) == P,
                   "input %d must hold %lld float or double values", i, (long long)P);
    }
    for (int32_t i = 1; i < n_out; ++i) {
        const mlrt_tensor *t = &out[i];
        MLRT_CHECK(!mlrt_present(t) || ((t->dtype == MLRT_FLOAT || t->dtype == MLRT_DOUBLE) && mlrt_is_contiguous(t) &&
                                        mlrt_numel(t) == P),
                   "output %d must hold %lld float or double values", i, (long long)P);
    }
    MLRT_CHECK(!p->training || !p->per_element, "training-mode statistics need spatial=1");
    double *buf = malloc((size_t)(4 * (P ? P : 1)) * sizeof *buf);
    if (!buf) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "cannot allocate BatchNormalization coefficients");
    double *a = buf, *b = buf + P, *mean = buf + 2 * P, *var = buf + 3 * P;
    if (p->training) {
        batch_stats(X, N, C, S, mean, var);
    } else {
        for (int64_t q = 0; q < P; ++q) mean[q] = param_at(&in[3], q), var[q] = param_at(&in[4], q);
    }
    for (int64_t q = 0; q < P; ++q) {
        a[q] = param_at(&in[1], q) / sqrt(var[q] + p->epsilon);
        b[q] = param_at(&in[2], q) - mean[q] * a[q];
    }
    bn_job j = {X->data, Y->data, X->dtype, C, S, p->per_element != 0, a, b};
    mlrt_parallel_for(ctx, N * C, S >= (1 << 17) ? 1 : (1 << 17) / (S + 1) + 1, bn_planes, &j);
    if (X->dtype == MLRT_FLOAT) mlrt_note_path(MLRT_LOOP_PATH("batchnorm")); /* (float32: bn_plane_f32's clones) */
    if (p->training) {
        for (int64_t q = 0; q < P; ++q) {
            double m = p->momentum;
            if (n_out > 1 && mlrt_present(&out[1])) param_set(&out[1], q, param_at(&in[3], q) * m + mean[q] * (1 - m));
            if (n_out > 2 && mlrt_present(&out[2])) param_set(&out[2], q, param_at(&in[4], q) * m + var[q] * (1 - m));
            if (n_out > 3 && mlrt_present(&out[3])) param_set(&out[3], q, mean[q]);
            if (n_out > 4 && mlrt_present(&out[4])) param_set(&out[4], q, var[q]);
        }
    }
    free(buf);
    return MLRT_OK;
}

MLRT_KERNEL(batchnorm, "BatchNormalization", "", 1, MLRT_OPSET_MAX, MLRT_MASK_FLOATS, k_batchnorm);
