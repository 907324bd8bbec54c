/* softmax.h -- parameters of the Softmax, LogSoftmax and Hardmax kernels (parsed by cffi). */
#ifndef MLRT_SOFTMAX_H
#define MLRT_SOFTMAX_H
#include <stdint.h>

/* The input is a contiguous [outer, n, inner] block; each (outer, inner) line of n
 * elements (stride inner) is normalised on its own. */
typedef struct mlrt_softmax_params {
    int64_t outer;
    int64_t n;
    int64_t inner;
} mlrt_softmax_params;

#endif
