/* pad.h -- parameter block of Pad (pad.c). */
#ifndef MLRT_KERNELS_PAD_H
#define MLRT_KERNELS_PAD_H
#include <stdint.h>

/* Per axis d the output is pad_begin[d] padding positions, then input elements
 * [src_start[d], src_start[d] + src_len[d]) (negative pads crop), then padding.
 * mode: 0 constant, 1 reflect, 2 edge, 3 wrap (padding reads the kept elements).
 * The constant is input 2 when present, else value_bits (the output type's bits). */
typedef struct mlrt_pad_params {
    int64_t mode;
    int64_t src_start[8];
    int64_t src_len[8];
    int64_t pad_begin[8];
    int64_t value_bits;
} mlrt_pad_params;

#endif
