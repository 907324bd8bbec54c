/* fft.h -- parameters of the DFT and STFT kernels (parsed by cffi). */
#ifndef MLRT_FFT_H
#define MLRT_FFT_H
#include <stdint.h>

/* X is a contiguous [outer, axis_len, inner, in_c] block, Y a contiguous
 * [outer, out_len, inner, out_c] block; each line along the axis is transformed. */
typedef struct mlrt_dft_params {
    int64_t outer;     /* product of the dims before the axis */
    int64_t axis_len;  /* input length along the axis */
    int64_t inner;     /* product of the dims between the axis and the last one */
    int64_t in_c;      /* last input dim: 1 real, 2 complex */
    int64_t length;    /* dft_length: the input line is cut or zero-padded to it */
    int64_t out_len;   /* output length along the axis: length, or length / 2 + 1 (RFFT) */
    int64_t out_c;     /* last output dim: 2, or 1 for the real IRFFT result */
    int64_t inverse;   /* 1: inverse transform, scaled by 1 / length */
    int64_t onesided;  /* forward: keep out_len bins; inverse: input is one-sided (IRFFT) */
} mlrt_dft_params;

/* signal [batch, signal_len, in_c] -> Y [batch, n_frames, bins, 2]; frame f starts at
 * f * frame_step, is multiplied by the window (input 2, if present) and transformed. */
typedef struct mlrt_stft_params {
    int64_t batch;
    int64_t signal_len;
    int64_t in_c;
    int64_t frame_step;
    int64_t frame_length;
    int64_t n_frames;
    int64_t bins;       /* frame_length, or frame_length / 2 + 1 when onesided */
} mlrt_stft_params;

#endif
