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

#include "fastmath.h"
#include "internal.h"

int mlrt_sgemm(const mlrt_context *ctx, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
               const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc);
int mlrt_dgemm(const mlrt_context *ctx, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, double alpha,
               const double *A, int64_t lda, const double *B, int64_t ldb, double beta, double *C, int64_t ldc);

/* Float micro-kernels over strips of NR columns (Conv's GEMM).  mlrt_sgemm_strip_width()
 * is NR for the ISA in use (mlrt_cpu_isa: 64 with AVX-512, 16 with AVX2 or NEON), or 0 where it
 * is portable (use mlrt_sgemm then); a column count, not the test for a path (ask
 * mlrt_cpu_isa).  mlrt_sgemm_strips computes, over ceil(n / NR) strips of B,
 *     C[m, j] (+)= sum_k A(m0 + m, k0 + k) * B[(j / NR) * bstride + off[k] + j % NR]
 * for m < M, j < n, reading exactly the n floats of each B row; `accumulate` adds to C,
 * and the epilogue (may be NULL) finishes the result before the store: + bias[m],
 * + Z[m * ldc + j], then an activation.  Rows of A go in groups, each meeting all the
 * strips, so A (the weights, often the operand not in cache) is read once per call.
 * Every element of C is the same sequence of fused multiply-adds wherever it sits, so
 * equal inputs give equal outputs.
 *
 * A is row-major (A(m, k) at p[m * ld + k]) or packed once by mlrt_sgemm_pack_a: rows in
 * panels of MLRT_SGEMM_PANEL (the kernels' rows per pass), each panel k-major -- A(m, k)
 * at p[(m / PANEL * ld + k) * PANEL + m % PANEL], ld = K, rows past M zero -- so the
 * kernels stream it contiguously; m0 is then a multiple of PANEL.  Packed, a strip's last
 * few columns (a 7 x 7 output's 49th) run on column kernels that hold rows in the vector
 * lanes, instead of in masked lanes of a strip (up to 16x the multiply-adds). */
#define MLRT_SGEMM_PANEL 6

typedef struct mlrt_sgemm_a {
    const float *p;
    int64_t ld;
    bool packed;
} mlrt_sgemm_a;

enum mlrt_strip_act {
    MLRT_STRIP_NONE = 0,
    MLRT_STRIP_RELU = 1,       /* 0 > v ? 0 : v (NaN stays NaN) */
    MLRT_STRIP_CLIP = 2,       /* v < lo ? lo : v > hi ? hi : v */
    MLRT_STRIP_HARD_SWISH = 3, /* v * clip(lo * v + hi, 0, 1) (HardSigmoid alpha, beta in lo, hi) */
    MLRT_STRIP_SWISH = 4,      /* v * sigmoid(lo * v) (SiLU at lo = 1) */
    MLRT_STRIP_SIGMOID = 5     /* sigmoid(v) */
};

typedef struct mlrt_strip_epilogue {
    const float *bias; /* per row of C, or NULL */
    const float *z;    /* added like C's layout (ld ldc), or NULL */
    int32_t act;       /* enum mlrt_strip_act */
    float lo, hi;
} mlrt_strip_epilogue;

int64_t mlrt_sgemm_strip_width(void);
void mlrt_sgemm_strips(int64_t M, int64_t kc, const mlrt_sgemm_a *A, int64_t m0, int64_t k0, const float *B,
                       const int64_t *off, int64_t bstride, float *C, int64_t ldc, int64_t n, bool accumulate,
                       const mlrt_strip_epilogue *e);
/* Floats of A (M x K, row-major with leading dimension lda) packed for the strip kernels:
 * ceil(M / PANEL) * PANEL * K; mlrt_sgemm_pack_a writes them to dst. */
static inline int64_t mlrt_sgemm_packed_size(int64_t M, int64_t K) {
    return (M + MLRT_SGEMM_PANEL - 1) / MLRT_SGEMM_PANEL * MLRT_SGEMM_PANEL * K;
}
void mlrt_sgemm_pack_a(const float *A, int64_t M, int64_t K, int64_t lda, float *dst);

/* The epilogue of one value, as every strip kernel computes it (vector code does the
 * same operations in the same order): + the old C, + bias, + z, then the activation. */
static inline float mlrt_strip_finish(float r, float old, float bias, float z, const mlrt_strip_epilogue *e,
                                      bool accumulate) {
    if (accumulate) r = old + r;
    if (e && e->bias) r = r + bias;
    if (e && e->z) r = r + z;
    switch (e ? e->act : MLRT_STRIP_NONE) {
    case MLRT_STRIP_RELU: return 0.0f > r ? 0.0f : r;
    case MLRT_STRIP_CLIP: return r < e->lo ? e->lo : r > e->hi ? e->hi : r;
    case MLRT_STRIP_HARD_SWISH: {
        float h = e->lo * r;
        h = h + e->hi;
        h = h < 0.0f ? 0.0f : h > 1.0f ? 1.0f : h;
        return r * h;
    }
    case MLRT_STRIP_SWISH: return r * mlrt_sigmoid_f32(e->lo * r);
    case MLRT_STRIP_SIGMOID: return mlrt_sigmoid_f32(r);
    default: return r;
    }
}

#ifdef __aarch64__
/* The NEON strip kernel (src/sgemm_neon.c): MLRT_SGEMM_PANEL rows x 16 columns, the
 * signature of gemm.c's kernel table. */
void mlrt_sgemm_uk_neon(int64_t kc, const float *const *a, int64_t ks, const float *b, const int64_t *off, float *c,
                        int64_t ldc, int64_t mr, int64_t nr, bool accumulate, const mlrt_strip_epilogue *e);
/* sum_k a[k] * b[k] on NEON (src/sgemm_neon.c): the matrix-vector product's dot. */
float mlrt_sdot_neon(const float *a, const float *b, int64_t K);
#endif

/* The same finish for a result stored without it (by BLAS, or where the strip kernels'
 * store lacks the activation), in src/epilogue.c: rows [0, rows) of y, cols wide,
 * leading dimension ld, get + bias[r] (bias may be NULL), + z (y's layout; may be NULL),
 * then activation act (enum mlrt_conv_activation of include/mlrt.h, its alpha and beta). */
void mlrt_epilogue_f32(float *y, const float *z, int64_t rows, int64_t cols, int64_t ld, const float *bias,
                       int64_t act, double alpha, double beta);
void mlrt_epilogue_f64(double *y, const double *z, int64_t rows, int64_t cols, int64_t ld, const double *bias,
                       int64_t act, double alpha, double beta);

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
