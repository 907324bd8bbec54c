/* scatter.h -- parameter blocks of ScatterElements and ScatterND (scatter.c). */
#ifndef MLRT_KERNELS_SCATTER_H
#define MLRT_KERNELS_SCATTER_H
#include <stdint.h>

/* reduction: 0 none, 1 add, 2 mul, 3 max, 4 min.  The axis is normalised. */
typedef struct mlrt_scatter_elements_params {
    int64_t axis;
    int64_t reduction;
} mlrt_scatter_elements_params;

typedef struct mlrt_scatter_nd_params {
    int64_t reduction;
} mlrt_scatter_nd_params;

#endif
