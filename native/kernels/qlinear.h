/* qlinear.h -- parameters of MatMulInteger and QLinearMatMul (kernels/qlinear.c) and what
 * the plan calls to pack constant weights once for the integer product (parsed by cffi).
 * ConvInteger and QLinearConv take mlrt_conv_params (conv.h). */
#ifndef MLRT_KERNELS_QLINEAR_H
#define MLRT_KERNELS_QLINEAR_H
#include <stdint.h>

/* W (filters, kdim / ..., kernel...) of a ConvInteger / QLinearConv (w_type MLRT_INT8 or
 * MLRT_UINT8) packed as the integer product reads it, for a plan to make once and pass
 * back as one more uint8 input, named by mlrt_conv_params.packed_weights.  *size is set to
 * the bytes it takes; `packed` is written when capacity >= *size.  Not for one input
 * channel per group (the depthwise path reads W as it is). */
int mlrt_qconv_pack_weights(int64_t group, int64_t filters, int64_t kdim, int32_t w_type, const void *w,
                            int64_t capacity, int64_t *size, void *packed);
/* The same for W's window of `taps` elements (kdim a multiple; 1 for windows of more than
 * two dimensions): in the order of the kernel's channel-quad path where it takes one
 * (1-D and 2-D windows of several taps, channels per group a multiple of 4; 64 bytes more,
 * marking the order), else as above. */
int mlrt_qconv_pack_weights_quads(int64_t group, int64_t filters, int64_t kdim, int64_t taps, int32_t w_type,
                                  const void *w, int64_t capacity, int64_t *size, void *packed);

/* MatMulInteger, QLinearMatMul */
typedef struct mlrt_qmatmul_params {
    int64_t packed_b; /* the input holding B packed by mlrt_qmatmul_pack_b (0: none) */
} mlrt_qmatmul_params;

/* B (K x N, element (k, n) at b + k * stride_k + n * stride_n, b_type MLRT_INT8 or
 * MLRT_UINT8) packed as the integer product reads it, for a plan to make once from a
 * constant B shared by every batch and pass back as one more uint8 input (named by
 * mlrt_qmatmul_params.packed_b, or com.microsoft QGemm's mlrt_qgemm_params.packed_b).
 * *size is set to the bytes it takes; `packed` is written when capacity >= *size. */
int mlrt_qmatmul_pack_b(int64_t K, int64_t N, int32_t b_type, const void *b, int64_t stride_k, int64_t stride_n,
                        int64_t capacity, int64_t *size, void *packed);

#endif
