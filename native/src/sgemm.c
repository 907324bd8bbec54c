/* sgemm.c -- the general float32 GEMM on mlrt's own strip micro-kernels (gemm.c).
 *
 * Row-major C = alpha * op(A) * op(B) + beta * C.  The work is cut into tasks of
 * (block of rows of C) x (strip of NR columns); a task walks K in blocks of KC and
 * calls mlrt_sgemm_strips, reading B's rows in place when B is not transposed and a
 * packed copy of the strip otherwise.  One row (M == 1) or one column (N == 1) is a
 * matrix-vector product instead.
 *
 * Every element of C gets the same sequence of operations wherever it sits and
 * however the tasks fall on threads: rows that are equal in exact arithmetic stay
 * bitwise equal.  (OpenBLAS's edge kernels round differently from its main ones,
 * which a softmax over large logits turns into visibly different probabilities.)
 */
#include <pthread.h>
#include <stdlib.h>

#include "internal.h"
#ifdef MLRT_X86
#include <immintrin.h>
#endif

#include "gemm.h"
#include "sgemm.h"

#define KC 256
#define ROW_BLOCK 96 /* rows of C per task, at most: a multiple of the strip kernels' 6 */

typedef struct operand {
    const float *p;
    int64_t ld;
    bool trans;
    bool strips; /* p holds B in strips (mlrt_gemm_pack_b): strip s at p + s * K * nr */
} operand;

/* -- one row or one column: y[j] = alpha * sum_k a[k] * B(k, j) + beta * y[j] --------- */

#define GEMV_BLOCK 64 /* columns per parallel task */

typedef struct gemv_job {
    const float *a; /* K contiguous */
    operand B;
    int64_t K, incy, n;
    float alpha, beta;
    float *y;
} gemv_job;

static inline void gemv_store(const gemv_job *g, int64_t j, float s) {
    float *y = g->y + j * g->incy;
    *y = g->beta == 0.0f ? g->alpha * s : g->alpha * s + g->beta * *y;
}

#ifdef MLRT_X86
/* Each y[j] is accumulated in one fixed order, whichever branch computes it. */
__attribute__((target("avx2,fma"))) static void gemv_avx2(void *arg, int64_t begin, int64_t end) {
    const gemv_job *g = arg;
    int64_t K = g->K, N = g->n;
    begin *= GEMV_BLOCK, end = end * GEMV_BLOCK < N ? end * GEMV_BLOCK : N; /* blocks -> columns */
    if (g->B.trans) { /* B(k, j) = B[j * ld + k]: a dot product per j, 8 lanes then a fixed reduction */
        for (int64_t j = begin; j < end; ++j) {
            const float *b = g->B.p + j * g->B.ld;
            __m256 c0 = _mm256_setzero_ps(), c1 = c0, c2 = c0, c3 = c0;
            int64_t k = 0;
            for (; k + 32 <= K; k += 32) { /* four chains hide the FMA latency */
                c0 = _mm256_fmadd_ps(_mm256_loadu_ps(g->a + k), _mm256_loadu_ps(b + k), c0);
                c1 = _mm256_fmadd_ps(_mm256_loadu_ps(g->a + k + 8), _mm256_loadu_ps(b + k + 8), c1);
                c2 = _mm256_fmadd_ps(_mm256_loadu_ps(g->a + k + 16), _mm256_loadu_ps(b + k + 16), c2);
                c3 = _mm256_fmadd_ps(_mm256_loadu_ps(g->a + k + 24), _mm256_loadu_ps(b + k + 24), c3);
            }
            for (; k + 8 <= K; k += 8) c0 = _mm256_fmadd_ps(_mm256_loadu_ps(g->a + k), _mm256_loadu_ps(b + k), c0);
            __m256 acc = _mm256_add_ps(_mm256_add_ps(c0, c1), _mm256_add_ps(c2, c3));
            float lane[8];
            _mm256_storeu_ps(lane, acc);
            float s = ((lane[0] + lane[4]) + (lane[1] + lane[5])) + ((lane[2] + lane[6]) + (lane[3] + lane[7]));
            for (; k < K; ++k) s = __builtin_fmaf(g->a[k], b[k], s);
            gemv_store(g, j, s);
        }
        return;
    }
    /* B(k, j) = B[k * ld + j]: 64 columns in eight register accumulators, k outer (every
     * row segment is 256 contiguous bytes); the rest 8 at a time, then lone columns by
     * scalar fused multiply-adds -- the same roundings as a vector lane */
    int64_t j = begin;
    for (; j + 64 <= end; j += 64) {
        __m256 c[8];
        for (int v = 0; v < 8; ++v) c[v] = _mm256_setzero_ps();
        const float *b = g->B.p + j;
        for (int64_t k = 0; k < K; ++k, b += g->B.ld) {
            __m256 x = _mm256_set1_ps(g->a[k]);
            for (int v = 0; v < 8; ++v) c[v] = _mm256_fmadd_ps(x, _mm256_loadu_ps(b + 8 * v), c[v]);
        }
        float lane[64];
        for (int v = 0; v < 8; ++v) _mm256_storeu_ps(lane + 8 * v, c[v]);
        for (int q = 0; q < 64; ++q) gemv_store(g, j + q, lane[q]);
    }
    for (; j + 8 <= end; j += 8) {
        __m256 acc = _mm256_setzero_ps();
        for (int64_t k = 0; k < K; ++k)
            acc = _mm256_fmadd_ps(_mm256_set1_ps(g->a[k]), _mm256_loadu_ps(g->B.p + k * g->B.ld + j), acc);
        float lane[8];
        _mm256_storeu_ps(lane, acc);
        for (int q = 0; q < 8; ++q) gemv_store(g, j + q, lane[q]);
    }
    for (; j < end; ++j) {
        float s = 0.0f;
        for (int64_t k = 0; k < K; ++k) s = __builtin_fmaf(g->a[k], g->B.p[k * g->B.ld + j], s);
        gemv_store(g, j, s);
    }
}
#endif

static int sgemv(const mlrt_context *ctx, const float *a, int64_t inca, const operand *B, int64_t N, int64_t K,
                 float alpha, float beta, float *y, int64_t incy) {
    float *packed = NULL;
    if (inca != 1) { /* gather the strided vector */
        if (!(packed = malloc((size_t)K * sizeof(float)))) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "gemm: out of memory");
        for (int64_t k = 0; k < K; ++k) packed[k] = a[k * inca];
        a = packed;
    }
    gemv_job g = {a, *B, K, incy, N, alpha, beta, y};
#ifdef MLRT_X86
    int64_t blocks = (N + GEMV_BLOCK - 1) / GEMV_BLOCK;
    mlrt_parallel_for(ctx, blocks, (INT64_C(1) << 16) / (K * GEMV_BLOCK + 1) + 1, gemv_avx2, &g);
#else
    /* other architectures (strip kernels exist: NEON), one thread: loops the compiler
     * vectorises, a fused multiply-add per step in k order as the vector lanes do */
    if (B->trans) {
        for (int64_t j = 0; j < N; ++j) {
            const float *b = B->p + j * B->ld;
#ifdef __aarch64__
            float s = mlrt_sdot_neon(a, b, K);
#else
            float s = 0.0f;
            for (int64_t k = 0; k < K; ++k) s = __builtin_fmaf(a[k], b[k], s);
#endif
            gemv_store(&g, j, s);
        }
    } else {
        float acc[GEMV_BLOCK];
        for (int64_t j0 = 0; j0 < N; j0 += GEMV_BLOCK) {
            int64_t n = N - j0 < GEMV_BLOCK ? N - j0 : GEMV_BLOCK;
            for (int64_t q = 0; q < n; ++q) acc[q] = 0.0f;
            for (int64_t k = 0; k < K; ++k) {
                const float *row = B->p + k * B->ld + j0;
                for (int64_t q = 0; q < n; ++q) acc[q] = __builtin_fmaf(a[k], row[q], acc[q]);
            }
            for (int64_t q = 0; q < n; ++q) gemv_store(&g, j0 + q, acc[q]);
        }
    }
    (void)ctx;
#endif
    free(packed);
    return MLRT_OK;
}

/* -- the general case: tasks of rows x strips on the strip micro-kernels ---------------- */

typedef struct strip_job {
    const float *A; /* op(A), row-major M x K with row stride lda, alpha already applied */
    int64_t lda;
    operand B;
    int64_t M, N, K, ldc, nr, n_strips;
    int64_t rows; /* rows of C per task: M in even blocks of at most ROW_BLOCK, multiples of 6 */
    bool accumulate; /* C already holds beta * C */
    float *C;
    int status;
} strip_job;

/* Asks for the first KC rows of task t's strip of B (read in place) to be brought into
 * the caches.  A strip's rows lie a row of B apart: over a wide B (a classifier's
 * thousands of columns) each is a cache miss of its own that the hardware prefetchers
 * do not foresee, and the first pass over the strip waited on them one after another.
 * Asked for while the task before computes, they arrive in its shadow. */
static void prefetch_strip(const strip_job *j, int64_t t) {
    int64_t j0 = (t % j->n_strips) * j->nr;
    int64_t cols = j->N - j0 < j->nr ? j->N - j0 : j->nr, kc = j->K < KC ? j->K : KC;
    for (int64_t k = 0; k < kc; ++k) {
        const float *row = j->B.p + k * j->B.ld + j0;
        for (int64_t c = 0; c < cols; c += 16) __builtin_prefetch(row + c, 0, 2);
    }
}

static void strip_tasks(void *arg, int64_t begin, int64_t end) {
    strip_job *j = arg;
    int64_t nr = j->nr;
    int64_t *off = mlrt_scratch_slot(2, (size_t)KC * sizeof(int64_t));
    bool pack = j->B.trans && !j->B.strips;
    float *packed = pack ? mlrt_scratch_slot(3, (size_t)KC * (size_t)nr * sizeof(float)) : NULL;
    if (!off || (pack && !packed)) {
        j->status = MLRT_ERR_OUT_OF_MEMORY;
        return;
    }
    for (int64_t t = begin; t < end; ++t) {
        if (!j->B.trans && !j->B.strips && t + 1 < end && (t + 1) % j->n_strips != t % j->n_strips)
            prefetch_strip(j, t + 1);
        int64_t i0 = (t / j->n_strips) * j->rows, j0 = (t % j->n_strips) * nr;
        int64_t rows = j->M - i0 < j->rows ? j->M - i0 : j->rows;
        int64_t cols = j->N - j0 < nr ? j->N - j0 : nr;
        for (int64_t p0 = 0; p0 < j->K; p0 += KC) {
            int64_t kc = j->K - p0 < KC ? j->K - p0 : KC;
            const float *b;
            if (j->B.strips) { /* contiguous: K rows of nr floats per strip */
                b = j->B.p + (t % j->n_strips) * j->K * nr + p0 * nr;
                for (int64_t k = 0; k < kc; ++k) off[k] = k * nr;
            } else if (!j->B.trans) {
                b = j->B.p + p0 * j->B.ld + j0;
                for (int64_t k = 0; k < kc; ++k) off[k] = k * j->B.ld;
            } else {
                for (int64_t k = 0; k < kc; ++k)
                    for (int64_t c = 0; c < cols; ++c) packed[k * nr + c] = j->B.p[(j0 + c) * j->B.ld + p0 + k];
                for (int64_t k = 0; k < kc; ++k) off[k] = k * nr;
                b = packed;
            }
            mlrt_sgemm_a a = {j->A, j->lda, false};
            mlrt_sgemm_strips(rows, kc, &a, i0, p0, b, off, 0, j->C + i0 * j->ldc + j0, j->ldc, cols,
                              j->accumulate || p0 > 0, NULL);
        }
    }
}

/* C = alpha * op(A) * B + beta * C with B as an operand (in place, transposed, or in strips) */
static int tiled(const mlrt_context *ctx, bool trans_a, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
                 int64_t lda, operand B, float beta, float *C, int64_t ldc) {
    int64_t nr = mlrt_sgemm_strip_width();
    if (nr == 0) return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "gemm: no float32 micro-kernel for this CPU");
    if (M == 0 || N == 0) return MLRT_OK;
    if (K == 0) {
        for (int64_t i = 0; i < M; ++i)
            for (int64_t j = 0; j < N; ++j) C[i * ldc + j] = beta == 0.0f ? 0.0f : beta * C[i * ldc + j];
        return MLRT_OK;
    }
    if (M == 1 && !B.strips) /* y = a . op(B) */
        return sgemv(ctx, A, trans_a ? lda : 1, &B, N, K, alpha, beta, C, 1);
    if (N == 1 && !B.strips) { /* y = op(A) . b, i.e. y[i] = sum_k b[k] * op(A)(i, k) */
        operand a = {A, lda, !trans_a, false};
        return sgemv(ctx, B.p, B.trans ? 1 : B.ld, &a, M, K, alpha, beta, C, ldc);
    }
    /* op(A) row-major with alpha folded in (a copy only when needed) */
    float *a_copy = NULL;
    const float *a = A;
    int64_t a_ld = lda;
    if (trans_a || alpha != 1.0f) {
        a_copy = malloc((size_t)M * (size_t)K * sizeof(float));
        if (a_copy)
            for (int64_t i = 0; i < M; ++i)
                for (int64_t k = 0; k < K; ++k) a_copy[i * K + k] = alpha * (trans_a ? A[k * lda + i] : A[i * lda + k]);
        a = a_copy, a_ld = K;
    }
    if (a != A && !a_copy) {
        return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "gemm: cannot allocate a %lld x %lld copy of A", (long long)M,
                         (long long)K);
    }
    if (beta != 0.0f && beta != 1.0f)
        for (int64_t i = 0; i < M; ++i)
            for (int64_t j = 0; j < N; ++j) C[i * ldc + j] *= beta;
    /* (128 rows: blocks of 66 and 62, not 96 and 32, which left a thread of two a quarter) */
    int64_t blocks = (M + ROW_BLOCK - 1) / ROW_BLOCK, rows = (M + blocks - 1) / blocks;
    rows = (rows + 5) / 6 * 6;
    strip_job job = {a, a_ld, B, M, N, K, ldc, nr, (N + nr - 1) / nr, rows, beta != 0.0f, C, MLRT_OK};
    int64_t tasks = (M + rows - 1) / rows * job.n_strips;
    int64_t work_per_task = (M * N * K) / (tasks ? tasks : 1);
    mlrt_parallel_for(ctx, tasks, work_per_task >= (INT64_C(1) << 20) ? 1 : (INT64_C(1) << 20) / (work_per_task + 1) + 1,
                      strip_tasks, &job);
    free(a_copy);
    if (job.status != MLRT_OK) return mlrt_fail(job.status, "gemm: cannot allocate packing buffers");
    return MLRT_OK;
}

int mlrt_sgemm_tiled(const mlrt_context *ctx, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K,
                     float alpha, const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C,
                     int64_t ldc) {
    return tiled(ctx, trans_a, M, N, K, alpha, A, lda, (operand){B, ldb, trans_b, false}, beta, C, ldc);
}

int mlrt_sgemm_strips_b(const mlrt_context *ctx, bool trans_a, int64_t M, int64_t N, int64_t K, float alpha,
                        const float *A, int64_t lda, const float *packed, float beta, float *C, int64_t ldc) {
    return tiled(ctx, trans_a, M, N, K, alpha, A, lda, (operand){packed, 0, false, true}, beta, C, ldc);
}

/* -- B packed once in strips (a constant B: a classifier's weights) ------------------------- */

int64_t mlrt_gemm_packed_b_size(int64_t K, int64_t N) {
    int64_t nr = mlrt_sgemm_strip_width();
    if (nr == 0 || K < 0 || N < 0) return 0;
    int64_t strips = (N + nr - 1) / nr;
    if (strips != 0 && K > INT64_MAX / nr / strips) return 0;
    return strips * K * nr;
}

int mlrt_gemm_pack_b(int32_t trans_b, int64_t K, int64_t N, const float *b, int64_t capacity, int64_t *size,
                     float *packed) {
    if (!size) return mlrt_fail(MLRT_ERR_INVALID_ARGUMENT, "gemm_pack_b: no size to write");
    int64_t nr = mlrt_sgemm_strip_width();
    *size = mlrt_gemm_packed_b_size(K, N);
    if (K < 0 || N < 0) return mlrt_fail(MLRT_ERR_INVALID_ARGUMENT, "gemm_pack_b: negative sizes");
    if (*size == 0 || !packed) return MLRT_OK;
    if (capacity < *size || !b)
        return mlrt_fail(MLRT_ERR_INVALID_ARGUMENT, "gemm_pack_b: %lld floats of room for %lld", (long long)capacity,
                         (long long)*size);
    for (int64_t s0 = 0; s0 < N; s0 += nr) { /* strip: K rows of nr columns, zero past N */
        float *dst = packed + s0 * K;
        for (int64_t k = 0; k < K; ++k)
            for (int64_t c = 0; c < nr; ++c)
                dst[k * nr + c] = s0 + c >= N ? 0.0f : trans_b ? b[(s0 + c) * K + k] : b[k * N + s0 + c];
    }
    return MLRT_OK;
}
