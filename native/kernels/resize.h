/* resize.h -- parameter block of Resize and Upsample (resize.c), parsed by cffi. */
#ifndef MLRT_KERNELS_RESIZE_H
#define MLRT_KERNELS_RESIZE_H
#include <stdint.h>

/* Everything is per axis of the full rank (axes the model did not resize have
 * scale 1 and identity 1).  The output sizes are the output tensor's shape.
 * mode: 0 nearest, 1 linear, 2 cubic.
 * coord_mode: 0 half_pixel, 1 half_pixel_symmetric, 2 pytorch_half_pixel,
 *   3 align_corners, 4 asymmetric, 5 tf_crop_and_resize, 6 tf_half_pixel_for_nn.
 * nearest_mode: 0 round_prefer_floor, 1 round_prefer_ceil, 2 floor, 3 ceil,
 *   4 the rule before opset 11 (floor when the axis grows, ceil when it shrinks).
 * identity[d] = 1: axis d is copied as is (scale ~1, same size, whole roi).
 * extrapolation_bits: extrapolation_value as one element of the tensor's type. */
typedef struct mlrt_resize_params {
    int64_t mode;
    int64_t coord_mode;
    int64_t nearest_mode;
    int64_t exclude_outside;
    int64_t antialias;
    int64_t identity[8];
    int64_t extrapolation_bits;
    double cubic_coeff_a;
    double extrapolation_value;
    double scales[8];
    double roi_start[8];
    double roi_end[8];
} mlrt_resize_params;

#endif
