/* conv_internal.h -- what the files of the Conv kernel share: the job kernels/conv.c
 * fills (checked shapes, operands, tiling) and the paths that run its tasks on the
 * intra-op pool, in kernels/conv_depthwise.c, conv_gemm.c and conv_direct.c (conv.c says
 * which runs when).  Internal, not ABI: it lives here because cffi reads every header
 * in kernels/. */
#ifndef MLRT_CONV_INTERNAL_H
#define MLRT_CONV_INTERNAL_H

#include <stdatomic.h>

#include "gemm.h"
#include "internal.h"
#include "../kernels/conv.h" /* the params */

#define CONV_MAX_SPATIAL 6
/* Patch rows per block of the micro-kernel paths (packed strips and direct; the direct
 * path's 1 x 1 kernels take up to 1024, conv_direct.c). */
#define CONV_KC 256

/* The shapes of one Conv, resolved and checked by kernels/conv.c. */
typedef struct conv_geom {
    int64_t N, C, M, G, Cg, Mg;
    int32_t nd;                     /* spatial rank as computed (1-D runs as 2-D) */
    int64_t in[CONV_MAX_SPATIAL], k[CONV_MAX_SPATIAL], out[CONV_MAX_SPATIAL];
    int64_t s[CONV_MAX_SPATIAL], d[CONV_MAX_SPATIAL], pb[CONV_MAX_SPATIAL];
    int64_t in_size, out_size, k_size, kdim;
    bool pointwise, depthwise;
} conv_geom;

/* The direct path's set-up (kernels/conv_direct.c): row k = (c, kh, kw) of the patch
 * matrix is the padded input shifted, output position v = oh * PW + ow reads P[v + off[k]].
 * With strides (sh, sw) each channel's padded plane is kept as sh * sw phase planes
 * (phase (rp, cp) holds padded rows rp, rp + sh, ... and columns cp, cp + sw, ...), so
 * that a tap still reads a contiguous run: off[k] = c * plane + phase(kh * dh % sh,
 * kw * dw % sw) + (kh * dh / sh) * PW + kw * dw / sw (unit strides: one phase). */
typedef struct conv_direct {
    float *P;               /* N * C padded planes (NULL for pointwise: X is used as is) */
    int64_t PW, plane;      /* phase row width, floats per channel's planes (with slack) */
    int64_t phase;          /* floats per phase plane */
    uint32_t used;          /* bit rp * sw + cp: a tap reads phase (rp, cp) (the others stay unset) */
    int64_t vsize;          /* positions of the computed grid: OH * PW, or out_size */
    int64_t *off;           /* kdim row offsets */
} conv_direct;

/* FusedConvMaxPool's MaxPool (kernels/conv.c): 2-D, unit dilations, over the conv's output. */
typedef struct conv_pool {
    int64_t k[2], s[2], pb[2];  /* window, strides, leading pads */
    int64_t out[2];             /* Y's rows and columns */
    int64_t bands;              /* bands of Y's rows per image on the direct path (tasks: n * bands + band) */
} conv_pool;

/* One Conv call.  Tasks are (image, group, column tile, filter block):
 * t = ((n * G + grp) * n_tiles + tile) * n_mblocks + mblock. */
typedef struct conv_job {
    conv_geom g;
    int32_t dtype;          /* MLRT_FLOAT or MLRT_DOUBLE */
    const void *x, *w, *b;
    const float *wp;        /* W packed for the strip kernels (mlrt_conv_pack_weights), or NULL */
    void *y;
    int64_t tile, n_tiles, mblock, n_mblocks, activation;
    double alpha, beta;     /* activation parameters */
    const void *z;          /* FusedConv's Z, added before the activation (or NULL) */
    int64_t strip;          /* micro-kernel strip width (packed and direct paths), else 0 */
    conv_direct direct;     /* set up for the direct path (off != NULL) */
    const conv_pool *pool;  /* FusedConvMaxPool on the direct path: y is the pool's output (else NULL) */
    atomic_int failed;      /* set by a task that could not get its scratch buffer */
} conv_job;

static inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* The strip kernels' view of group grp's filters: packed when the plan packed them. */
static inline mlrt_sgemm_a conv_filters(const conv_job *j, int64_t grp) {
    if (j->wp) return (mlrt_sgemm_a){j->wp + grp * mlrt_sgemm_packed_size(j->g.Mg, j->g.kdim), j->g.kdim, true};
    return (mlrt_sgemm_a){(const float *)j->w + grp * j->g.Mg * j->g.kdim, j->g.kdim, false};
}

/* What the strip kernels finish in their store for filters from `bias` (NULL: none) and Z
 * rows from z (NULL: none, or added later): bias, Z and the activations they know.
 * Returns true when the activation is left to mlrt_epilogue_f32 (run after the last
 * block; any Z is in then). */
static inline bool conv_strip_epilogue(const conv_job *j, const float *bias, const float *z, mlrt_strip_epilogue *e) {
    *e = (mlrt_strip_epilogue){bias, z, MLRT_STRIP_NONE, (float)j->alpha, (float)j->beta};
    switch (j->activation) {
    case MLRT_CONV_ACT_NONE: return false;
    case MLRT_CONV_ACT_RELU: e->act = MLRT_STRIP_RELU; return false;
    case MLRT_CONV_ACT_CLIP: e->act = MLRT_STRIP_CLIP; return false;
    case MLRT_CONV_ACT_HARD_SWISH: e->act = MLRT_STRIP_HARD_SWISH; return false;
    case MLRT_CONV_ACT_SWISH: e->act = MLRT_STRIP_SWISH; return false;   /* (alpha in lo) */
    case MLRT_CONV_ACT_SIGMOID: e->act = MLRT_STRIP_SIGMOID; return false;
    default: return true;
    }
}

/* Task t of a job decoded: image n, group grp, columns [c0, c0 + tw) of `cols`, filters
 * [m0, m0 + mw) of the group.  False when the tile or block is empty. */
typedef struct conv_task { int64_t n, grp, c0, tw, m0, mw; } conv_task;

static inline bool conv_task_at(const conv_job *j, int64_t t, int64_t cols, conv_task *k) {
    int64_t mb = t % j->n_mblocks, r = t / j->n_mblocks;
    int64_t ct = r % j->n_tiles, ng = r / j->n_tiles;
    k->n = ng / j->g.G;
    k->grp = ng % j->g.G;
    k->c0 = ct * j->tile;
    k->tw = cols - k->c0 < j->tile ? cols - k->c0 : j->tile;
    k->m0 = mb * j->mblock;
    k->mw = j->g.Mg - k->m0 < j->mblock ? j->g.Mg - k->m0 : j->mblock;
    return k->tw > 0 && k->mw > 0;
}

/* The paths: each an mlrt_range_fn over the tasks of a conv_job (arg). */
void mlrt_conv_depthwise_tasks(void *arg, int64_t begin, int64_t end); /* tasks: (band * N + n) * M + m */
/* Bands of output rows a depthwise conv's planes are cut into on `threads` threads (kept
 * as j->n_tiles): one per thread where the path runs row ranges and the planes are tall,
 * so that each thread computes the same rows of every channel as the convs before and
 * after it (cut by output position), in its own core's cache; else 1. */
int64_t mlrt_conv_depthwise_bands(const conv_job *j, int64_t threads);
#ifdef __aarch64__
/* One plane of a 3 x 3 depthwise conv (unit dilations, column stride 1 or 2) on NEON
 * (kernels/conv_depthwise_neon.c): bias, the taps, then the clamp [lo, hi]; zero: a row
 * of W zeros. */
void mlrt_dw3_plane_neon(const float *xp, const float *w, float *yp, const conv_geom *g, float bias, float lo,
                         float hi, const float *zero);
/* The same, stride 1 with OW == W, as one flat run (narrow planes); mk: the shape's lane
 * masks from mlrt_dw3_flat_masks_neon, ceil(OH * W / 4) words. */
void mlrt_dw3_flat_masks_neon(const conv_geom *g, uint64_t *mk);
void mlrt_dw3_flat_neon(const float *xp, const float *w, float *yp, const conv_geom *g, float bias, float lo,
                        float hi, const uint64_t *mk);
#endif
void mlrt_conv_gemm_tasks(void *arg, int64_t begin, int64_t end);      /* im2col + BLAS */
void mlrt_conv_strip_tasks(void *arg, int64_t begin, int64_t end);     /* im2col into packed strips */
void mlrt_conv_direct_tasks(void *arg, int64_t begin, int64_t end);    /* after mlrt_conv_direct_setup */
/* FusedConvMaxPool on the direct path, where its grid is computed a row at a time (the
 * rows' path of mlrt_conv_direct_tasks; mlrt_conv_direct_rowwise says when): tasks are
 * (image, band of Y's rows), j->pool set, one group. */
bool mlrt_conv_direct_rowwise(const conv_job *j);
void mlrt_conv_direct_pool_tasks(void *arg, int64_t begin, int64_t end);

/* The Winograd path over filters u made by mlrt_conv_winograd_pack (kernels/conv_winograd.c;
 * runs its own parallel loops). */
int mlrt_conv_winograd(conv_job *j, const mlrt_context *ctx, const float *u);

/* The filter-vector path over weights made by mlrt_conv_fvec_pack (kernels/conv_fvec.c;
 * runs its own parallel loops). */
int mlrt_conv_fvec(conv_job *j, const mlrt_context *ctx, const float *wp);

/* Decide on the direct path and, if taken, set up j->direct (the padded copy of X and
 * the row offsets, made on the pool); j->direct.off stays NULL when it is not taken. */
int mlrt_conv_direct_setup(conv_job *j, const mlrt_context *ctx);

#endif
