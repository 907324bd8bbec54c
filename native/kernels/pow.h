/* pow.h -- parameter structs of the Pow / Mod kernels (pow.c). */
#ifndef MLRT_KERNELS_POW_H
#define MLRT_KERNELS_POW_H

#include <stdint.h>

/* Mod: fmod = 1 is C fmod (sign of the dividend), 0 is Python's % (sign of the divisor). */
typedef struct mlrt_mod_params {
    int64_t fmod;
} mlrt_mod_params;

#endif
