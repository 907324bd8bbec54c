/* einsum.h -- parameters of the Einsum kernel (einsum.c; parsed by cffi). */
#ifndef MLRT_EINSUM_H
#define MLRT_EINSUM_H
#include <stdint.h>

/* The equation resolved to labels: the first n_out labels are Y's dims in order
 * (Y is contiguous), the others are summed over.  strides[k * 24 + l] is input k's
 * element stride along label l: the sum of the strides of its dims carrying the
 * label (a diagonal), 0 where input k lacks the label or broadcasts it.  Inputs are
 * contiguous; every term is the product of the inputs' elements. */
typedef struct mlrt_einsum_params {
    int64_t n_inputs;       /* 1..8 */
    int64_t n_labels;       /* 0..24 */
    int64_t n_out;          /* 0..8 */
    int64_t sizes[24];
    int64_t strides[192];   /* [input][label], 8 x 24 */
} mlrt_einsum_params;

#endif
