/* misc.h -- parameters of CumProd, BitCast, GlobalLpPool, MaxRoiPool, TensorScatter
 * and SwiGLU (parsed by cffi). */
#ifndef MLRT_MISC_H
#define MLRT_MISC_H
#include <stdint.h>

/* X and Y are contiguous [outer, n, inner] blocks; products run along n. */
typedef struct mlrt_cumprod_params {
    int64_t outer;
    int64_t n;
    int64_t inner;
    int64_t exclusive;
    int64_t reverse;
} mlrt_cumprod_params;

/* X [planes, size] -> Y [planes]: (sum |x|^p)^(1/p) over each plane. */
typedef struct mlrt_global_lp_pool_params {
    int64_t planes;
    int64_t size;
    double p;
} mlrt_global_lp_pool_params;

/* X [n, c, h, w], rois [num_rois, 5] -> Y [num_rois, c, pooled_h, pooled_w]. */
typedef struct mlrt_max_roi_pool_params {
    int64_t pooled_h;
    int64_t pooled_w;
    double spatial_scale;
} mlrt_max_roi_pool_params;

/* past [outer, max_len, inner] (outer's first factor is the batch) -> present of the
 * same shape, with update [outer, seq_len, inner] written at each batch's index. */
typedef struct mlrt_tensor_scatter_params {
    int64_t batch;
    int64_t outer;
    int64_t max_len;
    int64_t seq_len;
    int64_t inner;
    int64_t circular;
} mlrt_tensor_scatter_params;

/* Y = A * sigmoid(alpha * A) * B, elementwise over equal shapes. */
typedef struct mlrt_swiglu_params {
    double alpha;
} mlrt_swiglu_params;

#endif
