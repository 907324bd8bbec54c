/* ms_quant_matmul.h -- parameters of the com.microsoft MatMulNBits kernel (parsed by cffi).
 * MatMulIntegerToFloat and DynamicQuantizeMatMul take none: their operands arrive as views. */
#ifndef MLRT_MS_QUANT_MATMUL_H
#define MLRT_MS_QUANT_MATMUL_H
#include <stdint.h>

/* Y [M, N] = A [M, K] @ dequant(B)^T (+ bias).  B is uint8 [N, k_blocks, blob] holding
 * `bits`-bit codes packed low bits first along K; block b of row n has the scale
 * scales[n * k_blocks + b] and the zero point (codes - zero point) at the same index:
 * zp_kind 0 none (2^(bits-1)), 1 packed uint8 codes ([N, ceil(k_blocks * bits / 8)]),
 * 2 of the scales' type. */
typedef struct mlrt_matmul_nbits_params {
    int64_t K;
    int64_t N;
    int64_t bits;
    int64_t block_size;
    int64_t zp_kind;
} mlrt_matmul_nbits_params;

#endif
