/* tensorize.c -- Tensorize and Detensorize ("mlrt.media" domain): a frame's pixels
 * into one image of a tensor batch, and back (the contract is in tensorize.h).
 *
 * Tensorize writes one output row at a time.  The column taps (the byte offsets of
 * two source pixels and the weight of the second) are worked out once per call, the
 * row taps once per row.  A first pass interpolates every byte of the source pixels
 * into a float row, four lanes per pixel (3- and 4-byte pixels are loaded as one
 * small vector); a second maps the lanes onto the tensor's channels -- a byte, the
 * Rec.709 luma of three, or an opaque alpha of 255 -- as v * alpha + beta, stored as
 * float32, float16 or uint8 (half away from zero, clamped), NCHW or NHWC.
 * Interpolation is a lerp, a + t * (b - a), so weights of 0 and 1 reproduce source
 * bytes exactly (a crop of the output's size copies the pixels).
 *
 * Detensorize reads one image of the batch, maps each channel to
 * clamp(v * alpha + beta, 0, 255), and packs the pixels: gray tensors fill every
 * colour byte, a colour tensor gives a gray frame the luma of its clamped channels;
 * values round half away from zero once, at the end.  Both spread rows over the pool. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "internal.h"
#include "tensorize.h"

/* Per-ISA clones (MLRT_ISA_FN) of the loops that vectorise well.  Nothing is contracted
 * into fused multiply-adds, so every path (vector, scalar, any ISA) gives the same bits. */
#if defined(__SSE2__)
#include <immintrin.h>
#endif

#define TZ_LUMA_R 0.2126f
#define TZ_LUMA_G 0.7152f
#define TZ_LUMA_B 0.0722f

typedef float tz_v4 __attribute__((vector_size(16)));

enum { TZ_BYTE, TZ_LUMA, TZ_OPAQUE };  /* where a tensor channel's value comes from */

/* Byte positions of B, G, R and alpha (-1: none) in a pixel of each format. */
typedef struct tz_layout {
    int32_t bpp, b, g, r, a;
} tz_layout;

static bool tz_layout_of(int64_t format, tz_layout *l) {
    switch (format) {
    case MLRT_PIXEL_BGRA8: *l = (tz_layout){4, 0, 1, 2, 3}; return true;
    case MLRT_PIXEL_RGBA8: *l = (tz_layout){4, 2, 1, 0, 3}; return true;
    case MLRT_PIXEL_BGR8: *l = (tz_layout){3, 0, 1, 2, -1}; return true;
    case MLRT_PIXEL_RGB8: *l = (tz_layout){3, 2, 1, 0, -1}; return true;
    case MLRT_PIXEL_GRAY8: *l = (tz_layout){1, 0, 0, 0, -1}; return true;
    default: return false;
    }
}

/* Round half away from zero and clamp to 0..255 (NaN gives 0); branch-free, so that
 * loops of it vectorise. */
static inline uint8_t tz_to_u8(float v) {
    v = v > 0 ? v : 0;
    v = v < 255 ? v : 255;
    int32_t i = (int32_t)v;
    return (uint8_t)(i + (v - (float)i >= 0.5f));
}

static inline float tz_clamp255(float v) { return v > 0 ? (v < 255 ? v : 255) : 0; }

/* ---- Tensorize ------------------------------------------------------------------------------ */

typedef void (*tz_interp_fn)(float *buf, const uint8_t *r0, const uint8_t *r1, float fy, const int64_t *off,
                             const float *w4, int64_t from, int64_t n);

typedef struct tz_job {
    const uint8_t *src;       /* source pixel (crop_x, crop_y) */
    int64_t row_stride, ch_stride;  /* source strides in bytes (the column stride is in col_off) */
    int64_t crop_h, H, W, C;
    int32_t bpp;
    int64_t vec_cols;         /* leading output columns whose taps may be loaded as 4 bytes */
    const int64_t *col_off;   /* per output column: byte offsets of its two taps from the crop's left edge */
    const float *col_w4;      /* per output column: weight of the second tap, four times */
    tz_interp_fn interp;      /* tz_interp_vec or a faster version of it */
    int32_t kind[4], lane[4]; /* per tensor channel */
    float luma[3];            /* weights of lanes 0..2 in the luma */
    float alpha[4], beta[4];
    int32_t dtype;
    bool nhwc;
    char *dst;                /* image batch_index of the output */
    atomic_int failed;
} tz_job;

/* Four bytes as four floats. */
static inline tz_v4 tz_load4(const uint8_t *p) {
#if defined(__SSE2__)
    int32_t u;
    memcpy(&u, p, sizeof u);
    const __m128i z = _mm_setzero_si128();
    return (tz_v4)_mm_cvtepi32_ps(_mm_unpacklo_epi16(_mm_unpacklo_epi8(_mm_cvtsi32_si128(u), z), z));
#else
    typedef uint8_t tz_u8x4 __attribute__((vector_size(4)));
    tz_u8x4 u;
    memcpy(&u, p, sizeof u);
    return __builtin_convertvector(u, tz_v4);
#endif
}

/* Columns [from, n) of a row, 3- or 4-byte pixels with contiguous bytes: the four
 * lanes of a pixel at once.  w4 holds each column's weight four times. */
static void tz_interp_vec(float *buf, const uint8_t *r0, const uint8_t *r1, float fy, const int64_t *off,
                          const float *w4, int64_t from, int64_t n) {
    for (int64_t x = from; x < n; ++x) {
        const int64_t o0 = off[2 * x], o1 = off[2 * x + 1];
        tz_v4 fx;
        memcpy(&fx, w4 + 4 * x, sizeof fx);
        tz_v4 a = tz_load4(r0 + o0), b = tz_load4(r0 + o1), c = tz_load4(r1 + o0), d = tz_load4(r1 + o1);
        tz_v4 top = a + fx * (b - a), bottom = c + fx * (d - c);
        tz_v4 v = top + fy * (bottom - top);
        memcpy(buf + 4 * x, &v, sizeof v);
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
/* The bytes of two pixels as eight floats. */
__attribute__((target("avx2"))) static inline __m256 tz_load8(const uint8_t *p, const uint8_t *q) {
    int32_t u, v;
    memcpy(&u, p, sizeof u);
    memcpy(&v, q, sizeof v);
    return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_insert_epi32(_mm_cvtsi32_si128(u), v, 1)));
}

/* tz_interp_vec two columns at a time. */
__attribute__((target("avx2"))) static void tz_interp_avx2(float *buf, const uint8_t *r0, const uint8_t *r1,
                                                               float fy, const int64_t *off, const float *w4,
                                                               int64_t from, int64_t n) {
    const __m256 vy = _mm256_set1_ps(fy);
    int64_t x = from;
    for (; x + 2 <= n; x += 2) {
        const int64_t *o = off + 2 * x;  /* o[0], o[1]: taps of column x; o[2], o[3]: of x + 1 */
        const __m256 fx = _mm256_loadu_ps(w4 + 4 * x);
        __m256 a = tz_load8(r0 + o[0], r0 + o[2]), b = tz_load8(r0 + o[1], r0 + o[3]);
        __m256 c = tz_load8(r1 + o[0], r1 + o[2]), d = tz_load8(r1 + o[1], r1 + o[3]);
        __m256 top = _mm256_add_ps(a, _mm256_mul_ps(fx, _mm256_sub_ps(b, a)));
        __m256 bottom = _mm256_add_ps(c, _mm256_mul_ps(fx, _mm256_sub_ps(d, c)));
        _mm256_storeu_ps(buf + 4 * x, _mm256_add_ps(top, _mm256_mul_ps(vy, _mm256_sub_ps(bottom, top))));
    }
    tz_interp_vec(buf, r0, r1, fy, off, w4, x, n);
}

static tz_interp_fn tz_pick_interp(void) {
    return MLRT_X86_HAS(MLRT_ISA_AVX2, AVX2) ? tz_interp_avx2 : tz_interp_vec;
}
#else
static tz_interp_fn tz_pick_interp(void) { return tz_interp_vec; }
#endif

/* Columns [from, n) of a row, one byte at a time (gray pixels, strided bytes, the
 * last columns of 3-byte pixels). */
static void tz_interp_scalar(float *buf, const uint8_t *r0, const uint8_t *r1, float fy, const int64_t *off,
                             const float *w4, int64_t from, int64_t n, int32_t bpp, int64_t cs) {
    for (int64_t x = from; x < n; ++x) {
        const int64_t o0 = off[2 * x], o1 = off[2 * x + 1];
        const float fx = w4[4 * x];
        for (int32_t k = 0; k < bpp; ++k) {
            const int64_t ko = k * cs;
            float a = r0[o0 + ko], b = r0[o1 + ko], c = r1[o0 + ko], d = r1[o1 + ko];
            float top = a + fx * (b - a), bottom = c + fx * (d - c);
            buf[4 * x + k] = top + fy * (bottom - top);
        }
        for (int32_t k = bpp; k < 4; ++k) buf[4 * x + k] = 0;
    }
}

/* One tensor channel of a row from the lanes: o[x * step] = value * a + b (NCHW rows,
 * step 1, have a loop of their own, which vectorises). */
#define TZ_EMIT(STEP)                                                                                \
    do {                                                                                           \
        if (kind == TZ_BYTE) {                                                                     \
            const float *l = buf + lane;                                                           \
            for (int64_t x = 0; x < W; ++x) o[x * (STEP)] = l[4 * x] * a + b;                     \
        } else if (kind == TZ_LUMA) {                                                              \
            for (int64_t x = 0; x < W; ++x) {                                                      \
                const float *p = buf + 4 * x;                                                      \
                o[x * (STEP)] = (w0 * p[0] + w1 * p[1] + w2 * p[2]) * a + b;                       \
            }                                                                                      \
        } else {                                                                                   \
            for (int64_t x = 0; x < W; ++x) o[x * (STEP)] = 255.0f * a + b;                        \
        }                                                                                          \
    } while (0)

MLRT_ISA_FN(, void, tz_emit_f32, (const tz_job *j, const float *buf, float *o, int64_t step, int32_t kind,
                                   int32_t lane, float a, float b), (j, buf, o, step, kind, lane, a, b)) {
    const int64_t W = j->W;
    const float w0 = j->luma[0], w1 = j->luma[1], w2 = j->luma[2];
    if (step == 1)
        TZ_EMIT(1);
    else
        TZ_EMIT(step);
}

/* o[x * step] = the float v[x] as uint8, x < n (tz_to_u8 four at a time). */
static void tz_store_u8(uint8_t *o, int64_t step, const float *v, int64_t n) {
    int64_t x = 0;
#if defined(__SSE2__)
    const __m128 lo = _mm_setzero_ps(), hi = _mm_set1_ps(255.0f), half = _mm_set1_ps(0.5f);
    for (; x + 4 <= n; x += 4) {
        __m128 f = _mm_min_ps(_mm_max_ps(_mm_loadu_ps(v + x), lo), hi);  /* max(NaN, 0) is 0 */
        __m128i i = _mm_cvttps_epi32(f);
        __m128i up = _mm_castps_si128(_mm_cmpge_ps(_mm_sub_ps(f, _mm_cvtepi32_ps(i)), half));
        i = _mm_sub_epi32(i, up);  /* up is -1 where the fraction is at least one half */
        if (step == 1) {
            int32_t packed = _mm_cvtsi128_si32(_mm_packus_epi16(_mm_packs_epi32(i, i), i));
            memcpy(o + x, &packed, sizeof packed);
        } else {
            int32_t lanes[4];
            _mm_storeu_si128((__m128i *)lanes, i);
            for (int32_t k = 0; k < 4; ++k) o[(x + k) * step] = (uint8_t)lanes[k];
        }
    }
#endif
    for (; x < n; ++x) o[x * step] = tz_to_u8(v[x]);
}

/* Source tap of output position o along an axis of n output and `in` source positions:
 * half-pixel centres, both taps clamped into [0, in), weight 0 when they coincide. */
static void tz_taps(int64_t o, int64_t n, int64_t in, int64_t *t0, int64_t *t1, float *w) {
    double s = ((double)o + 0.5) * (double)in / (double)n - 0.5, fl = floor(s);
    int64_t i0 = (int64_t)fl, i1 = i0 + 1;
    *w = (float)(s - fl);
    if (i0 < 0) i0 = 0;
    if (i1 < 0) i1 = 0;
    if (i0 > in - 1) i0 = in - 1;
    if (i1 > in - 1) i1 = in - 1;
    if (i0 == i1) *w = 0;
    *t0 = i0;
    *t1 = i1;
}

static void tz_rows(void *arg, int64_t begin, int64_t end) {
    tz_job *j = arg;
    const int64_t W = j->W, H = j->H, C = j->C;
    float *buf = malloc((size_t)W * 5 * sizeof *buf);  /* four lanes per pixel, then one channel's values */
    if (!buf) {
        atomic_store(&j->failed, 1);
        return;
    }
    float *values = buf + 4 * W;
    const size_t es = mlrt_dtype_size(j->dtype);
    for (int64_t y = begin; y < end; ++y) {
        int64_t i0, i1;
        float fy;
        tz_taps(y, H, j->crop_h, &i0, &i1, &fy);
        const uint8_t *r0 = j->src + i0 * j->row_stride, *r1 = j->src + i1 * j->row_stride;
        j->interp(buf, r0, r1, fy, j->col_off, j->col_w4, 0, j->vec_cols);
        tz_interp_scalar(buf, r0, r1, fy, j->col_off, j->col_w4, j->vec_cols, W, j->bpp, j->ch_stride);
        for (int64_t c = 0; c < C; ++c) {
            /* NCHW: plane c, row y, step 1; NHWC: row y, channel c, step C */
            int64_t first = j->nhwc ? y * W * C + c : (c * H + y) * W;
            void *out = j->dst + (size_t)first * es;
            int64_t step = j->nhwc ? C : 1;
            if (j->dtype == MLRT_FLOAT) {
                tz_emit_f32(j, buf, out, step, j->kind[c], j->lane[c], j->alpha[c], j->beta[c]);
                continue;
            }
            tz_emit_f32(j, buf, values, 1, j->kind[c], j->lane[c], j->alpha[c], j->beta[c]);
            if (j->dtype == MLRT_UINT8) {
                tz_store_u8(out, step, values, W);
            } else {
                uint16_t *o = out;
                for (int64_t x = 0; x < W; ++x) o[x * step] = mlrt_f32_to_f16(values[x]);
            }
        }
    }
    free(buf);
}

static int k_tensorize(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                       const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_tensorize_params, p, params, params_size);
    MLRT_CHECK(n_in >= 1 && n_out >= 1 && mlrt_present(&in[0]) && mlrt_present(&out[0]),
               "Tensorize expects the pixels and the output tensor");
    const mlrt_tensor *x = &in[0];
    mlrt_tensor *y = &out[0];
    tz_layout l;
    MLRT_CHECK(tz_layout_of(p->src_format, &l), "Tensorize: unknown pixel format %lld", (long long)p->src_format);
    MLRT_CHECK(x->dtype == MLRT_UINT8 && x->rank == 3,
               "Tensorize: pixels must be uint8 [height, width, bytes per pixel]");
    MLRT_CHECK(x->shape[2] == l.bpp, "Tensorize: the pixel format has %d bytes per pixel, the pixels %lld", l.bpp,
               (long long)x->shape[2]);
    MLRT_CHECK(y->dtype == MLRT_FLOAT || y->dtype == MLRT_FLOAT16 || y->dtype == MLRT_UINT8,
               "Tensorize: the tensor must be float32, float16 or uint8 (element type %d)", y->dtype);
    MLRT_CHECK(y->rank == 4 && mlrt_is_contiguous(y), "Tensorize: the tensor must be a contiguous 4-D batch");
    MLRT_CHECK(p->nhwc == 0 || p->nhwc == 1, "Tensorize: nhwc must be 0 or 1");
    MLRT_CHECK(p->dst_order == 0 || p->dst_order == 1, "Tensorize: dst_order must be 0 (BGR) or 1 (RGB)");
    const int64_t N = y->shape[0], C = y->shape[p->nhwc ? 3 : 1];
    const int64_t H = y->shape[p->nhwc ? 1 : 2], W = y->shape[p->nhwc ? 2 : 3];
    const int64_t Hs = x->shape[0], Ws = x->shape[1];
    MLRT_CHECK(C == 1 || C == 3 || C == 4, "Tensorize: the tensor has %lld channels, expected 1, 3 or 4", (long long)C);
    MLRT_CHECK(p->batch_index >= 0 && p->batch_index < N, "Tensorize: batch index %lld outside a batch of %lld",
               (long long)p->batch_index, (long long)N);
    MLRT_CHECK(p->crop_width >= 1 && p->crop_height >= 1 && p->crop_x >= 0 && p->crop_y >= 0 &&
                   p->crop_x <= Ws - p->crop_width && p->crop_y <= Hs - p->crop_height,
               "Tensorize: crop (x %lld, y %lld, width %lld, height %lld) is empty or not inside the %lld x %lld image",
               (long long)p->crop_x, (long long)p->crop_y, (long long)p->crop_width, (long long)p->crop_height,
               (long long)Ws, (long long)Hs);
    if (H == 0 || W == 0) return MLRT_OK;

    tz_job j = {.row_stride = x->strides[0], .ch_stride = x->strides[2], .crop_h = p->crop_height, .H = H, .W = W,
                .C = C, .bpp = l.bpp, .dtype = y->dtype, .nhwc = p->nhwc != 0};
    j.src = (const uint8_t *)x->data + p->crop_y * x->strides[0] + p->crop_x * x->strides[1];
    j.dst = (char *)y->data + (size_t)(p->batch_index * C * H * W) * mlrt_dtype_size(y->dtype);
    atomic_init(&j.failed, 0);
    const int32_t colour[3] = {p->dst_order ? l.r : l.b, l.g, p->dst_order ? l.b : l.r};
    j.luma[l.b] += TZ_LUMA_B;
    j.luma[l.g] += TZ_LUMA_G;
    j.luma[l.r] += TZ_LUMA_R;
    for (int32_t c = 0; c < C; ++c) {
        j.alpha[c] = p->alpha[c];
        j.beta[c] = p->beta[c];
        if (C == 1) {
            j.kind[c] = l.bpp == 1 ? TZ_BYTE : TZ_LUMA;
        } else if (c < 3) {
            j.kind[c] = TZ_BYTE;
            j.lane[c] = colour[c];
        } else {
            j.kind[c] = l.a >= 0 ? TZ_BYTE : TZ_OPAQUE;
            j.lane[c] = l.a;
        }
    }

    int64_t *col_off = malloc((size_t)W * 2 * sizeof *col_off);
    float *col_w4 = malloc((size_t)W * 4 * sizeof *col_w4);
    if (!col_off || !col_w4) {
        free(col_off);
        free(col_w4);
        return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "Tensorize: cannot allocate the column taps");
    }
    /* 4-byte loads are safe while the second tap is not the image's last column (its
     * fourth byte is then inside the next pixel): a prefix of the output columns */
    const bool vec = l.bpp >= 3 && x->strides[2] == 1 && x->strides[1] >= l.bpp;
    j.vec_cols = vec ? W : 0;
    for (int64_t c = 0; c < W; ++c) {
        int64_t t0, t1;
        float w;
        tz_taps(c, W, p->crop_width, &t0, &t1, &w);
        for (int32_t k = 0; k < 4; ++k) col_w4[4 * c + k] = w;
        col_off[2 * c] = t0 * x->strides[1];
        col_off[2 * c + 1] = t1 * x->strides[1];
        if (vec && l.bpp == 3 && p->crop_x + t1 >= Ws - 1 && j.vec_cols == W) j.vec_cols = c;
    }
    j.col_off = col_off;
    j.col_w4 = col_w4;
    j.interp = tz_pick_interp();
    mlrt_parallel_for(ctx, H, 1 + 16384 / (W * (C + 4)), tz_rows, &j);
    free(col_off);
    free(col_w4);
    if (atomic_load(&j.failed)) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "Tensorize: cannot allocate a row buffer");
    return MLRT_OK;
}

/* ---- Detensorize ---------------------------------------------------------------------------- */

enum { DT_LUMA = 3, DT_OPAQUE = 4 };  /* sources of a pixel byte besides tensor channels 0..2 */

typedef struct dt_job {
    const char *src;           /* image batch_index of the tensor */
    int64_t cs, ys, xs;        /* its channel, row and column strides, in elements */
    int64_t W, C;
    int32_t dtype;
    float alpha[3], beta[3];
    int32_t rgb[3];            /* tensor channels of R, G, B (C == 3) */
    int32_t bpp, from[4];      /* per pixel byte: a tensor channel, DT_LUMA or DT_OPAQUE */
    bool luma;                 /* some byte is the luma */
    uint8_t *dst;
    int64_t row_stride, col_stride, ch_stride;  /* of the pixels, in bytes */
    atomic_int failed;
} dt_job;

/* o[x] = clamp(x[x * xs] * a + b, 0, 255) */
MLRT_ISA_FN(, void, dt_scale_f32, (float *o, const float *x, int64_t xs, int64_t n, float a, float b),
            (o, x, xs, n, a, b)) {
    if (xs == 1)
        for (int64_t i = 0; i < n; ++i) o[i] = tz_clamp255(x[i] * a + b);
    else
        for (int64_t i = 0; i < n; ++i) o[i] = tz_clamp255(x[i * xs] * a + b);
}

MLRT_ISA_FN(, void, dt_scale_u8, (float *o, const uint8_t *x, int64_t xs, int64_t n, float a, float b),
            (o, x, xs, n, a, b)) {
    for (int64_t i = 0; i < n; ++i) o[i] = tz_clamp255((float)x[i * xs] * a + b);
}

static void dt_scale_f16(float *o, const uint16_t *x, int64_t xs, int64_t n, float a, float b) {
    for (int64_t i = 0; i < n; ++i) o[i] = tz_clamp255(mlrt_f16_to_f32(x[i * xs]) * a + b);
}

MLRT_ISA_FN(, void, dt_luma, (float *o, const float *r, const float *g, const float *b, int64_t n), (o, r, g, b, n)) {
    for (int64_t i = 0; i < n; ++i) o[i] = TZ_LUMA_R * r[i] + TZ_LUMA_G * g[i] + TZ_LUMA_B * b[i];
}

/* Rows of the frame: each tensor channel of the row scaled and clamped into a float
 * row (rows[c]), the luma in rows[DT_LUMA] where wanted, then every pixel byte
 * rounded from its row. */
static void dt_rows(void *arg, int64_t begin, int64_t end) {
    dt_job *j = arg;
    const int64_t W = j->W, C = j->C;
    const int64_t es = (int64_t)mlrt_dtype_size(j->dtype);
    float *buf = malloc((size_t)W * 4 * sizeof *buf);
    if (!buf) {
        atomic_store(&j->failed, 1);
        return;
    }
    const float *rows[4] = {buf, buf + W, buf + 2 * W, buf + 3 * W};
    for (int64_t y = begin; y < end; ++y) {
        for (int64_t c = 0; c < C; ++c) {
            const char *row = j->src + (c * j->cs + y * j->ys) * es;
            float *o = buf + c * W;
            switch (j->dtype) {
            case MLRT_FLOAT: dt_scale_f32(o, (const float *)row, j->xs, W, j->alpha[c], j->beta[c]); break;
            case MLRT_FLOAT16: dt_scale_f16(o, (const uint16_t *)row, j->xs, W, j->alpha[c], j->beta[c]); break;
            default: dt_scale_u8(o, (const uint8_t *)row, j->xs, W, j->alpha[c], j->beta[c]); break;
            }
        }
        if (j->luma) dt_luma(buf + 3 * W, rows[j->rgb[0]], rows[j->rgb[1]], rows[j->rgb[2]], W);
        uint8_t *prow = j->dst + y * j->row_stride;
        for (int32_t k = 0; k < j->bpp; ++k) {
            uint8_t *o = prow + k * j->ch_stride;
            if (j->from[k] == DT_OPAQUE) {
                for (int64_t x = 0; x < W; ++x) o[x * j->col_stride] = 255;
            } else {
                tz_store_u8(o, j->col_stride, rows[j->from[k]], W);
            }
        }
    }
    free(buf);
}

static int k_detensorize(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                         int32_t n_out, const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_detensorize_params, p, params, params_size);
    MLRT_CHECK(n_in >= 1 && n_out >= 1 && mlrt_present(&in[0]) && mlrt_present(&out[0]),
               "Detensorize expects the tensor and the output pixels");
    const mlrt_tensor *x = &in[0];
    mlrt_tensor *y = &out[0];
    tz_layout l;
    MLRT_CHECK(tz_layout_of(p->dst_format, &l), "Detensorize: unknown pixel format %lld", (long long)p->dst_format);
    MLRT_CHECK(x->dtype == MLRT_FLOAT || x->dtype == MLRT_FLOAT16 || x->dtype == MLRT_UINT8,
               "Detensorize: the tensor must be float32, float16 or uint8 (element type %d)", x->dtype);
    MLRT_CHECK(x->rank == 4, "Detensorize: the tensor must be a 4-D batch");
    MLRT_CHECK(y->dtype == MLRT_UINT8 && y->rank == 3,
               "Detensorize: pixels must be uint8 [height, width, bytes per pixel]");
    MLRT_CHECK(y->shape[2] == l.bpp, "Detensorize: the pixel format has %d bytes per pixel, the pixels %lld", l.bpp,
               (long long)y->shape[2]);
    MLRT_CHECK(p->nhwc == 0 || p->nhwc == 1, "Detensorize: nhwc must be 0 or 1");
    MLRT_CHECK(p->src_order == 0 || p->src_order == 1, "Detensorize: src_order must be 0 (BGR) or 1 (RGB)");
    const int32_t cd = p->nhwc ? 3 : 1, hd = p->nhwc ? 1 : 2, wd = p->nhwc ? 2 : 3;
    const int64_t N = x->shape[0], C = x->shape[cd], H = x->shape[hd], W = x->shape[wd];
    MLRT_CHECK(C == 1 || C == 3, "Detensorize: the tensor has %lld channels, expected 1 or 3", (long long)C);
    MLRT_CHECK(p->batch_index >= 0 && p->batch_index < N, "Detensorize: batch index %lld outside a batch of %lld",
               (long long)p->batch_index, (long long)N);
    MLRT_CHECK(H == y->shape[0] && W == y->shape[1],
               "Detensorize: the tensor's images are %lld x %lld, the pixels %lld x %lld", (long long)W, (long long)H,
               (long long)y->shape[1], (long long)y->shape[0]);
    if (H == 0 || W == 0) return MLRT_OK;
    dt_job j = {.cs = x->strides[cd], .ys = x->strides[hd], .xs = x->strides[wd], .W = W, .C = C, .dtype = x->dtype,
                .bpp = l.bpp, .dst = y->data, .row_stride = y->strides[0], .col_stride = y->strides[1],
                .ch_stride = y->strides[2]};
    j.src = (const char *)x->data + p->batch_index * x->strides[0] * (int64_t)mlrt_dtype_size(x->dtype);
    for (int32_t c = 0; c < C; ++c) {
        j.alpha[c] = p->alpha[c];
        j.beta[c] = p->beta[c];
    }
    j.rgb[0] = p->src_order ? 0 : 2;
    j.rgb[1] = 1;
    j.rgb[2] = p->src_order ? 2 : 0;
    if (l.bpp == 1) {
        j.from[0] = C == 1 ? 0 : DT_LUMA;
        j.luma = C == 3;
    } else {
        j.from[l.r] = C == 1 ? 0 : j.rgb[0];
        j.from[l.g] = C == 1 ? 0 : j.rgb[1];
        j.from[l.b] = C == 1 ? 0 : j.rgb[2];
        if (l.a >= 0) j.from[l.a] = DT_OPAQUE;
    }
    atomic_init(&j.failed, 0);
    mlrt_parallel_for(ctx, H, 1 + 16384 / (W * 4), dt_rows, &j);
    if (atomic_load(&j.failed)) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "Detensorize: cannot allocate a row buffer");
    return MLRT_OK;
}

MLRT_KERNEL(tensorize, "Tensorize", "mlrt.media", 1, MLRT_OPSET_MAX, MLRT_BIT(MLRT_UINT8), k_tensorize);
MLRT_KERNEL(detensorize, "Detensorize", "mlrt.media", 1, MLRT_OPSET_MAX,
            MLRT_BIT(MLRT_FLOAT) | MLRT_BIT(MLRT_FLOAT16) | MLRT_BIT(MLRT_UINT8), k_detensorize);
