/* unary.h -- parameter structs of the unary elementwise kernels (unary.c). */
#ifndef MLRT_KERNELS_UNARY_H
#define MLRT_KERNELS_UNARY_H

#include <stdint.h>

typedef struct mlrt_isinf_params {
    int64_t detect_negative;
    int64_t detect_positive;
} mlrt_isinf_params;

#endif
