/* transformer.h -- parameters of RMSNormalization, RotaryEmbedding, Swish and Shrink
 * (transformer.c; parsed by cffi). */
#ifndef MLRT_TRANSFORMER_H
#define MLRT_TRANSFORMER_H
#include <stdint.h>

/* X arrives as a view whose first n_kept dims pick a group and whose other dims
 * (at least one) are normalised together; Scale is a view of the same shape. */
typedef struct mlrt_rmsnorm_params {
    int64_t n_kept;
    double epsilon;
} mlrt_rmsnorm_params;

/* The input arrives as a [batch, seq, heads, head_size] view; cos / sin as
 * [batch, seq, rotary_dim / 2] views, or as [positions, rotary_dim / 2] tables
 * indexed by position_ids (a [batch, seq] view) when has_position_ids. */
typedef struct mlrt_rotary_params {
    int64_t rotary_dim;
    int64_t interleaved;
    int64_t has_position_ids;
} mlrt_rotary_params;

typedef struct mlrt_swish_params {
    double alpha;
} mlrt_swish_params;

typedef struct mlrt_shrink_params {
    double lambd;
    double bias;
} mlrt_shrink_params;

#endif
