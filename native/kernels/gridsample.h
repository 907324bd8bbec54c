/* gridsample.h -- parameter block of GridSample (gridsample.c), parsed by cffi. */
#ifndef MLRT_KERNELS_GRIDSAMPLE_H
#define MLRT_KERNELS_GRIDSAMPLE_H
#include <stdint.h>

/* mode (linear is bilinear, trilinear, ...; native/ops/gridsample.py maps the ONNX
 * names onto these) */
enum mlrt_gridsample_mode {
    MLRT_GRIDSAMPLE_LINEAR = 0,
    MLRT_GRIDSAMPLE_NEAREST = 1,
    MLRT_GRIDSAMPLE_CUBIC = 2
};

/* padding_mode */
enum mlrt_gridsample_padding {
    MLRT_GRIDSAMPLE_ZEROS = 0,
    MLRT_GRIDSAMPLE_BORDER = 1,
    MLRT_GRIDSAMPLE_REFLECTION = 2
};

/* mode, padding_mode: the enums above.
 * align_corners: 1 maps -1 and 1 to the centres of the corner pixels, 0 to their edges. */
typedef struct mlrt_gridsample_params {
    int64_t mode;
    int64_t padding_mode;
    int64_t align_corners;
} mlrt_gridsample_params;

#endif
