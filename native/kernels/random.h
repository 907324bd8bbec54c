/* random.h -- parameters of the random generator kernels (parsed by cffi). */
#ifndef MLRT_RANDOM_H
#define MLRT_RANDOM_H
#include <stdint.h>

/* RandomUniform(Like): a = low, b = high; RandomNormal(Like): a = mean, b = scale;
 * Multinomial: sample_size draws per row; Bernoulli uses neither. */
typedef struct mlrt_random_params {
    int64_t has_seed;  /* 0: a fresh stream on every call */
    double seed;
    double a;
    double b;
    int64_t sample_size;
} mlrt_random_params;

#endif
