/* Tensorize and Detensorize: frames' pixels <-> one image of a tensor batch (mlrt.media).
 *
 * The semantics are those of native/kernels/tensorize.h (the C kernels' contract); the
 * parameter blocks below have the same fields.  Pixels are always uchar, contiguous
 * [height, width, bytes per pixel]; T (from _common.cl) is the tensor's element type:
 * the output of mlrt_tensorize, the input of mlrt_detensorize.  The host (media/_gpu.py)
 * has checked shapes, formats, the crop and the batch index.
 *
 * Both kernels walk the image as rows of pixels (MLRT_ROW_RANGE): item r * items + i
 * handles pixels [c0, c1) of row r, one pixel on GPUs, a run on CPU devices.
 *
 * Resizing is bilinear with half-pixel centres: output position o of n_out over a crop
 * of n_in samples reads source position s = (o + 0.5) * n_in / n_out - 0.5, taken
 * exactly as the integer fraction ((2o + 1) * n_in - n_out) / (2 n_out), so an
 * unscaled axis copies its samples bit for bit; s below 0 reads sample 0, s at or past
 * n_in - 1 reads sample n_in - 1 (the crop's edges clamp the taps, as cv2.resize does).
 */

/* The parameter blocks and MLRT_PIXEL_* (enum mlrt_pixel_format): the C kernels' own
 * declarations, read by the host through cffi as well. */
#include "../kernels/tensorize.h"

/* Rec.709 luma of (B, G, R, ...) */
#define MLRT_LUMA(p) (0.0722f * (p).x + 0.7152f * (p).y + 0.2126f * (p).z)

inline int mlrt_pixel_bytes(long format)
{
    return format <= MLRT_PIXEL_RGBA8 ? 4 : format == MLRT_PIXEL_GRAY8 ? 1 : 3;
}

/* One pixel as (B, G, R, A) in float, alpha 255 where the format has none. */
inline float4 mlrt_pixel_load(__global const uchar *p, long format)
{
    switch (format) {
    case MLRT_PIXEL_BGRA8: return convert_float4(vload4(0, p));
    case MLRT_PIXEL_RGBA8: return convert_float4(vload4(0, p)).zyxw;
    case MLRT_PIXEL_BGR8: return (float4)(convert_float3(vload3(0, p)), 255.0f);
    case MLRT_PIXEL_RGB8: return (float4)(convert_float3(vload3(0, p)).zyx, 255.0f);
    default: { float g = (float)p[0]; return (float4)(g, g, g, 255.0f); }
    }
}

/* The taps of one axis for the position whose source coordinate is x0 + rem / den
 * (0 <= rem < den): samples a and b of the crop, and b's weight. */
inline void mlrt_taps(long x0, long rem, long den, long n_in, long *a, long *b, float *f)
{
    if (x0 < 0) {
        *a = *b = 0;
        *f = 0.0f;
    } else if (x0 >= n_in - 1) {
        *a = *b = n_in - 1;
        *f = 0.0f;
    } else {
        *a = x0;
        *b = x0 + 1;
        *f = (float)rem / (float)den;
    }
}

/* floor(num / den) (den > 0) and its remainder: estimated in float, corrected in
 * integers (no integer division, which GPUs emulate and CPUs cannot vectorize). */
inline long mlrt_floor_div(long num, long den, long *rem)
{
    long q = (long)floor((float)num / (float)den);
    long r = num - q * den;
    if (r < 0) {
        --q;
        r += den;
    } else if (r >= den) {
        ++q;
        r -= den;
    }
    *rem = r;
    return q;
}

/* Source sample of output position o of n_out over n_in samples: floor of
 * ((2o + 1) n_in - n_out) / (2 n_out), and the remainder. */
inline long mlrt_source(long o, long n_in, long n_out, long *rem)
{
    return mlrt_floor_div((2 * o + 1) * n_in - n_out, 2 * n_out, rem);
}

#if defined(T_IS_FLOAT)
#define STORE_PIXEL(p, i, v) STORE(p, i, v)
#define LOAD_PIXEL(p, i) LOAD(p, i)
#else  /* uint8 tensors: rounded half away from zero, clamped to 0..255 */
#define STORE_PIXEL(p, i, v) ((p)[(i)] = convert_uchar_sat(round(v)))
#define LOAD_PIXEL(p, i) ((float)(p)[(i)])
#endif

/* Output image batch_index of dst ([N, C, rows, cols] or [N, rows, cols, C]) from the
 * crop of src ([src_height, src_width, bytes]). */
__kernel void mlrt_tensorize(__global const uchar *src, __global T *dst, mlrt_tensorize_params p, long src_width,
                             long channels, long cols, long chunk, long rows)
{
    MLRT_ROW_RANGE;
    const long format = p.src_format, bytes = mlrt_pixel_bytes(format);
    const long cw = p.crop_width, ch = p.crop_height;
    long rem, y0, y1, x0, x1;
    float fy, fx;
    long sy = mlrt_source(r, ch, rows, &rem);
    mlrt_taps(sy, rem, 2 * rows, ch, &y0, &y1, &fy);
    __global const uchar *row0 = src + ((p.crop_y + y0) * src_width + p.crop_x) * bytes;
    __global const uchar *row1 = src + ((p.crop_y + y1) * src_width + p.crop_x) * bytes;

    /* the column taps step along the run: +step_q samples and +step_r / den per pixel */
    const long den = 2 * cols;
    long step_r, step_q = mlrt_floor_div(2 * cw, den, &step_r), sx = mlrt_source(c0, cw, cols, &rem);

    const long plane = rows * cols;
    const long image = p.batch_index * channels * plane;
    const long cstride = p.nhwc ? 1 : plane;
    const bool gray_src = format == MLRT_PIXEL_GRAY8;
    const float4 al = (float4)(p.alpha[0], p.alpha[1], p.alpha[2], p.alpha[3]);
    const float4 be = (float4)(p.beta[0], p.beta[1], p.beta[2], p.beta[3]);
    for (long c = c0; c < c1; ++c) {
        mlrt_taps(sx, rem, den, cw, &x0, &x1, &fx);
        sx += step_q;
        rem += step_r;
        if (rem >= den) {
            rem -= den;
            ++sx;
        }
        float4 p00 = mlrt_pixel_load(row0 + x0 * bytes, format), p01 = mlrt_pixel_load(row0 + x1 * bytes, format);
        float4 p10 = mlrt_pixel_load(row1 + x0 * bytes, format), p11 = mlrt_pixel_load(row1 + x1 * bytes, format);
        float4 top = p00 + fx * (p01 - p00), bottom = p10 + fx * (p11 - p10);
        float4 v = top + fy * (bottom - top);  /* (B, G, R, A) */
        long at = image + (p.nhwc ? (r * cols + c) * channels : r * cols + c);
        if (channels == 1) {
            STORE_PIXEL(dst, at, (gray_src ? v.y : MLRT_LUMA(v)) * al.x + be.x);
            continue;
        }
        if (p.dst_order)
            v = v.zyxw;
        v = v * al + be;
        STORE_PIXEL(dst, at, v.x);
        STORE_PIXEL(dst, at + cstride, v.y);
        STORE_PIXEL(dst, at + 2 * cstride, v.z);
        if (channels == 4)
            STORE_PIXEL(dst, at + 3 * cstride, v.w);
    }
}

/* Frame dst ([rows, cols, bytes]) from image batch_index of src ([N, C, rows, cols] or
 * [N, rows, cols, C], C 1 or 3). */
__kernel void mlrt_detensorize(__global const T *src, __global uchar *dst, mlrt_detensorize_params p,
                               long channels, long cols, long chunk, long rows)
{
    MLRT_ROW_RANGE;
    const long format = p.dst_format, bytes = mlrt_pixel_bytes(format);
    const long plane = rows * cols;
    const long image = p.batch_index * channels * plane;
    const long cstride = p.nhwc ? 1 : plane;
    const float4 al = (float4)(p.alpha[0], p.alpha[1], p.alpha[2], 0.0f);
    const float4 be = (float4)(p.beta[0], p.beta[1], p.beta[2], 0.0f);
    for (long c = c0; c < c1; ++c) {
        long at = image + (p.nhwc ? (r * cols + c) * channels : r * cols + c);
        float4 v;  /* (B, G, R) in 0..255, unrounded */
        if (channels == 1) {
            v = (float4)(clamp(LOAD_PIXEL(src, at) * al.x + be.x, 0.0f, 255.0f));
        } else {
            v = (float4)(LOAD_PIXEL(src, at), LOAD_PIXEL(src, at + cstride), LOAD_PIXEL(src, at + 2 * cstride), 0.0f);
            v = clamp(v * al + be, 0.0f, 255.0f);
            if (p.src_order)
                v = v.zyxw;
        }
        uchar4 q = convert_uchar4_sat(round(v));
        __global uchar *px = dst + (r * cols + c) * bytes;
        switch (format) {
        case MLRT_PIXEL_BGRA8: vstore4((uchar4)(q.xyz, 255), 0, px); break;
        case MLRT_PIXEL_RGBA8: vstore4((uchar4)(q.zyx, 255), 0, px); break;
        case MLRT_PIXEL_BGR8: vstore3(q.xyz, 0, px); break;
        case MLRT_PIXEL_RGB8: vstore3(q.zyx, 0, px); break;
        default: px[0] = channels == 1 ? q.x : convert_uchar_sat(round(MLRT_LUMA(v))); break;
        }
    }
}
