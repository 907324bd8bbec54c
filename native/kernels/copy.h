/* copy.h -- parameter blocks of the copy family (copy.c). */
#ifndef MLRT_KERNELS_COPY_H
#define MLRT_KERNELS_COPY_H
#include <stdint.h>

/* The strided copy: the input descriptor is a view (shape in output order,
 * non-negative element strides) of a buffer of `src_numel` elements. */
typedef struct mlrt_copy_params {
    int64_t src_numel;
} mlrt_copy_params;

/* Slice: per axis, the first input index read and the step between reads (negative
 * walks back); the output's shape says how many.  The input is the whole tensor. */
typedef struct mlrt_slice_params {
    int64_t starts[8];
    int64_t steps[8];
} mlrt_slice_params;

/* Dropout in inference: y = x; the optional mask is filled with this bit pattern
 * (the value "true"/"1" of the mask's element type, little-endian). */
typedef struct mlrt_dropout_params {
    int64_t mask_bits;
} mlrt_dropout_params;

#endif
