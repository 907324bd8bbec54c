/* gemm.c -- mlrt_sgemm / mlrt_dgemm: OpenBLAS, single-threaded, split by mlrt; and
 * mlrt_sgemm_strip: float micro-kernels (AVX-512, AVX2) over packed strips for Conv.
 *
 * OpenBLAS is told once to use one thread; a large product is cut into as many
 * blocks of columns (or rows) of C as the pool has threads, each block one BLAS
 * call, so the session's intra-op pool is the only source of threads.  BLAS ints are
 * 32-bit here: sizes that do not fit fail with a clear error instead of wrapping.
 * The micro-kernels are chosen at run time by CPU feature (target attributes, no
 * -march flags), so the shipped library runs everywhere. */
#include <immintrin.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "gemm.h"
#include "sgemm.h"

static pthread_once_t blas_once = PTHREAD_ONCE_INIT;

static void blas_init(void) { scipy_openblas_set_num_threads(1); }

#define SCRATCH_SLOTS 4

typedef struct scratch_buf {
    size_t size[SCRATCH_SLOTS];
    void *data[SCRATCH_SLOTS];
} scratch_buf;

static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;

static void scratch_free(void *p) {
    scratch_buf *s = p;
    if (s)
        for (int i = 0; i < SCRATCH_SLOTS; ++i) free(s->data[i]);
    free(s);
}

static void scratch_init(void) { pthread_key_create(&scratch_key, scratch_free); }

void *mlrt_scratch_slot(int slot, size_t bytes) {
    if (slot < 0 || slot >= SCRATCH_SLOTS) return NULL;
    pthread_once(&scratch_once, scratch_init);
    scratch_buf *s = pthread_getspecific(scratch_key);
    if (!s) {
        if (!(s = calloc(1, sizeof *s))) return NULL;
        pthread_setspecific(scratch_key, s);
    }
    if (s->size[slot] < bytes || !s->data[slot]) {
        void *fresh = aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
        if (!fresh) return NULL;
        free(s->data[slot]);
        s->data[slot] = fresh;
        s->size[slot] = bytes;
    }
    return s->data[slot];
}

int32_t mlrt_ctx_threads(const mlrt_context *ctx) {
    return ctx && ctx->pool ? mlrt_threadpool_size(ctx->pool) : 1;
}

/* Below this many multiply-adds (some 20-40 us of work) a product runs as one call:
 * waking the pool costs more than it saves. */
#define GEMM_PARALLEL_MIN (INT64_C(1) << 22)

static int check_sizes(bool ta, bool tb, int64_t M, int64_t N, int64_t K, int64_t lda, int64_t ldb, int64_t ldc,
                       const void *A, const void *B, const void *C) {
    MLRT_CHECK(M >= 0 && N >= 0 && K >= 0, "gemm: negative size (%lld x %lld x %lld)", (long long)M, (long long)N,
               (long long)K);
    MLRT_CHECK(M <= INT32_MAX && N <= INT32_MAX && K <= INT32_MAX && lda <= INT32_MAX && ldb <= INT32_MAX &&
                   ldc <= INT32_MAX,
               "gemm: sizes %lld x %lld x %lld (leading dims %lld, %lld, %lld) exceed the 32-bit BLAS limit",
               (long long)M, (long long)N, (long long)K, (long long)lda, (long long)ldb, (long long)ldc);
    int64_t a_cols = ta ? M : K, b_cols = tb ? K : N;
    bool reads = M > 0 && N > 0 && K > 0; /* A and B are not read otherwise */
    MLRT_CHECK((!reads || (lda >= (a_cols > 1 ? a_cols : 1) && ldb >= (b_cols > 1 ? b_cols : 1))) &&
                   (M == 0 || N == 0 || ldc >= (N > 1 ? N : 1)),
               "gemm: leading dimensions %lld, %lld, %lld too small", (long long)lda, (long long)ldb, (long long)ldc);
    MLRT_CHECK((M == 0 || N == 0 || (C && (K == 0 || (A && B)))), "gemm: missing operand data");
    return MLRT_OK;
}

/* One implementation per element type: T, the BLAS call, the name suffix. */
#define DEFINE_GEMM(T, BLAS, GEMV, NAME)                                                                     \
    typedef struct gemm_job_##NAME {                                                                         \
        bool ta, tb, split_n;                                                                                \
        int64_t M, N, K, lda, ldb, ldc, block;                                                               \
        T alpha, beta;                                                                                       \
        const T *A, *B;                                                                                      \
        T *C;                                                                                                \
    } gemm_job_##NAME;                                                                                       \
                                                                                                             \
    static void gemm_blocks_##NAME(void *arg, int64_t begin, int64_t end) {                                  \
        const gemm_job_##NAME *j = arg;                                                                      \
        for (int64_t b = begin; b < end; ++b) {                                                              \
            int64_t lo = b * j->block, total = j->split_n ? j->N : j->M;                                     \
            int64_t hi = lo + j->block < total ? lo + j->block : total;                                      \
            if (lo >= hi) continue;                                                                          \
            const T *A = j->A, *B = j->B;                                                                    \
            T *C = j->C;                                                                                     \
            int64_t m = j->M, n = j->N;                                                                      \
            if (j->split_n) {                                                                                \
                B += j->tb ? lo * j->ldb : lo;                                                               \
                C += lo;                                                                                     \
                n = hi - lo;                                                                                 \
            } else {                                                                                         \
                A += j->ta ? lo : lo * j->lda;                                                               \
                C += lo * j->ldc;                                                                            \
                m = hi - lo;                                                                                 \
            }                                                                                                \
            blasint K = (blasint)j->K, lda = (blasint)j->lda, ldb = (blasint)j->ldb;                         \
            if (m == 1) { /* one row of C: a matrix-vector product streams B once, unpacked */               \
                if (j->tb)                                                                                   \
                    GEMV(CblasRowMajor, CblasNoTrans, (blasint)n, K, j->alpha, B, ldb, A, j->ta ? lda : 1,   \
                         j->beta, C, 1);                                                                     \
                else                                                                                         \
                    GEMV(CblasRowMajor, CblasTrans, K, (blasint)n, j->alpha, B, ldb, A, j->ta ? lda : 1,     \
                         j->beta, C, 1);                                                                     \
            } else if (n == 1) { /* one column of C */                                                       \
                if (j->ta)                                                                                   \
                    GEMV(CblasRowMajor, CblasTrans, K, (blasint)m, j->alpha, A, lda, B, j->tb ? 1 : ldb,     \
                         j->beta, C, (blasint)j->ldc);                                                       \
                else                                                                                         \
                    GEMV(CblasRowMajor, CblasNoTrans, (blasint)m, K, j->alpha, A, lda, B, j->tb ? 1 : ldb,   \
                         j->beta, C, (blasint)j->ldc);                                                       \
            } else {                                                                                         \
                BLAS(CblasRowMajor, j->ta ? CblasTrans : CblasNoTrans, j->tb ? CblasTrans : CblasNoTrans,    \
                     (blasint)m, (blasint)n, K, j->alpha, A, lda, B, ldb, j->beta, C, (blasint)j->ldc);      \
            }                                                                                                \
        }                                                                                                    \
    }                                                                                                        \
                                                                                                             \
    int mlrt_##NAME(const mlrt_context *ctx, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K,    \
                    T alpha, const T *A, int64_t lda, const T *B, int64_t ldb, T beta, T *C, int64_t ldc) {  \
        int status = check_sizes(trans_a, trans_b, M, N, K, lda, ldb, ldc, A, B, C);                         \
        if (status) return status;                                                                           \
        if (M == 0 || N == 0) return MLRT_OK;                                                                \
        if (K == 0) {                                                                                        \
            for (int64_t i = 0; i < M; ++i)                                                                  \
                for (int64_t k = 0; k < N; ++k) C[i * ldc + k] = beta == 0 ? (T)0 : beta * C[i * ldc + k];  \
            return MLRT_OK;                                                                                  \
        }                                                                                                    \
        pthread_once(&blas_once, blas_init);                                                                 \
        gemm_job_##NAME job = {trans_a, trans_b, true, M, N, K, lda, ldb, ldc, N, alpha, beta, A, B, C};     \
        int64_t threads = mlrt_ctx_threads(ctx), blocks = 1;                                                 \
        if (threads > 1 && M * N * K >= GEMM_PARALLEL_MIN) {                                                 \
            /* cut the longer side of C into one block per thread, multiples of 16 */                      \
            job.split_n = N >= M;                                                                            \
            int64_t side = job.split_n ? N : M;                                                              \
            int64_t block = (side + threads - 1) / threads;                                                  \
            block = (block + 15) / 16 * 16;                                                                  \
            if (block < side) {                                                                              \
                job.block = block;                                                                           \
                blocks = (side + block - 1) / block;                                                         \
            }                                                                                                \
        }                                                                                                    \
        if (blocks == 1) {                                                                                   \
            job.split_n = true;                                                                              \
            job.block = N;                                                                                   \
            gemm_blocks_##NAME(&job, 0, 1);                                                                  \
        } else {                                                                                             \
            mlrt_parallel_for(ctx, blocks, 1, gemm_blocks_##NAME, &job);                                     \
        }                                                                                                    \
        return MLRT_OK;                                                                                      \
    }

DEFINE_GEMM(float, scipy_cblas_sgemm, scipy_cblas_sgemv, sgemm_blas)

/* float32: mlrt's own kernels where the CPU has them (src/sgemm.c), else OpenBLAS */
int mlrt_sgemm(const mlrt_context *ctx, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
               const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
    if (mlrt_sgemm_strip_width() == 0)
        return mlrt_sgemm_blas(ctx, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    int status = check_sizes(trans_a, trans_b, M, N, K, lda, ldb, ldc, A, B, C);
    return status ? status : mlrt_sgemm_tiled(ctx, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}
DEFINE_GEMM(double, scipy_cblas_dgemm, scipy_cblas_dgemv, dgemm)

/* ---- strip micro-kernels (float32) -------------------------------------------------------------
 *
 * C[0:M, 0:nr] (+)= A[0:M, 0:kc] * B, row k of B at B + off[k] (a packed strip, or rows of the
 * input itself for Conv's direct path).  A is read in place (row stride lda), MR rows at a time,
 * the tail through a zero row, so every element of C is the same sequence of fused
 * multiply-adds wherever it sits (equal inputs give equal outputs).  A strip narrower than NR
 * loads under a mask, so nothing past column nr is read.  Bias and activation, when given,
 * finish the values before the (masked) store. */

#define UK_MR 6

/* One kernel per width NV (vectors per row): a strip narrower than NR runs the narrowest
 * kernel that covers it, so small outputs (7 x 7, 14 x 14) do not pay for unused lanes.
 * The accumulators are arrays indexed by constants in fully unrolled loops, which the
 * compiler keeps in registers. */
#define UK512_KERNEL(NV)                                                                             \
    __attribute__((target("avx512f")))                                                               \
    static void uk_avx512_##NV(int64_t kc, const float *const *a, const float *b, const int64_t *off,  \
                               float *c, int64_t ldc, int64_t mr, int64_t nr, bool accumulate,        \
                               const float *bias, int act) {                                          \
        __m512 acc[UK_MR][NV];                                                                         \
        _Pragma("GCC unroll 8") for (int i = 0; i < UK_MR; ++i)                                        \
            _Pragma("GCC unroll 4") for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_setzero_ps();      \
        const float *a0 = a[0], *a1 = a[1], *a2 = a[2], *a3 = a[3], *a4 = a[4], *a5 = a[5];            \
        __mmask16 mask[NV];                                                                            \
        _Pragma("GCC unroll 4") for (int v = 0; v < NV; ++v) {                                         \
            int64_t left = nr - 16 * v;                                                                \
            mask[v] = left >= 16 ? (__mmask16)0xFFFF : left <= 0 ? (__mmask16)0 : (__mmask16)((1u << left) - 1); \
        }                                                                                              \
        bool full = nr >= 16 * NV;                                                                     \
        for (int64_t k = 0; k < kc; ++k) {                                                             \
            const float *bk = b + off[k];                                                              \
            __m512 bv[NV];                                                                             \
            if (full) {                                                                                \
                _Pragma("GCC unroll 4") for (int v = 0; v < NV; ++v) bv[v] = _mm512_loadu_ps(bk + 16 * v); \
            } else {                                                                                   \
                _Pragma("GCC unroll 4") for (int v = 0; v < NV; ++v) bv[v] = _mm512_maskz_loadu_ps(mask[v], bk + 16 * v); \
            }                                                                                          \
            __m512 x = _mm512_set1_ps(a0[k]);                                                          \
            _Pragma("GCC unroll 4") for (int v = 0; v < NV; ++v) acc[0][v] = _mm512_fmadd_ps(x, bv[v], acc[0][v]); \
            x = _mm512_set1_ps(a1[k]);                                                                 \
            _Pragma("GCC unroll 4") for (int v = 0; v < NV; ++v) acc[1][v] = _mm512_fmadd_ps(x, bv[v], acc[1][v]); \
            x = _mm512_set1_ps(a2[k]);                                                                 \
            _Pragma("GCC unroll 4") for (int v = 0; v < NV; ++v) acc[2][v] = _mm512_fmadd_ps(x, bv[v], acc[2][v]); \
            x = _mm512_set1_ps(a3[k]);                                                                 \
            _Pragma("GCC unroll 4") for (int v = 0; v < NV; ++v) acc[3][v] = _mm512_fmadd_ps(x, bv[v], acc[3][v]); \
            x = _mm512_set1_ps(a4[k]);                                                                 \
            _Pragma("GCC unroll 4") for (int v = 0; v < NV; ++v) acc[4][v] = _mm512_fmadd_ps(x, bv[v], acc[4][v]); \
            x = _mm512_set1_ps(a5[k]);                                                                 \
            _Pragma("GCC unroll 4") for (int v = 0; v < NV; ++v) acc[5][v] = _mm512_fmadd_ps(x, bv[v], acc[5][v]); \
        }                                                                                              \
        __m512 zero = _mm512_setzero_ps();                                                             \
        _Pragma("GCC unroll 8") for (int i = 0; i < UK_MR; ++i) {                                      \
            if (i >= mr) break;                                                                        \
            float *ci = c + i * ldc;                                                                   \
            __m512 bb = _mm512_set1_ps(bias ? bias[i] : 0.0f);                                         \
            _Pragma("GCC unroll 4") for (int v = 0; v < NV; ++v) {                                     \
                __m512 r = acc[i][v];                                                                  \
                if (accumulate) r = _mm512_add_ps(_mm512_maskz_loadu_ps(mask[v], ci + 16 * v), r);     \
                if (bias) r = _mm512_add_ps(r, bb);                                                    \
                if (act == 1) r = _mm512_max_ps(zero, r); /* NaN stays NaN (max returns the 2nd operand) */ \
                _mm512_mask_storeu_ps(ci + 16 * v, mask[v], r);                                        \
            }                                                                                          \
        }                                                                                              \
    }
UK512_KERNEL(1)
UK512_KERNEL(2)
UK512_KERNEL(3)
UK512_KERNEL(4)

#define UK256_STEP(K)                                                                              \
    {                                                                                              \
        __m256 x = _mm256_broadcast_ss(a0 + (K));                                                  \
        c00 = _mm256_fmadd_ps(x, b0, c00), c01 = _mm256_fmadd_ps(x, b1, c01);                      \
        x = _mm256_broadcast_ss(a1 + (K));                                                         \
        c10 = _mm256_fmadd_ps(x, b0, c10), c11 = _mm256_fmadd_ps(x, b1, c11);                      \
        x = _mm256_broadcast_ss(a2 + (K));                                                         \
        c20 = _mm256_fmadd_ps(x, b0, c20), c21 = _mm256_fmadd_ps(x, b1, c21);                      \
        x = _mm256_broadcast_ss(a3 + (K));                                                         \
        c30 = _mm256_fmadd_ps(x, b0, c30), c31 = _mm256_fmadd_ps(x, b1, c31);                      \
        x = _mm256_broadcast_ss(a4 + (K));                                                         \
        c40 = _mm256_fmadd_ps(x, b0, c40), c41 = _mm256_fmadd_ps(x, b1, c41);                      \
        x = _mm256_broadcast_ss(a5 + (K));                                                         \
        c50 = _mm256_fmadd_ps(x, b0, c50), c51 = _mm256_fmadd_ps(x, b1, c51);                      \
    }

__attribute__((target("avx2,fma")))
static void uk_6x16_avx2(int64_t kc, const float *const *a, const float *b, const int64_t *off, float *c,
                         int64_t ldc, int64_t mr, int64_t nr, bool accumulate, const float *bias, int act) {
    __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
    __m256 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
    const float *a0 = a[0], *a1 = a[1], *a2 = a[2], *a3 = a[3], *a4 = a[4], *a5 = a[5];
    if (nr >= 16) {
        for (int64_t k = 0; k < kc; ++k) {
            const float *bk = b + off[k];
            __m256 b0 = _mm256_loadu_ps(bk), b1 = _mm256_loadu_ps(bk + 8);
            UK256_STEP(k)
        }
    } else {
        int32_t lanes[16];
        for (int i = 0; i < 16; ++i) lanes[i] = i < nr ? -1 : 0;
        __m256i m0 = _mm256_loadu_si256((const __m256i *)lanes), m1 = _mm256_loadu_si256((const __m256i *)(lanes + 8));
        for (int64_t k = 0; k < kc; ++k) {
            const float *bk = b + off[k];
            __m256 b0 = _mm256_maskload_ps(bk, m0), b1 = _mm256_maskload_ps(bk + 8, m1);
            UK256_STEP(k)
        }
    }
    __m256 rows[UK_MR][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}, {c40, c41}, {c50, c51}};
    float tmp[16];
    for (int64_t i = 0; i < mr; ++i) {
        float *ci = c + i * ldc;
        _mm256_storeu_ps(tmp, rows[i][0]);
        _mm256_storeu_ps(tmp + 8, rows[i][1]);
        float bv = bias ? bias[i] : 0.0f;
        for (int64_t j = 0; j < nr && j < 16; ++j) {
            float r = tmp[j];
            if (accumulate) r = ci[j] + r;
            if (bias) r += bv;
            if (act == 1) r = r > 0 ? r : (r != r ? r : 0.0f);
            ci[j] = r;
        }
    }
}

typedef void (*uk_fn)(int64_t, const float *const *, const float *, const int64_t *, float *, int64_t, int64_t,
                      int64_t, bool, const float *, int);

static uk_fn uk_kernels[4];  /* by strip width: up to NR/4, NR/2, 3NR/4, NR columns */
static int64_t uk_nr;
static pthread_once_t uk_once = PTHREAD_ONCE_INIT;

/* The widest kernel the CPU runs; MLRT_SGEMM_KERNEL=avx2 | blas narrows the choice
 * (to test the AVX2 kernel on an AVX-512 machine, or compare with BLAS). */
static void uk_init(void) {
    const char *want = getenv("MLRT_SGEMM_KERNEL");
    bool blas = want && strcmp(want, "blas") == 0, avx2 = want && strcmp(want, "avx2") == 0;
    __builtin_cpu_init();
    if (!blas && !avx2 && __builtin_cpu_supports("avx512f")) {
        uk_kernels[0] = uk_avx512_1, uk_kernels[1] = uk_avx512_2, uk_kernels[2] = uk_avx512_3;
        uk_kernels[3] = uk_avx512_4, uk_nr = 64;
    } else if (!blas && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        for (int i = 0; i < 4; ++i) uk_kernels[i] = uk_6x16_avx2;
        uk_nr = 16;
    } else {
        uk_nr = 0;
    }
}

int64_t mlrt_sgemm_strip_width(void) {
    pthread_once(&uk_once, uk_init);
    return uk_nr;
}

void mlrt_sgemm_strip(int64_t M, int64_t kc, const float *A, int64_t lda, const float *B, const int64_t *off,
                      float *C, int64_t ldc, int64_t nr, bool accumulate, const float *bias, int act,
                      const float *zeros) {
    const float *rows[UK_MR];
    int64_t quarter = (nr * 4 + uk_nr - 1) / uk_nr; /* 1..4: quarters of NR the strip needs */
    uk_fn kernel = uk_kernels[(quarter < 1 ? 1 : quarter > 4 ? 4 : quarter) - 1];
    for (int64_t m0 = 0; m0 < M; m0 += UK_MR) {
        int64_t mr = M - m0 < UK_MR ? M - m0 : UK_MR;
        for (int64_t i = 0; i < UK_MR; ++i) rows[i] = i < mr ? A + (m0 + i) * lda : zeros;
        kernel(kc, rows, B, off, C + m0 * ldc, ldc, mr, nr, accumulate, bias ? bias + m0 : NULL, act);
    }
}
