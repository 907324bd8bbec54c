/* qlinear_conv.c -- ConvInteger, QLinearConv and ConvIntegerToFloat on the integer product (src/qgemm.h).
 *
 * Per group, y(m, p) = sum_k W(m, k) X(k, p) with k = (input channel, kernel offsets) and
 * p the output position, finished by the product's epilogue (zero points, bias and the
 * requantization of qgemm.h).  W is packed once, by mlrt_qconv_pack_weights, which the
 * plan calls for a constant W and passes back as one more input (named by
 * params.packed_weights), or here at each call.  X's columns are packed by each task
 * for itself, up to 64 output positions at a time (qconv_split: how columns and rows
 * fall to the tasks): straight from x for 1 x 1 windows at unit strides without
 * padding; else (2-D) from a padded copy of x kept as stride phases (phase (a, b) holds
 * the padded rows a, a + sh, ... and columns b, b + sw, ...), over the grid of output
 * rows by the phase rows' width (the columns past the output's are computed and
 * dropped), where every tap of 64 consecutive grid positions is one contiguous run of
 * its phase plane; beyond two spatial dimensions element by element.  Where Intel AMX is
 * granted (qconv_amx_fit: 16 filters or more), the filters are packed once more in rows,
 * and the products run 16 filters by 64 positions a block on its tiles: 1 x 1 windows on
 * x's packed columns, and the channel-quad planes with channels per group a multiple of
 * 64, each step 16 channel quads at one tap read in place as the rows of a tile.  One
 * input channel per group (depthwise) runs kernels/qlinear_depthwise.c. */
#include <stdatomic.h>
#include <stdlib.h>

#include "conv.h"
#include "gemm.h"
#include "qconv_internal.h"
#include "qlinear.h"

#define NR MLRT_QGEMM_NR
#define MR MLRT_QGEMM_MR

static bool qc_is_8bit(int32_t t) { return t == MLRT_INT8 || t == MLRT_UINT8; }

static inline int32_t qc_load8(const void *p, int64_t i, int32_t t) {
    return t == MLRT_INT8 ? ((const int8_t *)p)[i] : ((const uint8_t *)p)[i];
}

/* -- geometry ----------------------------------------------------------------------------------- */

static int qconv_setup(const char *op, const mlrt_conv_params *p, const mlrt_tensor *X, const mlrt_tensor *W,
                       const mlrt_tensor *Y, qconv_geom *g) {
    memset(g, 0, sizeof *g);
    int64_t nd = p->n_spatial;
    MLRT_CHECK(nd >= 1 && nd <= QCONV_MAX_SPATIAL, "%s: %lld spatial dimensions (1..6 supported)", op, (long long)nd);
    MLRT_CHECK(X->rank == nd + 2 && W->rank == nd + 2 && Y->rank == nd + 2, "%s: x, w and y must have rank %lld", op,
               (long long)(nd + 2));
    MLRT_CHECK(qc_is_8bit(X->dtype) && qc_is_8bit(W->dtype), "%s: x and w must be int8 or uint8", op);
    MLRT_CHECK(mlrt_is_contiguous(X) && mlrt_is_contiguous(W) && mlrt_is_contiguous(Y), "%s: needs contiguous tensors",
               op);
    g->N = X->shape[0], g->C = X->shape[1], g->M = W->shape[0], g->G = p->group;
    MLRT_CHECK(g->G >= 1 && g->C % g->G == 0 && g->M % g->G == 0, "%s: group %lld does not divide channels %lld / %lld",
               op, (long long)g->G, (long long)g->C, (long long)g->M);
    g->Cg = g->C / g->G, g->Mg = g->M / g->G;
    MLRT_CHECK(W->shape[1] == g->Cg, "%s: w has %lld input channels per group, expected %lld", op,
               (long long)W->shape[1], (long long)g->Cg);
    MLRT_CHECK(Y->shape[0] == g->N && Y->shape[1] == g->M, "%s: y must be (%lld, %lld, ...)", op, (long long)g->N,
               (long long)g->M);
    int32_t off = nd == 1 ? 1 : 0; /* 1-D runs as 2-D with a unit leading dimension */
    g->nd = (int32_t)nd + off;
    if (off) g->in[0] = g->k[0] = g->out[0] = g->s[0] = g->d[0] = 1;
    g->in_size = g->out_size = g->k_size = 1;
    bool unit = true;
    for (int32_t i = 0; i < nd; ++i) {
        int64_t in = X->shape[2 + i], k = W->shape[2 + i], s = p->strides[i], dl = p->dilations[i];
        int64_t pb = p->pads_begin[i], pe = p->pads_end[i];
        MLRT_CHECK(p->kernel[i] == k, "%s: kernel_shape %lld differs from w's %lld", op, (long long)p->kernel[i],
                   (long long)k);
        MLRT_CHECK(s >= 1 && dl >= 1 && pb >= 0 && pe >= 0 && k >= 1, "%s: bad stride, dilation, pad or kernel", op);
        int64_t span = in + pb + pe - dl * (k - 1) - 1, out = span >= 0 ? span / s + 1 : 0;
        MLRT_CHECK(Y->shape[2 + i] == out, "%s: output dimension %d is %lld, expected %lld", op, i,
                   (long long)Y->shape[2 + i], (long long)out);
        g->in[i + off] = in, g->k[i + off] = k, g->out[i + off] = out;
        g->s[i + off] = s, g->d[i + off] = dl, g->pb[i + off] = pb;
        g->in_size *= in, g->out_size *= out, g->k_size *= k;
        unit = unit && k == 1 && s == 1 && pb == 0 && pe == 0;
    }
    g->K = g->Cg * g->k_size;
    g->pointwise = unit;
    g->depthwise = g->Cg == 1 && g->G > 1 && g->nd == 2 && !unit;
    MLRT_CHECK(g->K <= INT32_MAX && g->out_size <= INT32_MAX && g->in_size <= INT32_MAX,
               "%s: sizes exceed 32-bit indexing", op);
    return MLRT_OK;
}

/* -- packed weights ----------------------------------------------------------------------------- */

static int64_t qconv_packed_size(int64_t group, int64_t filters, int64_t kdim) {
    return 4 * filters + group * mlrt_qgemm_l_size(filters / group, kdim);
}

/* Row sums (int32, filters of them), then each group's filters packed as L, k in W's order
 * (channel, tap), or with taps > 1 in the channel-quad path's: (channel / 4, tap, channel % 4). */
static int qconv_pack(int64_t group, int64_t filters, int64_t kdim, int64_t taps, int32_t w_type, const void *w,
                      void *packed) {
    int64_t Mg = filters / group, each = mlrt_qgemm_l_size(Mg, kdim);
    int32_t *rowsum = packed;
    int8_t *L = (int8_t *)packed + 4 * filters;
    uint8_t *order = NULL;
    if (taps > 1 && !(order = malloc((size_t)(Mg * kdim) + 1)))
        return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "mlrt_qconv_pack_weights: out of memory");
    for (int64_t grp = 0; grp < group; ++grp) {
        const uint8_t *src = (const uint8_t *)w + grp * Mg * kdim;
        if (order) {
            for (int64_t m = 0; m < Mg; ++m)
                for (int64_t k = 0; k < kdim; ++k) {
                    int64_t c = k / taps, t = k % taps;
                    order[m * kdim + ((c / 4) * taps + t) * 4 + c % 4] = src[m * kdim + k];
                }
            src = order;
        }
        mlrt_qgemm_pack_l(src, Mg, kdim, kdim, 1, w_type == MLRT_UINT8, L + grp * each, rowsum + grp * Mg);
    }
    free(order);
    return MLRT_OK;
}

/* The mark, in the 64 bytes after the packed weights, where the weights are in the
 * channel-quad order or follow once more in AMX's rows: the tag, the taps of the order
 * (1: W's own, (channel, tap)), then 1 where the AMX rows follow (qconv_amx_fit). */
#define QUADS_TAG 0x7364617571766e63LL

/* Whether a group's filters run on Intel AMX (granted to the process), 16 filters or more
 * (fewer would leave most of a 16-row tile empty): a 1 x 1 window (the rows in W's order,
 * x's columns packed in panels), or channels a multiple of 64 in the channel-quad order
 * (a step is 16 channel quads at one tap, read from the planes). */
static bool qconv_amx_fit(int64_t Mg, int64_t kdim, int64_t taps, bool quads) {
    return Mg >= 16 && (taps == 1 || (quads && kdim / taps % 64 == 0)) && mlrt_qgemm_amx();
}

/* Bytes of the AMX rows: each group's filters rounded up to 16 rows of kdim rounded up to 64. */
static int64_t qconv_amx_size(int64_t group, int64_t filters, int64_t kdim) {
    return group * ((filters / group + 15) / 16 * 16) * mlrt_qgemm_row_bytes(kdim);
}

/* Each group's filters as rows of mlrt_qgemm_row_bytes(kdim) bytes in the AMX path's order:
 * (64-channel block, tap, channel in the block) (taps 1: W's), zeros past kdim and past
 * the filters. */
static void qconv_pack_amx(int64_t group, int64_t filters, int64_t kdim, int64_t taps, int32_t w_type, const void *w,
                           int8_t *dst) {
    int64_t Mg = filters / group, rows = (Mg + 15) / 16 * 16, lrow = mlrt_qgemm_row_bytes(kdim);
    uint8_t f = w_type == MLRT_UINT8 ? 0x80 : 0;
    memset(dst, 0, (size_t)(group * rows * lrow));
    for (int64_t grp = 0; grp < group; ++grp)
        for (int64_t m = 0; m < Mg; ++m) {
            uint8_t *row = (uint8_t *)dst + (grp * rows + m) * lrow;
            const uint8_t *src = (const uint8_t *)w + (grp * Mg + m) * kdim;
            if (taps == 1)
                for (int64_t k = 0; k < kdim; ++k) row[k] = src[k] ^ f;
            else
                for (int64_t cb = 0; cb < kdim / taps / 64; ++cb)
                    for (int64_t t = 0; t < taps; ++t)
                        for (int64_t i = 0; i < 64; ++i)
                            row[(cb * taps + t) * 64 + i] = src[(cb * 64 + i) * taps + t] ^ f;
        }
}

int mlrt_qconv_pack_weights(int64_t group, int64_t filters, int64_t kdim, int32_t w_type, const void *w,
                            int64_t capacity, int64_t *size, void *packed) {
    return mlrt_qconv_pack_weights_quads(group, filters, kdim, 1, w_type, w, capacity, size, packed);
}

int mlrt_qconv_pack_weights_quads(int64_t group, int64_t filters, int64_t kdim, int64_t taps, int32_t w_type,
                                  const void *w, int64_t capacity, int64_t *size, void *packed) {
    MLRT_CHECK(size && group >= 1 && filters >= 0 && filters % group == 0 && kdim >= 0 && qc_is_8bit(w_type) &&
                   taps >= 1 && kdim % taps == 0,
               "mlrt_qconv_pack_weights: bad arguments");
    bool quads = taps > 1 && kdim / taps % 4 == 0, amx = qconv_amx_fit(filters / group, kdim, taps, quads);
    int64_t base = qconv_packed_size(group, filters, kdim);
    *size = base + (quads || amx ? 64 : 0) + (amx ? qconv_amx_size(group, filters, kdim) : 0);
    if (!packed || capacity < *size) return MLRT_OK;
    MLRT_CHECK(w || filters * kdim == 0, "mlrt_qconv_pack_weights: no weights");
    if (quads || amx) {
        int64_t mark[8] = {QUADS_TAG, quads ? taps : 1, amx};
        memcpy((char *)packed + base, mark, sizeof mark);
    }
    if (amx) qconv_pack_amx(group, filters, kdim, taps, w_type, w, (int8_t *)packed + base + 64);
    return qconv_pack(group, filters, kdim, quads ? taps : 1, w_type, w, packed);
}

/* -- the GEMM path ------------------------------------------------------------------------------ */

typedef struct qconv_gemm {
    const qconv_job *j;
    const int8_t *L;          /* packed weights, per group */
    int64_t l_each, K4;
    const uint8_t *planes;    /* the phase planes (2-D, not pointwise; qconv_phases), or NULL */
    int64_t PWs, phase;       /* their row width and elements per plane */
    bool quads;               /* planes of channel quads: R's group q at planes + qoff[q] from the panel's first */
    const int64_t *koff;      /* row k's offset from its group's first plane (2-D), or from x's channel (1 x 1); */
                              /* quads: group q's bytes from the group's first plane */
    int64_t unit, n_units;    /* columns cut in units of `unit` columns (NR or 16), n_units of them */
    int64_t n_slices, n_mc, mc_rows; /* slices of units per image-group; row chunks of mc_rows (of MR, AMX: of 16) */
    const int32_t *row_add, *row_mul;
    const int8_t *La;         /* AMX: the filters in rows (qconv_pack_amx), or NULL */
    int64_t la_each, lrow, steps, cstride; /* bytes per group, per row; steps of 64 bytes a row; */
                                           /* quads: bytes between channel quads */
    const int64_t *soff;      /* step (64-channel block, tap)'s first quad from the panel's first */
    atomic_int failed;
} qconv_gemm;

/* Column k of the im2col matrix for output positions [p0, p0 + n) into dst, element by
 * element (any spatial rank). */
static void gather_nd(const qconv_job *j, int64_t n_img, int64_t c, int64_t k, int64_t p0, int64_t n, uint8_t *dst) {
    const qconv_geom *g = &j->g;
    int64_t kidx[QCONV_MAX_SPATIAL];
    for (int64_t d = g->nd - 1, r = k; d >= 0; --d) kidx[d] = r % g->k[d], r /= g->k[d];
    const uint8_t *x = j->x + (n_img * g->C + c) * g->in_size;
    uint8_t f = j->x_flip ? 0x80 : 0;
    for (int64_t t = 0; t < n; ++t) {
        int64_t p = p0 + t, at = 0;
        bool inside = true;
        for (int64_t d = g->nd - 1, stride = 1; d >= 0; --d) {
            int64_t o = p % g->out[d];
            p /= g->out[d];
            int64_t i = o * g->s[d] + kidx[d] * g->d[d] - g->pb[d];
            inside = inside && i >= 0 && i < g->in[d];
            at += i * stride;
            stride *= g->in[d];
        }
        dst[t] = inside ? (uint8_t)(x[at] ^ f) : (uint8_t)j->xz;
    }
}

/* One panel: columns [p0, p0 + n) (n <= NR) of image-group ng by the rows of chunk mc;
 * false: no scratch memory (q->failed set). */
static bool gemm_block(qconv_gemm *q, int64_t ng, int64_t mc, int64_t p0, int64_t n) {
    const qconv_job *j = q->j;
    const qconv_geom *g = &j->g;
    int64_t K = g->K, K4 = q->K4, P = g->out_size, OW = g->out[1];
    int64_t n_img = ng / g->G, grp = ng % g->G;
    int64_t m0 = mc * q->mc_rows, mrows = g->Mg - m0 < q->mc_rows ? g->Mg - m0 : q->mc_rows;
    if (mrows <= 0 || n <= 0) return true;
    /* grid positions past the output's columns: the results go to T, then their runs inside
     * the output rows to y (with no such columns, as with 1-wide windows, the grid is y's) */
    bool via_t = q->planes && q->PWs != OW;
    /* (AMX reads up to 15 groups past the panel: MLRT_QGEMM_R_SLACK) */
    size_t esz = mlrt_qgemm_out_size(&j->out);
    size_t rbytes = q->quads ? 0 : (size_t)(K4 * NR * 4) + (q->La ? MLRT_QGEMM_R_SLACK : 0);
    uint8_t *R = mlrt_scratch(rbytes + 64 * sizeof(int32_t) + 4 * 64);
    uint8_t *T = via_t ? mlrt_scratch_slot(1, (size_t)(q->mc_rows * NR) * esz) : NULL;
    if (!R || (via_t && !T)) {
        atomic_store(&q->failed, 1);
        return false;
    }
    int32_t *colsum = (int32_t *)(R + rbytes);
    uint8_t *tmp = (uint8_t *)(colsum + 64);
    const uint8_t *rows[64];
    int32_t *cs = q->row_mul ? colsum : NULL;
    if (cs) memset(cs, 0, 64 * sizeof(int32_t));
    int64_t c0 = n_img * g->C + grp * g->Cg; /* the group's first image-channel */
    const uint8_t *at = NULL;                  /* quads: the panel's groups of four k at at + koff[q] */
    if (q->quads) {
        at = q->planes + (c0 / 4 * g->s[0] * g->s[1] * q->phase + p0) * 4;
        if (cs) mlrt_qgemm_colsum_at(at, q->koff, K4, n, cs);
    } else if (g->pointwise || q->planes) {
        for (int64_t k0 = 0; k0 < K; k0 += 64) {
            int64_t kc = K - k0 < 64 ? K - k0 : 64;
            const uint8_t *base = (g->pointwise ? j->x + c0 * P : q->planes + c0 * q->phase * g->s[0] * g->s[1]) + p0;
            for (int64_t i = 0; i < kc; ++i) rows[i] = base + q->koff[k0 + i];
            mlrt_qgemm_pack_r(rows, kc, n, g->pointwise && j->x_flip, R + k0 * NR, cs);
        }
    } else {
        for (int64_t k0 = 0; k0 < K; k0 += 4) {
            int64_t kc = K - k0 < 4 ? K - k0 : 4;
            for (int64_t i = 0; i < kc; ++i) {
                gather_nd(j, n_img, grp * g->Cg + (k0 + i) / g->k_size, (k0 + i) % g->k_size, p0, n, tmp + 64 * i);
                rows[i] = tmp + 64 * i;
            }
            mlrt_qgemm_pack_r(rows, kc, n, false, R + k0 * NR, cs);
        }
    }
    int64_t m = grp * g->Mg + m0; /* the block's first output channel */
    mlrt_qgemm_out o = j->out;
    o.row_add = q->row_add + m;
    o.row_mul = q->row_mul ? q->row_mul + m : NULL;
    o.col_mul = cs;
    if (o.scale && o.scale_mode == MLRT_QSCALE_ROW) o.scale += m;
    if (o.fbias) o.fbias += m;
    char *y = (char *)j->out.c + (size_t)((n_img * g->M + m) * P) * esz;
    if (via_t) o.c = T, o.ldc = NR;
    else o.c = y + (size_t)p0 * esz;
    const int8_t *L = q->L + grp * q->l_each + (m0 / MR) * K4 * MR * 4;
    const int8_t *La = q->La ? q->La + grp * q->la_each + m0 * q->lrow : NULL;
    if (La && at) mlrt_qgemm_panel_amx_at(La, mrows, q->lrow, q->steps, at, q->soff, q->cstride, n, &o);
    else if (La) mlrt_qgemm_panel_amx(La, mrows, K, R, n, &o);
    else if (at) mlrt_qgemm_panel_at(L, mrows, K4, at, q->koff, n, &o);
    else mlrt_qgemm_panel(L, mrows, K4, R, n, &o);
    if (!via_t) return true;
    for (int64_t v = p0; v < p0 + n;) {
        int64_t oh = v / q->PWs, ow = v % q->PWs, len = q->PWs - ow < p0 + n - v ? q->PWs - ow : p0 + n - v;
        int64_t keep = ow >= OW ? 0 : OW - ow < len ? OW - ow : len;
        for (int64_t i = 0; keep && i < mrows; ++i)
            memcpy(y + (size_t)(i * P + oh * OW + ow) * esz, T + (size_t)(i * NR + v - p0) * esz, (size_t)keep * esz);
        v += len;
    }
    return true;
}

/* Task t = ((n * G + grp) * n_slices + slice) * n_mc + chunk.  Slice s holds units
 * [s U / S, (s + 1) U / S) of the columns (output positions, or grid positions
 * oh * PWs + ow over the phase planes), run as panels of up to NR columns. */
static void gemm_tasks(void *arg, int64_t begin, int64_t end) {
    qconv_gemm *q = arg;
    int64_t cols = q->planes ? q->j->g.out[0] * q->PWs : q->j->g.out_size;
    for (int64_t t = begin; t < end; ++t) {
        int64_t mc = t % q->n_mc, r = t / q->n_mc, slice = r % q->n_slices, ng = r / q->n_slices;
        int64_t a = slice * q->n_units / q->n_slices * q->unit, b = (slice + 1) * q->n_units / q->n_slices * q->unit;
        for (b = b < cols ? b : cols; a < b; a += NR)
            if (!gemm_block(q, ng, mc, a, b - a < NR ? b - a : NR)) return;
    }
}

/* The tasks over `cols` columns per image-group for `threads` threads.
 *  - Many panels of NR columns: a task per panel (a thread takes a run of them, the pool
 *    balances what is left).
 *  - A few (14 x 14 planes: 196 columns): each image-group's columns cut into slices of
 *    whole 16-column vectors, as even as they go, image-groups by slices a multiple of
 *    the threads, so that each thread gets the same number of vectors to compute (196
 *    columns on 2 threads: 96 and 100, where panels of 64, 64, 64 and 4 fell 2 and 2,
 *    8 vectors against 5); each task packs only its own columns of x.
 *  - One panel (7 x 7 planes: 49 columns): cut by rows, in as many chunks as the threads
 *    need, each packing the panel of x for itself.  Packing costs the same for 16
 *    columns as for 64, so each thread packs once either way, and whole panels keep the
 *    kernel's 4-vector tiles.  Measured on MobileNetV2's 7 x 7 shapes, 2 threads: cut
 *    into 32 + 17 columns instead, 15-50% slower; two chunks per thread (packing twice
 *    per thread), 5-50% slower. */
static void qconv_split(const qconv_geom *g, int64_t cols, int64_t threads, int64_t mr, qconv_gemm *q) {
    int64_t ng = g->N * g->G, n_panels = (cols + NR - 1) / NR, mpanels = (g->Mg + mr - 1) / mr;
    q->unit = NR, q->n_units = q->n_slices = n_panels, q->n_mc = 1;
    if (threads > 1 && ng * n_panels < 4 * threads) {
        int64_t a = ng, b = threads; /* tasks per image-group: threads / gcd(ng, threads) */
        while (b) {
            int64_t r = a % b;
            a = b, b = r;
        }
        int64_t vectors = (cols + 15) / 16, per_ng = threads / a;
        if (n_panels > 1) {
            q->unit = 16, q->n_units = vectors;
            q->n_slices = per_ng < vectors ? per_ng : vectors;
        }
        q->n_mc = (per_ng + q->n_slices - 1) / q->n_slices; /* the rest by rows */
    }
    if (q->n_mc > mpanels) q->n_mc = mpanels;
    if (q->n_mc < 1) q->n_mc = 1;
    q->mc_rows = (mpanels + q->n_mc - 1) / q->n_mc * mr;
    q->n_mc = (g->Mg + q->mc_rows - 1) / q->mc_rows;
    if (q->n_mc < 1) q->n_mc = 1;
}

/* The channel-quad path: 2-D windows (not 1 x 1 at unit strides unpadded), channels per
 * group a multiple of four (packed weights: in its order, mlrt_qconv_pack_weights_quads). */
static bool qconv_quads_fit(const qconv_geom *g) {
    return !g->pointwise && g->nd == 2 && g->Cg % 4 == 0;
}

static int qconv_gemm_run(const mlrt_context *ctx, const char *op, const qconv_job *j, const void *packed,
                          bool quads, bool amx) {
    const qconv_geom *g = &j->g;
    qconv_gemm q = {.j = j, .K4 = (g->K + 3) / 4, .l_each = mlrt_qgemm_l_size(g->Mg, g->K), .quads = quads};
    atomic_init(&q.failed, 0);
    int64_t base = qconv_packed_size(g->G, g->M, g->K);
    size_t wbytes = packed ? 0 : (size_t)(base + (amx ? 64 + qconv_amx_size(g->G, g->M, g->K) : 0));
    bool planes = !g->pointwise && g->nd == 2;
    int64_t e = quads ? 4 : 1; /* bytes per plane element */
    qconv_phases ph = {.j = j, .quads = quads, .failed = &q.failed};
    if (planes) {
        int64_t PH = (g->out[0] - 1) * g->s[0] + (g->k[0] - 1) * g->d[0] + 1;
        int64_t PW = (g->out[1] - 1) * g->s[1] + (g->k[1] - 1) * g->d[1] + 1;
        ph.PHs = (PH + g->s[0] - 1) / g->s[0], ph.PWs = (PW + g->s[1] - 1) / g->s[1];
        ph.phase = ph.PHs * ph.PWs;
        MLRT_CHECK(g->s[0] * g->s[1] <= 64, "%s: strides %lld x %lld: at most 64 phases", op, (long long)g->s[0],
                   (long long)g->s[1]);
        for (int64_t kh = 0; kh < g->k[0]; ++kh)
            for (int64_t kw = 0; kw < g->k[1]; ++kw)
                ph.used |= (uint64_t)1 << (kh * g->d[0] % g->s[0] * g->s[1] + kw * g->d[1] % g->s[1]);
        q.PWs = ph.PWs, q.phase = ph.phase;
    }
    /* (+ what the last taps' runs reach past the end: a grid row and a panel) */
    size_t tail = (size_t)((ph.PWs + NR) * e);
    size_t pbytes = planes ? (size_t)(g->N * g->C * g->s[0] * g->s[1] * ph.phase) + tail : 0;
    size_t kbytes = (size_t)(g->K + g->K / 64) * sizeof(int64_t); /* koff, then soff (AMX) */
    char *buf = malloc(kbytes + 2 * (size_t)g->M * sizeof(int32_t) + wbytes + pbytes + 64);
    if (!buf) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "%s: cannot allocate the work space", op);
    int64_t *koff = (int64_t *)buf;
    int32_t *row_add = (int32_t *)(buf + kbytes), *row_mul = row_add + g->M;
    char *wp = (char *)(row_mul + g->M);
    int64_t KH = g->k[0], KW = g->k[1], sh = g->s[0], sw = g->s[1], dh = g->d[0], dw = g->d[1];
    if (g->pointwise) /* (no divisions per k: with K in the thousands they cost more than a small product) */
        for (int64_t k = 0; k < g->K; ++k) koff[k] = k * g->out_size;
    else if (quads) /* group q = (channel quad, tap): its four channels' bytes at one tap */
        for (int64_t c4 = 0, k = 0; c4 < g->Cg / 4; ++c4)
            for (int64_t kh = 0; kh < KH; ++kh)
                for (int64_t kw = 0; kw < KW; ++kw, ++k)
                    koff[k] = ((c4 * sh * sw + (kh * dh % sh) * sw + kw * dw % sw) * ph.phase +
                               (kh * dh / sh) * ph.PWs + kw * dw / sw) * 4;
    else if (planes) /* (K = Cg KH KW; beyond two dimensions the columns are gathered element by element) */
        for (int64_t c = 0, k = 0; c < g->Cg; ++c)
            for (int64_t kh = 0; kh < KH; ++kh)
                for (int64_t kw = 0; kw < KW; ++kw, ++k)
                    koff[k] = (c * sh * sw + (kh * dh % sh) * sw + kw * dw % sw) * ph.phase + (kh * dh / sh) * ph.PWs +
                              kw * dw / sw;
    q.koff = koff;
    if (amx && quads) { /* step (64-channel block, tap): its 16 channel quads at one tap, cstride bytes apart */
        int64_t *soff = koff + g->K;
        q.cstride = sh * sw * ph.phase * 4, q.steps = g->K / 64, q.soff = soff;
        for (int64_t cb = 0, s = 0; cb < g->Cg / 64; ++cb)
            for (int64_t kh = 0; kh < KH; ++kh)
                for (int64_t kw = 0; kw < KW; ++kw, ++s)
                    soff[s] = cb * 16 * q.cstride + (((kh * dh % sh) * sw + kw * dw % sw) * ph.phase +
                                                     (kh * dh / sh) * ph.PWs + kw * dw / sw) * 4;
    }
    if (!packed) {
        int status = qconv_pack(g->G, g->M, g->K, quads ? g->k_size : 1, j->w_type, j->w, wp);
        if (status) {
            free(buf);
            return status;
        }
        if (amx) qconv_pack_amx(g->G, g->M, g->K, g->k_size, j->w_type, j->w, (int8_t *)wp + base + 64);
        packed = wp;
    }
    const int32_t *rowsum = packed;
    q.L = (const int8_t *)packed + 4 * g->M;
    if (amx) {
        q.La = (const int8_t *)packed + base + 64, q.lrow = mlrt_qgemm_row_bytes(g->K);
        q.la_each = (g->Mg + 15) / 16 * 16 * q.lrow;
    }
    /* row m: bias - xz * (rowsum - K wz) (canonical zero points), and -wz when any is not 0 */
    bool any_wz = false;
    for (int64_t m = 0; m < g->M; ++m) {
        int32_t wz = j->wz[m] - (j->w_type == MLRT_UINT8 ? 128 : 0);
        uint32_t ra = (uint32_t)rowsum[m] - (uint32_t)g->K * (uint32_t)wz;
        row_add[m] = (int32_t)((j->bias ? (uint32_t)j->bias[m] : 0u) - (uint32_t)j->xz * ra);
        row_mul[m] = (int32_t)(0u - (uint32_t)wz);
        any_wz |= wz != 0;
    }
    q.row_add = row_add, q.row_mul = any_wz ? row_mul : NULL;
    if (planes) {
        ph.planes = (uint8_t *)(wp + wbytes);
        q.planes = ph.planes;
        mlrt_parallel_for(ctx, g->N * g->C / e, 1, mlrt_qconv_build_phases, &ph);
        memset(ph.planes + pbytes - tail, (int)j->xz, tail);
    }
    if (!atomic_load(&q.failed)) {
        qconv_split(g, planes ? g->out[0] * ph.PWs : g->out_size, j->threads, amx ? 16 : MR, &q);
        mlrt_parallel_for(ctx, g->N * g->G * q.n_slices * q.n_mc, 1, gemm_tasks, &q);
    }
    free(buf);
    if (atomic_load(&q.failed)) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "%s: cannot allocate a scratch buffer", op);
    return MLRT_OK;
}

/* -- the kernels -------------------------------------------------------------------------------- */

/* Checks shared by both operators, then the path; scale NULL: int32 y. */
static int qconv_compute(const mlrt_context *ctx, const char *op, const mlrt_conv_params *p, const mlrt_tensor *X,
                         const mlrt_tensor *Xz, const mlrt_tensor *W, const mlrt_tensor *Wz, const mlrt_tensor *B,
                         const mlrt_tensor *packed, mlrt_tensor *Y, const mlrt_qgemm_out *finish) {
    qconv_job j = {.x = X->data, .x_flip = X->dtype == MLRT_INT8, .w = W->data, .w_type = W->dtype,
                   .out = *finish, .threads = mlrt_ctx_threads(ctx)};
    int status = qconv_setup(op, p, X, W, Y, &j.g);
    if (status) return status;
    const qconv_geom *g = &j.g;
    MLRT_CHECK(!Xz || (Xz->dtype == X->dtype && mlrt_numel(Xz) == 1), "%s: x's zero point must be one value of x's type",
               op);
    MLRT_CHECK(!Wz || (Wz->dtype == W->dtype && (mlrt_numel(Wz) == 1 || mlrt_numel(Wz) == g->M)),
               "%s: w's zero point must be of w's type, one value or one per output channel", op);
    MLRT_CHECK(!B || (B->dtype == MLRT_INT32 && mlrt_numel(B) == g->M && mlrt_is_contiguous(B)),
               "%s: B must be int32 with %lld elements", op, (long long)g->M);
    /* AMX: 1 x 1 windows read in place, or the channel-quad planes (channels a multiple of 64) */
    bool quads = qconv_quads_fit(g);
    bool amx = (g->pointwise || (quads && g->Cg % 64 == 0)) &&
               qconv_amx_fit(g->Mg, g->K, g->pointwise ? 1 : g->k_size, quads);
    if (packed) {
        int64_t base = qconv_packed_size(g->G, g->M, g->K), mark[3] = {0, 1, 0};
        int64_t with_amx = base + 64 + qconv_amx_size(g->G, g->M, g->K);
        MLRT_CHECK(packed->dtype == MLRT_UINT8 && mlrt_is_contiguous(packed) &&
                       (mlrt_numel(packed) == base || mlrt_numel(packed) == base + 64 ||
                        mlrt_numel(packed) == with_amx),
                   "%s: the packed weights do not fit w", op);
        if (mlrt_numel(packed) > base) memcpy(mark, (const char *)packed->data + base, sizeof mark);
        bool tagged = mark[0] == QUADS_TAG, in_amx = tagged && mark[2] == 1;
        /* (the order's taps: W's own order (1), or the quads' with this window's taps) */
        MLRT_CHECK(mlrt_numel(packed) == base ||
                       (tagged && (mark[1] == 1 || (mark[1] == g->k_size && quads)) && (mark[2] == 0 || mark[2] == 1) &&
                        mlrt_numel(packed) == (in_amx ? with_amx : base + 64)),
                   "%s: the packed weights do not fit w", op);
        quads = quads && mark[1] == g->k_size; /* (one tap: the two orders are the same) */
        amx = amx && in_amx && mark[1] == g->k_size;
    }
    if (mlrt_numel(Y) == 0) return MLRT_OK;
    int32_t *wz = malloc((size_t)(g->M + 1) * sizeof(int32_t));
    if (!wz) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "%s: out of memory", op);
    int64_t nwz = Wz ? mlrt_numel(Wz) : 0;
    for (int64_t m = 0; m < g->M; ++m) wz[m] = nwz ? qc_load8(Wz->data, nwz == 1 ? 0 : m, Wz->dtype) : 0;
    j.wz = wz;
    j.xz = (Xz ? qc_load8(Xz->data, 0, Xz->dtype) : 0) + (j.x_flip ? 128 : 0);
    j.bias = B ? B->data : NULL;
    j.out.c = Y->data, j.out.ldc = g->out_size;
    status = g->depthwise ? mlrt_qconv_depthwise(ctx, &j)
                          : qconv_gemm_run(ctx, op, &j, packed ? packed->data : NULL, quads, amx);
    free(wz);
    return status;
}

/* The node's inputs before the packed weights (params.packed_weights, 0: none). */
static int qconv_node_inputs(const char *op, const mlrt_conv_params *p, int32_t n_in, int32_t lo, int32_t hi,
                             int32_t *n_node) {
    int64_t pk = p->packed_weights;
    MLRT_CHECK(pk == 0 || (pk >= lo && pk == n_in - 1), "%s: packed weights at input %lld of %d", op, (long long)pk,
               n_in);
    *n_node = pk ? (int32_t)pk : n_in;
    MLRT_CHECK(*n_node >= lo && *n_node <= hi, "%s: expects %d to %d inputs", op, lo, hi);
    return MLRT_OK;
}

static const mlrt_tensor *qc_optional(const mlrt_tensor *in, int32_t n, int32_t i) {
    return i < n && mlrt_present(&in[i]) ? &in[i] : NULL;
}

/* inputs: x, w, x_zero_point (optional), w_zero_point (optional) [, packed w]; output: y (int32) */
static int k_convinteger(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                         int32_t n_out, const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_conv_params, p, params, params_size);
    int32_t n = 0;
    int status = qconv_node_inputs("ConvInteger", p, n_in, 2, 4, &n);
    if (status) return status;
    MLRT_CHECK(n_out == 1 && out[0].dtype == MLRT_INT32, "ConvInteger: one output, int32");
    mlrt_qgemm_out fin = {.out_type = MLRT_INT32};
    return qconv_compute(ctx, "ConvInteger", p, &in[0], qc_optional(in, n, 2), &in[1], qc_optional(in, n, 3), NULL,
                         p->packed_weights ? &in[n] : NULL, &out[0], &fin);
}

/* inputs: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B (optional)
 * [, packed w]; output: y */
static int k_qlinearconv(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                         int32_t n_out, const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_conv_params, p, params, params_size);
    const char *op = "QLinearConv";
    int32_t n = 0;
    int status = qconv_node_inputs(op, p, n_in, 8, 9, &n);
    if (status) return status;
    MLRT_CHECK(n_out == 1, "%s: expects 1 output", op);
    const mlrt_tensor *Xs = &in[1], *Ws = &in[4], *Ys = &in[6], *Yz = qc_optional(in, n, 7);
    mlrt_tensor *Y = &out[0];
    int64_t M = in[3].rank >= 1 ? in[3].shape[0] : 0, nws = mlrt_numel(Ws);
    MLRT_CHECK(qc_is_8bit(Y->dtype) && (!Yz || Yz->dtype == Y->dtype),
               "%s: y must be int8 or uint8, of its zero point's type", op);
    MLRT_CHECK(Xs->dtype == MLRT_FLOAT && Ws->dtype == MLRT_FLOAT && Ys->dtype == MLRT_FLOAT,
               "%s: the scales must be float", op);
    MLRT_CHECK(mlrt_numel(Xs) == 1 && mlrt_numel(Ys) == 1 && (!Yz || mlrt_numel(Yz) == 1),
               "%s: x_scale, y_scale and y_zero_point must be scalars", op);
    MLRT_CHECK(mlrt_is_contiguous(Ws) && (nws == 1 || nws == M), "%s: w_scale must have 1 or %lld elements", op,
               (long long)M);
    float *mult = malloc((size_t)(nws + 1) * sizeof(float));
    if (!mult) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "%s: out of memory", op);
    float xs = *(const float *)Xs->data, ys = *(const float *)Ys->data;
    for (int64_t m = 0; m < nws; ++m) mult[m] = mlrt_requant_multiplier(xs, ((const float *)Ws->data)[m], ys);
    mlrt_qgemm_out fin = {.scale = mult, .scale_mode = nws > 1 ? MLRT_QSCALE_ROW : MLRT_QSCALE_ONE,
                          .zp = Yz ? qc_load8(Yz->data, 0, Yz->dtype) : 0, .out_type = Y->dtype,
                          .lo = Y->dtype == MLRT_INT8 ? -128 : 0, .hi = Y->dtype == MLRT_INT8 ? 127 : 255};
    status = qconv_compute(ctx, op, p, &in[0], qc_optional(in, n, 2), &in[3], qc_optional(in, n, 5),
                           qc_optional(in, n, 8), p->packed_weights ? &in[n] : NULL, Y, &fin);
    free(mult);
    return status;
}

/* inputs: x, w, x_scale, w_scale, x_zero_point (optional), w_zero_point (optional), bias
 * (optional) [, packed w]; output: float y = clamp(float(ConvInteger) * (x_scale * w_scale)
 * + bias) (com.microsoft ConvIntegerToFloat, mlrt's own: what quantize_dynamic writes after
 * each ConvInteger, fused by native/optimizer/fuse_conv_integer_to_float.py).  The scales'
 * product is float32, as the graph's Mul; activation: none, Relu or Clip (alpha, beta). */
static int k_convinteger_to_float(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                                  int32_t n_out, const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_conv_params, p, params, params_size);
    const char *op = "ConvIntegerToFloat";
    int32_t n = 0;
    int status = qconv_node_inputs(op, p, n_in, 4, 7, &n);
    if (status) return status;
    MLRT_CHECK(n_out == 1 && out[0].dtype == MLRT_FLOAT, "%s: one output, float", op);
    const mlrt_tensor *Xs = &in[2], *Ws = &in[3], *B = qc_optional(in, n, 6);
    int64_t M = in[1].rank >= 1 ? in[1].shape[0] : 0, nws = mlrt_numel(Ws);
    MLRT_CHECK(Xs->dtype == MLRT_FLOAT && Ws->dtype == MLRT_FLOAT && mlrt_numel(Xs) == 1,
               "%s: x_scale must be one float, w_scale float", op);
    MLRT_CHECK(mlrt_is_contiguous(Ws) && (nws == 1 || nws == M), "%s: w_scale must have 1 or %lld elements", op,
               (long long)M);
    MLRT_CHECK(!B || (B->dtype == MLRT_FLOAT && mlrt_numel(B) == M && mlrt_is_contiguous(B)),
               "%s: bias must be float with %lld elements", op, (long long)M);
    MLRT_CHECK(p->activation == MLRT_CONV_ACT_NONE || p->activation == MLRT_CONV_ACT_RELU ||
                   p->activation == MLRT_CONV_ACT_CLIP,
               "%s: activation %lld (none, Relu or Clip)", op, (long long)p->activation);
    float *scale = malloc((size_t)(nws + 1) * sizeof(float));
    if (!scale) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "%s: out of memory", op);
    float xs = *(const float *)Xs->data;
    for (int64_t m = 0; m < nws; ++m) scale[m] = xs * ((const float *)Ws->data)[m];
    mlrt_qgemm_out fin = {.scale = scale, .scale_mode = nws > 1 ? MLRT_QSCALE_ROW : MLRT_QSCALE_ONE,
                          .out_type = MLRT_FLOAT, .fbias = B ? B->data : NULL, .flo = -INFINITY, .fhi = INFINITY};
    if (p->activation == MLRT_CONV_ACT_RELU) fin.flo = 0.0f;
    if (p->activation == MLRT_CONV_ACT_CLIP) fin.flo = (float)p->alpha, fin.fhi = (float)p->beta;
    status = qconv_compute(ctx, op, p, &in[0], qc_optional(in, n, 4), &in[1], qc_optional(in, n, 5), NULL,
                           p->packed_weights ? &in[n] : NULL, &out[0], &fin);
    free(scale);
    return status;
}

#define MASK_8BIT (MLRT_BIT(MLRT_INT8) | MLRT_BIT(MLRT_UINT8))

MLRT_KERNEL(convinteger, "ConvInteger", "", 10, MLRT_OPSET_MAX, MASK_8BIT, k_convinteger);
MLRT_KERNEL(qlinearconv, "QLinearConv", "", 10, MLRT_OPSET_MAX, MASK_8BIT, k_qlinearconv);
MLRT_KERNEL(convintegertofloat, "ConvIntegerToFloat", "com.microsoft", 1, MLRT_OPSET_MAX, MASK_8BIT,
            k_convinteger_to_float);
