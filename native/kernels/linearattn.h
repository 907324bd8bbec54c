/* linearattn.h -- parameters of the LinearAttention kernel (parsed by cffi). */
#ifndef MLRT_LINEARATTN_H
#define MLRT_LINEARATTN_H
#include <stdint.h>

/* query [B, T, hq * dk], key [B, T, hkv * dk], value [B, T, hkv * dv], states
 * [B, hkv, dk, dv], decay [B, T, hkv * dk] or [B, T, hkv], beta [B, T, hkv] or [B, T, 1],
 * output [B, T, hq * dv]. */
typedef struct mlrt_linear_attention_params {
    int64_t batch;
    int64_t steps;          /* T */
    int64_t q_heads;
    int64_t kv_heads;
    int64_t dk;
    int64_t dv;
    int64_t gated;          /* state decays by exp(decay) before each write */
    int64_t delta;          /* the write is beta * (v - S^T k) */
    int64_t decay_per_key;  /* decay has one value per key dim (else one per head) */
    int64_t beta_per_head;  /* beta has one value per kv head (else one for all) */
    double scale;
} mlrt_linear_attention_params;

#endif
