/* linalg.h -- parameters of the Det kernel (parsed by cffi). */
#ifndef MLRT_LINALG_H
#define MLRT_LINALG_H
#include <stdint.h>

/* X is a contiguous [batch, n, n] block, Y [batch]. */
typedef struct mlrt_det_params {
    int64_t batch;
    int64_t n;
} mlrt_det_params;

#endif
