/* trilu.c -- Trilu: keep one triangle of the last two dimensions, zero the rest.
 *
 * The diagonal offset k is read from input 1 at run time (0 when absent).  Every
 * matrix row is a zeroed prefix, a copied middle and a zeroed suffix; rows are moved
 * as bytes, so one kernel serves every element type. */
#include "internal.h"
#include "trilu.h"

#define SMALL_BYTES ((int64_t)1024 * 1024) /* outputs below this run on one thread */

typedef struct trilu_job {
    const char *src;
    char *dst;
    int64_t es, n, m, k;
    bool upper;
} trilu_job;

static void trilu_rows(void *arg, int64_t begin, int64_t end) {
    const trilu_job *j = arg;
    const int64_t row = j->m * j->es;
    for (int64_t q = begin; q < end; ++q) {
        int64_t i = q % j->n;
        /* columns [keep0, keep1) survive */
        int64_t edge = j->upper ? i + j->k : i + j->k + 1;
        if (edge < 0) edge = 0;
        if (edge > j->m) edge = j->m;
        int64_t keep0 = j->upper ? edge : 0, keep1 = j->upper ? j->m : edge;
        const char *s = j->src + q * row;
        char *d = j->dst + q * row;
        memset(d, 0, (size_t)(keep0 * j->es));
        memcpy(d + keep0 * j->es, s + keep0 * j->es, (size_t)((keep1 - keep0) * j->es));
        memset(d + keep1 * j->es, 0, (size_t)((j->m - keep1) * j->es));
    }
}

static int k_trilu(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                   const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_trilu_params, p, params, params_size);
    MLRT_CHECK(n_in >= 1 && n_out >= 1 && mlrt_present(&in[0]), "expects an input and an output");
    const mlrt_tensor *x = &in[0];
    mlrt_tensor *y = &out[0];
    size_t es = mlrt_dtype_size(x->dtype);
    if (!es) return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "element type %d not supported", x->dtype);
    MLRT_CHECK(x->rank >= 2, "input must have rank >= 2, not %d", x->rank);
    MLRT_CHECK(x->dtype == y->dtype && mlrt_same_shape(x, y), "output must match the input");
    MLRT_CHECK(mlrt_is_contiguous(x) && mlrt_is_contiguous(y), "needs contiguous tensors");
    int64_t k = 0;
    if (n_in >= 2 && mlrt_present(&in[1])) {
        MLRT_CHECK(in[1].dtype == MLRT_INT64 && mlrt_numel(&in[1]) == 1, "k must be one int64");
        k = *(const int64_t *)in[1].data;
    }
    int64_t total = mlrt_numel(x);
    if (total == 0) return MLRT_OK;
    trilu_job job = {x->data, y->data, (int64_t)es, x->shape[x->rank - 2], x->shape[x->rank - 1], k, p->upper != 0};
    /* keep k within the matrix's reach so i + k cannot overflow */
    if (job.k > job.m + 1) job.k = job.m + 1;
    if (job.k < -job.n - 1) job.k = -job.n - 1;
    int64_t rows = total / job.m;
    mlrt_parallel_for(ctx, rows, SMALL_BYTES / (job.m * job.es) + 1, trilu_rows, &job);
    return MLRT_OK;
}

MLRT_KERNEL(trilu, "Trilu", "", 14, MLRT_OPSET_MAX, MLRT_MASK_ALL | MLRT_MASK_LOWP, k_trilu);
MLRT_KERNEL(ms_trilu, "Trilu", "com.microsoft", 1, MLRT_OPSET_MAX, MLRT_MASK_ALL | MLRT_MASK_LOWP, k_trilu);
