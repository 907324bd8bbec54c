/* conv_winograd.c -- Conv, Winograd path: float32, 2-D, 3 x 3 filters, stride 1, no
 * dilation, as F(4x4, 3x3) (Lavin and Gray, "Fast Algorithms for Convolutional Neural
 * Networks", 2015).  Each 4 x 4 block of output (a tile) comes from the 6 x 6 block of
 * input under it as
 *     Y = A^T [ U . V ] A,   U = G g G^T (per filter and channel),  V = B^T d B,
 * 36 products summed over the channels where direct convolution takes 144, so the sum
 * over channels becomes 36 independent matrix products
 *     M[xi] (filters x tiles) = U[xi] (filters x channels) * V[xi] (channels x tiles).
 * The plan makes U once (mlrt_conv_winograd_pack, each U[xi] packed for the strip micro-
 * kernels of src/gemm.c); a run, per image and group, in chunks of whole rows of tiles
 * that bound V's size,
 *   1. transforms the input (tasks over channels): rows of B^T d as whole padded input
 *      rows, then B^T d B per tile, into V[xi][c][tile];
 *   2. multiplies and transforms back (tasks over blocks of 64 tiles x 48 filters): the
 *      36 products of a block stay in L2, A^T M A is taken 64 tiles at a time, and bias,
 *      Z and the activation are finished on the written rows.
 * The transforms add roundings that direct convolution does not have: results differ
 * from it by a few units in the last place of the largest terms of the sum.
 * conv.c takes this path where the plan packed W this way (params.winograd), which
 * mlrt_conv_winograd_fits decides. */
#include <stdlib.h>

#include "conv.h"
#include "conv_internal.h"
#include "fastmath.h"
#include "gemm.h"

#define WG_XI 36          /* products per tile */
#define WG_TB 64          /* tiles per block: one strip of the AVX-512 kernels */
#define WG_MB 48          /* filters per block (a multiple of the panel, 6): 36 x 48 x 64 floats, 432 KB */
#define WG_MB_MAX 72      /* ... up to this many where that shares the blocks out evenly (wg_block_filters) */
#define WG_V_FLOATS (INT64_C(1) << 18) /* V of one chunk: at most 8 MB (or one row of tiles) */
/* Where the path pays (measured on AVX-512, 2 threads, against the other paths): enough
 * channels that the products outweigh the transforms, and enough tiles that each U[xi],
 * four times W's size, is used often once read from memory (7 x 7 outputs are not).
 * Under 32 channels the transforms cost more than the products save (16 channels to 32
 * filters at 38 x 16: 2.2x the filter-vector path's time; 16 to 16 at 160 x 160: 2x the
 * direct path's); from 32 channels, to 32 filters or more the filter-vector path is as
 * fast or faster until 2048 channel-filter pairs (32 to 32 at 56 x 56: 1.2-1.3x), while
 * to fewer filters (which fill half its vectors) Winograd stays the fastest (64 to 16
 * at 28 x 28: 0.65x the direct path). */
#define WG_MIN_CHANNELS 32
#define WG_MIN_FILTERS 8
#define WG_FVEC_FILTERS 32 /* from here the filter-vector path fills its vectors */
#define WG_MIN_PRODUCT 2048 /* ... and Winograd needs this many channel-filter pairs to pay */
#define WG_MIN_TILES 8
#define WG_FVEC_TILES 16

int mlrt_conv_winograd_fits(const mlrt_conv_params *p, int64_t channels, int64_t filters, int64_t height,
                            int64_t width) {
    if (!p || mlrt_cpu_isa() == MLRT_ISA_PORTABLE || p->n_spatial != 2 || p->group < 1) return 0;
    const char *off = getenv("MLRT_CONV_WINOGRAD"); /* "0": never (to compare with the other paths) */
    if (off && strcmp(off, "0") == 0) return 0;
    for (int i = 0; i < 2; ++i)
        if (p->kernel[i] != 3 || p->strides[i] != 1 || p->dilations[i] != 1) return 0;
    if (channels % p->group || filters % p->group) return 0;
    int64_t cg = channels / p->group, mg = filters / p->group;
    int64_t oh = height + p->pads_begin[0] + p->pads_end[0] - 2, ow = width + p->pads_begin[1] + p->pads_end[1] - 2;
    if (cg < WG_MIN_CHANNELS || mg < WG_MIN_FILTERS || (mg >= WG_FVEC_FILTERS && cg * mg < WG_MIN_PRODUCT) || oh < 1 ||
        ow < 1)
        return 0;
    int64_t tiles = ceil_div(oh, 4) * ceil_div(ow, 4);
    /* up to 16 x 16 outputs the filter-vector path is faster where it runs: 1.4-1.6x at
     * 10 x 10 on AVX-512 (a 10 x 10's tiles compute 144 outputs for its 100); at 14 x 14
     * over 256 channels 10% in ResNet-50, though 30% slower alone, the four-times-larger
     * U[xi] streaming from memory for 16 tiles */
    if (tiles <= WG_FVEC_TILES && mlrt_conv_fvec_fits(p, channels, filters, height, width)) return 0;
    return tiles >= WG_MIN_TILES;
}

int64_t mlrt_conv_winograd_size(int64_t group, int64_t filters, int64_t channels_per_group) {
    if (group < 1 || filters < 0 || channels_per_group < 0 || filters % group) return 0;
    return group * WG_XI * mlrt_sgemm_packed_size(filters / group, channels_per_group);
}

/* U = G g G^T of one 3 x 3 filter g (row-major), in double, rounded once. */
static void wg_filter(const float *g, float u[WG_XI]) {
    double t[6][3], r[3];
    for (int c = 0; c < 3; ++c) { /* G times each column of g */
        double g0 = g[c], g1 = g[3 + c], g2 = g[6 + c];
        t[0][c] = g0 / 4;
        t[1][c] = -(g0 + g1 + g2) / 6;
        t[2][c] = -(g0 - g1 + g2) / 6;
        t[3][c] = g0 / 24 + g1 / 12 + g2 / 6;
        t[4][c] = g0 / 24 - g1 / 12 + g2 / 6;
        t[5][c] = g2;
    }
    for (int i = 0; i < 6; ++i) { /* each row of that times G^T */
        r[0] = t[i][0], r[1] = t[i][1], r[2] = t[i][2];
        u[i * 6 + 0] = (float)(r[0] / 4);
        u[i * 6 + 1] = (float)(-(r[0] + r[1] + r[2]) / 6);
        u[i * 6 + 2] = (float)(-(r[0] - r[1] + r[2]) / 6);
        u[i * 6 + 3] = (float)(r[0] / 24 + r[1] / 12 + r[2] / 6);
        u[i * 6 + 4] = (float)(r[0] / 24 - r[1] / 12 + r[2] / 6);
        u[i * 6 + 5] = (float)r[2];
    }
}

int mlrt_conv_winograd_pack(int64_t group, int64_t filters, int64_t channels_per_group, const float *w,
                            int64_t capacity, int64_t *size, float *packed) {
    MLRT_CHECK(size && group >= 1 && filters >= 0 && filters % group == 0 && channels_per_group >= 0 &&
                   filters <= INT32_MAX && channels_per_group <= INT32_MAX,
               "mlrt_conv_winograd_pack: bad sizes (group %lld, filters %lld, channels %lld)", (long long)group,
               (long long)filters, (long long)channels_per_group);
    int64_t Mg = filters / group, Cg = channels_per_group, each = mlrt_sgemm_packed_size(Mg, Cg);
    *size = mlrt_cpu_isa() != MLRT_ISA_PORTABLE ? mlrt_conv_winograd_size(group, filters, Cg) : 0;
    if (*size == 0 || capacity < *size || !packed) return MLRT_OK;
    MLRT_CHECK(w, "mlrt_conv_winograd_pack: no weights");
    float *u = malloc((size_t)(WG_XI * Mg * Cg + 1) * sizeof(float)); /* [xi][m][c] of one group */
    if (!u) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "mlrt_conv_winograd_pack: out of memory");
    float one[WG_XI];
    for (int64_t grp = 0; grp < group; ++grp) {
        for (int64_t m = 0; m < Mg; ++m)
            for (int64_t c = 0; c < Cg; ++c) {
                wg_filter(w + ((grp * Mg + m) * Cg + c) * 9, one);
                for (int xi = 0; xi < WG_XI; ++xi) u[(xi * Mg + m) * Cg + c] = one[xi];
            }
        for (int xi = 0; xi < WG_XI; ++xi)
            mlrt_sgemm_pack_a(u + xi * Mg * Cg, Mg, Cg, Cg, packed + (grp * WG_XI + xi) * each);
    }
    free(u);
    return MLRT_OK;
}

/* One chunk of one (image, group): what both phases' tasks read. */
typedef struct wg_chunk {
    const conv_job *j;
    const float *x;      /* the group's Cg input planes of the image */
    float *y;            /* its Mg output planes */
    const float *z;      /* Z's planes likewise, or NULL */
    const float *bias;   /* the group's Mg biases, or NULL */
    const float *u;      /* the group's packed U: 36 blocks of mlrt_sgemm_packed_size(Mg, Cg) */
    float *V;            /* [36][Cg][nt] */
    const int64_t *off;  /* row c of V[xi] at off[c] = c * nt */
    int64_t tw;          /* tiles per row of tiles */
    int64_t r0, nt;      /* the chunk: rows of tiles from r0, nt tiles */
    int64_t mb, n_mb;    /* filters per block, blocks of filters */
    atomic_int *failed;
} wg_chunk;

/* One column of B^T d from the six values a0..a5 of a column of d: out[i * ld], i < 6. */
static inline __attribute__((always_inline)) void wg_bt(float a0, float a1, float a2, float a3, float a4, float a5,
                                                        float *out, int64_t ld) {
    out[0] = 4.0f * a0 - 5.0f * a2 + a4;
    out[ld] = -4.0f * (a1 + a2) + (a3 + a4);
    out[2 * ld] = 4.0f * (a1 - a2) + (a4 - a3);
    out[3 * ld] = 2.0f * (a3 - a1) + (a4 - a2);
    out[4 * ld] = 2.0f * (a1 - a3) + (a4 - a2);
    out[5 * ld] = 4.0f * a1 - 5.0f * a3 + a5;
}

/* Rows i < 6 of B^T d for columns [0, n) of the six padded input rows d (stride ld). */
MLRT_HOT_FN(, void, wg_rows_bt, (const float *d, int64_t ld, float *t, int64_t n), (d, ld, t, n)) {
    const float *d0 = d, *d1 = d + ld, *d2 = d + 2 * ld, *d3 = d + 3 * ld, *d4 = d + 4 * ld, *d5 = d + 5 * ld;
    for (int64_t q = 0; q < n; ++q) wg_bt(d0[q], d1[q], d2[q], d3[q], d4[q], d5[q], t + q, ld);
}

/* Row t (of B^T d, tile k at columns 4k .. 4k + 5) split into its four column phases:
 * p[q][k] = t[4k + q] for k < n (loads of four interleaved rows, which vectorize). */
MLRT_HOT_FN(, void, wg_phases, (const float *t, int64_t n, float *p0, float *p1, float *p2, float *p3), (t, n, p0, p1, p2, p3)) {
    for (int64_t k = 0; k < n; ++k) {
        p0[k] = t[4 * k];
        p1[k] = t[4 * k + 1];
        p2[k] = t[4 * k + 2];
        p3[k] = t[4 * k + 3];
    }
}

/* (B^T d) B for `tiles` tiles of one row of tiles, from the phases of one row of B^T d
 * (p0 .. p3, p0 and p1 one longer): product (i, k') of tile k goes to v[k' * xs + k]. */
MLRT_HOT_FN(, void, wg_cols_bt, (const float *p0, const float *p1, const float *p2, const float *p3, int64_t tiles, float *v, int64_t xs), (p0, p1, p2, p3, tiles, v, xs)) {
    for (int64_t k = 0; k < tiles; ++k) wg_bt(p0[k], p1[k], p2[k], p3[k], p0[k + 1], p1[k + 1], v + k, xs);
}

/* Phase 1, channels [begin, end): V[xi][c][tile] for the chunk's tiles. */
static void wg_input_tasks(void *arg, int64_t begin, int64_t end) {
    const wg_chunk *k = arg;
    const conv_geom *g = &k->j->g;
    int64_t H = g->in[0], W = g->in[1], pt = g->pb[0], pl = g->pb[1], tw = k->tw;
    /* a padded row holds input columns q - pl, q < width (whole tiles plus one, so every
     * phase has tw + 1 columns); its phases are pld apart */
    int64_t width = 4 * (tw + 1), ld = (width + 15) / 16 * 16, pld = (tw + 1 + 15) / 16 * 16;
    float *d = mlrt_scratch((size_t)(12 * ld + 4 * pld) * sizeof(float)), *t = d + 6 * ld, *ph = t + 6 * ld;
    if (!d) { atomic_store(k->failed, 1); return; }
    int64_t a = pl < width ? pl : width, b = W + pl < width ? W + pl : width; /* columns read from X: [a, b) */
    int64_t xs = g->Cg * k->nt;
    for (int64_t c = begin; c < end; ++c) {
        const float *x = k->x + c * g->in_size;
        for (int64_t r = 0; r < k->nt / tw; ++r) {
            int64_t ih0 = 4 * (k->r0 + r) - pt;
            for (int64_t i = 0; i < 6; ++i) {
                float *di = d + i * ld;
                int64_t ih = ih0 + i;
                if (ih < 0 || ih >= H || b <= a) { memset(di, 0, (size_t)width * sizeof(float)); continue; }
                memset(di, 0, (size_t)a * sizeof(float));
                memcpy(di + a, x + ih * W + (a - pl), (size_t)(b - a) * sizeof(float));
                memset(di + b, 0, (size_t)(width - b) * sizeof(float));
            }
            wg_rows_bt(d, ld, t, width);
            for (int64_t i = 0; i < 6; ++i) {
                wg_phases(t + i * ld, tw + 1, ph, ph + pld, ph + 2 * pld, ph + 3 * pld);
                wg_cols_bt(ph, ph + pld, ph + 2 * pld, ph + 3 * pld, tw, k->V + i * 6 * xs + c * k->nt + r * tw, xs);
            }
        }
    }
}

#define WG_VL 16 /* lanes of the output transform: tiles per step */

/* A^T M A of nb tiles (a multiple of WG_VL): m[xi * xs + k] holds product xi of tile k;
 * output (i, j) of tile k, + bias, goes to o[(i * 4 + j) * nb + k]. */
MLRT_HOT_FN(, void, wg_output, (const float *m, int64_t xs, int64_t nb, float bias, float *o), (m, xs, nb, bias, o)) {
    for (int64_t k0 = 0; k0 < nb; k0 += WG_VL) {
        float s[4][6][WG_VL];
        for (int c = 0; c < 6; ++c) { /* A^T times column c of the 6 x 6 products */
            const float *r = m + c * xs + k0;
            for (int l = 0; l < WG_VL; ++l) {
                float m0 = r[l], m1 = r[6 * xs + l], m2 = r[12 * xs + l];
                float m3 = r[18 * xs + l], m4 = r[24 * xs + l], m5 = r[30 * xs + l];
                float p12 = m1 + m2, q12 = m1 - m2, p34 = m3 + m4, q34 = m3 - m4;
                s[0][c][l] = m0 + p12 + p34;
                s[1][c][l] = q12 + 2.0f * q34;
                s[2][c][l] = p12 + 4.0f * p34;
                s[3][c][l] = q12 + 8.0f * q34 + m5;
            }
        }
        for (int i = 0; i < 4; ++i) { /* each row of that times A */
            float *oi = o + i * 4 * nb + k0;
            for (int l = 0; l < WG_VL; ++l) {
                float p12 = s[i][1][l] + s[i][2][l], q12 = s[i][1][l] - s[i][2][l];
                float p34 = s[i][3][l] + s[i][4][l], q34 = s[i][3][l] - s[i][4][l];
                oi[l] = (s[i][0][l] + p12 + p34) + bias;
                oi[nb + l] = (q12 + 2.0f * q34) + bias;
                oi[2 * nb + l] = (p12 + 4.0f * p34) + bias;
                oi[3 * nb + l] = (q12 + 8.0f * q34 + s[i][5][l]) + bias;
            }
        }
    }
}

/* One output row's whole tiles: y[4k + j] = o_j[k], k < n. */
MLRT_HOT_FN(, void, wg_interleave, (const float *o0, const float *o1, const float *o2, const float *o3, int64_t n, float *y), (o0, o1, o2, o3, n, y)) {
    for (int64_t k = 0; k < n; ++k) {
        y[4 * k] = o0[k];
        y[4 * k + 1] = o1[k];
        y[4 * k + 2] = o2[k];
        y[4 * k + 3] = o3[k];
    }
}

/* Columns [from, ld) of `rows` rows at stride ld (ld - from < WG_VL) zeroed before the
 * product writes columns [0, from): one WG_VL-wide store a row (a memset of constant size,
 * inlined) whose spill into the next row's first columns the product then overwrites; the
 * last row's spills into the slack after mbuf's products.  (A memset call per row, of
 * 4608 rows of 60 bytes in a 27 x 27 conv to 128 filters, was 7% of its time.) */
static inline void wg_zero_tails(float *m, int64_t rows, int64_t ld, int64_t from) {
    for (int64_t r = 0; r < rows; ++r) memset(m + r * ld + from, 0, WG_VL * sizeof(float));
}

/* Phase 2, tasks (block of tiles, block of filters): the 36 products, then back to Y. */
static void wg_product_tasks(void *arg, int64_t begin, int64_t end) {
    const wg_chunk *k = arg;
    const conv_job *j = k->j;
    const conv_geom *g = &j->g;
    int64_t Cg = g->Cg, Mg = g->Mg, OH = g->out[0], OW = g->out[1], tw = k->tw, nt = k->nt;
    int64_t each = mlrt_sgemm_packed_size(Mg, Cg), NR = j->strip;
    float *mbuf = mlrt_scratch((size_t)(WG_XI * WG_MB_MAX * WG_TB + 16 * WG_TB + WG_VL) * sizeof(float));
    if (!mbuf) { atomic_store(k->failed, 1); return; }
    float *o = mbuf + WG_XI * WG_MB_MAX * WG_TB;
    for (int64_t task = begin; task < end; ++task) {
        int64_t t0 = task / k->n_mb * WG_TB, m0 = task % k->n_mb * k->mb;
        int64_t nb = nt - t0 < WG_TB ? nt - t0 : WG_TB, mw = Mg - m0 < k->mb ? Mg - m0 : k->mb;
        int64_t nbp = (nb + WG_VL - 1) / WG_VL * WG_VL; /* rows of mbuf and o: whole steps of the transform */
        int64_t xs = mw * nbp; /* products of one xi in mbuf: mw rows of nbp (nb computed) */
        for (int xi = 0; xi < WG_XI; ++xi) {
            mlrt_sgemm_a A = {k->u + xi * each, Cg, true};
            if (nbp > nb) /* columns the transform reads and drops: zeros, never NaN or denormal */
                wg_zero_tails(mbuf + xi * xs, mw, nbp, nb);
            for (int64_t c0 = 0; c0 < Cg; c0 += CONV_KC) {
                int64_t kc = Cg - c0 < CONV_KC ? Cg - c0 : CONV_KC;
                mlrt_sgemm_strips(mw, kc, &A, m0, c0, k->V + xi * Cg * nt + t0, k->off + c0, NR, mbuf + xi * xs, nbp,
                                  nb, c0 > 0, NULL);
            }
        }
        for (int64_t m = 0; m < mw; ++m) {
            int64_t f = m0 + m;
            wg_output(mbuf + m * nbp, xs, nbp, k->bias ? k->bias[f] : 0.0f, o);
            float *yf = k->y + f * g->out_size;
            const float *zf = k->z ? k->z + f * g->out_size : NULL;
            /* tiles t0 .. t0 + nb, row of tiles by row of tiles; the epilogue runs once over
             * each stretch of whole rows of tiles (contiguous in Y), else row by row (a
             * call per output row of 27 cost a 27 x 27 conv over 32 channels 10% of its time) */
            int64_t span = -1, span_end = -1; /* whole rows written, not yet finished: Y offsets */
            for (int64_t t = t0; t < t0 + nb;) {
                int64_t R = k->r0 + t / tw, c0 = t % tw, run = tw - c0 < t0 + nb - t ? tw - c0 : t0 + nb - t;
                int64_t ow0 = 4 * c0, ow1 = 4 * (c0 + run) < OW ? 4 * (c0 + run) : OW;
                int64_t whole = (ow1 - ow0) / 4, rows = OH - 4 * R < 4 ? OH - 4 * R : 4; /* tiles inside Y's width */
                for (int64_t i = 0; i < rows; ++i) {
                    float *yr = yf + (4 * R + i) * OW;
                    const float *oi = o + i * 4 * nbp + (t - t0);
                    wg_interleave(oi, oi + nbp, oi + 2 * nbp, oi + 3 * nbp, whole, yr + ow0);
                    for (int64_t ow = ow0 + 4 * whole; ow < ow1; ++ow) yr[ow] = oi[(ow & 3) * nbp + whole];
                    if (run < tw)
                        mlrt_epilogue_f32(yr + ow0, zf ? zf + (4 * R + i) * OW + ow0 : NULL, 1, ow1 - ow0, OW, NULL,
                                          j->activation, j->alpha, j->beta);
                }
                if (run == tw) { /* whole rows 4R .. 4R + rows: joined to the stretch before */
                    if (span < 0) span = 4 * R * OW;
                    span_end = (4 * R + rows) * OW;
                }
                t += run;
            }
            if (span >= 0)
                mlrt_epilogue_f32(yf + span, zf ? zf + span : NULL, 1, span_end - span, span_end - span, NULL,
                                  j->activation, j->alpha, j->beta);
        }
    }
}

/* Filters per product block: WG_MB, unless the chunk's blocks would not share out evenly
 * among the threads -- then the fewest blocks of up to WG_MB_MAX filters (whole panels of 6)
 * that do.  (27 x 27 outputs, one block of tiles, 128 filters: three blocks of 48 on two
 * threads kept one waiting a third of the node; two of 66 and 62 instead.) */
static int64_t wg_block_filters(int64_t Mg, int64_t tile_blocks, int64_t threads) {
    int64_t n = ceil_div(Mg, WG_MB);
    if (threads <= 1 || tile_blocks * n % threads == 0) return WG_MB;
    for (int64_t b = ceil_div(Mg, WG_MB_MAX); b <= 2 * n; ++b) {
        int64_t mb = ceil_div(ceil_div(Mg, b), 6) * 6;
        if (mb <= WG_MB_MAX && ceil_div(Mg, mb) == b && tile_blocks * b % threads == 0) return mb;
    }
    return WG_MB;
}

int mlrt_conv_winograd(conv_job *j, const mlrt_context *ctx, const float *u) {
    const conv_geom *g = &j->g;
    int64_t Cg = g->Cg, Mg = g->Mg, th = ceil_div(g->out[0], 4), tw = ceil_div(g->out[1], 4);
    int64_t rows = WG_V_FLOATS / (WG_XI * Cg * tw);
    rows = rows < 1 ? 1 : rows > th ? th : rows;
    int64_t vfloats = WG_XI * Cg * rows * tw;
    char *mem = mlrt_scratch_slot(1, (size_t)Cg * sizeof(int64_t) + (size_t)vfloats * sizeof(float) + 64);
    if (!mem) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "Conv: cannot allocate the Winograd buffer");
    int64_t *off = (int64_t *)mem;
    float *V = (float *)(mem + ((size_t)Cg * sizeof(int64_t) + 63) / 64 * 64);
    double per_tile = (double)WG_XI * (double)Cg * (double)Mg; /* multiply-adds per tile */
    int64_t each = mlrt_sgemm_packed_size(Mg, Cg);
    for (int64_t n = 0; n < g->N; ++n)
        for (int64_t grp = 0; grp < g->G; ++grp)
            for (int64_t r0 = 0; r0 < th; r0 += rows) {
                int64_t nr = th - r0 < rows ? th - r0 : rows, nt = nr * tw;
                for (int64_t c = 0; c < Cg; ++c) off[c] = c * nt;
                wg_chunk k = {
                    .j = j,
                    .x = (const float *)j->x + (n * g->C + grp * Cg) * g->in_size,
                    .y = (float *)j->y + (n * g->M + grp * Mg) * g->out_size,
                    .z = j->z ? (const float *)j->z + (n * g->M + grp * Mg) * g->out_size : NULL,
                    .bias = j->b ? (const float *)j->b + grp * Mg : NULL,
                    .u = u + grp * WG_XI * each,
                    .V = V, .off = off, .tw = tw, .r0 = r0, .nt = nt,
                    .failed = &j->failed,
                };
                k.mb = wg_block_filters(Mg, ceil_div(nt, WG_TB), mlrt_ctx_threads(ctx));
                k.n_mb = ceil_div(Mg, k.mb);
                bool alone = per_tile * (double)nt < (double)(INT64_C(1) << 21);
                int64_t tasks = ceil_div(nt, WG_TB) * k.n_mb;
                if (alone) {
                    wg_input_tasks(&k, 0, Cg);
                    wg_product_tasks(&k, 0, tasks);
                } else {
                    mlrt_parallel_for(ctx, Cg, 1, wg_input_tasks, &k);
                    mlrt_parallel_for(ctx, tasks, 1, wg_product_tasks, &k);
                }
                if (atomic_load(&j->failed))
                    return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "Conv: cannot allocate a Winograd block buffer");
            }
    return MLRT_OK;
}
