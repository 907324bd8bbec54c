/* lrn.h -- parameters of the LRN kernel (parsed by cffi). */
#ifndef MLRT_LRN_PARAMS_H
#define MLRT_LRN_PARAMS_H
#include <stdint.h>

typedef struct mlrt_lrn_params {
    double alpha;
    double beta;
    double bias;
    int64_t size;
} mlrt_lrn_params;

#endif
