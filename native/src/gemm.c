/* gemm.c -- mlrt_sgemm / mlrt_dgemm: OpenBLAS, single-threaded, split by mlrt.
 *
 * OpenBLAS is told once to use one thread; a large product is cut into as many
 * blocks of columns (or rows) of C as the pool has threads, each block one BLAS
 * call, so the session's intra-op pool is the only source of threads.  BLAS ints are
 * 32-bit here: sizes that do not fit fail with a clear error instead of wrapping. */
#include <pthread.h>
#include <stdlib.h>

#include <cblas.h>

#include "gemm.h"

static pthread_once_t blas_once = PTHREAD_ONCE_INIT;

static void blas_init(void) { scipy_openblas_set_num_threads(1); }

typedef struct scratch_buf {
    size_t size;
    void *data;
} scratch_buf;

static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;

static void scratch_free(void *p) {
    scratch_buf *s = p;
    if (s) free(s->data);
    free(s);
}

static void scratch_init(void) { pthread_key_create(&scratch_key, scratch_free); }

void *mlrt_scratch(size_t bytes) {
    pthread_once(&scratch_once, scratch_init);
    scratch_buf *s = pthread_getspecific(scratch_key);
    if (!s) {
        if (!(s = calloc(1, sizeof *s))) return NULL;
        pthread_setspecific(scratch_key, s);
    }
    if (s->size < bytes) {
        void *fresh = aligned_alloc(64, (bytes + 63) / 64 * 64);
        if (!fresh) return NULL;
        free(s->data);
        s->data = fresh;
        s->size = bytes;
    }
    return s->data;
}

int32_t mlrt_ctx_threads(const mlrt_context *ctx) {
    return ctx && ctx->pool ? mlrt_threadpool_size(ctx->pool) : 1;
}

/* Below this many multiply-adds a product runs as one call (threads cost more). */
#define GEMM_PARALLEL_MIN (INT64_C(1) << 18)

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
#define DEFINE_GEMM(T, BLAS, NAME)                                                                           \
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
            BLAS(CblasRowMajor, j->ta ? CblasTrans : CblasNoTrans, j->tb ? CblasTrans : CblasNoTrans,        \
                 (blasint)m, (blasint)n, (blasint)j->K, j->alpha, A, (blasint)j->lda, B, (blasint)j->ldb,    \
                 j->beta, C, (blasint)j->ldc);                                                               \
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

DEFINE_GEMM(float, scipy_cblas_sgemm, sgemm)
DEFINE_GEMM(double, scipy_cblas_dgemm, dgemm)
