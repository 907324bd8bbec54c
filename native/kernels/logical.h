/* logical.h -- parameter structs of the logical and bitwise kernels (logical.c). */
#ifndef MLRT_KERNELS_LOGICAL_H
#define MLRT_KERNELS_LOGICAL_H

#include <stdint.h>

/* BitShift: left = 1 for direction "LEFT", 0 for "RIGHT". */
typedef struct mlrt_bitshift_params {
    int64_t left;
} mlrt_bitshift_params;

#endif
