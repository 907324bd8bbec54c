/* signal.h -- parameters of the window, MelWeightMatrix and CausalConvWithState
 * kernels (parsed by cffi). */
#ifndef MLRT_SIGNAL_H
#define MLRT_SIGNAL_H
#include <stdint.h>

/* HannWindow, HammingWindow, BlackmanWindow: Y[n] for n < size, with period N = size
 * (periodic) or size - 1 (symmetric). */
typedef struct mlrt_window_params {
    int64_t size;
    int64_t periodic;
} mlrt_window_params;

/* Y [dft_length / 2 + 1, num_mel_bins]: triangular filters between lower_edge_hertz
 * and upper_edge_hertz, evenly spaced on the mel scale. */
typedef struct mlrt_mel_params {
    int64_t num_mel_bins;
    int64_t dft_length;
    int64_t sample_rate;
    double lower_edge_hertz;
    double upper_edge_hertz;
} mlrt_mel_params;

/* CausalConvWithState: input [batch, channels, length], weight [channels, 1, k],
 * optional bias [channels] and past_state [batch, channels, k - 1] -> output
 * [batch, channels, length] and present_state [batch, channels, k - 1]. */
typedef struct mlrt_causal_conv_params {
    int64_t batch;
    int64_t channels;
    int64_t length;
    int64_t k;
    int64_t silu;   /* 1: fused SiLU (x * sigmoid(x)) on the output */
} mlrt_causal_conv_params;

#endif
