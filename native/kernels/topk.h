/* topk.h -- parameters of the TopK kernel (parsed by cffi). */
#ifndef MLRT_TOPK_H
#define MLRT_TOPK_H
#include <stdint.h>

/* X is a contiguous [outer, n, inner] block; the outputs (values, int64 indices)
 * are [outer, k, inner], best first; ties go to the lower index. */
typedef struct mlrt_topk_params {
    int64_t outer;
    int64_t n;
    int64_t inner;
    int64_t k;
    int64_t largest;
} mlrt_topk_params;

#endif
