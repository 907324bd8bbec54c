/* cumsum.h -- parameters of the CumSum kernel (parsed by cffi). */
#ifndef MLRT_CUMSUM_H
#define MLRT_CUMSUM_H
#include <stdint.h>

/* X and Y are contiguous [outer, n, inner] blocks; sums run along n. */
typedef struct mlrt_cumsum_params {
    int64_t outer;
    int64_t n;
    int64_t inner;
    int64_t exclusive;
    int64_t reverse;
} mlrt_cumsum_params;

#endif
