/* quantize.h -- parameters of the QuantizeLinear / DequantizeLinear kernels (parsed by cffi). */
#ifndef MLRT_QUANTIZE_PARAMS_H
#define MLRT_QUANTIZE_PARAMS_H
#include <stdint.h>

/* x is a contiguous [outer, axis_len, inner] block.  The scale (and zero point, same
 * shape) of element (o, a, i) is at o * s_outer + (a / block_size) * s_block +
 * i * s_inner: all strides 0 per tensor, (0, 1, 0) per axis, a packed
 * [outer, blocks, inner] tensor when blocked. */
typedef struct mlrt_quantize_params {
    int64_t outer;
    int64_t axis_len;
    int64_t inner;
    int64_t block_size;
    int64_t s_outer;
    int64_t s_block;
    int64_t s_inner;
    /* QuantizeLinear: x and the scale are rounded to this ONNX type and divided in it;
     * DequantizeLinear: (x - zero_point) * scale is rounded to it before the output type
     * (FLOAT, or DOUBLE for int32 x) */
    int64_t compute_dtype;
    /* QuantizeLinear to a float8 type: out-of-range values clamp to the largest finite
     * value (1) or become inf / NaN (0) */
    int64_t saturate;
} mlrt_quantize_params;

#endif
