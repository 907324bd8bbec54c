/* rnn.h -- parameters of the RNN, GRU and LSTM kernels (parsed by cffi). */
#ifndef MLRT_RNN_PARAMS_H
#define MLRT_RNN_PARAMS_H
#include <stdint.h>

/* Activation codes: 0 Relu, 1 Tanh, 2 Sigmoid, 3 Affine, 4 LeakyRelu,
 * 5 ThresholdedRelu, 6 ScaledTanh, 7 HardSigmoid, 8 Elu, 9 Softsign, 10 Softplus.
 * activations[3 * d + k] is function k (f, g, h) of direction d, with its alpha and
 * beta at the same index (defaults already filled in). */
typedef struct mlrt_rnn_params {
    int64_t hidden_size;
    int64_t direction;            /* 0 forward, 1 reverse, 2 bidirectional */
    int64_t layout;               /* 0: X [seq, batch, input]; 1: X [batch, seq, input] */
    int64_t linear_before_reset;  /* GRU */
    int64_t input_forget;         /* LSTM: couple the input and forget gates */
    int64_t has_clip;
    double clip;                  /* gate inputs are clipped to [-clip, clip] */
    int64_t activations[6];
    double alpha[6];
    double beta[6];
} mlrt_rnn_params;

#endif
