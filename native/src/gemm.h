/* gemm.h -- the matrix-multiply core under Gemm, MatMul and Conv (internal, not ABI).
 *
 * Row-major C = alpha * op(A) * op(B) + beta * C with op(X) = X or X^T, over OpenBLAS
 * running single-threaded; mlrt splits the work across the session's intra-op pool
 * itself (blocks of rows or columns of C), so intra_op_num_threads governs all of it.
 * A NULL ctx (or a call from inside a parallel loop) runs on the calling thread.
 * As in BLAS, beta == 0 means C is not read.  Returns MLRT_OK or an error status. */
#ifndef MLRT_GEMM_H
#define MLRT_GEMM_H

#include "internal.h"

int mlrt_sgemm(const mlrt_context *ctx, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
               const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc);
int mlrt_dgemm(const mlrt_context *ctx, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, double alpha,
               const double *A, int64_t lda, const double *B, int64_t ldb, double beta, double *C, int64_t ldc);

/* A per-thread scratch buffer of at least `bytes` (im2col tiles and the like), kept
 * and reused by the thread until it exits; NULL if it cannot be allocated.  Valid
 * until the same thread's next call. */
void *mlrt_scratch(size_t bytes);

/* How many threads a parallel loop on ctx may use (1 without a pool). */
int32_t mlrt_ctx_threads(const mlrt_context *ctx);

#endif
