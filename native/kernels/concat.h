/* concat.h -- parameter blocks of Concat and Split (concat.c). */
#ifndef MLRT_KERNELS_CONCAT_H
#define MLRT_KERNELS_CONCAT_H
#include <stdint.h>

/* The axis is normalised (0 <= axis < rank) by the Python semantics. */
typedef struct mlrt_concat_params {
    int64_t axis;
} mlrt_concat_params;

typedef struct mlrt_split_params {
    int64_t axis;
} mlrt_split_params;

#endif
