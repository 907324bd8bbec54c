/* conv_depthwise.c -- Conv, depthwise path: 1-D / 2-D convs with one input channel per
 * group (float32 and float64).
 *
 * Each (image, output channel) plane comes from its one input plane, copied first into
 * a zero-padded plane P (the rows and columns the windows reach), so the taps need no
 * bounds: y[oh][ow] = bias + sum w[kh][kw] * P[oh*sh + kh*dh][ow*sw + kw*dw].  3x3
 * windows with unit dilation take all nine taps in one pass over the output row. */
#include "conv_internal.h"
#include "gemm.h"

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
    __attribute__((target_clones("default", "arch=x86-64-v3", "arch=x86-64-v4")))                                  \
    static void dw_plane_##NAME(T *P, const T *wp, T *yp, const conv_geom *g, T bias, int64_t act) {               \
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

/* Tasks t = n * M + m: output channel m of image n, from input channel m / Mg. */
void mlrt_conv_depthwise_tasks(void *arg, int64_t begin, int64_t end) {
    conv_job *j = arg;
    const conv_geom *g = &j->g;
    bool f32 = j->dtype == MLRT_FLOAT;
    size_t es = f32 ? sizeof(float) : sizeof(double);
    int64_t PH = dw_padded_rows(g), PW = dw_padded_cols(g);
    void *P = mlrt_scratch((size_t)(PH * PW + PW + g->out[0] * PW) * es);
    if (!P) { atomic_store(&j->failed, 1); return; }
    bool fast = j->activation == MLRT_CONV_ACT_RELU && !j->z; /* Relu in the plane's store; else finish after */
    for (int64_t t = begin; t < end; ++t) {
        int64_t n = t / g->M, m = t % g->M, xo = (n * g->C + m / g->Mg) * g->in_size, yo = t * g->out_size;
        if (f32) {
            const float *b = j->b;
            float *y = (float *)j->y + yo;
            dw_pad_plane((const float *)j->x + xo, P, g, es);
            dw_plane_f32(P, (const float *)j->w + m * g->k_size, y, g, b ? b[m] : 0, fast ? 1 : 0);
            if (!fast)
                mlrt_conv_finish_f32(y, j->z ? (const float *)j->z + yo : NULL, 1, g->out_size, g->out_size, NULL,
                                     j->activation, j->alpha, j->beta);
        } else {
            const double *b = j->b;
            double *y = (double *)j->y + yo;
            dw_pad_plane((const double *)j->x + xo, P, g, es);
            dw_plane_f64(P, (const double *)j->w + m * g->k_size, y, g, b ? b[m] : 0, fast ? 1 : 0);
            if (!fast)
                mlrt_conv_finish_f64(y, j->z ? (const double *)j->z + yo : NULL, 1, g->out_size, g->out_size, NULL,
                                     j->activation, j->alpha, j->beta);
        }
    }
}
