/* tile.c -- Tile: out[i] = in[i mod in.shape], dimension by dimension.
 *
 * The output's shape (a multiple of the input's, worked out by the Python
 * semantics) says the repeats.  Each output row copies its input row once and then
 * doubles the copied prefix until the row is full.  Rows are moved as bytes, so one
 * kernel serves every element type. */
#include "internal.h"

#define SMALL_BYTES ((int64_t)1024 * 1024) /* outputs below this run on one thread */

typedef struct tile_job {
    const char *src;
    char *dst;
    int64_t es;
    int32_t rank;
    int64_t ishape[MLRT_MAX_RANK], oshape[MLRT_MAX_RANK];
} tile_job;

static void tile_rows(void *arg, int64_t begin, int64_t end) {
    const tile_job *j = arg;
    const int32_t last = j->rank - 1;
    const int64_t in_row = j->ishape[last] * j->es, out_row = j->oshape[last] * j->es;
    for (int64_t r = begin; r < end; ++r) {
        int64_t rem = r, irow = 0, mul = 1;
        for (int32_t d = last - 1; d >= 0; --d) {
            int64_t i = rem % j->oshape[d];
            rem /= j->oshape[d];
            irow += (i % j->ishape[d]) * mul;
            mul *= j->ishape[d];
        }
        char *dst = j->dst + r * out_row;
        memcpy(dst, j->src + irow * in_row, (size_t)in_row);
        for (int64_t done = in_row; done < out_row;) { /* double the copied prefix */
            int64_t n = done < out_row - done ? done : out_row - done;
            memcpy(dst + done, dst, (size_t)n);
            done += n;
        }
    }
}

static int k_tile(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                  const void *params, size_t params_size) {
    size_t es;
    int status = mlrt_check_movement(in, n_in, out, n_out, &es);
    if (status != MLRT_OK) return status;
    const mlrt_tensor *x = &in[0];
    mlrt_tensor *y = &out[0];
    for (int32_t d = 0; d < x->rank; ++d)
        MLRT_CHECK(x->shape[d] ? y->shape[d] % x->shape[d] == 0 : y->shape[d] == 0,
                   "output dimension %d (%lld) is not a multiple of the input's (%lld)", d, (long long)y->shape[d],
                   (long long)x->shape[d]);
    int64_t n = mlrt_numel(y);
    if (n == 0) return MLRT_OK;
    if (x->rank == 0) {
        memcpy(y->data, x->data, es);
        return MLRT_OK;
    }
    tile_job job = {.src = x->data, .dst = y->data, .es = (int64_t)es, .rank = x->rank};
    for (int32_t d = 0; d < x->rank; ++d) {
        job.ishape[d] = x->shape[d];
        job.oshape[d] = y->shape[d];
    }
    int64_t row_bytes = y->shape[y->rank - 1] * (int64_t)es;
    int64_t rows = n / y->shape[y->rank - 1];
    mlrt_parallel_for(ctx, rows, SMALL_BYTES / row_bytes + 1, tile_rows, &job);
    return MLRT_OK;
}

MLRT_KERNEL(tile, "Tile", "", 1, MLRT_OPSET_MAX, MLRT_MASK_ALL | MLRT_MASK_LOWP, k_tile);
