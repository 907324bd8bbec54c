/* reduce.h -- parameters of the Reduce* and ArgMax/ArgMin kernels (parsed by cffi). */
#ifndef MLRT_REDUCE_H
#define MLRT_REDUCE_H
#include <stdint.h>

/* Reduce*: the input arrives as a view whose first n_kept dims are the kept ones
 * (in output order) and whose remaining dims (at least one) are reduced. */
typedef struct mlrt_reduce_params {
    int64_t n_kept;
} mlrt_reduce_params;

/* ArgMax/ArgMin: a contiguous [outer, n, inner] input, the int64 output [outer, inner]. */
typedef struct mlrt_argreduce_params {
    int64_t outer;
    int64_t n;
    int64_t inner;
    int64_t select_last_index;
} mlrt_argreduce_params;

#endif
