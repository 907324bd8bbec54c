/* loss.h -- parameters of the loss kernels (loss.c; parsed by cffi). */
#ifndef MLRT_LOSS_H
#define MLRT_LOSS_H
#include <stdint.h>

/* NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss: the scores are a contiguous
 * [n, classes, d] block (d: the extra dims multiplied out, 1 without), the target
 * a contiguous [n, d] block of class indices. */
typedef struct mlrt_loss_params {
    int64_t n;
    int64_t classes;
    int64_t d;
    int64_t reduction;     /* 0 none, 1 sum, 2 mean */
    int64_t has_ignore;
    int64_t ignore_index;  /* targets equal to it weigh 0 (when has_ignore) */
} mlrt_loss_params;

#endif
