/* cast.h -- parameters of the Cast / CastLike kernel (parsed by cffi). */
#ifndef MLRT_CAST_PARAMS_H
#define MLRT_CAST_PARAMS_H
#include <stdint.h>

/* round_mode of conversions to float8e8m0 (the ONNX names map onto these in
 * native/ops/_elementwise.py) */
enum mlrt_round_mode {
    MLRT_ROUND_UP = 0,
    MLRT_ROUND_DOWN = 1,
    MLRT_ROUND_NEAREST = 2
};

/* Only conversions to the low-precision types read these: saturate (float8 types and
 * float8e8m0) and round_mode (float8e8m0: enum mlrt_round_mode). */
typedef struct mlrt_cast_params {
    int64_t saturate;
    int64_t round_mode;
} mlrt_cast_params;

#endif
