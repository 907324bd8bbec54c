/* spatial.c -- AffineGrid (opset 20), Col2Im (18), MaxUnpool (9, 11, 22) and
 * RoiAlign (10, 16, 22).
 *
 * AffineGrid maps the normalised base grid of each image through its theta.
 * Col2Im sums columns back into images (the adjoint of im2col), one (image,
 * channel) plane per task.  MaxUnpool zeroes the output and scatters each element to
 * the position its index names.  RoiAlign average- or max-pools bilinear samples of
 * each region; the sample positions and weights of a region are computed once and
 * shared by a block of channels.  Output shapes and parameters come resolved from the
 * Python semantics; every index is checked here before memory is touched. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "internal.h"
#include "spatial.h"

#define SP_MAX_SPATIAL 6

/* ---- AffineGrid --------------------------------------------------------------------------------- */

typedef struct ag_job {
    int32_t nd, dtype;
    int64_t dims[3], positions;
    bool align;
    const void *theta;
    void *grid;
} ag_job;

static double ag_base(int64_t i, int64_t len, bool align) {
    if (align) return len > 1 ? -1 + (double)i * (2.0 / (double)(len - 1)) : -1;
    double step = 2.0 / (double)len;
    return -1 + step / 2 + (double)i * step;
}

static void ag_images(void *arg, int64_t begin, int64_t end) {
    const ag_job *j = arg;
    const int32_t nd = j->nd, cols = nd + 1;
    for (int64_t n = begin; n < end; ++n) {
        double th[12];
        for (int32_t k = 0; k < nd * cols; ++k)
            th[k] = j->dtype == MLRT_FLOAT ? ((const float *)j->theta)[n * nd * cols + k]
                                           : ((const double *)j->theta)[n * nd * cols + k];
        for (int64_t p = 0; p < j->positions; ++p) {
            double base[3];  /* x (last axis), y, z */
            int64_t rem = p;
            for (int32_t d = nd - 1; d >= 0; --d) {
                base[nd - 1 - d] = ag_base(rem % j->dims[d], j->dims[d], j->align);
                rem /= j->dims[d];
            }
            for (int32_t k = 0; k < nd; ++k) {
                double v = th[k * cols + nd];
                for (int32_t i = 0; i < nd; ++i) v += th[k * cols + i] * base[i];
                int64_t at = (n * j->positions + p) * nd + k;
                if (j->dtype == MLRT_FLOAT) ((float *)j->grid)[at] = (float)v;
                else ((double *)j->grid)[at] = v;
            }
        }
    }
}

static int k_affinegrid(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                        const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_affinegrid_params, p, params, params_size);
    MLRT_CHECK(n_in >= 1 && n_out >= 1 && mlrt_present(&in[0]) && mlrt_present(&out[0]), "expects theta and an output");
    const mlrt_tensor *theta = &in[0];
    mlrt_tensor *grid = &out[0];
    if (theta->dtype != MLRT_FLOAT && theta->dtype != MLRT_DOUBLE)
        return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "AffineGrid takes float or double theta, not type %d", theta->dtype);
    MLRT_CHECK(theta->rank == 3 && (theta->shape[1] == 2 || theta->shape[1] == 3) &&
                   theta->shape[2] == theta->shape[1] + 1,
               "theta must be (N, 2, 3) or (N, 3, 4)");
    const int32_t nd = (int32_t)theta->shape[1];
    MLRT_CHECK(grid->dtype == theta->dtype && grid->rank == nd + 2 && grid->shape[0] == theta->shape[0] &&
                   grid->shape[nd + 1] == nd,
               "grid must be (N, spatial..., %d) of theta's type", nd);
    MLRT_CHECK(mlrt_is_contiguous(theta) && mlrt_is_contiguous(grid), "needs contiguous tensors");
    ag_job job = {.nd = nd, .dtype = theta->dtype, .positions = 1, .align = p->align_corners != 0,
                  .theta = theta->data, .grid = grid->data};
    for (int32_t d = 0; d < nd; ++d) {
        job.dims[d] = grid->shape[d + 1];
        job.positions *= job.dims[d];
    }
    if (mlrt_numel(grid) == 0) return MLRT_OK;
    mlrt_parallel_for(ctx, theta->shape[0], 1, ag_images, &job);
    return MLRT_OK;
}

MLRT_KERNEL(affinegrid, "AffineGrid", "", 20, MLRT_OPSET_MAX, MLRT_MASK_FLOATS, k_affinegrid);

/* ---- Col2Im ------------------------------------------------------------------------------------- */

typedef struct c2i_job {
    const mlrt_col2im_params *p;
    int32_t dtype, nd;
    int64_t channels, kernel, columns, plane;
    int64_t image[SP_MAX_SPATIAL], istride[SP_MAX_SPATIAL];
    const char *x;
    char *y;
    size_t es;
} c2i_job;

#define C2I_PLANE(T)                                                                         \
    do {                                                                                   \
        const T *src = (const T *)j->x + nc * j->kernel * j->columns;                      \
        T *dst = (T *)j->y + nc * j->plane;                                                \
        for (int64_t i = 0; i < j->plane; ++i) dst[i] = 0;                                 \
        int64_t b[SP_MAX_SPATIAL] = {0};                                                   \
        for (int64_t k = 0; k < j->kernel; ++k) {                                          \
            int64_t l[SP_MAX_SPATIAL] = {0};                                               \
            const T *col = src + k * j->columns;                                           \
            for (int64_t c = 0; c < j->columns; ++c) {                                     \
                int64_t at = 0;                                                            \
                bool inside = true;                                                        \
                for (int32_t d = 0; d < j->nd; ++d) {                                      \
                    int64_t v = l[d] * p->strides[d] - p->pads_begin[d] + b[d] * p->dilations[d]; \
                    if (v < 0 || v >= j->image[d]) { inside = false; break; }              \
                    at += v * j->istride[d];                                               \
                }                                                                          \
                if (inside) dst[at] += col[c];                                             \
                mlrt_index_next(l, p->n_blocks, j->nd);                                    \
            }                                                                              \
            mlrt_index_next(b, p->block, j->nd);                                           \
        }                                                                                  \
    } while (0)

static void c2i_planes(void *arg, int64_t begin, int64_t end) {
    const c2i_job *j = arg;
    const mlrt_col2im_params *p = j->p;
    for (int64_t nc = begin; nc < end; ++nc) {
        switch (j->dtype) {
        case MLRT_FLOAT: C2I_PLANE(float); break;
        case MLRT_DOUBLE: C2I_PLANE(double); break;
        case MLRT_INT8: C2I_PLANE(int8_t); break;
        case MLRT_UINT8: C2I_PLANE(uint8_t); break;
        case MLRT_INT16: C2I_PLANE(int16_t); break;
        case MLRT_UINT16: C2I_PLANE(uint16_t); break;
        case MLRT_INT32: C2I_PLANE(int32_t); break;
        case MLRT_UINT32: C2I_PLANE(uint32_t); break;
        case MLRT_INT64: C2I_PLANE(int64_t); break;
        default: C2I_PLANE(uint64_t); break;
        }
    }
}

static int k_col2im(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                    const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_col2im_params, p, params, params_size);
    MLRT_CHECK(n_in >= 1 && n_out >= 1 && mlrt_present(&in[0]) && mlrt_present(&out[0]), "expects an input and an output");
    const mlrt_tensor *x = &in[0];
    mlrt_tensor *y = &out[0];
    switch (x->dtype) {
    case MLRT_FLOAT: case MLRT_DOUBLE: case MLRT_INT8: case MLRT_UINT8: case MLRT_INT16: case MLRT_UINT16:
    case MLRT_INT32: case MLRT_UINT32: case MLRT_INT64: case MLRT_UINT64: break;
    default: return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "Col2Im does not support element type %d", x->dtype);
    }
    MLRT_CHECK(p->n_spatial >= 1 && p->n_spatial <= SP_MAX_SPATIAL, "1 to %d spatial axes", SP_MAX_SPATIAL);
    const int32_t nd = (int32_t)p->n_spatial;
    MLRT_CHECK(x->rank == 3 && y->rank == nd + 2 && y->dtype == x->dtype && y->shape[0] == x->shape[0],
               "input must be (N, C * block, L) and output (N, C, image...) of its type");
    MLRT_CHECK(mlrt_is_contiguous(x) && mlrt_is_contiguous(y), "needs contiguous tensors");
    c2i_job job = {.p = p, .dtype = x->dtype, .nd = nd, .channels = y->shape[1], .kernel = 1, .columns = 1,
                   .plane = 1, .x = x->data, .y = y->data};
    for (int32_t d = nd - 1; d >= 0; --d) {
        MLRT_CHECK(p->block[d] >= 1 && p->n_blocks[d] >= 0 && p->strides[d] >= 1 && p->dilations[d] >= 1,
                   "bad block geometry on axis %d", d);
        job.image[d] = y->shape[d + 2];
        job.istride[d] = job.plane;
        job.plane *= job.image[d];
        job.kernel *= p->block[d];
        job.columns *= p->n_blocks[d];
    }
    MLRT_CHECK(x->shape[1] == job.channels * job.kernel && x->shape[2] == job.columns,
               "input is (%lld, %lld, %lld), expected (N, %lld, %lld)", (long long)x->shape[0], (long long)x->shape[1],
               (long long)x->shape[2], (long long)(job.channels * job.kernel), (long long)job.columns);
    if (mlrt_numel(y) == 0) return MLRT_OK;
    int64_t planes = y->shape[0] * job.channels;
    mlrt_parallel_for(ctx, planes, 1, c2i_planes, &job);
    return MLRT_OK;
}

MLRT_KERNEL(col2im, "Col2Im", "", 18, MLRT_OPSET_MAX, MLRT_MASK_NUMERIC, k_col2im);

/* ---- MaxUnpool ---------------------------------------------------------------------------------- */

static int k_maxunpool(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                       const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_maxunpool_params, p, params, params_size);
    MLRT_CHECK(n_in >= 2 && n_out >= 1 && mlrt_present(&in[0]) && mlrt_present(&in[1]) && mlrt_present(&out[0]),
               "expects X, I and an output");
    const mlrt_tensor *x = &in[0], *ind = &in[1];
    mlrt_tensor *y = &out[0];
    const size_t es = mlrt_dtype_size(x->dtype);
    if (!es) return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "element type %d not supported", x->dtype);
    MLRT_CHECK(ind->dtype == MLRT_INT64, "indices must be int64");
    MLRT_CHECK(p->n_spatial >= 1 && p->n_spatial <= SP_MAX_SPATIAL && x->rank == p->n_spatial + 2,
               "X must be (N, C, spatial...)");
    MLRT_CHECK(mlrt_same_shape(x, ind), "indices must have X's shape");
    MLRT_CHECK(y->dtype == x->dtype && y->rank == x->rank && y->shape[0] == x->shape[0] && y->shape[1] == x->shape[1],
               "output must be (N, C, spatial...) of X's type");
    MLRT_CHECK(mlrt_is_contiguous(x) && mlrt_is_contiguous(ind) && mlrt_is_contiguous(y), "needs contiguous tensors");
    const int32_t r = x->rank;
    int64_t shape[MLRT_MAX_RANK], total = 1;
    for (int32_t d = 0; d < r; ++d) {
        shape[d] = d < 2 ? x->shape[d] : p->inferred[d - 2];
        MLRT_CHECK(shape[d] >= 0, "negative inferred size");
        total *= shape[d];
    }
    memset(y->data, 0, (size_t)mlrt_numel(y) * es);
    const int64_t n = mlrt_numel(x), *I = ind->data;
    const char *src = x->data;
    char *dst = y->data;
    for (int64_t i = 0; i < n; ++i) {
        int64_t at = I[i];
        MLRT_CHECK(at >= 0 && at < total, "index %lld at position %lld is outside [0, %lld)", (long long)at, (long long)i,
                   (long long)total);
        int64_t off = 0, stride = 1;
        bool inside = true;
        for (int32_t d = r - 1; d >= 0; --d) {
            int64_t c = at % shape[d];
            at /= shape[d];
            if (c >= y->shape[d]) inside = false;
            off += c * stride;
            stride *= y->shape[d];
        }
        if (inside) memcpy(dst + (size_t)off * es, src + (size_t)i * es, es);
    }
    (void)ctx;
    return MLRT_OK;
}

MLRT_KERNEL(maxunpool, "MaxUnpool", "", 9, MLRT_OPSET_MAX, MLRT_MASK_ALL, k_maxunpool);

/* ---- RoiAlign ----------------------------------------------------------------------------------- */

#define RA_CHANNEL_BLOCK 32
#define RA_MAX_SAMPLES ((int64_t)1 << 26)

typedef struct ra_sample {
    int64_t pos[4];
    double w[4];
} ra_sample;

typedef struct ra_job {
    const mlrt_roialign_params *p;
    int32_t dtype;
    int64_t channels, height, width, oh, ow, cblocks;
    const void *x, *rois;
    const int64_t *batch;
    void *y;
    atomic_int failed;
} ra_job;

static double ra_load(const void *base, int32_t dtype, int64_t i) {
    return dtype == MLRT_FLOAT ? (double)((const float *)base)[i] : ((const double *)base)[i];
}

static int64_t ra_grid(double extent, int64_t bins, int64_t ratio) {
    if (ratio > 0) return ratio;
    double g = ceil(extent / (double)bins);
    return g > 0 ? (g < 1e6 ? (int64_t)g : 1000000) : 0;
}

/* Pool the samples of every bin of one channel (avg: mean of the bilinear values;
 * max: the largest weighted corner, as onnx.reference and onnxruntime do). */
#define RA_BINS(T)                                                                           \
    do {                                                                                   \
        const T *xp = (const T *)j->x + xoff;                                              \
        T *yp = (T *)j->y + yoff;                                                          \
        const ra_sample *e = s;                                                            \
        for (int64_t bin = 0; bin < j->oh * j->ow; ++bin) {                                \
            double v = 0;                                                                  \
            if (p->mode == MLRT_ROIALIGN_AVG) {                                            \
                for (int64_t q = 0; q < per_bin; ++q, ++e)                                 \
                    v += e->w[0] * xp[e->pos[0]] + e->w[1] * xp[e->pos[1]] +               \
                         e->w[2] * xp[e->pos[2]] + e->w[3] * xp[e->pos[3]];                \
                v /= (double)count;                                                        \
            } else {                                                                       \
                for (int64_t q = 0; q < per_bin; ++q, ++e) {                               \
                    double t0 = e->w[0] * xp[e->pos[0]], t1 = e->w[1] * xp[e->pos[1]];    \
                    double t2 = e->w[2] * xp[e->pos[2]], t3 = e->w[3] * xp[e->pos[3]];    \
                    double m01 = t1 > t0 ? t1 : t0, m23 = t3 > t2 ? t3 : t2;               \
                    double m = m23 > m01 ? m23 : m01;                                      \
                    v = q == 0 || m > v ? m : v;                                           \
                }                                                                          \
            }                                                                              \
            yp[bin] = (T)v;                                                                \
        }                                                                                  \
    } while (0)

static void ra_tasks(void *arg, int64_t begin, int64_t end) {
    ra_job *j = arg;
    const mlrt_roialign_params *p = j->p;
    const int64_t H = j->height, W = j->width;
    for (int64_t task = begin; task < end; ++task) {
        const int64_t r = task / j->cblocks, c0 = (task % j->cblocks) * RA_CHANNEL_BLOCK;
        const int64_t c1 = c0 + RA_CHANNEL_BLOCK < j->channels ? c0 + RA_CHANNEL_BLOCK : j->channels;
        const double off = p->half_pixel ? 0.5 : 0, sc = p->spatial_scale;
        double x0 = ra_load(j->rois, j->dtype, r * 4) * sc - off, y0 = ra_load(j->rois, j->dtype, r * 4 + 1) * sc - off;
        double x1 = ra_load(j->rois, j->dtype, r * 4 + 2) * sc - off, y1 = ra_load(j->rois, j->dtype, r * 4 + 3) * sc - off;
        double rw = x1 - x0, rh = y1 - y0;
        if (!p->half_pixel) {
            rw = rw > 1 ? rw : 1;
            rh = rh > 1 ? rh : 1;
        }
        const double bh = rh / (double)j->oh, bw = rw / (double)j->ow;
        const int64_t gh = ra_grid(rh, j->oh, p->sampling_ratio), gw = ra_grid(rw, j->ow, p->sampling_ratio);
        const int64_t per_bin = gh * gw, count = per_bin > 1 ? per_bin : 1;
        const int64_t n_samples = j->oh * j->ow * per_bin;
        if (n_samples > RA_MAX_SAMPLES) {
            atomic_store(&j->failed, 2);
            continue;
        }
        ra_sample *s = malloc((size_t)(n_samples > 0 ? n_samples : 1) * sizeof *s);
        if (!s) {
            atomic_store(&j->failed, 1);
            continue;
        }
        int64_t k = 0;
        for (int64_t ph = 0; ph < j->oh; ++ph)
            for (int64_t pw = 0; pw < j->ow; ++pw)
                for (int64_t iy = 0; iy < gh; ++iy) {
                    double yy = y0 + (double)ph * bh + ((double)iy + 0.5) * bh / (double)gh;
                    for (int64_t ix = 0; ix < gw; ++ix, ++k) {
                        double xx = x0 + (double)pw * bw + ((double)ix + 0.5) * bw / (double)gw;
                        ra_sample *e = &s[k];
                        if (!(yy >= -1.0 && yy <= (double)H && xx >= -1.0 && xx <= (double)W)) {
                            memset(e, 0, sizeof *e);
                            continue;
                        }
                        double yv = yy > 0 ? yy : 0, xv = xx > 0 ? xx : 0;
                        int64_t yl = (int64_t)yv, xl = (int64_t)xv, yhi, xhi;
                        if (yl >= H - 1) { yhi = yl = H - 1; yv = (double)yl; } else yhi = yl + 1;
                        if (xl >= W - 1) { xhi = xl = W - 1; xv = (double)xl; } else xhi = xl + 1;
                        double ly = yv - (double)yl, lx = xv - (double)xl, hy = 1 - ly, hx = 1 - lx;
                        e->pos[0] = yl * W + xl;
                        e->pos[1] = yl * W + xhi;
                        e->pos[2] = yhi * W + xl;
                        e->pos[3] = yhi * W + xhi;
                        e->w[0] = hy * hx;
                        e->w[1] = hy * lx;
                        e->w[2] = ly * hx;
                        e->w[3] = ly * lx;
                    }
                }
        const int64_t plane = H * W, b = j->batch[r];
        for (int64_t c = c0; c < c1; ++c) {
            const int64_t xoff = (b * j->channels + c) * plane, yoff = (r * j->channels + c) * j->oh * j->ow;
            if (j->dtype == MLRT_FLOAT) RA_BINS(float);
            else RA_BINS(double);
        }
        free(s);
    }
}

static int k_roialign(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                      const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_roialign_params, p, params, params_size);
    MLRT_CHECK(n_in >= 3 && n_out >= 1 && mlrt_present(&in[0]) && mlrt_present(&in[1]) && mlrt_present(&in[2]) &&
                   mlrt_present(&out[0]),
               "expects X, rois, batch_indices and an output");
    const mlrt_tensor *x = &in[0], *rois = &in[1], *bi = &in[2];
    mlrt_tensor *y = &out[0];
    if (x->dtype != MLRT_FLOAT && x->dtype != MLRT_DOUBLE)
        return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "RoiAlign takes float or double X, not type %d", x->dtype);
    MLRT_CHECK(p->mode == MLRT_ROIALIGN_AVG || p->mode == MLRT_ROIALIGN_MAX, "unknown mode %lld", (long long)p->mode);
    MLRT_CHECK(x->rank == 4, "X must be (N, C, H, W)");
    MLRT_CHECK(rois->dtype == x->dtype && rois->rank == 2 && rois->shape[1] == 4, "rois must be (num_rois, 4) of X's type");
    MLRT_CHECK(bi->dtype == MLRT_INT64 && bi->rank == 1 && bi->shape[0] == rois->shape[0],
               "batch_indices must be int64 of shape (num_rois,)");
    MLRT_CHECK(y->dtype == x->dtype && y->rank == 4 && y->shape[0] == rois->shape[0] && y->shape[1] == x->shape[1],
               "output must be (num_rois, C, output_height, output_width)");
    MLRT_CHECK(mlrt_is_contiguous(x) && mlrt_is_contiguous(rois) && mlrt_is_contiguous(bi) && mlrt_is_contiguous(y),
               "needs contiguous tensors");
    const int64_t R = rois->shape[0], *batch = bi->data;
    for (int64_t r = 0; r < R; ++r)
        MLRT_CHECK(batch[r] >= 0 && batch[r] < x->shape[0], "batch index %lld of roi %lld is outside [0, %lld)",
                   (long long)batch[r], (long long)r, (long long)x->shape[0]);
    if (mlrt_numel(y) == 0) return MLRT_OK;
    MLRT_CHECK(x->shape[2] > 0 && x->shape[3] > 0, "X has no pixels to sample");
    ra_job job = {.p = p, .dtype = x->dtype, .channels = x->shape[1], .height = x->shape[2], .width = x->shape[3],
                  .oh = y->shape[2], .ow = y->shape[3], .x = x->data, .rois = rois->data, .batch = batch, .y = y->data};
    atomic_init(&job.failed, 0);
    job.cblocks = (job.channels + RA_CHANNEL_BLOCK - 1) / RA_CHANNEL_BLOCK;
    mlrt_parallel_for(ctx, R * job.cblocks, 1, ra_tasks, &job);
    int failed = atomic_load(&job.failed);
    if (failed == 2) return mlrt_fail(MLRT_ERR_INVALID_ARGUMENT, "a roi needs over %lld samples", (long long)RA_MAX_SAMPLES);
    if (failed) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "cannot allocate RoiAlign samples");
    return MLRT_OK;
}

MLRT_KERNEL(roialign, "RoiAlign", "", 10, MLRT_OPSET_MAX, MLRT_MASK_FLOATS, k_roialign);
