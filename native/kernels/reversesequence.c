/* reversesequence.c -- ReverseSequence: reverse the first lens[b] steps of every batch entry.
 *
 * The lengths (int32 or int64) are read at run time and each is checked against the
 * time axis before anything is copied.  Every (batch, step) row moves whole, as
 * bytes, so one kernel serves every element type. */
#include "internal.h"
#include "reversesequence.h"

#define SMALL_BYTES ((int64_t)1024 * 1024) /* outputs below this run on one thread */

typedef struct revseq_job {
    const char *src;
    char *dst;
    const void *lens;
    bool lens32;
    int64_t es, batch, steps, inner;
    bool batch_first;
} revseq_job;

static void revseq_rows(void *arg, int64_t begin, int64_t end) {
    const revseq_job *j = arg;
    const int64_t row = j->inner * j->es;
    for (int64_t q = begin; q < end; ++q) {
        int64_t b = j->batch_first ? q / j->steps : q % j->batch;
        int64_t t = j->batch_first ? q % j->steps : q / j->batch;
        int64_t len = j->lens32 ? ((const int32_t *)j->lens)[b] : ((const int64_t *)j->lens)[b];
        int64_t s = t < len ? len - 1 - t : t;
        int64_t src_row = j->batch_first ? b * j->steps + s : s * j->batch + b;
        memcpy(j->dst + q * row, j->src + src_row * row, (size_t)row);
    }
}

static int k_reverse_sequence(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                              int32_t n_out, const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_reverse_sequence_params, p, params, params_size);
    MLRT_CHECK(n_in >= 2 && n_out >= 1 && mlrt_present(&in[0]) && mlrt_present(&in[1]), "expects 2 inputs");
    const mlrt_tensor *x = &in[0], *lens = &in[1];
    mlrt_tensor *y = &out[0];
    size_t es = mlrt_dtype_size(x->dtype);
    if (!es) return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "element type %d not supported", x->dtype);
    MLRT_CHECK(x->rank >= 2, "input must have rank >= 2, not %d", x->rank);
    MLRT_CHECK(x->dtype == y->dtype && mlrt_same_shape(x, y), "output must match the input");
    MLRT_CHECK(mlrt_is_contiguous(x) && mlrt_is_contiguous(y) && mlrt_is_contiguous(lens), "needs contiguous tensors");
    MLRT_CHECK((p->batch_axis == 0 && p->time_axis == 1) || (p->batch_axis == 1 && p->time_axis == 0),
               "batch_axis and time_axis must be 0 and 1");
    MLRT_CHECK(lens->dtype == MLRT_INT64 || lens->dtype == MLRT_INT32, "sequence_lens must be int32 or int64");
    revseq_job job = {x->data, y->data, lens->data, lens->dtype == MLRT_INT32, (int64_t)es,
                      x->shape[p->batch_axis], x->shape[p->time_axis], 1, p->batch_axis == 0};
    for (int32_t d = 2; d < x->rank; ++d) job.inner *= x->shape[d];
    MLRT_CHECK(lens->rank == 1 && lens->shape[0] == job.batch, "sequence_lens must have shape [%lld]", (long long)job.batch);
    for (int64_t b = 0; b < job.batch; ++b) {
        int64_t len = job.lens32 ? ((const int32_t *)lens->data)[b] : ((const int64_t *)lens->data)[b];
        MLRT_CHECK(len >= 0 && len <= job.steps, "sequence_lens[%lld] = %lld is outside [0, %lld]", (long long)b,
                   (long long)len, (long long)job.steps);
    }
    int64_t rows = job.batch * job.steps;
    if (rows == 0 || job.inner == 0) return MLRT_OK;
    mlrt_parallel_for(ctx, rows, SMALL_BYTES / (job.inner * job.es) + 1, revseq_rows, &job);
    return MLRT_OK;
}

MLRT_KERNEL(reverse_sequence, "ReverseSequence", "", 10, MLRT_OPSET_MAX, MLRT_MASK_ALL | MLRT_MASK_LOWP, k_reverse_sequence);
