/* activation.h -- parameter structs of the activation kernels (activation.c). */
#ifndef MLRT_KERNELS_ACTIVATION_H
#define MLRT_KERNELS_ACTIVATION_H

#include <stdint.h>

/* Gelu's approximate */
enum mlrt_gelu_approximate {
    MLRT_GELU_NONE = 0,
    MLRT_GELU_TANH = 1
};

/* com.microsoft BiasAdd, BiasGelu, FastGelu, QuickGelu, Gelu: the activation applied to
 * X (+ bias, + skip); the mode of mlrt_activation_params (alpha is QuickGelu's). */
enum mlrt_bias_activation {
    MLRT_BIAS_ACT_IDENTITY = 0,
    MLRT_BIAS_ACT_GELU = 1,
    MLRT_BIAS_ACT_GELU_TANH = 2,
    MLRT_BIAS_ACT_QUICK_GELU = 3
};

/* LeakyRelu, Elu, Selu, Celu, HardSigmoid, ThresholdedRelu, Gelu: the attributes
 * each one uses (unused fields are ignored); mode is Gelu's approximate
 * (enum mlrt_gelu_approximate). */
typedef struct mlrt_activation_params {
    double alpha;
    double beta;
    double gamma;
    int64_t mode;
} mlrt_activation_params;

/* Clip before opset 11 (bounds as attributes); from opset 11 the bounds are inputs
 * 1 and 2 and both flags are 0. */
typedef struct mlrt_clip_params {
    double min;
    double max;
    int64_t has_min;
    int64_t has_max;
} mlrt_clip_params;

#endif
