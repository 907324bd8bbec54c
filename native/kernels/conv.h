/* conv.h -- parameters of the Conv and ConvTranspose kernels (parsed by cffi). */
#ifndef MLRT_CONV_PARAMS_H
#define MLRT_CONV_PARAMS_H
#include <stdint.h>

/* FusedConv's activation is enum mlrt_conv_activation of include/mlrt.h (the core's
 * epilogue reads it too). */

typedef struct mlrt_conv_params {
    int64_t group;
    int64_t n_spatial;        /* spatial dimensions, 1..6 */
    int64_t kernel[6];
    int64_t strides[6];
    int64_t dilations[6];
    int64_t pads_begin[6];
    int64_t pads_end[6];
    int64_t activation;       /* FusedConv: enum mlrt_conv_activation */
    double alpha;             /* activation parameters: LeakyRelu alpha, Clip min / max, HardSigmoid alpha / beta */
    double beta;
    int64_t packed_weights;   /* Conv, float32: the input holding W packed by mlrt_conv_pack_weights (0: none) */
    int64_t winograd;         /* 1: that input holds W as Winograd filters (mlrt_conv_winograd_pack) instead;
                                 2: as filter vectors (mlrt_conv_fvec_pack) */
    int64_t pool;             /* FusedConvMaxPool (1): Y is a MaxPool's output over the conv's (2-D only) */
    int64_t pool_kernel[2];   /* the MaxPool's window, strides and leading pads (unit dilations; Y's */
    int64_t pool_strides[2];  /* shape gives its output, any window clipped to the conv's output) */
    int64_t pool_pads_begin[2];
} mlrt_conv_params;

/* W (M, C/G, k...) of a float32 Conv packed as the micro-kernels read it (per group, rows in
 * panels, k-major), for a plan to make once and pass back as an extra input (named by
 * packed_weights).  *size is set to the floats the packed copy holds, 0 when this CPU has
 * no such kernels (then pass W alone); `packed` is written when capacity >= *size. */
int mlrt_conv_pack_weights(int64_t group, int64_t filters, int64_t kdim, const float *w, int64_t capacity,
                           int64_t *size, float *packed);

/* The Winograd path (kernels/conv_winograd.c): 1 where a float32 Conv with these params
 * over X (N, channels, height, width) and `filters` filters runs faster on it (3 x 3,
 * stride 1, no dilation, enough channels, filters and output), else 0.  Its filters are
 * made once by mlrt_conv_winograd_pack from W (filters, channels_per_group, 3, 3):
 * *size is set to the floats they take (0 without micro-kernels), `packed` written when
 * capacity >= *size; the plan passes them as packed_weights with winograd = 1. */
int mlrt_conv_winograd_fits(const mlrt_conv_params *p, int64_t channels, int64_t filters, int64_t height,
                            int64_t width);
int64_t mlrt_conv_winograd_size(int64_t group, int64_t filters, int64_t channels_per_group); /* 0: bad sizes */
int mlrt_conv_winograd_pack(int64_t group, int64_t filters, int64_t channels_per_group, const float *w,
                            int64_t capacity, int64_t *size, float *packed);

/* The filter-vector path (kernels/conv_fvec.c): 1 where a float32 Conv with these params
 * over X (N, channels, height, width) -- a 1-D conv's (N, channels, length) as height 1,
 * width length -- and `filters` filters runs on it (AVX-512, one group, a kernel of 2 taps
 * or more, strides up to 4 but on one row of outputs), else 0.  Its weights are made once by
 * mlrt_conv_fvec_pack from W (filters, channels, taps) -- *size is set to the floats they
 * take, `packed` written when capacity >= *size -- and the plan passes them as
 * packed_weights with winograd = 2. */
int mlrt_conv_fvec_fits(const mlrt_conv_params *p, int64_t channels, int64_t filters, int64_t height, int64_t width);
int64_t mlrt_conv_fvec_size(int64_t filters, int64_t kdim);
int mlrt_conv_fvec_pack(int64_t filters, int64_t channels, int64_t taps, const float *w, int64_t capacity,
                        int64_t *size, float *packed);

#endif
