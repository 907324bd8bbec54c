/* linalg.c -- Det.
 *
 * The determinant of each n x n matrix of a batch: LU factorisation with partial
 * pivoting in double precision (whatever the tensor type), the product of the
 * pivots with the sign of the row permutation.  A singular matrix gives 0 (a zero
 * pivot ends the elimination), a matrix holding a NaN gives NaN, an empty (0 x 0)
 * matrix 1.  Matrices are spread over the pool; each worker factorises in its own
 * scratch copy. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "internal.h"
#include "linalg.h"

#define store(b, t, i, v) mlrt_store_real((b), (i), (t), (v))
#define load(b, t, i) mlrt_load_as_double((b), (i), (t))

typedef struct det_job {
    const mlrt_det_params *p;
    const void *x;
    void *y;
    int32_t dtype;
    atomic_int failed;
} det_job;

/* determinant of the n x n row-major matrix a, destroyed on the way */
static double lu_det(double *a, int64_t n) {
    double det = 1.0;
    for (int64_t i = 0; i < n * n; ++i)
        if (a[i] != a[i]) return a[i];  /* NaN anywhere: NaN, as LAPACK's factorisation gives */
    for (int64_t k = 0; k < n; ++k) {
        int64_t piv = k;
        double best = fabs(a[k * n + k]);
        for (int64_t i = k + 1; i < n; ++i) {
            double v = fabs(a[i * n + k]);
            if (v > best) best = v, piv = i;
        }
        if (piv != k) {
            for (int64_t j = 0; j < n; ++j) {
                double t = a[k * n + j];
                a[k * n + j] = a[piv * n + j];
                a[piv * n + j] = t;
            }
            det = -det;
        }
        double d = a[k * n + k];
        det *= d;
        if (d == 0.0) return det;  /* singular: 0 with the sign the product gives */
        for (int64_t i = k + 1; i < n; ++i) {
            double f = a[i * n + k] / d;
            if (f == 0.0) continue;
            double *ri = a + i * n, *rk = a + k * n;
            for (int64_t j = k + 1; j < n; ++j) ri[j] -= f * rk[j];
        }
    }
    return det;
}

static void det_matrices(void *arg, int64_t begin, int64_t end) {
    det_job *j = arg;
    int64_t n = j->p->n, nn = n * n;
    double *a = malloc((size_t)(nn > 0 ? nn : 1) * sizeof(double));
    if (!a) {
        atomic_store(&j->failed, 1);
        return;
    }
    for (int64_t b = begin; b < end; ++b) {
        for (int64_t i = 0; i < nn; ++i) a[i] = load(j->x, j->dtype, b * nn + i);
        store(j->y, j->dtype, b, lu_det(a, n));
    }
    free(a);
}

/* inputs: X; output: Y */
static int k_det(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                 const void *params, size_t params_size) {
    MLRT_CHECK(n_in == 1 && n_out == 1, "expects 1 input and 1 output");
    MLRT_PARAMS(mlrt_det_params, p, params, params_size);
    const mlrt_tensor *x = &in[0];
    mlrt_tensor *y = &out[0];
    MLRT_CHECK(x->dtype == y->dtype, "output must have the input's type");
    MLRT_CHECK(x->dtype == MLRT_FLOAT || x->dtype == MLRT_DOUBLE || x->dtype == MLRT_FLOAT16 ||
               x->dtype == MLRT_BFLOAT16, "element type %d not supported", x->dtype);
    MLRT_CHECK(mlrt_is_contiguous(x) && mlrt_is_contiguous(y), "needs contiguous tensors");
    int64_t nn, all;
    MLRT_CHECK(p->batch >= 0 && p->n >= 0 && !__builtin_mul_overflow(p->n, p->n, &nn) &&
               !__builtin_mul_overflow(nn, p->batch, &all) && all == mlrt_numel(x) && p->batch == mlrt_numel(y),
               "[batch, n, n] does not cover the input and [batch] the output");
    if (p->batch == 0) return MLRT_OK;
    det_job job = {p, x->data, y->data, x->dtype, 0};
    mlrt_parallel_for(ctx, p->batch, 32768 / (nn * p->n + 1) + 1, det_matrices, &job);
    if (atomic_load(&job.failed)) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "no memory for a %lld x %lld matrix",
                                                   (long long)p->n, (long long)p->n);
    return MLRT_OK;
}

MLRT_KERNEL(det, "Det", "", 11, MLRT_OPSET_MAX,
            MLRT_MASK_FLOATS | MLRT_BIT(MLRT_FLOAT16) | MLRT_BIT(MLRT_BFLOAT16), k_det);
