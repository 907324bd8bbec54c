/* fill.h -- parameter blocks of the fill family (fill.c). */
#ifndef MLRT_KERNELS_FILL_H
#define MLRT_KERNELS_FILL_H
#include <stdint.h>

/* ConstantOfShape: every element is this bit pattern (of the output's type). */
typedef struct mlrt_constant_of_shape_params {
    int64_t value_bits;
} mlrt_constant_of_shape_params;

/* EyeLike: ones (this bit pattern) on diagonal k, zeros elsewhere. */
typedef struct mlrt_eye_like_params {
    int64_t k;
    int64_t one_bits;
} mlrt_eye_like_params;

/* OneHot: the depth axis of the output (normalised) and its size. */
typedef struct mlrt_one_hot_params {
    int64_t axis;
    int64_t depth;
} mlrt_one_hot_params;

/* Range: float16/bfloat16 in float32 steps (1, numpy's float32 arange) or in double (0). */
typedef struct mlrt_range_params {
    int64_t low_in_float;
} mlrt_range_params;

#endif
