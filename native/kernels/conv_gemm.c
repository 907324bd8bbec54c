/* conv_gemm.c -- Conv, patch-matrix paths: the patch columns (im2col) of a tile of
 * output positions times the group's filters.
 *   - float32 with a SIMD micro-kernel (AVX2 / AVX-512) where the direct path does not
 *     go (3-D and up, strides over 4, a padded copy too large): the columns are gathered
 *     straight into packed strips for the micro-kernels of src/gemm.c, bias, Z and the
 *     activations they know in their store;
 *   - otherwise (float64, or no micro-kernel) BLAS: pointwise convs (1x1, stride 1, no
 *     pads) multiply X in place; others gather the tile's patch columns into a private
 *     buffer first.
 * Row kk = (c, kh, kw) of a group's patch matrix holds, for each output position, the
 * input element that tap (kh, kw) of channel c reads there (0 in the padding). */
#include "conv_internal.h"
#include "gemm.h"

/* The im2col functions take the element size es (4: float, 8: double); they are inlined
 * into im2col_row_f32 / _f64 below, so each element type gets code of its own. */
#define IM2COL static inline __attribute__((always_inline))

/* Copy n elements of es bytes, every stride-th of src, to dst. */
IM2COL void gather(void *dst, const void *src, int64_t n, int64_t stride, size_t es) {
    if (stride == 1) {
        memcpy(dst, src, (size_t)n * es);
    } else if (es == sizeof(float)) {
        float *d = dst;
        const float *s = src;
        for (int64_t i = 0; i < n; ++i) d[i] = s[i * stride];
    } else {
        double *d = dst;
        const double *s = src;
        for (int64_t i = 0; i < n; ++i) d[i] = s[i * stride];
    }
}

/* Row kk of a 2-D patch matrix, over output positions [p0, p0 + tw), into dst. */
IM2COL void im2col_row_2d(const char *x, size_t es, const conv_geom *g, int64_t kk, int64_t p0, int64_t tw,
                          char *dst) {
    int64_t H = g->in[0], Wd = g->in[1], OW = g->out[1], KW = g->k[1];
    int64_t sh = g->s[0], sw = g->s[1], dh = g->d[0], dw = g->d[1], ph = g->pb[0], pw = g->pb[1];
    int64_t c = kk / g->k_size, kh = kk % g->k_size / KW, kw = kk % KW;
    const char *xc = x + (size_t)(c * g->in_size) * es;
    int64_t off = kw * dw - pw; /* iw = ow * sw + off */
    int64_t lo = off >= 0 ? 0 : (-off + sw - 1) / sw;  /* the output columns [lo, hi) read inside the row */
    int64_t hi = Wd - off > 0 ? (Wd - off + sw - 1) / sw : 0;
    if (hi > OW) hi = OW;
    int64_t oh = p0 / OW, ow = p0 % OW, left = tw;
    while (left > 0) {
        int64_t seg = OW - ow < left ? OW - ow : left;
        int64_t ih = oh * sh - ph + kh * dh;
        if (ih < 0 || ih >= H) {
            memset(dst, 0, (size_t)seg * es);
        } else {
            int64_t a = lo < ow ? ow : lo > ow + seg ? ow + seg : lo;
            int64_t b = hi < a ? a : hi > ow + seg ? ow + seg : hi;
            if (a > ow) memset(dst, 0, (size_t)(a - ow) * es);
            if (b > a) gather(dst + (size_t)(a - ow) * es, xc + (size_t)(ih * Wd + off + a * sw) * es, b - a, sw, es);
            if (ow + seg > b) memset(dst + (size_t)(b - ow) * es, 0, (size_t)(ow + seg - b) * es);
        }
        dst += (size_t)seg * es, left -= seg, ow = 0, ++oh;
    }
}

/* The same for any spatial rank (3-D and up): odometer over output positions. */
IM2COL void im2col_row_nd(const char *x, size_t es, const conv_geom *g, int64_t kk, int64_t p0, int64_t tw,
                          char *dst) {
    int32_t nd = g->nd;
    int64_t kidx[CONV_MAX_SPATIAL], oidx[CONV_MAX_SPATIAL];
    int64_t rest = kk % g->k_size;
    for (int32_t d = nd - 1; d >= 0; --d) kidx[d] = rest % g->k[d], rest /= g->k[d];
    rest = p0;
    for (int32_t d = nd - 1; d >= 0; --d) oidx[d] = rest % g->out[d], rest /= g->out[d];
    const char *xc = x + (size_t)(kk / g->k_size * g->in_size) * es;
    for (int64_t i = 0; i < tw; ++i) {
        int64_t at = 0;
        bool ok = true;
        for (int32_t d = 0; d < nd; ++d) {
            int64_t ii = oidx[d] * g->s[d] - g->pb[d] + kidx[d] * g->d[d];
            ok = ok && ii >= 0 && ii < g->in[d];
            at = at * g->in[d] + ii;
        }
        if (es == sizeof(float)) ((float *)dst)[i] = ok ? ((const float *)xc)[at] : 0;
        else ((double *)dst)[i] = ok ? ((const double *)xc)[at] : 0;
        mlrt_index_next(oidx, g->out, nd);
    }
}

/* Row kk of the patch matrix of group input x, per element type (pointwise convs need
 * none: their patch matrix is X itself).  Loops 32-byte aligned: the gather loop is so
 * short that an unlucky alignment (across two fetch windows) was seen to cost a 7x7
 * stride-2 conv 15% of its time. */
#if defined(__GNUC__) && !defined(__clang__)
#define ALIGNED_LOOPS __attribute__((optimize("align-loops=32")))
#else
#define ALIGNED_LOOPS /* (clang has no per-function optimize attribute) */
#endif

ALIGNED_LOOPS static void im2col_row_f32(const float *x, const conv_geom *g, int64_t kk, int64_t p0, int64_t tw,
                                         float *dst) {
    if (g->nd == 2) im2col_row_2d((const char *)x, sizeof(float), g, kk, p0, tw, (char *)dst);
    else im2col_row_nd((const char *)x, sizeof(float), g, kk, p0, tw, (char *)dst);
}

ALIGNED_LOOPS static void im2col_row_f64(const double *x, const conv_geom *g, int64_t kk, int64_t p0, int64_t tw,
                                         double *dst) {
    if (g->nd == 2) im2col_row_2d((const char *)x, sizeof(double), g, kk, p0, tw, (char *)dst);
    else im2col_row_nd((const char *)x, sizeof(double), g, kk, p0, tw, (char *)dst);
}

/* BLAS tasks: Y tile (mw filters x tw positions) = W rows times the patch columns,
 * which a task keeps while consecutive tasks share (image, group, tile). */
void mlrt_conv_gemm_tasks(void *arg, int64_t begin, int64_t end) {
    conv_job *j = arg;
    const conv_geom *g = &j->g;
    bool f32 = j->dtype == MLRT_FLOAT;
    size_t es = f32 ? sizeof(float) : sizeof(double);
    char *col = NULL;
    if (!g->pointwise) {
        col = mlrt_scratch((size_t)(g->kdim * j->tile) * es);
        if (!col) { atomic_store(&j->failed, 1); return; }
    }
    int64_t have = -1; /* which (image, group, tile) col holds */
    for (int64_t t = begin; t < end; ++t) {
        conv_task k;
        if (!conv_task_at(j, t, g->out_size, &k)) continue;
        int64_t n = k.n, grp = k.grp, c0 = k.c0, tw = k.tw, m0 = k.m0, mw = k.mw;
        int64_t r = t / j->n_mblocks; /* the (image, group, tile) the patch columns are for */
        int64_t xo = (n * g->C + grp * g->Cg) * g->in_size, wo = (grp * g->Mg + m0) * g->kdim;
        int64_t yo = (n * g->M + grp * g->Mg + m0) * g->out_size + c0, bo = grp * g->Mg + m0;
        const char *src = col; /* the patch columns, ld tw; pointwise: X itself, ld in_size */
        int64_t ld = tw;
        if (g->pointwise) {
            src = (const char *)j->x + (size_t)(xo + c0) * es, ld = g->in_size;
        } else if (have != r) {
            const char *xg = (const char *)j->x + (size_t)xo * es;
            for (int64_t kk = 0; kk < g->kdim; ++kk) {
                if (f32) im2col_row_f32((const float *)xg, g, kk, c0, tw, (float *)col + kk * tw);
                else im2col_row_f64((const double *)xg, g, kk, c0, tw, (double *)col + kk * tw);
            }
            have = r;
        }
        if (f32) {
            float *y = (float *)j->y + yo;
            const float *b = j->b;
            mlrt_sgemm(NULL, false, false, mw, tw, g->kdim, 1, (const float *)j->w + wo, g->kdim,
                       (const float *)src, ld, 0, y, g->out_size);
            mlrt_epilogue_f32(y, j->z ? (const float *)j->z + yo : NULL, mw, tw, g->out_size, b ? b + bo : NULL,
                              j->activation, j->alpha, j->beta);
        } else {
            double *y = (double *)j->y + yo;
            const double *b = j->b;
            mlrt_dgemm(NULL, false, false, mw, tw, g->kdim, 1, (const double *)j->w + wo, g->kdim,
                       (const double *)src, ld, 0, y, g->out_size);
            mlrt_epilogue_f64(y, j->z ? (const double *)j->z + yo : NULL, mw, tw, g->out_size, b ? b + bo : NULL,
                              j->activation, j->alpha, j->beta);
        }
    }
}

/* Float tasks over the packed-strip micro-kernels: per block of CONV_KC patch rows, the
 * tile's patch columns are gathered straight into strips of NR positions, then each
 * strip meets all the task's filters; the last block's store adds bias and Z and applies
 * the activations the kernels know (the others follow). */
void mlrt_conv_strip_tasks(void *arg, int64_t begin, int64_t end) {
    conv_job *j = arg;
    const conv_geom *g = &j->g;
    const float *x = j->x, *b = j->b;
    float *y = j->y;
    int64_t NR = j->strip, strips = ceil_div(j->tile, NR);
    float *pack = mlrt_scratch((size_t)(CONV_KC * strips * NR + j->tile + 16) * sizeof(float));
    if (!pack) { atomic_store(&j->failed, 1); return; }
    float *row = pack + CONV_KC * strips * NR;
    int64_t off[CONV_KC];
    for (int64_t k = 0; k < CONV_KC; ++k) off[k] = k * NR;
    for (int64_t t = begin; t < end; ++t) {
        conv_task k;
        if (!conv_task_at(j, t, g->out_size, &k)) continue;
        int64_t n = k.n, grp = k.grp, c0 = k.c0, tw = k.tw, m0 = k.m0, mw = k.mw;
        const float *xg = x + (n * g->C + grp * g->Cg) * g->in_size;
        mlrt_sgemm_a A = conv_filters(j, grp);
        const float *bg = b ? b + grp * g->Mg + m0 : NULL;
        float *yg = y + (n * g->M + grp * g->Mg + m0) * g->out_size + c0;
        mlrt_strip_epilogue fin;
        bool later = conv_strip_epilogue(j, bg, j->z ? (const float *)j->z + (yg - y) : NULL, &fin);
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
            mlrt_sgemm_strips(mw, kc, &A, m0, k0, pack, off, kc * NR, yg, g->out_size, tw, k0 > 0,
                              k0 + kc >= g->kdim ? &fin : NULL);
        }
        if (later)
            mlrt_epilogue_f32(yg, NULL, mw, tw, g->out_size, NULL, j->activation, j->alpha, j->beta);
    }
}
