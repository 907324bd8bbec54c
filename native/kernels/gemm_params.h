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

/* com.microsoft FusedGemm: Gemm's fields, then the activation applied to Y
 * (enum mlrt_conv_activation of conv.h) and its parameters. */
typedef struct mlrt_fused_gemm_params {
    int64_t trans_a;
    int64_t trans_b;
    double alpha;
    double beta;
    int64_t b_transposed;
    int64_t activation;
    double act_alpha;
    double act_beta;
} mlrt_fused_gemm_params;

/* com.microsoft FusedMatMul: Y = alpha * A' B', A' = A or A^T over its last two dims (so B');
 * A and B arrive as views of their stored shapes with the broadcast batch dims. */
typedef struct mlrt_fused_matmul_params {
    double alpha;
    int64_t trans_a;
    int64_t trans_b;
} mlrt_fused_matmul_params;

#endif
