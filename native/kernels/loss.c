/* loss.c -- NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss.
 *
 * Scores x are a contiguous [n, C, d] block, the target t an [n, d] block of class
 * indices, the optional weight a [C] vector.  For every line l = (i, k):
 *   value    x[i, t, k]              (NLL)
 *            log_softmax(x[i, :, k])[t]   (SCE, which may also write every log_prob)
 *   w        weight[t] (1 without weight), 0 where t == ignore_index
 *   loss     -value * w
 * reduction none writes each loss at t's position; sum adds them; mean divides
 * the sum by the sum of w.  A target outside [0, C) that is not ignored is an
 * error.  Sums are taken in double over fixed blocks of lines, so the result does
 * not depend on the thread count; float16 / bfloat16 compute in double too. */
#include <math.h>
#include <stdlib.h>

#include "internal.h"
#include "loss.h"

#define store mlrt_store_real
#define load mlrt_load_as_double

#define LOSS_BLOCK 1024

typedef struct loss_job {
    const mlrt_loss_params *p;
    const void *x, *t, *w;
    void *y, *log_prob;
    int32_t dtype, t_dtype;
    bool softmax;
    double *sums;  /* per block: loss, weight */
    int bad;       /* a target out of range */
} loss_job;

static void loss_blocks(void *arg, int64_t begin, int64_t end) {
    loss_job *j = arg;
    const mlrt_loss_params *p = j->p;
    int64_t lines = p->n * p->d, C = p->classes, d = p->d;
    for (int64_t blk = begin; blk < end; ++blk) {
        double loss_sum = 0.0, weight_sum = 0.0;
        int64_t hi = (blk + 1) * LOSS_BLOCK < lines ? (blk + 1) * LOSS_BLOCK : lines;
        for (int64_t l = blk * LOSS_BLOCK; l < hi; ++l) {
            int64_t i = l / d, k = l % d, base = i * C * d + k;
            int64_t t = j->t_dtype == MLRT_INT32 ? ((const int32_t *)j->t)[l] : ((const int64_t *)j->t)[l];
            double lse = 0.0;
            if (j->softmax) {  /* log-sum-exp of the line, shifted by its max */
                double m = -INFINITY, s = 0.0;
                for (int64_t c = 0; c < C; ++c) {
                    double v = load(j->x, base + c * d, j->dtype);
                    m = v > m || v != v ? v : m;
                }
                if (m == INFINITY || m != m) m = NAN;
                for (int64_t c = 0; c < C; ++c) s += exp(load(j->x, base + c * d, j->dtype) - m);
                lse = m + log(s);
                if (j->log_prob)
                    for (int64_t c = 0; c < C; ++c)
                        store(j->log_prob, base + c * d, j->dtype, load(j->x, base + c * d, j->dtype) - lse);
            }
            double loss = 0.0, w = 0.0;
            if (!(p->has_ignore && t == p->ignore_index)) {
                if (t < 0 || t >= C) {
                    __atomic_store_n(&j->bad, 1, __ATOMIC_RELAXED);
                    continue;
                }
                w = j->w ? load(j->w, t, j->dtype) : 1.0;
                double v = load(j->x, base + t * d, j->dtype) - lse;
                loss = -v * w;
            }
            if (p->reduction == MLRT_LOSS_NONE) store(j->y, l, j->dtype, loss);
            loss_sum += loss;
            weight_sum += w;
        }
        j->sums[2 * blk] = loss_sum;
        j->sums[2 * blk + 1] = weight_sum;
    }
}

static bool is_float_type(int32_t t) {
    return t == MLRT_FLOAT || t == MLRT_DOUBLE || t == MLRT_FLOAT16 || t == MLRT_BFLOAT16;
}

static int run_loss(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                    const void *params, size_t params_size, bool softmax) {
    MLRT_PARAMS(mlrt_loss_params, p, params, params_size);
    MLRT_CHECK(n_in >= 2 && n_in <= 3 && n_out >= 1 && n_out <= (softmax ? 2 : 1), "wrong number of inputs or outputs");
    const mlrt_tensor *x = &in[0], *t = &in[1], *w = n_in > 2 && mlrt_present(&in[2]) ? &in[2] : NULL;
    mlrt_tensor *y = &out[0], *lp = n_out > 1 && mlrt_present(&out[1]) ? &out[1] : NULL;
    if (!is_float_type(x->dtype)) return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "element type %d not supported", x->dtype);
    MLRT_CHECK(t->dtype == MLRT_INT32 || t->dtype == MLRT_INT64, "target must be int32 or int64");
    MLRT_CHECK(p->n >= 0 && p->classes >= 0 && p->d >= 0 && p->reduction >= MLRT_LOSS_NONE &&
                   p->reduction <= MLRT_LOSS_MEAN,
               "bad parameters");
    int64_t nc, ncd, nd;
    MLRT_CHECK(!__builtin_mul_overflow(p->n, p->classes, &nc) && !__builtin_mul_overflow(nc, p->d, &ncd) &&
                   !__builtin_mul_overflow(p->n, p->d, &nd),
               "sizes overflow");
    MLRT_CHECK(mlrt_is_contiguous(x) && mlrt_numel(x) == ncd, "scores must be a contiguous [n, C, d] block");
    MLRT_CHECK(mlrt_is_contiguous(t) && mlrt_numel(t) == nd, "target must be a contiguous [n, d] block");
    MLRT_CHECK(!w || (w->dtype == x->dtype && w->rank == 1 && w->shape[0] == p->classes && mlrt_is_contiguous(w)),
               "weight must be a [C] vector of the scores' type");
    MLRT_CHECK(y->dtype == x->dtype && mlrt_is_contiguous(y) &&
                   mlrt_numel(y) == (p->reduction != MLRT_LOSS_NONE ? 1 : nd),
               "loss output does not match");
    MLRT_CHECK(!lp || (lp->dtype == x->dtype && mlrt_is_contiguous(lp) && mlrt_numel(lp) == ncd),
               "log_prob output does not match");
    int64_t blocks = (nd + LOSS_BLOCK - 1) / LOSS_BLOCK;
    double *sums = calloc((size_t)(2 * blocks + 2), sizeof(double));
    if (!sums) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "out of memory");
    loss_job job = {p, x->data, t->data, w ? w->data : NULL, y->data, lp ? lp->data : NULL, x->dtype, t->dtype,
                    softmax, sums, 0};
    mlrt_parallel_for(ctx, blocks, 1, loss_blocks, &job);
    double loss = 0.0, weight = 0.0;
    for (int64_t b = 0; b < blocks; ++b) {
        loss += sums[2 * b];
        weight += sums[2 * b + 1];
    }
    free(sums);
    if (job.bad) return mlrt_fail(MLRT_ERR_INVALID_ARGUMENT, "a target is outside [0, %lld)", (long long)p->classes);
    if (p->reduction == MLRT_LOSS_SUM) store(y->data, 0, y->dtype, loss);
    if (p->reduction == MLRT_LOSS_MEAN) store(y->data, 0, y->dtype, loss / weight);
    return MLRT_OK;
}

static int k_nll(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                 const void *params, size_t params_size) {
    return run_loss(ctx, in, n_in, out, n_out, params, params_size, false);
}

static int k_sce(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                 const void *params, size_t params_size) {
    return run_loss(ctx, in, n_in, out, n_out, params, params_size, true);
}

#define LOSS_TYPES (MLRT_MASK_FLOATS | MLRT_BIT(MLRT_FLOAT16) | MLRT_BIT(MLRT_BFLOAT16))
MLRT_KERNEL(nll_loss, "NegativeLogLikelihoodLoss", "", 12, MLRT_OPSET_MAX, LOSS_TYPES, k_nll);
MLRT_KERNEL(sce_loss, "SoftmaxCrossEntropyLoss", "", 12, MLRT_OPSET_MAX, LOSS_TYPES, k_sce);
