/* sgemm.c -- mlrt's own single-precision GEMM.
 *
 * Row-major C = alpha * op(A) * op(B) + beta * C, BLIS-style: op(B) is packed into
 * panels NR columns wide, op(A) into panels MR rows tall (zero-padded at the
 * edges), and a register-tiled micro-kernel multiplies one panel pair.  The
 * micro-kernel is picked once, at run time, from the CPU: AVX-512 (8x32 tiles),
 * AVX2+FMA (6x16) or portable C (4x8) -- nothing is compiled for the build
 * machine's CPU only.
 *
 * Why our own and not OpenBLAS for float32: every element of C gets exactly the
 * same sequence of operations (one fused multiply-add per k, in k order, blocks
 * of KC combined the same way), wherever it sits in C and however the work is cut
 * across threads.  Rows that are equal in exact arithmetic stay bitwise equal --
 * OpenBLAS's edge kernels round differently from its main ones, which a softmax
 * over large logits turns into visibly different probabilities.
 */
#include <pthread.h>
#include <stdlib.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define MLRT_X86 1
#endif

#include "gemm.h"
#include "sgemm.h"

#define KC 192
#define MC 96 /* a multiple of every MR */

typedef void (*ukernel_fn)(int64_t kc, const float *a, const float *b, float *tile);

typedef struct sgemm_arch {
    const char *name;
    int mr, nr;
    ukernel_fn kernel;
} sgemm_arch;

/* -- micro-kernels: tile[MR][NR] = sum_k a[k][0..MR) (x) b[k][0..NR) ---------------- */

static void ukernel_generic(int64_t kc, const float *a, const float *b, float *tile) {
    float acc[4][8] = {{0}};
    for (int64_t k = 0; k < kc; ++k, a += 4, b += 8)
        for (int r = 0; r < 4; ++r)
            for (int c = 0; c < 8; ++c) acc[r][c] += a[r] * b[c];
    for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 8; ++c) tile[r * 8 + c] = acc[r][c];
}

#ifdef MLRT_X86
__attribute__((target("avx2,fma"))) static void ukernel_avx2(int64_t kc, const float *a, const float *b,
                                                             float *tile) {
    __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
    __m256 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
    for (int64_t k = 0; k < kc; ++k, a += 6, b += 16) {
        __m256 b0 = _mm256_load_ps(b), b1 = _mm256_load_ps(b + 8), x;
        x = _mm256_broadcast_ss(a + 0); c00 = _mm256_fmadd_ps(x, b0, c00); c01 = _mm256_fmadd_ps(x, b1, c01);
        x = _mm256_broadcast_ss(a + 1); c10 = _mm256_fmadd_ps(x, b0, c10); c11 = _mm256_fmadd_ps(x, b1, c11);
        x = _mm256_broadcast_ss(a + 2); c20 = _mm256_fmadd_ps(x, b0, c20); c21 = _mm256_fmadd_ps(x, b1, c21);
        x = _mm256_broadcast_ss(a + 3); c30 = _mm256_fmadd_ps(x, b0, c30); c31 = _mm256_fmadd_ps(x, b1, c31);
        x = _mm256_broadcast_ss(a + 4); c40 = _mm256_fmadd_ps(x, b0, c40); c41 = _mm256_fmadd_ps(x, b1, c41);
        x = _mm256_broadcast_ss(a + 5); c50 = _mm256_fmadd_ps(x, b0, c50); c51 = _mm256_fmadd_ps(x, b1, c51);
    }
    _mm256_storeu_ps(tile + 0, c00); _mm256_storeu_ps(tile + 8, c01);
    _mm256_storeu_ps(tile + 16, c10); _mm256_storeu_ps(tile + 24, c11);
    _mm256_storeu_ps(tile + 32, c20); _mm256_storeu_ps(tile + 40, c21);
    _mm256_storeu_ps(tile + 48, c30); _mm256_storeu_ps(tile + 56, c31);
    _mm256_storeu_ps(tile + 64, c40); _mm256_storeu_ps(tile + 72, c41);
    _mm256_storeu_ps(tile + 80, c50); _mm256_storeu_ps(tile + 88, c51);
}

__attribute__((target("avx512f"))) static void ukernel_avx512(int64_t kc, const float *a, const float *b,
                                                              float *tile) {
    __m512 c[8][2];
    for (int r = 0; r < 8; ++r) c[r][0] = c[r][1] = _mm512_setzero_ps();
    for (int64_t k = 0; k < kc; ++k, a += 8, b += 32) {
        __m512 b0 = _mm512_load_ps(b), b1 = _mm512_load_ps(b + 16);
        for (int r = 0; r < 8; ++r) {
            __m512 x = _mm512_set1_ps(a[r]);
            c[r][0] = _mm512_fmadd_ps(x, b0, c[r][0]);
            c[r][1] = _mm512_fmadd_ps(x, b1, c[r][1]);
        }
    }
    for (int r = 0; r < 8; ++r) {
        _mm512_storeu_ps(tile + r * 32, c[r][0]);
        _mm512_storeu_ps(tile + r * 32 + 16, c[r][1]);
    }
}
#endif

static sgemm_arch chosen;
static pthread_once_t arch_once = PTHREAD_ONCE_INIT;

static void choose_arch(void) {
    chosen = (sgemm_arch){"generic", 4, 8, ukernel_generic};
#ifdef MLRT_X86
    __builtin_cpu_init();
    const char *force = getenv("MLRT_SGEMM_ARCH"); /* for tests: run a slower kernel */
    bool any = force == NULL || force[0] == '\0';
    if ((any || strcmp(force, "avx512") == 0) && __builtin_cpu_supports("avx512f"))
        chosen = (sgemm_arch){"avx512", 8, 32, ukernel_avx512};
    else if ((any || strcmp(force, "avx2") == 0) && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        chosen = (sgemm_arch){"avx2", 6, 16, ukernel_avx2};
#endif
}

const char *mlrt_sgemm_arch(void) {
    pthread_once(&arch_once, choose_arch);
    return chosen.name;
}

/* -- packing ------------------------------------------------------------------------ */

typedef struct operand {
    const float *p;
    int64_t ld;
    bool trans;
} operand;

/* op(A)[i0 .. i0+mc) x [p0 .. p0+kc) into panels of mr rows: panel[k][r]. */
static void pack_a(const operand *A, int64_t i0, int64_t mc, int64_t p0, int64_t kc, int mr, float *out) {
    for (int64_t ip = 0; ip < mc; ip += mr) {
        int64_t rows = mc - ip < mr ? mc - ip : mr;
        for (int64_t k = 0; k < kc; ++k, out += mr) {
            for (int64_t r = 0; r < rows; ++r) {
                int64_t i = i0 + ip + r, kk = p0 + k;
                out[r] = A->trans ? A->p[kk * A->ld + i] : A->p[i * A->ld + kk];
            }
            for (int64_t r = rows; r < mr; ++r) out[r] = 0.0f;
        }
    }
}

/* op(B)[p0 .. p0+kc) x [j0 .. j0+nc) into panels of nr columns: panel[k][c]. */
static void pack_b(const operand *B, int64_t p0, int64_t kc, int64_t j0, int64_t nc, int nr, float *out) {
    for (int64_t jp = 0; jp < nc; jp += nr) {
        int64_t cols = nc - jp < nr ? nc - jp : nr;
        for (int64_t k = 0; k < kc; ++k, out += nr) {
            int64_t kk = p0 + k;
            if (!B->trans) {
                memcpy(out, B->p + kk * B->ld + j0 + jp, (size_t)cols * sizeof(float));
            } else {
                for (int64_t c = 0; c < cols; ++c) out[c] = B->p[(j0 + jp + c) * B->ld + kk];
            }
            for (int64_t c = cols; c < nr; ++c) out[c] = 0.0f;
        }
    }
}

/* C tile update, one formula for every element: first K block C = alpha*t + beta*C
 * (C not read when beta == 0), later blocks C = C + alpha*t. */
static void update(float *C, int64_t ldc, const float *tile, int nr, int64_t rows, int64_t cols, float alpha,
                   float beta, bool first) {
    for (int64_t r = 0; r < rows; ++r) {
        float *c = C + r * ldc;
        const float *t = tile + r * nr;
        if (!first) {
            for (int64_t j = 0; j < cols; ++j) c[j] = c[j] + alpha * t[j];
        } else if (beta == 0.0f) {
            for (int64_t j = 0; j < cols; ++j) c[j] = alpha * t[j];
        } else {
            for (int64_t j = 0; j < cols; ++j) c[j] = alpha * t[j] + beta * c[j];
        }
    }
}

/* The serial algorithm on C[0..M) x [0..N). */
static int sgemm_serial(const operand *A, const operand *B, int64_t M, int64_t N, int64_t K, float alpha, float beta,
                        float *C, int64_t ldc) {
    const sgemm_arch *arch = &chosen;
    int mr = arch->mr, nr = arch->nr;
    int64_t nc_max = (N + nr - 1) / nr * nr;
    if (nc_max > 4096) nc_max = 4096;
    float *bp = aligned_alloc(64, (size_t)KC * (size_t)nc_max * sizeof(float));
    float *ap = aligned_alloc(64, (size_t)KC * MC * sizeof(float));
    float *tile = aligned_alloc(64, (size_t)mr * (size_t)nr * sizeof(float));
    if (!bp || !ap || !tile) {
        free(bp); free(ap); free(tile);
        return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "gemm: cannot allocate packing buffers");
    }
    for (int64_t j0 = 0; j0 < N; j0 += nc_max) {
        int64_t nc = N - j0 < nc_max ? N - j0 : nc_max;
        for (int64_t p0 = 0; p0 < K; p0 += KC) {
            int64_t kc = K - p0 < KC ? K - p0 : KC;
            pack_b(B, p0, kc, j0, nc, nr, bp);
            for (int64_t i0 = 0; i0 < M; i0 += MC) {
                int64_t mc = M - i0 < MC ? M - i0 : MC;
                pack_a(A, i0, mc, p0, kc, mr, ap);
                for (int64_t jp = 0; jp < nc; jp += nr) {
                    int64_t cols = nc - jp < nr ? nc - jp : nr;
                    for (int64_t ip = 0; ip < mc; ip += mr) {
                        int64_t rows = mc - ip < mr ? mc - ip : mr;
                        arch->kernel(kc, ap + ip * kc, bp + jp * kc, tile);
                        update(C + (i0 + ip) * ldc + j0 + jp, ldc, tile, nr, rows, cols, alpha, beta, p0 == 0);
                    }
                }
            }
        }
    }
    free(bp); free(ap); free(tile);
    return MLRT_OK;
}

/* -- M == 1 (a fully connected layer on one row): a vector times a matrix ----------- */

typedef struct gemv_job {
    const float *a; /* K contiguous */
    operand B;
    int64_t K;
    float alpha, beta;
    float *y;
} gemv_job;

/* Each y[j] = sum_k a[k] * B(k, j), accumulated in one fixed order for every j. */
#ifdef MLRT_X86
__attribute__((target("avx2,fma"))) static void gemv_rows_avx2(void *arg, int64_t begin, int64_t end) {
    const gemv_job *g = arg;
    int64_t K = g->K;
    if (g->B.trans) { /* B(k, j) = B[j * ld + k]: a dot product per j, 8 lanes then a fixed reduction */
        for (int64_t j = begin; j < end; ++j) {
            const float *b = g->B.p + j * g->B.ld;
            __m256 acc = _mm256_setzero_ps();
            int64_t k = 0;
            for (; k + 8 <= K; k += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(g->a + k), _mm256_loadu_ps(b + k), acc);
            float lanes[8], s;
            _mm256_storeu_ps(lanes, acc);
            s = ((lanes[0] + lanes[4]) + (lanes[1] + lanes[5])) + ((lanes[2] + lanes[6]) + (lanes[3] + lanes[7]));
            for (; k < K; ++k) s = __builtin_fmaf(g->a[k], b[k], s);
            g->y[j] = g->beta == 0.0f ? g->alpha * s : g->alpha * s + g->beta * g->y[j];
        }
    } else { /* B(k, j) = B[k * ld + j]: 8 columns at a time, k outer */
        int64_t j = begin;
        for (; j + 32 <= end; j += 32) { /* four independent accumulators keep the FMA units busy */
            __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
            for (int64_t k = 0; k < K; ++k) {
                const float *b = g->B.p + k * g->B.ld + j;
                __m256 x = _mm256_set1_ps(g->a[k]);
                a0 = _mm256_fmadd_ps(x, _mm256_loadu_ps(b), a0);
                a1 = _mm256_fmadd_ps(x, _mm256_loadu_ps(b + 8), a1);
                a2 = _mm256_fmadd_ps(x, _mm256_loadu_ps(b + 16), a2);
                a3 = _mm256_fmadd_ps(x, _mm256_loadu_ps(b + 24), a3);
            }
            float lanes[32];
            _mm256_storeu_ps(lanes, a0);
            _mm256_storeu_ps(lanes + 8, a1);
            _mm256_storeu_ps(lanes + 16, a2);
            _mm256_storeu_ps(lanes + 24, a3);
            for (int c = 0; c < 32; ++c)
                g->y[j + c] = g->beta == 0.0f ? g->alpha * lanes[c] : g->alpha * lanes[c] + g->beta * g->y[j + c];
        }
        for (; j + 8 <= end; j += 8) {
            __m256 acc = _mm256_setzero_ps();
            for (int64_t k = 0; k < K; ++k)
                acc = _mm256_fmadd_ps(_mm256_set1_ps(g->a[k]), _mm256_loadu_ps(g->B.p + k * g->B.ld + j), acc);
            float lanes[8];
            _mm256_storeu_ps(lanes, acc);
            for (int c = 0; c < 8; ++c)
                g->y[j + c] = g->beta == 0.0f ? g->alpha * lanes[c] : g->alpha * lanes[c] + g->beta * g->y[j + c];
        }
        for (; j < end; ++j) {
            float s = 0.0f;
            for (int64_t k = 0; k < K; ++k) s = __builtin_fmaf(g->a[k], g->B.p[k * g->B.ld + j], s);
            g->y[j] = g->beta == 0.0f ? g->alpha * s : g->alpha * s + g->beta * g->y[j];
        }
    }
}
#endif

static void gemv_rows_generic(void *arg, int64_t begin, int64_t end) {
    const gemv_job *g = arg;
    for (int64_t j = begin; j < end; ++j) {
        float s = 0.0f;
        for (int64_t k = 0; k < g->K; ++k)
            s += g->a[k] * (g->B.trans ? g->B.p[j * g->B.ld + k] : g->B.p[k * g->B.ld + j]);
        g->y[j] = g->beta == 0.0f ? g->alpha * s : g->alpha * s + g->beta * g->y[j];
    }
}

static int sgemv(const mlrt_context *ctx, const operand *A, const operand *B, int64_t N, int64_t K, float alpha,
                 float beta, float *y) {
    float *packed = NULL;
    const float *a = A->p;
    if (A->trans && A->ld != 1) { /* the row of op(A) is a column of A: gather it */
        if (!(packed = malloc((size_t)K * sizeof(float))))
            return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "gemm: out of memory");
        for (int64_t k = 0; k < K; ++k) packed[k] = A->p[k * A->ld];
        a = packed;
    }
    gemv_job g = {a, *B, K, alpha, beta, y};
    mlrt_range_fn fn = gemv_rows_generic;
#ifdef MLRT_X86
    if (strcmp(chosen.name, "generic") != 0) fn = gemv_rows_avx2;
#endif
    int64_t grain = (INT64_C(1) << 16) / (K + 1) + 8;
    mlrt_parallel_for(ctx, N, grain, fn, &g);
    free(packed);
    return MLRT_OK;
}

typedef struct sgemm_job {
    operand A, B;
    int64_t M, N, K, ldc, block;
    bool split_n;
    float alpha, beta;
    float *C;
    int status;
} sgemm_job;

static void sgemm_blocks(void *arg, int64_t begin, int64_t end) {
    sgemm_job *j = arg;
    for (int64_t b = begin; b < end; ++b) {
        int64_t total = j->split_n ? j->N : j->M, lo = b * j->block;
        int64_t hi = lo + j->block < total ? lo + j->block : total;
        if (lo >= hi) continue;
        operand A = j->A, B = j->B;
        float *C = j->C;
        int64_t m = j->M, n = j->N;
        if (j->split_n) {
            B.p += B.trans ? lo * B.ld : lo;
            C += lo;
            n = hi - lo;
        } else {
            A.p += A.trans ? lo : lo * A.ld;
            C += lo * j->ldc;
            m = hi - lo;
        }
        if (sgemm_serial(&A, &B, m, n, j->K, j->alpha, j->beta, C, j->ldc) != MLRT_OK) j->status = MLRT_ERR_OUT_OF_MEMORY;
    }
}

int mlrt_sgemm_tiled(const mlrt_context *ctx, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K,
                     float alpha, const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C,
                     int64_t ldc) {
    pthread_once(&arch_once, choose_arch);
    if (M == 0 || N == 0) return MLRT_OK;
    if (K == 0) {
        for (int64_t i = 0; i < M; ++i)
            for (int64_t j = 0; j < N; ++j) C[i * ldc + j] = beta == 0.0f ? 0.0f : beta * C[i * ldc + j];
        return MLRT_OK;
    }
    if (M == 1) {
        operand a = {A, lda, trans_a}, b = {B, ldb, trans_b};
        return sgemv(ctx, &a, &b, N, K, alpha, beta, C);
    }
    sgemm_job job = {{A, lda, trans_a}, {B, ldb, trans_b}, M, N, K, ldc, N, true, alpha, beta, C, MLRT_OK};
    int64_t threads = mlrt_ctx_threads(ctx), blocks = 1;
    if (threads > 1 && M * N * K >= (INT64_C(1) << 18)) {
        /* one block of whole tiles per thread along the longer side of C */
        int64_t unit = (N >= M) ? chosen.nr : chosen.mr;
        job.split_n = N >= M;
        int64_t side = job.split_n ? N : M;
        int64_t block = (side + threads - 1) / threads;
        block = (block + unit - 1) / unit * unit;
        if (block < side) {
            job.block = block;
            blocks = (side + block - 1) / block;
        }
    }
    if (blocks == 1) {
        job.split_n = true;
        job.block = N;
        sgemm_blocks(&job, 0, 1);
    } else {
        mlrt_parallel_for(ctx, blocks, 1, sgemm_blocks, &job);
    }
    if (job.status != MLRT_OK) return mlrt_fail(job.status, "gemm: cannot allocate packing buffers");
    return MLRT_OK;
}
