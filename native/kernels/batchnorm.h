/* batchnorm.h -- parameters of the BatchNormalization kernel (parsed by cffi). */
#ifndef MLRT_BATCHNORM_PARAMS_H
#define MLRT_BATCHNORM_PARAMS_H
#include <stdint.h>

typedef struct mlrt_batchnorm_params {
    double epsilon;
    double momentum;
    int64_t training;     /* normalise with the batch's statistics and output running ones */
    int64_t per_element;  /* spatial=0 (before opset 9): parameters have one value per (channel, position) */
} mlrt_batchnorm_params;

#endif
