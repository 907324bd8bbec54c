/* ms_qlinear.h -- parameters of the com.microsoft quantized kernels (ms_qlinear.c, parsed by cffi).
 * QLinearAdd, QLinearMul and QLinearSigmoid take none; QLinearConcat takes mlrt_concat_params. */
#ifndef MLRT_KERNELS_MS_QLINEAR_H
#define MLRT_KERNELS_MS_QLINEAR_H
#include <stdint.h>

/* QLinearLeakyRelu: y = x >= 0 ? x : alpha * x, on dequantized values */
typedef struct mlrt_qlinear_lut_params {
    double alpha;
} mlrt_qlinear_lut_params;

/* QLinearGlobalAveragePool: X is (N, C, spatial...) or, channels_last, (N, spatial..., C) */
typedef struct mlrt_qlinear_pool_params {
    int64_t channels_last;
} mlrt_qlinear_pool_params;

#endif
