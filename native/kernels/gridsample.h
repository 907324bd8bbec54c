/* gridsample.h -- parameter block of GridSample (gridsample.c), parsed by cffi. */
#ifndef MLRT_KERNELS_GRIDSAMPLE_H
#define MLRT_KERNELS_GRIDSAMPLE_H
#include <stdint.h>

/* mode: 0 linear (bilinear, trilinear, ...), 1 nearest, 2 cubic.
 * padding_mode: 0 zeros, 1 border, 2 reflection.
 * align_corners: 1 maps -1 and 1 to the centres of the corner pixels, 0 to their edges. */
typedef struct mlrt_gridsample_params {
    int64_t mode;
    int64_t padding_mode;
    int64_t align_corners;
} mlrt_gridsample_params;

#endif
