/* scatter.h -- parameter blocks of ScatterElements and ScatterND (scatter.c). */
#ifndef MLRT_KERNELS_SCATTER_H
#define MLRT_KERNELS_SCATTER_H
#include <stdint.h>

/* reduction */
enum mlrt_scatter_reduction {
    MLRT_SCATTER_NONE = 0,
    MLRT_SCATTER_ADD = 1,
    MLRT_SCATTER_MUL = 2,
    MLRT_SCATTER_MAX = 3,
    MLRT_SCATTER_MIN = 4
};

/* reduction: enum mlrt_scatter_reduction.  The axis is normalised. */
typedef struct mlrt_scatter_elements_params {
    int64_t axis;
    int64_t reduction;
} mlrt_scatter_elements_params;

typedef struct mlrt_scatter_nd_params {
    int64_t reduction;
} mlrt_scatter_nd_params;

#endif
