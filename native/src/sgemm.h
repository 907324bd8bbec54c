/* sgemm.h -- mlrt's own float32 GEMM (src/sgemm.c): same contract as mlrt_sgemm in
 * gemm.h, with bitwise-identical arithmetic for every element of C. */
#ifndef MLRT_SGEMM_H
#define MLRT_SGEMM_H

#include "internal.h"

int mlrt_sgemm_tiled(const mlrt_context *ctx, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K,
                     float alpha, const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C,
                     int64_t ldc);

/* Which micro-kernel this CPU runs: "avx512", "avx2" or "generic". */
const char *mlrt_sgemm_arch(void);

#endif
