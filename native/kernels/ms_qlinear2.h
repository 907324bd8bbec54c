/* ms_qlinear2.h -- parameters of the com.microsoft QGemm, QLinearSoftmax, QLinearAveragePool and
 * NhwcMaxPool kernels (ms_qlinear2.c, parsed by cffi).  QLinearWhere takes none; NhwcMaxPool
 * takes mlrt_pool_params (pool.h). */
#ifndef MLRT_KERNELS_MS_QLINEAR2_H
#define MLRT_KERNELS_MS_QLINEAR2_H
#include <stdint.h>

/* QGemm: y = alpha * (A - a_zp) @ (B - b_zp) + C, requantized; A and B come as (M, K) and (K, N)
 * views (transA / transB already applied as strides), C as a view of (M, N) */
typedef struct mlrt_qgemm_params {
    double alpha;
    int64_t packed_b; /* the input holding B' packed by mlrt_qmatmul_pack_b (qlinear.h; 0: none) */
} mlrt_qgemm_params;

/* QLinearSoftmax: X seen as (outer, D, inner), the softmax running over D */
typedef struct mlrt_qlinear_softmax_params {
    int64_t outer;
    int64_t D;
    int64_t inner;
} mlrt_qlinear_softmax_params;

/* QLinearAveragePool: X (N, C, spatial...) or, channels_last, (N, spatial..., C) */
typedef struct mlrt_qlinear_avgpool_params {
    int64_t n_spatial; /* 1..3 */
    int64_t kernel[3];
    int64_t strides[3];
    int64_t pads_begin[3];
    int64_t count_include_pad;
    int64_t channels_last;
    int64_t global; /* the window is the whole image, no padding: QLinearGlobalAveragePool */
} mlrt_qlinear_avgpool_params;

#endif
