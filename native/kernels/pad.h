/* pad.h -- parameter block of Pad (pad.c). */
#ifndef MLRT_KERNELS_PAD_H
#define MLRT_KERNELS_PAD_H
#include <stdint.h>

/* mode (wrap and the others read the kept elements) */
enum mlrt_pad_mode {
    MLRT_PAD_CONSTANT = 0,
    MLRT_PAD_REFLECT = 1,
    MLRT_PAD_EDGE = 2,
    MLRT_PAD_WRAP = 3
};

/* Per axis d the output is pad_begin[d] padding positions, then input elements
 * [src_start[d], src_start[d] + src_len[d]) (negative pads crop), then padding.
 * mode: enum mlrt_pad_mode.
 * The constant is input 2 when present, else value_bits (the output type's bits). */
typedef struct mlrt_pad_params {
    int64_t mode;
    int64_t src_start[8];
    int64_t src_len[8];
    int64_t pad_begin[8];
    int64_t value_bits;
} mlrt_pad_params;

#endif
