/* reversesequence.h -- parameter block of ReverseSequence (reversesequence.c). */
#ifndef MLRT_KERNELS_REVERSESEQUENCE_H
#define MLRT_KERNELS_REVERSESEQUENCE_H
#include <stdint.h>

/* ReverseSequence: batch and time axes, normalised to {0, 1}. */
typedef struct mlrt_reverse_sequence_params {
    int64_t batch_axis;
    int64_t time_axis;
} mlrt_reverse_sequence_params;

#endif
