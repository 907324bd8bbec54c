/* pool.h -- parameters of the MaxPool, AveragePool and LpPool kernels (parsed by cffi). */
#ifndef MLRT_POOL_PARAMS_H
#define MLRT_POOL_PARAMS_H
#include <stdint.h>

typedef struct mlrt_pool_params {
    int64_t n_spatial;          /* 1..6 */
    int64_t kernel[6];
    int64_t strides[6];
    int64_t dilations[6];
    int64_t pads_begin[6];
    int64_t pads_end[6];
    int64_t count_include_pad;  /* AveragePool: divide by the window clipped to the padded input */
    int64_t storage_order;      /* MaxPool Indices: 0 row major, 1 column major */
    double p;                   /* LpPool exponent */
} mlrt_pool_params;

#endif
