/* sgemm.h -- the general float32 GEMM on mlrt's strip micro-kernels (src/sgemm.c).
 * Same contract as mlrt_sgemm in gemm.h (which calls it when the CPU has the
 * kernels); every element of C gets the same sequence of operations. */
#ifndef MLRT_SGEMM_H
#define MLRT_SGEMM_H

#include "internal.h"

int mlrt_sgemm_tiled(const mlrt_context *ctx, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K,
                     float alpha, const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C,
                     int64_t ldc);

/* The same with B (K x N) packed by mlrt_gemm_pack_b: mlrt_gemm_packed_b_size(K, N) floats */
int mlrt_sgemm_strips_b(const mlrt_context *ctx, bool trans_a, int64_t M, int64_t N, int64_t K, float alpha,
                        const float *A, int64_t lda, const float *packed, float beta, float *C, int64_t ldc);
int64_t mlrt_gemm_packed_b_size(int64_t K, int64_t N);

#endif
