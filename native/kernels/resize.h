/* resize.h -- parameter block of Resize and Upsample (resize.c), parsed by cffi. */
#ifndef MLRT_KERNELS_RESIZE_H
#define MLRT_KERNELS_RESIZE_H
#include <stdint.h>

/* mode (the ONNX attribute strings map onto these in native/ops/_resize.py) */
enum mlrt_resize_mode {
    MLRT_RESIZE_NEAREST = 0,
    MLRT_RESIZE_LINEAR = 1,
    MLRT_RESIZE_CUBIC = 2
};

/* coordinate_transformation_mode */
enum mlrt_resize_coord_mode {
    MLRT_RESIZE_HALF_PIXEL = 0,
    MLRT_RESIZE_HALF_PIXEL_SYMMETRIC = 1,
    MLRT_RESIZE_PYTORCH_HALF_PIXEL = 2,
    MLRT_RESIZE_ALIGN_CORNERS = 3,
    MLRT_RESIZE_ASYMMETRIC = 4,
    MLRT_RESIZE_TF_CROP_AND_RESIZE = 5,
    MLRT_RESIZE_TF_HALF_PIXEL_FOR_NN = 6
};

/* nearest_mode; SIMPLE is the rule before opset 11 (floor when the axis grows, ceil
 * when it shrinks). */
enum mlrt_resize_nearest_mode {
    MLRT_RESIZE_ROUND_PREFER_FLOOR = 0,
    MLRT_RESIZE_ROUND_PREFER_CEIL = 1,
    MLRT_RESIZE_FLOOR = 2,
    MLRT_RESIZE_CEIL = 3,
    MLRT_RESIZE_SIMPLE = 4
};

/* Everything is per axis of the full rank (axes the model did not resize have
 * scale 1 and identity 1).  The output sizes are the output tensor's shape.
 * mode, coord_mode, nearest_mode: the enums above.
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

/* The tap table of axis d (in -> out positions), as resize.c builds it, for the
 * OpenCL provider's kernels (native/opencl/resize.py): one table for both.  Sets
 * *taps (taps per output position); with idx non-NULL also fills idx and w, each of
 * `capacity` >= out * taps elements: source indices (clamped into the input; -1 in
 * tap 0 where tf_crop_and_resize extrapolates) and their weights. */
int mlrt_resize_taps(const mlrt_resize_params *p, int32_t d, int64_t in, int64_t out, int64_t capacity,
                     int64_t *taps, int32_t *idx, float *w);

#endif
