/* gemm_params.h -- parameters of the Gemm kernel (parsed by cffi). */
#ifndef MLRT_GEMM_PARAMS_H
#define MLRT_GEMM_PARAMS_H
#include <stdint.h>

typedef struct mlrt_gemm_params {
    int64_t trans_a;
    int64_t trans_b;
    double alpha;
    double beta;
    int64_t b_transposed;  /* transB with a constant float B: the input holding B^T (K x N, contiguous),
                              made once by the plan and read in place of B (0: none) */
} mlrt_gemm_params;

#endif
