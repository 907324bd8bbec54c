/* conv.h -- parameters of the Conv and ConvTranspose kernels (parsed by cffi). */
#ifndef MLRT_CONV_PARAMS_H
#define MLRT_CONV_PARAMS_H
#include <stdint.h>

typedef struct mlrt_conv_params {
    int64_t group;
    int64_t n_spatial;        /* spatial dimensions, 1..6 */
    int64_t kernel[6];
    int64_t strides[6];
    int64_t dilations[6];
    int64_t pads_begin[6];
    int64_t pads_end[6];
    int64_t activation;       /* FusedConv: 0 none, 1 Relu, 2 LeakyRelu, 3 Clip, 4 Sigmoid, 5 Tanh, 6 HardSigmoid */
    double alpha;             /* activation parameters: LeakyRelu alpha, Clip min / max, HardSigmoid alpha / beta */
    double beta;
} mlrt_conv_params;

#endif
