/* conv_depthwise_neon.c -- Conv, depthwise path: the 3 x 3 plane on AArch64's NEON,
 * compiled for aarch64 only (elsewhere this file declares nothing more).
 *
 * The same windows as the AVX-512 3 x 3 path of conv_depthwise.c: kernel 3 x 3, unit
 * dilations, column stride 1 or 2, any row stride and pads.  Each output row reads its
 * three input rows (a zero row where a window reaches above or below the plane), four
 * outputs per vector: at stride 1 the taps are three loads shifted by a column, at
 * stride 2 one de-interleaving load (vld2q) gives the even and odd columns and the third
 * tap is the even one shifted by a lane.  Columns whose window reaches into the left or
 * right padding, and the last few of a row, take the same taps one at a time.  Every
 * output is bias, then the nine taps in order (kh, then kw) as fused multiply-adds --
 * padding taps multiply a zero, as over a padded plane -- then the clamp [lo, hi] (Relu,
 * Clip, or none; NaN stays), so vector and scalar columns agree to the bit.
 *
 * Narrow planes at stride 1 (OW == W, as 7 x 7 and 14 x 14 at pads 1) run flat instead
 * (mlrt_dw3_flat_neon): rows that narrow would leave most outputs to the one-at-a-time
 * columns, so the plane is taken as one run of OH * W outputs, output i reading input
 * i + (kh - ph) W + kw - pw for tap (kh, kw), four outputs a vector.  A lane whose tap
 * falls in the padding reads a zero (masked by bits worked out once for the shape), so the
 * sums, their order and the clamp are the row path's: the same bits. */
#include "conv_internal.h"

#ifdef __aarch64__
#include <arm_neon.h>
#include <math.h>

/* One output from the three rows, its window starting at column c (any, bounds checked). */
static inline float dw3_one(const float *const in[3], int64_t c, int64_t W, const float *w, float bias, float lo,
                            float hi) {
    float acc = bias;
    for (int kh = 0; kh < 3; ++kh)
        for (int kw = 0; kw < 3; ++kw) {
            int64_t col = c + kw;
            acc = fmaf(w[kh * 3 + kw], col >= 0 && col < W ? in[kh][col] : 0.0f, acc);
        }
    /* the vector clamp on one lane: NaN stays, and max(0, -0) is +0 as in the vectors */
    return vgetq_lane_f32(vminq_f32(vdupq_n_f32(hi), vmaxq_f32(vdupq_n_f32(lo), vdupq_n_f32(acc))), 0);
}

void mlrt_dw3_plane_neon(const float *xp, const float *w, float *yp, const conv_geom *g, float bias, float lo,
                         float hi, const float *zero) {
    int64_t H = g->in[0], W = g->in[1], OH = g->out[0], OW = g->out[1];
    int64_t sh = g->s[0], sw = g->s[1], ph = g->pb[0], pw = g->pb[1];
    float32x4_t vb = vdupq_n_f32(bias), vlo = vdupq_n_f32(lo), vhi = vdupq_n_f32(hi);
    /* vector columns: ow >= first, and the window of ow + 3 ending inside the row */
    int64_t first = (pw + sw - 1) / sw;
    for (int64_t oh = 0; oh < OH; ++oh) {
        const float *in[3];
        for (int kh = 0; kh < 3; ++kh) {
            int64_t ih = oh * sh - ph + kh;
            in[kh] = ih >= 0 && ih < H ? xp + ih * W : zero;
        }
        float *yr = yp + oh * OW;
        int64_t ow = 0;
        for (; ow < first && ow < OW; ++ow) yr[ow] = dw3_one(in, ow * sw - pw, W, w, bias, lo, hi);
        for (; ow + 3 < OW && (ow + 3) * sw - pw + 2 < W; ow += 4) {
            int64_t c = ow * sw - pw;
            float32x4_t acc = vb;
            for (int kh = 0; kh < 3; ++kh) {
                const float *p = in[kh] + c;
                float32x4_t t0, t1, t2;
                if (sw == 1) {
                    t0 = vld1q_f32(p), t1 = vld1q_f32(p + 1), t2 = vld1q_f32(p + 2);
                } else {
                    float32x4x2_t eo = vld2q_f32(p); /* columns c, c + 2, ... and c + 1, c + 3, ... */
                    t0 = eo.val[0], t1 = eo.val[1], t2 = vextq_f32(eo.val[0], vld1q_dup_f32(p + 8), 1);
                }
                acc = vfmaq_n_f32(acc, t0, w[kh * 3]);
                acc = vfmaq_n_f32(acc, t1, w[kh * 3 + 1]);
                acc = vfmaq_n_f32(acc, t2, w[kh * 3 + 2]);
            }
            vst1q_f32(yr + ow, vminq_f32(vhi, vmaxq_f32(vlo, acc)));
        }
        for (; ow < OW; ++ow) yr[ow] = dw3_one(in, ow * sw - pw, W, w, bias, lo, hi);
    }
}

/* The flat run's lane masks, one 64-bit word per four outputs: bit 4 k + l is set where
 * tap k (kh = k / 3, kw = k % 3) of output i + l lies inside the plane. */
void mlrt_dw3_flat_masks_neon(const conv_geom *g, uint64_t *mk) {
    int64_t W = g->in[1], n_in = g->in[0] * W, n_out = g->out[0] * W, ph = g->pb[0], pw = g->pb[1];
    for (int64_t i = 0; i < n_out; i += 4) {
        uint64_t bits = 0;
        for (int k = 0; k < 9; ++k)
            for (int l = 0; l < 4 && i + l < n_out; ++l) {
                int64_t o = i + l, col = o % W - pw + k % 3, src = o + (k / 3 - ph) * W + k % 3 - pw;
                if (col >= 0 && col < W && src >= 0 && src < n_in) bits |= UINT64_C(1) << (4 * k + l);
            }
        *mk++ = bits;
    }
}

void mlrt_dw3_flat_neon(const float *xp, const float *w, float *yp, const conv_geom *g, float bias, float lo,
                        float hi, const uint64_t *mk) {
    int64_t W = g->in[1], n_in = g->in[0] * W, n_out = g->out[0] * W, ph = g->pb[0], pw = g->pb[1];
    uint32x4_t lanes[16]; /* the four lanes of each 4-bit mask */
    for (uint32_t b = 0; b < 16; ++b) {
        uint32_t m[4] = {b & 1 ? ~0u : 0, b & 2 ? ~0u : 0, b & 4 ? ~0u : 0, b & 8 ? ~0u : 0};
        lanes[b] = vld1q_u32(m);
    }
    int64_t off[9];
    for (int k = 0; k < 9; ++k) off[k] = (k / 3 - ph) * W + k % 3 - pw;
    float32x4_t vb = vdupq_n_f32(bias), vlo = vdupq_n_f32(lo), vhi = vdupq_n_f32(hi);
    for (int64_t i = 0; i < n_out; i += 4) {
        uint64_t bits = *mk++;
        /* every tap's four loads inside the plane (off[0] lowest, off[8] highest): whole vectors */
        bool whole = i + off[0] >= 0 && i + 3 + off[8] < n_in;
        float32x4_t acc = vb;
        for (int k = 0; k < 9; ++k) {
            unsigned b = (unsigned)(bits >> (4 * k)) & 15u;
            float32x4_t t;
            if (whole) {
                t = vreinterpretq_f32_u32(vandq_u32(vreinterpretq_u32_f32(vld1q_f32(xp + i + off[k])), lanes[b]));
            } else { /* the plane's first or last rows: only the taps inside it read */
                float v[4];
                for (int l = 0; l < 4; ++l) v[l] = b >> l & 1 ? xp[i + l + off[k]] : 0.0f;
                t = vld1q_f32(v);
            }
            acc = vfmaq_n_f32(acc, t, w[k]);
        }
        acc = vminq_f32(vhi, vmaxq_f32(vlo, acc));
        if (n_out - i >= 4) {
            vst1q_f32(yp + i, acc);
        } else {
            float v[4];
            vst1q_f32(v, acc);
            for (int64_t l = 0; l < n_out - i; ++l) yp[i + l] = v[l];
        }
    }
}
#endif
