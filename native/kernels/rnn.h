/* rnn.h -- parameters of the RNN, GRU and LSTM kernels (parsed by cffi). */
#ifndef MLRT_RNN_PARAMS_H
#define MLRT_RNN_PARAMS_H
#include <stdint.h>

/* Activation functions (native/ops/_rnn.py maps the ONNX names onto these) */
enum mlrt_rnn_activation {
    MLRT_RNN_RELU = 0,
    MLRT_RNN_TANH = 1,
    MLRT_RNN_SIGMOID = 2,
    MLRT_RNN_AFFINE = 3,
    MLRT_RNN_LEAKYRELU = 4,
    MLRT_RNN_THRESHOLDEDRELU = 5,
    MLRT_RNN_SCALEDTANH = 6,
    MLRT_RNN_HARDSIGMOID = 7,
    MLRT_RNN_ELU = 8,
    MLRT_RNN_SOFTSIGN = 9,
    MLRT_RNN_SOFTPLUS = 10
};

/* direction */
enum mlrt_rnn_direction {
    MLRT_RNN_FORWARD = 0,
    MLRT_RNN_REVERSE = 1,
    MLRT_RNN_BIDIRECTIONAL = 2
};

/* activations[3 * d + k] (an enum mlrt_rnn_activation) is function k (f, g, h) of
 * direction d, with its alpha and beta at the same index (defaults already filled in). */
typedef struct mlrt_rnn_params {
    int64_t hidden_size;
    int64_t direction;            /* enum mlrt_rnn_direction */
    int64_t layout;               /* 0: X [seq, batch, input]; 1: X [batch, seq, input] */
    int64_t linear_before_reset;  /* GRU */
    int64_t input_forget;         /* LSTM: couple the input and forget gates */
    int64_t has_clip;
    double clip;                  /* gate inputs are clipped to [-clip, clip] */
    int64_t activations[6];
    double alpha[6];
    double beta[6];
    int64_t w_transposed;         /* > 0: the input holding W^T [input, dirs * G * H], made once from a
                                     constant W and placed after the node's own inputs; 0: none */
    int64_t w_packed;             /* > 0: the input holding a constant float32 W packed once, per direction,
                                     in the GEMM's strips (mlrt_gemm_pack_b of W[d] with trans_b: K = input,
                                     N = G * hidden), read by the input projections in place of W and W^T;
                                     0: none */
    int64_t r_packed;             /* > 0: the input holding a constant float32 R^T made once for the steps of a
                                     batch of several rows (placed after the node's own inputs): per
                                     direction and gate g, its H columns in strips of 32, H rows (k) a
                                     strip: strip[s][k][c] = R[g * H + 32 s + c][k], 0 past H; 0: none
                                     (the kernel packs R per run) */
} mlrt_rnn_params;

#endif
