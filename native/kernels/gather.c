/* gather.c -- Gather, GatherElements, GatherND.
 *
 * Indices (int32 or int64) are read at run time, so every one is checked against
 * the dimension it indexes before anything is copied: an index outside [-n, n)
 * fails with the offending value; negative ones count from the end.  Elements move
 * by size, so one kernel serves every element type. */
#include "internal.h"
#include "gather.h"

#define SMALL_BYTES ((int64_t)64 * 1024)

static inline int64_t index_at(const mlrt_tensor *t, int64_t k) {
    return t->dtype == MLRT_INT32 ? ((const int32_t *)t->data)[k] : ((const int64_t *)t->data)[k];
}

static int check_indices_tensor(const mlrt_tensor *t) {
    MLRT_CHECK(mlrt_present(t) && (t->dtype == MLRT_INT32 || t->dtype == MLRT_INT64), "indices must be int32 or int64");
    MLRT_CHECK(mlrt_is_contiguous(t), "indices must be contiguous");
    return MLRT_OK;
}

/* Every index k*step+first (k < count) must lie in [-n, n). */
static int check_range(const mlrt_tensor *ind, int64_t first, int64_t step, int64_t count, int64_t n, const char *what) {
    for (int64_t k = 0; k < count; ++k) {
        int64_t v = index_at(ind, first + k * step);
        MLRT_CHECK(v >= -n && v < n, "index %lld is out of range for %s of size %lld", (long long)v, what, (long long)n);
    }
    return MLRT_OK;
}

/* Copy `count` elements of es bytes (count * es bytes, one element when count is 1). */
static inline void move(char *dst, const char *src, int64_t bytes, int64_t es) {
    if (bytes != es) {
        memcpy(dst, src, (size_t)bytes);
        return;
    }
    switch (es) {
    case 1: *(uint8_t *)dst = *(const uint8_t *)src; break;
    case 2: *(uint16_t *)dst = *(const uint16_t *)src; break;
    case 4: *(uint32_t *)dst = *(const uint32_t *)src; break;
    default: *(uint64_t *)dst = *(const uint64_t *)src; break;
    }
}

/* ---- Gather: y[o, j, i] = data[o, ind[j], i] ---------------------------------------- */

typedef struct gather_job {
    const char *src;
    char *dst;
    const mlrt_tensor *ind;
    int64_t n_ind, dim, slice; /* slice: bytes of one inner block */
    int64_t es;
} gather_job;

static void gather_range(void *arg, int64_t begin, int64_t end) {
    const gather_job *j = arg;
    for (int64_t q = begin; q < end; ++q) {
        int64_t o = q / j->n_ind, k = q % j->n_ind;
        int64_t v = index_at(j->ind, k);
        if (v < 0) v += j->dim;
        move(j->dst + q * j->slice, j->src + (o * j->dim + v) * j->slice, j->slice, j->es);
    }
}

static int k_gather(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                    const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_gather_params, p, params, params_size);
    MLRT_CHECK(n_in >= 2 && n_out >= 1 && mlrt_present(&in[0]), "expects data, indices and one output");
    const mlrt_tensor *x = &in[0], *ind = &in[1];
    mlrt_tensor *y = &out[0];
    int status = check_indices_tensor(ind);
    if (status) return status;
    size_t es = mlrt_dtype_size(x->dtype);
    if (!es) return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "element type %d not supported", x->dtype);
    MLRT_CHECK(x->dtype == y->dtype, "output type must match the data");
    MLRT_CHECK(mlrt_is_contiguous(x) && mlrt_is_contiguous(y), "needs contiguous tensors");
    int64_t axis = p->axis;
    MLRT_CHECK(axis >= 0 && axis < x->rank, "axis %lld is out of range for rank %d", (long long)axis, x->rank);
    MLRT_CHECK(y->rank == x->rank - 1 + ind->rank, "output rank %d does not match", y->rank);
    for (int32_t d = 0; d < y->rank; ++d) {
        int64_t want = d < axis ? x->shape[d] : d < axis + ind->rank ? ind->shape[d - axis] : x->shape[d - ind->rank + 1];
        MLRT_CHECK(y->shape[d] == want, "output dimension %d is %lld, expected %lld", d, (long long)y->shape[d], (long long)want);
    }
    gather_job job = {.src = x->data, .dst = y->data, .ind = ind, .n_ind = mlrt_numel(ind), .dim = x->shape[axis],
                      .slice = (int64_t)es, .es = (int64_t)es};
    int64_t outer = 1;
    for (int32_t d = 0; d < axis; ++d) outer *= x->shape[d];
    for (int32_t d = (int32_t)axis + 1; d < x->rank; ++d) job.slice *= x->shape[d];
    if ((status = check_range(ind, 0, 1, job.n_ind, job.dim, "the gathered axis"))) return status;
    int64_t items = outer * job.n_ind;
    if (items == 0 || job.slice == 0) return MLRT_OK;
    mlrt_parallel_for(ctx, items, SMALL_BYTES / job.slice + 1, gather_range, &job);
    return MLRT_OK;
}

MLRT_KERNEL(gather, "Gather", "", 1, MLRT_OPSET_MAX, MLRT_MASK_ALL | MLRT_MASK_LOWP, k_gather);

/* ---- GatherElements: y[i] = data[i with i[axis] replaced by ind[i]] ------------------ */

typedef struct gather_elements_job {
    const char *src;
    char *dst;
    const mlrt_tensor *ind;
    int32_t rank;
    int64_t axis, dim, es;
    int64_t shape[MLRT_MAX_RANK];   /* of indices and output */
    int64_t dstride[MLRT_MAX_RANK]; /* of data, in elements */
} gather_elements_job;

static void gather_elements_rows(void *arg, int64_t begin, int64_t end) {
    const gather_elements_job *j = arg;
    const int32_t last = j->rank - 1;
    const int64_t len = j->shape[last], axis_stride = j->dstride[j->axis];
    const int64_t col_stride = j->axis == last ? 0 : j->dstride[last];
    for (int64_t r = begin; r < end; ++r) {
        int64_t rem = r, base = 0;
        for (int32_t d = last - 1; d >= 0; --d) {
            int64_t i = rem % j->shape[d];
            rem /= j->shape[d];
            if (d != j->axis) base += i * j->dstride[d];
        }
        for (int64_t c = 0; c < len; ++c) {
            int64_t k = r * len + c, v = index_at(j->ind, k);
            if (v < 0) v += j->dim;
            move(j->dst + k * j->es, j->src + (base + v * axis_stride + c * col_stride) * j->es, j->es, j->es);
        }
    }
}

static int k_gather_elements(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                             int32_t n_out, const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_gather_elements_params, p, params, params_size);
    MLRT_CHECK(n_in >= 2 && n_out >= 1 && mlrt_present(&in[0]), "expects data, indices and one output");
    const mlrt_tensor *x = &in[0], *ind = &in[1];
    mlrt_tensor *y = &out[0];
    int status = check_indices_tensor(ind);
    if (status) return status;
    size_t es = mlrt_dtype_size(x->dtype);
    if (!es) return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "element type %d not supported", x->dtype);
    MLRT_CHECK(x->dtype == y->dtype, "output type must match the data");
    MLRT_CHECK(mlrt_is_contiguous(x) && mlrt_is_contiguous(y), "needs contiguous tensors");
    MLRT_CHECK(x->rank >= 1 && ind->rank == x->rank && mlrt_same_shape(ind, y), "indices must have the data's rank and the output's shape");
    MLRT_CHECK(p->axis >= 0 && p->axis < x->rank, "axis %lld is out of range for rank %d", (long long)p->axis, x->rank);
    gather_elements_job job = {.src = x->data, .dst = y->data, .ind = ind, .rank = x->rank, .axis = p->axis,
                               .dim = x->shape[p->axis], .es = (int64_t)es};
    int64_t acc = 1;
    for (int32_t d = x->rank - 1; d >= 0; --d) {
        MLRT_CHECK(d == p->axis || ind->shape[d] <= x->shape[d], "indices dimension %d (%lld) exceeds the data's (%lld)", d,
                   (long long)ind->shape[d], (long long)x->shape[d]);
        job.shape[d] = ind->shape[d];
        job.dstride[d] = acc;
        acc *= x->shape[d];
    }
    int64_t n = mlrt_numel(ind);
    if ((status = check_range(ind, 0, 1, n, job.dim, "the gathered axis"))) return status;
    if (n == 0) return MLRT_OK;
    int64_t len = ind->shape[x->rank - 1];
    mlrt_parallel_for(ctx, n / len, 16384 / len + 1, gather_elements_rows, &job);
    return MLRT_OK;
}

MLRT_KERNEL(gather_elements, "GatherElements", "", 11, MLRT_OPSET_MAX, MLRT_MASK_ALL | MLRT_MASK_LOWP, k_gather_elements);

/* ---- GatherND: y[batch, t] = data[batch, ind[batch, t, 0..k)] (a slice) ----------- */

typedef struct gather_nd_job {
    const char *src;
    char *dst;
    const mlrt_tensor *ind;
    int64_t b, k, per_batch, batch_stride, slice, es;
    int64_t dshape[MLRT_MAX_RANK], dstride[MLRT_MAX_RANK];
} gather_nd_job;

static void gather_nd_range(void *arg, int64_t begin, int64_t end) {
    const gather_nd_job *j = arg;
    for (int64_t t = begin; t < end; ++t) {
        int64_t off = t / j->per_batch * j->batch_stride;
        for (int64_t i = 0; i < j->k; ++i) {
            int64_t v = index_at(j->ind, t * j->k + i);
            if (v < 0) v += j->dshape[j->b + i];
            off += v * j->dstride[j->b + i];
        }
        move(j->dst + t * j->slice, j->src + off * j->es, j->slice, j->es);
    }
}

static int k_gather_nd(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                       const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_gather_nd_params, p, params, params_size);
    MLRT_CHECK(n_in >= 2 && n_out >= 1 && mlrt_present(&in[0]), "expects data, indices and one output");
    const mlrt_tensor *x = &in[0], *ind = &in[1];
    mlrt_tensor *y = &out[0];
    int status = check_indices_tensor(ind);
    if (status) return status;
    size_t es = mlrt_dtype_size(x->dtype);
    if (!es) return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "element type %d not supported", x->dtype);
    MLRT_CHECK(x->dtype == y->dtype, "output type must match the data");
    MLRT_CHECK(mlrt_is_contiguous(x) && mlrt_is_contiguous(y), "needs contiguous tensors");
    const int64_t b = p->batch_dims, q = ind->rank, r = x->rank;
    MLRT_CHECK(q >= 1 && r >= 1 && b >= 0 && b < q && b < r, "batch_dims %lld does not fit ranks %lld and %lld",
               (long long)b, (long long)q, (long long)r);
    const int64_t k = ind->shape[q - 1];
    MLRT_CHECK(k >= 1 && k <= r - b, "indices' last dimension %lld must be in [1, %lld]", (long long)k, (long long)(r - b));
    gather_nd_job job = {.src = x->data, .dst = y->data, .ind = ind, .b = b, .k = k, .per_batch = 1, .batch_stride = 1,
                         .slice = (int64_t)es, .es = (int64_t)es};
    int64_t acc = 1;
    for (int32_t d = (int32_t)r - 1; d >= 0; --d) {
        job.dshape[d] = x->shape[d];
        job.dstride[d] = acc;
        acc *= x->shape[d];
    }
    int64_t batch = 1;
    for (int64_t d = 0; d < b; ++d) {
        MLRT_CHECK(ind->shape[d] == x->shape[d], "batch dimension %lld differs between data and indices", (long long)d);
        batch *= x->shape[d];
    }
    job.batch_stride = b < r ? job.dstride[b] * x->shape[b] : 1;
    for (int64_t d = b; d < q - 1; ++d) job.per_batch *= ind->shape[d];
    for (int64_t d = b + k; d < r; ++d) job.slice *= x->shape[d];
    /* output: indices.shape[:-1] + data.shape[b+k:] */
    MLRT_CHECK(y->rank == q - 1 + r - b - k, "output rank %d does not match", y->rank);
    for (int32_t d = 0; d < y->rank; ++d) {
        int64_t want = d < q - 1 ? ind->shape[d] : x->shape[b + k + d - (q - 1)];
        MLRT_CHECK(y->shape[d] == want, "output dimension %d is %lld, expected %lld", d, (long long)y->shape[d], (long long)want);
    }
    int64_t tuples = batch * job.per_batch;
    for (int64_t i = 0; i < k; ++i)
        if ((status = check_range(ind, i, k, tuples, x->shape[b + i], "a data axis"))) return status;
    if (tuples == 0 || job.slice == 0) return MLRT_OK;
    mlrt_parallel_for(ctx, tuples, SMALL_BYTES / job.slice + 1, gather_nd_range, &job);
    return MLRT_OK;
}

MLRT_KERNEL(gather_nd, "GatherND", "", 11, MLRT_OPSET_MAX, MLRT_MASK_ALL | MLRT_MASK_LOWP, k_gather_nd);
