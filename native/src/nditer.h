/* nditer.h -- walking strided tensors row by row.
 *
 * Elementwise kernels see up to three tensors of one output shape (inputs through
 * broadcast views with stride 0).  The walk treats the last dimension as a row and
 * splits the rows across the thread pool; a row start is found by div/mod, so any
 * chunk can start anywhere. */
#ifndef MLRT_NDITER_H
#define MLRT_NDITER_H

#include "internal.h"

typedef struct mlrt_rows {
    int32_t rank;              /* >= 1 (scalars are treated as shape [1]) */
    int64_t shape[MLRT_MAX_RANK];
    int64_t strides[4][MLRT_MAX_RANK];  /* element strides of up to 4 operands */
    int32_t n_operands;
    int64_t n_rows, row_len;
} mlrt_rows;

/* Set up a walk over `shape` of operands with the given strides.  Dimensions that every
 * operand walks as one (stride of the outer = stride of the inner x its size, as for
 * contiguous operands or broadcast constants) are merged, so rows are as long as the
 * layouts allow; a row longer than MLRT_ROWS_SPLIT elements is cut into equal pieces
 * (a divisor of its length from 1/8 of that up) so that the pool can share it out.  A
 * rank-0 shape is [1]. */
#define MLRT_ROWS_SPLIT 32768
static inline void mlrt_rows_init(mlrt_rows *w, const mlrt_tensor *shape_of, const mlrt_tensor *const *ops, int32_t n) {
    w->n_operands = n;
    w->rank = 0;
    int32_t rank = shape_of->rank ? shape_of->rank : 1;
    for (int32_t d = 0; d < rank; ++d) {
        int64_t size = shape_of->rank ? shape_of->shape[d] : 1;
        int64_t st[4];
        for (int32_t k = 0; k < n; ++k) st[k] = ops[k]->rank ? ops[k]->strides[d] : 0;
        if (size == 1 && d < rank - 1) continue; /* (a unit dimension moves no operand) */
        bool merge = w->rank > 0 && size != 0;
        for (int32_t k = 0; merge && k < n; ++k) merge = w->strides[k][w->rank - 1] == st[k] * size;
        if (merge) {
            w->shape[w->rank - 1] *= size;
            for (int32_t k = 0; k < n; ++k) w->strides[k][w->rank - 1] = st[k];
            continue;
        }
        w->shape[w->rank] = size;
        for (int32_t k = 0; k < n; ++k) w->strides[k][w->rank] = st[k];
        ++w->rank;
    }
    int64_t len = w->shape[w->rank - 1];
    if (len > MLRT_ROWS_SPLIT && w->rank < MLRT_MAX_RANK)
        for (int64_t piece = MLRT_ROWS_SPLIT; piece >= MLRT_ROWS_SPLIT / 8; --piece)
            if (len % piece == 0) {
                w->shape[w->rank - 1] = len / piece, w->shape[w->rank] = piece;
                for (int32_t k = 0; k < n; ++k) {
                    w->strides[k][w->rank] = w->strides[k][w->rank - 1];
                    w->strides[k][w->rank - 1] *= piece;
                }
                ++w->rank;
                break;
            }
    w->row_len = w->shape[w->rank - 1];
    w->n_rows = 1;
    for (int32_t d = 0; d < w->rank - 1; ++d) w->n_rows *= w->shape[d];
    if (w->row_len == 0) w->n_rows = 0;
}
/* One row: py[i] = EXPR for i < n, EXPR reading u = the element of pa (stride sa) and
 * v = the element of pb (stride sb), of types TA and TB: a loop per stride pattern (both
 * contiguous, one a constant) that the compiler vectorizes, any strides otherwise. */
#define MLRT_ROW2(TA, TB, EXPR)                                                                  \
    if (sa == 1 && sb == 1)                                                                      \
        for (int64_t i = 0; i < n; ++i) { TA u = pa[i]; TB v = pb[i]; (void)v; py[i] = (EXPR); }          \
    else if (sa == 1 && sb == 0) {                                                               \
        TB v = pb[0];                                                                            \
        (void)v;                                                                                 \
        for (int64_t i = 0; i < n; ++i) { TA u = pa[i]; py[i] = (EXPR); }                       \
    } else if (sa == 0 && sb == 1) {                                                             \
        TA u = pa[0];                                                                            \
        for (int64_t i = 0; i < n; ++i) { TB v = pb[i]; (void)v; py[i] = (EXPR); }                       \
    } else                                                                                       \
        for (int64_t i = 0; i < n; ++i) { TA u = pa[i * sa]; TB v = pb[i * sb]; (void)v; py[i] = (EXPR); }

/* Element offsets of the start of `row` for every operand. */
static inline void mlrt_rows_offsets(const mlrt_rows *w, int64_t row, int64_t *offsets) {
    for (int32_t k = 0; k < w->n_operands; ++k) offsets[k] = 0;
    for (int32_t d = w->rank - 2; d >= 0; --d) {
        int64_t i = row % w->shape[d];
        row /= w->shape[d];
        for (int32_t k = 0; k < w->n_operands; ++k) offsets[k] += i * w->strides[k][d];
    }
}

#endif
