/* normalize.h -- parameters of the normalization kernels (parsed by cffi). */
#ifndef MLRT_NORMALIZE_H
#define MLRT_NORMALIZE_H
#include <stdint.h>

/* LayerNormalization, InstanceNormalization, GroupNormalization,
 * MeanVarianceNormalization, LpNormalization: X arrives as a view whose first
 * n_kept dims index the groups and whose other dims (at least one) are the
 * elements normalised together; scale and bias (when present) are views of the
 * same shape; Y is written at X's element offsets. */
typedef struct mlrt_normalize_params {
    int64_t n_kept;
    double epsilon;
    int64_t p;  /* LpNormalization: the norm's order, 1 or 2 (unused by the others) */
} mlrt_normalize_params;

#endif
