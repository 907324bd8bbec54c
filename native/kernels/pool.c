/* pool.c -- MaxPool (with optional Indices), AveragePool, LpPool, GlobalAveragePool,
 * GlobalMaxPool.
 *
 * Output sizes and pads are resolved by the Python semantics (auto_pad, ceil_mode);
 * the kernel clips every window to the input, so any output size is memory-safe.
 * 1-D and 2-D pooling without Indices sweeps whole rows: for each kernel tap the
 * output row is combined with a (strided) input row, which vectorises; a window's
 * element count is separable, so averages divide by count_h * count_w.  Other ranks
 * and MaxPool with Indices walk each window.  Planes (image, channel) are spread over
 * the intra-op pool. */
#include <math.h>
#include <stdlib.h>

#include "fastmath.h"
#include "gemm.h"
#include "internal.h"
#include "pool.h"

#define POOL_MAX_SPATIAL 6

typedef enum { POOL_MAX, POOL_AVG, POOL_LP } pool_kind;

typedef struct pool_job {
    pool_kind kind;
    int32_t dtype;
    int32_t nd;                                 /* spatial rank as computed (1-D runs as 2-D) */
    int64_t in[POOL_MAX_SPATIAL], k[POOL_MAX_SPATIAL], out[POOL_MAX_SPATIAL];
    int64_t s[POOL_MAX_SPATIAL], d[POOL_MAX_SPATIAL], pb[POOL_MAX_SPATIAL], pe[POOL_MAX_SPATIAL];
    int64_t in_size, out_size, k_size;
    bool include_pad;
    int64_t storage_order;
    double p;
    const void *x;
    void *y;
    int64_t *indices;
    /* 2-D sweep: per output row / column, taps inside the input and inside the padded input */
    int64_t *valid_h, *valid_w, *padded_h, *padded_w;
} pool_job;

/* Taps of window o (start o*s - pb, step d, k taps) that fall in [lo, hi). */
static int64_t taps_in(int64_t o, int64_t s, int64_t pb, int64_t d, int64_t k, int64_t lo, int64_t hi) {
    int64_t start = o * s - pb, n = 0;
    for (int64_t t = 0; t < k; ++t) {
        int64_t at = start + t * d;
        n += at >= lo && at < hi;
    }
    return n;
}

/* ---- 2-D row sweep ------------------------------------------------------------------------------ */

/* Combine output row yr with input row xr for one tap: ow in [lo, hi) reads xr[ow * sw + off]. */
#define SWEEP(T, OPEXPR)                                                                     \
    do {                                                                                  \
        if (sw == 1) {                                                                    \
            const T *xs = xr + off;                                                       \
            for (int64_t ow = lo; ow < hi; ++ow) { T v = xs[ow]; OPEXPR; }                \
        } else if (sw == 2) {                                                             \
            const T *xs = xr + off;                                                       \
            for (int64_t ow = lo; ow < hi; ++ow) { T v = xs[2 * ow]; OPEXPR; }            \
        } else {                                                                          \
            for (int64_t ow = lo; ow < hi; ++ow) { T v = xr[ow * sw + off]; OPEXPR; }     \
        }                                                                                 \
    } while (0)

#define DEFINE_SWEEP(T, NAME, LOWEST, FLOATING, ABS)                                                            \
    MLRT_ISA_FN(, void, sweep_plane_##NAME, (const pool_job *j, const T *x, T *y), (j, x, y)) {            \
        int64_t H = j->in[0], Wd = j->in[1], OH = j->out[0], OW = j->out[1], KH = j->k[0], KW = j->k[1];   \
        int64_t sh = j->s[0], sw = j->s[1], dh = j->d[0], dw = j->d[1], ph = j->pb[0], pw = j->pb[1];     \
        for (int64_t oh = 0; oh < OH; ++oh) {                                                              \
            T *yr = y + oh * OW;                                                                           \
            T init = j->kind == POOL_MAX ? LOWEST : (T)0;                                                  \
            for (int64_t ow = 0; ow < OW; ++ow) yr[ow] = init;                                             \
            for (int64_t kh = 0; kh < KH; ++kh) {                                                          \
                int64_t ih = oh * sh - ph + kh * dh;                                                       \
                if (ih < 0 || ih >= H) continue;                                                           \
                const T *xr = x + ih * Wd;                                                                 \
                for (int64_t kw = 0; kw < KW; ++kw) {                                                      \
                    int64_t off = kw * dw - pw;                                                            \
                    int64_t lo = off >= 0 ? 0 : (-off + sw - 1) / sw;                                      \
                    int64_t hi = Wd - off > 0 ? (Wd - off + sw - 1) / sw : 0;                              \
                    if (hi > OW) hi = OW;                                                                  \
                    if (j->kind == POOL_MAX) SWEEP(T, yr[ow] = v > yr[ow] ? v : yr[ow]);                      \
                    else if (j->kind == POOL_AVG || !FLOATING) SWEEP(T, yr[ow] += v);                         \
                    else if (j->p == 2.0) SWEEP(T, yr[ow] += v * v);                                          \
                    else if (j->p == 1.0) SWEEP(T, yr[ow] += ABS(v));                                          \
                    else SWEEP(T, yr[ow] += (T)pow(fabs((double)v), j->p));                                   \
                }                                                                                          \
            }                                                                                              \
            for (int64_t ow = 0; ow < OW; ++ow) {                                                          \
                int64_t valid = j->valid_h[oh] * j->valid_w[ow];                                           \
                if (j->kind == POOL_MAX) {                                                                 \
                    if (valid == 0) yr[ow] = 0;                                                            \
                } else if (j->kind == POOL_AVG) {                                                          \
                    int64_t n = j->include_pad ? j->padded_h[oh] * j->padded_w[ow] : valid;                \
                    yr[ow] = (T)((double)yr[ow] / (double)n);                                              \
                } else if (j->p == 2.0) {                                                                  \
                    yr[ow] = (T)sqrt((double)yr[ow]);                                                      \
                } else if (j->p != 1.0) {                                                                  \
                    yr[ow] = (T)pow((double)yr[ow], 1.0 / j->p);                                           \
                }                                                                                          \
            }                                                                                              \
        }                                                                                                  \
    }

/* Column stride 2 of the 8-bit MaxPool below on AVX-512 BW: 32 outputs per step, R's
 * bytes 2 ow + kw taken as the low (kw even) or high (kw odd) byte of 16-bit lanes; int8
 * compared as uint8 with the top bit flipped.  False where the CPU has no AVX-512 BW / VL. */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
__attribute__((target("avx512f,avx512bw,avx512vl"))) static void max8_stride2_avx512(const void *R, void *y, int64_t OW,
                                                                             int64_t KW, bool s8) {
    const uint8_t *r = R;
    __m512i f = _mm512_set1_epi16(s8 ? 0x8080 : 0), lo = _mm512_set1_epi16(0x00FF);
    for (int64_t ow = 0; ow < OW; ow += 32) {
        int64_t n = OW - ow < 32 ? OW - ow : 32;
        __m512i m = _mm512_setzero_si512();
        for (int64_t kw = 0; kw < KW; ++kw) { /* (R holds (OW - 1) * 2 + KW bytes and 64 more) */
            __m512i v = _mm512_xor_si512(_mm512_loadu_si512((const void *)(r + 2 * ow + (kw & ~(int64_t)1))), f);
            m = _mm512_max_epu16(m, kw & 1 ? _mm512_srli_epi16(v, 8) : _mm512_and_si512(v, lo));
        }
        __m256i b = _mm256_xor_si256(_mm512_cvtepi16_epi8(m), _mm512_castsi512_si256(f));
        _mm256_mask_storeu_epi8((uint8_t *)y + ow, n >= 32 ? ~(__mmask32)0 : (((__mmask32)1 << n) - 1), b);
    }
}
#endif

/* dst[i] = max(dst[i], src[i]) for i < n, 8-bit; false where the CPU has no AVX-512 BW. */
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx512f,avx512bw"))) static void max8_into_avx512(void *dst, const void *src, int64_t n,
                                                                          bool s8) {
    uint8_t *d = dst;
    const uint8_t *x = src;
    for (int64_t i = 0; i < n; i += 64) {
        __mmask64 k = n - i >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << (n - i)) - 1);
        __m512i a = _mm512_maskz_loadu_epi8(k, d + i), b = _mm512_maskz_loadu_epi8(k, x + i);
        _mm512_mask_storeu_epi8(d + i, k, s8 ? _mm512_max_epi8(a, b) : _mm512_max_epu8(a, b));
    }
}
#endif

static bool max8_into(void *dst, const void *src, int64_t n, bool s8) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (MLRT_X86_HAS(MLRT_ISA_AVX512, AVX512BW)) {
        max8_into_avx512(dst, src, n, s8);
        return true;
    }
#endif
    (void)dst, (void)src, (void)n, (void)s8;
    return false;
}

static bool max8_stride2(const void *R, void *y, int64_t OW, int64_t KW, bool s8) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (MLRT_X86_HAS(MLRT_ISA_AVX512, AVX512BW) && MLRT_X86_FEATURE(AVX512VL)) {
        max8_stride2_avx512(R, y, OW, KW, s8);
        return true;
    }
#endif
    (void)R, (void)y, (void)OW, (void)KW, (void)s8;
    return false;
}

/* 8-bit MaxPool of one plane, 2-D, unit dilations (a quantized model's): rows, then
 * columns.  The window rows inside the input are maxed into row R (R[c] is input column
 * c - pads_begin; the padding holds the type's lowest value, which no tap loses to, so it
 * counts for nothing), then each output takes the max of its KW entries of R, tap by tap
 * over the whole output row: both passes vectorize.  A window wholly in the padding gives
 * 0, as the sweep's. */
#define DEFINE_MAX8(T, NAME, LOWEST)                                                                      \
    MLRT_ISA_FN(, void, max_plane_##NAME, (const pool_job *j, const T *x, T *y, T *R), (j, x, y, R)) { \
        int64_t H = j->in[0], Wd = j->in[1], OH = j->out[0], OW = j->out[1], KH = j->k[0], KW = j->k[1]; \
        int64_t sh = j->s[0], sw = j->s[1], ph = j->pb[0], pw = j->pb[1];                               \
        int64_t PW = (OW - 1) * sw + KW, c0 = pw < PW ? pw : PW, c1 = pw + Wd < PW ? pw + Wd : PW;      \
        bool empty_cols = false; /* a window wholly in the padding */                                  \
        for (int64_t ow = 0; ow < OW; ++ow) empty_cols |= j->valid_w[ow] == 0;                         \
        for (int64_t oh = 0; oh < OH; ++oh) {                                                          \
            T *yr = y + oh * OW;                                                                       \
            bool any = false;                                                                          \
            for (int64_t kh = 0; kh < KH; ++kh) {                                                      \
                int64_t ih = oh * sh - ph + kh;                                                        \
                if (ih < 0 || ih >= H) continue;                                                       \
                const T *xr = x + ih * Wd - pw;                                                        \
                if (!any) {                                                                            \
                    for (int64_t c = 0; c < c0; ++c) R[c] = LOWEST;                                    \
                    for (int64_t c = c0; c < c1; ++c) R[c] = xr[c];                                    \
                    for (int64_t c = c1 > c0 ? c1 : c0; c < PW; ++c) R[c] = LOWEST;                    \
                    any = true;                                                                        \
                } else if (!max8_into(R + c0, xr + c0, c1 - c0, LOWEST < 0)) {                         \
                    for (int64_t c = c0; c < c1; ++c) R[c] = xr[c] > R[c] ? xr[c] : R[c];               \
                }                                                                                      \
            }                                                                                          \
            if (!any) {                                                                                \
                for (int64_t ow = 0; ow < OW; ++ow) yr[ow] = 0;                                        \
                continue;                                                                              \
            }                                                                                          \
            if (sw == 1) {                                                                             \
                for (int64_t ow = 0; ow < OW; ++ow) yr[ow] = R[ow];                                    \
                for (int64_t kw = 1; kw < KW; ++kw)                                                    \
                    for (int64_t ow = 0; ow < OW; ++ow) yr[ow] = R[ow + kw] > yr[ow] ? R[ow + kw] : yr[ow]; \
            } else if (sw == 2 && max8_stride2(R, yr, OW, KW, LOWEST < 0)) {                          \
            } else if (sw == 2) {                                                                      \
                for (int64_t ow = 0; ow < OW; ++ow) yr[ow] = R[2 * ow];                                \
                for (int64_t kw = 1; kw < KW; ++kw)                                                    \
                    for (int64_t ow = 0; ow < OW; ++ow)                                                \
                        yr[ow] = R[2 * ow + kw] > yr[ow] ? R[2 * ow + kw] : yr[ow];                    \
            } else {                                                                                   \
                for (int64_t ow = 0; ow < OW; ++ow) {                                                  \
                    T m = R[ow * sw];                                                                  \
                    for (int64_t kw = 1; kw < KW; ++kw) m = R[ow * sw + kw] > m ? R[ow * sw + kw] : m;  \
                    yr[ow] = m;                                                                        \
                }                                                                                      \
            }                                                                                          \
            for (int64_t ow = 0; empty_cols && ow < OW; ++ow)                                          \
                if (j->valid_w[ow] == 0) yr[ow] = 0;                                                   \
        }                                                                                              \
    }
DEFINE_MAX8(int8_t, i8, INT8_MIN)
DEFINE_MAX8(uint8_t, u8, 0)

#define NO_ABS(v) (v)
DEFINE_SWEEP(float, f32, -INFINITY, 1, fabsf)
DEFINE_SWEEP(double, f64, -INFINITY, 1, fabs)
DEFINE_SWEEP(int8_t, i8, INT8_MIN, 0, NO_ABS)
DEFINE_SWEEP(uint8_t, u8, 0, 0, NO_ABS)

/* ---- 2-D float MaxPool / AveragePool over a padded plane -----------------------------------------
 *
 * The plane is first copied into P with the padding filled in (-inf for max, 0 for sums), so
 * a window needs no bounds; 2x2 and 3x3 windows take all their taps in one pass over the
 * output row (max(v, m) keeps skipping NaN like the sweep), other windows one pass per tap. */
#define PMAX(m, v) ((v) > (m) ? (v) : (m))
#define TAPS4(OP, I, R0, R1, C) OP(OP(OP(OP(I, R0[C]), R0[(C) + 1]), R1[C]), R1[(C) + 1])
#define TAPS9(OP, I, R0, R1, R2, C)                                                                   \
    OP(OP(OP(OP(OP(OP(OP(OP(OP(I, R0[C]), R0[(C) + 1]), R0[(C) + 2]), R1[C]), R1[(C) + 1]), R1[(C) + 2]), \
             R2[C]), R2[(C) + 1]), R2[(C) + 2])
#define PADD(a, b) ((a) + (b))

MLRT_ISA_FN(, void, padded_plane_f32, (const pool_job *j, const float *x, float *y, float *P), (j, x, y, P)) {
    int64_t H = j->in[0], Wd = j->in[1], OH = j->out[0], OW = j->out[1], KH = j->k[0], KW = j->k[1];
    int64_t sh = j->s[0], sw = j->s[1], dh = j->d[0], dw = j->d[1], ph = j->pb[0], pw = j->pb[1];
    int64_t PH = (OH - 1) * sh + (KH - 1) * dh + 1, PW = (OW - 1) * sw + (KW - 1) * dw + 1;
    bool max = j->kind == POOL_MAX;
    float fill = max ? -INFINITY : 0.0f;
    for (int64_t r = 0; r < PH; ++r) {
        float *pr = P + r * PW;
        int64_t ih = r - ph;
        if (ih < 0 || ih >= H) { for (int64_t c = 0; c < PW; ++c) pr[c] = fill; continue; }
        int64_t a = pw < PW ? pw : PW, b = Wd + pw < PW ? Wd + pw : PW;
        for (int64_t c = 0; c < a; ++c) pr[c] = fill;
        if (b > a) memcpy(pr + a, x + ih * Wd, (size_t)(b - a) * sizeof(float));
        for (int64_t c = b > a ? b : a; c < PW; ++c) pr[c] = fill;
    }
    bool unit = dh == 1 && dw == 1, k3 = unit && KH == 3 && KW == 3, k2 = unit && KH == 2 && KW == 2;
    /* unit strides: rows, then columns, each as one flat pass over the OH x PW grid (so small
     * planes vectorize too); the grid's real OW columns are copied out below */
    bool flat = max && unit && sh == 1 && sw == 1;
    float *Hm = P + PH * PW + OH * PW + KW;
    if (flat) {
        int64_t n = OH * PW;
        float *V = P + PH * PW;
        for (int64_t i = 0; i < n; ++i) V[i] = PMAX(-INFINITY, P[i]);
        for (int64_t kh = 1; kh < KH; ++kh) {
            const float *pr = P + kh * PW;
            for (int64_t i = 0; i < n; ++i) V[i] = PMAX(V[i], pr[i]);
        }
        for (int64_t i = n; i < n + KW; ++i) V[i] = -INFINITY; /* read only by columns past OW */
        for (int64_t i = 0; i < n; ++i) Hm[i] = V[i];
        for (int64_t kw = 1; kw < KW; ++kw) {
            const float *vs = V + kw;
            for (int64_t i = 0; i < n; ++i) Hm[i] = PMAX(Hm[i], vs[i]);
        }
    }
    for (int64_t oh = 0; oh < OH; ++oh) {
        float *yr = y + oh * OW;
        const float *r0 = P + oh * sh * PW, *r1 = r0 + PW, *r2 = r1 + PW;
        if (flat) memcpy(yr, Hm + oh * PW, (size_t)OW * sizeof(float));
        else if (max && k3 && sw == 1) for (int64_t ow = 0; ow < OW; ++ow) yr[ow] = TAPS9(PMAX, -INFINITY, r0, r1, r2, ow);
        else if (max && unit && !(k2 && sw <= 2)) {
            /* the window's rows' maximum first, over whole rows (contiguous: it vectorizes), then
             * the maximum of KW neighbours of those: the same values as tap by tap (max is exact,
             * NaN skipped alike), KH + KW passes instead of KH * KW */
            float *V = P + PH * PW;
            for (int64_t c = 0; c < PW; ++c) V[c] = PMAX(-INFINITY, r0[c]);
            for (int64_t kh = 1; kh < KH; ++kh) {
                const float *pr = r0 + kh * PW;
                for (int64_t c = 0; c < PW; ++c) V[c] = PMAX(V[c], pr[c]);
            }
            for (int64_t ow = 0; ow < OW; ++ow) yr[ow] = PMAX(-INFINITY, V[ow * sw]);
            for (int64_t kw = 1; kw < KW; ++kw) {
                const float *vs = V + kw;
                if (sw == 1) for (int64_t ow = 0; ow < OW; ++ow) yr[ow] = PMAX(yr[ow], vs[ow]);
                else for (int64_t ow = 0; ow < OW; ++ow) yr[ow] = PMAX(yr[ow], vs[ow * sw]);
            }
        }
        else if (max && k2 && sw == 2) for (int64_t ow = 0; ow < OW; ++ow) yr[ow] = TAPS4(PMAX, -INFINITY, r0, r1, 2 * ow);
        else if (max && k2 && sw == 1) for (int64_t ow = 0; ow < OW; ++ow) yr[ow] = TAPS4(PMAX, -INFINITY, r0, r1, ow);
        else if (!max && k3 && sw == 1) for (int64_t ow = 0; ow < OW; ++ow) yr[ow] = TAPS9(PADD, 0.0f, r0, r1, r2, ow);
        else if (!max && k3 && sw == 2) for (int64_t ow = 0; ow < OW; ++ow) yr[ow] = TAPS9(PADD, 0.0f, r0, r1, r2, 2 * ow);
        else if (!max && k2 && sw == 2) for (int64_t ow = 0; ow < OW; ++ow) yr[ow] = TAPS4(PADD, 0.0f, r0, r1, 2 * ow);
        else {
            for (int64_t ow = 0; ow < OW; ++ow) yr[ow] = fill;
            for (int64_t kh = 0; kh < KH; ++kh) {
                const float *pr = r0 + kh * dh * PW;
                for (int64_t kw = 0; kw < KW; ++kw) {
                    const float *ps = pr + kw * dw;
                    if (max && sw == 1) for (int64_t ow = 0; ow < OW; ++ow) yr[ow] = PMAX(yr[ow], ps[ow]);
                    else if (max) for (int64_t ow = 0; ow < OW; ++ow) yr[ow] = PMAX(yr[ow], ps[ow * sw]);
                    else if (sw == 1) for (int64_t ow = 0; ow < OW; ++ow) yr[ow] += ps[ow];
                    else for (int64_t ow = 0; ow < OW; ++ow) yr[ow] += ps[ow * sw];
                }
            }
        }
        if (max) {
            if (j->valid_h[oh] == 0) { for (int64_t ow = 0; ow < OW; ++ow) yr[ow] = 0; continue; }
            for (int64_t ow = 0; ow < OW; ++ow) if (j->valid_w[ow] == 0) yr[ow] = 0;
        } else {
            const int64_t *cw = j->include_pad ? j->padded_w : j->valid_w;
            double ch = (double)(j->include_pad ? j->padded_h[oh] : j->valid_h[oh]);
            for (int64_t ow = 0; ow < OW; ++ow) yr[ow] = (float)((double)yr[ow] / (ch * (double)cw[ow]));
        }
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* Outputs [o0, o1) of one output row of a 2- or 3-wide window (KW) at column stride 2
 * over input rows r[0 .. nr), every tap inside the row (output ow reads columns
 * 2 * ow + off .. + KW - 1), 16 at a time: the rows' maximum of two vectors (and for KW
 * 3 of the 33rd column), split into even and odd columns by permutes, the even ones
 * shifted by one for the third tap; the last outputs with masked loads and stores. */
__attribute__((target("avx512f"))) static void max_row_s2_avx512(const float *const *r, int64_t nr, int64_t off,
                                                                 int64_t KW, int64_t o0, int64_t o1, float *y) {
    const __m512i ie = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    const __m512i io = _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
    const __m512i shift = _mm512_set_epi32(16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1);
    const __m512 lowest = _mm512_set1_ps(-INFINITY);
    for (int64_t ow = o0; ow < o1; ow += 16) {
        int64_t n = o1 - ow < 16 ? o1 - ow : 16, cols = 2 * n + KW - 2, c = 2 * ow + off; /* columns read from c */
        __mmask16 ma = cols >= 16 ? 0xFFFF : (__mmask16)((1u << cols) - 1);
        __mmask16 mb = cols >= 32 ? 0xFFFF : cols > 16 ? (__mmask16)((1u << (cols - 16)) - 1) : 0;
        __mmask16 me = cols > 32 ? 1 : 0;
        __m512 a = lowest, b = lowest, e = lowest;
        for (int64_t i = 0; i < nr; ++i) { /* vmaxps(v, m) is v > m ? v : m, PMAX(m, v): NaN in v skipped */
            __m512 va = _mm512_mask_loadu_ps(lowest, ma, r[i] + c), vb = _mm512_mask_loadu_ps(lowest, mb, r[i] + c + 16);
            a = _mm512_max_ps(va, a), b = _mm512_max_ps(vb, b);
            if (me) {
                __m512 ve = _mm512_mask_loadu_ps(lowest, me, r[i] + c + 32);
                e = _mm512_max_ps(ve, e);
            }
        }
        /* taps in order: even column, odd column, next even column */
        __m512 ev = _mm512_permutex2var_ps(a, ie, b), od = _mm512_permutex2var_ps(a, io, b);
        __m512 m = _mm512_max_ps(od, ev);
        if (KW == 3) {
            __m512 e1 = _mm512_permutex2var_ps(ev, shift, e);
            m = _mm512_max_ps(e1, m);
        }
        _mm512_mask_storeu_ps(y + ow, n == 16 ? 0xFFFF : (__mmask16)((1u << n) - 1), m);
    }
}
#endif

/* ---- 2-D float MaxPool, unit dilations, column stride 2 ------------------------------------------
 *
 * The 3x3 / 2 and 2x2 / 2 pools of CNNs, with no padded copy of the plane: per output row
 * the rows of its window are combined into V (whole input rows: contiguous, it
 * vectorizes; V's columns outside the input hold -inf), V is split into its even and odd
 * columns, and every tap is then a contiguous read of one of those, shifted.  The same
 * values as tap by tap (max is exact, NaN skipped alike). */
MLRT_ISA_FN(, void, max_stride2_f32, (const pool_job *j, const float *x, float *y, float *buf), (j, x, y, buf)) {
    int64_t H = j->in[0], Wd = j->in[1], OH = j->out[0], OW = j->out[1], KH = j->k[0], KW = j->k[1];
    int64_t sh = j->s[0], ph = j->pb[0], pw = j->pb[1];
    int64_t half = OW + (KW + 1) / 2, PW = 2 * half; /* V's columns: every tap of every window */
    float *V = buf, *E = V + PW, *O = E + half;
    int64_t a = pw < PW ? pw : PW, b = Wd + pw < PW ? Wd + pw : PW; /* V[c] = input column c - pw for c in [a, b) */
    bool all_valid = true;
    for (int64_t ow = 0; ow < OW; ++ow) all_valid = all_valid && j->valid_w[ow];
#if defined(__x86_64__) && defined(__GNUC__)
    /* with AVX-512 the outputs are read straight from the input rows (mlrt_maxpool_row_f32) */
    if ((KW == 2 || KW == 3) && KH <= MLRT_POOL_ROWS_MAX && mlrt_cpu_isa() == MLRT_ISA_AVX512) {
        for (int64_t oh = 0; oh < OH; ++oh) {
            float *yr = y + oh * OW;
            int64_t ih0 = oh * sh - ph, k0 = ih0 < 0 ? -ih0 : 0, k1 = H - ih0 < KH ? H - ih0 : KH;
            if (k0 >= k1 || j->valid_h[oh] == 0) { for (int64_t ow = 0; ow < OW; ++ow) yr[ow] = 0; continue; }
            const float *rows[MLRT_POOL_ROWS_MAX];
            for (int64_t kh = k0; kh < k1; ++kh) rows[kh - k0] = x + (ih0 + kh) * Wd;
            mlrt_maxpool_row_f32(rows, k1 - k0, Wd, KW, 2, pw, OW, yr, buf);
        }
        return;
    }
#endif
    for (int64_t c = 0; c < a; ++c) V[c] = -INFINITY; /* V's columns outside the input */
    for (int64_t c = b > a ? b : a; c < PW; ++c) V[c] = -INFINITY;
    for (int64_t oh = 0; oh < OH; ++oh) {
        float *yr = y + oh * OW;
        int64_t ih0 = oh * sh - ph, k0 = ih0 < 0 ? -ih0 : 0, k1 = H - ih0 < KH ? H - ih0 : KH;
        if (k0 >= k1 || j->valid_h[oh] == 0) { for (int64_t ow = 0; ow < OW; ++ow) yr[ow] = 0; continue; }
        if (b > a) {
            const float *r = x + (ih0 + k0) * Wd - pw;
            for (int64_t c = a; c < b; ++c) V[c] = PMAX(-INFINITY, r[c]);
            for (int64_t kh = k0 + 1; kh < k1; ++kh) {
                r += Wd;
                for (int64_t c = a; c < b; ++c) V[c] = PMAX(V[c], r[c]);
            }
        }
        mlrt_split_even_odd(V, E, O, half);
        if (KW == 3) {
            for (int64_t ow = 0; ow < OW; ++ow) yr[ow] = PMAX(PMAX(E[ow], O[ow]), E[ow + 1]);
        } else if (KW == 2) {
            for (int64_t ow = 0; ow < OW; ++ow) yr[ow] = PMAX(E[ow], O[ow]);
        } else {
            for (int64_t ow = 0; ow < OW; ++ow) yr[ow] = E[ow];
            for (int64_t kw = 1; kw < KW; ++kw) {
                const float *t = (kw & 1 ? O : E) + kw / 2;
                for (int64_t ow = 0; ow < OW; ++ow) yr[ow] = PMAX(yr[ow], t[ow]);
            }
        }
        if (!all_valid)
            for (int64_t ow = 0; ow < OW; ++ow) yr[ow] = j->valid_w[ow] ? yr[ow] : 0.0f;
    }
}

/* ---- one output row from given input rows (kernels/conv.c's FusedConvMaxPool too) --------------- */

MLRT_ISA_FN(, void, max_row_f32, (const float *const *rows, int64_t nr, int64_t Wd, int64_t KW, int64_t sw,
                                   int64_t pw, int64_t OW, float *y, float *V),
            (rows, nr, Wd, KW, sw, pw, OW, y, V)) {
    int64_t PW = (OW - 1) * sw + KW, a = pw < PW ? pw : PW, b = Wd + pw < PW ? Wd + pw : PW;
    /* V[c]: the rows' maximum at input column c - pw (-inf outside the row) */
    for (int64_t c = 0; c < a; ++c) V[c] = -INFINITY;
    for (int64_t c = b > a ? b : a; c < PW; ++c) V[c] = -INFINITY;
    if (b > a) {
        const float *r = rows[0] - pw;
        for (int64_t c = a; c < b; ++c) V[c] = PMAX(-INFINITY, r[c]);
        for (int64_t i = 1; i < nr; ++i) {
            r = rows[i] - pw;
            for (int64_t c = a; c < b; ++c) V[c] = PMAX(V[c], r[c]);
        }
    }
    for (int64_t ow = 0; ow < OW; ++ow) y[ow] = PMAX(-INFINITY, V[ow * sw]);
    for (int64_t kw = 1; kw < KW; ++kw)
        for (int64_t ow = 0; ow < OW; ++ow) y[ow] = PMAX(y[ow], V[ow * sw + kw]);
}

#if defined(__x86_64__) && defined(__GNUC__)
/* The maximum of rows[0 .. nr) at columns c .. c + KW - 1 inside the row (-inf: none). */
static float edge_max(const float *const *rows, int64_t nr, int64_t Wd, int64_t KW, int64_t c) {
    float m = -INFINITY;
    for (int64_t i = 0; i < nr; ++i)
        for (int64_t col = c > 0 ? c : 0; col < c + KW && col < Wd; ++col) m = PMAX(m, rows[i][col]);
    return m;
}
#endif

void mlrt_maxpool_row_f32(const float *const *rows, int64_t nr, int64_t Wd, int64_t KW, int64_t sw, int64_t pw,
                          int64_t OW, float *y, float *buf) {
    /* outputs [o0, o1) have every tap inside the row; those outside [e0, e1) none (0) */
    int64_t o0 = (pw + sw - 1) / sw, o1 = Wd + pw - KW >= 0 ? (Wd + pw - KW) / sw + 1 : 0;
    int64_t e0 = pw - KW + 1 > 0 ? (pw - KW + 1 + sw - 1) / sw : 0, e1 = (Wd + pw + sw - 1) / sw;
    o1 = o1 < OW ? o1 : OW, e1 = e1 < OW ? e1 : OW, e0 = e0 < e1 ? e0 : e1;
#if defined(__x86_64__) && defined(__GNUC__)
    if (sw == 2 && (KW == 2 || KW == 3) && o1 > o0 && mlrt_cpu_isa() == MLRT_ISA_AVX512) {
        max_row_s2_avx512(rows, nr, -pw, KW, o0, o1, y);
        for (int64_t ow = e0; ow < o0; ++ow) y[ow] = edge_max(rows, nr, Wd, KW, ow * sw - pw); /* the edges */
        for (int64_t ow = o1; ow < e1; ++ow) y[ow] = edge_max(rows, nr, Wd, KW, ow * sw - pw);
    } else
#endif
    {
        (void)o0, (void)o1;
        max_row_f32(rows, nr, Wd, KW, sw, pw, OW, y, buf);
    }
    for (int64_t ow = 0; ow < e0; ++ow) y[ow] = 0.0f;
    for (int64_t ow = e1; ow < OW; ++ow) y[ow] = 0.0f;
}

/* ---- any rank, window by window (also MaxPool's Indices) ---------------------------------------- */

static double load(int32_t dtype, const void *p, int64_t i) {
    switch (dtype) {
    case MLRT_FLOAT: return ((const float *)p)[i];
    case MLRT_DOUBLE: return ((const double *)p)[i];
    case MLRT_INT8: return ((const int8_t *)p)[i];
    default: return ((const uint8_t *)p)[i];
    }
}

static void store(int32_t dtype, void *p, int64_t i, double v) {
    switch (dtype) {
    case MLRT_FLOAT: ((float *)p)[i] = (float)v; break;
    case MLRT_DOUBLE: ((double *)p)[i] = v; break;
    case MLRT_INT8: ((int8_t *)p)[i] = (int8_t)v; break;
    default: ((uint8_t *)p)[i] = (uint8_t)v; break;
    }
}

static void window_plane(const pool_job *j, int64_t plane) {
    int32_t nd = j->nd;
    int64_t oidx[POOL_MAX_SPATIAL] = {0}, kidx[POOL_MAX_SPATIAL];
    int64_t xbase = plane * j->in_size, ybase = plane * j->out_size;
    for (int64_t o = 0; o < j->out_size; ++o, mlrt_index_next(oidx, j->out, nd)) {
        double acc = j->kind == POOL_MAX ? -INFINITY : 0.0;
        int64_t valid = 0, padded = 0, best = -1;
        for (int32_t d = 0; d < nd; ++d) kidx[d] = 0;
        for (int64_t t = 0; t < j->k_size; ++t, mlrt_index_next(kidx, j->k, nd)) {
            int64_t row = 0, col = 0, stride = 1;
            bool inside = true, in_pad = true;
            for (int32_t d = 0; d < nd; ++d) {
                int64_t at = oidx[d] * j->s[d] - j->pb[d] + kidx[d] * j->d[d];
                inside = inside && at >= 0 && at < j->in[d];
                in_pad = in_pad && at >= -j->pb[d] && at < j->in[d] + j->pe[d];
                row = row * j->in[d] + at;
                col += at * stride;
                stride *= j->in[d];
            }
            padded += in_pad;
            if (!inside) continue;
            double v = load(j->dtype, j->x, xbase + row);
            if (j->kind == POOL_MAX) { /* NaN is skipped, like the row sweep's max */
                if (v == v && (best < 0 || v > acc)) {
                    acc = v;
                    best = j->storage_order ? col : row;
                }
            } else if (j->kind == POOL_AVG) {
                acc += v;
            } else {
                acc += j->p == 2.0 ? v * v : pow(fabs(v), j->p);
            }
            ++valid;
        }
        if (j->kind == POOL_MAX && valid == 0) acc = 0.0;
        else if (j->kind == POOL_AVG) acc /= (double)(j->include_pad ? padded : valid);
        else if (j->kind == POOL_LP) acc = j->p == 2.0 ? sqrt(acc) : pow(acc, 1.0 / j->p);
        store(j->dtype, j->y, ybase + o, acc);
        if (j->indices) j->indices[ybase + o] = best >= 0 ? xbase + best : -1;
    }
}

static double sum_f32(const float *x, int64_t n);

/* A 2-D float window that is the whole plane, with no padding (ResNet's last 7x7
 * AveragePool): one vectorized pass per plane. */
static bool whole_plane(const pool_job *j) {
    return j->nd == 2 && !j->indices && j->dtype == MLRT_FLOAT && j->kind != POOL_LP && j->out[0] == 1 &&
           j->out[1] == 1 && j->k[0] == j->in[0] && j->k[1] == j->in[1] && j->pb[0] == 0 && j->pb[1] == 0 &&
           j->pe[0] == 0 && j->pe[1] == 0 && j->in_size > 0;
}

static void pool_planes(void *arg, int64_t begin, int64_t end) {
    const pool_job *j = arg;
    if (whole_plane(j)) {
        for (int64_t plane = begin; plane < end; ++plane) {
            const float *x = (const float *)j->x + plane * j->in_size;
            float *y = (float *)j->y + plane;
            if (j->kind == POOL_AVG) {
                *y = (float)(sum_f32(x, j->in_size) / (double)j->in_size);
            } else {
                float m = -INFINITY;
                for (int64_t i = 0; i < j->in_size; ++i) m = PMAX(m, x[i]);
                *y = m;
            }
        }
        return;
    }
    bool sweep = j->nd == 2 && !j->indices;
    size_t esize = mlrt_dtype_size(j->dtype);
    float *P = NULL;
    if (sweep && j->dtype == MLRT_FLOAT && j->kind != POOL_LP) {
        int64_t PH = (j->out[0] - 1) * j->s[0] + (j->k[0] - 1) * j->d[0] + 1;
        int64_t PW = (j->out[1] - 1) * j->s[1] + (j->k[1] - 1) * j->d[1] + 1;
        /* after the plane: MaxPool's rows-then-columns grids (two of OH x PW, with slack), or one row;
         * NULL: the sweep below still works */
        int64_t floats = PH * PW + 2 * (j->out[0] * PW + j->k[1]) + PW + 16;
        int64_t stride2 = 4 * (j->out[1] + (j->k[1] + 1) / 2); /* max_stride2_f32's V, E and O */
        P = mlrt_scratch((size_t)(floats > stride2 ? floats : stride2) * sizeof(float));
    }
    void *R8 = NULL; /* the 8-bit MaxPool's row of window maxima */
    if (sweep && (j->dtype == MLRT_INT8 || j->dtype == MLRT_UINT8) && j->kind == POOL_MAX && j->d[0] == 1 &&
        j->d[1] == 1)
        R8 = mlrt_scratch((size_t)((j->out[1] - 1) * j->s[1] + j->k[1] + 128));
    for (int64_t plane = begin; plane < end; ++plane) {
        if (!sweep) {
            window_plane(j, plane);
            continue;
        }
        const char *x = (const char *)j->x + (size_t)(plane * j->in_size) * esize;
        char *y = (char *)j->y + (size_t)(plane * j->out_size) * esize;
        switch (j->dtype) {
        case MLRT_FLOAT:
            if (P && j->kind == POOL_MAX && j->s[1] == 2 && j->d[0] == 1 && j->d[1] == 1)
                max_stride2_f32(j, (const float *)x, (float *)y, P);
            else if (P) padded_plane_f32(j, (const float *)x, (float *)y, P);
            else sweep_plane_f32(j, (const float *)x, (float *)y);
            break;
        case MLRT_DOUBLE: sweep_plane_f64(j, (const double *)x, (double *)y); break;
        case MLRT_INT8:
            if (R8) max_plane_i8(j, (const int8_t *)x, (int8_t *)y, R8);
            else sweep_plane_i8(j, (const int8_t *)x, (int8_t *)y);
            break;
        case MLRT_UINT8:
            if (R8) max_plane_u8(j, (const uint8_t *)x, (uint8_t *)y, R8);
            else sweep_plane_u8(j, (const uint8_t *)x, (uint8_t *)y);
            break;
        }
    }
}

static int run_pool(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                    const void *params, size_t params_size, pool_kind kind) {
    MLRT_PARAMS(mlrt_pool_params, p, params, params_size);
    MLRT_CHECK(n_in == 1 && n_out >= 1 && n_out <= 2, "expects 1 input and 1 or 2 outputs");
    const mlrt_tensor *X = &in[0];
    mlrt_tensor *Y = &out[0], *I = n_out == 2 && mlrt_present(&out[1]) ? &out[1] : NULL;
    int64_t nd = p->n_spatial;
    MLRT_CHECK(nd >= 1 && nd <= POOL_MAX_SPATIAL, "%lld spatial dimensions (1..6 supported)", (long long)nd);
    MLRT_CHECK(X->rank == nd + 2 && Y->rank == nd + 2, "X and Y must have rank %lld", (long long)(nd + 2));
    MLRT_CHECK(Y->dtype == X->dtype, "Y must have X's element type");
    MLRT_CHECK(mlrt_is_contiguous(X) && mlrt_is_contiguous(Y), "needs contiguous tensors");
    MLRT_CHECK(Y->shape[0] == X->shape[0] && Y->shape[1] == X->shape[1], "Y must keep X's batch and channels");
    MLRT_CHECK(!I || (kind == POOL_MAX && I->dtype == MLRT_INT64 && mlrt_same_shape(I, Y) && mlrt_is_contiguous(I)),
               "Indices must be int64 of Y's shape");
    bool floating = X->dtype == MLRT_FLOAT || X->dtype == MLRT_DOUBLE;
    MLRT_CHECK(floating || (kind == POOL_MAX && (X->dtype == MLRT_INT8 || X->dtype == MLRT_UINT8)),
               "element type %d not supported", X->dtype);
    pool_job j = {.kind = kind, .dtype = X->dtype, .include_pad = p->count_include_pad != 0,
                  .storage_order = p->storage_order, .p = p->p, .x = X->data, .y = Y->data,
                  .indices = I ? I->data : NULL};
    MLRT_CHECK(kind != POOL_LP || p->p > 0, "LpPool: p must be positive");
    int32_t off = nd == 1 ? 1 : 0;
    j.nd = (int32_t)nd + off;
    if (off) j.in[0] = j.k[0] = j.out[0] = j.s[0] = j.d[0] = 1, j.pb[0] = j.pe[0] = 0;
    j.in_size = j.out_size = j.k_size = 1;
    for (int32_t i = 0; i < nd; ++i) {
        int64_t k = p->kernel[i], s = p->strides[i], dl = p->dilations[i];
        MLRT_CHECK(k >= 1 && s >= 1 && dl >= 1 && p->pads_begin[i] >= 0 && p->pads_end[i] >= 0,
                   "bad kernel, stride, dilation or pad");
        j.in[i + off] = X->shape[2 + i], j.out[i + off] = Y->shape[2 + i], j.k[i + off] = k;
        j.s[i + off] = s, j.d[i + off] = dl, j.pb[i + off] = p->pads_begin[i], j.pe[i + off] = p->pads_end[i];
        MLRT_CHECK(k <= INT64_MAX / j.k_size, "kernel of more than 2^63 taps");
        j.in_size *= X->shape[2 + i], j.out_size *= Y->shape[2 + i], j.k_size *= k;
    }
    int64_t planes = X->shape[0] * X->shape[1];
    if (planes == 0 || j.out_size == 0) return MLRT_OK;
    /* the window sweeps visit every tap of every window: a kernel of 2^31 x 2^31 (with pads
     * to match) is days of work (and its products overflow), refused up front */
    double taps = 1.0;
    for (int32_t i = 0; i < j.nd; ++i) taps *= (double)j.k[i] * (double)j.out[i];
    MLRT_CHECK(taps <= 0x1p40, "a %.3g-tap window sweep per plane (kernel x output sizes) is too much work", taps);
    int64_t *counts = NULL;
    if (j.nd == 2 && !I) {
        int64_t OH = j.out[0], OW = j.out[1];
        counts = malloc((size_t)(2 * (OH + OW)) * sizeof *counts);
        if (!counts) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "cannot allocate pooling counts");
        j.valid_h = counts, j.padded_h = counts + OH, j.valid_w = counts + 2 * OH, j.padded_w = counts + 2 * OH + OW;
        for (int64_t o = 0; o < OH; ++o) {
            j.valid_h[o] = taps_in(o, j.s[0], j.pb[0], j.d[0], j.k[0], 0, j.in[0]);
            j.padded_h[o] = taps_in(o, j.s[0], j.pb[0], j.d[0], j.k[0], -j.pb[0], j.in[0] + j.pe[0]);
        }
        for (int64_t o = 0; o < OW; ++o) {
            j.valid_w[o] = taps_in(o, j.s[1], j.pb[1], j.d[1], j.k[1], 0, j.in[1]);
            j.padded_w[o] = taps_in(o, j.s[1], j.pb[1], j.d[1], j.k[1], -j.pb[1], j.in[1] + j.pe[1]);
        }
    }
    int64_t work = j.out_size * j.k_size;
    /* chunks of at least ~2^18 window taps: less is cheaper than waking the pool */
    mlrt_parallel_for(ctx, planes, work >= (1 << 18) ? 1 : (1 << 18) / (work + 1) + 1, pool_planes, &j);
    free(counts);
    mlrt_note_path(MLRT_LOOP_PATH("pool")); /* (every plane loop is an MLRT_ISA_FN) */
    return MLRT_OK;
}

#define POOL_KERNEL(NAME, KIND)                                                                          \
    static int k_##NAME(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,  \
                        int32_t n_out, const void *params, size_t params_size) {                         \
        return run_pool(ctx, in, n_in, out, n_out, params, params_size, KIND);                           \
    }
POOL_KERNEL(maxpool, POOL_MAX)
POOL_KERNEL(averagepool, POOL_AVG)
POOL_KERNEL(lppool, POOL_LP)

int mlrt_maxpool_2d(const mlrt_context *ctx, const mlrt_tensor *X, mlrt_tensor *Y, const int64_t k[2],
                    const int64_t s[2], const int64_t pb[2]) {
    mlrt_pool_params p = {.n_spatial = 2, .kernel = {k[0], k[1]}, .strides = {s[0], s[1]}, .dilations = {1, 1},
                          .pads_begin = {pb[0], pb[1]}};
    return run_pool(ctx, X, 1, Y, 1, &p, sizeof p, POOL_MAX);
}

MLRT_KERNEL(maxpool, "MaxPool", "", 1, MLRT_OPSET_MAX, MLRT_MASK_FLOATS | MLRT_BIT(MLRT_INT8) | MLRT_BIT(MLRT_UINT8),
            k_maxpool);
MLRT_KERNEL(averagepool, "AveragePool", "", 1, MLRT_OPSET_MAX, MLRT_MASK_FLOATS, k_averagepool);
MLRT_KERNEL(lppool, "LpPool", "", 1, MLRT_OPSET_MAX, MLRT_MASK_FLOATS, k_lppool);

/* ---- global pooling: one value per (image, channel) plane ---------------------------------------- */

typedef struct global_job {
    const void *x;
    void *y;
    int64_t size;
    int32_t dtype;
    bool max;
} global_job;

/* A float32 plane's sum, added up in double in any order (so that it vectorizes). */
MLRT_HOT_FN(SUM_LOOP, double, sum_f32, (const float *x, int64_t n), (x, n)) {
    double s = 0;
    for (int64_t i = 0; i < n; ++i) s += (double)x[i];
    return s;
}

/* A float32 plane's largest value as the plain loop m = x[0], then m = x[i] > m ? x[i] : m,
 * finds it (NaN skipped, unless x[0] is NaN: then it stays), kept in 16 running maxima
 * that vectorise (the one compare chain took 4 cycles a value: a 1-D conv classifier's
 * GlobalMaxPool over 256 x 1024 values 2.5x slower than onnxruntime's).  On AArch64 gcc
 * leaves that select loop scalar, so it is written in NEON there: the same 16 maxima
 * (four vectors, compare and bit-select), folded in the same order, the same result. */
#ifdef __aarch64__
#include <arm_neon.h>

static float max_plane_f32(const float *x, int64_t n) {
    float lane[16], m = x[0];
    float32x4_t v[4];
    for (int q = 0; q < 4; ++q) v[q] = vdupq_n_f32(m);
    int64_t i = 1;
    for (; i + 16 <= n; i += 16)
        for (int q = 0; q < 4; ++q) {
            float32x4_t a = vld1q_f32(x + i + 4 * q);
            v[q] = vbslq_f32(vcgtq_f32(a, v[q]), a, v[q]);
        }
    for (int q = 0; q < 4; ++q) vst1q_f32(lane + 4 * q, v[q]);
    for (int l = 0; l < 16; ++l) m = lane[l] > m ? lane[l] : m;
    for (; i < n; ++i) m = x[i] > m ? x[i] : m;
    return m;
}
#else
MLRT_HOT_FN(, float, max_plane_f32, (const float *x, int64_t n), (x, n)) {
    float lane[16], m = x[0];
    for (int l = 0; l < 16; ++l) lane[l] = m;
    int64_t i = 1;
    for (; i + 16 <= n; i += 16)
        for (int l = 0; l < 16; ++l) lane[l] = x[i + l] > lane[l] ? x[i + l] : lane[l];
    for (int l = 0; l < 16; ++l) m = lane[l] > m ? lane[l] : m;
    for (; i < n; ++i) m = x[i] > m ? x[i] : m;
    return m;
}
#endif

static void global_planes(void *arg, int64_t begin, int64_t end) {
    const global_job *j = arg;
    for (int64_t plane = begin; plane < end; ++plane) {
        if (j->dtype == MLRT_FLOAT) {
            const float *x = (const float *)j->x + plane * j->size;
            if (j->max) {
                ((float *)j->y)[plane] = max_plane_f32(x, j->size);
            } else {
                ((float *)j->y)[plane] = (float)(sum_f32(x, j->size) / (double)j->size);
            }
        } else {
            const double *x = (const double *)j->x + plane * j->size;
            double m = j->max ? x[0] : 0;
            for (int64_t i = j->max ? 1 : 0; i < j->size; ++i) m = j->max ? (x[i] > m ? x[i] : m) : m + x[i];
            ((double *)j->y)[plane] = j->max ? m : m / (double)j->size;
        }
    }
}

static int run_global(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                      bool max) {
    MLRT_CHECK(n_in == 1 && n_out == 1, "expects 1 input and 1 output");
    const mlrt_tensor *X = &in[0];
    mlrt_tensor *Y = &out[0];
    MLRT_CHECK(X->rank >= 2 && Y->rank == X->rank && Y->dtype == X->dtype, "Y must be X's rank and type");
    MLRT_CHECK(X->dtype == MLRT_FLOAT || X->dtype == MLRT_DOUBLE, "element type %d not supported", X->dtype);
    MLRT_CHECK(mlrt_is_contiguous(X) && mlrt_is_contiguous(Y), "needs contiguous tensors");
    MLRT_CHECK(Y->shape[0] == X->shape[0] && Y->shape[1] == X->shape[1], "Y must keep X's batch and channels");
    for (int32_t d = 2; d < Y->rank; ++d) MLRT_CHECK(Y->shape[d] == 1, "Y's spatial dimensions must be 1");
    global_job j = {X->data, Y->data, 1, X->dtype, max};
    for (int32_t d = 2; d < X->rank; ++d) j.size *= X->shape[d];
    int64_t planes = X->shape[0] * X->shape[1];
    if (planes == 0) return MLRT_OK;
    MLRT_CHECK(j.size > 0, "cannot pool an empty spatial extent");
    mlrt_parallel_for(ctx, planes, j.size >= (1 << 17) ? 1 : (1 << 17) / j.size + 1, global_planes, &j);
    if (X->dtype == MLRT_FLOAT) mlrt_note_path(MLRT_LOOP_PATH("pool")); /* (float32: the cloned loops) */
    return MLRT_OK;
}

static int k_global_avg(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                        const void *params, size_t params_size) {
    return run_global(ctx, in, n_in, out, n_out, false);
}

static int k_global_max(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                        const void *params, size_t params_size) {
    return run_global(ctx, in, n_in, out, n_out, true);
}

MLRT_KERNEL(global_avg, "GlobalAveragePool", "", 1, MLRT_OPSET_MAX, MLRT_MASK_FLOATS, k_global_avg);
MLRT_KERNEL(global_max, "GlobalMaxPool", "", 1, MLRT_OPSET_MAX, MLRT_MASK_FLOATS, k_global_max);
