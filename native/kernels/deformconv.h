/* deformconv.h -- parameters of the DeformConv kernel (parsed by cffi). */
#ifndef MLRT_DEFORMCONV_H
#define MLRT_DEFORMCONV_H
#include <stdint.h>

/* 2-D: X [N, C, H, W], W [oC, C / group, kh, kw], offset [N, offset_group * kh * kw * 2,
 * oH, oW], optional B [oC] and mask [N, offset_group * kh * kw, oH, oW]. */
typedef struct mlrt_deform_conv_params {
    int64_t group;
    int64_t offset_group;
    int64_t kernel[2];
    int64_t strides[2];
    int64_t dilations[2];
    int64_t pads_begin[2];
} mlrt_deform_conv_params;

#endif
