/* trilu.h -- parameter block of Trilu (trilu.c). */
#ifndef MLRT_KERNELS_TRILU_H
#define MLRT_KERNELS_TRILU_H
#include <stdint.h>

/* Trilu: keep the upper (1) or lower (0) triangle; k comes from input 1 at run time. */
typedef struct mlrt_trilu_params {
    int64_t upper;
} mlrt_trilu_params;

#endif
