/* gemm.h -- the matrix-multiply core under Gemm, MatMul and Conv (internal, not ABI).
 *
 * Row-major C = alpha * op(A) * op(B) + beta * C with op(X) = X or X^T: float32 on
 * mlrt's own micro-kernels (src/sgemm.c) where the CPU has them, float64 (and float32
 * elsewhere) on OpenBLAS running single-threaded; mlrt splits the work across the session's intra-op pool
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

/* Float micro-kernels over strips of NR columns (Conv's GEMM).  mlrt_sgemm_strip_width()
 * is NR (64 with AVX-512, 16 with AVX2) or 0 when no kernel fits the CPU (use mlrt_sgemm
 * then).  mlrt_sgemm_strip computes
 *     C[m, j] (+)= sum_k A[m * lda + k] * B[off[k] + j]   for m < M, j < nr <= NR
 * reading exactly nr floats of each B row; `accumulate` adds to C, and bias (per row) /
 * act (1 = Relu) finish the result before the store.  `zeros` holds >= kc zero floats.
 * Every element of C is the same sequence of fused multiply-adds wherever it sits, so
 * equal inputs give equal outputs. */
int64_t mlrt_sgemm_strip_width(void);
void mlrt_sgemm_strip(int64_t M, int64_t kc, const float *A, int64_t lda, const float *B, const int64_t *off,
                      float *C, int64_t ldc, int64_t nr, bool accumulate, const float *bias, int act,
                      const float *zeros);

/* Per-thread scratch buffers of at least `bytes` (im2col tiles and the like), kept and
 * reused by the thread until it exits; NULL if one cannot be allocated.  Slots 0..3 are
 * independent (a kernel may hold slot 1 across a parallel loop while its tasks, the
 * calling thread among them, use slot 0).  Valid until the same thread's next call for
 * the same slot. */
void *mlrt_scratch_slot(int slot, size_t bytes);
static inline void *mlrt_scratch(size_t bytes) { return mlrt_scratch_slot(0, bytes); }

/* How many threads a parallel loop on ctx may use (1 without a pool). */
int32_t mlrt_ctx_threads(const mlrt_context *ctx);

#endif
