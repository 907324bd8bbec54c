/* gather.h -- parameter blocks of Gather, GatherElements and GatherND (gather.c). */
#ifndef MLRT_KERNELS_GATHER_H
#define MLRT_KERNELS_GATHER_H
#include <stdint.h>

/* The axis is normalised (0 <= axis < rank of data) by the Python semantics. */
typedef struct mlrt_gather_params {
    int64_t axis;
} mlrt_gather_params;

typedef struct mlrt_gather_elements_params {
    int64_t axis;
} mlrt_gather_elements_params;

typedef struct mlrt_gather_nd_params {
    int64_t batch_dims;
} mlrt_gather_nd_params;

#endif
