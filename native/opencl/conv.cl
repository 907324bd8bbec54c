/* Conv and FusedConv (com.microsoft): 1-D, 2-D and 3-D convolution with groups,
 * strides, dilations, pads, optional bias, and FusedConv's residual Z and activation.
 *
 * Every path computes on a *grid*: the input, zero-padded and split by stride phase,
 * is packed (mlrt_conv_pack) into float planes where output position p of one channel
 * meets filter tap k at element p + off[k].  A stride-s window splits the padded
 * input into s x s phase planes P_ab[i][j] = Xpad[i*s + a][j*s + b]; tap (kh, kw)
 * reads phase ((kh*dh) % s, (kw*dw) % s) shifted by ((kh*dh) / s, (kw*dw) / s), so
 * every row of the patch matrix is a contiguous run of its plane and no tap needs a
 * bounds check.  The grid is GW wide (OW plus the largest column shift): columns
 * past OW, and rows past OH in 3-D, are computed and dropped by the store.
 *
 * Kernels:
 *   mlrt_conv_pack      X (T) -> packed planes (float), one row per work-item (a float32
 *                       pointwise conv reads X as it is, flag 4);
 *   mlrt_conv_pack_w    W (T) -> filters packed for mlrt_conv_gemm (when W is not a constant);
 *   mlrt_conv_gemm      implicit GEMM, register-blocked: CONV_MB filters x CONV_TP grid
 *                       positions per work-item, float16 vectors (CPU devices);
 *   mlrt_conv_gemm_tiled implicit GEMM with local-memory tiles (GPU devices);
 *   mlrt_conv_direct    one filter x 16 positions per work-item (depthwise, few
 *                       filters per group).
 * The geometry (3 spatial dims, 1-D/2-D padded with leading 1s) is worked out on the host
 * and read as the structs of conv_geometry.h.
 */

/* Build options from conv.py: CONV_MB filters and CONV_NV float16 vectors of grid
 * positions per work-item in mlrt_conv_gemm; CONV_TM filters x CONV_TN grid positions per
 * work-group of mlrt_conv_gemm_tiled. */
#if !defined(CONV_MB) || !defined(CONV_NV) || !defined(CONV_TM) || !defined(CONV_TN)
#error "CONV_MB, CONV_NV, CONV_TM and CONV_TN are build options from conv.py"
#endif
#define CONV_TP (16 * CONV_NV) /* grid positions per work-item of mlrt_conv_gemm */

/* FusedConv activations (mlrt_conv_params.activation codes), as the C kernel computes them. */
inline float conv_act(float v, int act, float alpha, float beta)
{
    switch (act) {
    case MLRT_CONV_ACT_RELU: return v > 0.0f ? v : (isnan(v) ? v : 0.0f);
    case MLRT_CONV_ACT_LEAKY_RELU: return v >= 0.0f ? v : alpha * v;
    case MLRT_CONV_ACT_CLIP: return v < alpha ? alpha : (v > beta ? beta : v);
    case MLRT_CONV_ACT_SIGMOID: return 1.0f / (1.0f + exp(-v));
    case MLRT_CONV_ACT_TANH: return tanh(v);
    case MLRT_CONV_ACT_HARD_SIGMOID: { float h = alpha * v + beta; return h < 0.0f ? 0.0f : (h > 1.0f ? 1.0f : h); }
    case MLRT_CONV_ACT_HARD_SWISH: { float h = alpha * v + beta; return v * (h < 0.0f ? 0.0f : (h > 1.0f ? 1.0f : h)); }
    case MLRT_CONV_ACT_SWISH: return v / (1.0f + exp(-alpha * v));
    default: return v;
    }
}

/* The geometry every compute kernel shares (mlrt_conv_geometry, in device memory) and
 * what mlrt_conv_pack reads (mlrt_conv_packing): worked out on the host. */
#include "conv_geometry.h"

/* Output index of grid position p of filter m, image n; -1 for a dropped position. */
inline long conv_out_index(__global const mlrt_conv_geometry *g, long p)
{
    long gw = g->gw, gh = g->gh;
    long ow = p % gw, t = p / gw, oh = t % gh, od = t / gh;
    if (p >= g->p || ow >= g->ow || oh >= g->oh) return -1;
    return (od * g->oh + oh) * g->ow + ow;
}

/* Finish one output element: + bias, + Z, activation, store. */
inline void conv_store(__global const mlrt_conv_geometry *g, __global const T *bias, __global const T *z, __global T *y,
                       long n, long m, long o, float v, int act, float alpha, float beta)
{
    long idx = (n * g->m + m) * g->osize + o;
    if (g->flags & 1) v += LOAD(bias, m);
    if (g->flags & 2) v += LOAD(z, idx);
    STORE(y, idx, conv_act(v, act, alpha, beta));
}


/* conv_act on 16 values (the same NaN behaviour). */
inline float16 conv_act16(float16 v, int act, float alpha, float beta)
{
    switch (act) {
    case MLRT_CONV_ACT_RELU: return select((float16)(0.0f), v, (v > 0.0f) | isnan(v));
    case MLRT_CONV_ACT_LEAKY_RELU: return select(alpha * v, v, v >= 0.0f);
    case MLRT_CONV_ACT_CLIP: return select(select(v, (float16)(beta), v > beta), (float16)(alpha), v < alpha);
    case MLRT_CONV_ACT_SIGMOID: return 1.0f / (1.0f + exp(-v));
    case MLRT_CONV_ACT_TANH: return tanh(v);
    case MLRT_CONV_ACT_HARD_SIGMOID: { float16 h = alpha * v + beta;
              return select(select(h, (float16)(1.0f), h > 1.0f), (float16)(0.0f), h < 0.0f); }
    case MLRT_CONV_ACT_HARD_SWISH: { float16 h = alpha * v + beta;
              return v * select(select(h, (float16)(1.0f), h > 1.0f), (float16)(0.0f), h < 0.0f); }
    case MLRT_CONV_ACT_SWISH: return v / (1.0f + exp(-alpha * v));
    default: return v;
    }
}

/* conv_store for 16 consecutive outputs o .. o + 15 of one row. */
inline void conv_store16(__global const mlrt_conv_geometry *g, __global const T *bias, __global const T *z,
                         __global T *y, long n, long m, long o, float16 v, int act, float alpha, float beta)
{
    long idx = (n * g->m + m) * g->osize + o;
    if (g->flags & 1) v += LOAD(bias, m);
    if (g->flags & 2) v += LOAD16(z, idx);
    STORE16(y, idx, conv_act16(v, act, alpha, beta));
}

/* Pack X (N*C planes of D x H x W) into phase planes: dst[nc][f][l][i][j] =
 * X[nc][l*sd + ad - pd][i*sh + ah - ph][j*sw + aw - pw], zero outside X.  One row
 * (nc, f, l, i) of GW elements per work-item; phase = nphase x (ad, ah, aw). */
__kernel void mlrt_conv_pack(__global const T *x, __global float *dst, __global const mlrt_conv_packing *q,
                             __global const int *phase, long rows)
{
    long r = get_global_id(0);
    if (r >= rows) return;
    long D = q->x_shape[0], H = q->x_shape[1], W = q->x_shape[2];
    long GH = q->grid[1], GW = q->grid[2], nph = q->nphase, gdh = q->grid[0] * GH;
    long t = r / gdh, li = r % gdh, l = li / GH, i = li % GH;
    int f = (int)(t % nph);
    long nc = t / nph;
    long id = l * q->strides[0] + phase[3 * f] - q->pads[0];
    long ih = i * q->strides[1] + phase[3 * f + 1] - q->pads[1];
    long sw = q->strides[2], iw0 = phase[3 * f + 2] - q->pads[2];
    __global float *d = dst + r * GW;
    if (id < 0 || id >= D || ih < 0 || ih >= H) {
        for (long j = 0; j < GW; ++j) d[j] = 0.0f;
        return;
    }
    /* columns j with 0 <= iw0 + j*sw < W: [lo, hi) */
    long lo = iw0 >= 0 ? 0 : (-iw0 + sw - 1) / sw;
    long hi = W - iw0 > 0 ? (W - iw0 + sw - 1) / sw : 0;
    lo = min(lo, GW);
    hi = clamp(hi, lo, GW);
    __global const T *xr = x + ((nc * D + id) * H + ih) * W + iw0;
    for (long j = 0; j < lo; ++j) d[j] = 0.0f;
    if (sw == 1)
        for (long j = lo; j < hi; ++j) d[j] = LOAD(xr, j);
    else
        for (long j = lo; j < hi; ++j) d[j] = LOAD(xr, j * sw);
    for (long j = hi; j < GW; ++j) d[j] = 0.0f;
}

/* Filters W (G*Mg rows of K) into blocks of CONV_MB: dst[g][mb][k][mm], zero past Mg. */
__kernel void mlrt_conv_pack_w(__global const T *w, __global float *dst, long Mg, long K, long nmb, long total)
{
    long idx = get_global_id(0);
    if (idx >= total) return;
    long mm = idx % CONV_MB, t = idx / CONV_MB;
    long k = t % K; t /= K;
    long mb = t % nmb, grp = t / nmb;
    long m = mb * CONV_MB + mm;
    dst[idx] = m < Mg ? LOAD(w, (grp * Mg + m) * K + k) : 0.0f;
}

/* acc[m][v] += wk[m] * xv[v] for the CONV_MB x CONV_NV block. */
#define CONV_MAD_BLOCK(wk_)                                                                \
    {                                                                                      \
        __global const float *wk = (wk_);                                                  \
        _Pragma("unroll") for (int m = 0; m < CONV_MB; ++m) {                              \
            float16 wm = (float16)(wk[m]);                                                 \
            _Pragma("unroll") for (int v = 0; v < CONV_NV; ++v) acc[m][v] = mad(wm, xv[v], acc[m][v]); \
        }                                                                                  \
    }

/* Implicit GEMM, register-blocked: work-item (mb, tile, n*G + group) computes filters
 * mb*CONV_MB .. +CONV_MB of the group at grid positions tile*CONV_TP .. +CONV_TP
 * (CONV_NV float16 vectors per filter).  mb runs fastest, so the work-items sharing a
 * tile of the packed input run one after another while it is in cache. */
__kernel void mlrt_conv_gemm(__global const float *B, __global const int *off, __global const float *Wp,
                             __global const T *bias, __global const T *z, __global T *y,
                             __global const mlrt_conv_geometry *g, int act, float alpha, float beta)
{
    long p0 = (long)get_global_id(1) * CONV_TP;
    if (p0 >= g->p) return;
    long mb = get_global_id(0), ng = get_global_id(2);
    long G = g->c / g->cg, n = ng / G, grp = ng % G;
    int K = (int)g->k;
    __global const float *bp = B + (n * g->c + grp * g->cg) * g->cstride + p0;
    __global const float *wp = Wp + (grp * g->nmb + mb) * (long)K * CONV_MB;

    float16 acc[CONV_MB][CONV_NV];
#pragma unroll
    for (int m = 0; m < CONV_MB; ++m)
#pragma unroll
        for (int v = 0; v < CONV_NV; ++v) acc[m][v] = (float16)(0.0f);
    if (p0 + CONV_TP <= g->p || !(g->flags & 4)) {
        for (int k = 0; k < K; ++k) {
            __global const float *bk = bp + off[k];
            float16 xv[CONV_NV];
#pragma unroll
            for (int v = 0; v < CONV_NV; ++v) xv[v] = vload16(v, bk);
            CONV_MAD_BLOCK(wp + k * CONV_MB)
        }
    } else {  /* B is X itself (no slack after it): the last tile reads only inside the grid */
        int have = (int)(g->p - p0);
        for (int k = 0; k < K; ++k) {
            __global const float *bk = bp + off[k];
            float tmp[CONV_TP];
            for (int i = 0; i < CONV_TP; ++i) tmp[i] = i < have ? bk[i] : 0.0f;
            float16 xv[CONV_NV];
#pragma unroll
            for (int v = 0; v < CONV_NV; ++v) xv[v] = vload16(v, tmp);
            CONV_MAD_BLOCK(wp + k * CONV_MB)
        }
    }

    long m0 = grp * g->mg + mb * CONV_MB;
    int mw = (int)min((long)CONV_MB, g->mg - mb * CONV_MB);
#pragma unroll
    for (int v = 0; v < CONV_NV; ++v) {
        long p = p0 + 16 * v, o = conv_out_index(g, p);
        if (o >= 0 && p % g->gw + 16 <= g->ow) {  /* all 16 in one output row */
#pragma unroll
            for (int m = 0; m < CONV_MB; ++m)
                if (m < mw) conv_store16(g, bias, z, y, n, m0 + m, o, acc[m][v], act, alpha, beta);
        } else {
            long oi[16];
            for (int i = 0; i < 16; ++i) oi[i] = conv_out_index(g, p + i);
#pragma unroll
            for (int m = 0; m < CONV_MB; ++m) {
                float r[16];
                vstore16(acc[m][v], 0, r);
                for (int i = 0; i < 16; ++i)
                    if (m < mw && oi[i] >= 0) conv_store(g, bias, z, y, n, m0 + m, oi[i], r[i], act, alpha, beta);
            }
        }
    }
}

/* Implicit GEMM with local-memory tiles (for GPUs): a 16 x 16 work-group computes
 * CONV_TM filters x CONV_TN grid positions, each work-item a 4 x 4 block strided by 16
 * (conflict-free local reads, coalesced stores); per step CONV_TK patch rows of W and
 * of the packed input are staged in local memory.  W is read as given (T). */
#if CONV_TM != 64 || CONV_TN != 64
#error "CONV_TM and CONV_TN are 64: a 16 x 16 work-group of 4 x 4 blocks"
#endif
#define CONV_TK 16
__kernel __attribute__((reqd_work_group_size(16, 16, 1)))
void mlrt_conv_gemm_tiled(__global const float *B, __global const int *off, __global const T *w,
                          __global const T *bias, __global const T *z, __global T *y,
                          __global const mlrt_conv_geometry *g, int act, float alpha, float beta)
{
    __local float ws[CONV_TK][CONV_TM + 1];
    __local float bs[CONV_TK][CONV_TN + 1];
    int tx = get_local_id(0), ty = get_local_id(1), lid = ty * 16 + tx;
    long p0 = (long)get_group_id(0) * CONV_TN, mt0 = (long)get_group_id(1) * CONV_TM, ng = get_global_id(2);
    long G = g->c / g->cg, n = ng / G, grp = ng % G, P = g->p, Mg = g->mg;
    int K = (int)g->k;
    __global const float *bp = B + (n * g->c + grp * g->cg) * g->cstride;
    __global const T *wg = w + (grp * Mg) * (long)K;
    float acc[4][4];
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) acc[i][j] = 0.0f;
    for (int k0 = 0; k0 < K; k0 += CONV_TK) {
        for (int r = 0; r < CONV_TM * CONV_TK / 256; ++r) {
            int e = lid + 256 * r, kk = e % CONV_TK, mm = e / CONV_TK;
            long m = mt0 + mm;
            ws[kk][mm] = (k0 + kk < K && m < Mg) ? LOAD(wg, m * K + k0 + kk) : 0.0f;
        }
        for (int r = 0; r < CONV_TN * CONV_TK / 256; ++r) {
            int e = lid + 256 * r, pp = e % CONV_TN, kk = e / CONV_TN;
            long p = p0 + pp;
            bs[kk][pp] = (k0 + kk < K && p < P) ? bp[off[k0 + kk] + p] : 0.0f;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int kk = 0; kk < CONV_TK; ++kk) {
            float a[4], b[4];
            for (int i = 0; i < 4; ++i) a[i] = ws[kk][ty + 16 * i];
            for (int j = 0; j < 4; ++j) b[j] = bs[kk][tx + 16 * j];
            for (int i = 0; i < 4; ++i)
                for (int j = 0; j < 4; ++j) acc[i][j] = mad(a[i], b[j], acc[i][j]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (int i = 0; i < 4; ++i) {
        long m = mt0 + ty + 16 * i;
        if (m >= Mg) continue;
        for (int j = 0; j < 4; ++j) {
            long o = conv_out_index(g, p0 + tx + 16 * j);
            if (o >= 0) conv_store(g, bias, z, y, n, grp * Mg + m, o, acc[i][j], act, alpha, beta);
        }
    }
}

/* One filter per work-item (tile, m, n): depthwise and groups with few filters.
 * W is read as given (M rows of K, element type T). */
__kernel void mlrt_conv_direct(__global const float *B, __global const int *off, __global const T *w,
                               __global const T *bias, __global const T *z, __global T *y,
                               __global const mlrt_conv_geometry *g, int act, float alpha, float beta)
{
    long p0 = (long)get_global_id(0) * 16;
    if (p0 >= g->p) return;
    long m = get_global_id(1), n = get_global_id(2);
    long grp = m / g->mg;
    int K = (int)g->k;
    __global const float *bp = B + (n * g->c + grp * g->cg) * g->cstride + p0;
    __global const T *wm = w + m * (long)K;
    float16 acc = (float16)(0.0f);
    if (p0 + 16 <= g->p || !(g->flags & 4)) {
        for (int k = 0; k < K; ++k) acc = mad((float16)(LOAD(wm, k)), vload16(0, bp + off[k]), acc);
    } else {  /* B is X itself: read only inside the grid */
        int have = (int)(g->p - p0);
        for (int k = 0; k < K; ++k) {
            float tmp[16];
            for (int i = 0; i < 16; ++i) tmp[i] = i < have ? bp[off[k] + i] : 0.0f;
            acc = mad((float16)(LOAD(wm, k)), vload16(0, tmp), acc);
        }
    }
    long o = conv_out_index(g, p0);
    if (o >= 0 && p0 % g->gw + 16 <= g->ow) {  /* all 16 in one output row */
        conv_store16(g, bias, z, y, n, m, o, acc, act, alpha, beta);
        return;
    }
    float r[16];
    vstore16(acc, 0, r);
    for (int i = 0; i < 16; ++i) {
        o = conv_out_index(g, p0 + i);
        if (o >= 0) conv_store(g, bias, z, y, n, m, o, r[i], act, alpha, beta);
    }
}
