/* loss.h -- parameters of the loss kernels (loss.c; parsed by cffi). */
#ifndef MLRT_LOSS_H
#define MLRT_LOSS_H
#include <stdint.h>

/* reduction */
enum mlrt_loss_reduction {
    MLRT_LOSS_NONE = 0,
    MLRT_LOSS_SUM = 1,
    MLRT_LOSS_MEAN = 2
};

/* NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss: the scores are a contiguous
 * [n, classes, d] block (d: the extra dims multiplied out, 1 without), the target
 * a contiguous [n, d] block of class indices. */
typedef struct mlrt_loss_params {
    int64_t n;
    int64_t classes;
    int64_t d;
    int64_t reduction;     /* enum mlrt_loss_reduction */
    int64_t has_ignore;
    int64_t ignore_index;  /* targets equal to it weigh 0 (when has_ignore) */
} mlrt_loss_params;

#endif
