/* gemm_params.h -- parameters of the Gemm kernel (parsed by cffi). */
#ifndef MLRT_GEMM_PARAMS_H
#define MLRT_GEMM_PARAMS_H
#include <stdint.h>

typedef struct mlrt_gemm_params {
    int64_t trans_a;
    int64_t trans_b;
    double alpha;
    double beta;
    int64_t b_transposed;  /* a constant float B made over once by the plan, read in place of B: the
                              input holding B^T (K x N, contiguous; transB only), or, 1-D, float32 B
                              packed in strips by mlrt_gemm_pack_b (0: none) */
} mlrt_gemm_params;

/* A constant float32 B (K x N; N x K with trans_b) packed in the strips the GEMM's
 * micro-kernels read, for a plan to make once and pass back as Gemm's b_transposed input
 * (1-D): *size is set to the floats it takes (0 when this CPU has no such kernels: then
 * pass B alone), `packed` written when capacity >= *size. */
int mlrt_gemm_pack_b(int32_t trans_b, int64_t K, int64_t N, const float *b, int64_t capacity, int64_t *size,
                     float *packed);

/* com.microsoft FusedGemm: Gemm's fields, then the activation applied to Y
 * (enum mlrt_conv_activation of include/mlrt.h) and its parameters. */
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
