/* spatial.h -- parameter blocks of AffineGrid, Col2Im, MaxUnpool and RoiAlign
 * (spatial.c), parsed by cffi. */
#ifndef MLRT_KERNELS_SPATIAL_H
#define MLRT_KERNELS_SPATIAL_H
#include <stdint.h>

/* AffineGrid: the output's spatial sizes are its shape; theta is (N, nd, nd + 1). */
typedef struct mlrt_affinegrid_params {
    int64_t align_corners;
} mlrt_affinegrid_params;

/* Col2Im: input (N, C * prod(block), prod(n_blocks)) is summed into the image
 * (N, C, image...); block b of column position l lands at
 * l_d * strides[d] - pads_begin[d] + b_d * dilations[d] on axis d. */
typedef struct mlrt_col2im_params {
    int64_t n_spatial;
    int64_t block[6];
    int64_t n_blocks[6];
    int64_t strides[6];
    int64_t dilations[6];
    int64_t pads_begin[6];
} mlrt_col2im_params;

/* MaxUnpool: indices are flat positions in (N, C, inferred...); an element lands at
 * the same coordinates in the output (whose spatial shape may differ). */
typedef struct mlrt_maxunpool_params {
    int64_t n_spatial;
    int64_t inferred[6];
} mlrt_maxunpool_params;

/* RoiAlign's mode */
enum mlrt_roialign_mode {
    MLRT_ROIALIGN_AVG = 0,
    MLRT_ROIALIGN_MAX = 1
};

/* RoiAlign: mode (enum mlrt_roialign_mode); half_pixel 1 shifts roi corners by -0.5 pixel
 * (opset 16 default), 0 keeps them (opset 10, output_half_pixel) and makes every
 * roi at least 1 x 1.  Output height and width are the output's shape. */
typedef struct mlrt_roialign_params {
    int64_t mode;
    int64_t half_pixel;
    int64_t sampling_ratio;
    double spatial_scale;
} mlrt_roialign_params;

#endif
