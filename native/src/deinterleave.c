/* deinterleave.c -- a row of floats split into its even and odd columns, or into its
 * four columns mod 4.
 *
 * What stride-2 and stride-4 kernels do before they read contiguously: MaxPool at column
 * stride 2 (kernels/pool.c) and the phase planes of a strided direct Conv
 * (kernels/conv_direct.c).  Compilers leave the plain loop scalar; a permute of two loaded
 * vectors does eight or sixteen outputs of each at once. */
#include "internal.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

__attribute__((target("avx512f"))) static void split_avx512(const float *v, float *e, float *o, int64_t n) {
    const __m512i ie = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    const __m512i io = _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512 a = _mm512_loadu_ps(v + 2 * i), b = _mm512_loadu_ps(v + 2 * i + 16);
        _mm512_storeu_ps(e + i, _mm512_permutex2var_ps(a, ie, b));
        _mm512_storeu_ps(o + i, _mm512_permutex2var_ps(a, io, b));
    }
    for (; i < n; ++i) e[i] = v[2 * i], o[i] = v[2 * i + 1];
}

/* Four vectors (64 floats) a step: each phase's 8 values of the first two and of the
 * last two gathered by a permute, then the two halves joined. */
__attribute__((target("avx512f"))) static void split_mod4_avx512(const float *v, float *const o[4], int64_t n) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512 a = _mm512_loadu_ps(v + 4 * i), b = _mm512_loadu_ps(v + 4 * i + 16);
        __m512 c = _mm512_loadu_ps(v + 4 * i + 32), d = _mm512_loadu_ps(v + 4 * i + 48);
        for (int p = 0; p < 4; ++p) {
            const __m512i ip = _mm512_set_epi32(0, 0, 0, 0, 0, 0, 0, 0, 28 + p, 24 + p, 20 + p, 16 + p, 12 + p,
                                                8 + p, 4 + p, p);
            __m512 lo = _mm512_permutex2var_ps(a, ip, b), hi = _mm512_permutex2var_ps(c, ip, d);
            _mm512_storeu_ps(o[p] + i, _mm512_shuffle_f32x4(lo, hi, _MM_SHUFFLE(1, 0, 1, 0)));
        }
    }
    for (; i < n; ++i)
        for (int p = 0; p < 4; ++p) o[p][i] = v[4 * i + p];
}

__attribute__((target("avx2"))) static void split_avx2(const float *v, float *e, float *o, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) { /* shuffle within lanes, then put the 64-bit halves in order */
        __m256 a = _mm256_loadu_ps(v + 2 * i), b = _mm256_loadu_ps(v + 2 * i + 8);
        __m256 ev = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)), od = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
        _mm256_storeu_ps(e + i, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(ev), _MM_SHUFFLE(3, 1, 2, 0))));
        _mm256_storeu_ps(o + i, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(od), _MM_SHUFFLE(3, 1, 2, 0))));
    }
    for (; i < n; ++i) e[i] = v[2 * i], o[i] = v[2 * i + 1];
}
#endif

/* e[i] = v[2i], o[i] = v[2i + 1] for i < n; reads v[0 .. 2n). */
void mlrt_split_even_odd(const float *v, float *e, float *o, int64_t n) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (mlrt_cpu_isa() == MLRT_ISA_AVX512) { split_avx512(v, e, o, n); return; }
    if (MLRT_X86_HAS(MLRT_ISA_AVX2, AVX2)) { split_avx2(v, e, o, n); return; }
#endif
    for (int64_t i = 0; i < n; ++i) e[i] = v[2 * i], o[i] = v[2 * i + 1];
}

/* o[p][i] = v[4i + p] for p < 4, i < n; reads v[0 .. 4n). */
void mlrt_split_mod4(const float *v, float *const o[4], int64_t n) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (mlrt_cpu_isa() == MLRT_ISA_AVX512) { split_mod4_avx512(v, o, n); return; }
#endif
    for (int64_t i = 0; i < n; ++i) /* (one pass over v, four rows written) */
        for (int p = 0; p < 4; ++p) o[p][i] = v[4 * i + p];
}
