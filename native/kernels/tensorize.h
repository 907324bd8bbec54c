/* tensorize.h -- parameter blocks of the image kernels (tensorize.c, and opencl/tensorize.cl,
 * which includes this header), parsed by cffi.
 *
 * Tensorize ("mlrt.media" domain): one frame's pixels -> one image of a tensor batch.
 *   input 0:  uint8 pixels [height, width, bytes per pixel] (any strides), laid out
 *             as `src_format` says.
 *   output 0: float32, float16 or uint8 [N, C, H, W] (nhwc 0) or [N, H, W, C] (nhwc 1);
 *             image `batch_index` is written, C is 1, 3 or 4.
 *   The rectangle crop_* of the source (inside it) is scaled to H x W by bilinear
 *   interpolation with half-pixel centres, clamped at the rectangle's edges (what
 *   cv2.resize(INTER_LINEAR) does to the cropped image).  Channel c of the output is
 *   the interpolated value v (0..255) of: C == 1, Rec.709 luma of R, G, B (gray
 *   sources: the gray value); C >= 3, B, G, R (dst_order 0) or R, G, B (dst_order 1),
 *   gray replicated, and for C == 4 alpha (255 where the source has none).  It is
 *   written as v * alpha[c] + beta[c]; uint8 outputs are rounded (half away from
 *   zero) and clamped to 0..255.
 *
 * Detensorize ("mlrt.media" domain): one image of a tensor batch -> a frame's pixels.
 *   input 0:  float32, float16 or uint8 [N, C, H, W] or [N, H, W, C] (nhwc), C 1 or 3,
 *             channels in dst_order's sense (`src_order` here); image batch_index read.
 *   output 0: uint8 pixels [H, W, bytes per pixel] as `dst_format` says, same H x W.
 *   Pixel channel value = round(v * alpha[c] + beta[c]) clamped to 0..255 (c: the
 *   tensor channel it comes from); gray tensors fill every colour channel, colour
 *   tensors give gray frames their Rec.709 luma; alpha is 255.
 */
#ifndef MLRT_KERNELS_TENSORIZE_H
#define MLRT_KERNELS_TENSORIZE_H
#include <stdint.h>

/* Byte layouts of one pixel (mlrt.media.BitmapPixelFormat maps onto these; NV12 is
 * converted to BGRA8 before it reaches a kernel). */
enum mlrt_pixel_format {
    MLRT_PIXEL_BGRA8 = 0,
    MLRT_PIXEL_RGBA8 = 1,
    MLRT_PIXEL_BGR8 = 2,
    MLRT_PIXEL_RGB8 = 3,
    MLRT_PIXEL_GRAY8 = 4
};

typedef struct mlrt_tensorize_params {
    int64_t src_format;  /* enum mlrt_pixel_format */
    int64_t crop_x, crop_y, crop_width, crop_height;
    int64_t dst_order;   /* 0: B, G, R(, A); 1: R, G, B(, A) */
    int64_t nhwc;
    int64_t batch_index;
    float alpha[4];
    float beta[4];
} mlrt_tensorize_params;

typedef struct mlrt_detensorize_params {
    int64_t dst_format;  /* enum mlrt_pixel_format */
    int64_t src_order;   /* 0: the tensor's channels are B, G, R; 1: R, G, B */
    int64_t nhwc;
    int64_t batch_index;
    float alpha[4];
    float beta[4];
} mlrt_detensorize_params;

#endif
