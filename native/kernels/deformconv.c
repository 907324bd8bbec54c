/* deformconv.c -- DeformConv (2-D).
 *
 * Each kernel tap samples the input at its regular position moved by a learned
 * offset (bilinear interpolation; samples outside the image read 0), scaled by the
 * optional mask.  Per image and offset group the samples are gathered into columns
 * [C/group * kh * kw, oH * oW] (im2col with deformation), then each group is one GEMM
 * with its weights, plus the bias.  float32, float16 and bfloat16 compute in float,
 * double in double. */
#include <math.h>
#include <stdlib.h>

#include "deformconv.h"
#include "gemm.h"
#include "internal.h"

#define store_f(b, t, i, v) mlrt_store_real((b), (i), (t), (v))
#define load_f(b, t, i) mlrt_load_as_double((b), (i), (t))

typedef struct deform_job {
    const mlrt_deform_conv_params *p;
    const mlrt_tensor *x, *offset, *mask;
    int64_t n;           /* the image */
    int64_t C, H, W, OH, OW;
    void *col;           /* [C * kh * kw, OH * OW] of float or double */
    bool dbl;
} deform_job;

/* bilinear sample of plane at (h, w); corners outside the plane count as 0 */
static double sample(const void *x, int32_t dt, int64_t plane, int64_t H, int64_t W, double h, double w) {
    if (!(h > -1.0 && h < (double)H && w > -1.0 && w < (double)W)) return 0.0;
    double hf = floor(h), wf = floor(w);
    int64_t h0 = (int64_t)hf, w0 = (int64_t)wf;
    double lh = h - hf, lw = w - wf, v = 0.0;
    for (int dy = 0; dy < 2; ++dy)
        for (int dx = 0; dx < 2; ++dx) {
            int64_t hh = h0 + dy, ww = w0 + dx;
            double wt = (dy ? lh : 1.0 - lh) * (dx ? lw : 1.0 - lw);
            if (hh >= 0 && hh < H && ww >= 0 && ww < W && wt != 0.0) v += wt * load_f(x, dt, plane + hh * W + ww);
        }
    return v;
}

/* rows of the column matrix: (channel, tap) pairs */
static void deform_rows(void *arg, int64_t begin, int64_t end) {
    const deform_job *j = arg;
    const mlrt_deform_conv_params *p = j->p;
    int64_t kh = p->kernel[0], kw = p->kernel[1], taps = kh * kw, ohw = j->OH * j->OW;
    int64_t per_og = j->C / p->offset_group;
    int32_t dt = j->x->dtype;
    for (int64_t r = begin; r < end; ++r) {
        int64_t c = r / taps, t = r % taps, ki = t / kw, kj = t % kw, og = c / per_og;
        int64_t plane = (j->n * j->C + c) * j->H * j->W;
        int64_t off0 = ((j->n * p->offset_group + og) * taps + t) * 2 * ohw;
        int64_t m0 = ((j->n * p->offset_group + og) * taps + t) * ohw;
        for (int64_t oh = 0; oh < j->OH; ++oh)
            for (int64_t ow = 0; ow < j->OW; ++ow) {
                int64_t o = oh * j->OW + ow;
                double h = (double)(oh * p->strides[0] - p->pads_begin[0] + ki * p->dilations[0]) +
                           load_f(j->offset->data, dt, off0 + o);
                double w = (double)(ow * p->strides[1] - p->pads_begin[1] + kj * p->dilations[1]) +
                           load_f(j->offset->data, dt, off0 + ohw + o);
                double v = sample(j->x->data, dt, plane, j->H, j->W, h, w);
                if (j->mask) v *= load_f(j->mask->data, dt, m0 + o);
                if (j->dbl) ((double *)j->col)[r * ohw + o] = v;
                else ((float *)j->col)[r * ohw + o] = (float)v;
            }
    }
}

static bool dims4(const mlrt_tensor *t, int64_t a, int64_t b, int64_t c, int64_t d) {
    return t->rank == 4 && t->shape[0] == a && t->shape[1] == b && t->shape[2] == c && t->shape[3] == d &&
           mlrt_is_contiguous(t);
}

/* inputs: X, W, offset, [B], [mask]; output: Y */
static int k_deform_conv(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                         int32_t n_out, const void *params, size_t params_size) {
    MLRT_CHECK(n_in >= 3 && n_in <= 5 && n_out == 1, "expects 3 to 5 inputs and 1 output");
    MLRT_PARAMS(mlrt_deform_conv_params, p, params, params_size);
    const mlrt_tensor *x = &in[0], *w = &in[1], *off = &in[2];
    const mlrt_tensor *b = n_in > 3 && mlrt_present(&in[3]) ? &in[3] : NULL;
    const mlrt_tensor *mask = n_in > 4 && mlrt_present(&in[4]) ? &in[4] : NULL;
    mlrt_tensor *y = &out[0];
    int32_t dt = x->dtype;
    MLRT_CHECK(dt == MLRT_FLOAT || dt == MLRT_DOUBLE || dt == MLRT_FLOAT16 || dt == MLRT_BFLOAT16,
               "element type %d not supported", dt);
    MLRT_CHECK(w->dtype == dt && off->dtype == dt && y->dtype == dt && (!b || b->dtype == dt) &&
               (!mask || mask->dtype == dt), "all tensors must share X's type");
    MLRT_CHECK(x->rank == 4 && mlrt_is_contiguous(x), "X must be a contiguous [N, C, H, W] tensor");
    int64_t N = x->shape[0], C = x->shape[1], H = x->shape[2], W = x->shape[3];
    int64_t kh = p->kernel[0], kw = p->kernel[1], G = p->group, OG = p->offset_group;
    MLRT_CHECK(G >= 1 && OG >= 1 && kh >= 1 && kw >= 1 && C % G == 0 && C % OG == 0, "bad group / kernel parameters");
    int64_t OC = w->shape[0], OH = y->shape[2], OW = y->shape[3], cg = C / G;
    MLRT_CHECK(w->rank == 4 && OC % G == 0 && dims4(w, OC, cg, kh, kw), "W must be [oC, C / group, kh, kw]");
    MLRT_CHECK(dims4(y, N, OC, OH, OW), "Y must be [N, oC, oH, oW]");
    MLRT_CHECK(dims4(off, N, OG * kh * kw * 2, OH, OW), "offset must be [N, offset_group * kh * kw * 2, oH, oW]");
    MLRT_CHECK(!mask || dims4(mask, N, OG * kh * kw, OH, OW), "mask must be [N, offset_group * kh * kw, oH, oW]");
    MLRT_CHECK(!b || (b->rank == 1 && b->shape[0] == OC), "B must be [oC]");
    int64_t rows = C * kh * kw, ohw = OH * OW, kdim = cg * kh * kw, ocg = OC / G;
    if (mlrt_numel(y) == 0) return MLRT_OK;
    bool dbl = dt == MLRT_DOUBLE;
    size_t es = dbl ? sizeof(double) : sizeof(float);
    void *col = malloc((size_t)(rows * ohw) * es), *wt = malloc((size_t)(OC * kdim) * es);
    void *acc = malloc((size_t)(OC * ohw) * es);
    if (!col || !wt || !acc) {
        free(col), free(wt), free(acc);
        return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "no memory for DeformConv columns (%lld x %lld)", (long long)rows,
                         (long long)ohw);
    }
    for (int64_t i = 0; i < OC * kdim; ++i) {
        if (dbl) ((double *)wt)[i] = load_f(w->data, dt, i);
        else ((float *)wt)[i] = (float)load_f(w->data, dt, i);
    }
    int status = MLRT_OK;
    for (int64_t n = 0; n < N && status == MLRT_OK; ++n) {
        deform_job job = {p, x, off, mask, n, C, H, W, OH, OW, col, dbl};
        mlrt_parallel_for(ctx, rows, 4096 / (ohw * 8 + 1) + 1, deform_rows, &job);
        for (int64_t g = 0; g < G && status == MLRT_OK; ++g) {
            if (dbl)
                status = mlrt_dgemm(ctx, false, false, ocg, ohw, kdim, 1.0, (const double *)wt + g * ocg * kdim, kdim,
                                    (const double *)col + g * kdim * ohw, ohw, 0.0, (double *)acc + g * ocg * ohw, ohw);
            else
                status = mlrt_sgemm(ctx, false, false, ocg, ohw, kdim, 1.0f, (const float *)wt + g * ocg * kdim, kdim,
                                    (const float *)col + g * kdim * ohw, ohw, 0.0f, (float *)acc + g * ocg * ohw, ohw);
        }
        for (int64_t o = 0; o < OC && status == MLRT_OK; ++o) {
            double bias = b ? load_f(b->data, dt, o) : 0.0;
            for (int64_t i = 0; i < ohw; ++i) {
                double v = dbl ? ((double *)acc)[o * ohw + i] : ((float *)acc)[o * ohw + i];
                store_f(y->data, dt, (n * OC + o) * ohw + i, v + bias);
            }
        }
    }
    free(col), free(wt), free(acc);
    return status;
}

MLRT_KERNEL(deform_conv, "DeformConv", "", 19, MLRT_OPSET_MAX,
            MLRT_MASK_FLOATS | MLRT_BIT(MLRT_FLOAT16) | MLRT_BIT(MLRT_BFLOAT16), k_deform_conv);
