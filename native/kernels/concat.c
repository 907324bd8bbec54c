/* concat.c -- Concat and Split.
 *
 * Both see a "wide" tensor whose rows (everything from the axis inward) are the
 * pieces laid side by side: Concat gathers the pieces into the wide output, Split
 * scatters the wide input into the pieces.  The wide buffer is cut into byte ranges
 * spread over the thread pool, so a few large pieces copy at memcpy speed on every
 * thread and many small rows still balance.  Pieces a plan already laid out as the
 * wide buffer's slices (plan/native.py keeps them there) are not moved at all. */
#include <stdlib.h>

#include "internal.h"
#include "concat.h"

#define SMALL_BYTES ((int64_t)1024 * 1024) /* copies below this run on one thread */

typedef struct pieces {
    int32_t n;
    char **ptr;     /* piece buffers */
    int64_t *bytes; /* bytes of piece i in one wide row */
    int64_t *start; /* where piece i starts in a wide row */
    int64_t row;    /* bytes of a wide row */
    char *wide;
    bool gather;    /* pieces -> wide (Concat) or wide -> pieces (Split) */
} pieces;

/* Bytes [begin, end) of the wide buffer. */
static void pieces_range(void *arg, int64_t begin, int64_t end) {
    const pieces *p = arg;
    int64_t pos = begin, o = begin / p->row, in_row = begin % p->row;
    int32_t i = 0;
    while (p->start[i] + p->bytes[i] <= in_row) ++i; /* the non-empty piece holding in_row */
    while (pos < end) {
        int64_t off = in_row - p->start[i];
        int64_t n = p->bytes[i] - off < end - pos ? p->bytes[i] - off : end - pos;
        char *w = p->wide + pos, *q = p->ptr[i] + o * p->bytes[i] + off;
        if (p->gather) memcpy(w, q, (size_t)n);
        else memcpy(q, w, (size_t)n);
        pos += n;
        in_row += n;
        if (off + n < p->bytes[i]) continue; /* only when pos == end */
        do {
            if (++i == p->n) {
                i = 0;
                ++o;
                in_row = 0;
            }
        } while (p->bytes[i] == 0);
    }
}

/* Check `t` matches `wide` except along `axis`; return its axis extent or -1. */
static int64_t piece_extent(const mlrt_tensor *t, const mlrt_tensor *wide, int64_t axis) {
    if (!mlrt_present(t) || t->dtype != wide->dtype || t->rank != wide->rank || !mlrt_is_contiguous(t)) return -1;
    for (int32_t d = 0; d < t->rank; ++d)
        if (d != axis && t->shape[d] != wide->shape[d]) return -1;
    return t->shape[axis];
}

static int run_pieces(const mlrt_context *ctx, mlrt_tensor *wide, const mlrt_tensor *parts, int32_t n, int64_t axis,
                      bool gather) {
    size_t es = mlrt_dtype_size(wide->dtype);
    if (!es) return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "element type %d not supported", wide->dtype);
    MLRT_CHECK(axis >= 0 && axis < wide->rank, "axis %lld is out of range for rank %d", (long long)axis, wide->rank);
    MLRT_CHECK(mlrt_is_contiguous(wide), "needs contiguous tensors");
    MLRT_CHECK(n >= 1, "needs at least one piece");
    int64_t outer = 1, inner = (int64_t)es;
    for (int32_t d = 0; d < axis; ++d) outer *= wide->shape[d];
    for (int32_t d = (int32_t)axis + 1; d < wide->rank; ++d) inner *= wide->shape[d];
    pieces p = {.n = n, .row = wide->shape[axis] * inner, .wide = wide->data, .gather = gather};
    p.ptr = malloc(sizeof(char *) * (size_t)n);
    p.bytes = malloc(sizeof(int64_t) * (size_t)n);
    p.start = malloc(sizeof(int64_t) * (size_t)n);
    int status = MLRT_OK;
    if (!p.ptr || !p.bytes || !p.start) {
        status = mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "out of memory");
        goto done;
    }
    int64_t sum = 0;
    for (int32_t i = 0; i < n; ++i) {
        int64_t e = piece_extent(&parts[i], wide, axis);
        if (e < 0) {
            status = mlrt_fail(MLRT_ERR_INVALID_ARGUMENT, "%s %d does not match %s except along axis %lld",
                               gather ? "input" : "output", i, gather ? "the output" : "the input", (long long)axis);
            goto done;
        }
        p.ptr[i] = parts[i].data;
        p.bytes[i] = e * inner;
        p.start[i] = sum * inner;
        sum += e;
    }
    if (sum != wide->shape[axis]) {
        status = mlrt_fail(MLRT_ERR_INVALID_ARGUMENT, "pieces add up to %lld along axis %lld, expected %lld",
                           (long long)sum, (long long)axis, (long long)wide->shape[axis]);
        goto done;
    }
    bool in_place = outer == 1; /* a plan laid the pieces out as slices of the wide buffer: nothing to move */
    for (int32_t i = 0; i < n && in_place; ++i) in_place = p.bytes[i] == 0 || p.ptr[i] == p.wide + p.start[i];
    if (!in_place && outer > 0 && p.row > 0) mlrt_parallel_for(ctx, outer * p.row, SMALL_BYTES, pieces_range, &p);
done:
    free(p.ptr);
    free(p.bytes);
    free(p.start);
    return status;
}

static int k_concat(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                    const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_concat_params, p, params, params_size);
    MLRT_CHECK(n_in >= 1 && n_out == 1 && mlrt_present(&out[0]), "expects inputs and one output");
    return run_pieces(ctx, &out[0], in, n_in, p->axis, true);
}

static int k_split(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                   const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_split_params, p, params, params_size);
    MLRT_CHECK(n_in >= 1 && n_out >= 1 && mlrt_present(&in[0]), "expects an input and outputs");
    return run_pieces(ctx, (mlrt_tensor *)&in[0], out, n_out, p->axis, false);
}

MLRT_KERNEL(concat, "Concat", "", 1, MLRT_OPSET_MAX, MLRT_MASK_ALL | MLRT_MASK_LOWP, k_concat);
MLRT_KERNEL(split, "Split", "", 1, MLRT_OPSET_MAX, MLRT_MASK_ALL | MLRT_MASK_LOWP, k_split);
