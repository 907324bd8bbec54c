/* gemm.c -- mlrt_sgemm / mlrt_dgemm: OpenBLAS, single-threaded, split by mlrt; and
 * mlrt_sgemm_strips: float micro-kernels (AVX-512, AVX2; NEON in src/sgemm_neon.c) over strips of B.
 *
 * OpenBLAS is told once to use one thread; a large product is cut into as many
 * blocks of columns (or rows) of C as the pool has threads, each block one BLAS
 * call, so the session's intra-op pool is the only source of threads.  BLAS ints are
 * 32-bit here: sizes that do not fit fail with a clear error instead of wrapping.
 * The micro-kernels are chosen at run time by CPU feature (target attributes, no
 * -march flags), so the shipped library runs everywhere. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "internal.h"
#ifdef MLRT_X86
#include <immintrin.h>
#endif

#include "fastmath.h"
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
        for (int i = 0; i < SCRATCH_SLOTS; ++i) mlrt_aligned_free(s->data[i]);
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
        void *fresh = mlrt_aligned_alloc(64, bytes + 64);
        if (!fresh) return NULL;
        mlrt_aligned_free(s->data[slot]);
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
    if (mlrt_cpu_isa() == MLRT_ISA_PORTABLE) {
        mlrt_note_path("sgemm/blas");
        return mlrt_sgemm_blas(ctx, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    }
    mlrt_note_path(MLRT_PATH("sgemm"));
    int status = check_sizes(trans_a, trans_b, M, N, K, lda, ldb, ldc, A, B, C);
    return status ? status : mlrt_sgemm_tiled(ctx, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}
DEFINE_GEMM(double, scipy_cblas_dgemm, scipy_cblas_dgemv, dgemm)

/* ---- strip micro-kernels (float32) -------------------------------------------------------------
 *
 * C[0:M, 0:nr] (+)= A[0:M, 0:kc] * B, row k of B at B + off[k] (a packed strip, or rows of the
 * input itself for Conv's direct path).  A is read in place, MR rows at a time: row-major, or
 * packed once by mlrt_sgemm_pack_a in panels of MR rows (one k step is then MR floats, one
 * contiguous stream).  A pass over fewer than MR rows repeats row 0 (packed: reads the
 * panel's zero rows) and stores only its rows, so every element of C is the same sequence
 * of fused multiply-adds wherever it sits (equal inputs give equal outputs).  A strip
 * narrower than NR loads under a mask, so nothing past column nr is read.  The epilogue
 * (bias, Z, activation) finishes the values before the (masked) store, in the same order
 * in every kernel (scalar code where a kernel stores lane by lane). */

#define UK_MR MLRT_SGEMM_PANEL /* rows per pass, 6 */
/* How many k steps ahead the kernels prefetch A: packed weights stream from memory in a
 * model (the column's other operand, X, was just written and is in cache).  A call's run
 * of a panel covers kc of its K steps; once it ends, the kernel prefetches the start of
 * the run it reads next, a[UK_MR] (the next panel's, at the same k), not the rest of this
 * panel, which a later call reads: in ResNet-50, whose 1 x 1 convs over 512 channels and
 * more run in blocks of 256 steps, those convs at 7 x 7 ran 11-33% faster in the model. */
#define UK_PREFETCH 64

#ifdef MLRT_X86 /* the vector kernels, to the end of uk_6x16_avx2 */
/* mlrt_sigmoid_f32 (fastmath.h) a vector at a time, in the strip kernels' stores (while the
 * tile is in registers, not a second pass over Y): e = exp(-|u|) by the same polynomial,
 * 1 / (1 + e) for u >= 0, e / (1 + e) below; NaN stays. */
__attribute__((target("avx512f"))) static inline __m512 uk512_sigmoid(__m512 u) { return mlrt_sigmoid_avx512(u); }

__attribute__((target("avx2,fma"))) static inline __m256 uk256_sigmoid(__m256 u) {
    const __m256 lowest = _mm256_set1_ps(-87.33654f), shift = _mm256_set1_ps(12582912.0f);
    __m256 x = _mm256_or_ps(u, _mm256_set1_ps(-0.0f));
    __m256 under = _mm256_cmp_ps(x, lowest, _CMP_LT_OQ);
    __m256 xc = _mm256_max_ps(lowest, x);
    __m256 t = _mm256_fmadd_ps(xc, _mm256_set1_ps(1.44269504088896341f), shift);
    __m256 k = _mm256_sub_ps(t, shift);
    __m256 r = _mm256_fnmadd_ps(k, _mm256_set1_ps(0.693359375f), xc);
    r = _mm256_fnmadd_ps(k, _mm256_set1_ps(-2.12194440e-4f), r);
    __m256 p = _mm256_fmadd_ps(_mm256_set1_ps(1.9875691500e-4f), r, _mm256_set1_ps(1.3981999507e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
    p = _mm256_fmadd_ps(_mm256_mul_ps(p, r), r, _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
    __m256i bits = _mm256_sub_epi32(_mm256_castps_si256(t), _mm256_set1_epi32(0x4B400000 - 127));
    __m256 e = _mm256_mul_ps(p, _mm256_castsi256_ps(_mm256_slli_epi32(bits, 23)));
    e = _mm256_blendv_ps(e, _mm256_setzero_ps(), under);
    __m256 s = _mm256_div_ps(_mm256_set1_ps(1.0f), _mm256_add_ps(_mm256_set1_ps(1.0f), e));
    __m256 neg = _mm256_cmp_ps(u, _mm256_setzero_ps(), _CMP_NGE_UQ);
    return _mm256_blendv_ps(s, _mm256_mul_ps(e, s), neg);
}

__attribute__((target("avx512f"))) static inline __m512 uk512_act(__m512 r, int32_t act, __m512 lo, __m512 hi) {
    switch (act) {
    case MLRT_STRIP_RELU: return _mm512_max_ps(_mm512_setzero_ps(), r); /* (0 > r ? 0 : r): NaN stays */
    case MLRT_STRIP_CLIP: {
        __mmask16 lt = _mm512_cmp_ps_mask(r, lo, _CMP_LT_OQ), gt = _mm512_cmp_ps_mask(r, hi, _CMP_GT_OQ);
        return _mm512_mask_blend_ps(lt, _mm512_mask_blend_ps(gt, r, hi), lo);
    }
    case MLRT_STRIP_HARD_SWISH: {
        __m512 h = _mm512_add_ps(_mm512_mul_ps(lo, r), hi), zero = _mm512_setzero_ps(), one = _mm512_set1_ps(1.0f);
        __mmask16 lt = _mm512_cmp_ps_mask(h, zero, _CMP_LT_OQ), gt = _mm512_cmp_ps_mask(h, one, _CMP_GT_OQ);
        return _mm512_mul_ps(r, _mm512_mask_blend_ps(lt, _mm512_mask_blend_ps(gt, h, one), zero));
    }
    case MLRT_STRIP_SWISH: return _mm512_mul_ps(r, uk512_sigmoid(_mm512_mul_ps(lo, r)));
    case MLRT_STRIP_SIGMOID: return uk512_sigmoid(r);
    default: return r;
    }
}

/* The store of a kernel's rows: accumulate, bias, Z, activation ACT (a constant). */
#define UK512_STORE(NV, ACT)                                                                         \
    _Pragma("GCC unroll 8") for (int i = 0; i < UK_MR; ++i) {                                          \
        if (i >= mr) break;                                                                            \
        float *ci = c + i * ldc;                                                                       \
        const float *zi = z ? z + i * ldc : NULL;                                                      \
        __m512 bb = _mm512_set1_ps(bias ? bias[i] : 0.0f);                                             \
        _Pragma("GCC unroll 4") for (int v = 0; v < NV; ++v) {                                         \
            __m512 r = acc[i][v];                                                                      \
            if (accumulate) r = _mm512_add_ps(_mm512_maskz_loadu_ps(mask[v], ci + 16 * v), r);         \
            if (bias) r = _mm512_add_ps(r, bb);                                                        \
            if (zi) r = _mm512_add_ps(r, _mm512_maskz_loadu_ps(mask[v], zi + 16 * v));                 \
            _mm512_mask_storeu_ps(ci + 16 * v, mask[v], uk512_act(r, ACT, lo, hi));                    \
        }                                                                                              \
    }

/* One k step of the AVX-512 kernels: B's row k (LOAD, a vector v of it at bk), then each
 * of the MR rows of A broadcast against it. */
#define UK512_STEP(NV, LOAD)                                                                         \
    {                                                                                                  \
        _mm_prefetch((const char *)(pf + ka), _MM_HINT_T0);                                          \
        const float *bk = b + off[k];                                                                  \
        __m512 bv[NV];                                                                                 \
        _Pragma("GCC unroll 4") for (int v = 0; v < NV; ++v) bv[v] = LOAD;                              \
        __m512 x = _mm512_set1_ps(a0[ka]);                                                             \
        _Pragma("GCC unroll 4") for (int v = 0; v < NV; ++v) acc[0][v] = _mm512_fmadd_ps(x, bv[v], acc[0][v]); \
        x = _mm512_set1_ps(a1[ka]);                                                                    \
        _Pragma("GCC unroll 4") for (int v = 0; v < NV; ++v) acc[1][v] = _mm512_fmadd_ps(x, bv[v], acc[1][v]); \
        x = _mm512_set1_ps(a2[ka]);                                                                    \
        _Pragma("GCC unroll 4") for (int v = 0; v < NV; ++v) acc[2][v] = _mm512_fmadd_ps(x, bv[v], acc[2][v]); \
        x = _mm512_set1_ps(a3[ka]);                                                                    \
        _Pragma("GCC unroll 4") for (int v = 0; v < NV; ++v) acc[3][v] = _mm512_fmadd_ps(x, bv[v], acc[3][v]); \
        x = _mm512_set1_ps(a4[ka]);                                                                    \
        _Pragma("GCC unroll 4") for (int v = 0; v < NV; ++v) acc[4][v] = _mm512_fmadd_ps(x, bv[v], acc[4][v]); \
        x = _mm512_set1_ps(a5[ka]);                                                                    \
        _Pragma("GCC unroll 4") for (int v = 0; v < NV; ++v) acc[5][v] = _mm512_fmadd_ps(x, bv[v], acc[5][v]); \
    }

/* One kernel per width NV (vectors per row): a strip narrower than NR runs the narrowest
 * kernel that covers it, so small outputs (7 x 7, 14 x 14) do not pay for unused lanes.
 * The accumulators are arrays indexed by constants in fully unrolled loops, which the
 * compiler keeps in registers. */
#define UK512_KERNEL(NV)                                                                             \
    __attribute__((target("avx512f")))                                                               \
    static void uk_avx512_##NV(int64_t kc, const float *const *a, int64_t ks, const float *b,          \
                               const int64_t *off, float *c, int64_t ldc, int64_t mr, int64_t nr,     \
                               bool accumulate, const mlrt_strip_epilogue *e) {                       \
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
        if (e && e->z) /* Z's lines for the store (a residual written long before), while the FMAs run */ \
            for (int64_t i = 0; i < mr; ++i)                                                           \
                _Pragma("GCC unroll 4") for (int v = 0; v < NV; ++v) _mm_prefetch((const char *)(e->z + i * ldc + 16 * v), _MM_HINT_T0); \
        /* the k loop twice, B's loads whole or masked, each unrolled 4 steps: a rolled loop with  \
         * the choice inside ran some 8% below the unrolled one (a core's FMA throughput in L2) */ \
        /* each loop twice more: prefetching UK_PREFETCH steps ahead in A's run, then, where the    \
         * run ends, the start of the next one (a[UK_MR]) */                                       \
        int64_t k = 0, ka = 0, k1 = kc > UK_PREFETCH ? kc - UK_PREFETCH : 0;                       \
        const float *pf = a0 + UK_PREFETCH * ks;                                                   \
        if (full) {                                                                                \
            _Pragma("GCC unroll 4") for (; k < k1; ++k, ka += ks)                                  \
                UK512_STEP(NV, _mm512_loadu_ps(bk + 16 * v))                                       \
            pf = a[UK_MR] - ka;                                                                    \
            _Pragma("GCC unroll 4") for (; k < kc; ++k, ka += ks)                                  \
                UK512_STEP(NV, _mm512_loadu_ps(bk + 16 * v))                                       \
        } else {                                                                                   \
            _Pragma("GCC unroll 4") for (; k < k1; ++k, ka += ks)                                  \
                UK512_STEP(NV, _mm512_maskz_loadu_ps(mask[v], bk + 16 * v))                        \
            pf = a[UK_MR] - ka;                                                                    \
            _Pragma("GCC unroll 4") for (; k < kc; ++k, ka += ks)                                  \
                UK512_STEP(NV, _mm512_maskz_loadu_ps(mask[v], bk + 16 * v))                        \
        }                                                                                          \
        const float *bias = e ? e->bias : NULL, *z = e ? e->z : NULL;                                   \
        __m512 lo = _mm512_set1_ps(e ? e->lo : 0.0f), hi = _mm512_set1_ps(e ? e->hi : 0.0f);           \
        switch (e ? e->act : MLRT_STRIP_NONE) { /* one store loop per activation */                    \
        case MLRT_STRIP_RELU: UK512_STORE(NV, MLRT_STRIP_RELU) break;                                  \
        case MLRT_STRIP_CLIP: UK512_STORE(NV, MLRT_STRIP_CLIP) break;                                  \
        case MLRT_STRIP_HARD_SWISH: UK512_STORE(NV, MLRT_STRIP_HARD_SWISH) break;                      \
        case MLRT_STRIP_SWISH: UK512_STORE(NV, MLRT_STRIP_SWISH) break;                                \
        case MLRT_STRIP_SIGMOID: UK512_STORE(NV, MLRT_STRIP_SIGMOID) break;                            \
        default: UK512_STORE(NV, MLRT_STRIP_NONE)                                                      \
        }                                                                                              \
    }
UK512_KERNEL(1)
UK512_KERNEL(2)
UK512_KERNEL(3)
UK512_KERNEL(4)

/* Packed A only: NC columns of C with the rows in the lanes, NP panels of MR rows at a time
 * (6 of 8 lanes) -- a panel's values of one k are loaded as they lie and B's elements
 * broadcast, so a strip's last few columns cost about a twelfth of a masked vector each.
 * The same fused multiply-adds in the same order as the strip kernels, and the same
 * epilogue (lane by lane).  AVX2 code: it serves both kernel sets. */
#define UKCOL_KERNEL(NP, NC)                                                                         \
    __attribute__((target("avx2,fma")))                                                              \
    static void uk_col_##NP##x##NC(int64_t kc, const float *a, int64_t pstride, const float *b,        \
                                   const int64_t *off, float *c, int64_t ldc, int64_t rows,           \
                                   bool accumulate, const mlrt_strip_epilogue *e) {                   \
        const __m256i lanes = _mm256_setr_epi32(-1, -1, -1, -1, -1, -1, 0, 0);                        \
        __m256 acc[NP][NC];                                                                            \
        _Pragma("GCC unroll 4") for (int v = 0; v < NP; ++v)                                           \
            _Pragma("GCC unroll 2") for (int q = 0; q < NC; ++q) acc[v][q] = _mm256_setzero_ps();      \
        for (int64_t k = 0; k < kc; ++k) {                                                             \
            const float *bk = b + off[k];                                                              \
            __m256 x[NC];                                                                              \
            _Pragma("GCC unroll 2") for (int q = 0; q < NC; ++q) x[q] = _mm256_broadcast_ss(bk + q);   \
            _Pragma("GCC unroll 4") for (int v = 0; v < NP; ++v) {                                     \
                __m256 av = _mm256_maskload_ps(a + v * pstride + k * UK_MR, lanes);                     \
                _Pragma("GCC unroll 2") for (int q = 0; q < NC; ++q)                                   \
                    acc[v][q] = _mm256_fmadd_ps(av, x[q], acc[v][q]);                                  \
            }                                                                                          \
        }                                                                                              \
        mlrt_strip_epilogue fin = e ? *e : (mlrt_strip_epilogue){0}; /* a copy: the stores cannot touch it */ \
        float lane[8];                                                                                 \
        _Pragma("GCC unroll 4") for (int v = 0; v < NP; ++v)                                           \
            _Pragma("GCC unroll 2") for (int q = 0; q < NC; ++q) {                                     \
                _mm256_storeu_ps(lane, acc[v][q]);                                                     \
                for (int64_t i = 0; i < UK_MR && v * UK_MR + i < rows; ++i) {                          \
                    int64_t r = v * UK_MR + i;                                                         \
                    float *cr = c + r * ldc + q;                                                       \
                    *cr = mlrt_strip_finish(lane[i], accumulate ? *cr : 0.0f, fin.bias ? fin.bias[r] : 0.0f, \
                                       fin.z ? fin.z[r * ldc + q] : 0.0f, &fin, accumulate);           \
                }                                                                                      \
            }                                                                                          \
    }
UKCOL_KERNEL(1, 1)
UKCOL_KERNEL(2, 1)
UKCOL_KERNEL(3, 1)
UKCOL_KERNEL(4, 1)
UKCOL_KERNEL(1, 2)
UKCOL_KERNEL(2, 2)
UKCOL_KERNEL(3, 2)
UKCOL_KERNEL(4, 2)

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

__attribute__((target("avx2,fma"))) static inline __m256 uk256_act(__m256 r, int32_t act, __m256 lo, __m256 hi) {
    switch (act) {
    case MLRT_STRIP_RELU: return _mm256_max_ps(_mm256_setzero_ps(), r); /* (0 > r ? 0 : r): NaN stays */
    case MLRT_STRIP_CLIP: {
        __m256 lt = _mm256_cmp_ps(r, lo, _CMP_LT_OQ), gt = _mm256_cmp_ps(r, hi, _CMP_GT_OQ);
        return _mm256_blendv_ps(_mm256_blendv_ps(r, hi, gt), lo, lt);
    }
    case MLRT_STRIP_HARD_SWISH: {
        __m256 h = _mm256_add_ps(_mm256_mul_ps(lo, r), hi), zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1.0f);
        __m256 lt = _mm256_cmp_ps(h, zero, _CMP_LT_OQ), gt = _mm256_cmp_ps(h, one, _CMP_GT_OQ);
        return _mm256_mul_ps(r, _mm256_blendv_ps(_mm256_blendv_ps(h, one, gt), zero, lt));
    }
    case MLRT_STRIP_SWISH: return _mm256_mul_ps(r, uk256_sigmoid(_mm256_mul_ps(lo, r)));
    case MLRT_STRIP_SIGMOID: return uk256_sigmoid(r);
    default: return r;
    }
}

__attribute__((target("avx2,fma")))
static void uk_6x16_avx2(int64_t kc, const float *const *a, int64_t ks, const float *b, const int64_t *off, float *c,
                         int64_t ldc, int64_t mr, int64_t nr, bool accumulate, const mlrt_strip_epilogue *e) {
    __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
    __m256 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
    const float *a0 = a[0], *a1 = a[1], *a2 = a[2], *a3 = a[3], *a4 = a[4], *a5 = a[5];
    if (nr >= 16) {
        /* prefetching UK_PREFETCH steps ahead in A's run, then the next run's start (a[UK_MR]) */
        const float *pf = a0 + UK_PREFETCH * ks;
        for (int64_t k = 0, ka = 0, k1 = kc > UK_PREFETCH ? kc - UK_PREFETCH : 0; k < kc; ++k, ka += ks) {
            const float *bk = b + off[k];
            if (k == k1) pf = a[UK_MR] - ka;
            _mm_prefetch((const char *)(pf + ka), _MM_HINT_T0);
            __m256 b0 = _mm256_loadu_ps(bk), b1 = _mm256_loadu_ps(bk + 8);
            UK256_STEP(ka)
        }
    } else {
        int32_t lanes[16];
        for (int i = 0; i < 16; ++i) lanes[i] = i < nr ? -1 : 0;
        __m256i m0 = _mm256_loadu_si256((const __m256i *)lanes), m1 = _mm256_loadu_si256((const __m256i *)(lanes + 8));
        for (int64_t k = 0, ka = 0; k < kc; ++k, ka += ks) {
            const float *bk = b + off[k];
            __m256 b0 = _mm256_maskload_ps(bk, m0), b1 = _mm256_maskload_ps(bk + 8, m1);
            UK256_STEP(ka)
        }
    }
    __m256 rows[UK_MR][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}, {c40, c41}, {c50, c51}};
    mlrt_strip_epilogue fin = e ? *e : (mlrt_strip_epilogue){0}; /* a copy: the stores cannot touch it */
    const __m256 lo = _mm256_set1_ps(fin.lo), hi = _mm256_set1_ps(fin.hi);
    float tmp[16];
    for (int64_t i = 0; i < mr; ++i) {
        float *ci = c + i * ldc;
        const float *zi = fin.z ? fin.z + i * ldc : NULL;
        float bv = fin.bias ? fin.bias[i] : 0.0f;
        if (nr >= 16) { /* the same operations, 8 lanes at a time */
            for (int h = 0; h < 2; ++h) {
                __m256 r = rows[i][h];
                if (accumulate) r = _mm256_add_ps(_mm256_loadu_ps(ci + 8 * h), r);
                if (fin.bias) r = _mm256_add_ps(r, _mm256_set1_ps(bv));
                if (zi) r = _mm256_add_ps(r, _mm256_loadu_ps(zi + 8 * h));
                _mm256_storeu_ps(ci + 8 * h, uk256_act(r, fin.act, lo, hi));
            }
            continue;
        }
        _mm256_storeu_ps(tmp, rows[i][0]);
        _mm256_storeu_ps(tmp + 8, rows[i][1]);
        for (int64_t j = 0; j < nr; ++j)
            ci[j] = mlrt_strip_finish(tmp[j], accumulate ? ci[j] : 0.0f, bv, zi ? zi[j] : 0.0f, &fin, accumulate);
    }
}
#endif /* MLRT_X86 */

typedef void (*uk_fn)(int64_t, const float *const *, int64_t, const float *, const int64_t *, float *, int64_t,
                      int64_t, int64_t, bool, const mlrt_strip_epilogue *);
typedef void (*uk_col_fn)(int64_t, const float *, int64_t, const float *, const int64_t *, float *, int64_t, int64_t,
                          bool, const mlrt_strip_epilogue *);

static uk_fn uk_kernels[4];        /* by strip width: up to NR/4, NR/2, 3NR/4, NR columns */
static uk_col_fn uk_col_kernels[2][4]; /* by columns (1, 2) and panels (1 to 4); packed A */
static int64_t uk_nr;
static pthread_once_t uk_once = PTHREAD_ONCE_INIT;

/* The kernels of the ISA in use (mlrt_cpu_isa: the widest the CPU runs, unless
 * MLRT_ISA narrows it); none when it is portable. */
static void uk_init(void) {
    uk_nr = 0; /* portable */
#ifdef __aarch64__
    if (mlrt_cpu_isa() == MLRT_ISA_NEON) {
        for (int i = 0; i < 4; ++i) uk_kernels[i] = mlrt_sgemm_uk_neon;
        uk_nr = 16; /* (no column kernels: a strip's last columns run masked) */
    }
#endif
#ifdef MLRT_X86
    switch (mlrt_cpu_isa()) {
    case MLRT_ISA_AVX512:
        uk_kernels[0] = uk_avx512_1, uk_kernels[1] = uk_avx512_2, uk_kernels[2] = uk_avx512_3;
        uk_kernels[3] = uk_avx512_4, uk_nr = 64;
        break;
    case MLRT_ISA_AVX2:
        for (int i = 0; i < 4; ++i) uk_kernels[i] = uk_6x16_avx2;
        uk_nr = 16;
        break;
    default: break;
    }
    if (uk_nr) {
        uk_col_kernels[0][0] = uk_col_1x1, uk_col_kernels[0][1] = uk_col_2x1;
        uk_col_kernels[0][2] = uk_col_3x1, uk_col_kernels[0][3] = uk_col_4x1;
        uk_col_kernels[1][0] = uk_col_1x2, uk_col_kernels[1][1] = uk_col_2x2;
        uk_col_kernels[1][2] = uk_col_3x2, uk_col_kernels[1][3] = uk_col_4x2;
    }
#endif
}

int64_t mlrt_sgemm_strip_width(void) {
    pthread_once(&uk_once, uk_init);
    return uk_nr;
}

/* A strip's last columns, past its last 16, that run on the column kernels (packed A):
 * each costs about a twelfth of a masked vector's multiply-adds. */
#define UK_COL_MAX 8
/* Rows of A per group (4 passes, what one column kernel call takes): a group's rows meet
 * every strip, and then its last columns, before the next group's are read. */
#define UK_GROUP (4 * UK_MR)

void mlrt_sgemm_strips(int64_t M, int64_t kc, const mlrt_sgemm_a *A, int64_t m0, int64_t k0, const float *B,
                       const int64_t *off, int64_t bstride, float *C, int64_t ldc, int64_t n, bool accumulate,
                       const mlrt_strip_epilogue *e) {
    int64_t ks = A->packed ? UK_MR : 1, ns = (n + uk_nr - 1) / uk_nr;
    bool cols = uk_col_kernels[0][0] != NULL; /* column kernels for a strip's last few columns */
    mlrt_strip_epilogue part = e ? *e : (mlrt_strip_epilogue){0};
    /* packed: panel of row m0 + r at k0, whose zero rows pad the last pass */
    const float *panel = A->packed ? A->p + (m0 / UK_MR * A->ld + k0) * UK_MR : NULL;
    const float *rows[UK_MR + 1]; /* and where the kernel's prefetches go once A's run ends */
    for (int64_t g0 = 0; g0 < M; g0 += UK_GROUP) {
        int64_t g1 = M - g0 < UK_GROUP ? M : g0 + UK_GROUP;
        for (int64_t r0 = g0; r0 < g1; r0 += UK_MR) {
            int64_t mr = g1 - r0 < UK_MR ? g1 - r0 : UK_MR;
            for (int64_t i = 0; i < UK_MR; ++i)
                rows[i] = panel ? panel + r0 * A->ld + i : A->p + (m0 + r0 + (i < mr ? i : 0)) * A->ld + k0;
            /* packed: the next panel's run (the continuation of this one only where kc spans K);
             * else this row's continuation, as before */
            rows[UK_MR] = panel && r0 + UK_MR < M ? panel + (r0 + UK_MR) * A->ld : rows[0] + kc * ks;
            for (int64_t s = 0; s < ns; ++s) {
                int64_t nr = n - s * uk_nr < uk_nr ? n - s * uk_nr : uk_nr;
                if (panel && cols && s == ns - 1 && nr % 16 <= UK_COL_MAX) nr -= nr % 16; /* left to the column kernels */
                if (nr == 0) continue;
                int64_t quarter = (nr * 4 + uk_nr - 1) / uk_nr; /* 1..4: quarters of NR the strip needs */
                if (e) {
                    part.bias = e->bias ? e->bias + r0 : NULL;
                    part.z = e->z ? e->z + r0 * ldc + s * uk_nr : NULL;
                }
                uk_kernels[quarter - 1](kc, rows, ks, B + s * bstride, off, C + r0 * ldc + s * uk_nr, ldc, mr, nr,
                                        accumulate, e ? &part : NULL);
            }
        }
        int64_t last = n - (ns - 1) * uk_nr; /* the last strip's columns: any past its last 16 */
        if (!panel || !cols || last % 16 > UK_COL_MAX) continue;
        for (int64_t j = n - last % 16; j < n; j += 2) { /* the group's rows: 4 panels at most */
            int64_t nc = n - j >= 2 ? 2 : 1;
            if (e) {
                part.bias = e->bias ? e->bias + g0 : NULL;
                part.z = e->z ? e->z + g0 * ldc + j : NULL;
            }
            uk_col_kernels[nc - 1][(g1 - g0 + UK_MR - 1) / UK_MR - 1](
                kc, panel + g0 * A->ld, UK_MR * A->ld, B + (ns - 1) * bstride + j - (ns - 1) * uk_nr, off,
                C + g0 * ldc + j, ldc, g1 - g0, accumulate, e ? &part : NULL);
        }
    }
}

void mlrt_sgemm_pack_a(const float *A, int64_t M, int64_t K, int64_t lda, float *dst) {
    for (int64_t p = 0; p * UK_MR < M; ++p)
        for (int64_t i = 0; i < UK_MR; ++i) {
            int64_t m = p * UK_MR + i;
            float *d = dst + p * UK_MR * K + i;
            if (m < M)
                for (int64_t k = 0; k < K; ++k) d[k * UK_MR] = A[m * lda + k];
            else
                for (int64_t k = 0; k < K; ++k) d[k * UK_MR] = 0.0f;
        }
}
