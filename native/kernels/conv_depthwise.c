/* conv_depthwise.c -- Conv, depthwise path: 1-D / 2-D convs with one input channel per
 * group (float32 and float64).
 *
 * Each (image, output channel) plane comes from its one input plane.  The portable
 * path, for every shape and type, copies it first into a zero-padded plane P (the rows
 * and columns the windows reach), so the taps need no bounds:
 * y[oh][ow] = bias + sum w[kh][kw] * P[oh*sh + kh*dh][ow*sw + kw*dw]; 3x3 windows with
 * unit dilation take all nine taps in one pass over the output row.  Float32 3 x 3
 * windows at column stride 1 or 2 (MobileNet's) run on AVX-512 where the CPU has it
 * (the 3 x 3 path below): no copies, the padding handled by masked loads; on NEON, the
 * same windows in kernels/conv_depthwise_neon.c. */
#include <math.h>

#include "conv_internal.h"
#include "fastmath.h"
#include "gemm.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define DW3_AVX512 1
#endif

/* The 3 x 3 path at stride 1 with OW == W runs its plane flat up to this width (where
 * rows would waste lanes, or leave most columns to the one-at-a-time edges on NEON). */
#define DW3_FLAT_MAX_W 16

/* Rows and columns of the padded plane: all that the windows reach. */
static int64_t dw_padded_rows(const conv_geom *g) {
    return (g->out[0] - 1) * g->s[0] + (g->k[0] - 1) * g->d[0] + 1;
}

static int64_t dw_padded_cols(const conv_geom *g) {
    return (g->out[1] - 1) * g->s[1] + (g->k[1] - 1) * g->d[1] + 1;
}

/* Copy input plane xp into P (elements of es bytes) with its zero padding, plus one
 * zero row after it: the flat pass of dw_plane reads past the last row. */
static void dw_pad_plane(const void *xp, void *P, const conv_geom *g, size_t es) {
    int64_t H = g->in[0], Wd = g->in[1], ph = g->pb[0], pw = g->pb[1];
    int64_t PH = dw_padded_rows(g), PW = dw_padded_cols(g);
    int64_t a = pw < PW ? pw : PW, b = Wd + pw < PW ? Wd + pw : PW; /* the copied columns [a, b) */
    for (int64_t r = 0; r < PH; ++r) {
        char *pr = (char *)P + (size_t)(r * PW) * es;
        int64_t ih = r - ph;
        if (ih < 0 || ih >= H || b <= a) {
            memset(pr, 0, (size_t)PW * es);
            continue;
        }
        memset(pr, 0, (size_t)a * es);
        memcpy(pr + (size_t)a * es, (const char *)xp + (size_t)(ih * Wd) * es, (size_t)(b - a) * es);
        memset(pr + (size_t)b * es, 0, (size_t)(PW - b) * es);
    }
    memset((char *)P + (size_t)(PH * PW) * es, 0, (size_t)PW * es);
}

/* One output plane yp from the padded plane P (then act 1: Relu, else none); the flat
 * pass for unit strides keeps its OH x PW grid in P after the padded plane.  One clone
 * per ISA level, and one definition per element type. */
#define DEFINE_DW_PLANE(T, NAME)                                                                                   \
    MLRT_ISA_FN(, void, dw_plane_##NAME, (T *P, const T *wp, T *yp, const conv_geom *g, T bias, int64_t act),     \
                (P, wp, yp, g, bias, act)) {                                                                       \
        int64_t OH = g->out[0], OW = g->out[1], KH = g->k[0], KW = g->k[1];                                        \
        int64_t sh = g->s[0], sw = g->s[1], dh = g->d[0], dw = g->d[1];                                            \
        int64_t PH = dw_padded_rows(g), PW = dw_padded_cols(g);                                                    \
        bool fused = KH == 3 && KW == 3 && dh == 1 && dw == 1;                                                     \
        T w0 = wp[0], w1 = fused ? wp[1] : 0, w2 = fused ? wp[2] : 0, w3 = fused ? wp[3] : 0;                      \
        T w4 = fused ? wp[4] : 0, w5 = fused ? wp[5] : 0, w6 = fused ? wp[6] : 0, w7 = fused ? wp[7] : 0;          \
        T w8 = fused ? wp[8] : 0;                                                                                  \
        if (sw == 1 && sh == 1) {                                                                                  \
            /* one flat pass over OH rows of width PW (columns past OW are dropped after) */                       \
            int64_t n = OH * PW;                                                                                   \
            T *V = P + PH * PW + PW;                                                                               \
            if (fused) {                                                                                           \
                const T *p1 = P + PW, *p2 = P + 2 * PW;                                                            \
                for (int64_t i = 0; i < n; ++i)                                                                    \
                    V[i] = bias + w0 * P[i] + w1 * P[i + 1] + w2 * P[i + 2] + w3 * p1[i] + w4 * p1[i + 1] +        \
                           w5 * p1[i + 2] + w6 * p2[i] + w7 * p2[i + 1] + w8 * p2[i + 2];                          \
            } else {                                                                                               \
                for (int64_t i = 0; i < n; ++i) V[i] = bias;                                                       \
                for (int64_t kh = 0; kh < KH; ++kh)                                                                \
                    for (int64_t kw = 0; kw < KW; ++kw) {                                                          \
                        T wv = wp[kh * KW + kw];                                                                   \
                        const T *ps = P + kh * dh * PW + kw * dw;                                                  \
                        for (int64_t i = 0; i < n; ++i) V[i] += wv * ps[i];                                        \
                    }                                                                                              \
            }                                                                                                      \
            for (int64_t oh = 0; oh < OH; ++oh) {                                                                  \
                T *yr = yp + oh * OW;                                                                              \
                const T *vr = V + oh * PW;                                                                         \
                if (act == MLRT_CONV_ACT_RELU)                                                                     \
                    for (int64_t ow = 0; ow < OW; ++ow)                                                            \
                        yr[ow] = vr[ow] > 0 ? vr[ow] : (vr[ow] != vr[ow] ? vr[ow] : 0);                            \
                else                                                                                               \
                    memcpy(yr, vr, (size_t)OW * sizeof(T));                                                        \
            }                                                                                                      \
            return;                                                                                                \
        }                                                                                                          \
        for (int64_t oh = 0; oh < OH; ++oh) {                                                                      \
            T *yr = yp + oh * OW;                                                                                  \
            const T *p0 = P + oh * sh * PW;                                                                        \
            if (fused && sw == 1) {                                                                                \
                const T *p1 = p0 + PW, *p2 = p1 + PW;                                                              \
                for (int64_t ow = 0; ow < OW; ++ow)                                                                \
                    yr[ow] = bias + w0 * p0[ow] + w1 * p0[ow + 1] + w2 * p0[ow + 2] + w3 * p1[ow] +                \
                             w4 * p1[ow + 1] + w5 * p1[ow + 2] + w6 * p2[ow] + w7 * p2[ow + 1] + w8 * p2[ow + 2];  \
            } else if (fused && sw == 2) {                                                                         \
                const T *p1 = p0 + PW, *p2 = p1 + PW;                                                              \
                for (int64_t ow = 0; ow < OW; ++ow) {                                                              \
                    int64_t c = 2 * ow;                                                                            \
                    yr[ow] = bias + w0 * p0[c] + w1 * p0[c + 1] + w2 * p0[c + 2] + w3 * p1[c] +                    \
                             w4 * p1[c + 1] + w5 * p1[c + 2] + w6 * p2[c] + w7 * p2[c + 1] + w8 * p2[c + 2];       \
                }                                                                                                  \
            } else {                                                                                               \
                for (int64_t ow = 0; ow < OW; ++ow) yr[ow] = bias;                                                 \
                for (int64_t kh = 0; kh < KH; ++kh) {                                                              \
                    const T *pr = p0 + kh * dh * PW;                                                               \
                    for (int64_t kw = 0; kw < KW; ++kw) {                                                          \
                        T wv = wp[kh * KW + kw];                                                                   \
                        const T *ps = pr + kw * dw;                                                                \
                        if (sw == 1) for (int64_t ow = 0; ow < OW; ++ow) yr[ow] += wv * ps[ow];                    \
                        else for (int64_t ow = 0; ow < OW; ++ow) yr[ow] += wv * ps[ow * sw];                       \
                    }                                                                                              \
                }                                                                                                  \
            }                                                                                                      \
            if (act == MLRT_CONV_ACT_RELU)                                                                         \
                for (int64_t ow = 0; ow < OW; ++ow)                                                                \
                    yr[ow] = yr[ow] > 0 ? yr[ow] : (yr[ow] != yr[ow] ? yr[ow] : 0);                                \
        }                                                                                                          \
    }

DEFINE_DW_PLANE(float, f32)
DEFINE_DW_PLANE(double, f64)

/* ---- the 3 x 3 path, float32 on AVX-512 ------------------------------------------------
 *
 * Kernel 3 x 3, unit dilations, column stride 1 or 2, any row stride and pads.  Output
 * rows are computed straight into Y, R at a time from the (R - 1) * sh + 3 input rows
 * they read (each input vector loaded once for all of them), 16 columns per vector.
 * Loads are masked to the input row, so the padding reads as zeros (and is still
 * multiplied, as over a padded plane) with no padded copy; rows above and below the
 * plane read a zero row.  Stride 2 loads the 33 input columns of 16 outputs and splits
 * them into even and odd columns in registers.  Narrow planes at stride 1 run flat
 * instead (dw3_flat_avx512).  Bias starts the sums (then the taps in order), and the store
 * applies the activation (dw3_act): the clamp [lo, hi] (Relu, Clip, or none), or Swish
 * (SiLU) or HardSwish with the epilogue's own steps, so the plane is not walked again. */
#ifdef DW3_AVX512

/* What the store applies: min(hi, max(lo, v)), or kind 1 v * sigmoid(alpha v) (the steps of
 * src/epilogue.c's Swish), kind 2 v * min(1, max(0, alpha v + beta)) (its HardSwish). */
typedef struct dw3_act {
    int kind;
    float lo, hi, alpha, beta;
} dw3_act;

__attribute__((target("avx512f"), always_inline)) static inline __m512 dw3_apply(const dw3_act *a, __m512 v) {
    if (a->kind == 1) return _mm512_mul_ps(v, mlrt_sigmoid_avx512(_mm512_mul_ps(_mm512_set1_ps(a->alpha), v)));
    if (a->kind == 2) {
        __m512 h = _mm512_fmadd_ps(_mm512_set1_ps(a->alpha), v, _mm512_set1_ps(a->beta));
        h = _mm512_min_ps(_mm512_max_ps(h, _mm512_setzero_ps()), _mm512_set1_ps(1.0f));
        return _mm512_mul_ps(v, h);
    }
    /* (NaN stays: max and min return their second operand) */
    return _mm512_min_ps(_mm512_set1_ps(a->hi), _mm512_max_ps(_mm512_set1_ps(a->lo), v));
}

/* Lanes l < n whose element start + l lies in [0, len). */
static inline __mmask16 dw3_lanes(int64_t start, int64_t len, int64_t n) {
    int64_t a = start < 0 ? -start : 0, b = len - start < n ? len - start : n;
    return (__mmask16)(b <= a ? 0 : ((UINT32_C(1) << b) - 1) & ~((UINT32_C(1) << a) - 1));
}

/* R output rows (row stride OW) at column stride SW from the input rows in[i] of width W. */
#define DEFINE_DW3_ROWS(R, SH, SW)                                                                               \
    __attribute__((target("avx512f"))) static void dw3_rows_##R##_##SH##_##SW(                                   \
        const float *const *in, float *y, int64_t OW, int64_t W, int64_t pw, const float *w, float bias,          \
        const dw3_act *act) {                                                                                    \
        __m512 wv[9], vb = _mm512_set1_ps(bias);                                                                 \
        _Pragma("GCC unroll 9") for (int k = 0; k < 9; ++k) wv[k] = _mm512_set1_ps(w[k]);                       \
        const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);        \
        const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));                                        \
        for (int64_t ow = 0; ow < OW; ow += 16) {                                                                \
            int64_t n = OW - ow < 16 ? OW - ow : 16, c = ow * (SW) - pw; /* c: the chunk's first column */       \
            __mmask16 m0 = dw3_lanes(c, W, 16), m1 = dw3_lanes(c + 1, W, 16), m2 = dw3_lanes(c + 2, W, 16);      \
            if ((SW) == 2) m1 = dw3_lanes(c + 16, W, 16), m2 = dw3_lanes(c + 32, W, 1);                          \
            __m512 acc[R];                                                                                       \
            _Pragma("GCC unroll 8") for (int r = 0; r < (R); ++r) acc[r] = vb;                                   \
            _Pragma("GCC unroll 16") for (int i = 0; i < ((R) - 1) * (SH) + 3; ++i) {                            \
                const float *p = in[i] + c;                                                                      \
                __m512 v[3];                                                                                     \
                if ((SW) == 1) {                                                                                 \
                    v[0] = _mm512_maskz_loadu_ps(m0, p), v[1] = _mm512_maskz_loadu_ps(m1, p + 1);                \
                    v[2] = _mm512_maskz_loadu_ps(m2, p + 2);                                                     \
                } else {                                                                                         \
                    __m512 a = _mm512_maskz_loadu_ps(m0, p), b = _mm512_maskz_loadu_ps(m1, p + 16);              \
                    v[0] = _mm512_permutex2var_ps(a, even, b), v[1] = _mm512_permutex2var_ps(a, odd, b);         \
                    v[2] = _mm512_castsi512_ps(_mm512_alignr_epi32(                                              \
                        _mm512_castps_si512(_mm512_maskz_loadu_ps(m2, p + 32)), _mm512_castps_si512(v[0]), 1));  \
                }                                                                                                \
                _Pragma("GCC unroll 8") for (int r = 0; r < (R); ++r) {                                          \
                    int kh = i - r * (SH);                                                                       \
                    if (kh < 0 || kh > 2) continue;                                                              \
                    _Pragma("GCC unroll 3") for (int kw = 0; kw < 3; ++kw)                                       \
                        acc[r] = _mm512_fmadd_ps(wv[kh * 3 + kw], v[kw], acc[r]);                                \
                }                                                                                                \
            }                                                                                                    \
            __mmask16 ms = dw3_lanes(0, n, 16);                                                                  \
            _Pragma("GCC unroll 8") for (int r = 0; r < (R); ++r)                                                \
                _mm512_mask_storeu_ps(y + r * OW + ow, ms, dw3_apply(act, acc[r]));                              \
        }                                                                                                        \
    }

DEFINE_DW3_ROWS(8, 1, 1)
DEFINE_DW3_ROWS(4, 1, 1)
DEFINE_DW3_ROWS(4, 2, 1)
DEFINE_DW3_ROWS(1, 1, 1)
DEFINE_DW3_ROWS(8, 1, 2)
DEFINE_DW3_ROWS(4, 1, 2)
DEFINE_DW3_ROWS(4, 2, 2)
DEFINE_DW3_ROWS(1, 1, 2)

typedef void (*dw3_rows_fn)(const float *const *, float *, int64_t, int64_t, int64_t, const float *, float,
                            const dw3_act *);

/* Output rows [r0, r1) of plane xp (H x W) into yp (OH x OW); zero: a row of W zeros. */
__attribute__((target("avx512f"))) static void dw3_plane_avx512(const float *xp, const float *w, float *yp,
                                                               const conv_geom *g, float bias, const dw3_act *act,
                                                               const float *zero, int64_t r0, int64_t r1) {
    int64_t H = g->in[0], W = g->in[1], OW = g->out[1], sh = g->s[0], ph = g->pb[0], pw = g->pb[1];
    bool s2 = g->s[1] == 2;
    for (int64_t oh = r0, R; oh < r1; oh += R) {
        /* 8 rows (stride 1), else 4 (the last block overlapping the one before), else 1 */
        R = sh == 1 && r1 - oh >= 8 ? 8 : sh <= 2 && r1 - r0 >= 4 ? 4 : 1;
        if (oh + R > r1) oh = r1 - R;
        const float *in[10];
        for (int64_t i = 0; i < (R - 1) * sh + 3; ++i) {
            int64_t ih = oh * sh - ph + i;
            in[i] = ih >= 0 && ih < H ? xp + ih * W : zero;
        }
        dw3_rows_fn rows = R == 8   ? (s2 ? dw3_rows_8_1_2 : dw3_rows_8_1_1)
                           : R == 1 ? (s2 ? dw3_rows_1_1_2 : dw3_rows_1_1_1)
                           : sh == 1 ? (s2 ? dw3_rows_4_1_2 : dw3_rows_4_1_1)
                                     : (s2 ? dw3_rows_4_2_2 : dw3_rows_4_2_1);
        rows(in, yp + oh * OW, OW, W, pw, w, bias, act);
    }
}

/* Stride 1 with OW == W: the plane as one flat run of OH * W outputs, output i reading
 * input i + (kh - ph) * W + (kw - pw) under the masks dw3_flat_masks made once for the
 * shape: the 9 taps' lanes (column in the row, index in the plane), then the store's. */
__attribute__((target("avx512f"))) static void dw3_flat_masks(const conv_geom *g, uint16_t *mk) {
    int64_t W = g->in[1], n_in = g->in[0] * W, n_out = g->out[0] * W, ph = g->pb[0], pw = g->pb[1];
    int32_t lane_col[16];
    for (int l = 0; l < 16; ++l) lane_col[l] = (int32_t)(l % W);
    __m512i col = _mm512_loadu_si512(lane_col), step = _mm512_set1_epi32((int32_t)(16 % W));
    __m512i vw = _mm512_set1_epi32((int32_t)W);
    for (int64_t i = 0; i < n_out; i += 16, mk += 10) {
        for (int k = 0; k < 9; ++k) /* column (i + l) % W - pw + kw in the row, index in the plane */
            mk[k] = _mm512_cmpge_epi32_mask(col, _mm512_set1_epi32((int32_t)(pw - k % 3))) &
                    _mm512_cmplt_epi32_mask(col, _mm512_set1_epi32((int32_t)(W + pw - k % 3))) &
                    dw3_lanes(i + (k / 3 - ph) * W + k % 3 - pw, n_in, n_out - i < 16 ? n_out - i : 16);
        mk[9] = dw3_lanes(0, n_out - i, 16);
        col = _mm512_add_epi32(col, step);
        col = _mm512_mask_sub_epi32(col, _mm512_cmpge_epi32_mask(col, vw), col, vw);
    }
}

__attribute__((target("avx512f"))) static void dw3_flat_avx512(const float *xp, const float *w, float *yp,
                                                              const conv_geom *g, float bias, const dw3_act *act,
                                                              const uint16_t *mk) {
    int64_t W = g->in[1], n_out = g->out[0] * W, ph = g->pb[0], pw = g->pb[1];
    __m512 wv[9], vb = _mm512_set1_ps(bias);
    int64_t off[9];
    for (int k = 0; k < 9; ++k) wv[k] = _mm512_set1_ps(w[k]), off[k] = (k / 3 - ph) * W + k % 3 - pw;
    for (int64_t i = 0; i < n_out; i += 16, mk += 10) {
        __m512 acc = vb;
        _Pragma("GCC unroll 9") for (int k = 0; k < 9; ++k)
            acc = _mm512_fmadd_ps(wv[k], _mm512_maskz_loadu_ps(mk[k], xp + i + off[k]), acc);
        _mm512_mask_storeu_ps(yp + i, mk[9], dw3_apply(act, acc));
    }
}
#endif

/* Which 3 x 3 path runs the conv: the rows (*dw3) or, narrow planes, the flat run (also
 * *flat); neither: the portable planes. */
static void dw3_paths(const conv_job *j, bool *dw3, bool *flat) {
    const conv_geom *g = &j->g;
    bool k33 = j->dtype == MLRT_FLOAT && g->k[0] == 3 && g->k[1] == 3 && g->d[0] == 1 && g->d[1] == 1 && g->s[1] <= 2;
    *dw3 = *flat = false;
    (void)k33; /* (where no 3 x 3 path is compiled) */
#ifdef DW3_AVX512
    *dw3 = k33 && mlrt_cpu_isa() == MLRT_ISA_AVX512;
#elif defined(__aarch64__)
    *dw3 = k33 && mlrt_cpu_isa() == MLRT_ISA_NEON; /* (kernels/conv_depthwise_neon.c) */
#endif
    *flat = *dw3 && g->s[0] == 1 && g->s[1] == 1 && g->out[1] == g->in[1] && g->in[1] <= DW3_FLAT_MAX_W;
}

int64_t mlrt_conv_depthwise_bands(const conv_job *j, int64_t threads) {
    bool dw3, flat;
    dw3_paths(j, &dw3, &flat);
#ifdef DW3_AVX512
    bool rows = dw3 && !flat;
#else
    bool rows = false; /* (the NEON rows take whole planes) */
#endif
    return threads >= 2 && rows && j->g.out[0] >= 16 * threads ? threads : 1;
}

/* Tasks t = band * N * M + n * M + m: rows band of j->n_tiles equal bands of output
 * channel m of image n, from input channel m / Mg.  The 3 x 3 path takes Relu, Clip
 * (min <= max), and on AVX-512 Swish and HardSwish in its store, the portable path Relu;
 * other activations, and Z, finish the rows after (their bias already in). */
void mlrt_conv_depthwise_tasks(void *arg, int64_t begin, int64_t end) {
    conv_job *j = arg;
    const conv_geom *g = &j->g;
    bool f32 = j->dtype == MLRT_FLOAT;
    size_t es = f32 ? sizeof(float) : sizeof(double);
    int64_t act = j->activation, W = g->in[1];
    bool dw3, flat;
    dw3_paths(j, &dw3, &flat);
    int64_t PH = dw_padded_rows(g), PW = dw_padded_cols(g);
#ifdef DW3_AVX512
    size_t mask_bytes = (size_t)(10 * ceil_div(g->out_size, 16)) * sizeof(uint16_t); /* 10 masks per 16 outputs */
#else
    size_t mask_bytes = (size_t)ceil_div(g->out_size, 4) * sizeof(uint64_t); /* a word per 4 outputs */
#endif
    size_t bytes = flat  ? mask_bytes
                   : dw3 ? (size_t)W * es
                         : (size_t)(PH * PW + PW + g->out[0] * PW) * es;
    void *P = mlrt_scratch(bytes);
    if (!P) { atomic_store(&j->failed, 1); return; }
#ifdef DW3_AVX512
    if (flat) dw3_flat_masks(g, P);
#elif defined(__aarch64__)
    if (flat) mlrt_dw3_flat_masks_neon(g, P);
#endif
    if (dw3 && !flat) memset(P, 0, (size_t)W * es); /* the zero row */
    bool clamp = !j->z && (act == MLRT_CONV_ACT_RELU || (act == MLRT_CONV_ACT_CLIP && j->alpha <= j->beta));
    /* the clamp the 3 x 3 kernels store through */
    float lo = !clamp ? -INFINITY : act == MLRT_CONV_ACT_RELU ? 0.0f : (float)j->alpha;
    float hi = !clamp || act == MLRT_CONV_ACT_RELU ? INFINITY : (float)j->beta;
    (void)lo, (void)hi; /* (where no 3 x 3 path is compiled) */
    bool fast = dw3 ? clamp : act == MLRT_CONV_ACT_RELU && !j->z; /* the activation is done in the plane */
#ifdef DW3_AVX512
    dw3_act da = {0, lo, hi, (float)j->alpha, (float)j->beta};
    if (dw3 && !j->z && (act == MLRT_CONV_ACT_SWISH || act == MLRT_CONV_ACT_HARD_SWISH))
        da.kind = act == MLRT_CONV_ACT_SWISH ? 1 : 2, fast = true;
#endif
    int64_t planes = g->N * g->M, bands = j->n_tiles, OH = g->out[0], OW = g->out[1];
    for (int64_t t = begin; t < end; ++t) {
        int64_t pl = t % planes, band = t / planes, n = pl / g->M, m = pl % g->M;
        int64_t xo = (n * g->C + m / g->Mg) * g->in_size, yo = pl * g->out_size;
        int64_t r0 = band * OH / bands, r1 = (band + 1) * OH / bands; /* (bands > 1: the AVX-512 rows only) */
        int64_t ro = r0 * OW, rn = (r1 - r0) * OW;
        if (f32) {
            const float *b = j->b, *x = (const float *)j->x + xo, *w = (const float *)j->w + m * g->k_size;
            float *y = (float *)j->y + yo;
#ifdef DW3_AVX512
            if (flat) dw3_flat_avx512(x, w, y, g, b ? b[m] : 0, &da, P);
            else if (dw3) dw3_plane_avx512(x, w, y, g, b ? b[m] : 0, &da, P, r0, r1);
#elif defined(__aarch64__)
            if (flat) mlrt_dw3_flat_neon(x, w, y, g, b ? b[m] : 0, lo, hi, P);
            else if (dw3) mlrt_dw3_plane_neon(x, w, y, g, b ? b[m] : 0, lo, hi, P);
#endif
            if (!dw3) {
                dw_pad_plane(x, P, g, es);
                dw_plane_f32(P, w, y, g, b ? b[m] : 0, fast ? 1 : 0);
            }
            if (!fast)
                mlrt_epilogue_f32(y + ro, j->z ? (const float *)j->z + yo + ro : NULL, 1, rn, rn, NULL, act,
                                  j->alpha, j->beta);
        } else {
            const double *b = j->b;
            double *y = (double *)j->y + yo;
            dw_pad_plane((const double *)j->x + xo, P, g, es);
            dw_plane_f64(P, (const double *)j->w + m * g->k_size, y, g, b ? b[m] : 0, fast ? 1 : 0);
            if (!fast)
                mlrt_epilogue_f64(y, j->z ? (const double *)j->z + yo : NULL, 1, g->out_size, g->out_size, NULL,
                                  act, j->alpha, j->beta);
        }
    }
}
