/* conv.c -- Conv: 1-D to 6-D, groups (grouped and depthwise), strides, dilations,
 * pads (auto_pad resolved by the Python semantics), optional bias.
 *
 * Paths, all splitting work over the intra-op pool themselves (GEMM runs
 * single-threaded inside the tasks):
 *   - depthwise 1-D/2-D (one input channel per group): a direct kernel per plane;
 *   - float32 on AVX2 / AVX-512, unit strides: the micro-kernels of src/gemm.c read the
 *     (zero-padded) input directly, no patch matrix (see conv_direct below);
 *   - float32 on AVX2 / AVX-512, other strides: patch columns (im2col) gathered straight
 *     into packed strips for the micro-kernels; bias and activation in the store;
 *   - otherwise (float64, or no SIMD kernel) BLAS: pointwise convs (1x1, stride 1, no
 *     pads) multiply X in place; others gather the patch columns of a tile of output
 *     positions into a private buffer first.
 * Tasks are (image, group, column tile, filter block); the tiling is chosen so that
 * the threads get equal shares and each tile's buffer stays bounded. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "conv.h"
#include "gemm.h"

#define CONV_MAX_SPATIAL 6
/* Elements of one im2col tile buffer (per task): bounds memory, keeps tiles warm. */
#define CONV_TILE_ELEMS (INT64_C(1) << 18)
/* Work below which threads cost more than they save: multiply-adds of a GEMM-path
 * conv, and of a depthwise chunk of planes. */
#define CONV_PARALLEL_MIN (INT64_C(1) << 22)
#define CONV_CHUNK_MIN (INT64_C(1) << 19)
/* Packed path: patch rows per block, and output positions per tile (CONV_KC x tile
 * floats of packed strips, 256 KB, stay in L2). */
#define CONV_KC 256
#define CONV_STRIP_TILE 256
/* Direct path: the largest padded copy of the input it makes (floats, 64 MB). */
#define CONV_DIRECT_MAX_FLOATS ((size_t)1 << 24)

typedef struct conv_geom {
    int64_t N, C, M, G, Cg, Mg;
    int32_t nd;                     /* spatial rank as computed (1-D runs as 2-D) */
    int64_t in[CONV_MAX_SPATIAL], k[CONV_MAX_SPATIAL], out[CONV_MAX_SPATIAL];
    int64_t s[CONV_MAX_SPATIAL], d[CONV_MAX_SPATIAL], pb[CONV_MAX_SPATIAL];
    int64_t in_size, out_size, k_size, kdim;
    bool pointwise, depthwise;
} conv_geom;

/* Check X (N, C, in...), W (M, C/G, k...), B (M), Y (N, M, out...) against the params. */
static int conv_setup(const mlrt_conv_params *p, const mlrt_tensor *X, const mlrt_tensor *W, const mlrt_tensor *B,
                      const mlrt_tensor *Y, conv_geom *g) {
    memset(g, 0, sizeof *g);
    int64_t nd = p->n_spatial;
    MLRT_CHECK(nd >= 1 && nd <= CONV_MAX_SPATIAL, "Conv: %lld spatial dimensions (1..6 supported)", (long long)nd);
    MLRT_CHECK(X->rank == nd + 2 && W->rank == nd + 2 && Y->rank == nd + 2, "Conv: X, W, Y must have rank %lld",
               (long long)(nd + 2));
    MLRT_CHECK(W->dtype == X->dtype && Y->dtype == X->dtype && (!B || B->dtype == X->dtype),
               "Conv: operand types differ");
    MLRT_CHECK(mlrt_is_contiguous(X) && mlrt_is_contiguous(W) && mlrt_is_contiguous(Y) && (!B || mlrt_is_contiguous(B)),
               "Conv: needs contiguous tensors");
    g->N = X->shape[0], g->C = X->shape[1], g->M = W->shape[0], g->G = p->group;
    MLRT_CHECK(g->G >= 1 && g->C % g->G == 0 && g->M % g->G == 0, "Conv: group %lld does not divide channels %lld / %lld",
               (long long)g->G, (long long)g->C, (long long)g->M);
    g->Cg = g->C / g->G, g->Mg = g->M / g->G;
    MLRT_CHECK(W->shape[1] == g->Cg, "Conv: W has %lld input channels per group, expected %lld",
               (long long)W->shape[1], (long long)g->Cg);
    MLRT_CHECK(Y->shape[0] == g->N && Y->shape[1] == g->M, "Conv: Y must be (%lld, %lld, ...)", (long long)g->N,
               (long long)g->M);
    MLRT_CHECK(!B || (B->rank == 1 && B->shape[0] == g->M), "Conv: B must have %lld elements", (long long)g->M);
    /* 1-D runs as 2-D with a unit leading dimension */
    int32_t off = nd == 1 ? 1 : 0;
    g->nd = (int32_t)nd + off;
    if (off) {
        g->in[0] = g->k[0] = g->out[0] = g->s[0] = g->d[0] = 1;
        g->pb[0] = 0;
    }
    g->in_size = g->out_size = g->k_size = 1;
    bool unit = true;
    for (int32_t i = 0; i < nd; ++i) {
        int64_t in = X->shape[2 + i], k = W->shape[2 + i], s = p->strides[i], dl = p->dilations[i];
        int64_t pb = p->pads_begin[i], pe = p->pads_end[i];
        MLRT_CHECK(p->kernel[i] == k, "Conv: kernel_shape %lld differs from W's %lld", (long long)p->kernel[i],
                   (long long)k);
        MLRT_CHECK(s >= 1 && dl >= 1 && pb >= 0 && pe >= 0 && k >= 1, "Conv: bad stride, dilation, pad or kernel");
        int64_t span = in + pb + pe - dl * (k - 1) - 1;
        int64_t out = span >= 0 ? span / s + 1 : 0;
        MLRT_CHECK(Y->shape[2 + i] == out, "Conv: output dimension %d is %lld, expected %lld", i,
                   (long long)Y->shape[2 + i], (long long)out);
        g->in[i + off] = in, g->k[i + off] = k, g->out[i + off] = out;
        g->s[i + off] = s, g->d[i + off] = dl, g->pb[i + off] = pb;
        g->in_size *= in, g->out_size *= out, g->k_size *= k;
        unit = unit && k == 1 && s == 1 && pb == 0 && pe == 0;
    }
    g->kdim = g->Cg * g->k_size;
    g->pointwise = unit;
    g->depthwise = g->Cg == 1 && g->nd == 2 && !unit;
    MLRT_CHECK(g->kdim <= INT32_MAX && g->out_size <= INT32_MAX && g->in_size <= INT32_MAX && g->Mg <= INT32_MAX,
               "Conv: sizes exceed the 32-bit BLAS limit");
    return MLRT_OK;
}

/* One implementation per element type. */
#define DEFINE_CONV(T, GEMM, NAME)                                                                           \
    /* Row kk = (c, kh, kw) of the patch matrix of one group, over output positions [p0, p0 + tw). */     \
    static void im2col_row_2d_##NAME(const T *x, const conv_geom *g, int64_t kk, int64_t p0, int64_t tw,     \
                                     T *dst) {                                                               \
        int64_t H = g->in[0], Wd = g->in[1], OW = g->out[1], KW = g->k[1];                                   \
        int64_t sh = g->s[0], sw = g->s[1], dh = g->d[0], dw = g->d[1], ph = g->pb[0], pw = g->pb[1];       \
        int64_t c = kk / g->k_size, kh = kk % g->k_size / KW, kw = kk % KW;                                  \
        const T *xc = x + c * g->in_size;                                                                    \
        int64_t off = kw * dw - pw; /* iw = ow * sw + off */                                                 \
        int64_t lo = off >= 0 ? 0 : (-off + sw - 1) / sw;                                                    \
        int64_t hi = Wd - off > 0 ? (Wd - off + sw - 1) / sw : 0;                                            \
        if (hi > OW) hi = OW;                                                                                \
        int64_t oh = p0 / OW, ow = p0 % OW, left = tw;                                                       \
        while (left > 0) {                                                                                   \
            int64_t seg = OW - ow < left ? OW - ow : left;                                                   \
            int64_t ih = oh * sh - ph + kh * dh;                                                             \
            if (ih < 0 || ih >= H) {                                                                         \
                for (int64_t i = 0; i < seg; ++i) dst[i] = 0;                                                \
            } else {                                                                                         \
                const T *xr = xc + ih * Wd + off;                                                            \
                int64_t a = lo < ow ? ow : lo > ow + seg ? ow + seg : lo;                                    \
                int64_t b = hi < a ? a : hi > ow + seg ? ow + seg : hi;                                      \
                for (int64_t i = ow; i < a; ++i) dst[i - ow] = 0;                                            \
                if (sw == 1)                                                                                 \
                    memcpy(dst + (a - ow), xr + a, (size_t)(b - a) * sizeof(T));                             \
                else                                                                                         \
                    for (int64_t i = a; i < b; ++i) dst[i - ow] = xr[i * sw];                                \
                for (int64_t i = b; i < ow + seg; ++i) dst[i - ow] = 0;                                      \
            }                                                                                                \
            dst += seg, left -= seg, ow = 0, ++oh;                                                           \
        }                                                                                                    \
    }                                                                                                        \
                                                                                                             \
    /* The same for any spatial rank (3-D and up): odometer over output positions. */                       \
    static void im2col_row_nd_##NAME(const T *x, const conv_geom *g, int64_t kk, int64_t p0, int64_t tw,     \
                                     T *dst) {                                                               \
        int32_t nd = g->nd;                                                                                  \
        int64_t kidx[CONV_MAX_SPATIAL], oidx[CONV_MAX_SPATIAL];                                              \
        int64_t rest = kk % g->k_size;                                                                       \
        for (int32_t d = nd - 1; d >= 0; --d) kidx[d] = rest % g->k[d], rest /= g->k[d];                     \
        rest = p0;                                                                                           \
        for (int32_t d = nd - 1; d >= 0; --d) oidx[d] = rest % g->out[d], rest /= g->out[d];                 \
        const T *xc = x + kk / g->k_size * g->in_size;                                                       \
        for (int64_t i = 0; i < tw; ++i) {                                                                   \
            int64_t at = 0;                                                                                  \
            bool ok = true;                                                                                  \
            for (int32_t d = 0; d < nd; ++d) {                                                               \
                int64_t ii = oidx[d] * g->s[d] - g->pb[d] + kidx[d] * g->d[d];                               \
                ok = ok && ii >= 0 && ii < g->in[d];                                                         \
                at = at * g->in[d] + ii;                                                                     \
            }                                                                                                \
            dst[i] = ok ? xc[at] : 0;                                                                        \
            mlrt_index_next(oidx, g->out, nd);                                                               \
        }                                                                                                    \
    }                                                                                                        \
                                                                                                             \
    /* Row kk of the patch matrix (a plain copy for pointwise convs). */                                    \
    static void im2col_row_##NAME(const T *x, const conv_geom *g, int64_t kk, int64_t p0, int64_t tw,        \
                                  T *dst) {                                                                  \
        if (g->pointwise) memcpy(dst, x + kk * g->in_size + p0, (size_t)tw * sizeof(T));                     \
        else if (g->nd == 2) im2col_row_2d_##NAME(x, g, kk, p0, tw, dst);                                    \
        else im2col_row_nd_##NAME(x, g, kk, p0, tw, dst);                                                    \
    }                                                                                                        \
                                                                                                             \
    /* The activations of FusedConv (codes of mlrt_conv_params.activation). */                              \
    static inline T act_##NAME(T v, int64_t act, double alpha, double beta) {                                \
        switch (act) {                                                                                       \
        case 1: return v > 0 ? v : (v != v ? v : 0);                               /* Relu */              \
        case 2: return v >= 0 ? v : (T)(alpha * v);                                /* LeakyRelu */         \
        case 3: return v < (T)alpha ? (T)alpha : v > (T)beta ? (T)beta : v;       /* Clip */              \
        case 4: return (T)(1.0 / (1.0 + exp(-(double)v)));                          /* Sigmoid */           \
        case 5: return (T)tanh((double)v);                                          /* Tanh */              \
        case 6: { double h = alpha * v + beta; return (T)(h < 0 ? 0 : h > 1 ? 1 : h); } /* HardSigmoid */  \
        default: return v;                                                                                   \
        }                                                                                                    \
    }                                                                                                        \
                                                                                                             \
    /* Finish rows of Y in place: + bias[r], + Z (same layout, leading dimension ld), activation. */         \
    static void finish_##NAME(T *y, const T *z, int64_t rows, int64_t cols, int64_t ld, const T *bias,       \
                              int64_t act, double alpha, double beta) {                                      \
        if (!bias && !z && !act) return;                                                                     \
        for (int64_t r = 0; r < rows; ++r) {                                                                 \
            T *yr = y + r * ld, bv = bias ? bias[r] : 0;                                                     \
            const T *zr = z ? z + r * ld : NULL;                                                             \
            if (bias) for (int64_t i = 0; i < cols; ++i) yr[i] += bv;                                        \
            if (zr) for (int64_t i = 0; i < cols; ++i) yr[i] += zr[i];                                       \
            if (act == 1) for (int64_t i = 0; i < cols; ++i) yr[i] = yr[i] > 0 ? yr[i] : (yr[i] != yr[i] ? yr[i] : 0); \
            else if (act) for (int64_t i = 0; i < cols; ++i) yr[i] = act_##NAME(yr[i], act, alpha, beta);    \
        }                                                                                                    \
    }                                                                                                        \
                                                                                                             \
    static void conv_tasks_##NAME(void *arg, int64_t begin, int64_t end) {                                   \
        conv_job *j = arg;                                                                                   \
        const conv_geom *g = &j->g;                                                                          \
        const T *x = j->x, *w = j->w, *b = j->b;                                                             \
        T *y = j->y, *col = NULL;                                                                            \
        if (!g->pointwise) {                                                                                 \
            col = mlrt_scratch((size_t)(g->kdim * j->tile) * sizeof(T));                                     \
            if (!col) { atomic_store(&j->failed, 1); return; }                                               \
        }                                                                                                    \
        int64_t have = -1; /* which (image, group, tile) col holds */                                       \
        for (int64_t t = begin; t < end; ++t) {                                                              \
            int64_t mb = t % j->n_mblocks, r = t / j->n_mblocks;                                             \
            int64_t ct = r % j->n_tiles, ng = r / j->n_tiles;                                                \
            int64_t n = ng / g->G, grp = ng % g->G;                                                          \
            int64_t c0 = ct * j->tile, tw = g->out_size - c0 < j->tile ? g->out_size - c0 : j->tile;         \
            int64_t m0 = mb * j->mblock, mw = g->Mg - m0 < j->mblock ? g->Mg - m0 : j->mblock;               \
            if (tw <= 0 || mw <= 0) continue;                                                                \
            const T *xg = x + (n * g->C + grp * g->Cg) * g->in_size;                                         \
            const T *wg = w + (grp * g->Mg + m0) * g->kdim;                                                  \
            T *yg = y + (n * g->M + grp * g->Mg + m0) * g->out_size + c0;                                    \
            if (g->pointwise) {                                                                              \
                GEMM(NULL, false, false, mw, tw, g->kdim, 1, wg, g->kdim, xg + c0, g->in_size, 0, yg,        \
                     g->out_size);                                                                           \
            } else {                                                                                         \
                if (have != r) {                                                                             \
                    for (int64_t kk = 0; kk < g->kdim; ++kk) im2col_row_##NAME(xg, g, kk, c0, tw, col + kk * tw); \
                    have = r;                                                                                \
                }                                                                                            \
                GEMM(NULL, false, false, mw, tw, g->kdim, 1, wg, g->kdim, col, tw, 0, yg, g->out_size);      \
            }                                                                                                \
            finish_##NAME(yg, j->z ? (const T *)j->z + (yg - y) : NULL, mw, tw, g->out_size,                \
                          b ? b + grp * g->Mg + m0 : NULL, j->activation, j->alpha, j->beta);                 \
        }                                                                                                    \
    }                                                                                                        \
                                                                                                             \
    /* Depthwise 2-D: each (image, output channel) plane from its one input plane, copied first   \
     * into a zero-padded plane P (the rows and columns the windows reach), so the taps need no    \
     * bounds: y[oh][ow] = bias + sum w[kh][kw] * P[oh*sh + kh*dh][ow*sw + kw*dw].  3x3 windows   \
     * with unit dilation take all nine taps in one pass over the output row. */                  \
    __attribute__((target_clones("default", "arch=x86-64-v3", "arch=x86-64-v4")))                            \
    static void dw_plane_##NAME(const T *xp, const T *wp, T *yp, const conv_geom *g, T bias, int64_t act,    \
                                T *P) {                                                                      \
        int64_t H = g->in[0], Wd = g->in[1], OH = g->out[0], OW = g->out[1], KH = g->k[0], KW = g->k[1];     \
        int64_t sh = g->s[0], sw = g->s[1], dh = g->d[0], dw = g->d[1], ph = g->pb[0], pw = g->pb[1];       \
        int64_t PH = (OH - 1) * sh + (KH - 1) * dh + 1, PW = (OW - 1) * sw + (KW - 1) * dw + 1;              \
        for (int64_t r = 0; r < PH; ++r) {                                                                   \
            T *pr = P + r * PW;                                                                              \
            int64_t ih = r - ph;                                                                             \
            if (ih < 0 || ih >= H) { for (int64_t c = 0; c < PW; ++c) pr[c] = 0; continue; }                \
            int64_t a = pw < PW ? pw : PW, b = Wd + pw < PW ? Wd + pw : PW;                                  \
            for (int64_t c = 0; c < a; ++c) pr[c] = 0;                                                       \
            if (b > a) memcpy(pr + a, xp + ih * Wd, (size_t)(b - a) * sizeof(T));                            \
            for (int64_t c = b > a ? b : a; c < PW; ++c) pr[c] = 0;                                          \
        }                                                                                                    \
        for (int64_t c = PH * PW; c < PH * PW + PW; ++c) P[c] = 0; /* the flat pass reads past the end */  \
        bool fused = KH == 3 && KW == 3 && dh == 1 && dw == 1;                                               \
        T w0 = wp[0], w1 = fused ? wp[1] : 0, w2 = fused ? wp[2] : 0, w3 = fused ? wp[3] : 0;                \
        T w4 = fused ? wp[4] : 0, w5 = fused ? wp[5] : 0, w6 = fused ? wp[6] : 0, w7 = fused ? wp[7] : 0;    \
        T w8 = fused ? wp[8] : 0;                                                                            \
        if (sw == 1 && sh == 1) {                                                                            \
            /* one flat pass over OH rows of width PW (columns past OW are dropped after) */               \
            int64_t n = OH * PW;                                                                             \
            T *V = P + PH * PW + PW;                                                                         \
            if (fused) {                                                                                     \
                const T *p1 = P + PW, *p2 = P + 2 * PW;                                                      \
                for (int64_t i = 0; i < n; ++i)                                                              \
                    V[i] = bias + w0 * P[i] + w1 * P[i + 1] + w2 * P[i + 2] + w3 * p1[i] + w4 * p1[i + 1] +  \
                           w5 * p1[i + 2] + w6 * p2[i] + w7 * p2[i + 1] + w8 * p2[i + 2];                    \
            } else {                                                                                         \
                for (int64_t i = 0; i < n; ++i) V[i] = bias;                                                 \
                for (int64_t kh = 0; kh < KH; ++kh)                                                          \
                    for (int64_t kw = 0; kw < KW; ++kw) {                                                    \
                        T wv = wp[kh * KW + kw];                                                             \
                        const T *ps = P + kh * dh * PW + kw * dw;                                            \
                        for (int64_t i = 0; i < n; ++i) V[i] += wv * ps[i];                                  \
                    }                                                                                        \
            }                                                                                                \
            for (int64_t oh = 0; oh < OH; ++oh) {                                                            \
                T *yr = yp + oh * OW;                                                                        \
                const T *vr = V + oh * PW;                                                                   \
                if (act == 1)                                                                                \
                    for (int64_t ow = 0; ow < OW; ++ow) yr[ow] = vr[ow] > 0 ? vr[ow] : (vr[ow] != vr[ow] ? vr[ow] : 0); \
                else                                                                                         \
                    memcpy(yr, vr, (size_t)OW * sizeof(T));                                                  \
            }                                                                                                \
            return;                                                                                          \
        }                                                                                                    \
        for (int64_t oh = 0; oh < OH; ++oh) {                                                                \
            T *yr = yp + oh * OW;                                                                            \
            const T *p0 = P + oh * sh * PW;                                                                  \
            if (fused && sw == 1) {                                                                          \
                const T *p1 = p0 + PW, *p2 = p1 + PW;                                                        \
                for (int64_t ow = 0; ow < OW; ++ow)                                                          \
                    yr[ow] = bias + w0 * p0[ow] + w1 * p0[ow + 1] + w2 * p0[ow + 2] + w3 * p1[ow] +          \
                             w4 * p1[ow + 1] + w5 * p1[ow + 2] + w6 * p2[ow] + w7 * p2[ow + 1] + w8 * p2[ow + 2]; \
            } else if (fused && sw == 2) {                                                                   \
                const T *p1 = p0 + PW, *p2 = p1 + PW;                                                        \
                for (int64_t ow = 0; ow < OW; ++ow) {                                                        \
                    int64_t c = 2 * ow;                                                                      \
                    yr[ow] = bias + w0 * p0[c] + w1 * p0[c + 1] + w2 * p0[c + 2] + w3 * p1[c] +              \
                             w4 * p1[c + 1] + w5 * p1[c + 2] + w6 * p2[c] + w7 * p2[c + 1] + w8 * p2[c + 2]; \
                }                                                                                            \
            } else {                                                                                         \
                for (int64_t ow = 0; ow < OW; ++ow) yr[ow] = bias;                                           \
                for (int64_t kh = 0; kh < KH; ++kh) {                                                        \
                    const T *pr = p0 + kh * dh * PW;                                                         \
                    for (int64_t kw = 0; kw < KW; ++kw) {                                                    \
                        T wv = wp[kh * KW + kw];                                                             \
                        const T *ps = pr + kw * dw;                                                          \
                        if (sw == 1) for (int64_t ow = 0; ow < OW; ++ow) yr[ow] += wv * ps[ow];              \
                        else for (int64_t ow = 0; ow < OW; ++ow) yr[ow] += wv * ps[ow * sw];                 \
                    }                                                                                        \
                }                                                                                            \
            }                                                                                                \
            if (act == 1)                                                                                    \
                for (int64_t ow = 0; ow < OW; ++ow) yr[ow] = yr[ow] > 0 ? yr[ow] : (yr[ow] != yr[ow] ? yr[ow] : 0); \
        }                                                                                                    \
    }                                                                                                        \
                                                                                                             \
    static void dw_tasks_##NAME(void *arg, int64_t begin, int64_t end) {                                     \
        conv_job *j = arg;                                                                                   \
        const conv_geom *g = &j->g;                                                                          \
        const T *x = j->x, *w = j->w, *b = j->b;                                                             \
        T *y = j->y;                                                                                         \
        int64_t PH = (g->out[0] - 1) * g->s[0] + (g->k[0] - 1) * g->d[0] + 1;                                \
        int64_t PW = (g->out[1] - 1) * g->s[1] + (g->k[1] - 1) * g->d[1] + 1;                                \
        T *P = mlrt_scratch((size_t)(PH * PW + PW + g->out[0] * PW) * sizeof(T));                            \
        if (!P) { atomic_store(&j->failed, 1); return; }                                                     \
        for (int64_t t = begin; t < end; ++t) { /* t = n * M + m; input channel m / Mg */                   \
            int64_t n = t / g->M, m = t % g->M;                                                              \
            bool fast = j->activation == 1 && !j->z;                                                         \
            dw_plane_##NAME(x + (n * g->C + m / g->Mg) * g->in_size, w + m * g->k_size,                      \
                            y + t * g->out_size, g, b ? b[m] : 0, fast ? 1 : 0, P);                          \
            if (!fast)                                                                                       \
                finish_##NAME(y + t * g->out_size, j->z ? (const T *)j->z + t * g->out_size : NULL, 1,       \
                              g->out_size, g->out_size, NULL, j->activation, j->alpha, j->beta);             \
        }                                                                                                    \
    }

/* Direct path (float, 2-D, unit strides): no patch matrix at all.  Row k = (c, kh, kw) of
 * the patch matrix is the input itself, shifted: with each channel copied once into a
 * zero-padded plane of width PW, output position v = oh * PW + ow reads P[v + off[k]],
 * off[k] = c * plane + kh * dh * PW + kw * dw, so the micro-kernels read straight from P.
 * Outputs are computed on that PW-wide grid (columns past OW are dropped when the tile is
 * copied out); pointwise convs read X itself and write Y directly. */
typedef struct conv_direct {
    float *P;               /* N * C padded planes (NULL for pointwise: X is used as is) */
    int64_t PW, plane;      /* padded row width, floats per padded plane (with slack) */
    int64_t vsize;          /* positions of the computed grid: OH * PW, or out_size */
    int64_t *off;           /* kdim row offsets */
} conv_direct;

typedef struct conv_job {
    conv_geom g;
    const void *x, *w, *b;
    void *y;
    int64_t tile, n_tiles, mblock, n_mblocks, activation;
    double alpha, beta;     /* activation parameters */
    const void *z;          /* FusedConv's Z, added before the activation (or NULL) */
    int64_t strip;          /* micro-kernel strip width (packed and direct paths), else 0 */
    conv_direct direct;     /* set up for the direct path (off != NULL) */
    atomic_int failed;
} conv_job;

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

DEFINE_CONV(float, mlrt_sgemm, f32)
DEFINE_CONV(double, mlrt_dgemm, f64)

/* Float tasks over the packed-strip micro-kernels: per block of CONV_KC patch rows, the
 * tile's patch columns are gathered straight into strips of NR positions, then each
 * strip meets all the task's filters; bias and activation finish the last block. */
static void conv_strip_tasks(void *arg, int64_t begin, int64_t end) {
    conv_job *j = arg;
    const conv_geom *g = &j->g;
    const float *x = j->x, *w = j->w, *b = j->b;
    float *y = j->y;
    int64_t NR = j->strip, strips = ceil_div(j->tile, NR);
    float *pack = mlrt_scratch((size_t)(CONV_KC * strips * NR + j->tile + CONV_KC + 16) * sizeof(float));
    if (!pack) { atomic_store(&j->failed, 1); return; }
    float *row = pack + CONV_KC * strips * NR, *zeros = row + j->tile;
    memset(zeros, 0, CONV_KC * sizeof(float));
    int64_t off[CONV_KC];
    for (int64_t k = 0; k < CONV_KC; ++k) off[k] = k * NR;
    bool fast = j->activation == 1 && !j->z; /* Relu in the micro-kernel's store; else finish after */
    for (int64_t t = begin; t < end; ++t) {
        int64_t mb = t % j->n_mblocks, r = t / j->n_mblocks;
        int64_t ct = r % j->n_tiles, ng = r / j->n_tiles;
        int64_t n = ng / g->G, grp = ng % g->G;
        int64_t c0 = ct * j->tile, tw = g->out_size - c0 < j->tile ? g->out_size - c0 : j->tile;
        int64_t m0 = mb * j->mblock, mw = g->Mg - m0 < j->mblock ? g->Mg - m0 : j->mblock;
        if (tw <= 0 || mw <= 0) continue;
        const float *xg = x + (n * g->C + grp * g->Cg) * g->in_size;
        const float *wg = w + (grp * g->Mg + m0) * g->kdim;
        const float *bg = b ? b + grp * g->Mg + m0 : NULL;
        float *yg = y + (n * g->M + grp * g->Mg + m0) * g->out_size + c0;
        int64_t ns = ceil_div(tw, NR);
        for (int64_t k0 = 0; k0 < g->kdim; k0 += CONV_KC) {
            int64_t kc = g->kdim - k0 < CONV_KC ? g->kdim - k0 : CONV_KC;
            for (int64_t k = 0; k < kc; ++k) {
                const float *src = row;
                if (g->pointwise) src = xg + (k0 + k) * g->in_size + c0;
                else im2col_row_f32(xg, g, k0 + k, c0, tw, row);
                for (int64_t s = 0; s < ns; ++s) {
                    float *dst = pack + (s * kc + k) * NR;
                    int64_t w0 = tw - s * NR < NR ? tw - s * NR : NR;
                    memcpy(dst, src + s * NR, (size_t)w0 * sizeof(float));
                    for (int64_t i = w0; i < NR; ++i) dst[i] = 0;
                }
            }
            bool last = k0 + kc >= g->kdim;
            for (int64_t s = 0; s < ns; ++s) {
                int64_t w0 = tw - s * NR < NR ? tw - s * NR : NR;
                mlrt_sgemm_strip(mw, kc, wg + k0, g->kdim, pack + s * kc * NR, off, yg + s * NR, g->out_size, w0,
                                 k0 > 0, last ? bg : NULL, last && fast ? 1 : 0, zeros);
            }
        }
        if (!fast)
            finish_f32(yg, j->z ? (const float *)j->z + (yg - y) : NULL, mw, tw, g->out_size, NULL, j->activation,
                       j->alpha, j->beta);
    }
}

static void direct_pad_planes(void *arg, int64_t begin, int64_t end) {
    const conv_job *j = arg;
    const conv_geom *g = &j->g;
    const conv_direct *d = &j->direct;
    int64_t H = g->in[0], Wd = g->in[1], ph = g->pb[0], pw = g->pb[1], PW = d->PW;
    int64_t PH = g->out[0] + (g->k[0] - 1) * g->d[0];
    for (int64_t plane = begin; plane < end; ++plane) { /* plane = n * C + c */
        const float *x = (const float *)j->x + plane * g->in_size;
        float *p = d->P + plane * d->plane;
        for (int64_t r = 0; r < PH; ++r) { /* zero only the padding around the copied rows */
            float *pr = p + r * PW;
            int64_t ih = r - ph, a = pw < PW ? pw : PW, b = Wd + pw < PW ? Wd + pw : PW;
            if (ih < 0 || ih >= H || b <= a) { memset(pr, 0, (size_t)PW * sizeof(float)); continue; }
            memset(pr, 0, (size_t)a * sizeof(float));
            memcpy(pr + a, x + ih * Wd, (size_t)(b - a) * sizeof(float));
            memset(pr + b, 0, (size_t)(PW - b) * sizeof(float));
        }
        memset(p + PH * PW, 0, (size_t)(d->plane - PH * PW) * sizeof(float));
    }
}

static void conv_direct_tasks(void *arg, int64_t begin, int64_t end) {
    conv_job *j = arg;
    const conv_geom *g = &j->g;
    const conv_direct *d = &j->direct;
    const float *w = j->w, *b = j->b;
    float *y = j->y;
    int64_t NR = j->strip, OW = g->out[1], PW = d->PW;
    bool pointwise = d->P == NULL;
    float *V = mlrt_scratch((size_t)(j->mblock * j->tile + CONV_KC + 16) * sizeof(float));
    if (!V) { atomic_store(&j->failed, 1); return; }
    float *zeros = V + j->mblock * j->tile;
    memset(zeros, 0, CONV_KC * sizeof(float));
    bool fast = j->activation == 1 && !j->z; /* Relu in the micro-kernel's store; else finish after */
    for (int64_t t = begin; t < end; ++t) {
        int64_t mb = t % j->n_mblocks, r = t / j->n_mblocks;
        int64_t ct = r % j->n_tiles, ng = r / j->n_tiles;
        int64_t n = ng / g->G, grp = ng % g->G;
        int64_t v0 = ct * j->tile, tw = d->vsize - v0 < j->tile ? d->vsize - v0 : j->tile;
        int64_t m0 = mb * j->mblock, mw = g->Mg - m0 < j->mblock ? g->Mg - m0 : j->mblock;
        if (tw <= 0 || mw <= 0) continue;
        const float *base = pointwise ? (const float *)j->x + (n * g->C + grp * g->Cg) * g->in_size
                                      : d->P + (n * g->C + grp * g->Cg) * d->plane;
        const float *wg = w + (grp * g->Mg + m0) * g->kdim;
        const float *bg = b ? b + grp * g->Mg + m0 : NULL;
        float *yg = y + (n * g->M + grp * g->Mg + m0) * g->out_size;
        float *dst = pointwise ? yg + v0 : V;
        int64_t ldd = pointwise ? g->out_size : tw;
        for (int64_t k0 = 0; k0 < g->kdim; k0 += CONV_KC) {
            int64_t kc = g->kdim - k0 < CONV_KC ? g->kdim - k0 : CONV_KC;
            bool last = k0 + kc >= g->kdim;
            for (int64_t s = 0; s * NR < tw; ++s) {
                int64_t nr = tw - s * NR < NR ? tw - s * NR : NR;
                mlrt_sgemm_strip(mw, kc, wg + k0, g->kdim, base + v0 + s * NR, d->off + k0, dst + s * NR, ldd, nr,
                                 k0 > 0, last ? bg : NULL, last && fast ? 1 : 0, zeros);
            }
        }
        if (pointwise) {
            if (!fast)
                finish_f32(yg + v0, j->z ? (const float *)j->z + (yg - y) + v0 : NULL, mw, tw, g->out_size, NULL,
                           j->activation, j->alpha, j->beta);
            continue;
        }
        /* copy the grid's real columns out: position v is (v / PW, v % PW) */
        for (int64_t v = v0; v < v0 + tw;) {
            int64_t oh = v / PW, ow = v % PW, run = PW - ow < v0 + tw - v ? PW - ow : v0 + tw - v;
            if (ow < OW) {
                int64_t len = OW - ow < run ? OW - ow : run;
                for (int64_t m = 0; m < mw; ++m)
                    memcpy(yg + m * g->out_size + oh * OW + ow, V + m * tw + (v - v0), (size_t)len * sizeof(float));
                if (!fast)
                    finish_f32(yg + oh * OW + ow, j->z ? (const float *)j->z + (yg - y) + oh * OW + ow : NULL, mw, len,
                               g->out_size, NULL, j->activation, j->alpha, j->beta);
            }
            v += run;
        }
    }
}

/* Decide on (and set up) the direct path: float, 2-D, unit strides, and a grid not so
 * much wider than the output that the dropped columns cost more than packing saves. */
static int conv_direct_setup(conv_job *j, const mlrt_context *ctx) {
    const conv_geom *g = &j->g;
    conv_direct *d = &j->direct;
    memset(d, 0, sizeof *d);
    if (!j->strip || g->nd != 2 || g->s[0] != 1 || g->s[1] != 1) return MLRT_OK;
    int64_t OH = g->out[0], OW = g->out[1];
    int64_t PW = g->pointwise ? OW : OW + (g->k[1] - 1) * g->d[1];
    if (!g->pointwise && g->Mg * (PW - OW) >= 48 * OW) return MLRT_OK;
    int64_t PH = OH + (g->k[0] - 1) * g->d[0];
    d->PW = PW;
    d->plane = g->pointwise ? g->in_size : (PH + 1) * PW + 64; /* slack: the last row's taps read past it */
    d->vsize = g->pointwise ? g->out_size : OH * PW;
    size_t planes = g->pointwise ? 0 : (size_t)(g->N * g->C);
    if (planes * (size_t)d->plane > CONV_DIRECT_MAX_FLOATS) { /* a padded copy that big: pack instead */
        memset(d, 0, sizeof *d);
        return MLRT_OK;
    }
    char *mem = mlrt_scratch_slot(1, (size_t)g->kdim * sizeof(int64_t) + planes * (size_t)d->plane * sizeof(float) + 64);
    if (!mem) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "Conv: cannot allocate the padded input");
    d->off = (int64_t *)mem;
    for (int64_t k = 0; k < g->kdim; ++k) {
        int64_t c = k / g->k_size, kh = k % g->k_size / g->k[1], kw = k % g->k[1];
        d->off[k] = g->pointwise ? k * g->in_size : c * d->plane + kh * g->d[0] * PW + kw * g->d[1];
    }
    if (!g->pointwise) {
        d->P = (float *)(mem + ((size_t)g->kdim * sizeof(int64_t) + 63) / 64 * 64);
        int64_t work = d->plane;
        mlrt_parallel_for(ctx, (int64_t)planes, work >= (1 << 17) ? 1 : (1 << 17) / work + 1, direct_pad_planes, j);
    }
    return MLRT_OK;
}

/* Cut the work into tasks: whole (image, group) products, then column tiles that
 * bound the im2col buffer, then more tiles (or filter blocks) until the threads get
 * equal shares. */
static void conv_plan(conv_job *j, int64_t threads) {
    const conv_geom *g = &j->g;
    int64_t base = g->N * g->G;
    j->n_tiles = 1, j->n_mblocks = 1, j->mblock = g->Mg;
    int64_t size = j->direct.off ? j->direct.vsize : g->out_size;  /* positions to cover */
    if (j->strip) {
        j->n_tiles = ceil_div(size, CONV_STRIP_TILE);  /* a packed tile stays in L2 */
    } else if (!g->pointwise) {
        int64_t limit = CONV_TILE_ELEMS / g->kdim;
        if (limit < 16) limit = 16;
        j->n_tiles = ceil_div(g->out_size, limit);
    }
    int64_t f = 1;
    while (threads > 1 && (base * j->n_tiles * f) % threads != 0 && base * j->n_tiles * f < 8 * threads) ++f;
    if (f > 1) {
        if (ceil_div(size, j->n_tiles * f) >= 32 || g->Mg < 2 * f)
            j->n_tiles *= f;
        else
            j->n_mblocks = f;
    }
    j->tile = ceil_div(size, j->n_tiles);
    int64_t align = j->strip ? j->strip : 16;
    if (j->tile > align && j->n_tiles > 1) j->tile = ceil_div(j->tile, align) * align;
    if (j->tile < 1) j->tile = 1;
    j->n_tiles = ceil_div(size, j->tile);
    j->mblock = ceil_div(g->Mg, j->n_mblocks);
    j->n_mblocks = ceil_div(g->Mg, j->mblock);
}

static int k_conv(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                  const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_conv_params, p, params, params_size);
    MLRT_CHECK(n_in >= 2 && n_in <= 4 && n_out == 1, "Conv: expects 2 to 4 inputs and 1 output");
    const mlrt_tensor *B = n_in >= 3 && mlrt_present(&in[2]) ? &in[2] : NULL;
    const mlrt_tensor *Z = n_in >= 4 && mlrt_present(&in[3]) ? &in[3] : NULL;
    MLRT_CHECK(p->activation >= 0 && p->activation <= 6, "Conv: unknown activation code %lld", (long long)p->activation);
    conv_job j = {.x = in[0].data, .w = in[1].data, .b = B ? B->data : NULL, .y = out[0].data,
                  .activation = p->activation, .alpha = p->alpha, .beta = p->beta, .z = Z ? Z->data : NULL};
    int status = conv_setup(p, &in[0], &in[1], B, &out[0], &j.g);
    if (status) return status;
    MLRT_CHECK(!Z || (Z->dtype == out[0].dtype && mlrt_same_shape(Z, &out[0]) && mlrt_is_contiguous(Z)),
               "Conv: Z must be a contiguous tensor of Y's shape and type");
    int32_t dtype = out[0].dtype;
    if (dtype != MLRT_FLOAT && dtype != MLRT_DOUBLE)
        return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "Conv: element type %d not supported", dtype);
    if (mlrt_numel(&out[0]) == 0) return MLRT_OK;
    atomic_init(&j.failed, 0);
    if (j.g.kdim == 0) { /* no input channels or an empty kernel: bias only */
        j.g.pointwise = false;
        j.tile = j.g.out_size, j.n_tiles = 1, j.mblock = j.g.Mg, j.n_mblocks = 1;
        int64_t planes = j.g.N * j.g.M, S = j.g.out_size;
        for (int64_t t = 0; t < planes; ++t) {
            int64_t m = t % j.g.M;
            if (dtype == MLRT_FLOAT) {
                float *y = (float *)j.y + t * S;
                memset(y, 0, (size_t)S * sizeof(float));
                finish_f32(y, Z ? (const float *)j.z + t * S : NULL, 1, S, S, B ? (const float *)j.b + m : NULL,
                           j.activation, j.alpha, j.beta);
            } else {
                double *y = (double *)j.y + t * S;
                for (int64_t i = 0; i < S; ++i) y[i] = 0;
                finish_f64(y, Z ? (const double *)j.z + t * S : NULL, 1, S, S, B ? (const double *)j.b + m : NULL,
                           j.activation, j.alpha, j.beta);
            }
        }
        return MLRT_OK;
    }
    if (j.g.depthwise) {
        int64_t planes = j.g.N * j.g.M;
        int64_t work = j.g.out_size * j.g.k_size;
        mlrt_parallel_for(ctx, planes, work >= CONV_CHUNK_MIN ? 1 : CONV_CHUNK_MIN / (work + 1) + 1,
                          dtype == MLRT_FLOAT ? dw_tasks_f32 : dw_tasks_f64, &j);
        if (atomic_load(&j.failed)) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "Conv: cannot allocate a padded plane");
        return MLRT_OK;
    }
    j.strip = dtype == MLRT_FLOAT ? mlrt_sgemm_strip_width() : 0;
    if ((status = conv_direct_setup(&j, ctx))) return status;
    conv_plan(&j, mlrt_ctx_threads(ctx));
    int64_t tasks = j.g.N * j.g.G * j.n_tiles * j.n_mblocks;
    double flops = (double)j.g.N * (double)j.g.M * (double)j.g.out_size * (double)j.g.kdim;
    mlrt_range_fn fn = j.direct.off ? conv_direct_tasks
                       : j.strip    ? conv_strip_tasks
                       : dtype == MLRT_FLOAT ? conv_tasks_f32 : conv_tasks_f64;
    if (flops < (double)CONV_PARALLEL_MIN)
        fn(&j, 0, tasks);
    else
        mlrt_parallel_for(ctx, tasks, 1, fn, &j);
    if (atomic_load(&j.failed))
        return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "Conv: cannot allocate the im2col buffer (%lld bytes)",
                         (long long)(j.g.kdim * j.tile * (int64_t)mlrt_dtype_size(dtype)));
    return MLRT_OK;
}

MLRT_KERNEL(conv, "Conv", "", 1, MLRT_OPSET_MAX, MLRT_MASK_FLOATS, k_conv);
/* com.microsoft FusedConv (as onnxruntime): activation(Conv(X, W, B) + Z), for fusion passes */
MLRT_KERNEL(fusedconv, "FusedConv", "com.microsoft", 1, MLRT_OPSET_MAX, MLRT_MASK_FLOATS, k_conv);
