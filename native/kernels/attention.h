/* attention.h -- parameters of the Attention kernel (attention.c; parsed by cffi). */
#ifndef MLRT_ATTENTION_H
#define MLRT_ATTENTION_H
#include <stdint.h>

/* Q, K and V arrive as [batch, heads, sequence, head size] views (3-D inputs are
 * re-viewed per head by the Python semantics), the mask as a
 * [batch, q_heads, q_len, mask_len] view with stride 0 where it broadcasts.
 * Keys are past_len cached ones followed by kv_len new ones; query head h reads
 * key/value head h / (q_heads / kv_heads). */
typedef struct mlrt_attention_params {
    int64_t batch;
    int64_t q_heads;
    int64_t kv_heads;
    int64_t q_len;
    int64_t kv_len;        /* new keys and values (K and V) */
    int64_t past_len;      /* cached keys and values (past_key, past_value), 0 without */
    int64_t head_size;     /* of Q and K */
    int64_t v_head_size;
    int64_t is_causal;
    int64_t left_window;   /* keys visible left of the query's absolute position; -1 unbounded */
    int64_t right_window;  /* ... and right of it */
    int64_t qk_mode;       /* qk_matmul_output: 0 raw, 1 after softcap, 2 with bias, 3 softmax */
    int64_t softmax_type;  /* ONNX element type the softmax is computed in */
    double scale_sqrt;     /* sqrt(scale) rounded to the inputs' type; Q and K are each scaled by it */
    double softcap;        /* 0: none */
} mlrt_attention_params;

#endif
